"""Traced code: whether a node runs inside a graph TensorFlow traces (``tf.function``, Keras
``call``, ``Dataset.map`` functions), or in a function handed to ``tf.py_function`` that runs
eagerly inside it, or behind a guard that asks whether code runs eagerly."""

from __future__ import annotations

import ast

from tfperf.lint.analysis.callers import calls_of
from tfperf.lint.analysis.sessions import graph_mode_module
from tfperf.lint.semantic import FUNCTION_NODES, Context

# `tf.py_func` is TF1's top-level spelling (TF 1.x scripts call it in their map functions).
PY_FUNCTIONS = frozenset({"tensorflow.py_function", "tensorflow.numpy_function",
                          "tensorflow.py_func", "tensorflow.compat.v1.py_func",
                          "tensorflow.compat.v1.py_function",
                          "tensorflow.compat.v1.numpy_function"})


# Last parts of the TF functions that run a Python function eagerly (public and internal
# spellings: tf.py_function, tf.numpy_function, tf.compat.v1.py_func, script_ops.eager_py_func).
PY_FUNCTION_NAMES = frozenset({"py_function", "numpy_function", "py_func", "eager_py_func"})


# Words in an `if` test that guard eager-only code (`if tf.executing_eagerly():`,
# `if is_torch_backend:`, `isinstance(x, EagerTensor)`, `hasattr(x, "numpy")`).
_EAGER_GUARD_WORDS = ("eager", "torch", "symbolic", "inside_function", "keras_tensor")


def is_py_function_call(ctx: Context, call: ast.AST) -> bool:
    q = ctx.call_qualname(call)
    return q is not None and q.startswith("tensorflow.") \
        and q.rsplit(".", 1)[1] in PY_FUNCTION_NAMES


def _py_function_targets(ctx: Context) -> frozenset[str]:
    """Names of the functions handed to ``tf.py_function``-like calls in the module."""
    def compute() -> frozenset[str]:
        if not any(w in ctx.source for w in ("py_func", "numpy_function")):
            return frozenset()
        names: set[str] = set()
        by_attr, by_name = ctx.call_groups()
        for call in (c for n in PY_FUNCTION_NAMES for g in (by_attr, by_name)
                     for c in g.get(n, ())):
            if not is_py_function_call(ctx, call):
                continue
            passed = [call.args[0]] if call.args else []
            passed += [k.value for k in call.keywords if k.arg == "func"]
            for a in passed:
                name = getattr(a, "id", None) or getattr(a, "attr", None)
                if name:
                    names.add(name)
        return frozenset(names)
    return ctx.cached("py_function_targets", compute)


def _passed_to_py_function(ctx: Context, fn: ast.AST) -> bool:
    """``fn`` is handed to ``tf.py_function``/``tf.numpy_function``: it runs eagerly."""
    if type(fn) is ast.Lambda:
        p = ctx.parent(fn)
        if type(p) is ast.keyword:
            p = ctx.parent(p)
        return type(p) is ast.Call and is_py_function_call(ctx, p)
    name = getattr(fn, "name", None)
    return name is not None and name in _py_function_targets(ctx)


def eager_guarded(ctx: Context, node: ast.AST) -> bool:
    """``node`` sits in an ``if``/conditional expression whose test asks whether code runs
    eagerly (``tf.executing_eagerly()``, ``isinstance(x, EagerTensor)``, ``hasattr(x,
    "numpy")``, ``if is_torch_backend:``), within its function: code that is correct in
    both modes."""
    for p in ctx.ancestors(node):
        tp = type(p)
        if tp is ast.If or tp is ast.IfExp or tp is ast.While:
            for n in ast.walk(p.test):
                t = type(n)
                word = n.id if t is ast.Name else n.attr if t is ast.Attribute \
                    else n.value if t is ast.Constant and type(n.value) is str else None
                if word is not None and (word == "numpy" or any(
                        w in word.lower() for w in _EAGER_GUARD_WORDS)):
                    return True
        elif tp in FUNCTION_NODES:
            return False
    return False


def traced(ctx: Context, node: ast.AST) -> bool:
    """``node`` runs inside a graph TensorFlow traces (``tf.function``, Keras ``call``,
    ``Dataset.map`` function), and not in a function a ``tf.py_function`` runs eagerly."""
    for fn in ctx.enclosing_functions(node):
        if _passed_to_py_function(ctx, fn):
            return False
        if ctx.is_tf_function(fn) or ctx.dataset_map_call(fn) is not None:
            return True
    return False


