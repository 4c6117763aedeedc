"""``tfperf explain`` round 7 (issue 31): general mechanisms, each tested on several spellings
from threads other than the held-out log that showed the gap.

- evidence in the log re-ranks a cause's explanations (a driver too old for the build's CUDA, a
  CUDA context that could not be created, WSL, Keras's own function retraced, the OS of a GPU
  check that found nothing);
- the floor reads any tool's ``ERROR:`` line, a loader's ``Could not locate/load library`` and R's
  detailed traceback after its blank line;
- a library calling TensorFlow with a signature the installed TensorFlow lacks is the library
  against TensorFlow;
- rows for classes that recur in public threads (devices busy or unavailable, a graph used from
  another thread, cuDNN's zlib, pip's dependency conflicts).
"""

from __future__ import annotations

import pytest

from tfperf.doctor.explain_render import summary
from tfperf.doctor.explainer import explain_log

# --- evidence: a driver older than the build's CUDA ------------------------------------------

@pytest.mark.parametrize(("text", "driver"), [
    # TF 1.x's cuDNN failure with the driver line it prints (the kernel module's own words)
    ("E tensorflow/stream_executor/cuda/cuda_dnn.cc:385] could not create cudnn handle: "
     "CUDNN_STATUS_NOT_INITIALIZED\n"
     "E tensorflow/stream_executor/cuda/cuda_dnn.cc:393] possibly insufficient driver version: "
     "375.26.0", "375.26"),
    # the same failure, the driver read from nvidia-smi's header, the CUDA from the libraries
    ("|  NVIDIA-SMI 396.54       Driver Version: 396.54     |\n"
     "I tensorflow/stream_executor/dso_loader.cc:152] successfully opened CUDA library "
     "libcublas.so.10.0 locally\n"
     "E tensorflow/stream_executor/cuda/cuda_dnn.cc:373] Could not create cudnn handle: "
     "CUDNN_STATUS_INTERNAL_ERROR", "396.54"),
    # the cuDNN library not found, the driver from the kernel's report, TF 2.4 named
    ("tensorflow-2.4.1.dist-info\n"
     "I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:200] kernel reported version is: "
     "440.33.1\n"
     "UnknownError: Failed to get convolution algorithm. This is probably because cuDNN failed "
     "to initialize", "440.33"),
])
def test_a_driver_older_than_the_builds_cuda_leads_the_fix(text, driver):
    ex = explain_log(text)
    top = ex.causes[0]
    assert top.cause.startswith(f"The NVIDIA driver the log names, {driver}"), top.cause
    assert top.fix.startswith("Update the NVIDIA driver"), top.fix
    assert "Update the NVIDIA driver" in summary(ex)


def test_a_recent_driver_does_not_lead():
    # cuDNN's handle failure with a driver new enough for every CUDA 11: memory leads as before
    ex = explain_log("E tensorflow/stream_executor/cuda/cuda_dnn.cc:385] could not create cudnn "
                     "handle: CUDNN_STATUS_NOT_INITIALIZED\n"
                     "E tensorflow/stream_executor/cuda/cuda_dnn.cc:393] possibly insufficient "
                     "driver version: 535.104.5")
    assert "driver the log names" not in ex.causes[0].cause
    assert "memory" in ex.causes[0].fix.split(".")[0].lower()


# --- evidence: a CUDA context that could not be created -----------------------------------------

@pytest.mark.parametrize("text", [
    # tensorflow/tensorflow#30594 (XLA's platform_util, TF 1.14)
    "W tensorflow/compiler/xla/service/platform_util.cc:240] unable to create StreamExecutor for "
    "CUDA:0: failed initializing StreamExecutor for CUDA device ordinal 0: Internal: failed call "
    "to cuDevicePrimaryCtxRetain: CUDA_ERROR_OUT_OF_MEMORY: out of memory; total memory reported: "
    "11523260416\nF tensorflow/stream_executor/lib/statusor.cc:34] Attempting to fetch value "
    "instead of handling error Internal: no supported devices found for platform CUDA",
    # junxnone/tio#189 (TF 1.x's implicit initialization)
    "tensorflow.python.framework.errors_impl.InternalError: CUDA runtime implicit initialization "
    "on GPU:0 failed. Status: out of memory",
    # tensorflow/tensorflow#17589 (direct_session)
    "E tensorflow/core/common_runtime/direct_session.cc:170] Internal: failed initializing "
    "StreamExecutor for CUDA device ordinal 0: Internal: failed call to cuDevicePrimaryCtxRetain: "
    "CUDA_ERROR_OUT_OF_MEMORY; total memory reported: 11719016448",
])
def test_a_context_that_could_not_be_created_is_a_busy_gpu_not_a_big_batch(text):
    top = explain_log(text).causes[0]
    assert top.cause.startswith("The CUDA context itself could not be created"), top.cause
    assert "CUDA_VISIBLE_DEVICES" in top.fix.split("Otherwise")[0]


def test_an_ordinary_oom_still_leads_with_the_batch():
    top = explain_log("ResourceExhaustedError: OOM when allocating tensor with shape"
                      "[16,257,257,32] and type float on /job:localhost/replica:0/task:0/"
                      "device:GPU:0 by allocator GPU_0_bfc").causes[0]
    assert top.label == "out-of-memory" and "context" not in top.cause.split(".")[0]


# --- devices busy or unavailable, with and without WSL ------------------------------------------

@pytest.mark.parametrize("text", [
    # tensorflow/tensorflow#48558
    "tensorflow.python.framework.errors_impl.InternalError: CUDA runtime implicit initialization "
    "on GPU:0 failed. Status: all CUDA-capable devices are busy or unavailable",
    # google-research/pix2struct#53
    "tensorflow.python.framework.errors_impl.InternalError: cudaSetDevice() on GPU:0 failed. "
    "Status: CUDA-capable device(s) is/are busy or unavailable",
    # the driver API's name for it
    "E tensorflow/stream_executor/cuda/cuda_driver.cc:271] failed call to cuInit: "
    "CUDA_ERROR_DEVICE_UNAVAILABLE: CUDA-capable device(s) is/are busy or unavailable",
])
def test_devices_busy_or_unavailable_is_known(text):
    top = explain_log(text).causes[0]
    assert (top.label, top.severity, top.confidence) == ("cuda-devices-unavailable", "failure",
                                                         "high")
    assert "Exclusive_Process" in top.cause and not top.cause.startswith("This looks like WSL2")


