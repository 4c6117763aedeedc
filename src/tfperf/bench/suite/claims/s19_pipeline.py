"""S19: a tf.data pipeline over TFRecord files with prefetch(AUTOTUNE) overlaps input with the
training step. Measured on a real pipeline: JPEG images in TFRecord files on disk, read,
parsed, decoded and augmented in a map, batched, and consumed by a convolution step.

The variants separate what TensorFlow does on its own from what the code asks for. Two of
tf.data's default rewrites stand in for the classic tips: ``inject_prefetch`` (TF adds
``prefetch(AUTOTUNE)`` after a pipeline's last synchronous step; on by default from TF 2.12)
and ``map_parallelization`` (TF runs a stateless ``map`` in parallel; on from TF 2.6). Each is
switched off on its own, and both together (what TF before 2.6 did), so the lint rules
TFP601/TFP602 can quote what writing ``prefetch``/``num_parallel_calls`` buys under each
targeted version (``details["lint"]``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tfperf.bench.suite.context import Context, speedup
from tfperf.bench.suite.verdict import Claim, Figure

CLAIMS = ("S19",)
FIGURE = Figure("– (the article's \"≈ 25×\" is end to end, S16 → S18, not prefetch)")
SIDE, BATCH = 64, 32

NONE = "no prefetch, sequential map, both rewrites off"
PREFETCH_ONLY = "prefetch(AUTOTUNE), sequential map, both rewrites off"
RECIPE_OFF = "parallel map + prefetch(AUTOTUNE), both rewrites off"
DEFAULTS = "no prefetch, sequential map, TF defaults"
PREFETCH_DEFAULTS = "prefetch(AUTOTUNE), sequential map, TF defaults"
NO_INJECT = "no prefetch, sequential map, inject_prefetch=False"
NO_MAP_PAR = "no prefetch, sequential map, map_parallelization=False"
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
          inject_prefetch: bool | None = None, map_parallelization: bool | None = None) -> Any:
    """The pipeline; ``inject_prefetch``/``map_parallelization`` set TF's rewrite of that
    name (``None`` leaves TF's default)."""
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
    if inject_prefetch is not None or map_parallelization is not None:
        options = tf.data.Options()
        if inject_prefetch is not None:
            options.experimental_optimization.inject_prefetch = inject_prefetch
        if map_parallelization is not None:
            options.experimental_optimization.map_parallelization = map_parallelization
        ds = ds.with_options(options)
    return ds


def lint_figures(r: Any) -> dict[str, float | None]:
    """The ratios the tf.data lint rules quote: the time of the first variant over the
    second's, as a ratio of their per-round speedups over the baseline (each a median of
    ratios measured side by side, steadier than a ratio of medians on a busy machine)."""
    def ratio(slow: str, fast: str) -> float | None:
        a, b = (1.0 if n == NONE else speedup(r, n) for n in (slow, fast))
        return b / a if a and b else None

    return {
        # TFP601 under TF's defaults: is a missing prefetch slower? (≈ 1: TF injects one)
        "no_prefetch_over_prefetch_defaults": ratio(DEFAULTS, PREFETCH_DEFAULTS),
        # TFP601 where TF injects nothing (inject_prefetch=False, TF < 2.12)
        "no_prefetch_over_prefetch_without_injection": ratio(NO_INJECT, PREFETCH_DEFAULTS),
        # TFP602 under TF's defaults: a sequential stateless map vs the explicit recipe
        "sequential_map_over_recipe_defaults": ratio(DEFAULTS, RECIPE),
        # TFP602 where TF does not parallelise (map_parallelization=False, TF < 2.6)
        "sequential_map_over_recipe_without_map_parallelization": ratio(NO_MAP_PAR, RECIPE),
        # Both rewrites off (TF < 2.6): what the two tips buy together
        "nothing_over_recipe_both_off": ratio(NONE, RECIPE_OFF),
    }


STEP_S = 0.03  # the simulated accelerator step per batch: about one batch's input work


def waiting_epoch(ds: Any) -> Any:
    """One epoch where each batch is followed by a wait of ``STEP_S`` (GIL released, cores
    idle); returns the sum of the labels, so that variants are checked for agreement."""
    import time

    import tensorflow as tf

    def one_epoch():
        total = tf.constant(0, tf.int64)
        for _, labels in ds:
            time.sleep(STEP_S)
            total += tf.reduce_sum(labels)
        return total
    return one_epoch


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

    off = {"inject_prefetch": False, "map_parallelization": False}
    variants = {
        NONE: build(paths, prefetch=False, parallel_map=False, **off),
        PREFETCH_ONLY: build(paths, prefetch=True, parallel_map=False, **off),
        RECIPE_OFF: build(paths, prefetch=True, parallel_map=True, **off),
        DEFAULTS: build(paths, prefetch=False, parallel_map=False),
        PREFETCH_DEFAULTS: build(paths, prefetch=True, parallel_map=False),
        NO_INJECT: build(paths, prefetch=False, parallel_map=False, inject_prefetch=False),
        NO_MAP_PAR: build(paths, prefetch=False, parallel_map=False, map_parallelization=False),
        RECIPE: build(paths, prefetch=True, parallel_map=True),
    }
    # An epoch lasts tenths of a second: a longer budget buys rounds, and no epoch counts
    # as "slow" (run once), so that every ratio is a median of per-round ratios.
    r = ctx.compare("S19", {name: epoch(ds) for name, ds in variants.items()}, baseline=NONE,
                    budget=3.0 if ctx.quick else 15.0, slow_after=10.0)
    figures = {name: speedup(r, name) for name in variants if name != NONE}
    # The same pipelines feeding an accelerator-like step: the host waits STEP_S per batch
    # with its cores idle (as while a GPU computes), so overlap shows even on a CPU-only
    # machine whose cores the conv step above would share with the pipeline's threads.
    overlap = ctx.compare("S19-overlap", {name: waiting_epoch(ds) for name, ds in
                                          variants.items()}, baseline=NONE,
                          budget=2.0 if ctx.quick else 12.0, slow_after=10.0)
    # The article overlaps CPU input work with GPU steps. Without a GPU the step's kernels
    # and the pipeline's threads share the same cores, so what overlap buys depends on idle
    # cores, not on the pipeline: measured and shown, not judged.
    unavailable = None if ctx.gpu else ("no GPU: the training step runs on the same CPU "
                                        "cores as the input pipeline")
    return [ctx.claim("S19", "tf.data over TFRecord + prefetch(AUTOTUNE) overlaps input with "
                      "compute", FIGURE, speedup(r, RECIPE_OFF), "× (recipe over no prefetch)",
                      f"an epoch of {images} JPEGs in 4 TFRecord files (decode, augment, batch "
                      f"{BATCH}, conv step): parallel map + prefetch over a sequential map "
                      "without prefetch, TF's inject_prefetch and map_parallelization off",
                      using=[r], unavailable=unavailable,
                      details={"images": images, "speedups_over_none": figures,
                               "lint": lint_figures(r),
                               "lint_accelerator_like_step": lint_figures(overlap),
                               "accelerator_like_step_s": STEP_S,
                               "epoch_s_accelerator_like_step": {
                                   name: overlap[name].median_s for name in variants},
                               "epoch_s": {name: r[name].median_s for name in variants}})]
