"""Held-out rounds 20 and 21's "not recognised" logs and benign misses (stop 38, the floor), on
other wordings than their logs: a C++ ``std::bad_alloc`` abort, the older static-TLS refusal, a
TF 1.x training loop's caught ``OutOfRangeError`` on an input that never came, a TFLite delegate
that does not load (Edge TPU), the grouped-convolution message, TF-DF's custom ops on native
Windows, an error raised through pycoral; and oneDNN's E-level AVX-512 note and CPU notices a
Windows console wrapped at 80 columns, which are benign.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tfperf.doctor.explainer import explain_log

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from score_explain import first_explanation


def _first(text: str) -> tuple[str, str]:
    ex = explain_log(text)
    assert ex.causes, ex.verdict
    return ex.causes[0].label, first_explanation(ex.causes[0])


@pytest.mark.parametrize("text", [
    "Loading 120000 images into memory...\n"
    "terminate called after throwing an instance of 'std::bad_alloc'\n"
    "  what():  std::bad_alloc\nAborted (core dumped)\n",
    "epoch 3\n  what():  std::bad_alloc\n",
])
def test_a_cpp_bad_alloc_abort_is_the_host_out_of_memory(text: str) -> None:
    label, first = _first(text)
    assert label == "host-out-of-memory"
    assert "std::bad_alloc" in first and "RAM" in first


@pytest.mark.parametrize("text", [
    "ImportError: /usr/lib/x86_64-linux-gnu/libgomp.so.1: cannot load any more object with "
    "static TLS\n",
    "OSError: dlopen: cannot load any more object with static TLS\n",
])
def test_the_older_static_tls_refusal_is_static_tls_exhausted(text: str) -> None:
    label, first = _first(text)
    assert label == "static-tls-exhausted"
    assert "import" in first


@pytest.mark.parametrize("line", [
    "INFO:tensorflow:Caught OutOfRangeError. Stopping Training. PaddingFIFOQueue "
    "'_0_padding_fifo_queue' is closed and has insufficient elements (requested 32, current "
    "size 0)",
    "Caught OutOfRangeError. Stopping Training. FIFOQueue '_1_batch/fifo_queue' is closed and "
    "has insufficient elements (requested 8, current size 0)\n\t [[Node: batch = "
    "QueueDequeueManyV2[component_types=[DT_FLOAT], timeout_ms=-1](batch/fifo_queue, "
    "batch/n)]]",
])
def test_a_caught_out_of_range_on_an_input_that_never_came_is_an_empty_input(line: str) -> None:
    label, first = _first(line + "\n")
    assert label == "out-of-range-error"
    assert "path" in first and "current size 0" in first


def test_a_caught_out_of_range_at_the_end_of_its_epochs_is_not_an_error() -> None:
    ex = explain_log("INFO:tensorflow:global step 5000: loss = 0.31\nINFO:tensorflow:Caught "
                     "OutOfRangeError. Stopping Training. RandomShuffleQueue '_2_shuffle_batch/"
                     "random_shuffle_queue' is closed and has insufficient elements (requested "
                     "32, current size 17)\nINFO:tensorflow:Finished training! Saving model to "
                     "disk.\n")
    assert not any(c.severity == "failure" for c in ex.causes)


@pytest.mark.parametrize("text", [
    "ValueError: Failed to load delegate from edgetpu.dll\n",
    "  File \"/usr/lib/python3/dist-packages/pycoral/utils/edgetpu.py\", line 52, in "
    "load_edgetpu_delegate\nValueError: Failed to load delegate from libedgetpu.1.dylib\n",
])
def test_a_tflite_delegate_that_does_not_load_is_the_edge_tpu_runtime(text: str) -> None:
    label, first = _first(text)
    assert label == "tflite-delegate-load-failed"
    assert "plug" in first


def test_an_error_raised_through_pycoral_is_read_by_the_floor() -> None:
    ex = explain_log(
        "Traceback (most recent call last):\n  File \"detect.py\", line 8, in <module>\n"
        "    interpreter = make_interpreter(model)\n  File \"/usr/lib/python3/dist-packages/"
        "pycoral/utils/edgetpu.py\", line 87, in make_interpreter\n    delegates = "
        "[load_edgetpu_delegate()]\nRuntimeError: Error in device opening (/dev/apex_0)!\n")
    assert ex.causes and ex.causes[0].severity == "failure", ex.verdict


@pytest.mark.parametrize(("text", "lead"), [
    ("tensorflow.python.framework.errors_impl.UnimplementedError: The Conv2D op currently does "
     "not support grouped convolutions on the CPU. A grouped convolution was attempted to be run "
     "because the input depth of 3 does not match the filter input depth of 1 [Op:Conv2D]\n",
     "channels"),
    ("UnimplementedError: The Conv2D op currently does not support grouped convolutions on the "
     "CPU. A grouped convolution was attempted to be run because the input depth of 64 does not "
     "match the filter input depth of 32 [Op:Conv2D]\n", "jit_compile"),
    ("  (0) Unimplemented: Fused conv implementation does not support grouped convolutions for "
     "now.\n\t [[{{node model/conv2d/Relu}}]]\n", "channels"),
])
def test_the_grouped_convolution_message_is_a_row_with_its_causes(text: str, lead: str) -> None:
    label, first = _first(text)
    assert label == "grouped-conv-unsupported"
    assert lead in first.split("Fix:")[0 if lead == "channels" else -1]


def test_tf_decision_forests_on_native_windows_is_not_supported_there() -> None:
    label, first = _first(
        "tensorflow.python.framework.errors_impl.NotFoundError: C:\\Users\\me\\anaconda3\\envs\\"
        "tf\\lib\\site-packages\\tensorflow_decision_forests\\tensorflow\\ops\\inference\\"
        "inference.so not found\n")
    assert label == "tfdf-native-windows"
    assert "WSL" in first


@pytest.mark.parametrize("text", [
    "E0000 00:00:1700000000.000000   12345 util.cc:131] oneDNN supports DT_BOOL only on "
    "platforms with AVX-512. Falling back to the default Eigen-based implementation if present.\n",
    "2024-05-01 10:00:00.000000: E tensorflow/core/util/util.cc:131] oneDNN supports DT_HALF only "
    "on platforms with AVX-512. Falling back to the default Eigen-based implementation if "
    "present.\n",
])
def test_onednn_s_avx512_note_at_e_level_is_nothing_wrong(text: str) -> None:
    ex = explain_log(text)
    assert ex.verdict == "nothing-wrong", ex.verdict


def _console(line: str, width: int = 80) -> str:
    """The line as a Windows console shows it: cut every ``width`` characters."""
    return "\n".join(line[i:i + width] for i in range(0, len(line), width))


@pytest.mark.parametrize("line", [
    "2020-06-01 12:00:00.000000: I tensorflow/core/platform/cpu_feature_guard.cc:142] Your CPU "
    "supports instructions that this TensorFlow binary was not compiled to use: AVX AVX2",
    "2017-03-01 10:00:00.000000: W c:\\tf_jenkins\\home\\workspace\\release-win\\device\\cpu\\os\\"
    "windows\\tensorflow\\core\\platform\\cpu_feature_guard.cc:45] The TensorFlow library wasn't "
    "compiled to use AVX instructions, but these are available on your machine and could speed "
    "up CPU computations.",
])
def test_cpu_notices_a_console_wrapped_at_80_columns_are_nothing_wrong(line: str) -> None:
    ex = explain_log(">>> import tensorflow as tf\n" + _console(line) + "\n>>> print(1)\n1\n")
    assert ex.verdict == "nothing-wrong", ex.verdict
    assert [i.id for i in ex.informational] == ["cpu-feature-guard"]


_PROGRAM = ("$ python3 run.py --model model.h5\nTraceback (most recent call last):\n"
            "  File \"run.py\", line 9, in <module>\n    run(model)\n")


@pytest.mark.parametrize(("frame", "error", "component"), [
    ("/home/me/.local/lib/python3.9/site-packages/cv2/__init__.py\", line 181, in bootstrap\n"
     "    raise ImportError('ERROR: recursion')", "ImportError: ERROR: recursion is detected "
     "during loading of \"cv2\" binary extensions. Check OpenCV installation.", "cv2"),
    ("/usr/local/lib/python3.10/dist-packages/ydf/learner/generic_learner.py\", line 200, in "
     "train\n    return self._train_imp(ds)", "RuntimeError: INVALID_ARGUMENT: No training "
     "examples", "ydf"),
])
def test_a_tensorflow_companion_s_error_in_a_tensorflow_program_is_read_as_that_component_s(
        frame: str, error: str, component: str) -> None:
    text = _PROGRAM + "  File \"" + frame + "\n" + error + "\n"
    ex = explain_log(text)
    assert ex.verdict == "failure", ex.verdict
    cause = ex.causes[0]
    assert cause.confidence == "low"
    assert cause.cause.startswith(f"{error.split(':')[0]} was raised by {component}, not by "
                                  "TensorFlow")
    # the component's own reading and causes, not TensorFlow's with a prefix
    assert "TensorFlow or Keras ran" not in cause.cause
    assert all(component in c for c, _ in cause.likely[:2])
    assert "run.py:9" in cause.detail
    # the same error in a log that shows no TensorFlow program stays the program's own
    plain = explain_log(text.replace("model.h5", "photo.png"))
    assert plain.verdict == "unrecognised" and plain.not_tensorflow


def test_an_uncaught_cpp_exception_in_a_tensorflow_program_is_the_cpp_runtime_s() -> None:
    # (what(): Resource temporarily unavailable is a thread the process limit refused: its own
    # row since stop 42; another what() keeps the C++ runtime's reading)
    ex = explain_log("$ python predict.py --model model.h5\nterminate called after throwing an "
                     "instance of 'std::system_error'\n  what():  Operation not "
                     "permitted\nAborted (core dumped)\n")
    assert ex.verdict == "failure", ex.verdict
    cause = ex.causes[0]
    assert "raised by the C++ runtime, not by TensorFlow" in cause.cause
    assert "what()" in cause.likely[0][0]


@pytest.mark.parametrize("body", [
    # the review's log: pandas raised it in a Keras script (a .h5 on the command line)
    "  File \"predict.py\", line 12, in <module>\n    df = pd.read_csv(args.csv)\n"
    "  File \"/usr/lib/python3/dist-packages/pandas/io/parsers.py\", line 610, in read_csv\n"
    "    return _read(filepath_or_buffer, kwds)\n"
    "FileNotFoundError: [Errno 2] No such file or directory: 'data.csv'\n",
    "  File \"predict.py\", line 14, in <module>\n    x = np.load('features.npy')\n"
    "  File \"/usr/lib/python3/dist-packages/numpy/lib/npyio.py\", line 405, in load\n"
    "    fid = stack.enter_context(open(os_fspath(file), \"rb\"))\n"
    "FileNotFoundError: [Errno 2] No such file or directory: 'features.npy'\n",
    "  File \"predict.py\", line 5, in <module>\n    os.makedirs(out)\n"
    "  File \"/usr/lib/python3.10/os.py\", line 225, in makedirs\n    mkdir(name, mode)\n"
    "FileExistsError: [Errno 17] File exists: 'out'\n",
    # the program's own error in its own frame (a missing PIL in an Edge TPU script, the model
    # file its own open() did not find)
    "  File \"predict.py\", line 3, in <module>\n    buf = open(args.model, \"rb\").read()\n"
    "FileNotFoundError: [Errno 2] No such file or directory: 'model.tflite'\n",
    "  File \"predict.py\", line 4, in <module>\n    from PIL import Image\n"
    "ModuleNotFoundError: No module named 'PIL'\n",
])
@pytest.mark.parametrize("shows", ["model.h5", "saved_model/1", "~/.keras/models/m.keras",
                                   "mobilenet_v2_quant_edgetpu.tflite"])
def test_a_program_s_own_error_in_an_ordinary_library_stays_not_tensorflow_s(
        body: str, shows: str) -> None:
    ex = explain_log(f"$ python predict.py --model {shows}\nTraceback (most recent call last):\n"
                     + body)
    assert ex.verdict == "unrecognised", (ex.verdict, ex.causes and ex.causes[0].cause)
    assert ex.not_tensorflow


def test_a_loader_error_is_read_only_when_it_names_a_tensorflow_library() -> None:
    head = "$ ./label_image --graph=inception.pb\n./label_image: error while loading shared "
    ex = explain_log(head + "libraries: libtensorflow_framework.so.2: cannot open shared object "
                     "file: No such file or directory\n")
    assert ex.verdict == "failure", ex.verdict
    assert ex.causes[0].label == "library-load-error"
    # an ordinary library the loader did not find, in a program with a .pb: the environment's
    plain = explain_log(head + "libraries: libpng16.so.16: cannot open shared object file: No "
                        "such file or directory\n")
    assert plain.verdict == "unrecognised" and plain.not_tensorflow
