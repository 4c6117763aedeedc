"""Readings of the values a matched message carries: which axis a shape lacks, which C++ ABI a
missing symbol was compiled for, which cuDNN a build accepts, whether an unregistered op is an
add-on's or a newer core op's.

A knowledge row says what its message means in general; these functions say what this log's
values mean, for the one-line detail (``explain_details`` registers them as computed fields of
a row's ``detail`` template) and, for cuDNN, the install line (``explain_versions``). Each takes
the values the row's regex pulled out (field -> values) and returns '' when they say nothing
more than the row already does.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass

Details = dict[str, list[str]]


def _first(details: Details, *fields: str) -> str:
    return next((vals[0] for f in fields if (vals := details.get(f))), "")


# --- shapes -------------------------------------------------------------------------------------

_CHANNEL_COUNTS = {"1", "3", "4"}  # grayscale, RGB, RGBA: a last axis that looks like channels


def _dims(shape: str) -> list[str]:
    return [d.strip() for d in shape.strip("[]() ").split(",") if d.strip()]


def _fits(got: list[str], want: list[str]) -> bool:
    """Same rank and every size equal where both are known (None and ? match anything)."""
    free = {"None", "null", "?", "-1"}  # null: TensorFlow.js's free dimension
    return len(got) == len(want) and all(g == w or g in free or w in free
                                         for g, w in zip(got, want, strict=True))


_ADD_BATCH = "add the batch axis with x[None] or np.expand_dims(x, 0)"
_ADD_CHANNEL = "add the channel axis with x[..., None] or np.expand_dims(x, -1)"


def shape_axis_detail(details: Details) -> str:
    """ "received [224, 224, 3] for a rank-4 input: ... the leading batch axis is missing" ."""
    if axis_got := _first(details, "got_shape4"):
        return _axis_value_detail(axis_got, _first(details, "want_axis"),
                                  _first(details, "want_value"))
    got = _first(details, "got_shape", "got_shape2", "got_shape3", "got_shape5", "got_shape7")
    want_shape = _first(details, "want_shape", "want_shape3")
    want_ndim = _first(details, "want_ndim", "want_ndim2", "want_ndim5")
    if not got:
        got_ndim = _first(details, "got_ndim")
        return f"rank-{got_ndim} data for a rank-{want_ndim} input" if got_ndim else ""
    g = _dims(got)
    if want_shape:
        w = _dims(want_shape)
        if len(g) == len(w) - 1 and _fits(g, w[1:]):
            return f"received {got} for {want_shape}: one sample without its batch axis: " \
                   f"{_ADD_BATCH}"
        if len(g) == len(w) - 1 and _fits(g, w[:-1]):
            return f"received {got} for {want_shape}: the trailing channel axis is missing: " \
                   f"{_ADD_CHANNEL}"
        if len(g) == len(w):
            return f"received {got} for {want_shape}: the same rank with other sizes: resize " \
                   "the data to the model's input size"
        return f"received {got}, expected {want_shape}"
    if not want_ndim:
        return ""
    want = int(want_ndim)
    if len(g) == want - 1:
        if g[-1] in _CHANNEL_COUNTS:
            return (f"received {got} for a rank-{want} input: its last axis ({g[-1]}) is a "
                    f"channel count, so the leading batch axis is missing (one sample): "
                    f"{_ADD_BATCH}")
        return (f"received {got} for a rank-{want} input: its last axis ({g[-1]}) is no channel "
                f"count, so the trailing channel or feature axis is missing: {_ADD_CHANNEL}")
    if len(g) > want:
        return (f"received {got} for a rank-{want} input: one axis too many (data batched "
                "twice, or 3D data for a 2D layer)")
    return f"received {got} for a rank-{want} input"


def _axis_value_detail(got: str, axis: str, want: str) -> str:
    """Keras's InputSpec axis check ("expected axis -1 of input shape to have value 3, but
    received input with shape (None, 28, 28)"): what the last axis the data has is."""
    g = _dims(got)
    if axis != "-1" or not g or not want:
        return f"received {got}: axis {axis} should be {want}"
    last = g[-1]
    if want in _CHANNEL_COUNTS and last in _CHANNEL_COUNTS:
        return (f"received {got}: the data has {last} channel(s), the model wants {want}: "
                f"convert the images (grayscale to RGB with tf.image.grayscale_to_rgb or "
                f"np.repeat(x, {want}, -1)) or build the model's Input for {last}")
    known = [int(d) for d in g[1:] if d.isdigit()]
    if want not in _CHANNEL_COUNTS and len(known) == len(g) - 1 and len(known) > 1 \
            and math.prod(known) == int(want):
        return (f"received {got} for {want} features: the trailing axes hold {want} values "
                "unflattened: add a Flatten layer first or reshape to (N, -1)")
    if want in _CHANNEL_COUNTS:
        return (f"received {got}: its last axis ({last}) is no channel count, so the trailing "
                f"channel axis is missing: {_ADD_CHANNEL}"
                + ("" if want == "1" else f", then {want} channels (np.repeat(x, {want}, -1))"))
    return f"received {got}: the last axis is {last}, the model wants {want} values there"


