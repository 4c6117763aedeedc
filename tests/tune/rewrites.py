"""What the lever tests share: a rewritten module run, the lever context a search would give
it (the baseline's outputs recorded), and the loops a rewrite left in the module."""

from __future__ import annotations

import ast
import types
from pathlib import Path
from typing import Any

from tfperf.bench.equivalence import snapshot
from tfperf.tune.device import DeviceFacts
from tfperf.tune.lever import LeverContext

_LOOPS = (ast.For, ast.While, ast.ListComp, ast.GeneratorExp)


def run_f(text: str, args: tuple) -> Any:
    """Run the module ``text`` and call its ``f`` on ``args``."""
    ns: dict = {}
    exec(compile(text, "<rewrite>", "exec"), ns)
    return ns["f"](*args)


def lever_context(text: str, args: tuple, filename: str) -> LeverContext:
    """The context a search gives a lever for ``f`` in ``text`` (its outputs recorded)."""
    target = types.SimpleNamespace(source=text, name="f", args=args, kwargs={},
                                   path=Path(filename), inputs=None)
    ctx = LeverContext(target, DeviceFacts())  # type: ignore[arg-type]
    ctx.returns = [snapshot(run_f(text, args))]
    return ctx


def loops_left(text: str) -> int:
    """Loops left in the module's functions (tfperf's own helpers aside)."""
    return sum(1 for fn in ast.parse(text).body if isinstance(fn, ast.FunctionDef)
               and not fn.name.startswith("_tfperf") for n in ast.walk(fn)
               if isinstance(n, _LOOPS))
