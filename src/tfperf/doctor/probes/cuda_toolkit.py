"""The CUDA *toolkit* (nvcc, CUDA_HOME): what a developer compiles with.

Kept apart from the runtime libraries on purpose: TensorFlow never uses nvcc, and a toolkit
whose version differs from the build's CUDA is not a problem by itself.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tfperf.doctor.probe import GatherOptions
from tfperf.doctor.probes.runner import run_command

STAGE = "slow"

_RELEASE = re.compile(r"release (?P<version>\d+\.\d+)")


def parse_nvcc(text: str) -> str | None:
    m = _RELEASE.search(text)
    return m["version"] if m else None


def _nvcc_candidates(cuda_home: str | None) -> list[str]:
    cands = ["nvcc"]
    for root in (cuda_home, "/usr/local/cuda"):
        if root:
            path = Path(root) / "bin" / ("nvcc.exe" if os.name == "nt" else "nvcc")
            if path.is_file():
                cands.append(str(path))
    return cands


def probe_cuda_toolkit(timeout: float = 10.0) -> dict[str, Any]:
    cuda_home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    facts: dict[str, Any] = {"cuda_home": cuda_home, "nvcc_path": None, "nvcc_version": None}
    outcome = "nvcc: not found"
    for cand in _nvcc_candidates(cuda_home):
        result = run_command([cand, "--version"], timeout=timeout)
        if result.ok:
            facts["nvcc_path"] = cand if os.sep in cand else shutil.which(cand)
            facts["nvcc_version"] = parse_nvcc(result.stdout)
            outcome = "ok"
            break
        if result.status != "not found":
            outcome = result.describe()
    facts["toolkit_probe"] = outcome
    return facts


def probe(options: GatherOptions, earlier: Mapping[str, Any]) -> Mapping[str, Any]:
    """The CUDA toolkit (nvcc, CUDA_HOME) a developer compiles with."""
    return probe_cuda_toolkit(options.tool_timeout)
