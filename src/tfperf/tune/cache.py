"""tune's cache: a result stored under a key of the function's module source, its name, the
inputs' shapes and dtypes, the device, TensorFlow's version and the search settings, in
``core.files.user_cache_dir("tune")``. A second run on the same things is instant;
``--no-cache`` measures again."""

from __future__ import annotations

import contextlib
import hashlib
import json
import sys
from pathlib import Path

from tfperf import __version__
from tfperf.bench.machine import machine_info
from tfperf.core.files import prepare_cache_dir, user_cache_dir
from tfperf.tune.result import TuneResult
from tfperf.tune.target import Target


def key(target: Target, budget: float, calls: int | None) -> str:
    tf = sys.modules.get("tensorflow")
    m = machine_info()
    parts = [target.source_hash(), target.name, *target.input_signature(), m["cpu"],
             str(m["cpu_count"]), ",".join(m["gpus"]), getattr(tf, "__version__", "-"),
             __version__, f"{budget:g}", str(calls)]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32]


def _path(k: str) -> Path:
    return user_cache_dir("tune") / f"{k}.json"


def load(k: str, target: Target) -> TuneResult | None:
    try:
        data = json.loads(_path(k).read_text(encoding="utf-8"))
        result = TuneResult.from_dict(data["result"], patched_source=data["patched_source"],
                                      original_source=target.source)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    result.cache = "hit"
    return result


def save(k: str, result: TuneResult) -> None:
    with contextlib.suppress(OSError):  # a cache that cannot be written is only slower
        directory = prepare_cache_dir(user_cache_dir("tune"))
        doc = {"result": result.to_dict(), "patched_source": result.patched_source}
        (directory / f"{k}.json").write_text(json.dumps(doc), encoding="utf-8")
