"""TFP501: a NumPy float64 array turned into a tensor without a dtype (silent float64)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding, Fix
from tfperf.lint.analysis.assignments import assigned_value
from tfperf.lint.analysis.syntax import keyword
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

# Tensor makers → the positional index of their dtype argument (None: keyword only / none).
TENSOR_MAKERS: dict[str, int | None] = {
    "tensorflow.constant": 1, "tensorflow.convert_to_tensor": 1, "tensorflow.Variable": None,
    "tensorflow.data.Dataset.from_tensor_slices": None,
    "tensorflow.data.Dataset.from_tensors": None,
}
# NumPy functions that return float64 by default → positional index of their dtype argument.
FLOAT64_FILLERS = {"numpy.zeros": 1, "numpy.ones": 1, "numpy.empty": 1, "numpy.identity": 1,
                   "numpy.eye": 3, "numpy.linspace": 5}
# NumPy random functions → positional index of ``size`` (without it they return a Python
# float, which TensorFlow makes float32).
FLOAT64_RANDOM = {f"numpy.random.{n}": i for n, i in (
    ("rand", 0), ("randn", 0), ("random", 0), ("random_sample", 0), ("sample", 0), ("ranf", 0),
    ("standard_normal", 0), ("uniform", 2), ("normal", 2), ("exponential", 1), ("gamma", 2),
    ("beta", 2), ("laplace", 2), ("lognormal", 2))}
# Methods of a ``np.random.default_rng()`` Generator (or a RandomState) → index of ``size``.
GENERATOR_METHODS = {"random": 0, "standard_normal": 0, "uniform": 2, "normal": 2,
                     "exponential": 1, "rand": 0, "randn": 0, "random_sample": 0}
GENERATORS = frozenset({"numpy.random.default_rng", "numpy.random.RandomState",
                        "numpy.random.Generator"})


def _has_arg(call: ast.Call, index: int | None, name: str) -> bool:
    if keyword(call, name) is not None:
        return True
    if any(k.arg is None for k in call.keywords) or any(
            type(a) is ast.Starred for a in call.args):
        return True  # `**kwargs` / `*args` may hold it: assume they do
    if index is None:
        return False
    if index == 0 and name == "size":  # rand(3, 4): the shape is all the positionals
        return bool(call.args)
    return len(call.args) > index


class SilentFloat64(Rule):
    code = "TFP501"
    name = "silent-float64"
    message = "NumPy float64 array made into a tensor without a dtype: a float64 tensor"
    hint = "pass dtype=tf.float32 (or build the array as float32: dtype=np.float32 / .astype)"
    claims = ("S3",)
    group = "pedantic"
    node_types = (ast.Call,)
    callee_qualnames = frozenset(TENSOR_MAKERS)
    fixable = True
    docs = """\
## What it does
Finds `tf.constant`, `tf.convert_to_tensor`, `tf.Variable` and
`tf.data.Dataset.from_tensor_slices`/`from_tensors` given a NumPy array that is float64 by
default (`np.random.rand(...)`, `np.random.randn(...)`, `np.zeros(...)`, `np.linspace(...)`,
`rng.normal(size=...)`...), directly or through a variable, with no `dtype`.

## Why is this bad?
NumPy's default float is float64 and TensorFlow keeps the array's dtype: the tensor, and
everything computed from it, is float64. That doubles memory traffic against float32 (and
quadruples it against float16, claim S3), runs at a fraction of float32 speed on GPUs (many
have 1/32 or 1/64 the float64 throughput), and fails with a dtype error the first time it
meets a float32 weight.

## Example
```python
x = tf.constant(np.random.rand(1024, 1024))
ds = tf.data.Dataset.from_tensor_slices(np.random.randn(1000, 32))
```

## Use instead
```python
x = tf.constant(np.random.rand(1024, 1024), dtype=tf.float32)
ds = tf.data.Dataset.from_tensor_slices(np.random.randn(1000, 32).astype(np.float32))
```

