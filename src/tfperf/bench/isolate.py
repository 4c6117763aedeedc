"""Peak memory of one variant in a process of its own (``--isolate``), on the CPU.

The parent cannot measure a variant's memory in-process: its RSS holds every other
variant's leftovers. So each variant is called once more in a fresh ``python -m
tfperf.bench.isolate`` child, which builds the inputs, resets the kernel's peak-RSS mark
(Linux ``/proc/self/clear_refs``), calls the variant, and reports the peak. The child is
killed if it outlives the time limit.

A child finds the variant either in a bench file (path + variant name, inputs rebuilt by its
``@inputs`` function) or, for the Python API, by the function's source file and qualified
name, with the arguments passed as NumPy arrays in a pickle.
"""

from __future__ import annotations

import inspect
import json
import os
import pickle
import resource
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

_MARK = "TFPERF_ISOLATE_RESULT "


def _rss_hwm_bytes() -> int | None:
    """Peak RSS since the last reset (VmHWM), or None off Linux."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _rss_now_bytes() -> int | None:
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")  # "5": reset the peak RSS mark (Linux ≥ 4.0)
        return True
    except OSError:
        return False


class _TensorArg:
    """A TF tensor shipped to the child as NumPy, rebuilt there as a tensor."""

    def __init__(self, array: Any) -> None:
        self.array = array


def _pack(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _pack(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_pack(v) for v in value)
    tf = sys.modules.get("tensorflow")
    if tf is not None and isinstance(value, tf.Tensor):
        return _TensorArg(value.numpy())
    return value


def _unpack(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _unpack(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_unpack(v) for v in value)
    if isinstance(value, _TensorArg):
        import tensorflow as tf

        return tf.constant(value.array)
    return value


def _function_source(fn: Any) -> dict[str, str] | None:
    target = getattr(fn, "python_function", fn)  # tf.function keeps the original here
    qualname = getattr(target, "__qualname__", "")
    try:
        path = inspect.getsourcefile(target)
    except TypeError:
        return None
    if not path or "<locals>" in qualname or "<lambda>" in qualname:
        return None
    return {"file": path, "qualname": getattr(fn, "__qualname__", qualname)}


def measure_isolated(variant: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
                     timeout: float = 600.0) -> dict[str, Any]:
    """Run ``variant`` once in a child process; its peak RSS as a ``memory`` dict."""
    source = variant.source or _function_source(variant.fn)
    if source is None:
        return {"peak_bytes": None, "source": "not measured: --isolate needs a function "
                "defined at module level in a file (no lambda or closure)"}
    with tempfile.TemporaryDirectory(prefix="tfperf-isolate-") as tmp:
        spec = dict(source)
        if "variant" not in spec:  # Python API: ship the arguments
            args_path = Path(tmp) / "args.pkl"
            with open(args_path, "wb") as fh:
                pickle.dump((_pack(args), _pack(kwargs)), fh)
            spec["args_pickle"] = str(args_path)
        try:
            proc = subprocess.run([sys.executable, "-m", "tfperf.bench.isolate",
                                   json.dumps(spec)], capture_output=True, text=True,
                                  timeout=timeout, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"})
        except subprocess.TimeoutExpired:
            return {"peak_bytes": None, "source": f"isolated run killed after {timeout:g} s"}
    for line in proc.stdout.splitlines():
        if line.startswith(_MARK):
            return json.loads(line[len(_MARK):])
    tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
    return {"peak_bytes": None, "source": f"isolated run failed: {tail[:200]}"}


def _load_target(spec: dict[str, Any]) -> tuple[Any, tuple[Any, ...], dict[str, Any]]:
    if "variant" in spec:
        from tfperf.bench.comparison import _leading
        from tfperf.bench.loader import load_bench_file

        bench = load_bench_file(spec["file"])
        chosen = next(v for v in bench.variants if v.name == spec["variant"])
        args, kwargs = bench.make_inputs(quick=bool(spec.get("quick")))
        k = chosen.quick_batch if spec.get("quick") else None
        if k and args and (_leading(args[0]) or 0) > k:
            args = (args[0][:k], *args[1:])
        return chosen.fn, args, kwargs
    import importlib.util

    mod_spec = importlib.util.spec_from_file_location("_tfperf_isolated", spec["file"])
    assert mod_spec is not None and mod_spec.loader is not None
    module = importlib.util.module_from_spec(mod_spec)
    sys.modules["_tfperf_isolated"] = module
    mod_spec.loader.exec_module(module)
    fn: Any = module
    for part in spec["qualname"].split("."):
        fn = getattr(fn, part)
    with open(spec["args_pickle"], "rb") as fh:
        args, kwargs = pickle.load(fh)
    return fn, _unpack(args), _unpack(kwargs)


def _child(spec: dict[str, Any]) -> None:
    from tfperf.core.measure import sync

    fn, args, kwargs = _load_target(spec)
    start = _rss_now_bytes()
    reset = _reset_peak()
    sync(fn(*args, **kwargs))
    peak = _rss_hwm_bytes() if reset else None
    if peak is None:  # no resettable mark: the process's lifetime peak
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    result = {"peak_bytes": peak,
              "above_start_bytes": peak - start if start is not None else None,
              "source": "peak RSS of an isolated process, one call"
                        + ("" if reset else " (lifetime peak: includes start-up)")}
    print(_MARK + json.dumps(result), flush=True)


if __name__ == "__main__":
    _child(json.loads(sys.argv[1]))
