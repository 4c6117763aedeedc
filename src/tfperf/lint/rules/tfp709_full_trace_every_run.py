"""TFP709: ``session.run`` with tracing ``RunOptions`` (``FULL_TRACE``) on every step of a
loop: every op of the step timed and its metadata collected, every step."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from tfperf.core.findings import Finding
from tfperf.lint.analysis.imports import imported_from
from tfperf.lint.analysis.loops import guarded
from tfperf.lint.analysis.syntax import keyword
from tfperf.lint.analysis.trips import trip_count
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

if TYPE_CHECKING:
    from tfperf.analysis.project import Project

_TRACES = frozenset({"FULL_TRACE", "SOFTWARE_TRACE", "HARDWARE_TRACE"})
_HANDFUL = 8


def _tracing_options(ctx: Context, expr: Any, depth: int = 0) -> bool:
    """``expr`` is ``RunOptions(trace_level=...FULL_TRACE)`` (software or hardware trace
    too), directly, through a name or a ``self`` attribute assigned once in the module."""
    if expr is None or depth > 4:
        return False
    if type(expr) is ast.Call:
        if not (ctx.call_qualname(expr) or "").endswith("RunOptions"):
            return False
        level = keyword(expr, "trace_level")
        if level is None and expr.args:
            level = expr.args[0]
        return type(level) is ast.Attribute and level.attr in _TRACES
    if type(expr) is ast.Name:
        b = ctx.binding(expr)
        return b is not None and b.kind == "assign" and _tracing_options(ctx, b.value, depth + 1)
    if type(expr) is ast.Attribute and type(expr.value) is ast.Name and expr.value.id == "self":
        values = [n.value for n in ctx.nodes_of(ast.Assign)
                  if type(n) is ast.Assign and len(n.targets) == 1
                  and type(n.targets[0]) is ast.Attribute and n.targets[0].attr == expr.attr]
        return len(values) == 1 and _tracing_options(ctx, values[0], depth + 1)
    return False


def _mentions_tracing(ctx: Context) -> bool:
    """A cheap gate: the module spells tracing options or collects run metadata."""
    src = ctx.source
    return "RunOptions" in src or "RunMetadata" in src or "run_metadata" in src


def _every_step(ctx: Context, call: ast.Call) -> bool:
    """``call`` runs on every iteration of a loop of more than a handful of steps."""
    loops = ctx.enclosing_loops(call)
    if not loops or guarded(ctx, call, loops[0]):
        return False
    body: Any = getattr(loops[0], "body", [])
    if any(type(s) in (ast.Break, ast.Return, ast.Raise) for s in body):
        return False  # `for batch in batches: sess.run(..., options=...); break`: one step
    n = trip_count(ctx, loops[0])
    return n is None or n > _HANDFUL


class FullTraceEveryRun(Rule):
    code = "TFP709"
    name = "full-trace-every-run"
    message = ("session.run traced (RunOptions FULL_TRACE) on every step of the loop: each "
               "op timed and its step stats collected, every step")
    hint = ("trace one step now and then: pass options/run_metadata only when step % 1000 "
            "== 0 (or once, after warm-up), and run the other steps plainly")
    claims = ("S22",)
    group = "preview"  # no judged finding on user code yet (stop 42)
    node_types = (ast.Call,)
    callee_names = frozenset({"run"})
    requires_imports = frozenset({"tensorflow"})
    docs = """\
## What it does
Finds `sess.run(..., options=opts, ...)` in a loop, not under an `if` in the loop, where
`opts` is `RunOptions(trace_level=RunOptions.FULL_TRACE)` (or a software or hardware trace),
written in the call, bound to a name or a `self` attribute, or imported from another module
of the project. A loop of eight steps or fewer, or one whose body ends in `break`/`return`
(one step traced), is left alone.

