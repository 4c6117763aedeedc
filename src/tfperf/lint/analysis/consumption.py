"""Whether a tf.data pipeline's speed can matter: a dataset whose result is thrown away,
only peeked at (``take(5)`` printed, ten ``next(it)`` of a demo) or passed over once
(``model.evaluate(test_ds)`` after training), followed through datasets derived from it and
returned to callers in the module. Rules that advise on input speed (TFP602, TFP603) leave
such pipelines alone: their cost is paid once, or never."""

from __future__ import annotations

import ast

from tfperf.lint.analysis.assignments import assigned_value, precedes
from tfperf.lint.analysis.pipelines import next_of_iter, pipeline, printing_loop
from tfperf.lint.analysis.syntax import keyword
from tfperf.lint.analysis.trips import runs_in_all
from tfperf.lint.semantic import DATASET_METHODS, Context


def chained_on(ctx: Context, call: ast.AST) -> list[ast.Call]:
    """The dataset methods chained on ``call`` (or on a name) in the same expression,
    innermost first (``ds.map(f).batch(8).with_options(o)`` → the ``batch`` and
    ``with_options`` calls)."""
    out: list[ast.Call] = []
    node: ast.AST = call
    while True:
        attr = ctx.parent(node)
        outer = ctx.parent(attr) if type(attr) is ast.Attribute else None
        if type(outer) is not ast.Call or getattr(outer, "func", None) is not attr \
                or getattr(attr, "attr", None) not in DATASET_METHODS:
            return out
        out.append(outer)
        node = outer


def discarded(ctx: Context, call: ast.Call) -> bool:
    """The dataset ``call`` makes (and any dataset methods chained on it) is an expression
    statement: nothing keeps or iterates it (a notebook shows its repr at most)."""
    chained = chained_on(ctx, call)
    return type(ctx.parent(chained[-1] if chained else call)) is ast.Expr


# `ds.take(k)` with k up to this: a look at a few elements, not a consumed pipeline.
PEEK_MAX = 100


def _peek_use(ctx: Context, load: ast.AST) -> bool:
    """``load`` (a read of the dataset's name) only looks at a few elements:
    ``ds.take(k)`` with a small literal ``k``, ``next(iter(ds))``, or a loop over ``ds`` that
    only prints (as TFP601 counts them); ``print(ds)``, ``len(ds)`` (its repr, its
    cardinality: no element is read)."""
    parent = ctx.parent(load)
    if type(parent) is ast.Call and load in parent.args \
            and ctx.is_builtin_call(parent, "print", "repr", "str", "type", "len"):
        return True
    if type(parent) is ast.Expr:
        return True  # `ds` alone on a line: a notebook shows its repr, nothing is read
    if type(parent) is ast.Attribute and parent.attr == "take":
        call = ctx.parent(parent)
        k = call.args[0] if type(call) is ast.Call and call.args else None
        if type(call) is ast.Call and any(s.func.attr == "repeat"
                                          for s in chained_on(ctx, call)):
            return False  # `ds.take(1).cache().repeat()`: the same few elements, endlessly
        return type(k) is ast.Constant and type(k.value) is int and 0 < k.value <= PEEK_MAX
    if type(parent) is ast.Call and type(parent.func) is ast.Name and parent.func.id == "iter" \
            and ctx.binding(parent.func) is None:
        return next_of_iter(ctx, parent) or _few_nexts(ctx, parent)
    if _one_shot_iterated(ctx, load):
        return _few_session_runs(ctx)
    if parent is not None and type(parent) in (ast.For, ast.AsyncFor) \
            and getattr(parent, "iter", None) is load:
        return printing_loop(ctx, parent)
    return False


def _small_count(ctx: Context, expr: ast.AST | None) -> int | None:
    """A literal int, or a name surely assigned one (``total_steps = 10``)."""
    if type(expr) is ast.Name:
        expr = assigned_value(ctx, expr)
    if type(expr) is ast.Constant and type(expr.value) is int and expr.value >= 0:
        return expr.value
    return None


