"""`tfperf profile --read PATH` and `--compare A B`: no TensorFlow, no XProf plugin."""

from __future__ import annotations

import argparse
import sys


def _check_reachable(path: str) -> None:
    """A capture path that is not there, or not to be read, is bad input (exit 2). Out of
    reach used to read as missing ("no such file or folder") or, for a folder that cannot be
    listed, as a capture-less logdir (exit 1): stop 45."""
    import os
    import stat

    from tfperf.cli import UsageError

    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        why = ("a symlink that leads to no file (a loop or a missing target)"
               if os.path.islink(path) else "no such file or folder")
        raise UsageError(f"{path}: {why}") from None
    except OSError as exc:
        if os.path.islink(path):
            raise UsageError(f"{path}: a symlink that leads to no file (a loop or a missing "
                             "target)") from None
        raise UsageError(f"{path}: cannot reach it: {exc.strerror or exc}") from None
    if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):  # opening a named pipe waits forever
        raise UsageError(f"{path}: not a file or folder (a named pipe, socket or device)")
    try:
        if stat.S_ISDIR(mode):
            os.listdir(path)
        else:
            with open(path, "rb"):
                pass
    except OSError as exc:
        what = "list" if stat.S_ISDIR(mode) else "read"
        raise UsageError(f"{path}: cannot {what} it: {exc.strerror or exc}") from None


def run_read(args: argparse.Namespace, script_args: list[str]) -> int:
    from tfperf.cli import UsageError

    if args.target is not None or script_args:
        raise UsageError("--read and --compare take capture paths, not a target to run")
    if args.read is not None and args.compare is not None:
        raise UsageError("give --read PATH or --compare A B, not both")
    # a run's options would be ignored here: said, not dropped (`--read X --plot out.png`
    # used to end with no plot and no word about it)
    unused = [option for option, value in (
        ("--plot", args.plot), ("--try-fixes", args.try_fixes), ("--logdir", args.logdir),
        ("--inputs", args.inputs), ("--steps", args.steps), ("--quick", args.quick),
        ("--no-capture", args.no_capture), ("--remote", args.remote),
        ("--fix-steps", args.fix_steps), ("--fix-rounds", args.fix_rounds)) if value]
    if unused:
        raise UsageError(f"{', '.join(unused)}: for a run (SCRIPT.py or MODULE:FUNCTION); "
                         f"--read and --compare read captures (--html and --json apply)")
    for p in [args.read] if args.read is not None else list(args.compare):
        _check_reachable(p)
    if args.html:
        from tfperf.core.usercode import UserCodeError, check_output_path

        if args.compare is not None:
            raise UsageError("--html writes --read's report, not --compare's")
        try:
            check_output_path(args.html, "--html")
        except UserCodeError as exc:
            raise UsageError(str(exc)) from None
    from tfperf.core.render import use_color

    if args.compare is not None:
        from tfperf.profile.read.compare import compare

        result = compare(*args.compare)
        print(result.to_json() if args.json else result.text(color=use_color(sys.stdout)))
        return result.exit_status
    from tfperf.profile.read.report import read

    report = read(args.read)
    if args.html:
        from tfperf.core.html import save

        if not save(report.to_html(), args.html, "profile"):
            return 2
    print(report.to_json() if args.json else report.text(color=use_color(sys.stdout)))
    return report.exit_status
