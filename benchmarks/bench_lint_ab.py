"""Cold `tfperf lint` of the same files by two tfperf source trees, interleaved: is a change
slower? (A refactor must not be: issue 9.)

Each round runs `python -m tfperf lint --no-cache --format json PATH` once with this tree's
sources and once with the baseline tree's (``--baseline-src``, e.g. a `git worktree` of the
commit before the change), in alternating order, as fresh processes with the same number of
workers; it prints each round's time ratio (this / baseline), the median ratio, and whether
the two trees printed the same findings. The machine may be shared: quote the median.

    git worktree add /tmp/tfperf-base <rev>
    .venv/bin/python benchmarks/bench_lint_ab.py --baseline-src /tmp/tfperf-base/src \
        [--rounds 5] [PATH]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE_SRC = Path(__file__).resolve().parents[1] / "src"


def lint_once(src: Path, path: str, jobs: int) -> tuple[float, bytes]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    argv = [sys.executable, "-m", "tfperf", "lint", "--no-cache", "--format", "json", path]
    if jobs:
        argv += ["--jobs", str(jobs)]
    t = time.perf_counter()
    out = subprocess.run(argv, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - t
    if out.returncode not in (0, 1):
        sys.exit(f"lint with {src} failed ({out.returncode}): {out.stderr.decode()[-500:]}")
    return elapsed, out.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", help="a directory (default: the installed keras)")
    parser.add_argument("--baseline-src", required=True, type=Path,
                        help="the `src` folder of the tfperf tree to compare against")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=0, help="default: lint's own default")
    args = parser.parse_args()
    if not (args.baseline_src / "tfperf" / "__init__.py").is_file():
        sys.exit(f"{args.baseline_src} holds no tfperf package")
    path = args.path
    if path is None:
        spec = importlib.util.find_spec("keras")
        if spec is None or not spec.submodule_search_locations:
            sys.exit("keras is not installed: give a PATH")
        path = next(iter(spec.submodule_search_locations))
    ratios, same = [], True
    print(f"cold lint of {path}: this tree ({HERE_SRC}) vs baseline ({args.baseline_src}); "
          f"load average {os.getloadavg()[0]:.1f}")
    for r in range(args.rounds):
        order = [(HERE_SRC, "this"), (args.baseline_src, "base")]
        if r % 2:
            order.reverse()
        times, outs = {}, {}
        for src, label in order:
            times[label], outs[label] = lint_once(src, path, args.jobs)
        same = same and outs["this"] == outs["base"]
        ratios.append(times["this"] / times["base"])
        print(f"round {r + 1}: this {times['this']:6.2f} s  baseline {times['base']:6.2f} s  "
              f"ratio {ratios[-1]:.3f}")
    print(f"median ratio this/baseline = {statistics.median(ratios):.3f} "
          f"(min {min(ratios):.3f}, max {max(ratios):.3f}); findings "
          + ("byte-identical" if same else "DIFFER"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
