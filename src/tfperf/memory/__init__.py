"""Memory: the peak of each step and what holds it, leaks across steps, and whether a batch
will fit before it runs (``tfperf profile --memory`` / ``--fit``, docs/memory.md).

Python API (TensorFlow is imported only when one of these runs)::

    from tfperf.memory import memory_profile, track_leaks, LeakWatch, will_it_fit

    report = memory_profile(step, x, y, steps=3, leak_steps=20)  # peak, breakdown, leaks
    print(report); report.to_json(); report.findings

    leaks = track_leaks(step, x, y, steps=20)       # leaks only: RSS per step, causes
    with LeakWatch() as w:                           # or mark steps in your own loop
        for batch in data:
            train(batch)
            w.step()
    w.report()

    fit = will_it_fit(step, x, y, batch=64, device="A100 40GB")  # before running it
"""

from __future__ import annotations

from typing import Any

__all__ = ["LeakWatch", "MemoryReport", "memory_profile", "track_leaks", "will_it_fit"]

_EXPORTS = {
    "LeakWatch": "tfperf.memory.leaks",
    "track_leaks": "tfperf.memory.leaks",
    "memory_profile": "tfperf.memory.runner",
    "MemoryReport": "tfperf.memory.report",
    "will_it_fit": "tfperf.memory.fit",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'tfperf.memory' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
