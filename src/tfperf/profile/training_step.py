"""Where a script's training step is, read from its code: the loop that runs one step per
iteration, the step's statements, the name that holds its loss.

An eager training loop has no ``tf.function`` call per step, so a capture of it is one long
"step". The step is found from the code instead: a ``with tf.GradientTape()`` block whose
loop body (or function) also trains (``apply_gradients``, ``minimize``, or the gradients of
``trainable_variables``), itself or through a call of a function or method of the module
that does; the loop that runs it once per iteration is the *step loop*: the
nearest loop around the tape written inline, or around the call of the step function. Loops
inside the step (over gradients, over a GAN's two networks) are part of the step, and loops
around the step loop (epochs) hold many steps. Where the user marks steps themselves
(``tf.profiler.experimental.Trace(..., step_num=...)``), their loop is the step loop.

Plain AST, through lint's semantic model (names resolve as lint resolves them); nothing runs.
"""

from __future__ import annotations

import ast
import dataclasses
from dataclasses import dataclass

from tfperf.lint.analysis.callers import called_in_loop
from tfperf.lint.analysis.tf_functions import decorated_into_tf_function
from tfperf.lint.semantic import Context
from tfperf.lint.semantic.tf_api import KERAS_TRACED_METHODS

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_LOOPS = (ast.For, ast.While)
_TRAINABLE = frozenset({"trainable_variables", "trainable_weights"})
_TRACE_NAMES = ("tensorflow.profiler.experimental.Trace",)


@dataclass(frozen=True)
class TrainingStep:
    """One training step found in a module. Lines are 1-based, in ``path``."""

    path: str
    kind: str  # "inline" (tape in the loop body), "function" (a step function), "marked"
    loop_line: int  # the step loop's header
    loop_col: int
    loop_end: int  # the step loop's last line
    first_line: int  # the step's own statements: the inline block, or the step function
    last_line: int
    tape_line: int | None = None
    function: str | None = None  # the step function's name
    call_line: int | None = None  # where the loop calls it
    compiled: bool = False  # already a tf.function
    loss: str | None = None  # the name the loop's frame holds the step's loss in
    user_marked: bool = False  # the loop's steps are marked by the user's Trace(step_num=)

    @property
    def where(self) -> str:
        return f"the loop at line {self.loop_line}"

    def to_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "path": self.path, "loop_line": self.loop_line,
                "first_line": self.first_line, "last_line": self.last_line,
                "tape_line": self.tape_line, "function": self.function,
                "call_line": self.call_line, "compiled": self.compiled, "loss": self.loss,
                "user_marked": self.user_marked}


def _is_tape_with(ctx: Context, node: ast.AST) -> bool:
    return type(node) is ast.With and any(
        ctx.is_call_to(item.context_expr, "tensorflow.GradientTape") for item in node.items)


def trains(nodes: list[ast.stmt], helpers: frozenset[str] = frozenset()) -> bool:
    """The statements update weights or take the gradients of trainable weights, themselves
    or through a call of one of ``helpers`` (the module's functions and methods that do:
    ``agent.train_net(tape)``, the tape passed into the method that updates)."""
    for stmt in nodes:
        for n in ast.walk(stmt):
            if type(n) is not ast.Call:
                continue
            if type(n.func) is ast.Name and n.func.id in helpers:
                return True
            if type(n.func) is ast.Attribute:
                attr = n.func.attr
                if attr in helpers or attr == "apply_gradients" or (
                        attr == "minimize" and any(k.arg in ("tape", "var_list")
                                                   for k in n.keywords)):
                    return True
                if attr == "gradient" and len(n.args) >= 2 \
                        and type(n.args[1]) is ast.Attribute and n.args[1].attr in _TRAINABLE:
                    return True
    return False


def training_helpers(tree: ast.Module) -> frozenset[str]:
    """Names of the module's functions and methods that train (one level: a helper that
    only calls another helper is not followed)."""
    return frozenset(n.name for n in ast.walk(tree)
                     if isinstance(n, _DEFS) and n.name not in KERAS_TRACED_METHODS
                     and trains(n.body))


def _update_index(body: list[ast.stmt], start: int, helpers: frozenset[str]) -> int:
    """Index of the last statement from ``start`` on that trains (the update): the inline
    step runs from the tape to it."""
    last = start
    for i in range(start, len(body)):
        if trains([body[i]], helpers):
            last = i
    return last


def _loss_name(nodes: list[ast.stmt]) -> str | None:
    """The first argument of ``tape.gradient(loss, ...)`` when it is a plain name."""
    for stmt in nodes:
        for n in ast.walk(stmt):
            if type(n) is ast.Call and type(n.func) is ast.Attribute \
                    and n.func.attr == "gradient" and n.args and type(n.args[0]) is ast.Name:
                return n.args[0].id
    return None


def _assigned_name(ctx: Context, call: ast.Call) -> str | None:
    """``loss = step(...)`` or ``loss, acc = step(...)``: the (first) name it binds."""
    parent = ctx.parent(call)
    if type(parent) is ast.Assign and parent.value is call:
        target = parent.targets[0]
        if type(target) is ast.Name:
            return target.id
        if type(target) is ast.Tuple and target.elts and type(target.elts[0]) is ast.Name:
            return target.elts[0].id
    return None


