"""Issue 25's precision round 5 false classes, made general, each with a twin still reported:

- TFP101 on a ``tf.range`` counter over the indices of a Python list (file paths loaded,
  shown and predicted one by one), and on a loop whose tensor work only feeds a plot, a
  print or a file write per item (a grid of generated images);
- TFP103 on host arrays (OpenCV crops divided by 255) appended then converted once;
- TFP306 on a training step that the code says runs a handful of times (a checkpoint demo's
  ``for _ in range(2)``), in the module or from another module's loop.

Every case is written for this test (the shapes, not the repositories' code)."""

from __future__ import annotations

import pytest
from project_files import found, write_project

from tfperf.lint.session import LintRequest, run


def _codes(tmp_path, files, code):
    write_project(tmp_path, files)
    outcome = run(LintRequest(paths=[str(tmp_path)], cache=False, select=[code]))
    return [(p, line) for _, p, line, _ in found(outcome, tmp_path, code)]


# --- TFP101: a tensor counter over a list's indices -------------------------------------

PATHS_LOOP = """\
import os
import tensorflow as tf
folder = "images/"
paths = [os.path.join(folder, f) for f in os.listdir(folder)]
for k in tf.range(len(paths)):
    k = tf.cast(k, tf.int64)
    show_and_predict(paths[k])
"""

PATHS_IN_FUNCTION = """\
import tensorflow as tf
def predict_all(model, folder):
    names = sorted(tf.io.gfile.listdir(folder))
    for k in tf.range(0, len(names)):
        image = tf.io.decode_png(tf.io.read_file(folder + names[k]))
        print(model.predict(tf.expand_dims(image, 0)))
"""

ROWS_BY_TENSOR_COUNTER = """\
import tensorflow as tf
t = tf.random.normal([100, 8])
w = tf.ones([8])
out = []
for k in tf.range(len(t)):
    out.append(tf.reduce_sum(t[k] * w))
"""


@pytest.mark.parametrize("source", [PATHS_LOOP, PATHS_IN_FUNCTION])
def test_tfp101_quiet_on_a_tensor_counter_over_a_python_list(tmp_path, source):
    assert _codes(tmp_path, {"m.py": source}, "TFP101") == []


def test_tfp101_still_reports_a_tensor_counter_over_a_tensors_rows(tmp_path):
    assert _codes(tmp_path, {"m.py": ROWS_BY_TENSOR_COUNTER}, "TFP101") == [("m.py", 5)]


def test_tfp101_quiet_on_a_list_counter_in_a_notebook_cell(tmp_path):
    import json
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [],
                     "execution_count": None, "source": PATHS_LOOP.splitlines(True)}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    assert _codes(tmp_path, {"n.ipynb": json.dumps(nb)}, "TFP101") == []


# --- TFP101: tensor work done only for a plot, a print, a write -------------------------

GRID = """\
import matplotlib.pyplot as plt
import tensorflow as tf
def save_grid(generator, noise, epoch):
    images = generator(noise, training=False)
    plt.figure(figsize=(4, 4))
    for i in range(images.shape[0]):
        plt.subplot(4, 4, i + 1)
        plt.imshow(tf.reshape(images[i, :], (28, 28)) * 255.0, cmap="gray")
        plt.axis("off")
    plt.savefig(f"grid_{epoch}.png")
"""

GRID_THROUGH_A_NAME = """\
import matplotlib.pyplot as plt
import tensorflow as tf
def save_grid(generator, noise, axes):
    images = generator(noise, training=False)
    for i in range(images.shape[0]):
        picture = tf.squeeze(images[i]) * 127.5 + 127.5
        axes[i].imshow(picture)
"""

PRINTED_ROWS = """\
import tensorflow as tf
scores = tf.random.normal([10, 5])
for i in range(scores.shape[0]):
    print("row", i, tf.argmax(scores[i]).numpy(), file=log)
"""

ROWS_KEPT_AND_PRINTED = """\
import tensorflow as tf
scores = tf.random.normal([10, 5])
best = []
for i in range(scores.shape[0]):
    top = tf.argmax(scores[i])
    best.append(top)
    print("row", i, top)
"""


@pytest.mark.parametrize("source", [GRID, GRID_THROUGH_A_NAME, PRINTED_ROWS])
def test_tfp101_quiet_where_the_tensor_work_only_feeds_a_plot_or_print(tmp_path, source):
    assert _codes(tmp_path, {"m.py": source}, "TFP101") == []


def test_tfp101_still_reports_rows_whose_result_is_kept_as_well_as_printed(tmp_path):
    assert _codes(tmp_path, {"m.py": ROWS_KEPT_AND_PRINTED}, "TFP101") == [("m.py", 4)]


