"""One iteration of a loop as a function of its index, read from the project's loop model
(:mod:`tfperf.analysis.loops`): the loop levers rewrite what a loop computes, however it is
spelled (``for i in range(n)``, ``for r in tf.unstack(x)``, ``enumerate``, ``zip``, a
counter-driven ``while``, a comprehension), instead of matching one spelling.

An :class:`Iteration` says, for a loop whose iterations are independent (the model's "map")
and whose values leave it one per iteration (appended and stacked, written to ``out[i]``, to a
``TensorArray``, a comprehension's elements), or which accumulates one associative sum (the
model's "reduction" with an ``add`` update):

- ``index``: the name holding the iteration's integer index, ``stop``: the iteration count
  (source text), ``binds``: each item the loop hands out as an expression of the index
  (``r`` of ``for r in tf.unstack(x)`` is ``x[i]``) and as the whole batch (``x``);
- ``stmts``: the body's statements that compute the value (the collector and the counter's
  step left out), ``value``: the per-iteration value;
- the edits outside the loop that its rewrite needs (the list's creation dropped, its consumer
  ``tf.stack(out)`` replaced by the new value).
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass, field, replace
from typing import Any

from tfperf.tune.source import block_of

#: Calls that join a list of per-iteration values into one tensor along a new axis 0.
STACKS = {"tensorflow.stack", "numpy.array", "numpy.stack", "numpy.asarray",
          "tensorflow.convert_to_tensor", "tensorflow.constant"}
#: Calls that reduce a list of values the way they reduce its stack (the list is replaced).
LIST_REDUCTIONS = {"tensorflow.add_n": "add_n", "tensorflow.math.add_n": "add_n",
                   "tensorflow.reduce_sum": "", "tensorflow.math.reduce_sum": "",
                   "tensorflow.reduce_mean": "", "tensorflow.math.reduce_mean": "",
                   "tensorflow.reduce_max": "", "tensorflow.math.reduce_max": "",
                   "tensorflow.reduce_min": "", "tensorflow.math.reduce_min": ""}
CONCATS = {"tensorflow.concat"}
INDEX = "_tfperf_i"
JOIN_HELPER = "_tfperf_concat_steps"
#: tf.concat of per-step values along an axis other than 0 (``TF``: the module's alias).
JOIN_SOURCE = '''

def _tfperf_concat_steps(steps, axis):
    """tfperf tune: TF.concat(list(steps), axis) of values stacked along a new axis 0."""
    k = axis % (steps.shape.rank - 1)
    moved = TF.experimental.numpy.moveaxis(steps, 0, k)
    shape = TF.shape(moved)
    return TF.reshape(moved, TF.concat([shape[:k], [-1], shape[k + 2:]], 0))
'''


@dataclass
class Iteration:
    node: Any  # the loop statement or the comprehension
    index: str
    stop: str
    binds: list[tuple[str, str, str]]  # (item name, as a function of the index, the batch)
    stmts: list[ast.stmt]
    value: ast.expr
    # How the values leave: "stack" (a new axis 0), "stack:K" (a new constant axis K),
    # "concat" (joined along axis 0), "concat:K" (joined along the constant axis K of each
    # value), "sum" (an accumulation: ``name = name + value``), "add_n"/"list" (a reduction of
    # the list).
    join: str
    name: str = ""  # the collector (list, array, accumulator) of a statement loop
    init: ast.stmt | None = None  # the collector's creation, dropped
    consumer: ast.expr | None = None  # what takes the collected values, replaced
    counter_step: ast.stmt | None = None
    uses_index: bool = False  # the bare index is used other than to subscript
    nested: bool = False  # the body holds another loop or comprehension
    subscripts: list[tuple[ast.Subscript, int]] = field(default_factory=list)
    # Running sums read after their update (a prefix sum): update statement's id → update.
    running: dict[int, Any] = field(default_factory=dict)
    # The collector's name is bound elsewhere too (another branch builds the list its own
    # way): the consumer is shared and stays; a stack of the batched tensor along axis 0 is
    # that tensor (TF's and NumPy's), and the other binding still hands it a list.
    shared: bool = False


MAP_FNS = {"tensorflow.map_fn", "tensorflow.compat.v1.map_fn"}
#: Keras's maps of a function over the rows of a tensor (canonical names), which run as
#: ``tf.map_fn`` does: tune reads them as its "map_fn" loops (lint's loop model is left as
#: it is, so that no lint finding changes with tune's reading).
KERAS_MAPS = {"keras.backend.map_fn", "keras.ops.map"}


def function_loops(ctx: Any, fn: ast.FunctionDef) -> list[Any]:
    """The loop model of every loop inside ``fn`` (statements, comprehensions), innermost
    first (a rewrite of an inner loop keeps the outer one's positions valid when it is
    applied alone, and the outer one sees the inner one rewritten when rebuilt)."""
    from tfperf.analysis.loops import loop_of

    inside: list[ast.AST] = [n for n in ast.walk(fn) if isinstance(
        n, (ast.For, ast.While, ast.ListComp, ast.GeneratorExp))]
    inside += [n for n in ast.walk(fn) if isinstance(n, ast.Call)
               and ctx.call_qualname(n) in MAP_FNS]
    # A per-device tower loop places each iteration on its own device: never batched.
    found = [m for m in (loop_of(ctx, n) for n in inside) if m is not None
             and not m.per_device]
    found += [_keras_map(n) for n in ast.walk(fn) if isinstance(n, ast.Call)
              and ctx.call_qualname(n) in KERAS_MAPS and map_fn_parts(n) is not None]
    return sorted(found, key=lambda m: -_depth(fn, m.node))


def _keras_map(call: ast.Call) -> Any:
    """The loop model's "map_fn" of a Keras map (``K.map_fn(fn, x)``, ``keras.ops.map``)."""
    from tfperf.analysis.loops import Domain, Loop

    parts = map_fn_parts(call)
    assert parts is not None
    return Loop(call, "map_fn", Domain("tensor_rows", parts[1], 0))


