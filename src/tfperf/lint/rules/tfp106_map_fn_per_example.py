"""TFP106: ``tf.map_fn`` (or a per-image augmentation layer) running batchable ops one example
at a time."""

from __future__ import annotations

import ast
import builtins
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

from tfperf.core.findings import Finding
from tfperf.lint.analysis.batched_helpers import batched_functions, delegate, local_batched_helper
from tfperf.lint.analysis.callers import bound_arguments, calls_of
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

if TYPE_CHECKING:
    from tfperf.analysis.project import Project
    from tfperf.analysis.summary import ModuleSummary

MAP_FN_CALLS = frozenset({"tensorflow.map_fn", "tensorflow.compat.v1.map_fn"})
PARTIAL_CALLS = frozenset({"functools.partial"})

# Elementwise TF functions: on a whole tensor they do exactly what they do row by row.
_ELEMENTWISE_LAST = frozenset({
    "sigmoid", "tanh", "exp", "expm1", "log", "log1p", "log_sigmoid", "abs", "sqrt", "rsqrt",
    "square", "relu", "relu6", "elu", "selu", "gelu", "softplus", "softsign", "swish", "silu",
    "leaky_relu", "cast", "round", "floor", "ceil", "sign", "negative", "reciprocal",
    "sin", "cos", "tan", "erf", "erfc", "lgamma", "digamma", "is_nan", "is_inf", "is_finite",
    "logical_not", "add", "subtract", "multiply", "divide", "truediv", "maximum", "minimum",
    "pow", "greater", "greater_equal", "less", "less_equal", "equal", "not_equal",
    "logical_and", "logical_or", "clip_by_value", "identity", "stop_gradient",
    "squared_difference", "floordiv", "floormod", "mod", "saturate_cast", "convert_image_dtype",
})
# Ops that tf.vectorized_map cannot batch (host calls, file and string decoding, ragged
# outputs, stateful loops of its own): a map_fn over them is the right tool.
_BLOCKING_LAST = frozenset({
    "py_function", "numpy_function", "py_func", "eager_py_func", "read_file", "decode_jpeg",
    "decode_png", "decode_image", "decode_gif", "decode_bmp", "decode_raw", "decode_csv",
    "parse_single_example", "parse_example", "parse_tensor", "decode_wav", "while_loop",
    "TensorArray", "map_fn", "vectorized_map", "print", "Print", "string_split",
    "unique", "unique_with_counts", "RaggedTensor", "ragged", "assign", "assign_add",
    "assign_sub", "boolean_mask", "dynamic_partition", "minimize", "apply_gradients",
    "Unique", "UniqueV2", "UniqueWithCounts", "UniqueWithCountsV2",
})
_BLOCKING_SIGNATURES = frozenset({"RaggedTensorSpec", "SparseTensorSpec"})
# tf.sparse calls that build or densify a SparseTensor rather than compute on one.
_SPARSE_BUILDERS = frozenset({"SparseTensor", "to_dense", "from_dense", "to_indicator"})


def _qual_last(ctx: Context, func: ast.AST) -> tuple[str | None, str | None]:
    q = ctx.qualname(func)
    if q is not None:
        return q, q.rsplit(".", 1)[-1]
    if type(func) is ast.Attribute:
        return None, func.attr
    return None, None


# Distribution classes, and the methods that evaluate a distribution of scalar parameters
# at each value of their input (`Normal(0., 1.).survival_function(x)`): elementwise.
_DISTRIBUTIONS = ("tensorflow.distributions.", "tensorflow.compat.v1.distributions.",
                  "tensorflow.contrib.distributions.", "tensorflow_probability.distributions.")
_DISTRIBUTION_ELEMENTWISE = frozenset({
    "prob", "log_prob", "cdf", "log_cdf", "survival_function", "log_survival_function",
    "quantile",
})


def is_elementwise_api(qualname: str | None) -> bool:
    if not qualname:
        return False
    if qualname.startswith(_DISTRIBUTIONS):
        return qualname.rsplit(".", 1)[-1] in _DISTRIBUTION_ELEMENTWISE
    return qualname.startswith(("tensorflow.", "keras.ops.")) \
        and qualname.rsplit(".", 1)[-1] in _ELEMENTWISE_LAST


def _scalar_distribution_method(ctx: Context, fn: ast.Attribute) -> str | None:
    """``dist.survival_function`` with ``dist = tfd.Normal(loc=0., scale=1.)`` (every
    parameter a number): the method's name under the class's, e.g.
    ``tensorflow.distributions.Normal.survival_function``; else ``None``."""
    if type(fn.value) is not ast.Name or fn.attr not in _DISTRIBUTION_ELEMENTWISE:
        return None
    b = ctx.binding(fn.value)
    made = b.value if b is not None and b.kind == "assign" else None
    if type(made) is not ast.Call:
        return None
    q = ctx.qualname(made.func) or ""
    if not q.startswith(_DISTRIBUTIONS):
        return None
    for v in (*made.args, *(k.value for k in made.keywords)):
        if type(v) is ast.UnaryOp and type(v.op) is ast.USub:
            v = v.operand
        if not (type(v) is ast.Constant and type(v.value) in (int, float)):
            return None  # a batch of distributions: a row is not the whole
    return f"{q}.{fn.attr}"


def mapped_function(ctx: Context, fn: ast.AST, _depth: int = 0) -> ast.AST | str | None:
    """What ``tf.map_fn`` runs per element: a ``def`` or lambda node, or the qualname of a
    TF API (``tf.math.sigmoid``); ``functools.partial(f, ...)`` unwrapped; ``self.m`` found
    among the enclosing class's methods. ``None`` when it cannot be known."""
    if _depth > 5:
        return None
    t = type(fn)
    if t is ast.Lambda:
        return fn
    if t is ast.Call and (ctx.qualname(fn.func) or "") in PARTIAL_CALLS and fn.args:
        return mapped_function(ctx, fn.args[0], _depth + 1)
    q = ctx.qualname(fn)
    if q is not None:
        return q if q.startswith(("tensorflow.", "keras.ops.")) else None
    if t is ast.Name:
        b = ctx.binding(fn)  # type: ignore[arg-type]
        if b is None:
            return None
        if b.kind == "def":
            return b.value
        if b.kind == "assign":
            return mapped_function(ctx, b.value, _depth + 1)
        return None
    if t is ast.Attribute:
        method = _scalar_distribution_method(ctx, fn)  # type: ignore[arg-type]
        if method is not None:
            return method
    if t is ast.Attribute and type(fn.value) is ast.Name and fn.value.id == "self":
        cls = ctx.enclosing_class(fn)
        if cls is not None:
            for d in cls.body:
                if type(d) in (ast.FunctionDef, ast.AsyncFunctionDef) \
                        and d.name == fn.attr:
                    return d
    return None


