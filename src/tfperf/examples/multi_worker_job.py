"""A small ``MultiWorkerMirroredStrategy`` training job, and a launcher for it on localhost.

Each worker is its own process (``python -m tfperf.examples.multi_worker_job --index I
--cluster localhost:P0,localhost:P1 --profiler-port Q``) with ``TF_CONFIG`` built from its
arguments; it serves TF's profiler on its own port (``tfperf.serve_profiler``), marks every
step, and trains a tiny dense layer with a gradient all-reduce per step. ``--sleep-ms`` makes
one worker slow on purpose (host work before each step) so that ``tfperf profile --remote``
can be seen to name it. :class:`LocalJob` starts the workers, waits until they train, and
always kills them; tests and ``benchmarks/bench_multi_device.py`` use it.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from typing import Any

READY = "tfperf-job: training"
DONE = "tfperf-job: done"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="multi_worker_job")
    parser.add_argument("--index", type=int, required=True)
    parser.add_argument("--cluster", required=True, help="HOST:PORT,HOST:PORT (the workers)")
    parser.add_argument("--profiler-port", type=int, default=0)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--sleep-ms", type=float, default=0.0)
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--step-log", default=None,
                        help="write each step's wall-clock start and duration (JSON) here")
    args = parser.parse_args(argv)
    os.environ["TF_CONFIG"] = json.dumps({
        "cluster": {"worker": args.cluster.split(",")},
        "task": {"type": "worker", "index": args.index}})
    import tensorflow as tf

    import tfperf
    from tfperf.profile.capture import step as mark_step

    if args.profiler_port:
        tfperf.serve_profiler(args.profiler_port)
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    with strategy.scope():
        w = tf.Variable(tf.ones([args.width, args.width]) / args.width)
    x = tf.random.stateless_normal([64, args.width], seed=[1, args.index])

    @tf.function
    def train_step() -> Any:
        def replica() -> Any:
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(tf.matmul(x, w)))
            grad = tape.gradient(loss, w)
            grad = tf.distribute.get_replica_context().all_reduce("sum", grad)
            w.assign_sub(0.01 * grad)
            return loss
        return strategy.run(replica)

    times: list[tuple[float, float]] = []
    for i in range(args.steps):
        started, t0 = time.time(), time.perf_counter()
        with mark_step(i):
            if args.sleep_ms:
                time.sleep(args.sleep_ms / 1000)  # the slow worker's extra host work
            train_step()
        times.append((started, time.perf_counter() - t0))
        if i == 2:
            print(READY, flush=True)
    if args.step_log:
        with open(args.step_log, "w", encoding="utf-8") as fh:
            json.dump(times, fh)
    print(DONE, flush=True)
    return 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return int(s.getsockname()[1])


class LocalJob:
    """``n`` workers of the job on localhost, each with a profiler server; always killed.

    ``with LocalJob(2, steps=300, sleep_ms={1: 30}) as job: job.profiler_addresses``.
    """

    def __init__(self, workers: int = 2, steps: int = 300,
                 sleep_ms: Mapping[int, float] | None = None, ready_timeout: float = 120.0,
                 step_log_dir: str | None = None, python: str = sys.executable):
        self.workers, self.steps = workers, steps
        self.sleep_ms = dict(sleep_ms or {})
        self.ready_timeout, self.python = ready_timeout, python
        self.step_log_dir = step_log_dir
        self.procs: list[subprocess.Popen[str]] = []
        self.logs: list[list[str]] = []
        self.cluster = [f"localhost:{free_port()}" for _ in range(workers)]
        self.profiler_ports = [free_port() for _ in range(workers)]

    @property
    def profiler_addresses(self) -> list[tuple[str, int]]:
        return [("localhost", p) for p in self.profiler_ports]

    def __enter__(self) -> LocalJob:
        lines: queue.Queue[tuple[int, str]] = queue.Queue()
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "TF_CPP_MIN_LOG_LEVEL": "2"}
        try:
            for i in range(self.workers):
                argv = [self.python, "-m", "tfperf.examples.multi_worker_job", "--index", str(i),
                        "--cluster", ",".join(self.cluster),
                        "--profiler-port", str(self.profiler_ports[i]),
                        "--steps", str(self.steps),
                        "--sleep-ms", str(self.sleep_ms.get(i, 0.0))]
                if self.step_log_dir:
                    argv += ["--step-log", os.path.join(self.step_log_dir, f"steps{i}.json")]
                proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, text=True, errors="replace",
                                        env=env, start_new_session=True)
                self.procs.append(proc)
                self.logs.append([])
                threading.Thread(target=self._read, args=(i, proc, lines), daemon=True).start()
            self._wait_ready(lines)
        except BaseException:
            self.stop()
            raise
        return self

    def _read(self, index: int, proc: subprocess.Popen[str],
              sink: queue.Queue[tuple[int, str]]) -> None:
        for line in proc.stdout or ():
            self.logs[index].append(line)
            sink.put((index, line))

    def _wait_ready(self, lines: queue.Queue[tuple[int, str]]) -> None:
        ready: set[int] = set()
        deadline = time.monotonic() + self.ready_timeout
        while len(ready) < self.workers:
            left = deadline - time.monotonic()
            dead = [i for i, p in enumerate(self.procs) if p.poll() is not None]
            if dead or left <= 0:
                why = f"worker {dead[0]} ended" if dead else \
                    f"not training after {self.ready_timeout:g}s"
                raise RuntimeError(f"the local job did not start: {why}\n" + self.log_tail())
            try:
                index, line = lines.get(timeout=min(left, 0.5))
            except queue.Empty:
                continue
            if READY in line:
                ready.add(index)

    def log_tail(self, chars: int = 3000) -> str:
        return "\n".join(f"--- worker {i}\n" + "".join(log)[-chars:]
                         for i, log in enumerate(self.logs))

    def crashed(self) -> list[int]:
        """Workers that died by a signal (TF's profiler can abort a worker while collecting)."""
        return [i for i, p in enumerate(self.procs)
                if p.poll() is not None and p.returncode not in (0, None)]

    def wait(self, timeout: float) -> bool:
        """Let the job finish its steps; True when every worker ended cleanly."""
        deadline = time.monotonic() + timeout
        for p in self.procs:
            try:
                p.wait(timeout=max(deadline - time.monotonic(), 0.1))
            except subprocess.TimeoutExpired:
                return False
        return all(p.returncode == 0 for p in self.procs)

    def stop(self) -> None:
        from tfperf.doctor.probes.runner import kill_group

        for p in self.procs:
            if p.poll() is None:
                kill_group(p)

    def __exit__(self, *exc: Any) -> None:
        self.stop()


if __name__ == "__main__":
    sys.exit(main())