def _depth(fn: ast.AST, node: ast.AST) -> int:
    def walk(n: ast.AST, d: int) -> int | None:
        if n is node:
            return d
        for c in ast.iter_child_nodes(n):
            got = walk(c, d + 1)
            if got is not None:
                return got
        return None
    return walk(fn, 0) or 0


def text_of(text: str, node: ast.AST) -> str:
    return ast.get_source_segment(text, node) or ast.unparse(node)


def read(ctx: Any, fn: ast.FunctionDef, text: str, model: Any,
         tensors: frozenset[str] = frozenset()) -> Iteration | None:
    """The iteration of ``model`` (a loop of ``fn``), or None when it is not a loop of
    independent iterations whose values leave it one per iteration (or one sum)."""
    node = model.node
    if model.form == "comprehension":
        return _comprehension(ctx, fn, text, model, tensors)
    if model.form == "map_fn":
        return _map_fn(ctx, fn, text, node)
    if model.form not in ("for", "while") or getattr(node, "orelse", None):
        return None
    if any(isinstance(n, (ast.Break, ast.Continue, ast.Return, ast.Yield, ast.YieldFrom,
                          ast.Global, ast.Nonlocal))
           for s in node.body for n in _own_nodes(s)):
        return None
    domain = loop_domain(ctx, text, model, tensors, ranges=True)
    if domain is None:
        return None
    index, stop, binds = domain
    block = block_of(fn, node)
    if block is None:
        return None
    stmts = list(node.body)
    step = None
    counter = index
    if model.form == "while":
        start = _counter_start(block, node, index)
        # `while c <= n` runs n + 1 times, and a counter from 100 walks range(100, n): the
        # loop model reads `range(n)` for both (stop 42: 105 groups for 5)
        if start is None or not isinstance(node.test, ast.Compare) \
                or not isinstance(node.test.ops[0], ast.Lt):
            return None
        if _literal_int(start) != 0:
            a = text_of(text, start)
            binds = [(index, f"({a}) + {INDEX}", f"tf.range({a}, {stop})")]
            index, stop = INDEX, f"{stop} - ({a})"
        steps = [s for s in stmts if isinstance(s, ast.AugAssign)
                 and isinstance(s.target, ast.Name) and s.target.id == counter
                 and isinstance(s.op, ast.Add) and isinstance(s.value, ast.Constant)
                 and s.value.value == 1]
        if len(steps) != 1 or steps[0] is not stmts[-1]:
            return None
        step = steps[0]
        stmts = stmts[:-1]
        if any(isinstance(n, ast.Name) and n.id == counter and isinstance(n.ctx, ast.Store)
               for s in stmts for n in ast.walk(s)):
            return None
    it = _collector(ctx, fn, text, block, node, stmts, index, model)
    if it is None:
        return None
    it.index, it.stop, it.binds, it.counter_step = index, stop, binds, step
    _finish(it, index)
    if it.join.startswith("array:") and not _fills_every_row(it):
        return None
    return it