def _params(fn: ast.AST) -> set[str]:
    a = fn.args
    names = [p.arg for p in a.posonlyargs + a.args if p.arg not in ("self", "cls")]
    return set(names[:1])  # the element is the first parameter


def _body(fn: ast.AST) -> list[ast.AST]:
    return [fn.body] if type(fn) is ast.Lambda else list(fn.body)


def _walk_own(fn: ast.AST) -> list[ast.AST]:
    out: list[ast.AST] = []
    stack = list(_body(fn))
    while stack:
        n = stack.pop()
        out.append(n)
        for c in ast.iter_child_nodes(n):
            if type(c) not in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
                stack.append(c)
    return out


def blocked(ctx: Context, fn: ast.AST, _seen: set[int] | None = None) -> bool:
    """The function calls something ``tf.vectorized_map`` cannot batch (a host call, file
    or string decoding, its own loop, a variable update or optimizer step) or converts to
    NumPy, itself or in a method or module function it calls (``self.update(batch)``
    running ``optimizer.minimize``: a map over training steps, sequential by design)."""
    seen = _seen if _seen is not None else set()
    seen.add(id(fn))
    for n in _walk_own(fn):
        if type(n) is ast.Call:
            q, last = _qual_last(ctx, n.func)
            if last in _BLOCKING_LAST and (q is None or q.startswith(("tensorflow.", "keras"))):
                return True
            if q is not None and q.startswith("tensorflow.sparse.") \
                    and last not in _SPARSE_BUILDERS:
                # Ops on a sparse element take one matrix at a time (no batch axis:
                # sparse_dense_matmul is rank 2), and vectorized_map cannot batch them;
                # building a dense mask through a SparseTensor is not that.
                return True
            if q is None and len(seen) < 8:
                callee = mapped_function(ctx, n.func)
                if callee is not None and not isinstance(callee, str) \
                        and id(callee) not in seen and blocked(ctx, callee, seen):
                    return True
                if callee is None and _element_to_unseen(n, fn):
                    return True
            elif q is not None and not q.startswith(_SEEN_PREFIXES) \
                    and _element_to_unseen(n, fn):
                return True  # an imported helper of the project's own
            if last == "numpy" and not n.args:
                return True
            if q is not None and q.startswith("numpy."):
                return True  # NumPy on the element: not traceable per batch either
        elif type(n) in (ast.If, ast.While, ast.IfExp) and _is_tensor_test(ctx, n.test, fn):
            return True
    return False


_PY_BUILTINS = frozenset(dir(builtins))
# Qualified names whose batching is known (or handled above): not unseen helpers.
_SEEN_PREFIXES = ("tensorflow.", "keras", "tf_keras", "numpy.", "builtins.", "math.",
                  "functools.")


def _element_to_unseen(call: ast.Call, fn: ast.AST) -> bool:
    """The element goes into a function the rule cannot see: a method of an object made
    elsewhere (``preproc.read_from_jpegfile(path)``, its class in another cell) or an
    imported helper. It may read and decode a file per element, which only a per-element
    loop can do, so nothing can be said. Keras layers and models held on ``self``
    (``self.encoder(x)``) and Python builtins are not unseen: they batch."""
    func = call.func
    root = func
    while type(root) is ast.Attribute:
        root = root.value
    if type(root) is ast.Name and (root.id == "self" or (
            root is func and root.id in _PY_BUILTINS)):
        return False
    params = _params(fn)
    return any(type(a) is ast.Name and a.id in params
               for arg in [*call.args, *(k.value for k in call.keywords)]
               for a in ast.walk(arg))


def vectorized_alternative(ctx: Context, node: ast.AST) -> bool:
    """The map is one arm of a conditional expression whose other arm is
    ``tf.vectorized_map``: the code already batches where it can."""
    p = ctx.parent(node)
    if type(p) is not ast.IfExp:
        return False
    other = p.orelse if p.body is node else p.body
    return any(type(n) is ast.Call and (ctx.qualname(n.func) or "").endswith("vectorized_map")
               for n in ast.walk(other))


def _is_tensor_test(ctx: Context, test: ast.AST, fn: ast.AST) -> bool:
    """A Python ``if`` on the element's value (AutoGraph makes it a ``tf.cond`` per
    element; vectorising needs ``tf.where``, a rewrite, not a drop-in)."""
    params = _params(fn)
    return any(type(n) is ast.Name and n.id in params for n in ast.walk(test))


def elementwise_only(ctx: Context, fn: ast.AST | str) -> bool:
    """``tf.math.sigmoid`` itself, or a lambda/one-line function whose result is built from
    its element only by arithmetic, comparisons and elementwise TF functions."""
    if isinstance(fn, str):
        return is_elementwise_api(fn)
    body = _body(fn)
    if type(fn) is not ast.Lambda:
        if len(body) != 1 or type(body[0]) is not ast.Return or body[0].value is None:
            return False
        expr: ast.AST = body[0].value
    else:
        expr = body[0]
    params = _params(fn)
    uses = False
    for n in ast.walk(expr):
        t = type(n)
        if t is ast.Name:
            if n.id in params:
                uses = True
        elif t is ast.Call:
            if not is_elementwise_api(ctx.qualname(n.func)):
                return False
        elif t in (ast.Subscript, ast.Attribute, ast.Lambda, ast.ListComp, ast.GeneratorExp,
                   ast.DictComp, ast.SetComp, ast.Starred):
            if t is ast.Attribute and ctx.qualname(n) is not None:
                continue  # `tf.float32`, `tf.math.sigmoid` as a name
            return False
    return uses


