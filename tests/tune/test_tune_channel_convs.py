"""A loop of 2-D convolutions, one per channel (held-out round 12's second miss), as one
depthwise convolution, whatever the loop's spelling; checked against the loop on the same
inputs, eager and traced (no timing). Loops that are not one channel's convolution per
iteration are left alone; one that does not cover every channel raises (rejected)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

tf = pytest.importorskip("tensorflow")

sys.path.insert(0, str(Path(__file__).parent))
from test_tune_fill import HEAD, _context  # noqa: E402
from test_tune_loop_model import _agrees, _loops_left, _run  # noqa: E402

from tfperf.bench.equivalence import compare_outputs, snapshot  # noqa: E402
from tfperf.tune.levers.channel_convs import ChannelConvsToDepthwise  # noqa: E402

SPELLINGS = {
    "append_concat": '''
def f(img, ker):
    outs = []
    for ch in range(img.shape[-1]):
        outs.append(tf.nn.conv2d(img[..., ch:ch + 1], ker[:, :, ch:ch + 1, None], 1, "SAME"))
    return tf.concat(outs, -1)
''',
    "comprehension_stack_last": '''
def f(img, ker):
    return tf.stack([tf.nn.conv2d(tf.expand_dims(img[..., c], -1), ker[:, :, c, None, None],
                                  strides=[1, 2, 2, 1], padding="VALID")[..., 0]
                     for c in range(img.shape[3])], axis=-1)
''',
    "map_fn_transposed": '''
def f(img, ker):
    per = tf.map_fn(lambda c: tf.nn.conv2d(img[..., c, None], ker[:, :, c:c + 1, None], 1,
                                           "SAME")[:, :, :, 0],
                    tf.range(img.shape[-1]), fn_output_signature=tf.float32)
    return tf.transpose(per, [1, 2, 3, 0])
''',
    "named_slices_axis3": '''
def f(img, ker):
    channels = []
    for i in range(6):
        x_i = img[:, :, :, i:i + 1]
        k_i = tf.reshape(ker[:, :, i], [3, 3, 1, 1])
        channels.append(tf.nn.conv2d(x_i, k_i, strides=2, padding="SAME", dilations=1))
    return tf.concat(channels, axis=3)
''',
    "while_counter_dilated": '''
def f(img, ker):
    out = []
    c = 0
    while c < img.shape[-1]:
        y = tf.nn.conv2d(input=img[..., c][..., tf.newaxis], filters=ker[:, :, c:c + 1, None],
                         strides=[1, 1], padding="VALID", dilations=[2, 2])
        out.append(y[..., 0])
        c += 1
    return tf.stack(out, axis=3)
''',
    "channel_multiplier": '''
def f(img, ker):
    k2 = tf.stack([ker, -ker], axis=-1)
    return tf.concat([tf.nn.conv2d(img[..., c:c + 1], k2[:, :, c:c + 1, :], 1, "SAME")
                      for c in range(6)], -1)
''',
    "multiplier_first_output": '''
def f(img, ker):
    k2 = tf.stack([ker, -2.0 * ker], axis=-1)
    return tf.stack([tf.nn.conv2d(img[..., c:c + 1], k2[:, :, c:c + 1, :], 1, "SAME")[..., 0]
                     for c in range(6)], axis=3)
''',
}

TWINS = {  # not one channel's convolution per iteration: left alone
    "bias_per_channel": '''
def f(img, ker):
    b = tf.range(6, dtype=tf.float32)
    return tf.concat([tf.nn.conv2d(img[..., c:c + 1], ker[:, :, c:c + 1, None], 1, "SAME")
                      + b[c] for c in range(6)], -1)
''',
    "two_channels_a_step": '''
def f(img, ker):
    return tf.concat([tf.nn.conv2d(img[..., c:c + 2], tf.tile(ker[:, :, c:c + 1, None],
                                                             [1, 1, 2, 1]), 1, "SAME")
                      for c in range(5)], -1)
''',
    "whole_input_per_filter": '''
def f(img, ker):
    return tf.concat([tf.nn.conv2d(img, tf.tile(ker[:, :, c, None, None], [1, 1, 6, 1]), 1,
                                   "SAME") for c in range(6)], -1)
''',
    "channels_first": '''
def f(img, ker):
    x = tf.transpose(img, [0, 3, 1, 2])
    return tf.concat([tf.nn.conv2d(x[:, :, :, c:c + 1], ker[:, :, c:c + 1, None], 1, "SAME",
                                   data_format="NCHW") for c in range(6)], -1)
''',
    "stride_per_channel": '''
def f(img, ker):
    return tf.concat([tf.nn.conv2d(img[..., c:c + 1], ker[:, :, c:c + 1, None], 1 + c % 1,
                                   "SAME") for c in range(6)], -1)
''',
    # review 42: a map_fn over the channels in another order (or with repeats) is not the
    # depthwise form's order; a prefix test on "tf.range(" took it and built a wrong rewrite
    "map_fn_reversed_channels": '''
def f(img, ker):
    return tf.map_fn(lambda c: tf.nn.conv2d(img[..., c, None], ker[:, :, c:c + 1, None], 1,
                                            "SAME")[..., 0],
                     tf.range(6)[::-1], fn_output_signature=tf.float32)
''',
    "map_fn_channels_repeated": '''
def f(img, ker):
    return tf.map_fn(lambda c: tf.nn.conv2d(img[..., c, None], ker[:, :, c:c + 1, None], 1,
                                            "SAME")[..., 0],
                     tf.range(6) % 3, fn_output_signature=tf.float32)
''',
    "concat_along_width": '''
def f(img, ker):
    return tf.concat([tf.nn.conv2d(img[..., c:c + 1], ker[:, :, c:c + 1, None], 1, "SAME")
                      for c in range(6)], 2)
''',
}


def _inputs() -> tuple:
    g = tf.random.Generator.from_seed(9)
    return g.normal([3, 11, 13, 6]), g.normal([3, 3, 6])


@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_per_channel_convolutions_become_one_depthwise_conv(name):
    text = HEAD + SPELLINGS[name]
    args = _inputs()
    ctx = _context(text, args)
    lever = ChannelConvsToDepthwise()
    assert lever.applies(ctx) is None
    new = lever.build(text, ctx)
    # what may be left of the loop: the kernels gathered, one slice per channel, where the
    # filter is not one slice of a tensor at the channel (no convolution either way)
    assert "_tfperf_channel_convs(" in new and _loops_left(new) in ([], ["ListComp"]), new
    assert new.split("def f(")[1].split("\ndef ")[0].count("conv2d(") == 0, new
    _agrees(text, new, args)
    ns: dict = {}
    exec(compile(new, "<conv>", "exec"), ns)
    traced = tf.function(ns["f"])(*args)
    eq = compare_outputs(snapshot(_run(text, args)), snapshot(traced))
    assert eq.equivalent is True, eq.reason


@pytest.mark.parametrize("name", sorted(TWINS))
def test_loops_that_are_not_one_channel_each_are_left_alone(name):
    text = HEAD + TWINS[name]
    args = _inputs()
    if name == "channels_first":  # NCHW convolutions run on GPUs only: read, not run
        ctx = _context(HEAD + "def f(img, ker):\n    return img\n", args)
        ctx.target.source = text
    else:
        ctx = _context(text, args)
    assert ChannelConvsToDepthwise().applies(ctx) is not None


def test_a_loop_over_some_channels_raises_rather_than_differs():
    text = HEAD + SPELLINGS["append_concat"].replace("range(img.shape[-1])", "range(4)")
    args = _inputs()
    new = ChannelConvsToDepthwise().build(text, _context(text, args))
    with pytest.raises(ValueError, match="one one-input filter per channel"):
        _run(new, args)


def test_a_flipped_kernel_planted_in_the_rewrite_disagrees():
    text = HEAD + SPELLINGS["append_concat"]
    args = _inputs()
    new = ChannelConvsToDepthwise().build(text, _context(text, args))
    assert "moveaxis(ker[:, :, :, None], 2, 0)" in new, new  # one slice, no loop
    wrong = new.replace("moveaxis(ker[:, :, :, None], 2, 0)",
                        "moveaxis(ker[::-1, :, :, None], 2, 0)")
    with pytest.raises(AssertionError):
        _agrees(text, wrong, args)


def test_kernels_that_are_not_one_slice_are_gathered_per_channel():
    text = HEAD + SPELLINGS["named_slices_axis3"]  # tf.reshape(ker[:, :, i], ...) per channel
    args = _inputs()
    new = ChannelConvsToDepthwise().build(text, _context(text, args))
    assert "tf.stack([tf.reshape(ker[:, :, i], [3, 3, 1, 1]) for i in range(6)])" in new, new
    _agrees(text, new, args)