def _marked(ctx: Context) -> list[TrainingStep]:
    """Loops whose body the user marks as steps with ``Trace(..., step_num=...)``."""
    out = []
    for node in ctx.nodes_of(ast.With):
        for item in node.items:  # type: ignore[attr-defined]
            call = item.context_expr
            if type(call) is ast.Call and ctx.is_call_to(call, *_TRACE_NAMES) \
                    and any(k.arg == "step_num" for k in call.keywords):
                loops = ctx.enclosing_loops(node)
                loop = loops[0] if loops else None
                if isinstance(loop, _LOOPS) and isinstance(node, ast.With):
                    out.append(TrainingStep(
                        ctx.path, "marked", loop.lineno, loop.col_offset, _end(loop),
                        node.lineno, node.end_lineno or node.lineno))
    return out


def _inline(ctx: Context, tape: ast.With, loop: ast.For | ast.While,
            helpers: frozenset[str]) -> TrainingStep | None:
    body = loop.body
    top = next((s for s in body if s is tape or any(n is tape for n in ast.walk(s))), None)
    if top is None or not trains(body, helpers):
        return None
    start = body.index(top)
    end = _update_index(body, start, helpers)
    block = body[start:end + 1]
    return TrainingStep(ctx.path, "inline", loop.lineno, loop.col_offset,
                        _end(loop), block[0].lineno, block[-1].end_lineno or block[-1].lineno,
                        tape_line=tape.lineno, loss=_loss_name(block))


def _function(ctx: Context, tape: ast.With, fn: ast.FunctionDef | ast.AsyncFunctionDef,
              helpers: frozenset[str]) -> TrainingStep | None:
    if not trains(fn.body, helpers - {fn.name}):
        return None
    call = called_in_loop(ctx, fn)
    if call is None:
        return None
    loop = ctx.enclosing_loops(call)[0]
    if not isinstance(loop, _LOOPS):
        return None
    compiled = ctx.is_tf_function(fn) or decorated_into_tf_function(ctx, fn)
    first = min([fn.lineno, *(d.lineno for d in fn.decorator_list)])
    return TrainingStep(ctx.path, "function", loop.lineno, loop.col_offset, _end(loop),
                        first, fn.end_lineno or fn.lineno, tape_line=tape.lineno,
                        function=fn.name, call_line=call.lineno, compiled=compiled,
                        loss=_assigned_name(ctx, call))


def find_steps(source: str, path: str, tree: ast.Module | None = None) -> list[TrainingStep]:
    """The training steps of one module, one per step loop; loops that hold another step
    loop (epochs around batches) are left out. Where the user marks steps
    (``Trace(..., step_num=...)``), only their loops are step loops: a training step found in
    one is kept with ``user_marked``, a marked loop without one is of kind "marked"."""
    if "GradientTape" not in source and "step_num" not in source:
        return []
    if tree is None:
        try:
            tree = ast.parse(source, path)
        except (SyntaxError, ValueError):
            return []
    ctx = Context(tree, source, path)
    marked = _innermost(_marked(ctx))
    helpers = training_helpers(tree)
    found: list[TrainingStep] = []
    for node in ctx.nodes_of(ast.With):
        if not isinstance(node, ast.With) or not _is_tape_with(ctx, node) \
                or _keras_traced(ctx, node):
            continue
        if any(_is_tape_with(ctx, p) for p in ctx.ancestors(node)):
            continue  # a tape inside the step's tape (gradient penalty): the same step
        loops = ctx.enclosing_loops(node)
        step: TrainingStep | None = None
        if loops:
            step = _inline(ctx, node, loops[0], helpers) if isinstance(loops[0], _LOOPS) \
                else None
        else:
            fn = ctx.enclosing_function(node)
            step = _function(ctx, node, fn, helpers) if isinstance(fn, _DEFS) else None
        if step is not None and all(s.loop_line != step.loop_line for s in found):
            found.append(step)
    if not marked:
        return _innermost(found)
    # The user's loops are the step loops; a training step found in one of them is kept,
    # marked as the user's (its markers are the capture's steps)
    user_loops = {m.loop_line for m in marked}
    own = [dataclasses.replace(s, user_marked=True) for s in found if s.loop_line in user_loops]
    kept = {s.loop_line for s in own}
    return own + [m for m in marked if m.loop_line not in kept]


def _end(node: ast.stmt) -> int:
    return node.end_lineno or node.lineno


def _keras_traced(ctx: Context, node: ast.AST) -> bool:
    """In a Keras model's ``train_step``/``call``...: Keras's own loop runs and compiles it."""
    fn = ctx.enclosing_function(node)
    return isinstance(fn, _DEFS) and fn.name in KERAS_TRACED_METHODS \
        and isinstance(ctx.parent(fn), ast.ClassDef)  # a method, not a def nested in one


def _innermost(steps: list[TrainingStep]) -> list[TrainingStep]:
    """Leave out a step loop that encloses another one's loop (epochs around batches)."""
    def encloses(a: TrainingStep, b: TrainingStep) -> bool:
        return a is not b and a.path == b.path and a.loop_line < b.loop_line <= a.loop_end
    return [s for s in steps if not any(encloses(s, o) for o in steps)]
