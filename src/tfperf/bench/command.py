"""``tfperf bench``: time the variants a file declares, or measure the article's claims.

Only argparse and the standard library at import time: this module is imported on every
``tfperf`` start. NumPy, TensorFlow and matplotlib load when the subcommand runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "bench",
        help="time tensor-function variants (synced, warmed up, interleaved) and check "
             "they agree; --suite article measures the article's claims",
        description="Time the variants FILE.py declares with @tfperf.bench.variant "
                    "(inputs from its @tfperf.bench.inputs function): first call apart, "
                    "warm-up, interleaved rounds, median and IQR, speedup over the baseline, "
                    "and an equivalence check of every output against the baseline's. "
                    "Exit status 1 when a variant fails or computes something else.")
    p.add_argument("file", nargs="?", metavar="FILE.py", help="a bench file declaring variants")
    p.add_argument("--suite", choices=["article"],
                   help="measure the article's claims (S1–S19) on this machine")
    p.add_argument("--quick", action="store_true",
                   help="short budget, fewer rounds, slow baselines on a slice of the batch")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="JSON on stdout")
    out.add_argument("--markdown", action="store_true", help="a Markdown table on stdout")
    p.add_argument("--plot", metavar="PATH",
                   help="write a PNG bar chart (with --suite: a folder of PNGs)")
    p.add_argument("--budget", type=float, metavar="SECONDS",
                   help="seconds of interleaved timing rounds (default 10, 3 with --quick)")
    p.add_argument("--baseline", metavar="NAME", help="the variant others are compared with")
    p.add_argument("--isolate", action="store_true",
                   help="also run each variant once in its own process to report peak RSS")
    p.add_argument("--roofline", action="store_true",
                   help="report achieved GB/s and GFLOP/s against the machine's measured peaks")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.add_argument("--verbose", action="store_true",
                   help="let TensorFlow's C++ start-up notices through (hidden by default)")
    p.set_defaults(func=run)


class _ProgressBar:
    """A one-line bar on stderr, redrawn in place; only used on a terminal."""

    def __init__(self, stream: Any = sys.stderr, width: int = 28) -> None:
        self.stream, self.width, self.shown = stream, width, False

    def __call__(self, fraction: float, label: str) -> None:
        filled = int(self.width * max(0.0, min(1.0, fraction)))
        bar = "#" * filled + "-" * (self.width - filled)
        self.stream.write(f"\r[{bar}] {fraction:4.0%} {label[:40]:<40}")
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r" + " " * (self.width + 50) + "\r")
            self.stream.flush()


def run(args: argparse.Namespace) -> int:
    from tfperf.cli import UsageError
    from tfperf.core.tensorflow_logs import quiet_tensorflow_startup

    if bool(args.file) == bool(args.suite):
        raise UsageError("give either FILE.py or --suite article")
    if args.budget is not None and not args.budget > 0:
        raise UsageError("--budget must be a positive number of seconds")
    quiet_tensorflow_startup(args.verbose)
    show_bar = not args.no_progress and not args.json and sys.stderr.isatty()
    bar = _ProgressBar() if show_bar else None
    try:
        if args.suite:
            return _run_suite(args, bar)
        return _run_file(args, bar)
    finally:
        if bar:
            bar.close()


def _run_file(args: argparse.Namespace, bar: Any) -> int:
    from tfperf.bench.comparison import Variant, compare
    from tfperf.bench.loader import BenchFileError, load_bench_file
    from tfperf.bench.plot import PlotError
    from tfperf.cli import UsageError
    from tfperf.core.render import use_color

    try:
        bench = load_bench_file(args.file)
        call_args, call_kwargs = bench.make_inputs(quick=args.quick)
    except BenchFileError as exc:
        raise UsageError(str(exc)) from None
    names = [v.name for v in bench.variants]
    if args.baseline and args.baseline not in names:
        raise UsageError(f"--baseline {args.baseline!r} is not one of {', '.join(names)}")
    variants = []
    for spec in bench.variants:
        v = Variant.from_spec(spec)
        v.source = {"file": str(Path(args.file).resolve()), "variant": spec.name,
                    "quick": args.quick}
        variants.append(v)
    budget = args.budget if args.budget is not None else (3.0 if args.quick else 10.0)
    result = compare(variants, call_args, call_kwargs, baseline=args.baseline, budget=budget,
                     quick=args.quick, isolate=args.isolate, roofline=args.roofline,
                     progress=bar)
    if bar:
        bar.close()
    if args.json:
        print(result.to_json())
    elif args.markdown:
        print(result.to_markdown())
    else:
        print(result.table(color=use_color()))
    if args.plot:
        try:
            path = result.plot(args.plot)
        except PlotError as exc:
            print(f"tfperf bench: error: {exc}", file=sys.stderr)
            return 2
        print(f"plot written to {path}", file=sys.stderr)
    return result.exit_status


def _run_suite(args: argparse.Namespace, bar: Any) -> int:
    from tfperf.bench.plot import PlotError
    from tfperf.bench.suite import run_suite
    from tfperf.core.render import use_color

    suite = run_suite(quick=args.quick, progress=bar)
    if bar:
        bar.close()
    if args.json:
        print(suite.to_json())
    elif args.markdown:
        print(suite.to_markdown())
    else:
        print(suite.table(color=use_color()))
    if args.plot:
        try:
            paths = suite.plot(Path(args.plot))
        except PlotError as exc:
            print(f"tfperf bench: error: {exc}", file=sys.stderr)
            return 2
        print(f"{len(paths)} plots written to {args.plot}", file=sys.stderr)
    return suite.exit_status
