"""Per-replica figures under MirroredStrategy: real captures over two logical CPU devices in a
child process, and the verdicts from injected capture figures."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tfperf.core.findings import Status
from tfperf.profile import advice, placement, replicas
from tfperf.profile.observation import Observation
from tfperf.profile.report import build_report
from tfperf.profile.xplane import CaptureSummary, OpRow

SRC = Path(__file__).resolve().parents[2] / "src"
CHILD = Path(__file__).with_name("replica_child.py")
ATTEMPTS = 3  # TF 2.21's profiler has crashed processes while collecting (docs/multi-device.md)
D0 = "/job:localhost/replica:0/task:0/device:CPU:0"
D1 = "/job:localhost/replica:0/task:0/device:CPU:1"


def test_a_step_first_run_before_the_watch_is_placed_from_its_traced_graphs(real):
    doc = real["prewarmed"]
    split = doc["replicas"]
    assert split is not None, doc["capture_note"]
    assert split["slowest"] == D1 and split["ratio"] > 2
    assert split["attributed_share"] > 0.9


def _run_child(args, tmp_path):
    """Run a TF child; retry only when it died by a signal (TF's profiler crash), never on a
    wrong result, and skip with the crash shown when every attempt died."""
    env = {**os.environ, "PYTHONPATH": str(SRC), "TF_CPP_MIN_LOG_LEVEL": "2"}
    crashes = []
    for _ in range(ATTEMPTS):
        proc = subprocess.run([sys.executable, *args], capture_output=True, text=True,
                              env=env, cwd=tmp_path, timeout=300)
        if proc.returncode >= 0:
            return proc
        crashes.append((proc.returncode, proc.stderr[-600:]))
    pytest.skip(f"TF's profiler killed the process in each of {ATTEMPTS} attempts: {crashes}")


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("replicas")
    proc = _run_child([str(CHILD), str(tmp)], tmp)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("slow", [1, 0])
def test_the_replica_made_slow_is_named_slowest(real, slow):
    doc = real[f"slow{slow}"]
    split = doc["replicas"]
    assert split is not None, doc["capture_note"]
    by_short = {r["short"]: r for r in split["replicas"]}
    assert set(by_short) == {"CPU:0", "CPU:1"}
    slow_dev, fast_dev = by_short[f"CPU:{slow}"], by_short[f"CPU:{1 - slow}"]
    assert split["slowest"] == slow_dev["device"]
    # 6 extra matmuls forward and back on one replica: several times the other's compute
    assert slow_dev["compute_s"] > 2 * fast_dev["compute_s"]
    assert split["ratio"] > 2 and split["gap_s"] > 0
    # each replica's own all-reduce is found and placed on its device (one device holding both
    # would leave the other at 0). Which of the two lasts longer is TF's scheduling, not ours:
    # with a 2-thread inter-op pool (2 cores) the fast replica's all-reduce can be queued behind
    # the slow one's matmuls instead of waiting inside (CI: 0.25 ms fast vs 0.38 ms slow)
    assert slow_dev["collective_s"] > 0 and fast_dev["collective_s"] > 0
    assert split["steps"] == 3 and split["step_s"] > 0
    assert split["attributed_share"] > 0.9  # the warm-up ran inside the watch: all placed
    found = [f for f in doc["advice"] if f["code"] == "profile.replicas"]
    assert [f["status"] for f in found] == ["warn"]
    assert f"CPU:{slow}" in found[0]["message"] and found[0]["data"]["slowest"] == slow_dev[
        "device"]
    text = real[f"slow{slow}_text"]
    assert "Replicas (2 devices, host op events; median per step)" in text
    assert f"CPU:{slow} (slowest)" in text
    assert f"slowest replica: CPU:{slow}" in text


def test_watch_records_the_devices_that_ran_the_step(real):
    assert real["watch_devices_True"] == [D0, D1]
    assert real["watch_devices_False"] == []  # off by default without a capture


def test_watch_with_a_capture_names_the_slow_replica(real):
    doc = real["watch_capture"]
    assert doc["capture"]["step_source"] == "tf.function calls"
    assert doc["capture"]["steps"] == 4
    split = doc["replicas"]
    assert split["slowest"] == D1 and split["ratio"] > 2
    assert any(f["code"] == "profile.replicas" and f["status"] == "warn"
               for f in doc["advice"])


def test_the_cli_names_the_slow_replica_of_a_script(tmp_path):
    """A script that sets up its logical devices itself, under `tfperf profile`: the
    placement map must not start TF's runtime before the script does."""
    script = SRC / "tfperf" / "examples" / "mirrored_replicas.py"
    proc = _run_child(["-m", "tfperf", "profile", str(script), "--json", "--logdir",
                       str(tmp_path / "log"), "--", "--slow-replica", "1", "--steps", "4"],
                      tmp_path)
    assert proc.returncode == 1, proc.stderr[-3000:]  # the straggler warns
    doc = json.loads(proc.stdout)
    assert doc["error"] is None
    split = doc["replicas"]
    assert split["slowest"] == D1 and split["ratio"] > 2
    assert any(f["code"] == "profile.replicas" and f["status"] == "warn"
               for f in doc["advice"])


# -- injected figures -------------------------------------------------------------------------


def _summary(rows, steps=2, step_s=0.010, host_only=True):
    cap = CaptureSummary(path="x.xplane.pb", steps=steps, step_s=step_s,
                         devices=[] if host_only else ["/device:GPU:0", "/device:GPU:1"])
    where = "host" if host_only else "device"
    cap.ops = [OpRow(name, op_type, where, False, count=steps, self_s=s, total_s=s)
               for name, op_type, s in rows]
    return cap


PLACED = {"MatMul": D0, "CollectiveReduceV2": D0, "replica_1/MatMul": D1,
          "CollectiveReduceV2_1": D1, "replica_1/cond": D1}


def _findings(rows, placed=PLACED, **kw):
    split = replicas.split(_summary(rows, **kw), placed)
    return split, {f.name: f for f in advice.replica_findings(split)}


def test_injected_straggler_is_named_with_its_gap():
    split, found = _findings([("MatMul", "MatMul", 0.002), ("replica_1/MatMul", "MatMul", 0.010),
                              ("CollectiveReduceV2", "CollectiveReduceV2", 0.009),
                              ("CollectiveReduceV2_1", "CollectiveReduceV2", 0.001)])
    assert split.slowest.device == D1
    assert split.gap_s == pytest.approx(0.004) and split.ratio == pytest.approx(5.0)
    f = found["replica-imbalance"]
    assert f.status is Status.WARN and "CPU:1" in f.message and "4.00 ms a step" in f.message
    # the replica that waits least spends 0.5 ms of a 10 ms step in the all-reduce: 5 %
    assert split.collective_share == pytest.approx(0.05)
    assert "collective-bound" not in found


def test_injected_balanced_replicas_only_inform():
    _, found = _findings([("MatMul", "MatMul", 0.004), ("replica_1/MatMul", "MatMul", 0.0042)])
    assert set(found) == {"replicas-balanced"}
    assert found["replicas-balanced"].status is Status.INFO


def test_injected_collective_bound_step_warns():
    _, found = _findings([("MatMul", "MatMul", 0.002), ("replica_1/MatMul", "MatMul", 0.002),
                          ("CollectiveReduceV2", "CollectiveReduceV2", 0.016),
                          ("CollectiveReduceV2_1", "CollectiveReduceV2", 0.014)])
    assert found["collective-bound"].status is Status.WARN
    assert "70 %" in found["collective-bound"].message  # the least waiting: 7 ms of 10
    assert found["replicas-balanced"].status is Status.INFO


def test_inlined_bodies_take_their_call_nodes_device_and_unknown_ops_are_counted():
    split, found = _findings([("MatMul", "MatMul", 0.002),
                              ("replica_1/cond/then/_4/replica_1/cond/MatMul", "MatMul", 0.006),
                              ("made_before_the_watch", "MatMul", 0.020)])
    assert split.slowest.device == D1 and split.slowest.op_s == pytest.approx(0.003)
    assert split.unattributed_s == pytest.approx(0.010)
    assert split.attributed_share == pytest.approx(0.008 / 0.028)
    assert found["placement-partial"].status is Status.INFO


def test_gpu_captures_split_device_kernels():
    gpu = {"MatMul": "/job:localhost/replica:0/task:0/device:GPU:0",
           "replica_1/MatMul": "/job:localhost/replica:0/task:0/device:GPU:1"}
    split, found = _findings([("MatMul", "MatMul", 0.008), ("replica_1/MatMul", "MatMul", 0.002)],
                             placed=gpu, host_only=False)
    assert split.where == "device" and split.slowest.device.endswith("GPU:0")
    assert "GPU:0" in found["replica-imbalance"].message


def test_one_device_or_no_map_is_no_split():
    rows = [("MatMul", "MatMul", 0.002), ("replica_1/MatMul", "MatMul", 0.002)]
    assert replicas.split(_summary(rows), {}) is None
    assert replicas.split(_summary(rows), {"MatMul": D0}) is None


def test_a_name_placed_on_two_devices_is_ambiguous():
    graphs = [_graph([("MatMul", D0), ("Add", D0)]), _graph([("MatMul", D1)])]
    where = placement.graph_devices(graphs)
    assert placement.device_of("Add", where) == D0
    assert placement.device_of("MatMul", where) is None
    assert placement.device_of("Add/inner/op", where) == D0


def _graph(nodes):
    from types import SimpleNamespace

    return SimpleNamespace(node=[SimpleNamespace(name=n, device=d) for n, d in nodes])


def test_the_report_renders_replicas_in_text_and_json():
    obs = Observation(placement=PLACED)
    cap = _summary([("MatMul", "MatMul", 0.002), ("replica_1/MatMul", "MatMul", 0.010)])
    rep = build_report(obs, capture=cap)
    text = rep.text()
    assert "Replicas (2 devices" in text and "CPU:1 (slowest)" in text
    doc = json.loads(rep.to_json())
    assert doc["replicas"]["slowest"] == D1
    assert [r["short"] for r in doc["replicas"]["replicas"]] == ["CPU:0", "CPU:1"]
    assert build_report(Observation(), capture=cap).to_dict()["replicas"] is None


def _windowed(events, windows):
    cap = CaptureSummary(path="x.xplane.pb", steps=len(windows), step_s=None,
                         step_windows=windows)
    cap.op_events = events
    return cap


def test_medians_over_steps_keep_a_first_step_from_hiding_the_straggler():
    ms = 10**9  # ps
    windows = [(0, 100 * ms), (100 * ms, 110 * ms), (110 * ms, 120 * ms), (120 * ms, 130 * ms)]
    events = [(1 * ms, 90 * ms, "MatMul", "MatMul", "host")]  # CPU:0's one-off first step
    for start, _ in windows:
        events += [(start + ms, ms, "MatMul", "MatMul", "host"),
                   (start + ms, 4 * ms, "replica_1/MatMul", "MatMul", "host"),
                   (start + 6 * ms, 3 * ms, "CollectiveReduceV2", "CollectiveReduceV2", "host")]
    events.append((200 * ms, 50 * ms, "replica_1/MatMul", "MatMul", "host"))  # between steps
    split = replicas.split(_windowed(events, windows), PLACED)
    assert split.slowest.device == D1  # totals / steps would name CPU:0 (91 ms in step 0)
    cpu0, cpu1 = split.replicas
    assert cpu1.compute_s == pytest.approx(0.004) and cpu0.compute_s == pytest.approx(0.001)
    assert split.step_s == pytest.approx(0.010)  # median window: call windows, no markers
    assert cpu0.collective_s == pytest.approx(0.003)
    assert cpu0.ops == 9 and cpu1.ops == 4  # the event between steps is left out


def test_gpu_device_kernels_are_split_per_step():
    ms = 10**9
    gpu = {"MatMul": "/job:localhost/replica:0/task:0/device:GPU:0",
           "replica_1/MatMul": "/job:localhost/replica:0/task:0/device:GPU:1",
           "NcclAllReduce": "/job:localhost/replica:0/task:0/device:GPU:0",
           "NcclAllReduce_1": "/job:localhost/replica:0/task:0/device:GPU:1"}
    windows = [(0, 10 * ms), (10 * ms, 20 * ms)]
    events = []
    for start, _ in windows:
        events += [(start, 2 * ms, "MatMul", "MatMul", "device"),
                   (start, 6 * ms, "replica_1/MatMul", "MatMul", "device"),
                   (start, ms, "MatMul", "MatMul", "host"),  # the launch on the host: not split
                   (start + 2 * ms, 5 * ms, "NcclAllReduce", "NcclAllReduce", "device"),
                   (start + 6 * ms, ms, "NcclAllReduce_1", "NcclAllReduce", "device")]
    cap = _windowed(events, windows)
    cap.devices = ["/device:GPU:0", "/device:GPU:1"]
    split = replicas.split(cap, gpu)
    assert split.where == "device" and split.slowest.device.endswith("GPU:1")
    g0, g1 = split.replicas
    assert (g0.compute_s, g0.collective_s) == (pytest.approx(0.002), pytest.approx(0.005))
    assert (g1.compute_s, g1.collective_s) == (pytest.approx(0.006), pytest.approx(0.001))


def test_one_device_spelt_two_ways_is_one_replica():
    spelt = {**PLACED, "replica_1/Relu": "cpu:1", "Relu": "/device:CPU:0"}
    split, _ = _findings([("MatMul", "MatMul", 0.002), ("replica_1/MatMul", "MatMul", 0.006),
                          ("replica_1/Relu", "Relu", 0.002), ("Relu", "Relu", 0.002)],
                         placed=spelt)
    assert [r.device for r in split.replicas] == [D0, D1]
    assert split.slowest.op_s == pytest.approx(0.004)
