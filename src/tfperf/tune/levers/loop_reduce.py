"""An accumulation loop ``for j in range(n): acc = acc + f(x[j], w[j])`` → one reduction:
``acc = acc + tf.reduce_sum(f(x[:n], w[:n]), axis=0)``.

Lint's TFP102 fix leaves this form alone because the shapes of ``x[j]`` and ``w[j]`` are not
known statically (``w[j]`` a scalar times a row needs ``w`` reshaped to broadcast). tune
knows the shapes only by running, so it offers every alignment: none, or one operand
expanded to broadcast along axis 0 (``tf.reshape(w[:n], [-1] + [1] * (len(x.shape) - 1))``);
the ones that raise or disagree with the baseline are rejected.
"""

from __future__ import annotations

import ast

from tfperf.tune.lever import Lever, LeverContext
from tfperf.tune.source import (
    SourceEditError,
    ensure_tf,
    find_function,
    index_uses,
    parse,
    range_stop,
    replace_nodes,
    sliced,
    sum_of,
)


def _accumulations(fn: ast.FunctionDef) -> list[tuple[ast.For, str, ast.expr, list[str]]]:
    """(loop, accumulator, term, indexed names) of every loop of the simple form."""
    out = []
    for loop in ast.walk(fn):
        if not isinstance(loop, ast.For) or loop.orelse or len(loop.body) != 1 \
                or not isinstance(loop.target, ast.Name) or range_stop(loop) is None:
            continue
        update = sum_of(loop.body[0])
        if update is None:
            continue
        acc, term = update
        subs, other = index_uses(term, loop.target.id)
        if not subs or other or any(isinstance(n, ast.Name) and n.id == acc
                                    for n in ast.walk(term)):
            continue
        names = list(dict.fromkeys(s.value.id for s in subs))  # type: ignore[attr-defined]
        out.append((loop, acc, term, names))
    return out


class LoopToReduction(Lever):
    slot, stage = "loop-reduce", 10
    description = "an element-by-element accumulation loop becomes one tf.reduce_sum"
    rejections = ("the operands do not broadcast that way (raises)",
                  "disagrees with the baseline (wrong alignment)")

    def __init__(self, which: int, line: int, expand: str | None, names: list[str]) -> None:
        self.which, self.line, self.expand, self.names = which, line, expand, names
        how = f", {expand} expanded" if expand else ""
        self.name = f"loop→reduce_sum (line {line}{how})"

    def build(self, text: str, ctx: LeverContext) -> str:
        text, tf = ensure_tf(text)
        fn = find_function(parse(text), ctx.target.name)
        found = _accumulations(fn)
        if self.which >= len(found):
            raise SourceEditError("the accumulation loop is gone after the other edits")
        loop, acc, term, names = found[self.which]
        stop = range_stop(loop)
        assert stop is not None and isinstance(loop.target, ast.Name)
        other = next((n for n in names if n != self.expand), None)
        edits = []
        for sub in index_uses(term, loop.target.id)[0]:
            name = sub.value.id  # type: ignore[attr-defined]
            whole = sliced(name, stop)
            if name == self.expand and other is not None:
                whole = f"{tf}.reshape({whole}, [-1] + [1] * (len({other}.shape) - 1))"
            edits.append((sub, whole))
        new_term = replace_nodes(ast.get_source_segment(text, term) or "", [
            (_shifted(sub, term), new) for sub, new in edits])
        stmt = f"{acc} = {acc} + {tf}.reduce_sum({new_term}, axis=0)"
        return replace_nodes(text, [(loop, stmt)])


def _shifted(node: ast.AST, base: ast.expr) -> ast.AST:
    """``node``'s position relative to the start of ``base``'s source segment."""
    copy = ast.Name(id="_")
    copy.lineno = node.lineno - base.lineno + 1  # type: ignore[attr-defined]
    copy.end_lineno = node.end_lineno - base.lineno + 1  # type: ignore[attr-defined]
    first_line = node.lineno == base.lineno  # type: ignore[attr-defined]
    copy.col_offset = node.col_offset - (base.col_offset if first_line else 0)  # type: ignore[attr-defined]
    last_line = node.end_lineno == base.lineno  # type: ignore[attr-defined]
    copy.end_col_offset = node.end_col_offset - (base.col_offset if last_line else 0)  # type: ignore[attr-defined]
    return copy


def levers(ctx: LeverContext) -> list[Lever]:
    try:
        fn = find_function(parse(ctx.target.source), ctx.target.name)
    except SourceEditError:
        return []
    out: list[Lever] = []
    for k, (loop, _, _, names) in enumerate(_accumulations(fn)):
        out.append(LoopToReduction(k, loop.lineno, None, names))
        if len(names) > 1:
            out.extend(LoopToReduction(k, loop.lineno, n, names) for n in names)
    return out
