"""What the log itself shows re-ranks a cause's explanations: the cause it names leads.

A row knows a symptom ("could not create cudnn handle", an out-of-memory, a retrace) and its
usual causes, most common first. The log around it often says which one it is here: the driver
version TensorFlow prints beside a cuDNN failure, a CUDA context that could not even be created,
a WSL kernel, a Keras model's own function being retraced. Rounds 4 to 7 of the held-out logs
missed most often this way: the class was right, the fix led with the common cause and not the
one the log named.

Two kinds of evidence, each applied to any cause whose label it lists, whether a row or the
floor found it:

- ``data/cause_evidence.csv``: a regex over the log (its first and last 100,000 characters) and
  the cause and fix it puts first (``{name}`` filled from the regex's named groups), with the
  public threads that confirm the reading;
- the **driver**: a driver version the log prints (``possibly insufficient driver version``,
  ``kernel reported version``, ``NVRM version``, nvidia-smi's ``Driver Version``) older than the
  minimum of the CUDA the log's libraries or TensorFlow version need (``data/cuda_driver_min.csv``),
  or, with neither known, older than CUDA 9.0 needs (every TensorFlow GPU build since 1.5).

The evidence is said in the detail (``the log shows: ...``) and its text comes first in the
cause and the fix; the row's own explanation follows ("Otherwise: ...").
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from tfperf.doctor.explain_keras import lambda_layer_from_config
from tfperf.doctor.explain_kernels import kernel_reading
from tfperf.doctor.explain_numbers import (
    concat_off_by_one,
    dense_length_exceeded,
    flattened_labels,
    grid_size_mismatch,
    input_holds_sample_count,
    label_from_other_map,
    logits_labels_numbers,
    loss_over_batch,
    onehot_to_sparse,
    position_past_table,
    rows_per_sample,
    target_check_numbers,
    validation_ran_out,
    validation_unbatched,
)
from tfperf.doctor.explain_oom import rank_oom
from tfperf.doctor.explain_package_api import third_party_attribute
from tfperf.doctor.explain_pip import (
    no_wheel_at_all,
    offered_python,
    pin_not_released,
    pip_too_old,
)
from tfperf.doctor.explain_release_evidence import (
    dependency_on_tensorflow_name,
    library_imports_tf_internals,
)
from tfperf.doctor.explain_search import Lines, finditer_lines, search_lines
from tfperf.doctor.explain_signature import signature_mismatch
from tfperf.doctor.explain_training import loss_diverged

Reading = tuple[str, str, str]  # (cause, fix, the log's words that show it)

_WINDOW = 100_000  # characters read at each end of a long log
# the driver version a log prints, in TensorFlow's, the kernel module's and nvidia-smi's words
_DRIVER = re.compile(r"(?:[Pp]ossibly insufficient driver version|kernel reported version is|"
                     r"Kernel Module|Driver Version):?\s+(?P<v>\d{3}\.\d+(?:\.\d+)?)")
_DRIVER_WORDS = ("ossibly insufficient driver version", "kernel reported version is",
                 "Kernel Module", "Driver Version")
# causes a driver too old for the build's CUDA can produce
DRIVER_LABELS = frozenset({
    "cudnn-handle-failed", "conv-algorithm-failed", "dnn-library-not-found", "cublas-failed",
    "cuinit-failed", "cufft-plan-failed", "cuda-error", "check-failed", "internal-error",
    "unknown-error", "process-crash", "no-kernel-image", "driver-too-old"})
_OLDEST_CUDA = "9.0"  # TensorFlow 1.5 to 1.12's CUDA: no GPU build since 1.5 needs less


@functools.cache
def _rows() -> tuple[tuple[frozenset[str], tuple[str, ...], re.Pattern[str], str, str, str, str],
                    ...]:
    """(labels, needles, regex, cause, fix, source, platform): the regex is tried only on a log
    holding one of its needles (a regex alternation over 200,000 characters costs 10-20 ms); a
    row with a platform leads only where the cause's platform is not another one (review 41:
    Linux's LD_LIBRARY_PATH advice for a conda env on Windows)."""
    from tfperf.doctor.knowledge.tables import read_table

    return tuple((frozenset(r["labels"].split()), tuple(r["needles"].split("|")),
                  re.compile(r["evidence"], re.M), r["cause"], r["fix"], r["source"],
                  r.get("platform") or "")
                 for r in read_table("cause_evidence.csv"))


def _window(text: str) -> str:
    return text if len(text) <= 2 * _WINDOW else text[:_WINDOW] + "\n" + text[-_WINDOW:]


def _fill(template: str, m: re.Match[str]) -> str:
    values = {k: v or "" for k, v in m.groupdict().items()}  # a group that did not take part: ''
    return re.sub(r"\{(\w+)\}", lambda g: values.get(g.group(1), g.group(0)), template)


def apply_evidence(causes: list[Any], text: str) -> None:
    """Put first, in each cause, the explanation the log's own evidence points at: a row of
    ``cause_evidence.csv``, else the first computed reading that applies (each read once)."""
    rows = _rows()
    labels = {c.label for c in causes}
    if not any(labels & r[0] for r in rows) and not any(labels & r[0] for r in _COMPUTED):
        return
    window = _window(text)
    searched = Lines(window)  # each regex tried on the lines that can hold its match
    found: dict[int, re.Match[str] | None] = {}  # each row's regex searched once per log
    computed: dict[int, Reading | None] = {}
    for cause in causes:
        if cause.details.get("clause"):  # the floor read the message's own clause: it leads
            continue
        # a GPU the log names that is newer than the build's CUDA is read before the rows: it
        # names this machine's fault, where a row reads a status word's usual meaning
        # so is a kernel-registration message's own list (what the node asked for against
        # what is registered): it decides between a dtype, a device and a missing build
        led = False
        for ci in _LEADING:
            if cause.label in _COMPUTED[ci][0]:
                if ci not in computed:
                    computed[ci] = _COMPUTED[ci][1](text)
                if got := computed[ci]:
                    _lead(cause, got[0], got[1], _COMPUTED[ci][2], got[2])
                    led = True
                    break
        if led:
            continue
        for ri, (wanted, needles, rx, lead_cause, lead_fix, source, only) in enumerate(rows):
            if cause.label not in wanted:
                continue
            if only and _other_platform(cause, text, only):
                continue
            if ri not in found:
                found[ri] = (searched.search(rx) if any(n in window for n in needles)
                             else None)
            if m := found[ri]:
                fix = _fill(lead_fix, m)
                if "{metal_pairing}" in fix:  # the plugin release from Apple's table
                    fix = fix.replace("{metal_pairing}", _metal(text))
                _lead(cause, _fill(lead_cause, m), fix, source, m.group(0))
                break
        else:
            for ci, (wanted_labels, read, source) in enumerate(_COMPUTED):
                if ci in _LEADING or cause.label not in wanted_labels:
                    continue
                if ci not in computed:
                    computed[ci] = read(text)
                if got := computed[ci]:
                    _lead(cause, got[0], got[1], source, got[2])
                    break


