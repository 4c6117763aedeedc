"""TFP603: an element-wise map right before batch: batching first runs it once per batch."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING

from tfperf.core.findings import Finding
from tfperf.lint.analysis.consumption import (
    discarded,
    few_upstream,
    only_peeked,
    read_once_through_callers,
)
from tfperf.lint.analysis.pipelines import is_tf_dataset, map_function
from tfperf.lint.analysis.syntax import method_call
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

if TYPE_CHECKING:
    from tfperf.analysis.project import Project

# Ops that work element by element (same result on a batch as on each element stacked).
ELEMENTWISE = frozenset({
    "tensorflow.cast", "tensorflow.abs", "tensorflow.exp", "tensorflow.sqrt",
    "tensorflow.square", "tensorflow.maximum", "tensorflow.minimum", "tensorflow.clip_by_value",
    "tensorflow.sigmoid", "tensorflow.tanh", "tensorflow.round", "tensorflow.sign",
    "tensorflow.add", "tensorflow.subtract", "tensorflow.multiply", "tensorflow.divide",
    "tensorflow.image.convert_image_dtype", "tensorflow.nn.relu", "tensorflow.nn.sigmoid",
    "tensorflow.one_hot", "tensorflow.saturate_cast",
    *(f"tensorflow.math.{n}" for n in (
        "abs", "exp", "log", "log1p", "sqrt", "rsqrt", "square", "sigmoid", "tanh", "round",
        "floor", "ceil", "sign", "maximum", "minimum", "add", "subtract", "multiply", "divide",
        "pow", "truediv")),
})
_ALLOWED_NODES = (ast.Name, ast.Constant, ast.BinOp, ast.UnaryOp, ast.Tuple, ast.List,
                  ast.Dict, ast.Subscript, ast.Attribute, ast.keyword, ast.Call, ast.Load,
                  ast.operator, ast.unaryop, ast.Slice)


def _elementwise(ctx: Context, expr: ast.AST, params: set[str]) -> bool:
    """``expr`` only applies element-wise ops to the function's parameters and constants."""
    did_work = False
    for n in ast.walk(expr):
        if not isinstance(n, _ALLOWED_NODES):
            return False
        if type(n) is ast.Call:
            if ctx.qualname(n.func) not in ELEMENTWISE:
                return False
            did_work = True
        elif type(n) is ast.BinOp:
            if isinstance(n.op, ast.MatMult):
                return False
            did_work = True
        elif type(n) is ast.Subscript:
            if type(n.slice) is not ast.Constant or type(n.slice.value) is not str:
                return False  # x[0] indexes the element, a batch would index the batch
        elif type(n) is ast.Attribute:
            if ctx.qualname(n) is None:
                return False  # x.shape, obj.attr: not a TF dtype or constant
        elif type(n) is ast.Name and n.id not in params and ctx.qualname(n) is None:
            return False  # a closure value of unknown shape
    return did_work


def _returned(fn: ast.AST) -> ast.expr | None:
    if type(fn) is ast.Lambda:
        return fn.body
    body = [s for s in fn.body if not (type(s) is ast.Expr and type(s.value) is ast.Constant)]
    if len(body) == 1 and type(body[0]) is ast.Return:
        return body[0].value
    return None


# A helper that scores a test set once, called once under the main guard.
_SCORED_ONCE_HERE = """
    import tensorflow as tf
    def score(model, images):
        ds = tf.data.Dataset.from_tensor_slices(images)
        return model.evaluate(ds.map(lambda x: tf.cast(x, tf.float32) / 255.0).batch(32))
    if __name__ == "__main__":
        score(tf.keras.models.load_model("m.keras"), tf.zeros([64, 28, 28]))
"""


