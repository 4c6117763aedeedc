"""Time the before/after shapes of the issue-25 rules on this machine's TensorFlow.

    python benchmarks/lint_fixes/rule_claims.py [--cases TFP109,TFP408] [--budget 2] [--small]

Each case builds the pattern a rule reports and the form its hint asks for, with tensors of
our own, and times both with tfperf's comparison core (interleaved rounds, ratio of medians;
outputs checked equal), in a ``tf.function`` and eagerly (``claims.print_before_after``).
Cases that are not one function of tensors are timed by hand, medians of several runs:

- TFP110: ``model.predict(x)`` vs ``model(x, training=False)`` vs a ``tf.function`` around
  the model, on one input, for a small and a deeper dense model (TFP111: the last two);
- TFP110b/TFP117: ``model.predict(x)`` vs ``model(x, training=False)`` on a small convnet
  (three 3x3 convolutions, MTCNN's first stage in size) for inputs of 1, 8 and 64 images of
  24x24x3, 20 calls each (a loop over image scales, Monte-Carlo samples of one block), and
  one call on 20,000 images, where ``predict`` batches (32 a step) and ``model(x)`` runs the
  whole array at once (where predict is right: large inputs);
- TFP110c: ``model.predict`` once per batch of a ``tf.data`` dataset iterated in Python, and
  once per slice of one array, vs ``model(x)`` per piece and one ``predict`` over all of it;
- TFP306jac: an eager loop taking ``tape.batch_jacobian``/``tape.jacobian`` per batch (no
  update) vs the same tape step in a ``tf.function``;
- TFP607: the second pass over a pipeline that decodes PNG files, with and without ``cache()``;
- TFP608: one pass over ``from_generator`` doing NumPy FFTs per element vs the same work in a
  parallel ``map`` with TF ops;
- TFP609: one pass of a training-like consumer (a matmul per batch) over a pipeline with
  ``prefetch`` before ``batch`` vs after it, TF's own ``inject_prefetch`` turned off (what a
  TF before 2.12 runs).
- TFP612: one pass over 16 TFRecord files (plain and GZIP; each record decoded in a parallel
  ``map``) read by one ``TFRecordDataset`` without ``num_parallel_reads`` vs with it, and
  ``list_files(...).flat_map(TFRecordDataset)`` vs ``interleave(..., num_parallel_calls=
  AUTOTUNE)``;
- TFP311: a traced training step writing scalar and histogram summaries every step vs the
  same step under ``tf.summary.record_if(step % 100 == 0)``; TFP708: TF1's ``merge_all``
  fetched with the train op every ``session.run`` vs every 100th;
- TFP312: one small traced training step (a 4-layer dense model, SGD with learning rate 0,
  so every call returns the same loss) called with ``tf.config.run_functions_eagerly(True)``
  vs as its graph, through the comparison core;
- TFP118: a DQN replay step on 32 sampled transitions (a 4-24-24-2 dense Q network),
  ``predict``/``predict``/``fit`` per sample vs the same on the stacked minibatch, and
  ``fit``, ``train_on_batch`` and ``predict`` alone, per sample vs once (also TFP110's
  replay-sample form);
- TFP111cache: a decoder whose ``past`` cache (its own output, one step longer per call)
  comes back as an argument, stepped 40 times: eager, ``tf.function(model)`` (a trace per
  step), ``reduce_retracing=True``, an ``input_signature`` with ``None`` lengths;
- TFP302inner: a wrapper method making ``@tf.function serve`` per call vs one made once vs
  the eager call (a 3-layer dense model on 64 rows, 20 calls);
- TFP116 (a tensor case): one ``tape.gradient`` per loss term, summed, vs one gradient of the
  summed loss.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from claims import print_before_after

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def _tensor_cases(tf: Any, small: bool) -> dict[str, tuple[Callable[..., Any],
                                                          Callable[..., Any], tuple[Any, ...]]]:
    s = 4 if small else 1
    out: dict[str, tuple[Callable[..., Any], Callable[..., Any], tuple[Any, ...]]] = {}

    # TFP109: a softplus per channel group of one tensor, concatenated back.
    x = tf.random.normal([256 // s, 64, 64])

    def pieces(x: Any) -> Any:
        return tf.concat([tf.math.softplus(p) * 2.0 for p in tf.split(x, 16, axis=-1)], -1)

    def whole(x: Any) -> Any:
        return tf.math.softplus(x) * 2.0
    out["TFP109"] = (pieces, whole, (x,))

    # TFP408: the logit of each row's label.
    logits = tf.random.normal([4096 // s, 1000])
    labels = tf.random.uniform([4096 // s], 0, 1000, tf.int32)

    def grid(lg: Any, lb: Any) -> Any:
        rows = tf.range(tf.shape(lg)[0])
        return tf.gather_nd(lg, tf.stack([rows, lb], axis=1))

    def batch_dims(lg: Any, lb: Any) -> Any:
        return tf.gather(lg, lb, batch_dims=1)
    out["TFP408"] = (grid, batch_dims, (logits, labels))
    big = tf.random.normal([262144 // s, 16])
    big_labels = tf.random.uniform([262144 // s], 0, 16, tf.int32)
    out["TFP408b"] = (grid, batch_dims, (big, big_labels))

    # TFP409: an embedding lookup written as a one-hot product.
    table = tf.random.normal([20000 // s, 64])
    ids = tf.random.uniform([512], 0, 20000 // s, tf.int32)

    def one_hot_matmul(t: Any, i: Any) -> Any:
        return tf.matmul(tf.one_hot(i, tf.shape(t)[0]), t)

    def gather(t: Any, i: Any) -> Any:
        return tf.gather(t, i)
    out["TFP409"] = (one_hot_matmul, gather, (table, ids))

    # TFP410: per-segment sums, one element per iteration vs one segment sum.
    n = 512 // s
    values = tf.random.normal([n])
    segs = tf.random.uniform([n], 0, 64, tf.int32)

    def per_element(v: Any, g: Any) -> Any:
        acc = tf.zeros([64])
        for i in range(n):
            acc = tf.tensor_scatter_nd_add(acc, [[g[i]]], [v[i]])
        return acc

    def segment_sum(v: Any, g: Any) -> Any:
        return tf.math.unsorted_segment_sum(v, g, 64)
    out["TFP410"] = (per_element, segment_sum, (values, segs))

    # TFP115: a bilinear product per pair of 12 fields vs once per field (DeepCTR, F071).
    fields = tf.random.normal([12, 1024 // s, 64])
    w = tf.random.normal([64, 64])

    def per_pair(f: Any, w: Any) -> Any:
        items = tf.unstack(f)
        return tf.stack([tf.tensordot(a, w, axes=(-1, 0)) * b
                         for a, b in itertools.combinations(items, 2)])

    def per_item(f: Any, w: Any) -> Any:
        items = tf.unstack(f)
        vw = [tf.tensordot(a, w, axes=(-1, 0)) for a in items]
        return tf.stack([vw[i] * items[j]
                         for i, j in itertools.combinations(range(len(items)), 2)])
    out["TFP115"] = (per_pair, per_item, (fields, w))

    # TFP403: a grid stacked batch times through a flat tile, then a batch matmul (F067).
    grid = tf.random.normal([4, 32768 // s])
    theta = tf.random.normal([16, 3, 4])

    def flat_tile(g: Any, t: Any) -> Any:
        b = tf.shape(t)[0]
        return tf.matmul(t, tf.reshape(tf.tile(tf.reshape(g, [-1]), [b]), [b, 4, -1]))

    def broadcast(g: Any, t: Any) -> Any:
        return tf.matmul(t, g)
    out["TFP403flat"] = (flat_tile, broadcast, (grid, theta))

    # TFP413: a general solve on a Cholesky factor vs the triangular solve it needs (F006 of
    # recall round 13), and a general solve of the matrix whose factor is at hand vs
    # cholesky_solve with that factor (TFP413b).
    nc = 512 // s
    spd = tf.random.normal([nc, nc])
    spd = tf.matmul(spd, spd, transpose_b=True) + nc * tf.eye(nc)
    factor = tf.linalg.cholesky(spd)
    rhs = tf.random.normal([nc, 16])

    def general_on_factor(c: Any, b: Any) -> Any:
        return tf.linalg.solve(c, b)

    def triangular(c: Any, b: Any) -> Any:
        return tf.linalg.triangular_solve(c, b, lower=True)
    out["TFP413"] = (general_on_factor, triangular, (factor, rhs))

    def general_on_matrix(a: Any, c: Any, b: Any) -> Any:
        return tf.linalg.solve(a, b)

    def with_factor(a: Any, c: Any, b: Any) -> Any:
        return tf.linalg.cholesky_solve(c, b)
    out["TFP413b"] = (general_on_matrix, with_factor, (spd, factor, rhs))

    # TFP114: tf.map_fn of an op that already takes a batch, vs one call on the whole
    # tensor: the diagonals of a batch of Cholesky factors (recall round 13's F008),
    # determinants, a softmax per row, a per-image standardisation.
    mats = tf.random.normal([1024 // s, 16, 16])

    def map_diag(m: Any) -> Any:
        return tf.map_fn(tf.linalg.diag_part, m)

    def batch_diag(m: Any) -> Any:
        return tf.linalg.diag_part(m)
    out["TFP114diag"] = (map_diag, batch_diag, (mats,))

    spd_b = tf.matmul(mats, mats, transpose_b=True) + 16.0 * tf.eye(16)

    def map_det(m: Any) -> Any:
        return tf.map_fn(tf.linalg.logdet, m)

    def batch_det(m: Any) -> Any:
        return tf.linalg.logdet(m)
    out["TFP114det"] = (map_det, batch_det, (spd_b,))

    rows = tf.random.normal([4096 // s, 100])

    def map_softmax(r: Any) -> Any:
        return tf.map_fn(tf.nn.softmax, r)

    def batch_softmax(r: Any) -> Any:
        return tf.nn.softmax(r)
    out["TFP114softmax"] = (map_softmax, batch_softmax, (rows,))

    imgs = tf.random.uniform([64 // s, 64, 64, 3])

    def map_standardize(im: Any) -> Any:
        return tf.map_fn(tf.image.per_image_standardization, im)

    def batch_standardize(im: Any) -> Any:
        return tf.image.per_image_standardization(im)
    out["TFP114image"] = (map_standardize, batch_standardize, (imgs,))

    # TFP106helper: tf.map_fn handing each affine matrix to a helper that reads it from the
    # back (held-out round 14's F001 shape: matrices to dense shift fields) vs one call.
    affines = tf.random.normal([64 // s, 3, 4])
    grid = tf.random.normal([3, 32 * 32 * 32 // s])

    def to_shift(m: Any) -> Any:
        out = m[..., :-1] @ grid + m[..., -1:]
        return tf.linalg.matrix_transpose(out - grid)

    def map_helper(m: Any) -> Any:
        return tf.map_fn(lambda a: to_shift(a), m)

    def batch_helper(m: Any) -> Any:
        return to_shift(m)
    out["TFP106helper"] = (map_helper, batch_helper, (affines,))

    # TFP116: three loss terms of one two-layer network, a gradient each vs one gradient.
    xb = tf.random.normal([512 // s, 256])
    w1 = tf.random.normal([256, 512]) * 0.05
    w2 = tf.random.normal([512, 64]) * 0.05

    def terms(x: Any, a: Any, b: Any) -> tuple[Any, Any, Any]:
        h = tf.nn.relu(tf.matmul(x, a))
        out = tf.matmul(h, b)
        return (tf.reduce_mean(out ** 2), tf.reduce_mean(tf.abs(out)),
                1e-4 * (tf.reduce_sum(a ** 2) + tf.reduce_sum(b ** 2)))

    def per_term(x: Any, a: Any, b: Any) -> Any:
        with tf.GradientTape(persistent=True) as tape:
            tape.watch([a, b])
            losses = terms(x, a, b)
        grads = [tape.gradient(term, [a, b]) for term in losses]
        return [tf.add_n([g[k] for g in grads]) for k in range(2)]

    def summed(x: Any, a: Any, b: Any) -> Any:
        with tf.GradientTape() as tape:
            tape.watch([a, b])
            loss = tf.add_n(list(terms(x, a, b)))
        return tape.gradient(loss, [a, b])
    out["TFP116"] = (per_term, summed, (xb, w1, w2))

    # TFP112: one gradient per output element in a loop vs one Jacobian (64 outputs of a
    # 256-wide input through one dense layer: the shape of a per-output sensitivity loop).
    xj = tf.random.normal([256 // s])
    wj = tf.random.normal([256 // s, 64]) * 0.05

    def per_output(x: Any, w: Any) -> Any:
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = tf.tanh(tf.linalg.matvec(w, x, transpose_a=True))
            outs = [y[i] for i in range(64)]  # sliced under the tape, as users must
        return tf.stack([tape.gradient(o, x) for o in outs])

    def jacobian(x: Any, w: Any) -> Any:
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.tanh(tf.linalg.matvec(w, x, transpose_a=True))
        return tape.jacobian(y, x)
    out["TFP112"] = (per_output, jacobian, (xj, wj))

    # TFP112b: per-example input gradients of a batch, one gradient per row vs
    # batch_jacobian of the per-row outputs (a 32-row batch, scalar output per row).
    xb2 = tf.random.normal([32, 128 // s])
    wb2 = tf.random.normal([128 // s, 1]) * 0.05

    def per_row(x: Any, w: Any) -> Any:
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = tf.tanh(tf.matmul(x, w))[:, 0]
            outs = [y[i] for i in range(32)]
        return tf.stack([tape.gradient(o, x)[i] for i, o in enumerate(outs)])

    def one_gradient(x: Any, w: Any) -> Any:
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.tanh(tf.matmul(x, w))[:, 0]
        return tape.gradient(tf.reduce_sum(y), x)  # rows independent: one gradient of the sum
    out["TFP112b"] = (per_row, one_gradient, (xb2, wb2))

    # TFP112c: per-class input gradients (saliency) of a 2-layer network on a batch of 32:
    # one gradient per output column y[:, c] vs one batch_jacobian.
    xc = tf.random.normal([32, 256 // s])
    wc1 = tf.random.normal([256 // s, 256]) * 0.05
    wc2 = tf.random.normal([256, 10]) * 0.05

    def per_class(x: Any, a: Any, b: Any) -> Any:
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = tf.matmul(tf.tanh(tf.matmul(x, a)), b)
            outs = [y[:, c] for c in range(10)]
        return tf.stack([tape.gradient(o, x) for o in outs], axis=1)

    def batch_jacobian(x: Any, a: Any, b: Any) -> Any:
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.matmul(tf.tanh(tf.matmul(x, a)), b)
        return tape.batch_jacobian(y, x)
    out["TFP112c"] = (per_class, batch_jacobian, (xc, wc1, wc2))

    # TFP112d: the per-output gradients summed (a loop accumulating g += gradient(y[i], x))
    # vs one gradient of the sum, on TFP112c's network.
    def summed_per_output(x: Any, a: Any, b: Any) -> Any:
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = tf.matmul(tf.tanh(tf.matmul(x, a)), b)
            outs = [y[:, c] for c in range(10)]
        total = tf.zeros_like(x)
        for o in outs:
            total += tape.gradient(o, x)
        return total

    def gradient_of_sum(x: Any, a: Any, b: Any) -> Any:
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.matmul(tf.tanh(tf.matmul(x, a)), b)
        return tape.gradient(tf.reduce_sum(y), x)
    out["TFP112d"] = (summed_per_output, gradient_of_sum, (xc, wc1, wc2))
    return out


def _median_time(fn: Callable[[], Any], runs: int) -> float:
    fn()  # warm-up (traces, builds)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _predict(tf: Any, small: bool) -> None:
    import numpy as np

    for depth in (2, 12):
        model = tf.keras.Sequential([tf.keras.Input((64,)),
                                     *[tf.keras.layers.Dense(256, activation="relu")
                                       for _ in range(depth)], tf.keras.layers.Dense(4)])
        _predict_one(tf, np, model, depth, 20 if small else 100)


def _predict_one(tf: Any, np: Any, model: Any, depth: int, runs: int) -> None:
    x = np.random.rand(1, 64).astype("float32")
    compiled = tf.function(lambda v: model(v, training=False))
    t_predict = _median_time(lambda: model.predict(x, verbose=0), runs)
    t_call = _median_time(lambda: model(x, training=False), runs)
    t_fn = _median_time(lambda: compiled(x), runs)
    print(f"TFP110 depth {depth}: predict {t_predict * 1e3:.2f} ms, model(x) "
          f"{t_call * 1e3:.2f} ms ({t_predict / t_call:.1f}x), tf.function(model) "
          f"{t_fn * 1e3:.2f} ms ({t_predict / t_fn:.1f}x)")
    # TFP111: the same eager call against the tf.function its hint asks for.
    print(f"TFP111 depth {depth}: model(x) {t_call * 1e3:.2f} ms, tf.function(model) "
          f"{t_fn * 1e3:.2f} ms ({t_call / t_fn:.1f}x)")


def _predict_sizes(tf: Any, small: bool) -> None:
    """TFP110b/TFP117: predict against a direct call, by input size (medians of 20-call
    loops), and one large input where predict's batching is what it is for."""
    import numpy as np

    model = tf.keras.Sequential([tf.keras.Input((24, 24, 3)),
                                 tf.keras.layers.Conv2D(10, 3, activation="relu"),
                                 tf.keras.layers.MaxPool2D(),
                                 tf.keras.layers.Conv2D(16, 3, activation="relu"),
                                 tf.keras.layers.Conv2D(32, 3, activation="relu"),
                                 tf.keras.layers.GlobalAveragePooling2D(),
                                 tf.keras.layers.Dense(2)])
    calls, runs = 20, (3 if small else 7)
    for n in (1, 8, 64):
        x = np.random.rand(n, 24, 24, 3).astype("float32")
        np.testing.assert_allclose(model.predict(x, verbose=0),
                                   model(x, training=False).numpy(), rtol=1e-4, atol=1e-5)

        def by_predict(x: Any = x) -> None:
            for _ in range(calls):
                model.predict(x, verbose=0)

        def by_call(x: Any = x) -> None:
            for _ in range(calls):
                model(x, training=False).numpy()

        tp, tc = _median_time(by_predict, runs), _median_time(by_call, runs)
        print(f"TFP110b/TFP117: {calls} calls on {n} image(s): predict {tp * 1e3:.1f} ms, "
              f"model(x) {tc * 1e3:.1f} ms ({tp / tc:.1f}x)")
    big = np.random.rand(2000 if small else 20000, 24, 24, 3).astype("float32")
    tp = _median_time(lambda: model.predict(big, batch_size=32, verbose=0), 3)
    tk = _median_time(lambda: model.predict(big, batch_size=1024, verbose=0), 3)
    tc = _median_time(lambda: model(big, training=False).numpy(), 3)
    print(f"TFP110b/TFP117: one call on {len(big)} images: predict 32 a step "
          f"{tp * 1e3:.0f} ms ({tp / tc:.2f}x), 1024 a step {tk * 1e3:.0f} ms "
          f"({tk / tc:.2f}x), model(x) at once {tc * 1e3:.0f} ms (it holds every "
          f"activation of the whole array at once: predict bounds that memory)")


