"""TFP109: the same TensorFlow work done piece by piece over one tensor, then put back together."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from tfperf.core.findings import Finding
from tfperf.lint.analysis.loops import element_loop
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context, returns_tensor

if TYPE_CHECKING:
    from tfperf.analysis.loops import Loop

# How collected pieces are put back together: the loop rebuilt one tensor from them.
_REJOINED = frozenset({"stack", "concat", "add_n", "convert_to_tensor", "pack",
                       "concatenate", "reduce_sum", "reduce_mean", "array"})
# Sources of a list of tensors cut from one tensor (the loop model's `Domain.source`).
_CUT = frozenset({"split", "unstack", "slices"})


def _tf_work_on(ctx: Context, loop: Loop, names: set[str]) -> bool:
    """The body calls a tensor-returning TF API on one of ``names`` (the pieces) or on a
    subscript with the iteration's index (``x[:, i]``)."""
    indexed = {id(ix.node) for ix in loop.indexes}
    for n in loop.body:
        if type(n) is not ast.Call:
            continue
        q = ctx.call_qualname(n)
        if not q or not returns_tensor(q):
            continue
        for a in [*n.args, *(k.value for k in n.keywords)]:
            for m in ast.walk(a):
                if (type(m) is ast.Name and m.id in names) or id(m) in indexed:
                    return True
    return False


def _callee_per_iteration(loop: Loop, names: set[str]) -> bool:
    """A different function or layer each iteration (``layer(p)`` for a layer of a list,
    ``self.heads[i](p)``): no one op does every piece."""
    for n in loop.body:
        if type(n) is not ast.Call:
            continue
        f: Any = n.func
        if type(f) is ast.Name and f.id in names:
            return True
        if type(f) is ast.Subscript and any(type(m) is ast.Name and m.id in names
                                            for m in ast.walk(f.slice)):
            return True
    return False


def _rejoined(loop: Loop) -> str | None:
    """How the pieces' results come back together: "stack"... or "assign" (written back
    into an element: ``out[i] = ...``, ``v.assign(...)``); ``None`` when they do not."""
    for r in loop.results:
        if r.how in ("append", "element") and r.then in _REJOINED:
            return r.then
        if r.how == "assign_back":
            return "assign"
    return None


