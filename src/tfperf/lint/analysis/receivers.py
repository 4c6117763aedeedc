"""Receivers resolved, not matched by name: ``self._actor.predict(x)`` runs Keras's
``Model.predict`` only if ``self._actor`` is a Keras model. Where the project itself defines
the receiver's class (``self._actor = Actor(...)``, a parameter annotated ``Actor``) and
that class defines the method and is no Keras model, the call runs the project's method:
rules keyed on a Keras or tf.data method name (``predict``, ``fit``, ``map``, ``batch``)
leave it alone.
"""

from __future__ import annotations

import ast
from typing import Any

from tfperf.lint.semantic import Context

# Base names that make a class a Keras model (or layer) whatever module they come from.
_KERAS_BASES = frozenset({"Model", "Sequential", "Functional", "Layer"})


def keras_class(ctx: Context, cls: ast.ClassDef, depth: int = 0) -> bool:
    """``cls`` derives from a Keras model or layer, or from a class this module cannot see
    through that is named like one (``tf.keras.Model``, ``Model``, ``keras.Sequential``)."""
    if depth > 10:
        return False
    for base in cls.bases:
        q = ctx.qualname(base) or ""
        last = q.rsplit(".", 1)[-1] if q else getattr(base, "attr", getattr(base, "id", ""))
        if "keras" in q or last in _KERAS_BASES:
            return True
        if type(base) is ast.Name:
            b = ctx.binding(base)
            if b is not None and b.kind == "class" and keras_class(ctx, b.value, depth + 1):
                return True
    return False


def defines(cls: ast.ClassDef, method: str) -> bool:
    return any(type(s) in (ast.FunctionDef, ast.AsyncFunctionDef) and s.name == method
               for s in cls.body)


def project_classes_defining(ctx: Context, method: str) -> list[tuple[ast.ClassDef, bool]]:
    """This module's classes that define ``method``, each with whether it is a Keras class."""
    classes: list[ast.ClassDef] = list(ctx.nodes_of(ast.ClassDef))  # type: ignore[arg-type]
    return [(c, keras_class(ctx, c)) for c in classes if defines(c, method)]


def receiver(ctx: Context, owner: Any, method: str) -> str | tuple[str, str] | None:
    """What ``owner.method(...)`` runs, where the project says: ``"own"`` a method of a class
    of this module (not a Keras class) that defines it; (spec, qualname) a class of another
    project module, for the project to decide (:func:`own_in_project`); ``None``: not
    known to be a project class (the name's rule decides as before)."""
    from tfperf.analysis.summary import instance_class, qualnames

    ref = instance_class(ctx, owner)
    if ref is None or ref[0] == "*":
        return None
    spec, qualname = ref
    if spec:
        return ref
    for node, q in qualnames(ctx).items():
        if q == qualname and type(node) is ast.ClassDef:
            return "own" if defines(node, method) and not keras_class(ctx, node) else None
    return None
