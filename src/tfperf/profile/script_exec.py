"""Run a script as ``python SCRIPT.py`` would, with its step loop marked.

The step loop (``training_step.py``) gets its body wrapped in ``with __tfperf_step__():``;
the AST is compiled under the script's own file name, so every other line, frame and
traceback is the script's own (the wrapper is given the line of the body's first statement
and adds no line of its own). ``__tfperf_step__`` is a :class:`StepClock`, given to the
script's globals. With ``results=True`` (``--try-fixes``' children), the call of a step
function in its loop is wrapped too: ``__tfperf_result__(train_step(x, y))`` keeps what the
step returned.
"""

from __future__ import annotations

import ast
import builtins
import sys
import time
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tfperf.profile.training_step import TrainingStep

STEP = "__tfperf_step__"
RESULT = "__tfperf_result__"


class StepsDone(BaseException):
    """The wanted number of steps ran: the script stops here (a trial's child)."""


class StepClock:
    """Times each step of the marked loop; ``limit`` steps, then :class:`StepsDone`.

    ``loss``: a name whose value the loop's frame holds after each step (kept, as it is,
    for comparison after the run: converting it here would add a host sync per step).
    Subclasses hook :meth:`begin` and :meth:`end` (the profiler's step markers).
    """

    def __init__(self, *, limit: int | None = None, loss: str | None = None):
        self.limit = limit
        self.loss = loss
        self.durations: list[float] = []
        self.losses: list[Any] = []
        self.results: list[Any] = []
        self._depth = 0
        self._work_depth = 0
        self._t0 = 0.0

    def __call__(self) -> StepClock:
        return self

    def __enter__(self) -> None:
        if self._depth == 0:
            if self.limit is not None and len(self.durations) >= self.limit:
                raise StepsDone
            self.begin(len(self.durations))
            self._t0 = time.perf_counter()
        self._depth += 1

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self._depth -= 1
        if self._depth == 0:
            elapsed = time.perf_counter() - self._t0
            self.durations.append(elapsed)
            if self.loss is not None and exc_type is None:
                frame = sys._getframe(1)
                value = frame.f_locals.get(self.loss, frame.f_globals.get(self.loss))
                self.losses.append(value)
            self.end(len(self.durations) - 1)

    def result(self, value: Any) -> Any:
        """``__tfperf_result__(step(...))``: keep the step's return value, pass it on."""
        self.results.append(value)
        return value

    def begin(self, index: int) -> None:
        """Called as step ``index`` starts (before its clock)."""

    def end(self, index: int) -> None:
        """Called as step ``index`` ends (after its clock)."""

    # -- the step's own work: the inline block, or the call of the step function ------------

    def work(self) -> _Work:
        """``with __tfperf_step__.work():`` around an inline step's statements."""
        return _Work(self)

    def call(self, fn: Any) -> Any:
        """``__tfperf_step__.call(train_step)(x, y)``: the step function's call, as work."""
        def run(*args: Any, **kwargs: Any) -> Any:
            with _Work(self):
                return fn(*args, **kwargs)
        return run

    def work_begin(self) -> None:
        """Called as the step's own work starts."""

    def work_end(self) -> None:
        """Called as the step's own work ends."""


class _Work:
    """One stretch of a step's own work (nested stretches count once)."""

    def __init__(self, clock: StepClock):
        self.clock = clock

    def __enter__(self) -> None:
        clock = self.clock
        if clock._work_depth == 0:
            clock.work_begin()
        clock._work_depth += 1

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        clock = self.clock
        clock._work_depth -= 1
        if clock._work_depth == 0:
            clock.work_end()


def _find_loop(tree: ast.Module, step: TrainingStep) -> ast.For | ast.While | None:
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.While)) and node.lineno == step.loop_line \
                and node.col_offset == step.loop_col:
            return node
    return None


def _with(expr: ast.expr, body: list[ast.stmt]) -> ast.With:
    """``with <expr>: body``, placed at the body's first line (no line of its own)."""
    first, last = body[0], body[-1]
    wrapper = ast.With(items=[ast.withitem(context_expr=expr)], body=body)
    ast.copy_location(wrapper, first)
    wrapper.end_lineno, wrapper.end_col_offset = last.end_lineno, last.end_col_offset
    for node in ast.walk(expr):
        ast.copy_location(node, first)
    return wrapper


