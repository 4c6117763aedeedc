"""Reduced precision: the function's float32 tensor arguments cast to bfloat16 or float16 at
its start, so every op after runs in that dtype (its outputs too).

Offered only where the device facts say the dtype has fast math (a GPU with tensor cores; on
CPU, bfloat16 with AVX512-BF16 or AMX): elsewhere it is slower, and the table says why it
was not tried. Judged against the baseline run on float64 inputs, with the tolerance of the
candidate's dtype (:mod:`tfperf.bench.equivalence`), since the baseline's own float32
rounding is not the truth either.
"""

from __future__ import annotations

import ast

from tfperf.tune.lever import Lever, LeverContext
from tfperf.tune.source import ensure_tf, find_function, indent_of, parse


class ReducedPrecision(Lever):
    slot, stage, reduced_precision = "precision", 45, True
    rejections = ("the device has no fast math for the dtype (needs a GPU)",
                  "an op pins float32 (raises on mixed dtypes)",
                  "too far from the float64 truth for the dtype's tolerance")

    def __init__(self, dtype: str) -> None:
        self.dtype = dtype
        self.name = f"{dtype} casts"
        self.description = f"float32 tensor arguments cast to {dtype} at the function's start"

    def applies(self, ctx: LeverContext) -> str | None:
        fast, why = ctx.facts.fast(self.dtype or "")
        if not fast:
            return why
        if not ctx.target.float_params:
            return "no float32 tensor argument to cast"
        return None

    def build(self, text: str, ctx: LeverContext) -> str:
        text, tf = ensure_tf(text)
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


def levers(ctx: LeverContext) -> list[Lever]:
    return [ReducedPrecision("bfloat16"), ReducedPrecision("float16")]
