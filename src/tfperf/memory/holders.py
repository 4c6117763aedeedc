"""What holds memory across steps: the model's weights, the optimizer's slots, the inputs.

These are allocated before a step's capture begins, so no allocation event names them; they
are found in Python instead: every live ``tf.Variable`` (the garbage collector's objects),
split into optimizer slots (the variables of every live Keras optimizer, TF's legacy ones
through ``variables()``) and weights (the rest), and the tensors passed to the step (or
captured by it: the caller passes those too; one tensor counts once). Sizes
are elements × dtype size, on the device the variable lives on.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from tfperf.core.measure import leaves

#: the BFC allocator hands out multiples of 256 bytes
ROUND = 256


@dataclass
class Holders:
    weights_bytes: int = 0
    weights_count: int = 0
    slots_bytes: int = 0
    slots_count: int = 0
    inputs_bytes: int = 0
    inputs_count: int = 0
    optimizer_scopes: tuple[str, ...] = ()  # name scopes of the optimizers' update ops

    def to_dict(self) -> dict[str, Any]:
        return {"weights_bytes": self.weights_bytes, "weights": self.weights_count,
                "optimizer_slots_bytes": self.slots_bytes, "optimizer_slots": self.slots_count,
                "inputs_bytes": self.inputs_bytes, "inputs": self.inputs_count}


def _rounded(n: int) -> int:
    return -(-n // ROUND) * ROUND if n else 0


def tensor_bytes(value: Any) -> int:
    """Bytes of one tensor or variable's buffer (0 for anything else)."""
    try:
        shape = value.shape
        n = shape.num_elements() if hasattr(shape, "num_elements") else None
        size = value.dtype.size
    except Exception:
        return 0
    if n is None or not isinstance(size, int):
        return 0
    return _rounded(int(n) * size)


def _on(device_kind: str, value: Any) -> bool:
    try:
        device = str(value.device or "")
    except Exception:
        return device_kind == "CPU"
    return f"{device_kind}:" in device.upper() or (device_kind == "CPU" and not device)


def _optimizers(objects: list[Any]) -> list[Any]:
    out = []
    for obj in objects:
        module = getattr(type(obj), "__module__", "")
        if not isinstance(module, str) or "optimizer" not in module:
            continue
        if hasattr(obj, "apply_gradients") and (hasattr(obj, "variables")):
            out.append(obj)
    return out


def _optimizer_variables(opt: Any) -> list[Any]:
    found = getattr(opt, "variables", None)
    try:
        values = found() if callable(found) else found
        return list(values or [])
    except Exception:
        return []


def find_holders(inputs: Iterable[Any] = (), device_kind: str = "CPU",
                 variables: Iterable[Any] | None = None) -> Holders:
    """Weights, optimizer slots and inputs held now on ``device_kind`` (CPU, GPU).

    ``variables``: those the step uses (its traced functions'); by default every live one."""
    import tensorflow as tf

    objects = gc.get_objects()
    if variables is None:
        variables = [o for o in objects if isinstance(o, tf.Variable)]
    else:
        variables = [getattr(v, "_value", v) for v in variables]
    slot_ids: set[int] = set()
    scopes = []
    for opt in _optimizers(objects):
        for v in _optimizer_variables(opt):
            slot_ids.add(id(v))
            slot_ids.add(id(getattr(v, "_value", v)))  # a Keras 3 variable wraps a tf.Variable
        name = getattr(opt, "name", None)
        if isinstance(name, str) and name:
            scopes.append(name)
    out = Holders(optimizer_scopes=tuple(sorted(set(scopes))))
    seen: set[int] = set()
    for v in variables:
        if id(v) in seen or not _on(device_kind, v):
            continue
        seen.add(id(v))
        n = tensor_bytes(v)
        if id(v) in slot_ids:
            out.slots_bytes += n
            out.slots_count += 1
        else:
            out.weights_bytes += n
            out.weights_count += 1
    for value in {id(v): v for v in leaves(inputs)}.values():  # one tensor passed twice: once
        if isinstance(value, tf.Tensor) and not isinstance(value, tf.Variable) \
                and _on(device_kind, value):
            out.inputs_bytes += tensor_bytes(value)
            out.inputs_count += 1
    return out


__all__ = ["Holders", "find_holders", "tensor_bytes"]
