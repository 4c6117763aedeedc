"""Observations and capture figures → findings that name a lint rule or a lever.

Capture thresholds follow the manner of XProf's overview page: input-bound above 5 %
(moderately) and 20 % (highly) of step time, kernel-launch-bound above 3 % / 15 %, eager
execution above 10 % of op time, 16-bit computation below 10 % of device time on a GPU. Each
finding's ``data`` says which threshold fired and the measured value.

The remedies come from ``remedies.py`` (each tested on the running TF). A line-level cause
that costs under ``ADVICE_MIN_SHARE`` of the run, or that the line's own code did not make
(syncs inside Keras's ``fit``), is returned with ``data["advice"] = False`` and the reason in
``data["not_advice"]``: the report keeps it as data (``--json``), not as advice.
"""

from __future__ import annotations

from typing import Any

from tfperf.core.findings import Finding, Location, Status
from tfperf.profile import attribution, remedies, retrace
from tfperf.profile.observation import FunctionStats, LineStats, Observation
from tfperf.profile.placement import short_device
from tfperf.profile.remote import COLLECTIVE_SHARE, SLOWEST_MARGIN
from tfperf.profile.replicas import ReplicaSplit
from tfperf.profile.xplane import CaptureSummary

INPUT_BOUND = (0.05, 0.20)
LAUNCH_BOUND = (0.03, 0.15)
EAGER_SHARE = 0.10
SIXTEEN_BIT_MIN = 0.10
RETRACE_MIN = 2  # retraces (traces beyond the first) from which we speak
SYNC_LINE_MIN = 10  # syncs at one line: a sync inside a loop
SYNC_LINE_WARN_SHARE = 0.01  # below this share of the run, a sync loop is only info
ADVICE_MIN_SHARE = 0.001  # a line-level cause costing less of the run is data, not advice
EAGER_LINE_MIN_OPS = 100
EAGER_LINE_MIN_SHARE = 0.10
REPLICA_GAP_SHARE = 0.05  # a slow replica's extra compute, as a share of the step, to warn
PLACED_MIN_SHARE = 0.5  # below this share of op time placed on a device, say so


def _pct(x: float) -> str:
    return f"{100 * x:.0f} %" if x >= 0.01 else f"{100 * x:.1f} %"


def _loc(path: str | None, line: int | None) -> Location | None:
    return Location(path=path, line=line) if path else None


def _not_advice(finding: Finding, why: str) -> Finding:
    finding.data.update(advice=False, not_advice=why)
    return finding


def _below(share: float) -> str | None:
    """Why a cause costing ``share`` of the run is not advice; None when it is."""
    if share >= ADVICE_MIN_SHARE:
        return None
    return (f"{_pct(share)} of the run, below the {_pct(ADVICE_MIN_SHARE)} advice threshold")


def retrace_findings(functions: list[FunctionStats], wall_s: float = 0.0, *,
                     version: tuple[int, int] | None = None) -> list[Finding]:
    out = []
    for fn in functions:
        retraces = fn.traces - 1
        if retraces < RETRACE_MIN or not fn.causes:
            continue
        d = fn.to_dict()
        top = d["retrace_causes"][0]
        remedy = remedies.for_retrace(top["kind"], top["argument"], version=version,
                                      jit_compile=fn.jit_compile)
        how = retrace.summarise_kind(top["kind"], top["argument"], top["distinct"])
        share = fn.trace_s / (fn.trace_s + fn.run_s) if fn.trace_s + fn.run_s > 0 else 0.0
        see = f" (see {remedy.rule})" if remedy.rule else ""
        finding = Finding(
            code="profile.retrace", name="retrace", status=Status.WARN,
            message=(f"`{fn.name}` traced {fn.traces} times: {how}; tracing took "
                     f"{fn.trace_s:.3g} s, {_pct(share)} of its time{see}"),
            hint=remedy.hint,
            location=_loc(*(fn.first_site or (None, None))),
            data={"rule": remedy.rule, "function": fn.name, "traces": fn.traces,
                  "argument": top["argument"], "kind": top["kind"],
                  "threshold": (f"at least {RETRACE_MIN} retraces, tracing at least "
                                f"{_pct(ADVICE_MIN_SHARE)} of the run")},
        )
        why = _below(fn.trace_s / wall_s) if wall_s > 0 else None
        out.append(_not_advice(finding, why) if why else finding)
    # The same Python function wrapped by many tf.function objects, each traced: TFP302.
    # Only for the user's own functions: libraries (Keras builds one per fit/predict) are
    # not the user's to change.
    by_code: dict[Any, list[FunctionStats]] = {}
    for fn in functions:
        if fn.code_key and fn.traces and attribution.is_user_file(fn.code_key[0]):
            by_code.setdefault(fn.code_key, []).append(fn)
    for key, group in by_code.items():
        if len(group) > RETRACE_MIN:
            name = group[0].name
            owner = name.rpartition(".")[0] if group[0].method else ""
            remedy = remedies.per_instance(owner) if owner else remedies.RECREATED
            how = (f"ran as {len(group)} separate tf.function objects, one per {owner} object"
                   if owner else f"was wrapped by {len(group)} separate tf.function objects")
            out.append(Finding(
                code="profile.retrace", name="tf-function-recreated", status=Status.WARN,
                message=f"`{name}` {how}, each traced anew (see {remedy.rule})",
                hint=remedy.hint,
                location=_loc(*key),
                data={"rule": remedy.rule, "objects": len(group),
                      "threshold": f"more than {RETRACE_MIN} tf.function objects per function"},
            ))
    return out


