"""S11: broadcasting beats tf.tile; yet for [100000,512] + [512], pre-expanding inside a compiled
function was faster."""

from __future__ import annotations

from tfperf.bench.suite.common import Claim, Context, failed_variants, ratio_verdict, speedup


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
    fails = failed_variants(r)
    s_bc = speedup(r, "broadcast add")
    va, wa = ratio_verdict(s_bc, 1.05, "broadcast add over tf.tile then add", fails)
    pre, plain = r["XLA pre-expanded"].median_s, r["broadcast add"].median_s
    s_pre = plain / pre if pre and plain else None
    vb, wb = ratio_verdict(s_pre, 1.05, "XLA pre-expanded over eager broadcast", fails)
    return [
        Claim("S11", "broadcasting does not materialise and beats tf.tile", "–", s_bc,
              "× (broadcast over tile)", va, wa, {"rows": rows}),
        Claim("S11b", f"[{rows},512] + [512]: pre-expanding in a compiled function is faster",
              "– (\"faster\")", s_pre, "× (XLA pre-expanded over broadcast)", vb, wb,
              {"rows": rows}),
    ]
