"""A traced candidate says when the function prints: under tf.function a print runs when the
function is traced, not on every call, and part of the measured speed-up is the print left out
(a new user's pass: a layer's print was half of its baseline)."""

from __future__ import annotations

import textwrap

import pytest

from tfperf.tune.levers.tf_function import traced_prints

SRC = textwrap.dedent('''
    import tensorflow as tf

    def noisy(x):
        y = tf.reduce_sum(x * x)
        print("sum", y)
        return y

    def quiet(x):
        tf.print("sum")
        return tf.reduce_sum(x * x)

    def shadowed(x, print=None):
        return x.print(1)
''')


def test_builtin_prints_are_counted_and_nothing_else():
    assert traced_prints(SRC, "noisy") == 1
    assert traced_prints(SRC, "quiet") == 0  # tf.print runs per call
    assert traced_prints(SRC, "shadowed") == 0  # a method named print
    assert traced_prints("def f(:\n", "f") == 0  # unreadable: the search says so itself


@pytest.mark.tf
def test_a_tracing_candidate_of_a_printing_function_carries_the_note(tmp_path, capsys):
    tf = pytest.importorskip("tensorflow")
    from tfperf.core.usercode import import_file
    from tfperf.tune import tune

    path = tmp_path / "noisy_mod.py"
    path.write_text(SRC)
    mod = import_file(path, prefix="_tfperf_test_prints_")
    result = tune(mod.noisy, (tf.ones([8]),), budget=3)
    traced = [c for c in result.candidates if "tf.function" in c.name or "jit" in c.name]
    assert traced, result.table()
    assert all(any("print() call runs only when traced" in n for n in c.notes) for c in traced)
    eager = [c for c in result.candidates if c not in traced]
    assert not any("print()" in n for c in eager for n in c.notes)  # no trace, no note
