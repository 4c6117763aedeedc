"""``tfperf doctor`` (and ``tfperf explain``): argument parsing and dispatch only.

Imported on every tfperf start, so only the standard library is imported at module level;
the probes, the knowledge and TensorFlow (in a subprocess) are reached when the command runs.
"""

from __future__ import annotations

import argparse
import sys

DEFAULT_TIMEOUT = 120.0


def register(subparsers: argparse._SubParsersAction) -> None:
    from tfperf.doctor.explain import add_explain_arguments, run_explain
    from tfperf.doctor.plan import add_plan_arguments

    doctor = subparsers.add_parser(
        "doctor", help="check the GPU chain: TF build ↔ CUDA/cuDNN ↔ driver ↔ GPU",
        description="Gather facts about this machine (TensorFlow is imported in a subprocess), "
                    "judge the TF ↔ CUDA/cuDNN ↔ driver ↔ GPU chain, run live matmul checks, "
                    "and say what to fix. With --plan, plan an install offline instead. "
                    "Exit status: 0 no check failed, 1 a check failed, 2 usage error.")
    out = doctor.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true",
                     help="print facts and checks as JSON (schema: docs/doctor.md)")
    out.add_argument("--markdown", action="store_true",
                     help="print a Markdown report to paste into a bug report")
    doctor.add_argument("--html", metavar="OUT.html",
                        help="also write the report as one self-contained HTML file (the "
                             "chain as facts, verdicts and fixes; nothing fetched)")
    doctor.add_argument("--no-compute", action="store_true",
                        help="skip the live checks (matmul on GPU/CPU, XLA, float16/bfloat16)")
    doctor.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                        help="limit for importing TensorFlow and for each live check "
                             f"(default {DEFAULT_TIMEOUT:g}); external tools get "
                             "min(10, SECONDS)")
    doctor.add_argument("--matmul-size", type=int, default=None, metavar="N",
                        help="size of the live matmul (default 4096 as in the article; 1024 "
                             "on a machine without a GPU)")
    doctor.add_argument("--devices", action="store_true",
                        help="also check collectives across this machine's devices: "
                             "MirroredStrategy over the GPUs (or logical CPU devices), "
                             "all-reduce correctness and bandwidth per cross_device_ops, "
                             "stragglers (docs/multi-device.md); each stage bounded by "
                             "--timeout")
    doctor.add_argument("--logical-cpus", type=int, default=2, metavar="N",
                        help="with --devices and no GPU: CPU devices to span (default 2)")
    doctor.add_argument("--max-message", type=int, default=None, metavar="BYTES",
                        help="with --devices: the all-reduce sweep's largest message "
                             "(default 128 MiB on GPUs, 16 MiB on CPU devices)")
    doctor.add_argument("--workers", metavar="TF_CONFIG_OR_HOSTS",
                        help="this machine's part of a multi-worker check (run it on every "
                             "worker): a TF_CONFIG JSON or file, 'env' for $TF_CONFIG, or "
                             "HOST:PORT,HOST:PORT with --worker-index; every worker joins, "
                             "fingerprints compared, all-reduce exact, ring bandwidth")
    doctor.add_argument("--worker-index", type=int, default=None, metavar="I",
                        help="with --workers HOST:PORT,...: this worker's index (default 0)")
    add_plan_arguments(doctor)
    doctor.set_defaults(func=run_doctor)

    explain = subparsers.add_parser(
        "explain", help="explain a pasted TensorFlow GPU error log: cause and fix per line",
        description="Match a log against known TensorFlow/CUDA error patterns. Exit status: "
                    "0 nothing at failure or warning level found, 1 a cause at failure or "
                    "warning level found, 2 usage error (no log given, a path that is missing "
                    "or out of reach).")
    add_explain_arguments(explain)
    explain.set_defaults(func=run_explain)


def run_doctor(args: argparse.Namespace) -> int:
    if getattr(args, "plan", None) is not None:
        from tfperf.doctor.plan import run_plan

        if args.html:
            from tfperf.cli import UsageError

            raise UsageError("--html writes this machine's report, not --plan's")

        return run_plan(args)
    from tfperf.cli import UsageError

    planner_only = [f"--{name}" for name in ("driver", "gpu", "cc", "python")
                    if getattr(args, name, None) is not None]
    if planner_only:
        raise UsageError(f"{', '.join(planner_only)} only make sense with --plan (this machine's "
                         "own driver and GPU are probed, not given)")
    if not args.timeout > 0:
        raise UsageError(f"--timeout must be a positive number of seconds, not {args.timeout:g}")
    if args.matmul_size is not None and not 16 <= args.matmul_size <= 32768:
        raise UsageError(f"--matmul-size must be between 16 and 32768, not {args.matmul_size}")

    if not 2 <= args.logical_cpus <= 64:
        raise UsageError(f"--logical-cpus must be between 2 and 64, not {args.logical_cpus}")
    if args.max_message is not None and not 8 <= args.max_message <= 2**34:
        raise UsageError(f"--max-message must be between 8 and 2**34 bytes, "
                         f"not {args.max_message}")

    if args.html:
        from tfperf.core.usercode import UserCodeError, check_output_path

        try:
            check_output_path(args.html, "--html")
        except UserCodeError as exc:
            raise UsageError(str(exc)) from None
    if args.workers is not None:
        from tfperf.doctor.probes.workers import WorkersSpecError, parse_workers

        try:
            parse_workers(args.workers, args.worker_index)
        except WorkersSpecError as exc:
            raise UsageError(f"--workers: {exc}") from None

    from tfperf.core.render import use_color
    from tfperf.doctor.checks import judge
    from tfperf.doctor.gather import gather
    from tfperf.doctor.probe import GatherOptions
    from tfperf.doctor.report import exit_status, report_json, report_markdown, report_text

    if sys.stderr.isatty() and not (args.json or args.markdown):
        print("tfperf doctor: gathering facts (importing TensorFlow in a subprocess"
              + ("" if args.no_compute else ", then live checks") + ")…",
              file=sys.stderr, flush=True)
    options = GatherOptions(timeout=args.timeout, tool_timeout=min(10.0, args.timeout),
                            compute=not args.no_compute, matmul_size=args.matmul_size,
                            devices=args.devices, logical_cpus=args.logical_cpus,
                            max_message_bytes=args.max_message, workers=args.workers,
                            worker_index=args.worker_index)
    facts = gather(options)
    findings = judge(facts, compute=options.compute)
    if args.html:
        from tfperf.core.html import save
        from tfperf.doctor.report import report_html

        if not save(report_html(facts, findings), args.html, "doctor"):
            return 2
    if args.json:
        print(report_json(facts, findings))
    elif args.markdown:
        print(report_markdown(facts, findings), end="")
    else:
        print(report_text(facts, findings, color=use_color(sys.stdout)))
    return exit_status(findings)
