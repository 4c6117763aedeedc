"""tune's cache: a result stored under a key of the function's file (its resolved path), its
qualified name, the module's source, the inputs' shapes and dtypes, the device, TensorFlow's
version and the search settings, in ``core.files.user_cache_dir("tune")``. A second run on
the same things is instant; ``--no-cache`` measures again.

The path is part of the key: two files with the same text are two functions, and a result
measured on one must never send a patch to the other. A result read back is re-targeted to
the function it was asked for (its path, name, source and patch), never the stored ones.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sys
from pathlib import Path

from tfperf import __version__
from tfperf.bench.machine import machine_info
from tfperf.core.files import prepare_cache_dir, user_cache_dir, write_cache_file
from tfperf.tune.result import TuneResult
from tfperf.tune.target import Target


def key(target: Target, budget: float, calls: int | None) -> str:
    tf = sys.modules.get("tensorflow")
    m = machine_info()
    parts = [str(target.path.resolve()), target.qualname, target.source_hash(),
             *target.input_signature(), m["cpu"], str(m["cpu_count"]), ",".join(m["gpus"]),
             getattr(tf, "__version__", "-"), __version__, f"{budget:g}", str(calls)]
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
    retarget(result, target)
    result.cache = "hit"
    return result


def retarget(result: TuneResult, target: Target) -> None:
    """``result`` as a result of ``target``: its file, name and source, and the patch diffed
    against that file (a stored result carries the path it was measured on)."""
    result.function, result.path = target.name, str(target.path)
    result.in_file, result.cell = target.in_file, target.cell
    result.original_source = target.source
    result.patch = target.diff(result.patched_source) if result.patched_source else ""
    best = result.best
    if best is not None:
        best.patch = result.patch


def save(k: str, result: TuneResult) -> None:
    with contextlib.suppress(OSError):  # a cache that cannot be written is only slower
        directory = prepare_cache_dir(user_cache_dir("tune"))
        doc = {"result": result.to_dict(), "patched_source": result.patched_source}
        write_cache_file(directory / f"{k}.json", json.dumps(doc))  # whole: runs share it
