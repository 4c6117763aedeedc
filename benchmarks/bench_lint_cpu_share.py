"""Where a cold `tfperf lint` spends its CPU beyond parsing, file by file, in one process.

`bench_lint_speed.py` times whole runs against bare `ast.parse` + `ast.walk` with worker
processes; on a shared machine a burst of other work during one of the two phases moves a
round's ratio by ±30 %. Here each file is analysed three ways back to back, in rotating
order, and only this thread's CPU time is counted, so other load hardly moves the ratios:
  floor     `ast.parse` + `ast.walk` (a notebook: its code cells), as the speed bench's floor;
  no rules  `tfperf lint` with no rule selected: reading, notebook cells, parsing, the index;
  lint      `tfperf lint` with the default rules (or --select).
"lint / floor" is the cold ratio without process start, discovery and cache writes (which
`bench_lint_speed.py` includes); "lint - no rules" is what the rules and the semantic model
cost. As in a real run, each module's summary (the project model) is kept and the rules'
cross-module checks run once, at the end, over every summary: their CPU is added to lint's.

    .venv/bin/python benchmarks/bench_lint_cpu_share.py [--select CODES] PATH [PATH...]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from bench_lint_speed import _parse_walk

from tfperf.analysis.summary import ModuleSummary
from tfperf.lint.discovery import discover
from tfperf.lint.engine import Dispatcher, project_findings
from tfperf.lint.result import RunOptions
from tfperf.lint.session import _few_collections, _lint_files, choose_rules
from tfperf.lint.target import FileTargets, resolve


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--select", help="rule codes/prefixes, comma-separated (default rules)")
    args = parser.parse_args()
    files = [str(p) for p in discover(args.paths)]
    rules = choose_rules(args.select.split(",") if args.select else None, [], [])
    target = resolve(None, Path(args.paths[0]))
    targets, options = FileTargets(target), RunOptions()
    lint = Dispatcher(rules, target.version, defer_project=True)
    bare = Dispatcher([], target.version, defer_project=True)
    summaries: list = []

    def run_floor(path: str) -> None:
        _parse_walk([path])

    def run_bare(path: str) -> None:
        with _few_collections():
            _lint_files([path], bare, options, targets)

    def run_lint(path: str) -> None:
        with _few_collections():
            summaries.extend((r.path, r.summary)
                             for r in _lint_files([path], lint, options, targets)
                             if r.summary is not None)

    ways = [("floor", run_floor), ("no rules", run_bare), ("lint", run_lint)]
    cpu = dict.fromkeys([name for name, _ in ways], 0.0)
    for i, path in enumerate(files):
        k = i % len(ways)
        for name, fn in ways[k:] + ways[:k]:  # rotate: no way always runs first or last
            t = time.thread_time()
            fn(path)
            cpu[name] += time.thread_time() - t
    t = time.thread_time()
    project_findings(lint.project_rules, [ModuleSummary.loads(p, d) for p, d in summaries])
    project_s = time.thread_time() - t
    cpu["lint"] += project_s
    print(f"{len(files)} files, {len(rules)} rules; CPU seconds: "
          + ", ".join(f"{name} {s:.2f}" for name, s in cpu.items()))
    print(f"lint / floor = {cpu['lint'] / cpu['floor']:.3f}; no rules / floor = "
          f"{cpu['no rules'] / cpu['floor']:.3f}; rules and semantic model = "
          f"{100 * (cpu['lint'] - cpu['no rules']) / cpu['lint']:.0f} % of lint; the project's "
          f"checks {project_s:.3f} s over {len(summaries)} summaries")
    return 0


if __name__ == "__main__":
    sys.exit(main())