# x86 instruction sets or names, or a native Windows path: the machine is no ARM one
_X86 = re.compile(r"\b(?:AVX\w*|SSE\w*|FMA|x86_64|amd64|AMD64|win_amd64)\b|"
                  r"\b[A-Z]:\\(?:Users|Program Files|ProgramData|Python\d*|Anaconda\d*|"
                  r"Miniconda\d*)\\")


def _other_platform(cause: Any, text: str, only: str) -> bool:
    """The cause's lines or the log show a platform other than ``only`` ("arm": the log names an
    x86 instruction set or machine, as a CPU feature check's message or
    ``uname -a`` does; review 43: an 'aarch64' in a pip line of an x86 box read as an ARM board,
    so a log with both keeps the row-less reading)."""
    if only == "arm":
        return bool(_X86.search(text))  # the cause's lines are the log's
    from tfperf.doctor.explain_platform import cause_platform

    platform = cause_platform([ln.text for ln in cause.lines], text)
    return platform is not None and platform != only


def _metal(text: str) -> str:
    from tfperf.doctor.explain_versions import metal_pairing, read_versions

    return metal_pairing(read_versions(text).tensorflow or "")


def _lead(cause: Any, lead_cause: str, lead_fix: str, source: str, shown: str) -> None:
    shown = " ".join(shown.split())[:120]
    if cause.confidence == "low":  # the floor's summary gives its first ranked cause
        cause.likely = [(lead_cause, lead_fix), *cause.likely][:3]
    cause.cause = f"{lead_cause} Otherwise: {cause.cause}"
    cause.fix = f"{lead_fix} Otherwise: {cause.fix}"
    cause.detail = "; ".join(filter(None, [cause.detail, f"the log shows: {shown}"]))
    cause.details.setdefault("evidence", []).append(shown)
    cause.source = f"{cause.source} ; evidence: {source}"


def lead(cause: Any, lead_cause: str, lead_fix: str, source: str, shown: str) -> None:
    """Put a reading's cause and fix ahead of ``cause``'s own (the facts' judgements use it)."""
    _lead(cause, lead_cause, lead_fix, source, shown)


def driver_too_old(text: str) -> tuple[str, str, str] | None:
    """(cause, fix, the line's words) when the driver the log prints is older than the CUDA the
    log's build needs; None when the log names no driver or it is recent enough."""
    from tfperf.doctor import knowledge as K
    from tfperf.doctor import versions as V
    from tfperf.doctor.explain_versions import read_versions

    window = _window(text)
    if not any(w in window for w in _DRIVER_WORDS):
        return None
    m = _DRIVER.search(window)
    if m is None:
        return None
    driver = m["v"]
    v = read_versions(text)
    os = "windows" if v.os == "windows" else "linux"
    cuda, why = v.cuda, "the CUDA its libraries name"
    if not cuda and v.tensorflow:
        cfg = K.build_config(v.tensorflow, os, gpu=True)
        cuda, why = (cfg.cuda, f"the CUDA of TensorFlow {v.tensorflow}") if cfg else (None, "")
    if not cuda:
        cuda, why = _OLDEST_CUDA, "the oldest CUDA of any TensorFlow GPU build since 1.5"
    try:
        need = K.min_driver(cuda, os).toolkit_min
        too_old = need is not None and V.parse(driver) < V.parse(need)
    except ValueError:
        return None
    if not too_old:
        return None
    newest = K.newest_cuda_for_driver(driver, os)
    most = f", it runs CUDA {newest} at most" if newest else ""
    return (f"The NVIDIA driver the log names, {driver}, is older than CUDA {cuda} needs "
            f"(>= {need} on {os}; {why}){most}: CUDA, cuDNN and cuBLAS cannot start on it.",
            f"Update the NVIDIA driver to {need} or newer (or any recent driver), then run again; "
            "memory settings do not help while the driver is too old.",
            m.group(0))


# --- a GPU newer than the CUDA the build was made with ----------------------------------------

# the GPU's compute capability as TensorFlow, its device list and nvidia-smi print it, or its name
_CC = re.compile(r"[Cc]ompute ?[Cc]apability:? (?P<cc>\d+\.\d+)|major: (?P<maj>\d+) minor: "
                 r"(?P<min>\d+)")
# each literal-led and tried only where its literal is (an alternation is tried at every position)
_GPU_NAME = re.compile(r"name: (?P<n>(?:NVIDIA )?(?:GeForce |Tesla |Quadro )?[\w -]{2,30}?)"
                       r"(?:,| major| computeCapability| pciBusID|$)", re.M)
_SMI_NAME = re.compile(r"\|\s+\d+\s+(?P<n>(?:NVIDIA )?(?:GeForce|Tesla|Quadro|TITAN|RTX|[AHBL]\d)"
                       r"[\w -]{0,30}?)\s{2,}(?:Off|On)\b")
