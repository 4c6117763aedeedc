"""How often a loop runs, where the code says so: the fact per-step rules ask before they
report.

A per-step rule's fix (a ``tf.function`` around the step, a model compiled once) pays a
one-off trace to save a little on every iteration. Where the loop runs a handful of times
(``range(9)``, a loop over a literal list of nine URLs, ``while ... i < max_iterations`` with
``max_iterations = 100``), the trace costs more than it saves: measured on TF 2.21 here
(``benchmarks/bench_lint_trip_count.py``), a compiled 2-layer model pays back its trace
after about 25 calls, 48 small ops after 30 to 100, six small ops never. A count is known
only from literals: a literal bound (``range(a, b, s)`` with each part known), a literal
collection or its ``len``, or a name whose binding that reaches the loop is one of those.
A name's reaching binding is read flow-sensitively (:func:`reaching_value`): the last
statement before the loop in its block (or an enclosing one) that binds it, so ``steps = 1``
before ``for j in range(0, steps)`` counts one trip even where a later cell rebinds
``steps = 8``; else a name bound once in its scope.
"""

from __future__ import annotations

import ast
from typing import Any

from tfperf.lint.analysis.loops import PROGRESS_BARS, PROGRESS_RANGES
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


def _int_of(ctx: Context, node: Any, depth: int = 0) -> int | None:
    """An int literal, ``len`` of a collection whose size literals give, or a name whose
    reaching binding is one of those (``max_iterations = 100``, ``n = len(urls)``)."""
    if depth > 3:
        return None
    if type(node) is ast.Constant and type(node.value) is int:
        return int(node.value)
    if ctx.is_builtin_call(node, "len") and len(node.args) == 1 and not node.keywords:
        return _iterable_count(ctx, node.args[0], node.lineno, depth + 1)
    if type(node) is ast.Name:
        return _int_of(ctx, _name_value(ctx, node), depth + 1)
    return None


def _name_value(ctx: Context, name: Any) -> Any:
    """What ``name`` holds where it is read: its reaching assignment's value, else the one
    value its scope binds it to; None when that is not one plain assignment."""
    decided, value = reaching_value(ctx, name)
    return value if decided else _only_value(ctx, name)


def _only_value(ctx: Context, node: Any) -> Any:
    """What a name is bound to, when its scope binds it exactly once, by a plain assignment."""
    if type(node) is not ast.Name:
        return None
    bindings = ctx.scope_bindings(node)
    if len(bindings) != 1 or bindings[0].kind != "assign":
        return None
    return bindings[0].value


# Statements whose own body a binding of the name after the loop does not reach again: the
# header (an if's test, a with's items) runs once before the body.
_ONCE_HEADERS: dict[type, tuple[str, ...]] = {
    ast.If: ("test",), ast.With: ("items",), ast.AsyncWith: ("items",)}
_NESTED_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _binds(node: Any, name: str) -> bool:
    """Some part of ``node`` (not a nested function's or class's body) binds ``name``:
    an assignment or deletion, a loop or ``with`` target, an import, a def, ``except ... as``,
    a ``global``/``nonlocal`` declaration, a match capture."""
    todo = [node]
    while todo:
        n = todo.pop()
        t = type(n)
        if t is ast.Name:
            if n.id == name and type(n.ctx) is not ast.Load:
                return True
            continue
        if t in _NESTED_SCOPES:
            if getattr(n, "name", None) == name:
                return True
            continue  # its body binds its own locals
        elif t in (ast.Import, ast.ImportFrom):
            if any((a.asname or a.name.split(".", 1)[0]) == name for a in n.names):
                return True
        elif t in (ast.Global, ast.Nonlocal):
            if name in n.names:
                return True
        elif t in (ast.ExceptHandler, ast.MatchAs, ast.MatchStar):
            if n.name == name:
                return True
        elif t is ast.MatchMapping and n.rest == name:
            return True
        elif t in COMPREHENSION_NODES:  # its targets are its own; a walrus in it is not
            todo.extend(c for c in ast.iter_child_nodes(n) if type(c) is not ast.comprehension)
            todo.extend(x for g in n.generators for x in (g.iter, *g.ifs))
            continue
        todo.extend(ast.iter_child_nodes(n))
    return False


