"""An XProf capture (``*.xplane.pb``: one ``XSpace`` message) read without TensorFlow.

:class:`Capture` indexes the file: the planes, their metadata and the byte range of every
line, reading only keys and lengths where it can. Events are then streamed line by line
(:meth:`Capture.events`), decoded from a bounded window of the file, so memory does not grow
with the capture.

Field numbers are those of ``xplane.proto`` (package ``tensorflow.profiler``, shipped by TSL,
TensorFlow and XProf); ``tests/profile_read`` checks each one against TensorFlow's generated
module. Only facts (numbers and names) are taken from it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from tfperf.profile.read import wire
from tfperf.profile.read.wire import LEN, Source, WireError, signed, varint

# message XSpace
SPACE_PLANES, SPACE_ERRORS, SPACE_WARNINGS, SPACE_HOSTNAMES = 1, 2, 3, 4
# message XPlane
PLANE_ID, PLANE_NAME, PLANE_LINES, PLANE_EVENT_METADATA, PLANE_STAT_METADATA, PLANE_STATS = (
    1, 2, 3, 4, 5, 6)
# message XLine
LINE_ID, LINE_NAME, LINE_TIMESTAMP_NS, LINE_EVENTS, LINE_DURATION_PS = 1, 2, 3, 4, 9
LINE_DISPLAY_ID, LINE_DISPLAY_NAME = 10, 11
# message XEvent
EVENT_METADATA_ID, EVENT_OFFSET_PS, EVENT_DURATION_PS, EVENT_STATS, EVENT_NUM_OCCURRENCES = (
    1, 2, 3, 4, 5)
# message XStat: metadata_id, then one of the values
STAT_METADATA_ID = 1
STAT_VALUES = {2: "double", 3: "uint64", 4: "int64", 5: "str", 6: "bytes", 7: "ref"}
# message XEventMetadata
EMETA_ID, EMETA_NAME, EMETA_METADATA, EMETA_DISPLAY_NAME, EMETA_STATS, EMETA_CHILD_ID = (
    1, 2, 3, 4, 5, 6)
# message XStatMetadata
SMETA_ID, SMETA_NAME, SMETA_DESCRIPTION = 1, 2, 3
# map<int64, V> entries
MAP_KEY, MAP_VALUE = 1, 2

_BIG_BYTES = 1 << 16  # bytes values above this (HLO protos) are read when asked for


class CaptureFileError(Exception):
    """The file cannot be read as a capture. ``kind``: ``unreadable``, ``empty``,
    ``truncated`` or ``not_xspace``."""

    def __init__(self, message: str, kind: str, offset: int | None = None):
        super().__init__(message)
        self.kind = kind
        self.offset = offset


@dataclass(frozen=True)
class Blob:
    """A large bytes value left in the file: ``Capture.blob(b)`` reads it."""

    offset: int
    size: int


@dataclass
class Stat:
    metadata_id: int
    kind: str  # double, uint64, int64, str, bytes, ref; "" when no value was set
    value: Any


@dataclass
class EventMetadata:
    id: int
    name: str = ""
    display_name: str = ""
    stats: list[Stat] = field(default_factory=list)
    child_ids: list[int] = field(default_factory=list)


@dataclass
class Line:
    id: int
    name: str
    display_name: str
    timestamp_ns: int
    offset: int  # the XLine message's bytes in the file
    end: int
    events_at: int  # where its first event field starts (== end when it has none)


@dataclass
class Plane:
    id: int
    name: str
    lines: list[Line] = field(default_factory=list)
    event_metadata: dict[int, EventMetadata] = field(default_factory=dict)
    stat_names: dict[int, str] = field(default_factory=dict)
    stats: list[Stat] = field(default_factory=list)

    def stat_id(self, name: str) -> int | None:
        """The metadata id of the stat called ``name`` in this plane, if any."""
        for k, v in self.stat_names.items():
            if v == name:
                return k
        return None

    def stat_dict(self, stats: list[Stat]) -> dict[str, Any]:
        """Stats by name; ``ref`` values are names of stat metadata (TF's interned strings)."""
        out: dict[str, Any] = {}
        for s in stats:
            value = self.stat_names.get(s.value, s.value) if s.kind == "ref" else s.value
            out[self.stat_names.get(s.metadata_id, str(s.metadata_id))] = value
        return out


def decode_stats(buf: bytes, start: int, stop: int, number: int = EVENT_STATS) -> list[Stat]:
    """The XStat messages among the fields in ``buf[start:stop]`` (field ``number``)."""
    out = []
    for f, wt, a, b in wire.fields(buf, start, stop):
        if f == number and wt == LEN:
            out.append(_stat(buf, a, b))
    return out


def _stat(buf: bytes, a: int, b: int, blob_base: int | None = None) -> Stat:
    mid, kind = 0, ""
    value: Any = None
    for f, wt, v, stop in wire.fields(buf, a, b):
        if f == STAT_METADATA_ID:
            mid = v
        elif f in STAT_VALUES:
            kind = STAT_VALUES[f]
            if kind == "double":
                value = wire.as_double(v) if wt == wire.FIXED64 else float(v)
            elif kind == "int64":
                value = signed(v)
            elif kind in ("uint64", "ref"):
                value = v
            elif kind == "str":
                value = buf[v:stop].decode("utf-8", "replace")
            elif blob_base is not None and stop - v > _BIG_BYTES:
                value = Blob(blob_base + v, stop - v)
            else:
                value = bytes(buf[v:stop])
    return Stat(mid, kind, value)


class Capture:
    """One capture file, indexed. Use as a context manager (or call :meth:`close`)."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = str(path)
        try:
            self.src = Source.open(path)
        except OSError as exc:
            raise CaptureFileError(f"cannot read {path}: {exc.strerror or exc}",
                                   "unreadable") from None
        self.size = self.src.size
        self.planes: list[Plane] = []
        self.errors: list[str] = []
        self.warnings: list[str] = []
        self.hostnames: list[str] = []
        try:
            if self.size == 0:
                raise CaptureFileError(f"{path} is empty (0 bytes)", "empty")
            self._index()
        except WireError as exc:
            self.close()
            kind = "truncated" if exc.truncated else "not_xspace"
            raise CaptureFileError(f"{path}: {exc} (byte {exc.offset} of {self.size})", kind,
                                   exc.offset) from None
        except CaptureFileError:
            self.close()
            raise

    def __enter__(self) -> Capture:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.src.close()

    # -- index --------------------------------------------------------------------------

    def _index(self) -> None:
        for number, wt, a, b in self.src.walk(0, self.size):
            if wt != LEN or number not in (SPACE_PLANES, SPACE_ERRORS, SPACE_WARNINGS,
                                           SPACE_HOSTNAMES):
                raise WireError(f"field {number} (wire type {wt}) is not part of an XSpace", a)
            if number == SPACE_PLANES:
                self.planes.append(self._plane(a, b))
            else:
                text = self.src.read(a, b - a).decode("utf-8", "replace")
                {SPACE_ERRORS: self.errors, SPACE_WARNINGS: self.warnings,
                 SPACE_HOSTNAMES: self.hostnames}[number].append(text)

    def _plane(self, offset: int, end: int) -> Plane:
        plane = Plane(id=0, name="")
        for number, wt, a, b in self.src.walk(offset, end):
            if number == PLANE_ID and wt == wire.VARINT:
                plane.id = signed(a)
            elif number == PLANE_NAME and wt == LEN:
                plane.name = self.src.read(a, b - a).decode("utf-8", "replace")
            elif number == PLANE_LINES and wt == LEN:
                plane.lines.append(self._line(a, b))
            elif number in (PLANE_EVENT_METADATA, PLANE_STAT_METADATA, PLANE_STATS) and wt == LEN:
                buf = self.src.read(a, b - a)
                if number == PLANE_STATS:
                    plane.stats.append(_stat(buf, 0, len(buf), blob_base=a))
                else:
                    self._map_entry(number, buf, a, plane)
        return plane

    def _map_entry(self, number: int, buf: bytes, base: int, plane: Plane) -> None:
        key, value = 0, None
        for f, wt, a, b in wire.fields(buf, 0, len(buf)):
            if f == MAP_KEY and wt == wire.VARINT:
                key = signed(a)
            elif f == MAP_VALUE and wt == LEN:
                value = (a, b)
        if number == PLANE_STAT_METADATA:
            name = ""
            if value is not None:
                for f, wt, a, b in wire.fields(buf, *value):
                    if f == SMETA_NAME and wt == LEN:
                        name = buf[a:b].decode("utf-8", "replace")
            plane.stat_names[key] = name
            return
        meta = EventMetadata(id=key)
        if value is not None:
            for f, wt, a, b in wire.fields(buf, *value):
                if f == EMETA_NAME and wt == LEN:
                    meta.name = buf[a:b].decode("utf-8", "replace")
                elif f == EMETA_DISPLAY_NAME and wt == LEN:
                    meta.display_name = buf[a:b].decode("utf-8", "replace")
                elif f == EMETA_STATS and wt == LEN:
                    meta.stats.append(_stat(buf, a, b, blob_base=base))
                elif f == EMETA_CHILD_ID and wt == wire.VARINT:
                    meta.child_ids.append(signed(a))
        plane.event_metadata[key] = meta

    def _line(self, offset: int, end: int) -> Line:
        line = Line(id=0, name="", display_name="", timestamp_ns=0, offset=offset, end=end,
                    events_at=end)
        seen_ts = seen_name = False
        # TF writes fields in number order: id, name, timestamp, then the events. Read up to
        # the first event; only an unusual writer costs a walk over the rest.
        at = offset
        while at < end:
            number, wt, a, b = self.src.header(at, end)
            if number == LINE_EVENTS:
                line.events_at = min(line.events_at, at)
                if seen_ts and seen_name:
                    break
            else:
                self._line_field(line, number, wt, a, b)
                seen_ts = seen_ts or number == LINE_TIMESTAMP_NS
                seen_name = seen_name or number == LINE_NAME
            at = b
        return line

    def _line_field(self, line: Line, number: int, wt: int, a: int, b: int) -> None:
        if number == LINE_ID and wt == wire.VARINT:
            line.id = signed(a)
        elif number == LINE_TIMESTAMP_NS and wt == wire.VARINT:
            line.timestamp_ns = signed(a)
        elif number in (LINE_NAME, LINE_DISPLAY_NAME) and wt == LEN:
            text = self.src.read(a, b - a).decode("utf-8", "replace")
            if number == LINE_NAME:
                line.name = text
            else:
                line.display_name = text

    def blob(self, b: Blob) -> bytes:
        return self.src.read(b.offset, b.size)

    # -- events ---------------------------------------------------------------------------

    def events(self, line: Line) -> Iterator[tuple[int, int, int, bytes, int, int]]:
        """``(metadata_id, start_ps, duration_ps, buf, stats_start, stats_stop)`` per event of
        ``line``, in file order; ``start_ps`` is absolute (line timestamp + offset). Stats are
        left encoded: :func:`decode_stats` (buf, stats_start, stats_stop) when wanted.

        The hot loop of every summary: the window is read here and each event decoded in
        place (one key byte per field: XEvent's fields are numbered below 16)."""
        base = line.timestamp_ns * 1000
        pos, end = line.events_at, line.end
        while pos < end:
            buf = self.src.read(pos, min(wire.CHUNK, end - pos))
            if not buf:
                raise WireError("the file ends inside a line", pos, truncated=True)
            limit, local = len(buf), 0
            while local < limit:
                key = buf[local]
                try:
                    n, p = varint(buf, local + 1)
                except IndexError:
                    break  # the length crosses the window's end: read on from here
                if key == 0x22:
                    stop = p + n
                elif key & 7 == wire.VARINT:  # another field of the line: skipped
                    stop = p
                elif key & 7 == LEN:
                    stop = p + n
                else:
                    stop = local + 1 + (8 if key & 7 == wire.FIXED64 else 4)
                if stop > limit:
                    break
                if key == 0x22:
                    yield self._event(buf, p, stop, base)
                local = stop
            if local == 0:  # one event wider than the window: read it on its own
                number, wt, a, b = self.src.header(pos, end)
                if number == LINE_EVENTS and wt == LEN:
                    data = self.src.read(a, b - a)
                    if len(data) < b - a:
                        raise WireError("the file ends inside an event", a, truncated=True)
                    yield self._event(data, 0, len(data), base)
                local = b - pos
            pos += local

    @staticmethod
    def _event(buf: bytes, pos: int, ev_end: int, base: int
               ) -> tuple[int, int, int, bytes, int, int]:
        mid = off = dur = 0
        st0 = st1 = pos
        try:
            while pos < ev_end:
                key = buf[pos]
                pos += 1
                if key == 0x22:  # stats (field 4, length-delimited)
                    if st0 == st1:
                        st0 = pos - 1
                    m, pos = varint(buf, pos)
                    pos += m
                    st1 = pos
                    continue
                v = buf[pos]
                pos += 1
                if v >= 0x80:
                    v &= 0x7F
                    shift = 7
                    while True:
                        c = buf[pos]
                        pos += 1
                        v |= (c & 0x7F) << shift
                        if c < 0x80:
                            break
                        shift += 7
                if key == 0x08:
                    mid = v
                elif key == 0x10:
                    off = v
                elif key == 0x18:
                    dur = v
                elif key & 7 != wire.VARINT or key >= 0x80:
                    raise WireError(f"unexpected field key {key} in an event", pos)
        except IndexError:
            raise WireError("an event is cut short", pos, truncated=True) from None
        if pos > ev_end:
            raise WireError("an event's field runs past its end", pos, truncated=True)
        if off >= 1 << 63:
            off -= 1 << 64
        if dur >= 1 << 63:
            dur = 0
        return mid, base + off, dur, buf, st0, st1
