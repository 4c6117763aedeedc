"""S3/S15: float16 halves traffic and can double matmul throughput; V100 fp16 peak is 8× fp32."""

from __future__ import annotations

from tfperf.bench.suite.common import (
    NOT_APPLICABLE,
    Claim,
    Context,
    failed_variants,
    ratio_verdict,
    speedup,
)


def run(ctx: Context) -> list[Claim]:
    import tensorflow as tf

    n = 2048 if ctx.gpu else (256 if ctx.quick else 512)
    a32 = tf.random.normal([n, n])
    a16, abf = tf.cast(a32, tf.float16), tf.cast(a32, tf.bfloat16)
    r = ctx.compare("S3_S15", {"float32": lambda: tf.matmul(a32, a32),
                               "float16": lambda: tf.cast(tf.matmul(a16, a16), tf.float32),
                               "bfloat16": lambda: tf.cast(tf.matmul(abf, abf), tf.float32)},
                    baseline="float32", rtol=0.05)
    s16, sbf = speedup(r, "float16"), speedup(r, "bfloat16")
    fails = failed_variants(r)
    if ctx.gpu:
        v3, why3 = ratio_verdict(s16, 1.5, f"float16 over float32 matmul {n}×{n}", fails)
        v15, why15 = ratio_verdict(s16, 2.0, "float16 over float32 on this GPU (the article's 8× "
                                   "is V100 peak)", fails)
    else:
        v3 = v15 = NOT_APPLICABLE
        shown = f"{s16:.3g}×" if s16 else "failed"
        shown_bf = f"{sbf:.3g}×" if sbf else "failed"
        why3 = (f"CPU: no half-precision matmul units are used here; float16 {shown}, "
                f"bfloat16 {shown_bf} of float32 speed ({n}×{n})")
        why15 = "the 112 vs 14 TFLOPS figures are V100 tensor-core peaks; no GPU here"
    return [
        Claim("S3", "float16 can double matmul throughput vs float32", "2×", s16,
              "× (float16 speedup)", v3, why3, {"bfloat16_speedup": sbf, "n": n}),
        Claim("S15", "mixed precision: fp16 peak 8× fp32 (V100: 112 vs 14 TFLOPS)", "8× peak",
              s16, "× (float16 speedup)", v15, why15),
    ]
