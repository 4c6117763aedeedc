"""Group loops → one pass (round 17, issue 26): ``for uid in np.unique(uids)`` whose body
reduces ``x[uids == uid]`` (``np.mean``, ``np.sum``, ``.mean()``, ``.sum()``, ``len``, the
mask's count; selections spelled ``uids == uid``, ``np.where(..)``, ``np.where(..)[0]``,
``np.nonzero``, ``np.flatnonzero``). The groups' sums and sizes come from one
``np.unique(uids, return_inverse=True)`` and ``np.bincount``; the loop then runs over the
groups with those values, so what it writes (a dict keyed by the NumPy keys, a list, an
array) is written as before, in its order. Checked where it runs, else the loop runs: keys
a 1-D array of ints, bools, strings or NaN-free floats; each reduced array 1-D, numeric,
as long as the keys; integer sums exact in float64 (below 2**53)."""

from __future__ import annotations

import ast

from tfperf.analysis.groups import GROUP, GroupLoop, group_loop
from tfperf.analysis.writes import NotAWrite, names
from tfperf.tune.lever import Lever, LeverContext, RewriteLever
from tfperf.tune.levers.numpy_writes import CAUGHT, LOOP, NP, read_after
from tfperf.tune.source import SourceEditError, find_function, parse

HELPERS = [
    f"import numpy as {NP}",
    f"def {GROUP}keys(k):",
    f"    if not isinstance(k, {NP}.ndarray) or k.ndim != 1 or k.dtype.kind not in 'biufUS':",
    f"        raise {LOOP}('tfperf: group keys other than a 1-D array')",
    f"    if k.dtype.kind == 'f' and {NP}.isnan(k).any():  # NaN == NaN is never true",
    f"        raise {LOOP}('tfperf: a NaN key')",
    f"    return {NP}.unique(k, return_inverse=True)",
    f"def {GROUP}reduce(op, x, inv, n):",
    f"    if not isinstance(x, {NP}.ndarray) or x.ndim != 1 or len(x) != len(inv) "
    "or x.dtype.kind not in ('biufUS' if op == 'count' else 'biuf'):",
    f"        raise {LOOP}('tfperf: a group reduction of other than a 1-D array of numbers')",
    "    if op == 'count':",
    f"        return {NP}.bincount(inv, minlength=n)",
    "    if x.dtype.kind != 'f' and x.size "
    f"and {NP}.abs(x.astype({NP}.float64)).sum() >= 2.0 ** 53:",
    f"        raise {LOOP}('tfperf: integer sums past float64\\'s exact range')",
    f"    s = {NP}.bincount(inv, weights=x, minlength=n)",
    "    if op == 'sum':",
    f"        return s.astype({NP}.sum(x[:0]).dtype)",
    f"    return (s / {NP}.bincount(inv, minlength=n)).astype({NP}.mean(x[:1]).dtype)",
]


def rewrite(text: str, name: str) -> str:
    fn = find_function(parse(text), name)
    found: list[GroupLoop] = []
    why: list[str] = []
    for loop in fn.body:  # top-level loops
        if isinstance(loop, ast.For):
            try:
                after = set().union(*(names(s) for s in read_after(fn, loop)))
                found.append(group_loop(loop, after))
            except NotAWrite as exc:
                why.append(f"line {loop.lineno}: {exc}")
    if not found:
        raise SourceEditError("no loop over np.unique(keys) reducing each group's elements"
                              + (f" ({why[0]})" if why else ""))
    lines = text.splitlines(keepends=True)
    for g in reversed(found):
        lo, hi = g.loop.lineno, g.loop.end_lineno or g.loop.lineno
        row = lines[lo - 1]
        pad = row[:len(row) - len(row.lstrip())]
        source = lines[lo - 1:hi]
        # the keys and reductions first (a guard raises before the body ran once); the
        # loop over the groups outside the try: its own errors are the user's
        lines[lo - 1:hi] = [
            pad + "try:\n",
            *(pad + "    " + r + "\n" for r in _prep(g)),
            pad + f"except {CAUGHT}:\n",
            pad + f"    {GROUP}u = None\n",
            pad + f"if {GROUP}u is None:\n",
            *("    " + r if r.strip() else r for r in source),
            pad + "else:\n",
            *(pad + "    " + r + "\n" for r in _groups(g))]
    out = "".join(lines)
    parse(out)
    return out


def _prep(g: GroupLoop) -> list[str]:
    return [*HELPERS,
            f"{GROUP}u, {GROUP}inv = {GROUP}keys({ast.unparse(g.keys)})",
            *(f"{GROUP}{k} = {GROUP}reduce('{op}', {ast.unparse(a)}, {GROUP}inv, "
              f"len({GROUP}u))" for k, (op, a) in enumerate(g.reductions))]


def _groups(g: GroupLoop) -> list[str]:
    body = [r for s in g.body for r in ast.unparse(s).splitlines()]
    return [f"for {GROUP}at, {ast.unparse(g.loop.target)} in enumerate({GROUP}u):",
            *("    " + r for r in body)]


class NumpyGroups(RewriteLever):
    name, slot, stage, traces = "group loops→np.unique + bincount", "vectorize", 20, False
    description = ("a loop over np.unique(keys) that reduces x[keys == key] per group: the "
                   "groups' sums and sizes at once (np.unique(return_inverse) + np.bincount), "
                   "the loop then over the groups with those values")
    rejections = ("keys other than a 1-D array, or reduced arrays of another length: the "
                  "loop runs", "disagrees (a float sum's order differs: within rounding)")

    edit = staticmethod(rewrite)


def levers(ctx: LeverContext) -> list[Lever]:
    return [NumpyGroups()]
