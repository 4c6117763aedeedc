"""Stop 39's long tail (the ``tail39`` split): Keras and TF 1.x runtime errors the floor had not
recognised or read only by their class, on other wordings than the split's logs: an empty
training set, two layers with one name, a closed TF 1.x session, Keras 3's removed
``*_generator`` methods, the 'accuracy' metric's shape clash, and Keras/TensorFlow messages
printed without their class at the line's start (quoted in backticks, after the reporter's own
words). And VALID twins: logs that hold the same words without the error they name.
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
    "ValueError: Expect x to be a non-empty array or dataset.\n",
    "Epoch 1/5\nTraceback (most recent call last):\n  File \"fit.py\", line 9, in <module>\n"
    "    model.fit(train_gen, epochs=5)\nValueError: Expect x to be a non-empty array or "
    "dataset.\n",
])
def test_an_epoch_without_a_batch_is_empty_training_data(text: str) -> None:
    label, first = _first(text)
    assert label == "value-error"
    assert "empty" in first and "len(" in first


@pytest.mark.parametrize("text, label", [
    ('ValueError: The name "model_1" is used 2 times in the model. All layer names should be '
     'unique.\n', "value-error"),
    ("RuntimeError: The name 'vgg16' is used 3 times in the model. All layer names should be "
     "unique.\n", "runtime-error"),
])
def test_two_layers_with_one_name_are_named_apart(text: str, label: str) -> None:
    got, first = _first(text)
    assert got == label
    assert "same name" in first and "name=" in first


def test_a_closed_tf1_session_is_named_and_the_with_block_fixes_it() -> None:
    label, first = _first("Traceback (most recent call last):\n  File \"serve.py\", line 40, in "
                          "predict\n    out = sess.run(y, feed_dict={x: batch})\nRuntimeError: "
                          "Attempted to use a closed Session.\n")
    assert label == "runtime-error"
    assert "closed" in first and "with tf.Session()" in first


@pytest.mark.parametrize("method", ["fit_generator", "evaluate_generator", "predict_generator"])
def test_keras3_removed_generator_methods(method: str) -> None:
    label, first = _first(f"AttributeError: 'Sequential' object has no attribute '{method}'\n")
    assert label == "attribute-error"
    assert "Keras 3" in first and "fit, evaluate or predict" in first


def test_predict_classes_is_still_read_as_removed_in_tf26() -> None:
    _, first = _first("AttributeError: 'Functional' object has no attribute 'predict_classes'\n")
    assert "2.6" in first and "argmax" in first


def test_the_accuracy_metrics_equal_op_leads_with_the_metric() -> None:
    label, first = _first("InvalidArgumentError: Incompatible shapes: [640] vs. [64,10]\n"
                          "\t [[{{node metrics_2/acc/Equal}}]]\n")
    assert label == "invalid-argument-error"
    assert "'accuracy' metric" in first and "sparse_categorical_accuracy" in first


def test_valid_twin_a_loss_op_with_incompatible_shapes_is_not_blamed_on_accuracy() -> None:
    # the same clash in the loss, while 'accuracy' is compiled in: the metric is not the cause
    label, first = _first("Epoch 1/3\n 1/50 [..............................] - loss: 2.3 - "
                          "accuracy: 0.1\nInvalidArgumentError: Incompatible shapes: [32,10] vs. "
                          "[32]\n\t [[node mean_squared_error/SquaredDifference (defined at "
                          "train.py:20) ]]\n")
    assert label == "invalid-argument-error"
    assert "'accuracy' metric" not in first


@pytest.mark.parametrize("text, label, words", [
    # the reporter's own words before the class
    ("throw exception :TypeError: Input 'y' of 'Mul' Op has type float32 that does not match "
     "type int32 of argument 'x'.\n", "type-error", "dtypes"),
    ("Keras AttributeError: 'Sequential' object has no attribute 'predict_proba'\n",
     "attribute-error", "predict"),
    # quoted in backticks
    ("`NotImplementedError: Saving the model to HDF5 format requires the model to be a "
     "Functional model or a Sequential model.`\n", "not-implemented-error", "subclassed"),
    ("`model_config = json.loads(model_config.decode('utf-8')) AttributeError: 'str' object has "
     "no attribute 'decode'`\n", "attribute-error", "h5py"),
    # no traceback, Keras's own wording
    ("ValueError: Data cardinality is ambiguous:\n  x sizes: 500, 480\n  y sizes: 500\n",
     "value-error", "samples"),
])
def test_keras_messages_without_the_class_at_the_line_start_are_read(
        text: str, label: str, words: str) -> None:
    got, first = _first(text)
    assert got == label
    assert words in first


def test_valid_twin_the_decode_code_line_of_another_error_is_not_h5py() -> None:
    # a notebook traceback prints the decode line as context of another error (the file is
    # missing): the error read is the OSError's, not h5py's
    ex = explain_log(
        "~/keras/saving/hdf5_format.py in load_model_from_hdf5(filepath, custom_objects, "
        "compile)\n    177     if hasattr(model_config, 'decode'):\n    178       model_config = "
        "model_config.decode('utf-8')\n--> 179     f = h5py.File(filepath, mode='r')\n"
        "OSError: Unable to open file (unable to open file: name = 'model.h5', errno = 2, error "
        "message = 'No such file or directory', flags = 0, o_flags = 0)\n")
    assert ex.causes
    assert "h5py 3" not in first_explanation(ex.causes[0])


@pytest.mark.parametrize("text", [
    # a TF 1.x script that closes its session at the end and says so
    "INFO:tensorflow:Restoring parameters from ./ckpt/model.ckpt-2000\nstep 2000, accuracy "
    "0.91\nclosing the session; results written to out.csv\n",
    # a Keras run that names its layers and prints its summary: no error
    "2024-05-02 10:01:12.123456: I tensorflow/core/platform/cpu_feature_guard.cc:182] This "
    "TensorFlow binary is optimized to use available CPU instructions in performance-critical "
    "operations.\n"
    'Model: "model"\n concatenate (Concatenate)   (None, 16, 16, 256)  0\n'
    " dense_1 (Dense)             (None, 10)           2570\nTotal params: 1,234,567\n"
    "Epoch 1/2\n100/100 [==============================] - 5s 40ms/step - loss: 0.52 - "
    "accuracy: 0.81\n",
])
def test_valid_twins_benign_logs_with_the_same_words_are_nothing_wrong(text: str) -> None:
    assert explain_log(text).verdict == "nothing-wrong"


@pytest.mark.parametrize("text, words", [
    ("ValueError: This model has not yet been built. Build the model first by calling `build()` "
     "or by calling the model on a batch of data.\n", "input shape"),
    ("ValueError: This model has never been called, this its weights have not yet been created, "
     "so no summary can be displayed. Build the model first (e.g. by calling it on some test "
     "data).\n", "input shape"),
    ("ValueError: No images found in directory /data/flowers. Allowed formats: ('.bmp', '.gif', "
     "'.jpeg', '.jpg', '.png')\n", "subfolder"),
    ("ValueError: Failed to find data adapter that can handle input: <class 'numpy.ndarray'>, "
     "(<class 'list'> containing values of types {\"<class 'int'>\"})\n", "list"),
    ("ValueError: Unrecognized data type: x=<mylib.GraphLoader object at 0x7f3a> (of type "
     "<class 'mylib.GraphLoader'>)\n", "Keras 3"),
    ("TypeError: Fetch argument None has invalid type <class 'NoneType'>\n", "merge_all"),
])
def test_keras_and_tf1_wordings_alone_are_read_not_unrecognised(text: str, words: str) -> None:
    ex = explain_log(text)
    assert ex.verdict != "unrecognised"
    assert words in first_explanation(ex.causes[0])


def test_a_model_without_a_loss_is_at_least_read_as_its_class() -> None:
    ex = explain_log("ValueError: The model cannot be compiled because it has no loss to "
                     "optimize.\n")
    assert ex.verdict != "unrecognised" and ex.causes[0].label == "value-error"


@pytest.mark.parametrize("text", [
    "TypeError: Could not build a TypeSpec for KerasTensor(type_spec=TensorSpec(shape=(None, 8), "
    "dtype=tf.float32, name=None), name='dense/BiasAdd:0', description=\"created by layer "
    "'dense'\") of unsupported type <class 'keras.engine.keras_tensor.KerasTensor'>.\n",
    "TypeError: Could not build a TypeSpec for <KerasTensor: shape=(None, 32) dtype=float32 "
    "(created by layer 'embedding')> with type KerasTensor\n",
])
def test_a_tf_function_on_a_kerastensor_is_wrapped_in_a_layer(text: str) -> None:
    label, first = _first(text)
    assert label == "type-error"
    assert "KerasTensor" in first and "Lambda" in first


@pytest.mark.parametrize("arg", ["steps_per_epoch", "validation_steps"])
def test_a_generator_without_steps_is_given_its_steps(arg: str) -> None:
    label, first = _first(f"ValueError: `{arg}=None` is only valid for a generator based on the "
                          "`keras.utils.Sequence` class. Please specify `steps_per_epoch` or use "
                          "the `keras.utils.Sequence` class.\n")
    assert label == "value-error"
    assert "steps_per_epoch=math.ceil" in first


def test_an_ml_dtypes_release_tensorflow_does_not_expect_is_named() -> None:
    label, first = _first("  File \"/venv/lib/python3.10/site-packages/tensorflow/python/framework/"
                          "dtypes.py\", line 37, in <module>\n    _np_float8_e4m3b11 = "
                          "ml_dtypes.float8_e4m3b11\nAttributeError: module 'ml_dtypes' has no "
                          "attribute 'float8_e4m3b11'\n")
    assert label == "attribute-error"
    assert "ml_dtypes<0.3" in first


def test_len_of_a_kerastensor_is_code_older_than_tf24() -> None:
    label, first = _first("TypeError: Keras symbolic inputs/outputs do not implement `__len__`. "
                          "You may be trying to pass Keras symbolic inputs/outputs to a TF API "
                          "that does not register dispatching.\n")
    assert label == "type-error"
    assert "2.4" in first and "len()" in first


@pytest.mark.parametrize("text, label", [
    ("ValueError: Dimension 0 in both shapes must be equal, but are 64 and 3. Shapes are "
     "[64,3,7,7] and [7,7,3,64]. for 'Assign_2' (op: 'Assign') with input shapes: [64,3,7,7], "
     "[7,7,3,64].\n", "value-error"),
    ("InvalidArgumentError: Dimension 1 in both shapes must be equal, but are 10 and 1000. Shapes "
     "are [2048,10] and [2048,1000]. for 'Assign_320' (op: 'Assign') with input shapes: "
     "[2048,10], [2048,1000].\n", "invalid-argument-error"),
])
def test_weights_of_a_model_built_otherwise_are_named(text: str, label: str) -> None:
    got, first = _first(text)
    assert got == label
    assert "built differently" in first and "by_name=True" in first


def test_valid_twin_a_graph_shape_clash_that_is_no_assign_keeps_its_reading() -> None:
    # the same wording for a Mul, not an Assign: no weights are being loaded
    _, first = _first("ValueError: Dimensions must be equal, but are 10 and 1 for '{{node mul}} = "
                      "Mul[T=DT_FLOAT](x, y)' with input shapes: [?,10], [?,1].\n")
    assert "Weights are loaded" not in first
