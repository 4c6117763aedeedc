"""Scripts and functions run under observation, on real TensorFlow (CPU)."""


import pytest
from profile_scripts import line_of, write_script

from tfperf.examples import SLOW
from tfperf.profile import runner


def test_numpy_in_a_loop_counts_one_sync_per_iteration_at_its_line(tf, tmp_path):
    path = write_script(tmp_path, name="prog.py", body="""
        import sys
        import tensorflow as tf

        x = tf.ones([8])
        values = []
        for i in range(int(sys.argv[1])):
            y = x * float(i)
            values.append(y.numpy())  # the sync
        print(float(tf.reduce_sum(y)))
    """)
    rep = runner.run_script(path, ["23"], capture=False)
    assert rep.error is None
    syncs = {s.line: s for s in rep.obs.host_syncs.values() if s.path == str(path)}
    loop_line = line_of(path, "# the sync")
    assert syncs[loop_line].count == 23
    assert syncs[loop_line].kinds == {".numpy()": 23}
    assert syncs[loop_line + 1].count == 1  # float(tensor) after the loop
    assert syncs[loop_line + 1].kinds == {"float()": 1}
    # 23 syncs of 8 floats cost well under 0.1 % of a run whose wall time includes TF's
    # import on a loaded machine, so the finding may be kept as data rather than advice.
    (finding,) = [f for f in rep.findings + rep.not_advice if f.code == "profile.host_sync"]
    assert finding.location.line == loop_line and finding.data["rule"] == "TFP201"


def test_case_study_inner_loop_is_the_top_eager_op_line(tf):
    from tfperf.examples.case_study_slow import compute_feature_tf_slow

    samples, weights = tf.random.normal([4, 50, 8]), tf.random.normal([50])
    # The line's share of the wall time is a timing: a process preempted between ops (a
    # busy 2-core machine, stop 43's suite run: 0.41) lowers it, never raises it. So the
    # best of up to three profiles must show it; every count is checked on each.
    shares = []
    for _ in range(3):
        rep = runner.profile(compute_feature_tf_slow, samples, weights, steps=1, capture=False)
        assert rep.error is None
        top = rep.obs.sorted_lines("eager_ops")[0]
        assert top.path == str(SLOW)
        assert top.line == line_of(SLOW, "weighted_sum = weighted_sum + window_data[j]")
        # 2 calls (warm-up + 1 step) × 4 samples × 50 window steps × 4 ops per line
        assert top.count == 2 * 4 * 50 * 4
        assert set(top.kinds) == {"StridedSlice", "Mul", "AddV2"}
        shares.append(top.total_s / rep.obs.wall_s)
        if shares[-1] > 0.5:
            break
    assert max(shares) > 0.5, shares
    (storm,) = [f for f in rep.findings if f.code == "profile.eager_ops"]
    assert storm.location.line == top.line and "TFP101" in storm.message


def test_a_script_that_raises_still_reports_what_ran(tf, tmp_path):
    path = write_script(tmp_path, name="prog.py", body="""
        import tensorflow as tf

        @tf.function
        def f(x, k):
            return x + k

        for k in range(4):
            f(tf.ones([2]), k).numpy()
        raise RuntimeError("boom after the loop")
    """)
    rep = runner.run_script(path, capture=False)
    assert isinstance(rep.error, RuntimeError)
    assert rep.exit_status == 1
    (fn,) = rep.obs.functions
    assert fn.traces == 4
    assert sum(s.count for s in rep.obs.host_syncs.values()) == 4
    d = rep.to_dict()
    assert d["error"]["type"] == "RuntimeError" and "boom" in d["error"]["message"]
    text = rep.text()
    assert "boom after the loop" in text and "tf.function calls" in text


