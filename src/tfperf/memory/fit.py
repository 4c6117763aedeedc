"""Will it fit, before running: a step's predicted peak for a batch size, a device and a
precision; the largest batch that fits; XLA and mixed precision side by side.

The step is traced (never run) for inputs whose axis 0, the batch axis, is the batch asked
for; the peak is what the step holds from before (variables: weights and optimizer slots;
captured tensors; graph constants; its inputs) plus the transient peak of its graph
(``graph_memory``) or, under XLA, of its compiled module (``hlo_memory``). The largest batch
is searched on the usual batch sizes (powers of two and 1.5× them: 1, 2, 3, 4, 6, 8, 12, 16,
24, ...). Where the device is this machine (a CPU run), the prediction is checked: one step
runs at that batch and the allocator's peak is measured.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tfperf.core import render
from tfperf.core.findings import Finding, Status
from tfperf.memory.devices import DeviceLimit, host_memory
from tfperf.memory.graph_memory import Live, simulate, tensor_bytes

MAX_BATCH = 1 << 20
#: TensorFlow's CUDA context and library workspaces, not modelled: said, not subtracted
RUNTIME_NOTE = ("a GPU's CUDA context and cuDNN/cuBLAS workspaces take a few hundred MiB of "
                "its memory beyond this prediction")


def batch_grid(upto: int = MAX_BATCH) -> list[int]:
    """1, 2, 3, 4, 6, 8, 12, 16, 24, ... up to ``upto``."""
    out, p = [1], 2
    while p <= upto:
        out.append(p)
        if p * 3 // 2 <= upto and p >= 2:
            out.append(p * 3 // 2)
        p *= 2
    return sorted(set(out))


@dataclass
class Prediction:
    batch: int
    xla: bool
    precision: str
    persistent_bytes: int = 0  # variables, captured tensors, constants
    inputs_bytes: int = 0
    transient_bytes: int = 0  # the graph's own peak
    at: str = ""
    live: list[Live] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    #: measured: the step's own peak, above what it started with (tensor bytes, from a
    #: capture of 3 steps: the highest), compared with ``transient_bytes``
    measured_bytes: int | None = None
    error: str | None = None

    @property
    def peak_bytes(self) -> int:
        return self.persistent_bytes + self.inputs_bytes + self.transient_bytes

    @property
    def error_ratio(self) -> float | None:
        if not self.measured_bytes:
            return None
        return self.transient_bytes / self.measured_bytes - 1

    def to_dict(self) -> dict[str, Any]:
        return {"batch": self.batch, "xla": self.xla, "precision": self.precision,
                "peak_bytes": self.peak_bytes, "persistent_bytes": self.persistent_bytes,
                "inputs_bytes": self.inputs_bytes, "transient_bytes": self.transient_bytes,
                "peak_at": self.at, "live_at_peak": [x.to_dict() for x in self.live[:10]],
                "unknown": self.unknown, "measured_transient_bytes": self.measured_bytes,
                "error_vs_measured": self.error_ratio, "error": self.error}


# ---------------------------------------------------------------------------------------------
# inputs at another batch size


def batch_size_of(values: Any) -> int | None:
    """The inputs' batch size: axis 0 of the first tensor (in argument order) that has one."""
    for v in _leaves(values):
        shape = getattr(v, "shape", None)
        if shape is not None and len(shape) >= 1 and shape[0] is not None \
                and not hasattr(v, "assign"):
            return int(shape[0])
    return None


def _leaves(value: Any) -> list[Any]:
    """Leaves in argument order (depth first, left to right)."""
    if isinstance(value, dict):
        return [x for v in value.values() for x in _leaves(v)]
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _leaves(v)]
    return [value]