def _predict_loop_pieces(tf: Any, small: bool) -> None:
    """TFP110c: ``model.predict`` once per iteration of a Python loop on a piece of data
    that is already a batch: each batch of a ``tf.data`` dataset (an evaluation or
    inference loop), and each slice ``x[start:stop]`` of one array (a segmenter's
    segments), against ``model(x, training=False)`` per piece and one ``predict`` over all
    of it (the dataset itself; the whole array, then the predictions sliced). The small
    convnet of TFP110b; medians of whole passes."""
    import numpy as np

    model = tf.keras.Sequential([tf.keras.Input((24, 24, 3)),
                                 tf.keras.layers.Conv2D(10, 3, activation="relu"),
                                 tf.keras.layers.MaxPool2D(),
                                 tf.keras.layers.Conv2D(16, 3, activation="relu"),
                                 tf.keras.layers.Conv2D(32, 3, activation="relu"),
                                 tf.keras.layers.GlobalAveragePooling2D(),
                                 tf.keras.layers.Dense(2)])
    runs = 3 if small else 5
    rng = np.random.default_rng(0)
    x = rng.random((640, 24, 24, 3), dtype=np.float32)
    for bs in (32, 128):
        ds = tf.data.Dataset.from_tensor_slices(x).batch(bs)

        def per_batch(ds: Any = ds) -> Any:
            return np.concatenate([model.predict(b, verbose=0) for b in ds])

        def call_per_batch(ds: Any = ds) -> Any:
            return np.concatenate([model(b, training=False).numpy() for b in ds])

        def one_predict(ds: Any = ds) -> Any:
            return model.predict(ds, verbose=0)

        np.testing.assert_allclose(per_batch(), one_predict(), rtol=1e-4, atol=1e-5)
        tp, tc, to = (_median_time(f, runs) for f in (per_batch, call_per_batch, one_predict))
        print(f"TFP110c dataset of {len(x) // bs} batches of {bs}: predict per batch "
              f"{tp * 1e3:.0f} ms, model(x) per batch {tc * 1e3:.0f} ms ({tp / tc:.1f}x), "
              f"one predict(dataset) {to * 1e3:.0f} ms ({tp / to:.1f}x)")
    # Segments of uneven length cut from one array (inaSpeechSegmenter's shape).
    cuts = np.sort(rng.choice(np.arange(1, len(x)), 39, replace=False))
    bounds = list(zip([0, *cuts], [*cuts, len(x)], strict=True))

    def per_slice() -> Any:
        return [model.predict(x[a:b], verbose=0) for a, b in bounds]

    def one_then_split() -> Any:
        out = model.predict(x, verbose=0)
        return [out[a:b] for a, b in bounds]

    for u, v in zip(per_slice(), one_then_split(), strict=True):
        np.testing.assert_allclose(u, v, rtol=1e-4, atol=1e-5)
    tp, to = _median_time(per_slice, runs), _median_time(one_then_split, runs)
    print(f"TFP110c {len(bounds)} slices of one {len(x)}-image array: predict per slice "
          f"{tp * 1e3:.0f} ms, one predict then slices {to * 1e3:.0f} ms ({tp / to:.1f}x)")


