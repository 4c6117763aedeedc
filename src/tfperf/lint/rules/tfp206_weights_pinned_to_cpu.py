"""TFP206: a layer's weights created under ``tf.device('/cpu:0')`` and multiplied outside it."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from tfperf.core.findings import Finding
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

_DEVICE_CALLS = frozenset({"tensorflow.device", "tensorflow.compat.v1.device"})
_VARIABLE_CALLS = frozenset(f"tensorflow.{p}{n}" for p in ("", "compat.v1.")
                            for n in ("get_variable", "Variable"))
# Ops whose work is a product over a weight: placed on the accelerator by default, they
# copy a CPU-pinned weight over on every run.
_PRODUCTS = frozenset(f"tensorflow.{p}{n}" for p in ("", "compat.v1.") for n in (
    "matmul", "linalg.matmul", "nn.xw_plus_b", "einsum", "tensordot", "nn.conv1d",
    "nn.conv2d", "nn.conv3d", "nn.depthwise_conv2d", "nn.separable_conv2d",
    "nn.conv2d_transpose", "nn.convolution", "nn.atrous_conv2d", "sparse.sparse_dense_matmul",
))
# `/cpu:0`, `/device:CPU:0`, `cpu`, `CPU:0`; not a job's CPU (`/job:ps/...`, a parameter
# server on purpose).
_CPU = re.compile(r"^/?(?:device:)?cpu(?::\d+)?$", re.IGNORECASE)


def _cpu_device(ctx: Context, item: ast.withitem) -> ast.Call | None:
    call = item.context_expr
    if type(call) is not ast.Call or ctx.call_qualname(call) not in _DEVICE_CALLS \
            or len(call.args) != 1:
        return None
    arg = call.args[0]
    if type(arg) is ast.Constant and type(arg.value) is str and _CPU.match(arg.value.strip()):
        return call
    return None


def _places_elsewhere(ctx: Context) -> bool:
    """The module places work on devices of its own choosing (``tf.device`` with a GPU
    string, a computed name, a device function): a deliberate layout (variables on the
    CPU shared by GPU towers, a parameter server), not a default to fix."""
    def compute() -> bool:
        for call in ctx.nodes_of(ast.Call):
            if ctx.call_qualname(call) not in _DEVICE_CALLS:
                continue
            args = call.args
            if len(args) != 1 or type(args[0]) is not ast.Constant \
                    or not (type(args[0].value) is str and _CPU.match(args[0].value.strip())):
                return True
        return False
    return ctx.cached("tfp206_places_elsewhere", compute)


def _pinned_weights(ctx: Context, block: ast.With) -> dict[str, ast.Call]:
    """Names bound in ``block`` (not in nested functions) to a new variable."""
    out: dict[str, ast.Call] = {}
    todo: list[ast.AST] = list(block.body)
    while todo:
        n = todo.pop()
        if type(n) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda):
            continue
        if type(n) is ast.Assign and len(n.targets) == 1 and type(n.targets[0]) is ast.Name \
                and type(n.value) is ast.Call \
                and ctx.call_qualname(n.value) in _VARIABLE_CALLS:
            out[n.targets[0].id] = n.value
        todo.extend(ast.iter_child_nodes(n))
    return out


def _product_outside(ctx: Context, block: ast.With, names: dict[str, ast.Call]) -> bool:
    """A read of one of ``names`` (bound by ``block``) outside the block is an operand of a
    product op (``tf.matmul(x, W)``, ``x @ W``, ``tf.nn.conv2d(x, W, ...)``)."""
    for name, created in names.items():
        for load in ctx.name_loads(name):
            b = ctx.binding(load)
            if b is None or b.value is not created:
                continue
            if any(p is block for p in ctx.ancestors(load)):
                continue  # used on the CPU too: the product runs where the weight lives
            use = ctx.parent(load)
            if type(use) is ast.keyword:
                use = ctx.parent(use)
            if type(use) is ast.BinOp and type(use.op) is ast.MatMult:
                return True
            if type(use) is ast.Call and load is not use.func \
                    and ctx.call_qualname(use) in _PRODUCTS:
                return True
    return False


class WeightsPinnedToCpu(Rule):
    code = "TFP206"
    name = "weights-pinned-to-cpu"
    message = ("weights created on the CPU and multiplied outside the device scope: copied "
               "to the accelerator on every step")
    hint = ("create the variable under the default placement (drop the tf.device('/cpu:0') "
            "around it) so it lives where the product runs")
    claims = ("S4",)
    group = "preview"
    node_types = (ast.With,)
    requires_imports = frozenset({"tensorflow"})
    docs = """\
## What it does
Finds variables (`tf.get_variable`, `tf.Variable`) created inside `with tf.device('/cpu:0'):`
whose value is then used, after the block, by a product op that default placement puts on
the accelerator: `tf.matmul`, `tf.nn.xw_plus_b`, `x @ W`, `tf.einsum`, `tf.tensordot`,
convolutions. The finding is at the `tf.device` call.

