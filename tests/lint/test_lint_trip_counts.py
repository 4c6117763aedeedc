"""How often a loop runs (``tfperf.lint.analysis.trips``), asked by the per-step rules before
they report, and the false classes of issue 25's precision round 4 it removes: TFP111 on a
model called from a caller's loop over nine URLs (a literal list through a name) or ten
steps; TFP310 on a k-means step run at most ``max_iterations = 100`` times; TFP102 on a sum
over K model calls; TFP702 on a pretrained table. Each planted with its hot twin, which is
still reported."""

from __future__ import annotations

import ast

import pytest
from project_files import found, write_project

from tfperf.lint.analysis.trips import reaching_value, runs_per_entry, trip_count
from tfperf.lint.semantic import Context
from tfperf.lint.session import LintRequest, run


def _loops(source: str) -> tuple[Context, list[ast.AST]]:
    ctx = Context(ast.parse(source), source, "m.py")
    return ctx, [n for n in ast.walk(ctx.tree) if type(n) in (ast.For, ast.While)]


@pytest.mark.parametrize(("source", "count"), [
    ("for i in range(20):\n    f(i)\n", 20),
    ("for i in range(2, 10):\n    f(i)\n", 8),
    ("urls = ['a', 'b', 'c']\nfor u in urls:\n    f(u)\n", 3),
    ("n = 100\nfor i in range(n):\n    f(i)\n", 100),
    ("k = 100\ni, done = 0, False\nwhile not done and i < k:\n    i += 1\n", 100),
    ("while i <= 9:\n    i += 1\n", 10),
    ("for i in range(n):\n    f(i)\n", None),  # unbound
    ("n = 3\nn = 4\nfor i in range(n):\n    f(i)\n", 4),  # the binding that reaches the loop
    ("n = 3\nif a:\n    n = 400\nfor i in range(n):\n    f(i)\n", None),  # either
    ("for x in data:\n    f(x)\n", None),
    ("for images, labels in ds.take(1):\n    f(images)\n", 1),
    ("while not done:\n    step()\n", None),
    # A progress bar yields what it wraps; `trange(n)` is `tqdm(range(n))`.
    ("from tqdm import tqdm\nfor i in tqdm(range(20), desc='x'):\n    f(i)\n", 20),
    ("from tqdm.auto import trange\nfor i in trange(20):\n    f(i)\n", 20),
    ("from tqdm import tqdm\nfor i, x in enumerate(tqdm(data)):\n    f(x)\n", None),
    ("def tqdm(x):\n    return x[:2]\nfor i in tqdm(range(20)):\n    f(i)\n", None),
])
def test_trip_count_only_from_literals(source, count):
    ctx, loops = _loops(source)
    assert trip_count(ctx, loops[0]) == count


# Stop 42 (round 13's TFP110 false class): the count is read from the binding that reaches
# the loop, flow-sensitively, and left unknown wherever another value may reach it.
@pytest.mark.parametrize(("source", "counts"), [
    # rebound later in the same cell: each loop sees its own binding
    ("steps = 1\nfor j in range(0, steps):\n    f()\nsteps = 8\n"
     "for j in range(0, steps):\n    f()\n", [1, 8]),
    ("steps = 1\nsteps = 500\nfor j in range(0, steps):\n    f()\n", [500]),
    ("steps = 1\nif a:\n    steps = 500\nfor j in range(steps):\n    f()\n", [None]),
    ("steps = 1\nsteps += 7\nfor j in range(steps):\n    f()\n", [None]),
    ("steps = 1\nsteps = len(data)\nfor j in range(steps):\n    f()\n", [None]),
    # an enclosing loop rebinding it after the inner loop reaches the next trip
    ("steps = 1\nfor e in range(3):\n    for j in range(steps):\n        f()\n"
     "    steps = 100\n", [3, None]),
    ("for e in range(3):\n    steps = 2\n    for j in range(steps):\n        f()\n"
     "    steps = 100\n", [3, 2]),
    ("steps = 1\nif a:\n    for j in range(steps):\n        f()\n", [1]),
    ("n = 5\ndef g():\n    global n\n    n = 100\nfor j in range(n):\n    f()\n", [None]),
    ("steps = 1\ndef h():\n    steps = 9\nfor j in range(steps):\n    f()\n", [1]),
    ("n = 1\nwhile i < n:\n    n = 10\n", [None]),  # the test is read after the body
    ("def g(steps):\n    for j in range(steps):\n        f()\n", [None]),
    ("for j in range(len([1, 2, 3])):\n    f()\n", [3]),
    ("urls = ['a', 'b']\nn = len(urls)\nfor j in range(1, n):\n    f()\n", [1]),
    ("n = 5\nm = n\nfor j in range(0, m, 2):\n    f()\n", [3]),
    ("for j in range(0, 10, 0):\n    f()\n", [None]),
])
def test_trip_count_reads_the_binding_that_reaches_the_loop(source, counts):
    ctx, loops = _loops(source)
    loops.sort(key=lambda n: n.lineno)
    assert [trip_count(ctx, loop) for loop in loops] == counts


def test_reaching_value_leaves_a_comprehension_variable_to_the_comprehension():
    source = "n = 500\nrows = [x for n in [1, 2] for x in range(n)]\nm = n\n"
    ctx, _ = _loops(source)
    loads = [n for n in ast.walk(ctx.tree) if type(n) is ast.Name and n.id == "n"
             and type(n.ctx) is ast.Load]
    inner, outer = sorted(loads, key=lambda n: n.lineno)
    assert reaching_value(ctx, inner) == (True, None)
    decided, value = reaching_value(ctx, outer)
    assert decided and value.value == 500


