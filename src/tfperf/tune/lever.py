"""What a lever is, and how tune finds them: one module per lever in :mod:`tfperf.tune.levers`.

A lever is an edit of the module's source (``build(text, ctx) -> text``): tune measures
exactly the code its patch would give the user. Each lever module exposes
``levers(ctx) -> list[Lever]`` (a lever may come in several instances: one per lint finding,
one per function seen retracing); discovery imports every module of the package.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Any

from tfperf.tune.device import DeviceFacts
from tfperf.tune.target import Target


@dataclass
class LeverContext:
    """What levers may look at: the target, the device facts, what the baseline's run
    showed (``retraced``: module-level tf.function name → why it retraced)."""

    target: Target
    facts: DeviceFacts
    retraced: dict[str, str] = field(default_factory=dict)
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
    traces: bool = False  # it traces the function's Python (a Python loop is unrolled)
    description: str = ""
    rejections: tuple[str, ...] = ()

    def applies(self, ctx: LeverContext) -> str | None:
        """None when the lever applies to this target; else why not (shown in the table)."""
        return None

    def build(self, text: str, ctx: LeverContext) -> str:
        """The module source with this lever applied; raises ``SourceEditError``."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<lever {self.name}>"


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