@pytest.mark.parametrize("wsl", [
    "Linux DESKTOP-1 5.10.16.3-microsoft-standard-WSL2 #1 SMP x86_64 GNU/Linux",
    "LD_LIBRARY_PATH=/usr/lib/wsl/lib:/usr/local/cuda/lib64",
    "E tensorflow/stream_executor/cuda/cuda_gpu_executor.cc:967] could not open file to read "
    "NUMA node: /sys/bus/pci/devices/0000:01:00.0/numa_node\nYour kernel may have been built "
    "without NUMA support.",
])
def test_under_wsl_the_windows_driver_leads(wsl):
    top = explain_log(wsl + "\nInternalError: CUDA runtime implicit initialization on GPU:0 "
                      "failed. Status: all CUDA-capable devices are busy or unavailable").causes[0]
    assert top.label == "cuda-devices-unavailable"
    assert top.cause.startswith("This looks like WSL2") and "wsl --update" in top.fix


# --- a graph used from another thread -------------------------------------------------------

@pytest.mark.parametrize("text", [
    # jrosebr1/simple-keras-rest-api#4
    'ValueError: Tensor Tensor("dense_2/Sigmoid:0", shape=(?, 1), dtype=float32) is not an '
    "element of this graph.",
    # keras-team/keras#2397's other wording (feed_dict)
    "TypeError: Cannot interpret feed_dict key as Tensor: Tensor Tensor(\"Placeholder:0\", "
    "shape=(3, 3, 3, 64), dtype=float32) is not an element of this graph.",
    # BrikerMan/Kashgari#167
    "tensorflow.python.framework.errors_impl.InvalidArgumentError: Tensor Input-Token:0, "
    "specified in either feed_devices or fetch_devices was not found in the Graph",
])
def test_a_graph_used_from_another_thread_is_known(text):
    top = explain_log(text).causes[0]
    assert (top.label, top.confidence) == ("graph-used-across-threads", "high")
    assert "graph.as_default()" in top.fix


# --- cuDNN's zlib on Windows, and loader messages the floor reads --------------------------------

@pytest.mark.parametrize("text", [
    "Could not locate zlibwapi.dll. Please make sure it is in your library path!",  # darknet#8551
    "Could not load library zlibwapi.dll. Error code 193. Please verify that the library is built "
    "correctly for your processor architecture (32-bit, 64-bit)",  # KataGo#828
])
def test_cudnns_missing_zlib_is_known_without_any_tensorflow_line(text):
    ex = explain_log("Processing song.mp3\n" + text + "\nFinished")
    assert (ex.causes[0].label, ex.verdict) == ("zlib-missing-for-cudnn", "failure")


@pytest.mark.parametrize(("text", "lib"), [
    ("Could not load library cudnn_cnn_infer64_8.dll. Error code 126\nPlease make sure "
     "cudnn_cnn_infer64_8.dll is in your library path!", "cudnn_cnn_infer64_8.dll"),
    ("Could not load library libcudnn_cnn_infer.so.8. Error: libnvrtc.so: cannot open shared "
     "object file: No such file or directory", "libcudnn_cnn_infer.so.8"),
])
def test_the_floor_reads_a_loaders_could_not_load_library(text, lib):
    ex = explain_log(text)
    assert ex.verdict == "failure" and ex.causes, ex.verdict
    assert lib in " ".join(ln.text for ln in ex.causes[0].lines)


def test_a_loader_message_about_a_library_not_tensorflows_is_not_blamed():
    ex = explain_log("Could not locate libfoo_audio.dll. Please make sure it is in your path!")
    assert not ex.problems


# --- pip's conflicts and any tool's ERROR: line ------------------------------------------------

@pytest.mark.parametrize(("text", "install"), [
    # tensorflow/tensorflow#21939 (pip 18's wording)
    ("tensorflow 1.10.1 has requirement numpy<=1.14.5,>=1.13.3, but you'll have numpy 1.15.1 "
     "which is incompatible.", "pip install 'numpy<=1.14.5,>=1.13.3'"),
    # tensorflow/models#10549 (the resolver's wording since pip 20.3)
    ("ERROR: pip's dependency resolver does not currently take into account all the packages "
     "that are installed. This behaviour is the source of the following dependency conflicts.\n"
     "tensorflow 2.4.4 requires numpy~=1.19.2, but you have numpy 1.21.5 which is incompatible.",
     "pip install 'numpy~=1.19.2'"),
    # tensorflow/models#9200 (another of the family, another dependency)
    ("tensorflow-metadata 0.23.0 requires absl-py<0.9,>=0.7, but you'll have absl-py 0.10.0 which "
     "is incompatible.", "pip install 'absl-py<0.9,>=0.7'"),
])
def test_pips_dependency_conflicts_name_what_to_install(text, install):
    top = explain_log(text).causes[0]
    assert (top.label, top.severity) == ("tf-dependency-conflict", "failure")
    assert top.install.startswith(install), top.install


@pytest.mark.parametrize("text", [
    "ERROR: Could not install packages due to an OSError: [WinError 5] Access is denied: "
    "'c:\\\\python38\\\\lib\\\\site-packages\\\\tensorflow\\\\python\\\\_pywrap_tensorflow_internal.pyd'",
    "ERROR: Failed building wheel for tensorflow-text",
    "FATAL: tensorflow-io could not start: the op library is missing",
])
def test_the_floor_reads_any_tools_error_line_about_tensorflow(text):
    ex = explain_log(text)
    assert ex.verdict == "failure" and ex.causes[0].confidence == "low"
    assert ex.causes[0].details["class"] == ["ToolError"]


def test_a_tools_error_line_about_something_else_is_not_tensorflows():
    ex = explain_log("ERROR: Could not open requirements file: [Errno 2] No such file or "
                     "directory: 'requirements.txt'")
    assert not ex.problems


