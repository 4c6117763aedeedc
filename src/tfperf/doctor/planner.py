"""The planner behind ``tfperf doctor --plan``: what a TensorFlow version needs, offline.

No TensorFlow import, no probe: only the packaged knowledge. Forward (``--plan 2.5.0``): the
Python range, CUDA and cuDNN, driver minimums, the libraries the build loads, how to install
it, and verdicts for a given driver / GPU / Python. Reverse (``--plan latest --driver 470.57``):
the newest TensorFlow whose build that driver (and GPU) can run, and why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tfperf.core.findings import Finding, Status
from tfperf.doctor import knowledge as K
from tfperf.doctor import versions as V
from tfperf.doctor.milestones import LAST_NATIVE_WINDOWS_GPU, PLAN_OSES


class PlanError(ValueError):
    """Bad input to the planner (unknown version, malformed driver...): a usage error."""


@dataclass
class Plan:
    requested: str
    tensorflow: str | None
    os: str
    package: str | None = None
    python: dict[str, Any] = field(default_factory=dict)
    cuda: str | None = None
    cudnn: str | None = None
    cuda_build: str | None = None  # the wheel's own, more precise CUDA (12.5.1) when known
    min_driver: dict[str, str | None] = field(default_factory=dict)
    min_driver_compat: dict[str, str | None] = field(default_factory=dict)
    needed_libraries: list[str] = field(default_factory=list)
    install: list[str] = field(default_factory=list)
    wheel: dict[str, Any] | None = None
    gpu: dict[str, Any] | None = None
    driver: dict[str, Any] | None = None
    reverse: dict[str, Any] | None = None
    checks: list[Finding] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return any(c.failed for c in self.checks)

    def to_dict(self) -> dict[str, Any]:
        return {
            "tensorflow": self.tensorflow, "requested": self.requested, "os": self.os,
            "package": self.package, "python": self.python, "cuda": self.cuda,
            "cudnn": self.cudnn, "cuda_build": self.cuda_build, "min_driver": self.min_driver,
            "min_driver_compat": self.min_driver_compat,
            "needed_libraries": self.needed_libraries, "install": self.install,
            "wheel": self.wheel, "gpu": self.gpu, "driver": self.driver,
            "reverse": self.reverse,
            "checks": [{"id": c.code, "status": str(c.status), "message": c.message,
                        "fix": c.hint, "data": c.data} for c in self.checks],
            "facts": self.facts, "sources": self.sources,
            "exit_status": 1 if self.failed else 0,
        }


def _check(code: str, status: Status, message: str, fix: str = "", **data: Any) -> Finding:
    return Finding(code=code, message=message, status=status, hint=fix, data=data)


# ---------------------------------------------------------------------------------------------
# input validation


def _validate(tf_version: str, driver: str | None, gpu: str | None, cc: str | None, os: str,
              python: str | None) -> None:
    if os not in PLAN_OSES:
        raise PlanError(f"unknown --os {os!r}; expected one of {', '.join(PLAN_OSES)}")
    if tf_version != "latest" and V.try_parse(tf_version) is None:
        raise PlanError(f"not a TensorFlow version: {tf_version!r} (e.g. 2.15.0 or 'latest')")
    if driver is not None and V.try_parse(driver) is None:
        raise PlanError(f"not a driver version: {driver!r} (e.g. 550.144.03)")
    if gpu and cc:
        raise PlanError("give --gpu or --cc, not both")
    if cc is not None:
        try:
            K.parse_cc(cc)
        except ValueError as exc:
            raise PlanError(str(exc)) from None
    if python is not None and (V.try_parse(python) is None or len(V.parse(python)) < 2):
        raise PlanError(f"not a Python version: {python!r} (e.g. 3.11)")


def _resolve_gpu(gpu: str | None, cc: str | None) -> tuple[str | None, dict[str, Any] | None]:
    """(cc or None, the gpu dict for the plan)."""
    if cc is not None:
        major, minor, _ = K.parse_cc(cc)
        return f"{major}.{minor}", {"name": None, "compute_capability": f"{major}.{minor}",
                                    "source": "--cc"}
    if gpu:
        info = K.compute_capability(gpu)
        if info is None:
            return None, {"name": gpu, "compute_capability": None, "source": None}
        return info.compute_capability, {"name": gpu, "matched": info.name,
                                         "compute_capability": info.compute_capability,
                                         "source": info.source}
    return None, None


# ---------------------------------------------------------------------------------------------
# the pieces of a forward plan


def _precise_cuda(cfg: K.BuildConfig, wheel: K.WheelBuildInfo | None) -> str:
    """The wheel's CUDA when it refines the tested one (12.5 → 12.5.1), else the tested one."""
    if cfg.cuda and wheel and wheel.cuda and not wheel.derived and \
            V.major_minor(wheel.cuda) == V.major_minor(cfg.cuda):
        return wheel.cuda
    return cfg.cuda or ""


