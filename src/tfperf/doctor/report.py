"""The doctor's report: terminal text (grouped, coloured), JSON (stable schema) and Markdown.

The JSON schema is documented in docs/doctor.md. Its stable parts: top-level ``facts`` (the
flat :class:`~tfperf.doctor.facts.Facts` record) and ``checks`` (a list of ``id``, ``status``,
``message``, ``fix``, plus ``data`` with the figures behind a verdict).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
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
    ("Devices and collectives", ("devices", "workers")),
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
        "could_not_look": could_not_look_list(facts),
        "checks": [check_dict(f) for f in findings],
        "summary": summary(findings),
        "exit_status": exit_status(findings),
    })


def report_html(facts: Facts, findings: Sequence[Finding]) -> str:
    """The JSON report's document as one self-contained HTML page (``doctor --html``)."""
    from tfperf.core.html import report_page

    return report_page("doctor", report_json(facts, findings))


# ---------------------------------------------------------------------------------------------
# facts worth a line in a human report


# One rule for what is not known, in every format (as torch's collect_env has one): a fact
# whose probe failed, or that the probe could not determine, reads "could not look" (with
# the reason when there is one); a fact looked for and absent reads "not found".
COULD_NOT_LOOK = "could not look"
NOT_FOUND = "not found"


def could_not_look(why: str | None = None) -> str:
    return f"{COULD_NOT_LOOK}: {why}" if why else COULD_NOT_LOOK


def _known(value: Any) -> str:
    return could_not_look() if value in (None, "") else str(value)


def _gpu_line(gpu: dict[str, Any]) -> str:
    parts = [_known(gpu.get("name"))]
    if gpu.get("compute_capability"):
        parts.append(f"cc {gpu['compute_capability']}")
    if gpu.get("memory_mib"):
        parts.append(f"{gpu['memory_mib'] / 1024:.0f} GiB")
    return f"GPU {gpu.get('index', '')}: ".replace(" :", ":") + ", ".join(parts)


def _archs(value: Any) -> str:
    return " ".join(value) if isinstance(value, (list, tuple)) else _known(value)


KEY_WHEELS = ("cudnn", "cuda-runtime", "cublas")


def _wheels(wheels: dict[str, str], full: bool) -> str:
    if full or len(wheels) <= len(KEY_WHEELS):
        return ", ".join(f"{k} {v}" for k, v in wheels.items())
    key = [f"{k} {v}" for k, v in wheels.items() if any(f"-{w}-" in k for w in KEY_WHEELS)]
    return f"{len(wheels)} wheels: " + ", ".join(key) + ", …"


def _system(facts: Facts) -> str | None:
    system = facts.os_release or facts.os
    if system is None:
        return None
    if facts.wsl:
        system += " (WSL2)"
    if facts.glibc:
        system += f", glibc {facts.glibc}"
    return system


def _python(facts: Facts) -> str | None:
    if facts.python_version is None:
        return None
    return facts.python_version + (f" ({facts.python_executable})"
                                   if facts.python_executable else "")


def _tensorflow(facts: Facts) -> str:
    tf = ", ".join(f"{k} {v}" for k, v in facts.tf_packages.items()) or "not installed"
    if facts.tf_probe and facts.tf_probe != "ok":
        tf += f" [import: {facts.tf_probe}]"
    return tf


def _tf_build(facts: Facts) -> str:
    build = facts.tf_build_info
    if build.get("is_cuda_build"):
        return (f"CUDA {_known(build.get('cuda_version'))}, "
                f"cuDNN {_known(build.get('cudnn_version'))}, "
                f"archs {_archs(build.get('cuda_compute_capabilities'))}")
    if build:
        return "CPU only (no CUDA)"
    return could_not_look("TensorFlow did not run" + (f" ({facts.tf_probe})"
                                                      if facts.tf_probe else ""))


def _driver(facts: Facts) -> str:
    if facts.driver_version:
        driver = f"{facts.driver_version} (via {facts.driver_source})"
        if facts.driver_cuda:
            driver += f", supports CUDA ≤ {facts.driver_cuda}"
        return driver
    said = "; ".join(f"{k}: {v}" for k, v in facts.driver_probes.items())
    return NOT_FOUND + (f" ({said})" if said else "")


def _tf_devices(facts: Facts) -> str:
    if facts.tf_probe == "ok":
        return ", ".join(facts.tf_physical_devices) or NOT_FOUND
    return could_not_look("TensorFlow did not run" + (f" ({facts.tf_probe})"
                                                      if facts.tf_probe else ""))


