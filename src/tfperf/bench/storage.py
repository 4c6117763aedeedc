"""Saved runs in a folder, one JSON per run, keyed by machine (in the manner of
pytest-benchmark's ``.benchmarks/``)::

    .tfperf-benchmarks/
      Linux-x86_64-Intel-R--Xeon-R--Pl-3f9c0a12de/
        0001_20261204T040312Z.json
        0002_20261204T051745Z_pr-123.json

``tfperf bench FILE.py --store DIR`` adds one; ``tfperf bench --history DIR --variant NAME``
reads them all back (every machine's, each row saying which) as the trend of one variant.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tfperf.bench.record import RecordError, load_record, save_record

DEFAULT_DIR = ".tfperf-benchmarks"
_NUMBERED = re.compile(r"^(\d{4,})_")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")[:40]


def store_run(record: dict[str, Any], root: str | Path) -> Path:
    """Write ``record`` as the next numbered run of its machine's folder under ``root``."""
    folder = Path(root) / _slug(str(record["machine_key"]))
    folder.mkdir(parents=True, exist_ok=True)
    numbers = [int(m.group(1)) for p in folder.glob("*.json") if (m := _NUMBERED.match(p.name))]
    stamp = str(record.get("created", "")).replace("-", "").replace(":", "")
    label = f"_{_slug(record['label'])}" if record.get("label") else ""
    return save_record(record, folder / f"{max(numbers, default=0) + 1:04d}_{stamp}{label}.json")


@dataclass
class HistoryPoint:
    path: Path
    created: str
    label: str | None
    machine_key: str
    variant: dict[str, Any]

    @property
    def median_s(self) -> float | None:
        return (self.variant.get("stats") or {}).get("median_s")

    @property
    def iqr_s(self) -> float | None:
        return (self.variant.get("stats") or {}).get("iqr_s")

    def counter(self, name: str) -> int | None:
        return (self.variant.get("counters") or {}).get(name)


def load_runs(root: str | Path) -> tuple[list[tuple[Path, dict[str, Any]]], list[str]]:
    """Every saved run under ``root`` (oldest first) and a note per file that is not one."""
    root = Path(root)
    if not root.is_dir():
        raise RecordError(f"{root}: no such folder of saved runs")
    runs, skipped = [], []
    for path in sorted(root.rglob("*.json")):
        try:
            runs.append((path, load_record(path)))
        except RecordError as exc:
            skipped.append(f"skipped {exc}")
    runs.sort(key=lambda r: (str(r[1].get("created", "")), str(r[0])))
    return runs, skipped


def variant_names(runs: list[tuple[Path, dict[str, Any]]]) -> list[str]:
    names: list[str] = []
    for _, rec in runs:
        for v in rec["variants"]:
            if v["name"] not in names:
                names.append(v["name"])
    return names


def history(runs: list[tuple[Path, dict[str, Any]]], variant: str) -> list[HistoryPoint]:
    points = []
    for path, rec in runs:
        for v in rec["variants"]:
            if v["name"] == variant:
                points.append(HistoryPoint(path, str(rec.get("created", "")), rec.get("label"),
                                           str(rec.get("machine_key", "")), v))
    return points


__all__ = ["DEFAULT_DIR", "HistoryPoint", "history", "load_runs", "store_run", "variant_names"]