def _requirements(cuda: str) -> dict[str, K.DriverRequirement]:
    return {os: K.min_driver(cuda, os) for os in ("linux", "windows", "wsl")}


def _python_check(cfg: K.BuildConfig, python: str | None, os: str) -> Finding:
    if python is None:
        return _check("plan.python", Status.INFO,
                      f"TensorFlow {cfg.tf_version} supports Python {cfg.python_text}",
                      python=cfg.python_list)
    if cfg.supports_python(python):
        return _check("plan.python", Status.PASS,
                      f"Python {python} is supported by TensorFlow {cfg.tf_version} "
                      f"(Python {cfg.python_text})", python=cfg.python_list)
    with_it = [b.tf_version for b in K.build_configs(os, True) if b.supports_python(python)]
    if with_it:
        span = (f"{with_it[-1]}–{with_it[0]}" if len(with_it) > 1 else with_it[0])
        fix = (f"use Python {cfg.python_text} for TensorFlow {cfg.tf_version}, or a TensorFlow "
               f"built for Python {python}: {span}")
    else:
        fix = f"no tested TensorFlow GPU build supports Python {python}; use {cfg.python_text}"
    return _check("plan.python", Status.FAIL,
                  f"Python {python} is not supported by TensorFlow {cfg.tf_version} "
                  f"(Python {cfg.python_text})", fix, supported_by=with_it)


def _driver_check(cfg: K.BuildConfig, cuda: str, driver: str | None, os: str,
                  newest_ok: str | None) -> Finding:
    req = K.min_driver(cuda, os)
    where = {"linux": "Linux", "windows": "Windows", "wsl": "the Windows host of WSL2"}[os]
    data: dict[str, Any] = {
        "cuda": cuda, "toolkit_min": req.toolkit_min, "compat_min": req.compat_min}
    if req.toolkit_min is None:
        return _check("plan.driver", Status.WARN if driver else Status.INFO,
                      f"no driver data for CUDA {cuda} on {where}"
                      + (f"; cannot judge driver {driver}" if driver else ""), **data)
    if driver is None:
        need = f"needs an NVIDIA driver ≥ {req.toolkit_min} on {where} for CUDA {cuda}"
        if req.compat_min:
            need += (f" (≥ {req.compat_min} runs it through CUDA {V.major(cuda)}.x "
                     "minor-version compatibility, without PTX JIT)")
        return _check("plan.driver", Status.INFO, f"TensorFlow {cfg.tf_version} {need}",
                      **data)
    verdict = req.verdict(driver)
    data["verdict"] = verdict
    if verdict == "full":
        return _check("plan.driver", Status.PASS,
                      f"driver {driver} is new enough: CUDA {cuda} needs ≥ {req.toolkit_min} on "
                      f"{where}", **data)
    if verdict == "compat":
        return _check(
            "plan.driver", Status.WARN,
            f"driver {driver} is older than {req.toolkit_min} (CUDA {cuda}'s minimum) but "
            f"≥ {req.compat_min}: only CUDA {V.major(cuda)}.x minor-version compatibility "
            f"carries it; PTX JIT (a GPU without native code in this build) needs the full "
            f"{req.toolkit_min}",
            f"upgrade the driver to ≥ {req.toolkit_min} for full support", **data)
    floor = f" and below the {V.major(cuda)}.x compatibility floor {req.compat_min}" \
        if req.compat_min else ""
    fix = f"upgrade the driver to ≥ {req.toolkit_min}"
    if newest_ok:
        fix += f", or use TensorFlow {newest_ok} (the newest whose build this driver runs)"
    return _check("plan.driver", Status.FAIL,
                  f"driver {driver} is too old for TensorFlow {cfg.tf_version}: CUDA {cuda} "
                  f"needs ≥ {req.toolkit_min}{floor}", fix, **data)


