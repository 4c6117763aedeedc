"""A whole capture as objects shaped like TensorFlow's generated ``xplane_pb2`` classes.

``profile/xplane.py`` (tfperf's own captures, small) walks planes, lines and events the way
the generated classes expose them; this view gives it the same attributes from the one
reader, so reading a capture never needs TensorFlow. Large captures go through
:func:`tfperf.profile.read.summary.summarise_capture` instead, which streams.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from tfperf.profile.read.xspace import Blob, Capture, Stat, decode_stats


@dataclass
class StatView:
    metadata_id: int
    double_value: float = 0.0
    uint64_value: int = 0
    int64_value: int = 0
    str_value: str = ""
    bytes_value: bytes = b""
    ref_value: int = 0
    _which: str | None = None

    def WhichOneof(self, group: str) -> str | None:
        return self._which if group == "value" else None


def _stat(s: Stat, cap: Capture) -> StatView:
    view = StatView(s.metadata_id)
    if s.kind:
        value = cap.blob(s.value) if isinstance(s.value, Blob) else s.value
        setattr(view, f"{s.kind}_value", value)
        view._which = f"{s.kind}_value"
    return view


@dataclass
class Named:
    name: str
    display_name: str = ""
    stats: list[StatView] = field(default_factory=list)


@dataclass
class EventView:
    metadata_id: int
    offset_ps: int
    duration_ps: int
    stats: list[StatView]


@dataclass
class LineView:
    id: int
    name: str
    display_name: str
    timestamp_ns: int
    events: list[EventView]


@dataclass
class PlaneView:
    id: int
    name: str
    lines: list[LineView]
    event_metadata: dict[int, Named]
    stat_metadata: dict[int, Named]
    stats: list[StatView]


@dataclass
class SpaceView:
    planes: list[PlaneView]
    errors: list[str]
    warnings: list[str]
    hostnames: list[str]


def load(path: str | os.PathLike[str]) -> SpaceView:
    """Read the capture at ``path`` whole (raises CaptureFileError)."""
    with Capture(path) as cap:
        planes = []
        for p in cap.planes:
            lines = []
            for ln in p.lines:
                base = ln.timestamp_ns * 1000
                events = [EventView(mid, start - base, dur,
                                    [_stat(s, cap) for s in decode_stats(buf, a, b)])
                          for mid, start, dur, buf, a, b in cap.events(ln)]
                lines.append(LineView(ln.id, ln.name, ln.display_name, ln.timestamp_ns, events))
            planes.append(PlaneView(
                p.id, p.name, lines,
                {k: Named(m.name, m.display_name, [_stat(s, cap) for s in m.stats])
                 for k, m in p.event_metadata.items()},
                {k: Named(name) for k, name in p.stat_names.items()},
                [_stat(s, cap) for s in p.stats]))
        return SpaceView(planes, list(cap.errors), list(cap.warnings), list(cap.hostnames))