# --- TFP103: host arrays appended, converted once ---------------------------------------

CV_CROPS = """\
import os
import random
import cv2
import tensorflow as tf
def crops(folder, size, r):
    high = []
    low = []
    for name in os.listdir(folder):
        img = cv2.cvtColor(cv2.imread(os.path.join(folder, name)), cv2.COLOR_BGR2RGB)
        h, w, _ = img.shape
        for i in range(16):
            y, x = random.randint(0, h - size), random.randint(0, w - size)
            crop = img[y:y + size, x:x + size]
            high.append(crop / 255)
            small = cv2.resize(crop, (size // r, size // r))
            low.append(small / 255.0)
    high = tf.convert_to_tensor(high, dtype=tf.float32)
    low = tf.convert_to_tensor(low, dtype=tf.float32)
    return high, low
"""

TF_CROPS = """\
import tensorflow as tf
def crops(img, size):
    high = []
    for i in range(16):
        crop = tf.image.random_crop(img, [size, size, 3])
        high.append(crop / 255)
    return tf.stack(high)
"""


def test_tfp103_quiet_on_host_arrays_appended_then_converted_once(tmp_path):
    assert _codes(tmp_path, {"m.py": CV_CROPS}, "TFP103") == []


def test_tfp103_still_reports_tensor_crops_appended_then_stacked(tmp_path):
    assert _codes(tmp_path, {"m.py": TF_CROPS}, "TFP103") == [("m.py", 6)]


# --- TFP306: a step run a handful of times ----------------------------------------------

STEP = """\
import tensorflow as tf
def train_one_step(model, example, optimizer):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.abs(model(example["x"]) - example["y"]))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss
"""

DEMO = STEP + """\
def train_and_checkpoint(net, optimizer, manager, dataset):
    for _ in range(TRIPS):
        loss = train_one_step(net, next(dataset), optimizer)
        manager.save()
"""

INLINE = """\
import tensorflow as tf
def demo(model, optimizer, x, y):
    steps = TRIPS
    for _ in range(steps):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""

CALLER = """\
from steps import train_one_step
def demo(net, optimizer, dataset):
    for _ in range(TRIPS):
        train_one_step(net, next(dataset), optimizer)
"""


@pytest.mark.parametrize(("files", "where"), [
    ({"m.py": DEMO}, ("m.py", 2)),
    ({"m.py": INLINE}, ("m.py", 5)),
    ({"steps.py": STEP, "main.py": CALLER}, ("steps.py", 2)),
])
def test_tfp306_quiet_on_a_step_run_twice_reported_at_fifty(tmp_path, files, where):
    twice = {k: v.replace("TRIPS", "2") for k, v in files.items()}
    assert _codes(tmp_path / "twice", twice, "TFP306") == []
    fifty = {k: v.replace("TRIPS", "50") for k, v in files.items()}
    assert _codes(tmp_path / "fifty", fifty, "TFP306") == [where]


def test_tfp306_still_reports_a_step_per_batch_of_a_dataset(tmp_path):
    hot = DEMO.replace("for _ in range(TRIPS):\n        loss = train_one_step(net, "
                       "next(dataset), optimizer)",
                       "for batch in dataset:\n        loss = train_one_step(net, batch, "
                       "optimizer)")
    assert "for batch in dataset" in hot
    assert _codes(tmp_path, {"m.py": hot}, "TFP306") == [("m.py", 2)]


# --- TFP601 (preview): a fit of one step in all ------------------------------------------

ONE_STEP_FIT = """\
import tensorflow as tf
def toy(n):
    x = tf.random.uniform([n, 8])
    return tf.data.Dataset.from_tensor_slices((x, x)).shuffle(n).map(lambda a, b: (a * 2, b))\\
        .batch(4)
def main(model):
    model.fit(x=toy(64), y=None, epochs=1, steps_per_epoch=STEPS)
"""


def _preview_codes(tmp_path, files, code):
    write_project(tmp_path, files)
    outcome = run(LintRequest(paths=[str(tmp_path)], cache=False, select=[code], preview=True,
                              tf_version="2.3"))
    return [(p, line) for _, p, line, _ in found(outcome, tmp_path, code)]


def test_tfp601_quiet_on_a_fit_of_one_step_reported_at_a_hundred(tmp_path):
    one = {"m.py": ONE_STEP_FIT.replace("STEPS", "1")}
    assert _preview_codes(tmp_path / "one", one, "TFP601") == []
    many = {"m.py": ONE_STEP_FIT.replace("STEPS", "100")}
    assert _preview_codes(tmp_path / "many", many, "TFP601") == [("m.py", 7)]
