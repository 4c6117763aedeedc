"""Where the browser tests find headless Chromium: Debian's ``chromium`` package (``.ci/run``
installs it), driven by the playwright package of the test extra."""

from __future__ import annotations

import os
import shutil

# the flags a root, offline, GPU-less machine needs (docs/html-report.md says why)
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]


def find_chromium() -> str | None:
    """Debian's chromium (``apt-get install chromium``), or the one $TFPERF_CHROMIUM names;
    None where it or the playwright package (which drives it) is missing."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return None
    for candidate in (os.environ.get("TFPERF_CHROMIUM"), "/usr/bin/chromium",
                      shutil.which("chromium"), shutil.which("chromium-browser")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


NO_BROWSER = ("no headless Chromium here (Debian's chromium and the playwright package; "
              ".ci/run installs both): browser tests skipped")
