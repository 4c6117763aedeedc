"""Installed Python packages that decide which TensorFlow runs and which CUDA it finds."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from importlib import metadata
from typing import Any

from tfperf.doctor.probe import GatherOptions

STAGE = "local"

# Every distribution that installs the `tensorflow` module. Two of them at once is a bug.
TF_DISTRIBUTIONS = frozenset({
    "tensorflow", "tensorflow-cpu", "tensorflow-gpu", "tf-nightly", "tf-nightly-cpu",
    "tf-nightly-gpu", "tensorflow-intel", "tensorflow-macos", "tensorflow-aarch64",
    "tensorflow-cpu-aws", "intel-tensorflow", "tensorflow-rocm",
})
KERAS_DISTRIBUTIONS = frozenset({"keras", "tf-keras", "keras-nightly", "tf-keras-nightly"})
# Frameworks that bring their own CUDA/cuDNN and can shadow the one TF needs.
OTHER_FRAMEWORKS = frozenset({
    "torch", "jax", "jaxlib", "jax-cuda11-plugin", "jax-cuda12-plugin", "jax-cuda12-pjrt",
    "jax-cuda13-plugin", "cupy-cuda11x", "cupy-cuda12x", "paddlepaddle-gpu", "onnxruntime-gpu",
})
NVIDIA_WHEEL = re.compile(r"^nvidia-[a-z0-9-]+$")


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def classify(dists: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """Sort (name, version) pairs into the package facts the checks read."""
    tf: dict[str, str] = {}
    keras: dict[str, str] = {}
    nvidia: dict[str, str] = {}
    other: dict[str, str] = {}
    for raw, version in dists:
        name = _normalise(raw)
        if name in TF_DISTRIBUTIONS:
            tf[name] = version
        elif name in KERAS_DISTRIBUTIONS:
            keras[name] = version
        elif name in OTHER_FRAMEWORKS:
            other[name] = version
        elif NVIDIA_WHEEL.match(name) and name != "nvidia-ml-py":  # NVML binding: no CUDA
            nvidia[name] = version
    return {
        "tf_packages": dict(sorted(tf.items())),
        "keras_packages": dict(sorted(keras.items())),
        "nvidia_wheels": dict(sorted(nvidia.items())),
        "other_frameworks": dict(sorted(other.items())),
    }


def probe_packages() -> dict[str, Any]:
    pairs = []
    for dist in metadata.distributions():
        meta: Any = dist.metadata  # an email.Message underneath; the protocol lacks .get
        name = meta.get("Name") if meta else None
        if name:
            pairs.append((name, dist.version or "?"))
    return classify(pairs)


def probe(options: GatherOptions, earlier: Mapping[str, Any]) -> Mapping[str, Any]:
    """Installed TensorFlow, Keras, NVIDIA and other framework packages."""
    return probe_packages()
