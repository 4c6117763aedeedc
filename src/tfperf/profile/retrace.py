"""Why a ``tf.function`` traced again: which argument changed, and how.

TensorFlow keys its trace cache on a type per argument (``trace_type.from_value``): tensors,
NumPy arrays and NumPy scalars by shape and dtype, Python scalars and strings by value, other
objects by identity (a weak reference), containers element by element. We describe each
argument the same way, in plain hashable values, for calls that traced only; a retrace's cause
is then the difference to the closest earlier traced signature. Describing happens only on a
trace, so calls that hit the cache pay nothing here.
"""

from __future__ import annotations

import inspect
import itertools
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# Descriptor shapes (plain tuples, so they hash and compare cheaply):
#   ("tensor", dtype, shape)      tensors, variables, NumPy arrays and NumPy scalars
#   ("value", type_name, value)   Python scalars, strings, None
#   ("object", type_name, serial) any other object: TF keys it by identity
#   ("traced", type_name, repr)   objects with their own tracing type (datasets, specs…)
#   ("list"|"tuple"|"dict", items)
Desc = tuple

_LITERALS = (bool, int, float, complex, str, bytes, type(None))
MAX_EXAMPLES = 5


def _numpy_generic(value: Any) -> bool:
    np = _module("numpy")
    return np is not None and isinstance(value, np.generic)


def _module(name: str) -> Any:
    import sys

    return sys.modules.get(name)


# Identity of live objects, as TF's weak-reference key sees it. ``id()`` alone is not: a
# temporary passed per call (``f(x, Config())``) is freed after the call and the next one
# often gets the same address, so equal ids would read as "the same object" while TF, whose
# weak reference died, traced again. A serial per live object tells them apart.
_serials: dict[int, int] = {}
_next_serial = itertools.count(1)


def _identity(value: Any) -> int:
    key = id(value)
    serial = _serials.get(key)
    if serial is None:
        try:  # the entry lives as long as the object: its id is unique while it lives
            weakref.finalize(value, _serials.pop, key, None)
        except TypeError:  # not weakly referenceable: its id is the best we know
            return key
        serial = _serials[key] = next(_next_serial)
    return serial


def _shape_tuple(shape: Any) -> tuple:
    try:
        dims = shape.as_list() if hasattr(shape, "as_list") else list(shape)
    except ValueError:  # unknown rank
        return ("?",)
    return tuple(d if d is None else int(d) for d in dims)


def _is_tensor_like(value: Any) -> bool:
    tf = _module("tensorflow")
    if tf is not None and isinstance(value, (tf.Tensor, tf.Variable)):
        return True
    np = _module("numpy")
    return np is not None and isinstance(value, np.ndarray)


def describe(value: Any, depth: int = 0) -> Desc:
    """A hashable description of ``value`` as TF's trace cache sees it."""
    if _numpy_generic(value):  # before the literals: np.float64 is a float, TF a tensor
        return ("tensor", str(value.dtype), ())
    if isinstance(value, _LITERALS):
        try:
            hash(value)
            return ("value", type(value).__name__, value)
        except TypeError:
            return ("object", type(value).__name__, _identity(value))
    if _is_tensor_like(value):
        return ("tensor", str(getattr(value.dtype, "name", value.dtype)), _shape_tuple(value.shape))
    if depth < 4:
        if isinstance(value, (list, tuple)):
            kind = "list" if isinstance(value, list) else "tuple"
            return (kind, tuple(describe(v, depth + 1) for v in value))
        if isinstance(value, Mapping):
            return ("dict", tuple((str(k), describe(v, depth + 1)) for k, v in value.items()))
    if hasattr(value, "__tf_tracing_type__"):
        return ("traced", type(value).__name__, _tracing_type_text(value))
    return ("object", type(value).__name__, _identity(value))


def _tracing_type_text(value: Any) -> str:
    """The object's own TF tracing type as text (e.g. a dataset's element spec)."""
    try:
        from tensorflow.core.function.trace_type import trace_type_builder

        return str(trace_type_builder.from_value(value))
    except Exception:  # a private module; without it, identity is the best we know
        return f"id {id(value):#x}"


def example(desc: Desc) -> str:
    """How a described value reads in a report."""
    kind = desc[0]
    if kind == "tensor":
        dims = ", ".join("None" if d is None else str(d) for d in desc[2])
        return f"{desc[1]}[{dims}]"
    if kind == "value":
        text = repr(desc[2])
        return text if len(text) <= 40 else text[:37] + "..."
    if kind == "object":
        return f"<{desc[1]} object #{desc[2]}>"
    if kind == "traced":
        return f"{desc[1]}({desc[2][:60]})"
    if kind == "dict":
        return "{" + ", ".join(f"{k!r}: {example(v)}" for k, v in desc[1]) + "}"
    inner = ", ".join(example(v) for v in desc[1])
    return f"[{inner}]" if kind == "list" else f"({inner})"


# ---------------------------------------------------------------------------------------------
# binding and differences