# --- gradients ----------------------------------------------------------------------------------

_MOVING_STATS = re.compile(r"moving_(?:mean|var)")


def nontrainable_detail(details: Details) -> str:
    """Variables without gradients that are BatchNorm's moving statistics: the optimizer got all
    the weights, trainable or not."""
    names = re.findall(r"'([^']+)'", _first(details, "grad_vars"))
    stats = [n for n in names if _MOVING_STATS.search(n)]
    if not stats:
        return ""
    return (f"{len(stats)} of the {len(names)} variables listed are BatchNorm moving statistics "
            f"({stats[0]}, ...): non-trainable, so the optimizer was handed all the weights; "
            "pass model.trainable_variables")


# --- ops, symbols, saved classes ----------------------------------------------------------------

# the ops of TensorFlow add-ons: namespaced (Addons>, IO>...) or tensorflow-text's text ops
_ADDON_OPS = (
    (re.compile(r"^Addons>"), "tensorflow-addons"),
    (re.compile(r"^IO>"), "tensorflow-io"),
    # the TF 1.x sentencepiece ops (google/sentencepiece's tensorflow/ package, tf_sentencepiece,
    # used by TF 1 Hub modules); tensorflow-text's own are Sentencepiece...Op
    (re.compile(r"^Sentencepiece(?:Encode(?:Sparse|Dense)|Decode|IdToPiece|PieceToId|"
                r"GetPieceSize|GetPieceType)$"), "tf_sentencepiece"),
    (re.compile(r"^(?:TFText|Text)\w*>|UTF8|[Ww]ordpiece|[Ss]entence[Pp]iece|Tokeniz|RegexSplit|"
                r"Ngrams"), "tensorflow-text"),
)


def is_core_op(op: str) -> bool:
    """An op TensorFlow itself registers: a name of ``data/tf_core_ops.csv`` (``tf.raw_ops`` of
    TensorFlow 2.21.0, 1462 ops), a newer version of one (``...V2``) or a gradient op
    (``...Grad``, as ``TanhGrad``)."""
    return bool(re.search(r"(?:V\d+|Grad)$", op)) or op in _core_ops()


@functools.cache
def _core_ops() -> frozenset[str]:
    from tfperf.doctor.knowledge.tables import read_table

    return frozenset(r["op"] for r in read_table("tf_core_ops.csv"))


def contrib_module(op: str) -> str:
    """The tf.contrib module that registered ``op`` in TensorFlow 1.x ('' if none), from
    ``data/tf_contrib_ops.csv``: its ops that TensorFlow 2.21 does not register, and those that
    moved into core (``contrib_moved_to_core``)."""
    module, moved = _contrib_ops().get(op, ("", False))
    return module if moved or op not in _core_ops() else ""


def contrib_moved_to_core(op: str) -> bool:
    """A tf.contrib op of TensorFlow 1.x that TensorFlow 2 registers as a core op (the block LSTM
    and GRU cells, ImageProjectiveTransformV2)."""
    return _contrib_ops().get(op, ("", False))[1]


@functools.cache
def _contrib_ops() -> dict[str, tuple[str, bool]]:
    from tfperf.doctor.knowledge.tables import read_table

    return {r["op"]: (r["module"], r["core_in_tf2"] == "yes")
            for r in read_table("tf_contrib_ops.csv")}


def op_kind(details: Details) -> tuple[str, str]:
    """("addon", its package) | ("core", "") for a newer version of a core op | ("serving", "")
    for another op TF Serving lacks | ("", "") when the name says nothing."""
    op = _first(details, "op", "op2")
    for rx, package in _ADDON_OPS:
        if op and rx.search(op):
            return "addon", package
    if op and not details.get("serving") and contrib_module(op):
        return "contrib", contrib_module(op)
    if re.search(r"V\d+$", op) or (op and is_core_op(op)):
        return "core", ""
    return ("serving", "") if op and details.get("serving") else ("", "")


# a Cloud TPU node's worker (n-<8 hex>-w-<k>): the TPU host that runs the input pipeline, not the
# machine whose Python imported the add-on (a TPU VM's own host is t1v-n-..., which runs Python)
_TPU_NODE_WORKER = re.compile(r"n-[0-9a-f]{8}-w-\d+")


