"""A step's peak predicted from the graph TensorFlow traced for it: tensor sizes and liveness.

The traced graph (``get_concrete_function`` for inputs of a given batch size: every shape
static) is replayed in its creation order, a valid order TF's executor follows closely on a
step's critical path. Each op's outputs get a buffer of elements × dtype size, freed when its
last consumer has run, as TensorFlow's refcounted buffers are. What TF does not copy is not
counted again:

* views share their input's buffer (``Identity``, ``Reshape``, ``ExpandDims``, ``Squeeze``,
  ``StopGradient``, ``EnsureShape``, ``ReadVariableOp`` returns the variable's own buffer,
  ``TensorListGetItem``/``PopBack`` an element of the list);
* element-wise kernels write into an input whose buffer dies with them (TF's
  ``forward_input_or_allocate_output``): same size and dtype, last consumer, not a variable;
* function calls, conditionals and loops run their own graphs: a call's peak inside it is
  added at the call; a ``While`` loop holds its trip count times what its body pushes onto
  TensorLists (the activations kept for the backward pass), plus one iteration's peak.

Weights, optimizer slots and captured tensors (variables and eager tensors the function
captures), the step's inputs and graph constants are *persistent*: held for the whole step.
Not modelled (stated in the report): kernels' scratch memory (oneDNN workspaces), and ops
whose output shape the trace leaves unknown (listed, counted as 0).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

VIEW_OPS = {"Identity", "Reshape", "ExpandDims", "Squeeze", "StopGradient", "PreventGradient",
            "EnsureShape", "Snapshot", "ReadVariableOp", "TensorListGetItem",
            "TensorListPopBack", "Bitcast", "CheckNumerics", "DebugIdentityV3", "_Retval"}
MULTI_VIEW_OPS = {"IdentityN"}
CALL_OPS = {"PartitionedCall", "StatefulPartitionedCall"}
IF_OPS = {"If", "StatelessIf"}
WHILE_OPS = {"While", "StatelessWhile"}
# Kernels that reuse an input's buffer for their output when it dies with them.
INPLACE_OPS = {
    "Add", "AddV2", "Sub", "Mul", "Div", "RealDiv", "DivNoNan", "Maximum", "Minimum", "Pow",
    "SquaredDifference", "Neg", "Abs", "Square", "Sqrt", "Rsqrt", "Exp", "Log", "Log1p",
    "Tanh", "Sigmoid", "Relu", "Relu6", "Elu", "Selu", "Softplus", "LeakyRelu", "Sign",
    "Floor", "Ceil", "Round", "Reciprocal", "Sin", "Cos", "Erf", "BiasAdd", "ReluGrad",
    "Relu6Grad", "TanhGrad", "SigmoidGrad", "EluGrad", "LeakyReluGrad", "SoftplusGrad",
    "RsqrtGrad", "SqrtGrad", "ClipByValue", "Select", "SelectV2", "AddN", "Gelu",
    "_FusedMatMul", "OnesLike", "ZerosLike", "FusedBatchNormV3",
}
NO_BUFFER_DTYPES = {"resource", "variant", "string"}
# Scratch a kernel allocates while it runs, as a multiple of its output (measured on TF 2.21's
# CPU kernels: Einsum lays its result out in a temporary before the final transpose).
SCRATCH_OPS = {"Einsum": 1.0}
# oneDNN's max pooling also returns a workspace (one byte per output element) that its
# gradient reads: held from the forward pass to the backward, as an output is.
WORKSPACE_OPS = {"MaxPool": 1, "MaxPoolV2": 1}


def onednn() -> bool:
    """Whether TensorFlow runs oneDNN's CPU kernels (x86 builds, unless turned off)."""
    import os
    import platform

    flag = os.environ.get("TF_ENABLE_ONEDNN_OPTS", "").strip().lower()
    if flag in ("0", "false"):
        return False
    return platform.machine().lower() in ("x86_64", "amd64") or flag in ("1", "true")


@dataclass
class Live:
    """A buffer live at the predicted peak."""

    node: str
    bytes: int
    shape: str

    def to_dict(self) -> dict[str, Any]:
        return {"node": self.node, "bytes": self.bytes, "shape": self.shape}


