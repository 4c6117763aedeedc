"""TFP102: a tensor summed element by element in a Python loop."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding, Fix
from tfperf.lint.analysis.dependence import depends_on, loop_flow
from tfperf.lint.analysis.loops import (
    ElementLoop,
    does_tensor_work,
    element_loop,
    indexes_with,
    loop_targets,
    range_args,
    sized_by,
    walk_body,
)
from tfperf.lint.analysis.traced import PY_FUNCTIONS
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context, returns_tensor


def _accumulation(node: ast.AST) -> tuple[str, ast.expr, str] | None:
    """``acc += term`` / ``acc = acc + term`` / ``acc = term + acc`` → (acc, term, form)."""
    if type(node) is ast.AugAssign:
        if type(node.target) is ast.Name and type(node.op) in (ast.Add, ast.Sub):
            return node.target.id, node.value, "aug"
        return None
    if type(node) is not ast.Assign or len(node.targets) != 1 \
            or type(node.targets[0]) is not ast.Name:
        return None
    acc, value = node.targets[0].id, node.value
    if type(value) is not ast.BinOp or type(value.op) not in (ast.Add, ast.Sub):
        return None
    if type(value.left) is ast.Name and value.left.id == acc:
        return acc, value.right, "left"
    if type(value.op) is ast.Add and type(value.right) is ast.Name and value.right.id == acc:
        return acc, value.left, "right"
    return None


def _mentions(node: ast.AST, name: str) -> bool:
    return any(type(n) is ast.Name and n.id == name for n in ast.walk(node))


def _stored_elsewhere(loop: ast.AST, name: str, stmt: ast.AST) -> bool:
    """``name`` is (re)bound somewhere in the loop other than by ``stmt``."""
    own = stmt.target if type(stmt) is ast.AugAssign else stmt.targets[0]
    for n in ast.walk(loop):
        if type(n) is ast.Name and type(n.ctx) is ast.Store and n.id == name and n is not own:
            return True
    return False


def _read_elsewhere(loop: ast.AST, name: str, stmt: ast.AST) -> bool:
    """``name`` is read in the loop outside its accumulations: each iteration uses the
    running value (an offset into the next slice), a prefix sum rather than one total."""
    inside = {id(n) for s in walk_body(loop) if s is stmt or (
        type(s) in (ast.Assign, ast.AugAssign) and (_accumulation(s) or ("",))[0] == name)
        for n in ast.walk(s)}  # the sum's own terms (`ans = ans + a; ans = ans + b`)
    return any(type(n) is ast.Name and n.id == name and type(n.ctx) is ast.Load
               and id(n) not in inside for n in walk_body(loop))


def _op_of_index(ctx: Context, loop: ast.For, term: ast.expr) -> bool:
    """A ``range`` loop whose term calls a TensorFlow op on the loop index (``acc +=
    tf.constant(k / 2.)``, ``ans = ans + tf.math.lgamma(c + k)``): one op per index, where
    one op over ``tf.range`` and a reduction would do."""
    if range_args(ctx, loop.iter) is None or type(loop.target) is not ast.Name:
        return False
    var = {loop.target.id}
    found = False
    for n in ast.walk(term):
        if type(n) is ast.Call:
            q = ctx.qualname(n.func)
            if q is None and not (type(n.func) is ast.Name and ctx.is_builtin(n.func, n.func.id)):
                return False  # a user's function (a training step...): not one small op
            found = found or (bool(q and returns_tensor(q)) and any(depends_on(ctx, loop, a, var)
                                 for a in [*n.args, *(k.value for k in n.keywords)]))
    return found


_STRING_OPS = ("tensorflow.as_string", "tensorflow.strings.")


def _calls_a_model(ctx: Context, term: ast.expr) -> bool:
    """The summed term runs a model (``softmax(model(u_aug[k]))``, one augmentation per
    step): the loop's cost is the model calls, which one reduction does not remove; the
    useful change (one call on the concatenated batch) is another one (issue 25's precision
    round 4: a sum over K=2 augmentations judged false)."""
    from tfperf.lint.rules.tfp111_model_call_per_step import network

    return any(type(n) is ast.Call and network(ctx, n.func) for n in ast.walk(term))


def _fed_by_a_model(ctx: Context, loop: ast.For, term: ast.expr) -> bool:
    """The summed term reads what a model returned in this iteration (``pred =
    tf.argmax(head(encoder(x)))``, then ``correct += tf.reduce_sum(...pred...)`` per test
    batch): as in :func:`_calls_a_model`, the model calls are the cost (held-out precision
    round 14: a per-batch accuracy counter judged false)."""
    from tfperf.lint.rules.tfp111_model_call_per_step import network

    def runs_a_model(c: ast.AST) -> bool:  # a network by name, or any call given `training=`
        return type(c) is ast.Call and (network(ctx, c.func)
                                        or any(k.arg == "training" for k in c.keywords))

    outputs: set[str] = set()
    for n in walk_body(loop):
        if type(n) is ast.Assign and any(runs_a_model(c) for c in ast.walk(n.value)):
            outputs.update(t.id for tgt in n.targets for t in ast.walk(tgt)
                           if type(t) is ast.Name)
    return bool(outputs) and depends_on(ctx, loop, term, outputs)


def _not_a_sum(ctx: Context, acc_binding: object, term: ast.expr) -> bool:
    """``+=`` that does not add numbers: a Python list grown with ``acc += [t]`` (the
    tensors are concatenated later), or strings joined (``msg += tf.as_string(i)``)."""
    if type(term) in (ast.List, ast.ListComp, ast.Tuple):
        return True
    value = getattr(acc_binding, "value", None)
    if type(value) in (ast.List, ast.Tuple, ast.ListComp) or (
            type(value) is ast.Constant and isinstance(value.value, str)):
        return True
    for n in ast.walk(term):
        if type(n) is ast.Constant and isinstance(n.value, str):
            return True
        if type(n) is ast.Call and (ctx.qualname(n.func) or "").startswith(_STRING_OPS):
            return True
    return False


def _ragged_or_host_work(ctx: Context, loop: ast.For) -> bool:
    """Per-iteration work no single reduction replaces: a crop whose bounds come from the
    iteration (``x[box[1]:box[3]]``: a different shape each time), or a Python function
    run through ``tf.numpy_function``/``tf.py_function`` per item."""
    names = loop_targets(loop)
    for n in walk_body(loop):
        if type(n) is ast.Slice:
            for bound in (n.lower, n.upper):
                if bound is not None and type(bound) is not ast.Constant \
                        and depends_on(ctx, loop, bound, names):
                    return True
        elif type(n) is ast.Call and ctx.qualname(n.func) in PY_FUNCTIONS:
            return True
    return False


def _indexes_unknown_only(ctx: Context, term: ast.expr, var: str) -> bool:
    """Every object ``term`` indexes with the loop variable is what a model, layer or
    method returned (``feats = self.vgg(x)``), not known to be one tensor: with a bound that
    is not its size, it may be a list of differently shaped tensors (a feature pyramid's
    outputs), one reduction each."""
    bases = [n.value for n in ast.walk(term)
             if type(n) is ast.Subscript and indexes_with(n, var)]
    if not bases:
        return False
    for base in bases:
        b = ctx.binding(base) if type(base) is ast.Name else None
        value = getattr(b, "value", None) if b is not None and b.kind == "assign" else None
        if type(value) is not ast.Call or ctx.is_tensor_like(base):
            return False
    return True


def _plain_ref(node: ast.AST) -> bool:
    """A name or dotted attribute chain: safe to evaluate once instead of per iteration."""
    while type(node) is ast.Attribute:
        node = node.value
    return type(node) is ast.Name


class LoopAccumulation(Rule):
    code = "TFP102"
    batches_loops = True
    name = "loop-accumulation"
    message = "tensor accumulated element by element in a Python loop: one reduction does it"
    hint = ("sum the whole tensor at once: tf.reduce_sum(x, axis=0), or tf.einsum / "
            "tf.tensordot for weighted sums")
    claims = ("S12",)
    group = "perf"
    node_types = (ast.AugAssign, ast.Assign)
    needs_tf = True  # nothing to report where neither TF nor Keras is imported
    fixable = True
    docs = """\
