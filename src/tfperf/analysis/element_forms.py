"""Per-element forms of a loop body that the write model reads as whole-grid operations
(issue 26, stop 45; rounds 13-15 wrote them in 7 of 36 cases): an ``if``/``elif``/``else``
that binds temporaries as one choice per element, tuple and per-iteration unpacking, Python's
``max``/``min`` of several values, a list of per-iteration values. The helpers they name are
defined by the lever (:mod:`tfperf.tune.levers.numpy_writes`), with run-time checks that fall
back to the loop where the batched form would differ."""

from __future__ import annotations

import ast


class NotAWrite(Exception):
    """The nest is not one this model answers (the message says why)."""


def names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


#: ``name = _tfperf_pick(conditions, values)``: an ``if``/``elif``/``else`` that binds
#: temporaries, as one choice over the grid (the first true condition's value, else the last);
#: ``None`` where the path leaves the name unbound (the run checks no element takes it).
PICK = "_tfperf_pick"
#: ``_tfperf_mask(conditions, signs)``: the conditions on a fold's path (analysis.folds).
MASK = "_tfperf_mask"
BRANCH = "_tfperf_br"


def unbranched(stmts: list[ast.stmt], bound: set[str], tag: str) -> list[ast.stmt]:
    """``stmts`` with each ``if`` chain whose branches only bind temporaries written as
    assignments: every condition and every branch's values computed (each branch's names
    under its own), then each name bound to a pick of them. ``bound``: the names already
    bound this iteration (a branch that leaves one alone keeps its value)."""
    out: list[ast.stmt] = []
    bound = set(bound)
    for k, s in enumerate(stmts):
        rows = _if_as_picks(s, bound, f"{tag}{k}_") if isinstance(s, ast.If) else [s]
        out += rows
        bound |= {t.id for r in rows if isinstance(r, ast.Assign)
                  for t in r.targets if isinstance(t, ast.Name)}
    return out


def _if_as_picks(s: ast.If, bound: set[str], tag: str) -> list[ast.stmt]:
    conds: list[ast.expr] = []
    bodies: list[list[ast.stmt]] = []
    node = s
    while True:  # an elif chain: one choice, the first true condition's branch
        conds.append(node.test)
        bodies.append(node.body)
        if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
            node = node.orelse[0]
            continue
        bodies.append(node.orelse)
        break
    rows: list[ast.stmt] = []
    cnames = [f"{BRANCH}{tag}c{k}" for k in range(len(conds))]
    rows += [ast.Assign([ast.Name(n, ast.Store())], c, lineno=0)
             for n, c in zip(cnames, conds, strict=True)]
    values: list[dict[str, str]] = []
    order: list[str] = []
    for k, body in enumerate(bodies):
        body = unbranched(body, bound, f"{tag}b{k}_")
        now: dict[str, str] = {}
        for b in body:
            if not (isinstance(b, ast.Assign) and len(b.targets) == 1
                    and isinstance(b.targets[0], ast.Name)):
                raise NotAWrite("a branch that does more than bind temporaries")
            value = _Rename(now).visit(ast.parse(ast.unparse(b.value), mode="eval").body)
            name = b.targets[0].id
            now[name] = f"{BRANCH}{tag}b{k}_{name}"
            rows.append(ast.Assign([ast.Name(now[name], ast.Store())], value, lineno=0))
            # a nested if's own temporaries are read only inside this branch
            order += [name] if name not in order and not name.startswith(BRANCH) else []
        values.append(now)
    for name in order:
        picks = [ast.Name(v[name], ast.Load()) if name in v
                 else ast.Name(name, ast.Load()) if name in bound else ast.Constant(None)
                 for v in values]
        call = ast.Call(ast.Name(PICK, ast.Load()), [
            ast.Tuple([ast.Name(c, ast.Load()) for c in cnames], ast.Load()),
            ast.Tuple(picks, ast.Load())], [])  # type: ignore[arg-type]
        rows.append(ast.Assign([ast.Name(name, ast.Store())], call, lineno=0))
    return [ast.parse(ast.unparse(r)).body[0] for r in rows]


#: ``a, b, c = v`` of a per-iteration ``v``: its first own axis, the one after the grid's.
UNPACK, PART = "_tfperf_unpack", "_tfperf_part"
#: ``max(a, b, …)``/``min`` of per-iteration values: Python's rule, element by element (the
#: first value unless a later one is greater: ties and NaN as the builtin).
EXTREME = "_tfperf_extreme"
#: ``out[i, j] = [h, s, v]``: a list of per-iteration values stacked on their first own axis.
STACK = "_tfperf_stack"


def unpacked(stmts: list[ast.stmt], moving: set[str], tag: str) -> list[ast.stmt]:
    """``a, b = p, q`` as ``a``, ``b`` bound from temporaries (the values first, as Python
    does); ``[b, g, r] = px / 255`` of a per-iteration value as parts of its first own axis."""
    out: list[ast.stmt] = []
    moving = set(moving)
    for k, s in enumerate(stmts):
        t = s.targets[0] if isinstance(s, ast.Assign) and len(s.targets) == 1 else None
        if not (isinstance(t, (ast.Tuple, ast.List))
                and all(isinstance(e, ast.Name) for e in t.elts)):
            out.append(s)
            if isinstance(s, ast.Assign) and names(s.value) & moving:
                moving |= names(ast.Tuple(s.targets, ast.Load()))
            continue
        assert isinstance(s, ast.Assign)
        dests = [e.id for e in t.elts]  # type: ignore[attr-defined]
        held = [f"{BRANCH}{tag}u{k}_{n}" for n in range(len(dests))]
        if isinstance(s.value, (ast.Tuple, ast.List)) and len(s.value.elts) == len(dests) \
                and not any(isinstance(e, ast.Starred) for e in s.value.elts):
            rows = [f"{h} = {ast.unparse(e)}" for h, e in zip(held, s.value.elts, strict=True)]
        elif names(s.value) & moving:
            whole = f"{BRANCH}{tag}u{k}"
            rows = [f"{whole} = {UNPACK}({ast.unparse(s.value)}, {len(dests)})"]
            rows += [f"{h} = {PART}({whole}, {n})" for n, h in enumerate(held)]
        else:
            out.append(s)  # a loop-invariant value unpacks as it is, once or every time
            continue
        rows += [f"{d} = {h}" for d, h in zip(dests, held, strict=True)]
        out += [ast.parse(r).body[0] for r in rows]
        if names(s.value) & moving:
            moving |= set(dests) | set(held)
    return out


