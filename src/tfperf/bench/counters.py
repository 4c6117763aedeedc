"""Counters that do not depend on noise: traces, host syncs, eager ops, graph ops, XLA compiles.

A variant's counters come from two watched stretches (:mod:`tfperf.profile.watcher`):

1. its **first call**, watched for ``tf.function`` calls and host syncs only (those hooks cost
   a few microseconds per event, so the first-call time stays honest);
2. ``steady_calls`` more calls (2 by default) right after, watched with every hook, the eager
   op callback included.

What each counter counts (exact integers, equal from run to run for the same code):

``traces``            traces of every ``tf.function`` over both stretches (1 for a step that
                      traces once; a Python scalar that changes per call adds one per value)
``host_syncs``        tensor → host conversions (``.numpy()``, ``float(t)``, ``np.asarray``…)
                      over both stretches
``eager_ops``         ops run eagerly during the steady calls
``graph_ops``         ops in the latest traced graph of each ``tf.function`` called, summed
``xla_compilations``  traces of ``jit_compile=True`` functions (each is compiled by XLA on its
                      first run); auto-clustering (``TF_XLA_FLAGS``) is not visible, and a
                      counter TensorFlow does not let us see is ``None`` with the reason.

Each counter keeps the user source lines that produced it (``sites``), so a comparison can
name the line behind a change.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

COUNTERS = ("traces", "host_syncs", "eager_ops", "graph_ops", "xla_compilations")
STEADY_CALLS = 2


@dataclass
class Counters:
    """A variant's counters, the lines behind them, and what could not be seen."""

    values: dict[str, int | None] = field(default_factory=dict)
    sites: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)
    steady_calls: int = STEADY_CALLS

    def __getitem__(self, name: str) -> int | None:
        return self.values.get(name)

    def to_dict(self) -> dict[str, Any]:
        return {**{k: self.values.get(k) for k in COUNTERS}, "steady_calls": self.steady_calls,
                "sites": self.sites, "unavailable": dict(self.unavailable)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Counters:
        return cls(values={k: data.get(k) for k in COUNTERS},
                   sites={k: list(v) for k, v in (data.get("sites") or {}).items()},
                   unavailable=dict(data.get("unavailable") or {}),
                   steady_calls=int(data.get("steady_calls", STEADY_CALLS)))


def first_call_watch() -> Any:
    """The watcher around a variant's first call: function calls and host syncs only."""
    from tfperf.profile.watcher import watch

    return watch(eager_ops=False)


def steady_watch() -> Any:
    from tfperf.profile.watcher import watch

    return watch()


def short_path(path: str) -> str:
    """A path relative to the working directory when it lies below it (stable across
    checkouts of one repository), else as given."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def _line_rows(table: dict[Any, Any]) -> list[dict[str, Any]]:
    rows = [{"path": short_path(s.path), "line": s.line, "count": s.count,
             "kinds": dict(s.kinds.most_common(5))} for s in table.values()]
    return sorted(rows, key=lambda r: (-r["count"], r["path"], r["line"]))


def _merge_lines(*tables: dict[Any, Any]) -> list[dict[str, Any]]:
    merged: dict[tuple[str, int], dict[str, Any]] = {}
    for table in tables:
        for row in _line_rows(table):
            key = (row["path"], row["line"])
            if key in merged:
                merged[key]["count"] += row["count"]
                for k, n in row["kinds"].items():
                    merged[key]["kinds"][k] = merged[key]["kinds"].get(k, 0) + n
            else:
                merged[key] = row
    return sorted(merged.values(), key=lambda r: (-r["count"], r["path"], r["line"]))


def from_observations(first: Any, steady: Any | None, steady_calls: int,
                      why_no_steady: str = "") -> Counters:
    """Counters from the first call's observation and the steady calls' (None when they were
    not made: ``why_no_steady`` says why)."""
    observations = [o for o in (first, steady) if o is not None]
    c = Counters(steady_calls=steady_calls if steady is not None else 0)
    for obs in observations:
        for hook, why in obs.unavailable.items():
            c.unavailable.setdefault(hook, why)
    functions: dict[tuple[Any, str], dict[str, Any]] = {}
    for obs in observations:
        for fs in obs.functions:
            key = (fs.code_key, fs.name)
            row = functions.get(key)
            if row is None:
                path, line = fs.first_site if fs.first_site else (None, None)
                row = functions[key] = {"function": fs.name,
                                        "path": short_path(path) if path else None,
                                        "line": line, "count": 0, "graph_ops": None,
                                        "xla_compilations": 0, "causes": []}
            row["count"] += fs.traces
            row["xla_compilations"] += fs.xla_compilations
            if fs.graph_ops is not None:
                row["graph_ops"] = fs.graph_ops
            row["causes"].extend(fs.to_dict()["retrace_causes"])
    trace_rows = [r for r in functions.values() if r["count"] or r["graph_ops"] is not None]
    c.sites["traces"] = sorted(trace_rows, key=lambda r: (-r["count"], r["function"]))
    v = c.values
    if "functions" in c.unavailable:
        v["traces"] = v["graph_ops"] = v["xla_compilations"] = None
    else:
        v["traces"] = sum(r["count"] for r in functions.values())
        known = [r["graph_ops"] for r in functions.values() if r["graph_ops"] is not None]
        v["graph_ops"] = sum(known)
        v["xla_compilations"] = sum(r["xla_compilations"] for r in functions.values())
    if "host_syncs" in c.unavailable:
        v["host_syncs"] = None
    else:
        v["host_syncs"] = sum(s.count for o in observations for s in o.host_syncs.values())
        c.sites["host_syncs"] = _merge_lines(*(o.host_syncs for o in observations))
    if steady is None:
        v["eager_ops"] = None
        c.unavailable["eager_ops"] = why_no_steady or "the steady calls were not made"
    elif "eager_ops" in c.unavailable:
        v["eager_ops"] = None
    else:
        v["eager_ops"] = steady.eager_op_count
        c.sites["eager_ops"] = _line_rows(steady.eager_ops)
    return c


def from_watch(obs: Any) -> Counters:
    """Counters of one watched region with every hook on (the pytest marker's): traces, host
    syncs and eager ops of everything that ran inside it."""
    c = from_observations(obs, None, 0)
    c.unavailable.pop("eager_ops", None)
    if "eager_ops" in obs.unavailable:
        c.unavailable["eager_ops"] = obs.unavailable["eager_ops"]
    else:
        c.values["eager_ops"] = obs.eager_op_count
        c.sites["eager_ops"] = _line_rows(obs.eager_ops)
    return c


__all__ = ["COUNTERS", "STEADY_CALLS", "Counters", "first_call_watch", "from_observations",
           "from_watch", "short_path", "steady_watch"]
