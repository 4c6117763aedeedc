"""Facts + knowledge → verdicts. Pure functions: no probing, no printing.

Each check returns one :class:`Finding` (``code`` = check id, ``status`` pass/warn/fail/skip,
``message`` one line saying what was found, ``hint`` the concrete fix, ``data`` the values
behind the verdict). A check that lacks the facts it needs says ``skip`` and why.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from tfperf.core.findings import Finding, Status
from tfperf.doctor import knowledge as K
from tfperf.doctor import versions as V
from tfperf.doctor.facts import Facts
from tfperf.doctor.milestones import FIRST_AND_CUDA, LAST_NATIVE_WINDOWS_GPU
from tfperf.doctor.specifiers import satisfies

Check = Callable[[Facts], Finding]



def _f(code: str, status: Status, message: str, fix: str = "", **data: Any) -> Finding:
    return Finding(code=code, status=status, message=message, hint=fix, data=data)


def knowledge_os(facts: Facts) -> str:
    """The OS name the knowledge tables use (WSL2 runs Linux wheels on the Windows driver)."""
    if facts.os == "windows":
        return "windows"
    if facts.os == "darwin":
        return "macos"
    return "wsl" if facts.wsl else "linux"


def _driver_hung(facts: Facts) -> str | None:
    """The first driver tool that timed out: a wedged driver, so no GPU may still mean one."""
    return next((f"{k}: {v}" for k, v in facts.driver_probes.items() if "timed out" in v), None)


def _surely_no_gpu(facts: Facts) -> bool:
    """No GPU seen, and the PCI bus was read and no driver tool hung."""
    return not facts.has_nvidia_gpu and facts.pci_nvidia_gpus == [] and not _driver_hung(facts)


def _tf_ran(facts: Facts) -> bool:
    return facts.tf_probe == "ok"


def _and_cuda_fix(facts: Facts) -> str:
    version = facts.tensorflow_version or "<version>"
    if facts.os == "linux" and V.try_parse(version) and V.at_least(version, FIRST_AND_CUDA):
        return f"pip install 'tensorflow[and-cuda]=={version}' (brings the matching CUDA libraries)"
    return ""


def windows_build_version(value: str, cudnn: bool = False) -> str:
    """Windows builds write CUDA 11.2 as ``64_112`` and cuDNN 8 as ``64_8`` (DLL suffixes)."""
    m = re.fullmatch(r"64_(\d+)", value.strip())
    if not m:
        return value
    digits = m.group(1)
    return digits if cudnn or len(digits) < 2 else f"{digits[:-1]}.{digits[-1]}"


def build_cuda(facts: Facts) -> tuple[str | None, str | None, str]:
    """(CUDA, cuDNN, where from) of the installed TF build: its own build info first."""
    info = facts.tf_build_info
    version = facts.tensorflow_version
    cfg = K.build_config(version, knowledge_os(facts), True) \
        if version and not facts.cpu_only_package else None
    if info.get("cuda_version"):
        cuda = windows_build_version(str(info["cuda_version"]))
        cudnn = windows_build_version(str(info.get("cudnn_version") or ""), cudnn=True) or None
        # build info gives cuDNN as a major ("8"); the tested configuration says which minor
        if cfg and cfg.cudnn and cudnn and V.same_prefix(cfg.cudnn, cudnn):
            cudnn = cfg.cudnn
        return cuda, cudnn, "tf.sysconfig.get_build_info()"
    if cfg and cfg.cuda:
        return cfg.cuda, cfg.cudnn, f"tested build configurations (TF {cfg.tf_version})"
    return None, None, ""


def _gpu_names(facts: Facts) -> str:
    return ", ".join(str(g.get("name")) for g in facts.gpus) or "an NVIDIA GPU"


# ---------------------------------------------------------------------------------------------
# system and TensorFlow


# `tensorflow` installs one of these as its platform build: the pair is normal.
PLATFORM_BUILDS = frozenset({"tensorflow-intel", "tensorflow-macos", "tensorflow-cpu-aws"})


def _meta_pair(packages: dict[str, str]) -> bool:
    names = set(packages)
    if len(names) != 2 or "tensorflow" not in names:
        return False
    if not names - {"tensorflow"} <= PLATFORM_BUILDS:
        return False
    majors = {V.major_minor(v) for v in packages.values() if V.try_parse(v)}
    return len(majors) == 1


def check_tensorflow(facts: Facts) -> Finding:
    code = "doctor.tensorflow"
    if not facts.tf_packages and facts.tf_probe != "ok":
        fix = ("pip install 'tensorflow[and-cuda]' (Linux with an NVIDIA GPU) or "
               "pip install tensorflow-cpu")
        if facts.os == "linux" and _surely_no_gpu(facts):  # the GPU build first misled here
            fix = ("pip install tensorflow-cpu (this machine has no NVIDIA GPU; on one with a "
                   "GPU: pip install 'tensorflow[and-cuda]')")
        return _f(code, Status.FAIL, "TensorFlow is not installed", fix)
    if len(facts.tf_packages) > 1 and not _meta_pair(facts.tf_packages):
        names = ", ".join(f"{k} {v}" for k, v in facts.tf_packages.items())
        return _f(code, Status.FAIL,
                  f"several TensorFlow distributions installed ({names}): they overwrite one "
                  "another's files", f"pip uninstall -y {' '.join(facts.tf_packages)} and "
                  "install exactly one", packages=facts.tf_packages)
    if facts.tf_probe and facts.tf_probe != "ok":
        fix = "run `python -c 'import tensorflow'` to see the full error"
        if "crashed" in facts.tf_probe and "SIGILL" in facts.tf_probe:
            fix = ("the CPU lacks instructions this wheel needs (AVX since TF 1.6): use an "
                   "older wheel or build from source")
        elif "timed out" in facts.tf_probe:
            fix = "rerun with a longer --timeout; a first import after install can be slow"
        said = ""
        serious = [m for m in _log_matches(facts) if not m.benign]
        if serious:  # the import log the child left behind names the cause
            said = f"; its import log says: {_log_line(serious[0].line)}"
            fix = _explain_fix(serious[0], facts)
        return _f(code, Status.FAIL, f"TensorFlow {facts.tensorflow_version or ''} could not be "
                  f"imported: {facts.tf_probe}{said}".replace("  ", " "), fix)
    if facts.tf_probe is None:
        return _f(code, Status.SKIP, f"{facts.tf_package} {facts.tensorflow_version} installed; "
                  "not imported", package=facts.tf_package)
    secs = f" in {facts.tf_import_seconds:.1f} s" if facts.tf_import_seconds else ""
    return _f(code, Status.PASS, f"TensorFlow {facts.tf_version} ({facts.tf_package or '?'}) "
              f"imports{secs}", version=facts.tf_version, package=facts.tf_package)


def check_python(facts: Facts) -> Finding:
    code = "doctor.python"
    version, py = facts.tensorflow_version, facts.python_version
    if not version or not py:
        return _f(code, Status.SKIP, "no TensorFlow installed: Python support not checked")
    gpu = facts.is_cuda_build is not False and knowledge_os(facts) != "macos"
    cfg = K.build_config(version, knowledge_os(facts), gpu) or K.build_config(
        version, knowledge_os(facts), not gpu)
    if cfg is None:
        return _f(code, Status.WARN, f"TensorFlow {version} is not in the tested-build table: "
                  f"Python {py} support unknown", "check the release notes of this version")
    data = {"python": py, "supported": cfg.python_text, "source": cfg.source}
    if cfg.supports_python(py):
        return _f(code, Status.PASS, f"Python {V.fmt(V.major_minor(py))} is supported by "
                  f"TensorFlow {version} (tested: {cfg.python_text})", **data)
    return _f(code, Status.FAIL, f"Python {V.fmt(V.major_minor(py))} is not supported by "
              f"TensorFlow {version} (tested: {cfg.python_text})",
              f"use Python {cfg.python_max} (e.g. a new venv), or a TensorFlow release that "
              f"supports Python {V.fmt(V.major_minor(py))}", **data)


def check_platform(facts: Facts) -> Finding:
    code = "doctor.platform"
    version = facts.tensorflow_version
    if facts.os == "windows":
        if version and V.try_parse(version) and \
                V.compare(V.major_minor(version), V.parse(LAST_NATIVE_WINDOWS_GPU)) > 0:
            status = Status.FAIL if facts.has_nvidia_gpu else Status.WARN
            return _f(code, status,
                      f"native Windows with TensorFlow {version}: no GPU support (the last "
                      f"release with GPU support on native Windows is {LAST_NATIVE_WINDOWS_GPU})",
                      "use WSL2 (wsl --install, then pip install 'tensorflow[and-cuda]' inside "
                      "it), or pin tensorflow<2.11 with CUDA 11.2 and cuDNN 8.1 on Windows",
                      os="windows")
        return _f(code, Status.PASS, f"native Windows with TensorFlow {version or '?'}: GPU "
                  "builds still existed for this version", os="windows")
    if facts.os == "darwin":
        return _f(code, Status.PASS, "macOS: no CUDA; Apple GPUs are used through the "
                  "tensorflow-metal plugin", os="macos")
    where = "WSL2 (Linux wheels on the Windows driver)" if facts.wsl else "Linux"
    return _f(code, Status.PASS, f"{where}: TensorFlow's GPU builds are supported here",
              os=knowledge_os(facts))


# ---------------------------------------------------------------------------------------------
# driver and GPU


def check_gpu(facts: Facts) -> Finding:
    code = "doctor.gpu"
    probes = "; ".join(f"{k}: {v}" for k, v in facts.driver_probes.items())
    mismatch = [f"{k}: {v}" for k, v in facts.driver_probes.items() if "mismatch" in v.lower()]
    if mismatch:
        return _f(code, Status.FAIL, f"the NVIDIA kernel module and user-space driver differ "
                  f"({mismatch[0]}): no CUDA program can use the GPU",
                  "reboot (the driver was updated without one), or reload the nvidia kernel "
                  "modules", probes=facts.driver_probes, driver=facts.driver_version)
    if facts.driver_version:
        gpus = ", ".join(f"{g.get('name')} (cc {g.get('compute_capability') or '?'})"
                         for g in facts.gpus) or "no GPU listed"
        hung = [v for v in facts.driver_probes.values() if "timed out" in v]
        status = Status.WARN if hung else Status.PASS
        msg = f"NVIDIA driver {facts.driver_version} (from {facts.driver_source}); {gpus}"
        if hung:
            msg += f"; but {hung[0]}"
        return _f(code, status, msg, "a hanging nvidia-smi often means a wedged driver: check "
                  "dmesg, reboot" if hung else "", driver=facts.driver_version, gpus=facts.gpus)
    if facts.pci_nvidia_gpus:
        pci = ", ".join(facts.pci_nvidia_gpus)
        return _f(code, Status.FAIL, f"NVIDIA GPU on the PCI bus ({pci}) but no driver answers "
                  f"({probes})",
                  "install the NVIDIA driver (e.g. sudo ubuntu-drivers install) and reboot; in "
                  "a container, run it with --gpus all", probes=facts.driver_probes)
    hung = [v for v in facts.driver_probes.values() if "timed out" in v]
    if hung:
        return _f(code, Status.WARN, f"no NVIDIA driver answered ({probes})",
                  "a hanging nvidia-smi often means a wedged driver: check dmesg, reboot",
                  probes=facts.driver_probes)
    return _f(code, Status.SKIP, f"no NVIDIA GPU found ({probes or 'not probed'}): GPU checks "
              "are skipped", probes=facts.driver_probes)


def check_cpu_only_build(facts: Facts) -> Finding:
    code = "doctor.cpu_only_build"
    if facts.is_cuda_build is None:
        return _f(code, Status.SKIP, "no TensorFlow installed: build type unknown")
    if facts.is_cuda_build:
        return _f(code, Status.PASS, f"{facts.tf_package or 'TensorFlow'} is a CUDA build")
    if not facts.has_nvidia_gpu and (hung := _driver_hung(facts)):
        return _f(code, Status.SKIP, f"{facts.tf_package or 'TensorFlow'} is CPU-only; "
                  f"whether this machine has an NVIDIA GPU is unknown ({hung})")
    if not facts.has_nvidia_gpu:
        return _f(code, Status.PASS, f"{facts.tf_package or 'TensorFlow'} is CPU-only, and "
                  "this machine has no NVIDIA GPU: the right build")
    if facts.os == "linux":
        version = facts.tensorflow_version or ""
        fix = (f"pip uninstall -y {' '.join(facts.tf_packages) or 'tensorflow-cpu'} && "
               f"pip install 'tensorflow[and-cuda]=={version}'" if V.try_parse(version) and
               V.at_least(version, FIRST_AND_CUDA) else
               "install the `tensorflow` package (GPU build) instead of the CPU-only one")
    elif facts.os == "windows":
        fix = "use WSL2 and pip install 'tensorflow[and-cuda]' there"
    else:
        fix = "install a CUDA build of TensorFlow"
    what = facts.tf_package if facts.cpu_only_package else "this TensorFlow build"
    return _f(code, Status.FAIL, f"{what} is CPU-only (no CUDA) but this machine has "
              f"{_gpu_names(facts)}: TensorFlow will never use it", fix,
              package=facts.tf_package)


def _skip_unless_gpu_build(facts: Facts, code: str) -> Finding | None:
    if not facts.has_nvidia_gpu:
        return _f(code, Status.SKIP, "no NVIDIA GPU: not checked")
    if facts.is_cuda_build is False:
        return _f(code, Status.SKIP, "TensorFlow build has no CUDA: not checked")
    if facts.is_cuda_build is None:
        return _f(code, Status.SKIP, "no TensorFlow installed: not checked")
    return None


def check_driver(facts: Facts) -> Finding:
    code = "doctor.driver"
    skip = _skip_unless_gpu_build(facts, code)
    if skip:
        return skip
    cuda, _, source = build_cuda(facts)
    if not facts.driver_version:
        return _f(code, Status.SKIP, "no driver version known: not checked")
    if not cuda:
        return _f(code, Status.WARN, f"CUDA version of TensorFlow {facts.tensorflow_version} "
                  "unknown: driver not checked", "run the doctor with TensorFlow importable")
    req = K.min_driver(cuda, knowledge_os(facts))
    verdict = req.verdict(facts.driver_version)
    data: dict[str, Any] = {
        "driver": facts.driver_version, "build_cuda": cuda, "cuda_source": source,
            "toolkit_min": req.toolkit_min, "compat_min": req.compat_min, "verdict": verdict}
    ceiling = f" (driver supports CUDA ≤ {facts.driver_cuda})" if facts.driver_cuda else ""
    if verdict == "full":
        return _f(code, Status.PASS, f"driver {facts.driver_version}{ceiling} is new enough for "
                  f"CUDA {cuda} (needs ≥ {req.toolkit_min})", **data)
    if verdict == "compat":
        return _f(code, Status.WARN,
                  f"driver {facts.driver_version}{ceiling} is older than CUDA {cuda}'s minimum "
                  f"{req.toolkit_min}: only CUDA minor-version compatibility (≥ "
                  f"{req.compat_min}) carries it, and PTX JIT (GPUs newer than the build's "
                  f"native code) needs the full minimum",
                  f"update the NVIDIA driver to ≥ {req.toolkit_min}", **data)
    if verdict == "insufficient":
        return _f(code, Status.FAIL, f"driver {facts.driver_version}{ceiling} is too old for "
                  f"CUDA {cuda} (needs ≥ {req.toolkit_min or req.compat_min})",
                  f"update the NVIDIA driver to ≥ {req.toolkit_min or req.compat_min}, or use "
                  f"a TensorFlow built with an older CUDA (tfperf doctor --plan latest "
                  f"--driver {facts.driver_version})", **data)
    return _f(code, Status.WARN, f"no driver data for CUDA {cuda}: driver not checked", **data)


def check_cuda_versions(facts: Facts) -> Finding:
    """nvidia-smi's "CUDA Version" and nvcc's version explained, beside the build's CUDA."""
    code = "doctor.cuda_versions"
    cuda, cudnn, _ = build_cuda(facts)
    parts = []
    if facts.driver_cuda:
        parts.append(f"the driver supports CUDA ≤ {facts.driver_cuda} (nvidia-smi's \"CUDA "
                     "Version\" is this ceiling, not an installed toolkit)")
    if facts.nvcc_version:
        parts.append(f"nvcc {facts.nvcc_version} is a compiler toolkit TensorFlow does not use")
    if cuda:
        parts.append(f"TensorFlow {facts.tensorflow_version} was built with CUDA {cuda}"
                     + (f" and cuDNN {cudnn}" if cudnn else "")
                     + " and loads those runtime libraries")
    if not parts:
        return _f(code, Status.SKIP, "no CUDA anywhere on this machine: nothing to compare")
    status = Status.PASS
    fix = ""
    if facts.driver_cuda and cuda and V.try_parse(facts.driver_cuda) and \
            V.compare(V.major_minor(facts.driver_cuda), V.major_minor(cuda)) < 0:
        status = Status.WARN
        fix = f"a driver whose ceiling is ≥ CUDA {V.fmt(V.major_minor(cuda))} runs this build " \
              "fully (see doctor.driver)"
    if facts.nvcc_version and cuda and V.major(facts.nvcc_version) != V.major(cuda):
        parts.append(f"a toolkit ({facts.nvcc_version}) ≠ build CUDA ({cuda}) is not a "
                     "problem by itself")
    return _f(code, status, "; ".join(parts), fix, driver_cuda=facts.driver_cuda,
              nvcc=facts.nvcc_version, build_cuda=cuda, build_cudnn=cudnn)


