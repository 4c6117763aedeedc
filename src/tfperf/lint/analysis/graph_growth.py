"""Which functions of a TF1 module build graph ops on every call (through the module's own
callees), and the session loops that call them: TFP703's question across functions."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

from tfperf.lint.analysis.callers import DEF_NODES, bound_arguments, calls_of, resolve_def
from tfperf.lint.analysis.sessions import (
    builds_op,
    epoch_loops,
    session_runs,
    starts_fresh_graph,
)
from tfperf.lint.semantic import Context

_STEP_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_DEPTH = 4  # callee chains followed this deep (a helper of a helper of a method)

# Names of functions that run once by convention: what they build is the graph itself.
SETUP_PREFIXES = ("__init__", "build", "_build", "create", "_create", "init", "_init",
                  "setup", "_setup", "make", "_make", "define", "_define", "construct",
                  "add_", "_add_", "main", "test", "restore", "load", "_load")

# TF1 summary ops (graph mode only: in TF2 these write eagerly and are gated out by the
# module's graph mode); `tf.summary.FileWriter` and friends build nothing.
_SUMMARY_OPS = frozenset({"scalar", "histogram", "image", "audio", "text", "merge",
                          "merge_all", "tensor_summary"})

OnceTest = Callable[[Context, ast.AST, ast.AST], bool]


def _own_calls(ctx: Context, fn: ast.AST) -> Iterator[ast.Call]:
    """Calls in ``fn``'s own body (not in a nested ``def`` or lambda)."""
    for n in ast.walk(fn):
        if type(n) is ast.Call and ctx.enclosing_function(n) is fn:
            yield n


def _summary_op(ctx: Context, call: ast.Call) -> str | None:
    q = ctx.qualname(call.func) or ""
    for prefix in ("tensorflow.summary.", "tensorflow.compat.v1.summary."):
        if q.startswith(prefix) and q[len(prefix):] in _SUMMARY_OPS:
            return "tf.summary." + q[len(prefix):]
    return None


def builds_ops_per_call(ctx: Context, fn: ast.AST, once: OnceTest,
                        depth: int = _DEPTH) -> str | None:
    """What ``fn`` adds to the graph on every call, in words, directly or through the
    module's functions it calls; ``None`` when nothing (a setup name, a traced function, a
    fresh graph, ops kept or built under a once-guard: ``once(ctx, call, fn)``)."""
    name = getattr(fn, "name", "")
    if type(fn) not in DEF_NODES or name.startswith(SETUP_PREFIXES) or depth <= 0:
        return None
    def compute() -> str | None:
        if ctx.in_tf_function(fn.body[0]) or starts_fresh_graph(ctx, fn):
            return None
        for call in _own_calls(ctx, fn):
            if once(ctx, call, fn):
                continue
            what = builds_op(ctx, call) or _summary_op(ctx, call)
            if what is not None:
                return what
            callee = resolve_def(ctx, call.func)
            if callee is not None and callee is not fn:
                inner = builds_ops_per_call(ctx, callee, once, depth - 1)
                if inner is not None:
                    return f"{inner} (in {getattr(callee, 'name', '?')}())"
        return None
    return ctx.cached(f"graph_growth.builds:{id(fn)}:{depth}", compute)


def session_step_loops(ctx: Context) -> list[ast.AST]:
    """The innermost loops that run a session per iteration (``sess.run`` in the body of
    the same function), not epoch loops around them, not loops that make a fresh graph."""
    def compute() -> list[ast.AST]:
        out: list[ast.AST] = []
        epochs = epoch_loops(ctx)
        for run in session_runs(ctx):
            if run.call.func.attr != "run" or ctx.in_tf_function(run.call):
                continue
            loops = [lp for lp in ctx.enclosing_loops(run.call) if type(lp) in _STEP_LOOPS]
            if not loops or id(loops[0]) in epochs or starts_fresh_graph(ctx, loops[0]):
                continue
            if all(lp is not loops[0] for lp in out):
                out.append(loops[0])
        return out
    return ctx.cached("graph_growth.session_step_loops", compute)


def calls_building_ops_per_step(ctx: Context, once: OnceTest
                                ) -> Iterator[tuple[ast.Call, ast.AST, ast.AST, str]]:
    """``(call, callee, loop, what)`` for each call in a session step loop of a function of
    the module that builds ``what`` on every call; the call runs once per step (not under a
    condition's branch is not asked: a branch taken every 100 steps still grows)."""
    seen: set[int] = set()
    for loop in session_step_loops(ctx):
        fn = ctx.enclosing_function(loop)
        for n in ast.walk(loop):
            if type(n) is not ast.Call or id(n) in seen or ctx.enclosing_function(n) is not fn:
                continue
            if loop not in ctx.enclosing_loops(n):
                continue  # the loop's iterable: evaluated once
            seen.add(id(n))
            callee = resolve_def(ctx, n.func)
            if callee is None:
                # A callback: the loop calls its function's parameter; report the function
                # each caller passes there, at the argument.
                for arg, cb in _callbacks(ctx, fn, n.func):
                    what = builds_ops_per_call(ctx, cb, once)
                    if what is not None and id(arg) not in seen:
                        seen.add(id(arg))
                        yield arg, cb, loop, what  # type: ignore[misc]
                continue
            if callee is fn or type(callee) not in DEF_NODES:
                continue
            what = builds_ops_per_call(ctx, callee, once)
            if what is not None:
                yield n, callee, loop, what


def _callbacks(ctx: Context, fn: ast.AST | None, func: ast.expr
               ) -> Iterator[tuple[ast.expr, ast.AST]]:
    """``(argument, def)`` for each function of the module passed, at a call of ``fn``, to
    the parameter ``func`` names."""
    if fn is None or type(func) is not ast.Name:
        return
    b = ctx.binding(func)
    if b is None or b.kind != "param":
        return
    for caller in calls_of(ctx, fn):
        given = bound_arguments(fn, caller) or {}
        arg = given.get(func.id)
        cb = resolve_def(ctx, arg) if arg is not None else None
        if arg is not None and cb is not None and cb is not fn:
            yield arg, cb


# Words of TF1 graph code: a module holding one builds graph ops when its functions run.
_GRAPH_WORDS = ("placeholder", "Session", "compat.v1", "get_variable", "variable_scope",
                "disable_eager", "disable_v2")


def graph_code(ctx: Context) -> bool:
    """The module is TF1 graph code (its ``tf.*`` calls add graph nodes when run): it targets
    TF 1.x, or spells a TF1 graph API."""
    return ctx.imports_tf and (ctx.tf_version < (2, 0)
                               or any(w in ctx.source for w in _GRAPH_WORDS))


def functions_building_ops(ctx: Context, once: OnceTest) -> Iterator[tuple[ast.AST, str]]:
    """Each function (method, helper) of the module that builds ops on every call."""
    for n in ast.walk(ctx.tree):
        if type(n) in DEF_NODES:
            what = builds_ops_per_call(ctx, n, once)
            if what is not None:
                yield n, what


def loop_calls_elsewhere(ctx: Context) -> Iterator[tuple[ast.Call, ast.AST]]:
    """``(call, loop)`` for each call in a session step loop that does not resolve to a
    function of this module (one of another module, an inherited method): the project
    says whether it builds ops."""
    for loop in session_step_loops(ctx):
        fn = ctx.enclosing_function(loop)
        for n in ast.walk(loop):
            if type(n) is ast.Call and ctx.enclosing_function(n) is fn \
                    and loop in ctx.enclosing_loops(n) and resolve_def(ctx, n.func) is None:
                yield n, loop
