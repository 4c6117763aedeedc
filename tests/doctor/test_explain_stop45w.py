"""Stop 45, wave 2 (round 30 read as development): known classes in wordings the rows did not
read — TensorFlow.js's shapes in brackets, TF 1.x's TFLite buffer wording, a paraphrased unknown
layer, a TFLite package in a pip error, pip's Python range — each with a twin that stays apart."""

from __future__ import annotations

from tfperf.doctor.explainer import explain_log


def _top(log: str) -> tuple[str, str, str]:
    ex = explain_log(log)
    if not ex.causes:
        return "-", ex.verdict, ""
    top = ex.causes[0]
    return top.label, top.severity, top.detail or ""


# --- TensorFlow.js's input check: shapes in brackets, null for the free axis -----------------

def test_a_tfjs_input_check_with_bracketed_shapes_is_an_input_shape_mismatch():
    # written for this test in TensorFlow.js's wording (round 30's reimprove23 is the same form)
    label, severity, detail = _top(
        "Uncaught (in promise) Error: Error when checking : expected conv2d_Conv2D1_input to "
        "have shape [null,28,28,1] but got array with shape [28,28,1].\n")
    assert (label, severity) == ("input-shape-mismatch", "failure")
    assert "batch axis" in detail


def test_a_tfjs_input_check_of_another_size_says_so():
    label, _, detail = _top(
        "Error: Error when checking : expected dense_Dense1_input to have shape [null,12] but "
        "got array with shape [1,14].\n")
    assert label == "input-shape-mismatch" and "other sizes" in detail


def test_the_target_check_in_brackets_stays_the_labels():
    # twin: the target check is the labels', not the input's
    label, _, _ = _top("Error: Error when checking target: expected dense_3 to have shape "
                       "(None, 10) but got array with shape (32, 1)\n")
    assert label == "labels-output-mismatch"


# --- TFLite's Java buffer, TF 1.x wording -----------------------------------------------------

def test_tf1_tflite_buffer_wording_reads_the_bytes_and_the_image_sizes():
    label, _, detail = _top(
        "java.lang.IllegalArgumentException: Cannot convert between a TensorFlowLite buffer "
        "with 602112 bytes and a ByteBuffer with 150528 bytes.\n")
    assert label == "tflite-input-bytes-mismatch"
    # 224x224x3 float32 against 224x224x3 uint8: a type 4 times narrower
    assert "uint8 data for a float32 input" in detail


def test_a_size_mismatch_at_one_width_names_both_image_sizes():
    label, _, detail = _top(
        "java.lang.IllegalArgumentException: Cannot convert between a TensorFlowLite buffer "
        "with 1072812 bytes and a ByteBuffer with 270000 bytes.\n")
    assert label == "tflite-input-bytes-mismatch"
    assert "299x299x3 float32" in detail and "150x150x3" in detail


def test_byte_counts_that_are_no_square_image_give_no_sizes():
    # twin: 1000 and 3000 bytes are no square image at one width
    _, _, detail = _top("java.lang.IllegalArgumentException: Cannot copy to a TensorFlowLite "
                        "tensor (input_1) with 1000 bytes from a Java Buffer with 3004 bytes.\n")
    assert "another shape" in detail and " in the buffer" not in detail


# --- a paraphrased unknown layer ---------------------------------------------------------------

def test_a_paraphrased_unknown_functional_layer_is_the_newer_keras_class():
    label, _, detail = _top("At loading time I got `ValueError: unknown layer : functional`.\n")
    assert label == "keras-unknown-object"
    assert "Functional" in detail and "TF 2.3" in detail


def test_a_custom_layer_in_lower_case_stays_a_custom_class():
    # twin: a name that is no built-in class stays a custom one
    _, _, detail = _top("ValueError: Unknown layer: attention_block\n")
    assert "custom" in detail


# --- pip errors about TensorFlow-family packages ------------------------------------------------