def _gpu_cc(gpu: dict[str, Any]) -> tuple[str | None, str]:
    if gpu.get("compute_capability"):
        return str(gpu["compute_capability"]), "driver"
    info = K.compute_capability(str(gpu.get("name", "")))
    return (info.compute_capability, "catalogue") if info else (None, "")


def check_gpu_arch(facts: Facts) -> Finding:
    code = "doctor.gpu_arch"
    skip = _skip_unless_gpu_build(facts, code)
    if skip:
        return skip
    if not facts.gpus:
        return _f(code, Status.SKIP, "GPU model unknown (driver gave no list): not checked")
    version = facts.tensorflow_version or ""
    wheel = K.wheel_build_info(version, knowledge_os(facts)) if version else None
    info = facts.tf_build_info
    if info.get("cuda_compute_capabilities"):  # the build's own word beats the table
        archs = info["cuda_compute_capabilities"]
        archs = archs.split() if isinstance(archs, str) else list(archs)
        wheel = K.WheelBuildInfo(os=knowledge_os(facts), tf_version=version,
                                 package=facts.tf_package or "", cuda=info.get("cuda_version"),
                                 cudnn=info.get("cudnn_version"), archs=tuple(archs),
                                 is_tensorrt_build=bool(info.get("is_tensorrt_build")),
                                 source="tf.sysconfig.get_build_info()")
    if wheel is None:
        return _f(code, Status.WARN, f"compiled GPU architectures of TensorFlow {version} "
                  "unknown: compatibility not checked", "run the doctor with TensorFlow "
                  "importable so that its build info can be read")
    worst, lines, per_gpu = Status.PASS, [], []
    for gpu in facts.gpus:
        cc, cc_from = _gpu_cc(gpu)
        name = gpu.get("name", "?")
        if cc is None:
            lines.append(f"{name}: compute capability unknown")
            worst = Status.WARN if worst is Status.PASS else worst
            continue
        support, entry = K.arch_match(cc, wheel)
        per_gpu.append({"gpu": name, "compute_capability": cc, "cc_from": cc_from,
                        "support": support, "entry": entry})
        if support == "native":
            lines.append(f"{name} (cc {cc}) has native code ({entry})")
        elif support == "ptx":
            lines.append(f"{name} (cc {cc}) has no native code in TensorFlow {version} "
                         f"(built for {' '.join(wheel.archs)}): kernels are JIT-compiled from "
                         f"PTX {entry} at first use (minutes; cached in ~/.nv/ComputeCache)")
            worst = Status.WARN if worst is not Status.FAIL else worst
        else:
            lines.append(f"{name} (cc {cc}) is not supported by TensorFlow {version} (built "
                         f"for {' '.join(wheel.archs)}; no PTX it can JIT)")
            worst = Status.FAIL
    fix = ""
    if worst is Status.WARN:
        fix = ("use a TensorFlow release with native code for this GPU, and a driver ≥ the "
               "build CUDA's full minimum (PTX JIT needs it); raise CUDA_CACHE_MAXSIZE so the "
               "JIT cache holds every kernel")
    elif worst is Status.FAIL:
        fix = "use a newer TensorFlow release that compiles for this GPU, or build from source " \
              "with TF_CUDA_COMPUTE_CAPABILITIES set to it"
    return _f(code, worst, "; ".join(lines), fix, gpus=per_gpu, archs=list(wheel.archs),
              archs_source=wheel.source)


