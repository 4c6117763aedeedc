"""Import a user's bench file by path, safely, and read its declarations."""

from __future__ import annotations

import importlib.util
import inspect
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from tfperf.bench.declare import VariantSpec, close_collector, open_collector


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
                                 f"{_describe(exc, self.path)}") from None
        if isinstance(value, dict):
            return (), dict(value)
        if isinstance(value, tuple):
            return value, {}
        return (value,), {}


def _describe(exc: BaseException, path: Path) -> str:
    """``TypeError: msg (line 12)``: the innermost frame inside the user's file."""
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if Path(frame.filename).resolve() == path.resolve():
            line = frame.lineno
    if isinstance(exc, SyntaxError) and exc.lineno:
        line = exc.lineno
    where = f" (line {line})" if line else ""
    return f"{type(exc).__name__}: {exc}{where}"


def load_bench_file(path: str | Path) -> BenchFile:
    """Import ``path`` as a fresh module and collect its ``@variant``/``@inputs`` declarations."""
    p = Path(path)
    if not p.exists():
        raise BenchFileError(f"{p}: no such file")
    if not p.is_file() or p.suffix != ".py":
        raise BenchFileError(f"{p}: not a Python file (expected FILE.py)")
    mod_name = f"_tfperf_bench_{abs(hash(str(p.resolve())))}"
    spec = importlib.util.spec_from_file_location(mod_name, p)
    if spec is None or spec.loader is None:
        raise BenchFileError(f"{p}: cannot be imported")
    module = importlib.util.module_from_spec(spec)
    collector = open_collector()
    folder = str(p.resolve().parent)
    sys.path.insert(0, folder)  # so the file can import its neighbours, as `python FILE.py` can
    sys.modules[mod_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:  # SystemExit and KeyboardInterrupt from a script included
        sys.modules.pop(mod_name, None)
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise BenchFileError(f"{p}: importing it failed: {_describe(exc, p)}") from None
    finally:
        close_collector(collector)
        if folder in sys.path:
            sys.path.remove(folder)
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
