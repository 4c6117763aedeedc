"""``tfperf explain`` on the long tail (issues 24 and 31): the floor under every error, versions
read from the log feeding the planner's tables, fragmentation told from size, host memory told
from device memory, and a log piped in without '-'."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from tfperf.cli import main
from tfperf.doctor.explainer import explain_log

DEVSET = Path(__file__).parent / "fixtures" / "explain_logs"
FIXTURES = Path(__file__).parent / "fixtures" / "explain"


def _devset(name: str):
    return explain_log((DEVSET / f"{name}.log").read_text(encoding="utf-8"))


# --- the floor: real wordings no knowledge row knows ----------------------------------------

# a TF1 matmul whose inputs disagree (matmul_op.cc wording), with its node line
MATMUL = ("InvalidArgumentError (see above for traceback): Matrix size-incompatible: In[0]: "
          "[32,784], In[1]: [512,10]\n"
          '\t [[Node: MatMul = MatMul[T=DT_FLOAT, transpose_a=false, transpose_b=false, _device="'
          '/job:localhost/replica:0/task:0/device:GPU:0"](Placeholder, Variable/read)]]')
# an OutOfRangeError raised at the first step of fit (TF 2 wording: the status on its own line)
EMPTY = ("Epoch 1/5\n"
         "Traceback (most recent call last):\n"
         '  File "train.py", line 30, in <module>\n'
         "    model.fit(ds, epochs=5)\n"
         '  File "/usr/lib/python3.10/site-packages/keras/engine/training.py", line 1184, in fit\n'
         "    tmp_logs = self.train_function(iterator)\n"
         "tensorflow.python.framework.errors_impl.OutOfRangeError: 2 root error(s) found.\n"
         "  (0) OUT_OF_RANGE:  End of sequence\n"
         "\t [[{{node IteratorGetNext}}]]")
# tensorflow/tensorflow#20069-style C++ CHECK (tensor_shape.cc wording)
CHECK = ("2018-06-14 10:01:02.123456: F tensorflow/core/framework/tensor_shape.cc:44] Check failed:"
         " NDIMS == dims() (2 vs. 3)Asking for tensor of 2 dimensions from a tensor of 3 "
         "dimensions\nAborted (core dumped)")
IMPORT = ("Traceback (most recent call last):\n"
          '  File "app.py", line 3, in <module>\n'
          "    from keras.engine import topology\n"
          "ModuleNotFoundError: No module named 'keras.engine'")


@pytest.mark.parametrize(("text", "cls", "likely", "detail"), [
    (MATMUL, "InvalidArgumentError", "feature size does not match",
     ["op MatMul (MatMul)", "device GPU:0", "[32,784]", "[512,10]", "DT_FLOAT"]),
    (EMPTY, "OutOfRangeError", "yields no element", ["your code: train.py:30 in <module>",
                                                     "at the first step"]),
    (CHECK, "CheckFailed", "rank or size", []),
    (IMPORT, "ModuleNotFoundError", "moved or was removed", ["app.py:3"]),
])
def test_a_log_holding_a_tensorflow_error_is_never_unrecognised(text, cls, likely, detail):
    ex = explain_log(text)
    assert ex.verdict == "failure" and ex.exit_status == 1
    top = ex.causes[0]
    assert (top.confidence, top.details["class"]) == ("low", [cls])
    assert likely in top.likely[0][0], top.likely
    assert 1 <= len(top.likely) <= 3
    for part in detail:
        assert part in top.detail, (part, top.detail)


def test_a_keras_value_error_reads_shapes_and_the_users_frame():
    log = (FIXTURES / "unrelated_traceback.log").read_text().replace(
        "Arguments `target` and `output` must have the same shape",
        "Input 0 of layer dense is incompatible with the layer: expected axis -1 of input shape "
        "to have value 10")
    top = explain_log(log).causes[0]
    assert top.label == "value-error" and top.confidence == "low"
    assert "fit.py:41 in <module>: model.fit(x, y, epochs=3)" in top.detail
    assert "(None, 1)" in top.detail and "(None, 10)" in top.detail
    assert "Input/input_shape" in top.likely[0][1]
    # the original message is one a row knows now: labels against the model's output
    known = explain_log((FIXTURES / "unrelated_traceback.log").read_text()).causes[0]
    assert (known.label, known.confidence) == ("labels-output-mismatch", "high")


def test_a_traceback_without_tensorflow_is_still_not_claimed():
    assert explain_log((FIXTURES / "non_tf_traceback.log").read_text()).verdict == "unrecognised"
    assert explain_log("Segmentation fault (core dumped)").verdict == "unrecognised"


def test_a_known_cause_outranks_the_floors_generic_reading():
    """tensorflow/tensorflow#42542: the thread is about the gradients warning; the TypeError
    after it gets only the generic reading, listed second."""
    ex = _devset("tf42542_gradients_missing_then_typeerror")
    assert [(c.label, c.confidence) for c in ex.causes] == [
        ("gradients-missing", "high"), ("type-error", "low")]
    assert ex.verdict == "failure"


def test_the_floor_never_fires_on_benign_logs_or_when_a_row_found_a_failure():
    import csv

    with (DEVSET / "index.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        ex = _devset(r["id"])
        low = [c for c in ex.causes if c.confidence == "low"]
        if r["expected"] == "none":
            assert not low, r["id"]
        if any(c.severity == "failure" and c.confidence == "high" for c in ex.causes):
            assert not low, r["id"]


# --- memory: fragmentation told from size, host RAM told from device memory -----------------

OOM = ("W tensorflow/core/common_runtime/bfc_allocator.cc:457] Allocator (GPU_0_bfc) ran out of "
       "memory trying to allocate 1.53GiB (rounded to 1638400000)requested by op Conv2D\n"
       "If the cause is memory fragmentation maybe the environment variable "
       "'TF_GPU_ALLOCATOR=cuda_malloc_async' will improve the situation. \n"
       "I tensorflow/core/common_runtime/bfc_allocator.cc:1010] Stats: \n"
       "Limit:                     10508668928\n"
       "InUse:                     {in_use}\n")


def test_fragmentation_is_told_from_size():
    fragmented = explain_log(OOM.format(in_use=2768000000))
    top = fragmented.causes[0]
    assert top.label == "gpu-memory-fragmentation" and top.severity == "failure"
    assert "TF_GPU_ALLOCATOR=cuda_malloc_async" in top.fix
    assert "7.21 GiB free" in top.detail and "1.53 GiB could not be allocated" in top.detail
    assert top.consequences == ["out-of-memory"]
    full = explain_log(OOM.format(in_use=10000000000)).causes[0]
    assert full.label == "out-of-memory" and "only 485.1 MiB free" in full.detail
    grown = explain_log(OOM.format(in_use=100) + "I bfc_allocator.cc:1004] "
                        "total_region_allocated_bytes_: 1073741824 memory_limit_: 10508668928 "
                        "available bytes: 0 curr_region_allocation_bytes_: 2147483648").causes[0]
    assert grown.label == "out-of-memory" and "could not grow" in grown.detail


def test_a_host_ram_oom_gets_host_advice_not_gpu_advice():
    # thtrieu/darkflow#873
    line = ("tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating "
            "tensor with shape[16,19,19,1024] and type float on /job:localhost/replica:0/task:0/"
            "device:CPU:0 by allocator cpu")
    top = explain_log(line).causes[0]
    assert top.label == "host-out-of-memory"
    assert top.detail == "tensor [16,19,19,1024] float = 22.6 MiB on CPU:0"
    assert "TF_FORCE_GPU_ALLOW_GROWTH" not in top.fix and "GPU advice" in top.fix
    gpu = line.replace("device:CPU:0 by allocator cpu", "device:GPU:0 by allocator GPU_0_bfc")
    assert explain_log(gpu).causes[0].label == "out-of-memory"


def test_nccl_all_reduce_on_windows_points_at_another_cross_device_op():
    top = _devset("tf33656_nccl_allreduce_windows_tf20").causes[0]
    assert top.label == "nccl-unavailable"
    assert "HierarchicalCopyAllReduce" in top.fix and top.detail == "op NcclAllReduce"


# --- versions read from the log feed the planner's tables -----------------------------------


@pytest.mark.parametrize(("text", "label", "install"), [
    ("ImportError: Could not find 'cudart64_100.dll'. TensorFlow requires that this DLL be "
     "installed in a directory that is named in your %PATH% environment variable.",
     "cuda-library-missing", "TensorFlow 1.13.0–2.0.0 (windows builds) were built with CUDA 10.0 "
                             "and cuDNN 7.4"),
    ('  File "/venv/lib/python3.10/site-packages/tensorflow-2.14.0.dist-info/x"\n'
     "A module that was compiled using NumPy 1.x cannot be run in\nNumPy 2.1.3 as it may crash.",
     "numpy-abi-mismatch", "pip install 'numpy<2' (NumPy 2.1.3 is installed): TensorFlow 2.14.0"),
    ("ERROR: Could not find a version that satisfies the requirement tensorflow==2.1.0 (from "
     "versions: 2.2.0rc1, 2.2.0rc2)", "no-tensorflow-wheel",
     "TensorFlow 2.1.0 has wheels for 64-bit Python 2.7, 3.5–3.7"),
    ("/home/u/venv/lib/python3.13/site-packages/pip/x.py\nERROR: No matching distribution found "
     "for tensorflow", "no-tensorflow-wheel",
     "Python 3.13: TensorFlow 2.20.0–2.21.0 have wheels for it: pip install 'tensorflow==2.21.0'"),
    ("C:\\Python314\\Lib\\site-packages\\pip\nERROR: No matching distribution found for "
     "tensorflow", "no-tensorflow-wheel", "no TensorFlow release has wheels for Python 3.14"),
    ("/usr/lib/python3.11/site-packages/tensorflow-2.15.1.dist-info\n"
     "tensorflow.python.framework.errors_impl.NotFoundError: /usr/lib/python3.11/site-packages/"
     "tensorflow_text/python/ops/_regex_split_ops.so: undefined symbol: _ZN10tensorflow8OpKernel",
     "tf-addon-version-mismatch", "pip install 'tensorflow-text==2.15.*'"),
    ("/opt/conda/lib/python3.7/site-packages/tensorflow-2.3.1.dist-info\nNotImplementedError: "
     "unable to open file: libtensorflow_io.so, from paths: ['/x/libtensorflow_io.so']",
     "tf-addon-version-mismatch", "pip install 'tensorflow-io==0.16.0' (built for TensorFlow 2.3)"),
])
def test_versions_read_from_the_log_name_what_to_install(text, label, install):
    top = explain_log(text).causes[0]
    assert top.label == label
    assert install in top.install, top.install


def test_install_advice_leads_the_summary_and_json(capsys):
    import json

    log = DEVSET / "tf31701_cudart64_100_dll_tf20beta.log"
    assert main(["explain", "--file", str(log), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["versions"] == {"os": "windows", "cuda": "10.0"}
    assert doc["causes"][0]["install"].startswith("the build asks for CUDA 10.0")
    assert "Fix: the build asks for CUDA 10.0" in doc["summary"]


# --- reading a pipe without '-' (issue 24) --------------------------------------------------


class _Stdin(io.StringIO):
    def __init__(self, text: str, tty: bool) -> None:
        super().__init__(text)
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


def test_a_pipe_is_read_without_dash(capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", _Stdin("E cuda_dnn.cc:329] Could not create cudnn handle: "
                                            "CUDNN_STATUS_INTERNAL_ERROR\n", tty=False))
    assert main(["explain"]) == 1
    assert capsys.readouterr().out.startswith("FAILURE cudnn-handle-failed")


@pytest.mark.parametrize(("stdin", "needle"), [
    (_Stdin("", tty=True), "pipe it in"),  # a terminal is never waited on
    (_Stdin("  \n", tty=False), "standard input was empty"),
    (None, "pipe it in")])
def test_nothing_to_explain_gives_one_usage_line(stdin, needle, capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", stdin)
    assert main(["explain"]) == 2
    err = capsys.readouterr().err
    assert "nothing to explain" in err and needle in err and "Traceback" not in err


def test_a_process_killed_by_the_os_reads_as_host_memory():
    log = ("2024-03-01 10:00:00.000000: I tensorflow/core/platform/cpu_feature_guard.cc:182] "
           "This TensorFlow binary is optimized to use available CPU instructions.\n"
           "Epoch 1/10\nKilled")
    top = explain_log(log).causes[0]
    assert (top.label, top.confidence) == ("process-crash", "low")
    assert "out-of-memory killer" in top.likely[0][0]


def test_a_cuda_status_in_an_info_line_is_not_an_error():
    line = ("2019-01-01 00:00:00.000000: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1"
            "] CUDA_ERROR_NOT_INITIALIZED seen while probing")
    assert all(c.confidence == "high" for c in explain_log(line).causes)
    assert explain_log(line.replace(": I ", ": E ")).causes[0].label == "cuda-error"


@pytest.mark.parametrize(("line", "label", "install"), [
    ("AttributeError: module 'numpy' has no attribute 'object'.", "numpy-too-new-for-tf",
     "pip install 'numpy<1.24'"),
    ("AttributeError: module 'google.protobuf.descriptor' has no attribute "
     "'_internal_create_key'", "protobuf-incompatible", "pip install 'protobuf==3.20.*'"),
])
def test_more_version_wordings(line, label, install):
    top = explain_log(line).causes[0]
    assert top.label == label and install in top.install


def test_the_more_specific_condition_ranks_first():
    line = ("tensorflow.python.framework.errors_impl.FailedPreconditionError: Could not find "
            "variable dense/kernel. This could mean that the variable has been deleted. In TF1, "
            "it can also mean the variable is uninitialized.")
    top = explain_log(line).causes[0]
    assert top.likely[0][0].startswith("A variable was used after its owner was deleted")
    assert top.likely[1][0].startswith("A TF1-style variable was read before")


# --- the third held-out round's misses, each fixed generally and tested on another thread ----

@pytest.mark.parametrize("text", [
    # tensorflow/tensorflow#580: bash's job report, the command after the core-dump note
    'external/bazel_tools/tools/test/test-setup.sh: line 52:  7125 Illegal instruction     '
    '(core dumped) "$@"',
    # tensorflow/tensorflow#43670: a French shell, after the command it ran
    "(venv) (base) razafimandimby@razafimandimby-Lenovo-G50-30:~$ python3 -c 'import tensorflow "
    "as tf; print(tf._version_)' Instruction non permise (core dumped)",
])
def test_an_illegal_instruction_followed_or_preceded_by_more_text_is_the_cpu(text):
    top = explain_log(text).causes[0]
    assert (top.label, top.confidence) == ("cpu-missing-instructions", "high")


@pytest.mark.parametrize(("line", "label", "isa"), [
    # mozilla/DeepSpeech#1023 (maintainer: the AVX2+FMA build was turned off for such CPUs)
    ("2017-12-15 22:17:31.710780: F tensorflow/core/platform/cpu_feature_guard.cc:35] The "
     "TensorFlow library was compiled to use AVX2 instructions, but these aren't available on "
     "your machine.", "cpu-missing-avx2", "AVX2"),
    # NVIDIA/TensorRT#2880: no AVX at all is the other cause
    ("The TensorFlow library was compiled to use AVX instructions, but these aren't available on "
     "your machine", "cpu-missing-instructions", "AVX"),
    # Zeta36/tensorflow-tex-wavenet#8: pasted from a rendered page (a typographic apostrophe)
    ("The TensorFlow library was compiled to use AVX instructions, but these aren’t available on "
     "your machine.", "cpu-missing-instructions", "AVX"),
])
def test_a_build_for_a_newer_cpu_is_told_from_a_cpu_without_avx(line, label, isa):
    top = explain_log(line + "\nAborted (core dumped)").causes[0]
    assert top.label == label and top.details["isa"] == [isa]
    if label == "cpu-missing-avx2":
        assert "official pip wheel" in top.fix and "TF 1.5" not in top.fix
        assert "AVX only" in top.cause


@pytest.mark.parametrize(("text", "install"), [
    # microsoft/tensorflow-directml-plugin#367 (tensorflow-cpu 2.12 with the plugin's last
    # release; a commenter: it works with TF <= 2.10)
    ("tfdml_plugin.dll not found", "pip install 'tensorflow-cpu==2.10.*'"),
    # tensorflow/models#10617: a plugin in tensorflow-plugins with a missing TF symbol
    ("tensorflow.python.framework.errors_impl.NotFoundError: dlopen(/Users/user/env/miniforge3/"
     "lib/python3.9/site-packages/tensorflow-plugins/libmetal_plugin.dylib, 0x0006): symbol not "
     "found in flat namespace '_TF_AllocateOutput'", "tensorflow-metal release made for"),
])
def test_a_pluggable_device_built_for_another_tensorflow(text, install):
    top = explain_log(text).causes[0]
    assert (top.label, top.confidence) == ("tf-addon-version-mismatch", "high")
    assert install in top.install, top.install


@pytest.mark.parametrize(("text", "detail"), [
    # taki0112/UGATIT#48 (reporter: the wrong checkpoint folder)
    ("tensorflow.python.framework.errors_impl.InvalidArgumentError: Assign requires shapes of both"
     " tensors to match. lhs shape= [256,256] rhs shape= [1048576,256]\n"
     "         [[{{node save/Assign_105}}]]\n"
     "tensorflow.python.framework.errors_impl.InvalidArgumentError: Restoring from checkpoint "
     "failed. This is most likely due to a mismatch between the current graph and", ""),
    # tangyuhao/GOTURN-Tensorflow#21
    ("NotFoundError: Restoring from checkpoint failed. This is most likely due to a Variable name "
     "or other graph key that is missing from the checkpoint. Please ensure that you have not "
     "altered the graph expected based on the checkpoint. Original error:\n\n"
     "Key fc1_1/biases not found in checkpoint", "key fc1_1/biases not in the checkpoint"),
    # tuvovan/NHDRRNet#10 (maintainer: the weights file does not match the model)
    ("ValueError: You are trying to load a weight file containing 77 layers into a model with 78 "
     "layers.", "the file has 77 layers, the model 78"),
])
def test_a_checkpoint_that_does_not_match_the_model(text, detail):
    top = explain_log(text).causes[0]
    assert (top.label, top.confidence) == ("checkpoint-mismatch", "high")
    assert detail in top.detail and "checkpoint this model saved" in top.fix


@pytest.mark.parametrize(("text", "variable"), [
    # tensorflow/tensorflow#28041: the reporter's code runs the initializer before the model
    ("FailedPreconditionError: Attempting to use uninitialized value dense_2/bias [[node "
     "dense_2/bias/read (defined at C:/Users/x/rl.py:60) ]]", "dense_2/bias"),
    # maples1993/Cats_vs_Dogs#2 (running the initializer fixed it)
    ("FailedPreconditionError (see above for traceback): Attempting to use uninitialized value "
     "conv1/weights\n         [[node conv1/weights/read (defined at D:\\cats\\model.py:11) ]]",
     "conv1/weights"),
])
def test_an_uninitialised_variable_names_the_initializer_run_too_early(text, variable):
    top = explain_log(text).causes[0]
    assert (top.label, top.confidence) == ("uninitialized-variable", "high")
    assert top.details["variable"] == [variable]
    assert top.fix.startswith("Build the whole graph first")
    assert "before part of the graph was built" in top.cause


def test_the_driver_older_than_ptxas_is_a_compile_time_warning_with_the_driver_to_install():
    # jax-ml/jax#19821 (the same XLA check TensorFlow's XLA prints)
    line = ("2024-02-15 14:18:20.201828: W external/xla/xla/service/gpu/nvptx_compiler.cc:744] The "
            "NVIDIA driver's CUDA version is 12.2 which is older than the ptxas CUDA version "
            "(12.3.107). Because the driver is older than the ptxas version, XLA is disabling "
            "parallel compilation, which may slow down compilation. You should update your NVIDIA "
            "driver or use the NVIDIA-provided CUDA forward compatibility packages.")
    ex = explain_log(line)
    assert ex.verdict == "warning" and ex.exit_status == 1
    top = ex.causes[0]
    assert (top.label, top.severity) == ("xla-driver-older-than-ptxas", "warning")
    assert top.detail == "the driver's CUDA 12.2; ptxas 12.3.107"
    assert top.install.startswith("an NVIDIA driver >= 545.23.06 (linux), the minimum for "
                                  "CUDA 12.3")


def test_a_host_allocation_then_a_kill_is_host_memory_and_alone_only_a_notice():
    # tensorflow/tensorflow#36429 (maintainer: the model cannot fit into the memory)
    killed = ("2020-02-01 11:57:36.437688: W tensorflow/core/framework/cpu_allocator_impl.cc:81] "
              "Allocation of 10616832 exceeds 10% of system memory.\nKilled")
    top = explain_log(killed).causes[0]
    assert (top.label, top.severity, top.confidence) == ("host-out-of-memory", "failure", "high")
    assert top.consequences == ["large-host-allocation"]
    assert "10.1 MiB (line 1), then the process was killed (line 2)" in top.detail
    # YunYang1994/tensorflow-yolov3#310: a zh_CN shell's 'Killed' after a progress bar (a
    # commenter: the machine is too small, lower the batch size)
    zh = ("W tensorflow/core/framework/allocator.cc:107] Allocation of 132907008 exceeds 10% of "
          "system memory.\ntrain loss: 4116.41:  10%|██▍        已杀死")
    assert explain_log(zh).causes[0].label == "host-out-of-memory"
    # tensorflow/tensorflow#18735: the line alone (a large allocation, the run goes on)
    alone = explain_log("tensorflow/core/framework/allocator.cc:101] Allocation of 9782001216 "
                        "exceeds 10% of system memory.")
    assert alone.verdict == "nothing-wrong"
    assert [(c.label, c.severity) for c in alone.causes] == [("large-host-allocation", "notice")]
    assert "stalls" in alone.causes[0].fix and alone.causes[0].fix.endswith("free memory.")
    assert alone.causes[0].see == "tfperf profile (memory per op)"
