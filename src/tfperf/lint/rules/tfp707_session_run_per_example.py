"""TFP707: a TF1 session run fed one example of the loop's data at a time."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding
from tfperf.lint.analysis.callers import DEF_NODES, bound_arguments, calls_of
from tfperf.lint.analysis.examples import batch_of_one, one_example
from tfperf.lint.analysis.loops import iterates_dataset
from tfperf.lint.analysis.sessions import SessionRun, session_runs
from tfperf.lint.analysis.varying import per_iteration_data, preserved_operand
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

# `while` loops are left out: they are mostly agents stepping an environment, where the next
# input depends on this run's output and cannot be batched.
_FOR_LOOPS = (ast.For, ast.AsyncFor, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _target_names(ctx: Context, target: ast.AST) -> set[str]:
    """What an assignment target stores into: a name or attribute, the container of
    ``a[i] = ...`` (not its index), every element of a tuple target."""
    if type(target) in (ast.Name, ast.Attribute):
        return {ctx.source_of(target)}
    if type(target) is ast.Subscript:
        return _target_names(ctx, target.value)
    if type(target) is ast.Starred:
        return _target_names(ctx, target.value)
    if type(target) in (ast.Tuple, ast.List):
        return {n for e in target.elts for n in _target_names(ctx, e)}
    return set()


def _assigned_names(ctx: Context, call: ast.AST) -> set[str]:
    """Names the statement holding ``call`` assigns (what the run's result is stored in)."""
    for p in ctx.ancestors(call):
        if isinstance(p, ast.stmt):
            targets: list[ast.AST] = []
            if type(p) is ast.Assign:
                targets = list(p.targets)
            elif type(p) in (ast.AugAssign, ast.AnnAssign):
                targets = [p.target]
            return {n for t in targets for n in _target_names(ctx, t)}
    return set()


def _fetched_in_loop(ctx: Context, call: ast.AST, loop: ast.AST) -> set[str]:
    """Names that hold what the run fetched, followed through the loop: the run's targets,
    then what the loop assigns from them (``init_value = last_state``, a prediction written
    into ``history[t] = out[-1]``), until nothing new is reached."""
    held = _assigned_names(ctx, call)
    assigns = [n for n in ast.walk(loop) if type(n) in (ast.Assign, ast.AugAssign, ast.AnnAssign)]
    grew = bool(held)
    while grew:
        grew = False
        for a in assigns:
            value = getattr(a, "value", None)
            if value is None or not {ctx.source_of(n) for n in ast.walk(value)
                                     if type(n) in (ast.Name, ast.Attribute)} & held:
                continue
            targets = a.targets if type(a) is ast.Assign else [a.target]
            new = {n for t in targets for n in _target_names(ctx, t)} - held
            if new:
                held |= new
                grew = True
    return held


def _listed_example(ctx: Context, value: ast.AST, loop: ast.AST) -> bool:
    """``[x]``: a feed of a one-element list of the loop's data (a batch of one)."""
    return type(value) is ast.List and len(value.elts) == 1 \
        and per_iteration_data(ctx, value.elts[0], loop)


def _parameter_behind(ctx: Context, expr: ast.AST, fn: ast.AST, depth: int = 0) -> str | None:
    """The parameter of ``fn`` that ``expr`` is (through local names, casts and re-wraps,
    arithmetic with constants): ``img`` in ``x = img.astype('f') / 255.0``."""
    if depth > 6 or not isinstance(fn, DEF_NODES):
        return None
    if isinstance(expr, ast.Name):
        params = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
        b = ctx.binding(expr)
        if b is not None and b.kind == "param" and expr.id in params \
                and ctx.enclosing_function(expr) is fn:
            return expr.id
        if b is not None and b.kind == "assign" and b.value is not None \
                and b.value is not expr and ctx.enclosing_function(b.value) is fn:
            return _parameter_behind(ctx, b.value, fn, depth + 1)
        return None
    if isinstance(expr, ast.Call):
        inner = preserved_operand(ctx, expr)
        return None if inner is None else _parameter_behind(ctx, inner, fn, depth + 1)
    if isinstance(expr, ast.BinOp):
        return _parameter_behind(ctx, expr.left, fn, depth + 1)
    return None


def _one_example_per_call(ctx: Context, run: SessionRun, value: ast.AST) -> ast.Call | None:
    """A call, in a ``for`` loop, of the function holding ``run``, that passes one example
    of the loop's data for the parameter ``value`` makes into a batch of one
    (``def predict(img): sess.run(p, {x: img[None]})`` called as ``predict(img)`` per image),
    and no argument that the loop assigns from the call's result (a state carried along)."""
    fn = ctx.enclosing_function(run.call)
    if fn is None or not isinstance(fn, DEF_NODES):
        return None
    example = batch_of_one(ctx, value)
    if example is None:
        inner = value
        if type(inner) is ast.Name:  # `batch = np.expand_dims(img, 0)` first
            b = ctx.binding(inner)
            inner = b.value if b is not None and b.kind == "assign" and b.value is not None \
                else inner
        example = batch_of_one(ctx, inner) if inner is not value else None
    param = _parameter_behind(ctx, example, fn) if example is not None else None
    if param is None:
        return None
    for call in calls_of(ctx, fn):
        loops = [lp for lp in ctx.enclosing_loops(call) if type(lp) is not ast.While]
        if not loops or ctx.enclosing_function(call) is fn \
                or any(iterates_dataset(ctx, lp) for lp in loops):
            continue
        bound = bound_arguments(fn, call)
        arg = bound.get(param) if bound is not None else None
        if arg is None or not per_iteration_data(ctx, arg, loops[0]):
            continue
        passed = {ctx.source_of(n) for a in (*call.args, *(k.value for k in call.keywords))
                  for n in ast.walk(a) if type(n) in (ast.Name, ast.Attribute)}
        if passed & _fetched_in_loop(ctx, call, loops[0]):
            continue  # `out, state = step(o, state)`: the caller feeds back what a run gave
        return call
    return None


class SessionRunPerExample(Rule):
    code = "TFP707"
    batches_loops = True
    name = "session-run-per-example"
    message = "session.run fed one example at a time in a loop: feed a batch"
    hint = ("stack the examples and run once per batch: sess.run(out, feed_dict={x: "
            "xs[i:i + 256]}) (the placeholder's batch axis should be None)")
    claims = ("S9", "S12")
    group = "preview"  # new; judged on too few findings to run by default
    requires_imports = frozenset({"tensorflow"})
    node_types = ()
    docs = """\
## What it does
In TF1 graph code, finds a `session.run` inside a `for` loop (or a comprehension) whose
`feed_dict` feeds one example of the loop's data made into a batch of one: `x[None]`,
`np.expand_dims(x, 0)`, `x.reshape(1, -1)`, `X[i:i + 1]`, `np.array([x])`, `[x]`, where `x` is
the loop's element or something indexed by the loop variable; or such a run in a function
of the module that makes its parameter a batch of one (`def predict(img): return
sess.run(p, {x: img[None]})`), called in a `for` loop with one example of the loop's data.

## Why is this bad?
Each `session.run` is a host round trip (claim S9): Python to the runtime, pruning the graph
for the fetches, copying the fed arrays in and the fetches out, and one launch per op of the
network. A batch of one pays all of it per example and leaves the hardware's parallelism
idle (claim S12: whole-tensor work beats Python loops of small ops by orders of magnitude).
Fed a batch, the same run costs about as much as one example.

## Example
```python
for img in images:
    preds.append(sess.run(probs, feed_dict={x: img[None]}))
```

## Use instead
```python
for i in range(0, len(images), 256):
    preds.extend(sess.run(probs, feed_dict={x: images[i:i + 256]}))
```

## Fix safety
No automatic fix: the graph's input must accept a batch (a placeholder whose first
dimension is `None`), and the loop's body may do more per example than the run.

## Known limitations
Not reported: `while` loops (an agent stepping an environment feeds the observation its
last action produced: it cannot be batched), runs fed what they fetched, also through names
the loop assigns from it (an RNN's state fed back as `carry = new_state`, sampling or
forecasting one step at a time from the values earlier steps wrote) or through a function
holding the run whose caller passes back what it returned (`p, state = step(o, state)`),
loops over `tf.data` datasets, and examples that are loaded per iteration (a frame read from
a video, an image read from a file) or turned into a batch of one by a function of another
module: the rule cannot see that they would stack.
"""
    valid = (
        # One run per batch.
        Valid("""
            import tensorflow as tf
            sess = tf.Session()
            for i in range(0, len(xs), 128):
                out = sess.run(probs, feed_dict={x: xs[i:i + 128]})
        """),
        # An agent: the observation comes from the environment per step.
        Valid("""
            import tensorflow as tf
            sess = tf.Session()
            obs = env.reset()
            for t in range(1000):
                action = sess.run(policy, feed_dict={x: obs[None]})
                obs, reward, done, _ = env.step(action)
        """),
        # Sampling: the state fetched by one run is fed to the next.
        Valid("""
            import numpy as np
            import tensorflow as tf
            sess = tf.Session()
            state = sess.run(initial)
            for ch in prime:
                probs, state = sess.run([out, final], feed_dict={x: np.array([ch]), s: state})
        """),
        # A state carried across windows of one series through another name, and a forecast
        # that feeds each step the values the previous steps wrote: sequential, not a batch.
        Valid("""
            import numpy as np
            import tensorflow as tf
            sess = tf.Session()
            carry = np.zeros((1, 64))
            for k in range(0, len(series) - w, w):
                out, new_carry = sess.run([pred, state_out],
                                          feed_dict={x: np.expand_dims(series[k:k + w], 0),
                                                     state_in: carry})
                carry = new_carry
            history = np.zeros(len(series) + horizon)
            for t in range(horizon):
                window = history[t:t + w]
                step = sess.run(pred, feed_dict={x: np.expand_dims(window, 0)})
                history[t + w] = step[-1]
        """),
        # A step function fed one observation and the state its last call returned: the
        # caller carries the state from run to run, so the steps are sequential.
        Valid("""
            import tensorflow as tf
            sess = tf.Session()
            def step(obs, state):
                return sess.run([probs, final], feed_dict={x: obs[None], s0: state})
            state = sess.run(initial)
            for o in observations:
                p, state = step(o, state)
        """),
        # Images loaded per iteration: new data, not the loop's.
        Valid("""
            import numpy as np
            import tensorflow as tf
            sess = tf.Session()
            for path in paths:
                img = load(path)
                label = sess.run(pred, feed_dict={x: np.expand_dims(img, 0)})
        """),
        # A helper called once, on the whole set.
        Valid("""
            import tensorflow as tf
            sess = tf.Session()
            def predict(img):
                return sess.run(probs, feed_dict={x: img[None]})
            first = predict(images[0])
        """),
        # One example shown several times (an inner loop repeating one input).
        Valid("""
            import tensorflow as tf
            sess = tf.Session()
            for img in images:
                for k in range(4):
                    shown = sess.run(augmented, feed_dict={x: img[None], seed: k})
        """),
    )
    invalid = (
        Invalid("""
            import tensorflow as tf
            sess = tf.Session()
            preds = []
            for img in images:
                preds.append(sess.run(probs, feed_dict={x: img[None]}))
        """, count=1, lines=(5,)),
        # Indexed by the loop variable, through a variable, in a method on self.sess.
        Invalid("""
            import numpy as np
            import tensorflow as tf
            class Net:
                def predict_all(self, data):
                    out = []
                    for i in range(len(data)):
                        one = np.expand_dims(data[i], axis=0)
                        out.append(self.sess.run(self.logits, feed_dict={self.x: one}))
                    return out
        """, count=1, lines=(8,)),
        # A helper that makes its parameter a batch of one, called per image.
        Invalid("""
            import numpy as np
            import tensorflow as tf
            sess = tf.Session()
            def classify(image):
                batch = np.expand_dims(image.astype(np.float32) / 255.0, 0)
                return sess.run(probs, feed_dict={x: batch})
            labels = []
            for image in test_images:
                labels.append(classify(image))
        """, count=1, lines=(6,)),
        # A one-element list of the loop's sentence.
        Invalid("""
            import tensorflow as tf
            sess = tf.Session()
            for sentence in sentences:
                vec = sess.run(embedding, feed_dict={tokens: [sentence]})
        """, count=1, lines=(4,)),
        # A comprehension, with a batch of one made by slicing.
        Invalid("""
            import tensorflow.compat.v1 as tf
            with tf.Session() as sess:
                codes = [sess.run(z, {x: X[i:i + 1]}) for i in range(X.shape[0])]
        """, count=1, lines=(3,)),
    )

    def check_module(self, ctx: Context) -> Iterator[Finding]:
        for run in session_runs(ctx):
            if run.saver is not None or type(run.feed) is not ast.Dict:
                continue
            loops = [lp for lp in ctx.enclosing_loops(run.call) if type(lp) is not ast.While]
            if any(iterates_dataset(ctx, lp) for lp in loops):
                continue
            # Fed back what it fetched (a recurrent state): one step depends on the last.
            fed = {ctx.source_of(n) for v in run.feed.values if v is not None
                   for n in ast.walk(v) if type(n) in (ast.Name, ast.Attribute)}
            if fed & (_fetched_in_loop(ctx, run.call, loops[0]) if loops
                      else _assigned_names(ctx, run.call)):
                continue
            if loops and any(v is not None and (one_example(ctx, v, loops[0])
                                                or _listed_example(ctx, v, loops[0]))
                             for v in run.feed.values):
                yield self.finding(ctx, run.call, f"{run.session}.run fed one example at a time "
                                   "in a loop: feed a batch")
                continue
            for v in run.feed.values:
                call = _one_example_per_call(ctx, run, v) if v is not None else None
                if call is not None:
                    yield self.finding(
                        ctx, run.call, f"{run.session}.run fed one example at a time: its "
                        f"function is called once per example in a loop (line {call.lineno}); "
                        "feed a batch")
                    break