def _bounded(ctx: Context, node: ast.AST) -> bool:
    """``node`` runs a handful of times at most: module-level code (not in a function, which
    could be called any number of times) whose enclosing loops are all ``for ... in
    range(k)`` with literal counts multiplying to at most :data:`PEEK_MAX`."""
    if ctx.enclosing_function(node) is not None:
        return False
    runs = 1
    for loop in ctx.enclosing_loops(node):
        it = getattr(loop, "iter", None)
        if type(loop) is not ast.For or type(it) is not ast.Call \
                or not ctx.is_builtin(it.func, "range") or len(it.args) != 1:
            return False
        k = _small_count(ctx, it.args[0])
        if k is None:
            return False
        runs *= k
    return runs <= PEEK_MAX


def _next_calls(ctx: Context, iter_call: ast.Call) -> list[ast.Call] | None:
    """For ``it = iter(ds)``: the ``next(it)`` calls that make every read of ``it``; ``None``
    when ``iter(ds)`` is not assigned to one name, ``it`` is never read, or a read does
    anything else (a ``for`` over it, passing it on)."""
    stmt = ctx.parent(iter_call)
    if type(stmt) is not ast.Assign or len(stmt.targets) != 1 \
            or type(stmt.targets[0]) is not ast.Name:
        return None
    reads = _name_reads(ctx, stmt, stmt.targets[0].id, iter_call)
    if not reads:
        return None
    calls = []
    for read in reads:
        call = ctx.parent(read)
        if type(call) is not ast.Call or type(call.func) is not ast.Name \
                or call.func.id != "next" or ctx.binding(call.func) is not None \
                or not call.args or call.args[0] is not read:
            return None
        calls.append(call)
    return calls


def _few_nexts(ctx: Context, iter_call: ast.Call) -> bool:
    """``it = iter(ds)`` whose every read is a ``next(it)`` run a handful of times
    (:func:`_bounded`): ``for step in range(10): x = next(it)``."""
    calls = _next_calls(ctx, iter_call)
    return calls is not None and all(_bounded(ctx, c) for c in calls)


def read_once(ctx: Context, iter_call: ast.Call) -> bool:
    """``it = iter(ds)`` whose every read is a ``next(it)`` that no loop repeats, in the scope
    that binds ``it`` (``it = iter(test_ds); batch = next(it)``): a fresh iterator asked for
    one element, or a few in a row, where a prefetch has nothing to overlap."""
    calls, stmt = _next_calls(ctx, iter_call), ctx.parent(iter_call)
    if calls is None or stmt is None:
        return False
    scope, loops = ctx.scope_of(stmt), len(ctx.enclosing_loops(stmt))
    # A read in a deeper loop, or in a nested function (called any number of times), is a
    # stream of elements that a prefetch would overlap.
    return all(ctx.scope_of(c) is scope and len(ctx.enclosing_loops(c)) <= loops
               for c in calls)


def _one_shot_iterated(ctx: Context, load: ast.AST) -> bool:
    """``tf.data.make_one_shot_iterator(ds)`` or ``ds.make_one_shot_iterator()``: TF1's
    iterator, advanced by each ``session.run`` of a tensor that depends on it."""
    parent = ctx.parent(load)
    if type(parent) is ast.Attribute and parent.attr == "make_one_shot_iterator":
        return type(ctx.parent(parent)) is ast.Call
    if type(parent) is ast.Call and parent.args and parent.args[0] is load:
        q = ctx.qualname(parent.func)
        return q is not None and q.endswith("data.make_one_shot_iterator")
    return False


def _few_session_runs(ctx: Context) -> bool:
    """Every ``.run(...)``/``.eval(...)`` in the module runs a handful of times
    (:func:`_bounded`): a TF1 demo that trains ten steps or infers one batch."""
    runs = [c for c in ctx.calls if type(c.func) is ast.Attribute
            and c.func.attr in ("run", "eval")]
    return bool(runs) and all(_bounded(ctx, c) for c in runs)


