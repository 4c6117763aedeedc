"""Stop 43, wave 2: round 28's misses (split ``rounds43``, development material since its first
score), each read by a mechanism and tested on wordings of our own, with a VALID twin that must
not get the new answer:

- an instruction set with a dot (``SSE4.1``) in cpu_feature_guard's abort, and the sets older
  than AVX named as such;
- a ``UnicodeDecodeError`` of a binary file read in text mode (GFile/FastGFile/open without
  'b'), also when the codec's message is quoted without its class;
- a missing generated ``*_pb2`` module (the protoc step skipped), and protoc 2.x on proto3 files;
- tensorflow-rocm against another ROCm (a HIP/MIOpen symbol undefined);
- TensorFlow Lite Micro's tensor arena too small;
- the TensorFlow Lite GPU delegate taking part or none of the graph (the rest on the CPU);
- bazel's undefined ``--config`` (``opt``: no CPU flags in the binary);
- TF Serving finding no SavedModel bundle; TFLite 1.x's converter with ``None`` past the batch
  axis; a second delegate on an immutable graph; ``tf.VERSION`` outside TF 0.11-1.x;
- a TensorFlow.js error in the browser console (its own script named as the source), a
  non-integer conv output size, and a tensorflowjs converter from before 1.0.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tfperf.doctor.explainer import explain_log

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from score_explain import first_explanation  # noqa: E402


def _first(text: str) -> tuple[str, str, str]:
    """(label, severity, the explanation a reader sees first) of the log's first cause."""
    ex = explain_log(text)
    assert ex.causes, (ex.verdict, text)
    c = ex.causes[0]
    return c.label, c.severity, first_explanation(c)


def _labels(text: str) -> set[str]:
    return {c.label for c in explain_log(text).causes}


# --- an instruction set older than AVX ---------------------------------------------------------

_ISA = ("$ python -c 'import tensorflow'\nThe TensorFlow library was compiled to use {isa} "
        "instructions, but these aren't available on your machine.\nAborted (core dumped)\n")


def test_sse41_abort_is_read_and_named() -> None:
    label, _, text = _first(_ISA.format(isa="SSE4.1"))
    assert label == "cpu-missing-instructions"
    assert "needs SSE4.1" in text and "older than AVX" in text


def test_avx_abort_keeps_the_avx_reading() -> None:
    label, _, text = _first(_ISA.format(isa="AVX"))
    assert label == "cpu-missing-instructions" and "older than AVX" not in text


# --- a binary file read in text mode ----------------------------------------------------------

_GFILE = """Traceback (most recent call last):
  File "make_records.py", line 40, in <module>
    data = tf.io.gfile.GFile(path).read()
  File "/usr/lib/python3/site-packages/tensorflow/python/lib/io/file_io.py", line 118, in read
    return self._prepare_value(self._read_buf.read(length))
  File "/usr/lib/python3/site-packages/tensorflow/python/util/compat.py", line 84, in as_text
    return bytes_or_text.decode(encoding)
UnicodeDecodeError: 'utf-8' codec can't decode byte 0x89 in position 0: invalid start byte
"""

_CSV = """Traceback (most recent call last):
  File "train.py", line 12, in <module>
    labels = pd.read_csv("labels.csv")
  File "/usr/lib/python3/site-packages/pandas/io/parsers/readers.py", line 912, in read_csv
    return _read(filepath_or_buffer, kwds)
UnicodeDecodeError: 'utf-8' codec can't decode byte 0xe9 in position 1532: invalid continuation byte
""" + ("2024-05-01 10:00:00.000000: I tensorflow/core/platform/cpu_feature_guard.cc:182] This "
       "TensorFlow binary is optimized to use available CPU instructions in performance-critical "
       "operations.\n")


def test_gfile_text_mode_decode_error_says_rb() -> None:
    label, _, text = _first(_GFILE)
    assert label == "unicode-decode-error" and "'rb'" in text and "binary file" in text


