"""TF1 sessions: which calls run a graph in a session (``sess.run``, ``saver.save(sess)``),
what they fetch and feed, and which calls add ops to the graph (so that building them
between runs grows the graph)."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from tfperf.lint.analysis.syntax import is_test_file
from tfperf.lint.semantic import Context, returns_tensor
from tfperf.lint.semantic.tf_api import returns_tensor_list

SESSION_CLASSES = frozenset(f"tensorflow.{p}{n}" for p in ("", "compat.v1.")
                            for n in ("Session", "InteractiveSession"))
SESSION_GETTERS = frozenset({"get_session", "get_default_session"})
SAVER_CLASSES = frozenset(f"tensorflow.{p}train.Saver" for p in ("", "compat.v1."))
# Variable methods that add an assignment op to the graph (``load`` does not: the fix).
ASSIGN_METHODS = frozenset({"assign", "assign_add", "assign_sub", "scatter_update"})
# Calls that start a fresh graph: ops built after them do not grow the old one.
FRESH_GRAPH = frozenset(f"tensorflow.{p}{n}" for p in ("", "compat.v1.")
                        for n in ("reset_default_graph", "Graph"))


_FRESH = FRESH_GRAPH | SESSION_CLASSES


@dataclass(frozen=True)
class SessionRun:
    """A ``<session>.run(fetches, feed_dict=...)`` call, or a Saver's ``save``/``restore``
    with a session (``receiver``: the Saver)."""

    call: ast.Call
    session: str  # the session's source text ("sess", "self.sess", "K.get_session()")
    fetches: tuple[ast.expr, ...]
    feed: ast.expr | None
    saver: ast.expr | None = None


def _looks_like_session(ctx: Context, expr: ast.AST) -> bool:
    if type(expr) is ast.Call:
        f = expr.func
        name = f.attr if type(f) is ast.Attribute else getattr(f, "id", "")
        return name in SESSION_GETTERS or ctx.qualname(f) in SESSION_CLASSES
    if type(expr) is ast.Name:
        b = ctx.binding(expr)
        if b is not None and type(b.value) is ast.Call \
                and ctx.qualname(b.value.func) in SESSION_CLASSES:
            return True
        return "sess" in expr.id.lower()
    if type(expr) is ast.Attribute:
        return "sess" in expr.attr.lower()
    return False


def _elements(expr: ast.expr) -> list[ast.expr]:
    if type(expr) in (ast.List, ast.Tuple):
        return [e for x in expr.elts for e in _elements(x)]
    if type(expr) is ast.Dict:
        return [e for x in expr.values for e in _elements(x)]
    return [expr]


def session_run_of(ctx: Context, node: ast.AST) -> SessionRun | None:
    """``node`` as a session run, else ``None``."""
    if type(node) is not ast.Call or type(node.func) is not ast.Attribute:
        return None
    f = node.func
    kws = {k.arg: k.value for k in node.keywords if k.arg}
    if f.attr == "run" and _looks_like_session(ctx, f.value):
        fetch = node.args[0] if node.args else kws.get("fetches")
        feed = node.args[1] if len(node.args) > 1 else kws.get("feed_dict")
        return SessionRun(node, ctx.source_of(f.value),
                          tuple(_elements(fetch)) if fetch is not None else (), feed)
    if f.attr in ("save", "restore") and node.args and _looks_like_session(ctx, node.args[0]):
        return SessionRun(node, ctx.source_of(node.args[0]), (), None, saver=f.value)
    return None


def session_runs(ctx: Context) -> list[SessionRun]:
    """Every session run of the module (cached)."""
    def compute() -> list[SessionRun]:
        if "sess" not in ctx.source.lower():
            return []
        by_attr, _ = ctx.call_groups()
        out = []
        for name in ("run", "save", "restore"):
            for call in by_attr.get(name, ()):
                r = session_run_of(ctx, call)
                if r is not None:
                    out.append(r)
        return out
    return ctx.cached("sessions.session_runs", compute)


# The session a `tensor.eval(feed)` runs in when it names none: the default one.
DEFAULT_SESSION = "<default session>"


def tensor_evals(ctx: Context) -> list[SessionRun]:
    """``tensor.eval(feed_dict)`` calls of a module that builds TF1 graphs: each is a
    ``session.run`` of that tensor (in the session it names, else the default one). Not a
    library's ``eval`` function (``K.eval(x)``), nor one given more than TF's arguments.
    None in a test file, where evaluating values one by one is the test's point."""
    def compute() -> list[SessionRun]:
        if ".eval(" not in ctx.source or is_test_file(ctx.path) \
                or not graph_mode_module(ctx):
            return []
        by_attr, _ = ctx.call_groups()
        out = []
        for call in by_attr.get("eval", ()):
            if ctx.call_qualname(call) is not None or len(call.args) > 2 \
                    or any(k.arg not in ("feed_dict", "session") for k in call.keywords):
                continue
            kws = {k.arg: k.value for k in call.keywords}
            feed = call.args[0] if call.args else kws.get("feed_dict")
            sess = call.args[1] if len(call.args) > 1 else kws.get("session")
            out.append(SessionRun(call, DEFAULT_SESSION if sess is None else ctx.source_of(sess),
                                  (call.func.value,), feed))
        return out
    return ctx.cached("sessions.tensor_evals", compute)


