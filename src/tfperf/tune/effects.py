"""What a call leaves in its arguments: a function that returns None (or hands back an
argument it was given) works by side effect, so comparing returns alone accepts any candidate
that does not raise (``def f(out, x)`` writing into ``out``; a ``tf.Variable.assign``; a list
it appends to). Here: each call gets its own copies of the mutable arguments, their state is
snapshotted before and after the first call, and a candidate's after-state is compared with
the baseline's."""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from tfperf.bench.equivalence import Equivalence, compare_outputs, snapshot

#: An argument's name → its snapshot (only the mutable arguments: arrays, Variables, lists,
#: dicts; tensors and Python scalars cannot be changed by a call).
State = dict[str, Any]


def _variable_type() -> type | None:
    tf = sys.modules.get("tensorflow")
    return getattr(tf, "Variable", None) if tf is not None else None


def _mutable(value: Any) -> bool:
    var = _variable_type()
    if isinstance(value, tuple):  # itself fixed: mutable through what it holds
        return any(_mutable(v) for v in value)
    return isinstance(value, (np.ndarray, list, dict)) or (
        var is not None and isinstance(value, var))


def _plain(value: Any) -> bool:
    """A value no call can change (a scalar, a string, a tensor) or one :func:`state` reads."""
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes, np.generic)):
        return True
    if isinstance(value, (list, tuple)):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(_plain(v) for v in value.values())
    tf = sys.modules.get("tensorflow")
    tensor = getattr(tf, "Tensor", None) if tf is not None else None
    return _mutable(value) or (tensor is not None and isinstance(value, tensor))


def unseen(args: tuple[Any, ...], kwargs: dict[str, Any], names: list[str]) -> list[str]:
    """The arguments :func:`state` does not look into (a model, an object of the user's):
    a call may change them unseen."""
    pairs = [*zip(names, args, strict=False), *kwargs.items()]
    return [name for name, v in pairs if not _plain(v)]


def _copy(value: Any) -> Any:
    """A copy a call can change without changing ``value``: arrays and containers copied,
    a plain tf.Variable re-made with its value; tensors (immutable) and other objects kept."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if type(value) is list:
        return [_copy(v) for v in value]
    if type(value) is dict:
        return {k: _copy(v) for k, v in value.items()}
    if type(value) is tuple:
        return tuple(_copy(v) for v in value)
    var = _variable_type()
    # Only TensorFlow's own variables: a subclass (Keras', an autocast one) is kept as it is
    if var is not None and isinstance(value, var) and type(value).__module__.startswith(
            "tensorflow."):
        import tensorflow as tf

        old: Any = value
        return tf.Variable(old.read_value(), trainable=old.trainable,
                           name=old.name.split(":")[0])
    return value


def own_copies(args: tuple[Any, ...], kwargs: dict[str, Any]
               ) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The user's inputs with each mutable argument copied: the baseline and every candidate
    start from the same state, and none changes the user's own arrays."""
    return tuple(_copy(a) for a in args), {k: _copy(v) for k, v in kwargs.items()}


def labels(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
           ) -> list[str]:
    """Each positional argument's parameter name (``argument 2`` where it has none)."""
    py = inspect.unwrap(getattr(fn, "python_function", fn))
    try:
        names = list(inspect.signature(py).bind(*args, **kwargs).arguments)
    except (TypeError, ValueError):
        names = []
    return [names[i] if i < len(names) else f"argument {i + 1}" for i in range(len(args))]


def state(args: tuple[Any, ...], kwargs: dict[str, Any], names: list[str]) -> State:
    """A snapshot of each mutable argument, by name."""
    pairs = [*zip(names, args, strict=False), *kwargs.items()]
    return {name: snapshot(v) for name, v in pairs if _mutable(v)}


def returns_argument(value: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether ``value`` is one of the (mutable) arguments itself."""
    return any(value is a for a in (*args, *kwargs.values()) if _mutable(a))


def same(a: Any, b: Any) -> bool:
    """Exactly the same snapshot (types, keys, lengths, dtypes, shapes and bits)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(
            a, b, equal_nan=a.dtype.kind in "fc")
    try:
        return bool(a == b)
    except Exception:  # an Opaque or an object without a plain ==
        return False


def changed(before: State, after: State) -> list[str]:
    """The arguments the call changed."""
    return [k for k in after if k not in before or not same(before[k], after[k])]


def compare(base_before: State, base_after: State, mine_before: State | None,
            mine_after: State | None) -> Equivalence:
    """The candidate's effects on its arguments against the baseline's: the same dtypes,
    shapes and structure, values within the dtype's tolerance. ``None``: not comparable
    (the reason says why; the caller decides what that means)."""
    from tfperf.tune import contract

    if mine_before is None or mine_after is None:
        return Equivalence(None, reason="its arguments' state was not recorded")
    for name in base_before:
        if name in mine_before and not same(base_before[name], mine_before[name]):
            return Equivalence(None, reason=f"argument {name!r} did not start from the same "
                                            "values (the inputs factory gave other ones)")
    for name in sorted(set(base_after) | set(mine_after)):
        if name not in base_after or name not in mine_after:
            continue  # not mutable on one side: the contract check of returns sees types
        b, c = base_after[name], mine_after[name]
        touched = not same(base_before.get(name), b)
        kept = contract.check(b, c)
        if kept.equivalent is False:
            return Equivalence(False, reason=f"leaves argument {name!r} with another structure,"
                                             f" dtype or shape: {kept.reason}")
        eq = compare_outputs(b, c)
        if eq.equivalent is not True:
            what = ("writes different values into" if touched else
                    "changes an argument the baseline leaves as it was:")
            return Equivalence(eq.equivalent, reason=f"{what} argument {name!r}: {eq.reason}")
    return Equivalence(True)