def _toolkit(facts: Facts) -> str:
    if facts.nvcc_version:
        toolkit = f"nvcc {facts.nvcc_version} ({facts.nvcc_path})"
    else:
        toolkit = facts.toolkit_probe or NOT_FOUND
    if facts.cuda_home:
        toolkit += f", CUDA_HOME={facts.cuda_home}"
    return toolkit + (" (compiler only: TF does not use it)" if facts.nvcc_version else "")


def _mapping(values: dict[str, str], sep: str = " ") -> str:
    return ", ".join(f"{k}{sep}{v}" for k, v in values.items())


# A fact line: its label, the probes its facts come from, its value (``None``: not
# determined) and, for optional lines, when it is shown.
@dataclass(frozen=True)
class _Line:
    label: str
    probes: tuple[str, ...]
    value: Callable[[Facts, bool], str | None]  # (facts, full)
    shown: Callable[[Facts], Any] = lambda facts: True


_HEAD = (
    _Line("system", ("system",), lambda f, full: _system(f)),
    _Line("python", ("system",), lambda f, full: _python(f)),
    _Line("tensorflow", ("packages", "tf_runtime"), lambda f, full: _tensorflow(f)),
    _Line("tf build", ("tf_runtime",), lambda f, full: _tf_build(f)),
    _Line("keras", ("packages",), lambda f, full: _mapping(f.keras_packages),
          lambda f: f.keras_packages),
    _Line("driver", ("driver",), lambda f, full: _driver(f)),
)
_TAIL = (
    _Line("tf devices", ("tf_runtime",), lambda f, full: _tf_devices(f)),
    _Line("cuda toolkit", ("cuda_toolkit",), lambda f, full: _toolkit(f)),
    _Line("nvidia wheels", ("packages",), lambda f, full: _wheels(f.nvidia_wheels, full),
          lambda f: f.nvidia_wheels),
    _Line("other", ("packages",), lambda f, full: _mapping(f.other_frameworks),
          lambda f: f.other_frameworks),
    _Line("env", ("environment",), lambda f, full: _mapping(f.env, "="), lambda f: f.env),
)
# Probes whose facts the lines here show; any other probe's facts get a generic line.
_SHOWN = frozenset(p for line in (*_HEAD, *_TAIL) for p in line.probes) | {"pci", "libraries"}


def _failed(facts: Facts, probes: tuple[str, ...]) -> str | None:
    failed = [f"{p}: {facts.probe_errors[p]}" for p in probes if p in facts.probe_errors]
    return could_not_look("; ".join(failed)) if failed else None


def _lines(facts: Facts, table: tuple[_Line, ...], full: bool) -> list[tuple[str, str]]:
    out = []
    for line in table:
        failed = _failed(facts, line.probes)
        if failed is not None:
            out.append((line.label, failed))
        elif line.shown(facts):
            value = line.value(facts, full)
            out.append((line.label, could_not_look() if value is None else value))
    return out


def fact_lines(facts: Facts, full: bool = False) -> list[tuple[str, str]]:
    """(label, value) pairs: the facts a reader of a bug report looks for first, then a line
    for each probe whose facts no line above shows (a probe added later, or one that failed).

    ``full`` lists every nvidia-* wheel (Markdown for bug reports); the terminal gets the
    ones that matter most.
    """
    lines = _lines(facts, _HEAD, full)
    if "driver" not in facts.probe_errors:
        lines += [("", _gpu_line(g)) for g in facts.gpus]
    failed = _failed(facts, ("pci",))
    if failed is not None:
        lines.append(("pci", failed))
    elif facts.pci_nvidia_gpus and not facts.gpus:
        lines.append(("pci", ", ".join(facts.pci_nvidia_gpus)))
    lines += _lines(facts, _TAIL, full)
    failed = _failed(facts, ("libraries",))
    if failed is not None:
        lines.append(("cuda libraries", failed))
    for name in sorted((set(facts.extra) | set(facts.probe_errors)) - _SHOWN):
        failed = _failed(facts, (name,))
        lines.append((name, failed or _mapping(
            {k: str(v) for k, v in facts.extra[name].items()}, "=")))
    return lines


def could_not_look_list(facts: Facts) -> list[dict[str, str]]:
    """The probes that failed, for the JSON report: what could not be looked at, and why."""
    return [{"probe": name, "error": err} for name, err in sorted(facts.probe_errors.items())]


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