def rows_of(name: str) -> set[str]:
    """Spellings of ``name``'s row count (its first axis's length)."""
    return {f"{name}.shape[0]", f"len({name})", f"tf.shape({name})[0]",
            f"np.shape({name})[0]", f"{name}.get_shape()[0]"}


def _fills_every_row(it: Iteration) -> bool:
    """A NumPy buffer made from ``x``'s shape (``np.ndarray(x.shape)``, ``np.zeros_like(x)``,
    ``np.zeros((x.shape[0], d))``), filled by a loop over ``x``'s rows that reads only ``x``'s
    rows by the index: the batch of its values is the whole buffer. A loop over fewer rows
    (the rest keep the buffer's zeros) or reading rows of another tensor is left as written
    (the batch would have another row count)."""
    assert it.init is not None and isinstance(it.init, ast.Assign)
    make = it.init.value
    assert isinstance(make, ast.Call)
    first = make.args[0]
    source = None
    if isinstance(first, ast.Attribute) and first.attr == "shape" \
            and isinstance(first.value, ast.Name):
        source = first.value.id  # np.ndarray(x.shape)
    elif isinstance(first, ast.Name) and ast.unparse(make.func).endswith("_like"):
        source = first.id  # np.zeros_like(x)
    elif isinstance(first, (ast.Tuple, ast.List)) and first.elts:
        row = ast.unparse(first.elts[0]).replace(" ", "")
        source = next((n.id for n in ast.walk(first.elts[0]) if isinstance(n, ast.Name)
                       and row in rows_of(n.id)), None)  # np.zeros((x.shape[0], d))
    if source is None or it.stop.replace(" ", "") not in rows_of(source):
        return False
    read = {ast.unparse(n.value) for n, _ in it.subscripts} | {b[2] for b in it.binds}
    return read <= {source} and all(k == 0 for _, k in it.subscripts)


def _own_nodes(node: ast.AST) -> list[ast.AST]:
    """``node``'s subtree without the bodies of the functions defined in it."""
    out, todo = [], [node]
    while todo:
        n = todo.pop()
        out.append(n)
        if isinstance(n, (ast.FunctionDef, ast.Lambda)):
            continue
        todo.extend(ast.iter_child_nodes(n))
    return out


def _finish(it: Iteration, index: str) -> None:
    nodes = [n for s in it.stmts for n in ast.walk(s)] + list(ast.walk(it.value))
    it.nested = any(isinstance(n, (ast.For, ast.While, ast.ListComp, ast.GeneratorExp,
                                   ast.Lambda, ast.FunctionDef)) for n in nodes)
    inside: set[int] = set()
    for n in nodes:
        if isinstance(n, ast.Subscript):
            parts = list(n.slice.elts) if isinstance(n.slice, ast.Tuple) else [n.slice]
            for k, p in enumerate(parts):
                if isinstance(p, ast.Name) and p.id == index:
                    it.subscripts.append((n, k))
                    inside.add(id(p))
    it.uses_index = any(isinstance(n, ast.Name) and n.id == index and id(n) not in inside
                        for n in nodes)