def in_py_function(ctx: Context, node: ast.AST) -> bool:
    """``node`` runs in a function handed to ``tf.py_function``/``tf.numpy_function``, where
    host values are the point."""
    return any(_passed_to_py_function(ctx, fn) for fn in ctx.enclosing_functions(node))


def traced_fn_of(ctx: Context, node: ast.AST) -> ast.AST | None:
    """The ``tf.function`` body ``node`` runs in, unless a function between them is handed to
    ``tf.py_function``/``tf.numpy_function`` (which runs it eagerly, every call)."""
    # The answer depends only on the chain of enclosing functions, which the innermost one
    # determines: cache it per innermost function.
    first = ctx.enclosing_function(node)
    if first is None:
        return None
    cache: dict[int, ast.AST | None] = ctx.cached("traced_fn_of", dict)
    key = id(first)
    if key in cache:
        return cache[key]
    found = None
    inner: list[ast.AST] = []
    for fn in ctx.enclosing_functions(node):
        if ctx.is_tf_function(fn):
            if not (inner and any(_passed_to_py_function(ctx, f) for f in inner)):
                found = fn
            break
        inner.append(fn)
    cache[key] = found
    return found


_INIT_SCOPES = frozenset({"tensorflow.init_scope", "tensorflow.compat.v1.init_scope"})
# Keras methods that `fit`/`evaluate`/`predict` trace, unless the model runs eagerly.
_KERAS_STEPS = frozenset({"train_step", "test_step", "predict_step"})


def under_init_scope(ctx: Context, node: ast.AST) -> bool:
    """``node`` runs under ``with tf.init_scope():`` within its function: TensorFlow lifts
    that block out of the graph being traced and runs it eagerly, once per trace (the way
    variables and lookup tables are made inside a ``tf.function``)."""
    for p in ctx.ancestors(node):
        tp = type(p)
        if tp is ast.With or tp is ast.AsyncWith:
            if any(ctx.is_call_to(item.context_expr, *_INIT_SCOPES)
                   for item in p.items):
                return True
        elif tp in FUNCTION_NODES:
            return False
    return False


_KERAS_RUNNERS = frozenset({"fit", "evaluate", "predict", "fit_generator", "train_on_batch",
                            "test_on_batch", "predict_on_batch"})


def _run_eagerly_set(ctx: Context) -> bool:
    """The module compiles with ``run_eagerly=True`` or sets ``model.run_eagerly = True``."""
    def compute() -> bool:
        if "run_eagerly" not in ctx.source:
            return False
        for k in ctx.nodes_of(ast.keyword):
            if k.arg == "run_eagerly" and type(k.value) is ast.Constant \
                    and k.value.value is True:
                return True
        return any(any(type(t) is ast.Attribute and t.attr == "run_eagerly"
                       for t in a.targets) and type(a.value) is ast.Constant
                   and a.value.value is True for a in ctx.nodes_of(ast.Assign))
    return ctx.cached("keras_run_eagerly_set", compute)


def _receivers(ctx: Context, methods: frozenset[str]) -> set[str]:
    """Spellings of the objects these methods are called on (``model`` in ``model.fit()``,
    ``self.model_tf2`` in ``self.model_tf2.train_step(b)``)."""
    by_attr = ctx.call_groups()[0]
    return {ast.unparse(c.func.value) for m in methods for c in by_attr.get(m, ())}


def _keras_steps_run_eagerly(ctx: Context, cls: ast.AST | None) -> bool:
    """The module runs the Keras steps of ``cls`` eagerly by choice: it compiles with
    ``run_eagerly=True`` (or sets ``model.run_eagerly = True``), or it calls a step itself
    (``model.train_step(batch)``) on an object it never hands to ``fit``/``evaluate``/
    ``predict``, which are what trace the steps. Objects are matched by spelling; where the
    class's instances are visible (``m = MyModel()``), only those count."""
    if _run_eagerly_set(ctx):
        return True
    stepped = _receivers(ctx, _KERAS_STEPS)
    if not stepped:
        return False
    ran = _receivers(ctx, _KERAS_RUNNERS)
    name = getattr(cls, "name", None)
    instances = {ast.unparse(t) for a in ctx.nodes_of(ast.Assign)
                 if type(a.value) is ast.Call and type(a.value.func) is ast.Name
                 and a.value.func.id == name for t in a.targets} if name else set()
    if instances:
        stepped &= instances
        ran &= instances
    return bool(stepped) and not ran


