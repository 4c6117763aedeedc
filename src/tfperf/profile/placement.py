"""Which device ran each graph node: TensorFlow's own graph collection, read back.

A CPU capture has no device planes: every op is an event ``node_name:OpType`` on the host
plane, whatever logical device ran it, so a ``MirroredStrategy`` capture cannot be split per
replica from the capture alone. TensorFlow can hand back the graphs it actually ran —
partitioned per device, after Grappler — when graph collection is on while a function is
instantiated (``context.enable_graph_collection`` / ``export_run_metadata``, what
``context.collect_graphs`` uses). Their node names are the names in the capture's events, and
each node carries its device.

Collection is switched on lazily: enabling it initialises TF's runtime, and a script that sets
up logical devices (``set_logical_device_configuration``) must do so before that. So it starts
at once only when the runtime already runs, else just before the first observed
``tf.function`` call (which would initialise it anyway). Functions instantiated before that
are not in TF's collection; for them the watcher adds, the first time it sees a
``tf.function`` called, the devices its traced graphs asked for (``op.device``, before
Grappler: rewritten or added nodes stay unattributed, and the report says how much time that
is). The collected graphs win where both know a node.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

AMBIGUOUS = ""  # a node name two functions placed on different devices


def short_device(name: str) -> str:
    """``/job:localhost/replica:0/task:0/device:CPU:1`` → ``CPU:1``."""
    return name.rpartition("/device:")[2] or name


def device_key(name: str) -> str:
    """One spelling per device: a traced graph may ask for ``cpu:1`` or ``/device:CPU:1``
    where the runtime says ``/job:localhost/replica:0/task:0/device:CPU:1``."""
    kind, _, index = short_device(name).lstrip("/").rpartition(":")
    return f"{kind.upper()}:{index}" if kind else name


def device_sort_key(name: str) -> tuple[str, int, str]:
    """Devices in the order MirroredStrategy lists them by default: type, then index."""
    kind, _, index = short_device(name).rpartition(":")
    return (kind, int(index) if index.isdigit() else -1, name)


def graph_devices(graphs: Iterable[Any]) -> dict[str, str]:
    """Node name → device over ``GraphDef`` protos; names placed twice differently map to
    ``AMBIGUOUS``."""
    out: dict[str, str] = {}
    for graph in graphs:
        for node in graph.node:
            if not node.device:
                continue
            seen = out.get(node.name)
            out[node.name] = node.device if seen in (None, node.device) else AMBIGUOUS
    return out


def run_metadata_devices(metadata: Any) -> dict[str, str]:
    """Node name → device from a ``RunMetadata``: every collected function's partitions."""
    graphs = list(metadata.partition_graphs)
    for function in metadata.function_graphs:
        graphs.extend(function.partition_graphs)
    return graph_devices(graphs)


def device_of(name: str, placement: dict[str, str]) -> str | None:
    """The device of a node in the capture: its own entry, else the nearest enclosing node
    (an inlined function body is named ``<call node>/<body node>``). None when unknown."""
    device = placement.get(name)
    while device is None and "/" in name:
        name = name.rpartition("/")[0]
        device = placement.get(name)
    return device or None


def traced_devices(function: Any) -> dict[str, str]:
    """Node name → requested device over a ``tf.function``'s traced graphs (its concrete
    functions so far; nothing is traced here)."""
    cache = getattr(function, "_function_cache", None)  # private: read, guarded
    graphs = []
    try:
        for concrete in list(cache.values()) if cache is not None else []:
            graph = getattr(concrete, "graph", None)
            if graph is not None:
                graphs.append(graph.as_graph_def(add_shapes=False))
    except Exception:  # a TF whose cache or graphs look different: no fallback
        return {}
    return graph_devices(graphs)


class PlacementRecorder:
    """Collects node placements between ``start()`` and ``stop()``; see the module docstring."""

    def __init__(self) -> None:
        self.pending = False
        self.enabled = False
        self.error: str | None = None
        self.traced: dict[str, str] = {}  # from functions' traced graphs (the fallback)

    def add_function(self, function: Any) -> None:
        """A ``tf.function`` seen for the first time: its traced graphs' devices."""
        for name, device in traced_devices(function).items():
            seen = self.traced.get(name)
            self.traced[name] = device if seen in (None, device) else AMBIGUOUS

    def start(self) -> None:
        from tensorflow.python.eager import context

        ctx = context.context()
        if not hasattr(ctx, "enable_graph_collection") or not hasattr(ctx,
                                                                      "export_run_metadata"):
            raise AttributeError("this TensorFlow has no graph collection")
        if getattr(ctx, "_initialized", False):  # private: read, guarded
            self._enable()
        else:
            self.pending = True

    def before_function_call(self) -> None:
        if self.pending:
            self.pending = False
            self._enable()

    def _enable(self) -> None:
        from tensorflow.python.eager import context

        try:
            context.context().enable_graph_collection()
            context.context().export_run_metadata()  # drop what was collected before
            self.enabled = True
        except Exception as exc:  # never break the user's run for a placement map
            self.error = f"{type(exc).__name__}: {exc}"

    def stop(self) -> dict[str, str]:
        self.pending = False
        out = dict(self.traced)
        if not self.enabled:
            return out
        from tensorflow.python.eager import context

        self.enabled = False
        try:
            metadata = context.context().export_run_metadata()
            context.context().disable_graph_collection()
        except Exception as exc:
            self.error = f"{type(exc).__name__}: {exc}"
            return out
        if metadata is not None:
            out.update(run_metadata_devices(metadata))  # what ran beats what was asked for
        return out
