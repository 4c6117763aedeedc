"""Version strings as the GPU stack writes them, parsed into comparable tuples.

TensorFlow (``2.15.0.post1``, ``tensorflow_gpu-1.15.0``), CUDA (``12.5.1``, ``11.2``), cuDNN
(``8.9.4.25``), drivers (``550.144.03``: the leading zero is part of how NVIDIA prints it, not
an octal) and Python (``3.11``) all reduce to tuples of ints. Missing trailing parts count as
zero when comparing, so a driver given as ``470.57`` is taken as ``470.57.00``.
"""

from __future__ import annotations

import re

VersionTuple = tuple[int, ...]

_NUMERIC = re.compile(r"\d+(?:\.\d+)*")
_PREFIXES = ("tensorflow_gpu-", "tensorflow-gpu-", "tensorflow-cpu-", "tensorflow-", "v")


def parse(text: str) -> VersionTuple:
    """``"2.15.0.post1"`` → ``(2, 15, 0)``; ``"550.144.03"`` → ``(550, 144, 3)``.

    Package prefixes and suffixes such as ``.post1``/``rc0`` are dropped: they never change
    which CUDA a build uses. Raises :class:`ValueError` when no version number is there.
    """
    s = text.strip()
    for prefix in _PREFIXES:
        if s.lower().startswith(prefix):
            s = s[len(prefix):]
            break
    m = _NUMERIC.match(s)
    if not m:
        raise ValueError(f"not a version number: {text!r}")
    return tuple(int(p) for p in m.group(0).split("."))


def try_parse(text: str | None) -> VersionTuple | None:
    if not text:
        return None
    try:
        return parse(text)
    except ValueError:
        return None


def padded(v: VersionTuple, n: int = 3) -> VersionTuple:
    return v + (0,) * (n - len(v)) if len(v) < n else v


def compare(a: str | VersionTuple, b: str | VersionTuple) -> int:
    """-1, 0 or 1 as ``a`` is older than, equal to or newer than ``b`` (zero-padded)."""
    ta = parse(a) if isinstance(a, str) else a
    tb = parse(b) if isinstance(b, str) else b
    n = max(len(ta), len(tb))
    pa, pb = padded(ta, n), padded(tb, n)
    return (pa > pb) - (pa < pb)


def at_least(version: str | VersionTuple, minimum: str | VersionTuple) -> bool:
    return compare(version, minimum) >= 0


def major(text: str) -> int:
    return parse(text)[0]


def major_minor(text: str | VersionTuple) -> VersionTuple:
    v = parse(text) if isinstance(text, str) else text
    return padded(v, 2)[:2]


def same_prefix(version: str | VersionTuple, prefix: str | VersionTuple) -> bool:
    """True when ``version`` starts with every component of ``prefix`` (``11.2.1`` ~ ``11.2``)."""
    v = parse(version) if isinstance(version, str) else version
    p = parse(prefix) if isinstance(prefix, str) else prefix
    return padded(v, len(p))[: len(p)] == p


def fmt(v: VersionTuple, parts: int | None = None) -> str:
    """``(3, 9)`` → ``"3.9"``; ``parts`` pads or cuts to that many components."""
    if parts is not None:
        v = padded(v, parts)[:parts]
    return ".".join(str(p) for p in v)
