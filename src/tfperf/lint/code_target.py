"""The TensorFlow generation a module's own APIs show, for a file no pin targets.

A project without a pin is linted at the installed TensorFlow (:mod:`tfperf.lint.target`).
That is wrong for code that cannot run there: ``tf.Session()``, ``K.set_session(...)``,
``Model(input=..., output=...)`` or standalone ``keras.optimizers.Adam(lr=...)`` were written
for TensorFlow 1.x graph mode or multi-backend Keras 2, where ``predict`` runs a prebuilt graph
in a session. Such a module targets TensorFlow 1.15 (the last 1.x release) instead, unless it
also uses an API that only TensorFlow 2 has (``tf.function``, ``tf.GradientTape``): then it was
written for TensorFlow 2 and its old spellings are leftovers.

The evidence is read from the module's calls and imports (one pass over lists the semantic
model already holds); nothing is executed.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from tfperf.lint.target import LAST_MINOR, TargetTF

if TYPE_CHECKING:
    from tfperf.lint.semantic import Context

TF1 = (1, LAST_MINOR[1])
# TensorFlow 1.x APIs that TensorFlow 2 removed from the top-level namespace (they live on
# only under `tf.compat.v1`, which says nothing about the generation).
_TF1_ONLY = frozenset(f"tensorflow.{n}" for n in (
    "Session", "InteractiveSession", "placeholder", "global_variables_initializer",
    "initialize_all_variables", "local_variables_initializer", "ConfigProto", "GPUOptions",
    "variable_scope", "get_variable", "reset_default_graph", "get_default_session",
    "train.Saver", "train.AdamOptimizer", "train.GradientDescentOptimizer",
    "train.MomentumOptimizer", "train.RMSPropOptimizer", "train.AdagradOptimizer",
    "train.start_queue_runners", "summary.FileWriter", "Print"))
# Multi-backend Keras's session plumbing (tf.keras 2.x has no get_session/set_session).
_KERAS_SESSION = frozenset({"keras.backend.get_session", "keras.backend.set_session"})
# Keras 1 keywords, gone from Keras 2's tf.keras: `fit(nb_epoch=)`, `Model(input=, output=)`.
_KERAS_MODELS = frozenset({"keras.models.Model", "keras.Model", "keras.engine.training.Model"})
# TensorFlow 2 only: a module using one of these was written for TF 2, whatever else it spells.
_TF2_ONLY = ("tensorflow.function", "tensorflow.GradientTape", "tensorflow.config.",
             "tensorflow.summary.create_file_writer", "tensorflow.random.Generator",
             "keras.optimizers.legacy.", "keras.ops.")
# Cheap pre-test: a module that spells none of these cannot hold the evidence above.
_WORDS = ("Session", "placeholder", "initializer", "ConfigProto", "GPUOptions", "variable",
          "graph", "Optimizer", "Saver", "queue_runners", "FileWriter", "Print", "session",
          "tensorflow_backend", "nb_epoch", "input=", "lr=")


def inferred_target(ctx: Context, keras_graph: bool = False) -> TargetTF | None:
    """TensorFlow 1.15 for a module written for TF 1.x graph mode or multi-backend Keras
    (see the module docstring), with the evidence in ``source``; else ``None``.
    ``keras_graph``: the project's requirements pin multi-backend Keras (2.2 or older) and
    no TensorFlow, so a module importing standalone ``keras`` runs on a TF 1.x graph."""
    src = ctx.source
    if keras_graph and "keras" in src:
        found = _standalone_keras_import(ctx)
        if found is not None and not _tf2_only(ctx):
            return TargetTF(TF1, f"multi-backend Keras pinned (2.2 or older): {found}")
    if not any(w in src for w in _WORDS):
        return None
    evidence = None
    for call in ctx.calls:
        q = ctx.qualname(call.func)
        if q is not None and q.startswith(_TF2_ONLY):
            return None
        if evidence is None:
            evidence = _evidence(ctx, call, q)
    if evidence is None:
        evidence = _backend_import(ctx)
    if evidence is None or _tf2_decorated(ctx):
        return None
    return TargetTF(TF1, f"no pin; the code is TF 1.x / multi-backend Keras: {evidence}")


def _evidence(ctx: Context, call: ast.Call, q: str | None) -> str | None:
    if q in _TF1_ONLY or (q or "").startswith("tensorflow.contrib."):
        return f"{q} (line {call.lineno})"
    if q in _KERAS_SESSION:
        return f"{q} (line {call.lineno})"
    keywords = {k.arg for k in call.keywords}
    f = call.func
    if "nb_epoch" in keywords and type(f) is ast.Attribute and f.attr.startswith("fit"):
        return f"fit(nb_epoch=) (line {call.lineno})"
    if q in _KERAS_MODELS and {"input", "output"} <= keywords:
        return f"Model(input=, output=) (line {call.lineno})"
    if "lr" in keywords and (q or "").startswith("keras.optimizers.") \
            and _from_standalone_keras(ctx, f):
        return f"standalone {q}(lr=) (line {call.lineno})"
    return None


def _from_standalone_keras(ctx: Context, func: ast.expr) -> bool:
    """``func`` is spelled through an import of the standalone ``keras`` package
    (``from keras.optimizers import Adam``, ``import keras``), not ``tensorflow.keras``
    (``tf.keras.optimizers.Adam(lr=)`` is TF 2 code too, up to 2.15)."""
    root = func
    while type(root) is ast.Attribute:
        root = root.value
    if type(root) is not ast.Name:
        return False
    b = ctx.binding(root)
    stmt = b.value if b is not None and b.kind == "import" else None
    if type(stmt) is ast.ImportFrom:
        return not stmt.level and (stmt.module or "").split(".", 1)[0] == "keras"
    if type(stmt) is ast.Import:
        return any(a.name.split(".", 1)[0] == "keras"
                   and (a.asname or a.name.split(".", 1)[0]) == root.id for a in stmt.names)
    return False


def _standalone_keras_import(ctx: Context) -> str | None:
    """The first import of the standalone ``keras`` package (``import keras``, ``from
    keras.models import Sequential``), as evidence; ``None`` if the module has none."""
    for node in ctx.nodes_of(ast.Import, ast.ImportFrom):
        if type(node) is ast.ImportFrom:
            names = [] if node.level else [node.module or ""]
        else:
            names = [a.name for a in node.names]
        if any(n.split(".", 1)[0] == "keras" for n in names):
            return f"import of standalone keras (line {node.lineno})"
    return None


def _tf2_only(ctx: Context) -> bool:
    """The module calls or decorates with an API only TensorFlow 2 has."""
    return _tf2_decorated(ctx) or any(
        (q := ctx.qualname(call.func)) is not None and q.startswith(_TF2_ONLY)
        for call in ctx.calls)


def _tf2_decorated(ctx: Context) -> bool:
    """A function of the module is decorated ``@tf.function`` (a decorator is no call)."""
    for fn in ctx.nodes_of(ast.FunctionDef, ast.AsyncFunctionDef):
        for d in fn.decorator_list:
            q = ctx.qualname(d.func if type(d) is ast.Call else d)
            if q is not None and q.startswith(_TF2_ONLY):
                return True
    return False


def _backend_import(ctx: Context) -> str | None:
    if "tensorflow_backend" not in ctx.source:
        return None
    for node in ctx.nodes_of(ast.Import, ast.ImportFrom):
        names = [node.module or ""] if type(node) is ast.ImportFrom else []
        names += [a.name for a in node.names]
        if any(n.startswith("keras.backend.tensorflow_backend") or n == "tensorflow_backend"
               for n in names):
            return f"import of keras.backend.tensorflow_backend (line {node.lineno})"
    return None
