"""JSON Schema of ``tfperf tune --json`` and ``TuneResult.to_json()``; docs/tune.md shows the
same schema. Extra keys are allowed so that the output can grow."""

from __future__ import annotations

from typing import Any

from tfperf.bench.schema import MACHINE_SCHEMA

_NUM_OR_NULL = {"type": ["number", "null"]}
_QUARTILES = {"type": ["array", "null"], "items": {"type": "number"}, "minItems": 2,
              "maxItems": 2}  # [low, high]: quartiles of a call's time, or a ratio's interval

CANDIDATE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["name", "levers", "median_s", "first_call_s", "speedup", "break_even_calls",
                 "equivalent", "max_rel_err", "rejected"],
    "properties": {
        "name": {"type": "string"},
        "levers": {"type": "array", "items": {"type": "string"}, "minItems": 1},
        "median_s": _NUM_OR_NULL,
        "first_call_s": _NUM_OR_NULL,
        "speedup": _NUM_OR_NULL,
        "break_even_calls": {"type": ["integer", "null"], "minimum": 1},
        "equivalent": {"type": ["boolean", "null"]},
        "max_rel_err": _NUM_OR_NULL,
        "rejected": {"type": ["string", "null"]},
        "round": {"enum": ["single", "combination"]},
        "patch": {"type": "string"},
        "notes": {"type": "array", "items": {"type": "string"}},
        "quartiles_s": _QUARTILES,
        "speedup_interval": _QUARTILES,
    },
}

TUNE_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "tfperf tune --json",
    "type": "object",
    "required": ["function", "machine", "baseline", "candidates", "best", "patch"],
    "properties": {
        "function": {"type": "string"},
        "path": {"type": "string"},
        "machine": MACHINE_SCHEMA,
        "device": {"type": "object"},
        "baseline": {
            "type": "object",
            "required": ["median_s", "first_call_s"],
            "properties": {"median_s": _NUM_OR_NULL, "first_call_s": _NUM_OR_NULL,
                           "quartiles_s": _QUARTILES},
        },
        "candidates": {"type": "array", "items": CANDIDATE_SCHEMA},
        "best": {"type": ["string", "null"]},
        "patch": {"type": "string"},
        "search_s": {"type": "number", "minimum": 0},
        "budget_s": {"type": "number", "exclusiveMinimum": 0},
        "cache": {"enum": ["off", "miss", "hit"]},
        "in_file": {"type": "boolean"},
        "cell": {"type": ["integer", "null"]},
    },
}
