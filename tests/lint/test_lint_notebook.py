"""Notebooks: every case of /work/shared/notebooks.md, positions per cell, layout-keeping fixes."""

from __future__ import annotations

import json

import pytest

from tfperf.cli import main
from tfperf.lint import registry
from tfperf.lint.engine import Dispatcher
from tfperf.lint.notebook import Cell, mask_cell
from tfperf.lint.runner import lint_file

LOOP_CELL = ["acc = tf.zeros([2])\n", "for i in range(t.shape[0]):\n", "    acc += t[i]\n"]


def nb(*sources, language="python", outputs=None):
    cells = [{"cell_type": "markdown", "metadata": {}, "source": ["# A notebook\n"]}]
    for i, src in enumerate(sources, 1):
        cells.append({"cell_type": "code", "execution_count": i, "metadata": {},
                      "outputs": outputs or [], "source": src})
    return {"cells": cells, "metadata": {"kernelspec": {"language": language,
                                                        "name": "k", "display_name": "K"}},
            "nbformat": 4, "nbformat_minor": 5}


def write_nb(tmp_path, notebook, name="n.ipynb"):
    p = tmp_path / name
    p.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n")
    return p


def lint(path):
    return lint_file(path, Dispatcher(registry.all_rules()))


@pytest.mark.parametrize("cell", [
    "if x:\n    %time f()\n",                 # magic alone in a block: placeholder
    "%timeit f()\n!pip install x\n",
    "%%time\nx = f()\n",
    "%%capture out\nx = f()\n",
    "x = !ls\nfiles = %sx ls -la\n",
    "len?\nlen??\n?len\n",
    "%load_ext \\\n    autoreload\n",        # continuation of a magic
    "!echo a \\\n   b\n",
    "pip install tensorflow\n",             # automagic: a one-line cell
    "\n\ncd data\n",                       # leading blank lines do not count
    "    x = 1\n    y = x\n",                # uniformly indented: dedented
    "x = (10\n     % 3)\n",                  # modulo on a continued line stays Python
    "s = '''\n%not a magic\n'''\n",
])
def test_ipython_syntax_is_masked_into_valid_python(cell):
    import ast

    masked = mask_cell(Cell(1, cell))
    ast.parse(masked.masked)
    assert masked.masked.count("\n") == cell.count("\n")  # lines map 1:1


@pytest.mark.parametrize(("cell", "masked"), [
    # Each search of the magic test alone finds its candidate; blank lines at column 0.
    ("x = 1\nobj?\n", "x = 1\npass\n"),
    ("x = 1\nfiles = !ls\n", "x = 1\npass\n"),
    ("x = 1\n; f a\n", "x = 1\npass\n"),
    ("x = 1 \t\n\t\ny = 2\n", "x = 1 \t\n\ny = 2\n"),
    ("x = 1\n  ", "x = 1\n"),
    ("x = 10 % 3\ny = a != b\n", "x = 10 % 3\ny = a != b\n"),
])
def test_magic_candidates_and_blank_lines_of_a_cell(cell, masked):
    assert mask_cell(Cell(1, cell)).masked == masked


def test_modulo_continuation_is_kept():
    masked = mask_cell(Cell(1, "x = (10\n     % 3)\n")).masked
    assert "% 3" in masked


@pytest.mark.parametrize("magic", ["%%bash", "%%writefile f.py", "%%html", "%%javascript"])
def test_non_python_cell_magics_are_skipped(tmp_path, magic):
    p = write_nb(tmp_path, nb([f"{magic}\n", "for x in; do echo $x; done\n"],
                           ["import tensorflow as tf\n", "t = tf.ones([3, 2])\n", *LOOP_CELL]))
    found = lint(p).findings
    assert "TFP000" not in [f.code for f in found]
    assert "TFP102" in [f.code for f in found]


def test_positions_are_cell_and_line_and_broken_cells_are_reported(tmp_path):
    p = write_nb(tmp_path, nb(["import tensorflow as tf\n", "t = tf.ones([3, 2])\n"],
                           ["print 'python 2'\n"],
                           ["x = ___\n", "def (\n"],
                           LOOP_CELL))
    found = lint(p).findings
    errors = [f for f in found if f.code == "TFP000"]
    assert [e.location.cell for e in errors] == [3, 4]  # cell 1 is markdown
    tfp102 = next(f for f in found if f.code == "TFP102")
    assert (tfp102.location.cell, tfp102.location.line, tfp102.location.column) == (5, 3, 4)


