"""Facts first: what a log says about the machine and the installs, read in one pass.

Like ``collect_env``, this reads every fact a log holds before anything is judged: the versions
(``explain_versions.read_versions``), the platform (native Windows, macOS, WSL, a Jetson or other
aarch64 board, Colab, a container), where TensorFlow is imported from (a user site such as
``~/.local`` against a conda env or a venv), the GPUs named and their compute capability, the
device memory and the tensor an out-of-memory failed on, and where a start-up stops. The
judgements over these facts live in ``explain_judgements``.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass

from tfperf.doctor.explain_versions import LogVersions, read_versions

_WINDOW = 100_000  # characters read at each end of a long log (start-up lines, the traceback)

# where a frame's TensorFlow lives: the folder that holds the tensorflow package
_TF_ROOT = re.compile(r"File \"(?P<root>[^\"\n]*?[/\\](?:site|dist)-packages)[/\\]"
                      r"tensorflow(?:_core)?[/\\]")
_USER_SITE = re.compile(r"/\.local/lib/python[\d.]+/site-packages|\\AppData\\Roaming\\Python\\")
_ENV_SITE = re.compile(r"[/\\](?:envs[/\\][^/\\\n\"]+|anaconda\d?|miniconda\d?|miniforge\d?|"
                       r"\.?venv|virtualenvs[/\\][^/\\\n\"]+)[/\\](?:lib|Lib)[/\\]")
_PLATFORM = (
    ("wsl", re.compile(r"microsoft-standard-WSL|\bWSL2?\b|/mnt/c/|/usr/lib/wsl/lib")),
    ("jetson", re.compile(r"\b(?:Jetson|jetson|Tegra|tegra|NVIDIA Xavier|Xavier NX|AGX Orin|"
                          r"Orin Nano|JetPack|L4T)\b|nvhost|NvMap")),
    ("aarch64", re.compile(r"\baarch64\b|linux_aarch64|\barm64\b")),
    ("colab", re.compile(r"/content/|google\.colab|google/colab")),
    ("container", re.compile(r"\bdocker\b|/\.dockerenv|\bnvcr\.io/|\bsingularity\b", re.I)),
    ("triton", re.compile(r"\btritonserver\b|\bTriton\b|TRITONBACKEND_|triton_backend|libtriton")),
)
_GPU_NAME = re.compile(r"(?:name: |device: \d+, name: |\bGPU \d+: )(?P<name>(?:NVIDIA |GeForce |"
                       r"Tesla |Quadro |TITAN |Radeon |AMD )[\w -]{1,40}?)(?:,| \(| major| pci|$)",
                       re.M)
_CC = re.compile(r"[Cc]ompute ?[Cc]apability:? ?(?P<cc>\d{1,2}\.\d)|major: (?P<maj>\d{1,2}) "
                 r"minor: (?P<min>\d)")
_TOTAL = re.compile(r"[Tt]otal ?[Mm]emory: ?(?P<n>[\d.]+) ?(?P<u>[MG])i?B|"
                    r"with (?P<n2>\d+) MB memory|^\s*Limit:\s+(?P<lim>\d+)\s*$", re.M)
_OOM_TENSOR = re.compile(r"OOM when allocating tensor (?:with|of) shape ?"
                         r"[\[(](?P<shape>[\d, ]+)[\])]"
                         r"(?: and type (?P<dtype>\w+))?")
_DTYPE_BYTES = {"double": 8, "float64": 8, "int64": 8, "complex64": 8, "half": 2, "float16": 2,
                "bfloat16": 2, "int16": 2, "uint8": 1, "int8": 1, "bool": 1}
_UNIT = {"M": 1 << 20, "G": 1 << 30}
_STAMP = re.compile(r"^(?P<d>\d{4}-\d\d-\d\d) (?P<h>\d\d):(?P<m>\d\d):(?P<s>\d\d(?:\.\d+)?)")
_ADDING_GPUS = "Adding visible gpu devices"


@dataclass(frozen=True)
class OomTensor:
    shape: tuple[int, ...]
    dtype: str
    size: int  # bytes


@dataclass(frozen=True)
class LogFacts:
    versions: LogVersions
    platforms: frozenset[str]  # wsl, jetson, aarch64, colab, container, triton (and versions.os)
    tf_roots: tuple[str, ...]  # the site folders TensorFlow's frames come from, in order
    env_site: str  # the conda env / venv root the interpreter's own frames come from ('' if none)
    gpus: tuple[str, ...]
    compute_capabilities: tuple[str, ...]
    device_memory: int | None  # bytes: the GPU's total, or the allocator's limit
    oom_tensor: OomTensor | None
    stops_at_gpu_setup: str  # the start-up line the log ends on, or a long wait after it

    @property
    def user_site_tf(self) -> str:
        """The user-site folder TensorFlow is imported from ('' if none)."""
        return next((r for r in self.tf_roots if _USER_SITE.search(r + "/")), "")


def _window(text: str) -> str:
    return text if len(text) <= 2 * _WINDOW else text[:_WINDOW] + "\n" + text[-_WINDOW:]


def _roots(text: str) -> tuple[tuple[str, ...], str]:
    if "site-packages" not in text and "dist-packages" not in text:
        return (), ""
    roots = tuple(dict.fromkeys(m["root"] for m in _TF_ROOT.finditer(text)))
    env = ""
    for m in re.finditer(r"File \"(?P<path>[^\"\n]+)\"", text):
        path = m["path"]
        if (site := _ENV_SITE.search(path)) and not _USER_SITE.search(path):
            env = path[:site.end() - len("/lib/")]  # the env's root, not the frame's file
            break
    return roots, env


def _device_memory(text: str) -> int | None:
    for m in _TOTAL.finditer(text):
        if m["n"]:
            return int(float(m["n"]) * _UNIT[m["u"]])
        if m["n2"]:
            return int(m["n2"]) << 20
        if m["lim"]:
            return int(m["lim"])
    return None


def _oom_tensor(text: str) -> OomTensor | None:
    m = _OOM_TENSOR.search(text) if "OOM when allocating" in text else None
    if m is None:
        return None
    dims = tuple(int(d) for d in m["shape"].replace(" ", "").split(",") if d)
    dtype = (m["dtype"] or "float").lower()
    return OomTensor(dims, dtype, math.prod(dims) * _DTYPE_BYTES.get(dtype, 4)) if dims else None


def _seconds(m: re.Match[str]) -> float:
    return int(m["h"]) * 3600 + int(m["m"]) * 60 + float(m["s"])


_LONG_WAIT = 60.0  # seconds of silence after the GPU list that only a JIT (or a hang) explains


def _stops_at_gpu_setup(lines: list[str]) -> str:
    """'N minutes between ...' when the next time-stamped line comes a minute or more after
    TensorFlow's 'Adding visible gpu devices': the start-up waits there (the driver JIT-compiling
    PTX for a GPU the build has no kernels for, round 19's tf22043). A log that merely ends at
    that line is no evidence: a benign start-up pasted up to it reads the same (tf23573)."""
    at = next((i for i, ln in enumerate(lines) if _ADDING_GPUS in ln), None)
    if at is None:
        return ""
    rest = [ln for ln in lines[at + 1:] if ln.strip()]
    start = _STAMP.match(lines[at].strip())
    if start is None:
        return ""
    for ln in rest[:20]:
        if (nxt := _STAMP.match(ln.strip())) is not None:
            gap = _seconds(nxt) - _seconds(start)
            if nxt["d"] == start["d"] and gap >= _LONG_WAIT:
                return f"{gap / 60:.1f} minutes between '{_ADDING_GPUS}' and the next line"
            return ""
    return ""


@functools.lru_cache(maxsize=4)
def read_facts(text: str) -> LogFacts:
    """Every fact the log holds, from its first and last 100,000 characters."""
    window = _window(text)
    roots, env = _roots(window)
    platforms = frozenset(name for name, rx in _PLATFORM if rx.search(window))
    gpus = tuple(dict.fromkeys(m["name"].strip() for m in _GPU_NAME.finditer(window)))
    ccs = tuple(dict.fromkeys(m["cc"] or f"{m['maj']}.{m['min']}" for m in _CC.finditer(window)))
    stops = (_stops_at_gpu_setup(window.splitlines()) if _ADDING_GPUS in window else "")
    return LogFacts(read_versions(text), platforms, roots, env, gpus, ccs,
                    _device_memory(window), _oom_tensor(window), stops)
