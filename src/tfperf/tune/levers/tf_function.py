"""``tf.function`` and ``tf.function(jit_compile=True)`` on the tuned function."""

from __future__ import annotations

import ast

from tfperf.tune.lever import Lever, LeverContext
from tfperf.tune.source import find_function, is_tf_function_decorator, parse, set_tf_function
from tfperf.tune.source import tf_alias as module_tf_alias


def _decorator(ctx: LeverContext) -> ast.expr | None:
    tree = parse(ctx.target.source)
    fn = find_function(tree, ctx.target.name)
    alias = module_tf_alias(tree)
    return next((d for d in fn.decorator_list if is_tf_function_decorator(d, alias)), None)


class TfFunction(Lever):
    name, slot, stage, traces = "tf.function", "compile", 40, True
    description = "trace the function once into a graph: no Python per op on later calls"
    rejections = ("raises while tracing (Python control flow on tensors, .numpy())",
                  "retraces on every call", "disagrees with the baseline")

    def applies(self, ctx: LeverContext) -> str | None:
        return "already a tf.function" if _decorator(ctx) is not None else None

    def build(self, text: str, ctx: LeverContext) -> str:
        return set_tf_function(text, ctx.target.name, {})


class JitCompile(Lever):
    name, slot, stage, traces = "jit_compile", "compile", 40, True
    compiles = True
    description = "tf.function(jit_compile=True): XLA fuses the graph's ops into few kernels"
    rejections = ("XLA cannot compile an op (raises)", "compiles on every call",
                  "disagrees with the baseline")

    def applies(self, ctx: LeverContext) -> str | None:
        dec = _decorator(ctx)
        if isinstance(dec, ast.Call) and any(
                k.arg == "jit_compile" and isinstance(k.value, ast.Constant) and k.value.value
                for k in dec.keywords):
            return "already jit_compile=True"
        return None

    def build(self, text: str, ctx: LeverContext) -> str:
        return set_tf_function(text, ctx.target.name, {"jit_compile": True})


def traced_prints(source: str, name: str) -> int:
    """The builtin ``print`` calls in function ``name``: under ``tf.function`` they run when the
    function is traced, not on every call (a trust pass: a pick that dropped a per-call print
    read as a 2x speed-up)."""
    try:
        fn = find_function(parse(source), name)
    except Exception:  # the search reports an unreadable source itself
        return 0
    return sum(1 for node in ast.walk(fn) if isinstance(node, ast.Call)
               and isinstance(node.func, ast.Name) and node.func.id == "print")


def levers(ctx: LeverContext) -> list[Lever]:
    return [TfFunction(), JitCompile()]
