"""A magic's statement or cell → a function in the user's namespace; cell names for sites.

Statements are compiled through IPython's own compiler cache (``shell.compile.cache``), as
IPython compiles a cell: the code gets the file name IPython maps to the cell's execution
count (``<ipython-input-12-…>`` in a terminal, ``/tmp/ipykernel_…/….py`` in a kernel), so
tracebacks, the profiler's attribution (``cell 12, line 4``) and ``linecache`` all see it.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from tfperf.notebook.errors import MagicError
from tfperf.profile.attribution import is_user_file

_FUNCTION = "__tfperf_statement__"
_OUTER = "__tfperf_setup__"
_TFPERF_DIR = str(Path(__file__).resolve().parents[1]) + os.sep
_INPUT_NAME = re.compile(r"<ipython-input-(\d+)-")


def _parse(shell: Any, magic: str, source: str, first_line: int) -> ast.Module:
    """IPython syntax (``!cmd``, ``%magic``) made Python, then parsed; lines as in the cell."""
    text = shell.transform_cell(source) if shell is not None else source
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        line = (exc.lineno or 1) + first_line - 1
        raise MagicError(magic, f"syntax error in the statement: {exc.msg} "
                                f"(line {line}: {(exc.text or '').strip()!r})") from None
    if first_line > 1:
        ast.increment_lineno(tree, first_line - 1)
    return tree


def current_cell(shell: Any) -> int:
    """The execution count of the cell running now.

    IPython 9 counts the next cell up before running this one, older IPython after; the
    running cell was the latest IPython cached, which has the highest number either way.
    """
    mapping = getattr(getattr(shell, "compile", None), "_filename_map", None)
    numbers = [n for n in mapping.values() if isinstance(n, int)] if isinstance(
        mapping, dict) else []
    return max(numbers) if numbers else int(getattr(shell, "execution_count", 0))


def _filename(shell: Any, source: str, first_line: int) -> str:
    text = "\n" * (first_line - 1) + source
    if shell is None:
        return "<tfperf-statement>"
    try:
        return shell.compile.cache(text, number=current_cell(shell), raw_code=text)
    except TypeError:  # IPython 7 (Colab): cache(code, number) only
        return shell.compile.cache(text, current_cell(shell))


def make_function(shell: Any, magic: str, source: str, *, first_line: int = 1,
                  setup: str = "") -> Callable[[], Any]:
    """A zero-argument function running ``source`` with the user's namespace as globals.

    The value of a final expression is returned (so the measurement core can wait for the
    tensor it names). Names assigned in ``source`` are local to the function, as in
    ``%timeit``. ``setup`` (line 1, before ``source``) runs once, when the function is made;
    the names it assigns are visible to ``source`` (as closure variables) and nowhere else.
    """
    if not source.strip():
        raise MagicError(magic, "no statement given")
    tree = _parse(shell, magic, source, first_line)
    if not tree.body:
        raise MagicError(magic, "no statement given")
    body = list(tree.body)
    last = body[-1]
    if isinstance(last, ast.Expr):
        body[-1] = ast.copy_location(ast.Return(value=last.value), last)
    wrapper = ast.parse(f"def {_FUNCTION}():\n    pass\n")
    func = wrapper.body[0]
    assert isinstance(func, ast.FunctionDef)
    func.body = body
    func.lineno, func.end_lineno = body[0].lineno, body[-1].end_lineno  # within the cell
    text = source
    if setup.strip():
        before = _parse(shell, magic, setup, 1).body
        outer = ast.parse(f"def {_OUTER}():\n    pass\n")
        outer_fn = outer.body[0]
        assert isinstance(outer_fn, ast.FunctionDef)
        ret = ast.Return(value=ast.Name(id=_FUNCTION, ctx=ast.Load()))
        outer_fn.body = [*before, func, ret]
        outer_fn.lineno = 1
        wrapper = outer
        text, first_line = setup.strip() + "\n" + source, 1
    ast.fix_missing_locations(wrapper)
    filename = _filename(shell, text, first_line)
    try:
        code = compile(wrapper, filename, "exec", _flags(shell), True)
    except SyntaxError as exc:  # 'return' outside function, await, nonlocal...
        raise MagicError(magic, f"cannot run this statement: {exc.msg}") from None
    namespace: dict[str, Any] = {}
    exec(code, _user_ns(shell), namespace)
    if setup.strip():
        try:
            fn = namespace[_OUTER]()
        except Exception as exc:
            raise MagicError(magic, f"the setup raised {type(exc).__name__}: {exc}") from None
    else:
        fn = namespace[_FUNCTION]
    fn.__qualname__ = fn.__name__ = "statement"
    return fn


def compile_cell(shell: Any, magic: str, source: str, *, first_line: int = 1) -> Any:
    """A code object running ``source`` as a cell (names it assigns stay in the namespace)."""
    tree = _parse(shell, magic, source, first_line)
    filename = _filename(shell, source, first_line)
    try:
        return compile(tree, filename, "exec", _flags(shell), True)
    except SyntaxError as exc:
        raise MagicError(magic, f"cannot run this cell: {exc.msg}") from None


def _flags(shell: Any) -> int:
    # The session's `from __future__` imports; IPython's own flags carry no meaning here.
    import __future__

    flags = getattr(getattr(shell, "compile", None), "flags", 0)
    mask = 0
    for name in __future__.all_feature_names:
        mask |= getattr(__future__, name).compiler_flag
    return flags & mask


def _user_ns(shell: Any) -> dict[str, Any]:
    return shell.user_ns if shell is not None else {}


def evaluate(shell: Any, magic: str, expression: str) -> Any:
    """The value of ``expression`` in the user's namespace; a failure is one line."""
    try:
        code = compile(expression, "<tfperf>", "eval")
    except SyntaxError as exc:
        raise MagicError(magic, f"syntax error in {expression!r}: {exc.msg}") from None
    try:
        return eval(code, _user_ns(shell))
    except Exception as exc:
        raise MagicError(magic, f"{expression} raised {type(exc).__name__}: {exc}") from None


