"""Python 2 sources (TF 1.x research code) are linted on a copy normalised in place."""

from __future__ import annotations

import ast

import pytest

from tfperf.cli import main
from tfperf.lint.engine import lint_source, python2_copy
from tfperf.lint.python2 import normalise

# Each Python 2 form, and the Python 3 text it must read as (same lines; columns of the code
# before and around the rewrite kept).
FORMS = [
    ('print "step", i\n', 'print("step", i)\n'),
    ("print\nprint x\n", "print()\nprint(x)\n"),
    ("print >>sys.stderr, x,\nprint x\n", "print(  sys.stderr, x,)\nprint(x)\n"),
    # no blank after `print`: the `>>` itself becomes the parenthesis (review 38, item 3)
    ("print>>sys.stderr, 'x'\nprint x\n", "print( sys.stderr, 'x')\nprint(x)\n"),
    ("print x  # done\n", "print(x)  # done\n"),
    ("if a: print a; b = 1\n", "if a: print(a); b = 1\n"),
    ('exec "x = 1" in ns\n', 'exec("x = 1" ,  ns)\n'),
    ("raise ValueError, 'bad'\n", "raise ValueError( 'bad')\n"),
    ("try:\n    pass\nexcept ValueError, e:\n    pass\n",
     "try:\n    pass\nexcept ValueError as e:\n    pass\n"),
    ("s = `x` + 'a'\n", "s = (x) + 'a'\n"),
    ("os.chmod(p, 0777)\n", "os.chmod(p,  511)\n"),
    ("n = 10L\n", "n = 10 \n"),
    ("p = ur'\\d+'\n", "p =  r'\\d+'\n"),
    ("ok = a <> b\n", "ok = a != b\n"),
]


@pytest.mark.parametrize("py2, py3", FORMS)
def test_each_python2_form_is_normalised_in_place(py2, py3):
    with pytest.raises(SyntaxError):
        ast.parse(py2)
    assert normalise(py2) == py3
    ast.parse(py3)


@pytest.mark.parametrize("source", [
    "print(x)\n",                       # already Python 3: nothing to rewrite
    "print = 3\nprint.x\n",             # the name used as a value
    "def f(:\n",                        # broken in both Pythons
])
def test_python3_or_broken_code_is_not_read_as_python2(source):
    assert python2_copy(source, "m.py") is None


def test_a_newer_pythons_syntax_is_not_taken_for_python2():
    # PEP 758 (3.14) `except A, B:` must keep its "needs a newer Python" TFP000.
    source = "try:\n    pass\nexcept A, B:\n    pass\n"
    assert python2_copy(source, "m.py") is None or ast.parse(source)


TF1_LOOP = """\
import tensorflow as tf

def train(sess, lr, max_iters):
    for it in range(max_iters):
        sess.run(tf.assign(lr, 0.1 * it))
        print 'iter: %d' % it
"""


def test_a_python2_file_gets_the_findings_of_its_python3_twin_on_the_same_lines():
    notes: list[str] = []
    py2 = lint_source(TF1_LOOP, "train.py", tf_version=(1, 15), notes=notes)
    py3 = lint_source(TF1_LOOP.replace("print 'iter: %d' % it", "print('iter: %d' % it)"),
                      "train.py", tf_version=(1, 15))
    assert [f.code for f in py2] == ["TFP703"]
    assert [(f.code, f.location.line, f.location.column) for f in py2] == \
        [(f.code, f.location.line, f.location.column) for f in py3]
    assert notes == ["train.py: read as Python 2 source (print statements and the like "
                     "normalised in a copy; the file is unchanged)"]


def test_print_to_a_stream_with_no_blank_keeps_the_file_linted():
    # `print>>sys.stderr, ...` is a common Python 2 spelling: once broken by the rewrite,
    # the whole file was TFP000 "cannot parse"
    src = "import sys\n" + TF1_LOOP + "        print>>sys.stderr, 'done'\n"
    assert [(f.code, f.location.line) for f in lint_source(src, "train.py",
                                                           tf_version=(1, 15))] == \
        [("TFP703", 6)]


def test_a_file_python2_cannot_read_either_keeps_todays_error():
    found = lint_source("print 'a'\ndef (:\n", "m.py")
    assert [f.code for f in found] == ["TFP000"]


def test_cli_lints_a_python2_file_says_so_once_and_fix_leaves_it_unchanged(tmp_path, capsys):
    f = tmp_path / "train.py"
    f.write_text(TF1_LOOP)
    assert main(["lint", "--no-cache", "--tf-version", "1.15", "--format", "concise",
                 str(f)]) == 1
    captured = capsys.readouterr()
    assert f"{f}:5:" in captured.out and "TFP703" in captured.out
    assert captured.err.count("read as Python 2 source") == 1
    assert main(["lint", "--no-cache", "--tf-version", "1.15", "--fix", str(f)]) == 1
    assert "not fixed" in capsys.readouterr().err
    assert f.read_text() == TF1_LOOP


@pytest.mark.parametrize("clause", ["except Exception, e:", "except (IOError, OSError), err:",
                                    "except tf.errors.OutOfRangeError, e:"])
def test_a_python2_except_binding_alone_is_read_as_python2_not_as_pep758(clause):
    # Python 3.11-3.13 say "multiple exception types must be parenthesized" for both; a
    # lower-case last name is Python 2's binding (a real file was told it needs Python 3.14)
    source = f"try:\n    pass\n{clause}\n    pass\n"
    found = python2_copy(source, "m.py")
    assert found is not None and " as " in found[0]
