"""Speed of `tfperf lint` on the installed keras package, measured in one run.

Three things over the same files with the same number of worker processes, interleaved
round by round (the machine may be shared: compare ratios, quote medians):
  baseline  bare `ast.parse` + `ast.walk` of every file, in a process pool like lint's;
  cold      `tfperf lint` with an empty cache (all rules, cache written);
  warm      `tfperf lint` again with that cache (nothing changed).
Goals (issue 3): cold ≤ 1.3 × baseline, warm ≤ 0.1 × cold.

    .venv/bin/python benchmarks/bench_lint_speed.py [--rounds 3] [--jobs N] [--select CODES] [PATH]
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from tfperf.lint.discovery import discover
from tfperf.lint.session import CHUNK, LintRequest, run


def _parse_walk(paths: list[str]) -> int:
    nodes = 0
    for p in paths:
        try:
            tree = ast.parse(Path(p).read_bytes(), filename=p)
        except (SyntaxError, ValueError):
            continue
        for _ in ast.walk(tree):
            nodes += 1
    return nodes


def baseline(files: list[str], jobs: int) -> float:
    chunks = [files[i:i + CHUNK] for i in range(0, len(files), CHUNK)]
    t = time.perf_counter()
    if jobs <= 1:
        for c in chunks:
            _parse_walk(c)
    else:
        ctx = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
            list(pool.map(_parse_walk, chunks))
    return time.perf_counter() - t


def lint(path: str, jobs: int, cache_dir: Path,
         select: list[str] | None) -> tuple[float, int, int]:
    t = time.perf_counter()
    out = run(LintRequest(paths=[path], cache=True, jobs=jobs, cache_dir=cache_dir,
                          select=select))
    return time.perf_counter() - t, out.analysed, len(out.findings)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", help="a directory (default: the installed keras)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=0, help="default: all usable cores")
    parser.add_argument("--select", help="rule codes/prefixes, comma-separated (default: all)")
    args = parser.parse_args()
    path = args.path
    if path is None:
        spec = importlib.util.find_spec("keras")
        if spec is None or not spec.submodule_search_locations:
            print("keras is not installed; pass a directory", file=sys.stderr)
            return 2
        path = next(iter(spec.submodule_search_locations))
    jobs = args.jobs or (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                         else os.cpu_count() or 1)
    files = [str(p) for p in discover([path])]
    lines = sum(Path(f).read_bytes().count(b"\n") for f in files)
    print(f"files: {len(files)} ({lines:,} lines) under {path}; {jobs} worker processes; "
          f"load average {os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else "")
    base, cold, warm = [], [], []
    for r in range(args.rounds):
        with tempfile.TemporaryDirectory() as tmp:
            b = baseline(files, jobs)
            select = args.select.split(",") if args.select else None
            c, analysed, n = lint(path, jobs, Path(tmp), select)
            w, again, _ = lint(path, jobs, Path(tmp), select)
        assert analysed == len(files) and again == 0, (analysed, again)
        base.append(b)
        cold.append(c)
        warm.append(w)
        print(f"round {r + 1}: parse+walk {b:6.2f} s  cold lint {c:6.2f} s ({n} findings)  "
              f"warm lint {w:5.2f} s  cold/base {c / b:.2f}  warm/cold {w / c:.3f}")
    cold_ratio = statistics.median(c / b for c, b in zip(cold, base, strict=True))
    warm_ratio = statistics.median(w / c for w, c in zip(warm, cold, strict=True))
    print(f"median: parse+walk {statistics.median(base):.2f} s, cold {statistics.median(cold):.2f}"
          f" s, warm {statistics.median(warm):.2f} s")
    print(f"cold lint / (ast.parse + ast.walk) = {cold_ratio:.2f}  (goal ≤ 1.30)")
    print(f"warm lint / cold lint              = {warm_ratio:.3f} (goal ≤ 0.10)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
