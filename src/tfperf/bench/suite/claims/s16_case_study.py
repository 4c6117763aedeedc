"""S16–S18: the case study ladder on [64,500,128]: loop ≈800 ms, vectorised ≈25, XLA ≈12."""

from __future__ import annotations

from tfperf.bench.comparison import Variant
from tfperf.bench.suite.context import Context, speedup, time_ratio
from tfperf.bench.suite.verdict import Claim, Figure

CLAIMS = ("S16", "S17", "S18")
FIGURE_16 = Figure("≈ 800 ms", value=800.0, directional=False)
FIGURE_17 = Figure("≈ 25 ms (800 → 25 ms = 32×)", value=32.0, bound=32.0)
FIGURE_18 = Figure("≈ 12 ms (25 → 12 ms ≈ 2.1×)", value=25 / 12, bound=25 / 12)


def run(ctx: Context) -> list[Claim]:
    import tensorflow as tf

    from tfperf.examples.case_study_fixed import (
        compute_feature_tf_einsum,
        compute_feature_tf_vec,
        compute_feature_tf_xla,
    )
    from tfperf.examples.case_study_slow import compute_feature_tf_slow

    g = tf.random.Generator.from_seed(0)
    samples, weights = g.normal([64, 500, 128]), g.normal([500])
    keep = 2 if ctx.quick else None
    if keep:
        ctx.scaled.append(f"S16: the loop ran on {keep} of 64 samples, time scaled ×{64 // keep}")
    r = ctx.compare("S16_S18", [
        Variant("loop", compute_feature_tf_slow, quick_batch=keep),
        Variant("vectorised", compute_feature_tf_vec),
        Variant("tf.function", tf.function(compute_feature_tf_vec)),
        Variant("xla", compute_feature_tf_xla),
        Variant("einsum", compute_feature_tf_einsum),
    ], (samples, weights), baseline="loop")
    t_loop = r["loop"].median_s
    vec_ms = r["vectorised"].median_s
    xla_ms = r["xla"].median_s
    return [
        ctx.claim("S16", "nested Python loop baseline on [64,500,128]", FIGURE_16,
                  t_loop * 1e3 if t_loop else None, "ms", "the loop's time",
                  using=[r], unavailable="an absolute time of the article's unnamed GPU, "
                  "which this run cannot reproduce"),
        ctx.claim("S17", "vectorised broadcast + reduce_sum beats the loop", FIGURE_17,
                  speedup(r, "vectorised"), "× speedup over loop", "vectorised over loop",
                  using=[r], details={
                      "vectorised_ms": vec_ms * 1e3 if vec_ms else None,
                      "intermediate_mb": 64 * 500 * 128 * 4 / 1e6,  # the article says 4 MB
                  }),
        ctx.claim("S18", "XLA fuses the three ops: faster than vectorised", FIGURE_18,
                  time_ratio(r, "vectorised", "xla"), "× speedup over vectorised",
                  "XLA over eager vectorised", using=[r], details={
                      "xla_ms": xla_ms * 1e3 if xla_ms else None,
                      "einsum_speedup_over_loop": r["einsum"].speedup}),
    ]
