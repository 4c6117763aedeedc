"""TFP702: a non-trainable tf.Variable that nothing ever assigns: a constant in disguise."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding, Fix
from tfperf.lint.analysis.tensors import VARIABLE_CLASSES, is_variable_call
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context, returns_tensor

# Methods that change a variable's value in place.
ASSIGN_METHODS = frozenset({
    "assign", "assign_add", "assign_sub", "scatter_update", "scatter_add", "scatter_sub",
    "scatter_mul", "scatter_div", "scatter_max", "scatter_min", "scatter_nd_update",
    "scatter_nd_add", "scatter_nd_sub", "scatter_nd_max", "scatter_nd_min", "batch_scatter_update",
    "load", "initializer", "assign_lazy_load",
})
# Attributes that only read a variable.
_READ_ATTRS = frozenset({"shape", "dtype", "numpy", "value", "read_value", "device",
                         "get_shape", "name"})
# Initial values that usually stand for "filled in later" (from a checkpoint, or assigned
# by code this module cannot see).
_PLACEHOLDER_INITS = frozenset({
    "tensorflow.zeros", "tensorflow.ones", "tensorflow.zeros_like", "tensorflow.ones_like",
    "tensorflow.fill", "tensorflow.constant_initializer", "tensorflow.random.normal",
    "tensorflow.random.uniform", "tensorflow.random.truncated_normal",
})
# Calls that read data in (a pretrained table, a saved array): a value loaded, not built.
_LOADERS = ("numpy.load", "numpy.loadtxt", "numpy.genfromtxt", "numpy.fromfile",
            "numpy.memmap", "tensorflow.io.", "tensorflow.saved_model.", "tensorflow.train.",
            "tensorflow.keras.models.load_model", "pickle.", "h5py.")


def built_here(ctx: Context, value: ast.AST | None, depth: int = 0) -> bool:
    """The variable's initial value is built in this code from literals and sizes (a
    mask, a window, a small table), not data read in (a pretrained embedding passed in,
    loaded, or converted from another library: ``vocab.embedding.idx_to_vec.asnumpy()``).
    A loaded table is usually large, and a ``tf.constant`` of it would be copied into
    every traced graph (the 2 GB GraphDef limit; issue 25's precision round 4)."""
    if value is None or depth > 3:
        return False
    tp = type(value)
    if tp is ast.Constant:
        return True
    if tp in (ast.List, ast.Tuple):
        return all(built_here(ctx, e, depth + 1) for e in value.elts)
    if tp is ast.UnaryOp:
        return built_here(ctx, value.operand, depth + 1)
    if tp is ast.BinOp:
        return built_here(ctx, value.left, depth + 1) \
            and built_here(ctx, value.right, depth + 1)
    if tp is ast.Name:
        b = ctx.binding(value)  # type: ignore[arg-type]
        # A size or a local built value; a parameter or an import is data from outside.
        return b is not None and b.kind == "assign" and built_here(ctx, b.value, depth + 1)
    if tp is ast.Call:
        q = ctx.call_qualname(value) or ""
        return q.startswith(("tensorflow.", "numpy.")) and not q.startswith(_LOADERS)
    return False


_FIX_KEYWORDS = frozenset({"trainable", "dtype", "name", "initial_value"})


def _read_only_use(ctx: Context, use: ast.AST) -> bool:
    """The variable is only read here: arithmetic, a comparison, indexing, an argument to a
    tensor op, or a read-only attribute. Anything else (assigned, passed to other code,
    returned, stored) may change it or hand it to code that does."""
    p = ctx.parent(use)
    tp = type(p)
    if tp in (ast.BinOp, ast.UnaryOp, ast.Compare):
        return True
    if tp is ast.Subscript:
        return p.value is use and type(p.ctx) is ast.Load
    if tp is ast.Attribute:
        return p.attr in _READ_ATTRS
    if tp is ast.Call:
        if use not in p.args:
            return False
        q = ctx.qualname(p.func)
        return bool(q) and returns_tensor(q) and not q.endswith(  # type: ignore[arg-type]
            ("assign", "assign_add", "assign_sub")) and "scatter" not in q  # type: ignore[operator]
    return False


# Reads of a module's or layer's variables as a collection: whatever they serve (saving,
# copying weights, averaging), they would miss a variable turned into a constant.
_COLLECTION_ATTRS = frozenset({
    "variables", "non_trainable_variables", "weights", "non_trainable_weights",
    "get_weights", "set_weights", "save_weights", "load_weights", "Checkpoint",
    "submodules",
})


def _variables_read(ctx: Context) -> bool:
    """The module reads some object's variables as a collection (``m.variables``,
    ``layer.weights``, ``get_weights()``, a ``tf.train.Checkpoint``)."""
    return ctx.cached("tfp702_variables_read", lambda: any(
        a.attr in _COLLECTION_ATTRS for a in ctx.nodes_of(ast.Attribute)))


class ConstantVariable(Rule):
    code = "TFP702"
    name = "constant-variable"
    message = "tf.Variable(trainable=False) that is never assigned: use tf.constant"
    hint = "make it a tf.constant (folded into graphs, no variable reads, nothing to initialise)"
    claims = ("S9",)
    group = "preview"  # 1 finding on 153 repositories: not measurable yet
    node_types = (ast.Call,)
    callee_qualnames = VARIABLE_CLASSES
    fixable = True
    docs = """\
## What it does
Finds `tf.Variable(value, trainable=False)` bound to a name (or to `self.<attr>`) that is only
ever read in the module: no `.assign`/`.assign_add`/`.assign_sub`/`scatter_*`, and never handed
to other code (a function argument, a checkpoint, a return value) that might change it.

## Why is this bad?
A variable that never changes is a constant paying for a variable. The article (claim S9)
advises `tf.constant` for fixed tables, masks and kernels: a constant can be folded into the
graph by Grappler and XLA, while a variable is a resource read at every use, must be
initialised (on the GPU, a large one costs time and memory), and blocks constant folding of
everything computed from it.

## Example
```python
mask = tf.Variable(tf.linalg.band_part(tf.ones([n, n]), -1, 0), trainable=False)
scores = scores * mask
```

## Use instead
```python
mask = tf.constant(tf.linalg.band_part(tf.ones([n, n]), -1, 0))
scores = scores * mask
```

## Fix safety
The fix rewrites the call to `tf.constant(value, dtype=..., name=...)` when the call has only
those arguments and `trainable=False`. It is **unsafe**: a `tf.Variable` is tracked by Keras
and `tf.train.Checkpoint` (it is saved, and restored from checkpoints) and has variable
methods other modules may call; a constant is neither. No fix inside `tf.function` (a
constant cannot be made from a symbolic tensor) or for a callable initial value.

For a variable kept on `self` of a class with bases (a `tf.Module`, a Keras layer) there is
no fix: the object's `.variables`, its checkpoints and SavedModels hold the variable, and a
constant would silently leave them.

## Known limitations
In `preview` (not on by default): on the 153 repositories judged so far it fired once
(minor); a default rule needs at least 5 judged findings at 80 % or better (docs/lint.md,
"Rules that rarely fire").

Not reported where the initial value is data read in rather than built in the code from
literals and sizes: a parameter, a value converted from another library
(`vocab.embedding.idx_to_vec.asnumpy()`), `np.load`, `tf.io`/checkpoint reads. Such a table
(a pretrained embedding) is usually large, and as a `tf.constant` it would be copied into
every traced graph (precision round 4: judged false twice).
Not reported: attributes of a module that reads variables as a collection (`m.variables`,
`layer.weights`, `get_weights()`, `save_weights`, a `tf.train.Checkpoint`); variables that
are assigned anywhere in the module, handed to other code, or returned; attributes of a
class whose initial value looks like a placeholder filled later (`tf.zeros`, `tf.ones`,
random initialisers: a checkpoint restore or `load_weights` writes them); trainable
variables.
"""
    valid = (
        # Updated in place: a real variable (a step counter).
        Valid("""
            import tensorflow as tf
            step = tf.Variable(0, trainable=False)
            def bump():
                step.assign_add(1)
        """),
        # Handed to a checkpoint, which restores it.
        Valid("""
            import tensorflow as tf
            table = tf.Variable(tf.range(10.0), trainable=False)
            ckpt = tf.train.Checkpoint(table=table)
            y = table * 2.0
        """),
        # Trainable (the default): the optimizer changes it.
        Valid("""
            import tensorflow as tf
            w = tf.Variable(tf.ones([3]))
            y = w * 2.0
        """),
        # A layer's buffer starting as zeros: loaded from a checkpoint later.
        Valid("""
            import tensorflow as tf
            class Embed(tf.keras.layers.Layer):
                def __init__(self):
                    super().__init__()
                    self.table = tf.Variable(tf.zeros([100, 8]), trainable=False)
                def call(self, ids):
                    return tf.gather(self.table, ids)
        """),
        # Assigned from another object: `model.moving_mean.assign(...)`.
        Valid("""
            import tensorflow as tf
            class Norm(tf.Module):
                def __init__(self):
                    self.moving_mean = tf.Variable(tf.constant([0.5, 0.5]), trainable=False)
                def __call__(self, x):
                    return x - self.moving_mean
            def update(norm, m):
                norm.moving_mean.assign(m)
        """),
        # Returned: the caller may assign it.
        Valid("""
            import tensorflow as tf
            def make_counter():
                c = tf.Variable(0, trainable=False)
                return c
        """),
        # The module exposes its variables (an exponential moving average reads them).
        Valid("""
            import tensorflow as tf
            class Scale(tf.Module):
                def __init__(self):
                    self.factor = tf.Variable([1.0, 2.0], trainable=False)
                def __call__(self, x):
                    return x * self.factor
            ema = tf.train.ExponentialMovingAverage(0.99)
            ema.apply(Scale().variables)
        """),
        # Someone else's Variable.
        Valid("""
            from pulp import Variable
            x = Variable('x', trainable=False)
            y = x * 2
        """),
    )
    invalid = (
        Invalid("""
            import tensorflow as tf
            n = 8
            mask = tf.Variable(tf.linalg.band_part(tf.ones([n, n]), -1, 0), trainable=False)
            def attend(scores):
                return scores * mask
        """, count=1, lines=(3,), fixed="""
            import tensorflow as tf
            n = 8
            mask = tf.constant(tf.linalg.band_part(tf.ones([n, n]), -1, 0))
            def attend(scores):
                return scores * mask
        """),
        # On self of a tf.Module: reported, but no fix (its .variables and checkpoints
        # would lose it).
        Invalid("""
            import numpy as np
            import tensorflow as tf
            class Filter(tf.Module):
                def __init__(self):
                    self.kernel = tf.Variable(np.hanning(5), trainable=False,
                                              dtype=tf.float32, name='hann')
                def __call__(self, x):
                    return tf.tensordot(x, self.kernel, axes=1)
        """, count=1, lines=(5,)),
        # On self of a plain class, read through tensor ops; dtype and name kept.
        Invalid("""
            import numpy as np
            import tensorflow as tf
            class Window:
                def __init__(self):
                    self.kernel = tf.Variable(np.hanning(5), trainable=False,
                                              dtype=tf.float32, name='hann')
                def apply(self, x):
                    return tf.tensordot(x, self.kernel, axes=1)
        """, count=1, lines=(5,), fixed="""
            import numpy as np
            import tensorflow as tf
            class Window:
                def __init__(self):
                    self.kernel = tf.constant(np.hanning(5), dtype=tf.float32, name='hann')
                def apply(self, x):
                    return tf.tensordot(x, self.kernel, axes=1)
        """),
        # Module alias with compat.v1.
        Invalid("""
            import tensorflow as tensorflow_alias
            scale = tensorflow_alias.compat.v1.Variable(initial_value=[1.0, 2.0], trainable=False)
            y = tensorflow_alias.ones([2]) * scale
        """, count=1, lines=(2,), fixed="""
            import tensorflow as tensorflow_alias
            scale = tensorflow_alias.constant([1.0, 2.0])
            y = tensorflow_alias.ones([2]) * scale
        """),
        # `from tensorflow import Variable`: reported; no module alias, so no fix.
        Invalid("""
            from tensorflow import Variable, matmul
            eye = Variable([[1.0, 0.0], [0.0, 1.0]], trainable=False)
            def f(x):
                return matmul(x, eye)
        """, count=1, lines=(2,)),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        if not is_variable_call(ctx, node):
            return
        kw = {k.arg: k.value for k in node.keywords if k.arg}
        trainable = kw.get("trainable")
        if not (type(trainable) is ast.Constant and trainable.value is False):
            return
        initial = node.args[0] if node.args else kw.get("initial_value")
        if not built_here(ctx, initial):
            return  # data read in: a Variable is the right container for it
        stmt = ctx.parent(node)
        if type(stmt) is not ast.Assign or len(stmt.targets) != 1 or stmt.value is not node:
            return
        target = stmt.targets[0]
        if type(target) is ast.Name:
            if not self._name_read_only(ctx, stmt, target):
                return
            fix = self._fix(ctx, node, kw)  # type: ignore[arg-type]
        elif type(target) is ast.Attribute and type(target.value) is ast.Name \
                and target.value.id == "self":
            if not self._attr_read_only(ctx, node, target) or _variables_read(ctx):  # type: ignore[arg-type]
                return
            cls = ctx.enclosing_class(node)
            # A class with bases may be a tf.Module or a Keras layer: its `.variables`,
            # checkpoints and SavedModels hold the variable, and would lose a constant.
            fix = None if cls is None or cls.bases or cls.keywords \
                else self._fix(ctx, node, kw)  # type: ignore[arg-type]
        else:
            return
        yield self.finding(ctx, node, fix=fix)

    @staticmethod
    def _name_read_only(ctx: Context, stmt: ast.Assign, target: ast.Name) -> bool:
        scope = ctx.scope_of(stmt)
        uses = 0
        for n in ast.walk(scope):
            if type(n) is not ast.Name or n.id != target.id or n is target:
                continue
            if type(n.ctx) is not ast.Load:
                return False  # rebound somewhere: too clever to follow
            b = ctx.binding(n)
            if b is None or b.value is not stmt.value:
                continue
            if not _read_only_use(ctx, n):
                return False
            uses += 1
        return uses > 0

    @staticmethod
    def _attr_read_only(ctx: Context, call: ast.Call, target: ast.Attribute) -> bool:
        cls = ctx.enclosing_class(call)
        if cls is None:
            return False
        init = call.args[0] if call.args else next(
            (k.value for k in call.keywords if k.arg == "initial_value"), None)
        if type(init) is ast.Call and ctx.qualname(init.func) in _PLACEHOLDER_INITS:
            return False
        uses = 0
        for n in ctx.nodes_of(ast.Attribute):
            if n.attr != target.attr or n is target:
                continue
            mine = type(n.value) is ast.Name and n.value.id == "self" \
                and ctx.enclosing_class(n) is cls
            if not mine or type(n.ctx) is not ast.Load or not _read_only_use(ctx, n):
                return False  # set again, used from outside, or handed on
            uses += 1
        return uses > 0

    def _fix(self, ctx: Context, call: ast.Call, kw: dict[str, ast.expr]) -> Fix | None:
        tf = ctx.module_alias("tensorflow")
        if tf is None or type(call.func) is not ast.Attribute or ctx.in_graph(call):
            return None
        if not set(kw) <= _FIX_KEYWORDS or len(call.args) > 1 \
                or (call.args and "initial_value" in kw) \
                or any(k.arg is None for k in call.keywords):
            return None
        value = call.args[0] if call.args else kw.get("initial_value")
        if value is None or type(value) is ast.Lambda:
            return None
        parts = [ctx.source_of(value)]
        parts += [f"{k}={ctx.source_of(kw[k])}" for k in ("dtype", "name") if k in kw]
        return self.unsafe_fix(ctx.replace(call, f"{tf}.constant({', '.join(parts)})"),
                               description="a constant instead of a never-assigned variable")