def bind_arguments(signature: inspect.Signature | None, args: tuple,
                   kwargs: dict) -> dict[str, Any]:
    """Argument name → value, as the Python function would see them."""
    if signature is not None:
        try:
            bound = signature.bind_partial(*args, **kwargs)
            out: dict[str, Any] = {}
            for name, value in bound.arguments.items():
                kind = signature.parameters[name].kind
                if kind is inspect.Parameter.VAR_POSITIONAL:
                    out.update({f"{name}[{i}]": v for i, v in enumerate(value)})
                elif kind is inspect.Parameter.VAR_KEYWORD:
                    out.update(value)
                else:
                    out[name] = value
            return out
        except TypeError:
            pass
    out = {f"args[{i}]": v for i, v in enumerate(args)}
    out.update(kwargs)
    return out


@dataclass(frozen=True)
class Change:
    """One argument that differs from an earlier trace: how, and from what to what."""

    argument: str
    kind: str  # python_value | shape | dtype | new_object | type | structure | context
    before: str
    after: str


def diff(name: str, old: Desc | None, new: Desc | None) -> list[Change]:
    """The leaf-level differences between two descriptors of one argument."""
    if old == new:
        return []
    if old is None or new is None:
        return [Change(name, "structure", "absent" if old is None else example(old),
                       "absent" if new is None else example(new))]
    if old[0] != new[0] or (old[0] in ("value", "object", "traced") and old[1] != new[1]):
        return [Change(name, "type", _type_text(old), _type_text(new))]
    kind = old[0]
    if kind == "tensor":
        changes = []
        if old[1] != new[1]:
            changes.append(Change(name, "dtype", old[1], new[1]))
        if old[2] != new[2]:
            changes.append(Change(name, "shape", example(old), example(new)))
        return changes
    if kind == "value":
        return [Change(name, "python_value", example(old), example(new))]
    if kind in ("object", "traced"):
        return [Change(name, "new_object", example(old), example(new))]
    if kind == "dict":
        old_d, new_d = dict(old[1]), dict(new[1])
        if old_d.keys() != new_d.keys():
            return [Change(name, "structure", f"keys {sorted(old_d)}", f"keys {sorted(new_d)}")]
        return [c for k in old_d for c in diff(f"{name}[{k!r}]", old_d[k], new_d[k])]
    if len(old[1]) != len(new[1]):
        return [Change(name, "structure", f"length {len(old[1])}", f"length {len(new[1])}")]
    pairs = enumerate(zip(old[1], new[1], strict=True))
    return [c for i, (a, b) in pairs for c in diff(f"{name}[{i}]", a, b)]


def _type_text(desc: Desc) -> str:
    if desc[0] == "tensor":
        return "tensor"
    if desc[0] in ("value", "object", "traced"):
        return desc[1]
    return desc[0]


def retrace_changes(previous: list[dict[str, Desc]], current: dict[str, Desc]) -> list[Change]:
    """What differs between ``current`` and the closest earlier traced signature.

    An empty signature difference means the arguments matched an earlier trace: the cause
    lies outside them (captured values, device or graph context, an evicted cache entry).
    """
    if not previous:
        return []
    best: list[Change] | None = None
    for old in previous:
        names = list(dict.fromkeys([*old, *current]))
        changes = [c for n in names for c in diff(n, old.get(n), current.get(n))]
        if best is None or len(changes) < len(best):
            best = changes
    if not best:
        return [Change("(none)", "context", "", "same arguments as an earlier trace")]
    return best


# ---------------------------------------------------------------------------------------------
# aggregation per function


@dataclass
class CauseSummary:
    """All retraces of one function caused by one argument changing in one way."""

    argument: str
    kind: str
    retraces: int = 0
    examples: list[str] = field(default_factory=list)
    distinct_values: set[str] = field(default_factory=set)

    def add(self, change: Change) -> None:
        self.retraces += 1
        for text in (change.before, change.after):
            if text and text not in self.distinct_values:
                self.distinct_values.add(text)
                if len(self.examples) < MAX_EXAMPLES:
                    self.examples.append(text)

    def to_dict(self) -> dict[str, Any]:
        return {"argument": self.argument, "kind": self.kind, "retraces": self.retraces,
                "distinct": len(self.distinct_values), "examples": list(self.examples)}


def summarise_kind(kind: str, arg: str, distinct: int) -> str:
    """The "how" part of a cause, in words."""
    if kind == "python_value":
        return f"argument `{arg}` is a Python value that took {distinct} values"
    if kind == "shape":
        return f"argument `{arg}` came in {distinct} shapes"
    if kind == "dtype":
        return f"argument `{arg}` came in {distinct} dtypes"
    if kind == "new_object":
        return f"argument `{arg}` was a new Python object ({distinct} seen)"
    if kind == "type":
        return f"argument `{arg}` changed type"
    if kind == "structure":
        return f"argument `{arg}` changed structure"
    return "no argument changed (its calling context did)"
