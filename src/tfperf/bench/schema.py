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


_COUNT = {"type": ["integer", "null"], "minimum": 0}
_LINE_ROW = {
    "type": "object",
    "required": ["path", "line", "count"],
    "properties": {
        "path": {"type": ["string", "null"]},
        "line": {"type": ["integer", "null"]},
        "count": {"type": "integer", "minimum": 0},
        "kinds": {"type": "object", "additionalProperties": {"type": "integer"}},
        "function": {"type": "string"},
        "graph_ops": _COUNT,
        "xla_compilations": {"type": "integer", "minimum": 0},
        "causes": {"type": "array", "items": {"type": "object"}},
    },
}

COUNTERS_SCHEMA: dict[str, Any] = {
    "type": ["object", "null"],
    "required": ["traces", "host_syncs", "eager_ops", "graph_ops", "xla_compilations",
                 "steady_calls", "sites", "unavailable"],
    "properties": {
        "traces": _COUNT,
        "host_syncs": _COUNT,
        "eager_ops": _COUNT,
        "graph_ops": _COUNT,
        "xla_compilations": _COUNT,
        "steady_calls": {"type": "integer", "minimum": 0},
        "sites": {"type": "object", "additionalProperties": {"type": "array",
                                                             "items": _LINE_ROW}},
        "unavailable": {"type": "object", "additionalProperties": {"type": "string"}},
    },
}

FINGERPRINT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["cpu", "cpu_count", "arch", "system", "python", "tensorflow", "gpus", "cuda",
                 "cudnn", "driver", "tfperf"],
    "properties": {
        "cpu": {"type": "string"},
        "cpu_count": {"type": ["integer", "null"]},
        "arch": {"type": "string"},
        "system": {"type": "string"},
        "python": {"type": "string"},
        "tensorflow": {"type": ["string", "null"]},
        "gpus": {"type": "array", "items": {"type": "string"}},
        "cuda": {"type": ["string", "null"]},
        "cudnn": {"type": ["string", "null"]},
        "driver": {"type": ["string", "null"]},
        "tfperf": {"type": "string"},
    },
}

RUN_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "tfperf bench --save (a saved run)",
    "type": "object",
    "required": ["format", "version", "created", "label", "file", "counters_only",
                 "fingerprint", "machine_key", "machine", "settings", "yardstick_s",
                 "variants"],
    "properties": {
        "format": {"const": "tfperf-bench-run"},
        "version": {"const": 1},
        "created": {"type": "string"},
        "label": {"type": ["string", "null"]},
        "file": {"type": ["string", "null"]},
        "counters_only": {"type": "boolean"},
        "fingerprint": FINGERPRINT_SCHEMA,
        "machine_key": {"type": "string", "minLength": 1},
        "machine": MACHINE_SCHEMA,
        "settings": {"type": "object"},
        "yardstick_s": {"type": ["array", "null"], "items": {"type": "number", "minimum": 0}},
        "variants": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["name", "status", "times_s", "number", "stats", "first_call_s",
                             "counters", "error"],
                "properties": {
                    "name": {"type": "string"},
                    "status": {"enum": ["ok", "slow", "error", "timeout"]},
                    "times_s": {"type": "array", "items": {"type": "number", "minimum": 0}},
                    "number": {"type": "integer", "minimum": 0},
                    "stats": {
                        "type": ["object", "null"],
                        "required": ["median_s", "iqr_s", "min_s", "mean_s", "runs"],
                        "properties": {
                            "median_s": {"type": ["number", "null"], "minimum": 0},
                            "iqr_s": {"type": ["number", "null"], "minimum": 0},
                            "min_s": {"type": ["number", "null"], "minimum": 0},
                            "mean_s": {"type": ["number", "null"], "minimum": 0},
                            "runs": {"type": "integer", "minimum": 0},
                        },
                    },
                    "first_call_s": {"type": ["number", "null"], "minimum": 0},
                    "counters": COUNTERS_SCHEMA,
                    "error": {"type": ["string", "null"]},
                    "notes": {"type": "array", "items": {"type": "string"}},
                    "yardstick_s": {"type": ["array", "null"],
                                    "items": {"type": "number", "minimum": 0}},
                },
            },
        },
    },
}
