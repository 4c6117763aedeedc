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
from tfperf.lint.analysis.trips import trip_count
from tfperf.lint.semantic import Context

_STEP_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_DEPTH = 4  # callee chains followed this deep (a helper of a helper of a method)

# Names of functions that run once by convention: what they build is the graph itself.
SETUP_PREFIXES = ("__init__", "build", "_build", "create", "_create", "init", "_init",
                  "setup", "_setup", "make", "_make", "define", "_define", "construct",
                  "main", "test", "restore", "load", "_load")
# A loop that runs this few times builds this few copies: no growth worth a finding.
FEW_TRIPS = 16
# Iterables of a model's variables: a loop over them runs once per variable, not per step.
_VARIABLE_WORDS = ("weights", "variables", "params", "layers")

# TF1 summary ops (graph mode only: in TF2 these write eagerly and are gated out by the
# module's graph mode); `tf.summary.FileWriter` and friends build nothing.
_SUMMARY_OPS = frozenset({"scalar", "histogram", "image", "audio", "text", "merge",
                          "merge_all", "tensor_summary"})

# Getters of the graph's collections and objects: they return what exists, add no node.
_GETTERS = frozenset({"trainable_variables", "global_variables", "local_variables",
                      "all_variables", "model_variables", "moving_average_variables",
                      "get_collection", "get_collection_ref", "get_default_graph",
                      "get_default_session", "global_step", "get_global_step",
                      "get_variable_scope"})

OnceTest = Callable[[Context, ast.AST, ast.AST], bool]


def _own_calls(ctx: Context, fn: ast.AST) -> list[ast.Call]:
    """Calls in ``fn``'s own body (not in a nested ``def`` or lambda), in ``ast.walk``
    order: the module's calls grouped once by their function (a walk of each function,
    nested ones again, cost TFP703's facts most of a cold lint)."""
    def compute() -> dict[int, list[ast.Call]]:
        by_fn: dict[int, list[ast.Call]] = {}
        for call in ctx.calls:  # breadth first: a function's own calls in its walk order
            by_fn.setdefault(id(ctx.enclosing_function(call)), []).append(call)
        return by_fn
    return ctx.cached("graph_growth.own_calls", compute).get(id(fn), [])


def _summary_op(ctx: Context, call: ast.Call) -> str | None:
    q = ctx.qualname(call.func) or ""
    for prefix in ("tensorflow.summary.", "tensorflow.compat.v1.summary."):
        if q.startswith(prefix) and q[len(prefix):] in _SUMMARY_OPS:
            return "tf.summary." + q[len(prefix):]
    return None


def _under_off_option(ctx: Context, node: ast.AST, fn: ast.AST) -> bool:
    """``node`` runs only under ``if flag:`` where ``flag`` is a parameter of ``fn`` that
    defaults to ``False``/``None`` (a debugging option, off unless asked for)."""
    args = getattr(fn, "args", None)
    if args is None:
        return False
    params = [*args.posonlyargs, *args.args]
    off = {a.arg for a, d in zip(params[len(params) - len(args.defaults):], args.defaults,
                                 strict=True)
           if type(d) is ast.Constant and d.value in (False, None)}
    off |= {a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
            if type(d) is ast.Constant and d.value in (False, None)}
    child = node
    for p in ctx.ancestors(node):
        if p is fn:
            return False
        if type(p) is ast.If and child is not p.test and child not in p.orelse \
                and type(p.test) is ast.Name and p.test.id in off:
            return True
        child = p
    return False


def few_trips(ctx: Context, loop: ast.AST) -> bool:
    """``loop`` runs a handful of times (literals say), or once per variable of a model."""
    n = trip_count(ctx, loop)
    if n is not None and n <= FEW_TRIPS:
        return True
    it = getattr(loop, "iter", None)
    return it is not None and _walks_variables(it)


def _walks_variables(it: ast.AST) -> bool:
    """``it`` is a model's variables by its own name (``self.weights``,
    ``tf.trainable_variables()``; ``zip``/``enumerate`` of them, ``range(len(...))`` of
    them), not by a word inside a step bound (``range(hparams.num_steps)``)."""
    if type(it) is ast.Call:
        f = it.func
        name = f.attr if type(f) is ast.Attribute else getattr(f, "id", "")
        if name in ("zip", "enumerate"):
            return any(_walks_variables(a) for a in it.args)
        if name == "range" and len(it.args) == 1 and type(it.args[0]) is ast.Call \
                and getattr(it.args[0].func, "id", None) == "len":
            return any(_walks_variables(a) for a in it.args[0].args)
        it = f
    name = it.attr if type(it) is ast.Attribute else getattr(it, "id", "")
    return any(name == w or name.endswith("_" + w) for w in _VARIABLE_WORDS)


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
            if once(ctx, call, fn) or _under_off_option(ctx, call, fn):
                continue
            what = builds_op(ctx, call) or _summary_op(ctx, call)
            if what is not None and (ctx.qualname(call.func) or "").rsplit(".", 1)[-1] \
                    in _GETTERS:
                what = None
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
    """The innermost loops that run a session per iteration (``sess.run`` in the body, or
    a call of the module's function that runs one), not epoch loops around them, not
    loops that make a fresh graph."""
    def compute() -> list[ast.AST]:
        found: list[ast.AST] = []
        for run in session_runs(ctx):
            if run.call.func.attr == "run" and not ctx.in_tf_function(run.call):
                found.append(innermost_loop(ctx, run.call))  # type: ignore[arg-type]
        for call in ctx.calls:
            callee = resolve_def(ctx, call.func)
            if callee is not None and innermost_loop(ctx, call) is not None \
                    and not ctx.in_tf_function(call) and runs_session(ctx, callee):
                found.append(innermost_loop(ctx, call))  # type: ignore[arg-type]
        loops = [lp for lp in found if lp is not None]
        outer = {id(o) for lp in loops for o in ctx.enclosing_loops(lp)} | set(epoch_loops(ctx))
        out: list[ast.AST] = []
        for lp in loops:
            if id(lp) not in outer and not starts_fresh_graph(ctx, lp) \
                    and all(lp is not o for o in out):
                out.append(lp)
        return out
    return ctx.cached("graph_growth.session_step_loops", compute)


