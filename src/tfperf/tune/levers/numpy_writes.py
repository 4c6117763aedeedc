"""Loops that write into an array, run once on the whole index grid in NumPy (issue 26; held-
out round 14's c01 gray conversion per pixel, c14's histogram and per-pixel lookup).

The analysis (:mod:`tfperf.analysis.writes`) says what the nest is: a **map** (each iteration
writes its own element) or an **accumulation** (``+=`` at an index that may repeat). The
rewrite keeps the user's NumPy and the user's array, written in place as before:

- each loop's ``range`` becomes a ``slice`` where every read takes the indices as leading
  subscript parts in loop order (views: no gather), else an ``np.arange`` shaped to broadcast
  along its own grid axis (``i`` → ``[n, 1]``, ``j`` → ``[1, m]``); ``a[i][j]`` is read as
  ``a[i, j]`` (the chained form would write into a copy once ``i`` is an array);
- a map's write is one assignment: the value keeps the grid's leading axes and gets size-1
  axes before its own, so a per-pixel scalar still broadcasts over a written row
  (``img[h, w] = gray`` fills the 3 channels); NumPy's cast on assignment is the same as the
  loop's (uint8 stays uint8, truncating a float64 value);
- an accumulation is ``np.add.at`` (``subtract``/``multiply``): unbuffered, so a repeated
  index adds every time, in the buffer's dtype (a uint8 histogram wraps as the loop did).
  An integer constant added into a 1-D integer buffer at in-range indices is counted with
  ``np.bincount`` instead (0.07 ms against ``np.add.at``'s 14.6 ms for a 192×256 uint8
  image, one process): ``n`` wrapping adds of ``v`` are one add of ``n * v`` cast to the
  buffer's dtype.

Per-iteration pieces become whole arrays: a prefix ``x[:i].sum()`` is row ``i`` of one
cumulative op, a window ``x[i:i + k]`` row ``i`` of ``sliding_window_view`` (axis 0, the
window's axis where the slice has it), and a reduction of a per-iteration value (``np.sum(v)``,
``v.max(axis=0)``) reduces ``v``'s own axes, which follow the grid's. A body that combines
values of different per-iteration ranks (a per-iteration scalar with a per-iteration vector)
does not line up once batched: it raises or disagrees, and tune's check rejects it.

NumPy's promotion is the loop's: NumPy 2 (NEP 50) promotes a scalar and an array of the same
dtype alike. Where the grid is an ``np.arange`` (int64), a loop index that mixes into arithmetic
with a narrower array is promoted further than a Python int would be; tune's equivalence check
sees it (a value that differs is rejected), and the slice grid has no such index.
"""

from __future__ import annotations

import ast
import builtins
import textwrap

from tfperf.analysis.batched_calls import dot_of, imported_from, math_of
from tfperf.analysis.element_forms import (
    EXTREME,
    MASK,
    PART,
    PICK,
    STACK,
    STORED,
    UNPACK,
    NotAWrite,
    names,
)
from tfperf.analysis.folds import APPENDED, CARRIED, FOLD, KEPT, fold_nest
from tfperf.analysis.scalars import LARGEST, SCALAR
from tfperf.analysis.unswitch import unswitched
from tfperf.analysis.writes import (
    PREFIX,
    ROWS,
    SHIFT,
    SHIFTS,
    UFUNC_AT,
    Axis,
    Prefix,
    WriteNest,
    bincount_of,
    reduction_of,
    write_nest,
)
from tfperf.tune.batched_call_rows import DOT, MATH, MATH_PROMOTES, dot_rows, math_rows
from tfperf.tune.lever import Lever, LeverContext, RewriteLever
from tfperf.tune.source import SourceEditError, block_of, find_function, is_within, parse
from tfperf.tune.strict_batches import VARIABLE as STRICT
from tfperf.tune.strict_batches import token

NP = "_tfperf_np"
FIT = "_tfperf_fit"
VALUE = "_tfperf_value"
COUNT = "_tfperf_add_at"
REDUCE = "_tfperf_reduce"
BINCOUNT = "_tfperf_bincount"
AXIS = "_tfperf_axis"
WEAK = "_tfperf_weak"
INSIDE = "_tfperf_inside"
SPAN, ORDER, AT = "_tfperf_span", "_tfperf_order", "_tfperf_at"
RECUR = "_tfperf_recurrence"
#: Raised by a run-time guard, before anything is written: the original loop runs instead
#: (an aliasing call, a list's weak scalars, negative positions: the loop's own answer). A
#: builtin the handler catches anyway: no class made on every call (+10 % on a 0.3 ms pick).
LOOP = "ValueError"
#: What the handler around the batched rows catches (tests find the handler by it).
CAUGHT = "(ArithmeticError, IndexError, TypeError, ValueError)"
#: The batched code binds the nest's indices and temporaries under these private names, so
#: a fall-back loop starts from the names as the user's code left them.
PRIVATE = "_tfperf_v_"


def _fn(text: str, name: str) -> ast.FunctionDef:
    return find_function(parse(text), name)


def nests(text: str, name: str) -> tuple[list[WriteNest], list[str]]:
    """The write nests of function ``name`` (outermost loops, none inside another), and why
    each other loop is not one."""
    fn = _fn(text, name)
    found: list[WriteNest] = []
    why: list[str] = []
    for loop in [n for n in ast.walk(fn) if isinstance(n, (ast.For, ast.While))]:
        if any(is_within(loop, w.outer) for w in found):
            continue
        block = block_of(fn, loop) or []
        at = next(k for k, s in enumerate(block) if s is loop) if loop in block else 0
        try:
            after = read_after(fn, loop)
            try:
                nest = write_nest(loop, after, block[at - 1] if at > 0 else None)
            except NotAWrite as exc:
                try:
                    nest = fold_nest(loop, after, block[at - 1] if at > 0 else None)
                except NotAWrite as fold:
                    raise NotAWrite(f"{exc}; as folds into names: {fold}") from None
            if nest.kind != "fold" and nest.array not in set().union(*(names(s) for s in after)):
                # written in place and never read again (a parameter the caller sees):
                # tune's check compares what the function returns, so it could not see it
                raise NotAWrite(f"{nest.array!r} is not read after the loop (only the caller "
                                "would see the writes; tune checks what is returned)")
            found.append(nest)
        except NotAWrite as exc:
            why.append(f"line {loop.lineno}: {exc}")
    found.sort(key=lambda w: w.outer.lineno)
    return [w for w in found if not any(o is not w and is_within(w.outer, o.outer)
                                        for o in found)], why