# the poster's own words ("RTX 3070", "GTX1080 Ti", "GPU是笔记本的3070"): a GeForce model number
# after RTX/GTX, or a bare RTX-era number (20x0-50x0) shortly after "GPU" (round 22's sentiment2)
_PROSE_GPU = re.compile(r"\b(?P<line>RTX|GTX) ?(?P<num>[1-5]0[5-9]0(?: ?Ti)?)\b")
_PROSE_BARE_GPU = re.compile(r"GPU[^\n\d]{0,12}?(?P<num>[2-5]0[5-9]0(?: ?Ti)?)\b")
# the CUDA and TensorFlow the poster says they run ("cuda10.0", "CUDA 10.1", "tensorflow1.14",
# "tensorflow-gpu 1.15"): read only once a GPU newer than CUDA 10's kernels is named
_PROSE_CUDA = re.compile(r"\b(?:CUDA|[Cc]uda)[ _-]?(?:[Vv]ersion[: ]*|v)?(?P<v>\d{1,2}\.\d)\b")
_PROSE_TF = re.compile(r"\b(?:[Tt]ensor[Ff]low|TF|tf)(?:-gpu)?[ =_-]{0,2}v?(?P<v>[12]\.\d{1,2})\b")
# the newest compute capability major the cubins of a CUDA reach: sm_80 came with CUDA 11.0
# (8.6 and 8.9 run sm_80/86 cubins), sm_100/sm_120 with 12.8 (NVIDIA's CUDA release notes);
# a newer GPU has only PTX to JIT, or nothing the build's kernels can run
_MAX_MAJOR = ((11.0, 7), (12.8, 9))  # (CUDA below this, newest major it has cubins for)
GPU_BUILD_LABELS = frozenset({
    "cublas-failed", "conv-algorithm-failed", "cudnn-handle-failed", "no-kernel-image",
    "ptx-jit-compile", "internal-error", "unknown-error", "check-failed", "cuda-error",
    "dnn-library-not-found", "process-crash", "cuda-illegal-address"})


def _log_cc(text: str) -> tuple[int, str] | None:
    """(compute capability major, how the log says it) of the GPU the log names."""
    if ("apability" in text or "major: " in text) and (m := _CC.search(text)):
        cc = m["cc"] or f"{m['maj']}.{m['min']}"
        return int(cc.split(".")[0]), f"compute capability {cc}"
    m = _GPU_NAME.search(text) if "name: " in text else None
    if m is None and "|" in text and (" Off " in text or " On " in text):
        m = _SMI_NAME.search(text)
    name = m["n"].strip() if m is not None else _prose_gpu(text)
    if name:
        from tfperf.doctor import knowledge as K

        info = K.compute_capability(name)
        if info is not None:
            return info.cc[0], f"{name}, compute capability {info.compute_capability}"
    return None


def _prose_gpu(text: str) -> str | None:
    """A GeForce model the poster names in words, as the catalogue spells it."""
    if "TX" in text and (m := _PROSE_GPU.search(text)):
        return f"GeForce {m['line']} {m['num']}"
    if "GPU" in text and (m := _PROSE_BARE_GPU.search(text)):
        return f"GeForce RTX {m['num']}"
    return None


def _prose_cuda(text: str) -> tuple[str | None, str]:
    """The CUDA a poster says they run, else the one their TensorFlow (named in words) was
    built with; ("", "") when neither is said."""
    from tfperf.doctor import knowledge as K

    if ("uda" in text or "UDA" in text) and (m := _PROSE_CUDA.search(text)):
        return m["v"], "the CUDA the log names"
    if m := _PROSE_TF.search(text):
        cfg = K.build_config(m["v"], "linux", gpu=True)
        if cfg is not None:
            return cfg.cuda, f"TensorFlow {m['v']}'s CUDA"
    return None, ""


def gpu_newer_than_build(text: str) -> Reading | None:
    """The GPU the log names is newer than every GPU the build's CUDA has kernels for (an RTX
    30-series under a CUDA 10 build, a Blackwell GPU under CUDA 12.4)."""
    from tfperf.doctor import knowledge as K
    from tfperf.doctor.explain_versions import read_versions

    gpu = _log_cc(_window(text))
    if gpu is None:
        return None
    v = read_versions(text)
    cuda, how = v.cuda, "the CUDA its libraries name"
    if not cuda and v.tensorflow:
        cfg = K.build_config(v.tensorflow, "windows" if v.os == "windows" else "linux", gpu=True)
        cuda, how = (cfg.cuda, f"TensorFlow {v.tensorflow}'s CUDA") if cfg else (None, "")
    if not cuda:
        cuda, how = _prose_cuda(_window(text))
    if not cuda and v.series == "1.x":
        cuda, how = "10.0", "TensorFlow 1.x's newest CUDA (1.15)"
    if not cuda:
        return None
    try:
        have = float(".".join(cuda.split(".")[:2]))
    except ValueError:
        return None
    newest = next((major for below, major in _MAX_MAJOR if have < below), None)
    if newest is None or gpu[0] <= newest:
        return None
    need = "CUDA 11 (TensorFlow 2.4 or newer)" if newest < 8 else "CUDA 12.8 or newer"
    if "capability 8.6" in gpu[1]:  # sm_86 came with CUDA 11.1; TF 2.5 is the first built with 11.2
        need = "CUDA 11.1 or newer (TensorFlow 2.5 or newer, built with CUDA 11.2 / cuDNN 8.1)"
    return (f"The GPU ({gpu[1]}) is newer than the CUDA this TensorFlow was built with (CUDA "
            f"{cuda}, {how}), which has no kernels for it: cuBLAS, cuDNN and TensorFlow's own "
            "kernels fail or are compiled at start-up.",
            f"Use a TensorFlow built with {need}; for TF 1.15 code on an RTX 30 / A100, NVIDIA's "
            "nvidia-tensorflow (pip install nvidia-pyindex && pip install nvidia-tensorflow) or "
            "its NGC container.",
            gpu[1])


