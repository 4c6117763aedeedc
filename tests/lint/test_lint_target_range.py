"""A targeted TensorFlow is a range: the oldest release a project's pin admits and the newest.

Rules ask the oldest first; a rule whose advice needs a later release (TFP403: a triangular
solve broadcasts batch axes from TF 2.2) reports when the newest admitted has it.
"""

from __future__ import annotations

import pytest

from tfperf.lint.session import LintRequest, run
from tfperf.lint.target import (
    NEWEST_KNOWN,
    TargetError,
    admitted_newest,
    notebook_pin,
    parse_target,
    project_pin,
)

TILED_SOLVE = """\
import tensorflow as tf


def kl_trace(chol, rhs, n):
    chol_b = tf.tile(tf.expand_dims(chol, 0), [n, 1, 1])
    return tf.reduce_sum(tf.linalg.triangular_solve(chol_b, rhs, lower=True))
"""


@pytest.mark.parametrize(("text", "expected"), [
    ("2.1", ((2, 1), (2, 1))),
    (">=2.1", ((2, 1), NEWEST_KNOWN)),
    (">=2.0,<2.2", ((2, 0), (2, 1))),
    ("==1.15", ((1, 15), (1, 15))),
])
def test_a_setting_is_a_release_or_a_range(text, expected):
    assert parse_target(text) == expected


@pytest.mark.parametrize("text", ["two", ">=two", "<=", "2"])
def test_a_malformed_setting_is_a_clear_error(text):
    with pytest.raises(TargetError, match="tf-version must look like"):
        parse_target(text)


@pytest.mark.parametrize(("line", "newest"), [
    ("tensorflow==2.1.0", (2, 1)),
    ("tensorflow>=1.7.0", NEWEST_KNOWN),
    ("tensorflow~=2.4", NEWEST_KNOWN),
    ("tensorflow~=2.4.1", (2, 4)),
    ("tensorflow>=2.0.0, <2.1.0", (2, 0)),
    ("tensorflow<2", (1, 15)),
    ("tensorflow-gpu>=1.4,<=1.12", (1, 12)),
    ("tensorflow", None),
    ("tensorflow-datasets>=4", None),
])
def test_the_newest_release_a_requirement_admits(line, newest):
    assert admitted_newest(line) == newest


def test_a_project_pin_is_a_range_unless_a_file_locks_it(tmp_path):
    (tmp_path / "setup.py").write_text('setup(install_requires=["tensorflow>=2.1.0"])\n')
    pin = project_pin(tmp_path)
    assert pin is not None and (pin.version, pin.upper) == ((2, 1), NEWEST_KNOWN)
    (tmp_path / "requirements.txt").write_text("tensorflow==2.1.0\n")
    pin = project_pin(tmp_path)
    assert pin is not None and (pin.version, pin.upper) == ((2, 1), (2, 1))


def test_a_notebook_pin_is_a_range_too():
    pin = notebook_pin(["!pip install 'tensorflow>=2.1'\n"])
    assert pin is not None and (pin.version, pin.upper) == ((2, 1), NEWEST_KNOWN)
    pin = notebook_pin(["!pip install tensorflow==2.1.0\n"])
    assert pin is not None and pin.upper == (2, 1)


def _tfp403(project, pin=None, setting=None):
    if pin is not None:
        (project / "setup.py").write_text(f'setup(install_requires=["{pin}"])\n')
    (project / "kl.py").write_text(TILED_SOLVE)
    outcome = run(LintRequest(paths=[str(project)], select=["TFP403"], cache=False,
                              tf_version=setting))
    return [f for f in outcome.findings if f.code == "TFP403"]


def test_tfp403_reports_a_tiled_solve_when_the_pin_admits_tf_2_2(tmp_path):
    found = _tfp403(tmp_path, pin="tensorflow>=2.1.0")
    assert [f.location.line for f in found] == [5]
    assert "from TF 2.2" in found[0].message and "version test" in found[0].message


@pytest.mark.parametrize("pin", ["tensorflow==2.1.0", "tensorflow>=2.0,<2.2"])
def test_tfp403_is_silent_when_no_admitted_release_broadcasts(tmp_path, pin):
    assert _tfp403(tmp_path, pin=pin) == []


def test_the_setting_decides_over_the_pin(tmp_path):
    assert _tfp403(tmp_path, pin="tensorflow>=2.1.0", setting="2.1") == []
    found = _tfp403(tmp_path, pin="tensorflow==2.1.0", setting=">=2.1")
    assert len(found) == 1
    found = _tfp403(tmp_path, pin="tensorflow==2.1.0", setting="2.4")
    assert len(found) == 1 and "from TF 2.2" not in found[0].message


@pytest.mark.parametrize(("version", "source", "after", "expected"), [
    ("2.1", "setup.py: tensorflow>=2.1.0", "", (">=2.1.0", ">=2.1.0")),
    ("2.0", "setup.py: tensorflow>=2.0.0, <2.1.0", "", (">=2.0.0,<2.1.0", ">=2.0.0,<2.1.0")),
    ("1.6", "README.md: TensorFlow >= 1.6", "", (">=1.6", ">=1.6")),
    ("0.12", "setup.py: tensorflow==0.12.1", "", ("0.12", "0.12")),
    ("0.9", "README.md: at least version 0.9 (setup.py: tensorflow>=0.7.1)", "", ("0.9", "0.9")),
    ("1.7", "requirements.txt: tensorflow>=1.7.0", "1.13", (">=1.7.0", "1.13")),
    ("2.2", "setup.py: tensorflow>=2.1", "", ("2.2", "2.2")),  # not the row's lowest
])
def test_score_lints_a_row_at_the_range_its_pin_names(version, source, after, expected):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "lint_fixes"))
    import fixset
    import score

    row = fixset.FixRow(id="F1", repo="o/r", before="a" * 40, after="b" * 40, path="p.py",
                        after_path="", before_lines="9-9", after_lines="9-9",
                        kind="tile vs broadcast", style="tf2", form="library", why="w",
                        after_expect="clean", tf_version=version, tf_version_source=source,
                        after_tf_version=after)
    assert (score.target_setting(row, "before"), score.target_setting(row, "after")) == expected