# --- R's detailed traceback, and Python without streams -----------------------------------------

@pytest.mark.parametrize("body", [
    # rstudio/keras3#33 (a progress bar writing to stdout)
    "Error in py_call_impl(callable, dots$args, dots$keywords) : \n"
    "  AttributeError: 'NoneType' object has no attribute 'write'\n\nDetailed traceback: \n"
    '  File "C:\\PROGRA~3\\ANACON~1\\envs\\R-TENS~1\\lib\\site-packages\\tensorflow\\contrib\\keras'
    '\\python\\keras\\utils\\generic_utils.py", line 272, in update\n'
    "    sys.stdout.write('\\n')",
    # pyinstaller/pyinstaller#7565 (TensorFlow's logging in a windowed program)
    "Traceback (most recent call last):\n"
    '  File "tensorflow\\python\\autograph\\utils\\ag_logging.py", line 145, in warning\n'
    "AttributeError: 'NoneType' object has no attribute 'flush'",
])
def test_python_without_streams_is_the_likeliest_cause(body):
    ex = explain_log(body)
    top = ex.causes[0]
    assert top.confidence == "low" and top.likely, ex.verdict
    assert top.likely[0][0].startswith("sys.stdout or sys.stderr is None")


# --- a library calling TensorFlow with another release's signature -------------------------------

@pytest.mark.parametrize(("code", "message"), [
    ("with tf.variable_scope(name, values=[x]):",
     "TypeError: variable_scope() got an unexpected keyword argument 'values'"),
    ("return tf.nn.softmax_cross_entropy_with_logits(logits, labels)",
     "TypeError: softmax_cross_entropy_with_logits() takes 1 positional argument but 3 were "
     "given"),
])
def test_a_library_calling_tensorflow_with_another_signature_is_the_library_against_tf(code,
                                                                                        message):
    ex = explain_log("Traceback (most recent call last):\n"
                     '  File "train.py", line 3, in <module>\n    net = build(x)\n'
                     '  File "/home/u/venv/lib/python3.8/site-packages/oldlib/layers.py", line 9, '
                     f"in build\n    {code}\n{message}")
    top = ex.causes[0]
    assert top.label == "tf-addon-version-mismatch" and top.details["addon"] == ["oldlib"]
    assert top.fix.startswith("Upgrade oldlib") and "Fix: Upgrade oldlib" in summary(ex)


def test_a_users_own_signature_error_stays_generic():
    ex = explain_log("Traceback (most recent call last):\n"
                     '  File "/home/u/venv/lib/python3.8/site-packages/oldlib/util.py", line 9, in '
                     "f\n    return g(a, b)\n"
                     "TypeError: g() got an unexpected keyword argument 'values'")
    assert not ex.problems or ex.causes[0].label != "tf-addon-version-mismatch"


# --- Keras's own function retraced -------------------------------------------------------------

@pytest.mark.parametrize("obj", [
    "<tensorflow.python.keras.engine.sequential.Sequential object at 0x7f2185a37630>",
    "<function Model.make_predict_function.<locals>.predict_function at 0x7f38dc45f0d0>",
    "<keras.engine.functional.Functional object at 0x7f00aa>",
])
def test_keras_own_function_retraced_leads_with_kerass_remedies(obj):
    top = explain_log(f"WARNING:tensorflow:5 out of the last 5 calls to {obj} triggered "
                      "tf.function retracing. Tracing is expensive").causes[0]
    assert top.label == "tf-function-retracing"
    assert top.cause.startswith("The function traced again is Keras's own"), top.cause
    assert "{" not in top.cause and "predict_on_batch" in top.fix


def test_a_users_own_function_retraced_keeps_the_general_advice():
    top = explain_log("WARNING:tensorflow:5 out of the last 5 calls to <function step at 0x7f> "
                      "triggered tf.function retracing.").causes[0]
    assert "Keras's own" not in top.cause


# --- the user's own GPU check found nothing ---------------------------------------------------

@pytest.mark.parametrize(("text", "lead"), [
    # tensorflow/tensorflow#68236 (native Windows, TF 2.16)
    ("C:\\Users\\me>python check.py\nTensorFlow version: 2.16.1\nIs GPU available? []\n"
     "Is TensorFlow built with CUDA?: False", "TensorFlow 2.11 and later have no CUDA build"),
    # tensorflow/tensorflow#60156 (a REPL on Windows)
    ("Python 3.9.10 (tags/v3.9.10) [MSC v.1929 64 bit (AMD64)] on win32\n>>> import tensorflow as "
     "tf\n>>> tf.config.list_physical_devices('GPU')\n[]", "TensorFlow 2.11 and later"),
    # a Linux CPU-only package
    (">>> import tensorflow as tf\n>>> tf.test.is_built_with_cuda()\nFalse\n",
     "The TensorFlow installed has no CUDA support"),
    # macOS
    ("/Users/me/miniforge3/lib/python3.10/site-packages/tensorflow/__init__.py\n"
     "Num GPUs Available:  0", "This is macOS"),
])
def test_an_empty_gpu_check_is_a_failure_led_by_what_the_log_shows(text, lead):
    ex = explain_log(text)
    top = ex.causes[0]
    assert (top.label, top.severity) == ("gpu-not-visible", "failure")
    assert top.cause.startswith(lead), top.cause


def test_a_gpu_check_that_found_a_gpu_is_nothing():
    ex = explain_log(">>> tf.config.list_physical_devices('GPU')\n"
                     "[PhysicalDevice(name='/physical_device:GPU:0', device_type='GPU')]\n"
                     ">>> tf.test.is_built_with_cuda()\nTrue")
    assert not ex.problems


# --- a GPU newer than the build's CUDA --------------------------------------------------------

