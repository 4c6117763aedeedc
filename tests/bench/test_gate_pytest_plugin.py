"""The pytest plugin, run on generated test suites with ``pytester`` (real TensorFlow)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]

SUITE = '''
import pytest
import tensorflow as tf

@tf.function
def step(x, lr):
    return x * lr

def test_traces_once_and_never_syncs():
    lr = tf.constant(0.1)
    for _ in range(3):
        step(tf.ones([4]), lr)

@pytest.mark.tfperf(max_traces=1, max_host_syncs=0)
def test_marked_clean():
    lr = tf.constant(0.1)
    for _ in range(3):
        step(tf.ones([4]), lr)

@tf.function
def fresh(x):
    return tf.reduce_sum(x * x)

def test_fixture(tfperf_bench):
    result = tfperf_bench(fresh, tf.ones([4]))
    assert result.median_s > 0 and result.counters["traces"] == 1
    assert result.counters["host_syncs"] == 0
'''

FAILING = '''
import pytest
import tensorflow as tf

@tf.function
def step(x, lr):
    return x * lr

@pytest.mark.tfperf(max_host_syncs=0)
def test_syncs():
    y = step(tf.ones([4]), tf.constant(0.1))
    loss = float(tf.reduce_sum(y))
    assert loss > 0

@pytest.mark.tfperf(max_traces=1)
def test_retraces():
    for lr in (0.1, 0.2, 0.3):
        step(tf.ones([4]), lr)

@pytest.mark.tfperf(max_trace=1)
def test_typo():
    pass
'''

BENCHED = '''
import tensorflow as tf

@tf.function
def core(x):
    return tf.reduce_sum(x * 2.0)

def work(x):
    y = core(x)
    {extra}
    return y

def test_bench(tfperf_bench):
    tfperf_bench(work, tf.ones([8]), name="work")
'''


# A Keras model built inside the step: TF's first call converts once and traces twice for
# itself (test_profile_first_call.py); a user's own float() in the same step still fails.
KERAS_BUILT_INSIDE = '''
import pytest
import tensorflow as tf

def make():
    model = tf.keras.Sequential([tf.keras.layers.Dense(4)])

    @tf.function
    def step(x, lr):
        return tf.reduce_sum(model(x)) * lr
    return step

@pytest.mark.tfperf(max_traces=1, max_host_syncs=0)
def test_clean_step():
    step = make()
    for _ in range(3):
        step(tf.ones([2, 3]), tf.constant(0.1))

def test_fixture(tfperf_bench):
    result = tfperf_bench(make(), tf.ones([2, 3]), tf.constant(0.1))
    assert result.counters["host_syncs"] == 0 and result.counters["traces"] == 1

@pytest.mark.tfperf(max_host_syncs=0)
def test_users_sync():
    step = make()
    assert float(step(tf.ones([2, 3]), tf.constant(0.1))) != 0.0
'''


@pytest.fixture(scope="module")
def tensorflow():
    # Imported before pytester's snapshot of sys.modules (module scope is set up first):
    # pytester drops the modules an inline run imported, and NumPy cannot load twice.
    return pytest.importorskip("tensorflow")


@pytest.fixture
def run(tensorflow, pytester, monkeypatch):
    # The plugin is given with -p: an installed tfperf would register it once more
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")

    def go(*args):
        return pytester.runpytest("-p", "tfperf.pytest_plugin", "-p", "no:cacheprovider",
                                  *args)
    return go


@pytest.mark.tf
def test_a_clean_suite_passes(pytester, run):
    pytester.makepyfile(test_clean=SUITE)
    res = run("--tfperf-budget", "0.2")
    res.assert_outcomes(passed=3)


@pytest.mark.tf
def test_counter_limits_fail_with_the_counter_the_limit_and_the_line(pytester, run):
    pytester.makepyfile(test_bad=FAILING)
    res = run()
    res.assert_outcomes(failed=3)
    out = res.stdout.str()
    assert "host_syncs = 1, over max_host_syncs=0" in out
    assert "test_bad.py:11: 1 (float() ×1)" in out
    assert "traces = 3, over max_traces=1" in out
    assert "tf.function step traced 3×: argument `lr` changed (python value" in out
    assert "unknown limit 'max_trace'" in out
    assert "Traceback" not in out


RAISING = '''
import tensorflow as tf

def diverges(x):
    raise FloatingPointError("loss is nan")

def test_bench_of_a_raising_function(tfperf_bench):
    tfperf_bench(diverges, tf.ones([4]), name="step")

def test_valid_twin(tfperf_bench):
    tfperf_bench(lambda x: x * 2.0, tf.ones([4]), name="fine")
'''


@pytest.mark.tf
def test_a_function_that_raises_under_the_fixture_fails_its_test(pytester, run):
    """The fixture returned an error result and the test passed: a benchmark of a step that
    raises on every call was green."""
    pytester.makepyfile(test_raise=RAISING)
    res = run("--tfperf-budget", "0.1")
    res.assert_outcomes(failed=1, passed=1)
    out = res.stdout.str()
    assert "tfperf_bench: step: FloatingPointError: loss is nan" in out
    assert "Traceback" not in out


@pytest.mark.tf
def test_compare_run_fails_on_a_planted_regression(pytester, run):
    pytester.makepyfile(test_b=BENCHED.format(extra="pass"))
    base = pytester.path / "base.json"
    res = run("--tfperf-budget", "0.2", "--tfperf-save", str(base))
    res.assert_outcomes(passed=1)
    assert res.ret == 0 and base.is_file()
    assert "tfperf: run saved to" in res.stdout.str()
    (saved,) = json.loads(base.read_text())["variants"]
    assert len(saved["yardstick_s"]) == len(saved["times_s"]) >= 2  # its own yardstick

    res = run("--tfperf-budget", "0.2", "--tfperf-compare", str(base))
    assert res.ret == 0, res.stdout.str()
    # a loaded runner makes the time inconclusive (the noise control), never a failure
    assert "no regression against" in res.stdout.str() or \
        "INCONCLUSIVE: no regression found" in res.stdout.str()

    loaded = pytester.path / "loaded.json"  # the baseline's own record: an overloaded machine
    doc = json.loads(base.read_text())
    doc["machine"]["load_average_1min"] = 40.0
    loaded.write_text(json.dumps(doc))
    # on a busy runner a small budget can give too few rounds ("not measured"): the load
    # warning must show either way, and the session must not fail on time
    res = run("--tfperf-budget", "1.0", "--tfperf-compare", str(loaded))
    out = res.stdout.str()
    assert res.ret == 0, out
    assert "time inconclusive, the machine changed" in out or \
        ("time not measured (too few rounds" in out and "the machine changed between" in out), out
    res = run("--tfperf-budget", "1.0", "--tfperf-compare", str(loaded), "--tfperf-strict")
    out = res.stdout.str()
    assert "judged although the machine changed" in out or \
        ("time not measured (too few rounds" in out and "the machine changed between" in out), out

    pytester.makepyfile(test_b=BENCHED.format(extra="y.numpy()"))
    res = run("--tfperf-budget", "0.2", "--tfperf-compare", str(base))
    res.assert_outcomes(passed=1)  # every test passed; the gate fails the session
    out = res.stdout.str()
    assert res.ret == 1, out
    assert "REGRESSION" in out and "work: host_syncs 0 → 3" in out
    line = BENCHED.strip().splitlines().index("    {extra}") + 1  # makepyfile strips
    assert f"test_b.py:{line}: 0 → 3 — .numpy() ×3" in out


@pytest.mark.tf
def test_bad_gate_options_fail_before_any_test_runs_and_touch_no_file(pytester, run):
    # found when the session starts, not after the whole suite ran; `--tfperf-save` naming
    # the test file itself never replaces it by the run's JSON
    pytester.makepyfile(test_b=BENCHED.format(extra="pass"))
    source = pytester.path / "test_b.py"
    before = source.read_bytes()
    (pytester.path / "runs").mkdir()
    (pytester.path / "blocker").write_text("a file where a folder should be\n")
    for args, says in [
        (("--tfperf-compare", str(pytester.path / "none.json")), "none.json: no such file"),
        (("--tfperf-compare", str(source)), "test_b.py: not JSON"),
        (("--tfperf-save", str(source)), "test_b.py: an existing Python source"),
        (("--tfperf-save", str(pytester.path / "runs")), "runs: is a folder; give a file name"),
        (("--tfperf-store", str(pytester.path / "blocker" / "runs")), "is a file, not a folder"),
        (("--tfperf-compare", str(source), "--tfperf-fail-over", "lots"), "--fail-over"),
        # a threshold with nothing to judge: the session passed as if gated
        (("--tfperf-fail-over", "5%"), "give --tfperf-compare PATH"),
        (("--tfperf-save", str(pytester.path / "b.json"), "--tfperf-strict"),
         "give --tfperf-compare PATH"),
    ]:
        res = run("--tfperf-budget", "0.1", *args)
        shown = res.stdout.str() + res.stderr.str()
        assert res.ret == pytest.ExitCode.USAGE_ERROR, shown
        assert "tfperf: error:" in shown and says in shown, shown
        assert "Traceback" not in shown and "passed" not in shown, shown  # nothing ran
    assert source.read_bytes() == before


def test_the_plugin_loads_without_tensorflow_or_numpy():
    code = ("import sys, tfperf.pytest_plugin; "
            "bad = [m for m in ('tensorflow', 'numpy') if m in sys.modules]; "
            "sys.exit(1 if bad else 0)")
    env_path = str(ROOT / "src")
    proc = subprocess.run([sys.executable, "-c", code], env={"PYTHONPATH": env_path},
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_the_entry_point_is_declared():
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert meta["project"]["entry-points"]["pytest11"] == {"tfperf": "tfperf.pytest_plugin"}


@pytest.mark.tf
def test_a_model_built_inside_the_step_is_not_the_users_sync_or_retrace(pytester, run):
    pytester.makepyfile(test_keras=KERAS_BUILT_INSIDE)
    res = run("--tfperf-budget", "0.2")
    res.assert_outcomes(passed=2, failed=1)
    out = res.stdout.str()
    assert "host_syncs = 1, over max_host_syncs=0" in out  # the user's float() only
    assert "test_keras.py:25: 1 (float() ×1)" in out


@pytest.mark.tf
@pytest.mark.slow  # two sessions of two workers, each importing TensorFlow
def test_under_xdist_the_controller_saves_and_judges_every_workers_results(pytester,
                                                                            tensorflow,
                                                                            monkeypatch):
    """`pytest -n 2 --tfperf-save/--tfperf-compare`: each worker saved its own share over the
    same file, and the controller, holding no result, said "nothing saved" and passed a
    planted host-sync regression (exit 0; 1 without -n)."""
    pytest.importorskip("xdist")
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")

    def run(*args):
        return pytester.runpytest_subprocess(
            "-p", "tfperf.pytest_plugin", "-p", "xdist.plugin", "-p", "no:cacheprovider",
            "-n", "2", "--dist", "loadfile", "--tfperf-budget", "0.2", *args)

    other = BENCHED.replace('name="work"', 'name="other"')
    pytester.makepyfile(test_a=BENCHED.format(extra="pass"), test_b=other.format(extra="pass"))
    base = pytester.path / "base.json"
    res = run("--tfperf-save", str(base))
    assert res.ret == 0, res.stdout.str()
    assert "nothing saved" not in res.stdout.str()
    assert sorted(v["name"] for v in json.loads(base.read_text())["variants"]) == \
        ["other", "work"]

    pytester.makepyfile(test_b=other.format(extra="y.numpy()"))
    res = run("--tfperf-compare", str(base))
    out = res.stdout.str()
    assert res.ret == 1, out
    assert "REGRESSION" in out and "other: host_syncs 0 → 3" in out
