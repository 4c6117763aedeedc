"""``tfperf explain``: real TensorFlow logs → root causes, most serious first, noise apart."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import jsonschema
import pytest

from tfperf.cli import main
from tfperf.doctor.explain import explain_log, explain_text
from tfperf.doctor.explainer import _DIGITS, _candidates, _keys, _match
from tfperf.doctor.knowledge import error_patterns, errors, label_rows
from tfperf.doctor.knowledge.errors import derived_needle_rows, needles_of
from tfperf.doctor.knowledge.tables import read_table

FIXTURES = Path(__file__).parent / "fixtures" / "explain"
DEVSET = Path(__file__).parent / "fixtures" / "explain_logs"

EXPLAIN_SCHEMA = {
    "type": "object",
    "required": ["schema", "lines", "verdict", "summary", "causes", "informational",
                 "exit_status"],
    "properties": {
        "lines": {"type": "integer", "minimum": 0},
        "verdict": {"enum": ["failure", "warning", "nothing-wrong", "unrecognised", "empty"]},
        "causes": {"type": "array", "items": {
            "type": "object",
            "required": ["label", "severity", "confidence", "lines", "cause", "fix", "see"],
            "properties": {
                "label": {"type": "string"},
                "severity": {"enum": ["failure", "warning", "notice"]},
                "confidence": {"enum": ["high", "low"]},
                "install": {"type": "string", "minLength": 1},
                "likely": {"type": "array", "items": {
                    "type": "object", "required": ["cause", "fix"]}},
                "lines": {"type": "array", "minItems": 1, "items": {
                    "type": "object", "required": ["number", "text"],
                    "properties": {"number": {"type": "integer", "minimum": 1},
                                   "text": {"type": "string"}}}},
                "cause": {"type": "string", "minLength": 1},
                "fix": {"type": "string", "minLength": 1},
                "see": {"type": "string"}}}},
        "informational": {"type": "array", "items": {
            "type": "object", "required": ["id", "what", "count", "lines"],
            "properties": {"count": {"type": "integer", "minimum": 1}}}},
        "exit_status": {"enum": [0, 1]},
        "versions": {"type": "object", "additionalProperties": {"type": "string"}},
    },
}

# Lines for the rows no development-set log happens to exercise (each a real TF wording).
EXAMPLES = {
    "win32-binary-bitness": "Error: C:\\app\\node_modules\\@tensorflow\\tfjs-node\\lib\\napi-v4\\"
                            "tfjs_binding.node is not a valid Win32 application.",
    "pip-keras-tf-pair": "Successfully installed keras-2.7.0 keras-preprocessing-1.1.2 "
                         "tensorboard-2.7.0 tensorflow-2.6.1 tensorflow-estimator-2.7.0",
    "tflite-input-bytes": "java.lang.IllegalArgumentException: Cannot copy to a TensorFlowLite "
                          "tensor (input) with 150528 bytes from a Java Buffer with 602112 bytes.",
    "tflite-input-dims": "ValueError: Cannot set tensor: Dimension mismatch. Got 416 but expected "
                         "224 for dimension 2 of input 0.",
    "retracing-expensive": "Tracing is expensive and the excessive number of tracings could be "
                           "due to (1) creating @tf.function repeatedly in a loop,",
    "mixed-precision-slow": "WARNING:tensorflow:Mixed precision compatibility check "
                            "(mixed_float16): WARNING",
    "gradients-missing": "WARNING:tensorflow:Gradients do not exist for variables "
                         "['dense/kernel:0'] when minimizing the loss.",
    "driver-dso-mismatch": "E cuda_diagnostics.cc:312] kernel version 535.104.5 does not match "
                           "DSO version 545.23.6 -- cannot find working devices",
    "no-kernel-image": "CUDA error: no kernel image is available for execution on the device",
    "gpu-ignored-core-count": "I gpu_device.cc:1886] Ignoring visible gpu device (device: 1) with "
                              "core count: 2. The minimum required count is 8. You can adjust "
                              "this requirement with the env var TF_MIN_GPU_MULTIPROCESSOR_COUNT.",
    "and-cuda-tensorrt-pin": "ERROR: ResolutionImpossible: ... tensorrt==8.6.1.post1",
    "jax-no-gpu": "WARNING:jax._src.xla_bridge:No GPU/TPU found, falling back to CPU.",
    "executor-abort": "I executor.cc:1197] [/job:localhost/replica:0/task:0/device:CPU:0] (DEBUG "
                      "INFO) Executor start aborting (this does not indicate an error and you "
                      "can ignore this message): CANCELLED: Operation was cancelled",
    # tensorflow/tensorflow#22429 (a test log in the thread)
    "dataset-empty-raised": "tensorflow.python.framework.errors_impl.OutOfRangeError: End of "
                            "sequence",
    # serengil/deepface#1121 (TF 2.16 with Keras 3)
    "keras-tf-mismatch": "ValueError: A KerasTensor cannot be used as input to a TensorFlow "
                         "function. A KerasTensor is a symbolic placeholder for a shape and dtype",
    # tensorflow/models#9809 (BFC allocator dump)
    "bfc-stats": "Limit:                    55115776",
    # thtrieu/darkflow#873
    "host-oom": "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when "
                "allocating tensor with shape[16,19,19,1024] and type float on "
                "/job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu",
    # tensorflow/hub#705
    "op-not-registered": ("FileNotFoundError: Op type not registered 'CaseFoldUTF8' in binary "
                          "running on c231cf5b24fe. Make sure the Op and Kernel are registered"),
    # isikdogan/deep_learning_tutorials#2
    "batch-different-shapes": ("InvalidArgumentError (see above for traceback): Cannot batch "
                               "tensors with different shapes in component 0. First element had "
                               "shape [220,195,3] and element 1 had shape [339,460,3]."),
    # tensorflow/tensorflow#56162 (TF 2.6's MLIR converter)
    "tflite-select-ops": ("tensorflow.lite.python.convert_phase.ConverterError: <unknown>:0: "
                          "error: loc(\"truediv/Cast\"): 'tf.Cast' op is neither a custom op nor "
                          "a flex op"),
    # tensorflow/tensorflow#64349 (TF 2.16's Keras 3)
    "keras3-api-removed": ("AttributeError: module 'keras._tf_keras.keras.layers' has no "
                           "attribute 'experimental'"),
    # MaybeShewill-CV/CRNN_Tensorflow#275 (TF Serving's REST answer)
    "serving-signature-mismatch": ('{ "error": "Serving signature name: \\"serving_default\\" not '
                                   'found in signature def" }'),
    # tensorflow/addons#712 (WeightNormalization's unnamed weights in an .h5)
    "h5-duplicate-names": "RuntimeError: Unable to create link (name already exists)",
    # shap/shap#3971 (Keras 3's input_shape note)
    "keras3-usage-notes": ("/opt/lib/python3.12/site-packages/keras/src/layers/convolutional/"
                           "base_conv.py:107: UserWarning: Do not pass an "
                           "`input_shape`/`input_dim` argument to a layer."),
    # lovedlim/tensorflow#2
    "loss-logits-mismatch": ("UserWarning: \"`binary_crossentropy` received `from_logits=True`, "
                             "but the `output` argument was produced by a sigmoid or softmax "
                             "activation and thus does not represent logits. Was this intended?\""),
    # tensorflow/tensorflow#49518 (a tensorflow.py in the project)
    "module-shadowed": ("ImportError: cannot import name 'keras' from partially initialized module "
                        "'tensorflow' (most likely due to a circular import) (C:\\Users\\me\\"
                        "repos\\tensorflow\\tensorflow.py)"),
    # keras-team/keras-tuner#442 (TerminateOnNaN's wording)
    "loss-nan": "Batch 6: Invalid loss, terminating training",
    # bnsreenu/python_for_microscopists#41
    "keras-name-moved": ("ImportError: cannot import name 'to_categorical' from 'keras.utils' "
                         "(C:\\Users\\USER\\anaconda3\\lib\\site-packages\\keras\\utils\\"
                         "__init__.py)"),
    # tensorflow/tensorflow#38589 (standalone Keras 2.3 on TF 2.3)
    "keras-tf-internals": ("AttributeError: module 'tensorflow.python.framework.ops' has no "
                           "attribute '_TensorLike'"),
    # tensorflow/tensorflow#57058 (tensorflow-metal on an M1 Max)
    "metal-plugin-failed": ("\tThe Metal Performance Shaders operations encoded on it may not "
                            "have completed."),
    # keras-team/keras#13055 (maintainer: the file is not at the path)
    "model-file-missing": ("OSError: Unable to open file (unable to open file: name = "
                           "'/Users/mayank/Dekstop/mnist_simple_cnn.h5', errno = 2, error message "
                           "= 'No such file or directory', flags = 0, o_flags = 0)"),
    # a Keras functional model called on another shape (keras/engine/functional.py)
    "keras-input-shape-warning": (
        "WARNING:tensorflow:Model was constructed with shape (None, 28, 28) for input "
        "KerasTensor(type_spec=TensorSpec(shape=(None, 28, 28), dtype=tf.float32, "
        "name='flatten_input'), name='flatten_input'), but it was called on an input with "
        "incompatible shape (None, 784)."),
    # tensorflow/hub#896 (deleting the cache folder fixed it)
    "tfhub-cache-incomplete": ("ValueError: Trying to load a model of incompatible/unknown type. "
                               "'/var/folders/d8/T/tfhub_modules/9616fd04ec2360621642ef9455b84f4b"
                               "668e219e' contains neither 'saved_model.pb' nor "
                               "'saved_model.pbtxt'."),
    # tensorflow/tensorflow#51986 (training ran)
    "cpu-frequency-unknown": ("W tensorflow/core/platform/profile_utils/cpu_utils.cc:128] Failed "
                              "to get CPU frequency: 0 Hz"),
    # keras-team/keras-hub#184
    "checkpoint-partial-restore": ("WARNING:tensorflow:Value in checkpoint could not be found in "
                                   "the restored object: (root).optimizer.iter"),
    # GH920/bagan-gp#6
    "keras-save-load-notes": ("WARNING:tensorflow:Compiled the loaded model, but the compiled "
                              "metrics have yet to be built."),
    # talmolab/sleap#680
    "grappler-cost-estimate": ("W tensorflow/core/grappler/costs/op_level_cost_estimator.cc:690] "
                               "Error in PredictCost() for the op: op: \"CropAndResize\""),
    # tensorflow/core/common_runtime/bfc_allocator.cc
    "bfc-garbage-collection": ("W tensorflow/core/common_runtime/bfc_allocator.cc:338] Garbage "
                               "collection: deallocate free memory regions (i.e., allocations)"),
    # tensorflow/tensorflow#27516
    "tf1-not-eager-compatible": "RuntimeError: tf.placeholder() is not compatible with eager "
                                "execution.",
    # tensorflow/tensorflow#47820
    "fragmentation-hint": "If the cause is memory fragmentation maybe the environment variable "
                          "'TF_GPU_ALLOCATOR=cuda_malloc_async' will improve the situation. ",
    # iNLyze/DeepLearning-SeGAN-Segmentation#6 (a GAN model trained before it was compiled)
    "model-not-compiled": "RuntimeError: You must compile a model before training/testing. "
                          "Use `model.compile(optimizer, loss)`.",
    # keras/src/optimizers/base_optimizer.py (Keras 3 ignores decay)
    "keras3-decay-ignored": "keras/src/optimizers/base_optimizer.py:33: UserWarning: Argument "
                            "`decay` is no longer supported and will be ignored.",
    # tensorflow/core/common_runtime/forward_type_inference.cc (TF 2.11-2.13's notice)
    "harmless-notices": "W tensorflow/core/common_runtime/forward_type_inference.cc:332] Type "
                        "inference failed. This indicates an invalid graph that escaped type "
                        "checking. Error message: INVALID_ARGUMENT: expected compatible input "
                        "types",
    # NixOS/nixpkgs#127329 (no driver library where TensorFlow looked for it)
    "dlopen-libcuda": "W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not "
                      "load dynamic library 'libcuda.so.1'; dlerror: libcuda.so.1: cannot open "
                      "shared object file: No such file or directory",
    # NeuralNine/neuralintents#28 (TF 2.11's new optimizers refuse decay)
    "keras-optimizer-api": "ValueError: decay is deprecated in the new Keras optimizer, "
                           "pleasecheck the docstring for valid arguments, or use the legacy "
                           "optimizer, e.g., tf.keras.optimizers.legacy.SGD.",
    # xarray-contrib/xbatcher#38 (Keras's notice on array-like data, repeated every batch)
    "input-pipeline-notices": "WARNING:tensorflow:Keras is training/fitting/evaluating on "
                              "array-like data. Keras may not be optimized for this format",
    # Kohulan/DECIMER-Image_Transformer#74 (the notice TensorFlow Addons prints on import)
    "tfa-end-of-development": "UserWarning: TensorFlow Addons (TFA) has ended development and "
                              "introduction of new features.",
    # tensorflow/tensorflow#45019 (a zero-filled file among the JPEGs)
    "image-decode-failed": "tensorflow.python.framework.errors_impl.InvalidArgumentError: "
                           "Expected image (JPEG, PNG, or GIF), got unknown format starting "
                           "with '\\000\\000\\000\\000\\000\\000'",
    # tensorflow/tensorflow#10061 (a cp35 Windows wheel under Python 2.7), other name and tags
    "unsupported-wheel": "tensorflow-2.1.0-cp37-cp37m-win_amd64.whl is not a supported wheel on "
                         "this platform.",
    # tensorflow/tensorflow#34369 (a set among GradientTape's sources)
    "nest-sets-not-sequences": "Sets are not currently considered sequences, but this may change "
                               "in the future, so consider avoiding using them.",
    # tensorflow/tensorflow#21554 (import tensorflow in a notebook kills its kernel)
    "notebook-kernel-died": "The kernel appears to have died. It will restart automatically.",
    # tensorflow/tensorflow#47064 (tape.gradient inside a persistent tape's with block)
    "persistent-tape-inside": "WARNING:tensorflow:Calling GradientTape.gradient on a persistent "
                              "tape inside its context is significantly less efficient than "
                              "calling it outside the context",
    # zjy-ucas/ChineseNER#37 (an absl flag read before app.run parsed the command line)
    "absl-flags-unparsed": "absl.flags._exceptions.UnparsedFlagAccessError: Trying to access flag "
                           "--clip before flags were parsed.",
    # tensorflow/tensorflow#39143 (the TensorBoard profiler without the privilege to read counters)
    "cupti-unavailable": "E tensorflow/core/profiler/internal/gpu/cupti_tracer.cc:1419] function "
                         "cupti_interface_->Subscribe( &subscriber_, (CUpti_CallbackFunc)"
                         "ApiCallback, this)failed with error CUPTI_ERROR_INSUFFICIENT_PRIVILEGES",
    # tensorflow/tensorflow#36141 (Raspberry Pi, TF 2.x: the result is printed after it)
    "hdfs-unavailable": "E tensorflow/core/platform/hadoop/hadoop_file_system.cc:132] "
                        "HadoopFileSystem load error: libhdfs.so: cannot open shared object file: "
                        "No such file or directory",
    # taki0112/Densenet-Tensorflow#22
    "grappler-topological-sort": "E tensorflow/core/grappler/optimizers/dependency_optimizer.cc:"
                                 "697] Iteration = 0, topological sort failed with message: The "
                                 "graph couldn't be sorted in topological order.",
    # horovod/horovod#2619 (held-out round 20): Horovod's ops built against another TensorFlow
    "horovod-built-for-other-tf": "horovod.common.exceptions.HorovodVersionMismatchError: "
                                  "Framework tensorflow installed with version 2.3.0 but found "
                                  "version 2.4.1.",
    # tensorflow/model-optimization#1181 (held-out round 20): a Keras 3 layer given to tfmot
    "tfmot-keras3-layer": "ValueError: `to_annotate` can only be a `keras.layers.Layer` instance. "
                          "You passed an instance of type: Conv2D.",
    # yuk7/ArchWSL#248 (held-out round 20): WSL2's driver libraries are copies, not symlinks
    "wsl-libcuda-not-symlink": "/sbin/ldconfig.real: /usr/lib/wsl/lib/libcuda.so.1 is not a "
                               "symbolic link",
    # tensorflow/tensorflow#31154 (TF_CONFIG set after MultiWorkerMirroredStrategy was made)
    "strategy-devices-not-visible": "W0101 00:00:00.000000 1 cross_device_ops.py:1182] Not all "
                                    "devices in `tf.distribute.Strategy` are visible to "
                                    "TensorFlow.",
    # srama2512/PONI#5 (held-out round 23): conda, a TensorFlow with no build for the Python
    "conda-tf-no-build-for-python": "  - tensorflow-gpu==1.15.0 -> "
                                    "python[version='>=3.6,<3.7.0a0|>=3.7,<3.8.0a0']",
    # a TensorFlow 1.x source build: bazel shows what the API genrule printed (stop 45)
    "tf-build-genrule-output": "INFO: From Executing genrule //tensorflow/python/estimator/api:"
                               "estimator_python_api_gen:",
}


def _explain(name: str, gpu_expected: bool | None = None):
    return explain_log((FIXTURES / name).read_text(encoding="utf-8"), gpu_expected)


def test_every_row_catches_a_real_line_first():
    """Each knowledge row is the first match of some line: a broad row never hides a specific
    one, and no row is dead."""
    hit: set[str] = set()
    for log in DEVSET.glob("*.log"):
        hit |= {row.id for _, row, _, _ in _match(log.read_text(encoding="utf-8"))[1]}
    for rid, line in EXAMPLES.items():
        got = [row.id for _, row, _, _ in _match(line)[1]]
        assert got == [rid], (rid, got)
        hit.add(rid)
    assert {p.id for p in error_patterns()} == hit


def test_every_knowledge_table_row_has_exactly_its_headers_fields():
    """A comma in an unquoted cell shifts the row's later columns (a fix read as its see), and
    the reader does not complain: a row with extra or missing fields is caught here."""
    import csv

    data = Path(errors.__file__).parent / "data"
    for table in sorted(data.glob("*.csv")):
        with table.open(encoding="utf-8", newline="") as fh:
            rows = list(csv.reader(fh))
        bad = [r[0] for r in rows[1:] if len(r) != len(rows[0])]
        assert bad == [], (table.name, bad)


def test_every_row_has_needles_so_no_row_scans_every_line():
    for p in error_patterns():
        assert p.needles, p.id
        assert all(n == n.lower() for n in p.needles)
    # a common prefix does not shrink the needles (the parser would factor "Could" out)
    assert needles_of("Could not load x|Couldn't open y") == ("could not load x",
                                                               "couldn't open y")


def _known_lines() -> list[str]:
    lines = list(EXAMPLES.values())
    for log in DEVSET.glob("*.log"):
        lines += log.read_text(encoding="utf-8").splitlines()
    return lines


def test_needles_never_hide_a_line_a_row_matches():
    """The prefilter is sound on every known line: where a row's regex matches, one of its
    needles is in the line's search key (lower-cased bytes, digits as 0)."""
    lines = _known_lines()
    keys = _keys(lines)
    for p in error_patterns():
        needle_keys = [n.encode("ascii").translate(_DIGITS) for n in p.needles]
        for line, key in zip(lines, keys, strict=True):
            if p.regex.search(line):
                assert any(n in key for n in needle_keys), (p.id, line)