def _smi_check(cfg: K.BuildConfig, driver: str, os: str) -> Finding:
    ceiling = K.newest_cuda_for_driver(driver, os)
    if ceiling is None:
        return _check("plan.nvidia_smi", Status.WARN,
                      f"driver {driver} predates every CUDA release in the tables", ceiling=None)
    return _check(
        "plan.nvidia_smi", Status.INFO,
        f"nvidia-smi on driver {driver} shows \"CUDA Version: {ceiling}\": the newest CUDA the "
        f"driver can run, not an installed toolkit; TensorFlow {cfg.tf_version} needs the "
        f"CUDA {cfg.cuda} runtime libraries whatever that line says", ceiling=ceiling)


def _library_check(cfg: K.BuildConfig, libs: list[str], os: str, driver: str | None,
                   pins: list[K.Pin]) -> Finding:
    cuda_major = V.major(cfg.cuda or "0")
    cudnn_major = V.major(cfg.cudnn or "0")
    others = sorted({m for m in (11, 12, 13) if m != cuda_major})
    not_help = " or ".join(f"CUDA {m}.x" for m in others)
    message = (f"TensorFlow {cfg.tf_version} loads {', '.join(libs)}: CUDA {cuda_major}.x and "
               f"cuDNN {cudnn_major} libraries must be installed and findable; a "
               f"{not_help} toolkit does not provide them")
    ceiling = K.newest_cuda_for_driver(driver, os) if driver else None
    trap = ceiling is not None and V.major(ceiling) != cuda_major
    if trap and ceiling is not None:
        message += (f" (the driver's CUDA {ceiling} is its ceiling; installing CUDA "
                    f"{V.major(ceiling)}.x to match it does not help)")
    if pins and os != "windows":
        fix = ("pip install 'tensorflow[and-cuda]' (the version planned) brings them as "
               "pinned nvidia-* wheels")
    elif os == "windows":
        fix = (f"install CUDA {cfg.cuda} and cuDNN {cfg.cudnn} for Windows and put their bin "
               "folders on PATH")
    else:
        fix = (f"install CUDA {cfg.cuda} and cuDNN {cfg.cudnn} (system packages or conda: "
               f"cudatoolkit={cfg.cuda} cudnn={cfg.cudnn}) and make them findable "
               "(ldconfig or LD_LIBRARY_PATH)")
    return _check("plan.libraries", Status.WARN if trap else Status.INFO, message, fix,
                  libraries=libs)


def _install_version(requested: str, cfg: K.BuildConfig) -> str:
    """The version to pip-install: the one asked for when complete (2.15.1), else the table's;
    a ``.post`` re-release with fixed ``[and-cuda]`` pins replaces its base (2.15.0.post1)."""
    v = requested if len(V.parse(requested)) >= 3 and \
        V.major_minor(requested) == V.major_minor(cfg.tf_version) else cfg.tf_version
    posts = [p for p in K.pin_versions() if ".post" in p and V.parse(p) == V.parse(v)]
    return max(posts) if posts and v == V.fmt(V.parse(v)) else v


