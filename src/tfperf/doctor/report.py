"""The doctor's report: terminal text (grouped, coloured), JSON (stable schema) and Markdown.

The JSON schema is documented in docs/doctor.md. Its stable parts: top-level ``facts`` (the
flat :class:`~tfperf.doctor.facts.Facts` record) and ``checks`` (a list of ``id``, ``status``,
``message``, ``fix``, plus ``data`` with the figures behind a verdict).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tfperf import __version__
from tfperf.core.findings import Finding, Status
from tfperf.core.render import markdown_table, status_badge, style, to_json
from tfperf.doctor.facts import Facts

SCHEMA_VERSION = 1
# Report sections in order; "doctor.gpu" also takes "doctor.gpu.<anything>", not "doctor.gpu_arch".
GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("System and TensorFlow", ("doctor.tensorflow", "doctor.python", "doctor.platform")),
    ("Driver and GPU", ("doctor.gpu", "doctor.cpu_only_build", "doctor.driver",
                        "doctor.cuda_versions", "doctor.gpu_arch")),
    ("CUDA libraries", ("doctor.libraries", "doctor.pip_wheels", "doctor.cudnn_copies")),
    ("TensorFlow at run time", ("doctor.tf_sees_gpu", "doctor.import_log")),
    ("Live compute checks", ("live",)),
)


def group_of(check_id: str) -> str:
    for title, prefixes in GROUPS:
        if any(check_id == p or check_id.startswith(p + ".") for p in prefixes):
            return title
    return "Other checks"


def check_dict(f: Finding) -> dict[str, Any]:
    return {"id": f.code, "status": str(f.status), "message": f.message, "fix": f.hint,
            "data": f.data}


def summary(findings: Sequence[Finding]) -> dict[str, int]:
    counts = {str(s): 0 for s in (Status.PASS, Status.WARN, Status.FAIL, Status.SKIP)}
    for f in findings:
        counts[str(f.status)] = counts.get(str(f.status), 0) + 1
    return counts


def exit_status(findings: Sequence[Finding]) -> int:
    return 1 if any(f.failed for f in findings) else 0


# ---------------------------------------------------------------------------------------------
# JSON


def report_json(facts: Facts, findings: Sequence[Finding]) -> str:
    return to_json({
        "tfperf": __version__,
        "schema": SCHEMA_VERSION,
        "facts": facts.to_dict(),
        "checks": [check_dict(f) for f in findings],
        "summary": summary(findings),
        "exit_status": exit_status(findings),
    })


# ---------------------------------------------------------------------------------------------
# facts worth a line in a human report


def _gpu_line(gpu: dict[str, Any]) -> str:
    parts = [str(gpu.get("name") or "?")]
    if gpu.get("compute_capability"):
        parts.append(f"cc {gpu['compute_capability']}")
    if gpu.get("memory_mib"):
        parts.append(f"{gpu['memory_mib'] / 1024:.0f} GiB")
    return f"GPU {gpu.get('index', '?')}: " + ", ".join(parts)


def _archs(value: Any) -> str:
    return " ".join(value) if isinstance(value, (list, tuple)) else str(value)


KEY_WHEELS = ("cudnn", "cuda-runtime", "cublas")


def _wheels(wheels: dict[str, str], full: bool) -> str:
    if full or len(wheels) <= len(KEY_WHEELS):
        return ", ".join(f"{k} {v}" for k, v in wheels.items())
    key = [f"{k} {v}" for k, v in wheels.items() if any(f"-{w}-" in k for w in KEY_WHEELS)]
    return f"{len(wheels)} wheels: " + ", ".join(key) + ", …"


def fact_lines(facts: Facts, full: bool = False) -> list[tuple[str, str]]:
    """(label, value) pairs: the facts a reader of a bug report looks for first.

    ``full`` lists every nvidia-* wheel (Markdown for bug reports); the terminal gets the
    ones that matter most.
    """
    system = facts.os_release or facts.os or "?"
    if facts.wsl:
        system += " (WSL2)"
    if facts.glibc:
        system += f", glibc {facts.glibc}"
    tf = ", ".join(f"{k} {v}" for k, v in facts.tf_packages.items()) or "not installed"
    if facts.tf_probe and facts.tf_probe != "ok":
        tf += f" [import: {facts.tf_probe}]"
    build = facts.tf_build_info
    if build.get("is_cuda_build"):
        tf_build = (f"CUDA {build.get('cuda_version', '?')}, "
                    f"cuDNN {build.get('cudnn_version', '?')}, "
                    f"archs {_archs(build.get('cuda_compute_capabilities', '?'))}")
    elif build:
        tf_build = "CPU only (no CUDA)"
    else:
        tf_build = "unknown (TensorFlow did not run)"
    if facts.driver_version:
        driver = f"{facts.driver_version} (via {facts.driver_source})"
        if facts.driver_cuda:
            driver += f", supports CUDA ≤ {facts.driver_cuda}"
    else:
        driver = "none found" + ("; " if facts.driver_probes else "") + "; ".join(
            f"{k}: {v}" for k, v in facts.driver_probes.items())
    toolkit = (f"nvcc {facts.nvcc_version} ({facts.nvcc_path})" if facts.nvcc_version
               else (facts.toolkit_probe or "not found"))
    if facts.cuda_home:
        toolkit += f", CUDA_HOME={facts.cuda_home}"
    lines = [("system", system),
             ("python", f"{facts.python_version}" + (f" ({facts.python_executable})"
                                                      if facts.python_executable else "")),
             ("tensorflow", tf),
             ("tf build", tf_build)]
    if facts.keras_packages:
        lines.append(("keras", ", ".join(f"{k} {v}" for k, v in facts.keras_packages.items())))
    lines += [("driver", driver)]
    lines += [("", _gpu_line(g)) for g in facts.gpus]
    if facts.pci_nvidia_gpus and not facts.gpus:
        lines.append(("pci", ", ".join(facts.pci_nvidia_gpus)))
    tf_devs = ", ".join(facts.tf_physical_devices) if facts.tf_probe == "ok" else "–"
    lines += [("tf devices", tf_devs), ("cuda toolkit", toolkit + " (compiler only: TF does "
                                        "not use it)" if facts.nvcc_version else toolkit)]
    if facts.nvidia_wheels:
        lines.append(("nvidia wheels", _wheels(facts.nvidia_wheels, full)))
    if facts.other_frameworks:
        lines.append(("other", ", ".join(f"{k} {v}" for k, v in facts.other_frameworks.items())))
    if facts.env:
        lines.append(("env", " ".join(f"{k}={v}" for k, v in facts.env.items())))
    return lines


LABEL_WIDTH = 17  # the longest short id, "reduced_precision"


def short_id(check_id: str) -> str:
    """``doctor.gpu_arch`` → ``gpu_arch``; ``live.matmul.cpu`` → ``matmul.cpu``."""
    head, _, rest = check_id.partition(".")
    return rest or head


def _grouped(findings: Sequence[Finding]) -> list[tuple[str, list[Finding]]]:
    order = [title for title, _ in GROUPS] + ["Other checks"]
    buckets: dict[str, list[Finding]] = {t: [] for t in order}
    for f in findings:
        buckets[group_of(f.code)].append(f)
    return [(t, fs) for t, fs in buckets.items() if fs]


def _summary_line(findings: Sequence[Finding]) -> str:
    counts = summary(findings)
    verdict = "problems found" if exit_status(findings) else "no failing check"
    return f"{verdict}: " + ", ".join(f"{n} {s}" for s, n in counts.items() if n)


# ---------------------------------------------------------------------------------------------
# text


def report_text(facts: Facts, findings: Sequence[Finding], color: bool = False) -> str:
    out = [style(f"tfperf doctor {__version__}", "bold", color=color), ""]
    lines = fact_lines(facts)
    width = max(len(label) for label, _ in lines)
    for label, value in lines:
        out.append(f"  {style(label.ljust(width), 'dim', color=color)}  {value}")
    for title, group in _grouped(findings):
        out += ["", style(title, "bold", color=color)]
        for f in group:
            label = style(short_id(f.code).ljust(LABEL_WIDTH), "dim", color=color)
            out.append(f"  {status_badge(f.status, color)} {label} {f.message}")
            indent = " " * (8 + LABEL_WIDTH)
            if f.hint and f.status in (Status.FAIL, Status.WARN):
                out.append(f"{indent}{style('fix:', 'cyan', color=color)} {f.hint}")
            elif f.hint and f.status is Status.SKIP:
                out.append(f"{indent}{style(f.hint, 'dim', color=color)}")
    out += ["", style(_summary_line(findings), "bold",
                      "red" if exit_status(findings) else "green", color=color)]
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# Markdown (for bug reports)


def report_markdown(facts: Facts, findings: Sequence[Finding]) -> str:
    out = [f"## tfperf doctor {__version__}", "",
           markdown_table(["fact", "value"],
                          [(k or "", v) for k, v in fact_lines(facts, full=True)]), "",
           "### Checks", "",
           markdown_table(["status", "check", "message", "fix"],
                          [(str(f.status).upper(), f"`{f.code}`", f.message, f.hint)
                           for f in findings]), "",
           f"**{_summary_line(findings)}**"]
    if facts.tf_import_log.strip():
        log = facts.tf_import_log.strip().replace("```", "'''")
        out += ["", "<details><summary>TensorFlow import log</summary>", "", "```text", log,
                "```", "", "</details>"]
    return "\n".join(out) + "\n"
