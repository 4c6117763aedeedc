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


def _find_loop(tree: ast.Module, step: TrainingStep) -> ast.For | ast.While | None:
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.While)) and node.lineno == step.loop_line \
                and node.col_offset == step.loop_col:
            return node
    return None


def instrument(tree: ast.Module, steps: Sequence[TrainingStep], *,
               results: bool = False) -> tuple[ast.Module, int]:
    """``tree`` with each step loop's body inside ``with __tfperf_step__():`` (and the step
    function's call kept with ``results``); the number of loops marked."""
    marked = 0
    for step in steps:
        loop = _find_loop(tree, step)
        if loop is None:
            continue
        body = loop.body
        first, last = body[0], body[-1]
        wrapper = ast.With(
            items=[ast.withitem(context_expr=ast.Call(ast.Name(STEP, ast.Load()), [], []))],
            body=body)
        ast.copy_location(wrapper, first)
        wrapper.end_lineno, wrapper.end_col_offset = last.end_lineno, last.end_col_offset
        for node in ast.walk(wrapper.items[0].context_expr):
            ast.copy_location(node, first)
        loop.body = [wrapper]
        marked += 1
        if results and step.kind == "function" and step.function:
            _keep_result(loop, step)
    return tree, marked


def _keep_result(loop: ast.AST, step: TrainingStep) -> None:
    """``train_step(x)`` in the loop → ``__tfperf_result__(train_step(x))``."""
    for node in ast.walk(loop):
        for field, value in ast.iter_fields(node):
            if type(value) is ast.Call and _calls(value, step):
                setattr(node, field, _wrapped(value))
            elif isinstance(value, list):
                for i, item in enumerate(value):
                    if type(item) is ast.Call and _calls(item, step):
                        value[i] = _wrapped(item)


def _calls(call: ast.Call, step: TrainingStep) -> bool:
    func = call.func
    name = func.id if type(func) is ast.Name else func.attr if type(func) is ast.Attribute \
        else None
    return name == step.function and call.lineno == step.call_line


def _wrapped(call: ast.Call) -> ast.Call:
    out = ast.Call(ast.Name(RESULT, ast.Load()), [call], [])
    ast.copy_location(out, call)
    ast.copy_location(out.func, call)
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