def tpu_node_worker(details: Details) -> str:
    """The Cloud TPU node worker host the op was missing on, or ''."""
    host = _first(details, "op_host")
    return host if _TPU_NODE_WORKER.fullmatch(host) else ""


def op_kind_detail(details: Details) -> str:
    op = _first(details, "op", "op2")
    kind, package = op_kind(details)
    where = "TF Serving's binary" if details.get("serving") else "the binary loading it"
    if kind == "addon" and (host := tpu_node_worker(details)):
        return (f"{op} is an op of {package}, missing on {host}, a Cloud TPU node's worker: "
                "the TPU host runs the input pipeline with its own TensorFlow binary, and an "
                "add-on's ops exist only in the Python process that imported it")
    if kind == "addon" and details.get("serving"):
        return (f"{op} is an op of {package}, which this TF Serving binary was not built with (a "
                "Python import cannot add it to the model server)")
    if kind == "addon" and package == "tf_sentencepiece":
        return (f"{op} is an op of tf_sentencepiece, TensorFlow 1.x's sentencepiece package (not "
                "tensorflow-text): the model is a TF 1 one; load it under TF 1.x with "
                "import tf_sentencepiece, or use the model's TF 2 version (built on "
                "tensorflow-text)")
    if kind == "addon":
        return f"{op} is an op of {package}: import it before loading the model"
    if kind == "contrib" and contrib_moved_to_core(op):
        return f"{op} is an op of {package} in TensorFlow 1.x (imported lazily), core in TF 2"
    if kind == "contrib":
        return f"{op} is an op of {package}, removed with tf.contrib in TensorFlow 2.0"
    if kind == "core":
        what = "a newer version of a core" if re.search(r"V\d+$", op) else "a core"
        return (f"{op} is {what} TensorFlow op: the model was saved by a newer TensorFlow than "
                f"{where}")
    if kind == "serving":
        return (f"the binary is TF Serving's: {op} is a core op newer than its TensorFlow, or a "
                "custom op it was not built with")
    return ""


_NEW_ABI = re.compile(r"B5cxx11|St7__cxx11")  # [abi:cxx11] tags, std::__cxx11 types
_OLD_ABI_STRING = re.compile(r"(?<=[EIKRP])Ss(?![a-z])")  # the old ABI's std::string, "Ss"
# functions that return std::string: the new ABI tags their names, so an untagged one asks for
# the old ABI's (the CHECK macros' helper, in every op that uses CHECK/DCHECK)
_RETURNS_STRING = ("CheckOpMessageBuilder9NewStringEv",)


def abi_detail(details: Details) -> str:
    symbol = _first(details, "symbol")
    if _NEW_ABI.search(symbol):
        return ("the missing symbol has the C++11 ABI's tag (__cxx11): the library was compiled "
                "with -D_GLIBCXX_USE_CXX11_ABI=1 (gcc 5+'s default) while this TensorFlow uses "
                "the old ABI (=0, the official wheels before TF 2.9): build with the flags "
                "tf.sysconfig.get_compile_flags() prints")
    if _OLD_ABI_STRING.search(symbol) or symbol.endswith(_RETURNS_STRING):
        return ("the missing symbol is the old C++ ABI's name (no __cxx11 tag): the library was "
                "compiled with -D_GLIBCXX_USE_CXX11_ABI=0 (or gcc < 5) while this TensorFlow, if "
                "it is the release the library was built against, uses the new ABI (=1: the "
                "official wheels since TF 2.9, conda's builds): build with the flags "
                "tf.sysconfig.get_compile_flags() prints")
    return ""


# class names Keras itself saves, which older releases do not know
_NEWER_KERAS = {"Functional": "TF 2.3", "TFOpLambda": "TF 2.4", "SlicingOpLambda": "TF 2.4"}
# built-in activations of later tf.keras releases (tf.keras.activations.swish in TF 2.2, gelu in
# TF 2.4): an older Keras loading a model that names them does not know them
_NEWER_ACTIVATIONS = {"swish": "TF 2.2", "gelu": "TF 2.4"}


# classes every Keras has: one Keras 3 "could not locate" was saved by another Keras major
_BUILTIN_KERAS = frozenset({
    "Model", "Sequential", "Functional", "InputLayer", "Dense", "Conv1D", "Conv2D", "Conv3D",
    "LSTM", "GRU", "SimpleRNN", "Embedding", "Dropout", "Flatten", "Reshape", "Activation",
    "BatchNormalization", "LayerNormalization", "MaxPooling2D", "AveragePooling2D",
    "GlobalAveragePooling2D", "Concatenate", "Add", "Multiply", "Lambda", "TimeDistributed",
    "Bidirectional", "ZeroPadding2D", "UpSampling2D", "Conv2DTranspose", "DepthwiseConv2D"})


