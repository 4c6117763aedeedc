"""Step loops in the modules a script imports: research code trains in ``trainer.py``, not in
the ``main.py`` that is run.

While a script runs under ``tfperf profile`` (or a ``--try-fixes`` child), a finder placed
first on ``sys.meta_path`` looks at each module imported from the script's own folder, or from
a folder the script itself put on ``sys.path`` (never an installed package): when its code
shows a training step (``training_step.py``), the module is compiled with its step loop
marked, as the script is (``script_exec.py``), under its own file name; its bytecode cache
is neither read nor written for that import. ``overrides`` maps a module's file to a patched
copy whose source is compiled instead (a trial's "after" side).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
import types
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from importlib.util import decode_source
from pathlib import Path
from typing import Any

from tfperf.profile import attribution
from tfperf.profile.script_exec import compile_marked
from tfperf.profile.training_step import TrainingStep, find_steps


class _MarkedLoader(importlib.machinery.SourceFileLoader):
    """Loads one module from code compiled here, with tfperf's names in its globals."""

    def __init__(self, fullname: str, path: str, code: types.CodeType,
                 init_globals: dict[str, Any]):
        super().__init__(fullname, path)
        self._code = code
        self._init = init_globals

    def get_code(self, fullname: str) -> types.CodeType:  # no bytecode cache either way
        return self._code

    def exec_module(self, module: types.ModuleType) -> None:
        module.__dict__.update(self._init)
        exec(self._code, module.__dict__)


class StepModuleFinder(importlib.abc.MetaPathFinder):
    """Marks the step loops of modules imported from ``root``."""

    def __init__(self, root: Path, init_globals: dict[str, Any], *,
                 results: bool = False, overrides: dict[str, str] | None = None,
                 on_marked: Callable[[TrainingStep], None] | None = None):
        self.root = os.path.realpath(root) + os.sep
        # folders the run itself adds to sys.path (sys.path.append("../utils")) are the
        # user's too; those there before it are not
        self._path_before = frozenset(_folders(sys.path))
        self.init = init_globals
        self.results = results
        self.overrides = {os.path.realpath(k): v for k, v in (overrides or {}).items()}
        self.on_marked = on_marked
        self.marked: list[TrainingStep] = []
        self.loaded: list[str] = []  # modules compiled here

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: types.ModuleType | None = None) -> Any:
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or spec.origin is None or not spec.origin.endswith(".py") \
                or not isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            return None
        origin = os.path.realpath(spec.origin)
        if not origin.startswith(self._roots()) or not attribution.is_user_file(origin):
            return None
        source_path = self.overrides.get(origin, spec.origin)
        try:
            source = decode_source(Path(source_path).read_bytes())
        except (OSError, SyntaxError, UnicodeDecodeError):
            return None
        if origin not in self.overrides and "GradientTape" not in source \
                and "step_num" not in source:
            return None
        steps = find_steps(source, source_path)
        try:
            code = compile_marked(source, Path(source_path), steps, results=self.results) \
                if steps else None
            if code is None and origin in self.overrides:
                code = compile(source, source_path, "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            return None
        if code is None:
            return None
        for step in steps:
            self.marked.append(step)
            if self.on_marked is not None:
                self.on_marked(step)
        spec.loader = _MarkedLoader(fullname, spec.origin, code, self.init)
        self.loaded.append(fullname)
        return spec


    def _roots(self) -> tuple[str, ...]:
        added = [p for p in _folders(sys.path) if p not in self._path_before]
        return (self.root, *added)


def _folders(entries: Sequence[str]) -> list[str]:
    """sys.path's folders, resolved, each ending in a separator."""
    out = []
    for entry in entries:
        if isinstance(entry, str):
            try:
                out.append(os.path.realpath(entry or os.curdir) + os.sep)
            except (OSError, ValueError):
                continue
    return out


@contextmanager
def marking_imports(finder: StepModuleFinder) -> Iterator[StepModuleFinder]:
    """``finder`` first on ``sys.meta_path`` for the block."""
    sys.meta_path.insert(0, finder)
    try:
        yield finder
    finally:
        if finder in sys.meta_path:
            sys.meta_path.remove(finder)
