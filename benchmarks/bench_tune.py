"""tune against the hand-written variants, per case: tune's pick vs the best hand variant
(their ratio measured in one interleaved run), lint's findings in the pick's patched file
(0: lint-clean, the goal on the §5 case study), the search time against its budget, and how
many candidates were rejected and why. These are goals of figures, not of tests: one
disturbed run on a busy machine must not fail a test.

    PYTHONPATH=src python benchmarks/bench_tune.py [--budget 60] [--size full|small]
                                                   [--case NAME ...] [--timing 3]
                                                   [--spellings [COMP[/SPELLING] ...]]
                                                   [--no-cases]

``--spellings`` adds the generated spellings of tests/tune/spellings.py (six computations,
each spelled the ways users write it; all of them, or those named); ``--no-cases`` leaves
out the hand-made cases. The summary under the table: the median ratio, how many cases reach
0.9, the misses, whether every pick was equivalent, and the worst search time ÷ budget.

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
    p.add_argument("--spellings", nargs="*", metavar="COMP[/SPELLING]",
                   help="also run the generated spellings (all, or those named)")
    p.add_argument("--no-cases", action="store_true", help="leave out tests/tune/cases")
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
    import tempfile

    files = [] if args.no_cases else [(name, CASES / f"{name}.py") for name in args.case or ORDER]
    if args.spellings is not None:
        sys.path.insert(0, str(ROOT / "tests" / "tune"))
        from spellings import write_cases

        folder = Path(tempfile.mkdtemp(prefix="tfperf_spellings_"))
        files += [(c.name, c.path) for c in write_cases(folder, args.spellings or None)]
    rows = []
    ratios: list[float | None] = []
    equivalent, overrun = True, 0.0
    for name, path in files:
        spec = importlib.util.spec_from_file_location(f"_size_{path.stem}", path)
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
        ratios.append(v.ratio)
        best = v.result.best
        if best is not None and best.equivalent is not True:
            equivalent = False
        overrun = max(overrun, v.result.search_s / budget)
        print(f"{name}: pick {v.pick} ratio {rows[-1][4]} (search {v.result.search_s:.1f} s; "
              f"{'; '.join(v.notes)})", file=sys.stderr, flush=True)
    from tfperf.core.render import text_table

    print(text_table(["case", "tune's pick", "pick", "best hand", "ratio", "lint",
                      "search s/budget",
                      "wall s", "rejected", "why rejected"], rows))
    print(summary(rows, ratios, equivalent, overrun))
    return 0


def summary(rows: list[tuple[str, ...]], ratios: list[float | None], equivalent: bool,
            overrun: float) -> str:
    """The figures of the run: median ratio (a case without a pick counts as 0), cases at
    ≥ 0.9, the misses by name, equivalence of every pick, the worst search ÷ budget."""
    import statistics

    if not ratios:
        return "no cases"
    values = [r or 0.0 for r in ratios]
    misses = [f"{row[0]} {row[4]}" for row, r in zip(rows, values, strict=True) if r < 0.9]
    return (f"\n{len(values)} cases: median ratio {statistics.median(values):.2f}; "
            f"{len(values) - len(misses)} at >= 0.9; every pick equivalent: {equivalent}; "
            f"worst search/budget {overrun:.2f}\nmisses: {', '.join(misses) or 'none'}")


if __name__ == "__main__":
    sys.exit(main())
