"""Why a capture is empty or odd, each cause with its fix: the first thing `--read` says.

Judges only: what was found (:mod:`locate`), what could not be read (:class:`CaptureFileError`)
and what the summary saw (:class:`ReadSummary`) → findings with code ``profile.read.<cause>``.
A broken capture (nothing to read) is ``fail``; an odd one (read, but XProf would show it
wrong or not at all) ``warn``; a note ``info``.
"""

from __future__ import annotations

import re

from tfperf.core.findings import Finding, Location, Status
from tfperf.profile.read.locate import Located
from tfperf.profile.read.summary import ReadSummary
from tfperf.profile.read.xspace import CaptureFileError

LAYOUT = "LOGDIR/plugins/profile/<run>/<host>.xplane.pb"
NO_STEPS_FIX = ("mark steps: `with tf.profiler.experimental.Trace('train', step_num=step, "
                "_r=1):` around each step, or capture with "
                "`tf.keras.callbacks.TensorBoard(profile_batch=(10, 15))`")

# Errors the profiler writes into XSpace.errors, by what they mean.
_RECORDED = (
    (re.compile(r"INSUFFICIENT_PRIVILEGES|ERR_NVGPUCTRPERM|permission", re.I),
     "the GPU driver refused CUPTI (profiling is restricted to admin users)",
     "run as root, or load the NVIDIA module with NVreg_RestrictProfilingToAdminUsers=0 "
     "(`options nvidia NVreg_RestrictProfilingToAdminUsers=0` in /etc/modprobe.d, then reboot)"),
    (re.compile(r"libcupti|cupti.*(not found|load|open)|CUPTI could not be loaded", re.I),
     "CUPTI (the CUDA profiling library) could not be loaded: no GPU kernels were recorded",
     "put CUDA's extras/CUPTI/lib64 on LD_LIBRARY_PATH, or install the CUPTI that matches "
     "TensorFlow's CUDA (`pip install 'tensorflow[and-cuda]'` brings it)"),
    (re.compile(r"another profil|already (running|active)|session.*in progress", re.I),
     "another profiler session was running: this one recorded nothing",
     "stop the other session (a TensorBoard callback with profile_batch, a profiler server "
     "capture) before tf.profiler.experimental.start"),
    (re.compile(r"CUPTI_ERROR|cupti", re.I),
     "CUPTI reported an error: device activity is missing or partial",
     "check that the CUPTI version matches the CUDA runtime TensorFlow was built with "
     "(`tfperf doctor` names both)"),
)


def _finding(cause: str, status: Status, message: str, hint: str, path: str | None = None,
             **data: object) -> Finding:
    return Finding(code=f"profile.read.{cause}", name=cause.replace("_", "-"), status=status,
                   message=message, hint=hint,
                   location=Location(path=path) if path else None, data={"cause": cause, **data})


def layout_findings(found: Located) -> list[Finding]:
    """Nothing there, the wrong folder, files of another format."""
    out: list[Finding] = []
    where = str(found.path)
    if not found.captures:
        for p, what in found.other_formats:
            if p.name.endswith(".xplane.pb.gz"):
                out.append(_finding(
                    "compressed", Status.FAIL, f"{p} is {what}: neither XProf nor tfperf "
                    "reads it compressed", f"gunzip it: `gunzip -k {p}`", str(p)))
            else:
                out.append(_finding(
                    "old_format", Status.FAIL, f"{p} is {what}, not an XSpace capture "
                    "(`*.xplane.pb`): current XProf and tfperf read only XSpace",
                    "capture again with TensorFlow ≥ 2.2 (`tf.profiler.experimental.start`); "
                    "the XProf plugin must be of the same generation as the TensorFlow that "
                    "made the capture", str(p)))
        if out:
            return out
        if found.tensorboard_events:
            return [_finding(
                "no_capture", Status.FAIL, f"no profile under {where}: TensorBoard event files, "
                "but no `plugins/profile/<run>/*.xplane.pb` (the profiler never ran, or its "
                "capture went to another logdir)",
                "set `profile_batch=(10, 15)` on tf.keras.callbacks.TensorBoard (steps past "
                "the first, which compiles), or call tf.profiler.experimental.start(logdir)/"
                "stop() around the steps", where)]
        return [_finding("no_capture", Status.FAIL, f"no capture (`*.xplane.pb`) under {where}",
                         f"point --read at the logdir, the run folder or the file: {LAYOUT}",
                         where)]
    if found.misplaced:
        p = found.misplaced[0]
        out.append(_finding(
            "layout", Status.WARN, f"{p} is not where XProf looks ({LAYOUT}): TensorBoard shows "
            "\"No profile data was found\" for this logdir (tfperf reads it anyway)",
            f"move it: `mkdir -p LOGDIR/plugins/profile/run1 && mv {p} "
            "LOGDIR/plugins/profile/run1/`, then `tensorboard --logdir LOGDIR`", str(p),
            misplaced=[str(m) for m in found.misplaced]))
    if len(found.runs) > 1:
        out.append(_finding(
            "several_runs", Status.INFO, f"{len(found.runs)} runs under {where}; reading the "
            f"newest, {found.runs[0].name}",
            f"give the run folder to read another, or compare two: `tfperf profile --compare "
            f"{found.runs[-1]} {found.runs[0]}`", where, runs=[str(r) for r in found.runs]))
    return out