def _keras_major_detail(name: str, module: str) -> str:
    """A built-in class the loading Keras cannot find, read by the module the file names."""
    if module.startswith("keras.src.") and not module.startswith("keras.src.engine."):
        # Keras 2.13-2.15 wrote keras.src.engine.*; keras.src.models/layers.* is Keras 3's
        return (f"{name} is a built-in Keras class in the module {module}, which only Keras 3 "
                "has: the file was saved by Keras 3 (TensorFlow 2.16+) and is loaded by Keras 2 "
                "(tf.keras of TensorFlow 2.15 or older): load it under Keras 3, or save it again "
                "from Keras 3 in a format Keras 2 reads (weights only, or rebuild the model)")
    if module:
        return (f"{name} is a built-in Keras class in the module {module}, which only Keras 2 "
                "has (keras.engine, or keras.src.engine in Keras 2.13-2.15): the file was saved by "
                "Keras 2 (TensorFlow 2.15 or older) and is loaded by Keras 3 (TensorFlow 2.16+): "
                "load it with Keras 2 (pip install tf-keras and import tf_keras, or "
                "TF_USE_LEGACY_KERAS=1; or TensorFlow 2.15), or rebuild the model in Keras 3 and "
                "load only its weights")
    return (f"{name} is a built-in Keras class, so the file was written by another Keras major "
            "version than the one loading it (most often a Keras 2 / tf.keras file, .h5 or JSON, "
            "loaded by Keras 3, the default from TensorFlow 2.16): load it with Keras 2 (pip "
            "install tf-keras and import tf_keras, or TF_USE_LEGACY_KERAS=1; or TensorFlow 2.15), "
            "or rebuild the model in Keras 3 and load only its weights")


_KERAS_MAJOR = re.compile(r"Could not locate class '(?P<name>\w+)'|Could not deserialize class "
                          r"'(?P<name4>\w+)' because its parent module (?P<kmodule>keras[\w.]*)")


def keras_major_reading(text: str) -> tuple[str, str, str] | None:
    """(cause, fix, the words) when the class Keras cannot find is one every Keras has: the
    file and the loading Keras are of different major versions, not a custom object."""
    if "Could not" not in text or (m := _KERAS_MAJOR.search(text)) is None:
        return None
    name, module = m["name"] or m["name4"], m["kmodule"] or ""
    if name not in _BUILTIN_KERAS and not module.startswith(("keras.src.", "keras.engine.")):
        return None
    reading = _keras_major_detail(name, module)
    cause, _, fix = reading.partition(": load ")
    return cause + ".", "Load " + fix + ".", m.group(0)


def unknown_object_detail(details: Details) -> str:
    name = _first(details, "name", "name2", "name3", "name4")
    if not name:
        return ""
    module = _first(details, "kmodule")
    if (details.get("name4") or details.get("name2")) and (
            name in _BUILTIN_KERAS or module.startswith(("keras.src.", "keras.engine."))):
        return _keras_major_detail(name, module)
    # a user's paraphrase ("unknown layer : functional") names the class in lower case
    name = next((k for k in _NEWER_KERAS if k.lower() == name.lower()), name)
    if name in _NEWER_KERAS:
        return (f"{name} is a built-in class that {_NEWER_KERAS[name]} and later save: the model "
                "was saved by a newer TensorFlow/Keras than the one loading it")
    if name == "KerasLayer":
        return ("TF Hub's layer: import tensorflow_hub and pass custom_objects={'KerasLayer': "
                "hub.KerasLayer}")
    kind = (_first(details, "kind", "kind2") or "class").replace(" function", "")
    if kind == "activation" and name in _NEWER_ACTIVATIONS:
        since = _NEWER_ACTIVATIONS[name]
        return (f"{name} is a built-in activation from {since} on: the model was saved by (or "
                "written for) a newer TensorFlow/Keras than the one loading it; upgrade it, or "
                "pass your own function for it in custom_objects")
    return f"{name} is not a Keras class: a custom {kind} to pass in custom_objects or register"


# --- containers ---------------------------------------------------------------------------------

def container_detail(details: Details) -> str:
    from tfperf.doctor.knowledge import compute_capability

    gpu = _first(details, "gpu")
    if not gpu:
        return ""
    info = compute_capability(gpu)
    cc = f"compute capability {info.compute_capability}: " if info else ""
    if details.get("not_yet"):
        return f"{cc}the image predates this GPU, so a newer release of the image is needed"
    return f"{cc}the image no longer supports this GPU, so an older release is needed"