def _jacobian_per_batch(tf: Any, small: bool) -> None:
    """TFP306jac: an eager loop over batches taking ``tape.batch_jacobian`` (and
    ``tape.jacobian``) of a small encoder's output per batch, no weight update (sfaira's
    gradients-to-input), against the same tape step in a ``tf.function`` made once; medians
    of whole passes over 10 batches of 64 rows."""
    import numpy as np

    enc = tf.keras.Sequential([tf.keras.Input((32,)), tf.keras.layers.Dense(64, activation="tanh"),
                               tf.keras.layers.Dense(8)])
    rng = np.random.default_rng(0)
    batches = [tf.constant(rng.random((64, 32), dtype=np.float32)) for _ in range(10)]

    def step(x: Any, full: bool) -> Any:
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = enc(x)
        return tape.jacobian(y, x) if full else tape.batch_jacobian(y, x)

    for full, name in ((False, "batch_jacobian"), (True, "jacobian")):
        compiled = tf.function(lambda x, full=full: step(x, full))

        def eager(full: bool = full) -> Any:
            return [step(x, full).numpy() for x in batches]

        def graph(compiled: Any = compiled) -> Any:
            return [compiled(x).numpy() for x in batches]

        for u, v in zip(eager(), graph(), strict=True):
            np.testing.assert_allclose(u, v, rtol=1e-4, atol=1e-5)
        runs = 3 if small else 5
        te, tg = _median_time(eager, runs), _median_time(graph, runs)
        print(f"TFP306jac {name} per batch, 10 batches of 64: eager {te * 1e3:.0f} ms, "
              f"in a tf.function {tg * 1e3:.0f} ms ({te / tg:.1f}x)")


