"""Does each variant compute what the baseline computes? The checks ``compare()`` runs after
timing, on the outputs it snapshotted.

1. **Drift**: a variant's output of a later timed call must equal its first call's; one that
   changes is stateful (it updates a variable it returns) or random, and is reported as such.
   If the *baseline*'s output drifts, nothing can be compared with it.
2. **Values**: :func:`tfperf.bench.equivalence.compare_outputs`, on the first ``k`` items of
   axis 0 when one side ran on a quick-mode slice.
3. ``reference="float64"``: the baseline is run once more on its inputs cast to float64, and
   values are judged against that truth (each variant with its own dtype's tolerance), so a
   reduced-precision variant is not judged against float32's own rounding. A baseline that
   cannot run on float64 inputs is replaced, for the truth only, by the first variant that
   can and that agrees with it (the notes say which).
4. ``grad=True``: the same check on the gradients (``tf.GradientTape``) of the sum of each
   output's floating leaves with respect to the trainable inputs: the ``tf.Variable``
   arguments, or, when there are none, every floating tensor argument.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tfperf.bench.batching import quick_slice, slice_tree
from tfperf.bench.equivalence import Equivalence, compare_outputs, snapshot

REFERENCES = ("float64",)


@dataclass
class Outputs:
    """One variant as the checks see it: how it was called and what it returned."""

    name: str
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    first: Any  # snapshot of the first call's output
    last: Any = None  # snapshot of the latest timed call's output; None: no later call
    batch: int | None = None  # items of axis 0 it ran on (quick_batch), None: all
    notes: list[str] = field(default_factory=list)


def describe_error(exc: BaseException) -> str:
    # an eager op's error opens with its kernel's name and device ({{function_node
    # __wrapped__Reshape_device_/job:localhost/...}}): 100 characters that cut off the reason
    message = re.sub(r"^\s*\{\{function_node [^}]*\}\}\s*", "", str(exc))
    text = [line.strip() for line in message.strip().splitlines() if line.strip()]
    first = text[0] if text else ""
    if first == "in user code:" and len(text) > 1:
        # a trace's error: autograph's header, the user's frames, the error itself, and
        # sometimes Keras' "Arguments received by Layer.call()" after it
        text = [re.sub(r"\x1b\[[0-9;]*m", "", t) for t in text]  # Keras' bold
        errors = [i for i, t in enumerate(text) if i and re.match(r"[\w.]+(Error|Exception): ", t)]
        at = errors[-1] if errors else len(text) - 1
        last = text[at]
        if "Exception encountered when calling" in last and at + 1 < len(text):
            last = f"{type(exc).__name__}: {text[at + 1]}"  # Keras: the reason on the next line
        where = next((t for t in reversed(text) if t.startswith("File ")), "")
        head = last if last.startswith(f"{type(exc).__name__}:") else \
            f"{type(exc).__name__}: {last}"
        return (f"{head} (while tracing, {where})" if where else f"{head} (while tracing)")[:300]
    return f"{type(exc).__name__}: {first}"[:300]


def _tf() -> Any:
    return sys.modules.get("tensorflow")


def _map_leaves(value: Any, fn: Callable[[Any], Any]) -> Any:
    if isinstance(value, Mapping):
        return {k: _map_leaves(v, fn) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        items = [_map_leaves(v, fn) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    return fn(value)


def _to_float64(value: Any) -> Any:
    import numpy as np

    tf = _tf()

    def cast(x: Any) -> Any:
        if tf is not None and isinstance(x, (tf.Tensor, tf.Variable)) and x.dtype.is_floating:
            return tf.cast(x, tf.float64)
        if isinstance(x, np.ndarray) and x.dtype.kind == "f":
            return x.astype(np.float64)
        return x

    return _map_leaves(value, cast)


def _drift(out: Outputs, rtol: float | None, atol: float | None) -> Equivalence | None:
    if out.last is None:
        return None
    same = compare_outputs(out.first, out.last, rtol=rtol, atol=atol)
    if same.equivalent is not False:
        return None
    # The check compared a later call (as "the output") with the first (as "the baseline").
    same.reason = same.reason.replace("the baseline has", "the first call gave") \
        .replace("the baseline's", "the first call's").replace("output", "a later call's output", 1)
    return same


class Verifier:
    """Checks variants against one baseline; the baseline's own problems are found once."""

    def __init__(self, base: Outputs, full_args: tuple[Any, ...], kwargs: dict[str, Any], *,
                 rtol: float | None = None, atol: float | None = None,
                 reference: str | None = None, grad: bool = False,
                 others: Sequence[Outputs] = ()) -> None:
        if reference is not None and reference not in REFERENCES:
            raise ValueError(f"reference must be one of {REFERENCES}, not {reference!r}")
        self.base, self.full_args, self.kwargs = base, full_args, kwargs
        self.rtol, self.atol, self.grad = rtol, atol, grad
        self.problem: str | None = None
        drift = _drift(base, rtol, atol)
        if drift is not None:
            self.problem = ("the baseline's output changes from call to call (random or "
                            f"stateful), so nothing can be compared with it: {drift.reason}")
        self.truth: Any = None
        if reference and self.problem is None:
            self._reference(base, kwargs, others)
        self._base_grads: dict[int | None, Any] = {}

    def _reference(self, base: Outputs, kwargs: dict[str, Any],
                   others: Sequence[Outputs]) -> None:
        """The truth: the baseline on its inputs cast to float64; if it cannot run on them
        (it pins float32 somewhere), the first other variant that can and that agrees with
        the baseline in float32, and the notes say so."""
        args64, kwargs64 = _to_float64(base.args), _to_float64(kwargs)
        try:
            self.truth = snapshot(base.fn(*args64, **kwargs64))
        except Exception as exc:  # the user's code, any error
            failed = describe_error(exc)
        else:
            self._own_error(base, "its own error against the float64 reference")
            return
        for other in others:
            agrees = compare_outputs(base.first, slice_tree(other.first, base.batch)
                                     if base.batch else other.first, rtol=self.rtol,
                                     atol=self.atol)
            if other.batch or agrees.equivalent is not True:
                continue
            try:
                self.truth = snapshot(other.fn(*args64, **kwargs64))
            except Exception:  # this one pins float32 too: try the next
                continue
            base.notes.append(f"the float64 reference is {other.name!r} run on float64 "
                              f"inputs: the baseline could not run on them ({failed})")
            self._own_error(base, "its own error against that reference")
            return
        self.problem = ("--reference float64: neither the baseline nor a variant agreeing "
                        f"with it could run on float64 inputs (the baseline: {failed})")

    def _own_error(self, base: Outputs, label: str) -> None:
        own = compare_outputs(base.first, base.first, reference=self.truth)
        if own.max_abs_err is not None:
            base.notes.append(f"{label}: max abs {own.max_abs_err:.3g}, tolerance used "
                              f"{100 * (own.tolerance_used or 0):.0f} %")

    def check(self, out: Outputs) -> tuple[Equivalence, Equivalence | None]:
        """(values, gradients or None) of ``out`` against the baseline."""
        if self.problem:
            unknown = Equivalence(None, self.problem)
            return unknown, (unknown if self.grad else None)
        drift = _drift(out, self.rtol, self.atol)
        if drift is not None:
            return Equivalence(False, "its output changes from call to call (stateful or "
                                      f"random): {drift.reason}", worst=drift.worst), None
        sizes = [k for k in (self.base.batch, out.batch) if k]
        k = min(sizes) if sizes else None
        ref, got, truth = self.base.first, out.first, self.truth
        if k:
            ref, got = slice_tree(ref, k), slice_tree(got, k)
            truth = slice_tree(truth, k) if truth is not None else None
            out.notes.append(f"outputs compared on the first {k} items of axis 0")
        values = compare_outputs(ref, got, rtol=self.rtol, atol=self.atol, reference=truth)
        return values, (self._check_grads(out, k) if self.grad else None)

    def _check_grads(self, out: Outputs, k: int | None) -> Equivalence:
        args, _ = quick_slice(self.full_args, k)
        try:
            if k not in self._base_grads:
                self._base_grads[k] = gradients(self.base.fn, args, self.kwargs)
            base = self._base_grads[k]
        except Exception as exc:
            return Equivalence(None, f"the baseline's gradients: {describe_error(exc)}")
        try:
            mine = gradients(out.fn, args, self.kwargs)
        except Exception as exc:
            return Equivalence(False, f"its gradients could not be taken: "
                                      f"{describe_error(exc)}")
        return compare_outputs(base, mine, rtol=self.rtol, atol=self.atol)


class NoTrainableInputs(Exception):
    pass


def gradients(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Snapshot of d(sum of the output's floating leaves)/d(trainable inputs)."""
    import tensorflow as tf

    leaves = tf.nest.flatten((args, kwargs), expand_composites=False)
    sources = [x for x in leaves if isinstance(x, tf.Variable) and x.trainable]
    if not sources:
        sources = [x for x in leaves if isinstance(x, tf.Tensor) and x.dtype.is_floating]
    if not sources:
        raise NoTrainableInputs("--grad: no trainable input (no tf.Variable and no floating "
                                "tensor argument)")
    with tf.GradientTape() as tape:
        for s in sources:
            if isinstance(s, tf.Tensor):
                tape.watch(s)
        out = fn(*args, **kwargs)
    targets = [t for t in tf.nest.flatten(out, expand_composites=True)
               if isinstance(t, (tf.Tensor, tf.Variable)) and t.dtype.is_floating]
    if not targets:
        raise NoTrainableInputs("--grad: the output has no floating tensor to differentiate")
    return snapshot(list(tape.gradient(targets, sources)))


__all__ = ["REFERENCES", "NoTrainableInputs", "Outputs", "Verifier", "describe_error",
           "gradients"]
