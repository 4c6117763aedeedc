"""``tfperf profile``: run a script or ``module:function`` under observation, report why it is slow.

Only argparse and the standard library are imported here; TensorFlow loads when the command
runs.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from typing import Any

from tfperf.profile.capture import DEFAULT_BUDGET_MB


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "profile",
        help="where the time goes at run time, and why: retraces, host syncs, eager ops, op time",
        description=(
            "Run a script (like `python script.py args`) or call MODULE:FUNCTION under "
            "observation: tf.function retraces with their cause, host syncs and eager ops per "
            "source line, and op time from a real TF profiler capture that TensorBoard/XProf "
            "opens. The target is executed: a script runs as `python script.py` would, and "
            "MODULE / FILE.py (and --inputs's module) are imported, so their top level runs. "
            "Exit status: 0 clean, 1 the run raised or advice warns, 2 bad input."),
        epilog="examples:\n  tfperf profile train.py -- --epochs 1\n"
               "  tfperf profile --read logs/   (a capture made anywhere; no TensorFlow)\n"
               "  tfperf profile --remote worker0:6009,worker1:6009 --duration-ms 2000\n"
               "  tfperf profile mymodel:step --inputs mymodel:make_inputs --steps 5 --json\n"
               "  tfperf profile case_study_bench.py:loop --quick   (a bench file's variant)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("target", nargs="?",
                   help="SCRIPT.py, or MODULE:FUNCTION / FILE.py:FUNCTION "
                        "(run, or imported and executed); none with --remote")
    p.add_argument("rest", nargs=argparse.REMAINDER, metavar="[options] [-- script args]",
                   help="options may also follow the target; the script's own arguments "
                        "come after --")
    _add_options(p)
    p.set_defaults(func=run)


def _add_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--inputs", metavar="MODULE:FN",
                   help="for MODULE:FUNCTION: a function returning the arguments "
                        "(a tuple: positional, a dict: keyword, else one argument)")
    p.add_argument("--quick", action="store_true",
                   help="for a bench file's variant (FILE.py:VARIANT): its quick inputs, as "
                        "`tfperf bench --quick` uses them")
    p.add_argument("--steps", type=int, metavar="N",
                   help="MODULE:FUNCTION: captured calls after one warm-up (default 3); "
                        "script: capture only the first N steps of its training loop (else "
                        "the first N top-level tf.function calls)")
    p.add_argument("--logdir", metavar="DIR",
                   help="where the capture goes (default: a new temporary directory)")
    p.add_argument("--verbose", action="store_true",
                   help="let TensorFlow's C++ start-up notices through (hidden by default)")
    p.add_argument("--capture-mb", type=int, default=DEFAULT_BUDGET_MB, metavar="MIB",
                   help="stop the profiler capture once the process has grown by MIB during "
                        f"it (default {DEFAULT_BUDGET_MB}; 0: capture the whole run, "
                        "however long)")
    p.add_argument("--no-capture", action="store_true",
                   help="observe only; no TF profiler capture")
    p.add_argument("--json", action="store_true",
                   help="print the report as JSON (the run's own stdout goes to stderr)")
    p.add_argument("--plot", metavar="OUT.png", help="bar chart of the hottest lines and ops")
    p.add_argument("--html", metavar="OUT.html",
                   help="also write the report as one self-contained HTML file (the causes, "
                        "step timeline, top ops and lines; nothing fetched); with --read too")
    p.add_argument("--try-fixes", action="store_true",
                   help="script: apply each automatic fix of the causes found (@tf.function on "
                        "the training step, lint's safe fixes) to a copy of the script, run "
                        "the first steps before and after in child processes with the same "
                        "seeds, and report the gain per step and whether the losses agree")
    p.add_argument("--fix-steps", type=int, default=None, metavar="N",
                   help="with --try-fixes: steps each side runs (default 20)")
    p.add_argument("--fix-rounds", type=int, default=None, metavar="N",
                   help="with --try-fixes: rounds of before and after (default 2)")
    p.add_argument("--remote", metavar="HOST:PORT[,HOST:PORT...]",
                   help="capture the workers of a running job at once (each runs "
                        "tfperf.serve_profiler(PORT)); per worker and merged: step time, "
                        "compute vs collective vs input, the slowest worker")
    p.add_argument("--duration-ms", type=int, default=2000, metavar="N",
                   help="with --remote: how long to capture (default 2000)")
    p.add_argument("--read", metavar="PATH",
                   help="read an XProf capture made anywhere (a logdir, a run folder or one "
                        ".xplane.pb), without TensorFlow: why it is empty or odd, step-time "
                        "breakdown, top ops, verdicts")
    p.add_argument("--compare", nargs=2, metavar=("A", "B"),
                   help="two captures (before, after): step time, breakdown and ops side by side")
    from tfperf.memory.command import add_options as add_memory_options

    add_memory_options(p)


def _split_rest(args: argparse.Namespace) -> list[str]:
    """Options given after the target are tfperf's; what follows ``--`` is the script's.

    (argparse drops the ``--`` when options come before the target; then whatever our options
    do not claim is the script's.)
    """
    rest = list(args.rest)
    late = argparse.ArgumentParser(prog="tfperf profile TARGET", add_help=False)
    _add_options(late)
    if "--" in rest:
        cut = rest.index("--")
        late.parse_args(rest[:cut], namespace=args)
        return rest[cut + 1:]
    _, script_args = late.parse_known_args(rest, namespace=args)
    return script_args


def _target_kind(target: str) -> str:
    if target.endswith(".py") or os.path.isfile(target):
        return "script"
    if ":" in target:
        return "function"
    return "missing"


def run(args: argparse.Namespace) -> int:
    from tfperf.cli import UsageError

    script_args = _split_rest(args)
    from tfperf.memory.command import check_options

    check_options(args)
    if args.read is not None or args.compare is not None:
        from tfperf.profile.read.command import run_read

        return run_read(args, script_args)
    if args.remote is not None:
        if args.html:
            raise UsageError("--html writes a run's report or --read's, not --remote's")
        if args.target is not None or script_args:
            raise UsageError("--remote captures running jobs: give no target")
        return _run_remote(args)
    if args.target is None:
        raise UsageError("give a target (SCRIPT.py or MODULE:FUNCTION), or --remote "
                         "HOST:PORT[,HOST:PORT...]")
    if args.steps is not None and args.steps < 1:
        raise UsageError("--steps must be at least 1")
    if args.capture_mb < 0:
        raise UsageError("--capture-mb must be 0 (no bound) or more")
    kind = _target_kind(args.target)
    if kind == "missing":
        what = "not a file" if os.path.exists(args.target) else "no such file"
        raise UsageError(f"{what}: {args.target} (expected SCRIPT.py or MODULE:FUNCTION)")
    if kind == "function" and script_args:
        raise UsageError("arguments after the target are for scripts; use --inputs")
    if kind == "script" and (args.inputs or args.quick):
        raise UsageError("--inputs and --quick are for MODULE:FUNCTION targets")
    if kind != "script" and args.try_fixes:
        raise UsageError("--try-fixes is for scripts (SCRIPT.py); for a function, "
                         "`tfperf tune` searches and measures its fixes")
    if (args.fix_steps is not None or args.fix_rounds is not None) and not args.try_fixes:
        raise UsageError("--fix-steps and --fix-rounds go with --try-fixes")
    for option, value, least in (("--fix-steps", args.fix_steps, 4),
                                 ("--fix-rounds", args.fix_rounds, 1)):
        if value is not None and value < least:
            raise UsageError(f"{option} must be at least {least}")
    if args.plot and not args.plot.lower().endswith(".png"):
        raise UsageError("--plot takes a .png path")
    if args.plot and not (getattr(args, "memory", False) or getattr(args, "fit", False)):
        from tfperf.core.matplotlib_needed import matplotlib_missing

        if missing_plot := matplotlib_missing():
            raise UsageError(missing_plot)
    _check_target(args, kind)  # before TensorFlow is imported: bad input fails fast
    if getattr(args, "memory", False) or getattr(args, "fit", False):
        from tfperf.memory.command import run_memory

        return run_memory(args, kind, script_args)
    from tfperf.core.tensorflow_needed import tensorflow_missing

    missing = tensorflow_missing()
    if missing:
        raise UsageError(missing)
    from tfperf.core.tensorflow_logs import quiet_tensorflow_startup

    quiet_tensorflow_startup(args.verbose)

    from tfperf.profile import runner

    capture = not args.no_capture
    out = sys.stdout
    # With --json, keep stdout for the document: the run's prints go to stderr.
    redirect = contextlib.redirect_stdout(sys.stderr) if args.json else contextlib.nullcontext()
    try:
        with redirect:
            if kind == "script":
                report = runner.run_script(args.target, script_args, capture=capture,
                                           logdir=args.logdir, steps=args.steps,
                                           capture_mb=args.capture_mb or None)
            else:
                report = runner.run_function(args.target, args.inputs, steps=args.steps,
                                             capture=capture, logdir=args.logdir,
                                             quick=args.quick)
    except runner.ProfileInputError as exc:
        raise UsageError(str(exc)) from None
    if args.try_fixes and not isinstance(report.error, KeyboardInterrupt):
        _try_fixes(report, args, script_args)
    if args.plot:
        from tfperf.profile.plot import plot_report

        try:
            plot_report(report, args.plot)
        except OSError as exc:
            print(f"tfperf profile: cannot write {args.plot}: {exc}", file=sys.stderr)
            return 2
    if args.html:
        from tfperf.core.html import save

        if not save(report.to_html(), args.html, "profile"):
            return 2
    if args.json:
        print(report.to_json(), file=out)
    else:
        from tfperf.core.render import use_color

        print(report.text(color=use_color(out)), file=out)
    return report.exit_status


def _try_fixes(report: Any, args: argparse.Namespace, script_args: list[str]) -> None:
    """Measure each cause's automatic fix on copies of the script (progress on stderr)."""
    from pathlib import Path

    from tfperf.profile import trial

    wanted = [c for c in report.causes if c.automatic or c.lint]
    if not wanted:
        print("tfperf profile: --try-fixes: no cause has an automatic fix", file=sys.stderr)
        return
    steps = args.fix_steps or trial.DEFAULT_STEPS
    rounds = args.fix_rounds or trial.DEFAULT_ROUNDS
    print(f"tfperf profile: --try-fixes: each fix on a copy of {args.target}, {rounds} "
          f"round(s) of before and after, {steps} steps each, in child processes…",
          file=sys.stderr)
    trials = trial.try_fixes(report.causes, Path(args.target), script_args, steps=steps,
                             rounds=rounds, random_ops=report.random_ops())
    for t in trials:
        print(f"tfperf profile: {t.patch.name}: {t.summary()}", file=sys.stderr)


def _check_target(args: argparse.Namespace, kind: str) -> None:
    """The script, or FILE.py / MODULE of MODULE:FUNCTION (and --inputs's), checked by their
    syntax alone (nothing runs): they read and parse, the functions are defined, and a
    function that needs arguments has inputs; the output paths can be written."""
    from tfperf.cli import UsageError
    from tfperf.core.usercode import (
        UserCodeError,
        UserFile,
        check_module,
        check_output_path,
        check_user_file,
    )

    def source(module: str) -> UserFile | None:
        if module.endswith(".py") or os.sep in module or "/" in module:
            return check_user_file(module)
        return check_module(module)

    try:
        if kind == "script":
            check_user_file(args.target, suffix=None)
        else:
            module, _, name = args.target.rpartition(":")
            found = source(module) if module and name else None
            if found is not None:
                found.require_function(name)
                needed = found.required_parameters(name)
                if needed and not args.inputs and not found.may_declare("inputs"):
                    raise UsageError(f"{name}() takes {', '.join(needed)}: give --inputs "
                                     "MODULE:FN (a function returning its arguments)")
            if args.inputs:
                imodule, _, iname = args.inputs.rpartition(":")
                ifound = source(imodule) if imodule and iname else None
                if ifound is not None:
                    ifound.require_function(iname)
        for option, out in (("--plot", args.plot), ("--logdir", args.logdir),
                            ("--html", args.html)):
            if out:
                check_output_path(out, option)
    except UserCodeError as exc:
        raise UsageError(str(exc)) from None


def _run_remote(args: argparse.Namespace) -> int:
    from tfperf.cli import UsageError
    from tfperf.profile.remote import RemoteInputError, capture_remote, parse_addresses

    try:
        addresses = parse_addresses(args.remote)
    except RemoteInputError as exc:
        raise UsageError(f"--remote: {exc}") from None
    if not 1 <= args.duration_ms <= 600_000:
        raise UsageError(f"--duration-ms must be between 1 and 600000, not {args.duration_ms}")
    from tfperf.core.tensorflow_needed import tensorflow_missing

    missing = tensorflow_missing(" (its profiler client does the capture)")
    if missing:
        raise UsageError(missing)
    from tfperf.core.tensorflow_logs import quiet_tensorflow_startup

    quiet_tensorflow_startup(args.verbose)
    if args.logdir:
        try:
            os.makedirs(args.logdir, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"--logdir {args.logdir}: {exc.strerror or exc}") from None
    report = capture_remote(addresses, args.duration_ms, logdir=args.logdir)
    if args.json:
        print(report.to_json())
    else:
        from tfperf.core.render import use_color

        print(report.text(color=use_color(sys.stdout)))
    return report.exit_status