def test_no_wheel_of_a_tflite_package_is_read_not_set_apart():
    ex = explain_log("ERROR: Could not find a version that satisfies the requirement "
                     "tflite-runtime==2.14.0 (from versions: 2.1.0.post1, 2.5.0)\n"
                     "ERROR: No matching distribution found for tflite-runtime==2.14.0\n")
    assert ex.causes and ex.causes[0].severity == "failure"
    assert "Python" in ex.causes[0].fix


def test_no_wheel_of_an_unrelated_package_stays_not_tensorflows():
    # twin: a package with no TensorFlow name is still not blamed on TensorFlow
    ex = explain_log("ERROR: Could not find a version that satisfies the requirement "
                     "leftpad==9.9 (from versions: 0.1)\n")
    assert not ex.causes


def test_a_package_outside_its_python_range_names_the_range():
    label, severity, detail = _top(
        "ERROR: Package 'typing' requires a different Python: 3.10.4 not in '>=2.7, <3.5'\n")
    assert (label, severity) == ("pip-python-out-of-range", "failure")
    assert "typing" in detail and ">=2.7, <3.5" in detail and "3.10.4" in detail


def test_a_python_range_in_prose_is_not_the_error():
    # twin: a sentence about Python versions is no pip error
    assert _top("This package requires a different Python version than yours.\n")[0] != \
        "pip-python-out-of-range"


# --- messages that name their own mechanism, read instead of the generic class reading ----------
# (each first case is another thread's log line; round 30's log is the second case)

def test_a_tf_api_called_on_a_keras_tensor_is_read_even_lower_cased():
    # yalickj/load-forecasting-resnet#8 pasted TF 2.11's message lower-cased
    label, severity, _ = _top(
        "typeerror: you are passing kerastensor(type_spec=tensorspec(shape=(), dtype=tf.float32, "
        "name=none), name='placeholder:0', description=\"created by layer 'tf.cast_2'\"), an "
        "intermediate keras symbolic input/output, to a tf api that does not allow registering "
        "custom dispatchers, such as `tf.cond`, `tf.function`, gradient tapes, or `tf.map_fn`.\n")
    assert (label, severity) == ("keras-symbolic-tf-api", "failure")


def test_round30_tf_api_on_a_keras_tensor_says_wrap_it_in_a_layer():
    ex = explain_log(
        "TypeError: You are passing KerasTensor(type_spec=TensorSpec(shape=(), dtype=tf.float32, "
        "name=None), name='Placeholder:0', description=\"created by layer 'tf.cast_2'\"), an "
        "intermediate Keras symbolic input/output, to a TF API that does not allow registering "
        "custom dispatchers, such as tf.cond, tf.function, gradient tapes, or tf.map_fn.\n")
    top = ex.causes[0]
    assert top.label == "keras-symbolic-tf-api" and "keras.layers.Layer" in top.fix


def test_keras3s_kerastensor_in_a_tf_function_stays_the_version_class():
    # twin: Keras 3's wording is Keras 3 running tf.keras 2 code
    assert _top("ValueError: A KerasTensor cannot be used as input to a TensorFlow function. "
                "A KerasTensor is a symbolic placeholder for a shape and dtype.\n")[0] == \
        "keras-tf-version-mismatch"


def test_a_model_saved_before_its_inputs_are_known_is_read():
    # dgriffiths3/pointnet2-tensorflow2#13 (TF 2.5)
    label, _, detail = _top(
        "Model <model_modelnet.PointConvModel object at 0x7f1cc50f95b0> cannot be saved because "
        "the input shapes have not been set. Usually, input shapes are automatically determined "
        "from calling `.fit()` or `.predict()`. To manually set the shapes, call "
        "`model.build(input_shape)`.\n")
    assert label == "keras-save-unbuilt-model" and "PointConvModel" in detail


