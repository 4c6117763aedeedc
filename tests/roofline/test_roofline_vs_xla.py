"""tfperf's FLOPs against XLA's own cost analysis, where both exist: dots and convolutions.

XLA's cost analysis runs inside XProf's converter (the `xprof` package) for device planes.
The CPU capture of XLA-compiled functions is given to it with its XLA ops moved onto a
device plane; XProf's HLO op table then carries XLA's FLOPs for each op (FLOP rate × time).
Element-wise and reduction ops are left out: XProf's device cost model weighs them per
element by its own GPU figures (an f32 add counts 3), not XLA's 1 FLOP per element.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
TOLERANCE = 0.01


@pytest.fixture(scope="module")
def xla_capture(tmp_path_factory):
    pytest.importorskip("tensorflow")
    out = tmp_path_factory.mktemp("xla")
    done = subprocess.run([sys.executable, str(HERE / "make_xla_capture.py"), str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    (path,) = out.glob("plugins/profile/*/*.xplane.pb")
    return path


def _on_a_device(pb2, src: Path, dest: Path) -> Path:
    """The capture with its XLA op events copied onto a /device:GPU:0 stream."""
    space = pb2.XSpace()
    space.ParseFromString(src.read_bytes())
    (host,) = [p for p in space.planes if p.name == "/host:CPU"]
    names = {k: m.name for k, m in host.stat_metadata.items()}
    gpu = space.planes.add(id=1, name="/device:GPU:0")
    for k, m in host.stat_metadata.items():
        gpu.stat_metadata[k].CopyFrom(m)
    correlation = max(names) + 1
    gpu.stat_metadata[correlation].id = correlation
    gpu.stat_metadata[correlation].name = "correlation_id"
    stream = gpu.lines.add(id=1, name="Stream #1(Compute)")
    for line in host.lines:
        stream.timestamp_ns = line.timestamp_ns
        for ev in line.events:
            if any(names.get(s.metadata_id) == "hlo_op" for s in ev.stats):
                gpu.event_metadata[ev.metadata_id].CopyFrom(host.event_metadata[ev.metadata_id])
                copy = stream.events.add()
                copy.CopyFrom(ev)
                copy.stats.add(metadata_id=correlation, int64_value=1)
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(space.SerializeToString())
    return dest


def _xla_flops(path: Path) -> dict[tuple[int, str], float]:
    """{(program id, HLO op): FLOPs per execution} from XLA's cost analysis, via XProf."""
    convert = pytest.importorskip("xprof.convert.raw_to_tool_data")
    data, _ = convert.xspace_to_tool_data([str(path)], "hlo_stats", {})
    table = json.loads(data)
    cols = [c["id"] for c in table["cols"]]
    out = {}
    for r in table["rows"]:
        row = dict(zip(cols, [c.get("v") for c in r["c"]], strict=True))
        flops = row["model_flop_rate"] * 1e9 * row["total_time"] * 1e-6 / row["occurrences"]
        out[(int(row["program_id"]), row["hlo_op_name"])] = flops
    return out


def _main_ops(flops: dict) -> dict:
    return {k: v for k, v in flops.items()
            if k[1].split(".")[0] in ("MatMul", "Einsum", "Conv2D")}


@pytest.fixture(scope="module")
def xla(xla_capture, tmp_path_factory):
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    dest = tmp_path_factory.mktemp("device") / "plugins/profile/run/vm.xplane.pb"
    flops = _main_ops(_xla_flops(_on_a_device(xplane_pb2, xla_capture, dest)))
    assert len(flops) == 7
    return flops


def test_hlo_costs_from_the_capture_match_xlas(xla_capture, xla):
    from tfperf.profile.read.summary import summarise_capture
    from tfperf.profile.read.xspace import Capture
    from tfperf.roofline.hlo import capture_costs

    with Capture(xla_capture) as cap:
        s = summarise_capture(cap)
        ours = capture_costs(s.hlo_protos, cap.blob)
    for (program, op), theirs in xla.items():
        (mine,) = [c for (m, name), (c, _, _) in ours.items()
                   if name == op and m.endswith(f"({program})")]
        assert mine.flops == pytest.approx(theirs, rel=TOLERANCE), op


def test_tf_op_formulas_match_xlas(xla):
    from xla_cases import XLA_CASES

    from tfperf.roofline.graph import graph_cost

    ours = []
    for name, (fn, make) in XLA_CASES.items():
        cost = graph_cost(fn, make())
        assert not cost.uncounted and cost.error is None, name
        ours.append(cost.flops)
    theirs = sorted(xla.values())
    assert sorted(ours) == pytest.approx(theirs, rel=TOLERANCE)
