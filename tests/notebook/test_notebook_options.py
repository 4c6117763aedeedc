"""How a magic line is read (options, statements), and statements compiled on an older
IPython's compiler (no ``raw_code``, no file-name map: IPython 7, as Colab runs)."""

from __future__ import annotations

import linecache

import pytest

from tfperf.notebook.errors import MagicError
from tfperf.notebook.options import Option, parse_anywhere, parse_leading, split_words
from tfperf.notebook.statement import cell_number, make_function, site_labeller

OPTS = (Option(("-n",), "number", int), Option(("-q",), "quiet", bool),
        Option(("--budget",), "budget", float), Option(("--baseline",), "baseline", str))


@pytest.mark.parametrize("line, values, rest", [
    ("-n 5 -q f(x, y)", {"number": 5, "quiet": True}, "f(x, y)"),
    ("-n5 --budget=0.5 f( x )", {"number": 5, "budget": 0.5}, "f( x )"),
    ("-- -x", {}, "-x"),
    ("x - 1", {}, "x - 1"),
    ("-1 + x", {}, "-1 + x"),  # a negative number is not an option
])
def test_leading_options_then_the_statement_as_typed(line, values, rest):
    got, tail = parse_leading("m", line, OPTS, "STMT")
    assert {k: v for k, v in got.items() if v} == values
    assert tail == rest


def test_split_words_keeps_brackets_and_strings_whole():
    assert split_words("f(a, b) g('x y', [1, 2]) h=k( 1 ) --baseline f") == [
        "f(a, b)", "g('x y', [1, 2])", "h=k( 1 )", "--baseline", "f"]
    assert split_words('s("""a b""") t') == ['s("""a b""")', "t"]


def test_options_anywhere():
    got, rest = parse_anywhere("m", split_words("a(x) --baseline a b(x) -q"), OPTS, "")
    assert rest == ["a(x)", "b(x)"] and got["baseline"] == "a" and got["quiet"]
    with pytest.raises(MagicError, match="--baseline wants a value"):
        parse_anywhere("m", ["a(x)", "--baseline"], OPTS, "")


class _OldCompiler:
    """IPython 7's CachingCompiler: ``cache(code, number)``, no ``_filename_map``."""

    flags = 0

    def cache(self, code: str, number: int = 0) -> str:
        name = f"<ipython-input-{number}-0123456789ab>"
        linecache.cache[name] = (len(code), None, code.splitlines(True), name)
        return name


class _OldShell:
    execution_count = 7

    def __init__(self):
        self.compile = _OldCompiler()
        self.user_ns = {"k": 3}

    def transform_cell(self, text: str) -> str:
        return text


def test_statements_compile_on_ipython_7_and_sites_are_named_by_cell():
    shell = _OldShell()
    fn = make_function(shell, "m", "y = k * 2\ny + 1")
    assert fn() == 7
    filename = fn.__code__.co_filename
    assert cell_number(shell, filename) == 7
    assert site_labeller(shell)(filename, 2) == "cell 7, line 2"
    with pytest.raises(MagicError, match="no statement given"):
        make_function(shell, "m", "   ")
