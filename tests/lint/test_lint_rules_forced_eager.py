"""TFP312 where the examples cannot reach: the file's name (a test module is quiet) and the
assignments a flag name goes through."""

from __future__ import annotations

import textwrap

import pytest

from tfperf.lint import registry
from tfperf.lint.engine import lint_source

FORCED = textwrap.dedent("""
    import tensorflow as tf
    tf.config.run_functions_eagerly(True)
""")


def _lines(source: str, path: str) -> list[int]:
    found = lint_source(source, path, rules=[registry.get("TFP312")])
    return [f.location.line for f in found if f.code == "TFP312"]


@pytest.mark.parametrize("path", ["test_model.py", "pkg/model_test.py", "tests/conftest.py"])
def test_quiet_in_test_files(path):
    assert _lines(FORCED, path) == []


@pytest.mark.parametrize("path", ["train.py", "pkg/testing_utils.py", "serve/contest.py"])
def test_reported_elsewhere(path):
    assert _lines(FORCED, path) == [3]


def test_a_flag_rebound_by_a_loop_or_parameter_is_quiet():
    loop = "import tensorflow as tf\nEAGER = True\nfor EAGER in (1, 0):\n    pass\n" \
           "tf.config.run_functions_eagerly(EAGER)\n"
    param = "import tensorflow as tf\ndef f(EAGER=True):\n    " \
            "tf.config.run_functions_eagerly(EAGER)\n"
    kept = "import tensorflow as tf\nEAGER = True\nfor i in range(3):\n    x = i\n" \
           "tf.config.run_functions_eagerly(EAGER)\n"
    assert _lines(loop, "a.py") == []
    assert _lines(param, "b.py") == []
    assert _lines(kept, "c.py") == [5]
