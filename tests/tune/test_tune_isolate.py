"""``tune(..., isolate=True)``: candidates in child processes of their own, run two at a time
(the CPU path of ``devices``, and one per GPU with injected device facts), where a segfault,
a hang, a wrong answer and a GPU-only lever each reject only their own candidate, with the
reason; thread-pool sizes set in the child; the pick and its patch as in-process."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from planted import Planted  # noqa: E402  (tests/tune/planted.py)

from tfperf.tune import arrays, isolate, tune  # noqa: E402
from tfperf.tune.device import DeviceFacts  # noqa: E402

CHAIN = """
import tensorflow as tf


def chain(x):
    y = x
    for _ in range(30):
        y = tf.sin(y) * 0.5 + y * 0.5
    return y
"""

#: CHAIN with a Python sleep of 50 ms a call: eager, every call; traced, once.
SLEEPY_CHAIN = ("from time import sleep\n"
                + CHAIN.replace("    y = x\n", "    sleep(0.05)\n    y = x\n"))


#: The budget left as the isolated searches see it (the clock stands still, conftest.py):
#: more than any child's start (17 s on a loaded 2-core machine), so every candidate starts;
#: a short final timing, too short for a control process (it needs twice a child's start).
ISOLATED_SEARCH_S, ISOLATED_FINAL_S = 600.0, 2.0


def _children_of_this_process() -> list[int]:
    """Live tune children whose parent is this process (none may be left behind)."""
    me, out = os.getpid(), []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == me and b"tfperf.tune.child" in cmdline:
            out.append(int(entry.name))
    return out


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc for leftover children")
def test_isolated_candidates_contain_a_segfault_and_a_hang(user_module, monkeypatch,
                                                           frozen_budget):
    monkeypatch.setattr(isolate, "STAGE_SLACK", 1.0)  # the hang is killed sooner
    frozen_budget(search_s=ISOLATED_SEARCH_S, final_s=ISOLATED_FINAL_S)
    # Stateful inputs (a tf.Variable) cannot be shipped: each child calls the module's own
    # inputs function, found by name.
    # The eager baseline sleeps 50 ms a call in Python, which a tf.function runs once, when
    # it traces: the planted pick beats the baseline by far more than any load's noise (the
    # plain chain's gain, a few ms, was within it at load 10 and nothing was picked).
    mod = user_module(SLEEPY_CHAIN + "\n\ndef make():\n"
                      "    x = tf.random.stateless_normal([64, 32], [1, 2])\n"
                      "    return (tf.Variable(x),), {}\n")
    first = "    y = x\n"
    levers = [
        Planted("planted: tf.function", "def chain(x):", "@tf.function\ndef chain(x):"),
        Planted("planted: segfault", first, "    import ctypes\n    ctypes.string_at(0)\n" + first),
        Planted("planted: hang", first,
                "    import signal, time\n"  # SIGALRM blocked: the child's own limit is deaf
                "    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})\n"
                "    time.sleep(600)\n" + first),
    ]
    result = tune(mod.chain, budget=20, inputs=mod.make, levers=levers, devices=2)
    by = {c.name: c for c in result.candidates}
    assert by["planted: segfault"].rejected == \
        "its process failed: child died by signal 11 (SIGSEGV) in screen"
    hang = by["planted: hang"].rejected
    assert hang.startswith("its process failed: timed out after ") and hang.endswith(" in screen")
    assert result.best_name == "planted: tf.function"
    assert "+@tf.function" in result.patch and result.best_fn is None
    assert result.best.equivalent is True and result.best.speedup > 1
    # Two local processes at a time: both slots served candidates.
    slots = {n.split("(")[1].split(")")[0] for c in result.candidates for n in c.notes
             if n.startswith("isolated:")}
    assert slots == {"CPU process 1", "CPU process 2"}
    assert result.device["isolation"]["slots"] == ["CPU process 1", "CPU process 2"]
    assert _children_of_this_process() == []
    assert "its process failed" in result.table()


def test_values_cross_the_process_boundary_as_arrays(tmp_path):
    from tfperf.bench.equivalence import Opaque, Ragged, Sparse

    value = {"a": [np.arange(6, dtype=np.float32).reshape(2, 3), (1, 2.5, True, None)],
             "t": tf.constant([b"x", b"yz"]), 3: np.float64(1.5), "b": b"\x00\x01",
             "r": Ragged((np.array([1, 2]),), np.arange(3)),
             "s": Sparse(np.array([[0, 1]]), np.array([4.0]), (2, 2)), "o": Opaque("Model"),
             "bf16": tf.constant([1.5, -2.0], tf.bfloat16).numpy()}
    back = arrays.load(arrays.save(value, tmp_path / "v.npz"), tmp_path / "v.npz")
    assert back["a"][0].dtype == np.float32 and back["a"][0].tolist() == [[0, 1, 2], [3, 4, 5]]
    assert back["a"][1] == (1, 2.5, True, None) and isinstance(back["a"][1][1], float)
    assert isinstance(back["t"], tf.Tensor) and back["t"].numpy().tolist() == [b"x", b"yz"]
    assert back[3] == 1.5 and back["b"] == b"\x00\x01" and back["o"] == Opaque("Model")
    assert back["r"].flat_values.tolist() == [0, 1, 2] and back["s"].dense_shape == (2, 2)
    # bfloat16 (an ml_dtypes type, a raw void to .npz) keeps its dtype and values.
    assert back["bf16"].dtype.name == "bfloat16" and back["bf16"].tolist() == [1.5, -2.0]
    with pytest.raises(arrays.ShipError, match=r"tf\.Variable"):
        arrays.save([tf.Variable(1.0)], tmp_path / "w.npz", "the inputs")


def test_device_slots_pin_one_process_per_gpu_from_the_facts():
    from tfperf.tune.pool import device_slots
    from tfperf.tune.target import TuneError

    two = DeviceFacts(gpus=((8, 0), (8, 0)))
    assert [s.env for s in device_slots("auto", two)] == [{"CUDA_VISIBLE_DEVICES": "0"},
                                                          {"CUDA_VISIBLE_DEVICES": "1"}]
    assert [s.name for s in device_slots(1, two)] == ["GPU 0"]
    assert [s.name for s in device_slots("auto", DeviceFacts())] == ["CPU process"]
    assert [s.env for s in device_slots(2, DeviceFacts())] == [{}, {}]
    with pytest.raises(TuneError, match="3 devices asked, but the device facts show 2"):
        device_slots(3, two)
    with pytest.raises(TuneError, match="count or 'auto'"):
        device_slots("many", two)


def test_threads_and_one_process_per_injected_gpu(user_module, frozen_budget):
    """Injected facts stand for two GPUs: each child is pinned to one with
    CUDA_VISIBLE_DEVICES; a float16 candidate needs a GPU and its process sees none here, so it
    is rejected with that reason; thread-pool sizes are set in each child before TensorFlow
    starts, and the patch is those lines. (No final rounds: the segfault test has them.)"""
    frozen_budget(search_s=ISOLATED_SEARCH_S, final_s=0.0)
    from tfperf.tune.levers.precision import ReducedPrecision
    from tfperf.tune.levers.threads import Threads

    mod = user_module(CHAIN)
    x = tf.random.Generator.from_seed(0).normal([64, 32])
    wrong = Planted("planted: skip the loop", "    for _ in range(30):\n"
                    "        y = tf.sin(y) * 0.5 + y * 0.5\n", "")
    wrong.stage = 45  # beside float16, in the other process
    levers = [ReducedPrecision("float16"), wrong, Threads(1, 1), Threads(2, 1)]
    result = tune(mod.chain, (x,), budget=30, levers=levers, devices="auto", threads=True,
                  facts=DeviceFacts(gpus=((8, 0), (8, 0))))
    by = {c.name: c for c in result.candidates}
    f16 = by["float16 casts"].rejected
    assert f16 is not None and f16.startswith("needs a GPU: this process (CUDA_VISIBLE_DEVICES=")
    assert f16.endswith(") sees none")
    # The outputs came back as arrays and were judged here, as in-process.
    assert by["planted: skip the loop"].rejected.startswith("disagrees with the baseline")
    assert by["planted: skip the loop"].equivalent is False
    for intra in (1, 2):
        cand = by[f"threads: intra_op {intra}, inter_op 1"]
        # Kept, or measured and found within the control's spread (timing noise, not a fault)
        assert cand.rejected is None or cand.rejected.startswith(
            "not told apart from the baseline"), cand.rejected
        assert f"TensorFlow thread pools in its process: intra_op {intra}, inter_op 1 " \
               "(set before TensorFlow started)" in cand.notes
        assert f"+tf.config.threading.set_intra_op_parallelism_threads({intra})" in cand.patch
    pinned = {n for c in result.candidates for n in c.notes if "CUDA_VISIBLE_DEVICES" in n}
    assert pinned == {"its process saw CUDA_VISIBLE_DEVICES='0' and 0 GPU(s)",
                      "its process saw CUDA_VISIBLE_DEVICES='1' and 0 GPU(s)"}
    assert result.device["isolation"]["slots"] == ["GPU 0", "GPU 1"]


def test_the_threads_lever_needs_isolation_and_writes_the_lines_after_the_import():
    from types import SimpleNamespace

    from tfperf.tune.lever import LeverContext
    from tfperf.tune.levers import threads

    ctx = LeverContext(SimpleNamespace(), DeviceFacts())  # type: ignore[arg-type]
    assert threads.levers(ctx) == []  # not asked for
    ctx.threads = True
    lever = threads.levers(ctx)[0]
    assert lever.applies(ctx).startswith("needs --isolate")
    ctx.isolate = True
    assert lever.applies(ctx) is None
    text = '"""Doc."""\nimport numpy as np\nimport tensorflow as tf\n\nX = tf.ones([2])\n'
    out = lever.build(text, ctx).splitlines()
    assert out[2:6] == ["import tensorflow as tf", threads.COMMENT,
                        "tf.config.threading.set_intra_op_parallelism_threads(1)",
                        "tf.config.threading.set_inter_op_parallelism_threads(1)"]
    assert threads.settings(2) == [(1, 1), (1, 2), (2, 1)]
    assert threads.settings(8) == [(1, 1), (4, 2), (8, 1)]


def test_cli_scale_options_give_one_line_errors(tmp_path, capsys, monkeypatch):
    """--ray without Ray installed, and a bad --devices, end with one line and exit 2 before
    the user's file is imported."""
    from tfperf import cli

    src = tmp_path / "m.py"
    src.write_text("raise SystemExit('imported')\n")
    monkeypatch.setitem(__import__("sys").modules, "ray", None)  # as if not installed
    assert cli.main(["tune", f"{src}:f", "--ray", "local"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "tfperf tune: error: --ray needs Ray, which is not installed here: pip install " \
                  "'tfperf[ray]' (or run without --ray)"
    assert cli.main(["tune", f"{src}:f", "--devices", "0"]) == 2
    assert "--devices must be a positive count or 'auto', not '0'" in capsys.readouterr().err


def test_a_ray_cluster_runs_the_candidates(user_module):
    """With Ray installed: a local Ray instance runs the candidates' processes."""
    ray = pytest.importorskip("ray")
    mod = user_module(CHAIN)
    levers = [Planted("planted: tf.function", "def chain(x):", "@tf.function\ndef chain(x):"),
              Planted("planted: segfault", "    y = x\n",
                      "    import ctypes\n    ctypes.string_at(0)\n    y = x\n")]
    x = tf.random.Generator.from_seed(0).normal([64, 32])
    try:
        result = tune(mod.chain, (x,), budget=60, levers=levers, ray="local", devices=2)
    finally:
        ray.shutdown()
    by = {c.name: c for c in result.candidates}
    assert by["planted: segfault"].rejected == \
        "its process failed: child died by signal 11 (SIGSEGV) in screen"
    assert result.best_name == "planted: tf.function" and result.best.equivalent is True
    assert result.device["isolation"]["kind"] == "ray"


def test_what_a_child_cannot_find_is_refused_before_any_process_starts(user_module):
    from tfperf.tune.target import TuneError

    mod = user_module(CHAIN)
    x = tf.ones([4, 4])
    with pytest.raises(TuneError, match="inputs factory to be a function defined at module"):
        tune(mod.chain, inputs=lambda: ((x,), {}), isolate=True, budget=5)
    with pytest.raises(TuneError, match=r"cannot send the inputs to a child process: the "
                                        r"inputs\[0\]\[0\]: a tf\.Variable"):
        tune(mod.chain, (tf.Variable(x),), isolate=True, budget=5)
    assert _children_of_this_process() == []


def test_a_speedup_within_two_baseline_processes_spread_is_not_picked():
    """The final rounds measure a second process of the baseline; a candidate whose speedup
    is no larger than that control's is rejected as indistinguishable."""
    from types import SimpleNamespace

    from tfperf.tune.isolate import Isolation
    from tfperf.tune.result import CandidateResult

    iso = Isolation.__new__(Isolation)  # only the rule, no processes
    base = SimpleNamespace(record=CandidateResult("baseline", []))
    lives = {k: SimpleNamespace(record=CandidateResult(f"c{k}", ["x"], speedup=s))
             for k, s in enumerate((1.05, 1.5, 0.8))}
    iso.base, iso.lives = base, {**lives, 9: base}
    closed = []
    # The control came out 1/0.9 = ×1.11 apart from the baseline, per round.
    iso._judge_by_control([1.0, 1.0, 1.0], [0.9, 0.9, 0.9],
                          SimpleNamespace(close=lambda: closed.append(1)))
    assert lives[0].record.rejected == ("not told apart from the baseline: ×1.05 is within the "
                                        "×1.11 a second process of the baseline measured "
                                        "against the first")
    assert lives[1].record.rejected is None and lives[2].record.rejected is None
    assert iso.control == {"ratio": 1.1111, "rounds": 3} and closed == [1]


def test_an_isolated_cond_rewrite_says_its_gradient_was_not_checked(monkeypatch, tmp_path):
    # review 38b item 5: the functions live in the children, so the gradient check cannot
    # run; the candidate says so (before, it was skipped with no word)
    from types import SimpleNamespace

    from tfperf.tune.result import CandidateResult
    from tfperf.tune.search import Search

    source = "def f(r):\n    return tf.cond(r > 0.0, lambda: r, lambda: -r)\n"
    edited = "def f(r):\n    return tf.where(r > 0.0, r, -r)\n"
    monkeypatch.setattr(isolate, "apply_levers", lambda ctx, levers: edited)
    record = CandidateResult("planted where", ["planted where"])
    live = SimpleNamespace(levers=(), record=record, replaced_conds=False, inputs=None)
    search = SimpleNamespace(left=lambda: 600.0, ctx=SimpleNamespace(
        target=SimpleNamespace(source=source)), target=SimpleNamespace(diff=lambda t: "diff"),
        workdir=tmp_path, varied_for=lambda: None, varied_ints=False)
    pool = SimpleNamespace(start_s=1.0, shared_cpu=True, pending={},
                           _submit=lambda *a, **k: None)
    isolate.Isolation.build_and_screen(pool, search, live, limit=1.0)
    assert live.replaced_conds is True
    Search._check_gradient(SimpleNamespace(base=live, isolation=pool,
                                           target=SimpleNamespace(inputs=None)), live)
    assert any("gradient was not checked" in n and "--isolate" in n for n in record.notes), \
        record.notes
    assert record.rejected is None