@dataclass
class GraphPeak:
    """The transient peak of a graph (above its inputs and persistent tensors)."""

    peak_bytes: int = 0
    at: str = ""  # the op that ran when it was reached
    live: list[Live] = field(default_factory=list)
    unknown: set[str] = field(default_factory=set)  # op types with outputs of unknown size
    outputs_bytes: int = 0  # what the graph returns (new buffers)
    folded_bytes: int = 0  # outputs Grappler computes once, at compile time (held like Consts)
    pushed_per_iteration: dict[int, int] = field(default_factory=dict)  # loop body: list → B


def _dtype_size(dtype: Any) -> int:
    name = getattr(dtype, "name", str(dtype))
    if name in NO_BUFFER_DTYPES:
        return 0
    try:
        return int(dtype.size)
    except Exception:
        return 0


def tensor_bytes(t: Any) -> int | None:
    """Bytes of a graph tensor with a fully static shape; None when the shape is unknown."""
    size = _dtype_size(t.dtype)
    if size == 0:
        return 0
    n = t.shape.num_elements() if t.shape.rank is not None else None
    if n is None:
        return None
    return int(n) * size


class _Buffer:
    __slots__ = ("bytes", "node", "persistent", "refs", "shape")

    def __init__(self, nbytes: int, node: str, shape: str, persistent: bool) -> None:
        self.bytes = nbytes
        self.node = node
        self.shape = shape
        self.persistent = persistent
        self.refs = 0


def _library(graph: Any) -> dict[str, Any]:
    """Function name → its graph, from this graph and the graphs enclosing it."""
    out: dict[str, Any] = {}
    g = graph
    while g is not None:
        for name, fn in getattr(g, "_functions", {}).items():  # private: guarded by getattr
            name = name.decode() if isinstance(name, bytes) else str(name)
            sub = getattr(fn, "graph", None)
            if sub is not None and name not in out:
                out[name] = sub
        g = getattr(g, "outer_graph", None)
    return out


def _trip_count(op: Any) -> int | None:
    """A while_v2 loop's maximum_iterations (its second input) when the trace can compute
    it (a constant, or ops of constants: Keras's ``Max`` of the sequence length)."""
    value = static_value(op.inputs[1])
    if value is None:
        return None
    try:
        n = int(value)
    except (TypeError, ValueError):
        return None
    return n if n >= 0 else None


#: Grappler folds no constant larger than this (constant_folding.cc's kMaxConstantSize)
MAX_FOLDED_BYTES = 10 << 20
SHAPE_OPS = {"Shape", "Size", "Rank", "ShapeN"}


def constant_folded(ops: list[Any], frontier: bool = False) -> set[Any]:
    """Ops Grappler's constant folding replaces by constants: stateless ops whose inputs are
    all constants (or shapes the trace fixes), with outputs of at most 10 MiB. Their outputs
    are held for the life of the graph, like ``Const``s (the gradient of a mean, a ``Tile``
    of 1/N over the batch, is one). ``frontier``: only those a computed op reads (a folded
    chain leaves one constant, its last)."""
    constant: set[Any] = set()
    out: set[Any] = set()
    for op in ops:
        if op.type == "Const":
            constant.add(op)
            continue
        if op.type in SHAPE_OPS:
            if all(t.shape.is_fully_defined() for t in op.inputs):
                constant.add(op)
            continue
        try:
            stateful = op.op_def.is_stateful
        except Exception:
            stateful = True
        if stateful or not op.inputs or op.control_inputs or op.type in (
                "Placeholder", "Identity") or op.type.startswith(("Random", "Stateless")):
            continue
        if all(t.op in constant for t in op.inputs):
            size = sum(tensor_bytes(t) or 0 for t in op.outputs)
            if size <= MAX_FOLDED_BYTES:
                constant.add(op)
                if size:
                    out.add(op)
    if frontier:
        out = {op for op in out
               if any(c not in constant for t in op.outputs for c in t.consumers())}
    return out


def static_value(t: Any, depth: int = 0) -> Any:
    """The value of a graph tensor the trace fixes (constants and a few ops of them), else
    None. TF's ``get_static_value`` stops at ``Max``/``Range``, which Keras's RNN loops use."""
    import numpy as np
    import tensorflow as tf

    try:
        value = tf.get_static_value(t)
    except Exception:
        value = None
    if value is not None or depth > 8:
        return value
    op = t.op
    args = [static_value(i, depth + 1) for i in op.inputs]
    if any(a is None for a in args):
        return None
    reducers: dict[str, Any] = {"Max": np.max, "Min": np.min, "Sum": np.sum, "Prod": np.prod}
    try:
        if op.type in reducers:
            axis = tuple(int(a) for a in np.atleast_1d(args[1]))
            return reducers[op.type](args[0], axis=axis) if axis else np.asarray(args[0])
        if op.type == "Range":
            return np.arange(args[0], args[1], args[2])
        if op.type in ("Identity", "Cast"):
            return np.asarray(args[0])
        if op.type in ("AddV2", "Add"):
            return np.asarray(args[0]) + np.asarray(args[1])
    except Exception:
        return None
    return None


