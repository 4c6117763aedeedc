"""Leaks across steps: memory per step, a trend test, and the cause named by its evidence.

Per step: the process's resident memory (``/proc``), each device allocator's bytes in use
(``get_memory_info``: tensors TensorFlow holds, exact), and the counters of ``evidence.py``.
The first steps are left out (warm-up: a first trace, caches filling). Then:

* an exact counter of objects TensorFlow keeps that climbs with the steps *is* a leak,
  whatever the memory figures say (those objects are never freed): a ``tf.function`` whose
  cache grows (**retracing**), live ``tf.function`` objects or iterators created per step
  (**created per step**), ``py_function`` callables kept by the global graph
  (**py_function closures**), a Python container whose tensors grow (**tensor container**);
* otherwise a memory trend that passes the test of ``trend.py`` is a leak, its cause named
  when objects were created per step alongside it (a Keras predict function built per call:
  **predict graphs**; iterators or tf.functions created per step), else **unexplained**.
A steady loop (every counter flat, memory within its noise) gets no finding.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tfperf.core.findings import Finding, Location, Status
from tfperf.memory import evidence as ev
from tfperf.memory.rss import rss_bytes
from tfperf.memory.trend import Trend, rises, trend

DEFAULT_STEPS = 20
CAUSES = ("retracing", "predict-graphs", "created-per-step", "tensor-container",
          "py-function-closure", "unexplained")


def warmup_steps(n: int) -> int:
    """Steps left out before judging: a fifth of them, at least 2 (20 steps: 4)."""
    return max(2, n // 5)


@dataclass
class StepSample:
    step: int
    rss: int | None
    device: dict[str, int]  # allocator bytes in use per device
    counts: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.step, "rss_bytes": self.rss, "device_bytes": self.device}


@dataclass
class LeakReport:
    samples: list[StepSample]
    warmup: int
    trends: dict[str, Trend]  # "host RSS", "CPU:0"...
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def leaks(self) -> list[Finding]:
        return [f for f in self.findings if f.code == "memory.leak"]

    def to_dict(self) -> dict[str, Any]:
        return {"steps": len(self.samples), "warmup": self.warmup,
                "samples": [s.to_dict() for s in self.samples],
                "trends": {k: t.to_dict() for k, t in self.trends.items()},
                "leaks": [f.to_dict() for f in self.leaks], "notes": self.notes}


class LeakWatch:
    """``with LeakWatch() as w: ... w.step() ...``; then ``w.report()``.

    ``devices``: allocators to read per step (default: each of ``CPU:0``/``GPU:N`` that keeps
    statistics). ``functions``: ``tf.function`` objects made before the watch began, so their
    traces count too.
    """

    def __init__(self, devices: Sequence[str] | None = None,
                 functions: Sequence[Any] = (), warmup: int | None = None) -> None:
        self.evidence = ev.Evidence()
        self.samples: list[StepSample] = []
        self._devices = list(devices) if devices is not None else None
        self._functions = list(functions)
        self._warmup = warmup
        self._containers_before: ev.Containers | None = None
        self._containers_after: ev.Containers | None = None
        self._py_sites_before: Any = None
        self._active = False
        self._expected: int | None = None

    def expect(self, steps: int) -> None:
        """The number of steps to come, so the warm-up snapshot is taken at the right one."""
        self._expected = steps

    def __enter__(self) -> LeakWatch:
        # garbage left by earlier work (a notebook's cells, other tests) is freed now, not in
        # the watched steps, where the collector's frees would read as noise in the RSS
        gc.collect()
        self.evidence.__enter__()
        self.evidence.adopt(self._functions or None)
        self._active = True
        return self

    def __exit__(self, *exc: object) -> None:
        if self._active:
            self._finish()

    def _finish(self) -> None:
        self._active = False
        self.evidence.__exit__()
        if self._containers_before is not None and self._containers_after is None:
            self._containers_after = ev.container_snapshot(keep=True)

    def _device_names(self) -> list[str]:
        if self._devices is None:
            from tfperf.memory import allocator

            names = ["CPU:0"]
            try:
                import tensorflow as tf

                names += [f"GPU:{i}" for i, _ in
                          enumerate(tf.config.list_logical_devices("GPU"))]
            except Exception:
                pass
            self._devices = [d for d in names if allocator.memory_info(d) is not None]
        return self._devices

    def step(self) -> None:
        """Sample now: call once at the end of every step."""
        from tfperf.memory import allocator

        device = {}
        for name in self._device_names():
            info = allocator.memory_info(name)
            if info is not None:
                device[name] = int(info["current"])
        counts = self.evidence.snapshot().counts
        self.samples.append(StepSample(len(self.samples), rss_bytes(), device, counts))
        if len(self.samples) == self._warmup_for(self._expected or DEFAULT_STEPS):
            self._containers_before = ev.container_snapshot()
            self._py_sites_before = ev.py_func_sites()

    def _warmup_for(self, n: int) -> int:
        return self._warmup if self._warmup is not None else warmup_steps(n)

    def report(self) -> LeakReport:
        if self._active:
            self._finish()
        return judge(self.samples, self._warmup_for(len(self.samples)), self.evidence,
                     self._containers_before, self._containers_after,
                     self._py_sites_before)


def track_leaks(step: Callable[..., Any], *args: Any, steps: int = DEFAULT_STEPS,
                **kwargs: Any) -> LeakReport:
    """Call ``step(*args, **kwargs)`` ``steps`` times, sampling after each; judge."""
    from tfperf.core.measure import sync

    functions = [step] if hasattr(step, "experimental_get_tracing_count") else []
    watch = LeakWatch(functions=functions)
    watch.expect(steps)
    with watch:
        for _ in range(steps):
            sync(step(*args, **kwargs))
            watch.step()
    return watch.report()


# ---------------------------------------------------------------------------------------------
# judging


def judge(samples: list[StepSample], warmup: int, evidence: ev.Evidence,
          containers_before: ev.Containers | None, containers_after: ev.Containers | None,
          py_sites_before: Any = None) -> LeakReport:
    analysed = samples[warmup:] if len(samples) > warmup else []
    n = len(analysed)
    trends: dict[str, Trend] = {}
    rss = [s.rss for s in analysed]
    if n and all(r is not None for r in rss):
        trends["host RSS"] = trend([float(r) for r in rss if r is not None])
    for dev in (analysed[0].device if analysed else {}):
        held = [s.device.get(dev) for s in analysed]
        if all(v is not None for v in held):
            trends[dev] = trend([float(v) for v in held if v is not None])
    out = LeakReport(samples, warmup, trends)
    if n < 4:
        out.notes.append(f"{len(samples)} steps, {warmup} of them warm-up: too few to judge "
                         "leaks (give 10 or more)")
        return out
    growing = [k for k, t in trends.items() if t.leak]
    per_step = max((t.slope for t in trends.values()), default=0.0)

    def counter(key: str) -> list[int]:
        return [s.counts.get(key, 0) for s in analysed]

    keys: list[str] = sorted(set().union(*(s.counts for s in analysed)))
    for key in keys:
        values = counter(key)
        if not rises(values):
            continue
        found = _counter_cause(key, values, evidence, py_sites_before, n)
        if found is not None:
            out.findings.append(_finding(found, per_step, trends))
    if containers_before is not None and containers_after is not None:
        grown = ev.grown_containers(containers_before, containers_after,
                                    at_least=max(2, (n - 1) // 2))
        containers_after.clear()  # the containers themselves: not kept past the judging
        for c in grown:
            out.findings.append(_finding(Cause(
                "tensor-container",
                f"{c.kind} {c.name} grew by {c.tensors} tensors ({_mib(c.tensor_bytes)}) "
                f"in {n} steps",
                "keep Python numbers (float(loss)) or a running tf.Variable instead of the "
                "tensors; or clear/bound the container (collections.deque(maxlen=...))",
                {"container": c.name, "type": c.kind, "tensors": c.tensors,
                 "bytes": c.tensor_bytes}, None), per_step, trends))
    if growing and not out.leaks:
        out.findings.append(_finding(_created_cause(analysed, evidence, n, growing) or Cause(
            "unexplained", f"{' and '.join(growing)} grow with the steps; no known cause "
                           "(retracing, objects created per step, py_function closures, "
                           "tensor containers) climbed with them",
            "compare tracemalloc snapshots of two steps for Python objects; "
            "tf.config.experimental.get_memory_info shows tensors TensorFlow holds",
            {}, None), per_step, trends))
    return out


@dataclass
class Cause:
    kind: str
    message: str
    hint: str
    data: dict[str, Any]
    site: tuple[str, int] | None


def _counter_cause(key: str, values: list[int], evidence: ev.Evidence, py_before: Any,
                   n: int) -> Cause | None:
    grew = values[-1] - values[0]
    name, _, tag = key.partition(":")
    kind = evidence.kind_of(tag) if tag else None
    where = (kind.path, kind.line) if kind and kind.path else None
    label = kind.name if kind else tag
    if name == "traces":
        if kind is not None and kind.keras and "predict" in kind.name:
            return Cause("predict-graphs", f"Keras's predict function ({label}) traced "
                         f"{grew} more times in {n} steps: each model.predict call builds a "
                         "new graph (the input shape or type changes from call to call)",
                         "call the model on batches of one shape (pad the last), or use "
                         "model(x, training=False) / predict_on_batch in loops",
                         {"counter": key, "grew": grew}, None)
        return Cause("retracing", f"tf.function {label} traced {grew} more times in {n} "
                     "steps: its concrete-function cache grows (each trace keeps a graph)",
                     "pass tensors, not Python values, and fixed shapes (or an "
                     "input_signature / reduce_retracing=True); `tfperf profile` names the "
                     "argument that changes (TFP301, TFP307)",
                     {"counter": key, "grew": grew, "rule": "TFP301"}, where)
    if name == "functions_alive":
        return Cause("created-per-step", f"{grew} tf.function objects of {label} created and "
                     f"kept alive in {n} steps (each keeps its graphs)",
                     "create the tf.function once, outside the loop, and reuse it (TFP302)",
                     {"counter": key, "grew": grew, "rule": "TFP302"}, where)
    if name == "iterators_alive":
        sites = evidence.iterator_sites.most_common(1)
        site = sites[0][0] if sites else None
        return Cause("created-per-step", f"{grew} tf.data iterators created and kept alive in "
                     f"{n} steps (each holds its buffers: shuffle, prefetch)",
                     "create the dataset and its iterator once; iterate it across steps "
                     "(for batch in dataset, or next(it) on one iterator)",
                     {"counter": key, "grew": grew}, site)
    if name == "py_funcs":
        now = ev.py_func_sites()
        new = now - py_before if py_before is not None else now
        site = None
        data_site = ""
        for (path, line, fname), _count in new.most_common():
            if "/tensorflow/python/data/" in path.replace("\\", "/"):
                data_site = fname
                continue
            site = (path, line)
            break
        if site is None and data_site:
            return Cause("created-per-step", f"{grew} Dataset.from_generator datasets created "
                         f"in {n} steps: each registers callables TensorFlow keeps",
                         "create the dataset once and iterate it across steps",
                         {"counter": key, "grew": grew}, None)
        return Cause("py-function-closure", f"{grew} py_function callables kept by "
                     f"TensorFlow in {n} steps (run eagerly, each call's callable stays "
                     "registered on the global graph with what it captures)",
                     "define the py_function's callable once (a module function, not a "
                     "lambda per step), or run it inside a tf.function traced once",
                     {"counter": key, "grew": grew}, site)
    return None


def _created_cause(analysed: list[StepSample], evidence: ev.Evidence, n: int,
                   growing: list[str]) -> Cause | None:
    """A trend with objects created per step alongside it (freed, yet memory grows)."""
    for key in sorted(analysed[-1].counts):
        name, _, tag = key.partition(":")
        if name != "functions_created":
            continue
        values = [s.counts.get(key, 0) for s in analysed]
        if not rises(values):
            continue
        kind = evidence.kind_of(tag)
        if kind is not None and kind.keras and ("predict" in kind.name or "step" in kind.name):
            return Cause("predict-graphs", f"a new Keras predict function was built on "
                         f"{values[-1] - values[0]} of {n} steps while "
                         f"{' and '.join(growing)} grew: each model.predict on a new model "
                         "(or after make_predict_function(force=True)) builds a new graph",
                         "build the model once and reuse it; for one-off predictions in a "
                         "loop call model(x, training=False)",
                         {"counter": key}, None)
        if kind is not None and kind.user:
            return Cause("created-per-step", f"a tf.function of {kind.name} was created on "
                         f"each step while {' and '.join(growing)} grew",
                         "create the tf.function once, outside the loop (TFP302)",
                         {"counter": key, "rule": "TFP302"}, (kind.path, kind.line))
    values = [s.counts.get("iterators_created", 0) for s in analysed]
    if rises(values):
        sites = evidence.iterator_sites.most_common(1)
        return Cause("created-per-step", f"a tf.data iterator was created on each step while "
                     f"{' and '.join(growing)} grew",
                     "create the dataset and its iterator once, outside the loop", {},
                     sites[0][0] if sites else None)
    return None


def _finding(cause: Cause, per_step: float, trends: dict[str, Trend]) -> Finding:
    data = dict(cause.data)
    data["cause"] = cause.kind
    data["bytes_per_step"] = per_step
    data["trends"] = {k: t.to_dict() for k, t in trends.items()}
    loc = Location(path=cause.site[0], line=cause.site[1]) if cause.site else None
    size = f" (memory +{_mib(per_step)}/step)" if per_step > 0 else ""
    return Finding(code="memory.leak", name=cause.kind, status=Status.WARN,
                   message=f"leak: {cause.message}{size}", hint=cause.hint, location=loc,
                   data=data)


def _mib(n: float) -> str:
    if abs(n) >= 1 << 20:
        return f"{n / (1 << 20):.1f} MiB"
    return f"{n / 1024:.0f} KiB"


__all__ = ["CAUSES", "DEFAULT_STEPS", "LeakReport", "LeakWatch", "StepSample", "judge",
           "track_leaks", "warmup_steps"]
