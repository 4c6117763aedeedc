"""``tfperf explain`` on the classes rounds 9-10 and the issue trackers showed without a row,
checked on other wordings than the development logs of split ``tail2``: a full disk and the
open-file limit are RESOURCE_EXHAUSTED without being memory, a placeholder path, a download Keras
could not make, two OpenMP runtimes, the TensorFlow Models code off the path, TF-TRT without
TensorRT, and the floor's ranked causes for the most reported Keras/TensorFlow errors."""

from __future__ import annotations

import pytest
from explain_reading import assert_reads, first_cause

from tfperf.doctor.explainer import explain_log


@pytest.mark.parametrize(("text", "label", "words"), [
    # a SavedModel's variables written to a full disk (TF 2.x wording, after the class)
    ("tensorflow.python.framework.errors_impl.ResourceExhaustedError: saved/variables/"
     "variables_temp/part-00000-of-00001.data-00000-of-00001.tempstate123; No space left on "
     "device [Op:SaveV2]", "disk-full", "disk"),
    # absl's status spelling of the same in a C++ log line
    ("W tensorflow/core/framework/op_kernel.cc:1830] OP_REQUIRES failed at save_restore_v2_ops"
     ".cc:160 : RESOURCE_EXHAUSTED: /ckpt/model.ckpt-7.tempstate99; Disk quota exceeded",
     "disk-full", "quota"),
    ("tensorflow.python.framework.errors_impl.ResourceExhaustedError: /data/shard-00421.tfrecord;"
     " Too many open files", "too-many-open-files", "ulimit"),
])
def test_resource_exhausted_that_is_not_memory(text: str, label: str, words: str) -> None:
    """The base read these as out-of-memory and advised a smaller batch."""
    assert_reads(text, label, words)
    assert "batch" not in first_cause(text)[1].split("Fix:")[0]


@pytest.mark.parametrize(("text", "label", "words"), [
    ("tensorflow.python.framework.errors_impl.NotFoundError: PATH_TO_BE_CONFIGURED/"
     "model.ckpt.index; No such file or directory", "placeholder-path", "placeholder"),
    ("OSError: SavedModel file does not exist at: /path/to/saved_model/{saved_model.pbtxt|"
     "saved_model.pb}", "placeholder-path", "placeholder"),
    ("Exception: URL fetch failure on https://storage.googleapis.com/tensorflow/keras-"
     "applications/resnet/resnet50_weights_tf_dim_ordering_tf_kernels_notop.h5: None -- "
     "[Errno 110] Connection timed out", "keras-download-failed", "~/.keras/models"),
    ("OMP: Error #15: Initializing libomp.dylib, but found libiomp5.dylib already initialized.",
     "openmp-runtime-duplicate", "one source"),
    ("ModuleNotFoundError: No module named 'nets'", "tf-models-not-on-path", "PYTHONPATH"),
    ("2021-06-01 10:00:00.000000: F tensorflow/compiler/tf2tensorrt/stub/nvinfer_plugin_stub.cc:"
     "49] getInferLibVersion symbol not found.\nAborted (core dumped)", "tensorrt-missing",
     "libnvinfer"),
])
def test_rows_for_the_long_tail(text: str, label: str, words: str) -> None:
    ex = explain_log(text)
    assert ex.verdict == "failure"
    assert_reads(text, label, words)


def test_a_placeholder_in_a_help_text_is_no_error() -> None:
    text = "usage: train.py --dataset /path/to/dataset --weights coco\n"
    assert explain_log(text).verdict != "failure"


