"""How fast each HTML report opens in headless Chromium, and how big it is.

    .venv/bin/python benchmarks/bench_html_load.py [--rounds N] REPORT.html ...

Each page is opened N times (default 5), round-robin so machine load hits every page alike,
each time in a fresh browser context from its file:// address, as a user opens a copied file.
Prints per page: bytes, the median and worst time to the load event (the browser's own
navigation timing), and the requests beyond the file and the console errors seen (both should
be 0). Issue 29 asks for a load within 1 s and at most 250 KB for a bench report, 1 MB for a
profile of the article's case study. The pages come from the commands' ``--html`` or from
the browser tests' artefacts (``$TFPERF_ARTIFACTS/html/*.html``). Asserts nothing.

Needs Debian's chromium and the playwright package (the test extra).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
LOAD_MS = """() => { const n = performance.getEntriesByType('navigation')[0];
  return n.loadEventEnd - n.startTime; }"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pages", nargs="+", type=Path)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    times: dict[Path, list[float]] = {p: [] for p in args.pages}
    seen: dict[Path, list[str]] = {p: [] for p in args.pages}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=args.chromium, args=ARGS)
        for _ in range(args.rounds):
            for path in args.pages:
                context = browser.new_context()
                page = context.new_page()
                own = path.resolve().as_uri()
                page.on("request", lambda r, own=own, p=path: r.url != own and seen[p].append(
                    f"request {r.url}"))
                page.on("console", lambda m, p=path: m.type == "error" and seen[p].append(
                    f"console {m.text}"))
                page.goto(own, wait_until="load")
                times[path].append(page.evaluate(LOAD_MS))
                context.close()
        version = browser.version
        browser.close()
    print(f"Chromium {version}, {args.rounds} loads a page, fresh context each")
    print(f"{'page':<28} {'bytes':>9} {'median ms':>10} {'worst ms':>9}  requests/errors")
    for path in args.pages:
        t = times[path]
        print(f"{path.name:<28} {path.stat().st_size:>9,} {statistics.median(t):>10.1f} "
              f"{max(t):>9.1f}  {len(seen[path])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
