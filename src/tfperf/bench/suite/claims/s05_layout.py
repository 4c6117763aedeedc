"""S5/S10: reshape is O(1) metadata; transpose of [8,128,128,32] with perm [0,3,1,2] copies."""

from __future__ import annotations

from tfperf.bench.suite.common import DOES_NOT_HOLD, HOLDS, Claim, Context, speedup


def run(ctx: Context) -> list[Claim]:
    import tensorflow as tf

    x = tf.random.normal([8, 128, 128, 32])
    big = tf.random.normal([8 * 8, 128, 128, 32])  # 8× the elements
    r = ctx.compare("S5_S10", {
        "transpose [0,3,1,2]": lambda: tf.transpose(x, [0, 3, 1, 2]),
        "reshape": lambda: tf.reshape(x, [8, 128, 128 * 32]),
        "reshape, 8× larger": lambda: tf.reshape(big, [64, 128, 128 * 32]),
    }, baseline="transpose [0,3,1,2]", check_equivalence=False)
    t_small = r["reshape"].median_s
    t_big = r["reshape, 8× larger"].median_s
    growth = t_big / t_small if t_small and t_big else None
    s_reshape = speedup(r, "reshape")
    t_tr = r["transpose [0,3,1,2]"].median_s
    gbs = 2 * x.shape.num_elements() * 4 / t_tr / 1e9 if t_tr else None
    if growth is not None:
        v5 = HOLDS if growth < 2 else DOES_NOT_HOLD
        why5 = f"reshape time ×{growth:.2g} for 8× the elements: it does not touch the data"
    else:
        v5, why5 = DOES_NOT_HOLD, "reshape could not be timed"
    if s_reshape is not None and gbs is not None:
        v10 = HOLDS if s_reshape >= 10 else DOES_NOT_HOLD
        why10 = (f"transpose takes {s_reshape:.3g}× a reshape's time, moving "
                 f"{gbs:.3g} GB/s: it copies all 16.8 MB")
    else:
        v10, why10 = DOES_NOT_HOLD, "transpose could not be timed"
    return [
        Claim("S5", "reshape is O(1) metadata (time independent of size)", "reshape O(1)",
              growth, "× reshape time for 8× the data", v5, why5),
        Claim("S10", "transpose [8,128,128,32] perm [0,3,1,2] copies every element", "–",
              s_reshape, "× transpose time over reshape", v10, why10, {"transpose_gb_per_s": gbs}),
    ]
