"""``tf.data`` pipelines: a dataset followed back through method chains and re-assignments
to its source, the function a ``map`` runs, which ops in it are stateful random ops, and the
batches a loop over a pipeline hands to a call (how they are batched, padded shapes)."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from tfperf.lint.analysis.assignments import assigned_value
from tfperf.lint.analysis.syntax import body_nodes, keyword, own_nodes
from tfperf.lint.analysis.tf_functions import (
    SHAPE_OPTIONS,
    TfFunction,
    tf_function_called,
    tf_function_callee_names,
)
from tfperf.lint.semantic import DATASET_METHODS, DATASET_SOURCES, Context

# Sources whose dataset ends in a prefetch of its own: Keras's dataset utilities, and
# make_csv_dataset (its prefetch_buffer_size defaults to AUTOTUNE).
PREFETCHING_SOURCES = frozenset({*(q for q in DATASET_SOURCES if q.startswith("keras.")),
                                 "tensorflow.data.experimental.make_csv_dataset"})


@dataclass
class Pipeline:
    """A dataset followed back to where it is built: ``source`` (the source call, or the
    expression we could not see past), ``steps``: the method calls applied, in order, and
    ``known``: whether ``source`` is a recognised tf.data source call."""

    source: ast.AST
    steps: list[ast.Call]
    known: bool

    def methods(self) -> list[str]:
        return [s.func.attr for s in self.steps]

    def last(self) -> ast.Call | None:
        return self.steps[-1] if self.steps else None


def pipeline(ctx: Context, expr: ast.AST, _depth: int = 0) -> Pipeline:
    """Follow ``expr`` (a method chain, or a name assigned one, through ``ds = ds.map(f)``
    re-assignments) back to its source."""
    steps: list[ast.Call] = []
    node: ast.AST = expr
    while _depth < 50:
        _depth += 1
        if type(node) is ast.Call:
            func = node.func
            q = ctx.qualname(func)
            if q is not None:
                steps.reverse()
                return Pipeline(node, steps, q in DATASET_SOURCES)
            if type(func) is ast.Attribute and func.attr in DATASET_METHODS:
                steps.append(node)
                node = func.value
                continue
            break
        if type(node) is ast.Name:
            value = assigned_value(ctx, node)
            if value is None:
                break
            node = value
            continue
        if type(node) is ast.Attribute:
            value = _one_self_assignment(ctx, node)
            if value is None:
                break
            node = value
            continue
        break
    steps.reverse()
    return Pipeline(node, steps, False)


def _one_self_assignment(ctx: Context, attr: ast.Attribute) -> ast.expr | None:
    """Stop 39, pass B: ``self.ds`` that the class's methods assign once (``self.ds =
    ds.map(f).batch(32)`` in ``build()``): the dataset built in one method and read in
    another. Assigned twice or more (a train and a test split), or never, or given from
    outside (a parameter: its pipeline is the caller's): not followed."""
    if type(attr.value) is not ast.Name or attr.value.id != "self" \
            or type(attr.ctx) is not ast.Load:
        return None
    from tfperf.analysis.kinds import self_assignments, set_only_in_class

    values = self_assignments(ctx, attr).get(attr.attr)
    if values is None or len(values) != 1 or not set_only_in_class(ctx, attr, attr.attr):
        return None  # Review 39 (2): also assigned from outside (`t.ds = t.ds.cache()`)
    value = values[0]
    if type(value) is ast.Name:  # `self.ds = ds`: a pipeline built here, not a parameter
        b = ctx.binding(value)
        return value if b is not None and b.kind == "assign" else None
    return value if type(value) is ast.Call else None


def across_functions(ctx: Context, pipe: Pipeline) -> Pipeline:
    """A pipeline whose source is a call of a function defined in this module
    (``train_ds = make_dataset(files)``) continues inside it, from what it returns: the
    pipeline built in one function and consumed in another. One level, one ``return``."""
    call = pipe.source
    if pipe.known or type(call) is not ast.Call or type(call.func) is not ast.Name:
        return pipe
    b = ctx.binding(call.func)
    if b is None or b.kind != "def":
        return pipe
    returns = [n for n in own_nodes(b.value) if type(n) is ast.Return and n.value is not None]
    if len(returns) != 1:
        return pipe
    value = getattr(returns[0], "value", None)
    if value is None:
        return pipe
    inner = pipeline(ctx, value)
    return Pipeline(inner.source, inner.steps + pipe.steps, inner.known)


def is_tf_dataset(ctx: Context, expr: ast.AST) -> bool:
    """Stricter than ``ctx.is_dataset``: the pipeline starts at a tf.data source built here,
    or at a name the semantic model takes for a dataset (a parameter annotated
    ``tf.data.Dataset`` or named ``ds``/``dataset``). Attributes such as ``self._dataset``
    are not enough: other libraries (Grain, PyTorch) have datasets with ``map`` too."""
    pipe = pipeline(ctx, expr)
    if pipe.known or from_tfds(ctx, pipe.source):
        return True
    source = pipe.source
    if type(source) is not ast.Name:
        return False
    if ctx.is_dataset(source):
        return True
    # Built in the branches of an `if`/`elif` (files read here, tfds there): the name is a
    # tf.data pipeline when one of its assignments in this scope starts at a tf.data source.
    for b in ctx.scope_bindings(source):
        if b.kind == "assign" and b.value is not source:
            other = pipeline(ctx, b.value)
            if other.known or from_tfds(ctx, other.source):
                return True
    return False


# TensorFlow Datasets' loader: a tf.data.Dataset, or a dict/tuple of them.
TFDS_LOADERS = frozenset({"tensorflow_datasets.load"})


def from_tfds(ctx: Context, expr: ast.AST, _depth: int = 0) -> bool:
    """``expr`` is a dataset ``tfds.load`` made: the call, a name bound to it, a name
    unpacked from it (``(train, test), info = tfds.load(..., with_info=True)``) or an item
    of it (``dataset['train']``)."""
    if _depth > 6:
        return False
    t = type(expr)
    if t is ast.Call:
        q = ctx.qualname(getattr(expr, "func", None))
        return q is not None and q in TFDS_LOADERS
    if t is ast.Subscript:
        return from_tfds(ctx, expr.value, _depth + 1)
    if t is not ast.Name:
        return False
    b = ctx.binding(expr)  # type: ignore[arg-type]
    if b is None:
        return False
    if b.kind == "assign":
        return from_tfds(ctx, b.value, _depth + 1)
    if b.kind != "other" or type(b.value) not in (ast.Tuple, ast.List):
        return False
    stmt = ctx.parent(b.value)  # `a, b = x, y` / `(a, b), info = load(...)`
    while stmt is not None and type(stmt) in (ast.Tuple, ast.List):
        stmt = ctx.parent(stmt)
    if type(stmt) is not ast.Assign:
        return False
    value = stmt.value
    if type(value) in (ast.Tuple, ast.List) and len(stmt.targets) == 1:
        target = stmt.targets[0]
        for tgt, val in zip(getattr(target, "elts", ()), getattr(value, "elts", ()),
                            strict=False):
            if type(tgt) is ast.Name and tgt.id == b.name:
                return from_tfds(ctx, val, _depth + 1)
        return False
    return from_tfds(ctx, value, _depth + 1)


_PARTIAL = frozenset({"functools.partial"})


def mapped_argument(call: ast.Call) -> ast.AST | None:
    """What ``ds.map(f)`` / ``ds.map(map_func=f)`` is given to run."""
    fn: ast.AST | None = call.args[0] if call.args else None
    for k in call.keywords:
        if k.arg == "map_func":
            fn = k.value
    return fn


def _partial_of(ctx: Context, fn: ast.AST | None, depth: int = 0) -> ast.Call | None:
    """``functools.partial(f, ...)``, written there or bound to the name ``fn``."""
    if type(fn) is ast.Name and depth < 3:
        b = ctx.binding(fn)
        if b is not None and b.kind == "assign" and b.value is not fn:
            return _partial_of(ctx, b.value, depth + 1)
        return None
    if type(fn) is ast.Call and fn.args and ctx.qualname(fn.func) in _PARTIAL:
        return fn
    return None


def map_function(ctx: Context, call: ast.Call) -> ast.AST | None:
    """The lambda or module-level/local ``def`` that ``ds.map(fn)`` runs, if visible; seen
    through ``functools.partial(f, ...)`` (written in the call or bound to a name)."""
    fn = mapped_argument(call)
    partial = _partial_of(ctx, fn)
    if partial is not None:
        fn = partial.args[0]
    if type(fn) is ast.Lambda:
        return fn
    if type(fn) is ast.Name:
        b = ctx.binding(fn)
        if b is not None and b.kind == "def":
            return b.value
    if type(fn) is ast.Attribute:  # `ds.map(self.load)`: a method of the class here
        from tfperf.lint.analysis.callers import resolve_def

        return resolve_def(ctx, fn)
    return None


def map_function_flags(ctx: Context, call: ast.Call) -> dict[str, bool]:
    """Parameters of the mapped function that a ``functools.partial`` fixes to ``True`` or
    ``False`` (``partial(preprocess, augment=True)``): fixed while tracing, like defaults."""
    partial = _partial_of(ctx, mapped_argument(call))
    fn = map_function(ctx, call)
    args = getattr(fn, "args", None)
    if partial is None or args is None:
        return {}
    params = [a.arg for a in (*args.posonlyargs, *args.args)]
    out = {}
    for name, value in zip(params, partial.args[1:], strict=False):
        if type(value) is ast.Constant and type(value.value) is bool:
            out[name] = value.value
    for k in partial.keywords:
        if k.arg is not None and type(k.value) is ast.Constant and type(k.value.value) is bool:
            out[k.arg] = k.value.value
    return out


def called_qualnames(ctx: Context, fn: ast.AST) -> list[str | None]:
    """What each call in ``fn``'s body calls (``None`` where it is not an imported API)."""
    return [ctx.qualname(n.func) for n in body_nodes(fn) if type(n) is ast.Call]


def is_random_op(qualname: str | None) -> bool:
    """A stateful random op (fresh values per call): ``tf.random.uniform``,
    ``tf.image.random_flip_left_right``, Keras ``Random*`` layers. Stateless ops, which repeat
    for a given seed, are not."""
    if not qualname:
        return False
    last = qualname.rsplit(".", 1)[-1]
    if "stateless" in qualname:
        return False
    if qualname.startswith(("tensorflow.random.", "tensorflow.compat.v1.random.")):
        return last not in ("set_seed", "Generator", "get_global_generator", "create_rng_state",
                            "all_candidate_sampler", "experimental")
    if qualname.startswith("tensorflow.image.random_"):
        return True
    if qualname in ("tensorflow.random_uniform", "tensorflow.random_normal",
                    "tensorflow.compat.v1.random_uniform", "tensorflow.compat.v1.random_normal"):
        return True
    return qualname.startswith("keras.layers.Random")


# Dataset steps that batch; the last one decides the shapes a loop over the pipeline sees.
BATCHING_METHODS = frozenset({"batch", "padded_batch", "bucket_by_sequence_length",
                              "ragged_batch", "unbatch", "rebatch", "group_by_window"})


@dataclass
class BatchedLoop:
    """A call that gets the elements of a ``for`` loop over a batched pipeline: ``batching``
    is the pipeline's last batching step, ``before`` the steps applied before it."""

    batching: ast.Call
    before: list[ast.Call]


def _loaded_names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if type(n) is ast.Name}


