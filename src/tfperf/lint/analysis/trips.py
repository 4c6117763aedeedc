"""How often a loop runs, where the code says so: the fact per-step rules ask before they
report.

A per-step rule's fix (a ``tf.function`` around the step, a model compiled once) pays a
one-off trace to save a little on every iteration. Where the loop runs a handful of times
(``range(9)``, a loop over a literal list of nine URLs, ``while ... i < max_iterations`` with
``max_iterations = 100``), the trace costs more than it saves: measured on TF 2.21 here
(``benchmarks/bench_lint_trip_count.py``), a compiled 2-layer model pays back its trace
after about 25 calls, 48 small ops after 30 to 100, six small ops never. A count is known
only from literals: a literal bound, a literal collection, or a name bound once in its
scope to one of those.
"""

from __future__ import annotations

import ast
from typing import Any

from tfperf.lint.analysis.varying import literal_count
from tfperf.lint.semantic import COMPREHENSION_NODES, Context

# A model call per step: below this many calls a trace does not pay. Measured here
# (bench_lint_trip_count.py, three runs): a 2-layer MLP on a batch of one pays back its trace
# after 24-26 calls, a small Keras LSTM (slow eagerly on Keras 3) after 5-7; 16 is the
# bound TFP111 already kept for its own loop, now asked through names and callers too.
FEW_MODEL_CALLS = 16
# A step of eager ops: below this many calls a trace does not pay. Measured here: 6 or 12
# small ops never pay (a graph call costs more than their eager dispatch), 48 ops pay back
# after 29-103 calls (three runs); TFP310 reports steps from 6 ops, most of them small.
FEW_OP_STEPS = 128


def _int_of(ctx: Context, node: Any) -> int | None:
    """An int literal, or a name bound once in its scope to one (``max_iterations = 100``)."""
    if type(node) is ast.Constant and type(node.value) is int:
        return int(node.value)
    value = _only_value(ctx, node)
    if type(value) is ast.Constant and type(value.value) is int:
        return int(value.value)
    return None


def _only_value(ctx: Context, node: Any) -> Any:
    """What a name is bound to, when its scope binds it exactly once, by a plain assignment."""
    if type(node) is not ast.Name:
        return None
    bindings = ctx.scope_bindings(node)
    if len(bindings) != 1 or bindings[0].kind != "assign":
        return None
    return bindings[0].value


def trip_count(ctx: Context, loop: Any) -> int | None:
    """How many times ``loop`` runs its body, when literals say: ``for _ in range(20)``,
    ``for url in urls`` (``urls = [...]``), ``for x, y in ds.take(1)``, ``while i < n`` /
    ``while not done and i < n`` (``n`` a literal, or a name bound once to one); else None."""
    if type(loop) is ast.While:
        return _while_bound(ctx, loop.test)
    if type(loop) in COMPREHENSION_NODES:
        it = loop.generators[0].iter
    else:
        it = getattr(loop, "iter", None)
    if it is None:
        return None
    return _iterable_count(ctx, it, getattr(loop, "end_lineno", None) or it.lineno)


# Progress bars yield what they wrap (`tqdm(range(n), desc=...)`); `trange(n)` is
# `tqdm(range(n))`.
PROGRESS_BARS = frozenset({"tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.notebook.tqdm",
                           "tqdm.std.tqdm", "tqdm.autonotebook.tqdm"})
PROGRESS_RANGES = frozenset({"tqdm.trange", "tqdm.auto.trange", "tqdm.notebook.trange",
                             "tqdm.std.trange", "tqdm.autonotebook.trange"})


def _iterable_count(ctx: Context, it: Any, until: int, depth: int = 0) -> int | None:
    """How many values ``it`` yields, where literals say; ``enumerate(x)`` / ``reversed(x)``
    / ``list(x)`` / ``sorted(x)`` as ``x``, ``zip(a, b)`` as its shortest known part."""
    if depth > 3:
        return None
    if type(it) is ast.Call and len(it.args) == 1 and not it.keywords \
            and ctx.is_builtin_call(it, "enumerate", "reversed", "list", "sorted", "tuple"):
        return _iterable_count(ctx, it.args[0], until, depth + 1)
    if type(it) is ast.Call and it.args and ctx.call_qualname(it) in PROGRESS_BARS:
        return _iterable_count(ctx, it.args[0], until, depth + 1)
    if type(it) is ast.Call and len(it.args) == 1 and ctx.call_qualname(it) in PROGRESS_RANGES:
        return _int_of(ctx, it.args[0])
    if type(it) is ast.Call and it.args and not it.keywords \
            and ctx.is_builtin_call(it, "zip"):
        counts = [c for c in (_iterable_count(ctx, a, until, depth + 1) for a in it.args)
                  if c is not None]
        return min(counts) if counts else None
    for candidate in (it, None if _grown(ctx, it, until) else _only_value(ctx, it)):
        if candidate is None:
            continue
        count = literal_count(ctx, candidate)
        if count:  # an empty literal is filled later (`rewards = []`, then appends)
            return count
        if ctx.is_builtin_call(candidate, "range") and len(candidate.args) == 1 \
                and not candidate.keywords:
            return _int_of(ctx, candidate.args[0])
        if type(candidate) is ast.Call and type(candidate.func) is ast.Attribute \
                and candidate.func.attr == "take" and len(candidate.args) == 1:
            return _int_of(ctx, candidate.args[0])  # `ds.take(1)`: at most that many
    return None


# Methods that change how many items a list, set or dict holds.
_GROWING = frozenset({"append", "extend", "insert", "add", "update", "setdefault", "pop",
                      "remove", "clear"})


