"""TFP313: a large NumPy array used by traced code (a closure over it, or ``tf.constant`` of
it inside a ``tf.function`` or ``tf.data`` map function): copied into the graph as a
constant on every trace."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from tfperf.core.findings import Finding
from tfperf.lint.analysis.imports import imported_from
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

if TYPE_CHECKING:
    from tfperf.analysis.project import Project

# NumPy readers: an array as large as the file it reads.
_READERS = frozenset({"numpy.load", "numpy.loadtxt", "numpy.genfromtxt", "numpy.fromfile",
                      "numpy.memmap"})
# NumPy makers whose first argument is the shape (or the sizes, for rand/randn).
_MAKERS = frozenset({"numpy.zeros", "numpy.ones", "numpy.empty", "numpy.full",
                     "numpy.random.random", "numpy.random.random_sample",
                     "numpy.random.standard_normal"})
_SIZED_BY_ARGS = frozenset({"numpy.random.rand", "numpy.random.randn"})
_SIZED_BY_KEYWORD = frozenset({"numpy.random.normal", "numpy.random.uniform",
                               "numpy.random.randint", "numpy.random.default_rng"})
_PANDAS = ("pandas.read_",)
_TO_NUMPY = frozenset({"values", "to_numpy"})
_ARRAY_METHODS = frozenset({"astype", "reshape", "copy", "T", "transpose", "squeeze",
                            "ravel", "flatten"})
# Elements at or over which an array counts as large: 4 MiB of float32. The claim measured
# a 1024x1024 float32 closure at 11-15x the trace time and a 4 MiB GraphDef (docs).
LARGE = 1 << 20
# Reading these only asks Python about the array: nothing is copied into the graph.
_PYTHON_ATTRS = frozenset({"shape", "dtype", "ndim", "size", "nbytes", "itemsize"})
_DEPTH = 4


def _literal_size(node: Any) -> int | None:
    """Elements of a literal shape: ``(4096, 4096)``, ``[n, m]`` of literals, ``1 << 22``."""
    if type(node) is ast.Constant and type(node.value) is int:
        return node.value
    if type(node) in (ast.Tuple, ast.List):
        total = 1
        for e in node.elts:
            v = _literal_size(e)
            if v is None:
                return None
            total *= v
        return total
    if type(node) is ast.BinOp and type(node.left) is ast.Constant \
            and type(node.right) is ast.Constant:
        try:
            v = eval(compile(ast.Expression(node), "<size>", "eval"), {"__builtins__": {}})
        except Exception:  # any literal arithmetic that cannot be folded
            return None
        return v if type(v) is int else None
    return None


def _loader(q: str) -> str | None:
    """A dataset loader's arrays: ``tf.keras.datasets.mnist.load_data()``, scikit-learn's."""
    if (q.endswith(".load_data") and ".datasets." in q) or q.startswith("sklearn.datasets."):
        return "a dataset's arrays"
    return None


def large_array(ctx: Context, expr: Any, depth: int = 0) -> str | None:
    """Why ``expr`` is a large NumPy array ("read from a file", "a dataset's arrays", "4096 x
    4096 elements"), or None. Names are followed to their assignment."""
    if expr is None or depth > _DEPTH:
        return None
    t = type(expr)
    if t is ast.Name:
        b = ctx.binding(expr)
        if b is not None and b.kind == "other" and type(b.value) in (ast.Tuple, ast.List):
            # `(x_train, y_train), _ = mnist.load_data()`: unpacked from a dataset loader
            stmt = next((p for p in ctx.ancestors(b.value) if isinstance(p, ast.stmt)), None)
            if type(stmt) is ast.Assign and type(stmt.value) is ast.Call:
                return _loader(ctx.call_qualname(stmt.value) or "")
            return None
        if b is None or b.kind != "assign":
            return None
        return large_array(ctx, b.value, depth + 1)
    if t is ast.Attribute:
        if expr.attr in _ARRAY_METHODS or (
                expr.attr in _TO_NUMPY and type(expr.value) is ast.Call
                and (ctx.call_qualname(expr.value) or "").startswith(_PANDAS)):
            return large_array(ctx, expr.value, depth + 1) if expr.attr in _ARRAY_METHODS \
                else "a table read from a file"
        return None
    if t is ast.Subscript:  # np.load("f.npz")["x"]: one array of the archive
        inner = expr.value
        if type(inner) is ast.Call and ctx.call_qualname(inner) in _READERS:
            return "read from a file"
        return None
    if t is not ast.Call:
        return None
    q = ctx.call_qualname(expr) or ""
    if q in _READERS:
        return "read from a file"
    if q.startswith(_PANDAS):
        return None  # a DataFrame, not an array: `.values` makes one (above)
    if _loader(q):
        return _loader(q)
    if q in ("numpy.array", "numpy.asarray", "numpy.float32", "numpy.ascontiguousarray") \
            and expr.args:
        return large_array(ctx, expr.args[0], depth + 1)
    size: int | None = None
    if q in _MAKERS and expr.args:
        size = _literal_size(expr.args[0])
    elif q in _SIZED_BY_ARGS and expr.args:
        size = _literal_size(ast.Tuple(elts=list(expr.args), ctx=ast.Load()))
    elif q in _SIZED_BY_KEYWORD:
        shape = next((k.value for k in expr.keywords if k.arg == "size"), None)
        if shape is None and len(expr.args) >= 3:
            shape = expr.args[2]
        size = _literal_size(shape) if shape is not None else None
    if type(expr.func) is ast.Attribute and expr.func.attr in _ARRAY_METHODS:
        return large_array(ctx, expr.func.value, depth + 1)
    if size is not None and size >= LARGE:
        return f"{size:,} elements"
    return None


def _used_as_value(ctx: Context, name: ast.Name) -> bool:
    """The whole array goes into an op: an argument of a TensorFlow call, or an operand of
    arithmetic (``x @ table``). Not ``table.shape``, ``len(table)``, ``table[0]`` (a NumPy
    slice made at trace time)."""
    parent = ctx.parent(name)
    if type(parent) is ast.Call and name in parent.args:
        return (ctx.call_qualname(parent) or "").startswith("tensorflow.")
    if type(parent) is ast.keyword:
        call = ctx.parent(parent)
        return type(call) is ast.Call and (ctx.call_qualname(call) or "").startswith(
            "tensorflow.")
    return type(parent) is ast.BinOp


# A file's array may be any size (a mean, a std, a few YOLO anchors): read from one, it
# counts only where traced code uses it as a table or a weight matrix (a lookup, a matmul).
_SIZE_UNKNOWN = frozenset({"read from a file", "a table read from a file"})
_TABLE_OPS = frozenset({"tensorflow.gather", "tensorflow.gather_nd",
                        "tensorflow.nn.embedding_lookup", "tensorflow.matmul",
                        "tensorflow.linalg.matmul", "tensorflow.tensordot",
                        "tensorflow.einsum", "tensorflow.compat.v1.gather"})


def _table_use(ctx: Context, name: ast.Name) -> bool:
    """``name`` is looked up in or multiplied by a matrix: ``tf.gather(t, ids)``,
    ``tf.matmul(x, w)``, ``x @ w`` (not ``(x - mean) / std``)."""
    parent = ctx.parent(name)
    if type(parent) is ast.keyword:
        parent = ctx.parent(parent)
    if type(parent) is ast.BinOp:
        return type(parent.op) is ast.MatMult
    return type(parent) is ast.Call and ctx.call_qualname(parent) in _TABLE_OPS


def _counts(ctx: Context, name: ast.Name, why: str | None) -> bool:
    """An array of ``why``'s kind, used at ``name``, is large enough to report."""
    return why is not None and (why not in _SIZE_UNKNOWN or _table_use(ctx, name))


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
# These run the Python function they are given eagerly, at each call: nothing is traced.
_EAGER_WRAPPERS = frozenset({"tensorflow.py_function", "tensorflow.numpy_function",
                             "tensorflow.compat.v1.py_func", "tensorflow.py_func",
                             "tensorflow.compat.v1.py_function",
                             "tensorflow.compat.v1.numpy_function"})


def _run_eagerly(ctx: Context, name: ast.Name, traced: ast.AST) -> bool:
    """``name`` is in a function nested in ``traced`` that ``tf.py_function`` (or
    ``numpy_function``) runs: given to it as a lambda, or a nested ``def`` given by name."""
    for p in ctx.ancestors(name):
        if p is traced:
            return False
        if type(p) not in _FUNCTIONS:
            continue
        parent = ctx.parent(p)
        if type(parent) is ast.keyword:
            parent = ctx.parent(parent)
        if type(parent) is ast.Call and ctx.call_qualname(parent) in _EAGER_WRAPPERS:
            return True
        fn_name = getattr(p, "name", None)
        if fn_name is not None and any(
                ctx.call_qualname(c) in _EAGER_WRAPPERS and any(
                    type(a) is ast.Name and a.id == fn_name
                    for a in (*c.args[:1], *(k.value for k in c.keywords if k.arg == "func")))
                for c in ast.walk(traced) if type(c) is ast.Call):
            return True
    return False


def _traced_uses(ctx: Context) -> list[ast.Name]:
    """Names read as whole values in traced code (``tf.function`` bodies, ``tf.data`` map
    functions): only the traced functions are walked, not every name of the module."""
    def compute() -> list[ast.Name]:
        out: list[ast.Name] = []
        seen: set[int] = set()
        for fn in ctx.nodes_of(*_FUNCTIONS):
            if not (ctx.is_tf_function(fn) or ctx.dataset_map_call(fn) is not None):
                continue
            for n in ast.walk(fn):
                if type(n) is ast.Name and type(n.ctx) is ast.Load and id(n) not in seen \
                        and _used_as_value(ctx, n) and not _run_eagerly(ctx, n, fn):
                    seen.add(id(n))
                    out.append(n)
        return out
    return ctx.cached("tfp313_traced_uses", compute)


class NumpyArrayBakedIntoGraph(Rule):
    code = "TFP313"
    name = "numpy-array-baked-into-graph"
    message = ("a large NumPy array is used by traced code: each trace copies it into the "
               "graph as a constant")
    hint = ("make it a tensor once, outside the traced function (table = "
            "tf.constant(array) at module level or in __init__, captured by reference), pass "
            "it as an argument, or keep it in a tf.Variable; for training data, feed batches "
            "through tf.data")
    claims = ("S13",)
    group = "preview"  # no judged finding on user code yet (stop 42)
    node_types = ()
    # numpy/pandas alone: a module that only loads the array publishes it for importers
    requires_imports = frozenset({"tensorflow", "numpy", "pandas"})
    docs = """\
## What it does
Finds a NumPy array that is large (read with `np.load`/`np.loadtxt`/`np.genfromtxt`, a
pandas table's `.values`, a Keras or scikit-learn dataset's arrays, or made with a literal
shape of at least 1,048,576 elements) used whole by traced code: an argument of a TensorFlow
op or an operand of arithmetic inside a `tf.function` or a `tf.data` map function, read
through a closure, a module global (also one imported from another module of the project)
or `tf.constant(array)` written inside. An array read from a file (or a pandas table) may
be a few numbers (a mean, anchors): it counts only where it is looked up or multiplied by
(`tf.gather`, `tf.nn.embedding_lookup`, `tf.matmul`, `@`), not in elementwise arithmetic.

## Why is this bad?
A NumPy value reaching traced code becomes a `Const` node holding a copy of its bytes: the
graph grows by the array's size, every trace (each new input signature) copies and
serialises it again, and a graph over 2 GB cannot be built at all. An eager tensor made
once outside is captured by reference instead (`benchmarks/lint_fixes/rule_claims.py
--cases TFP313`, TF 2.21 CPU: a 1024x1024 float32 array made each retrace 11-15x slower and
the GraphDef 4 MiB instead of 0.3 KiB; at 4096x4096, 370-450x and 64 MiB; later calls of a
traced function run the same).

## Example
```python
embeddings = np.load("glove.npy")

@tf.function
def lookup(ids):
    return tf.gather(embeddings, ids)
```

## Use instead
```python
embeddings = tf.constant(np.load("glove.npy"))   # once, eagerly: captured by reference

@tf.function
def lookup(ids):
    return tf.gather(embeddings, ids)
```

## Fix safety
No automatic fix. A tensor made once keeps the array's values as they were: code that
changes the NumPy array in place between calls (and relies on a retrace) must use a
`tf.Variable` and assign it.

## Known limitations
Arrays whose size the code does not show (a parameter, an array built by a function) are
not reported, nor small literal shapes; a slice (`table[0]`) is a NumPy value of its own
size. TF 1.x graphs built with `tf.constant(big)` outside a `tf.function` are not covered.
"""
    valid = (
        Valid("""
            import numpy as np
            import tensorflow as tf
            table = tf.constant(np.load("emb.npy"))
            @tf.function
            def lookup(ids):
                return tf.gather(table, ids)
        """, spelling="name: the array made a tensor once, outside"),
        Valid("""
            import numpy as np
            import tensorflow as tf
            mask = np.ones((8, 8), dtype=np.float32)
            @tf.function
            def step(x):
                return x * mask
        """, spelling="index: a small literal array"),
        Valid("""
            import numpy as np
            import tensorflow as tf
            (x_train, y_train), _ = tf.keras.datasets.mnist.load_data()
            ds = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(32)
            @tf.function
            def step(x, y):
                return tf.reduce_mean(tf.cast(x, tf.float32)) + x_train.shape[0]
            for x, y in ds:
                step(x, y)
        """, spelling="loop: the data through tf.data, only its shape read in the step"),
        Valid("""
            import tensorflow as tf
            from data import TABLE
            table = tf.constant(TABLE)
            @tf.function
            def lookup(ids):
                return tf.gather(table, ids)
        """, files={"data.py": """
            import numpy as np
            TABLE = np.load("table.npy")
        """}, spelling="module"),
        Valid("""
            import numpy as np
            import tensorflow as tf
            # %%
            weights = np.load("w.npy")
            # %%
            def lookup(ids):
                return tf.gather(weights, ids)
            out = lookup(tf.constant([1, 2]))
        """, notebook=True, spelling="notebook"),
        # A py_function's Python function runs eagerly: the array is not baked.
        Valid("""
            import tensorflow as tf
            (x_train, y_train), _ = tf.keras.datasets.mnist.load_data()
            ds = tf.data.Dataset.range(60000).map(
                lambda i: tf.py_function(lambda j: tf.gather(x_train, j), [i], tf.uint8))
            @tf.function
            def fetch(i):
                def take(j):
                    return tf.gather(x_train, j)
                return tf.py_function(func=take, inp=[i], Tout=tf.uint8)
        """, spelling="loop: a dataset's arrays read in a py_function's eager body"),
        # Arrays read from files, used elementwise: a mean and a std, a few anchors (the
        # file says nothing of the size; a table or a weight matrix is what is large).
        Valid("""
            import numpy as np
            import tensorflow as tf
            mean = np.load("mean.npy")
            std = np.load("std.npy")
            def normalize(x, y):
                return (tf.cast(x, tf.float32) - mean) / std, y
            ds = tf.data.Dataset.from_tensor_slices((xs, ys)).map(normalize)
        """, spelling="name: a mean and a std read from files, in a map function"),
        Valid("""
            import numpy as np
            import tensorflow as tf
            anchors = np.loadtxt("anchors.txt").reshape(-1, 2)
            @tf.function
            def decode(feats):
                return tf.exp(feats[..., 2:4]) * anchors
        """, spelling="index: YOLO anchors read from a text file"),
        Valid("""
            import tensorflow as tf
            from stats import MEAN
            @tf.function
            def center(x):
                return x - MEAN
        """, files={"stats.py": """
            import numpy as np
            MEAN = np.load("mean.npy")
        """}, spelling="module: a mean read from a file in another module"),
    )
    invalid = (
        Invalid("""
            import numpy as np
            import tensorflow as tf
            embeddings = np.load("glove.npy")
            @tf.function
            def lookup(ids):
                return tf.gather(embeddings, ids)
        """, count=1, lines=(6,), spelling="name: a closure over an array read from a file"),
        Invalid("""
            import numpy as np
            import tensorflow as tf
            noise = np.random.rand(2048, 2048).astype(np.float32)
            @tf.function
            def step(x):
                return tf.matmul(x, tf.constant(noise))
        """, count=1, lines=(6,), spelling="index: tf.constant of a 2048x2048 array inside"),
        Invalid("""
            import tensorflow as tf
            (x_train, y_train), _ = tf.keras.datasets.cifar10.load_data()
            @tf.function
            def train_step(idx):
                xb = tf.gather(x_train, idx)
                return tf.reduce_mean(tf.cast(xb, tf.float32))
            for epoch in range(10):
                for i in range(100):
                    train_step(tf.random.uniform([32], 0, 50000, tf.int32))
        """, count=1, lines=(5,), spelling="loop: a dataset's arrays gathered per step"),
        Invalid("""
            import numpy as np
            import pandas as pd
            import tensorflow as tf
            prices = pd.read_csv("prices.csv").values
            ds = tf.data.Dataset.range(100).map(lambda i: tf.gather(prices, i))
        """, count=1, lines=(5,), spelling="name: a pandas table's values in a map function"),
        Invalid("""
            import tensorflow as tf
            from data import TABLE
            @tf.function
            def lookup(ids):
                return tf.gather(TABLE, ids)
        """, files={"data.py": """
            import numpy as np
            TABLE = np.load("table.npy")
        """}, count=1, lines=(5,), spelling="module"),
        Invalid("""
            import numpy as np
            import tensorflow as tf
            # %%
            weights = np.load("w.npy")
            # %%
            @tf.function
            def project(x):
                return x @ weights
        """, count=1, notebook=True, spelling="notebook"),
    )

    def applies_to(self, ctx: Context) -> bool:
        return ctx.may_trace or ctx.spells_tf_function or not ctx.imports_tf

    def check_module(self, ctx: Context) -> Iterator[Finding]:
        if not ctx.imports_tf:
            return
        for name in _traced_uses(ctx):
            why = large_array(ctx, name)
            if _counts(ctx, name, why):
                yield self.finding(ctx, name, message=(
                    f"a large NumPy array ({why}) is used by traced code: each trace copies "
                    "it into the graph as a constant"))

    def publish(self, ctx: Context) -> list[dict] | None:
        """Module-level names bound to large arrays, and names imported from another module
        that traced code here uses whole (with where)."""
        if not ctx.imports_tf and not ctx.imported_roots & {"numpy"}:
            return None
        from tfperf.analysis.summary import position

        facts: list[dict] = []
        for stmt in ctx.tree.body:
            if type(stmt) is ast.Assign and len(stmt.targets) == 1 \
                    and type(stmt.targets[0]) is ast.Name:
                why = large_array(ctx, stmt.value)
                if why is not None:
                    facts.append({"big": stmt.targets[0].id, "why": why})
        if ctx.imports_tf and (ctx.may_trace or ctx.spells_tf_function):
            for n in _traced_uses(ctx):
                imported = imported_from(ctx, n)
                if imported is not None:
                    facts.append({"use": imported[1], "from": imported[0],
                                  "table": _table_use(ctx, n),
                                  "pos": position(ctx, n)})
        return facts or None

    def check_project(self, project: Project) -> Iterator[Finding]:
        for module, fact, defined in project.imported_uses(self.code):
            for f in defined:
                if f.get("big") == fact["use"]:
                    if f["why"] in _SIZE_UNKNOWN and not fact.get("table"):
                        break  # a file's array used elementwise: maybe a few numbers
                    yield self.project_finding(
                        module.path, fact["pos"],
                        f"a large NumPy array ({fact['use']} from {fact['from']}: "
                        f"{f['why']}) is used by traced code: each trace copies it into "
                        "the graph as a constant")
                    break
