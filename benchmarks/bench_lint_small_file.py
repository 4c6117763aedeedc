"""`tfperf lint` on one small file as a fresh process, trees alternated run by run.

A pre-commit hook's case: interpreter start, imports and the lint of a 5-line file. Each
tree (`--src DIR`, a checkout's `src`) is run in turn, round by round, so load from other
work falls on all alike; printed per tree: median wall seconds, median CPU seconds of the
child (user + system, which other load moves far less), and the modules it imported.
Bytecode caches are on (as an installed package has them; this machine's environment sets
PYTHONDONTWRITEBYTECODE, which makes every start compile ~150 modules: ~3x slower), kept in
a scratch `PYTHONPYCACHEPREFIX` so no tree is written to. Goal (issue 25): ≤ 0.1 s wall.

    python benchmarks/bench_lint_small_file.py --src /work/wt/base43/src --src src [--rounds 15]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SMALL_FILE = ("import tensorflow as tf\n\n\n"
              "def scale(x, w):\n"
              "    return tf.reduce_sum(x * w, axis=1)\n")
COUNT_MODULES = ("import runpy, sys\nsys.argv = ['tfperf', 'lint', '--no-cache', {path!r}]\n"
                 "try:\n    runpy.run_module('tfperf', run_name='__main__')\n"
                 "except SystemExit:\n    pass\n"
                 "print(len(sys.modules), sum(m.startswith('tfperf') for m in sys.modules),"
                 " file=sys.stderr)\n")


def env_for(src: Path, cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(src.resolve())
    env["PYTHONPYCACHEPREFIX"] = str(cache)
    return env


def one_run(env: dict[str, str], path: Path, cwd: Path) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "tfperf", "lint", "--no-cache", str(path)],
                   env=env, cwd=cwd, capture_output=True, check=False)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def bare_interpreter() -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=False)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def modules(env: dict[str, str], path: Path, cwd: Path) -> str:
    out = subprocess.run([sys.executable, "-c", COUNT_MODULES.format(path=str(path))],
                         env=env, cwd=cwd, capture_output=True, text=True, check=False)
    return out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "?"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--src", type=Path, action="append", required=True,
                   help="a tree's src folder (give several to compare)")
    p.add_argument("--rounds", type=int, default=15)
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="tfperf-small-") as tmp:
        work = Path(tmp)
        path = work / "small.py"
        path.write_text(SMALL_FILE)
        envs = [env_for(src, work / "pyc") for src in args.src]
        for env in envs:
            one_run(env, path, work)  # bytecode written once, as at install
        walls: list[list[float]] = [[] for _ in envs]
        cpus: list[list[float]] = [[] for _ in envs]
        for _ in range(args.rounds):
            for i, env in enumerate(envs):
                w, c = one_run(env, path, work)
                walls[i].append(w)
                cpus[i].append(c)
        bare = [bare_interpreter() for _ in range(args.rounds)]
        print(f"load average {os.getloadavg()[0]:.1f}; bare interpreter: wall median "
              f"{statistics.median(b for b, _ in bare):.3f} s, CPU median "
              f"{statistics.median(c for _, c in bare):.3f} s")
        for src, env, w, c in zip(args.src, envs, walls, cpus, strict=True):
            print(f"{src}: wall median {statistics.median(w):.3f} s "
                  f"(min {min(w):.3f}), CPU median {statistics.median(c):.3f} s "
                  f"(min {min(c):.3f}); modules (all, tfperf) {modules(env, path, work)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
