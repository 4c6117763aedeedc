"""``tfperf profile --memory`` and ``--fit``: the options, and the run behind them.

Only argparse and the standard library are imported at registration; TensorFlow loads when a
memory view runs (after the CPU allocator's statistics are switched on).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import Any


def add_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--memory", action="store_true",
                   help="the memory view: the peak of each step on each device, the live "
                        "tensors at the peak by op, layer and line, the share held by weights, "
                        "optimizer slots, inputs and activations, and leaks across steps "
                        "(exit 1 when a leak is found)")
    p.add_argument("--leak-steps", type=int, metavar="N",
                   help="--memory on MODULE:FUNCTION: steps sampled for leaks after the "
                        "captured ones (default 20; 0: none). Scripts: every top-level "
                        "tf.function call after the captured ones")
    p.add_argument("--fit", action="store_true",
                   help="will it fit, before running: the predicted peak of MODULE:FUNCTION "
                        "(a step) from its traced graph, for --batch, --device and "
                        "--precision; the largest batch that fits; XLA and mixed precision "
                        "side by side")
    p.add_argument("--batch", type=int, metavar="N",
                   help="--fit: the batch size (axis 0 of the inputs) to predict for")
    p.add_argument("--device", metavar="NAME|SIZE",
                   help="--fit: a GPU name from the doctor's table ('A100 40GB', 'T4') or a "
                        "memory size ('16GiB', '24GB'); default: this machine's free memory")
    p.add_argument("--precision", choices=("float32", "mixed_float16", "mixed_bfloat16"),
                   help="--fit: the precision policy to predict for (default float32); the "
                        "other is shown beside it")


def _fit_only(args: argparse.Namespace) -> list[str]:
    return [o for o in ("--batch", "--device", "--precision")
            if getattr(args, o[2:], None) is not None]


def _go(options: list[str]) -> str:
    return f"{', '.join(options)} {'goes' if len(options) == 1 else 'go'}"


def check_options(args: argparse.Namespace) -> None:
    """Every ``tfperf profile`` run: the memory view's options given without it, or with an
    option of the time view's, are bad input (not silently ignored)."""
    from tfperf.cli import UsageError

    memory, fit = bool(getattr(args, "memory", False)), bool(getattr(args, "fit", False))
    if not (memory or fit):
        if fit_only := _fit_only(args):
            raise UsageError(f"{_go(fit_only)} with --fit (will it fit, before running)")
        if getattr(args, "leak_steps", None) is not None:
            raise UsageError("--leak-steps goes with --memory")
        return
    view = "--memory" if memory else "--fit"
    for option, given in (("--try-fixes", getattr(args, "try_fixes", False)),
                          ("--read", getattr(args, "read", None) is not None),
                          ("--compare", getattr(args, "compare", None) is not None),
                          ("--remote", getattr(args, "remote", None) is not None),
                          # no page of its own yet: a run that wrote nothing and said nothing
                          ("--html", bool(getattr(args, "html", None)))):
        if given:
            raise UsageError(f"{option} goes with the time view, not {view}"
                             + (" (--json keeps the memory view in a file)"
                                if option == "--html" else ""))


def run_memory(args: argparse.Namespace, kind: str, script_args: list[str]) -> int:
    from tfperf.cli import UsageError

    if args.memory and args.fit:
        raise UsageError("--memory measures a run and --fit predicts one: give one of them")
    if args.leak_steps is not None and args.leak_steps < 0:
        raise UsageError("--leak-steps must be 0 or more")
    if args.leak_steps is not None and kind == "script":
        raise UsageError("--leak-steps is for MODULE:FUNCTION: a script's leaks are sampled "
                         "on each top-level tf.function call after the captured ones")
    if args.batch is not None and args.batch < 1:
        raise UsageError("--batch must be at least 1")
    fit_only = _fit_only(args)
    if args.memory and fit_only:
        raise UsageError(f"{_go(fit_only)} with --fit, not --memory")
    if args.fit and kind == "script":
        raise UsageError("--fit predicts one step: give MODULE:FUNCTION (the step) and "
                         "--inputs, not a script")
    limit = None
    if args.fit and args.device is not None:
        from tfperf.memory.devices import DeviceError, parse_device

        try:
            limit = parse_device(args.device)
        except DeviceError as exc:
            raise UsageError(f"--device: {exc}") from None
    if args.plot:
        raise UsageError("--plot draws the time view; the memory view prints its timeline")
    from tfperf.core.tensorflow_needed import tensorflow_missing

    missing = tensorflow_missing()
    if missing:
        raise UsageError(missing)
    from tfperf.memory import allocator

    allocator.switch_on_statistics()  # before anything creates TensorFlow's devices
    from tfperf.core.tensorflow_logs import quiet_tensorflow_startup

    quiet_tensorflow_startup(args.verbose)
    from tfperf.profile.runner import ProfileInputError

    out = sys.stdout
    report: Any
    redirect = (contextlib.redirect_stdout(sys.stderr) if args.json
                else contextlib.nullcontext())
    try:
        with redirect:
            if args.fit:
                from tfperf.memory.fit import run_fit

                report = run_fit(args.target, args.inputs, batch=args.batch, device=limit,
                                 precision=args.precision or "float32", quick=args.quick)
            elif kind == "script":
                from tfperf.memory.runner import run_script

                report = run_script(args.target, script_args, steps=args.steps,
                                    logdir=args.logdir, capture=not args.no_capture)
            else:
                from tfperf.memory.runner import run_function

                report = run_function(args.target, args.inputs, steps=args.steps,
                                      leak_steps=args.leak_steps, logdir=args.logdir,
                                      capture=not args.no_capture, quick=args.quick)
    except ProfileInputError as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        print(report.to_json(), file=out)
    else:
        from tfperf.core.render import use_color

        print(report.text(color=use_color(out)), file=out)
    return int(report.exit_status)


__all__ = ["add_options", "check_options", "run_memory"]
