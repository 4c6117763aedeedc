"""TFP304: Python side effects inside a tf.function, which run only while tracing."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding
from tfperf.lint.analysis.traced import (
    eager_by_design,
    eager_guarded,
    once_guarded,
    traced_fn_of,
)
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import FUNCTION_NODES, Context

# Methods that change a Python container in place.
MUTATORS = frozenset({"append", "extend", "insert", "update", "add", "pop", "setdefault",
                      "clear", "remove", "discard", "popitem", "appendleft", "extendleft"})
_CONTAINER_BUILTINS = ("list", "dict", "set")
_CONTAINER_CLASSES = frozenset({"collections.defaultdict", "collections.deque",
                                "collections.OrderedDict", "collections.Counter"})
_CONTAINER_NODES = (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)


def _is_container(ctx: Context, value: ast.AST | None) -> bool:
    if type(value) in _CONTAINER_NODES:
        return True
    return type(value) is ast.Call and (
        ctx.is_builtin_call(value, *_CONTAINER_BUILTINS)
        or ctx.qualname(value.func) in _CONTAINER_CLASSES)


def _is_python_value(ctx: Context, value: ast.AST | None) -> bool:
    """A Python number, string, bool or container (``None`` is left out: it is the usual
    placeholder of a variable created later)."""
    if type(value) is ast.Constant:
        return value.value is not None
    return _is_container(ctx, value)


def _self_attr(node: ast.AST) -> str | None:
    if type(node) is ast.Attribute and type(node.value) is ast.Name \
            and node.value.id == "self":
        return node.attr
    return None


def _python_attrs(ctx: Context, cls: ast.ClassDef) -> dict[str, bool]:
    """``self.<attr>`` set somewhere in the class → whether every value it is given outside
    traced methods is a plain Python value (cached per class on the context)."""
    cache: dict[int, dict[str, bool]] = ctx.cached("tfp304_python_attrs", dict)
    found = cache.get(id(cls))
    if found is not None:
        return found
    found = {}
    for node in ast.walk(cls):
        if type(node) is ast.Assign:
            for t in node.targets:
                attr = _self_attr(t)
                if attr is not None and traced_fn_of(ctx, node) is None:
                    found[attr] = found.get(attr, True) and _is_python_value(ctx, node.value)
    cache[id(cls)] = found
    return found


# Words in a counter's name that say it counts traces (`trace_count`, `self.num_traces`,
# `retracing`, `compiled`): there, once per trace is the point.
_TRACE_WORDS = ("trac", "compil")


def _counts_traces(target: ast.AST) -> bool:
    """``target`` (a name, ``self.x``, ``d[k]``, ``lst`` of ``lst.append``) is named as a
    count or log of traces."""
    while type(target) is ast.Subscript:
        target = target.value
    name = target.id if type(target) is ast.Name else getattr(target, "attr", None)
    return name is not None and any(w in name.lower() for w in _TRACE_WORDS)


def _declared(ctx: Context, fn: ast.AST) -> set[str]:
    """Names declared ``global``/``nonlocal`` in ``fn`` itself (not nested functions)."""
    cache: dict[int, set[str]] = ctx.cached("tfp304_declared", dict)
    names = cache.get(id(fn))
    if names is None:
        names = set()
        stack = list(getattr(fn, "body", ()))
        while stack:
            n = stack.pop()
            if type(n) in (ast.Global, ast.Nonlocal):
                names.update(n.names)
            elif type(n) not in (*FUNCTION_NODES, ast.ClassDef):
                stack.extend(ast.iter_child_nodes(n))
        cache[id(fn)] = names
    return names


class SideEffectInTfFunction(Rule):
    code = "TFP304"
    name = "side-effect-in-tf-function"
    message = "Python side effect inside tf.function: it runs while tracing, not on every call"
    hint = ("keep state in tf.Variable (.assign/.assign_add) or return values from the "
            "function; use tf.print for logging")
    claims = ("S13",)
    group = "preview"  # judged 0/5 held-out; behaviour, not time (docs: Known limitations)
    node_types = (ast.Call, ast.Assign, ast.AugAssign)
    callee_names = MUTATORS
    docs = """\
## What it does
Finds Python state changed inside a function TensorFlow traces (`tf.function`, Keras
`call`/`train_step`): appending to (or otherwise mutating) a list, dict or set created outside
the function, assigning a `global`/`nonlocal` name, or changing an attribute of `self` that
holds a plain Python value (a counter, a flag, a list).

## Why is this bad?
`tf.function` runs the Python body only while tracing; later calls run the graph, which holds
only TensorFlow ops. The side effect happens once per trace, not once per call (claim S13:
Python code inside `tf.function` is executed at trace time). A counter stays at 1, a history
list keeps one symbolic tensor (touching it later raises "tensor out of scope"), and the
result depends on how often TF happened to retrace. TF's guide lists exactly these as the
"Python side effects" to avoid.

## Example
```python
losses = []

@tf.function
def train_step(x, y):
    loss = compute_loss(x, y)
    losses.append(loss)            # once per trace
    return loss
```

