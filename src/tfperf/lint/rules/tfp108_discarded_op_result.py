"""TFP108: the result of a side-effect-free TF op thrown away (``tf.clip_by_norm(g, 15)``)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

# Namespaces whose functions below are plain tensor → tensor computations.
_PURE_NAMESPACES = frozenset({
    "tensorflow", "tensorflow.math", "tensorflow.nn", "tensorflow.linalg", "tensorflow.image",
    "tensorflow.signal", "tensorflow.sparse", "tensorflow.strings", "tensorflow.bitwise",
    "tensorflow.compat.v1", "tensorflow.compat.v1.math", "tensorflow.compat.v1.nn",
    "keras.ops", "keras.ops.nn", "keras.ops.numpy", "keras.backend",
})
# Functions that only compute a new tensor from their arguments: no variable, no RNG state,
# no I/O, no assertion. Precision over recall: a name is here only when every namespace
# above that has it means a pure computation (``tf.ensure_shape``, ``tf.debugging.*``,
# ``tf.print``, ``tf.random.*``, ``dropout`` and ``assign*`` are deliberately absent).
_PURE_FUNCTIONS = frozenset({
    "abs", "acos", "add", "add_n", "argmax", "argmin", "argsort", "asin", "atan", "atan2",
    "batch_matmul", "bias_add", "boolean_mask", "broadcast_to", "cast", "ceil", "clip",
    "clip_by_global_norm", "clip_by_norm", "clip_by_value", "concat", "concatenate", "conj",
    "cos", "cosh", "cross", "cumprod", "cumsum", "diag", "divide", "divide_no_nan", "einsum",
    "elu", "equal", "erf", "exp", "expand_dims", "expm1", "eye", "fill", "flatten", "floor",
    "floordiv", "floormod", "gather", "gather_nd", "gelu", "greater", "greater_equal",
    "identity", "imag", "inv", "l2_normalize", "leaky_relu", "less", "less_equal", "lgamma",
    "log", "log1p", "log_sigmoid", "log_softmax", "logical_and", "logical_not", "logical_or",
    "logical_xor", "logsumexp", "matmul", "matrix_transpose", "max", "maximum", "mean", "min",
    "minimum", "mod", "moments", "multiply", "negative", "norm", "normalize", "not_equal",
    "one_hot", "ones_like", "pad", "pow", "prod", "real", "reciprocal", "reduce_all",
    "reduce_any", "reduce_euclidean_norm", "reduce_logsumexp", "reduce_max", "reduce_mean",
    "reduce_min", "reduce_prod", "reduce_std", "reduce_sum", "reduce_variance", "relu",
    "relu6", "repeat", "reshape", "resize", "reverse", "round", "rsqrt", "selu", "sigmoid",
    "sigmoid_cross_entropy_with_logits", "sign", "sin", "sinh", "slice", "softmax",
    "softmax_cross_entropy_with_logits", "softplus", "softsign", "sort",
    "sparse_softmax_cross_entropy_with_logits",
    "split", "sqrt", "square", "squared_difference", "squeeze", "stack", "subtract", "sum",
    "swapaxes", "tan", "tanh", "tensordot", "tile", "top_k", "transpose", "truediv",
    "unstack", "where", "zeros_like",
})


def pure_op(qualname: str | None) -> bool:
    """Whether calling ``qualname`` (canonical) only computes a new tensor."""
    if qualname is None:
        return False
    namespace, _, name = qualname.rpartition(".")
    return name in _PURE_FUNCTIONS and namespace in _PURE_NAMESPACES


def _loop_target(ctx: Context, node: ast.Call) -> tuple[str, str] | None:
    """(loop variable, iterable source) when the op's first argument is the variable of a
    ``for`` loop over a name or attribute: rebinding it would change nothing either."""
    if not node.args or type(node.args[0]) is not ast.Name:
        return None
    name = node.args[0].id
    for loop in ctx.enclosing_loops(node):
        if type(loop) is ast.For and type(loop.target) is ast.Name and loop.target.id == name \
                and type(loop.iter) in (ast.Name, ast.Attribute):
            return name, ctx.source_of(loop.iter)
    return None


class DiscardedOpResult(Rule):
    code = "TFP108"
    name = "discarded-op-result"
    message = "the result of a side-effect-free TF op is thrown away: the call changes nothing"
    hint = "use the result (x = tf.op(x, ...)): TF ops return new tensors, never modify inputs"
    claims = ("S5",)
    group = "correctness"
    node_types = (ast.Expr,)
    needs_tf = True
    docs = """\