def test_text_file_read_through_gfile_is_not_called_binary() -> None:
    """The binary reading needs a binary file's first byte (or FastGFile, TF1's image reader)."""
    label, _, text = _first(_GFILE.replace("0x89 in position 0: invalid start",
                                           "0xe9 in position 1532: invalid continuation"))
    assert label == "unicode-decode-error" and not text.startswith("Bytes that are not text")


def test_classless_codec_message_about_fastgfile_is_a_decode_error() -> None:
    label, _, text = _first("with python3 the script fails at tf.gfile.FastGFile(name, 'r')"
                            ".read() error: 'utf-8' codec can't decode byte 0xff\n")
    assert label == "unicode-decode-error" and "'rb'" in text


def test_text_file_in_another_encoding_leads_with_the_encoding() -> None:
    label, _, text = _first(_CSV)
    assert label == "unicode-decode-error"
    assert "encoding" in text and not text.startswith("Bytes that are not text")


# --- generated protobuf modules ---------------------------------------------------------------

def test_missing_generated_pb2_module_says_run_protoc() -> None:
    label, _, text = _first(
        "Traceback (most recent call last):\n  File \"infer.py\", line 3, in <module>\n"
        "    from object_detection.utils import config_util\n"
        "  File \"/src/models/research/object_detection/utils/config_util.py\", line 20, in "
        "<module>\n    import tensorflow as tf\n"
        "ModuleNotFoundError: No module named 'object_detection.protos.pipeline_pb2'\n")
    assert label == "module-not-found-error" and "protoc" in text


def test_protobuf_runtime_too_old_is_no_protoc_step() -> None:
    _, _, text = _first(
        "Traceback (most recent call last):\n  File \"t.py\", line 1, in <module>\n"
        "    import tensorflow as tf\n  File \"/venv/lib/python3.10/site-packages/tensorflow/"
        "core/framework/graph_pb2.py\", line 5, in <module>\n"
        "    from google.protobuf.internal import builder as _builder\n"
        "ImportError: cannot import name 'builder_pb2' from 'google.protobuf.internal' "
        "(/venv/lib/python3.10/site-packages/google/protobuf/internal/__init__.py)\n")
    assert "protoc" not in text


def test_protoc_2_on_proto3_files_says_install_protoc_3() -> None:
    label, _, text = _first("$ protoc detector/protos/*.proto --python_out=.\n"
                            "detector/protos/box.proto:7:3: Expected \"required\", \"optional\", "
                            "or \"repeated\".\ndetector/protos/box.proto:7:20: Missing field "
                            "number.\n")
    assert label == "protoc-too-old" and "protoc 3" in text


def test_another_protoc_syntax_error_is_not_an_old_protoc() -> None:
    assert "protoc-too-old" not in _labels(
        "$ protoc a.proto --python_out=.\na.proto:5:1: Expected top-level statement (e.g. "
        "\"message\").\n")


# --- ROCm --------------------------------------------------------------------------------------

_UNDEF = ("Traceback (most recent call last):\n  File \"<stdin>\", line 1, in <module>\n"
          "    import tensorflow\nImportError: /opt/venv/lib/python3.8/site-packages/tensorflow/"
          "python/_pywrap_tensorflow_internal.so: undefined symbol: {sym}\n")


def test_hip_symbol_undefined_is_rocm_mismatch() -> None:
    _, _, text = _first(_UNDEF.format(sym="hipModuleLaunchKernel"))
    assert "tensorflow-rocm" in text


def test_a_cuda_symbol_undefined_is_not_rocm() -> None:
    _, _, text = _first(_UNDEF.format(sym="cudnnGetConvolutionForwardAlgorithm_v7"))
    assert "ROCm" not in text


# --- TensorFlow Lite Micro's arena --------------------------------------------------------------

def test_tflm_arena_too_small() -> None:
    label, _, text = _first("Running person detection\nFailed to allocate tail memory. Requested: "
                            "1024, available 312, missing: 712\nAllocateTensors() failed\n")
    assert label == "tflm-arena-too-small" and "arena" in text


