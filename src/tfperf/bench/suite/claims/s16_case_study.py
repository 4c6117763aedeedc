"""S16–S18: the case study ladder on [64,500,128]: loop ≈800 ms, vectorised ≈25, XLA ≈12."""

from __future__ import annotations

from tfperf.bench.comparison import Variant
from tfperf.bench.suite.common import (
    DOES_NOT_HOLD,
    NOT_APPLICABLE,
    Claim,
    Context,
    failed_variants,
    ratio_verdict,
)


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
    fails = failed_variants(r)
    t_loop = r["loop"].median_s
    vec, xla = r["vectorised"], r["xla"]
    s_vec = vec.speedup
    s_xla = vec.median_s / xla.median_s if vec.median_s and xla.median_s else None
    if ctx.gpu and t_loop is not None:
        ratio = t_loop / 0.8
        v16 = NOT_APPLICABLE if 1 / 3 <= ratio <= 3 else DOES_NOT_HOLD
        w16 = (f"loop {t_loop:.3g} s here vs the article's 0.8 s on an unnamed GPU; absolute "
               "times depend on the machine")
    else:
        v16 = NOT_APPLICABLE
        w16 = ("absolute time of the article's GPU; this CPU takes "
               f"{t_loop:.3g} s" if t_loop else f"loop failed: {fails}")
    v17, w17 = ratio_verdict(s_vec, 10, "vectorised over loop (article: 800→25 ms = 32×)", fails)
    w17 += "; the [64,500,128] float32 intermediate is 16.4 MB, not the article's 4 MB"
    v18, w18 = ratio_verdict(s_xla, 1.3, "XLA over eager vectorised (article: 25→12 ms ≈ 2.1×)",
                             fails)
    return [
        Claim("S16", "nested Python loop baseline on [64,500,128]", "≈ 800 ms", t_loop * 1e3
              if t_loop else None, "ms", v16, w16),
        Claim("S17", "vectorised broadcast + reduce_sum beats the loop", "≈ 25 ms (32×)",
              s_vec, "× speedup over loop", v17, w17,
              {"vectorised_ms": vec.median_s * 1e3 if vec.median_s else None}),
        Claim("S18", "XLA fuses the three ops: faster than vectorised", "≈ 12 ms (2.1×)",
              s_xla, "× speedup over vectorised", v18, w18,
              {"xla_ms": xla.median_s * 1e3 if xla.median_s else None,
               "einsum_speedup_over_loop": r["einsum"].speedup}),
    ]
