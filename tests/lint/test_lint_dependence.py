"""Loop-carried data flow (analysis/dependence.py): recurrences vs reductions vs names
re-bound inside the same iteration, on the shapes issue 18 judged false."""

from __future__ import annotations

import ast
import textwrap

from tfperf.lint.analysis.dependence import depends_on, loop_flow, read_elsewhere
from tfperf.lint.semantic import Context


def _flow(src: str):
    src = textwrap.dedent(src)
    tree = ast.parse(src)
    ctx = Context(tree, src)
    loop = next(n for n in ast.walk(tree) if type(n) in (ast.For, ast.While))
    return ctx, loop, loop_flow(ctx, loop)


def test_hand_unrolled_rnn_is_a_recurrence():
    ctx, loop, flow = _flow("""
        import tensorflow as tf
        outputs = []
        for t in range(x.shape[1]):
            out, h = cell(x[:, t], h)
            outputs.append(out)
    """)
    assert flow.recurrent == {"h"}
    append = loop.body[1].value
    assert flow.depends_on_recurrence(ctx, append.args[0])


def test_running_sum_and_max_are_reductions_not_recurrences():
    _, _, flow = _flow("""
        import tensorflow as tf
        for i in range(x.shape[0]):
            total += x[i]
            best = tf.maximum(best, x[i])
            n = n + 1
    """)
    assert flow.carried == {"total", "best", "n"}
    assert flow.recurrent == frozenset()


def test_name_rebound_before_its_read_is_not_carried():
    _, _, flow = _flow("""
        import tensorflow as tf
        for i in range(n):
            row = xs[i]
            row = tf.concat([row, pad], 0)
            if row.shape[0] > 2:
                y = row
            else:
                y = -row
            out.append(y * 2)
    """)
    assert flow.carried == frozenset() and flow.recurrent == frozenset()


def test_binding_in_one_branch_only_is_carried_and_a_raising_branch_does_not_count():
    _, _, flow = _flow("""
        for d in range(k):
            if a:
                L = f(d)
                LTA = g(L)
            elif b:
                LTA = h(d)
            else:
                raise ValueError(d)
            if c:
                prev = LTA
            out.append(use(LTA, prev))
    """)
    assert flow.carried == {"prev"}


def test_layers_feeding_each_other_and_a_sum_that_reads_itself_elsewhere():
    _, _, flow = _flow("""
        for i in range(n):
            x = layers[i](x)
            acc = acc + x
            log(acc)
    """)
    assert flow.recurrent == {"x", "acc"}


def test_grown_tensor_read_elsewhere_but_not_for_its_shape():
    src = textwrap.dedent("""
        import tensorflow as tf
        while tokens.shape[1] < n:
            nxt = step(tokens)
            tokens = tf.concat([tokens, nxt], 1)
        while samples.shape[0] < n:
            samples = tf.concat([samples, draw()], 0)
    """)
    tree = ast.parse(src)
    ctx = Context(tree, src)
    first, second = [n for n in tree.body if type(n) is ast.While]
    assert read_elsewhere(ctx, first, "tokens", [first.body[1]])
    assert not read_elsewhere(ctx, second, "samples", [second.body[0]])


def test_depends_on_follows_names_bound_in_the_body():
    ctx, loop, _ = _flow("""
        for k in range(1, d):
            half = k / 2.
            eff = c + half
            ans = ans + lgamma(eff)
            other = ans + z
    """)
    assert depends_on(ctx, loop, loop.body[2].value, {"k"})
    assert not depends_on(ctx, loop, ast.parse("z + c").body[0].value, {"k"})


def _ctx(src: str):
    src = textwrap.dedent(src)
    tree = ast.parse(src)
    return Context(tree, src), tree


def _value(tree, name):
    return next(n.value for n in ast.walk(tree) if type(n) is ast.Assign
                and type(n.targets[0]) is ast.Name and n.targets[0].id == name)


def test_lists_of_tensors_are_not_tensors_but_their_items_are():
    ctx, tree = _ctx("""
        import tensorflow as tf
        x = tf.ones([4, 8])
        heads = tf.split(x, 4, axis=1)
        grads = tf.gradients(tf.reduce_sum(x), [x])
        tvars = tf.compat.v1.trainable_variables()
        rets = tf.scan(lambda a, i: [a[0], a[1]], tf.range(3), [0., 1.])
        a, b = tf.split(x, 2)
        first = heads[0]
        rows = tf.unstack(x)
        coords = tf.unstack(x, None, axis=-1)
        steps = tf.unstack(x, num=8, axis=1)
        text = tf.compat.as_text(b"abc")
        use = a
    """)
    for name in ("heads", "grads", "tvars", "rets", "coords", "steps"):
        assert ctx.is_tensor_list(_value(tree, name)), name
        assert not ctx.is_tensor_like(_value(tree, name)), name
    assert ctx.is_tensor_like(_value(tree, "first"))
    assert ctx.is_tensor_like(_value(tree, "rows"))  # unstack: one tensor per row
    assert not ctx.is_tensor_like(_value(tree, "text"))  # a pure-Python helper
    assert ctx.is_tensor_like(_value(tree, "use"))  # `a, b = tf.split(...)`: each a tensor