# ---------------------------------------------------------------------------------------------
# CUDA libraries


def _where(found: list[dict[str, Any]]) -> str:
    return ", ".join(f"{f['path']} ({f['origin']})" for f in found)


def check_libraries(facts: Facts) -> Finding:
    code = "doctor.libraries"
    skip = _skip_unless_gpu_build(facts, code)
    if skip:
        return skip
    if not facts.needed_libraries:
        reason = facts.libraries_probe or "library list unknown for this TensorFlow"
        return _f(code, Status.SKIP, f"CUDA libraries not checked ({reason})")
    cuda, cudnn, _ = build_cuda(facts)
    missing, broken, ok = [], [], []
    for soname, info in facts.needed_libraries.items():
        found = info.get("found", [])
        loads = info.get("dlopen") == "ok" or any(f.get("dlopen") == "ok" for f in found)
        if loads:
            origins = {f["origin"] for f in found if f.get("dlopen") in ("ok", None)}
            ok.append(f"{soname} ({', '.join(sorted(origins)) or 'loader path'})")
        elif found:
            errs = {f.get("dlopen") for f in found if f.get("dlopen") not in (None, "ok")}
            broken.append(f"{soname} found at {_where(found)} but does not load: "
                          f"{'; '.join(sorted(e for e in errs if e)) or info.get('dlopen')}")
        else:
            missing.append(soname)
    data: dict[str, Any] = {
        "needed": list(facts.needed_libraries), "missing": missing, "broken": broken,
            "build_cuda": cuda, "build_cudnn": cudnn}
    if not missing and not broken:
        return _f(code, Status.PASS, f"all {len(ok)} CUDA libraries this build loads are "
                  "reachable: " + ", ".join(ok), **data)
    what = f"TensorFlow {facts.tensorflow_version} (built with CUDA {cuda or '?'}" + (
        f" and cuDNN {cudnn})" if cudnn else ")")
    parts = []
    if missing:
        parts.append(f"{', '.join(missing)} not found anywhere (searched pip nvidia/*/lib, "
                     "ldconfig, LD_LIBRARY_PATH)")
    parts += broken
    others = _other_majors(facts, missing)
    if others:
        parts.append(f"other majors present do not help: {others}")
    if facts.nvcc_version and cuda and V.major(facts.nvcc_version) != V.major(cuda):
        parts.append(f"the CUDA {facts.nvcc_version} toolkit does not provide them")
    fix = _and_cuda_fix(facts) or (
        f"install the CUDA {cuda} runtime and cuDNN {cudnn} libraries (e.g. conda install "
        f"cudatoolkit={cuda} cudnn={cudnn}, or NVIDIA's archive installers) and make them "
        "reachable (ldconfig or LD_LIBRARY_PATH)")
    return _f(code, Status.FAIL, f"{what}: " + "; ".join(parts), fix, **data)