def _install_lines(cfg: K.BuildConfig, os: str, pins: list[K.Pin], requested: str) -> list[str]:
    v = _install_version(requested, cfg)
    if pins and os != "windows":
        return [f"pip install 'tensorflow[and-cuda]=={v}'  "
                f"# CUDA {cfg.cuda} / cuDNN {cfg.cudnn} come as pinned nvidia-* wheels"]
    # the GPU build was the separate tensorflow-gpu package before TF 2.1
    pkg = "tensorflow-gpu" if cfg.version_tuple < (2, 1) else "tensorflow"
    first = f"pip install '{pkg}=={v}'"
    if os == "windows":
        return [first, f"install CUDA {cfg.cuda} and cuDNN {cfg.cudnn} for Windows; add their "
                       "bin folders to PATH"]
    return [first, f"install CUDA {cfg.cuda} runtime libraries and cuDNN {cfg.cudnn} (e.g. conda "
                   f"install -c conda-forge cudatoolkit={cfg.cuda} cudnn={cfg.cudnn}) and make "
                   "them findable (LD_LIBRARY_PATH or ldconfig)"]


def _first_native(cc: str, os: str) -> str | None:
    """The oldest TensorFlow with native code for ``cc`` (for a fix line)."""
    for w in K.wheel_build_infos(os):
        if K.arch_support(cc, w) == "native":
            return w.tf_version
    return None


def _gpu_check(cfg: K.BuildConfig, os: str, cc: str | None, gpu: dict[str, Any],
               wheel: K.WheelBuildInfo | None, driver_verdict: str | None) -> Finding:
    label = gpu.get("name") or "the GPU"
    if cc is None:
        return _check("plan.gpu_arch", Status.WARN,
                      f"unknown GPU {gpu.get('name')!r}: its compute capability is not in the "
                      "tables", "pass --cc X.Y (nvidia-smi --query-gpu=compute_cap --format=csv)")
    assumed = ""
    if wheel is None:
        # no measured list for this version: say what the nearest build of the same CUDA
        # major ships, as an assumption, never as a fact
        same = [w for w in K.wheel_build_infos(os)
                if cfg.cuda and w.cuda and V.major(w.cuda) == V.major(cfg.cuda)]
        if not same:
            return _check("plan.gpu_arch", Status.WARN,
                          f"no compiled-architecture list is known for TensorFlow "
                          f"{cfg.tf_version}; cannot judge {label} (cc {cc})",
                          "check tf.sysconfig.get_build_info()['cuda_compute_capabilities']")
        wheel = min(same, key=lambda w: abs(V.parse(w.tf_version)[1] - cfg.version_tuple[1]))
        assumed = (f" (assumed: TensorFlow {cfg.tf_version}'s list is not known; this uses the "
                   f"nearest CUDA {V.major(cfg.cuda or '0')}.x build, {wheel.tf_version})")
    support, entry = K.arch_match(cc, wheel)
    archs = " ".join(wheel.archs)
    data: dict[str, Any] = {"compute_capability": cc, "support": support, "entry": entry,
            "archs": list(wheel.archs), "assumed": bool(assumed)}
    if support == "native":
        return _check("plan.gpu_arch", Status.PASS if not assumed else Status.WARN,
                      f"{label} (cc {cc}) runs natively: the wheel has {entry} code "
                      f"[{archs}]{assumed}", **data)
    later = _first_native(cc, os)
    if support == "ptx":
        msg = (f"{label} (cc {cc}) has no native code in TensorFlow {cfg.tf_version} "
               f"[{archs}]: the driver JIT-compiles the {entry} PTX on first use (minutes, "
               f"cached in ~/.nv/ComputeCache){assumed}")
        major = K.parse_cc(cc)[0]
        if major >= 10 and cfg.cuda and V.parse(cfg.cuda) < (12, 8):
            msg += (f"; CUDA {cfg.cuda}'s ptxas predates cc {major}.x (CUDA 12.8 added "
                    "Blackwell), so XLA (jit_compile) may fail to compile for it")
        fix = (f"TensorFlow {later} or newer has native code for cc {cc}" if later else
               f"no released TensorFlow in the tables has native code for cc {cc}; use the "
               "PTX path, an NVIDIA NGC container or a source build")
        status = Status.WARN
        if driver_verdict == "compat":
            status = Status.FAIL
            msg += ("; with a driver that only minor-version compatibility carries, PTX JIT "
                    "fails (CUDA_ERROR_UNSUPPORTED_PTX_VERSION)")
            fix = "upgrade the driver to the toolkit minimum; " + fix
        return _check("plan.gpu_arch", status, msg, fix, **data)
    fix = (f"TensorFlow {later} or newer supports cc {cc}" if later else
           "use an older TensorFlow whose list covers this GPU, or build from source")
    oldest = [w for w in K.wheel_build_infos(os) if K.arch_support(cc, w) != "unsupported"]
    if oldest:
        fix = (f"TensorFlow ≤ {oldest[-1].tf_version} still has code for cc {cc}"
               if V.parse(oldest[-1].tf_version) < cfg.version_tuple else fix)
    return _check("plan.gpu_arch", Status.FAIL,
                  f"{label} (cc {cc}) is not supported by TensorFlow {cfg.tf_version} "
                  f"[{archs}]: neither native code nor PTX it can JIT{assumed}", fix, **data)


