"""Levers as source edits: what each one writes, when it applies, and why it does not."""

from __future__ import annotations

import ast
import textwrap
from types import SimpleNamespace

import pytest

from tfperf.tune.device import DeviceFacts
from tfperf.tune.lever import LeverContext
from tfperf.tune.levers import loop_reduce, vectorized_map
from tfperf.tune.levers.precision import ReducedPrecision
from tfperf.tune.levers.tf_function import JitCompile, TfFunction
from tfperf.tune.source import SourceEditError, ensure_tf, set_tf_function

CASE = textwrap.dedent('''\
    import tensorflow as tf


    def f(samples, weights):
        results = []
        for i in range(samples.shape[0]):
            window_data = samples[i]
            acc = tf.zeros([samples.shape[2]])
            for j in range(samples.shape[1]):
                acc = acc + window_data[j] * weights[j]
            results.append(acc)
        return tf.stack(results)
    ''')


def _ctx(source: str, name: str = "f", facts: DeviceFacts | None = None,
         float_params: list[str] | None = None) -> LeverContext:
    target = SimpleNamespace(source=source, name=name, float_params=float_params or [])
    return LeverContext(target, facts or DeviceFacts())  # type: ignore[arg-type]


def test_tf_function_decorator_added_then_merged():
    text = set_tf_function(CASE, "f", {})
    assert "@tf.function\ndef f(" in text
    text = set_tf_function(text, "f", {"jit_compile": True})
    assert "@tf.function(jit_compile=True)\ndef f(" in text and text.count("@tf.function") == 1
    text = set_tf_function(text, "f", {"reduce_retracing": True})
    assert "@tf.function(jit_compile=True, reduce_retracing=True)" in text
    ast.parse(text)


def test_tf_is_imported_when_the_module_does_not():
    text, alias = ensure_tf('"""doc."""\nfrom __future__ import annotations\nimport numpy\n')
    assert alias == "tf"
    assert text.splitlines()[2] == "import tensorflow as tf"


def test_compile_levers_see_existing_decorators():
    jitted = set_tf_function(CASE, "f", {"jit_compile": True})
    assert TfFunction().applies(_ctx(jitted)) == "already a tf.function"
    assert JitCompile().applies(_ctx(jitted)) == "already jit_compile=True"
    assert JitCompile().applies(_ctx(CASE)) is None


def test_loop_reduce_offers_every_alignment():
    levers = loop_reduce.levers(_ctx(CASE))
    assert [lv.name for lv in levers] == [
        "loop→reduce_sum (line 9)", "loop→reduce_sum (line 9, window_data expanded)",
        "loop→reduce_sum (line 9, weights expanded)"]
    text = levers[2].build(CASE, _ctx(CASE))
    assert "for j in" not in text
    assert ("acc = acc + tf.reduce_sum(window_data[:samples.shape[1]] * tf.reshape("
            "weights[:samples.shape[1]], [-1] + [1] * (len(window_data.shape) - 1)), axis=0)"
            ) in text
    ast.parse(text)


def test_loop_reduce_leaves_other_loops_alone():
    other = CASE.replace("acc = acc + window_data[j] * weights[j]",
                         "acc = acc + window_data[j] * j")  # j used as a number
    assert loop_reduce.levers(_ctx(other)) == []


def test_vectorized_map_rewrites_the_per_example_loop():
    lever = vectorized_map.levers(_ctx(CASE))[0]
    assert lever.applies(_ctx(CASE)) is None
    text = lever.build(CASE, _ctx(CASE))
    assert "def _tfperf_example(samples_i):" in text
    assert "window_data = samples_i" in text
    assert "results = tf.vectorized_map(_tfperf_example, samples)" in text
    assert "return results" in text and "results = []" not in text
    ast.parse(text)


def test_batched_ops_run_the_loop_body_once_on_the_whole_batch():
    lever = vectorized_map.levers(_ctx(CASE))[1]
    assert lever.name == "loop→batched ops" and lever.traces is False
    assert lever.applies(_ctx(CASE)) is None
    text = lever.build(CASE, _ctx(CASE))
    assert "    window_data = samples\n" in text and "vectorized_map" not in text
    assert "    results = acc\n    return results" in text and "for i in" not in text
    ast.parse(text)
    short = CASE.replace("range(samples.shape[0])", "range(3)")  # a loop over the first 3
    assert "window_data = samples[:3]" in lever.build(short, _ctx(short))


def test_vectorized_map_needs_the_loop_form():
    plain = "import tensorflow as tf\n\ndef f(x):\n    return x * 2\n"
    why = vectorized_map.levers(_ctx(plain))[0].applies(_ctx(plain))
    assert why is not None and why.startswith("no per-example loop")
    index_used = CASE.replace("results.append(acc)", "results.append(acc * i)")
    why = vectorized_map.levers(_ctx(index_used))[0].applies(_ctx(index_used))
    assert why is not None and "used other than" in why


def test_a_missing_function_is_an_edit_error():
    with pytest.raises(SourceEditError, match="no module-level function 'g'"):
        set_tf_function(CASE, "g", {})


@pytest.mark.parametrize("facts, bf16, fp16", [
    (DeviceFacts(), False, False),                                      # plain CPU
    (DeviceFacts(cpu_flags=frozenset({"avx512_bf16"})), True, False),   # CPU with BF16
    (DeviceFacts(gpus=((7, 5),)), False, True),                         # T4: fp16 cores only
    (DeviceFacts(gpus=((8, 0),)), True, True),                          # A100
])
def test_precision_applies_only_with_fast_math(facts, bf16, fp16):
    ctx = _ctx(CASE, facts=facts, float_params=["samples", "weights"])
    assert (ReducedPrecision("bfloat16").applies(ctx) is None) == bf16
    assert (ReducedPrecision("float16").applies(ctx) is None) == fp16
    if not fp16:
        assert "GPU" in (ReducedPrecision("float16").applies(ctx) or "")


def test_precision_casts_the_float_arguments():
    ctx = _ctx(CASE, facts=DeviceFacts(gpus=((8, 0),)), float_params=["samples"])
    text = ReducedPrecision("float16").build(CASE, ctx)
    assert "    samples = tf.cast(samples, tf.float16)\n    results = []" in text