def test_round30_tfrs_index_saved_before_a_call_says_call_it_once():
    ex = explain_log(
        "ValueError: Model <tensorflow_recommenders.layers.ann.BruteForce object at "
        "0x7f6e9c2aa7b8> cannot be saved because the input shapes have not been set.\n")
    assert ex.causes[0].label == "keras-save-unbuilt-model" and "once" in ex.causes[0].fix


def test_save_of_a_graph_network_only_stays_apart():
    # twin: Keras 2.1's refusal to save a subclassed model at all is another message
    assert _top("NotImplementedError: Currently `save` requires model to be a graph network. "
                "Consider using `save_weights`.\n")[0] != "keras-save-unbuilt-model"


def test_a_partially_known_shape_used_as_a_tensor_is_the_unknown_dimension_class():
    # tensorflow/gnn#552 (TF 2.x wording) and MDIL-SNU/SIMPLE-NN#105 (TF 1.8 wording)
    for line, shape in (
            ("ValueError: Cannot convert a partially known TensorShape (None,) to a Tensor.\n",
             "(None,)"),
            ("ValueError: Cannot convert a partially known TensorShape to a Tensor: (?,)\n",
             "(?,)")):
        label, _, detail = _top(line)
        assert label == "unknown-dimension-in-shape" and shape in detail


def test_round30_partially_known_shape_after_a_dims_conversion():
    ex = explain_log(
        "ValueError: Tried to convert 'dims' to a tensor and failed. \n"
        "Error: Cannot convert a partially known TensorShape to a Tensor: (None, 512)\n")
    assert ex.causes[0].label == "unknown-dimension-in-shape"
    assert "tf.shape(x)" in ex.causes[0].fix


def test_a_list_of_dimensions_that_fails_to_convert_stays_apart():
    # twin: TF 1.x Dimension objects in a list is a type problem, not a None axis
    assert _top("TypeError: Failed to convert object of type <class 'list'> to Tensor. Contents: "
                "[Dimension(63), 1]. Consider casting elements to a supported type.\n")[0] != \
        "unknown-dimension-in-shape"


def test_a_weight_name_passed_where_keras3_wants_the_shape_is_the_keras3_class():
    # nikitadurasov/masksembles#15: add_weight("masks", shape=...) under Keras 3
    label, _, _ = _top("TypeError: Layer.add_weight() got multiple values for argument 'shape'.\n")
    assert label == "keras-tf-version-mismatch"


def test_round30_a_name_read_as_a_shape_names_its_letters():
    label, _, detail = _top(
        "ValueError: Cannot convert '('c', 'o', 'u', 'n', 't', 'e', 'r')' to a shape. Found "
        "invalid entry 'c' of type '<class 'str'>'.\n")
    assert label == "keras-tf-version-mismatch" and "'c', 'o', 'u'" in detail


def test_other_invalid_shapes_and_keras2s_name_clash_stay_apart():
    # twins: a float in a shape is no name; Keras 2's clash is on 'name'
    # (you359/Keras-FasterRCNN#13)
    assert _top("ValueError: Cannot convert '(2, 3.5)' to a shape. Found invalid entry '3.5' of "
                "type '<class 'float'>'.\n")[0] != "keras-tf-version-mismatch"
    assert _top("TypeError: add_weight() got multiple values for argument 'name'\n")[0] != \
        "keras-tf-version-mismatch"


# --- Keras 3's public API missing from the keras imported ---------------------------------------

def test_keras3_ops_missing_from_the_keras_imported_is_read():
    # microsoft/tensorflow-directml-plugin#380: keras-hub imported on keras 2.10
    label, _, detail = _top(
        "    from keras import ops\nImportError: cannot import name 'ops' from 'keras' "
        "(C:\\Python\\Python39\\lib\\site-packages\\keras\\__init__.py)\n")
    assert label == "keras3-api-missing" and "keras.ops" in detail


def test_round30_keras_config_missing_names_a_release_wheel():
    ex = explain_log("----> 1 import keras_nlp\n"
                     "---> 92     return keras.config.backend()\n"
                     "AttributeError: module 'keras' has no attribute 'config'\n")
    top = ex.causes[0]
    assert top.label == "keras3-api-missing"
    assert "git" in top.cause and "pip install -U keras" in top.fix