def test_the_derived_needles_table_is_fresh_and_a_stale_row_is_derived_again(monkeypatch):
    shipped = [dict(r) for r in read_table("error_needles.csv")]
    assert shipped == derived_needle_rows(), (
        "run: python -m tfperf.doctor.knowledge.build_data --needles")
    row = next(r for r in read_table("error_patterns.csv") if not r["needles"])
    monkeypatch.setattr(errors, "_derived_needles", lambda: {row["id"]: ("0", "nonsense")})
    assert errors._needles_for(row) == needles_of(row["pattern"])
    monkeypatch.setattr(errors, "_derived_needles", lambda: {})
    assert errors._needles_for(row) == needles_of(row["pattern"])


def test_lines_differing_only_in_numbers_are_searched_once_and_all_reported():
    lines = [f"2024-01-0{d} 10:0{d}:00.0: W tensorflow/core/kernels/data/cache_dataset_ops.cc:"
             f"{850 + d}] The calling iterator did not fully read the dataset being cached."
             for d in range(1, 8)]
    assert len(set(_keys(lines))) == 1
    ex = explain_log("\n".join(lines))
    assert [len(c.lines) for c in ex.causes] == [7]
    assert _candidates([], error_patterns()) == {}


@pytest.mark.parametrize("line", [
    "Illegal instruction (core dumped)",
    "zsh: illegal hardware instruction  python",
    "Illegal instruction: 4",
    'Thread 1 "python3" received signal SIGILL, Illegal instruction.',
    "Fatal Python error: Illegal instruction"])