@pytest.mark.parametrize(("text", "gpu"), [
    # tensorflow/tensorflow#43718: nvidia-smi's table, CUDA 10.1's libraries
    ("|   0  GeForce RTX 3090    On   | 00000000:0D:00.0  On |\n"
     "I tensorflow/stream_executor/platform/default/dso_loader.cc:48] Successfully opened dynamic "
     "library libcudart.so.10.1\nE tensorflow/stream_executor/cuda/cuda_blas.cc:428] failed to run "
     "cuBLAS routine: CUBLAS_STATUS_EXECUTION_FAILED", "GeForce RTX 3090"),
    # TF 2.3's device line (the CUDA from the TensorFlow version)
    ("tensorflow-2.3.0.dist-info\npciBusID: 0000:01:00.0 name: GeForce RTX 3080 "
     "computeCapability: 8.6\ntensorflow.python.framework.errors_impl.InternalError: Blas GEMM "
     "launch failed : a.shape=(32, 784), b.shape=(784, 10), m=32, n=10, k=784",
     "compute capability 8.6"),
    # TF 1.x's device lines (major/minor; the CUDA from TF 1.x's own wording)
    ("name: A100-SXM4-40GB major: 8 minor: 0 memoryClockRate(GHz): 1.41\n"
     "InternalError (see above for traceback): Blas GEMM launch failed", "compute capability 8.0"),
])
def test_a_gpu_newer_than_the_builds_cuda_leads(text, gpu):
    top = explain_log(text).causes[0]
    assert top.cause.startswith(f"The GPU ({gpu}") and "is newer than the CUDA" in top.cause
    assert "nvidia-tensorflow" in top.fix.split("Otherwise")[0]


def test_a_gpu_the_builds_cuda_knows_does_not_lead():
    top = explain_log("tensorflow-2.15.0.dist-info\nname: NVIDIA GeForce RTX 3090, pci bus id: "
                      "0000:01:00.0, compute capability: 8.6\nE external/local_xla/xla/"
                      "stream_executor/cuda/cuda_blas.cc:1] failed to create cublas handle: "
                      "cublas error").causes[0]
    assert top.label == "cublas-failed" and "newer than the CUDA" not in top.cause


# --- images of another channel count ---------------------------------------------------------

@pytest.mark.parametrize(("text", "want", "got"), [
    # bnsreenu/python_for_microscopists#10
    ("ValueError: Input 0 of layer conv2d_19 is incompatible with the layer: expected axis -1 of "
     "input shape to have value 3 but received input with shape [None, 128, 128, 1]",
     "three channels", "one channel"),
    # krasserm/super-resolution#74 (an RGBA PNG)
    ("ValueError: Input 0 is incompatible with layer model_3: expected shape=(None, None, None, "
     "3), found shape=(1, 499, 552, 4)", "three channels", "four channels"),
    # keras-team/keras#16711 (Keras 2.2's wording)
    ("ValueError: Error when checking input: expected layer_1_input to have shape (128, 128, 1) "
     "but got array with shape (128, 128, 3)", "one channel", "three channels"),
])
def test_images_of_another_channel_count_lead_with_converting_them(text, want, got):
    ex = explain_log(text)
    top = ex.causes[0]
    assert top.cause.startswith(f"The model expects images with {want}") and got in top.cause
    assert "Convert the images" in summary(ex)


def test_a_size_mismatch_is_not_a_channel_mismatch():
    top = explain_log("ValueError: Input 0 is incompatible with layer model: expected shape=(None, "
                      "224, 224, 3), found shape=(None, 256, 256, 3)").causes[0]
    assert "channels" not in top.cause.split(".")[0]


# --- TensorFlow installed over the environment's -----------------------------------------------

@pytest.mark.parametrize("before", [
    "Successfully installed keras-2.8.0 tensorflow-2.8.0 tensorflow-estimator-2.8.0",
    "  Attempting uninstall: tensorflow\n    Found existing installation: tensorflow 2.7.0\n"
    "    Uninstalling tensorflow-2.7.0:",
    '  File "/content/drive/MyDrive/project/train.py", line 12, in <module>',
])
def test_a_reinstalled_tensorflow_leads_a_cudnn_failure(before):
    top = explain_log(before + "\nUnknownError: Failed to get convolution algorithm. This is "
                      "probably because cuDNN failed to initialize, so try looking to see if a "
                      "warning log message was printed above. [Op:Conv2D]").causes[0]
    assert top.label == "conv-algorithm-failed"
    assert top.cause.startswith("The log shows") and "Keep the TensorFlow" in top.fix


# --- TensorFlow Lite's converter and runtime without the ops a model uses --------------------

@pytest.mark.parametrize("text", [
    # tensorflow/tensorflow#50237 (the MLIR converter)
    "Exception: <unknown>:0: error: loc(callsite(callsite(\"model/tf.math.erf/Erf@__inference__"
    "wrapped_model_20\" at \"PartitionedCall@__inference_signature_wrapper_69\") at "
    "\"PartitionedCall\")): 'tf.Erf' op is neither a custom op nor a flex op",
    # tensorflow/tensorflow#34563 (TOCO's wording)
    "Some of the operators in the model are not supported by the standard TensorFlow Lite "
    "runtime. If those are native TensorFlow operators, you might be able to use the extended "
    "runtime by passing --enable_select_tf_ops. Here is a list of operators for which you will "
    "need custom implementations: TensorListFromTensor, TensorListReserve, While.",
    # calmiLovesAI/YOLOv3_TensorFlow2#14
    "<unknown>:0: error: failed while converting: 'main': Ops that can be supported by the flex "
    "runtime (enabled via setting the -emit-select-tf-ops flag): ResizeNearestNeighbor.",
    # margelo/react-native-fast-tflite#143 (at run time)
    "TFLite: Failed to run TFLite Model! Status: unresolved-ops",
])
def test_tflite_without_the_ops_a_model_uses_is_known(text):
    top = explain_log(text).causes[0]
    assert (top.label, top.confidence) == ("tflite-ops-unsupported", "high")
    assert "SELECT_TF_OPS" in top.fix


# --- TF 1 code under eager TF 2, in the wordings the floor met ---------------------------------