def test_other_names_missing_from_keras_keep_their_readings():
    # twins: keras.src's ops and a name that is no Keras 3 top-level module stay as they were
    assert _top("ImportError: cannot import name 'ops' from 'keras.src' (unknown location)\n")[0] \
        == "keras-tf-version-mismatch"
    assert _top("ImportError: cannot import name 'saving' from 'keras'\n")[0] != \
        "keras3-api-missing"


# --- TensorFlow.js that predates a built-in Keras class ----------------------------------------

_TFJS_UNKNOWN = (
    "Uncaught (in promise) Error: Unknown layer: {}. This may be due to one of the following "
    "reasons:\n1. The layer is defined in Python, in which case it needs to be ported to "
    "TensorFlow.js or your JavaScript code.\n2. The custom layer is defined in JavaScript, but "
    "is not registered properly with tf.serialization.registerClass().\n")


def _lead_fix(log: str) -> str:
    from tfperf.doctor.explain_render import report_text

    ex = explain_log(log)
    return ex.causes[0].label + " | " + report_text(ex).splitlines()[0]


def test_tfjs_without_functional_says_a_newer_tfjs():
    # tensorflow/tfjs#3772: MobileNetV2 saved by TF 2.3, loaded with tfjs 2.1.0
    got = _lead_fix('<script src="https://cdn.jsdelivr.net/npm/@tensorflow/tfjs@2.1.0/dist/'
                    'tf.min.js"></script>\n' + _TFJS_UNKNOWN.format("Functional"))
    assert got.startswith("keras-unknown-object") and "tfjs 2.4 or newer" in got
    assert "implement Functional in JavaScript" not in got


def test_round30_tfjs_200_loading_functional_says_a_newer_tfjs():
    got = _lead_fix("model = await tf.loadLayersModel(\"images/VGG16/model.json\");\n"
                    + _TFJS_UNKNOWN.format("Functional"))
    assert "tfjs 2.4 or newer" in got


def test_a_tfjs_custom_layer_still_needs_its_javascript_class():
    # twin: a layer of the user's own is still ported to JavaScript and registered
    got = _lead_fix(_TFJS_UNKNOWN.format("AttentionBlock"))
    assert "implement AttentionBlock in JavaScript" in got and "tfjs 2.4" not in got


# --- TF 1.15-2.1's tensorflow_core namespace read as tf ----------------------------------------

def test_a_name_missing_from_tensorflow_core_is_read_against_the_api_table():
    # keras-team/keras#13684's message (keras 2.3.1 on TF 2.1)
    ex = explain_log("    _LOCAL_DEVICES = tf.config.experimental_list_devices()\n"
                     "AttributeError: module 'tensorflow_core._api.v2.config' has no attribute "
                     "'experimental_list_devices'\n")
    assert "was removed in TF 2.1" in ex.causes[0].cause


def test_round30_tf_random_generator_on_tf21_says_it_came_in_22():
    ex = explain_log("root@admin:/config# python -c 'import tensorflow_addons as tfa'\n"
                     "AttributeError: module 'tensorflow_core._api.v2.random' has no attribute "
                     "'Generator'\n")
    top = ex.causes[0]
    assert "exists from TF 2.2" in top.cause and "2.2" in top.fix


def test_tensorflow_cores_internals_stay_the_floors():
    # twin: tensorflow_core.python is TF's internals, which the API table does not hold
    ex = explain_log("AttributeError: module 'tensorflow_core.python.keras.backend' has no "
                     "attribute 'get_graph'\n")
    assert "TF 1.15-2.1" not in ex.causes[0].cause


# --- an add-on's op missing on a Cloud TPU node's worker ----------------------------------------

def _op_answer(line: str) -> str:
    from tfperf.doctor.explain_render import report_text

    return report_text(explain_log(line))


