"""Loops and what they iterate: ``range`` loops and what sizes them, loop targets and
iterables, loops over datasets or tensors, and loops that walk a tensor element by element
(TFP101's question, shared by the loop, host-sync and transpose rules)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from tfperf.lint.semantic import TENSOR_ANNOTATIONS, Context, returns_tensor

STACKING_CALLS = frozenset({
    "tensorflow.stack", "tensorflow.concat", "tensorflow.add_n", "tensorflow.math.add_n",
    "tensorflow.convert_to_tensor", "keras.ops.stack", "keras.ops.concatenate",
    # TF1 spellings: `tf.pack` (before 1.0) and the compat.v1 names of the same ops.
    "tensorflow.pack", "tensorflow.compat.v1.stack", "tensorflow.compat.v1.concat",
    "tensorflow.compat.v1.add_n", "tensorflow.compat.v1.convert_to_tensor",
})


def range_args(ctx: Context, it: ast.AST) -> list[ast.expr] | None:
    """The arguments of a builtin ``range(...)`` or ``tf.range(...)`` call, else ``None``."""
    if type(it) is not ast.Call or it.keywords:
        return None
    if ctx.is_builtin(it.func, "range") or ctx.qualname(it.func) == "tensorflow.range":
        return list(it.args)
    return None


def range_stop(args: list[ast.expr]) -> ast.expr | None:
    if len(args) == 1:
        return args[0]
    if len(args) in (2, 3):
        return args[1]
    return None


@dataclass(frozen=True)
class Sized:
    """Where a loop bound comes from: ``obj`` measured by ``how`` ("shape", "len",
    "tf.shape") along ``axis`` (an int when literal)."""

    obj: ast.expr
    how: str
    axis: int | None


def sized_by(ctx: Context, stop: ast.AST | None) -> Sized | None:
    """``x.shape[k]``, ``x.get_shape()[k]``, ``tf.shape(x)[k]``, ``len(x)`` (also wrapped in
    ``int(...)``) → what is measured; ``None`` for any other bound."""
    if stop is None:
        return None
    if type(stop) is ast.Call and ctx.is_builtin(stop.func, "int") and len(stop.args) == 1:
        stop = stop.args[0]
    if type(stop) is ast.Call and ctx.is_builtin(stop.func, "len") and len(stop.args) == 1:
        return Sized(stop.args[0], "len", 0)
    if type(stop) is not ast.Subscript:
        return None
    sl = stop.slice
    axis = sl.value if type(sl) is ast.Constant and type(sl.value) is int else None
    base = stop.value
    if type(base) is ast.Attribute and base.attr == "shape":
        return Sized(base.value, "shape", axis)
    if type(base) is ast.Call:
        if type(base.func) is ast.Attribute and base.func.attr == "get_shape" and not base.args:
            return Sized(base.func.value, "shape", axis)
        if ctx.qualname(base.func) in ("tensorflow.shape", "keras.ops.shape") and base.args:
            return Sized(base.args[0], "tf.shape", axis)
    return None


def in_chunks(ctx: Context, it: ast.AST | None) -> bool:
    """``range(0, n, batch_size)`` / ``tf.range(0, n, batch_size)``: each iteration takes a
    chunk (``x[i:i + batch_size]``), a batch already, not one element."""
    if type(it) is not ast.Call:
        return False
    if not (ctx.is_builtin(it.func, "range") or ctx.qualname(it.func) == "tensorflow.range"):
        return False
    step = it.args[2] if len(it.args) > 2 else next(
        (k.value for k in it.keywords if k.arg == "delta"), None)
    return step is not None and not (type(step) is ast.Constant and step.value in (1, -1))


_LIST_DISPLAYS = (ast.List, ast.Tuple, ast.ListComp, ast.Dict, ast.DictComp)


def measures_list(ctx: Context, obj: ast.AST) -> bool:
    """``len(obj)`` measures a Python list, or may: ``obj`` is a list display, an attribute
    that is not a tensor (``cfg.STRIDES``, ``self.heads``), or a name its scope binds as a
    parameter not annotated as a tensor, or to a list display, anywhere (the branch that
    made it a tensor may not be the one that ran)."""
    if isinstance(obj, _LIST_DISPLAYS):
        return True
    if type(obj) is ast.Attribute:
        return not ctx.is_tensor_like(obj)
    if type(obj) is not ast.Name:
        return False
    name = obj.id
    for n in ast.walk(ctx.scope_of(obj)):
        t = type(n)
        if t is ast.arg and n.arg == name:
            ann = n.annotation
            if ann is None or ctx.qualname(ann) not in TENSOR_ANNOTATIONS:
                return True
        elif t is ast.Name and n.id == name and type(n.ctx) is ast.Store:
            p = ctx.parent(n)
            if type(p) is ast.Assign and isinstance(p.value, _LIST_DISPLAYS):
                return True
    return False


def loop_var(loop: ast.AST) -> str | None:
    target = getattr(loop, "target", None)
    return target.id if type(target) is ast.Name else None


def loop_body(loop: ast.AST) -> list[ast.AST]:
    """The statements (or, for a comprehension, expressions) run per iteration."""
    if type(loop) in (ast.For, ast.AsyncFor, ast.While):
        return list(loop.body)
    parts = [getattr(loop, f) for f in ("elt", "key", "value") if hasattr(loop, f)]
    for gen in loop.generators:
        parts.extend(gen.ifs)
    return parts


def counts_list_items(ctx: Context, it: ast.AST) -> bool:
    """``tf.range(len(paths))``: a tensor counter over the indices of something that is not
    a tensor (a Python list of file paths or layers), as ``range(len(paths))`` is: the items
    are Python objects, not a tensor's elements."""
    if type(it) is not ast.Call or ctx.qualname(it.func) != "tensorflow.range" or not it.args:
        return False
    sized = sized_by(ctx, range_stop(list(it.args)))
    return sized is not None and sized.how == "len" and not ctx.is_tensor_like(sized.obj)


