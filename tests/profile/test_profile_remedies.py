"""Advice is true on the TensorFlow it runs with.

For each cause ``tfperf profile`` names, a real case runs under ``watch()`` on the installed TF;
the advice it prints is then applied to the same case, and the cause must go away: the traces
drop to one, the syncs at the line to none, the eager ops fall. What the advice says does not
help ("reduce_retracing does not help") is applied too, and must not help. Exact counters
only (TF's own tracing count, tfperf's sync and op counts): no times.
"""

import json
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tfperf.profile import remedies
from tfperf.profile.watcher import watch

N = 12  # values, shapes, objects per case: a retrace storm, yet quick


def _advice(calls):
    """Run ``calls()`` under watch(); the profile.retrace advice it gives (exactly one)."""
    with watch(host_syncs=False, eager_ops=False) as w:
        calls()
    rep = w.report(show=False)
    (finding,) = [f for f in rep.findings if f.code == "profile.retrace"]
    return finding


def _traces(fn, calls):
    for call in calls:
        call(fn)
    return fn.experimental_get_tracing_count()


def _option(hint):
    """The tf.function option a hint names (``reduce_retracing=True``) as keyword arguments."""
    (name,) = set(re.findall(r"\b(\w+)=True", hint))
    return {name: True}


def test_the_running_version_is_the_one_advised_for(tf):
    major, minor = (int(p) for p in tf.__version__.split(".")[:2])
    assert remedies.tf_version() == (major, minor)
    # TF 2.9 renamed experimental_relax_shapes: the advice names what this TF accepts
    assert remedies.shape_option((2, 8)) == "experimental_relax_shapes=True"
    assert remedies.shape_option((2, 21)) == "reduce_retracing=True"
    assert "experimental_relax_shapes=True" in remedies.for_retrace(
        "shape", "x", version=(2, 8)).hint
    option = remedies.shape_option(remedies.tf_version())
    tf.function(lambda x: x, **_option(option))  # this TF accepts the option it is told of


@pytest.mark.parametrize("values", [
    [0.01 * 0.9 ** i for i in range(N)],  # the case: a learning rate, a float
    list(range(N)),
    [f"mode{i}" for i in range(N)],
], ids=["float", "int", "str"])
def test_python_value_advice_removes_the_retraces(tf, values):
    x = tf.ones([3])
    body = (lambda x, v: x * tf.cast(tf.strings.length(v), tf.float32)) \
        if isinstance(values[0], str) else (lambda x, v: x * tf.cast(v, tf.float32))
    f = tf.function(body)
    finding = _advice(lambda: [f(x, v) for v in values])
    assert finding.data["kind"] == "python_value" and finding.data["argument"] == "v"
    assert f"traced {N} times" in finding.message and finding.data["rule"] == "TFP301"

    # "pass tf.constant(v)": one trace
    assert "tf.constant(v)" in finding.hint
    assert _traces(tf.function(body), [lambda g, v=v: g(x, tf.constant(v)) for v in values]) == 1
    # "or give it a tf.TensorSpec in an input_signature": one trace
    assert "input_signature" in finding.hint
    dtype = tf.constant(values[0]).dtype
    signed = tf.function(body, input_signature=[tf.TensorSpec([3], tf.float32),
                                                tf.TensorSpec([], dtype)])
    assert _traces(signed, [lambda g, v=v: g(x, v) for v in values]) == 1
    # "reduce_retracing=True does not help": it does not, one trace per value still
    assert "does not help" in finding.hint
    relaxed = tf.function(body, **_option(finding.hint))
    assert _traces(relaxed, [lambda g, v=v: g(x, v) for v in values]) == N


