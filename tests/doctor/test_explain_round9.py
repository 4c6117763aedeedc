"""``tfperf explain`` on round 9's classes, checked on other wordings than round 9's own logs: a
log that holds no error is "nothing wrong" (a warning no row knows is a note), errors worded
without their class, the checkpoint path and the GPU library read from the message, and an
out-of-memory with a batch of one. Each case is a shape of log with its names and numbers changed
from the held-out log that prompted it, so a test passes only when the reading is general."""

from __future__ import annotations

import pytest

from tfperf.doctor.explain_render import summary
from tfperf.doctor.explainer import explain_log


def _first(text: str):
    ex = explain_log(text)
    assert ex.causes, ex.verdict
    cause = ex.causes[0]
    lead = (" ".join(cause.likely[0]) if cause.confidence == "low" and cause.likely else
            " ".join(t.split(" Otherwise: ")[0] for t in (cause.cause, cause.fix)))
    return cause, lead


# --- a log that holds no error is "nothing wrong" -------------------------------------------------

@pytest.mark.parametrize("text", [
    # a Python warning of Keras's no row knows (made up: no row will ever know it)
    "/opt/venv/lib/python3.9/site-packages/keras/engine/frob.py:77: UserWarning: The frobnicator "
    "of layer dense_3 was reset; results may differ.",
    # a W-level TensorFlow line whose words say 'failed' and 'Not found' (the level decides)
    "2023-01-02 03:04:05.678901: W tensorflow/core/platform/cloud/frob_provider.cc:91] All "
    "attempts to frobnicate failed, returning an empty value. Not found: no frob file.",
    # absl's W-level line of a Python file
    "W0102 03:04:05.678901 139999 frob_utils.py:12] When passing frobs, do not specify `steps`.",
    # only the program's own output: nothing TensorFlow said, and no error
    ">>> import tensorflow as tf\n>>> print(tf.reduce_sum([1, 2]))\ntf.Tensor(3, shape=(), "
    "dtype=int32)\n>>> print('done')\ndone",
])
def test_a_log_that_holds_no_error_is_nothing_wrong_and_unknown_warnings_are_notes(text):
    ex = explain_log(text)
    assert ex.verdict == "nothing-wrong" and ex.exit_status == 0
    head = summary(ex)
    assert head.startswith("nothing wrong") and "does not prove" not in head
    if ex.unknown:
        assert all(ln.row == "warning" for ln in ex.unknown)
        assert "informational" in head and "line 1" in head


@pytest.mark.parametrize("text", [
    # an error in words, no class, no level: never "nothing wrong"
    "Could not open /data/run7/model.ckpt-500: Data loss: frob checksum mismatch",
    "module 'tensorflow.contrib.frobnicate' has no attribute 'frob_graph'",
    "Unable to frobnicate tensor frob_3:0 on device GPU:1",
    # a TensorFlow exception no row knows
    "tensorflow.python.framework.errors_impl.FrobError: the frob of tensor x was lost",
])
def test_a_log_that_holds_an_error_is_never_nothing_wrong(text):
    assert explain_log(text).verdict in ("failure", "warning", "unrecognised")
