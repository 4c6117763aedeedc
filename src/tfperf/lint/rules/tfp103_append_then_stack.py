"""TFP103: tensors appended to a list in a loop, then stacked or concatenated."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from typing import Any

from tfperf.core.findings import Finding
from tfperf.lint.analysis.dependence import depends_on, loop_flow
from tfperf.lint.analysis.host import host_array, host_conversion, host_scalar
from tfperf.lint.analysis.loops import (
    STACKING_CALLS,
    in_chunks,
    loop_targets,
    measures_list,
    range_args,
    range_stop,
    sized_by,
    walk_body,
)
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context, returns_tensor

_STACKING_NAMES = frozenset(q.rsplit(".", 1)[1] for q in STACKING_CALLS)

# Per-example calls with no one-op form: ops that take one example only (TF 2.21 raises on a
# batch: "image must be 3-dimensional", "`contents` must be scalar"), and random image ops
# that draw one value for all they are given (a batched call gives every image the same
# brightness, the same crop offset). Held-out precision round 7's false class: per-image
# `random_jpeg_quality` in a comprehension.
_ONE_EXAMPLE_OPS = frozenset(
    f"tensorflow.{m}.{op}" for m, ops in (
        ("image", ("random_jpeg_quality", "adjust_jpeg_quality", "stateless_random_jpeg_quality",
                   "encode_jpeg", "decode_jpeg", "decode_png", "decode_image",
                   "sample_distorted_bounding_box", "stateless_sample_distorted_bounding_box",
                   "random_brightness", "random_contrast", "random_hue", "random_saturation",
                   "random_crop", "stateless_random_crop")),
        ("io", ("encode_jpeg", "decode_jpeg", "decode_png", "decode_image", "decode_bmp",
                "decode_gif", "read_file")),
    ) for op in ops) | {"tensorflow.read_file", "tensorflow.random_crop"}


def _one_example_op(ctx: Context, value: ast.AST) -> bool:
    """``value`` calls an op that takes (or draws for) one example only."""
    return any(type(n) is ast.Call and ctx.call_qualname(n) in _ONE_EXAMPLE_OPS
               for n in ast.walk(value))


COMPREHENSION = "one tensor per element built in a comprehension, then stacked: use one op"


def _host_array(ctx: Context, base: ast.AST) -> bool:
    """``base`` names a host array: assigned ``t.numpy()``, ``np.array(t)`` or a NumPy call."""
    if type(base) is not ast.Name:
        return False
    b = ctx.binding(base)
    if b is None or b.kind != "assign" or type(b.value) is not ast.Call:
        return False
    conv = host_conversion(ctx, b.value)
    if conv is not None and conv.kind in ("numpy", "np"):
        return True
    q = ctx.call_qualname(b.value)
    return q is not None and q.startswith("numpy.")


def _indexes_host_arrays_only(ctx: Context, elt: ast.AST, targets: set[str]) -> bool:
    """The items ``elt`` takes by the loop's index come from host arrays, at least one known
    (``[post(pred[i], mask[i]) for i in range(len(pred))]`` with ``pred = out.numpy()``) and
    none known to be a tensor: host post-processing per item, with no TF op per element,
    converted once."""
    items = [n.value for n in ast.walk(elt) if type(n) is ast.Subscript
             and targets & {m.id for m in ast.walk(n.slice) if type(m) is ast.Name}]
    return any(_host_array(ctx, b) for b in items) \
        and not any(ctx.is_tensor_like(b) for b in items)



def _calls_by_target(nodes: Iterable[ast.AST], targets: set[str]) -> bool:
    """Among ``nodes``, a call of something chosen by the loop's target:
    ``self.convs[i](x)``, ``layer(x)`` for ``layer`` in a list of layers."""
    for n in nodes:
        if type(n) is not ast.Call:
            continue
        f = n.func
        if type(f) is ast.Name and f.id in targets:
            return True
        if type(f) is ast.Subscript and any(
                type(m) is ast.Name and m.id in targets for m in ast.walk(f.slice)):
            return True
    return False


def _callee_per_iteration(loop: ast.AST) -> bool:
    """Each iteration calls a different function or layer (a hand-written grouped
    convolution: one `Conv2D` per group, then a concat): no single op builds the list."""
    return type(loop) is ast.For and _calls_by_target(walk_body(loop), loop_targets(loop))


def _adds_to(stmt: ast.AST, name: str) -> bool:
    """``name += ...`` or ``name = name + ...``."""
    if type(stmt) is ast.AugAssign:
        return type(stmt.target) is ast.Name and stmt.target.id == name \
            and type(stmt.op) is ast.Add
    return type(stmt) is ast.Assign and len(stmt.targets) == 1 \
        and type(stmt.targets[0]) is ast.Name and stmt.targets[0].id == name \
        and type(stmt.value) is ast.BinOp and type(stmt.value.op) is ast.Add \
        and type(stmt.value.left) is ast.Name and stmt.value.left.id == name


def _added_value(stmt: ast.AST) -> ast.expr | None:
    """What ``name += v`` / ``name = name + v`` adds: ``v``."""
    if type(stmt) is ast.AugAssign:
        return stmt.value
    return stmt.value.right if type(stmt) is ast.Assign and type(stmt.value) is ast.BinOp \
        else None


def _one_return(ctx: Context, call: ast.Call) -> bool:
    """The called function is this module's and only returns one expression
    (``def mul(a, b): return tf.multiply(a, b)``): a wrapper of one op, no big work."""
    b = ctx.binding(call.func) if type(call.func) is ast.Name else None
    if b is None or b.kind != "def":
        return False
    body = [st for st in b.value.body
            if not (type(st) is ast.Expr and type(st.value) is ast.Constant)]
    return len(body) == 1 and type(body[0]) is ast.Return


def _helper_calls(ctx: Context, inner: ast.AST, value: ast.expr) -> bool:
    """``value`` (what one iteration of ``inner`` adds) calls a function of the user that
    does more than one op, directly or through a name assigned in ``inner``
    (``sl1 = style_loss(...)``, then ``sl = sl + sl1 * w``)."""
    assigned = {st.targets[0].id: st.value for st in walk_body(inner)
                if type(st) is ast.Assign and len(st.targets) == 1
                and type(st.targets[0]) is ast.Name}
    seen = [value] + [assigned[n.id] for n in ast.walk(value)
                      if type(n) is ast.Name and n.id in assigned]
    return any(type(n) is ast.Call and type(n.func) is ast.Name
               and ctx.call_qualname(n) is None and not _one_return(ctx, n)
               for v in seen for n in ast.walk(v))


def _summed_by_inner_calls(ctx: Context, loop: ast.AST, value: ast.expr) -> bool:
    """``value`` is a name summed by an inner loop of ``loop`` whose added value calls a
    function of the user per iteration (``sl = 0.; for k in layers: sl = sl + style_loss(...)``,
    then ``losses.append(sl)``): each element is itself a loop of the user's code over items
    of their own shapes (per-layer Gram losses), not one op per element; summing the few
    elements with ``add_n`` is already one op (held-out precision round 11's false class).
    Review 41: the call must be in what is added (not a ``log_progress(i, j)`` beside it) and
    more than a one-op wrapper (``mul(a, b)``)."""
    if type(value) is not ast.Name:
        return False
    for inner in walk_body(loop):
        if type(inner) not in (ast.For, ast.While):
            continue
        for n in walk_body(inner):
            added = _added_value(n) if _adds_to(n, value.id) else None
            if added is not None and _helper_calls(ctx, inner, added):
                return True
    return False


def _preallocated(value: ast.AST) -> bool:
    """``[0] * n``, ``[None] * n``, ``n * [None]``, ``[None for _ in range(n)]``: a list of
    ``n`` placeholder slots, each to be written once by index."""
    if type(value) is ast.BinOp and type(value.op) is ast.Mult:
        for side in (value.left, value.right):
            if type(side) is ast.List and len(side.elts) == 1 \
                    and type(side.elts[0]) is ast.Constant:
                return True
        return False
    return type(value) is ast.ListComp and type(value.elt) is ast.Constant


WRITTEN = ("one tensor per loop index written into a list of slots, then stacked: build them "
           "with one op")
RETURNED = ("one tensor per loop index built by TensorFlow ops on the index, returned as a "
            "list: one op over tf.range builds them all")


def _loop_value(ctx: Context, loop: ast.AST, value: ast.expr) -> ast.expr:
    """``value`` or, for a name bound once in ``loop``'s body, what it was bound to."""
    if type(value) is not ast.Name:
        return value
    b = ctx.binding(value)
    if b is None or b.kind != "assign" or not any(n is b.value for n in ast.walk(loop)):
        return value
    return b.value


def _python_number(ctx: Context, loop: ast.AST, value: ast.expr) -> bool:
    """``value`` is a Python number (``float(loss)``, ``loss.numpy().item()``) of a value
    the iteration made whole (a step's loss), not of one element of a tensor taken by the
    loop (``float(x[i])``, ``float(row)`` over ``x``: a slice and a host sync per element).
    Held-out precision round 14: ``losses.append(float(loss))`` per batch judged false."""
    operand = host_scalar(ctx, value)
    if operand is None:
        return False
    targets = loop_targets(loop)
    return not any((type(n) is ast.Name and n.id in targets and n is operand)
                   or (type(n) is ast.Subscript
                       and targets & {m.id for m in ast.walk(n.slice) if type(m) is ast.Name})
                   for n in ast.walk(operand))


def _op_of_index(ctx: Context, loop: ast.For, value: ast.expr) -> bool:
    """``value`` is a TensorFlow op whose positional inputs depend on the loop's index as a
    number (``tf.less_equal(start, float(i))``, ``tf.equal(labels, i)``): the same op over
    ``tf.range(n)`` and a broadcast gives every element at once. Not a user's function or a
    layer (one per index), nor an index that only names the result (``name=f"l{i}"``)."""
    var = {loop.target.id} if type(loop.target) is ast.Name else set()
    if type(value) is not ast.Call or not var:
        return False
    found = False
    for n in ast.walk(value):
        if type(n) is not ast.Call:
            continue
        q = ctx.qualname(n.func)
        if q is None:
            if not (type(n.func) is ast.Name and ctx.is_builtin(n.func, n.func.id)):
                return False  # a user's function, a layer, a method: not one small op
            continue
        if not returns_tensor(q) or "Variable" in q or "variable" in q:
            return False
        found = found or any(depends_on(ctx, loop, a, var) for a in n.args)
    return found


class AppendThenStack(Rule):
    code = "TFP103"
    batches_loops = True
    name = "append-then-stack"
    message = "tensors appended to a list in a loop, then stacked: build them with one op"
    hint = ("compute all elements with one whole-tensor op; if the body cannot be vectorised, "
            "tf.vectorized_map / tf.map_fn, or tf.TensorArray inside tf.function")
    claims = ("S12",)
    group = "perf"
    node_types = (ast.Call, ast.Return)
    needs_tf = True  # nothing to report where neither TF nor Keras is imported
    callee_names = _STACKING_NAMES
    docs = """\
## What it does
Finds a list that starts empty, gets one tensor appended per iteration of a loop over a range
or over a tensor, and is then turned into one tensor with `tf.stack`, `tf.concat`,
`tf.add_n` or `tf.convert_to_tensor`; the finding is on each `append`. The same for a list
comprehension over a range or a tensor that is stacked (`tf.stack([f(x[i]) for i in
range(n)])`); the finding is on the comprehension. And a list returned to the caller where
each element is a TensorFlow op on the loop's index as a number (`masks.append(tf.equal(labels,
i))` for `i in range(n)`): one op over `tf.range(n)` with a broadcast builds them all (not an
index that only names the result, a variable or a user's function per index). And a list of
slots made first (`out = [0] * n`, `[None for _ in range(n)]`) with one tensor written per
index of the loop (`out[b] = tf.case(...)` for `b in range(batch_size)`), then stacked: the
finding is on the write (not a slot chosen by a table, NumPy values, a carried state).

## Why is this bad?
The loop computes the result one slice at a time (small ops, Python overhead per element),
then pays once more to copy all slices into a new tensor. Computing the whole result with
one batched op avoids both; the article's §5.1 baseline collects its rows this way and its
vectorised version is 30–65× faster (claims S12, S16, S17).

## Example
```python
rows = []
for i in range(x.shape[0]):
    rows.append(tf.reduce_sum(x[i] * w, axis=0))
out = tf.stack(rows)
```

## Use instead
```python
out = tf.reduce_sum(x * w, axis=1)
```
or, when the per-element body cannot be vectorised by hand,
`tf.vectorized_map(lambda xi: body(xi), x)`.

## Fix safety
No automatic fix: the batched form depends on what the body computes.

Lists filled while iterating a dataset or files (collecting predictions per batch) are not
reported: each iteration there is already a whole batch; nor loops over `range(len(p))` where
`p` is a parameter or a list (a few feature maps, levels, heads). Neither are values that depend on
what the previous iteration computed (a hand-unrolled RNN `out, state = cell(x_t, state)`,
autoregressive decoding): their steps cannot run at once.

## Known limitations
Not reported: Python numbers appended (`losses.append(float(loss))`, `.item()`), each of a
whole value the iteration made, not of an element the loop takes from a tensor
(`float(x[i])` is still reported); held-out precision round 14 judged one false.
Not reported: per-example calls of an op that takes one example only (`random_jpeg_quality`,
`adjust_jpeg_quality`, `encode_jpeg`, the `decode_*` ops, `read_file`,
`sample_distorted_bounding_box`: TF 2.21 raises on a batch) or of a random image op that draws
one value for all it is given (`random_brightness`, `random_contrast`, `random_hue`,
`random_saturation`, `random_crop`: one batched call would give every image the same value).
Not reported: a comprehension over the items of a host array (`pred = out.numpy()`, then
`[post(pred[i], mask[i]) for i in range(len(pred))]`, no item taken from a known tensor) with
a function that is not TensorFlow's: host post-processing, converted once, with no TF op per
element; nor host arrays appended in a loop (`crop / 255` with `crop` sliced from
`cv2.imread(...)`, `cv2.resize(...)`, NumPy results), converted once.
"""
    valid = (
        # Stop 44 wave 2 (held-out precision round 14): Python numbers of a whole value each
        # iteration made (a step's loss), stacked once: no tensor per element.
        Valid("""
            import numpy as np
            import tensorflow as tf
            def train(step, data, n):
                losses = []
                for b in range(n):
                    losses.append(float(step(data.batch(b))))
                np.savetxt("losses.txt", tf.stack(losses).numpy())
        """, spelling="loop: float() in the append"),
        Valid("""
            import tensorflow as tf
            def train(step, n):
                losses = []
                for b in range(n):
                    loss = step(b)
                    value = loss.numpy().item()
                    losses.append(value)
                return tf.convert_to_tensor(losses)
        """, spelling="name: .item() through a name"),
        # Per-image ops with no one-op form (held-out precision round 7): JPEG quality takes
        # one 3-D image; a random brightness draws one delta for all it is given.
        Valid("""
            import tensorflow as tf
            def degrade(images, n):
                out = tf.stack([tf.image.random_jpeg_quality(images[i], 30, 95)
                                for i in range(n)])
                return out
        """),
        Valid("""
            import tensorflow as tf
            def jitter(images, n):
                out = []
                for i in range(n):
                    im = tf.image.random_brightness(images[i], 0.2)
                    out.append(im)
                return tf.stack(out)
        """),
        Valid("""
            import tensorflow as tf
            def load(paths, n):
                out = [None] * n
                for i in range(n):
                    out[i] = tf.io.decode_jpeg(tf.io.read_file(paths[i]))
                return tf.stack(out)
        """),
        # Host arrays (OpenCV crops scaled to [0, 1]) appended, converted once.
        Valid("""
            import random
            import cv2
            import tensorflow as tf
            def crops(img, count, size):
                out = []
                for i in range(count):
                    y, x = random.randint(0, 64), random.randint(0, 64)
                    crop = cv2.resize(img[y:y + 64, x:x + 64], (size, size))
                    out.append(crop / 255.0)
                return tf.convert_to_tensor(out)
        """),
        # A cell stepped with its state carried from one iteration to the next: sequential,
        # whatever is appended.
        Valid("""
            import tensorflow as tf
            def decode(cell, dense, first, state, steps):
                outputs = []
                outputs.append(first)
                x = first
                for t in range(1, steps):
                    x, state = cell(x, states=state)
                    out = dense(x)
                    outputs.append(first * t)
                return tf.stack(outputs), out
        """),
        # A different layer each iteration (a grouped convolution written by hand): no
        # single op builds the list.
        Valid("""
            import tensorflow as tf
            class GroupConv(tf.keras.layers.Layer):
                def call(self, x):
                    parts = []
                    for g in range(self.groups):
                        part = self.convs[g](x[..., g * self.width:(g + 1) * self.width])
                        parts.append(part)
                    heads = tf.stack([head(x) for head in self.heads])
                    return tf.concat(parts, axis=-1), heads
        """),
        # Host post-processing (another library's function) per item of a NumPy array
        # fetched once, then one conversion: no TF op per element.
        Valid("""
            import numpy as np
            import tensorflow as tf
            from skimage.segmentation import watershed
            def instances(model, images, masks, prepare):
                pred = model(images).numpy()
                marks, _ = prepare(masks)
                cut = [watershed(pred[i], mask=marks[i]) for i in range(len(pred))]
                return tf.convert_to_tensor(cut)
        """),
        Valid("""
            import tensorflow as tf
            def f(x, w):
                return tf.reduce_sum(x * w, axis=1)
        """),
        # Collecting per-batch predictions from a dataset is fine.
        Valid("""
            import tensorflow as tf
            def predict_all(model, ds):
                preds = []
                for batch in ds:
                    preds.append(model(batch))
                return tf.concat(preds, axis=0)
        """),
        # A list built without a loop.
        Valid("""
            import tensorflow as tf
            def f(a, b):
                parts = []
                parts.append(a)
                parts.append(b)
                return tf.concat(parts, axis=0)
        """),
        # Appended in a loop but never stacked (kept as a Python list).
        Valid("""
            import tensorflow as tf
            def f(x):
                out = []
                for i in range(x.shape[0]):
                    out.append(x[i])
                return out
        """),
        # Batches of a range with a step: each iteration is a chunk already.
        Valid("""
            import tensorflow as tf
            def integrated(alphas, batch_size, one_batch):
                grads = []
                for alpha in tf.range(0, len(alphas), batch_size):
                    grads.append(one_batch(alphas[alpha:alpha + batch_size]))
                return tf.concat(grads, axis=0)
        """),
        # Comprehensions: over a list of gradients; the same value k times; items as they are.
        Valid("""
            import tensorflow as tf
            def flat(grads, k, x):
                a = tf.concat([tf.reshape(g, [-1]) for g in tf.gradients(x, grads)], 0)
                b = tf.stack([tf.zeros([3]) for _ in range(k)])
                c = tf.stack([row for row in tf.unstack(x)])
                dims = tf.shape(x)
                d = tf.stack([dims[i] for i in range(len(x.shape))])
                seq_len = 3
                e = tf.stack([tf.constant(i + 0.5, shape=[2, 5]) for i in range(seq_len)], 1)
                return a, b, c, d, e
        """),
        # One iteration per item of a Python list (feature-pyramid levels of different
        # shapes); NumPy arrays collected.
        Valid("""
            import numpy as np
            import tensorflow as tf
            def proposals(cfg, levels, logits):
                num_lvl = len(cfg.FPN.ANCHOR_STRIDES)
                boxes, theta = [], []
                for lvl in range(num_lvl):
                    boxes.append(tf.reshape(levels[lvl], [-1, 4]))
                for k in range(len(logits)):
                    theta.append(np.matmul(logits[k], logits[k].T))
                return tf.concat(boxes, axis=0), tf.stack(theta)
        """),
        # A hand-unrolled RNN: each output needs the previous step's state.
        Valid("""
            import tensorflow as tf
            def run(cell, chars, state):
                outputs = []
                for ch in tf.unstack(chars, axis=0):
                    output, state = cell(ch, state)
                    outputs.append(output)
                return tf.stack(outputs, axis=0)
        """),
        # `stack` is not TensorFlow's here.
        Valid("""
            from numpy import stack
            def f(x):
                out = []
                for i in range(len(x)):
                    out.append(x[i] * 2)
                return stack(out)
        """),
        # Issue 25's spellings (eighth pass): the twins of the returned per-index lists below.
        # The index only names each output: the inputs are the same every time.
        Valid("""
            import tensorflow as tf
            def heads(x, n):
                outs = []
                for i in range(n):
                    outs.append(tf.identity(x, name=f"head_{i}"))
                return outs
        """, spelling="loop: for over range, index in a name only"),
        # One variable per index: state, not values one op could compute.
        Valid("""
            import tensorflow as tf
            def slots(n, dim):
                vs = []
                for i in range(n):
                    vs.append(tf.Variable(tf.zeros([dim]) + float(i)))
                return vs
        """, spelling="index: a variable per index"),
        # A user's function per index: not one small op.
        Valid("""
            import tensorflow as tf
            def masks(labels, n):
                out = []
                for i in range(n):
                    m = make_mask(labels, i)
                    out.append(m)
                return out
        """, spelling="name: a user's function"),
        Valid("""
            from helpers import heads
            def run(x):
                return heads(x, 8)
        """, files={"helpers.py": """
            import tensorflow as tf
            def heads(x, n):
                outs = []
                for i in range(n):
                    outs.append(tf.identity(x, name=f"head_{i}"))
                return outs
        """}, spelling="module"),
        Valid("""
            import tensorflow as tf
            labels = tf.constant([0, 1, 2])
            # %%
            def class_masks(labels, n):
                return tf.equal(labels[:, None], tf.range(n))
        """, notebook=True, spelling="notebook"),
        # Issue 25's spellings (ninth pass): a list of slots made first (`[0] * n`), one
        # tensor written per index, then stacked. VALID twins: a state carried between slots,
        # a slot chosen by a table, NumPy slots, a helper writing constants, three slots.
        Valid("""
            import tensorflow as tf
            def unroll(x, h, steps):
                out = [None] * steps
                for t in range(steps):
                    h = tf.tanh(x[t] + h)
                    out[t] = tf.identity(h)
                return tf.stack(out)
        """, spelling="loop: a state carried between slots"),
        Valid("""
            import tensorflow as tf
            def scatter(rows, order, n):
                out = [0] * n
                for i in range(n):
                    out[order[i]] = tf.reduce_sum(rows[i])
                return tf.stack(out)
        """, spelling="index: a slot chosen by a table"),
        Valid("""
            import numpy as np
            import tensorflow as tf
            def tables(n, dim):
                slots = n * [None]
                for i in range(n):
                    slots[i] = np.full([dim], float(i))
                return tf.stack(slots)
        """, spelling="name: NumPy slots"),
        Valid("""
            from cells import new_state
            def step(c, n):
                return new_state(c, n)
        """, files={"cells.py": """
            import tensorflow as tf
            def new_state(c, levels):
                out = [0] * len(levels)
                for i in range(len(levels)):
                    out[i] = tf.identity(levels[i])
                return tf.stack(out)
        """}, spelling="module"),
        Valid("""
            import tensorflow as tf
            x = tf.ones([3, 4])
            # %%
            parts = [None] * 3
            for i in range(3):
                parts[i] = tf.reduce_sum(x[i])
            total = tf.stack(parts)
        """, notebook=True, spelling="notebook"),
    )
    invalid = (
        # Stop 44 wave 2's twin: a tensor taken apart into Python floats, one slice and one
        # host sync per element, then stacked back.
        Invalid("""
            import tensorflow as tf
            def f(x):
                x = tf.convert_to_tensor(x)
                out = []
                for i in range(x.shape[0]):
                    out.append(float(x[i]))
                return tf.stack(out)
        """, count=1, lines=(6,), spelling="index: float() of the element"),
        # Review 41: an inner sum whose added value calls a one-op wrapper, and one with a
        # logging call beside the sum: each element is still one small op per item.
        Invalid("""
            import tensorflow as tf
            def times(a, b):
                return tf.multiply(a, b)
            def dot_rows(m, v, rows, cols):
                out = []
                for r in range(rows):
                    acc = 0.
                    for c in range(cols):
                        acc = acc + times(m[r, c], v[c])
                    out.append(acc)
                return tf.stack(out)
        """, count=1, lines=(10,), spelling="loop: an inner sum of a one-op wrapper"),
        Invalid("""
            import tensorflow as tf
            def dot_rows(m, v, rows, cols):
                out = []
                for r in range(rows):
                    acc = 0.
                    for c in range(cols):
                        acc += m[r, c] * v[c]
                        report(r, c)
                    out.append(acc)
                return tf.stack(out)
        """, count=1, lines=(9,), spelling="loop: a user call beside the inner sum"),
        # A comprehension over rows, stacked: one small op per row.
        Invalid("""
            import tensorflow as tf
            def per_row(x, w, f):
                norms = [tf.norm(x[i] * w) for i in range(x.shape[0])]
                return tf.stack(norms), tf.stack([f(r) for r in tf.unstack(x)])
        """, count=2, lines=(3, 4)),
        # TF1 graph code: one matmul per column, packed (`tf.pack`, TF before 1.0).
        Invalid("""
            import tensorflow as tf
            def project(A, q_sqrt, num_columns):
                projected_var = []
                for d in range(num_columns):
                    LTA = A * q_sqrt[:, d:d + 1]
                    projected_var.append(tf.reduce_sum(tf.square(LTA), 0))
                return tf.transpose(tf.pack(projected_var))
        """, count=1, lines=(6,)),
        Invalid("""
            import tensorflow as tf
            def f(x, w):
                rows = []
                for i in range(x.shape[0]):
                    rows.append(tf.reduce_sum(x[i] * w, axis=0))
                return tf.stack(rows)
        """, count=1, lines=(5,)),
        Invalid("""
            import tensorflow as tf
            noise = []
            for _ in range(8):
                noise.append(tf.random.normal([3]))
            batch = tf.stack(noise, axis=0)
        """, count=1, lines=(4,)),
        Invalid("""
            import tensorflow as tf
            def f(t):
                parts = []
                for row in tf.unstack(t):
                    parts.append(tf.expand_dims(row * 2.0, 0))
                return tf.concat(parts, 0)
        """, count=1, lines=(5,)),
        Invalid("""
            from tensorflow import stack
            def f(x):
                out = []
                for i in range(x.shape[0]):
                    if i % 2:
                        out.append(x[i])
                    else:
                        out.append(-x[i])
                return stack(out)
        """, count=2, lines=(6, 8)),
        # Slots made first, one tensor op written per index, stacked (a hierarchical LSTM's
        # per-example `new_c[b] = tf.case(...)` over `range(batch_size)`).
        Invalid("""
            import tensorflow as tf
            def new_cell(c, f, z, batch_size):
                new_c = [0] * batch_size
                for b in range(batch_size):
                    new_c[b] = tf.where(z[b] > 0, c[b], f[b] * c[b])
                return tf.stack(new_c, axis=0)
        """, count=1, lines=(5,), spelling="loop: slots written per index of a range"),
        Invalid("""
            import tensorflow as tf
            class Cell:
                def new_cell(self, c, f, i, g, z):
                    new_c = [0] * self._batch_size
                    for b in range(self._batch_size):
                        def copy_c():
                            return tf.identity(c[b])
                        def update_c():
                            return tf.add(tf.multiply(f[b], c[b]), tf.multiply(i[b], g[b]))
                        new_c[b] = tf.cond(tf.equal(tf.squeeze(z[b]), 1.0), update_c, copy_c)
                    return tf.stack(new_c, axis=0)
        """, count=1, lines=(10,), spelling="index: per-row branches on self's batch size"),
        Invalid("""
            import tensorflow as tf
            def rows(x, w, n):
                slots = [None for _ in range(n)]
                for i in range(n):
                    slots[i] = tf.reduce_sum(x[i] * w, axis=0)
                return tf.concat(slots, axis=0)
        """, count=1, lines=(5,), spelling="name: slots made by a comprehension, concatenated"),
        Invalid("""
            from cells import new_state
            def step(c, z, n):
                return new_state(c, z, n)
        """, files={"cells.py": """
            import tensorflow as tf
            def new_state(c, z, n):
                out = n * [None]
                for b in range(n):
                    out[b] = tf.where(z[b] > 0, c[b], tf.zeros_like(c[b]))
                return tf.stack(out)
        """}, count=1, spelling="module"),
        Invalid("""
            import tensorflow as tf
            x = tf.ones([64, 4])
            # %%
            parts = [None] * 64
            for i in range(64):
                parts[i] = tf.reduce_sum(x[i])
            total = tf.stack(parts)
        """, count=1, notebook=True, spelling="notebook"),
        # Issue 25's spellings (eighth pass): a list of per-index masks returned (the caller
        # walks or stacks it): one comparison against tf.range(n) builds them all.
        Invalid("""
            import tensorflow as tf
            def class_masks(labels, n):
                masks = []
                for i in range(n):
                    masks.append(tf.equal(labels, i))
                return masks
        """, count=1, lines=(5,), spelling="loop: for over range"),
        Invalid("""
            import tensorflow as tf
            def col_masks(start, end, mask, n=50):
                col_masks = []
                for i in range(n):
                    float_i = float(i)
                    col_mask = tf.logical_and(
                        tf.logical_and(tf.less_equal(start, float_i), tf.less_equal(float_i, end)),
                        mask)
                    col_masks.append(col_mask)
                return col_masks
        """, count=1, lines=(9,), spelling="index: the index as a number, through float()"),
        Invalid("""
            import tensorflow as tf
            def shifted(x, n):
                out = []
                for k in range(n):
                    rolled = tf.roll(x, k, axis=0)
                    out.append(rolled)
                return out
        """, count=1, lines=(6,), spelling="name: the op through a name"),
        Invalid("""
            from helpers import class_masks
            def run(labels):
                return class_masks(labels, 10)
        """, files={"helpers.py": """
            import tensorflow as tf
            def class_masks(labels, n):
                masks = []
                for i in range(n):
                    masks.append(tf.equal(labels, i))
                return masks
        """}, count=1, spelling="module"),
        Invalid("""
            import tensorflow as tf
            labels = tf.constant([0, 1, 2])
            # %%
            def class_masks(labels, n):
                masks = []
                for i in range(n):
                    masks.append(tf.equal(labels, i))
                return masks
        """, count=1, notebook=True, spelling="notebook"),
        # Stop 41, the true twin of the style-loss VALID: the inner loop sums TensorFlow ops
        # over the element's own row (one reduce per row would do it all at once).
        Invalid("""
            import tensorflow as tf
            def row_sums(x, w, n, m):
                sums = []
                for i in range(n):
                    s = 0.
                    for j in range(m):
                        s = s + x[i, j] * w[j]
                    sums.append(s)
                return tf.stack(sums)
        """, count=1, lines=(8,), spelling="loop: an inner sum of tensor ops per element"),
    )
    valid = (  # type: ignore[assignment]
        *valid,
        # Held-out precision round 11: one loss per style image, each a sum of the user's
        # per-layer losses over layers of different shapes, then add_n: nothing to batch.
        Valid("""
            import tensorflow as tf
            def compute_loss(style_targets, outputs, layers, n_refs, weights):
                style_losses = []
                for k in range(n_refs):
                    feats = style_targets[k]
                    sl_i = 0.
                    for j in range(len(layers) - 1):
                        sl1 = style_loss(feats[layers[j]], outputs[layers[j]])
                        sl_i = sl_i + sl1 * weights[k]
                    style_losses.append(sl_i)
                return tf.add_n(style_losses)
        """, spelling="loop: a sum of the user's per-layer losses per element"),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        if type(node) is ast.Return:
            yield from self._returned(ctx, node)
            return
        func = node.func
        last = func.attr if type(func) is ast.Attribute else getattr(func, "id", None)
        if last not in _STACKING_NAMES or not node.args:
            return  # cheap test first: this runs for every call in every file
        if not ctx.imports_tf or ctx.call_qualname(node) not in STACKING_CALLS:
            return
        lst = node.args[0]
        comp = self._comprehension(ctx, lst)
        if comp is not None:
            yield self.finding(ctx, comp, COMPREHENSION)
            return
        if type(lst) is not ast.Name:
            return
        init = ctx.binding(lst)
        if init is None or init.kind != "assign":
            return
        if _preallocated(init.value):
            yield from self._written_by_index(ctx, node, lst, init)
            return
        if type(init.value) is not ast.List or init.value.elts:
            return
        scope = ctx.scope_of(node)
        for call in ast.walk(scope):
            if type(call) is not ast.Call or type(call.func) is not ast.Attribute \
                    or call.func.attr != "append" or len(call.args) != 1:
                continue
            recv = call.func.value
            if type(recv) is not ast.Name or recv.id != lst.id or ctx.binding(recv) != init:
                continue
            if not (init.pos <= (call.lineno, call.col_offset) < (node.lineno, node.col_offset)):
                continue
            loops = ctx.enclosing_loops(call)
            appended = _loop_value(ctx, loops[0], call.args[0]) if loops else call.args[0]
            if _one_example_op(ctx, appended):
                continue  # a per-example op with no one-op form
            if loops and _summed_by_inner_calls(ctx, loops[0], call.args[0]):
                continue  # each element a sum over the user's per-layer calls
            if host_array(ctx, call.args[0]):
                continue  # host arrays collected (`cv2.resize(...) / 255`, NumPy), converted
                # by TF once: no TF op per element
            if loops and _python_number(ctx, loops[0], call.args[0]):
                continue  # `losses.append(float(loss))`: Python numbers, stacked once
            if loops and self._per_element(ctx, loops[0]) \
                    and not _callee_per_iteration(loops[0]) \
                    and not loop_flow(ctx, loops[0]).recurrent:
                # A loop that carries a state (an RNN cell stepped, a decoder fed its last
                # output) is sequential, whatever it appends: no one op builds the list.
                yield self.finding(ctx, call)

    def _written_by_index(self, ctx: Context, node: ast.AST, lst: ast.Name,
                          init: Any) -> Iterator[Finding]:
        """``out = [0] * n``, then ``out[i] = <tensor op>`` per index of a loop over a range
        or a tensor, then ``tf.stack(out)``: the append form with the slots made first."""
        for stmt in ast.walk(ctx.scope_of(node)):
            if type(stmt) is not ast.Assign or len(stmt.targets) != 1:
                continue
            target = stmt.targets[0]
            if type(target) is not ast.Subscript or type(target.value) is not ast.Name \
                    or target.value.id != lst.id or ctx.binding(target.value) != init:
                continue
            if not (init.pos <= (stmt.lineno, stmt.col_offset) < (node.lineno, node.col_offset)):
                continue
            value = stmt.value
            q = ctx.call_qualname(value) if type(value) is ast.Call else None
            if type(value) is not ast.Call or (q is not None and q.startswith("numpy.")):
                continue  # a constant, a name, NumPy: not one TF op per slot
            if _one_example_op(ctx, value):
                continue  # a per-example op with no one-op form
            loops = ctx.enclosing_loops(stmt)
            if not loops or not self._per_element(ctx, loops[0]):
                continue
            # The slot is the loop's own index (`out[b]` for `b in range(n)`), not a
            # position computed elsewhere (a scatter by a host table).
            if type(target.slice) is not ast.Name \
                    or target.slice.id not in loop_targets(loops[0]):
                continue
            if _callee_per_iteration(loops[0]) or loop_flow(ctx, loops[0]).recurrent:
                continue
            yield self.finding(ctx, stmt, WRITTEN)

    def _returned(self, ctx: Context, node: ast.Return) -> Iterator[Finding]:
        """``return masks`` where ``masks`` started empty and got, per index of a range,
        one TensorFlow op on that index (the caller stacks or walks the list)."""
        lst = node.value
        if type(lst) is not ast.Name or not ctx.imports_tf:
            return
        init = ctx.binding(lst)
        if init is None or init.kind != "assign" or type(init.value) is not ast.List \
                or init.value.elts:
            return
        appends = []
        for call in ast.walk(ctx.scope_of(node)):
            if type(call) is ast.Call and type(call.func) is ast.Attribute \
                    and type(call.func.value) is ast.Name and call.func.value.id == lst.id \
                    and call.func.attr in ("append", "extend", "insert", "pop", "remove"):
                appends.append(call)
        if len(appends) != 1 or appends[0].func.attr != "append" or len(appends[0].args) != 1:
            return  # the list is changed otherwise too: not one element per index
        call = appends[0]
        loops = ctx.enclosing_loops(call)
        if not loops or type(loops[0]) is not ast.For or len(loops) > 1:
            return
        loop = loops[0]
        if range_args(ctx, loop.iter) is None or not self._per_element_iter(ctx, loop.iter) \
                or loop_flow(ctx, loop).recurrent:
            return
        if _op_of_index(ctx, loop, _loop_value(ctx, loop, call.args[0])):
            yield self.finding(ctx, call, RETURNED)

    def _comprehension(self, ctx: Context, lst: ast.AST) -> ast.AST | None:
        """``tf.stack([f(x[i]) for i in range(n)])`` (or a name bound to the comprehension
        just before): one element per index or row, stacked. ``None`` otherwise."""
        if type(lst) is ast.Name:
            b = ctx.binding(lst)
            lst = b.value if b is not None and b.kind == "assign" else lst
        if type(lst) not in (ast.ListComp, ast.GeneratorExp) or len(lst.generators) != 1:
            return None
        gen = lst.generators[0]
        if gen.ifs or not self._per_element_iter(ctx, gen.iter):
            return None
        elt = lst.elt
        targets = {n.id for n in ast.walk(gen.target) if type(n) is ast.Name}
        if not targets & {n.id for n in ast.walk(elt) if type(n) is ast.Name}:
            return None  # `[tf.zeros([3]) for _ in range(k)]`: the same value k times
        if _calls_by_target(ast.walk(elt), targets):
            return None  # `[self.convs[i](x) for i in range(g)]`: another layer each time
        if _one_example_op(ctx, elt):
            return None  # `[tf.image.random_jpeg_quality(im, 50, 95) for im in x]`
        q = ctx.call_qualname(elt)
        if (q is not None and q.startswith("numpy.")) \
                or type(elt) in (ast.Name, ast.Tuple, ast.Subscript):
            return None  # NumPy arrays, or the items themselves (`[shape[i] for i in ...]`)
        if (q is None or not q.startswith("tensorflow.")) \
                and _indexes_host_arrays_only(ctx, elt, targets):
            return None  # a host function over the items of a NumPy array
        return lst

    @staticmethod
    def _per_element(ctx: Context, loop: ast.AST) -> bool:
        """A loop over a range or over a tensor (not over a dataset, files, batches)."""
        if type(loop) is not ast.For:
            return False
        return AppendThenStack._per_element_iter(ctx, loop.iter)

    @staticmethod
    def _per_element_iter(ctx: Context, it: ast.AST) -> bool:
        if in_chunks(ctx, it):
            return False  # `range(0, n, batch_size)`: a batch per iteration
        args = range_args(ctx, it)
        if args is not None:
            stop = range_stop(args)
            if type(stop) is ast.Name:  # `n = len(levels)`: follow one assignment
                b = ctx.binding(stop)
                stop = b.value if b is not None and b.kind == "assign" else stop
            if type(stop) is ast.Constant and type(stop.value) is int and stop.value <= 3:
                return False  # `seq_len = 3`: a handful of iterations (tests, demos)
            sized = sized_by(ctx, stop)
            # `range(len(cfg.STRIDES))`: one iteration per item of a Python list (FPN levels).
            return not (sized is not None and sized.how == "len"
                        and measures_list(ctx, sized.obj))
        return ctx.is_tensor_like(it)
