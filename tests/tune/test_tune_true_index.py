"""First and last True index of each example (stop 40; held-out round 10's c06, a bounding
box from a mask): ``reduce_min(tf.where(m)[:, k])`` (``reduce_max``: the last) of one example,
in a ``map_fn``, a loop or a comprehension, is on the batch the reduction of ``where(m, index,
extreme)`` over the example's axes, with no shape set by the data left; an example with no
True gets the dtype's extreme, as the empty reduction does. Each rewrite is run against the
spelling (no timing); the VALID twins (another reduction of the indices, a first element read
by position) keep their map or loop."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

sys.path.insert(0, str(Path(__file__).parent))
from rewrites import lever_context, loops_left  # noqa: E402
from test_tune_loop_model import _agrees  # noqa: E402

from tfperf.tune.levers.loop_model import LoopsBatched  # noqa: E402
from tfperf.tune.source import SourceEditError  # noqa: E402

_RNG = np.random.default_rng(6)
ROWS = _RNG.uniform(size=(12, 20)) > 0.7
ROWS[3] = False  # an example with no True: the empty reduction's value both ways
MASKS = tf.constant(ROWS)
SCORES = tf.constant(_RNG.uniform(size=(12, 20)).astype(np.float32))
IMAGES = _RNG.uniform(size=(6, 5, 7)) > 0.8
IMAGES[2] = False
GRIDS = tf.constant(IMAGES)
HIT = IMAGES.copy()
HIT[:, 0, 0] = True  # every example holds a True (the twins' functions raise on one with none)
HITS = tf.constant(HIT)


def _module(body: str) -> str:
    return "import tensorflow as tf\n\n\n" + textwrap.dedent(body)


SPELLINGS = {
    "map_fn_lambda": ("""
        def f(m):
            lo = tf.map_fn(lambda x: tf.reduce_min(tf.where(x)[:, 0]), m, dtype=tf.int64)
            hi = tf.map_fn(lambda x: tf.reduce_max(tf.where(x)[:, 0]), m, dtype=tf.int64)
            return tf.stack([lo, hi], 1)
        """, (MASKS,)),
    "loop_of_a_threshold": ("""
        def f(s, t):
            out = []
            for i in range(s.shape[0]):
                out.append(tf.reduce_max(tf.where(s[i] > t)[:, 0]))
            return tf.stack(out)
        """, (SCORES, 0.5)),
    "comprehension_unstack": ("""
        def f(m):
            return tf.stack([tf.reduce_min(tf.where(r)[:, 0]) for r in tf.unstack(m)])
        """, (MASKS,)),
    "def_of_statements": ("""
        def f(m):
            def first(row):
                hits = tf.where(row)
                return tf.reduce_min(hits[:, 0])
            return tf.map_fn(first, m, fn_output_signature=tf.int64)
        """, (MASKS,)),
    "second_axis_of_an_image": ("""
        def f(g):
            return tf.map_fn(lambda x: tf.reduce_max(tf.where(x)[:, 1]), g, dtype=tf.int64)
        """, (GRIDS,)),
    "first_axis_of_an_image": ("""
        def f(g):
            return tf.map_fn(lambda x: tf.reduce_min(tf.where(x)[:, 0]), g, dtype=tf.int64)
        """, (GRIDS,)),
}


@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_a_first_or_last_true_index_is_one_masked_reduction_of_the_batch(name):
    body, args = SPELLINGS[name]
    text = _module(body)
    ctx = lever_context(text, args, "m.py")
    lever = LoopsBatched(True)
    assert lever.applies(ctx) is None
    new = lever.build(text, ctx)
    assert "_tfperf_true_index(" in new and "map_fn" not in new and loops_left(new) == 0, new
    _agrees(text, new, args)


def test_an_example_with_no_true_gets_the_empty_reductions_value():
    body, args = SPELLINGS["map_fn_lambda"]
    text = _module(body)
    new = LoopsBatched(True).build(text, lever_context(text, args, "m.py"))
    ns: dict = {}
    exec(compile(new, "<rewrite>", "exec"), ns)
    row = ns["f"](*args).numpy()[3]
    assert row.tolist() == [np.iinfo(np.int64).max, np.iinfo(np.int64).min]


@pytest.mark.parametrize("body", [
    # a sum of the indices depends on how many there are: not a first or last index
    """
    def f(m):
        return tf.map_fn(lambda x: tf.reduce_sum(tf.where(x)[:, 0]), m, dtype=tf.int64)
    """,
    # the first hit read by position raises on an empty row: no extreme stands in for it
    """
    def f(m):
        return tf.map_fn(lambda x: tf.where(x)[0, 0], m, dtype=tf.int64)
    """,
    # every coordinate reduced together: not one axis's index
    """
    def f(m):
        return tf.map_fn(lambda x: tf.reduce_min(tf.where(x)), m, dtype=tf.int64)
    """,
])
def test_valid_other_reads_of_where_keep_their_map(body):
    text = _module(body)
    ctx = lever_context(text, (HITS,), "m.py")
    try:
        new = LoopsBatched(True).build(text, ctx)
    except SourceEditError:
        return
    assert "_tfperf_true_index(" not in new, new
    _agrees(text, new, (HITS,))


# The generated spellings (tests/tune/spellings.py's mask_extents, written in stop 40 after
# the lever); two of them make their lists in one tuple assignment (``lo, hi = [], []``),
# read as one assignment each (split_list_inits).
from spellings import COMPUTATIONS  # noqa: E402
from test_tune_loop_model import BY_NAME, _spelling  # noqa: E402

BY_NAME.setdefault("mask_extents", next(c for c in COMPUTATIONS if c.name == "mask_extents"))
EXTENTS = list(BY_NAME["mask_extents"].spellings)


@pytest.mark.parametrize("spelling", EXTENTS)
def test_every_mask_extents_spelling_is_batched_and_agrees(spelling):
    text, args, ctx = _spelling(f"mask_extents/{spelling}")
    lever = LoopsBatched(True)
    assert lever.applies(ctx) is None  # (what the search asks first: it said "no loop")
    new = lever.build(text, ctx)
    assert "map_fn" not in new and loops_left(new) == 0, new
    _agrees(text, new, args)


# An op of one example that takes an axis or a permutation: on the batch, past the batch
# axis (a per-example tf.stack([a, b]) stacked along the batch axis before: [2, n], not
# [n, 2]; tf.reverse(row, [0]) reversed the batch; s[i][:3] sliced the batch axis).
@pytest.mark.parametrize("body", [
    "tf.stack([tf.reduce_min(s[i]), tf.reduce_max(s[i])])",
    "tf.reverse(s[i], [0]) * 2.0",
    "tf.concat([s[i], -s[i]], 0)",
    "tf.transpose(tf.expand_dims(s[i], 0), [1, 0])",
    "tf.tile(s[i][:3], [2])",
    "tf.roll(s[i], 2, axis=0)",
    "tf.squeeze(tf.expand_dims(s[i], 0), axis=0)",
])
def test_an_examples_axis_argument_moves_past_the_batch_axis(body):
    text = _module(f"""
        def f(s):
            out = []
            for i in range(s.shape[0]):
                out.append({body})
            return tf.stack(out)
        """)
    args = (SCORES,)
    ctx = lever_context(text, args, "m.py")
    new = LoopsBatched(True).build(text, ctx)
    assert loops_left(new) == 0, new
    _agrees(text, new, args)


def test_valid_an_axis_the_text_does_not_give_is_no_rewrite():
    # tf.squeeze without an axis would squeeze a batch of one too: not batched
    text = _module("""
        def f(s):
            return tf.stack([tf.squeeze(tf.expand_dims(s[i], 0)) for i in range(s.shape[0])])
        """)
    ctx = lever_context(text, (SCORES,), "m.py")
    with pytest.raises(SourceEditError):
        LoopsBatched(True).build(text, ctx)


def test_lists_made_in_one_tuple_assignment_are_each_a_collector_and_other_tuples_stay():
    from tfperf.tune.levers.loop_model import split_list_inits

    text = _module("""
        def f(s):
            lo, hi = [], [None] * 3
            a, b = [], s
            c, c = [], []
            return lo, hi, a, b, c
        """)
    new = split_list_inits(text, "f")
    assert "    lo = []\n    hi = [None] * 3\n" in new, new
    assert "a, b = [], s" in new and "c, c = [], []" in new, new
