"""What the rules for shapes no rule covered claim (TFP411, TFP412, TFP610, and a list_files
rule not written), each measured on this machine's TensorFlow, slow form against the fix.

    python benchmarks/bench_lint_new_shapes.py [--rounds 7]
        [--only ragged,diag,crop,list_files,parse]

For each claim it prints the median seconds of each form and the ratio slow / fast; the
rounds interleave the two forms so machine load hits both alike.

* ragged (TFP411): `tf.RaggedTensor.from_nested_row_splits(values, rt.nested_row_splits)`
  with its default `validate=True` against `validate=False`, eager and in a `tf.function`.
* diag (TFP412): `tf.matmul(tf.linalg.diag(v), x)` against `v[:, None] * x`, in a
  `tf.function`.
* crop (TFP610): `tf.io.decode_jpeg` then `tf.image.crop_to_bounding_box` against
  `tf.io.decode_and_crop_jpeg` with the same window, in a `tf.function`.
* parse (TFP611): `map(parse_single_example).batch(256)` against
  `batch(256).map(parse_example)` over 20000 local records.
* list_files (no rule: the claim did not hold here, see docs/lint.md): iterating
  `tf.data.Dataset.list_files(names)` over an explicit list
  of existing file names against `tf.data.Dataset.from_tensor_slices(names)`.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _interleaved(slow: Callable[[], Any], fast: Callable[[], Any], rounds: int,
                 calls: int) -> tuple[float, float]:
    slow(), fast()  # warm: trace, first allocation
    a: list[float] = []
    b: list[float] = []
    for _ in range(rounds):
        for fn, out in ((slow, a), (fast, b)):
            t = time.perf_counter()
            for _ in range(calls):
                fn()
            out.append((time.perf_counter() - t) / calls)
    return statistics.median(a), statistics.median(b)


def _print(name: str, slow_label: str, fast_label: str, slow: float, fast: float) -> None:
    print(f"{name}: {slow_label} {slow * 1e6:.1f} us, {fast_label} {fast * 1e6:.1f} us, "
          f"ratio {slow / fast:.1f}x")


def ragged(tf: Any, rounds: int) -> None:
    rt = tf.RaggedTensor.from_row_lengths(
        tf.RaggedTensor.from_row_lengths(tf.range(6000.0), [3] * 2000), [4] * 500)

    def slow(r: Any) -> Any:
        return tf.RaggedTensor.from_nested_row_splits(r.flat_values * 2.0, r.nested_row_splits)

    def fast(r: Any) -> Any:
        return tf.RaggedTensor.from_nested_row_splits(r.flat_values * 2.0, r.nested_row_splits,
                                                      validate=False)

    # In a tf.function the ragged tensor is an argument (as in a map function or a layer),
    # so nothing about its splits is constant-folded away.
    for mode, (s_fn, f_fn) in (("eager", (slow, fast)),
                               ("tf.function", (tf.function(slow, autograph=False),
                                                tf.function(fast, autograph=False)))):
        s, f = _interleaved(functools.partial(s_fn, rt), functools.partial(f_fn, rt), rounds,
                            200)
        _print(f"ragged from_nested_row_splits ({mode})", "validate=True", "validate=False",
               s, f)


def _diag_at(tf: Any, n: int, rounds: int) -> None:
    v = tf.random.normal([n])
    x = tf.random.normal([n, n])

    def dense(v: Any, x: Any) -> Any:
        return tf.matmul(tf.linalg.diag(v), x)

    def broadcast(v: Any, x: Any) -> Any:
        return v[:, None] * x

    slow = tf.function(dense, autograph=False)
    fast = tf.function(broadcast, autograph=False)
    if float(tf.reduce_max(tf.abs(slow(v, x) - fast(v, x)))) > 1e-3:
        raise SystemExit("diag: the two forms disagree")
    s, f = _interleaved(lambda: slow(v, x).numpy(), lambda: fast(v, x).numpy(), rounds, 5)
    _print(f"diag matmul n={n} (tf.function)", "matmul(diag(v), x)", "v[:, None] * x", s, f)


def diag(tf: Any, rounds: int) -> None:
    for n in (256, 1024):
        _diag_at(tf, n, rounds)


def crop(tf: Any, rounds: int) -> None:
    image = tf.cast(tf.random.uniform([1024, 1536, 3], maxval=255), tf.uint8)
    contents = tf.io.encode_jpeg(image, quality=90)
    window = (300, 500, 224, 224)

    @tf.function
    def slow() -> Any:
        img = tf.io.decode_jpeg(contents, channels=3)
        return tf.image.crop_to_bounding_box(img, *window)

    @tf.function
    def fast() -> Any:
        return tf.io.decode_and_crop_jpeg(contents, tf.constant(window), channels=3)

    if slow().shape != fast().shape:
        raise SystemExit("crop: the two forms disagree")
    s, f = _interleaved(lambda: slow().numpy(), lambda: fast().numpy(), rounds, 10)
    _print("decode_jpeg then crop (1024x1536 -> 224x224)", "decode+crop", "decode_and_crop",
           s, f)


def list_files(tf: Any, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as d:
        names = []
        for i in range(2000):
            p = Path(d) / f"shard-{i:05d}.tfrecord"
            p.write_bytes(b"")
            names.append(str(p))

        def slow() -> int:
            return sum(1 for _ in tf.data.Dataset.list_files(names, shuffle=False))

        def fast() -> int:
            return sum(1 for _ in tf.data.Dataset.from_tensor_slices(names))

        if slow() != fast():
            raise SystemExit("list_files: the two forms disagree")
        s, f = _interleaved(slow, fast, rounds, 1)
        _print("2000 explicit file names", "list_files", "from_tensor_slices", s, f)


def parse(tf: Any, rounds: int) -> None:
    import numpy as np

    with tempfile.TemporaryDirectory() as d:
        path = str(Path(d) / "records.tfrecord")
        with tf.io.TFRecordWriter(path) as w:
            for i in range(20000):
                feature = {
                    "x": tf.train.Feature(float_list=tf.train.FloatList(
                        value=np.random.rand(16).tolist())),
                    "y": tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 10]))}
                w.write(tf.train.Example(features=tf.train.Features(
                    feature=feature)).SerializeToString())
        spec = {"x": tf.io.FixedLenFeature([16], tf.float32),
                "y": tf.io.FixedLenFeature([], tf.int64)}

        def slow() -> int:
            ds = tf.data.TFRecordDataset(path).map(
                lambda r: tf.io.parse_single_example(r, spec)).batch(256)
            return sum(1 for _ in ds)

        def fast() -> int:
            ds = tf.data.TFRecordDataset(path).batch(256).map(
                lambda r: tf.io.parse_example(r, spec))
            return sum(1 for _ in ds)

        if slow() != fast():
            raise SystemExit("parse: the two forms disagree")
        s, f = _interleaved(slow, fast, rounds, 1)
        _print("20000 records, batch 256 (TFP611)", "parse_single_example then batch",
               "batch then parse_example", s, f)


CLAIMS = {"ragged": ragged, "diag": diag, "crop": crop, "list_files": list_files,
          "parse": parse}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--only", default=",".join(CLAIMS), help="comma-separated claims to run")
    args = p.parse_args()
    import tensorflow as tf
    print(f"TensorFlow {tf.__version__}")
    for name in args.only.split(","):
        CLAIMS[name.strip()](tf, args.rounds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