@pytest.mark.parametrize("text", [
    "RuntimeError: tf.placeholder() is not compatible with eager execution.",  # tf#27516
    # tensorflow/tensorflow#25102 (TF 1.12 with eager enabled)
    '    raise RuntimeError("tf.placeholder() is not compatible with "\n'
    "RuntimeError: tf.placeholder() is not compatible with eager execution.",
    "RuntimeError: tf.summary.FileWriter is not supported when eager execution is enabled. "
    "Use tf.summary.create_file_writer instead.",
])
def test_tf1_graph_code_under_eager_execution_is_tf1_api_on_tf2(text):
    assert explain_log(text).causes[0].label == "tf1-api-on-tf2"


@pytest.mark.parametrize(("text", "first"), [
    # tensorflow/tensorflow#50978, tensorpack/tensorpack#1520
    ("RuntimeError: Attempting to capture an EagerTensor without building a function.",
     "A tensor created eagerly"),
    # (tensorflow/tensorflow#50155's "Cannot convert a symbolic Keras input/output to a numpy
    # array" is read by the keras-symbolic-eager row since stop 46: test_explain_stop46)
    # rstudio-style conda errors: conda's own classes
    ("PackagesNotFoundError: The following packages are not available from current channels:\n"
     "  - tensorflow-gpu==2.6", "conda found no package"),
    ("UnsatisfiableError: The following specifications were found to be incompatible with each "
     "other:\n  - tensorflow-gpu -> python[version='>=3.7,<3.8.0a0']", "conda cannot find"),
])
def test_the_floor_ranks_the_likeliest_cause_of_these_wordings(text, first):
    top = explain_log(text).causes[0]
    assert top.confidence == "low" and top.likely[0][0].startswith(first), top.likely


@pytest.mark.parametrize(("text", "label"), [
    # an op's failure as its kernel logs it at W level, with no Python traceback pasted
    ("2023-05-02 10:11:12.345678: W tensorflow/core/framework/op_kernel.cc:1733] "
     "INVALID_ARGUMENT: ValueError: callback pyfunc_0 is not found", "invalid-argument-error"),
    ("W0502 10:11:12.345678  1234 tensorflow/core/framework/op_kernel.cc:1745] UNIMPLEMENTED: "
     "Cast string to float is not supported", "unimplemented-error"),
    ("2021-01-01 00:00:00.000000: W tensorflow/core/framework/op_kernel.cc:1767] "
     "FAILED_PRECONDITION: Could not find variable dense/kernel. This could mean that the "
     "variable has been deleted.", "failed-precondition-error"),
])
def test_the_floor_reads_a_status_an_op_logged_at_warning_level(text, label):
    ex = explain_log(text)
    assert (ex.verdict, ex.causes[0].label, ex.causes[0].confidence) == ("failure", label, "low")


def test_a_routine_end_of_input_logged_at_warning_level_is_not_an_error():
    ex = explain_log("2021-01-01 00:00:00.000000: W tensorflow/core/framework/op_kernel.cc:1767] "
                     "OUT_OF_RANGE: End of sequence")
    assert not ex.problems


def test_a_variable_read_from_another_sessions_container_is_the_graph_across_threads():
    # keras-team/keras#10431 (the Flask app, after graph.as_default() alone)
    top = explain_log("tensorflow.python.framework.errors_impl.FailedPreconditionError: Error "
                      "while reading resource variable dense_1/bias from Container: localhost. "
                      "This could mean that the variable was uninitialized. Not found: Container "
                      "localhost does not exist.").causes[0]
    assert top.label == "graph-used-across-threads"


# --- Keras 2 code on Keras 3 (or a Keras against its TensorFlow) --------------------------------

@pytest.mark.parametrize("text", [
    # tensorflow/tensorflow#64349
    "AttributeError: module 'keras._tf_keras.keras.layers' has no attribute 'experimental'",
    # AI4EPS/PhaseNet#90
    "AttributeError: `conv2d` is not available with Keras 3.",
    # tencent-quantum-lab/tensorcircuit#155 (keras.engine moved to keras.src in 2.13)
    "ModuleNotFoundError: No module named 'keras.engine'",
    "ValueError: Unrecognized keyword arguments passed to Dense: {'weights': [array([[1.]])]}",
    # tensorflow/tensorflow#38589, tensorflow/models#6177 (standalone Keras 2.3 on TF 2.3)
    "AttributeError: module 'tensorflow.python.framework.ops' has no attribute '_TensorLike'",
    # tensorflow/tensorflow#49823 (a Keras for TF 2.5+ on TF 1.15)
    "AttributeError: module 'tensorflow._api.v1.compat.v2' has no attribute '__internal__'",
])
def test_keras_against_its_code_or_its_tensorflow_is_known(text):
    top = explain_log(text).causes[0]
    assert (top.label, top.confidence) == ("keras-tf-version-mismatch", "high")


@pytest.mark.parametrize(("tf", "install"), [
    ("tensorflow-1.15.0.dist-info", "pip install 'keras==2.3.1'"),
    ("tensorflow-2.3.0.dist-info", "pip install 'keras==2.4.3'"),
    ("tensorflow-2.10.0.dist-info", "pip install 'keras==2.10.*'"),
])
def test_standalone_keras_for_an_older_tensorflow_names_the_release_that_matched(tf, install):
    top = explain_log(tf + "\nAttributeError: module 'tensorflow.python.framework.ops' has no "
                      "attribute '_TensorLike'").causes[0]
    assert top.install.startswith(install), top.install


def test_a_keras3_name_without_a_version_names_tf_keras():
    top = explain_log("AttributeError: `conv2d` is not available with Keras 3.").causes[0]
    assert "tf-keras" in top.install and "TF_USE_LEGACY_KERAS=1" in top.install


# --- tensorflow-metal ------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    # apple/tensorflow_macos#202
    "Error: command buffer exited with error status.\n\tThe Metal Performance Shaders operations "
    "encoded on it may not have completed.\n\tError: \n\t(null)",
    # DeepLabCut/DeepLabCut#1970 (TensorFlow's crash handler, the plugin's frame)
    "*** Received signal 11 ***\n*** BEGIN MANGLED STACK TRACE ***\n"
    "5   libmetal_plugin.dylib               0x000000017fc31024 ___Z17dispatchOneKernel + 120",
])
def test_tensorflow_metal_failing_is_known(text):
    assert explain_log(text).causes[0].label == "metal-plugin-failed"


