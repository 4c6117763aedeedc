"""``%load_ext tfperf`` / ``%unload_ext tfperf`` (also ``c.InteractiveShellApp.extensions``)."""

from __future__ import annotations

from typing import Any

MAGICS = ("tftimeit", "tfcompare", "tfprofile", "tflint", "tftune", "tfdoctor")


def load_ipython_extension(ipython: Any) -> None:
    """Register tfperf's magics on ``ipython`` (an ``InteractiveShell``)."""
    from tfperf.notebook.magics import TfperfMagics

    ipython.register_magics(TfperfMagics)


def unload_ipython_extension(ipython: Any) -> None:
    """Remove the magics again; names another extension registered since are left alone."""
    from tfperf.notebook.magics import TfperfMagics

    table = ipython.magics_manager.magics
    for kind in ("line", "cell"):
        for name in MAGICS:
            fn = table[kind].get(name)
            owner = getattr(fn, "__self__", None)
            if isinstance(owner, TfperfMagics):
                del table[kind][name]
    ipython.magics_manager.registry.pop("TfperfMagics", None)
