"""TFP201: a tensor element copied to the host (``.numpy()``, ``float(t)``...) per iteration."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding
from tfperf.lint.rule import Example, Rule
from tfperf.lint.rules._helpers_loops_sync import (
    converts_a_tensor,
    host_conversion,
    in_py_function,
    iterates_dataset,
    iterates_tensor,
    per_iteration_data,
    traced,
)
from tfperf.lint.rules._loops import element_loop, range_args, sized_by
from tfperf.lint.semantic import Context

_IDENTITY_OPS = (ast.Is, ast.IsNot, ast.In, ast.NotIn)


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
    return any(type(n) is ast.Subscript and ctx.source_of(n.value) == base  # type: ignore[attr-defined]
               for n in ast.walk(operand))


def _computed_in(ctx: Context, expr: ast.AST, loop: ast.AST) -> bool:
    """``expr`` is computed inside ``loop``: a call there, or a name assigned there."""
    if type(expr) is ast.Call:
        return True
    if type(expr) is ast.Name:
        b = ctx.binding(expr)  # type: ignore[arg-type]
        return b is not None and b.kind in ("assign", "augassign") and b.value is not None \
            and any(p is loop for p in ctx.ancestors(b.value))
    return False


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
    node_types = (ast.Call, ast.If, ast.IfExp)
    docs = """\
## What it does
Finds host conversions of tensor elements inside a loop: `t[i].numpy()`, `float(t[i])`,
`int(t[i])`, `bool(t[i])`, `np.array(t[i])`, `np.asarray(row)` over `for row in t`, a tensor
element used as an `if` condition (`if t[i] > 0:`, an implicit `bool()`), and the same on
values computed per element of a loop that walks a tensor (the loops TFP101 reports).
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

`.item()` does not exist on TensorFlow tensors; `t.numpy().item()` is reported at
`.numpy()`. Not reported: one conversion per batch of a dataset (`for batch in ds:
preds.append(model(batch).numpy())`), per step of a training loop, in a `while` loop's
convergence test, over a Python list of tensors, and inside `tf.py_function` bodies.
"""
    valid = (
        # One conversion, then NumPy.
        "import tensorflow as tf\n"
        "def f(scores):\n"
        "    values = tf.sigmoid(scores).numpy()\n"
        "    return [i for i in range(len(values)) if values[i] > 0.5]\n",
        # One conversion per batch of a dataset.
        "import tensorflow as tf\n"
        "def predict(model, ds):\n"
        "    out = []\n"
        "    for batch in ds:\n"
        "        out.append(model(batch).numpy())\n"
        "    return out\n",
        # A training loop logging its loss per step: not a loop over a tensor's elements.
        "import tensorflow as tf\n"
        "def fit(step, steps):\n"
        "    losses = []\n"
        "    for i in range(steps):\n"
        "        loss = step()\n"
        "        losses.append(float(loss))\n"
        "    return losses\n",
        # A list of weights saved one by one (a Python list, not a tensor's elements).
        "import tensorflow as tf\n"
        "def save(model):\n"
        "    return [w.numpy() for w in model.weights]\n",
        # A NumPy array indexed in a loop: no device involved (lookalike of t[i]).
        "import numpy as np\n"
        "import tensorflow as tf\n"
        "a = np.arange(10.0)\n"
        "total = 0.0\n"
        "for i in range(a.shape[0]):\n"
        "    total += float(a[i])\n",
        # Inside tf.function: TFP202's business, not this rule's.
        "import tensorflow as tf\n"
        "@tf.function\n"
        "def f(x):\n"
        "    for i in range(x.shape[0]):\n"
        "        tf.print(x[i].numpy())\n",
        # A convergence test in a while loop: one sync per iteration is the algorithm.
        "import tensorflow as tf\n"
        "def solve(step, x):\n"
        "    err = tf.constant(1.0)\n"
        "    while float(err) > 1e-6:\n"
        "        x, err = step(x)\n"
        "    return x\n",
    )
    invalid = (
        Example(
            "import tensorflow as tf\n"
            "scores = tf.random.uniform([100])\n"
            "keep = []\n"
            "for i in range(scores.shape[0]):\n"
            "    if float(scores[i]) > 0.5:\n"
            "        keep.append(i)\n",
            count=1, lines=(5,)),
        # `.numpy()` on each row of a tensor; `x[i].numpy()` with x sized by its shape.
        Example(
            "import tensorflow as tf\n"
            "def rows(t, x):\n"
            "    a = [r.numpy() for r in tf.unstack(t)]\n"
            "    b = []\n"
            "    for i in range(x.shape[0]):\n"
            "        b.append(x[i].numpy())\n"
            "    return a, b\n",
            count=2, lines=(3, 6)),
        # Implicit bool() of a tensor element in an `if`; np.asarray per row.
        Example(
            "import numpy as np\n"
            "import tensorflow as tensorflow_alias\n"
            "t = tensorflow_alias.constant([[1.0, -1.0], [2.0, 0.5]])\n"
            "for row in t:\n"
            "    if row[0] > 0:\n"
            "        print(np.asarray(row))\n",
            count=2, lines=(5, 6)),
        # A value computed per element of a loop over a tensor, then converted.
        Example(
            "from tensorflow import reduce_sum, ones\n"
            "x = ones([8, 4])\n"
            "sums = []\n"
            "for i in range(x.shape[0]):\n"
            "    s = reduce_sum(x[i] * 2.0)\n"
            "    sums.append(int(s))\n",
            count=1, lines=(6,)),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        if type(node) is ast.Call:
            conv = host_conversion(ctx, node)
            if conv is None or not ctx.imports_tf:
                return
            operand = conv.operand
            if conv.kind == "numpy":
                if not converts_a_tensor(ctx, conv):
                    return
            elif not ctx.is_tensor_like(operand):
                return
            message = f"{conv.label} of a tensor inside a loop: one device sync per iteration"
        else:
            operand = self._tested_tensor(ctx, node.test)  # type: ignore[attr-defined]
            if operand is None:
                return
            message = "tensor used as a condition inside a loop: one device sync per iteration"
        loops = ctx.enclosing_loops(node)
        if not loops or traced(ctx, node) or in_py_function(ctx, node):
            return
        if per_element_sync(ctx, operand, loops):
            yield self.finding(ctx, node if type(node) is ast.Call else node.test, message)  # type: ignore[attr-defined]

    @staticmethod
    def _tested_tensor(ctx: Context, test: ast.AST) -> ast.expr | None:
        """The tensor an ``if`` test turns into a Python bool (``t[i] > 0``, ``t[i]``)."""
        if not ctx.imports_tf:
            return None
        if type(test) is ast.Compare:
            if any(isinstance(op, _IDENTITY_OPS) for op in test.ops):  # type: ignore[attr-defined]
                return None
            for side in (test.left, *test.comparators):  # type: ignore[attr-defined]
                if ctx.is_tensor_like(side):
                    return side
            return None
        if type(test) in (ast.Subscript, ast.Name) and ctx.is_tensor_like(test):
            return test  # type: ignore[return-value]
        return None
