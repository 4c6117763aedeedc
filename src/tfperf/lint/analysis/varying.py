"""Values that vary from one iteration (or call) to the next: Python numbers a loop changes
(a retrace per value when passed to a ``tf.function``), names a loop rebinds, and the data a
loop picks per iteration (what a batched call could take at once)."""

from __future__ import annotations

import ast
from typing import Any

from tfperf.lint.analysis.loops import guarded, loop_targets
from tfperf.lint.semantic import Context

# A literal loop over this many values or fewer is "a handful": a few traces, on purpose.
HANDFUL = 4


def literal_count(ctx: Context, it: ast.AST) -> int | None:
    """How many values a literal iterable yields: ``range(3)``, ``[0.1, 0.01]``; else None."""
    if type(it) in (ast.List, ast.Tuple, ast.Set):
        return len(it.elts)
    if ctx.is_builtin_call(it, "range") and it.args and not it.keywords \
            and all(type(a) is ast.Constant and type(a.value) is int for a in it.args):
        try:
            return len(range(*[a.value for a in it.args]))
        except (TypeError, ValueError):
            return None
    return None


# Calls that hand their iterable's values on unchanged: builtins, and progress bars
# (``tqdm(range(n))``, ``progress(range(n))``), named by their last part.
_PASS_THROUGH_BUILTINS = ("list", "tuple", "reversed", "sorted", "iter")
_PROGRESS_BARS = ("tqdm", "tqdm_notebook", "progress", "progressbar", "progress_bar", "track",
                  "pbar", "bar")


def _passed_through(ctx: Context, it: ast.AST) -> ast.AST:
    """``it`` without the wrappers that yield its values unchanged: ``tqdm(range(n))``,
    ``reversed(range(n))``, ``progress(range(n), desc=...)`` → ``range(n)``."""
    for _ in range(3):
        if type(it) is not ast.Call or len(it.args) != 1:
            return it
        if not (ctx.is_builtin_call(it, *_PASS_THROUGH_BUILTINS)
                or _callee_name(it) in _PROGRESS_BARS):
            return it
        it = it.args[0]
    return it


def _ranges(ctx: Context, it: ast.AST) -> bool:
    """``range(...)``, or tqdm's ``trange(...)`` (a range with a progress bar)."""
    return ctx.is_builtin_call(it, "range") or (
        type(it) is ast.Call and _callee_name(it) in ("trange", "tnrange"))


def _callee_name(call: ast.Call) -> str:
    f = call.func
    return f.attr if type(f) is ast.Attribute else getattr(f, "id", "")


def _python_number_source(ctx: Context, it: ast.AST, target: ast.AST, name: str) -> bool:
    """Whether ``for <target> in <it>`` binds ``name`` to a Python number per iteration:
    ``range(...)``; the index of ``enumerate(...)``; a literal list of numbers."""
    it = _passed_through(ctx, it)
    count = literal_count(ctx, it)
    if count is not None and count <= HANDFUL:
        return False
    if type(target) is ast.Name:
        if _ranges(ctx, it):
            return True
        if type(it) in (ast.List, ast.Tuple):
            return all(type(e) is ast.Constant and type(e.value) in (int, float)
                       for e in it.elts)
        return False
    if type(target) is ast.Tuple and len(target.elts) == 2 \
            and ctx.is_builtin_call(it, "enumerate"):
        first = target.elts[0]
        return type(first) is ast.Name and first.id == name
    return False


def _counter_loop(ctx: Context, name: ast.Name, loops: list[ast.AST]) -> ast.AST | None:
    """``n = 0`` … ``n += 1`` inside one of ``loops``: a Python int counter; the loop.
    Every store of the name in its scope must be one of those two forms."""
    scope = ctx.scope_of(name)
    bumped_in: ast.AST | None = None
    seen_int_init = False
    for node in _stores(ctx).get((id(scope), name.id), ()):
        stmt = ctx.parent(node)
        if type(stmt) is ast.AugAssign:
            if not (type(stmt.op) in (ast.Add, ast.Sub) and _int_const(stmt.value)):
                return None
            for loop in ctx.enclosing_loops(stmt):
                if loop in loops:
                    bumped_in = loop
                    break
        elif type(stmt) is ast.Assign and node in stmt.targets and _int_const(stmt.value):
            seen_int_init = True
        else:
            return None  # bound some other way: not a plain counter
    return bumped_in if seen_int_init else None


