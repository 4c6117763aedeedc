"""Loops over the distinct values of a key array (``for uid in np.unique(uids)``) that select
each group's elements by ``uids == uid`` and reduce them (round 17, issue 26): which
selections and reductions the body makes, and the body with each reduction replaced by its
group's precomputed value (``tune/levers/numpy_groups.py`` computes them at once)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from tfperf.analysis.element_forms import NotAWrite, names

#: Builtins a group body may call (they read their arguments and change nothing).
PURE_BUILTINS = frozenset({"int", "float", "len", "round", "abs", "str", "bool", "min", "max"})
#: Methods a group body may call: on its output (``append``) or on a scalar.
METHODS = frozenset({"append", "item", "tolist"})
GROUP = "_tfperf_group_"


@dataclass
class GroupLoop:
    loop: ast.For
    keys: ast.expr                     # the unique's argument
    reductions: list[tuple[str, ast.expr]] = field(default_factory=list)  # (op, array)
    body: list[ast.stmt] = field(default_factory=list)  # reductions → GROUP{k}[GROUP + 'at']


def _is_np(f: ast.expr, attr: str) -> bool:
    return isinstance(f, ast.Attribute) and f.attr == attr and isinstance(f.value, ast.Name) \
        and f.value.id in ("np", "numpy")


def _mask(node: ast.expr, keys: ast.expr, key: str) -> bool:
    """``keys == key`` or ``key == keys``."""
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1
            and isinstance(node.ops[0], ast.Eq)):
        return False
    sides = [ast.dump(node.left), ast.dump(node.comparators[0])]
    return sorted(sides) == sorted([ast.dump(keys), ast.dump(ast.Name(key, ast.Load()))])


def selection(node: ast.expr, keys: ast.expr, key: str) -> str | None:
    """"mask" (``keys == key``), "tuple" (``np.where(keys == key)``), "positions"
    (``np.where(..)[0]``, ``np.nonzero(..)[0]``, ``np.flatnonzero(..)``), else None."""
    if _mask(node, keys, key):
        return "mask"
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords \
            and _mask(node.args[0], keys, key):
        if _is_np(node.func, "where") or _is_np(node.func, "nonzero"):
            return "tuple"
        if _is_np(node.func, "flatnonzero"):
            return "positions"
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
            and node.slice.value == 0 and selection(node.value, keys, key) == "tuple":
        return "positions"
    return None


class _Lift(ast.NodeTransformer):
    """Each group reduction → its precomputed value; records (op, array)."""

    def __init__(self, g: GroupLoop, sel: dict[str, str], key: str) -> None:
        self.g, self.sel, self.key = g, sel, key

    def _kind(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Name) and node.id in self.sel:
            return self.sel[node.id]
        return selection(node, self.g.keys, self.key)

    def _group_read(self, node: ast.expr) -> ast.expr | None:
        """``x[sel]`` of a name the loop does not bind → x."""
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) \
                and self._kind(node.slice) is not None:
            return node.value
        return None

    def _lifted(self, op: str, array: ast.expr, as_int: bool = False) -> ast.expr:
        k = len(self.g.reductions)
        self.g.reductions.append((op, array))
        text = f"{GROUP}{k}[{GROUP}at]"
        return ast.parse(f"int({text})" if as_int else text, mode="eval").body

    def visit_Call(self, node: ast.Call) -> ast.expr:
        f = node.func
        if node.keywords:
            return self._rest(node)
        one = node.args[0] if len(node.args) == 1 else None
        if one is not None and (_is_np(f, "mean") or _is_np(f, "sum")):
            read = self._group_read(one)
            if read is not None:
                return self._lifted("mean" if _is_np(f, "mean") else "sum", read)
            if _is_np(f, "sum") and self._kind(one) == "mask":
                return self._lifted("count", self.g.keys)
            if _is_np(f, "count_nonzero") and self._kind(one) == "mask":
                return self._lifted("count", self.g.keys)
        if not node.args and isinstance(f, ast.Attribute) and f.attr in ("mean", "sum"):
            read = self._group_read(f.value)
            if read is not None:
                return self._lifted(f.attr, read)
            if f.attr == "sum" and self._kind(f.value) == "mask":
                return self._lifted("count", self.g.keys)
        if one is not None and isinstance(f, ast.Name) and f.id == "len":
            read = self._group_read(one)
            if read is not None or self._kind(one) == "positions":
                return self._lifted("count", read or self.g.keys, as_int=True)
        return self._rest(node)

    def _rest(self, node: ast.Call) -> ast.expr:
        out = self.generic_visit(node)
        assert isinstance(out, ast.expr)
        return out


def group_loop(loop: ast.For, after: set[str]) -> GroupLoop:
    """The group loop ``loop`` is, or NotAWrite with the reason; ``after``: names read after
    the loop (a selection or group temporary read there keeps the loop)."""
    it = loop.iter
    if not (isinstance(it, ast.Call) and _is_np(it.func, "unique") and len(it.args) == 1
            and not it.keywords and isinstance(loop.target, ast.Name)) or loop.orelse:
        raise NotAWrite("not a loop over np.unique(keys)")
    key = loop.target.id
    g = GroupLoop(loop, it.args[0])
    sel: dict[str, str] = {}
    dropped: set[str] = set()
    for s in loop.body:
        if isinstance(s, ast.Assign) and len(s.targets) == 1 \
                and isinstance(s.targets[0], ast.Name):
            kind = selection(s.value, g.keys, key)
            if kind is not None:
                sel[s.targets[0].id] = kind
                dropped.add(s.targets[0].id)
                continue
        lift = _Lift(g, sel, key)
        new = lift.visit(ast.parse(ast.unparse(s)).body[0])
        g.body.append(new)
    if not g.reductions:
        raise NotAWrite("no group reduction (np.mean/np.sum/len of x[keys == key])")
    bound = {key} | set(sel)
    for s in g.body:
        for n in ast.walk(s):
            if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                tgts = n.targets if isinstance(n, ast.Assign) else [n.target]
                bound |= {t.id for t in tgts if isinstance(t, ast.Name)}
    reads = set().union(*(names(a) for _, a in g.reductions), names(g.keys))
    for s in g.body:
        for n in ast.walk(s):
            if isinstance(n, ast.Name) and (n.id in sel or (n.id in reads and n.id in bound)):
                raise NotAWrite(f"{n.id!r} read other than by a group reduction")
            if isinstance(n, ast.Name) and n.id in reads and not isinstance(n.ctx, ast.Load):
                raise NotAWrite(f"{n.id!r} rebound in the loop")
            if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store) \
                    and names(n.value) & reads:
                raise NotAWrite("the loop writes into an array a group reduction reads")
            if isinstance(n, ast.Call):
                f = n.func
                ok = (isinstance(f, ast.Name) and f.id in PURE_BUILTINS
                      and f.id not in bound) or (
                    isinstance(f, ast.Attribute) and (
                        (isinstance(f.value, ast.Name) and f.value.id in ("np", "numpy"))
                        or f.attr in METHODS))
                if not ok:
                    raise NotAWrite(f"a call of {ast.unparse(f)!r} in the group loop")
                if isinstance(f, ast.Attribute) and f.attr in METHODS \
                        and names(f.value) & reads:
                    raise NotAWrite("a method of an array a group reduction reads")
            if isinstance(n, (ast.Lambda, ast.Yield, ast.YieldFrom, ast.Await, ast.Global,
                              ast.Nonlocal, ast.FunctionDef, ast.Return)):
                raise NotAWrite(f"a {type(n).__name__} in the group loop")
    if dropped & after:
        raise NotAWrite("a selection read after the loop")
    return g