def _other_majors(facts: Facts, missing: list[str]) -> str:
    stems = {m.split(".so")[0] for m in missing}
    others = sorted({f["name"] for f in facts.cuda_libraries
                     if f["name"].split(".so")[0] in stems and f["name"] not in missing
                     and f["name"].count(".so.")})
    return ", ".join(others)


def check_pip_wheels(facts: Facts) -> Finding:
    code = "doctor.pip_wheels"
    version = facts.tensorflow_version
    if not version or facts.cpu_only_package:
        if facts.nvidia_wheels:
            return _f(code, Status.WARN, f"nvidia-* wheels installed ({len(facts.nvidia_wheels)}"
                      ") but TensorFlow here is CPU-only: they are unused by it")
        return _f(code, Status.SKIP, "no CUDA build of TensorFlow: pins not checked")
    skip = _skip_unless_gpu_build(facts, code)
    if skip:
        return skip
    pins = K.and_cuda_pins(version)
    if not pins:
        if facts.nvidia_wheels and V.try_parse(version) and \
                not V.at_least(version, FIRST_AND_CUDA):
            return _f(code, Status.WARN, f"nvidia-* wheels installed, but TensorFlow {version} "
                      "predates the [and-cuda] extra and does not look for them",
                      "make their lib folders reachable through LD_LIBRARY_PATH, or install "
                      "the system CUDA/cuDNN of the tested build configuration",
                      wheels=facts.nvidia_wheels)
        return _f(code, Status.SKIP, f"TensorFlow {version} has no [and-cuda] pins")
    wanted = [p for p in pins if p.package.startswith("nvidia-")]
    if not facts.nvidia_wheels:
        status = Status.WARN if facts.os == "linux" and facts.has_nvidia_gpu else Status.SKIP
        return _f(code, status, f"no nvidia-* wheels installed: TensorFlow {version} relies on "
                  "system CUDA libraries (see doctor.libraries)",
                  _and_cuda_fix(facts) if status is Status.WARN else "")
    bad = []
    for pin in wanted:
        have = facts.nvidia_wheels.get(pin.package)
        if have is None:
            bad.append(f"{pin.package} missing (wants {pin.specifier})")
        elif satisfies(have, pin.specifier) is False:
            bad.append(f"{pin.package} {have} (wants {pin.specifier})")
    wanted_names = {p.package for p in wanted}
    suffix = {p.rsplit("-", 1)[-1] for p in wanted_names}
    stray = sorted(n for n in facts.nvidia_wheels
                   if n.rsplit("-", 1)[-1] not in suffix and n.rsplit("-", 1)[-1].startswith("cu"))
    data: dict[str, Any] = {
        "pins_from": wanted[0].tf_version if wanted else None, "mismatches": bad,
            "other_cuda_wheels": stray}
    if not bad and not stray:
        return _f(code, Status.PASS, f"{len(wanted)} nvidia-* wheels match the [and-cuda] pins "
                  f"of TensorFlow {version}", **data)
    msg = "; ".join(bad + ([f"wheels of another CUDA major: {', '.join(stray)}"] if stray else []))
    return _f(code, Status.WARN, f"nvidia-* wheels differ from TensorFlow {version}'s "
              f"[and-cuda] pins: {msg}", f"pip install 'tensorflow[and-cuda]=={version}'",
              **data)


