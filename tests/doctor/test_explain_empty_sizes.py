"""Messages whose numbers are empty (a 0-row tensor, an empty kernel list) are read without a
traceback: the readers that divide sizes or name the first registered device found nothing to
read there (stop 37's review; each raised ZeroDivisionError or IndexError before)."""

from __future__ import annotations

import pytest

from tfperf.doctor.explainer import explain_log

LOGS = [
    "InvalidArgumentError: Incompatible shapes: [0,10] vs. [32,10]",
    "InvalidArgumentError: logits and labels must be broadcastable: "
    "logits_size=[0,10] labels_size=[32,10]",
    "NotFoundError: No registered 'Sqrt' OpKernel for 'CPU' devices compatible with node "
    "{{node Sqrt}} (OpKernel was found, but attributes didn't match) Requested Attributes: "
    "T=DT_INT32 . Registered:  device='CPU'; T in []",
    "NotFoundError: No registered 'Foo' OpKernel for 'GPU' devices compatible with node "
    "{{node Foo}} . Registered:  <no registered kernels>",
    "ResourceExhaustedError: OOM when allocating tensor with shape[0,512,512,3] and type float "
    "on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc",
]


@pytest.mark.parametrize("log", LOGS)
def test_an_empty_size_is_read_as_a_failure_without_a_traceback(log):
    ex = explain_log(log)
    assert ex.causes, ex.verdict  # a failure is named, not "nothing wrong" and not a crash
