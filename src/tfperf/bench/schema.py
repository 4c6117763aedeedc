"""JSON Schemas of ``tfperf bench --json`` and ``tfperf bench --suite article --json``.

docs/bench.md shows these same schemas; a test keeps the two in step. Extra keys are allowed
so that the output can grow without breaking consumers.
"""

from __future__ import annotations

from typing import Any

_NUM_OR_NULL = {"type": ["number", "null"]}

MACHINE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["platform", "python", "cpu", "cpu_count", "tensorflow", "gpus"],
    "properties": {
        "platform": {"type": "string"},
        "python": {"type": "string"},
        "cpu": {"type": "string"},
        "cpu_count": {"type": ["integer", "null"]},
        "tensorflow": {"type": ["string", "null"]},
        "gpus": {"type": "array", "items": {"type": "string"}},
    },
}

BENCH_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "tfperf bench --json",
    "type": "object",
    "required": ["machine", "baseline", "variants"],
    "properties": {
        "machine": MACHINE_SCHEMA,
        "baseline": {"type": "string"},
        "variants": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["name", "median_s", "iqr_s", "runs", "first_call_s",
                             "ratio_to_baseline", "equivalent", "max_abs_err", "max_rel_err",
                             "error"],
                "properties": {
                    "name": {"type": "string"},
                    "status": {"enum": ["ok", "slow", "error", "timeout"]},
                    "median_s": {"type": ["number", "null"], "minimum": 0},
                    "iqr_s": {"type": ["number", "null"], "minimum": 0},
                    "runs": {"type": "integer", "minimum": 0},
                    "first_call_s": {"type": ["number", "null"], "minimum": 0},
                    "ratio_to_baseline": {"type": ["number", "null"], "exclusiveMinimum": 0},
                    "speedup": {"type": ["number", "null"], "exclusiveMinimum": 0},
                    "equivalent": {"type": ["boolean", "null"]},
                    "max_abs_err": _NUM_OR_NULL,
                    "max_rel_err": _NUM_OR_NULL,
                    "error": {"type": ["string", "null"]},
                },
            },
        },
    },
}

SUITE_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "tfperf bench --suite article --json",
    "type": "object",
    "required": ["machine", "claims"],
    "properties": {
        "machine": MACHINE_SCHEMA,
        "claims": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["id", "claim", "article", "measured", "unit", "verdict", "reason"],
                "properties": {
                    "id": {"type": "string", "pattern": "^S[0-9]+[a-z]?$"},
                    "claim": {"type": "string"},
                    "article": {"type": "string"},
                    "measured": _NUM_OR_NULL,
                    "unit": {"type": "string"},
                    "verdict": {"enum": ["holds", "does not hold", "not applicable here"]},
                    "reason": {"type": "string", "minLength": 1},
                },
            },
        },
    },
}