def op_built_per_call(ctx: Context, fn: ast.AST, once: OnceTest) -> ast.Call | None:
    """Where ``fn`` builds what :func:`builds_ops_per_call` names: the op's call, or the call
    of the module's function that builds it; ``None`` when it builds nothing per call."""
    if builds_ops_per_call(ctx, fn, once) is None:
        return None
    for call in _own_calls(ctx, fn):
        if once(ctx, call, fn) or _under_off_option(ctx, call, fn):
            continue
        what = builds_op(ctx, call) or _summary_op(ctx, call)
        if what is not None and (ctx.qualname(call.func) or "").rsplit(".", 1)[-1] \
                not in _GETTERS:
            return call
        callee = resolve_def(ctx, call.func)
        if callee is not None and callee is not fn \
                and builds_ops_per_call(ctx, callee, once, _DEPTH - 1) is not None:
            return call
    return None


def calls_building_ops_per_step(ctx: Context, once: OnceTest
                                ) -> Iterator[tuple[ast.Call, ast.AST, ast.AST, str]]:
    """``(call, callee, loop, what)`` for each call in a session step loop of a function of
    the module that builds ``what`` on every call; the call runs once per step (not under a
    condition's branch is not asked: a branch taken every 100 steps still grows)."""
    seen: set[int] = set()
    for loop in session_step_loops(ctx):
        if few_trips(ctx, loop):
            continue
        fn = ctx.enclosing_function(loop)
        for n in loop_calls(ctx, loop):
            if id(n) in seen:
                continue
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


def functions_building_ops(ctx: Context, once: OnceTest) -> Iterator[tuple[ast.AST, str]]:
    """Each function (method, helper) of the module that builds ops on every call."""
    # The index's definitions, in walk order (an async one: the walk, to keep that order).
    defs = ctx.nodes_of(ast.FunctionDef) if not ctx.nodes_of(ast.AsyncFunctionDef) \
        else [n for n in ast.walk(ctx.tree) if type(n) in DEF_NODES]
    for n in defs:
        if type(n) in DEF_NODES:
            what = builds_ops_per_call(ctx, n, once)
            if what is not None:
                yield n, what


def step_loop_candidates(ctx: Context) -> Iterator[ast.AST]:
    """Loops (for, while) outside traced code: each may be a session's step loop, through
    the functions of other modules it calls."""
    for typ in _STEP_LOOPS:
        for lp in ctx.nodes_of(typ):
            if not ctx.in_tf_function(lp) and not starts_fresh_graph(ctx, lp):
                yield lp


def runs_here(ctx: Context, loop: ast.AST) -> bool:
    """``loop`` runs a session per iteration, by its own ``sess.run`` or a call of the
    module's function that runs one."""
    return any(lp is loop for lp in session_step_loops(ctx)) or any(
        innermost_loop(ctx, r.call) is loop for r in session_runs(ctx)
        if r.call.func.attr == "run")


def runs_session(ctx: Context, fn: ast.AST, depth: int = _DEPTH) -> bool:
    """``fn`` runs a session (``sess.run``) itself or through the module's functions it
    calls: a loop that calls it runs the session once per iteration."""
    if type(fn) not in DEF_NODES or depth <= 0:
        return False
    def compute() -> bool:
        runs = [r for r in session_runs(ctx) if r.call.func.attr == "run"]
        if not runs:  # no session run in the module: none through its functions either
            return False
        if any(ctx.enclosing_function(r.call) is fn for r in runs):
            return True
        return any(callee is not fn and runs_session(ctx, callee, depth - 1)
                   for callee in (resolve_def(ctx, c.func) for c in _own_calls(ctx, fn))
                   if callee is not None)
    return ctx.cached(f"graph_growth.runs:{id(fn)}:{depth}", compute)


def innermost_loop(ctx: Context, node: ast.AST) -> ast.AST | None:
    loops = [lp for lp in ctx.enclosing_loops(node) if type(lp) in _STEP_LOOPS]
    return loops[0] if loops else None


def loop_calls(ctx: Context, loop: ast.AST) -> Iterator[ast.Call]:
    """Calls run once per iteration of ``loop`` whose innermost step loop it is."""
    fn = ctx.enclosing_function(loop)
    for n in ast.walk(loop):
        if type(n) is ast.Call and ctx.enclosing_function(n) is fn \
                and innermost_loop(ctx, n) is loop:
            yield n
