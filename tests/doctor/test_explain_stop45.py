"""Stop 45: messages of known classes in wordings the rows did not read (an OOM shape in
parentheses, TF 1.x's swallowed estimator import), each with a twin that must stay apart."""

from __future__ import annotations

from tfperf.doctor.explainer import explain_log


def _top(log: str) -> tuple[str, str]:
    ex = explain_log(log)
    return (ex.causes[0].label, ex.causes[0].severity) if ex.causes else ("-", ex.verdict)


# --- an OOM with the shape in parentheses -----------------------------------------------------

def test_an_oom_shape_in_parentheses_is_an_oom_with_its_batch():
    # stackoverflow.com/questions/46654424 (dev45a): the line as the asker quoted it
    ex = explain_log("OOM when allocating tensor with shape (1024, 100, 160)\n")
    top = ex.causes[0]
    assert (top.label, top.severity) == ("out-of-memory", "failure")
    assert "1024" in top.cause and "batch" in top.cause


def test_the_bracketed_oom_shape_reads_as_before():
    # twin: TensorFlow's own form keeps its reading
    log = ("ResourceExhaustedError: OOM when allocating tensor with shape[1024,100,160] and "
           "type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\n")
    top = explain_log(log).causes[0]
    assert top.label == "out-of-memory" and "1024" in top.cause


def test_a_shape_in_parentheses_alone_is_not_an_oom():
    # twin: a Keras shape message is not an allocation failure
    assert _top("ValueError: Shapes (None, 1) and (None, 2) are incompatible\n")[0] \
        != "out-of-memory"


# --- TF 1.11-1.13's swallowed estimator import ------------------------------------------------

def test_the_swallowed_estimator_import_says_how_to_see_the_hidden_error():
    # github.com/tensorflow/tensorflow/issues/23007 (round 29, tf23007): read "nothing wrong"
    ex = explain_log("import tensorflow as tf\ntf.estimator package not installed.\n"
                     "tf.estimator package not installed.\n")
    top = ex.causes[0]
    assert (top.label, top.severity) == ("estimator-import-failed", "warning")
    assert "tensorflow_estimator" in top.fix and "tensorflow-estimator==" in top.fix


def test_the_estimator_line_inside_a_bazel_build_is_build_output():
    # twin: the API genrule of a source build prints it before the estimator exists; the build
    # completes
    log = ("INFO: From Executing genrule //tensorflow/python/estimator/api:"
           "estimator_python_api_gen:\ntf.estimator package not installed.\n"
           "tf.estimator package not installed.\n"
           "Target //tensorflow/tools/pip_package:build_pip_package up-to-date:\n"
           "INFO: Build completed successfully, 11347 total actions\n")
    assert explain_log(log).verdict == "nothing-wrong"


def test_the_estimator_sentence_in_prose_is_not_the_message():
    # twin: the row reads the line TensorFlow prints, not a sentence that mentions it
    log = "Otherwise the tf will complain \"tf.estimator package not installed\" at import\n"
    assert _top(log)[0] != "estimator-import-failed"


# --- keras.engine.topology: the module gone since Keras 2.4, with the public import -------------

def test_keras_engine_topology_missing_names_the_public_import():
    # github.com/CrockettLab/outrage_classifier/issues/2 (round 29, outrage2): the generic
    # "same minor as TensorFlow" fix does not bring the module back (gone since Keras 2.4)
    log = ("---> 21 from keras.engine.topology import Layer\n\n"
           "ModuleNotFoundError: No module named 'keras.engine.topology'\n")
    top = explain_log(log).causes[0]
    assert top.label == "keras-tf-version-mismatch"
    assert "from tensorflow.keras.layers import Layer" in top.fix.split(" Otherwise: ")[0]


def test_the_keras_engine_package_missing_keeps_the_keras_3_reading():
    # twin: keras.engine itself (gone in Keras 3) and another of its modules keep the row's text
    for mod in ("keras.engine", "keras.engine.base_layer_v1"):
        top = explain_log(f"ModuleNotFoundError: No module named '{mod}'\n").causes[0]
        assert top.label == "keras-tf-version-mismatch", mod
        assert "keras.layers import Layer" not in top.fix, mod


# --- TF 0.x-1.x load cuDNN lazily: its library alone missing fails nothing yet ------------------

def test_cudnn_not_opened_alone_is_a_notice_for_the_ops_that_need_it():
    # newbe.dev 'is cudnn optional?' (dev45a): a fully connected model never calls cuDNN
    ex = explain_log("Couldn't open CUDA library libcudnn.so\n")
    assert ex.verdict == "nothing-wrong"
    assert ex.causes[0].label == "cudnn-not-loaded" and "convolution" in ex.causes[0].cause


def test_cudnn_dso_unloadable_stays_a_failure():
    # twin: TF 0.5's own failure line after it keeps the failure (tf62 in the set)
    log = ("I tensorflow/stream_executor/dso_loader.cc:102] Couldn't open CUDA library "
           "libcudnn.so. LD_LIBRARY_PATH: /usr/local/cuda/lib64\n"
           "I tensorflow/stream_executor/cuda/cuda_dnn.cc:2259] Unable to load cuDNN DSO\n")
    assert _top(log) == ("cuda-library-missing", "failure")


def test_another_cuda_library_not_opened_stays_a_failure():
    # twin: cuBLAS is loaded at start-up, without it no GPU op runs
    log = "Couldn't open CUDA library libcublas.so. LD_LIBRARY_PATH: /usr/local/cuda/lib64\n"
    assert _top(log) == ("cuda-library-missing", "failure")


# --- read as development after dev45b's score (its transfer figure was taken before these) -----

def test_keras_1_input_check_with_a_shape_is_an_input_shape_mismatch():
    # openillumi.com/?p=67099 (dev45b): one sample of 784 features passed as (784, 1)
    log = ("Exception: Error when checking : expected dense_input_1 to have shape (None, 784) "
           "but got array with shape (784, 1)\n")
    top = explain_log(log).causes[0]
    assert top.label == "input-shape-mismatch" and "batch axis" in top.fix


def test_the_target_check_with_a_shape_stays_the_labels_reading():
    # twin: 'Error when checking target' is about the labels, not the input
    log = ("ValueError: Error when checking target: expected dense_2 to have shape (10,) but got "
           "array with shape (1,)\n")
    assert _top(log)[0] == "labels-output-mismatch"


def test_a_restored_keras_call_signature_error_is_tensorflows_and_names_the_signature():
    # mejorcodigo.com/p/88813 (dev45b): was "not recognised" (no TensorFlow word in the line)
    log = ("TypeError: f(inputs, training, training, training, training, *, training, training) "
           "missing 1 required argument: training\n")
    ex = explain_log(log)
    top = ex.causes[0]
    assert top.label == "type-error"
    assert "call signature" in " ".join(top.likely[0])


def test_a_plain_python_missing_argument_is_still_not_tensorflows():
    # twin: the same Python error of another framework's forward() keeps "not TensorFlow's"
    ex = explain_log("TypeError: forward() missing 1 required positional argument: training\n")
    assert ex.verdict == "unrecognised"
