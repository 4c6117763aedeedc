"""Stop 42's cross-module reach (TFP119 model factories, TFP313 large arrays, TFP709 tracing
options imported from another module): a warm run after the other module changed gives what
a cold run gives, and a change that removes the cause removes the finding."""

from __future__ import annotations

from project_files import write_project

from tfperf.lint.session import LintRequest, run

NETS = """\
import tensorflow as tf

def open_nsfw(weights_path=None):
    inputs = tf.keras.Input((8,))
    model = tf.keras.Model(inputs, tf.keras.layers.Dense(2)(inputs))
    if weights_path is not None:
        model.load_weights(weights_path)
    return model
"""

# The same name, no longer a model factory: a function that returns a plain callable.
NETS_PLAIN = """\
import tensorflow as tf

def open_nsfw(weights_path=None):
    return tf.nn.softmax
"""

INFER = """\
import tensorflow as tf
from nets import open_nsfw

def predict_image(x, model=None):
    if model is None:
        model = open_nsfw(weights_path="w.h5")
    return float(model(x[None])[0][1])
"""

DATA = """\
import numpy as np
TABLE = np.load("table.npy")
"""

DATA_SMALL = """\
import numpy as np
TABLE = np.zeros((4, 4))
"""

LOOKUP = """\
import tensorflow as tf
from data import TABLE

@tf.function
def lookup(ids):
    return tf.gather(TABLE, ids)
"""

OPTS = """\
import tensorflow as tf
run_options = tf.compat.v1.RunOptions(trace_level=tf.compat.v1.RunOptions.FULL_TRACE)
"""

TRAIN = """\
import tensorflow as tf
from opts import run_options

for step in range(10000):
    sess.run(train_op, options=run_options, run_metadata=tf.compat.v1.RunMetadata())
"""


def _codes(result, code):
    return sorted((f.location.path.rsplit("/", 1)[-1], f.location.line)
                  for f in result.findings if f.code == code)


def _warm_equals_cold(tmp_path, files, changed, new_text, code, where):
    root = tmp_path / "proj"
    write_project(root, files)
    req = LintRequest(paths=[str(root)], cache_dir=tmp_path / "cache", preview=True,
                      select=[code])
    first = run(req)
    assert _codes(first, code) == where
    (root / changed).write_text(new_text)
    warm = run(req)
    cold = run(LintRequest(paths=[str(root)], cache=False, preview=True, select=[code]))
    assert _codes(warm, code) == _codes(cold, code) == []
    (root / changed).write_text(files[changed])
    assert _codes(run(req), code) == where


def test_tfp119_factory_in_another_module(tmp_path):
    _warm_equals_cold(tmp_path, {"nets.py": NETS, "infer.py": INFER}, "nets.py", NETS_PLAIN,
                      "TFP119", [("infer.py", 5)])


def test_tfp313_array_from_another_module(tmp_path):
    _warm_equals_cold(tmp_path, {"data.py": DATA, "lookup.py": LOOKUP}, "data.py", DATA_SMALL,
                      "TFP313", [("lookup.py", 6)])


def test_tfp709_options_from_another_module(tmp_path):
    _warm_equals_cold(tmp_path, {"opts.py": OPTS, "train.py": TRAIN}, "opts.py",
                      "import tensorflow as tf\nrun_options = tf.compat.v1.RunOptions()\n",
                      "TFP709", [("train.py", 5)])