def test_every_wording_of_a_crash_on_a_missing_cpu_instruction(line):
    ex = explain_log(line)
    assert [(c.label, c.severity) for c in ex.causes] == [("cpu-missing-instructions", "failure")]


def test_the_library_lines_before_skipping_registering_gpus_are_one_cause():
    ex = _explain("tf25_on_cuda12.log")
    assert ex.verdict == "failure"
    top = ex.causes[0]
    assert top.label == "cuda-library-missing" and top.severity == "failure"
    assert len([c for c in ex.causes if c.label == "cuda-library-missing"]) == 1
    assert len(top.lines) >= 10 and top.lines[0].number == 1
    assert "libcudnn.so.8" in top.detail and "libcublas.so.11" in top.detail
    assert {i.id for i in ex.informational} == {"cudart-stub-hint", "library-opened",
                                                 "numa-node", "gpu-found"}
    assert top.lines[0].origin == "dso_loader.cc:64"


def test_a_failure_outranks_a_warning_which_outranks_a_notice():
    log = "\n".join([
        "E meta_optimizer.cc:954] layout failed: INVALID_ARGUMENT: Size of values 0 does not "
        "match size of permutation 4 @ fanin shape inmodel/dropout/SelectV2-2-Transpose",
        "WARNING:tensorflow:5 out of the last 5 calls to <function step at 0x7f> triggered "
        "tf.function retracing. Tracing is expensive",
        "ResourceExhaustedError: OOM when allocating tensor with shape[64,512] and type float"])
    ex = explain_log(log)
    assert [(c.severity, c.label) for c in ex.causes] == [
        ("failure", "out-of-memory"), ("warning", "tf-function-retracing"),
        ("notice", "layout-optimizer-failed")]


