"""``tfperf bench``: time the variants a file declares, or measure the article's claims.

Only argparse and the standard library at import time: this module is imported on every
``tfperf`` start. NumPy, TensorFlow and matplotlib load when the subcommand runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from tfperf.bench import gate_command


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "bench",
        help="time tensor-function variants (synced, warmed up, interleaved) and check "
             "they agree; --suite article measures the article's claims",
        description="Time the variants FILE.py declares with @tfperf.bench.variant "
                    "(inputs from its @tfperf.bench.inputs function): first call apart, "
                    "warm-up, interleaved rounds, median and IQR, speedup over the baseline, "
                    "and an equivalence check of every output against the baseline's "
                    "(per element: |a-b| <= atol + rtol*|b|, tolerances by dtype). "
                    "FILE.py is imported and executed (its top level runs, as under "
                    "`import`); with --isolate, once more in each child process. "
                    "Exit status 1 when a variant fails, computes something else, or its "
                    "output cannot be compared (unless --allow-unchecked); with --suite, when "
                    "a claim is 'not measured'.")
    p.add_argument("file", nargs="?", metavar="FILE.py",
                   help="a bench file declaring variants (imported and executed)")
    p.add_argument("--suite", choices=["article"],
                   help="measure the article's claims on this machine, each with a verdict: "
                        "holds, direction holds, does not hold, not applicable here, "
                        "not measured")
    p.add_argument("--quick", action="store_true",
                   help="short budget, fewer rounds, slow baselines on a slice of the batch")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="JSON on stdout")
    out.add_argument("--markdown", action="store_true", help="a Markdown table on stdout")
    p.add_argument("--plot", metavar="PATH",
                   help="write a PNG bar chart (with --suite: a folder of PNGs)")
    p.add_argument("--html", metavar="OUT.html",
                   help="also write the report as one self-contained HTML file (charts, "
                        "sortable tables; nothing fetched): open it in any browser")
    p.add_argument("--budget", type=float, metavar="SECONDS",
                   help="seconds of interleaved timing rounds (default 10, 3 with --quick)")
    p.add_argument("--baseline", metavar="NAME", help="the variant others are compared with")
    p.add_argument("--reference", choices=["float64"],
                   help="judge every variant's values against the baseline run on float64 "
                        "inputs (the truth), not against the baseline's own rounding")
    p.add_argument("--grad", action="store_true",
                   help="also check gradients (tf.GradientTape) with respect to the trainable "
                        "inputs: tf.Variable arguments, else every floating tensor argument")
    p.add_argument("--allow-unchecked", action="store_true",
                   help="exit 0 even when some outputs cannot be compared (equivalent: null)")
    p.add_argument("--isolate", action="store_true",
                   help="also run each variant once in its own process to report peak RSS")
    p.add_argument("--roofline", action="store_true",
                   help="report achieved GB/s and GFLOP/s against the machine's measured peaks")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.add_argument("--verbose", action="store_true",
                   help="let TensorFlow's C++ start-up notices through (hidden by default)")
    gate_command.add_arguments(p)
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
    from tfperf.core.tensorflow_needed import tensorflow_missing

    gate_command.check_arguments(args)
    if args.html and (args.history or gate_command.wants_gate(args)):
        raise UsageError("--html writes a comparison's or the suite's report; the regression "
                         "gate's (--save, --store, --compare-to, --history...) is text, JSON "
                         "or Markdown")
    if args.history:
        return gate_command.run_history(args)
    if bool(args.file) == bool(args.suite):
        raise UsageError("give either FILE.py or --suite article")
    if args.suite and (args.reference or args.grad or args.baseline or args.isolate):
        raise UsageError("--reference, --grad, --baseline and --isolate apply to FILE.py, "
                         "not to --suite")
    if args.budget is not None and not args.budget > 0:
        raise UsageError("--budget must be a positive number of seconds")
    baseline = _check_inputs(args)  # before TensorFlow is imported: bad input fails fast
    missing = tensorflow_missing()
    if missing:
        raise UsageError(missing)
    quiet_tensorflow_startup(args.verbose)
    show_bar = not args.no_progress and not args.json and not args.format and \
        sys.stderr.isatty()
    bar = _ProgressBar() if show_bar else None
    try:
        if args.suite:
            return _run_suite(args, bar)
        return _run_file(args, bar, baseline)
    finally:
        if bar:
            bar.close()


def _check_inputs(args: argparse.Namespace) -> dict[str, Any] | None:
    """The files named on the command line, checked without running them (nothing imports
    TensorFlow yet): FILE.py and REF.py read and parse, the outputs can be written; the
    --compare-to run, read (a bad path fails in a second, not after the timing)."""
    from tfperf.cli import UsageError
    from tfperf.core.matplotlib_needed import matplotlib_missing
    from tfperf.core.usercode import UserCodeError, check_output_path, check_user_file

    if args.plot and (missing := matplotlib_missing()):
        raise UsageError(missing)
    try:
        for source in (args.file, args.interleave_with):
            if source:
                check_user_file(source)
        for option, out in (("--save", args.save), ("--store", args.store),
                            ("--plot", args.plot), ("--html", args.html)):
            if out:  # the suite draws one plot a claim: its --plot is a folder
                check_output_path(out, option, folder=bool(args.suite) if option == "--plot"
                                  else None)
    except UserCodeError as exc:
        raise UsageError(str(exc)) from None
    return gate_command.load_baseline(args)


def _run_file(args: argparse.Namespace, bar: Any, baseline: dict[str, Any] | None) -> int:
    from tfperf.bench.comparison import Variant, compare
    from tfperf.bench.loader import BenchFileError, load_bench_file
    from tfperf.cli import UsageError

    budget = args.budget if args.budget is not None else (3.0 if args.quick else 10.0)
    if args.interleave_with:
        return gate_command.run_interleaved(args, bar, budget)
    with gate_command.user_prints_aside(args):  # the file's top level, inputs and variants
        try:
            bench = load_bench_file(args.file)
            call_args, call_kwargs = bench.make_inputs(quick=args.quick)
        except BenchFileError as exc:
            raise UsageError(str(exc)) from None
        gate = gate_command.wants_gate(args)
        names = [v.name for v in bench.variants]
        if args.baseline and args.baseline not in names:
            raise UsageError(f"--baseline {args.baseline!r} is not one of {', '.join(names)}")
        variants = []
        for spec in bench.variants:
            v = Variant.from_spec(spec)
            v.source = {"file": str(Path(args.file).resolve()), "variant": spec.name,
                        "quick": args.quick}
            variants.append(v)
        result = compare(variants, call_args, call_kwargs, baseline=args.baseline,
                         budget=budget, quick=args.quick, isolate=args.isolate,
                         roofline=args.roofline, reference=args.reference, grad=args.grad,
                         allow_unchecked=args.allow_unchecked, progress=bar, counters=gate,
                         **(gate_command.gate_settings(args) if gate else {}))
    if gate:
        if bar:
            bar.close()
        return gate_command.finish(result, args, baseline)
    return _emit(result, args, bar)


def _run_suite(args: argparse.Namespace, bar: Any) -> int:
    from tfperf.bench.suite.runner import run_suite

    suite = run_suite(quick=args.quick, progress=bar, roofline=args.roofline)
    return _emit(suite, args, bar)


def _emit(report: Any, args: argparse.Namespace, bar: Any) -> int:
    """Print a comparison's or the suite's report as asked, write its plot(s), exit status."""
    from tfperf.bench.plot import PlotError
    from tfperf.core.render import use_color

    if bar:
        bar.close()
    if args.json:
        print(report.to_json())
    elif args.markdown:
        print(report.to_markdown())
    else:
        print(report.table(color=use_color()))
    if args.html:
        from tfperf.core.html import save

        if not save(report.to_html(), args.html, "bench"):
            return 2
    if args.plot:
        try:
            written = report.plot(Path(args.plot))
        except PlotError as exc:
            print(f"tfperf bench: error: {exc}", file=sys.stderr)
            return 2
        if isinstance(written, list):
            print(f"{len(written)} plots written to {args.plot}", file=sys.stderr)
        else:
            print(f"plot written to {written}", file=sys.stderr)
    return int(report.exit_status)

