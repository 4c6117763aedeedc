"""TFP311: summaries computed and written on every training step (in a traced step with no
``record_if`` or every-N guard; TF1's ``merge_all`` fetched in every ``session.run``)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from tfperf.core.findings import Finding
from tfperf.lint.analysis.syntax import keyword, method_call
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

# TF2 summary writers (each a recorded op in a traced step; scalars are cheap).
_TF2 = frozenset({"tensorflow.summary.histogram", "tensorflow.summary.image",
                  "tensorflow.summary.audio", "tensorflow.summary.text",
                  "tensorflow.summary.scalar", "tensorflow.summary.write"})
_MERGE_ALL = frozenset({"tensorflow.compat.v1.summary.merge_all", "tensorflow.summary.merge_all",
                        "tensorflow.compat.v1.summary.merge", "tensorflow.summary.merge"})
# Words that say some code chooses when summaries are recorded.
_GUARDS = ("record_if", "should_record_summaries", "record_summaries")
# Updates that make a traced function a training step.
_TRAIN_CALLS = frozenset({"apply_gradients", "minimize", "gradient"})


def _guarded(ctx: Context, node: ast.AST, stop: ast.AST | None) -> bool:
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


def _training_step(ctx: Context, fn: ast.AST) -> bool:
    """``fn`` updates weights: it computes a gradient or applies one."""
    return any(method_call(n, *_TRAIN_CALLS) for n in ast.walk(fn))


def _fetches(call: ast.Call) -> list[ast.AST]:
    """What a ``session.run`` fetches, flattened one level (a list, tuple or dict)."""
    f: Any = call.args[0] if call.args else keyword(call, "fetches")
    if f is None:
        return []
    if type(f) in (ast.List, ast.Tuple):
        return list(f.elts)
    if type(f) is ast.Dict:
        return [v for v in f.values if v is not None]
    return [f]


def _merged_names(ctx: Context) -> set[str]:
    """Names bound to ``merge_all()``/``merge([...])`` in this module (``self.merged`` as
    ``merged``)."""
    out: set[str] = set()
    for call in ctx.calls:
        if ctx.call_qualname(call) not in _MERGE_ALL:
            continue
        p: Any = ctx.parent(call)
        if type(p) is ast.Assign:
            for t in p.targets:
                if type(t) is ast.Name:
                    out.add(t.id)
                elif type(t) is ast.Attribute:
                    out.add(t.attr)
    return out


def _names(expr: Any) -> str | None:
    if type(expr) is ast.Name:
        return expr.id
    if type(expr) is ast.Attribute:
        return expr.attr
    return None


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
    callee_names = frozenset({"histogram", "image", "audio", "text", "scalar", "write", "run"})
    needs_tf = True
    docs = """\
## What it does
Finds summary ops run on every training step:
- TF2: `tf.summary.histogram`/`image`/`audio`/`text`/`scalar`/`write` in a `tf.function`
  that computes or applies gradients, not under an `if` in that function, in a module that
  never calls `tf.summary.record_if` (or `should_record_summaries`); one finding per step
  function, on its first summary op;
- TF1: a `session.run` in a loop, not under an `if` in the loop, that fetches a name bound
  to `tf.summary.merge_all()` or `merge([...])` in this module.

## Why is this bad?
A summary op in a traced step runs every time the step runs: a histogram reduces each
weight to buckets, an image summary encodes PNGs, and each writes an event to the file. TF1's
`merge_all` fetched with the train op copies the serialized summary to Python every step,
and `add_summary` parses and queues it. TensorBoard shows a handful of points per thousand
steps. TF's guide (`tf.summary` "record_if", the TF1 `MonitoredTrainingSession`'s
`save_summaries_steps=100`) records every N steps. The cost per step depends on how much is
summarised against how much the step computes: measured with
`benchmarks/lint_fixes/rule_claims.py --cases TFP311,TFP311v1` on TF 2.21 CPU here (see
docs/lint.md "Stop 39, pass A").

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
Preview: no judged finding yet. A module that calls `record_if` anywhere is taken as
guarded (the caller may wrap the loop); a step in another module, a summary op in a
helper the step calls, and Keras's `TensorBoard(histogram_freq=1)` callback are not read.
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
        Valid("""
            import tensorflow as tf
            tf.compat.v1.summary.scalar("loss", loss)
            merged = tf.compat.v1.summary.merge_all()
            # %%
            for i in range(10000):
                if i % 100 == 0:
                    _, s = sess.run([train_op, merged], feed_dict={x: xs[i]})
                    writer.add_summary(s, i)
                else:
                    sess.run(train_op, feed_dict={x: xs[i]})
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
        Invalid("""
            import tensorflow as tf
            tf.compat.v1.summary.scalar("loss", loss)
            merged = tf.compat.v1.summary.merge_all()
            # %%
            for i in range(10000):
                _, s = sess.run([train_op, merged], feed_dict={x: xs[i]})
                writer.add_summary(s, i)
        """, count=1, notebook=True, spelling="notebook"),
        Invalid("""
            import tensorflow.compat.v1 as tf
            class Model:
                def build(self):
                    self.merged = tf.summary.merge_all()
                def train(self, sess, batches):
                    for step, (x, y) in enumerate(batches):
                        summary, _ = sess.run([self.merged, self.train_op],
                                              feed_dict={self.x: x, self.y: y})
                        self.writer.add_summary(summary, step)
        """, count=1, lines=(7,), spelling="name: self.merged"),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        call: Any = node
        if type(call.func) is not ast.Attribute:
            return
        if call.func.attr == "run":
            yield from self._check_run(call, ctx)
            return
        if ctx.call_qualname(call) not in _TF2:
            return
        fn = ctx.tf_function_of(call)
        if fn is None or any(w in ctx.source for w in _GUARDS) or _guarded(ctx, call, fn):
            return
        if not _training_step(ctx, fn):
            return
        first = ctx.cached("tfp311.first", lambda: self._first_summaries(ctx))
        if first.get(id(fn)) is call:
            yield self.finding(ctx, node)

    def _first_summaries(self, ctx: Context) -> dict[int, ast.Call]:
        """The first summary op (in source order) of each traced function: one finding a step."""
        out: dict[int, ast.Call] = {}
        for c in sorted(ctx.calls, key=lambda c: (c.lineno, c.col_offset)):
            if type(c.func) is ast.Attribute and ctx.call_qualname(c) in _TF2:
                fn = ctx.tf_function_of(c)
                if fn is not None and not _guarded(ctx, c, fn):
                    out.setdefault(id(fn), c)
        return out

    def _check_run(self, call: ast.Call, ctx: Context) -> Iterator[Finding]:
        merged = ctx.cached("tfp311.merged", lambda: _merged_names(ctx))
        if not merged or not any(_names(f) in merged for f in _fetches(call)):
            return
        loops = ctx.enclosing_loops(call)
        if not loops or _guarded(ctx, call, loops[0]):
            return
        yield self.finding(ctx, call)