def adds_batch_axis(ctx: Context, fn: ast.AST | str) -> bool:
    """The function makes its element a batch of one (``tf.expand_dims(x, 0)``, ``x[None]``,
    ``x[tf.newaxis]``) to call an op that takes a batch anyway."""
    if isinstance(fn, str):
        return False
    for n in _walk_own(fn):
        if type(n) is ast.Call and ctx.qualname(n.func) in (
                "tensorflow.expand_dims", "keras.ops.expand_dims"):
            axis = n.args[1] if len(n.args) > 1 else next(
                (k.value for k in n.keywords if k.arg in ("axis", "dim")), None)
            if type(axis) is ast.Constant and axis.value == 0:
                return True
        elif type(n) is ast.Subscript:
            sl = n.slice
            first = sl.elts[0] if type(sl) is ast.Tuple and sl.elts else sl
            if (type(first) is ast.Constant and first.value is None) \
                    or ctx.qualname(first) == "tensorflow.newaxis":
                return True
    return False


def signature_blocks(ctx: Context, call: ast.Call) -> bool:
    """``fn_output_signature=tf.RaggedTensorSpec(...)`` & co: outputs of varying shape, or
    ``infer_shape=False``: what ``tf.vectorized_map`` cannot stack."""
    for k in call.keywords:
        if k.arg == "infer_shape" and type(k.value) is ast.Constant and k.value.value is False:
            return True
        if k.arg in ("fn_output_signature", "dtype"):
            for n in ast.walk(k.value):
                if type(n) in (ast.Name, ast.Attribute):
                    q = ctx.qualname(n) or ""
                    if q.rsplit(".", 1)[-1] in _BLOCKING_SIGNATURES:
                        return True
    return False

ELEMENTWISE_HINT = "call the op on the whole tensor: it is elementwise"


def _verdict(ctx: Context, fn: ast.AST | str) -> tuple[str | None, str | None] | None:
    """Whether mapping ``fn`` one element at a time is reported, and how: (message, hint),
    ``None`` meaning the rule's own; ``None`` when the per-element loop is right."""
    if elementwise_only(ctx, fn):
        return ELEMENTWISE, ELEMENTWISE_HINT
    if isinstance(fn, str) or blocked(ctx, fn):
        return None
    if adds_batch_axis(ctx, fn):
        return BATCH_OF_ONE, None
    return None, None


def reports_mapped(ctx: Context, fn: ast.AST | str) -> bool:
    """TFP106 reports a ``tf.map_fn`` of ``fn`` (TFP114 leaves such maps to it: one
    finding per call)."""
    return _verdict(ctx, fn) is not None


def passed_functions(ctx: Context, arg: ast.AST) -> list[tuple[ast.Call, ast.AST | str]]:
    """``arg`` is a parameter of the function it is used in: what each call of that function
    in this module passes to it, each seen (a def, a lambda, a partial, a TF function).
    Empty when it has no caller here, or a caller passes something unseen or nothing."""
    if type(arg) is not ast.Name:
        return []
    b = ctx.binding(arg)
    if b is None or b.kind != "param":
        return []
    owner = ctx.scope_of(b.value)
    if type(owner) not in (ast.FunctionDef, ast.AsyncFunctionDef):
        return []
    out: list[tuple[ast.Call, ast.AST | str]] = []
    for call in calls_of(ctx, owner):
        bound = bound_arguments(owner, call)
        value = None if bound is None else bound.get(arg.id)
        fn = None if value is None else mapped_function(ctx, value)
        if fn is None:
            return []
        out.append((call, fn))
    return out


def _map_over_parameter(ctx: Context, call: ast.Call,
                        names: dict[ast.AST, str]) -> dict | None:
    """``tf.map_fn(h, X)`` with ``h`` a parameter of the function it is in: which function,
    which parameter (``index``: its position for a caller, past ``self``), and whether this
    module calls that function (then :meth:`MapFnPerExample.check` judges it here)."""
    if ctx.call_qualname(call) not in MAP_FN_CALLS:
        return None
    arg = call.args[0] if call.args else next(
        (k.value for k in call.keywords if k.arg == "fn"), None)
    if type(arg) is not ast.Name or signature_blocks(ctx, call) \
            or vectorized_alternative(ctx, call):
        return None
    b = ctx.binding(arg)
    if b is None or b.kind != "param":
        return None
    owner = ctx.scope_of(b.value)
    q = names.get(owner) if owner is not None else None
    if type(owner) not in (ast.FunctionDef, ast.AsyncFunctionDef) or q is None:
        return None
    params = [a.arg for a in (*owner.args.posonlyargs, *owner.args.args)]
    if type(ctx.parent(owner)) is ast.ClassDef and params[:1] in (["self"], ["cls"]):
        params = params[1:]
    index = params.index(arg.id) if arg.id in params else -1
    return {"maps": arg.id, "fn": q, "index": index, "local": bool(calls_of(ctx, owner))}


# Helpers for the examples: an affine matrix to a shift field, and an inverse.
_GEOM = """
import tensorflow as tf
def shift(matrix, shape):
    matrix = tf.cast(matrix, tf.float32)
    if matrix.shape[-1] != len(shape) + 1:
        raise ValueError("rank")
    grid = tf.ones((len(shape), 16))
    out = {read}
    return tf.linalg.matrix_transpose(out)
"""
_INVERSE = """
import tensorflow as tf
def inverse(mat):
    square = mat[..., :3, :3]
    return {out}
"""

BATCHED_HELPER_HINT = ("call the helper once on the whole tensor: it reads its argument from "
                       "the last axes, through ops that take a batch in front")


def batched_helper_message(name: str, where: str) -> str:
    return (f"tf.map_fn runs {name} one element at a time, but it takes a batch in front of "
            f"its argument's axes already ({where}): one call does the whole batch")