def _replay(tf: Any, small: bool) -> None:
    """TFP118 (and TFP110 on a replay sample): one DQN replay step on a minibatch of 32
    sampled transitions, per sample (two predicts and a fit on each) against batched (two
    predicts and one fit on the stacked minibatch), and each part alone; medians."""
    import numpy as np

    def net() -> Any:
        m = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(24, activation="relu"),
                                 tf.keras.layers.Dense(24, activation="relu"),
                                 tf.keras.layers.Dense(2)])
        m.compile(loss="mse", optimizer=tf.keras.optimizers.Adam(1e-3))
        return m

    model, n, runs = net(), 32, (3 if small else 5)
    rng = np.random.default_rng(0)
    batch = [(rng.random((1, 4), dtype=np.float32), int(rng.integers(2)), 1.0,
              rng.random((1, 4), dtype=np.float32), False) for _ in range(n)]

    def per_sample() -> None:
        for state, action, reward, next_state, _done in batch:
            target = reward + 0.95 * np.amax(model.predict(next_state, verbose=0)[0])
            target_f = model.predict(state, verbose=0)
            target_f[0][action] = target
            model.fit(state, target_f, epochs=1, verbose=0)

    states = np.vstack([b[0] for b in batch])
    nexts = np.vstack([b[3] for b in batch])

    def batched() -> None:
        q_next = model.predict(nexts, verbose=0)
        targets = model.predict(states, verbose=0)
        for i, (_, action, reward, _, _) in enumerate(batch):
            targets[i][action] = reward + 0.95 * np.amax(q_next[i])
        model.fit(states, targets, batch_size=n, epochs=1, verbose=0)

    def fit_each() -> None:
        for state, *_ in batch:
            model.fit(state, np.zeros((1, 2), np.float32), epochs=1, verbose=0)

    def fit_once() -> None:
        model.fit(states, np.zeros((n, 2), np.float32), batch_size=n, epochs=1, verbose=0)

    def tob_each() -> None:
        for state, *_ in batch:
            model.train_on_batch(state, np.zeros((1, 2), np.float32))

    def tob_once() -> None:
        model.train_on_batch(states, np.zeros((n, 2), np.float32))

    def predict_each() -> None:
        for state, *_ in batch:
            model.predict(state, verbose=0)

    def predict_once() -> None:
        model.predict(states, verbose=0)

    for name, before, after in (("replay step", per_sample, batched),
                                ("fit", fit_each, fit_once),
                                ("train_on_batch", tob_each, tob_once),
                                ("predict", predict_each, predict_once)):
        before(), after()  # build the train/predict functions before timing
        tb, ta = _median_time(before, runs), _median_time(after, runs)
        print(f"TFP118/TFP110 {name}: per sample x{n} {tb * 1e3:.0f} ms, once on the "
              f"stacked {n} {ta * 1e3:.1f} ms ({tb / ta:.1f}x)")
    # Where the gain shrinks: an Atari-size convnet (84x84x4 frames, DQN's), whose own
    # compute per example is large next to the per-call set-up.
    conv = tf.keras.Sequential([tf.keras.Input((84, 84, 4)),
                                tf.keras.layers.Conv2D(32, 8, strides=4, activation="relu"),
                                tf.keras.layers.Conv2D(64, 4, strides=2, activation="relu"),
                                tf.keras.layers.Conv2D(64, 3, activation="relu"),
                                tf.keras.layers.Flatten(),
                                tf.keras.layers.Dense(512, activation="relu"),
                                tf.keras.layers.Dense(4)])
    conv.compile(loss="mse", optimizer=tf.keras.optimizers.Adam(1e-4))
    frames = rng.random((n, 84, 84, 4), dtype=np.float32)
    zeros = np.zeros((n, 4), np.float32)
    for name, before, after in (
            ("train_on_batch, 84x84x4 convnet",
             lambda: [conv.train_on_batch(frames[i:i + 1], zeros[i:i + 1]) for i in range(n)],
             lambda: conv.train_on_batch(frames, zeros)),
            ("model(x), 84x84x4 convnet",
             lambda: [conv(frames[i:i + 1], training=False) for i in range(n)],
             lambda: conv(frames, training=False))):
        before(), after()
        tb, ta = _median_time(before, runs), _median_time(after, runs)
        print(f"TFP118/TFP110 {name}: per sample x{n} {tb * 1e3:.0f} ms, once on the "
              f"stacked {n} {ta * 1e3:.1f} ms ({tb / ta:.1f}x)")


