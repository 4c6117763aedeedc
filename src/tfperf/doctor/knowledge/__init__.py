"""The doctor's knowledge: packaged tables (each row with its source) and their loaders.

Tables live in ``data/`` (rebuilt from the raw compilation by ``build_data``); every loader
reads lazily and caches. Nothing here imports TensorFlow.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tfperf.doctor.knowledge.builds import (
        BuildConfig,
        Pin,
        WheelBuildInfo,
        and_cuda_pins,
        build_config,
        build_configs,
        nearest_versions,
        needed_libraries,
        pin_versions,
        wheel_build_info,
        wheel_build_infos,
    )
    from tfperf.doctor.knowledge.drivers import (
        DriverRequirement,
        min_driver,
        newest_cuda_for_driver,
    )
    from tfperf.doctor.knowledge.errors import (
        SEVERITIES,
        SEVERITY_ORDER,
        CudaError,
        ErrorPattern,
        cuda_error,
        derived_causes,
        error_patterns,
        label_rows,
    )
    from tfperf.doctor.knowledge.gpus import (
        GpuInfo,
        arch_match,
        arch_support,
        compute_capability,
        parse_cc,
    )

# Each name loads its module on first use: ``tfperf explain`` needs only the error rows, not
# the build tables (``python -X importtime -m tfperf explain x`` shows the difference).
_WHERE = {name: module for module, names in {
    "builds": ("BuildConfig", "Pin", "WheelBuildInfo", "and_cuda_pins", "build_config",
               "build_configs", "nearest_versions", "needed_libraries", "pin_versions",
               "wheel_build_info", "wheel_build_infos"),
    "drivers": ("DriverRequirement", "min_driver", "newest_cuda_for_driver"),
    "errors": ("SEVERITIES", "SEVERITY_ORDER", "CudaError", "ErrorPattern", "cuda_error",
               "derived_causes", "error_patterns", "label_rows"),
    "gpus": ("GpuInfo", "arch_match", "arch_support", "compute_capability", "parse_cc"),
}.items() for name in names}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "SEVERITIES",
    "SEVERITY_ORDER",
    "BuildConfig",
    "CudaError",
    "DriverRequirement",
    "ErrorPattern",
    "GpuInfo",
    "Pin",
    "WheelBuildInfo",
    "and_cuda_pins",
    "arch_match",
    "arch_support",
    "build_config",
    "build_configs",
    "compute_capability",
    "cuda_error",
    "derived_causes",
    "error_patterns",
    "label_rows",
    "min_driver",
    "nearest_versions",
    "needed_libraries",
    "newest_cuda_for_driver",
    "parse_cc",
    "pin_versions",
    "wheel_build_info",
    "wheel_build_infos",
]
