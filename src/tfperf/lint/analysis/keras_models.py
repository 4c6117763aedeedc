"""Keras models: whether an expression is a Keras model (built, loaded, subclassed, or
returned by a module function), so rules can tell a per-example model call from a layer
call on a batch."""

from __future__ import annotations

import ast
from typing import Any

from tfperf.lint.analysis.syntax import own_nodes
from tfperf.lint.semantic import Context

# Calls whose result is a Keras model (canonical names; `keras.applications.X` too).
MODEL_FACTORIES = frozenset({
    "keras.Model", "keras.models.Model", "keras.Sequential", "keras.models.Sequential",
    "keras.models.load_model", "keras.saving.load_model", "keras.models.clone_model",
    "keras.models.model_from_json", "keras.models.model_from_config",
    "keras.models.model_from_yaml",
})


MODEL_CLASSES = frozenset({"keras.Model", "keras.models.Model", "keras.Sequential",
                           "keras.models.Sequential"})


def _model_class(ctx: Context, cls: ast.AST, depth: int = 0) -> bool:
    """A class deriving (directly or through classes of this module) from ``keras.Model``."""
    if type(cls) is not ast.ClassDef or depth > 10:
        return False
    for base in cls.bases:
        if ctx.qualname(base) in MODEL_CLASSES:
            return True
        if type(base) is ast.Name:
            b = ctx.binding(base)
            if b is not None and b.kind == "class" and _model_class(ctx, b.value, depth + 1):
                return True
    return False


def _model_factory_call(ctx: Context, call: ast.AST, depth: int) -> bool:
    if type(call) is not ast.Call:
        return False
    q = ctx.qualname(call.func)
    if q is not None:
        if q.startswith("keras_core."):  # Keras 3's pre-release name (2023)
            q = "keras." + q[len("keras_core."):]
        if q in MODEL_FACTORIES:
            return True
        parts = q.split(".")
        return q.startswith("keras.applications.") and parts[-1][:1].isupper()
    func = call.func
    if type(func) is not ast.Name:
        return False
    b = ctx.binding(func)
    if b is None:
        return False
    if b.kind == "class":
        return _model_class(ctx, b.value)
    if b.kind == "def" and depth < 3:  # `def build_model(): ... return keras.Model(...)`
        returns = [n for n in own_nodes(b.value) if type(n) is ast.Return and n.value]
        return bool(returns) and all(is_keras_model(ctx, r.value, depth + 1) for r in returns)
    return False


def is_keras_model(ctx: Context, expr: ast.AST | None, depth: int = 0) -> bool:
    """``expr`` is a Keras model: a name bound to ``keras.Model(...)``/``Sequential``/
    ``load_model``/``keras.applications.X(...)``, to an instance of a ``keras.Model``
    subclass, to a module function that returns one, or a parameter annotated
    ``keras.Model``."""
    if expr is None or depth > 5:
        return False
    if type(expr) is ast.Call:
        return _model_factory_call(ctx, expr, depth)
    if type(expr) is not ast.Name:
        return False
    b = ctx.binding(expr)
    if b is None:
        return False
    if b.kind == "assign":
        return b.value is not expr and is_keras_model(ctx, b.value, depth + 1)
    if b.kind == "param":
        if _self_of_model_class(ctx, b.value):
            return True  # `self.predict(x)` in a method of a keras.Model subclass
        ann = b.value.annotation
        if ann is not None:
            return ctx.qualname(ann) in MODEL_CLASSES
        return _model_from_every_caller(ctx, b.value, depth)
    return False


def _self_of_model_class(ctx: Context, arg: ast.arg) -> bool:
    """``arg`` is the first parameter of a plain method of a ``keras.Model`` subclass."""
    arguments = ctx.parent(arg)
    fn: Any = ctx.parent(arguments) if arguments is not None else None
    if type(fn) not in (ast.FunctionDef, ast.AsyncFunctionDef):
        return False
    positional = [*fn.args.posonlyargs, *fn.args.args]
    if not positional or positional[0] is not arg:
        return False
    if any(type(d) is ast.Name and d.id in ("staticmethod", "classmethod")
           for d in fn.decorator_list):
        return False
    cls = ctx.parent(fn)
    return cls is not None and _model_class(ctx, cls)


# Packages whose model objects have their own `fit`/`predict`, never Keras's
# (`sklearn.linear_model.SGDRegressor()`, `xgboost.XGBRegressor()`). A list, not "anything
# but Keras": a class of the project's own modules (`from nets import Net`) may be a Keras
# model.
_OTHER_LIBRARIES = frozenset({"sklearn", "xgboost", "lightgbm", "catboost", "statsmodels",
                              "torch", "scipy", "pmdarima", "prophet", "hmmlearn"})


def other_library_object(ctx: Context, expr: ast.AST | None) -> bool:
    """``expr`` is a name assigned from a constructor of a library that is not Keras or
    TensorFlow (``model = SGDRegressor()``): a ``model`` so named that is not a Keras
    model, whatever the module imports."""
    if type(expr) is not ast.Name:
        return False
    b = ctx.binding(expr)
    if b is None or b.kind != "assign" or type(b.value) is not ast.Call:
        return False
    q = ctx.qualname(b.value.func)
    return q is not None and q.split(".")[0] in _OTHER_LIBRARIES


def _model_from_every_caller(ctx: Context, arg: ast.arg, depth: int) -> bool:
    """Stop 39, pass B: the parameter ``arg`` is given a Keras model by every call of its
    function in this module (``def predict_one(m, row): ...``, ``predict_one(model, r)``):
    a model through a name that does not say so. No caller here: unknown, not a model."""
    from tfperf.lint.analysis.callers import bound_arguments, calls_of

    fn = ctx.scope_of(arg)
    if type(fn) not in (ast.FunctionDef, ast.AsyncFunctionDef):
        return False
    calls = calls_of(ctx, fn)
    if not calls:
        return False
    for call in calls:
        bound = bound_arguments(fn, call)
        value = None if bound is None else bound.get(arg.arg)
        if value is None or not is_keras_model(ctx, value, depth + 1):
            return False
    return True