def test_tfp111_quiet_on_nine_augmentations_of_one_batch_taken_once(tmp_path):
    # The image classification tutorials' augmentation grid: nine calls in all.
    grid = """\
import tensorflow as tf
import matplotlib.pyplot as plt
data_augmentation = tf.keras.Sequential([tf.keras.layers.RandomFlip("horizontal")])
for image, _ in train_dataset.take(1):
    first_image = image[0]
    for i in range(9):
        augmented_image = data_augmentation(tf.expand_dims(first_image, 0))
        plt.imshow(augmented_image[0] / 255)
"""
    assert _codes(tmp_path, {"m.py": grid}, "TFP111") == []


def test_runs_per_entry_multiplies_nested_loops_and_gives_up_on_any_unknown():
    ctx, _ = _loops("for a in range(3):\n    for b in [1, 2]:\n        f(a, b)\n"
                    "for e in range(3):\n    for x in data:\n        g(x)\n")
    calls = {c.func.id: c for c in ast.walk(ctx.tree)
             if type(c) is ast.Call and type(c.func) is ast.Name and c.func.id in "fg"}
    assert runs_per_entry(ctx, calls["f"]) == 6
    assert runs_per_entry(ctx, calls["g"]) is None


PREDICT = """\
import numpy as np
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])

def predict(img):
    logits = model(img.reshape((1, 576)), training=False)
    return int(np.argmax(logits))

urls = ["a.jpg", "b.jpg", "c.jpg", "d.jpg", "e.jpg", "f.jpg", "g.jpg", "h.jpg", "i.jpg"]
for url in urls:
    print(predict(load(url)))
"""


def _codes(tmp_path, files, code, preview=False):
    write_project(tmp_path, files)
    outcome = run(LintRequest(paths=[str(tmp_path)], cache=False, select=[code],
                              preview=preview))
    return [(p, line) for _, p, line, _ in found(outcome, tmp_path, code)]


def test_tfp111_quiet_where_the_callers_loop_runs_nine_literal_times(tmp_path):
    assert _codes(tmp_path, {"m.py": PREDICT}, "TFP111") == []


def test_tfp111_still_reported_where_the_callers_loop_walks_data(tmp_path):
    hot = PREDICT.replace("for url in urls:", "for url in open('urls.txt'):")
    assert _codes(tmp_path, {"m.py": hot}, "TFP111") == [("m.py", 7)]


TEST_LOOP = """\
import numpy as np
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])

def test(model, inputs):
    return model(inputs).numpy()

seq = np.zeros(8)
for i in range(10):
    seq = test(model, np.asarray([seq]))[0]
"""


def test_tfp111_quiet_on_a_parameter_given_one_input_ten_times(tmp_path):
    assert _codes(tmp_path, {"m.py": TEST_LOOP}, "TFP111") == []
    hot = TEST_LOOP.replace("range(10)", "range(1000)")
    assert _codes(tmp_path, {"m.py": hot}, "TFP111") == [("m.py", 7)]


KMEANS = """\
import tensorflow as tf

max_iterations = 100

def assign_cluster(X, centroids):
    v = tf.expand_dims(X, 0)
    c = tf.expand_dims(centroids, 1)
    d = tf.reduce_sum(tf.square(tf.subtract(v, c)), 2)
    return tf.argmin(d, 0), tf.reduce_min(d), tf.reduce_max(d)

X = tf.random.uniform([5, 12])
centroids = X[:2]
i, converged = 0, False
while not converged and i < max_iterations:
    i += 1
    Y, lo, hi = assign_cluster(X, centroids)
"""


def test_tfp310_quiet_on_a_step_run_at_most_max_iterations_times(tmp_path):
    assert _codes(tmp_path, {"m.py": KMEANS}, "TFP310", preview=True) == []
    hot = KMEANS.replace("max_iterations = 100", "max_iterations = 100000")
    assert _codes(tmp_path, {"m.py": hot}, "TFP310", preview=True) == [("m.py", 5)]


GUESS = """\
import tensorflow as tf

def guess_labels(u_aug, model, K):
    u_logits = tf.nn.softmax(model(u_aug[0]), axis=1)
    for k in range(1, K):
        u_logits = u_logits + tf.nn.softmax(TERM, axis=1)
    return u_logits / K
"""


def test_tfp102_quiet_where_each_summed_term_is_a_model_call(tmp_path):
    assert _codes(tmp_path, {"m.py": GUESS.replace("TERM", "model(u_aug[k])")},
                  "TFP102") == []
    assert _codes(tmp_path, {"m.py": GUESS.replace("TERM", "u_aug[k]")},
                  "TFP102") == [("m.py", 6)]


EMBEDDING = """\
import numpy as np
import tensorflow as tf

class Embedding:
    def __init__(self, vocab):
        self.table = tf.Variable(VALUE, trainable=False)

    def __call__(self, ids):
        return tf.gather(self.table, ids)
"""


@pytest.mark.parametrize("value", ["vocab.embedding.idx_to_vec.asnumpy()",
                                   "np.load('glove.npy')", "vocab"])
def test_tfp702_quiet_on_a_table_read_in(tmp_path, value):
    assert _codes(tmp_path, {"m.py": EMBEDDING.replace("VALUE", value)}, "TFP702",
                  preview=True) == []


def test_tfp702_still_reported_on_a_table_built_here(tmp_path):
    built = EMBEDDING.replace("VALUE", "tf.linalg.band_part(tf.ones([8, 8]), -1, 0)")
    assert _codes(tmp_path, {"m.py": built}, "TFP702", preview=True) == [("m.py", 6)]
