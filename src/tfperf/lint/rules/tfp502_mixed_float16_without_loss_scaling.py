"""TFP502: mixed_float16 with a custom GradientTape training loop and no loss scaling."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding
from tfperf.lint.analysis.precision import mixed_float16_policy, policy_in_effect
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

LOSS_SCALE_OPTIMIZERS = frozenset({
    "keras.mixed_precision.LossScaleOptimizer", "keras.optimizers.LossScaleOptimizer",
    "keras.mixed_precision.experimental.LossScaleOptimizer",
    "tensorflow.compat.v1.train.experimental.MixedPrecisionLossScaleOptimizer",
    "tensorflow.train.experimental.enable_mixed_precision_graph_rewrite",
})
# Optimizer methods that scale the loss or unscale gradients (Keras 2 and Keras 3 spellings).
SCALING_METHODS = frozenset({"get_scaled_loss", "get_unscaled_gradients", "scale_loss"})
UPDATE_METHODS = frozenset({"apply_gradients", "apply"})


def _scales_losses(ctx: Context) -> bool:
    for call in ctx.calls:
        func = call.func
        if type(func) is ast.Attribute and func.attr in SCALING_METHODS:
            return True
        if ctx.qualname(func) in LOSS_SCALE_OPTIMIZERS:
            return True
    return False


class MixedFloat16WithoutLossScaling(Rule):
    code = "TFP502"
    name = "mixed-float16-without-loss-scaling"
    message = "mixed_float16 in a custom GradientTape loop without loss scaling: fp16 underflow"
    hint = ("wrap the optimizer in keras.mixed_precision.LossScaleOptimizer and scale the "
            "loss: optimizer.scale_loss(loss) (Keras 3) / get_scaled_loss (Keras 2)")
    claims = ("S15",)
    group = "correctness"  # numerics, not time; never judged (docs: Known limitations)
    docs = """\
## What it does
In a module that sets the global Keras policy to `mixed_float16`
(`keras.mixed_precision.set_global_policy("mixed_float16")`, also through a `Policy`), finds
`tape.gradient(...)` calls of a `tf.GradientTape` whose function applies the gradients
(`optimizer.apply_gradients` / `optimizer.apply`), when nothing in the module scales the
loss: no `LossScaleOptimizer`, no `scale_loss`/`get_scaled_loss`/`get_unscaled_gradients`.

## Why is this bad?
Under `mixed_float16` activations and their gradients are float16, whose smallest normal
value is about 6e-5 (claim S15): small gradients flush to zero and training stalls or
diverges without an error. Loss scaling multiplies the loss (e.g. by 1024, or dynamically)
before differentiation and divides the gradients after. `model.fit` does this for you; a
custom loop (or a custom `train_step`) must do it itself (TF mixed precision guide).
`mixed_bfloat16` has float32's range and needs no loss scaling: it is not reported.

## Example
```python
keras.mixed_precision.set_global_policy("mixed_float16")
opt = keras.optimizers.Adam()
with tf.GradientTape() as tape:
    loss = loss_fn(y, model(x))
grads = tape.gradient(loss, model.trainable_variables)
opt.apply_gradients(zip(grads, model.trainable_variables))
```

## Use instead
```python
opt = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.Adam())
with tf.GradientTape() as tape:
    loss = loss_fn(y, model(x))
    scaled = opt.scale_loss(loss)          # Keras 2: opt.get_scaled_loss(loss)
grads = tape.gradient(scaled, model.trainable_variables)
opt.apply_gradients(zip(grads, model.trainable_variables))   # Keras 3 unscales here
```

## Fix safety
No automatic fix: loss scaling changes the optimizer object and the loop's code in several
places, with different spellings in Keras 2 and Keras 3.

## Known limitations
In the `correctness` group (off by default; `--select correctness`): gradients that
underflow cost accuracy, not time, and it printed nothing on the 39 user-style repositories
judged so far (docs/lint.md, "Measured precision and recall").
"""
    valid = (
        # The custom loop runs in a cell before the one that turns mixed precision on.
        Valid("""
            import tensorflow as tf
            import keras
            model = keras.Sequential([keras.layers.Dense(1)])
            opt = keras.optimizers.Adam()
            for x, y in data:
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((model(x) - y) ** 2)
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
            keras.mixed_precision.set_global_policy("mixed_float16")
        """),
        # Loss scaling in place.
        Valid("""
            import tensorflow as tf
            import keras
            keras.mixed_precision.set_global_policy('mixed_float16')
            opt = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.Adam())
            def step(model, x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((model(x) - y) ** 2)
                    scaled = opt.scale_loss(loss)
                grads = tape.gradient(scaled, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
        """),
        # bfloat16 keeps float32's exponent range.
        Valid("""
            import tensorflow as tf
            import keras
            keras.mixed_precision.set_global_policy('mixed_bfloat16')
            def step(model, opt, x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((model(x) - y) ** 2)
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
        """),
        # model.fit scales the loss itself.
        Valid("""
            import keras
            keras.mixed_precision.set_global_policy('mixed_float16')
            def train(model, ds):
                model.compile(optimizer='adam', loss='mse')
                model.fit(ds, epochs=1)
        """),
        # A gradient of the input (saliency), no optimizer step.
        Valid("""
            import tensorflow as tf
            from tensorflow.keras import mixed_precision
            mixed_precision.set_global_policy('mixed_float16')
            def saliency(model, x):
                with tf.GradientTape() as tape:
                    tape.watch(x)
                    y = model(x)
                return tape.gradient(y, x)
        """),
    )
    invalid = (
        Invalid("""
            import tensorflow as tf
            import keras
            keras.mixed_precision.set_global_policy('mixed_float16')
            def step(model, opt, x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((model(x) - y) ** 2)
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
        """, count=1, lines=(7,)),
        # Aliased modules and a Policy object.
        Invalid("""
            import tensorflow as tensorflow_alias
            from tensorflow.keras import mixed_precision as mp
            policy = mp.Policy('mixed_float16')
            mp.set_global_policy(policy)
            @tensorflow_alias.function
            def step(model, opt, x):
                with tensorflow_alias.GradientTape() as g:
                    loss = tensorflow_alias.reduce_sum(model(x))
                grads = g.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
        """, count=1, lines=(9,)),
        # A custom train_step (Keras 3 spelling of the policy setter).
        Invalid("""
            import keras
            import tensorflow as tf
            keras.config.set_dtype_policy('mixed_float16')
            class M(keras.Model):
                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        loss = self.compute_loss(y=y, y_pred=self(x))
                    grads = tape.gradient(loss, self.trainable_variables)
                    self.optimizer.apply(grads, self.trainable_variables)
                    return {'loss': loss}
        """, count=1, lines=(9,)),
    )

    def check_module(self, ctx: Context) -> Iterator[Finding]:
        if mixed_float16_policy(ctx) is None or _scales_losses(ctx):
            return
        for call in ctx.calls:
            func = call.func
            if type(func) is not ast.Attribute or func.attr != "gradient" \
                    or type(func.value) is not ast.Name:
                continue
            b = ctx.binding(func.value)
            if b is None or b.kind != "with" \
                    or not ctx.is_call_to(b.value, "tensorflow.GradientTape"):
                continue
            if not policy_in_effect(ctx, call):
                continue
            scope = ctx.enclosing_function(call) or ctx.tree
            if any(type(n) is ast.Call and type(n.func) is ast.Attribute
                   and n.func.attr in UPDATE_METHODS for n in ast.walk(scope)):
                yield self.finding(ctx, call)