def test_a_broken_cell_is_reported_as_the_cell_alone_reads(tmp_path):
    # Cells are parsed once each, in place in the joined module: the error still gives the
    # line and message of the cell on its own, and names bound in earlier cells resolve.
    p = write_nb(tmp_path, nb(["import tensorflow as tf\n", "\n", "t = tf.ones([3, 2])\n"],
                           ["y = 1\n", "def f(x):\n", "pass\n"],
                           LOOP_CELL))
    found = lint(p).findings
    error = next(f for f in found if f.code == "TFP000")
    assert (error.location.cell, error.location.line) == (3, 3)
    assert "on line 2" in error.message  # the def's line in its cell, not in the module
    assert [(f.location.cell, f.location.line) for f in found if f.code == "TFP102"] == [(4, 3)]


def test_dedented_cell_columns_map_back(tmp_path):
    p = write_nb(tmp_path, nb(["import tensorflow as tf\n", "t = tf.ones([3, 2])\n"],
                           ["  " + line for line in LOOP_CELL]))
    f = next(f for f in lint(p).findings if f.code == "TFP102")
    assert (f.location.cell, f.location.line, f.location.column) == (3, 3, 6)


def test_a_cell_of_blank_lines_with_spaces_is_linted_not_a_crash(tmp_path):
    # Found on a real notebook: textwrap.dedent turns "  \n\t\n" into "\n\n", so the cell
    # looked indented but had no line to measure the indent on (StopIteration in a worker).
    p = write_nb(tmp_path, nb(["import tensorflow as tf\n", "t = tf.ones([3, 2])\n"],
                           ["  \n", "\t\n"], LOOP_CELL))
    f = next(f for f in lint(p).findings if f.code == "TFP102")
    assert (f.location.cell, f.location.line) == (4, 3)


def test_non_python_kernel_is_said_not_reported(tmp_path, capsys):
    p = write_nb(tmp_path, nb(["x <- c(1, 2)\n"], language="R"))
    assert main(["lint", "--no-cache", str(p)]) == 0
    assert "kernel language is R" in capsys.readouterr().err


@pytest.mark.parametrize("spec", [{"name": "swift", "display_name": "Swift"},
                                  {"name": "ir", "display_name": "R"},
                                  {"name": "julia-1.9", "display_name": "Julia 1.9.0"}])
def test_a_kernel_named_for_another_language_is_skipped(tmp_path, spec):
    # Colab's Swift for TensorFlow notebooks name the kernel and say no `language`: their
    # Swift was parsed as Python, one TFP000 per cell (precision round 15, 18 of 26).
    notebook = nb(["let x = Tensor<Float>([1, 2])\n"], ["print(x)\n"])
    notebook["metadata"] = {"kernelspec": spec}
    result = lint(write_nb(tmp_path, notebook))
    assert result.findings == []
    assert any("kernel language is" in n for n in result.notes)


@pytest.mark.parametrize("spec", [{"name": "python3", "display_name": "Python 3"},
                                  {"name": "tf2", "display_name": "TensorFlow 2"},
                                  {"name": "conda-env-ml-py",
                                   "display_name": "Python [conda env:ml]"},
                                  {}])
def test_a_kernel_named_anything_else_is_read_as_python(tmp_path, spec):
    notebook = nb(["import tensorflow as tf\n", "t = tf.ones([3, 2])\n"], LOOP_CELL)
    notebook["metadata"] = {"kernelspec": spec} if spec else {}
    assert "TFP102" in [f.code for f in lint(write_nb(tmp_path, notebook)).findings]


def test_invalid_json_is_tfp000(tmp_path):
    p = tmp_path / "bad.ipynb"
    p.write_text("{not json")
    assert [f.code for f in lint(p).findings] == ["TFP000"]