def _block_of(parent: Any, node: Any) -> list[Any] | None:
    """The statement list of ``parent`` that holds ``node``."""
    for field in ("body", "orelse", "finalbody", "handlers", "cases"):
        block = getattr(parent, field, None)
        if type(block) is list and any(s is node for s in block):
            return block
    return None


def reaching_value(ctx: Context, name: Any) -> tuple[bool, Any]:
    """The value of the assignment to ``name`` (a loaded ``ast.Name``) that reaches this
    read, flow-sensitively: the last statement before the read's statement, in its block or
    an enclosing one up to the function or module, that binds the name. ``(True, value)``
    where that statement is a plain ``name = value``; ``(True, None)`` where the name may
    hold another value there (rebound by a compound statement or an augmented assignment,
    rebound in an enclosing loop or ``try``, or in the body of the ``while`` whose test reads
    it, or declared ``global`` somewhere); ``(False, None)`` where no statement of the scope
    binds it before the read (a parameter, a global read in a function)."""
    if type(name) is not ast.Name:
        return False, None
    ident = name.id
    if any(ident in g.names for g in ctx.nodes_of(ast.Global)):
        return True, None  # a function may rebind it between the assignment and the read
    node: Any = name
    while not isinstance(node, ast.stmt):
        node = ctx.parent(node)
        if node is None or type(node) in _NESTED_SCOPES:
            return False, None  # a lambda's own scope
        if type(node) in COMPREHENSION_NODES \
                and any(_binds(g.target, ident) for g in node.generators):
            return True, None  # a comprehension's own variable
    if type(node) is ast.While and (_binds_any(node.body, ident)
                                    or _binds_any(node.orelse, ident)):
        return True, None  # the test is read again after the body rebinds it
    while True:
        parent = ctx.parent(node)
        if parent is None:
            return False, None
        block = _block_of(parent, node)
        if block is not None:
            before = block[:next(i for i, s in enumerate(block) if s is node)]
            for stmt in reversed(before):
                if _binds(stmt, ident):  # the last one to bind it decides
                    return True, _plain_value(stmt, ident)
        if type(parent) in (*_NESTED_SCOPES, ast.Module):
            return False, None
        header = _ONCE_HEADERS.get(type(parent))
        if header is not None:
            if any(_binds_any(getattr(parent, f), ident) for f in header):
                return True, None
        elif type(parent) is not ast.ExceptHandler and _binds(parent, ident):
            return True, None  # a loop or try around it: a later binding may reach it
        node = parent


def _plain_value(stmt: Any, name: str) -> Any:
    """The value ``stmt`` gives ``name`` when it is ``name = value`` (annotated or not, one
    target, the value binding nothing itself); else None."""
    target = None
    if type(stmt) is ast.Assign and len(stmt.targets) == 1:
        target = stmt.targets[0]
    elif type(stmt) is ast.AnnAssign:
        target = stmt.target
    value = getattr(stmt, "value", None)
    if type(target) is ast.Name and target.id == name and value is not None \
            and not _binds(value, name):
        return value
    return None


def _binds_any(part: Any, name: str) -> bool:
    """:func:`_binds` over one node or a list of them."""
    return any(_binds(n, name) for n in (part if type(part) is list else [part]))


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


def _iterable_count(ctx: Context, it: Any, until: int, depth: int = 0) -> int | None:
    """How many values ``it`` yields, where literals say; ``enumerate(x)`` / ``reversed(x)``
    / ``list(x)`` / ``sorted(x)`` as ``x``, ``zip(a, b)`` as its shortest known part,
    ``range(a, b, s)`` with each part known (a literal, a name reaching one, a ``len``)."""
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
    for candidate in (it, None if _grown(ctx, it, until) else _name_value(ctx, it)):
        if candidate is None:
            continue
        count = literal_count(ctx, candidate)
        if count:  # an empty literal is filled later (`rewards = []`, then appends)
            return count
        if ctx.is_builtin_call(candidate, "range") and 1 <= len(candidate.args) <= 3 \
                and not candidate.keywords:
            bounds = [_int_of(ctx, a, depth + 1) for a in candidate.args]
            if any(b is None for b in bounds) or (len(bounds) == 3 and bounds[-1] == 0):
                return None
            return len(range(*[b for b in bounds if b is not None]))
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
