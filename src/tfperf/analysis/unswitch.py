"""A branch on a value the loop never changes, taken out of the loop (issue 26, stop 46;
round 16's c11: ``if operator == "erode": out[y, x] = … elif …: … else: raise`` inside a
double loop over pixels). Each branch gets its own copy of the loop, so the write and fold
models read one body at a time; the chain is tested once, before the loop, which is where
the loop's first iteration would test it."""

from __future__ import annotations

import ast
import copy

from tfperf.analysis.element_forms import names

#: What an invariant test may hold: names, constants and comparisons of them (no call, no
#: subscript, no attribute: testing it once cannot run code or raise where the loop would not).
_PLAIN = (ast.Name, ast.Constant, ast.Compare, ast.BoolOp, ast.UnaryOp, ast.Load,
          ast.cmpop, ast.boolop, ast.Not, ast.Eq, ast.NotEq, ast.Is, ast.IsNot, ast.In,
          ast.NotIn, ast.Tuple)


def _bound(loop: ast.stmt) -> set[str]:
    """Every name the loop binds (targets, assignments, augmented assignments)."""
    return {n.id for n in ast.walk(loop) if isinstance(n, ast.Name)
            and not isinstance(n.ctx, ast.Load)}


def _chain(s: ast.If) -> list[tuple[ast.expr | None, list[ast.stmt]]]:
    """``if a: … elif b: … else: …`` as (test, body) pairs; the else's test is None."""
    out: list[tuple[ast.expr | None, list[ast.stmt]]] = [(s.test, s.body)]
    rest = s.orelse
    while len(rest) == 1 and isinstance(rest[0], ast.If):
        out.append((rest[0].test, rest[0].body))
        rest = rest[0].orelse
    out.append((None, rest))
    return out


def invariant_branch(loop: ast.For | ast.While) -> ast.If | None:
    """The first ``if`` of the loop's bodies (through nested loops, not through other
    statements) whose every test reads only names the loop does not bind, and only names,
    constants and comparisons."""
    bound = _bound(loop)
    body: list[ast.stmt] = loop.body
    while True:
        for s in body:
            if isinstance(s, ast.If) and all(
                    test is None or (all(isinstance(n, _PLAIN) for n in ast.walk(test))
                                     and not names(test) & bound)
                    for test, _ in _chain(s)):
                return s
        inner = [s for s in body if isinstance(s, (ast.For, ast.While))]
        if len(inner) != 1:
            return None
        body = inner[0].body


class _Replace(ast.NodeTransformer):
    def __init__(self, target: ast.If, body: list[ast.stmt]) -> None:
        self.target, self.body = target, body

    def generic_visit(self, node: ast.AST) -> ast.AST:
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            if isinstance(block, list) and any(s is self.target for s in block):
                new: list[ast.stmt] = []
                for s in block:
                    new += copy.deepcopy(self.body) if s is self.target else [s]
                setattr(node, field, new or [ast.Pass()])
        return super().generic_visit(node)


def unswitched(loop: ast.For | ast.While) -> ast.If | None:
    """``if a: <loop, the a branch> elif b: <loop, the b branch> else: <loop, the else>``
    for a loop holding an invariant branch, else None."""
    branch = invariant_branch(loop)
    if branch is None:
        return None
    copies: list[tuple[ast.expr | None, ast.stmt]] = []
    for test, body in _chain(branch):
        twin = copy.deepcopy(loop)
        target = next(n for n in ast.walk(twin) if isinstance(n, ast.If)
                      and (n.lineno, n.col_offset) == (branch.lineno, branch.col_offset))
        _Replace(target, body).visit(twin)
        copies.append((test, twin))
    tail: list[ast.stmt] = [copies[-1][1]] if copies[-1][0] is None else []
    for test, loop_copy in reversed(copies[:-1] if copies[-1][0] is None else copies):
        assert test is not None
        tail = [ast.If(test, [loop_copy], tail)]
    out = tail[0]
    assert isinstance(out, ast.If)
    return ast.fix_missing_locations(out)
