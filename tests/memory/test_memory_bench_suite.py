"""The memory view where other capabilities show it: bench's peak-memory column and the
article suite's memory claims (S14c, S15b). (%%tfprofile --memory: tests/notebook.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from cli_batch import run_cli_batch

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
    # the JSON and the table from one child with the counting allocator (one TensorFlow
    # start for both); the plain allocator needs a process of its own
    counted, table = run_cli_batch([["bench", "b.py", "--budget", "0.3", "--json"],
                                    ["bench", "b.py", "--budget", "0.3"]], cwd=tmp_path,
                                   env=dict(os.environ, TF_CPU_ALLOCATOR_USE_BFC="1"))
    assert counted.returncode == 0, counted.stderr[-2000:]
    mem = {v["name"]: v["memory"] for v in json.loads(counted.stdout)["variants"]}
    product = 64 * 500 * 128 * 4
    assert mem["broadcast"]["above_start_bytes"] >= product
    assert "CPU:0 allocator peak" in mem["broadcast"]["source"]
    assert table.returncode == 0, table.stderr[-2000:]
    assert "peak mem" in table.stdout.splitlines()[2], table.stdout
    plain = cli("bench", "b.py", "--budget", "0.3", "--json", cwd=tmp_path)
    mem = {v["name"]: v["memory"] for v in json.loads(plain.stdout)["variants"]}
    assert mem["broadcast"]["peak_bytes"] is None  # oneDNN's allocator: not guessed


def test_the_suites_memory_claims_are_measured(tf, tmp_path):
    # Measured in a fresh process, as `tfperf bench --suite` runs it. S15b reads each kind's
    # own most bytes live at once, the same in every run (1.14x on this CPU, three runs under
    # load): what was live at the step's peak read 0.3x to 2x between runs.
    code = textwrap.dedent("""
        import json
        from tfperf.bench.suite.runner import run_suite
        from tfperf.bench.suite.verdict import DIRECTION_HOLDS, HOLDS
        claims = {c.id: c for c in run_suite(quick=True, only=["S14c", "S15b"]).claims}
        s15b, s14c = claims["S15b"], claims["S14c"]
        d = s15b.details
        print(json.dumps({
            "s15b": [s15b.measured, s15b.verdict in (HOLDS, DIRECTION_HOLDS), s15b.reason,
                     d.get("float32", {}).get("activations"),
                     d.get("mixed_float16", {}).get("activations")],
            "s14c": [s14c.measured, s14c.verdict == HOLDS, s14c.reason,
                     bool(s14c.details.get("xla_peak_bytes")),
                     bool(s14c.details.get("graph_peak_bytes"))]}))
    """)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    measured, holds, reason, act32, act16 = out["s15b"]
    assert measured is not None and measured > 1.0, reason
    assert holds, reason
    assert act32 > act16
    measured, holds, reason, xla_peak, graph_peak = out["s14c"]
    assert measured is not None, reason
    assert holds == (measured >= 1.05)
    assert xla_peak and graph_peak