## Why is this bad?
A variable lives on the device it was created on. When the product that reads it runs on a
GPU, every step copies the whole weight from host memory to the GPU, and in training the
gradient goes back and the update runs on the CPU (claim S4: leaving the device mid-step
costs copies that eat the gains). For a 4096x4096 float32 layer that is 64 MiB each way per
step, about 5 ms at 12 GB/s over PCIe 3 x16 (arithmetic, not a measurement here: this machine
has no GPU), where the matmul itself takes well under a millisecond on a current GPU. On a
machine without an accelerator the pin costs nothing, which is why it goes unnoticed.

## Example
```python
with tf.device('/cpu:0'):
    W = tf.get_variable('W', [in_dim, out_dim])
    b = tf.get_variable('b', [out_dim])
y = tf.nn.xw_plus_b(x, W, b)
```

## Use instead
```python
W = tf.get_variable('W', [in_dim, out_dim])
b = tf.get_variable('b', [out_dim])
y = tf.nn.xw_plus_b(x, W, b)
```

## Fix safety
No automatic fix: a weight too large for the accelerator's memory, or one shared by several
GPU towers, may belong on the CPU.

## Known limitations
Not reported: modules that place work on devices of their own choosing anywhere (a GPU
device string, a computed name such as `'/gpu:%d' % i`, `replica_device_setter`): variables
on the CPU shared by GPU towers, or a parameter server, are a deliberate layout; weights used
only inside the CPU block (an embedding table and its lookup, kept on the CPU on purpose);
variables made by helper functions (`_variable_on_cpu(...)` returning one) or by Keras
layers built under the scope.
"""
    valid = (
        # Default placement: the weight lives where the product runs.
        Valid("""
            import tensorflow as tf
            def dense(x, n_in, n_out):
                W = tf.compat.v1.get_variable('W', [n_in, n_out])
                return tf.matmul(x, W)
        """),
        # An embedding table and its lookup kept together on the CPU, on purpose.
        Valid("""
            import tensorflow as tf
            with tf.device('/cpu:0'):
                table = tf.Variable(tf.random.uniform([50000, 128]))
                vectors = tf.nn.embedding_lookup(table, ids)
            logits = tf.matmul(vectors, tf.ones([128, 10]))
        """),
        # GPU towers sharing CPU variables: the module places devices itself.
        Valid("""
            import tensorflow as tf
            with tf.device('/cpu:0'):
                W = tf.compat.v1.get_variable('W', [256, 10])
            outs = []
            for i in range(4):
                with tf.device('/gpu:%d' % i):
                    outs.append(tf.matmul(shards[i], W))
        """),
        # A parameter-server job's CPU: distributed training's layout.
        Valid("""
            import tensorflow as tf
            with tf.device('/job:ps/task:0/cpu:0'):
                W = tf.Variable(tf.zeros([256, 10]))
            y = tf.matmul(x, W)
        """),
        # The variable is only counted on the CPU (a step counter), never multiplied.
        Valid("""
            import tensorflow as tf
            with tf.device('/cpu:0'):
                step = tf.Variable(0, trainable=False)
            increment = step.assign_add(1)
        """),
    )
    invalid = (
        # The shape of a real fix: a fully connected layer's weights pinned to the CPU.
        Invalid("""
            import tensorflow as tf
            def fully_connected(x, in_dim, out_dim):
                with tf.device('/cpu:0'):
                    kernel = tf.compat.v1.get_variable('kernel', [in_dim, out_dim])
                    bias = tf.compat.v1.get_variable('bias', [out_dim])
                return tf.nn.relu(tf.compat.v1.nn.xw_plus_b(x, kernel, bias))
        """, count=1, lines=(3,)),
        # TF2 spelling, the product as `@`, aliased import.
        Invalid("""
            import tensorflow as tensorflow_alias
            with tensorflow_alias.device('/CPU:0'):
                proj = tensorflow_alias.Variable(tensorflow_alias.zeros([512, 512]))
            @tensorflow_alias.function
            def project(x):
                return x @ proj
        """, count=1, lines=(2,)),
        # A convolution kernel, by keyword.
        Invalid("""
            import tensorflow as tf
            def conv(images):
                with tf.device('/device:CPU:0'):
                    filters = tf.Variable(tf.random.normal([3, 3, 64, 64]))
                return tf.nn.conv2d(images, filters=filters, strides=1, padding='SAME')
        """, count=1, lines=(3,)),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        for item in node.items:
            call = _cpu_device(ctx, item)
            if call is None:
                continue
            block: ast.With = node  # type: ignore[assignment]
            names = _pinned_weights(ctx, block)
            if names and not _places_elsewhere(ctx) and _product_outside(ctx, block, names):
                yield self.finding(ctx, call)
            return
