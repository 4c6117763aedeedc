"""Values across a process boundary as NumPy arrays in a ``.npz`` file plus a JSON skeleton.

An isolated candidate's outputs come back to the parent this way (never pickled TensorFlow
objects), and so do the inputs the parent ships to a child: tensors become arrays and are
rebuilt as tensors there. Containers keep their shape: lists, tuples (a namedtuple comes back
as a plain tuple, on both sides of a comparison), dicts with string or integer keys, and the
equivalence checker's own leaves (``Ragged``, ``Sparse``, ``Opaque``). A value that has no
array form (a ``tf.Variable``, a model) raises :class:`ShipError`, whose message says so.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Any

import numpy as np

from tfperf.bench.equivalence import Opaque, Ragged, Sparse


class ShipError(ValueError):
    """A value that cannot be sent to (or from) a child process as arrays."""


class _Packer:
    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}

    def add(self, array: Any) -> str:
        key = f"a{len(self.arrays)}"
        arr = np.asarray(array)
        if arr.dtype == object:  # string tensors: bytes objects → a fixed-width bytes array
            arr = arr.astype(np.bytes_)
        elif arr.dtype.kind == "V":  # bfloat16 and friends (ml_dtypes): .npz keeps no name
            key = f"{key}__{arr.dtype.name}"
            arr = arr.view(f"u{arr.dtype.itemsize}")
        self.arrays[key] = arr
        return key

    def pack(self, value: Any, where: str) -> Any:
        tf = sys.modules.get("tensorflow")
        if isinstance(value, np.generic):  # before int/float: np.float64 is a float
            return {"t": "np", "k": self.add(value)}
        if value is None or isinstance(value, (bool, str)):
            return {"t": "py", "v": value}
        if isinstance(value, (int, float, complex)):
            return {"t": "scalar", "type": type(value).__name__, "k": self.add(value)}
        if isinstance(value, bytes):
            return {"t": "bytes", "k": self.add(np.frombuffer(value, dtype=np.uint8))}
        if isinstance(value, np.ndarray):
            return {"t": "nd", "k": self.add(value)}
        if isinstance(value, Ragged):
            return {"t": "ragged", "lengths": [self.add(r) for r in value.row_lengths],
                    "flat": self.add(value.flat_values)}
        if isinstance(value, Sparse):
            return {"t": "sparse", "indices": self.add(value.indices),
                    "values": self.add(value.values), "shape": list(value.dense_shape)}
        if isinstance(value, Opaque):
            return {"t": "opaque", "name": value.type_name}
        if tf is not None and isinstance(value, tf.Variable):
            raise ShipError(f"{where}: a tf.Variable has state a child process cannot share; "
                            "give an inputs factory defined at module level in a file")
        if tf is not None and isinstance(value, tf.Tensor):
            return {"t": "tensor", "k": self.add(value.numpy())}
        if isinstance(value, dict):
            if not all(isinstance(k, (str, int)) for k in value):
                raise ShipError(f"{where}: only str or int dict keys can be shipped")
            return {"t": "dict", "items": [[k, self.pack(v, f"{where}[{k!r}]")]
                                           for k, v in value.items()]}
        if isinstance(value, (list, tuple)):
            return {"t": "list" if isinstance(value, list) else "tuple",
                    "items": [self.pack(v, f"{where}[{i}]") for i, v in enumerate(value)]}
        raise ShipError(f"{where}: a {type(value).__name__} cannot be shipped to a child "
                        "process as arrays; give an inputs factory defined at module level "
                        "in a file")


def pack(value: Any, where: str = "value") -> tuple[Any, dict[str, np.ndarray]]:
    """``(skeleton, arrays)`` for ``value``; :func:`unpack` rebuilds it."""
    packer = _Packer()
    return packer.pack(value, where), packer.arrays


def save(value: Any, path: Path, where: str = "value") -> Any:
    """Write ``value``'s arrays to ``path`` (``.npz``) and return its skeleton."""
    skeleton, arrays = pack(value, where)
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)  # type: ignore[arg-type]
    return skeleton


def load(skeleton: Any, source: Path | str | bytes) -> Any:
    """The value back from its skeleton and its ``.npz`` (a path, or the file's bytes)."""
    data = io.BytesIO(source) if isinstance(source, bytes) else source
    with np.load(data, allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    for key in [k for k in arrays if "__" in k]:
        import ml_dtypes  # TensorFlow's own dependency for bfloat16 arrays

        arrays[key] = arrays[key].view(getattr(ml_dtypes, key.split("__", 1)[1]))
    return unpack(skeleton, arrays)


def unpack(node: Any, arrays: dict[str, np.ndarray]) -> Any:
    kind = node["t"]
    if kind == "py":
        return node["v"]
    if kind == "scalar":
        return {"int": int, "float": float, "complex": complex, "bool": bool}[node["type"]](
            arrays[node["k"]].item())
    if kind == "bytes":
        return arrays[node["k"]].tobytes()
    if kind == "nd":
        return arrays[node["k"]]
    if kind == "np":
        return arrays[node["k"]][()]
    if kind == "ragged":
        return Ragged(tuple(arrays[k] for k in node["lengths"]), arrays[node["flat"]])
    if kind == "sparse":
        return Sparse(arrays[node["indices"]], arrays[node["values"]], tuple(node["shape"]))
    if kind == "opaque":
        return Opaque(node["name"])
    if kind == "tensor":
        import tensorflow as tf

        return tf.constant(arrays[node["k"]])
    if kind == "dict":
        return {k: unpack(v, arrays) for k, v in node["items"]}
    items = [unpack(v, arrays) for v in node["items"]]
    return items if kind == "list" else tuple(items)
