"""S5/S10: reshape and contiguous slicing are O(1) metadata; transpose (and a strided slice)
copies every element. Measured as how time grows with the data: O(1) stays flat, a copy
grows in proportion."""

from __future__ import annotations

from tfperf.bench.suite.context import Context, time_ratio
from tfperf.bench.suite.verdict import Claim, Figure

CLAIMS = ("S5", "S5b", "S10")
SHAPE = [8, 128, 128, 32]


def run(ctx: Context) -> list[Claim]:
    import tensorflow as tf

    factor = 4 if ctx.quick else 8  # the larger tensor has this many times the elements
    if ctx.quick:
        ctx.scaled.append(f"S5/S10: the large tensor is {factor}× [8,128,128,32], not 8×")
    x = tf.random.normal(SHAPE)
    big = tf.random.normal([SHAPE[0] * factor, *SHAPE[1:]])

    def ops(t):
        n = t.shape[0]
        return {"reshape": lambda: tf.reshape(t, [n, 128, 128 * 32]),
                "slice [: n/2] (contiguous)": lambda: t[: n // 2],
                "slice [:, ::2] (strided)": lambda: t[:, ::2],
                "transpose [0,3,1,2]": lambda: tf.transpose(t, [0, 3, 1, 2])}

    variants = {f"{name}, ×1": fn for name, fn in ops(x).items()}
    variants |= {f"{name}, ×{factor}": fn for name, fn in ops(big).items()}
    r = ctx.compare("S5_S10", variants, baseline="reshape, ×1", check_equivalence=False)

    def growth(name: str) -> float | None:
        return time_ratio(r, f"{name}, ×{factor}", f"{name}, ×1")

    # O(1): the time stays flat (≤ 2× for factor× the data); a copy's time grows with it.
    flat = Figure("O(1) (metadata only)", value=1.0, bound=2.0, higher=False,
                  neutral=float(factor))
    copies = Figure("copies every element (time ∝ size)", value=float(factor),
                    bound=factor / 2)
    unit = f"× time for {factor}× the data"
    strided = growth("slice [:, ::2] (strided)")
    return [
        ctx.claim("S5", "reshape is O(1) metadata", flat, growth("reshape"), unit,
                  f"reshape time, {factor}× the elements over ×1", using=[r]),
        ctx.claim("S5b", "contiguous slicing is O(1) metadata (a strided slice copies)", flat,
                  growth("slice [: n/2] (contiguous)"), unit,
                  f"axis-0 slice time, {factor}× the elements over ×1", using=[r],
                  details={"strided_slice_growth": strided}),
        ctx.claim("S10", "transpose [8,128,128,32] perm [0,3,1,2] copies every element",
                  copies, growth("transpose [0,3,1,2]"), unit,
                  f"transpose time, {factor}× the elements over ×1", using=[r],
                  details={"transpose_gb_per_s": _gbs(x, r["transpose [0,3,1,2], ×1"].median_s)}),
    ]


def _gbs(x, seconds: float | None) -> float | None:
    return 2 * x.shape.num_elements() * 4 / seconds / 1e9 if seconds else None