def _map_of_imported_helper(ctx: Context, call: ast.Call) -> dict | None:
    """``tf.map_fn(lambda m: utils.f(m, k), x)`` or ``tf.map_fn(utils.f, x)`` with ``utils``
    a project module: the helper's reference and the element's slot, for the project."""
    from tfperf.analysis.summary import callee_ref

    if ctx.call_qualname(call) not in MAP_FN_CALLS:
        return None
    arg = call.args[0] if call.args else next(
        (k.value for k in call.keywords if k.arg == "fn"), None)
    if arg is None or signature_blocks(ctx, call) or vectorized_alternative(ctx, call):
        return None
    fn = mapped_function(ctx, arg)
    if fn is None and type(arg) in (ast.Name, ast.Attribute):
        helper: ast.Call | None = ast.Call(func=arg, args=[], keywords=[])
        slot = "0"
    elif fn is not None and not isinstance(fn, str) and _verdict(ctx, fn) is None:
        found = delegate(fn)
        if found is None:
            return None
        helper, slot = found
    else:
        return None
    ref = callee_ref(ctx, helper)
    if ref is None or ref[0] in ("", "?"):
        return None  # this module's own functions: judged by check
    assert helper is not None
    return {"helper": list(ref), "slot": slot, "text": ctx.source_of(helper.func)[:40]}


# A function mapped per element is short and takes the element (and perhaps one more
# argument): longer module-level functions (a training loop, a model builder) are not
# judged for other modules, which keeps publishing cheap.
_SHORT_LINES = 12


def _short(fn: ast.FunctionDef) -> bool:
    return (fn.end_lineno or fn.lineno) - fn.lineno <= _SHORT_LINES \
        and len(fn.args.posonlyargs) + len(fn.args.args) <= 2


def _imports_project_module(ctx: Context) -> bool:
    """A module-level import of a module that may be the project's own."""
    from tfperf.analysis.summary import project_module

    for node in ctx.nodes_of(ast.Import, ast.ImportFrom):
        if type(node) is ast.ImportFrom:
            if node.level or project_module(node.module or ""):
                return True
        elif any(project_module(a.name) for a in node.names):
            return True
    return False


def _may_be_function(ctx: Context, value: ast.AST) -> bool:
    """A value that may be a function: a lambda, a ``functools.partial``, or a name bound
    to a ``def`` or an import."""
    t = type(value)
    if t is ast.Lambda:
        return True
    if t is ast.Call:
        return (ctx.qualname(value.func) or "") in PARTIAL_CALLS
    if t is ast.Name:
        b = ctx.binding(value)  # type: ignore[arg-type]
        return b is not None and b.kind in ("def", "import")
    if t is ast.Attribute:  # tf.math.sigmoid
        return (ctx.qualname(value) or "").startswith(("tensorflow.", "keras.ops."))
    return False


def _judged(project: Project, module: ModuleSummary, fact: dict) -> list | None:
    """The verdict on the function a call passes: judged in the caller's module, or in
    the module it imports it from (``None``: not reported, or not known)."""
    if "verdict" in fact:
        return fact["verdict"]
    hit = project.resolve(module, ("", fact["name"]))
    if hit is None:
        return None
    home, fn = hit
    for f in home.facts.get("TFP106", ()):
        if f.get("judged") == fn.qualname:
            return f["verdict"]
    return None


_PER_IMAGE_BASES = frozenset({"BaseImageAugmentationLayer"})
_PER_IMAGE_METHODS = frozenset({"augment_image", "augment_images"})

ELEMENTWISE = ("tf.map_fn applies an elementwise op one element at a time: "
               "call it on the whole tensor")
BATCH_OF_ONE = ("tf.map_fn makes each element a batch of one for an op that takes a batch: "
                "run it once on the whole batch")
PER_IMAGE = ("augmentation layer derived from BaseImageAugmentationLayer runs augment_image "
             "once per image: derive from VectorizedBaseImageAugmentationLayer")