def _cache(tf: Any, small: bool) -> None:
    import numpy as np

    n = 64 if small else 256
    with tempfile.TemporaryDirectory() as d:
        paths = []
        for i in range(n):
            img = tf.constant(np.random.randint(0, 255, (128, 128, 3), dtype=np.uint8))
            p = os.path.join(d, f"{i}.png")
            tf.io.write_file(p, tf.io.encode_png(img))
            paths.append(p)

        def load(p: Any) -> Any:
            return tf.image.resize(tf.image.decode_png(tf.io.read_file(p)), (96, 96))

        base = tf.data.Dataset.from_tensor_slices(paths).map(load)
        for name, ds in (("no cache", base.batch(32)), ("cache", base.cache().batch(32))):
            for _ in ds:  # the first pass (fills the cache)
                pass
            t = _median_time(lambda ds=ds: [None for _ in ds], 3 if small else 5)
            print(f"TFP607 {name}: a later epoch {t * 1e3:.1f} ms")


def _generator(tf: Any, small: bool) -> None:
    import numpy as np

    n, size = (128, 4096) if small else (512, 16384)
    data = np.random.rand(n, size).astype("float32")

    def gen() -> Any:
        for row in data:
            yield np.abs(np.fft.rfft(row)).astype("float32")

    slow = tf.data.Dataset.from_generator(
        gen, output_signature=tf.TensorSpec([size // 2 + 1], tf.float32))
    fast = tf.data.Dataset.from_tensor_slices(data).map(
        lambda r: tf.abs(tf.signal.rfft(r)), num_parallel_calls=tf.data.AUTOTUNE)
    t_slow = _median_time(lambda: [None for _ in slow.batch(32)], 3)
    t_fast = _median_time(lambda: [None for _ in fast.batch(32)], 3)
    print(f"TFP608: from_generator {t_slow * 1e3:.1f} ms, parallel map {t_fast * 1e3:.1f} ms "
          f"({t_slow / t_fast:.1f}x)")


def _prefetch_order(tf: Any, small: bool) -> None:
    n = 2048 if small else 8192
    x = tf.random.normal([n, 64])
    w = tf.random.normal([64, 512])
    options = tf.data.Options()
    options.experimental_optimization.inject_prefetch = False

    @tf.function
    def step(batch: Any) -> Any:
        return tf.reduce_sum(tf.matmul(tf.tanh(tf.matmul(batch, w)), w, transpose_b=True))

    base = tf.data.Dataset.from_tensor_slices(x).map(lambda e: tf.sin(e) * 2.0)
    before = base.prefetch(tf.data.AUTOTUNE).batch(64).with_options(options)
    after = base.batch(64).prefetch(tf.data.AUTOTUNE).with_options(options)
    times = {}
    for name, ds in (("prefetch before batch", before), ("batch then prefetch", after)):
        times[name] = _median_time(lambda ds=ds: [step(b) for b in ds], 3 if small else 5)
    a, b = times["prefetch before batch"], times["batch then prefetch"]
    print(f"TFP609: prefetch before batch {a * 1e3:.1f} ms, batch then prefetch "
          f"{b * 1e3:.1f} ms a pass ({a / b:.2f}x)")


def _tfrecords(tf: Any, small: bool) -> None:
    import numpy as np

    n_files, per_file = 16, (256 if small else 1024)
    with tempfile.TemporaryDirectory() as d:
        for compression in ("", "GZIP"):
            options = tf.io.TFRecordOptions(compression_type=compression or None)
            files = []
            for i in range(n_files):
                p = os.path.join(d, f"{compression or 'plain'}-{i}.tfrecord")
                with tf.io.TFRecordWriter(p, options) as w:
                    for _ in range(per_file):
                        w.write(np.random.rand(1024).astype("float32").tobytes())
                files.append(p)
            kind = compression or "plain"
            serial = tf.data.TFRecordDataset(files, compression_type=compression)
            parallel = tf.data.TFRecordDataset(files, compression_type=compression,
                                               num_parallel_reads=tf.data.AUTOTUNE)
            names = tf.data.Dataset.from_tensor_slices(files)

            def open_one(f: Any, c: str = compression) -> Any:
                return tf.data.TFRecordDataset(f, compression_type=c)
            flat = names.flat_map(open_one)
            inter = names.interleave(open_one, cycle_length=tf.data.AUTOTUNE,
                                     num_parallel_calls=tf.data.AUTOTUNE)
            def decode(r: Any) -> Any:  # the parse a training pipeline runs after reading
                return tf.reduce_sum(tf.io.decode_raw(r, tf.float32))
            runs = 3 if small else 5
            t = {name: _median_time(lambda ds=ds: [None for _ in ds.map(
                     decode, num_parallel_calls=tf.data.AUTOTUNE).batch(256)], runs)
                 for name, ds in (("serial", serial), ("parallel", parallel),
                                  ("flat_map", flat), ("interleave", inter))}
            print(f"TFP612 {kind}: TFRecordDataset(files) {t['serial'] * 1e3:.1f} ms, "
                  f"num_parallel_reads {t['parallel'] * 1e3:.1f} ms "
                  f"({t['serial'] / t['parallel']:.2f}x); flat_map {t['flat_map'] * 1e3:.1f} ms, "
                  f"parallel interleave {t['interleave'] * 1e3:.1f} ms "
                  f"({t['flat_map'] / t['interleave']:.2f}x)")


def _summaries(tf: Any, small: bool) -> None:
    steps = 100 if small else 300
    model = tf.keras.Sequential([tf.keras.Input((128,)),
                                 *[tf.keras.layers.Dense(256, activation="relu")
                                   for _ in range(4)], tf.keras.layers.Dense(10)])
    opt = tf.keras.optimizers.SGD(0.01)
    x = tf.random.normal([64, 128])
    y = tf.random.uniform([64], 0, 10, tf.int64)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def make_step(every_n: int) -> Callable[[Any], Any]:
        @tf.function
        def step(i: Any) -> Any:
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables, strict=True))
            # tf.summary.write (TF's own op: scalar/histogram need TensorBoard, not installed
            # here); a histogram of each weight and gradient as histogram() would write.
            with tf.summary.record_if(i % every_n == 0):
                tf.summary.write("loss", loss, step=i)
                for k, (v, g) in enumerate(zip(model.trainable_variables, grads, strict=True)):
                    for tag, t in ((f"w{k}", v), (f"g{k}", g)):
                        lo, hi = tf.reduce_min(t), tf.reduce_max(t)
                        tf.summary.write(tag, tf.histogram_fixed_width(t, [lo, hi + 1e-6], 30),
                                         step=i)
            return loss
        return step

    with tempfile.TemporaryDirectory() as d:
        writer = tf.summary.create_file_writer(d)

        def run(step: Callable[[Any], Any]) -> None:
            with writer.as_default():
                for i in range(steps):
                    step(tf.constant(i, tf.int64))
            writer.flush()
        every, guarded = make_step(1), make_step(100)
        t_every = _median_time(lambda: run(every), 3)
        t_guard = _median_time(lambda: run(guarded), 3)
    print(f"TFP311: summaries every step {t_every / steps * 1e3:.2f} ms a step, "
          f"under record_if(every 100) {t_guard / steps * 1e3:.2f} ms a step "
          f"({t_every / t_guard:.2f}x)")


def _merge_all(tf: Any, small: bool) -> None:
    """TF1: ``merge_all`` fetched with the train op every step and added to the writer, vs
    every 100th step (the summaries of four dense layers' weights and the loss)."""
    import numpy as np

    v1 = tf.compat.v1
    steps = 100 if small else 300
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [64, 128])
        h = x
        for k in range(4):
            w = v1.get_variable(f"w{k}", [h.shape[-1], 256])
            h = tf.nn.relu(tf.matmul(h, w))
            v1.summary.histogram(f"w{k}", w)
        loss = tf.reduce_mean(h ** 2)
        v1.summary.scalar("loss", loss)
        train = v1.train.GradientDescentOptimizer(0.01).minimize(loss)
        merged = v1.summary.merge_all()
        init = v1.global_variables_initializer()
    feed = {x: np.random.rand(64, 128).astype("float32")}
    with tempfile.TemporaryDirectory() as d, v1.Session(graph=graph) as sess:
        writer = v1.summary.FileWriter(d)
        sess.run(init)

        def run(every: int) -> None:
            for i in range(steps):
                if i % every == 0:
                    _, s = sess.run([train, merged], feed)
                    writer.add_summary(s, i)
                else:
                    sess.run(train, feed)
            writer.flush()
        t_every = _median_time(lambda: run(1), 3)
        t_guard = _median_time(lambda: run(100), 3)
        writer.close()
    print(f"TFP708: merge_all every step {t_every / steps * 1e3:.2f} ms a step, "
          f"every 100 steps {t_guard / steps * 1e3:.2f} ms a step ({t_every / t_guard:.2f}x)")


