"""The hand-written reader against TensorFlow's own generated module (the oracle)."""

from __future__ import annotations

import pytest

from tfperf.profile.read import wire, xspace
from tfperf.profile.read.stats import StatFinder
from tfperf.profile.read.xspace import Capture, CaptureFileError, decode_stats

FIELDS = {
    "XSpace": {"planes": xspace.SPACE_PLANES, "errors": xspace.SPACE_ERRORS,
               "warnings": xspace.SPACE_WARNINGS, "hostnames": xspace.SPACE_HOSTNAMES},
    "XPlane": {"id": xspace.PLANE_ID, "name": xspace.PLANE_NAME, "lines": xspace.PLANE_LINES,
               "event_metadata": xspace.PLANE_EVENT_METADATA,
               "stat_metadata": xspace.PLANE_STAT_METADATA, "stats": xspace.PLANE_STATS},
    "XLine": {"id": xspace.LINE_ID, "name": xspace.LINE_NAME,
              "timestamp_ns": xspace.LINE_TIMESTAMP_NS, "events": xspace.LINE_EVENTS,
              "duration_ps": xspace.LINE_DURATION_PS, "display_id": xspace.LINE_DISPLAY_ID,
              "display_name": xspace.LINE_DISPLAY_NAME},
    "XEvent": {"metadata_id": xspace.EVENT_METADATA_ID, "offset_ps": xspace.EVENT_OFFSET_PS,
               "duration_ps": xspace.EVENT_DURATION_PS, "stats": xspace.EVENT_STATS,
               "num_occurrences": xspace.EVENT_NUM_OCCURRENCES},
    "XStat": {"metadata_id": xspace.STAT_METADATA_ID,
              **{f"{kind}_value": n for n, kind in xspace.STAT_VALUES.items()}},
    "XEventMetadata": {"id": xspace.EMETA_ID, "name": xspace.EMETA_NAME,
                       "metadata": xspace.EMETA_METADATA,
                       "display_name": xspace.EMETA_DISPLAY_NAME,
                       "stats": xspace.EMETA_STATS, "child_id": xspace.EMETA_CHILD_ID},
    "XStatMetadata": {"id": xspace.SMETA_ID, "name": xspace.SMETA_NAME,
                      "description": xspace.SMETA_DESCRIPTION},
}


@pytest.mark.parametrize("message", sorted(FIELDS))
def test_field_numbers_are_tensorflows(pb2, message):
    declared = {f.name: f.number for f in getattr(pb2, message).DESCRIPTOR.fields}
    assert FIELDS[message] == declared


def _pb2_events(space):
    """Every event of every plane, as the oracle reads it."""
    out = []
    for plane in space.planes:
        names = {k: m.name for k, m in plane.stat_metadata.items()}
        for line in plane.lines:
            for ev in line.events:
                stats = {}
                for s in ev.stats:
                    which = s.WhichOneof("value")
                    value = getattr(s, which) if which else None
                    if which == "ref_value":
                        value = names.get(value, value)
                    stats[names.get(s.metadata_id, str(s.metadata_id))] = value
                out.append((plane.name, line.name, plane.event_metadata[ev.metadata_id].name,
                            line.timestamp_ns * 1000 + ev.offset_ps, ev.duration_ps, stats))
    return out


def _our_events(path):
    out = []
    with Capture(path) as cap:
        for plane in cap.planes:
            for line in plane.lines:
                for mid, start, dur, buf, a, b in cap.events(line):
                    stats = plane.stat_dict(decode_stats(buf, a, b))
                    out.append((plane.name, line.name, plane.event_metadata[mid].name, start,
                                dur, stats))
    return out


@pytest.mark.parametrize("name", ["graph", "xla", "eager", "input", "retrace"])
@pytest.mark.parametrize("window", [wire.CHUNK, 97])
def test_every_event_and_stat_reads_as_tensorflow_reads_it(pb2, capture_of, name, window,
                                                           monkeypatch):
    path = capture_of(name)
    space = pb2.XSpace()
    space.ParseFromString(path.read_bytes())
    monkeypatch.setattr(wire, "CHUNK", window)  # 97 bytes: events cross the window's edge
    ours = _our_events(path)
    assert len(ours) > 50
    assert ours == _pb2_events(space)
    with Capture(path) as cap:
        assert [p.name for p in cap.planes] == [p.name for p in space.planes]
        assert cap.hostnames == list(space.hostnames)
        for mine, theirs in zip(cap.planes, space.planes, strict=False):
            assert {k: m.name for k, m in mine.event_metadata.items()} == {
                k: m.name for k, m in theirs.event_metadata.items()}
            assert mine.stat_names == {k: m.name for k, m in theirs.stat_metadata.items()}


def test_stat_finder_agrees_with_a_full_decode(capture_of):
    names = ("step_num", "tf_function_call", "eager_op", "is_func", "tf_op", "shape", "_p")
    seen = 0
    with Capture(capture_of("graph")) as cap:
        for plane in cap.planes:
            finder = StatFinder(plane, names)
            for line in plane.lines:
                for _mid, _s, _d, buf, a, b in cap.events(line):
                    full = plane.stat_dict(decode_stats(buf, a, b))
                    for n in names:
                        assert finder.get(n, buf, a, b) == full.get(n)
                        seen += n in full
    assert seen > 20


def test_hlo_proto_of_a_compiled_cluster_is_kept_out_of_memory_until_asked(capture_of):
    with Capture(capture_of("xla")) as cap:
        (meta,) = [p for p in cap.planes if p.name == "/host:metadata"]
        blobs = [s.value for m in meta.event_metadata.values() for s in m.stats]
        assert blobs and all(isinstance(b, (bytes, xspace.Blob)) for b in blobs)
        raw = blobs[0] if isinstance(blobs[0], bytes) else cap.blob(blobs[0])
        assert b"dot" in raw or b"MatMul" in raw  # an HloProto: the cluster's ops


@pytest.mark.parametrize(("data", "kind"), [
    (b"", "empty"), (b"\x0a\xff\xff\x03abc", "truncated"), (b"\x0f" * 40, "not_xspace")])
def test_bad_files_say_what_is_wrong(tmp_path, data, kind):
    p = tmp_path / "x.xplane.pb"
    p.write_bytes(data)
    with pytest.raises(CaptureFileError) as err:
        Capture(p)
    assert err.value.kind == kind


@pytest.mark.parametrize("name", ["graph", "xla", "input"])
def test_profiles_own_summary_reads_the_same_without_tensorflow(pb2, capture_of, name):
    """profile/xplane.py now reads through this reader: its figures are those it computed from
    TF's generated classes."""
    from tfperf.profile import xplane

    path = capture_of(name)
    space = pb2.XSpace()
    space.ParseFromString(path.read_bytes())
    ours, theirs = xplane.summarise(path), xplane.summarise(path, space=space)
    assert ours.to_dict() == theirs.to_dict()
    assert ours.op_events == theirs.op_events and ours.step_windows == theirs.step_windows
