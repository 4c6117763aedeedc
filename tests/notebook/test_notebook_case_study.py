"""The case-study notebook (examples/notebooks/case_study.ipynb) run end to end by nbclient on
a real kernel, and its outputs checked."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

nbclient = pytest.importorskip("nbclient")
nbformat = pytest.importorskip("nbformat")
pytest.importorskip("ipykernel")
pytest.importorskip("tensorflow")

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "examples" / "notebooks" / "case_study.ipynb"

pytestmark = [pytest.mark.tf, pytest.mark.slow]


def _outputs(cell) -> tuple[str, str]:
    """(text/plain of every output and stream, text/html of every output) of a cell."""
    text, html = [], []
    for o in cell.get("outputs", []):
        if o.get("output_type") == "stream":
            text.append(o.get("text", ""))
        data = o.get("data", {})
        text.append(data.get("text/plain", ""))
        html.append(data.get("text/html", ""))
    return "\n".join(text), "\n".join(html)


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    for cell in nb.cells:  # the committed outputs must not be what is checked
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    src = str(ROOT / "src")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (src, os.environ.get("PYTHONPATH", "")) if p)}
    client = nbclient.NotebookClient(nb, timeout=180, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path_factory
                                                                         .mktemp("nb"))}})
    client.execute(env=env)  # a cell that raises fails here (CellExecutionError)
    return {cell.source.splitlines()[0]: cell for cell in nb.cells if cell.cell_type == "code"}


def _cell(executed, first_line: str):
    return next(c for head, c in executed.items() if head.startswith(first_line))


def test_doctor_cell_shows_its_report_as_html(executed):
    text, html = _outputs(_cell(executed, "%tfdoctor"))
    assert "tfperf doctor" in text and "System and TensorFlow" in text
    assert "<table>" in html and "tensorflow" in html


def test_lint_cell_names_the_loop_by_cell_and_line(executed):
    slow = _cell(executed, "def compute_feature_tf_slow").execution_count
    text, html = _outputs(_cell(executed, "%tflint"))
    for code, line in (("TFP101", 4), ("TFP102", 8), ("TFP103", 9)):
        assert re.search(rf"cell {slow}, line {line}, col \d+: {code} ", text), text
    assert "<table>" in html


def test_timeit_cell_reports_the_xla_compile_apart(executed):
    text, _ = _outputs(_cell(executed, "%tftimeit"))
    assert re.search(r"per loop \(median ± IQR/2 of \d+ runs, \d+ loops? each\); first call "
                     r"[\d.]+ \w?s \(trace [\d.]+ \w?s \+ XLA compile [\d.]+ \w?s\)", text), text


def test_compare_cell_shows_every_variant_equivalent_and_faster(executed):
    text, html = _outputs(_cell(executed, "%%tfcompare"))
    assert "loop (baseline)" in text
    for name in ("vectorised", "xla", "einsum"):
        row = next(line for line in text.splitlines() if line.startswith(name))
        speedup = float(re.search(r"([\d,.]+)×", row).group(1).replace(",", ""))
        assert speedup > 1 and " yes " in row, row
    assert '<table class="sortable">' in html and '<td data-value="einsum">einsum</td>' in html


def test_profile_cell_charges_the_loop_line(executed):
    slow = _cell(executed, "def compute_feature_tf_slow").execution_count
    text, _ = _outputs(_cell(executed, "%%tfprofile"))
    assert re.search(rf"cell {slow}, line 8 +[\d,]+ ", text), text  # the accumulation line
    assert f"cell {slow}, line 8: profile.eager_ops" in text
