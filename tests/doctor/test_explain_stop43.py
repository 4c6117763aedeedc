"""Stop 43: explain's long tail read by mechanism. The variants (``stop43_variants.py``, 129 error
logs of our own in real-log shapes) must each get their expected label (a failure or warning;
two are notices of a library a CPU-only machine also lacks), and the new
readings lead where they apply, each with a VALID twin that must not get it:

- Keras hides its own frames from a traceback (tf.keras since 2.9, Keras 3): an error whose only
  frame is the user's ``model.fit(...)`` line, after TensorFlow's lines, is Keras's, not "the
  application's own" (it read "nothing wrong"); scikit-learn's ``fit`` shows its frames and stays
  apart;
- a package's own version check ("This version of X requires Y version >= V; Detected an
  installation of version W") names Y, V and W;
- a loader's "incompatible architecture (have 'x86_64', need 'arm64')": Python and the wheel of
  two architectures;
- TFLite's rank check (``input->dims->size != 4 (3 != 4)``): a missing batch axis;
- an AbortedError from a oneDNN kernel is not a distributed peer's;
- "Table not initialized": a lookup table's initializer;
- a SavedModel function that captures another graph's tensor;
- an add-on's own ``.so`` that cannot be opened at its own site-packages path: no build of it for
  this machine (aarch64; h19_22, TF-DF);
- a Windows CUDA runtime DLL (``cudart64_101.dll``) is a GPU build looking for CUDA: not the
  "TF 2.11+ has no Windows GPU build" reading;
- a string tensor on a TPU, DirectML's device, a .tflite that cannot be opened, NumPy's removed
  ``typeDict``, Keras 3's symbolic KerasTensor in a tf.keras-2 layer;
- a concatenation one pixel off (a U-Net's skip connection, not the labels), CTC labels longer
  than the output, a fixed-size TensorArray, weights of another class count;
- conda's UnsatisfiableError list after its "Specifications:" heading, an illegal instruction on
  an ARM board (no AVX there);
- a Python exception under "Graph execution error:" (the op's own message), full integer
  quantization without a representative dataset, an optimizer of the other Keras API, TF
  Serving's JSON "error" answer (a conv input without its batch axis);
- Python iterating a symbolic tensor, a Lambda layer blocked by Keras's safe_mode.
The benign logs (``B``) of the same families must each read "nothing wrong".
"""

from __future__ import annotations

import re
import time

import pytest
from explain_reading import first_cause
from stop43_variants import B, V

from tfperf.doctor.explainer import explain_log