# --- cuDNN --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CudnnReading:
    detail: str  # what the check wanted of the loaded cuDNN, where the versions alone mislead
    install: str  # the cuDNN to load instead (explain_versions adds the TensorFlow alternative)
    compiled: tuple[int, int, int]
    loaded: tuple[int, int, int]


def cudnn_version(text: str) -> tuple[int, int, int]:
    """ "7.1.4" or cudnnGetVersion()'s 7104 (90100 from cuDNN 9) -> (7, 1, 4)."""
    if "." in text:
        parts = [int(p) for p in text.split(".")] + [0, 0]
        return parts[0], parts[1], parts[2]
    n = int(text)
    if n >= 10000:
        return n // 10000, n % 10000 // 100, n % 100
    return n // 1000, n % 1000 // 100, n % 100


def _mm(v: tuple[int, int, int]) -> str:
    return f"{v[0]}.{v[1]}"


def _full(v: tuple[int, int, int]) -> str:
    return f"{v[0]}.{v[1]}.{v[2]}"


def cudnn_reading(details: Details) -> CudnnReading | None:
    """What the version check in this log's wording wanted, against what was loaded.

    The check changed with TensorFlow (cuda_dnn.cc): the same major.minor ('(compatibility
    version N)', version / 100 * 100 compared); the same major and an equal or newer minor for
    cuDNN 7+ ('... in case of CuDNN 7.0 or later'; before 7 the same minor); the same major and
    an equal or newer minor ('matching major version and equal or higher minor')."""
    loaded_text = _first(details, "loaded")
    compiled_text = _first(details, "compiled")
    if not loaded_text or not compiled_text:
        return None
    try:
        got, want = cudnn_version(loaded_text), cudnn_version(compiled_text)
    except ValueError:
        return None
    if details.get("compat") or (want[0] < 7 and not details.get("rule_minor")):
        rule = "same-minor"
    else:
        rule = "minor-or-newer"
    newer_ok = f" or a newer {want[0]}.x" if rule == "minor-or-newer" else ".x"
    wanted = f"{_mm(want)}{newer_ok}"
    if got[0] != want[0]:
        return CudnnReading(
            f"cuDNN {got[0]} loaded, the build wants cuDNN {want[0]}: majors are never compatible",
            f"cuDNN {wanted} (this build's)", want, got)
    if got[:2] < want[:2]:
        # "loaded X, built with Y" already says it: no detail to add
        return CudnnReading("", f"cuDNN {wanted} (the loaded one is older)", want, got)
    if rule == "same-minor" and got[1] != want[1]:
        return CudnnReading(
            f"the loaded {_full(got)} is newer than the build's {_full(want)}, but this check "
            "wants the same major.minor: a newer minor fails here",
            f"cuDNN {_mm(want)}.x, the build's major.minor (a downgrade from {_full(got)}, e.g. "
            f"apt-get install --allow-downgrades 'libcudnn{want[0]}={_mm(want)}.*' or conda "
            f"install cudnn={_mm(want)})", want, got)
    return None


def cudnn_detail(details: Details) -> str:
    reading = cudnn_reading(details)
    return reading.detail if reading else ""


# --- labels against the output ------------------------------------------------------------------


def target_detail(details: Details) -> str:
    """What 'expected dense to have shape (20,) but got array with shape (1000,)' says about y."""
    want, got = _dims(_first(details, "want")), _dims(_first(details, "got"))
    if not want or not got or not (want[-1].isdigit() and got[-1].isdigit()):
        return ""
    w, g = int(want[-1]), int(got[-1])
    if g == w:
        return ""
    if g == 1:
        return (f"one value per sample for {w} output units: integer class ids, which "
                "sparse_categorical_crossentropy takes (or one-hot them)")
    if w == 1:
        return (f"{g} values per sample where one is expected: one-hot rows where the loss wants "
                "one integer class id per sample (sparse_categorical_crossentropy), or a one-unit "
                f"output for {g} classes")
    if g > w:
        return (f"the labels have {g} values per sample for {w} output units: if {g} is the "
                "size of one input sample (its length, its pixels), the inputs were passed as "
                "the labels (check how y was built, e.g. y_train sliced from the data array); if "
                f"{g} is the number of classes, the last layer needs {g} units")
    return (f"the labels have {g} values per sample for {w} output units: one-hot rows of {g} "
            f"classes for a {w}-class output (the class count or the encoding differs)")


# --- TensorFlow Serving -------------------------------------------------------------------------


