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
import errno
import hashlib
import importlib.machinery
import importlib.util
import os
import stat
import sys
import traceback
from dataclasses import dataclass
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
    _check_regular_file(p)
    if p.suffix != ".py":
        raise UserCodeError(f"{p}: not a Python file (expected FILE.py)")
    return p


def _check_regular_file(p: Path) -> os.stat_result:
    """``p``'s stat if it leads to a regular file; else one line saying what it is."""
    try:
        st = p.stat()
    except FileNotFoundError:
        if p.is_symlink():
            raise UserCodeError(f"{p}: a symlink to a missing file ({os.readlink(p)})") \
                from None
        raise UserCodeError(f"{p}: no such file") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UserCodeError(f"{p}: a symlink loop (it never leads to a file)") from None
        raise UserCodeError(f"{p}: cannot reach it: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        raise UserCodeError(f"{p}: a folder, not a file")
    if not stat.S_ISREG(st.st_mode):  # a FIFO or a device would block or never end
        raise UserCodeError(f"{p}: not a regular file")
    return st


def read_source(path: str | Path, *, suffix: str | None = ".py") -> tuple[Path, str]:
    """The text of the user's Python file, read as Python reads it (UTF-8 or the file's
    coding cookie); else :class:`UserCodeError` with one line: no such file, a symlink loop,
    a folder, unreadable, binary, not in its encoding. ``suffix=None`` takes any name (a
    script run as ``python FILE``)."""
    p = Path(path)
    _check_regular_file(p)
    if p.suffix.lower() == ".ipynb":  # its JSON parses as a Python dict: it would "run"
        raise UserCodeError(
            f"{p}: a Jupyter notebook, not a Python file: in the notebook, `%load_ext tfperf` "
            f"gives %%tfprofile, %tftimeit, %tfcompare and %tftune (docs/notebooks.md); or "
            f"`jupyter nbconvert --to script` it and give tfperf the .py")
    if suffix is not None and p.suffix != suffix:
        raise UserCodeError(f"{p}: not a Python file (expected FILE{suffix})")
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise UserCodeError(f"{p}: cannot read it: {exc.strerror or exc}") from None
    if b"\0" in data:
        raise UserCodeError(f"{p}: a binary file, not Python source (it holds NUL bytes)")
    try:
        return p, importlib.util.decode_source(data)
    except (UnicodeDecodeError, SyntaxError, LookupError) as exc:
        # SyntaxError: the first two lines are not UTF-8, or name an unknown codec
        bad = exc if isinstance(exc, UnicodeDecodeError) else _utf8_error(data)
        if bad is not None:
            raise UserCodeError(
                f"{p}: not UTF-8 text (byte 0x{data[bad.start]:02x} at offset {bad.start}); "
                "Python source is UTF-8 unless a coding line says otherwise") from None
        raise UserCodeError(f"{p}: cannot decode it: {getattr(exc, 'msg', exc)}") from None


def _utf8_error(data: bytes) -> UnicodeDecodeError | None:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc
    return None


def parse_source(path: Path, text: str) -> ast.Module:
    """The file's syntax tree (nothing runs); a syntax error is one line with its place."""
    try:
        return ast.parse(text, filename=str(path))
    except SyntaxError as exc:
        where = f"line {exc.lineno}" if exc.lineno else "somewhere"
        snippet = (exc.text or "").strip()
        shown = f" ({snippet[:60]!r})" if snippet else ""
        raise UserCodeError(f"{path}: syntax error at {where}: {exc.msg}{shown}") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise UserCodeError(f"{path}: Python cannot parse it ({type(exc).__name__})") from None


# Names whose presence means a module can bind names no syntax tree shows.
_DYNAMIC = frozenset({"globals", "vars", "exec", "setattr", "__getattr__"})


@dataclass(frozen=True)
class UserFile:
    """A user's Python file that exists, reads, decodes and parses: what its syntax says,
    before anything (TensorFlow above all) is imported."""

    path: Path
    tree: ast.Module
    label: str = ""  # how messages name it (a module's name); the path when empty

    def module_names(self) -> set[str] | None:
        """Names the module binds at its top level, plus the names a call gives with
        ``name="..."`` (a bench variant's); None when the file can bind names its tree does
        not show (``from x import *``, ``globals()``, a module ``__getattr__``)."""
        names: set[str] = set()
        for node in ast.walk(self.tree):
            if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
                return None
            if isinstance(node, ast.Name) and node.id in _DYNAMIC:
                return None
            if isinstance(node, ast.Global):
                names.update(node.names)
            if isinstance(node, ast.Call):
                names.update(k.value.value for k in node.keywords if k.arg == "name"
                             and isinstance(k.value, ast.Constant)
                             and isinstance(k.value.value, str))
        _top_level_bindings(self.tree, names)
        return None if "__getattr__" in names else names

    def require_function(self, name: str) -> None:
        """:class:`UserCodeError` unless ``name`` (``f`` or ``Class.method``: its first part)
        is bound at the top level of the file."""
        names = self.module_names()
        first = name.split(".")[0]
        if names is None or first in names or name in names:
            return
        known = [n for n in _top_level_functions(self.tree) if not n.startswith("_")]
        listed = f"it defines {', '.join(known[:8])}{', ...' if len(known) > 8 else ''}" \
            if known else "it defines no function"
        raise UserCodeError(f"{self.label or self.path}: no function {first!r} at module "
                            f"level ({listed})")

    def may_declare(self, word: str) -> bool:
        """Whether importing the file may run a declaration named ``word`` (``inputs``,
        ``variant``): the file names it, or imports a module beside it that may."""
        for node in ast.walk(self.tree):
            if (isinstance(node, ast.Name) and node.id == word) or \
                    (isinstance(node, ast.Attribute) and node.attr == word):
                return True
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                if any(a.name == word or a.name == "*" for a in node.names):
                    return True
                if self._imports_a_neighbour(node):
                    return True
        return False

    def _imports_a_neighbour(self, node: ast.Import | ast.ImportFrom) -> bool:
        folder = self.path.parent
        if isinstance(node, ast.ImportFrom):
            tops = [(node.module or "").split(".")[0]] if node.level == 0 else [""]
        else:
            tops = [a.name.split(".")[0] for a in node.names]
        return any(not top or (folder / f"{top}.py").exists() or (folder / top).is_dir()
                   for top in tops)

    def required_parameters(self, name: str) -> list[str] | None:
        """The parameters a call of top-level function ``name`` must be given (no default),
        or None when that is not plain from the syntax (not a plain ``def``)."""
        for node in self.tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                a = node.args
                positional = a.posonlyargs + a.args
                needed = [x.arg for x in positional[:len(positional) - len(a.defaults)]]
                needed += [x.arg for x, d in zip(a.kwonlyargs, a.kw_defaults, strict=True)
                           if d is None]
                return needed
        return None


def _top_level_bindings(node: ast.AST, names: set[str]) -> None:
    """Add the names ``node`` binds in the module's scope: compound statements are entered,
    function, class and lambda bodies are not (comprehension names may be added: more names
    only make the check more lenient)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(child.name)
        elif isinstance(child, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in child.names)
        elif not isinstance(child, ast.Lambda):
            if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
                names.add(child.id)
            name = getattr(child, "name", None)  # except E as name, case [*name], case x as name
            if isinstance(child, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and name:
                names.add(name)
            _top_level_bindings(child, names)


def _top_level_functions(tree: ast.Module) -> list[str]:
    return [n.name for n in tree.body
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]


def check_user_file(path: str | Path, *, suffix: str | None = ".py",
                    allow_empty: bool = False) -> UserFile:
    """Check the user's Python file before anything is imported: it exists, is a regular
    readable file, decodes, parses, and (unless ``allow_empty``) holds a statement. Else
    :class:`UserCodeError`, one line. Nothing in the file runs."""
    p, text = read_source(path, suffix=suffix)
    tree = parse_source(p, text)
    if not tree.body and not allow_empty:
        raise UserCodeError(f"{p}: the file is empty (no Python statement): nothing to run")
    return UserFile(p, tree)


def check_module(name: str) -> UserFile | None:
    """For ``MODULE`` (``pkg.mod``) named on the command line: the checked source file it
    would import from, found without importing anything; None when it is not a plain source
    file (a built-in, an extension, a namespace package). A top-level module that does not
    exist is :class:`UserCodeError`."""
    parts = name.split(".")
    if not all(part.isidentifier() for part in parts):
        raise UserCodeError(f"{name!r} is not a module name (expected MODULE or FILE.py)")
    search = [os.getcwd(), *sys.path]
    spec = None
    for i, part in enumerate(parts):
        spec = importlib.machinery.PathFinder.find_spec(".".join(parts[:i + 1]), search)
        if spec is None:
            if i == 0 and importlib.util.find_spec(part) is None:
                raise UserCodeError(f"no module named {name!r}")
            return None  # found some other way (a meta path hook): the import decides
        search = list(spec.submodule_search_locations or [])
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    checked = check_user_file(spec.origin, allow_empty=True)
    return UserFile(checked.path, checked.tree, label=name)


# Options whose value is a folder tfperf writes into; the others name one file.
FOLDER_OPTIONS = frozenset({"--store", "--logdir"})
# A user's own work, which no report of tfperf's replaces (a mistyped `--html train.py`).
SOURCE_SUFFIXES = frozenset({".py", ".pyi", ".ipynb"})


def check_output_path(path: str | Path, option: str, *, folder: bool | None = None) -> None:
    """:class:`UserCodeError` when tfperf surely cannot write ``path`` (the ``option``'s
    value): a part of it that should be a folder is a file, the folder that would hold it is
    not writable, or it is itself an unwritable file or a symlink loop; and where it would
    lose the user's work: a file option (``folder`` False; by default every option but
    :data:`FOLDER_OPTIONS`) naming a folder, or an existing Python source or notebook.
    Checked before a long run, so the run is not lost at its end."""
    p = Path(path)
    if folder is None:
        folder = option in FOLDER_OPTIONS
    try:
        st = p.stat()
    except (FileNotFoundError, NotADirectoryError):  # the folder below says which
        st = None
    except OSError as exc:
        why = "a symlink loop" if exc.errno == errno.ELOOP else (exc.strerror or str(exc))
        raise UserCodeError(f"{option} {p}: {why}") from None
    if st is not None:
        if stat.S_ISDIR(st.st_mode) and not folder:
            raise UserCodeError(f"{option} {p}: is a folder; give a file name")
        if stat.S_ISDIR(st.st_mode) and not os.access(p, os.W_OK | os.X_OK):
            raise UserCodeError(f"{option} {p}: the folder is not writable")
        if not stat.S_ISDIR(st.st_mode) and p.suffix.lower() in SOURCE_SUFFIXES:
            raise UserCodeError(f"{option} {p}: an existing Python source or notebook; "
                                "tfperf writes no report over it")
        if not stat.S_ISDIR(st.st_mode) and not os.access(p, os.W_OK):
            raise UserCodeError(f"{option} {p}: the file is not writable")
        return
    parent = p.absolute().parent
    while True:
        try:
            st = parent.stat()
        except (FileNotFoundError, NotADirectoryError):
            if parent == parent.parent:
                raise UserCodeError(f"{option} {p}: no folder of it exists") from None
            parent = parent.parent
            continue
        except OSError as exc:
            raise UserCodeError(f"{option} {p}: cannot reach {parent}: "
                                f"{exc.strerror or exc}") from None
        break
    if not stat.S_ISDIR(st.st_mode):
        raise UserCodeError(f"{option} {p}: {parent} is a file, not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UserCodeError(f"{option} {p}: the folder {parent} is not writable")


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


__all__ = ["UserCodeError", "UserFile", "check_module", "check_output_path",
           "check_python_file", "check_user_file", "describe_exception", "import_file",
           "main_guard_lines", "module_name_for", "parse_source", "read_source",
           "runs_at_import"]
