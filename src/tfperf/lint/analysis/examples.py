"""One example of a loop's data made into a batch of one (``x[None]``,
``np.expand_dims(x, 0)``, ``X[i:i + 1]``): what a model call or a session run fed one
example per iteration receives."""

from __future__ import annotations

import ast
import re
from typing import Any

from tfperf.lint.analysis.varying import per_iteration_data, preserved_operand
from tfperf.lint.semantic import Context

# Calls that add a leading batch axis of one: `tf.expand_dims(x, 0)`, `np.expand_dims(x, 0)`.
_EXPAND_DIMS = frozenset({"tensorflow.expand_dims", "numpy.expand_dims",
                          "keras.ops.expand_dims"})
_RESHAPES = frozenset({"tensorflow.reshape", "numpy.reshape", "keras.ops.reshape"})
# A vector made a one-row matrix: `np.atleast_2d(params)`.
_AT_LEAST_2D = frozenset({"numpy.atleast_2d"})
_LIST_WRAPPERS = frozenset({"numpy.array", "numpy.asarray", "numpy.stack", "tensorflow.stack",
                            "tensorflow.constant", "tensorflow.convert_to_tensor"})
# Conversions that keep the shape: a batch of one converted is still one
# (`np.expand_dims(s, 0).astype(np.float32)`, `tf.cast(s[None], tf.float32)`).
_SAME_SHAPE = frozenset({"numpy.array", "numpy.asarray", "tensorflow.cast",
                         "tensorflow.convert_to_tensor", "tensorflow.constant"})


def _is_int(node: ast.AST | None, value: int) -> bool:
    return type(node) is ast.Constant and node.value == value


def _leading_one(shape: ast.AST | None) -> bool:
    """A shape starting with 1: ``(1, -1)``, ``[1, 28, 28]``, ``(1, *x.shape)``,
    ``(1,) + x.shape``."""
    if type(shape) is ast.BinOp and type(shape.op) is ast.Add:
        return _leading_one(shape.left)
    return type(shape) in (ast.List, ast.Tuple) and bool(shape.elts) \
        and _is_int(shape.elts[0], 1)


def _new_axis(ctx: Context, node: ast.AST) -> bool:
    return (type(node) is ast.Constant and node.value is None) \
        or ctx.qualname(node) in ("numpy.newaxis", "tensorflow.newaxis")


_SCALING = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv)


def _number(expr: ast.AST) -> bool:
    """A number literal (``255.0``, ``-1``)."""
    if type(expr) is ast.UnaryOp and type(expr.op) is ast.USub:
        expr = expr.operand
    return type(expr) is ast.Constant and type(expr.value) in (int, float)


def batch_of_one(ctx: Context, expr: ast.AST) -> ast.expr | None:
    """If ``expr`` turns one example into a batch of one, the example: ``x[None]``,
    ``x[np.newaxis, ...]``, ``tf.expand_dims(x, 0)``, ``x.reshape(1, -1)``,
    ``tf.reshape(x, [1, ...])``, ``np.array([x])``; ``X[i:i + 1]`` gives ``X[i]``'s
    subscript itself."""
    t = type(expr)
    if t is ast.BinOp and type(expr.op) in _SCALING:
        # `x[None] / 255.0`, `frame[None] * 2 - 1`: arithmetic with a number keeps the shape
        left, right = expr.left, expr.right
        if _number(right):
            return batch_of_one(ctx, left)
        if _number(left):
            return batch_of_one(ctx, right)
        return None
    if t is ast.Subscript:
        sl = expr.slice
        first = sl.elts[0] if type(sl) is ast.Tuple and sl.elts else sl
        if _new_axis(ctx, first):
            return expr.value
        if type(first) is ast.Slice and first.lower is not None and first.step is None \
                and type(first.upper) is ast.BinOp and type(first.upper.op) is ast.Add \
                and _is_int(first.upper.right, 1) \
                and ast.dump(first.upper.left) == ast.dump(first.lower):
            return expr  # type: ignore[return-value]  # X[i:i + 1]
        return None
    if t is not ast.Call:
        return None
    q = ctx.call_qualname(expr)
    args = expr.args
    kw = {k.arg: k.value for k in expr.keywords}
    if q in _EXPAND_DIMS and args:
        axis = args[1] if len(args) > 1 else kw.get("axis")
        return args[0] if _is_int(axis, 0) else None
    if q in _RESHAPES and len(args) >= 2:
        return args[0] if _leading_one(args[1]) else None
    if q in _AT_LEAST_2D and len(args) == 1:
        return args[0]
    if q in _LIST_WRAPPERS and args and type(args[0]) is ast.List and len(args[0].elts) == 1:
        return args[0].elts[0]
    func = expr.func
    if type(func) is ast.Attribute and func.attr == "reshape" and q is None and args \
            and (_is_int(args[0], 1) or _leading_one(args[0])):
        return func.value
    if type(func) is ast.Attribute and func.attr == "astype" and q is None \
            and type(func.value) is ast.Call:
        return batch_of_one(ctx, func.value)
    if q in _SAME_SHAPE and args and type(args[0]) in (ast.Call, ast.Subscript):
        return batch_of_one(ctx, args[0])
    return None


