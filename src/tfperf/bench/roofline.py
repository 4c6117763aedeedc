"""The machine's peaks (memory bandwidth, matmul FLOP/s), measured once and cached, and how
close a variant comes to them.

Peaks are measured with TensorFlow on the device the variants run on (the first GPU if any,
else the CPU): bandwidth from an element-wise scale of a large float32 tensor (one read, one
write per element), compute from a large float32 matmul (2·n³ FLOPs). The best (minimum)
time is used, as peaks are what the machine *can* do. The result is cached per machine and
TF version in ``$XDG_CACHE_HOME/tfperf/roofline/peaks.json`` (``~/.cache`` when unset).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tfperf.bench.machine import cpu_model, gpu_names
from tfperf.core.files import user_cache_dir, write_cache_file
from tfperf.core.measure import measure


@dataclass
class Peaks:
    device: str
    bandwidth_gbs: float
    matmul_gflops: float
    measured_at: float
    cached: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def cache_file() -> Path:
    """Peaks belong to the machine, not to a project: the user's cache directory."""
    return user_cache_dir("roofline") / "peaks.json"


def _machine_key(tf: Any) -> str:
    gpus = gpu_names()
    device = gpus[0] if gpus else cpu_model()
    return f"{device}|cpus={os.cpu_count()}|tf={tf.__version__}"


def _measure_peaks(tf: Any) -> Peaks:
    on_gpu = bool(tf.config.list_logical_devices("GPU"))
    device = "/GPU:0" if on_gpu else "/CPU:0"
    n_elems = (1 << 28) if on_gpu else (1 << 25)  # 1 GiB on GPU, 128 MiB on CPU
    n_mat = 8192 if on_gpu else 1536
    with tf.device(device):
        x = tf.ones([n_elems], tf.float32)
        a = tf.random.normal([n_mat, n_mat])
        bw = measure(lambda: x * 2.0, warmup=0.05, min_runs=5, max_time=1.5)
        mm = measure(lambda: tf.matmul(a, a), warmup=0.05, min_runs=5, max_time=1.5)
    return Peaks(device=device,
                 bandwidth_gbs=2 * 4 * n_elems / bw.min / 1e9,
                 matmul_gflops=2 * n_mat**3 / mm.min / 1e9,
                 measured_at=time.time())


def machine_peaks(refresh: bool = False) -> Peaks:
    """Peaks of this machine, from the cache when it has them (imports TensorFlow)."""
    import tensorflow as tf

    path = cache_file()
    key = _machine_key(tf)
    cache: dict[str, Any] = {}
    try:
        cache = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(cache, dict):
            cache = {}
    except (OSError, ValueError):
        cache = {}
    if not refresh and isinstance(cache.get(key), dict):
        try:
            return Peaks(**{**cache[key], "cached": True})
        except TypeError:
            pass  # an old or damaged entry: measure again
    peaks = _measure_peaks(tf)
    cache[key] = {k: v for k, v in peaks.to_dict().items() if k != "cached"}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # a temporary name of its own: with one "peaks.tmp" for all, a second process
        # measuring at once wrote into the file the first had just renamed into place
        write_cache_file(path, json.dumps(cache, indent=2))
    except OSError:
        pass  # a read-only home only costs a re-measure next time
    return peaks


def cached_peaks() -> Peaks | None:
    """This machine's peaks if they were measured before (never measures; TF must be imported
    already, as its version is part of the key)."""
    import sys

    tf = sys.modules.get("tensorflow")
    if tf is None:
        return None
    try:
        entry = json.loads(cache_file().read_text(encoding="utf-8")).get(_machine_key(tf))
        return Peaks(**{**entry, "cached": True}) if isinstance(entry, dict) else None
    except (OSError, ValueError, TypeError, AttributeError):
        return None


def nbytes_tree(value: Any) -> int:
    """Bytes of every tensor/array leaf in a nested value (what a call must at least move)."""
    if isinstance(value, dict):
        return sum(nbytes_tree(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(nbytes_tree(v) for v in value)
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    if shape is None or dtype is None:
        return 0
    size = getattr(dtype, "size", None)  # tf.DType.size
    if size is None:
        size = getattr(dtype, "itemsize", 0)  # numpy dtype
    try:
        count = 1
        for d in shape:
            count *= int(d)
    except TypeError:
        return 0
    return count * int(size or 0)


def achieved(seconds: float, bytes_per_call: float | None, flops_per_call: float | None,
             peaks: Peaks | None) -> dict[str, Any]:
    """GB/s, GFLOP/s and their percentage of the machine's peaks."""
    gbs = bytes_per_call / seconds / 1e9 if bytes_per_call and seconds > 0 else None
    gflops = flops_per_call / seconds / 1e9 if flops_per_call and seconds > 0 else None
    return {
        "bytes_per_call": bytes_per_call,
        "flops_per_call": flops_per_call,
        "gb_per_s": gbs,
        "gflop_per_s": gflops,
        "pct_peak_bandwidth": 100 * gbs / peaks.bandwidth_gbs if gbs and peaks else None,
        "pct_peak_flops": 100 * gflops / peaks.matmul_gflops if gflops and peaks else None,
    }