def check_cudnn_copies(facts: Facts) -> Finding:
    code = "doctor.cudnn_copies"
    skip = _skip_unless_gpu_build(facts, code)
    if skip:
        return skip
    copies = [f for f in facts.cuda_libraries
              if f["name"].startswith("libcudnn.so.") and f["name"].count(".") == 2]
    if not copies:
        return _f(code, Status.SKIP, "no cuDNN found anywhere (see doctor.libraries)")
    by_version: dict[str, list[dict[str, Any]]] = {}
    for c in copies:
        by_version.setdefault(c.get("version") or c["name"], []).append(c)
    origins = {c["origin"] for c in copies}
    data: dict[str, Any] = {"copies": copies}
    if len(by_version) <= 1:
        (version, group), = by_version.items()
        return _f(code, Status.PASS, f"one cuDNN ({version}) reachable: {_where(group)}", **data)
    listing = "; ".join(f"{v}: {_where(g)}" for v, g in by_version.items())
    loaded = [p for p in facts.tf_loaded_libraries if "libcudnn.so" in p]
    if loaded:
        listing += f"; TensorFlow loaded {loaded[0]}"
    return _f(code, Status.WARN, f"{len(by_version)} different cuDNNs reachable ({listing}): "
              "the loader may pick one TensorFlow was not built for "
              f"({', '.join(sorted(origins))})",
              "keep one: remove the stale copy from LD_LIBRARY_PATH/ldconfig, or give each "
              "framework its own venv", **data)