def _clock() -> ast.Name:
    return ast.Name(STEP, ast.Load())


def instrument(tree: ast.Module, steps: Sequence[TrainingStep], *,
               results: bool = False) -> tuple[ast.Module, int]:
    """``tree`` with each step loop's body inside ``with __tfperf_step__():``, the step's own
    work marked (an inline step's statements inside ``with __tfperf_step__.work():``, the
    step function's call as ``__tfperf_step__.call(f)(...)``), and with ``results`` the step
    function's return value kept; the number of loops marked."""
    marked = 0
    for step in steps:
        loop = _find_loop(tree, step)
        if loop is None:
            continue
        if step.kind == "inline":
            body = loop.body
            block = [i for i, s in enumerate(body)
                     if s.lineno >= step.first_line and (s.end_lineno or 0) <= step.last_line]
            if block:
                a, b = block[0], block[-1] + 1
                work = ast.Call(ast.Attribute(_clock(), "work", ast.Load()), [], [])
                body[a:b] = [_with(work, body[a:b])]
        elif step.kind == "function" and step.function:
            if results:
                _wrap_call(loop, step, _wrapped)
            _wrap_call(loop, step, _timed)
        loop.body = [_with(ast.Call(_clock(), [], []), loop.body)]
        marked += 1
    return tree, marked


def _wrap_call(loop: ast.AST, step: TrainingStep, wrap: Any) -> None:
    """The call of the step function in the loop, replaced by ``wrap(call)``."""
    for node in ast.walk(loop):
        for field, value in ast.iter_fields(node):
            if type(value) is ast.Call and _calls(value, step):
                setattr(node, field, wrap(value))
            elif isinstance(value, list):
                for i, item in enumerate(value):
                    if type(item) is ast.Call and _calls(item, step):
                        value[i] = wrap(item)


def _calls(call: ast.Call, step: TrainingStep) -> bool:
    func = call.func
    if type(func) is ast.Call:  # already wrapped: __tfperf_step__.call(f)(...)
        return False
    name = func.id if type(func) is ast.Name else func.attr if type(func) is ast.Attribute \
        else None
    return name == step.function and call.lineno == step.call_line


def _wrapped(call: ast.Call) -> ast.Call:
    out = ast.Call(ast.Name(RESULT, ast.Load()), [call], [])
    ast.copy_location(out, call)
    ast.copy_location(out.func, call)
    return out


def _timed(call: ast.Call) -> ast.Call:
    """``f(a)`` → ``__tfperf_step__.call(f)(a)``: the arguments are evaluated outside."""
    wrapper = ast.Call(ast.Attribute(_clock(), "call", ast.Load()), [call.func], [])
    out = ast.Call(wrapper, call.args, call.keywords)
    for node in (out, wrapper, wrapper.func, wrapper.func.value):  # type: ignore[attr-defined]
        ast.copy_location(node, call)
    return out


def main_module(path: Path, init_globals: dict[str, Any]) -> types.ModuleType:
    """A fresh ``__main__`` module for ``path``, as ``runpy.run_path`` makes one."""
    module = types.ModuleType("__main__")
    module.__dict__.update(__file__=str(path), __cached__=None, __loader__=None,
                           __package__=None, __spec__=None, __builtins__=builtins)
    module.__dict__.update(init_globals)
    return module


def exec_as_main(code: types.CodeType, module: types.ModuleType) -> None:
    """Execute ``code`` in ``module`` as ``__main__``, as ``runpy.run_path`` does
    (``sys.argv`` and ``sys.path`` are the caller's to set)."""
    saved = sys.modules.get("__main__")
    sys.modules["__main__"] = module
    try:
        exec(code, module.__dict__)
    finally:
        if saved is not None:
            sys.modules["__main__"] = saved


def compile_marked(source: str, path: Path, steps: Sequence[TrainingStep], *,
                   results: bool = False) -> types.CodeType | None:
    """The script's code with its step loops marked; None when no loop could be marked."""
    tree = ast.parse(source, str(path))
    tree, marked = instrument(tree, steps, results=results)
    if not marked:
        return None
    return compile(tree, str(path), "exec", dont_inherit=True)