# Operators a Python number recurrence updates with (``lr *= 0.99``, ``t += 0.5``).
_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Pow)


def _recurrence_loop(ctx: Context, name: ast.Name, loops: list[ast.AST]) -> ast.AST | None:
    """A Python number carried by a loop: ``eps = 1.0`` before it, then ``eps = max(0.01,
    eps * 0.995)`` or ``lr *= 0.99`` in the innermost of ``loops``, not under an ``if``
    there (a decay schedule kept in Python): a new value each iteration. Every store of
    the name in its scope must be a numeric constant or such an update of the name
    itself; the loop.
    A literal loop over a handful of values is a few traces, on purpose: not reported."""
    scope = ctx.scope_of(name)
    updated_in: ast.AST | None = None
    seen_init = False
    for node in _stores(ctx).get((id(scope), name.id), ()):
        stmt = ctx.parent(node)
        if type(stmt) is ast.AugAssign:
            if not (type(stmt.op) in _ARITHMETIC and _number_const(stmt.value)):
                return None
        elif type(stmt) is ast.Assign and stmt.targets == [node]:
            if _number_const(stmt.value):
                seen_init = True
                continue
            if not _updates_itself(ctx, stmt.value, name.id):
                return None
        else:
            return None  # bound some other way (a loop target, a tuple, a call's result)
        # Review 39 (3): updated in the innermost loop that runs the call, not under an
        # `if` there: an update once an epoch (an outer loop) or at a few steps (piecewise
        # decay) is a handful of traces, not one per call.
        if loops[0] not in ctx.enclosing_loops(stmt) or guarded(ctx, stmt, loops[0]):
            return None
        updated_in = updated_in or loops[0]
    if updated_in is None or not seen_init:
        return None
    if type(updated_in) in (ast.For, ast.AsyncFor):
        count = literal_count(ctx, updated_in.iter)
        if count is not None and count <= HANDFUL:
            return None
    return updated_in


def _updates_itself(ctx: Context, expr: ast.AST, name: str, depth: int = 0) -> bool:
    """``expr`` is a number made of ``name`` and numeric constants only (``eps * 0.995``,
    ``max(0.01, eps * 0.99)``, ``round(t + 0.1, 3)``), and ``name`` is in it."""
    if depth > 6:
        return False
    t = type(expr)
    if t is ast.Name:
        return expr.id == name
    if t is ast.BinOp:
        parts = [expr.left, expr.right]
    elif t is ast.UnaryOp:
        parts = [expr.operand]
    elif t is ast.Call and not expr.keywords and expr.args and (
            ctx.is_builtin_call(expr, "int", "float", *_NUMBER_FUNCTIONS)
            or (ctx.qualname(expr.func) or "").startswith("math.")):
        parts = list(expr.args)
    else:
        return False
    if not all(_number_const(p) or _updates_itself(ctx, p, name, depth + 1) for p in parts):
        return False
    return any(not _number_const(p) for p in parts)


def _stores(ctx: Context) -> dict[tuple[int, str], list[ast.Name]]:
    """(id of scope, name) → the names stored in that scope (not in nested ones), in
    ``ast.walk`` order: built once per module from the engine's walk, instead of walking a
    function per call argument."""
    def compute() -> dict[tuple[int, str], list[ast.Name]]:
        table: dict[tuple[int, str], list[ast.Name]] = {}
        Store = ast.Store
        for n in ctx.nodes_of(ast.Name):
            if type(n.ctx) is Store:
                table.setdefault((id(ctx.scope_of(n)), n.id), []).append(n)  # type: ignore[arg-type]
        return table
    return ctx.cached("stores_by_scope", compute)


def _int_const(node: ast.AST) -> bool:
    return type(node) is ast.Constant and type(node.value) is int


