"""``tfperf doctor --plan``: its arguments and its run; the planning is in ``planner``.

Kept import-light on purpose: the doctor's command module adds these arguments on every
``tfperf`` start, so the knowledge base and the planner load only when --plan runs.
"""

from __future__ import annotations

import argparse
import sys

from tfperf.doctor.milestones import PLAN_OSES

# ---------------------------------------------------------------------------------------------
# CLI glue (the doctor's command module calls these)


def add_plan_arguments(parser: argparse.ArgumentParser) -> None:
    """Add --plan and its options to the ``doctor`` parser (and --json/--markdown if absent)."""
    g = parser.add_argument_group("install planner (offline, no TensorFlow needed)")
    g.add_argument("--plan", metavar="TF_VERSION",
                   help="plan an install of this TensorFlow version ('latest': the newest "
                        "this driver/GPU can run)")
    g.add_argument("--driver", metavar="X.Y.Z", help="NVIDIA driver version to plan for")
    who = g.add_mutually_exclusive_group()
    who.add_argument("--gpu", metavar="NAME", help="GPU name as nvidia-smi prints it")
    who.add_argument("--cc", metavar="X.Y", help="GPU compute capability, e.g. 9.0")
    g.add_argument("--os", choices=PLAN_OSES, default="linux", help="target OS (default linux)")
    g.add_argument("--python", metavar="X.Y", help="Python version to plan for")
    have = {opt for a in parser._actions for opt in a.option_strings}
    if "--json" not in have:
        parser.add_argument("--json", action="store_true", help="JSON output")
    if "--markdown" not in have:
        parser.add_argument("--markdown", action="store_true", help="Markdown output")


def run_plan(args: argparse.Namespace) -> int:
    from tfperf.cli import UsageError  # cli imports command modules; import it lazily
    from tfperf.doctor.planner import PlanError, plan

    try:
        p = plan(args.plan, driver=args.driver, gpu=args.gpu, cc=args.cc,
                 os=args.os or "linux", python=args.python)
    except PlanError as exc:
        raise UsageError(str(exc)) from None
    from tfperf.doctor import plan_render

    if getattr(args, "json", False):
        out = plan_render.plan_json(p)
    elif getattr(args, "markdown", False):
        out = plan_render.plan_markdown(p)
    else:
        from tfperf.core.render import use_color

        out = plan_render.plan_text(p, color=use_color(sys.stdout))
    print(out)
    return 1 if p.failed else 0
