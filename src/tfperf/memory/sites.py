"""Which layer and which line of the user's code an allocation belongs to.

An allocation event names its graph node (``sequential/dense/MatMul``,
``gradient_tape/sequential/dense/MatMul/MatMul``). The node's name scope is its layer (Keras
names a layer's ops under the layer's name); the node's ``traceback`` in the graph TensorFlow
traced gives the line of the user's code that created it (through AutoGraph too: TF maps the
converted code back to the user's file). The graphs are collected while the run traces them
(``GraphCollector``), and from the ``tf.function`` objects the caller names.

Grappler and oneDNN rename some nodes (a fused MatMul+BiasAdd+Relu keeps the last node's
name; inlined function calls gain their call's prefix): a name not found is looked up again
without its last, then its first, scope component.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from tfperf.profile.attribution import is_user_file

TRACE_STEP = ("tensorflow.python.eager.polymorphic_function.tracing_compilation",
              "_create_concrete_function")
BACKWARD_PREFIX = "gradient_tape/"
#: the function tf.function traces to initialise the variables a first trace created
INITIALIZER_FUNCTION = "initialize_variables"


@dataclass(frozen=True)
class Site:
    path: str
    line: int


_CALL_PREFIX = re.compile(r"^(?:(?:Stateful)?PartitionedCall(?:_\d+)?/)+")


def plain_name(node: str) -> str:
    """A node's name without the prefix of the function call it was inlined from
    (``StatefulPartitionedCall/``: Keras's fit runs its step through one)."""
    return _CALL_PREFIX.sub("", node)


def layer_of(node: str) -> str:
    """The layer (name scope) of a graph node; '' for a node at the top level."""
    name = plain_name(node)
    name = name[len(BACKWARD_PREFIX):] if name.startswith(BACKWARD_PREFIX) else name
    scope, _, _ = name.rpartition("/")
    return scope


def is_backward(node: str) -> bool:
    name = plain_name(node)
    return name.startswith(BACKWARD_PREFIX) or "/gradients/" in name


class SiteIndex:
    """Graph node name → the innermost user frame that created it."""

    def __init__(self) -> None:
        # Names and sites only, read when a graph is added: keeping the graphs would keep
        # alive what a leak check must see freed (a tf.function created per step).
        self._by_node: dict[str, Site | None] = {}
        self._found: dict[str, Site | None] = {}
        # function name → bytes of its graph's constants. By name, the latest trace: a
        # tf.function that creates variables traces twice, and only the second runs.
        self._constants: dict[str, int] = {}
        #: function name → its largest constant (op name, shape, bytes): says what the
        #: *constants* figure is (the gradient of a sum over a [512, 256] activation folds
        #: to a [512, 256] constant, as large as an input of that shape, and not it)
        self._largest: dict[str, tuple[str, str, int]] = {}
        #: the variables of the functions named by ``add_functions`` (a step's own)
        self.variables: dict[int, Any] = {}
        # the tensors those functions capture (an eager tensor a step reads from the enclosing
        # scope rather than takes), weakly: the leak check must see them freed
        self._captured: dict[int, weakref.ref[Any]] = {}

    def add_graph(self, graph: Any) -> None:
        try:
            ops = list(graph.get_operations())
            for op in ops:
                if op.name not in self._by_node:
                    self._by_node[op.name] = _user_site(op)
            name = str(getattr(graph, "name", id(graph)))
            if name != INITIALIZER_FUNCTION:  # its constants become the variables' values
                self._constants[name], largest = _constant_bytes(ops)
                if largest is not None:
                    self._largest[name] = largest
                else:
                    self._largest.pop(name, None)
        except Exception:  # a graph being built elsewhere: what was read stays
            return

    @property
    def constant_bytes(self) -> int:
        """What the graphs' constants hold once their functions run: ``Const`` ops and the
        outputs Grappler's constant folding makes constants (held from the first call on,
        so before a capture of later steps)."""
        return sum(self._constants.values())

    @property
    def largest_constant(self) -> tuple[str, str, int] | None:
        """The largest of the graphs' constants: (op name, shape, bytes)."""
        return max(self._largest.values(), key=lambda c: c[2], default=None)

    def add_functions(self, functions: Iterable[Any]) -> None:
        """``tf.function`` objects (or concrete functions): every graph they traced, and the
        variables those graphs use."""
        for fn in functions:
            concretes = []
            if hasattr(fn, "graph"):
                concretes = [fn]
            else:
                try:
                    concretes = list(fn._list_all_concrete_functions())  # private: guarded
                except Exception:
                    concretes = []
            for c in concretes:
                graph = getattr(c, "graph", None)
                if graph is not None:
                    self.add_graph(graph)
                for v in getattr(c, "variables", ()) or ():
                    self.variables[id(v)] = v
                for t in getattr(c, "captured_inputs", ()) or ():
                    if getattr(getattr(t, "dtype", None), "name", "resource") != "resource":
                        try:
                            self._captured[id(t)] = weakref.ref(t)
                        except TypeError:  # not weakly referable: not a tensor held apart
                            continue

    @property
    def captured(self) -> list[Any]:
        """The live tensors the step's functions capture (not variables)."""
        return [t for ref in self._captured.values() if (t := ref()) is not None]

    def site(self, node: str) -> Site | None:
        if node in self._found:
            return self._found[node]
        found = None
        for name in _candidates(node):
            found = self._by_node.get(name)
            if found is not None:
                break
        self._found[node] = found
        return found

    def __len__(self) -> int:
        return len(self._by_node)


def _constant_bytes(ops: list[Any]) -> tuple[int, tuple[str, str, int] | None]:
    """The bytes of a graph's constants and its largest one (op name, shape, bytes)."""
    from tfperf.memory.graph_memory import constant_folded, tensor_bytes

    sizes = [(op, tensor_bytes(op.outputs[0]) or 0) for op in ops if op.type == "Const"]
    sizes += [(op, sum(tensor_bytes(t) or 0 for t in op.outputs))
              for op in constant_folded(ops, frontier=True)]
    total = sum(n for _, n in sizes)
    op, n = max(sizes, key=lambda s: s[1], default=(None, 0))
    if op is None or n <= 0:
        return total, None
    shape = str(op.outputs[0].shape.as_list()).replace(" ", "")
    return total, (op.name, shape, n)


def _candidates(node: str) -> Iterator[str]:
    yield node
    parts = node.split("/")
    for k in range(len(parts) - 1, 0, -1):  # without its last components
        yield "/".join(parts[:k])
    for k in range(1, len(parts)):  # without leading components (an inlined call's prefix)
        yield "/".join(parts[k:])


def _user_site(op: Any) -> Site | None:
    try:
        frames = op.traceback
    except Exception:
        return None
    for frame in reversed(list(frames)):
        if is_user_file(frame.filename):
            return Site(frame.filename, frame.lineno)
    return None


class GraphCollector:
    """Collects the graph of every concrete function traced inside ``collecting()``."""

    def __init__(self, index: SiteIndex) -> None:
        self.index = index
        self.error: str | None = None

    @contextmanager
    def collecting(self) -> Iterator[None]:
        import importlib

        try:
            module = importlib.import_module(TRACE_STEP[0])
            original = getattr(module, TRACE_STEP[1])
        except (ImportError, AttributeError) as exc:
            self.error = f"graphs not collected: {exc}"
            yield
            return
        index = self.index

        def traced(*args: Any, **kwargs: Any) -> Any:
            concrete = original(*args, **kwargs)
            graph = getattr(concrete, "graph", None)
            if graph is not None:
                index.add_graph(graph)
            return concrete

        setattr(module, TRACE_STEP[1], traced)
        try:
            yield
        finally:
            setattr(module, TRACE_STEP[1], original)


__all__ = ["GraphCollector", "Site", "SiteIndex", "is_backward", "layer_of"]