def fed_batches(ctx: Context, call: ast.Call) -> BatchedLoop | None:
    """Whether ``call`` is passed (some of) the elements of its nearest enclosing ``for``
    loop, iterating a pipeline (``for x in ds``, ``for i, (x, y) in enumerate(ds)``) that
    ends in a batching step."""
    loop = next((lp for lp in ctx.enclosing_loops(call)
                 if type(lp) in (ast.For, ast.AsyncFor)), None)
    if loop is None:
        return None
    it, target = loop.iter, loop.target
    if type(it) is ast.Call and ctx.is_builtin(it.func, "enumerate") and it.args:
        it = it.args[0]
        if type(target) is ast.Tuple and len(target.elts) == 2:
            target = target.elts[1]
    elements = _loaded_names(target)
    if not any(_loaded_names(a) & elements
               for a in [*call.args, *(k.value for k in call.keywords)]):
        return None
    chain = pipeline(ctx, it).steps
    idx = [i for i, s in enumerate(chain) if s.func.attr in BATCHING_METHODS]
    if not idx:
        return None
    return BatchedLoop(chain[idx[-1]], chain[:idx[-1]])


def batches_into_tf_function(ctx: Context,
                              call: ast.Call) -> tuple[BatchedLoop, TfFunction] | None:
    """``call`` as a call of a ``tf.function`` whose shapes are not generalised (no
    ``input_signature`` or ``reduce_retracing``), passed the batches of a loop over a
    pipeline: (how they are batched, the traced function); else ``None``."""
    func = call.func
    name = func.id if type(func) is ast.Name else getattr(func, "attr", None)
    if name is None or name not in tf_function_callee_names(ctx) or not call.args:
        return None
    fed = fed_batches(ctx, call)
    if fed is None:
        return None
    target = tf_function_called(ctx, func)
    if target is None or any(o in target.options for o in SHAPE_OPTIONS):
        return None
    return fed, target