def line_findings(obs: Observation) -> list[Finding]:
    out = []
    wall = obs.wall_s or 0.0
    for s in obs.sorted_lines("host_syncs"):
        if s.count < SYNC_LINE_MIN:
            continue
        via = ", ".join(k for k, _ in s.kinds.most_common(3))
        share = s.total_s / wall if wall else 0.0
        costly = wall > 0 and share >= SYNC_LINE_WARN_SHARE
        finding = Finding(
            code="profile.host_sync", name="host-sync-in-loop",
            status=Status.WARN if costly else Status.INFO,
            message=(f"{s.count} host syncs ({via}) took {s.total_s:.3g} s"
                     + (f", {_pct(share)} of the run" if wall else "")
                     + f" (see {remedies.HOST_SYNC.rule})"),
            hint=remedies.HOST_SYNC.hint,
            location=_loc(s.path, s.line),
            data={"rule": remedies.HOST_SYNC.rule, "count": s.count, "total_s": s.total_s,
                  "threshold": (f"at least {SYNC_LINE_MIN} syncs at one line made by its own "
                                f"code and {_pct(ADVICE_MIN_SHARE)} of the run; a warning "
                                f"from {_pct(SYNC_LINE_WARN_SHARE)}")},
        )
        own = s.count - sum(s.made_in.values())
        why = _below(share) if wall else None
        if own < SYNC_LINE_MIN:
            inside = ", ".join(sorted(s.made_in))
            why = (f"made inside {inside}, not by the line's own code: its conversions are "
                   f"not the line's to keep as tensors")
        out.append(_not_advice(finding, why) if why else finding)
    for s in obs.sorted_lines("eager_ops"):
        share = s.total_s / wall if wall else 0.0
        if s.count < EAGER_LINE_MIN_OPS or share < EAGER_LINE_MIN_SHARE:
            continue
        ops = ", ".join(k for k, _ in s.kinds.most_common(3))
        finding = Finding(
            code="profile.eager_ops", name="eager-op-storm", status=Status.WARN,
            message=(f"{s.count:,} eager ops ({ops}), {_pct(share)} of the time "
                     f"(see TFP101, TFP102)"),
            hint=remedies.EAGER_STORM.hint,
            location=_loc(s.path, s.line),
            data={"rule": remedies.EAGER_STORM.rule,
                  "lever": "vectorise; tf.function(jit_compile=True)",
                  "count": s.count, "share": share,
                  "threshold": (f"at least {EAGER_LINE_MIN_OPS} ops of the line's own "
                                f"and {_pct(EAGER_LINE_MIN_SHARE)} of the time at one line")},
        )
        why = _not_a_storm(s)
        out.append(_not_advice(finding, why) if why else finding)
    return out


def pipeline_op(op_type: str) -> bool:
    """A tf.data op: iterating a dataset in Python runs these, one or two per element."""
    return "Iterator" in op_type or op_type.startswith("Optional") \
        or op_type.endswith("Dataset")


def _own_ops(s: LineStats) -> int:
    """Eager ops at the line that are not tf.data's: iterating a dataset in Python runs an
    iterator op or two per element, whose time is the input pipeline's, not a loop to
    vectorise. (Ops run inside a library the line called, such as a Keras layer called per
    example, stay the line's: its loop is what to batch.)"""
    return s.count - sum(n for op, n in s.kinds.items() if pipeline_op(op))


def _not_a_storm(s: LineStats) -> str | None:
    """Why a line's many eager ops are not an op storm to vectorise; None when they are."""
    if _own_ops(s) >= EAGER_LINE_MIN_OPS:
        return None
    return ("tf.data iterator ops (a Python loop over a dataset): their time is the input "
            "pipeline's, not a loop to vectorise")


