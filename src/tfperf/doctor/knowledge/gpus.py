"""GPU name → compute capability, and whether a wheel has code for it.

CUDA binary compatibility, as NVIDIA defines it:

* native code (SASS) built for ``sm_XY`` runs on GPUs of the same major X with minor ≥ Y;
* PTX built for ``compute_XY`` is JIT-compiled by the driver for any GPU with cc ≥ X.Y (slow
  the first time; cached in ~/.nv/ComputeCache);
* arch-specific targets (``sm_90a``, ``sm_100a``, ``compute_90a``) run on exactly that cc;
  family targets (``sm_100f``, CUDA ≥ 12.9) on the same major with minor ≥ Y.

TensorFlow's build writes its list with one twist: a ``compute_XY`` entry "enables PTX
embedding in addition to SASS" (the comment on TF_CUDA_COMPUTE_CAPABILITIES in TensorFlow's
.bazelrc), so ``compute_80`` in a wheel's build info means native sm_80 code *and* PTX. An
A100 (8.0) is native on TF 2.12-2.15 (``... sm_75 compute_80``); an H100 (9.0) there needs the
PTX JIT, and is native from TF 2.16 (``compute_90``).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Literal

from tfperf.doctor.knowledge.builds import WheelBuildInfo
from tfperf.doctor.knowledge.tables import read_table

Support = Literal["native", "ptx", "unsupported"]

# Words that brand a product line without telling GPUs apart; nvidia-smi adds or drops them
# ("Tesla V100-SXM2-16GB", "NVIDIA GeForce RTX 4090"). "Quadro" is kept: it does tell apart
# "Quadro RTX 6000" (7.5) from "NVIDIA RTX 6000 Ada" (8.9).
_BRANDS = {"nvidia", "tesla", "geforce"}


@dataclass(frozen=True)
class GpuInfo:
    name: str  # the catalogue name that matched
    compute_capability: str  # "9.0"
    source: str

    @property
    def cc(self) -> tuple[int, int]:
        return parse_cc(self.compute_capability)[:2]


def _tokens(name: str) -> tuple[str, ...]:
    return tuple(t for t in re.split(r"[^0-9a-z]+", name.lower()) if t and t not in _BRANDS)


@functools.cache
def _catalogue() -> tuple[tuple[tuple[str, ...], GpuInfo], ...]:
    return tuple((_tokens(r["gpu"]), GpuInfo(r["gpu"], r["compute_capability"], r["source"]))
                 for r in read_table("gpu_compute_capability.csv"))


def _contains(hay: tuple[str, ...], needle: tuple[str, ...]) -> bool:
    n = len(needle)
    return n > 0 and any(hay[i:i + n] == needle for i in range(len(hay) - n + 1))


def compute_capability(gpu_name: str) -> GpuInfo | None:
    """Look a GPU up by the name nvidia-smi/NVML prints.

    Safe matching: every word of a catalogue name must appear, in order and whole, in the
    query (so "A10" never matches "A100", "L40" never "L40S"); the most specific match wins;
    a tie between different capabilities gives None rather than a guess.
    """
    query = _tokens(gpu_name)
    hits = [(len(toks), info) for toks, info in _catalogue() if _contains(query, toks)]
    if not hits:
        return None
    top = max(n for n, _ in hits)
    best = {info.compute_capability: info for n, info in hits if n == top}
    return next(iter(best.values())) if len(best) == 1 else None


def parse_cc(cc: str | tuple[int, int]) -> tuple[int, int, str]:
    """``"9.0"`` → (9, 0, ""); ``"10.0a"`` → (10, 0, "a"). Raises ValueError."""
    if isinstance(cc, tuple):
        return cc[0], cc[1], ""
    m = re.fullmatch(r"\s*(\d+)\.(\d+)([af]?)\s*", str(cc))
    if not m:
        raise ValueError(f"not a compute capability: {cc!r} (expected e.g. 8.6)")
    return int(m.group(1)), int(m.group(2)), m.group(3)


def _arch(entry: str) -> tuple[str, int, int, str] | None:
    """``"sm_90a"`` → ("sm", 9, 0, "a"); ``"compute_120"`` → ("compute", 12, 0, "")."""
    m = re.fullmatch(r"(sm|compute)_(\d+)(\d)([af]?)", entry)
    return (m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)) if m else None


def _runs_on(entry: str, major: int, minor: int) -> Support | None:
    parsed = _arch(entry)
    if parsed is None:
        return None
    kind, a_major, a_minor, suffix = parsed
    if suffix == "a":
        return "native" if (major, minor) == (a_major, a_minor) else None
    if major == a_major and minor >= a_minor:  # SASS (also embedded by TF's compute_XY)
        return "native"
    if kind == "compute" and not suffix and (major, minor) >= (a_major, a_minor):
        return "ptx"  # plain PTX is forward compatible with every newer GPU
    return None


def arch_match(cc: str | tuple[int, int], wheel: WheelBuildInfo) -> tuple[Support, str | None]:
    """The verdict and the wheel entry that gives it (``("ptx", "compute_80")``).

    Of several usable entries the newest wins, as the CUDA runtime picks it: SASS before PTX.
    """
    major, minor, _ = parse_cc(cc)
    usable: dict[str, list[tuple[tuple[int, int], str]]] = {"native": [], "ptx": []}
    for entry in wheel.archs:
        got = _runs_on(entry, major, minor)
        parsed = _arch(entry)
        if got and parsed:
            usable[got].append(((parsed[1], parsed[2]), entry))
    for kind in ("native", "ptx"):
        if usable[kind]:
            return kind, max(usable[kind])[1]
    return "unsupported", None


def arch_support(cc: str | tuple[int, int], wheel: WheelBuildInfo) -> Support:
    """``native`` (SASS for this GPU), ``ptx`` (driver JIT from PTX) or ``unsupported``."""
    return arch_match(cc, wheel)[0]
