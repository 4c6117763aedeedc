"""The ``tfperf`` command: parse, dispatch, return an exit status. No logic of its own.

Each capability owns a ``command`` module that adds its subcommands to the parser and
imports its heavy parts (TensorFlow above all) only when its subcommand runs, so that
``tfperf lint`` and ``tfperf doctor --plan`` start instantly without TensorFlow.

Exit status, for every subcommand: 0 clean, 1 something failed or was found, 2 usage error.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any

from tfperf import __version__

# Capability command modules; each has ``register(subparsers)``.
COMMAND_MODULES = (
    "tfperf.doctor.command",
    "tfperf.lint.command",
    "tfperf.bench.command",
    "tfperf.profile.command",
    "tfperf.tune.command",
)
# The subcommands each module registers: a run of one subcommand builds only its parser (a
# pre-commit `tfperf lint` must start fast); `tfperf --help` builds them all. A test keeps
# this table equal to what the modules register.
SUBCOMMANDS = {
    "doctor": "tfperf.doctor.command", "explain": "tfperf.doctor.command",
    "lint": "tfperf.lint.command", "rules": "tfperf.lint.command",
    "rule": "tfperf.lint.command", "bench": "tfperf.bench.command",
    "profile": "tfperf.profile.command", "tune": "tfperf.tune.command",
}

EXIT_OK, EXIT_FOUND, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Raised by a subcommand for bad arguments that argparse cannot see (exit status 2)."""


def _terminal_columns() -> int:
    """``shutil.get_terminal_size().columns`` (``$COLUMNS``, the terminal, else 80)."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        return 80


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, sized without importing ``shutil``: argparse builds one for
    every ``add_argument`` (to check the metavar), and ``shutil`` brings zlib, bz2 and lzma
    with it, a few milliseconds of each ``tfperf lint`` that a pre-commit hook runs."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position,
                         _terminal_columns() - 2 if width is None else width)


class _ArgumentParser(argparse.ArgumentParser):
    """The parser of ``tfperf`` and of its subcommands: :class:`_HelpFormatter` unless a
    subcommand asks for another formatter."""

    def __init__(self, *args: Any, formatter_class: Any = _HelpFormatter,
                 **kwargs: Any) -> None:
        super().__init__(*args, formatter_class=formatter_class, **kwargs)  # type: ignore[misc]


def _available_modules(names: Sequence[str] = COMMAND_MODULES) -> list[object]:
    mods: list[object] = []
    for name in names:
        try:
            mods.append(importlib.import_module(name))
        except ModuleNotFoundError as exc:  # a capability not built yet is simply absent
            if exc.name is None or not name.startswith(exc.name):
                raise
    return mods


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole parser, or with ``command`` only what that subcommand needs."""
    parser = _ArgumentParser(
        prog="tfperf",
        description="Why your TensorFlow tensor code is slow, and how to make it fast.",
    )
    parser.add_argument("--version", action="version", version=f"tfperf {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_ArgumentParser)
    only = SUBCOMMANDS.get(command or "")
    for mod in _available_modules((only,) if only else COMMAND_MODULES):
        mod.register(sub)  # type: ignore[attr-defined]
    demo = sub.add_parser(
        "demo",
        help="the main job: doctor this machine, then lint, bench and profile the case study",
        description="The doctor on this machine, then lint, bench and profile of the article's "
                    "case study; each step ends with a line saying what came of it. Exit "
                    "status: 0 unless a step really failed (findings and advice on the slow "
                    "example are expected); else the failed step's own status.")
    demo.add_argument("--no-compute", action="store_true",
                      help="skip the doctor's live checks and the bench and profile steps")
    demo.add_argument("--verbose", action="store_true",
                      help="let TensorFlow's C++ start-up notices through (hidden by default)")
    demo.set_defaults(func=_run_demo)
    return parser


def _run_demo(args: argparse.Namespace) -> int:
    """Run each capability on this machine and on the bundled case study, in order."""
    from tfperf.core.tensorflow_logs import quiet_tensorflow_startup
    from tfperf.core.tensorflow_needed import tensorflow_missing
    from tfperf.examples import RUNS_TENSORS, demo_outcome, demo_steps

    quiet_tensorflow_startup(args.verbose)
    missing = tensorflow_missing()  # the base install: lint and the doctor still run

    # Lint and profile findings on the slow example are the point of the demo, not a failure:
    # each step's status is said in words, and the demo fails only where a step did.
    worst = EXIT_OK
    registered = _registered_commands()
    for title, argv, expected in demo_steps(no_compute=args.no_compute, verbose=args.verbose):
        if argv[0] not in registered:
            continue
        print(f"\n=== {title}: tfperf {' '.join(argv)}\n", flush=True)
        if missing and argv[0] in RUNS_TENSORS:
            print(f"→ skipped: {missing}", flush=True)
            continue
        rc = main(argv)
        failed, words = demo_outcome(argv[0], rc, expected)
        print(f"\n→ {words}", flush=True)
        if failed:
            worst = max(worst, rc)
    return worst


def _registered_commands() -> set[str]:
    parser = build_parser()
    for action in parser._actions:  # argparse offers no public accessor for subcommands
        if isinstance(action, argparse._SubParsersAction):
            return set(action.choices)
    return set()


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv[0] if argv and argv[0] in SUBCOMMANDS else None)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    from tfperf.core.interrupts import interrupt_name, interrupt_status, sigterm_as_interrupt

    try:
        with sigterm_as_interrupt():  # `timeout`, a cancelled job: cleaned up as Ctrl-C is
            return int(args.func(args) or 0)
    except UsageError as exc:
        print(f"tfperf {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt as exc:
        print(f"interrupted ({interrupt_name(exc)})", file=sys.stderr)
        return interrupt_status(exc)
    except BrokenPipeError:  # `tfperf lint . | head`
        return EXIT_OK


if __name__ == "__main__":
    # `python -m tfperf.cli`: run main() of the module under its own name, whose UsageError
    # is the one the commands raise (this file's copy as __main__ would catch none of them:
    # every bad input ended in a traceback)
    from tfperf.cli import main as cli_main

    sys.exit(cli_main())
