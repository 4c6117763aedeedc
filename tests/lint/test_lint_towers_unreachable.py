"""Stop 38 precision: TF1 multi-device tower loops are not batched, unreachable code is not
analysed (held-out precision rounds: 5 false TFP103, one false TFP704)."""

from __future__ import annotations

import ast
import json
import textwrap
from pathlib import Path

import pytest

from tfperf.analysis.loops import loop_of
from tfperf.lint.engine import lint_source
from tfperf.lint.semantic import Context


def _codes(source: str) -> list[str]:
    return [f.code for f in lint_source(textwrap.dedent(source), "m.py")]


# One tower loop, its device chosen by the iteration, in several spellings: {device} is the
# device expression, {loop} the loop header, {index} the name the splits are indexed by.
_TOWER = """
import tensorflow as tf


def tower_loss(x, w):
    return tf.reduce_sum(tf.matmul(x, w))


def build(x, w, n_gpus, devices):
    x_split = tf.split(x, n_gpus)
    outs = []
    {loop}
        {pre}
        with {device}:
            outs.append(tower_loss(x_split[i], w))
    return tf.add_n(outs)
"""
_SLOTS = """
import tensorflow as tf


def tower_loss(x, w):
    return tf.reduce_sum(tf.matmul(x, w))


def build(x, w, n_gpus):
    x_split = tf.split(x, n_gpus)
    grads = [None] * n_gpus
    for i in range(n_gpus):
        with {device}:
            grads[i] = tower_loss(x_split[i], w)
    return tf.stack(grads)
"""
RANGE = "for i in range(n_gpus):"
SPELLINGS = [
    (RANGE, "pass", "tf.device('/gpu:%d' % i)"),
    (RANGE, "pass", "tf.device(f'/gpu:{i}')"),
    (RANGE, "pass", "tf.device('/gpu:{}'.format(i))"),
    (RANGE, "pass", "tf.compat.v1.device('/device:GPU:%d' % i)"),
    (RANGE, "dev = '/gpu:%d' % i", "tf.device(dev)"),
    (RANGE, "pass", "tf.device('/gpu:%d' % i), tf.name_scope('tower_%d' % i)"),
    ("for i, d in enumerate(devices):", "pass", "tf.device(d)"),
    ("for i, d in enumerate(devices):", "pass", "tf.name_scope('t'), tf.device(d)"),
]


@pytest.mark.parametrize(("loop", "pre", "device"), SPELLINGS)
def test_tower_loop_is_not_batched(loop: str, pre: str, device: str) -> None:
    source = _TOWER.format(loop=loop, pre=pre, device=device)
    assert "TFP103" not in _codes(source)
    # The loop model itself says "per device" (tune's loop levers read it too).
    tree = ast.parse(source)
    ctx = Context(tree, source, "m.py")
    loop_node = next(n for n in ast.walk(tree) if type(n) is ast.For)
    model = loop_of(ctx, loop_node)
    assert model is not None and model.per_device


@pytest.mark.parametrize("device", ["tf.device('/gpu:%d' % i)", "tf.device(f'/gpu:{i}')"])
def test_tower_loop_writing_slots_is_not_batched(device: str) -> None:
    assert "TFP103" not in _codes(_SLOTS.format(device=device))


@pytest.mark.parametrize("device", ["tf.device('/cpu:0')", "tf.name_scope('loop')"])
def test_loop_on_one_device_is_still_batched(device: str) -> None:
    """The twins: a device (or scope) that does not vary with the iteration is one device."""
    assert "TFP103" in _codes(_TOWER.format(loop=RANGE, pre="pass", device=device))
    assert "TFP103" in _codes(_SLOTS.format(device=device))


def test_loop_nested_inside_a_tower_keeps_its_findings() -> None:
    source = """
    import tensorflow as tf


    def build(xs, n_gpus):
        towers = []
        for i in range(n_gpus):
            with tf.device('/gpu:%d' % i):
                rows = []
                for j in range(xs[i].shape[0]):
                    rows.append(xs[i][j] * 2.0)
                towers.append(tf.stack(rows))
        return towers
    """
    found = lint_source(textwrap.dedent(source), "m.py")
    assert [f.location.line for f in found if f.code == "TFP103"] == [11]


_SESSION_LOOP = """
import tensorflow as tf


def train(sess, update, cost, W, X, Y, x_data, y_data):
    {guard}
    for step in range(21):
        sess.run(update, feed_dict={{X: x_data, Y: y_data}})
        print(step, sess.run(cost, feed_dict={{X: x_data, Y: y_data}}), sess.run(W))
"""


