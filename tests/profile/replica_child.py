"""Run in a fresh process by test_profile_replicas.py: logical CPU devices must be set up
before TensorFlow's runtime starts, which the test process has long done.

Two steps of one MirroredStrategy over two logical CPUs, one with replica 1 slow, one with
replica 0 slow, each profiled (warm-up + 3 captured steps); a plain watch() of a step; and
watch(capture=True) around a first call and three more, replica 1 slow; and the same around
four calls of a step first run before the watch (placed from its traced graphs).
Prints one JSON document.
"""

import json
import sys

from tfperf.examples.mirrored_replicas import build
from tfperf.profile import profile, watch


def main() -> None:
    out = {}
    for slow in (1, 0):
        job = build(2, slow_replica=slow, extra=6)
        report = profile(lambda job=job: job.strategy.experimental_local_results(
            job.step(job.x)), steps=3, logdir=sys.argv[1] + f"/slow{slow}")
        out[f"slow{slow}"] = report.to_dict()
        out[f"slow{slow}_text"] = report.text()
    for on in (True, False):
        job = build(2)
        with watch(placement=on) as w:  # a fresh function: its first call is in the watch
            job.strategy.experimental_local_results(job.step(job.x))
        out[f"watch_devices_{on}"] = sorted(set(w.obs.placement.values()))
    job = build(2, slow_replica=1, extra=6)
    with watch(capture=True, logdir=sys.argv[1] + "/watch") as w:
        for _ in range(4):
            job.strategy.experimental_local_results(job.step(job.x))
    out["watch_capture"] = w.report(show=False).to_dict()
    job = build(2, slow_replica=1, extra=6)
    job.strategy.experimental_local_results(job.step(job.x))  # run before the watch
    with watch(capture=True, logdir=sys.argv[1] + "/prewarmed") as w:
        for _ in range(4):
            job.strategy.experimental_local_results(job.step(job.x))
    out["prewarmed"] = w.report(show=False).to_dict()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