def varying_scalar(ctx: Context, expr: ast.AST, at: ast.AST,
                   _depth: int = 0) -> ast.AST | None:
    """If ``expr`` (an argument of the call ``at``) is a Python number that changes on each
    iteration of a loop running ``at``, that loop; else ``None``. Numbers built from such a
    value with constants (``i + 1``, ``float(i)``, ``step * 0.1``, ``min(1.0, i / 20)``,
    ``math.exp(-i)``) vary too, also through a name the loop assigns them to."""
    t = type(expr)
    if t is ast.Name:
        loops = ctx.enclosing_loops(at)
        if not loops:
            return None
        b = ctx.binding(expr)  # type: ignore[arg-type]
        if b is None:
            return None
        if b.kind == "for":
            loop = b.value
            if loop in loops and _python_number_source(ctx, loop.iter, loop.target, expr.id):
                return loop
            if type(loop) is ast.comprehension:
                comp = ctx.parent(loop)
                if comp in loops and _python_number_source(ctx, loop.iter, loop.target, expr.id):
                    return comp
            return None
        if b.kind in ("assign", "augassign"):
            counter = _counter_loop(ctx, expr, loops)  # type: ignore[arg-type]
            if counter is None:
                counter = _recurrence_loop(ctx, expr, loops)  # type: ignore[arg-type]
            if counter is not None or b.kind != "assign" or _depth > 4:
                return counter
            # `warmup = min(1.0, (step + 1) / 20)` in the loop: a value through a name.
            value = b.value
            if value is expr or not any(_inside(ctx, value, loop) for loop in loops):
                return None
            return varying_scalar(ctx, value, at, _depth + 1)
        return None
    if t is ast.BinOp:
        return _all_numbers(ctx, [expr.left, expr.right], at, _depth)
    if t is ast.UnaryOp:
        return varying_scalar(ctx, expr.operand, at, _depth)
    if t is ast.Call and not expr.keywords:
        if ctx.is_builtin_call(expr, "int", "float") and len(expr.args) == 1:
            return varying_scalar(ctx, expr.args[0], at, _depth)
        if expr.args and (ctx.is_builtin_call(expr, *_NUMBER_FUNCTIONS)
                          or (ctx.qualname(expr.func) or "").startswith("math.")):
            return _all_numbers(ctx, expr.args, at, _depth)
    return None


# Builtins that make a Python number of Python numbers.
_NUMBER_FUNCTIONS = ("min", "max", "abs", "round", "pow")


def _all_numbers(ctx: Context, parts: list[ast.expr], at: ast.AST,
                 depth: int) -> ast.AST | None:
    """The loop some of ``parts`` vary with, when every part is a Python number: a
    numeric constant or a value varying per iteration."""
    found: ast.AST | None = None
    for part in parts:
        if _number_const(part):
            continue
        loop = varying_scalar(ctx, part, at, depth)
        if loop is None:
            return None
        found = found or loop
    return found


def _number_const(node: ast.AST) -> bool:
    return type(node) is ast.Constant and type(node.value) in (int, float)


def varies_in(ctx: Context, expr: ast.AST, loops: list[ast.AST]) -> bool:
    """Some name in ``expr`` is rebound by one of ``loops`` (its target, or assigned in its
    body): the value may differ from one iteration to the next."""
    names = {n.id for n in ast.walk(expr) if type(n) is ast.Name}
    if not names:
        return False
    for loop in loops:
        targets: list[ast.AST] = []
        if type(loop) in (ast.For, ast.AsyncFor):
            targets.append(loop.target)
            body: list[ast.AST] = list(loop.body)
        elif type(loop) is ast.While:
            body = list(loop.body)
        else:
            targets.extend(g.target for g in loop.generators)
            body = []
        for stmt in body:
            for n in ast.walk(stmt):
                if type(n) in (ast.Assign, ast.AugAssign, ast.AnnAssign):
                    ts = n.targets if type(n) is ast.Assign else [n.target]
                    targets.extend(ts)
        for tgt in targets:
            if any(type(n) is ast.Name and n.id in names for n in ast.walk(tgt)):
                return True
    return False


def _inside(ctx: Context, node: ast.AST, container: ast.AST) -> bool:
    return any(p is container for p in ctx.ancestors(node))