def test_a_check_failure_under_tensorflow_metal_leads_with_the_plugin():
    # tensorflow/tensorflow#54308
    ex = explain_log("Metal device set to: Apple M1\n"
                     "2022-02-09 13:55:24.784714: F tensorflow/core/framework/tensor.cc:681] "
                     "Check failed: IsAligned() ptr = 0x306a33ff0")
    assert ex.causes[0].label == "check-failed"
    assert "tensorflow-metal" in summary(ex)


def test_tensorflows_crash_handler_is_a_crash_in_tensorflows_form():
    ex = explain_log("*** Received signal 11 ***\n*** BEGIN MANGLED STACK TRACE ***\n"
                     "0   libtensorflow_framework.2.dylib     0x000000010ac902fc "
                     "_ZN10tensorflow7testingL17StacktraceHandlerEiP9__siginfoPv + 160")
    assert (ex.verdict, ex.causes[0].label) == ("failure", "process-crash")


# --- protobuf, and shapes TensorFlow cannot know -------------------------------------------------

@pytest.mark.parametrize("text", [
    # protocolbuffers/protobuf#9778 (a runtime older than the generated code)
    "ImportError: cannot import name 'builder' from 'google.protobuf.internal' "
    "(/usr/local/lib/python3.9/dist-packages/google/protobuf/internal/__init__.py)",
    "TypeError: Descriptors cannot be created directly.",
])
def test_protobuf_against_its_generated_code_is_known(text):
    assert explain_log(text).causes[0].label == "protobuf-incompatible"


def test_an_unknown_tensorshape_leads_with_setting_the_shape():
    # tensorflow/tensorflow#49238, keras-team/keras#20573
    top = explain_log("ValueError: as_list() is not defined on an unknown TensorShape.").causes[0]
    assert "set_shape" in top.likely[0][1]


# --- GPUs configured too late, data Keras cannot read, dtypes, a model file not there -------------

@pytest.mark.parametrize(("text", "first"), [
    # hunglc007/tensorflow-yolov4-tflite#171
    ("RuntimeError: Physical devices cannot be modified after being initialized",
     "tf.config.set_memory_growth"),
    # tym-b/implicit-slam#5 (a notebook cell run twice)
    ("RuntimeError: Virtual devices cannot be modified after being initialized",
     "tf.config.set_memory_growth"),
    # qurator-spk/eynollah#99
    ("ValueError: Memory growth cannot differ between GPU devices", "Memory growth was set"),
    # YerevaNN/mimic3-benchmarks#132
    ("ValueError: Failed to find data adapter that can handle input: <class 'numpy.ndarray'>, "
     "(<class 'list'> containing values of types {\"<class 'int'>\"})", "fit/evaluate/predict got"),
    ("TypeError: Input 'y' of 'Mul' Op has type float32 that does not match type int32 of "
     "argument 'x'.", "Two inputs of one op have different dtypes"),
])
def test_the_floor_reads_these_tensorflow_errors_and_ranks_their_cause(text, first):
    ex = explain_log(text)
    assert ex.verdict == "failure" and ex.causes[0].confidence == "low"
    assert ex.causes[0].likely[0][0].startswith(first), ex.causes[0].likely


@pytest.mark.parametrize("text", [
    # mvirgo/MLND-Capstone#26 (h5py's wording)
    "OSError: Unable to open file (unable to open file: name = 'full_CNN_model.h5', errno = 2, "
    "error message = 'No such file or directory', flags = 0, o_flags = 0)",
    "OSError: SavedModel file does not exist at: saved_model/{saved_model.pbtxt|saved_model.pb}",
    "OSError: No file or directory found at models/best.h5",
])
def test_a_model_file_not_at_its_path_is_known(text):
    top = explain_log(text).causes[0]
    assert (top.label, top.confidence) == ("model-file-missing", "high")
    assert "os.getcwd()" in top.fix


def test_a_model_called_on_another_shape_is_a_warning_with_both_shapes():
    ex = explain_log("WARNING:tensorflow:Model was constructed with shape (None, 28, 28) for "
                     "input KerasTensor(type_spec=TensorSpec(shape=(None, 28, 28), dtype="
                     "tf.float32, name='flatten_input'), name='flatten_input'), but it was "
                     "called on an input with incompatible shape (None, 784).")
    top = ex.causes[0]
    assert (top.label, top.severity) == ("input-shape-mismatch", "warning")
    assert top.details["built_shape"] == ["(None, 28, 28)"]
    assert top.details["called_shape"] == ["(None, 784)"]


@pytest.mark.parametrize("text", [
    "WARNING:tensorflow:No training configuration found in the save file, so the model was "
    "*not* compiled. Compile it manually.",
    "UserWarning: You are saving your model as an HDF5 file via `model.save()`. This file format "
    "is considered legacy.",
    "W0000 00:00:1740860506.427660 2881536 op_level_cost_estimator.cc:699] Error in PredictCost() "
    "for the op: op: \"CropAndResize\"",
    "W tensorflow/core/data/root_dataset.cc:286] Optimization loop failed: CANCELLED: Operation "
    "was cancelled",
])
def test_keras_and_grappler_chatter_is_nothing_wrong(text):
    ex = explain_log(text)
    assert ex.verdict == "nothing-wrong" and not ex.unknown


# --- TensorFlow Hub's cache, and a crash whose frames come after it -------------------------------

@pytest.mark.parametrize("text", [
    # tensorflow/hub#575 (Windows' temp folder)
    "OSError: SavedModel file does not exist at: C:\\Users\\me\\AppData\\Local\\Temp\\tfhub_modules"
    "\\a3b91f2744273e376e489b1c60d6bddddebdc084/{saved_model.pbtxt|saved_model.pb}",
    # tensorflow/hub#84 (no network on the server)
    "OSError: https://tfhub.dev/google/elmo/2 does not appear to be a valid module.",
    # tensorflow/hub#212
    "RuntimeError: Missing implementation that supports: loader(*('/tmp/tfhub_modules/"
    "mobilenet_module',), **{})",
])
def test_tensorflow_hubs_incomplete_cache_is_known(text):
    top = explain_log(text).causes[0]
    assert top.label == "tfhub-cache-incomplete" and "TFHUB_CACHE_DIR" in top.fix