@pytest.mark.parametrize(("text", "label", "words"), [
    ("AttributeError: 'Sequential' object has no attribute 'predict_proba'", "attribute-error",
     "np.argmax"),
    ("ValueError: Exception encountered when calling layer \"max_pooling2d_3\" (type "
     "MaxPooling2D).\n\nComputed output size would be negative. Received: inputs shape=(None, 1, "
     "1, 128).", "value-error", "channels"),
    ("ValueError: A `Concatenate` layer requires inputs with matching shapes except for the "
     "concatenation axis. Received: input_shape=[(None, 88, 88, 128), (None, 89, 89, 128)]",
     "value-error", "2**levels"),
    ("ValueError: Layer weight shape (3, 3, 1, 64) not compatible with provided weight shape "
     "(3, 3, 3, 64)", "value-error", "by_name=True"),
    ("  File \"/usr/lib/python3/site-packages/keras/engine/keras_tensor.py\", line 268, in "
     "__hash__\nTypeError: Tensors are unhashable (this tensor: KerasTensor(type_spec=TensorSpec("
     "shape=(None, 4), dtype=tf.float32, name=None))). Instead, use tensor.ref() as the key.",
     "type-error", "TensorFlow 1"),
    ("tensorflow.python.framework.errors_impl.UnimplementedError: Generic conv implementation "
     "only supports NHWC tensor format for now.", "unimplemented-error", "channels last"),
    ("InvalidArgumentError: Default MaxPoolingOp only supports NHWC on device type CPU\n\t "
     "[[{{node max_pooling2d/MaxPool}}]]", "invalid-argument-error", "channels last"),
    ("tensorflow.python.framework.errors_impl.InternalError:  cuDNN launch failure : input shape"
     "([1,3,933,613]) filter shape([7,7,3,64])", "internal-error", "CUDA and cuDNN versions"),
    ("ValueError: Variable <tf.Variable 'dense/kernel:0' shape=(10, 1) dtype=float32> has `None`"
     " for gradient. Please make sure that all of your ops have a gradient defined (i.e. are "
     "differentiable). Common ops without gradient: K.argmax, K.round, K.eval.", "value-error",
     "argmax"),
    ("  File \"/usr/local/lib/python3.8/site-packages/tensorflow/python/keras/engine/"
     "data_adapter.py\", line 725, in __init__\nValueError: When providing an infinite dataset, "
     "you must specify the number of steps to run (if you did not intend to create an infinite "
     "dataset, make sure to not call `repeat()` on the dataset).", "value-error",
     "steps_per_epoch"),
    ("NotImplementedError: Layers with arguments in `__init__` must override `get_config`.",
     "not-implemented-error", "get_config"),
    ("InvalidArgumentError: No OpKernel was registered to support Op 'RoiAlign' used by node "
     "roi_align (defined at model.py:40) with these attrs: [T=DT_FLOAT]\nRegistered devices: "
     "[CPU, XLA_CPU], Registered kernels:\n  device='GPU'; T in [DT_FLOAT]",
     "invalid-argument-error", "no GPU"),
    ("tensorflow.python.framework.errors_impl.InternalError: CUDNN_STATUS_BAD_PARAM\nin "
     "tensorflow/stream_executor/cuda/cuda_dnn.cc(1773): 'cudnnSetTensorNdDescriptor'",
     "internal-error", "float32"),
])
def test_the_floor_ranks_the_cause_each_error_is_known_for(text: str, label: str,
                                                           words: str) -> None:
    assert_reads(text, label, words)


@pytest.mark.parametrize(("text", "label", "words"), [
    ("  File \"train.py\", line 60, in <module>\n    plt.plot(history.history['val_acc'])\n"
     "KeyError: 'val_acc'", "keras-metric-key-renamed", "'val_accuracy'"),
    ("  File \"/opt/conda/lib/python3.7/site-packages/keras/__init__.py\", line 6, in <module>\n"
     "    'Keras requires TensorFlow 2.2 or higher. '\nImportError: Keras requires TensorFlow 2.2 "
     "or higher. Install TensorFlow via `pip install tensorflow`", "keras-tf-version-mismatch",
     "Keras"),
    ("  File \"/usr/lib/python3.7/site-packages/tensorflow/python/keras/utils/generic_utils.py\", "
     "line 192, in deserialize_keras_object\nTypeError: __init__() got an unexpected keyword "
     "argument 'ragged'", "type-error", "newer TensorFlow"),
])
def test_keras_names_and_versions(text: str, label: str, words: str) -> None:
    assert_reads(text, label, words)


