"""TFP000 names the Python a file needs when it is syntax of a newer one (issue 24)."""

from __future__ import annotations

import ast
import sys

import pytest

from tfperf.cli import main
from tfperf.lint.newer_syntax import newer_syntax, pep701_fstrings

OLD = sys.version_info < (3, 12)
needs_311 = pytest.mark.skipif(not OLD, reason="this Python parses 3.12's syntax itself")


def _error(source: str) -> SyntaxError:
    with pytest.raises(SyntaxError) as caught:
        ast.parse(source)
    return caught.value


@needs_311
@pytest.mark.parametrize(("source", "version", "feature"), [
    ('x = {"a": 1}\ny = f"{x["a"]}"\n', (3, 12), "PEP 701 f-string"),   # its own quote
    ('y = f"{f"{1}"}"\n', (3, 12), "PEP 701 f-string"),                # nested, same quotes
    ('y = f"{"\\n".join(a)}"\n', (3, 12), "PEP 701 f-string"),         # a backslash
    ("y = f'{\"\\\\n\".join(a)}'\n", (3, 12), "PEP 701 f-string"),     # one in a string
    ('y = f"""{x # note\n}"""\n', (3, 12), "PEP 701 f-string"),        # a comment
    ('y = f"{x +\n 1}"\n', (3, 12), "PEP 701 f-string"),               # a line break
    ('y = f"{x:{"w"}}"\n', (3, 12), "PEP 701 f-string"),               # in the format spec
    ("type Vector = list[float]\n", (3, 12), "PEP 695 type statement"),
    ("def first[T](xs: list[T]) -> T:\n    return xs[0]\n", (3, 12), "PEP 695 type parameters"),
    ("class Box[T]:\n    pass\n", (3, 12), "PEP 695 type parameters"),
    ("try:\n    pass\nexcept A, B:\n    pass\n", (3, 14), "PEP 758 except without parentheses"),
    ('x = t"hi {name}"\n', (3, 14), "PEP 750 template string"),
])
def test_newer_syntax_is_named(source, version, feature):
    assert newer_syntax(source, _error(source)) == (version, feature)


@pytest.mark.parametrize("source", [
    'y = f"{x[}"\n',                       # brackets that do not match: broken on 3.12 too
    'y = f"{}"\n',                          # an empty field
    'y = f"{x!r}"\nz = (\n',                # a valid f-string before an unrelated error
    'y = f"""{x["a"]}"""\nz = (\n',         # same quotes inside triple quotes: 3.11 syntax
    'print "python 2"\n',
    "x = \"don't\" + 't'\nprint 1\n",       # `t'` inside strings is no template string
    "try:\n    pass\nexcept A, B as e:\n    pass\n",  # invalid on 3.14 as well
])
def test_plain_syntax_errors_are_not_blamed_on_a_newer_python(source):
    assert newer_syntax(source, _error(source), running=(3, 11)) is None


def test_only_f_strings_pep_701_alone_parses_are_found():
    source = 'a = f"{x}"\nb = f"{d["k"]}"\nc = "{d["k"]}"\n'
    assert pep701_fstrings(source) == [(2, 2)]


@needs_311
def test_a_newer_python_is_not_claimed_where_this_one_has_the_syntax():
    source = 'y = f"{x["a"]}"\n'
    assert newer_syntax(source, _error(source), running=(3, 12)) is None


@needs_311
def test_a_py_file_of_a_newer_python_gets_tfp000_saying_so(tmp_path, capsys):
    f = tmp_path / "m.py"
    f.write_text("import tensorflow as tf\ndef first[T](xs: list[T]) -> T:\n    return xs[0]\n")
    assert main(["lint", "--no-cache", "--format", "concise", str(f)]) == 1
    out = capsys.readouterr().out
    running = f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert (f"{f}:2:10: TFP000 cannot parse: needs Python 3.12 or newer (PEP 695 type "
            f"parameters); tfperf runs on {running}") in out
