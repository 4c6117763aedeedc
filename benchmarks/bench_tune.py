"""tune against the hand-written variants, per case: tune's pick vs the best hand variant
(their ratio measured in one interleaved run), lint's findings in the pick's patched file
(0: lint-clean, the goal on the §5 case study), the search time against its budget, and how
many candidates were rejected and why. These are goals of figures, not of tests: one
disturbed run on a busy machine must not fail a test.

    PYTHONPATH=src python benchmarks/bench_tune.py [--budget 60] [--size full|small]
                                                   [--case NAME ...] [--timing 3]

Cases are the files of tests/tune/cases (the §5 case study first). ``ratio`` = best hand
variant's time / tune's pick's time: ≥ 1 means tune did at least as well (goal ≥ 0.9). For a
case with ``CALLS`` (the Python-scalar retrace: one call), times are over that many calls,
the first (trace) included.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "tests" / "tune" / "cases"
ORDER = ["case_study", "per_example", "scalar_retrace", "elementwise", "matmul_chain",
         "keras_step", "data_pipeline"]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--budget", type=float, default=60.0, help="tune's budget per case (s)")
    p.add_argument("--size", choices=["full", "small"], default="full")
    p.add_argument("--case", action="append", choices=ORDER, help="cases to run (default all)")
    p.add_argument("--timing", type=float, default=3.0,
                   help="seconds of the interleaved pick-vs-hand timing run")
    p.add_argument("--timing-runs", type=int, default=3,
                   help="interleaved timing runs per case; the run with the median ratio is "
                        "shown (default 3)")
    p.add_argument("--show-tables", action="store_true", help="print each case's tune table")
    args = p.parse_args(argv)

    from tfperf.core.tensorflow_logs import quiet_tensorflow_startup

    quiet_tensorflow_startup()
    import importlib.util

    import tensorflow  # noqa: F401  (imported before the machine line, which names it)

    from tfperf.bench.machine import machine_info, machine_line
    from tfperf.core.measure import format_seconds
    from tfperf.lint.engine import lint_source
    from tfperf.tune.versus import tune_versus_hand

    print(f"machine: {machine_line(machine_info())}")
    print(f"budget per case: {args.budget:g} s; shapes: {args.size}\n")
    rows = []
    for name in args.case or ORDER:
        path = CASES / f"{name}.py"
        spec = importlib.util.spec_from_file_location(f"_size_{name}", path)
        assert spec and spec.loader
        sizes = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sizes)
        size = sizes.FULL if args.size == "full" else sizes.SMALL
        # A case whose eager baseline alone takes a good part of a minute (the article's
        # 64×500 loop) names the budget it needs at full size.
        budget = max(args.budget, getattr(sizes, "FULL_BUDGET", 0) if args.size == "full"
                     else 0)
        t0 = time.perf_counter()
        v = tune_versus_hand(path, budget=budget, size=size, timing_budget=args.timing,
                             timing_runs=args.timing_runs)
        wall = time.perf_counter() - t0
        if args.show_tables:
            print(v.result.table(), "\n")
        patched = v.result.patched_source
        lint = str(len(lint_source(patched, str(path)))) if patched else "-"
        reasons = ", ".join(f"{k} {n}" for k, n in sorted(v.rejected.items(),
                                                          key=lambda kv: -kv[1]))
        rows.append((name, v.pick or "(none)", format_seconds(v.pick_s),
                     f"{v.best_hand} {format_seconds(v.best_hand_s)}",
                     "-" if v.ratio is None else f"{v.ratio:.2f}", lint,
                     f"{v.result.search_s:.1f}/{budget:g}", f"{wall:.0f}",
                     str(sum(v.rejected.values())), reasons))
        print(f"{name}: pick {v.pick} ratio {rows[-1][4]} (search {v.result.search_s:.1f} s; "
              f"{'; '.join(v.notes)})", file=sys.stderr, flush=True)
    from tfperf.core.render import text_table

    print(text_table(["case", "tune's pick", "pick", "best hand", "ratio", "lint",
                      "search s/budget",
                      "wall s", "rejected", "why rejected"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
