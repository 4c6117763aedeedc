"""The semantic model rules query through ``ctx``: what names refer to, and where code runs.

Built once per module by one indexing walk (:mod:`.index`); the rest is built lazily, only
for what rules ask. Layers, each a module answering one kind of question:

- :mod:`.index` — the walk: parents, nodes by type, calls by callee name, the per-module
  cache :meth:`~.index.ModuleIndex.cached`;
- :mod:`.names` — bindings and scopes: what a name refers to where it is read, the
  function/class/loops a node runs in, qualified names of imported APIs;
- :mod:`.tf_api` — TensorFlow's API surface as data (canonical spellings, tensor-returning
  APIs, dataset sources and methods);
- :mod:`.tensorflow` — what TensorFlow does with the code: traced functions, gradient tapes,
  tensor and dataset guesses;
- :mod:`.context` — :class:`Context`, the whole model plus positions and edits.

Heuristics are deliberately conservative: a rule that fires on correct code teaches users to
ignore tfperf, so "don't know" answers ``None``/``False``. Questions built on top of the
model (loops over tensors, host conversions, transposes...) live in
:mod:`tfperf.lint.analysis`.
"""

from tfperf.lint.semantic.context import Context
from tfperf.lint.semantic.index import split_lines
from tfperf.lint.semantic.names import (
    COMPREHENSION_NODES,
    FUNCTION_NODES,
    LOOP_NODES,
    SCOPE_NODES,
    Binding,
    names_loaded,
)
from tfperf.lint.semantic.tf_api import (
    DATASET_ANNOTATIONS,
    DATASET_FN_KEYWORDS,
    DATASET_FN_METHODS,
    DATASET_METHODS,
    DATASET_SOURCES,
    KERAS_TRACED_METHODS,
    TENSOR_ANNOTATIONS,
    TF_FUNCTION_NAMES,
    canonical,
    returns_tensor,
)

__all__ = [
    "COMPREHENSION_NODES", "DATASET_ANNOTATIONS", "DATASET_FN_KEYWORDS", "DATASET_FN_METHODS",
    "DATASET_METHODS", "DATASET_SOURCES", "FUNCTION_NODES", "KERAS_TRACED_METHODS",
    "LOOP_NODES", "SCOPE_NODES", "TENSOR_ANNOTATIONS", "TF_FUNCTION_NAMES", "Binding",
    "Context", "canonical", "names_loaded", "returns_tensor", "split_lines",
]
