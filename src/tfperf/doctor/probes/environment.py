"""The environment variables that change how TensorFlow finds GPUs, and nothing else.

Only named variables are read: the environment can hold secrets and a doctor report is meant
to be pasted into public bug reports. A ``TF_`` prefix alone is not trusted (Terraform keeps
tokens in ``TF_VAR_*`` and ``TF_TOKEN_*``), so TensorFlow's variables are listed by name.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from tfperf.doctor.probe import GatherOptions

STAGE = "local"

WHITELIST = frozenset({
    "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "NVIDIA_VISIBLE_DEVICES",
    "CUDA_HOME", "CUDA_PATH", "LD_LIBRARY_PATH", "XLA_FLAGS",
    "TF_XLA_FLAGS", "TF_CPP_MIN_LOG_LEVEL", "TF_CPP_MAX_VLOG_LEVEL", "TF_CPP_MIN_VLOG_LEVEL",
    "TF_CPP_VMODULE", "TF_FORCE_GPU_ALLOW_GROWTH", "TF_GPU_ALLOCATOR", "TF_GPU_THREAD_MODE",
    "TF_GPU_THREAD_COUNT", "TF_ENABLE_ONEDNN_OPTS", "TF_CUDNN_DETERMINISTIC",
    "TF_DETERMINISTIC_OPS", "TF_USE_LEGACY_KERAS", "TF_NUM_INTEROP_THREADS",
    "TF_NUM_INTRAOP_THREADS", "TF_ENABLE_AUTO_MIXED_PRECISION", "TF_CUDA_COMPUTE_CAPABILITIES",
    "TF_CUDNN_USE_AUTOTUNE", "TF_ENABLE_XLA", "TF_USE_CUDNN_BATCHNORM_SPATIAL_PERSISTENT",
})


def probe_environment(environ: Mapping[str, str] | None = None) -> dict[str, object]:
    env = os.environ if environ is None else environ
    return {"env": {k: env[k] for k in sorted(env) if k in WHITELIST}}


def probe(options: GatherOptions, earlier: Mapping[str, Any]) -> Mapping[str, Any]:
    """The environment variables that change how TensorFlow finds GPUs."""
    return probe_environment()