def static_padded_shapes(step: ast.Call, ctx: Context | None = None) -> bool:
    """A ``padded_batch`` step whose ``padded_shapes`` are written out with fixed sizes only
    (no ``-1``/``None``): every batch has the same shape but for the batch dimension. With
    ``ctx``, names are read through their one assignment (``MAX_LEN = 40``,
    ``shapes = ([MAX_LEN + 2], [MAX_LEN + 2])``)."""
    expr = keyword(step, "padded_shapes") or (step.args[1] if len(step.args) > 1 else None)
    return expr is not None and _fixed_sizes(expr, ctx, 4)


def _fixed_sizes(expr: ast.AST, ctx: Context | None, depth: int) -> bool:
    for n in ast.walk(expr):
        if type(n) is ast.Constant and n.value is None:
            return False  # None: padded to the longest element
        if type(n) is ast.UnaryOp and type(n.op) is ast.USub:
            return False  # -1: padded to the longest element
        if type(n) is ast.Name or type(n) is ast.Attribute or type(n) is ast.Call:
            if type(n) is ast.Call and type(n.func) is ast.Attribute \
                    and n.func.attr == "TensorShape":
                continue
            if type(n) is ast.Attribute and n.attr == "TensorShape":
                continue
            if type(n) is ast.Name and n.id in ("tf", "tensorflow"):
                continue
            if type(n) is ast.Name and ctx is not None and depth > 0 \
                    and type(ctx.parent(n)) is not ast.Attribute:
                value = assigned_value(ctx, n)
                if value is not None and _fixed_sizes(value, ctx, depth - 1):
                    continue
            return False  # a value this rule cannot read
    return True


