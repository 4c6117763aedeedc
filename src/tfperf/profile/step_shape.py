"""What a found training step does besides training, read from its code: the two shapes
that ``@tf.function`` on the whole step does not fix.

* **The environment in the step** (reinforcement learning): the step loop is the episode
  loop and it calls ``env.step()`` / ``env.reset()`` (and samples the action on the host:
  ``np.random.choice(..., p=probs)``, ``int(action)``) once per environment step. That stays
  Python; what compiles is the model call the agent acts with and the update over the
  episode's stacked states, actions and returns.
* **One update per item** (per time step of an episode, per sample): ``tape.gradient`` and
  ``apply_gradients`` inside a loop within the step (or within the method the step calls to
  update). Each update is a full optimizer step run op by op; the fix is one update of the
  summed loss per episode or batch.

Plain AST through lint's semantic model; nothing runs.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from tfperf.lint.semantic import Context
from tfperf.profile.training_step import TrainingStep, training_helpers, trains

_ENV_METHODS = frozenset({"step", "reset"})
_HOST_ATTRS = frozenset({"numpy", "item"})
_HOST_BUILTINS = frozenset({"int", "float", "bool"})
_LOOPS = (ast.For, ast.While, ast.AsyncFor)
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(frozen=True)
class Site:
    """A call in the step, as the source writes it."""

    text: str  # "env.step()"
    line: int

    def __str__(self) -> str:
        return f"{self.text} at line {self.line}"


@dataclass(frozen=True)
class StepShape:
    env: Site | None = None  # the environment stepped inside the training step
    host_sample: Site | None = None  # host work in the loop that steps the environment
    update_per_item: Site | None = None  # an update inside a loop within the step
    update_loop_line: int | None = None  # that loop's header
    update_function: str | None = None  # the method holding that loop, when not the step


def step_statements(tree: ast.Module, step: TrainingStep) -> list[ast.stmt]:
    """The step's own statements: the inline block of its loop, or its function's body."""
    if step.kind == "function":
        fn = next((n for n in ast.walk(tree) if isinstance(n, _DEFS) and n.name == step.function
                   and n.lineno <= step.last_line and (n.end_lineno or 0) >= step.first_line),
                  None)
        return list(fn.body) if fn is not None else []
    loop = next((n for n in ast.walk(tree) if isinstance(n, _LOOPS)
                 and n.lineno == step.loop_line and n.col_offset == step.loop_col), None)
    if loop is None:
        return []
    return [s for s in loop.body
            if s.lineno >= step.first_line and (s.end_lineno or s.lineno) <= step.last_line]


def _is_env_call(ctx: Context, call: ast.Call) -> bool:
    """``env.step(a)``, ``self.env.reset()``, or a ``step``/``reset`` of what ``gym.make``
    made: an environment the agent acts in (an optimizer's or a scheduler's step is not)."""
    func = call.func
    if type(func) is not ast.Attribute or func.attr not in _ENV_METHODS:
        return False
    receiver = func.value
    name = receiver.attr if type(receiver) is ast.Attribute else \
        receiver.id if type(receiver) is ast.Name else ""
    if "env" in name.lower():
        return True
    if type(receiver) is ast.Name:
        value = getattr(ctx.binding(receiver), "value", None)
        if type(value) is ast.Call:
            q = ctx.call_qualname(value) or ""
            return q.endswith(".make") and q.split(".", 1)[0] in ("gym", "gymnasium")
    return False


def _host_call(ctx: Context, call: ast.Call) -> bool:
    """A call that needs an eager tensor's value on the host: ``.numpy()``, ``int(t)``,
    a NumPy function (``np.random.choice(n, p=np.squeeze(probs))``)."""
    func = call.func
    if type(func) is ast.Attribute and func.attr in _HOST_ATTRS:
        return True
    if type(func) is ast.Name and func.id in _HOST_BUILTINS and ctx.binding(func) is None:
        return bool(call.args) and not isinstance(call.args[0], ast.Constant)
    q = ctx.qualname(func)
    return q is not None and q.startswith("numpy.")


def _calls(nodes: list[ast.stmt]) -> list[ast.Call]:
    out = [n for s in nodes for n in ast.walk(s) if type(n) is ast.Call]
    return sorted(out, key=lambda n: (n.lineno, n.col_offset))


def _site(ctx: Context, call: ast.Call) -> Site:
    return Site(ctx.source_of(call.func) + "()", call.lineno)


def _update_in_loop(ctx: Context, nodes: list[ast.stmt], inside: ast.AST | None
                    ) -> tuple[ast.Call, ast.AST] | None:
    """The first update call (``apply_gradients``, a gradient of trainable weights) in
    ``nodes`` that runs in a loop nested in them (not the step loop itself, ``inside``)."""
    for call in _calls(nodes):
        if not trains([ast.Expr(call)]):
            continue
        loops = [loop for loop in ctx.enclosing_loops(call) if isinstance(loop, _LOOPS)
                 and loop is not inside and any(loop is n or _within(loop, n) for n in nodes)
                 and not _over_networks(ctx, loop)]
        if loops:
            return call, loops[-1]
    return None


def _over_networks(ctx: Context, loop: ast.AST) -> bool:
    """A loop over a few networks or optimizers (a GAN's generator and discriminator, in a
    literal tuple or zipped with their optimizers): part of one step, not a time step."""
    it = getattr(loop, "iter", None)
    if it is None:
        return False
    if isinstance(it, (ast.List, ast.Tuple)):
        return True
    return "optim" in ctx.source_of(it).lower()


def _within(node: ast.AST, container: ast.AST) -> bool:
    return any(n is node for n in ast.walk(container))


def read_shape(ctx: Context, tree: ast.Module, step: TrainingStep) -> StepShape:
    """The step's shape (see the module's doc); an empty shape when it is a plain step."""
    nodes = step_statements(tree, step)
    if not nodes:
        return StepShape()
    env_call = next((c for c in _calls(nodes) if _is_env_call(ctx, c)), None)
    host: Site | None = None
    if env_call is not None:
        loops = ctx.enclosing_loops(env_call)
        scope: list[ast.stmt] = [loops[0]] if loops and isinstance(loops[0], ast.stmt) \
            else nodes
        host_call = next((c for c in _calls(scope) if _host_call(ctx, c)
                          and not any(c is a for a in ast.walk(env_call))), None)
        host = _site(ctx, host_call) if host_call is not None else None
    loop_node = next((n for n in ast.walk(tree) if isinstance(n, _LOOPS)
                      and n.lineno == step.loop_line and n.col_offset == step.loop_col), None)
    found = _update_in_loop(ctx, nodes, loop_node)
    function = None
    if found is None:  # the update may sit in a loop of a method the step calls
        helpers = training_helpers(tree)
        called = {c.func.attr if type(c.func) is ast.Attribute else getattr(c.func, "id", "")
                  for c in _calls(nodes)}
        for fn in ast.walk(tree):
            if isinstance(fn, _DEFS) and fn.name in helpers & called:
                found = _update_in_loop(ctx, list(fn.body), None)
                if found is not None:
                    function = fn.name
                    break
    update, loop = found if found is not None else (None, None)
    return StepShape(
        env=_site(ctx, env_call) if env_call is not None else None, host_sample=host,
        update_per_item=_site(ctx, update) if update is not None else None,
        update_loop_line=getattr(loop, "lineno", None), update_function=function)
