"""Review 41's defects, each with its VALID twin, on wordings of our own: prose saying a glibc is
fine, big labels with a simpler cause (a one-unit output, 0/255 masks, an ignore label), an
optional library named missing in a run that went on, a line that merely names a tf.errors class,
long lines, a Windows conda install, output after a traceback, a shape error outside a loss.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tfperf.doctor.explainer import explain_log

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from score_explain import first_explanation

_IMPORT_CUDNN = (
    "Traceback (most recent call last):\n"
    '  File "fit.py", line 2, in <module>\n    import tensorflow as tf\n'
    '  File "/srv/env/lib/python3.10/site-packages/tensorflow/python/pywrap_tensorflow.py",'
    " line 62, in <module>\n"
    "    from tensorflow.python._pywrap_tensorflow_internal import *\n"
    "ImportError: libcudnn.so.8: cannot open shared object file: No such file or directory\n")


@pytest.mark.parametrize("prose", [
    "# host is Debian 11 (GLIBC_2.31); TF 2.12 requires GLIBC_2.17, which is satisfied",
    "the manylinux2014 wheel needs GLIBC_2.17 or newer and this box has 2.28, fine",
])
def test_valid_prose_saying_the_glibc_is_fine_is_no_failure(prose: str) -> None:
    assert not any(c.label == "glibc-too-old" for c in explain_log(prose + "\n").causes)
    ex = explain_log(prose + "\n" + _IMPORT_CUDNN)
    assert ex.causes[0].label == "cuda-library-missing"


@pytest.mark.parametrize("prose", [
    "the wheel needs GLIBC_2.28 which CentOS 7 lacks",
    "pip says it requires GLIBC_2.27 but our cluster has 2.17",
])
def test_prose_saying_the_glibc_is_missing_is_glibc_too_old(prose: str) -> None:
    ex = explain_log(prose + "\n")
    assert ex.causes and ex.causes[0].label == "glibc-too-old"


def test_a_real_import_error_heads_a_glibc_named_only_in_prose() -> None:
    ex = explain_log("our nodes are missing GLIBC_2.27 per the admin\n" + _IMPORT_CUDNN)
    labels = [c.label for c in ex.causes]
    assert labels[0] == "cuda-library-missing" and "glibc-too-old" in labels


def _label_line(value: int, n: int) -> str:
    return ("InvalidArgumentError: Received a label value of "
            f"{value} which is outside the valid range of [0, {n}).  Label values: 3 {value} 0\n")


@pytest.mark.parametrize("value, n", [(9, 1), (255, 2), (255, 21)])
def test_valid_a_big_label_with_a_simpler_cause_keeps_the_general_reading(value: int,
                                                                           n: int) -> None:
    # a one-unit output under a sparse loss; a 0/255 mask; the 'ignore' label 255
    first = first_explanation(explain_log(_label_line(value, n)).causes[0])
    assert "another, larger class list" not in first
    assert "fewer units" in first


def test_a_label_far_past_the_class_count_is_another_class_list() -> None:
    first = first_explanation(explain_log(_label_line(57, 3)).causes[0])
    assert "another, larger class list" in first


_WENT_ON = ("2026-01-02 03:04:05.678901: I tensorflow/core/platform/cpu_feature_guard.cc:182] "
            "This TensorFlow binary is optimized to use available CPU instructions.\n"
            "Epoch 1/2\n50/50 [==============================] - 1s 9ms/step - loss: 0.61\n"
            "Epoch 2/2\n50/50 [==============================] - 1s 8ms/step - loss: 0.47\n")


@pytest.mark.parametrize("line", [
    "libnvinfer_plugin.so.8 not found; TensorRT engines disabled (optional)",
    "checking for libcupti.so.12 ... missing (optional, profiler only)",
    "# note: the 'libcuda.so.1 not found' message went away after the driver update",
])
def test_valid_an_optional_library_named_missing_in_a_run_that_went_on(line: str) -> None:
    ex = explain_log(line + "\n" + _WENT_ON)
    assert ex.verdict == "nothing-wrong", [c.label for c in ex.causes]


def test_a_library_named_missing_without_optional_words_is_an_error() -> None:
    ex = explain_log(_WENT_ON.splitlines()[0] + "\nlibtensorflow_framework.so.2 not found\n")
    assert ex.verdict == "failure"


@pytest.mark.parametrize("line", [
    "InvalidArgumentError count over the nightly runs: 0",
    "OutOfRangeError caught: input exhausted after 3 epochs, 600 steps",
])
def test_valid_a_line_that_merely_names_an_error_class_is_no_failure(line: str) -> None:
    ex = explain_log(_WENT_ON + line + "\n")
    assert ex.verdict == "nothing-wrong", [c.label for c in ex.causes]


def test_an_error_class_with_its_message_stays_a_failure() -> None:
    ex = explain_log(_WENT_ON + "OutOfRangeError: End of sequence\n")
    assert ex.verdict == "failure"


def _seconds(text: str) -> float:
    import time

    start = time.perf_counter()
    explain_log(text)
    return time.perf_counter() - start


_MB = 1_000_000
_FRAMES_HEAD = ('Traceback (most recent call last):\n  File "run.py", line 1, in <module>\n'
                "    import pandas\n")


def _frame(path_piece: str) -> str:
    return (_FRAMES_HEAD + '  File "' + path_piece * (_MB // len(path_piece))
            + '", line 3, in <module>\n    from x import y\n')


def _message(words: str) -> str:
    return "InvalidArgumentError: " + words * (_MB // len(words)) + "\n"


@pytest.mark.parametrize("build, triggering, plain", [
    # a path-like frame line: the TensorFlow-import check must not backtrack over it
    (_frame, "/tensorflow/b/", "abcdefghijklmn"),
    # a shape error repeated on one line: the cause rows' '.*' must not backtrack over it
    (_message, "Incompatible shapes: [7600] vs. [400,19] ", "lorem ipsum dolor sit amet "),
])
def test_a_1mb_line_of_the_triggering_words_reads_about_as_fast_as_a_plain_one(
        build: Callable[[str], str], triggering: str, plain: str) -> None:
    # a ratio in one run, no time budget: quadratic regexes made it 20-30x at 60 KB, hours at 1 MB
    t_plain = min(_seconds(build(plain)) for _ in range(2))
    t_trig = min(_seconds(build(triggering)) for _ in range(2))
    assert t_trig < 4 * t_plain, (t_trig, t_plain)


def _cuda_missing(prompt: str, library: str) -> str:
    return (f"{prompt} conda install -c conda-forge cudatoolkit=11.8 cudnn=8.6\n"
            "2025-05-06 07:08:09.123456: W tensorflow/tsl/platform/default/dso_loader.cc:66] "
            f"Could not load dynamic library '{library}'; dlerror: {library} not found\n")


def test_a_conda_env_on_windows_gets_windows_advice() -> None:
    cause = explain_log(_cuda_missing(r"(gpu) D:\work\seg>", "cudnn64_8.dll")).causes[0]
    assert cause.label == "cuda-library-missing"
    assert "LD_LIBRARY_PATH" not in cause.cause + cause.fix
    assert "PATH" in cause.fix


def test_a_conda_env_on_linux_still_leads_with_the_envs_lib_folder() -> None:
    cause = explain_log(_cuda_missing("(gpu) dev@box:~/seg$", "libcudnn.so.8")).causes[0]
    assert "conda environment" in cause.cause and "LD_LIBRARY_PATH" in cause.fix


_CALLBACK_FRAMES = (
    "Traceback (most recent call last):\n"
    '  File "/srv/app/hooks.py", line 9, in on_epoch_end\n    mlflow.log_metric("loss", v)\n'
    '  File "/srv/env/lib/python3.11/site-packages/tensorflow/python/keras/callbacks.py", '
    "line 410, in _call_epoch_hook\n    hook(epoch, logs)\n")


@pytest.mark.parametrize("after", [
    " 40%|####      | 80/200 [00:04<00:06, 19.1it/s]\n"
    "100%|##########| 200/200 [00:10<00:00, 19.6it/s]\n",
    "retrying the upload in 2.5 s (attempt 2 of 4)\nupload ok\nloss 0.71 -> 0.52\n",
])
def test_valid_output_of_a_run_that_went_on_after_frames_is_no_message(after: str) -> None:
    assert explain_log(_CALLBACK_FRAMES + after).verdict != "failure"


def test_a_message_without_its_class_after_frames_is_still_read() -> None:
    ex = explain_log(_CALLBACK_FRAMES + "Expected begin[0] in [0, 4], but got 7\n")
    assert ex.verdict == "failure"


_FLAT_MESSAGE = ("tensorflow.python.framework.errors_impl.InvalidArgumentError: "
                 "Incompatible shapes: [12] vs. [3,4]")


def test_valid_a_flat_shape_error_in_the_users_own_op_is_no_label_reading() -> None:
    log = ('Traceback (most recent call last):\n  File "mix.py", line 4, in <module>\n'
           "    out = a * b\n" + _FLAT_MESSAGE + " [Op:Mul] name: \n")
    cause = explain_log(log).causes[0]
    assert "flattened" not in cause.cause
    assert not any("flattened" in c or "Give the labels the output's shape" in f
                   for c, f in cause.likely)


def test_a_flat_shape_error_in_a_loss_is_the_flattened_labels_reading_said_once() -> None:
    from tfperf.doctor.explain_render import summary

    log = ('Traceback (most recent call last):\n  File "seq.py", line 40, in <module>\n'
           "    model.fit(ds, epochs=2)\n" + _FLAT_MESSAGE
           + "\n\t [[node sparse_categorical_crossentropy/SparseSoftmaxCrossEntropyWithLogits]]\n")
    ex = explain_log(log)
    assert "flattened" in ex.causes[0].cause
    said = summary(ex)
    assert said.count("same 12 values in another rank") == 1, said


def test_each_cut_import_row_has_its_own_source() -> None:
    from tfperf.doctor.knowledge.tables import read_table

    rows = [r for r in read_table("error_class_causes.csv")
            if "cut before its message" in r["when"]]
    assert len(rows) >= 3
    sources = [r["source"] for r in rows]
    assert len(set(sources)) == len(sources)


def test_the_conda_activate_d_advice_is_given_once() -> None:
    cause = explain_log(_cuda_missing("(gpu) dev@box:~/seg$", "libcudnn.so.8")).causes[0]
    assert cause.fix.count("activate.d") == 1
