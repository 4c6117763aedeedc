"""S22: profile (TF profiler), change one thing, profile again. The first profile must name
the line to change; the second must show the gain of changing it, for the same result."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tfperf.bench.equivalence import compare_outputs
from tfperf.bench.suite.context import Context
from tfperf.bench.suite.verdict import Claim, Figure

CLAIMS = ("S22",)
FIGURE = Figure("– (a method: profile, optimise one thing, profile again)")
STEPS = 2


def _profiled(fn: Any, args: tuple[Any, ...], logdir: Path) -> dict[str, Any]:
    from tfperf.profile import profile

    return profile(fn, *args, steps=STEPS, logdir=logdir).to_dict()


def run(ctx: Context) -> list[Claim]:
    import tensorflow as tf

    from tfperf.examples.case_study_fixed import compute_feature_tf_vec
    from tfperf.examples.case_study_slow import compute_feature_tf_slow

    assert ctx.workdir is not None
    g = tf.random.Generator.from_seed(22)
    args = (g.normal([2, 100, 32]), g.normal([100]))
    before = _profiled(compute_feature_tf_slow, args, ctx.workdir / "s22-before")
    after = _profiled(compute_feature_tf_vec, args, ctx.workdir / "s22-after")
    failures = [f"the {name} profile's run raised {d['error']['type']}: {d['error']['message']}"
                for name, d in (("first", before), ("second", after)) if d.get("error")]
    hot = before["eager_ops"][0] if before["eager_ops"] else None
    if hot is None:
        failures.append("the first profile named no hot line")
    same = compare_outputs(compute_feature_tf_slow(*args), compute_feature_tf_vec(*args))
    if same.equivalent is not True:
        failures.append(f"the change altered the result: {same.reason}")
    gain = before["wall_s"] / after["wall_s"] if before["wall_s"] and after["wall_s"] else None
    where = (f"{Path(hot['path']).name}:{hot['line']} ({hot['count']} eager ops, "
             f"{100 * hot['share']:.0f} % of the time)") if hot else "nothing"
    codes = sorted({a["code"] for a in before["advice"]})
    variants = [{"comparison": "S22", "name": name, "baseline": name == "before (loop)",
                 "status": "error" if d.get("error") else "ok",
                 "median_s": d["wall_s"] / (STEPS + 1) if d["wall_s"] else None,
                 "speedup": None, "equivalent": None if name.startswith("before") else
                 same.equivalent, "equivalence": same.reason or None,
                 "error": d["error"]["message"] if d.get("error") else None}
                for name, d in (("before (loop)", before), ("after (vectorised)", after))]
    claim = ctx.claim("S22", "profile, optimise the line it names, profile again", FIGURE, gain,
                      "× less profiled time", f"the first profile named {where}; after "
                      "vectorising it, the second profile's time", failures=failures,
                      details={"hot_line": hot, "advice_codes": codes,
                               "steps": STEPS, "wall_s_before": before["wall_s"],
                               "wall_s_after": after["wall_s"]})
    claim.variants = variants
    return [claim]
