"""The counters compare(counters=True) records, on real TensorFlow: exact values and lines."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.tf


@pytest.fixture(scope="module")
def counted():
    tf = pytest.importorskip("tensorflow")
    from tfperf.bench import compare

    @tf.function(jit_compile=True)
    def fused(x):
        return tf.reduce_sum(tf.tanh(x) * 2.0)

    @tf.function
    def plain(x, k):
        return x * k

    def eager(x):
        return tf.reduce_sum(tf.exp(x) + 1.0)  # three eager ops: exp, add, sum

    def syncing(x):
        return float(tf.reduce_sum(x))  # one host sync per call

    def retracing(x, _n=[0]):  # noqa: B006 - a call counter kept on the function
        _n[0] += 1
        return plain(x, float(_n[0]))  # a new Python float per call: a trace per call

    report = compare({"fused": fused, "eager": eager, "syncing": syncing,
                      "retracing": retracing}, (tf.ones([4]),), budget=0.1, counters=True,
                     check_equivalence=False, max_rounds=0)
    return {v.name: v.counters for v in report.variants}


def test_xla_compilations_and_graph_ops_of_a_jit_function(counted):
    c = counted["fused"]
    assert (c["traces"], c["xla_compilations"], c["host_syncs"], c["eager_ops"]) == (1, 1, 0, 0)
    assert c["graph_ops"] >= 4  # placeholder, tanh, mul, sum, identity…
    (row,) = c.sites["traces"]
    assert row["function"].endswith("fused") and row["graph_ops"] == c["graph_ops"]


def test_eager_ops_count_the_two_steady_calls(counted):
    c = counted["eager"]
    assert c["eager_ops"] == 2 * 3 and c["traces"] == 0 and c["graph_ops"] == 0
    assert sum(r["count"] for r in c.sites["eager_ops"]) == 6


def test_host_syncs_over_the_three_calls_with_their_line(counted):
    c = counted["syncing"]
    assert c["host_syncs"] == 3
    (row,) = c.sites["host_syncs"]
    assert row["path"].endswith("test_gate_counters.py") and row["kinds"] == {"float()": 3}


def test_a_python_scalar_retrace_per_call(counted):
    c = counted["retracing"]
    assert c["traces"] == 3 and c["xla_compilations"] == 0
    (row,) = c.sites["traces"]
    assert row["count"] == 3 and row["causes"][0]["argument"] == "k"
    assert row["causes"][0]["kind"] == "python_value"


def test_counters_round_trip_through_json(counted):
    from tfperf.bench.counters import Counters

    c = counted["syncing"]
    assert Counters.from_dict(c.to_dict()) == c