# every CUDA release since 9.0 drops compute capability 2.x (Fermi), 7.0 dropped 1.x; no
# TensorFlow GPU wheel was built for less than 3.0 (3.5 since TF 1.x's later releases)
_OLDEST_MAJOR = 3
GPU_TOO_OLD_LABELS = GPU_BUILD_LABELS | frozenset({
    "cuda-library-missing", "driver-library-missing", "cuinit-failed", "no-gpu-device"})


def gpu_older_than_builds(text: str) -> Reading | None:
    """The GPU the log names has a compute capability below 3.0 (a GeForce GT 220 at 1.2, a
    Fermi at 2.x): no TensorFlow GPU build and no CUDA it can use runs on it, so every library
    or driver step that follows fails on it and no library install can help."""
    text = _window(text)
    if "apability" not in text and "major: " not in text:
        return None
    found = [(m, m["cc"] or f"{m['maj']}.{m['min']}")
             for m in finditer_lines(_CC, text, ("apability", "major: "))]
    # every GPU the log names is too old: with a supported one beside it, TensorFlow ignores the
    # old card and runs on the other
    if not found or any(int(cc.split(".")[0]) >= _OLDEST_MAJOR for _, cc in found):
        return None
    m, cc = found[0]
    return (f"The GPU has compute capability {cc}, too old for any TensorFlow GPU build: "
            "TensorFlow's GPU wheels need 3.5 or newer (3.0 from source), and no CUDA release "
            "TensorFlow was ever built with supports a GPU below 3.0. The CUDA/driver errors "
            "follow from that; installing CUDA libraries will not make this GPU usable.",
            "Run on the CPU (hide the GPU: CUDA_VISIBLE_DEVICES=-1, or install the CPU-only "
            "package), or use a GPU of compute capability 3.5 or newer (the CUDA GPUs list at "
            "developer.nvidia.com/cuda-gpus gives each card's).",
            m.group(0))


# --- a grayscale image fed to a colour model, or the reverse -------------------------------------

_EXPECTED_GOT = re.compile(
    r"(?:expected axis -1 of input shape to have value (?P<a>[134])\b[^\n]*?shape "
    r"[(\[](?P<ga>[^)\]\n]*)[)\]]|"
    r"expected shape=\((?P<eb>[^)\n]*)\), found shape=\((?P<gb>[^)\n]*)\)|"
    r"expected \w+ to have shape \((?P<ec>[^)\n]*)\) but got array with shape "
    r"\((?P<gc>[^)\n]*)\))")
_COLOUR = {1: "one channel (grayscale)", 3: "three channels (RGB)", 4: "four channels (RGBA)"}


def _last(shape: str) -> int | None:
    tail = shape.rstrip(", ").rsplit(",", 1)[-1].strip()
    return int(tail) if tail.isdigit() else None


def channels_mismatch(text: str) -> Reading | None:
    """The model wants images of one channel count and got another (1, 3 or 4): a grayscale
    image for an RGB model, an RGBA PNG, or the reverse."""
    text = _window(text)
    if "expected" not in text:
        return None
    m = _EXPECTED_GOT.search(text)
    if m is None:
        return None
    want = int(m["a"]) if m["a"] else _last(m["eb"] or m["ec"] or "")
    got = _last(m["ga"] or m["gb"] or m["gc"] or "")
    if want not in _COLOUR or got not in _COLOUR or want == got:
        return None
    return (f"The model expects images with {_COLOUR[want]} and got {_COLOUR[got]}: a grayscale "
            "image for a colour model, a PNG with an alpha channel, or the reverse.",
            f"Convert the images to {_COLOUR[want]} before predict/fit (PIL: "
            f"img.convert('{'L' if want == 1 else 'RGB' if want == 3 else 'RGBA'}'); OpenCV: "
            "cv2.cvtColor; tf.image.grayscale_to_rgb / rgb_to_grayscale), in training and "
            "inference alike.",
            m.group(0))


_AXIS_VALUE = re.compile(r"expected axis -1 of input shape to have value (?P<want>\d+)\b[^\n]*?"
                         r"shape[=:]? ?[(\[](?P<got>[^)\]\n]*)[)\]]")


def flatten_mismatch(text: str) -> Reading | None:
    """A layer wants N features and each sample arrives with several axes whose product is N:
    an image or a sequence reached a Dense layer without being flattened."""
    text = _window(text)
    if "expected axis -1" not in text or (m := _AXIS_VALUE.search(text)) is None:
        return None
    dims = [d.strip() for d in m["got"].split(",") if d.strip()][1:]  # without the batch axis
    if len(dims) < 2 or not all(d.isdigit() for d in dims):
        return None
    want, size = int(m["want"]), 1
    for d in dims:
        size *= int(d)
    if size != want:
        return None
    per_sample = "x".join(dims)
    return (f"Each sample arrives as {per_sample} and the layer wants {want} features, the same "
            "values flattened: an image or sequence reached a Dense layer (or a model built for "
            "flat vectors) without being flattened.",
            f"Add layers.Flatten() before the Dense layer (or Flatten(input_shape="
            f"({', '.join(dims)},)) as the first layer), or reshape the data to (samples, "
            f"{want}) with x.reshape(len(x), -1) when the model was built for flat input.",
            m.group(0))


# the message wraps before "which" in some pastes (a console's width); the blanks after the
# line break are their own run, so a long run of blanks without "which" is no quadratic search
_FED = re.compile(r"Cannot feed value of shape \((?P<got>[^)\n]*)\) for Tensor u?'(?P<t>[^'\n]+)',?"
                  r"[ \t]*(?:\n[ \t]*)?which has shape '?\((?P<want>[^)\n]*)\)")


# a placeholder named for the labels (y, y_, Y, labels, label_ph, targets, y_true...)
_LABELS_NAME = re.compile(r"(?:[\w/]*/)?(?:y|Y|y_|Y_|y_true|ys|input_y|y_input|y_ph|"
                          r"(?:input_|true_)?(?:labels?|targets?)(?:_ph|_placeholder|_input)?)"
                          r"(?::\d+)?$")


