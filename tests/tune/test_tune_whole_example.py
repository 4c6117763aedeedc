"""One example's value reduced over all its axes (held-out round 6's c02: each image divided
by its own ``.max()``), in several loop spellings: batched, the reduction runs over every axis
after the batch axis and never over the batch axis (kept where it meets the example's
tensor, ``im / im.max()``); checked on inputs whose examples differ in scale, where a
reduction of the whole batch disagrees (no timing)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from rewrites import lever_context, loops_left, run_f  # noqa: E402  (tests/tune/rewrites.py)

from tfperf.bench.equivalence import compare_outputs, snapshot  # noqa: E402
from tfperf.tune.levers.loop_model import LoopsBatched  # noqa: E402
from tfperf.tune.source import SourceEditError  # noqa: E402

HEAD = "import numpy as np\nimport tensorflow as tf\n\n\n"

SPELLINGS = {
    # round 6's c02 in small: a zip of NumPy images, a method of each, a host list of floats
    "zip_method_max_into_floats": '''
def f(x, y):
    out = []
    for a, b in zip(x, y):
        out.append(float(tf.reduce_sum(np.float32(a / a.max()) * np.float32(b / b.max()))))
    return out
''',
    "comprehension_sum_of_a_product": '''
def f(x, y):
    return tf.stack([tf.reduce_sum(x[i] * y[i]) for i in range(x.shape[0])])
''',
    "append_stack_through_a_name": '''
def f(x, y):
    out = []
    for i in range(len(x)):
        m = tf.reduce_max(x[i])
        out.append(x[i] / m + y[i])
    return tf.stack(out)
''',
    "tensor_array_centred": '''
def f(x, y):
    ta = tf.TensorArray(x.dtype, size=x.shape[0])
    for i in range(x.shape[0]):
        ta = ta.write(i, x[i] - tf.reduce_mean(x[i]))
    return ta.stack()
''',
    "counter_while_std": '''
def f(x, y):
    out = []
    k = 0
    while k < x.shape[0]:
        out.append(tf.math.reduce_std(x[k]))
        k += 1
    return tf.stack(out)
''',
    "enumerate_unstack_l1_normalised": '''
def f(x, y):
    out = []
    for j, im in enumerate(tf.unstack(x)):
        out.append(im / tf.reduce_sum(tf.abs(im)))
    return tf.stack(out)
''',
    "numpy_standardised_per_image": '''
def f(x, y):
    rows = []
    for im in x:
        rows.append(np.float32((im - im.mean()) / im.std()))
    return np.array(rows)
''',
    # the loop in a helper the tuned function calls, its list rebound to its stack
    "in_a_helper_rebound": '''
def centred(x):
    out = []
    for im in tf.unstack(x):
        out.append(im - tf.reduce_mean(im))
    out = tf.stack(out)
    return out


def f(x, y):
    return centred(x) * y
''',
}

#: Reductions the rewrite must not take as "one example, every axis".
LEFT_ALONE = {
    # argmax of an array flattens it: no per-example form here
    "argmax_method": '''
def f(x, y):
    out = []
    for im in x:
        out.append(im.argmax())
    return np.array(out)
''',
}


def _args(numpy: bool) -> tuple:
    rng = np.random.default_rng(11)
    scale = np.arange(1, 7, dtype=np.float64)[:, None, None, None]  # each example its own
    x = rng.uniform(0.1, 1.0, size=(6, 5, 4, 3)) * scale
    y = rng.uniform(0.1, 1.0, size=(6, 5, 4, 3)) * scale[::-1]
    if numpy:
        return (x, y)
    return (tf.constant(x, tf.float32), tf.constant(y, tf.float32))


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_a_whole_example_reduction_is_batched_past_the_batch_axis(spelling):
    text = HEAD + SPELLINGS[spelling]
    args = _args(numpy=spelling.startswith(("zip_", "numpy_")))
    new = LoopsBatched(True).build(text, lever_context(text, args, "whole_example.py"))
    assert loops_left(new) == 0, new
    eq = compare_outputs(snapshot(run_f(text, args)), snapshot(run_f(new, args)))
    assert eq.equivalent is True, f"{eq.reason}\n{new}"


def test_these_inputs_tell_a_reduction_of_the_batch_apart():
    # the check above can fail: the batch's maximum instead of each example's disagrees
    text = HEAD + SPELLINGS["append_stack_through_a_name"]
    wrong = HEAD + '''
def f(x, y):
    return x / tf.reduce_max(x) + y
'''
    args = _args(numpy=False)
    eq = compare_outputs(snapshot(run_f(text, args)), snapshot(run_f(wrong, args)))
    assert eq.equivalent is False


@pytest.mark.parametrize("spelling", sorted(LEFT_ALONE))
def test_a_flattening_reduction_method_is_not_batched(spelling):
    text = HEAD + LEFT_ALONE[spelling]
    args = _args(numpy=True)
    with pytest.raises(SourceEditError):
        LoopsBatched(True).build(text, lever_context(text, args, "whole_example.py"))


def test_a_helper_that_reduces_one_example_is_not_given_the_batch():
    # the helper's reduce_max of one image, given the batch, is the batch's maximum; on these
    # inputs every image has the same maximum, so only the rewrite itself can refuse it
    text = HEAD + '''
def scaled(im):
    return im / tf.reduce_max(im)


def f(x, y):
    return tf.stack([scaled(x[i]) * y[i] for i in range(x.shape[0])])
'''
    x = np.full((4, 3, 2), 0.5)
    x[:, 0, 0] = 2.0
    x[:, 1:] *= np.arange(1, 5)[:, None, None]
    args = (tf.constant(x, tf.float32), tf.ones([4, 3, 2]))
    try:
        new = LoopsBatched(True).build(text, lever_context(text, args, "whole_example.py"))
    except SourceEditError:
        return  # refused: safe
    # Since stop 39 a plain helper is inlined before the batching, so its reduction of one
    # image is read with the image's axes: the rewrite must then be right where the images'
    # maxima differ (which these inputs cannot tell).
    assert "scaled(" not in new[new.index("def f("):], new
    other = (tf.constant(x * np.arange(1, 5)[:, None, None], tf.float32), args[1])
    eq = compare_outputs(snapshot(run_f(text, other)), snapshot(run_f(new, other)))
    assert eq.equivalent is True, f"{eq.reason}\n{new}"


def test_a_helper_without_a_reduction_is_given_the_batch():
    text = HEAD + '''
def shifted(im, by):
    return tf.nn.relu(im - by)


def f(x, y):
    return tf.stack([shifted(x[i], 0.3) + y[i] for i in range(x.shape[0])])
'''
    args = _args(numpy=False)
    new = LoopsBatched(True).build(text, lever_context(text, args, "whole_example.py"))
    # (inlined since stop 39: the helper's body on the batch)
    assert loops_left(new) == 0 and "tf.nn.relu(x - 0.3)" in new, new
    eq = compare_outputs(snapshot(run_f(text, args)), snapshot(run_f(new, args)))
    assert eq.equivalent is True, f"{eq.reason}\n{new}"


@pytest.mark.parametrize("spelling", ["append_stack", "comprehension_unstack", "name_bound",
                                      "tensor_array", "while_counter", "enumerate_prealloc",
                                      "helper_rebound"])
def test_the_generated_scaling_spellings_are_batched(spelling):
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from spellings import PER_EXAMPLE_SCALING as comp

    text = HEAD + comp.spellings[spelling]
    ns: dict = {"SIZE": dict(comp.small), "tf": tf}
    exec("def make():\n" + "\n".join("    " + r for r in comp.inputs.splitlines()), ns)
    args = ns["make"]()
    new = LoopsBatched(True).build(text, lever_context(text, args, "whole_example.py"))
    assert loops_left(new) == 0, new
    eq = compare_outputs(snapshot(run_f(text, args)), snapshot(run_f(new, args)))
    assert eq.equivalent is True, f"{eq.reason}\n{new}"


@pytest.mark.parametrize("spelling", ["comprehension_sum_of_a_product", "rows_of_rank_one"])
def test_a_batched_sum_of_one_examples_product_is_still_one_contraction(spelling):
    # the batched loop leaves _tfperf_per_example(tf.reduce_sum, a * b): the einsum lever
    # takes it as it took tf.reduce_sum(a * b, axis=-1) (rank 1) before
    from tfperf.tune.levers.contraction import ProductSumToEinsum

    rows = HEAD + '''
def f(x, y):
    return tf.stack([tf.reduce_sum(r * s) for r, s in zip(tf.unstack(x), tf.unstack(y))])
'''
    text = rows if spelling == "rows_of_rank_one" else HEAD + SPELLINGS[spelling]
    args = _args(numpy=False)
    if spelling == "rows_of_rank_one":
        args = tuple(tf.reshape(a, [6, -1]) for a in args)
    ctx = lever_context(text, args, "whole_example.py")
    batched = LoopsBatched(True).build(text, ctx)
    new = ProductSumToEinsum().build(batched, ctx)
    assert "_tfperf_contract(" in new and loops_left(new) == 0, new
    eq = compare_outputs(snapshot(run_f(text, args)), snapshot(run_f(new, args)))
    assert eq.equivalent is True, f"{eq.reason}\n{new}"


BODIES = {  # one example's body as the template loop→batched ops lever reads it
    "reduce_max_without_axis": ("out.append(x[i] / tf.reduce_max(x[i]))", False),
    "reduce_sum_axis_zero": ("out.append(x[i] - tf.reduce_mean(x[i], axis=0))", False),
    "numpy_module_max": ("out.append(x[i] / np.max(x[i]))", False),
    "a_reducing_helper": ("out.append(scaled(x[i]))", False),
    "reduction_from_the_end": ("out.append(x[i] - tf.reduce_mean(x[i], axis=-1, keepdims=True))",
                               True),
    "element_wise": ("out.append(tf.nn.relu(x[i]) * 2.0)", True),
}


@pytest.mark.parametrize("body", sorted(BODIES))
def test_the_template_batched_body_refuses_a_reduction_across_the_batch(body):
    # stop 36's wrong pick, again through the older template lever (x[i] → x, nothing else):
    # on these inputs every example has the same maximum and row means, so the equivalence
    # check cannot tell the batch's reduction from each example's: the lever itself refuses
    from tfperf.tune.levers.vectorized_map import BatchedBody

    line, batched = BODIES[body]
    text = HEAD + f'''
def scaled(im):
    return im / tf.reduce_max(im)


def f(x, y):
    out = []
    for i in range(x.shape[0]):
        {line}
    return tf.stack(out)
'''
    x = np.tile(np.linspace(0.5, 2.0, 12).reshape(1, 3, 4), (5, 1, 1))
    args = (tf.constant(x, tf.float32), None)
    ctx = lever_context(text, args, "whole_example.py")
    if not batched:
        with pytest.raises(SourceEditError):
            BatchedBody().build(text, ctx)
        return
    new = BatchedBody().build(text, ctx)
    assert loops_left(new) == 0, new
    eq = compare_outputs(snapshot(run_f(text, args)), snapshot(run_f(new, args)))
    assert eq.equivalent is True, f"{eq.reason}\n{new}"