def loop_domain(ctx: Any, text: str, model: Any, tensors: frozenset[str] = frozenset(),
                ranges: bool = False) -> tuple[str, str, list[tuple[str, str, str]]] | None:
    """(index name, iteration count, item binds) of a loop's domain; ``tensors``: names
    known to hold tensors (the tuned function's arguments, seen when it ran), whose rows a
    loop over them walks; ``ranges``: ``range(a, b[, s])`` read too, its variable an item
    ``a + s * i`` of a fresh index ``i`` over the count (whose batch is ``tf.range(a, b, s)``)."""
    d = model.domain
    parts = list(d.parts) if d.parts else [d]
    index = d.index or INDEX
    binds: list[tuple[str, str, str]] = []
    stop = None
    if d.kind in ("range", "counter"):
        if d.kind == "range":
            it = d.iterable
            if isinstance(it, ast.Call) and not it.keywords and d.index is not None \
                    and len(it.args) in (2, 3) and _literal_int(it.args[0]) == 0 \
                    and (len(it.args) == 2 or _literal_int(it.args[2]) == 1):
                # range(0, n) and range(0, n, 1) are range(n): the index itself (they were
                # a shifted range, whose batch gathered every row: round 10's c04m)
                return d.index, text_of(text, it.args[1]), []
            if ranges and isinstance(it, ast.Call) and len(it.args) in (2, 3) \
                    and not it.keywords and d.index is not None:
                return _shifted_range(text, it, d.index)
            if not isinstance(it, ast.Call) or len(it.args) != 1 or d.index is None:
                return None
        if d.stop is None or d.index is None:
            return None
        return d.index, text_of(text, d.stop), []
    for p in parts:
        if p.kind in ("unknown", "list") and _tensor_ref(p.over, tensors):
            p = replace(p, kind="tensor_rows", axis=0)
        if p.kind not in ("tensor_list", "tensor_rows") or p.over is None \
                or len(p.items) != 1 or p.source not in ("", "unstack"):
            return None
        if p.axis not in (0, None):
            return None
        over = text_of(text, p.over)
        if over.endswith(".numpy()"):
            return None
        if stop is None:
            stop = f"{over}.shape[0]"
        binds.append((p.items[0], f"{over}[{index}]", over))
    if stop is None:
        return None
    return index, stop, binds


def _counter_start(block: list[ast.stmt], loop: ast.stmt, name: str) -> ast.expr | None:
    """The value a ``while`` loop's counter starts from: its last plain assignment before
    the loop in the same block, where nothing between rebinds it (None: not known)."""
    start: ast.expr | None = None
    before = block[:block.index(loop)]
    at = 0
    for i, s in enumerate(before):
        if isinstance(s, ast.Assign) and len(s.targets) == 1 \
                and isinstance(s.targets[0], ast.Name) and s.targets[0].id == name:
            start, at = s.value, i
        elif any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
                 for n in ast.walk(s)):
            start = None
    if start is None:
        return None
    # the rewrite writes the start's text again at the loop: it must mean the same there
    # (review 42: `c = 2; c = c + 1` read `c + 1` at the loop, 4 for 3), so it reads neither
    # the counter nor a name bound again after it, and calls nothing (run twice)
    reads = {n.id for n in ast.walk(start) if isinstance(n, ast.Name)}
    if name in reads or any(isinstance(n, (ast.Call, ast.NamedExpr, ast.Await, ast.Yield))
                            for n in ast.walk(start)):
        return None
    if any(isinstance(n, ast.Name) and n.id in reads and isinstance(n.ctx, ast.Store)
           for s in before[at + 1:] for n in ast.walk(s)):
        return None
    return start


def _literal_int(node: ast.expr) -> int | None:
    return node.value if isinstance(node, ast.Constant) and type(node.value) is int else None


def _shifted_range(text: str, call: ast.Call, name: str,
                   ) -> tuple[str, str, list[tuple[str, str, str]]] | None:
    """``for name in range(a, b, s)`` (``s`` a positive int or a name, taken as positive: a
    negative one counts wrong, and the rewrite disagrees): a loop over ``INDEX`` in
    ``range(count)`` whose item ``name`` is ``a + s * INDEX``."""
    step = call.args[2] if len(call.args) == 3 else ast.Constant(1)
    if isinstance(step, ast.Name):
        s = step.id
    elif isinstance(step, ast.Constant) and type(step.value) is int and step.value > 0:
        s = str(step.value)
    else:
        return None
    a, b = text_of(text, call.args[0]), text_of(text, call.args[1])
    count = f"({b} - ({a}) + {s} - 1) // {s}" if s != "1" else f"{b} - ({a})"
    pick = f"({a}) + {s} * {INDEX}" if s != "1" else f"({a}) + {INDEX}"
    return INDEX, count, [(name, pick, f"tf.range({a}, {b}, {s})")]


