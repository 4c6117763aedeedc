"""TFP401: a transpose followed by its inverse permutation (two full copies for nothing)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Edit, Finding, Fix
from tfperf.lint.analysis.assignments import assigned_value, block_holding, loads_bound_by
from tfperf.lint.analysis.traced import surely_eager
from tfperf.lint.analysis.transposes import TRANSPOSE_CALLS, Transpose, transpose_of, undoes
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context


def _statement_of(ctx: Context, node: ast.AST) -> ast.stmt | None:
    for p in [node, *ctx.ancestors(node)]:
        if isinstance(p, ast.stmt):
            return p
    return None


def _stores(nodes: list[ast.stmt], name: str) -> bool:
    return any(type(n) is ast.Name and n.id == name and type(n.ctx) is not ast.Load
               for s in nodes for n in ast.walk(s))


class TransposeRoundTrip(Rule):
    code = "TFP401"
    name = "transpose-round-trip"
    message = "tf.transpose undone by its inverse permutation: two full copies for nothing"
    hint = "use the tensor you transposed; keep one layout (S10)"
    claims = ("S10", "S5")
    group = "preview"  # eager code only now: no judged finding left (docs: Known limitations)
    node_types = (ast.Call,)
    callee_qualnames = TRANSPOSE_CALLS
    fixable = True
    docs = """\
## What it does
Finds a `tf.transpose` (or `keras.ops.transpose`) whose input is itself a transpose of `x`
with the inverse permutation (`[0, 2, 3, 1]` then `[0, 3, 1, 2]`; or no `perm` twice),
nested or through a variable. The result is `x` again.

Only code that surely runs eagerly is reported: module-level code (a notebook cell, a
script) and top-level functions this module calls only from there. In a graph
(`tf.function`, a Keras `call`, a dataset map, TF1 graph code) Grappler's arithmetic
optimizer removes a transpose followed by its inverse (`RemoveIdentityTranspose`): on this
machine (TF 2.21, CPU) a `[64, 512, 512]` round trip inside `tf.function` ran in 20.7 ms
against 20.1 ms without it, and in 74 ms against 30 ms with the arithmetic optimizer off,
while eagerly it cost about twice the plain op.

## Why is this bad?
Unlike `reshape`, which only rewrites shape metadata, a transpose copies every element into a
new buffer (claims S5, S10: `[8, 128, 128, 32]` with perm `[0, 3, 1, 2]` moves all 4 M
elements). A round trip pays two full copies and a temporary the size of the tensor to get
back the tensor you already had. It often appears when layout conversions from two helpers
meet; the article's advice is to keep one layout throughout.

## Example
```python
y = tf.transpose(x, [0, 2, 3, 1])
z = tf.transpose(y, [0, 3, 1, 2])
```

## Use instead
```python
z = x
```

## Fix safety
The fix replaces the outer transpose with `x` and, when the intermediate variable has no
other use, deletes the assignment of the first transpose. It is **safe** when `x` is known to
be a tensor (the result of a TensorFlow op, or a parameter of a traced function): a transpose
only moves elements, so the round trip returns `x`'s values bit for bit, with the same dtype
and shape. The one behaviour that goes away is the error the original raised on a tensor
whose rank does not match the permutation. When `x` may be something else (a `tf.Variable`,
which the transposes would have read into a new tensor, a NumPy array or a list, which they
would have converted), the fix is **unsafe**: check that `x` itself is acceptable there.
No fix is offered when `x` is rebound between the two transposes or the statements are not
in the same block.

