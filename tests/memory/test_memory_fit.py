"""Will it fit: the predicted peak from the traced graph, against figures known by arithmetic
and against a measured step; the largest batch; XLA's module; devices; the CLI."""

from __future__ import annotations

import json
import os
import textwrap

import pytest

from cli_batch import run_cli_batch

pytestmark = pytest.mark.tf
MIB = 1 << 20


def _case_study(tf):
    @tf.function
    def weighted(samples, weights):
        return tf.reduce_sum(samples * tf.reshape(weights, [1, -1, 1]), axis=1)

    return weighted, (tf.random.normal([64, 500, 128]), tf.random.normal([500]))


def test_the_case_study_peak_is_its_arithmetic(tf):
    """Inputs [64,500,128] and [500] held, the [64,500,128] product (S17's intermediate) and
    the [64,128] sum: 2 × 16.4 MB at the peak."""
    from tfperf.memory.fit import predict

    fn, args = _case_study(tf)
    p = predict(fn, args, {}, 64)
    truth = (64 * 500 * 128 + 500) * 4 + 64 * 500 * 128 * 4 + 64 * 128 * 4
    assert p.error is None and abs(p.peak_bytes - truth) <= 0.05 * truth
    assert p.live and p.live[0].shape == "(64, 500, 128)"


def test_another_batch_is_traced_not_run(tf):
    from tfperf.memory.fit import predict

    fn, args = _case_study(tf)
    small, big = predict(fn, args, {}, 16), predict(fn, args, {}, 256)
    assert 15 < big.transient_bytes / small.transient_bytes < 17  # linear in the batch