def _tensor_ref(node: ast.AST | None, tensors: frozenset[str]) -> bool:
    """``node`` is a tensor argument or a slice of one (``x``, ``x[1:]``)."""
    while isinstance(node, ast.Subscript):
        node = node.value
    return isinstance(node, ast.Name) and node.id in tensors


def _stores(stmts: list[ast.stmt]) -> set[str]:
    return {n.id for s in stmts for n in ast.walk(s)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _loads(nodes: list[ast.AST]) -> list[ast.Name]:
    return [n for s in nodes for n in ast.walk(s)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]


def _after(fn: ast.FunctionDef, node: ast.AST) -> list[ast.AST]:
    """Nodes of ``fn`` that come after ``node`` in the text."""
    end = (node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
    return [n for n in ast.walk(fn) if hasattr(n, "lineno") and isinstance(n, ast.expr)
            and (n.lineno, n.col_offset) >= end]


def _collector(ctx: Any, fn: ast.FunctionDef, text: str, block: list[ast.stmt], loop: Any,
               stmts: list[ast.stmt], index: str, model: Any) -> Iteration | None:
    """The one statement of the body that hands the iteration's value out, the collector's
    creation before the loop and its one consumer after it."""
    found: list[tuple[str, ast.stmt, ast.expr, str]] = []  # (name, stmt, value, how)
    for s in stmts:
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) \
                and isinstance(s.value.func, ast.Attribute) and s.value.func.attr == "append" \
                and isinstance(s.value.func.value, ast.Name) and len(s.value.args) == 1:
            found.append((s.value.func.value.id, s, s.value.args[0], "append"))
        elif isinstance(s, ast.Assign) and len(s.targets) == 1:
            t = s.targets[0]
            if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) \
                    and isinstance(t.slice, ast.Name) and t.slice.id == index:
                found.append((t.value.id, s, s.value, "item"))
            elif isinstance(t, ast.Name) and isinstance(s.value, ast.Call) \
                    and isinstance(s.value.func, ast.Attribute) \
                    and s.value.func.attr == "write" and isinstance(s.value.func.value, ast.Name) \
                    and s.value.func.value.id == t.id and len(s.value.args) == 2 \
                    and isinstance(s.value.args[0], ast.Name) and s.value.args[0].id == index:
                found.append((t.id, s, s.value.args[1], "write"))
    sums = [u for u in getattr(model, "updates", ()) if u.statement and u.op == "add"
            and u.term is not None]
    if len(found) != 1:
        if found or model.shape != "reduction" or len(sums) != 1 or len(model.updates) != 1:
            return None
        return _accumulation(fn, block, loop, stmts, sums[0])
    name, stmt, value, how = found[0]
    # A TensorArray is carried from one write to the next: that is the collector, no state;
    # a running sum read after its update in each iteration is a prefix sum (a cumsum).
    state = set(model.carried) - {name, index}
    running = [u for u in getattr(model, "updates", ()) if u.name in state
               and u.name in getattr(model, "running", ()) and u.op == "add"
               and u.term is not None]
    if model.shape != "map" and not (
            (how == "write" or name not in model.carried)
            and state <= {u.name for u in running}):
        return None
    others = [s for s in stmts if s is not stmt]
    if any(name in {n.id for n in ast.walk(s) if isinstance(n, ast.Name)} for s in others) \
            or name in {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}:
        return None
    at = stmts.index(stmt)
    if _stores(stmts[at + 1:]) & {n.id for n in _loads([value])}:
        return None
    pos = block.index(loop)
    init = next((s for s in reversed(block[:pos]) if isinstance(s, ast.Assign)
                 and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
                 and s.targets[0].id == name), None)
    if init is None or not _creates(ctx, init.value, how):
        return None
    between = block[block.index(init) + 1:pos]
    if any(name in {n.id for n in ast.walk(s) if isinstance(n, ast.Name)} for s in between):
        return None
    later = _after(fn, loop)
    # ``frame = tf.stack(frame, axis=-2)``: the list's name rebound to its join; what reads
    # the name after that reads the join, not the list (held-out round 6's c09)
    rebinding = next((s for s in block[pos + 1:] if isinstance(s, ast.Assign)
                      and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
                      and s.targets[0].id == name), None)
    bound = (rebinding.end_lineno, rebinding.end_col_offset) if rebinding else None
    uses = [n for n in later if isinstance(n, ast.Name) and n.id == name
            and (rebinding is None or n is not rebinding.targets[0])
            and (bound is None or (n.lineno, n.col_offset) < bound)]
    if len(uses) != 1:
        return None
    # The body's own names must not be read after the loop (they become the function's);
    # a running value's may (its last value is what the loop leaves) only where it is
    # batched, which the rewrite says by raising.
    if _stores(stmts) & {n.id for n in later if isinstance(n, ast.Name)} - {name}:
        return None
    use = uses[0]
    buffer = _numpy_buffer(ctx, init.value) if how == "item" else None
    consumer: ast.expr | None
    if buffer is not None:
        # A NumPy buffer filled row by row (``out = np.ndarray(x.shape); out[i] = f(x[i])``,
        # held-out round 10's c05): what reads it after the loop reads the batch as an array
        # of the buffer's dtype (the rows converted as NumPy's item assignment converts them).
        consumer, join = use, f"array:{buffer}"
    else:
        consumer, join = _consumer_of(ctx, fn, use, how)
    if consumer is None:
        return None
    it = Iteration(loop, index, "", [], others, value, join, name, init, consumer)
    it.running = {id(u.node): u for u in running}
    if running and _stores(stmts) & {n.id for n in later if isinstance(n, ast.Name)} - {name}:
        return None
    return it