## Known limitations
In `preview` (not on by default): since it reports only eager code, none of its judged
findings remain (its 4 findings on the development corpus were in a TF1 session graph, where
Grappler removes the round trip), so its precision on real eager code is not measured yet.
"""
    valid = (
        # A transpose the computation needs, and one back after a real op in between.
        Valid("""
            import tensorflow as tf
            def f(x, w):
                y = tf.transpose(x, [0, 2, 3, 1])
                y = tf.nn.conv2d(y, w, 1, 'SAME')
                return tf.transpose(y, [0, 3, 1, 2])
        """),
        # Same permutation twice is not a round trip ([0,2,3,1] twice ≠ identity).
        Valid("""
            import tensorflow as tf
            def f(x):
                return tf.transpose(tf.transpose(x, [0, 2, 3, 1]), [0, 2, 3, 1])
        """),
        # NumPy's transpose is not TensorFlow's (and copies nothing).
        Valid("""
            import numpy as np
            def f(x):
                return np.transpose(np.transpose(x, (1, 0)), (1, 0))
        """),
        # A user's own `transpose` function.
        Valid("""
            import tensorflow as tf
            def transpose(x, perm):
                return tf.reverse(x, perm)
            def f(x):
                return transpose(transpose(x, [1, 0]), [1, 0])
        """),
        # Permutations known only at run time: stay quiet.
        Valid("""
            import tensorflow as tf
            def f(x, p, q):
                return tf.transpose(tf.transpose(x, p), q)
            f(tf.ones([2, 3]), [1, 0], [1, 0])
        """),
        # Traced: Grappler removes the round trip from the graph.
        Valid("""
            import tensorflow as tf
            @tf.function
            def f(x):
                y = tf.transpose(x, [0, 2, 3, 1])
                return tf.transpose(y, [0, 3, 1, 2]) * 2.0
        """),
        # A helper this module never calls: it may run inside a graph (a layer's call).
        Valid("""
            import tensorflow as tf
            def to_nchw_and_back(x):
                return tf.transpose(tf.transpose(x, [0, 3, 1, 2]), [0, 2, 3, 1])
        """),
    )
    invalid = (
        Invalid("""
            import tensorflow as tf
            def f(images):
                y = tf.transpose(images, perm=[0, 2, 3, 1])
                z = tf.transpose(y, perm=[0, 3, 1, 2])
                return z
            out = f(tf.ones([2, 3, 4, 5]))
        """, count=1, lines=(4,), fixed="""
            import tensorflow as tf
            def f(images):
                z = images
                return z
            out = f(tf.ones([2, 3, 4, 5]))
        """),
        # Nested, with an aliased module, on a tensor made by TF: safe.
        Invalid("""
            import tensorflow as tensorflow_alias
            x = tensorflow_alias.zeros([2, 3, 4])
            y = tensorflow_alias.transpose(tensorflow_alias.transpose(x, [2, 0, 1]), [1, 2, 0])
        """, count=1, lines=(3,), fixed="""
            import tensorflow as tensorflow_alias
            x = tensorflow_alias.zeros([2, 3, 4])
            y = x
        """),
        # `from tensorflow import transpose`, no perm twice, the intermediate used elsewhere:
        # only the second transpose goes.
        Invalid("""
            from tensorflow import transpose
            import tensorflow as tf
            def f(x):
                t = transpose(x)
                tf.print(t)
                return transpose(t) + 1.0
            f(tf.ones([2, 3]))
        """, count=1, lines=(6,), fixed="""
            from tensorflow import transpose
            import tensorflow as tf
            def f(x):
                t = transpose(x)
                tf.print(t)
                return x + 1.0
            f(tf.ones([2, 3]))
        """),
        # Rebinding the same name: both statements go.
        Invalid("""
            import tensorflow as tf
            def f(x):
                x = tf.transpose(x, [1, 0])
                x = tf.transpose(x, [1, 0])
                return x * 2.0
            print(f(tf.ones([2, 3])))
        """, count=1, lines=(4,), fixed="""
            import tensorflow as tf
            def f(x):
                return x * 2.0
            print(f(tf.ones([2, 3])))
        """),
        # `x` is rebound between the transposes: reported, not fixed.
        Invalid("""
            import tensorflow as tf
            def f(x):
                y = tf.transpose(x, [1, 0])
                x = x * 2.0
                return tf.transpose(y, [1, 0])
            f(tf.ones([2, 3]))
        """, count=1, lines=(5,)),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        outer = transpose_of(ctx, node)
        if outer is None:
            return
        inner_node = outer.operand
        via_name = None
        if type(inner_node) is ast.Name:
            via_name = inner_node
            inner_node = assigned_value(ctx, inner_node)  # type: ignore[assignment]
        inner = transpose_of(ctx, inner_node)
        if inner is None or not undoes(inner.perm, outer.perm) or not surely_eager(ctx, node):
            return
        yield self.finding(ctx, node, fix=self._fix(ctx, outer, inner, via_name))

    def _fix(self, ctx: Context, outer: Transpose, inner: Transpose,
             via_name: ast.Name | None) -> Fix | None:
        x = inner.operand
        make = self.safe_fix if self._plain_tensor(ctx, x) else self.unsafe_fix
        x_text = ctx.source_of(x)
        if via_name is None:  # nested: tf.transpose(tf.transpose(x, p), q)
            return make(ctx.replace(outer.call, x_text),
                        description="drop the transpose round trip")
        if type(x) is not ast.Name:
            return None  # re-evaluating an expression elsewhere may not give the same value
        first = _statement_of(ctx, inner.call)
        second = _statement_of(ctx, outer.call)
        if type(first) is not ast.Assign or first.value is not inner.call or second is None:
            return None
        block = block_holding(ctx, first)
        if block is None or second not in block:
            return None
        between = block[block.index(first) + 1:block.index(second)]
        y = via_name.id
        if _stores(between, x.id) or (y != x.id and _stores([first], x.id)):
            return None
        scope = ctx.scope_of(first)
        others = [n for n in loads_bound_by(ctx, scope, y, inner.call) if n is not via_name]
        if others:  # the intermediate is needed elsewhere: only the second copy goes
            if y == x.id:
                return None  # `x` now names the transposed tensor
            return make(ctx.replace(outer.call, x_text),
                        description="use the tensor before the transposes")
        delete_first = self._delete(ctx, first)
        if delete_first is None:
            return None
        edits = [delete_first]
        if type(second) is ast.Assign and second.value is outer.call \
                and len(second.targets) == 1 and type(second.targets[0]) is ast.Name \
                and second.targets[0].id == x.id:
            delete_second = self._delete(ctx, second)  # `x = x` would be left
            if delete_second is None or len(block) == 2:  # the block would be empty
                return None
            edits.append(delete_second)
        else:
            edits.append(ctx.replace(outer.call, x_text))
        return make(*edits, description="drop the transpose round trip")

    @staticmethod
    def _plain_tensor(ctx: Context, x: ast.AST) -> bool:
        """A tensor, not a Variable (``tf.transpose`` would read it) or convertible value."""
        if not ctx.is_tensor_like(x):
            return False
        value = assigned_value(ctx, x) if type(x) is ast.Name else x
        return value is None or not (type(value) is ast.Call and (
            ctx.qualname(value.func) or "").endswith("Variable"))

    @staticmethod
    def _delete(ctx: Context, stmt: ast.stmt) -> Edit | None:
        """An edit removing ``stmt``'s whole lines, if nothing else shares them."""
        line, col, end_line, end_col = ctx.span(stmt)
        before = ctx.lines[line - 1][:col]
        after = ctx.lines[end_line - 1][end_col:].strip()
        if before.strip() or (after and not after.startswith("#")):
            return None
        return Edit(line, 0, end_line + 1, 0, "")
