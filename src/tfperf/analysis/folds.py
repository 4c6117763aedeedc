"""Counts and sums kept in Python names inside an index loop, folded at once (issue 26, stop
45; round 15's c09 ``count += 1`` under an ``if``, c04's ``loss += -log(p[i, y[i]])``)."""

from __future__ import annotations

import ast

from tfperf.analysis.element_forms import (
    BRANCH,
    MASK,
    NotAWrite,
    PerElement,
    names,
    unbranched,
    unpacked,
    unread_picks_dropped,
)
from tfperf.analysis.writes import (
    STEPS,
    Axis,
    Inline,
    ShiftedReads,
    Swap,
    WriteNest,
    axis_of_loop,
    check_body,
    counter_axis,
    grid_leads,
    indices_only_index,
    merge_chains,
    moves,
    moving_names,
    prefix_of,
    slice_grid,
    window_of,
)

#: ``acc = _tfperf_fold(acc, ufunc, terms, mask)``: the terms the loop's branches took, folded
#: into ``acc`` in the loop's order.
FOLD = "_tfperf_fold"
FOLDED = "_tfperf_folded"
#: ``best, k = _tfperf_running(best, cmp, terms, mask, grid, as_int)``: a running min or max
#: kept by a branch; ``name = _tfperf_carried(name, term, k, grid)``: a value the branch
#: carried with it, at the iteration that set ``best`` last (a position, ``i, j = x, y``:
#: the loops' indices at that iteration, from ``k``, as Python ints).
KEPT = "_tfperf_running"
#: ``new = _tfperf_appended(lst, terms, mask, grid, as_int)``, then ``lst.extend(new)``: the
#: values ``lst.append(v)`` took, in the loop's order (round 16's c10, round 15's c07)
APPENDED = "_tfperf_appended"
CARRIED = "_tfperf_carried"
_CMP = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge"}
_FLIP = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}
_INT_OPS = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)


def _pairs(body: list[ast.stmt]) -> list[tuple[str, ast.expr]] | None:
    """``a = x`` and ``a, b = x, y`` statements as (name, value) pairs; None for others."""
    out: list[tuple[str, ast.expr]] = []
    for s in body:
        if not (isinstance(s, ast.Assign) and len(s.targets) == 1):
            return None
        t, v = s.targets[0], s.value
        if isinstance(t, ast.Name):
            out.append((t.id, v))
        elif isinstance(t, ast.Tuple) and isinstance(v, ast.Tuple) \
                and len(t.elts) == len(v.elts) and all(isinstance(e, ast.Name) for e in t.elts):
            out += [(e.id, x) for e, x in zip(t.elts, v.elts, strict=True)]  # type: ignore[attr-defined]
        else:
            return None
    return out


def extreme(s: ast.stmt) -> tuple[str, str, ast.expr, list[tuple[str, ast.expr]]] | None:
    """``if v < best: best = v; i, j = x, y`` (``<=``, ``>``, ``>=``, ``best > v``; no
    ``else``): a running min or max kept by a branch (rounds 13 and 16: Otsu's threshold,
    template matching's position), as (best, comparison with ``v`` on the left, ``v``, the
    other names and their values). Refused: a value that reads a name the branch sets."""
    if not (isinstance(s, ast.If) and not s.orelse and isinstance(s.test, ast.Compare)
            and len(s.test.ops) == 1 and type(s.test.ops[0]) in _CMP):
        return None
    pairs = _pairs(s.body)
    if not pairs:
        return None
    set_here = [n for n, _ in pairs]
    if len(set(set_here)) != len(set_here) or any(names(v) & set(set_here) for _, v in pairs):
        return None
    left, right, cmp = s.test.left, s.test.comparators[0], _CMP[type(s.test.ops[0])]
    for best, value, how in ((right, left, cmp), (left, right, _FLIP[cmp])):
        if isinstance(best, ast.Name) and (best.id, ast.dump(value)) in {
                (n, ast.dump(v)) for n, v in pairs}:
            return best.id, how, value, [(n, v) for n, v in pairs if n != best.id]
    return None


def appended(s: ast.stmt) -> tuple[str, ast.expr] | None:
    """``lst.append(v)`` as (lst, v), else None."""
    if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and not s.value.keywords \
            and len(s.value.args) == 1 and isinstance(s.value.func, ast.Attribute) \
            and s.value.func.attr == "append" and isinstance(s.value.func.value, ast.Name):
        return s.value.func.value.id, s.value.args[0]
    return None


def python_int(node: ast.expr, ints: set[str]) -> bool:
    """An expression of Python ints alone (the loops' range indices, int constants, + - * //
    %): a Python int per iteration, where the grid has int64 arrays."""
    if isinstance(node, ast.Constant):
        return type(node.value) is int
    if isinstance(node, ast.Name):
        return node.id in ints
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return python_int(node.operand, ints)
    return isinstance(node, ast.BinOp) and isinstance(node.op, _INT_OPS) \
        and python_int(node.left, ints) and python_int(node.right, ints)


