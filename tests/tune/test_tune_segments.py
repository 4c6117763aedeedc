"""Per-group reductions (a loop over group ids reducing the rows whose id is the group's) as
one segment op, whatever the spelling; checked against the loop on the same inputs (no
timing). A loop whose reduction is not over one group's rows is left alone."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

tf = pytest.importorskip("tensorflow")

sys.path.insert(0, str(Path(__file__).parent))
from test_tune_fill import HEAD, _context  # noqa: E402
from test_tune_loop_model import _agrees, _loops_left  # noqa: E402

from tfperf.tune.levers.segments import GroupsToSegments  # noqa: E402

GROUPS = 7

SPELLINGS = {
    "named_mask_mean": '''
def f(x, ids):
    means = []
    for g in range(7):
        in_group = tf.equal(ids, g)
        means.append(tf.reduce_mean(tf.boolean_mask(x, in_group), axis=0))
    return tf.stack(means)
''',
    "comprehension_sum": '''
def f(x, ids):
    return tf.stack([tf.reduce_sum(tf.boolean_mask(x, ids == g), axis=0) for g in range(7)])
''',
    "counter_max": '''
def f(x, ids):
    out = []
    g = 0
    while g < 7:
        rows = tf.boolean_mask(x, tf.math.equal(g, ids))
        out.append(tf.reduce_max(rows, 0))
        g += 1
    return tf.stack(out)
''',
}

NOT_GROUPS = '''
def f(x, ids):
    out = []
    for g in range(7):
        out.append(tf.reduce_mean(tf.boolean_mask(x, ids <= g), axis=0))
    return tf.stack(out)
'''


def _inputs() -> tuple:
    g = tf.random.Generator.from_seed(5)
    ids = tf.concat([tf.range(GROUPS), g.uniform([40], 0, GROUPS, dtype=tf.int32)], 0)
    return g.normal([ids.shape[0], 3]), ids


@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_per_group_reductions_become_one_segment_op(name):
    text = HEAD + SPELLINGS[name]
    args = _inputs()
    ctx = _context(text, args)
    lever = GroupsToSegments()
    assert lever.applies(ctx) is None
    new = lever.build(text, ctx)
    assert "unsorted_segment_" in new and not _loops_left(new), new
    _agrees(text, new, args)


def test_a_reduction_over_more_than_one_group_is_left_alone():
    ctx = _context(HEAD + NOT_GROUPS, _inputs())
    assert GroupsToSegments().applies(ctx) is not None


@pytest.mark.parametrize("spelling", ["range_named_mask", "comprehension_eq", "while_counter"])
def test_the_group_means_spellings_become_a_segment_mean(spelling):
    from test_tune_loop_model import BY_NAME

    comp = BY_NAME["group_means"]  # its spellings read the case file's SIZE, as a constant
    text = HEAD + f"SIZE = {comp.small!r}\n\n\n" + comp.spellings[spelling]
    ns = {"SIZE": dict(comp.small), "tf": tf}
    exec("def make():\n" + "\n".join("    " + r for r in comp.inputs.splitlines()), ns)
    args = ns["make"]()
    ctx = _context(text, args)
    new = GroupsToSegments().build(text, ctx)
    assert "unsorted_segment_mean" in new, new
    _agrees(text, new, args)
