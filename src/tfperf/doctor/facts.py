"""The flat record of everything the doctor found out.

``Facts`` is one flat dataclass of plain values (strings, numbers, lists, dicts), so that a
machine can be written to JSON, kept as a test fixture and read back (:meth:`Facts.from_dict`):
checks are pure functions of Facts, and tests judge machines this one is not. The probes that
fill it are in :mod:`tfperf.doctor.probes`, run by :mod:`tfperf.doctor.gather`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
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
    # raw results of `--devices` (collectives across devices), by stage; judged in
    # collective_checks.py
    devices: dict[str, Any] = field(default_factory=dict)
    # raw results of `--workers` (this worker's part of a multi-worker check), by stage
    workers: dict[str, Any] = field(default_factory=dict)
    # facts of probes that this record does not declare, by probe (module) name
    extra: dict[str, dict[str, Any]] = field(default_factory=dict)
    # how the gathering went, by probe (module) name; an error means "could not look"
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
