"""S19: tf.data with prefetch overlaps input production with the training step."""

from __future__ import annotations

import time

from tfperf.bench.suite.common import Claim, Context, ratio_verdict, speedup

PRODUCE_S = 0.002  # a slow producer (decoding, augmentation) per element
CONSUME_S = 0.002  # the training step per element


def run(ctx: Context) -> list[Claim]:
    import numpy as np
    import tensorflow as tf

    n = 30 if ctx.quick else 100

    def slow_item(i):
        time.sleep(PRODUCE_S)  # sleeping, not spinning: the 2 cores are not the limit
        return np.float32(i)

    def produce(i):
        return tf.numpy_function(slow_item, [i], tf.float32)

    # TF ≥ 2.13 injects a prefetch after the last map by itself; switch that off so that
    # "no prefetch" really has none.
    options = tf.data.Options()
    options.experimental_optimization.inject_prefetch = False
    base = tf.data.Dataset.range(n).map(produce)
    plain = base.with_options(options)
    prefetched = base.prefetch(tf.data.AUTOTUNE).with_options(options)

    def epoch(ds):
        def run_epoch():
            total = 0.0
            for item in ds:
                time.sleep(CONSUME_S)  # the step that consumes the element
                total += float(item)
            return np.float64(total)
        return run_epoch

    r = ctx.compare("S19", {"no prefetch": epoch(plain), "prefetch(AUTOTUNE)": epoch(prefetched)},
                    baseline="no prefetch")
    s = speedup(r, "prefetch(AUTOTUNE)")
    verdict, reason = ratio_verdict(
        s, 1.3, f"prefetch with a {PRODUCE_S * 1e3:g} ms producer and a "
        f"{CONSUME_S * 1e3:g} ms step (≤ 2× possible)")
    reason += "; the article's 25× is end to end (all rungs together), not prefetch alone"
    return [Claim("S19", "tf.data + prefetch overlaps input with compute", "≈ 25× end to end",
                  s, "× speedup from prefetch", verdict, reason, {"elements": n})]