class LoopOverTensorPieces(Rule):
    code = "TFP109"
    batches_loops = True
    name = "loop-over-tensor-pieces"
    message = ("the same TF op run on each piece of one tensor, then put back together: "
               "one op over the whole tensor does it")
    hint = ("apply the op to the whole tensor (most take an axis, or broadcast), or "
            "tf.vectorized_map over the pieces' axis")
    claims = ("S12",)
    group = "preview"  # new (issue 25): waits for judged findings
    node_types = ()
    needs_tf = True
    docs = """\
## What it does
Finds a Python loop (a `for`, a `while` stepping a counter, or a comprehension) whose
iterations are independent and each run the same TensorFlow op on one piece of a single
tensor, the pieces being:
- the list `tf.split(x, n, axis)` or `tf.unstack(x, axis)` returns, or a comprehension of
  slices `[x[..., c] for c in range(C)]` (channels, heads, groups);
- a slice taken by a counter: `x[i]`, `x[:, i]`, `x[..., i]` in a `while i < n` loop;

and whose results are put back together: collected and then stacked, concatenated, summed
(`tf.stack`, `tf.concat`, `tf.add_n`, `tf.reduce_sum`), or written back element by element
(`out[i] = ...`, `v[i].assign(...)`). The loop model (`tfperf.analysis.loops`) answers
each part; `zip` and `enumerate` are unwrapped, names followed.

## Why is this bad?
Each piece costs one op launch (and, eagerly, Python dispatch) for a fraction of the work,
and putting the pieces back together copies every element once more. Whole-tensor ops beat
Python loops of small ops by orders of magnitude (claim S12): `tf.reduce_sum(x, axis=1)`
does in one kernel what `[tf.reduce_sum(p) for p in tf.unstack(x)]` does in `n` plus a
stack.

## Example
```python
pieces = tf.split(x, 8, axis=-1)
out = tf.concat([tf.nn.relu(p) * w for p in pieces], axis=-1)
```

## Use instead
```python
out = tf.nn.relu(x) * tf.repeat(w, 8, axis=-1)    # or whatever broadcasts to x
```
or `tf.vectorized_map(f, tf.stack(pieces))` when the body resists vectorising by hand.

## Fix safety
No automatic fix: the whole-tensor form depends on what the body computes.

## Known limitations
Not reported: loops that carry a value from one iteration to the next (a recurrence, an
RNN stepped over `tf.unstack(x, axis=1)`), a different layer or function per piece
(`[head(p) for head, p in zip(self.heads, pieces)]`), a model's variables (each is a
different tensor; their per-variable updates are not reported yet), loops over a range
that TFP101 or TFP103
already report (a tensor walked element by element, appended then stacked), and pieces
whose results are not put back together.
"""
    valid = (
        # The whole-tensor form.
        Valid("""
            import tensorflow as tf
            def f(x, w):
                return tf.nn.relu(x) * w
        """, spelling="loop: comprehension"),
        # An RNN stepped over the time axis: each step reads the previous state.
        Valid("""
            import tensorflow as tf
            def rnn(cell, x, state):
                outputs = []
                for x_t in tf.unstack(x, axis=1):
                    out, state = cell(x_t, state)
                    outputs.append(out)
                return tf.stack(outputs, axis=1)
        """, spelling="loop: for"),
        # A different head per piece: no one op does them all.
        Valid("""
            import tensorflow as tf
            def heads(x, layers):
                pieces = tf.split(x, len(layers), axis=-1)
                return tf.concat([layer(p) for layer, p in zip(layers, pieces)], axis=-1)
        """, spelling="name"),
        # Pieces kept apart (returned as a list): nothing is put back together.
        Valid("""
            import tensorflow as tf
            def parts(x):
                return [tf.reduce_sum(p) for p in tf.split(x, 4)]
        """, spelling="index: split pieces"),
        # A counter loop whose step reads what the previous step wrote.
        Valid("""
            import tensorflow as tf
            def cumulative(x, n):
                out = [x[0]]
                i = 1
                while i < n:
                    out.append(out[-1] + x[i])
                    i += 1
                return tf.stack(out)
        """, spelling="loop: while counter"),
        # A helper module whose loop steps a recurrence: not batchable from the caller.
        Valid("""
            from helpers import decode
            def run(cell, x, state):
                return decode(cell, x, state)
        """, files={"helpers.py": """
            import tensorflow as tf
            def decode(cell, x, state):
                outs = []
                for x_t in tf.unstack(x, axis=1):
                    out, state = cell(x_t, state)
                    outs.append(out)
                return tf.stack(outs, axis=1)
        """}, spelling="module"),
        Valid("""
            import tensorflow as tf
            x = tf.ones([4, 8])
            # %%
            y = tf.nn.relu(x)
        """, notebook=True, spelling="notebook"),
    )
    invalid = (
        Invalid("""
            import tensorflow as tf
            def f(x, w):
                pieces = tf.split(x, 8, axis=-1)
                return tf.concat([tf.nn.relu(p) * w for p in pieces], axis=-1)
        """, count=1, lines=(4,), spelling="loop: comprehension"),
        # A for loop over tf.split's column blocks, appended then stacked.
        Invalid("""
            import tensorflow as tf
            def block_norms(x):
                out = []
                for block in tf.split(x, 4, axis=1):
                    out.append(tf.norm(block, axis=1))
                return tf.stack(out, axis=1)
        """, count=1, lines=(4,), spelling="loop: for"),
        # A while loop stepping a counter over x[:, i], written back into a variable.
        Invalid("""
            import tensorflow as tf
            def scale_columns(x, out, n):
                i = 0
                while i < n:
                    out[:, i].assign(tf.math.sqrt(x[:, i]))
                    i += 1
        """, count=1, lines=(4,), spelling="loop: while counter"),
        # Channel slices through a name, with enumerate, summed at the end.
        Invalid("""
            import tensorflow as tf
            def energy(img):
                channels = [img[..., c] for c in range(3)]
                parts = []
                for k, ch in enumerate(channels):
                    parts.append(tf.reduce_mean(tf.square(ch)))
                return tf.add_n(parts)
        """, count=1, lines=(5,), spelling="name"),
        # zip of two lists of pieces of one tensor each.
        Invalid("""
            import tensorflow as tf
            def mix(a, b):
                pa = tf.unstack(a, axis=0)
                pb = tf.unstack(b, axis=0)
                return tf.stack([tf.matmul(x, y) for x, y in zip(pa, pb)])
        """, count=1, lines=(5,), spelling="index: zip of pieces"),
        # The loop is in a helper of another module; the caller's file is clean.
        Invalid("""
            from helpers import per_channel
            def run(x):
                return per_channel(x)
        """, files={"helpers.py": """
            import tensorflow as tf
            def per_channel(x):
                return tf.stack([tf.reduce_max(c) for c in tf.unstack(x, axis=-1)])
        """}, count=1, spelling="module"),
        Invalid("""
            import tensorflow as tf
            x = tf.random.normal([4, 16])
            # %%
            pieces = tf.split(x, 4, axis=1)
            y = tf.concat([tf.math.softplus(p) for p in pieces], axis=1)
        """, count=1, notebook=True, spelling="notebook"),
    )

    def check_module(self, ctx: Context) -> Iterator[Finding]:
        if not ctx.imports_tf:
            return
        from tfperf.analysis.loops import loops

        for loop in loops(ctx):
            if loop.form not in ("for", "while", "comprehension") or loop.shape != "map":
                continue
            d = loop.domain
            if d.kind == "tensor_list" and d.source in _CUT:
                names = set(d.items)
            elif d.kind == "counter" and loop.indexes:
                names = set()  # the work must be on the slices the counter takes
            else:
                continue
            if type(loop.node) is not ast.While and element_loop(ctx, loop.node) is not None:
                continue  # TFP101's: a tensor walked element by element
            if _callee_per_iteration(loop, names | ({d.index} if d.index else set())):
                continue
            if not _tf_work_on(ctx, loop, names) or _rejoined(loop) is None:
                continue
            yield self.finding(ctx, loop.node, end_node=_header_end(loop.node))


def _header_end(node: Any) -> ast.AST:
    t = type(node)
    if t in (ast.For, ast.AsyncFor):
        return node.iter
    if t is ast.While:
        return node.test
    return node
