"""A saved bench run (``tfperf bench --save``): what a later run is compared with.

One JSON document per run, its layout in :data:`tfperf.bench.schema.RUN_SCHEMA` (shown in
docs/regression-gate.md): per variant the raw per-round times (seconds per call), their
statistics, the first-call time and the counters; the machine's fingerprint and its key.
Loading checks the parts a comparison reads and says what is wrong in words.
"""

from __future__ import annotations

import json
import math
import os
import stat
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tfperf.bench.machine import fingerprint, machine_info, machine_key
from tfperf.core import render
from tfperf.core.files import write_text_atomically

if TYPE_CHECKING:  # a saved run is read without NumPy (bench --history on the base install)
    from tfperf.bench.result import CompareResult, VariantResult

FORMAT = "tfperf-bench-run"
VERSION = 1


class RecordError(Exception):
    """A saved run that cannot be read or is not a tfperf bench run."""


def _variant(v: VariantResult) -> dict[str, Any]:
    m = v.measurement
    times = [t * v.scale for t in m.times] if m and v.status == "ok" else []
    stats = m.to_dict() if m and times else None
    if stats is not None:
        for key in ("median_s", "iqr_s", "min_s", "mean_s"):
            if stats.get(key) is not None:
                stats[key] *= v.scale
    return {
        "name": v.name,
        "status": v.status,
        "times_s": times,
        "number": m.number if m else 0,
        "stats": stats,
        "first_call_s": v.first_call_s,
        "counters": v.counters.to_dict() if v.counters else None,
        "error": v.error,
        "notes": list(v.notes),
    }


def run_record(result: CompareResult, *, file: str | None = None, counters_only: bool = False,
               label: str | None = None) -> dict[str, Any]:
    """The saved form of a comparison made with ``counters=True``."""
    fp = fingerprint()
    return {
        "format": FORMAT,
        "version": VERSION,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "label": label,
        "file": file,
        "counters_only": counters_only,
        "fingerprint": fp,
        "machine_key": machine_key(fp),
        "machine": result.machine or machine_info(),
        "settings": dict(result.settings),
        "yardstick_s": list(result.yardstick_s) if result.yardstick_s else None,
        "variants": [_variant(v) for v in result.variants],
    }


def save_record(record: dict[str, Any], path: str | Path) -> Path:
    path = Path(path)
    if path.is_dir():
        raise RecordError(f"{path} is a folder: give a file name (or --store {path})")
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        path.touch()  # the atomic writer replaces an existing file, keeping its mode
    write_text_atomically(path, render.to_json(record) + "\n")
    return path


def _check_number_list(values: Any, where: str) -> None:
    if not isinstance(values, list) or not all(
            isinstance(t, (int, float)) and not isinstance(t, bool) and math.isfinite(t)
            and t >= 0 for t in values):
        raise RecordError(f"{where}: times_s must be a list of non-negative numbers")


def check_record(doc: Any, source: str = "the saved run") -> dict[str, Any]:
    """``doc`` if it is a readable saved run, else :class:`RecordError` saying why."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise RecordError(f"{source} is not a tfperf bench run (no \"format\": \"{FORMAT}\"; "
                          "write one with `tfperf bench FILE.py --save PATH`)")
    if doc.get("version") != VERSION:
        raise RecordError(f"{source} has version {doc.get('version')!r}; this tfperf reads "
                          f"version {VERSION}")
    if not isinstance(doc.get("fingerprint"), dict):
        raise RecordError(f"{source} has no machine fingerprint")
    if doc.get("yardstick_s") is not None:
        _check_number_list(doc["yardstick_s"], f"{source}: yardstick_s")
    variants = doc.get("variants")
    if not isinstance(variants, list) or not variants:
        raise RecordError(f"{source} holds no variants")
    for i, v in enumerate(variants):
        if not isinstance(v, dict) or not isinstance(v.get("name"), str):
            raise RecordError(f"{source}: variant #{i + 1} has no name")
        _check_number_list(v.get("times_s", []), f"{source}: variant {v['name']!r}")
        if v.get("yardstick_s") is not None:
            _check_number_list(v["yardstick_s"], f"{source}: variant {v['name']!r} yardstick")
        counters = v.get("counters")
        if counters is not None and not isinstance(counters, dict):
            raise RecordError(f"{source}: variant {v['name']!r}: counters must be an object")
    return doc


def load_record(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    try:
        if not stat.S_ISREG(os.stat(path).st_mode) and not path.is_dir():
            # a named pipe: reading it waited for a writer forever (stop 45)
            raise RecordError(f"{path}: not a regular file (a named pipe, socket or device)")
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RecordError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RecordError(f"{path}: cannot read it ({exc})") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordError(f"{path}: not JSON ({exc.msg}, line {exc.lineno})") from None
    return check_record(doc, str(path))


__all__ = ["FORMAT", "VERSION", "RecordError", "check_record", "load_record", "run_record",
           "save_record"]
