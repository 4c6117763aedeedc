"""Keras mixed precision: ``tf.keras.mixed_precision.set_global_policy("mixed_bfloat16")``
(or ``"mixed_float16"``) at the top of the module, so that layers compute in the reduced
dtype and keep float32 variables.

A policy applies only to layers built after it is set, so a candidate can honour it only
where the model is built after tune sets it: inside the tuned function (or a function of the
module it calls), or by the factory of fresh inputs a stateful function is tuned with. The
candidate is loaded, its inputs made and (when the function builds the model) each call run
with the policy set, and the process's policy is restored after: the measurement sees what
the patched program would do, and the other candidates are not touched. A model built before
(a module-level model, one passed in as a plain argument) is rejected with that reason.

Offered only where the device facts say the dtype has fast math, like the argument casts.
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import sys
import types
from collections.abc import Iterator
from typing import Any

from tfperf.tune.lever import Lever, LeverContext
from tfperf.tune.source import ensure_tf, find_function, parse
from tfperf.tune.target import Target

#: How deep tune follows the module's own functions looking for a model being built.
MAX_DEPTH = 3


def is_keras_layer(value: Any) -> bool:
    """A Keras layer or model (Keras 3, or the tf_keras of TF 2.x)."""
    return any(cls.__name__ == "Layer" and cls.__module__.startswith(("keras", "tf_keras"))
               for cls in type(value).__mro__)


def _is_layer_class(value: Any) -> bool:
    return inspect.isclass(value) and any(
        c.__name__ == "Layer" and c.__module__.startswith(("keras", "tf_keras"))
        for c in value.__mro__)


def _resolve(node: ast.expr, namespace: dict[str, Any]) -> Any:
    """The object a dotted name (``tf.keras.layers.Dense``) names, following attributes of
    modules and classes only (no property of a user object runs)."""
    if isinstance(node, ast.Name):
        return namespace.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _resolve(node.value, namespace)
        if isinstance(base, types.ModuleType) or inspect.isclass(base):
            try:
                return getattr(base, node.attr, None)
            except Exception:  # a lazy module that fails to load
                return None
    return None


def builds_model(tree: ast.Module, name: str, namespace: dict[str, Any],
                 depth: int = MAX_DEPTH) -> bool:
    """Whether function ``name`` of ``tree`` constructs a Keras layer or model, itself or
    through the module's functions it calls."""
    try:
        fn = find_function(tree, name)
    except Exception:
        return False
    for call in (n for n in ast.walk(fn) if isinstance(n, ast.Call)):
        obj = _resolve(call.func, namespace)
        if _is_layer_class(obj):
            return True
        callee = call.func.id if isinstance(call.func, ast.Name) else None
        own = callee not in (None, name) and any(
            isinstance(n, ast.FunctionDef) and n.name == callee for n in tree.body)
        if own and callee and depth > 0 and builds_model(tree, callee, namespace, depth - 1):
            return True
    return False


def _leaves(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _leaves(v)
    else:
        yield value


def _global_models(target: Target) -> list[str]:
    """Module-level names the function reads that hold a Keras layer or model."""
    fn = find_function(parse(target.source), target.name)
    names = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
    return sorted(n for n in names if is_keras_layer(target.globals.get(n)))


def where_built(target: Target) -> tuple[str | None, str]:
    """(``"function"`` | ``"factory"`` | None, why): where the Keras model the function uses
    is built, and whether a policy set by the candidate can reach it."""
    global_models = _global_models(target)
    if global_models:
        return None, (f"the function uses the module-level model {global_models[0]}, built "
                      "before a policy could be set (a dtype policy applies to layers built "
                      "after it); build it inside the function or in the inputs factory")
    if builds_model(parse(target.source), target.name, target.globals):
        return "function", "the function builds its Keras model"
    if any(is_keras_layer(x) for x in _leaves((target.args, target.kwargs))):
        if target.inputs is not None:
            return "factory", "the inputs factory builds the Keras model"
        return None, ("the Keras model is passed in already built (a dtype policy applies to "
                      "layers built after it is set); tune it with a factory of fresh inputs "
                      "(inputs=…, or @tfperf.inputs) that builds the model")
    return None, "the function neither builds nor is given a Keras model"


@contextlib.contextmanager
def global_policy(name: str) -> Iterator[None]:
    """Keras' global dtype policy set to ``name``, and the previous one restored after."""
    mixed = sys.modules["tensorflow"].keras.mixed_precision
    before = mixed.global_policy()
    mixed.set_global_policy(name)
    try:
        yield
    finally:
        mixed.set_global_policy(before)


class MixedPolicy(Lever):
    slot, stage, reduced_precision = "precision", 45, True
    rejections = ("the device has no fast math for the dtype",
                  "the model is built before the policy can be set (module level, a plain "
                  "argument)",
                  "the model's output meets float32 tensors (raises: keep the last layer "
                  "float32)", "too far from the reference for the dtype's tolerance")

    def __init__(self, policy: str) -> None:
        self.policy = policy
        self.dtype = policy.removeprefix("mixed_")
        self.name = f"{policy} policy"
        self.description = f"tf.keras.mixed_precision.set_global_policy({policy!r})"

    def applies(self, ctx: LeverContext) -> str | None:
        fast, why = ctx.facts.fast(self.dtype or "")
        if not fast:
            return why
        where, why = ctx.cache.get("keras_where") or where_built(ctx.target)
        ctx.cache["keras_where"] = (where, why)
        if where is None:
            return why
        self.wraps_calls = where == "function"
        return None

    def build(self, text: str, ctx: LeverContext) -> str:
        text, tf = ensure_tf(text)
        tree = parse(text)
        line = 0  # after the module's leading docstring and imports
        for i, node in enumerate(tree.body):
            leading = isinstance(node, (ast.Import, ast.ImportFrom)) or (
                i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))
            if not leading:
                break
            line = node.end_lineno or node.lineno
        rows = text.splitlines(keepends=True)
        if rows and not rows[-1].endswith("\n"):
            rows[-1] += "\n"
        rows.insert(line, f"{tf}.keras.mixed_precision.set_global_policy({self.policy!r})\n")
        return "".join(rows)

    def scope(self) -> contextlib.AbstractContextManager[Any]:
        return global_policy(self.policy)


def levers(ctx: LeverContext) -> list[Lever]:
    return [MixedPolicy("mixed_bfloat16"), MixedPolicy("mixed_float16")]
