"""The Keras mixed-precision policy lever: offered where the device facts say the dtype has
fast math (a GPU stands in through injected facts), only where the model is built after the
policy can be set (inside the function, or by the inputs factory), measured with the policy
set and the process's policy restored after, its patch the policy line."""

from __future__ import annotations

import pytest

from tfperf.tune.device import DeviceFacts

tf = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.tf

from tfperf.tune import tune  # noqa: E402
from tfperf.tune.levers.keras_policy import MixedPolicy  # noqa: E402

GPU = DeviceFacts(gpus=((8, 0),))  # an A100's compute capability: float16 and bfloat16
NO_FAST_MATH = DeviceFacts()  # a CPU without AVX512-BF16/AMX

STEP = """
import tensorflow as tf


def make():
    tf.keras.utils.set_random_seed(5)
    model = tf.keras.Sequential([tf.keras.Input([8]),
                                 tf.keras.layers.Dense(16, activation="relu"),
                                 tf.keras.layers.Dense(1, dtype="float32")])
    x = tf.random.stateless_normal([32, 8], seed=[1, 2])
    y = tf.random.stateless_normal([32, 1], seed=[3, 4])
    return (model, tf.keras.optimizers.SGD(0.01), x, y), {}


def train_step(model, opt, x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
    return loss
"""

PREDICT = """
import tensorflow as tf


def make_model():
    tf.keras.utils.set_random_seed(7)
    return tf.keras.Sequential([tf.keras.Input([8]), tf.keras.layers.Dense(16),
                                tf.keras.layers.Dense(4, dtype="float32")])


def predict(x):
    return make_model()(x)
"""

GLOBAL = """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.Input([8]), tf.keras.layers.Dense(4)])


def predict(x):
    return model(x)
"""


def _policy() -> str:
    return tf.keras.mixed_precision.global_policy().name


def test_a_model_from_the_inputs_factory_is_built_under_the_policy(user_module):
    mod = user_module(STEP, "policy_step")
    result = tune(mod.train_step, inputs=mod.make, budget=5, facts=GPU, reduced_precision=True,
                  levers=[MixedPolicy("mixed_bfloat16")])
    assert _policy() == "float32"  # the candidate's policy did not leak
    cand = next(c for c in result.candidates if c.name == "mixed_bfloat16 policy")
    assert cand.equivalent is True, result.table()
    assert cand.rejected is None or cand.rejected.startswith("not told apart"), cand.rejected
    # bfloat16 math really ran: the loss is off float32's by far more than float32 rounding
    assert cand.max_rel_err is not None and cand.max_rel_err > 1e-5
    assert any("float32 baseline with bfloat16's tolerance" in n for n in cand.notes)
    assert "+tf.keras.mixed_precision.set_global_policy('mixed_bfloat16')" in cand.patch
    assert cand.patch.index("set_global_policy") > cand.patch.index("import tensorflow")


def test_a_model_built_inside_the_function_runs_each_call_under_the_policy(user_module):
    mod = user_module(PREDICT, "policy_predict")
    x = tf.random.stateless_normal([16, 8], seed=[5, 6])
    result = tune(mod.predict, (x,), budget=5, facts=GPU, reduced_precision=True,
                  levers=[MixedPolicy("mixed_float16")])
    assert _policy() == "float32"
    cand = next(c for c in result.candidates if c.name == "mixed_float16 policy")
    # float16 math inside, a float32 last layer: judged against the float64 truth with
    # float16's tolerance (kept, or measured and not told apart from the baseline)
    assert cand.equivalent is True, result.table()
    assert cand.rejected is None or cand.rejected.startswith("not told apart"), cand.rejected
    assert 1e-5 < (cand.max_rel_err or 0) < 1e-2
    assert "set_global_policy('mixed_float16')" in cand.patch
    # Without it the model returns float16 to a caller that had float32: not the function's
    # contract (as Keras' guide says, keep the last layer float32).
    mod = user_module(PREDICT.replace(', dtype="float32"', ""), "policy_predict16")
    (cand,) = tune(mod.predict, (x,), budget=2, facts=GPU, reduced_precision=True,
                   levers=[MixedPolicy("mixed_float16")]).candidates
    assert cand.rejected == ("changes the function's contract: output: dtype float16, the "
                             "baseline has float32")


@pytest.mark.parametrize("source, name, why", [
    (GLOBAL, "predict", "uses the module-level model model"),
    (PREDICT.replace("return make_model()(x)", "return x * 2.0"), "predict",
     "neither builds nor is given a Keras model"),
])
def test_a_model_built_before_or_no_model_is_not_applicable(user_module, source, name, why):
    mod = user_module(source, "policy_na")
    result = tune(getattr(mod, name), (tf.ones([4, 8]),), budget=2, facts=GPU,
                  reduced_precision=True,
                  levers=[MixedPolicy("mixed_bfloat16")])
    (cand,) = result.candidates
    assert cand.rejected.startswith("not applicable: ") and why in cand.rejected


def test_a_prebuilt_model_argument_and_a_device_without_fast_math(user_module):
    mod = user_module(STEP, "policy_plain")
    (args, _) = mod.make()
    result = tune(mod.train_step, args, budget=2, facts=GPU, reduced_precision=True,
                  levers=[MixedPolicy("mixed_bfloat16")])
    assert "passed in already built" in result.candidates[0].rejected
    slow = tune(mod.train_step, inputs=mod.make, budget=2, facts=NO_FAST_MATH,
                levers=[MixedPolicy("mixed_bfloat16"), MixedPolicy("mixed_float16")])
    why = {c.name: c.rejected for c in slow.candidates}
    assert "AVX512-BF16/AMX" in why["mixed_bfloat16 policy"]
    assert "CPUs have no fast float16 math" in why["mixed_float16 policy"]


def test_under_isolate_the_childs_model_is_built_under_the_policy(user_module, frozen_budget):
    # A child process runs the candidate's module text, policy line included, before it makes
    # the inputs: the model computes in bfloat16 there (an error far above float32's).
    # The budget's clock stands still at more than a child's start (17 s on a loaded 2-core
    # machine): the candidate always starts; no final rounds (equivalence is the point).
    frozen_budget(search_s=600.0, final_s=0.0)
    mod = user_module(STEP, "policy_isolated")
    cpu_bf16 = DeviceFacts(cpu_flags=frozenset({"avx512_bf16"}))  # no GPU needed for it
    result = tune(mod.train_step, inputs=mod.make, budget=20, facts=cpu_bf16, isolate=True,
                  reduced_precision=True,
                  levers=[MixedPolicy("mixed_bfloat16")])
    (cand,) = result.candidates
    assert cand.equivalent is True, result.table()
    assert cand.rejected is None or cand.rejected.startswith("not told apart"), cand.rejected
    assert cand.max_rel_err is not None and cand.max_rel_err > 1e-5
    assert any(n.startswith("isolated") for n in cand.notes)
