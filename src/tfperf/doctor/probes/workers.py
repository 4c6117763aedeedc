"""``tfperf doctor --workers``: this machine's part of a multi-worker check, in a subprocess.

Every worker of the cluster runs ``tfperf doctor --workers SPEC`` with the same cluster (as a
``TF_CONFIG`` JSON, the word ``env`` for ``$TF_CONFIG``, or ``HOST:PORT,HOST:PORT`` with
``--worker-index``). The child (:mod:`tfperf.doctor.probes.workers_child`) joins a
``MultiWorkerMirroredStrategy``; a worker that never comes leaves it waiting in ``join``, so
the stage deadline ends it, and the workers whose ports do not answer are named.
Only with ``GatherOptions.workers``; otherwise it finds nothing.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from typing import Any

from tfperf.doctor.probe import GatherOptions
from tfperf.doctor.probes.devices import run_stages

STAGE = "slow"


class WorkersSpecError(ValueError):
    """A --workers value that names no cluster."""


def parse_workers(spec: str, index: int | None = None) -> tuple[list[str], int]:
    """(worker addresses, this worker's index) from a TF_CONFIG JSON, a file holding one,
    ``env`` ($TF_CONFIG), or a ``HOST:PORT,...`` list with ``index``."""
    text = spec.strip()
    if text == "env":
        text = os.environ.get("TF_CONFIG", "")
        if not text:
            raise WorkersSpecError("TF_CONFIG is not set; give HOST:PORT,HOST:PORT or set "
                                   "TF_CONFIG")
    elif not text.startswith("{") and os.path.isfile(text):
        text = _read_config_file(text)
    elif not text.startswith("{") and (text.endswith(".json") or os.sep in text) \
            and "," not in text:
        # a TF_CONFIG file's name, not a host list: said missing, not "not HOST:PORT"
        raise WorkersSpecError(f"{text}: no such file (a TF_CONFIG file, or give "
                               "HOST:PORT,HOST:PORT)")
    if text.lstrip().startswith("{"):
        try:
            config = json.loads(text)
            workers = list(config["cluster"]["worker"])
            task = config.get("task", {})
            if task.get("type", "worker") != "worker":
                raise WorkersSpecError(f"this task is a {task.get('type')!r}: only workers "
                                       "take part in the collective check")
            at = int(task.get("index", 0)) if index is None else index
        except (ValueError, KeyError, TypeError) as exc:
            if isinstance(exc, WorkersSpecError):
                raise
            raise WorkersSpecError(f"not a TF_CONFIG with cluster.worker: {exc}") from None
    else:
        workers = [w.strip() for w in text.split(",") if w.strip()]
        at = index or 0
        if not all(":" in w for w in workers):
            raise WorkersSpecError(f"not HOST:PORT,HOST:PORT: {spec!r}")
    if len(workers) < 2:
        raise WorkersSpecError("a multi-worker check needs at least two workers")
    if not 0 <= at < len(workers):
        raise WorkersSpecError(f"worker index {at} is not in 0..{len(workers) - 1}")
    return workers, at


def _read_config_file(path: str) -> str:
    """A TF_CONFIG file's text; anything else is a WorkersSpecError that names the file (a
    binary file ended in a UnicodeDecodeError traceback, stop 45)."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except UnicodeDecodeError:
        raise WorkersSpecError(f"{path}: not a TF_CONFIG file (not UTF-8 text)") from None
    except OSError as exc:
        raise WorkersSpecError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    if not text.lstrip().startswith("{"):
        raise WorkersSpecError(f"{path}: not a TF_CONFIG file (its JSON object, "
                               '{"cluster": {"worker": [...]}, "task": {...}})')
    return text


def probe_workers(workers: list[str], index: int, timeout: float = 120.0,
                  import_timeout: float | None = None, max_bytes: int = 4 * 2**20,
                  python: str = sys.executable) -> dict[str, Any]:
    """This worker's stages; after a hang, which workers' ports do not answer."""
    from tfperf.profile.remote import reachable

    config = {"cluster": {"worker": workers}, "task": {"type": "worker", "index": index}}
    argv = [python, "-m", "tfperf.doctor.probes.workers_child", "--index", str(index),
            "--workers", str(len(workers)), "--max-bytes", str(max_bytes)]
    out = run_stages(argv, timeout, import_timeout or timeout,
                     env={"TF_CONFIG": json.dumps(config)})
    out.update(workers=workers, index=index)
    if out["status"] != "ok":
        silent = []
        for i, address in enumerate(workers):
            host, _, port = address.rpartition(":")
            if i != index and reachable(host, int(port)) is not None:
                silent.append(i)
        out["silent_workers"] = silent
    return out


def probe(options: GatherOptions, earlier: Mapping[str, Any]) -> Mapping[str, Any]:
    """This worker's part of a multi-worker collective check (only with ``--workers``)."""
    if not options.workers:
        return {}
    workers, index = parse_workers(options.workers, options.worker_index)
    from tfperf.core.tensorflow_needed import tensorflow_missing

    missing = tensorflow_missing()
    if missing:  # the doctor's own check says so, with the fix: no child to start
        return {"workers": {"status": "not run", "not_installed": missing, "stages": {},
                            "workers": workers, "index": index}}
    return {"workers": probe_workers(workers, index, options.timeout)}
