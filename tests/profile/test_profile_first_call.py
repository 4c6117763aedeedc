"""A tf.function whose first call creates variables (a Keras model built inside it): TF
converts a tensor for itself (checking the new variables) and traces that call twice. Neither
is the user's: the step stays sync-free (and eager-op-free) and its traces are one per
distinct Python value.

Planted outcomes only: which conversions the code makes and which Python values it passes.
"""

from tfperf.bench import counters
from tfperf.profile.report import ProfileReport
from tfperf.profile.watcher import watch

LRS = (0.1, 0.2, 0.3)


def _keras_step(tf, *, user_sync: bool, built: bool):
    model = tf.keras.Sequential([tf.keras.Input([3]), tf.keras.layers.Dense(4)]) if built \
        else tf.keras.Sequential([tf.keras.layers.Dense(4)])

    @tf.function
    def step(x, lr):
        return tf.reduce_sum(model(x)) * lr  # unbuilt: the first call creates the variables

    x = tf.ones([2, 3])
    with watch() as w:
        for lr in LRS:
            loss = step(x, lr)
            if user_sync:
                loss.numpy()  # the user's own sync
    return w.obs


def test_tf_own_sync_on_a_variable_creating_first_call_is_not_the_users(tf):
    obs = _keras_step(tf, user_sync=False, built=False)
    assert counters.from_watch(obs).values["host_syncs"] == 0  # max_host_syncs=0 holds
    assert obs.host_syncs == {}
    assert sum(obs.tf_own_syncs.values()) == 1  # seen, and said whose
    # the same checks' eager ops (VarIsInitializedOp, Pack): not the user's either
    assert counters.from_watch(obs).values["eager_ops"] == 0 and obs.tf_own_ops
    text = ProfileReport(obs=obs).text()
    assert "TensorFlow's own" in text


def test_users_own_sync_in_the_same_step_still_counts(tf):
    obs = _keras_step(tf, user_sync=True, built=False)
    assert counters.from_watch(obs).values["host_syncs"] == len(LRS)
    (line,) = obs.host_syncs.values()
    assert line.kinds == {".numpy()": len(LRS)} and not line.made_in
    assert sum(obs.tf_own_syncs.values()) == 1


def test_variable_creating_first_call_traces_once_per_distinct_value(tf):
    obs = _keras_step(tf, user_sync=False, built=False)
    (fn,) = obs.functions
    assert (fn.traces, fn.variable_traces) == (len(LRS), 1)
    assert counters.from_watch(obs).values["traces"] == len(LRS)
    assert "created variables" in ProfileReport(obs=obs).text()


def test_a_model_built_before_the_step_has_no_tf_own_sync_or_extra_trace(tf):
    """VALID twin: nothing is created inside the function, so nothing is set aside."""
    obs = _keras_step(tf, user_sync=False, built=True)
    (fn,) = obs.functions
    assert (fn.traces, fn.variable_traces) == (len(LRS), 0)
    assert obs.tf_own_syncs == {} and obs.host_syncs == {} and obs.tf_own_ops == {}


def test_a_sync_in_a_step_run_eagerly_is_the_users(tf):
    """VALID twin: under run_functions_eagerly the step's own `.numpy()` runs inside the
    tf.function call, but the user's body is the nearer frame: it is the user's."""
    v = tf.Variable(1.0)

    @tf.function
    def step(x):
        return float((x * v).numpy())

    tf.config.run_functions_eagerly(True)
    try:
        with watch() as w:
            step(tf.constant(2.0))
            step(tf.constant(3.0))
    finally:
        tf.config.run_functions_eagerly(False)
    assert w.obs.tf_own_syncs == {} and w.obs.tf_own_ops == {}
    counts = counters.from_watch(w.obs).values
    assert counts["host_syncs"] == 2 and counts["eager_ops"] >= 2  # its Mul runs eagerly
