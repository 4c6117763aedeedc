"""Values compared with bin edges in a loop over the bins (held-out round 6's c07: per bin
``(x >= edges[i]) & (x < edges[i + 1])``, the errors of each bin averaged): the per-class lever
runs the body once with the bins along a last axis, each edge of every bin gathered at once
(``edges[i + 1]`` → ``tf.gather(edges, bins + 1)``, ``lo + i * w`` → ``lo + bins * w``); each
spelling checked against the loop on inputs spread over every bin, one of them empty (no
timing); a body that uses the bin's edge other than in a comparison is left."""

from __future__ import annotations

import ast

import pytest

tf = pytest.importorskip("tensorflow")

from rewrites import lever_context, run_f  # noqa: E402  (tests/tune/rewrites.py)

from tfperf.bench.equivalence import compare_outputs, snapshot  # noqa: E402
from tfperf.tune.levers.classes import ClassesToClassAxis  # noqa: E402
from tfperf.tune.source import SourceEditError  # noqa: E402

HEAD = "import tensorflow as tf\n\n\n"

SPELLINGS = {
    "counts_comprehension_of_edges": '''
def f(x, err, edges):
    return tf.stack([tf.reduce_sum(tf.cast((x >= edges[i]) & (x < edges[i + 1]), tf.int32))
                     for i in range(edges.shape[0] - 1)])
''',
    "bin_means_append_stack": '''
def f(x, err, edges):
    maes = []
    for i in range(len(edges) - 1):
        inside = tf.cast(tf.logical_and(x >= edges[i], x < edges[i + 1]), tf.float32)
        n = tf.reduce_sum(inside)
        maes.append(tf.reduce_sum(inside * err) / tf.maximum(n, 1.0))
    return tf.stack(maes)
''',
    "edges_from_a_width_tensor_array": '''
def f(x, err, edges):
    lo, width = 20.0, 7.0
    ta = tf.TensorArray(tf.float32, size=10)
    for b in range(10):
        m = tf.cast((x >= lo + b * width) & (x < lo + (b + 1) * width), tf.float32)
        ta = ta.write(b, tf.reduce_sum(m * err))
    return ta.stack()
''',
    "weighted_sum_over_bins_while": '''
def f(x, err, edges):
    total = 0.0
    i = 0
    while i < 10:
        m = tf.cast(tf.greater_equal(x, edges[i]) & tf.less(x, edges[i + 1]), tf.float32)
        total += tf.reduce_sum(m * err) / (tf.reduce_sum(m) + 1.0)
        i += 1
    return total
''',
    "count_nonzero_from_one_upper_edges": '''
def f(x, err, edges):
    out = []
    for k in range(1, len(edges)):
        out.append(tf.math.count_nonzero((edges[k - 1] <= x) & (edges[k] > x)))
    return tf.stack(out)
''',
}

LEFT_ALONE = {
    # the bin's centre is a value of the body, not a comparison
    "centre_used_as_a_value": '''
def f(x, err, edges):
    out = []
    for i in range(10):
        m = tf.cast((x >= edges[i]) & (x < edges[i + 1]), tf.float32)
        out.append(tf.reduce_sum(m * (x - (edges[i] + edges[i + 1]) / 2.0)))
    return tf.stack(out)
''',
}


def _args() -> tuple:
    g = tf.random.Generator.from_seed(26)
    x = g.uniform([4096], 20.0, 83.0)  # the last bin, [83, 90), holds nothing
    err = tf.abs(g.normal([4096], stddev=5.0))
    return (x, err, tf.linspace(20.0, 90.0, 11))


def _loops(text: str) -> int:
    fn = next(n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef)
              and n.name == "f")
    return sum(1 for n in ast.walk(fn)
               if isinstance(n, (ast.For, ast.While, ast.ListComp, ast.GeneratorExp)))


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_bins_compared_with_edges_run_once_with_a_bin_axis(spelling):
    text, args = HEAD + SPELLINGS[spelling], _args()
    ctx = lever_context(text, args, "bins.py")
    lever = ClassesToClassAxis()
    assert lever.applies(ctx) is None, lever.applies(ctx)
    new = lever.build(text, ctx)
    assert _loops(new) == 0, new
    eq = compare_outputs(snapshot(run_f(text, args)), snapshot(run_f(new, args)))
    assert eq.equivalent is True, f"{eq.reason}\n{new}"


@pytest.mark.parametrize("spelling", sorted(LEFT_ALONE))
def test_an_edge_used_as_a_value_is_left(spelling):
    text, args = HEAD + LEFT_ALONE[spelling], _args()
    with pytest.raises(SourceEditError):
        ClassesToClassAxis().build(text, lever_context(text, args, "bins.py"))
