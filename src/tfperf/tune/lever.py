"""What a lever is, and how tune finds them: one module per lever in :mod:`tfperf.tune.levers`.

A lever is an edit of the module's source (``build(text, ctx) -> text``): tune measures
exactly the code its patch would give the user. Each lever module exposes
``levers(ctx) -> list[Lever]`` (a lever may come in several instances: one per lint finding,
one per function seen retracing); discovery imports every module of the package.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import pkgutil
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from tfperf.tune.device import DeviceFacts
from tfperf.tune.kinds import Kinds
from tfperf.tune.source import SourceEditError
from tfperf.tune.target import Target


@dataclass
class LeverContext:
    """What levers may look at: the target, the device facts, what the baseline's run
    showed (``retraced``: module-level tf.function name → why it retraced; ``returns``: the
    snapshots of what its calls returned, None before it ran)."""

    target: Target
    facts: DeviceFacts
    retraced: dict[str, str] = field(default_factory=dict)
    returns: list[Any] | None = None
    return_kinds: list[Kinds] | None = None  # each baseline call's leaf kinds (tune/kinds.py)
    cache: dict[str, Any] = field(default_factory=dict)
    isolate: bool = False  # candidates run in processes of their own (--isolate)
    threads: bool = False  # CPU thread-pool levers asked for (--threads; isolation only)


class Lever:
    """One way to make the function faster.

    ``slot``: a candidate holds at most one lever per slot (``tf.function`` and
    ``jit_compile`` are alternatives). ``stage``: order of application in a combination
    (code rewrites first, decorators last). ``rejections``: why a candidate built with it
    can be rejected (the docs list them).
    """

    name: str = ""
    slot: str = ""
    stage: int = 50
    reduced_precision: bool = False
    dtype: str | None = None  # the reduced dtype a precision lever computes in
    wraps_calls: bool = False  # each call of the candidate runs inside ``scope``
    traces: bool = False  # it traces the function's Python (a Python loop is unrolled)
    compiles: bool = False  # XLA compiles the traced graph (slow for big graphs)
    # Its loop runs step by step eagerly but is one loop in a traced graph (tf.scan): the
    # eager ops its code runs say nothing of the trace's length.
    graph_loop: bool = False
    # Alone it runs the user's ops as they were and only lets a later rung (tf.function, XLA)
    # trace them: a gain timed for it alone is the run's order or noise, never the lever.
    enables_only: bool = False
    description: str = ""
    rejections: tuple[str, ...] = ()

    def applies(self, ctx: LeverContext) -> str | None:
        """None when the lever applies to this target; else why not (shown in the table)."""
        return None

    def build(self, text: str, ctx: LeverContext) -> str:
        """The module source with this lever applied; raises ``SourceEditError``."""
        raise NotImplementedError

    def scope(self) -> contextlib.AbstractContextManager[Any] | None:
        """Process state the candidate needs while it is loaded, its inputs are made and (with
        ``wraps_calls``) while it runs, restored after (a Keras dtype policy); None: none."""
        return None

    def __repr__(self) -> str:
        return f"<lever {self.name}>"


class RewriteLever(Lever):
    """A lever that is one rewrite of the target function's source (``edit(text, name)``):
    it applies where the edit succeeds on the user's source, else the edit's reason is shown."""

    @staticmethod
    def edit(text: str, name: str) -> str:
        raise NotImplementedError

    def applies(self, ctx: LeverContext) -> str | None:
        try:
            self.edit(ctx.target.source, ctx.target.name)
        except SourceEditError as exc:
            return str(exc)
        return None

    def build(self, text: str, ctx: LeverContext) -> str:
        return self.edit(text, ctx.target.name)


@contextlib.contextmanager
def within(levers: Sequence[Lever]) -> Iterator[None]:
    """Every lever's :meth:`Lever.scope` entered (and left, restoring the state)."""
    with contextlib.ExitStack() as stack:
        for lv in levers:
            cm = lv.scope()
            if cm is not None:
                stack.enter_context(cm)
        yield


def wrap_calls(levers: Sequence[Lever], fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, each call inside the scopes of the levers that ask for it."""
    scoped = [lv for lv in levers if lv.wraps_calls]
    if not scoped:
        return fn

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        with within(scoped):
            return fn(*args, **kwargs)

    return call


def discover(ctx: LeverContext) -> list[Lever]:
    """Every lever instance the modules of :mod:`tfperf.tune.levers` offer for ``ctx``."""
    import tfperf.tune.levers as package

    out: list[Lever] = []
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        make = getattr(module, "levers", None)
        if callable(make):
            out.extend(make(ctx))
    return out