def test_cuda_failed_to_allocate_is_not_the_tflm_arena() -> None:
    assert "tflm-arena-too-small" not in _labels(
        "2019-01-01 10:00:00.000000: E tensorflow/stream_executor/cuda/cuda_driver.cc:806] "
        "failed to allocate 3.00G (3221225472 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: "
        "out of memory\n")


# --- the TFLite GPU delegate's CPU fallback -------------------------------------------------------

def test_gpu_delegate_partial_and_zero_kernels_are_warnings() -> None:
    for log in ("INFO: Created TensorFlow Lite delegate for GPU.\nWARNING: 9 cannot be handled "
                "by this delegate.  Only the first 12 ops will run on the GPU, and the remaining "
                "3 on the CPU.\n",
                "INFO: Created TensorFlow Lite delegate for GPU.\nERROR: Following operations "
                "are not supported by GPU delegate:\nGATHER: Operation is not supported.\n"
                "40 operations will run on the GPU, and the remaining 6 operations will run on "
                "the CPU.\n",
                "INFO: Created TensorFlow Lite delegate for GPU.\nINFO: Created 0 GPU delegate "
                "kernels.\n"):
        label, severity, text = _first(log)
        assert (label, severity) == ("tflite-delegate-cpu-fallback", "warning") and "CPU" in text


def test_gpu_delegate_taking_the_whole_graph_is_fine() -> None:
    for log in ("INFO: Created TensorFlow Lite delegate for GPU.\nINFO: Replacing 31 node(s) with "
                "delegate (TfLiteGpuDelegateV2) node, yielding 1 partitions.\nINFO: Created 1 "
                "GPU delegate kernels.\n",
                "WARNING: Only the first 31 ops will run on the GPU, and the remaining 0 on the "
                "CPU.\n"):
        assert "tflite-delegate-cpu-fallback" not in _labels(log)


# --- bazel's undefined --config ----------------------------------------------------------------

_BAZEL = ("$ bazel build --config=opt //tensorflow_serving/model_servers:tensorflow_model_server\n"
          "{warning}INFO: Analysed target //tensorflow_serving/model_servers:"
          "tensorflow_model_server (0 packages loaded).\nINFO: Build completed successfully\n")


def test_bazel_config_opt_undefined_is_a_warning() -> None:
    label, severity, text = _first(_BAZEL.format(
        warning="WARNING: Config values are not defined in any .rc file: opt\n"))
    assert (label, severity) == ("bazel-config-undefined", "warning") and "-march=native" in text


def test_bazel_build_without_the_warning_is_fine() -> None:
    assert explain_log(_BAZEL.format(warning="")).verdict == "nothing-wrong"


# --- class causes by message ------------------------------------------------------------------

def test_serving_without_a_savedmodel_bundle() -> None:
    label, _, text = _first(
        "E tensorflow_serving/util/retrier.cc:37] Loading servable: {name: m version: 2} failed: "
        "Not found: Specified file path does not appear to contain a:\n- Session bundle (should "
        "have a file called `export.meta`)\n- or, SavedModel bundle (should have a file called "
        "`saved_model.pb`)\nSpecified file path: /models/m/2\n")
    assert label == "not-found-error" and "SavedModel" in text


def test_a_missing_checkpoint_is_no_serving_bundle() -> None:
    _, _, text = _first("tensorflow.python.framework.errors_impl.NotFoundError: "
                        "/ckpt/model.ckpt-100.index; No such file or directory\n")
    assert "TensorFlow Serving" not in text


def test_tflite_1x_converter_none_past_the_batch_axis() -> None:
    label, _, text = _first("Traceback (most recent call last):\n  File \"conv.py\", line 9, in "
                            "<module>\n    tflite_model = converter.convert()\nValueError: None is "
                            "only supported in the 1st dimension. Tensor 'text_in' has invalid "
                            "shape '[1, None, 64]'.\n")
    assert label == "value-error" and "resize_tensor_input" in text


