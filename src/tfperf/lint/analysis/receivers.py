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


def defines_here(ctx: Context, cls: ast.ClassDef, method: str, depth: int = 0) -> bool:
    """``cls`` defines ``method``, or inherits it from a class of this module that does
    (``class WebliViT(VLM)`` with ``VLM.predict``): the project's method runs, not a
    library's."""
    if defines(cls, method):
        return True
    if depth > 5:
        return False
    for base in cls.bases:
        if type(base) is ast.Name:
            b = ctx.binding(base)
            if b is not None and b.kind == "class" and type(b.value) is ast.ClassDef \
                    and defines_here(ctx, b.value, method, depth + 1):
                return True
    return False


def hands_on(cls: ast.ClassDef, method: str) -> bool:
    """``cls``'s own ``method`` calls the base class's (``super().predict(x, ...)``,
    ``keras.Model.predict(self, x)``): what runs is still the library's."""
    for s in cls.body:
        if type(s) in (ast.FunctionDef, ast.AsyncFunctionDef) and s.name == method:
            return any(type(n) is ast.Call and type(n.func) is ast.Attribute
                       and n.func.attr == method and not (
                           type(n.func.value) is ast.Name and n.func.value.id == "self")
                       for n in ast.walk(s))
    return False


def keras_method(ctx: Context, cls: ast.ClassDef, method: str) -> bool:
    """``cls`` is a Keras class whose ``method`` is Keras's: not defined there, or defined
    to hand on to Keras's (a Keras model's own ``predict`` that runs ``self(x)`` is not)."""
    return keras_class(ctx, cls) and (not defines(cls, method) or hands_on(cls, method))


def project_classes_defining(ctx: Context, method: str) -> list[tuple[ast.ClassDef, bool]]:
    """This module's classes that define ``method``, each with whether that ``method`` is
    still a Keras one (:func:`keras_method`)."""
    classes: list[ast.ClassDef] = list(ctx.nodes_of(ast.ClassDef))  # type: ignore[arg-type]
    return [(c, keras_method(ctx, c, method)) for c in classes if defines(c, method)]


def receiver(ctx: Context, owner: Any, method: str) -> str | tuple[str, str] | None:
    """What ``owner.method(...)`` runs, where the project says: ``"own"`` a method of a class
    of this module (not a Keras class) that defines it; (spec, qualname) a class of another
    project module, for the project to decide (:func:`own_in_project`); ``None``: not
    known to be a project class (the name's rule decides as before)."""
    from tfperf.analysis.summary import instance_class, qualnames

    own = _self_class(ctx, owner)
    if own is not None:  # `self.predict(x)` in a method of a class of this module
        return "own" if defines(own, method) and not keras_method(ctx, own, method) else None
    ref = instance_class(ctx, owner)
    if ref is None or ref[0] == "*":
        return None
    spec, qualname = ref
    if spec:
        return ref
    for node, q in qualnames(ctx).items():
        if q == qualname and type(node) is ast.ClassDef:
            return "own" if defines_here(ctx, node, method) \
                and not keras_method(ctx, node, method) else None
    return None


def _self_class(ctx: Context, owner: Any) -> ast.ClassDef | None:
    """The class whose method ``owner`` (a name ``self``) is the first parameter of."""
    if type(owner) is not ast.Name or owner.id != "self":
        return None
    b = ctx.binding(owner)
    if b is None or b.kind != "param":
        return None
    fn = ctx.scope_of(b.value)
    if type(fn) not in (ast.FunctionDef, ast.AsyncFunctionDef) \
            or not fn.args.args or fn.args.args[0] is not b.value:
        return None
    cls = ctx.parent(fn)
    return cls if type(cls) is ast.ClassDef else None


def project_instance(ctx: Context, expr: Any, depth: int = 0) -> tuple[str, str] | None:
    """The project class ``expr`` is an instance of (module spec, qualname, as
    :func:`tfperf.analysis.summary.instance_class`): built here (``net = Net()``,
    ``self.loss = YoloLoss()``), or a parameter that a call of its function in this
    module gives one (``train(model, ...)`` with ``model = WideResNet(...)``), up to
    three hops."""
    from tfperf.analysis.summary import instance_class
    from tfperf.lint.analysis.callers import passed_values

    ref = instance_class(ctx, expr)
    if ref is not None or depth > 2:
        return ref
    for value in passed_values(ctx, expr) or ():
        found = project_instance(ctx, value, depth + 1)
        if found is not None:
            return found
    return None
