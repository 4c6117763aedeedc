"""TFP107: a TensorFlow op whose inputs do not change across the loop, computed again in every
iteration of a Python loop."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding
from tfperf.lint.analysis.dependence import data_reads
from tfperf.lint.analysis.loops import small_literal_range
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context, returns_tensor

# Ops that make a new value on purpose (random draws, variables, constants and cheap
# literal tensors), or run for their effect: computing them again is what the loop means.
_EXEMPT_LAST = frozenset({
    "constant", "zeros", "ones", "fill", "range", "zeros_like", "ones_like", "eye",
    "convert_to_tensor", "Variable", "placeholder", "get_variable", "identity", "no_op",
    "py_function", "numpy_function", "py_func", "stop_gradient", "TensorArray", "sequence_mask",
    "assign", "assign_add", "assign_sub", "scatter_update", "tensor_scatter_nd_update",
    "print", "Print", "cond", "case", "while_loop", "map_fn", "vectorized_map", "function",
    # Metadata ops: cheap, and often all a loop needs of a tensor.
    "shape", "size", "rank", "shape_n",
})
_EXEMPT_NAMESPACES = frozenset({"random", "summary", "debugging", "io", "image", "strings"})
# Calls in a loop body after which values read by name may have changed (training steps,
# variable updates, TF1 session runs: the TF1 run-time rules own those loops).
_MUTATING_METHODS = frozenset({
    "assign", "assign_add", "assign_sub", "apply_gradients", "minimize", "run", "fit",
    "train_on_batch", "update", "update_state", "reset_states", "scatter_update", "load",
    "set_weights", "restore", "__setitem__",
})
_BUILTINS_OK = frozenset({"int", "float", "len", "abs", "min", "max", "bool", "tuple", "list"})


def _exempt(q: str) -> bool:
    parts = q.split(".")
    last = parts[-1]
    return last in _EXEMPT_LAST or last.startswith(("random_", "stateless_")) \
        or last in ("truncated_normal", "multinomial") or last.endswith("initializer") \
        or any(p in _EXEMPT_NAMESPACES for p in parts[1:-1])


def _root(node: ast.AST) -> ast.AST:
    while type(node) in (ast.Attribute, ast.Subscript):
        node = node.value
    return node


def _loop_facts(ctx: Context, loop: ast.AST) -> tuple[set[str], bool, bool]:
    """Names the loop binds or mutates (as a whole or through an attribute or item), whether
    its body calls something that may change values read by name (an optimizer step, a
    variable update, ``session.run``), and whether it has ``with`` blocks (per-iteration
    devices, tapes, control dependencies)."""
    cache: dict[int, tuple[set[str], bool, bool]] = ctx.cached("tfp107_loop_facts", dict)
    key = id(loop)
    if key in cache:
        return cache[key]
    bound: set[str] = set()
    mutates = has_with = False
    parts = [getattr(loop, "target", None), *getattr(loop, "body", [])]
    loop_names = {n.id for p in parts if p is not None for n in ast.walk(p)
                  if type(n) is ast.Name and type(n.ctx) is ast.Store}
    for part in parts:
        if part is None:
            continue
        for n in ast.walk(part):
            t = type(n)
            if t is ast.Name and type(n.ctx) is not ast.Load:
                bound.add(n.id)
            elif t in (ast.Attribute, ast.Subscript) and type(n.ctx) is not ast.Load:
                r = _root(n)
                if type(r) is ast.Name:
                    bound.add(r.id)
            elif t is ast.Call and type(n.func) is ast.Attribute:
                r = _root(n.func.value)
                if n.func.attr in _MUTATING_METHODS and not (
                        type(r) is ast.Name and r.id in loop_names):
                    mutates = True  # (updating the loop's own items changes nothing else)
                if type(r) is ast.Name and ctx.qualname(r) is None:
                    bound.add(r.id)  # `lst.append(x)`, `d.update(...)`: may change it
            elif t in (ast.With, ast.AsyncWith):
                has_with = True
    cache[key] = (bound, mutates, has_with)
    return cache[key]


def _invariant(ctx: Context, expr: ast.AST, bound: set[str],
               loop: ast.AST | None = None) -> bool:
    """``expr`` computes the same value in every iteration: it reads no name the loop binds
    or mutates, no ``self`` attribute or ``tf.Variable`` (variables change under training
    steps) and calls only TF ops and a few builtins."""
    for n in ast.walk(expr):
        t = type(n)
        if t is ast.Call:
            q = ctx.qualname(n.func)
            if q is None:
                if not ctx.is_builtin(n.func, *_BUILTINS_OK):
                    return False
            elif not returns_tensor(q) or _exempt(q):
                return False
        elif t in (ast.Lambda, ast.ListComp, ast.GeneratorExp, ast.DictComp, ast.SetComp,
                   ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom):
            return False
        elif t is ast.Attribute and type(n.value) is ast.Name and n.value.id == "self":
            p = ctx.parent(n)
            if not (type(p) is ast.Subscript and p.slice is n):
                return False  # `self.w`: a variable the loop may train; a key is fine
        elif isinstance(n, ast.Name) and type(n.ctx) is ast.Load and _is_variable(ctx, n):
            return False  # a tf.Variable: any call in the loop may assign it
    # Every name read, metadata too (`tf.shape(x)` changes with `x`), but a dtype: a loop
    # re-binding `x` keeps its dtype (not the loop's own target: each item has its own).
    targets = _target_names(loop) if loop is not None else set()
    names = {n.id for n in ast.walk(expr) if type(n) is ast.Name and not (
        type(ctx.parent(n)) is ast.Attribute and ctx.parent(n).attr == "dtype"
        and n.id not in targets)}
    return not (names - {"self"}) & bound


def _target_names(loop: ast.AST) -> set[str]:
    target = getattr(loop, "target", None)
    if target is None:
        return set()
    return {n.id for n in ast.walk(target) if type(n) is ast.Name}


def _is_variable(ctx: Context, name: ast.Name) -> bool:
    """``name`` is bound to ``tf.Variable(...)``: state that a training step called in the
    loop (``step.assign_add(1)`` inside ``train_step``) changes between iterations."""
    b = ctx.binding(name)
    if b is None or b.kind != "assign" or type(b.value) is not ast.Call:
        return False
    q = ctx.qualname(b.value.func) or ""
    return q.startswith(("tensorflow.", "keras.")) and q.rsplit(".", 1)[-1] == "Variable"


class LoopInvariantOp(Rule):
    code = "TFP107"
    name = "loop-invariant-op"
    message = "TensorFlow op with the same inputs in every iteration: computed again each time"
    hint = "compute it once before the loop and reuse the result"
    claims = ("S12",)
    group = "preview"
    node_types = (ast.Call,)
    docs = """\
