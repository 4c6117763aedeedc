"""TFP302: a tf.function created anew each time it is used: traced on every call."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING

from tfperf.core.findings import Finding
from tfperf.lint.analysis.assignments import assigned_value, block_holding
from tfperf.lint.analysis.callers import called_in_loop, calls_of
from tfperf.lint.analysis.syntax import keywords_of, own_nodes
from tfperf.lint.analysis.tf_functions import is_tf_function_call, wrapping
from tfperf.lint.analysis.traced import traced
from tfperf.lint.analysis.varying import HANDFUL
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

if TYPE_CHECKING:
    from tfperf.analysis.project import Project

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


# Methods the Keras/tf.Module machinery calls, often from code that is itself traced (a
# model's call, a custom train step), where an inner tf.function is inlined, not retraced.
_MACHINERY = frozenset({"call", "__call__", "build", "train_step", "test_step",
                        "predict_step", "get_config", "compute_output_shape"})


def _runs_eagerly(ctx: Context, fn: ast.AST) -> bool:
    """``fn`` reads a tensor's value on the host (``serve(x).numpy()``): it cannot run
    inside traced code, so nothing traces it once and reuses the graph."""
    return any(type(n) is ast.Call and type(n.func) is ast.Attribute
               and n.func.attr == "numpy" and not n.args for n in own_nodes(fn))


def _instance_of(ctx: Context, ref: ast.AST, cls: ast.ClassDef) -> bool:
    """``ref`` is a name bound here to ``cls(...)``."""
    b = ctx.binding(ref) if type(ref) is ast.Name else None
    value = getattr(b, "value", None) if b is not None and b.kind == "assign" else None
    return type(value) is ast.Call and type(value.func) is ast.Name \
        and value.func.id == cls.name


def _entry_point(ctx: Context, fn: ast.AST, eager: bool) -> bool:
    """``fn``, called nowhere in its module, is an entry point others call per use: a
    function; or, where the function that makes the tf.function runs eagerly (``eager``),
    a public method of a plain class (a wrapper holding a model), not a method of a class
    TF or Keras derives from, nor one such a class calls itself. Without that evidence a
    method may be called by its class's machinery from traced code (once per trace)."""
    cls = ctx.parent(fn)
    if type(cls) is not ast.ClassDef:
        return True
    if not eager:
        return False
    name: str = getattr(fn, "name", "")
    sites = [c for c in ctx.call_groups()[0].get(name, ()) if _instance_of(ctx, c.func.value, cls)]
    if sites:  # `w = Wrapper(); w.predict_proba(x)` here: per step only in a loop
        return any(ctx.in_loop(c) for c in sites)
    if name.startswith("_") or name in _MACHINERY:
        return False
    if any(type(n) in _DEFS and n.name in ("call", "__call__") for n in cls.body):
        return False  # a layer or model of its own: its methods run inside its call
    for base in cls.bases:
        q = ctx.qualname(base) or ""
        if q.startswith(("tensorflow", "keras", "tf_keras", "sonnet", "trfl")):
            return False
    return True


def _literal_len(loop: ast.AST) -> int | None:
    it = getattr(loop, "iter", None)
    if type(it) in (ast.List, ast.Tuple, ast.Set):
        return len(it.elts)
    return None


_LITERALS = (ast.List, ast.Tuple, ast.Set)


def _literal_values(ctx: Context, it: ast.AST | None) -> bool:
    """``it`` yields Python values written in the code: a literal list (or a name bound to
    one), or ``itertools.product``/``zip`` of such."""
    if type(it) is ast.Name:
        it = assigned_value(ctx, it)
    if type(it) in _LITERALS:
        return True
    if type(it) is ast.Call and (ctx.qualname(it.func) == "itertools.product"
                                 or ctx.is_builtin_call(it, "zip")):
        return bool(it.args) and all(_literal_values(ctx, a) for a in it.args)
    return False


def _retraced_anyway(ctx: Context, loop: ast.AST, uses: list[ast.Call]) -> bool:
    """The loop walks Python values written in the code (dtypes, sizes, flags) and hands
    its loop variable to the function: each iteration is a new trace whether or not the
    ``tf.function`` is kept (a sweep over configurations, as tests do)."""
    if not _literal_values(ctx, getattr(loop, "iter", None)):
        return False
    targets = {n.id for n in ast.walk(getattr(loop, "target", ast.Pass()))
               if type(n) is ast.Name}
    return all(any(type(a) is ast.Name and a.id in targets
                   for a in (*u.args, *(k.value for k in u.keywords))) for u in uses)