# Calls that only show or store their arguments: plots, prints, image and file writes.
_SINK_ROOTS = ("matplotlib.", "seaborn.", "PIL.", "IPython.display.", "cv2.imshow",
               "cv2.imwrite")
_SINK_METHODS = frozenset({"imshow", "matshow", "plot", "scatter", "hist", "bar", "text",
                           "set_title", "set_xlabel", "set_ylabel", "savefig", "write",
                           "writerow"})


def host_sink(ctx: Context, call: ast.Call) -> bool:
    """``call`` shows or stores what it is given (``plt.imshow(...)``, ``ax.plot(...)``,
    ``print(...)``, ``f.write(...)``): a loop doing its tensor work for such calls is drawing
    or logging item by item, and batching that work saves nothing next to the sink."""
    f = call.func
    if type(f) is ast.Name and f.id == "print" and ctx.is_builtin(f, "print"):
        return True
    q = ctx.qualname(f) or ""
    if q.startswith(_SINK_ROOTS):
        return True
    return type(f) is ast.Attribute and f.attr in _SINK_METHODS and not q.startswith(
        ("tensorflow.", "keras.")) and not ctx.is_tensor_like(f.value)


def _split_at_sinks(ctx: Context, roots: list[ast.AST],
                    skip: set[int]) -> tuple[list[ast.AST], list[ast.AST]]:
    """The nodes under ``roots`` outside sink calls (and outside ``skip``), and the sink
    calls met."""
    out: list[ast.AST] = []
    sinks: list[ast.AST] = []
    stack = list(reversed(roots))
    while stack:
        n = stack.pop()
        if id(n) in skip:
            continue
        if type(n) is ast.Call and host_sink(ctx, n):
            sinks.append(n)
            continue
        out.append(n)
        stack.extend(ast.iter_child_nodes(n))
    return out, sinks


def body_outside_sinks(ctx: Context, loop: ast.AST) -> list[ast.AST]:
    """The nodes a loop runs per iteration, less the arguments of its sink calls
    (:func:`host_sink`) and less the assignments of names that only those arguments read
    (``img = tf.reshape(x[i], (28, 28)); plt.imshow(img)``)."""
    body = loop_body(loop)
    out, sinks = _split_at_sinks(ctx, body, set())
    shown = {n.id for s in sinks for n in ast.walk(s)
             if type(n) is ast.Name and type(n.ctx) is ast.Load}
    if not shown:
        return out
    read = {n.id for n in out if type(n) is ast.Name and type(n.ctx) is ast.Load}
    skip = {id(n) for n in out if type(n) is ast.Assign and len(n.targets) == 1
            and type(n.targets[0]) is ast.Name and n.targets[0].id in shown - read}
    return _split_at_sinks(ctx, body, skip)[0] if skip else out


def walk_body(loop: ast.AST) -> Iterator[ast.AST]:
    for stmt in loop_body(loop):
        yield from ast.walk(stmt)


def indexes_with(node: ast.AST, var: str) -> bool:
    """``node`` is a subscript whose index mentions ``var`` (``a[i]``, ``a[:, i]``)."""
    if type(node) is not ast.Subscript:
        return False
    return any(type(n) is ast.Name and n.id == var for n in ast.walk(node.slice))


