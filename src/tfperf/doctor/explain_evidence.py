"""What the log itself shows re-ranks a cause's explanations: the cause it names leads.

A row knows a symptom ("could not create cudnn handle", an out-of-memory, a retrace) and its
usual causes, most common first. The log around it often says which one it is here: the driver
version TensorFlow prints beside a cuDNN failure, a CUDA context that could not even be created,
a WSL kernel, a Keras model's own function being retraced. Rounds 4 to 7 of the held-out logs
missed most often this way: the class was right, the fix led with the common cause and not the
one the log named.

Two kinds of evidence, each applied to any cause whose label it lists, whether a row or the
floor found it:

- ``data/cause_evidence.csv``: a regex over the log (its first and last 100,000 characters) and
  the cause and fix it puts first (``{name}`` filled from the regex's named groups), with the
  public threads that confirm the reading;
- the **driver**: a driver version the log prints (``possibly insufficient driver version``,
  ``kernel reported version``, ``NVRM version``, nvidia-smi's ``Driver Version``) older than the
  minimum of the CUDA the log's libraries or TensorFlow version need (``data/cuda_driver_min.csv``),
  or, with neither known, older than CUDA 9.0 needs (every TensorFlow GPU build since 1.5).

The evidence is said in the detail (``the log shows: ...``) and its text comes first in the
cause and the fix; the row's own explanation follows ("Otherwise: ...").
"""

from __future__ import annotations

import functools
import re
from typing import Any

_WINDOW = 100_000  # characters read at each end of a long log
# the driver version a log prints, in TensorFlow's, the kernel module's and nvidia-smi's words
_DRIVER = re.compile(r"(?:[Pp]ossibly insufficient driver version|kernel reported version is|"
                     r"Kernel Module|Driver Version):?\s+(?P<v>\d{3}\.\d+(?:\.\d+)?)")
_DRIVER_WORDS = ("ossibly insufficient driver version", "kernel reported version is",
                 "Kernel Module", "Driver Version")
# causes a driver too old for the build's CUDA can produce
DRIVER_LABELS = frozenset({
    "cudnn-handle-failed", "conv-algorithm-failed", "dnn-library-not-found", "cublas-failed",
    "cuinit-failed", "cufft-plan-failed", "cuda-error", "check-failed", "internal-error",
    "unknown-error", "process-crash", "no-kernel-image", "driver-too-old"})
_OLDEST_CUDA = "9.0"  # TensorFlow 1.5 to 1.12's CUDA: no GPU build since 1.5 needs less


@functools.cache
def _rows() -> tuple[tuple[frozenset[str], tuple[str, ...], re.Pattern[str], str, str, str], ...]:
    """(labels, needles, regex, cause, fix, source): the regex is tried only on a log holding one
    of its needles (a regex alternation over 200,000 characters costs 10-20 ms)."""
    from tfperf.doctor.knowledge.tables import read_table

    return tuple((frozenset(r["labels"].split()), tuple(r["needles"].split("|")),
                  re.compile(r["evidence"], re.M), r["cause"], r["fix"], r["source"])
                 for r in read_table("cause_evidence.csv"))


def _window(text: str) -> str:
    return text if len(text) <= 2 * _WINDOW else text[:_WINDOW] + "\n" + text[-_WINDOW:]


def _fill(template: str, m: re.Match[str]) -> str:
    values = {k: v or "" for k, v in m.groupdict().items()}  # a group that did not take part: ''
    return re.sub(r"\{(\w+)\}", lambda g: values.get(g.group(1), g.group(0)), template)


def apply_evidence(causes: list[Any], text: str) -> None:
    """Put first, in each cause, the explanation the log's own evidence points at."""
    rows = _rows()
    labels = {c.label for c in causes}
    if not any(labels & r[0] for r in rows) and not labels & DRIVER_LABELS:
        return
    window = _window(text)
    found: dict[int, re.Match[str] | None] = {}  # each row's regex searched once per log
    driver: list[tuple[str, str, str] | None] = []  # the driver reading, made once if needed
    for cause in causes:
        for ri, (wanted, needles, rx, lead_cause, lead_fix, source) in enumerate(rows):
            if cause.label not in wanted:
                continue
            if ri not in found:
                found[ri] = (rx.search(window) if any(n in window for n in needles) else None)
            if m := found[ri]:
                _lead(cause, _fill(lead_cause, m), _fill(lead_fix, m), source, m.group(0))
                break
        else:
            if cause.label not in DRIVER_LABELS:
                continue
            if not driver:
                driver.append(driver_too_old(window))
            if driver[0]:
                lead_cause, lead_fix, shown = driver[0]
                _lead(cause, lead_cause, lead_fix,
                      "data/cuda_driver_min.csv (NVIDIA's CUDA release notes)", shown)


def _lead(cause: Any, lead_cause: str, lead_fix: str, source: str, shown: str) -> None:
    shown = " ".join(shown.split())[:120]
    cause.cause = f"{lead_cause} Otherwise: {cause.cause}"
    cause.fix = f"{lead_fix} Otherwise: {cause.fix}"
    cause.detail = "; ".join(filter(None, [cause.detail, f"the log shows: {shown}"]))
    cause.details.setdefault("evidence", []).append(shown)
    cause.source = f"{cause.source} ; evidence: {source}"


def driver_too_old(text: str) -> tuple[str, str, str] | None:
    """(cause, fix, the line's words) when the driver the log prints is older than the CUDA the
    log's build needs; None when the log names no driver or it is recent enough."""
    from tfperf.doctor import knowledge as K
    from tfperf.doctor import versions as V
    from tfperf.doctor.explain_versions import read_versions

    if not any(w in text for w in _DRIVER_WORDS):
        return None
    m = _DRIVER.search(text)
    if m is None:
        return None
    driver = m["v"]
    v = read_versions(text)
    os = "windows" if v.os == "windows" else "linux"
    cuda, why = v.cuda, "the CUDA its libraries name"
    if not cuda and v.tensorflow:
        cfg = K.build_config(v.tensorflow, os, gpu=True)
        cuda, why = (cfg.cuda, f"the CUDA of TensorFlow {v.tensorflow}") if cfg else (None, "")
    if not cuda:
        cuda, why = _OLDEST_CUDA, "the oldest CUDA of any TensorFlow GPU build since 1.5"
    try:
        need = K.min_driver(cuda, os).toolkit_min
        too_old = need is not None and V.parse(driver) < V.parse(need)
    except ValueError:
        return None
    if not too_old:
        return None
    newest = K.newest_cuda_for_driver(driver, os)
    most = f", it runs CUDA {newest} at most" if newest else ""
    return (f"The NVIDIA driver the log names, {driver}, is older than CUDA {cuda} needs "
            f"(>= {need} on {os}; {why}){most}: CUDA, cuDNN and cuBLAS cannot start on it.",
            f"Update the NVIDIA driver to {need} or newer (or any recent driver), then run again; "
            "memory settings do not help while the driver is too old.",
            m.group(0))