def read_after(fn: ast.FunctionDef, loop: ast.For | ast.While) -> list[ast.stmt]:
    """What the function reads after ``loop`` (as an expression statement of names), leaving
    out reads inside a later ``for`` that binds the name first."""
    end = loop.end_lineno or loop.lineno
    # another branch of an if that holds the loop never runs after it (an unswitched loop's
    # twins), unless a loop around that if runs it again
    loops = [o for o in ast.walk(fn) if isinstance(o, (ast.For, ast.While))]
    exclusive: set[int] = set()
    for n in ast.walk(fn):
        if isinstance(n, ast.If) and n is not loop and is_within(loop, n) \
                and not any(is_within(n, o) for o in loops):
            other = n.orelse if any(is_within(loop, b) for b in n.body) else n.body
            exclusive |= {id(m) for b in other for m in ast.walk(b)}
    rebound: list[tuple[ast.For, set[str]]] = [
        (f, names(f.target)) for f in ast.walk(fn)
        if isinstance(f, ast.For) and f.lineno > end]
    seen = []
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.lineno > end \
                and not is_within(n, loop) and id(n) not in exclusive \
                and not any(n.id in bound and is_within(n, f) for f, bound in rebound):
            seen.append(ast.Expr(ast.Name(n.id, ast.Load())))
    return seen  # type: ignore[return-value]


class _Indices(ast.NodeTransformer):
    """Each loop index in an expression replaced by its value as source text."""

    def __init__(self, at: dict[str, str]) -> None:
        self.at = at

    def visit_Name(self, node: ast.Name) -> ast.expr:
        return ast.parse(self.at[node.id], mode="eval").body if node.id in self.at else node


class _Reductions(ast.NodeTransformer):
    """``np.sum(v)``/``v.max(axis=k)`` of a per-iteration ``v`` → over ``v``'s own axes,
    which follow the grid's ``g`` leading ones."""

    def __init__(self, moving: set[str], g: int) -> None:
        self.moving, self.g, self.used, self.counts = moving, g, False, False
        self.dots, self.maths = False, False

    def _dot(self, node: ast.expr) -> ast.expr | None:
        """A dot of per-iteration rows → one contraction (``batched_call_rows.dot_rows``)."""
        found = dot_of(node)
        if found is None or not names(node) & self.moving:
            return None
        self.dots = True
        a, b = found
        return ast.parse(f"{DOT}({ast.unparse(a)}, {ast.unparse(b)}, {self.g}, "
                         f"{bool(names(a) & self.moving)}, {bool(names(b) & self.moving)})",
                         mode="eval").body

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        self.generic_visit(node)
        return self._dot(node) or node

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        lifted = self._dot(node)
        if lifted is not None:
            return lifted
        scalar = math_of(node)
        if scalar is not None and names(node) & self.moving:
            self.maths = True
            module, ufunc, args = scalar
            return ast.parse(f"{MATH}('{module}', '{ufunc}', "
                             f"{', '.join(ast.unparse(a) for a in args)})", mode="eval").body
        counted = bincount_of(node)
        if counted is not None and names(counted[0]) & self.moving:
            self.counts = True
            least = ast.unparse(counted[1]) if counted[1] is not None else "0"
            return ast.parse(f"{BINCOUNT}({ast.unparse(counted[0])}, {self.g}, {least})",
                             mode="eval").body
        found = reduction_of(node)
        if found is None or not names(found[1]) & self.moving:
            return node
        op, value, axis = found
        self.used = True
        return ast.parse(f"{REDUCE}('{op}', {ast.unparse(value)}, {self.g}, "
                         f"{ast.unparse(axis) if axis is not None else None})",
                         mode="eval").body


ROW_VIEW = "_tfperf_row_view"
ROW_SLICE = "_tfperf_row_slice"


class _RowViews(ast.NodeTransformer):
    """On a gathered grid (index arrays), ``x[i]`` of a loop-invariant name (not the buffer)
    → the rows of ``i``'s slice as a view shaped as the gather would be: no copy (c08's
    ``X1[i]``, ``X2[j]``; a fresh gathered copy made the matmul after it 4x slower here)."""

    def __init__(self, indices: list[str], array: str) -> None:
        self.indices, self.array, self.used = indices, array, False

    def visit_Subscript(self, node: ast.Subscript) -> ast.expr:
        self.generic_visit(node)
        sl, base = node.slice, node.value
        if isinstance(node.ctx, ast.Load) and isinstance(sl, ast.Name) \
                and sl.id in self.indices and isinstance(base, ast.Name) \
                and base.id != self.array and base.id not in self.indices:
            self.used = True
            k = self.indices.index(sl.id)
            return ast.parse(f"{ROW_VIEW}({base.id}, {sl.id}, {ROW_SLICE}{k}, {k}, "
                             f"{len(self.indices)})", mode="eval").body
        return node


def _row_view_rows() -> list[str]:
    """``_tfperf_row_view(x, idx, s, k, g)``: ``x[idx]`` as a view where ``x`` is an array and
    the slice holds every position (past the end the gather raises, as the loop does)."""
    return [f"def {ROW_VIEW}(x, idx, s, k, g):",
            f"    if not isinstance(x, {NP}.ndarray) or x.ndim == 0:",
            "        return x[idx]",
            "    v = x[s]",
            "    if v.shape[0] != idx.size:",
            "        return x[idx]",
            "    return v.reshape((1,) * k + v.shape[:1] + (1,) * (g - k - 1) + v.shape[1:])"]


def _aliases(nest: WriteNest) -> list[str]:
    """The names the body reads that may be other names for the buffer's memory (``y = out``,
    ``out = x[::-1]``, two parameters given one array): checked where the code runs."""
    bound = nest.temps | {a.index for a in nest.axes} | {nest.array, NP}
    read = set().union(*(names(s.value) for s in [*nest.stmts, nest.write]))  # type: ignore[attr-defined]
    target = nest.write.targets if isinstance(nest.write, ast.Assign) else [nest.write.target]
    read |= set().union(*(names(t) for t in target), *(names(p.base) for p in nest.prefixes))
    read |= set().union(*(names(ast.parse(a.bind[1], mode="eval")) for a in nest.axes
                          if a.bind))  # rows of an expression: may be a view of the buffer
    return sorted(n for n in read - bound - set(dir(builtins)) - {"np", "numpy"}
                  if not n.startswith("_tfperf"))


def _per_item(nest: WriteNest) -> list[str]:
    """The names the body indexes at a per-iteration position (``offs[i]``): a Python list
    there gives the loop Python scalars."""
    found = {n.value.id for s in [*nest.stmts, nest.write] for n in ast.walk(s)
             if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name)
             and names(n.slice) & nest.moving and n.value.id != nest.array}
    return sorted(n for n in found if not n.startswith("_tfperf") or n.startswith(ROWS))


class _Private(ast.NodeTransformer):
    def __init__(self, bound: set[str]) -> None:
        self.bound = bound

    def visit_Name(self, node: ast.Name) -> ast.Name:
        return ast.Name(PRIVATE + node.id, node.ctx) if node.id in self.bound else node


