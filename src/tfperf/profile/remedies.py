"""What to change for each cause ``tfperf profile`` names, in words true on the running TF.

Every hint here is applied to a real case by ``tests/profile/test_profile_remedies.py`` on the
installed TensorFlow, which checks that the cause goes away (the traces drop to one, the syncs
at the line to none, the eager ops fall); a "does not help" is checked the same way. Measured
on TF 2.21 (docs/profile.md, "Advice that holds"):

* a Python int, float or str argument traces once per value, with or without
  ``reduce_retracing=True`` (it generalises tensor shapes, not Python values); a tensor
  (``tf.constant``) or an ``input_signature`` traces once. NumPy scalars are tensors to TF.
* tensors of varying shape: ``input_signature`` with ``None`` traces once;
  ``reduce_retracing=True`` twice (the first shape, then a generalised one).
* varying dtypes: casting before the call traces once; ``reduce_retracing`` does not merge them.
* a list whose length varies: a stacked tensor alone still traces per length (its shape
  changes); with an ``input_signature`` whose length is ``None`` it traces once.
* a new Python object per call traces per object; reusing one, or passing tensors, once.
* same arguments, new trace: a ``tf.distribute`` strategy scope (or replica context) differs;
  a device scope or a changed Python global does not retrace on 2.21 (the global's old value is
  silently kept).

Where the text depends on the TF version, it is chosen by the running version
(:func:`tf_version`, injectable for tests): ``reduce_retracing`` is TF 2.9's name for
``experimental_relax_shapes``.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tfperf.profile.step_shape import StepShape

RENAMED_RELAX_SHAPES = (2, 9)  # tf.function(reduce_retracing=) from TF 2.9 on


def tf_version() -> tuple[int, int] | None:
    """(major, minor) of the TensorFlow this process runs; None when none is imported."""
    tf = sys.modules.get("tensorflow")
    match = re.match(r"(\d+)\.(\d+)", str(getattr(tf, "__version__", "")))
    return (int(match[1]), int(match[2])) if match else None


def shape_option(version: tuple[int, int] | None) -> str:
    """The tf.function option that generalises shapes, as the running TF spells it."""
    if version is not None and version < RENAMED_RELAX_SHAPES:
        return "experimental_relax_shapes=True"
    return "reduce_retracing=True"


@dataclass(frozen=True)
class Remedy:
    rule: str | None  # the lint rule that finds the same cause in source
    hint: str


def for_retrace(kind: str, argument: str, *, version: tuple[int, int] | None,
                jit_compile: bool = False) -> Remedy:
    """The remedy for a retrace cause (``retrace.Change.kind``) of ``argument``."""
    relax = shape_option(version)
    arg = argument
    if kind == "python_value":
        return Remedy("TFP301", (
            f"pass tf.constant({arg}) instead of the Python value (or give it a "
            f"tf.TensorSpec in an input_signature): one trace serves every value; "
            f"{relax} does not help, it generalises tensor shapes, not Python values"))
    if kind == "shape":
        hint = (f"give tf.function an input_signature with None for the dimension of {arg} "
                f"that varies: one trace serves every size; or {relax}: one more trace, then "
                f"a generalised shape serves every size")
        if jit_compile:  # XLA compiles per concrete shape: padding bounds the shapes
            return Remedy("TFP305", hint + f"; or pad {arg} to a few fixed lengths: one "
                                           f"trace per length")
        return Remedy("TFP307", hint)
    if kind == "dtype":
        return Remedy("TFP501", f"cast {arg} to one dtype before the call (tf.cast): one "
                                f"trace; {relax} does not merge dtypes")
    if kind == "new_object":
        # no lint rule finds this one (TFP302 is about re-created tf.functions)
        return Remedy(None, f"a new Python object as {arg} is a new trace each call: reuse "
                            f"one object, or pass the numbers it carries as tensors")
    if kind == "type":
        return Remedy("TFP301", f"pass {arg} as one type every call: a tensor of one dtype "
                                f"(tf.cast({arg}, tf.float32), say)")
    if kind == "structure":
        return Remedy("TFP301", (
            f"keep {arg}'s nesting and length fixed; or pass it as one tensor (tf.stack) with "
            f"an input_signature whose length dimension is None (a stacked tensor alone "
            f"still retraces: its shape changes with the length)"))
    return Remedy(None, (
        "the arguments matched an earlier trace, so the call's context changed: another "
        "tf.distribute strategy's scope (tf.saved_model.save also traces once more); make "
        "the calls under one strategy"))


RECREATED = Remedy("TFP302", "create the tf.function once (module level or __init__) and "
                             "reuse it")


def per_instance(owner: str) -> Remedy:
    """A tf.function method: each instance has its own tf.function, traced anew."""
    return Remedy("TFP302", f"each {owner} object has its own tf.function, traced on its first "
                            f"call: create the object once and reuse it")


HOST_SYNC = Remedy("TFP201", "each conversion waits for the value and copies it to the host: "
                             "keep values as tensors in the loop and convert once after it")
EAGER_STORM = Remedy("TFP101", "replace the Python loop by whole-tensor ops (broadcast, "
                               "reduce_sum, einsum), then wrap the result in "
                               "tf.function(jit_compile=True)")
EAGER_SHARE = Remedy("TFP306", "wrap the hot loop body or training step in tf.function")
INJECTED_PREFETCH = (2, 12)  # tf.data appends prefetch(AUTOTUNE) itself from TF 2.12


def input_pipeline(version: tuple[int, int] | None, maps_parallel: bool = False) -> Remedy:
    """tf.data's levers, as the running TF needs them: from 2.12 a final prefetch is
    injected by tf.data itself (lint's TFP601 says the same), so it is not the lever.
    ``maps_parallel``: every map of the file already passes num_parallel_calls, so that is
    not the lever either."""
    if maps_parallel:
        first = ("tf.data already prefetches here (TF 2.12+ appends prefetch(AUTOTUNE) "
                 "itself)" if version is not None and version >= INJECTED_PREFETCH else
                 "end the tf.data pipeline with .prefetch(tf.data.AUTOTUNE)")
        return Remedy("TFP605", f"{first}; its maps already run in parallel "
                                f"(num_parallel_calls): cache() what does not change, take "
                                f"larger batches, or make the per-element work TF ops (a "
                                f"numpy_function or py_function runs under Python's lock)")
    if version is not None and version >= INJECTED_PREFETCH:
        return Remedy("TFP602", "tf.data already prefetches here (TF 2.12+ appends "
                                "prefetch(AUTOTUNE) itself): cache() what does not change, "
                                "give map num_parallel_calls=tf.data.AUTOTUNE, or take larger "
                                "batches so the per-batch cost of the Python loop counts less")
    return Remedy("TFP601", "end the tf.data pipeline with .prefetch(tf.data.AUTOTUNE); give "
                            "map num_parallel_calls=tf.data.AUTOTUNE; cache what does not "
                            "change")


# A capture read with --read may come from any TensorFlow (it records no version): the
# advice names the line between the two.
INPUT_PIPELINE_ANY_TF = Remedy(
    "TFP602", "give map num_parallel_calls=tf.data.AUTOTUNE, cache() what does not change, "
              "or take larger batches; on TF before 2.12 also end the pipeline with "
              ".prefetch(tf.data.AUTOTUNE) (from 2.12 tf.data appends it itself; the capture "
              "does not record which TF made it)")


PREDICT_PER_ITEM = Remedy("TFP105", "call the model on the item (model(x, training=False)) "
                                    "instead of model.predict, or predict the whole batch at "
                                    "once: each predict call builds its own data pipeline and "
                                    "runs a step function")
MODEL_CALL_PER_ITEM = Remedy("TFP105", "stack the items and call the model once on the batch "
                                       "when they are independent; when each depends on the "
                                       "last (an agent acting step by step), compile the call "
                                       "once, act = tf.function(model), and call act(x) per "
                                       "item")
WEIGHT_LOOP = Remedy("TFP101", "a Python loop of small ops per weight (a soft target update "
                               "`w * tau + t * (1 - tau)`, say): each op runs eagerly, one "
                               "weight at a time; compile the loop once in a @tf.function that "
                               "assigns each variable in place, target.assign(tau * w + "
                               "(1 - tau) * target), instead of building a list for "
                               "set_weights (a host copy of every weight)")
EAGER_UPDATE = Remedy("TFP306", "compile the update: put the loss, tape.gradient and "
                                "apply_gradients of one update in a function decorated with "
                                "@tf.function and call it per update; where the loop updates "
                                "once per item or time step, sum the losses and update once "
                                "per batch or episode")


def update_per_item(shape: StepShape, tf: str = "tf") -> str:
    """The fix of one optimizer update per time step (``step_shape.StepShape``)."""
    where = f"line {shape.update_loop_line}" if shape.update_loop_line else "the inner loop"
    text = (f"accumulate the loss over the loop at {where} (sum the per-step losses, or "
            f"stack the steps' log-probabilities and returns and compute the loss as one "
            f"tensor), then take one tape.gradient and one apply_gradients per episode or "
            f"batch: each update is a whole optimizer step run op by op; then compile that "
            f"update with @{tf}.function")
    if shape.env is not None:
        text += f"; keep the environment ({shape.env.text}) in Python"
    return text


def env_in_step(shape: StepShape, tf: str = "tf") -> str:
    """The fix of an eager episode loop that steps an environment (``StepShape.env``)."""
    blockers = f"{shape.env}" + (f" and the host-side sampling {shape.host_sample}"
                                 if shape.host_sample else "")
    return (f"the episode cannot be one tf.function: it runs {blockers} every environment "
            f"step, so keep the environment loop in Python and compile the model parts: "
            f"act with a compiled model call (act = {tf}.function(model), sample from its "
            f"output), record the states, actions and rewards, then run one "
            f"@{tf}.function update per episode over the stacked states, actions and returns "
            f"(the model call, the loss as one tensor, tape.gradient, apply_gradients)")


def fit_per_call(name: str, around_s: float, run_s: float) -> str:
    """The fix of ``fit``/``evaluate`` called once per small batch (its set-up dominates)."""
    one = "train_on_batch" if name.startswith("fit") else "test_on_batch"
    return (f"each {name}() call builds its data adapter, iterator and callbacks before its "
            f"first batch ({around_s:.2f} s of eager work around {run_s:.2f} s of compiled "
            f"steps here): for one batch at a time call model.{one}(x, y) (or a "
            f"@tf.function train step), or give one {name}() call more data")


def compute_bound(call_s: float, around_share: float) -> str:
    """The fix text of a compiled step whose time is its computation (long calls, little
    eager work around them): no Python lever; what changes the time is the computation."""
    call = f"{call_s * 1e3:.0f} ms" if call_s < 1 else f"{call_s:.2f} s"
    return (f"compute-bound: each compiled call runs {call} of the model's own ops and the "
            f"eager work around the calls is {100 * around_share:.1f} % of their time, so "
            f"no change to the Python loop helps; what is left is the computation itself: a "
            f"GPU (with mixed precision there), a smaller model or shorter inputs, fewer "
            f"steps")


KERAS_FIT = Remedy(None, "the step is compiled already: what is left per step is Keras's own "
                         "Python around it; compile(..., steps_per_execution=N) runs N batches "
                         "per call, and a larger batch_size does the same work in fewer steps; "
                         "the tracing is paid once per fit")
COMPILED_STEP = Remedy(None, "already a tf.function: its time is the computation itself; "
                             "jit_compile=True may fuse its ops (tfperf tune measures it on "
                             "your inputs), and on a GPU mixed precision halves the traffic")
KERAS_EAGER = Remedy(None, "remove run_eagerly=True from compile() (and model.run_eagerly = "
                           "True, tf.config.run_functions_eagerly(True)): Keras then compiles "
                           "its train step, one graph per step instead of every op from Python")
KERAS_EAGER_UNKNOWN = Remedy(None, "Keras ran its steps eagerly: look for run_eagerly=True or "
                                   "tf.config.run_functions_eagerly(True) (here or in what the "
                                   "script imports) and remove it")