def test_fix_keeps_layout_and_outputs(tmp_path):
    outputs = [{"output_type": "stream", "name": "stdout", "text": ["é ok\n"]}]
    notebook = nb(["import tensorflow as tf\n", "t = tf.ones([3, 2])\n"], LOOP_CELL,
                  outputs=outputs)
    p = write_nb(tmp_path, notebook)
    before = p.read_text()
    assert main(["lint", "--unsafe-fixes", "--no-cache", str(p)]) in (0, 1)
    after = p.read_text()
    assert after != before and after.endswith("}\n")
    fixed = json.loads(after)
    assert fixed["cells"][2]["source"] == ["acc = tf.zeros([2])\n",
                                           "acc += tf.reduce_sum(t, axis=0)\n"]
    assert [c["outputs"] for c in fixed["cells"][1:]] == [outputs, outputs]
    # Only the fixed cell's lines changed: same indentation, key order, non-ASCII kept.
    notebook["cells"][2]["source"] = fixed["cells"][2]["source"]
    assert after == json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"


FIXTURE = __import__("pathlib").Path(__file__).parent / "fixtures" / "ipython_shapes.ipynb"


@pytest.fixture(scope="module")
def ipython(tmp_path_factory):
    """IPython's own reading of a cell: InteractiveShell.transform_cell (the static
    TransformerManager transforms, then automagic for one-line cells)."""
    import os

    pytest.importorskip("IPython")
    os.environ.setdefault("IPYTHONDIR", str(tmp_path_factory.mktemp("ipython")))
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.history_manager.enabled = False
    return shell