def test_an_addons_op_missing_on_a_tpu_worker_says_tpu_vm():
    # tensorflow/addons#1553: 'Addons only register kernel on client device'
    text = _op_answer("NotFoundError: Op type not registered 'Addons>ImageProjectiveTransformV2' "
                      "in binary running on n-cf493c1a-w-0. Make sure the Op and Kernel are "
                      "registered in the binary running in this process.\n")
    assert "Cloud TPU node's worker" in text and "TPU VM" in text


def test_round30_tensorflow_io_op_on_a_tpu_worker_says_tpu_vm():
    text = _op_answer("NotFoundError: Op type not registered 'IO>AudioReadableInit' in binary "
                      "running on n-6a025964-w-0. Make sure the Op and Kernel are registered in "
                      "the binary running in this process.\n")
    assert "TPU VM" in text and "tf.audio.decode_wav" in text


def test_an_addon_op_on_a_local_host_or_a_core_op_on_a_worker_stays_apart():
    # twins: a workstation's host name keeps "import the add-on"; a core XRT op on a TPU worker
    # (pytorch/xla#400) is no add-on's
    local = _op_answer("NotFoundError: Op type not registered 'IO>AudioReadableInit' in binary "
                       "running on my-workstation. Make sure the Op and Kernel are registered.\n")
    assert "TPU VM" not in local and "import" in local
    xrt = _op_answer("Not found: Op type not registered 'XRTAllocateFromTensor' in binary running "
                     "on n-04d145c9-w-0. Make sure the Op and Kernel are registered.\n")
    assert "TPU VM" not in xrt


# --- keras-nlp's empty placeholder release, installed where tensorflow-text has no wheel --------

def test_a_keras_nlp_placeholder_version_is_read():
    # keras-team/keras-hub#1867 (Python 3.12, Windows), as the reporter listed it
    label, _, detail = _top(" tensorflow Version: 2.17.0\n keras Version: 3.5.0\n"
                            " keras-nlp Version: 0.0.2\n")
    assert label == "no-tensorflow-wheel" and "placeholder" in detail


def test_round30_pip_list_with_keras_nlp_000_is_read():
    label, _, detail = _top("pip list | grep keras\nkeras                     3.3.3\n"
                            "keras-core                0.1.7\nkeras-cv                  0.9.0\n"
                            "keras-nlp                 0.0.0\n")
    assert label == "no-tensorflow-wheel" and "tensorflow-text" in detail


def test_real_keras_nlp_releases_in_a_pip_list_are_nothing():
    # twin: a listing of real releases is no problem
    ex = explain_log("keras                     3.3.3\nkeras-core                0.1.7\n"
                     "keras-nlp                 0.12.1\n")
    assert not ex.causes


# --- KerasNLP's 'requires the tensorflow-text package' hides the real import error ---------------

def test_keras_nlps_tensorflow_text_message_says_see_the_hidden_error():
    # written for this test in KerasNLP's wording (assert_tf_text_installed), another class
    ex = explain_log("ImportError: BytePairTokenizer requires the `tensorflow-text` package. "
                     "Please install with `pip install tensorflow-text`.\n")
    top = ex.causes[0]
    assert top.label == "tf-text-import-hidden" and "import tensorflow_text" in top.fix


def test_round30_wordpiece_under_keras3_says_tf_keras():
    ex = explain_log("tokenizer = keras_nlp.tokenizers.WordPieceTokenizer(...)\n"
                     "ImportError: WordPieceTokenizer requires the `tensorflow-text` package. "
                     "Please install with `pip install tensorflow-text`.\n")
    assert "pip install tf-keras" in ex.causes[0].fix


def test_tensorflow_text_itself_missing_stays_a_missing_module():
    # twin: the module's own ModuleNotFoundError is the plain missing package
    assert _top("ModuleNotFoundError: No module named 'tensorflow_text'\n")[0] != \
        "tf-text-import-hidden"
