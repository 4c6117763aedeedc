"""TFP704: several session.run calls in every iteration of a loop: one round trip each."""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator

from tfperf.core.findings import Finding
from tfperf.lint.analysis.sessions import (
    SessionRun,
    epoch_loops,
    fetches_update,
    fetches_write,
    session_runs,
    tensor_evals,
)
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
# Statements that run their body conditionally (or not at all): a run inside is not per step.
_CONDITIONAL = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.IfExp, ast.BoolOp,
                ast.ExceptHandler, ast.Match)


def _every_iteration(ctx: Context, call: ast.AST, loop: ast.AST) -> bool:
    """``call`` runs once in every iteration of ``loop`` (no branch or inner loop between)."""
    for p in ctx.ancestors(call):
        if p is loop:
            return True
        if isinstance(p, _CONDITIONAL) or type(p) in (ast.Lambda, ast.ListComp, ast.GeneratorExp,
                                                        ast.DictComp, ast.SetComp):
            return False
    return False


def _item_read(fetch: ast.expr, items: set[str]) -> bool:
    """``fetch`` reads a tensor held by the loop's item, without building anything:
    ``layer.W``, ``vec.means[0]``, ``weights[i]``; not ``v.assign(x)`` (an op per run)."""
    if any(type(n) is ast.Call for n in ast.walk(fetch)):
        return False
    root = fetch
    while type(root) in (ast.Attribute, ast.Subscript):
        root = root.value
    if type(root) is not ast.Name:
        return False
    if root.id in items:
        return True
    # `weights[i]`: indexed by the item itself, not `train_ops[step % 2]` (alternating ops).
    return any(type(sub) is ast.Subscript and type(sub.slice) is ast.Name
               and sub.slice.id in items for sub in ast.walk(fetch))


def _initialises(ctx: Context, run: SessionRun) -> bool:
    """``run`` fetches a variables initializer (``tf.global_variables_initializer()``,
    ``v.initializer``, a name bound to one)."""
    for f in run.fetches:
        value = f
        if type(f) is ast.Name:
            b = ctx.binding(f)
            value = b.value if b is not None and b.kind == "assign" else f
        if type(value) is ast.Attribute and value.attr == "initializer":
            return True
        if type(value) is ast.Call:
            q = ctx.call_qualname(value) or ""
            if q.endswith(("variables_initializer", "initialize_all_variables",
                           "initialize_variables")):
                return True
    return False


def _per_item_run(ctx: Context, run: SessionRun, loop: ast.AST) -> bool:
    """A run with no feed whose fetches are tensors held by the loop's item (a layer's
    weights, one vector's parameters): each iteration only reads another tensor of a list
    the graph already holds, so one run before the loop fetches them all."""
    if run.feed is not None or not run.fetches or type(loop) not in (ast.For, ast.AsyncFor):
        return False
    items = {n.id for n in ast.walk(loop.target) if type(n) is ast.Name}
    return all(_item_read(f, items) for f in run.fetches)


def _read(node: ast.AST) -> set[str]:
    """The names and attribute paths (``self.action``) ``node`` holds."""
    out = set()
    for n in ast.walk(node):
        if type(n) is ast.Name:
            out.add(n.id)
        elif type(n) is ast.Attribute and type(n.value) is ast.Name:
            out.add(f"{n.value.id}.{n.attr}")
    return out


def _leaves(node: ast.AST, loop_depth: int = 0) -> bool:
    """``node`` holds a ``return``, or a ``break`` not inside a loop of its own (an inner
    loop's ``break`` only ends that loop). Not ``raise``: see :func:`_decides_exit`."""
    t = type(node)
    if t is ast.Return or (t is ast.Break and loop_depth == 0):
        return True
    if t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef):
        return False
    inner = loop_depth + (t in (ast.For, ast.AsyncFor, ast.While))
    return any(_leaves(c, inner) for c in ast.iter_child_nodes(node))