def test_a_saved_model_missing_elsewhere_is_a_path_problem():
    assert explain_log("OSError: SavedModel file does not exist at: export/1/{saved_model.pbtxt|"
                       "saved_model.pb}").causes[0].label == "model-file-missing"


def test_a_crash_whose_faulthandler_frames_run_through_tensorflow_is_tensorflows():
    ex = explain_log('Fatal Python error: Segmentation fault\n\nThread 0x00007f (most recent call '
                     'first):\n  File "/usr/local/lib/python3.10/dist-packages/tensorflow/python/'
                     'eager/execute.py", line 53 in quick_execute')
    assert (ex.verdict, ex.causes[0].label) == ("failure", "process-crash")
    other = explain_log('Fatal Python error: Segmentation fault\n\nThread 0x00007f (most recent '
                        'call first):\n  File "/usr/lib/python3/dist-packages/cv2/__init__.py", '
                        'line 5 in load')
    assert not other.problems


@pytest.mark.parametrize("text", [
    # tensorflow/tensorflow#38260 (aarch64), rstudio/tensorflow#568 (Apple silicon)
    "W tensorflow/core/platform/profile_utils/cpu_utils.cc:106] Failed to find bogomips or clock "
    "in /proc/cpuinfo; cannot determine CPU frequency",
    "2023-04-20 10:00:00.000000: W tensorflow/tsl/platform/profile_utils/cpu_utils.cc:128] Failed "
    "to get CPU frequency: 0 Hz",
    # google-research/google-research#190 (evaluation with the optimizer's state unused)
    "WARNING:tensorflow:Unresolved object in checkpoint: (root).optimizer.beta_1\n"
    "WARNING:tensorflow:A checkpoint was restored (e.g. tf.train.Checkpoint.restore or "
    "tf.keras.Model.load_weights) but not all checkpointed values were used. See above for "
    "specific issues.",
    "W tensorflow/core/common_runtime/graph_constructor.cc:840] Node 'cond' has 4 outputs but the "
    "_output_shapes attribute specifies shapes for 44 outputs. Output shapes may be inaccurate.",
])
def test_more_harmless_tensorflow_notes_are_nothing_wrong(text):
    ex = explain_log(text)
    assert ex.verdict == "nothing-wrong" and not ex.unknown and not ex.problems


@pytest.mark.parametrize("text", [
    # ardamavi/Game-Bot#37, keras-team/keras#18363, Keras 3's moved preprocessing
    "ImportError: cannot import name 'to_categorical' from 'keras.utils' (C:\\Users\\me\\Python39"
    "\\site-packages\\keras\\utils\\__init__.py)",
    "ImportError: cannot import name 'np_utils' from 'keras.utils' (/venv/lib/python3.9/"
    "site-packages/keras/utils/__init__.py)",
    "ImportError: cannot import name 'img_to_array' from 'keras.preprocessing.image'",
    "AttributeError: module 'keras.utils' has no attribute 'to_categorical'",
])
def test_a_keras_name_that_moved_between_versions_is_keras_against_the_code(text):
    assert explain_log(text).causes[0].label == "keras-tf-version-mismatch"


def test_a_private_name_missing_from_tensorflow_is_still_installs_mixed():
    # tensorflow_probability#860's shape: stable and nightly side by side
    top = explain_log("ImportError: cannot import name 'naming' from "
                      "'tensorflow.python.autograph.core'").causes[0]
    assert top.label == "tf-installs-mixed"


@pytest.mark.parametrize("text", [
    'OSError: [WinError 126] The specified module could not be found. Error loading "C:\\Python39'
    '\\lib\\site-packages\\tensorflow\\python\\_pywrap_tensorflow_internal.pyd" or one of its '
    "dependencies.",
    "ImportError: DLL load failed while importing _pywrap_tensorflow_internal: The specified "
    "module could not be found.",
])
def test_windows_dll_failures_in_both_wordings_are_known(text):
    assert explain_log(text).causes[0].label == "windows-dll-load-failed"


def test_a_winerror_126_of_another_library_is_not_tensorflows():
    ex = explain_log('OSError: [WinError 126] The specified module could not be found. Error '
                     'loading "C:\\Python39\\lib\\site-packages\\torch\\lib\\c10.dll" or one of '
                     "its dependencies.")
    assert not ex.causes or ex.causes[0].label != "windows-dll-load-failed"


@pytest.mark.parametrize("text", [
    # keras-team/keras-tuner#442 (TerminateOnNaN in a progress bar)
    "   2/1500 [..............................] - ETA: 46s - loss: nan - accuracy: 0.1719  "
    "Batch 2: Invalid loss, terminating training",
    # eternagame/EternaBrain#21 (a NaN loss in the progress line only)
    "Epoch 12/50\n120/120 [==============================] - 3s 25ms/step - loss: nan - accuracy: "
    "0.2698",
    # TF 1.x summaries of NaN weights
    "tensorflow.python.framework.errors_impl.InvalidArgumentError: Nan in summary histogram for: "
    "dense/kernel_0",
])
def test_a_nan_loss_is_known_in_its_wordings(text):
    top = explain_log(text).causes[0]
    assert (top.label, top.severity) == ("loss-nan", "failure")
    assert "learning rate" in top.fix


def test_a_finite_loss_is_not_nan():
    ex = explain_log("Epoch 1/5\n120/120 [==============================] - 3s - loss: 0.6931 - "
                     "nanometers: 3")
    assert not ex.problems


