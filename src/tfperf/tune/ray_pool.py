"""``--ray ADDRESS``: the isolated candidates' processes on a Ray cluster (an optional extra,
``pip install 'tfperf[ray]'``; imported only here, only when asked).

Ray does the placing: each candidate is a Ray actor (asking for one GPU where the device facts
show GPUs, so Ray pins it with ``CUDA_VISIBLE_DEVICES``), and the actor starts the same
``python -m tfperf.tune.child`` process as a local run and relays the same commands to it
(:class:`tfperf.tune.worker.Worker`), so a segfault kills that child, not the Ray worker.
Outputs come back as the ``.npz`` file's bytes. No candidate's actor is kept after its
screen (it would hold its GPU), so speedups are own-process medians, possibly measured on
different nodes: a heterogeneous cluster needs a local final check. The user's file (and
its inputs function) must be at the same path on every node, as with any Ray job that imports
user modules.
``ADDRESS`` is what ``ray.init`` takes (``auto``, ``ray://host:10001``); ``local`` starts a
Ray instance on this machine (the tests use it).
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from tfperf.tune.device import DeviceFacts
from tfperf.tune.pool import Slot
from tfperf.tune.target import TuneError
from tfperf.tune.worker import Worker, WorkerFailed

T = TypeVar("T")

MISSING = ("--ray needs Ray, which is not installed here: pip install 'tfperf[ray]' "
           "(or run without --ray)")


def require_ray() -> Any:
    """The ``ray`` module, or :class:`TuneError` with the one line to fix it."""
    try:
        import ray
    except ImportError:
        raise TuneError(MISSING) from None
    return ray


class ChildActor:
    """Runs on a Ray worker: one local child process, the commands relayed to it."""

    def __init__(self, label: str) -> None:
        self.worker = Worker({}, label)
        self.dir = Path(tempfile.mkdtemp(prefix="tfperf-tune-ray-"))

    def call(self, cmd: dict[str, Any], timeout: float) -> dict[str, Any]:
        cmd = dict(cmd)
        if "out" in cmd:  # the parent's path means nothing here: a file of this node
            cmd["out"] = str(self.dir / Path(cmd["out"]).name)
        if cmd.get("op") == "load":
            cmd["workdir"] = str(self.dir)
            spec = cmd["inputs"]
            if spec.get("kind") == "arrays":
                local = self.dir / "inputs.npz"
                local.write_bytes(spec.pop("npz_bytes"))
                cmd["inputs"] = {**spec, "npz": str(local)}
        try:
            reply = self.worker.call(cmd, timeout)
        except WorkerFailed as exc:
            return {"worker_failed": str(exc)}
        outputs = reply.get("outputs")
        if outputs:
            path = Path(outputs["npz"])
            reply["outputs"] = {**outputs, "npz_bytes": path.read_bytes()}
            path.unlink(missing_ok=True)
        return reply

    def close(self) -> None:
        self.worker.close()
        import shutil

        shutil.rmtree(self.dir, ignore_errors=True)


class RayWorker:
    """The driver's handle on a :class:`ChildActor`: the :class:`Worker` interface."""

    def __init__(self, ray: Any, actor: Any, workdir: Path) -> None:
        self.ray, self.actor, self.workdir = ray, actor, workdir

    def call(self, cmd: dict[str, Any], timeout: float) -> dict[str, Any]:
        cmd = dict(cmd)
        if cmd.get("op") == "load" and cmd["inputs"].get("kind") == "arrays":
            cmd["inputs"] = {**cmd["inputs"],
                             "npz_bytes": Path(cmd["inputs"]["npz"]).read_bytes()}
        ref = self.actor.call.remote(cmd, timeout)
        try:  # the actor enforces the limit; this one covers the actor's own start
            reply: dict[str, Any] = self.ray.get(ref, timeout=timeout + 120)
        except Exception as exc:  # GetTimeoutError, RayActorError: the candidate's verdict
            raise WorkerFailed(f"Ray actor failed in {cmd.get('op')}: "
                               f"{type(exc).__name__}: {str(exc)[:160]}") from None
        if "worker_failed" in reply:
            raise WorkerFailed(reply["worker_failed"])
        outputs = reply.get("outputs")
        if outputs and "npz_bytes" in outputs:
            local = self.workdir / Path(cmd.get("out", "outputs.npz")).name
            local.write_bytes(outputs.pop("npz_bytes"))
            reply["outputs"] = {**outputs, "npz": str(local)}
        return reply

    def close(self) -> None:
        with contextlib.suppress(Exception):  # a dead actor is closed already
            self.ray.get(self.actor.close.remote(), timeout=30)
        with contextlib.suppress(Exception):
            self.ray.kill(self.actor)


class RayPool:
    """Candidates as Ray actors; at most ``devices`` (default: the cluster's GPUs, else its
    CPUs) in flight from this driver; Ray queues and places them."""

    def __init__(self, address: str, devices: int | str | None, facts: DeviceFacts,
                 workdir: Path | None = None) -> None:
        ray = self.ray = require_ray()
        if not ray.is_initialized():
            try:
                ray.init(address=None if address == "local" else address,
                         include_dashboard=False, log_to_driver=False)
            except Exception as exc:  # a wrong address, a cluster that is not there
                raise TuneError(f"--ray {address}: cannot connect: {type(exc).__name__}: "
                                f"{str(exc)[:200]}") from None
        resources = ray.cluster_resources()
        self.gpus = int(resources.get("GPU", 0))
        auto = self.gpus or int(resources.get("CPU", 1))
        self.n = max(1, auto if devices in (None, "auto") else int(devices or 1))
        self.address = address
        self.workdir = workdir or Path(tempfile.mkdtemp(prefix="tfperf-tune-ray-"))
        # No CPU reserved (this driver bounds how many run at once; a reserved CPU held by an
        # idle actor would block the next one), spread over the nodes; a whole GPU each.
        self._actor = ray.remote(num_gpus=1 if self.gpus else 0, num_cpus=0,
                                 scheduling_strategy="SPREAD")(ChildActor)
        self._executor = ThreadPoolExecutor(max_workers=self.n,
                                            thread_name_prefix="tfperf-tune-ray")

    @property
    def parallel(self) -> int:
        return self.n

    @property
    def keep(self) -> int:
        """Candidates' actors kept after screening: none (a kept actor would hold its GPU),
        so speedups under Ray are own-process medians, never final rounds."""
        return 0

    def submit(self, job: Callable[[Slot], T]) -> Future[T]:
        return self._executor.submit(job, Slot(f"Ray {self.address}", gpu=bool(self.gpus)))

    def worker(self, slot: Slot, label: str) -> RayWorker:
        return RayWorker(self.ray, self._actor.remote(label), self.workdir)

    def describe(self) -> dict[str, Any]:
        return {"kind": "ray", "address": self.address, "in_flight": self.n,
                "cluster_gpus": self.gpus}

    def close(self) -> None:
        self._executor.shutdown(wait=True)
