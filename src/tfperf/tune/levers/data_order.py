"""tf.data: ``.map(f).batch(n)`` → ``.batch(n).map(f)``: one call of ``f`` per batch instead
of one per element (lint's TFP603 advice, for element-wise maps). Whether ``f`` is
element-wise is not known statically; a map that is not (it reduces over the element) makes
the candidate disagree with the baseline, and it is rejected. Lint's own fixes cover
``num_parallel_calls`` (TFP602) and ``prefetch`` (TFP601)."""

from __future__ import annotations

import ast

from tfperf.tune.lever import Lever, LeverContext
from tfperf.tune.source import SourceEditError, find_function, parse, replace_nodes


def _map_then_batch(fn: ast.FunctionDef) -> list[tuple[ast.Call, ast.Call]]:
    """(the ``.batch`` call, the ``.map`` call under it) for every ``.map(f).batch(n)``."""
    out = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "batch" and isinstance(node.func.value, ast.Call):
            inner = node.func.value
            if isinstance(inner.func, ast.Attribute) and inner.func.attr == "map":
                out.append((node, inner))
    return out


class BatchBeforeMap(Lever):
    name, slot, stage = "batch before map", "data-order", 5
    description = "tf.data .map(f).batch(n) → .batch(n).map(f): f runs once per batch"
    rejections = ("the map is not element-wise (disagrees with the baseline)",
                  "the map raises on a batch")

    def applies(self, ctx: LeverContext) -> str | None:
        try:
            found = _map_then_batch(find_function(parse(ctx.target.source), ctx.target.name))
        except SourceEditError as exc:
            return str(exc)
        return None if found else "no tf.data .map(f).batch(n) in the function"

    def build(self, text: str, ctx: LeverContext) -> str:
        found = _map_then_batch(find_function(parse(text), ctx.target.name))
        if not found:
            raise SourceEditError("the .map(...).batch(...) is gone after the other edits")
        batch, inner = found[0]
        assert isinstance(batch.func, ast.Attribute) and isinstance(inner.func, ast.Attribute)
        source = ast.get_source_segment
        dataset = source(text, inner.func.value)
        map_args = ", ".join(source(text, a) or "" for a in inner.args + inner.keywords)
        batch_args = ", ".join(source(text, a) or "" for a in batch.args + batch.keywords)
        return replace_nodes(text, [(batch, f"{dataset}.batch({batch_args}).map({map_args})")])


def levers(ctx: LeverContext) -> list[Lever]:
    return [BatchBeforeMap()]
