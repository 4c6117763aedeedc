"""Stop 40's mechanisms (the ``rounds40`` split), on other wordings than the split's logs: a run
that went on is not a failure, the floor and the rows read the message's numbers and the log's
code (position ids past the table, an unbatched validation set, an iterator's next element, a
gather on a computed tensor), versions that exist (a Keras for a TF 1.x), an illegal instruction
named in a sentence, DirectML's missing Direct3D 12 under WSL. And VALID twins: the same lines
where the run did fail, ids that are no positions, a validation set that is batched.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tfperf.doctor.explainer import explain_log

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from score_explain import first_explanation

_BFC = ("2021-03-04 10:11:12.345678: W tensorflow/core/common_runtime/bfc_allocator.cc:248] "
        "Allocator (GPU_0_bfc) ran out of memory trying to allocate 2.31GiB with "
        "freed_by_count=0.\n")
_DTYPE = ("/usr/lib/python3/dist-packages/h5py/__init__.py:36: RuntimeWarning: numpy.ndarray "
          "size changed, may indicate binary incompatibility. Expected 80 from C header, got 88 "
          "from PyObject\n  from ._conv import register_converters\n")


def _first(text: str) -> tuple[str, str, str]:
    ex = explain_log(text)
    assert ex.causes, ex.verdict
    return ex.causes[0].label, ex.causes[0].severity, first_explanation(ex.causes[0])


def test_the_allocators_retry_line_in_a_run_that_goes_on_is_a_note() -> None:
    ex = explain_log(_BFC + "Epoch 2/10\n120/120 [==============================] - 31s 258ms/step"
                     " - loss: 0.4123 - accuracy: 0.8712\n")
    assert ex.verdict == "nothing-wrong"
    assert ex.causes[0].label == "gpu-memory-pressure"
    assert "not a failure" in ex.causes[0].cause


def test_the_allocators_retry_line_alone_is_a_note_not_an_oom() -> None:
    ex = explain_log(_BFC + _BFC.replace("2.31GiB", "1.12GiB"))
    assert ex.verdict == "nothing-wrong"
    assert ex.causes[0].severity == "notice"


@pytest.mark.parametrize("after", [
    "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor "
    "with shape[64,512,56,56] and type float on /job:localhost/replica:0/task:0/device:GPU:0\n",
    "Killed\n",
])
def test_the_same_line_before_an_error_stays_the_failure(after: str) -> None:
    label, severity, _ = _first(_BFC + after)
    assert severity == "failure"
    assert label in ("out-of-memory", "host-out-of-memory")


def test_a_numpy_size_warning_in_a_run_that_trains_is_not_the_cause() -> None:
    ex = explain_log(_DTYPE + "Using TensorFlow backend.\nEpoch 1/3\n60000/60000 [=====] - 12s "
                     "- loss: 0.2012 - acc: 0.9401\nSaved model to disk\n")
    assert not ex.problems
    assert all("pip install" not in c.install for c in ex.causes)


def test_a_numpy_size_warning_before_an_import_error_stays_the_failure() -> None:
    label, severity, _ = _first(_DTYPE + "Traceback (most recent call last):\n  File \"run.py\", "
                                "line 1, in <module>\n    import tensorflow as tf\nImportError: "
                                "numpy.core.multiarray failed to import\n")
    assert (label, severity) == ("numpy-abi-mismatch", "failure")


@pytest.mark.parametrize("message", [
    "InvalidArgumentError: indices[2,1030] = 1030 is not in [0, 1024)\n\t [[node "
    "model/embeddings/GatherV2 (defined at train.py:88) ]] [Op:__inference_train_function_9]\n",
    "tensorflow.python.framework.errors_impl.InvalidArgumentError: indices[0,512] = 512 is not "
    "in [0, 512) [Op:ResourceGather] name: tf_bert_model/bert/embeddings/Gather_1\n",
])
def test_position_ids_past_the_table_are_truncated_not_a_bigger_input_dim(message: str) -> None:
    label, _, first = _first(message)
    assert label == "embedding-index-out-of-range"
    assert "Truncate" in first and "input_dim" not in first.split("Otherwise")[0]


def test_a_word_id_past_the_vocabulary_keeps_the_input_dim_fix() -> None:
    label, _, first = _first("InvalidArgumentError: indices[5,3] = 20001 is not in [0, 20000)"
                             "\n\t [[node sequential/embedding/embedding_lookup ]]\n")
    assert label == "embedding-index-out-of-range"
    assert "input_dim" in first and "Truncate" not in first


_FIT = ("train = tf.data.Dataset.from_tensor_slices((xt, yt)).shuffle(1000).batch(64)\n"
        "{valid_line}\n"
        "model.fit(train, validation_data=valid, epochs=20)\n"
        "Epoch 1/20\n"
        "ValueError: Input 0 of layer conv2d is incompatible with the layer: expected min_ndim=4, "
        "found ndim=3. Full shape received: [28, 28, 1]\n")


def test_an_unbatched_validation_dataset_is_named() -> None:
    label, _, first = _first(_FIT.format(
        valid_line="valid = tf.data.Dataset.from_tensor_slices((xv, yv))"))
    assert label == "input-shape-mismatch"
    assert "'valid'" in first and "valid.batch(" in first


def test_a_batched_validation_dataset_is_not_blamed() -> None:
    _, _, first = _first(_FIT.format(
        valid_line="valid = tf.data.Dataset.from_tensor_slices((xv, yv)).batch(64)"))
    assert "never batched" not in first


_ITER = ('Traceback (most recent call last):\n  File "train.py", line 52, in <module>\n'
         "    for images, labels in ds:\n"
         '  File "/usr/lib/python3.9/site-packages/tensorflow/python/data/ops/iterator_ops.py", '
         "line 800, in __next__\n    return self._next_internal()\n"
         '  File "/usr/lib/python3.9/site-packages/tensorflow/python/ops/gen_dataset_ops.py", '
         "line 3017, in {fn}\n    _ops.raise_from_not_ok_status(e, name)\n"
         "tensorflow.python.framework.errors_impl.InvalidArgumentError: {{{{function_node "
         "__wrapped__{op}_device_/job:localhost/replica:0/task:0/device:CPU:0}}}} see the node "
         "above\n")


def test_an_error_out_of_the_iterators_next_element_reads_as_batching() -> None:
    ex = explain_log(_ITER.format(fn="iterator_get_next", op="IteratorGetNext"))
    cause = ex.causes[0]
    assert cause.confidence == "low"
    assert "different shapes" in first_explanation(cause)


def test_the_same_class_elsewhere_keeps_its_general_reading() -> None:
    ex = explain_log(_ITER.format(fn="mat_mul", op="MatMul").replace(
        "data/ops/iterator_ops.py", "ops/math_ops.py").replace("_next_internal", "matmul"))
    assert "different shapes" not in first_explanation(ex.causes[0])


@pytest.mark.parametrize("text", [
    "Every time I run python -c 'import tensorflow' I get illegal instruction and python "
    "exits.\n",
    "Importing TensorFlow 2.4 in a Proxmox VM fails with \"Illegal instruction\" and nothing "
    "else.\n",
])
def test_an_illegal_instruction_named_in_a_sentence_is_a_cpu_without_avx(text: str) -> None:
    label, _, first = _first(text)
    assert label == "cpu-missing-instructions"
    assert "AVX" in first


def test_directml_without_wsl_d3d12_names_the_windows_build() -> None:
    label, _, first = _first("  File \"/home/u/.local/lib/python3.6/site-packages/tensorflow_core"
                             "/python/pywrap_tensorflow.py\", line 28, in <module>\n"
                             "OSError: libdxcore.so: cannot open shared object file: No such "
                             "file or directory\n")
    assert label == "directml-wsl-no-d3d12"
    assert "WSL" in first and "driver" in first


def test_a_gather_on_a_computed_tensor_is_told_to_slice() -> None:
    label, _, first = _first(
        "    pooled = tf.gather(hidden, seq_len - 1)\n"
        "/opt/conda/lib/python3.7/site-packages/tensorflow/python/ops/gradients_util.py:93: "
        "UserWarning: Converting sparse IndexedSlices to a dense Tensor of unknown shape. This "
        "may consume a large amount of memory.\n")
    assert label == "indexed-slices-dense"
    assert "hidden[-1]" in first


def test_the_sparse_warning_alone_keeps_its_general_reading() -> None:
    _, _, first = _first("UserWarning: Converting sparse IndexedSlices to a dense Tensor of "
                         "unknown shape. This may consume a large amount of memory.\n")
    assert "static slice" not in first


def test_keras_refusing_an_old_tf_names_a_keras_that_exists() -> None:
    ex = explain_log("Using TensorFlow backend.\nImportError: Keras requires TensorFlow 2.2 or "
                     "higher. Install TensorFlow via `pip install tensorflow`\n")
    install = ex.causes[0].install
    assert "keras==2.3.1" in install and "keras==1." not in install


def test_keras_for_tf_1_12_is_keras_2_2_5() -> None:
    ex = explain_log("tensorflow==1.12.0\nkeras==2.4.3\nImportError: Keras requires TensorFlow "
                     "2.2 or higher. Install TensorFlow via `pip install tensorflow`\n")
    assert "keras==2.2.5" in ex.causes[0].install


def test_a_pin_between_released_versions_was_never_released() -> None:
    label, _, first = _first(
        "$ pip install tensorflow-text==2.4.5\nERROR: Could not find a version that satisfies "
        "the requirement tensorflow-text==2.4.5 (from versions: 2.3.0, 2.4.1, 2.4.3, 2.5.0)\n"
        "ERROR: No matching distribution found for tensorflow-text==2.4.5\n")
    assert label == "no-tensorflow-wheel"
    # review 40: no table says tensorflow-text 2.4.5 does not exist: a wheel missing here
    assert "no wheel for this Python/platform" in first and "2.4.3" in first and "2.5.0" in first


def test_a_keras_pin_copied_from_tensorflows_version_names_the_keras_of_that_tf() -> None:
    _, _, first = _first(
        "pip install keras==1.14\nERROR: Could not find a version that satisfies the requirement "
        "keras==1.14 (from versions: 0.3.3, 1.0.8, 1.2.2, 2.0.9, 2.2.5, 2.3.1, 2.4.3)\n")
    assert "never released" in first and "keras==2.3.1" in first


def test_a_pin_newer_than_every_listed_release_stays_a_python_question() -> None:
    _, _, first = _first(
        "ERROR: Could not find a version that satisfies the requirement tensorflow==2.16.1 (from "
        "versions: 2.2.0, 2.3.0, 2.4.0)\nERROR: No matching distribution found for "
        "tensorflow==2.16.1\n")
    assert "never released" not in first


@pytest.mark.parametrize("line", [
    "RuntimeError: loading this checkpoint requires TensorFlow 2.3 or higher\n",
    "Error: tensorflow version >= 1.15 is required for this op\n",
])
def test_a_version_the_message_requires_is_read_as_too_old(line: str) -> None:
    ex = explain_log(line)
    assert "names the version it needs" in first_explanation(ex.causes[0])


def test_a_self_check_that_cannot_load_the_msvc_runtime_names_the_redistributable() -> None:
    ex = explain_log(
        'Traceback (most recent call last):\n  File "C:\\\\Python38\\\\lib\\\\site-packages\\\\'
        'tensorflow\\\\python\\\\platform\\\\self_check.py", line 50, in preload_check\n'
        "    ctypes.WinDLL(build_info.msvcp_dll_name)\n"
        '  File "C:\\\\Python38\\\\lib\\\\ctypes\\\\__init__.py", line 373, in __init__\n'
        "    self._handle = _dlopen(self._name, mode)\n"
        "OSError: [WinError 126] The specified module could not be found\n")
    assert "Visual C++ Redistributable" in first_explanation(ex.causes[0])


def test_an_oserror_of_another_frame_keeps_its_general_reading() -> None:
    ex = explain_log('Traceback (most recent call last):\n  File "/usr/lib/python3.8/site-'
                     'packages/tensorflow/python/saved_model/loader_impl.py", line 113, in '
                     "parse_saved_model\n    raise IOError(\n"
                     "OSError: SavedModel file does not exist at: ./export/1/{saved_model.pbtxt|"
                     "saved_model.pb}\n")
    assert "Visual C++" not in first_explanation(ex.causes[0])


def test_a_file_system_scheme_line_without_a_class_is_tensorflows() -> None:
    ex = explain_log("I1203 10:00:01 training_loop: Error recorded from infeed: File system "
                     "scheme '[local]' not implemented (file: '/tmp/data/train-0001.tfrecord')\n")
    assert ex.verdict == "failure"
    assert "gs://" in first_explanation(ex.causes[0])


def test_pfor_falling_back_on_random_ops_names_the_augmentation_layers() -> None:
    label, _, first = _first(
        "WARNING:tensorflow:Using a while_loop for converting StatelessRandomGetKeyCounter cause "
        "there is no registered converter for this op.\n"
        "WARNING:tensorflow:Using a while_loop for converting ImageProjectiveTransformV3 cause "
        "there is no registered converter for this op.\nEpoch 1/30\n")
    assert label == "vectorized-map-fallback"
    assert "augmentation" in first and "dataset.map" in first


def test_pfor_falling_back_on_another_op_keeps_its_general_reading() -> None:
    _, _, first = _first("WARNING:tensorflow:Using a while_loop for converting MatrixDiagPartV3 "
                         "cause there is no registered converter for this op.\n")
    assert "augmentation" not in first


def test_condas_package_list_after_a_blank_line_is_part_of_its_message() -> None:
    label, _, first = _first(
        "(tf) $ conda install tensorflow==1.14\nSolving environment: failed\n\n"
        "PackagesNotFoundError: The following packages are not available from current channels:"
        "\n\n  - tensorflow==1.14\n\nCurrent channels:\n\n"
        "  - https://repo.anaconda.com/pkgs/main/linux-aarch64\n")
    assert label == "packages-not-found-error"
    assert "conda search" in first


_DLL = ("Traceback (most recent call last):\n  File \"C:\\\\Anaconda3\\\\lib\\\\site-packages\\\\"
        "tensorflow\\\\python\\\\pywrap_tensorflow.py\", line 18, in swig_import_helper\n"
        "ImportError: DLL load failed: The specified module could not be found.\n")


def test_the_gpu_package_without_cuda_named_leads_with_the_cpu_package() -> None:
    label, _, first = _first("pip install --upgrade tensorflow_gpu==1.4.0\n" + _DLL)
    assert label == "windows-dll-load-failed"
    assert "pip install tensorflow (the CPU package)" in first


def test_the_gpu_package_with_its_cuda_dll_named_keeps_the_dll_reading() -> None:
    _, _, first = _first("pip install tensorflow-gpu==1.13.1\nCould not find 'cudart64_100.dll'. "
                         "TensorFlow requires that this DLL be installed in a directory that is "
                         "named in your %PATH% environment variable.\n" + _DLL)
    assert "(the CPU package)" not in first


def test_a_windows_w_line_of_the_allocator_in_a_run_that_goes_on_is_a_note() -> None:
    ex = explain_log("2019-01-10 12:00:01.000001: W C:\\users\\nwani\\_bazel_nwani\\execroot\\"
                     "tensorflow\\core\\common_runtime\\bfc_allocator.cc:211] Allocator "
                     "(GPU_0_bfc) ran out of memory trying to allocate 3.71GiB with "
                     "freed_by_count=0.\n"
                     "Epoch 3/50\n")
    assert ex.verdict == "nothing-wrong"


def test_a_gpu_library_that_did_not_load_in_a_run_that_goes_on_is_not_demoted() -> None:
    ex = explain_log("2021-05-01 10:00:00.000001: W tensorflow/stream_executor/platform/default/"
                     "dso_loader.cc:60] Could not load dynamic library 'libcudnn.so.8'; dlerror: "
                     "libcudnn.so.8: cannot open shared object file: No such file or directory\n"
                     "2021-05-01 10:00:00.100000: I tensorflow/core/common_runtime/gpu/"
                     "gpu_device.cc:1733] Found device 0 with properties: pciBusID: 0000:01:00.0 "
                     "name: GeForce RTX 2080 Ti computeCapability: 7.5\n"
                     "2021-05-01 10:00:00.200000: W tensorflow/core/common_runtime/gpu/"
                     "gpu_device.cc:1766] Cannot dlopen some GPU libraries. Please make sure the "
                     "missing libraries mentioned above are installed properly if you would like "
                     "to use GPU.\n"
                     "Epoch 1/10\n100/100 [==============================] - 40s 400ms/step - "
                     "loss: 0.6931\n")
    assert ex.causes[0].severity == "failure"


@pytest.mark.parametrize(("python", "said"), [("3.14.0", "newer than every Python"),
                                              ("3.9.7", "32-bit Python")])
def test_no_release_offered_at_all_reads_the_python_the_log_names(python: str, said: str) -> None:
    _, _, first = _first(f"$ python -V\nPython {python}\n$ pip install tensorflow\nERROR: Could "
                         "not find a version that satisfies the requirement tensorflow (from "
                         "versions: none)\nERROR: No matching distribution found for tensorflow\n")
    assert said in first


def test_no_release_offered_without_a_python_named_keeps_the_general_reading() -> None:
    _, _, first = _first("ERROR: Could not find a version that satisfies the requirement "
                         "tensorflow (from versions: none)\n")
    assert "although releases" not in first and "newer than every" not in first
