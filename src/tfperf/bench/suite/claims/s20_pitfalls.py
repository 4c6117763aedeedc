"""S20: the pitfalls. A `reduce_sum` on the wrong axis silently gives wrong results (here with the
right shape, so printing shapes would not catch it; the value check does). XLA with a None
dimension compiles again for every new length and is slower than no XLA until the inputs are
padded to a fixed length."""

from __future__ import annotations

from tfperf.bench.suite.context import Context, time_ratio
from tfperf.bench.suite.verdict import Claim, Figure

CLAIMS = ("S20", "S20b")
FIGURE = Figure("– (no figure: silently wrong)")
FIGURE_B = Figure("– (no figure: slower than no XLA)")
WRONG = "reduce_sum(axis=2): wrong axis"
WIDTH, LENGTHS = 32, 400  # row width; distinct sequence lengths, one per call


def run(ctx: Context) -> list[Claim]:
    return [_wrong_axis(ctx), _xla_lengths(ctx)]


def _wrong_axis(ctx: Context) -> Claim:
    import tensorflow as tf

    g = tf.random.Generator.from_seed(20)
    samples, weights = g.normal([16, 128, 128]), g.normal([128])  # window == dim: square

    def right(s, w):
        return tf.reduce_sum(s * tf.reshape(w, [-1, 1]), axis=1)

    def wrong(s, w):  # a plausible slip: same shape [16, 128], other numbers
        return tf.reduce_sum(s * tf.reshape(w, [-1, 1]), axis=2)

    r = ctx.compare("S20", {"reduce_sum(axis=1)": right,
                            "einsum('swd,w->sd')": lambda s, w: tf.einsum("swd,w->sd", s, w),
                            WRONG: wrong},
                    (samples, weights), baseline="reduce_sum(axis=1)", expect_different=[WRONG])
    eq = r[WRONG].equivalence
    caught = eq.tolerance_used if eq is not None and eq.equivalent is False else None
    worst = eq.worst if eq is not None else None
    shown = (f"worst element {worst.where()}: {worst.actual:.4g} vs {worst.expected:.4g}"
             if worst is not None and isinstance(worst.actual, float) else "no element shown")
    same_shape = right(samples, weights).shape == wrong(samples, weights).shape
    return ctx.claim("S20", "reduce_sum on the wrong axis silently gives wrong results", FIGURE,
                     caught, "× over tolerance (worst element)",
                     f"the wrong axis kept the shape {right(samples, weights).shape.as_list()}"
                     f" ({'same' if same_shape else 'other'} shape) and the value check caught "
                     f"it, {shown}", using=[r],
                     failures=[] if same_shape else ["the wrong axis changed the shape"],
                     details={"max_abs_err": eq.max_abs_err if eq else None,
                              "same_shape": same_shape})


def _xla_lengths(ctx: Context) -> Claim:
    import tensorflow as tf

    longest = 64 + LENGTHS
    row = tf.random.stateless_normal([1, WIDTH], seed=[2, 0])
    padded_input = tf.tile(row, [longest, 1])  # every row alike: the mean is length-free
    kernel = tf.random.stateless_normal([WIDTH, WIDTH], seed=[2, 1]) * 0.2

    def layer(x):
        return tf.tanh(tf.matmul(tf.tanh(tf.matmul(x, kernel)), kernel))

    spec = [tf.TensorSpec([None, WIDTH])]
    plain = tf.function(lambda x: tf.reduce_mean(layer(x), axis=0), input_signature=spec)
    xla = tf.function(lambda x: tf.reduce_mean(layer(x), axis=0), input_signature=spec,
                      jit_compile=True)

    @tf.function(jit_compile=True)
    def xla_padded(x, n):  # fixed [longest, WIDTH]; rows from n on are padding
        mask = tf.cast(tf.range(longest) < n, tf.float32)[:, None]
        return tf.reduce_sum(layer(x) * mask, axis=0) / tf.cast(n, tf.float32)

    def next_length(fn):
        calls = [0]

        def call():
            calls[0] += 1
            n = 64 + calls[0] % LENGTHS
            return fn(n)
        return call

    r = ctx.compare("S20b", {
        "no XLA, [None, 32]": next_length(lambda n: plain(padded_input[:n])),
        "XLA, [None, 32], a new length each call": next_length(lambda n: xla(padded_input[:n])),
        "XLA, padded to a fixed length": next_length(
            lambda n: xla_padded(padded_input, tf.constant(n))),
    }, baseline="no XLA, [None, 32]")
    padded_gain = time_ratio(r, "XLA, [None, 32], a new length each call",
                             "XLA, padded to a fixed length")
    return ctx.claim("S20b", "XLA with a None dimension recompiles per length: slower than no "
                     "XLA until padded", FIGURE_B,
                     time_ratio(r, "XLA, [None, 32], a new length each call", "no XLA, [None, 32]"),
                     "× no-XLA time", "XLA on a new length each call over no XLA", using=[r],
                     details={"padded_xla_speedup_over_unpadded": padded_gain,
                              "padded_xla_over_no_xla": time_ratio(
                                  r, "no XLA, [None, 32]", "XLA, padded to a fixed length")})
