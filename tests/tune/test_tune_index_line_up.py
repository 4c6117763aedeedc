"""The loop's index read as a value, batched (review 43): its batch ``range(n)`` is lined up
against each step's axes. Stop 43's one-wide slice (``tf.pow(x[:, j:j + 1], j + 1)``,
joined by concat) and sums of the steps were lined up one axis short, a reduction's operand
against the output's axes, and the variant without per-example axes against the last
axis: a raise on most shapes, other values where the axes' lengths meet (square inputs).
Each is now batched with equal values on square and other shapes, or left alone."""

from __future__ import annotations

import pytest

tf = pytest.importorskip("tensorflow")

from rewrites import lever_context, loops_left, run_f  # noqa: E402  (tests/tune/rewrites.py)

from tfperf.bench.equivalence import compare_outputs, snapshot  # noqa: E402
from tfperf.tune.levers.loop_model import LoopsBatched  # noqa: E402
from tfperf.tune.source import SourceEditError  # noqa: E402

HEAD = "import tensorflow as tf\n\n\n"

# Batched by the per-example-axes variant: each step keeps its rank in the join.
LINED_UP = {
    "one_wide_column_pow_concat": '''
def f(x):
    return tf.concat([tf.pow(x[:, j:j + 1], j + 1) for j in range(x.shape[1])], axis=1)
''',
    "rows_times_index_concat": '''
def f(x):
    return tf.concat([x[i] * float(i) for i in range(x.shape[0])], axis=0)
''',
    "columns_times_index_add_n": '''
def f(x):
    return tf.add_n([x[:, c] * float(c) for c in range(x.shape[1])])
''',
    "rows_times_index_add_n": '''
def f(x):
    return tf.add_n([x[i] * float(i) for i in range(x.shape[0])])
''',
    "running_sum_of_rows_times_index": '''
def f(x):
    acc = tf.zeros_like(x[0])
    for i in range(x.shape[0]):
        acc = acc + x[i] * float(i)
    return acc
''',
    "running_sum_of_columns_augmented": '''
def f(x):
    acc = tf.zeros_like(x[:, 0])
    for c in range(x.shape[1]):
        acc += x[:, c] * float(c + 1)
    return acc
''',
}

# Left alone or equal: the index inside a reduction's operand.
REDUCED = {
    "rows_reduced_after_the_index": '''
def f(x):
    return tf.stack([tf.reduce_sum(x[i] * float(i), axis=-1) for i in range(x.shape[0])])
''',
    "columns_reduced_after_the_index": '''
def f(x):
    return tf.stack([tf.reduce_max(x[:, c] * float(c), axis=-1) for c in range(x.shape[1])],
                    axis=1)
''',
    "last_axis_mean_method": '''
def f(x):
    return tf.stack([(x[..., c] * float(c + 1)).numpy().mean(axis=-1)
                     for c in range(x.shape[-1])], axis=-1)
''',
}


def _square() -> tuple:
    return (tf.abs(tf.random.Generator.from_seed(3).normal([4, 4, 4])) + 0.5,)


def _other() -> tuple:
    return (tf.abs(tf.random.Generator.from_seed(4).normal([3, 4, 5])) + 0.5,)


def _equal_or_left_alone(text: str, axes: bool) -> str | None:
    """The lever's rewrite built on square inputs, checked on them and on other shapes;
    None where the lever leaves the loop alone."""
    args = _square()
    try:
        new = LoopsBatched(axes).build(text, lever_context(text, args, "line_up.py"))
    except SourceEditError:
        return None
    for probe in (args, _other()):
        eq = compare_outputs(snapshot(run_f(text, probe)), snapshot(run_f(new, probe)))
        assert eq.equivalent is True, f"{eq.reason}\n{new}"
    return new


@pytest.mark.parametrize("spelling", sorted(LINED_UP))
def test_the_index_is_lined_up_against_each_steps_axes(spelling):
    new = _equal_or_left_alone(HEAD + LINED_UP[spelling], True)
    assert new is not None and loops_left(new) == 0, new


@pytest.mark.parametrize("spelling", sorted(LINED_UP) + sorted(REDUCED))
def test_the_variant_without_per_example_axes_never_lines_the_index_up_wrong(spelling):
    text = HEAD + {**LINED_UP, **REDUCED}[spelling]
    _equal_or_left_alone(text, False)


@pytest.mark.parametrize("spelling", sorted(REDUCED))
def test_the_index_inside_a_reduction_is_not_lined_up_against_the_output(spelling):
    _equal_or_left_alone(HEAD + REDUCED[spelling], True)


def test_the_index_beside_a_kept_rank_reduction_is_still_batched():
    """A twin: ``keepdims=True`` keeps the operand's rank, so the line-up holds."""
    text = HEAD + '''
def f(x):
    return tf.stack([tf.reduce_sum(x[i] * float(i), axis=-1, keepdims=True)
                     for i in range(x.shape[0])])
'''
    new = _equal_or_left_alone(text, True)
    assert new is not None and loops_left(new) == 0, new