def _private(nest: WriteNest) -> WriteNest:
    """``nest`` with its indices and temporaries renamed (the range bounds stay: they read
    the names as they were before the loop, c01's ``h`` of ``h, w, c = src.shape``)."""
    bound = nest.temps | {a.index for a in nest.axes}
    ren = _Private(bound)
    axes = [Axis(PRIVATE + a.index, a.start, a.stop, a.step, a.item, a.bind)
            for a in nest.axes]
    stmts = [ren.visit(ast.parse(ast.unparse(s)).body[0]) for s in nest.stmts]
    write = ren.visit(ast.parse(ast.unparse(nest.write)).body[0])
    prefixes = [Prefix(p.node, p.base, p.op, p.inclusive, PRIVATE + p.index
                       if p.index in bound else p.index, p.size,
                       [(PRIVATE + i if i in bound else i, k) for i, k in p.more])
                for p in nest.prefixes]
    return WriteNest(nest.outer, axes, stmts, write, nest.array, nest.kind, nest.slices,
                     {PRIVATE + t for t in nest.temps}, prefixes,
                     {PRIVATE + m if m in bound else m for m in nest.moving},
                     nest.shifted, nest.recurrence, nest.spans, nest.folds, nest.scalar)


def _scalar_rows(nest: WriteNest, g: int) -> list[str]:
    """``int(v)``/``float(v)`` of each element, as one cast of the batch: exact casts only
    (a NaN, an infinity or a uint64 past int64 runs the loop, whose ``int`` raises or grows)."""
    return [f"{LARGEST} = [0]",
            f"def {SCALAR}(kind, v):",
            f"    v = {NP}.asarray(v)",
            f"    if v.ndim > {g} or v.dtype.kind not in 'biuf':",
            f"        raise {LOOP}('tfperf: int()/float() of a row, not of an element')",
            "    if kind == 'float':",
            f"        return v.astype({NP}.float64)",
            "    if v.dtype.kind == 'f':",
            f"        if not {NP}.isfinite(v).all():",
            f"            raise {LOOP}('tfperf: int() of a NaN or an infinity')",
            f"        v = {NP}.trunc(v)",
            f"        if v.size and {NP}.abs(v).max() >= 2.0 ** 62:",
            f"            raise {LOOP}('tfperf: int() past int64')",
            f"    elif v.dtype == {NP}.uint64 and v.size and v.max() >= 2 ** 62:",
            f"        raise {LOOP}('tfperf: int() past int64')",
            # a bool or narrow int's bound is its dtype's: no pass over the values
            "    top = 1 if v.dtype.kind == 'b' else (",
            f"        -int({NP}.iinfo(v.dtype).min) + {NP}.iinfo(v.dtype).max "
            "if v.dtype.kind in 'iu' and v.dtype.itemsize <= 4 else None)",
            f"    v = v.astype({NP}.int64)",
            "    if top is None:",
            f"        top = int({NP}.abs(v).max()) if v.size else 0",
            f"    {LARGEST}[0] = max({LARGEST}[0], top)",
            "    return v"]


def _scalar_check(nest: WriteNest) -> list[str]:
    """Before the write: the Python scalars' largest value fits int64, and the store casts
    it as the loop's store does (a float64 array; or an int array that holds it, an int)."""
    assert nest.scalar is not None
    bound, is_int = nest.scalar
    bound = bound.replace(LARGEST, f"{LARGEST}[0]")
    fits = (f" or ({nest.array}.dtype.kind in 'iu' and {NP}.iinfo({nest.array}.dtype).min "
            f"<= -_tfperf_b and _tfperf_b <= {NP}.iinfo({nest.array}.dtype).max)"
            if is_int else "")
    return [f"_tfperf_b = {bound}",
            f"if not (_tfperf_b < 2 ** 63 and ({nest.array}.dtype == {NP}.float64{fits})):",
            f"    raise {LOOP}('tfperf: Python scalars that int64 or the store would change')"]


def _windows_fit(nest: WriteNest, k: int, indices: list[str]) -> list[str]:
    """Each loop's last position has a whole window (past it the loop's slice is cut short,
    and the windows' slice would be cut short silently): else the loop runs."""
    by = {a.index: a for a in nest.axes}
    rows = []
    for m, i in enumerate(indices):
        a = by[i]
        r = f"range({a.start}, {a.stop}, {a.step})"
        rows += [f"if len({r}) and max({r}[0], {r}[-1]) >= {PREFIX}{k}.shape[{m}]:",
                 f"    raise {LOOP}('tfperf: a window cut short by the array end')"]
    return rows


def _at(target: ast.Subscript) -> str:
    """The written position as ``ufunc.at``'s tuple, one entry per subscript part:
    ``h[x, y]`` is ``(x, y)``, not ``((x, y),)`` (one index array of pairs along axis 0)."""
    sl = target.slice
    parts = list(sl.elts) if isinstance(sl, ast.Tuple) else [sl]
    out = []
    for p in parts:
        if isinstance(p, ast.Slice):
            out.append("slice(" + ", ".join(ast.unparse(b) if b is not None else "None"
                                            for b in (p.lower, p.upper, p.step)) + ")")
        else:
            out.append(ast.unparse(p))
    return "(" + "".join(o + ", " for o in out) + ")"