EXPECTED = {
    "unimpl_cast": "unimplemented-error", "perm_denied_save": "permission-denied-error",
    "unavailable_grpc": "unavailable-error", "deadline_tpu": "deadline-exceeded-error",
    "cancelled_recv": "invalid-argument-error", "tfio_so": "tf-addon-version-mismatch",
    "tfa_unsupported": "tf-addon-version-mismatch", "tftext_symbol": "tf-addon-version-mismatch",
    "tfagents_tfp": "import-error", "tfp_tf": "tf-addon-version-mismatch",
    "metal_symbol": "tf-addon-version-mismatch", "directml_assign": "op-no-device-kernel",
    "win_dll_init": "cpu-missing-instructions", "mac_arch": "import-error",
    "arm_static_tls": "static-tls-exhausted", "keras3_format": "keras3-savedmodel-unsupported",
    "keras3_hub_layer": "keras-flavours-mixed", "keras3_kerastensor": "keras-tf-version-mismatch",
    "xla_unsupported": "xla-compile-failed", "tpu_local_file": "unimplemented-error",
    "tpu_hbm_oom": "out-of-memory", "savedmodel_capture": "value-error",
    "tflite_notflex": "tflite-ops-unsupported", "tflite_prepare": "runtime-error",
    "collective_shape": "collective-mismatch", "ckpt_checksum": "data-loss-error",
    "aborted_onednn": "aborted-error", "already_exists_metric": "already-exists-error",
    "strategy_slot": "value-error", "win_cudart_dll": "gpu-not-visible",
    "unimpl_dnn_fused": "dnn-library-not-found", "internal_blas": "cublas-failed",
    "oor_first_step": "value-error", "failed_precondition_table": "failed-precondition-error",
    "tfdf_aarch64": "not-found-error",
    # the second probe
    "win_pywrap_tfe_proc": "windows-dll-load-failed", "keras3_deserialize": "keras-unknown-object",
    "keras3_time_major": "keras-tf-version-mismatch", "tpu_string": "invalid-argument-error",
    "xla_compile_const": "xla-compile-failed",
    "collective_startup": "collective-ops-configured-late",
    "tflite_open": "value-error", "metal_addn": "op-no-device-kernel",
    "dml_device": "internal-error", "jit_failed": "warning:ptxas-problem",
    "batch_diff_shapes": "batch-different-shapes", "dst_not_init": "out-of-memory",
    "oor_first": "dataset-ended-early", "tfrecord_corrupt": "corrupted-record",
    "illegal_addr_custom": "cuda-illegal-address",
    "grad_not_exist_old": "warning:gradients-missing",
    "glibc_old": "glibc-too-old", "avx_win": "cpu-missing-instructions",
    "protobuf_dml": "protobuf-incompatible",
    # the third probe
    "xla_oom": "out-of-memory", "no_binary_for_gpu": "libdevice-not-found",
    "einsum_int_gpu": "not-found-error", "no_space": "disk-full",
    "hub_cache_stale": "tfhub-cache-incomplete", "horovod_nccl": "nccl-error",
    "serving_path": "tf-serving-model-path", "tfjs_unsupported": "tfjs-unsupported-ops",
    "win_longpath": "windows-long-paths", "win_illegal_exit": "cpu-missing-instructions",
    "ragged_batch": "batch-different-shapes", "mac_illegal4": "cpu-missing-instructions",
    "sparse_label_range": "label-out-of-range", "reverb_so": "import-error",
    "tfq_cirq": "tf-addon-version-mismatch",
    # the fourth probe
    "adam_get_updates": "keras-optimizer-api-changed", "pad_sequences": "keras-tf-version-mismatch",
    "np_object": "numpy-too-new-for-tf", "np_typedict": "numpy-too-new-for-tf",
    "str_decode": "attribute-error", "layer_count": "checkpoint-mismatch",
    "module_wrapper": "not-implemented-error", "internal_dispatch": "keras-tf-version-mismatch",
    "tf_estimator_missing": "module-not-found-error",
    "keras_src_engine": "keras-tf-version-mismatch",
    "tfhub_keraslayer_sym": "value-error", "optimizer_lr_kw": "keras-optimizer-api-changed",
    "np_typedict_tf": "numpy-too-new-for-tf",
    # the fifth probe
    "concat_dims": "invalid-argument-error", "matmul_incompat": "invalid-argument-error",
    "reshape_size": "invalid-argument-error", "decode_jpeg_png": "image-decode-failed",
    "nan_check": "loss-nan", "gather_oob_gpu": "embedding-index-out-of-range",
    "dtype_mismatch_add": "invalid-argument-error", "assign_shape_load": "value-error",
    "ctc_invalid": "invalid-argument-error", "strided_oob": "invalid-argument-error",
    "resource_var_missing": "failed-precondition-error",
    "tensorarray_size": "invalid-argument-error",
    # the sixth probe
    "numpy2_wheel": "numpy-abi-mismatch", "pip_tf115_py38": "no-tensorflow-wheel",
    "pip_py313": "no-tensorflow-wheel", "conda_unsat": "unsatisfiable-error",
    "pi_illegal": "cpu-missing-instructions", "alpine_musl": "no-tensorflow-wheel",
    "tf_io_gcs_plugin": "tf-addon-version-mismatch", "six_moves": "module-not-found-error",
    # the seventh probe
    "cudnn_cnn_infer": "library-load-error", "cannot_dlopen": "cuda-library-missing",
    "cudnn_loaded_vs_compiled": "cudnn-version-mismatch", "driver_insufficient": "driver-too-old",
    "eager_oom": "out-of-memory", "ptxas_sm89": "ptxas-problem",
    "no_cuda_drivers": "notice:cuda-runtime-not-found", "gpu_sync_failed": "cuda-error",
    "xid_79": "gpu-device-lost", "mixed_cuda12_pip": "notice:cuda-library-missing",
    # the eighth probe
    "quant_repr": "value-error", "saved_model_tag": "runtime-error",
    "serving_rest_sig": "serving-signature-mismatch",
    "serving_rest_shape": "invalid-argument-error",
    "mixed_prec_dtype": "type-error", "loss_scale_opt": "value-error",
    "tfrecord_feature_type": "invalid-argument-error",
    "from_generator_sig": "invalid-argument-error",
    "py_function_graph": "attribute-error",
    # the ninth probe
    "opnotallowed_bool": "tensor-used-as-bool",
    "var_in_tf_function": "tf-function-variable-creation",
    "iter_tensor": "type-error", "h5_group_missing": "model-file-not-hdf5",
    "keras_save_format": "keras3-save-path-extension", "ckpt_prefix": "checkpoint-not-found",
    "unknown_layer_custom": "keras-unknown-object", "lambda_unsafe": "value-error",
}


