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