def test_an_mlp_training_step_is_predicted_within_15_percent_of_its_measured_peak(tf):
    """The step's own peak (above what it started with: the test process holds other tests'
    tensors); the benchmark compares whole peaks in fresh processes."""
    import keras

    from tfperf.memory.fit import measured_transient, predict

    model = keras.Sequential([keras.Input((512,)), keras.layers.Dense(1024, activation="relu"),
                              keras.layers.Dense(1024, activation="relu"),
                              keras.layers.Dense(10)])
    opt = keras.optimizers.Adam()

    @tf.function
    def train(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((model(x) - y) ** 2)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss

    x, y = tf.random.normal([512, 512]), tf.random.normal([512, 10])
    train(x, y)  # the optimizer's slots exist before either figure is taken
    predicted = predict(train, (x, y), {}, 512).transient_bytes
    measured = measured_transient(train, (x, y), {})
    assert measured and abs(predicted / measured - 1) <= 0.15, (predicted, measured)


def test_the_largest_batch_is_the_last_grid_point_under_the_limit(tf):
    from tfperf.memory.fit import batch_grid, largest_batch, predict

    fn, args = _case_study(tf)
    limit = 100 * MIB
    best, tried = largest_batch(fn, args, {}, limit)
    grid = batch_grid()
    nxt = grid[grid.index(best) + 1]
    assert predict(fn, args, {}, best).peak_bytes <= limit
    assert predict(fn, args, {}, nxt).peak_bytes > limit
    assert len(tried) <= 8  # placed by two predictions, then confirmed: not a grid scan


def test_xlas_buffer_is_predicted_from_its_scheduled_module(tf):
    """XLA on the CPU runs a step in one temporary buffer its buffer assignment sizes; the
    liveness over the optimized module's schedule predicts it (here XLA:CPU keeps a
    [64,500,128] reduce-window operand, as large as the graph's product)."""
    from tfperf.memory.fit import as_function, measured_transient, predict

    fn, args = _case_study(tf)
    xla = predict(fn, args, {}, 64, xla=True)
    assert xla.error is None and xla.transient_bytes > 0
    measured = measured_transient(as_function(fn, True), args, {})
    assert measured and abs(xla.transient_bytes / measured - 1) <= 0.15, (xla, measured)


def test_xlas_loop_updates_its_stacked_state_in_place(tf):
    """A loop that stacks a [256, 256] row per iteration (16 MiB over 64): XLA updates the
    stack in place each iteration (dynamic-update-slice), it does not copy it: the
    prediction was twice the measured peak when the update counted a new buffer."""
    from tfperf.memory.fit import as_function, measured_transient, predict

    def stacked(x):
        rows = tf.TensorArray(tf.float32, size=64)
        rows = tf.while_loop(lambda i, r: i < 64,
                             lambda i, r: (i + 1, r.write(i, tf.tanh(x * tf.cast(i, x.dtype)))),
                             (0, rows))[1]
        return tf.reduce_sum(rows.stack(), axis=0)

    args = (tf.random.normal([256, 256]),)
    xla = predict(stacked, args, {}, 256, xla=True)
    assert xla.error is None and xla.transient_bytes >= 16 * MIB
    measured = measured_transient(as_function(stacked, True), args, {})
    assert measured and abs(xla.transient_bytes / measured - 1) <= 0.15, (xla, measured)


def test_hlo_field_numbers_are_xlas(tf):
    from tensorflow.compiler.xla.service import hlo_pb2

    from tfperf.memory import hlo_memory as h

    def num(message, name):
        return message.DESCRIPTOR.fields_by_name[name].number

    assert num(hlo_pb2.HloModuleProto, "entry_computation_id") == h.MODULE_ENTRY_ID
    assert num(hlo_pb2.HloModuleProto, "schedule") == h.MODULE_SCHEDULE
    assert num(hlo_pb2.HloModuleProto, "input_output_alias") == h.MODULE_IO_ALIAS
    assert num(hlo_pb2.HloScheduleProto, "sequences") == h.SCHEDULE_SEQUENCES
    assert num(hlo_pb2.HloScheduleProto.InstructionSequence, "instruction_ids") == \
        h.SEQUENCE_IDS
    assert num(hlo_pb2.HloInputOutputAliasProto, "entries") == h.ALIAS_ENTRIES
    assert num(hlo_pb2.HloInputOutputAliasProto.AliasEntryProto, "output_shape_index") == \
        h.ALIAS_OUTPUT_INDEX


def test_batch_grid_and_devices():
    from tfperf.memory.devices import DeviceError, gpu_memory, parse_device
    from tfperf.memory.fit import batch_grid

    assert batch_grid(64) == [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64]
    assert parse_device("16GiB").bytes == 16 << 30
    assert parse_device("24GB").bytes == 24 * 10**9
    assert gpu_memory("Tesla T4").bytes == 16 << 30
    assert gpu_memory("NVIDIA A100-SXM4-80GB").bytes == 80 << 30
    assert gpu_memory("NVIDIA A100-SXM4-40GB").bytes == 40 << 30
    with pytest.raises(DeviceError):
        parse_device("Quantum 9000")


def test_cli_fit_predicts_float32_and_mixed_side_by_side_and_checks_the_prediction(tmp_path):
    (tmp_path / "fitmod.py").write_text(textwrap.dedent('''
        import keras
        import tensorflow as tf

        model = keras.Sequential([keras.Input((256,)), keras.layers.Dense(512, activation="relu"),
                                  keras.layers.Dense(256)])

        @tf.function
        def step(x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.cast(model(x), tf.float32) ** 2)
            return tape.gradient(loss, model.trainable_variables)

        def make():
            return tf.random.normal([256, 256])
    '''))
    # both command lines in one child (one TensorFlow start): the test is about their output
    done, tiny = run_cli_batch([
        ["profile", "--fit", "fitmod.py:step", "--inputs", "fitmod.py:make", "--batch", "512",
         "--json"],
        ["profile", "--fit", "fitmod.py:step", "--inputs", "fitmod.py:make", "--device",
         "1MiB"]], cwd=tmp_path,
        env={k: v for k, v in os.environ.items() if k != "TF_CPU_ALLOCATOR_USE_BFC"})
    assert done.returncode == 0, done.stderr[-2000:]
    doc = json.loads(done.stdout)
    rows = {(p["precision"], p["xla"]): p for p in doc["predictions"]}
    assert set(rows) == {("float32", False), ("float32", True), ("mixed_float16", False),
                         ("mixed_float16", True)}
    main = rows[("float32", False)]
    assert main["batch"] == 512 and main["measured_transient_bytes"]
    assert abs(main["error_vs_measured"]) <= 0.15, main
    assert doc["largest_batch"]["float32"] >= 512
    assert tiny.returncode == 1 and "does not fit" not in tiny.stderr
    assert "more than" in tiny.stdout


def test_a_row_that_did_not_trace_shows_no_sizes():
    """A precision whose trace failed predicted nothing: its row says so, not '0 B'."""
    from tfperf.memory.fit import FitReport, Prediction

    failed = Prediction(64, False, "mixed_float16", error="tracing failed: TypeError: dtypes")
    report = FitReport("m:step", None, 64, [failed])
    (row,) = [ln for ln in report.text().splitlines() if ln.startswith("mixed_float16 ")
              and "error" in ln and "tracing failed" not in ln]
    assert "0 B" not in row and "–" in row