def _forced_eager(tf: Any, small: bool) -> None:
    """TFP312: the same ``tf.function`` train step run with functions forced eager (the
    switch set around each call: it is a global, read when the function is called) and
    as its traced graph."""
    from tfperf.bench.comparison import compare

    width = 64 if small else 256
    model = tf.keras.Sequential([tf.keras.Input((128,)),
                                 *[tf.keras.layers.Dense(width, activation="relu")
                                   for _ in range(4)], tf.keras.layers.Dense(10)])
    opt = tf.keras.optimizers.SGD(0.0)  # updates run, weights stay: outputs comparable
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    x = tf.random.normal([64, 128])
    y = tf.random.uniform([64], 0, 10, tf.int64)

    @tf.function
    def step(x: Any, y: Any) -> Any:
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss

    def forced(x: Any, y: Any) -> Any:
        tf.config.run_functions_eagerly(True)
        try:
            return step(x, y)
        finally:
            tf.config.run_functions_eagerly(False)

    report = compare({"forced_eager": forced, "graph": step}, (x, y), baseline="graph",
                     budget=4.0 if small else 8.0, rtol=1e-4, atol=1e-4)
    times = {v.name: v.median_s for v in report.variants}
    tb, ta = times.get("forced_eager"), times.get("graph")
    if tb and ta:
        print(f"TFP312: train step forced eager {tb * 1e3:.2f} ms, as a graph "
              f"{ta * 1e3:.2f} ms ({tb / ta:.2f}x)")
    else:
        print(f"TFP312: {report.table()}")


