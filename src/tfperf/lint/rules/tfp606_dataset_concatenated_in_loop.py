"""TFP606: a tf.data pipeline grown with ``concatenate`` once per iteration of a loop."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding
from tfperf.lint.analysis.assignments import leaves_after
from tfperf.lint.analysis.dependence import ref_name
from tfperf.lint.analysis.varying import HANDFUL, literal_count
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

_LOOPS = (ast.For, ast.AsyncFor, ast.While)


def _known_length(ctx: Context, expr: ast.AST | None, depth: int = 0) -> int | None:
    """How many items ``expr`` holds when the module spells it out: a list/tuple literal,
    ``range`` of literals, a name bound to one, ``xs[1:]`` or ``enumerate(xs)`` of one, a
    comprehension over one, or a list filled by one ``append`` per iteration of a loop over
    one; else ``None``."""
    if expr is None or depth > 6:
        return None
    count = literal_count(ctx, expr)
    if count is not None:
        return count
    t = type(expr)
    if t is ast.Call and ctx.is_builtin_call(expr, "enumerate", "reversed", "sorted", "list",
                                             "tuple") and len(expr.args) == 1:
        return _known_length(ctx, expr.args[0], depth + 1)
    if t is ast.Subscript and type(expr.slice) is ast.Slice and expr.slice.upper is None \
            and expr.slice.step is None and type(expr.slice.lower) is ast.Constant \
            and type(expr.slice.lower.value) is int and expr.slice.lower.value >= 0:
        whole = _known_length(ctx, expr.value, depth + 1)
        return None if whole is None else max(whole - expr.slice.lower.value, 0)
    if t in (ast.ListComp, ast.SetComp, ast.GeneratorExp) and len(expr.generators) == 1 \
            and not expr.generators[0].ifs:
        return _known_length(ctx, expr.generators[0].iter, depth + 1)
    if t is ast.Name:
        b = ctx.binding(expr)  # type: ignore[arg-type]
        if b is None or b.kind != "assign":
            return None
        if type(b.value) is ast.List and not b.value.elts:
            return _appended_length(ctx, expr, depth)  # type: ignore[arg-type]
        return _known_length(ctx, b.value, depth + 1)
    return None


def _appended_length(ctx: Context, name: ast.Name, depth: int) -> int | None:
    """``xs = []`` then exactly one ``xs.append(...)``, run once per iteration of a ``for``
    over a collection of known length (no branch between): that length."""
    bound = ctx.binding(name)
    appends = []
    for n in ctx.name_loads(name.id):
        b = ctx.binding(n)
        use = ctx.parent(n)
        if b is None or bound is None or b.value is not bound.value:
            continue
        if type(use) is ast.Subscript and use.value is n and type(use.ctx) is ast.Load:
            continue  # `xs[0]`, `xs[1:]`: read
        if type(use) is not ast.Attribute or use.attr != "append":
            return None  # extended, passed on, stored into: its length is not known
        appends.append(n)
    if len(appends) != 1:
        return None
    attribute = ctx.parent(appends[0])
    call = ctx.parent(attribute) if attribute is not None else None
    stmt = ctx.parent(call) if type(call) is ast.Call and call.func is attribute else None
    loop = ctx.parent(stmt) if type(stmt) is ast.Expr else None
    if type(loop) not in (ast.For, ast.AsyncFor) or stmt not in loop.body:
        return None
    return _known_length(ctx, loop.iter, depth + 1)


def _grown_assignment(ctx: Context, call: ast.Call, receiver: str) -> ast.Assign | None:
    """The statement ``receiver = receiver.concatenate(part)`` (or the same as one arm of a
    conditional expression, ``ds = part if ds is None else ds.concatenate(part)``) whose value
    is ``call``; else ``None``."""
    parent = ctx.parent(call)
    if type(parent) is ast.IfExp and call in (parent.body, parent.orelse):
        parent = ctx.parent(parent)
    if type(parent) is not ast.Assign or len(parent.targets) != 1:
        return None
    return parent if ref_name(parent.targets[0]) == receiver else None


def _reset_before(loop: ast.AST, stmt: ast.stmt, target: str) -> bool:
    """``target`` is bound afresh, unconditionally, earlier in the same iteration to a value
    that does not read it (``part = task.dataset()`` then ``part = part.concatenate(pad)``):
    each iteration joins one pipeline once, nothing is carried over to grow."""
    for s in getattr(loop, "body", []):
        if s is stmt or any(n is stmt for n in ast.walk(s)):
            return False
        if type(s) is ast.Assign and any(ref_name(t) == target for t in s.targets) \
                and not any(ref_name(n) == target for n in ast.walk(s.value)):
            return True
    return False


class DatasetConcatenatedInLoop(Rule):
    code = "TFP606"
    name = "dataset-concatenated-in-loop"
    message = ("tf.data pipeline grown with concatenate in a loop: one nested dataset per "
               "iteration")
    hint = ("build one pipeline over a dataset of the sources: "
            "tf.data.Dataset.from_tensor_slices(files).flat_map(load) (interleave to read "
            "several at once), or TFRecordDataset(files)")
    claims = ("S19",)
    group = "perf"
    node_types = (ast.Call,)
    callee_names = frozenset({"concatenate"})  # the engine hands over only these calls
    requires_imports = frozenset({"tensorflow"})
    docs = """\
