"""JSON Schemas of ``tfperf bench --json`` and ``tfperf bench --suite article --json``.

docs/bench.md shows these same schemas; a test keeps the two in step. Extra keys are allowed
so that the output can grow without breaking consumers.
"""

from __future__ import annotations

from typing import Any

_NUM_OR_NULL = {"type": ["number", "null"]}
# An error or element value: a number, or "inf"/"-inf"/"nan"/a complex written as a string.
_VALUE = {"type": ["number", "string", "boolean", "null"]}

EQUIVALENCE_SCHEMA: dict[str, Any] = {
    "type": ["object", "null"],
    "required": ["equivalent", "reason", "max_abs_err", "tolerance_used", "worst", "tolerance"],
    "properties": {
        "equivalent": {"type": ["boolean", "null"]},
        "reason": {"type": "string"},
        "max_abs_err": _VALUE,
        "max_rel_err": _VALUE,
        "tolerance_used": _VALUE,
        "tolerance": {"type": "string"},
        "worst": {
            "type": ["object", "null"],
            "required": ["path", "index", "expected", "actual"],
            "properties": {
                "path": {"type": "string"},
                "index": {"type": "array", "items": {"type": "integer"}},
                "expected": _VALUE,
                "actual": _VALUE,
                "abs_err": _VALUE,
                "allowed": _VALUE,
            },
        },
    },
}

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
                    "max_abs_err": _VALUE,
                    "max_rel_err": _VALUE,
                    "equivalence_note": {"type": "string"},
                    "equivalence": EQUIVALENCE_SCHEMA,
                    "gradient_equivalence": EQUIVALENCE_SCHEMA,
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
                "required": ["id", "claim", "article", "article_value", "threshold",
                             "direction", "measured", "unit", "verdict", "reason", "variants"],
                "properties": {
                    "id": {"type": "string", "pattern": "^S[0-9]+[a-z]?$"},
                    "claim": {"type": "string"},
                    "article": {"type": "string"},
                    "article_value": {"oneOf": [
                        {"type": ["number", "null"]},
                        {"type": "array", "items": {"type": "number"}, "minItems": 2,
                         "maxItems": 2}]},
                    "threshold": _NUM_OR_NULL,
                    "direction": {"enum": ["at least", "at most"]},
                    "measured": _NUM_OR_NULL,
                    "unit": {"type": "string"},
                    "verdict": {"enum": ["holds", "direction holds", "does not hold",
                                         "not applicable here", "not measured"]},
                    "reason": {"type": "string", "minLength": 1},
                    "variants": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["comparison", "name", "status", "median_s",
                                         "equivalent", "error"],
                            "properties": {
                                "comparison": {"type": ["string", "null"]},
                                "name": {"type": "string"},
                                "baseline": {"type": "boolean"},
                                "status": {"enum": ["ok", "slow", "error", "timeout"]},
                                "median_s": {"type": ["number", "null"], "minimum": 0},
                                "speedup": _NUM_OR_NULL,
                                "equivalent": {"type": ["boolean", "null"]},
                                "equivalence": {"type": ["string", "null"]},
                                "error": {"type": ["string", "null"]},
                            },
                        },
                    },
                },
            },
        },
    },
}
