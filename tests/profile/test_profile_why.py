"""One answer for a script: causes ranked by share of the run, joined from the hot lines, the
code and lint's findings; planted scripts on real TensorFlow (CPU), exact counters."""

import json

import pytest
from profile_scripts import line_of, write_script

from tfperf.cli import main
from tfperf.profile import runner

EAGER_STEP = """\
import tensorflow as tf
tf.random.set_seed(1)
model = tf.keras.Sequential([tf.keras.Input([8]), tf.keras.layers.Dense(16, activation="relu"),
                             tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(0.01)
x = tf.random.normal([32, 8])
y = tf.random.normal([32, 1])
dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(8)
for epoch in range(3):
    for xb, yb in dataset:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(xb) - yb))
        gradients = tape.gradient(loss, model.trainable_variables)
        for g in gradients:
            tf.clip_by_norm(g, 1.0)  # thrown away
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    print(float(loss))
"""




def test_an_eager_training_loop_is_named_first_with_tf_function_and_the_dropped_clip(
        tf, tmp_path):
    path = write_script(tmp_path, EAGER_STEP)
    rep = runner.run_script(path, capture=True)
    assert rep.error is None
    # steps from the batch loop: 3 epochs × 4 batches, each a profiler step marker
    steps = rep.obs.steps
    assert steps is not None and steps.count == 12 and steps.loop_line == 10
    assert rep.capture is not None and rep.capture.steps == 12
    assert rep.capture.step_source == "step markers"
    top = rep.causes[0]
    assert top.kind == "eager-training-step" and top.step.loop_line == 10
    assert "@tf.function" in top.fix and top.automatic
    assert [f.code for f in top.lint] == ["TFP306"]
    lines = {h.line: h for h in top.lines}
    update = line_of(path, "optimizer.apply_gradients")
    assert lines[update].internal == "inside Keras (optimizer.apply_gradients)"
    assert lines[line_of(path, "tape.gradient")].internal == \
        "inside TensorFlow (tape.gradient)"
    clip = line_of(path, "# thrown away")
    assert lines[clip].internal is None and lines[clip].ops == 12 * 4 * 12  # 12 ops a clip
    (dropped,) = [c for c in rep.causes if c.kind == "discarded-op-result"]
    assert dropped.within == top.title and dropped.lines[0].line == clip
    assert [f.code for f in dropped.lint] == ["TFP108"]
    assert "gradients = [tf.clip_by_norm(g, 1.0) for g in gradients]" in dropped.fix
    # every cause is at least 1 % of the run: no 0.0 % line is advice
    assert all(c.share >= 0.01 for c in rep.causes)
    # profile's own advice on the eager time names the step's fix, not vectorising
    (share,) = [f for f in rep.findings if f.code == "profile.eager_share"]
    assert share.data["cause"] == top.title and share.hint == top.fix
    for f in rep.findings:
        if f.code == "profile.eager_ops":
            assert f.data["rule"] == "TFP306" and f.hint == top.fix


def test_steps_n_captures_the_first_n_steps_of_the_loop(tf, tmp_path):
    path = write_script(tmp_path, EAGER_STEP)
    rep = runner.run_script(path, capture=True, steps=5)
    assert rep.obs.steps.count == 12  # every step is timed
    assert rep.capture.steps == 5 and rep.capture.step_source == "step markers"


def test_syncs_made_inside_tape_gradient_are_internal_not_the_lines_own(tf, tmp_path):
    path = write_script(tmp_path, """
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.Input([4]), tf.keras.layers.Dense(2)])
        x = tf.ones([3, 4])
        for i in range(12):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(model(x))
            grads = tape.gradient(loss, model.trainable_variables)
            value = float(loss)  # the line's own sync
    """)
    rep = runner.run_script(path, capture=False)
    syncs = {s.line: s for s in rep.obs.host_syncs.values() if s.path == str(path)}
    own = syncs[line_of(path, "the line's own sync")]
    assert own.count == 12 and not own.made_in
    # TF 2.21 converts once per step inside the gradient (Keras's layers): internal
    inside = syncs[line_of(path, "tape.gradient")]
    assert inside.count == 12 and inside.made_in == {"tensorflow": 12}
    (sync,) = [f for f in rep.not_advice if f.location.line == inside.line]
    assert "made inside tensorflow" in sync.data["not_advice"]


