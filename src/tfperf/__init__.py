"""tfperf: why TensorFlow tensor code is slow, and how to make it fast.

Capabilities live in subpackages (``doctor``, ``lint``, ``bench``, ``profile``); all of them
share ``tfperf.core`` (one finding type, one measurement core, one way to render).
TensorFlow is imported lazily, only by the capabilities that run tensors.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