def test_consequences_join_their_root_cause():
    ex = _explain("driver_and_memory.log")
    labels = [c.label for c in ex.causes]
    assert "dnn-library-not-found" not in labels  # explained by the cuDNN mismatch above it
    mismatch = next(c for c in ex.causes if c.label == "cudnn-version-mismatch")
    assert mismatch.consequences == ["dnn-library-not-found"]
    assert mismatch.detail == "loaded 8.6.0, built with 8.9.4"
    assert "cuinit-no-device" not in labels  # the DSO mismatch is why cuInit sees no device
    dso = next(c for c in ex.causes if c.label == "driver-dso-mismatch")
    assert "cuinit-no-device" in dso.consequences and dso.severity == "failure"


def test_no_gpu_notices_become_failures_when_a_gpu_is_there():
    cudart = ("W dso_loader.cc:64] Could not load dynamic library 'libcudart.so.11.0'; dlerror: "
              "libcudart.so.11.0: cannot open shared object file: No such file or directory\n"
              "I cudart_stub.cc:29] Ignore above cudart dlerror if you do not have a GPU set up "
              "on your machine.")
    alone = explain_log(cudart)
    assert alone.verdict == "nothing-wrong" and alone.causes[0].severity == "notice"
    assert alone.exit_status == 0
    found = cudart + ("\nI gpu_device.cc:1733] Found device 0 with properties: \npciBusID: "
                      "0000:01:00.0 name: NVIDIA GeForce RTX 3090 computeCapability: 8.6")
    assert explain_log(found).causes[0].severity == "failure"
    assert explain_log(cudart, gpu_expected=True).causes[0].severity == "failure"


