"""S14c: XLA on a mask-heavy function can blow up memory (the article's warning, no figure)."""

from __future__ import annotations

from tfperf.bench.suite.context import Context
from tfperf.bench.suite.verdict import Claim, Figure

CLAIMS = ("S14c",)
FIGURE = Figure("mask-heavy models can blow up memory under XLA (no figure)")


def run(ctx: Context) -> list[Claim]:
    import tensorflow as tf

    from tfperf.memory.measure import call_peak

    b, h, t, d = (4, 4, 128, 32) if ctx.quick else (8, 8, 256, 64)
    q, k, v = (tf.random.normal([b, h, t, d]) for _ in range(3))
    keep = tf.random.uniform([b, t]) > 0.2  # padding mask: which keys are real

    def masked_attention(q, k, v, keep):
        scores = tf.einsum("bhqd,bhkd->bhqk", q, k) / float(d) ** 0.5
        causal = tf.linalg.band_part(tf.ones([t, t], tf.bool), -1, 0)
        mask = tf.logical_and(causal[None, None], keep[:, None, None, :])
        weights = tf.where(mask, tf.nn.softmax(tf.where(mask, scores, -1e9), -1), 0.0)
        return tf.einsum("bhqk,bhkd->bhqd", weights, v)

    graph = tf.function(masked_attention)
    xla = tf.function(masked_attention, jit_compile=True)
    r = ctx.compare("S14c", {"tf.function": graph, "tf.function(jit_compile=True)": xla},
                    (q, k, v, keep), baseline="tf.function")
    g_peak, x_peak = call_peak(graph, q, k, v, keep), call_peak(xla, q, k, v, keep)
    measured = None
    details: dict[str, object] = {"shape": [b, h, t, d]}
    unavailable = None
    if g_peak is None or x_peak is None:
        unavailable = ("the CPU allocator keeps no statistics here (oneDNN off): set "
                       "TF_CPU_ALLOCATOR_USE_BFC=1")
    else:
        measured = x_peak.above_start_bytes / max(g_peak.above_start_bytes, 1)
        details.update(graph_peak_bytes=g_peak.above_start_bytes,
                       xla_peak_bytes=x_peak.above_start_bytes)
    return [ctx.claim("S14c", "XLA on mask-heavy code can blow up memory", FIGURE, measured,
                      "× (XLA's peak over graph's)",
                      f"peak memory of a masked attention [{b},{h},{t},{t}] call, XLA over "
                      "graph", using=[r], unavailable=unavailable, details=details)]