def test_an_error_python_ignored_in_a_destructor_is_a_notice_not_a_failure():
    # TF 2.0's iterator deleter at interpreter exit; jannikmi/timezonefinder#376 for the form
    ex = explain_log("Exception ignored in: <function IteratorResourceDeleter.__del__ at 0x7f>\n"
                     "Traceback (most recent call last):\n"
                     '  File "/usr/local/lib/python3.7/dist-packages/tensorflow/python/data/ops/'
                     'iterator_ops.py", line 546, in __del__\n'
                     "TypeError: 'NoneType' object is not callable")
    assert not ex.problems and ex.causes[0].severity == "notice"
    assert "Python ignored" in ex.causes[0].detail
    # the same error raised for real is a failure
    real = explain_log("Traceback (most recent call last):\n"
                       '  File "/usr/local/lib/python3.7/dist-packages/tensorflow/python/data/ops/'
                       'iterator_ops.py", line 546, in get_next\n'
                       "TypeError: 'NoneType' object is not callable")
    assert real.verdict == "failure"


@pytest.mark.parametrize(("text", "detail"), [
    # tensorpack/tensorpack#1457 (Python's repr of the JSON answer)
    ("{'error': 'Serving signature name: \"serving_default\" not found in signature def'}",
     "signature serving_default"),
    # GoogleCloudPlatform/training-data-analyst#380
    ('{\n    "error": "Serving signature name: \\"predict\\" not found in signature def"\n}',
     "signature predict"),
    ('{ "error": "Failed to process element: 0 key: input_1 of \'instances\' list. Error: Invalid '
     'argument: JSON object: does not have named input: input_1" }', "input input_1"),
    # tensorflow/serving#307 (gRPC)
    ('AbortionError(code=StatusCode.FAILED_PRECONDITION, details="Default serving signature key '
     'not found.")', ""),
])
def test_a_request_that_does_not_match_the_models_signatures_is_known(text, detail):
    top = explain_log(text).causes[0]
    assert top.label == "serving-signature-mismatch" and "saved_model_cli show" in top.fix
    assert top.detail == detail


@pytest.mark.parametrize("text", [
    "RuntimeError: Unable to create link (name already exists)",  # tensorflow/tensorflow#27688
    "ValueError: Unable to create group (Name already exists)",  # keras-team/keras#6005
    "ValueError: Unable to create dataset (name already exists)",
])
def test_duplicate_names_in_an_h5_save_are_known(text):
    top = explain_log(text).causes[0]
    assert top.label == "h5-duplicate-names" and "unique name" in top.fix


@pytest.mark.parametrize(("text", "first"), [
    ("OperatorNotAllowedInGraphError: iterating over `tf.Tensor` is not allowed: AutoGraph did "
     "convert this function.", "An if, while, for or bool() on a tensor"),
    ("InaccessibleTensorError: The tensor 'Tensor(\"add:0\", shape=(), dtype=float32)' cannot be "
     "accessed here: it is defined in another function or code block.", "A tensor made inside"),
    ("ValueError: No gradients provided for any variable: (['dense/kernel:0', 'dense/bias:0'],).",
     "The loss does not depend on any trainable variable"),
])
def test_the_floor_reads_graph_mode_errors_and_ranks_their_cause(text, first):
    top = explain_log(text).causes[0]
    assert top.confidence == "low" and top.likely[0][0].startswith(first), top.likely


def test_creating_variables_on_a_non_first_call_in_its_older_wording_is_known():
    assert explain_log("ValueError: Creating variables on a non-first call to a function decorated "
                       "with tf.function.").causes[0].label == "tf-function-variable-creation"


@pytest.mark.parametrize("text", [
    "/usr/local/lib/python3.11/dist-packages/keras/src/layers/core/dense.py:87: UserWarning: Do "
    "not pass an `input_shape`/`input_dim` argument to a layer. When using Sequential models, "
    "prefer using an `Input(shape)` object as the first layer in the model instead.\n"
    "  super().__init__(activity_regularizer=activity_regularizer, **kwargs)",
    "/usr/local/lib/python3.11/dist-packages/keras/src/saving/saving_lib.py:757: UserWarning: "
    "Skipping variable loading for optimizer 'adam', because it has 2 variables whereas the saved "
    "optimizer has 10 variables.",
    "WARNING:absl:`lr` is deprecated in Keras optimizer, please use `learning_rate` or use the "
    "legacy optimizer, e.g.,tf.keras.optimizers.legacy.Adam.",
])
def test_keras3_usage_notes_are_nothing_wrong(text):
    ex = explain_log(text)
    assert ex.verdict == "nothing-wrong" and not ex.unknown


@pytest.mark.parametrize("loss", ["sparse_categorical_crossentropy", "binary_crossentropy"])
def test_from_logits_on_a_softmax_output_is_a_warning(loss):
    top = explain_log(f'/usr/lib/keras/src/backend/tensorflow/nn.py:609: UserWarning: "`{loss}` '
                      "received `from_logits=True`, but the `output` argument was produced by a "
                      'Softmax activation and thus does not represent logits. Was this intended?"'
                      ).causes[0]
    assert (top.label, top.severity) == ("loss-logits-mismatch", "warning")
    assert "from_logits=False" in top.fix


@pytest.mark.parametrize("text", [
    # tensorflow/tensorflow#54208
    "AttributeError: partially initialized module 'tensorflow' has no attribute 'Tensor' (most "
    "likely due to a circular import)",
    "ImportError: cannot import name 'keras' from 'tensorflow' (unknown location)",
    # Nuitka/Nuitka#2775's shape, for keras
    "AttributeError: partially initialized module 'keras' has no attribute 'layers' (most likely "
    "due to a circular import)",
])
def test_a_package_shadowed_by_a_file_of_ones_own_is_known(text):
    top = explain_log(text).causes[0]
    assert top.label == "tensorflow-shadowed" and "__file__" in top.fix


def test_a_wheel_for_another_platform_is_ranked_to_its_tags():
    top = explain_log("ERROR: tensorflow_gpu-1.15.0-cp37-cp37m-manylinux2010_x86_64.whl is not a "
                      "supported wheel on this platform.").causes[0]
    # a knowledge row now reads it (round 10), with the wheel's tags named in its detail
    assert top.label == "unsupported-wheel" and "CPython 3.7 on Linux x86-64" in top.detail