def test_nested_python_value_names_the_leaf_to_wrap(tf):
    x = tf.ones([3])
    body = lambda x, cfg: x * tf.cast(cfg["scale"], tf.float32)  # noqa: E731
    f = tf.function(body)
    finding = _advice(lambda: [f(x, {"scale": i}) for i in range(N)])
    assert "tf.constant(cfg['scale'])" in finding.hint
    fixed = [lambda g, i=i: g(x, {"scale": tf.constant(i)}) for i in range(N)]
    assert _traces(tf.function(body), fixed) == 1


def test_shape_advice_removes_the_retraces(tf):
    total = lambda t: tf.reduce_sum(t)  # noqa: E731
    batches = [tf.ones([k, 2]) for k in range(1, N + 1)]
    f = tf.function(total)
    finding = _advice(lambda: [f(b) for b in batches])
    assert finding.data["kind"] == "shape" and finding.data["rule"] == "TFP307"
    # "an input_signature with None for the dimension that varies": one trace
    assert "input_signature with None" in finding.hint
    signed = tf.function(total, input_signature=[tf.TensorSpec([None, 2], tf.float32)])
    assert _traces(signed, [lambda g, b=b: g(b) for b in batches]) == 1
    # "or reduce_retracing=True: one more trace, then a generalised shape serves every size"
    assert "one more trace" in finding.hint
    relaxed = tf.function(total, **_option(finding.hint))
    assert _traces(relaxed, [lambda g, b=b: g(b) for b in batches]) == 2


