"""Speed of `tfperf lint` on a tree (default: the installed keras package), in one run.

Three things over the same files with the same number of worker processes, interleaved
round by round (the machine may be shared: compare ratios, quote medians):
  baseline  bare `ast.parse` + `ast.walk` of every file, in a process pool like lint's (a
            notebook's floor is parsing its code cells, not its JSON);
  cold      `tfperf lint` with an empty cache (the default rules, cache written);
  warm      `tfperf lint` again with that cache (nothing changed);
and, each round, `tfperf lint` on one small file as a fresh process (a pre-commit hook's
case: interpreter start and imports included; bytecode caches as an installed package has
them; no project around it, so no project context), and one file of a mid-size project
named alone (`--context-file`, default this checkout's `src/tfperf/lint/session.py`, which
many modules import): cold and warm with its project context, cold without it.
Goals: cold ≤ 1.3 × baseline, warm ≤ 0.1 × cold, one small file ≤ 0.1 s wall.
The cold/baseline ratio is also printed in CPU seconds (this process and its reaped worker
processes): on a busy machine wall time swings with other work, CPU time much less.

    .venv/bin/python benchmarks/bench_lint_speed.py [--rounds 5] [--jobs N] [--select CODES]
        [--context-file FILE] [PATH]
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import multiprocessing
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from tfperf.lint.discovery import discover
from tfperf.lint.session import CHUNK, LintRequest, run


def _sources(path: str) -> list[str | bytes]:
    """What parsing a file means: its bytes, or a notebook's code cells."""
    data = Path(path).read_bytes()
    if not path.endswith(".ipynb"):
        return [data]
    try:
        cells = json.loads(data).get("cells", [])
    except (ValueError, AttributeError):
        return []
    out: list[str | bytes] = []
    for c in cells:
        if isinstance(c, dict) and c.get("cell_type") == "code":
            src = c.get("source", "")
            out.append("".join(src) if isinstance(src, list) else str(src))
    return out


def _parse_walk(paths: list[str]) -> int:
    nodes = 0
    for p in paths:
        for source in _sources(p):
            try:
                tree = ast.parse(source, filename=p)
            except (SyntaxError, ValueError):
                continue
            for _ in ast.walk(tree):
                nodes += 1
    return nodes


def cpu_seconds() -> float:
    """CPU time of this process and of its finished child processes (the worker pools)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


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


SMALL_FILE = ("import tensorflow as tf\n\n\n"
              "def scale(x, w):\n"
              "    return tf.reduce_sum(x * w, axis=1)\n")


def one_small_file(tmp: Path) -> float:
    """Wall time of `tfperf lint` on one small file, as a fresh process."""
    path = tmp / "small.py"
    path.write_text(SMALL_FILE)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "tfperf", "lint", "--no-cache", str(path)],
                   env=env, capture_output=True, check=False)
    return time.perf_counter() - t


def context_case(path: str, cache_dir: Path) -> tuple[float, float, float, float, float, float,
                                                      int]:
    """One file of a project named alone, in this process → (cold wall, cold CPU, warm wall
    with its project context; cold wall, cold CPU without it; warm CPU; context modules)."""
    c0, t0 = cpu_seconds(), time.perf_counter()
    cold = run(LintRequest(paths=[path], cache=True, cache_dir=cache_dir))
    c1, t1 = cpu_seconds(), time.perf_counter()
    run(LintRequest(paths=[path], cache=True, cache_dir=cache_dir))
    c2, t2 = cpu_seconds(), time.perf_counter()
    run(LintRequest(paths=[path], cache=False, project_context=False))
    c3, t3 = cpu_seconds(), time.perf_counter()
    n = len(cold.context.files) if cold.context is not None else 0
    return t1 - t0, c1 - c0, t2 - t1, t3 - t2, c3 - c2, c2 - c1, n


def bare_interpreter() -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=False)
    return time.perf_counter() - t


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", help="a directory (default: the installed keras)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=0, help="default: all usable cores")
    parser.add_argument("--select", help="rule codes/prefixes, comma-separated (default: all)")
    parser.add_argument("--context-file", default=str(Path(__file__).resolve().parents[1]
                                                      / "src/tfperf/lint/session.py"),
                        help="a file of a mid-size project, linted alone with its context")
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
    base, cold, warm, small, cpu_ratio = [], [], [], [], []
    ctx_rows: list[tuple[float, float, float, float, float, float, int]] = []
    with tempfile.TemporaryDirectory() as tmp:
        one_small_file(Path(tmp))  # once first: bytecode caches written, as when installed
    for r in range(args.rounds):
        with tempfile.TemporaryDirectory() as tmp:
            c0 = cpu_seconds()
            b = baseline(files, jobs)
            c1 = cpu_seconds()
            select = args.select.split(",") if args.select else None
            c, analysed, n = lint(path, jobs, Path(tmp), select)
            cpu_ratio.append((cpu_seconds() - c1) / (c1 - c0))
            w, again, _ = lint(path, jobs, Path(tmp), select)
            s1 = one_small_file(Path(tmp))
            ctx_rows.append(context_case(args.context_file, Path(tmp) / "context"))
        assert analysed == len(files) and again == 0, (analysed, again)
        base.append(b)
        cold.append(c)
        warm.append(w)
        small.append(s1)
        print(f"round {r + 1}: parse+walk {b:6.2f} s  cold lint {c:6.2f} s ({n} findings)  "
              f"warm lint {w:5.2f} s  cold/base {c / b:.2f} (CPU {cpu_ratio[-1]:.2f})  "
              f"warm/cold {w / c:.3f}  one small file {s1:.3f} s")
        cc, ccpu, cw, oc, ocpu, wcpu, nctx = ctx_rows[-1]
        print(f"         one project file alone, {nctx} context modules: cold {cc:.3f} s "
              f"(CPU {ccpu:.3f}), warm {cw:.3f} s (CPU {wcpu:.3f}); context off, cold "
              f"{oc:.3f} s (CPU {ocpu:.3f})")
    cold_ratio = statistics.median(c / b for c, b in zip(cold, base, strict=True))
    warm_ratio = statistics.median(w / c for w, c in zip(warm, cold, strict=True))
    print(f"median: parse+walk {statistics.median(base):.2f} s, cold {statistics.median(cold):.2f}"
          f" s, warm {statistics.median(warm):.2f} s")
    print(f"cold lint / (ast.parse + ast.walk) = {cold_ratio:.2f}  (goal ≤ 1.30; in CPU "
          f"seconds {statistics.median(cpu_ratio):.2f})")
    print(f"warm lint / cold lint              = {warm_ratio:.3f} (goal ≤ 0.10)")
    print(f"one small file, process included   = {statistics.median(small):.3f} s "
          f"(goal ≤ 0.10 s; bare interpreter {bare_interpreter():.3f} s)")
    med = [statistics.median(r[i] for r in ctx_rows) for i in range(6)]
    print(f"one project file alone ({args.context_file}, {ctx_rows[-1][6]} context modules): "
          f"cold {med[0]:.3f} s (CPU {med[1]:.3f}), warm {med[2]:.3f} s (CPU {med[5]:.3f}; "
          f"warm/cold in CPU {statistics.median(r[5] / r[1] for r in ctx_rows):.3f}); "
          f"context off, cold "
          f"{med[3]:.3f} s (CPU {med[4]:.3f}); on/off CPU "
          f"{statistics.median(r[1] / r[4] for r in ctx_rows):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
