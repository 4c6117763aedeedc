"""Padded sums as one scatter-add (issue 26; held-out round 5's c02: each overlapping window's
predictions `tf.pad`-ed to the full length at its start and added, a padded count of ones
beside them): each spelling rewritten without its loop and without `tf.pad`, checked against
the spelling itself on its inputs (no timing); a loop adding to two totals is two loops the
loop model reads; other paddings are left alone."""

from __future__ import annotations

import ast

import pytest

tf = pytest.importorskip("tensorflow")

from rewrites import lever_context, run_f  # noqa: E402  (tests/tune/rewrites.py)

from tfperf.bench.equivalence import compare_outputs, snapshot  # noqa: E402
from tfperf.tune.levers.loop_model import LoopsVectorizedMap  # noqa: E402
from tfperf.tune.levers.padded_sums import PaddedSumsScatter  # noqa: E402

HEAD = "import numpy as np\nimport tensorflow as tf\n\n\n"

SPELLINGS = {
    "two_totals_cast_pad_by_start_and_end": '''
def f(windows, starts):
    length = 100
    ends = starts + 16
    total = tf.zeros([length, 3])
    count = tf.zeros([length])
    for i in range(tf.shape(windows)[0]):
        total = total + tf.cast(tf.pad(windows[i], paddings=[[starts[i], length - ends[i]],
                                                          [0, 0]]), dtype=tf.float32)
        count = count + tf.pad(tf.ones([16]), [[starts[i], length - ends[i]]])
    return total / tf.maximum(count, 1.0)[:, None]
''',
    "enumerate_unstack_plus_equals_regular_stride": '''
def f(windows, starts):
    total = tf.zeros([100, 3], tf.float64)
    for k, w in enumerate(tf.unstack(windows)):
        total += tf.pad(tf.cast(w, tf.float64) * 2.0, [[k * 5, 100 - k * 5 - 16], [0, 0]])
    return total
''',
    "zip_of_starts_and_windows_three_axes": '''
def f(windows, starts):
    acc = tf.zeros([100, 3, 2])
    for s, w in zip(tf.unstack(starts), tf.unstack(windows)):
        v = tf.stack([w, -w], axis=-1)
        acc = acc + tf.pad(v, [[s, 100 - s - 16], [0, 0], [0, 0]])
    return acc
''',
    "one_axis_counter_while": '''
def f(windows, starts):
    hits = tf.zeros([100])
    j = 0
    while j < 17:
        hits = hits + tf.pad(tf.reduce_max(windows[j], axis=1), [(starts[j], 84 - starts[j])])
        j += 1
    return hits
''',
}

NOT_PADDED_SUMS = {
    "padded_along_the_second_axis": '''
def f(windows, starts):
    total = tf.zeros([16, 103])
    for i in range(17):
        total = total + tf.pad(windows[i], [[0, 0], [starts[i] // 4, 100 - starts[i] // 4]])
    return total
''',
    "padded_with_ones": '''
def f(windows, starts):
    total = tf.zeros([100, 3])
    for i in range(17):
        total = total + tf.pad(windows[i], [[starts[i], 84 - starts[i]], [0, 0]],
                               constant_values=1.0)
    return total
''',
}


def _args() -> tuple:
    g = tf.random.Generator.from_seed(2)
    starts = tf.concat([tf.range(0, 80, 5), [84]], 0)  # 17 windows, the last squeezed
    return (g.normal([17, 16, 3]), starts)


def _calls(text: str, attr: str) -> int:
    fn = next(n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == "f")
    return sum(1 for n in ast.walk(fn) if isinstance(n, ast.Call)
               and isinstance(n.func, ast.Attribute) and n.func.attr == attr)


def _loops(text: str) -> int:
    fn = next(n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == "f")
    return sum(1 for n in ast.walk(fn) if isinstance(n, (ast.For, ast.While)))


@pytest.mark.parametrize("mapped", [False, True])
@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_a_sum_of_padded_values_is_one_scatter_add(spelling, mapped):
    text, args = HEAD + SPELLINGS[spelling], _args()
    ctx = lever_context(text, args, "padded.py")
    lever = PaddedSumsScatter(mapped)
    assert lever.applies(ctx) is None, lever.applies(ctx)
    new = lever.build(text, ctx)
    assert _loops(new) == 0 and _calls(new, "pad") == 0, new
    assert _calls(new, "scatter_nd") == _calls(text, "pad"), new
    assert ("vectorized_map" in new) == mapped, new  # batched: no map, no trace per call
    eq = compare_outputs(snapshot(run_f(text, args)), snapshot(run_f(new, args)))
    assert eq.equivalent is True, f"{eq.reason}\n{new}"


def test_a_loop_adding_to_two_totals_is_two_loops_the_loop_levers_map():
    text, args = HEAD + SPELLINGS["two_totals_cast_pad_by_start_and_end"], _args()
    ctx = lever_context(text, args, "padded.py")
    assert LoopsVectorizedMap().applies(ctx) is None
    new = LoopsVectorizedMap().build(text, ctx)
    assert _loops(new) == 0 and new.count("tf.vectorized_map(") == 2, new
    eq = compare_outputs(snapshot(run_f(text, args)), snapshot(run_f(new, args)))
    assert eq.equivalent is True, f"{eq.reason}\n{new}"


@pytest.mark.parametrize("spelling", sorted(NOT_PADDED_SUMS))
def test_other_paddings_are_left_alone(spelling):
    text = HEAD + NOT_PADDED_SUMS[spelling]
    assert PaddedSumsScatter().applies(lever_context(text, _args(), "padded.py")) is not None
