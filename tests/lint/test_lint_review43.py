"""Review 43's lint items, each a false finding of stop 43's branch on ordinary code:
TFP413 on a general solve that is the fallback when the factor failed (NaN check), and on a
``self`` attribute a method later rebinds through a tuple; TFP114 on a map that TFP106
already reports (two findings for one call) and on an image op given a random argument per
element (batched, every image would get the same draw); TFP208 on lists of short vectors
spelled as literals (boxes, anchors: microseconds); TFP110 on ``self.predict`` in a Keras
model class that defines its own ``predict`` without Keras's."""

from __future__ import annotations

from project_files import found, write_project

from tfperf.lint.session import LintRequest, run


def _lint(root, files: dict[str, str], codes: list[str]) -> list[tuple[str, str, int | None]]:
    write_project(root, files)
    outcome = run(LintRequest(paths=[str(root)], cache=False, select=codes,
                              preview=True, tf_version="2.15"))
    return [(code, path, line) for code, path, line, _ in found(outcome, root)]


SOLVE_FALLBACK = """\
import tensorflow as tf

def solve_psd(K, b):
    L = tf.linalg.cholesky(K)
    if tf.reduce_any(tf.math.is_nan(L)):
        # GPU cholesky gives NaN on a matrix that is not positive definite: fall back
        return tf.linalg.solve(K, b)
    return tf.linalg.cholesky_solve(L, b)

def solve_twice(K, b):
    L = tf.linalg.cholesky(K)
    x = tf.linalg.cholesky_solve(L, b)
    return tf.linalg.solve(K, b), x
"""


def test_tfp413_quiet_on_the_fallback_of_a_failed_factor(tmp_path):
    # Before review 43 line 7 was reported: the solve runs where L is NaN.
    assert _lint(tmp_path, {"gp.py": SOLVE_FALLBACK}, ["TFP413"]) == [("TFP413", "gp.py", 13)]


SELF_REBOUND = """\
import tensorflow as tf

class GP:
    def __init__(self, K):
        self.L = tf.linalg.cholesky(K)

    def update(self, K2):
        self.L, self.aux = K2, None

    def mean(self, y):
        return tf.linalg.solve(self.L, y)

class Fixed:
    def __init__(self, K):
        self.L = tf.linalg.cholesky(K)

    def mean(self, y):
        return tf.linalg.solve(self.L, y)
"""


def test_tfp413_self_attribute_rebound_through_a_tuple(tmp_path):
    assert _lint(tmp_path, {"gp.py": SELF_REBOUND}, ["TFP413"]) == [("TFP413", "gp.py", 18)]


MAPS = """\
import numpy as np
import tensorflow as tf

def rotate(images):
    return tf.map_fn(lambda im: tf.image.rot90(im, k=1), images)

def dets(mats):
    return tf.map_fn(tf.linalg.det, mats)

def gamma(images):
    return tf.map_fn(lambda im: tf.image.adjust_gamma(im, np.random.uniform(0.8, 1.2)), images)

def contrast(images):
    def one(im):
        return tf.image.adjust_contrast(im, tf.random.uniform([], 0.5, 1.5))
    return tf.map_fn(one, images)
"""


def test_tfp114_one_finding_per_map_and_none_on_random_arguments(tmp_path):
    got = _lint(tmp_path, {"aug.py": MAPS}, ["TFP106", "TFP114"])
    # line 5: TFP106 reports the lambda already; line 8: only TFP114 can (an op passed
    # directly); lines 11 and 16: a draw per image, which one batched call would share.
    assert [g for g in got if g[0] == "TFP114"] == [("TFP114", "aug.py", 8)]
    assert ("TFP106", "aug.py", 5) in got


SMALL_VECTORS = """\
import numpy as np
import tensorflow as tf

def boxes_of(dets):
    boxes = []
    for d in dets:
        boxes.append(np.array([d.x1, d.y1, d.x2, d.y2]))
    return tf.constant(boxes, dtype=tf.float32)

def anchors():
    return tf.constant([np.array([s, s * 2.0]) for s in (32, 64, 128)])

def states(batch):
    return tf.convert_to_tensor([np.zeros(4) for _ in batch])

def images(n):
    return tf.convert_to_tensor([np.zeros((28, 28)) for _ in range(n)])

def grid(n):
    return tf.constant([np.array([[0.0, 1.0], [1.0, 0.0]]) for _ in range(n)])
"""


def test_tfp208_quiet_on_short_literal_vectors(tmp_path):
    # 64 vectors of 4 floats: 0.06 vs 0.03 ms (review 43, TF 2.21): the scalars' case.
    assert _lint(tmp_path, {"det.py": SMALL_VECTORS}, ["TFP208"]) == [
        ("TFP208", "det.py", 17), ("TFP208", "det.py", 20)]


OWN_PREDICT = """\
import numpy as np
import tensorflow as tf

class Policy(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.d = tf.keras.layers.Dense(2)

    def call(self, x):
        return self.d(x)

    def predict(self, x):
        return self(x).numpy()

    def act(self, state):
        return int(np.argmax(self.predict(state[None])[0]))

class Wrapped(tf.keras.Model):
    def predict(self, x, **kw):
        return super().predict(x, verbose=0, **kw)

    def act(self, state):
        return int(np.argmax(self.predict(state[None])[0]))

agent = Policy()
other = Wrapped()
state = np.zeros(4, np.float32)
for t in range(1000):
    a = agent.act(state)
    b = other.act(state)
    c = agent.predict(state[None])
"""


def test_tfp110_own_predict_of_a_keras_class_is_not_kerass(tmp_path):
    # Policy.predict is an eager call (TFP111 reports it at line 13), not Keras's predict;
    # Wrapped.predict hands on to Keras's, so line 23 stays reported.
    assert _lint(tmp_path, {"agent.py": OWN_PREDICT}, ["TFP110"]) == [
        ("TFP110", "agent.py", 23)]


ZERO_D = """\
import numpy as np
import tensorflow as tf

def losses(n):
    return tf.constant([np.zeros(()) for _ in range(n)])

def draws(n):
    return tf.constant([np.random.uniform(size=()) for _ in range(n)])
"""


def test_tfp208_zero_d_arrays_are_scalars(tmp_path):
    assert _lint(tmp_path, {"z.py": ZERO_D}, ["TFP208"]) == []