def serving_detail(details: Details) -> str:
    """The defaults of the Docker image, a version folder missing, or a relative path."""
    servable = _first(details, "servable", "servable2", "servable3")
    base = _first(details, "base_path", "base_path2", "relative")
    if not servable and not base:  # a client's "Servable not found": no path in the log
        return ""
    where = f"servable {servable} at {base}: "
    if details.get("relative"):
        return where + "the base path must be absolute (/models/NAME inside the container)"
    if servable == "model" and base.rstrip("/") == "/models/model":
        return where + ("these are the Docker image's defaults (MODEL_NAME=model): the model was "
                        "mounted under another name, so pass -e MODEL_NAME=<the folder under "
                        "/models> or mount it at /models/model")
    last = base.rstrip("/\\").rsplit("/", 1)[-1]
    if details.get("servable2") and (last.isdigit() or last == "variables"):
        return where + (f"the base path ends in '{last}', inside a model version: give the "
                        "folder that holds the numeric version folders")
    if details.get("servable2") and not details.get("servable"):
        root = base if base.endswith("://") else base.rstrip("/") + "/"  # s3:// stays whole
        return where + ("the folder exists but holds no numeric version folder (a folder named "
                        "by an integer: 1, 2 or 00000123, not v0.1): move the SavedModel into "
                        f"{root}1/")
    return where + "the path does not exist where the server runs (inside the container)"


# --- TensorFlow Lite inputs ---------------------------------------------------------------------

# element sizes TFLite inputs come in: a buffer k times the input's bytes is the same elements
# in a type k times wider (float32 data for a uint8/int8 input of a quantized model)
_WIDER = {4.0: ("float32 data for a uint8/int8 input (a quantized model)",
                "feed uint8/int8 data (quantize with the input's scale and zero point from "
                "get_input_details), or use the float model"),
          0.25: ("uint8 data for a float32 input", "feed float32 data, normalised as in "
                 "training"),
          2.0: ("4-byte data for a 2-byte input (float32 for float16)", "feed the input's type"),
          0.5: ("2-byte data for a 4-byte input (float16 for float32)", "feed the input's type")}


_WIDTHS = {4: "float32", 1: "uint8", 2: "float16"}