def test_details_pulled_out_of_the_lines():
    oom = explain_log((DEVSET / "keras9643_oom_multi_gpu_windows.log").read_text())
    # the tensor first; the OOM's ranking then says which words of the log it read
    assert oom.causes[0].detail.startswith("tensor [128,128,109,109] float = 742.6 MiB on GPU:1;")
    cuinit = explain_log("E cuda_driver.cc:313] failed call to cuInit: UNKNOWN ERROR (303)")
    assert cuinit.causes[0].label == "driver-library-missing"
    unknown = explain_log("E cuda_driver.cc:300] failed call to cuInit: CUDA_ERROR_UNKNOWN: "
                          "unknown error")
    assert unknown.causes[0].label == "cuinit-failed"
    assert unknown.causes[0].detail.startswith("999 CUDA_ERROR_UNKNOWN: an unknown internal")
    dep = explain_log((DEVSET / "nvtf110_transitive_nvjitlink.log").read_text())
    assert dep.causes[0].detail == ("missing: libcusolver.so.11; a dependency is what is "
                                    "missing: libnvJitLink.so.12")
    retrace = explain_log((DEVSET / "tf41347_retracing_keras_windows.log").read_text())
    # the retraced function is Keras's own: the evidence that says so follows the count
    assert retrace.causes[0].detail == ("Model.make_train_function.<locals>.train_function: "
                                        "11 of the last 11 calls traced again; the log shows: "
                                        "calls to <function Model.make_train_function.<locals>")