# Calls that draw a minibatch of stored items: `random.sample(memory, n)`,
# `random.choices(memory, k=n)`, and a replay memory's own `sample(n)` (that name exactly:
# `sample_minibatches`, `upsample`, `resample` are not it).
_SAMPLERS = frozenset({"random.sample", "random.choices"})
_SAMPLE_METHOD = "sample"
# Names that say a list holds sampled transitions, trusted only where nothing assigned to
# the name says what it holds (a parameter, a free name, an attribute, `[]` filled later):
# strong ones alone, weak ones (a memory may
# hold whole episodes) with a transition's fields too. Not `batch`/`sample(s)`: a batch
# generator, a list of batches or of per-task datasets is named so as often.
_STRONG_WORDS = ("minibatch", "mini_batch", "experiences", "transitions")
_WEAK_WORDS = ("memory", "replay")
# A transition unpacks into at least this many names (state, action, reward/target, ...).
_TRANSITION_FIELDS = 3
# A stored transition has at least this many fields (state, action, reward, next state,
# done): what a replay memory's `append((s, a, r, s2, done))` adds.
_STORED_FIELDS = 4
# Field names only a transition has: its reward, its next state, its end flag.
_TRANSITION_NAMES = re.compile(
    r"^(?:r|rs|rew|rewards?|d|dones?|terminals?|terminated|is_done|s2|s_|s1|ns|sp|"
    r"new_states?|next_\w+|\w+_next|\w+_t1|\w+_tp1)$", re.IGNORECASE)

_NOT_SAMPLED, _SAMPLED, _SAMPLED_IF_FIELDS = 0, 1, 2


def _name_of(expr: Any) -> str:
    return str(expr.attr if type(expr) is ast.Attribute else getattr(expr, "id", "")).lower()


def _words(name: str) -> list[str]:
    return [*name.split("_"), name]


def _appended_transitions(ctx: Context, container: Any) -> bool:
    """Something of this module appends tuples of a transition's size to a list named like
    ``container`` (``self.memory.append((s, a, r, s2, done))``): it stores transitions."""
    name = _name_of(container)
    if not name:
        return False

    def compute() -> frozenset[str]:
        stores = set()
        for n in ast.walk(ctx.tree):
            if type(n) is ast.Call and type(n.func) is ast.Attribute \
                    and n.func.attr in ("append", "appendleft", "add", "push", "store") \
                    and len(n.args) == 1 and type(n.args[0]) in (ast.Tuple, ast.List) \
                    and len(n.args[0].elts) >= _STORED_FIELDS:
                stores.add(_name_of(n.func.value))
        return frozenset(stores)
    return name in ctx.cached("transition_stores", compute)


def _empty_container(ctx: Context, value: Any) -> bool:
    """``[]``, ``list()``, ``deque(maxlen=n)``: a list filled later by ``append``; what it
    holds is not told by the assignment (``mini_batch = []``, then a loop appending memory
    items), so its name still counts."""
    if type(value) in (ast.List, ast.Tuple):
        return not value.elts
    return type(value) is ast.Call and not value.args \
        and (ctx.call_qualname(value) == "collections.deque"
             or (type(value.func) is ast.Name and value.func.id == "list"))


def _sampled_kind(ctx: Context, expr: Any, depth: int = 0) -> int:
    """Whether ``expr`` is a minibatch of stored transitions: drawn by ``random.sample``/
    ``random.choices`` or a ``.sample(n)`` method from a store that appends transitions
    (:data:`_SAMPLED`), drawn from another store (:data:`_SAMPLED_IF_FIELDS`: the fields it
    unpacks into must say so), through names assigned to it; or, where no assignment is
    known, a name that says so (``minibatch``: sampled; ``self.memory``: if the fields say
    so)."""
    if depth > 4:
        return _NOT_SAMPLED
    if type(expr) is ast.Call:
        if ctx.call_qualname(expr) in _SAMPLERS and expr.args:
            store = expr.args[0]
        elif type(expr.func) is ast.Attribute and ctx.call_qualname(expr) is None \
                and expr.func.attr == _SAMPLE_METHOD:
            store = expr.func.value
        else:
            return _NOT_SAMPLED
        return _SAMPLED if _appended_transitions(ctx, store) else _SAMPLED_IF_FIELDS
    if type(expr) is ast.Name:
        b = ctx.binding(expr)
        filled_later = b is not None and b.kind == "assign" and _empty_container(ctx, b.value)
        if b is not None and b.kind == "assign" and b.value is not None \
                and b.value is not expr and not filled_later:
            return _sampled_kind(ctx, b.value, depth + 1)
        if b is not None and b.kind != "param" and not filled_later:
            return _NOT_SAMPLED  # bound to something known: not by its name
    elif type(expr) is not ast.Attribute:
        return _NOT_SAMPLED
    words = _words(_name_of(expr))
    if any(w in words for w in _STRONG_WORDS):
        return _SAMPLED
    if any(w in words for w in _WEAK_WORDS):
        return _SAMPLED if _appended_transitions(ctx, expr) else _SAMPLED_IF_FIELDS
    return _NOT_SAMPLED


