"""Driver and GPUs through the `nvidia-smi` tool: the second choice, always time-bounded."""

from __future__ import annotations

import os
import re
from typing import Any

from tfperf.doctor.probes.runner import run_command

QUERY = "index,name,driver_version,memory.total,compute_cap"
_HEADER = re.compile(r"Driver Version:\s*(?P<driver>[\d.]+).*?CUDA Version:\s*(?P<cuda>[\d.]+)")
# WSL2 puts the Windows driver's tools here, often not on PATH.
EXTRA_DIRS = ("/usr/lib/wsl/lib",)


def _search_path() -> str:
    dirs = os.environ.get("PATH", "").split(os.pathsep)
    return os.pathsep.join([*dirs, *(d for d in EXTRA_DIRS if d not in dirs)])


def parse_header(text: str) -> dict[str, str]:
    """'Driver Version: 550.144.03   CUDA Version: 12.4' → driver and the driver's CUDA."""
    m = _HEADER.search(text)
    return {"driver_version": m["driver"], "driver_cuda": m["cuda"]} if m else {}


def parse_query(text: str) -> list[dict[str, Any]]:
    gpus = []
    for line in text.strip().splitlines():
        cells = [c.strip() for c in line.split(",")]
        if len(cells) < 4 or not cells[0].isdigit():
            continue
        cc = cells[4] if len(cells) > 4 and re.fullmatch(r"\d+\.\d+", cells[4]) else None
        memory = int(float(cells[3])) if re.fullmatch(r"[\d.]+", cells[3]) else None
        gpus.append({"index": int(cells[0]), "name": cells[1], "compute_capability": cc,
                     "memory_mib": memory, "driver_version": cells[2]})
    return gpus


def probe_nvidia_smi(timeout: float = 10.0) -> dict[str, Any]:
    """``{"status": "ok", ...}`` or ``{"status": "<why not>"}``; never raises."""
    env = {**os.environ, "PATH": _search_path()}
    header = run_command(["nvidia-smi"], timeout=timeout, env=env)
    if not header.ok:
        return {"status": header.describe()}  # a hang is paid for once, not twice
    facts: dict[str, Any] = {"status": "ok", **parse_header(header.stdout)}
    query = run_command(["nvidia-smi", f"--query-gpu={QUERY}", "--format=csv,noheader,nounits"],
                        timeout=timeout, env=env)
    if not query.ok:  # drivers before ~510 lack compute_cap: ask again without it
        query = run_command(["nvidia-smi", f"--query-gpu={QUERY.rsplit(',', 1)[0]}",
                             "--format=csv,noheader,nounits"], timeout=timeout, env=env)
    gpus = parse_query(query.stdout) if query.ok else []
    for gpu in gpus:
        facts.setdefault("driver_version", gpu.pop("driver_version"))
        gpu.pop("driver_version", None)
    facts["gpus"] = gpus
    if not query.ok:
        facts["status"] = f"ok (GPU query failed: {query.describe()})"
    if not facts.get("driver_version") and not gpus:  # "ok" beside "driver not found" misled
        first = next((ln.strip() for ln in header.stdout.splitlines() if ln.strip()), "")
        said = f": {first[:100]!r}" if first.isprintable() and first else ""
        facts["status"] = f"ran, but its output names no driver or GPU{said}"
    return facts
