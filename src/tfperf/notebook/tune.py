"""``%tftune FN(ARGS)``: hands the call to ``tfperf.tune`` when this tfperf has it.

``tfperf.tune`` is a capability being built beside this one; this module only looks for it (a
guarded import) and calls its ``tune(fn, args, kwargs, budget=, progress=)`` (or
``tune(fn, *args, **kwargs)``, whichever its signature says), so the magic works the day it
lands and says plainly that it is not there until then.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from collections.abc import Mapping
from typing import Any

from tfperf.notebook import display
from tfperf.notebook.errors import MagicError, describe
from tfperf.notebook.statement import evaluate, raised_where

NOT_AVAILABLE = ("tune is not available yet in this tfperf (tfperf.tune is not installed); "
                 "%tftimeit and %tfcompare time the variants you write")


def tune_module() -> Any | None:
    """``tfperf.tune`` if it can be imported; None when it does not exist."""
    try:
        return importlib.import_module("tfperf.tune")
    except ModuleNotFoundError as exc:
        if exc.name in ("tfperf.tune", "tfperf"):
            return None
        raise


def _call_parts(text: str) -> tuple[str, list[str], list[tuple[str, str]]]:
    """``f(x, y, k=2)`` → (``f``, [``x``, ``y``], [(``k``, ``2``)]) as source text."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        raise MagicError("tftune", f"syntax error in {text.strip()!r}: {exc.msg}") from None
    if not isinstance(node, ast.Call) or any(isinstance(a, ast.Starred) for a in node.args) \
            or any(k.arg is None for k in node.keywords):
        raise MagicError("tftune", "give one call, FN(ARGS), e.g. %tftune step(x, y)")
    return (ast.unparse(node.func), [ast.unparse(a) for a in node.args],
            [(k.arg or "", ast.unparse(k.value)) for k in node.keywords])


def _call(entry: Any, fn: Any, args: list[Any], kwargs: dict[str, Any],
          budget: float | None, say: Any) -> Any:
    """Call ``tune`` the way its signature asks: ``tune(fn, args, kwargs, *, budget,
    progress)`` (tfperf.tune's), or ``tune(fn, *args, **kwargs)``."""
    params: Mapping[str, inspect.Parameter]
    try:
        params = inspect.signature(entry).parameters
    except (TypeError, ValueError):
        params = {}
    extra: dict[str, Any] = {}
    if budget is not None and "budget" in params:
        extra["budget"] = budget
    if "progress" in params:
        extra["progress"] = say
    if "args" in params and params["args"].kind is not inspect.Parameter.VAR_POSITIONAL:
        return entry(fn, tuple(args), kwargs or None, **extra)
    return entry(fn, *args, **kwargs, **extra)


def shown(result: Any) -> Any:
    """What to display: the result when it renders itself, else its ``table()`` as text,
    followed by its patch (for a function typed in a cell, the cell's diff: there is no file
    to apply it to)."""
    table = getattr(result, "table", None)
    if hasattr(result, "_repr_pretty_") or not callable(table):
        return result
    text = table()
    patch = getattr(result, "patch", "")
    if isinstance(patch, str) and patch:
        note = "" if getattr(result, "in_file", True) else (
            "the pick, as a diff of the cell that defines the function (copy its new lines "
            "into the cell; nothing is written):\n")
        text += "\n" + note + patch.rstrip("\n")
    html = getattr(result, "_repr_html_", None)  # TuneResult's report, in a front end
    return display.Rendering(text, html() if callable(html) else None)


def run_tune(shell: Any, text: str, budget: float | None = None) -> Any:
    """``(result, what to display)``; the result is None when tune is not available."""
    if not text.strip():
        raise MagicError("tftune", "give one call, FN(ARGS), e.g. %tftune step(x, y)")
    func, args, kwargs = _call_parts(text)
    module = tune_module()
    if module is None:
        return None, display.Rendering(NOT_AVAILABLE)
    entry = getattr(module, "tune", None)
    if not callable(entry):
        return None, display.Rendering("tfperf.tune has no tune() function yet; nothing was "
                                       "run")
    fn = evaluate(shell, "tftune", func)
    values = [evaluate(shell, "tftune", a) for a in args]
    named = {k: evaluate(shell, "tftune", v) for k, v in kwargs}
    progress = display.Progress(shell, "tftune")
    try:
        result = _call(entry, fn, values, named, budget, lambda what: progress(None, what))
    except KeyboardInterrupt:
        progress.close()
        raise MagicError("tftune", "interrupted") from None
    except Exception as exc:
        progress.close()
        raise MagicError("tftune", f"tune raised {describe(exc)}"
                                   f"{raised_where(shell, exc)}") from None
    progress.close()
    return result, shown(result)
