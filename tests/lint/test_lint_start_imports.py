"""`tfperf lint small.py` imports only what that run needs (a pre-commit hook's start-up).

Each case runs the CLI in a fresh interpreter and reads its `sys.modules` at exit: a plain
`.py` file outside any project does not pull in the notebook reader, the fix machinery, the
cache, `configparser`, TensorFlow or NumPy; the twins show each lazy import still happens
where the run needs it (a notebook, a `setup.cfg` pin, a warm cache, `--fix`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import tfperf
from tfperf.lint import registry

SRC = str(Path(tfperf.__file__).resolve().parents[1])
PROBE = """\
import json, runpy, sys
sys.argv = ["tfperf", "lint", *sys.argv[1:]]
try:
    runpy.run_module("tfperf", run_name="__main__")
except SystemExit:
    pass
sys.stderr.write("\\nMODULES " + json.dumps(sorted(sys.modules)) + "\\n")
"""
SMALL = "import tensorflow as tf\n\n\ndef scale(x, w):\n    return tf.reduce_sum(x * w, axis=1)\n"
NOT_NEEDED = ("tfperf.lint.notebook", "tfperf.lint.fix", "tfperf.lint.cache", "configparser",
              "tensorflow", "numpy")
# The preview rules' modules: a default run imports none of them (registry.default_rules)
# but the few a default rule borrows helpers from.
PREVIEW_MODULES = {c.__module__ for c in registry.rule_classes() if c.group == "preview"}
PREVIEW_MODULE = sorted(PREVIEW_MODULES)[-1]


def _modules(cwd: Path, *args: str) -> set[str]:
    env = {**os.environ, "PYTHONPATH": SRC}
    out = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=cwd, env=env,
                         capture_output=True, text=True, timeout=300)
    line = next(x for x in out.stderr.splitlines() if x.startswith("MODULES "))
    return set(json.loads(line[len("MODULES "):]))


def test_a_small_file_imports_none_of_what_it_does_not_need(tmp_path):
    (tmp_path / "small.py").write_text(SMALL)
    loaded = _modules(tmp_path, "--no-cache", "small.py")
    assert "tfperf.lint.session" in loaded and "tfperf.lint.registry" in loaded  # it ran
    assert sorted(m for m in NOT_NEEDED if m in loaded) == []
    assert len(PREVIEW_MODULES - loaded) > len(PREVIEW_MODULES) / 2


@pytest.mark.parametrize(("files", "args", "needed"), [
    ({"nb.ipynb": json.dumps({"cells": [{"cell_type": "code", "source": SMALL,
                                         "metadata": {}, "outputs": []}],
                              "metadata": {}, "nbformat": 4, "nbformat_minor": 5})},
     ["--no-cache", "nb.ipynb"], "tfperf.lint.notebook"),
    ({"setup.cfg": "[options]\ninstall_requires =\n    tensorflow>=2.4\n", "small.py": SMALL},
     ["--no-cache", "small.py"], "configparser"),
    ({"small.py": SMALL}, ["small.py"], "tfperf.lint.cache"),
    ({"small.py": SMALL}, ["--no-cache", "--preview", "small.py"], PREVIEW_MODULE),
    ({"small.py": SMALL}, ["--no-cache", "--select", "ALL", "small.py"], PREVIEW_MODULE),
    ({"small.py": SMALL, "pyproject.toml": '[tool.tfperf.lint]\nextend-select = ["TFP1"]\n'},
     ["--no-cache", "small.py"], PREVIEW_MODULE),
    ({"small.py": "import numpy as np\nx = np.zeros(3)\nfor i in range(3):\n    x[i] = i\n"},
     ["--no-cache", "--fix", "small.py"], "tfperf.lint.fix"),
])
def test_what_a_run_needs_is_still_imported(tmp_path, files, args, needed):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    loaded = _modules(tmp_path, *args)
    assert needed in loaded
    if needed == PREVIEW_MODULE:
        assert loaded >= PREVIEW_MODULES


def test_the_groups_read_from_the_sources_are_the_classes_groups():
    classes = {c.__module__.rsplit(".", 1)[1]: c.group for c in registry.rule_classes()}
    assert registry.written_groups() == classes


def test_the_default_rules_read_lazily_are_the_default_selection(monkeypatch):
    registry._load.cache_clear()
    try:
        lazy = registry.default_rules()
        assert lazy is not None and registry._load.cache_info().currsize == 0
        assert [r.code for r in lazy] == [r.code for r in registry.select()]
        # Twin: when the sources cannot tell, the caller imports every module.
        monkeypatch.setattr(registry, "written_groups", lambda: None)
        registry._load.cache_clear()
        assert registry.default_rules() is None
    finally:
        registry._load.cache_clear()
