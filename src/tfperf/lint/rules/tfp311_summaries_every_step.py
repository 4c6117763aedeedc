"""TFP311: summaries computed and written on every training step of a traced step (no
``record_if`` or every-N guard). TF1's merged summary fetched every run is TFP708."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from tfperf.core.findings import Finding
from tfperf.lint.analysis.loops import guarded
from tfperf.lint.analysis.syntax import method_call
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

# TF2 summary writers (each a recorded op in a traced step; scalars are cheap).
_TF2 = frozenset({"tensorflow.summary.histogram", "tensorflow.summary.image",
                  "tensorflow.summary.audio", "tensorflow.summary.text",
                  "tensorflow.summary.scalar", "tensorflow.summary.write"})
# Words that say some code chooses when summaries are recorded.
_GUARDS = ("record_if", "should_record_summaries", "record_summaries")
# Updates that make a traced function a training step.
_TRAIN_CALLS = frozenset({"apply_gradients", "minimize", "gradient"})


def _training_step(ctx: Context, fn: ast.AST) -> bool:
    """``fn`` updates weights: it computes a gradient or applies one."""
    return any(method_call(n, *_TRAIN_CALLS) for n in ast.walk(fn))


_SCALAR = "tensorflow.summary.scalar"


def _after_the_steps(ctx: Context, fn: ast.AST, call: ast.AST) -> bool:
    """Review 39 (8): ``fn`` loops over its training steps (a whole epoch traced) and
    ``call`` lies outside that loop: one summary per call of ``fn``, not per step."""
    around = ctx.enclosing_loops(call)
    for n in ast.walk(fn):
        if method_call(n, *_TRAIN_CALLS) and ctx.enclosing_function(n) is fn:
            loops = ctx.enclosing_loops(n)
            if loops and loops[-1] not in around:
                return True
    return False


class SummariesEveryStep(Rule):
    code = "TFP311"
    name = "summaries-every-step"
    message = ("summaries computed and written on every training step: most are never "
               "looked at")
    hint = ("record every N steps: with tf.summary.record_if(step % 100 == 0) around the "
            "summary ops (TF1: fetch the merged summary only when step % N == 0)")
    claims = ("S19",)
    group = "preview"  # new (issue 25, stop 38's summary-op misses): waits for judged findings
    node_types = (ast.Call,)
    callee_names = frozenset({"histogram", "image", "audio", "text", "scalar", "write"})
    needs_tf = True
    docs = """\
## What it does
Finds `tf.summary.histogram`/`image`/`audio`/`text`/`scalar`/`write` in a `tf.function`
that computes or applies gradients (scalars only alongside another summary op: a loss
scalar alone is cheap; not after a loop of steps in the function: a traced epoch records
once), not under an `if` in that function, in a module that
never calls `tf.summary.record_if` (or `should_record_summaries`); one finding per step
function, on its first summary op. TF1's merged summary fetched in every `session.run` is
TFP708.

## Why is this bad?
A summary op in a traced step runs every time the step runs: a histogram reduces each
weight to buckets, an image summary encodes PNGs, and each writes an event to the file.
TensorBoard shows a handful of points per thousand
steps. TF's guide (`tf.summary` "record_if", the TF1 `MonitoredTrainingSession`'s
`save_summaries_steps=100`) records every N steps. The cost per step depends on how much is
summarised against how much the step computes: measured with
`benchmarks/lint_fixes/rule_claims.py --cases TFP311` on TF 2.21 CPU here, a 4-layer dense
step with histograms of every weight and gradient: no stable gain (1.02×, 1.71×, 0.70× in
three runs; docs/lint.md "Stop 39, pass A"), unlike TF1's fetched summary (TFP708).

## Example
```python
@tf.function
def train_step(x, y, step):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
    for v in model.trainable_variables:
        tf.summary.histogram(v.name, v, step=step)
```

## Use instead
```python
    with tf.summary.record_if(step % 100 == 0):
        for v in model.trainable_variables:
            tf.summary.histogram(v.name, v, step=step)
```

## Fix safety
No automatic fix: how often to record is the user's choice.

