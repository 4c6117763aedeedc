"""TFP503: under mixed_float16, the model's last layer (its softmax/output) is not float32."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding
from tfperf.lint.analysis.assignments import assigned_value
from tfperf.lint.analysis.precision import mixed_float16_policy, policy_in_effect
from tfperf.lint.analysis.syntax import keyword
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

SEQUENTIAL = frozenset({"keras.Sequential", "keras.models.Sequential"})
FUNCTIONAL = frozenset({"keras.Model", "keras.models.Model"})
# Layers that only re-wrap their input, or cast it on purpose: nothing to report.
QUIET_LAYERS = frozenset({"keras.layers.Lambda", "keras.layers.InputLayer",
                          "keras.layers.Input"})
FLOAT32 = frozenset({"float32", "tensorflow.float32", "numpy.float32", "keras.float32"})


def _layer_call(ctx: Context, expr: ast.AST | None) -> ast.Call | None:
    """``keras.layers.X(...)`` (the layer construction), else ``None``."""
    if type(expr) is ast.Call:
        q = ctx.qualname(expr.func)
        if q and q.startswith("keras.layers.") and q not in QUIET_LAYERS:
            return expr
    return None


def _is_float32(ctx: Context, dtype: ast.AST | None) -> bool | None:
    """True/False when ``dtype`` says float32 or not; ``None`` when it cannot be known."""
    if dtype is None:
        return False
    if type(dtype) is ast.Constant:
        return dtype.value in FLOAT32
    q = ctx.qualname(dtype)
    if q is not None:
        return q in FLOAT32
    if type(dtype) is ast.Call:  # Policy("float32")
        arg = dtype.args[0] if dtype.args else None
        if type(arg) is ast.Constant:
            return arg.value == "float32"
    return None


class Float16ModelOutput(Rule):
    code = "TFP503"
    name = "float16-model-output"
    message = "mixed_float16 model whose last layer is not float32: its output is float16"
    hint = ("give the last layer dtype='float32' (or end with "
            "Activation('softmax', dtype='float32'))")
    claims = ("S15",)
    group = "preview"  # numerics, never judged (docs: Known limitations)
    docs = """\
## What it does
In a module that sets the global Keras policy to `mixed_float16`, finds the last layer of a
model built there (the last element of `keras.Sequential([...])`, the last `model.add(...)`,
or the layer producing `outputs` of `keras.Model(inputs, outputs)`) when it is not created
with `dtype="float32"`.

## Why is this bad?
Under `mixed_float16` every layer computes in float16 unless told otherwise, including the
last one: a softmax in float16 saturates and its logits overflow beyond 65504, and the loss
then sees rounded probabilities (claim S15: keep numerically sensitive layers in float32).
TensorFlow's mixed precision guide asks for the model's output in float32; a float32 final
`Activation` costs almost nothing.

## Example
```python
keras.mixed_precision.set_global_policy("mixed_float16")
model = keras.Sequential([
    layers.Dense(512, activation="relu"),
    layers.Dense(10, activation="softmax"),
])
```

## Use instead
```python
model = keras.Sequential([
    layers.Dense(512, activation="relu"),
    layers.Dense(10),
    layers.Activation("softmax", dtype="float32"),
])
```

## Fix safety
No automatic fix: adding `dtype="float32"` changes the layer's weights' compute dtype and
saved models; splitting off the activation changes the layer list.

## Known limitations
Models whose last layer
is a `Lambda` (often a cast), or whose `dtype` is not a literal, are not reported.

