"""How a bench file declares what to compare: ``@variant`` functions and one ``@inputs`` function.

::

    import tfperf.bench as bench

    @bench.inputs
    def make(quick: bool):            # `quick` is optional; True under --quick
        return tf.random.normal([64, 500, 128]), tf.random.normal([500])

    @bench.variant(baseline=True, quick_batch=4)
    def loop(samples, weights): ...

    @bench.variant
    def vectorised(samples, weights): ...

The decorators return the function unchanged; they record a :class:`VariantSpec` in the
collector that ``tfperf bench`` opens while it imports the file, so declaring needs no
global registry and importing a bench file elsewhere has no side effect.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class VariantSpec:
    """One declared variant.

    ``bytes``/``flops``: work per call, for the roofline (default: bytes of inputs plus
    outputs, a lower bound). ``quick_batch``: under ``--quick``, run this (slow) variant on the
    first ``quick_batch`` items of axis 0 of its first argument and scale its time up by the
    full size over ``quick_batch``; outputs are then compared on those items only.
    """

    name: str
    fn: Callable[..., Any]
    baseline: bool = False
    bytes: float | None = None
    flops: float | None = None
    quick_batch: int | None = None


@dataclass
class _Collector:
    variants: list[VariantSpec]
    inputs: list[Callable[..., Any]]


_collectors: list[_Collector] = []


def open_collector() -> _Collector:
    """Start collecting declarations (the loader does this around a bench file's import)."""
    c = _Collector([], [])
    _collectors.append(c)
    return c


def close_collector(c: _Collector) -> None:
    if c in _collectors:
        _collectors.remove(c)


def _record_variant(spec: VariantSpec) -> None:
    if _collectors:
        _collectors[-1].variants.append(spec)


def variant(fn: F | None = None, *, name: str | None = None, baseline: bool = False,
            bytes: float | None = None, flops: float | None = None,
            quick_batch: int | None = None) -> Any:
    """Declare a function as a variant to time. Use bare (``@variant``) or with options."""
    if quick_batch is not None and (not isinstance(quick_batch, int) or quick_batch < 1):
        raise ValueError("quick_batch must be a positive integer")

    def wrap(f: F) -> F:
        label = name or getattr(f, "__name__", None) or type(f).__name__
        _record_variant(VariantSpec(label, f, baseline, bytes, flops, quick_batch))
        return f

    return wrap(fn) if fn is not None else wrap


def inputs(fn: F) -> F:
    """Declare the function that builds the variants' arguments (called once per run).

    It returns a tuple of positional arguments (or one value, or a dict of keyword
    arguments) and may take a ``quick`` parameter.
    """
    if _collectors:
        _collectors[-1].inputs.append(fn)
    return fn