# ---------------------------------------------------------------------------------------------
# reverse: the newest TensorFlow a driver (and GPU) can run


def _runnable(cfg: K.BuildConfig, driver: str, os: str, cc: str | None) -> tuple[bool, str]:
    """Whether ``cfg``'s build runs on this driver (and GPU), with the verdict word."""
    if not cfg.cuda:
        return False, "unknown"
    wheel = K.wheel_build_info(cfg.tf_version, os)
    verdict = K.min_driver(_precise_cuda(cfg, wheel), os).verdict(driver)
    if verdict in ("insufficient", "unknown"):
        return False, verdict
    if cc is not None and wheel is not None:
        support = K.arch_support(cc, wheel)
        if support == "unsupported" or (support == "ptx" and verdict == "compat"):
            return False, f"gpu-{support}"
    return True, verdict


def newest_runnable(driver: str, os: str = "linux", cc: str | None = None,
                    full_only: bool = False) -> K.BuildConfig | None:
    for cfg in K.build_configs("wsl" if os == "wsl" else os, True):
        ok, verdict = _runnable(cfg, driver, os, cc)
        if ok and (verdict == "full" or not full_only):
            return cfg
    return None


def _reverse(driver: str | None, os: str, cc: str | None) -> tuple[K.BuildConfig, dict]:
    configs = K.build_configs(os, True)
    if driver is None:
        return configs[0], {"question": "latest", "answer": configs[0].tf_version,
                            "why": "no --driver given: the newest tested GPU build"}
    best = newest_runnable(driver, os, cc)
    full = newest_runnable(driver, os, cc, full_only=True)
    ceiling = K.newest_cuda_for_driver(driver, os)
    why = [f"driver {driver} supports CUDA ≤ {ceiling} (what nvidia-smi shows)"
           if ceiling else f"driver {driver} predates every CUDA release in the tables"]
    if best is None:
        return configs[-1], {"question": "latest", "answer": None, "driver_cuda": ceiling,
                             "why": [*why, "no tested TensorFlow GPU build runs on it"]}
    newer = [c for c in configs if c.version_tuple > best.version_tuple]
    if newer:
        first = newer[-1]
        req = K.min_driver(_precise_cuda(first, K.wheel_build_info(first.tf_version, os)), os)
        floor = f" (≥ {req.compat_min} with minor-version compatibility)" \
            if req.compat_min else ""
        blocked = _runnable(first, driver, os, cc)[1]
        if blocked.startswith("gpu-"):
            why.append(f"TensorFlow {first.tf_version} (CUDA {first.cuda}) cannot run this GPU "
                       f"with this driver ({blocked[4:]})")
        else:
            why.append(f"TensorFlow {first.tf_version} and newer need CUDA {first.cuda}: driver "
                       f"≥ {req.toolkit_min}{floor}")
    best_wheel = K.wheel_build_info(best.tf_version, os)
    req = K.min_driver(_precise_cuda(best, best_wheel), os)
    verdict = req.verdict(driver)
    if verdict == "compat":
        why.append(f"TensorFlow {best.tf_version} (CUDA {best.cuda}) runs through CUDA "
                   f"{V.major(best.cuda or '0')}.x minor-version compatibility ({driver} ≥ "
                   f"{req.compat_min}); PTX JIT would need ≥ {req.toolkit_min}")
    else:
        why.append(f"TensorFlow {best.tf_version} (CUDA {best.cuda}) needs ≥ {req.toolkit_min}: "
                   "met")
    if full is not None and full.tf_version != best.tf_version:
        why.append(f"newest with the driver at or above the full toolkit minimum: TensorFlow "
                   f"{full.tf_version} (CUDA {full.cuda})")
    return best, {"question": "latest", "answer": best.tf_version,
                  "full_support": full.tf_version if full else None, "driver_cuda": ceiling,
                  "verdict": verdict, "why": why}


