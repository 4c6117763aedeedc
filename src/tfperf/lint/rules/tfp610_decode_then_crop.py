"""TFP610: a whole JPEG decoded, then cropped: decode_and_crop_jpeg decodes only the window."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from tfperf.core.findings import Finding
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

_DECODE_JPEG = frozenset(f"tensorflow.{m}decode_jpeg" for m in (
    "image.", "io.", "compat.v1.image.", "compat.v1.io.", "compat.v1.", ""))
# Crops whose first argument is the image (what the fused op can take over).
_CROPS = frozenset({f"tensorflow.{m}{c}" for m in ("image.", "compat.v1.image.")
                    for c in ("crop_to_bounding_box", "random_crop", "central_crop",
                              "stateless_random_crop")}
                   | {"tensorflow.slice", "tensorflow.compat.v1.slice",
                      "tensorflow.random_crop", "tensorflow.compat.v1.random_crop"})
# Reads of the decoded image that only ask its shape (the window is computed from it;
# `tf.image.extract_jpeg_shape` gives it without decoding).
_SHAPE_CALLS = frozenset({"tensorflow.shape", "tensorflow.compat.v1.shape"})


def _decoded_name(ctx: Context, expr: Any) -> ast.Name | None:
    """The name ``expr`` reads when it holds ``tf.io.decode_jpeg(...)`` (assigned once)."""
    if type(expr) is not ast.Name:
        return None
    b = ctx.binding(expr)
    if b is None or b.kind != "assign" or b.value is expr:
        return None
    return expr if ctx.call_qualname(b.value) in _DECODE_JPEG else None


def _only_cropped(ctx: Context, name: ast.Name, crop: ast.AST) -> bool:
    """Every other read of the decoded image (same binding) only asks its shape."""
    binding = ctx.binding(name)
    fn = ctx.enclosing_function(name)
    for load in ctx.name_loads(name.id):
        if load is name or ctx.binding(load) is not binding or \
                ctx.enclosing_function(load) is not fn:
            continue
        if any(a is crop for a in ctx.ancestors(load)):
            continue
        parent: Any = ctx.parent(load)
        if type(parent) is ast.Attribute and parent.attr in ("shape", "get_shape"):
            continue
        if type(parent) is ast.Call and ctx.call_qualname(parent) in _SHAPE_CALLS:
            continue
        return False
    return True


def _cropped_image(ctx: Context, node: Any) -> Any:
    """The image a crop reads: a crop call's first argument, or ``img[a:b, c:d]``."""
    if type(node) is ast.Call:
        if ctx.call_qualname(node) not in _CROPS:
            return None
        return node.args[0] if node.args else next(
            (k.value for k in node.keywords if k.arg in ("image", "value", "input_")), None)
    if type(node) is ast.Subscript and type(node.slice) is ast.Tuple \
            and any(type(e) is ast.Slice for e in node.slice.elts[:2]):
        return node.value
    return None


def _unfused_on_purpose(ctx: Context, node: ast.AST) -> bool:
    """Under a branch whose test names the fused form (``if fuse_decode_and_crop:``): the
    code keeps both paths and chooses the unfused one by a flag."""
    p: Any
    for p in ctx.ancestors(node):
        if type(p) in (ast.If, ast.IfExp):
            for n in ast.walk(p.test):
                word = (getattr(n, "id", None) or getattr(n, "attr", None) or "").lower()
                if "fuse" in word or "decode_and_crop" in word:
                    return True
    return False