class ElementwiseMapBeforeBatch(Rule):
    code = "TFP603"
    name = "elementwise-map-before-batch"
    message = "element-wise map right before batch: batch first and map once per batch"
    hint = "swap them: .batch(n).map(fn) runs fn once per batch (vectorised)"
    claims = ("S19", "S12")
    group = "perf"
    node_types = (ast.Call,)
    callee_names = frozenset({"batch"})
    docs = """\
## What it does
Finds `ds.map(fn).batch(n)` where `fn` is a lambda or a one-line function that only applies
element-wise ops (`tf.cast`, arithmetic, `tf.math.*`, `tf.one_hot`...) to its arguments,
taking dict components by name. Such a function gives the same result on a whole batch.

## Why is this bad?
tf.data calls `fn` once per element: each call has a fixed cost (the function call, small
kernel launches) that dwarfs the arithmetic on one example. Batching first calls it once per
batch on a large tensor: the TF guide's "vectorizing mapping" advice, and the article's
whole-tensor lesson applied to input pipelines (claims S12, S19).

## Example
```python
ds = ds.map(lambda x, y: (tf.cast(x, tf.float32) / 255.0, y)).batch(64)
```

## Use instead
```python
ds = ds.batch(64).map(lambda x, y: (tf.cast(x, tf.float32) / 255.0, y))
```

## Fix safety
No automatic fix. The rule is conservative: any op that is not known to be element-wise
(reshape, resize, decode, indexing by position, `x.shape`, matmul, closures over other
values, random ops), several statements, or a map not directly followed by `batch` (a
`shuffle` in between, `padded_batch`) keeps it quiet. So does a pipeline read once or only
peeked at (a test split passed once to `model.evaluate`, `take(5)` printed): its per-element
cost is paid once (`analysis.consumption`, shared with TFP602). A pass counted once only
through this module's calls of its function (`main()` under the main guard) is still
reported where another module of the project calls into this one: it may do so every epoch.
"""
    valid = (
        # A test split read once, after training: its per-element cost is paid once.
        Valid("""
            import tensorflow as tf
            import tensorflow_datasets as tfds
            def scale(image, label):
                return tf.cast(image, tf.float32) / 255.0, label
            train, test = tfds.load("mnist", split=["train", "test"], as_supervised=True)
            model.fit(train.batch(32).map(scale), epochs=10)
            test = test.map(scale)
            test = test.batch(32)
            model.evaluate(test)
        """),
        # Stop 37 (how often code runs, analysis/trips.py): a test split built in a script
        # that never reads it, or evaluated in a function the script calls once.
        Valid("""
            import tensorflow as tf
            import tensorflow_datasets as tfds
            def scale(image, label):
                return tf.cast(image, tf.float32) / 255.0, label
            train, test = tfds.load("mnist", split=["train", "test"], as_supervised=True)
            train = train.batch(32).map(scale)
            test = test.map(scale).batch(32)
            for epoch in range(10):
                for x, y in train:
                    step(x, y)
        """, spelling="name: a test split never read"),
        Valid("""
            import tensorflow as tf
            def scale(image, label):
                return tf.cast(image, tf.float32) / 255.0, label
            def main(train, test: tf.data.Dataset):
                model.fit(train.batch(32).map(scale), epochs=10)
                test = test.map(scale).batch(32)
                model.evaluate(test)
            if __name__ == "__main__":
                main(*load())
        """, spelling="module: evaluated in a main() called once"),
        Valid("""
            import tensorflow as tf
            ds = tf.data.Dataset.range(100).batch(10).map(lambda x: tf.cast(x, tf.float32) / 9.0)
        """),
        # Resizing needs each image on its own (different sizes).
        Valid("""
            import tensorflow as tf
            def prep(img, label):
                return tf.image.resize(img, [224, 224]), label
            def make(ds: tf.data.Dataset):
                return ds.map(prep).batch(32)
        """),
        # Indexing by position means something else on a batch.
        Valid("""
            import tensorflow as tf
            ds = tf.data.Dataset.range(10).map(lambda x: tf.stack([x, x])[0] * 2).batch(2)
        """),
        # A shuffle between map and batch: batching first would change the shuffle.
        Valid("""
            import tensorflow as tf
            ds = tf.data.Dataset.range(10).map(lambda x: x * 2).shuffle(10).batch(2)
        """),
        # Python's map, not a dataset.
        Valid("""
            import tensorflow as tf
            class Q:
                def batch(self, n):
                    return n
            def f(q):
                return q.map(lambda x: x * 2).batch(3)
        """),
        Valid(_SCORED_ONCE_HERE),
    )
    invalid = (
        # The stop 37 VALIDs' twins: the split read every epoch, the function run per epoch.
        Invalid("""
            import tensorflow as tf
            import tensorflow_datasets as tfds
            def scale(image, label):
                return tf.cast(image, tf.float32) / 255.0, label
            train, test = tfds.load("mnist", split=["train", "test"], as_supervised=True)
            train = train.batch(32).map(scale)
            test = test.map(scale).batch(32)
            for epoch in range(10):
                for x, y in train:
                    step(x, y)
                for x, y in test:
                    check(x, y)
        """, count=1, lines=(7,), spelling="name: a test split read every epoch"),
        Invalid("""
            import tensorflow as tf
            def scale(image, label):
                return tf.cast(image, tf.float32) / 255.0, label
            def run_epoch(train, test: tf.data.Dataset):
                model.fit(train.batch(32).map(scale), epochs=1)
                test = test.map(scale).batch(32)
                model.evaluate(test)
            if __name__ == "__main__":
                for epoch in range(epochs):
                    run_epoch(*load())
        """, count=1, lines=(6,), spelling="module: evaluated in a function run per epoch"),
        Invalid("""
            import tensorflow as tf
            ds = tf.data.Dataset.range(100)
            ds = ds.map(lambda x: tf.cast(x, tf.float32) / 255.0).batch(32)
        """, count=1, lines=(3,)),
        Invalid("""
            import tensorflow as tensorflow_alias
            def scale(image, label):
                '''Scale pixels to [0, 1].'''
                return tensorflow_alias.cast(image, tensorflow_alias.float32) / 255.0, label
            def make(ds: tensorflow_alias.data.Dataset):
                ds = ds.map(scale)
                return ds.batch(64)
        """, count=1, lines=(7,)),
        Invalid("""
            from tensorflow import cast, float32
            from tensorflow.data import Dataset
            ds = Dataset.from_tensor_slices({'a': [1, 2], 'b': [3, 4]})
            ds = ds.map(lambda d: {'a': cast(d['a'], float32) * 2.0, 'b': d['b']}).batch(2)
        """, count=1, lines=(4,)),
        # A helper this script calls once, and another module every epoch: this module's
        # count of its calls leaves the other module's out (its VALID twin: no other module).
        Invalid(_SCORED_ONCE_HERE, count=1, lines=(4,),
                files={"train.py": "from example import score\n"
                                   "for epoch in range(10):\n    score(model, data)\n"}),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        call = self._elementwise_batch(node, ctx)
        if call is None or discarded(ctx, call) or few_upstream(ctx, call) \
                or only_peeked(ctx, call):
            return  # a pipeline read once or only peeked at: the per-element cost is paid once
        yield self.finding(ctx, node)

    def publish(self, ctx: Context) -> list[list[int]] | None:
        """The positions of the findings :meth:`check` leaves out only because this module
        calls the function that reads the dataset once: another module may call it every
        epoch (:meth:`check_project` asks)."""
        if not ctx.imports_tf:
            return None
        from tfperf.analysis.summary import position

        by_attr, _ = ctx.call_groups()
        found = [position(ctx, c) for c in by_attr.get("batch", ())
                 if self._elementwise_batch(c, ctx) is not None and not discarded(ctx, c)
                 and not few_upstream(ctx, c) and read_once_through_callers(ctx, c)]
        return found or None

    def check_project(self, project: Project) -> Iterator[Finding]:
        for module in project.modules.values():
            if project.called_from_other_modules(module.path):
                for pos in module.facts.get(self.code, ()):
                    yield self.project_finding(module.path, pos)

    @staticmethod
    def _elementwise_batch(node: ast.AST, ctx: Context) -> ast.Call | None:
        """``ds.map(fn).batch(n)`` (``node`` the ``batch`` call) with an element-wise ``fn``."""
        if not method_call(node, "batch") or not ctx.imports_tf:
            return None
        recv = node.func.value
        if type(recv) is ast.Name:
            b = ctx.binding(recv)
            if b is None or b.kind != "assign":
                return None
            recv = b.value
        if not method_call(recv, "map") or len(recv.args) != 1 \
                or not is_tf_dataset(ctx, recv.func.value):
            return None
        fn = map_function(ctx, recv)
        if fn is None:
            return None
        args = fn.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.defaults:
            return None
        params = {a.arg for a in args.posonlyargs + args.args}
        ret = _returned(fn)
        if ret is None or not _elementwise(ctx, ret, params):
            return None
        return node  # type: ignore[return-value]
