"""TFP409: a one-hot matrix multiplied by a table: a row lookup done as a matmul."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from tfperf.core.findings import Finding
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

_ONE_HOT = frozenset({"tensorflow.one_hot", "tensorflow.compat.v1.one_hot",
                      "keras.ops.one_hot", "keras.backend.one_hot"})
_MATMUL = frozenset({"tensorflow.matmul", "tensorflow.linalg.matmul",
                     "tensorflow.compat.v1.matmul", "keras.ops.matmul", "keras.backend.dot",
                     "keras.ops.dot", "tensorflow.tensordot", "keras.ops.tensordot"})
_CASTS = frozenset({"tensorflow.cast", "tensorflow.compat.v1.cast", "keras.ops.cast",
                    "tensorflow.squeeze", "tensorflow.reshape"})
_DEPTH = 6


def _one_hot(ctx: Context, expr: Any, depth: int = 0) -> bool:
    """``expr`` is ``tf.one_hot(ids, depth)``, through names and casts."""
    if depth > _DEPTH:
        return False
    if type(expr) is ast.Name:
        b = ctx.binding(expr)
        if b is None or b.kind != "assign" or b.value is expr:
            return False
        return _one_hot(ctx, b.value, depth + 1)
    if type(expr) is not ast.Call:
        return False
    q = ctx.call_qualname(expr)
    if q in _ONE_HOT:
        return True
    return q in _CASTS and bool(expr.args) and _one_hot(ctx, expr.args[0], depth + 1)


def _chosen_on_purpose(ctx: Context, node: ast.AST) -> bool:
    """In a branch whose test names the one-hot form (``if use_one_hot_embeddings:``) or a
    TPU: BERT-style code picks the product where it is faster (TPUs), the lookup elsewhere."""
    p: Any
    for p in ctx.ancestors(node):
        if type(p) in (ast.If, ast.IfExp):
            for n in ast.walk(p.test):
                word = getattr(n, "id", None) or getattr(n, "attr", None) or ""
                if "one_hot" in word.lower() or "tpu" in word.lower():
                    return True
    return False


class OneHotMatmulLookup(Rule):
    code = "TFP409"
    name = "one-hot-matmul-lookup"
    message = ("a one-hot matrix multiplied by a table: a row lookup done as a matmul "
               "(tf.gather reads only the rows needed)")
    hint = "tf.gather(table, ids) (or tf.nn.embedding_lookup) instead of tf.one_hot(ids, n) @ table"
    claims = ("S12",)
    group = "preview"  # new (issue 25): waits for judged findings
    node_types = (ast.Call, ast.BinOp)
    needs_tf = True
    docs = """\
## What it does
Finds `tf.matmul(tf.one_hot(ids, n), table)` (also `@`, `tf.tensordot`, `keras.ops.dot`,
`K.dot`, a cast one-hot, a one-hot held in a name) where the one-hot is the left operand: a
lookup of rows `ids` of `table` written as a matrix product.

