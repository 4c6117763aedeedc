"""Kernel registration messages read by what they list, not by their wording.

TensorFlow says an op has no kernel in three wordings (``No registered 'Op' OpKernel for 'GPU'
devices compatible with node ... Requested Attributes: T=DT_INT32 ... Registered: device='CPU';
T in [DT_FLOAT]``; TF 1.x's ``No OpKernel was registered to support Op 'Op' ... with these
attrs: [T=DT_INT32] Registered devices: [...] Registered kernels: ...``; the placer's ``Could not
find valid device for node ... All kernels registered for op Op: device='...'; T in [...]``).
Each lists the kernels this binary has. Comparing what the node asked for with that list tells
the cause:

- a dtype no registered kernel takes: the input's dtype is wrong for the op: cast it (the dtypes
  that are registered are named);
- the dtype registered, but on other devices than the one asked: the device lacks the kernel:
  soft placement or the CPU;
- no kernel at all (``<no registered kernels>``): the op comes from another build or an add-on
  whose kernels this binary does not hold.
"""

from __future__ import annotations

import re

_HEAD = re.compile(
    r"No registered '(?P<op1>[\w>]+)' OpKernel for '?(?P<dev>[A-Z][A-Z_]*)'? devices|"
    r"No OpKernel was registered to support Op '(?P<op2>[\w>]+)'|"
    r"Could not find (?:valid )?device for node|"
    r"All kernels registered for op (?P<op3>[\w>]+)")
_NEEDLES = ("OpKernel", "device for node", "kernels registered for op")
_ENTRY = re.compile(r"device='(?P<dev>[\w:]+)'(?P<attrs>[^\n]*)")
_ATTR_LIST = re.compile(r"(?P<name>\w+) in \[(?P<types>[^\]]*)\]")
# the attributes the node asked for, in each wording
_REQUESTED = re.compile(r"Requested Attributes: (?P<a>[^\n]*?)(?:\s*\.?\s*Registered:|\n|$)|"
                        r"with these attrs: \[(?P<b>[^\]\n]*)\]|"
                        r"= (?P<op>[\w>]+)\[(?P<c>[^\]\n]*)\]")
_PAIR = re.compile(r"(?P<name>\w+)=(?P<value>DT_\w+)")
_WINDOW = 3000  # characters read after the head: the registered list follows within it
_INTS = ("DT_INT", "DT_UINT", "DT_BOOL", "DT_STRING")


def _registered(block: str) -> list[tuple[str, dict[str, list[str]]]]:
    out = []
    for m in _ENTRY.finditer(block):
        attrs = {a["name"]: [t.strip() for t in a["types"].split(",") if t.strip()]
                 for a in _ATTR_LIST.finditer(m["attrs"])}
        out.append((m["dev"], attrs))
    return out


def _requested(block: str) -> dict[str, str]:
    for m in _REQUESTED.finditer(block):
        raw = m["a"] or m["b"] or m["c"] or ""
        if pairs := {p["name"]: p["value"] for p in _PAIR.finditer(raw)}:
            return pairs
    return {}


def _names(types: list[str]) -> str:
    return ", ".join(t.removeprefix("DT_").lower() for t in types)