def test_performance_warnings_hand_off_to_lint_rules_and_profile():
    from tfperf.lint.registry import all_rules

    codes = {r.code for r in all_rules()}
    performance = {"tf-function-retracing", "autograph-could-not-transform",
                   "tf-function-variable-creation", "dataset-cache-not-fully-read",
                   "large-unrolled-loop", "xla-compile-failed",
                   "layout-optimizer-failed", "mixed-precision-slow-hardware",
                   "vectorized-map-fallback"}
    rows = label_rows()
    for label in performance | {"keras-slow-callback"}:
        named = set(re.findall(r"TFP\d{3}", rows[label].see))
        assert named <= codes, (label, named - codes)
        # a lint rule finds the line in the user's code, or profile's view does
        assert named or "tfperf profile" in rows[label].see, label
    assert all(re.search(r"TFP\d{3}", rows[label].see) for label in performance)
    assert "tfperf profile" in rows["tf-function-retracing"].see
    assert "argument" in rows["tf-function-retracing"].see
    for label, row in rows.items():  # every TFP code anywhere must exist
        assert set(re.findall(r"TFP\d{3}", row.see)) <= codes, label


def test_a_clean_log_says_nothing_wrong_and_lists_the_notes_apart():
    ex = _explain("tf221_cpu_import.log")
    assert ex.verdict == "nothing-wrong" and not ex.causes and ex.exit_status == 0
    assert {i.id for i in ex.informational} >= {"cpu-feature-guard"}
    h100 = _explain("tf215_h100.log")
    assert [c.label for c in h100.causes] == ["ptx-jit-compile"]
    assert {"factory-already-registered", "gpu-device-created"} <= {
        i.id for i in h100.informational}


