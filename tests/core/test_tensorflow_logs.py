"""Which of TensorFlow's C++ start-up lines tfperf hides (real lines from TF 2.16–2.21)."""

from tfperf.core.tensorflow_logs import is_startup_notice

NOTICES = [
    "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR\n",
    "I0000 00:00:1796357250.842562   19278 port.cc:153] oneDNN custom operations are on.\n",
    "2024-03-29 13:15:53.388917: I tensorflow/core/util/port.cc:113] oneDNN custom operations\n",
    "W0000 00:00:1758131045.228 3722035 computation_placer.cc:177] computation placer already\n",
]
KEPT = [
    "E0000 00:00:1758131045.203198 3722035 cuda_dnn.cc:8579] Unable to register cuDNN factory\n",
    "2025-09-17 14:44:05.176998: E external/local_xla/xla/stream_executor/cuda/cuda_fft.cc:467]\n",
    "F0000 00:00:1.0 1 check.cc:1] Check failed\n",
    "Traceback (most recent call last):\n",
    "hello from the user's script\n",
]


def test_info_and_warning_lines_are_notices():
    assert all(is_startup_notice(line) for line in NOTICES)


def test_errors_fatal_and_other_output_are_kept():
    assert not any(is_startup_notice(line) for line in KEPT)
