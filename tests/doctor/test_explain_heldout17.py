"""Round 17's miss classes by mechanism, on other wordings than its logs (stop 37, second wave).

The numbers a message gives decide between causes (a zero in a count, a queue's size 0, a record
at byte 0, a reshape whose both sizes come from the model), the traceback's own paths (a file of
the user's named like a package), a repr'd stderr read as the text it stands for, and an op's
namespace naming its add-on. The round's own logs are the ``heldout17`` split of the development
set; these cases are not them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tfperf.doctor.explainer import explain_log, unescaped

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from score_explain import first_explanation


def _top(text: str):
    ex = explain_log(text)
    assert ex.causes, ex.verdict
    return ex.causes[0], ex


# --- (1) the numbers the message gives ---------------------------------------------------------

def test_a_queue_closed_with_size_0_is_input_that_never_came_not_the_end_of_an_epoch():
    top, _ = _top("tensorflow.python.framework.errors_impl.OutOfRangeError: FIFOQueue "
                  "'_1_batch/fifo_queue' is closed and has insufficient elements (requested 32, "
                  "current size 0)\n\t [[Node: batch = QueueDequeueManyV2["
                  "component_types=[DT_FLOAT]](batch/fifo_queue, batch/n)]]\n")
    text = first_explanation(top)
    assert "never" in text and "pattern" in text, text


def test_a_queue_closed_with_elements_left_keeps_the_end_of_data_reading():
    top, _ = _top("OutOfRangeError: FIFOQueue '_1_batch/fifo_queue' is closed and has insufficient "
                  "elements (requested 32, current size 12)\n")
    assert "current size 0" not in first_explanation(top)


@pytest.mark.parametrize(("descriptor", "needle"), [
    ("{count: 32 feature_map_count: 0 spatial: 7 7  value_min: 0.000000 value_max: 0.000000 "
     "layout: BatchDepthYX}", "zero channels"),
    ("{count: 0 feature_map_count: 64 spatial: 56 56  value_min: 0.000000 value_max: 0.000000 "
     "layout: BatchYXDepth}", "empty"),
])
def test_a_cudnn_descriptor_is_read_by_the_field_that_is_zero(descriptor, needle):
    top, _ = _top("2019-01-02 10:11:12.131415: F tensorflow/stream_executor/cuda/cuda_dnn.cc:521] "
                  f"could not convert BatchDescriptor {descriptor} to cudnn tensor descriptor: "
                  "CUDNN_STATUS_BAD_PARAM\nAborted (core dumped)\n")
    assert needle in first_explanation(top), first_explanation(top)


@pytest.mark.parametrize("line", [
    "ValueError: Input 0 is incompatible with layer dense_3: expected ndim=2, found ndim=3",
    'ValueError: Input 0 of layer "dense_2" is incompatible with the layer: expected ndim=2, '
    "found ndim=5. Full shape received: (None, 4, 8, 8, 16)",
])
def test_dense_fed_a_higher_rank_tensor_is_the_model_missing_flatten(line):
    top, _ = _top(line + "\n")
    assert top.label == "input-shape-mismatch"
    assert "Flatten" in first_explanation(top), first_explanation(top)


def test_a_reshape_inside_the_model_is_read_as_a_size_the_model_was_made_for():
    top, _ = _top("ValueError: Cannot reshape a tensor with 73728 elements to shape [16,1024] "
                  "(16384 elements) for 'model/head/Reshape' (op: 'Reshape') with input shapes: "
                  "[1,18,8,512], [2].\n")
    assert "input size" in first_explanation(top), first_explanation(top)


def test_a_top_level_reshape_keeps_the_general_reading():
    top, _ = _top("ValueError: Cannot reshape a tensor with 784 elements to shape [28,28,3] "
                  "(2352 elements) for 'Reshape' (op: 'Reshape') with input shapes: [784], [3].\n")
    assert "inside the model" not in first_explanation(top)


def test_a_record_corrupted_at_byte_0_leads_with_a_writer_never_closed():
    top, _ = _top("tensorflow.python.framework.errors_impl.DataLossError: truncated record at 0\n"
                  "\t [[{{node IteratorGetNext}}]]\n")
    assert top.label == "corrupted-record"
    assert "never closed" in first_explanation(top), first_explanation(top)


# --- (2) the traceback's own paths --------------------------------------------------------------

def test_an_import_that_resolves_to_the_users_own_file_is_shadowing():
    top, _ = _top('Traceback (most recent call last):\n  File "keras.py", line 1, in <module>\n'
                  "    from keras.models import Sequential\n"
                  '  File "C:\\Users\\ana\\proj\\keras.py", line 1, in <module>\n'
                  "    from keras.models import Sequential\n"
                  "ModuleNotFoundError: No module named 'keras.models'; 'keras' is not a package\n")
    assert top.label == "tensorflow-shadowed", top.label


def test_a_script_merely_named_like_a_package_shadows_nothing():
    ex = explain_log('Traceback (most recent call last):\n  File "/home/u/app/keras.py", line 9, '
                     "in <module>\n    model = tf.keras.models.load_model('m.h5')\n"
                     '  File "/usr/lib/python3/dist-packages/tensorflow/python/keras/saving/'
                     'save.py", line 137, in load_model\nValueError: Unknown layer: Foo\n')
    assert all(c.label != "tensorflow-shadowed" for c in ex.causes)


# --- (3) a repr'd stderr ------------------------------------------------------------------------

def test_a_glibc_line_inside_a_reprd_stderr_is_read():
    text = ("E   AssertionError: b'Traceback (most recent call last):\\n  File "
            "\"/opt/app/run.py\", line 3, in <module>\\n    import tensorflow as tf\\n"
            "ImportError: /lib64/libc.so.6: version `GLIBC_2.17\\' not found (required by "
            "/opt/venv/lib/python3.6/site-packages/"
            "tensorflow/python/_pywrap_tensorflow_internal.so)\\n'\n")
    top, _ = _top(text)
    assert top.label == "glibc-too-old", top.label


def test_unescaping_keeps_windows_paths():
    text = "W  C:\\Users\\nick\\venv\\lib\\site-packages\\x.py:1: a\\nvidia line\n"
    assert unescaped(text) == text


# --- (5) an op's namespace names its add-on -----------------------------------------------------

def test_an_invalid_namespaced_op_name_is_an_add_on_built_for_a_newer_tensorflow():
    top, _ = _top("tensorflow.python.framework.errors_impl.InvalidArgumentError: Invalid name: "
                  "Text>WhitespaceTokenizeWithOffsets (Did you use CamelCase?); in OpDef: name: "
                  '"Text>WhitespaceTokenizeWithOffsets" input_arg { name: "input_values" }\n')
    assert top.label == "tf-addon-version-mismatch", top.label
    assert "Text>WhitespaceTokenizeWithOffsets" in first_explanation(top)


def test_a_python_function_op_in_a_served_graph_is_never_servable():
    top, _ = _top("2020-05-01 10:00:00.000000: E tensorflow_serving/util/retrier.cc:37] Loading "
                  "servable: {name: m version: 3} failed: Not found: Op type not registered "
                  "'EagerPyFunc' in binary running on 7f3a. Make sure the Op and Kernel are "
                  "registered in the binary running in this process.\n")
    assert top.label == "op-not-registered"
    assert "Python" in first_explanation(top) and "No TensorFlow version" in first_explanation(top)


# --- more numbers: pip's offered releases, cuDNN's spatial size, XLA's constant input ------------

def test_the_releases_pip_offers_name_the_interpreters_python():
    top, _ = _top("ERROR: Could not find a version that satisfies the requirement tensorflow==1.15 "
                  "(from versions: 2.2.0rc1, 2.2.0rc2, 2.2.0, 2.3.0, 2.4.0)\n"
                  "ERROR: No matching distribution found for tensorflow==1.15\n")
    text = first_explanation(top)
    assert top.label == "no-tensorflow-wheel"
    assert "Python 3.8" in text and "2.7-3.7" in text, text


def test_pip_offering_nothing_keeps_the_general_reading():
    top, _ = _top("ERROR: Could not find a version that satisfies the requirement tensorflow "
                  "(from versions: none)\nERROR: No matching distribution found for tensorflow\n")
    assert "this interpreter is Python" not in first_explanation(top)


def test_a_cudnn_descriptor_with_a_spatial_size_0_is_an_input_too_small():
    top, _ = _top("F tensorflow/stream_executor/cuda/cuda_dnn.cc:521] could not convert "
                  "BatchDescriptor {count: 64 feature_map_count: 512 spatial: 1 0  value_min: "
                  "0.000000 value_max: 0.000000 layout: BatchDepthYX} to cudnn tensor descriptor: "
                  "CUDNN_STATUS_BAD_PARAM\n")
    assert "too small" in first_explanation(top), first_explanation(top)


def test_xla_names_the_op_whose_input_must_be_a_compile_time_constant():
    top, _ = _top("tensorflow.python.framework.errors_impl.InvalidArgumentError: Input 1 to node "
                  "`model/sequence_mask/Range` with op Range must be a compile-time constant.\n")
    text = first_explanation(top)
    assert "Range" in text and "Python int" in text, text


def test_keras_graph_disconnected_names_the_missing_input():
    top, _ = _top('ValueError: Graph disconnected: cannot obtain value for tensor KerasTensor('
                  "type_spec=TensorSpec(shape=(None, 8), dtype=tf.float32, name='aux'), "
                  "name='aux', description=\"created by layer 'aux'\") at layer \"aux\". The "
                  "following previous layers were accessed without issue: ['img', 'conv2d']\n")
    assert top.label == "keras-graph-disconnected"
    assert "aux" in top.detail


def test_a_runtime_concat_one_pixel_off_is_an_input_size_the_poolings_do_not_divide():
    top, _ = _top("InvalidArgumentError: ConcatOp : Dimensions of inputs should match: shape[0] = "
                  "[4,25,25,512] vs. shape[1] = [4,24,24,256]\n"
                  "\t [[node model/concatenate/concat]]\n")
    assert "one pixel" in first_explanation(top), first_explanation(top)


def test_a_concat_of_other_batches_keeps_the_general_reading():
    top, _ = _top("InvalidArgumentError: ConcatOp : Dimensions of inputs should match: shape[0] = "
                  "[4,25,25,512] vs. shape[1] = [8,25,25,256]\n")
    assert "one pixel" not in first_explanation(top)


@pytest.mark.parametrize(("sizes", "needle"), [
    ("logits_size=[16,11] labels_size=[16,10]", "class count"),
    ("logits_size=[64,48] labels_size=[32,48]", "reshape with -1"),
    ("logits_size=[50,5] labels_size=[1,50]", "class ids"),
])
def test_logits_and_labels_are_read_by_which_number_differs(sizes, needle):
    top, _ = _top(f"InvalidArgumentError: logits and labels must be broadcastable: {sizes}\n"
                  "\t [[node categorical_crossentropy/softmax_cross_entropy_with_logits]]\n")
    assert needle in first_explanation(top), first_explanation(top)


def test_rows_a_square_factor_apart_are_a_hard_coded_flatten_over_larger_images():
    top, _ = _top("InvalidArgumentError: Incompatible shapes: [144,512] vs. [16,512]\n"
                  "\t [[node model/sub]]\n")
    assert "3x3 rows per sample" in first_explanation(top), first_explanation(top)


def test_rows_two_apart_keep_the_general_reading():
    top, _ = _top("InvalidArgumentError: Incompatible shapes: [32,10] vs. [16,10]\n")
    assert "rows per sample" not in first_explanation(top)


def test_a_system_library_a_package_loads_is_named_with_its_os_package():
    top, _ = _top('Traceback (most recent call last):\n  File "/usr/lib/python3/dist-packages/'
                  'h5py/__init__.py", line 26, in <module>\n    from . import _errors\n'
                  "ImportError: libhdf5_serial.so.103: cannot open shared object file: No such "
                  "file or directory\n")
    text = first_explanation(top)
    assert "libhdf5_serial.so.103" in text and "apt" in text, text



@pytest.mark.parametrize(("line", "needle"), [
    ("TypeError: Could not locate class 'Sequential'. Make sure custom classes are decorated with "
     "`@keras.saving.register_keras_serializable()`.", "Keras 2"),
    ("TypeError: Could not deserialize class 'Dense' because its parent module "
     "keras.src.layers.core.dense cannot be imported.", "saved by Keras 3"),
    ("TypeError: Could not deserialize class 'Sequential' because its parent module "
     "keras.src.engine.sequential cannot be imported.", "saved by Keras 2"),
])
def test_a_built_in_keras_class_not_found_is_a_keras_major_mismatch(line, needle):
    top, _ = _top(line + "\n")
    assert top.label == "keras-unknown-object"
    assert needle in first_explanation(top), first_explanation(top)


def test_a_custom_class_not_found_keeps_the_custom_objects_reading():
    top, _ = _top("TypeError: Could not locate class 'TokenAndPositionEmbedding'. Make sure "
                  "custom classes are decorated with "
                  "`@keras.saving.register_keras_serializable()`.\n")
    assert "custom_objects" in first_explanation(top)
    assert "major" not in first_explanation(top)


def test_a_full_batch_against_a_partial_last_batch_is_the_remainder():
    top, _ = _top("InvalidArgumentError: Incompatible shapes: [64,5] vs. [23,5]\n"
                  "\t [[node mul_3]] [Op:__inference_train_function_912]\n")
    text = first_explanation(top)
    assert "last batch" in text and "drop_remainder" in text, text
