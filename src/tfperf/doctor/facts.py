"""The flat record of everything the doctor found out, and how it is gathered.

``Facts`` is one flat dataclass of plain values (strings, numbers, lists, dicts), so that a
machine can be written to JSON, kept as a test fixture and read back (:meth:`Facts.from_dict`):
checks are pure functions of Facts, and tests judge machines this one is not.

:func:`gather` runs the probes. Sources are injectable: each is a callable
``(options, earlier_facts) -> dict`` whose keys are Facts fields. The fast local probes run
while the slow ones (driver tools, libraries, the TF subprocess) run side by side in threads,
so a full doctor costs about one TensorFlow import.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

# Packages that install the TensorFlow module without CUDA support.
CPU_ONLY_TF_PACKAGES = frozenset({"tensorflow-cpu", "tf-nightly-cpu", "tensorflow-cpu-aws",
                                  "tensorflow-intel", "intel-tensorflow", "tensorflow-macos",
                                  "tensorflow-aarch64"})


@dataclass
class Facts:
    # system
    os: str | None = None  # 'linux' | 'windows' | 'darwin'
    os_release: str | None = None
    kernel: str | None = None
    machine: str | None = None
    wsl: bool | None = None
    glibc: str | None = None
    python_version: str | None = None
    python_executable: str | None = None
    # packages (name → version)
    tf_packages: dict[str, str] = field(default_factory=dict)
    keras_packages: dict[str, str] = field(default_factory=dict)
    nvidia_wheels: dict[str, str] = field(default_factory=dict)
    other_frameworks: dict[str, str] = field(default_factory=dict)
    # relevant environment variables only
    env: dict[str, str] = field(default_factory=dict)
    # hardware and driver
    pci_nvidia_gpus: list[str] | None = None  # None: could not look
    driver_source: str | None = None
    driver_version: str | None = None
    driver_cuda: str | None = None  # the newest CUDA the driver supports ("CUDA Version")
    gpus: list[dict[str, Any]] = field(default_factory=list)  # index, name, cc, memory_mib
    driver_probes: dict[str, str] = field(default_factory=dict)
    # CUDA toolkit (compiler), not what TF loads
    cuda_home: str | None = None
    nvcc_path: str | None = None
    nvcc_version: str | None = None
    toolkit_probe: str | None = None
    # CUDA runtime libraries actually reachable
    cuda_libraries: list[dict[str, Any]] = field(default_factory=list)
    needed_libraries: dict[str, dict[str, Any]] = field(default_factory=dict)
    libraries_probe: str | None = None
    # TensorFlow as imported in a subprocess
    tf_probe: str | None = None  # "ok", "not installed", "timed out after Ns during import"...
    tf_version: str | None = None
    tf_build_info: dict[str, Any] = field(default_factory=dict)
    tf_physical_devices: list[str] = field(default_factory=list)
    tf_gpus: list[dict[str, Any]] = field(default_factory=list)
    tf_import_log: str = ""
    tf_import_seconds: float | None = None
    tf_loaded_libraries: list[str] = field(default_factory=list)
    tf_import_traceback: str | None = None
    # raw results of the live checks, by check id (judged in live.py)
    live: dict[str, Any] = field(default_factory=dict)
    # how the gathering went
    probe_seconds: dict[str, float] = field(default_factory=dict)
    probe_errors: dict[str, str] = field(default_factory=dict)

    # -- derived views the checks share ----------------------------------------------------

    @property
    def tf_package(self) -> str | None:
        """The installed distribution that provides TF (first, if several)."""
        return next(iter(self.tf_packages), None)

    @property
    def tensorflow_version(self) -> str | None:
        """The version TF reports, else the installed package's."""
        return self.tf_version or (self.tf_packages[self.tf_package] if self.tf_package else None)

    @property
    def cpu_only_package(self) -> bool:
        return bool(self.tf_packages) and all(p in CPU_ONLY_TF_PACKAGES for p in self.tf_packages)

    @property
    def is_cuda_build(self) -> bool | None:
        """From the build info when TF ran; else guessed from the package name."""
        if "is_cuda_build" in self.tf_build_info:
            return bool(self.tf_build_info["is_cuda_build"])
        if self.tf_packages:
            return not self.cpu_only_package
        return None

    @property
    def has_nvidia_gpu(self) -> bool:
        return bool(self.gpus) or bool(self.pci_nvidia_gpus) or self.driver_version is not None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Facts:
        """Unknown keys are ignored, so reports of newer tfperf versions still load."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


# ---------------------------------------------------------------------------------------------
# gathering


@dataclass(frozen=True)
class GatherOptions:
    timeout: float = 120.0  # TF import, and each live check
    tool_timeout: float = 10.0  # nvidia-smi, nvcc, ldconfig, the dlopen test
    compute: bool = True
    matmul_size: int | None = None


Source = Callable[[GatherOptions, Mapping[str, Any]], Mapping[str, Any]]


def _system(opts: GatherOptions, _: Mapping[str, Any]) -> Mapping[str, Any]:
    from tfperf.doctor.probes.system import probe_system

    return probe_system()


def _packages(opts: GatherOptions, _: Mapping[str, Any]) -> Mapping[str, Any]:
    from tfperf.doctor.probes.packages import probe_packages

    return probe_packages()


def _environment(opts: GatherOptions, _: Mapping[str, Any]) -> Mapping[str, Any]:
    from tfperf.doctor.probes.environment import probe_environment

    return probe_environment()


def _pci(opts: GatherOptions, _: Mapping[str, Any]) -> Mapping[str, Any]:
    from tfperf.doctor.probes.pci import probe_pci

    return probe_pci()


def _driver(opts: GatherOptions, _: Mapping[str, Any]) -> Mapping[str, Any]:
    from tfperf.doctor.probes.driver import probe_driver

    return probe_driver(opts.tool_timeout)


def _toolkit(opts: GatherOptions, _: Mapping[str, Any]) -> Mapping[str, Any]:
    from tfperf.doctor.probes.cuda_toolkit import probe_cuda_toolkit

    return probe_cuda_toolkit(opts.tool_timeout)


def _libraries(opts: GatherOptions, earlier: Mapping[str, Any]) -> Mapping[str, Any]:
    from tfperf.doctor.needs import needed_sonames
    from tfperf.doctor.probes.libraries import probe_libraries

    return probe_libraries(needed_sonames(Facts.from_dict(earlier)), opts.tool_timeout)


def _tensorflow(opts: GatherOptions, _: Mapping[str, Any]) -> Mapping[str, Any]:
    from tfperf.doctor.probes.tf_runtime import probe_tensorflow

    return probe_tensorflow(opts.timeout, opts.compute, opts.matmul_size)


# Fast, local, run one after the other; their facts are visible to the slow ones.
LOCAL_SOURCES: dict[str, Source] = {"system": _system, "packages": _packages,
                                    "environment": _environment, "pci": _pci}
# Slow (processes, tools): run side by side, overlapping the local ones.
SLOW_SOURCES: dict[str, Source] = {"tensorflow": _tensorflow, "driver": _driver,
                                   "toolkit": _toolkit, "libraries": _libraries}
# Slow sources that read the local facts (the library probe needs the installed TF version).
NEEDS_LOCAL_FACTS = frozenset({"libraries"})


def _run_source(name: str, source: Source, opts: GatherOptions,
                earlier: Mapping[str, Any]) -> tuple[dict[str, Any], float, str | None]:
    start = time.perf_counter()
    try:
        out, err = dict(source(opts, earlier)), None
    except Exception as exc:  # a probe bug must cost its facts, not the report
        out, err = {}, f"{type(exc).__name__}: {exc}"
    return out, time.perf_counter() - start, err


def gather(options: GatherOptions | None = None,
           local: Mapping[str, Source] | None = None,
           slow: Mapping[str, Source] | None = None) -> Facts:
    """Run every source and merge their facts.

    Slow sources that need no local facts (the TF subprocess above all) start first, so that
    TensorFlow's import overlaps everything else; those in :data:`NEEDS_LOCAL_FACTS` start
    once the local facts are in.
    """
    opts = options or GatherOptions()
    local = LOCAL_SOURCES if local is None else local
    slow = SLOW_SOURCES if slow is None else slow
    collected: dict[str, Any] = {}
    seconds: dict[str, float] = {}
    errors: dict[str, str] = {}

    def keep(name: str, result: tuple[dict[str, Any], float, str | None]) -> None:
        out, secs, err = result
        collected.update(out)
        seconds[name] = secs
        if err:
            errors[name] = err

    with ThreadPoolExecutor(max_workers=max(1, len(slow)),
                            thread_name_prefix="tfperf-probe") as ex:
        futures = {name: ex.submit(_run_source, name, src, opts, {})
                   for name, src in slow.items() if name not in NEEDS_LOCAL_FACTS}
        for name, source in local.items():
            keep(name, _run_source(name, source, opts, collected))
        snapshot = dict(collected)
        futures.update({name: ex.submit(_run_source, name, src, opts, snapshot)
                        for name, src in slow.items() if name in NEEDS_LOCAL_FACTS})
        for name, fut in futures.items():
            keep(name, fut.result())
    facts = Facts.from_dict(collected)
    facts.probe_seconds = {k: round(v, 3) for k, v in seconds.items()}
    facts.probe_errors = errors
    return facts