def _grown(ctx: Context, name: Any, until: int) -> bool:
    """The name's collection is changed in place before the loop ends (line ``until``:
    ``rewards.append(r)`` before or inside it, ``urls += more``): its literal does not give
    its length then."""
    if type(name) is not ast.Name:
        return False
    for load in ctx.name_loads(name.id):
        parent = ctx.parent(load)
        if type(parent) is ast.Attribute and parent.attr in _GROWING \
                and load.lineno <= until:
            return True
    return any(b.kind == "augassign" for b in ctx.scope_bindings(name))


def _while_bound(ctx: Context, test: Any) -> int | None:
    """``i < n``, alone or in an ``and``: at most ``n`` iterations (a counter from 0)."""
    parts = test.values if type(test) is ast.BoolOp and type(test.op) is ast.And else [test]
    bounds = []
    for p in parts:
        if type(p) is ast.Compare and len(p.ops) == 1 and type(p.left) is ast.Name:
            op = type(p.ops[0])
            bound = _int_of(ctx, p.comparators[0])
            if bound is not None and op in (ast.Lt, ast.LtE):
                bounds.append(bound + (op is ast.LtE))
    return min(bounds) if bounds else None


def runs_per_entry(ctx: Context, node: Any) -> int | None:
    """How many times ``node`` runs each time its function (or the module) is entered: the
    product of its enclosing loops' trip counts; None when any loop's count is unknown."""
    total = 1
    for loop in ctx.enclosing_loops(node):
        count = trip_count(ctx, loop)
        if count is None:
            return None
        total *= count
    return total


def entries(ctx: Context, fn: Any, _seen: frozenset[int] = frozenset()) -> int | None:
    """How many times this module enters the function ``fn`` in one run of it: 1 for module
    level (``fn`` None: a script's or a notebook's top level runs once); for a function of
    the module (not a method, not decorated), the sum over its calls here of how often each
    runs (:func:`runs_in_all`), when every use of its name is such a call. None when the
    module does not say: no call here (entered from outside), the name passed on as a value
    (a callback, a ``map`` function), recursion, or a call whose count is unknown. Calls
    from other modules are not seen here: rules that see the project drop the count where
    another module calls the function (:meth:`tfperf.analysis.project.Project.calls_to`)."""
    return _entries(ctx, fn, _seen)[0]


def runs_in_all(ctx: Context, node: Any, _seen: frozenset[int] = frozenset()) -> int | None:
    """How many times ``node`` runs in one run of its module, where the code says: its
    enclosing loops' trip counts times the times its function is entered
    (:func:`entries`, through callers in this module); None when any of them is unknown."""
    return _runs_in_all(ctx, node, _seen)[0]


def _entries(ctx: Context, fn: Any, seen: frozenset[int]) -> tuple[int | None, bool]:
    """:func:`entries`, and whether the answer met a function still being counted (a
    cycle). The count does not depend on who asks, so it is kept per module by the
    function's id: without that every call path is walked again, and a lattice of helpers
    costs (callers per function) ** depth. An answer that met a cycle is not kept: it
    depends on where the walk began."""
    if fn is None:
        return 1, False
    if type(fn) not in (ast.FunctionDef, ast.AsyncFunctionDef) or fn.decorator_list \
            or type(ctx.enclosing_class(fn)) is ast.ClassDef:
        return None, False
    if id(fn) in seen:
        return None, True  # recursion
    memo: dict[int, int | None] = ctx.cached("trips.entries", dict)
    if id(fn) in memo:
        return memo[id(fn)], False
    count, cyclic = _count_entries(ctx, fn, seen | {id(fn)})
    if not cyclic:
        memo[id(fn)] = count
    return count, cyclic


def _count_entries(ctx: Context, fn: Any, seen: frozenset[int]) -> tuple[int | None, bool]:
    """The sum over ``fn``'s calls in this module of how often each runs (:func:`entries`)."""
    total, cyclic = 0, False
    for load in ctx.name_loads(fn.name):
        b = ctx.binding(load)
        if b is None or b.kind != "def" or b.value is not fn:
            continue
        call = ctx.parent(load)
        if type(call) is not ast.Call or call.func is not load:
            return None, False  # passed on as a value: who calls it, and how often, is unknown
        runs, met_cycle = _runs_in_all(ctx, call, seen)
        cyclic = cyclic or met_cycle
        if runs is None:
            return None, cyclic
        total += runs
    return total or None, cyclic


def _runs_in_all(ctx: Context, node: Any, seen: frozenset[int]) -> tuple[int | None, bool]:
    """:func:`runs_in_all`, and whether the answer met a cycle (:func:`_entries`)."""
    per_entry = runs_per_entry(ctx, node)
    if per_entry is None:
        return None, False
    fn = ctx.enclosing_function(node)
    if fn is not None and type(fn) is ast.Lambda:
        return None, False
    times, cyclic = _entries(ctx, fn, seen)
    return (None if times is None else per_entry * times), cyclic


def few_runs(ctx: Context, node: Any, limit: int) -> bool:
    """``node`` sits in loops that the code says run it fewer than ``limit`` times in all."""
    runs = runs_per_entry(ctx, node)
    return runs is not None and bool(ctx.enclosing_loops(node)) and runs < limit


def few_runs_in_all(ctx: Context, node: Any, limit: int) -> bool:
    """``node`` runs fewer than ``limit`` times in one run of its module, counted through
    loops and callers (:func:`runs_in_all`): a loop over ``range(4)`` at module level, a
    helper that a script calls once. False where the count is unknown: a rule keeps
    reporting there."""
    runs = runs_in_all(ctx, node)
    return runs is not None and runs < limit
