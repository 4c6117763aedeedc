"""The memory view where other capabilities show it: bench's peak-memory column and the
article suite's memory claims (S14c, S15b). (%%tfprofile --memory: tests/notebook.)"""

from __future__ import annotations

import json
import textwrap

import pytest

pytestmark = pytest.mark.tf
MIB = 1 << 20


def test_bench_shows_a_peak_memory_column_when_the_cpu_allocator_counts(cli, tmp_path):
    (tmp_path / "b.py").write_text(textwrap.dedent('''
        import tensorflow as tf
        import tfperf.bench as bench

        @bench.inputs
        def make():
            return (tf.random.normal([64, 500, 128]), tf.random.normal([500]))

        @bench.variant(baseline=True)
        def broadcast(s, w):   # materialises the [64,500,128] product: 16.4 MB
            return tf.reduce_sum(s * tf.reshape(w, [1, -1, 1]), axis=1)

        @bench.variant
        def matvec(s, w):
            return tf.einsum("btc,t->bc", s, w)
    '''))
    counted = cli("bench", "b.py", "--budget", "0.3", "--json", cwd=tmp_path,
                      env={"TF_CPU_ALLOCATOR_USE_BFC": "1"})
    assert counted.returncode == 0, counted.stderr[-2000:]
    mem = {v["name"]: v["memory"] for v in json.loads(counted.stdout)["variants"]}
    product = 64 * 500 * 128 * 4
    assert mem["broadcast"]["above_start_bytes"] >= product
    assert "CPU:0 allocator peak" in mem["broadcast"]["source"]
    text = cli("bench", "b.py", "--budget", "0.3", cwd=tmp_path,
                   env={"TF_CPU_ALLOCATOR_USE_BFC": "1"}).stdout
    assert "peak mem" in text.splitlines()[2], text
    plain = cli("bench", "b.py", "--budget", "0.3", "--json", cwd=tmp_path)
    mem = {v["name"]: v["memory"] for v in json.loads(plain.stdout)["variants"]}
    assert mem["broadcast"]["peak_bytes"] is None  # oneDNN's allocator: not guessed


def test_the_suites_memory_claims_are_measured(tf, tmp_path):
    from tfperf.bench.suite.runner import run_suite
    from tfperf.bench.suite.verdict import DIRECTION_HOLDS, HOLDS

    result = run_suite(quick=True, only=["S14c", "S15b"])
    claims = {c.id: c for c in result.claims}
    s15b = claims["S15b"]
    assert s15b.measured is not None and s15b.measured > 1.3, s15b.reason
    assert s15b.verdict in (HOLDS, DIRECTION_HOLDS)
    assert s15b.details["float32"]["activations"] > s15b.details["mixed_float16"]["activations"]
    s14c = claims["S14c"]
    assert s14c.measured is not None, s14c.reason
    assert (s14c.verdict == HOLDS) == (s14c.measured >= 1.05)
    assert s14c.details["xla_peak_bytes"] and s14c.details["graph_peak_bytes"]

