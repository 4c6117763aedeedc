"""`--read`: FLOPs of compiled ops from the capture's HloProto, against the right roof."""

from __future__ import annotations

import pytest

from tfperf.profile.read.report import read


def test_compiled_ops_get_flops_from_the_capture(capture_of, capsys):
    report = read(capture_of("xla"))
    (costs,) = report.costs.values()
    by_name = {c.op.name: c for c in costs}
    dot = by_name["MatMul.2"]
    assert dot.flops == 2 * 256 * 512 * 512 and dot.bytes == 4 * (256 * 512 + 512 * 512 +
                                                                     256 * 512)
    assert dot.judged["fraction"] is None and dot.judged["roof"] is None  # a host: no roof
    assert "FLOPs of compiled (XLA) ops" in report.text()
    doc = report.to_dict()
    assert any(c["name"] == "MatMul.2" for cs in doc["op_costs"].values() for c in cs)


def test_a_device_that_names_its_gpu_is_judged_against_its_roof(pb2, capture_of, tmp_path):
    """The XLA ops of the CPU capture, moved onto a device plane that names an A100: the
    FP32 dot meets the TF32 tensor-core roof, the element-wise fusions the FP32 one."""
    space = pb2.XSpace()
    space.ParseFromString(capture_of("xla").read_bytes())
    (host,) = [p for p in space.planes if p.name == "/host:CPU"]
    names = {k: m.name for k, m in host.stat_metadata.items()}
    gpu = space.planes.add(id=7, name="/device:GPU:0")
    for k, m in host.stat_metadata.items():
        gpu.stat_metadata[k].CopyFrom(m)
    device_name = max(names) + 1
    gpu.stat_metadata[device_name].id = device_name
    gpu.stat_metadata[device_name].name = "device_name"
    gpu.stats.add(metadata_id=device_name, str_value="NVIDIA A100-SXM4-80GB")
    stream = gpu.lines.add(id=1, name="Stream #1(Compute)")
    for line in host.lines:
        stream.timestamp_ns = line.timestamp_ns
        for ev in line.events:
            if any(names.get(s.metadata_id) == "hlo_op" for s in ev.stats):
                gpu.event_metadata[ev.metadata_id].CopyFrom(host.event_metadata[ev.metadata_id])
                stream.events.add().CopyFrom(ev)
    path = tmp_path / "plugins" / "profile" / "run" / "vm.xplane.pb"
    path.parent.mkdir(parents=True)
    path.write_bytes(space.SerializeToString())
    report = read(path)
    (costs,) = report.costs.values()
    on_gpu = {c.op.name: c for c in costs if c.op.where == "/device:GPU:0"}
    dot, fused = on_gpu["MatMul.2"].judged, on_gpu["broadcast_maximum_fusion"].judged
    assert dot["roof"]["precision"] == "tf32" and dot["error"] is None
    assert 0 < dot["fraction"] < 1
    assert fused["bound"] == "memory" and fused["roof"]["precision"] == "fp32"
    assert fused["roof"]["attainable"] == pytest.approx(fused["intensity"] * 2039e9)
