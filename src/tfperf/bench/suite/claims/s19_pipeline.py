"""S19: a tf.data pipeline over TFRecord files with prefetch(AUTOTUNE) overlaps input with the
training step. Measured on a real pipeline: JPEG images in TFRecord files on disk, read,
parsed, decoded and augmented in a map, batched, and consumed by a convolution step.

The variants separate what TF 2.21 does on its own from what the code asks for:
``inject_prefetch`` (TF adds a prefetch after the last transformation when none is written)
and ``map_parallelization`` (TF runs a deterministic map in parallel) are switched off where
a variant says "nothing injected". The figures are the ones lint rule docs quote.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tfperf.bench.suite.context import Context, speedup
from tfperf.bench.suite.verdict import Claim, Figure

CLAIMS = ("S19",)
FIGURE = Figure("– (the article's \"≈ 25×\" is end to end, S16 → S18, not prefetch)")
SIDE, BATCH = 64, 32

NONE = "no prefetch, nothing injected"
PREFETCH_ONLY = "prefetch(AUTOTUNE), nothing injected"
DEFAULTS = "no prefetch, TF defaults"
PREFETCH_DEFAULTS = "prefetch(AUTOTUNE), TF defaults"
RECIPE = "parallel map + prefetch(AUTOTUNE)"


def write_records(folder: Path, images: int, files: int = 4) -> list[str]:
    """``images`` JPEG-encoded pictures with labels in ``files`` TFRecord files."""
    import tensorflow as tf

    g = tf.random.Generator.from_seed(19)
    # Smooth gradients plus noise: JPEG has something real to code.
    ramp = tf.linspace(0.0, 255.0, SIDE)[None, None, :, None]
    pixels = tf.cast(tf.clip_by_value(ramp + g.normal([images, SIDE, SIDE, 3], stddev=20.0),
                                      0, 255), tf.uint8)
    jpegs = tf.map_fn(lambda p: tf.io.encode_jpeg(p, quality=90), pixels,
                      fn_output_signature=tf.string).numpy()
    paths = [str(folder / f"images-{i}.tfrecord") for i in range(files)]
    writers = [tf.io.TFRecordWriter(p) for p in paths]
    try:
        for i, jpeg in enumerate(jpegs):
            example = tf.train.Example(features=tf.train.Features(feature={
                "image": tf.train.Feature(bytes_list=tf.train.BytesList(value=[jpeg])),
                "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 10])),
            }))
            writers[i % files].write(example.SerializeToString())
    finally:
        for w in writers:
            w.close()
    return paths


def build(paths: list[str], *, prefetch: bool, parallel_map: bool,
          inject: bool | None) -> Any:
    """The pipeline; ``inject=False`` switches TF's prefetch injection and map
    parallelisation off, ``None`` leaves TF's defaults."""
    import tensorflow as tf

    spec = {"image": tf.io.FixedLenFeature([], tf.string),
            "label": tf.io.FixedLenFeature([], tf.int64)}

    def decode(record):
        ex = tf.io.parse_single_example(record, spec)
        img = tf.image.convert_image_dtype(tf.io.decode_jpeg(ex["image"], channels=3),
                                           tf.float32)
        # Deterministic augmentation, so every variant yields the same batches.
        img = tf.cond(ex["label"] % 2 == 0, lambda: tf.image.flip_left_right(img),
                      lambda: img)
        img = tf.image.resize(tf.image.central_crop(img, 0.875), [SIDE, SIDE])
        return tf.image.per_image_standardization(img), ex["label"]

    ds = tf.data.TFRecordDataset(paths).map(
        decode, num_parallel_calls=tf.data.AUTOTUNE if parallel_map else None)
    ds = ds.batch(BATCH)
    if prefetch:
        ds = ds.prefetch(tf.data.AUTOTUNE)
    if inject is False:
        options = tf.data.Options()
        options.experimental_optimization.inject_prefetch = False
        options.experimental_optimization.map_parallelization = False
        ds = ds.with_options(options)
    return ds


def run(ctx: Context) -> list[Claim]:
    import tensorflow as tf

    assert ctx.workdir is not None
    images = 96 if ctx.quick else 320  # 3 or 10 batches: an epoch of a few tenths of a second
    folder = ctx.workdir / "s19"
    folder.mkdir(exist_ok=True)
    paths = write_records(folder, images)
    kernels = tf.random.stateless_normal([5, 5, 3, 16], seed=[1, 9]) * 0.1

    @tf.function
    def train_step(images):  # the consumer: a convolution stack's worth of work per batch
        h = tf.nn.relu(tf.nn.conv2d(images, kernels, 1, "SAME"))
        h = tf.nn.max_pool2d(h, 2, 2, "VALID")
        return tf.reduce_sum(tf.reduce_mean(h, axis=[1, 2, 3]))

    def epoch(ds):
        def one_epoch():
            total = tf.constant(0.0)
            for batch, _ in ds:
                total += train_step(batch)
            return total
        return one_epoch

    variants = {
        NONE: build(paths, prefetch=False, parallel_map=False, inject=False),
        PREFETCH_ONLY: build(paths, prefetch=True, parallel_map=False, inject=False),
        DEFAULTS: build(paths, prefetch=False, parallel_map=False, inject=None),
        PREFETCH_DEFAULTS: build(paths, prefetch=True, parallel_map=False, inject=None),
        RECIPE: build(paths, prefetch=True, parallel_map=True, inject=None),
    }
    # An epoch lasts tenths of a second: a longer budget buys rounds, and no epoch counts
    # as "slow" (run once), so that every ratio is a median of per-round ratios.
    r = ctx.compare("S19", {name: epoch(ds) for name, ds in variants.items()}, baseline=NONE,
                    budget=4.0 if ctx.quick else 15.0, slow_after=10.0)
    figures = {name: speedup(r, name) for name in variants if name != NONE}
    # The article overlaps CPU input work with GPU steps. Without a GPU the step's kernels
    # and the pipeline's threads share the same cores, so what overlap buys depends on idle
    # cores, not on the pipeline: measured and shown, not judged.
    unavailable = None if ctx.gpu else ("no GPU: the training step runs on the same CPU "
                                        "cores as the input pipeline")
    return [ctx.claim("S19", "tf.data over TFRecord + prefetch(AUTOTUNE) overlaps input with "
                      "compute", FIGURE, speedup(r, RECIPE), "× (recipe over no prefetch)",
                      f"an epoch of {images} JPEGs in 4 TFRecord files (decode, augment, batch "
                      f"{BATCH}, conv step): parallel map + prefetch over nothing injected",
                      using=[r], unavailable=unavailable,
                      details={"images": images, "speedups_over_none": figures,
                                          "epoch_s": {name: r[name].median_s
                                                      for name in variants}})]