def test_unrecognised_and_empty_logs():
    assert _explain("non_tf_traceback.log").verdict == "unrecognised"
    assert _explain("empty.log").verdict == "empty"
    assert explain_log("\n\n   \n").verdict == "empty"


def test_repeats_fold_and_a_long_log_stays_correct():
    line = ("2024-01-01 00:00:00.000000: I tensorflow/stream_executor/platform/default/"
            "dso_loader.cc:53] Successfully opened dynamic library libcudart.so.11.0")
    oom = "OOM when allocating tensor with shape[8,1024,1024] and type half on device:GPU:0"
    ex = explain_log("\n".join([line] * 3000 + [oom] + [line] * 3000))
    assert [c.label for c in ex.causes] == ["out-of-memory"]
    assert ex.causes[0].lines[0].number == 3001
    assert "= 16.0 MiB on GPU:0" in ex.causes[0].detail
    assert len(ex.informational[0].lines) == 6000
    doctor_view = explain_text("\n".join([oom] * 4))
    assert len(doctor_view) == 1 and doctor_view[0].count == 4 and not doctor_view[0].benign


@pytest.mark.parametrize(("name", "rc", "verdict"), [
    ("tf25_on_cuda12.log", 1, "failure"), ("tf215_h100.log", 1, "warning"),
    ("benign_only.log", 0, "nothing-wrong"), ("driver_and_memory.log", 1, "failure"),
    ("non_tf_traceback.log", 0, "unrecognised"), ("unrelated_traceback.log", 1, "failure"),
    ("empty.log", 0, "empty"),
    ("tf221_cpu_import.log", 0, "nothing-wrong")])