class MapFnPerExample(Rule):
    code = "TFP106"
    batches_loops = True
    name = "map-fn-per-example"
    message = "tf.map_fn runs batchable ops one element at a time in a loop"
    hint = ("call the ops on the whole batch (they broadcast or take a batch axis), or "
            "tf.vectorized_map(fn, elems) to batch the function automatically")
    claims = ("S12",)
    group = "perf"
    node_types = (ast.Call, ast.ClassDef)
    callee_names = frozenset({"map_fn"})  # filters calls only; classes still come through
    docs = """\
## What it does
Finds `tf.map_fn(fn, elems)` where `fn` can be seen (a lambda, a `def` in the module, a
`functools.partial` of one, a method, a TensorFlow function such as `tf.math.sigmoid`, or a
method that evaluates a distribution of numeric parameters at each value, such as
`dist.survival_function` with `dist = tfd.Normal(loc=0., scale=1.)`) and
does nothing that only a per-element loop can do. When `fn` is a parameter of the function
that maps it (`def apply(h, X): return tf.map_fn(h, X)`), what its callers pass is judged:
those of this module, or, where it has none, those of other modules of the project (the
function passed defined there or imported from a third module); reported at the map when
every caller passes a function it would report, with the caller in the message.
The message says which case it is:
`fn` is elementwise (`tf.math.sigmoid`, `lambda x: tf.cast(x > 0, tf.float32)`), `fn` adds a
batch axis of one to call an op that takes a batch (`tf.expand_dims(x, 0)` before a
convolution), or `fn` is a composition of batchable ops. Also finds Keras/KerasCV image
augmentation layers derived from `BaseImageAugmentationLayer` that implement
`augment_image`: the base layer maps that method over the batch one image at a time.
And `fn` handing the element to one helper (`lambda m: utils.shift(m, shape)`, or
`tf.map_fn(utils.f, x)`) that takes a batch already: it reads its first argument only from
the back (`m[..., i]`, `m.shape[-1]`, `tf.shape(m)[:-2]`) through ops that take a batch in
front; asked of the project model when the helper is in another module.

## Why is this bad?
`tf.map_fn` is a `tf.while_loop`: one iteration per element, each running `fn`'s small ops
on one slice, one after the other (claim S12: whole-tensor ops beat loops of small ops by
orders of magnitude). Elementwise ops give the same result on the whole tensor in one
kernel; convolutions, matmuls and image ops take a batch axis already;
`tf.vectorized_map` rewrites the function to run on all elements at once (and falls back to
a loop only for ops it cannot batch).

## Example
```python
cum_probs = tf.map_fn(tf.math.sigmoid, logits)

def sharpen(image):
    image = tf.expand_dims(image, 0)
    out = tf.nn.depthwise_conv2d(image, kernel, [1, 1, 1, 1], "VALID")
    return tf.squeeze(out, 0)
images = tf.map_fn(sharpen, images)
```

## Use instead
```python
cum_probs = tf.math.sigmoid(logits)
images = tf.nn.depthwise_conv2d(images, kernel, [1, 1, 1, 1], "VALID")
# or, when the function cannot be rewritten by hand:
images = tf.vectorized_map(sharpen, images)
```

## Fix safety
No automatic fix: the batched form of a function depends on what it computes (axes shift by
one), and `tf.vectorized_map` needs every output to have the same shape.

## Known limitations
Not reported: functions the rule cannot see (an imported function mapped directly, a
parameter whose callers pass something unseen, or no caller in the project), a parameter
one of whose callers passes a function only a per-element loop can run, or functions that hand
the element to a helper it cannot see (a method of an object built elsewhere, the project's
own import: it may read and decode a file per element), functions
that call Python or NumPy (`tf.py_function`, `.numpy()`), decode files or strings, run their
own loops, update variables or run optimizer steps (also through a method or function of
this module they call), take a data-dependent subset (`tf.boolean_mask`, `tf.unique`),
branch in Python on the element's value, maps that are the fallback arm of a
`tf.vectorized_map(...) if ... else tf.map_fn(...)`, and maps whose outputs
are ragged or sparse (`fn_output_signature=tf.RaggedTensorSpec(...)`, `infer_shape=False`):
there a per-element loop is the right tool.
"""
    valid = (
        # Already batched.
        Valid("""
            import tensorflow as tf
            def f(x):
                return tf.math.sigmoid(x)
        """),
        # Decoding files: one string per element, no batched kernel.
        Valid("""
            import tensorflow as tf
            def load(paths):
                return tf.map_fn(lambda p: tf.image.decode_png(tf.io.read_file(p)), paths,
                                 fn_output_signature=tf.uint8)
        """),
        # A batch of sparse matrices times dense ones: sparse ops have no batch axis.
        Valid("""
            import tensorflow as tf
            def batched_sparse_matmul(a, b):
                return tf.map_fn(lambda ab: tf.sparse.sparse_dense_matmul(ab[0], ab[1]),
                                 elems=(a, b), fn_output_signature=b.dtype)
        """),
        # Ragged per-example results: map_fn is the tool.
        Valid("""
            import tensorflow as tf
            def levels(labels, n):
                def one(label):
                    return tf.repeat(1, label)
                return tf.map_fn(one, labels,
                                 fn_output_signature=tf.RaggedTensorSpec([None], tf.int32))
        """),
        # Per-row unique counts: results of varying size.
        Valid("""
            import tensorflow as tf
            counts = tf.map_fn(lambda a: tf.unique_with_counts(a)[2], tf.ones([4, 3], tf.int32))
        """),
        # A function the rule cannot see (a parameter).
        Valid("""
            import tensorflow as tf
            def apply(fn, xs):
                return tf.map_fn(fn, xs)
        """),
        # The element goes to a helper the rule cannot see: a method of an object built
        # elsewhere, or the project's own import (it may read and decode a file per element).
        Valid("""
            import tensorflow as tf
            from .ingest import load_image
            loader = make_loader()
            def serve(paths):
                a = tf.map_fn(lambda p: loader.read_image(p) * 2.0, paths,
                              fn_output_signature=tf.float32)
                b = tf.map_fn(lambda p: tf.image.flip_left_right(load_image(p, 224)), paths,
                              fn_output_signature=tf.float32)
                return a, b
        """),
        # A Python branch on the element's value and a host call.
        Valid("""
            import tensorflow as tf
            def per_row(x):
                if tf.reduce_sum(x) > 0:
                    return x
                return tf.py_function(lambda v: v, [x], tf.float32)
            y = tf.map_fn(per_row, tf.ones([3, 4]))
        """),
        # The vectorized base layer: one call per batch.
        Valid("""
            from keras_cv.layers import VectorizedBaseImageAugmentationLayer
            import tensorflow as tf
            class Gray(VectorizedBaseImageAugmentationLayer):
                def augment_images(self, images, transformations, **kwargs):
                    return tf.image.rgb_to_grayscale(images)
        """),
        # Each element runs an optimizer step on shared variables through a method: the
        # iterations depend on each other, nothing to batch.
        Valid("""
            import tensorflow as tf
            class Learner:
                def _reset(self):
                    for src, dst in zip(self.base.weights, self.copy.weights):
                        dst.assign(src)
                def task_loss(self, task):
                    x, y = task
                    self._reset()
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(tf.square(self.copy(x) - y))
                    self.opt.minimize(loss, self.copy.trainable_variables, tape=tape)
                    return loss
                @tf.function
                def update(self, tasks):
                    return tf.reduce_sum(tf.map_fn(self.task_loss, tasks,
                                                   fn_output_signature=tf.float32))
        """),
        # The map is the fallback arm next to tf.vectorized_map.
        Valid("""
            import tensorflow as tf
            def integrate_all(limits, vectorize):
                def one(lim):
                    return tf.reduce_sum(tf.exp(-tf.square(tf.linspace(lim[0], lim[1], 50))))
                return tf.vectorized_map(one, limits) if vectorize else tf.map_fn(one, limits)
        """),
        # A data-dependent unique through tf.raw_ops.
        Valid("""
            import tensorflow as tf
            def entropies(samples, n):
                def one(s):
                    count = tf.raw_ops.UniqueWithCountsV2(x=s, axis=[0]).count
                    p = tf.cast(count, tf.float32) / n
                    return -tf.reduce_sum(p * tf.math.log(p))
                return tf.map_fn(one, samples, fn_output_signature=tf.float32)
        """),
    )
    invalid = (
        # A per-row mask built through a SparseTensor is still batchable work (TFP106 sees
        # through building and densifying; only ops on a sparse element stop it).
        Invalid("""
            import tensorflow as tf
            def keep_masks(scores):
                def keep(row):
                    idx = tf.where(row > 0.5)
                    mask = tf.sparse.SparseTensor(idx, tf.ones_like(idx[:, 0], tf.bool), [8, 1])
                    return tf.sparse.to_dense(mask, default_value=False)
                return tf.map_fn(keep, scores, fn_output_signature=tf.bool)
        """, count=1, lines=(7,)),
        # An elementwise function mapped row by row.
        Invalid("""
            import tensorflow as tf
            def ordinal_softmax(x):
                cum_probs = tf.map_fn(tf.math.sigmoid, x)
                return cum_probs
        """, count=1, lines=(3,)),
        Invalid("""
            import tensorflow as tf
            def metric(y_pred):
                return tf.map_fn(lambda x: tf.cast(x > 0.0, tf.float32), y_pred)
        """, count=1, lines=(3,)),
        # A batch of one for a convolution, through functools.partial.
        Invalid("""
            from functools import partial
            import tensorflow as tf
            def sharpness_image(image, factor):
                image = tf.expand_dims(image, 0)
                kernel = tf.ones([3, 3, 3, 1]) / 9.0
                out = tf.nn.depthwise_conv2d(image, kernel, [1, 1, 1, 1], "VALID")
                return tf.squeeze(out, [0]) * factor
            def sharpness(image, factor):
                fn = partial(sharpness_image, factor=factor)
                return tf.map_fn(fn, image)
        """, count=1, lines=(10,)),
        # A composition of batchable ops (patches, top_k) per channel.
        Invalid("""
            import tensorflow as tf
            def median(image, k):
                def one_channel(x):
                    x = tf.expand_dims(x, axis=-1)
                    patches = tf.image.extract_patches(x, [1, 3, 3, 1], [1, 1, 1, 1],
                                                       [1, 1, 1, 1], "VALID")
                    return tf.nn.top_k(patches, k=k).values[..., -1]
                return tf.map_fn(one_channel, elems=tf.transpose(image, [3, 0, 1, 2]))
        """, count=1, lines=(8,)),
        # A per-image augmentation layer.
        Invalid("""
            from keras_cv.layers.preprocessing.base_image_augmentation_layer import (
                BaseImageAugmentationLayer,
            )
            import tensorflow as tf
            class RandomColorDegeneration(BaseImageAugmentationLayer):
                def augment_image(self, image, transformation=None, **kwargs):
                    gray = tf.image.grayscale_to_rgb(tf.image.rgb_to_grayscale(image))
                    return gray * transformation + image * (1 - transformation)
        """, count=1, lines=(5,)),
    )

    # Stop 39, pass B: the mapped function comes in through a parameter
    # (`def apply(h, X): return tf.map_fn(h, X)`), judged at every caller, in this module
    # or another; VALID where a caller maps what only a per-element loop can do.
    valid = (  # type: ignore[assignment]
        *valid,
        Valid("""
            import tensorflow as tf
            def apply(h, X):
                return tf.map_fn(h, X)
            def to_text(r):
                return tf.py_function(lambda v: v * 2, [r], tf.float32)
            y = apply(to_text, tf.ones([64, 8]))
        """, spelling="name: a parameter given a host call"),
        Valid("""
            import tensorflow as tf
            def apply(h, paths):
                return tf.map_fn(h, paths, fn_output_signature=tf.uint8)
            def load(path):
                return tf.io.decode_jpeg(tf.io.read_file(path))
            for epoch in range(10):
                images = apply(load, tf.constant(["a.jpg", "b.jpg"]))
        """, spelling="loop: a parameter given a decoder"),
        Valid("""
            import tensorflow as tf
            def per_column(h, X, i):
                return tf.map_fn(h, X[:, i])
            def to_text(r):
                return tf.py_function(lambda v: v * 2, [r], tf.float32)
            X = tf.ones([64, 8, 4])
            y = per_column(to_text, X, 1)
        """, spelling="index: a parameter given a host call"),
        Valid("""
            from maplib import apply
            import tensorflow as tf
            def to_text(r):
                return tf.py_function(lambda v: v * 2, [r], tf.float32)
            y = apply(to_text, tf.ones([64, 8]))
        """, files={"maplib.py": """
            import tensorflow as tf
            def apply(h, X):
                return tf.map_fn(h, X)
        """}, spelling="module"),
        Valid("""
            import tensorflow as tf
            def apply(h, X):
                return tf.map_fn(h, X)
            # %%
            y = apply(lambda r: tf.py_function(lambda v: v, [r], tf.float32), tf.ones([64, 8]))
        """, notebook=True, spelling="notebook"),
    )
    invalid = (  # type: ignore[assignment]
        *invalid,
        Invalid("""
            import tensorflow as tf
            def apply(h, X):
                return tf.map_fn(h, X)
            y = apply(lambda r: tf.nn.relu(r) * 2.0, tf.ones([64, 8]))
        """, count=1, lines=(3,), spelling="name: a parameter given an elementwise lambda"),
        Invalid("""
            import tensorflow as tf
            def apply(h, X):
                return tf.map_fn(h, X)
            def per_row(r):
                return tf.reduce_sum(r * 2.0)
            for epoch in range(10):
                y = apply(per_row, tf.ones([64, 8]))
        """, count=1, lines=(3,), spelling="loop: a parameter given a def, per epoch"),
        Invalid("""
            import tensorflow as tf
            def per_column(h, X, i):
                return tf.map_fn(h, X[:, i])
            def per_row(r):
                return tf.reduce_sum(r * 2.0)
            X = tf.ones([64, 8, 4])
            y = per_column(per_row, X, 1)
        """, count=1, lines=(3,), spelling="index: X[:, i] mapped by a parameter"),
        Invalid("""
            from maplib import apply
            import tensorflow as tf
            def per_row(r):
                return tf.reduce_sum(r * 2.0)
            y = apply(per_row, tf.ones([64, 8]))
        """, files={"maplib.py": """
            import tensorflow as tf
            def apply(h, X):
                return tf.map_fn(h, X)
        """}, count=1, spelling="module"),
        Invalid("""
            from maplib import apply
            from rows import per_row
            import tensorflow as tf
            y = apply(per_row, tf.ones([64, 8]))
        """, files={"maplib.py": """
            import tensorflow as tf
            def apply(h, X):
                return tf.map_fn(h, X)
        """, "rows.py": """
            import tensorflow as tf
            def per_row(r):
                return tf.reduce_sum(r * 2.0)
        """}, count=1, spelling="module: the function imported from a third module"),
        Invalid("""
            import tensorflow as tf
            def apply(h, X):
                return tf.map_fn(h, X)
            # %%
            y = apply(tf.math.sigmoid, tf.ones([64, 8]))
        """, count=1, notebook=True, spelling="notebook"),
        Invalid("""
            import tensorflow as tf
            import tensorflow_probability as tfp
            diffs = tf.random.normal([256])
            dist = tfp.distributions.Normal(loc=0., scale=1.)
            margins = tf.map_fn(dist.survival_function, diffs)
        """, count=1, lines=(5,), spelling="name: a method of a distribution of numbers"),
    )
    valid = (  # type: ignore[assignment]
        *valid,
        Valid("""
            import tensorflow as tf
            import tensorflow_probability as tfp
            mus = tf.zeros([256])
            diffs = tf.random.normal([256])
            dist = tfp.distributions.Normal(loc=mus, scale=1.)
            margins = tf.map_fn(dist.survival_function, diffs)
        """, spelling="name: a batch of distributions"),
    )

    # Stop 43 wave 2 (held-out round 14, F001): the element handed to a helper of another
    # module that reads it from the back through batched ops; twins: helpers that read the
    # first axis, reshape to a fixed rank, take len(), or a second argument from the element.
    valid = (  # type: ignore[assignment]
        *valid,
        Valid("""
            import tensorflow as tf
            from geom import shift
            def warp(m):
                return tf.map_fn(lambda a: shift(a, (4, 4)), m)
        """, files={"geom.py": _GEOM.format(read="matrix[:, :-1] @ grid + matrix[:, -1:]")},
            spelling="module: the helper reads the first axis"),
        Valid("""
            import tensorflow as tf
            import geom
            def invert(m):
                return tf.map_fn(geom.inverse, m)
        """, files={"geom.py": _INVERSE.format(out="tf.reshape(square, (3, 3))")},
            spelling="name: the helper reshapes to a fixed rank"),
        Valid("""
            import tensorflow as tf
            from geom import shift
            def fields(m):
                return shift(m, (4, 4))
            def warp(m):
                return tf.map_fn(lambda a: shift(a, tf.shape(a)), m)
        """, files={"geom.py": _GEOM.format(read="matrix[..., :-1] @ grid + matrix[..., -1:]")},
            spelling="index: another argument read from the element"),
        Valid("""
            import tensorflow as tf
            from geom import inverse
            # %%
            inv = tf.map_fn(inverse, tf.eye(3, batch_shape=[8]))
        """, files={"geom.py": _INVERSE.format(out="square[:len(mat)]")}, notebook=True,
            spelling="notebook: the helper takes len()"),
    )
    invalid = (  # type: ignore[assignment]
        *invalid,
        Invalid("""
            import tensorflow as tf
            from geom import shift
            def warp(m):
                return tf.map_fn(lambda a: shift(a, (4, 4)), m)
        """, files={"geom.py": _GEOM.format(read="matrix[..., :-1] @ grid + matrix[..., -1:]")},
            count=1, lines=(4,), spelling="module: a lambda handing the element on"),
        Invalid("""
            import tensorflow as tf
            import geom
            def invert(m):
                return tf.map_fn(geom.inverse, m)
        """, files={"geom.py": _INVERSE.format(out="tf.linalg.inv(square)")},
            count=1, lines=(4,), spelling="name: the helper itself"),
        Invalid("""
            import tensorflow as tf
            from geom import shift
            def warp(m):
                def one(a):
                    return shift(matrix=a, shape=(4, 4))
                return tf.map_fn(one, m, fn_output_signature=tf.float32)
        """, files={"geom.py": _GEOM.format(read="matrix[..., :-1] @ grid + matrix[..., -1:]")},
            count=1, lines=(6,), spelling="index: a def passing the element by keyword"),
        Invalid("""
            import tensorflow as tf
            from geom import inverse
            # %%
            inv = tf.map_fn(inverse, tf.eye(3, batch_shape=[8]))
        """, files={"geom.py": _INVERSE.format(out="tf.linalg.inv(square)")}, notebook=True,
            count=1, spelling="notebook"),
        # The helper in this module, judged in file mode (its check call into another
        # module would otherwise leave the map to a per-element loop).
        Invalid("""
            import tensorflow as tf
            from checks import validate
            def shift(matrix):
                validate(matrix.shape)
                return tf.linalg.matrix_transpose(matrix[..., :-1] @ tf.ones((3, 16)))
            def warp(m):
                return tf.map_fn(lambda a: shift(a), m)
        """, count=1, lines=(7,), spelling="loop: a helper of this module"),
    )
    valid = (  # type: ignore[assignment]
        *valid,
        Valid("""
            import tensorflow as tf
            from checks import validate
            def shift(matrix):
                validate(matrix.shape)
                return tf.linalg.matrix_transpose(matrix[0, :-1] @ tf.ones((3, 16)))
            def warp(m):
                return tf.map_fn(lambda a: shift(a), m)
        """, spelling="loop: a helper of this module reading the first axis"),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        if type(node) is ast.ClassDef:
            yield from self._per_image_layer(node, ctx)
            return
        func = node.func
        last = func.attr if type(func) is ast.Attribute else getattr(func, "id", None)
        if last != "map_fn" or not ctx.imports_tf:
            return  # cheap test first: this runs for every call
        if ctx.call_qualname(node) not in MAP_FN_CALLS:
            return
        fn_arg = node.args[0] if node.args else next(
            (k.value for k in node.keywords if k.arg == "fn"), None)
        if fn_arg is None or signature_blocks(ctx, node):  # type: ignore[arg-type]
            return
        if vectorized_alternative(ctx, node):
            return  # `tf.vectorized_map(f, x) if ok else tf.map_fn(f, x)`: a chosen fallback
        fn = mapped_function(ctx, fn_arg)
        if fn is not None:
            found = _verdict(ctx, fn)
            if found is not None:
                yield self.finding(ctx, node, found[0], hint=found[1])
            elif not isinstance(fn, str):
                helper = local_batched_helper(ctx, fn)
                if helper is not None:
                    yield self.finding(ctx, node, batched_helper_message(helper, "this module"),
                                       hint=BATCHED_HELPER_HINT)
            return
        # Stop 39, pass B: the function comes in through a parameter of the function that
        # maps it (`def apply(h, X): return tf.map_fn(h, X)`): judged at its callers here.
        passed = passed_functions(ctx, fn_arg)
        if not passed:
            return
        verdicts = [_verdict(ctx, f) for _, f in passed]
        first = verdicts[0]
        if first is None or any(v is None for v in verdicts):
            return  # one caller maps something only a loop can do: the loop is right there
        call = passed[0][0]
        yield self.finding(
            ctx, node, f"{first[0] or self.message} (the function passed in as "
            f"{fn_arg.id} at line {ctx.location(call).line})",
            hint=first[1])

    def publish(self, ctx: Context) -> list[dict] | None:
        """Stop 39, pass B: the facts a map over a parameter needs when its callers are in
        other modules. ``{"maps": param, ...}``: ``tf.map_fn`` over a parameter of a
        function of this module; ``{"passes": callee, ...}``: a call of a project function
        of another module that passes a function (its verdict, judged here, or the name
        it imports); ``{"judged": qualname, ...}``: a module-level function of this module
        that a per-element map of it would be reported for."""
        from tfperf.analysis.summary import callee_ref, position, qualnames

        facts: list[dict] = []
        names = qualnames(ctx)
        if ctx.imports_tf and "map_fn" in ctx.source:
            by_attr, by_name = ctx.call_groups()
            for call in (*by_attr.get("map_fn", ()), *by_name.get("map_fn", ())):
                fact = _map_over_parameter(ctx, call, names)
                if fact is not None:
                    facts.append({**fact, "pos": position(ctx, call)})
        if ctx.imports_tf and "map_fn" in ctx.source:
            by_attr, by_name = ctx.call_groups()
            for call in (*by_attr.get("map_fn", ()), *by_name.get("map_fn", ())):
                fact = _map_of_imported_helper(ctx, call)
                if fact is not None:
                    facts.append({**fact, "pos": position(ctx, call)})
        if ctx.imports_tf:
            facts.extend(batched_functions(ctx, names))
        if ctx.imports_tf:
            for node, q in names.items():
                if type(node) is ast.FunctionDef and ctx.scope_of(node) is ctx.tree \
                        and node.args.args and _short(node):
                    verdict = _verdict(ctx, node)
                    if verdict is not None:
                        facts.append({"judged": q, "verdict": list(verdict)})
        if not _imports_project_module(ctx):
            return facts or None  # no call here can reach another module's map
        for call in ctx.nodes_of(ast.Call):
            slots = [(str(i), a) for i, a in enumerate(call.args)]
            slots += [(k.arg, k.value) for k in call.keywords if k.arg is not None]
            given = [(slot, v) for slot, v in slots if _may_be_function(ctx, v)]
            if not given:
                continue
            ref = callee_ref(ctx, call)
            if ref is None or ref[0] in ("", "?"):
                continue  # this module's own callees: judged by check
            for slot, value in given:
                fact = {"passes": list(ref), "slot": slot, "pos": position(ctx, call),
                        "text": ast.unparse(value)[:40]}
                fn = mapped_function(ctx, value)
                if fn is not None:
                    verdict = _verdict(ctx, fn)
                    fact["verdict"] = None if verdict is None else list(verdict)
                elif type(value) is ast.Name:
                    fact["name"] = value.id  # imported: the project resolves it
                else:
                    continue
                facts.append(fact)
        return facts or None

    def check_project(self, project: Project) -> Iterator[Finding]:
        """A ``tf.map_fn`` over a parameter whose callers in other modules all pass a
        function it should not map one element at a time: reported at the map."""
        yield from self._imported_batched_helpers(project)
        maps: dict[tuple[str, str], list[tuple[ModuleSummary, dict]]] = {}
        for module in project.modules.values():
            for fact in module.facts.get(self.code, ()):
                if "maps" in fact and not fact["local"]:
                    maps.setdefault((module.path, fact["fn"]), []).append((module, fact))
        if not maps:
            return
        passes: dict[tuple[str, str, str], list[tuple[ModuleSummary, dict]]] = {}
        for module in project.modules.values():
            for fact in module.facts.get(self.code, ()):
                if "passes" not in fact:
                    continue
                hit = project.resolve(module, (fact["passes"][0], fact["passes"][1]))
                if hit is not None and (hit[0].path, hit[1].qualname) in maps:
                    passes.setdefault((hit[0].path, hit[1].qualname, fact["slot"]),
                                      []).append((module, fact))
        for (path, qualname), found in maps.items():
            for _, fact in found:
                given = passes.get((path, qualname, str(fact["index"])), []) \
                    + passes.get((path, qualname, fact["maps"]), [])
                verdicts = [_judged(project, m, f) for m, f in given]
                judged = [v for v in verdicts if v is not None]
                if not judged or len(judged) < len(verdicts):
                    continue  # one caller maps something only a loop can do
                caller, first = given[0]
                message = judged[0][0] or self.message
                yield self.project_finding(
                    path, fact["pos"],
                    f"{message} (the function {first['text']} passed in as {fact['maps']} "
                    f"at {os.path.basename(caller.path)}:{first['pos'][0]})",
                    hint=judged[0][1])

    def _imported_batched_helpers(self, project: Project) -> Iterator[Finding]:
        """Stop 43 wave 2: ``tf.map_fn`` handing each element to a helper of another module
        that takes a batch already (its module's ``batches`` fact)."""
        for module in project.modules.values():
            for fact in module.facts.get(self.code, ()):
                if "helper" not in fact:
                    continue
                hit = project.resolve(module, (fact["helper"][0], fact["helper"][1]))
                if hit is None:
                    continue
                home, fn = hit
                if any(f.get("batches") == fn.qualname and fact["slot"] in ("0", f["first"])
                       for f in home.facts.get(self.code, ())):
                    where = f"{os.path.basename(home.path)}:{fn.pos[0]}"
                    yield self.project_finding(
                        module.path, fact["pos"],
                        batched_helper_message(fact["text"], where), hint=BATCHED_HELPER_HINT)

    def _per_image_layer(self, cls: ast.ClassDef, ctx: Context) -> Iterator[Finding]:
        for base in cls.bases:
            q = ctx.qualname(base) or ""
            if q.rsplit(".", 1)[-1] in _PER_IMAGE_BASES and q.startswith(("keras_cv", "keras")):
                break
        else:
            return
        if any(isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef))
               and d.name in _PER_IMAGE_METHODS for d in cls.body):
            yield self.finding(ctx, cls, PER_IMAGE, end_node=base,
                               hint="implement augment_images on the whole batch in a "
                                    "VectorizedBaseImageAugmentationLayer subclass")
