"""Writing the winning change into the user's file, with ``lint --fix``'s safety rules: only
the file the function was measured in (and, from the CLI, the very file the user named), only
while it still holds the text that was measured, the new text must parse, and the file is
replaced through :func:`tfperf.core.files.write_text_atomically`; applying twice changes
nothing. Whatever the file system refuses (a missing or read-only file, an unwritable
folder) is a :class:`~tfperf.tune.target.TuneError` of one line, never a traceback."""

from __future__ import annotations

from pathlib import Path

from tfperf.core.files import write_text_atomically
from tfperf.lint.fix import parses
from tfperf.tune.result import TuneResult
from tfperf.tune.target import TuneError


def apply_patch(result: TuneResult, path: str | Path | None = None) -> str:
    """Write ``result``'s patch into the file it was measured on; returns what was done, in
    words. ``path``: the file the user named; refused unless it is that file."""
    if not result.in_file and result.cell is None and str(result.path).endswith(".py"):
        raise TuneError(f"{result.function} is the inner function of a factory in "
                        f"{result.path}: the patch shows its def lifted to the top level, "
                        "and is not applied; paste its changed lines into the inner def")
    if not result.in_file:
        where = f"cell {result.cell}" if result.cell is not None else result.path
        raise TuneError(f"{result.function} was defined in {where}, not in a .py file: there "
                        "is no file to apply the patch to; paste the diff's new lines into "
                        "the cell (result.patch)")
    p = Path(result.path)
    if path is not None and not _same_file(Path(path), p):
        # a method (a Keras layer's call made in another file) cannot be named as FILE:FUNC
        # there: "tune core.py:call" answered "no function 'call' at module level"
        again = (f"tune {p}:{result.function} to patch that one"
                 if _top_level_def(result.original_source, result.function) else
                 f"{result.function} is a method there: apply the --diff patch to it "
                 "(git apply or patch -p1 from this working directory)")
        raise TuneError(f"{path}: {result.function} was measured in {p}, not in this file: "
                        f"--apply writes only the file it measured; {again}")
    if not result.patched_source:
        return "nothing to apply: no candidate beat the baseline"
    try:
        current = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TuneError(f"{p}: cannot read it to apply the patch: {_why(exc)}") from None
    if current == result.patched_source:
        return f"{p}: already applied, unchanged"
    if result.original_source and current != result.original_source:
        raise TuneError(f"{p} changed since it was tuned: run tfperf tune again")
    if not parses(result.patched_source):
        raise TuneError(f"{p}: the patched text does not parse; nothing written")
    try:
        write_text_atomically(p, result.patched_source)
    except OSError as exc:
        raise TuneError(f"{p}: not patched: {_why(exc)}") from None
    return f"{p}: patched ({result.best_name})"


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.samefile(b)
    except OSError:  # one of them is gone: compare the names
        return a.resolve() == b.resolve()


def _why(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


def _top_level_def(source: str, name: str) -> bool:
    """Whether ``source`` defines ``name`` at module level (what FILE.py:FUNC can name)."""
    import ast

    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return True  # unknown: keep the plain advice
    return any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name
               for n in tree.body)
