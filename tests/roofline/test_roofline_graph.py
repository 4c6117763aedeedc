"""A function's FLOPs counted on the graph it traces for its inputs."""

from __future__ import annotations

import pytest

from tfperf.roofline.graph import graph_cost

pytestmark = pytest.mark.tf


@pytest.fixture(scope="module")
def tf():
    return pytest.importorskip("tensorflow")


def test_nested_tf_function_calls_are_counted_inside(tf):
    inner = tf.function(lambda x, w: tf.nn.relu(tf.matmul(x, w)))
    cost = graph_cost(lambda x, w: tf.reduce_sum(inner(x, w), axis=1),
                      (tf.ones([32, 16]), tf.ones([16, 8])))
    assert cost.flops == 2 * 32 * 8 * 16 + 32 * 8 + (32 * 8 - 32)
    assert {o.type for o in cost.ops} == {"MatMul", "Relu", "Sum"} and not cost.uncounted


def test_an_input_signature_with_none_dimensions_is_counted_for_the_given_shapes(tf):
    spec = tf.TensorSpec([None, None], tf.float32)
    dynamic = tf.function(lambda a, b: tf.matmul(a, b), input_signature=[spec, spec])
    cost = graph_cost(dynamic, (tf.ones([64, 32]), tf.ones([32, 16])))
    assert cost.flops == 2 * 64 * 16 * 32 and not cost.uncounted


def test_python_loops_unroll_into_the_count_and_precision_follows_the_flops(tf):
    def loop(x):
        for _ in range(3):
            x = tf.matmul(x, x)
        return tf.cast(x, tf.float16) * tf.constant(2.0, tf.float16)

    cost = graph_cost(loop, (tf.ones([8, 8]),))
    assert cost.flops == 3 * 2 * 8**3 + 64 and cost.precision == "float32"


def test_a_function_that_does_not_trace_says_why(tf):
    cost = graph_cost(lambda x: float(x.numpy().sum()), (tf.ones([3]),))
    assert cost.error and cost.error.startswith("does not trace") and cost.flops == 0


def test_a_python_loop_over_a_dataset_is_counted_through_autograph_not_traced_forever(tf):
    # Traced without AutoGraph, `for b in ds` never ends (each next() is a new op); the
    # trace is stopped and AutoGraph's dataset loop counted instead. Before the limit this
    # grew to 24 GB and the kernel killed the process.
    def epoch(x):
        total = tf.constant(0.0)
        for batch in tf.data.Dataset.from_tensor_slices(x).batch(4):
            total += tf.reduce_sum(tf.matmul(batch, batch, transpose_b=True))
        return total

    cost = graph_cost(epoch, (tf.ones([16, 8]),))
    assert cost.error is None


def test_a_trace_that_unrolls_past_the_op_limit_is_stopped_and_says_why(tf, monkeypatch):
    import tfperf.roofline.graph as graph

    monkeypatch.setattr(graph, "MAX_TRACED_OPS", 50)

    def long_loop(x):
        for _ in range(200):
            x = x * 1.01
        return x

    cost = graph_cost(long_loop, (tf.ones([4]),))
    assert cost.error is not None and "passed 50 ops" in cost.error
    assert cost.flops == 0
    # the limit is lifted after the trace: an ordinary function traces again
    monkeypatch.setattr(graph, "MAX_TRACED_OPS", 10_000)
    assert graph_cost(long_loop, (tf.ones([4]),)).error is None


def test_list_of_a_dataset_stops_at_the_next_cap_far_below_the_op_cap(tf):
    # AutoGraph does not convert list(ds) (TensorFlow's own 32-next guard is off under it):
    # the trace unrolled to the 10,000-op cap, 27 s for a tiny dataset, most of it unwinding.
    import tfperf.roofline.graph as graph

    def epoch(x):
        return tf.concat(list(tf.data.Dataset.from_tensor_slices(x).batch(4)), axis=0)

    cost = graph_cost(epoch, (tf.ones([8, 4]),))
    assert cost.error is not None and "asked a dataset for over" in cost.error, cost.error
    assert f"over {graph.MAX_TRACED_NEXT} elements" in cost.error
    assert not cost.out_of_time and tf.executing_eagerly()


def test_a_few_next_calls_on_a_dataset_are_still_counted(tf):
    # Twin: a finite number of next() calls is a graph like any other.
    def two(x):
        it = iter(tf.data.Dataset.from_tensor_slices(x).batch(2, drop_remainder=True))
        return tf.matmul(next(it), next(it), transpose_b=True)

    cost = graph_cost(two, (tf.ones([4, 3]),))
    assert cost.error is None and cost.flops > 0


SLEEP_S, STEPS = 0.05, 40


def _slow_trace(tf, traced: list[int]):
    """Eager calls are quick; each op it traces waits SLEEP_S first (a trace far slower than
    its calls, which no estimate from the calls foresees)."""
    import time

    def slow(x):
        traced.append(0)  # one entry per trace of the whole function
        for _ in range(STEPS):
            if not tf.executing_eagerly():
                traced[-1] += 1
                time.sleep(SLEEP_S)
            x = x * 0.99
        return x

    return slow


def test_a_trace_past_its_limit_stops_there_and_autograph_is_not_tried(tf):
    traced: list[int] = []
    cost = graph_cost(_slow_trace(tf, traced), (tf.ones([4]),), limit_s=0.3)
    assert cost.out_of_time and cost.error == "not counted: the trace passed its 0.3 s limit"
    # Planted: a step takes at least SLEEP_S, so at most 0.3 / SLEEP_S + 1 steps are traced
    # before the limit, however busy the machine; and one trace only (no AutoGraph retry).
    assert len(traced) == 1 and traced[0] <= 0.3 / SLEEP_S + 1 < STEPS, traced
    assert tf.executing_eagerly()


def test_a_trace_within_its_limit_is_counted_in_full(tf):
    # Twin: no limit (as bench's roofline asks), the same function is traced to its end.
    traced: list[int] = []
    cost = graph_cost(_slow_trace(tf, traced), (tf.ones([4]),))
    assert cost.error is None and not cost.out_of_time and traced == [STEPS]
    assert cost.flops == STEPS * 4