def _built_per_call(tf: Any, small: bool) -> None:
    """TFP119: a function run per step that builds its Keras model (or layer, or optimizer)
    and uses it once, vs the same object built once and reused (50 calls, one input batch
    of 32x64; medians of 5 runs of the 50 calls)."""
    import numpy as np
    calls = 10 if small else 50
    x = tf.constant(np.random.rand(32, 64).astype("float32"))

    def make() -> Any:
        return tf.keras.Sequential([tf.keras.Input((64,)), tf.keras.layers.Dense(128, "relu"),
                                    tf.keras.layers.Dense(10)])
    kept = make()

    def model_each() -> None:
        for _ in range(calls):
            make()(x)

    def model_once() -> None:
        for _ in range(calls):
            kept(x)
    layer = tf.keras.layers.Dense(128)

    def layer_each() -> None:
        for _ in range(calls):
            tf.keras.layers.Dense(128)(x)

    def layer_once() -> None:
        for _ in range(calls):
            layer(x)
    w = tf.Variable(tf.zeros([64, 10]))
    opt = tf.keras.optimizers.Adam(1e-3)

    def step(o: Any) -> None:
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.matmul(x, w) ** 2)
        o.apply_gradients([(tape.gradient(loss, w), w)])

    def opt_each() -> None:
        for _ in range(calls):
            step(tf.keras.optimizers.Adam(1e-3))

    def opt_once() -> None:
        for _ in range(calls):
            step(opt)
    for name, each, once in (("model", model_each, model_once),
                             ("layer", layer_each, layer_once),
                             ("optimizer", opt_each, opt_once)):
        tb, ta = _median_time(each, 5), _median_time(once, 5)
        print(f"TFP119 {name}: built per call {tb / calls * 1e3:.2f} ms a call, built once "
              f"{ta / calls * 1e3:.2f} ms a call ({tb / ta:.1f}x)")
    traced_step = tf.function(lambda v: kept(v))

    def fn_model_each() -> None:
        for _ in range(calls // 5):
            m = make()
            tf.function(lambda v: m(v))(x)  # noqa: B023 (called in this iteration)

    def fn_model_once() -> None:
        for _ in range(calls // 5):
            traced_step(x)
    tb, ta = _median_time(fn_model_each, 3), _median_time(fn_model_once, 3)
    print(f"TFP119 model traced per call: {tb / (calls // 5) * 1e3:.1f} ms a call, built and "
          f"traced once {ta / (calls // 5) * 1e3:.2f} ms a call ({tb / ta:.0f}x)")


def _big_constant(tf: Any, small: bool) -> None:
    """TFP313: a ``tf.function`` that closes over (or ``tf.constant``s) a NumPy array, vs the
    array made a tensor once outside and captured by reference: time of the first call
    (trace included), of later calls, of 4 retraces (new input shapes), and GraphDef size."""
    import numpy as np
    for n in ((256, 1024) if small else (256, 1024, 4096)):
        big = np.random.rand(n, n).astype("float32")
        kept = tf.constant(big)

        def timings(make: Callable[[], Any]) -> tuple[float, float, float, int]:
            f = make()
            t0 = time.perf_counter()
            f(tf.ones([1, n]))  # noqa: B023 (called in this iteration)
            first = time.perf_counter() - t0
            later = _median_time(lambda: f(tf.ones([1, n])), 20)  # noqa: B023 (called in this iteration)
            t0 = time.perf_counter()
            for rows in (2, 3, 4, 5):
                f(tf.ones([rows, n]))  # noqa: B023 (called in this iteration)
            retr = (time.perf_counter() - t0) / 4
            size = f.get_concrete_function(tf.TensorSpec([1, n])).graph.as_graph_def().ByteSize()  # noqa: B023 (called in this iteration)
            return first, later, retr, size

        def closure() -> Any:
            return tf.function(lambda v: tf.matmul(v, big))  # noqa: B023 (called in this iteration)

        def constant() -> Any:
            return tf.function(lambda v: tf.matmul(v, tf.constant(big)))  # noqa: B023 (called in this iteration)

        def captured() -> Any:
            return tf.function(lambda v: tf.matmul(v, kept))  # noqa: B023 (called in this iteration)
        base = timings(captured)
        for name, make in (("closure over the array", closure),
                           ("tf.constant(array) inside", constant)):
            b = timings(make)
            print(f"TFP313 {n}x{n} float32 ({big.nbytes / 2**20:.0f} MiB), {name}: first "
                  f"call {b[0] * 1e3:.1f} ms vs {base[0] * 1e3:.1f} ms ({b[0] / base[0]:.1f}x), "
                  f"a retrace {b[2] * 1e3:.1f} ms vs {base[2] * 1e3:.1f} ms "
                  f"({b[2] / base[2]:.1f}x), later calls {b[1] * 1e3:.2f} ms vs "
                  f"{base[1] * 1e3:.2f} ms, GraphDef {b[3] / 2**20:.1f} MiB vs "
                  f"{base[3] / 2**10:.1f} KiB")


def _list_of_arrays(tf: Any, small: bool) -> None:
    """TFP208: ``tf.convert_to_tensor`` / ``tf.constant`` of a Python list of NumPy arrays
    (a batch gathered per example) vs the same list stacked by NumPy first; and a list of
    Python floats vs ``np.asarray`` first. Medians of 20 calls."""
    import numpy as np
    for n, shape in ((32, (28, 28)), (256, (28, 28)), (64, (64, 64, 3))):
        items = [np.random.rand(*shape).astype("float32") for _ in range(n // (4 if small else 1))]
        for name, conv in (("convert_to_tensor", tf.convert_to_tensor), ("constant", tf.constant)):
            ta = _median_time(lambda: conv(items), 20)  # noqa: B023 (called in this iteration)
            tb = _median_time(lambda: conv(np.stack(items)), 20)  # noqa: B023 (called in this iteration)
            print(f"TFP208 tf.{name} of a list of {len(items)} {shape} float32 arrays "
                  f"{ta * 1e3:.2f} ms vs np.stack first {tb * 1e3:.2f} ms ({ta / tb:.1f}x)")
    # Review 43: short vectors (boxes, states) are the scalars' case, not reported.
    for n, shape in ((64, (4,)), (64, (16,))):
        items = [np.random.rand(*shape).astype("float32") for _ in range(n)]
        ta = _median_time(lambda: tf.constant(items), 20)  # noqa: B023 (called in this iteration)
        tb = _median_time(lambda: tf.constant(np.stack(items)), 20)  # noqa: B023 (called in this iteration)
        print(f"TFP208 (not reported) tf.constant of a list of {n} {shape} float32 vectors "
              f"{ta * 1e3:.3f} ms vs np.stack first {tb * 1e3:.3f} ms ({ta / tb:.1f}x)")
    floats = [float(v) for v in np.random.rand(100_000 // (4 if small else 1))]
    ta = _median_time(lambda: tf.convert_to_tensor(floats), 20)
    tb = _median_time(lambda: tf.convert_to_tensor(np.asarray(floats, "float32")), 20)
    print(f"TFP208 (not reported) a list of {len(floats)} Python floats {ta * 1e3:.2f} ms vs "
          f"np.asarray first {tb * 1e3:.2f} ms ({ta / tb:.1f}x)")


def _full_trace(tf: Any, small: bool) -> None:
    """TFP709: TF1 ``session.run`` of a train step with ``RunOptions(FULL_TRACE)`` and a
    ``RunMetadata`` on every step vs plain (four 256-wide dense layers on 32 inputs, SGD
    with learning rate 0; 50 steps, medians of 5). Runs in a graph of its own."""
    import numpy as np
    tf1 = tf.compat.v1
    steps = 10 if small else 50
    graph = tf.Graph()
    with graph.as_default():
        x = tf1.placeholder(tf.float32, [32, 256])
        h = x
        for k in range(4):
            h = tf.nn.relu(tf.matmul(h, tf1.get_variable(f"w{k}", [256, 256])))
        loss = tf.reduce_mean(h ** 2)
        train = tf1.train.GradientDescentOptimizer(0.0).minimize(loss)
        init = tf1.global_variables_initializer()
    xs = np.random.rand(32, 256).astype("float32")
    with tf1.Session(graph=graph) as sess:
        sess.run(init)
        opts = tf1.RunOptions(trace_level=tf1.RunOptions.FULL_TRACE)

        def plain() -> None:
            for _ in range(steps):
                sess.run(train, {x: xs})

        def traced() -> None:
            for _ in range(steps):
                sess.run(train, {x: xs}, options=opts, run_metadata=tf1.RunMetadata())
        ta, tb = _median_time(plain, 5), _median_time(traced, 5)
    print(f"TFP709: FULL_TRACE every run {tb / steps * 1e3:.2f} ms a step, plain "
          f"{ta / steps * 1e3:.2f} ms a step ({tb / ta:.2f}x)")


def _growing_cache(tf: Any, small: bool) -> None:
    """TFP111cache: a decoder stepped 40 times, its ``past`` cache (the call's own output,
    one step longer each time) passed back in: eager vs ``tf.function(model)`` (a new
    shape per step: a trace per call) vs ``reduce_retracing=True`` vs an ``input_signature``
    with ``None`` lengths. Medians of 3 runs of 40 steps; traces counted."""
    class Dec(tf.keras.Model):
        def __init__(self) -> None:
            super().__init__()
            self.emb = tf.keras.layers.Embedding(100, 32)
            self.out = tf.keras.layers.Dense(100)

        def call(self, prev: Any, past: Any) -> Any:
            kv = tf.concat([past, self.emb(prev)], axis=1)  # one step longer per call
            return self.out(tf.reduce_mean(kv, axis=1, keepdims=True)), kv

    model = Dec()
    traces = [0]

    def counted(prev: Any, past: Any) -> Any:
        traces[0] += 1
        return model(prev, past)
    sig = [tf.TensorSpec([1, None], tf.int32), tf.TensorSpec([1, None, 32], tf.float32)]
    steps = 10 if small else 40
    for label, make in (
            ("eager", lambda: model),
            ("tf.function(model)", lambda: tf.function(counted)),
            ("reduce_retracing=True", lambda: tf.function(counted, reduce_retracing=True)),
            ("input_signature", lambda: tf.function(counted, input_signature=sig))):
        runs = []
        for _ in range(3):
            fn, traces[0] = make(), 0  # a fresh function each run: its traces count
            prev = tf.constant([[3, 4, 5]])
            past = tf.zeros([1, 1, 32])
            t0 = time.perf_counter()
            for _ in range(steps):
                logits, past = fn(prev, past)
                prev = tf.constant([[int(tf.argmax(logits[0, -1]))]])
            runs.append(time.perf_counter() - t0)
        print(f"TFP111cache {label}: {statistics.median(runs):.3f} s for {steps} steps, "
              f"{traces[0]} traces")


def _inner_tf_function(tf: Any, small: bool) -> None:
    """TFP302inner: a wrapper's ``predict_proba`` that makes ``@tf.function serve`` inside
    the method (a trace per call) vs one made once, vs the eager model call; a 3-layer dense
    model on 64 rows, 20 calls each, medians of 3 runs."""
    import numpy as np
    model = tf.keras.Sequential([tf.keras.Input((32,)),
                                 *[tf.keras.layers.Dense(128, activation="relu")
                                   for _ in range(3)], tf.keras.layers.Dense(4)])
    x = np.random.rand(64, 32).astype("float32")
    once = tf.function(lambda v: model(v, training=False))

    def per_call() -> Any:
        @tf.function
        def serve(v: Any) -> Any:
            return model(v, training=False)
        return serve(x).numpy()
    calls = 5 if small else 20
    times = {}
    for label, fn in (("inner tf.function per call", per_call),
                      ("tf.function made once", lambda: once(x).numpy()),
                      ("eager model(x)", lambda: model(x, training=False).numpy())):
        times[label] = _median_time(lambda f=fn: [f() for _ in range(calls)], 3) / calls
    base = times["inner tf.function per call"]
    print("TFP302inner: " + ", ".join(f"{k} {v * 1e3:.2f} ms a call ({base / v:.1f}x)"
                                      for k, v in times.items()))


def _keras_call_in_eager_step(tf: Any, small: bool) -> None:
    """TFP314: a Keras ``Model`` subclass whose ``call`` is a loss of many small ops (a
    detector's loss: grids, IoUs, masks), called by an eager GradientTape loop step after
    step: eager, vs its ``call`` compiled with ``tf.function`` (what the fixes did), vs the
    whole step compiled (TFP306's advice). A small conv net on 8 images of 32x32, medians of
    3 runs of 20 steps (5 with ``--small``)."""
    import numpy as np

    class BoxLoss(tf.keras.Model):  # about 40 ops a call, like a YOLO loss on one scale
        def call(self, pred, target):
            xy, wh, conf = pred[..., :2], pred[..., 2:4], pred[..., 4]
            txy, twh, tconf = target[..., :2], target[..., 2:4], target[..., 4]
            lo = tf.maximum(xy - wh / 2, txy - twh / 2)
            hi = tf.minimum(xy + wh / 2, txy + twh / 2)
            inter = tf.reduce_prod(tf.maximum(hi - lo, 0.0), axis=-1)
            union = tf.reduce_prod(wh, -1) + tf.reduce_prod(twh, -1) - inter
            iou = inter / (union + 1e-9)
            mask = tf.cast(tconf > 0.5, tf.float32)
            ignore = tf.cast(iou < 0.5, tf.float32) * (1.0 - mask)
            xy_loss = tf.reduce_sum(mask * tf.reduce_sum(tf.square(xy - txy), -1))
            wh_loss = tf.reduce_sum(mask * tf.reduce_sum(tf.square(tf.sqrt(tf.abs(wh))
                                                                   - tf.sqrt(tf.abs(twh))), -1))
            bce = tf.keras.backend.binary_crossentropy(tconf, tf.sigmoid(conf), from_logits=False)
            conf_loss = tf.reduce_sum(mask * bce) + tf.reduce_sum(ignore * bce)
            return (xy_loss + wh_loss + conf_loss) / tf.cast(tf.shape(pred)[0], tf.float32)

    def net() -> Any:
        return tf.keras.Sequential([tf.keras.Input((32, 32, 3)),
                                    tf.keras.layers.Conv2D(16, 3, padding="same",
                                                           activation="relu"),
                                    tf.keras.layers.Conv2D(5 * 3, 3, strides=4, padding="same"),
                                    tf.keras.layers.Reshape((8, 8, 3, 5))])
    x = np.random.rand(8, 32, 32, 3).astype("float32")
    y = np.random.rand(8, 8, 8, 3, 5).astype("float32")
    steps = 5 if small else 20

    def loop(model: Any, loss: Any, opt: Any, step: Any = None) -> Callable[[], Any]:
        def one() -> Any:
            with tf.GradientTape() as tape:
                value = loss(model(x, training=True), y)
            grads = tape.gradient(value, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables, strict=True))
            return value
        run = step or one
        return lambda: [run() for _ in range(steps)]

    times = {}
    m, opt = net(), tf.keras.optimizers.SGD(0.01)
    times["eager step, eager loss call"] = _median_time(loop(m, BoxLoss(), opt), 3) / steps
    m, opt, traced_loss = net(), tf.keras.optimizers.SGD(0.01), BoxLoss()
    traced_loss.call = tf.function(traced_loss.call)
    times["eager step, loss call tf.function"] = _median_time(loop(m, traced_loss, opt),
                                                              3) / steps
    m, opt, whole = net(), tf.keras.optimizers.SGD(0.01), BoxLoss()

    @tf.function
    def compiled() -> Any:
        with tf.GradientTape() as tape:
            value = whole(m(x, training=True), y)
        grads = tape.gradient(value, m.trainable_variables)
        opt.apply_gradients(zip(grads, m.trainable_variables, strict=True))
        return value
    times["whole step tf.function"] = _median_time(loop(m, whole, opt, compiled), 3) / steps
    base = times["eager step, eager loss call"]
    print("TFP314: " + ", ".join(f"{k} {v * 1e3:.2f} ms a step ({base / v:.2f}x)"
                                 for k, v in times.items()))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases",
                    default="TFP109,TFP408,TFP408b,TFP409,TFP410,TFP115,TFP403flat,"
                            "TFP110,TFP110b,TFP110c,TFP607,TFP608,TFP609,TFP612,TFP311,TFP708,TFP116,"
                            "TFP312,TFP118,TFP112,TFP112b,TFP112c,TFP112d,TFP119,TFP313,TFP709,"
                            "TFP413,TFP413b,TFP208,TFP114diag,TFP114det,TFP114softmax,"
                            "TFP114image,TFP106helper,TFP111cache,TFP302inner,TFP314,TFP306jac")
    ap.add_argument("--budget", type=float, default=2.0, help="seconds of rounds per case")
    ap.add_argument("--small", action="store_true", help="smaller tensors (a quick look)")
    args = ap.parse_args(argv)
    import tensorflow as tf

    wanted = [c.strip() for c in args.cases.split(",") if c.strip()]
    tensor_cases = _tensor_cases(tf, args.small)
    by_hand = {"TFP110": _predict, "TFP110b": _predict_sizes,
               "TFP110c": _predict_loop_pieces, "TFP607": _cache,
               "TFP608": _generator, "TFP609": _prefetch_order, "TFP612": _tfrecords,
               "TFP311": _summaries,
               "TFP708": _merge_all, "TFP312": _forced_eager, "TFP118": _replay,
               "TFP119": _built_per_call, "TFP313": _big_constant,
               "TFP709": _full_trace, "TFP208": _list_of_arrays,
               "TFP111cache": _growing_cache, "TFP302inner": _inner_tf_function,
               "TFP314": _keras_call_in_eager_step,
               "TFP306jac": _jacobian_per_batch}
    print(f"TensorFlow {tf.__version__}; ratio = before / after (above 1: the fix is faster)")
    for case in wanted:
        if case in tensor_cases:
            before, after, inputs = tensor_cases[case]
            print_before_after(tf, case, before, after, inputs, args.budget, decimals=3)
        elif case in by_hand:
            by_hand[case](tf, args.small)
        else:
            print(f"{case}: no case here", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
