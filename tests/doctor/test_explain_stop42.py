"""Stop 42: round 26's remaining misses (split ``rounds41b``), each read by a general mechanism
and tested on wordings of our own, with a VALID twin that must not get the new answer:

- a spatial grid that differs in two shapes otherwise equal: images at another size than the
  model's (``grid_size_mismatch``);
- a loss node's weighting multiply given a loss of another length than the batch: a custom loss
  reducing over axis 0 (``loss_over_batch``);
- a sparse-to-dense index past the dense size in a non-leading axis: sequences longer than the
  configured maximum length (``dense_length_exceeded``);
- a placeholder whose batch axis fits and whose feature width does not (``fed_shape_mismatch``),
  also when the message wraps before "which";
- a GPU of compute capability below 3.0 leads every GPU failure (``gpu_older_than_builds``);
- an add-on's own .so in site-packages with an undefined symbol names the add-on
  (``cause_evidence.csv``);
- channels-first on the CPU names the GPU libraries that did not load (``error_class_causes``).
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

from tfperf.doctor.explainer import explain_log

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from score_explain import first_explanation  # noqa: E402


def _first(text: str) -> str:
    ex = explain_log(text)
    assert ex.causes, text
    return first_explanation(ex.causes[0])


# --- the spatial grid ------------------------------------------------------------------------

_GRID = ("tensorflow.python.framework.errors_impl.InvalidArgumentError: Incompatible shapes: "
         "[4,19,19,3,85] vs. [4,26,26,3,85] [Op:Sub] name: loss/sub/\n")


def test_square_grids_that_differ_read_as_the_image_size() -> None:
    text = _first(_GRID)
    assert "input size" in text and "19x19 against 26x26" in text
    assert "832" in text and "608" in text  # 26 and 19 cells at a stride of 32


def test_a_batch_or_channel_difference_is_no_grid() -> None:
    for shapes in ("[4,19,19,3,85] vs. [8,19,19,3,85]", "[4,19,19,3,85] vs. [4,19,19,3,6]",
                   "[4,19,20,3,85] vs. [4,26,26,3,85]", "[4,13,13,3] vs. [4,12,12,3]"):
        line = ("tensorflow.python.framework.errors_impl.InvalidArgumentError: Incompatible "
                f"shapes: {shapes} [Op:Sub] name: loss/sub/\n")
        assert "spatial grid" not in _first(line), shapes


# --- a loss reduced over the batch ------------------------------------------------------------

_LOSS = ("InvalidArgumentError (see above for traceback): Incompatible shapes: [10] vs. [64]\n"
         "\t [[Node: training/SGD/gradients/loss/out_loss/mul_grad/BroadcastGradientArgs = "
         "BroadcastGradientArgs[T=DT_INT32, _device=\"/job:localhost/replica:0/task:0/device:"
         "CPU:0\"](training/SGD/gradients/loss/out_loss/mul_grad/Shape, training/SGD/gradients/"
         "loss/out_loss/mul_grad/Shape_1)]]\n")


def test_a_loss_of_another_length_than_the_batch_reads_as_axis_0() -> None:
    text = _first(_LOSS)
    assert "axis=-1" in text and "10 values" in text and "(64)" in text


def test_rank_one_shapes_outside_a_loss_keep_the_general_reading() -> None:
    twin = _LOSS.replace("loss/out_loss/mul", "model/dense/add")
    assert "axis=-1" not in _first(twin)
    eager = ("tensorflow.python.framework.errors_impl.InvalidArgumentError: Incompatible "
             "shapes: [10] vs. [64] [Op:AddV2]\n")
    assert "axis=-1" not in _first(eager)


# --- sequences longer than the dense shape ---------------------------------------------------

_DENSE = ("2020-01-02 10:00:00.000001: W tensorflow/core/framework/op_kernel.cc:1273] "
          "OP_REQUIRES failed at sparse_to_dense_op.cc:128 : Invalid argument: indices[7] = "
          "[3,50] is out of bounds: need 0 <= index < [128,50]\n")


def test_an_index_past_a_trailing_axis_reads_as_a_maximum_length() -> None:
    text = _first(_DENSE)
    assert "maximum length" in text and "position 50 of axis 1" in text


def test_an_index_past_the_leading_axis_keeps_the_general_reading() -> None:
    twin = _DENSE.replace("[3,50] is out of bounds: need 0 <= index < [128,50]",
                          "[130,4] is out of bounds: need 0 <= index < [128,50]")
    assert "maximum length" not in _first(twin)


# --- a feature width fed to a placeholder ------------------------------------------------------

def test_a_feature_width_that_differs_is_named_also_when_wrapped() -> None:
    for sep in (", ", ",\n", " \n"):
        line = (f"ValueError: Cannot feed value of shape (17, 40) for Tensor 'inputs/x:0'{sep}"
                "which has shape '(?, 32)'\n")
        text = _first(line)
        assert "feature width" in text and "40 features" in text, sep


def test_a_fixed_batch_that_differs_keeps_the_batch_reading() -> None:
    line = ("ValueError: Cannot feed value of shape (1, 32) for Tensor 'inputs/x:0', which has "
            "shape '(8, 32)'\n")
    text = _first(line)
    assert "fixed batch of 8" in text and "feature width" not in text


# --- a GPU too old for any build ------------------------------------------------------------------

_OLD_GPU = ("2021-01-01 10:00:00.000001: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1555] "
            "Found device 0 with properties:\npciBusID: 0000:02:00.0 name: GeForce GTX 480 "
            "computeCapability: 2.0\n"
            "2021-01-01 10:00:00.000002: W tensorflow/stream_executor/platform/default/"
            "dso_loader.cc:60] Could not load dynamic library 'libcudnn.so.8'; dlerror: "
            "libcudnn.so.8: cannot open shared object file: No such file or directory\n")


def test_a_compute_capability_below_3_leads_the_gpu_failure() -> None:
    text = _first(_OLD_GPU + "Num GPUs Available: 0\n")
    assert "compute capability 2.0, too old" in text


def test_a_supported_gpu_keeps_the_library_reading() -> None:
    twin = _OLD_GPU.replace("GeForce GTX 480 computeCapability: 2.0",
                            "GeForce GTX 1080 computeCapability: 6.1")
    assert "too old" not in _first(twin + "Num GPUs Available: 0\n")


# --- an add-on's own library ------------------------------------------------------------------

_ADDON = ("ImportError: /opt/venv/lib/python3.9/site-packages/fancy_ops/_lib.so: undefined "
          "symbol: _ZN4absl12lts_2021032410StrReplaceEv\n")


def test_an_add_ons_library_is_named_with_its_release_advice() -> None:
    text = _first(_ADDON)
    assert "fancy_ops" in text and "release built for the installed TensorFlow" in text


def test_tensorflows_own_or_a_users_library_is_not_an_add_on() -> None:
    for path in ("/opt/venv/lib/python3.9/site-packages/tensorflow/python/_pywrap.so",
                 "/home/me/ops/zero_out.so"):
        text = explain_log(_ADDON.replace("/opt/venv/lib/python3.9/site-packages/fancy_ops/"
                                          "_lib.so", path))
        assert all("add-on fancy_ops" not in c.cause and "release built for the installed"
                   not in c.fix.split(" Otherwise: ")[0] for c in text.causes), path


# --- channels-first on the CPU ----------------------------------------------------------------

def test_channels_first_on_the_cpu_names_the_gpu_fallback() -> None:
    line = ("tensorflow.python.framework.errors_impl.UnimplementedError: The Conv2D op currently "
            "only supports the NHWC tensor format on the CPU. The op was given the format: NCHW\n")
    text = _first(line)
    assert "GPU libraries did not load" in text and "channels_last" in text


# --- stop 42's long tail (split dev42): mechanisms and rows, on our own wordings --------------

def test_one_hot_labels_for_a_sparse_loss_read_from_the_counts() -> None:
    keras = ("ValueError: Shape mismatch: The shape of labels (received (96,)) should equal the "
             "shape of logits except for the last dimension (received (16, 6)).\n")
    assert "one-hot" in _first(keras) and "96 = 16 x 6" in _first(keras)
    kernel = ("tensorflow.python.framework.errors_impl.InvalidArgumentError: logits and labels "
              "must have the same first dimension, got logits shape [16,6] and labels shape "
              "[96]\n")
    assert "one-hot" in _first(kernel)


def test_a_label_count_that_is_no_product_keeps_the_general_reading() -> None:
    twin = ("ValueError: Shape mismatch: The shape of labels (received (32,)) should equal the "
            "shape of logits except for the last dimension (received (16, 6)).\n")
    assert "one-hot" not in _first(twin)


_SIG = ("ValueError: Could not find matching function to call loaded from the SavedModel. Got:\n"
        "  Positional arguments (1 total):\n"
        "    * Tensor(\"x:0\", shape=(8, 64, 64, 1), dtype={got})\n"
        "  Keyword arguments: {{}}\n\n"
        "Expected these arguments to match one of the following 1 option(s):\n\n"
        "Option 1:\n"
        "  Positional arguments (1 total):\n"
        "    * {open}TensorSpec(shape=({want}), dtype=tf.float32, name='x'){close}\n"
        "  Keyword arguments: {{}}\n")


def test_a_saved_signature_names_the_dtype_shape_or_list_that_differs() -> None:
    dtype = _first(_SIG.format(got="float64", want="None, 64, 64, 1", open="", close=""))
    assert "dtype float64 where the saved function takes float32" in dtype
    shape = _first(_SIG.format(got="float32", want="None, 128, 128, 1", open="", close=""))
    assert "shape (8, 64, 64, 1)" in shape and "dtype" not in shape.split("Call it")[0]
    nested = _first(_SIG.format(got="float32", want="None, 64, 64, 1", open="[", close="]"))
    assert "a list of tensors" in nested


def test_a_call_that_fits_the_first_signature_gets_no_signature_reading() -> None:
    fits = _first(_SIG.format(got="float32", want="None, 64, 64, 1", open="", close=""))
    assert "traced (saved) only for other arguments" not in fits


def test_tensor_lists_a_converter_cannot_lower_are_their_own_cause() -> None:
    line = ("error: 'tf.TensorListSetItem' op requires element_shape to be static during TF "
            "Lite transformation pass\n")
    ex = explain_log(line)
    assert ex.causes[0].label == "tflite-tensor-list-ops"
    assert "_experimental_lower_tensor_list_ops = False" in ex.causes[0].fix


def test_a_flex_op_list_naming_tensor_lists_keeps_the_select_ops_cause() -> None:
    line = ("error: 'tf.TensorListReserve' op is neither a custom op nor a flex op\n")
    assert explain_log(line).causes[0].label == "tflite-ops-unsupported"


def test_a_thread_that_cannot_be_created_is_the_process_limit() -> None:
    for text in ("terminate called after throwing an instance of 'std::system_error'\n"
                 "  what():  Resource temporarily unavailable\nAborted (core dumped)\n",
                 "2021-01-01 00:00:00.000000: F tensorflow/core/platform/default/env.cc:74] "
                 "Check failed: ret == 0 (11 vs. 0)Thread tf_Compute creation via "
                 "pthread_create() failed.\n"):
        cause = explain_log(text).causes[0]
        assert cause.label == "thread-limit" and "ulimit -u" in cause.fix, text


def test_other_aborts_and_eagain_are_not_the_thread_limit() -> None:
    for text in ("terminate called after throwing an instance of 'std::bad_alloc'\n"
                 "  what():  std::bad_alloc\nAborted (core dumped)\n",
                 "BlockingIOError: [Errno 11] Resource temporarily unavailable\n"):
        ex = explain_log(text)
        assert all(c.label != "thread-limit" for c in ex.causes), text


def test_a_history_key_fit_did_not_log_is_named() -> None:
    text = ("  File \"plot.py\", line 9, in <module>\n"
            "    plt.plot(h.history['val_accuracy'])\nKeyError: 'val_accuracy'\n")
    cause = explain_log(text).causes[0]
    assert cause.label == "history-metric-missing" and "validation" in cause.fix


def test_another_key_error_is_no_history_key() -> None:
    for line in ("KeyError: 'label'\n", "KeyError: 'val_loss_weights' in config\n"):
        assert all(c.label != "history-metric-missing" for c in explain_log(line).causes)


def test_a_windows_crash_status_is_never_nothing_wrong() -> None:
    for code in ("-1073740791 (0xC0000409)", "-1073741819 (0xC0000005)"):
        ex = explain_log(f"Process finished with exit code {code}\n")
        assert ex.verdict != "nothing-wrong", code


def test_a_clean_exit_stays_nothing_wrong() -> None:
    ex = explain_log("Epoch 1/1\n10/10 [==============================] - 1s 5ms/step - loss: "
                     "0.2\nProcess finished with exit code 0\n")
    assert ex.verdict == "nothing-wrong"


# --- speed: the whole-log error search of judge_finished only where a cause could be demoted ----

class _Counting:
    def __init__(self, rx: object) -> None:
        self.rx, self.calls = rx, 0

    def search(self, text: str) -> object:
        self.calls += 1
        return self.rx.search(text)  # type: ignore[attr-defined]


def _console(n: int) -> str:
    return "".join(f"{i}/{n} [==============================] - 0s 2ms/step - loss: 0.{i % 9}\n"
                   for i in range(1, n))


def test_a_failure_that_is_no_warning_never_searches_the_whole_log(monkeypatch) -> None:
    import tfperf.doctor.explain_finished as F

    counting = _Counting(F._HARD)
    monkeypatch.setattr(F, "_HARD", counting)
    oom = ("tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating "
           "tensor with shape[64,256,56,56] and type float on /job:localhost/replica:0/task:0/"
           "device:GPU:0 by allocator GPU_0_bfc\n")
    explain_log(_console(3000) + oom)
    assert counting.calls == 0


def test_a_warning_shaped_failure_still_asks_whether_the_log_holds_an_error(monkeypatch) -> None:
    import tfperf.doctor.explain_finished as F

    counting = _Counting(F._HARD)
    monkeypatch.setattr(F, "_HARD", counting)
    soft = ("2020-01-01 00:00:00.000000: W tensorflow/core/common_runtime/bfc_allocator.cc:246] "
            "Allocator (GPU_0_bfc) ran out of memory trying to allocate 2.20GiB with "
            "freed_by_count=0. The caller indicates that this is not a failure, but may mean "
            "that there could be performance gains if more memory were available.\n")
    ex = explain_log(soft + _console(50))
    assert counting.calls >= 1
    assert ex.verdict == "nothing-wrong"  # the run went on: the allocator's retry is no failure


def test_the_ragged_keyword_alone_is_keras_and_tensorflow_s() -> None:
    line = "    TypeError: __init__() got an unexpected keyword argument 'ragged'  \n"
    assert explain_log(line).verdict != "unrecognised" and "newer TensorFlow" in _first(line)


def test_another_unexpected_keyword_is_not_the_ragged_reading() -> None:
    ex = explain_log("TypeError: draw() got an unexpected keyword argument 'dragged'\n")
    assert all("ragged" not in c.cause for c in ex.causes)


def test_tensors_stacked_with_different_shapes_are_named() -> None:
    line = ("tensorflow.python.framework.errors_impl.InvalidArgumentError: Shapes of all inputs "
            "must match: values[0].shape = [8,3] != values[5].shape = [8,1] [Op:Pack] name: "
            "stack\n")
    assert "tf.stack" in _first(line) and "same shape" in _first(line)


def test_a_concat_mismatch_is_not_the_stack_reading() -> None:
    line = ("tensorflow.python.framework.errors_impl.InvalidArgumentError: ConcatOp : "
            "Dimensions of inputs should match: shape[0] = [8,3] vs. shape[1] = [4,3] "
            "[Op:ConcatV2]\n")
    assert "tf.stack" not in _first(line)


def test_zsh_s_lower_case_signal_report_is_a_crash() -> None:
    alone = explain_log("zsh: segmentation fault  python fit.py\n")
    assert alone.verdict != "nothing-wrong"
    at_import = explain_log(">>> import tensorflow as tf\nzsh: bus error  python3\n")
    assert at_import.verdict == "failure" and at_import.causes[0].confidence == "low"


def test_a_shell_line_that_only_mentions_a_fault_is_no_crash() -> None:
    ex = explain_log("Epoch 1/1\n10/10 [==============================] - 1s 5ms/step - loss: "
                     "0.2\necho 'no segfault this time'\n")
    assert ex.verdict == "nothing-wrong"


def test_an_empty_keras_sequence_is_read_as_no_images_found() -> None:
    line = "ValueError: Asked to retrieve element 3, but the Sequence has length 0\n"
    assert explain_log(line).verdict == "failure" and "Found 0 images" in _first(line)


def test_a_sequence_index_past_a_nonzero_length_is_not_the_empty_reading() -> None:
    line = "ValueError: Asked to retrieve element 12, but the Sequence has length 10\n"
    assert "Found 0 images" not in " ".join(c.cause + c.fix for c in explain_log(line).causes)


def test_labels_passed_beside_a_dataset_are_zipped_into_it() -> None:
    line = "ValueError: `y` argument is not supported when using `tf.data.Dataset` as input.\n"
    assert "Dataset.zip" in _first(line)


def test_another_argument_beside_a_dataset_is_not_the_labels_reading() -> None:
    line = "ValueError: `sample_weight` argument is not supported when using dataset as input.\n"
    assert "Dataset.zip" not in " ".join(c.cause + c.fix for c in explain_log(line).causes)


def test_an_old_gpu_beside_a_supported_one_is_not_the_cause() -> None:
    two = _OLD_GPU.replace(
        "computeCapability: 2.0\n",
        "computeCapability: 2.0\npciBusID: 0000:03:00.0 name: GeForce GTX 1080 "
        "computeCapability: 6.1\n")
    assert "too old" not in _first(two + "Num GPUs Available: 0\n")


# --- review 42: near-miss twins the first version read wrongly ---------------------------------

_SIG_TWO = ("ValueError: Could not find matching concrete function to call loaded from the "
            "SavedModel. Got:\n"
            "  Positional arguments (1 total):\n"
            "    * Tensor(\"x:0\", shape=(1, 5), dtype=int32)\n"
            "  Keyword arguments: {'training': True}\n\n"
            "Expected these arguments to match one of the following 2 option(s):\n\n"
            "Option 1:\n"
            "  Positional arguments (1 total):\n"
            "    * TensorSpec(shape=(None, 5), dtype=tf.float32, name='x')\n"
            "  Keyword arguments: {'training': False}\n\n"
            "Option 2:\n"
            "  Positional arguments (1 total):\n"
            "    * TensorSpec(shape=(None, 5), dtype=tf.{dtype}, name='x')\n"
            "  Keyword arguments: {'training': False}\n")


def test_a_call_that_fits_a_later_signature_gets_no_dtype_reading() -> None:
    # option 2 takes the int32 tensor: the keyword differs, not the dtype option 1 names
    fits = _first(_SIG_TWO.replace("{dtype}", "int32"))
    assert "traced (saved) only for other arguments" not in fits
    none_fits = _first(_SIG_TWO.replace("{dtype}", "float16"))
    assert "dtype int32 where the saved function takes float32" in none_fits


def test_a_grid_difference_inside_the_model_is_no_input_size_reading() -> None:
    # a residual or skip add of two stages (a stride bug in the model), no loss in sight
    for text in ("tensorflow.python.framework.errors_impl.InvalidArgumentError: Incompatible "
                 "shapes: [8,28,28,64] vs. [8,14,14,64] [Op:AddV2] name: model/add/\n",
                 "InvalidArgumentError: Incompatible shapes: [2,64,64,32] vs. [2,128,128,32]\n"
                 "\t [[node model/add_3/add (defined at train.py:40) ]]\n"):
        assert "spatial grid" not in _first(text), text
    # the same shapes in a loss's frame keep the reading
    in_loss = ("  File \"train.py\", line 9, in seg_loss\n    return tf.square(y - p)\n" +
               "tensorflow.python.framework.errors_impl.InvalidArgumentError: Incompatible "
               "shapes: [8,28,28,1] vs. [8,14,14,1] [Op:Sub]\n")
    assert "spatial grid" in _first(in_loss)


def test_the_loss_side_is_the_first_shape_whatever_the_numbers() -> None:
    # Keras multiplies score_array * weights: [32] is the loss's length, [20] the batch's
    text = _first(_LOSS.replace("[10] vs. [64]", "[32] vs. [20]"))
    assert "returned 32 values" in text and "per sample (20)" in text


def test_an_id_past_the_dense_width_names_the_vocabulary_too() -> None:
    twin = _DENSE.replace("[3,50] is out of bounds: need 0 <= index < [128,50]",
                          "[0,20000] is out of bounds: need 0 <= index < [32,20000]")
    assert "vocabulary" in _first(twin)


def test_a_what_line_that_goes_on_past_eagain_is_not_the_thread_limit() -> None:
    text = ("terminate called after throwing an instance of 'std::system_error'\n"
            "  what():  Resource temporarily unavailable when opening /dev/nvidia0\n"
            "Aborted (core dumped)\n")
    assert all(c.label != "thread-limit" for c in explain_log(text).causes)
    assert explain_log(text).verdict != "nothing-wrong"  # still a crash, never a clean run


def test_a_val_prefixed_config_key_is_no_history_metric() -> None:
    # 'val_dir' from a config dict is no metric fit logs; a metric's name still is
    for key in ("val_dir", "val_images", "val_split", "val_steps"):
        text = f"    d = cfg['{key}']\nKeyError: '{key}'\n"
        assert all(c.label != "history-metric-missing" for c in explain_log(text).causes), key
    for key in ("val_loss", "val_binary_accuracy", "val_f1_m", "val_mean_io_u"):
        text = f"    plt.plot(h.history['{key}'])\nKeyError: '{key}'\n"
        assert explain_log(text).causes[0].label == "history-metric-missing", key


def _fastest_search(rx: re.Pattern[str], text: str, tries: int) -> float:
    """The best of ``tries`` timings of one search: growth tests compare two of them from one
    run (16x the text: about 16x linear, about 256x quadratic), never an absolute time."""
    best = float("inf")
    for _ in range(tries):
        t0 = time.perf_counter()
        rx.search(text)
        best = min(best, time.perf_counter() - t0)
    return best


def test_the_history_key_pattern_is_linear_in_a_long_key() -> None:
    # a lazy metric-word search followed by \w* was quadratic ('val_' + 'loss' * 16000: 6 s)
    from tfperf.doctor.knowledge import error_patterns

    rx = next(p.regex for p in error_patterns() if p.id == "history-metric-missing")

    def key(n: int) -> str:
        return "KeyError: 'val_" + "loss" * n + "x\n"

    small, large = _fastest_search(rx, key(500), 15), _fastest_search(rx, key(8000), 5)
    assert large < 64 * small  # 16x the text: about 16x linear, about 256x quadratic


def test_the_fed_shape_pattern_is_linear_in_a_run_of_blanks() -> None:
    # two blank runs around an optional line break were quadratic (32,000 blanks: about 1 s)
    from tfperf.doctor.explain_evidence import _FED

    def fed(n: int) -> str:
        return "Cannot feed value of shape (1, 2) for Tensor 'x', " + " " * n + "whic\n"

    small, large = _fastest_search(_FED, fed(1000), 15), _fastest_search(_FED, fed(16000), 5)
    assert large < 64 * small  # 16x the blanks: about 16x linear, about 256x quadratic


def test_the_floor_s_crash_and_loader_patterns_are_linear_in_a_long_token() -> None:
    # a run of non-blanks tried from every position inside it was quadratic (a line with 'exit'
    # and a 40,000-character token: 4 s in explain_log)
    from tfperf.doctor.explain_floor import _CRASH, _LOADER

    for rx, head in ((_CRASH, "exit code 0x"), (_LOADER, "error while loading shared x ")):
        small = _fastest_search(rx, head + "0" * 1000 + "\n", 15)
        large = _fastest_search(rx, head + "0" * 16000 + "\n", 5)
        assert large < 64 * small, rx  # 16x the token: about 16x linear, 256x quadratic


def test_the_floor_s_assertion_and_loader_readings_still_name_their_file() -> None:
    from tfperf.doctor.explain_floor import _CRASH, _LOADER

    m = _CRASH.search("Assertion: foo:bar.cc:12: failed assertion `x'")
    assert m is not None and m.group(0).startswith("bar.cc:12")
    m = _LOADER.search("./run: /opt/bin/prog: error while loading shared libraries: libx.so.1")
    assert m is not None and m["prog"] == "/opt/bin/prog"
