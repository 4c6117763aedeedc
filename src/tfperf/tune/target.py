"""The function being tuned: where its source is, how to call it, what its inputs look like."""

from __future__ import annotations

import hashlib
import inspect
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

Inputs = Callable[[], tuple[tuple[Any, ...], dict[str, Any]]]


class TuneError(Exception):
    """tune cannot start on this function or these inputs; the message says why."""


@dataclass
class Target:
    """A module-level function in a ``.py`` file, and its inputs.

    ``inputs``: a factory of fresh ``(args, kwargs)``; given for stateful functions (a train
    step updates its model), so that every candidate starts from the same state. Without
    it, every candidate shares ``args``/``kwargs``.
    """

    fn: Callable[..., Any]
    name: str
    path: Path
    source: str
    module: ModuleType
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    inputs: Inputs | None = None

    @classmethod
    def from_function(cls, fn: Callable[..., Any], args: tuple[Any, ...] = (),
                      kwargs: Mapping[str, Any] | None = None,
                      inputs: Inputs | None = None) -> Target:
        py = inspect.unwrap(getattr(fn, "python_function", fn))
        name = getattr(py, "__name__", None)
        if not callable(fn) or name is None or not inspect.isfunction(py):
            raise TuneError(f"{fn!r} is not a Python function: tune needs a function "
                            "defined with `def` in a .py file")
        if py.__qualname__ != name:
            raise TuneError(f"{py.__qualname__}: tune needs a module-level function "
                            "(not a method, a nested function or a lambda)")
        module = sys.modules.get(py.__module__)
        try:
            path = Path(inspect.getsourcefile(py) or "")
        except TypeError:
            path = Path("")
        if module is None or not path.is_file() or path.suffix != ".py":
            raise TuneError(f"{name}: its source file cannot be found (tune edits a copy of "
                            "the module the function is defined in, a .py file)")
        if getattr(module, name, None) is not fn and getattr(module, name, None) is not py:
            raise TuneError(f"{name}: the module {module.__name__} binds that name to "
                            "something else")
        if inputs is not None:
            args, kw = inputs()
            kwargs = kw
        return cls(fn, name, path, path.read_text(encoding="utf-8"), module, tuple(args),
                   dict(kwargs or {}), inputs)

    def fresh_inputs(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """Inputs for one more candidate: new ones from the factory, else the shared ones."""
        if self.inputs is None:
            return self.args, self.kwargs
        args, kwargs = self.inputs()
        return tuple(args), dict(kwargs)

    @property
    def float_params(self) -> list[str]:
        """Parameters bound to float32 tensors (precision casts them)."""
        tf = sys.modules.get("tensorflow")
        if tf is None:
            return []
        py = inspect.unwrap(getattr(self.fn, "python_function", self.fn))
        try:
            bound = inspect.signature(py).bind(*self.args, **self.kwargs)
        except TypeError:
            return []
        return [k for k, v in bound.arguments.items()
                if isinstance(v, tf.Tensor) and v.dtype == tf.float32]

    def input_signature(self) -> list[str]:
        """Each input leaf as ``dtype[shape]`` (or its type): part of the cache key."""
        return [describe(v) for v in _leaves((self.args, self.kwargs))]

    def source_hash(self) -> str:
        return hashlib.sha256(f"{self.name}\n{self.source}".encode()).hexdigest()


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, Mapping):
        return [x for k in sorted(value, key=str) for x in _leaves(value[k])]
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _leaves(v)]
    return [value]


def describe(value: Any) -> str:
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if shape is not None and dtype is not None:
        name = getattr(dtype, "name", str(dtype))
        return f"{name}{list(shape) if not hasattr(shape, 'as_list') else shape.as_list()}"
    if isinstance(value, (bool, int, float, str)):
        return f"{type(value).__name__}={value!r}"
    return type(value).__name__
