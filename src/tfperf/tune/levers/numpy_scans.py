"""Running maxima, minima, sums and products carried through a loop over an array's items,
as NumPy scans on the whole array (issue 26; held-out round 14's c09 maximum drawdown).

The analysis (:mod:`tfperf.analysis.scans`) finds the carried names and their associative
updates; each becomes the sequence of its values over the iterations:

- ``c = max(c, t)`` → ``np.maximum.accumulate(np.maximum(t, c0))`` (the maximum of ``c0``
  and the first ``k`` terms is the running maximum of the terms each raised to ``c0``);
  ``min`` likewise;
- ``c += t`` → ``np.cumsum`` of ``[c0, t...]`` (the same left-to-right order as the loop, so
  the same rounding), in the dtype NumPy gives ``c0 + t`` (a Python int stays weak);
  ``*=`` with ``np.cumprod``.

A later statement of the body that reads ``c`` reads the sequence (each iteration's new
value); after the loop ``c`` is its last value (``c0`` when there were no items). A builtin
``max(a, b)`` in a term becomes ``np.maximum`` (equal but for NaN: ``max`` keeps its first
argument where a comparison is false, ``np.maximum`` returns NaN; tune's check sees it).
"""

from __future__ import annotations

import ast

from tfperf.analysis.scans import Carry, ScanLoop, scan_loop
from tfperf.analysis.writes import NotAWrite, names
from tfperf.tune.lever import Lever, LeverContext, RewriteLever
from tfperf.tune.levers.numpy_writes import NP, read_after
from tfperf.tune.source import SourceEditError, find_function, parse

RUNNING = "_tfperf_running"
LAST = "_tfperf_last"
_UFUNC = {"max": "maximum", "min": "minimum", "add": "add", "mul": "multiply"}


class _Extrema(ast.NodeTransformer):
    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in ("max", "min") \
                and len(node.args) == 2 and not node.keywords:
            node.func = ast.parse(f"{NP}.{_UFUNC[node.func.id]}", mode="eval").body
        return node


def scans(text: str, name: str) -> tuple[list[ScanLoop], list[str]]:
    fn = find_function(parse(text), name)
    found, why = [], []
    for loop in fn.body:  # top-level loops: a loop in a loop reruns per outer iteration
        if isinstance(loop, ast.For):
            try:
                found.append(scan_loop(loop, read_after(fn, loop)))
            except NotAWrite as exc:
                why.append(f"line {loop.lineno}: {exc}")
    return found, why


def batched(scan: ScanLoop) -> list[str]:
    rows = [f"import numpy as {NP}",
            f"def {RUNNING}(op, c0, t, inplace=False):",
            f"    t = {NP}.asarray(t)",
            "    if op in ('maximum', 'minimum'):",
            f"        return getattr({NP}, op).accumulate(getattr({NP}, op)(t, c0), axis=0)",
            f"    dt = {NP}.result_type(c0, t)",
            # acc += row on an array keeps acc's dtype, rounding each step: not a scan in dt
            f"    if inplace and isinstance(c0, {NP}.ndarray) and dt != c0.dtype:",
            "        raise TypeError('tfperf: an in-place update that casts each step')",
            f"    first = {NP}.broadcast_to({NP}.asarray(c0, dt), t.shape[1:])[None]",
            f"    whole = {NP}.concatenate((first, t.astype(dt)))",
            # dtype=: an int32 cumsum would otherwise count in int64
            f"    scan = {NP}.cumsum if op == 'add' else {NP}.cumprod",
            "    done = scan(whole, axis=0, dtype=dt)",
            "    return done[1:]",
            # initial= takes a Python int as int64: it is given the dtype NumPy promotes to
            f"def {LAST}(op, c0, t, first):",
            f"    t = {NP}.asarray(t)",
            "    if not len(t):",
            "        return c0",
            f"    c1 = {NP}.asarray(c0, {NP}.result_type(c0, t))[()]",
            f"    r = getattr({NP}, op).reduce(t, axis=0, initial=c1)",
            "    # the builtin returns the object it chose: the first value where no term beat it",
            "    beat = r > c0 if op == 'maximum' else r < c0",
            f"    return r if {NP}.ndim(r) or beat or not first else c0",
            f"{scan.item} = {NP}.asarray({scan.over})"]
    carries: list[Carry] = []
    for k, step in enumerate(scan.steps):
        if isinstance(step, tuple):
            rows.append(f"{step[0]} = {ast.unparse(_Extrema().visit(step[1]))}")
            continue
        term = ast.unparse(_Extrema().visit(step.term))
        later = scan.steps[k + 1:]
        if step.op in ("max", "min") and not any(
                step.name in names(s[1] if isinstance(s, tuple) else s.term) for s in later):
            # only the last value is read: one reduction, no sequence
            rows.append(f"{step.name} = {LAST}('{_UFUNC[step.op]}', {step.name}, {term}, "
                        f"{step.first})")
            continue
        carries.append(step)
        rows.append(f"{step.name}_tfperf0 = {step.name}")
        rows.append(f"{step.name} = {RUNNING}('{_UFUNC[step.op]}', {step.name}, {term}, "
                    f"{step.inplace})")
    for c in carries:
        rows.append(f"{c.name} = {c.name}[-1] if len({c.name}) else {c.name}_tfperf0")
        if c.inplace:  # the loop updated the first array itself: other names see it
            rows += [f"if isinstance({c.name}_tfperf0, {NP}.ndarray):",
                     f"    {c.name}_tfperf0[...] = {c.name}",
                     f"    {c.name} = {c.name}_tfperf0"]
    return rows


def rewrite(text: str, name: str) -> str:
    found, why = scans(text, name)
    if not found:
        raise SourceEditError("no running max/min/sum carried through a loop over an array"
                              + (f" ({why[0]})" if why else ""))
    lines = text.splitlines(keepends=True)
    for scan in reversed(found):
        row = lines[scan.loop.lineno - 1]
        pad = row[:len(row) - len(row.lstrip())]
        lines[scan.loop.lineno - 1:scan.loop.end_lineno] = [
            pad + r + "\n" for s in batched(scan) for r in s.splitlines()]
    out = "".join(lines)
    parse(out)
    return out


class NumpyScans(RewriteLever):
    name, slot, stage, traces = "running values→NumPy scans", "vectorize", 20, False
    description = ("values carried through a loop over an array's items as running max/min/"
                   "sum/product (c = max(c, t)) become NumPy scans of the whole array")
    rejections = ("the terms do not broadcast (raises)", "disagrees (NaN, or the items are "
                  "not an array)")

    edit = staticmethod(rewrite)


def levers(ctx: LeverContext) -> list[Lever]:
    return [NumpyScans()]
