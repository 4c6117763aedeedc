"""A file linted alone inside a project is modelled with the project's modules the import
graph links to it (lint/context.py): what only its callers or callees show is found, only
the given file's findings are reported, and with the context off it reports as before."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from project_files import found, write_project

from tfperf.lint import context as lint_context
from tfperf.lint.session import LintRequest, run

STEPS = """\
import tensorflow as tf

class Trainer:
    def __init__(self, model):
        self.model = model
        self.opt = tf.keras.optimizers.Adam()

    def train_step(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((self.model(x) - y) ** 2)
        grads = tape.gradient(loss, self.model.trainable_variables)
        self.opt.apply_gradients(zip(grads, self.model.trainable_variables))
        return loss

@tf.function
def scaled(x, scale):
    return x * scale
"""

TRAIN = """\
import numpy as np
from steps import Trainer, scaled

def main(model):
    trainer = Trainer(model)
    for epoch in range(100):
        warmup = min(1.0, (epoch + 1) / 20)
        scaled(np.ones(3), warmup)
        trainer.train_step(np.ones(3), np.ones(3))
"""

# VALID twin: the step runs once and the tf.function gets a tensor.
TRAIN_ONCE = """\
import numpy as np
import tensorflow as tf
from steps import Trainer, scaled

def main(model):
    trainer = Trainer(model)
    for epoch in range(100):
        scaled(np.ones(3), tf.constant(min(1.0, (epoch + 1) / 20)))
    trainer.train_step(np.ones(3), np.ones(3))
"""

LOADER = """\
import tensorflow as tf
from aug import augment

def loader(files):
    return tf.data.TFRecordDataset(files).map(augment).batch(8).prefetch(1)
"""
AUG = """\
import tensorflow as tf

def augment(record):
    image = tf.io.parse_tensor(record, tf.float32)
    return {op}
"""
RANDOM = "tf.image.random_flip_left_right(image)"
FIXED = "tf.image.flip_left_right(image)"


def _project(root, train=TRAIN, op=RANDOM, extra=None):
    write_project(root, {"pyproject.toml": "[project]\nname = 'p'\n", "steps.py": STEPS,
                         "train.py": train, "aug.py": AUG.format(op=op), "loader.py": LOADER,
                         **(extra or {})})


def _lint(root, name, **kw):
    kw.setdefault("cache", False)
    return run(LintRequest(paths=[str(root / name)], preview=True, **kw))


def _codes(outcome, root):
    return {(code, path) for code, path, _, _ in found(outcome, root)}


def test_a_step_called_per_step_from_another_file_is_found_in_the_step_alone(tmp_path):
    _project(tmp_path)
    alone = _lint(tmp_path, "steps.py")
    assert ("TFP306", "steps.py") in _codes(alone, tmp_path)
    assert {p for _, p in _codes(alone, tmp_path)} == {"steps.py"}  # train.py not reported
    assert [os.path.basename(f) for f in alone.context.files] == ["train.py"]
    off = _lint(tmp_path, "steps.py", project_context=False)
    assert ("TFP306", "steps.py") not in _codes(off, tmp_path)
    assert off.context is None


def test_a_file_named_through_a_symlinked_folder(tmp_path):
    _project(tmp_path / "real")
    (tmp_path / "link").symlink_to(tmp_path / "real", target_is_directory=True)
    for name, code in (("steps.py", "TFP306"), ("train.py", "TFP301")):
        out = _lint(tmp_path / "link", name)
        assert (code, name) in _codes(out, tmp_path / "link")


def test_the_callers_python_number_to_another_modules_tf_function(tmp_path):
    _project(tmp_path)
    assert ("TFP301", "train.py") in _codes(_lint(tmp_path, "train.py"), tmp_path)
    assert ("TFP301", "train.py") not in _codes(
        _lint(tmp_path, "train.py", project_context=False), tmp_path)


def test_valid_twin_a_step_run_once_and_a_tensor_argument(tmp_path):
    _project(tmp_path, train=TRAIN_ONCE, op=FIXED)
    assert not {c for c, _ in _codes(_lint(tmp_path, "steps.py"), tmp_path)} & {"TFP306"}
    assert not {c for c, _ in _codes(_lint(tmp_path, "train.py"), tmp_path)} & {"TFP301"}
    assert not {c for c, _ in _codes(_lint(tmp_path, "loader.py", tf_version="2.6"),
                                     tmp_path)} & {"TFP602"}


def test_a_map_function_defined_in_another_module(tmp_path):
    _project(tmp_path)
    assert ("TFP602", "loader.py") in _codes(_lint(tmp_path, "loader.py", tf_version="2.6"),
                                             tmp_path)
    assert ("TFP602", "loader.py") not in _codes(
        _lint(tmp_path, "loader.py", tf_version="2.6", project_context=False), tmp_path)


def test_the_configuration_key_turns_it_off(tmp_path):
    _project(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.tfperf.lint]\nproject-context = false\n")
    assert ("TFP306", "steps.py") not in _codes(_lint(tmp_path, "steps.py"), tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.tfperf.lint]\nproject-context = 1\n")
    with pytest.raises(ValueError, match="project-context"):
        _lint(tmp_path, "steps.py")


def test_an_unparsable_or_unlinked_module_is_no_error_and_no_finding(tmp_path):
    _project(tmp_path, train="import broken\n" + TRAIN,
             extra={"broken.py": "def f(:\n", "other.py": "import os\n"})
    out = _lint(tmp_path, "steps.py")
    assert out.errors == [] and all(f.code != "TFP000" for f in out.findings)
    assert ("TFP306", "steps.py") in _codes(out, tmp_path)
    names = sorted(os.path.basename(f) for f in out.context.files)
    assert names == ["broken.py", "train.py"]  # linked (and left out silently); not other.py
    assert "TFP000" in {f.code for f in _lint(tmp_path, "broken.py").findings}  # given: shown


def test_an_object_built_in_one_module_and_stepped_in_another(tmp_path):
    # runner.py builds the trainer and hands it to explorer.py, which imports neither module
    # yet runs its step per episode: a caller's other module is context too.
    runner = "from steps import Trainer\nfrom explorer import Explorer\n\n" \
             "def run(model):\n    Explorer(Trainer(model)).explore()\n"
    explorer = ("import numpy as np\n\nclass Explorer:\n    def __init__(self, learner):\n"
                "        self.learner = learner\n\n    def explore(self):\n"
                "        for episode in range(500):\n"
                "            self.learner.update_networks(np.ones(3), np.ones(3))\n")
    write_project(tmp_path, {".git/HEAD": "", "runner.py": runner, "explorer.py": explorer,
                             "steps.py": STEPS.replace("train_step", "update_networks")})
    assert ("TFP306", "steps.py") in _codes(_lint(tmp_path, "steps.py"), tmp_path)
    assert ("TFP306", "steps.py") not in _codes(
        _lint(tmp_path, "steps.py", project_context=False), tmp_path)
    # VALID twin: the explorer runs it once.
    (tmp_path / "explorer.py").write_text(explorer.replace(
        "        for episode in range(500):\n    ", ""))
    assert ("TFP306", "steps.py") not in _codes(_lint(tmp_path, "steps.py"), tmp_path)


def test_fixes_never_touch_a_context_module(tmp_path):
    fixable = "import tensorflow as tf\nfrom steps import scaled\nx = tf.compat.v1.Session()\n"
    _project(tmp_path, extra={"ctx.py": fixable})
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.suffix == ".py"}
    run(LintRequest(paths=[str(tmp_path / "steps.py")], fix=True, unsafe=True,
                    select=["ALL"], preview=True, cache=False))
    after = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.suffix == ".py"}
    assert {k: v for k, v in after.items() if k != "steps.py"} == \
        {k: v for k, v in before.items() if k != "steps.py"}


def test_warm_run_equals_cold_and_follows_a_context_module_edit(tmp_path):
    root = tmp_path / "p"
    _project(root)
    req = LintRequest(paths=[str(root / "steps.py")], cache_dir=tmp_path / "cache",
                      preview=True)
    cold = run(req)
    warm = run(req)
    assert warm.analysed == 0 and found(warm, root) == found(cold, root)
    assert ("TFP306", "steps.py") in _codes(warm, root)
    assert (tmp_path / "cache" / "context_imports.json").is_file()  # the import scan kept
    (root / "train.py").write_text(TRAIN_ONCE)  # the caller, a context module, changed
    assert ("TFP306", "steps.py") not in _codes(run(req), root)
    # A new caller (a module the last scan did not have) is seen by the next warm run.
    (root / "loop.py").write_text(TRAIN.replace("def main", "def main2"))
    again = run(req)
    assert ("TFP306", "steps.py") in _codes(again, root)
    assert again.context is not None and any(f.endswith("loop.py") for f in again.context.files)
    assert found(again, root) == found(run(LintRequest(paths=[str(root / "steps.py")],
                                                       cache=False, preview=True)), root)


def test_a_notebook_sees_the_modules_it_imports(tmp_path):
    # An output image makes the notebook larger than any module scanned for context.
    image = {"output_type": "display_data", "metadata": {},
             "data": {"image/png": "A" * (lint_context.MAX_SCANNED_BYTES + 1)}}
    cells = [{"cell_type": "code", "metadata": {}, "outputs": [image], "execution_count": 1,
              "source": "import numpy as np\nfrom steps import scaled\n"},
             {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
              "source": "for i in range(100):\n    w = min(1.0, (i + 1) / 20)\n"
                        "    scaled(np.ones(3), w)\n"}]
    nb = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    _project(tmp_path, extra={"explore.ipynb": json.dumps(nb)})
    assert ("TFP301", "explore.ipynb") in _codes(_lint(tmp_path, "explore.ipynb"), tmp_path)


def test_the_bound_on_context_modules_is_said(tmp_path, monkeypatch):
    _project(tmp_path, extra={"a.py": "import steps\n", "b.py": "import steps\n"})
    monkeypatch.setattr(lint_context, "MAX_CONTEXT_FILES", 1)
    ctx = lint_context.find_context([str(tmp_path / "steps.py")], [str(tmp_path / "steps.py")])
    assert len(ctx.files) == 1 and ctx.truncated and "bounded" in ctx.describe()


def test_imports_read_from_text_relative_and_parenthesised():
    text = ("import a.b as c, d\nfrom .pkg import (x,\n    y as z)\nfrom .. import m\n"
            "from e import f  # comment\n")
    assert lint_context._import_specs(text) == ["a.b", "d", ".pkg", ".pkg.x", ".pkg.y", "..",
                                                "..m", "e", "e.f"]


def test_cli_shows_the_context_and_keeps_the_exit_status(tmp_path):
    _project(tmp_path)
    base = [sys.executable, "-m", "tfperf", "lint", "--no-cache", str(tmp_path / "steps.py")]
    on = subprocess.run([*base, "--show-context"], capture_output=True, text=True)
    assert on.returncode == 1 and "project context: 1 module" in on.stderr \
        and "train.py" in on.stderr
    off = subprocess.run([*base, "--no-project-context"], capture_output=True, text=True)
    assert off.returncode == 0, off.stdout + off.stderr
