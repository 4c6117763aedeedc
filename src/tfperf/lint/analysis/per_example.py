"""Functions run once per example: what ``tf.map_fn`` is handed, and what that function does
with its one example (an elementwise op, a batch axis of one added back, ops that
``tf.vectorized_map`` cannot batch)."""

from __future__ import annotations

import ast

from tfperf.lint.semantic import Context

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
    "logical_and", "logical_or", "where", "clip_by_value", "identity", "stop_gradient",
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
    "assign_sub", "boolean_mask", "dynamic_partition",
})
_BLOCKING_SIGNATURES = frozenset({"RaggedTensorSpec", "SparseTensorSpec"})


def _qual_last(ctx: Context, func: ast.AST) -> tuple[str | None, str | None]:
    q = ctx.qualname(func)
    if q is not None:
        return q, q.rsplit(".", 1)[-1]
    if type(func) is ast.Attribute:
        return None, func.attr  # type: ignore[attr-defined]
    return None, None


def is_elementwise_api(qualname: str | None) -> bool:
    return bool(qualname) and qualname.startswith(("tensorflow.", "keras.ops.")) \
        and qualname.rsplit(".", 1)[-1] in _ELEMENTWISE_LAST  # type: ignore[union-attr]


def mapped_function(ctx: Context, fn: ast.AST, _depth: int = 0) -> ast.AST | str | None:
    """What ``tf.map_fn`` runs per element: a ``def`` or lambda node, or the qualname of a
    TF API (``tf.math.sigmoid``); ``functools.partial(f, ...)`` unwrapped; ``self.m`` found
    among the enclosing class's methods. ``None`` when it cannot be known."""
    if _depth > 5:
        return None
    t = type(fn)
    if t is ast.Lambda:
        return fn
    if t is ast.Call and ctx.qualname(fn.func) in PARTIAL_CALLS and fn.args:  # type: ignore[attr-defined]
        return mapped_function(ctx, fn.args[0], _depth + 1)  # type: ignore[attr-defined]
    q = ctx.qualname(fn)
    if q is not None:
        return q if q.startswith(("tensorflow.", "keras.ops.")) else None
    if t is ast.Name:
        b = ctx.binding(fn)  # type: ignore[arg-type]
        if b is None:
            return None
        if b.kind == "def":
            return b.value  # type: ignore[no-any-return]
        if b.kind == "assign":
            return mapped_function(ctx, b.value, _depth + 1)
        return None
    if t is ast.Attribute and type(fn.value) is ast.Name and fn.value.id == "self":  # type: ignore[attr-defined]
        cls = ctx.enclosing_class(fn)
        if cls is not None:
            for d in cls.body:
                if type(d) in (ast.FunctionDef, ast.AsyncFunctionDef) \
                        and d.name == fn.attr:  # type: ignore[attr-defined]
                    return d
    return None


def _params(fn: ast.AST) -> set[str]:
    a = fn.args  # type: ignore[attr-defined]
    names = [p.arg for p in a.posonlyargs + a.args if p.arg not in ("self", "cls")]
    return set(names[:1])  # the element is the first parameter


def _body(fn: ast.AST) -> list[ast.AST]:
    return [fn.body] if type(fn) is ast.Lambda else list(fn.body)  # type: ignore[attr-defined]


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


def blocked(ctx: Context, fn: ast.AST) -> bool:
    """The function calls something ``tf.vectorized_map`` cannot batch (a host call, file
    or string decoding, its own loop, a variable update) or converts to NumPy."""
    for n in _walk_own(fn):
        if type(n) is ast.Call:
            q, last = _qual_last(ctx, n.func)  # type: ignore[attr-defined]
            if last in _BLOCKING_LAST and (q is None or q.startswith(("tensorflow.", "keras"))):
                return True
            if last == "numpy" and not n.args:  # type: ignore[attr-defined]
                return True
            if q is not None and q.startswith("numpy."):
                return True  # NumPy on the element: not traceable per batch either
        elif type(n) in (ast.If, ast.While, ast.IfExp) and _is_tensor_test(ctx, n.test, fn):  # type: ignore[attr-defined]
            return True
    return False


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
        if len(body) != 1 or type(body[0]) is not ast.Return or body[0].value is None:  # type: ignore[attr-defined]
            return False
        expr = body[0].value  # type: ignore[attr-defined]
    else:
        expr = body[0]
    params = _params(fn)
    uses = False
    for n in ast.walk(expr):
        t = type(n)
        if t is ast.Name:
            if n.id in params:  # type: ignore[attr-defined]
                uses = True
        elif t is ast.Call:
            if not is_elementwise_api(ctx.qualname(n.func)):  # type: ignore[attr-defined]
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
        if type(n) is ast.Call and ctx.qualname(n.func) in (  # type: ignore[attr-defined]
                "tensorflow.expand_dims", "keras.ops.expand_dims"):
            axis = n.args[1] if len(n.args) > 1 else next(  # type: ignore[attr-defined]
                (k.value for k in n.keywords if k.arg in ("axis", "dim")), None)  # type: ignore[attr-defined]
            if type(axis) is ast.Constant and axis.value == 0:
                return True
        elif type(n) is ast.Subscript:
            sl = n.slice  # type: ignore[attr-defined]
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
