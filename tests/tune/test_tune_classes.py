"""Per-class loops as one pass with a class axis (issue 26; held-out round 5's c06, a mean-IoU
metric looping over classes with `tf.where(y == i, 1, 0)` masks, whose hand is one-hot): each
spelling rewritten without its loop and checked against the spelling itself on its inputs (no
timing); loops that do not compare with the class id, or index a per-class tensor, are left
alone."""

from __future__ import annotations

import ast

import pytest

tf = pytest.importorskip("tensorflow")

from rewrites import lever_context, run_f  # noqa: E402  (tests/tune/rewrites.py)

from tfperf.bench.equivalence import compare_outputs, snapshot  # noqa: E402
from tfperf.tune.levers.classes import ClassesToClassAxis  # noqa: E402

HEAD = "import numpy as np\nimport tensorflow as tf\n\n\n"

SPELLINGS = {
    "iou_where_masks_from_one_list_mean": '''
def f(y_true, y_pred):
    y_pred = tf.expand_dims(tf.argmax(y_pred, -1), -1)
    per_class_iou = []
    for i in range(1, 6):
        class_pred = tf.cast(tf.where(y_pred == i, 1, 0), tf.float32)
        class_true = tf.cast(tf.where(y_true == i, 1, 0), tf.float32)
        intersection = tf.reduce_sum(class_true * class_pred)
        union = tf.reduce_sum(class_true) + tf.reduce_sum(class_pred) - intersection
        iou = (intersection + 1e-7) / (union + 1e-7)
        per_class_iou.append(iou)
    return tf.reduce_mean(per_class_iou)
''',
    "equal_counts_comprehension_stack": '''
def f(y_true, y_pred):
    labels = tf.argmax(y_pred, -1)
    return tf.stack([tf.reduce_sum(tf.cast(tf.equal(labels, c), tf.int32)) for c in range(6)])
''',
    "dice_per_class_rows_axis_then_sum": '''
def f(y_true, y_pred):
    t = tf.squeeze(y_true, -1)
    scores = []
    for c in range(6):
        m = tf.cast(c == t, tf.float32)
        hit = tf.reduce_sum(m * y_pred[..., 0], axis=[1, 2])
        scores.append(tf.reduce_mean(hit / (tf.reduce_sum(m, axis=[1, 2]) + 1.0)))
    return tf.stack(scores)
''',
    "recall_sum_over_classes": '''
def f(y_true, y_pred):
    p = tf.argmax(y_pred, -1, output_type=tf.int32)
    t = tf.cast(tf.squeeze(y_true, -1), tf.int32)
    total = 0.0
    for k in range(6):
        hits = tf.math.count_nonzero((p == k) & (t == k))
        seen = tf.cast(tf.math.count_nonzero(t == k), tf.float32)
        total += tf.cast(hits, tf.float32) / (seen + 1.0)
    return total
''',
}

NOT_PER_CLASS = {
    "no_comparison_with_the_id": '''
def f(y_true, y_pred):
    return tf.stack([tf.reduce_sum(y_pred[..., c]) for c in range(6)])
''',
    "an_index_into_a_mask": '''
def f(y_true, y_pred):
    out = []
    for c in range(6):
        m = tf.cast(tf.squeeze(y_true, -1) == c, tf.float32)
        out.append(tf.reduce_sum(m[0]))
    return tf.stack(out)
''',
}


def _args() -> tuple:
    g = tf.random.Generator.from_seed(6)
    y_true = tf.cast(g.uniform([4, 16, 16, 1], 0, 6, dtype=tf.int32), tf.float32)
    return (y_true, tf.nn.softmax(g.normal([4, 16, 16, 6])))


def _loops_in_f(text: str) -> list[str]:
    fn = next(n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == "f")
    return [type(n).__name__ for n in ast.walk(fn)
            if isinstance(n, (ast.For, ast.While, ast.ListComp, ast.GeneratorExp))]


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_a_loop_over_class_ids_runs_once_with_a_class_axis(spelling):
    text, args = HEAD + SPELLINGS[spelling], _args()
    ctx = lever_context(text, args, "classes.py")
    lever = ClassesToClassAxis()
    assert lever.applies(ctx) is None, lever.applies(ctx)
    new = lever.build(text, ctx)
    assert not _loops_in_f(new), new
    eq = compare_outputs(snapshot(run_f(text, args)), snapshot(run_f(new, args)))
    assert eq.equivalent is True, f"{eq.reason}\n{new}"


@pytest.mark.parametrize("spelling", sorted(NOT_PER_CLASS))
def test_what_is_not_a_per_class_mask_loop_is_left_alone(spelling):
    text = HEAD + NOT_PER_CLASS[spelling]
    assert ClassesToClassAxis().applies(lever_context(text, _args(), "classes.py")) is not None