# Calls that evaluate or predict: one pass over the dataset they are given.
ONE_PASS_CALLS = frozenset({"evaluate", "predict"})


def _one_pass_use(ctx: Context, load: ast.AST, callers: bool = True) -> bool:
    """``model.evaluate(ds)``/``model.predict(x=ds)`` run once in all (:func:`runs_in_all`:
    module-level code outside any loop, or a function this module calls once, such as
    ``main()`` under the main guard; a function called every epoch is not): the dataset is
    read once (a test set scored after training), so a sequential map costs one pass.
    ``callers=False``: module-level code only, where a function's count would rest on this
    module's calls alone (another module may call it every epoch)."""
    parent = ctx.parent(load)
    if type(parent) is ast.keyword:
        if parent.arg != "x":
            return False
        parent = ctx.parent(parent)
    elif type(parent) is ast.Call and not (parent.args and parent.args[0] is load):
        return False
    if type(parent) is not ast.Call or type(parent.func) is not ast.Attribute \
            or parent.func.attr not in ONE_PASS_CALLS:
        return False
    if not callers and ctx.enclosing_function(parent) is not None:
        return False
    return runs_in_all(ctx, parent) == 1


def few_session_runs(ctx: Context) -> bool:
    """Every ``session.run``/``eval`` of the module runs a handful of times: a TF1 demo
    (ten fine-tuning steps, one batch inferred), where a TF1 iterator yields a few batches."""
    return _few_session_runs(ctx)


def one_pass(ctx: Context, expr: ast.AST) -> bool:
    """``expr`` is what ``model.evaluate``/``predict`` is given in module-level code outside
    any loop: the dataset is passed over once (a test set scored, a few samples predicted)."""
    return _one_pass_use(ctx, expr)


def handed_for_one_next(ctx: Context, iter_call: ast.Call) -> bool:
    """``show(iter(ds))`` where ``show`` is a function of the module whose parameter is only
    ever read by ``next(param)`` calls outside any loop of it: one batch drawn (a plot of
    samples), not a stream a prefetch would overlap."""
    call = ctx.parent(iter_call)
    if type(call) is not ast.Call or iter_call not in call.args \
            or type(call.func) is not ast.Name:
        return False
    b = ctx.binding(call.func)
    fn = b.value if b is not None and b.kind == "def" else None
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    params = fn.args.posonlyargs + fn.args.args
    index = call.args.index(iter_call)
    if index >= len(params) or any(type(a) is ast.Starred for a in call.args[:index]):
        return False
    name = params[index].arg
    reads = [n for n in ast.walk(fn) if type(n) is ast.Name and n.id == name
             and type(n.ctx) is ast.Load]
    for read in reads:
        nxt = ctx.parent(read)
        if type(nxt) is not ast.Call or type(nxt.func) is not ast.Name \
                or nxt.func.id != "next" or not nxt.args or nxt.args[0] is not read:
            return False
        if any(ctx.enclosing_function(lp) is fn for lp in ctx.enclosing_loops(nxt)):
            return False
    return bool(reads)


def _reads(ctx: Context, top: ast.AST) -> list[ast.Name] | None:
    """The reads of the name the dataset expression ``top`` is assigned to (``ds = top``:
    the loads that refer to this very assignment), or ``None`` where ``top`` is not simply
    assigned to one name (returned, passed on, unpacked: used as is)."""
    assign = ctx.parent(top)
    if type(assign) is not ast.Assign or len(assign.targets) != 1 \
            or type(assign.targets[0]) is not ast.Name:
        return None
    return _name_reads(ctx, assign, assign.targets[0].id, top)