def _dependencies(ops: list[Any]) -> tuple[dict[Any, int], dict[Any, int],
                                             dict[Any, list[Any]]]:
    """Each op's position, how many of ``ops`` it waits on (data and control inputs), and the
    ops that wait on it: what both schedules below start from."""
    index = {op: k for k, op in enumerate(ops)}
    waiting: dict[Any, int] = {}
    users: dict[Any, list[Any]] = defaultdict(list)
    for op in ops:
        preds = {i.op for i in op.inputs if i.op in index} | \
                {c for c in op.control_inputs if c in index}
        waiting[op] = len(preds)
        for p in preds:
            users[p].append(op)
    return index, waiting, users


def ready_order(ops: list[Any], depth_first: bool = False) -> list[Any]:
    """An order TF's executor may take: ops whose inputs are all computed run in the order
    they became ready (first ready, first run), or ``depth_first``: the op made ready last
    runs next, as an executor thread does when it runs a finished op's successor inline."""
    index, waiting, users = _dependencies(ops)
    queue = [op for op in ops if waiting[op] == 0]
    if depth_first:
        queue.reverse()
    out = []
    head = 0
    while head < len(queue) if not depth_first else queue:
        if depth_first:
            op = queue.pop()
        else:
            op = queue[head]
            head += 1
        out.append(op)
        ready = []
        for u in sorted(users[op], key=index.__getitem__):
            waiting[u] -= 1
            if waiting[u] == 0:
                ready.append(u)
        queue.extend(reversed(ready) if depth_first else ready)
    if len(out) < len(ops):  # a cycle (never in a traced graph): keep creation order
        return ops
    return out


#: ops the executor runs at once in the parallel order (TF's inter-op pool has a thread per
#: core; two is what a busy 2-core machine gives, and what a step's independent branches —
#: a weight's gradient beside the next layer's — most often use)
EXECUTOR_THREADS = 2


def parallel_events(ops: list[Any], workers: int) -> list[tuple[Any, bool]]:
    """(op, starts) events of ``workers`` threads taking ready ops first come first served,
    each op lasting in proportion to the bytes it reads and writes (a proxy: the memory an
    op touches, as its time on a CPU roughly does)."""
    import heapq

    index, waiting, users = _dependencies(ops)

    def cost(op: Any) -> float:
        moved = sum(tensor_bytes(t) or 0 for t in (*op.inputs, *op.outputs))
        return 1.0 + moved / 1e6

    ready = [op for op in ops if waiting[op] == 0]
    events: list[tuple[Any, bool]] = []
    active: list[tuple[float, int, Any]] = []
    now = 0.0
    while ready or active:
        while ready and len(active) < workers:
            op = ready.pop(0)
            events.append((op, True))
            heapq.heappush(active, (now + cost(op), index[op], op))
        now, _, op = heapq.heappop(active)
        events.append((op, False))
        for u in users[op]:
            waiting[u] -= 1
            if waiting[u] == 0:
                ready.append(u)
        ready.sort(key=index.__getitem__)
    if sum(1 for _, start in events if start) < len(ops):  # a cycle: keep creation order
        return [(op, start) for op in ops for start in (True, False)]
    return events


def simulate(graph: Any, library: dict[str, Any] | None = None, depth: int = 0,
             persistent_inputs: bool = True) -> GraphPeak:
    """The transient peak of running ``graph`` once (its inputs and variables held): the
    highest over the orders TF's executor may take (creation order, first ready first, depth
    first, and two threads side by side: with inter-op parallelism its order varies from
    step to step, and a step's peak with it)."""
    ops = list(graph.get_operations())
    best = _simulate(graph, ops, library, depth, persistent_inputs)
    orders: list[Any] = [ready_order(ops, depth_first) for depth_first in (False, True)]
    if depth == 0:  # a step's top level runs ops side by side; a loop body's are few
        orders.append(parallel_events(ops, EXECUTOR_THREADS))
    for order in orders:
        if order != ops:
            other = _simulate(graph, order, library, depth, persistent_inputs)
            if other.peak_bytes > best.peak_bytes:
                best = other
    return best