def test_cli_json_matches_schema(name, rc, verdict, capsys):
    assert main(["explain", "--file", str(FIXTURES / name), "--json"]) == rc
    doc = json.loads(capsys.readouterr().out)
    jsonschema.validate(doc, EXPLAIN_SCHEMA)
    assert doc["verdict"] == verdict and doc["exit_status"] == rc


def test_cli_text_summary_names_the_root_cause_and_fix_first(capsys):
    assert main(["explain", "--file", str(FIXTURES / "tf25_on_cuda12.log")]) == 1
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    assert first.startswith("FAILURE cuda-library-missing: ") and "Fix: " in first
    assert "\nInformational, nothing to do (" in out
    assert main(["explain", "--file", str(FIXTURES / "benign_only.log")]) == 0
    assert capsys.readouterr().out.startswith("nothing wrong: ")
    assert main(["explain", "--file", str(FIXTURES / "non_tf_traceback.log")]) == 0
    assert "not in tfperf's knowledge base" in capsys.readouterr().out
    assert main(["explain", "--file", str(FIXTURES / "empty.log")]) == 0
    assert "empty" in capsys.readouterr().out


def test_cli_text_arguments_stdin_and_markdown(capsys, monkeypatch):
    assert main(["explain", "E cuda_dnn.cc:329] Could not create cudnn handle: "
                 "CUDNN_STATUS_INTERNAL_ERROR", "I dso_loader.cc:53] Successfully opened "
                 "dynamic library libcudnn.so.8"]) == 1
    out = capsys.readouterr().out
    assert "FAILURE cudnn-handle-failed  (line 1)" in out and "library-opened x1 (line 2)" in out
    monkeypatch.setattr("sys.stdin", io.StringIO(EXAMPLES["mixed-precision-slow"] + "\n"))
    assert main(["explain", "-", "--markdown"]) == 1
    md = capsys.readouterr().out
    assert md.startswith("## tfperf explain")
    assert "| warning | `mixed-precision-slow-hardware`" in md


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
    log.write_bytes(b"\xff\xfe\x00garbage\x00OOM when allocating tensor with shape[64,512]")
    assert main(["explain", "--file", str(log), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["causes"][0]["label"] == "out-of-memory"


def test_a_log_files_path_as_the_one_argument_is_read_as_the_file(capsys, tmp_path,
                                                                   monkeypatch):
    """`tfperf explain train.log` read the path itself as a one-line log ("nothing
    recognised in 1 line"); a held-out scorer typed it so, as users do."""
    assert main(["explain", str(FIXTURES / "tf25_on_cuda12.log")]) == 1
    assert capsys.readouterr().out.startswith("FAILURE cuda-library-missing: ")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes").write_text((FIXTURES / "tf25_on_cuda12.log").read_text())
    assert main(["explain", "notes"]) == 1  # a file here, whatever its name
    capsys.readouterr()
    assert main(["explain", "missing.log"]) == 2  # a log file's name that is not there
    assert "no such file: missing.log" in capsys.readouterr().err
    # one word of log text that is not a file stays text
    assert main(["explain", "Segmentation"]) in (0, 1)
    assert "no such file" not in capsys.readouterr().err