def batched(nest: WriteNest) -> list[str]:
    """The statements that replace ``nest``'s loops, to run inside ``try``: a guard raises
    ``LOOP`` before anything is written, and the original loop runs in its handler."""
    user = nest
    nest = _private(nest)
    g = len(nest.axes)
    rows = [f"import numpy as {NP}",
            # range(n - 1, -1, -1) is not slice(n - 1, -1, -1) (empty), and a negative
            # position is the same element as its positive twin (range(-n, n) writes each
            # twice): only a range of positions >= 0 is batched, as the slice that walks it
            f"def {AXIS}(start, stop, step, as_slice):",
            "    r = range(start, stop, step)",
            "    if len(r) and min(r[0], r[-1]) < 0:",
            f"        raise {LOOP}('tfperf: a loop over negative positions is not batched')",
            "    if not as_slice:",
            f"        return {NP}.arange(r.start, r.stop, r.step)",
            "    end = r[-1] + (1 if r.step > 0 else -1) if len(r) else r.start",
            "    return slice(r.start, end if end >= 0 else None, r.step)"]
    rows += [f"{a.bind[0]} = {a.bind[1]}" for a in nest.axes if a.bind]  # rows of an expression
    guard = _aliases(user) if nest.kind != "fold" else []
    if guard:  # another name for the buffer's memory: the loop's order would show
        # (the generator's own name is private: a buffer named `a` was compared with itself)
        rows += [f"if any(isinstance(_tfperf_a, {NP}.ndarray) and {NP}.may_share_memory("
                 f"_tfperf_a, {nest.array}) for _tfperf_a in ({', '.join(guard)},)):",
                 f"    raise {LOOP}('tfperf: the written array shares memory with "
                 f"{', '.join(guard)}: the loop is not batched')"]
    seqs = _per_item(user)
    if seqs:  # a Python list's item is a weak scalar (uint8 + 10 stays uint8), the list's
        # rows an int64/float64 array (uint8 + int64 is int64): NumPy promotes differently
        reads = set().union(*(names(s.value) for s in [*nest.stmts, nest.write]))  # type: ignore[attr-defined]
        arrays = sorted(set(guard) | ({nest.array} & reads))  # the store's cast is alike
        rows += [f"def {WEAK}(seqs, arrays):",
                 f"    kinds = [{NP}.asarray(s).dtype for s in seqs if isinstance(s, (list, "
                 "tuple))]",
                 f"    if any({NP}.result_type(a.dtype, k) != a.dtype for k in kinds "
                 f"for a in arrays if isinstance(a, {NP}.ndarray)):",
                 f"        raise {LOOP}('tfperf: a Python list read item by item promotes "
                 "less than its items as one array: the loop is not batched')",
                 f"{WEAK}(({', '.join(seqs)},), ({''.join(a + ', ' for a in arrays)}))"]
        if nest.kind == "fold":  # a list's items are Python scalars: a fold of them stays one
            rows += [f"if any(isinstance(s, (list, tuple)) for s in ({', '.join(seqs)},)):",
                     f"    raise {LOOP}('tfperf: a fold of the items of a Python list')"]
    for k, a in enumerate(nest.axes):
        grid = f"{AXIS}({a.start}, {a.stop}, {a.step}, {nest.slices})"
        if nest.slices:
            rows.append(f"{a.index} = {grid}")
        else:
            shape = ", ".join("-1" if m == k else "1" for m in range(g))
            rows.append(f"{a.index} = {grid}" + (f".reshape({shape})" if g > 1 else ""))
    for k, p in enumerate(nest.prefixes):
        if p.op == "window":  # windows along axis 0, each as the slice gives it
            assert p.size is not None
            rows.append(f"{PREFIX}{k} = {NP}.moveaxis({NP}.lib.stride_tricks."
                        f"sliding_window_view({NP}.asarray({ast.unparse(p.base)}), "
                        f"{ast.unparse(p.size)}, axis=0), -1, 1)")
            rows += _windows_fit(nest, k, [p.index])
        elif p.op == "windows":  # [i, j] of the windows, each (a, b, the base's other axes)
            assert p.size is not None
            sizes = [p.size, *(z for _, z in p.more)]
            n = len(sizes)
            rows.append(f"{PREFIX}{k} = {NP}.moveaxis({NP}.lib.stride_tricks."
                        f"sliding_window_view({NP}.asarray({ast.unparse(p.base)}), "
                        f"({''.join(ast.unparse(z) + ', ' for z in sizes)}), "
                        f"axis={tuple(range(n))}), {tuple(range(-n, 0))}, "
                        f"{tuple(range(n, 2 * n))})")
            rows += _windows_fit(nest, k, [p.index, *(i for i, _ in p.more)])
        else:
            rows.append(f"{PREFIX}{k} = {PREFIX}({ast.unparse(p.base)}, '{p.op}', "
                        f"{p.inclusive})")
    if any(p.op not in ("window", "windows") for p in nest.prefixes):
        rows[1:1] = [f"def {PREFIX}(b, op, inclusive):",
                     f"    b = {NP}.asarray(b)",
                     f"    scan = {{'sum': {NP}.cumsum, 'prod': {NP}.cumprod,",
                     f"            'max': {NP}.maximum.accumulate,",
                     f"            'min': {NP}.minimum.accumulate}}",
                     "    c = scan[op](b, axis=0)",  # a sum's dtype: the same as b[:i].sum()
                     "    if c.ndim > 1:  # no axis: each prefix reduced over its other axes too",
                     f"        c = getattr({NP}, op)(c.reshape(len(c), -1), axis=1)",
                     "    if not inclusive:  # of no rows: the op's identity",
                     f"        c = {NP}.concatenate(({NP}.full(1, op == 'prod', c.dtype), c))",
                     "    return c"]
    if branches(nest):
        rows += _pick_rows(g)
    if nest.kind == "fold":
        rows += _fold_rows(g)
    used = {n.id for s in [*nest.stmts, nest.write] for n in ast.walk(s) if isinstance(n, ast.Name)}
    if STORED in used:
        rows += [f"def {STORED}(v, at):",  # the store's own cast, per branch
                 f"    if isinstance(v, ({NP}.ndarray, {NP}.generic)):",
                 "        return v.astype(at.dtype, copy=False)",
                 "    return v"]
    if SHIFT in used:
        rows += [f"def {SHIFT}(x, at, by):",  # the grid's slice moved by `by`, inside x
                 "    lo, hi = at.start + by, at.stop + by",
                 "    if lo < 0 or hi > len(x):  # the loop reads from the end, or raises",
                 f"        raise {LOOP}('tfperf: a shifted read outside the array')",
                 "    return x[lo:hi]"]
    if SHIFTS in used:
        rows += [f"def {SHIFTS}(x, at, by):",  # the grid's slices, each moved inside x
                 "    parts = []",
                 "    for k, (a, b) in enumerate(zip(at, by)):",
                 "        lo, hi = a.start + b, a.stop + b",
                 f"        if lo < 0 or hi > {NP}.shape(x)[k]:  # from the end, or raises",
                 f"            raise {LOOP}('tfperf: a shifted read outside the array')",
                 "        parts.append(slice(lo, hi))",
                 "    return x[tuple(parts)]"]
    if UNPACK in used:
        rows += [f"def {UNPACK}(v, n):",  # the first own axis, after the grid's
                 f"    v = {NP}.asarray(v)",
                 f"    if v.ndim <= {g} or v.shape[{g}] != n:",
                 f"        raise {LOOP}('tfperf: unpacking other than the first own axis')",
                 f"    return {NP}.moveaxis(v, {g}, 0)",
                 f"def {PART}(v, k):",
                 "    return v[k]"]
    if EXTREME in used:
        rows += [f"def {EXTREME}(op, vs):",  # max(a, b): a unless b > a (ties, NaN: a)
                 "    m = vs[0]",
                 "    for v in vs[1:]:",
                 f"        m = {NP}.where(v > m if op == 'max' else v < m, v, m)",
                 "    return m"]
    if STACK in used:
        rows += [f"def {STACK}(vs):",  # each value's own axes after the grid's, one more
                 f"    vs = [{NP}.asarray(v) for v in vs]",
                 f"    grid = {NP}.broadcast_shapes(*(v.shape[:{g}] for v in vs if v.ndim >= {g}))",
                 f"    own = {{v.shape[{g}:] if v.ndim >= {g} else None for v in vs}} - {{None}}",
                 "    if len(own) > 1:",
                 f"        raise {LOOP}('tfperf: a list of values of other shapes')",
                 "    rest = own.pop() if own else ()",
                 f"    return {NP}.stack([{NP}.broadcast_to(v if v.ndim >= {g} else v.reshape("
                 f"(1,) * ({g} + len(rest) - v.ndim) + v.shape), grid + rest) for v in vs], "
                 f"axis={g})"]
    # a loop index in a math call's arguments (read before the transformers below
    # replace the calls in place)
    ints = any(names(c) & {a.index for a in nest.axes}
               for s in [*nest.stmts, nest.write] for c in ast.walk(s)
               if isinstance(c, ast.Call) and math_of(c) is not None)
    stmts, w = list(nest.stmts), nest.write
    if not nest.slices and nest.kind == "map":
        views = _RowViews([a.index for a in nest.axes], nest.array)
        stmts = [views.visit(s) for s in stmts]
        w = views.visit(w)
        if views.used:
            rows += [f"{ROW_SLICE}{k} = {AXIS}({a.start}, {a.stop}, {a.step}, True)"
                     for k, a in enumerate(nest.axes)]
            rows += _row_view_rows()
    reduce = _Reductions(nest.moving, g)
    stmts = [reduce.visit(s) for s in stmts]
    w = reduce.visit(w)
    if reduce.used:
        rows += [f"def {REDUCE}(op, v, g, axis):",
                 f"    v = {NP}.asarray(v)",
                 "    if op in ('argmax', 'argmin') and axis is None:  # of the flattened value",
                 "        v, axis = v.reshape(v.shape[:g] + (-1,)), 0",
                 "    axis = tuple(range(g, v.ndim)) if axis is None else axis + g "
                 "if axis >= 0 else axis",
                 "    op, _, ddof = op.partition(':')  # std/var's ddof",
                 "    more = {'ddof': int(ddof)} if ddof else {}",
                 f"    return getattr({NP}, op)(v, axis=axis, **more)"]
    if reduce.dots:
        rows += dot_rows(LOOP)
    if reduce.maths:
        rows += math_rows(LOOP)
        reads = set().union(*(names(s.value) for s in [*nest.stmts, nest.write]))  # type: ignore[attr-defined]
        read = sorted(set(_aliases(user)) | ({nest.array} & reads))
        rows += [f"{MATH_PROMOTES}(({''.join(a + ', ' for a in read)}), {ints})"]
    if reduce.counts:  # one row's counts per element: the same length in every row
        rows += [f"def {BINCOUNT}(v, g, least):",
                 f"    v = {NP}.asarray(v)",
                 "    if v.ndim != g + 1 or v.dtype.kind not in 'biu':",
                 f"        raise {LOOP}('tfperf: a bincount of other than one row of ints')",
                 "    if v.size and v.min() < 0:",
                 f"        raise {LOOP}('tfperf: a bincount of a negative value')",
                 f"    top = v.max(axis=g) + 1 if v.shape[g] else {NP}.zeros(v.shape[:g], int)",
                 f"    ks = {NP}.maximum(top, least)",
                 "    k = int(ks.max()) if ks.size else int(least)",
                 "    if ks.size and ks.min() != k:",
                 f"        raise {LOOP}('tfperf: rows whose counts differ in length')",
                 f"    rows = v.reshape(-1, v.shape[g]).astype({NP}.intp)",
                 f"    at = ({NP}.arange(len(rows))[:, None] * k + rows).ravel()",
                 f"    return {NP}.bincount(at, minlength=len(rows) * k)"
                 ".reshape(v.shape[:g] + (k,))"]
    if nest.scalar is not None:
        rows += _scalar_rows(nest, g)
        *stmts, last = stmts  # the written value: checked before anything is written
        rows += [ast.unparse(s) for s in stmts] + [ast.unparse(last)]
        rows += _scalar_check(nest)
    else:
        rows += [ast.unparse(s) for s in stmts]
    varying = nest.moving
    if isinstance(w, ast.AugAssign):
        target = w.target
        assert isinstance(target, ast.Subscript)
        ufunc = UFUNC_AT[type(w.op)]
        if ufunc == "add":
            rows += [f"def {COUNT}(buf, at, v):",
                     "    ks = None",
                     "    if len(at) == buf.ndim and buf.dtype.kind in 'ui' \\",
                     f"            and {NP}.ndim(v) == 0 \\",
                     f"            and {NP}.asarray(v).dtype.kind in 'ui' \\",
                     f"            and {NP}.iinfo(buf.dtype).min <= v \\",
                     f"            and v <= {NP}.iinfo(buf.dtype).max:",
                     f"        ks = {NP}.broadcast_arrays(*({NP}.asarray(a) for a in at))",
                     "    if ks is not None and ks[0].size \\",
                     "            and all(k.dtype.kind in 'ui' for k in ks) \\",
                     "            and all(k.min() >= 0 and k.max() < n "
                     "for k, n in zip(ks, buf.shape)):",
                     "        # n adds of v wrap like one add of n * v in the buffer's int dtype;",
                     "        # several index arrays (vox[x, y, z] += 1): their flat positions",
                     f"        k = {NP}.ravel_multi_index(tuple(ks), buf.shape) if len(ks) > 1 "
                     "else ks[0]",
                     f"        n = {NP}.bincount(k.ravel(), minlength=buf.size).reshape(buf.shape)",
                     "        buf += (n * int(v)).astype(buf.dtype)",
                     "    else:",
                     # a grid axis the position does not name (F[k] += t(k, n)): the
                     # positions repeated along it, in C order (the loop's order of adds)
                     f"        if all(isinstance(a, {NP}.ndarray) for a in at) and {NP}.ndim(v):",
                     "            g = max(a.ndim for a in at)",
                     f"            grid = {NP}.broadcast_shapes(*(a.shape for a in at), "
                     f"{NP}.shape(v)[:g])",
                     f"            at = tuple({NP}.broadcast_to(a, grid) for a in at)",
                     f"        {NP}.add.at(buf, at, v)"]
            rows.append(f"{COUNT}({nest.array}, {_at(target)}, {ast.unparse(w.value)})")
            return rows
        rows.append(f"{NP}.{ufunc}.at({nest.array}, {_at(target)}, {ast.unparse(w.value)})")
        return rows
    if nest.kind == "fold":
        shape = "(" + "".join(f"len(range({a.start}, {a.stop}, {a.step})), "
                              for a in nest.axes) + ")"
        done: list[str] = []  # every new value first: a guard that raises leaves the names
        # as the loop will find them (the fall-back loop folds from the start again)
        for acc, op, term, mask in nest.folds:
            m = PRIVATE + mask if mask else None
            new = f"{PRIVATE}new_{acc}"
            if op.startswith("extreme:"):  # a running min/max kept by a branch
                _, cmp, as_int = op.split(":")
                rows.append(f"{new}, {PRIVATE}at_{acc} = {KEPT}({acc}, '{cmp}', "
                            f"{PRIVATE}{term}, {m}, {shape}, {as_int == '1'})")
            elif op.startswith("at:"):  # what that branch carried, where it set it last
                rows.append(f"{new} = {CARRIED}({acc}, {PRIVATE}{term}, "
                            f"{PRIVATE}at_{op.split(':')[1]}, {shape})")
            elif op.startswith("position:"):  # i, j = x, y: the indices at that iteration
                flat = f"{PRIVATE}at_{op.split(':')[1]}"
                where = _Indices({a.index.removeprefix(PRIVATE): f"range({a.start}, {a.stop}, "
                                  f"{a.step})[int({NP}.unravel_index({flat}, {shape})[{d}])]"
                                  for d, a in enumerate(nest.axes)})
                value = ast.unparse(where.visit(ast.parse(term, mode="eval")))
                rows.append(f"{new} = {acc} if {flat} is None else {value}")
            elif op.startswith("append:"):  # the values the loop appended, in its order
                rows.append(f"{new} = {APPENDED}({acc}, {PRIVATE}{term}, {m}, {shape}, "
                            f"{op.endswith(':1')})")
                done.append(f"{acc}.extend({new})")
                continue
            else:
                rows.append(f"{new} = {FOLD}({acc}, '{op}', {PRIVATE}{term}, {m}, {shape})")
            done.append(f"{acc} = {new}")
        rows += done
        return rows
    sub = next(t for t in w.targets if isinstance(t, ast.Subscript))
    if nest.recurrence:
        a = nest.axes[0]
        rows += [f"def {RECUR}(buf, lo, hi, f, moves, op):",
                 "    if hi <= lo:",
                 "        return",
                 "    if lo < 1 or hi > len(buf):  # a[-1] is the last element; past the end "
                 "the loop raises",
                 f"        raise {LOOP}('tfperf: a recurrence outside the array')",
                 # the loop rounds each step to the buffer's dtype: one accumulate only where
                 # the step's own dtype is the buffer's (a Python scalar factor stays weak)
                 f"    if {NP}.result_type(buf.dtype, f) != buf.dtype:",
                 f"        raise {LOOP}('tfperf: a step in another dtype than the buffer')",
                 f"    f = {NP}.asarray(f, buf.dtype)",
                 "    if moves and f.ndim < buf.ndim:  # a factor per element of a row",
                 "        f = f.reshape(f.shape[:1] + (1,) * (buf.ndim - f.ndim) + f.shape[1:])",
                 "    elif not moves:",
                 "        f = f[None]",
                 "    try:",
                 f"        f = {NP}.broadcast_to(f, (hi - lo,) + buf.shape[1:])",
                 "    except ValueError:",
                 f"        raise {LOOP}('tfperf: a factor that does not fit a row') from None",
                 "    if op == 'subtract':",
                 "        f, op = -f, 'add'",
                 f"    seq = {NP}.concatenate((buf[lo - 1:lo], f))",
                 f"    buf[lo:hi] = getattr({NP}, op).accumulate(seq, axis=0)[1:]"]
        moves = bool(names(w.value) & varying)
        rows.append(f"{RECUR}({nest.array}, {a.start}, {a.stop}, {ast.unparse(w.value)}, "
                    f"{moves}, '{nest.recurrence}')")
        return rows
    if nest.spans is not None:  # rot[col - j - 1, i] = img[i, j]: views, the value's grid
        # axes put in the parts' order
        order = [a.index for a in nest.axes]
        perm = [order.index(PRIVATE + i) for i, _, _ in nest.spans]
        rows += [f"def {SPAN}(at, sign, off, dim):",
                 f"    if {NP}.ndim(off):",
                 f"        raise {LOOP}('tfperf: an array offset of a written position')",
                 "    if not isinstance(at, slice):  # a gathered grid's arange (step 1)",
                 f"        at = {NP}.ravel(at)",
                 "        at = slice(int(at[0]), int(at[-1]) + 1) if at.size else slice(0, 0)",
                 "    if at.stop <= at.start:",
                 "        return slice(0, 0)",
                 "    first, last = sign * at.start + off, sign * (at.stop - 1) + off",
                 "    if min(first, last) < 0 or max(first, last) >= dim:",
                 f"        raise {LOOP}('tfperf: a shifted position outside the array')",
                 "    end = last + sign",
                 "    return slice(first, end if end >= 0 else None, sign)",
                 f"def {ORDER}(v, perm):",
                 f"    v = {NP}.asarray(v)",
                 "    if v.ndim < len(perm):",
                 "        return v",
                 "    return v.transpose(list(perm) + list(range(len(perm), v.ndim)))",
                 f"{VALUE} = {ORDER}({ast.unparse(w.value)}, {tuple(perm)})",
                 f"{AT} = (" + "".join(f"{SPAN}({PRIVATE}{i}, {sign}, {ast.unparse(off)}, "
                                       f"{nest.array}.shape[{k}]), "
                                       for k, (i, sign, off) in enumerate(nest.spans)) + ")",
                 *_fit_rows(),
                 f"{nest.array}[{AT}] = {FIT}({VALUE}, {nest.array}[{AT}], {g})"]
        return rows
    if nest.shifted:  # rot[col - j - 1, i]: distinct elements while each part stays in
        # [0, dim); a negative one would be another iteration's element counted from the end
        parts = sub.slice.elts if isinstance(sub.slice, ast.Tuple) else [sub.slice]
        rows += [f"def {INSIDE}(dim, offsets, part):",
                 f"    if any({NP}.ndim(o) for o in offsets):  # several elements a step",
                 f"        raise {LOOP}('tfperf: an array offset of a written position')",
                 f"    at = {NP}.asarray(part())",
                 "    if at.size and (at.min() < 0 or at.max() >= dim):",
                 f"        raise {LOOP}('tfperf: a shifted position outside the array')"]
        rows += [f"{INSIDE}({nest.array}.shape[{k}], "
                 f"({''.join(ast.unparse(o) + ', ' for o in offs)}), "
                 f"lambda: {ast.unparse(parts[k])})"
                 for k, offs in nest.shifted]
    rows.append(f"{VALUE} = {ast.unparse(w.value)}")
    rows += [f"{t.id} = {VALUE}" for t in w.targets if isinstance(t, ast.Name)]
    at = ast.unparse(sub)
    if names(w.value) & varying:
        rows += [*_fit_rows(),
                 f"{at} = {FIT}({VALUE}, {at}, {g})"]
    else:
        rows.append(f"{at} = {VALUE}")
    return rows