def _simulate(graph: Any, order: list[Any] | list[tuple[Any, bool]],
              library: dict[str, Any] | None, depth: int, persistent_inputs: bool) -> GraphPeak:
    """Replay ``order``: ops one after the other, or (op, starts) events of ops that overlap."""
    events: list[tuple[Any, bool]] = (
        order if order and isinstance(order[0], tuple)
        else [(op, start) for op in order for start in (True, False)])
    ops = [op for op, start in events if start]
    lib = dict(library or {})
    lib.update(_library(graph))
    out = GraphPeak()
    use_onednn = onednn()
    folded = constant_folded(ops)
    kept = constant_folded(ops, frontier=True)  # a folded chain keeps its last constant
    consumers: dict[Any, int] = defaultdict(int)
    for op in ops:
        for t in op.inputs:
            consumers[t.ref()] += 1
    returned = {t.ref() for t in getattr(graph, "outputs", []) or []}
    buffers: dict[Any, _Buffer] = {}  # tensor ref → its buffer
    live_bytes = 0

    def new_buffer(t: Any, persistent: bool) -> _Buffer | None:
        nonlocal live_bytes
        n = tensor_bytes(t)
        if n is None:
            out.unknown.add(t.op.type)
            n = 0
        buf = _Buffer(n, t.op.name, str(t.shape), persistent)
        if not persistent:
            live_bytes += n
        return buf

    def release(buf: _Buffer) -> None:
        nonlocal live_bytes
        if not buf.persistent:
            live_bytes -= buf.bytes
            buf.bytes = 0  # released once

    def peak_candidate(extra: int, where: str) -> None:
        if live_bytes + extra > out.peak_bytes:
            out.peak_bytes = live_bytes + extra
            out.at = where
            out.live = _snapshot(buffers)

    extra_live = 0  # scratch and nested peaks of the ops running now
    running: dict[Any, tuple[list[_Buffer | None], list[tuple[Any, _Buffer]], int]] = {}
    for op, start in events:
        kind = op.type
        if not start:  # the op ends: its inputs lose a reader, unused outputs go
            ended_inputs, ended_made, ended_extra = running.pop(op)
            extra_live -= ended_extra
            for buf in ended_inputs:
                if buf is None:
                    continue
                buf.refs -= 1
                if buf.refs <= 0:
                    release(buf)
            for _, buf in ended_made:  # produced and never used
                if buf.refs <= 0:
                    release(buf)
            continue
        if kind in ("Placeholder", "Const", "VarHandleOp") or op in folded:
            for t in op.outputs:
                held = kind != "Placeholder" or persistent_inputs
                buf = new_buffer(t, persistent=held)
                if buf is not None:
                    buffers[t.ref()] = buf
                    buf.refs += consumers[t.ref()] + (t.ref() in returned)
                    if op in kept:
                        out.folded_bytes += buf.bytes
            running[op] = ([], [], 0)
            continue
        inputs = [buffers.get(t.ref()) for t in op.inputs]
        extra = 0
        if kind in CALL_OPS or kind in IF_OPS or kind in WHILE_OPS:
            extra = _nested(op, lib, depth, out)
        elif kind in SCRATCH_OPS:
            extra = int(SCRATCH_OPS[kind] * sum(tensor_bytes(t) or 0 for t in op.outputs))
        made: list[tuple[Any, _Buffer]] = []
        for i, t in enumerate(op.outputs):
            view = None
            if kind in VIEW_OPS and inputs:
                view = inputs[0]  # a TensorList's element is part of the list's memory
            elif kind in MULTI_VIEW_OPS and i < len(inputs):
                view = inputs[i]
            elif kind in INPLACE_OPS and i == 0:
                view = _donor(op, t, inputs)
            if view is not None:
                made.append((t, view))
                continue
            buf = new_buffer(t, persistent=False)
            if buf is not None:
                if kind in WORKSPACE_OPS and i == 0 and use_onednn:
                    grow = (t.shape.num_elements() or 0) * WORKSPACE_OPS[kind]
                    buf.bytes += grow
                    live_bytes += grow
                if kind in WHILE_OPS:
                    buf.bytes += _loop_growth(op, i, lib, depth, out)
                    live_bytes_add = buf.bytes - (tensor_bytes(t) or 0)
                    live_bytes += live_bytes_add
                made.append((t, buf))
        for t, buf in made:
            buffers[t.ref()] = buf
            buf.refs += consumers[t.ref()] + (t.ref() in returned)
        extra_live += extra
        peak_candidate(extra_live, op.name)
        running[op] = (inputs, made, extra)
    out.outputs_bytes = sum(b.bytes for r, b in buffers.items() if r in returned
                            and not b.persistent)
    if depth > 0:
        out.pushed_per_iteration = _pushed(graph, buffers)
    return out


