"""How fast, and in how much memory, `tfperf profile --read` summarises a large capture
(goal: ≥ 10 million events within 60 s and 3 GB on a 2-core machine).

The capture is written here, in the shape TensorFlow writes a CPU training run: a host plane
with a `python` line (a step marker and a tf.function call per step), and `tf_Compute` lines
with each step's graph ops (`node:OpType` events) interleaved with the thread-pool
bookkeeping events TF records (which carry stats nobody asks for). Then `tfperf profile
--read FILE --json` runs in a child process; the figures are its wall time and peak RSS
(the child's `ru_maxrss`), and the file's size for scale.

Run: .venv/bin/python benchmarks/bench_profile_read.py [--events 10000000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

OPS = ["MatMul", "BiasAdd", "Relu", "MatMul", "Softmax", "Sum", "Mul", "AddV2"]


def varint(v: int) -> bytes:
    if v < 0:
        v += 1 << 64
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(number: int, payload: bytes) -> bytes:
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def vfield(number: int, value: int) -> bytes:
    return varint(number << 3) + varint(value)


def event(mid: int, offset_ps: int, dur_ps: int, stats: bytes = b"") -> bytes:
    return field(4, vfield(1, mid) + vfield(2, offset_ps) + vfield(3, dur_ps) + stats)


def stat(mid: int, value: int) -> bytes:
    return field(4, vfield(1, mid) + vfield(4, value))


def write_capture(path: Path, n_events: int, compute_lines: int = 4) -> dict[str, int]:
    """A capture of about ``n_events`` events; returns what went in."""
    # event metadata ids
    names = {1: "train", 2: "step", 3: "ThreadpoolListener::Record", 4: "ExecutorState::Process"}
    for i, op in enumerate(OPS):
        names[10 + i] = f"layer_{i}/{op}:{op}"
    stat_names = {1: "step_num", 2: "tf_function_call", 3: "_p", 4: "_pt", 5: "traced-nonXla"}
    per_step = 2 + compute_lines * len(OPS) * 3  # each op: a Process wrapper, the op, a Record
    steps = max(1, n_events // per_step)
    step_ps = 2_000_000_000  # 2 ms a step
    tmp = path.with_suffix(".lines")
    line_sizes = []
    with open(tmp, "wb") as out:
        # the python line: step markers and tf.function calls
        body = bytearray()
        for s in range(steps):
            t = s * step_ps
            body += event(1, t, step_ps - 1000, stat(1, s))
            body += event(2, t + 500, step_ps - 3000, field(4, vfield(1, 2) + vfield(7, 5)))
        line = vfield(1, 1) + field(2, b"python") + vfield(3, 1000) + bytes(body)
        out.write(field(3, line))
        line_sizes.append(len(line))
        for c in range(compute_lines):
            chunks = [vfield(1, 100 + c), field(2, f"tf_Compute/{c}".encode()), vfield(3, 1000)]
            head = b"".join(chunks)
            body = bytearray()
            for s in range(steps):
                t = s * step_ps + 10_000 + c * 7_000
                for k in range(len(OPS)):
                    start = t + k * 200_000
                    body += event(4, start, 150_000, stat(3, s * 100 + k) + stat(4, 2))
                    body += event(10 + k, start + 1_000, 140_000)
                    body += event(3, start + 145_000, 0, stat(3, s) + stat(4, 15))
            out.write(field(3, head + bytes(body)))
            line_sizes.append(len(head) + len(body))
    meta = b"".join(field(4, vfield(1, k) + field(2, vfield(1, k) + field(2, n.encode())))
                    for k, n in names.items())
    meta += b"".join(field(5, vfield(1, k) + field(2, vfield(1, k) + field(2, n.encode())))
                     for k, n in stat_names.items())
    head = vfield(1, 0) + field(2, b"/host:CPU")
    lines_size = tmp.stat().st_size
    plane_len = len(head) + lines_size + len(meta)
    with open(path, "wb") as out, open(tmp, "rb") as lines:
        out.write(varint(1 << 3 | 2) + varint(plane_len) + head)
        shutil.copyfileobj(lines, out, 16 << 20)
        out.write(meta)
        out.write(field(4, b"bench"))
    tmp.unlink()
    return {"steps": steps, "events": steps * per_step, "bytes": path.stat().st_size}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=10_000_000)
    ap.add_argument("--keep", metavar="DIR", help="write the capture here and keep it")
    args = ap.parse_args()
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="tfperf-read-"))
    path = folder / "plugins" / "profile" / "run" / "bench.xplane.pb"
    path.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    made = write_capture(path, args.events)
    print(f"capture: {made['events']:,} events, {made['steps']:,} steps, "
          f"{made['bytes'] / 2**20:,.0f} MiB, written in {time.perf_counter() - t0:.0f} s")
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "tfperf.cli", "profile", "--read", str(path),
                           "--json"], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    rss_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    if done.returncode not in (0, 1):
        sys.exit(f"tfperf profile --read failed ({done.returncode}): {done.stderr[-2000:]}")
    doc = json.loads(done.stdout)
    (cap,) = doc["captures"]
    assert cap["events"] == made["events"], (cap["events"], made["events"])
    print(f"summarised: {cap['events']:,} events ({cap['op_events']:,} op events, "
          f"{cap['steps']:,} steps) in {wall:.1f} s wall, peak RSS {rss_mib:,.0f} MiB "
          f"({cap['events'] / wall / 1e6:.2f} M events/s)")
    print(f"goal: ≤ 60 s and ≤ 3072 MiB: {'met' if wall <= 60 and rss_mib <= 3072 else 'NOT met'}")
    if not args.keep:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
