"""S11: broadcasting beats tf.tile; yet for [100000,512] + [512], pre-expanding inside a compiled
function was faster than broadcasting in it."""

from __future__ import annotations

from tfperf.bench.suite.context import Context, speedup, time_ratio
from tfperf.bench.suite.verdict import Claim, Figure

CLAIMS = ("S11", "S11b")
FIGURE = Figure("– (no figure: broadcasting can beat tf.tile)")
FIGURE_B = Figure("– (no figure: \"faster\")")


def run(ctx: Context) -> list[Claim]:
    import tensorflow as tf

    rows = 25_000 if ctx.quick else 100_000
    if ctx.quick:
        ctx.scaled.append(f"S11: [{rows},512] instead of [100000,512]")
    x = tf.random.normal([rows, 512])
    v = tf.random.normal([512])

    @tf.function(jit_compile=True)
    def xla_broadcast(x, v):
        return x + v

    @tf.function(jit_compile=True)
    def xla_pre_expanded(x, v):
        return x + tf.broadcast_to(v[None, :], tf.shape(x))

    r = ctx.compare("S11", {
        "tf.tile then add": lambda x, v: x + tf.tile(v[None, :], [rows, 1]),
        "broadcast add": lambda x, v: x + v,
        "XLA broadcast": xla_broadcast,
        "XLA pre-expanded": xla_pre_expanded,
    }, (x, v), baseline="tf.tile then add")
    return [
        ctx.claim("S11", "broadcasting does not materialise and beats tf.tile", FIGURE,
                  speedup(r, "broadcast add"), "× (broadcast over tile)",
                  f"[{rows},512] + [512]: broadcast add over tf.tile then add", using=[r]),
        ctx.claim("S11b", f"[{rows},512] + [512]: pre-expanding in a compiled function is "
                  "faster than broadcasting in it", FIGURE_B,
                  time_ratio(r, "XLA broadcast", "XLA pre-expanded"),
                  "× (XLA pre-expanded over XLA broadcast)",
                  "XLA pre-expanded over XLA broadcast", using=[r], details={"rows": rows}),
    ]