## Known limitations
Preview: no finding on the user code read in stop 39 (TF1's form, TFP708, gave 15). A
module that calls `record_if` anywhere is taken as guarded (the caller may wrap the loop);
a step in another module, a summary op in a helper the step calls, and Keras's
`TensorBoard(histogram_freq=1)` callback are not read.
Review 39 (8): a step whose only summaries are scalars is left alone (the one real hit
before, tensorflow/graphics's NeRF `model.py`, was three loss scalars), and so is a summary
after the loop of a traced epoch. What is left rests on "most are never looked at", not on a
measured gain (above): precision on user code is unmeasured since this change.
"""
    _STEP = """
            import tensorflow as tf
            opt = tf.keras.optimizers.Adam()
    """
    valid = (
        Valid(_STEP + """
            @tf.function
            def train_step(x, y, step):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((model(x) - y) ** 2)
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
                with tf.summary.record_if(step % 100 == 0):
                    for v in model.trainable_variables:
                        tf.summary.histogram(v.name, v, step=step)
                return loss
        """, spelling="loop: record_if"),
        Valid(_STEP + """
            @tf.function
            def train_step(x, y, step):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((model(x) - y) ** 2)
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
                if step % 100 == 0:
                    tf.summary.histogram("w0", model.trainable_variables[0], step=step)
                return loss
        """, spelling="index: if step % N"),
        # An evaluation function: no gradient, called once per evaluation.
        Valid(_STEP + """
            @tf.function
            def log_images(x, step):
                tf.summary.image("inputs", x, step=step, max_outputs=4)
        """, spelling="name: no training step"),
        Valid("""
            import tensorflow as tf
            from steps import train_step
            for step, (x, y) in enumerate(ds):
                train_step(x, y, step)
        """, files={"steps.py": """
            import tensorflow as tf
            opt = tf.keras.optimizers.Adam()
            @tf.function
            def train_step(x, y, step):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((model(x) - y) ** 2)
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
                with tf.summary.record_if(step % 50 == 0):
                    tf.summary.histogram("logits", model(x), step=step)
        """}, spelling="module"),
        Valid(_STEP + """
            # %%
            @tf.function
            def train_step(x, y, step):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((model(x) - y) ** 2)
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
                return loss
            # %%
            for step, (x, y) in enumerate(ds):
                loss = train_step(x, y, step)
                if step % 100 == 0:
                    tf.summary.scalar("loss", loss, step=step)
        """, notebook=True, spelling="notebook"),
    )
    invalid = (
        Invalid(_STEP + """
            @tf.function
            def train_step(x, y, step):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((model(x) - y) ** 2)
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
                for v in model.trainable_variables:
                    tf.summary.histogram(v.name, v, step=step)
                return loss
        """, count=1, lines=(11,), spelling="loop: per variable"),
        Invalid(_STEP + """
            @tf.function
            def train_step(x, y, step):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((model(x) - y) ** 2)
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
                tf.summary.histogram("w0", model.trainable_variables[0], step=step)
                tf.summary.scalar("loss", loss, step=step)
                return loss
        """, count=1, lines=(10,), spelling="index: one variable"),
        Invalid("""
            import tensorflow as tf
            class Trainer:
                def __init__(self, model):
                    self.model = model
                    self.opt = tf.keras.optimizers.Adam()
                @tf.function
                def step(self, x, y, i):
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean((self.model(x) - y) ** 2)
                    grads = tape.gradient(loss, self.model.trainable_variables)
                    self.opt.apply_gradients(zip(grads, self.model.trainable_variables))
                    tf.summary.image("inputs", x, step=i)
                    return loss
        """, count=1, lines=(12,), spelling="name: a method"),
        Invalid("""
            import tensorflow as tf
            from steps import train_step
            for step, (x, y) in enumerate(ds):
                train_step(x, y, step)
        """, files={"steps.py": """
            import tensorflow as tf
            opt = tf.keras.optimizers.Adam()
            @tf.function
            def train_step(x, y, step):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((model(x) - y) ** 2)
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
                tf.summary.histogram("logits", model(x), step=step)
        """}, count=1, spelling="module"),
        Invalid(_STEP + """
            # %%
            @tf.function
            def train_step(x, y, step):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((model(x) - y) ** 2)
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
                tf.summary.scalar("loss", loss, step=step)
                tf.summary.histogram("w", model.trainable_variables[0], step=step)
                return loss
        """, count=1, notebook=True, spelling="notebook"),
    )
    # Review 39 (8): a lone loss scalar (cheap), and a traced epoch that records once after
    # its loop of steps.
    valid = (  # type: ignore[assignment]
        *valid,
        Valid(_STEP + """
            @tf.function
            def train_step(x, y, step):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((model(x) - y) ** 2)
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
                tf.summary.scalar("loss", loss, step=step)
                return loss
        """, spelling="name: a loss scalar"),
        Valid(_STEP + """
            @tf.function
            def train_epoch(ds, epoch):
                for x, y in ds:
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean((model(x) - y) ** 2)
                    grads = tape.gradient(loss, model.trainable_variables)
                    opt.apply_gradients(zip(grads, model.trainable_variables))
                tf.summary.histogram("w0", model.trainable_variables[0], step=epoch)
        """, spelling="loop: once an epoch"),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        call: Any = node
        if type(call.func) is not ast.Attribute or "summary" not in ctx.source:
            return
        if ctx.call_qualname(call) not in _TF2:
            return
        fn = ctx.tf_function_of(call)
        if fn is None or any(w in ctx.source for w in _GUARDS) or guarded(ctx, call, fn):
            return
        if not _training_step(ctx, fn) or _after_the_steps(ctx, fn, call):
            return
        first = ctx.cached("tfp311.first", lambda: self._first_summaries(ctx))
        if first.get(id(fn)) is call:
            yield self.finding(ctx, node)

    def _first_summaries(self, ctx: Context) -> dict[int, ast.Call]:
        """The first summary op (in source order) of each traced function: one finding a step."""
        out: dict[int, ast.Call] = {}
        beyond_scalars: set[int] = set()
        for c in sorted(ctx.calls, key=lambda c: (c.lineno, c.col_offset)):
            q = ctx.call_qualname(c) if type(c.func) is ast.Attribute else None
            if q in _TF2:
                fn = ctx.tf_function_of(c)
                if fn is not None and not guarded(ctx, c, fn):
                    out.setdefault(id(fn), c)
                    if q != _SCALAR:
                        beyond_scalars.add(id(fn))
        # Review 39 (8): scalars alone are cheap (a few floats a step): not reported.
        return {k: c for k, c in out.items() if k in beyond_scalars}