def _fit_rows() -> list[str]:
    """``_tfperf_fit(value, at, g)``: the value cast to the buffer's dtype and lined up with
    the written positions (the grid's axes first, then size-1 axes)."""
    return [f"def {FIT}(v, at, g):",
            # the buffer's dtype before broadcasting: the same unsafe cast as the
            # assignment's, once per value, not once per written element (c01: 0.24
            # ms to write float64 into 3 uint8 channels, 0.1 ms cast first)
            f"    v = {NP}.asarray(v).astype(at.dtype, copy=False)",
            "    if g <= v.ndim < at.ndim:",  # the grid's axes first, then size-1 axes
            "        v = v.reshape(v.shape[:g] + (1,) * (at.ndim - v.ndim) + v.shape[g:])",
            # a size-1 axis repeated before the write: NumPy's broadcast write with a
            # zero stride ran 0.22 ms for c01's 120x160x3, repeat + write 0.07 ms
            "    for k in range(v.ndim if v.ndim == at.ndim else 0):",
            "        if v.shape[k] == 1 and at.shape[k] > 1:",
            f"            v = {NP}.repeat(v, at.shape[k], axis=k)",
            "    return v"]


def _fold_rows(g: int) -> list[str]:
    """``_tfperf_mask``: the conditions on a fold's path, one truth value per element;
    ``_tfperf_fold``: the taken terms folded into the name in the loop's order (Python ints
    stay exact and unbounded; Python floats and ints stay Python scalars, as in the loop)."""
    return [
        f"def {MASK}(conds, signs):",
        "    m = True",
        "    for c, s in zip(conds, signs):",
        f"        c = {NP}.asarray(c)",
        f"        if c.ndim > {g}:",
        f"            raise {LOOP}('tfperf: a branch on a per-iteration array')",
        "        c = c if c.dtype == bool else c.astype(bool)",
        "        c = c if s else ~c",
        "        m = c if m is True else m & c",
        "    return m",
        f"def {FOLD}(acc, op, t, m, grid):",
        f"    if not isinstance(t, ({NP}.ndarray, {NP}.generic, int, float, complex)):",
        f"        raise {LOOP}('tfperf: a value that is not NumPy\\'s (a tensor would "
        "become an array)')",
        f"    if {NP}.ndim(t) > {g}:  # acc += a vector would make acc an array",
        f"        raise {LOOP}('tfperf: a fold of a per-iteration array')",
        f"    shape = {NP}.broadcast_shapes({NP}.shape(t), {NP}.shape(m), grid)",
        f"    taken = None if m is None else {NP}.broadcast_to({NP}.asarray(m, bool), shape)",
        f"    n = {NP}.prod(shape, dtype=int) if taken is None else {NP}.count_nonzero(taken)",
        "    if not n:",
        "        return acc",
        "    if type(acc) is int and type(t) is int:  # Python ints: exact and unbounded",
        "        n = int(n)",
        "        return acc + t * n if op == 'add' else acc - t * n if op == 'subtract' "
        "else acc * t ** n",
        f"    terms = {NP}.broadcast_to(t, shape)  # C order: the loop's order",
        "    terms = terms.ravel() if taken is None else terms[taken]",
        # a Python scalar term stays weak: np.float32 acc += 0.5 stays float32
        f"    dt = {NP}.result_type(acc, t if type(t) in (int, float, complex) else terms)",
        f"    seq = {NP}.concatenate(({NP}.asarray(acc, dt).reshape(1), terms.astype(dt)))",
        f"    r = getattr({NP}, op).accumulate(seq, dtype=dt)[-1]",
        "    return type(acc)(r) if type(acc) in (int, float) and type(t) in (int, float) "
        "else r",
        # if v < best: best = v (<=, >, >=): the loop keeps the first (strict) or the last
        # (not strict) position of the extreme that beats best; NaN never compares true
        f"def {KEPT}(acc, cmp, t, m, grid, as_int):",
        f"    if not isinstance(t, ({NP}.ndarray, {NP}.generic, int, float, complex)):",
        f"        raise {LOOP}('tfperf: a value that is not NumPy\\'s (a tensor would "
        "become an array)')",
        f"    if {NP}.ndim(t) > {g}:",
        f"        raise {LOOP}('tfperf: a running extreme of a per-iteration array')",
        f"    shape = {NP}.broadcast_shapes({NP}.shape(t), {NP}.shape(m), grid)",
        f"    terms = {NP}.broadcast_to(t, shape).ravel()  # C order: the loop's order",
        "    if terms.dtype.kind not in 'biuf':",
        f"        raise {LOOP}('tfperf: a running extreme of values that are not numbers')",
        "    if m is None and terms.size:  # argmin/argmax: the first extreme; a NaN there",
        "        # means NaN among the values (NumPy takes it first), which the loop skips",
        f"        find = {NP}.argmin if cmp in ('lt', 'le') else {NP}.argmax",
        "        k = int(find(terms)) if cmp in ('lt', 'gt') else "
        "terms.size - 1 - int(find(terms[::-1]))",
        "        e = terms[k]",
        "        if e == e:",
        "            if not {'lt': e < acc, 'le': e <= acc, 'gt': e > acc, 'ge': e >= acc}[cmp]:",
        "                return acc, None",
        "            return (int(e) if as_int else e), k",
        f"    keep = {NP}.ones(terms.shape, bool) if m is None else "
        f"{NP}.broadcast_to({NP}.asarray(m, bool), shape).ravel()",
        "    if terms.dtype.kind == 'f':",
        f"        keep = keep & ~{NP}.isnan(terms)",
        f"    at = {NP}.flatnonzero(keep)",
        "    if not len(at):",
        "        return acc, None",
        "    terms = terms[at]",
        "    e = terms.min() if cmp in ('lt', 'le') else terms.max()",
        "    if not {'lt': e < acc, 'le': e <= acc, 'gt': e > acc, 'ge': e >= acc}[cmp]:",
        "        return acc, None",
        f"    hit = {NP}.flatnonzero(terms == e)",
        "    k = at[hit[0] if cmp in ('lt', 'gt') else hit[-1]]",
        "    v = terms[hit[0] if cmp in ('lt', 'gt') else hit[-1]]",
        "    return (int(v) if as_int else v), k",
        # lst.append(v): the values in the loop's order (a Python int stays one; a row is
        # an array per item), extended once every guard has passed
        f"def {APPENDED}(lst, t, m, grid, as_int):",
        f"    if not isinstance(t, ({NP}.ndarray, {NP}.generic, int, float, complex)):",
        f"        raise {LOOP}('tfperf: a value that is not NumPy\\'s (a tensor would "
        "become an array)')",
        "    if type(lst) is not list:",
        f"        raise {LOOP}('tfperf: an append to something other than a list')",
        f"    t = {NP}.asarray(t)",
        f"    if t.ndim < {g}:",
        f"        raise {LOOP}('tfperf: an appended value that does not follow the grid')",
        f"    shape = {NP}.broadcast_shapes(t.shape[:{g}], {NP}.shape(m), grid)",
        # broadcast_to is a read-only view: the loop's items (x[i]) can be written
        f"    if t.shape[:{g}] != shape:",
        f"        t = {NP}.broadcast_to(t, shape + t.shape[{g}:]).copy()",
        f"    flat = t.reshape((-1,) + t.shape[{g}:])",
        "    if m is not None:",
        f"        flat = flat[{NP}.broadcast_to({NP}.asarray(m, bool), shape).ravel()]",
        "    return flat.tolist() if as_int else list(flat)",
        f"def {CARRIED}(old, t, k, grid):",
        f"    if not isinstance(t, ({NP}.ndarray, {NP}.generic, int, float, complex)):",
        f"        raise {LOOP}('tfperf: a value that is not NumPy\\'s (a tensor would "
        "become an array)')",
        "    if k is None:",
        "        return old",
        f"    if {NP}.ndim(t) > {g}:",
        f"        raise {LOOP}('tfperf: a per-iteration array carried by a running extreme')",
        f"    return {NP}.broadcast_to(t, {NP}.broadcast_shapes({NP}.shape(t), grid)).ravel()[k]"]