# ---------------------------------------------------------------------------------------------
# the planner


def _unknown_version(tf_version: str, os: str) -> PlanError:
    near = K.nearest_versions(tf_version, os, True)
    return PlanError(f"unknown TensorFlow version {tf_version!r} for a {os} GPU build; "
                     f"nearest known: {', '.join(near)}")


def plan(tf_version: str, driver: str | None = None, gpu: str | None = None,
         cc: str | None = None, os: str = "linux", python: str | None = None) -> Plan:
    """Plan an install of ``tf_version`` (or ``"latest"``). Raises PlanError on bad input."""
    tf_version = tf_version.strip()
    _validate(tf_version, driver, gpu, cc, os, python)
    cc_value, gpu_info = _resolve_gpu(gpu, cc)
    facts = {"tf_version": tf_version, "driver": driver, "gpu": gpu, "cc": cc, "os": os,
             "python": python}
    checks: list[Finding] = []
    eff_os = os
    reverse = None

    if tf_version == "latest":
        cfg, reverse = _reverse(driver, os, cc_value)
        status = Status.FAIL if reverse.get("answer") is None else Status.INFO
        msg = (f"newest TensorFlow this setup can run: {reverse['answer']}" if reverse["answer"]
               else "no tested TensorFlow GPU build runs on this setup")
        checks.append(_check("plan.reverse", status, msg + " — " + "; ".join(
            reverse["why"] if isinstance(reverse["why"], list) else [reverse["why"]]),
            "" if reverse["answer"] else "upgrade the NVIDIA driver", **reverse))
        if os == "windows":
            checks.append(_check("plan.platform", Status.INFO,
                                 f"native Windows GPU builds end at TensorFlow "
                                 f"{LAST_NATIVE_WINDOWS_GPU}; newer ones run on Windows "
                                 "through WSL2",
                                 "plan again with --os wsl for newer TensorFlow"))
    else:
        cfg_or_none = K.build_config(tf_version, os, True)
        if cfg_or_none is None and os == "windows" and \
                V.parse(tf_version)[:2] > V.parse(LAST_NATIVE_WINDOWS_GPU)[:2]:
            cfg_or_none = K.build_config(tf_version, "wsl", True)
            if cfg_or_none is None:
                raise _unknown_version(tf_version, "linux")
            eff_os = "wsl"
            checks.append(_check(
                "plan.platform", Status.FAIL,
                f"TensorFlow {cfg_or_none.tf_version} has no GPU support on native Windows "
                f"(the last native-Windows GPU release is {LAST_NATIVE_WINDOWS_GPU}); the rest of "
                "this plan is for WSL2",
                f"run TensorFlow in WSL2 (pip install 'tensorflow[and-cuda]' there), or use "
                f"TensorFlow {LAST_NATIVE_WINDOWS_GPU} natively"))
        if cfg_or_none is None:
            raise _unknown_version(tf_version, os)
        cfg = cfg_or_none
        checks.append(_check("plan.tensorflow", Status.INFO,
                             f"TensorFlow {cfg.tf_version} ({eff_os} GPU build"
                             + (f", matched from {tf_version}" if V.padded(V.parse(tf_version))
                                != V.padded(cfg.version_tuple) else "")
                             + f"): CUDA {cfg.cuda}, cuDNN {cfg.cudnn}, Python "
                               f"{cfg.python_text}"))

    wheel = K.wheel_build_info(cfg.tf_version, eff_os)
    cuda = _precise_cuda(cfg, wheel) if cfg.cuda else ""
    asked = tf_version if tf_version != "latest" else cfg.tf_version
    pins = K.and_cuda_pins(asked) if eff_os != "windows" else []
    libs = K.needed_libraries(cfg.tf_version, eff_os)
    reqs = _requirements(cuda) if cuda else {}
    result = Plan(
        requested=tf_version, tensorflow=cfg.tf_version, os=eff_os, package=cfg.package,
        python={"min": cfg.python_min, "max": cfg.python_max, "text": cfg.python_text,
                "versions": cfg.python_list},
        cuda=cfg.cuda, cudnn=cfg.cudnn, cuda_build=cuda or None,
        min_driver={"linux": reqs["linux"].toolkit_min if reqs else None,
                    "windows": reqs["wsl" if eff_os == "wsl" else "windows"].toolkit_min
                    if reqs else None},
        min_driver_compat={"linux": reqs["linux"].compat_min if reqs else None,
                           "windows": reqs["wsl" if eff_os == "wsl" else "windows"].compat_min
                           if reqs else None},
        needed_libraries=libs, install=_install_lines(cfg, eff_os, pins, asked),
        wheel=None if wheel is None else {
            "tf_version": wheel.tf_version, "cuda": wheel.cuda, "cudnn": wheel.cudnn,
            "archs": list(wheel.archs), "derived": wheel.derived, "source": wheel.source},
        gpu=gpu_info, reverse=reverse, facts=facts,
        sources={"build_config": cfg.source,
                 "min_driver": reqs["linux"].toolkit_source if reqs else "",
                 "min_driver_compat": reqs["linux"].compat_source if reqs else "",
                 "pins": pins[0].source if pins else ""})
    checks.append(_python_check(cfg, python, eff_os))
    verdict = None
    if cuda:
        newest_ok = newest_runnable(driver, eff_os, cc_value) if driver else None
        if newest_ok is not None and newest_ok.version_tuple >= cfg.version_tuple:
            newest_ok = None
        drv = _driver_check(cfg, cuda, driver, eff_os, newest_ok.tf_version if newest_ok else None)
        checks.append(drv)
        verdict = drv.data.get("verdict")
        if driver:
            smi = _smi_check(cfg, driver, eff_os)
            checks.append(smi)
            result.driver = {"version": driver, "verdict": verdict,
                             "newest_cuda": smi.data.get("ceiling")}
        checks.append(_library_check(cfg, libs, eff_os, driver, pins))
    if gpu_info is not None:
        checks.append(_gpu_check(cfg, eff_os, cc_value, gpu_info, wheel, verdict))
        if cc_value and result.gpu is not None:
            result.gpu["support"] = checks[-1].data.get("support")
    result.checks = checks
    return result
