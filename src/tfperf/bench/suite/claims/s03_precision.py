"""S3/S15: float16 halves traffic and can double matmul throughput; V100 fp16 peak is 8× fp32."""

from __future__ import annotations

from tfperf.bench.equivalence import DEFAULT_TOLERANCES
from tfperf.bench.suite.context import Context, speedup
from tfperf.bench.suite.verdict import Claim, Figure

CLAIMS = ("S3", "S15")
FIGURE_S3 = Figure("2×", value=2.0, bound=2.0)
FIGURE_S15 = Figure("8× peak (V100: 112 vs 14 TFLOPS)", value=8.0, bound=8.0)


def run(ctx: Context) -> list[Claim]:
    import tensorflow as tf

    n = 2048 if ctx.gpu else (256 if ctx.quick else 512)
    a32 = tf.random.normal([n, n])
    a16, abf = tf.cast(a32, tf.float16), tf.cast(a32, tf.bfloat16)
    # All variants return float32. Their inputs are rounded to 16 bits, so they are judged
    # with bfloat16's tolerance (the least precise of them), scaled by the result's magnitude.
    rtol, atol_scale = DEFAULT_TOLERANCES["bfloat16"]
    atol = atol_scale * float(tf.reduce_max(tf.abs(tf.matmul(a32, a32))))
    r = ctx.compare("S3_S15", {"float32": lambda: tf.matmul(a32, a32),
                               "float16": lambda: tf.cast(tf.matmul(a16, a16), tf.float32),
                               "bfloat16": lambda: tf.cast(tf.matmul(abf, abf), tf.float32)},
                    baseline="float32", rtol=rtol, atol=atol)
    s16, sbf = speedup(r, "float16"), speedup(r, "bfloat16")
    no_gpu = None if ctx.gpu else "no GPU: the CPU has no half-precision matmul units"
    details = {"n": n, "bfloat16_speedup": sbf, "rtol": rtol, "atol": atol}
    return [
        ctx.claim("S3", "float16 can double matmul throughput vs float32", FIGURE_S3, s16,
                  "× (float16 over float32)", f"matmul {n}×{n} in float16 over float32",
                  using=[r], unavailable=no_gpu, details=details),
        ctx.claim("S15", "mixed precision: fp16 peak 8× fp32 (V100 tensor cores)", FIGURE_S15,
                  s16, "× (float16 over float32)", f"matmul {n}×{n} in float16 over float32",
                  using=[r], unavailable=(None if ctx.gpu else
                                          "no GPU: 112 vs 14 TFLOPS are V100 tensor-core "
                                          "peaks"), details=details),
    ]