def _map(value: Any, fn: Callable[[Any], Any]) -> Any:
    if isinstance(value, dict):
        return {k: _map(v, fn) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(_map(v, fn) for v in value)
    if isinstance(value, list):
        return [_map(v, fn) for v in value]
    return fn(value)


def specs_for(args: Any, n0: int, batch: int) -> Any:
    """TensorSpecs of ``args`` with axis 0 set to ``batch`` where it was ``n0``."""
    import tensorflow as tf

    def spec(v: Any) -> Any:
        if isinstance(v, tf.Variable) or not hasattr(v, "shape") or not hasattr(v, "dtype"):
            return v
        shape = list(v.shape)
        if shape and shape[0] == n0:
            shape[0] = batch
        return tf.TensorSpec(shape, tf.as_dtype(v.dtype))

    return _map(args, spec)


def inputs_at(args: Any, n0: int, batch: int) -> Any:
    """Real inputs with axis 0 grown or cut to ``batch`` (rows repeated)."""
    import tensorflow as tf

    def resize(v: Any) -> Any:
        if isinstance(v, tf.Variable) or not hasattr(v, "shape") or not hasattr(v, "dtype"):
            return v
        if not len(v.shape) or v.shape[0] != n0:
            return v
        t = tf.convert_to_tensor(v)
        reps = -(-batch // n0)
        if reps > 1:
            t = tf.concat([t] * reps, axis=0)
        return t[:batch]

    return _map(args, resize)


# ---------------------------------------------------------------------------------------------
# one prediction


def as_function(fn: Callable[..., Any], xla: bool) -> Any:
    import tensorflow as tf

    py = getattr(fn, "python_function", None)
    if py is None or not hasattr(fn, "get_concrete_function"):
        py = fn
    elif not xla:
        return fn  # the user's tf.function as it is (its own options)
    return tf.function(py, jit_compile=True) if xla else tf.function(py)


def predict(fn: Callable[..., Any], args: tuple, kwargs: dict, batch: int, *, xla: bool = False,
            precision: str = "float32", n0: int | None = None,
            function: Any = None) -> Prediction:
    """The predicted peak of one call of ``fn`` with the inputs' axis 0 at ``batch``."""
    out = Prediction(batch, xla, precision)
    n0 = n0 or batch_size_of((args, kwargs)) or batch
    spec_args = specs_for(args, n0, batch)
    spec_kwargs = specs_for(kwargs, n0, batch)
    tf_fn = function if function is not None else as_function(fn, xla)
    try:
        concrete = tf_fn.get_concrete_function(*spec_args, **spec_kwargs)
    except Exception as exc:
        out.error = f"tracing failed: {type(exc).__name__}: {exc}"
        return out
    # an argument passed twice is one tensor: count each input once
    firsts = {id(v): k for k, v in reversed(list(enumerate(_leaves((args, kwargs)))))}
    out.inputs_bytes = sum(_spec_bytes(s) for k, s in enumerate(_leaves((spec_args, spec_kwargs)))
                           if k in firsts.values())
    # at the inputs' own batch an argument the step also captures is one tensor: count it
    # once, as an input (at another batch the argument is a new tensor, the capture stays)
    passed = {id(v) for v in _leaves((args, kwargs))} if batch == n0 else set()
    out.persistent_bytes = _persistent(concrete, skip=passed)
    if xla:
        try:
            from tfperf.memory.hlo_memory import peak_of_module

            data = tf_fn.experimental_get_compiler_ir(*spec_args, **spec_kwargs)(
                stage="optimized_hlo_serialized")
            hlo = peak_of_module(bytes(data))
        except Exception as exc:
            out.error = f"XLA compilation failed: {type(exc).__name__}: {exc}"
            return out
        out.transient_bytes, out.at = hlo.peak_bytes, hlo.at
        return out
    peak = simulate(concrete.graph)
    out.transient_bytes, out.at, out.live = peak.peak_bytes, peak.at, peak.live
    out.persistent_bytes += peak.folded_bytes
    out.unknown = sorted(peak.unknown)
    return out


def _spec_bytes(s: Any) -> int:
    try:
        n = s.shape.num_elements()
        return int(n) * int(s.dtype.size) if n is not None else 0
    except Exception:
        return 0


def _persistent(concrete: Any, skip: set[int] | frozenset[int] = frozenset()) -> int:
    """Variables the step uses, tensors it captures (but those in ``skip``, by id) and its
    graph's constants."""
    from tfperf.memory.holders import tensor_bytes as held_bytes

    total = 0
    seen: set[int] = set()
    for v in getattr(concrete, "variables", ()) or ():
        if id(v) not in seen:
            seen.add(id(v))
            total += held_bytes(v)
    for c in getattr(concrete, "captured_inputs", ()) or ():
        if getattr(c, "dtype", None) is not None and c.dtype.name != "resource" \
                and id(c) not in skip:
            total += held_bytes(c)
    for op in concrete.graph.get_operations():
        if op.type == "Const":
            total += tensor_bytes(op.outputs[0]) or 0
    return total


# ---------------------------------------------------------------------------------------------
# measured


def measure_peak(fn: Callable[..., Any], args: tuple, kwargs: dict, *, warm: bool = True
                 ) -> int | None:
    """The CPU allocator's peak during one call (None when it keeps no statistics)."""
    from tfperf.core.measure import sync
    from tfperf.memory import allocator

    if warm:
        sync(fn(*args, **kwargs))
    if not allocator.reset_peak("CPU:0"):
        return None
    sync(fn(*args, **kwargs))
    info = allocator.memory_info("CPU:0")
    return int(info["peak"]) if info else None


def measured_transient(fn: Callable[..., Any], args: tuple, kwargs: dict,
                       steps: int = 3) -> int | None:
    """The step's own peak above what it started with: the highest of ``steps`` captured
    steps, in tensor bytes (what the tensors asked for, without the allocator's rounding);
    None when the capture holds no allocation events."""
    import tempfile

    from tfperf.memory.runner import memory_profile

    with tempfile.TemporaryDirectory(prefix="tfperf-fit-") as logdir:
        report = memory_profile(fn, *args, steps=steps, leak_steps=0, logdir=logdir, **kwargs)
    if report.error is not None:
        raise report.error
    cpu = next((d for d in report.devices if d.device == "CPU"), None)
    if cpu is None:
        return None
    return max(s.tensor_peak_bytes - s.start_bytes for s in cpu.steps)


def measured_prediction(fn: Callable[..., Any], args: tuple, kwargs: dict, p: Prediction,
                        n0: int) -> None:
    """Run the step at ``p.batch`` and set ``p.measured_bytes`` (its own peak)."""
    import gc

    real_args = inputs_at(args, n0, p.batch)
    real_kwargs = inputs_at(kwargs, n0, p.batch)
    runner = as_function(fn, p.xla)
    try:
        p.measured_bytes = measured_transient(runner, real_args, real_kwargs)
    except Exception as exc:  # out of memory, or the step cannot run at this batch
        p.error = f"the measured run failed: {type(exc).__name__}: {str(exc)[:200]}"
    del real_args, real_kwargs
    gc.collect()


# ---------------------------------------------------------------------------------------------
# the largest batch


def largest_batch(fn: Callable[..., Any], args: tuple, kwargs: dict, limit: int, *,
                  xla: bool = False, precision: str = "float32", n0: int | None = None,
                  grid: Sequence[int] | None = None) -> tuple[int | None, list[Prediction]]:
    """The largest batch on ``grid`` whose predicted peak is at most ``limit``.

    Peaks grow about linearly with the batch: two predictions place the answer, and the
    grid points around it are predicted to confirm it (a graph that is not linear in the
    batch is still answered exactly, only with more traces)."""
    grid = list(grid or batch_grid())
    n0 = n0 or batch_size_of((args, kwargs)) or 1
    function = as_function(fn, xla)
    tried: dict[int, Prediction] = {}

    def fits(b: int) -> bool:
        if b not in tried:
            tried[b] = predict(fn, args, kwargs, b, xla=xla, precision=precision, n0=n0,
                               function=function)
        p = tried[b]
        return p.error is None and p.peak_bytes <= limit

    lo_i = 0
    if not fits(grid[0]):
        return None, list(tried.values())
    hi_i = min(len(grid) - 1, 8)
    a, b = tried[grid[0]], None
    if fits(grid[hi_i]):
        b = tried[grid[hi_i]]
        slope = (b.peak_bytes - a.peak_bytes) / max(grid[hi_i] - grid[0], 1)
        guess = grid[0] + (limit - a.peak_bytes) / slope if slope > 0 else grid[-1]
        k = max((i for i, g in enumerate(grid) if g <= guess), default=0)
        lo_i = hi_i
        hi_i = len(grid) - 1
        if fits(grid[k]):
            lo_i = max(lo_i, k)
            if k + 1 < len(grid) and not fits(grid[k + 1]):
                return grid[k], list(tried.values())
        else:
            hi_i = k
    while hi_i - lo_i > 1:  # bisection on the grid: the peak grows with the batch
        mid = (lo_i + hi_i) // 2
        if fits(grid[mid]):
            lo_i = mid
        else:
            hi_i = mid
    best = grid[hi_i] if fits(grid[hi_i]) else grid[lo_i]
    return best, list(tried.values())


# ---------------------------------------------------------------------------------------------
# the report


@dataclass
class FitReport:
    target: str
    device: DeviceLimit | None
    batch: int
    rows: list[Prediction]  # the batch asked for: float32/mixed × XLA or not
    largest: dict[str, int | None] = field(default_factory=dict)  # config → largest batch
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def exit_status(self) -> int:
        return 1 if any(f.status in (Status.WARN, Status.FAIL) for f in self.findings) else 0

    def to_dict(self) -> dict[str, Any]:
        return {"target": self.target, "device": self.device.to_dict() if self.device else None,
                "batch": self.batch, "predictions": [r.to_dict() for r in self.rows],
                "largest_batch": self.largest,
                "findings": [f.to_dict() for f in self.findings], "notes": self.notes}

    def to_json(self, indent: int | None = 2) -> str:
        return render.to_json(self.to_dict(), indent=indent)

    def __str__(self) -> str:
        return self.text()

    def text(self, color: bool = False) -> str:
        from tfperf.memory.report import fmt_bytes

        dev = (f"{self.device.name}: {fmt_bytes(self.device.bytes)}" if self.device
               else "no device limit")
        out = [render.style(f"tfperf profile --fit  {self.target}", "bold", color=color),
               f"batch {self.batch} on {dev}", ""]
        rows = []
        for p in self.rows:
            fits = "–" if self.device is None or p.error else (
                "yes" if p.peak_bytes <= self.device.bytes else "NO")
            measured = fmt_bytes(p.measured_bytes) if p.measured_bytes else "–"
            err = f"{p.error_ratio:+.0%}" if p.error_ratio is not None else ""
            best = self.largest.get(_config(p))
            largest = "–" if best is None else (f"≥ {best}" if best >= MAX_BATCH else best)
            if p.error:  # nothing was predicted: no sizes to show (0 B would be a figure)
                rows.append([p.precision, "XLA" if p.xla else "graph", "error", "–", "–",
                             fits, measured, err, largest])
                continue
            rows.append([p.precision, "XLA" if p.xla else "graph", fmt_bytes(p.peak_bytes),
                         fmt_bytes(p.persistent_bytes + p.inputs_bytes),
                         fmt_bytes(p.transient_bytes), fits, measured, err, largest])
        out.append(render.text_table(
            ["precision", "run", "predicted peak", "held", "transient", "fits",
             "measured transient", "vs measured", "largest batch"], rows, "llrrrlrrr"))
        for p in self.rows:
            if p.error:
                out.append(f"{p.precision} {'XLA' if p.xla else 'graph'}: {p.error}")
        main = next((p for p in self.rows if not p.error and not p.xla), None)
        if main is not None and main.live:
            out += ["", f"live at the predicted peak ({main.precision}, graph; at {main.at})"]
            out.append(render.text_table(
                ["node", "bytes", "shape"],
                [[x.node, fmt_bytes(x.bytes), x.shape] for x in main.live[:8]], "lrl"))
        for f in self.findings:
            out.append(f"{render.status_badge(f.status, color)} {f.message}")
            if f.hint:
                out.append(f"     → {f.hint}")
        out += [f"note: {n}" for n in self.notes]
        return "\n".join(out)


def _config(p: Prediction) -> str:
    return f"{p.precision}{' XLA' if p.xla else ''}"


def will_it_fit(fn: Callable[..., Any], *args: Any, batch: int | None = None,
                device: DeviceLimit | str | int | None = None, xla: Sequence[bool] = (False, True),
                measure: bool | None = None, precision: str = "float32",
                variants: dict[str, tuple[Callable[..., Any], tuple, dict]] | None = None,
                target: str | None = None, **kwargs: Any) -> FitReport:
    """Predict ``fn(*args, **kwargs)``'s peak at ``batch`` (default: the inputs' own).

    ``device``: a :class:`DeviceLimit`, a GPU name or size string, a number of bytes, or None
    (this machine's available RAM, and the prediction is checked by one measured step).
    ``variants``: other precisions of the same step, ``{"mixed_float16": (fn, args, kwargs)}``
    (a model must be built under a policy to run in it), shown beside it."""
    from tfperf.memory.devices import parse_device

    limit: DeviceLimit | None
    if isinstance(device, DeviceLimit) or device is None:
        limit = device
    elif isinstance(device, int):
        limit = DeviceLimit(f"{device} bytes", device, "given")
    else:
        limit = parse_device(device)
    local = limit is None or limit.source in ("given", "/proc/meminfo")
    if limit is None:
        limit = host_memory()
    if measure is None:
        measure = local
    n0 = batch_size_of((args, kwargs)) or 1
    b = batch or n0
    configs: list[tuple[str, Callable[..., Any], tuple, dict]] = [(precision, fn, args, kwargs)]
    for name, (vfn, vargs, vkwargs) in (variants or {}).items():
        configs.append((name, vfn, vargs, vkwargs))
    report = FitReport(target or str(getattr(fn, "__qualname__", None) or repr(fn)), limit, b,
                       [])
    for name, cfn, cargs, ckwargs in configs:
        cn0 = batch_size_of((cargs, ckwargs)) or n0
        for use_xla in xla:
            p = predict(cfn, cargs, ckwargs, b, xla=use_xla, precision=name, n0=cn0)
            if measure and p.error is None:
                measured_prediction(cfn, cargs, ckwargs, p, cn0)
            report.rows.append(p)
            if limit is not None and p.error is None:
                best, _ = largest_batch(cfn, cargs, ckwargs, limit.bytes, xla=use_xla,
                                        precision=name, n0=cn0)
                report.largest[_config(p)] = best
    _judge(report)
    return report


def _judge(report: FitReport) -> None:
    from tfperf.memory.report import fmt_bytes

    if report.device is None:
        return
    for p in report.rows:
        if p.error is not None:
            continue
        cfg = _config(p)
        if p.peak_bytes > report.device.bytes:
            best = report.largest.get(cfg)
            report.findings.append(Finding(
                "memory.fit", f"{cfg}: batch {p.batch} needs about {fmt_bytes(p.peak_bytes)}, "
                f"more than {report.device.name}'s {fmt_bytes(report.device.bytes)}",
                Status.WARN, name="does-not-fit",
                hint=(f"largest batch that fits: {best}" if best else "even batch 1 does not "
                      "fit: a smaller model, or mixed precision") +
                "; mixed precision halves activations on GPUs (S15)", data=p.to_dict()))
    if report.device.source not in ("given", "/proc/meminfo"):
        report.notes.append(RUNTIME_NOTE)
    unknown = sorted({u for p in report.rows for u in p.unknown})
    if unknown:
        report.notes.append("outputs of unknown size counted as 0: " + ", ".join(unknown[:6]))
    report.notes.append("not modelled: kernels' scratch memory (oneDNN/cuDNN workspaces) and "
                        "the allocator's fragmentation")


def run_fit(spec: str, inputs: str | None, *, batch: int | None, device: DeviceLimit | None,
            precision: str, quick: bool = False) -> FitReport:
    """``tfperf profile --fit MODULE:FUNCTION --inputs ...``: the target as loaded, and once
    more loaded under the other precision policy (a model is built under the policy)."""
    from tfperf.profile.runner import resolve_function

    other = "float32" if precision != "float32" else "mixed_float16"
    fn, args, kwargs = _load_under(precision, spec, inputs, quick, resolve_function)
    variants = {}
    note = ""
    try:
        loaded = _load_under(other, spec, inputs, quick, resolve_function)
    except Exception as exc:  # the module cannot be built twice: say so, predict the one
        note = f"{other} not predicted: loading the target again failed: {exc}"
    else:
        if loaded[0] is fn:  # an installed module is imported once: not rebuilt
            note = (f"{other} not predicted: {spec.rpartition(':')[0]} is a module Python "
                    "imports once, so its model cannot be built again in that policy: give "
                    "its file (FILE.py:FUNCTION)")
        else:
            variants[other] = loaded
    report = will_it_fit(fn, *args, batch=batch, device=device, precision=precision,
                         variants=variants, target=spec, **kwargs)
    if note:
        report.notes.append(note)
    return report


def _load_under(policy: str, spec: str, inputs: str | None, quick: bool,
                resolve: Callable[..., tuple[Any, tuple, dict]]) -> tuple[Any, tuple, dict]:
    """Load the target with Keras's global precision policy set, then restore it."""
    try:
        import keras
    except ImportError:
        keras = None
    previous = keras.config.dtype_policy().name if keras is not None else None
    if keras is not None:
        keras.config.set_dtype_policy(policy)
    try:
        return resolve(spec, inputs, quick=quick)
    finally:
        if keras is not None and previous is not None:
            keras.config.set_dtype_policy(previous)


__all__ = ["FitReport", "Prediction", "batch_grid", "batch_size_of", "inputs_at",
           "largest_batch", "measure_peak", "predict", "run_fit", "specs_for", "will_it_fit"]

