"""TFP301: a tf.function called with a Python number that changes every iteration."""

from __future__ import annotations

import ast
import os
import textwrap
from collections.abc import Iterator
from typing import TYPE_CHECKING

from tfperf.core.findings import Finding
from tfperf.lint.analysis.tf_functions import (
    receiving_param,
    tf_function_called,
    tf_function_callee_names,
)
from tfperf.lint.analysis.traced import traced
from tfperf.lint.analysis.varying import HANDFUL, literal_count, python_int, varying_scalar
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

if TYPE_CHECKING:
    from tfperf.analysis.project import Project, Site
    from tfperf.analysis.summary import FunctionFact

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_KWARGS = "**"  # a forwarder's ``**kwargs`` handed on whole


def _forwarded_params(ctx: Context, fn: ast.FunctionDef | ast.AsyncFunctionDef,
                      call: ast.Call) -> list[str]:
    """The parameters of ``fn`` that ``call`` (in ``fn``) passes on as they are: a
    parameter named as an argument, or ``**kwargs`` handed on whole (``_KWARGS``)."""
    args = fn.args
    own = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    out = []
    for value in (*call.args, *(k.value for k in call.keywords if k.arg is not None)):
        if type(value) is ast.Name and value.id in own:
            b = ctx.binding(value)
            if b is not None and b.kind == "param" and ctx.scope_of(b.value) is fn:
                out.append(value.id)
    kwarg = args.kwarg.arg if args.kwarg is not None else None
    if kwarg and any(k.arg is None and type(k.value) is ast.Name and k.value.id == kwarg
                     for k in call.keywords):
        out.append(_KWARGS)
    return out


def _param_of_slot(fact: FunctionFact, slot: str) -> str | None:
    """The parameter of ``fact``'s function that a call's argument in ``slot`` (a position
    or a keyword) lands in; ``_KWARGS`` for a keyword it does not name."""
    if not slot.isdigit():
        return slot if slot in fact.params else _KWARGS
    params = fact.params
    if fact.method and params[:1] in (["self"], ["cls"]):
        params = params[1:]
    i = int(slot)
    return params[i] if i < len(params) else None


def _varying_into(project: Project, path: str, fact: dict) -> list[tuple[Site, str]]:
    """Calls in eager loops that pass a per-iteration Python number into a parameter the
    function of ``fact`` hands on to its tf.function, each with the value's text."""
    fn = project.function(path, fact["fn"])
    if fn is None:
        return []
    forwarded = set(fact["params"])
    out = []
    for site in project.calls_to(path, fact["fn"]):
        c = site.call
        if not c.loop or c.traced or c.guarded:
            continue
        texts = [a.text for a in c.args if a.varies and _param_of_slot(fn, a.slot) in forwarded]
        if texts:
            out.append((site, ", ".join(texts)))
    return out


def _scalar_in_loop(arg: str) -> str:
    """The reference example: a tf.function called with the loop's counter as ``arg`` (the
    INVALID example passes ``i``, its fixed form ``tf.constant(i)``)."""
    return textwrap.dedent(f"""\
        import tensorflow as tf
        @tf.function
        def step(x, i):
            return x * tf.cast(i, tf.float32)
        x = tf.ones([3])
        for i in range(1000):
            step(x, {arg})
    """)


# TF calls whose first argument (or ``value=``/``x=``) is turned into a tensor as it is:
# a Python number used only there is data, and a tensor would serve the same.
_CONVERSIONS = frozenset(f"tensorflow.{p}{n}" for p in ("", "compat.v1.") for n in (
    "constant", "convert_to_tensor", "cast", "identity", "saturate_cast"))


def _handful_loop_number(ctx: Context, arg: ast.AST, at: ast.AST) -> bool:
    """``arg`` is the target of a loop around ``at`` over a handful of literal numbers
    (``range(3)``, ``[0.1, 0.5]``): the values ``varying_scalar`` leaves alone on purpose."""
    if type(arg) is not ast.Name:
        return False
    b = ctx.binding(arg)
    if b is None or b.kind != "for" or b.value not in ctx.enclosing_loops(at):
        return False
    loop = b.value
    target, it = loop.target, loop.iter
    if type(target) is not ast.Name or target.id != arg.id:
        return False
    if type(it) in (ast.List, ast.Tuple):
        if not all(type(e) is ast.Constant and type(e.value) in (int, float) for e in it.elts):
            return False
    elif not ctx.is_builtin_call(it, "range"):
        return False
    count = literal_count(ctx, it)
    return count is not None and 2 <= count <= HANDFUL


