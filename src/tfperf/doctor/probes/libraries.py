"""CUDA runtime libraries that can actually be loaded, and from where.

TensorFlow dlopens exact SONAMEs (``libcudnn.so.8``, ``libcudart.so.11.0``): an installed
toolkit of another major does not provide them. Three places can: pip's ``nvidia/*/lib``
folders (found by TensorFlow ≥ 2.14 through its RUNPATH), the ``ldconfig`` cache, and
``LD_LIBRARY_PATH``. Frameworks such as torch bundle their own copies too. A dlopen test in a
fresh subprocess proves what the loader really finds (a crash there cannot take the doctor down).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import site
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tfperf.doctor.facts import Facts
from tfperf.doctor.probe import GatherOptions
from tfperf.doctor.probes.runner import run_command

FAMILIES = ("cudart", "cublas", "cublasLt", "cudnn", "cufft", "curand", "cusolver",
            "cusparse", "nvJitLink", "nccl", "cupti", "nvinfer")
_LIB = re.compile(r"^lib(?P<family>" + "|".join(FAMILIES) + r")\.so(?P<suffix>(\.\d+)*)$")
_LDCONFIG_LINE = re.compile(r"^\s*(?P<name>\S+)\s+\(.*\)\s+=>\s+(?P<path>\S+)\s*$")
LDCONFIG_CANDIDATES = ("ldconfig", "/sbin/ldconfig", "/usr/sbin/ldconfig")

STAGE = "slow"
READS_LOCAL_FACTS = True  # the libraries to look for depend on the installed TensorFlow


def is_cuda_library(filename: str) -> bool:
    return _LIB.match(filename) is not None


def _entry(path: Path, origin: str) -> dict[str, Any]:
    try:
        real = path.resolve().name
    except OSError:
        real = path.name
    m = _LIB.match(real)
    version = m["suffix"].lstrip(".") if m else ""
    return {"name": path.name, "path": str(path), "origin": origin, "version": version or None}


def site_dirs() -> list[Path]:
    dirs: list[str] = []
    with contextlib.suppress(AttributeError):  # some virtualenv layouts lack it
        dirs += site.getsitepackages()
    dirs.append(site.getusersitepackages())
    dirs += [p for p in sys.path if p.endswith(("site-packages", "dist-packages"))]
    seen, out = set(), []
    for d in dirs:
        if d and d not in seen and Path(d).is_dir():
            seen.add(d)
            out.append(Path(d))
    return out


def scan_dir(directory: Path, origin: str) -> list[dict[str, Any]]:
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    return [_entry(directory / n, origin) for n in names if is_cuda_library(n)]


def pip_libraries(dirs: Iterable[Path]) -> list[dict[str, Any]]:
    found = []
    for sp in dirs:
        for lib_dir in sorted(sp.glob("nvidia/*/lib")):
            found += scan_dir(lib_dir, f"pip ({lib_dir.parent.name})")
        for bundle in ("torch/lib", "jaxlib/cuda", "jax_plugins"):
            if (sp / bundle).is_dir():
                found += scan_dir(sp / bundle, bundle.split("/")[0])
    return found


def parse_ldconfig(text: str) -> list[dict[str, Any]]:
    found = []
    for line in text.splitlines():
        m = _LDCONFIG_LINE.match(line)
        if m and is_cuda_library(m["name"]):
            found.append(_entry(Path(m["path"]), "ldconfig"))
    return found


def ldconfig_libraries(timeout: float) -> tuple[list[dict[str, Any]], str]:
    last = "ldconfig: not found"
    for cand in LDCONFIG_CANDIDATES:
        result = run_command([cand, "-p"], timeout=timeout)
        if result.ok:
            return parse_ldconfig(result.stdout), "ok"
        if result.status != "not found":
            last = result.describe()
    return [], last


def ld_library_path_libraries(value: str | None) -> list[dict[str, Any]]:
    found = []
    for d in (value or "").split(os.pathsep):
        if d:
            found += scan_dir(Path(d), "LD_LIBRARY_PATH")
    return found


_DLOPEN_SCRIPT = """
import ctypes, json, sys

out = {}
for name in json.loads(sys.argv[1]):
    try:
        ctypes.CDLL(name)
        out[name] = "ok"
    except OSError as exc:
        out[name] = str(exc)
print(json.dumps(out))
"""


def dlopen_test(names: Sequence[str], timeout: float) -> dict[str, str]:
    """``{name_or_path: "ok" | loader's error}``, from a fresh interpreter."""
    if not names:
        return {}
    result = run_command([sys.executable, "-c", _DLOPEN_SCRIPT, json.dumps(list(names))],
                         timeout=timeout)
    if not result.ok:
        return {n: f"dlopen test failed: {result.describe()}" for n in names}
    try:
        return dict(json.loads(result.stdout.strip().splitlines()[-1]))
    except (ValueError, IndexError):
        return {n: "dlopen test printed no result" for n in names}


def probe_libraries(needed: Sequence[str], timeout: float = 10.0) -> dict[str, Any]:
    """Every CUDA library found, and for each needed SONAME where it is and if it loads."""
    if not sys.platform.startswith("linux"):
        return {"cuda_libraries": [], "needed_libraries": {},
                "libraries_probe": f"not checked on {sys.platform} (Linux SONAMEs)"}
    ldconfig, ld_status = ldconfig_libraries(timeout)
    found = (pip_libraries(site_dirs()) + ldconfig
             + ld_library_path_libraries(os.environ.get("LD_LIBRARY_PATH")))
    # Load by SONAME (what the system loader finds) and, for copies the loader would not
    # find by name (pip wheels reached through TensorFlow's RUNPATH), by full path.
    by_name = {n: [f for f in found if f["name"] == n] for n in needed}
    paths = [f["path"] for n in needed for f in by_name[n] if f["origin"] != "ldconfig"]
    loads = dlopen_test([*needed, *paths], timeout)
    needed_facts = {
        n: {"found": [{"path": f["path"], "origin": f["origin"],
                       "dlopen": loads.get(f["path"], "ok" if f["origin"] == "ldconfig"
                                           else None)} for f in by_name[n]],
            "dlopen": loads.get(n)}
        for n in needed
    }
    return {"cuda_libraries": found, "needed_libraries": needed_facts,
            "libraries_probe": "ok" if ld_status == "ok" else f"ok ({ld_status})"}


def needed_sonames(facts: Facts) -> list[str]:
    """SONAMEs of the installed GPU build, from the knowledge tables; [] when none apply.

    Read from the package version, not the running TF, so the library probe can run side by
    side with the TF subprocess. Linux only: the probe searches Linux SONAMEs.
    """
    version = facts.tensorflow_version
    if facts.os != "linux" or not version or facts.cpu_only_package:
        return []
    from tfperf.doctor.knowledge import needed_libraries

    return needed_libraries(version, "wsl" if facts.wsl else "linux")


def probe(options: GatherOptions, earlier: Mapping[str, Any]) -> Mapping[str, Any]:
    """The CUDA runtime libraries the installed TensorFlow needs, and where they are."""
    return probe_libraries(needed_sonames(Facts.from_dict(earlier)), options.tool_timeout)