#: NumPy buffers a loop may fill row by row: the position of their dtype argument, and the
#: argument whose dtype they take when given none ("" for float64).
NUMPY_BUFFERS = {"numpy.ndarray": (1, ""), "numpy.zeros": (1, ""), "numpy.empty": (1, ""),
                 "numpy.ones": (1, ""), "numpy.zeros_like": (1, "like"),
                 "numpy.empty_like": (1, "like")}


def _numpy_buffer(ctx: Any, value: ast.expr) -> str | None:
    """``value`` as a NumPy buffer's creation: ``"<numpy alias>:<dtype>"``, the dtype as
    source text (``np.float64``, the ``dtype=`` given, ``np.asarray(x).dtype`` for
    ``np.zeros_like(x)``), None for anything else."""
    if not isinstance(value, ast.Call) or not value.args \
            or not isinstance(value.func, ast.Attribute):
        return None
    q = ctx.call_qualname(value) or ""
    if q not in NUMPY_BUFFERS or any(k.arg not in ("dtype", "order") for k in value.keywords):
        return None
    at, default = NUMPY_BUFFERS[q]
    given = next((k.value for k in value.keywords if k.arg == "dtype"), None)
    if given is None and len(value.args) > at:
        given = value.args[at]
    np_alias = ast.unparse(value.func.value)
    if given is not None:
        return f"{np_alias}:{ast.unparse(given)}"
    if default == "like":
        return f"{np_alias}:{np_alias}.asarray({ast.unparse(value.args[0])}).dtype"
    return f"{np_alias}:{np_alias}.float64"


def _creates(ctx: Any, value: ast.expr, how: str) -> bool:
    if how == "append":
        return isinstance(value, ast.List) and not value.elts
    if how == "item":
        if _numpy_buffer(ctx, value) is not None:
            return True
        return isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult) \
            and isinstance(value.left, ast.List) and len(value.left.elts) == 1
    if how == "write":
        return isinstance(value, ast.Call) and (ctx.call_qualname(value) or "").endswith(
            "TensorArray")
    return False


def _parent(fn: ast.AST, node: ast.AST) -> ast.AST | None:
    for n in ast.walk(fn):
        for c in ast.iter_child_nodes(n):
            if c is node:
                return n
    return None


def _consumer_of(ctx: Any, fn: ast.FunctionDef, use: ast.Name,
                 how: str) -> tuple[ast.expr | None, str]:
    p = _parent(fn, use)
    if how == "write":
        if isinstance(p, ast.Attribute) and p.attr == "stack":
            call = _parent(fn, p)
            if isinstance(call, ast.Call) and call.func is p and not call.args:
                return call, "stack"
        return None, ""
    return _joined(ctx, p, use)


