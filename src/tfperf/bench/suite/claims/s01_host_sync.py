"""S1: `.numpy()` in a hot path forces a device→host copy and a sync."""

from __future__ import annotations

from tfperf.bench.suite.common import NOT_APPLICABLE, Claim, Context, ratio_verdict

STEPS = 20


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
    slow, base = r[".numpy() per step"], r["no .numpy()"]
    per_step = None
    if slow.median_s is not None and base.median_s is not None:
        per_step = (slow.median_s - base.median_s) / STEPS * 1e6
    ratio = 1 / slow.speedup if slow.speedup else None
    if ctx.gpu:
        verdict, reason = ratio_verdict(ratio, 1.1, "a loop with .numpy() per step is slower")
    else:
        verdict = NOT_APPLICABLE
        reason = ("no GPU: .numpy() is a host memcpy here, with no device sync to force; "
                  f"it costs {per_step:.3g} µs per step on a 256 KB tensor"
                  if per_step is not None else "no GPU, and the measurement failed")
    return [Claim("S1", ".numpy() per step forces a device→host copy and sync",
                  "– (no figure)", per_step, "µs added per step", verdict, reason,
                  {"slowdown": ratio, "steps": STEPS})]
