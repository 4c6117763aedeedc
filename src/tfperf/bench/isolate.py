"""Peak memory of one variant in a process of its own (``--isolate``), on the CPU.

The parent cannot measure a variant's memory in-process: its RSS holds every other
variant's leftovers. So each variant is called once more in a fresh ``python -m
tfperf.bench.isolate`` child, which builds the inputs, resets the kernel's peak-RSS mark
(Linux ``/proc/self/clear_refs``), calls the variant, and reports the peak. The child is
killed if it outlives the time limit.

A child finds the variant either in a bench file (path + variant name, inputs rebuilt by its
``@inputs`` function) or, for the Python API, by the function's source file and qualified
name, with the arguments passed as NumPy arrays in a pickle. Either way the child *imports
and executes* that file (:func:`tfperf.core.usercode.import_file`): its top level runs again.
For the Python API, a calling script whose top level would run the comparison again (no
``if __name__ == "__main__":`` guard) is refused before anything runs, as
``multiprocessing`` requires of spawned children.
"""

from __future__ import annotations

import inspect
import json
import pickle
import resource
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from tfperf.core.tensorflow_logs import last_line_worth_showing
from tfperf.core.usercode import runs_at_import

_MARK = "TFPERF_ISOLATE_RESULT "


def _status_bytes(key: str) -> int | None:
    """A ``/proc/self/status`` memory line (``VmHWM``, ``VmRSS``) in bytes; None off Linux."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _rss_hwm_bytes() -> int | None:
    """Peak RSS since the last reset (VmHWM), or None off Linux."""
    return _status_bytes("VmHWM")


def _rss_now_bytes() -> int | None:
    return _status_bytes("VmRSS")


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")  # "5": reset the peak RSS mark (Linux ≥ 4.0)
        return True
    except OSError:
        return False


class _TensorArg:
    """A TF tensor shipped to the child as NumPy, rebuilt there as a tensor."""

    def __init__(self, array: Any) -> None:
        self.array = array


def _pack(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _pack(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_pack(v) for v in value)
    tf = sys.modules.get("tensorflow")
    if tf is not None and isinstance(value, tf.Tensor):
        return _TensorArg(value.numpy())
    return value


def _unpack(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _unpack(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_unpack(v) for v in value)
    if isinstance(value, _TensorArg):
        import tensorflow as tf

        return tf.constant(value.array)
    return value


def _function_source(fn: Any) -> dict[str, str] | None:
    target = getattr(fn, "python_function", fn)  # tf.function keeps the original here
    qualname = getattr(target, "__qualname__", "")
    try:
        path = inspect.getsourcefile(target)
    except TypeError:
        return None
    if not path or "<locals>" in qualname or "<lambda>" in qualname:
        return None
    return {"file": path, "qualname": getattr(fn, "__qualname__", qualname)}


class IsolateError(ValueError):
    """``isolate=True`` cannot be honoured safely; the message says what to change."""


def _top_level_calls() -> dict[str, int]:
    """File → line of each module-level frame on the stack: files being executed right now
    (imported or run as a script), and the line they are at."""
    out: dict[str, int] = {}
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "<module>" and not frame.f_code.co_filename.startswith("<"):
            out[str(Path(frame.f_code.co_filename).resolve())] = frame.f_lineno
        frame = frame.f_back
    return out


def refuse_unguarded_caller(variants: Sequence[Any]) -> None:
    """Raise :class:`IsolateError` if a child would re-run the comparison that spawns it.

    The child imports the file that defines each variant. When that file is executing its
    top level right now (the comparison is called from it, directly or through functions)
    and the line it is at is not under ``if __name__ == "__main__":``, the child's import
    would run the comparison again, which would spawn children again.
    """
    running = _top_level_calls()
    for v in variants:
        if getattr(v, "source", None):  # a bench file: the loader imports it, no compare in it
            continue
        src = _function_source(v.fn)
        if src is None:
            continue
        path = str(Path(src["file"]).resolve())
        if path in running and runs_at_import(path, running[path]):
            raise IsolateError(
                f"isolate=True runs each variant in a child process that imports {path} to "
                f"find {src['qualname']!r}; line {running[path]} of that file, which leads to "
                "this comparison, is not under `if __name__ == \"__main__\":`, so the child "
                "would run the comparison again. Put the script's work under "
                "`if __name__ == \"__main__\":` (or define the variants in another module).")


def measure_isolated(variant: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
                     timeout: float = 600.0) -> dict[str, Any]:
    """Run ``variant`` once in a child process; its peak RSS as a ``memory`` dict."""
    source = variant.source or _function_source(variant.fn)
    if source is None:
        return {"peak_bytes": None, "source": "not measured: --isolate needs a function "
                "defined at module level in a file (no lambda or closure)"}
    with tempfile.TemporaryDirectory(prefix="tfperf-isolate-") as tmp:
        spec = dict(source)
        if "variant" not in spec:  # Python API: ship the arguments
            args_path = Path(tmp) / "args.pkl"
            with open(args_path, "wb") as fh:
                pickle.dump((_pack(args), _pack(kwargs)), fh)
            spec["args_pickle"] = str(args_path)
        try:  # the child quiets TensorFlow's start-up as this process did (the environment)
            proc = subprocess.run([sys.executable, "-m", "tfperf.bench.isolate",
                                   json.dumps(spec)], capture_output=True, text=True,
                                  timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"peak_bytes": None, "source": f"isolated run killed after {timeout:g} s"}
    for line in proc.stdout.splitlines():
        if line.startswith(_MARK):
            return json.loads(line[len(_MARK):])
    tail = last_line_worth_showing(proc.stderr) or describe_exit(proc.returncode)
    return {"peak_bytes": None, "source": f"isolated run failed: {tail[:200]}"}


def describe_exit(returncode: int) -> str:
    """``exited with status 3`` / ``killed by signal 9 (SIGKILL)``."""
    if returncode < 0:
        try:
            name = f" ({signal.Signals(-returncode).name})"
        except ValueError:
            name = ""
        return f"killed by signal {-returncode}{name}"
    return f"exited with status {returncode}"


def _load_target(spec: dict[str, Any]) -> tuple[Any, tuple[Any, ...], dict[str, Any]]:
    if "variant" in spec:
        from tfperf.bench.loader import load_bench_file

        bench = load_bench_file(spec["file"])
        chosen = next(v for v in bench.variants if v.name == spec["variant"])
        args, kwargs = bench.inputs_for(chosen, quick=bool(spec.get("quick")))
        return chosen.fn, args, kwargs
    from tfperf.core.usercode import import_file

    module = import_file(spec["file"], prefix="_tfperf_isolated_")
    fn: Any = module
    for part in spec["qualname"].split("."):
        fn = getattr(fn, part)
    with open(spec["args_pickle"], "rb") as fh:
        args, kwargs = pickle.load(fh)
    return fn, _unpack(args), _unpack(kwargs)


def _child(spec: dict[str, Any]) -> None:
    from tfperf.core.measure import sync
    from tfperf.core.tensorflow_logs import quiet_child_startup

    quiet_child_startup()
    fn, args, kwargs = _load_target(spec)
    start = _rss_now_bytes()
    reset = _reset_peak()
    sync(fn(*args, **kwargs))
    peak = _rss_hwm_bytes() if reset else None
    if peak is None:  # no resettable mark: the process's lifetime peak
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    result = {"peak_bytes": peak,
              "above_start_bytes": peak - start if start is not None else None,
              "source": "peak RSS of an isolated process, one call"
                        + ("" if reset else " (lifetime peak: includes start-up)")}
    print(_MARK + json.dumps(result), flush=True)


if __name__ == "__main__":
    _child(json.loads(sys.argv[1]))
