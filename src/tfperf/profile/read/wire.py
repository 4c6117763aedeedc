"""The protobuf wire format, as much of it as an XProf capture uses, read from a file in pieces.

A capture is one serialized ``XSpace`` message. Reading it with a generated protobuf class
needs the class (TensorFlow or the XProf plugin ship it) and the whole message in memory: a
1 GB capture becomes many GB of objects. Here the file is read through a window of a few MB:
fields are walked by their tag and length, sub-messages are skipped by seeking, and only what
the summary needs is decoded.

Wire format facts (protobuf's encoding documentation): a field is a varint key
``field_number << 3 | wire_type``; wire type 0 is a varint, 1 eight bytes, 2 a varint length
and that many bytes, 5 four bytes. Negative int64 values are 10-byte varints (two's complement).
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from typing import BinaryIO

VARINT, FIXED64, LEN, FIXED32 = 0, 1, 2, 5
CHUNK = 8 << 20  # bytes read at a time: memory stays bounded whatever the file's size


class WireError(Exception):
    """The bytes are not a well-formed protobuf message (cut short, or not protobuf)."""

    def __init__(self, message: str, offset: int, truncated: bool = False):
        super().__init__(message)
        self.offset = offset
        self.truncated = truncated


def varint(buf: bytes, pos: int) -> tuple[int, int]:
    """The varint at ``pos`` and the position after it. Raises IndexError when cut short."""
    b = buf[pos]
    pos += 1
    if b < 0x80:
        return b, pos
    value, shift = b & 0x7F, 7
    while True:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint longer than 10 bytes")


def signed(value: int) -> int:
    """A varint read as int64 (negative numbers are sent as 64-bit two's complement)."""
    return value - (1 << 64) if value >= 1 << 63 else value



def ints(buf: bytes, wt: int, a: int, b: int) -> list[int]:
    """A repeated int field as :func:`fields` gives it (``wt``, ``a``, ``b``): packed
    (length-delimited varints) or one varint, read as int64."""
    if wt == VARINT:
        return [signed(a)]
    out, pos = [], a
    while pos < b:
        v, pos = varint(buf, pos)
        out.append(signed(v))
    return out


def fields(buf: bytes, pos: int = 0, end: int | None = None) -> Iterator[tuple[int, int, int, int]]:
    """``(field, wire_type, value_or_start, end)`` for each field of the message in
    ``buf[pos:end]``: for wire type 2, ``value_or_start`` is where the bytes start and ``end``
    where they stop; otherwise it is the value (floats as their raw integer bits)."""
    end = len(buf) if end is None else end
    while pos < end:
        try:
            key, pos = varint(buf, pos)
            number, wt = key >> 3, key & 7
            if wt == VARINT:
                value, pos = varint(buf, pos)
                yield number, wt, value, pos
            elif wt == LEN:
                n, start = varint(buf, pos)
                pos = start + n
                if pos > end:
                    raise WireError(f"a field runs {pos - end} bytes past its message", start,
                                    truncated=True)
                yield number, wt, start, pos
            elif wt == FIXED64:
                if pos + 8 > end:
                    raise WireError("an 8-byte field is cut short", pos, truncated=True)
                yield number, wt, int.from_bytes(buf[pos:pos + 8], "little"), pos + 8
                pos += 8
            elif wt == FIXED32:
                if pos + 4 > end:
                    raise WireError("a 4-byte field is cut short", pos, truncated=True)
                yield number, wt, int.from_bytes(buf[pos:pos + 4], "little"), pos + 4
                pos += 4
            else:
                raise WireError(f"wire type {wt} is not used by captures", pos)
        except IndexError:
            raise WireError("a field is cut short", pos, truncated=True) from None
        except ValueError as exc:
            raise WireError(str(exc), pos) from None


def as_double(bits: int) -> float:
    return float(struct.unpack("<d", bits.to_bytes(8, "little"))[0])


class Source:
    """Random access to a file by byte ranges, through one bounded window."""

    def __init__(self, stream: BinaryIO, size: int):
        self.stream = stream
        self.size = size
        self._base = 0
        self._buf = b""

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> Source:
        stream = open(path, "rb")  # noqa: SIM115 - closed by close()
        return cls(stream, os.fstat(stream.fileno()).st_size)

    def close(self) -> None:
        self.stream.close()

    def read(self, offset: int, n: int) -> bytes:
        """Bytes ``[offset, offset + n)`` (shorter at the end of the file)."""
        if self._base <= offset and offset + n <= self._base + len(self._buf):
            return self._buf[offset - self._base:offset - self._base + n]
        self.stream.seek(offset)
        data = self.stream.read(n)
        if n <= CHUNK:  # keep small reads' surroundings: the next field is likely next door
            self._base, self._buf = offset, data + self.stream.read(max(CHUNK - n, 0))
            return data
        return data

    def header(self, offset: int, end: int) -> tuple[int, int, int, int]:
        """The field starting at ``offset`` (in a message ending at ``end``), like :func:`fields`
        yields it, reading only its key and length."""
        head = self.read(offset, min(32, end - offset))
        try:
            key, pos = varint(head, 0)
            number, wt = key >> 3, key & 7
            if wt == LEN:
                n, pos = varint(head, pos)
                start = offset + pos
                if start + n > end:
                    raise WireError(f"a field runs {start + n - end} bytes past its message",
                                    start, truncated=True)
                return number, wt, start, start + n
            if wt == VARINT:
                value, pos = varint(head, pos)
                return number, wt, value, offset + pos
            width = {FIXED64: 8, FIXED32: 4}.get(wt)
            if width is None:
                raise WireError(f"wire type {wt} is not used by captures", offset)
            if offset + pos + width > end:
                raise WireError("a fixed-width field is cut short", offset, truncated=True)
            value = int.from_bytes(head[pos:pos + width], "little")
            return number, wt, value, offset + pos + width
        except IndexError:
            raise WireError("a field is cut short", offset, truncated=True) from None
        except ValueError as exc:
            raise WireError(str(exc), offset) from None

    def walk(self, offset: int, end: int) -> Iterator[tuple[int, int, int, int]]:
        """The fields of the message at ``[offset, end)``, read key by key: sub-messages are
        not read (their bytes are fetched only by whoever wants them)."""
        while offset < end:
            field = self.header(offset, end)
            yield field
            offset = field[3]