def test_keras_predict_per_item_is_its_own_cause(tf, tmp_path):
    path = write_script(tmp_path, """
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.Input([8]), tf.keras.layers.Dense(4)])
        items = tf.random.normal([15, 8])
        out = []
        for i in range(15):
            out.append(model.predict(items[i:i + 1], verbose=0))
    """)
    rep = runner.run_script(path, capture=False)
    top = rep.causes[0]
    assert top.kind == "predict-per-item"
    # called per call, not "per item": the loop may predict a 64-row batch each time (p08)
    assert top.title.startswith("Keras predict called in the loop at"), top.title
    assert top.lines[0].line == line_of(path, "model.predict")
    assert top.lines[0].internal == "inside Keras (model.predict)"
    assert "model(x, training=False)" in top.fix


def test_a_loop_over_a_slow_dataset_is_the_input_pipeline_with_lints_lever(tf, tmp_path):
    path = write_script(tmp_path, """
        import time
        import tensorflow as tf

        def slow(i):
            time.sleep(0.02)
            return i

        ds = tf.data.Dataset.range(20).map(lambda i: tf.py_function(slow, [i], tf.int64))
        total = 0
        for item in ds:
            total += 1
    """)
    rep = runner.run_script(path, capture=False)
    top = rep.causes[0]
    assert top.kind == "input-pipeline" and top.lines[0].line == line_of(path, "for item")
    assert "TFP602" in [f.code for f in top.lint] and "num_parallel_calls" in top.fix
    assert not [c for c in rep.causes if c.lines and c.lines[0].line == line_of(path, "ds =")]


def test_a_pipeline_whose_maps_are_parallel_is_not_told_to_make_them_parallel(tf, tmp_path):
    """The input-pipeline cause's fix said "give map num_parallel_calls=tf.data.AUTOTUNE" to a
    map that had it (a real user's train.py after `lint --fix --unsafe-fixes`)."""
    path = write_script(tmp_path, """
        import time
        import tensorflow as tf

        def slow(i):
            time.sleep(0.02)
            return i

        ds = tf.data.Dataset.range(20).map(lambda i: tf.py_function(slow, [i], tf.int64),
                                           num_parallel_calls=tf.data.AUTOTUNE)
        total = 0
        for item in ds:
            total += 1
    """)
    top = runner.run_script(path, capture=False).causes[0]
    assert top.kind == "input-pipeline" and top.lines[0].line == line_of(path, "for item")
    assert "already run in parallel" in top.fix and "give map num_parallel_calls" not in top.fix


def test_a_python_loop_cause_counts_every_line_of_the_loop(tf, tmp_path):
    """The loop's cause summed only its lines of 100+ eager ops: a loss line of 80 ops in the
    same loop (the larger cost here) was left out, and the cause said 21 % for a loop of 36 %."""
    path = write_script(tmp_path, """
        import tensorflow as tf
        x = tf.random.normal([64, 32])
        w = tf.Variable(tf.random.normal([32, 1]))
        setup = tf.matmul(x, w) * 2.0
        for step in range(20):
            with tf.GradientTape() as t:
                loss = tf.reduce_mean(tf.matmul(x, w) ** 2)
            w.assign_sub(0.01 * t.gradient(loss, w))
    """)
    rep = runner.run_script(path, capture=False)
    loop = next(c for c in rep.causes if c.kind == "python-loop")
    lines = {h.line for h in loop.lines}
    inside = {line_of(path, "loss = "), line_of(path, "w.assign_sub")}
    assert lines == inside  # the setup line above the loop is not the loop's (valid twin)
    here = loop.lines[0].path
    per_line = {site[1]: s.total_s for site, s in rep.obs.eager_ops.items() if site[0] == here}
    assert loop.seconds == pytest.approx(sum(per_line[n] for n in inside), rel=0.05)


