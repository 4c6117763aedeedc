"""``--try-fixes``: each fix on a copy, before and after in child processes, judged."""

import json
import textwrap

import pytest

from tfperf.profile import trial
from tfperf.profile.fixes import Patch, tf_function_on_step
from tfperf.profile.training_step import find_steps

PATCH = Patch("tf.function on the training step", "decorate", "print('patched')\n",
              function="train_step")


def _fake(results):
    """A runner that answers each side from ``results`` (side → dict) and records the order."""
    order = []

    def run(spec):
        side = "after" if spec["code"].endswith("training-step.py") else "before"
        order.append(side)
        return results[side]
    return run, order


def test_the_gain_per_step_comes_with_its_interval_and_rounds_alternate(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("print('original')\n")
    before = {"durations": [0.5, 0.3] + [0.010] * 8, "losses": [[1.0], [0.5]] + [[0.25]] * 8}
    after = {"durations": [2.0, 0.3] + [0.002] * 8, "losses": [[1.0], [0.5]] + [[0.25]] * 8,
             "traces": 2}
    run, order = _fake({"before": before, "after": after})
    t = trial.try_fix(script, [], script.read_text(), PATCH, steps=10, rounds=3, runner=run,
                      workdir=tmp_path / "fixes")
    assert order == ["before", "after", "after", "before", "before", "after"]
    assert t.before_step_s == pytest.approx(0.010) and t.after_step_s == pytest.approx(0.002)
    assert t.speedup == pytest.approx(5.0) and t.low <= 5.0 <= t.high
    assert t.saved_s == pytest.approx(0.008)
    assert (t.first_before_s, t.first_after_s) == (0.5, 2.0)
    assert t.results == "equal" and t.traces == 2
    assert "saves 8.0 ms a step (10.0 ms → 2.0 ms, 5.00×" in t.summary()
    assert "reduce_retracing" not in t.summary()  # two traces: the optimizer's slots
    after["traces"] = 7
    retraced = trial.try_fix(script, [], script.read_text(), PATCH, steps=10, rounds=1,
                             runner=_fake({"before": before, "after": after})[0],
                             workdir=tmp_path / "again")
    assert "traced 7 times: its inputs' shapes vary, add reduce_retracing=True" in \
        retraced.summary()
    # the copy and its diff are kept; the user's script is untouched
    assert (tmp_path / "fixes" / "train.tf-function-on-the-training-step.py").read_text() \
        == "print('patched')\n"
    assert "+print('patched')" in (tmp_path / "fixes" /
                                   "train.tf-function-on-the-training-step.diff").read_text()
    assert script.read_text() == "print('original')\n"
    assert json.dumps(t.to_dict())


def test_results_that_differ_are_said_to_and_random_draws_explain_why(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("x = 1\n")
    before = {"durations": [0.01] * 6, "losses": [[1.0], [0.9], [0.8], [0.7], [0.6], [0.5]]}
    after = {"durations": [0.01] * 6, "losses": [[1.0], [0.95], [0.8], [0.7], [0.6], [0.5]]}
    run, _ = _fake({"before": before, "after": after})
    t = trial.try_fix(script, [], "x = 1\n", PATCH, steps=6, rounds=2, runner=run,
                      random_ops=["RandomStandardNormal"], workdir=tmp_path)
    assert t.results == "differ"
    assert "RandomStandardNormal" in t.results_detail and "another stream" in t.results_detail
    t = trial.try_fix(script, [], "x = 1\n", PATCH, steps=6, rounds=1, runner=run,
                      workdir=tmp_path)
    assert t.results == "differ" and "random" not in t.results_detail


def test_float_drift_that_grows_after_equal_first_steps_is_equal_with_its_reason(tmp_path):
    # p01 (round 2, a DCGAN): equal for 3 steps, then a gap that grows to 0.4 % by step 20
    ref = [1.0 + 0.01 * k for k in range(20)]
    before = {"durations": [0.01] * 20, "losses": [[x] for x in ref]}
    after = {"durations": [0.01] * 20,
             "losses": [[x * (1 + (1e-9 if k < 3 else 2e-4 * k))] for k, x in enumerate(ref)]}
    t = trial.try_fix(tmp_path / "t.py", [], "", PATCH, steps=20, rounds=1,
                      runner=_fake({"before": before, "after": after})[0], workdir=tmp_path)
    assert t.results == "equal"
    assert "3 steps' losses equal" in t.results_detail and "drift" in t.results_detail
    # a gap from the second step on is not drift: something else was computed
    after["losses"] = [[x * (1 if k == 0 else 1.01)] for k, x in enumerate(ref)]
    t = trial.try_fix(tmp_path / "t.py", [], "", PATCH, steps=20, rounds=1,
                      runner=_fake({"before": before, "after": after})[0], workdir=tmp_path)
    assert t.results == "differ"


def test_a_baseline_that_varies_by_itself_is_said_to(tmp_path):
    # rounds: before, after, then after, before: the second baseline is the odd one
    runs = iter([{"durations": [0.01] * 5, "losses": [[1.0]] * 5},
                 {"durations": [0.01] * 5, "losses": [[1.0]] * 5},
                 {"durations": [0.01] * 5, "losses": [[1.0]] * 5},
                 {"durations": [0.01] * 5, "losses": [[2.0]] * 5}])
    t = trial.try_fix(tmp_path / "t.py", [], "", PATCH, steps=5, rounds=2,
                      runner=lambda spec: next(runs), workdir=tmp_path)
    assert t.results == "equal" and "vary from run to run" in t.results_detail


def test_a_gap_is_judged_against_the_originals_own_run_to_run_spread(tmp_path):
    """p03 (round 2, PPO): the original's reruns with the same seeds already differ; the fix's
    gap was reported as "differ" without weighing it against that."""
    def runs(first_again, after_rows):
        # rounds: before, after, then after, before (the rerun of the original)
        base = [[1.0 + 0.1 * k] for k in range(6)]
        again = [[x[0] * (1.1 if k else first_again)] for k, x in enumerate(base)]
        return iter([{"durations": [0.01] * 6, "losses": base},
                     {"durations": [0.01] * 6, "losses": after_rows(base)},
                     {"durations": [0.01] * 6, "losses": after_rows(base)},
                     {"durations": [0.01] * 6, "losses": again}])

    def judged(first_again, after_rows):
        it = runs(first_again, after_rows)
        return trial.try_fix(tmp_path / "t.py", [], "", PATCH, steps=6, rounds=2,
                             runner=lambda spec: next(it), workdir=tmp_path)

    t = judged(1.05, lambda base: [[x[0] * 1.04] for x in base])  # 4 %, the original's 10 %
    assert t.results == "equal" and "own run-to-run spread" in t.results_detail
    t = judged(1.05, lambda base: [[x[0] * (1.01 if k == 0 else 1.3)]
                                   for k, x in enumerate(base)])
    assert t.results == "not conclusive" and "first step" in t.results_detail
    t = judged(1.0, lambda base: [[x[0] * 1.3] for x in base])  # apart at once, 3x the spread
    assert t.results == "differ"


def test_no_loss_no_comparison_and_a_failing_side_is_not_measured(tmp_path):
    quiet = {"durations": [0.01] * 5, "losses": []}
    t = trial.try_fix(tmp_path / "t.py", [], "", PATCH, steps=5, rounds=1,
                      runner=lambda spec: quiet, workdir=tmp_path)
    assert t.results == "not compared" and "returns nothing" in t.results_detail
    t = trial.try_fix(tmp_path / "t.py", [], "", PATCH, steps=5, rounds=1,
                      runner=lambda spec: {"error": "ValueError: boom"}, workdir=tmp_path)
    assert t.speedup is None and \
        t.summary() == "not measured: the original failed: ValueError: boom"
    # p03 (round 2): a traced error is a page of frames; the copy's failure, with its last line
    traced = ("TypeError: in user code:\n\n    File \"agent.py\", line 58, in train_step  *\n"
              "        states = tf.convert_to_tensor(state_arr[batch])\n\n"
              "    TypeError: Only integers ... are valid indices\n")
    t = trial.try_fix(tmp_path / "t.py", [], "", PATCH, steps=5, rounds=1,
                      runner=_fake({"before": quiet, "after": {"error": traced}})[0],
                      workdir=tmp_path)
    assert t.summary() == ("not measured: the patched copy failed: TypeError: Only integers "
                           "... are valid indices")
    unpatched = Patch("tf.function on the training step", "", None, "the step calls .numpy()")
    t = trial.try_fix(tmp_path / "t.py", [], "", unpatched, runner=lambda spec: {})
    assert t.summary() == "not applied: the step calls .numpy()"


STEP = """\
import random
import tensorflow as tf
w = tf.Variable(tf.eye(4) * 0.5)
optimizer = tf.keras.optimizers.SGD(0.001)
x = tf.ones([4, 4])
for i in range(40):
    with tf.GradientTape() as tape:
        h = x
        for _ in range(30):
            h = tf.tanh(tf.matmul(h, w) + 0.1)
        loss = tf.reduce_sum(h){scale}
    gradients = tape.gradient(loss, [w])
    optimizer.apply_gradients(zip(gradients, [w]))
print(float(loss))
"""


def _trial(tmp_path, scale="", rounds=2):
    source = STEP.format(scale=scale)
    script = tmp_path / "step.py"
    script.write_text(source)
    (step,) = find_steps(source, str(script))
    patch = tf_function_on_step(source, str(script), step)
    assert patch.source is not None, patch.reason
    return trial.try_fix(script, [], source, patch, steps=12, rounds=rounds,
                         workdir=tmp_path / "fixes", loss=step.loss)


def test_tf_function_on_a_planted_eager_step_is_measured_in_child_processes(tf, tmp_path):
    """The step's 30 small layers run eagerly as ~200 ops; compiled, as one graph: the
    gain is planted large (≈10× here at load 7), the results must agree exactly."""
    t = _trial(tmp_path)
    assert t.error is None
    assert [len(r.durations) for r in (*t.before, *t.after)] == [12] * 4
    assert t.results == "equal", t.results_detail
    assert t.traces in (1, 2)  # a first call that creates the optimizer's slots traces twice
    assert t.speedup > 1.5 and t.low is not None and t.low <= t.speedup <= t.high


def test_a_fix_that_changes_results_is_reported_as_changing_them(tf, tmp_path):
    """A Python random draw inside the step runs once per step eagerly, once per trace
    compiled: the losses differ and no TF random op is to blame."""
    t = _trial(tmp_path, scale=" * random.uniform(0.5, 1.5)", rounds=1)
    assert t.error is None
    assert t.results == "differ" and "random draws" not in t.results_detail


def test_the_child_stops_after_its_steps_and_runs_scripts_without_a_step_loop(tf, tmp_path):
    script = tmp_path / "plain.py"
    script.write_text(textwrap.dedent("""\
        import sys
        print(sys.argv[1:])
    """))
    out = tmp_path / "out.json"
    result = trial.run_child({"script": str(script), "code": str(script), "argv": ["a"],
                              "steps": 5, "out": str(out)})
    assert result["unit"] == "run" and len(result["durations"]) == 1
    assert result["error"] is None


TRAINER = """\
import tensorflow as tf


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = tf.keras.optimizers.SGD(0.01)

    def train(self, dataset, epochs):
        for epoch in range(epochs):
            for x, y in dataset:
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(self.model(x) - y))
                grads = tape.gradient(loss, self.model.trainable_variables)
                self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
"""

MAIN = """\
import tensorflow as tf
from trainer import Trainer

tf.random.set_seed(0)
model = tf.keras.Sequential([tf.keras.Input([8]), tf.keras.layers.Dense(1)])
data = tf.data.Dataset.from_tensor_slices((tf.ones([64, 8]), tf.ones([64, 1]))).batch(8)
Trainer(model).train(data, 2)
"""


def test_a_step_in_a_module_the_script_imports_is_marked_fixed_and_measured(tf, tmp_path):
    """Research code trains in trainer.py; main.py is what runs. The step loop in the module
    is marked (16 steps), the patch is of the module, and the trial's after side imports the
    patched copy in place of it; the user's files are untouched."""
    from tfperf.profile import runner

    (tmp_path / "trainer.py").write_text(TRAINER)
    script = tmp_path / "main.py"
    script.write_text(MAIN)
    rep = runner.run_script(script, capture=False)
    assert rep.error is None
    assert rep.obs.steps.count == 16 and rep.obs.steps.path == str(tmp_path / "trainer.py")
    top = rep.causes[0]
    assert top.kind == "eager-training-step" and top.step.path.endswith("trainer.py")
    (t,) = trial.try_fixes(rep.causes, script, [], steps=6, rounds=1,
                           workdir=tmp_path / "fixes")
    assert t.error is None, t.error
    assert t.copy.endswith("trainer.tf-function-on-the-training-step.py")
    assert [len(r.durations) for r in (*t.before, *t.after)] == [6, 6]
    assert t.results == "equal", t.results_detail
    assert (tmp_path / "trainer.py").read_text() == TRAINER
    assert script.read_text() == MAIN


STEP_RETURNING_NOTHING = """\
import tensorflow as tf
w = tf.Variable(tf.eye(4) * 0.5)
optimizer = tf.keras.optimizers.SGD(0.01)
x = tf.ones([4, 4])


def train_step():  # updates w in place and returns None: no loss to compare
    with tf.GradientTape() as tape:
        h = x
        for _ in range(30):
            h = tf.tanh(tf.matmul(h, w) + 0.1)
        loss = tf.reduce_sum(h)
    gradients = tape.gradient(loss, [w])
    optimizer.apply_gradients(zip(gradients, [w]))


for i in range(40):
    train_step()
"""


@pytest.mark.parametrize(("changed", "verdict"), [(False, "equal"), (True, "differ")])
def test_a_step_that_returns_nothing_is_compared_by_the_weights_it_trains(
        tf, tmp_path, changed, verdict):
    """p05's case: the step returns None and keeps its loss to itself; what it changes, the
    trainable weights after the steps, is compared instead (a planted change differs)."""
    source = STEP_RETURNING_NOTHING
    script = tmp_path / "step.py"
    script.write_text(source)
    (step,) = find_steps(source, str(script))
    patch = tf_function_on_step(source, str(script), step)
    assert patch.source is not None, patch.reason
    if changed:  # the patched copy trains on another loss: its weights must differ
        patch = Patch(patch.name, patch.description,
                      patch.source.replace("loss = tf.reduce_sum(h)",
                                           "loss = tf.reduce_sum(h) * 3.0"),
                      function=patch.function)
    t = trial.try_fix(script, [], source, patch, steps=6, rounds=1,
                      workdir=tmp_path / "fixes", loss=step.loss)
    assert t.error is None, t.error
    assert t.results == verdict, t.results_detail
    assert "trainable weights after 6 steps" in t.results_detail


def test_a_gain_whose_interval_holds_1x_is_not_called_a_saving(tmp_path):
    """Medians 20.5 → 17.1 ms with an interval of 0.74–1.41× (a real --try-fixes run at load
    4): the rounds cannot tell the fix from the original, so no "saves 3.4 ms a step"."""
    script = tmp_path / "train.py"
    script.write_text("print('original')\n")
    # both sides draw their steps from the same spread: 10 to 24 ms, in other orders
    spread = [0.010 + 0.002 * k for k in range(8)]
    noisy = {"before": {"durations": [0.5, 0.3, *spread]},
             "after": {"durations": [0.5, 0.3, *spread[::-1]]}}
    t = trial.try_fix(script, [], script.read_text(), PATCH, steps=10, rounds=2,
                      runner=_fake(noisy)[0], workdir=tmp_path / "fixes")
    assert t.low is not None and t.low <= 1.0 <= t.high and t.within_noise
    line = t.summary()
    assert line.startswith("no gain beyond the noise: ") and "which holds 1×" in line
    assert "saves" not in line and "costs" not in line
    # the valid twin: a clear gain keeps its verb (the first test's 5×)
    clear = {"before": {"durations": [0.5, 0.3] + [0.010] * 8},
             "after": {"durations": [2.0, 0.3] + [0.002] * 8}}
    sure = trial.try_fix(script, [], script.read_text(), PATCH, steps=10, rounds=2,
                         runner=_fake(clear)[0], workdir=tmp_path / "again")
    assert not sure.within_noise and sure.summary().startswith("saves 8.0 ms a step")


def test_the_html_report_says_when_the_interval_holds_1x():
    from tfperf.core.html.parts import Doc
    from tfperf.core.html.views.profile import _measured

    m = {"fix": "tf.function on the training step", "before_step_s": 0.0205,
         "after_step_s": 0.0171, "speedup": 1.2, "interval": [0.74, 1.41], "results": "equal"}
    page = _measured(Doc({"m": m}), "m", m)
    assert "no gain beyond the noise" in page and 'data-path="m.interval.0"' in page
    sure = dict(m, interval=[1.1, 1.41])
    page = _measured(Doc({"m": sure}), "m", sure)
    assert "noise" not in page and 'data-path="m.interval.1"' in page


def test_a_script_with_fewer_steps_than_asked_is_said_to_have_run_them_all(tmp_path):
    """Stop 45: a 16-step script under the default 20 was reported "over 20 steps × 2 rounds"."""
    script = tmp_path / "train.py"
    script.write_text("print('original')\n")
    before = {"durations": [0.5, 0.3] + [0.010] * 14, "losses": [[0.25]] * 16}
    after = {"durations": [2.0, 0.3] + [0.002] * 14, "losses": [[0.25]] * 16}
    t = trial.try_fix(script, [], script.read_text(), PATCH, steps=20, rounds=2,
                      runner=_fake({"before": before, "after": after})[0],
                      workdir=tmp_path / "fixes")
    assert t.steps_run == 16 and t.to_dict()["steps_run"] == 16
    assert "over 16 steps × 2 rounds (all the script ran of the 20 asked)" in t.summary()
    full = trial.try_fix(script, [], script.read_text(), PATCH, steps=16, rounds=2,
                         runner=_fake({"before": before, "after": after})[0],
                         workdir=tmp_path / "full")
    assert "over 16 steps × 2 rounds;" in full.summary()  # as many as asked: nothing added
