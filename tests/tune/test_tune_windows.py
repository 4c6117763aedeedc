"""Sliding-window sums and means as a cumsum difference (issue 26; held-out round 5's c12,
whose window sums over ``range(tf.shape(r)[1] - T)`` no lever read): each spelling the loop
model knows, rewritten without its loop and checked against the spelling itself on its inputs
(no timing); spellings that are not windows starting at the index are left alone."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

tf = pytest.importorskip("tensorflow")

sys.path.insert(0, str(Path(__file__).parent))

from rewrites import lever_context, run_f  # noqa: E402  (tests/tune/rewrites.py)

from tfperf.bench.equivalence import compare_outputs, snapshot  # noqa: E402
from tfperf.tune.levers.windows import WindowsToCumsum  # noqa: E402

HEAD = "import numpy as np\nimport tensorflow as tf\n\n\n"

SPELLINGS = {
    "slice_comprehension_concat_keepdims": '''
def f(r):
    T = 5
    sums = [tf.reduce_sum(tf.slice(r, [0, k, 0], [tf.shape(r)[0], T, tf.shape(r)[-1]]),
                          axis=1, keepdims=True)
            for k in range(tf.shape(r)[1] - T)]
    return tf.concat(sums, axis=1)
''',
    "subscript_append_stack": '''
def f(r):
    out = []
    for k in range(r.shape[1] - 7 + 1):
        out.append(tf.reduce_sum(r[:, k:k + 7, :], axis=1))
    return tf.stack(out)
''',
    "mean_ellipsis_last_axis_stack_axis": '''
def f(r):
    w = 4
    means = [tf.reduce_mean(r[..., i:w + i], axis=-1) for i in range(r.shape[-1] - w)]
    return tf.stack(means, axis=-1)
''',
    "tensorarray_write_body_assignment": '''
def f(r):
    n = r.shape[1] - 6
    ta = tf.TensorArray(tf.float32, size=n)
    for t in range(n):
        window = r[:, t + 1:t + 7]
        ta = ta.write(t, tf.math.reduce_sum(window, 1))
    return ta.stack()
''',
    "running_sum_of_windows": '''
def f(r):
    total = tf.zeros([r.shape[0], r.shape[2]])
    for k in range(r.shape[1] - 3):
        total += tf.reduce_sum(r[:, k:k + 3], axis=1)
    return total
''',
    "counter_while_first_axis": '''
def f(r):
    rows = []
    k = 0
    while k < r.shape[0] - 9:
        rows.append(tf.reduce_mean(r[k:k + 9], 0))
        k += 1
    return tf.stack(rows)
''',
    "prefix_grows_with_the_index": '''
def f(r):
    return tf.stack([tf.reduce_sum(r[:, :k + 1], axis=1) for k in range(r.shape[1])])
''',
    "clipped_edges_strided_range_stack_last_axis": '''
def f(r):
    d = r.shape[-1]
    half = 3
    return tf.stack([tf.reduce_mean(r[:, :, max(i - half, 0):min(i + half, d)], axis=-1)
                     for i in range(0, d, 5)], axis=-1)
''',
    "clipped_windows_in_a_branch_joined_along_a_named_axis": '''
def f(r, channels_last=False):
    d_axis = 1 if channels_last else -1
    d = r.shape[d_axis]
    step = 3
    if channels_last:
        r = tf.stack([tf.reduce_mean(r[:, max(i - 2, 0):min(i + 2, d)], axis=d_axis)
                      for i in range(0, d, step)], axis=d_axis)
    else:
        r = tf.stack([tf.reduce_mean(r[:, :, max(i - 2, 0):min(i + 2, d)], axis=d_axis)
                      for i in range(0, d, step)], axis=d_axis)
    return r
''',
    "trailing_moving_average_from_one": '''
def f(r):
    avg = []
    for i in range(1, r.shape[0]):
        avg.append(tf.reduce_mean(r[max(0, i - 4):i + 1], axis=0))
    return tf.stack(avg)
''',
}

NOT_WINDOWS = {
    "a_strided_window": '''
def f(r):
    return tf.stack([tf.reduce_sum(r[:, k:k + 6:2], axis=1) for k in range(r.shape[1] - 6)])
''',
    "a_window_maximum": '''
def f(r):
    return tf.stack([tf.reduce_max(r[:, k:k + 3], axis=1) for k in range(r.shape[1] - 3)])
''',
    "reduced_along_another_axis": '''
def f(r):
    return tf.stack([tf.reduce_sum(r[:, k:k + 3], axis=2) for k in range(r.shape[1] - 3)])
''',
    "the_window_of_another_tensor_each_step": '''
def f(r):
    return tf.stack([tf.reduce_sum(r[k][:, k:k + 3], axis=1) for k in range(3)])
''',
}


def _loops_in_f(text: str) -> list[str]:
    fn = next(n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == "f")
    return [type(n).__name__ for n in ast.walk(fn)
            if isinstance(n, (ast.For, ast.While, ast.ListComp, ast.GeneratorExp))]


@pytest.mark.parametrize("band", [False, True], ids=["cumsum", "band"])
@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_window_sums_become_one_cumsum_difference_or_band_product(spelling, band):
    text = HEAD + SPELLINGS[spelling]
    args = (tf.random.Generator.from_seed(26).normal([20, 40, 12]),)
    ctx = lever_context(text, args, "windows.py")
    lever = WindowsToCumsum(band)
    assert lever.applies(ctx) is None, lever.applies(ctx)
    new = lever.build(text, ctx)
    assert "_tfperf_window_sums(" in new and not _loops_in_f(new), new
    eq = compare_outputs(snapshot(run_f(text, args)), snapshot(run_f(new, args)))
    assert eq.equivalent is True, f"{eq.reason}\n{new}"


@pytest.mark.parametrize("spelling", sorted(NOT_WINDOWS))
def test_what_is_not_a_window_starting_at_the_index_is_left_alone(spelling):
    text = HEAD + NOT_WINDOWS[spelling]
    args = (tf.random.Generator.from_seed(26).normal([3, 20, 12]),)
    ctx = lever_context(text, args, "windows.py")
    assert WindowsToCumsum().applies(ctx) is not None
    assert WindowsToCumsum(band=True).applies(ctx) is not None
