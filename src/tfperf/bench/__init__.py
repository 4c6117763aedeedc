"""``tfperf bench``: trustworthy timing of tensor-function variants, and the article's claims.

The declaration helpers (``variant``, ``inputs``) are plain Python and cost nothing to
import; ``compare`` and the result types load NumPy (and use TensorFlow only if the variants
do) on first use. ``compare`` returns a :class:`~tfperf.bench.report.CompareReport`: the
data of :class:`CompareResult` plus ``table()``, ``to_markdown()`` and ``plot()``.
"""

from __future__ import annotations

from typing import Any

from tfperf.bench.declare import VariantSpec, inputs, variant

__all__ = ["CompareReport", "CompareResult", "Variant", "VariantResult", "VariantSpec", "compare",
           "inputs", "variant"]


def __getattr__(name: str) -> Any:  # lazy: keeps `tfperf bench --help` instant
    if name in ("compare", "Variant"):
        from tfperf.bench import comparison as _compare

        return getattr(_compare, name)
    if name in ("CompareResult", "VariantResult"):
        from tfperf.bench import result as _result

        return getattr(_result, name)
    if name == "CompareReport":
        from tfperf.bench import report as _report

        return _report.CompareReport
    raise AttributeError(f"module 'tfperf.bench' has no attribute {name!r}")
