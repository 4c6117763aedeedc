"""Whether matplotlib is installed, asked before a command with ``--plot`` starts measuring.

``--plot`` is drawn last: without this check `bench` and `tune` spent their whole budget and
then said matplotlib was missing, and `profile` ended in a traceback. No third-party import.
"""

from __future__ import annotations

import importlib.util

INSTALL = "pip install 'tfperf[plot]'"


def matplotlib_missing() -> str | None:
    """None where matplotlib can be imported, else the one line that tells the user."""
    try:
        found = importlib.util.find_spec("matplotlib") is not None
    except (ImportError, ValueError):  # a broken install: importing it will say why
        found = True
    return None if found else f"--plot needs matplotlib: {INSTALL}"