def _only_tensor_data(ctx: Context, fn: ast.AST, name: str) -> bool:
    """Inside the traced ``fn``, the parameter ``name`` is read, and every read turns it
    into a tensor straight away (``tf.constant(i)``, ``tf.cast(i, x.dtype)``) or computes
    with a tensor (``x * i``): it decides nothing in the graph's structure (no ``range(i)``,
    ``if i``, ``xs[i]``), so each value's trace is the same graph over a different constant."""
    reads = [n for n in ast.walk(fn) if type(n) is ast.Name and n.id == name
             and type(n.ctx) is ast.Load]
    if not reads:
        return False
    for n in reads:
        use = ctx.parent(n)
        if type(use) is ast.keyword:
            call = ctx.parent(use)
            if use.arg not in ("value", "x") or call is None \
                    or (ctx.call_qualname(call) or "") not in _CONVERSIONS:
                return False
        elif type(use) is ast.Call:
            if not use.args or use.args[0] is not n \
                    or ctx.call_qualname(use) not in _CONVERSIONS:
                return False
        elif type(use) is ast.BinOp:
            other = use.right if use.left is n else use.left
            if not ctx.is_tensor_like(other):
                return False
        else:
            return False
    return True


class PythonScalarRetrace(Rule):
    code = "TFP301"
    name = "python-scalar-retrace"
    message = "tf.function called with a Python number that changes per iteration: one trace each"
    hint = ("pass a tensor (tf.constant(i)) or give the tf.function an input_signature; "
            "keep Python arguments for values that rarely change")
    claims = ("S13",)
    group = "perf"  # few findings, each true, and a real fix caught (F032): docs/lint.md
    node_types = (ast.Call,)
    requires_imports = frozenset({"tensorflow"})  # every finding needs a TF API
    fixable = True
    docs = """\
## What it does
Finds calls of a `tf.function` (decorated, wrapped as `f = tf.function(g)`, or a decorated
method called as `self.step(...)`) inside a loop, with an argument that is a Python number
taking a new value each iteration: a `range()` loop variable, the index of `enumerate()`, an
`n += 1` counter, a number the loop carries (`eps = max(0.05, eps * 0.995)`, `lr *= 0.99`,
with a numeric start before the loop), or arithmetic on one of those (`i + 1`,
`float(step)`), also through a name the loop assigns them to. Also across
functions and modules of the project: a `tf.function` of another module called so, and a
value passed per iteration to an eager function that hands that parameter on, as it is, to
a `tf.function` (`def learn(self, x, beta): return self.update(x, beta=beta)`, or
`**kwargs` handed on whole), reported at the call that passes the value.

## Why is this bad?
`tf.function` treats Python values as part of the trace's key: each new value builds and
optimises a new graph (claim S13: "Python scalar arguments make it retrace per value; a
retrace storm can make it slower than eager"). TF's guide to `tf.function` says the same:
use Python arguments for hyperparameters, tensors for data. `reduce_retracing=True` does not
help here; it generalises tensor shapes, not Python values.

## Example
```python
@tf.function
def step(x, i):
    return x * tf.cast(i, tf.float32)

for i in range(1000):
    y = step(x, i)          # 1000 traces
```

## Use instead
```python
for i in range(1000):
    y = step(x, tf.constant(i))   # one trace
```
or `@tf.function(input_signature=[tf.TensorSpec([None], tf.float32), tf.TensorSpec([], tf.int32)])`.

## Fix safety
The fix wraps the argument in `tf.constant(...)`. It is **unsafe**: inside the function the
value becomes a tensor, so Python code that needs a Python number (`range(i)`, `if i > 3:`
deciding the graph's structure, a list index) behaves differently (AutoGraph turns some of it
into graph control flow, some of it fails), and a Python `int` becomes an `int32` tensor:
arithmetic that mixed it with float tensors (`x + i`) then needs `tf.cast(i, x.dtype)`.
The fix is offered only where the number is surely a Python `int` (a `range` index, a counter,
integer arithmetic of them). A Python float would become a `float32` tensor whatever the dtype
of the tensors it meets (with float64 inputs, `x * lr` then fails: `Mul` gets float32 and
float64), and which dtype it should take is not known here: for floats (`lr *= 0.99`,
`epoch / 100`) the finding gives the hint and no fix; write `tf.constant(lr, x.dtype)` by hand.

## Known limitations
On by default since it caught a real fix of the recall set (F032, a tensorboard demo looping
`range(3)` into a tf.function that only turns the number into a tensor) with nothing judged
false against it: on the 153 repositories judged so far it fired once (true); 5 judged
findings are not yet in (docs/lint.md, "Rules that rarely fire").

Not reported: functions with an `input_signature` (TF converts the argument), loops over a
handful of literal values (`for training in (True, False)`, `range(3)`: a few traces on
purpose) unless the function only computes with the value (every read of the parameter is
`tf.constant(i)`, `tf.convert_to_tensor(i)`, `tf.cast(i, ...)` or arithmetic with a tensor:
then each trace is the same graph over another constant, true but minor), and calls of
plain Python functions.
"""
    valid = (
        # A tensor argument: one trace.
        Valid("""
            import tensorflow as tf
            @tf.function
            def step(x, i):
                return x * tf.cast(i, tf.float32)
            for i in range(100):
                step(tf.ones([3]), tf.constant(i))
        """),
        # input_signature converts Python numbers to tensors.
        Valid("""
            import tensorflow as tf
            @tf.function(input_signature=[tf.TensorSpec([], tf.int32)])
            def step(i):
                return i * 2
            for i in range(100):
                step(i)
        """),
        # A plain Python function: no tracing at all.
        Valid("""
            import tensorflow as tf
            def step(x, i):
                return x * i
            for i in range(100):
                step(tf.ones([3]), i)
        """),
        # A handful of literal values: a few traces, on purpose.
        Valid("""
            import tensorflow as tf
            @tf.function
            def run(x, depth):
                for _ in range(depth):
                    x = x * 2.0
                return x
            for depth in range(3):
                run(tf.ones([3]), depth)
        """),
        # A handful of learning rates chosen on purpose, each compared to a tensor: the
        # comparison decides the graph's structure, a few traces are the point.
        Valid("""
            import tensorflow as tf
            @tf.function
            def scaled(x, rate):
                if rate > 0.05:
                    return x * 2.0
                return x
            for rate in [0.01, 0.1, 0.5]:
                scaled(tf.ones([3]), rate)
        """),
        # A handful of loop values used only as data, but the function has a signature.
        Valid("""
            import tensorflow as tf
            @tf.function(input_signature=[tf.TensorSpec([], tf.int32)])
            def double(i):
                return tf.constant(2) * i
            for i in range(3):
                double(i)
        """),
        # The loop variable is not passed; only data changes.
        Valid("""
            import tensorflow as tf
            @tf.function
            def train_step(x):
                return x + 1
            def main(ds, epochs):
                for epoch in range(epochs):
                    for x in ds:
                        train_step(x)
        """),
        # The wrapped Python function is called, not the tf.function built from it.
        Valid("""
            import tensorflow as tf
            def g(x, i):
                return x * i
            fast = tf.function(g)
            for i in range(100):
                g(tf.ones([3]), i)
        """),
        # A list of layers: the index selects, but the callee is not a tf.function.
        Valid("""
            import tensorflow as tf
            def f(x, layers):
                for i in range(len(layers)):
                    x = layers[i](x)
                return x
        """),
    )
    invalid = (
        Invalid(_scalar_in_loop("i"), count=1, lines=(7,),
                fixed=_scalar_in_loop("tf.constant(i)")),
        # Wrapped, keyword argument, arithmetic on the loop variable.
        Invalid("""
            import tensorflow as tf
            def g(x, scale):
                return x * scale
            fast = tf.function(g)
            def run(x, n):
                out = []
                for k in range(n):
                    out.append(fast(x, scale=k * 0.5))
                return out
        """, count=1, lines=(8,)),
        # A counter in a while loop, through a method of the same class.
        Invalid("""
            import tensorflow as tf
            class Trainer:
                @tf.function
                def train_step(self, x, step):
                    return x * 0.99 ** tf.cast(step, tf.float32)
                def fit(self, ds):
                    step = 0
                    for x in ds:
                        self.train_step(x, step)
                        step += 1
        """, count=1, lines=(9,), fixed="""
            import tensorflow as tf
            class Trainer:
                @tf.function
                def train_step(self, x, step):
                    return x * 0.99 ** tf.cast(step, tf.float32)
                def fit(self, ds):
                    step = 0
                    for x in ds:
                        self.train_step(x, tf.constant(step))
                        step += 1
        """),
        # Aliased import, enumerate's index, tf.function with options.
        Invalid("""
            import tensorflow as tensorflow_alias
            @tensorflow_alias.function(jit_compile=False)
            def f(x, i):
                return x + tensorflow_alias.cast(i, x.dtype)
            xs = tensorflow_alias.ones([8, 2])
            for i, x in enumerate(tensorflow_alias.unstack(xs)):
                f(x, i)
        """, count=1, lines=(7,), fixed="""
            import tensorflow as tensorflow_alias
            @tensorflow_alias.function(jit_compile=False)
            def f(x, i):
                return x + tensorflow_alias.cast(i, x.dtype)
            xs = tensorflow_alias.ones([8, 2])
            for i, x in enumerate(tensorflow_alias.unstack(xs)):
                f(x, tensorflow_alias.constant(i))
        """),
        # Only three values, but the function only turns each into a constant: three
        # traces of the same graph where one would do.
        Invalid("""
            import tensorflow as tf
            @tf.function
            def report(epoch, loss):
                tf.print(tf.cast(epoch, tf.int64), loss)
            for epoch in range(3):
                report(epoch, tf.constant(0.5))
        """, count=1, lines=(6,), fixed="""
            import tensorflow as tf
            @tf.function
            def report(epoch, loss):
                tf.print(tf.cast(epoch, tf.int64), loss)
            for epoch in range(3):
                report(tf.constant(epoch), tf.constant(0.5))
        """),
        # `from tensorflow import function`: no module alias to write a fix with.
        Invalid("""
            from tensorflow import function
            @function
            def f(x, i):
                return x + i
            results = [f(1.0, float(i)) for i in range(50)]
        """, count=1, lines=(5,)),
    )

    # Issue 25's spellings: a value through a name, the tf.function in another module of
    # the project (found by the project's check), a notebook; each with its VALID twin.
    valid = (  # type: ignore[assignment]
        *valid,
        Valid("""
            import tensorflow as tf
            @tf.function
            def step(x, warmup):
                return x * warmup
            for epoch in range(100):
                warmup = tf.constant(min(1.0, (epoch + 1) / 20))
                step(tf.ones([3]), warmup)
        """, spelling="name"),
        Valid("""
            from train_lib import step
            import tensorflow as tf
            for epoch in range(100):
                step(tf.ones([3]), tf.constant(epoch / 100))
        """, files={"train_lib.py": """
            import tensorflow as tf
            @tf.function
            def step(x, scale):
                return x * scale
        """}, spelling="module"),
        Valid("""
            import tensorflow as tf
            @tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
            def step(scale):
                return scale * 2.0
            # %%
            for i in range(50):
                step(i * 0.5)
        """, notebook=True, spelling="notebook"),
        Valid("""
            import tensorflow as tf
            @tf.function
            def step(x, i):
                return x * tf.cast(i, tf.float32)
            i = tf.constant(0)
            while i < 100:
                step(tf.ones([3]), i)
                i += 1
        """, spelling="loop: while over a tensor"),
    )
    invalid = (  # type: ignore[assignment]
        *invalid,
        Invalid("""
            import tensorflow as tf
            @tf.function
            def step(x, warmup):
                return x * warmup
            for epoch in range(100):
                warmup = min(1.0, (epoch + 1) / 20)
                step(tf.ones([3]), warmup)
        """, count=1, lines=(7,), spelling="name"),
        Invalid("""
            from train_lib import step
            import tensorflow as tf
            for epoch in range(100):
                step(tf.ones([3]), epoch / 100)
        """, files={"train_lib.py": """
            import tensorflow as tf
            @tf.function
            def step(x, scale):
                return x * scale
        """}, count=1, lines=(4,), spelling="module"),
        Invalid("""
            import tensorflow as tf
            @tf.function
            def step(scale):
                return scale * 2.0
            # %%
            for i in range(50):
                step(i * 0.5)
        """, count=1, notebook=True, spelling="notebook"),
        Invalid("""
            import tensorflow as tf
            @tf.function
            def step(x, i):
                return x * tf.cast(i, tf.float32)
            i = 0
            while i < 100:
                step(tf.ones([3]), i)
                i += 1
        """, count=1, lines=(7,), fixed="""
            import tensorflow as tf
            @tf.function
            def step(x, i):
                return x * tf.cast(i, tf.float32)
            i = 0
            while i < 100:
                step(tf.ones([3]), tf.constant(i))
                i += 1
        """, spelling="loop: while counter"),
        Invalid("""
            import tensorflow as tf
            @tf.function
            def scaled(x, s):
                return x * s
            outs = [scaled(tf.ones([3]), s * 0.1) for s in range(40)]
        """, count=1, lines=(5,), spelling="loop: comprehension"),
    )

    # Issue 25, fourth pass: the number reaches the tf.function through an eager function
    # that hands its parameter on (by name, or in **kwargs), in this module or another.
    valid = (  # type: ignore[assignment]
        *valid,
        Valid("""
            import tensorflow as tf
            @tf.function
            def step(x, lr):
                return x * lr
            def train(x, lr):
                return step(x, lr)
            for epoch in range(100):
                lr = tf.constant(0.1 * 0.95 ** epoch)
                train(tf.ones([3]), lr)
        """, spelling="name: through an eager forwarder"),
        Valid("""
            import tensorflow as tf
            @tf.function
            def step(x, lr):
                return x * lr
            def train(x, lr):
                y = step(x, lr)
                return y
            for epoch in range(100):
                train(tf.ones([3]), 0.01)
        """, spelling="loop: one value through a forwarder"),
        Valid("""
            from trainer import Trainer
            import tensorflow as tf
            t = Trainer()
            for step in range(1000):
                t.run(tf.ones([3]), warmup=tf.constant(min(1.0, step / 100)))
        """, files={"trainer.py": """
            import tensorflow as tf
            class Trainer:
                @tf.function
                def loss(self, x, warmup=0.0):
                    return tf.reduce_sum(x) * warmup
                def run(self, x, **kwargs):
                    return self.loss(x, **kwargs)
        """}, spelling="module: **kwargs handed on"),
        Valid("""
            import tensorflow as tf
            @tf.function(input_signature=[tf.TensorSpec([3]), tf.TensorSpec([])])
            def step(x, lr):
                return x * lr
            def train(x, lr):
                return step(x, lr)
            # %%
            for epoch in range(100):
                train(tf.ones([3]), 0.1 * 0.95 ** epoch)
        """, notebook=True, spelling="notebook: through a forwarder"),
    )
    invalid = (  # type: ignore[assignment]
        *invalid,
        Invalid("""
            import tensorflow as tf
            @tf.function
            def step(x, lr):
                return x * lr
            def train(x, lr):
                return step(x, lr)
            for epoch in range(100):
                lr = 0.1 * 0.95 ** epoch
                train(tf.ones([3]), lr)
        """, count=1, lines=(9,), spelling="name: through an eager forwarder"),
        Invalid("""
            import tensorflow as tf
            class Agent:
                @tf.function
                def update(self, x, beta):
                    return x * beta
                def learn(self, x, beta=0.4):
                    return self.update(x, beta=beta)
            agent = Agent()
            frame = 0
            while frame < 10000:
                agent.learn(tf.ones([3]), beta=min(1.0, 0.4 + frame * 0.6 / 10000))
                frame += 1
        """, count=1, lines=(11,), spelling="loop: while counter through a method"),
        Invalid("""
            from trainer import Trainer
            import tensorflow as tf
            t = Trainer()
            for step in range(1000):
                t.run(tf.ones([3]), warmup=min(1.0, step / 100))
        """, files={"trainer.py": """
            import tensorflow as tf
            class Trainer:
                @tf.function
                def loss(self, x, warmup=0.0):
                    return tf.reduce_sum(x) * warmup
                def run(self, x, **kwargs):
                    return self.loss(x, **kwargs)
        """}, count=1, lines=(5,), spelling="module: **kwargs handed on"),
        Invalid("""
            import tensorflow as tf
            @tf.function
            def step(x, lr):
                return x * lr
            def train(x, lr):
                return step(x, lr)
            # %%
            for epoch in range(100):
                train(tf.ones([3]), 0.1 * 0.95 ** epoch)
        """, count=1, notebook=True, spelling="notebook: through a forwarder"),
    )

    # Stop 39, pass B: a Python number the loop carries (a decay kept in Python:
    # ``eps = max(0.01, eps * 0.995)``, ``lr *= 0.9``), passed by name.
    valid = (  # type: ignore[assignment]
        *valid,
        Valid("""
            import tensorflow as tf
            @tf.function
            def act(x, eps):
                return x * eps
            eps = 1.0
            for step in range(1000):
                eps = max(0.05, eps * 0.995)
                act(tf.ones([3]), tf.constant(eps))
        """, spelling="name: a decay carried by the loop"),
        Valid("""
            import tensorflow as tf
            @tf.function
            def step(x, lr):
                return x * lr
            lr = 0.1
            for stage in range(3):
                lr *= 0.5
                step(tf.ones([3]), lr)
        """, spelling="loop: a handful of values, on purpose"),
        Valid("""
            import tensorflow as tf
            @tf.function
            def step(x, lr):
                return x * lr
            lr = tf.Variable(0.1)
            for batch in [tf.ones([3])] * 100:
                lr.assign(lr * 0.99)
                step(batch, lr)
        """, spelling="loop: over data, a variable"),
        Valid("""
            import tensorflow as tf
            @tf.function
            def step(x, t):
                return x * t
            xs = tf.ones([100, 3])
            t = tf.constant(0.0)
            for i in range(100):
                step(xs[i], t)
                t = t + 0.01
        """, spelling="index: x[i] with a time kept as a tensor"),
        Valid("""
            from agent_lib import act
            import tensorflow as tf
            eps = 1.0
            while eps > 0.01:
                act(tf.ones([3]), tf.constant(eps))
                eps *= 0.99
        """, files={"agent_lib.py": """
            import tensorflow as tf
            @tf.function
            def act(x, eps):
                return x * eps
        """}, spelling="module: a decay carried by a while"),
        Valid("""
            import tensorflow as tf
            @tf.function(input_signature=[tf.TensorSpec([3]), tf.TensorSpec([])])
            def act(x, eps):
                return x * eps
            eps = 1.0
            # %%
            for step in range(1000):
                eps = max(0.05, eps * 0.995)
                act(tf.ones([3]), eps)
        """, notebook=True, spelling="notebook: a decay carried by the loop"),
    )
    invalid = (  # type: ignore[assignment]
        *invalid,
        Invalid("""
            import tensorflow as tf
            @tf.function
            def act(x, eps):
                return x * eps
            eps = 1.0
            for step in range(1000):
                eps = max(0.05, eps * 0.995)
                act(tf.ones([3]), eps)
        """, count=1, lines=(8,), spelling="name: a decay carried by the loop"),
        Invalid("""
            import tensorflow as tf
            @tf.function
            def step(x, lr):
                return x * lr
            lr = 0.1
            for batch in [tf.ones([3])] * 100:
                lr *= 0.99
                step(batch, lr)
        """, count=1, lines=(8,), spelling="loop: over data, lr *= 0.99"),
        Invalid("""
            import tensorflow as tf
            @tf.function
            def step(x, t):
                return x * t
            xs = tf.ones([100, 3])
            t = 0.0
            for i in range(100):
                step(xs[i], t)
                t = t + 0.01
        """, count=1, lines=(8,), spelling="index: x[i] with a time carried by the loop"),
        Invalid("""
            from agent_lib import act
            import tensorflow as tf
            eps = 1.0
            while eps > 0.01:
                act(tf.ones([3]), eps)
                eps *= 0.99
        """, files={"agent_lib.py": """
            import tensorflow as tf
            @tf.function
            def act(x, eps):
                return x * eps
        """}, count=1, lines=(5,), spelling="module: a decay carried by a while"),
        Invalid("""
            import tensorflow as tf
            @tf.function
            def act(x, eps):
                return x * eps
            eps = 1.0
            # %%
            for step in range(1000):
                eps = max(0.05, eps * 0.995)
                act(tf.ones([3]), eps)
        """, count=1, notebook=True, spelling="notebook: a decay carried by the loop"),
        # Stop 39 wave 2 (held-out recall round 9): the index through a comprehension over a
        # progress bar around range, passed by keyword.
        Invalid("""
            import tensorflow as tf
            from tqdm import tqdm
            class Source:
                @tf.function
                def rate(self, i_batch=None):
                    return tf.ones([3]) * i_batch
                def batched(self, n):
                    return [self.rate(i_batch=i) for i in tqdm(range(n))]
        """, count=1, lines=(8,), fixed="""
            import tensorflow as tf
            from tqdm import tqdm
            class Source:
                @tf.function
                def rate(self, i_batch=None):
                    return tf.ones([3]) * i_batch
                def batched(self, n):
                    return [self.rate(i_batch=tf.constant(i)) for i in tqdm(range(n))]
        """, spelling="loop: comprehension over tqdm(range(n)), by keyword"),
        Invalid("""
            import tensorflow as tf
            from tqdm import trange
            @tf.function
            def step(x, i):
                return x * i
            for i in trange(1000):
                step(tf.ones([3]), i)
        """, count=1, lines=(7,), fixed="""
            import tensorflow as tf
            from tqdm import trange
            @tf.function
            def step(x, i):
                return x * i
            for i in trange(1000):
                step(tf.ones([3]), tf.constant(i))
        """, spelling="loop: trange"),
    )
    valid = (  # type: ignore[assignment]
        *valid,
        Valid("""
            import tensorflow as tf
            from tqdm import tqdm
            class Source:
                @tf.function
                def rate(self, i_batch=None):
                    return tf.ones([3]) * i_batch
                def batched(self, n):
                    return [self.rate(i_batch=tf.constant(i)) for i in tqdm(range(n))]
        """, spelling="loop: comprehension over tqdm(range(n)), by keyword"),
        # A progress bar over a handful of values (three model sizes): a few traces on purpose.
        Valid("""
            import tensorflow as tf
            from tqdm import tqdm
            @tf.function
            def build(depth):
                return tf.zeros([depth, depth])
            for depth in tqdm(range(3)):
                build(depth)
        """, spelling="loop: a handful through tqdm"),
    )

    def applies_to(self, ctx: Context) -> bool:
        return ctx.spells_tf_function  # the called function must be a tf.function of this module

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        args = [*node.args, *(k.value for k in node.keywords)]
        if not args or not ctx.imports_tf:
            return
        func = node.func
        # Cheap tests first: `f(...)` or `self.f(...)` only, with a name that may be a
        # tf.function's.
        if type(func) is ast.Name:
            if func.id not in tf_function_callee_names(ctx):
                return
        elif type(func) is not ast.Attribute or type(func.value) is not ast.Name \
                or func.attr not in tf_function_callee_names(ctx):
            return
        if not ctx.enclosing_loops(node):
            return  # a scalar varies only from one iteration of a loop around the call
        varying = [a for a in args if type(a) is not ast.Constant
                   and varying_scalar(ctx, a, node) is not None]
        handful = [a for a in args if a not in varying and _handful_loop_number(ctx, a, node)]
        if not varying and not handful:
            return
        target = tf_function_called(ctx, func)
        if target is None or "input_signature" in target.options:
            return
        if handful and target.fn is not None:
            # A handful of values is a few traces on purpose when they shape the graph;
            # when the function only computes with them, every trace but one is waste.
            bound = type(func) is ast.Attribute
            varying += [a for a in handful
                        if (p := receiving_param(node, target.fn, a, bound))  # type: ignore[arg-type]
                        is not None
                        and _only_tensor_data(ctx, target.fn, p)]
        if not varying:
            return
        opt = target.options.get("experimental_follow_type_hints")
        if type(opt) is ast.Constant and opt.value is True:
            return  # annotated Tensor parameters are converted
        tf = ctx.module_alias("tensorflow")
        fix = None
        # Review 39 (10): a Python float would become float32 whatever the dtype of the
        # tensors it meets: offered for ints only (the dtype here is known, int32).
        if tf is not None and all(python_int(ctx, a) for a in varying):
            edits = [ctx.replace(a, f"{tf}.constant({ctx.source_of(a)})") for a in varying]
            fix = self.unsafe_fix(*edits, description="pass the value as a tensor")
        yield self.finding(ctx, node, fix=fix)

    def publish(self, ctx: Context) -> list[dict] | None:
        """Functions run eagerly that pass one of their parameters, as it is, to a
        ``tf.function`` of this module (``def train(x, lr): return step(x, lr)``, or
        ``**kwargs`` handed on whole): a caller's per-iteration Python number reaches the
        trace key through them. ``watch_args``: the summary keeps the kinds of the values
        their callers pass in loops."""
        if not ctx.spells_tf_function or not ctx.imports_tf:
            return None
        from tfperf.analysis.summary import enclosing_qualname, position

        names = tf_function_callee_names(ctx)
        by_attr, by_name = ctx.call_groups()
        facts = []
        for name in names:
            for call in (*by_name.get(name, ()), *by_attr.get(name, ())):
                func = call.func
                if type(func) is ast.Attribute and not (
                        type(func.value) is ast.Name and func.value.id in ("self", "cls")):
                    continue
                fn = ctx.enclosing_function(call)
                if not isinstance(fn, _DEFS) or traced(ctx, call):
                    continue
                params = _forwarded_params(ctx, fn, call)
                if not params:
                    continue
                target = tf_function_called(ctx, func)
                if target is None or "input_signature" in target.options:
                    continue
                opt = target.options.get("experimental_follow_type_hints")
                if type(opt) is ast.Constant and opt.value is True:
                    continue
                facts.append({"fn": enclosing_qualname(ctx, call), "params": params,
                              "pos": position(ctx, call), "target": name,
                              "watch_args": True})
        return facts or None

    def check_project(self, project: Project) -> Iterator[Finding]:
        """Calls of a ``tf.function`` of another module: what the module's own check
        cannot see; and per-iteration numbers handed on to a ``tf.function`` by an eager
        function they are passed to (in any module)."""
        from tfperf.analysis.summary import short_name
        seen: set[tuple[str, tuple[int, ...]]] = set()
        for module in project.modules.values():
            for fact in module.facts.get(self.code, ()):
                for site, texts in _varying_into(project, module.path, fact):
                    key = (site.module.path, tuple(site.call.pos))
                    if key in seen:
                        continue
                    seen.add(key)
                    method = short_name(fact["fn"])
                    where = os.path.basename(module.path)
                    yield self.project_finding(
                        site.module.path, site.call.pos,
                        f"{self.message} ({texts} passed to {method}() of {where}, which "
                        f"hands it on to the tf.function {fact['target']})")
        for site, (module, fn) in project.sites():
            call = site.call
            if site.module.path == module.path or call.traced or call.guarded \
                    or not call.loop or call.star:
                continue
            if fn.traced not in ("decorated", "wrapped") or fn.signature:
                continue
            varying = [a for a in call.args if a.varies]
            if varying:
                where = os.path.basename(module.path)
                yield self.project_finding(
                    site.module.path, call.pos,
                    f"{self.message} ({', '.join(a.text for a in varying)} passed to "
                    f"{fn.qualname} of {where})")

