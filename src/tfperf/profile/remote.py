"""``tfperf profile --remote``: capture every worker of a running job at once, and compare them.

The job runs ``tfperf.serve_profiler(port)`` (``tf.profiler.experimental.server.start``) in
each worker; this side asks all of them through TensorFlow's own profiler client
(``tf.profiler.experimental.client.trace`` with every address in one call, and
``ProfilerOptions.delay_ms`` so that they start together), which writes one
``<host>_<port>.xplane.pb`` per worker. Each is read with the one reader (``xplane.py``).

Per worker: step time, compute vs collective vs input per step. In synchronous training every
worker has the same step time (each all-reduce waits for the last arrival), so the slow
worker is not the one with the longest step but the one that waits least: its *busy* time
(step − collective) is the largest, and the others spend the difference inside collectives.

Every failure is a cause with a fix, never a traceback: no server on a port, a worker that
stopped answering during the capture, a capture with nothing in it, steps not marked.
"""

from __future__ import annotations

import re
import socket
import statistics
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tfperf.core.findings import Finding, Status
from tfperf.profile.capture import default_logdir, find_xplanes
from tfperf.profile.xplane import CaptureError, CaptureSummary, summarise

# Ops whose time is spent in a collective (including waiting for the other workers).
COLLECTIVE_OPS = frozenset({
    "CollectiveReduce", "CollectiveReduceV2", "CollectiveReduceV3", "CollectiveGather",
    "CollectiveGatherV2", "CollectiveBcastSend", "CollectiveBcastRecv", "CollectiveBcastSendV2",
    "CollectiveBcastRecvV2", "CollectiveAllToAllV2", "CollectiveAllToAllV3",
    "CollectiveReduceScatterV2", "NcclAllReduce", "NcclReduce", "NcclBroadcast",
    "_NcclReduceSend", "_NcclReduceRecv", "_NcclBroadcastSend", "_NcclBroadcastRecv",
})
CONNECT_TIMEOUT_S = 2.0
SLOWEST_MARGIN = 1.2  # busy time above the others' by this factor: a straggler worth naming
MIN_GAP_S = 1e-3  # and by at least a millisecond a step
COLLECTIVE_SHARE = 0.3  # collectives above this share of the step: communication-bound

FIX_NO_SERVER = ("start the profiler server in every worker before training: "
                 "`tfperf.serve_profiler(PORT)` (or tf.profiler.experimental.server.start(PORT)); "
                 "check the host and port, and that this machine can reach them")


class RemoteInputError(ValueError):
    """A --remote address list that cannot be right."""


def parse_addresses(text: str) -> list[tuple[str, int]]:
    """``HOST:PORT[,HOST:PORT...]`` (an optional ``grpc://`` prefix each) → (host, port)."""
    out = []
    for part in (p.strip() for p in text.split(",")):
        part = part.removeprefix("grpc://")
        m = re.fullmatch(r"\[?([^\[\]\s]+?)\]?:(\d{1,5})", part)
        if not m or not 0 < int(m.group(2)) < 65536:
            raise RemoteInputError(f"not HOST:PORT: {part!r} (expected e.g. localhost:6009,"
                                   "worker1:6009)")
        out.append((m.group(1), int(m.group(2))))
    if len(set(out)) != len(out):
        raise RemoteInputError("an address is given twice")
    return out