## What it does
Finds a running sum built in a Python loop that walks a tensor element by element
(`acc = acc + a[i] * w[i]`, `acc += x[i]`, `total += row` over `for row in t`, `cam += w *
out[:, :, i]` over `for i, w in enumerate(weights)`). A running value the loop reads before
it is complete (an offset into the next slice) is a prefix sum, not reported.

## Why is this bad?
Every iteration launches an add (and a multiply, a gather...) on one small slice: Python
overhead and kernel launches dominate, and the additions run one after another. One
`tf.reduce_sum` (or `tf.einsum`/`tf.tensordot` for a weighted sum) does the same work in a
single op; the article measures 10²–10³× for such replacements (claim S12) and its §5.1
weighted sum (S16 → S17) is this pattern.

A `range` loop whose term is a TensorFlow op applied to the loop index itself
(`ans = ans + tf.math.lgamma(c + k / 2.)` for `k in range(1, d)`) is reported too: one op over
`tf.range(1, d)` and one reduction replace `d` small ops. Running values that depend on the
previous iteration's result (`h = h + f(h)`) are not sums and are not reported. Nor is a sum
whose term calls a model (`u = u + tf.nn.softmax(model(u_aug[k]))` over K augmentations):
the loop's cost is the model calls, which one reduction does not remove (precision round 4:
judged false; the useful change, one call on the concatenated batch, is another one), or
whose term reads what a model returned in the same iteration (a per-test-batch accuracy
counter; a model by name or any call given `training=`; precision round 14: judged false).

