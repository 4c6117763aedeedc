"""FLOPs and bytes of a whole function, from the graph TensorFlow traces for its inputs.

The function is traced once (a ``tf.function`` as it is, a plain function wrapped in one),
then every op of the graph is counted with :mod:`tfperf.roofline.flops` from the static shapes
the trace gives its inputs and outputs. Calls to other functions (``PartitionedCall``) are
counted inside, with the call's shapes. What cannot be counted (a loop whose trip count is
not in the graph, an op without a formula) is listed, never guessed. Imports TensorFlow.
"""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from tfperf.roofline.flops import FREE, Cost, op_cost

CALLS = {"PartitionedCall", "StatefulPartitionedCall"}
# Ops that do no arithmetic on data and need no formula to say so.
IGNORED = FREE | {"AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp",
                  "VariableV2", "VarIsInitializedOp", "Print", "PrintV2", "StringFormat",
                  "Assert", "NoOp", "_Recv", "_Send", "RandomUniform",
                  "RandomStandardNormal", "StatelessRandomUniformV2", "StatelessRandomNormalV2",
                  "StatelessRandomGetKeyCounter", "TruncatedNormal", "ZerosLike", "OnesLike",
                  "Const", "EnsureShape", "CheckNumerics", "IteratorGetNext"}
ATTRS = ("transpose_a", "transpose_b", "adj_x", "adj_y", "equation", "strides", "padding",
         "dilations", "data_format", "explicit_paddings", "is_training", "fused_ops")


@dataclass
class OpCount:
    name: str
    type: str
    dtype: str
    cost: Cost


@dataclass
class GraphCost:
    """A function's work per call."""

    ops: list[OpCount] = field(default_factory=list)
    uncounted: Counter[str] = field(default_factory=Counter)  # op type → how many
    error: str | None = None
    out_of_time: bool = False  # the trace passed graph_cost's limit_s

    @property
    def flops(self) -> float:
        return sum(o.cost.flops for o in self.ops)

    @property
    def bytes(self) -> float:
        return sum(o.cost.bytes for o in self.ops)

    @property
    def precision(self) -> str | None:
        """The dtype that does most of the FLOPs (picks the roof)."""
        by: Counter[str] = Counter()
        for o in self.ops:
            by[o.dtype] += int(o.cost.flops)
        top = by.most_common(1)
        return top[0][0] if top and top[0][1] > 0 else None

    def to_dict(self) -> dict[str, Any]:
        return {"flops": self.flops, "bytes": self.bytes, "precision": self.precision,
                "ops_counted": len(self.ops), "uncounted": dict(self.uncounted),
                "error": self.error}