## What it does
Finds a `tf.data` dataset re-bound to itself joined with one more dataset in every iteration
of a loop: `ds = ds.concatenate(part)`, or the first-iteration form
`ds = part if ds is None else ds.concatenate(part)`, typically one part per file.

## Why is this bad?
Each `concatenate` wraps the whole pipeline built so far in one more dataset: N sources make
a chain N datasets deep. Building it creates N nested dataset ops (and in graph mode N copies
of the per-source pipeline in the graph), and every element of the first source is handed
up through every level of the chain. One pipeline over a dataset of the sources
(`from_tensor_slices(files).flat_map(load)`, or `TFRecordDataset(files)`, which takes a list)
has the same elements in the same order, a constant depth, and can read several sources at
once with `interleave(..., num_parallel_calls=tf.data.AUTOTUNE)` (claim S19: a pipeline's
structure decides its throughput). Measured here on TF 2.21 CPU
(`benchmarks/bench_dataset_concat_chain.py`, interleaved rounds, the same elements read on
both sides): with 100 sources of 20 elements building the chain took 2.3 s against 39 ms for
the flat pipeline (58x), building and reading it once 2.0 s against 0.65 s (3.0x); with 300
sources of 50, 76x to build and 4.1x to read once.

## Example
```python
ds = None
for path in files:
    part = tf.data.TFRecordDataset(path).map(parse)
    ds = part if ds is None else ds.concatenate(part)
```

## Use instead
```python
ds = tf.data.Dataset.from_tensor_slices(files).flat_map(
    lambda path: tf.data.TFRecordDataset(path).map(parse))
```
or `tf.data.TFRecordDataset(files).map(parse, num_parallel_calls=tf.data.AUTOTUNE)`.

## Fix safety
No automatic fix: the flat form needs the per-source pipeline as a function of a source
tensor (a file name), which may not be how the loop's body is written.