def does_tensor_work(ctx: Context, nodes: list[ast.AST]) -> bool:
    """Some node calls a tensor-returning TF API or does arithmetic on a tensor."""
    for node in nodes:
        t = type(node)
        if t is ast.Call:
            q = ctx.qualname(node.func)
            if q and returns_tensor(q):
                return True
        elif t is ast.BinOp:
            if ctx.is_tensor_like(node.left) or ctx.is_tensor_like(node.right):
                return True
        elif t is ast.AugAssign and (ctx.is_tensor_like(node.value)
                                     or ctx.is_tensor_like(node.target)):
            return True
    return False


@dataclass(frozen=True)
class ElementLoop:
    """A loop that visits a tensor one element at a time. ``kind``: "index" (``for i in
    range(<size of x>)`` indexing with ``i``) or "iterate" (``for row in t``)."""

    loop: ast.AST
    var: str
    kind: str
    sized: Sized | None = None


def element_loop(ctx: Context, loop: ast.AST, strict: bool = True) -> ElementLoop | None:
    """Whether ``loop`` (a ``for`` statement or a comprehension) walks a tensor element by
    element doing tensor work per element; see TFP101's docs. With ``strict=False`` any
    ``range(...)`` loop that indexes with its variable counts, whatever its bound: the
    caller must then find its own evidence that tensors are involved. Memoised per module
    (several rules ask about the same loops)."""
    cache: dict[tuple[int, bool], ElementLoop | None] = ctx.cached("element_loop", dict)
    key = (id(loop), strict)
    if key not in cache:
        cache[key] = _element_loop(ctx, loop, strict)
    return cache[key]


def _element_loop(ctx: Context, loop: ast.AST, strict: bool) -> ElementLoop | None:
    if type(loop) in (ast.For, ast.AsyncFor):
        gen_target, it = loop.target, loop.iter
    elif type(loop) in (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp):
        if len(loop.generators) != 1:
            return None
        gen_target, it = loop.generators[0].target, loop.generators[0].iter
    else:
        return None
    if type(gen_target) is ast.Tuple:
        return _enumerated_tensor(ctx, loop, gen_target, it)
    if type(gen_target) is not ast.Name:
        return None
    var = gen_target.id
    if type(it) is ast.Call and type(it.func) is ast.Name and it.func.id == "range":
        # Cheap syntactic tests first: most loops stop here, before any name resolution.
        sized = sized_by(ctx, range_stop(it.args)) if not it.keywords else None
        if strict:
            if sized is None:
                return None
            if sized.how == "len" and not ctx.is_tensor_like(sized.obj):
                return None  # a list's length: a loop over a few layers or files is fine
        if range_args(ctx, it) is None:
            return None  # `range` rebound to something else
        nodes = list(walk_body(loop))
        indexed = [n for n in nodes if indexes_with(n, var)]
        if not indexed:
            return None
        if not strict:
            return ElementLoop(loop, var, "index", sized)
        if ctx.is_tensor_like(sized.obj) or any(ctx.is_tensor_like(n.value) for n in indexed) \
                or does_tensor_work(ctx, nodes):
            return ElementLoop(loop, var, "index", sized)
        return None
    # Iterating a tensor (including `tf.range(n)`) eagerly. Inside tf.function AutoGraph
    # turns this into a graph loop, a different trade-off: stay quiet there.
    if ctx.imports_tf and ctx.is_tensor_like(it) and not ctx.in_tf_function(loop) \
            and not counts_list_items(ctx, it):
        nodes = list(walk_body(loop))
        uses = any(type(n) is ast.Name and n.id == var for n in nodes)
        if uses and does_tensor_work(ctx, nodes):
            return ElementLoop(loop, var, "iterate", None)
    return None


def _enumerated_tensor(ctx: Context, loop: ast.AST, target: ast.Tuple,
                       it: ast.AST) -> ElementLoop | None:
    """``for i, x in enumerate(t)`` over a tensor ``t``, eagerly: ``range(len(t))`` and
    ``t[i]`` at once. The index counts when the body indexes with it (``out[:, :, i]``, a
    channel of another tensor), else the element when the body does tensor work on it."""
    if not (type(it) is ast.Call and type(it.func) is ast.Name and it.func.id == "enumerate"
            and len(it.args) == 1 and not it.keywords and ctx.is_builtin(it.func, "enumerate")):
        return None
    if len(target.elts) != 2 or not all(type(e) is ast.Name for e in target.elts):
        return None
    index, element = (e.id for e in target.elts)
    seq = it.args[0]
    if not ctx.imports_tf or not ctx.is_tensor_like(seq) or ctx.in_tf_function(loop):
        return None
    nodes = list(walk_body(loop))
    if not does_tensor_work(ctx, nodes):
        return None
    if any(indexes_with(n, index) for n in nodes):
        return ElementLoop(loop, index, "index", Sized(seq, "shape", 0))
    if any(type(n) is ast.Name and n.id == element for n in nodes):
        return ElementLoop(loop, element, "iterate", None)
    return None


