"""bench's roofline with no FLOPs declared: counted on each variant's traced graph, judged
against the roof of its precision."""

from __future__ import annotations

import pytest

from tfperf.bench.comparison import Variant, compare

pytestmark = pytest.mark.tf


def test_undeclared_flops_are_counted_and_judged():
    tf = pytest.importorskip("tensorflow")
    a = tf.random.normal([192, 192])
    mm = tf.function(lambda x: tf.matmul(x, x))
    result = compare({"matmul": mm, "two": lambda x: tf.matmul(x, x) + x}, args=(a,),
                     budget=1.0, quick=True, roofline=True)
    one, two = result["matmul"].roofline, result["two"].roofline
    assert one["flops_source"].startswith("counted") and one["flops_per_call"] == 2 * 192**3
    assert two["flops_per_call"] == 2 * 192**3 + 192**2  # the add: one FLOP an element
    assert one["precision"] == "float32"
    judged = one["roof"]
    assert judged["error"] is None and 0 < judged["fraction"] <= 1
    assert judged["roof"]["precision"] == "fp32"


def test_a_rate_above_the_roof_is_an_error():
    tf = pytest.importorskip("tensorflow")
    a = tf.random.normal([64, 64])
    lie = Variant("lie", lambda x: x + 1.0, flops=1e15)  # declared: a petaFLOP per call
    result = compare([lie], args=(a,), budget=0.5, quick=True, roofline=True)
    judged = result["lie"].roofline["roof"]
    assert judged["fraction"] is None and "above the" in judged["error"]
    lines = [ln for ln in result.table().splitlines() if "lie: roofline" in ln]
    assert lines and "above the" in lines[0] and "% of the" not in lines[0]


def test_tune_shows_the_baseline_and_the_pick_against_the_roof(tmp_path):
    pytest.importorskip("tensorflow")
    from tfperf.tune.search import tune

    src = tmp_path / "work.py"
    src.write_text(
        "import tensorflow as tf\n\n"
        "def work(x):\n"
        "    return tf.matmul(x, x) + 1.0\n")
    import importlib.util

    spec = importlib.util.spec_from_file_location("work", src)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    import tensorflow as tf

    result = tune(module.work, (tf.ones([128, 128]),), budget=15)
    note = result.baseline["roofline"]
    # the FP32 roof, or the memory roof at its intensity when bandwidth was measured before
    assert note.startswith("roofline:") and ("% of the FP32 roof" in note
                                             or "% of the memory roof" in note)
    assert "baseline roofline:" in result.table()