def _dims(shape: str) -> list[str]:
    return [d.strip() for d in shape.split(",") if d.strip()]


def fed_shape_mismatch(text: str) -> Reading | None:
    """A value fed to a placeholder against the placeholder's shape: only the batch axis differs
    from a fixed batch (round 11's tfcnnvis9: one image fed to a placeholder of batch 2), or the
    same values arrive in another layout."""
    text = _window(text)
    if "Cannot feed value of shape" not in text or (m := _FED.search(text)) is None:
        return None
    got, want, name = _dims(m["got"]), _dims(m["want"]), m["t"]
    batch_only = len(got) == len(want) > 1 and got[1:] == want[1:] and got[0] != want[0]
    if batch_only and want[0].isdigit():
        return (f"The placeholder {name} was declared with a fixed batch of {want[0]} and a value "
                f"with {got[0]} in its batch axis was fed: a single sample or the last smaller "
                "batch, or a feed dict that maps this placeholder to another array than the one "
                "meant for it.",
                f"Feed exactly {want[0]} samples to {name} (pass the feed dict built for it), or "
                "declare its batch axis None (tf.compat.v1.placeholder(dtype, [None, "
                f"{', '.join(want[1:])}])) so any batch size feeds.",
                m.group(0))
    rest_got, rest_want = got[1:], want[1:]
    width = (len(got) == len(want) == 2 and all(d.isdigit() for d in (got[1], want[1]))
             and got[1] != want[1] and (not want[0].isdigit() or want[0] == got[0]))
    if width and _LABELS_NAME.match(name):
        # the placeholder's own name says it takes the labels: not the model's input
        return (f"{name} is by its name the labels placeholder ({want[1]} columns), and an array "
                f"of {got[1]} columns was fed to it: the feed dict maps it to the features (x and "
                "y swapped, or the wrong batch variable), or the labels have another class count "
                "or one-hot depth than the model's output.",
                f"Feed the labels to {name} (feed_dict={{x: batch_x, y: batch_y}}: check which "
                f"array goes to which placeholder); if they are labels, one-hot them to "
                f"{want[1]} classes or build the output for {got[1]}.",
                m.group(0))
    if width:
        return (f"Each sample fed to {name} has {got[1]} features where the placeholder (the "
                f"model's input) was built for {want[1]}: the batch axis fits, the feature width "
                "does not. The featurizer or preprocessing makes another feature count than the "
                "one the model was built with (an option that adds features, another vocabulary "
                "or one-hot depth, a column more or less).",
                f"Build the model for the data's feature width ({got[1]}: the model's input or "
                "feature-count argument), or featurize the data the way the model expects "
                f"({want[1]} features: the same options, columns and vocabulary as when the "
                "model was built).",
                m.group(0))
    if (rest_got and rest_want and all(d.isdigit() for d in rest_got + rest_want)
            and rest_got != rest_want and _product(rest_got) == _product(rest_want)):
        return (f"Each sample fed to {name} holds the values the placeholder wants ("
                f"{'x'.join(rest_want)}) in another layout ({'x'.join(rest_got)}): flattened, "
                "unflattened or with its axes in another order.",
                f"Reshape the data to the placeholder's shape before feeding it (x.reshape(-1, "
                f"{', '.join(rest_want)})), or build the placeholder for the data's layout.",
                m.group(0))
    return None


def _product(dims: list[str]) -> int:
    size = 1
    for d in dims:
        size *= int(d)
    return size


_SERVING_OP = re.compile(r"(?:[Ss]ervable|tensorflow_serving|tensorflow_model_server)[^\n]*?"
                         r"Op type not registered '(?P<op>[\w>.]+)'")
_SERVING_CORE = (
    "TensorFlow Serving runs the model in its own binary, built from its own TensorFlow: '{op}' "
    "is a core TensorFlow op (TensorFlow registers it; a gradient op or a newer version of an op "
    "often) that the TensorFlow inside this TF Serving build does not have yet, so the model was "
    "exported with a newer TensorFlow than the server was built from.",
    "Serve with a TF Serving at least as new as the TensorFlow that exported the model (a newer "
    "tensorflow/serving image or release; a source build with its tensorflow dependency at the "
    "exporting version), or export the model again with the TensorFlow release the server was "
    "built from.")
_SERVING_CUSTOM = (
    "TensorFlow Serving runs the model in its own binary, which holds only the ops linked into "
    "it: '{op}' is a custom op (from the model's own code or a third-party package, not "
    "TensorFlow's), so the stock tensorflow_model_server binary was not built with it.",
    "Serve with a tensorflow_model_server built with the op linked in (TF Serving's custom-op "
    "guide: add the op's kernel library to the server's build), or export the model without the "
    "custom op (replace it with standard TensorFlow ops).")


def serving_op(text: str) -> Reading | None:
    """An op TF Serving's binary lacks: a core op (TensorFlow registers it: the export is from a
    newer TensorFlow than the server's, round 11's TanhGrad) or a custom op it was not built with;
    an add-on's op is left to the row's own text."""
    from tfperf.doctor.explain_readings import is_core_op, op_kind

    text = _window(text)
    if "Op type not registered" not in text or \
            (m := search_lines(_SERVING_OP, text, ("Op type not registered",))) is None:
        return None
    op = m["op"]
    if op_kind({"op": [op]})[0] == "addon" or op.startswith("TF_"):
        return None
    lead = _SERVING_CORE if is_core_op(op) else _SERVING_CUSTOM
    return lead[0].replace("{op}", op), lead[1], m.group(0)


_ANY_OP = re.compile(r"Op type not registered '(?P<op>[\w>.]+)'|No op named (?P<op2>[\w>.]+) in "
                     r"defined operations")
