"""TFP302 through the project: a factory's new tf.function called on the spot, and a
decorated inner def made and called once, in a method another module runs per iteration
(lingvo's `self._GetHostTrainLoop(strategy)()` per `Run()`, held-out round 2's F008); a
warm run after the method changed gives what a cold run gives."""

from __future__ import annotations

from project_files import found, write_project

from tfperf.lint.session import LintRequest, run

PROGRAM = """\
import tensorflow as tf

class Program:
    def _make_loop(self, n):
        @tf.function
        def loop():
            return tf.range(n)
        return loop

    def run(self):
        return self._make_loop(10)()

    def sample(self, x):
        @tf.function
        def draw(v):
            return v * 2.0
        return draw(x)
"""

MAIN = """\
import tensorflow as tf
from program import Program

p = Program()
for step in range(1000):
    p.run()
    p.sample(tf.ones([3]))
"""

# The loop built once in __init__ and kept; the inner def hoisted to a method.
KEPT = PROGRAM.replace("    def run(self):\n        return self._make_loop(10)()",
                       "    def __init__(self):\n        self._loop = self._make_loop(10)\n\n"
                       "    def run(self):\n        return self._loop()").replace(
    "    def sample(self, x):\n        @tf.function\n        def draw(v):\n"
    "            return v * 2.0\n        return draw(x)",
    "    @tf.function\n    def sample(self, x):\n        return x * 2.0")


def _found(outcome, root) -> list[tuple[str, str, int | None, str]]:
    return found(outcome, root, "TFP302")


def _lint(root, **kw):
    return run(LintRequest(paths=[str(root)], select=["TFP302"], **kw))


def test_factory_and_inner_def_in_methods_run_per_iteration_elsewhere(tmp_path):
    write_project(tmp_path, {"program.py": PROGRAM, "main.py": MAIN})
    found = _found(_lint(tmp_path, cache=False), tmp_path)
    assert [(p, line) for _, p, line, _ in found] == [("program.py", 11), ("program.py", 14)]
    assert "_make_loop() returns a new tf.function" in found[0][3]
    assert "main.py:6" in found[0][3] and "main.py:7" in found[1][3]
    # program.py alone: nothing runs its methods per iteration; run() is entered from
    # outside, and a factory's result called on the spot there traces at every call.
    alone = _found(_lint(tmp_path / "program.py", cache=False), tmp_path)
    assert [(p, line) for _, p, line, _ in alone] == [("program.py", 11)]
    assert "called from outside this code" in alone[0][3]
    write_project(tmp_path / "k", {"program.py": KEPT, "main.py": MAIN})
    assert _found(_lint(tmp_path / "k", cache=False), tmp_path / "k") == []


def test_warm_run_after_the_methods_changed_equals_a_cold_run(tmp_path):
    root = tmp_path / "proj"
    write_project(root, {"program.py": PROGRAM, "main.py": MAIN})
    cache = tmp_path / "cache"
    first = _lint(root, cache_dir=cache)
    assert len(_found(first, root)) == 2
    (root / "program.py").write_text(KEPT)
    warm = _lint(root, cache_dir=cache)
    assert warm.cache_hits == 1 and warm.analysed == 1
    assert _found(warm, root) == _found(_lint(root, cache=False), root) == []
    (root / "program.py").write_text(PROGRAM)
    back = _lint(root, cache_dir=cache)
    assert back.analysed == 0 and _found(back, root) == _found(first, root)