def per_iteration_data(ctx: Context, expr: ast.AST, loop: ast.AST, *,
                       bare_target: bool = True, _depth: int = 0) -> bool:
    """``expr`` holds data the loop picks per iteration: a loop variable (when
    ``bare_target``), something indexed with one (``x[i]``, ``x[:, i]``), or values derived
    from those by indexing, arithmetic, casts and names assigned inside the loop. A call of
    anything else (``load_image(path)``) is new data, not the loop's."""
    if _depth > 8:
        return False
    names = loop_targets(loop)
    t = type(expr)
    if t is ast.Name:
        if expr.id in names:
            return bare_target
        b = ctx.binding(expr)  # type: ignore[arg-type]
        if b is not None and b.kind == "assign" and b.value is not None \
                and _inside(ctx, b.value, loop) and b.value is not expr:
            return per_iteration_data(ctx, b.value, loop, bare_target=bare_target,
                                      _depth=_depth + 1)
        return False
    if t is ast.Subscript:
        if any(type(n) is ast.Name and n.id in names for n in ast.walk(expr.slice)):
            return True
        return per_iteration_data(ctx, expr.value, loop, bare_target=bare_target,
                                  _depth=_depth + 1)
    if t is ast.Attribute:
        return per_iteration_data(ctx, expr.value, loop, bare_target=bare_target,
                                  _depth=_depth + 1)
    if t is ast.BinOp:
        return any(per_iteration_data(ctx, e, loop, bare_target=bare_target, _depth=_depth + 1)
                   for e in (expr.left, expr.right))
    if t is ast.UnaryOp:
        return per_iteration_data(ctx, expr.operand, loop, bare_target=bare_target,
                                  _depth=_depth + 1)
    if t is ast.Call:
        first = preserved_operand(ctx, expr)  # type: ignore[arg-type]
        if first is not None:
            return per_iteration_data(ctx, first, loop, bare_target=bare_target,
                                      _depth=_depth + 1)
    return False


# Calls that reshape, cast or re-wrap their first argument without bringing new data.
_PRESERVING_METHODS = frozenset({"astype", "reshape", "squeeze", "flatten", "ravel", "copy"})


_PRESERVING_CALLS = frozenset({
    "tensorflow.cast", "tensorflow.convert_to_tensor", "tensorflow.constant",
    "tensorflow.expand_dims", "tensorflow.reshape", "tensorflow.squeeze",
    "tensorflow.image.convert_image_dtype", "numpy.array", "numpy.asarray",
    "numpy.expand_dims", "numpy.reshape", "numpy.float32", "numpy.float64", "numpy.squeeze",
    "keras.ops.expand_dims", "keras.ops.reshape", "keras.ops.cast",
    "keras.ops.convert_to_tensor",
})


def preserved_operand(ctx: Context, call: ast.Call) -> ast.expr | None:
    """For a call that only reshapes, casts or re-wraps a value (``x.astype(...)``,
    ``tf.cast(x, ...)``, ``np.expand_dims(x, 0)``), that value ``x``; else ``None``."""
    func = call.func
    if type(func) is ast.Attribute and func.attr in _PRESERVING_METHODS \
            and ctx.qualname(func) is None:
        return func.value
    if call.args and ctx.qualname(func) in _PRESERVING_CALLS:
        return call.args[0]
    return None


