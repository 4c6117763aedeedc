"""``%tfcompare``: statements → variants → :func:`tfperf.bench.compare` → its report shown.

Each statement becomes a zero-argument function in the user's namespace (as ``%tftimeit``
does), so the comparison runs every variant on the very objects the notebook holds; the
outputs are checked against the baseline's as ``tfperf bench`` checks them.
"""

from __future__ import annotations

import ast
import re
import tempfile
from pathlib import Path
from typing import Any

from tfperf.notebook import display
from tfperf.notebook.errors import MagicError
from tfperf.notebook.statement import make_function

DEFAULT_BUDGET = 3.0
_NAMED = re.compile(r"^([A-Za-z_]\w*)\s*=(?!=)\s*(.+)$", re.S)


def _default_name(statement: str) -> str:
    """``slow(x)`` → ``slow``, ``tf.reduce_sum(x)`` → ``tf.reduce_sum``; else the text."""
    try:
        node = ast.parse(statement.strip(), mode="eval").body
    except SyntaxError:
        return statement.strip()
    if isinstance(node, ast.Call):
        try:
            return ast.unparse(node.func)
        except Exception:  # unparse of an odd node: fall back to the text
            return statement.strip()
    return statement.strip()


def line_statements(words: list[str]) -> list[tuple[int, str]]:
    """The line form's words → its statements: spaces and ``;`` outside brackets and strings
    both separate them (``%tfcompare a(x); b(x)``). A trailing ``;`` (IPython's habit to hide
    a value) is dropped; an empty statement before a ``;`` is an error."""
    if words and words[-1] == ";":
        words = words[:-1]
    for before, word in zip([";", *words], words, strict=False):
        if word == ";" == before:
            raise MagicError("tfcompare", "an empty statement before ';' (give one statement "
                                          "between separators: %tfcompare a(x); b(x))")
    return [(1, w) for w in words if w != ";"]


def variants_from(shell: Any, lines: list[tuple[int, str]]) -> dict[str, Any]:
    """``[(cell line, text)]`` → name → function; ``NAME=STATEMENT`` names one."""
    named: list[tuple[str, str, int]] = []
    for line_no, text in lines:
        m = _NAMED.match(text.strip())
        if re.fullmatch(r"[A-Za-z_]\w*\s*=", text.strip()):
            raise MagicError("tfcompare", f"{text.strip()!r} names a variant but gives no "
                                          "statement (write NAME=STATEMENT without spaces, "
                                          "or one per line in %%tfcompare)")
        if m and m.group(1).isidentifier():
            named.append((m.group(1), m.group(2), line_no))
        else:
            named.append((_default_name(text), text.strip(), line_no))
    for _, stmt, line_no in named:
        _refuse_ipython_syntax(shell, stmt, line_no)
    if len(named) < 2:
        raise MagicError("tfcompare", "give at least two statements to compare "
                                      "(e.g. %tfcompare slow(x) fast(x))")
    names = [n for n, _, _ in named]
    if len(set(names)) != len(names):  # f(a) f(b): name them by their text
        named = [(s if names.count(n) > 1 else n, s, ln) for n, s, ln in named]
        names = [n for n, _, _ in named]
        if len(set(names)) != len(names):
            raise MagicError("tfcompare", f"two variants are the same statement: {names}")
    return {name: make_function(shell, "tfcompare", stmt, first_line=ln)
            for name, stmt, ln in named}


def _refuse_ipython_syntax(shell: Any, statement: str, line_no: int) -> None:
    """A magic or shell line (``%timeit f(x)``, ``!pip list``) is no variant: timed, it ran
    the command every round and was "NOT EQUIVALENT" (its output None) in the table."""
    if shell is None or "get_ipython()" in statement:
        return
    if "get_ipython()" in shell.transform_cell(statement):
        raise MagicError("tfcompare", f"line {line_no}: {statement.strip()!r} is a magic or "
                                      "shell command, not a statement to time (a variant "
                                      "is Python: f(x))")


def compare_statements(shell: Any, lines: list[tuple[int, str]], *, baseline: str | None,
                       budget: float | None, check: bool, plot: bool, quiet: bool) -> Any:
    variants = variants_from(shell, lines)  # a statement that does not parse fails first
    from tfperf.bench.comparison import compare

    if baseline is not None and baseline not in variants:
        raise MagicError("tfcompare", f"--baseline {baseline!r} is not one of the variants "
                                      f"{list(variants)}")
    progress = display.Progress(shell, "tfcompare", enabled=not quiet)
    try:
        report = compare(variants, baseline=baseline, budget=budget or DEFAULT_BUDGET,
                         check_equivalence=check, progress=progress, interruptible=True)
    except BaseException:
        progress.close()
        raise
    if not quiet:
        progress.finish(report)
        if plot:
            display.show(_plot(report))
    return report


def _plot(report: Any) -> Any:
    from IPython.display import Image

    from tfperf.bench.plot import PlotError

    # The image is embedded (its bytes read here), so the file need not outlive the call:
    # a folder left per plot would pile up in the temp directory.
    with tempfile.TemporaryDirectory(prefix="tfperf-compare-") as tmp:
        path = Path(tmp) / "compare.png"
        try:
            report.plot(path)
        except PlotError as exc:
            return display.Rendering(f"no plot: {exc}")
        return Image(data=path.read_bytes(), format="png")
