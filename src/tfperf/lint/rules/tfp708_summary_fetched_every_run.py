"""TFP708: TF1's merged summary fetched in every training ``session.run`` of a loop."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from tfperf.core.findings import Finding
from tfperf.lint.analysis.loops import guarded
from tfperf.lint.analysis.syntax import keyword
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

_MERGE = frozenset({"tensorflow.compat.v1.summary.merge_all", "tensorflow.summary.merge_all",
                    "tensorflow.compat.v1.summary.merge", "tensorflow.summary.merge"})


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
    by_attr, by_name = ctx.call_groups()
    candidates = [*by_attr.get("merge_all", ()), *by_attr.get("merge", ()),
                  *by_name.get("merge_all", ())]
    for call in candidates:
        if ctx.call_qualname(call) not in _MERGE:
            continue
        p: Any = ctx.parent(call)
        if type(p) is ast.Assign:
            for t in p.targets:
                if type(t) is ast.Name:
                    out.add(t.id)
                elif type(t) is ast.Attribute:
                    out.add(t.attr)
    return out


def _is_merged(ctx: Context, expr: Any, merged: set[str]) -> bool:
    """Review 39 (11): ``expr`` (a fetch) holds a merged summary. Its binding in scope
    decides where it is seen (``merged = merge_all()`` here: yes; ``merged = tf.concat(...)``
    in another function: a tensor, no); a name whose value is not seen here (a parameter, a
    helper's result, an attribute of another object) goes by the name as before."""
    if _name(expr) not in merged:
        return False
    if type(expr) is ast.Name:
        b = ctx.binding(expr)
        values = [b.value] if b is not None and b.kind == "assign" else []
    elif type(expr) is ast.Attribute and type(expr.value) is ast.Name \
            and expr.value.id == "self":
        from tfperf.analysis.kinds import self_assignments

        values = self_assignments(ctx, expr).get(expr.attr) or []
    else:
        values = []
    if not values:
        return True
    for v in values:
        q = ctx.call_qualname(v) if type(v) is ast.Call else None
        if q in _MERGE or q is None:
            return True  # a merge, or a value not known here (a helper's result)
    return False  # every value a library call other than a merge (tf.concat, ...)


def _name(expr: Any) -> str | None:
    if type(expr) is ast.Name:
        return str(expr.id)
    if type(expr) is ast.Attribute:
        return str(expr.attr)
    return None


_GRAPH = """
            import tensorflow as tf
            tf.compat.v1.summary.histogram("w", w)
            merged = tf.compat.v1.summary.merge_all()
"""


class SummaryFetchedEveryRun(Rule):
    code = "TFP708"
    name = "summary-fetched-every-run"
    message = ("the merged summary fetched in every session.run of the loop: computed, "
               "serialized and written every step")
    hint = ("fetch it every N steps: if step % 100 == 0: run [train_op, merged] and "
            "add_summary, else run train_op alone")
    claims = ("S19",)
    group = "perf"  # 15 judged findings on the user corpus, 9 true / 6 minor (docs/lint.md)
    node_types = (ast.Call,)
    callee_names = frozenset({"run"})
    requires_imports = frozenset({"tensorflow"})
    docs = """\
## What it does
Finds a `session.run` in a loop, not under an `if` in the loop, that fetches a name bound
to `tf.summary.merge_all()` or `tf.summary.merge([...])` in this module (`merged`,
`self.merged`) with something else (the train op): the summary rides on every step. A run
of the summary alone (once an epoch, an evaluation) is left alone.

## Why is this bad?
Every fetch of the merged summary runs every summary op of the graph (a histogram reduces a
weight to buckets, an image summary encodes PNGs), serializes the protocol buffer, copies it
to Python, and `add_summary` parses and queues it: on every training step, though
TensorBoard plots a handful of points per thousand steps. TF1's `MonitoredTrainingSession`
records every 100 steps by default (`save_summaries_steps=100`). Measured with
`benchmarks/lint_fixes/rule_claims.py --cases TFP708` on TF 2.21 CPU here (four dense
layers of 256, their weights' histograms and the loss): every step against every 100th,
14.5×, 24.2× and 61.6× in three runs on two loaded cores (docs/lint.md "Stop 39, pass A").

Judged on user code (stop 39, by the rule's author): 15 findings in three tutorial
repositories' TensorBoard lessons, 9 true, 6 minor (two scalars merged), 0 false.

## Example
```python
for step in range(10000):
    _, s = sess.run([train_op, merged], feed_dict=feed)
    writer.add_summary(s, step)
```

## Use instead
```python
for step in range(10000):
    if step % 100 == 0:
        _, s = sess.run([train_op, merged], feed_dict=feed)
        writer.add_summary(s, step)
    else:
        sess.run(train_op, feed_dict=feed)
```

## Fix safety
No automatic fix: how often to record is the user's choice.

## Known limitations
Only a merged summary bound in this module (a summary op fetched by itself, or one merged in
another module, is not read); a run under any `if` in its loop is taken as recorded now and
then.
"""
    valid = (
        Valid(_GRAPH + """
            for step in range(10000):
                if step % 100 == 0:
                    _, s = sess.run([train_op, merged], feed_dict={x: xs[step]})
                    writer.add_summary(s, step)
                else:
                    sess.run(train_op, feed_dict={x: xs[step]})
        """, spelling="loop: every N steps"),
        Valid(_GRAPH + """
            for epoch in range(50):
                for i in range(len(batches)):
                    sess.run(train_op, feed_dict={x: batches[i]})
                s = sess.run(merged, feed_dict={x: batches[0]})
                writer.add_summary(s, epoch)
        """, spelling="index: once an epoch"),
        Valid("""
            import tensorflow.compat.v1 as tf
            class Model:
                def build(self):
                    self.merged = tf.summary.merge_all()
                def train(self, sess, batches):
                    for step, (x, y) in enumerate(batches):
                        fetches = [self.train_op]
                        if step % self.log_every == 0:
                            fetches.append(self.merged)
                        sess.run(fetches, feed_dict={self.x: x, self.y: y})
        """, spelling="name: self.merged"),
        Valid("""
            import tensorflow as tf
            from graph import build
            train_op, merged = build()
            for step in range(1000):
                if step % 50 == 0:
                    writer.add_summary(sess.run(merged), step)
                sess.run(train_op)
        """, files={"graph.py": """
            import tensorflow as tf
            def build():
                tf.compat.v1.summary.scalar("loss", loss)
                return train_op, tf.compat.v1.summary.merge_all()
        """}, spelling="module"),
        Valid(_GRAPH + """
            # %%
            for i in range(10000):
                sess.run(train_op, feed_dict={x: xs[i]})
            writer.add_summary(sess.run(merged, feed_dict={x: xs[0]}), 10000)
        """, notebook=True, spelling="notebook"),
    )
    invalid = (
        Invalid(_GRAPH + """
            for step in range(10000):
                _, s = sess.run([train_op, merged], feed_dict={x: xs[step]})
                writer.add_summary(s, step)
        """, count=1, lines=(6,), spelling="loop: every N steps"),
        Invalid(_GRAPH + """
            for epoch in range(50):
                for i in range(len(batches)):
                    s, _ = sess.run([merged, train_op], feed_dict={x: batches[i]})
                    writer.add_summary(s, epoch * len(batches) + i)
        """, count=1, lines=(7,), spelling="index: once an epoch"),
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
        Invalid("""
            import tensorflow as tf
            from graph import train
            train(sess, batches)
        """, files={"graph.py": """
            import tensorflow as tf
            merged = tf.compat.v1.summary.merge_all()
            def train(sess, batches):
                for step, batch in enumerate(batches):
                    out = sess.run({"op": train_op, "summary": merged}, feed_dict={x: batch})
                    writer.add_summary(out["summary"], step)
        """}, count=1, spelling="module"),
        Invalid(_GRAPH + """
            # %%
            for i in range(10000):
                _, s = sess.run([train_op, merged], feed_dict={x: xs[i]})
                writer.add_summary(s, i)
        """, count=1, notebook=True, spelling="notebook"),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        call: Any = node
        if type(call.func) is not ast.Attribute or call.func.attr != "run" \
                or "merge" not in ctx.source:
            return
        merged = ctx.cached("tfp708.merged", lambda: _merged_names(ctx))
        fetches = _fetches(call)
        summaries = [f for f in fetches if _is_merged(ctx, f, merged)]
        if not summaries:
            return
        if len(summaries) == len(fetches):
            return  # the summary run by itself (once an epoch, an evaluation): not a step
        loops = ctx.enclosing_loops(call)
        if not loops or guarded(ctx, call, loops[0]):
            return
        yield self.finding(ctx, node)
