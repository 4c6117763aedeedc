"""Values carried across a loop's iterations as running reductions: the loop model's answer
to "is this loop a scan" (issue 26, held-out round 14's c09: a maximum drawdown keeps the
running maximum of the values and the worst fall from it in one Python loop).

A ``for item in values`` whose body binds names only, where each carried name ``c`` is
updated once per iteration by an associative operation of itself and a term, ``c = max(c,
t)``, ``min``, ``c = c + t``/``c += t``, ``c *= t``, and the term reads only the item, the
body's temporaries and carried names already updated in this iteration (their new values:
``cur_max`` in ``max((cur_max - level) / cur_max, mdd)``). Then each carried name's values
over the iterations are a scan of its terms (``np.maximum.accumulate``, ``np.cumsum``),
and each term is an element-wise function of whole arrays. A term that reads a carried
value before its update, or a name updated twice, is a recurrence: refused.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from tfperf.analysis.writes import NotAWrite, check_call, names

_BUILTIN = {"max": "max", "min": "min"}
_OPS = {ast.Add: "add", ast.Mult: "mul"}


@dataclass
class Carry:
    name: str
    op: str  # "max", "min", "add", "mul"
    term: ast.expr
    first: bool  # the carried value is the builtin's first argument (max(c, t))
    inplace: bool = False  # c += t: on an array, the same object updated in its own dtype


@dataclass
class ScanLoop:
    loop: ast.For
    item: str
    over: str
    steps: list[tuple[str, ast.expr] | Carry]  # the body in order: temporaries and updates


def _carry(stmt: ast.stmt) -> Carry | None:
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) \
            and type(stmt.op) in _OPS:
        return Carry(stmt.target.id, _OPS[type(stmt.op)], stmt.value, True, True)
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)):
        return None
    name, v = stmt.targets[0].id, stmt.value
    if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id in _BUILTIN \
            and len(v.args) == 2 and not v.keywords:
        a, b = v.args
        for own, other, first in ((a, b, True), (b, a, False)):
            if isinstance(own, ast.Name) and own.id == name:
                return Carry(name, _BUILTIN[v.func.id], other, first)
    if isinstance(v, ast.BinOp) and type(v.op) in _OPS:
        for own, other in ((v.left, v.right), (v.right, v.left)):
            if isinstance(own, ast.Name) and own.id == name:
                return Carry(name, _OPS[type(v.op)], other, own is v.left)
    return None


def scan_loop(loop: ast.For, after: list[ast.stmt]) -> ScanLoop:
    """The scan model of ``loop``; ``after``: what the function reads after it (the item and
    the temporaries must not be read there: their last values would change)."""
    if loop.orelse or not isinstance(loop.target, ast.Name) \
            or not isinstance(loop.iter, ast.Name):
        raise NotAWrite("not a loop over the items of one array (for item in values)")
    item, over = loop.target.id, loop.iter.id
    steps: list[tuple[str, ast.expr] | Carry] = []
    updated: set[str] = set()
    temps: set[str] = set()
    bound = {t.id for s in loop.body for t in ast.walk(s) if isinstance(t, ast.Name)
             and isinstance(t.ctx, ast.Store)}
    for stmt in loop.body:
        carry = _carry(stmt)
        if carry is None:
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], ast.Name)):
                raise NotAWrite("a statement other than a name's assignment in the loop")
            name, value = stmt.targets[0].id, stmt.value
        else:
            name, value = carry.name, carry.term
        stale = (names(value) & bound) - updated - temps
        if stale:
            raise NotAWrite(f"{sorted(stale)[0]!r} is read before this iteration binds it "
                            "(a recurrence)")
        if name in updated or name in temps or name in (item, over):
            raise NotAWrite(f"{name!r} is bound twice in one iteration")
        _elementwise(value, {item} | temps | updated)
        if carry is None:
            temps.add(name)
            steps.append((name, value))
        else:
            updated.add(name)
            steps.append(carry)
    if not updated:
        raise NotAWrite("no value carried across the iterations")
    read_after = set().union(*(names(s) for s in after)) if after else set()
    if read_after & (temps | {item}):
        raise NotAWrite(f"{sorted(read_after & (temps | {item}))[0]!r} is read after the loop")
    return ScanLoop(loop, item, over, steps)


def _elementwise(value: ast.expr, varying: set[str]) -> None:
    for n in ast.walk(value):
        if isinstance(n, ast.Call):
            if isinstance(n.func, ast.Name) and n.func.id in _BUILTIN and len(n.args) == 2:
                continue  # max(a, b) of two values: np.maximum on arrays
            check_call(n, varying)
        if isinstance(n, (ast.Subscript, ast.Attribute)) and names(n) & varying:
            raise NotAWrite("a per-item value indexed or asked an attribute")
        if isinstance(n, (ast.IfExp, ast.BoolOp, ast.Compare, ast.Lambda, ast.NamedExpr,
                          ast.ListComp, ast.GeneratorExp, ast.List, ast.Tuple)):
            raise NotAWrite(f"a {type(n).__name__} in the body")
