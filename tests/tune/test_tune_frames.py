"""Frames (held-out round 6's c09: an STFT's frames sliced in a loop, ``x[..., i * hop:i * hop +
T]``, stacked): in several loop spellings, one gather of every frame; checked against the loop
on inputs that differ along every axis (no timing); slices that are not frames are left."""

from __future__ import annotations

from pathlib import Path

import pytest

tf = pytest.importorskip("tensorflow")

from rewrites import lever_context, loops_left, run_f  # noqa: E402  (tests/tune/rewrites.py)

from tfperf.bench.equivalence import compare_outputs, snapshot  # noqa: E402
from tfperf.tune.levers.frames import FramesToGather  # noqa: E402
from tfperf.tune.source import SourceEditError  # noqa: E402

HEAD = "import tensorflow as tf\n\n\n"

SPELLINGS = {
    # c09's loop: a tf.range variable, the frames stacked before the sample axis
    "tf_range_append_stack_minus_two": '''
def f(x, hop):
    n = (x.shape[-1] - 16) // hop + 1
    frames = []
    for i in tf.range(n):
        frames.append(x[..., i * hop:i * hop + 16])
    return tf.stack(frames, axis=-2)
''',
    "comprehension_stack_first": '''
def f(x, hop):
    return tf.stack([x[:, k * hop:k * hop + 16] for k in range((x.shape[1] - 16) // hop + 1)])
''',
    "tensor_array_offset_start": '''
def f(x, hop):
    n = (x.shape[1] - 19) // hop + 1
    ta = tf.TensorArray(x.dtype, size=n)
    for k in range(n):
        ta = ta.write(k, x[:, 3 + k * hop:3 + k * hop + 16])
    return ta.stack()
''',
    "counter_while_tf_slice": '''
def f(x, hop):
    out = []
    k = 0
    while k < (x.shape[1] - 16) // hop + 1:
        out.append(tf.slice(x, [0, k * hop], [-1, 16]))
        k += 1
    return tf.stack(out, axis=1)
''',
    "range_step_concat": '''
def f(x, hop):
    pieces = []
    for s in range(0, x.shape[1] - 16 + 1, hop):
        pieces.append(x[:, s:s + 16])
    return tf.concat(pieces, axis=1)
''',
    "a_named_start": '''
def f(x, hop):
    frames = []
    for i in range((x.shape[1] - 16) // hop + 1):
        start = i * hop
        frame = x[:, start:start + 16]
        frames.append(frame)
    return tf.stack(frames, axis=1)
''',
    # starts that are not regular (no tf.signal.frame: the gather)
    "irregular_starts": '''
def f(x, hop):
    return tf.stack([x[:, k * k:k * k + 16] for k in range(9)], axis=1)
''',
    # c09's shape: the loop in a helper the tuned function calls, the list's name rebound
    # to its stack and read after
    "in_a_helper_rebound": '''
def frames_of(x, hop, length=16):
    frame = []
    for i in tf.range((x.shape[-1] - length) // hop + 1):
        frame.append(x[..., i * hop:i * hop + length])
    frame = tf.stack(frame, axis=-2)
    frame *= tf.signal.hann_window(length, dtype=frame.dtype)
    return frame


def f(x, hop):
    return frames_of(x, hop)
''',
}

NOT_FRAMES = {
    # a sum of each window: the windows lever's, not a frame
    "summed": '''
def f(x, hop):
    return tf.stack([tf.reduce_sum(x[:, k * hop:k * hop + 16], axis=1) for k in range(4)])
''',
    # a strided slice inside the frame
    "strided": '''
def f(x, hop):
    return tf.stack([x[:, k * hop:k * hop + 16:2] for k in range(4)])
''',
    # frames added up: not stacked
    "added": '''
def f(x, hop):
    total = tf.zeros([x.shape[0], 16])
    for k in range(4):
        total = total + x[:, k * hop:k * hop + 16]
    return total
''',
}


def _args() -> tuple:
    g = tf.random.Generator.from_seed(5)
    return (g.normal([3, 101]), 5)


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_frames_sliced_in_a_loop_are_one_gather(spelling):
    text, args = HEAD + SPELLINGS[spelling], _args()
    ctx = lever_context(text, args, "frames.py")
    lever = FramesToGather()
    assert lever.applies(ctx) is None, lever.applies(ctx)
    new = lever.build(text, ctx)
    assert loops_left(new) == 0 and "_tfperf_frames(" in new, new
    eq = compare_outputs(snapshot(run_f(text, args)), snapshot(run_f(new, args)))
    assert eq.equivalent is True, f"{eq.reason}\n{new}"
    traced = tf.function(lambda *a: run_f(new, a))  # one gather: traces without the loop
    eq = compare_outputs(snapshot(run_f(text, args)), snapshot(traced(*args)))
    assert eq.equivalent is True, eq.reason


@pytest.mark.parametrize("spelling", sorted(NOT_FRAMES))
def test_slices_that_are_not_stacked_frames_are_left(spelling):
    text, args = HEAD + NOT_FRAMES[spelling], _args()
    with pytest.raises(SourceEditError):
        FramesToGather().build(text, lever_context(text, args, "frames.py"))


def _generated(spelling: str) -> tuple[str, tuple]:
    """A spelling of the generator's ``frames`` computation and its small inputs."""
    from spellings import FRAMES

    head = HEAD.replace("import tensorflow", "import numpy as np\nimport tensorflow")
    text = head + f"SIZE = {FRAMES.small!r}\n\n\n" + FRAMES.spellings[spelling]
    ns: dict = {"SIZE": dict(FRAMES.small), "tf": tf}
    exec("def make():\n" + "\n".join("    " + r for r in FRAMES.inputs.splitlines()), ns)
    return text, ns["make"]()


@pytest.mark.parametrize("spelling", ["tf_range_append_stack", "comprehension",
                                      "range_step_starts", "tensor_array_transposed",
                                      "while_tf_slice", "named_start", "helper_rebound"])
def test_the_generated_frames_spellings_are_one_gather(spelling):
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    text, args = _generated(spelling)
    new = FramesToGather().build(text, lever_context(text, args, "frames.py"))
    assert loops_left(new) == 0, new
    eq = compare_outputs(snapshot(run_f(text, args)), snapshot(run_f(new, args)))
    assert eq.equivalent is True, f"{eq.reason}\n{new}"