def _name_reads(ctx: Context, assign: ast.Assign, name: str,
                value: ast.AST) -> list[ast.Name] | None:
    """The loads of ``name`` bound by ``assign`` (whose binding's value is ``value``: the
    assigned expression, or the unpacking target); ``None`` when a later read in the same
    scope may see this value or another one, depending on a branch."""
    scope = ctx.scope_of(assign)
    after = (assign.end_lineno or 0, assign.end_col_offset or 0)
    loads = []
    for n in ctx.name_loads(name):
        b = ctx.binding(n)
        if b is not None and b.value is value:
            loads.append(n)
        elif b is not None and ctx.scope_of(n) is scope \
                and (n.lineno, n.col_offset) > after and not _surely_bound(ctx, b.value, n):
            return None  # a later read whose value depends on a branch: it may be this one
    return loads


def _returned_reads(ctx: Context, load: ast.AST) -> list[ast.Name] | None:
    """``return ds`` or ``return a, ds, n`` in a function: the reads, at every call of the
    function in this module, of the name the caller binds the dataset to (``x = f()``,
    ``a, x, n = f()``). ``None`` when the function is not a module-level ``def`` called here
    only in such assignments: a caller elsewhere may consume it."""
    parent = ctx.parent(load)
    index = None
    if type(parent) is ast.Tuple:
        index = parent.elts.index(load)  # type: ignore[arg-type]
        width = len(parent.elts)
        parent = ctx.parent(parent)
    if type(parent) is not ast.Return:
        return None
    fn = ctx.enclosing_function(parent)
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or _has_main_guard(ctx):
        return None  # a module with a main guard is imported too: callers may be elsewhere
    reads: list[ast.Name] = []
    calls = 0
    for call in ctx.calls:
        func = call.func
        if type(func) is not ast.Name or func.id != fn.name:
            if type(func) is ast.Attribute and func.attr == fn.name:
                return None  # called as a method: not followed
            continue
        b = ctx.binding(func)
        if b is None or b.value is not fn:
            continue
        calls += 1
        stmt = ctx.parent(call)
        if type(stmt) is not ast.Assign or len(stmt.targets) != 1:
            return None
        target = stmt.targets[0]
        if index is None and type(target) is ast.Name:
            found = _name_reads(ctx, stmt, target.id, call)
        elif index is not None and type(target) is ast.Tuple and len(target.elts) == width \
                and type(target.elts[index]) is ast.Name:
            found = _name_reads(ctx, stmt, target.elts[index].id, target)
        else:
            return None
        if found is None:
            return None
        reads.extend(found)
    return reads if calls else None


def _has_main_guard(ctx: Context) -> bool:
    """The module has ``if __name__ == "__main__":`` at top level: it is meant to be
    imported as well as run, so its functions have callers this module does not show."""
    for stmt in getattr(ctx.tree, "body", ()):
        if type(stmt) is ast.If and type(stmt.test) is ast.Compare:
            names = [n for n in ast.walk(stmt.test) if type(n) is ast.Name]
            consts = [n.value for n in ast.walk(stmt.test) if type(n) is ast.Constant]
            if any(n.id == "__name__" for n in names) and "__main__" in consts:
                return True
    return False


def _surely_bound(ctx: Context, value: object, use: ast.AST) -> bool:
    """The statement that made a binding (``value``: its expression or statement) surely ran
    before ``use``, so ``use`` cannot still see an earlier value."""
    node = value if isinstance(value, ast.AST) else None
    while node is not None and not isinstance(node, ast.stmt):
        node = ctx.parent(node)
    return node is not None and precedes(ctx, node, use)


def _consumption(ctx: Context, top: ast.AST, depth: int = 0,
                 callers: bool = True) -> bool | None:
    """Whether the dataset ``top`` builds is consumed for real: ``False`` when every read is
    a peek (:func:`_peek_use`) or a single pass (:func:`_one_pass_use`), following datasets
    derived from it by further steps (``fast = ds.batch(8)``) and returned to a caller here
    (``test = make()``); ``None`` if it cannot tell."""
    if type(ctx.parent(top)) is ast.Assign:
        found = _reads(ctx, top)
        if found == [] and _unread_means_unused(ctx, top):
            return False  # built and never read: never iterated
        reads: list[ast.AST] = list(found or [])
    else:
        reads = [top]  # not assigned: used in place
    if not reads:
        return None
    return _reads_consume(ctx, reads, depth, callers)


