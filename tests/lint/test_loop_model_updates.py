"""The loop model's updates of carried values (issue 26): which carried value is a
reduction of itself, with its operation and term, and which is a running sum read in the
same iteration (a prefix sum) — what tune's loop levers derive their rewrites from."""

from __future__ import annotations

import ast
import textwrap

from tfperf.analysis.loops import loop_of
from tfperf.lint.semantic import Context


def _loop(src: str):
    src = textwrap.dedent(src)
    tree = ast.parse(src)
    ctx = Context(tree, src, "m.py")
    node = next(n for n in ast.walk(tree) if isinstance(n, (ast.For, ast.While)))
    return loop_of(ctx, node)


def test_a_running_sum_read_after_its_update_is_a_prefix():
    loop = _loop("""
        import tensorflow as tf
        def f(x):
            acc = tf.zeros([3])
            out = []
            for t in range(x.shape[0]):
                acc = acc + x[t]
                out.append(acc / (t + 1))
            return tf.stack(out)
        """)
    assert loop.shape == "carried"
    (update,) = loop.updates
    assert (update.name, update.op, ast.unparse(update.term), update.statement) == \
        ("acc", "add", "x[t]", True)
    assert loop.running == frozenset({"acc"})


def test_an_accumulation_read_only_after_the_loop_is_no_prefix():
    loop = _loop("""
        import tensorflow as tf
        def f(x, w):
            acc = tf.zeros([3])
            for j in range(x.shape[0]):
                acc += x[j] * w[j]
            return acc
        """)
    assert loop.shape == "reduction"
    assert [(u.name, u.op, ast.unparse(u.term)) for u in loop.updates] == \
        [("acc", "add", "x[j] * w[j]")]
    assert loop.running == frozenset()


def test_a_recurrence_is_no_update_of_itself():
    loop = _loop("""
        import tensorflow as tf
        def f(x):
            mean = tf.zeros([3])
            for t in range(x.shape[0]):
                mean = mean + (x[t] - mean) / (t + 1)
            return mean
        """)
    assert loop.shape == "carried" and loop.updates == () and loop.running == frozenset()


def test_a_counter_while_keeps_its_bound_and_a_zip_its_parts():
    loop = _loop("""
        import tensorflow as tf
        def f(a, b):
            out = []
            for p, q in zip(tf.unstack(a), tf.unstack(b)):
                out.append(p - q)
            return tf.stack(out)
        """)
    assert [ast.unparse(p.over) for p in loop.domain.parts] == ["a", "b"]
    loop = _loop("""
        def f(x):
            i = 0
            while i < x.shape[0]:
                i += 1
        """)
    assert loop.domain.kind == "counter" and ast.unparse(loop.domain.stop) == "x.shape[0]"