def _ipython_valid(shell, source):
    """IPython's own verdict: the installed IPython's, or that of IPython 7.0-9.0.1, whose
    dedent differs (benchmarks/lint_fixes/notebook_oracle.py)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "lint_fixes"))
    from notebook_oracle import first_line_dedent, ipython_valid

    names = [getattr(t, "__name__", "") for t in shell.input_transformer_manager
             .cleanup_transforms]
    assert "leading_indent" in names and first_line_dedent not in names
    return ipython_valid(shell, source)


def test_tfp000_exactly_where_ipython_cannot_make_python(ipython):
    from tfperf.lint.notebook import build_module, read_notebook

    _, cells, _, _ = read_notebook(FIXTURE.read_text(), str(FIXTURE))
    module = build_module(cells, str(FIXTURE))
    invalid = []
    for index, cell in module.cells.items():
        ipy_ok = _ipython_valid(ipython, cell.source)
        assert (cell.error is None) == ipy_ok, (index, cell.source, cell.error)
        if not ipy_ok:
            invalid.append(index)
    assert len(invalid) >= 6  # the fixture has genuinely broken cells too


def test_an_assignment_or_call_is_never_an_automagic(tmp_path):
    # `history` and `tensorboard` are magic names; continued on the next line, the line is
    # still Python, and the cell is analysed (its loop is found).
    p = write_nb(tmp_path, nb(["import tensorflow as tf\n", "t = tf.ones([3, 2])\n"],
                              ["history = model.fit(x,\n", "    epochs=2)\n", *LOOP_CELL],
                              ["tensorboard = make(\n", "    log_dir='x')\n"]))
    found = lint(p).findings
    assert "TFP000" not in [f.code for f in found]
    assert [(f.location.cell, f.location.line) for f in found if f.code == "TFP102"] == [(3, 5)]


def test_automagic_in_a_cell_of_several_lines_is_a_syntax_error(tmp_path):
    # IPython applies automagic only to one-line cells: this cell fails in IPython too.
    p = write_nb(tmp_path, nb(["import os\n", "pip install foo\n"], ["pip install foo\n"]))
    errors = [f for f in lint(p).findings if f.code == "TFP000"]
    assert [f.location.cell for f in errors] == [2]


def test_cell_magic_with_a_body_that_is_not_python_is_skipped(tmp_path):
    p = write_nb(tmp_path, nb(["%%time\n", "for i in range(3):\n", "f(i)\n"]))
    assert [f.code for f in lint(p).findings] == []


RETRACE_CELL = ["@tf.function\n", "def step(i):\n", "    return tf.cast(i, tf.float32) * 2.0\n",
                "for i in range(100):\n", "    step(i)\n"]


@pytest.mark.parametrize("first", [
    ["%tensorflow_version 2.x\n"],                 # Colab: the runtime's kernel has `tf`
    ["print 'TF', tf.__version__\n", "import tensorflow as tf\n"],  # import in a broken cell
])
def test_tf_that_no_saved_cell_binds_comes_from_the_kernel(tmp_path, first):
    # A notebook's `tf` that no analysed cell binds was bound in the kernel (a cell deleted,
    # one that does not parse, `%run`): read as TensorFlow, every rule gated on TF runs.
    p = write_nb(tmp_path, nb(first, RETRACE_CELL))
    found = [f for f in lint(p).findings if f.code != "TFP000"]
    assert [(f.code, f.location.cell, f.location.line) for f in found] == [("TFP301", 3, 5)]
    # A plain module is not a kernel: an unbound `tf` there stays unknown.
    py = tmp_path / "m.py"
    py.write_text("".join(RETRACE_CELL))
    assert lint(py).findings == []


def test_a_tf_bound_in_the_notebook_to_something_else_is_not_guessed(tmp_path):
    p = write_nb(tmp_path, nb(["tf = load_config()\n"], RETRACE_CELL))
    assert lint(p).findings == []


# ------------------------------------------------------------------ cells IPython dedents


# The shape of tensorflow/docs site/en/r1/tutorials/eager/custom_layers.ipynb cell 20: the
# first line indented by one space, the last at column 0. IPython 7.0-9.0.1 (Colab's 7.34)
# take the first line's indentation off each line that has it and run the cell.
INDENTED_FIRST_LINE = [" model = tf.keras.Sequential([tf.keras.layers.Dense(4),\n",
                       "                              tf.keras.layers.Dense(2)])\n",
                       "model(tf.zeros([1, 3]))\n"]


def test_a_cell_ipython_dedents_by_its_first_line_is_not_a_syntax_error(tmp_path):
    p = write_nb(tmp_path, nb(["import tensorflow as tf\n"], INDENTED_FIRST_LINE))
    assert [f for f in lint(p).findings if f.code == "TFP000"] == []


def test_positions_and_fixes_in_a_cell_dedented_by_its_first_line(tmp_path):
    cell = [" import tensorflow as tf\n", " @tf.function\n", " def step(i):\n",
            "     return tf.cast(i, tf.float32) * 2.0\n", "for i in range(100):\n",
            "    step(i)\n"]
    p = write_nb(tmp_path, nb(cell))
    [f] = lint(p).findings
    # `step` stands at column 4 of line 6 in the cell as stored (3 once dedented).
    assert (f.code, f.location.cell, f.location.line, f.location.column) == ("TFP301", 2, 6, 4)
    assert main(["lint", "--no-cache", "--unsafe-fixes", str(p)]) == 0
    fixed = json.loads(p.read_text())["cells"][1]["source"]
    assert fixed == [*cell[:5], "    step(tf.constant(i))\n"]


# ------------------------------------------------------------------ a newer Python's syntax

PEP701_CELL = ["row = {\"a\": 1}\n", "print(f\"{row[\"a\"]}\")\n"]  # f"{row["a"]}"


def test_a_cell_of_a_newer_python_says_which_python_it_needs(tmp_path):
    import sys

    notebook = nb(["import tensorflow as tf\n"], PEP701_CELL, LOOP_CELL)
    notebook["metadata"]["language_info"] = {"name": "python", "version": "3.13.1"}
    found = lint(write_nb(tmp_path, notebook)).findings
    errors = [f for f in found if f.code == "TFP000"]
    if sys.version_info >= (3, 12):  # PEP 701 is this Python's own syntax
        assert errors == []
        return
    [error] = errors
    running = f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert error.message == (
        "cannot parse cell 3: needs Python 3.12 or newer (PEP 701 f-string; the notebook's "
        f"kernel is Python 3.13); tfperf runs on {running}")
    assert (error.location.cell, error.location.line) == (3, 2)
    assert "run it on the Python the code is written for" in error.hint
    assert [f.location.cell for f in found if f.code == "TFP102"] == [4]  # the rest is linted


def test_a_broken_cell_of_a_newer_kernel_names_the_kernel(tmp_path):
    notebook = nb(["x = = 1\n"])
    notebook["metadata"]["language_info"] = {"name": "python", "version": "3.99.0"}
    [error] = lint(write_nb(tmp_path, notebook)).findings
    assert error.message.startswith("cannot parse cell 2: invalid syntax on Python 3.")
    assert error.message.endswith("the notebook's kernel is Python 3.99, whose syntax may be "
                                  "newer")
    notebook["metadata"]["language_info"]["version"] = "3.8.10"  # older: the bare error
    [error] = lint(write_nb(tmp_path, notebook)).findings
    assert error.message == "cannot parse cell 2: invalid syntax"
