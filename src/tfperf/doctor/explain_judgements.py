"""Judgements over the facts a log holds (``explain_facts``), each with its source.

An unsupported combination is a finding even when no error line names it: TensorFlow 2.11+ with
no GPU found and nothing showing Linux (native Windows has no GPU build since 2.11), a start-up
that stops at the GPU list (the driver JIT-compiling PTX for a GPU the build has no kernels for),
TensorFlow imported from a user site over the env the program runs in, a CUDA runtime of another
version than the build's, a Jetson's GPU sharing the system RAM, a custom op in Triton. Each
judgement either leads a cause a row already found (its words go first, the row's follow after
"Otherwise:") or is a cause of its own for the explainer to add.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from tfperf.doctor.explain_facts import LogFacts


@dataclass(frozen=True)
class Judgement:
    label: str  # the cause it leads, or the label of the cause it adds
    cause: str
    fix: str
    source: str
    shown: str  # the facts it read, as the detail shows them
    adds: bool = False  # a cause of its own (severity ``warning``), not a lead
    follows: bool = False  # a remark after the cause's own words, not ahead of them


_TF_NO_WINDOWS_GPU = (2, 11)
_NO_GPU_LABELS = frozenset({"gpu-not-visible"})
_JETSON_OOM = frozenset({"out-of-memory", "gpu-memory-fragmentation", "resource-exhausted-error",
                         "cuda-error", "internal-error"})


def _mm(version: str | None) -> tuple[int, int] | None:
    if not version:
        return None
    parts = version.split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return None


# failures an install can cause: the user-site copy leads only these (review 38: a label
# mismatch in the user's own code is not the install's fault)
_INSTALL_SHAPED = frozenset({
    "tensorflow-import-failed", "cuda-library-missing", "cuda-runtime-mismatch",
    "cuda-runtime-not-found", "cudnn-version-mismatch", "dnn-library-not-found",
    "driver-library-missing", "driver-too-old", "driver-dso-mismatch", "gpu-library-incomplete",
    "windows-dll-load-failed",
    "custom-op-build-mismatch", "tf-addon-version-mismatch", "keras-tf-version-mismatch",
    "keras-flavours-mixed", "tf-installs-mixed", "package-broken-or-shadowed",
    "numpy-abi-mismatch", "numpy-too-new-for-tf", "protobuf-incompatible", "tf-keras-missing",
    "wheel-for-another-python", "unsupported-wheel", "gpu-not-visible"})


def _first_failure(by_label: dict[str, Any]) -> Any:
    """The failure a ``*`` judgement would lead (the explainer's order: a row's before the
    floor's, then by line)."""
    failures = [c for c in by_label.values() if c.severity == "failure"]
    return min(failures, key=lambda c: (c.confidence == "low", c.first_line), default=None)


def _shadowed(facts: LogFacts, by_label: dict[str, Any]) -> Judgement | None:
    user = facts.user_site_tf
    first = _first_failure(by_label)
    if not user or not facts.env_site or first is None:
        return None
    return Judgement(
        first.label if first.label in _INSTALL_SHAPED else "tf-installs-mixed",
        f"The traceback imports TensorFlow from the user site ({user}) while the program runs in "
        f"an environment of its own ({facts.env_site}): a copy installed with "
        "pip install --user (or pip outside the env) shadows the env's TensorFlow, so the "
        "TensorFlow, and the CUDA it wants, is not the one the env was set up with.",
        "Remove the user-site copy (python -m pip uninstall tensorflow tensorflow-gpu with the "
        "env deactivated, or delete it from ~/.local/lib/pythonX.Y/site-packages), or run with "
        "PYTHONNOUSERSITE=1; then check python -c 'import tensorflow as tf; print(tf.__file__)' "
        "points into the env.",
        "Python's site module (the user site is put on sys.path ahead of the interpreter's "
        "site-packages unless PYTHONNOUSERSITE is set; recalled, not checked here) ; "
        "https://github.com/ContinuumIO/anaconda-issues/issues/11805",
        f"TensorFlow from {user}; env {facts.env_site}",
        adds=first.label not in _INSTALL_SHAPED)


# Windows named in words (a version banner, a wheel's platform tag, a Windows user folder)
_WINDOWS_WORDS = re.compile(r"\bWindows\b|\bwin(?:32|_amd64)\b|AppData")


def _windows_no_gpu(facts: LogFacts, by_label: dict[str, Any], text: str
                    ) -> Judgement | None:
    """TF 2.11+ finds no GPU: on native Windows that is the missing GPU build. It leads only on
    evidence of Windows; with no OS shown it follows the row's own cause as a remark (review 38:
    a Linux user's pasted check reads the same)."""
    cause = next((by_label[lb] for lb in _NO_GPU_LABELS if lb in by_label), None)
    if cause is None or cause.details.get("evidence"):
        return None
    tf = _mm(facts.versions.tensorflow)
    if tf is None or tf < _TF_NO_WINDOWS_GPU or facts.versions.os in ("linux", "macos") or (
            facts.platforms & {"wsl", "colab", "jetson", "aarch64", "container"}):
        return None
    v = facts.versions.tensorflow
    windows = facts.versions.os == "windows" or bool(_WINDOWS_WORDS.search(text))
    said = (f"The log shows TensorFlow {v} on Windows:" if windows else
            f"If this is native Windows (the log shows TensorFlow {v} and no OS):")
    return Judgement(
        "gpu-not-visible",
        f"{said} TensorFlow 2.11 and later have no GPU build on native Windows (pip's tensorflow "
        "there is CPU-only whatever CUDA and cuDNN are installed), so no GPU is found; TF 2.10 "
        "was the last native-Windows GPU release.",
        f"{'' if windows else 'On native Windows: '}Run TensorFlow in WSL2 (pip install "
        "'tensorflow[and-cuda]' inside it), or on native Windows install TF 2.10 with CUDA 11.2 "
        "and cuDNN 8.1 (pip install 'tensorflow<2.11', Python 3.7-3.10), or use tensorflow-cpu "
        "with the DirectML plugin.",
        "https://www.tensorflow.org/install/pip#windows-native ; https://github.com/tensorflow/"
        "tensorflow/issues/60241 (maintainer: 2.10 was the last native-Windows GPU release)",
        f"TensorFlow {v}, {'Windows' if windows else 'no OS'} shown, no Linux/WSL path",
        follows=not windows)


def _same_cuda(named: str, built: str) -> bool:
    """The log's CUDA is the build's: the same major.minor, or a bare major that is the build's."""
    a, b = named.split("."), built.split(".")
    return a[:2] == b[:2] or ((len(a) == 1 or len(b) == 1) and a[0] == b[0])


def _build_cuda(tf: str, os: str | None) -> str | None:
    """The CUDA TensorFlow ``tf``'s GPU build uses on ``os``; with no OS shown, the one the Linux
    and the Windows tables agree on (review 38), where a table without that GPU build (native
    Windows after 2.10) cannot be the one that ran."""
    from tfperf.doctor import knowledge as K

    cudas = [c.cuda if (c := K.build_config(tf, o, gpu=True)) else None
             for o in ([os] if os else ["linux", "windows"])]
    known = [c for c in cudas if c]
    if not known or any(not _same_cuda(c, known[0]) for c in known):
        return None
    return max(known, key=len)  # "10.0" over the Windows table's "10"


def _cuda_runtime(facts: LogFacts, by_label: dict[str, Any], text: str) -> Judgement | None:
    if "cuda-runtime-mismatch" not in by_label:
        return None
    tf = facts.versions.tensorflow
    if tf:
        wants = [(tf, c)] if (c := _build_cuda(tf, facts.versions.os)) else []
    elif "tensorflow_core" in text:  # the package layout of TF 2.0 and 2.1 only
        wants = [(v, c) for v in ("2.0.0", "2.1.0") if (c := _build_cuda(v, facts.versions.os))]
    else:
        return None
    if not wants:
        return None
    named = " or ".join(f"TensorFlow {t} is built for CUDA {c}" for t, c in wants)
    have = facts.versions.cuda
    shown = "tensorflow_core in the paths (TF 2.0/2.1)" if not tf else f"TensorFlow {tf}"
    source = "data/tf_gpu_build_configs.csv (TensorFlow's tested build configurations)"
    if have and len(wants) == 1 and _same_cuda(have, wants[0][1]):
        return Judgement(
            "cuda-runtime-mismatch",
            f"{named} (the tested-build table) and the log names CUDA {have}, the same: the "
            "installed CUDA matches, so the cudart missing the symbol is another copy found "
            "first on PATH (LD_LIBRARY_PATH on Linux), or the driver is older than that CUDA.",
            f"Find the cudart the process loads and remove or move stray copies behind CUDA "
            f"{wants[0][1]}'s bin folder on PATH, and install a driver that supports CUDA "
            f"{wants[0][1]} (nvidia-smi shows the CUDA the driver supports).",
            source, f"{shown}; CUDA {have}")
    return Judgement(
        "cuda-runtime-mismatch",
        f"{named} (the tested-build table){'' if not have else f'; the log names CUDA {have}'}: "
        "the CUDA runtime it loaded is another version's, which lacks the symbols the build "
        "calls.",
        f"Install CUDA {wants[0][1]} and put its bin folder first on PATH, or the TensorFlow "
        "built for the CUDA you have (tfperf doctor --plan VERSION).",
        source, shown)


def _jetson_memory(facts: LogFacts, by_label: dict[str, Any]) -> Judgement | None:
    if "jetson" not in facts.platforms or not (_JETSON_OOM & set(by_label)):
        return None
    return Judgement(
        "*",
        "This is a Jetson (the log names it): its GPU has no memory of its own but shares the "
        "board's RAM with the CPU and the OS, so TensorFlow's default of reserving nearly all "
        "GPU memory, or a model that would fit a discrete GPU, runs the shared memory out.",
        "Cap TensorFlow's share (tf.config.experimental.set_memory_growth(gpu, True), or a "
        "memory_limit of a few GB with tf.config.set_logical_device_configuration; TF1: "
        "per_process_gpu_memory_fraction), close other programs (a desktop), add swap, and use "
        "a smaller batch or input.",
        "NVIDIA Jetson documentation (integrated GPU, memory shared with the CPU; recalled, not "
        "checked here) ; https://forums.developer.nvidia.com (per_process_gpu_memory_fraction on "
        "Jetson)",
        "a Jetson: GPU memory shared with the CPU")


def _triton_op(facts: LogFacts, by_label: dict[str, Any]) -> Judgement | None:
    if "triton" not in facts.platforms or "op-not-registered" not in by_label:
        return None
    return Judgement(
        "op-not-registered",
        "The model is served by Triton's TensorFlow backend, which loads only TensorFlow's own "
        "ops: an op of an add-on (tensorflow-text's NormalizeUTF8, SentencePiece, ...) is there "
        "only if its op library is loaded into the server; installing the Python package or "
        "importing it in a client does nothing.",
        "Load the add-on's op library (the .so of the same tensorflow-text version as the "
        "backend's TensorFlow, e.g. python/ops/_normalize_ops.so) into tritonserver with "
        "LD_PRELOAD, or export a model without those ops (preprocess in the client).",
        "Triton's TensorFlow backend documentation on custom operations (LD_PRELOAD of the op "
        "library; recalled, not checked here) ; https://github.com/triton-inference-server/"
        "server/issues/3093",
        "Triton serving the model")


def _wheel_without_kernels(facts: LogFacts) -> str:
    """'TensorFlow X's pip wheel has kernels for ...; compute capability Y runs only its PTX'
    when the log names the TensorFlow, the platform is Linux and a GPU whose compute capability
    the wheel has no native code for (``tf_wheel_build_info.csv``, ``gpus.arch_support``); ''
    otherwise (a source build or another package may have other kernels: the wheel is assumed)."""
    tf = facts.versions.tensorflow
    if not tf or facts.versions.os not in (None, "linux") or not facts.compute_capabilities:
        return ""
    from tfperf.doctor import knowledge as K

    try:
        wheel = K.wheel_build_info(tf, "linux")
        if wheel is None:
            return ""
        jit = [cc for cc in facts.compute_capabilities if K.arch_support(cc, wheel) == "ptx"]
    except ValueError:
        return ""
    if not jit:
        return ""
    return (f"TensorFlow {tf}'s pip wheel has native kernels for {' '.join(wheel.archs)}; "
            f"compute capability {', '.join(jit)} runs only its PTX")


def _ptx_wait(facts: LogFacts, by_label: dict[str, Any]) -> Judgement | None:
    if any(c.severity in ("failure", "warning") for c in by_label.values()):
        return None
    wheel = _wheel_without_kernels(facts)
    if not facts.stops_at_gpu_setup and not wheel:
        return None
    from tfperf.doctor.knowledge import label_rows

    head = label_rows()["ptx-jit-compile"]
    shown = "; ".join(filter(None, [facts.stops_at_gpu_setup, wheel]))
    if facts.compute_capabilities and not wheel:
        shown += f"; compute capability {', '.join(facts.compute_capabilities)}"
    waits = ("The start-up waits at the GPU list" if facts.stops_at_gpu_setup
             else "The start-up will wait minutes at the GPU list")
    return Judgement(
        "ptx-jit-compile",
        f"{waits} ({shown}): after 'Adding visible gpu devices' TensorFlow creates the devices "
        "and, when the build has no kernels for this GPU's compute capability (a source build "
        "without it in TF_CUDA_COMPUTE_CAPABILITIES, a wheel "
        "older than the GPU), the driver JIT-compiles every kernel from PTX first, which takes "
        f"minutes. {head.cause}",
        head.fix, f"{head.source} ; https://github.com/tensorflow/tensorflow/issues/22043 ; "
        "data/tf_wheel_build_info.csv (the archs of each pip wheel)",
        shown, adds=True)


_READDED = re.compile(r"\(Re-\)adding model: (\S+)")
# any line of a servable's load, or of a row that already names the base path's problem
_LOADING = re.compile(r"Loading servable|[Ll]oaded servable|Reading SavedModel|Approving load|"
                      r"No versions of servable|Could not find base path")
_POLLS = 3  # the config re-read this many times without a load: the model never loads


def _serving_never_loads(by_label: dict[str, Any], text: str) -> Judgement | None:
    """TF Serving re-adds a model at every config poll but never starts loading it (round 20:
    tensorflow/serving#2189, ten I lines read as nothing wrong)."""
    # by_label first: the alternation searches the whole text (4 ms on a 10,000-line log)
    if by_label or "(Re-)adding model" not in text or _LOADING.search(text):
        return None
    counts: dict[str, int] = {}
    for name in _READDED.findall(text):
        counts[name] = counts.get(name, 0) + 1
    stuck = [name for name, n in counts.items() if n >= _POLLS]
    if not stuck:
        return None
    names = ", ".join(stuck)
    return Judgement(
        "tf-serving-model-path",
        f"TensorFlow Serving re-reads its model config at every poll and re-adds {names} each "
        "time, but never starts loading it (no 'Loading servable' or 'Reading SavedModel' line "
        "follows): the model's base_path in the config does not exist where the server runs "
        "(inside the container), is relative, or holds no numeric version folder, so there is "
        "nothing to load and requests for it answer 'Servable not found'.",
        "Check each model's base_path in --model_config_file as the server sees it (an absolute "
        "path inside the container, on a mounted volume) and that it holds "
        "<base_path>/<version>/saved_model.pb.",
        "tensorflow_serving/model_servers/server_core.cc ((Re-)adding model at each config "
        "poll) ; https://github.com/tensorflow/serving/issues/2189",
        f"{names} re-added {max(counts[n] for n in stuck)} times, never loaded", adds=True)


def judge(facts: LogFacts, by_label: dict[str, Any], text: str) -> list[Judgement]:
    """The judgements the facts support, in the order they should lead."""
    found = [_windows_no_gpu(facts, by_label, text), _cuda_runtime(facts, by_label, text),
             _triton_op(facts, by_label), _jetson_memory(facts, by_label),
             _shadowed(facts, by_label),
             _ptx_wait(facts, by_label), _serving_never_loads(by_label, text)]
    return [j for j in found if j is not None]