## Use instead
```python
@tf.function
def train_step(x, y):
    return compute_loss(x, y)

losses = [train_step(x, y) for x, y in ds]   # collect outside
```
For counters, a `tf.Variable` and `.assign_add(1)`; for logging, `tf.print`.

## Fix safety
No automatic fix: where the state should live depends on the program.

## Known limitations
Not reported: lists created inside the function (building a list in an unrolled loop and
`tf.stack`-ing it is fine), `tf.Variable` updates, attributes that hold `None` until a
variable is created once, functions run eagerly through `tf.py_function`, code under
`with tf.init_scope():` (lifted out of the graph, eager by design), counters named for what
they count (`trace_count += 1`, `self.num_traces += 1`: once per trace is the point), state
set under a once-only guard (`if key not in cache: cache[key] = tf.Variable(...)`, `if not
state: state.append(...)`), state changed under a test that asks whether the code runs
eagerly (`if tf.executing_eagerly():`, `if self.cfg.run_eagerly:`), and
Keras steps of a module that runs them eagerly (`compile(..., run_eagerly=True)`, or
`model.train_step(batch)` called by the module itself and never `fit`).

In `preview` (not on by default): all 5 of its findings on held-out code were false
(deliberate demonstrations in the tf.function guide), and a side effect that runs once per
trace changes what the program does rather than how long it takes (docs/lint.md, "Measured
precision and recall").
"""
    valid = (
        # A local list built in an unrolled loop, then stacked: no outer state.
        Valid("""
            import tensorflow as tf
            @tf.function
            def f(x):
                parts = []
                for k in range(3):
                    parts.append(x * k)
                return tf.stack(parts)
        """),
        # State kept in a tf.Variable.
        Valid("""
            import tensorflow as tf
            class Counter(tf.Module):
                def __init__(self):
                    self.count = tf.Variable(0)
                @tf.function
                def __call__(self, x):
                    self.count.assign_add(1)
                    return x
        """),
        # Mutating outer state in an eager function is ordinary Python.
        Valid("""
            import tensorflow as tf
            history = []
            def step(x):
                history.append(tf.reduce_sum(x))
        """),
        # The created-once pattern: the attribute starts as None.
        Valid("""
            import tensorflow as tf
            class Lazy(tf.Module):
                def __init__(self):
                    self.v = None
                @tf.function
                def __call__(self, x):
                    if self.v is None:
                        self.v = tf.Variable(x)
                    return self.v
        """),
        # Run eagerly on every call through tf.py_function.
        Valid("""
            import tensorflow as tf
            seen = []
            @tf.function
            def f(x):
                def record(v):
                    seen.append(v.numpy())
                    return v
                return tf.py_function(record, [x], tf.float32)
        """),
        # A local name, not a global: only this function's own variable.
        Valid("""
            import tensorflow as tf
            total = 0
            @tf.function
            def f(x):
                total = tf.reduce_sum(x)
                total += 1
                return total
        """),
        # A deliberate trace counter (TF's guide counts traces this way).
        Valid("""
            import tensorflow as tf
            class Model(tf.Module):
                def __init__(self):
                    self.trace_count = 0
                @tf.function
                def __call__(self, x):
                    self.trace_count += 1
                    return x * 2
            TRACES = []
            @tf.function
            def f(x):
                TRACES.append(x.shape)
                return x + 1
        """),
        # A once-only guard: the variable is made on the first trace and kept.
        Valid("""
            import tensorflow as tf
            _cache = {}
            @tf.function
            def f(x):
                if "w" not in _cache:
                    _cache["w"] = tf.Variable(tf.ones([3]))
                return x * _cache["w"]
        """),
        # A list filled once, on the first trace (`if not state:`): created-once state.
        Valid("""
            import tensorflow as tf
            slots = []
            @tf.function
            def scale(x):
                if not slots:
                    slots.append(tf.Variable(2.0 * x))
                return slots[0] * x
        """),
        # Python state kept only when the step runs eagerly, as its guard says.
        Valid("""
            import tensorflow as tf
            class Net(tf.keras.Model):
                def __init__(self, cfg):
                    super().__init__()
                    self.cfg = cfg
                    self.seen = []
                def test_step(self, data):
                    x, y = data
                    out = self(x)
                    if self.cfg.run_eagerly:
                        self.seen.append(out.numpy())
                    return {"n": tf.size(out)}
        """),
        # Under tf.init_scope(): lifted out of the graph, eager on purpose.
        Valid("""
            import tensorflow as tf
            built = []
            class Table(tf.Module):
                @tf.function
                def __call__(self, x):
                    with tf.init_scope():
                        built.append(tf.size(x))
                    return x
        """),
        # A Keras train_step the module runs eagerly (run_eagerly=True).
        Valid("""
            import tensorflow as tf
            class Model(tf.keras.Model):
                def __init__(self):
                    super().__init__()
                    self.steps = 0
                def train_step(self, data):
                    self.steps += 1
                    return {}
            model = Model()
            model.compile(optimizer="sgd", run_eagerly=True)
        """),
    )
    invalid = (
        Invalid("""
            import tensorflow as tf
            losses = []
            @tf.function
            def train_step(x):
                loss = tf.reduce_mean(x)
                losses.append(loss)
                return loss
        """, count=1, lines=(6,)),
        Invalid("""
            import tensorflow as tf
            calls = 0
            @tf.function
            def f(x):
                global calls
                calls += 1
                return x * 2
        """, count=1, lines=(6,)),
        # A Python counter on self, in a Keras train_step.
        Invalid("""
            import tensorflow as tf
            class Model(tf.keras.Model):
                def __init__(self):
                    super().__init__()
                    self.steps = 0
                def train_step(self, data):
                    self.steps += 1
                    return {}
        """, count=1, lines=(7,)),
        # Module alias, function wrapped elsewhere; a tensor stored in an outer dict.
        Invalid("""
            import tensorflow as tensorflow_alias
            log = {}
            def g(x):
                log['last'] = x * 2
                return x
            fast_g = tensorflow_alias.function(g)
        """, count=1, lines=(4,)),
        Invalid("""
            import tensorflow as tensorflow_alias
            def make():
                n = 0
                @tensorflow_alias.function
                def f(x):
                    nonlocal n
                    n = n + 1
                    return x
                return f
        """, count=1, lines=(7,)),
    )

    def applies_to(self, ctx: Context) -> bool:
        return ctx.may_have_tf_function  # every finding is in a tf.function or Keras traced method

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        t = type(node)
        if t is ast.Call:
            func = node.func
            if type(func) is not ast.Attribute or func.attr not in MUTATORS:
                return  # cheap test first
            targets = [func.value]
        elif t is ast.Assign:
            targets = node.targets
        else:
            targets = [node.target]
        if not ctx.imports_tf:
            return
        # Cheap syntactic filter before asking whether the code is traced (which walks up).
        # A bare name counts only when declared global/nonlocal: none in the module, none here.
        names_ok = bool(ctx.nodes_of(ast.Global)) or bool(ctx.nodes_of(ast.Nonlocal))
        candidates = [tg for tg in targets if t is ast.Call or type(tg) is ast.Subscript
                      or _self_attr(tg) is not None or (names_ok and type(tg) is ast.Name)]
        if not candidates:
            return
        enclosing = ctx.enclosing_function(node)
        if enclosing is None:
            return  # module level: nothing is traced here
        fn = traced_fn_of(ctx, node)
        if fn is None or eager_by_design(ctx, node) or once_guarded(ctx, node) \
                or eager_guarded(ctx, node):
            return
        for target in candidates:
            tt = type(target)
            if _counts_traces(target):
                continue  # a deliberate trace counter: once per trace is what it measures
            if tt is ast.Subscript or t is ast.Call:
                # `outer[k] = v`, `outer.append(v)`: the container must come from outside.
                recv = target.value if tt is ast.Subscript else target
                if tt is ast.Subscript and not _accumulates_or_leaks(ctx, node, recv):
                    continue
                if self._outer_container(ctx, recv, fn):
                    yield self.finding(ctx, node)
                    return
            elif tt is ast.Name:
                if target.id in _declared(ctx, enclosing) \
                        and _accumulates_or_leaks(ctx, node, target):
                    yield self.finding(ctx, node)
                    return
            else:
                attr = _self_attr(target)
                cls = ctx.enclosing_class(node)
                if attr is not None and cls is not None and _python_attrs(ctx, cls).get(attr) \
                        and _accumulates_or_leaks(ctx, node, target):
                    yield self.finding(ctx, node)
                    return

    @staticmethod
    def _outer_container(ctx: Context, recv: ast.AST, fn: ast.AST) -> bool:
        """``recv`` is a Python container that lives outside the traced function ``fn``."""
        attr = _self_attr(recv)
        if attr is not None:
            cls = ctx.enclosing_class(recv)
            return cls is not None and bool(_python_attrs(ctx, cls).get(attr)) \
                and _is_container_attr(ctx, cls, attr)
        if type(recv) is not ast.Name:
            return False
        b = ctx.binding(recv)
        if b is None or b.kind != "assign" or not _is_container(ctx, b.value):
            return False
        scope = ctx.scope_of(b.value)
        return scope is not fn and fn not in list(ctx.ancestors(scope))


def _accumulates_or_leaks(ctx: Context, stmt: ast.AST, target: ast.AST) -> bool:
    """Whether a store to outer state matters: ``+=``, a new value computed from the old one
    (``n = n + 1``), or a tensor kept beyond the trace. Setting a flag to a constant or to a
    Python argument (``self._training = training``) gives the same result on every trace."""
    if type(stmt) is ast.AugAssign:
        return True
    value = getattr(stmt, "value", None)
    if value is None:
        return False
    key = ast.unparse(target)  # spelling, not ast.dump: Store and Load contexts differ
    if any(ast.unparse(n) == key for n in ast.walk(value) if type(n) is type(target)):
        return True
    return ctx.is_tensor_like(value)


def _is_container_attr(ctx: Context, cls: ast.ClassDef, attr: str) -> bool:
    for node in ast.walk(cls):
        if type(node) is ast.Assign and any(_self_attr(t) == attr for t in node.targets) \
                and _is_container(ctx, node.value):
            return True
    return False
