"""Data flow through a loop body: which names carry a value from one iteration to the next,
which of those are plain reductions (vectorisable), and which values depend on a recurrence.

Vectorising a loop (one batched op instead of one op per element) is possible only when the
iterations are independent, or combine through an associative reduction (a running sum, a
running maximum, a list of pieces). A hand-unrolled RNN (``h = cell(x[t], h)``), layers
feeding each other (``x = layer(x)``), a dense block (``x = concat([x, conv(x)])``) and
autoregressive decoding (``tokens = concat([tokens, step(tokens)])``) each read, in one
iteration, what the previous iteration computed: a *recurrence*. Rules that suggest
vectorising stay quiet on values that depend on one.

The model is simple and conservative: statements run in order; a name bound in a branch or a
nested loop is not surely bound for the reads after it; a read of a name before it is surely
bound in the iteration sees the previous iteration's value (when the loop binds the name at
all). Reads of a tensor's shape (``x.shape``, ``tf.shape(x)``, ``len(x)``, ``x is None``)
carry no data.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from tfperf.lint.semantic import Context

# `acc = acc OP term` / `acc OP= term`: associative, so the loop is a reduction.
_REDUCING_OPS = (ast.Add, ast.Sub, ast.Mult, ast.BitOr, ast.BitAnd)
# `acc = f(acc, term)` / `f([acc, term])` with f one of these: a reduction too.
REDUCING_CALLS = frozenset({
    "tensorflow.maximum", "tensorflow.minimum", "tensorflow.add", "tensorflow.multiply",
    "tensorflow.math.maximum", "tensorflow.math.minimum", "tensorflow.math.add",
    "tensorflow.math.multiply", "tensorflow.logical_or", "tensorflow.logical_and",
    "tensorflow.math.logical_or", "tensorflow.math.logical_and", "tensorflow.add_n",
    "tensorflow.math.add_n", "tensorflow.concat", "tensorflow.compat.v1.concat",
    "keras.ops.concatenate", "keras.ops.add", "keras.ops.maximum", "keras.ops.minimum",
})
_SHAPE_CALLS = frozenset({"tensorflow.shape", "keras.ops.shape", "tensorflow.rank",
                          "tensorflow.size"})


@dataclass(frozen=True)
class LoopFlow:
    """``carried``: names an iteration reads before binding them, that the loop binds;
    ``reductions``: carried names only ever updated as a reduction of themselves;
    ``recurrent``: the other carried names (a recurrence: not vectorisable as is);
    ``taint``: per name bound in the body, the carried names its value depends on."""

    carried: frozenset[str]
    reductions: frozenset[str]
    recurrent: frozenset[str]
    taint: dict[str, frozenset[str]]

    def depends_on_recurrence(self, ctx: Context, expr: ast.AST) -> bool:
        """Whether ``expr`` (in the loop body) reads, directly or through names bound in the
        body, a value the previous iteration computed and that is not a plain reduction."""
        for name in data_reads(ctx, expr):
            if name in self.recurrent or self.taint.get(name, frozenset()) & self.recurrent:
                return True
        return False


def _stored(target: ast.AST) -> list[str]:
    return [n.id for n in ast.walk(target) if type(n) is ast.Name and type(n.ctx) is ast.Store]


def _shape_read(ctx: Context, name: ast.AST) -> bool:
    """``x.shape``, ``x.get_shape()``, ``x.dtype``, ``tf.shape(x)``, ``len(x)``, ``x is
    None``: metadata, not the value."""
    p = ctx.parent(name)
    if type(p) is ast.Attribute and p.attr in ("shape", "get_shape", "dtype", "ndim"):
        return True
    if type(p) is ast.Call and name in p.args and (
            ctx.is_builtin(p.func, "len") or ctx.qualname(p.func) in _SHAPE_CALLS):
        return True
    return type(p) is ast.Compare and all(type(op) in (ast.Is, ast.IsNot) for op in p.ops)


def data_reads(ctx: Context, node: ast.AST) -> set[str]:
    """Names whose value ``node`` reads (metadata reads such as ``x.shape`` left out);
    nested functions and lambdas are not run here."""
    out: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        t = type(n)
        if t is ast.Name:
            if type(n.ctx) is ast.Load and not _shape_read(ctx, n):
                out.add(n.id)
            continue
        if t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef):
            continue
        stack.extend(ast.iter_child_nodes(n))
    return out


def _simple_steps(stmts: list[ast.stmt], sure: bool) -> list[tuple[ast.AST, set[str], bool]]:
    """The body as flat (node read, names it binds, in the block's main line) steps in
    execution order: compound statements contribute their header, then their blocks. What
    is surely bound where is :func:`_exposed_reads`' job; these steps feed the
    flow-insensitive questions (taint, reduction updates)."""
    out: list[tuple[ast.AST, set[str], bool]] = []
    for s in stmts:
        t = type(s)
        if t is ast.If or t is ast.While:
            out.append((s.test, set(), sure))
            out += _simple_steps(s.body, False) + _simple_steps(s.orelse, False)
        elif t is ast.For or t is ast.AsyncFor:
            # The target is bound before every read in the nested body (reading it after a
            # loop that ran zero times is rare enough to ignore).
            out.append((s.iter, set(_stored(s.target)), True))
            out += _simple_steps(s.body, False) + _simple_steps(s.orelse, False)
        elif t is ast.With or t is ast.AsyncWith:
            for item in s.items:
                bound = set(_stored(item.optional_vars)) if item.optional_vars else set()
                out.append((item.context_expr, bound, sure))
            out += _simple_steps(s.body, sure)
        elif t is ast.Try or getattr(ast, "TryStar", None) is t:
            out += _simple_steps(s.body, False)
            for h in s.handlers:
                out += _simple_steps(h.body, False)
            out += _simple_steps(s.orelse, False) + _simple_steps(s.finalbody, sure)
        elif t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            out.append((ast.Pass(), {s.name}, sure))
        elif t is ast.Assign:
            bound = {n for tg in s.targets for n in _stored(tg)}
            out.append((s, bound, sure))
        elif t is ast.AnnAssign or t is ast.AugAssign:
            out.append((s, set(_stored(s.target)), sure))
        else:
            out.append((s, {n.id for n in ast.walk(s)  # walrus
                            if type(n) is ast.Name and type(n.ctx) is ast.Store}, False))
    return out


_LEAVES = (ast.Raise, ast.Return, ast.Continue, ast.Break)


def _exposed_reads(ctx: Context, stmts: list[ast.stmt], sure: set[str],
                   exposed: set[str]) -> set[str] | None:
    """Walk a block in order: add to ``exposed`` the names read before this iteration surely
    bound them; return the names surely bound after the block (``None``: it always leaves,
    by ``raise``/``return``/``continue``/``break``)."""
    sure = set(sure)

    def read(node: ast.AST | None) -> None:
        if node is not None:
            exposed.update(r for r in data_reads(ctx, node) if r not in sure)

    for s in stmts:
        t = type(s)
        if t is ast.If:
            read(s.test)
            a = _exposed_reads(ctx, s.body, sure, exposed)
            b = _exposed_reads(ctx, s.orelse, sure, exposed)
            if a is None and b is None:
                return None
            sure = a if b is None else b if a is None else a & b  # type: ignore[assignment]
        elif t in (ast.For, ast.AsyncFor, ast.While):
            read(getattr(s, "iter", None) or getattr(s, "test", None))
            inner = sure | (set(_stored(s.target)) if t is not ast.While else set())
            _exposed_reads(ctx, s.body, inner, exposed)
            _exposed_reads(ctx, s.orelse, sure, exposed)
        elif t in (ast.With, ast.AsyncWith):
            for item in s.items:
                read(item.context_expr)
                if item.optional_vars is not None:
                    sure.update(_stored(item.optional_vars))
            after = _exposed_reads(ctx, s.body, sure, exposed)
            if after is None:
                return None
            sure = after
        elif t is ast.Try or getattr(ast, "TryStar", None) is t:
            _exposed_reads(ctx, s.body + s.orelse, sure, exposed)
            for h in s.handlers:
                _exposed_reads(ctx, h.body, sure, exposed)
            after = _exposed_reads(ctx, s.finalbody, sure, exposed)
            if after is None:
                return None
            sure = after
        elif t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            sure.add(s.name)
        else:
            exposed.update(r for r in _reads_of_step(ctx, s) if r not in sure)
            if t in _LEAVES:
                return None
            if t is ast.Assign:
                sure.update(n for tg in s.targets for n in _stored(tg))
            elif t is ast.AugAssign or (t is ast.AnnAssign and s.value is not None):
                sure.update(_stored(s.target))
    return sure


def _reads_of_step(ctx: Context, node: ast.AST) -> set[str]:
    if type(node) is ast.Assign:
        return data_reads(ctx, node.value)
    if type(node) is ast.AnnAssign:
        return data_reads(ctx, node.value) if node.value is not None else set()
    if type(node) is ast.AugAssign:
        return data_reads(ctx, node.value) | {n.id for n in ast.walk(node.target)
                                              if type(n) is ast.Name}
    return data_reads(ctx, node)


def _reduction_update(ctx: Context, step: ast.AST, name: str) -> bool:
    """``step`` updates ``name`` as a reduction of itself: ``name = name + t``, ``name += t``,
    ``name = tf.maximum(name, t)``, ``name = tf.concat([name, t], 0)``, ``name = t if name
    is None else ...`` of one of these; ``t`` does not read ``name``."""
    if type(step) is ast.AugAssign:
        return type(step.op) in _REDUCING_OPS and name not in data_reads(ctx, step.value)
    if type(step) is not ast.Assign or len(step.targets) != 1 \
            or type(step.targets[0]) is not ast.Name:
        return False
    value = step.value
    if type(value) is ast.IfExp:
        value = value.orelse if name not in data_reads(ctx, value.body) else value.body
    if type(value) is ast.BinOp and type(value.op) in _REDUCING_OPS:
        sides = [value.left, value.right]
    elif type(value) is ast.Call and ctx.qualname(value.func) in REDUCING_CALLS:
        sides = list(value.args[:2])
        if sides and type(sides[0]) in (ast.List, ast.Tuple):
            sides = list(sides[0].elts)
    else:
        return False
    own = [s for s in sides if type(s) is ast.Name and s.id == name]
    others = [s for s in sides if s not in own]
    return len(own) == 1 and not any(name in data_reads(ctx, s) for s in others)


def is_reduction_update(ctx: Context, step: ast.AST, name: str) -> bool:
    """``step`` updates ``name`` as an associative reduction of itself (see above)."""
    return _reduction_update(ctx, step, name)


def loop_flow(ctx: Context, loop: ast.AST) -> LoopFlow:
    """The data flow of ``loop``'s body (a ``for``/``while`` statement); comprehensions
    carry nothing. Memoised per module."""
    cache: dict[int, LoopFlow] = ctx.cached("loop_flow", dict)
    key = id(loop)
    if key not in cache:
        cache[key] = _loop_flow(ctx, loop)
    return cache[key]


_EMPTY = LoopFlow(frozenset(), frozenset(), frozenset(), {})


def _loop_flow(ctx: Context, loop: ast.AST) -> LoopFlow:
    t = type(loop)
    if t in (ast.For, ast.AsyncFor):
        sure = set(_stored(loop.target))
        steps = _simple_steps(loop.body, True)
    elif t is ast.While:
        sure = set()
        steps = [(loop.test, set(), True), *_simple_steps(loop.body, True)]
    else:
        return _EMPTY
    bound_in_loop = {n for _, bound, _ in steps for n in bound}
    if not bound_in_loop:
        return _EMPTY
    reads_per_step = [_reads_of_step(ctx, node) for node, _, _ in steps]
    exposed: set[str] = set()
    if t is ast.While:
        exposed |= data_reads(ctx, loop.test)
    _exposed_reads(ctx, loop.body, sure, exposed)
    carried = exposed & bound_in_loop
    # Taint: which carried names each bound name's value depends on (flow-insensitive union).
    taint: dict[str, set[str]] = {}
    for _ in range(3):  # a few rounds reach the fixed point on real bodies
        changed = False
        for (_, bound, _), reads in zip(steps, reads_per_step, strict=True):
            src: set[str] = set()
            for r in reads:
                src |= taint.get(r, set())
                if r in carried:
                    src.add(r)
            for b in bound:
                cur = taint.setdefault(b, set())
                if not src <= cur:
                    cur |= src
                    changed = True
        if not changed:
            break
    reductions = set()
    for name in carried:
        updates = [node for node, bound, _ in steps if name in bound]
        if not updates or not all(_reduction_update(ctx, u, name) for u in updates):
            continue
        # The running value is read nowhere else in the body (a reduction only feeds itself).
        if any(name in reads for (node, _, _), reads in zip(steps, reads_per_step, strict=True)
               if node not in updates):
            continue
        reductions.add(name)
    return LoopFlow(frozenset(carried), frozenset(reductions),
                    frozenset(carried - reductions),
                    {k: frozenset(v) for k, v in taint.items()})


def depends_on(ctx: Context, loop: ast.AST, expr: ast.AST, names: set[str]) -> bool:
    """Whether ``expr`` (in ``loop``'s body) reads one of ``names``, directly or through
    names the body binds from them (flow-insensitive: any binding in the body counts)."""
    steps = _simple_steps(list(getattr(loop, "body", [])), True)
    feeds: dict[str, set[str]] = {}
    for node, bound, _ in steps:
        reads = _reads_of_step(ctx, node)
        for b in bound:
            feeds.setdefault(b, set()).update(reads)
    seen: set[str] = set()
    todo = list(data_reads(ctx, expr))
    while todo:
        n = todo.pop()
        if n in names:
            return True
        if n in seen:
            continue
        seen.add(n)
        todo.extend(feeds.get(n, ()))
    return False


def ref_name(node: ast.AST) -> str | None:
    """``x`` → "x", ``self.buf`` → "self.buf"; ``None`` for anything else."""
    if type(node) is ast.Name:
        return node.id
    if type(node) is ast.Attribute:
        base = ref_name(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def _negative_const(node: ast.AST | None) -> bool:
    return type(node) is ast.UnaryOp and type(node.op) is ast.USub \
        and type(node.operand) is ast.Constant


def _tail_read(ctx: Context, node: ast.AST) -> bool:
    """``x[-1]``, ``x[:, -1:]``, ``x[..., -2:]``: a fixed-size piece from the end, which the
    last pieces themselves could give."""
    p = ctx.parent(node)
    if type(p) is not ast.Subscript or p.value is not node:
        return False
    sl = p.slice
    parts = sl.elts if type(sl) is ast.Tuple else [sl]
    for part in parts:
        if _negative_const(part) or (type(part) is ast.Slice and _negative_const(part.lower)
                                     and part.upper is None):
            return True
    return False


def read_elsewhere(ctx: Context, loop: ast.AST, ref: str, stmts: list[ast.AST]) -> bool:
    """Whether the loop's body (or a ``while`` test) reads ``ref`` (a name or ``self.x``)
    outside ``stmts``, metadata reads and fixed-size tails (``x[:, -1:]``) left out: for a
    tensor grown in the loop, whether each iteration consumes what was grown
    (autoregressive decoding that feeds the whole sequence back, dense blocks)."""
    parts: list[ast.AST] = list(getattr(loop, "body", []))
    if type(loop) is ast.While:
        parts.append(loop.test)
    inside = {id(n) for stmt in stmts for n in ast.walk(stmt)}
    for part in parts:
        for n in ast.walk(part):
            t = type(n)
            if (t is ast.Name or t is ast.Attribute) and type(getattr(n, "ctx", None)) is ast.Load \
                    and id(n) not in inside and ref_name(n) == ref \
                    and not _shape_read(ctx, n) and not _tail_read(ctx, n):
                return True
    return False
