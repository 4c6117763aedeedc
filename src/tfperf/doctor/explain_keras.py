"""Which Keras a log's objects and frames belong to, when two of them meet.

Five Keras implementations have run TensorFlow models, and an object of one is not a class of
another: standalone multi-backend Keras (the ``keras`` package up to 2.3), tf.keras bundled in
TensorFlow (``tensorflow.python.keras`` / ``tensorflow_core.python.keras``, TF 1.x to 2.5; from 2.6
tf.keras is the ``keras`` package again), Keras 2.13-2.15's ``keras.src`` layout, Keras 3
(``keras.src`` with ``ops``, ``trainers``, ``backend``; the default from TensorFlow 2.16), and
tf-keras (``tf_keras``, Keras 2 for TensorFlow 2.16+). A log names them in two places: the module
path of the object in the message (``<tensorflow.python.keras.optimizers.Adam object at ...>``)
and the file path of the frames that rejected it (``site-packages/keras/optimizers.py``). This
module reads both and says what to make of the pair; the explainer gives it the lines above the
message.
"""

from __future__ import annotations

import re

_FRAME_PATH = re.compile(r'File "(?P<a>[^"]+)"|^\s*(?:\[)?(?P<b>(?:[A-Za-z]:)?[~\w./\\ -]+\.py)\b')

# (what, regex over a '/'-normalised file path), most specific first
_PATH_FLAVOURS = (
    ("tf-keras (Keras 2 for TensorFlow 2.16+)", re.compile(r"/tf_keras/")),
    ("tf.keras bundled in TensorFlow (tensorflow.python.keras, TensorFlow 2.5 or older)",
     re.compile(r"/tensorflow(?:_core)?/python/keras/")),
    ("Keras 3", re.compile(r"/keras/src/(?:trainers|backend|ops|models/(?:functional|sequential|"
                           r"model)\.py|layers/layer\.py)")),
    ("Keras 2.13-2.15 (keras.src)", re.compile(r"/keras/src/engine/")),
    ("the keras package (standalone Keras, or tf.keras's own package on TensorFlow 2.6-2.12)",
     re.compile(r"/keras/(?:engine|optimizers|layers|models|legacy|utils)\b")),
)
# an object's module path (from its repr)
_OBJECT_FLAVOURS = (
    ("tf-keras (Keras 2 for TensorFlow 2.16+)", re.compile(r"^tf_keras\.")),
    ("tf.keras bundled in TensorFlow (tensorflow.python.keras, TensorFlow 2.5 or older)",
     re.compile(r"^tensorflow(?:_core)?\.python\.keras\.")),
    ("Keras 2.13+ or Keras 3 (keras.src)", re.compile(r"^keras\.src\.")),
    ("the keras package (standalone Keras, or tf.keras's own package on TensorFlow 2.6-2.12)",
     re.compile(r"^keras\.")),
)
_TF_HUB = re.compile(r"^tensorflow_hub\.")


def flavour_of_path(path: str) -> str:
    norm = "/" + path.replace("\\", "/").lstrip("/")
    return next((what for what, rx in _PATH_FLAVOURS if rx.search(norm)), "")


def flavour_of_object(module: str) -> str:
    if _TF_HUB.match(module):
        return "tensorflow_hub's KerasLayer (built on tf.keras; tf-keras on TensorFlow 2.16+)"
    if what := next((w for w, rx in _OBJECT_FLAVOURS if rx.match(module)), ""):
        return what
    package = module.split(".", 1)[0]
    return f"the library {package}, built on one Keras of its own choosing" if package else ""


def receiver_path(lines: list[str], at: int, back: int = 60) -> str:
    """The path of the innermost Keras/TensorFlow frame above line ``at`` (the one whose code
    rejected the object), '' if the log shows none."""
    for li in range(at - 1, max(-1, at - back), -1):
        m = _FRAME_PATH.search(lines[li])
        if m and (path := m["a"] or m["b"] or "") and flavour_of_path(path):
            return path
    return ""


def flavour_detail(details: dict[str, list[str]]) -> str:
    """ "the optimizer is the library keras_radam's ...; the code that rejected it is tf.keras
    bundled in TensorFlow: ..." plus the switch that puts both on one Keras."""
    obj = next((v[0] for f in ("object", "object2", "object3") if (v := details.get(f))), "")
    receiver = flavour_of_path((details.get("receiver") or [""])[0])
    if not receiver and details.get("object3"):
        receiver = "Keras 3"  # 'Only instances of `keras.Layer`' is Keras 3's own wording
    have = flavour_of_object(obj)
    if not (have or receiver):
        return ""
    parts = []
    if have:
        parts.append(f"the object is {obj.rsplit('.', 1)[-1]} of {have}")
    if receiver:
        parts.append(f"the code that rejected it is {receiver}")
    out = "; ".join(parts)
    if receiver == "Keras 3" and ("tf-keras" in have or "tensorflow_hub" in have
                                  or "tf.keras" in have):
        return out + (": pip install tf-keras and set TF_USE_LEGACY_KERAS=1 before importing "
                      "TensorFlow, so tf.keras is Keras 2 again")
    if have.startswith("the library"):
        return out + (f": switch {obj.split('.', 1)[0]} to the Keras the model uses (TF_KERAS=1 "
                      "for libraries that read it, or the library's own setting), or build the "
                      "model with the Keras the library uses")
    if have and receiver and have != receiver:
        return out + ": import the model, its layers and its optimizer from one of them"
    return out


# a layer that wraps a Python function: DistributionLambda (TFP), Lambda, any *Lambda of a library
_UNKNOWN_LAMBDA = re.compile(r"Unknown layer:? ['\"]?(?P<cls>(?!TFOpLambda)\w*Lambda)\b")

Reading = tuple[str, str, str]  # (cause, fix, the log's words that show it)


def lambda_layer_from_config(text: str) -> Reading | None:
    """"Unknown layer: DistributionLambda" (or another *Lambda): the layer wraps a Python
    function the saved config cannot bring back, so custom_objects alone rarely restores it;
    the way that works is to build the model in code and load the weights only."""
    if "Lambda" not in text or (m := _UNKNOWN_LAMBDA.search(text)) is None:
        return None
    if "registerClass" in text or "tf-layers" in text or "tfjs" in text.lower():
        return None  # TensorFlow.js: the layer is ported to JavaScript, its row's fix says so
    cls = m["cls"]
    return (f"{cls} is a layer that wraps a Python function (a lambda, a distribution-making "
            "function): the saved model (.h5 / SavedModel config) keeps the layer's name, not a "
            "function the loader can run, so loading the whole model fails or needs that code "
            "registered under the same name.",
            "Build the model again in code (the same function that built it) and load only the "
            "weights: save_weights / load_weights (R: save_model_weights_hdf5 / "
            "load_model_weights_hdf5); passing the class in custom_objects works only when the "
            "wrapped function is rebuilt too.", m.group(0))