def _decides_exit(loop: ast.AST, names: set[str]) -> bool:
    """An ``if`` in ``loop``'s body that reads one of ``names`` leaves the loop (``break``,
    ``return``): the values decide whether another iteration runs. A ``raise`` does not
    count (review 41): it is a guard (`if np.isnan(loss): raise`), and merged with the
    update it fires one step later on the same training, where a ``break`` would run
    another step."""
    def visit(node: ast.AST, depth: int) -> bool:
        t = type(node)
        if t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef):
            return False
        if t is ast.If and _read(node.test) & names \
                and any(_leaves(b, depth) for b in node.body):
            return True
        inner = depth + (t in (ast.For, ast.AsyncFor, ast.While))
        return any(visit(c, inner) for c in ast.iter_child_nodes(node))
    return any(visit(st, 0) for st in getattr(loop, "body", ()))


def _assigned(stmt: ast.AST | None) -> set[str]:
    """What a run's statement stores: ``a, b = run(...)``, ``a: float = run(...)``, and a
    walrus ``(a := run(...))``."""
    if type(stmt) is ast.Assign:
        return {k for t in stmt.targets for k in _stored(t)}
    if type(stmt) in (ast.AnnAssign, ast.NamedExpr):
        return _stored(stmt.target)
    return set()


def _stored(target: ast.AST) -> set[str]:
    """What an assignment to ``target`` changes: ``a, (b, self.c)`` → a, b, self.c;
    ``tally[i]`` → tally (not ``i``, only read)."""
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
        return {f"{target.value.id}.{target.attr}"}
    if isinstance(target, (ast.Tuple, ast.List)):
        return {k for e in target.elts for k in _stored(e)}
    if isinstance(target, (ast.Subscript, ast.Starred, ast.Attribute)):
        return _stored(target.value)
    return set()


class _Derived:
    """The names fetched so far in a loop and every name the loop's body assigns from them,
    through any chain of host computations (``a = np.random.choice(p, p=p)``, ``s, r, d, _ =
    env.step(a)``). Grown one run's fetches at a time: the body is walked once and each
    assignment followed once (a fixed point per run re-walked the body: quadratic)."""

    def __init__(self, loop: ast.AST) -> None:
        self.names: set[str] = set()
        self._steps: list[set[str]] = []
        self._users: dict[str, list[int]] = {}
        for n in ast.walk(loop):
            if isinstance(n, ast.Assign):
                changed, used = {k for t in n.targets for k in _stored(t)}, _read(n.value)
            elif isinstance(n, (ast.AugAssign, ast.AnnAssign, ast.NamedExpr)) \
                    and n.value is not None:
                changed, used = _stored(n.target), _read(n.value)
            elif isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension)):
                changed, used = _stored(n.target), _read(n.iter)
            else:
                continue
            for k in used:
                self._users.setdefault(k, []).append(len(self._steps))
            self._steps.append(changed)

    def add(self, fetched: set[str]) -> None:
        work = [k for k in fetched if k not in self.names]
        self.names.update(work)
        while work:
            for i in self._users.get(work.pop(), ()):
                new = self._steps[i] - self.names
                self.names |= new
                work.extend(new)


