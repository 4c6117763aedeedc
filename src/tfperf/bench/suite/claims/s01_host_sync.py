"""S1: `.numpy()` in a hot path forces a device→host copy and a sync."""

from __future__ import annotations

from tfperf.bench.suite.context import Context, time_ratio
from tfperf.bench.suite.verdict import Claim, Figure

CLAIMS = ("S1",)
STEPS = 20
FIGURE = Figure("– (no figure: slower)")


def run(ctx: Context) -> list[Claim]:
    import tensorflow as tf

    x0 = tf.random.normal([256, 256])

    def steps_on_device(x):
        for _ in range(STEPS):
            x = x * 0.99 + 0.01
        return x

    def steps_with_numpy(x):
        for _ in range(STEPS):
            x = x * 0.99 + 0.01
            x.numpy()  # the article's anti-pattern: read back every step
        return x

    r = ctx.compare("S1", {"no .numpy()": steps_on_device, ".numpy() per step": steps_with_numpy},
                    (x0,), baseline="no .numpy()")
    slowdown = time_ratio(r, ".numpy() per step", "no .numpy()")
    slow, base = r[".numpy() per step"].median_s, r["no .numpy()"].median_s
    per_step = (slow - base) / STEPS * 1e6 if slow and base else None
    unavailable = None
    if not ctx.gpu:
        cost = f" ({per_step:.3g} µs per step on a 256 KB tensor)" if per_step is not None else ""
        unavailable = ("no GPU: .numpy() is a host memcpy here, with no device sync to "
                       f"force{cost}")
    return [ctx.claim("S1", ".numpy() per step forces a device→host copy and sync", FIGURE,
                      slowdown, "× slower with .numpy() per step",
                      f"{STEPS} element-wise steps on [256,256], .numpy() after each vs none",
                      using=[r], unavailable=unavailable,
                      details={"added_us_per_step": per_step, "steps": STEPS})]
