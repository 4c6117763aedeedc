"""``tfperf explain``: realistic TensorFlow logs → causes and fixes, most important first."""

from __future__ import annotations

import io
import json
from pathlib import Path

import jsonschema
import pytest

from tfperf.cli import main
from tfperf.doctor.explain import explain_text
from tfperf.doctor.knowledge import error_patterns

FIXTURES = Path(__file__).parent / "fixtures" / "explain"

EXPLAIN_SCHEMA = {
    "type": "object",
    "required": ["matches", "recognised", "lines", "summary", "exit_status"],
    "properties": {
        "recognised": {"type": "boolean"},
        "lines": {"type": "integer", "minimum": 0},
        "matches": {"type": "array", "items": {
            "type": "object",
            "required": ["id", "cause", "fix", "line", "line_number", "severity", "benign",
                         "source", "count"],
            "properties": {"id": {"type": "string"}, "cause": {"type": "string", "minLength": 1},
                           "fix": {"type": "string"}, "line": {"type": "string"},
                           "line_number": {"type": "integer", "minimum": 1},
                           "severity": {"enum": ["error", "warning", "info"]},
                           "benign": {"type": "boolean"},
                           "count": {"type": "integer", "minimum": 1}}}},
        "exit_status": {"enum": [0, 1]},
    },
}

