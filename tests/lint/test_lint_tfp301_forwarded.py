"""TFP301 through an eager forwarder: a per-iteration Python number passed to a function
that hands it on (by name or in ``**kwargs``) to a tf.function, the forwarder in another
module; a warm run after the forwarder changed gives what a cold run gives."""

from __future__ import annotations

from project_files import found, write_project

from tfperf.lint.session import LintRequest, run

TRAINER = """\
import tensorflow as tf

class Trainer:
    @tf.function
    def loss(self, x, warmup=0.0):
        return tf.reduce_sum(x) * warmup

    def run(self, x, **kwargs):
        return self.loss(x, **kwargs)
"""

MAIN = """\
import tensorflow as tf
from trainer import Trainer

t = Trainer()
for step in range(1000):
    warmup = min(1.0, (step + 1) / 20)
    t.run(tf.ones([3]), warmup=warmup)
"""

# The forwarder no longer hands the number on: it passes a tensor.
CONVERTS = TRAINER.replace("return self.loss(x, **kwargs)",
                           "return self.loss(x, tf.constant(kwargs['warmup']))")


def _found(outcome, root) -> list[tuple[str, str, int | None, str]]:
    return found(outcome, root, "TFP301")


def test_a_number_handed_on_by_a_method_of_another_module_is_found_at_the_caller(tmp_path):
    write_project(tmp_path, {"trainer.py": TRAINER, "main.py": MAIN})
    found = _found(run(LintRequest(paths=[str(tmp_path)], cache=False, select=["TFP301"])),
                   tmp_path)
    assert [(p, line) for _, p, line, _ in found] == [("main.py", 7)]
    assert "run() of trainer.py" in found[0][3] and "tf.function loss" in found[0][3]
    # Linted alone, neither file shows it.
    for name in ("trainer.py", "main.py"):
        alone = run(LintRequest(paths=[str(tmp_path / name)], cache=False, select=["TFP301"]))
        assert _found(alone, tmp_path) == []


def test_warm_run_after_the_forwarder_changed_equals_a_cold_run(tmp_path):
    root = tmp_path / "proj"
    write_project(root, {"trainer.py": TRAINER, "main.py": MAIN})
    req = LintRequest(paths=[str(root)], cache_dir=tmp_path / "cache", select=["TFP301"])
    first = run(req)
    assert len(_found(first, root)) == 1
    (root / "trainer.py").write_text(CONVERTS)
    warm = run(req)
    assert warm.cache_hits == 1 and warm.analysed == 1
    cold = run(LintRequest(paths=[str(root)], cache=False, select=["TFP301"]))
    assert _found(warm, root) == _found(cold, root) == []
    (root / "trainer.py").write_text(TRAINER)
    back = run(req)
    assert back.analysed == 0 and _found(back, root) == _found(first, root)
