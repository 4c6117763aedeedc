"""Loops over a later axis (issue 26, stop 43, item 1): ``x[..., c]`` and the pieces of
``tf.unstack(x, axis=a)`` with ``a`` not 0 are batched along that axis (moved first, moved
back by the join). The unstack pass (tune/unstacked_axes.py) is checked to give the same
values; twins are left alone; a planted wrong axis disagrees."""

from __future__ import annotations

import pytest

tf = pytest.importorskip("tensorflow")

from rewrites import lever_context, loops_left, run_f  # noqa: E402  (tests/tune/rewrites.py)

from tfperf.bench.equivalence import compare_outputs, snapshot  # noqa: E402
from tfperf.tune.levers.loop_model import LoopsBatched  # noqa: E402
from tfperf.tune.source import SourceEditError  # noqa: E402
from tfperf.tune.unstacked_axes import unstacks_as_indexes  # noqa: E402

HEAD = "import numpy as np\nimport tensorflow as tf\n\n\n"

# Each batched by the lever: no loop left, the loop's values.
BATCHED = {
    "ellipsis_index_stack_last": '''
def f(x):
    out = []
    for c in range(x.shape[-1]):
        out.append(tf.pow(x[..., c], c + 1))
    return tf.stack(out, axis=-1)
''',
    "ellipsis_middle_axis": '''
def f(x):
    out = []
    for r in range(x.shape[-2]):
        out.append(tf.nn.relu(x[..., r, :]) * 2.0)
    return tf.stack(out, axis=1)
''',
    "ellipsis_reduced_per_channel": '''
def f(x):
    return tf.stack([tf.reduce_sum(x[..., c] * 0.5, axis=-1) for c in range(x.shape[2])])
''',
    "enumerate_unstack_axis1": '''
def f(x):
    return tf.stack([tf.pow(c, i + 1) for i, c in enumerate(tf.unstack(x, axis=1))], axis=1)
''',
    "unstack_last_axis_append": '''
def f(x):
    out = []
    for c in tf.unstack(x, axis=-1):
        out.append(tf.nn.relu(c) * 2.0)
    return tf.stack(out, axis=-1)
''',
    "one_wide_row_slices": '''
def f(x):
    out = []
    for i in range(x.shape[0]):
        out.append(tf.nn.relu(x[i:i + 1]) * 2.0)
    return tf.concat(out, axis=0)
''',
    "one_wide_slice_one_plus": '''
def f(x):
    return tf.stack([tf.reduce_sum(x[i:1 + i], axis=0) for i in range(x.shape[0])])
''',
    "unstack_positional_axis": '''
def f(x):
    return tf.stack([tf.reduce_max(p, axis=0) for p in tf.unstack(x, None, 2)])
''',
}

# Left alone by the unstack pass.
TWINS = {
    "axis_zero": '''
def f(x):
    return tf.stack([tf.nn.relu(c) for c in tf.unstack(x)])
''',
    "axis_from_a_name": '''
def f(x, a=1):
    return tf.stack([tf.nn.relu(c) for c in tf.unstack(x, axis=a)])
''',
    "item_bound_again": '''
def f(x):
    out = []
    for c in tf.unstack(x, axis=1):
        c = c * 2.0
        out.append(c)
    return tf.stack(out, axis=1)
''',
    "tensor_bound_again": '''
def f(x):
    out = []
    for c in tf.unstack(x, axis=1):
        out.append(c)
        x = x * 2.0
    return tf.stack(out, axis=1)
''',
    "item_a_lambda_parameter": '''
def f(x):
    return tf.stack([tf.map_fn(lambda c: c * 2.0, c) for c in tf.unstack(x, axis=1)])
''',
    "item_read_after_the_loop": '''
def f(x):
    out = []
    for c in tf.unstack(x, axis=1):
        out.append(c * 2.0)
    return tf.stack(out, axis=1) + c[..., None]
''',
    "filtered_comprehension": '''
def f(x):
    return tf.stack([c for c in tf.unstack(x, axis=1) if True])
''',
    # Review 43: bindings that are no assignment (the handler's c is the exception).
    "item_bound_by_except_as": '''
def f(x):
    out = []
    for c in tf.unstack(x, axis=1):
        try:
            raise ValueError("v")
        except ValueError as c:
            out.append(len(str(c)))
    return out
''',
    "item_bound_by_a_def": '''
def f(x):
    out = []
    for c in tf.unstack(x, axis=-1):
        def c():
            return 1.0
        out.append(c())
    return out
''',
    "tensor_bound_by_an_import": '''
def f(x):
    out = []
    for c in tf.unstack(x, axis=1):
        out.append(c)
        import numpy as x
    return out
''',
}


def _args() -> tuple:
    return (tf.abs(tf.random.Generator.from_seed(5).normal([3, 4, 5])) + 0.5,)


@pytest.mark.parametrize("spelling", sorted(BATCHED))
def test_a_loop_over_a_later_axis_is_batched_along_it(spelling):
    text = HEAD + BATCHED[spelling]
    args = _args()
    ctx = lever_context(text, args, "later_axes.py")
    lever = LoopsBatched(True)
    assert lever.applies(ctx) is None
    new = lever.build(text, ctx)
    assert loops_left(new) == 0, new
    eq = compare_outputs(snapshot(run_f(text, args)), snapshot(run_f(new, args)))
    assert eq.equivalent is True, f"{eq.reason}\n{new}"
    other = (tf.abs(tf.random.Generator.from_seed(6).normal([2, 3, 6])) + 0.5,)
    eq = compare_outputs(snapshot(run_f(text, other)), snapshot(run_f(new, other)))
    assert eq.equivalent is True, f"another shape: {eq.reason}\n{new}"


