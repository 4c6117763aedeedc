"""What an eager training step is made of, asked by the rules about eager work per step
(TFP306, TFP310, TFP314): a ``GradientTape`` block, statements that train (an update, or
the gradients of a model's weights), and how many ops a body dispatches from Python."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from tfperf.lint.semantic import Context

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)

# Ops worth a graph: a function dispatching fewer from Python per call pays little for it.
MANY_OPS = 6

# TensorFlow APIs that run no op per call, or whose cost a graph does not remove: model and
# layer construction, files, summaries, devices and scopes, specs, tracing itself.
NOT_OPS = ("tensorflow.keras.", "tensorflow.function", "tensorflow.io.gfile.",
           "tensorflow.summary.", "tensorflow.data.", "tensorflow.saved_model.",
           "tensorflow.train.", "tensorflow.config.", "tensorflow.device",
           "tensorflow.name_scope", "tensorflow.TensorSpec", "tensorflow.distribute.",
           "tensorflow.compat.v1.", "tensorflow.experimental.numpy.", "tensorflow.debugging.",
           "tensorflow.executing_eagerly", "tensorflow.is_tensor", "tensorflow.DType",
           "tensorflow.as_dtype", "tensorflow.get_logger", "tensorflow.random.set_seed",
           "tensorflow.py_function", "tensorflow.numpy_function", "tensorflow.print",
           "tensorflow.nest.", "tensorflow.io.FixedLen", "tensorflow.io.VarLenFeature",
           "tensorflow.io.SparseFeature", "tensorflow.io.RaggedFeature")

# What a training step differentiates against.
TRAINABLE = frozenset({"trainable_variables", "trainable_weights"})


def is_tape_with(ctx: Context, node: ast.AST) -> bool:
    """A ``with tf.GradientTape() as tape:`` block."""
    return any(ctx.is_call_to(item.context_expr, "tensorflow.GradientTape")
               for item in node.items)


def trains(nodes: list[ast.AST]) -> bool:
    """The statements update weights (``opt.apply_gradients(...)``, ``opt.minimize(loss,
    var_list=..., tape=...)``) or compute the gradients of a model's trainable weights
    (``tape.gradient(loss, model.trainable_variables)``): the costly half of a training step,
    whoever applies the update."""
    for stmt in nodes:
        for n in ast.walk(stmt):
            if type(n) is ast.Call and type(n.func) is ast.Attribute:
                attr = n.func.attr
                if attr == "apply_gradients":
                    return True
                if attr == "minimize" and any(k.arg in ("tape", "var_list") for k in n.keywords):
                    return True
                if attr == "gradient" and len(n.args) >= 2 \
                        and type(n.args[1]) is ast.Attribute \
                        and n.args[1].attr in TRAINABLE:
                    return True
    return False


def own_calls(fn: Any) -> Iterator[ast.Call]:
    """The calls ``fn``'s body makes itself (not those of functions or lambdas it defines)."""
    todo: list[Any] = list(fn.body)
    while todo:
        node = todo.pop()
        if type(node) in (*_DEFS, ast.Lambda, ast.ClassDef):
            continue
        if type(node) is ast.Call:
            yield node
        todo.extend(ast.iter_child_nodes(node))


def is_op(ctx: Context, call: ast.Call) -> bool:
    """``call`` runs a TensorFlow op (not one of :data:`NOT_OPS`)."""
    name = ctx.call_qualname(call)
    return bool(name) and name.startswith("tensorflow.") and not name.startswith(NOT_OPS)


def dispatches(ctx: Context, cls: ast.ClassDef, call: Any) -> int:
    """How many ops and layer calls a method ``call`` of ``cls`` dispatches one by one when
    run eagerly: its TensorFlow ops, the layers it holds on ``self`` (``self.conv(x)``: one
    op or more each), and the ops of its own class's methods it calls
    (``self.box_iou(...)``). One walk of its body, one of each method it calls."""
    methods = {s.name: s for s in cls.body if type(s) in _DEFS}
    own: dict[str, int] = {}
    count = 0
    for c in own_calls(call):
        f = c.func
        if type(f) is ast.Attribute and type(f.value) is ast.Name and f.value.id == "self":
            if f.attr in methods:
                if f.attr not in own:
                    own[f.attr] = sum(1 for m in own_calls(methods[f.attr]) if is_op(ctx, m))
                count += own[f.attr]
            else:
                count += 1  # a layer (or model) held on self
        elif is_op(ctx, c):
            count += 1
    return count
