"""Import a user's bench file by path and read its declarations.

The file is *imported and executed* (:func:`tfperf.core.usercode.import_file`): its top level
runs, as under ``import``; ``if __name__ == "__main__":`` blocks do not.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from tfperf.bench.batching import quick_slice
from tfperf.bench.declare import VariantSpec, close_collector, open_collector
from tfperf.core.usercode import UserCodeError, describe_exception, import_file


class BenchFileError(Exception):
    """A bench file that cannot be used; the message says why, for the user."""


@dataclass
class BenchFile:
    path: Path
    module: ModuleType
    variants: list[VariantSpec]
    inputs_fn: Any | None

    def make_inputs(self, quick: bool) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """Call the ``@inputs`` function: (args, kwargs)."""
        if self.inputs_fn is None:
            return (), {}
        try:
            params = inspect.signature(self.inputs_fn).parameters
            value = self.inputs_fn(quick=quick) if "quick" in params else self.inputs_fn()
        except Exception as exc:
            raise BenchFileError(f"{self.path}: the @inputs function raised "
                                 f"{describe_exception(exc, self.path)}") from None
        if isinstance(value, dict):
            return (), dict(value)
        if isinstance(value, tuple):
            return value, {}
        return (value,), {}

    def inputs_for(self, variant: VariantSpec, quick: bool) -> tuple[tuple[Any, ...],
                                                                       dict[str, Any]]:
        """The inputs ``variant`` runs on: under ``quick``, its ``quick_batch`` slice."""
        args, kwargs = self.make_inputs(quick)
        if quick:
            args, _ = quick_slice(args, variant.quick_batch)
        return args, kwargs


def load_bench_file(path: str | Path) -> BenchFile:
    """Import ``path`` as a fresh module and collect its ``@variant``/``@inputs`` declarations."""
    p = Path(path)
    collector = open_collector()
    try:
        module = import_file(p, prefix="_tfperf_bench_")
    except UserCodeError as exc:
        raise BenchFileError(str(exc)) from None
    finally:
        close_collector(collector)
    if not collector.variants:
        raise BenchFileError(f"{p}: declares no variants (decorate functions with "
                             "@tfperf.bench.variant)")
    names = [v.name for v in collector.variants]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise BenchFileError(f"{p}: variant names must be unique; repeated: {', '.join(dupes)}")
    if sum(v.baseline for v in collector.variants) > 1:
        raise BenchFileError(f"{p}: more than one variant has baseline=True")
    if len(collector.inputs) > 1:
        raise BenchFileError(f"{p}: more than one @inputs function")
    return BenchFile(p, module, collector.variants,
                     collector.inputs[0] if collector.inputs else None)