## Example
```python
acc = tf.zeros([dim])
for i in range(x.shape[0]):
    acc += x[i]
```

## Use instead
```python
acc = tf.zeros([dim])
acc += tf.reduce_sum(x, axis=0)
```
For `acc = acc + a[i] * w[i]` write `acc + tf.tensordot(w, a, axes=1)` or
`tf.einsum("i...,i->...", a, w)`.

Loops over `range(len(xs))` where `xs` is not known to be a tensor (a list of model
outputs, of variables) are left alone: a few tensors, possibly of different shapes.

## Fix safety
The fix covers the simple form only: the loop's body is the single statement
`acc += x[i]` / `acc = acc + x[i]` (or `+= row` over `for row in x`), the loop runs over
`range(n)` or `range(a, b)` (or the tensor itself), `x` is a plain name, and the loop
variable is not used after the loop. It is **unsafe**: a reduction adds in a different order
than the loop (floating-point results may differ in the last bits), and a loop that would have
raised on an out-of-range index no longer does.
"""
    valid = (
        # Stop 44 wave 2 (held-out precision round 14): the term reads what this iteration's
        # model call returned (one test batch each): the model calls are the cost.
        Valid("""
            import tensorflow as tf
            def accuracy(data, f_net, c_net, n):
                correct = 0
                for b in range(n):
                    x, y = data.batch(b)
                    pred = tf.argmax(c_net(f_net(x, training=False)), axis=1)
                    correct += tf.reduce_sum(tf.cast(tf.equal(pred, y), tf.int32))
                return correct
        """, spelling="index: term through this iteration's model output"),
        Valid("""
            import tensorflow as tf
            def total(encoder, batches):
                loss = 0.0
                for i in range(len(batches)):
                    out = encoder(batches[i], training=False)
                    loss = loss + tf.reduce_mean(out)
                return loss
        """, spelling="loop: called with training=, summed by `acc = acc + t`"),
        # A model's outputs (a list of feature maps of different shapes), one mean each.
        Valid("""
            import tensorflow as tf
            def perceptual_loss(vgg, fake, real):
                fake_feats = vgg(fake)
                real_feats = vgg(real)
                loss = 0.0
                for i in range(5):
                    loss += tf.reduce_mean(tf.abs(fake_feats[i] - real_feats[i]))
                return loss
        """),
        # Not a sum: a Python list grown with `+= [t]` (concatenated later), strings joined.
        Valid("""
            import tensorflow as tf
            def heads(features, n):
                logits = []
                for i in range(features.shape[0]):
                    logits += [tf.reshape(features[i], [-1, n])]
                return tf.concat(logits, axis=0)
            def labels(x):
                msg = ""
                for i in range(x.shape[0]):
                    msg += tf.as_string(x[i])
                return msg
        """),
        # Work per item that no reduction replaces: a crop of a different size each time, a
        # Python metric through tf.numpy_function.
        Valid("""
            import tensorflow as tf
            def box_loss(depth, boxes, metric):
                loss = 0.0
                score = 0.0
                for i in range(boxes.shape[0]):
                    box = boxes[i]
                    crop = depth[box[1]:box[3], box[0]:box[2]]
                    loss += tf.reduce_mean(tf.abs(crop - 1.0))
                    score += tf.numpy_function(metric, [boxes[i]], tf.float32)
                return loss, score
        """),
        Valid("""
            import tensorflow as tf
            def f(x):
                return tf.reduce_sum(x, axis=0)
        """),
        # Counting iterations is not accumulating tensor elements.
        Valid("""
            import tensorflow as tf
            def f(x):
                n = 0
                for i in range(x.shape[0]):
                    n += 1
                    tf.print(x[i])
                return n
        """),
        # Summing losses over a dataset: one training step per batch, not per element.
        Valid("""
            import tensorflow as tf
            def run(model, ds):
                total = 0.0
                for x, y in ds:
                    total += model.train_on_batch(x, y)
                return total
        """),
        # The accumulator is reset every iteration: no running sum across the loop.
        Valid("""
            import tensorflow as tf
            def f(x):
                for i in range(x.shape[0]):
                    acc = tf.zeros([3])
                    acc += x[i]
                    tf.print(acc)
        """),
        # A recurrence, not a sum: each step needs the previous state.
        Valid("""
            import tensorflow as tf
            def f(x, w):
                h = tf.zeros([4])
                for t in range(x.shape[0]):
                    h = h + tf.tanh(tf.linalg.matvec(w, h) + x[t])
                return h
        """),
        # Summing over a list of model outputs or of variables: a few tensors, not elements.
        Valid("""
            import tensorflow as tf
            def total_loss(model, x, l2):
                outputs = model(x)
                loss = tf.constant(0.0)
                for i in range(len(outputs)):
                    loss += tf.reduce_mean(outputs[i])
                for v in tf.compat.v1.trainable_variables():
                    loss += l2 * tf.nn.l2_loss(v)
                return loss
        """),
        # A training loop summing losses: the term is a user's step, not one small op.
        Valid("""
            import tensorflow as tf
            def fit(train_step, n):
                total = tf.constant(0.0)
                for step in range(n):
                    total += train_step(tf.constant(step))
                return total
        """),
        # Python strings built in a loop over a Python list.
        Valid("""
            def f(words):
                s = ''
                for i in range(len(words)):
                    s += words[i]
                return s
        """),
        # Issue 25's spellings (eighth pass): the twins of the channel-weighted sums below.
        # A feature extractor's outputs (a list of maps of other shapes), enumerated.
        Valid("""
            import tensorflow as tf
            def style_loss(vgg, fake, weights):
                loss = 0.0
                for i, feat in enumerate(vgg(fake)):
                    loss += weights[i] * tf.reduce_mean(feat)
                return loss
        """, spelling="loop: enumerate over a model's outputs"),
        # Each channel's term reads the running map: a recurrence, not a sum.
        Valid("""
            import tensorflow as tf
            def cam(output, weights):
                cam = tf.zeros(output.shape[0:2])
                for i in range(output.shape[-1]):
                    cam = cam + tf.tanh(cam) * output[:, :, i]
                return cam
        """, spelling="index: channel slice, recurrence"),
        Valid("""
            from helpers import style_loss
            def run(vgg, fake, weights):
                return style_loss(vgg, fake, weights)
        """, files={"helpers.py": """
            import tensorflow as tf
            def style_loss(vgg, fake, weights):
                loss = 0.0
                for i, feat in enumerate(vgg(fake)):
                    loss += weights[i] * tf.reduce_mean(feat)
                return loss
        """}, spelling="module"),
        Valid("""
            import tensorflow as tf
            output = tf.ones([7, 7, 64])
            # %%
            cam = tf.reduce_sum(output * tf.ones([64]), axis=-1)
        """, notebook=True, spelling="notebook"),
        # A running offset read by the next slice: a prefix sum (tf.cumsum), not one total.
        Valid("""
            import tensorflow as tf
            def per_type(inputs, natoms, ntypes):
                start = 0
                outs = []
                for t in range(ntypes):
                    outs.append(tf.slice(inputs, [0, start], [-1, natoms[2 + t]]))
                    start += natoms[2 + t]
                return outs
        """),
    )
    invalid = (
        # Stop 44 wave 2's twin: the model runs once, before the loop; the loop sums its rows.
        Invalid("""
            import tensorflow as tf
            def f(model, x):
                out = model(x, training=False)
                acc = tf.zeros([4])
                for i in range(out.shape[0]):
                    acc += tf.square(out[i])
                return acc
        """, count=1, lines=(6,), spelling="index: rows of one model output"),
        Invalid("""
            import tensorflow as tf
            def f(x):
                acc = tf.zeros([4])
                for i in range(x.shape[0]):
                    acc += x[i]
                return acc
        """, count=1, lines=(5,), fixed="""
            import tensorflow as tf
            def f(x):
                acc = tf.zeros([4])
                acc += tf.reduce_sum(x, axis=0)
                return acc
        """),
        Invalid("""
            import tensorflow as tf
            def f(x, n):
                total = tf.zeros([4])
                for k in range(1, n):
                    total = total + x[k]
                return total
        """, count=1, lines=(5,), fixed="""
            import tensorflow as tf
            def f(x, n):
                total = tf.zeros([4])
                total = total + tf.reduce_sum(x[1:n], axis=0)
                return total
        """),
        Invalid("""
            import tensorflow as tf
            x = tf.ones([10, 3])
            s = tf.zeros([3])
            for row in x:
                s += row
        """, count=1, lines=(5,), fixed="""
            import tensorflow as tf
            x = tf.ones([10, 3])
            s = tf.zeros([3])
            s += tf.reduce_sum(x, axis=0)
        """),
        # The article's §5.1 inner loop: a weighted sum; no automatic fix (shapes vary).
        Invalid("""
            import tensorflow as tf
            def f(samples, weights):
                window_data = samples[0]
                weighted_sum = tf.zeros([samples.shape[2]], dtype=tf.float32)
                for j in range(samples.shape[1]):
                    weighted_sum = weighted_sum + window_data[j] * weights[j]
                return weighted_sum
        """, count=1, lines=(6,)),
        # One TF op per index, summed (a graph of n ops in TF1 code): one op over tf.range.
        Invalid("""
            import numpy as np
            import tensorflow as tf
            def log_normalizer(concentration, dimension):
                ans = tf.zeros_like(concentration)
                for k in range(1, dimension):
                    ans = ans + tf.constant(np.log(np.pi) * k / 2., concentration.dtype)
                    ans = ans + tf.math.lgamma(concentration + (dimension - 1 - k) / 2.)
                return ans
        """, count=2, lines=(6, 7)),
        # The loop variable is used after the loop: reported, but not fixed.
        Invalid("""
            import tensorflow as tf
            def f(x):
                acc = tf.zeros([4])
                for i in range(x.shape[0]):
                    acc += x[i]
                return acc, i
        """, count=1),
        # Issue 25's spellings (eighth pass): a class-activation map summed channel by channel
        # (`for i, w in enumerate(weights)`: the index picks another tensor's channel).
        Invalid("""
            import numpy as np
            import tensorflow as tf
            def cam(output, grads):
                weights = tf.reduce_mean(grads, axis=(0, 1))
                cam = np.ones(output.shape[0:2], dtype=np.float32)
                for i, w in enumerate(weights):
                    cam += w * output[:, :, i]
                return cam
        """, count=1, lines=(7,), spelling="loop: enumerate over a tensor"),
        Invalid("""
            import tensorflow as tf
            def cam(output, weights):
                cam = tf.zeros(output.shape[0:2])
                for i in range(output.shape[-1]):
                    cam = cam + weights[i] * output[:, :, i]
                return cam
        """, count=1, lines=(5,), spelling="index: channel slice"),
        Invalid("""
            from helpers import cam
            def run(output, grads):
                return cam(output, grads)
        """, files={"helpers.py": """
            import tensorflow as tf
            def cam(output, grads):
                weights = tf.reduce_mean(grads, axis=(0, 1))
                total = tf.zeros(output.shape[0:2])
                for i, w in enumerate(weights):
                    total += w * output[:, :, i]
                return total
        """}, count=1, spelling="module"),
        Invalid("""
            import tensorflow as tf
            output = tf.ones([7, 7, 64])
            weights = tf.reduce_mean(output, axis=(0, 1))
            # %%
            cam = tf.zeros([7, 7])
            for i, w in enumerate(weights):
                cam += w * output[:, :, i]
        """, count=1, notebook=True, spelling="notebook"),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        if not ctx.imports_tf:
            return  # nothing here can be a tensor
        acc_form = _accumulation(node)
        if acc_form is None:
            return
        acc, term, form = acc_form
        loops = ctx.enclosing_loops(node)
        if not loops or type(loops[0]) is not ast.For:
            return
        loop = loops[0]
        el = element_loop(ctx, loop, strict=False)
        if el is not None:
            if el.kind == "index":
                if not any(indexes_with(n, el.var) for n in ast.walk(term)):
                    el = None
            elif not _mentions(term, el.var):
                el = None
        if el is None and not _op_of_index(ctx, loop, term):
            return
        if el is not None and el.sized is not None and el.sized.how == "len" \
                and not ctx.is_tensor_like(el.sized.obj):
            return  # `range(len(outputs))`: a few tensors of a list, maybe of other shapes
        if el is not None and el.kind == "index" and el.sized is None \
                and _indexes_unknown_only(ctx, term, el.var):
            return  # `range(7)` over `feats = self.vgg(x)`: a model's outputs, maybe a list
        acc_ref = node.target if type(node) is ast.AugAssign else node.targets[0]
        b = ctx.binding(acc_ref)  # type: ignore[arg-type]
        if _not_a_sum(ctx, b, term) or _ragged_or_host_work(ctx, loop) \
                or _calls_a_model(ctx, term) or _fed_by_a_model(ctx, loop, term):
            return
        flow = loop_flow(ctx, loop)
        if _stored_elsewhere(loop, acc, node) and acc not in flow.reductions:
            return
        if flow.depends_on_recurrence(ctx, term):
            return  # `h = h + f(h, x[i])`: each step needs the previous one
        if _read_elsewhere(loop, acc, node):
            return  # a running offset each iteration uses (`tf.slice(x, [start])`): a scan
        # Evidence that tensors are summed (the loop bound alone may be any number).
        if not (ctx.is_tensor_like(acc_ref) or ctx.is_tensor_like(term)
                or does_tensor_work(ctx, list(ast.walk(term)))):
            return
        fix = self._fix(ctx, node, el, acc, term, form) if el is not None else None
        yield self.finding(ctx, node, fix=fix)

    def _fix(self, ctx: Context, node: ast.AST, el: ElementLoop, acc: str,
             term: ast.expr, form: str) -> Fix | None:
        loop = el.loop
        if loop.body != [node] or loop.orelse or (type(node) is ast.Assign and form != "left"):
            return None
        if type(node) is ast.AugAssign and type(node.op) is not ast.Add:
            return None
        tf = ctx.module_alias("tensorflow")
        if tf is None or self._var_used_outside(ctx, loop, el.var):
            return None
        if el.kind == "iterate":
            if not (type(term) is ast.Name and term.id == el.var and _plain_ref(loop.iter)):
                return None
            summed = ctx.source_of(loop.iter)
        else:
            if not (type(term) is ast.Subscript and type(term.slice) is ast.Name
                    and term.slice.id == el.var and _plain_ref(term.value)
                    and not _mentions(term.value, acc)):
                return None
            summed = self._slice(ctx, loop, term.value)  # type: ignore[arg-type, assignment]
            if summed is None:
                return None
        reduced = f"{tf}.reduce_sum({summed}, axis=0)"
        text = f"{acc} += {reduced}" if form == "aug" else f"{acc} = {acc} + {reduced}"
        return self.unsafe_fix(ctx.replace(loop, text),
                               description="sum with one reduction instead of a loop")

    @staticmethod
    def _slice(ctx: Context, loop: ast.For, seq: ast.expr) -> str | None:
        args = range_args(ctx, loop.iter)
        if args is None or not ctx.is_builtin(loop.iter.func, "range") or len(args) > 2:
            return None
        name = ctx.source_of(seq)
        if len(args) == 1:
            sized = sized_by(ctx, args[0])
            if sized is not None and sized.axis == 0 and ctx.source_of(sized.obj) == name:
                return name  # range(len(x)) / range(x.shape[0]) over x itself
            return f"{name}[:{ctx.source_of(args[0])}]"
        return f"{name}[{ctx.source_of(args[0])}:{ctx.source_of(args[1])}]"

    @staticmethod
    def _var_used_outside(ctx: Context, loop: ast.AST, var: str) -> bool:
        scope = ctx.scope_of(loop)
        inside = {id(n) for n in ast.walk(loop)}
        return any(type(n) is ast.Name and n.id == var and id(n) not in inside
                   for n in ast.walk(scope))
