"""Round 18's miss classes by mechanism, on other wordings than its logs (stop 37, third wave).

A kernel-registration message is read by its lists (the dtype or device the node asked for
against the kernels registered), the floor reads the message's own clause (a 0 size, a missing
tag, a component's source file in a CHECK, a parse failure, XLA on a platform it lacks), the
tensorflow-metal release is named from Apple's table, Keras's ran-out warning says which input
ran out, and tf_sentencepiece's ops are told from tensorflow-text's. The round's own logs are the
``heldout18`` split of the development set; these cases are not them.
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


# --- (1) kernel registration: what the node asked for against what is registered --------------

def test_a_requested_dtype_no_kernel_takes_is_a_cast_naming_the_registered_dtypes():
    _, text = _first(
        "tensorflow.python.framework.errors_impl.NotFoundError: No registered 'Softmax' OpKernel "
        "for 'GPU' devices compatible with node {{node Softmax}}\n\t (OpKernel was found, but "
        "attributes didn't match) Requested Attributes: T=DT_INT64\n\t.  Registered:  "
        "device='GPU'; T in [DT_DOUBLE]\n  device='GPU'; T in [DT_FLOAT]\n  device='CPU'; T in "
        "[DT_DOUBLE]\n  device='CPU'; T in [DT_FLOAT]\n [Op:Softmax]\n")
    assert "Cast" in text and "int64" in text and "float" in text, text


def test_the_placer_wording_with_the_nodes_attrs_is_read_the_same_way():
    _, text = _first(
        "tensorflow.python.framework.errors_impl.InvalidArgumentError: Could not find device for "
        "node: {{node Rsqrt}} = Rsqrt[T=DT_UINT8]\nAll kernels registered for op Rsqrt:\n  "
        "device='CPU'; T in [DT_HALF, DT_FLOAT, DT_DOUBLE]\n  device='GPU'; T in [DT_HALF, "
        "DT_FLOAT, DT_DOUBLE]\n [Op:Rsqrt]\n")
    assert "uint8" in text and "tf.cast(x, tf.float32)" in text, text


def test_a_dtype_registered_only_on_another_device_is_placement_not_a_cast():
    _, text = _first(
        "tensorflow.python.framework.errors_impl.InvalidArgumentError: No registered "
        "'StringToHashBucketFast' OpKernel for 'GPU' devices compatible with node "
        "{{node StringToHashBucketFast}}\n\t (OpKernel was found, but attributes didn't match) "
        "Requested Attributes: T=DT_STRING\n\t.  Registered:  device='CPU'; T in [DT_STRING]\n"
        "  device='GPU'; T in [DT_FLOAT]\n")
    assert "only on CPU" in text and "soft_device_placement" in text, text


def test_an_op_without_any_kernel_is_another_build_or_an_add_on():
    _, text = _first(
        "tensorflow.python.framework.errors_impl.InvalidArgumentError: No OpKernel was "
        "registered to support Op 'FusedResizeAndPadConv2D' used by node resize_pad (defined at "
        "train.py:88) with these attrs: [T=DT_FLOAT, mode=\"REFLECT\"]\n"
        "Registered devices: [CPU, GPU]\nRegistered kernels:\n  <no registered kernels>\n")
    assert "no kernel at all" in text and "add-on" in text, text


def test_a_gpu_only_op_in_a_process_without_a_gpu_needs_the_gpu():
    _, text = _first(
        "InvalidArgumentError (see above for traceback): No OpKernel was registered to support "
        "Op 'Roialign' with these attrs.  Registered devices: [CPU], Registered kernels:\n"
        "  device='GPU'; T in [DT_FLOAT]\n")
    assert "only on GPU" in text and "no GPU (only CPU)" in text, text


# --- (2) the floor reads the message's own clause ---------------------------------------------

def test_a_size_of_0_in_an_allocation_is_an_empty_batch():
    _, text = _first(
        "2021-03-01 10:00:00.000000: E tensorflow/core/common_runtime/bfc_allocator.cc:300] "
        "tried to allocate 0 bytes\n2021-03-01 10:00:00.000100: F "
        "tensorflow/core/common_runtime/gpu/gpu_device.cc:104] EigenAllocator for GPU ran out of "
        "memory when allocating 0. See error logs for more detailed info.\n")
    assert "empty batch" in text, text


def test_tf2s_missing_tag_set_names_the_tags_the_savedmodel_has():
    _, text = _first(
        "Traceback (most recent call last):\n  File \"convert.py\", line 9, in <module>\n"
        "    converter = tf.lite.TFLiteConverter.from_saved_model(path)\nRuntimeError: "
        "MetaGraphDef associated with tags 'serve' could not be found in SavedModel, with "
        "available tags '[{'train'}]'. To inspect available tag-sets in the SavedModel, please "
        "use the SavedModel CLI: `saved_model_cli`.\n")
    assert "serve" in text and "saved_model_cli" in text, text


@pytest.mark.parametrize(("path", "needle"), [
    ("tensorflow/compiler/xla/service/gpu/ir_emitter_unnested.cc:3021", "without XLA"),
    ("external/xla/xla/service/hlo_instruction.cc:1740", "without XLA"),
    ("tensorflow/core/grappler/optimizers/remapper.cc:1177", "disable_meta_optimizer"),
])
def test_a_check_in_a_components_source_file_switches_that_component_off(path, needle):
    _, text = _first(f"2023-05-02 11:12:13.141516: F {path}] Check failed: "
                     "operand->shape().rank() == 4 (3 vs. 4)\nAborted (core dumped)\n")
    assert needle in text, text


def test_a_serialized_model_that_does_not_parse_is_a_path_given_for_its_bytes():
    _, text = _first(
        "tensorflow.python.framework.errors_impl.InternalError: "
        "external/com_google_sentencepiece/src/sentencepiece_processor.cc(73) "
        "[model_proto->ParseFromArray(serialized.data(), serialized.size())] "
        "[Op:SentencepieceOp]\n")
    assert "not its path" in text, text


def test_xla_on_a_platform_it_lacks_leads_with_the_legacy_optimizer_not_a_path():
    _, text = _first(
        "2023-01-04 10:11:12.131415: W "
        "tensorflow/core/framework/op_kernel.cc:1830] OP_REQUIRES failed at xla_ops.cc:446 : "
        "NOT_FOUND: could not find registered platform with id: 0x1047d2a40\n"
        "tensorflow.python.framework.errors_impl.NotFoundError: Graph execution error:\n"
        "could not find registered platform with id: 0x1047d2a40\n")
    assert "legacy" in text and "abspath" not in text, text


# --- (3) tensorflow-metal by Apple's table -----------------------------------------------------

def test_a_metal_plugin_on_a_tensorflow_newer_than_its_last_release_names_one_that_exists():
    _, text = _first(
        "tensorflow 2.21.0\ntensorflow-metal 1.2.0\nTraceback (most recent call last):\n"
        "  File \"<string>\", line 1, in <module>\ntensorflow.python.framework.errors_impl."
        "NotFoundError: dlopen(/opt/homebrew/lib/python3.12/site-packages/tensorflow-plugins/"
        "libmetal_plugin.dylib, 0x0006): Symbol not found: __ZN3tsl8internal10LogMessageC1EPKcii\n")
    assert "tensorflow==2.19.*" in text and "tensorflow-metal==1.2.0" in text, text


# --- (4) which input ran out ---------------------------------------------------------------------

def test_a_ran_out_warning_naming_fewer_batches_than_an_epoch_is_the_validation_input():
    label, text = _first(
        "Epoch 1/30\n400/400 [==============================] - ETA: 0s - loss: 0.71 - acc: 0.52"
        "WARNING:tensorflow:Your input ran out of data; interrupting training. Make sure that "
        "your dataset or generator can generate at least `steps_per_epoch * epochs` batches (in "
        "this case, 40 batches). You may need to use the repeat() function when building your "
        "dataset.\n400/400 [==============================] - 61s 150ms/step - loss: 0.71 - "
        "acc: 0.52 - val_loss: 0.69 - val_acc: 0.55\nEpoch 2/30\n")
    assert label == "input-ran-out-of-data" and "validation" in text, text


def test_a_training_shortfall_stays_the_training_input():
    _, text = _first(
        "Epoch 1/50\n 120/200 [=================>............] - ETA: 10s - loss: 0.4"
        "WARNING:tensorflow:Your input ran out of data; interrupting training. Make sure that "
        "your dataset or generator can generate at least `steps_per_epoch * epochs` batches (in "
        "this case, 10000 batches). You may need to use the repeat() function when building "
        "your dataset.\n")
    assert "validation data" not in text, text


# --- an op's package: tf_sentencepiece (TF 1) against tensorflow-text ---------------------------

def test_tf1_sentencepiece_ops_are_tf_sentencepiece_not_tensorflow_text():
    ex = explain_log("tensorflow.python.framework.errors_impl.NotFoundError: Op type not "
                     "registered 'SentencepieceEncodeDense' in binary running on host. Make "
                     "sure the Op and Kernel are registered in the binary running in this "
                     "process.\n")
    assert "tf_sentencepiece" in ex.causes[0].detail, ex.causes[0].detail


def test_tensorflow_texts_sentencepiece_op_stays_tensorflow_text():
    ex = explain_log("tensorflow.python.framework.errors_impl.NotFoundError: Op type not "
                     "registered 'SentencepieceOp' in binary running on host.\n")
    assert "tensorflow-text" in ex.causes[0].detail, ex.causes[0].detail
