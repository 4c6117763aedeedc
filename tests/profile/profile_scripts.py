"""Small user scripts written for profile's tests (shared by the test modules here)."""
import textwrap
from pathlib import Path

from tfperf.profile import runner
from tfperf.profile.causes import Cause
from tfperf.profile.report import ProfileReport

# REINFORCE as a tutorial writes it: the tape is passed to a method that takes one gradient
# and one Adam update per time step of the episode (``{time_steps}`` losses an episode).
UPDATE_PER_TIME_STEP = """
    import tensorflow as tf

    class Policy:
        def __init__(self):
            self.model = tf.keras.Sequential([tf.keras.Input([4]), tf.keras.layers.Dense(2)])
            self.optimizer = tf.keras.optimizers.Adam(0.01)

        def train_net(self, tape, losses):
            for loss in losses:  # one update per time step
                grads = tape.gradient(loss, self.model.trainable_variables)
                self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))

    pi = Policy()
    x = tf.ones([1, 4])
    for episode in range(4):
        with tf.GradientTape(persistent=True) as tape:
            losses = [tf.reduce_sum(pi.model(x)) for _ in range({time_steps})]
        pi.train_net(tape, losses)
"""


def write_script(folder: Path, body: str, name: str = "train.py") -> Path:
    """``body`` dedented into ``folder/name``."""
    path = folder / name
    path.write_text(textwrap.dedent(body))
    return path


def line_of(path: Path, needle: str) -> int:
    """The 1-based number of the first line of ``path`` that holds ``needle``."""
    for number, text in enumerate(path.read_text().splitlines(), 1):
        if needle in text:
            return number
    raise AssertionError(needle)


def causes_at(rep: ProfileReport, line: int) -> list[Cause]:
    """The causes of ``rep`` that hold ``line`` among their hot lines."""
    return [c for c in rep.causes if any(h.line == line for h in c.lines)]


def run_planted(folder: Path, body: str, *, capture: bool = False) -> tuple[Path, ProfileReport]:
    """``body`` written into ``folder`` (:func:`write_script`) and profiled; the run must end
    without an error."""
    path = write_script(folder, body)
    rep = runner.run_script(path, capture=capture)
    assert rep.error is None, rep.error
    return path, rep
