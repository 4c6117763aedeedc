"""TFP115: a loop over pairs recomputes, for every pair, a product that depends on one item."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from tfperf.analysis.loops import loops
from tfperf.core.findings import Finding
from tfperf.lint.analysis.traced import traced
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

# Iterators that hand out every pair (or tuple) of items: each item appears in many pairs.
_PAIRS = frozenset({"itertools.combinations", "itertools.permutations", "itertools.product",
                    "itertools.combinations_with_replacement"})
# Products worth computing once per item instead of once per pair.
_PRODUCTS = frozenset({
    "tensorflow.tensordot", "tensorflow.matmul", "tensorflow.linalg.matmul",
    "tensorflow.einsum", "tensorflow.linalg.einsum", "tensorflow.compat.v1.matmul",
    "tensorflow.compat.v1.tensordot", "keras.backend.dot", "keras.ops.matmul",
    "keras.ops.tensordot", "keras.ops.einsum", "tensorflow.keras.backend.dot",
})
# Methods Keras runs in a traced graph (under fit, evaluate, predict).
_KERAS_TRACED = frozenset({"call", "train_step", "test_step", "predict_step"})
# TF 2 runs grappler on every tf.function graph: its arithmetic optimizer merges identical
# products (same op, same inputs), so the repeats cost graph size and tracing, not run time
# (measured: rule_claims.py TFP115, 0.97 in a tf.function at TF 2.21; 2.3x eagerly).
_GRAPPLER_DEDUP_TF = (2, 0)


def _loop_names(node: Any) -> set[str]:
    return {n.id for n in ast.walk(node) if type(n) is ast.Name}


class PairLoopRecompute(Rule):
    code = "TFP115"
    batches_loops = True
    name = "pair-loop-recompute"
    message = ("a product that depends on one item of the pair is computed again for every "
               "pair it is in: n*(n-1)/2 products where n do")
    hint = ("compute it once per item before the loop (a list, or one batched product over "
            "the stacked items) and index it inside the pair loop")
    claims = ("S12",)
    group = "perf"
    node_types = ()
    needs_tf = True
    docs = """\
## What it does
Finds a loop (a comprehension or a `for`) over every pair of a list, `itertools.combinations`,
`permutations` or `product`, whose body computes a product (`tf.tensordot`, `tf.matmul`,
`tf.einsum`, `@`, `K.dot`) from only one item of the pair (or its index) and values that do
not change in the loop.