def _donor(op: Any, t: Any, inputs: Sequence[_Buffer | None]) -> _Buffer | None:
    """An input buffer the element-wise kernel may write its output into."""
    size = tensor_bytes(t)
    if not size:
        return None
    for src, buf in zip(op.inputs, inputs, strict=False):
        if buf is None or buf.persistent or buf.refs != 1 or buf.bytes != size:
            continue
        if src.dtype == t.dtype:
            return buf
    return None


def _snapshot(buffers: dict[Any, _Buffer]) -> list[Live]:
    seen: set[int] = set()
    out = []
    for buf in buffers.values():
        if buf.persistent or buf.bytes <= 0 or id(buf) in seen:
            continue
        seen.add(id(buf))
        out.append(Live(buf.node, buf.bytes, buf.shape))
    return sorted(out, key=lambda b: -b.bytes)[:20]


def _nested(op: Any, lib: dict[str, Any], depth: int, out: GraphPeak) -> int:
    """The peak inside a call, a conditional's branches or one loop iteration."""
    if depth > 8:
        return 0
    names: list[str] = []
    try:
        if op.type in CALL_OPS:
            names = [op.get_attr("f").name]
        elif op.type in IF_OPS:
            names = [op.get_attr("then_branch").name, op.get_attr("else_branch").name]
        else:
            names = [op.get_attr("body").name]
    except Exception:
        return 0
    peak = 0
    for name in names:
        sub = lib.get(name)
        if sub is None:
            out.unknown.add(f"{op.type} (function {name} not found)")
            continue
        inner = simulate(sub, lib, depth + 1, persistent_inputs=True)
        out.unknown |= inner.unknown
        peak = max(peak, inner.peak_bytes)
    return peak


def _loop_growth(op: Any, index: int, lib: dict[str, Any], depth: int, out: GraphPeak) -> int:
    """Bytes a loop's TensorList output ``index`` holds after the loop: the trip count × what
    the body pushes onto it per iteration."""
    if op.outputs[index].dtype.name != "variant":
        return 0
    try:
        body = lib.get(op.get_attr("body").name)
    except Exception:
        return 0
    if body is None:
        return 0
    trips = _trip_count(op)
    inner = simulate(body, lib, depth + 1)
    per = inner.pushed_per_iteration.get(index, 0)
    if per and trips is None:
        out.unknown.add(f"{op.type} (trip count not static)")
        return 0
    return per * (trips or 0)


def _pushed(graph: Any, buffers: dict[Any, _Buffer]) -> dict[int, int]:
    """Per output of a loop body: bytes pushed or set onto that TensorList per iteration,
    counting freshly computed elements and loop-carried values (a new buffer each
    iteration), not a variable read or a value the loop passes through unchanged."""
    out: dict[int, int] = {}
    inputs = list(getattr(graph, "inputs", []) or [])
    outputs = list(getattr(graph, "outputs", []) or [])
    for k, t in enumerate(outputs):
        op = t.op
        if op.type not in ("TensorListPushBack", "TensorListSetItem"):
            continue
        elem = op.inputs[-1]
        src = elem.op
        while src.type in VIEW_OPS and src.inputs and src.type != "ReadVariableOp":
            src = src.inputs[0].op
        if src.type == "ReadVariableOp":
            continue
        if src.type == "Placeholder" and not _carried(src.outputs[0], inputs, outputs):
            continue
        out[k] = tensor_bytes(elem) or 0
    return out


def _carried(placeholder: Any, inputs: list[Any], outputs: list[Any]) -> bool:
    """Whether a loop body's input changes from iteration to iteration (a loop variable the
    body computes anew), rather than passing through (a captured tensor)."""
    try:
        j = next(i for i, t in enumerate(inputs) if t is placeholder)
    except StopIteration:
        return False
    if j >= len(outputs):
        return False
    src = outputs[j].op
    while src.type in ("Identity", "IdentityN") and src.inputs:
        if any(i is placeholder for i in src.inputs):
            return False
        src = src.inputs[0].op
    return src is not placeholder.op


__all__ = ["GraphPeak", "Live", "simulate", "tensor_bytes"]
