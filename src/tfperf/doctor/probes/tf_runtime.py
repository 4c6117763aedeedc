"""TensorFlow as it really runs here: imported in a subprocess with a time limit.

Importing TF in the doctor's own process would risk a hang or a crash (an illegal
instruction, a broken CUDA library) taking the report down with it, and would hide the
import log. The child (:mod:`tfperf.doctor.probes.tf_child`) streams JSON lines; this side
reads them with a deadline per stage (the import, then each live check), so a hang costs one
timeout, is reported as such, and leaves every fact gathered before it.

The child's stderr (fd 2, where TF's C++ log goes) is a temporary file owned by this side, not
a pipe and not the child's own file: a child killed mid-import (SIGILL, SIGKILL, a timeout)
still leaves its import log here, and the doctor's checks explain it.
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

MAX_LOG_CHARS = 64_000  # the import log kept: its end, where the failure is


def _reader(stream: Any, sink: queue.Queue[str | None]) -> None:
    for line in stream:
        sink.put(line)
    sink.put(None)


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


def tensorflow_importable() -> bool:
    from tfperf.core.tensorflow_needed import tensorflow_missing

    return tensorflow_missing() is None


def probe_tensorflow(timeout: float = 120.0, compute: bool = True,
                     matmul_size: int | None = None, live_timeout: float | None = None,
                     python: str = sys.executable) -> dict[str, Any]:
    """Facts about TF (``tf_probe`` says how the probe went) and the raw live results."""
    facts: dict[str, Any] = {"tf_probe": None, "live": {}}
    if not tensorflow_importable():
        facts["tf_probe"] = "not installed (no importable tensorflow module)"
        return facts
    live_timeout = live_timeout or timeout
    argv = [python, "-m", "tfperf.doctor.probes.tf_child"]
    if compute:
        argv.append("--compute")
    if matmul_size:
        argv += ["--matmul-size", str(matmul_size)]
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "0", "PYTHONUNBUFFERED": "1"}
    with tempfile.TemporaryFile() as log:
        try:
            proc = start_child(argv, log, env)
        except OSError as exc:
            facts["tf_probe"] = f"could not start {python}: {exc}"
            return facts
        _follow(proc, facts, timeout, live_timeout)
        log.seek(0)
        _keep_import_log(facts, log.read().decode("utf-8", errors="replace"))
    return facts


def _keep_import_log(facts: dict[str, Any], text: str) -> None:
    """The child's stderr up to its IMPORT_DONE marker (all of it if the import never ended)."""
    from tfperf.doctor.probes.tf_child import IMPORT_DONE

    text = text.split(IMPORT_DONE, 1)[0].strip("\n")
    if len(text) > MAX_LOG_CHARS:
        text = "…(earlier lines cut)\n" + text[-MAX_LOG_CHARS:]
    if text or "tf_import_log" not in facts:
        facts["tf_import_log"] = text


def _follow(proc: subprocess.Popen[str], facts: dict[str, Any], timeout: float,
            live_timeout: float) -> None:
    """Read the child's JSON lines into ``facts`` until it ends, dies or overruns a deadline."""
    lines: queue.Queue[str | None] = queue.Queue()
    threading.Thread(target=_reader, args=(proc.stdout, lines), daemon=True).start()

    stage, limit = "import", timeout
    deadline = time.monotonic() + limit
    running: str | None = None
    while True:
        try:
            line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            kill_group(proc)
            what = f"timed out after {limit:g}s"
            if running:
                facts["live"][running] = {"error": what}
                running = None  # reported; not a crash
            else:
                facts["tf_probe"] = f"{what} during {stage}"
            break
        if line is None:  # child finished (or died)
            break
        try:
            msg = json.loads(line)
        except ValueError:
            continue  # a library printing to stdout: not ours
        kind = msg.pop("kind", None)
        if kind == "facts":
            facts.update(msg)
            facts["tf_probe"] = "ok"
            stage, limit = "live checks", live_timeout
        elif kind == "error":
            facts["tf_probe"] = f"import failed: {msg.get('error')}"
            facts["tf_import_traceback"] = msg.get("traceback")
        elif kind == "start":
            running, stage, limit = msg["id"], f"live check {msg['id']}", live_timeout
        elif kind == "live":
            facts["live"][msg["id"]] = msg.get("result") if "result" in msg else {
                "error": msg.get("error")}
            running = None
        deadline = time.monotonic() + limit
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        kill_group(proc)
    if facts["tf_probe"] is None:  # died without a word: a segfault or SIGILL on import
        facts["tf_probe"] = f"import crashed ({_describe_exit(proc.returncode)})"
    elif running:  # crashed during a live check
        facts["live"][running] = {"error": f"subprocess {_describe_exit(proc.returncode)}"}


def probe(options: GatherOptions, earlier: Mapping[str, Any]) -> Mapping[str, Any]:
    """TensorFlow as it really runs here, imported in a subprocess."""
    return probe_tensorflow(options.timeout, options.compute, options.matmul_size)