# ---------------------------------------------------------------------------------------------
# cells as the reader knows them


def cell_number(shell: Any, filename: str) -> int | None:
    """The execution count of the cell compiled under ``filename``, if IPython knows it."""
    mapping = getattr(getattr(shell, "compile", None), "_filename_map", None)
    if isinstance(mapping, dict) and filename in mapping:  # IPython ≥ 8: every cell's name
        number = mapping[filename]
        return number if isinstance(number, int) else None
    m = _INPUT_NAME.match(filename)
    return int(m.group(1)) if m else None


def site_labeller(shell: Any) -> Callable[[str, int], str]:
    """``(file, line)`` → ``cell 12, line 4`` for a cell, ``path:line`` for a file."""

    def label(path: str, line: int) -> str:
        number = cell_number(shell, path)
        if number is not None:
            return f"cell {number}, line {line}"
        try:
            rel = os.path.relpath(path)
        except ValueError:
            rel = path
        return f"{rel if not rel.startswith('..') else path}:{line}"

    return label


def user_traceback(exc: BaseException) -> BaseException:
    """``exc`` with tfperf's own leading frames (the magic calling the cell) dropped."""
    tb: TracebackType | None = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename.startswith(_TFPERF_DIR) \
            and not is_user_file(tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next
    return exc.with_traceback(tb)


def raised_where(shell: Any, exc: BaseException) -> str:
    """`` (cell 3, line 2)`` for the innermost user frame of ``exc``'s traceback, or ``""``."""
    tb = exc.__traceback__
    where = ""
    label = site_labeller(shell)
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if (cell_number(shell, filename) is not None or is_user_file(filename)) \
                and not filename.startswith(_TFPERF_DIR):
            where = f" ({label(filename, tb.tb_lineno)})"
        tb = tb.tb_next
    return where