@pytest.mark.parametrize("kill", [
    "zsh: killed     python train.py",
    "./scripts/train.sh: line 40: 10644 Killed                  python src/main.py --bs=128",
])
def test_a_shell_reporting_a_sigkill_after_tensorflow_lines_is_the_oom_killer(kill: str) -> None:
    text = ("2019-11-12 08:28:17.093006: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1115] "
            "Created TensorFlow device (/job:localhost/replica:0/task:0/device:GPU:0 with 4900 MB "
            f"memory) -> physical GPU (device: 0, name: GeForce GTX 1080 Ti)\n{kill}\n")
    cause, lead = first_cause(text)
    assert cause.label == "process-crash"
    assert "out-of-memory killer" in lead


@pytest.mark.parametrize("text", [
    # TF 2.1-2.3 at start-up on machines without Hadoop (tensorflow/tensorflow#36141)
    "2020-01-22 20:21:52.312444: E tensorflow/core/platform/hadoop/hadoop_file_system.cc:132] "
    "HadoopFileSystem load error: libhdfs.so: cannot open shared object file: No such file or "
    "directory\nTensor(\"Sum:0\", shape=(), dtype=float32)",
    # the profiler's CUPTI, not needed to train (tensorflow/tensorflow#35860)
    "2020-05-06 22:12:04.677122: E tensorflow/core/profiler/internal/gpu/cupti_tracer.cc:1419] "
    "function cupti_interface_->Subscribe( &subscriber_, (CUpti_CallbackFunc)ApiCallback, this)"
    "failed with error CUPTI_ERROR_INSUFFICIENT_PRIVILEGES",
    "2021-03-01 10:00:00.000000: W tensorflow/stream_executor/platform/default/dso_loader.cc:60] "
    "Could not load dynamic library 'libcupti.so.11.0'; dlerror: libcupti.so.11.0: cannot open "
    "shared object file: No such file or directory",
    # grappler's own report on a graph with a loop (alibaba/EasyRec#163: ignore it)
    "2019-07-02 15:08:43.119749: E tensorflow/core/grappler/optimizers/dependency_optimizer.cc:697]"
    " Iteration = 1, topological sort failed with message: The graph couldn't be sorted in "
    "topological order.",
    # TF 1.x's Python INFO lines of an Estimator or a SavedModel export
    "INFO:tensorflow:Using MirroredStrategy with devices ('/job:localhost/replica:0/task:0/device:"
    "GPU:0',)\nINFO:tensorflow:Assets added to graph.\nINFO:tensorflow:SavedModel written to: "
    "export/1/saved_model.pb",
])
def test_benign_error_level_lines_are_nothing_wrong(text: str) -> None:
    """The base called the first four a failure or a logged error, and the last 'not
    recognised'."""
    assert explain_log(text).verdict == "nothing-wrong"


def test_an_info_line_that_reports_an_error_is_still_read() -> None:
    text = ("INFO:tensorflow:Error reported to Coordinator: <class 'tensorflow.python.framework."
            "errors_impl.OutOfRangeError'>, End of sequence\n")
    assert explain_log(text).verdict != "nothing-wrong"


@pytest.mark.parametrize(("text", "label", "words"), [
    ("ImportError: Could not find the DLL(s) 'msvcp140_1.dll'. TensorFlow requires that these DLLs "
     "be installed in a directory that is named in your %PATH% environment variable.",
     "msvc-runtime-missing", "Redistributable"),
    ("ImportError: dlopen(/opt/homebrew/lib/python3.10/site-packages/tensorflow/python/"
     "_pywrap_tensorflow_internal.so, 0x0002): tried: '/opt/homebrew/lib/python3.10/site-packages/"
     "tensorflow/python/_pywrap_tensorflow_internal.so' (mach-o file, but is an incompatible "
     "architecture (have 'x86_64', need 'arm64e'))\nFailed to load the native TensorFlow runtime.",
     "macos-wrong-architecture", "arm64"),
])
def test_platform_mismatches_at_import(text: str, label: str, words: str) -> None:
    assert_reads(text, label, words)