def _joined(ctx: Any, p: ast.AST | None, lst: ast.AST) -> tuple[ast.expr | None, str]:
    """How the call ``p`` takes the list ``lst``: stacked, concatenated along axis 0, or
    reduced as a whole."""
    if not isinstance(p, ast.Call) or not p.args or p.args[0] is not lst:
        return None, ""
    if ctx.is_builtin(p.func, "sum") and len(p.args) == 1 and not p.keywords:
        # Python's sum of tensors, no start: 0 + t1 + t2 ... is their add_n (round 8's c09)
        return p, "add_n"
    q = ctx.call_qualname(p) or ""
    axis = next((k.value for k in p.keywords if k.arg == "axis"), None)
    if axis is None and len(p.args) > 1:
        axis = p.args[1]
    zero = axis is None or (isinstance(axis, ast.Constant) and axis.value == 0)
    if q in STACKS and zero and len(p.args) == 1 and all(k.arg == "axis" for k in p.keywords):
        return p, "stack"
    if q == "tensorflow.stack" and len(p.args) <= 2 and all(k.arg == "axis" for k in p.keywords):
        # another axis: the stack along axis 0, that axis moved there
        k = _axis_text(axis)
        return (p, f"stack:{k}") if k else (None, "")
    if q in CONCATS and axis is not None and zero:
        return p, "concat"
    if q in CONCATS and axis is not None and len(p.args) <= 2:
        k = _axis_text(axis)  # (windows joined along time: held-out round 5)
        return (p, f"concat:{k}") if k else (None, "")
    if q in LIST_REDUCTIONS and len(p.args) == 1:
        return p, LIST_REDUCTIONS[q] or "list"
    return None, ""


def _axis_text(axis: ast.expr | None) -> str:
    """A join's axis as source text: a constant int, or a name (``axis=d_axis``, evaluated
    where the join is); empty for anything else."""
    if isinstance(axis, ast.Name):
        return axis.id
    try:
        k = ast.literal_eval(axis) if axis is not None else None
    except ValueError:
        return ""
    return str(k) if isinstance(k, int) and not isinstance(k, bool) else ""


def _accumulation(fn: ast.FunctionDef, block: list[ast.stmt], loop: Any,
                  stmts: list[ast.stmt], update: Any) -> Iteration | None:
    """A loop that adds one term per iteration to a running total: the term's statements
    (those the update reads) and the term."""
    others = [s for s in stmts if s is not update.node]
    if others and stmts[-1] is not update.node:
        return None
    if update.name in {n.id for s in others for n in ast.walk(s) if isinstance(n, ast.Name)}:
        return None
    later = _after(fn, loop)
    if _stores(others) & {n.id for n in later if isinstance(n, ast.Name)}:
        return None
    return Iteration(loop, "", "", [], others, update.term, "sum", update.name)


def _comprehension(ctx: Any, fn: ast.FunctionDef, text: str, model: Any,
                   tensors: frozenset[str] = frozenset()) -> Iteration | None:
    """A comprehension joined by its consumer: ``tf.stack([...])``, or ``rows = [...]``
    taken once by ``tf.stack(rows)`` after it (``name``: rows)."""
    node = model.node
    gen = node.generators[0]
    if gen.ifs or gen.is_async or not isinstance(node, (ast.ListComp, ast.GeneratorExp)):
        return None
    domain = loop_domain(ctx, text, model, tensors, ranges=True)
    if domain is None:
        return None
    index, stop, binds = domain
    parent = ctx.parent(node)
    name = ""
    if isinstance(parent, ast.Assign) and len(parent.targets) == 1 \
            and isinstance(parent.targets[0], ast.Name) and parent.value is node:
        name = parent.targets[0].id
        uses = [n for n in _after(fn, parent) if isinstance(n, ast.Name) and n.id == name
                and isinstance(n.ctx, ast.Load)]
        if len(uses) != 1:
            return None
        consumer, join = _joined(ctx, _parent(fn, uses[0]), uses[0])
        stores = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == name
                  and not isinstance(n.ctx, ast.Load)]
        shared = len(stores) > 1
        if shared and join != "stack":
            return None
    else:
        consumer, join = _joined(ctx, parent, node)
        shared = False
    if consumer is None:
        return None
    it = Iteration(node, index, stop, binds, [], node.elt, join, name, None, consumer)
    it.shared = shared
    _finish(it, index)
    return it


