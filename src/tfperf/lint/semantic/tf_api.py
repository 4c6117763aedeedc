"""TensorFlow's API surface as data: canonical spellings, what returns a tensor, what makes
or transforms a ``tf.data`` dataset, which methods Keras traces.

Plain data and pure functions over qualified names; no module is analysed here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

TF_FUNCTION_NAMES = frozenset({"tensorflow.function", "tensorflow.compat.v1.function"})
# Keras methods that Keras traces into a graph (unless the model runs eagerly).
KERAS_TRACED_METHODS = frozenset({"call", "train_step", "test_step", "predict_step"})
DATASET_FN_METHODS = frozenset({"map", "interleave", "filter", "flat_map"})
DATASET_FN_KEYWORDS = frozenset({"map_func", "predicate"})
DATASET_METHODS = frozenset({
    "map", "batch", "shuffle", "prefetch", "cache", "repeat", "filter", "interleave",
    "flat_map", "take", "skip", "unbatch", "padded_batch", "apply", "with_options", "shard",
    "concatenate", "enumerate", "window", "rebatch", "ragged_batch", "take_while",
    "bucket_by_sequence_length", "group_by_window", "scan", "unique", "sample_from_datasets",
})
DATASET_SOURCES = frozenset({
    "tensorflow.data.Dataset.from_tensor_slices", "tensorflow.data.Dataset.from_tensors",
    "tensorflow.data.Dataset.range", "tensorflow.data.Dataset.zip",
    "tensorflow.data.Dataset.list_files", "tensorflow.data.Dataset.from_generator",
    "tensorflow.data.Dataset.sample_from_datasets", "tensorflow.data.Dataset.choose_from_datasets",
    "tensorflow.data.Dataset.load", "tensorflow.data.TFRecordDataset",
    "tensorflow.data.TextLineDataset", "tensorflow.data.FixedLengthRecordDataset",
    "tensorflow.data.experimental.make_csv_dataset", "tensorflow.data.experimental.load",
    "keras.utils.image_dataset_from_directory", "keras.utils.text_dataset_from_directory",
    "keras.utils.timeseries_dataset_from_array", "keras.utils.audio_dataset_from_directory",
    "keras.preprocessing.image_dataset_from_directory",
    "keras.preprocessing.text_dataset_from_directory",
    "keras.preprocessing.timeseries_dataset_from_array",
})
# TF1 code reaches the same tf.data API through ``import tensorflow.compat.v1 as tf``.
DATASET_SOURCES = DATASET_SOURCES | frozenset(
    "tensorflow.compat.v1." + q[len("tensorflow."):] for q in DATASET_SOURCES
    if q.startswith("tensorflow."))
DATASET_ANNOTATIONS = frozenset({"tensorflow.data.Dataset"})
TENSOR_ANNOTATIONS = frozenset({
    "tensorflow.Tensor", "tensorflow.Variable", "tensorflow.RaggedTensor",
    "tensorflow.SparseTensor", "tensorflow.compat.v1.Tensor", "tensorflow.compat.v1.Variable",
    "tensorflow.types.experimental.TensorLike",
})
# A variable whose name says it holds a dataset; used only where nothing better is known.
DATASET_NAME = re.compile(r"(?:^|_)(?:ds|dataset|data_set)s?(?:_|$)", re.IGNORECASE)

# tf.* callables that do not return a tensor (namespaces anywhere in the path, or last parts).
_NON_TENSOR_NAMESPACES = frozenset({
    "keras", "data", "config", "distribute", "saved_model", "summary", "gfile", "test",
    "debugging", "autograph", "sysconfig", "train", "lite", "estimator", "feature_column",
    "errors", "dtypes", "types", "nest", "tpu", "profiler", "experimental", "queue", "version",
    "mixed_precision", "checkpoint", "initializers", "optimizers", "losses", "metrics",
    "logging", "flags", "app", "resource_loader",
})
_NON_TENSOR_FUNCTIONS = frozenset({
    "function", "print", "device", "name_scope", "executing_eagerly", "is_tensor",
    "get_static_value", "get_logger", "as_dtype", "control_dependencies", "init_scope",
    "numpy_function", "py_func", "Session", "InteractiveSession", "Graph", "get_default_graph",
    "global_variables_initializer", "variable_scope", "enable_eager_execution",
    "disable_eager_execution", "disable_v2_behavior", "set_random_seed", "assert_equal",
    "Assert", "no_op", "group", "make_ndarray", "make_tensor_proto", "ensure_shape",
    # Pure-Python helpers: strings, paths, static dimensions, version checks (issue 18).
    "as_text", "as_bytes", "as_str", "as_str_any", "path_to_str", "dimension_value",
    "dimension_at_index", "forward_compatible", "reset_default_graph", "set_seed",
    "get_default_session", "get_variable_scope", "register_tensor_conversion_function",
})
# tf.* callables that return a Python list (or tuple) of tensors, not one tensor: iterating
# or measuring their result walks a few Python objects, each element is a tensor. (Not
# `unstack`: its list has one tensor per row, and iterating it is a per-element loop.)
_TENSOR_LIST_FUNCTIONS = frozenset({
    "split", "meshgrid", "dynamic_partition", "gradients", "hessians",
    "trainable_variables", "global_variables", "local_variables", "model_variables",
    "all_variables", "moving_average_variables", "get_collection", "get_collection_ref",
    "identity_n", "shape_n", "broadcast_dynamic_shape_n", "unique", "unique_with_counts",
    "moments", "weighted_moments", "sufficient_statistics", "top_k", "svd", "qr", "eig",
    "eigh", "lu", "decode_csv", "parse_example", "parse_single_example",
    "parse_single_sequence_example", "while_loop", "tuple",
})
_TENSOR_CLASSES = frozenset({"Variable", "RaggedTensor", "SparseTensor", "IndexedSlices"})


def canonical(qualname: str) -> str:
    """One spelling per API: ``tensorflow.compat.v2.X`` is ``tensorflow.X``; ``tf.keras``,
    ``tensorflow.keras`` and ``tf_keras`` are all ``keras`` (same public API names)."""
    if qualname.startswith("tensorflow."):
        if qualname == "tensorflow.compat.v2" or qualname.startswith("tensorflow.compat.v2."):
            return "tensorflow" + qualname[len("tensorflow.compat.v2"):]
        if qualname == "tensorflow.keras" or qualname.startswith("tensorflow.keras."):
            return "keras" + qualname[len("tensorflow.keras"):]
        if qualname.startswith("tensorflow.python.keras"):
            return "keras" + qualname[len("tensorflow.python.keras"):]
    elif qualname == "tf_keras" or qualname.startswith("tf_keras."):
        return "keras" + qualname[len("tf_keras"):]
    return qualname


# keras.ops functions that return host values: a NumPy array, a Python tuple or bool.
_KERAS_OPS_HOST_VALUES = frozenset({"convert_to_numpy", "is_tensor", "shape", "dtype"})


def returns_tensor(qualname: str) -> bool:
    """Whether calling the API ``qualname`` (canonical) returns a tensor (not a Python list
    of them: see :func:`returns_tensor_list`)."""
    if qualname.startswith("keras.ops."):
        last = qualname.rsplit(".", 1)[-1]
        return last not in _TENSOR_LIST_FUNCTIONS and last not in _KERAS_OPS_HOST_VALUES
    if not qualname.startswith("tensorflow."):
        return False
    parts = qualname.split(".")
    last = parts[-1]
    if not last or last in _NON_TENSOR_FUNCTIONS or last in _TENSOR_LIST_FUNCTIONS \
            or last.startswith(("enable_", "disable_")):  # behaviour switches
        return False
    if last[0].isupper() and last not in _TENSOR_CLASSES:
        return False
    return not any(p in _NON_TENSOR_NAMESPACES for p in parts[1:-1])


def returns_tensor_list(qualname: str) -> bool:
    """Whether calling the API ``qualname`` (canonical) returns a Python list or tuple of
    tensors (``tf.split``, ``tf.unstack``, ``tf.gradients``, ``tf.trainable_variables``...):
    a loop over it visits a few Python objects, not a tensor's elements."""
    if not qualname.startswith(("tensorflow.", "keras.ops.")):
        return False
    parts = qualname.split(".")
    return parts[-1] in _TENSOR_LIST_FUNCTIONS and not any(
        p in _NON_TENSOR_NAMESPACES for p in parts[1:-1] if p != "experimental")