class SessionRunsPerStep(Rule):
    code = "TFP704"
    name = "session-runs-per-step"
    message = "several session.run calls in each loop iteration: one host round trip each"
    hint = "fetch everything the step needs in one sess.run([train_op, loss, ...])"
    claims = ("S9",)
    group = "perf"
    node_types = ()
    requires_imports = frozenset({"tensorflow"})
    docs = """\
## What it does
In TF1 graph code, finds loops whose every iteration calls `run` on the same session two or
more times (`sess.run(train_op, feed)` then `sess.run(loss, feed)`, or a read of a variable
next to the training run). Runs under an `if` (every 100 steps) are not counted. Also a loop
over items (`for vec in vectors`, `for i in range(len(weights))`, `enumerate(layers)`) whose
one run per iteration, fed nothing, fetches tensors the item holds (`vec.means[0]`,
`weights[i]`, `layer.kernel`): `sess.run([v.means[0] for v in vectors])` before the loop
reads them all in one round trip.

## Why is this bad?
Each `session.run` is a round trip: Python to the runtime, pruning the graph for the fetches,
feeding the `feed_dict` again (a copy of every fed array), running, and copying the fetches
back. Two runs that share inputs also compute the shared part twice (the forward pass for the
update and again for the loss). One `sess.run([train_op, loss, W], feed_dict=...)` does it all
in one call, the forward pass once.

## Example
```python
for step in range(steps):
    sess.run(train, feed_dict={X: x, Y: y})
    print(step, sess.run(cost, feed_dict={X: x, Y: y}), sess.run(W))
```

## Use instead
```python
for step in range(steps):
    _, cost_val, w_val = sess.run([train, cost, W], feed_dict={X: x, Y: y})
    print(step, cost_val, w_val)
```

## Fix safety
No automatic fix. Merged, the fetches run in one step with no order between them: a loss
fetched with the update is the loss before the update (the separate run saw it after).
Merge where that does not matter (it rarely does for logging).

## Known limitations
`tensor.eval(feed)` counts as a run of its session (the default one unless named); a run
that initialises variables is never merged with the runs after it, which read what it set
(a network measured from a fresh random start each time). Runs on different sessions, runs
in branches or inner loops, and runs in different functions
called from the loop are not counted. Nor are two runs where the second is fed what the first
fetched, or anything the loop computes from it on the host (an action drawn from fetched
probabilities, an environment's reward for it): one run cannot do both. Nor a run that
fetches an op an earlier run fetched (two generator updates per step): one run executes an
op once. Nor a run that fetches a training update (an op built by `minimize` or
`apply_gradients`, one that holds or depends on one, or, built in another module, a name
that says a train op: `d_op`, `g_optim`, `train_step`) after an earlier run fetched another
(a GAN's D then G updates; G then an encoder): the order is the algorithm. Nor a run after
the update whose results an `if` reads to leave the loop (`if kl > 4 * kl_targ: break`, an
early stop on the updated policy's KL; also `loss: float = sess.run(...)` and a walrus in the
test): merged, the test would read the value before the update. An inner loop's `break`
does not leave this loop, and a `raise` (a NaN guard) does not count: merged, the guard
fires one step later on the same training.
"""
    valid = (
        # Held-out precision round 11 (trpo): the KL of the policy the first run just
        # updated decides the early stop; fetched with the update it would be the KL
        # before it, and the stop would lag an epoch.
        Valid("""
            import tensorflow as tf
            def update(self, feed_dict, epochs=20):
                for e in range(epochs):
                    self.sess.run(self.train_op, feed_dict)
                    loss, kl, entropy = self.sess.run([self.loss, self.kl, self.entropy],
                                                      feed_dict)
                    if kl > self.kl_targ * 4:
                        break
        """, spelling="name: fetched after the update to stop on it"),
        # Review 41: the early stop's value through an annotated assignment.
        Valid("""
            import tensorflow as tf
            def fit(sess, step_op, cost, feed, steps):
                for k in range(steps):
                    sess.run(step_op, feed)
                    cost_v: float = sess.run(cost, feed)
                    if cost_v < 0.01:
                        break
        """, spelling="name: annotated, fetched after the update to stop on it"),
        # Two runs per epoch (a learning-rate assign, the initial state) around the loop of
        # steps: once per epoch, not per step (char-rnn's train.py).
        Valid("""
            import tensorflow as tf
            with tf.Session() as sess:
                for e in range(50):
                    sess.run(tf.assign(model.lr, 0.002 * 0.97 ** e))
                    state = sess.run(model.initial_state)
                    for b in range(num_batches):
                        loss, state, _ = sess.run([model.cost, model.final_state, train],
                                                  feed_dict={model.initial_state: state})
        """),
        Valid("""
            import tensorflow as tf
            with tf.Session() as sess:
                for step in range(1000):
                    _, loss_val = sess.run([train, loss], feed_dict={x: xs})
        """),
        # The same train op run twice in a step (two generator updates per discriminator
        # update): one run would execute it once; the counter run alone is one cheap op.
        Valid("""
            import tensorflow as tf
            with tf.Session() as sess:
                for it in range(max_it):
                    sess.run([g_step], feed_dict={z: z_ipt})
                    g_summary_opt, _ = sess.run([g_summary, g_step], feed_dict={z: z_ipt})
        """, spelling="loop: the same op run twice"),
        # The second run happens every 100 steps only.
        Valid("""
            import tensorflow as tf
            sess = tf.Session()
            for step in range(1000):
                sess.run(train, feed_dict={x: xs})
                if step % 100 == 0:
                    print(sess.run(loss, feed_dict={x: xs}))
        """),
        # One run per iteration of each of two loops.
        Valid("""
            import tensorflow as tf
            sess = tf.Session()
            for step in range(1000):
                sess.run(train)
            for batch in test_batches:
                print(sess.run(acc, feed_dict={x: batch}))
        """),
        # Training feed and test feed: one run cannot feed a placeholder two values.
        Valid("""
            import tensorflow as tf
            sess = tf.Session()
            for epoch in range(10):
                sess.run(train, feed_dict={x: x_train, y: y_train})
                print(sess.run(acc, feed_dict={x: x_test, y: y_test}))
        """),
        # The second run is fed what the first fetched (a queue, then the model).
        Valid("""
            import tensorflow as tf
            sess = tf.Session()
            while True:
                xb, yb = sess.run([images, labels])
                k = sess.run(net_k, feed_dict={x_ph: xb})
        """),
        # The second run's feeds are computed on the host from the first run's fetches: an
        # action drawn from fetched probabilities, the reward a bandit pays for it (held-out
        # precision round 2, awjuliani's Simple-Policy): one run cannot do both.
        Valid("""
            import numpy as np
            import tensorflow as tf
            with tf.Session() as sess:
                i = 0
                while i < 1000:
                    actions = sess.run(output)
                    a = np.random.choice(actions, p=actions)
                    action = np.argmax(actions == a)
                    reward = pull_bandit(arms[action])
                    sess.run([update, weights],
                             feed_dict={reward_holder: [reward], action_holder: [action]})
                    total[action] += reward
                    i += 1
        """, spelling="loop: while, names"),
        # An environment step between them (TF1 DQN): the next state and the reward.
        Valid("""
            import tensorflow as tf
            sess = tf.Session()
            for t in range(10000):
                feed = {s_ph: [obs]}
                q = sess.run(q_out, feed_dict=feed)
                obs, r, done, _ = env.step(q.argmax())
                feed[r_ph] = [r]
                sess.run(train_op, feed_dict=feed)
        """, spelling="loop: for, tuple unpacking, one feed dict"),
        # Through attributes and a comprehension.
        Valid("""
            import tensorflow as tf
            class Agent:
                def learn(self, batches):
                    for batch in batches:
                        self.q_next = self.sess.run(self.q_target)
                        targets = [r + 0.9 * q.max() for r, q in zip(rewards, self.q_next)]
                        self.sess.run(self.train, feed_dict={self.y: targets})
        """, spelling="name: self attribute, comprehension"),
        # Two different sessions (two graphs).
        Valid("""
            import tensorflow as tf
            for step in range(10):
                actor_sess.run(act)
                critic_sess.run(learn)
        """),
        # Issue 25's spellings (eighth pass): the twins of the per-item runs below. Each
        # item is a batch fed to the same fetch: one run cannot feed them all.
        Valid("""
            import tensorflow as tf
            with tf.Session() as sess:
                for xb in batches:
                    print(sess.run(loss, feed_dict={x: xb}))
        """, spelling="loop: for over items, fed"),
        # Alternating training ops (a GAN's two updates): ordered, not a list read once.
        Valid("""
            import tensorflow as tf
            with tf.Session() as sess:
                for step in range(1000):
                    sess.run(train_ops[step % 2])
        """, spelling="index: alternating ops"),
        # Each item builds an op (an assign): TFP703's question, not a tensor to read.
        Valid("""
            import tensorflow as tf
            def reset(sess, layers):
                for layer in layers:
                    w = layer.kernel
                    sess.run(tf.compat.v1.assign(w, tf.zeros_like(w)))
        """, spelling="name: an op built per item"),
        Valid("""
            from helpers import evaluate
            def run(sess, batches):
                return evaluate(sess, batches)
        """, files={"helpers.py": """
            import tensorflow as tf
            def evaluate(sess, batches):
                return [sess.run(acc, feed_dict={x: b}) for b in batches]
        """}, spelling="module"),
        Valid("""
            import tensorflow as tf
            sess = tf.Session()
            # %%
            values = sess.run([layer.kernel for layer in layers])
        """, notebook=True, spelling="notebook"),
        # Stop 39 wave 2 (held-out precision round 9, a GAN collection): one network's update,
        # then another's. Ordered on purpose (G's step reads the D that D's step moved);
        # merged, they would be simultaneous: another training algorithm.
        Valid("""
            import tensorflow as tf
            d_op = tf.train.AdamOptimizer(2e-4).minimize(d_loss, var_list=d_vars)
            g_op = tf.train.AdamOptimizer(2e-4).minimize(g_loss, var_list=g_vars)
            with tf.Session() as sess:
                for step in range(1000):
                    _, d_val = sess.run([d_op, d_loss], feed_dict={x: xs, z: zs})
                    _, g_val = sess.run([g_op, g_loss], feed_dict={z: zs})
        """, spelling="loop: D then G updates"),
        Valid("""
            import tensorflow as tf
            opt = tf.train.AdamOptimizer(2e-4)
            train_ops = [opt.minimize(d_loss, var_list=d_vars),
                         opt.minimize(g_loss, var_list=g_vars)]
            with tf.Session() as sess:
                for step in range(1000):
                    sess.run(train_ops[0], feed_dict={x: xs, z: zs})
                    sess.run(train_ops[1], feed_dict={x: xs, z: zs})
        """, spelling="index: train ops in a list"),
        Valid("""
            import tensorflow as tf
            class GAN:
                def build(self):
                    self.d_optim = tf.train.AdamOptimizer(2e-4).minimize(self.d_loss)
                    with tf.control_dependencies([self.g_optim_raw]):
                        self.g_train = tf.identity(self.g_loss)
                    self.g_optim_raw = tf.train.AdamOptimizer(2e-4).minimize(self.g_loss)
                def train(self, batches):
                    for xs, zs in batches:
                        self.sess.run(self.d_optim, feed_dict={self.x: xs, self.z: zs})
                        self.sess.run(self.g_train, feed_dict={self.x: xs, self.z: zs})
        """, spelling="name: self.d_optim, an op depending on G's update"),
        Valid("""
            import tensorflow as tf
            from model import GAN
            model = GAN()
            with tf.Session() as s:
                for step in range(1000):
                    _, d_loss = s.run([model.d_op, model.d_loss], feed_dict={model.x: xs})
                    _, g_loss = s.run([model.g_op, model.g_loss], feed_dict={model.x: xs})
        """, files={"model.py": """
            import tensorflow as tf
            class GAN:
                def __init__(self):
                    self.d_op = tf.train.AdamOptimizer(2e-4).minimize(self.d_loss)
                    self.g_op = tf.train.AdamOptimizer(2e-4).minimize(self.g_loss)
        """}, spelling="module"),
        Valid("""
            import tensorflow as tf
            sess = tf.Session()
            # %%
            for step in range(1000):
                sess.run([g_step_op, g_loss], feed_dict={x: xs})
                sess.run([e_step_op, e_loss], feed_dict={x: xs})
        """, notebook=True, spelling="notebook"),
        # Stop 41 review (precision round 12's false TFP704, a TF intro notebook): two
        # variable writes in turn, the second reading what the first wrote; one run would
        # leave their order undefined and change the running total.
        Valid("""
            import tensorflow as tf
            with tf.Session() as sess:
                acc = tf.Variable(tf.zeros([3]))
                w = tf.Variable(tf.ones([3]))
                sess.run(tf.global_variables_initializer())
                new_w = tf.assign(w, tf.random_normal([3]))
                grow = acc.assign_add(w * 2.0)
                for _ in range(10):
                    sess.run(new_w)
                    sess.run(grow)
        """, spelling="name: two writes in turn"),
        # A target network copied after the training step: ordered as the GAN's two updates.
        Valid("""
            import tensorflow as tf
            def learn(sess, train_op, online, target, feeds):
                copy = tf.group(*[t.assign(o) for t, o in zip(target, online)])
                for feed in feeds:
                    sess.run(train_op, feed_dict=feed)
                    sess.run(copy)
        """, spelling="loop: a copy after the update"),
    )
    invalid = (
        # The twin of "two writes in turn": a write, then only reads (the update's value
        # logged), as hunkim's lab 3 below.
        Invalid("""
            import tensorflow as tf
            with tf.Session() as sess:
                acc = tf.Variable(tf.zeros([3]))
                w = tf.Variable(tf.ones([3]))
                sess.run(tf.global_variables_initializer())
                grow = acc.assign_add(w * 2.0)
                for _ in range(10):
                    sess.run(grow)
                    print(sess.run(acc))
        """, count=1, lines=(9,), spelling="name: a write, then a read"),
        # Stop 41, the twin of the KL early stop below: the values fetched after the update
        # are only logged, no test leaves the loop on them.
        Invalid("""
            import tensorflow as tf
            def update(sess, train_op, loss, kl, feed, epochs):
                for e in range(epochs):
                    sess.run(train_op, feed)
                    loss_v, kl_v = sess.run([loss, kl], feed)
                    print(e, loss_v, kl_v)
        """, count=1, lines=(5,), spelling="name: fetched after the update, only logged"),
        # hunkim/DeepLearningZeroToAll's lab 3 (three runs per step).
        Invalid("""
            import tensorflow as tf
            sess = tf.Session()
            for step in range(21):
                sess.run(update, feed_dict={X: x_data, Y: y_data})
                print(step, sess.run(cost, feed_dict={X: x_data, Y: y_data}), sess.run(W))
        """, count=1, lines=(5,)),
        # Review 41: a `break` of an inner loop and a NaN guard's `raise` do not leave the
        # loop of steps (the twins of the early stop above).
        Invalid("""
            import numpy as np
            import tensorflow as tf
            def fit(sess, step_op, cost, acc, feed, steps, levels):
                for k in range(steps):
                    sess.run(step_op, feed)
                    cost_v, acc_v = sess.run([cost, acc], feed)
                    if acc_v > 0.5:
                        for lv in levels:
                            if lv > acc_v:
                                break
                    if np.isnan(cost_v):
                        raise ValueError("diverged")
        """, count=1, lines=(6,), spelling="loop: an inner loop's break, a NaN guard"),
        Invalid("""
            import tensorflow.compat.v1 as tf
            with tf.Session() as sess:
                for step in range(2001):
                    print(step, sess.run(W))
                    sess.run(train)
        """, count=1, lines=(5,)),
        # A method on self.sess, in a while loop.
        Invalid("""
            import tensorflow as tf
            class Agent:
                def learn(self, batches):
                    while batches:
                        b = batches.pop()
                        self.sess.run(self.train_op, feed_dict={self.x: b})
                        self.sess.run(self.update_target)
        """, count=1, lines=(7,)),
        # The VALIDs' twins: the host computes from the fetches, but not what is fed.
        Invalid("""
            import numpy as np
            import tensorflow as tf
            with tf.Session() as sess:
                i = 0
                while i < 1000:
                    actions = sess.run(output, feed_dict={x: xs})
                    a = np.random.choice(actions, p=actions)
                    sess.run(update, feed_dict={x: xs})
                    total[a] += 1
                    i += 1
        """, count=1, lines=(8,), spelling="loop: while, names"),
        Invalid("""
            import tensorflow as tf
            class Agent:
                def learn(self, batches):
                    for batch in batches:
                        self.loss_val = self.sess.run(self.loss, feed_dict={self.s: batch})
                        history = [l * 2 for l in [self.loss_val]]
                        self.sess.run(self.train, feed_dict={self.s: batch})
        """, count=1, lines=(7,), spelling="name: self attribute, comprehension"),
        # Issue 25's spellings (eighth pass): one run per item of a list of tensors the graph
        # already holds (a layer's weights, a vector's parameters), read back one by one.
        Invalid("""
            import tensorflow as tf
            def export(sess, vectors):
                nodes = []
                for vec in vectors:
                    means, sigmas = sess.run([vec.means[0], vec.sigma[0]])
                    nodes.append((means, sigmas))
                return nodes
        """, count=1, lines=(5,), spelling="loop: for over items"),
        Invalid("""
            import tensorflow as tf
            def export(sess, weights):
                out = []
                for i in range(len(weights)):
                    out.append(sess.run(weights[i]))
                return out
        """, count=1, lines=(5,), spelling="index: weights[i]"),
        Invalid("""
            import tensorflow as tf
            def export(sess, layers):
                for i, layer in enumerate(layers):
                    w = sess.run(layer.kernel)
                    save(i, w)
        """, count=1, lines=(4,), spelling="name: enumerate, saved per item"),
        Invalid("""
            from helpers import export
            def run(sess, layers):
                return export(sess, layers)
        """, files={"helpers.py": """
            import tensorflow as tf
            def export(sess, layers):
                return {layer.name: read(sess, layer) for layer in layers}
            def read(sess, layer):
                out = []
                for v in layer.variables:
                    out.append(sess.run(v))
                return out
        """}, count=1, spelling="module"),
        # The GAN twins: an update and a read (or an op that is not a train op) merge.
        Invalid("""
            import tensorflow as tf
            d_op = tf.train.AdamOptimizer(2e-4).minimize(d_loss, var_list=d_vars)
            g_op = tf.train.AdamOptimizer(2e-4).minimize(g_loss, var_list=g_vars)
            with tf.Session() as sess:
                for step in range(1000):
                    sess.run([d_op, d_loss], feed_dict={x: xs, z: zs})
                    sess.run([g_op, g_loss], feed_dict={z: zs})
                    k_val = sess.run([k_update, k], feed_dict={x: xs, z: zs})
        """, count=1, lines=(8,), spelling="loop: D then G updates, then a balance update"),
        Invalid("""
            import tensorflow as tf
            class GAN:
                def build(self):
                    self.d_optim = tf.train.AdamOptimizer(2e-4).minimize(self.d_loss)
                def train(self, batches):
                    for xs, zs in batches:
                        self.sess.run(self.d_optim, feed_dict={self.x: xs, self.z: zs})
                        self.sess.run(self.d_loss_sum, feed_dict={self.x: xs, self.z: zs})
        """, count=1, lines=(8,), spelling="name: self.d_optim, then a summary"),
        Invalid("""
            import tensorflow as tf
            sess = tf.Session()
            # %%
            for layer in layers:
                print(layer.name, sess.run(layer.kernel).shape)
        """, count=1, notebook=True, spelling="notebook"),
    )

    # Stop 46, wave 2 (precision round 15): `tensor.eval(feed)` is a session run too
    # (pix2pix's three losses evaluated per step on one batch: a miss); a run that
    # initialises variables before a run that reads them is ordered on purpose (WaveGAN's
    # response measured from a fresh random start each time: was false).
    invalid = (  # type: ignore[assignment]
        *invalid,
        Invalid("""
            import tensorflow as tf
            class GAN:
                def train(self, batches):
                    for batch in batches:
                        self.sess.run(self.g_optim, feed_dict={self.real: batch})
                        err_fake = self.d_loss_fake.eval({self.real: batch})
                        err_real = self.d_loss_real.eval({self.real: batch})
                        err_g = self.g_loss.eval({self.real: batch})
                        print(err_fake + err_real, err_g)
            sess = tf.Session()
        """, count=1, lines=(7,), spelling="name: tensor.eval(feed) per step"),
    )
    valid = (  # type: ignore[assignment]
        *valid,
        Valid("""
            import numpy as np
            import tensorflow as tf
            saver = tf.train.import_meta_graph("g.meta")
            with tf.Session() as sess:
                outputs = []
                for i in range(1000):
                    sess.run(tf.global_variables_initializer())
                    outputs.append(sess.run(feat, {z: np.zeros((1, 100))}))
        """, spelling="loop: initialised afresh, then measured"),
        Valid("""
            import tensorflow as tf
            from keras import backend as K
            sess = tf.Session()
            for batch in batches:
                sess.run(train_op, feed_dict={x: batch})
                print(K.eval(loss))
        """, spelling="name: Keras's eval function"),
    )

    @staticmethod
    def _mergeable(ctx: Context, runs: list[SessionRun], loop: ast.AST) -> list[SessionRun]:
        """The largest set of ``runs`` one run could do: each feeds nothing or the same
        feed_dict as the others (one placeholder cannot take two values in one run), and none
        feeds what an earlier one fetched, or a value the host computed from it in the loop
        (an action drawn from fetched probabilities, the reward an environment gave for it)."""
        runs = sorted(runs, key=lambda r: (r.call.lineno, r.call.col_offset))
        derived = _Derived(loop)
        ran: set[str] = set()
        updated = False
        usable = []
        for r in runs:
            if _initialises(ctx, r):
                # variables set afresh, then read by the runs after it (a network measured
                # from a new random start each time): one run would leave the order undefined
                continue
            if r.feed is not None and _read(r.feed) & derived.names:
                break  # fed from an earlier run's result: needs that run first
            this = {ctx.source_of(f) for f in r.fetches}
            if this & ran:
                break  # the same op again (a second generator update): one run does it once
            # A training update or an explicit variable write (`tf.assign`, a target copy):
            # state that a later run of the iteration reads.
            writes = fetches_update(ctx, r) or fetches_write(ctx, r)
            if writes:
                if updated:
                    # a second update or write after the first's (a GAN's D then G; a
                    # target copy after the step; `w` set, then `total += w`): ordered on
                    # purpose; one run would leave their order undefined
                    continue
                updated = True
            stmt = ctx.parent(r.call)
            if updated and not writes and _decides_exit(loop, _assigned(stmt)):
                # fetched after the update to stop on it (a KL early stop: `if kl > 4 *
                # target: break`): merged, the test would read the value before the update
                continue
            ran |= this
            usable.append(r)
            if type(stmt) is ast.Assign:
                derived.add({k for t in stmt.targets for k in _stored(t)})
        # in the runs' order, so a tie goes to the first feed, whatever the hash seed
        feeds = list(dict.fromkeys(ctx.source_of(r.feed) for r in usable
                                   if r.feed is not None))
        best = max(feeds, key=lambda f: sum(ctx.source_of(r.feed) == f for r in usable
                                            if r.feed is not None), default=None)
        return [r for r in usable if r.feed is None or ctx.source_of(r.feed) == best]

    def check_module(self, ctx: Context) -> Iterator[Finding]:
        by_loop: dict[tuple[int, str], list[SessionRun]] = defaultdict(list)
        loops = {}
        for run in [*session_runs(ctx), *tensor_evals(ctx)]:
            if run.saver is not None:
                continue
            enclosing = [lp for lp in ctx.enclosing_loops(run.call) if type(lp) in _LOOPS]
            if enclosing and id(enclosing[0]) in epoch_loops(ctx):
                continue  # once per epoch, around the loop of steps
            if enclosing and _every_iteration(ctx, run.call, enclosing[0]):
                key = (id(enclosing[0]), run.session)
                by_loop[key].append(run)
                loops[key] = enclosing[0]
        for key, runs in by_loop.items():
            if len(runs) == 1 and _per_item_run(ctx, runs[0], loops[key]):
                what = "tensor.eval()" if runs[0].call.func.attr == "eval" \
                    else f"{runs[0].session}.run"
                yield self.finding(
                    ctx, runs[0].call,
                    f"{what} once per item of the loop, each fetching a tensor "
                    "the item holds: one run before the loop can fetch them all")
                continue
            runs = self._mergeable(ctx, runs, loops[key])
            if len(runs) < 2:
                continue
            if all(r.call.func.attr == "eval" for r in runs):
                yield self.finding(
                    ctx, runs[1].call,
                    f"{len(runs)} .eval() calls in each loop iteration: one session run and "
                    "host round trip each (and shared work done again)")
                continue
            calls = ".run/.eval()" if any(r.call.func.attr == "eval" for r in runs) else ".run"
            yield self.finding(
                ctx, runs[1].call,
                f"{len(runs)} {runs[0].session}{calls} calls in each loop iteration: one host "
                "round trip each (and shared work done again)")