# One real-looking line per pattern: every pattern must catch its own example, as the first
# pattern that matches (so a broad pattern never hides a specific one).
EXAMPLES = {
    "dlopen-failed": "W dso_loader.cc:64] Could not load dynamic library 'libcudnn.so.8'; "
                     "dlerror: libcudnn.so.8: cannot open shared object file",
    "gpu-libraries-skipped": "W gpu_device.cc:1850] Cannot dlopen some GPU libraries. Please "
                             "make sure the missing libraries mentioned above are installed",
    "cuda-runtime-not-found": "I cudart_stub.cc:28] Could not find cuda drivers on your "
                              "machine, GPU will not be used.",
    "cudart-stub-hint": "I cudart_stub.cc:29] Ignore above cudart dlerror if you do not have a "
                        "GPU set up on your machine.",
    "cudnn-version-mismatch": "E cuda_dnn.cc:535] Loaded runtime CuDNN library: 9.1.0 but "
                              "source was compiled with: 9.3.0.  CuDNN library needs to have "
                              "matching major version and equal or higher minor version.",
    "dnn-library-not-found": "FAILED_PRECONDITION: DNN library initialization failed.",
    "factory-already-registered": "E cuda_blas.cc:1418] Unable to register cuBLAS factory: "
                                  "Attempting to register factory for plugin cuBLAS when one "
                                  "has already been registered",
    "ptx-jit-compile": "W gpu_device.cc:2344] TensorFlow was not built with CUDA kernel "
                       "binaries compatible with compute capability 12.0a. CUDA kernels will "
                       "be jit-compiled from PTX, which could take 30 minutes or longer.",
    "no-kernel-image": "CUDA error: no kernel image is available for execution on the device",
    "gpu-ignored-compute-capability": "I gpu_device.cc:2019] Ignoring visible gpu device "
                                      "(device: 0, name: Tesla M60) with Cuda compute "
                                      "capability 5.2. The minimum required Cuda capability "
                                      "is 6.0.",
    "gpu-ignored-core-count": "I gpu_device.cc:1886] Ignoring visible gpu device (device: 1) "
                              "with core count: 2. The minimum required count is 8. You can "
                              "adjust this requirement with the env var "
                              "TF_MIN_GPU_MULTIPROCESSOR_COUNT.",
    "cuinit-no-device": "E cuda_driver.cc:266] failed call to cuInit: CUDA_ERROR_NO_DEVICE: no "
                        "CUDA-capable device is detected",
    "cuinit-driver-failure": "E cuda_driver.cc:282] failed call to cuInit: UNKNOWN ERROR (303)",
    "driver-insufficient": "CUDA driver version is insufficient for CUDA runtime version",
    "unsupported-ptx-version": "'cuModuleLoadData(&module, data)' failed with "
                               "'CUDA_ERROR_UNSUPPORTED_PTX_VERSION'",
    "libdevice-not-found": "W libdevice not found at ./libdevice.10.bc",
    "ptxas-problem": "W Can't find ptxas binary in ${CUDA_DIR}/bin.  Will back to the GPU "
                     "driver for PTX -> sass compilation.",
    "tensorrt-not-found": "W py_utils.cc:38] TF-TRT Warning: Could not find TensorRT",
    "numa-node": "I cuda_executor.cc:1015] successful NUMA node read from SysFS had negative "
                 "value (-1), but there must be at least one NUMA node",
    "and-cuda-tensorrt-pin": "ERROR: ResolutionImpossible: ... tensorrt==8.6.1.post1",
    "kernel-driver-not-running": "E cuda_diagnostics.cc:204] kernel driver does not appear to "
                                 "be running on this host (gpu01): /proc/driver/nvidia/version "
                                 "does not exist",
    "driver-dso-mismatch": "E cuda_diagnostics.cc:312] kernel version 535.104.5 does not match "
                           "DSO version 545.23.6 -- cannot find working devices",
    "conv-algorithm-failed": "UnknownError: Failed to get convolution algorithm. This is "
                             "probably because cuDNN failed to initialize, so try looking to "
                             "see if a warning log message was printed above.",
    "cudnn-handle-failed": "E cuda_dnn.cc:329] Could not create cudnn handle: "
                           "CUDNN_STATUS_INTERNAL_ERROR",
    "out-of-memory": "ResourceExhaustedError: OOM when allocating tensor with shape[64,512]",
    "allocator-ran-out-warning": "W bfc_allocator.cc:290] Allocator (GPU_0_bfc) ran out of "
                                 "memory trying to allocate 2.26GiB with freed_by_count=0. The "
                                 "caller indicates that this is not a failure, but this may "
                                 "mean that there could be performance gains",
    "cpu-feature-guard": "I cpu_feature_guard.cc:142] This TensorFlow binary is optimized with "
                         "oneAPI Deep Neural Network Library (oneDNN) to use the following CPU "
                         "instructions in performance-critical operations:  AVX2 FMA",
    "cpu-missing-instructions": "F cpu_feature_guard.cc:37] The TensorFlow library was "
                                "compiled to use AVX instructions, but these aren't available "
                                "on your machine.",
    "onednn-notice": "I port.cc:113] oneDNN custom operations are on. You may see slightly "
                     "different numerical results",
    "gpu-device-created": "I gpu_device.cc:1928] Created device "
                          "/job:localhost/replica:0/task:0/device:GPU:0 with 22259 MB memory",
    "library-opened": "I dso_loader.cc:53] Successfully opened dynamic library libcudart.so.11.0",
    "jax-no-gpu": "WARNING:jax._src.xla_bridge:No GPU/TPU found, falling back to CPU.",
}


def test_every_pattern_has_an_example_that_it_catches_first():
    assert set(EXAMPLES) == {p.id for p in error_patterns()}
    for pid, line in EXAMPLES.items():
        got = explain_text(line)
        assert [m.id for m in got] == [pid], (pid, line)


def _explain(name: str):
    return explain_text((FIXTURES / name).read_text(encoding="utf-8"))


def test_article_log_tf25_on_cuda12():
    matches = _explain("tf25_on_cuda12.log")
    ids = [m.id for m in matches]
    assert ids[0] == "dlopen-failed" and matches[0].line_number == 1
    libs = [m.line for m in matches if m.id == "dlopen-failed"]
    assert any("libcudnn.so.8" in line for line in libs) and len(libs) == 8
    assert matches[0].count == 2  # libcudart failed twice: folded, counted
    assert "gpu-libraries-skipped" in ids
    harmless = [m for m in matches if m.benign]
    assert {m.id for m in harmless} == {"cudart-stub-hint", "library-opened", "numa-node"}
    assert ids[-len(harmless):] == [m.id for m in harmless]  # harmless noise comes last
    assert matches[0].origin == "dso_loader.cc:64"