_CONTRIB_OP = (
    "'{op}' is an op of {module} (TensorFlow 1.x's contrib, registered only when that module is "
    "imported, and removed with all of tf.contrib in TensorFlow 2.0): the graph or SavedModel was "
    "built with it, and this TensorFlow does not have it.",
    "Load it with TensorFlow 1.x (1.15 is the last with tf.contrib) after importing the module "
    "that registers the op (import {module_path}, even if unused); on TensorFlow 2, export the "
    "model again without the contrib op (its TF 2 replacement: tensorflow-addons for most of "
    "tf.contrib's layers and image ops, as tfa.image.resampler for tf.contrib.resampler).")
_MOVED_CONTRIB_OP = (
    "'{op}' is an op of {module} in TensorFlow 1.x, registered only when that module is imported "
    "(contrib ops are registered lazily), and a core op in TensorFlow 2: the graph was built with "
    "{module} and the process loading it never imported the module (or its binary, a C++ or "
    "serving build, was not linked with tf.contrib's ops).",
    "On TensorFlow 1.x import the module before loading the graph (import {module_path}, even if "
    "unused; a C++ program must link the contrib op's kernel library); or load the model with "
    "TensorFlow 2, where the op is built in.")
_NEWER_CORE_OP = (
    "'{op}' is a core TensorFlow op (TensorFlow 2.21 registers it; data/tf_core_ops.csv) that the "
    "TensorFlow loading the model does not have yet: the model was saved by a newer TensorFlow "
    "(TF Hub models and SavedModels exported with a recent release use ops older releases lack).",
    "Load it with a TensorFlow at least as new as the one that saved it (pip install -U "
    "tensorflow, and tensorflow-hub with it), or export the model again with the older "
    "TensorFlow (or pick a model version published for it).")


def keras_major(text: str) -> Reading | None:
    """A built-in Keras class the loading Keras cannot find (explain_readings reads it)."""
    from tfperf.doctor.explain_readings import keras_major_reading

    return keras_major_reading(text)


def op_origin(text: str) -> Reading | None:
    """Where an op that is not registered lives, outside TF Serving: a tf.contrib op
    (data/tf_contrib_ops.csv: gone in TF 2) or a core op of a newer TensorFlow
    (data/tf_core_ops.csv); an add-on's op is left to the row's own text."""
    from tfperf.doctor.explain_readings import (
        contrib_module,
        contrib_moved_to_core,
        is_core_op,
        op_kind,
    )

    text = _window(text)
    if ("Op type not registered" not in text and "No op named" not in text) or (
            m := _ANY_OP.search(text)) is None:
        return None
    op = m["op"] or m["op2"]
    if op_kind({"op": [op]})[0] == "addon":
        return None
    if module := contrib_module(op):
        lead = _MOVED_CONTRIB_OP if contrib_moved_to_core(op) else _CONTRIB_OP
        path = module.replace("tf.", "tensorflow.", 1)
        return (lead[0].replace("{op}", op).replace("{module}", module),
                lead[1].replace("{module_path}", path).replace("{module}", module), m.group(0))
    if is_core_op(op):
        return _NEWER_CORE_OP[0].replace("{op}", op), _NEWER_CORE_OP[1], m.group(0)
    return None


