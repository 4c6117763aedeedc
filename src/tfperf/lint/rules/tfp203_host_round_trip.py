"""TFP203: a tensor copied to the host and straight back (``tf.constant(t.numpy())``)."""

from __future__ import annotations

import ast
from bisect import bisect_right
from collections.abc import Iterator, Sequence

from tfperf.core.findings import Finding, Fix
from tfperf.lint.analysis.assignments import may_reach
from tfperf.lint.analysis.host import HostConversion, converts_a_tensor, host_conversion
from tfperf.lint.analysis.imports import source_mentions
from tfperf.lint.analysis.traced import in_py_function, traced
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context, returns_tensor

# Calls whose single argument `X.numpy()` can become `tf.stop_gradient(X)`.
SNAPSHOT_CALLS = frozenset({"tensorflow.constant", "tensorflow.convert_to_tensor",
                            "tensorflow.compat.v1.convert_to_tensor"})
_CONVERSION_ATTRS = frozenset({"numpy", "array", "asarray", "asanyarray", "ascontiguousarray"})
# Calls that take host data by design (initial values, graph-building placeholders, Python
# functions run eagerly, file names), by last name: not round trips worth reporting.
_EXCLUDED_LAST = frozenset({"Variable", "placeholder_with_default", "py_function",
                            "numpy_function", "py_func", "eager_py_func", "read_file",
                            "write_file", "matching_files"})


def _tensor_op(q: str) -> bool:
    """A TF op that makes a tensor of its arguments. TF's own internal modules count only
    for its op modules (``tensorflow.python.ops.*``, ``constant_op``): helpers elsewhere
    there (``compat.as_str``, ``numpy_compat.np_asarray``) take and return host values."""
    if q.rsplit(".", 1)[1] in _EXCLUDED_LAST:
        return False
    if q.startswith("keras.ops."):
        return True
    if q.startswith("tensorflow.python."):
        return q == "tensorflow.python.framework.constant_op.constant" \
            or (q.startswith("tensorflow.python.ops.") and returns_tensor(q))
    return returns_tensor(q)


def _taped_output(ctx: Context, expr: ast.AST) -> bool:
    """``expr`` names what a call of this module's code (a model, a layer: not a library
    function) returned under a ``GradientTape`` (``q = self.q_func(states)`` inside ``with
    tf.GradientTape() as tape:``): what is computed there, to be differentiated, is a
    tensor."""
    if type(expr) is not ast.Name:
        return False
    b = ctx.binding(expr)
    if b is None or b.kind != "assign" or type(b.value) is not ast.Call:
        return False
    if ctx.qualname(b.value.func) is not None:
        return False  # a library function: known to the semantic model, or not TF's
    return ctx.under_gradient_tape(b.value)


def host_value_of_tensor(ctx: Context, expr: ast.AST, depth: int = 0) -> HostConversion | None:
    """The host conversion of a tensor that ``expr`` computes from: ``t.numpy()``,
    ``np.array(t)``, and NumPy functions, array methods, arithmetic, indexing
    or lists over one, following names assigned to such values."""
    if depth > 8:
        return None
    t = type(expr)
    if t is ast.Call:
        conv = host_conversion(ctx, expr)
        if conv is not None:
            if conv.kind == "numpy":
                return conv if converts_a_tensor(ctx, conv) else None
            if conv.kind != "np":
                return None  # float(t)/int(t): scalars, mostly static shapes and sizes
            if ctx.is_tensor_like(conv.operand) or _taped_output(ctx, conv.operand):
                return conv
            return host_value_of_tensor(ctx, conv.operand, depth + 1)
        func = expr.func
        q = ctx.qualname(func)
        if q is not None:
            if not q.startswith("numpy."):
                return None  # another library's function: maybe what TF lacks
            parts = [*expr.args, *(k.value for k in expr.keywords)]
        elif type(func) is ast.Attribute:  # an array method: arr.astype(...), arr.mean()
            parts = [func.value]
        else:
            return None
        for p in parts:
            found = host_value_of_tensor(ctx, p, depth + 1)
            if found is not None:
                return found
        return None
    if t is ast.BinOp:
        return host_value_of_tensor(ctx, expr.left, depth + 1) \
            or host_value_of_tensor(ctx, expr.right, depth + 1)
    if t in (ast.UnaryOp,):
        return host_value_of_tensor(ctx, expr.operand, depth + 1)
    if t in (ast.Subscript, ast.Attribute):
        return host_value_of_tensor(ctx, expr.value, depth + 1)
    if t in (ast.List, ast.Tuple):
        for e in expr.elts:
            found = host_value_of_tensor(ctx, e, depth + 1)
            if found is not None:
                return found
        return None
    if t is ast.Name:
        b = ctx.binding(expr)  # type: ignore[arg-type]
        if b is not None and b.kind == "assign" and b.value is not expr \
                and ctx.scope_of(b.value) is ctx.scope_of(expr):
            stmt = ctx.parent(b.value)
            if isinstance(stmt, ast.stmt) and not may_reach(ctx, stmt, expr):
                return None  # set in another branch, or on a path that has returned
            return host_value_of_tensor(ctx, b.value, depth + 1)
    return None