# ---------------------------------------------------------------------------------------------
# TensorFlow at run time


def first_sentence(text: str) -> str:
    """Up to the first full stop that ends a sentence (not the one in "e.g.")."""
    m = re.search(r"(?<!e\.g)(?<!i\.e)(?<!\bvs)\.(\s|$)", text)
    return text[: m.start()] if m else text


def _log_line(line: str, limit: int = 110) -> str:
    line = line.strip().split("; dlerror")[0]
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _explain_fix(match: Any, facts: Facts) -> str:
    return match.fix.replace("<tf_version>", facts.tensorflow_version or "<tf_version>")


def _log_matches(facts: Facts) -> list[Any]:
    from tfperf.doctor.explain import explain_text

    # a GPU on this machine turns "no GPU will be used" notices into failures
    return explain_text(facts.tf_import_log or "", gpu_expected=facts.has_nvidia_gpu or None)


def check_tf_sees_gpu(facts: Facts) -> Finding:
    code = "doctor.tf_sees_gpu"
    skip = _skip_unless_gpu_build(facts, code)
    if skip:
        return skip
    if not _tf_ran(facts):
        return _f(code, Status.SKIP, "TensorFlow did not run: devices unknown")
    if facts.tf_gpus:
        names = ", ".join(str(g.get("device_name") or g.get("name")) for g in facts.tf_gpus)
        return _f(code, Status.PASS, f"TensorFlow sees {len(facts.tf_gpus)} GPU(s): {names}",
                  gpus=facts.tf_gpus)
    visible = facts.env.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and visible.strip() in ("", "-1"):
        return _f(code, Status.FAIL, f"TensorFlow sees no GPU: CUDA_VISIBLE_DEVICES={visible!r} "
                  "hides every GPU", "unset CUDA_VISIBLE_DEVICES")
    serious = [m for m in _log_matches(facts) if not m.benign]
    if serious:
        first = serious[0]
        lines = "; ".join(_log_line(m.line) for m in serious[:3])
        libraries = check_libraries(facts)  # its fix knows this build's CUDA; the log's is generic
        fix = libraries.hint if libraries.failed else _explain_fix(first, facts)
        return _f(code, Status.FAIL, f"TensorFlow sees no GPU although {_gpu_names(facts)} is "
                  f"present; its import log says: {lines} ({first_sentence(first.cause)})", fix,
                  matches=[{"id": m.id, "line": m.line} for m in serious])
    return _f(code, Status.FAIL, f"TensorFlow sees no GPU although {_gpu_names(facts)} is "
              "present, and its import log names no known cause",
              "run `TF_CPP_MIN_LOG_LEVEL=0 python -c \"import tensorflow as tf; "
              "print(tf.config.list_physical_devices())\"` and `tfperf explain -` on the output")


