"""Profiler captures: a real one on CPU, and a synthetic GPU XSpace for what this machine lacks."""

import pytest

from tfperf.profile import advice, capture, runner, xplane


@pytest.fixture(scope="module")
def real_report(tf, tmp_path_factory):
    """One real captured run of a small matmul step (module-scoped: captures cost time)."""
    logdir = tmp_path_factory.mktemp("logdir")
    a = tf.random.normal([128, 128])

    @tf.function
    def step(x):
        return tf.nn.relu(tf.matmul(x, x)) + 1.0

    return runner.profile(step, a, steps=3, logdir=logdir), logdir


def test_capture_is_written_where_tensorboard_looks(real_report):
    rep, logdir = real_report
    (path,) = capture.find_xplanes(logdir)
    assert path.parent.parent == logdir / "plugins" / "profile"
    assert rep.capture is not None and rep.capture.path == str(path)
    assert rep.to_dict()["logdir"] == str(logdir)


def test_capture_read_back_has_real_tf_op_names(real_report):
    rep, _ = real_report
    cap = rep.capture
    assert cap.host_only and cap.device_op_s is None and cap.copies is None
    assert cap.steps == 3 and cap.step_source == "step markers" and cap.step_s > 0
    graph_ops = [o for o in cap.ops if not o.eager]
    assert graph_ops[0].type == "MatMul"  # the 128×128 matmul dominates the compiled step
    assert graph_ops[0].name == "MatMul" and graph_ops[0].count == 3  # node name, one per step
    assert {"MatMul", "Relu", "AddV2"} <= set(cap.by_type)
    assert cap.graph_s > 0 and cap.host_op_s >= cap.graph_s
    assert any(f.code == "profile.capture" and f.data["host_only"] for f in rep.findings)
    assert "host only: no GPU in this capture" in rep.text()


def test_reading_a_corrupt_capture_is_a_clear_error(tmp_path):
    bad = tmp_path / "x.xplane.pb"
    bad.write_bytes(b"\xff\x00 not a protobuf")
    with pytest.raises(xplane.CaptureError):
        xplane.summarise(bad)
    with pytest.raises(xplane.CaptureError, match="cannot read"):
        xplane.summarise(tmp_path / "missing.xplane.pb")


# ---------------------------------------------------------------------------------------------
# synthetic GPU capture: the XPlane layout TF's CUPTI tracer writes, built by hand


class _PlaneBuilder:
    def __init__(self, space, name):
        self.plane = space.planes.add(name=name, id=len(space.planes))
        self.events, self.stats = {}, {}

    def _event_id(self, name):
        if name not in self.events:
            i = len(self.events) + 1
            self.events[name] = i
            self.plane.event_metadata[i].id = i
            self.plane.event_metadata[i].name = name
        return self.events[name]

    def _stat_id(self, name):
        if name not in self.stats:
            i = len(self.stats) + 1
            self.stats[name] = i
            self.plane.stat_metadata[i].id = i
            self.plane.stat_metadata[i].name = name
        return self.stats[name]

    def line(self, name):
        return self.plane.lines.add(name=name, id=len(self.plane.lines), timestamp_ns=1000)

    def event(self, line, name, start_us, dur_us, **stats):
        ev = line.events.add(metadata_id=self._event_id(name), offset_ps=int(start_us * 1e6),
                             duration_ps=int(dur_us * 1e6))
        for key, value in stats.items():
            st = ev.stats.add(metadata_id=self._stat_id(key))
            if isinstance(value, str):
                st.str_value = value
            else:
                st.int64_value = value