def reachable(host: str, port: int, timeout: float = CONNECT_TIMEOUT_S) -> str | None:
    """None when something accepts connections on host:port, else why not."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except TimeoutError:
        return f"no answer within {timeout:g}s"
    except OSError as exc:
        return exc.strerror or str(exc)


@dataclass
class WorkerCapture:
    """One worker's part of the capture: its figures, or why there are none."""

    address: str
    xplane: str | None = None
    summary: CaptureSummary | None = None
    problem: str | None = None
    fix: str = ""
    steps: int = 0
    step_s: float | None = None
    step_source: str = ""
    collective_s: float | None = None  # per step, waiting included
    input_s: float | None = None  # per step
    compute_s: float | None = None  # per step: op time outside collectives and input

    @property
    def busy_s(self) -> float | None:
        """Per step, the time not spent waiting in collectives."""
        if self.step_s is None or self.collective_s is None:
            return None
        return max(self.step_s - self.collective_s, 0.0)

    @property
    def collective_share(self) -> float | None:
        if not self.step_s or self.collective_s is None:
            return None
        return self.collective_s / self.step_s

    def to_dict(self) -> dict[str, Any]:
        return {"address": self.address, "xplane": self.xplane, "problem": self.problem,
                "fix": self.fix, "steps": self.steps, "step_s": self.step_s,
                "step_source": self.step_source, "compute_s": self.compute_s,
                "collective_s": self.collective_s, "input_s": self.input_s,
                "busy_s": self.busy_s, "collective_share": self.collective_share}


def worker_figures(address: str, summary: CaptureSummary) -> WorkerCapture:
    """Per-step figures of one worker's capture."""
    w = WorkerCapture(address, xplane=summary.path, summary=summary)
    steps = max(summary.steps, 1)
    w.steps, w.step_source = summary.steps, summary.step_source
    w.step_s = summary.step_s if summary.step_s is not None else summary.duration_s / steps
    collective = sum(t for op, t in summary.by_type.items() if op in COLLECTIVE_OPS)
    ops = summary.device_op_s if summary.device_op_s else summary.host_op_s
    w.collective_s = collective / steps
    w.input_s = summary.input_s / steps
    w.compute_s = max(ops - collective - summary.input_s, 0.0) / steps
    return w


@dataclass
class RemoteReport:
    workers: list[WorkerCapture]
    logdir: str
    duration_ms: int
    seconds: float = 0.0
    findings: list[Finding] = field(default_factory=list)

    @property
    def captured(self) -> list[WorkerCapture]:
        return [w for w in self.workers if w.problem is None]

    @property
    def slowest(self) -> WorkerCapture | None:
        busy = [w for w in self.captured if w.busy_s is not None]
        return max(busy, key=lambda w: w.busy_s or 0.0) if len(busy) > 1 else None

    def merged(self) -> dict[str, Any]:
        """The job as a whole: its step time, and how far the slowest worker holds it back."""
        ok = [w for w in self.captured if w.step_s is not None]
        if not ok:
            return {}
        out: dict[str, Any] = {
            "workers": len(ok), "step_s": statistics.median(w.step_s or 0.0 for w in ok),
            "compute_s": statistics.median(w.compute_s or 0.0 for w in ok),
            "collective_s": statistics.median(w.collective_s or 0.0 for w in ok),
            "input_s": statistics.median(w.input_s or 0.0 for w in ok)}
        out["collective_share"] = out["collective_s"] / out["step_s"] if out["step_s"] else None
        slow = self.slowest
        if slow is not None:
            others = [w.busy_s or 0.0 for w in ok if w is not slow]
            typical = statistics.median(others)
            out.update(slowest=slow.address, slowest_busy_s=slow.busy_s,
                       others_busy_s=typical, slowest_gap_s=(slow.busy_s or 0.0) - typical,
                       slowest_ratio=(slow.busy_s or 0.0) / typical if typical > 0 else None)
        return out

    @property
    def exit_status(self) -> int:
        return 1 if any(f.status in (Status.FAIL, Status.WARN) for f in self.findings) else 0

    def to_dict(self) -> dict[str, Any]:
        return {"logdir": self.logdir, "duration_ms": self.duration_ms,
                "seconds": self.seconds, "workers": [w.to_dict() for w in self.workers],
                "merged": self.merged(),
                "findings": [{"id": f.code, "status": str(f.status), "message": f.message,
                              "fix": f.hint, "data": f.data} for f in self.findings],
                "exit_status": self.exit_status}

    def to_json(self) -> str:
        from tfperf.core.render import to_json

        return to_json(self.to_dict())

    def text(self, color: bool = False) -> str:
        from tfperf.core.measure import format_seconds
        from tfperf.core.render import status_badge, style, text_table

        def sec(x: float | None) -> str:
            return format_seconds(x, 3) if x is not None else "—"

        def pct(x: float | None) -> str:
            return f"{x:.0%}" if x is not None else "—"

        rows = []
        for w in self.workers:
            if w.problem:
                rows.append((w.address, "—", "—", "—", "—", "—", "—", "no capture"))
                continue
            rows.append((w.address, str(w.steps), sec(w.step_s), sec(w.compute_s),
                         sec(w.collective_s), sec(w.input_s), pct(w.collective_share),
                         f"busy {sec(w.busy_s)}"))
        m = self.merged()
        if m:
            rows.append(("merged (median)", "", sec(m["step_s"]), sec(m["compute_s"]),
                         sec(m["collective_s"]), sec(m["input_s"]),
                         pct(m["collective_share"]), ""))
        out = [style(f"tfperf profile --remote: {len(self.workers)} workers, "
                     f"{self.duration_ms} ms capture in {self.logdir}", "bold", color=color), "",
               text_table(["worker", "steps", "step", "compute", "collective", "input",
                           "coll. share", ""], rows, align="lrrrrrrl"), ""]
        for f in self.findings:
            out.append(f"{status_badge(f.status, color)} {f.message}")
            if f.hint and f.status in (Status.WARN, Status.FAIL):
                out.append(f"       {style('fix:', 'cyan', color=color)} {f.hint}")
        return "\n".join(out)