# Builtins that consume a host value in Python: the copy is needed there anyway.
_HOST_CONSUMERS = frozenset({"str", "int", "float", "bool", "repr", "chr", "print", "format"})


def _host_use(ctx: Context, load: ast.Name) -> bool:
    """``load`` uses a host value in Python itself: as an index (``idx2char[i]``), in an
    f-string, or as the argument of ``str()``/``int()``/``print()``."""
    parent = ctx.parent(load)
    if type(parent) is ast.Subscript and parent.slice is load:
        return True
    if type(parent) is ast.FormattedValue:
        return True
    return type(parent) is ast.Call and load in parent.args and type(parent.func) is ast.Name \
        and parent.func.id in _HOST_CONSUMERS and ctx.qualname(parent.func) is None


def _needed_on_host(ctx: Context, values: Sequence[ast.AST]) -> bool:
    """A name the op reads holds the host copy, and Python uses that copy too (the sampled
    id of an autoregressive loop: ``i = tf.random.categorical(...)[0, 0].numpy()``, then
    ``text += vocab[i]`` and ``x = tf.expand_dims([i], 0)``): the copy to the host is
    needed anyway, and the way back is a few bytes."""
    for v in values:
        for n in ast.walk(v):
            if type(n) is not ast.Name or type(n.ctx) is not ast.Load:
                continue
            b = ctx.binding(n)
            if b is None or b.kind != "assign" or host_value_of_tensor(ctx, b.value) is None:
                continue
            for other in ast.walk(ctx.scope_of(n)):
                if type(other) is ast.Name and other is not n and other.id == n.id \
                        and type(other.ctx) is ast.Load and _host_use(ctx, other) \
                        and ctx.binding(other) == b:
                    return True
    return False


def _conversion_scopes(ctx: Context) -> tuple[set[int], tuple[list[int], list[int]] | None]:
    """Scopes (by id) holding a ``.numpy()`` or NumPy conversion call, and their line spans
    (``None`` when the module itself is one). Every finding starts from a conversion
    (``float()``/``int()`` never make one) reached through sub-expressions and same-scope
    assignments only, so it lies in the scope of the reported call, within its lines."""
    def compute() -> tuple[set[int], tuple[list[int], list[int]] | None]:
        numpy_imported = "numpy" in ctx.imported_roots
        by_attr, by_name = ctx.call_groups()
        # Only these callees can be a `.numpy()` or NumPy conversion (host_conversion).
        candidates = [c for a in (_CONVERSION_ATTRS if numpy_imported else ("numpy",))
                      for c in by_attr.get(a, ())]
        if numpy_imported:
            candidates += [c for n in ctx.resolvable_names for c in by_name.get(n, ())]
        scopes: set[int] = set()
        spans: list[tuple[int, int]] | None = []
        for call in candidates:
            conv = host_conversion(ctx, call)
            if conv is not None and conv.kind in ("numpy", "np"):
                scope = ctx.scope_of(call)
                if id(scope) not in scopes:
                    scopes.add(id(scope))
                    if scope is ctx.tree:
                        spans = None
                    elif spans is not None:
                        spans.append((scope.lineno, scope.end_lineno or scope.lineno))
        return scopes, _merged(spans) if spans is not None else None
    return ctx.cached("tfp203_conversion_scopes", compute)