def test_shape_advice_under_jit_compile_pads_to_a_few_lengths(tf):
    total = lambda t: tf.reduce_sum(t * 2.0)  # noqa: E731
    batches = [tf.ones([k, 2]) for k in range(1, N + 1)]
    f = tf.function(total, jit_compile=True)
    finding = _advice(lambda: [f(b) for b in batches])
    assert finding.data["rule"] == "TFP305" and "pad t to a few fixed lengths" in finding.hint

    def padded(g, b, step=8):
        n = -(-b.shape[0] // step) * step
        return g(tf.pad(b, [[0, n - b.shape[0]], [0, 0]]))

    lengths = {-(-b.shape[0] // 8) * 8 for b in batches}
    jit = tf.function(total, jit_compile=True)
    assert _traces(jit, [lambda g, b=b: padded(g, b) for b in batches]) == len(lengths) == 2


def test_dtype_advice_removes_the_retraces(tf):
    total = lambda t: tf.reduce_sum(t)  # noqa: E731
    dtypes = [tf.float32, tf.float64, tf.int32, tf.int64] * 3
    inputs = [tf.ones([3], d) for d in dtypes]
    f = tf.function(total)
    finding = _advice(lambda: [f(t) for t in inputs])
    assert finding.data["kind"] == "dtype" and "cast t to one dtype" in finding.hint
    cast = [lambda g, t=t: g(tf.cast(t, tf.float32)) for t in inputs]
    assert _traces(tf.function(total), cast) == 1
    # "reduce_retracing=True does not merge dtypes": it does not
    assert "does not merge dtypes" in finding.hint
    relaxed = tf.function(total, **_option(finding.hint))
    assert _traces(relaxed, [lambda g, t=t: g(t) for t in inputs]) == 4


class _Config:
    def __init__(self, scale):
        self.scale = scale


def test_new_object_advice_removes_the_retraces(tf):
    x = tf.ones([3])
    body = lambda x, cfg: x * cfg.scale  # noqa: E731
    f = tf.function(body)
    # a temporary per call: freed after it, so the next often reuses its address; TF still
    # traces each (its weak reference died), and the cause is the new object, not "context"
    finding = _advice(lambda: [f(x, _Config(2.0)) for _ in range(N)])
    assert (finding.data["kind"], finding.data["argument"]) == ("new_object", "cfg")
    assert "reuse one object" in finding.hint and "as tensors" in finding.hint
    one = _Config(2.0)
    assert _traces(tf.function(body), [lambda g: g(x, one)] * N) == 1
    numbers = tf.function(lambda x, scale: x * scale)
    assert _traces(numbers, [lambda g: g(x, tf.constant(_Config(2.0).scale))] * N) == 1


def test_type_advice_removes_the_retraces(tf):
    x = tf.ones([3])
    body = lambda x, s: x * tf.cast(s, tf.float32)  # noqa: E731
    values = [2, tf.constant(2.0), tf.constant(2)] * 3  # a Python int, then tensors
    f = tf.function(body)
    finding = _advice(lambda: [f(x, v) for v in values])
    assert finding.data["kind"] == "type" and f"traced {len(set(map(repr, values[:3])))}" \
        in finding.message
    assert "tf.cast(s, tf.float32)" in finding.hint
    one_type = [lambda g, v=v: g(x, tf.cast(v, tf.float32)) for v in values]
    assert _traces(tf.function(body), one_type) == 1


def test_structure_advice_removes_the_retraces(tf):
    x = tf.ones([3])
    add = lambda xs: tf.reduce_sum(tf.stack(xs) if isinstance(xs, list) else xs, 0)  # noqa: E731
    lists = [[x] * k for k in range(1, N + 1)]
    f = tf.function(add)
    finding = _advice(lambda: [f(xs) for xs in lists])
    assert finding.data["kind"] == "structure"
    # "keep its length fixed": one trace
    assert _traces(tf.function(add), [lambda g, xs=xs: g([x] * 4) for xs in lists]) == 1
    # "one tensor (tf.stack) with an input_signature whose length dimension is None": one
    assert "tf.stack" in finding.hint and "length dimension is None" in finding.hint
    signed = tf.function(add, input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    assert _traces(signed, [lambda g, xs=xs: g(tf.stack(xs)) for xs in lists]) == 1
    # "a stacked tensor alone still retraces": it does, once per length
    assert "alone still retraces" in finding.hint
    assert _traces(tf.function(add), [lambda g, xs=xs: g(tf.stack(xs)) for xs in lists]) == N


def test_recreated_tf_function_advice_removes_the_retraces(tf):
    x = tf.ones([3])

    def double(x):
        return x * 2

    with watch(host_syncs=False, eager_ops=False) as w:
        for _ in range(N):
            tf.function(double)(x)
    (finding,) = [f for f in w.report(show=False).findings
                  if f.name == "tf-function-recreated"]
    assert f"wrapped by {N} separate" in finding.message
    assert "create the tf.function once" in finding.hint
    hoisted = tf.function(double)
    assert _traces(hoisted, [lambda g: g(x)] * N) == 1


def test_tf_function_method_per_instance_advice(tf):
    class Scaler(tf.Module):
        @tf.function
        def step(self, x):
            return x * 2.0

    x = tf.ones([3])
    with watch(host_syncs=False, eager_ops=False) as w:
        for _ in range(N):
            Scaler().step(x)
    (finding,) = [f for f in w.report(show=False).findings
                  if f.name == "tf-function-recreated"]
    assert f"one per {Scaler.__qualname__} object" in finding.message
    assert "create the object once and reuse it" in finding.hint
    one = Scaler()
    for _ in range(N):
        one.step(x)
    assert one.step.experimental_get_tracing_count() == 1


_STRATEGIES = textwrap.dedent("""
    import json, tempfile
    import tensorflow as tf
    from tfperf.profile.watcher import watch

    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    one = tf.distribute.MirroredStrategy(["/cpu:0"])
    two = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    x = tf.ones([3])

    def double(x):
        return x * 2

    f = tf.function(double)
    with watch(host_syncs=False, eager_ops=False) as w:
        for _ in range(3):
            f(x)
            with one.scope():
                f(x)
            with two.scope():
                f(x)
    rep = w.report(show=False)
    advice = [f.to_dict() for f in rep.findings if f.code == "profile.retrace"]
    fixed = tf.function(double)
    with two.scope():
        for _ in range(9):
            fixed(x)
    print(json.dumps({"traces": f.experimental_get_tracing_count(), "advice": advice,
                      "fixed": fixed.experimental_get_tracing_count()}))
""")


def test_context_advice_removes_the_retraces(tf):
    """Same arguments, other strategy: a context retrace (logical devices need a fresh
    process). Under one strategy, one trace."""
    out = subprocess.run([sys.executable, "-c", _STRATEGIES], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    doc = json.loads(out.stdout.strip().splitlines()[-1])
    assert doc["traces"] == 3
    (finding,) = doc["advice"]
    assert finding["data"]["kind"] == "context"
    assert "another tf.distribute strategy's scope" in finding["hint"]
    assert "make the calls under one strategy" in finding["hint"]
    assert doc["fixed"] == 1


def test_what_the_context_advice_leaves_out_does_not_retrace(tf):
    """A device scope or a changed Python global does not retrace on this TF: the advice
    must not send the user looking for them."""
    x = tf.ones([3])
    scale = {"value": 1.0}
    f = tf.function(lambda x: x * scale["value"])
    for i in range(N):
        scale["value"] = float(i)
        with tf.device("/cpu:0" if i % 2 else None):
            f(x)
    assert f.experimental_get_tracing_count() == 1
    hint = remedies.for_retrace("context", "(none)", version=remedies.tf_version()).hint
    assert "device" not in hint and "global" not in hint and "captured" not in hint


def test_numpy_scalars_are_tensors_not_python_values(tf):
    """TF keys NumPy scalars (np.float64 too, a float subclass) by dtype: no retrace per
    value, so profile must not name them as a cause next to a real one."""
    f = tf.function(lambda x, v: x * tf.cast(v, tf.float32))
    for i in range(N):
        f(tf.ones([3]), np.float64(i))
    assert f.experimental_get_tracing_count() == 1
    g = tf.function(lambda x, v: tf.reduce_sum(x) * tf.cast(v, tf.float32))
    with watch(host_syncs=False, eager_ops=False) as w:
        for k in range(1, N + 1):
            g(tf.ones([k]), np.float32(k))
    (fn,) = w.obs.functions
    assert [(c["argument"], c["kind"]) for c in fn.to_dict()["retrace_causes"]] \
        == [("x", "shape")]


def test_host_sync_advice_removes_the_syncs(tf, tmp_path):
    from tfperf.profile import runner

    loop = textwrap.dedent("""
        import tensorflow as tf
        w = tf.Variable(tf.ones([64, 64]))
        x = tf.ones([8, 64])
        total = {start}
        for i in range(40):
            loss = tf.reduce_mean(tf.matmul(x, w))
            total = {accumulate}
        print({after})  # after the loop
    """)
    before = tmp_path / "before.py"
    before.write_text(loop.format(start="0.0", accumulate="total + float(loss)  # sync",
                                  after="total"))
    rep = runner.run_script(before, capture=False)
    assert rep.error is None
    line = next(i for i, t in enumerate(before.read_text().splitlines(), 1) if "# sync" in t)
    # 40 float() syncs of a tiny tensor can cost < 0.1 % of the run: data, not advice, then
    (finding,) = [f for f in rep.findings + rep.not_advice if f.code == "profile.host_sync"]
    assert finding.location.line == line and finding.data["count"] == 40
    assert "keep values as tensors in the loop and convert once after it" in finding.hint

    after = tmp_path / "after.py"
    after.write_text(loop.format(start="tf.constant(0.0)", accumulate="total + loss  # tensor",
                                 after="float(total)"))
    rep = runner.run_script(after, capture=False)
    assert rep.error is None
    syncs = {s.line: s.count for s in rep.obs.host_syncs.values() if s.path == str(after)}
    lines = after.read_text().splitlines()
    loop_line = next(i for i, t in enumerate(lines, 1) if "# tensor" in t)
    once = next(i for i, t in enumerate(lines, 1) if "# after the loop" in t)
    assert loop_line not in syncs and syncs[once] == 1
    assert not [f for f in rep.findings + rep.not_advice if f.code == "profile.host_sync"]


def test_eager_storm_advice_makes_the_eager_ops_fall(tf):
    def storm(x):
        acc = tf.zeros([x.shape[1]])
        for j in range(x.shape[0]):
            acc = acc + x[j] * 2.0
        return acc

    def vectorised(x):
        return tf.reduce_sum(x * 2.0, axis=0)

    x = tf.random.normal([150, 4])
    with watch() as w:
        slow = storm(x)
    (finding,) = [f for f in w.report(show=False).findings if f.code == "profile.eager_ops"]
    assert "whole-tensor ops" in finding.hint and "jit_compile=True" in finding.hint
    with watch() as v:
        fast = vectorised(x)
    assert w.obs.eager_op_count == 3 * 150 + 1 and v.obs.eager_op_count == 2
    assert not [f for f in v.report(show=False).findings if f.code == "profile.eager_ops"]
    compiled = tf.function(vectorised, jit_compile=True)
    compiled(x)
    with watch() as c:
        jit = compiled(x)
    assert c.obs.eager_op_count == 0
    # sums of 150 normals in another order (XLA's reduction): an element near zero differs
    # by float32 rounding of the whole sum, not of itself (1.9e-5 relative at -0.26, CI run)
    scale = 1e-5 * float(np.abs(x.numpy() * 2.0).sum(axis=0).max())
    np.testing.assert_allclose(slow.numpy(), fast.numpy(), rtol=1e-5, atol=scale)
    np.testing.assert_allclose(fast.numpy(), jit.numpy(), rtol=1e-5, atol=scale)


def test_eager_share_advice_makes_the_share_fall(tf, tmp_path):
    """"wrap the hot loop body in tf.function": the capture's eager share drops below the
    threshold (a real capture each way)."""
    from tfperf.profile import advice, runner

    def body(x):
        acc = tf.zeros([x.shape[1]])
        for j in range(x.shape[0]):
            acc = acc + x[j] * 2.0
        return acc

    x = tf.random.normal([120, 4])
    eager = runner.profile(body, x, steps=1, logdir=tmp_path / "eager")
    (finding,) = [f for f in eager.findings if f.code == "profile.eager_share"]
    assert "wrap the hot loop body or training step in tf.function" in finding.hint
    wrapped = runner.profile(tf.function(body), x, steps=1, logdir=tmp_path / "wrapped")
    assert wrapped.capture.eager_share < advice.EAGER_SHARE < eager.capture.eager_share
    assert not [f for f in wrapped.findings + wrapped.not_advice
                if f.code == "profile.eager_share"]


# The table in docs/profile.md ("Advice that holds"), row by row: what varies over 20 calls,
# the tf.function options, how each call is made, and the traces TF 2.21 makes.
def _table(tf):
    x = tf.ones([3])
    scale = lambda x, v: x * tf.cast(v, tf.float32)  # noqa: E731
    total = lambda t: tf.reduce_sum(t)  # noqa: E731
    floats, ints = [0.01 * 0.9 ** i for i in range(20)], list(range(20))
    shapes = [tf.ones([k, 2]) for k in range(1, 21)]
    ranks = [tf.ones([2] * r) for r in range(1, 6)] * 4
    arrays = [np.ones([k, 2], np.float32) for k in range(1, 21)]
    dtypes = [tf.ones([3], d) for d in (tf.float32, tf.float64, tf.int32, tf.int64,
                                        tf.int16)] * 4
    kept = [_Config(2.0) for _ in range(20)]
    lists = [[x] * k for k in range(1, 21)]
    add = lambda xs: tf.reduce_sum(tf.stack(xs) if isinstance(xs, list) else xs, 0)  # noqa
    spec = tf.TensorSpec
    relax = {"reduce_retracing": True}
    scalar = [spec([3], tf.float32), spec([], tf.float32)]
    return [
        # (row, function, options, calls, traces)
        ("float", scale, {}, [(x, v) for v in floats], 20),
        ("float, reduce_retracing", scale, relax, [(x, v) for v in floats], 20),
        ("float, tf.constant", scale, {}, [(x, tf.constant(v)) for v in floats], 1),
        ("float, input_signature", scale, {"input_signature": scalar},
         [(x, v) for v in floats], 1),
        ("int", scale, {}, [(x, v) for v in ints], 20),
        ("int, reduce_retracing", scale, relax, [(x, v) for v in ints], 20),
        ("int, tf.constant", scale, {}, [(x, tf.constant(v)) for v in ints], 1),
        ("bool", scale, {}, [(x, i % 2 == 0) for i in ints], 2),
        ("bool, tf.constant", scale, {}, [(x, tf.constant(i % 2 == 0)) for i in ints], 1),
        ("numpy scalars", scale, {}, [(x, t(i)) for i in ints
                                      for t in (np.float32, np.float64, np.int64)], 3),
        ("np.float64", scale, {}, [(x, np.float64(i)) for i in ints], 1),
        ("shape", total, {}, [(t,) for t in shapes], 20),
        ("shape, reduce_retracing", total, relax, [(t,) for t in shapes], 2),
        ("shape, input_signature", total, {"input_signature": [spec([None, 2])]},
         [(t,) for t in shapes], 1),
        ("rank", total, {}, [(t,) for t in ranks], 5),
        ("rank, reduce_retracing", total, relax, [(t,) for t in ranks], 2),
        ("rank, input_signature", total, {"input_signature": [spec(None)]},
         [(t,) for t in ranks], 1),
        ("numpy shape", total, {}, [(a,) for a in arrays], 20),
        ("numpy shape, reduce_retracing", total, relax, [(a,) for a in arrays], 2),
        ("numpy shape, input_signature", total, {"input_signature": [spec([None, 2])]},
         [(a,) for a in arrays], 1),
        ("dtype", total, {}, [(t,) for t in dtypes], 5),
        ("dtype, reduce_retracing", total, relax, [(t,) for t in dtypes], 5),
        ("dtype, tf.cast", total, {}, [(tf.cast(t, tf.float32),) for t in dtypes], 1),
        ("object kept", lambda x, c: x * c.scale, {}, [(x, c) for c in kept], 20),
        ("object kept, reduce_retracing", lambda x, c: x * c.scale, relax,
         [(x, c) for c in kept], 20),
        ("list", add, {}, [(xs,) for xs in lists], 20),
        ("list, reduce_retracing", add, relax, [(xs,) for xs in lists], 20),
        ("list, tf.stack", add, {}, [(tf.stack(xs),) for xs in lists], 20),
        ("list, tf.stack, reduce_retracing", add, relax, [(tf.stack(xs),) for xs in lists], 2),
        ("list, tf.stack, input_signature", add, {"input_signature": [spec([None, 3])]},
         [(tf.stack(xs),) for xs in lists], 1),
        ("int then tensor", scale, {}, [(x, i if i % 2 else tf.constant(i)) for i in ints], 11),
    ]


def test_the_documented_table_holds_on_this_tf(tf):
    for row, body, options, calls, expected in _table(tf):
        f = tf.function(body, **options)
        for args in calls:
            f(*args)
        assert f.experimental_get_tracing_count() == expected, row


def test_saving_traces_once_more_as_the_context_hint_says(tf, tmp_path):
    x = tf.ones([3])
    f = tf.function(lambda x: x * 2)
    f(x)
    module = tf.Module()
    module.f = f
    tf.saved_model.save(module, str(tmp_path / "saved"))
    assert f.experimental_get_tracing_count() == 2
    hint = remedies.for_retrace("context", "(none)", version=remedies.tf_version()).hint
    assert "tf.saved_model.save also traces once more" in hint