def _xplane_for(host: str, port: int, files: list[Path]) -> Path | None:
    """TF names each worker's file ``<host>_<port>.xplane.pb``; the host may be spelled
    differently (an IP for a name), so a unique port decides."""
    exact = [p for p in files if p.name == f"{host}_{port}.xplane.pb"]
    if exact:
        return exact[0]
    by_port = [p for p in files if p.name.endswith(f"_{port}.xplane.pb")]
    return by_port[0] if len(by_port) == 1 else None


def _trace(service_addr: str, logdir: str, duration_ms: int, delay_ms: int,
           timeout: float) -> str | None:
    """TF's profiler client on every address at once; None, or what went wrong."""
    import tensorflow as tf

    options = tf.profiler.experimental.ProfilerOptions(
        host_tracer_level=2, python_tracer_level=0, device_tracer_level=1, delay_ms=delay_ms)
    outcome: list[str | None] = []

    def work() -> None:
        try:
            tf.profiler.experimental.client.trace(service_addr, logdir, duration_ms,
                                                  num_tracing_attempts=1, options=options)
            outcome.append(None)
        except Exception as exc:  # TF's "No trace event was collected ...": judged per worker
            outcome.append(f"{type(exc).__name__}: {str(exc).strip().splitlines()[0]}")

    thread = threading.Thread(target=work, name="tfperf-remote-trace", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        return f"the profiler client did not return within {timeout:g}s"
    return outcome[0] if outcome else "the profiler client ended without a word"


def capture_remote(addresses: list[tuple[str, int]], duration_ms: int = 2000,
                   logdir: str | Path | None = None, delay_ms: int = 100,
                   timeout: float | None = None) -> RemoteReport:
    """Capture every worker at once and judge the result (see the module's docstring)."""
    start = time.monotonic()
    root = Path(logdir) if logdir else default_logdir()
    root.mkdir(parents=True, exist_ok=True)
    before = set(find_xplanes(root))
    workers = {(h, p): WorkerCapture(f"{h}:{p}") for h, p in addresses}
    live = []
    for (host, port), w in workers.items():
        why = reachable(host, port)
        if why is None:
            live.append((host, port))
        else:
            w.problem = f"no profiler server at {host}:{port} ({why})"
            w.fix = FIX_NO_SERVER
    client_error = None
    if live:
        service = ",".join(f"grpc://{h}:{p}" for h, p in live)
        client_error = _trace(service, str(root), duration_ms, delay_ms,
                              timeout or (duration_ms + delay_ms) / 1000 + 30.0)
    new = [p for p in find_xplanes(root) if p not in before]
    for host, port in live:
        _read_worker(workers[(host, port)], host, port, new, client_error)
    report = RemoteReport(list(workers.values()), str(root), duration_ms)
    report.findings = judge(report)
    report.seconds = time.monotonic() - start
    return report


def _read_worker(w: WorkerCapture, host: str, port: int, files: list[Path],
                 client_error: str | None) -> None:
    path = _xplane_for(host, port, files)
    if path is None:
        gone = reachable(host, port)
        if gone is not None:
            w.problem = (f"{w.address} stopped answering during the capture ({gone}): its "
                         "process ended, or crashed while the profiler collected")
            w.fix = ("check the worker's log; a worker killed by 'double free or corruption' "
                     "while 'Profiler session collecting data' is a TensorFlow profiler crash "
                     "(docs/multi-device.md): capture again")
        else:
            w.problem = (f"{w.address} returned no trace events"
                         + (f" ({client_error})" if client_error else ""))
            w.fix = ("the worker ran no TensorFlow op in the window: capture while the job "
                     "trains (after its first steps) or lengthen --duration-ms; if it did "
                     "train, the server may be another process's (wrong port)")
        return
    try:
        summary = summarise(path)
    except CaptureError as exc:
        w.xplane, w.problem = str(path), f"unreadable capture: {exc}"
        w.fix = "capture again; the file may have been cut short"
        return
    if not summary.ops:
        w.xplane = str(path)
        w.problem = f"{w.address}: the capture holds no TensorFlow op"
        w.fix = ("nothing ran during the window: capture while the job trains (after its "
                 "first steps) or lengthen --duration-ms")
        return
    got = worker_figures(w.address, summary)
    for name in ("xplane", "summary", "steps", "step_s", "step_source", "collective_s",
                 "input_s", "compute_s"):
        setattr(w, name, getattr(got, name))


def judge(report: RemoteReport) -> list[Finding]:
    """Verdicts over the workers' figures: problems, step markers, the slowest worker, and
    collectives' share of the step."""
    out = []
    for w in report.workers:
        if w.problem:
            out.append(Finding("profile.remote.capture", w.problem, Status.FAIL, hint=w.fix,
                               data={"worker": w.address}))
        elif w.step_source != "step markers":
            out.append(Finding(
                "profile.remote.steps", f"{w.address}: no step markers; step time from "
                f"{w.step_source}", Status.INFO,
                hint="mark each step in the job: with tf.profiler.experimental.Trace('train', "
                     "step_num=i, _r=1): ...", data={"worker": w.address}))
    m = report.merged()
    if "slowest" in m:
        gap, ratio = m["slowest_gap_s"], m["slowest_ratio"]
        from tfperf.core.measure import format_seconds

        msg = (f"slowest worker: {m['slowest']}, busy {format_seconds(m['slowest_busy_s'], 3)} "
               f"a step against {format_seconds(m['others_busy_s'], 3)} for the others: they "
               f"wait {format_seconds(gap, 3)} a step for it in collectives"
               + (f" ({ratio:.1f}×)" if ratio else ""))
        slow = gap >= MIN_GAP_S and (ratio is None or ratio >= SLOWEST_MARGIN)
        out.append(Finding(
            "profile.remote.slowest", msg, Status.WARN if slow else Status.PASS,
            hint=("every step waits for this worker: give it less input per step or a "
                  "faster device, look at its own profile (input pipeline, host work outside "
                  "TF ops), and check it has no other load") if slow else "", data=m))
    share = m.get("collective_share")
    if share is not None and share > COLLECTIVE_SHARE:
        out.append(Finding(
            "profile.remote.collectives", f"collectives take {share:.0%} of the step (waiting "
            "included)", Status.WARN,
            hint="if no worker is slow, the link is the limit: larger batches per step, fewer "
                 "all-reduces (gradient accumulation), or a faster collective "
                 "(CommunicationOptions(implementation=NCCL) on GPUs)", data=m))
    return out
