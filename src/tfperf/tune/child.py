"""One isolated candidate: ``python -m tfperf.tune.child``, driven by JSON lines on stdin.

The parent (:mod:`tfperf.tune.worker`) starts one fresh process per candidate, so that its
TensorFlow state, its memory, a crash or a hang stay here. Commands, one JSON object a line;
each gets one JSON reply line on the process's original stdout (the user's prints go to
stderr):

``load``     threads set (before TensorFlow starts: the only time it can be), the user's
             module imported, the candidate built from its source text exactly as in-process
             (:func:`tfperf.tune.build.load`), its inputs made (arrays shipped by the parent,
             or the user's inputs function)
``screen``   first calls (:func:`tfperf.tune.screen.screen`), outputs written to a ``.npz``
``measure``  the steady state by the one measurement core (:func:`tfperf.core.measure.measure`)
``truth``    the function on float64 inputs (the reference reduced precision is judged by)
``quit``

A Python error in a command is a reply (``{"exception": ...}``), not a crash.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from pathlib import Path
from typing import Any

from tfperf.bench.verify import describe_error


class _Candidate:
    def __init__(self) -> None:
        self.fn: Any = None
        self.namespace: dict[str, Any] = {}
        self.target: Any = None

    def load(self, cmd: dict[str, Any]) -> dict[str, Any]:
        threads = cmd.get("threads")
        import tensorflow as tf

        for gpu in tf.config.list_physical_devices("GPU"):  # processes kept alive share it
            tf.config.experimental.set_memory_growth(gpu, True)
        if threads:  # before anything runs TensorFlow: set once, fixed for the process
            tf.config.threading.set_intra_op_parallelism_threads(int(threads[0]))
            tf.config.threading.set_inter_op_parallelism_threads(int(threads[1]))
        seen = {"cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
                "threads": threads,
                "gpus_seen": len(tf.config.list_physical_devices("GPU")), "pid": os.getpid()}
        if cmd.get("needs_gpu") and not seen["gpus_seen"]:
            return {**seen, "rejected": "needs a GPU: this process (CUDA_VISIBLE_DEVICES="
                                        f"{seen['cuda_visible_devices']!r}) sees none"}
        for entry in reversed(cmd.get("sys_path", [])):
            if entry not in sys.path:
                sys.path.insert(0, entry)
        from tfperf.tune import arrays
        from tfperf.tune.build import load
        from tfperf.tune.device import DeviceFacts
        from tfperf.tune.inputs import InputsFunction, find
        from tfperf.tune.lever import LeverContext
        from tfperf.tune.target import Target

        fn = find(cmd["function"])
        spec = cmd["inputs"]
        if spec["kind"] == "factory":
            make = find(spec["function"])
            target = Target.from_function(
                fn, inputs=InputsFunction(make) if spec.get("as_args") else make)
        else:
            args, kwargs = arrays.load(spec["skeleton"], spec["npz"])
            target = Target.from_function(fn, tuple(args), kwargs)
        self.target = target
        source = cmd.get("source") or target.source
        built = load(LeverContext(target, DeviceFacts()), source, Path(cmd["workdir"]))
        self.fn, self.namespace = built.fn, built.namespace
        seen["intra_op"] = tf.config.threading.get_intra_op_parallelism_threads()
        seen["inter_op"] = tf.config.threading.get_inter_op_parallelism_threads()
        return seen

    def screen(self, cmd: dict[str, Any]) -> dict[str, Any]:
        from tfperf.tune import arrays
        from tfperf.tune.screen import screen

        args, kwargs = self.target.fresh_inputs()
        varied = ints_varied = None
        if self.target.inputs is None:  # the parent's sets, made alike
            from tfperf.tune.varied import vary_inputs

            if cmd.get("varied"):
                v_args, v_kwargs, _ = vary_inputs(tuple(args), dict(kwargs), ints=False)
                varied = (v_args, v_kwargs)
            if cmd.get("varied_ints"):
                i_args, i_kwargs, changed = vary_inputs(tuple(args), dict(kwargs))
                ints_varied = (i_args, i_kwargs) if changed else None
        s = screen(self.fn, args, kwargs, self.namespace, limit=cmd["limit"],
                   watch_retraces=bool(cmd.get("watch_retraces")),
                   more_if_under=cmd.get("more_if_under"),
                   first_limit=cmd.get("first_limit"), varied=varied, ints_varied=ints_varied)
        out = {"first_call_s": s.first_call_s, "second_call_s": s.second_call_s,
               "error": s.error, "retraces": s.retraces, "fallback": s.fallback,
               "retraced": s.retraced, "ops": None, "varied_error": s.varied_error,
               "varied_timed_out": s.varied_timed_out, "varied_called": s.varied_called,
               "ints_error": s.ints_error, "ints_timed_out": s.ints_timed_out}
        path = Path(cmd["out"])
        out["outputs"] = {"skeleton": arrays.save(s.outputs, path, "outputs"),
                          "npz": str(path)}
        for key, value in (("varied_output", s.varied_output), ("ints_output", s.ints_output)):
            if value is not None:
                vpath = path.with_name(f"{path.stem}_{key}.npz")
                out[key] = {"skeleton": arrays.save(value, vpath, "outputs"),
                            "npz": str(vpath)}
        if cmd.get("count_ops") and not s.error:
            out["ops"] = self._ops(cmd["limit"])
        return out

    def first(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """One call, timed (a trace or compile that may overrun: the parent kills us)."""
        import time

        args, kwargs = self.target.fresh_inputs()
        t0 = time.perf_counter()
        self.fn(*args, **kwargs)
        return {"first_call_s": time.perf_counter() - t0}

    def _ops(self, limit: float) -> int | None:
        """Eager ops one more call runs (tracing levers are not started past a count)."""
        from tfperf.bench.deadline import CallTimeout, time_limit
        from tfperf.profile.watcher import watch

        args, kwargs = self.target.fresh_inputs()
        try:
            with time_limit(limit), \
                    watch(functions=False, host_syncs=False, eager_ops=True) as w:
                self.fn(*args, **kwargs)
        except (Exception, CallTimeout):
            return None
        return int(w.obs.eager_op_count)

    def measure(self, cmd: dict[str, Any]) -> dict[str, Any]:
        from tfperf.core.measure import measure

        args, kwargs = self.target.fresh_inputs()
        m = measure(self.fn, args=args, kwargs=kwargs, max_time=float(cmd["seconds"]),
                    warmup=min(0.05, float(cmd["seconds"]) / 10))
        return {"median_s": m.median, "runs": m.runs, "rel_iqr": m.rel_iqr,
                "number": m.number, "first_call_s": m.first_call_s}

    def truth(self, cmd: dict[str, Any]) -> dict[str, Any]:
        from tfperf.bench.equivalence import snapshot
        from tfperf.tune import arrays
        from tfperf.tune.search import to_float64

        args, kwargs = to_float64((self.target.args, self.target.kwargs))
        value = snapshot(self.fn(*args, **kwargs))
        path = Path(cmd["out"])
        return {"outputs": {"skeleton": arrays.save(value, path, "outputs"), "npz": str(path)}}


def main() -> int:
    # The replies own the real stdout; the user's prints (fd 1) go to stderr from now on.
    replies = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)
    candidate = _Candidate()
    for line in sys.stdin:
        cmd = json.loads(line)
        op = cmd.get("op")
        if op == "quit":
            break
        try:
            reply = getattr(candidate, op)(cmd)
        except Exception as exc:  # the user's code: any error is the candidate's verdict
            traceback.print_exc()
            reply = {"exception": describe_error(exc)}
        replies.write(json.dumps(reply) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