def branches(nest: WriteNest) -> bool:
    """Whether the batched code computes branches the loop may skip (picks, folds)."""
    return nest.kind == "fold" or any(isinstance(n, ast.Name) and n.id == PICK
                                      for s in nest.stmts for n in ast.walk(s))


def _pick_rows(g: int) -> list[str]:
    """``_tfperf_pick(conditions, values)``: an if/elif/else chain over the grid, each
    element the first true condition's value (the last value where none is), as the loop
    took one branch per iteration. Runs the loop instead where a condition is not one truth
    value per element (the loop's ``if`` on an array raises), where branches give values of
    other dtypes (the loop keeps each iteration's own; one array cannot), or where an
    element takes a path that leaves the name unbound (it would read the last iteration's)."""
    return [
        f"def {PICK}(conds, values):",
        f"    cs = [{NP}.asarray(c) for c in conds]",
        f"    if any(c.ndim > {g} for c in cs):",
        f"        raise {LOOP}('tfperf: a branch on a per-iteration array')",
        "    given = [v for v in values if v is not None]",
        f"    typed = [v for v in given if isinstance(v, ({NP}.ndarray, {NP}.generic))]",
        f"    if typed and any(v.dtype != {NP}.result_type(*given) for v in typed):",
        f"        raise {LOOP}('tfperf: branches that give other dtypes')",
        "    cs = [c if c.dtype == bool else c.astype(bool) for c in cs]",
        "    if any(v is None for v in values):  # no element may take an unbinding path",
        f"        seen = {NP}.zeros((), bool)",
        "        for c, v in zip(cs, values):",
        f"            if v is None and {NP}.any(c & ~seen):",
        f"                raise {LOOP}('tfperf: a branch leaves a name unbound')",
        "            seen = seen | c",
        f"        if values[-1] is None and not {NP}.all(seen):",
        f"            raise {LOOP}('tfperf: a branch leaves a name unbound')",
        f"    nd = max([{NP}.ndim(v) for v in given] + [c.ndim for c in cs])",
        "    def lift(v):  # a per-iteration value's own axes after the grid's",
        f"        if not isinstance(v, ({NP}.ndarray, {NP}.generic)) or not {g} <= v.ndim < nd:",
        "            return v  # a Python scalar stays weak (uint8 and 0 stay uint8)",
        f"        return v.reshape(v.shape[:{g}] + (1,) * (nd - v.ndim) + v.shape[{g}:])",
        "    out = values[-1] if values[-1] is not None else given[0]",
        "    for c, v in reversed(list(zip(cs, values))):",
        "        if v is not None:",
        f"            out = {NP}.where(lift(c), lift(v), lift(out))",
        "    return out"]