def eager_by_design(ctx: Context, node: ast.AST) -> bool:
    """``node`` sits in code TensorFlow would trace but runs eagerly by design: under
    ``tf.init_scope()`` (see :func:`under_init_scope`), or in a Keras ``train_step``/
    ``test_step``/``predict_step`` that the module runs eagerly (``run_eagerly=True``, or
    it calls the step itself on an object it never hands to ``fit``). Eager-only code there
    (``.numpy()``, ``print``, Python state) is correct, not a trace-time trap."""
    if under_init_scope(ctx, node):
        return True
    fn = ctx.tf_function_of(node)
    if fn is None or getattr(fn, "name", None) not in _KERAS_STEPS \
            or ctx.tf_function_decorator(fn) is not None:
        return False
    return _keras_steps_run_eagerly(ctx, ctx.enclosing_class(fn))


def _guarded_target(test: ast.AST) -> str | None:
    """``X is None`` / ``not X`` / ``key not in X`` (``X`` a name or ``self.x``) → X's
    spelling."""
    if type(test) is ast.Compare and len(test.ops) == 1 \
            and type(test.ops[0]) in (ast.Is, ast.NotIn):
        right = test.comparators[0]
        if type(test.ops[0]) is ast.NotIn:
            test = right
        elif type(right) is ast.Constant and right.value is None:
            test = test.left
        else:
            return None
    elif type(test) is ast.UnaryOp and type(test.op) is ast.Not:
        test = test.operand
    else:
        return None
    if type(test) is ast.Name or (type(test) is ast.Attribute and type(test.value) is ast.Name):
        return ast.unparse(test)
    return None


# Methods that fill an empty container in place (`if not state: state.append(...)`).
_FILLERS = frozenset({"append", "extend", "insert", "update", "add", "setdefault"})


def _set_in(body: list[ast.stmt]) -> set[str]:
    """Spellings of what ``body`` sets: assignment targets (``x``, ``self._x``, the ``X`` of
    ``X[k] = v``) and containers it fills (the ``X`` of ``X.append(v)``)."""
    out = set()
    for s in body:
        for n in ast.walk(s):
            if type(n) in (ast.Assign, ast.AugAssign, ast.AnnAssign):
                for t in (n.targets if type(n) is ast.Assign else [n.target]):
                    out.add(ast.unparse(t.value if type(t) is ast.Subscript else t))
            elif type(n) is ast.Call and type(n.func) is ast.Attribute \
                    and n.func.attr in _FILLERS:
                out.add(ast.unparse(n.func.value))
    return out


def once_guarded(ctx: Context, node: ast.AST) -> bool:
    """``node`` sits under a once-only guard within its function: ``if self._x is None:``
    (or ``if not self._built:``, ``if key not in cache:``) whose body sets that same
    ``self._x`` (or ``cache[...]``, or fills it: ``if not state: state.append(v)``). In
    traced code the block runs on the first trace only: work there (building state, logging
    it) is meant to happen once."""
    child = node
    for p in ctx.ancestors(node):
        tp = type(p)
        if tp in FUNCTION_NODES:
            return False
        if tp is ast.If and child in p.body:
            guarded = _guarded_target(p.test)
            if guarded is not None and guarded in _set_in(p.body):
                return True
        child = p
    return False


def surely_eager(ctx: Context, node: ast.AST) -> bool:
    """``node`` surely runs op by op (eager), where nothing rewrites the graph: not traced
    (``tf.function``, Keras ``call``, a dataset map), not in a TF1 graph-mode module, and
    either at module level or in a top-level function that this module only calls from its
    own eager module-level code. Rules whose cost Grappler removes from graphs (a transpose
    folded into a matmul, a transpose and its inverse) report only such code."""
    if graph_mode_module(ctx) or ctx.in_graph(node):
        return False
    fn = ctx.enclosing_function(node)
    if fn is None:
        return True
    name = getattr(fn, "name", None)
    if name is None or ctx.enclosing_function(fn) is not None or ctx.enclosing_class(fn) \
            is not None or ctx.is_tf_function(fn):
        return False
    calls = calls_of(ctx, fn)
    if not calls or len(ctx.name_loads(name)) != len(calls):
        return False  # passed on by reference (to a tf.function, a Keras layer...)
    return all(ctx.enclosing_function(c) is None and not ctx.in_graph(c) for c in calls)