def test_h100_log_warns_about_ptx_and_calls_the_rest_harmless():
    matches = _explain("tf215_h100.log")
    assert matches[0].id == "ptx-jit-compile" and not matches[0].benign
    assert all(m.benign for m in matches[1:])
    factory = next(m for m in matches if m.id == "factory-already-registered")
    assert factory.count == 3


def test_errors_come_before_warnings_whatever_their_position():
    log = "\n".join([EXAMPLES["ptx-jit-compile"], EXAMPLES["numa-node"],
                     EXAMPLES["out-of-memory"]])
    assert [m.id for m in explain_text(log)] == ["out-of-memory", "ptx-jit-compile",
                                                "numa-node"]


def test_real_cpu_import_log_is_harmless():
    matches = _explain("tf221_cpu_import.log")
    assert [m.id for m in matches] == ["cpu-feature-guard"] and matches[0].benign


def test_unrecognised_and_empty_logs():
    assert _explain("unrelated_traceback.log") == []
    assert _explain("empty.log") == []
    assert explain_text("\n\n   \n") == []


@pytest.mark.parametrize(("name", "rc", "recognised"), [
    ("tf25_on_cuda12.log", 1, True), ("tf215_h100.log", 1, True),
    ("benign_only.log", 0, True), ("driver_and_memory.log", 1, True),
    ("unrelated_traceback.log", 0, False), ("empty.log", 0, False),
    ("tf221_cpu_import.log", 0, True)])
def test_cli_json_matches_schema(name, rc, recognised, capsys):
    assert main(["explain", "--file", str(FIXTURES / name), "--json"]) == rc
    doc = json.loads(capsys.readouterr().out)
    jsonschema.validate(doc, EXPLAIN_SCHEMA)
    assert doc["recognised"] is recognised and doc["exit_status"] == rc


def test_cli_text_output(capsys):
    assert main(["explain", "--file", str(FIXTURES / "benign_only.log")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("0 problems and 6 harmless messages") and "HARMLESS" in out
    assert main(["explain", "--file", str(FIXTURES / "unrelated_traceback.log")]) == 0
    assert "not in tfperf's knowledge base" in capsys.readouterr().out
    assert main(["explain", "--file", str(FIXTURES / "empty.log")]) == 0
    assert "empty" in capsys.readouterr().out


def test_cli_text_arguments_stdin_and_markdown(capsys, monkeypatch):
    assert main(["explain", EXAMPLES["cuinit-no-device"], EXAMPLES["numa-node"]]) == 1
    out = capsys.readouterr().out
    assert "ERROR line 1 [cuinit-no-device]" in out and "HARMLESS line 2" in out
    monkeypatch.setattr("sys.stdin", io.StringIO(EXAMPLES["tensorrt-not-found"] + "\n"))
    assert main(["explain", "-", "--markdown"]) == 0
    md = capsys.readouterr().out
    assert md.startswith("## tfperf explain") and "| harmless |" in md


@pytest.mark.parametrize(("argv", "needle"), [
    (["explain"], "nothing to explain"),
    (["explain", "--file", "/no/such/log.txt"], "no such file"),
    (["explain", "--file", "."], "is a directory"),
    (["explain", "text", "--file", "x.log"], "not several at once"),
    (["explain", "-", "more"], "cannot be mixed")])
def test_cli_usage_errors(argv, needle, capsys):
    assert main(argv) == 2
    assert needle in capsys.readouterr().err


def test_binary_garbage_does_not_crash(tmp_path, capsys):
    log = tmp_path / "core.bin"
    log.write_bytes(b"\xff\xfe\x00garbage\x00" + EXAMPLES["out-of-memory"].encode())
    assert main(["explain", "--file", str(log), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["matches"][0]["id"] == "out-of-memory"
