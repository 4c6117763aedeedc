"""TFP116: one gradient (or ``minimize``) per loss term on the same variables, then summed,
where one gradient of the summed loss gives the same in one backward pass."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from tfperf.core.findings import Finding
from tfperf.lint.analysis.syntax import keyword, method_call
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

_ADDERS = frozenset({"tensorflow.add_n", "tensorflow.math.add_n", "tensorflow.add",
                     "tensorflow.math.add"})
_GRADIENTS = frozenset({"tensorflow.gradients", "tensorflow.compat.v1.gradients"})
_STMTS = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Return, ast.For)


def _args(call: ast.Call, first: str, second: str) -> tuple[Any, Any]:
    a = call.args[0] if call.args else keyword(call, first)
    b = call.args[1] if len(call.args) > 1 else keyword(call, second)
    return a, b


def _names_in(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if type(n) is ast.Name}


def _adds(ctx: Context, node: ast.AST) -> bool:
    """``node`` adds things: ``a + b``, ``+=``, ``tf.add_n``, ``sum(...)``."""
    for n in ast.walk(node):
        if type(n) is ast.BinOp and type(n.op) is ast.Add:
            return True
        if type(n) is ast.AugAssign and type(n.op) is ast.Add:
            return True
        if type(n) is ast.Call and (ctx.call_qualname(n) in _ADDERS or (
                type(n.func) is ast.Name and n.func.id == "sum")):
            return True
    return False


def _summed(ctx: Context, scope: ast.AST, names: set[str], need: int) -> bool:
    """A statement of ``scope`` reads ``need`` or more of ``names`` and adds: the gradients
    are summed (``[a + b for a, b in zip(g1, g2)]``, ``tf.add_n(grads)``)."""
    for stmt in ast.walk(scope):
        if not isinstance(stmt, _STMTS):
            continue
        read = stmt.iter if type(stmt) is ast.For else stmt
        if len(_names_in(read) & names) >= need and _adds(ctx, stmt):
            return True
    return False


def _bound_name(ctx: Context, call: ast.AST) -> str | None:
    """The name a call's result (or the comprehension around it) is assigned to."""
    node: Any = call
    p: Any = ctx.parent(node)
    if type(p) in (ast.ListComp, ast.GeneratorExp) and p.elt is node:
        node, p = p, ctx.parent(p)
    if type(p) is ast.Assign and len(p.targets) == 1 and type(p.targets[0]) is ast.Name:
        return str(p.targets[0].id)
    return None


def _is_tape(ctx: Context, recv: Any) -> bool:
    """``recv`` names a ``tf.GradientTape`` (bound by ``with ... as``, or assigned)."""
    if type(recv) is not ast.Name:
        return False
    b = ctx.binding(recv)
    if b is None:
        return False
    return b.kind in ("with", "assign") and b.value is not None \
        and ctx.is_call_to(b.value, "tensorflow.GradientTape")


