"""The report views: one module per kind of report, found by its name.

A view is a module here with ``KIND`` (the name ``--html`` writes under), ``title(doc)``
and ``body(doc)``, where ``doc`` is a :class:`tfperf.core.html.parts.Doc` over the report's
JSON document. Adding a view is adding a module; nothing keeps a list of them.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType


def find(kind: str) -> ModuleType:
    """The view module of ``kind`` (``profile-read`` → ``profile_read``); KeyError if none."""
    name = kind.replace("-", "_")
    if name not in {m.name for m in pkgutil.iter_modules(__path__)}:
        raise KeyError(f"no HTML view for {kind!r} (there are: {', '.join(kinds())})")
    return importlib.import_module(f"{__name__}.{name}")


def kinds() -> list[str]:
    """Every view's kind, as ``find`` takes it."""
    return sorted(importlib.import_module(f"{__name__}.{m.name}").KIND
                  for m in pkgutil.iter_modules(__path__))