def repeated_eager_ops(obs: Observation) -> bool:
    """Whether some line ran eager ops other than tf.data's in a loop (what tf.function
    would take out)."""
    return any(_own_ops(s) >= EAGER_LINE_MIN_OPS for s in obs.eager_ops.values())


def _band(value: float, bounds: tuple[float, float]) -> tuple[Status, str] | None:
    low, high = bounds
    if value > high:
        return Status.WARN, f"> {_pct(high)}"
    if value > low:
        return Status.INFO, f"> {_pct(low)}"
    return None


def capture_findings(cap: CaptureSummary, *, repeated_eager: bool | None = None,
                     version: tuple[int, int] | None = None,
                     any_tf: bool = False) -> list[Finding]:
    """``repeated_eager``: whether the watch saw eager ops repeat at a line (None: unknown);
    without that, the capture's eager share is one-off setup, which tf.function cannot
    remove. ``any_tf``: the capture may come from any TensorFlow (``--read``), whatever
    this process runs: advice that differs by version names both."""
    out = []
    share = cap.input_share
    band = _band(share, INPUT_BOUND) if share is not None else None
    if band:
        status, fired = band
        level = "highly" if status is Status.WARN else "moderately"
        out.append(Finding(
            code="profile.input_bound", name="input-bound", status=status,
            message=f"{level} input-bound: {_pct(cap.input_share or 0.0)} of step time waits "
                    f"for input (threshold {fired}; see TFP601, TFP602)",
            hint=(remedies.INPUT_PIPELINE_ANY_TF if any_tf else
                  remedies.input_pipeline(version or remedies.tf_version())).hint,
            data={"rule": "TFP601", "lever": "prefetch", "value": share, "threshold": fired}))
    share = cap.launch_share
    band = _band(share, LAUNCH_BOUND) if share is not None else None
    if band:
        status, fired = band
        out.append(Finding(
            code="profile.launch_bound", name="kernel-launch-bound", status=status,
            message=f"kernel-launch-bound: launching {cap.launches_per_step:.0f} kernels per "
                    f"step takes {_pct(cap.launch_share or 0.0)} of step time (threshold {fired})",
            hint="fuse small ops: tf.function(jit_compile=True) on the hot function (S14)",
            data={"lever": "jit_compile", "value": share, "threshold": fired}))
    share = cap.eager_share
    if share is not None and share > EAGER_SHARE:
        finding = Finding(
            code="profile.eager_share", name="eager-execution", status=Status.WARN,
            message=f"{_pct(share)} of op time runs eagerly (threshold > {_pct(EAGER_SHARE)}; "
                    f"see TFP306, TFP101)",
            hint=remedies.EAGER_SHARE.hint,
            data={"rule": remedies.EAGER_SHARE.rule, "lever": "tf.function", "value": share,
                  "threshold": (f"> {_pct(EAGER_SHARE)}, and some line ran at least "
                                f"{EAGER_LINE_MIN_OPS} eager ops")})
        if repeated_eager is False:
            finding = _not_advice(finding, (
                f"no line ran {EAGER_LINE_MIN_OPS} eager ops other than tf.data's: the eager "
                f"time is one-off (setup, variable creation) or the input pipeline's, which "
                f"wrapping the step in tf.function would not take out"))
        out.append(finding)
    share = cap.sixteen_bit_share
    if share is not None and share < SIXTEEN_BIT_MIN:
        out.append(Finding(
            code="profile.precision", name="little-16-bit", status=Status.INFO,
            message=f"only {_pct(share)} of device time is 16-bit computation "
                    f"(threshold < {_pct(SIXTEEN_BIT_MIN)}; kernel-name heuristic)",
            hint="try keras.mixed_precision.set_global_policy('mixed_float16') with loss "
                 "scaling (see TFP502, TFP503; S15)",
            data={"lever": "mixed_float16", "value": share,
                  "threshold": f"< {_pct(SIXTEEN_BIT_MIN)}"}))
    if cap.host_only:
        out.append(Finding(
            code="profile.capture", name="host-only", status=Status.INFO,
            message="host-only capture: no GPU in it, so device time, host↔device copies, "
                    "kernel launches and the 16-bit share are not available",
            data={"host_only": True}))
    return out


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms" if seconds >= 1e-4 else f"{seconds * 1e6:.0f} µs"