def test_the_case_study_loop_is_a_python_loop_to_vectorise(tf):
    from tfperf.examples import SLOW
    from tfperf.examples.case_study_slow import compute_feature_tf_slow

    samples, weights = tf.random.normal([4, 50, 8]), tf.random.normal([50])
    rep = runner.profile(compute_feature_tf_slow, samples, weights, steps=1, capture=False)
    top = rep.causes[0]
    assert top.kind == "python-loop" and top.lines[0].path == str(SLOW)
    assert {"TFP101", "TFP102"} & {f.code for f in top.lint}
    assert "vectori" in top.fix or "whole-tensor" in top.fix


def test_keras_fit_has_no_eager_step_cause(tf, tmp_path):
    path = write_script(tmp_path, """
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.Input([8]), tf.keras.layers.Dense(1)])
        model.compile("sgd", "mse")
        model.fit(tf.random.normal([64, 8]), tf.random.normal([64, 1]), epochs=2, verbose=0)
    """)
    rep = runner.run_script(path, capture=False)
    assert rep.error is None and rep.obs.steps is None
    assert not [c for c in rep.causes if c.kind in ("eager-training-step", "eager-ops")]
    top = rep.causes[0]
    assert top.kind == "keras-fit" and "steps_per_execution" in top.fix
    assert top.lines[0].internal == "inside Keras (model.fit)"


def test_what_to_change_ranks_before_compiled_compute():
    """Compiled compute is the work itself: a cause to change of 5 % or more, and at least a
    third of the compiled cost, is named before it; a smaller lever comes after the main cost
    (a 10 % lever is not named before 57.5 % of compute); under 1 %, not listed."""
    from tfperf.profile.causes import Cause, rank

    def cause(kind, share):
        return Cause(kind, f"{kind} {share}", share * 10, share, "fix")

    fit, pipe, sync = cause("keras-fit", 0.50), cause("input-pipeline", 0.20), \
        cause("host-sync", 0.005)
    assert rank([fit, pipe, sync]) == [pipe, fit]
    step, predict = cause("compiled-step", 0.575), cause("predict-per-item", 0.103)
    assert rank([predict, step]) == [step, predict]
    small = cause("input-pipeline", 0.04)
    assert rank([small, fit]) == [fit, small]