In `preview` (not on by default): a float16 output costs numerical accuracy, not time, and
it printed nothing on the 39 user-style repositories judged so far (docs/lint.md, "Measured
precision and recall").
"""
    valid = (
        # The shape of a notebook (cells in order) that builds its models, and only in a later
        # cell turns mixed precision on: the earlier models are float32 throughout.
        Valid("""
            from tensorflow import keras
            from tensorflow.keras import layers
            def build_model(hp):
                model = keras.Sequential([layers.Dense(64, activation="relu"),
                                          layers.Dense(10, activation="softmax")])
                return model
            tuner = kt.BayesianOptimization(build_model, objective="val_accuracy")
            tuner.search(x, y)
            baseline = keras.Sequential([layers.Dense(10, activation="softmax")])
            keras.mixed_precision.set_global_policy("mixed_float16")
        """),
        # Mixed precision on, then off again before the model is built.
        Valid("""
            import keras
            from keras import layers
            keras.mixed_precision.set_global_policy("mixed_float16")
            keras.mixed_precision.set_global_policy("float32")
            model = keras.Sequential([layers.Dense(10, activation="softmax")])
        """),
        Valid("""
            import keras
            from keras import layers
            keras.mixed_precision.set_global_policy('mixed_float16')
            model = keras.Sequential([
                layers.Dense(64, activation='relu'),
                layers.Dense(10),
                layers.Activation('softmax', dtype='float32'),
            ])
        """),
        # No mixed precision policy: float32 everywhere.
        Valid("""
            import keras
            from keras import layers
            model = keras.Sequential([layers.Dense(64), layers.Dense(10, activation='softmax')])
        """),
        # bfloat16 policy: not what this rule is about.
        Valid("""
            import keras
            from keras import layers
            keras.mixed_precision.set_global_policy('mixed_bfloat16')
            model = keras.Sequential([layers.Dense(10, activation='softmax')])
        """),
        # Functional model with a float32 output layer.
        Valid("""
            import tensorflow as tf
            tf.keras.mixed_precision.set_global_policy('mixed_float16')
            inputs = tf.keras.Input(shape=(8,))
            x = tf.keras.layers.Dense(16)(inputs)
            outputs = tf.keras.layers.Dense(1, dtype=tf.float32)(x)
            model = tf.keras.Model(inputs, outputs)
        """),
        # A user's own Sequential.
        Valid("""
            import keras
            from keras import layers
            keras.mixed_precision.set_global_policy('mixed_float16')
            class Sequential(list):
                pass
            model = Sequential([layers.Dense(10)])
        """),
    )
    invalid = (
        # A function defined before the policy cell and called after it builds under it.
        Invalid("""
            from tensorflow import keras
            from tensorflow.keras import layers
            def build_model():
                return keras.Sequential([layers.Dense(64, activation="relu"),
                                         layers.Dense(10, activation="softmax")])
            keras.mixed_precision.set_global_policy("mixed_float16")
            model = build_model()
        """, count=1, lines=(5,)),
        Invalid("""
            import keras
            from keras import layers
            keras.mixed_precision.set_global_policy('mixed_float16')
            model = keras.Sequential([
                layers.Dense(64, activation='relu'),
                layers.Dense(10, activation='softmax'),
            ])
        """, count=1, lines=(6,)),
        # Functional, aliased.
        Invalid("""
            import tensorflow as tensorflow_alias
            from tensorflow.keras import mixed_precision
            mixed_precision.set_global_policy('mixed_float16')
            inputs = tensorflow_alias.keras.Input(shape=(8,))
            x = tensorflow_alias.keras.layers.Dense(16)(inputs)
            outputs = tensorflow_alias.keras.layers.Dense(3, activation='softmax')(x)
            model = tensorflow_alias.keras.Model(inputs=inputs, outputs=outputs)
        """, count=1, lines=(6,)),
        # model.add: the last one counts.
        Invalid("""
            import keras
            from keras.layers import Dense
            keras.mixed_precision.set_global_policy('mixed_float16')
            model = keras.models.Sequential()
            model.add(Dense(32, dtype='float32'))
            model.add(Dense(1, activation='sigmoid', dtype='float16'))
        """, count=1, lines=(6,)),
    )

    def check_module(self, ctx: Context) -> Iterator[Finding]:
        if mixed_float16_policy(ctx) is None:
            return
        last_added: dict[str, ast.Call] = {}
        for call in ctx.calls:
            q = ctx.qualname(call.func)
            if q in SEQUENTIAL:
                layers = call.args[0] if call.args else keyword(call, "layers")
                if type(layers) is ast.List and layers.elts:
                    yield from self._report(ctx, _layer_call(ctx, layers.elts[-1]))
            elif q in FUNCTIONAL:
                outputs = call.args[1] if len(call.args) > 1 else keyword(call, "outputs")
                items = outputs.elts if type(outputs) in (ast.List, ast.Tuple) else [outputs]
                for item in items:
                    value = assigned_value(ctx, item) if type(item) is ast.Name else item
                    if type(value) is ast.Call:  # Dense(...)(x): the layer is the callee
                        yield from self._report(ctx, _layer_call(ctx, value.func))
            elif type(call.func) is ast.Attribute and call.func.attr == "add" \
                    and type(call.func.value) is ast.Name and len(call.args) == 1:
                owner = assigned_value(ctx, call.func.value)
                if ctx.is_call_to(owner, *SEQUENTIAL):  # type: ignore[arg-type]
                    key = f"{call.func.value.id}@{id(owner)}"
                    prev = last_added.get(key)
                    if prev is None or (prev.lineno, prev.col_offset) < (
                            call.lineno, call.col_offset):
                        last_added[key] = call
        for call in last_added.values():
            yield from self._report(ctx, _layer_call(ctx, call.args[0]))

    def _report(self, ctx: Context, layer: ast.Call | None) -> Iterator[Finding]:
        if layer is None or not policy_in_effect(ctx, layer):
            return
        if _is_float32(ctx, keyword(layer, "dtype")) is False:
            yield self.finding(ctx, layer)
