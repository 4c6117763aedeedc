"""The one-line detail of a cause, from the values its log lines carried.

A knowledge row's ``detail`` template is a "; "-separated list of segments with ``{field}``
placeholders (the regex's named groups). A segment is shown when at least one of its fields
was seen; several values of a field are joined. Some fields are computed because they need
arithmetic or a table: ``shape_detail`` (an OOM tensor's size) and ``cuda_error_detail`` (what
a cuInit error number means) here, and the readings of ``explain_readings`` (the axis a shape
lacks, the C++ ABI of a missing symbol, the cuDNN a build accepts...).
"""

from __future__ import annotations

import re
from math import prod

from tfperf.doctor import explain_readings as R
from tfperf.doctor.explain_keras import flavour_detail

_FIELD = re.compile(r"\{(\w+)\}")
_DTYPE_BYTES = {"float": 4, "float32": 4, "half": 2, "float16": 2, "bfloat16": 2, "double": 8,
                "float64": 8, "int32": 4, "int64": 8, "int16": 2, "int8": 1, "uint8": 1,
                "bool": 1, "complex64": 8, "complex128": 16}


def _mib(n_bytes: float) -> str:
    if n_bytes >= 1 << 30:
        return f"{n_bytes / (1 << 30):.2f} GiB"
    return f"{n_bytes / (1 << 20):.1f} MiB"


def shape_detail(details: dict[str, list[str]]) -> str:
    """ "tensor [64,2016,9,9] float = 39.9 MiB on GPU:0" for the first OOM shape seen."""
    shapes = details.get("shape", [])
    if not shapes:
        sizes = details.get("size", []) + details.get("size2", [])
        return f"allocation of {sizes[0]} failed" if sizes else ""
    dims = [int(d) for d in re.findall(r"\d+", shapes[0])]
    dtype = (details.get("dtype") or [""])[0]
    out = f"tensor [{','.join(map(str, dims))}]"
    if dtype:
        out += f" {dtype}"
        if dtype in _DTYPE_BYTES and dims:
            out += f" = {_mib(prod(dims) * _DTYPE_BYTES[dtype])}"
    device = (details.get("device") or [""])[0]
    if device:
        out += " on " + device.rsplit("device:", 1)[-1]
    if len(shapes) > 1:
        out += f" (+{len(shapes) - 1} other shape{'s' if len(shapes) > 2 else ''})"
    return out


def cuda_error_detail(details: dict[str, list[str]]) -> str:
    """ "303 CUDA_ERROR_SHARED_OBJECT_INIT_FAILED: ... (TensorFlow: ...)" for a cuInit error."""
    from tfperf.doctor.knowledge import cuda_error

    parts = []
    for text in details.get("cuda_error", []):
        name = re.search(r"CUDA_ERROR_\w+", text)
        number = re.search(r"ERROR \((\d+)\)", text)
        err = (cuda_error(name.group(0)) if name else None) or (
            cuda_error(int(number.group(1))) if number else None)
        if err is None:
            parts.append(text)
            continue
        parts.append(f"{err.code} {err.name}: {err.meaning}; likely: {err.hint}")
    return " | ".join(dict.fromkeys(parts))


def dlopen_detail(details: dict[str, list[str]]) -> str:
    """ "missing: libcudnn.so.8, libcublas.so.11" plus a dependency the dlerror names instead."""
    libs = details.get("lib", []) + details.get("lib2", []) + details.get("lib3", [])
    out = f"missing: {', '.join(libs)}" if libs else ""
    deps = []
    for err in details.get("dlerror", []):
        named = err.split(":", 1)[0].strip()
        if named and named not in libs and " " not in named:
            deps.append(named)
    if deps:
        out += ("; " if out else "") + "a dependency is what is missing: " + ", ".join(
            dict.fromkeys(deps))
    return out


def alloc_detail(details: dict[str, list[str]]) -> str:
    from tfperf.doctor.explain_memory import allocation_detail

    return allocation_detail(details) if details.get("bytes") else ""


def glob_detail(details: dict[str, list[str]]) -> str:
    """The file pattern that matched nothing, or that it was empty (the value never arrived)."""
    if details.get("glob_pattern"):
        return f"pattern {details['glob_pattern'][0]!r}"
    if details.get("glob_empty"):
        return "the pattern is empty: the flag or setting that should hold it was not given"
    return ""


def ckpt_empty_detail(details: dict[str, list[str]]) -> str:
    """A checkpoint looked for at an empty path: the value never arrived."""
    if details.get("ckpt_empty") and not any(details.get(k) for k in ("ckpt", "ckpt2", "ckpt3")):
        return ("the checkpoint path is empty: the flag, argument or config key that should name "
                "the checkpoint (its prefix, e.g. model.ckpt-1000) was not given")
    return ""


def retrace_detail(details: dict[str, list[str]]) -> str:
    """ "Model.make_train_function.<locals>.train_function: 5 of the last 5 calls traced" ."""
    fns = [f.split(" at 0x")[0].rstrip(">") for f in details.get("function", [])]
    counts = list(zip(details.get("count", []), details.get("total", []), strict=False))
    if not fns:
        return ""
    out = ", ".join(dict.fromkeys(fns))
    if counts:
        out += f": {counts[-1][0]} of the last {counts[-1][1]} calls traced again"
    return out


_COMPUTED = {"shape_detail": shape_detail, "cuda_error_detail": cuda_error_detail,
             "dlopen_detail": dlopen_detail, "retrace_detail": retrace_detail,
             "glob_detail": glob_detail, "ckpt_empty_detail": ckpt_empty_detail,
             # what this log's values mean beyond the row (explain_readings)
             "shape_axis_detail": R.shape_axis_detail, "nontrainable_detail": R.nontrainable_detail,
             "op_kind_detail": R.op_kind_detail, "abi_detail": R.abi_detail,
             "unknown_object_detail": R.unknown_object_detail,
             "container_detail": R.container_detail, "cudnn_detail": R.cudnn_detail,
             "target_detail": R.target_detail, "serving_detail": R.serving_detail,
             "loader_detail": R.loader_detail, "mixed_detail": R.mixed_detail,
             "flavour_detail": flavour_detail, "alloc_detail": alloc_detail,
             "ampere_detail": R.ampere_detail, "pin_detail": R.pin_detail,
             "wheel_detail": R.wheel_detail, "tflite_input_detail": R.tflite_input_detail}


def render_detail(template: str, details: dict[str, list[str]]) -> str:
    if not template or not details:
        return ""
    values = {name: ", ".join(vals) for name, vals in details.items()}
    for name, fn in _COMPUTED.items():
        if name in template:
            values[name] = fn(details)
    out = []
    for segment in template.split("; "):
        names = _FIELD.findall(segment)
        if not any(values.get(n) for n in names):
            continue
        out.append(_FIELD.sub(lambda m: values.get(m.group(1), ""), segment))
    return "; ".join(out)