def _square_image(nbytes: int, width: int) -> tuple[int, int] | None:
    """(side, channels) when nbytes holds one square image of 3, 1 or 4 channels at width."""
    if nbytes % width:
        return None
    for channels in (3, 1, 4):
        if (values := nbytes // width) % channels == 0:
            side = math.isqrt(values // channels)
            if side > 1 and side * side * channels == values:
                return side, channels
    return None


def _image_sizes(want: int, got: int) -> str:
    """The square images two byte counts hold, at one type width where both do (the buffer's
    type then matches and only the image size differs), else at each's own width."""
    for width in _WIDTHS:
        if (w := _square_image(want, width)) and (g := _square_image(got, width)):
            return (f": {w[0]}x{w[0]}x{w[1]} {_WIDTHS[width]} values for the model, "
                    f"{g[0]}x{g[0]}x{g[1]} in the buffer")
    return ""


def tflite_input_detail(details: Details) -> str:
    """What a TFLite input size mismatch means from its numbers: a type of another width, or
    another size in one dimension (an image size other than the export size)."""
    if details.get("tfl_bytes_want") and details.get("tfl_bytes_got"):
        want, got = int(details["tfl_bytes_want"][0]), int(details["tfl_bytes_got"][0])
        head = f"the input takes {want} bytes, the buffer holds {got}"
        if want and (ratio := got / want) in _WIDER:
            what, fix = _WIDER[ratio]
            return f"{head} ({ratio:g}x): {what}; {fix}"
        return (f"{head}: not a whole type width apart, so another shape (image size or "
                "channels)" + _image_sizes(want, got) + ": resize to the input's shape")
    if details.get("tfl_dim_got") and details.get("tfl_dim_want"):
        want, got = int(details["tfl_dim_want"][0]), int(details["tfl_dim_got"][0])
        dim, inp = _first(details, "tfl_dim"), _first(details, "tfl_input")
        head = f"input {inp}, dimension {dim}: fed {got}, the model was converted for {want}"
        if (want and got % want == 0) or (got and want % got == 0):
            k = got / want
            return head + (f" ({k:g}x: an image or feature size other than the one the model "
                           "was exported with)")
        return head
    return ""


# --- the loader ---------------------------------------------------------------------------------


def loader_detail(details: Details) -> str:
    program, lib = _first(details, "program"), _first(details, "lib3")
    if not lib:
        return ""
    return (f"the NVIDIA driver provides {lib} at run time, so a GPU build of {program or 'it'} "
            "started without the driver in sight (in Docker: without --gpus all, nvidia-docker "
            "or --runtime=nvidia) cannot load")


# --- TensorFlow's family in one environment ----------------------------------------------------


def mixed_detail(details: Details) -> str:
    """Stable and nightly packages the log lists (pip list lines, dist-info folders)."""
    found = details.get("family", [])
    nightly = [f for f in found if "nightly" in f or ".dev" in f]
    stable = [f for f in found if f not in nightly]
    if nightly and stable:
        return (f"stable and nightly packages side by side: {', '.join(stable)} with "
                f"{', '.join(nightly)}")
    if nightly:
        return f"nightly packages installed: {', '.join(nightly)}"
    return ""


# --- a GPU the log shows is wanted ------------------------------------------------------------

_GPU_WANTED = (
    (re.compile(r"LD_LIBRARY_PATH:? /usr/local/nvidia/lib"),
     "the loader path is the one NVIDIA's CUDA container images set (/usr/local/nvidia/lib): the "
     "program runs in an image made for the GPU"),
    (re.compile(r"list_physical_devices\(\s*['\"]GPU|is_gpu_available\(|gpu_device_name\(|"
                r"Num GPUs Available"),
     "the code asks for the GPU (list_physical_devices('GPU'), is_gpu_available, Num GPUs "
     "Available)"),
    (re.compile(r"NVIDIA-SMI \d"), "nvidia-smi's output shows an NVIDIA GPU"),
    (re.compile(r"NVIDIA-SMI has failed because it couldn't communicate"),
     "nvidia-smi was run (it could not reach the driver): the GPU is what the log is about"),
    (re.compile(r"Could not satisfy explicit device specification '[^']*device:GPU:\d"),
     "an op placed on the GPU found none"),
)


def gpu_wanted(text: str) -> str:
    """Why the log shows that a GPU is wanted although TensorFlow found none ('' if it does not):
    then 'no CUDA library' or 'no driver' is the failure, not a notice."""
    return next((why for rx, why in _GPU_WANTED if rx.search(text)), "")


# the calls whose answer may be printed on the next line (the other answers are one line each)
_NO_GPU_CALLS = ("is_built_with_cuda", "is_gpu_available", "list_physical_devices(")
# the answer of a GPU check the user ran: is_built_with_cuda() False, an empty GPU list, "0" GPUs
# (printed on the check's line, or on the next one in a REPL)
_NO_GPU_ANSWER = re.compile(
    r"(?:is_built_with_cuda|is_gpu_available)\(\)\)?[^\n]*?(?:\n\s*(?:>>>\s*)?)?(?:[:=]\s*)?False\b|"
    r"list_physical_devices\(\s*(?:device_type\s*=\s*)?['\"]GPU['\"]\s*\)\)?[^\n]*?"
    r"(?:\n\s*(?:>>>\s*)?)?(?:[:=]\s*)?\[\]|"
    # (a count, not an index: 'Active GPU index: 0' names the first GPU, round 22's gputest4)
    r"(?im:^[^\n]{0,60}\b(?:num(?:ber of)? )?GPUs?"
    r"(?: (?![\w ]*?\b(?:index|id|ordinal)\b)[\w ]{0,20})?[:?=]\s*(?:\[\]|0|False)\s*$)|"
    # the user's own print of the check's answer: 'GPU is NOT AVAILABLE', 'No GPU found'
    r"(?im:^[^\n]{0,40}\b(?:GPU (?:is )?not (?:available|found|detected)|no GPU (?:is )?"
    r"(?:available|found|detected))[.!]?\s*$)|"
    # the reporter's words that the run uses only the CPU, asking for the GPU in the same line
    # (round 31: 'it only using CPU for computing (2~3 sec/batch), can you update it for GPU')
    r"(?i:\bonly (?:using|uses|used|running|runs?) (?:on )?(?:the )?CPU\b[^\n]{0,120}?\bGPU\b)")


def gpu_not_visible(text: str) -> tuple[int, int] | None:
    """The 0-based lines (first, last) where the log shows the user's own GPU check answering "no
    GPU" (``is_built_with_cuda()`` False, ``list_physical_devices('GPU')`` empty, ``Num GPUs
    Available: 0``), or None."""
    if "GPU" not in text and "cuda" not in text:
        return None
    if not any(call in text for call in _NO_GPU_CALLS):
        # only the one-line answers can match: a log of repeated lines is read once per line
        from tfperf.doctor.explain_floor import distinct_lines

        distinct = distinct_lines(text)
        if len(distinct) < len(text) // 2 and _NO_GPU_ANSWER.search(distinct) is None:
            return None
    m = _NO_GPU_ANSWER.search(text)
    if m is None:
        return None
    return text.count("\n", 0, m.start()), text.count("\n", 0, m.end() - 1)


# --- a build older than the GPU -----------------------------------------------------------------


def ampere_detail(details: Details) -> str:
    """cuBLAS failing under a build made with CUDA 10 or older: the GPU may postdate it."""
    old = _first(details, "old_build")
    if not old:
        return ""
    return (f"if the GPU is an RTX 30-series, A100 or newer (compute capability 8.0+): {old} was "
            "built with CUDA 10 or older, which predates these GPUs (they need CUDA 11), so its "
            "cuBLAS kernels fail there; use TensorFlow 2.4 or newer, or NVIDIA's TensorFlow 1.15 "
            "for CUDA 11 (pip install nvidia-pyindex && pip install nvidia-tensorflow)")


# --- a package pinning another TensorFlow -------------------------------------------------------


def pin_detail(details: Details) -> str:
    """'csbdeep needs tensorflow < 2, installed 2.3.0' from the package's own check or pip's."""
    pkg = _first(details, "pin_pkg", "pin_pkg2")
    req = _first(details, "pin_req", "pin_req2")
    if not (pkg and req):
        return ""
    ver = _first(details, "pin_ver")
    have = _first(details, "tf_have3", "tf_have4")
    return (f"{pkg}{' ' + ver if ver else ''} needs tensorflow {req}"
            + (f", installed {have}" if have else ""))


# --- TensorFlow that runs on the CPU by design --------------------------------------------------

_CPU_BY_DESIGN = (
    (re.compile(r"\brun_docker\.py:\d+\]|\brun_alphafold\.py\b|[/\\]alphafold[/\\]"),
     "AlphaFold runs its model in JAX and TensorFlow only for its input pipeline, pinned to the "
     "CPU (alphafold/model/features.py: tf.device('/device:CPU:0')), so a CUDA library TensorFlow "
     "cannot load changes nothing: not a failure"),
)


def cpu_by_design(text: str) -> str:
    """Why TensorFlow runs on the CPU by design in the program that printed the log ('' when the
    log does not show it): a missing CUDA library is then no failure, whatever else shows a GPU
    is wanted (the NVIDIA image of a JAX program)."""
    # each pattern holds one of these literals: the search starts at the first one found (a
    # regex without a literal prefix scans a large log slowly)
    at = min((i for lit in ("alphafold", "run_docker.py") if (i := text.find(lit)) >= 0),
             default=-1)
    if at < 0:
        return ""
    start = max(0, at - len("run_"))
    return next((why for rx, why in _CPU_BY_DESIGN if rx.search(text, start)), "")


# --- TensorFlow.js ------------------------------------------------------------------------------

_TFJS_WORDS = ("tf.serialization.registerClass", "TensorFlow.js", "@tensorflow/tfjs", "tfjs-",
               "tf-layers", "tf-core")
_JS_FRAME = re.compile(r"^\s+at \S+ \([^)\n]*\.(?:js|ts|mjs)(?:\?\w+)?:\d+", re.M)


def is_tfjs(text: str) -> bool:
    """The log is TensorFlow.js's: its wording, its packages, or JavaScript stack frames."""
    if any(w in text for w in _TFJS_WORDS):
        return True
    return any(w in text for w in (".js:", ".ts:", ".mjs:")) and bool(_JS_FRAME.search(text))


# --- a wheel pip will not install here ----------------------------------------------------------

_WHEEL_TAGS = re.compile(r"-(?P<py>(?:cp|py)\d+)-(?P<abi>[\w]+)-(?P<plat>[\w.]+?)\.whl$")
_PLATFORMS = (("win_amd64", "Windows 64-bit"), ("win32", "Windows 32-bit"),
              ("macosx", "macOS"), ("aarch64", "Linux ARM64"), ("arm64", "ARM64"),
              ("x86_64", "Linux x86-64 (64-bit)"), ("i686", "Linux 32-bit"), ("any", "any OS"))


def wheel_detail(details: Details) -> str:
    """'built for CPython 3.5 on Windows 64-bit' from a wheel's file name: its tags are what pip
    compares with the interpreter (Python version, OS, 32/64-bit)."""
    wheel = _first(details, "wheel")
    if not (m := _WHEEL_TAGS.search(wheel)):
        return ""
    py = m["py"]
    ver = f"{py[2]}.{py[3:]}" if py.startswith("cp") and len(py) > 3 else py[2:]
    lang = "CPython" if py.startswith("cp") else "Python"
    plat = next((name for tag, name in _PLATFORMS if tag in m["plat"]), m["plat"])
    return (f"the wheel is built for {lang} {ver} on {plat}: the interpreter running pip must be "
            "that Python version, OS and bitness")