def _is_fold(s: ast.stmt) -> bool:
    """``acc += t`` (``-=``, ``*=``) into a name, or an ``if`` whose branches hold only those,
    ``pass`` and such ``if``s."""
    if isinstance(s, ast.AugAssign):
        return isinstance(s.target, ast.Name) and type(s.op) in STEPS
    if isinstance(s, ast.Pass) or extreme(s) is not None or appended(s) is not None:
        return True
    return isinstance(s, ast.If) and all(_is_fold(b) for b in [*s.body, *s.orelse])


def _path_mask(path: list[tuple[str, bool]], here: str, rows: list[ast.stmt]) -> str | None:
    """The mask of the iterations that reach a fold through ``path`` (its conditions and
    the branch taken at each), as a temporary appended to ``rows``; None off any branch."""
    if not path:
        return None
    mask = f"{BRANCH}{here}_m"
    conds = ", ".join(c for c, _ in path)
    signs = ", ".join(str(v) for _, v in path)
    rows.append(ast.parse(f"{mask} = {MASK}(({conds},), ({signs},))").body[0])
    return mask


def _folds(stmts: list[ast.stmt], path: list[tuple[str, bool]], tag: str,
           rows: list[ast.stmt], out: list[tuple[str, str, str, str | None]],
           ints: set[str]) -> None:
    """Each fold's term and the conditions on its path, as temporaries (every condition and
    every term computed on the whole grid; the mask picks the iterations that folded). A
    running extreme's entries: (best, ``extreme:cmp:int``, its value, mask), then each
    carried name's (name, ``at:best:int``, its value, mask)."""
    for k, s in enumerate(stmts):
        here = f"{tag}{k}"
        kept = extreme(s)
        if kept is not None:
            best, how, value, carried = kept
            mask = _path_mask(path, here, rows)
            term = f"{BRANCH}{here}_x"
            rows.append(ast.parse(f"{term} = {ast.unparse(value)}").body[0])
            out.append((best, f"extreme:{how}:{int(python_int(value, ints))}", term, mask))
            for n, (name, v) in enumerate(carried):
                if python_int(v, ints):  # a position: computed from the extreme's, no grid
                    out.append((name, f"position:{best}", ast.unparse(v), mask))
                    continue
                term = f"{BRANCH}{here}_x{n}"
                rows.append(ast.parse(f"{term} = {ast.unparse(v)}").body[0])
                out.append((name, f"at:{best}:0", term, mask))
        elif (added := appended(s)) is not None:
            lst, value = added
            mask = _path_mask(path, here, rows)
            term = f"{BRANCH}{here}_a"
            rows.append(ast.parse(f"{term} = {ast.unparse(value)}").body[0])
            out.append((lst, f"append:{int(python_int(value, ints))}", term, mask))
        elif isinstance(s, ast.AugAssign):
            assert isinstance(s.target, ast.Name)
            term = f"{BRANCH}{here}_t"
            rows.append(ast.parse(f"{term} = {ast.unparse(s.value)}").body[0])
            mask = _path_mask(path, here, rows)
            out.append((s.target.id, STEPS[type(s.op)], term, mask))
        elif isinstance(s, ast.If):
            cond = f"{BRANCH}{here}_c"
            rows.append(ast.parse(f"{cond} = {ast.unparse(s.test)}").body[0])
            _folds(s.body, [*path, (cond, True)], f"{here}b", rows, out, ints)
            _folds(s.orelse, [*path, (cond, False)], f"{here}e", rows, out, ints)