def check_import_log(facts: Facts) -> Finding:
    code = "doctor.import_log"
    if not _tf_ran(facts) and not facts.tf_import_log.strip():
        return _f(code, Status.SKIP, "TensorFlow did not run: no import log")
    matches = _log_matches(facts)
    if not _tf_ran(facts):  # a crashed or hung import: its log is all there is to go on
        first = next((m for m in matches if not m.benign), None)
        if first is None:
            return _f(code, Status.WARN, "TensorFlow's import did not finish "
                      f"({facts.tf_probe}) and its import log names no known cause",
                      "read the log with `tfperf doctor --markdown` or `tfperf explain -`",
                      matches=[{"id": m.id, "line": m.line} for m in matches])
        return _f(code, Status.FAIL, f"TensorFlow's import did not finish ({facts.tf_probe}); "
                  f"its import log says: {_log_line(first.line)} "
                  f"({first_sentence(first.cause)})", _explain_fix(first, facts),
                  matches=[{"id": m.id, "line": m.line} for m in matches])
    serious = [m for m in matches if not m.benign]
    benign = [m for m in matches if m.benign]
    data: dict[str, Any] = {
        "matches": [{"id": m.id, "benign": m.benign, "line": m.line} for m in matches]}
    if not serious:
        ids = ", ".join(sorted({m.id for m in benign}))
        note = f" ({len(benign)} known harmless line(s): {ids})" if benign else ""
        return _f(code, Status.PASS, f"TensorFlow's import log shows no known problem{note}",
                  **data)
    if not (facts.has_nvidia_gpu and facts.is_cuda_build):
        # Without a GPU (or a CUDA build) TF's complaints about CUDA are expected noise.
        gpu_noise = [m for m in serious if not m.id.startswith("cpu-")]
        if len(gpu_noise) == len(serious):
            return _f(code, Status.PASS, f"TensorFlow's import log: {len(serious)} CUDA-related "
                      "line(s), harmless without a GPU to use", **data)
    first = serious[0]
    return _f(code, Status.WARN, f"TensorFlow's import log has {len(serious)} known problem "
              f"line(s); first: {_log_line(first.line)} ({first_sentence(first.cause)})",
              _explain_fix(first, facts), **data)