## What it does
Finds a call of a TensorFlow op inside a Python `for`/`while` loop whose inputs are the same
in every iteration: it reads no name the loop binds or mutates, no `self` attribute, and calls
nothing but TensorFlow ops and a few builtins (`tf.cast(params[KEY], x.dtype)` in a loop over
iterations, `tf.expand_dims(indices, 1)` in a loop over internal states).

## Why is this bad?
Eagerly, every iteration runs the op again on the same data. Inside `tf.function` or TF1
graph code the loop is unrolled at trace time: every iteration adds one more copy of the op
to the graph (larger graphs trace, optimise and run slower), and each copy runs at every
step. Hoisting computes it once (claim S12: fewer small ops).

## Example
```python
for _ in range(num_iters):
    residual, coeffs = kashin_iter(residual, coeffs, clip_level)
    clip_level *= tf.cast(params["eta"], x.dtype)
```

## Use instead
```python
eta = tf.cast(params["eta"], x.dtype)
for _ in range(num_iters):
    residual, coeffs = kashin_iter(residual, coeffs, clip_level)
    clip_level *= eta
```

## Fix safety
No automatic fix: where to put the hoisted value (and its name) is a choice, and the op
may be meant to run under a device, name scope or control dependency set in the loop.

## Known limitations
Not reported: random ops, constants and other value-creating ops (`tf.zeros`, `tf.range`,
`tf.Variable`), ops with side effects, ops reading `self` attributes (often variables a
training loop updates), loops that update variables or run steps (`apply_gradients`,
`assign`, `session.run`: values read by name may change there; TF1 session loops are the
TF1 run-time rules' business), loops with `with` blocks (devices per tower, tapes), loops
of a handful of iterations (a literal `range` or list of at most 8), ops whose result is
discarded (a timing loop repeats them on purpose), metadata ops
(`tf.shape`, `tf.size`), initializers, and user functions (they may read state).
"""
    valid = (
        # The input changes every iteration.
        Valid("""
            import tensorflow as tf
            def f(x, n):
                for i in range(n):
                    x = tf.nn.relu(x)
                return x
        """),
        # A fresh random draw per iteration is the point (TF1 spellings too).
        Valid("""
            import tensorflow as tf
            def f(n, dim):
                out = {}
                for i in range(n):
                    out[i] = tf.random_normal([dim, dim]) + tf.random.uniform([dim, dim])
                return out
        """),
        # A training loop: the variable changes with every step.
        Valid("""
            import tensorflow as tf
            w = tf.Variable(tf.ones([3]))
            opt = tf.keras.optimizers.SGD(0.1)
            for step in range(100):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_sum(tf.square(w))
                opt.apply_gradients([(tape.gradient(loss, w), w)])
        """),
        # A TF1 session loop: the TF1 run-time rules own it.
        Valid("""
            import tensorflow as tf
            def train(sess, train_op, W, n):
                for i in range(n):
                    sess.run(train_op)
                    print(sess.run(tf.reduce_mean(W)))
        """),
        # The loop's own items updated; a variable read by name in a training loop.
        Valid("""
            import tensorflow as tf
            def f(variables, w, opt, grads):
                for v, g in zip(variables, grads):
                    v.assign_sub(0.1 * g)
                    tf.print(tf.reduce_sum(v))
                for step in range(10):
                    opt.apply_gradients(zip(grads, variables))
                    tf.print(tf.reduce_sum(w))
        """),
        # A timing loop: the result is discarded, the repetition is the point.
        Valid("""
            import tensorflow as tf
            def time_matmul(x, n):
                for loop in range(n):
                    tf.linalg.matmul(x, x)
        """),
        # Metadata of the loop's item varies; a few thresholds in a literal list.
        Valid("""
            import tensorflow as tf
            def f(rewards_list, best_iou, n_pos):
                out = []
                for rewards in rewards_list:
                    out.append(tf.cast(tf.shape(rewards)[0], tf.float32))
                for th in [0.3, 0.5, 0.7]:
                    out.append(tf.where(tf.equal(n_pos, 0), th, tf.reduce_mean(best_iou)))
                return out
        """),
        # A counter variable that the step called in the loop advances.
        Valid("""
            import tensorflow as tf
            def train(batches, model, opt):
                counter = tf.Variable(0)
                def step_once(x):
                    counter.assign_add(1)
                    return model(x)
                for x in batches:
                    out = step_once(x)
                    if tf.equal(tf.math.floormod(counter, 50), 0):
                        tf.print(counter, out)
        """),
        # The dtype of the loop's own item: each item may need its own cast.
        Valid("""
            import tensorflow as tf
            def perturb(weights, scale):
                out = []
                for w in weights:
                    out.append(w + tf.cast(scale, dtype=w.dtype))
                return out
        """),
        # A factory called per item: the function it returns is applied to each tensor.
        Valid("""
            import tensorflow as tf
            def penalty(kernels):
                total = 0.0
                for k in kernels:
                    total += tf.contrib.layers.l2_regularizer(0.01)(k)
                return total
        """),
        # A model attribute (a variable) read through self.
        Valid("""
            import tensorflow as tf
            class M(tf.Module):
                def f(self, xs):
                    out = []
                    for x in xs:
                        out.append(x * tf.reduce_sum(self.w))
                    return out
        """),
    )
    invalid = (
        Invalid("""
            import tensorflow as tf
            def encode(x, encode_params, clip_level, num_iters):
                for _ in range(num_iters - 1):
                    x = x - clip_level
                    clip_level *= tf.cast(encode_params["eta"], x.dtype)
                return x
        """, count=1, lines=(5,)),
        Invalid("""
            import tensorflow as tf
            @tf.function
            def remember(parallel, previous_states, internals):
                deps = []
                for previous, internal in zip(previous_states, internals):
                    indices = tf.expand_dims(input=parallel, axis=1)
                    deps.append(tf.tensor_scatter_nd_update(previous, indices, internal))
                return deps
        """, count=1, lines=(6,)),
        # The outermost invariant part of an expression is reported, once.
        Invalid("""
            import tensorflow as tf
            def check(deltas, arguments, zero, zero_float):
                out = []
                for delta in deltas:
                    is_zero = tf.math.logical_and(
                        tf.math.equal(tf.math.count_nonzero(delta), zero),
                        tf.reduce_any(tf.math.not_equal(arguments['reward'], zero_float)))
                    out.append(is_zero)
                return out
        """, count=1, lines=(7,)),
    )

    def applies_to(self, ctx: Context) -> bool:
        # Every finding is a TF call inside a `for`/`while` loop of a module importing TF.
        return ctx.imports_tf and bool(ctx.nodes_of(ast.For, ast.AsyncFor, ast.While))

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        if not ctx.imports_tf:
            return
        q = ctx.call_qualname(node)
        if q is None or not returns_tensor(q) or _exempt(q):
            return
        loops = ctx.enclosing_loops(node)
        if not loops or type(loops[0]) not in (ast.For, ast.AsyncFor, ast.While, ast.ListComp,
                                               ast.GeneratorExp):
            return
        loop = loops[0]
        if type(loop) in (ast.ListComp, ast.GeneratorExp):
            return  # comprehensions: their element is a value per item, rarely hoistable
        it = getattr(loop, "iter", None)
        if small_literal_range(ctx, loop) or (
                type(it) in (ast.List, ast.Tuple, ast.Set) and len(it.elts) <= 8):
            return  # a handful of iterations (thresholds, towers): a few duplicate ops
        bound, mutates, has_with = _loop_facts(ctx, loop)
        if mutates or has_with:
            return
        if type(ctx.parent(node)) is ast.Expr:
            return  # result discarded: run on purpose each time (a timing loop, a warm-up)
        reads = data_reads(ctx, node)
        if not reads - {"self"}:
            return  # literals only: a cheap constant
        if type(ctx.parent(node)) is ast.Call and ctx.parent(node).func is node:
            return  # `l2_regularizer(0.004)(p)`: a factory whose function is applied per item
        if not _invariant(ctx, node, bound, loop):
            return
        # Report the outermost invariant call only.
        for p in ctx.ancestors(node):
            if p is loop or isinstance(p, ast.stmt):
                break
            if type(p) is ast.Call:
                pq = ctx.call_qualname(p)
                if pq and returns_tensor(pq) and not _exempt(pq) \
                        and _invariant(ctx, p, bound, loop):
                    return
        yield self.finding(ctx, node)
