"""The *constants* share is the traced graphs' own tensors, not the step's input counted twice.

A one-layer step ``reduce_sum(relu(x @ w) ** 2)`` with x [512, 256] showed "constants 511.9 KiB"
next to "inputs 511.8 KiB": the constant is the gradient of the sum (ones × 2 over the
activation, which Grappler folds), as large as x only because w is square. With w [256, 128]
it follows the activation ([512, 128], 256 KiB) while the input stays 512 KiB. Traced only,
never run: fast.
"""

from __future__ import annotations

KIB = 1024


def _step(tf, width: int, *, train: bool):
    w = tf.Variable(tf.random.normal([256, width]))

    @tf.function
    def step(x):
        if not train:  # a forward pass: no gradient, no folded constant
            return tf.nn.relu(x @ w)
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.nn.relu(x @ w) ** 2)
        return tape.gradient(loss, [w])

    step.get_concrete_function(tf.TensorSpec([512, 256]))
    return step


def test_the_constant_follows_the_activation_not_the_input(tf):
    from tfperf.memory.sites import SiteIndex

    for width in (256, 128):
        sites = SiteIndex()
        sites.add_functions([_step(tf, width, train=True)])
        op, shape, n = sites.largest_constant or ("", "", 0)
        assert shape == f"[512,{width}]" and n == 512 * width * 4, (width, op, shape, n)
        assert "gradient_tape" in op  # the folded gradient, named so a user can find it
        assert n <= sites.constant_bytes < n + 4 * KIB


def test_a_forward_step_has_no_large_constant(tf):
    from tfperf.memory.sites import SiteIndex

    sites = SiteIndex()
    sites.add_functions([_step(tf, 256, train=False)])
    largest = sites.largest_constant
    assert largest is None or largest[2] < KIB, largest
    assert sites.constant_bytes < KIB


def test_the_text_says_what_constants_are_next_to_inputs(tf):
    from tfperf.memory.breakdown import breakdown
    from tfperf.memory.holders import Holders
    from tfperf.memory.report import DeviceView, MemoryReport
    from tfperf.memory.sites import SiteIndex
    from tfperf.memory.timeline import StepPeak

    sites = SiteIndex()
    sites.add_functions([_step(tf, 256, train=True)])
    held = 512 * KIB + sites.constant_bytes  # the input and the graph's constants
    peak = StepPeak(step=0, device="CPU", allocator="bfc", start_bytes=held, end_bytes=held,
                    peak_bytes=held, peak_time_s=0.0, duration_s=0.0, live=[])
    b = breakdown(peak, Holders(inputs_bytes=512 * KIB), sites)
    assert b.categories["inputs"] == 512 * KIB and b.categories["other"] == 0
    assert b.to_dict()["largest_constant"]["shape"] == "[512,256]"
    text = "\n".join(MemoryReport("step", None)._device_text(DeviceView("CPU", [peak], peak, b)))
    assert "constants: the traced graphs' own tensors, not the inputs" in text, text
    assert "gradient_tape" in text and "[512,256]" in text, text

    # its twin: no constants, no line about them
    bare = breakdown(peak, Holders(inputs_bytes=held), None)
    text = "\n".join(MemoryReport("step", None)._device_text(DeviceView("CPU", [peak], peak,
                                                                        bare)))
    assert "constants:" not in text, text


def _steps(tf):
    """x ([512, 256]) and w ([256, 8] float32), and three steps with their arguments: one takes
    x, one captures it, one does both."""
    x = tf.ones([512, 256])
    w = tf.Variable(tf.ones([256, 8]))

    @tf.function
    def takes(t):
        return t @ w

    @tf.function
    def captures():
        return x @ w

    @tf.function
    def both(t):
        return t @ w + x @ w

    return x, w, ((takes, (x,)), (captures, ()), (both, (x,)))


def test_a_captured_input_is_named_and_one_tensor_counts_once(tf):
    """A step that reads x from the enclosing scope holds it as one that takes it: *inputs*,
    not *other*; passed and captured at once, it counts once."""
    from tfperf.memory.holders import find_holders
    from tfperf.memory.sites import SiteIndex

    _, _, steps = _steps(tf)
    for fn, args in steps:
        fn(*args)
        sites = SiteIndex()
        sites.add_functions([fn])
        h = find_holders(((args, {}), sites.captured), variables=list(sites.variables.values()))
        assert (h.inputs_bytes, h.inputs_count) == (512 * KIB, 1), (fn, h)
        assert h.weights_bytes == 256 * 8 * 4


def test_fit_counts_a_tensor_passed_and_captured_once(tf):
    """``--fit``: x taken is an input, x captured is persistent, x taken *and* captured is
    one tensor at the inputs' own batch (it was counted as both)."""
    from tfperf.memory.fit import predict

    x, w, steps = _steps(tf)
    held = []
    for fn, args in steps:
        p = predict(fn, args, {}, 512, function=fn)
        assert p.error is None, p.error
        held.append(p.inputs_bytes + p.persistent_bytes)
    assert held == [512 * KIB + 256 * 8 * 4] * 3, held  # takes, captures, both

    # its twin: at another batch the argument is a new tensor and the capture stays
    @tf.function
    def both_sum(t):
        return tf.reduce_sum(t @ w) + tf.reduce_sum(x @ w)

    p = predict(both_sum, (x,), {}, 1024, function=both_sum)
    assert p.error is None, p.error
    assert p.inputs_bytes == 1024 * KIB, p
    assert 0 <= p.persistent_bytes - 256 * 8 * 4 - 512 * KIB < KIB, p  # + the sums' axes
