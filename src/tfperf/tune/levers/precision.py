"""Reduced precision: the function's float32 tensor arguments cast to bfloat16 or float16 at
its start, so every op after runs in that dtype, and its float32 outputs cast back to float32
at each ``return``: the caller gets the dtypes it had (a bfloat16 result would break
``result + tf.ones(...)`` in its caller), and the patch shows both casts.

Offered only where the device facts say the dtype has fast math (a GPU with tensor cores; on
CPU, bfloat16 with AVX512-BF16 or AMX): elsewhere it is slower, and the table says why it
was not tried. Judged against the baseline run on float64 inputs, with the tolerance of the
candidate's dtype (:mod:`tfperf.bench.equivalence`), since the baseline's own float32
rounding is not the truth either; and, like every candidate, it must keep the function's
contract (:mod:`tfperf.tune.contract`): an output the casts back cannot reach (a ``yield``,
a value stored elsewhere) is rejected with the dtype it changed.
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from tfperf.tune.lever import Lever, LeverContext
from tfperf.tune.source import ensure_tf, find_function, indent_of, parse, replace_nodes

#: ``ctx.returns`` when the baseline's output is not known: every return gets the cast back
#: of whatever came out in the reduced dtype.
UNKNOWN = object()


class ReducedPrecision(Lever):
    slot, stage, reduced_precision = "precision", 45, True
    rejections = ("the device has no fast math for the dtype (needs a GPU)",
                  "an op pins float32 (raises on mixed dtypes)",
                  "too far from the float64 truth for the dtype's tolerance",
                  "an output keeps the reduced dtype (changes the function's contract)")

    def __init__(self, dtype: str) -> None:
        self.dtype = dtype
        self.name = f"{dtype} casts"
        self.description = (f"float32 tensor arguments cast to {dtype} at the function's "
                            "start, its float32 outputs cast back to float32 at each return")

    def applies(self, ctx: LeverContext) -> str | None:
        fast, why = ctx.facts.fast(self.dtype or "")
        if not fast:
            return why
        if not ctx.target.float_params:
            return "no float32 tensor argument to cast"
        return None

    def build(self, text: str, ctx: LeverContext) -> str:
        text, tf = ensure_tf(text)
        text = cast_back(text, ctx.target.name, tf, str(self.dtype),
                         ctx.returns[0] if ctx.returns else UNKNOWN)
        fn = find_function(parse(text), ctx.target.name)
        first = fn.body[0]
        docstring = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
            and isinstance(first.value.value, str)
        anchor = fn.body[1] if docstring and len(fn.body) > 1 else first
        pad = indent_of(text, anchor.lineno)
        casts = "".join(f"{pad}{p} = {tf}.cast({p}, {tf}.{self.dtype})\n"
                        for p in ctx.target.float_params)
        rows = text.splitlines(keepends=True)
        at = (first.end_lineno or first.lineno) if docstring else first.lineno - 1
        rows.insert(at, casts)
        return "".join(rows)


def cast_back(text: str, name: str, tf: str, dtype: str, returned: Any) -> str:
    """Each ``return`` of ``name`` (not of a function nested in it) with the float32 parts of
    what the baseline ``returned`` (its snapshot) cast back to float32."""
    fn = find_function(parse(text), name)
    edits = [e for node in _returns(fn) if node.value is not None
             for e in _edits(text, node.value, returned, tf, dtype)]
    return replace_nodes(text, edits) if edits else text


def _returns(node: ast.AST) -> list[ast.Return]:
    out: list[ast.Return] = []
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue  # a nested function's returns are not the function's
        if isinstance(child, ast.Return):
            out.append(child)
        out += _returns(child)
    return out


def _edits(text: str, node: ast.expr, returned: Any, tf: str,
           dtype: str) -> list[tuple[ast.AST, str]]:
    if returned is not UNKNOWN and not _has_float32(returned):
        return []
    expr = ast.get_source_segment(text, node) or ast.unparse(node)
    if isinstance(returned, np.ndarray):  # one tensor
        return [(node, f"{tf}.cast({expr}, {tf}.float32)")]
    if isinstance(returned, (tuple, list)) and isinstance(node, (ast.Tuple, ast.List)) \
            and len(node.elts) == len(returned) \
            and not any(isinstance(e, ast.Starred) for e in node.elts):
        return [e for elt, part in zip(node.elts, returned, strict=True)
                for e in _edits(text, elt, part, tf, dtype)]
    # any other structure: every leaf that came out in the reduced dtype
    return [(node, f"{tf}.nest.map_structure(lambda t: {tf}.cast(t, {tf}.float32) if "
                   f"getattr(t, 'dtype', None) == {tf}.{dtype} else t, {expr})")]


def _has_float32(value: Any) -> bool:
    if isinstance(value, np.ndarray):
        return bool(value.dtype == np.float32)
    if isinstance(value, dict):
        return any(_has_float32(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_has_float32(v) for v in value)
    return False


def levers(ctx: LeverContext) -> list[Lever]:
    return [ReducedPrecision("bfloat16"), ReducedPrecision("float16")]
