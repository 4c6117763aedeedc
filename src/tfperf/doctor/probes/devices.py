"""``tfperf doctor --devices``: collectives across this machine's devices, in a subprocess.

The child (:mod:`tfperf.doctor.probes.devices_child`) builds ``MirroredStrategy`` over the
visible GPUs (or logical CPU devices) and runs each stage in turn. A collective that never
completes hangs its process for good, so this side reads the child's JSON lines with a
deadline per stage: a hang costs one timeout, names the stage it hung in, and keeps every
stage that finished before it. Only with ``GatherOptions.devices``; otherwise it finds nothing.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from typing import Any

from tfperf.doctor.probe import GatherOptions
from tfperf.doctor.probes.runner import kill_group, start_child

STAGE = "slow"


def _reader(stream: Any, sink: queue.Queue[str | None]) -> None:
    for line in stream:
        sink.put(line)
    sink.put(None)


def probe_devices(timeout: float = 120.0, logical_cpus: int = 2, max_bytes: int | None = None,
                  import_timeout: float | None = None,
                  bandwidth: bool = True, plant: Mapping[str, Any] | None = None,
                  python: str = sys.executable) -> dict[str, Any]:
    """Raw results by stage, and ``status``: ``ok``, ``timed out after Ns in <stage>``, or
    how the child ended. ``timeout`` bounds each stage; ``import_timeout`` (default
    ``timeout``) TensorFlow's import before the first one."""
    argv = [python, "-m", "tfperf.doctor.probes.devices_child",
            "--logical-cpus", str(logical_cpus)]
    if max_bytes:
        argv += ["--max-bytes", str(max_bytes)]
    if not bandwidth:
        argv.append("--no-bandwidth")
    if plant:
        argv += ["--plant", json.dumps(dict(plant))]
    return run_stages(argv, timeout, import_timeout or timeout)


def run_stages(argv: list[str], timeout: float, import_timeout: float,
               env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Run a stage-speaking child (``start``/``result`` JSON lines): its results by stage and
    how it ended; a stage that overruns ``timeout`` gets the child killed and named."""
    env = {**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1", "TF_CPP_MIN_LOG_LEVEL": "2"}
    out: dict[str, Any] = {"status": None, "stages": {}, "timeout_s": timeout}
    start = time.monotonic()
    with tempfile.TemporaryFile() as log:
        try:
            proc = start_child(argv, log, env)
        except OSError as exc:
            out["status"] = f"could not start {argv[0]}: {exc}"
            return out
        _follow(proc, out, timeout, import_timeout)
        if out["status"] != "ok":
            log.seek(0)
            out["stderr_tail"] = log.read().decode("utf-8", errors="replace")[-2000:]
    out["seconds"] = round(time.monotonic() - start, 3)
    return out


def _follow(proc: subprocess.Popen[str], out: dict[str, Any], timeout: float,
            import_timeout: float) -> None:
    """Read the child's stages into ``out`` until it ends, or kill it when a stage overruns."""
    lines: queue.Queue[str | None] = queue.Queue()
    threading.Thread(target=_reader, args=(proc.stdout, lines), daemon=True).start()
    running, limit = "import", import_timeout
    deadline = time.monotonic() + limit
    try:
        while True:
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                out["status"] = f"timed out after {limit:g}s in {running}"
                out["hung_stage"] = running
                break
            if line is None:
                break
            try:
                msg = json.loads(line)
            except ValueError:
                continue  # a library printing to stdout: not ours
            if msg.get("kind") == "start":
                running = msg["id"]
            elif msg.get("kind") == "result":
                out["stages"][msg["id"]] = ({"error": msg["error"]} if "error" in msg
                                            else msg.get("result"))
                running = "between stages"
            limit = timeout
            deadline = time.monotonic() + limit
        if out["status"] is None:
            proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        out["status"] = "did not exit after its last stage"
    finally:
        kill_group(proc)  # whatever happened, the child and its threads go
    if out["status"] is None:
        code = proc.returncode
        out["status"] = "ok" if code == 0 else f"ended ({_describe(code)}) in {running}"


def _describe(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


def probe(options: GatherOptions, earlier: Mapping[str, Any]) -> Mapping[str, Any]:
    """Collectives across this machine's devices (only with ``--devices``)."""
    if not options.devices:
        return {}
    from tfperf.core.tensorflow_needed import tensorflow_missing

    missing = tensorflow_missing()
    if missing:  # the doctor's own check says so, with the fix: no child to start
        return {"devices": {"status": "not run", "not_installed": missing, "stages": {}}}
    return {"devices": probe_devices(options.timeout, options.logical_cpus,
                                     options.max_message_bytes)}