_KERAS = ("  File \"/usr/local/lib/python3.8/site-packages/tensorflow/python/keras/engine/"
          "training.py\", line 2376, in summary\n")


@pytest.mark.parametrize(("text", "label", "words"), [
    (_KERAS + "ValueError: This model has not yet been built. Build the model first by calling "
     "`build()` or calling `fit()` with some data, or specify an `input_shape` argument in the "
     "first layer(s) for automatic build.", "value-error", "input shape"),
    ("ValueError: Variable RNN/basic_lstm_cell/weights already exists, disallowed. Did you mean to "
     "set reuse=True in VarScope? Originally defined at:\n\n  File \"/usr/local/lib/python3.4/"
     "dist-packages/tensorflow/contrib/rnn/python/ops/core_rnn_cell_impl.py\", line 747, in "
     "_linear", "value-error", "reset_default_graph"),
    (_KERAS + "ValueError: Output tensors of a Functional model must be the output of a TensorFlow "
     "`Layer` (thus holding past layer metadata). Found: Tensor(\"truediv:0\")",
     "value-error", "Lambda"),
    (_KERAS + "KeyError: 'The optimizer cannot recognize variable conv1d_transpose_24/kernel:0. "
     "This usually means you are trying to call the optimizer to update different parts of the "
     "model separately.'", "key-error", "optimizer.build"),
    ("  File \"/usr/lib/python3/dist-packages/tensorflow/python/client/session.py\", line 227, in "
     "for_fetch\nTypeError: Fetch argument None has invalid type <class 'NoneType'>", "type-error",
     "merge_all"),
    ("absl.flags._exceptions.UnparsedFlagAccessError: Trying to access flag --model_dir before "
     "flags were parsed.", "absl-flags-unparsed", "app.run"),
])
def test_keras_and_tf1_usage_errors(text: str, label: str, words: str) -> None:
    assert_reads(text, label, words)


@pytest.mark.parametrize(("text", "label", "words"), [
    ("W tensorflow/core/framework/op_kernel.cc:1839] OP_REQUIRES failed at "
     "example_parsing_ops.cc:98 : INVALID_ARGUMENT: Feature: image/encoded (data type: string) "
     "is required but could not be found.", "invalid-argument-error", "feature description"),
    ("  File \"/usr/local/lib/python3.8/dist-packages/keras/utils/image_dataset.py\", line 238, in "
     "image_dataset_from_directory\nValueError: No images found in directory /content/data/train. "
     "Allowed formats: ('.bmp', '.gif', '.jpeg', '.jpg', '.png')", "value-error", "subfolders"),
    ("E tensorflow/stream_executor/cuda/cuda_driver.cc:981] failed to synchronize the stop event: "
     "CUDA_ERROR_LAUNCH_TIMEOUT: the launch timed out and was terminated", "cuda-error", "TDR"),
    ("tensorflow.python.framework.errors_impl.InvalidArgumentError: Cannot assign a device for "
     "operation MatMul: Could not satisfy explicit device specification '/device:GPU:0' because no "
     "devices matching that specification are registered in this process; available devices: "
     "/job:localhost/replica:0/task:0/device:CPU:0", "invalid-argument-error", "no GPU"),
])
def test_data_and_device_errors(text: str, label: str, words: str) -> None:
    assert_reads(text, label, words)


def test_a_failing_import_inside_standalone_keras_names_the_keras_release() -> None:
    text = ("Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n"
            "    from keras.models import Sequential\n  File \"/opt/conda/lib/python3.7/site-"
            "packages/keras/backend.py\", line 39, in <module>\n    from tensorflow.python.eager."
            "context import get_config\nImportError: cannot import name 'get_config' from "
            "'tensorflow.python.eager.context'\n")
    assert_reads(text, "tf-installs-mixed", "Standalone Keras is of another release")