## What it does
Finds an expression statement that calls a side-effect-free TensorFlow or Keras op
(`tf.clip_by_norm(g, 15)`, `tf.cast(x, tf.float32)`, `tf.reshape(x, [-1, 784])`,
`keras.ops.clip(x, 0, 1)`) and drops its result.

## Why is this bad?
Tensors are immutable (claim S5): an op returns a new tensor and never changes its inputs.
A dropped result means the statement does nothing the program can see, which is nearly
always a bug: a gradient never clipped, an input never cast. Eagerly it still runs, once per
iteration of its loop: `tfperf profile` measured a dropped `tf.clip_by_norm` per gradient at
8 % of a VAE tutorial's training run (issue 30), time spent clipping nothing.

## Example
```python
gradients = tape.gradient(loss, model.trainable_variables)
for g in gradients:
    tf.clip_by_norm(g, 15)
optimizer.apply_gradients(zip(gradients, model.trainable_variables))
```

## Use instead
```python
gradients = tape.gradient(loss, model.trainable_variables)
gradients = [tf.clip_by_norm(g, 15) for g in gradients]
optimizer.apply_gradients(zip(gradients, model.trainable_variables))
```

## Fix safety
No automatic fix: using the result changes what the program computes (the clipping starts to
happen), which is the point, but only the author can say it is what was meant.

## Known limitations
Only ops known to be free of side effects are reported (no `tf.print`, `tf.debugging.*`,
`tf.ensure_shape`, random ops, variable updates, Keras layers or models). A call kept only
for the error it raises on a bad shape (a bare `tf.reshape` used as a check) is reported:
`tf.debugging.assert_shapes` or `tf.ensure_shape` say that intent. In a notebook, a cell's
last top-level expression is displayed, not dropped: top-level statements are not reported
there.
"""
    valid = (
        Valid("""
            import tensorflow as tf
            def step(gradients):
                return [tf.clip_by_norm(g, 15) for g in gradients]
        """),
        Valid("""
            import tensorflow as tf
            x = tf.ones([4])
            x = tf.cast(x, tf.float16)
            tf.print(x)
            tf.debugging.assert_equal(x, x)
            tf.ensure_shape(x, [4])
        """),
        # Somebody else's reshape, and a method of an object (which may well mutate it).
        Valid("""
            import tensorflow as tf
            from mylib import reshape
            reshape(buffer, [2, 2])
            ring.reshape([2, 2])
            tf.random.normal([3])
        """),
        # A variable update is a side effect.
        Valid("""
            import tensorflow as tf
            v = tf.Variable(1.0)
            v.assign_add(1.0)
            tf.compat.v1.assign(v, 2.0)
        """),
    )
    invalid = (
        Invalid("""
            import tensorflow as tf
            def train(tape, loss, model, optimizer):
                gradients = tape.gradient(loss, model.trainable_variables)
                for g in gradients:
                    tf.clip_by_norm(g, 15)
                optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        """, count=1, lines=(5,)),
        Invalid("""
            import tensorflow as tf
            def prepare(x):
                tf.cast(x, tf.float32)
                tf.reshape(x, [-1, 784])
                return x
        """, count=2, lines=(3, 4)),
        Invalid("""
            from tensorflow import keras
            import tensorflow.math as tm
            x = keras.ops.ones([3])
            keras.ops.clip(x, 0.0, 1.0)
            tm.reduce_sum(x)
        """, count=2, lines=(4, 5)),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        call = node.value
        if type(call) is not ast.Call or type(call.func) not in (ast.Attribute, ast.Name):
            return
        if ctx.path.endswith(".ipynb") and type(ctx.parent(node)) is ast.Module:
            return  # a cell's last expression is displayed
        qualname = ctx.call_qualname(call)
        if not pure_op(qualname):
            return
        op = ctx.source_of(call.func)
        target = _loop_target(ctx, call)
        if target is not None:
            var, seq = target
            text = ctx.source_of(call)
            hint = (f"rebinding {var} in the loop would change nothing either: build the new "
                    f"list, {seq} = [{text} for {var} in {seq}]")
        elif call.args and type(call.args[0]) is ast.Name:
            hint = f"use the result: {call.args[0].id} = {ctx.source_of(call)}"
        else:
            hint = self.hint
        yield self.finding(ctx, node,
                           f"the result of {op}(...) is thrown away: the call changes nothing "
                           f"(TF ops return new tensors)", hint=hint)