#: tf.map_fn keywords that do not change what one iteration computes.
_MAP_FN_KEYWORDS = frozenset({"fn_output_signature", "dtype", "parallel_iterations",
                              "back_prop", "swap_memory", "infer_shape", "name"})


def map_fn_parts(call: ast.Call) -> tuple[ast.expr, ast.expr] | None:
    """``fn`` and ``elems`` of ``tf.map_fn(fn, elems, ...)`` (``keras.ops.map(f, xs)``), given
    by position or keyword (``elems=(a, b)``); None when another keyword changes the
    iteration."""
    given = {k.arg: k.value for k in call.keywords}
    given = {{"f": "fn", "xs": "elems"}.get(k, k) if k else k: v for k, v in given.items()}
    if None in given or any(k not in _MAP_FN_KEYWORDS | {"fn", "elems"} for k in given) \
            or len(call.args) > 3 or (len(call.args) == 3 and "dtype" in given):
        return None
    # tf.map_fn(fn, elems, tf.float32): the third positional is the output's dtype
    positional = call.args[:2]
    parts = [*positional] + [given[k] for k in ("fn", "elems")[len(positional):] if k in given]
    if len(parts) != 2:
        return None
    return parts[0], parts[1]


def _tuple_parts(value: ast.expr, param: str, count: int) -> ast.expr | None:
    """``value`` with each ``param[k]`` (a constant ``k`` below ``count``) as its own name
    (``_tfperf_i_e{k}``); None where ``param`` is used any other way."""
    value = copy.deepcopy(value)

    class Parts(ast.NodeTransformer):
        ok = True

        def visit_Subscript(self, node: ast.Subscript) -> Any:
            if isinstance(node.value, ast.Name) and node.value.id == param:
                k = node.slice
                if isinstance(k, ast.Constant) and isinstance(k.value, int) \
                        and 0 <= k.value < count and isinstance(node.ctx, ast.Load):
                    return ast.Name(f"{INDEX}_e{k.value}", ast.Load())
                self.ok = False
            return self.generic_visit(node)

        def visit_Name(self, node: ast.Name) -> Any:
            if node.id == param:
                self.ok = False
            return node

    fix = Parts()
    new = fix.visit(value)
    return new if fix.ok else None


def _map_fn(ctx: Any, fn_def: ast.FunctionDef, text: str, call: ast.Call) -> Iteration | None:
    """``tf.map_fn(fn, elems)``: one iteration is ``fn`` of one row of ``elems`` (a function
    of one argument over one tensor, to batch its body: :mod:`tfperf.tune.map_bodies` reads a
    lambda, a def, a partial; any callable, to map it)."""
    from tfperf.tune.map_bodies import map_body
    from tfperf.tune.source import tf_alias

    found = map_fn_parts(call)
    if found is None:
        return None
    fn, elems = found
    first = elems.elts[0] if isinstance(elems, (ast.Tuple, ast.List)) and elems.elts else elems
    it = Iteration(call, INDEX, f"{text_of(text, first)}.shape[0]", [], [], fn, "map_fn",
                   "", None, call)
    body = map_body(ctx, fn_def, ctx.tree, fn, tf_alias(ctx.tree) or "tf")
    if body is not None and isinstance(elems, (ast.Tuple, ast.List)):
        # map_fn over a tuple (values, mask): the element read only as x[0], x[1]
        parts = _tuple_parts(body.value, body.param, len(elems.elts))
        if parts is not None:
            it.binds = [(f"{INDEX}_e{k}", f"{text_of(text, e)}[{INDEX}]", text_of(text, e))
                        for k, e in enumerate(elems.elts)]
            it.value = parts
            it.join = "stack"
    elif body is not None:
        over = text_of(text, elems)
        if not isinstance(elems, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)):
            over = f"({over})"  # ``a * b`` indexed is ``(a * b)[i]``
        it.binds = [(body.param, f"{over}[{INDEX}]", over)]
        it.value = body.value
        it.join = "stack"
    _finish(it, INDEX)
    return it
