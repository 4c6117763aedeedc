"""Import a user's Python file by path: the one way tfperf runs code it was pointed at.

``tfperf bench FILE.py``, ``tfperf profile FILE.py:FUNCTION``, the ``--isolate`` child process
(and ``tune`` next) all *import and execute* the user's file: its top level runs, as it would
under ``import``. This module does it the same way for all of them:

- the file's folder is first on ``sys.path`` while it runs, so it can import its neighbours as
  ``python FILE.py`` could;
- it gets a fresh module name of its own (never ``__main__``: a ``if __name__ == "__main__":``
  block does not run);
- whatever it raises at import (``SystemExit`` included; ``KeyboardInterrupt`` excepted) comes
  back as one :class:`UserCodeError` whose message names the exception and the line in the
  file, never a traceback.

No third-party import here: the loader is used by commands that must start fast.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import sys
import traceback
from pathlib import Path
from types import ModuleType


class UserCodeError(Exception):
    """The user's file cannot be imported; the message says why, for the user."""


def describe_exception(exc: BaseException, path: Path) -> str:
    """``TypeError: msg (line 12)``: the innermost frame of ``exc`` inside ``path``."""
    line = None
    target = path.resolve()
    for frame in traceback.extract_tb(exc.__traceback__):
        if Path(frame.filename).resolve() == target:
            line = frame.lineno
    if isinstance(exc, SyntaxError) and exc.lineno:
        line = exc.lineno
    where = f" (line {line})" if line else ""
    return f"{type(exc).__name__}: {exc}{where}"


def check_python_file(path: str | Path) -> Path:
    """``path`` as a Path if it is an existing ``.py`` file, else :class:`UserCodeError`."""
    p = Path(path)
    if not p.exists():
        raise UserCodeError(f"{p}: no such file")
    if not p.is_file() or p.suffix != ".py":
        raise UserCodeError(f"{p}: not a Python file (expected FILE.py)")
    return p


def module_name_for(path: Path, prefix: str) -> str:
    """A module name unique to the file's real path and stable across processes."""
    digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]
    stem = "".join(c if c.isalnum() else "_" for c in path.stem)
    return f"{prefix}{stem}_{digest}"


def import_file(path: str | Path, prefix: str = "_tfperf_user_") -> ModuleType:
    """Import and execute the file at ``path`` as a new module; see the module docstring."""
    p = check_python_file(path)
    name = module_name_for(p, prefix)
    spec = importlib.util.spec_from_file_location(name, p)
    if spec is None or spec.loader is None:
        raise UserCodeError(f"{p}: cannot be imported")
    module = importlib.util.module_from_spec(spec)
    folder = str(p.resolve().parent)
    sys.path.insert(0, folder)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except KeyboardInterrupt:
        sys.modules.pop(name, None)
        raise
    except BaseException as exc:  # SystemExit from a script is a failed import too
        sys.modules.pop(name, None)
        raise UserCodeError(f"{p}: importing it failed: {describe_exception(exc, p)}") from None
    finally:
        if folder in sys.path:
            sys.path.remove(folder)
    return module


def _is_main_guard(node: ast.stmt) -> bool:
    """``if __name__ == "__main__":`` (either operand order)."""
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    test = node.test
    if len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
        return False
    sides = [test.left, test.comparators[0]]
    names = [s.id for s in sides if isinstance(s, ast.Name)]
    consts = [s.value for s in sides if isinstance(s, ast.Constant)]
    return names == ["__name__"] and consts == ["__main__"]


def main_guard_lines(path: str | Path) -> list[tuple[int, int]]:
    """Line ranges of the top-level ``if __name__ == "__main__":`` blocks of a file.

    A file that cannot be read or parsed has none.
    """
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return []
    return [(node.lineno, node.end_lineno or node.lineno) for node in tree.body
            if _is_main_guard(node)]


def runs_at_import(path: str | Path, lineno: int) -> bool:
    """Whether top-level line ``lineno`` of the file runs when the file is imported, i.e.
    is not inside an ``if __name__ == "__main__":`` block."""
    return not any(a <= lineno <= b for a, b in main_guard_lines(path))


__all__ = ["UserCodeError", "check_python_file", "describe_exception", "import_file",
           "main_guard_lines", "module_name_for", "runs_at_import"]
