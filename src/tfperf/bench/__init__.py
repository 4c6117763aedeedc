"""``tfperf bench``: trustworthy timing of tensor-function variants, and the article's claims.

The declaration helpers (``variant``, ``inputs``, ``batch``) are plain Python and cost nothing
to import; ``compare`` and the result types load NumPy (and use TensorFlow only if the
variants do) on first use.
"""

from __future__ import annotations

from typing import Any

from tfperf.bench.declare import VariantSpec, inputs, variant

__all__ = ["CompareResult", "Variant", "VariantSpec", "compare", "inputs", "variant"]


def __getattr__(name: str) -> Any:  # lazy: keeps `tfperf bench --help` instant
    if name in ("compare", "Variant"):
        from tfperf.bench import comparison as _compare

        return getattr(_compare, name)
    if name in ("CompareResult", "VariantResult"):
        from tfperf.bench import result as _result

        return getattr(_result, name)
    raise AttributeError(f"module 'tfperf.bench' has no attribute {name!r}")