_STEP_LOOPS = (ast.For, ast.AsyncFor, ast.While)


def epoch_loops(ctx: Context) -> frozenset[int]:
    """The ids of the loops that hold another loop running the session: epoch loops,
    whose own runs and ops come once per epoch (a learning-rate assign, an initial state),
    not once per step."""
    def compute() -> frozenset[int]:
        out: set[int] = set()
        for run in session_runs(ctx):
            if run.call.func.attr != "run":
                continue
            loops = [lp for lp in ctx.enclosing_loops(run.call) if type(lp) in _STEP_LOOPS]
            out.update(id(lp) for lp in loops[1:])
        return frozenset(out)
    return ctx.cached("sessions.epoch_loops", compute)


# tf.* calls that return an Operation, not a tensor, but add a node all the same
# (convnet-benchmarks' `session.run(tf.group(*target))` in its timing loop).
_OP_FUNCTIONS = frozenset({"group", "no_op", "Assert"})


def builds_op(ctx: Context, node: ast.AST) -> str | None:
    """What graph op(s) the call ``node`` adds, in words (``tf.argmax``, ``an assign op``,
    ``a Saver``), or ``None`` when it adds none (a non-TF call, ``var.load``, a session)."""
    if type(node) is not ast.Call:
        return None
    f = node.func
    q = ctx.qualname(f)
    if q is not None:
        if q in SAVER_CLASSES:
            return "a tf.train.Saver (save and restore ops for every variable)"
        if returns_tensor(q) or returns_tensor_list(q) or (q.startswith("tensorflow.") and (
                q.endswith("_initializer") or q.rsplit(".", 1)[-1] in _OP_FUNCTIONS)):
            if ".python." in q:  # TensorFlow's own modules: the public name is the last part
                return "tf." + q.rsplit(".", 1)[-1]
            return q.replace("tensorflow.compat.v1.", "tf.").replace("tensorflow.", "tf.")
        return None
    if type(f) is ast.Attribute and f.attr in ASSIGN_METHODS and node.args:
        return f"an {f.attr} op" if f.attr.startswith("a") else f"a {f.attr} op"
    return None


def starts_fresh_graph(ctx: Context, block: ast.AST) -> bool:
    """``block`` (a loop or function) makes a new graph or session, so what it builds goes
    into a graph of its own, not one that grows."""
    fresh = ctx.cached("sessions.fresh_graph_calls", lambda: [
        c for c in ctx.calls if ctx.qualname(c.func) in _FRESH])
    if not fresh:  # most modules: no walk of each loop and function
        return False
    def compute() -> bool:
        return any(c is block or any(a is block for a in ctx.ancestors(c)) for c in fresh)
    return ctx.cached(f"sessions.starts_fresh_graph:{id(block)}", compute)


# Calls that put a module in TF1 graph mode (ops are nodes of a graph a session runs).
GRAPH_MODE_CALLS = frozenset(f"tensorflow.{p}{n}" for p in ("", "compat.v1.") for n in (
    "placeholder", "Session", "InteractiveSession", "disable_eager_execution",
    "disable_v2_behavior", "Graph"))


