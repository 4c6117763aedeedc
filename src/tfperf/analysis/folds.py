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
    WriteNest,
    axis_of_loop,
    check_body,
    counter_axis,
    grid_leads,
    indices_only_index,
    merge_chains,
    moves,
    moving_names,
    slice_grid,
)

#: ``acc = _tfperf_fold(acc, ufunc, terms, mask)``: the terms the loop's branches took, folded
#: into ``acc`` in the loop's order.
FOLD = "_tfperf_fold"
FOLDED = "_tfperf_folded"


def _is_fold(s: ast.stmt) -> bool:
    """``acc += t`` (``-=``, ``*=``) into a name, or an ``if`` whose branches hold only those,
    ``pass`` and such ``if``s."""
    if isinstance(s, ast.AugAssign):
        return isinstance(s.target, ast.Name) and type(s.op) in STEPS
    if isinstance(s, ast.Pass):
        return True
    return isinstance(s, ast.If) and all(_is_fold(b) for b in [*s.body, *s.orelse])


def _folds(stmts: list[ast.stmt], path: list[tuple[str, bool]], tag: str,
           rows: list[ast.stmt], out: list[tuple[str, str, str, str | None]]) -> None:
    """Each fold's term and the conditions on its path, as temporaries (every condition and
    every term computed on the whole grid; the mask picks the iterations that folded)."""
    for k, s in enumerate(stmts):
        here = f"{tag}{k}"
        if isinstance(s, ast.AugAssign):
            assert isinstance(s.target, ast.Name)
            term = f"{BRANCH}{here}_t"
            rows.append(ast.parse(f"{term} = {ast.unparse(s.value)}").body[0])
            mask = None
            if path:
                mask = f"{BRANCH}{here}_m"
                conds = ", ".join(c for c, _ in path)
                signs = ", ".join(str(v) for _, v in path)
                rows.append(ast.parse(f"{mask} = {MASK}(({conds},), ({signs},))").body[0])
            out.append((s.target.id, STEPS[type(s.op)], term, mask))
        elif isinstance(s, ast.If):
            cond = f"{BRANCH}{here}_c"
            rows.append(ast.parse(f"{cond} = {ast.unparse(s.test)}").body[0])
            _folds(s.body, [*path, (cond, True)], f"{here}b", rows, out)
            _folds(s.orelse, [*path, (cond, False)], f"{here}e", rows, out)


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
    while isinstance(node, (ast.For, ast.While)):
        if isinstance(node, ast.While):
            axes.append(counter_axis(node, start, {a.index for a in axes}))
            body = node.body[:-1]
        else:
            axes.append(axis_of_loop(node, {a.index for a in axes}, items_at))
            body = node.body
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
            _folds(tail, [], f"{len(axes)}_f", rows, folds)
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
    check_body(stmts, write, FOLDED, write.targets[0], indices, temps, "fold", set(), set())
    read_after = set().union(*(names(s) for s in after)) if after else set()
    if read_after & (temps | set(indices) | set(items_at)):
        raise NotAWrite(f"{sorted(read_after & (temps | set(indices) | set(items_at)))[0]!r} "
                        "is read after the loop (its last iteration's value)")
    indices_only_index(stmts, set(indices))
    moving = moving_names(stmts, set(indices))
    slices = slice_grid(stmts, write, indices, axes)
    if not slices and len(axes) == 1 and axes[0].step == "1":
        moved = ShiftedReads(indices[0])
        stmts2 = [moved.visit(ast.parse(ast.unparse(s)).body[0]) for s in stmts]
        if moved.used and slice_grid(stmts2, write, indices, axes):
            stmts, slices = stmts2, True
    if not slices:
        grid_leads(stmts, set(indices) | temps)
    return WriteNest(loop, axes, stmts, write, FOLDED, "fold", slices, temps, [], moving,
                     folds=folds)