def test_json_and_text_carry_the_causes(tf, tmp_path, capsys):
    path = write_script(tmp_path, EAGER_STEP)
    main(["profile", str(path), "--no-capture", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["steps"]["steps"] == 12 and doc["steps"]["median_s"] > 0
    kinds = [c["kind"] for c in doc["causes"]]
    assert kinds[0] == "eager-training-step"
    assert "discarded-op-result" in kinds
    assert doc["causes"][0]["step"]["loop_line"] == 10
    assert doc["causes"][0]["measured"] is None
    assert doc["facts"] == {"tensorflow": tf.__version__,
                            "gpus": len(tf.config.list_physical_devices("GPU"))}
    main(["profile", str(path), "--no-capture"])
    text = capsys.readouterr().out
    assert "Why it is slow" in text and "1. eager training step" in text
    assert "never applied automatically" in text


@pytest.mark.parametrize(("argv", "message"), [
    (["--try-fixes", "--fix-steps", "2"], "--fix-steps must be at least 4"),
    (["--fix-rounds", "2"], "go with --try-fixes"),
])
def test_try_fixes_options_are_checked(tmp_path, capsys, argv, message):
    path = write_script(tmp_path, "print(1)\n")
    assert main(["profile", str(path), *argv]) == 2
    assert message in capsys.readouterr().err


def test_try_fixes_is_for_scripts(capsys):
    assert main(["profile", "tfperf.examples.case_study_slow:compute_feature_tf_slow",
                 "--try-fixes"]) == 2
    assert "--try-fixes is for scripts" in capsys.readouterr().err


def _ops_at(w, code):
    """Eager ops watched at the line of ``code`` (a function of this file)."""
    import inspect

    lines, first = inspect.getsourcelines(code)
    return sum(s.count for s in w.obs.eager_ops.values()
               if s.path == __file__ and first <= s.line < first + len(lines))


def test_the_per_item_remedies_hold(tf):
    """What the per-item causes say to do, applied: predict → a call of the model, and a
    model called per item → one tf.function of it: the eager ops at the line fall."""
    from tfperf.profile import watch

    model = tf.keras.Sequential([tf.keras.Input([8]), tf.keras.layers.Dense(4)])
    items = tf.unstack(tf.random.normal([10, 1, 8]))
    act = tf.function(model)

    def predict_each():
        return [model.predict(item, verbose=0) for item in items]

    def call_each():
        return [model(item, training=False) for item in items]

    def compiled_each():
        return [act(item) for item in items]

    counts = {}
    for fn in (predict_each, call_each, compiled_each):
        fn()  # warm: Keras's predict function, the tf.function's trace
        with watch() as w:
            fn()
        counts[fn.__name__] = _ops_at(w, fn)
    assert counts["predict_each"] >= 100  # Keras's data pipeline per call: a cause
    assert counts["call_each"] < counts["predict_each"] / 3
    assert counts["compiled_each"] == 0 < counts["call_each"]


def test_steps_per_execution_runs_fewer_calls_of_kerass_step(tf):
    """The Keras fit remedy: steps_per_execution=8 makes 8× fewer step-function calls."""
    from tfperf.profile import watch

    x, y = tf.random.normal([256, 4]), tf.random.normal([256, 1])
    calls = {}
    for spe in (1, 8):
        model = tf.keras.Sequential([tf.keras.Input([4]), tf.keras.layers.Dense(1)])
        model.compile("sgd", "mse", steps_per_execution=spe)
        with watch() as w:
            model.fit(x, y, batch_size=16, epochs=2, verbose=0)
        calls[spe] = max(f.calls for f in w.obs.functions)
    assert calls == {1: 32, 8: 4}


KERAS_EAGER = """\
import tensorflow as tf
model = tf.keras.Sequential([tf.keras.Input([8]), tf.keras.layers.Dense(1)])
model.compile("sgd", "mse", run_eagerly=True)
model.fit(tf.random.normal([256, 8]), tf.random.normal([256, 1]), batch_size=16, epochs=2,
          verbose=0)
"""


def test_keras_run_eagerly_is_named_with_its_fix_and_the_fix_holds(tf, tmp_path):
    from tfperf.profile import fixes

    eager = write_script(tmp_path, KERAS_EAGER)
    rep = runner.run_script(eager, capture=False)
    top = rep.causes[0]
    assert top.kind == "keras-eager" and "run_eagerly" in top.fix
    assert top.automatic == "Keras steps compiled (run_eagerly off)"
    (advice,) = [f for f in rep.findings if f.code == "profile.eager_ops"]
    assert advice.hint == top.fix and advice.data["cause"] == top.title
    patch = fixes.keras_compiled(KERAS_EAGER, str(eager))
    assert patch.source == KERAS_EAGER.replace("run_eagerly=True", "run_eagerly=False")
    compiled = write_script(tmp_path, patch.source, "compiled.py")
    again = runner.run_script(compiled, capture=False)
    ops = {p.name: sum(s.count for s in r.obs.eager_ops.values()
                       if s.line == 4 and s.path == str(p))
           for p, r in ((eager, rep), (compiled, again))}
    assert ops["train.py"] > 10 * ops["compiled.py"]  # 32 eager steps against 32 calls
    assert not [c for c in again.causes if c.kind == "keras-eager"]


def test_the_users_own_step_markers_are_the_steps_not_doubled(tf, tmp_path):
    path = write_script(tmp_path, EAGER_STEP.replace(
        "    for xb, yb in dataset:\n        with tf.GradientTape() as tape:",
        "    for step, (xb, yb) in enumerate(dataset):\n"
        "        with tf.profiler.experimental.Trace('train', step_num=step, _r=1):\n"
        "            pass\n"
        "        with tf.GradientTape() as tape:"))
    rep = runner.run_script(path, capture=True)
    assert rep.error is None
    assert rep.obs.steps.count == 12 and "your Trace(step_num=...)" in rep.obs.steps.source
    assert rep.capture.steps == 12  # the user's 12 markers; tfperf adds none of its own
    assert rep.causes[0].kind == "eager-training-step"  # still the cause it names


GENERATOR_FIT = """\
import time
import numpy as np
import tensorflow as tf

x, y = np.ones([96, 4], np.float32), np.ones([96, 1], np.float32)

def gen():
    for i in range(96):
        time.sleep(0.005)
        yield x[i], y[i]

ds = tf.data.Dataset.from_generator(
    gen, output_signature=(tf.TensorSpec([4]), tf.TensorSpec([1]))).batch(16)
model = tf.keras.Sequential([tf.keras.Input([4]), tf.keras.layers.Dense(1)])
model.compile("sgd", "mse")
model.fit(ds, epochs=2, verbose=0)
"""


def test_python_in_a_fit_pipeline_is_named_before_the_compiled_fit_and_the_fix_holds(
        tf, tmp_path):
    slow = write_script(tmp_path, GENERATOR_FIT)
    rep = runner.run_script(slow, capture=True)
    top = rep.causes[0]
    assert top.kind == "input-pipeline" and "from_generator" in top.title
    assert "precompute" in top.fix
    # 2 epochs × 96 elements, each a sleep of 5 ms in the generator: at least 0.96 s of Python
    assert top.seconds >= 0.96
    fixed = write_script(tmp_path, GENERATOR_FIT.replace(
        "ds = tf.data.Dataset.from_generator(\n    gen, output_signature=(tf.TensorSpec([4]), "
        "tf.TensorSpec([1]))).batch(16)",
        "ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(16)"), "fixed.py")
    again = runner.run_script(fixed, capture=True)
    assert not [c for c in again.causes if c.kind == "input-pipeline"]
    assert sum(again.capture.by_type.get(op, 0.0) for op in ("PyFunc", "EagerPyFunc")) == 0


def test_an_error_in_a_marked_script_is_reported_at_its_own_line(tf, tmp_path):
    path = write_script(tmp_path, EAGER_STEP.replace(
        "    print(float(loss))", "    raise RuntimeError('boom')  # the error"))
    rep = runner.run_script(path, capture=False)
    assert rep.obs.steps.count == 4  # the first epoch's four steps ran
    tb = rep.error_dict()["traceback"]
    assert tb.splitlines()[1] == (f'  File "{path}", line {line_of(path, "# the error")}, '
                                  f'in <module>')
    assert "runner.py" not in tb and "script_exec.py" not in tb


def test_a_map_with_one_parallel_call_is_not_called_parallel():
    """`num_parallel_calls=1` (or None) maps one element at a time: the cause must not say
    "its maps already run in parallel" of it (the valid twin: AUTOTUNE, a number, a name)."""
    import ast

    from tfperf.profile.causes import _maps_parallel

    def said(src: str) -> bool:
        return _maps_parallel(ast.parse(src))

    assert not said("ds = ds.map(f, num_parallel_calls=1)")
    assert not said("ds = ds.map(f, None)")
    assert not said("ds = ds.map(f).map(g, num_parallel_calls=4)")
    assert said("ds = ds.map(f, num_parallel_calls=tf.data.AUTOTUNE).map(g, 8)")
    assert said("ds = ds.map(f, num_parallel_calls=n)")