def _merged(spans: list[tuple[int, int]]) -> tuple[list[int], list[int]]:
    """Line spans → disjoint sorted (starts, ends), for a bisect per call."""
    starts: list[int] = []
    ends: list[int] = []
    for first, last in sorted(spans):
        if ends and first <= ends[-1]:
            ends[-1] = max(ends[-1], last)
        else:
            starts.append(first)
            ends.append(last)
    return starts, ends


def _runs_once(ctx: Context, scope: ast.AST, node: ast.AST) -> bool:
    """``node`` is module-level code outside any loop (a script's or a notebook cell's top
    level): it runs once per run, so its round trip is a one-off (judged minor every time on
    user code: a demo's print, a setup matrix)."""
    return type(scope) is ast.Module and not ctx.in_loop(node)


class HostRoundTrip(Rule):
    code = "TFP203"
    name = "host-round-trip"
    message = "tensor copied to the host and back into TensorFlow: keep it on the device"
    hint = ("work on the tensor itself: TF ops instead of NumPy functions, "
            "tf.stop_gradient(t) / tf.identity(t) instead of tf.constant(t.numpy())")
    claims = ("S4", "S1")
    group = "preview"  # user code: 0 true, 13 minor, 1 false; under 80 % (stop 36)
    fixable = True
    docs = """\
## What it does
Finds a TensorFlow op whose argument was computed on the host from a tensor (a TF op's
result, a tensor parameter, or what this module's model returned under a `GradientTape`):
`tf.constant(t.numpy())`, `tf.convert_to_tensor(np.log(t.numpy()))`,
`tf.reduce_sum(np.asarray(t) * 2)`, also through a variable assigned such a value
(`a = t.numpy() ** 2` then `tf.constant(a)`).

## Why is this bad?
`.numpy()` waits for the device and copies the tensor to host memory (claim S1); the TF op
then copies the result back to the device. A computation that leaves the device in the middle
pays two PCIe transfers and a synchronisation that can eat every other gain (claim S4), and
NumPy runs single-threaded on the CPU what TensorFlow would run on the device.

## Example
```python
snapshot = tf.constant(weights.numpy())
scaled = tf.convert_to_tensor(np.log1p(x.numpy()))
```

## Use instead
```python
snapshot = tf.stop_gradient(weights)   # same values, no gradient, no copy to the host
scaled = tf.math.log1p(x)
```

## Fix safety
`tf.constant(X.numpy())` and `tf.convert_to_tensor(X.numpy())`, with no other argument and
`X` known to be a tensor (the result of a TF op, a `tf.Variable`, a parameter annotated
`tf.Tensor`), become `tf.stop_gradient(X)`. The fix is **safe**: the result has the same
values, dtype and shape; like the constant, it is a snapshot (a later `assign` to a variable
does not change it) and no gradient flows through it. Only its device changes: it stays where
`X` is instead of being created on the host. Other forms get no fix: the TF equivalent of a
NumPy function needs a person to choose it.

## Known limitations
Not reported: a host copy that Python uses too (as an index, in an f-string, through `str()`
or `print()`): the sampled id of an autoregressive loop is looked up in the vocabulary and fed
back, so the copy is needed anyway and the way back is a few bytes; a conversion and an op
that no single run reaches both of (`if`/`else`
branches, two `except` handlers, a branch that returns first); `tf.Variable(t.numpy())`
(initialisation), file names (`tf.io.read_file(path.numpy())`), conversions inside traced
functions (TFP202 reports them), inside `tf.py_function` bodies, host values computed by
other libraries (`scipy.signal.lfilter(b, a, x.numpy())`), which may do what TF cannot, and
module-level code outside any loop (a script's or a notebook cell's top level: it runs once
per run; every such finding on judged user code was a one-off demo or setup, judged minor).
"""
    valid = (
        # Stays on the device.
        Valid("""
            import tensorflow as tf
            def f(x):
                return tf.math.log1p(x)
        """),
        # A host value used on the host only.
        Valid("""
            import numpy as np
            import tensorflow as tf
            def report(x):
                arr = tf.reduce_mean(x, axis=0).numpy()
                np.save('mean.npy', arr)
                return arr.max()
        """),
        # Autoregressive sampling: the id is needed on the host (the vocabulary lookup), and
        # fed back as the next input: the round trip is inherent.
        Valid("""
            import tensorflow as tf
            def generate(model, vocab, start, n):
                x = tf.constant([[start]])
                text = []
                for _ in range(n):
                    logits = model(x)[:, -1, :]
                    next_id = tf.random.categorical(logits, num_samples=1)[0, 0].numpy()
                    text.append(vocab[next_id])
                    x = tf.expand_dims([next_id], 0)
                return "".join(text)
        """),
        # A library TF lacks, on host data: legitimate.
        Valid("""
            import scipy.signal
            import tensorflow as tf
            def filt(b, a, x):
                return tf.constant(scipy.signal.lfilter(b, a, x.numpy()))
        """),
        # A file name read back from a tensor: a few bytes, not a round trip that matters.
        Valid("""
            import tensorflow as tf
            def labels(model):
                path = model.class_map_path().numpy()
                return tf.io.read_file(path).numpy().decode("utf-8")
        """),
        # Variables initialised from a host snapshot.
        Valid("""
            import tensorflow as tf
            def clone(v):
                return tf.Variable(v.numpy())
        """),
        # A NumPy array (not a tensor) made into a tensor: no round trip.
        Valid("""
            import numpy as np
            import tensorflow as tf
            a = np.random.rand(4, 4)
            t = tf.constant(np.log1p(a), dtype=tf.float32)
        """),
        # PyTorch imported: `.numpy()` of an unknown object may be torch's; a real bridge.
        Valid("""
            import torch
            import tensorflow as tf
            def bridge(pt):
                return tf.constant(pt.detach().cpu().numpy())
        """),
        # A helper's output outside any tape: not known to be a tensor.
        Valid("""
            import numpy as np
            import tensorflow as tf
            def prepare(load, path):
                raw = load(path)
                return tf.constant(np.asarray(raw) * 2)
        """),
        # Mutually exclusive branches: the host copy never meets the TF op in one run.
        Valid("""
            import tensorflow as tf
            def summarise(x, as_numpy):
                if as_numpy:
                    stats = x.numpy()
                    return stats.mean()
                else:
                    return tf.reduce_mean(stats)
            def convert(x, mode):
                if mode == "np":
                    arr = x.numpy()
                elif mode == "tf":
                    out = tf.constant(arr)
                try:
                    val = tf.identity(x)
                except ValueError:
                    val = x.numpy()
                except TypeError:
                    val = tf.constant(val)
        """),
        # The branch that converts has returned before the TF op is reached.
        Valid("""
            import numpy as np
            import tensorflow as tf
            def to_tensor(t):
                if isinstance(t, np.ndarray):
                    arr = t
                else:
                    arr = t.numpy()
                    return arr
                return tf.constant(arr)
        """),
        # Module-level code outside a loop runs once per run: a notebook's one-off look at a
        # layer's output, a setup matrix (judged minor each time on user code).
        Valid("""
            import tensorflow as tf
            backcast = tf.random.normal([1, 7])
            print(f"Backcast: {tf.squeeze(backcast.numpy())}")
        """),
        Valid("""
            import numpy as np
            import tensorflow as tf
            w = tf.random.normal([128, 513])
            inversion = tf.constant(np.nan_to_num(np.linalg.pinv(w.numpy())))
        """),
    )
    invalid = (
        # The DQN target built in NumPy from the model's output, inside the tape.
        Invalid("""
            import numpy as np
            import tensorflow as tf
            class DQN:
                def train(self, states, actions, rewards):
                    with tf.GradientTape() as tape:
                        q = self.q_func(states)
                        target = np.asarray(q).copy()
                        target[np.arange(len(actions)), actions] = rewards
                        target = tf.stop_gradient(target)
                        loss = tf.reduce_mean(tf.square(q - target))
                    return tape.gradient(loss, self.q_func.trainable_variables)
        """, count=1, lines=(9,)),
        # Set in one branch, used after the `if`: a path goes through both.
        Invalid("""
            import tensorflow as tf
            def f(x, use_host):
                if use_host:
                    x = x.numpy()
                return tf.reduce_sum(x)
        """, count=1, lines=(5,)),
        Invalid("""
            import tensorflow as tf
            w = tf.Variable(tf.ones([3]))
            def snapshot():
                return tf.constant(w.numpy())
        """, count=1, lines=(4,), fixed="""
            import tensorflow as tf
            w = tf.Variable(tf.ones([3]))
            def snapshot():
                return tf.stop_gradient(w)
        """),
        # Module level, but in a loop: once per step.
        Invalid("""
            import numpy as np
            import tensorflow as tensorflow_alias
            for step in range(1000):
                x = tensorflow_alias.random.uniform([8])
                y = tensorflow_alias.convert_to_tensor(np.log1p(x.numpy()))
        """, count=1, lines=(5,)),
        # Through a variable, and with np.asarray; `from tensorflow import ...` spellings.
        Invalid("""
            import numpy as np
            from tensorflow import reduce_sum, zeros
            def f():
                t = zeros([4])
                a = np.asarray(t) ** 2
                return reduce_sum(a)
        """, count=1, lines=(6,)),
        Invalid("""
            import tensorflow as tf
            def f(x: tf.Tensor):
                y = tf.convert_to_tensor(x[0].numpy())
                z = tf.constant(x.numpy(), dtype=tf.float32)
                return y, z
        """, count=2, lines=(3, 4), fixed="""
            import tensorflow as tf
            def f(x: tf.Tensor):
                y = tf.stop_gradient(x[0])
                z = tf.constant(x.numpy(), dtype=tf.float32)
                return y, z
        """),
    )

    def applies_to(self, ctx: Context) -> bool:
        return source_mentions(ctx, ".numpy()", "array") and ctx.imports_tf \
            and bool(_conversion_scopes(ctx)[0])

    def check_module(self, ctx: Context) -> Iterator[Finding]:
        # One loop over the module's calls (not one dispatch per call): most are outside
        # the few scopes that convert anything, which a line test rules out cheaply.
        scopes, spans = _conversion_scopes(ctx)
        scope_of = ctx.scope_of
        for node in ctx.calls:
            args = node.args
            if not args and not node.keywords:
                continue
            if spans is not None:
                line = node.lineno
                i = bisect_right(spans[0], line) - 1
                if i < 0 or line > spans[1][i]:
                    continue
            scope = scope_of(node)
            if id(scope) not in scopes or _runs_once(ctx, scope, node):
                continue
            q = ctx.call_qualname(node)
            if q is None or not _tensor_op(q):
                continue
            values = [*args, *(k.value for k in node.keywords)]
            conv = next((c for c in (host_value_of_tensor(ctx, v) for v in values) if c), None)
            if conv is None or traced(ctx, node) or in_py_function(ctx, node) \
                    or _needed_on_host(ctx, values):
                continue
            yield self.finding(ctx, node, fix=self._fix(ctx, node, q, conv))

    def _fix(self, ctx: Context, node: ast.Call, q: str, conv: HostConversion) -> Fix | None:
        if q not in SNAPSHOT_CALLS or node.keywords or len(node.args) != 1 \
                or node.args[0] is not conv.call or conv.kind != "numpy" \
                or not ctx.is_tensor_like(conv.operand):
            return None
        tf = ctx.module_alias("tensorflow")
        if tf is None:
            return None
        return self.safe_fix(
            ctx.replace(node, f"{tf}.stop_gradient({ctx.source_of(conv.operand)})"),
            description="keep the snapshot on the device")