def _transition_fields(target: Any) -> bool:
    """The names a sampled item unpacks into are a transition's: at least four, one of them
    a reward, a next state or an end flag (``s, a, r, s2, done``; not a task's
    ``x, y, name`` or an episode's ``states, actions, returns``)."""
    names = [e.id for e in getattr(target, "elts", ()) if type(e) is ast.Name]
    return len(names) >= _STORED_FIELDS and any(_TRANSITION_NAMES.match(n) for n in names)


def _sampled(ctx: Context, expr: Any, fields: Any = None) -> bool:
    """``expr`` is a minibatch of stored transitions (:func:`_sampled_kind`); ``fields``,
    the tuple one item unpacks into where known."""
    kind = _sampled_kind(ctx, expr)
    return kind == _SAMPLED or (kind == _SAMPLED_IF_FIELDS and _transition_fields(fields))


def _transition_target(target: Any) -> bool:
    """A tuple of names a transition unpacks into: ``s, a, r, s2, done``."""
    return type(target) in (ast.Tuple, ast.List) and len(target.elts) >= _TRANSITION_FIELDS \
        and all(type(e) in (ast.Name, ast.Starred) for e in target.elts)


def _walks(loop: Any) -> list[tuple[Any, Any]]:
    """(target, iterable) of a ``for`` loop or of each generator of a comprehension."""
    if type(loop) in (ast.For, ast.AsyncFor):
        return [(loop.target, loop.iter)]
    return [(g.target, g.iter) for g in getattr(loop, "generators", ())]


def _one_transition(ctx: Context, value: Any, loop: Any, fields: Any = None) -> bool:
    """``value`` is one element of a sampled minibatch that ``loop`` walks: its target
    (``for t in minibatch``) or ``minibatch[i]`` for the loop's own index ``i``; ``fields``,
    the names it unpacks into where known."""
    from tfperf.lint.analysis.loops import loop_targets
    for target, it in _walks(loop):
        if type(value) is ast.Name and type(target) is ast.Name and value.id == target.id:
            return _sampled(ctx, it, fields)  # `for sample in minibatch: s, a, r = sample`
    if type(value) is ast.Subscript and type(value.slice) is ast.Name \
            and value.slice.id in loop_targets(loop):
        return _sampled(ctx, value.value, fields)
    return False


def one_sample(ctx: Context, arg: Any, loop: Any) -> bool:
    """``arg`` is one field of one transition of a sampled replay minibatch that ``loop``
    walks sample by sample (``for s, a, r, s2, done in random.sample(memory, 32)``, or
    ``s, a, r, s2, done = minibatch[i]`` for ``i`` over the batch, or ``minibatch[i][0]``):
    a model given it runs once per sample where one call on the stacked batch would do."""
    if type(arg) is ast.Subscript and type(arg.slice) is ast.Constant:
        return _one_transition(ctx, arg.value, loop)  # `sample[0]`, `minibatch[i][0]`
    if type(arg) is not ast.Name:
        return False
    for target, it in _walks(loop):
        if _transition_target(target) \
                and any(type(e) is ast.Name and e.id == arg.id for e in target.elts):
            return _sampled(ctx, it, target)
    b = ctx.binding(arg)
    if b is None or b.value is None or not any(p is loop for p in ctx.ancestors(b.value)):
        return False
    stmt = ctx.parent(b.value) if b.kind == "other" else None
    if type(stmt) is ast.Assign and len(stmt.targets) == 1 \
            and _transition_target(stmt.targets[0]):
        # `s, a, r, s2, d = minibatch[i]`
        return _one_transition(ctx, stmt.value, loop, stmt.targets[0])
    if b.kind == "assign" and b.value is not arg and type(b.value) is ast.Subscript:
        return one_sample(ctx, b.value, loop)  # `state = sample[0]`
    return False