def test_another_value_error_is_no_converter_reading() -> None:
    _, _, text = _first("Traceback (most recent call last):\n  File \"t.py\", line 3, in "
                        "<module>\n    tf.constant([1, None])\nValueError: Attempt to convert a "
                        "value (None) with an unsupported type (<class 'NoneType'>) to a Tensor.\n")
    assert "resize_tensor_input" not in text


def test_second_delegate_on_an_immutable_graph() -> None:
    _, _, text = _first("E/tflite: Failed to apply XNNPACK delegate: ModifyGraphWithDelegate is "
                        "disallowed when graph is immutable.\n")
    assert "one delegate" in text


def test_tf_version_attribute_names_dunder_version() -> None:
    label, _, text = _first("Traceback (most recent call last):\n  File \"run.py\", line 4, in "
                            "<module>\n    print(tf.VERSION)\nAttributeError: module 'tensorflow' "
                            "has no attribute 'VERSION'\n")
    assert label == "attribute-error" and "tf.__version__" in text


def test_another_missing_tf_attribute_is_no_version_reading() -> None:
    _, _, text = _first("Traceback (most recent call last):\n  File \"run.py\", line 4, in "
                        "<module>\n    sess = tf.Session()\nAttributeError: module 'tensorflow' "
                        "has no attribute 'Session'\n")
    assert "tf.__version__" not in text


# --- TensorFlow.js -------------------------------------------------------------------------------

_JS = "{src}:17 Uncaught (in promise) Error: The output # of rows (27.5) must be an integer. " \
      "Change the stride and/or zero pad parameters\n"


def test_tfjs_console_error_is_read_with_resize() -> None:
    label, _, text = _first(_JS.format(src="tf-core.esm.js"))
    assert label == "error" and "Resize the input" in text


def test_another_script_console_error_is_not_tensorflow() -> None:
    ex = explain_log("app.bundle.js:17 Uncaught (in promise) Error: request failed with 404\n")
    assert ex.verdict != "failure" or all(c.label != "error" for c in ex.causes)


_TFJS_CONV = ("tensorflowjs=={ver}\n$ tensorflowjs_converter --input_format=tf_saved_model "
              "./saved ./web\nUnsupported Ops in the model\nTopKV2, NonMaxSuppressionV3\n")


def test_tfjs_converter_before_1_0_says_upgrade() -> None:
    label, _, text = _first(_TFJS_CONV.format(ver="0.6.1"))
    assert label == "tfjs-unsupported-ops" and "pip install -U tensorflowjs" in text


def test_a_recent_tfjs_converter_keeps_the_general_reading() -> None:
    label, _, text = _first(_TFJS_CONV.format(ver="4.17.0"))
    assert label == "tfjs-unsupported-ops" and "before TensorFlow.js 1.0" not in text


# --- an accelerator delegate that never took the graph ------------------------------------------

_ANDROID = ("val options = Interpreter.Options()\n{code}"
            "I/tflite: Initialized TensorFlow Lite runtime.\n"
            "I/tflite: Created TensorFlow Lite XNNPACK delegate for CPU.\n{more}")


def test_nnapi_delegate_in_the_code_with_only_xnnpack_in_the_log_ran_on_the_cpu() -> None:
    label, severity, text = _first(_ANDROID.format(
        code="options.addDelegate(NnApiDelegate())\n", more=""))
    assert (label, severity) == ("tflite-delegate-not-applied", "warning")
    assert "NNAPI" in text and "Options" in text


def test_a_delegate_that_took_nodes_or_no_delegate_in_the_code_is_fine() -> None:
    for log in (_ANDROID.format(code="options.addDelegate(NnApiDelegate())\n",
                                more="I/tflite: Replacing 87 node(s) with delegate "
                                     "(TfLiteNnapiDelegate) node, yielding 1 partitions.\n"),
                _ANDROID.format(code="options.addDelegate(GpuDelegate())\n",
                                more="I/tflite: Created 12 GPU delegate kernels.\n"),
                _ANDROID.format(code="", more="")):
        assert explain_log(log).verdict == "nothing-wrong", log
