"""The article's claims as a suite: each measured on this machine, with a verdict.

One module per claim group; each has ``run(ctx) -> list[Claim]``. The article's figures are
quoted as its claims; the ``measured`` column is what this machine did.
"""

from __future__ import annotations

import importlib
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tfperf.bench.machine import machine_info, machine_line
from tfperf.bench.result import CompareResult
from tfperf.bench.suite.common import NOT_APPLICABLE, Claim, Context
from tfperf.core import render

GROUPS = ("s01_host_sync", "s02_static_shapes", "s03_precision", "s05_layout",
          "s11_broadcast", "s12_loops", "s13_tf_function", "s14_xla", "s16_case_study",
          "s19_pipeline")


@dataclass
class SuiteResult:
    machine: dict[str, Any]
    claims: list[Claim]
    quick: bool
    elapsed_s: float
    comparisons: dict[str, CompareResult] = field(default_factory=dict)
    scaled: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def exit_status(self) -> int:
        return 1 if self.errors else 0

    def to_dict(self) -> dict[str, Any]:
        return {"machine": self.machine, "quick": self.quick, "elapsed_s": self.elapsed_s,
                "scaled_down": self.scaled, "errors": self.errors,
                "claims": [c.to_dict() for c in self.claims]}

    def to_json(self, indent: int | None = 2) -> str:
        return render.to_json(self.to_dict(), indent=indent)

    _HEADERS = ("id", "claim", "article", "measured here", "verdict", "reason")

    def _rows(self) -> list[list[str]]:
        return [[c.id, c.claim, c.article, _measured(c), c.verdict, c.reason]
                for c in self.claims]

    def _preamble(self) -> list[str]:
        lines = [f"machine: {machine_line(self.machine)}",
                 "'article' is the article's claim, quoted; 'measured here' is this machine."]
        if self.quick:
            lines.append("quick mode (scaled down): " + ("; ".join(self.scaled) or "fewer runs"))
        return lines

    def table(self, color: bool = False) -> str:
        head = render.style("tfperf bench --suite article", "bold", color=color)
        body = render.text_table(self._HEADERS[:5], [r[:5] for r in self._rows()])
        reasons = [f"  {c.id}: {c.reason}" for c in self.claims]
        out = [head, *self._preamble(), "", body, "", "why:", *reasons]
        out += [render.style(f"! {e}", "red", color=color) for e in self.errors]
        out.append(f"\n{len(self.claims)} claims in {self.elapsed_s:.0f} s")
        return "\n".join(out)

    def to_markdown(self) -> str:
        return "\n".join([*self._preamble(), "",
                          render.markdown_table(self._HEADERS, self._rows())]) + "\n"

    def plot(self, folder: Path) -> list[Path]:
        from tfperf.bench.plot import plot_result

        return [plot_result(res, folder / f"{key}.png", title=f"{key} (tfperf suite)")
                for key, res in self.comparisons.items()
                if any(v.median_s is not None for v in res.variants)]


def _measured(c: Claim) -> str:
    if c.measured is None or (isinstance(c.measured, float) and math.isnan(c.measured)):
        return "–"
    x = c.measured
    text = f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.3g}"
    return f"{text} {c.unit}"


def run_suite(quick: bool = False, groups: tuple[str, ...] = GROUPS,
              progress: Callable[[float, str], None] | None = None) -> SuiteResult:
    """Run every claim group; a group that crashes is reported and the others go on."""
    import tensorflow as tf

    t0 = time.perf_counter()
    gpu = bool(tf.config.list_logical_devices("GPU"))
    ctx = Context(quick=quick, gpu=gpu, budget=1.5 if quick else 5.0)
    claims: list[Claim] = []
    errors: list[str] = []
    for i, name in enumerate(groups):
        if progress:
            progress(i / len(groups), name)
        try:
            module = importlib.import_module(f"tfperf.bench.suite.{name}")
            claims.extend(module.run(ctx))
        except Exception as exc:
            msg = f"{name}: {type(exc).__name__}: {str(exc).strip().splitlines()[0][:200]}" \
                if str(exc).strip() else f"{name}: {type(exc).__name__}"
            errors.append(msg)
            claims.append(Claim(name.split("_")[0].upper(), f"group {name}", "–", None, "",
                                NOT_APPLICABLE, f"measurement failed: {msg}"))
    if progress:
        progress(1.0, "done")
    return SuiteResult(machine=machine_info(), claims=claims, quick=quick,
                       elapsed_s=time.perf_counter() - t0, comparisons=ctx.comparisons,
                       scaled=ctx.scaled, errors=errors)
