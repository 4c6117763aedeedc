"""TFP201: a tensor element copied to the host (``.numpy()``, ``float(t)``...) per iteration."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding
from tfperf.lint.analysis.host import converts_a_tensor, host_conversion
from tfperf.lint.analysis.loops import (
    element_loop,
    iterates_dataset,
    iterates_tensor,
    range_args,
    sized_by,
)
from tfperf.lint.analysis.traced import in_py_function, traced
from tfperf.lint.analysis.varying import per_iteration_data
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

_IDENTITY_OPS = (ast.Is, ast.IsNot, ast.In, ast.NotIn)
# Callee names (last part) of the conversions `host_conversion` knows.
_CONVERTERS = frozenset({"numpy", "array", "asarray", "asanyarray", "ascontiguousarray",
                         "float", "int", "bool", "complex"})


def _shape_sized(ctx: Context, loop: ast.AST, operand: ast.AST) -> bool:
    """``for i in range(x.shape[0])`` / ``range(tf.shape(x)[0])`` and ``operand`` indexes
    that same ``x``: an element of an array (a list has no ``.shape``)."""
    it = getattr(loop, "iter", None)
    args = range_args(ctx, it) if it is not None else None
    if not args:
        return False
    sized = sized_by(ctx, args[0] if len(args) == 1 else args[1])
    if sized is None or sized.how == "len":
        return False
    base = ctx.source_of(sized.obj)
    return any(type(n) is ast.Subscript and ctx.source_of(n.value) == base
               for n in ast.walk(operand))


def _computed_in(ctx: Context, expr: ast.AST, loop: ast.AST) -> bool:
    """``expr`` is computed inside ``loop``: a call there, or a name assigned there."""
    if type(expr) is ast.Call:
        return True
    if type(expr) is ast.Name:
        b = ctx.binding(expr)
        return b is not None and b.kind in ("assign", "augassign") and b.value is not None \
            and any(p is loop for p in ctx.ancestors(b.value))
    return False


def _in_print(ctx: Context, node: ast.AST) -> bool:
    """``node`` is (inside) an argument of ``print(...)``."""
    for p in ctx.ancestors(node):
        if type(p) is ast.Call and ctx.is_builtin(p.func, "print"):
            return True
        if isinstance(p, ast.stmt):
            return False
    return False


def _logged_beside_a_needed_sync(ctx: Context, node: ast.Call, loop: ast.AST) -> bool:
    """``node`` only feeds a ``print`` while the same iteration converts another tensor to
    the host for Python to use (``env.step(action.numpy())``): that sync is paid anyway,
    and the printed value, computed by the same step, adds a copy but no wait of its own."""
    if not _in_print(ctx, node):
        return False
    for stmt in getattr(loop, "body", ()):
        for n in ast.walk(stmt):
            if n is node or type(n) is not ast.Call or _in_print(ctx, n) \
                    or not _unconditional(ctx, n, loop):
                continue
            conv = host_conversion(ctx, n)
            if conv is not None and conv.kind in ("numpy", "np") \
                    and converts_a_tensor(ctx, conv):
                return True
    return False


def _unconditional(ctx: Context, node: ast.AST, loop: ast.AST) -> bool:
    """``node`` runs on every iteration of ``loop``: no ``if`` (or ``try`` handler) between
    them. Logging every 100 steps (``if step % 100 == 0:``) is not a per-iteration sync."""
    for p in ctx.ancestors(node):
        if p is loop:
            return True
        if type(p) in (ast.If, ast.IfExp, ast.ExceptHandler, ast.BoolOp):
            return False
    return False


def _tensor_step(ctx: Context, name: ast.AST, loop: ast.AST, numpy_call: bool) -> bool:
    """``name`` is (re)computed by tensor work in this iteration: assigned in the loop from a
    TF op, or from arithmetic on a tensor or on itself (a loop-carried value, ``x = x * 0.99
    + 0.01``, a tensor when ``.numpy()`` is called on it). A value returned by an unknown
    function (``loss = train_step(batch)``) is not known to be tensor work."""
    if type(name) is not ast.Name or not _computed_in(ctx, name, loop):
        return False
    b = ctx.binding(name)
    value = b.value.value if b.kind == "augassign" else b.value
    if type(value) is ast.Call:
        return ctx.is_tensor_like(value)
    if type(value) not in (ast.BinOp, ast.UnaryOp):
        return False
    if ctx.is_tensor_like(value):
        return True
    own = name.id
    return numpy_call and (b.kind == "augassign" or any(
        type(n) is ast.Name and n.id == own for n in ast.walk(value)))


def _steps_loop(ctx: Context, loop: ast.AST) -> bool:
    """A ``for`` over a ``range`` or a tensor: the steps of an eager computation."""
    return type(loop) in (ast.For, ast.AsyncFor) and (
        range_args(ctx, loop.iter) is not None or iterates_tensor(ctx, loop))


def per_iteration_sync(ctx: Context, node: ast.AST, operand: ast.AST, numpy_call: bool,
                       loops: list[ast.AST]) -> bool:
    """Whether converting ``operand`` at ``node`` syncs once per iteration of a hot loop:
    see :func:`per_element_sync`, or (the article's S1 case) a tensor recomputed by TF ops
    every step of a ``range`` loop and converted unconditionally in each."""
    if per_element_sync(ctx, operand, loops):
        return True
    loop = loops[0]
    return _steps_loop(ctx, loop) and _unconditional(ctx, node, loop) \
        and _tensor_step(ctx, operand, loop, numpy_call)


def per_element_sync(ctx: Context, operand: ast.AST, loops: list[ast.AST]) -> bool:
    """Whether converting ``operand`` happens once per element of a tensor: it is an element
    (``t[i]``, the row of ``for row in t``) or a value computed per element of a loop that
    walks a tensor (TFP101's loops). Loops over datasets (one batch per iteration) end the
    search; ``while`` loops (convergence checks) are skipped."""
    for loop in loops:
        if type(loop) is ast.While:
            continue
        if iterates_dataset(ctx, loop):
            return False
        over_tensor = iterates_tensor(ctx, loop)
        # `.numpy()` alone proves a tensor, not a tensor's element: `tensors[i]` may index
        # a Python list of tensors (weights saved one by one), which is not a hot path.
        tensorish = ctx.is_tensor_like(operand) or over_tensor \
            or _shape_sized(ctx, loop, operand)
        if tensorish and per_iteration_data(ctx, operand, loop, bare_target=over_tensor):
            return True
        if ctx.is_tensor_like(operand) and _computed_in(ctx, operand, loop) \
                and element_loop(ctx, loop) is not None:
            return True
    return False


class HostSyncInLoop(Rule):
    code = "TFP201"
    name = "host-sync-in-loop"
    message = "tensor copied to the host inside a loop: one device sync per iteration"
    hint = ("convert once, outside the loop (t.numpy() then index the NumPy array), or keep "
            "the per-element work in whole-tensor TF ops")
    claims = ("S1", "S4")
    group = "pedantic"
    node_types = (ast.Call, ast.If, ast.IfExp)
    needs_tf = True  # nothing to report where neither TF nor Keras is imported
    callee_names = _CONVERTERS
    docs = """\
## What it does
Finds host conversions of tensor elements inside a loop: `t[i].numpy()`, `float(t[i])`,
`int(t[i])`, `bool(t[i])`, `np.array(t[i])`, `np.asarray(row)` over `for row in t`, a tensor
element used as an `if` condition (`if t[i] > 0:`, an implicit `bool()`), and the same on
values computed per element of a loop that walks a tensor (the loops TFP101 reports).
Also the article's S1 case: in a `range` loop of eager tensor steps, a tensor recomputed by
TF ops each step and converted on every step (`x = x * 0.99 + 0.01; x.numpy()`).
Outside `tf.function` only (inside, TFP202 reports it).

## Why is this bad?
Converting a tensor to a Python or NumPy value copies it from the device to the host and
waits until every op queued before it has finished (claim S1). Once per element, the device
stalls after every tiny op and the PCIe round trips add up; leaving the device in the middle
of a computation can eat every other gain (claim S4).

## Example
```python
for i in range(scores.shape[0]):
    if float(scores[i]) > 0.5:
        keep.append(i)
```

## Use instead
```python
keep = tf.where(scores > 0.5)[:, 0]          # stays on the device
# or, when host values are needed: one copy, then plain NumPy
values = scores.numpy()
keep = [i for i in range(len(values)) if values[i] > 0.5]
```

## Fix safety
No automatic fix: moving the conversion out of the loop changes the loop's code.

## Known limitations
`.item()` does not exist on TensorFlow tensors; `t.numpy().item()` is reported at
`.numpy()`. Not reported: one conversion per batch of a dataset (`for batch in ds:
preds.append(model(batch).numpy())`), a value returned by a function the rule cannot see
into (`loss = train_step(batch); float(loss)`), conditional logging (`if step % 100 == 0:`),
a `while` loop's or an `if`'s convergence test, a Python list of tensors, and
`tf.py_function` bodies.
"""
    valid = (
        # The printed loss rides on a sync the loop needs anyway (actions for the env).
        Valid("""
            import numpy as np
            import tensorflow as tf
            def run(model, env, obs, n):
                for iteration in range(n):
                    probas = model(np.array(obs))
                    loss = tf.reduce_mean(probas)
                    print("loss", loss.numpy())
                    actions = (np.random.rand(len(obs), 1) > probas.numpy()).astype(np.int32)
                    obs = env.step(actions)
        """),
        # keras.ops.convert_to_numpy already made a NumPy array: np.array() copies nothing.
        Valid("""
            import numpy as np
            from keras import ops
            def generate(model, tokens, n):
                for i in range(n):
                    logits = model(ops.convert_to_tensor([tokens]))
                    next_token = ops.convert_to_numpy(ops.argmax(logits[0, -1]))
                    tokens.append(np.array(next_token).item())
                return tokens
        """),
        # One conversion, then NumPy.
        Valid("""
            import tensorflow as tf
            def f(scores):
                values = tf.sigmoid(scores).numpy()
                return [i for i in range(len(values)) if values[i] > 0.5]
        """),
        # One conversion per batch of a dataset.
        Valid("""
            import tensorflow as tf
            def predict(model, ds):
                out = []
                for batch in ds:
                    out.append(model(batch).numpy())
                return out
        """),
        # A training loop logging its loss per step: not a loop over a tensor's elements.
        Valid("""
            import tensorflow as tf
            def fit(step, steps):
                losses = []
                for i in range(steps):
                    loss = step()
                    losses.append(float(loss))
                return losses
        """),
        # A list of weights saved one by one (a Python list, not a tensor's elements).
        Valid("""
            import tensorflow as tf
            def save(model):
                return [w.numpy() for w in model.weights]
        """),
        # A NumPy array indexed in a loop: no device involved (lookalike of t[i]).
        Valid("""
            import numpy as np
            import tensorflow as tf
            a = np.arange(10.0)
            total = 0.0
            for i in range(a.shape[0]):
                total += float(a[i])
        """),
        # Inside tf.function: TFP202's business, not this rule's.
        Valid("""
            import tensorflow as tf
            @tf.function
            def f(x):
                for i in range(x.shape[0]):
                    tf.print(x[i].numpy())
        """),
        # Logging every 100 steps: the sync is not per iteration.
        Valid("""
            import tensorflow as tf
            def run(x, steps):
                for step in range(steps):
                    x = tf.tanh(x) * 0.5
                    if step % 100 == 0:
                        print(step, x.numpy())
                return x
        """),
        # A convergence test in a while loop: one sync per iteration is the algorithm.
        Valid("""
            import tensorflow as tf
            def solve(step, x):
                err = tf.constant(1.0)
                while float(err) > 1e-6:
                    x, err = step(x)
                return x
        """),
    )
    invalid = (
        Invalid("""
            import tensorflow as tf
            scores = tf.random.uniform([100])
            keep = []
            for i in range(scores.shape[0]):
                if float(scores[i]) > 0.5:
                    keep.append(i)
        """, count=1, lines=(5,)),
        # `.numpy()` on each row of a tensor; `x[i].numpy()` with x sized by its shape.
        Invalid("""
            import tensorflow as tf
            def rows(t, x):
                a = [r.numpy() for r in tf.unstack(t)]
                b = []
                for i in range(x.shape[0]):
                    b.append(x[i].numpy())
                return a, b
        """, count=2, lines=(3, 6)),
        # Implicit bool() of a tensor element in an `if`; np.asarray per row.
        Invalid("""
            import numpy as np
            import tensorflow as tensorflow_alias
            t = tensorflow_alias.constant([[1.0, -1.0], [2.0, 0.5]])
            for row in t:
                if row[0] > 0:
                    print(np.asarray(row))
        """, count=2, lines=(5, 6)),
        # The article's S1 case: eager steps read back on every step; an inline training
        # step whose loss is printed each iteration.
        Invalid("""
            import tensorflow as tf
            def steps(x, w, opt):
                for _ in range(20):
                    x = x * 0.99 + 0.01
                    x.numpy()
                for step in range(1000):
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(tf.square(x * w))
                    opt.apply_gradients(zip(tape.gradient(loss, [w]), [w]))
                    print(step, float(loss))
                return x
        """, count=2, lines=(5, 10)),
        # A value computed per element of a loop over a tensor, then converted.
        Invalid("""
            from tensorflow import reduce_sum, ones
            x = ones([8, 4])
            sums = []
            for i in range(x.shape[0]):
                s = reduce_sum(x[i] * 2.0)
                sums.append(int(s))
        """, count=1, lines=(6,)),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        if type(node) is ast.Call:
            func = node.func
            if (getattr(func, "attr", None) or getattr(func, "id", None)) not in _CONVERTERS:
                return  # cheap test first: this runs for every call and `if`
        if not ctx.imports_tf:
            return
        loops = ctx.enclosing_loops(node)  # parent links only: no name resolution yet
        if not loops:
            return
        if type(node) is ast.Call:
            conv = host_conversion(ctx, node)
            if conv is None:
                return
            operand, numpy_call = conv.operand, conv.kind == "numpy"
            if numpy_call:
                if not converts_a_tensor(ctx, conv):
                    return
            elif not ctx.is_tensor_like(operand):
                return
            message = f"{conv.label} of a tensor inside a loop: one device sync per iteration"
        else:
            operand = self._tested_tensor(ctx, node.test)  # type: ignore[assignment]
            if operand is None:
                return
            numpy_call = False  # unused for conditions
            message = "tensor used as a condition inside a loop: one device sync per iteration"
        if traced(ctx, node) or in_py_function(ctx, node):
            return
        # A condition per step (`if err < tol: break`) is a convergence test: elements only.
        if type(node) is ast.Call and _logged_beside_a_needed_sync(ctx, node, loops[0]):
            return
        if per_element_sync(ctx, operand, loops) if type(node) is not ast.Call \
                else per_iteration_sync(ctx, node, operand, numpy_call, loops):
            yield self.finding(ctx, node if type(node) is ast.Call else node.test, message)

    @staticmethod
    def _tested_tensor(ctx: Context, test: ast.AST) -> ast.expr | None:
        """The tensor an ``if`` test turns into a Python bool (``t[i] > 0``, ``t[i]``)."""
        if not ctx.imports_tf:
            return None
        if type(test) is ast.Compare:
            if any(isinstance(op, _IDENTITY_OPS) for op in test.ops):
                return None
            for side in (test.left, *test.comparators):
                if ctx.is_tensor_like(side):
                    return side
            return None
        if type(test) in (ast.Subscript, ast.Name) and ctx.is_tensor_like(test):
            return test  # type: ignore[return-value]
        return None