@pytest.mark.parametrize("spelling", sorted(s for s in BATCHED if "unstack" in s))
def test_the_unstack_pass_gives_the_same_values(spelling):
    text = HEAD + BATCHED[spelling]
    new = unstacks_as_indexes(text, "f")
    assert "unstack" not in new.split("def f", 1)[1], new
    args = _args()
    eq = compare_outputs(snapshot(run_f(text, args)), snapshot(run_f(new, args)))
    assert eq.equivalent is True, f"{eq.reason}\n{new}"


@pytest.mark.parametrize("spelling", sorted(TWINS))
def test_an_unstack_that_is_not_that_loop_is_left_alone(spelling):
    with pytest.raises(SourceEditError):
        unstacks_as_indexes(HEAD + TWINS[spelling], "f")


def test_an_element_after_the_indexed_axis_is_not_batched_as_the_moved_axis():
    """``x[..., c, 0]`` is one element past the channel: not the moved tensor as it is."""
    text = HEAD + '''
def f(x):
    out = []
    for c in range(x.shape[-2]):
        out.append(x[..., c, 0] * 2.0)
    return tf.stack(out, axis=-1)
'''
    args = _args()
    ctx = lever_context(text, args, "later_axes.py")
    try:
        new = LoopsBatched(True).build(text, ctx)
    except SourceEditError:
        return  # left to the other levers
    eq = compare_outputs(snapshot(run_f(text, args)), snapshot(run_f(new, args)))
    assert eq.equivalent is True, f"{eq.reason}\n{new}"


def test_a_wrong_axis_planted_disagrees():
    """The last axis moved where the loop reads the one before it: same shape on square
    inputs, other values."""
    text = HEAD + BATCHED["ellipsis_middle_axis"]
    wrong = HEAD + '''
def f(x):
    moved = tf.experimental.numpy.moveaxis(x, -1, 0)
    return tf.experimental.numpy.moveaxis(tf.nn.relu(moved) * 2.0, 0, 1)
'''
    args = (tf.random.Generator.from_seed(7).normal([3, 4, 4]),)
    eq = compare_outputs(snapshot(run_f(text, args)), snapshot(run_f(wrong, args)))
    assert eq.equivalent is False


ZIPPED = '''
def f(x):
    k = x * 0.5 + 1.0
    return tf.stack([a * b for a, b in zip(tf.unstack(x, axis=-1), tf.unstack(k, axis=2))],
                    axis=-1)
'''


def test_a_zip_of_later_axis_unstacks_is_one_index_up_to_the_shortest():
    text = HEAD + ZIPPED
    new = unstacks_as_indexes(text, "f")
    assert "min(x.shape[-1], k.shape[2])" in new, new
    args = _args()
    eq = compare_outputs(snapshot(run_f(text, args)), snapshot(run_f(new, args)))
    assert eq.equivalent is True, f"{eq.reason}\n{new}"
    ctx = lever_context(text, args, "later_axes.py")
    batched = LoopsBatched(True).build(text, ctx)
    assert loops_left(batched) == 0, batched
    eq = compare_outputs(snapshot(run_f(text, args)), snapshot(run_f(batched, args)))
    assert eq.equivalent is True, f"{eq.reason}\n{batched}"


def test_a_zip_of_unequal_lengths_stops_at_the_shortest():
    text = HEAD + '''
def f(x):
    k = x[..., :3] + 1.0
    return tf.stack([a * b for a, b in zip(tf.unstack(x, axis=-1), tf.unstack(k, axis=-1))],
                    axis=-1)
'''
    new = unstacks_as_indexes(text, "f")
    args = _args()
    eq = compare_outputs(snapshot(run_f(text, args)), snapshot(run_f(new, args)))
    assert eq.equivalent is True, f"{eq.reason}\n{new}"
    batched = LoopsBatched(True).build(text, lever_context(text, args, "later_axes.py"))
    assert loops_left(batched) == 0, batched
    eq = compare_outputs(snapshot(run_f(text, args)), snapshot(run_f(batched, args)))
    assert eq.equivalent is True, f"{eq.reason}\n{batched}"


def test_a_zip_with_another_iterable_is_left_alone():
    with pytest.raises(SourceEditError):
        unstacks_as_indexes(HEAD + '''
def f(x):
    return tf.stack([a * w for a, w in zip(tf.unstack(x, axis=1), [1.0, 2.0, 3.0, 4.0])])
''', "f")


def test_a_two_wide_slice_is_not_read_as_one_element():
    """``x[i:i + 2]`` holds two rows (one at the end): not ``x[i, None]``."""
    text = HEAD + '''
def f(x):
    return tf.stack([tf.reduce_sum(x[i:i + 2], axis=0) for i in range(x.shape[0])])
'''
    args = _args()
    ctx = lever_context(text, args, "later_axes.py")
    try:
        new = LoopsBatched(True).build(text, ctx)
        got = run_f(new, args)
    except Exception:  # raises: rejected by the search, not wrong
        return
    eq = compare_outputs(snapshot(run_f(text, args)), snapshot(got))
    assert eq.equivalent is True, f"{eq.reason}\n{new}"