def python_int(ctx: Context, expr: ast.AST, _seen: frozenset[str] = frozenset()) -> bool:
    """Review 39 (10): ``expr`` is surely a Python ``int`` (a ``range`` index, a counter,
    integer arithmetic of them), so ``tf.constant(expr)`` is an ``int32`` tensor. A Python
    float becomes ``float32``, whatever the dtype of the tensors it meets (float64 inputs
    then fail): where this is False the dtype a tensor should take is unknown here."""
    t = type(expr)
    if t is ast.Constant:
        return type(expr.value) is int
    if t is ast.BinOp:
        return type(expr.op) is not ast.Div \
            and python_int(ctx, expr.left, _seen) and python_int(ctx, expr.right, _seen)
    if t is ast.UnaryOp:
        return python_int(ctx, expr.operand, _seen)
    if t is ast.Call:
        if ctx.is_builtin_call(expr, "int", "len"):
            return True
        return bool(expr.args) and not expr.keywords \
            and ctx.is_builtin_call(expr, "min", "max", "abs") \
            and all(python_int(ctx, a, _seen) for a in expr.args)
    if t is not ast.Name:
        return False
    name: str = expr.id
    if name in _seen:
        return True  # `n = n + 1`: int when every other store is
    seen = _seen | {name}
    stores = _stores(ctx).get((id(ctx.scope_of(expr)), name), [])
    if not stores:
        return False
    for node in stores:
        stmt: Any = ctx.parent(node)
        if type(stmt) is ast.Tuple:  # `for i, x in enumerate(xs)`: the index
            loop: Any = ctx.parent(stmt)
            ok = type(loop) in (ast.For, ast.AsyncFor, ast.comprehension) \
                and loop.target is stmt and stmt.elts[0] is node \
                and ctx.is_builtin_call(_passed_through(ctx, loop.iter), "enumerate")
        elif type(stmt) in (ast.For, ast.AsyncFor, ast.comprehension):
            # ``range(n)``, through ``tqdm``/``reversed``/... wrappers, or ``trange(n)``
            ok = stmt.target is node and _ranges(ctx, _passed_through(ctx, stmt.iter))
        elif type(stmt) is ast.AugAssign:
            ok = type(stmt.op) is not ast.Div and python_int(ctx, stmt.value, seen)
        elif type(stmt) is ast.Assign and stmt.targets == [node]:
            ok = python_int(ctx, stmt.value, seen)
        else:
            ok = False
        if not ok:
            return False
    return True


# Calls that turn a whole Python list into one array or tensor (its length the list's).
_STACKERS = frozenset({
    "numpy.vstack", "numpy.hstack", "numpy.stack", "numpy.array", "numpy.asarray",
    "numpy.concatenate", "tensorflow.stack", "tensorflow.concat", "tensorflow.convert_to_tensor",
    "tensorflow.constant"})


def _list_key(expr: ast.AST) -> str | None:
    """``self.memory.ep_obs`` → ep_obs, ``rewards`` → rewards."""
    if type(expr) is ast.Attribute:
        return expr.attr
    if type(expr) is ast.Name:
        return expr.id
    return None


def _episode_lists(ctx: Context) -> frozenset[str]:
    """The lists the module both grows (``x.append(...)``) and empties (``x = []``,
    ``x.clear()``, ``del x[:]``): an episode's transitions, as long as the episode was."""
    def compute() -> frozenset[str]:
        grown: set[str] = set()
        emptied: set[str] = set()
        for call in ctx.calls:
            f = call.func
            if type(f) is ast.Attribute and (k := _list_key(f.value)) is not None:
                if f.attr in ("append", "extend"):
                    grown.add(k)
                elif f.attr == "clear" and not call.args:
                    emptied.add(k)
        for node in ctx.nodes_of(ast.Assign):
            assert isinstance(node, ast.Assign)
            value = node.value
            for t in node.targets:
                pairs = list(zip(t.elts, value.elts, strict=True)) if type(t) is ast.Tuple \
                    and type(value) is ast.Tuple and len(t.elts) == len(value.elts) \
                    else [(t, value)]
                emptied.update(k for tt, v in pairs if type(v) is ast.List and not v.elts
                               and (k := _list_key(tt)) is not None)
        return frozenset(grown & emptied)
    return ctx.cached("varying.episode_lists", compute)


def episode_list_input(ctx: Context, fn: ast.AST) -> str | None:
    """The source of a call in ``fn`` that stacks a whole episode list into one array
    (``np.vstack(self.memory.ep_obs)``): each call of ``fn`` then gets inputs as long as that
    episode, a length that changes from call to call. ``None``: no such call."""
    for n in ast.walk(fn):
        if type(n) is not ast.Call or not n.args:
            continue
        if ctx.call_qualname(n) not in _STACKERS:
            continue
        arg = n.args[0]
        if type(arg) not in (ast.Name, ast.Attribute):
            continue  # a slice, a sample of a fixed size, a comprehension over a batch
        k = _list_key(arg)
        if k is not None and k in _episode_lists(ctx):
            return ctx.source_of(n)
    return None
