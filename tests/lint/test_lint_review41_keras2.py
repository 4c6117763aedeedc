"""Stop 41 review: TFP110 on standalone multi-backend Keras pinned at 2.2 or older (a TF 1.x
graph backend, where ``predict`` runs a cached graph function and ``model(x)`` on a NumPy
array adds ops per call) is quiet for modules importing standalone ``keras``; ``tf.keras``
modules beside them, and standalone Keras pinned from 2.3 on or not pinned, are as before.
Also TFP110's hint for recurrent models leads with the traced call."""

from __future__ import annotations

import pytest
from project_files import found, write_project

from tfperf.lint.session import LintRequest, run

# Precision round 12's false class (a stock-price notebook of a Keras-2.2.4 tutorial folder):
# a forecast fed back one window at a time.
FORECAST = """\
import numpy as np
{imports}

model = Sequential()
model.add(LSTM(64, input_shape=(50, 1)))
model.add(Dense(1))
model.compile(loss="mse", optimizer="adam")
window = np.load("prices.npy")[:50].reshape(1, 50, 1)
out = []
for _ in range(100):
    prediction = model.predict(window)
    out.append(prediction[0, 0])
    window = np.append(window[:, 1:, :], prediction.reshape(1, 1, 1), axis=1)
"""
STANDALONE = "from keras.models import Sequential\nfrom keras.layers import LSTM, Dense"
TF_KERAS = ("from tensorflow.keras.models import Sequential\n"
            "from tensorflow.keras.layers import LSTM, Dense")


def _lint(root, files):
    (root / ".git").mkdir()
    write_project(root, files)
    outcome = run(LintRequest(paths=[str(root)], cache=False, select=["TFP110"]))
    return [(path, line) for _, path, line, _ in found(outcome, root, "TFP110")]


@pytest.mark.parametrize("requirements", [
    "Keras==2.2.4\nnumpy==1.16.4\n", "keras<2.3\n", "Keras==2.1.6 ; python_version < '3.8'\n"])
def test_standalone_keras_pinned_2_2_is_quiet(tmp_path, requirements):
    assert _lint(tmp_path, {"requirements.txt": requirements,
                            "forecast.py": FORECAST.format(imports=STANDALONE)}) == []


def test_tf_keras_beside_the_same_pin_is_still_reported(tmp_path):
    assert _lint(tmp_path, {"requirements.txt": "Keras==2.2.4\nnumpy==1.16.4\n",
                            "forecast.py": FORECAST.format(imports=TF_KERAS)}) \
        == [("forecast.py", 12)]


@pytest.mark.parametrize("requirements", [
    "numpy==1.16.4\n",                           # no Keras pin: the installed TF 2
    "Keras==2.4.3\nnumpy\n",                     # Keras 2.4+: a tf.keras front end
    "keras>=2.2\n",                              # admits later Keras
    "Keras==2.2.4\ntensorflow==2.3.0\n",         # a TensorFlow pin decides
    "Keras-Preprocessing==1.0.5\n",               # another package
])
def test_standalone_keras_otherwise_is_reported(tmp_path, requirements):
    assert _lint(tmp_path, {"requirements.txt": requirements,
                            "forecast.py": FORECAST.format(imports=STANDALONE)}) \
        == [("forecast.py", 12)]


def test_the_pin_of_a_parent_folder_counts_and_notebooks_too(tmp_path):
    import json

    cell = FORECAST.format(imports=STANDALONE)
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [],
                     "execution_count": None, "source": cell}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    assert _lint(tmp_path, {"requirements.txt": "Keras==2.2.4\n",
                            "5. Stock/Stock.ipynb": json.dumps(nb)}) == []


def _hints(root, files):
    (root / ".git").mkdir()
    write_project(root, files)
    outcome = run(LintRequest(paths=[str(root)], cache=False, select=["TFP110"],
                              tf_version="2.15"))
    return [f.hint for f in outcome.findings if f.code == "TFP110"]


def test_a_recurrent_model_hint_leads_with_the_traced_call(tmp_path):
    # Precision 12's timing (LSTM(128), one input, TF 2.21 CPU): predict 246 ms, eager
    # model(x) 336 ms, tf.function(model) 7.7 ms per call.
    (hint,) = _hints(tmp_path, {"forecast.py": FORECAST.format(imports=TF_KERAS)})
    assert hint.startswith("wrap the model in a tf.function")
    assert "LSTM" in hint


@pytest.mark.parametrize("layer", ["GRU(8)", "SimpleRNN(8)", "Bidirectional(LSTM(8))",
                                   "RNN(LSTMCell(8))"])
def test_every_recurrent_layer_counts(tmp_path, layer):
    src = FORECAST.format(imports="import tensorflow as tf\nfrom tensorflow.keras.layers import *"
                          ).replace("from tensorflow.keras.models import Sequential", "")
    src = src.replace("model = Sequential()", "model = tf.keras.Sequential()").replace(
        "LSTM(64, input_shape=(50, 1))", layer)
    (hint,) = _hints(tmp_path, {"forecast.py": src})
    assert hint.startswith("wrap the model in a tf.function")


def test_a_feed_forward_model_keeps_the_direct_call_first(tmp_path):
    src = FORECAST.format(imports=TF_KERAS).replace(
        "LSTM(64, input_shape=(50, 1))", "Dense(64)").replace(", LSTM", "")
    (hint,) = _hints(tmp_path, {"forecast.py": src})
    assert hint.startswith("call the model directly")
    # a model the code does not show (loaded from a file) may be recurrent: said too
    assert "recurrent model needs the tf.function" in hint