def fold_nest(loop: ast.For | ast.While, after: list[ast.stmt],
              start: ast.stmt | None = None) -> WriteNest:
    """A nest whose innermost body ends in folds into names (``count += 1`` under an ``if``,
    ``loss += -np.log(p[i, y[i]])``; rounds 13-15: counts and sums kept as Python scalars):
    the terms the loop took, in its order, folded at once (``ufunc.accumulate``: the same
    roundings as the loop's left-to-right steps). Nothing else may read a folded name."""
    axes: list[Axis] = []
    stmts: list[ast.stmt] = []
    node: ast.stmt = loop
    items_at: dict[str, tuple[str, str, int]] = {}
    folds: list[tuple[str, str, str, str | None]] = []
    ints: set[str] = set()  # indices that are Python ints (range, enumerate, a counter from 0)
    while isinstance(node, (ast.For, ast.While)):
        if isinstance(node, ast.While):
            axes.append(counter_axis(node, start, {a.index for a in axes}))
            body = node.body[:-1]
            if isinstance(start, ast.Assign) and python_int(start.value, ints):
                ints.add(axes[-1].index)
        else:
            axes.append(axis_of_loop(node, {a.index for a in axes}, items_at))
            body = node.body
            if isinstance(node.iter, ast.Call) and isinstance(node.iter.func, ast.Name) \
                    and node.iter.func.id in ("range", "enumerate"):
                ints.add(axes[-1].index)
        if body and isinstance(body[-1], (ast.For, ast.While)):
            *before, node = body
            if isinstance(node, ast.While) and before:
                start, before = before[-1], before[:-1]
            tail: list[ast.stmt] = []
        else:
            k = len(body)
            while k and _is_fold(body[k - 1]):
                k -= 1
            before, tail, node = body[:k], body[k:], ast.Pass()
            if not tail:
                raise NotAWrite("the innermost statements are not folds into names")
        bound_yet = {a.index for a in axes} | set(items_at) | {
            t.id for s in stmts for t in s.targets if isinstance(t, ast.Name)}  # type: ignore[attr-defined]
        before = unpacked(before, moving_names([*stmts], {a.index for a in axes} | set(items_at)),
                           f"{len(axes)}_")
        before = unbranched(before, bound_yet, f"{len(axes)}_")
        if any(not (isinstance(s, ast.Assign) and all(isinstance(t, ast.Name) for t in s.targets))
               for s in before):
            raise NotAWrite("a statement other than a temporary's assignment in the loop")
        stmts += [merge_chains(s, moving_names([*stmts, *before], moves(axes, items_at)))
                  for s in before]
        if tail:
            rows: list[ast.stmt] = []
            _folds(tail, [], f"{len(axes)}_f", rows, folds, ints)
            stmts += [merge_chains(r, moving_names([*stmts, *rows], moves(axes, items_at)))
                      for r in rows]
    accs = [f[0] for f in folds]
    if len(set(accs)) != len(accs):
        raise NotAWrite(f"{accs[0]!r} folded twice in one iteration")
    if items_at:
        inline = Inline({k: v[0] for k, v in items_at.items()})
        moving = moving_names(stmts, moves(axes, items_at))
        stmts = [merge_chains(inline.visit(s), moving) for s in stmts]
    indices = [a.index for a in axes]
    if len(set(indices)) != len(indices):
        raise NotAWrite("two loops share an index name")
    per_element = PerElement(moving_names(stmts, set(indices) | set(items_at)))
    stmts = [per_element.visit(s) for s in stmts]
    # a branch's own temporary needs no pick (the folds' terms are the statements that read)
    stmts = unread_picks_dropped(stmts, ast.Pass(), set().union(*(names(s) for s in after)))
    temps = {t.id for s in stmts for t in s.targets if isinstance(t, ast.Name)}  # type: ignore[attr-defined]
    read = set().union(*(names(s.value) for s in stmts))  # type: ignore[attr-defined]
    if set(accs) & (read | temps | set(indices)):
        raise NotAWrite(f"{sorted(set(accs) & (read | temps | set(indices)))[0]!r} is read "
                        "in the loop (a recurrence)")
    if set(items_at) & temps:
        raise NotAWrite("an enumerate item rebound in the loop")
    write = ast.parse(f"{FOLDED}[()] = 0").body[0]
    assert isinstance(write, ast.Assign) and isinstance(write.targets[0], ast.Subscript)
    # windows and prefixes of the inputs (template matching's img[y:y + h, x:x + w]): one
    # view or cumulative op before the grid, as the writes' nests read them
    moving0 = moving_names(stmts, set(indices))
    prefixes = [p for s in stmts for n in ast.walk(s)
                if (p := prefix_of(n, indices, moving0) or window_of(n, indices, moving0))
                is not None]
    inside = {id(m) for p in prefixes for m in ast.walk(p.node)}
    check_body(stmts, write, FOLDED, write.targets[0], indices, temps, "fold", set(), inside)
    if prefixes:
        swap = Swap({id(p.node): k for k, p in enumerate(prefixes)}, prefixes)
        stmts = [swap.visit(s) for s in stmts]  # type: ignore[misc]
    read_after = set().union(*(names(s) for s in after)) if after else set()
    if read_after & (temps | set(indices) | set(items_at)):
        raise NotAWrite(f"{sorted(read_after & (temps | set(indices) | set(items_at)))[0]!r} "
                        "is read after the loop (its last iteration's value)")
    # a running extreme's Python-int value (``if i * i > best``) is cast back with int()
    as_ints = {t for _, op, t, _ in folds if op.startswith(("extreme:", "append:"))
               and op.endswith(":1")}
    indices_only_index([s for s in stmts if not (
        isinstance(s, ast.Assign) and ast.unparse(s.targets[0]) in as_ints)], set(indices))
    moving = moving_names(stmts, set(indices))
    slices = slice_grid(stmts, write, indices, axes)
    if not slices and len(axes) == 1 and axes[0].step == "1":
        moved = ShiftedReads(indices[0])
        stmts2 = [moved.visit(ast.parse(ast.unparse(s)).body[0]) for s in stmts]
        if moved.used and slice_grid(stmts2, write, indices, axes):
            stmts, slices = stmts2, True
    if not slices:
        grid_leads(stmts, set(indices) | temps)
    return WriteNest(loop, axes, stmts, write, FOLDED, "fold", slices, temps, prefixes, moving,
                     folds=folds)
