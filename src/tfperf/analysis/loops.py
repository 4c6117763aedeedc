"""The loop model: every loop of a module, what it iterates and what its iterations do.

One :class:`Loop` per ``for``/``while`` statement, comprehension, and call of a TensorFlow
loop (``tf.map_fn``, ``tf.vectorized_map``, ``tf.scan``, ``tf.foldl``/``foldr``,
``tf.while_loop``), built on first use and memoised per module:

- ``form``: "for", "while", "comprehension", "map_fn", "vectorized_map", "scan", "fold",
  "while_loop";
- ``domain`` (:class:`Domain`): what one iteration gets — an index of a ``range`` (sized by a
  tensor's axis, a list's length or a plain number), a tensor's rows, a list of tensors cut
  from one tensor (``tf.split``, ``tf.unstack``, a comprehension of slices ``x[..., c]``), a
  model's variables, a dataset's elements, a counter stepped by a ``while`` — with ``zip``
  and ``enumerate`` unwrapped;
- ``indexes`` (:class:`Index`): how the body indexes arrays with the iteration's index:
  ``x[i]``, ``x[i, j]``, ``x[:, i]``, ``x[..., i]``, and along which axis;
- ``shape``: "map" (iterations independent), "reduction" (they combine through an
  associative update of a running value) or "carried" (an iteration reads what the previous
  one computed: a recurrence, a scan); for statements from
  :func:`tfperf.lint.analysis.dependence.loop_flow`;
- ``results`` (:class:`Result`): how per-iteration values leave the loop — appended to a list
  that is then stacked or concatenated, written back to an element (``out[i] = v``,
  ``v.assign(...)``), accumulated (``acc += v``), or a comprehension's elements, and what
  consumes them after the loop.

Rules ask the model ("a map over pieces of one tensor whose results are rejoined") instead
of walking loops themselves; :func:`tfperf.lint.analysis.loops.element_loop` answers the
older, narrower question (a loop walking one tensor element by element).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field, replace
from typing import Any

from tfperf.lint.analysis.dependence import data_reads, is_reduction_update, loop_flow
from tfperf.lint.analysis.loops import (
    STACKING_CALLS,
    progress_wrapped,
    range_args,
    range_stop,
    sized_by,
)
from tfperf.lint.semantic import COMPREHENSION_NODES, Context

# TensorFlow loops written as calls: (canonical name, form, index of the elements argument).
TF_LOOPS = {
    "tensorflow.map_fn": ("map_fn", 1), "tensorflow.vectorized_map": ("vectorized_map", 1),
    "tensorflow.scan": ("scan", 1), "tensorflow.foldl": ("fold", 1),
    "tensorflow.foldr": ("fold", 1), "tensorflow.while_loop": ("while_loop", 2),
    "tensorflow.compat.v1.map_fn": ("map_fn", 1), "tensorflow.compat.v1.while_loop":
        ("while_loop", 2), "tensorflow.compat.v1.scan": ("scan", 1),
}
# What cuts one tensor into a list of tensors along an axis.
_PIECES = {"tensorflow.split": "split", "tensorflow.unstack": "unstack",
           "tensorflow.compat.v1.split": "split", "tensorflow.compat.v1.unstack": "unstack",
           "tensorflow.unpack": "unstack", "keras.ops.split": "split",
           "keras.ops.unstack": "unstack"}
_VARIABLE_LISTS = frozenset({"trainable_variables", "trainable_weights", "variables",
                             "weights", "non_trainable_variables"})
_CONSUMERS = {q: q.rsplit(".", 1)[1] for q in STACKING_CALLS}
_CONSUMERS.update({"numpy.array": "array", "numpy.stack": "stack",
                   "numpy.concatenate": "concat", "numpy.asarray": "array",
                   "tensorflow.reduce_sum": "reduce_sum", "tensorflow.math.reduce_sum":
                       "reduce_sum", "tensorflow.reduce_mean": "reduce_mean",
                   "tensorflow.math.reduce_mean": "reduce_mean", "tensorflow.group": "group"})


@dataclass(frozen=True)
class Domain:
    """What one iteration gets. ``kind``: "range", "tensor_rows", "tensor_list", "list",
    "dataset", "counter", "unknown". ``over``: the collection iterated, or what sizes a range
    (``x`` of ``x.shape[1]``); ``axis``: the axis of ``over`` the iteration walks, when known;
    ``source``: how a tensor list was made ("split", "unstack", "slices", "variables");
    ``index``: the name holding the iteration's integer index; ``items``: the names holding
    the items themselves (a ``zip`` gives several); ``parts``: a ``zip``'s domains, one per
    iterable (each with its own ``over``, ``axis`` and ``items``); ``start``: a ``range``'s
    start when it is not 0 (or a counter's, when known)."""

    kind: str
    over: ast.expr | None = None
    axis: int | None = None
    source: str = ""
    index: str | None = None
    items: tuple[str, ...] = ()
    parts: tuple[Domain, ...] = ()
    iterable: ast.expr | None = None
    start: ast.expr | None = None
    stop: ast.expr | None = None


@dataclass(frozen=True)
class Index:
    """``array[...]`` indexed with the iteration's index: ``form`` is "x[i]", "x[i, j]",
    "x[:, i]" or "x[..., i]"; ``axis``: the indexed axis (negative when counted from the
    end after an ``...``)."""

    node: Any
    array: str
    axis: int
    form: str


@dataclass(frozen=True)
class Result:
    """How values leave the loop. ``how``: "append", "assign_back", "accumulate",
    "element"; ``target``: the list, array or running value ("" for a comprehension);
    ``then``: what consumes the collected values after the loop ("stack", "concat",
    "add_n", "array"...; "" when nothing known)."""

    how: str
    target: str
    node: Any
    then: str = ""


@dataclass(frozen=True)
class Update:
    """A carried value updated as an associative reduction of itself (``acc = acc + t``,
    ``acc += t``, ``acc = tf.maximum(acc, t)``): ``op`` is "add", "sub", "mul", "max", "min",
    "concat" or "other"; ``term`` is ``t``; ``statement`` whether the update is a statement of
    the body itself (not nested in a branch or an inner loop)."""

    node: Any
    name: str
    op: str
    term: Any
    statement: bool


@dataclass(frozen=True)
class Loop:
    """One loop. Besides the fields of the module's docstring: ``updates``, every update of
    a carried value that is a reduction of itself; ``running``, the carried values whose only
    update is such a statement and which the body reads after it, in the same iteration (a
    running sum read each step: a prefix sum, a scan), where ``shape`` says "carried"."""

    node: Any
    form: str
    domain: Domain
    indexes: tuple[Index, ...] = ()
    shape: str = "map"
    carried: frozenset[str] = frozenset()
    results: tuple[Result, ...] = field(default=())
    body: tuple[ast.AST, ...] = ()
    updates: tuple[Update, ...] = ()
    running: frozenset[str] = frozenset()
    per_device: bool = False


def loop_of(ctx: Context, node: Any) -> Loop | None:
    """The model of ``node`` (a loop statement, a comprehension or a TF loop call)."""
    cache: dict[int, Loop | None] = ctx.cached("analysis.loop_of", dict)
    key = id(node)
    if key not in cache:
        cache[key] = _build(ctx, node)
    return cache[key]


def loops(ctx: Context) -> list[Loop]:
    """Every loop of the module, in walk order."""
    def compute() -> list[Loop]:
        out = []
        for node in ctx.nodes_of(ast.For, ast.AsyncFor, ast.While, *COMPREHENSION_NODES):
            found = loop_of(ctx, node)
            if found is not None:
                out.append(found)
        if ctx.imports_tf:
            by_attr, by_name = ctx.call_groups()
            names = {q.rsplit(".", 1)[1] for q in TF_LOOPS}
            for call in [c for n in names for g in (by_attr, by_name) for c in g.get(n, ())]:
                found = loop_of(ctx, call)
                if found is not None:
                    out.append(found)
        return out
    return ctx.cached("analysis.loops", compute)


# ------------------------------------------------------------------ building


def _build(ctx: Context, node: Any) -> Loop | None:
    t = type(node)
    if t in (ast.For, ast.AsyncFor):
        domain = domain_of(ctx, node.target, node.iter)
        return _statement_loop(ctx, node, "for", domain)
    if t is ast.While:
        return _statement_loop(ctx, node, "while", _counter(ctx, node))
    if t in COMPREHENSION_NODES:
        if len(node.generators) != 1:
            return None
        gen = node.generators[0]
        domain = domain_of(ctx, gen.target, gen.iter)
        elts = [getattr(node, f) for f in ("elt", "key", "value") if hasattr(node, f)]
        body = tuple(n for e in elts for n in ast.walk(e))
        result = Result("element", "", node, _consumer(ctx, node))
        return Loop(node, "comprehension", domain, _indexes(domain, body), "map",
                    frozenset(), (result,), body)
    if t is ast.Call:
        return _call_loop(ctx, node)
    return None


def _statement_loop(ctx: Context, node: Any, form: str, domain: Domain) -> Loop:
    body = tuple(n for stmt in node.body for n in ast.walk(stmt))
    flow = loop_flow(ctx, node)
    carried = set(flow.carried)
    if form == "while" and domain.index is not None:
        carried.discard(domain.index)  # the counter itself is the iteration, not a state
    recurrent = set(flow.recurrent) - ({domain.index} if domain.index else set())
    shape = "carried" if recurrent else "reduction" if flow.reductions else "map"
    results = _results(ctx, node, domain, flow.reductions)
    updates = _updates(ctx, node, carried)
    return Loop(node, form, domain, _indexes(domain, body), shape, frozenset(carried),
                results, body, updates, _running(ctx, node, updates, flow.reductions),
                enters_device_per_iteration(ctx, node))


# What places the ops of a ``with`` block on a device (canonical names; any ``.device(...)``
# or ``.scope()`` of a name set from the iteration is read the same way).
_DEVICE_SCOPES = frozenset({"tensorflow.device", "tensorflow.compat.v1.device"})


def enters_device_per_iteration(ctx: Context, loop: Any) -> bool:
    """The body of statement ``loop`` enters a ``with`` whose device varies with the loop's
    target (directly, or through names the body sets from it): ``tf.device('/gpu:%d' % i)``,
    ``tf.device(d)`` for ``d`` in a device list, ``strategy[i].scope()``."""
    withs: list[Any] = [n for s in loop.body for n in ast.walk(s)
                        if type(n) in (ast.With, ast.AsyncWith)]
    if not withs:
        return False
    target = getattr(loop, "target", None)
    varying = set(_names(target)) if target is not None else set()
    if type(loop) is ast.While:
        varying |= {n.id for s in loop.body for n in ast.walk(s)
                    if type(n) is ast.Name and type(n.ctx) is ast.Store}
    for stmt in loop.body:  # names the body derives from the iteration, in order
        for n in ast.walk(stmt):
            if type(n) is ast.Assign and _reads(n.value) & varying:
                varying |= {t.id for tg in n.targets for t in ast.walk(tg)
                            if type(t) is ast.Name}
    for w in withs:
        for item in w.items:
            expr = item.context_expr
            if type(expr) is not ast.Call:
                continue
            q = ctx.call_qualname(expr) or ""
            func: Any = expr.func
            attr = func.attr if type(func) is ast.Attribute else ""
            if q in _DEVICE_SCOPES or attr == "device":
                if any(_reads(a) & varying for a in [*expr.args, *(k.value for k in
                                                                   expr.keywords)]):
                    return True
            elif attr == "scope" and _reads(func.value) & varying:
                return True
    return False


def _reads(node: Any) -> set[str]:
    return {n.id for n in ast.walk(node) if type(n) is ast.Name}


def in_tower(ctx: Context, line: int, column: int | None) -> bool:
    """Whether the innermost loop around ``(line, column)`` is a per-device tower loop
    (:attr:`Loop.per_device`): findings there that would batch the loop are not made.
    Loops are told apart by position, not whole lines: a loop or a comprehension nested
    inside a tower is its own loop and keeps its findings (one over a shard's elements is
    a per-element loop on one device). A finding without a column is placed at the line's
    start."""
    at = (line, column or 0)
    innermost: tuple[tuple[int, int], bool] | None = None
    for begin, finish, device in _loop_spans(ctx):
        if begin <= at <= finish and (innermost is None or begin > innermost[0]):
            innermost = (begin, device)  # nested spans: the innermost starts last
    return innermost is not None and innermost[1]


def _loop_spans(ctx: Context) -> tuple[tuple[tuple[int, int], tuple[int, int], bool], ...]:
    """Each loop's (start, end) position and whether it is a tower; none without a tower."""
    def compute() -> tuple[tuple[tuple[int, int], tuple[int, int], bool], ...]:
        if "device" not in ctx.source and "scope" not in ctx.source:
            return ()
        spans = []
        node: Any
        for node in ctx.nodes_of(ast.For, ast.AsyncFor, ast.While, *COMPREHENSION_NODES):
            model = None if type(node) in COMPREHENSION_NODES else loop_of(ctx, node)
            end_line = getattr(node, "end_lineno", None) or node.lineno
            end_col = getattr(node, "end_col_offset", None)
            spans.append(((node.lineno, node.col_offset),
                          (end_line, 1 << 30 if end_col is None else end_col),
                          model is not None and model.per_device))
        return tuple(spans) if any(device for _, _, device in spans) else ()
    return ctx.cached("analysis.loop_spans", compute)


_UPDATE_OPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul"}
_UPDATE_CALLS = {"maximum": "max", "minimum": "min", "add": "add", "add_n": "add",
                 "multiply": "mul", "concat": "concat", "concatenate": "concat"}


def _updates(ctx: Context, loop: Any, carried: set[str]) -> tuple[Update, ...]:
    """Each update of a carried name, when every update of that name is a reduction."""
    top = {id(s) for s in loop.body}
    out: list[Update] = []
    for name in sorted(carried):
        found = []
        for stmt in loop.body:
            for n in ast.walk(stmt):
                aug = type(n) is ast.AugAssign and type(n.target) is ast.Name \
                    and n.target.id == name
                if aug or (type(n) is ast.Assign and any(
                        type(m) is ast.Name and m.id == name and type(m.ctx) is ast.Store
                        for t in n.targets for m in ast.walk(t))):
                    found.append(n)
        if not found or not all(is_reduction_update(ctx, u, name) for u in found):
            continue
        for u in found:
            op, term = _update_parts(ctx, u, name)
            out.append(Update(u, name, op, term, id(u) in top))
    return tuple(out)


def _update_parts(ctx: Context, u: Any, name: str) -> tuple[str, Any]:
    if type(u) is ast.AugAssign:
        return _UPDATE_OPS.get(type(u.op), "other"), u.value
    value = u.value
    if type(value) is ast.BinOp:
        own_left = type(value.left) is ast.Name and value.left.id == name
        op = _UPDATE_OPS.get(type(value.op), "other")
        if op == "sub" and not own_left:
            op = "other"
        return op, value.right if own_left else value.left
    if type(value) is ast.Call:
        q = ctx.call_qualname(value) or ""
        sides = list(value.args[:2])
        first: Any = sides[0] if sides else None
        if type(first) in (ast.List, ast.Tuple):
            sides = list(first.elts)
        term = next((s for s in sides if not (type(s) is ast.Name and s.id == name)), None)
        return _UPDATE_CALLS.get(q.rsplit(".", 1)[-1], "other"), term
    return "other", None


def _running(ctx: Context, loop: Any, updates: tuple[Update, ...],
             reductions: frozenset[str]) -> frozenset[str]:
    """Carried names updated once, by a reduction statement of the body, and read by the
    body after that statement only: each iteration sees the running value (a prefix)."""
    out = set()
    for name in {u.name for u in updates} - set(reductions):
        mine = [u for u in updates if u.name == name]
        if len(mine) != 1 or not mine[0].statement:
            continue
        at = loop.body.index(mine[0].node)
        if any(name in data_reads(ctx, s) for s in loop.body[:at]):
            continue
        out.add(name)
    return frozenset(out)


def _call_loop(ctx: Context, call: Any) -> Loop | None:
    q = ctx.call_qualname(call)
    spec = TF_LOOPS.get(q or "")
    if spec is None:
        return None
    form, where = spec
    elems = call.args[where] if len(call.args) > where else None
    if elems is None:
        elems = next((k.value for k in call.keywords if k.arg in ("elems", "loop_vars")),
                     None)
    if form == "while_loop":
        return Loop(call, form, Domain("counter", elems), (), "carried", frozenset(), ())
    shape = "carried" if form == "scan" else "reduction" if form == "fold" else "map"
    return Loop(call, form, Domain("tensor_rows", elems, 0), (), shape, frozenset(),
                (Result("element", "", call, _consumer(ctx, call)),))


def _names(target: Any) -> list[str]:
    return [n.id for n in ast.walk(target) if type(n) is ast.Name]


def domain_of(ctx: Context, target: Any, it: Any) -> Domain:
    """What ``for <target> in <it>`` gives each iteration (``enumerate``/``zip``/``tqdm``
    unwrapped)."""
    wrapped = progress_wrapped(ctx, it)
    if wrapped is not None:  # `tqdm(zip(ds, names))`: the bar yields what it wraps
        return domain_of(ctx, target, wrapped)
    if type(it) is ast.Call and ctx.is_builtin(it.func, "enumerate") and it.args \
            and type(target) is ast.Tuple and len(target.elts) == 2:
        index = target.elts[0].id if type(target.elts[0]) is ast.Name else None
        inner = domain_of(ctx, target.elts[1], it.args[0])
        return replace(inner, index=index)
    if type(it) is ast.Call and ctx.is_builtin(it.func, "zip") and it.args \
            and type(target) is ast.Tuple and len(target.elts) == len(it.args):
        parts = [domain_of(ctx, t, a) for t, a in zip(target.elts, it.args, strict=True)]
        known = [p for p in parts if p.kind != "unknown"]
        first = known[0] if known else parts[0]
        kind = first.kind if all(p.kind == first.kind for p in known) else "list"
        return Domain(kind, first.over, first.axis, first.source, None,
                      tuple(n for t in target.elts for n in _names(t)), tuple(parts), it)
    items = tuple(_names(target))
    args = range_args(ctx, it)
    if args is not None:
        stop = range_stop(args)
        sized = sized_by(ctx, stop)
        index = target.id if type(target) is ast.Name else None
        start = args[0] if len(args) > 1 else None
        if sized is not None:
            return Domain("range", sized.obj, sized.axis, sized.how, index, (), (), it, start,
                          stop)
        return Domain("range", stop, None, "", index, (), (), it, start, stop)
    pieces = _pieces(ctx, it)
    if pieces is not None:
        return Domain("tensor_list", pieces[0], pieces[1], pieces[2], None, items, (), it)
    if ctx.imports_tf:
        if ctx.is_dataset(it):
            return Domain("dataset", it, None, "", None, items, (), it)
        if ctx.is_tensor_like(it):
            return Domain("tensor_rows", it, 0, "", None, items, (), it)
        if ctx.is_tensor_list(it):
            return Domain("tensor_list", it, None, "call", None, items, (), it)
    if type(it) in (ast.List, ast.Tuple, ast.ListComp):
        return Domain("list", it, None, "", None, items, (), it)
    return Domain("unknown", it, None, "", None, items, (), it)


def _pieces(ctx: Context, it: Any, depth: int = 0) -> tuple[ast.expr, int | None, str] | None:
    """``it`` is a list of tensors cut from one tensor: (that tensor, the axis, how)."""
    if depth > 3:
        return None
    if type(it) is ast.Name:
        b = ctx.binding(it)
        if b is None or b.kind != "assign" or b.value is it:
            return None
        return _pieces(ctx, b.value, depth + 1)
    if type(it) is ast.Attribute and it.attr in _VARIABLE_LISTS:
        return it.value, None, "variables"
    if type(it) is ast.Call:
        how = _PIECES.get(ctx.call_qualname(it) or "")
        if how is None or not it.args:
            return None
        axis_node = next((k.value for k in it.keywords if k.arg == "axis"), None)
        if axis_node is None and how == "split" and len(it.args) > 2:
            axis_node = it.args[2]
        if axis_node is None and how == "unstack" and len(it.args) > 2:
            axis_node = it.args[2]
        axis = 0 if axis_node is None else _int(axis_node)
        return it.args[0], axis, how
    if type(it) is ast.ListComp and len(it.generators) == 1:
        gen = it.generators[0]
        sliced = _slice_axis(it.elt, _names(gen.target))
        if sliced is not None and range_args(ctx, gen.iter) is not None:
            return sliced[0], sliced[1], "slices"
    return None


def _int(node: Any) -> int | None:
    if type(node) is ast.Constant and type(node.value) is int:
        return node.value
    if type(node) is ast.UnaryOp and type(node.op) is ast.USub \
            and type(node.operand) is ast.Constant and type(node.operand.value) is int:
        return -node.operand.value
    return None


def _slice_axis(elt: Any, names: list[str]) -> tuple[ast.expr, int] | None:
    """``x[..., c]`` / ``x[:, c]`` / ``x[c]`` with ``c`` one of ``names``: (x, axis)."""
    if type(elt) is not ast.Subscript:
        return None
    found = _index_position(elt.slice, names)
    return (elt.value, found[0]) if found is not None else None


def _index_position(sl: Any, names: list[str]) -> tuple[int, str] | None:
    """Where in a subscript the bare index name stands: (axis, form)."""
    parts = list(sl.elts) if type(sl) is ast.Tuple else [sl]
    ellipsis = any(type(p) is ast.Constant and p.value is Ellipsis for p in parts)
    for i, p in enumerate(parts):
        if type(p) is ast.Name and p.id in names:
            if ellipsis:
                return i - len(parts), "x[..., i]"
            if len(parts) == 1:
                return 0, "x[i]"
            if all(type(q) is ast.Slice for q in parts[:i]) and i > 0:
                return i, "x[:, i]"
            return i, "x[i, j]"
    return None


def _indexes(domain: Domain, body: tuple[ast.AST, ...]) -> tuple[Index, ...]:
    if domain.index is None:
        return ()
    out = []
    for n in body:
        if type(n) is ast.Subscript:
            found = _index_position(n.slice, [domain.index])
            array = _ref(n.value)
            if found is not None and array is not None:
                out.append(Index(n, array, found[0], found[1]))
    return tuple(out)


def _counter(ctx: Context, loop: Any) -> Domain:
    """``while i < n: ... i += 1``: a counter walking ``range(n)``."""
    test = loop.test
    if type(test) is ast.Compare and len(test.ops) == 1 \
            and type(test.ops[0]) in (ast.Lt, ast.LtE) and type(test.left) is ast.Name:
        name = test.left.id
        stepped = any(type(n) is ast.AugAssign and type(n.target) is ast.Name
                      and n.target.id == name and type(n.op) is ast.Add
                      for stmt in loop.body for n in ast.walk(stmt))
        if stepped:
            bound = test.comparators[0]
            sized = sized_by(ctx, bound)
            if sized is not None:
                return Domain("counter", sized.obj, sized.axis, sized.how, name, stop=bound)
            return Domain("counter", bound, None, "", name, stop=bound)
    return Domain("unknown")


def _ref(node: Any) -> str | None:
    if type(node) is ast.Name:
        return node.id
    if type(node) is ast.Attribute:
        base = _ref(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def _consumer(ctx: Context, node: Any) -> str:
    """What takes ``node``'s list as a whole: ``tf.stack(<node>)`` → "stack"."""
    p = ctx.parent(node)
    if type(p) is ast.Call and p.args and p.args[0] is node:
        return _CONSUMERS.get(ctx.call_qualname(p) or "", "")
    if type(p) is ast.Assign and len(p.targets) == 1 and type(p.targets[0]) is ast.Name:
        return _list_consumer(ctx, p.targets[0].id, p)
    return ""


def _list_consumer(ctx: Context, name: str, after: Any) -> str:
    """How the list ``name`` is consumed after ``after`` in the same scope."""
    scope = ctx.scope_of(after)
    end = (getattr(after, "end_lineno", 0) or 0, getattr(after, "end_col_offset", 0) or 0)
    for n in ctx.name_loads(name):
        if ctx.scope_of(n) is not scope or (n.lineno, n.col_offset) < end:
            continue
        p = ctx.parent(n)
        if type(p) is ast.Call and p.args and p.args[0] is n:
            found = _CONSUMERS.get(ctx.call_qualname(p) or "")
            if found:
                return found
    return ""


def _results(ctx: Context, loop: Any, domain: Domain,
             reductions: frozenset[str]) -> tuple[Result, ...]:
    out: list[Result] = []
    items = set(domain.items)
    n: Any
    for stmt in loop.body:
        for n in ast.walk(stmt):
            t = type(n)
            if t is ast.Call and type(n.func) is ast.Attribute and len(n.args) == 1:
                attr = n.func.attr
                owner: Any = n.func.value
                name = _ref(owner)
                if attr == "append" and name is not None:
                    out.append(Result("append", name, n,
                                      _list_consumer(ctx, name, loop) if "." not in name
                                      else ""))
                elif attr in ("assign", "assign_add", "assign_sub") and (
                        _ref(owner) in items or (type(owner) is ast.Subscript
                                                 and domain.index is not None
                                                 and _index_position(owner.slice,
                                                                     [domain.index]))):
                    out.append(Result("assign_back", _ref(owner) or _ref(owner.value) or "",
                                      n))
            elif t is ast.Assign and domain.index is not None:
                for tg in n.targets:
                    if type(tg) is ast.Subscript and _index_position(tg.slice, [domain.index]):
                        out.append(Result("assign_back", _ref(tg.value) or "", n))
            elif t is ast.AugAssign and type(n.target) is ast.Name \
                    and n.target.id in reductions:
                out.append(Result("accumulate", n.target.id, n))
    return tuple(out)