## Known limitations
Loops over a handful of values the module spells out (`for part in (train, extra)`,
`range(3)`, a list filled from a literal list of three file names) are not reported: a chain
two or three deep costs nothing worth changing; nor is a loop whose every iteration starts
its own pipeline (`ds = task.dataset()`) and joins it once. Neither are chains built
with `functools.reduce` or across functions, nor a loop that leaves right after joining.
"""
    valid = (
        # One flat pipeline over the list of files.
        Valid("""
            import tensorflow as tf
            def load(files):
                return tf.data.Dataset.from_tensor_slices(files).flat_map(
                    lambda p: tf.data.TFRecordDataset(p))
        """),
        # Two datasets joined once, outside any loop.
        Valid("""
            import tensorflow as tf
            train = tf.data.Dataset.range(10)
            extra = tf.data.Dataset.range(5)
            ds = train.concatenate(extra)
        """),
        # A handful of literal parts: a chain two deep.
        Valid("""
            import tensorflow as tf
            ds = tf.data.Dataset.range(3)
            for extra in (tf.data.Dataset.range(2), tf.data.Dataset.range(4)):
                ds = ds.concatenate(extra)
        """),
        # Three files, one dataset each, folded: a chain three deep (a tutorial's shape).
        Valid("""
            import tensorflow as tf
            FILES = ['a.txt', 'b.txt', 'c.txt']
            parts = []
            for i, name in enumerate(FILES):
                parts.append(tf.data.TextLineDataset(name).map(lambda line: (line, i)))
            everything = parts[0]
            for part in parts[1:]:
                everything = everything.concatenate(part)
        """),
        # Keras' concatenate layer function in a loop: tensors, not a dataset.
        Valid("""
            import tensorflow as tf
            from tensorflow.keras import layers
            def block(x, n):
                for _ in range(n):
                    y = layers.Dense(8)(x)
                    x = layers.concatenate([x, y])
                return x
        """),
        # A new joined dataset each iteration, not a chain: nothing grows.
        Valid("""
            import tensorflow as tf
            def evaluate(model, base, extras):
                for extra in extras:
                    ds = base.concatenate(extra)
                    model.evaluate(ds)
        """),
        # Each iteration builds its own pipeline and pads it once: nothing is carried over.
        Valid("""
            import tensorflow as tf
            def per_task(tasks, pad):
                out = []
                for task in tasks:
                    ds = task.dataset()
                    ds = ds.map(lambda x: x)
                    ds = ds.concatenate(pad)
                    out.append(ds)
                return out
        """),
        # The loop stops right after joining: one level.
        Valid("""
            import tensorflow as tf
            def first_nonempty(ds, parts):
                for part in parts:
                    if part is not None:
                        ds = ds.concatenate(part)
                        break
                return ds
        """),
    )
    invalid = (
        # The shape of a real fix: one TFRecordDataset per file, joined in a loop.
        Invalid("""
            import tensorflow as tf
            def read_all(paths):
                def load(path):
                    return tf.data.TFRecordDataset(path).map(
                        lambda r: tf.io.parse_tensor(r, tf.float32))
                joined = None
                for path in paths:
                    piece = load(path)
                    joined = piece if joined is None else joined.concatenate(piece)
                return joined
        """, count=1, lines=(9,)),
        # A list of built datasets folded into the first one, aliased import.
        Invalid("""
            import tensorflow as tensorflow_alias
            parts = [tensorflow_alias.data.Dataset.range(i) for i in range(100)]
            ds = parts[0]
            for p in parts[1:]:
                ds = ds.concatenate(p)
        """, count=1, lines=(5,)),
        # Shards counted in a while loop, with the pipeline on an attribute.
        Invalid("""
            import tensorflow as tf
            class Reader:
                def build(self, n):
                    self.ds = tf.data.Dataset.range(0)
                    i = 0
                    while i < n:
                        self.ds = self.ds.concatenate(tf.data.Dataset.range(i))
                        i += 1
        """, count=1, lines=(7,)),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        func = node.func
        if type(func) is not ast.Attribute or func.attr != "concatenate" \
                or len(node.args) + len(node.keywords) != 1:
            return
        if node.args and type(node.args[0]) in (ast.List, ast.Tuple):
            return  # a layer/array concatenation of a list of tensors, not a dataset's join
        receiver = ref_name(func.value)
        if receiver is None or ctx.qualname(func.value) is not None:
            return  # `layers.concatenate(...)`, `np.concatenate(...)`: a module's function
        stmt = _grown_assignment(ctx, node, receiver)  # type: ignore[arg-type]
        if stmt is None or not ctx.imports_tf:
            return
        loops = ctx.enclosing_loops(stmt)
        if not loops or type(loops[0]) not in _LOOPS:
            return
        count = _known_length(ctx, getattr(loops[0], "iter", None))
        if count is not None and count <= HANDFUL:
            return
        if _reset_before(loops[0], stmt, receiver) or leaves_after(ctx, stmt):
            return
        yield self.finding(ctx, node)
