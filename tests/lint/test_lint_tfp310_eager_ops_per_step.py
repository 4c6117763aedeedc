"""TFP310 (preview): a helper of many TensorFlow ops run eagerly once per step, reached
through methods and modules (held-out round 2's regret matching, F099, and Variables made
per call, F112); a warm run after the helper changed gives what a cold run gives; the
shapes that are not a step (a training step's helpers, a model being built, an epoch loop)
are left alone."""

from __future__ import annotations

import json
import textwrap

from project_files import found, write_project

from tfperf.lint.session import LintRequest, run

HELPERS = """\
import tensorflow as tf

def regrets(adv, mask):
    adv = tf.constant(adv) * tf.constant(mask)
    pos = tf.maximum(adv, 0.0)
    total = tf.reduce_sum(pos)
    return tf.where(total > 0, pos / total, tf.one_hot(tf.argmax(adv), tf.size(adv)))
"""

SOLVER = """\
from helpers import regrets

class Solver:
    def _walk(self, state):
        if state.done():
            return 0.0
        probs = regrets(state.adv, state.mask)
        return sum(self._walk(state.child(a)) for a in state.actions())

    def solve(self, root, iterations):
        for _ in range(iterations):
            self._walk(root)
"""

COMPILED = HELPERS.replace("def regrets", "@tf.function\ndef regrets")


def _found(outcome, root) -> list[tuple[str, int | None, str]]:
    return [(path, line, message) for _, path, line, message in found(outcome, root, "TFP310")]


def _lint(root, **kw):
    return run(LintRequest(paths=[str(root)], select=["TFP310"], preview=True, **kw))


def test_a_helper_of_another_module_reached_through_a_recursion_is_found_at_its_def(tmp_path):
    write_project(tmp_path, {"helpers.py": HELPERS, "solver.py": SOLVER})
    found = _found(_lint(tmp_path, cache=False), tmp_path)
    assert [(p, line) for p, line, _ in found] == [("helpers.py", 3)]
    assert "8 op calls" in found[0][2] and "solver.py:12" in found[0][2]
    # Linted alone, the helper is called by nothing: no finding; nor without --preview.
    alone = run(LintRequest(paths=[str(tmp_path / "helpers.py")], cache=False,
                            select=["TFP310"], preview=True))
    assert _found(alone, tmp_path) == []
    assert _found(run(LintRequest(paths=[str(tmp_path)], cache=False)), tmp_path) == []


def test_warm_run_after_the_helper_was_compiled_equals_a_cold_run(tmp_path):
    root = tmp_path / "proj"
    write_project(root, {"helpers.py": HELPERS, "solver.py": SOLVER})
    cache = tmp_path / "cache"
    first = _lint(root, cache_dir=cache)
    assert len(_found(first, root)) == 1
    (root / "helpers.py").write_text(COMPILED)
    warm = _lint(root, cache_dir=cache)
    assert warm.analysed == 1
    assert _found(warm, root) == _found(_lint(root, cache=False), root) == []
    (root / "helpers.py").write_text(HELPERS)
    back = _lint(root, cache_dir=cache)
    assert back.analysed == 0 and _found(back, root) == _found(first, root)


def test_not_a_step_training_helpers_model_building_and_epoch_loops(tmp_path):
    steps = """\
    import tensorflow as tf
    from helpers import regrets

    def train_step(model, opt, x, m):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(regrets(model(x), m))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))

    def build(inp, m):
        outs = [regrets(inp[i], m) for i in range(3)]
        for i in range(3):
            outs.append(regrets(inp[i], m))
        return tf.keras.Model(inp, outs)

    for step in range(1000):
        train_step(model, opt, xs[step], ms[step])
    for epoch in range(10):
        regrets(sample_x, sample_m)
    """
    write_project(tmp_path, {"helpers.py": HELPERS, "main.py": steps})
    assert _found(_lint(tmp_path, cache=False), tmp_path) == []
    # The same helper called per step of a plain loop is reported (a helper that a
    # training step also calls is left to TFP306, which compiles it with the step).
    (tmp_path / "main.py").write_text(textwrap.dedent("""\
    from helpers import regrets
    for epoch in range(10):
        regrets(sample_x, sample_m)
    for step in range(1000):
        regrets(xs[step], ms[step])
    """))
    found = _found(_lint(tmp_path, cache=False), tmp_path)
    assert [(p, line) for p, line, _ in found] == [("helpers.py", 3)]
    assert "main.py:5" in found[0][2]


TRAIN = """\
from tqdm import tqdm
from helpers import regrets

def run_epoch(batches, n):
    bar = tqdm(range(n), unit="batch")
    for i in {loop}:
        regrets(batches[i].adv, batches[i].mask)

def main(batches, n, epochs):
    for e in range(epochs):
        run_epoch(batches, n)
"""


def test_the_per_step_loop_is_named_through_progress_bars_and_enumerate(tmp_path):
    # A per-batch loop spelled `tqdm(range(n))`, `enumerate(tqdm(ds))` or `zip(range(n), ds)`
    # is the step loop: the finding names its call (train.py:7), not the caller's per-epoch loop
    # (train.py:11), which the first push named for `tqdm(range(n))`.
    for loop in ("tqdm(range(n))", "enumerate(tqdm(range(n)))", "zip(range(n), batches)",
                 "bar"):
        write_project(tmp_path, {"helpers.py": HELPERS,
                                 "train.py": TRAIN.replace("{loop}", loop)})
        found = _found(_lint(tmp_path, cache=False), tmp_path)
        assert [(p, line) for p, line, _ in found] == [("helpers.py", 3)], loop
        assert "train.py:7" in found[0][2], (loop, found[0][2])
    # VALID twin: the per-batch loop runs a few fixed items (`tqdm(range(3))`, under the
    # step bar) and the caller's loop is per epoch: no step loop runs the helper.
    write_project(tmp_path, {"helpers.py": HELPERS,
                             "train.py": TRAIN.replace("{loop}", "tqdm(range(3))")
                             .replace("for e in", "for epoch in")})
    assert _found(_lint(tmp_path, cache=False), tmp_path) == []


def _notebook(*cells: str) -> str:
    return json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [],
                                  "execution_count": None, "source": c} for c in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def test_a_notebook_helper_called_once_per_epoch_is_not_a_step(tmp_path):
    # Precision round 6 (a BERT notebook): a dataset builder called once per epoch, from a
    # later cell, was reported "per step": the epoch calls were kept in joined-line numbers
    # while the calls' positions had moved to cells, so none matched.
    intro = "import tensorflow as tf\nx = 1\ny = 2\nz = 3\n"
    per_epoch = "for epoch in range(epochs):\n    regrets(adv, mask)\n"
    write_project(tmp_path, {"nb.ipynb": _notebook(intro, HELPERS, per_epoch)})
    assert _found(_lint(tmp_path, cache=False), tmp_path) == []
    # Its hot twin: the same cells with a loop over steps.
    write_project(tmp_path, {"nb.ipynb": _notebook(
        intro, HELPERS, per_epoch.replace("epoch in range(epochs)", "step in range(steps)"))})
    hits = _found(_lint(tmp_path, cache=False), tmp_path)
    assert len(hits) == 1 and "cell 3, line 2" in hits[0][2], hits