def test_every_variant_has_an_expected_label() -> None:
    assert set(EXPECTED) == set(V)


@pytest.mark.parametrize("name", sorted(V))
def test_each_variant_gets_its_label(name: str) -> None:
    severity, _, label = EXPECTED[name].rpartition(":")
    ex = explain_log(V[name])
    # a notice (a library a CPU-only machine also lacks) is no verdict of failure
    assert ex.verdict in (("nothing-wrong",) if severity == "notice" else ("failure", "warning"))
    assert ex.causes[0].severity == (severity or "failure") and ex.causes[0].label == label


@pytest.mark.parametrize("name", sorted(B))
def test_each_benign_twin_reads_nothing_wrong(name: str) -> None:
    ex = explain_log(B[name])
    assert ex.verdict == "nothing-wrong" and not ex.causes, (ex.verdict, ex.causes[:1])


def _lead(text: str) -> str:
    return first_cause(text)[1]


# --- Keras's filtered traceback ------------------------------------------------------------------

def test_an_error_under_the_users_fit_call_after_tf_lines_is_keras_s() -> None:
    lead = _lead(V["oor_first_step"])
    assert "training data is empty" in lead and "filter" in lead


_SKLEARN = ("2024-05-05 05:05:05.000000: I tensorflow/core/platform/cpu_feature_guard.cc:182] "
            "This TensorFlow binary is optimized to use available CPU instructions.\n"
            "Traceback (most recent call last):\n"
            '  File "/work/stack.py", line 31, in <module>\n'
            "    meta.fit(features, y)\n"
            '  File "/work/.venv/lib/python3.10/site-packages/sklearn/linear_model/_logistic.py", '
            "line 1196, in fit\n"
            "    X, y = self._validate_data(\n"
            "ValueError: Input X contains NaN.\n")


def test_scikit_learn_s_fit_with_its_own_frames_stays_apart() -> None:
    ex = explain_log(_SKLEARN)
    assert not ex.causes or ex.causes[0].label != "value-error"
    assert any("Input X contains NaN" in ln.text for ln in ex.not_tensorflow)


