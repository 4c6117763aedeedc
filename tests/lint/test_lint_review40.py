"""Review 40's lint items: TFP110 and TFP117 give one finding per ``predict`` call (TFP117
stays quiet on a batch of one that TFP110 reports); TFP117 reads an input changed in place
(a method of the object holding it, a call given it) and a model changed through an
attribute assignment as a change; TFP110 is quiet on a scikit-learn-style ``model`` in a
program with no TensorFlow or Keras, and still reports it where a project module the script
imports builds the Keras model."""

from __future__ import annotations

from project_files import found, write_project

from tfperf.lint.session import LintRequest, run


def _lint(root, files: dict[str, str]) -> list[tuple[str, str, int | None]]:
    write_project(root, files)
    outcome = run(LintRequest(paths=[str(root)], cache=False, select=["TFP110", "TFP117"],
                              preview=True, tf_version="2.15"))
    return [(code, path, line) for code, path, line, _ in found(outcome, root)]


# A board game agent: the board is one example, changed in place by `board.play(...)`.
GAME = """\
import numpy as np
import tensorflow as tf

net = tf.keras.models.load_model("policy.keras")

def self_play(board, moves=200):
    for _ in range(moves):
        scores = net.predict(np.expand_dims(board.cells, 0))
        board.play(int(scores.argmax()))
"""


def test_one_finding_per_call_tfp110s(tmp_path):
    # Before review 40 TFP117 reported line 8 too ("the same input every iteration").
    assert _lint(tmp_path, {"game.py": GAME}) == [("TFP110", "game.py", 8)]


RECORDER = """\
import numpy as np
import tensorflow as tf

model = tf.keras.models.load_model("audio.keras")

class Listener:
    def __init__(self, mic):
        self.mic = mic
        self.window = np.zeros((16, 400), np.float32)

    def refill(self):
        self.window[:] = self.mic.grab(16)

    def listen(self, n):
        out = []
        for _ in range(n):
            out.append(model.predict(self.window))
            self.refill()
        return out

def stream(source, frames, n):
    for _ in range(n):
        source.fill_into(frames)
        yield model.predict(frames)

def copy_stream(chunks, frames):
    for chunk in chunks:
        np.copyto(frames, chunk)
        yield model.predict(frames)
"""


def test_input_changed_in_place_is_not_the_same_input(tmp_path):
    assert _lint(tmp_path, {"rec.py": RECORDER}) == []


def test_input_never_touched_is_still_reported(tmp_path):
    # The twin: nothing in the loop touches the window; 30 samples of one block.
    twin = RECORDER.replace("            self.refill()\n", "")
    assert _lint(tmp_path, {"rec.py": twin}) == [("TFP117", "rec.py", 17)]


SWEEP = """\
import numpy as np
import tensorflow as tf

model = tf.keras.models.load_model("cls.keras")
x_test = np.load("x_test.npy")

def calibrate(scales):
    probs = []
    for s in scales:
        model.layers[-1].scale = s
        probs.append(model.predict(x_test))
    return probs
"""


def test_model_changed_through_an_attribute_is_a_model_change(tmp_path):
    assert _lint(tmp_path, {"sweep.py": SWEEP}) == []
    twin = SWEEP.replace('        model.layers[-1].scale = s\n', "")
    assert _lint(tmp_path, {"sweep.py": twin}) == [("TFP117", "sweep.py", 10)]


FOREST = """\
import numpy as np
from sklearn.ensemble import GradientBoostingRegressor

tree_model = GradientBoostingRegressor().fit(np.ones((8, 2)), np.arange(8))

def score_rows(rows):
    return [tree_model.predict(np.asarray(r)[None]) for r in rows]
"""


def test_no_keras_anywhere_is_quiet(tmp_path):
    assert _lint(tmp_path, {"forest.py": FOREST}) == []


def test_a_keras_model_from_a_project_module_is_still_reported(tmp_path):
    # The helper module has no TensorFlow; the script that imports it builds a Keras model.
    helper = """\
        import numpy as np
        def score_rows(net_model, rows):
            out = []
            for r in rows:
                out.append(net_model.predict(np.asarray(r)[None]))
            return out
    """
    script = """\
        import numpy as np
        import tensorflow as tf
        from helper import score_rows
        score_rows(tf.keras.models.load_model("m.keras"), np.load("rows.npy"))
    """
    assert _lint(tmp_path, {"helper.py": helper, "main.py": script}) \
        == [("TFP110", "helper.py", 5)]
    # Without the script, nothing in the program uses Keras.
    (tmp_path / "main.py").unlink()
    assert _lint(tmp_path, {"helper.py": helper}) == []
