"""TFP502: mixed_float16 with a custom GradientTape training loop and no loss scaling."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding
from tfperf.lint.analysis.precision import mixed_float16_policy
from tfperf.lint.rule import Example, Rule
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
"""
    valid = (
        # Loss scaling in place.
        "import tensorflow as tf\n"
        "import keras\n"
        "keras.mixed_precision.set_global_policy('mixed_float16')\n"
        "opt = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.Adam())\n"
        "def step(model, x, y):\n"
        "    with tf.GradientTape() as tape:\n"
        "        loss = tf.reduce_mean((model(x) - y) ** 2)\n"
        "        scaled = opt.scale_loss(loss)\n"
        "    grads = tape.gradient(scaled, model.trainable_variables)\n"
        "    opt.apply_gradients(zip(grads, model.trainable_variables))\n",
        # bfloat16 keeps float32's exponent range.
        "import tensorflow as tf\n"
        "import keras\n"
        "keras.mixed_precision.set_global_policy('mixed_bfloat16')\n"
        "def step(model, opt, x, y):\n"
        "    with tf.GradientTape() as tape:\n"
        "        loss = tf.reduce_mean((model(x) - y) ** 2)\n"
        "    grads = tape.gradient(loss, model.trainable_variables)\n"
        "    opt.apply_gradients(zip(grads, model.trainable_variables))\n",
        # model.fit scales the loss itself.
        "import keras\n"
        "keras.mixed_precision.set_global_policy('mixed_float16')\n"
        "def train(model, ds):\n"
        "    model.compile(optimizer='adam', loss='mse')\n"
        "    model.fit(ds, epochs=1)\n",
        # A gradient of the input (saliency), no optimizer step.
        "import tensorflow as tf\n"
        "from tensorflow.keras import mixed_precision\n"
        "mixed_precision.set_global_policy('mixed_float16')\n"
        "def saliency(model, x):\n"
        "    with tf.GradientTape() as tape:\n"
        "        tape.watch(x)\n"
        "        y = model(x)\n"
        "    return tape.gradient(y, x)\n",
    )
    invalid = (
        Example(
            "import tensorflow as tf\n"
            "import keras\n"
            "keras.mixed_precision.set_global_policy('mixed_float16')\n"
            "def step(model, opt, x, y):\n"
            "    with tf.GradientTape() as tape:\n"
            "        loss = tf.reduce_mean((model(x) - y) ** 2)\n"
            "    grads = tape.gradient(loss, model.trainable_variables)\n"
            "    opt.apply_gradients(zip(grads, model.trainable_variables))\n",
            count=1, lines=(7,)),
        # Aliased modules and a Policy object.
        Example(
            "import tensorflow as tensorflow_alias\n"
            "from tensorflow.keras import mixed_precision as mp\n"
            "policy = mp.Policy('mixed_float16')\n"
            "mp.set_global_policy(policy)\n"
            "@tensorflow_alias.function\n"
            "def step(model, opt, x):\n"
            "    with tensorflow_alias.GradientTape() as g:\n"
            "        loss = tensorflow_alias.reduce_sum(model(x))\n"
            "    grads = g.gradient(loss, model.trainable_variables)\n"
            "    opt.apply_gradients(zip(grads, model.trainable_variables))\n",
            count=1, lines=(9,)),
        # A custom train_step (Keras 3 spelling of the policy setter).
        Example(
            "import keras\n"
            "import tensorflow as tf\n"
            "keras.config.set_dtype_policy('mixed_float16')\n"
            "class M(keras.Model):\n"
            "    def train_step(self, data):\n"
            "        x, y = data\n"
            "        with tf.GradientTape() as tape:\n"
            "            loss = self.compute_loss(y=y, y_pred=self(x))\n"
            "        grads = tape.gradient(loss, self.trainable_variables)\n"
            "        self.optimizer.apply(grads, self.trainable_variables)\n"
            "        return {'loss': loss}\n",
            count=1, lines=(9,)),
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
            scope = ctx.enclosing_function(call) or ctx.tree
            if any(type(n) is ast.Call and type(n.func) is ast.Attribute
                   and n.func.attr in UPDATE_METHODS for n in ast.walk(scope)):
                yield self.finding(ctx, call)