def test_scikit_learn_s_fit_in_ipython_8_s_frames_stays_apart() -> None:
    text = ("2024-05-05 05:05:05.000000: I tensorflow/core/platform/cpu_feature_guard.cc:182] "
            "This TensorFlow binary is optimized to use available CPU instructions.\n"
            "Traceback (most recent call last):\n"
            "Cell In[7], line 2\n"
            "      1 meta = LogisticRegression()\n"
            "----> 2 meta.fit(features, y)\n"
            "File ~/.venv/lib/python3.10/site-packages/sklearn/linear_model/_logistic.py:1196, "
            "in LogisticRegression.fit(self, X, y)\n"
            "   1196 X, y = self._validate_data(\n"
            "ValueError: Input X contains NaN.\n")
    ex = explain_log(text)
    assert not ex.causes or ex.causes[0].label != "value-error"


def test_a_user_line_that_calls_no_keras_method_stays_apart() -> None:
    text = V["oor_first_step"].replace("model.fit(ds.filter(lambda x, y: y > 5), epochs=20)",
                                       "rows = load_rows(path)")
    ex = explain_log(text)
    assert not ex.causes or ex.causes[0].label != "value-error"


# --- a package's own version check ---------------------------------------------------------------

def test_a_version_check_names_what_it_needs_and_found() -> None:
    lead = _lead(V["tfagents_tfp"])
    assert "TensorFlow Probability >= 0.22.0 and found 0.19.0" in lead
    assert "tensorflow-probability" in lead


def test_tfp_s_tensorflow_check_keeps_its_row_and_install_line() -> None:
    cause, _ = first_cause(V["tfp_tf"])
    assert cause.label == "tf-addon-version-mismatch" and cause.confidence == "high"
    assert "2.16" in cause.install


# --- architecture, TFLite's rank check, oneDNN, tables, captures ---------------------------------

def test_an_incompatible_architecture_reads_as_python_and_wheel_apart() -> None:
    assert "different CPU architectures" in _lead(V["mac_arch"])


def test_another_import_error_gets_no_architecture_reading() -> None:
    text = ("Traceback (most recent call last):\n  File \"/Users/pat/t.py\", line 1, in <module>\n"
            "    from tensorflow.keras.layers.experimental import preprocessing\n"
            "ImportError: cannot import name 'preprocessing' from 'tensorflow.keras.layers."
            "experimental' (/Users/pat/venv/lib/python3.9/site-packages/tensorflow/keras/layers/"
            "experimental/__init__.py)\n")
    assert "architecture" not in _lead(text)


def test_tflite_s_rank_check_reads_as_a_missing_batch_axis() -> None:
    lead = _lead(V["tflite_prepare"])
    assert "np.expand_dims" in lead and "number of axes" in lead


def test_another_tflite_prepare_failure_gets_the_general_reading() -> None:
    text = V["tflite_prepare"].replace(
        "conv.cc:351 input->dims->size != 4 (3 != 4)Node number 0 (CONV_2D)",
        "reshape.cc:85 num_input_elements != num_output_elements (1200 != 1296)Node number 3 "
        "(RESHAPE)")
    lead = _lead(text)
    assert "np.expand_dims" not in lead and "get_input_details" in lead


def test_an_aborted_onednn_kernel_is_not_a_distributed_peer() -> None:
    lead = _lead(V["aborted_onednn"])
    assert "TF_ENABLE_ONEDNN_OPTS=0" in lead and "worker" not in lead


def test_an_aborted_collective_keeps_the_peer_reading() -> None:
    text = ("Traceback (most recent call last):\n  File \"mw.py\", line 70, in <module>\n"
            "    model.fit(ds, epochs=3)\ntensorflow.python.framework.errors_impl.AbortedError: "
            "Collective ops is aborted by: a worker stopped responding\n")
    lead = _lead(text)
    assert "oneDNN" not in lead


def test_table_not_initialized_reads_as_the_table_initializer() -> None:
    assert "tables_initializer" in _lead(V["failed_precondition_table"])


def test_an_uninitialized_variable_keeps_the_variable_reading() -> None:
    text = V["failed_precondition_table"].replace(
        "Table not initialized.", "Attempting to use uninitialized value dense/kernel").replace(
        "hash_table_Lookup/LookupTableFindV2", "dense/MatMul")
    assert "tables_initializer" not in _lead(text)