def test_sys_exit_zero_is_not_an_error_and_argv_is_restored(tf, tmp_path):
    import sys

    path = write_script(tmp_path, name="prog.py", body="""
        import sys
        assert sys.argv[1:] == ["--flag", "v"], sys.argv
        assert __name__ == "__main__"
        sys.exit(0)
    """)
    before = sys.argv[:]
    rep = runner.run_script(path, ["--flag", "v"], capture=False)
    assert rep.error is None and sys.argv == before


def test_bad_targets_are_input_errors(tmp_path):
    with pytest.raises(runner.ProfileInputError, match="no such file"):
        runner.run_script(tmp_path / "missing.py")
    with pytest.raises(runner.ProfileInputError, match="no module named"):
        runner.load_callable("no_such_module_xyz:f")
    with pytest.raises(runner.ProfileInputError, match="has no attribute"):
        runner.load_callable("tfperf.examples:no_such_function")
    broken = write_script(tmp_path, "raise ImportError('half-written')\n", name="broken.py")
    with pytest.raises(runner.ProfileInputError, match="half-written"):
        runner.load_callable(f"{broken}:f")


def test_watch_api_reports_and_prints(tf, capsys):
    from tfperf.profile import watch

    x = tf.ones([4])
    with watch() as w:
        for _ in range(12):
            float(tf.reduce_sum(x))
    rep = w.report()
    out = capsys.readouterr().out
    assert "Host syncs" in out and "float()×12" in out
    assert sum(s.count for s in rep.obs.host_syncs.values()) == 12
    assert rep.obs.eager_op_count >= 12


def test_package_is_callable_as_the_profile_function(tf):
    import tfperf.profile

    @tf.function
    def double(x):
        return 2 * x

    rep = tfperf.profile(double, tf.ones([2]), steps=2, capture=False)
    (fn,) = rep.obs.functions
    assert (fn.calls, fn.traces) == (3, 1)  # warm-up + 2 steps, one trace
    assert rep.exit_status == 0 and not rep.findings


def test_command_module_does_not_import_tensorflow():
    import subprocess
    import sys

    code = ("import sys, argparse; import tfperf.profile.command as c; "
            "c.register(argparse.ArgumentParser().add_subparsers()); "
            "print('tensorflow' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_tf_function_recreated_in_a_loop_is_named(tf, tmp_path):
    path = write_script(tmp_path, name="prog.py", body="""
        import tensorflow as tf

        def body(x):
            return x + 1

        for _ in range(4):
            tf.function(body)(tf.ones([2]))  # a new tf.function object each time
    """)
    rep = runner.run_script(path, capture=False)
    assert len(rep.obs.functions) == 4
    (finding,) = [f for f in rep.findings if f.name == "tf-function-recreated"]
    assert finding.data["rule"] == "TFP302" and finding.data["objects"] == 4
    assert finding.location.line == line_of(path, "def body")


def test_script_capture_stops_after_steps_calls(tf, tmp_path):
    path = write_script(tmp_path, name="prog.py", body="""
        import tensorflow as tf

        @tf.function
        def f(x):
            return tf.matmul(x, x)

        x = tf.ones([16, 16])
        for _ in range(10):
            f(x)
    """)
    rep = runner.run_script(path, logdir=tmp_path / "logs", steps=2)
    (fn,) = rep.obs.functions
    assert fn.calls == 10  # observation goes on after the capture stopped
    assert rep.capture is not None and rep.capture.step_source == "tf.function calls"
    assert rep.capture.steps == 2
    assert rep.capture.by_type.get("MatMul", 0) > 0


def test_profiling_the_vectorised_case_study_does_not_raise(tf):
    # tf.reshape's fast path hands the op callback its op type as bytes; it used to raise.
    from tfperf.examples.case_study_fixed import compute_feature_tf_vec

    report = runner.profile(compute_feature_tf_vec, tf.ones([2, 10, 4]), tf.ones([10]),
                            steps=1, capture=False)
    assert report.error is None, report.error
    assert report.obs.eager_op_count > 0
