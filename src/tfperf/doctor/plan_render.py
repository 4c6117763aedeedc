"""Rendering a :class:`~tfperf.doctor.planner.Plan`: terminal text, JSON, Markdown."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tfperf import __version__
from tfperf.core.findings import Status
from tfperf.core.render import markdown_table, status_badge, style, to_json

if TYPE_CHECKING:
    from tfperf.doctor.planner import Plan

PLAN_SCHEMA_VERSION = 1


def _rows(p: Plan) -> list[tuple[str, str]]:
    def dash(v: object) -> str:
        return "–" if v in (None, "", []) else str(v)

    cuda = dash(p.cuda)
    if p.cuda_build and p.cuda_build != p.cuda:
        cuda += f" (wheel: {p.cuda_build})"
    driver = f"Linux ≥ {dash(p.min_driver.get('linux'))}, Windows ≥ " \
             f"{dash(p.min_driver.get('windows'))}"
    if p.min_driver_compat.get("linux"):
        driver += (f"  (minor-version compatibility: Linux ≥ {p.min_driver_compat['linux']}, "
                   f"Windows ≥ {dash(p.min_driver_compat.get('windows'))})")
    rows = [("tensorflow", f"{dash(p.tensorflow)} ({p.os}, package {dash(p.package)})"),
            ("python", dash(p.python.get("text"))),
            ("cuda", cuda), ("cudnn", dash(p.cudnn)), ("driver", driver),
            ("libraries", ", ".join(p.needed_libraries) or "–")]
    if p.wheel:
        tag = " (derived)" if p.wheel.get("derived") else ""
        rows.append(("compiled for", " ".join(p.wheel["archs"]) + tag))
    if p.gpu:
        g = p.gpu
        rows.append(("gpu", f"{g.get('name') or '–'} cc {dash(g.get('compute_capability'))}"
                            + (f": {g['support']}" if g.get("support") else "")))
    return rows


def plan_text(p: Plan, color: bool = False) -> str:
    out = [style(f"tfperf doctor --plan {p.requested}", "bold", color=color), ""]
    rows = _rows(p)
    width = max(len(k) for k, _ in rows)
    out += [f"  {style(k.ljust(width), 'dim', color=color)}  {v}" for k, v in rows]
    out.append("")
    for c in p.checks:
        out.append(f"  {status_badge(c.status, color)} {c.message}")
        if c.hint and c.status in (Status.FAIL, Status.WARN):
            out.append(f"       {style('fix:', 'cyan', color=color)} {c.hint}")
    out += ["", "  install:"] + [f"    {line}" for line in p.install]
    verdict = "a check fails" if p.failed else "no failing check"
    out += ["", style(verdict, "bold", "red" if p.failed else "green", color=color)]
    return "\n".join(out)


def plan_json(p: Plan) -> str:
    return to_json({"tfperf": __version__, "schema": PLAN_SCHEMA_VERSION, **p.to_dict()})


def plan_markdown(p: Plan) -> str:
    out = [f"## tfperf doctor --plan {p.requested}", "",
           markdown_table(["", "value"], _rows(p)), "", "### Checks", "",
           markdown_table(["status", "check", "message", "fix"],
                          [(str(c.status).upper(), f"`{c.code}`", c.message, c.hint)
                           for c in p.checks]), "", "### Install", "", "```sh",
           *p.install, "```"]
    return "\n".join(out) + "\n"