def test_a_string_tensor_on_a_tpu_is_not_read_as_batch_shapes() -> None:
    lead = _lead(V["tpu_string"])
    assert "string tensor reached the TPU" in lead and "different shapes" not in lead


def test_another_iterator_error_keeps_the_batch_shapes_reading() -> None:
    text = V["tpu_string"].replace("Unsupported data type for TPU: string, caused by output "
                                   "IteratorGetNext:1", "Bad value in IteratorGetNext:1")
    assert "different shapes" in _lead(text)


def test_directml_that_cannot_create_its_device_is_not_read_as_cuda() -> None:
    lead = _lead(V["dml_device"])
    assert "DirectML could not create a device" in lead and "CUDA plays no part" in lead


def test_a_cuda_internal_error_keeps_the_gpu_stack_reading() -> None:
    text = V["dml_device"].replace("Could not create DirectML device", "CUDA runtime failed")
    assert "DirectML" not in _lead(text.replace("DirectML", "Cuda"))


def test_a_tflite_file_that_cannot_be_opened_is_a_path_problem() -> None:
    assert "os.path.abspath" in _lead(V["tflite_open"])


def test_numpy_s_removed_typedict_reads_as_numpy_too_new() -> None:
    # it read "not recognised" when h5py alone raised it
    cause, _ = first_cause(V["np_typedict"])
    assert cause.label == "numpy-too-new-for-tf" and "numpy<1.24" in cause.fix


def test_another_missing_numpy_attribute_is_not_numpy_too_new() -> None:
    text = V["np_typedict_tf"].replace("typeDict", "random_sample")
    assert first_cause(text)[0].label != "numpy-too-new-for-tf"


def test_a_keras_3_symbolic_tensor_in_a_tf_keras_2_layer_names_tf_keras() -> None:
    lead = _lead(V["tfhub_keraslayer_sym"])
    assert "TF_USE_LEGACY_KERAS=1" in lead and "hub.KerasLayer" in lead


def test_a_concat_off_by_one_reads_as_a_skip_connection_not_labels() -> None:
    lead = _lead(V["concat_dims"])
    assert "skip connection" in lead and "labels" not in lead


def test_another_concat_error_gets_no_skip_connection_reading() -> None:
    text = V["concat_dims"].replace(
        "ConcatOp : Dimension 1 in both shapes must be equal: shape[0] = [8,64,37,37] vs. "
        "shape[1] = [8,64,38,38]", "ConcatOp : Expected concatenating dimensions in the range "
        "[-4, 4), but got 4")
    assert "skip connection" not in _lead(text)


def test_ctc_labels_longer_than_the_output_read_as_time_downsampling() -> None:
    assert "ignore_longer_outputs_than_inputs=True" in _lead(V["ctc_invalid"])


def test_a_fixed_size_tensor_array_reads_as_dynamic_size() -> None:
    assert "dynamic_size=True" in _lead(V["tensorarray_size"])


def test_weights_of_another_class_count_read_as_skip_mismatch() -> None:
    assert "skip_mismatch=True" in _lead(V["assign_shape_load"])


def test_conda_s_unsatisfiable_list_after_its_heading_is_read() -> None:
    # "...environment:", a blank line, "Specifications:", a blank line, "  - tensorflow-gpu=2.4"
    # read "not recognised": the message block stopped at the first blank line
    cause, lead = first_cause(V["conda_unsat"])
    assert cause.label == "unsatisfiable-error" and "another Python" in lead


def test_an_illegal_instruction_on_an_arm_board_is_no_avx_reading() -> None:
    cause, _ = first_cause(V["pi_illegal"])
    assert cause.cause.startswith("This is an ARM machine (the log shows 'raspberrypi')")


