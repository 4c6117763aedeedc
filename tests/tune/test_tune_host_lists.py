"""Per-row host values gathered into Python lists (issue 26; held-out round 5's c07: per row
``tf.argmax(p[i]).numpy()`` and ``reduce_max(p[i]).numpy()`` appended as ``int``/``float`` to
two lists): each spelling is rewritten by the loop levers without its loop and with one
host copy per list, and gives the same Python values (kinds included) as the spelling itself
on its inputs (no timing); loops that are not host lists are left as they are."""

from __future__ import annotations

import ast

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from rewrites import lever_context, run_f  # noqa: E402  (tests/tune/rewrites.py)

from tfperf.bench.equivalence import compare_outputs, snapshot  # noqa: E402
from tfperf.tune.levers.host_lists import host_lists  # noqa: E402
from tfperf.tune.levers.loop_model import LoopsBatched, LoopsVectorizedMap  # noqa: E402

HEAD = "import numpy as np\nimport tensorflow as tf\n\n\n"

SPELLINGS = {
    "two_lists_numpy_then_int_and_float": '''
def f(logits, w):
    classes = []
    scores = []
    p = tf.nn.softmax(logits)
    for i in range(tf.shape(p)[0]):
        c = tf.argmax(p[i]).numpy()
        s = tf.math.reduce_max(p[i]).numpy()
        classes.append(int(c))
        scores.append(float(s))
    return classes, scores
''',
    "unstack_norm_item": '''
def f(logits, w):
    norms = []
    for row in tf.unstack(logits):
        norms.append(tf.norm(row).numpy().item())
    return norms
''',
    "enumerate_bare_numpy_rows": '''
def f(logits, w):
    out = []
    for k, row in enumerate(logits):
        v = tf.reduce_sum(row * w)
        out.append(v.numpy())
    return out
''',
    "comprehension_of_floats": '''
def f(logits, w):
    return [float(tf.reduce_mean(logits[i] * w)) for i in range(logits.shape[0])]
''',
    "bools_from_a_counter_range": '''
def f(logits, w):
    flags = []
    n = logits.shape[0]
    for j in range(n):
        flags.append(bool(tf.reduce_any(logits[j] > 2.0)))
    return flags, n
''',
    "zip_of_two_tensors_tolist": '''
def f(logits, w):
    d = []
    for a, b in zip(tf.unstack(logits), tf.unstack(tf.nn.softmax(logits))):
        d.append(tf.reduce_sum(tf.abs(a - b)).numpy().tolist())
    return d
''',
    "counter_while_of_argmin_items": '''
def f(logits, w):
    picks = []
    k = 0
    while k < logits.shape[0]:
        m = tf.argmin(logits[k] * w).numpy()
        picks.append(m.item())
        k += 1
    return picks
''',
    "np_array_of_each_row_then_np_array": '''
def f(logits, w):
    rows = []
    for i in range(len(logits)):
        rows.append(np.array(tf.nn.softmax(logits[i] * w)))
    rows = np.array(rows)
    return rows
''',
    "zip_rounded_numpy_scalars_and_rounded_floats": '''
def f(logits, w):
    kept = []
    shown = []
    for a, b in zip(logits, tf.nn.softmax(logits)):
        d = tf.reduce_max(a * b).numpy()
        kept.append(round(d, 3))
        shown.append(round(float(tf.reduce_min(a)), 2))
    return kept, shown
''',
}

NOT_HOST_LISTS = {
    # a list of tensors (no host value): a loop for the loop levers as it is, not this pass
    "tensors_appended": '''
def f(logits, w):
    out = []
    for i in range(logits.shape[0]):
        out.append(tf.argmax(logits[i]))
    return out
''',
    # the body's names are read after the loop: splitting would change what they hold
    "a_body_name_read_after": '''
def f(logits, w):
    out = []
    for i in range(logits.shape[0]):
        v = tf.reduce_max(logits[i]).numpy()
        out.append(float(v))
    return out, float(v)
''',
    # a branch in the body: the values are not one per iteration
    "a_branch_in_the_body": '''
def f(logits, w):
    out = []
    for i in range(logits.shape[0]):
        if float(tf.reduce_max(logits[i])) > 2.0:
            out.append(int(tf.argmax(logits[i])))
    return out
''',
}