# computed evidence, tried in order after the table's rows: (labels, reader, source)
_COMPUTED: tuple[tuple[frozenset[str], Callable[[str], Reading | None], str], ...] = (
    (GPU_TOO_OLD_LABELS, gpu_older_than_builds,
     "TensorFlow's install guide (GPU: CUDA architectures 3.5, 5.0, 6.0, 7.0, 7.5, 8.0 and "
     "higher) ; NVIDIA's CUDA toolkit release notes (1.x dropped in CUDA 7.0, 2.x in 9.0) ; "
     "https://github.com/xuannianz/EfficientDet/issues/188 (a GeForce GT 220, compute "
     "capability 1.2: the poster says it does not support CUDA)"),
    (GPU_BUILD_LABELS, gpu_newer_than_build,
     "NVIDIA CUDA release notes (sm_80 in CUDA 11.0, sm_100/sm_120 in 12.8) ; "
     "data/gpu_compute_capability.csv ; https://github.com/qqwweee/keras-yolo3/issues/332 "
     "(nvidia-tensorflow on an RTX 30) ; https://github.com/tensorflow/tensorflow/issues/43718 "
     "(RTX 3090 under CUDA 10.1) ; https://github.com/NVlabs/stylegan2-ada/issues/61 ; "
     "https://github.com/DeepLabCut/DeepLabCut/issues/944 ; "
     "https://github.com/tensorflow/tensorflow/issues/89272 (RTX 5090)"),
    (frozenset({"op-no-device-kernel", "not-found-error", "invalid-argument-error",
                "internal-error", "unknown-error", "logged-error"}), kernel_reading,
     "tensorflow/core/framework/op_kernel.cc (FindKernelDef: Requested Attributes / Registered) ; "
     "tensorflow/core/common_runtime/placer.cc (Could not find valid device for node; All "
     "kernels registered for op) ; https://github.com/tensorflow/tensorflow/issues/31112"),
    (frozenset({"input-shape-mismatch", "value-error"}), validation_unbatched,
     "keras engine input_spec (expected ndim=N, found ndim=N-1) ; tf.data guide (a dataset "
     "yields single elements until .batch()) ; https://github.com/tensorflow/tensorflow/issues/"
     "44250 (val_ds built without .batch(): expected ndim=4, found ndim=3)"),
    (frozenset({"embedding-index-out-of-range", "invalid-argument-error"}), position_past_table,
     "tensorflow/core/kernels/gather_functor.h (indices[i] = id is not in [0, size)) ; "
     "BERT's max_position_embeddings (512) ; Hugging Face tokenizers (truncation, max_length) ; "
     "https://github.com/ScalaConsultants/Aspect-Based-Sentiment-Analysis/issues/51 "
     "(indices[0,529] = 529 is not in [0, 512): a text longer than BERT's positions)"),
    (frozenset({"input-shape-mismatch", "value-error", "invalid-argument-error"}),
     channels_mismatch,
     "keras engine input_spec (the expected and received shapes) ; "
     "https://github.com/krasserm/super-resolution/issues/74 (RGBA) ; "
     "https://github.com/bnsreenu/python_for_microscopists/issues/10 ; "
     "https://github.com/allanzelener/YAD2K/issues/178 (grayscale) ; "
     "https://github.com/keras-team/keras/issues/16711"),
    (frozenset({"input-shape-mismatch", "value-error", "invalid-argument-error"}),
     flatten_mismatch,
     "keras engine input_spec (expected axis -1 to have value N) ; the Keras Sequential guide "
     "(Flatten before Dense for image input)"),
    (frozenset({"invalid-argument-error"}), concat_off_by_one,
     "tensorflow/core/kernels/concat_op.cc (ConcatOp: the two shapes) ; "
     "https://github.com/jakeret/unet/issues/14 (35 vs 34: the input size and the U-Net depth)"),
    (frozenset({"invalid-argument-error"}), rows_per_sample,
     "tensorflow/core/util/bcast.cc (Incompatible shapes) ; "
     "https://github.com/davidsandberg/facenet/issues/244 (750 vs 30 rows: a hard-coded reshape "
     "[-1, 896] over larger images)"),
    (frozenset({"invalid-argument-error", "labels-output-mismatch"}), grid_size_mismatch,
     "tensorflow/core/util/bcast.cc (Incompatible shapes) ; "
     "https://github.com/zzh8829/yolov3-tf2/issues/106 ([1,13,13,3,2] vs. [1,10,10,3,2]: 320x320 "
     "images for a model built at 416; resizing to 416 fixed it)"),
    (frozenset({"invalid-argument-error", "labels-output-mismatch"}), loss_over_batch,
     "keras/engine/training_utils.py (weighted_masked_objective: the loss times the sample "
     "weights) ; https://github.com/keras-team/keras/issues/10408 ([5] vs. [32]: a custom loss "
     "with axis=0; axis=-1 worked)"),
    (frozenset({"invalid-argument-error"}), dense_length_exceeded,
     "tensorflow/core/kernels/sparse_to_dense_op.cc (indices[i] = [...] is out of bounds: need 0 "
     "<= index < [...]) ; https://github.com/tech-srl/code2seq/issues/4 ([240,9] for [300,9]: "
     "the data's paths longer than config.MAX_PATH_LENGTH)"),
    (frozenset({"labels-output-mismatch"}), target_check_numbers,
     "keras/engine/training_utils.py (standardize_input_data: Error when checking target) ; "
     "https://whosebug.com/question/3634840 ((None, 3) against (658118, 4): classes 1..3 "
     "one-hot from 0) ; https://newbe.dev/error-when-checking-target-expected-dense-1-to-have-3-"
     "dimensions-but-got-array-with-shape-118-1 (return_sequences=True before the last Dense)"),
    (frozenset({"invalid-argument-error", "labels-output-mismatch"}), flattened_labels,
     "tensorflow/core/util/bcast.cc (Incompatible shapes) ; "
     "https://github.com/keras-team/keras/issues/11894 ([7600] vs. [400,19]: a sparse accuracy "
     "on sequence outputs)"),
    (frozenset({"label-out-of-range"}), label_from_other_map,
     "tensorflow/core/kernels/sparse_xent_op.cc (Received a label value of N which is outside "
     "the valid range) ; https://github.com/zzh8829/yolov3-tf2/issues/248 (ids 67, 57 for 2 "
     "classes: a TFRecord written with the COCO class map)"),
    (frozenset({"labels-output-mismatch", "invalid-argument-error", "loss-logits-mismatch",
                "value-error"}), onehot_to_sparse,
     "tensorflow/core/kernels/sparse_xent_op.cc (logits and labels must have the same first "
     "dimension) ; keras losses (sparse_categorical_crossentropy's shape check) ; "
     "https://github.com/tensorflow/privacy/issues/38 ([250,10] and [2500]: one-hot labels "
     "flattened) ; https://github.com/srihari-humbarwadi/DeepLabV3_Plus-Tensorflow2.0/issues/27 "
     "(one-hot masks to SparseCategoricalCrossentropy; CategoricalCrossentropy ran)"),
    (frozenset({"labels-output-mismatch", "invalid-argument-error", "loss-logits-mismatch"}),
     logits_labels_numbers,
     "tensorflow/core/kernels/xent_op.cc (logits_size and labels_size) ; "
     "https://github.com/krishnaik06/Deep-Learning-Car-Brand/issues/5 (8 units for 7 classes: a "
     "desktop.ini read as a class folder)"),
    (frozenset({"keras-unknown-object"}), lambda_layer_from_config,
     "keras saving (a Lambda layer keeps its function's bytecode or name, not code the loader "
     "can run) ; https://github.com/rstudio/tfprobability/issues/65 (Unknown layer: "
     "DistributionLambda: rebuild the model, load only the weights)"),
    (frozenset({"input-shape-mismatch"}), input_holds_sample_count,
     "keras engine / TensorFlow.js input check (expected shape [null, rows, features]) ; "
     "https://github.com/tensorflow/tfjs/issues/315 (inputShape [15, 4] for 15 training rows: "
     "inputShape [4] and a [N, 4] tensor)"),
    (frozenset({"no-tensorflow-wheel"}), dependency_on_tensorflow_name,
     "pip's resolver (a requirement names a distribution, not a module: tensorflow-macos, "
     "tensorflow-cpu, tensorflow-aarch64, intel-tensorflow and tf-nightly install the same "
     "tensorflow module under other distribution names) ; https://github.com/magenta/magenta/"
     "issues/2047 (tensorflow-macos installed; magenta --no-dependencies; round 31)"),
    (frozenset({"tf-installs-mixed"}), library_imports_tf_internals,
     "Python's import system (a library's own 'from tensorflow.python... import', TensorFlow's "
     "private modules) ; https://github.com/deepchem/deepchem/issues/1790 (Colab's TensorFlow "
     "became 2.x; %tensorflow_version 1.x fixed DeepChem 2.3; round 31, development)"),
    (frozenset({"attribute-error"}), third_party_attribute,
     "Python's AttributeError on a module ; https://github.com/ThomasAlbin/Astroniz-YT-Tutorials/"
     "issues/65 (keras_tuner.oracles.BayesianOptimization gone in keras-tuner 1.3.5: "
     "keras-tuner 1.1.2, the tutorial's, fixed it)"),
    (frozenset({"keras-unknown-object"}), keras_major,
     "keras/src/saving/serialization_lib.py (Could not locate class; the module the file names) ; "
     "https://github.com/pnlbwh/CNN-Diffusion-MRIBrain-Segmentation/pull/50 (Could not locate "
     "class 'Model' under TensorFlow 2.16+: pinned TensorFlow 2.15.1, the last Keras 2)"),
    (frozenset({"no-tensorflow-wheel", "tool-error"}), pin_not_released,
     "pip's candidate list (every release it can install for this interpreter) ; "
     "https://github.com/keras-team/keras/issues/14149 (Keras 2.2.4 / 2.3.0 for TF 1.13.1: "
     "Keras was not numbered like TensorFlow)"),
    (frozenset({"no-tensorflow-wheel"}), no_wheel_at_all,
     "pip's candidate list ('from versions: none': no release for this interpreter) ; "
     "data/tf_cpu_build_configs.csv (each release's Pythons) ; TensorFlow's install guide "
     "(64-bit Python only; pip 19.0 or later)"),
    (frozenset({"no-tensorflow-wheel"}), pip_too_old,
     "pip's candidate list (it stops at 1.14 and 2.0.0b1: no manylinux2010 wheel seen) ; "
     "TensorFlow's install guide (pip 19.0 or later) ; https://github.com/tensorflow/tensorflow/"
     "issues/35061 (maintainers: pip too old to see 1.15; upgrading pip fixed it; round 29, "
     "re-read as development)"),
    (frozenset({"no-tensorflow-wheel"}), offered_python,
     "pip's candidate list (only releases with a wheel for the running interpreter) ; "
     "data/tf_cpu_build_configs.csv (each release's Pythons) ; "
     "https://github.com/diracdeltas/spleeter4max/issues/56 (only 2.5.x offered: Python 3.9)"),
    (frozenset({"value-error"}), signature_mismatch,
     "tensorflow/python/saved_model/function_deserialization.py (Could not find matching "
     "concrete function to call loaded from the SavedModel: Got / Option N) ; "
     "https://github.com/AlvaroCavalcante/auto_annotate/issues/72 (uint8 (1, 492, 423, 3) for a "
     "float32 (None, 224, 224, 3) signature) ; https://github.com/tensorflow/tensorflow/issues/"
     "41288 (a tensor where a list of one TensorSpec was saved)"),
    (frozenset({"value-error"}), fed_shape_mismatch,
     "tensorflow/python/client/session.py (Cannot feed value of shape ... which has shape) ; "
     "https://github.com/InFoCusp/tf_cnnvis/issues/9 (one image fed to a placeholder of batch 2)"),
    (frozenset({"op-not-registered"}), serving_op,
     "tensorflow/core/framework/op.cc (Op type not registered) ; data/tf_core_ops.csv (tf.raw_ops "
     "of TensorFlow 2.21.0) ; https://github.com/tensorflow/serving/issues/116 (TanhGrad: an "
     "export from a newer TensorFlow than the server's; rebuilt with the matching TensorFlow) ; "
     "https://github.com/tensorflow/serving/issues/1155 (a V2 core op on an older model server) ; "
     "tensorflow_serving/g3doc/custom_op.md (serving a custom op needs it built into the server) "
     "; https://github.com/tensorflow/serving/issues/896 (google/seq2seq's att_sum_bahdanau)"),
    (frozenset({"op-not-registered"}), op_origin,
     "tensorflow/core/framework/op.cc (Op type not registered) ; data/tf_contrib_ops.csv (the ops "
     "tensorflow/contrib registered, gone in TF 2.0) ; data/tf_core_ops.csv (tf.raw_ops of "
     "TensorFlow 2.21.0) ; https://github.com/ethz-asl/hfnet/issues/34 (Resampler, "
     "tf.contrib.resampler, on TF 2) ; https://github.com/tensorflow/hub/issues/890 "
     "(DisableCopyOnRead: a model saved by a newer TF, loaded by TF 2.6)"),
    (frozenset({"input-ran-out-of-data", "callback-metric-missing"}), validation_ran_out,
     "keras/engine/training.py (fit's validation: validation_steps batches per epoch; the "
     "warning's '(in this case, N batches)') ; https://github.com/tensorflow/tensorflow/issues/"
     "64035 (25 = validation_steps: the validation input not repeated)"),
    (frozenset({"loss-nan"}), loss_diverged,
     "the log's own loss reports (finite, then NaN) ; "
     "https://github.com/guillaumegenthial/sequence_tagging/issues/47 (train loss:nan after five "
     "finite epochs at lr 0.01/0.1; 0.001 trained)"),
    (DRIVER_LABELS, driver_too_old, "data/cuda_driver_min.csv (NVIDIA's CUDA release notes)"),
    (frozenset({"out-of-memory", "resource-exhausted-error"}), rank_oom,
     "tensorflow/core/common_runtime/bfc_allocator.cc (the request, the tensor's shape) ; "
     "https://github.com/stardist/stardist-napari/issues/24 (n_tiles) ; "
     "https://github.com/juglab/cryoCARE_pip/issues/20 (n_tiles) ; "
     "https://github.com/vinthony/ghost-free-shadow-removal/issues/15 (resize) ; "
     "https://github.com/macanv/BERT-BiLSTM-CRF-NER/issues/343 (batch size not applied) ; "
     "https://github.com/endernewton/tf-faster-rcnn/issues/7 (an idle Jupyter kernel)"),
)
# read before the rows: the GPU the log names (too old, too new), the kernel list
_LEADING = (0, 1, 2)