# ---------------------------------------------------------------------------------------------

CHECKS: tuple[Check, ...] = (
    check_tensorflow, check_python, check_platform,
    check_gpu, check_cpu_only_build, check_driver, check_cuda_versions, check_gpu_arch,
    check_libraries, check_pip_wheels, check_cudnn_copies,
    check_tf_sees_gpu, check_import_log,
)


# The probes each check's verdict stands on: when one of them failed, the check says
# "could not look" rather than judging facts that were never gathered.
READS: dict[Check, tuple[str, ...]] = {
    check_tensorflow: ("packages", "tf_runtime"), check_python: ("system", "packages"),
    check_platform: ("system", "packages"), check_gpu: ("driver",),
    check_cpu_only_build: ("packages", "driver"), check_driver: ("driver",),
    check_cuda_versions: ("driver", "tf_runtime"), check_gpu_arch: ("driver", "tf_runtime"),
    check_libraries: ("libraries",), check_pip_wheels: ("packages",),
    check_cudnn_copies: ("libraries",), check_tf_sees_gpu: ("driver", "tf_runtime"),
    check_import_log: ("tf_runtime",),
}


def run_checks(facts: Facts, checks: tuple[Check, ...] = CHECKS) -> list[Finding]:
    """Every check over ``facts``; a check that raises becomes a failing verdict, not a crash,
    and a check whose probes failed is skipped with what could not be looked at."""
    out = []
    for check in checks:
        code = "doctor." + check.__name__.removeprefix("check_")
        failed = [f"{p}: {facts.probe_errors[p]}" for p in READS.get(check, ())
                  if p in facts.probe_errors]
        if failed:
            out.append(_f(code, Status.SKIP, "could not look: " + "; ".join(failed),
                          "a tfperf probe failed: please report this bug with `tfperf doctor "
                          "--markdown`"))
            continue
        try:
            out.append(check(facts))
        except Exception as exc:  # a doctor bug must not hide the other verdicts
            out.append(_f(code, Status.FAIL, f"internal error in this check: "
                          f"{type(exc).__name__}: {exc}", "please report this tfperf bug"))
    return out


def judge(facts: Facts, compute: bool = True) -> list[Finding]:
    """All verdicts for a machine: the static checks, then the live ones."""
    from tfperf.doctor.collective_checks import device_findings, worker_findings
    from tfperf.doctor.live import live_findings

    gpus_expected = bool(facts.has_nvidia_gpu and facts.is_cuda_build)
    out = run_checks(facts) + live_findings(facts.live, compute=compute,
                                            gpus_expected=gpus_expected,
                                            tf_ran=_tf_ran(facts))
    if facts.devices:  # `--devices` ran
        out += device_findings(facts.devices, facts.gpus)
    if facts.workers:  # `--workers` ran
        out += worker_findings(facts.workers)
    return out