## Why is this bad?
The product reads the whole `[n, d]` table and does `len(ids) × n × d` multiply-adds, nearly
all by zero, and builds the `[len(ids), n]` one-hot first; `tf.gather(table, ids)` copies
`len(ids) × d` values. For a vocabulary of thousands the gap is that many times (claim
S12: the right whole-tensor op, not just any). The gradient is the same rows either way
(`tf.gather`'s is an `IndexedSlices` update of those rows only).

## Example
```python
emb = tf.matmul(tf.one_hot(token_ids, vocab_size), embedding_table)
```

## Use instead
```python
emb = tf.gather(embedding_table, token_ids)
```

## Fix safety
No automatic fix: the one-hot may carry a dtype, `on_value`/`off_value` or label smoothing
that a gather does not.

## Known limitations
Not reported in a branch that picks the one-hot product on purpose (`if
use_one_hot_embeddings:`, a test naming a TPU: on TPUs the product is the faster lookup, as
BERT's code says). Only a one-hot as the left operand of a product (`one_hot @ table`); a
product with the one-hot on the right (`table @ one_hot`, picking columns) and an elementwise
`reduce_sum(q * one_hot(a, n), axis=1)` (cheap when `n` is a handful of actions) are left
alone.
"""
    valid = (
        Valid("""
            import tensorflow as tf
            def embed(table, ids):
                return tf.gather(table, ids)
        """, spelling="index: gather"),
        # A one-hot used as data (a loss), not multiplied by a table.
        Valid("""
            import tensorflow as tf
            def loss(logits, labels, n):
                return tf.nn.softmax_cross_entropy_with_logits(tf.one_hot(labels, n), logits)
        """, spelling="name"),
        # BERT's TPU path: the product chosen on purpose where it is the faster lookup.
        Valid("""
            import tensorflow as tf
            def embed(ids, table, vocab, use_one_hot_embeddings=False):
                if use_one_hot_embeddings:
                    return tf.matmul(tf.one_hot(ids, vocab), table)
                return tf.gather(table, ids)
        """, spelling="name: a flag"),
        # A product of two dense matrices.
        Valid("""
            import tensorflow as tf
            def dense(x, w):
                return tf.matmul(x, w)
        """, spelling="loop: none"),
        Valid("""
            import tensorflow as tf
            def embed_all(table, batches):
                for ids in batches:
                    yield tf.gather(table, ids)
        """, spelling="loop: for"),
        Valid("""
            from helpers import embed
            def run(table, ids):
                return embed(table, ids)
        """, files={"helpers.py": """
            import tensorflow as tf
            def embed(table, ids):
                return tf.nn.embedding_lookup(table, ids)
        """}, spelling="module"),
        Valid("""
            import tensorflow as tf
            table = tf.random.normal([1000, 16])
            # %%
            e = tf.gather(table, [3, 5, 7])
        """, notebook=True, spelling="notebook"),
    )
    invalid = (
        Invalid("""
            import tensorflow as tf
            def embed(table, ids, vocab):
                return tf.matmul(tf.one_hot(ids, vocab), table)
        """, count=1, lines=(3,), spelling="index: matmul"),
        # Through a name and a cast, with the @ operator.
        Invalid("""
            import tensorflow as tf
            def embed(table, ids, vocab):
                oh = tf.cast(tf.one_hot(ids, vocab), tf.float32)
                return oh @ table
        """, count=1, lines=(4,), spelling="name"),
        # tensordot over the last axis of a batch of sequences.
        Invalid("""
            import tensorflow as tf
            def embed(table, ids, vocab):
                return tf.tensordot(tf.one_hot(ids, vocab), table, axes=1)
        """, count=1, lines=(3,), spelling="index: tensordot"),
        Invalid("""
            import tensorflow as tf
            def embed_all(table, batches, vocab):
                for ids in batches:
                    yield tf.matmul(tf.one_hot(ids, vocab), table)
        """, count=1, lines=(4,), spelling="loop: for"),
        Invalid("""
            from helpers import embed
            def run(table, ids):
                return embed(table, ids, 1000)
        """, files={"helpers.py": """
            import tensorflow as tf
            def embed(table, ids, vocab):
                return tf.matmul(tf.one_hot(ids, vocab), table)
        """}, count=1, spelling="module"),
        Invalid("""
            import tensorflow as tf
            table = tf.random.normal([1000, 16])
            # %%
            e = tf.one_hot([3, 5, 7], 1000) @ table
        """, count=1, notebook=True, spelling="notebook"),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        n: Any = node
        if type(n) is ast.BinOp:
            if type(n.op) is ast.MatMult and _one_hot(ctx, n.left) \
                    and not _chosen_on_purpose(ctx, node):
                yield self.finding(ctx, node)
            return
        func = n.func
        last = func.attr if type(func) is ast.Attribute else getattr(func, "id", None)
        if last not in ("matmul", "dot", "tensordot") or not n.args:
            return
        if ctx.call_qualname(node) in _MATMUL and _one_hot(ctx, n.args[0]) \
                and not any(k.arg in ("transpose_a", "adjoint_a") for k in n.keywords) \
                and not _chosen_on_purpose(ctx, node):
            yield self.finding(ctx, node)