@pytest.fixture(scope="module")
def gpu_space(tf):
    pb2 = xplane._xplane_pb2()
    space = pb2.XSpace()
    host = _PlaneBuilder(space, "/host:CPU")
    py = host.line("python")
    for step in range(2):  # two steps of 1000 µs; 300 µs of each waits for input
        t = step * 1000
        host.event(py, "tfperf_step", t, 1000, step_num=step, _r=1)
        host.event(py, "IteratorGetNext:IteratorGetNext", t + 10, 300)
        host.event(py, "EagerExecute", t + 400, 50, eager_op="Mul", is_func=0)
    gpu = _PlaneBuilder(space, "/device:GPU:0")
    stream = gpu.line("Stream #7(Compute)")
    copies = gpu.line("Stream #9(MemcpyH2D)")
    derived = gpu.line("XLA Ops")  # derived from the streams: must not be counted again
    for step in range(2):
        t = step * 1000
        gpu.event(stream, "volta_sgemm_128x64_nn", t + 320, 200, tf_op="dense/MatMul:MatMul")
        gpu.event(stream, "ampere_fp16_s16816gemm_fp16_64x64", t + 530, 10,
                  tf_op="dense_1/MatMul:MatMul")
        gpu.event(copies, "MemcpyH2D", t + 310, 8)
        gpu.event(stream, "MemcpyD2H", t + 900, 4)
        gpu.event(derived, "fusion.1", t + 320, 200)
    cupti = _PlaneBuilder(space, "/host:CUPTI")
    api = cupti.line("thread 1")
    for step in range(2):
        for k in range(2):
            cupti.event(api, "cuLaunchKernel", step * 1000 + 300 + 5 * k, 100)
    return space


def test_gpu_capture_reports_device_time_copies_and_launches(gpu_space):
    cap = xplane.summarise("synthetic.xplane.pb", space=gpu_space)
    assert not cap.host_only and cap.devices == ["/device:GPU:0"]
    assert cap.steps == 2 and cap.step_s == pytest.approx(1000e-6)
    assert cap.device_op_s == pytest.approx(2 * 210e-6)  # the derived line is not counted
    assert cap.h2d_s == pytest.approx(16e-6) and cap.d2h_s == pytest.approx(8e-6)
    assert cap.copies == 4
    assert cap.kernel_launches == 4 and cap.launches_per_step == 2
    assert cap.launch_share == pytest.approx(400 / 2000)
    assert cap.input_share == pytest.approx(600 / 2000)
    assert cap.sixteen_bit_share == pytest.approx(10 / 210)
    assert cap.ops[0].type == "IteratorGetNext"  # 600 µs of waiting tops the host
    top = next(o for o in cap.ops if o.where == "device")
    assert (top.name, top.type, top.count) == ("dense/MatMul", "MatMul", 2)


def test_gpu_capture_advice_says_which_threshold_fired(gpu_space):
    cap = xplane.summarise("synthetic.xplane.pb", space=gpu_space)
    found = {f.code: f for f in advice.capture_findings(cap)}
    assert found["profile.input_bound"].data["threshold"] == "> 20 %"  # 30 % waits
    assert "highly input-bound" in found["profile.input_bound"].message
    assert found["profile.launch_bound"].data["threshold"] == "> 15 %"  # 20 % launching
    assert found["profile.precision"].data["lever"] == "mixed_float16"  # 5 % < 10 %
    assert "profile.capture" not in found  # not host-only


@pytest.mark.parametrize(("share", "expected"), [(0.04, None), (0.06, "> 5 %"),
                                                 (0.25, "> 20 %")])
def test_input_bound_bands(share, expected):
    cap = xplane.CaptureSummary(path="x", duration_s=1.0, steps=1, input_s=share)
    found = [f for f in advice.capture_findings(cap) if f.code == "profile.input_bound"]
    assert [f.data["threshold"] for f in found] == ([expected] if expected else [])


def test_eager_share_threshold(tf):
    cap = xplane.CaptureSummary(path="x", duration_s=1.0, eager_s=0.2, graph_s=0.8)
    found = [f for f in advice.capture_findings(cap) if f.code == "profile.eager_share"]
    assert len(found) == 1 and "20 %" in found[0].message
    cap.eager_s = 0.05
    assert not [f for f in advice.capture_findings(cap) if f.code == "profile.eager_share"]


def test_onednn_kernels_are_reported_as_the_op_written():
    # TF rewrites ops to oneDNN kernels on CPUs it supports: tables read the same everywhere.
    assert xplane.op_kind("_MklMatMul") == "MatMul"
    assert xplane.op_kind("_MklNativeConv2D") == "Conv2D"
    assert xplane.op_kind("_MklNativeFusedMatMul") == "FusedMatMul"
    assert xplane.op_kind("_MklToTf") == "_MklToTf"  # a conversion of oneDNN's own
    assert xplane.op_kind("MatMul") == "MatMul" and xplane.op_kind("_Native") == "_Native"