# Top-level packages whose import makes TensorFlow APIs reachable.
TF_ROOTS = frozenset({"tensorflow", "keras", "tf_keras"})
# Package directories whose relative imports are resolved (see relative_module).
_KERAS_TREES = ("keras", "tf_keras")


def relative_module(path: str, level: int, module: str | None,
                    names: Sequence[str] = ()) -> str | None:
    """The absolute module a relative import (``from ..x import y``: ``level`` 2, ``module``
    "x", ``names`` ["y"]) names in the file at ``path``, when it imports Keras' backend from a
    Keras source tree (a directory named ``keras`` or ``tf_keras`` at or above the package it
    reaches): in ``keras/layers/pool.py``, ``from .. import backend as K`` imports
    ``keras.backend``. Else ``None``: where a package's root lies is unknown, and a package of
    one's own may be called ``keras`` too (``trieste/models/keras``); Keras 2's sources import
    their backend this way in every layer."""
    if level < 1 or "/" not in path.replace("\\", "/"):
        return None
    dirs = path.replace("\\", "/").split("/")[:-1]
    if level - 1 >= len(dirs):
        return None
    package = dirs[:len(dirs) - (level - 1)]
    for i in range(len(package) - 1, -1, -1):
        if package[i] in _KERAS_TREES:
            parts = package[i:] + (module.split(".") if module else [])
            if not all(n.isidentifier() for n in parts):
                return None
            if parts[1:2] == ["backend"] or (len(parts) == 1 and "backend" in names):
                return ".".join(parts)
            return None
    return None
