"""A first call that may outrun its limit, tried where it can be abandoned.

A trace of an unrolled Python loop or an XLA compile cannot be interrupted in-process (the
call limit fires only when it returns; an interrupted trace can leave TensorFlow in graph
mode), and no estimate of its length holds: compile times measured on this machine ranged
from 0.4 s to 16 s for graphs that an op-count guess put at 20-53 s. So a candidate whose
first call might overrun is called once first in a child process (:mod:`tfperf.tune.child`)
that is killed at the limit: the measured first call decides, not a guess.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tfperf.tune.target import Target, TuneError


@dataclass
class Probe:
    """What the child's first call gave: its seconds, or why none."""

    first_call_s: float | None = None
    overran: bool = False  # killed at the limit: the first call did not finish in time
    failed: str | None = None  # it raised, or the child could not load the candidate
    unavailable: str | None = None  # no child can run it (a function not in a .py file)


def first_call(target: Target, source: str, workdir: Path, limit: float,
               load_limit: float) -> Probe:
    """One call of the candidate ``source`` in a child process, killed after ``limit``
    seconds of calling (its start-up, at most ``load_limit`` seconds, is apart)."""
    from tfperf.tune.inputs import locate
    from tfperf.tune.isolate import inputs_spec
    from tfperf.tune.worker import Worker, WorkerFailed

    where = locate(target.fn)
    if where is None:
        return Probe(unavailable="the function is not defined at module level in a .py file")
    try:
        spec = inputs_spec(target, workdir)
    except TuneError as exc:
        return Probe(unavailable=str(exc))
    load: dict[str, Any] = {"op": "load", "function": where, "inputs": spec,
                            "workdir": str(workdir), "sys_path": list(sys.path),
                            "source": source, "threads": None, "needs_gpu": False}
    worker = Worker(label="probe")
    try:
        try:
            loaded = worker.call(load, timeout=load_limit)
        except WorkerFailed as exc:
            return Probe(unavailable=f"its child process did not start: {exc}")
        if "exception" in loaded or "rejected" in loaded:
            return Probe(failed=f"the edited code fails to load: "
                                f"{loaded.get('exception') or loaded.get('rejected')}")
        try:
            reply = worker.call({"op": "first"}, timeout=limit)
        except WorkerFailed as exc:
            if str(exc).startswith("timed out"):
                return Probe(overran=True)
            return Probe(failed=f"its process failed: {exc}")
        if "exception" in reply:
            return Probe(failed=f"raises: {reply['exception']}")
        return Probe(first_call_s=float(reply["first_call_s"]))
    finally:
        worker.close()