class DecodeThenCrop(Rule):
    code = "TFP610"
    name = "decode-then-crop"
    message = ("a whole JPEG decoded, then cropped: tf.io.decode_and_crop_jpeg decodes only "
               "the crop window")
    hint = ("tf.io.decode_and_crop_jpeg(contents, [y, x, h, w]) (the window from "
            "tf.image.extract_jpeg_shape(contents) if it depends on the size)")
    claims = ("S19",)
    group = "preview"  # new (issue 25, round 3's F028 shape): waits for judged findings
    node_types = (ast.Call, ast.Subscript)
    needs_tf = True
    docs = """\
## What it does
Finds a JPEG decoded with `tf.io.decode_jpeg` (or `tf.image.decode_jpeg`) into a name whose
only use is a crop: `tf.image.crop_to_bounding_box`, `random_crop`, `central_crop`,
`stateless_random_crop`, `tf.slice`, or a slice `img[y0:y1, x0:x1]` (reads of its shape, to
compute the window, are allowed).

## Why is this bad?
Decoding is the most expensive step of most image pipelines, and the whole image is decoded
only to throw most of it away. `tf.io.decode_and_crop_jpeg` decodes only the part of the
JPEG the window covers (TensorFlow's API docs: "equivalent to a combination of decode and
crop, but much faster by only decoding partial jpeg image"). Measured on TF 2.21 CPU in a
`tf.function` (`benchmarks/bench_lint_new_shapes.py --only crop`, a 1024×1536 JPEG, a 224×224
window): 2.2–2.8× (about 20–23 ms → 8–9 ms, two runs on a loaded 2-core machine).
tensorflow/benchmarks made this change in its ImageNet preprocessing.

## Example
```python
image = tf.io.decode_jpeg(contents, channels=3)
image = tf.image.crop_to_bounding_box(image, y, x, h, w)
```

## Use instead
```python
image = tf.io.decode_and_crop_jpeg(contents, tf.stack([y, x, h, w]), channels=3)
```

## Fix safety
No automatic fix: the window must be known before decoding (`tf.image.extract_jpeg_shape`
reads the size from the header), and a random crop becomes an explicit window
(`tf.image.sample_distorted_bounding_box`).

## Known limitations
Only `decode_jpeg` (`decode_image` may be a PNG, which the fused op cannot read); a decoded
image used for anything but its shape and the crop is left alone; the decode and the crop
must be in the same function. A crop under a branch whose test names the fused form
(`if fuse_decode_and_crop:` ... `else:`) is the unfused path kept on purpose. TensorFlow
before 1.4 is left alone (the fused op's first release as recalled, not checked here).
"""
    valid = (
        Valid("""
            import tensorflow as tf
            def load(contents, y, x, h, w):
                return tf.io.decode_and_crop_jpeg(contents, tf.stack([y, x, h, w]), channels=3)
        """, spelling="index: fused"),
        # The whole image is used too (a thumbnail beside the crop).
        Valid("""
            import tensorflow as tf
            def load(contents):
                image = tf.io.decode_jpeg(contents, channels=3)
                thumb = tf.image.resize(image, [64, 64])
                return tf.image.central_crop(image, 0.5), thumb
        """, spelling="name: whole image used"),
        # A PNG may hide behind decode_image: the fused op reads JPEG only.
        Valid("""
            import tensorflow as tf
            def load(contents):
                image = tf.io.decode_image(contents, channels=3, expand_animations=False)
                return tf.image.random_crop(image, [224, 224, 3])
        """, spelling="name: decode_image"),
        # Both paths kept, the fused one chosen by a flag (tensorflow/benchmarks).
        Valid("""
            import tensorflow as tf
            def load(contents, begin, size, window, fuse_decode_and_crop=True):
                if fuse_decode_and_crop:
                    image = tf.image.decode_and_crop_jpeg(contents, window)
                else:
                    image = tf.image.decode_jpeg(contents, channels=3)
                    image = tf.slice(image, begin, size)
                return image
        """, spelling="name: a flag"),
        Valid("""
            import tensorflow as tf
            def load_all(paths):
                for p in paths:
                    contents = tf.io.read_file(p)
                    yield tf.io.decode_and_crop_jpeg(contents, [0, 0, 224, 224])
        """, spelling="loop: for"),
        Valid("""
            from helpers import load
            def run(contents):
                return load(contents)
        """, files={"helpers.py": """
            import tensorflow as tf
            def load(contents):
                image = tf.io.decode_jpeg(contents, channels=3)
                return tf.image.resize(image, [224, 224])
        """}, spelling="module"),
        Valid("""
            import tensorflow as tf
            contents = tf.io.read_file("cat.jpg")
            # %%
            image = tf.io.decode_and_crop_jpeg(contents, [10, 10, 100, 100])
        """, notebook=True, spelling="notebook"),        # Before TF 1.4: left alone.
        Valid("""
            import tensorflow as tf
            def load(contents, y, x, h, w):
                image = tf.image.decode_jpeg(contents, channels=3)
                return tf.image.crop_to_bounding_box(image, y, x, h, w)
        """, tf_version="1.3", spelling="name: TF 1.3"),
    )
    invalid = (
        Invalid("""
            import tensorflow as tf
            def load(contents, y, x, h, w):
                image = tf.io.decode_jpeg(contents, channels=3)
                return tf.image.crop_to_bounding_box(image, y, x, h, w)
        """, count=1, lines=(4,), spelling="name"),
        # The window computed from the decoded image's shape.
        Invalid("""
            import tensorflow as tf
            def load(contents, size):
                image = tf.image.decode_jpeg(contents, channels=3)
                shape = tf.shape(image)
                y = (shape[0] - size) // 2
                x = (shape[1] - size) // 2
                return image[y:y + size, x:x + size]
        """, count=1, lines=(7,), spelling="index: slice"),
        Invalid("""
            import tensorflow as tf
            def parse(record):
                image = tf.io.decode_jpeg(record["image"], channels=3)
                return tf.image.random_crop(image, [224, 224, 3])
            def pipeline(ds):
                return ds.map(parse, num_parallel_calls=tf.data.AUTOTUNE)
        """, count=1, lines=(4,), spelling="index: random_crop in a map"),
        Invalid("""
            import tensorflow as tf
            def load_all(paths):
                for p in paths:
                    image = tf.io.decode_jpeg(tf.io.read_file(p))
                    yield tf.slice(image, [0, 0, 0], [224, 224, 3])
        """, count=1, lines=(5,), spelling="loop: for"),
        Invalid("""
            from helpers import load
            def run(contents):
                return load(contents)
        """, files={"helpers.py": """
            import tensorflow.compat.v1 as tf
            def load(contents):
                image = tf.image.decode_jpeg(contents, channels=3)
                return tf.image.central_crop(image, 0.875)
        """}, count=1, spelling="module"),
        Invalid("""
            import tensorflow as tf
            contents = tf.io.read_file("cat.jpg")
            # %%
            image = tf.io.decode_jpeg(contents)
            patch = tf.image.crop_to_bounding_box(image, 10, 10, 100, 100)
        """, count=1, notebook=True, spelling="notebook"),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        image = _cropped_image(ctx, node)
        if image is None or ctx.tf_version < (1, 4):
            return
        name = _decoded_name(ctx, image)
        if name is not None and _only_cropped(ctx, name, node) \
                and not _unfused_on_purpose(ctx, node):
            yield self.finding(ctx, node)