def test_an_illegal_instruction_on_x86_linux_keeps_the_avx_reading() -> None:
    cause, _ = first_cause("user@box:~$ python3 -c 'import tensorflow'\nIllegal instruction "
                           "(core dumped)\n")
    assert cause.label == "cpu-missing-instructions" and "ARM machine" not in cause.cause


def test_an_avx_message_keeps_the_avx_reading_beside_an_arm_word_elsewhere() -> None:
    # the cause's own line names AVX, an x86 instruction set: 'aarch64' elsewhere (another
    # machine in the paste) does not make this one ARM
    text = ("docker pull --platform linux/aarch64 img  # the other machine\n"
            "2020-01-01 00:00:00.000000: F tensorflow/core/platform/cpu_feature_guard.cc:37] The "
            "TensorFlow library was compiled to use AVX instructions, but these aren't available "
            "on your machine.\nAborted (core dumped)\n")
    cause, _ = first_cause(text)
    assert cause.label == "cpu-missing-instructions" and "ARM machine" not in cause.cause


def test_a_python_exception_under_graph_execution_error_is_the_op_s_message() -> None:
    # TF 2.9+: "Graph execution error:", a blank line, then the generator's own TypeError
    assert "from_generator" in _lead(V["from_generator_sig"])


def test_full_integer_quantization_without_samples_names_representative_dataset() -> None:
    assert "converter.representative_dataset" in _lead(V["quant_repr"])


def test_a_legacy_optimizer_given_to_the_new_api_names_its_generation() -> None:
    assert "tf.keras.optimizers.AdamW" in _lead(V["loss_scale_opt"])


def test_tf_serving_s_json_error_is_read_with_its_batch_axis() -> None:
    # it read "not recognised": a JSON answer's "error" line was no error form
    assert "batch axis" in _lead(V["serving_rest_shape"])


def test_another_service_s_json_error_is_not_read_as_tensorflow_s() -> None:
    ex = explain_log('$ curl https://api.example.com/v1/items\n{\n    "error": "rate limit '
                     'exceeded, retry later"\n}\n')
    assert ex.verdict != "failure"


def test_iterating_a_symbolic_tensor_names_tf_map_fn() -> None:
    assert "tf.map_fn" in _lead(V["iter_tensor"])


def test_a_lambda_layer_blocked_by_safe_mode_names_safe_mode() -> None:
    assert "safe_mode=False" in _lead(V["lambda_unsafe"])


def test_a_saved_function_capturing_a_graph_tensor_is_read() -> None:
    assert "captures a symbolic tensor of another graph" in _lead(V["savedmodel_capture"])


# --- an add-on's own op library at its own path --------------------------------------------------

_OWN_SO = ("tensorflow.python.framework.errors_impl.NotFoundError: /srv/env/lib/python3.10/"
           "site-packages/tensorflow_text/python/ops/_regex_split_ops.so: cannot open shared "
           "object file: No such file or directory\n")


def test_an_add_on_s_own_library_missing_at_its_path_names_the_architecture() -> None:
    lead = _lead(_OWN_SO)
    assert "tensorflow_text" in lead and "aarch64" in lead


def test_a_dependency_named_by_the_loader_gets_no_architecture_reading() -> None:
    text = ("tensorflow.python.framework.errors_impl.NotFoundError: libtensorflow_framework.so.2:"
            " cannot open shared object file: No such file or directory\n")
    assert "aarch64" not in _lead(text)


# --- a Windows CUDA runtime DLL ------------------------------------------------------------------

def test_a_cudart64_dll_is_not_read_as_windows_tf_2_11() -> None:
    cause, _ = first_cause(V["win_cudart_dll"])
    assert "TensorFlow 2.11 and later" not in cause.cause.split(" Otherwise: ")[0]


