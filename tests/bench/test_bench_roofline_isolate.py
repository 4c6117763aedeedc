"""Roofline peaks (measured once, cached in the user cache dir) and --isolate peak memory."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

from tfperf.bench.roofline import Peaks, achieved, cache_file, nbytes_tree

pytestmark = pytest.mark.tf


def test_achieved_bandwidth_and_flops_against_peaks():
    peaks = Peaks("/CPU:0", bandwidth_gbs=10.0, matmul_gflops=100.0, measured_at=0.0)
    r = achieved(0.5, bytes_per_call=2e9, flops_per_call=25e9, peaks=peaks)
    assert r["gb_per_s"] == pytest.approx(4.0) and r["pct_peak_bandwidth"] == pytest.approx(40)
    assert r["gflop_per_s"] == pytest.approx(50.0) and r["pct_peak_flops"] == pytest.approx(50)


def test_nbytes_of_nested_tensors_and_arrays():
    tf = pytest.importorskip("tensorflow")
    import numpy as np

    value = {"a": tf.zeros([10, 10]), "b": [np.zeros(5, np.float64), 3]}
    assert nbytes_tree(value) == 400 + 40


def test_peaks_are_measured_once_then_cached(tmp_path, monkeypatch):
    pytest.importorskip("tensorflow")
    from tfperf.bench.roofline import machine_peaks

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_file() == tmp_path / "tfperf" / "roofline" / "peaks.json"
    first = machine_peaks()
    assert not first.cached and first.bandwidth_gbs > 0.1 and first.matmul_gflops > 0.1
    stored = json.loads(cache_file().read_text())
    assert len(stored) == 1
    second = machine_peaks()
    assert second.cached and second.bandwidth_gbs == first.bandwidth_gbs
    cache_file().write_text("not json")  # a damaged cache is measured again, not a crash
    assert not machine_peaks().cached


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="peak RSS via /proc")
def test_isolate_reports_peak_rss_per_variant(tmp_path, capsys):
    from tfperf.cli import main

    path = tmp_path / "membench.py"
    path.write_text(textwrap.dedent('''
        import tensorflow as tf
        import tfperf.bench as bench

        @bench.inputs
        def make():
            return (tf.ones([256, 256]),)

        @bench.variant
        def big_intermediate(x):  # a 256 MiB temporary
            return tf.reduce_sum(tf.tile(x, [32, 32]))
    '''))
    rc = main(["bench", str(path), "--isolate", "--json", "--budget", "0.3", "--quick"])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 0
    (big,) = (v["memory"] for v in doc["variants"])  # one variant: one child process
    assert "isolated process" in big["source"], big
    assert big["above_start_bytes"] >= 200 * 2**20  # the 256 MiB temporary, seen from outside
    assert big["peak_bytes"] > big["above_start_bytes"]


UNGUARDED = '''
import tfperf.bench as bench

def double(x):
    return [v * 2 for v in x]

result = bench.compare({"a": double, "b": double}, ([1.0, 2.0],), budget=0.05, isolate=True)
print("compared", result.exit_status)
'''


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="peak RSS via /proc")
def test_isolate_refuses_a_calling_script_without_a_main_guard(tmp_path):
    """Plain-Python variants: no TensorFlow, so the two scripts run in a second or so."""
    import os
    import subprocess

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    bare = tmp_path / "bare.py"
    bare.write_text(UNGUARDED)
    proc = subprocess.run([sys.executable, str(bare)], capture_output=True, text=True,
                          timeout=120, env=env)
    assert proc.returncode != 0 and "compared" not in proc.stdout
    assert "IsolateError" in proc.stderr and '__name__ == "__main__"' in proc.stderr
    guarded = tmp_path / "guarded.py"
    body = UNGUARDED.split("result = ")[1]
    guarded.write_text(UNGUARDED.split("result = ")[0] + 'if __name__ == "__main__":\n'
                       + "    result = " + body.replace("\nprint", "\n    print"))
    proc = subprocess.run([sys.executable, str(guarded)], capture_output=True, text=True,
                          timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "compared 0" in proc.stdout
