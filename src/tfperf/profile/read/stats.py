"""Looking up one stat of an event without decoding them all.

An event's stats are XStat messages: ``0x22 <len> 0x08 <metadata id> <value key> <value>``.
Most events carry stats nobody asked for (thread-pool bookkeeping, allocator figures); a
summary of millions of events looks for one or two by their metadata id, with ``bytes.find``.
"""

from __future__ import annotations

from typing import Any

from tfperf.profile.read import wire
from tfperf.profile.read.xspace import STAT_VALUES, Plane, decode_stats


def key_bytes(metadata_id: int) -> bytes:
    """What a stat with this metadata id starts with (its ``metadata_id`` field)."""
    out = bytearray([0x08])
    v = metadata_id
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


class StatFinder:
    """Finds named stats in an event's encoded stats (``buf[a:b]``), in one plane."""

    def __init__(self, plane: Plane, names: tuple[str, ...]):
        self.plane = plane
        self.keys: dict[str, bytes] = {}
        self.ids: dict[str, int] = {}
        for name in names:
            mid = plane.stat_id(name)
            if mid is not None:
                self.keys[name], self.ids[name] = key_bytes(mid), mid

    def has(self, name: str) -> bool:
        return name in self.keys

    def get(self, name: str, buf: bytes, a: int, b: int) -> Any:
        """The value of stat ``name`` (ref values resolved to their names), or None."""
        key = self.keys.get(name)
        if key is None or a == b:
            return None
        i = buf.find(key, a, b)
        if i < 0:  # its metadata id is not there: the event does not have it
            return None
        while i >= 0:
            if i >= a + 2 and buf[i - 2] == 0x22 and buf[i - 1] < 0x80:
                return self._value(buf, i + len(key), i + buf[i - 1])
            i = buf.find(key, i + 1, b)
        # the bytes were there but not at a short stat's start: a long stat (a length of two
        # bytes or more), or the bytes inside another value. Decode them all.
        mid = self.ids[name]
        for s in decode_stats(buf, a, b):
            if s.metadata_id == mid:
                return self.plane.stat_names.get(s.value, s.value) if s.kind == "ref" else s.value
        return None

    def _value(self, buf: bytes, pos: int, stop: int) -> Any:
        if pos >= stop:
            return None
        key = buf[pos]
        kind = STAT_VALUES.get(key >> 3)
        wt = key & 7
        if kind is None:
            return None
        if wt == wire.VARINT:
            v, _ = wire.varint(buf, pos + 1)
            if kind == "int64":
                return wire.signed(v)
            if kind == "ref":
                return self.plane.stat_names.get(v, v)
            return v
        if wt == wire.FIXED64:
            return wire.as_double(int.from_bytes(buf[pos + 1:pos + 9], "little"))
        if wt == wire.LEN:
            n, p = wire.varint(buf, pos + 1)
            raw = bytes(buf[p:p + n])
            return raw.decode("utf-8", "replace") if kind == "str" else raw
        return None