def _unswitched_text(text: str, name: str) -> str | None:
    """The function's outermost loops that hold a branch on a value they never change, each
    replaced by the chain of its copies (:mod:`tfperf.analysis.unswitch`); None if none."""
    fn = _fn(text, name)
    loops = [n for n in ast.walk(fn) if isinstance(n, (ast.For, ast.While))]
    edits = [(loop, new) for loop in loops
             if not any(o is not loop and is_within(loop, o) for o in loops)
             and (new := unswitched(loop)) is not None]
    if not edits:
        return None
    lines = text.splitlines(keepends=True)
    for loop, new in sorted(edits, key=lambda e: e[0].lineno, reverse=True):
        row = lines[loop.lineno - 1]
        pad = row[:len(row) - len(row.lstrip())]
        if row[len(pad):len(pad) + len(loop.__class__.__name__)].lower() != \
                loop.__class__.__name__.lower():
            return None  # the loop shares its line with another statement
        lines[loop.lineno - 1:loop.end_lineno] = [textwrap.indent(ast.unparse(new), pad) + "\n"]
    return "".join(lines)


def rewrite(text: str, name: str) -> str:
    tree = parse(text)
    with imported_from(tree, find_function(tree, name)):
        return _rewrite(text, name)


def _rewrite(text: str, name: str) -> str:
    found, why = nests(text, name)
    other = _unswitched_text(text, name)
    if other is not None:  # one copy of the loop per branch: more nests, or the same ones
        more, why_more = nests(other, name)
        if len(more) > len(found):
            text, found, why = other, more, why_more
    if not found:
        raise SourceEditError("no loop writing into an array element by element"
                              + (f" ({why[0]})" if why else ""))
    lines = text.splitlines(keepends=True)
    mark = token()  # the search that measures this rewrite, if any
    for nest in reversed(found):  # bottom up: line numbers above hold
        row = lines[nest.outer.lineno - 1]
        pad = row[:len(row) - len(row.lstrip())]
        loop = lines[nest.outer.lineno - 1:nest.outer.end_lineno]
        inner = pad + "    "
        # every branch is computed on every element: a division the loop's branch skipped
        # (x / 0 where x == 0 picks another) warns here and is not picked
        quiet = [inner + "with __import__('numpy').errstate(all='ignore'):\n"] \
            if branches(nest) else []
        inner += "    " if quiet else ""
        lines[nest.outer.lineno - 1:nest.outer.end_lineno] = [
            pad + "try:\n", *quiet,
            *(inner + r + "\n" for s in batched(nest) for r in s.splitlines()),
            # a guard, or an error of the batched form the loop may not make (a branch the
            # loop skipped, indexing out of range: NumPy checks positions before it writes),
            # runs the loop: the user's answer or the user's own error, never a new one
            pad + f"except {CAUGHT}:\n",
            *([pad + f"    if __import__('os').environ.get('{STRICT}') == '{mark}':  # tune "
               "measuring this rewrite\n", pad + "        raise\n"] if mark else []),
            *("    " + r if r.strip() else r for r in loop)]
    out = "".join(lines)
    parse(out)
    return out


class NumpyWrites(RewriteLever):
    name, slot, stage, traces = "array writes→NumPy on the grid", "vectorize", 20, False
    description = ("loops that write into an array (out[i, j] = f(i, j), hist[k] += 1) run "
                   "once on the whole index grid in NumPy, in place (np.add.at where an "
                   "index repeats)")
    rejections = ("the body does not broadcast (raises: a per-iteration shape, a Python "
                  "call on a scalar)", "disagrees (the body is not element-wise)")

    edit = staticmethod(rewrite)


def levers(ctx: LeverContext) -> list[Lever]:
    return [NumpyWrites()]