def replica_findings(split: ReplicaSplit) -> list[Finding]:
    """The slowest replica and how much the others wait for it; collectives' share."""
    out = []
    slow, gap, ratio = split.slowest, split.gap_s, split.ratio
    step = split.step_s or 0.0
    imbalanced = (gap > 0 and (ratio is None or ratio >= SLOWEST_MARGIN)
                  and gap >= REPLICA_GAP_SHARE * step)
    name = short_device(slow.device)
    data = {"slowest": slow.device, "compute_s": slow.compute_s,
            "others_compute_s": split.others_compute_s, "gap_s": gap, "ratio": ratio,
            "step_s": split.step_s,
            "threshold": (f"compute ≥ {SLOWEST_MARGIN:g}× the others' median and the gap "
                          f"≥ {_pct(REPLICA_GAP_SHARE)} of the step")}
    others = "the other" if len(split.replicas) == 2 else "the others"
    times = (f"{_ms(slow.compute_s)} of compute a step against {_ms(split.others_compute_s)} "
             f"for {others}" + (f" ({ratio:.1f}×)" if ratio else ""))
    if imbalanced:
        out.append(Finding(
            code="profile.replicas", name="replica-imbalance", status=Status.WARN,
            message=(f"slowest replica: {name}, {times}: {others} "
                     f"{'waits' if len(split.replicas) == 2 else 'wait'} {_ms(gap)} a step for "
                     f"it in the all-reduce"),
            hint=("look for work only this replica does (a branch on "
                  "replica_id_in_sync_group, an uneven per-replica batch from the "
                  "distributed dataset) or another load on its device"),
            data=data))
    else:
        out.append(Finding(
            code="profile.replicas", name="replicas-balanced", status=Status.INFO,
            message=(f"{len(split.replicas)} replicas balanced: the slowest, {name}, has "
                     f"{times}"),
            data=data))
    share = split.collective_share
    if share is not None and share > COLLECTIVE_SHARE:
        out.append(Finding(
            code="profile.collectives", name="collective-bound", status=Status.WARN,
            message=(f"collectives take {_pct(share)} of the step even on the replica that "
                     f"waits least for the others (threshold > {_pct(COLLECTIVE_SHARE)})"),
            hint=("the all-reduce itself is the limit: larger per-replica batches, fewer "
                  "all-reduces (accumulate gradients), and on GPUs "
                  "cross_device_ops=tf.distribute.NcclAllReduce()"),
            data={"value": share, "threshold": f"> {_pct(COLLECTIVE_SHARE)}"}))
    placed = split.attributed_share
    if placed is not None and placed < PLACED_MIN_SHARE:
        out.append(Finding(
            code="profile.replicas", name="placement-partial", status=Status.INFO,
            message=(f"only {_pct(placed)} of op time could be placed on a device: the "
                     f"per-replica figures cover that part"),
            hint=("a function first run before the watch began is placed from its traced "
                  "graph, which lacks the nodes TF's optimiser added or renamed: start "
                  "watching (or profiling) before the first step for the exact map"),
            data={"value": placed, "threshold": f"< {_pct(PLACED_MIN_SHARE)}"}))
    return out


def _whole_run_eager(finding: Finding, obs: Observation) -> Finding:
    """A capture that holds only the start of the run (setup, the first step) may be mostly
    eager when the run is not: its eager share is advice only when the hooks, which saw the
    whole run, saw eager ops take the same threshold of it."""
    if finding.code != "profile.eager_share" or finding.data.get("advice", True) is False:
        return finding
    wall = obs.wall_s or 0.0
    eager = sum(s.total_s for s in obs.eager_ops.values())
    if wall and eager / wall > EAGER_SHARE:
        return finding
    return _not_advice(finding, (
        f"the capture holds only the start of the run; over the whole run eager ops took "
        f"{_pct(eager / wall if wall else 0.0)} of it"))


def advise(obs: Observation, cap: CaptureSummary | None,
           split: ReplicaSplit | None = None, *,
           version: tuple[int, int] | None = None, partial: bool = False) -> list[Finding]:
    """Every finding; those marked ``data["advice"] is False`` are data, not advice.
    ``version``: the TF (major, minor) whose advice to give; default the running one.
    ``partial``: the capture holds only the start of the run (its memory budget)."""
    if version is None:
        version = remedies.tf_version()
    findings = retrace_findings(obs.functions, obs.wall_s, version=version) + line_findings(obs)
    if cap is not None:
        repeated = None if "eager_ops" in obs.unavailable else repeated_eager_ops(obs)
        found = capture_findings(cap, repeated_eager=repeated, version=version)
        if partial:
            found = [_whole_run_eager(f, obs) for f in found]
        findings += found
    if split is not None:
        findings += replica_findings(split)
    return findings