def graph_mode_module(ctx: Context) -> bool:
    """The module builds TF1 graphs (sessions, placeholders, eager execution turned off):
    its ops run in a session, where Grappler rewrites the graph first (cached)."""
    def compute() -> bool:
        src = ctx.source
        if not any(w in src for w in ("placeholder", "Session", "disable_", "Graph")):
            return False
        return bool(session_runs(ctx)) or any(
            ctx.qualname(c.func) in GRAPH_MODE_CALLS for c in ctx.calls)
    return ctx.cached("sessions.graph_mode_module", compute)


# Methods whose result is a training update (TF1 optimizers, Keras' get_updates).
_UPDATE_METHODS = frozenset({"minimize", "apply_gradients", "apply_updates", "get_updates"})
_UPDATE_CALLS = frozenset(f"tensorflow.{p}{n}" for p in ("", "compat.v1.", "contrib.")
                          for n in ("contrib.layers.optimize_loss", "layers.optimize_loss"))
# Name endings that say a train op where its definition is out of reach (another module:
# ``model.d_op``, ``self.g_optim``, ``train_step``); not a counter (``global_step``), and not
# when another part says a read (``summary_op``, ``init_op``, ``train_loss``).
_UPDATE_WORDS = frozenset({"op", "ops", "optim", "optimizer", "optimizers", "opt", "solver",
                           "train", "trainer", "minimize", "minimizer", "step"})
_READ_WORDS = frozenset({"summary", "summ", "merged", "init", "initializer", "loss", "acc",
                         "accuracy", "pred", "prediction", "eval", "metric", "metrics",
                         "global", "reset", "assign", "copy", "sync", "target"})


def _key(expr: ast.AST) -> str | None:
    """What names a fetch: ``d_op`` → d_op, ``model.d_op`` → d_op, ``ops[0]`` → ops."""
    while type(expr) is ast.Subscript:
        expr = expr.value
    if type(expr) is ast.Name:
        return expr.id
    if type(expr) is ast.Attribute:
        return expr.attr
    return None


def _update_names(ctx: Context) -> tuple[frozenset[str], frozenset[str]]:
    """The names (and attributes, by their last part) the module assigns a training update
    to, directly (``opt.minimize(loss)``) or through what holds or depends on one (``[d_op,
    d_loss]``, ``tf.group(train_op, ema_op)``, an op built under
    ``tf.control_dependencies([train_op])``); and every name it assigns at all."""
    def compute() -> tuple[frozenset[str], frozenset[str]]:
        steps: list[tuple[set[str], ast.AST, bool]] = []
        assigned: set[str] = set()
        for node in ctx.nodes_of(ast.Assign, ast.AnnAssign):
            value = getattr(node, "value", None)
            if value is None or session_run_of(ctx, value) is not None:
                continue  # what a run returns is host values, not ops
            targets = node.targets if type(node) is ast.Assign else [node.target]
            keys = {k for t in targets for e in _elements(t) if (k := _key(e))}
            assigned |= keys
            direct = any(type(n) is ast.Call and (
                (type(n.func) is ast.Attribute and n.func.attr in _UPDATE_METHODS)
                or ctx.qualname(n.func) in _UPDATE_CALLS) for n in ast.walk(value))
            deps = [w.items[0].context_expr for w in ctx.ancestors(node)
                    if type(w) is ast.With and w.items
                    and type(w.items[0].context_expr) is ast.Call
                    and type(w.items[0].context_expr.func) is ast.Attribute
                    and w.items[0].context_expr.func.attr == "control_dependencies"]
            steps.append((keys, value, direct))
            steps.extend((keys, d, False) for d in deps)
        return frozenset(_closure(ctx, steps)), frozenset(assigned)
    return ctx.cached("sessions.update_names", compute)


