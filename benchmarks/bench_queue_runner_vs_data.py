"""Is a TF1 queue-runner input pipeline slower than tf.data? (recall row F036; no rule.)

    python benchmarks/bench_queue_runner_vs_data.py [--examples 20000] [--steps 200] [--budget 10]

Graph mode (tf.compat.v1), the same examples and per-example work on both sides:
`slice_input_producer` + `shuffle_batch` (one enqueue thread unless `--threads`), against
`from_tensor_slices().map().shuffle().repeat().batch()` read through a one-shot iterator.
`--heavy` adds an image's per-example work (resize, blur); `--sequential-map` turns
tf.data's automatic map parallelisation off. One call runs `--steps`
steps of a reduction over each batch in a session started once per pipeline; tfperf's
comparison core warms both up and times them in interleaved rounds (machine load hits both
alike), then prints medians, spread and the ratio queue / tf.data.
"""

from __future__ import annotations

import argparse
from typing import Any


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--examples", type=int, default=20000)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--budget", type=float, default=10.0, help="seconds of rounds")
    p.add_argument("--heavy", action="store_true",
                   help="per-example work of an image pipeline (resize to 128x128, blur)")
    p.add_argument("--threads", type=int, default=1, help="shuffle_batch's num_threads")
    p.add_argument("--sequential-map", action="store_true",
                   help="turn tf.data's map_parallelization off (as before TF made it default)")
    args = p.parse_args()

    import numpy as np
    import tensorflow as tf

    from tfperf.bench.comparison import compare

    tf1 = tf.compat.v1
    tf1.disable_eager_execution()
    rng = np.random.default_rng(0)
    x = rng.random((args.examples, 784), dtype=np.float32)
    y = rng.integers(0, 10, args.examples).astype(np.int32)

    def per_example(image, label):
        image = tf.reshape(image, [28, 28, 1]) * 2.0
        if args.heavy:
            image = tf.image.resize(image, [128, 128])
            image = tf.nn.avg_pool2d(image[None], 5, 1, "SAME")[0]
        return image, label

    def started(g: tf.Graph, out: tf.Tensor, queues: bool) -> tuple[Any, Any]:
        """A session on ``g`` (queue threads started) and a function running --steps steps."""
        sess = tf1.Session(graph=g)
        coord = tf1.train.Coordinator()
        threads = tf1.train.start_queue_runners(sess, coord=coord) if queues else []

        def steps() -> None:
            for _ in range(args.steps):
                sess.run(out)

        for _ in range(20):  # the first runs fill the queues / load the constants
            sess.run(out)

        def close() -> None:
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=5)
            sess.close()
        return steps, close

    def queue() -> tuple[Any, Any]:
        g = tf.Graph()
        with g.as_default():
            image, label = tf1.train.slice_input_producer([tf.constant(x), tf.constant(y)])
            image, label = per_example(image, label)
            images, _ = tf1.train.shuffle_batch([image, label], batch_size=args.batch,
                                                capacity=2000, min_after_dequeue=1000,
                                                num_threads=args.threads)
            return started(g, tf.reduce_sum(images), queues=True)

    def data() -> tuple[Any, Any]:
        g = tf.Graph()
        with g.as_default():
            ds = tf.data.Dataset.from_tensor_slices((x, y)).map(per_example)
            ds = ds.shuffle(1000).repeat().batch(args.batch)
            if args.sequential_map:
                options = tf.data.Options()
                options.experimental_optimization.map_parallelization = False
                ds = ds.with_options(options)
            images, _ = tf1.data.make_one_shot_iterator(ds).get_next()
            return started(g, tf.reduce_sum(images), queues=False)

    (queue_steps, close_queue), (data_steps, close_data) = queue(), data()
    try:
        # Shuffled batches differ between the two on purpose: times only.
        report = compare({"queue runners": queue_steps, "tf.data": data_steps},
                         baseline="tf.data", budget=args.budget, check_equivalence=False,
                         min_rounds=3, slow_after=60.0, call_limit=300.0)
    finally:
        close_queue()
        close_data()
    print(f"TensorFlow {tf.__version__}; one call = {args.steps} steps of a batch of "
          f"{args.batch}; speedup = tf.data time / queue-runner time")
    print(report.table())
    times = {v.name: v.median_s for v in report.variants}
    if times.get("queue runners") and times.get("tf.data"):
        print(f"queue runners / tf.data = {times['queue runners'] / times['tf.data']:.2f}x "
              "(medians)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