def test_a_windows_path_without_a_cuda_dll_keeps_the_tf_2_11_reading() -> None:
    text = ('Traceback (most recent call last):\n  File "C:\\Users\\kim\\gpu.py", line 3\n'
            "Num GPUs: 0\n")
    cause, _ = first_cause(text)
    assert cause.label == "gpu-not-visible"
    assert cause.cause.startswith("TensorFlow 2.11 and later")


# --- the custom-op row on a long token (review 42: 2.3 s at 8,000 characters) ------------------

def _fastest_search(rx: re.Pattern[str], text: str, tries: int) -> float:
    """The best of ``tries`` timings of one search (growth tests compare two from one run)."""
    best = float("inf")
    for _ in range(tries):
        t0 = time.perf_counter()
        rx.search(text)
        best = min(best, time.perf_counter() - t0)
    return best


def test_the_custom_op_symbol_pattern_is_linear_in_a_long_symbol() -> None:
    # an optional directory run tried from every position inside the symbol was quadratic
    from tfperf.doctor.knowledge import error_patterns

    rx = next(p.regex for p in error_patterns() if p.id == "custom-op-undefined-symbol")

    def line(n: int) -> str:
        return "/x/op.so: undefined symbol: _Z" + "A" * n + "\n"

    small, large = _fastest_search(rx, line(500), 15), _fastest_search(rx, line(8000), 5)
    assert large < 64 * small  # 16x the token: about 16x linear, about 256x quadratic


def test_the_custom_op_pattern_still_reads_a_full_path_and_a_bare_name() -> None:
    from tfperf.doctor.knowledge import error_patterns

    rx = next(p.regex for p in error_patterns() if p.id == "custom-op-undefined-symbol")
    m = rx.search("ImportError: /srv/env/lib/python3.9/site-packages/foo/_ops.so: undefined "
                  "symbol: _ZN10tensorflow8OpKernelD2Ev")
    assert m is not None and m.group("oplib") == "/srv/env/lib/python3.9/site-packages/foo/_ops.so"
    m = rx.search("{/opt/x/libzero_out.so} undefined symbol: _ZN4absl12lts_2023StatusC1Ev")
    assert m is not None and m.group("oplib").endswith("libzero_out.so")


# --- stop 42's leftovers: swapped feeds, the one-hot product ------------------------------------

_FEED = ("ValueError: Cannot feed value of shape (100, 784) for Tensor '{t}', which has shape "
         "'(?, 10)'\n")


def test_a_feature_matrix_fed_to_a_labels_placeholder_reads_as_swapped_feeds() -> None:
    from tfperf.doctor.explain_evidence import fed_shape_mismatch

    for name in ("y_:0", "labels:0", "input_y:0", "scope/targets:0"):
        got = fed_shape_mismatch(_FEED.format(t=name))
        assert got is not None and "labels placeholder" in got[0] and "swapped" in got[0], name


def test_an_input_placeholder_keeps_the_feature_width_reading() -> None:
    from tfperf.doctor.explain_evidence import fed_shape_mismatch

    for name in ("x:0", "Placeholder:0", "input_x:0", "yy:0"):
        got = fed_shape_mismatch(_FEED.format(t=name))
        assert got is not None and "model's input" in got[0], name


_ONEHOT = ("InvalidArgumentError: logits and labels must have the same first dimension, got "
           "logits shape [32,10] and labels shape [320]\n")


def test_the_one_hot_product_names_the_sequence_reading_beside_a_recurrent_model() -> None:
    from tfperf.doctor.explain_numbers import onehot_to_sparse

    got = onehot_to_sparse('  File "m.py", line 3, in <module>\n    x = LSTM(64)(emb)\n' + _ONEHOT)
    assert got is not None and "one-hot" in got[0] and "return_sequences=True" in got[0]


def test_the_one_hot_product_alone_reads_one_hot_only() -> None:
    from tfperf.doctor.explain_numbers import onehot_to_sparse

    got = onehot_to_sparse(_ONEHOT)
    assert got is not None and "one-hot" in got[0] and "return_sequences" not in got[0]