def file_findings(path: str, exc: CaptureFileError) -> list[Finding]:
    """A file that could not be read as a capture."""
    if exc.kind == "empty":
        return [_finding(
            "empty_file", Status.FAIL, f"{path} is empty (0 bytes): the profiler was stopped "
            "before it wrote (the process was killed, or the disk was full)",
            "capture again and let tf.profiler.experimental.stop() return before the process "
            "exits; check free space in the logdir", path)]
    if exc.kind == "truncated":
        return [_finding(
            "truncated", Status.FAIL, f"{path} is cut short ({exc}): the copy or the write did "
            "not finish", "copy the capture again (compare sizes), or capture again; a capture "
            "written by a killed process cannot be repaired", path)]
    if exc.kind == "unreadable":
        return [_finding("unreadable", Status.FAIL, str(exc),
                         "check the file's permissions", path)]
    return [_finding(
        "not_xspace", Status.FAIL, f"{path} is not an XSpace capture ({exc})",
        "give the `.xplane.pb` that tf.profiler wrote; a file renamed from another format "
        "(a `.trace.json.gz`, TensorBoard's events) is not a capture", path)]


def content_findings(s: ReadSummary) -> list[Finding]:
    """A capture that reads but says little: no planes, no events, recorded errors, no device,
    no steps, no ops."""
    out: list[Finding] = []
    for text in s.recorded_errors:
        out.append(_recorded(s.path, text))
    if not s.planes:
        out.append(_finding(
            "no_planes", Status.FAIL, f"{s.path} holds no planes: the profiler recorded "
            "nothing (started and stopped with no tracer running)",
            "profile a few steps after warm-up; make sure no other profiler session is active",
            s.path))
        return out
    if s.events == 0:
        out.append(_finding(
            "no_events", Status.FAIL, f"{s.path} has planes ({', '.join(s.planes)}) but no "
            "events: nothing ran between start and stop",
            "start the profiler, then run the steps, then stop it; with Keras, profile_batch "
            "must fall inside the epochs that run", s.path))
        return out
    gpu_hint = _gpu_expected(s)
    if s.host_only and gpu_hint:
        out.append(_finding(
            "no_device", Status.WARN, f"no device plane although the program used a GPU "
            f"({gpu_hint}): GPU kernels were not recorded",
            "CUPTI must load: put CUDA's CUPTI library on LD_LIBRARY_PATH and keep "
            "device_tracer_level=1 (the default)", s.path))
    elif s.host_only:
        out.append(_finding(
            "host_only", Status.INFO, "host-only capture (a CPU run): device time, copies and "
            "kernel launches are not in it", "", s.path))
    if s.op_events == 0:
        out.append(_finding(
            "no_ops", Status.WARN, "no TensorFlow op events: the host tracer ran at level 1 "
            "(critical only) or nothing but Python ran",
            "capture with `tf.profiler.experimental.ProfilerOptions(host_tracer_level=2)`",
            s.path))
    if s.step_source == "whole capture":
        out.append(_finding(
            "no_steps", Status.WARN, "no steps found (no step markers, no tf.function calls): "
            "figures cover the whole capture, not a step", NO_STEPS_FIX, s.path))
    elif s.step_source == "tf.function calls":
        out.append(_finding(
            "no_step_markers", Status.INFO, f"no step markers: each of the {s.steps} top-level "
            "tf.function calls counts as a step", NO_STEPS_FIX, s.path))
    if s.unsorted_lines:
        out.append(_finding(
            "unsorted", Status.INFO, f"{s.unsorted_lines} timeline(s) hold events out of time "
            "order (a merged or hand-made capture); tfperf sorted them", "", s.path))
    return out


def _recorded(path: str, text: str) -> Finding:
    for pattern, what, fix in _RECORDED:
        if pattern.search(text):
            return _finding("tracer_error", Status.WARN, f"the capture records an error: {what} "
                            f"({text.strip()[:200]})", fix, path, recorded=text)
    return _finding("tracer_error", Status.WARN, f"the capture records an error: "
                    f"{text.strip()[:200]}", "see the error's own text; the figures below may be "
                    "partial", path, recorded=text)


def _gpu_expected(s: ReadSummary) -> str | None:
    """Evidence in a host-only capture that a GPU was in use."""
    if any("cupti" in e.lower() for e in s.recorded_errors + s.recorded_warnings):
        return "the capture mentions CUPTI"
    if "/host:CUPTI" in s.planes:
        return "a CUPTI plane with no device plane"
    for op in s.ops:
        if "GPU" in op.name or op.type in ("MemcpyH2D", "MemcpyD2H", "_HostSend", "_HostRecv"):
            return f"op {op.name}"
    return None