# What a loop that only shows the elements calls: nothing to overlap the input with.
SHOW_CALLS = frozenset({"print", "display", "pprint"})


def printing_loop(ctx: Context, loop: ast.AST) -> bool:
    """``for x in ds: print(x)``: the elements are looked at, not consumed by work."""
    for stmt in loop.body:
        if type(stmt) is ast.Pass:
            continue
        call = stmt.value if type(stmt) is ast.Expr else None
        if type(call) is not ast.Call:
            return False
        func = call.func
        if not ((type(func) is ast.Name and func.id in SHOW_CALLS)
                or ctx.qualname(func) == "tensorflow.print"):
            return False
    return True


def looking_loop(ctx: Context, loop: ast.AST) -> bool:
    """``for rec in ds: parsed = tf.io.parse_single_example(rec, spec)``: a loop whose body
    only binds names to TensorFlow ops of the element (and shows them), so nothing is kept
    from one element to the next: a look at the data (a notebook parsing the record it just
    wrote), with no work for a prefetch to overlap."""
    body = [s for s in getattr(loop, "body", ()) if type(s) is not ast.Pass]
    if not body or getattr(loop, "orelse", None):
        return False
    for stmt in body:
        if type(stmt) is ast.Expr:
            call = stmt.value
            if not (type(call) is ast.Call and type(call.func) is ast.Name
                    and call.func.id in SHOW_CALLS):
                return False
            continue
        if type(stmt) is not ast.Assign or not all(type(t) is ast.Name for t in stmt.targets):
            return False
        for n in ast.walk(stmt.value):
            if type(n) is ast.Call and not (ctx.qualname(n.func) or "").startswith(
                    "tensorflow."):
                return False
    return True


def next_of_iter(ctx: Context, iter_call: ast.AST) -> bool:
    """``next(iter(ds))``: one element looked at, not a consumed pipeline."""
    parent = ctx.parent(iter_call)
    return type(parent) is ast.Call and type(parent.func) is ast.Name \
        and parent.func.id == "next"


# Dataset method → positional index of its ``num_parallel_calls`` argument.
PARALLEL_ARG = {"map": 1, "interleave": 3}


def parallel_calls_argument(call: ast.Call) -> ast.expr | None:
    """The ``num_parallel_calls`` given to ``ds.map(...)``/``ds.interleave(...)``, by keyword
    or by position, else None."""
    method = getattr(call.func, "attr", "")
    given = keyword(call, "num_parallel_calls")
    if given is None and len(call.args) > PARALLEL_ARG[method]:
        given = call.args[PARALLEL_ARG[method]]
    return given


def sequential_calls(value: ast.AST | None) -> bool:
    """``None`` or ``1``: what tf.data runs one element at a time (``None`` is the default)."""
    return type(value) is ast.Constant and (
        value.value is None or (type(value.value) is int and value.value == 1))


def parallel_calls_given(call: ast.Call) -> bool:
    """``ds.map(...)``/``ds.interleave(...)`` given a ``num_parallel_calls`` that is not
    literally sequential (``None``, ``1``), by keyword or by position."""
    given = parallel_calls_argument(call)
    return given is not None and not sequential_calls(given)


def parallel_only_when(ctx: Context, call: ast.Call) -> str | None:
    """``num_parallel_calls=AUTOTUNE if flag else None``: parallel in one branch only, the
    other sequential (``None``/``1``). Returns the condition's text as "when C" or "unless
    C", else None."""
    given = parallel_calls_argument(call)
    if type(given) is not ast.IfExp:
        return None
    seq_body, seq_else = sequential_calls(given.body), sequential_calls(given.orelse)
    if seq_body == seq_else:
        return None  # both branches parallel (or both sequential: not given at all, above)
    cond = ctx.source_of(given.test)
    cond = " ".join(cond.split())
    return f"unless {cond}" if seq_body else f"when {cond}"
