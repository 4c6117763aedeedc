"""S15b: mixed precision (mixed_float16) halves the activations a training step keeps."""

from __future__ import annotations

from tfperf.bench.equivalence import DEFAULT_TOLERANCES
from tfperf.bench.suite.context import Context
from tfperf.bench.suite.verdict import Claim, Figure

CLAIMS = ("S15b",)
FIGURE = Figure("halves activations (2×)", value=2.0, bound=2.0)


def run(ctx: Context) -> list[Claim]:
    import keras
    import tensorflow as tf

    from tfperf.memory.measure import held_by_kind

    width, batch = (256, 1024) if ctx.quick else (512, 4096)

    def build(policy: str) -> keras.Model:
        previous = keras.config.dtype_policy()
        keras.config.set_dtype_policy(policy)
        try:
            layers = [keras.layers.Dense(width, activation="relu") for _ in range(4)]
            return keras.Sequential([keras.Input((width,)), *layers,
                                     keras.layers.Dense(1, dtype="float32")])
        finally:
            keras.config.set_dtype_policy(previous)

    m32, m16 = build("float32"), build("mixed_float16")
    m16.set_weights(m32.get_weights())
    x, y = tf.random.normal([batch, width]), tf.random.normal([batch, 1])

    def step_for(model: keras.Model):
        @tf.function
        def step(x, y):  # the gradients a training step computes (no update: deterministic)
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean((tf.cast(model(x, training=True), tf.float32) - y) ** 2)
            grads = tape.gradient(loss, model.trainable_variables)
            return loss, tf.add_n([tf.reduce_sum(tf.abs(g)) for g in grads])
        return step

    s32, s16 = step_for(m32), step_for(m16)
    rtol, _ = DEFAULT_TOLERANCES["float16"]  # float16 compute, float32 results
    r = ctx.compare("S15b", {"float32": s32, "mixed_float16": s16}, (x, y),
                    baseline="float32", rtol=rtol)
    workdir = ctx.workdir / "S15b" if ctx.workdir else None
    # The activations a step keeps: each kind's own most bytes live at once, the same in
    # every run. What is live at the step's peak moved between runs (0.3x to 2x here).
    h32 = held_by_kind(s32, x, y, logdir=workdir / "float32" if workdir else None, batch=batch)
    h16 = held_by_kind(s16, x, y, logdir=workdir / "mixed" if workdir else None, batch=batch)
    measured = None
    unavailable = None
    details: dict[str, object] = {"width": width, "batch": batch}
    if not h32 or not h16 or not h16.most.get("activations"):
        unavailable = "the capture held no allocation events (the allocator keeps no statistics)"
    else:
        measured = h32.most.get("activations", 0) / h16.most["activations"]
        details.update(float32=h32.most, mixed_float16=h16.most,
                       step_peak_ratio=h32.at_peak["peak"] / max(h16.at_peak["peak"], 1))
    return [ctx.claim("S15b", "mixed precision halves activation memory", FIGURE, measured,
                      "× (float32's activations over mixed_float16's)",
                      f"activations (one row per sample) a training step keeps, most at once "
                      f"(4 Dense {width}, batch {batch})", using=[r], unavailable=unavailable,
                      details=details)]