def _args() -> tuple:
    g = tf.random.Generator.from_seed(7)
    return (3.0 * g.normal([64, 5]), g.normal([5]))


def _f(text: str) -> ast.FunctionDef:
    return next(n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef)
                and n.name == "f")


def _numpy_calls(text: str) -> int:
    return sum(1 for n in ast.walk(_f(text)) if isinstance(n, ast.Attribute)
               and n.attr == "numpy")


def _loops(text: str) -> int:
    return sum(1 for n in ast.walk(_f(text))
               if isinstance(n, (ast.For, ast.While, ast.ListComp, ast.GeneratorExp)))


def _kinds(out):
    if isinstance(out, (list, tuple)):
        return [_kinds(v) for v in out]
    return type(out).__name__


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_host_values_in_lists_are_batched_and_copied_once(spelling):
    text, args = HEAD + SPELLINGS[spelling], _args()
    ctx = lever_context(text, args, "host_lists.py")
    lever = LoopsBatched(True)
    assert lever.applies(ctx) is None, lever.applies(ctx)
    new = lever.build(text, ctx)
    assert _loops(new) == 0, new
    # one copy to the host per list, none per row
    lists = len(SPELLINGS[spelling].split(".append(")) - 1 or 1
    assert _numpy_calls(new) == lists, new
    before, after = run_f(text, args), run_f(new, args)
    eq = compare_outputs(snapshot(before), snapshot(after))
    assert eq.equivalent is True, f"{eq.reason}\n{new}"
    # the same Python kinds row by row (int stays int, NumPy scalars stay NumPy scalars)
    assert _kinds(after) == _kinds(before), new


@pytest.mark.parametrize("spelling", ["two_lists_numpy_then_int_and_float",
                                      "enumerate_bare_numpy_rows"])
def test_host_lists_are_mapped_by_vectorized_map_too(spelling):
    text, args = HEAD + SPELLINGS[spelling], _args()
    new = LoopsVectorizedMap().build(text, lever_context(text, args, "host_lists.py"))
    assert _loops(new) == 0 and "vectorized_map" in new, new
    eq = compare_outputs(snapshot(run_f(text, args)), snapshot(run_f(new, args)))
    assert eq.equivalent is True, f"{eq.reason}\n{new}"


@pytest.mark.parametrize("spelling", sorted(NOT_HOST_LISTS))
def test_what_is_not_a_host_list_is_left_as_it_is(spelling):
    text = HEAD + NOT_HOST_LISTS[spelling]
    assert host_lists(text, "f", "tf") == text


def test_a_reduction_method_of_one_example_is_not_batched_as_the_whole_batch():
    # held-out round 6's c02: each image divided by its own .max(); batched, .max() reduced
    # the whole batch (equal there only because every image's maximum was the same)
    text = HEAD + '''
def f(images, w):
    out = []
    for im in images:
        out.append(float(tf.reduce_sum(np.float32(im / im.max()))))
    return out
'''
    rng = np.random.default_rng(3)
    images = rng.uniform(0.0, 1.0, size=(6, 4, 4, 2)) * np.arange(1, 7)[:, None, None, None]
    args = (images, None)
    ctx = lever_context(text, args, "host_lists.py")
    # built (stop 37) as each image over its own axes: at 266e1b2 it divided by the batch's
    # max; at 80836c9 it was not built
    new = LoopsBatched(True).build(text, ctx)
    assert ".max(axis=tuple(range(1, images.ndim)), keepdims=True)" in new, new
    eq = compare_outputs(snapshot(run_f(text, args)), snapshot(run_f(new, args)))
    assert eq.equivalent is True, f"{eq.reason}\n{new}"