@pytest.mark.parametrize("guard", ["return None", "raise NotImplementedError('old')",
                                   "if False:\n        return", "if 0:\n        return"])
def test_unreachable_code_is_not_analysed(guard: str) -> None:
    live = _SESSION_LOOP.format(guard="pass")
    assert "TFP704" in _codes(live)  # the twin: the same loop, reachable
    if guard.startswith("if"):  # the loop itself under the dead branch
        body = textwrap.indent(_SESSION_LOOP.split("\n", 5)[5], "    ")
        dead = _SESSION_LOOP.split("\n", 5)[0:5]
        source = "\n".join([*dead[:-1], "    " + guard.split("\n")[0], body])
    else:
        source = _SESSION_LOOP.format(guard=guard)
    assert "TFP704" not in _codes(source), source


def test_code_after_a_branch_that_returns_is_reachable() -> None:
    source = _SESSION_LOOP.format(guard="if W is None:\n        return")
    assert "TFP704" in _codes(source)
    source = _SESSION_LOOP.format(guard="if False:\n        pass\n    else:\n        pass")
    assert "TFP704" in _codes(source)


def test_a_comprehension_inside_a_tower_keeps_its_findings() -> None:
    """A comprehension over one shard's elements is a per-element loop on one device: only
    the tower's own iterations are not batched (review 38b, item 2)."""
    tower = """
    import tensorflow as tf


    def towers(x, num_gpus):
        outs = []
        for i in range(num_gpus):
            with tf.device('/gpu:%d' % i):
                shard = x[i]
                sums = tf.stack([tf.reduce_sum(shard[j]) for j in range(shard.shape[0])])
            outs.append(sums)
        return outs
    """
    plain = tower.replace("            with tf.device('/gpu:%d' % i):\n", "") \
        .replace("                shard", "            shard").replace("                sums",
                                                                         "            sums")
    in_tower = sorted((f.code, f.location.line) for f in lint_source(textwrap.dedent(tower),
                                                                       "m.py")
                      if f.code.startswith("TFP10"))
    outside = sorted((f.code, f.location.line) for f in lint_source(textwrap.dedent(plain),
                                                                      "m.py")
                     if f.code.startswith("TFP10"))
    # The twin without the tower: the comprehension's findings and the loop's own append.
    assert ("TFP101", 9) in outside and ("TFP103", 9) in outside, outside
    assert ("TFP103", 10) in outside, outside
    # In the tower: the comprehension's findings stay; the tower's own append is dropped.
    assert ("TFP101", 10) in in_tower and ("TFP103", 10) in in_tower, in_tower
    assert ("TFP103", 11) not in in_tower, in_tower


_CELLS = ["import tensorflow as tf",
          "x = tf.constant([1.0, 2.0])\n{stop}",
          "total = tf.constant(0.0)\nfor i in range(1000):\n"
          "    total = total + tf.reduce_sum(x * i)\nprint(total)"]


def _notebook_codes(tmp_path: Path, stop: str) -> list[tuple[str, int | None, int]]:
    from tfperf.lint.session import LintRequest, run

    cells = [c.format(stop=stop) for c in _CELLS]
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [],
                     "execution_count": None, "source": c} for c in cells],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "nb.ipynb").write_text(json.dumps(nb))
    found = run(LintRequest(paths=[str(tmp_path / "nb.ipynb")], cache=False)).findings
    return [(f.code, f.location.cell, f.location.line) for f in found if f.location]


@pytest.mark.parametrize("stop", ["raise SystemExit('stop: run the cells below by hand')",
                                  "raise ValueError('shown on purpose')"])
def test_a_cell_that_raises_does_not_hide_the_cells_after_it(tmp_path: Path,
                                                             stop: str) -> None:
    """Each notebook cell runs on its own: a top-level raise in one cell leaves the later
    cells reachable (review 38b, item 1)."""
    assert ("TFP102", 3, 3) in _notebook_codes(tmp_path, "pass")  # the twin without it
    assert ("TFP102", 3, 3) in _notebook_codes(tmp_path, stop)


def test_a_raise_inside_a_function_still_hides_the_rest_of_it(tmp_path: Path) -> None:
    """The twin: the in-function skip stays (code after a function's raise never runs)."""
    stop = "def f(x):\n    raise SystemExit('stop')\n    total = tf.constant(0.0)\n" \
           "    for i in range(1000):\n        total = total + tf.reduce_sum(x * i)\n" \
           "    return total"
    assert not [c for c in _notebook_codes(tmp_path, stop) if c[0] == "TFP102" and c[1] == 2]
    live = stop.replace("    raise SystemExit('stop')\n", "")
    assert ("TFP102", 2, 5) in _notebook_codes(tmp_path, live)