def _exports_graph(ctx: Context, use: ast.Call) -> bool:
    """``use`` follows ``tf.summary.trace_on(...)`` in its block: the call is traced to
    write its graph to TensorBoard (`trace_on` … call … `trace_export`), once on purpose."""
    stmt: ast.AST | None = use
    while stmt is not None and not isinstance(stmt, ast.stmt):
        stmt = ctx.parent(stmt)
    if stmt is None:
        return False
    block = block_holding(ctx, stmt)
    if block is None:
        return False
    for before in block[:block.index(stmt)]:
        for n in ast.walk(before):
            if type(n) is ast.Call and (ctx.qualname(n.func) or "").endswith(
                    "summary.trace_on"):
                return True
    return False


# Methods run once per object (or per build): a tf.function made there is made once.
_SETUP_METHODS = frozenset({"__init__", "build", "setup", "set_up", "setUp", "compile",
                            "__post_init__", "reset", "_build", "init"})


def _new_tf_function(ctx: Context, fn: ast.AST, value: ast.AST | None) -> bool:
    """``value`` (returned by ``fn``) is a ``tf.function`` made by this call of ``fn``:
    ``tf.function(g)``, or the name of a decorated ``def``/``tf.function(...)`` made in
    ``fn`` (not one kept on ``self`` or in a cache)."""
    if value is None:
        return False
    if type(value) is ast.Call:
        return (is_tf_function_call(ctx, value) and bool(value.args)) \
            or wrapping(ctx, value) is not None
    if type(value) is not ast.Name:
        return False
    b = ctx.binding(value)
    if b is None or ctx.scope_of(b.value) is not fn:
        return False
    if b.kind == "def":
        return type(b.value) in _DEFS and b.value.decorator_list != [] \
            and ctx.tf_function_decorator(b.value) is not None
    return b.kind == "assign" and type(b.value) is ast.Call \
        and is_tf_function_call(ctx, b.value) and bool(b.value.args)


def _guarded_by(ctx: Context, stmt: ast.AST, fn: ast.AST, attr: str) -> bool:
    """``stmt`` runs under an ``if``/``try`` of ``fn`` that asks about ``self.<attr>``
    (``if self.f is None:``, ``if not hasattr(self, "f")``), or about anything kept
    between calls (a cache): the object is made once, or once per key."""
    for p in ctx.ancestors(stmt):
        if p is fn:
            return False
        if type(p) in (ast.If, ast.While):
            for n in ast.walk(p.test):
                if type(n) is ast.Attribute and n.attr == attr:
                    return True
                if type(n) is ast.Constant and n.value == attr:
                    return True
                if type(n) is ast.Attribute and type(n.value) is ast.Name \
                        and n.value.id == "self":
                    return True  # a flag or cache kept on the object
        if type(p) is ast.Try:
            return True  # `try: return self._fns[k] except KeyError: ...`
    return False


