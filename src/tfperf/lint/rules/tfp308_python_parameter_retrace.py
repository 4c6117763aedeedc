"""TFP308: a function hands its own Python-number parameter to a tf.function."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding
from tfperf.lint.analysis.callers import bound_arguments, calls_of
from tfperf.lint.analysis.tf_functions import (
    receiving_param,
    tf_function_called,
    tf_function_callee_names,
)
from tfperf.lint.analysis.traced import traced
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import FUNCTION_NODES, Context


def _default_of(fn: ast.AST, arg: ast.arg) -> ast.expr | None:
    args = fn.args
    positional = [*args.posonlyargs, *args.args]
    if arg in positional:
        i = positional.index(arg) - (len(positional) - len(args.defaults))
        return args.defaults[i] if i >= 0 else None
    if arg in args.kwonlyargs:
        return args.kw_defaults[args.kwonlyargs.index(arg)]
    return None


def _value_passed(call: ast.Call, fn: ast.AST, arg: ast.arg) -> ast.expr | None:
    """What ``call`` gives ``arg`` of ``fn``: the argument, the default when it gives none,
    ``None`` when unknown (``*args``, ``**kwargs``)."""
    bound = bound_arguments(fn, call)
    return None if bound is None else bound.get(arg.arg)


def _one_value_from_callers(ctx: Context, fn: ast.AST, arg: ast.arg) -> bool:
    """Every call of ``fn`` in this module gives ``arg`` the same literal (or leaves the
    default): a script that passes one value traces once, whatever the parameter allows."""
    calls = calls_of(ctx, fn)
    if not calls:
        return False  # an API: its callers are elsewhere
    seen = set()
    for call in calls:
        v = _value_passed(call, fn, arg)
        sign = ""
        if isinstance(v, ast.UnaryOp) and type(v.op) is ast.USub:
            sign, v = "-", v.operand
        if not isinstance(v, ast.Constant):
            return False
        seen.add(sign + repr(v.value))
    return len(seen) == 1


def _made_per_call(ctx: Context, creation: ast.AST, fn: ast.AST, call: ast.AST) -> bool:
    """The ``tf.function`` that ``call`` (in ``fn``) runs is made anew by each call of ``fn``:
    made in ``fn`` and called where it is made, or kept in a local name (``step =
    tf.function(g)``, a nested decorated ``def``). Stored on ``self``, in a container or in a
    global (``if self._step is None: self._step = tf.function(g)``), it outlives the call:
    the next call finds it again and traces each new value."""
    above = list(ctx.ancestors(creation))
    if not any(a is fn for a in above):
        return False
    if any(a is call for a in above):
        return True  # `tf.function(g)(x, rate)`
    node, parent = creation, ctx.parent(creation)
    while type(parent) is ast.Call and parent.func is node:  # tf.function(**opts)(g)
        node, parent = parent, ctx.parent(parent)
    if type(parent) in (ast.FunctionDef, ast.AsyncFunctionDef):
        targets: list[ast.AST] = [ast.Name(id=parent.name)]
    elif type(parent) is ast.Assign:
        targets = list(parent.targets)
    elif type(parent) is ast.AnnAssign:
        targets = [parent.target]
    else:
        return False
    shared = {n for s in ast.walk(fn) if type(s) in (ast.Global, ast.Nonlocal)
              for n in s.names}
    return all(type(t) is ast.Name and t.id not in shared for t in targets)


def _python_number(fn: ast.AST, arg: ast.arg) -> bool:
    """The parameter takes a Python number: its default is an int/float literal (not a
    bool: two values at most), or it is annotated ``int``/``float``."""
    ann = arg.annotation
    if type(ann) is ast.Name and ann.id in ("int", "float"):
        return True
    default = _default_of(fn, arg)
    if type(default) is ast.UnaryOp:
        default = default.operand
    return type(default) is ast.Constant and type(default.value) in (int, float)


def _used_as_value(fn: ast.AST, name: str) -> bool:
    """Inside ``fn``, the parameter ``name`` is computed with (arithmetic, a comparison, a
    call's positional argument such as ``tf.range(name)``): it would work as a tensor. A
    parameter only ever given as a keyword option (``parallel_iterations=name``) must stay a
    Python value."""
    for n in ast.walk(fn):
        t = type(n)
        if t is ast.BinOp:
            sides: tuple[ast.AST, ...] = (n.left, n.right)
        elif t is ast.Compare:
            sides = (n.left, *n.comparators)
        elif t is ast.Call:
            sides = tuple(n.args)
        else:
            continue
        if any(type(x) is ast.Name and x.id == name for x in sides):
            return True
    return False


class PythonParameterRetrace(Rule):
    code = "TFP308"
    name = "python-parameter-retrace"
    message = ("a Python number parameter is passed on to a tf.function: each value a caller "
               "passes traces a new graph")
    hint = ("pass tf.constant(value) (or give the tf.function an input_signature) so that "
            "every value shares one trace")
    claims = ("S13",)
    group = "preview"
    node_types = (ast.Call,)
    requires_imports = frozenset({"tensorflow"})
    docs = """\
## What it does
Finds a function, itself run eagerly, that hands one of its own parameters unchanged to a
`tf.function` (without `input_signature`), where the parameter takes a Python number: an
`int`/`float` default (`iterations=1`, `lr=0.01`) or annotation. The value is whatever each
caller passes, so the number of traces is the number of distinct values callers use.

## Why is this bad?
`tf.function` keys its traces on the values of Python arguments (claim S13; TF's guide:
"Python arguments for hyperparameters, tensors for data"). A count of iterations, a step or
a learning rate forwarded as a Python number retraces for every new value: in a library
(`learner.run(iterations=n)`) every caller's loop with a new `n` pays a full trace and
graph optimisation.

## Example
```python
@tf.function
def _train(iterations, iterator):
    for _ in tf.range(iterations):
        step(next(iterator))

def run(iterations=1, iterator=None):
    return _train(iterations, iterator)
```

## Use instead
```python
def run(iterations=1, iterator=None):
    return _train(tf.constant(iterations), iterator)
```

## Fix safety
No automatic fix: inside the `tf.function` the value becomes a tensor, so Python code that
needs a number there (`range(n)`, `if n > 3:`, list indexing) must change with it.

## Known limitations
Only parameters passed through unchanged are followed; booleans (two traces at most) and
parameters without a numeric default or annotation (strings, objects) are not reported, nor
functions that are themselves traced (where the value is fixed per outer trace), nor values
the `tf.function` only ever hands on as a keyword option (`parallel_iterations=p`), which must
stay Python numbers, nor parameters to which every call in the module gives the same literal
(a script with one setting traces once), nor calls of a `tf.function` that the forwarding
function itself builds and keeps in a local name (`fn = tf.function(step)` in its body) or
calls where it builds it: a new `tf.function` traces on every call whatever the value, so a
tensor would save no trace. One it stores on `self` or in a global outlives the call and is
reported.
"""
    valid = (
        # Converted at the boundary.
        Valid("""
            import tensorflow as tf
            @tf.function
            def _train(iterations):
                return tf.range(iterations)
            def run(iterations=1):
                return _train(tf.constant(iterations))
        """),
        # A boolean option: two traces at most.
        Valid("""
            import tensorflow as tf
            @tf.function
            def forward(x, training):
                return x * 2.0 if training else x
            def predict(x, training=False):
                return forward(x, training)
        """),
        # The tf.function has an input_signature: TF converts the number.
        Valid("""
            import tensorflow as tf
            @tf.function(input_signature=[tf.TensorSpec([], tf.int32)])
            def _train(iterations):
                return tf.range(iterations)
            def run(iterations=1):
                return _train(iterations)
        """),
        # The caller is traced itself: the value is fixed per outer trace.
        Valid("""
            import tensorflow as tf
            @tf.function
            def inner(x, k):
                return x * k
            @tf.function
            def outer(x, k=2):
                return inner(x, k)
        """),
        # A structural option, only ever given as a keyword: it must stay a Python number.
        Valid("""
            import tensorflow as tf
            @tf.function
            def _loop(n, parallel_iterations):
                for _ in tf.range(n):
                    tf.autograph.experimental.set_loop_options(
                        parallel_iterations=parallel_iterations)
                return n
            def run(n, parallel_iterations=10):
                return _loop(tf.constant(n), parallel_iterations)
        """),
        # Every call in the script passes the same value: one trace.
        Valid("""
            import tensorflow as tf
            @tf.function
            def sample(x, steps):
                for _ in range(steps):
                    x = x + tf.random.normal(tf.shape(x))
                return x
            def anneal(x, levels, steps=100):
                for level in levels:
                    x = sample(x * level, steps)
                return x
            out = anneal(tf.zeros([8, 2]), [1.0, 0.5, 0.1], steps=100)
        """),
        # The tf.function is built inside the forwarding function: every call traces afresh,
        # and the forwarded number is one value for all the steps of that call.
        Valid("""
            import tensorflow as tf
            def refine_step(x, rate):
                return x - rate * tf.sign(x)
            def refine(x, n_steps, rate=0.5):
                step = tf.function(refine_step)
                for _ in range(n_steps):
                    x = step(x, rate)
                return x
            a = refine(tf.ones([4]), 10, rate=0.1)
            b = refine(tf.ones([4]), 10, rate=0.2)
        """),
        # Made and called in one expression, with options: a new tf.function per call.
        Valid("""
            import tensorflow as tf
            def refine_step(x, rate):
                return x - rate * tf.sign(x)
            def refine_once(x, rate=0.5):
                return tf.function(refine_step, jit_compile=True)(x, rate)
            a = refine_once(tf.ones([4]), rate=0.1)
            b = refine_once(tf.ones([4]), rate=0.2)
        """),
        # A plain Python helper: nothing is traced.
        Valid("""
            import tensorflow as tf
            def inner(x, k):
                return x * k
            def outer(x, k=2):
                return inner(x, k)
        """),
    )
    invalid = (
        # The learner's shape: iterations forwarded to the compiled loop, through a project's
        # wrapper of tf.function (TF-Agents' common.function).
        Invalid("""
            import tensorflow as tf
            from tf_agents.utils import common
            class Learner:
                def run(self, iterations=1, iterator=None):
                    return self._train(iterations, iterator)
                @common.function(autograph=True)
                def _train(self, iterations, iterator):
                    for _ in tf.range(iterations - 1):
                        next(iterator)
        """, count=1, lines=(5,)),
        # An annotated float, by keyword, to a wrapped function.
        Invalid("""
            import tensorflow as tf
            def g(x, scale):
                return x * scale
            fast = tf.function(g)
            def apply(x, scale: float):
                return fast(x, scale=scale)
        """, count=1, lines=(6,)),
        # Built inside the forwarding function but kept on self, or in a global, on the first
        # call: every later call runs the same tf.function, which traces each new value.
        Invalid("""
            import tensorflow as tf
            def step_fn(x, rate):
                return x - rate * tf.sign(x)
            class Refiner:
                def __init__(self):
                    self._step = None
                def run(self, x, rate=0.5):
                    if self._step is None:
                        self._step = tf.function(step_fn)
                    return self._step(x, rate)
            _cached = None
            def run(x, rate=0.5):
                global _cached
                if _cached is None:
                    _cached = tf.function(step_fn)
                return _cached(x, rate)
        """, count=2, lines=(10, 16)),
        # A negative default and a keyword-only parameter.
        Invalid("""
            import tensorflow as tf
            @tf.function
            def shift(x, by):
                return x + by
            def move(x, *, by=-1):
                return shift(x, by)
        """, count=1, lines=(6,)),
    )

    def applies_to(self, ctx: Context) -> bool:
        return ctx.spells_tf_function

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        func = node.func
        name = func.id if type(func) is ast.Name else getattr(func, "attr", None)
        if name is None or name not in tf_function_callee_names(ctx):
            return
        args = [*node.args, *(k.value for k in node.keywords)]
        names = [a for a in args if type(a) is ast.Name]
        if not names:
            return
        fn = ctx.enclosing_function(node)
        if fn is None or type(fn) not in FUNCTION_NODES or type(fn) is ast.Lambda:
            return
        forwarded = []
        for a in names:
            b = ctx.binding(a)
            if b is not None and b.kind == "param" and type(b.value) is ast.arg \
                    and ctx.scope_of(b.value) is fn and _python_number(fn, b.value) \
                    and not _one_value_from_callers(ctx, fn, b.value):
                forwarded.append(a)
        if not forwarded or traced(ctx, node):
            return
        target = tf_function_called(ctx, func)
        if target is None or "input_signature" in target.options:
            return
        if _made_per_call(ctx, target.creation, fn, node):
            return  # a tf.function built anew on each call traces anyway, whatever the value
        if target.fn is not None and not any(
                _used_as_value(target.fn, p) for p in
                (receiving_param(node, target.fn, a, type(func) is ast.Attribute)  # type: ignore[arg-type]
                 for a in forwarded) if p is not None):
            return  # only ever a keyword option there (parallel_iterations=p): must be static
        yield self.finding(ctx, node)