class GradientPerLossTerm(Rule):
    code = "TFP116"
    name = "gradient-per-loss-term"
    message = ("one gradient per loss term on the same variables, then summed: a backward "
               "pass each")
    hint = ("sum the terms first and take one gradient: "
            "tape.gradient(loss_a + loss_b, variables)")
    claims = ("S12",)
    group = "preview"  # new (issue 25, stop 38's per-term gradient misses): unjudged
    node_types = ()
    needs_tf = True
    docs = """\
## What it does
Finds, in one function (or module level):
- two or more `tape.gradient(term, variables)` calls (a `tf.GradientTape`), or TF1's
  `tf.gradients(term, variables)`, with the same `variables` written alike and different
  terms, whose results are then added (`a + b`, `+=`, `tf.add_n`, `sum`);
- `tape.gradient(term, variables)` in a loop or comprehension over loss terms (`variables`
  not depending on the loop), its results added;
- two or more `opt.minimize(term, var_list)` of the same optimizer with the same `var_list`
  written alike in one function, not in different branches of an `if` (without `var_list`
  each loss reaches its own variables: two models compared side by side are left alone), and
  not assigned (TF1's `op = opt.minimize(...)` builds a train op: a pre-training op and a
  training op on the same variables are run apart, by the session runs).

## Why is this bad?
Each `gradient` call runs a backward pass through everything its term depends on: for terms
of one forward pass (a task loss and an auxiliary loss of one network) that is the network's
backward pass once per term. The gradient is linear: the sum of the terms' gradients is the
gradient of the summed loss, one backward pass. Each `minimize` also applies an update, so a
second one steps from weights the first one moved. Measured with
`benchmarks/lint_fixes/rule_claims.py --cases TFP116` on TF 2.21 CPU here (three terms of a
two-layer network): see docs/lint.md "Stop 39, pass A".

## Example
```python
with tf.GradientTape(persistent=True) as tape:
    out = model(x)
    task, aux = task_loss(y, out), aux_loss(out)
g_task = tape.gradient(task, model.trainable_variables)
g_aux = tape.gradient(aux, model.trainable_variables)
opt.apply_gradients(zip([a + b for a, b in zip(g_task, g_aux)], model.trainable_variables))
```

## Use instead
```python
with tf.GradientTape() as tape:
    out = model(x)
    loss = task_loss(y, out) + aux_loss(out)
grads = tape.gradient(loss, model.trainable_variables)
opt.apply_gradients(zip(grads, model.trainable_variables))
```

## Fix safety
No automatic fix: summation order changes the result in the last bits, and the terms may
need their own scale.

## Known limitations
Preview: no finding on the user code read in stop 39 (its first form, `minimize` without
`var_list`, gave 6 false findings on two models compared side by side and on separate
examples in one file: now left out). Per-term gradients that are combined otherwise than by a sum
(clipped, projected as in gradient surgery, logged apart) are left alone, as are terms taken
with respect to different variables (a GAN's two networks) and `minimize` calls in different
branches (stages of training).
"""
    _TAPE = """
            import tensorflow as tf
            opt = tf.keras.optimizers.Adam()
    """
    valid = (
        Valid(_TAPE + """
            with tf.GradientTape() as tape:
                out = model(x)
                loss = task_loss(y, out) + aux_loss(out)
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
        """, spelling="index: one gradient"),
        # A GAN: each loss's gradient on its own network.
        Valid(_TAPE + """
            with tf.GradientTape() as gt, tf.GradientTape() as dt:
                fake = gen(z)
                g_loss, d_loss = gen_loss(disc(fake)), disc_loss(disc(x), disc(fake))
            g_grads = gt.gradient(g_loss, gen.trainable_variables)
            d_grads = dt.gradient(d_loss, disc.trainable_variables)
            variables = gen.trainable_variables + disc.trainable_variables
            opt.apply_gradients(zip(g_grads + d_grads, variables))
        """, spelling="name: different variables"),
        # Gradient surgery: the per-task gradients are projected, not summed.
        Valid(_TAPE + """
            with tf.GradientTape(persistent=True) as tape:
                losses = [task_loss(y, model(x)) for task_loss in task_losses]
            grads = [tape.gradient(loss, model.trainable_variables) for loss in losses]
            opt.apply_gradients(zip(project_conflicts(grads), model.trainable_variables))
        """, spelling="loop: projected"),
        Valid("""
            import tensorflow as tf
            from losses import total
            with tf.GradientTape() as tape:
                loss = total(model, x, y)
            opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables),
                                    model.trainable_variables))
        """, files={"losses.py": """
            def total(model, x, y):
                out = model(x)
                return task_loss(y, out) + aux_loss(out)
        """}, spelling="module"),
        # TF1: the generator's and the critic's gradients, each on its own variables.
        Valid("""
            import tensorflow.compat.v1 as tf
            g_grads = tf.gradients(g_loss, g_vars)
            d_grads = tf.gradients(d_loss, d_vars)
            train_op = opt.apply_gradients(zip(g_grads + d_grads, g_vars + d_vars))
        """),
        Valid(_TAPE + """
            # %%
            for x, y in ds:
                if stage == 1:
                    opt.minimize(lambda: task_loss(y, model(x)), model.trainable_variables)
                else:
                    opt.minimize(lambda: aux_loss(model(x)), model.trainable_variables)
        """, notebook=True, spelling="notebook"),
        # TF1, the loss by keyword (crashed TFP116 before stop 39 wave 2): one update per
        # branch of an ``if``, alternatives, not both run.
        Valid("""
            import tensorflow.compat.v1 as tf
            class Model:
                def build(self, detect):
                    if detect:
                        self.op = tf.train.AdamOptimizer(1e-4).minimize(
                            loss=self.ano_loss, var_list=self.g_vars)
                    else:
                        self.op = tf.train.AdamOptimizer(1e-4).minimize(
                            loss=self.g_loss, var_list=self.g_vars)
        """),
        # TF1: a pre-training op and a training op on the generator's variables, each run
        # in its own phase by the session runs.
        Valid("""
            import tensorflow.compat.v1 as tf
            def build(self):
                self.g_op = tf.train.AdamOptimizer(1e-4).minimize(loss=self.g_loss,
                                                                  var_list=self.g_vars)
                self.g_init_op = tf.train.AdamOptimizer(1e-4).minimize(
                    loss=self.g_content_loss, var_list=self.g_vars)
        """),
    )
    invalid = (
        Invalid(_TAPE + """
            with tf.GradientTape(persistent=True) as tape:
                out = model(x)
                task, aux = task_loss(y, out), aux_loss(out)
            g_task = tape.gradient(task, model.trainable_variables)
            g_aux = tape.gradient(aux, model.trainable_variables)
            grads = [a + b for a, b in zip(g_task, g_aux)]
            opt.apply_gradients(zip(grads, model.trainable_variables))
        """, count=1, lines=(7,), spelling="index: two gradients"),
        Invalid(_TAPE + """
            @tf.function
            def step(x, y):
                with tf.GradientTape(persistent=True) as tape:
                    out = model(x)
                    losses = [task_loss(y, out), aux_loss(out), l2(model)]
                grads = [tape.gradient(loss, model.trainable_variables) for loss in losses]
                total = [tf.add_n(gs) for gs in zip(*grads)]
                opt.apply_gradients(zip(total, model.trainable_variables))
        """, count=1, lines=(9,), spelling="loop: comprehension over the terms"),
        Invalid(_TAPE + """
            def step(x, y):
                variables = model.trainable_variables
                with tf.GradientTape(persistent=True) as tape:
                    out = model(x)
                    recon = tf.reduce_mean((out - x) ** 2)
                    kl = kl_loss(model.z_mean, model.z_log_var)
                grads = tape.gradient(recon, variables)
                kl_grads = tape.gradient(kl, variables)
                for i in range(len(grads)):
                    grads[i] += kl_grads[i]
                opt.apply_gradients(zip(grads, variables))
        """, count=1, lines=(10,), spelling="name: variables through a name"),
        Invalid("""
            import tensorflow as tf
            from losses import task_loss, aux_loss
            opt = tf.keras.optimizers.Adam()
            for x, y in ds:
                opt.minimize(lambda: task_loss(y, model(x)), model.trainable_variables)
                opt.minimize(lambda: aux_loss(model(x)), model.trainable_variables)
        """, files={"losses.py": """
            import tensorflow as tf
            def task_loss(y, out):
                return tf.reduce_mean((out - y) ** 2)
            def aux_loss(out):
                return tf.reduce_mean(tf.abs(out))
        """}, count=1, lines=(5,), spelling="module"),
        Invalid("""
            import tensorflow.compat.v1 as tf
            g_rec = tf.gradients(rec_loss, params)
            g_kl = tf.gradients(kl_loss, params)
            grads = [a + b for a, b in zip(g_rec, g_kl)]
            train_op = opt.apply_gradients(zip(grads, params))
        """, count=1, lines=(2,)),
        # The same with the terms and the variables by keyword.
        Invalid("""
            import tensorflow.compat.v1 as tf
            g_rec = tf.gradients(ys=rec_loss, xs=params)
            g_kl = tf.gradients(ys=kl_loss, xs=params)
            train_op = opt.apply_gradients(zip([a + b for a, b in zip(g_rec, g_kl)], params))
        """, count=1, lines=(2,)),
        Invalid(_TAPE + """
            # %%
            with tf.GradientTape(persistent=True) as tape:
                out = model(x)
                l1, l2 = task_loss(y, out), aux_loss(out)
            # %%
            g1 = tape.gradient(l1, model.trainable_variables)
            g2 = tape.gradient(l2, model.trainable_variables)
            opt.apply_gradients(zip([a + b for a, b in zip(g1, g2)], model.trainable_variables))
        """, count=1, notebook=True, spelling="notebook"),
    )

    def check_module(self, ctx: Context) -> Iterator[Finding]:
        if not ctx.imports_tf or not any(w in ctx.source for w in (".gradient(", ".gradients(",
                                                                   ".minimize(")):
            return
        node = ctx.tree
        by_scope: dict[int, tuple[ast.AST, list[ast.Call]]] = {}
        for call in ctx.calls:
            if method_call(call, "gradient", "minimize") or (
                    method_call(call, "gradients") and ctx.call_qualname(call) in _GRADIENTS):
                scope: ast.AST = ctx.enclosing_function(call) or node
                by_scope.setdefault(id(scope), (scope, []))[1].append(call)
        for scope, calls in by_scope.values():
            yield from self._in_scope(ctx, scope, calls)

    def _in_scope(self, ctx: Context, scope: ast.AST,
                  calls: list[ast.Call]) -> Iterator[Finding]:
        # each call with its loss term as found above: the term may be passed by keyword
        # (``ys=``, ``target=``, ``loss=``), so it is not re-read from the call by position
        groups: dict[tuple[str, str, str], list[tuple[ast.Call, ast.AST]]] = {}
        for call in calls:
            func: Any = call.func
            if func.attr == "gradients":  # TF1's tf.gradients(ys, xs): no tape to check
                if keyword(call, "grad_ys") is not None:
                    continue
                target, sources = _args(call, "ys", "xs")
            elif func.attr == "gradient":
                if not _is_tape(ctx, func.value) or keyword(call, "output_gradients"):
                    continue
                target, sources = _args(call, "target", "sources")
            else:
                if type(ctx.parent(call)) in (ast.Assign, ast.AnnAssign):
                    # TF1: ``op = opt.minimize(...)`` builds a train op; which ops run
                    # together (pre-training, then training) is the session runs' choice
                    continue
                target, sources = _args(call, "loss", "var_list")
            if target is None or sources is None:
                continue  # minimize with no var_list: each loss reaches its own variables
            src = ctx.source_of(sources)
            key = (func.attr, ctx.source_of(func.value), src)
            loops = ctx.enclosing_loops(call)
            if func.attr != "minimize" and loops and self._per_term_loop(ctx, scope, call,
                                                                          loops[0], target,
                                                                          sources):
                yield self.finding(ctx, call)
                continue
            groups.setdefault(key, []).append((call, target))
        for (kind, _, _), pairs in groups.items():
            if len(pairs) < 2:
                continue
            group = [c for c, _ in pairs]
            targets = {ctx.source_of(t) for _, t in pairs}
            if len(targets) < 2:
                continue
            if kind != "minimize":
                names = {n for n in (_bound_name(ctx, c) for c in group) if n}
                if len(names) < 2 or not _summed(ctx, scope, names, 2):
                    continue
            elif len({self._branch(ctx, c) for c in group}) > 1:
                continue
            yield self.finding(ctx, group[0])

    def _branch(self, ctx: Context, call: ast.AST) -> int:
        """The innermost ``if`` branch holding ``call`` (0 at the top): two calls with
        different branches are alternatives, not both run."""
        child = call
        for p in ctx.ancestors(call):
            if type(p) is ast.If:
                return id(child) if child in p.body or child in p.orelse else id(p)
            if type(p) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module):
                return 0
            child = p
        return 0

    def _per_term_loop(self, ctx: Context, scope: ast.AST, call: ast.Call, loop: Any,
                       target: Any, sources: Any) -> bool:
        """``call`` takes a gradient per loss term of a loop (the term varies with the
        loop, the variables do not) and the results are added."""
        if type(loop) in (ast.ListComp, ast.GeneratorExp):
            loop_vars = set().union(*(_names_in(g.target) for g in loop.generators))
        elif type(loop) is ast.For:
            loop_vars = _names_in(loop.target)
        else:
            return False
        if not (_names_in(target) & loop_vars) or (_names_in(sources) & loop_vars):
            return False
        name = _bound_name(ctx, call)
        if name is None:
            return False
        where = scope if type(loop) is not ast.For else loop
        return _summed(ctx, where, {name}, 1)
