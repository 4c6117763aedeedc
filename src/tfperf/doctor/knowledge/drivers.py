"""CUDA release → minimum NVIDIA driver, and the reverse (what ``nvidia-smi`` calls
"CUDA Version": the newest CUDA the *driver* can run, never an installed toolkit).

Two minimums matter for a build made with CUDA X.Y:

* the toolkit minimum (NVIDIA's "CUDA Toolkit and Corresponding Driver Versions" table):
  with it everything works, including JIT-compiling the build's PTX for a GPU it has no
  native code for;
* the minor-version-compatibility floor of CUDA major X (11.x ≥ 450.80.02, 12.x ≥ 525.60.13,
  13.x ≥ 580 on Linux): with it the build runs, but PTX produced by a newer toolkit than the
  driver cannot be JIT-compiled (CUDA_ERROR_UNSUPPORTED_PTX_VERSION). CUDA 10 and older have
  no such floor.

On WSL2 the driver is the Windows one, so WSL reads the Windows column; TensorFlow's pip
guide asks for ≥ 528.33 for CUDA 12.x there (the raw table's note), which is used as the 12.x
floor for WSL.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Literal

from tfperf.doctor import versions as V
from tfperf.doctor.knowledge.tables import read_table, table_os

Verdict = Literal["full", "compat", "insufficient", "unknown"]

_WSL_12X_FLOOR = "528.33"


@dataclass(frozen=True)
class _Row:
    cuda: str
    kind: str  # toolkit | branch | minor_compat
    label: str
    linux: str
    windows: str
    source: str

    def driver(self, os: str) -> str:
        return self.windows if os in ("windows", "wsl") else self.linux


@functools.cache
def _rows() -> tuple[_Row, ...]:
    return tuple(_Row(r["cuda"], r["kind"], r["label"], r["linux_min"], r["windows_min"],
                      r["source"]) for r in read_table("cuda_driver_min.csv"))


@dataclass(frozen=True)
class DriverRequirement:
    """Driver minimums for running code built with ``cuda`` on ``os``."""

    cuda: str
    os: str
    toolkit_min: str | None  # exact minimum (branch number when only the branch is known)
    toolkit_release: str | None  # the CUDA release the minimum belongs to ("11.2.0")
    branch_only: bool
    compat_min: str | None  # minor-version-compatibility floor of this CUDA major
    toolkit_source: str = ""
    compat_source: str = ""

    def verdict(self, driver: str) -> Verdict:
        """``full`` (≥ toolkit minimum), ``compat`` (only minor-version compatibility carries
        it), ``insufficient``, or ``unknown`` (no data for this CUDA on this OS)."""
        if self.toolkit_min is None and self.compat_min is None:
            return "unknown"
        if self.toolkit_min is not None:
            need = self.toolkit_min
            if self.branch_only:  # a branch "R615" is met by any 615.xx driver
                if V.parse(driver)[0] >= V.parse(need)[0]:
                    return "full"
            elif V.at_least(driver, need):
                return "full"
        if self.compat_min is not None and V.at_least(driver, self.compat_min):
            return "compat"
        return "insufficient"


def min_driver(cuda_version: str, os: str = "linux") -> DriverRequirement:
    """Driver minimums for ``cuda_version`` (``"11.2"`` → the 11.2.0 GA row, 460.27.03 on
    Linux; ``"12.5.1"`` → that update's row). Raises ValueError for a malformed version."""
    want = V.parse(cuda_version)
    col = "wsl" if os == "wsl" else table_os(os)
    toolkit = [r for r in _rows() if r.kind in ("toolkit", "branch")
               and V.same_prefix(r.cuda, want) and r.driver(col)]
    best = min(toolkit, key=lambda r: V.parse(r.driver(col)), default=None)
    compat = next((r for r in _rows() if r.kind == "minor_compat"
                   and V.parse(r.cuda)[0] == want[0] and r.driver(col)), None)
    compat_min = compat.driver(col) if compat else None
    if compat and os == "wsl" and want[0] == 12:
        compat_min = _WSL_12X_FLOOR
    return DriverRequirement(
        cuda=cuda_version, os=os,
        toolkit_min=best.driver(col) if best else None,
        toolkit_release=best.cuda if best else None,
        branch_only=bool(best and best.kind == "branch"),
        compat_min=compat_min,
        toolkit_source=best.source if best else "",
        compat_source=compat.source if compat else "")


def newest_cuda_for_driver(driver: str, os: str = "linux") -> str | None:
    """The newest CUDA (``"12.4"``) a driver supports: what ``nvidia-smi`` prints as
    "CUDA Version". None when the driver predates every known release.

    Where the table has no toolkit row for a major on this OS (Windows 13.x), the major's
    compatibility floor stands for its X.0 release, so the answer is then a lower bound.
    """
    col = "wsl" if os == "wsl" else table_os(os)
    have = V.parse(driver)
    best: V.VersionTuple | None = None
    for r in _rows():
        need = r.driver(col)
        if not need:
            continue
        ok = (have[0] >= V.parse(need)[0]) if r.kind == "branch" else V.at_least(have, need)
        if not ok:
            continue
        cuda = V.major_minor(r.cuda) if r.kind != "minor_compat" else (V.parse(r.cuda)[0], 0)
        if best is None or cuda > best:
            best = cuda
    return V.fmt(best) if best else None