## Fix safety
The fix makes the NumPy array float32 where it is built inside the call
(`dtype=np.float32` for `np.zeros`-like functions, `.astype(np.float32)` for random ones). It
is **unsafe**: values are rounded to float32, and code that relied on float64 precision
changes results. No fix when the array comes through a variable (other uses may need
float64) or NumPy is not imported under a module-level name.
"""
    valid = (
        Valid("""
            import numpy as np
            import tensorflow as tf
            x = tf.constant(np.random.rand(3, 4), dtype=tf.float32)
        """),
        Valid("""
            import numpy as np
            import tensorflow as tf
            ds = tf.data.Dataset.from_tensor_slices(np.zeros((10, 3), dtype=np.float32))
        """),
        # Without a size NumPy returns a Python float, which TensorFlow makes float32.
        Valid("""
            import numpy as np
            import tensorflow as tf
            x = tf.constant(np.random.rand())
        """),
        # Integers, and explicit casts.
        Valid("""
            import numpy as np
            import tensorflow as tf
            a = np.random.rand(5).astype(np.float32)
            x = tf.convert_to_tensor(a)
            y = tf.constant(np.arange(10))
        """),
        # Not TensorFlow's constant.
        Valid("""
            import numpy as np
            def constant(v):
                return v
            x = constant(np.random.rand(3))
        """),
    )
    invalid = (
        Invalid("""
            import numpy as np
            import tensorflow as tf
            np.random.seed(0)
            x = tf.constant(np.random.rand(3, 4))
        """, count=1, lines=(4,), fixed="""
            import numpy as np
            import tensorflow as tf
            np.random.seed(0)
            x = tf.constant(np.random.rand(3, 4).astype(np.float32))
        """),
        Invalid("""
            import numpy as numpy_alias
            import tensorflow as tensorflow_alias
            t = tensorflow_alias.convert_to_tensor(numpy_alias.zeros((2, 2)))
        """, count=1, lines=(3,), fixed="""
            import numpy as numpy_alias
            import tensorflow as tensorflow_alias
            t = tensorflow_alias.convert_to_tensor(numpy_alias.zeros((2, 2), dtype=numpy_alias.float32))
        """),  # noqa: E501 (the fixed line is as long as the fix makes it)
        # Through a variable and in a tuple: reported, not fixed.
        Invalid("""
            import numpy as np
            from tensorflow.data import Dataset
            features = np.random.randn(100, 8)
            labels = np.arange(100)
            ds = Dataset.from_tensor_slices((features, labels))
        """, count=1, lines=(5,)),
        # A Generator's draws are float64 too.
        Invalid("""
            import numpy as np
            import tensorflow as tf
            rng = np.random.default_rng(0)
            w = tf.Variable(rng.normal(0.0, 1.0, size=(4, 4)))
        """, count=1, lines=(4,), fixed="""
            import numpy as np
            import tensorflow as tf
            rng = np.random.default_rng(0)
            w = tf.Variable(rng.normal(0.0, 1.0, size=(4, 4)).astype(np.float32))
        """),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        if not ctx.imports_tf:
            return
        q = ctx.call_qualname(node)
        if q not in TENSOR_MAKERS:
            return
        call: ast.Call = node  # type: ignore[assignment]
        if _has_arg(call, TENSOR_MAKERS[q], "dtype"):
            return
        value = call.args[0] if call.args else next(
            (k.value for k in call.keywords
             if k.arg in ("value", "initial_value", "tensors", "element")), None)
        if value is None:
            return
        items = value.elts if type(value) in (ast.Tuple, ast.List) and \
            q.startswith("tensorflow.data") else [value]
        if type(value) is ast.Dict and q.startswith("tensorflow.data"):
            items = [v for v in value.values if v is not None]
        for item in items:
            direct = self._float64_maker(ctx, item)
            if direct is not None:
                yield self.finding(ctx, node, fix=self._fix(ctx, item, direct))  # type: ignore[arg-type]
                return
            via = assigned_value(ctx, item)
            if via is not None and self._float64_maker(ctx, via) is not None:
                yield self.finding(ctx, node)
                return

    @staticmethod
    def _float64_maker(ctx: Context, expr: ast.AST) -> str | None:
        """"fill" / "random" when ``expr`` builds a float64 NumPy array, else ``None``."""
        if type(expr) is not ast.Call:
            return None
        q = ctx.qualname(expr.func)
        if q in FLOAT64_FILLERS:
            return None if _has_arg(expr, FLOAT64_FILLERS[q], "dtype") else "fill"
        if q in FLOAT64_RANDOM:
            return "random" if _has_arg(expr, FLOAT64_RANDOM[q], "size") else None
        func = expr.func
        if type(func) is ast.Attribute and func.attr in GENERATOR_METHODS:
            owner = assigned_value(ctx, func.value) if type(func.value) is ast.Name else func.value
            if type(owner) is ast.Call and ctx.qualname(owner.func) in GENERATORS:
                if keyword(expr, "dtype") is not None:
                    return None
                if func.attr in ("random", "standard_normal") and len(expr.args) > 1:
                    return None  # Generator.random(size, dtype)
                return "random" if _has_arg(expr, GENERATOR_METHODS[func.attr], "size") else None
        return None

    def _fix(self, ctx: Context, np_call: ast.Call, kind: str) -> Fix | None:
        np_alias = ctx.module_alias("numpy")
        if np_alias is None:
            return None
        if kind == "random":
            edit = ctx.insert_after(np_call, f".astype({np_alias}.float32)")
        else:
            given = np_call.args + [k.value for k in np_call.keywords]
            if not given:
                return None
            last = max(given, key=lambda n: (n.end_lineno or 0, n.end_col_offset or 0))
            edit = ctx.insert_after(last, f", dtype={np_alias}.float32")
        return self.unsafe_fix(edit, description="build the array as float32")
