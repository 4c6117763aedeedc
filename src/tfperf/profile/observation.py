"""What watching a region saw: per ``tf.function`` its calls, traces and their causes; per user
source line its host syncs and eager ops. Plain data, shared by the watcher that fills it, the
advice that judges it and the report that renders it."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from tfperf.profile import retrace

Site = tuple[str, int]  # (file, line) of user code


@dataclass
class LineStats:
    """Events of one kind at one user source line."""

    path: str
    line: int
    count: int = 0
    total_s: float = 0.0
    kinds: Counter = field(default_factory=Counter)  # op types, or the conversion used
    # host syncs made inside another library the line called (Keras's fit): package → count
    made_in: Counter = field(default_factory=Counter)

    def to_dict(self, wall_s: float | None = None) -> dict[str, Any]:
        top = [{"name": k, "count": n} for k, n in self.kinds.most_common(5)]
        out: dict[str, Any] = {"path": self.path, "line": self.line, "count": self.count,
                               "total_s": self.total_s, "top": top}
        if self.made_in:
            out["made_in"] = dict(self.made_in)
        if wall_s:
            out["share"] = self.total_s / wall_s
        return out


@dataclass
class FunctionStats:
    """One ``tf.function`` object: calls, traces, their causes, trace and run time."""

    name: str
    code_key: tuple[str, int] | None  # (file, first line) of the Python function
    calls: int = 0
    traces: int = 0  # the traces a user's calls caused (what TF's retracing warning counts)
    # TF's second trace of a first call that created variables (a Keras model built inside):
    # it traces once allowing variable creation, then once more without. Not a retrace.
    variable_traces: int = 0
    trace_s: float = 0.0
    total_s: float = 0.0
    first_site: Site | None = None
    jit_compile: bool = False  # tf.function(jit_compile=True): its first run XLA-compiles
    method: bool = False  # a tf.function method: one tf.function object per instance
    graph_ops: int | None = None  # ops in the graph of its latest trace
    xla_compilations: int = 0  # traces of a jit_compile=True function
    signatures: list[dict[str, Any]] = field(default_factory=list)
    causes: dict[tuple[str, str], retrace.CauseSummary] = field(default_factory=dict)
    # per argument: every distinct value seen at trace time (the first trace included)
    seen: dict[str, set] = field(default_factory=dict)

    @property
    def run_s(self) -> float:
        return max(self.total_s - self.trace_s, 0.0)

    def to_dict(self) -> dict[str, Any]:
        causes = sorted(self.causes.values(), key=lambda c: -c.retraces)
        rows = []
        for c in causes:
            row = c.to_dict()
            row["distinct"] = max(row["distinct"], len(self.seen.get(c.argument, ())))
            rows.append(row)
        return {
            "name": self.name,
            "traces": self.traces,
            "variable_traces": self.variable_traces,
            "retrace_causes": rows,
            "trace_s": self.trace_s,
            "run_s": self.run_s,
            "calls": self.calls,
            "graph_ops": self.graph_ops,
            "xla_compilations": self.xla_compilations,
            "path": self.first_site[0] if self.first_site else None,
            "line": self.first_site[1] if self.first_site else None,
        }


@dataclass
class StepStats:
    """Steps of an eager loop, marked from the code (``training_step.py``): each step's time,
    and what ran inside the steps' own work, per user line."""

    source: str  # what marks the steps: "the loop at main.py:104 (eager training step)"
    path: str = ""  # the file and line of the step loop
    loop_line: int = 0
    durations: list[float] = field(default_factory=list)  # seconds, step by step
    # the step's own work (the inline block, or the step function's call), step by step:
    # what compiling the step acts on; the rest of an iteration is the loop's own
    work_s: list[float] = field(default_factory=list)
    eager_ops: dict[Site, int] = field(default_factory=dict)  # site → ops run inside steps
    eager_s: dict[Site, float] = field(default_factory=dict)  # site → their time
    host_syncs: dict[Site, int] = field(default_factory=dict)
    host_sync_s: dict[Site, float] = field(default_factory=dict)

    @property
    def count(self) -> int:
        return len(self.durations)

    @property
    def median_s(self) -> float | None:
        if not self.durations:
            return None
        ordered = sorted(self.durations)
        mid = len(ordered) // 2
        return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2

    @property
    def eager_total_s(self) -> float:
        return float(sum(self.eager_s.values()) + sum(self.host_sync_s.values()))

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "steps": self.count, "median_s": self.median_s,
                "total_s": sum(self.durations), "work_s": sum(self.work_s),
                "eager_ops": sum(self.eager_ops.values()),
                "eager_s": sum(self.eager_s.values()),
                "host_syncs": sum(self.host_syncs.values()),
                "durations_s": list(self.durations)}  # step by step: the HTML timeline


@dataclass
class Observation:
    """Everything the hooks saw in one watched region."""

    wall_s: float = 0.0  # the watched block's time, tfperf's own (overhead_s) left out
    overhead_s: float = 0.0  # tfperf's own work inside the block: capture start/stop, bookkeeping
    functions: list[FunctionStats] = field(default_factory=list)
    host_syncs: dict[Site, LineStats] = field(default_factory=dict)
    # syncs TF's tf.function call made for itself, outside the user's Python (checking the
    # variables a first call created): user line of the call → count. Not in ``host_syncs``:
    # no change to the user's code removes them, and a step asserted sync-free must stay so.
    tf_own_syncs: dict[Site, int] = field(default_factory=dict)
    # eager ops TF ran for itself in that call: creating the variables inside a trace
    # (VarHandleOp), checking them (VarIsInitializedOp, Pack). User line of the call → count
    tf_own_ops: dict[Site, int] = field(default_factory=dict)
    eager_ops: dict[Site, LineStats] = field(default_factory=dict)
    # the eager ops' widths: each op counted as its inputs or outputs, whichever are more
    # (an unstack into 512 tensors is one op, and 512 slices once XLA compiles it)
    eager_op_width: int = 0
    unavailable: dict[str, str] = field(default_factory=dict)  # hook → why not
    # graph node name → device that ran it (placement.py): splits a capture per replica
    placement: dict[str, str] = field(default_factory=dict)
    # steps of an eager training loop, where the code showed one (script mode)
    steps: StepStats | None = None

    def sorted_lines(self, which: str) -> list[LineStats]:
        table = self.host_syncs if which == "host_syncs" else self.eager_ops
        return sorted(table.values(), key=lambda s: (-s.total_s, -s.count))

    @property
    def eager_op_count(self) -> int:
        return sum(s.count for s in self.eager_ops.values())