## Why is this bad?
A traced run times every op and collects its step statistics (and, with a full trace, the
tensors' allocations) into `RunMetadata`, which is then copied to Python: profiling
overhead paid on every training step, where one traced step after warm-up is what a timeline
needs. Measured (`benchmarks/lint_fixes/rule_claims.py --cases TFP709`, TF 2.21 CPU, a TF1
graph of four 256-wide dense layers on 32 inputs, 50 steps, medians of 5, two loaded
cores): traced every step 1.10-1.29x the plain step in four runs, 3.0x in one; the cost is
per op of the step, so it is the larger share of a step of many small ops.

## Example
```python
run_options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
for step in range(10000):
    run_metadata = tf.RunMetadata()
    sess.run(train_op, feed_dict=feed, options=run_options, run_metadata=run_metadata)
```

## Use instead
```python
for step in range(10000):
    if step % 1000 == 999:
        run_metadata = tf.RunMetadata()
        sess.run(train_op, feed_dict=feed, options=run_options, run_metadata=run_metadata)
        writer.add_run_metadata(run_metadata, f"step{step}")
    else:
        sess.run(train_op, feed_dict=feed)
```

## Fix safety
No automatic fix: which steps to trace is the author's choice.

## Known limitations
Options built by a function (`make_options()`) or kept in a container are not followed;
Keras's `compile(options=...)` is not covered.
"""
    valid = (
        Valid("""
            import tensorflow as tf
            run_options = tf.compat.v1.RunOptions(trace_level=tf.compat.v1.RunOptions.FULL_TRACE)
            for step in range(10000):
                if step % 1000 == 999:
                    md = tf.compat.v1.RunMetadata()
                    sess.run(train_op, options=run_options, run_metadata=md)
                else:
                    sess.run(train_op)
        """, spelling="loop: one traced step in a thousand"),
        Valid("""
            import tensorflow as tf
            opts = tf.compat.v1.RunOptions(report_tensor_allocations_upon_oom=True)
            for step in range(10000):
                sess.run(train_op, options=opts)
        """, spelling="name: options that do not trace"),
        Valid("""
            import tensorflow as tf
            opts = tf.compat.v1.RunOptions(trace_level=tf.compat.v1.RunOptions.FULL_TRACE)
            for i in range(3):
                md = tf.compat.v1.RunMetadata()
                sess.run(fetches[i], options=opts, run_metadata=md)
        """, spelling="index: three traced runs, on purpose"),
        Valid("""
            import tensorflow as tf
            from profiling import run_options
            md = tf.compat.v1.RunMetadata()
            sess.run(train_op, options=run_options, run_metadata=md)
            for step in range(10000):
                sess.run(train_op)
        """, files={"profiling.py": """
            import tensorflow as tf
            run_options = tf.compat.v1.RunOptions(
                trace_level=tf.compat.v1.RunOptions.FULL_TRACE)
        """}, spelling="module"),
        Valid("""
            import tensorflow as tf
            # %%
            opts = tf.compat.v1.RunOptions(trace_level=tf.compat.v1.RunOptions.FULL_TRACE)
            # %%
            md = tf.compat.v1.RunMetadata()
            sess.run(train_op, options=opts, run_metadata=md)
        """, notebook=True, spelling="notebook"),
        Valid("""
            import tensorflow as tf
            run_options = tf.compat.v1.RunOptions(trace_level=tf.compat.v1.RunOptions.FULL_TRACE)
            for batch in batches:
                sess.run(train_op, feed_dict={x: batch}, options=run_options,
                         run_metadata=tf.compat.v1.RunMetadata())
                break
        """, spelling="loop: one batch traced, then break"),
    )
    invalid = (
        Invalid("""
            import tensorflow as tf
            run_options = tf.compat.v1.RunOptions(trace_level=tf.compat.v1.RunOptions.FULL_TRACE)
            for step in range(10000):
                run_metadata = tf.compat.v1.RunMetadata()
                sess.run(train_op, options=run_options, run_metadata=run_metadata)
        """, count=1, lines=(5,), spelling="name: the options through a name"),
        Invalid("""
            import tensorflow as tf
            step = 0
            while step < max_steps:
                sess.run(train_op, feed_dict=feed,
                         options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                         run_metadata=tf.RunMetadata())
                step += 1
        """, count=1, lines=(4,), spelling="loop: a while loop, options in the call"),
        Invalid("""
            import tensorflow as tf
            class Trainer:
                def __init__(self, sess):
                    self.sess = sess
                    self.opts = tf.compat.v1.RunOptions(
                        trace_level=tf.compat.v1.RunOptions.FULL_TRACE)
                def train(self, batches):
                    for i in range(len(batches)):
                        self.sess.run(self.train_op, feed_dict={self.x: batches[i]},
                                      options=self.opts, run_metadata=self.md)
        """, count=1, lines=(9,), spelling="index: batches[i], the options on self"),
        Invalid("""
            import tensorflow as tf
            from profiling import run_options
            for step in range(10000):
                sess.run(train_op, options=run_options, run_metadata=tf.compat.v1.RunMetadata())
        """, files={"profiling.py": """
            import tensorflow as tf
            run_options = tf.compat.v1.RunOptions(
                trace_level=tf.compat.v1.RunOptions.FULL_TRACE)
        """}, count=1, lines=(4,), spelling="module"),
        Invalid("""
            import tensorflow as tf
            # %%
            opts = tf.compat.v1.RunOptions(trace_level=tf.compat.v1.RunOptions.SOFTWARE_TRACE)
            # %%
            for batch in batches:
                sess.run(train_op, feed_dict={x: batch}, options=opts,
                         run_metadata=tf.compat.v1.RunMetadata())
        """, count=1, notebook=True, spelling="notebook"),
    )

    def applies_to(self, ctx: Context) -> bool:
        return _mentions_tracing(ctx)

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        call: Any = node
        if type(call.func) is not ast.Attribute or call.func.attr != "run":
            return
        opts = keyword(call, "options")
        if opts is not None and _tracing_options(ctx, opts) and _every_step(ctx, call):
            yield self.finding(ctx, call)

    def publish(self, ctx: Context) -> list[dict] | None:
        """Module-level names bound to tracing options; runs in a loop given an imported
        name as ``options`` (to check against the module it comes from)."""
        if not _mentions_tracing(ctx):
            return None
        from tfperf.analysis.summary import position

        facts: list[dict] = []
        for stmt in ctx.tree.body:
            if type(stmt) is ast.Assign and len(stmt.targets) == 1 \
                    and type(stmt.targets[0]) is ast.Name \
                    and _tracing_options(ctx, stmt.value):
                facts.append({"options": stmt.targets[0].id})
        for call in ctx.calls:
            if type(call.func) is not ast.Attribute or call.func.attr != "run":
                continue
            opts = keyword(call, "options")
            if type(opts) is not ast.Name or not _every_step(ctx, call):
                continue
            imported = imported_from(ctx, opts)
            if imported is not None:
                facts.append({"use": imported[1], "from": imported[0],
                              "pos": position(ctx, call)})
        return facts or None

    def check_project(self, project: Project) -> Iterator[Finding]:
        for module, fact, defined in project.imported_uses(self.code):
            if any(f.get("options") == fact["use"] for f in defined):
                yield self.project_finding(module.path, fact["pos"])