class PerElement(ast.NodeTransformer):
    """Per-iteration ``max(a, b)``/``min(...)`` and ``[a, b, c]`` as their helpers."""

    def __init__(self, moving: set[str]) -> None:
        self.moving = moving

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        f = node.func
        if isinstance(f, ast.Name) and f.id in ("max", "min") and len(node.args) >= 2 \
                and not node.keywords and not any(isinstance(a, ast.Starred) for a in node.args) \
                and names(node) & self.moving:
            return ast.Call(ast.Name(EXTREME, ast.Load()), [
                ast.Constant(f.id), ast.Tuple(node.args, ast.Load())], [])
        return node

    def visit_Subscript(self, node: ast.Subscript) -> ast.expr:
        node.value = self.visit(node.value)  # a list inside an index picks positions
        return node

    def visit_List(self, node: ast.List) -> ast.expr:
        self.generic_visit(node)
        if isinstance(node.ctx, ast.Load) and node.elts and names(node) & self.moving \
                and not any(isinstance(e, ast.Starred) for e in node.elts):
            return ast.Call(ast.Name(STACK, ast.Load()), [ast.Tuple(node.elts, ast.Load())], [])
        return node


class _Rename(ast.NodeTransformer):
    def __init__(self, to: dict[str, str]) -> None:
        self.to = to

    def visit_Name(self, node: ast.Name) -> ast.Name:
        return ast.Name(self.to.get(node.id, node.id), node.ctx)


#: The value an ``if`` chain writes into the buffer's element (``written_in_branches``).
WRITTEN = "_tfperf_written"


def written_in_branches(s: ast.stmt) -> tuple[ast.If, ast.Assign] | None:
    """``if c: out[i] = a elif d: out[i] = b`` (each branch's last statement, one target) as
    an ``if`` that binds the value (a branch without the write, or no ``else``: the element
    as it is) and one write of it after: the element keeps its value where no branch wrote."""
    if not isinstance(s, ast.If):
        return None
    targets: set[str] = set()

    def strip(body: list[ast.stmt]) -> list[ast.stmt]:
        last = body[-1] if body else None
        if isinstance(last, ast.Assign) and len(last.targets) == 1 \
                and isinstance(last.targets[0], ast.Subscript) \
                and isinstance(last.targets[0].value, ast.Name):
            targets.add(ast.unparse(last.targets[0]))
            value = as_stored(last.value, last.targets[0])
            return [*body[:-1], ast.Assign([ast.Name(WRITTEN, ast.Store())], value, lineno=0)]
        return [*(b for b in body if not isinstance(b, ast.Pass)), None]  # type: ignore[list-item]

    chain: list[ast.If] = []
    node = s
    while True:
        chain.append(node)
        if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
            node = node.orelse[0]
            continue
        break
    bodies = [strip(n.body) for n in chain] + [strip(chain[-1].orelse)]
    if len(targets) != 1:
        return None
    (target,) = targets
    keep = ast.parse(f"{WRITTEN} = {target}").body[0]  # no write: the element as it is
    bodies = [[b if b is not None else keep for b in body] for body in bodies]
    out: list[ast.stmt] = bodies[-1]
    for n, body in zip(reversed(chain), reversed(bodies[:-1]), strict=True):
        out = [ast.If(n.test, body, out)]
    write = ast.parse(f"{target} = {WRITTEN}").body[0]
    assert isinstance(out[0], ast.If) and isinstance(write, ast.Assign)
    return out[0], write


def unread_picks_dropped(stmts: list[ast.stmt], write: ast.stmt,
                         after: set[str]) -> list[ast.stmt]:
    """Without the picks of names nothing reads later (a temporary one branch binds for its
    own use, ``v`` in ``elif c: v = x * 1.5; out[i] = v``): their unbound paths are no one's."""
    later = names(write) | after
    kept: list[ast.stmt] = []
    for s in reversed(stmts):
        if isinstance(s, ast.Assign) and isinstance(s.value, ast.Call) \
                and isinstance(s.value.func, ast.Name) and s.value.func.id == PICK \
                and not names(ast.Tuple(s.targets, ast.Load())) & later:
            continue
        kept.append(s)
        later |= names(s.value) if isinstance(s, ast.Assign) else names(s)
    return kept[::-1]


def as_stored(value: ast.expr, target: ast.Subscript) -> ast.expr:
    """A value written at ``target`` in one branch, cast as the store casts it (each
    branch's own value, before the pick: ``0``, a float64 ``v`` and the uint8 element)."""
    at = ast.parse(ast.unparse(target), mode="eval").body
    return ast.Call(ast.Name(STORED, ast.Load()), [value, at], [])


#: ``_tfperf_stored(v, at)``: ``v`` cast to the written element's dtype (Python scalars weak).
STORED = "_tfperf_stored"