def kernel_reading(text: str) -> tuple[str, str, str] | None:
    """(cause, fix, the log's words) from a kernel-registration message, or None when the log
    holds none or its list does not decide."""
    if not any(n in text for n in _NEEDLES):
        return None
    head = _HEAD.search(text)
    if head is None:
        return None
    block = text[head.start():head.start() + _WINDOW]
    op = head["op1"] or head["op2"] or head["op3"] or ""
    if not op and (m := re.search(r"All kernels registered for op (\w+)|\{\{node (\w+)\}\}",
                                  block)):
        op = m[1] or m[2]
    device = head["dev"] or ""
    registered = _registered(block)
    requested = _requested(block)
    shown = block.split("\n", 1)[0][:160]
    name = f"'{op}'" if op else "this op"
    if not registered:
        if "<no registered kernels>" in block:
            return (f"This TensorFlow binary has no kernel at all for {name} "
                    "('<no registered kernels>'): the op is defined but its kernels are not "
                    "built in: an op of another build (a GPU- or TPU-only kernel, a newer "
                    "release, a custom build) or of an add-on whose library was not loaded.",
                    f"Run {name} where its kernels exist: import the add-on that defines it (at "
                    "the release built for this TensorFlow), use the build the graph was made "
                    "for, or replace the op with one this TensorFlow has.", shown)
        return None
    # the dtype attributes the node asked for, against every registered kernel's lists
    for attr, wanted in requested.items():
        lists = [(dev, attrs[attr]) for dev, attrs in registered if attr in attrs]
        if not lists:
            continue
        anywhere = sorted({t for _, types in lists for t in types})
        if anywhere and wanted not in anywhere:
            return (f"No kernel of {name} takes {attr}={_names([wanted])}: the kernels this "
                    f"TensorFlow registers for it take {_names(anywhere)}, so the input reaching "
                    "it has the wrong dtype (an integer, float64 or string tensor where a "
                    "float one is wanted, data read as uint8/int64, a Python int list).",
                    f"Cast the input to a dtype the op takes where it enters "
                    f"(tf.cast(x, tf.{_cast_to(anywhere)}); one of "
                    f"{_names(anywhere)}), or use the op meant for that dtype.", shown)
        devices = sorted({dev for dev, types in lists if wanted in types})
        if device and devices and device not in devices:
            return (f"{name} has a {_names([wanted])} kernel only on {', '.join(devices)}, not "
                    f"on the {device} it was placed on: the device lacks this kernel (an op "
                    "with CPU-only kernels pinned to a GPU, a plugin device that registers "
                    "fewer ops).",
                    f"Let TensorFlow place it (tf.config.set_soft_device_placement(True); "
                    f"allow_soft_placement=True in TF 1.x) or run it under "
                    f"tf.device('/{devices[0]}:0').", shown)
    devices = sorted({dev for dev, _ in registered})
    # TF 1.x lists the devices this process has: none of them among the kernels' devices
    if (have := re.search(r"Registered devices: \[(?P<d>[^\]]*)\]", block)):
        present = {d.strip() for d in have["d"].split(",") if d.strip()}
        if present and devices and not present & set(devices):
            return (f"{name} has kernels only on {', '.join(devices)}, and this process has "
                    f"no {devices[0]} (only {', '.join(sorted(present))}): the op needs a device "
                    "TensorFlow does not see here (a GPU-only custom op on a CPU-only "
                    "TensorFlow, or a GPU its CUDA libraries did not load).",
                    f"Run it where a {devices[0]} is visible (the GPU build of TensorFlow with "
                    "its CUDA and cuDNN; tf.config.list_physical_devices('GPU') must list it), or "
                    "build the op with a kernel for the device you have.", shown)
    if requested:
        return None
    if device and devices and device not in devices:
        return (f"{name} has kernels only on {', '.join(devices)}, not on the {device} it was "
                "placed on: the device lacks this kernel (an op with CPU-only kernels pinned to "
                "a GPU, a plugin device that registers fewer ops).",
                "Let TensorFlow place it (tf.config.set_soft_device_placement(True); "
                "allow_soft_placement=True in TF 1.x) or run it under "
                f"tf.device('/{devices[0]}:0').", shown)
    # no attributes in the message: what the registered lists leave out tells
    anywhere = sorted({t for _, attrs in registered for types in attrs.values() for t in types})
    if anywhere and not any(t.startswith(_INTS) for t in anywhere):
        return (f"The kernels registered for {name} take only {_names(anywhere)} (no integer, "
                "bool or string kernel): no device could run the node, so its input is most "
                "likely of another dtype (an int tensor: a size, a count, labels or image bytes "
                "read as integers).",
                f"Cast the input to a dtype the op takes (tf.cast(x, tf.{_cast_to(anywhere)})) "
                f"before {name}.", shown)
    return None


_TF_NAMES = {"DT_FLOAT": "float32", "DT_DOUBLE": "float64", "DT_HALF": "float16",
             "DT_BFLOAT16": "bfloat16", "DT_INT32": "int32", "DT_INT64": "int64"}


def _cast_to(types: list[str]) -> str:
    """The dtype to name in the fix: float32 where registered, else the first listed."""
    best = "DT_FLOAT" if "DT_FLOAT" in types or not types else types[0]
    return _TF_NAMES.get(best, best.removeprefix("DT_").lower())