def one_example(ctx: Context, arg: ast.AST, loop: ast.AST, depth: int = 0) -> bool:
    """``arg`` is one example of the loop's data made into a batch of one, or one field of
    one sampled transition (:func:`one_sample`)."""
    if depth > 6:
        return False
    if one_sample(ctx, arg, loop):
        return True
    example = batch_of_one(ctx, arg)
    if example is not None:
        return per_iteration_data(ctx, example, loop)
    if type(arg) is ast.Name:
        b = ctx.binding(arg)
        if b is not None and b.kind == "assign" and b.value is not arg \
                and any(p is loop for p in ctx.ancestors(b.value)):
            return one_example(ctx, b.value, loop, depth + 1)
        return False
    if type(arg) is ast.Call:  # a cast or re-wrap of a batch of one
        inner = preserved_operand(ctx, arg)
        return inner is not None and one_example(ctx, inner, loop, depth + 1)
    if type(arg) is ast.BinOp:  # `x[None] / 255.0`
        return one_example(ctx, arg.left, loop, depth + 1)
    return False


_ONE_INPUT_DEPTH = 5


def _env_output(ctx: Context, value: Any) -> bool:
    """``env.step(a)`` / ``env.reset()``: one observation per call."""
    if type(value) is ast.Subscript:
        value = value.value
    return type(value) is ast.Call and type(value.func) is ast.Attribute \
        and value.func.attr in ("step", "reset") \
        and "env" in (getattr(value.func.value, "id", "") or getattr(value.func.value, "attr",
                                                                      "")).lower()


# Allocations whose shape is their first argument: `np.zeros((1, 3, h, w))`, filled in place
# with one example.
_ALLOCATIONS = frozenset({"numpy.zeros", "numpy.ones", "numpy.empty", "numpy.full",
                          "tensorflow.zeros", "tensorflow.ones", "tensorflow.fill"})


def _allocated_one(ctx: Context, expr: Any) -> bool:
    """``np.zeros((1, 3, h, w))``: an array of one example, allocated to be filled."""
    if type(expr) is not ast.Call or not expr.args:
        return False
    shape = expr.args[0] if ctx.call_qualname(expr) in _ALLOCATIONS else None
    return shape is not None and _leading_one(shape)


# Library calls that keep the first axis first: a transpose whose permutation starts at 0,
# and the shape-keeping conversions.
_TRANSPOSES = frozenset({"numpy.transpose", "tensorflow.transpose", "keras.ops.transpose"})


def _leading_axis_kept(ctx: Context, call: ast.Call) -> ast.expr | None:
    """The operand of ``np.transpose(x, (0, ...))`` / ``tf.cast(x, t)``: its batch axis is
    the result's; else None."""
    q = ctx.call_qualname(call)
    if q in _SAME_SHAPE:
        return call.args[0]
    if q not in _TRANSPOSES:
        return None
    perm = call.args[1] if len(call.args) > 1 else \
        next((k.value for k in call.keywords if k.arg in ("axes", "perm")), None)
    first = perm.elts[0] if type(perm) in (ast.Tuple, ast.List) and perm.elts else None
    return call.args[0] if _is_int(first, 0) else None


def _keeps_leading_axis(call: Any) -> bool:
    """``a.astype(t)``, ``a.copy()``, ``a.transpose(0, ...)``: the first axis stays first."""
    attr = call.func.attr
    if attr in ("astype", "copy"):
        return True
    if attr != "transpose" or not call.args:
        return False
    first = call.args[0]
    if type(first) in (ast.Tuple, ast.List):
        first = first.elts[0] if first.elts else None
    return _is_int(first, 0)


def one_input(ctx: Context, arg: Any, depth: int = 0) -> bool:
    """``arg`` is one input made into a batch of one, or one observation of an
    environment."""
    if depth > _ONE_INPUT_DEPTH:
        return False
    if batch_of_one(ctx, arg) is not None or _allocated_one(ctx, arg):
        return True
    if type(arg) is ast.Call and type(arg.func) is ast.Attribute \
            and ctx.call_qualname(arg) is None and _keeps_leading_axis(arg):
        return one_input(ctx, arg.func.value, depth + 1)  # `batch.transpose(0, 2, 3, 1)`
    if type(arg) is ast.Call and arg.args:
        inner = _leading_axis_kept(ctx, arg)
        if inner is not None:  # `np.transpose(x[None], (0, 2, 1, 3))`, `tf.cast(x[None], t)`
            return one_input(ctx, inner, depth + 1)
    if type(arg) is ast.Name:
        b = ctx.binding(arg)
        if b is None:
            return False
        if b.kind == "assign" and b.value is not arg:
            return one_input(ctx, b.value, depth + 1) or _env_output(ctx, b.value)
        if b.kind == "other":  # `state, reward, done, _ = env.step(a)`
            stmt = ctx.parent(b.value)
            return type(stmt) is ast.Assign and _env_output(ctx, stmt.value)
    return False