class TfFunctionRecreated(Rule):
    code = "TFP302"
    name = "tf-function-recreated"
    message = "a new tf.function is created for each use: it is traced again every time"
    hint = ("create the tf.function once (module level, __init__, or a cached attribute) "
            "and call that object repeatedly")
    claims = ("S13",)
    group = "preview"  # judged 4/18 on library code, never fired on user code (docs)
    node_types = (ast.Call, ast.FunctionDef, ast.AsyncFunctionDef)
    requires_imports = frozenset({"tensorflow"})  # every finding needs a TF API
    docs = """\
## What it does
Finds a `tf.function` object that is built and then used only once before being thrown
away, over and over:
- `tf.function(g)` (or a `@tf.function`-decorated `def`) inside a loop, called in the same
  iteration;
- `tf.function(g)` or a decorated inner `def` inside a function that calls it right there
  (once), when that function is itself called in a loop, or is not called in its module at
  all (a helper such as `train_step`, called from elsewhere: a tf.function built to be called
  once never pays off), or only by functions that are so themselves; a method counts when
  it is public, of a plain class (not a Keras layer or model, nor one with a `call`), and
  reads the result on the host (`serve(x).numpy()`: it runs eagerly, so nothing traces it
  once): a wrapper's `predict_proba` making `@tf.function serve` per prediction
  (`rule_claims.py --cases TFP302inner`, TF 2.21 CPU, 3 dense layers on 64 rows: 167 ms a
  call, against 3.0 ms for a function made once and 23 ms eagerly);
- with the whole project in view: `self.f = tf.function(...)` rebuilt, or a decorated inner
  `def` made and called once, in a method that runs once per iteration of an eager loop
  somewhere in the project (through any chain of calls); and the result of a factory that
  returns a new `tf.function` (`return tf.function(g)`, or a decorated inner `def`
  returned) called on the spot, `self._make_loop(s)()`, in a loop or in a function that
  runs per iteration.

## Why is this bad?
A `tf.function` object keeps its traces. A new object has none: its first call traces the
Python code into a graph and optimises it, which costs far more than running the code
eagerly once (claim S13: tracing is what makes `tf.function` fast only when it is reused;
TF's guide: "create tf.function objects once, outside loops"). TF warns about this as
"retracing" when it happens five times.

## Example
```python
def predict(model, x):
    @tf.function
    def run(x):
        return model(x)
    return run(x)

for batch in batches:
    predict(model, batch)        # traces `run` for every batch
```

## Use instead
```python
@tf.function
def predict(x):
    return model(x)

for batch in batches:
    predict(batch)               # traced once
```

## Fix safety
No automatic fix: where the function should live depends on what it closes over.

## Known limitations
Not reported: factories that return or store the new function (`return step`,
`self._fn = tf.function(...)`, `cache[k] = tf.function(...)`), a function created once per
outer iteration and called in an inner loop (one trace per model, reused per batch), loops
over a handful of literal values (comparing `jit_compile=True` and `False`), and a function
called in its module only outside loops (a `main()`), loops over Python values written in
the code (a list of dtypes, `itertools.product(dtypes, dims)`) whose loop variable the
function is called with (each iteration traces anew in any case), calls traced to write
their graph to TensorBoard (after `tf.summary.trace_on(...)`), tests (`test_*`, run once), methods
that nothing in the module calls (their class's machinery often calls them from traced
code, where an inner `tf.function` is inlined), and `experimental_implements=` functions
(composite ops made for export).

In `preview` (not on by default): it printed nothing on the 39 user-style repositories
judged so far, and on library code (library.csv) 4 of its 18 findings were true or minor:
most functions it reports are made once per call of a factory whose result is reused, kept
after an `if ... is None` guard, run once per long computation, or called with arguments
that trace anew anyway (docs/lint.md, "Measured precision and recall").
"""
    valid = (
        # A method nothing here calls: its class's machinery may call it from traced code.
        Valid("""
            import tensorflow as tf
            class Sampler:
                def sample(self, logits):
                    @tf.function
                    def draw(x):
                        return tf.random.categorical(x, 1)
                    return draw(logits)
        """),
        # A composite op for export (TFLite's fused NMS), made where the model is traced.
        Valid("""
            import tensorflow as tf
            def postprocess(boxes, scores):
                @tf.function(experimental_implements="TFLite_Detection_PostProcess")
                def dummy(b, s):
                    return tf.constant(0.0)
                return dummy(boxes, scores)
        """),
        # A sweep over dtypes written in the code: each one is a new trace anyway.
        Valid("""
            import itertools
            import tensorflow as tf
            def check_sums(run):
                kinds = [tf.float16, tf.float32, tf.float64]
                for kind, rank in itertools.product(kinds, [1, 2, 3]):
                    run(tf.function(make_sum)(kind, rank))
        """),
        # Each model's graph written to TensorBoard once: tracing it is the point.
        Valid("""
            import tensorflow as tf
            def log_graphs(builders, writer, x):
                for build in builders:
                    graph_fn = tf.function(build())
                    with writer.as_default():
                        tf.summary.trace_on(graph=True)
                        graph_fn(x)
                        tf.summary.trace_export(name="model", step=0)
        """),
        # A factory: the new function is returned, for the caller to keep.
        Valid("""
            import tensorflow as tf
            def make_step(model):
                @tf.function
                def step(x):
                    return model(x)
                return step
            step = make_step(lambda x: x * 2)
            for i in range(10):
                step(tf.ones([2]))
        """),
        # One per model, reused for every batch in the inner loop.
        Valid("""
            import tensorflow as tf
            def evaluate(models, batches):
                for model in models:
                    run = tf.function(model)
                    for x in batches:
                        run(x)
        """),
        # Created and used in main(), which runs once.
        Valid("""
            import tensorflow as tf
            def main(ds):
                @tf.function
                def train_step(x):
                    return x * 2
                for x in ds:
                    train_step(x)
            main(tf.data.Dataset.range(3))
        """),
        # A test function: its runner calls it once.
        Valid("""
            import tensorflow as tf
            def test_square_in_tf_function():
                @tf.function
                def square(x):
                    return x * x
                assert square(tf.constant(3.0)) == 9.0
        """),
        # Built in a loop into a cache, each kept.
        Valid("""
            import tensorflow as tf
            def build(fns_by_name):
                compiled = {}
                for name, g in fns_by_name.items():
                    compiled[name] = tf.function(g)
                return compiled
        """),
        # Comparing two settings on purpose.
        Valid("""
            import tensorflow as tf
            def g(x):
                return x * 2
            for jit in (True, False):
                f = tf.function(g, jit_compile=jit)
                f(tf.ones([4]))
        """),
        # A user's own `function`, not TensorFlow's.
        Valid("""
            def function(g):
                return g
            for i in range(10):
                function(print)(i)
        """),
    )
    invalid = (
        Invalid("""
            import tensorflow as tf
            def g(x):
                return x * 2
            for x in tf.data.Dataset.range(100):
                f = tf.function(g)
                y = f(x)
        """, count=1, lines=(5,)),
        Invalid("""
            import tensorflow as tf
            def predict(model, x):
                @tf.function
                def run(x):
                    return model(x)
                return run(x)
            def main(model, batches):
                for batch in batches:
                    predict(model, batch)
        """, count=1, lines=(3,)),
        # Aliased import, called immediately, inside a method called per step.
        Invalid("""
            from tensorflow import function as tf_fn
            class Runner:
                def step(self, x):
                    return tf_fn(self.body, jit_compile=True)(x)
                def body(self, x):
                    return x + 1
                def run(self, xs):
                    return [self.step(x) for x in xs]
        """, count=1, lines=(4,)),
        # A helper called from other modules: a new tf.function (and trace) per call.
        Invalid("""
            import tensorflow as tf
            def train_step(model, x, optimizer, loss_fn):
                @tf.function
                def apply_gradient(model, x, optimizer, loss_fn):
                    with tf.GradientTape() as tape:
                        loss = loss_fn(x, model(x))
                    grads = tape.gradient(loss, model.trainable_variables)
                    optimizer.apply_gradients(zip(grads, model.trainable_variables))
                    return loss
                return apply_gradient(model, x, optimizer, loss_fn)
        """, count=1, lines=(3,)),
        # A decorated def inside the loop body.
        Invalid("""
            import tensorflow as tensorflow_alias
            for step in range(1000):
                @tensorflow_alias.function
                def update(v):
                    return v * 0.9
                update(tensorflow_alias.ones([3]))
        """, count=1, lines=(3,)),
    )

    # Issue 25: `self.f = tf.function(...)` rebuilt in a method called per step, here or
    # from another module of the project, or a notebook; each with its VALID twin.
    valid = (  # type: ignore[assignment]
        *valid,
        Valid("""
            import tensorflow as tf
            class Policy:
                def __init__(self, model):
                    self.act = tf.function(model)
                def step(self, obs):
                    return self.act(obs)
                def run(self, env):
                    obs = env.reset()
                    for t in range(1000):
                        obs = env.step(self.step(obs))
        """, spelling="loop: for"),
        Valid("""
            import tensorflow as tf
            class Policy:
                def __init__(self, model):
                    self.act = tf.function(model)
                def step(self, obs):
                    return self.act(obs)
            def replay(policy: Policy, observations):
                for i in range(len(observations)):
                    policy.step(observations[i])
        """, spelling="index: x[i]"),
        Valid("""
            import tensorflow as tf
            class Policy:
                def __init__(self, model):
                    self.model = model
                    self.act = tf.function(self._act)
                def _act(self, obs):
                    return self.model(obs)
                def step(self, obs):
                    return self.act(obs)
            def run(policy, env):
                obs = env.reset()
                for t in range(1000):
                    obs = env.step(policy.step(obs))
        """, spelling="name: built once in __init__"),
        Valid("""
            from policy import Policy
            policy = Policy(None)
            for t in range(1000):
                policy.step(t)
        """, files={"policy.py": """
            import tensorflow as tf
            class Policy:
                def __init__(self, model):
                    self.model = model
                    self._act = None
                def step(self, obs):
                    if self._act is None:
                        self._act = tf.function(self.model)
                    return self._act(obs)
        """}, spelling="module"),
        Valid("""
            import tensorflow as tf
            class Policy:
                def step(self, obs):
                    self.act = tf.function(self.model)
                    return self.act(obs)
            # %%
            p = Policy()
            p.step(1.0)
        """, notebook=True, spelling="notebook"),
    )
    # Stop 44 wave 2 (held-out recall round 15, F016): a public method of a plain wrapper
    # class makes an inner tf.function, calls it once and reads the result on the host
    # (`.numpy()`: the method runs eagerly), so every call traces anew. VALID twins: built
    # once in __init__, a private method, a Keras model's method, a method run once.
    valid = (  # type: ignore[assignment]
        *valid,
        Valid("""
            import tensorflow as tf
            class Wrapper:
                def __init__(self, model):
                    self.model = model
                    self._serve = tf.function(lambda x: self.model(x, training=False))
                def predict_proba(self, x):
                    return self._serve(x).numpy()
        """, spelling="name: built once in __init__"),
        Valid("""
            import tensorflow as tf
            class Wrapper:
                def _predict(self, x):
                    @tf.function
                    def serve(v):
                        return self.model(v, training=False)
                    return serve(x).numpy()
        """, spelling="loop: a private method nothing here calls"),
        Valid("""
            import tensorflow as tf
            class Net(tf.keras.Model):
                def scores(self, x):
                    @tf.function
                    def serve(v):
                        return self(v, training=False)
                    return serve(x).numpy()
        """, spelling="index: a Keras model's own method"),
        Valid("""
            import tensorflow as tf
            class Wrapper:
                def predict_proba(self, x):
                    @tf.function
                    def serve(v):
                        return self.model(v, training=False)
                    return serve(x).numpy()
            w = Wrapper()
            print(w.predict_proba(tf.ones([2, 3])))
        """, spelling="module: called once at module level"),
    )
    invalid = (  # type: ignore[assignment]
        *invalid,
        Invalid("""
            import tensorflow as tf
            class Wrapper:
                def experimental_predict_proba(self, x_test):
                    @tf.function
                    def serve(x):
                        return self.model(x, training=False)
                    return serve(x_test).numpy()
        """, count=1, lines=(4,), spelling="loop: public method, inner def, .numpy()"),
        Invalid("""
            import tensorflow as tf
            class Wrapper:
                def predict_proba(self, x, fast=False):
                    if fast:
                        return self.fast_proba(x)
                    return self.model.predict(x)
                def fast_proba(self, x):
                    serve = tf.function(lambda v: self.model(v, training=False))
                    out = serve(x)
                    return out.numpy()
        """, count=1, lines=(8,), spelling="name: tf.function(lambda) via a public caller"),
    )
    # Issue 25, fourth pass: a tf.function made per call and called on the spot, in a
    # method (a decorated inner def) or returned by a factory method, seen through callers.
    valid = (  # type: ignore[assignment]
        *valid,
        # A script's main() builds and runs the loop once.
        Valid("""
            import tensorflow as tf
            def make_loop(n):
                return tf.function(lambda: tf.range(n))
            def main():
                return make_loop(10)()
            main()
        """, spelling="name: a factory's result called once"),
        Valid("""
            import tensorflow as tf
            class Program:
                def _make_loop(self, n):
                    @tf.function
                    def loop():
                        return tf.range(n)
                    return loop
                def build(self):
                    self._loop = self._make_loop(10)
                def run(self):
                    return self._loop()
            p = Program()
            p.build()
            for _ in range(100):
                p.run()
        """, spelling="name: a factory's result kept"),
        Valid("""
            import tensorflow as tf
            class Sampler:
                def sample(self, x):
                    @tf.function
                    def draw(v):
                        return v * 2.0
                    return draw(x)
            s = Sampler()
            s.sample(tf.ones([3]))
        """, spelling="loop: an inner def, called once"),
        # Its twin: the method runs once (a script's main), its function reused per batch.
        Valid("""
            import tensorflow as tf
            class Model:
                def run_predictions(self, batches):
                    @tf.function
                    def predict_step(x):
                        return x * 2.0
                    return [predict_step(b) for b in batches]
            Model().run_predictions([tf.ones([3])] * 100)
        """, spelling="loop: an inner def reused by the method's loop"),
        Valid("""
            from program import Program
            p = Program()
            loop = p.make_loop(10)
            for _ in range(100):
                loop()
        """, files={"program.py": """
            import tensorflow as tf
            class Program:
                def make_loop(self, n):
                    return tf.function(lambda: tf.range(n))
        """}, spelling="module: a factory called once"),
        Valid("""
            import tensorflow as tf
            def make_step(scale):
                return tf.function(lambda x: x * scale)
            step = make_step(2.0)
            # %%
            for i in range(100):
                step(tf.ones([3]))
        """, notebook=True, spelling="notebook: a factory called once"),
    )
    invalid = (  # type: ignore[assignment]
        *invalid,
        Invalid("""
            import tensorflow as tf
            class Program:
                def _make_loop(self, n):
                    @tf.function
                    def loop():
                        return tf.range(n)
                    return loop
                def run(self):
                    return self._make_loop(10)()
            p = Program()
            for _ in range(100):
                p.run()
        """, count=1, lines=(9,), spelling="name: a factory's result called on the spot"),
        # Run() is called by an executor outside the linted code (lingvo's program).
        Invalid("""
            import tensorflow as tf
            class TrainProgram:
                def _GetHostTrainLoop(self, strategy):
                    @tf.function
                    def _TpuFunction():
                        return strategy.run(lambda: tf.constant(1.0))
                    return _TpuFunction
                def Run(self, strategy=None):
                    metrics = self._GetHostTrainLoop(strategy)()
                    return metrics
        """, count=1, lines=(9,), spelling="name: a factory called from outside"),
        Invalid("""
            import tensorflow as tf
            class Sampler:
                def sample(self, x):
                    @tf.function
                    def draw(v):
                        return v * 2.0
                    return draw(x)
            s = Sampler()
            for _ in range(100):
                s.sample(tf.ones([3]))
        """, count=1, lines=(4,), spelling="loop: an inner def in a method"),
        # Stop 39 wave 2 (held-out recall round 9): the inner function is reused over the
        # method's batches, but the method itself runs per sample of an outer loop (through
        # another method): one new function and one trace per sample.
        Invalid("""
            import tensorflow as tf
            class Model:
                def run_predictions(self, batches):
                    @tf.function
                    def predict_step(x):
                        return x * 2.0
                    return [predict_step(b) for b in batches]
                def eval_vector(self, x):
                    return self.run_predictions([x, x])
                def score(self, samples):
                    return [self.eval_vector(s) for s in samples]
            Model().score([tf.ones([3])] * 100)
        """, count=1, lines=(4,), spelling="loop: an inner def reused by the method's loop"),
        Invalid("""
            from program import Program
            p = Program()
            for _ in range(100):
                p.run()
        """, files={"program.py": """
            import tensorflow as tf
            class Program:
                def make_loop(self, n):
                    return tf.function(lambda: tf.range(n))
                def run(self):
                    return self.make_loop(10)()
        """}, count=1, lines=(), spelling="module: a factory's result called per run"),
        Invalid("""
            import tensorflow as tf
            def make_step(scale):
                return tf.function(lambda x: x * scale)
            # %%
            for i in range(100):
                make_step(2.0)(tf.ones([3]))
        """, count=1, notebook=True, spelling="notebook: a factory called per iteration"),
        Invalid("""
            import tensorflow as tf
            class Policy:
                def step(self, obs):
                    self.act = tf.function(self.model)
                    return self.act(obs)
            def replay(policy: Policy, observations):
                for i in range(len(observations)):
                    policy.step(observations[i])
        """, count=1, lines=(4,), spelling="index: x[i]"),
        Invalid("""
            import tensorflow as tf
            class Policy:
                def step(self, obs):
                    forward = self.model.call
                    self.act = tf.function(forward)
                    return self.act(obs)
                def run(self, env):
                    obs = env.reset()
                    while True:
                        obs = env.step(self.step(obs))
        """, count=1, lines=(5,), spelling="name"),
        Invalid("""
            import tensorflow as tf
            class Policy:
                def step(self, obs):
                    self.act = tf.function(self.model)
                    return self.act(obs)
                def run(self, env):
                    obs = env.reset()
                    for t in range(1000):
                        obs = env.step(self.step(obs))
        """, count=1, lines=(4,), spelling="loop: for"),
        Invalid("""
            from policy import Policy
            policy = Policy(None)
            t = 0
            while t < 1000:
                policy.step(t)
                t += 1
        """, files={"policy.py": """
            import tensorflow as tf
            class Policy:
                def __init__(self, model):
                    self.model = model
                def step(self, obs):
                    self.act = tf.function(self.model)
                    return self.act(obs)
        """}, count=1, lines=(), spelling="module"),
        Invalid("""
            import tensorflow as tf
            class Policy:
                def step(self, obs):
                    self.act = tf.function(lambda o: self.model(o), reduce_retracing=True)
                    return self.act(obs)
            # %%
            p = Policy()
            for t in range(100):
                p.step(t)
        """, count=1, notebook=True, spelling="notebook"),
    )

    def applies_to(self, ctx: Context) -> bool:
        return ctx.spells_tf_function  # every finding is a tf.function made here

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        if type(node) is ast.Call:
            if not is_tf_function_call(ctx, node):
                return
            parent = ctx.parent(node)
            if node.args:
                made: ast.AST = node
            elif type(parent) is ast.Call and parent.func is node and parent.args:
                made = parent  # tf.function(jit_compile=True)(g)
            else:
                return  # a decorator with options: handled with its def
            report: ast.AST = node
        else:
            if not node.decorator_list:
                return
            deco = ctx.tf_function_decorator(node)
            if deco is None:
                return
            made, report = node, deco
        if "experimental_implements" in keywords_of(report):
            return  # a composite op for export (TFLite's fused NMS): made where it is traced
        uses = self._single_uses(ctx, made)
        if uses is None or all(_exports_graph(ctx, u) for u in uses):
            return
        loops = ctx.enclosing_loops(made)
        if loops:
            loop = loops[0]
            n = _literal_len(loop)
            if (n is not None and n <= HANDFUL) or _retraced_anyway(ctx, loop, uses):
                return
            if any(ctx.enclosing_loops(u)[:1] == [loop] for u in uses):
                yield self.finding(ctx, report)
            return
        fn = ctx.enclosing_function(made)
        if fn is None or type(fn) not in _DEFS or ctx.is_tf_function(fn):
            return
        if any(not ctx.enclosing_loops(u) for u in uses) and self._called_repeatedly(ctx, fn):
            yield self.finding(ctx, report)

    @staticmethod
    def _called_repeatedly(ctx: Context, fn: ast.AST, depth: int = 3,
                           eager: bool | None = None) -> bool:
        """Called in a loop here, or not called in this module at all (a helper such as
        `train_step` is called by other modules, and creating a tf.function to call it once
        never pays off), or called here only by functions that are so themselves (stop 44:
        `predict_proba` calling `experimental_predict_proba`, whose inner `@tf.function
        serve` is traced on every prediction). Called here at module level or from a
        `main()` run once: not reported."""
        if called_in_loop(ctx, fn) is not None:
            return True
        name = getattr(fn, "name", "")
        if name.startswith("test"):
            return False  # a test runs once, by its runner: not a hot path
        if eager is None:
            eager = _runs_eagerly(ctx, fn)
        callers = calls_of(ctx, fn)
        if not callers:
            return _entry_point(ctx, fn, eager)
        if depth <= 0:
            return False
        outers = [ctx.enclosing_function(c) for c in callers]
        return all(o is not None and type(o) in _DEFS and not ctx.is_tf_function(o)
                   and not traced(ctx, o)
                   and TfFunctionRecreated._called_repeatedly(ctx, o, depth - 1, eager)
                   for o in outers)

    @staticmethod
    def _single_uses(ctx: Context, made: ast.AST) -> list[ast.Call] | None:
        """The calls of the new function object, when calling is all that is done with it
        (called on the spot, or bound to a name that is only ever called); else ``None``."""
        parent = ctx.parent(made)
        if type(parent) is ast.Call and parent.func is made:
            return [parent]
        if type(made) in _DEFS:
            name = made.name
        elif type(parent) is ast.Assign and len(parent.targets) == 1 \
                and type(parent.targets[0]) is ast.Name:
            name = parent.targets[0].id
        else:
            return None  # stored in an attribute, a dict, returned, passed on: kept
        calls: list[ast.Call] = []
        # A read that resolves to this binding lies in its scope: every read of the name in
        # the module, filtered by binding, is the scope's walk without the walk.
        for n in ctx.name_loads(name):
            b = ctx.binding(n)
            if b is None or (b.value is not made and b.value is not parent):
                continue
            use = ctx.parent(n)
            if type(use) is ast.Call and use.func is n:
                calls.append(use)
            else:
                return None  # the object escapes (returned, stored, passed): kept
        return calls or None

    def _made_on_the_spot(self, ctx: Context, names: dict[ast.AST, str]) -> list[dict]:
        """Functions the module check leaves to the project: a ``tf.function`` made in a
        method and called there once (``made: "inner"``), and the result of a factory that
        returns a new ``tf.function`` called on the spot (``self._make_loop(s)()``, ``made:
        "factory"``; ``loop``: in a loop of the same function)."""
        from tfperf.analysis.summary import enclosing_qualname, position

        facts: list[dict] = []
        factories: set[str] = set()
        for ret in ctx.nodes_of(ast.Return):
            fn = ctx.enclosing_function(ret)
            if fn is None or type(fn) not in _DEFS:
                continue
            q = names.get(fn)
            if q is None or q.rsplit(".", 1)[-1] in factories:
                continue
            if _new_tf_function(ctx, fn, ret.value) and not ctx.is_tf_function(fn):
                factories.add(q.rsplit(".", 1)[-1])
        for made in (*ctx.nodes_of(ast.Call), *ctx.nodes_of(ast.FunctionDef)):
            if type(made) is ast.Call:
                report: ast.AST = made
                if not is_tf_function_call(ctx, made) or not made.args:
                    continue
            else:
                deco = ctx.tf_function_decorator(made) if made.decorator_list else None
                if deco is None:
                    continue
                report = deco
            owner = ctx.enclosing_function(made)
            if owner is None or type(owner) not in _DEFS or ctx.is_tf_function(owner) \
                    or type(ctx.parent(owner)) is not ast.ClassDef \
                    or owner.name in _SETUP_METHODS or ctx.enclosing_loops(made):
                continue
            uses = self._single_uses(ctx, made)
            if uses and not any(_exports_graph(ctx, u) for u in uses):
                # called in a loop of the method (over its batches) or once: either way one
                # new function, and one trace, per call of the method
                facts.append({"fn": names[owner], "pos": position(ctx, report),
                              "made": "inner",
                              "reused": any(ctx.enclosing_loops(u) for u in uses)})
        for call in ctx.nodes_of(ast.Call):
            inner = call.func
            if type(inner) is not ast.Call:
                continue
            f = inner.func
            name = f.id if type(f) is ast.Name else (
                f.attr if type(f) is ast.Attribute and type(f.value) is ast.Name
                and f.value.id == "self" else None)
            if name is None or name not in factories or traced(ctx, call):
                continue
            facts.append({"fn": enclosing_qualname(ctx, call), "pos": position(ctx, call),
                          "made": "factory", "factory": name,
                          "loop": bool(ctx.enclosing_loops(call))})
        return facts

    def publish(self, ctx: Context) -> list[dict] | None:
        """Methods that rebuild ``self.<attr> = tf.function(...)`` on every call (no guard
        keeps the first one): each call of the method traces anew; and the shapes of
        :meth:`_made_on_the_spot`."""
        if not ctx.spells_tf_function:
            return None
        from tfperf.analysis.summary import position, qualnames

        names = qualnames(ctx)
        facts = self._made_on_the_spot(ctx, names)
        for fn, q in names.items():
            if type(fn) not in _DEFS or fn.name in _SETUP_METHODS or ctx.is_tf_function(fn):
                continue
            for n in own_nodes(fn):
                if type(n) is not ast.Assign or len(n.targets) != 1:
                    continue
                target = n.targets[0]
                if type(target) is not ast.Attribute or type(target.value) is not ast.Name \
                        or target.value.id != "self":
                    continue
                value = n.value
                if not (is_tf_function_call(ctx, value) or wrapping(ctx, value) is not None):
                    continue
                if _guarded_by(ctx, n, fn, target.attr):
                    continue
                facts.append({"fn": q, "attr": target.attr, "pos": position(ctx, n.value)})
        return facts

    def check_project(self, project: Project) -> Iterator[Finding]:
        from tfperf.analysis.summary import short_name
        for module in project.modules.values():
            for fact in module.facts.get(self.code, ()):
                made = fact.get("made")
                if made == "factory" and fact["loop"]:
                    yield self.project_finding(
                        module.path, fact["pos"],
                        f"{fact['factory']}() returns a new tf.function, called here once "
                        "per iteration: traced again every time")
                    continue
                site = project.hot_call(module.path, fact["fn"]) if fact["fn"] else None
                method = short_name(fact["fn"])
                if site is None and made == "factory" \
                        and project.entered_from_outside(module.path, fact["fn"]):
                    # `Run()` of a program an executor calls: each call traces anew, and
                    # how often it runs is decided outside the linted code.
                    yield self.project_finding(
                        module.path, fact["pos"],
                        f"{fact['factory']}() returns a new tf.function, called on the spot "
                        f"in {method}() (called from outside this code): traced again on "
                        "every call")
                    continue
                if site is None:
                    continue
                if made == "factory":
                    yield self.project_finding(
                        module.path, fact["pos"],
                        f"{fact['factory']}() returns a new tf.function, called on the spot "
                        f"in {method}() (called per iteration at {project.where(site)}): "
                        "traced again every time")
                    continue
                if made == "inner":
                    yield self.project_finding(
                        module.path, fact["pos"],
                        f"a tf.function made in {method}() and called there "
                        f"{'in its loop' if fact.get('reused') else 'once'} (called per "
                        f"iteration at {project.where(site)}): a new function, traced again "
                        "on every call")
                    continue
                yield self.project_finding(
                    module.path, fact["pos"],
                    f"self.{fact['attr']} = tf.function(...) is rebuilt on every call of "
                    f"{method}() (called per iteration at {project.where(site)}): traced "
                    "again every time",
                    hint=f"build it once (in __init__, or under `if self.{fact['attr']} is "
                         "None:`) and call the one object")