def _unread_means_unused(ctx: Context, top: ast.AST) -> bool:
    """A name nothing here reads is read nowhere: a function's local, a notebook's name,
    or a name of a script that does its work at top level (a loop there: importing it
    would run that loop, so no other module imports names from it). A module-level name
    of an importable module may be read by another module."""
    scope = ctx.scope_of(top)
    if type(scope) in (ast.FunctionDef, ast.AsyncFunctionDef):
        return True
    if ctx.path.endswith(".ipynb"):
        return True
    return any(type(stmt) in (ast.For, ast.While) for stmt in getattr(ctx.tree, "body", ()))


def _reads_consume(ctx: Context, reads: list[ast.AST], depth: int,
                   callers: bool = True) -> bool | None:
    """:func:`_consumption` over the reads of a dataset's name."""
    if depth > 4:
        return None
    for load in reads:
        if _peek_use(ctx, load) or _one_pass_use(ctx, load, callers):
            continue
        derived = _derived(ctx, load)
        if derived is not None and _consumption(ctx, derived, depth + 1, callers) is False:
            continue
        returned = _returned_reads(ctx, derived or load)
        if returned and _reads_consume(ctx, list(returned), depth + 1, callers) is False:
            continue
        return True
    return False


def _derived(ctx: Context, load: ast.AST) -> ast.AST | None:
    """``load`` as the start of a chain of dataset steps (``load.batch(8).map(f)``): the
    chain's outermost call."""
    chain = chained_on(ctx, load)
    return chain[-1] if chain else None


def only_peeked(ctx: Context, call: ast.Call, callers: bool = True) -> bool:
    """The dataset ``call`` makes (bound to a name, or used in place) is only ever peeked at
    (:func:`_peek_use`: a guide printing ``ds.take(5)``, ten ``next(it)`` of a demo) or
    passed over once (:func:`_one_pass_use`: ``model.evaluate(test_ds)`` after training),
    also through datasets derived from it and returned to callers here. One read that does
    anything else (a ``fit``, a loop, passing it on) and it counts as consumed.
    ``callers=False``: a pass counts as one only in module-level code (see
    :func:`read_once_through_callers`)."""
    chained = chained_on(ctx, call)
    top = chained[-1] if chained else call
    return _consumption(ctx, top, 0, callers) is False


def read_once_through_callers(ctx: Context, call: ast.Call) -> bool:
    """:func:`only_peeked` holds only because this module calls the function that passes
    over the dataset once (``main()`` under the main guard): calls from other modules are
    not counted, so a rule that sees the project reports it where another module calls
    into this one (:meth:`tfperf.analysis.project.Project.called_from_other_modules`)."""
    return only_peeked(ctx, call) and not only_peeked(ctx, call, callers=False)


def few_upstream(ctx: Context, call: ast.Call) -> bool:
    """Upstream of ``call`` the pipeline keeps a handful of elements: ``take(k)`` with a
    small literal ``k``, repeated at most a literal number of times (``take(5).repeat(2)``);
    a ``repeat()`` without a count makes it endless."""
    steps = pipeline(ctx, call.func.value).steps
    idx = [i for i, s in enumerate(steps) if s.func.attr == "take"]
    if not idx:
        return False
    k = steps[idx[-1]].args[0] if steps[idx[-1]].args else None
    if type(k) is not ast.Constant or type(k.value) is not int or not 0 < k.value <= PEEK_MAX:
        return False
    count = k.value
    for s in steps[idx[-1] + 1:]:
        if s.func.attr == "repeat":
            n = s.args[0] if s.args else keyword(s, "count")
            if type(n) is not ast.Constant or type(n.value) is not int or n.value < 0:
                return False
            count *= n.value
    return count <= PEEK_MAX