def _attrs(op: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in ATTRS:
        try:
            value = op.get_attr(name)
        except (ValueError, TypeError):
            continue
        out[name] = value.decode() if isinstance(value, bytes) else value
    if "fused_ops" in out:
        out["fused_ops"] = [v.decode() if isinstance(v, bytes) else v for v in out["fused_ops"]]
    return out


def _shape(t: Any) -> tuple[int | None, ...] | None:
    try:
        dims = t.shape.as_list()
    except ValueError:  # unknown rank
        return None
    return tuple(dims)


def _count_graph(graph: Any, out: GraphCost, depth: int = 0) -> None:
    library: dict[str, Any] | None = None
    for op in graph.get_operations():
        kind = op.type
        if kind in CALLS:
            if depth > 8:
                out.uncounted[kind] += 1
                continue
            if library is None:
                library = {f.signature.name: f for f in graph.as_graph_def().library.function}
            if not _count_call(op, library, out, depth):
                out.uncounted[kind] += 1
            continue
        if kind in IGNORED:
            continue
        inputs = [_shape(t) for t in op.inputs]
        outputs = [_shape(t) for t in op.outputs]
        dtype = op.outputs[0].dtype if op.outputs else None
        itemsize = getattr(dtype, "size", 4) or 4
        if any(s is None for s in inputs + outputs):
            out.uncounted[kind] += 1
            continue
        cost = op_cost(kind, inputs, outputs, itemsize, _attrs(op))  # type: ignore[arg-type]
        if cost is None:
            out.uncounted[kind] += 1
            continue
        out.ops.append(OpCount(op.name, kind, getattr(dtype, "name", "?"), cost))


def _count_call(op: Any, library: dict[str, Any], out: GraphCost, depth: int) -> bool:
    try:
        from tensorflow.python.framework.function_def_to_graph import function_def_to_graph

        fdef = library.get(op.get_attr("f").name)
        if fdef is None:
            return False
        shapes = [t.shape for t in op.inputs]
        sub = function_def_to_graph(fdef, input_shapes=shapes)
    except Exception:
        return False
    _count_graph(sub, out, depth + 1)
    return True


#: A trace that creates more ops than this is stopped. A Python loop over a dataset, traced
#: without AutoGraph, never ends (each ``next`` is a new op and none raises StopIteration):
#: it once took 24 GB before the kernel killed it. An unrolled loop that large also takes
#: minutes to trace, more than a count of FLOPs is worth.
MAX_TRACED_OPS = 10_000
#: A trace that asks a dataset for more elements than this is stopped: ``list(ds)`` (which
#: AutoGraph does not convert, so TensorFlow's own 32-call guard is off) never ends in a graph,
#: and its stop costs the square of its ``next`` ops (each is matched with all the iterator's
#: consumers when the trace unwinds): 4 s of tracing then 24 s of unwinding at the op cap.
MAX_TRACED_NEXT = 256
_NEXT_OPS = {"IteratorGetNext", "IteratorGetNextSync", "IteratorGetNextAsOptional"}


class _TraceStopped(Exception):
    """A trace stopped before its end (subclasses say why; AutoGraph rewraps the exception
    as its own type with a message of its own, so the type, not an attribute, carries it)."""


class _TraceTooLarge(_TraceStopped):
    """The trace passed :data:`MAX_TRACED_OPS` ops."""


class _TraceOverDataset(_TraceStopped):
    """The trace asked a dataset for :data:`MAX_TRACED_NEXT` elements."""


class _TraceOutOfTime(_TraceStopped):
    """The trace passed its deadline."""


@contextlib.contextmanager
def _op_limit(limit: int, deadline: float | None = None) -> Iterator[None]:
    """Stop any graph built inside the block once it has created ``limit`` ops, asked a
    dataset for :data:`MAX_TRACED_NEXT` elements, or passed ``deadline`` (``perf_counter``
    time): TensorFlow's one op-creation entry point, wrapped for the block; left as it is if
    it is not there. Raised at an op's creation, the stop is an error that op could raise."""
    from tensorflow.python.framework import ops

    original = getattr(ops.Graph, "_create_op_internal", None)
    if original is None:
        yield
        return
    created = nexts = 0

    def counted(graph: Any, op_type: Any, *a: Any, **k: Any) -> Any:
        nonlocal created, nexts
        created += 1
        if created > limit:
            raise _TraceTooLarge(limit)
        if op_type in _NEXT_OPS:
            nexts += 1
            if nexts > MAX_TRACED_NEXT:
                raise _TraceOverDataset(MAX_TRACED_NEXT)
        if deadline is not None and time.perf_counter() > deadline:
            raise _TraceOutOfTime(deadline)
        return original(graph, op_type, *a, **k)

    ops.Graph._create_op_internal = counted
    try:
        yield
    finally:
        ops.Graph._create_op_internal = original


def graph_cost(fn: Callable[..., Any], args: Sequence[Any] = (),
               kwargs: dict[str, Any] | None = None, *,
               limit_s: float | None = None) -> GraphCost:
    """Trace ``fn`` on ``args`` and count every op of the graph (imports TensorFlow).
    ``limit_s``: seconds the traces may take (checked as each op is created); past it the
    count is not made and ``out_of_time`` says so."""
    import tensorflow as tf

    out = GraphCost()
    concrete = None
    deadline = None if limit_s is None else time.perf_counter() + max(0.0, limit_s)
    # Plain Python first (loops unroll: the count is per call all the same), AutoGraph if a
    # tensor-dependent branch needs it or plain tracing does not end (a loop over a dataset).
    for autograph in (False, True):
        try:
            traced = (fn if hasattr(fn, "get_concrete_function")
                      else tf.function(fn, autograph=autograph))
            with _op_limit(MAX_TRACED_OPS, deadline):
                concrete = traced.get_concrete_function(*args, **(kwargs or {}))
            break
        except _TraceOutOfTime:  # no time left for AutoGraph's trace either
            out.error = f"not counted: the trace passed its {limit_s:.2g} s limit"
            out.out_of_time = True
            return out
        except _TraceOverDataset:  # AutoGraph rewraps the message: say it in our words
            out.error = (f"not counted: the trace asked a dataset for over {MAX_TRACED_NEXT} "
                         "elements (list(ds), or a Python loop over it that AutoGraph did not "
                         "convert, never ends in a graph)")
        except _TraceTooLarge:
            out.error = (f"not counted: the trace passed {MAX_TRACED_OPS:,} ops (a Python loop "
                         "unrolled into the graph)")
        except Exception as exc:
            out.error = (f"does not trace: {type(exc).__name__}: "
                         f"{(str(exc).splitlines() or [''])[0][:160]}")
    if concrete is None:
        return out
    out.error = None
    _count_graph(concrete.graph, out)
    inner = getattr(fn, "python_function", None)
    if out.uncounted and inner is not None and getattr(fn, "input_signature", None):
        # An input_signature with None dimensions hides the shapes these inputs have: count
        # the same Python function traced for them instead.
        left = None if deadline is None else deadline - time.perf_counter()
        again = graph_cost(inner, args, kwargs, limit_s=left)
        if again.error is None and sum(again.uncounted.values()) < sum(out.uncounted.values()):
            return again
    return out
