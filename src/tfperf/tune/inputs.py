"""How a child process finds the user's function and inputs: by module and name, never by
pickling them.

A module-level function is located by its module's name and file; the child imports the
module the same way (by name when the parent imported it by name, else the file through
:func:`tfperf.core.usercode.import_file`, which runs its top level, as the parent's import
did). Stateless inputs travel as arrays (:mod:`tfperf.tune.arrays`); stateful ones (a model,
an optimizer) are built in the child by the user's inputs function.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: The prefix tfperf gives user files it imports by path (stable across processes).
FILE_PREFIX = "_tfperf_tune_"


def as_args(value: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """An ``@inputs`` function's value as ``(args, kwargs)``: a dict is keyword arguments,
    a tuple positional arguments, anything else the one argument."""
    if isinstance(value, dict):
        return (), dict(value)
    if isinstance(value, tuple):
        return value, {}
    return (value,), {}


class InputsFunction:
    """A user's inputs function (``@tfperf.inputs``, ``--inputs FILE.py:FN``) as tune's
    factory of fresh ``(args, kwargs)``; a child process finds ``make`` by its name."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make

    def __call__(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return as_args(self.make())


def locate(fn: Any) -> dict[str, str] | None:
    """Where a child finds ``fn``: its module, file and qualified name; None for lambdas,
    closures, methods and functions without a ``.py`` file."""
    py = inspect.unwrap(getattr(fn, "python_function", fn))
    qualname = getattr(py, "__qualname__", "")
    module = getattr(py, "__module__", None)
    try:
        path = inspect.getsourcefile(py)
    except TypeError:
        return None
    if not module or not path or not path.endswith(".py") or "<" in qualname or "." in qualname:
        return None
    return {"module": module, "file": str(Path(path).resolve()), "qualname": qualname}


def find(where: dict[str, str]) -> Any:
    """In a child: import the module ``where`` names (once) and return the function."""
    return getattr(_module(where), where["qualname"])


def _module(where: dict[str, str]) -> Any:
    from tfperf.core.usercode import import_file, module_name_for

    name = where["module"]
    if name in sys.modules and name != "__main__":
        return sys.modules[name]
    if name != "__main__" and not name.startswith("_tfperf"):
        try:
            return importlib.import_module(name)
        except ImportError:
            pass  # not importable by name here: its file
    by_file = module_name_for(Path(where["file"]), FILE_PREFIX)
    if by_file in sys.modules:
        return sys.modules[by_file]
    return import_file(where["file"], prefix=FILE_PREFIX)