def _closure(ctx: Context, steps: list[tuple[set[str], ast.AST, bool]]) -> set[str]:
    """The keys of the steps that build an update directly, and of every step holding such
    a key, through any chain: a worklist over the steps by the keys they hold, each step's
    value walked once (linear in the module; a fixed point re-walking every value per pass
    took 45 s on a generated 3,000-line file)."""
    holders: dict[str, list[int]] = {}
    for i, (_, value, direct) in enumerate(steps):
        if not direct:
            for k in {_key(n) for n in _held(ctx, value)}:
                if k is not None:
                    holders.setdefault(k, []).append(i)
    out: set[str] = set()
    work = [i for i, (_, _, direct) in enumerate(steps) if direct]
    done: set[int] = set()
    while work:
        i = work.pop()
        if i in done:
            continue
        done.add(i)
        for k in steps[i][0] - out:
            out.add(k)
            work.extend(j for j in holders.get(k, ()) if j not in done)
    return out


def _held(ctx: Context, value: ast.AST) -> list[ast.AST]:
    """The names and attributes ``value`` holds as values: ``[d_op, self.g_op]``,
    ``tf.group(train_op)``; not a call's callee (``opt.apply_gradients``), nor the object
    a method or module attribute is read from (``optimizer`` in ``optimizer.compute_...``,
    ``tf.train``)."""
    out: list[ast.AST] = []
    for n in ast.walk(value):
        if type(n) not in (ast.Name, ast.Attribute):
            continue
        p = ctx.parent(n)
        if (type(p) is ast.Call and p.func is n) or (type(p) is ast.Attribute and p.value is n):
            continue
        out.append(n)
    return out


def _named_update(name: str) -> bool:
    words = [w.lower() for w in re.split(r"_|(?<=[a-z0-9])(?=[A-Z])", name) if w]
    return bool(words) and words[-1] in _UPDATE_WORDS and not set(words) & _READ_WORDS


# Explicit variable writes: `tf.assign(v, x)`, `v.assign_add(x)`, `tf.scatter_update(...)`.
_WRITE_METHODS = frozenset({"assign", "assign_add", "assign_sub", "scatter_update",
                            "scatter_add", "scatter_sub", "scatter_nd_update",
                            "scatter_nd_add"})


def _writes(ctx: Context, node: ast.AST) -> bool:
    """``node`` holds a call that builds a variable write."""
    for n in ast.walk(node):
        if type(n) is ast.Call:
            f = n.func
            name = f.attr if type(f) is ast.Attribute else f.id if type(f) is ast.Name else ""
            if name in _WRITE_METHODS:
                return True
    return False


def _write_names(ctx: Context) -> frozenset[str]:
    """The names (attributes by their last part) the module assigns a variable write to,
    directly or through what holds one (``tf.group(*copies)``, a list of assigns)."""
    def compute() -> frozenset[str]:
        steps: list[tuple[set[str], ast.AST, bool]] = []
        for node in ctx.nodes_of(ast.Assign, ast.AnnAssign):
            value = getattr(node, "value", None)
            if value is None or session_run_of(ctx, value) is not None:
                continue
            targets = node.targets if type(node) is ast.Assign else [node.target]
            keys = {k for t in targets for e in _elements(t) if (k := _key(e))}
            steps.append((keys, value, _writes(ctx, value)))
        return frozenset(_closure(ctx, steps))
    return ctx.cached("sessions.write_names", compute)


def fetches_write(ctx: Context, run: SessionRun) -> bool:
    """``run`` fetches an explicit variable write (``tf.assign``, ``v.assign_add``, a name
    the module binds to one or to a group of them): state the next run may read."""
    names = _write_names(ctx)
    return any(_writes(ctx, f) or (_key(f) or "") in names for f in run.fetches)


def fetches_update(ctx: Context, run: SessionRun) -> bool:
    """``run`` fetches a training update: an op the module builds with ``minimize`` (or
    ``apply_gradients``, or one that depends on such an op), or, where the fetched name is not
    assigned in the module (a model built in another one), a name that says so (``d_op``,
    ``self.g_optim``, ``train_step``)."""
    updates, assigned = _update_names(ctx)
    for f in run.fetches:
        if any(type(n) is ast.Call and type(n.func) is ast.Attribute
               and n.func.attr in _UPDATE_METHODS for n in ast.walk(f)):
            return True
        k = _key(f)
        if k is None:
            continue
        if k in updates or (k not in assigned and _named_update(k)):
            return True
    return False