def loops_walking_elements(ctx: Context, node: ast.AST) -> list[ElementLoop]:
    """The element-by-element loops (see :func:`element_loop`) that run ``node``."""
    out = []
    for loop in ctx.enclosing_loops(node):
        el = element_loop(ctx, loop)
        if el is not None:
            out.append(el)
    return out


def header_end(loop: ast.AST) -> ast.AST:
    """The node ending a loop's header (for a finding that spans ``for x in it``)."""
    if type(loop) in (ast.For, ast.AsyncFor):
        return loop.iter
    return loop


def loop_targets(loop: ast.AST) -> set[str]:
    """Names a ``for`` loop or comprehension binds per iteration (all generators)."""
    if type(loop) in (ast.For, ast.AsyncFor):
        targets = [loop.target]
    elif hasattr(loop, "generators"):
        targets = [g.target for g in loop.generators]
    else:
        return set()
    return {n.id for t in targets for n in ast.walk(t) if type(n) is ast.Name}


# Progress bars yield what they wrap (`tqdm(range(n), desc=...)`); `trange(n)` is
# `tqdm(range(n))`.
PROGRESS_BARS = frozenset({"tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.notebook.tqdm",
                           "tqdm.std.tqdm", "tqdm.autonotebook.tqdm"})
PROGRESS_RANGES = frozenset({"tqdm.trange", "tqdm.auto.trange", "tqdm.notebook.trange",
                             "tqdm.std.trange", "tqdm.autonotebook.trange"})


def progress_wrapped(ctx: Context | None, it: ast.AST) -> ast.expr | None:
    """What a ``tqdm`` bar wraps (``tqdm(zip(ds, names), total=n)`` → ``zip(ds, names)``):
    a progress bar yields its iterable's values unchanged."""
    if ctx is None or type(it) is not ast.Call or not it.args \
            or ctx.call_qualname(it) not in PROGRESS_BARS:
        return None
    return it.args[0]


def loop_iterables(loop: ast.AST, ctx: Context | None = None) -> list[ast.expr]:
    """What a ``for`` loop or comprehension iterates; ``enumerate``/``zip`` unwrapped, and
    ``tqdm`` bars around or inside them where ``ctx`` resolves the name."""
    if type(loop) in (ast.For, ast.AsyncFor):
        its = [loop.iter]
    elif hasattr(loop, "generators"):
        its = [g.iter for g in loop.generators]
    else:
        return []
    out: list[ast.expr] = []
    for _ in range(4):  # `enumerate(tqdm(zip(a, b)))`: a few wrappers deep at most
        more: list[ast.expr] = []
        for it in its:
            inner = progress_wrapped(ctx, it)
            if inner is not None:
                more.append(inner)
            elif type(it) is ast.Call and type(it.func) is ast.Name \
                    and it.func.id in ("enumerate", "zip") and it.args:
                more.extend(it.args if it.func.id == "zip" else it.args[:1])
            else:
                out.append(it)
        if not more:
            break
        its = more
    else:
        out.extend(its)
    return out


def iterates_dataset(ctx: Context, loop: ast.AST) -> bool:
    """A loop over a ``tf.data`` dataset: one whole batch per iteration."""
    return any(ctx.is_dataset(it) for it in loop_iterables(loop, ctx))


def iterates_tensor(ctx: Context, loop: ast.AST) -> bool:
    """A loop over a tensor's rows (``for row in t``, ``enumerate(t)``), not a dataset."""
    return any(ctx.is_tensor_like(it) and not ctx.is_dataset(it)
               for it in loop_iterables(loop, ctx))


def small_literal_range(ctx: Context, loop: ast.AST, limit: int = 8) -> bool:
    """``for _ in range(3)``: a loop over a handful of iterations (literal bound)."""
    it = getattr(loop, "iter", None)
    args = range_args(ctx, it) if it is not None else None
    if not args:
        return False
    stop = args[0] if len(args) == 1 else args[1]
    return type(stop) is ast.Constant and type(stop.value) is int and stop.value <= limit


def guarded(ctx: Context, node: ast.AST, stop: ast.AST | None) -> bool:
    """``node`` runs under an ``if`` (or a conditional expression) between it and ``stop``
    (its loop or function): a step that records only now and then."""
    for p in ctx.ancestors(node):
        if p is stop:
            return False
        if type(p) in (ast.If, ast.IfExp):
            return True
        if type(p) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda):
            return False
    return False