## Why is this bad?
Each item is in `n - 1` pairs, so its product is computed `n - 1` times: `n(n-1)/2` products
where `n` suffice. In a traced function every one is a separate op in the graph; eagerly,
a separate kernel launch. Computing the per-item products once before the pair loop (or as
one batched product over the stacked items) gives the same values (development row F071,
DeepCTR's BilinearInteraction at TF 1.4: "speed up BilinearInteraction"). Measured here
(`rule_claims.py TFP115`, 12 fields of 1024x64): 2.3x eagerly.

## Example
```python
p = [tf.multiply(tf.tensordot(v_i, W, axes=(-1, 0)), v_j)
     for v_i, v_j in itertools.combinations(inputs, 2)]
```

## Use instead
```python
vw = [tf.tensordot(v, W, axes=(-1, 0)) for v in inputs[:-1]]
p = [tf.multiply(vw[i], inputs[j]) for i, j in itertools.combinations(range(len(inputs)), 2)]
```

## Fix safety
No automatic fix: the per-item list must be built before the loop.

## Known limitations
Not reported in a graph that TF 2 traces (a `tf.function`, a Keras `call`): there grappler's
arithmetic optimizer merges identical products (same op, same inputs), and the pair loop
costs graph size and tracing time only (`rule_claims.py`: 0.97 in a `tf.function` at TF
2.21, 2.3x eagerly, 12 fields). Only products of one item with loop-invariant values; a
product of both items of a pair (which must be computed per pair) is not reported, nor a
per-item product in a nested loop over items (the inner loop's invariant work: TFP107,
preview).
"""
    valid = (
        # Per-item products computed once, indexed per pair.
        Valid("""
            import itertools
            import tensorflow as tf
            def bilinear(inputs, W):
                vw = [tf.tensordot(v, W, axes=(-1, 0)) for v in inputs]
                return [vw[i] * inputs[j] for i, j in itertools.combinations(range(len(inputs)), 2)]
        """, spelling="index: precomputed"),
        # A product of both items: it must be computed per pair.
        Valid("""
            import itertools
            import tensorflow as tf
            def similarities(vectors):
                out = []
                for a, b in itertools.combinations(vectors, 2):
                    out.append(tf.matmul(a, b, transpose_b=True))
                return out
        """, spelling="loop: for"),
        # A weight per pair (zipped with the pairs): nothing repeats.
        Valid("""
            import itertools
            import tensorflow as tf
            def interaction(inputs, weights):
                pairs = itertools.combinations(inputs, 2)
                return [tf.tensordot(v[0], w, axes=(-1, 0)) * v[1] for v, w in zip(pairs, weights)]
        """, spelling="name"),
        Valid("""
            from layers import bilinear
            out = bilinear(fields, W)
        """, files={"layers.py": """
            import itertools
            import tensorflow as tf
            def bilinear(inputs, W):
                vw = [tf.tensordot(v, W, axes=(-1, 0)) for v in inputs]
                return [vw[i] * inputs[j] for i, j in itertools.combinations(range(len(inputs)), 2)]
        """}, spelling="module"),
        Valid("""
            import itertools
            import tensorflow as tf
            vw = [v @ W for v in fields]
            # %%
            p = [vw[i] * fields[j] for i, j in itertools.combinations(range(len(fields)), 2)]
        """, notebook=True, spelling="notebook"),
        # A TF 2 Keras layer: traced under fit, where grappler merges the repeats.
        Valid("""
            import itertools
            import tensorflow as tf
            class Bilinear(tf.keras.layers.Layer):
                def call(self, inputs):
                    return [tf.tensordot(a, self.W, axes=(-1, 0)) * b
                            for a, b in itertools.combinations(inputs, 2)]
        """, tf_version="2.4", spelling="name: keras call, TF 2"),
    )
    invalid = (
        # The same layer on TF 1.x (DeepCTR's, F071).
        Invalid("""
            import itertools
            import tensorflow as tf
            class Bilinear(tf.keras.layers.Layer):
                def call(self, inputs):
                    return [tf.tensordot(a, self.W, axes=(-1, 0)) * b
                            for a, b in itertools.combinations(inputs, 2)]
        """, count=1, lines=(5,), tf_version="1.4", spelling="name: keras call, TF 1"),
        # DeepCTR's BilinearInteraction (dev F071), items paired directly.
        Invalid("""
            import itertools
            import tensorflow as tf
            def bilinear(inputs, W):
                return [tf.multiply(tf.tensordot(v_i, W, axes=(-1, 0)), v_j)
                        for v_i, v_j in itertools.combinations(inputs, 2)]
        """, count=1, lines=(4,), spelling="loop: comprehension"),
        # By index, with one weight per item.
        Invalid("""
            import itertools
            import tensorflow as tf
            def bilinear_each(inputs, W_list):
                n = len(inputs)
                return [tf.tensordot(inputs[i], W_list[i], axes=(-1, 0)) * inputs[j]
                        for i, j in itertools.combinations(range(n), 2)]
        """, count=1, lines=(5,), spelling="index: by index"),
        # A for statement; the pairs held in a name; the @ operator.
        Invalid("""
            import itertools
            import tensorflow as tf
            def scores(items, W):
                pairs = list(itertools.permutations(items, 2))
                out = []
                for a, b in pairs:
                    out.append(tf.reduce_sum((a @ W) * b, axis=-1))
                return tf.stack(out)
        """, count=1, lines=(7,), spelling="name"),
        Invalid("""
            from layers import bilinear
            out = bilinear(fields, W)
        """, files={"layers.py": """
            import itertools
            import tensorflow as tf
            def bilinear(inputs, W):
                return [tf.matmul(a, W) * b for a, b in itertools.product(inputs, inputs)]
        """}, count=1, spelling="module"),
        Invalid("""
            import itertools
            import tensorflow as tf
            fields = [tf.random.normal([32, 8]) for _ in range(5)]
            # %%
            p = [tf.einsum("bd,de->be", a, W) * b for a, b in itertools.combinations(fields, 2)]
        """, count=1, notebook=True, spelling="notebook"),
    )

    def check_module(self, ctx: Context) -> Iterator[Finding]:
        if not ctx.imports_tf or "itertools" not in ctx.source:
            return
        for loop in loops(ctx):
            domain = loop.domain
            it: Any = domain.iterable
            if it is None or type(loop.node) not in (ast.For, ast.ListComp, ast.GeneratorExp,
                                                     ast.SetComp, ast.DictComp):
                continue
            it = self._pairs_call(ctx, it)
            if it is None:
                continue
            target = loop.node.target if type(loop.node) is ast.For \
                else loop.node.generators[0].target
            if type(target) is not ast.Tuple or len(target.elts) < 2:
                continue
            items = [_loop_names(e) for e in target.elts]
            every = set().union(*items)
            bound = self._bound_in(loop.node, every)
            for node in loop.body:
                if not self._product(ctx, node):
                    continue
                used = _loop_names(node)
                if used & bound:
                    continue  # reads a value the body computes per pair
                touched = [names for names in items if names & used]
                if len(touched) == 1 and not self._merged_by_grappler(ctx, node):
                    yield self.finding(ctx, node)

    @staticmethod
    def _merged_by_grappler(ctx: Context, node: Any) -> bool:
        """In a graph TF 2 traces (a ``tf.function``, a Keras ``call``), where grappler
        merges the identical products."""
        if ctx.tf_version < _GRAPPLER_DEDUP_TF:
            return False
        fn: Any = ctx.enclosing_function(node)
        return traced(ctx, node) or getattr(fn, "name", "") in _KERAS_TRACED

    @staticmethod
    def _pairs_call(ctx: Context, it: Any) -> Any:
        """``it`` (or the name it was assigned from, through ``list(...)``) is a pair
        iterator call."""
        for _ in range(3):
            if type(it) is ast.Name:
                b = ctx.binding(it)
                if b is None or b.kind != "assign":
                    return None
                it = b.value
            if type(it) is ast.Call and ctx.is_builtin(it.func, "list") and it.args:
                it = it.args[0]
            if type(it) is ast.Call and ctx.call_qualname(it) in _PAIRS:
                return it
        return None

    @staticmethod
    def _bound_in(loop: Any, exclude: set[str]) -> set[str]:
        """Names the loop body assigns (values that change per pair)."""
        out: set[str] = set()
        body = loop.body if type(loop) is ast.For else [loop]
        for stmt in body:
            for n in ast.walk(stmt):
                if type(n) is ast.Name and type(n.ctx) is ast.Store:
                    out.add(n.id)
        return out - exclude

    @staticmethod
    def _product(ctx: Context, node: Any) -> bool:
        if type(node) is ast.BinOp and type(node.op) is ast.MatMult:
            return True
        return type(node) is ast.Call and ctx.call_qualname(node) in _PRODUCTS
