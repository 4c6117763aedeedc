"""The HTML reports opened as a user opens them: the file itself in headless Chromium (Debian's
``chromium``, driven by Playwright). Per report kind: no request beyond the file, no console
error, the figures the browser shows equal the JSON's, light and dark, printable; the load
time, size and a screenshot of each are kept as artefacts (conftest.py says where).

No timing is asserted: the load time is recorded (``<kind>.json`` beside the screenshots) and
``benchmarks/bench_html_load.py`` prints medians.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from html_browser import NO_BROWSER, find_chromium
from html_figures import check_figures, figures_in

if find_chromium() is None:  # one line for the whole module, not one per test
    pytest.skip(NO_BROWSER, allow_module_level=True)

KINDS = ("bench", "suite", "profile", "profile-read", "tune", "doctor", "profile-memory")

FIGURES_JS = """() => Array.from(document.querySelectorAll('[data-path]')).map(e => ({
  path: e.getAttribute('data-path'), value: e.getAttribute('data-value') || '',
  unit: e.getAttribute('data-unit') || '', text: e.innerText}))"""
LOAD_MS_JS = """() => { const n = performance.getEntriesByType('navigation')[0];
  return {load_ms: n.loadEventEnd - n.startTime,
          dom_ms: n.domContentLoadedEventEnd - n.startTime}; }"""
BACKGROUND_JS = "() => getComputedStyle(document.body).backgroundColor"
CLOSED_JS = "() => document.querySelectorAll('details:not([open])').length"


@dataclass
class Opened:
    """A report open in a browser tab, and what the tab saw while it loaded."""

    page: Any  # playwright Page
    requests: list[str] = field(default_factory=list)  # every URL but the file's own
    errors: list[str] = field(default_factory=list)  # console errors, page errors, dialogs


def open_report(browser: Any, path: Path, scheme: str = "light",
                media: str = "screen") -> Opened:
    context = browser.new_context(color_scheme=scheme, viewport={"width": 1200, "height": 900})
    page = context.new_page()
    opened = Opened(page)
    own = path.resolve().as_uri()
    page.on("request", lambda r: r.url != own and opened.requests.append(r.url))
    page.on("console", lambda m: m.type == "error" and opened.errors.append(m.text))
    page.on("pageerror", lambda e: opened.errors.append(f"uncaught: {e}"))
    page.on("dialog", lambda d: (opened.errors.append(f"dialog: {d.message}"), d.dismiss()))
    page.emulate_media(media=media)
    page.goto(own, wait_until="load")
    return opened


def luminance(css_rgb: str) -> float:
    """0 (black) to 1 (white) for ``rgb(r, g, b)``."""
    r, g, b = (int(x) for x in css_rgb[css_rgb.index("(") + 1:css_rgb.index(")")].split(",")[:3])
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255


@pytest.mark.tf
@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_each_report_in_chromium(browser, reports, artefacts, kind):
    report = reports[kind]
    text = report.page.read_text(encoding="utf-8")
    opened = open_report(browser, report.page)
    page = opened.page
    try:
        timing = page.evaluate(LOAD_MS_JS)
        page.screenshot(path=str(artefacts / f"{kind}-light.png"), full_page=True)
        light = luminance(page.evaluate(BACKGROUND_JS))
        if page.locator("[data-details=open]").count():
            page.click("[data-details=open]")  # figures in closed sections show no text
        shown = page.evaluate(FIGURES_JS)
        embedded = page.evaluate(
            "() => JSON.parse(document.getElementById('tfperf-data').textContent)")
    finally:
        page.context.close()
    assert opened.requests == []
    assert opened.errors == []
    # the browser shows every figure the page holds, each equal to the JSON's
    assert len(shown) == len(figures_in(text))
    checked = check_figures(shown, report.data)
    assert embedded == report.data  # the page's own copy of the document reads back whole

    dark = open_report(browser, report.page, scheme="dark")
    try:
        dark.page.screenshot(path=str(artefacts / f"{kind}-dark.png"), full_page=True)
        dark_bg = luminance(dark.page.evaluate(BACKGROUND_JS))
    finally:
        dark.page.context.close()
    assert dark.requests == [] and dark.errors == []
    assert light > 0.9 and dark_bg < 0.2, (light, dark_bg)

    shutil.copyfile(report.page, artefacts / f"{kind}.html")
    (artefacts / f"{kind}.json").write_text(json.dumps({
        "kind": kind, "bytes": report.page.stat().st_size, "figures_checked": checked,
        "requests": len(opened.requests), "console_errors": len(opened.errors),
        "chromium": browser.version, **timing}, indent=1))


@pytest.mark.tf
@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_each_report_prints_on_white_with_every_section_open(browser, reports, artefacts,
                                                             kind):
    opened = open_report(browser, reports[kind].page, scheme="dark", media="print")
    page = opened.page
    try:
        background = luminance(page.evaluate(BACKGROUND_JS))
        tools = page.evaluate("() => getComputedStyle(document.querySelector('.tools')).display")
        closed = page.evaluate(CLOSED_JS)
        # what a browser does around printing: every section opened, then closed back
        during = page.evaluate(f"() => {{ dispatchEvent(new Event('beforeprint')); "
                               f"return ({CLOSED_JS})(); }}")
        after = page.evaluate(f"() => {{ dispatchEvent(new Event('afterprint')); "
                              f"return ({CLOSED_JS})(); }}")
        page.pdf(path=str(artefacts / f"{kind}.pdf"))
    finally:
        page.context.close()
    assert opened.requests == [] and opened.errors == []
    assert background > 0.9 and tools == "none"  # dark screen, white paper, no buttons
    assert (during, after) == (0, closed)
    assert (artefacts / f"{kind}.pdf").read_bytes().startswith(b"%PDF")


@pytest.mark.tf
@pytest.mark.slow
@pytest.mark.parametrize("kind", ["bench", "profile", "tune", "suite", "profile-memory"])
def test_sorting_hover_and_collapsing_work(browser, reports, kind):
    opened = open_report(browser, reports[kind].page)
    page = opened.page
    try:
        page.click("[data-details=open]")
        closed = page.evaluate(CLOSED_JS)
        header, column = first_numeric_column(page)
        assert header is not None, "no sortable table with a numeric column"
        header.click()
        up = column_values(page, column)
        header.click()
        down = column_values(page, column)
        tip_shown = hover_first_tip(page)
        page.click("[data-details=close]")
        opened_after = page.evaluate("() => document.querySelectorAll('details[open]').length")
        total = page.evaluate("() => document.querySelectorAll('details').length")
    finally:
        page.context.close()
    assert opened.errors == []
    assert up == sorted(up) and down == sorted(up, reverse=True) and len(up) >= 2, (up, down)
    assert tip_shown is not None and tip_shown[0] == tip_shown[1]
    assert closed == 0 and opened_after == 0 and total > 0


def first_numeric_column(page: Any) -> tuple[Any, tuple[int, int] | None]:
    """The header of the first sortable column whose every cell carries a number, and
    (table index, column index)."""
    where = page.evaluate("""() => {
      const tables = Array.from(document.querySelectorAll('table.sortable'));
      for (let t = 0; t < tables.length; t++) {
        const rows = Array.from(tables[t].tBodies[0].rows);
        if (rows.length < 2) continue;
        const n = tables[t].tHead.rows[0].cells.length;
        for (let c = 0; c < n; c++) {
          const vals = rows.map(r => r.cells[c] && r.cells[c].getAttribute('data-value'));
          if (vals.every(v => v !== null && v !== '' && !isNaN(+v))
              && new Set(vals).size > 1) return [t, c];
        }
      }
      return null; }""")
    if where is None:
        return None, None
    header = page.locator("table.sortable").nth(where[0]).locator("thead th").nth(where[1])
    return header, (where[0], where[1])


def column_values(page: Any, column: tuple[int, int]) -> list[float]:
    return page.evaluate("""([t, c]) => Array.from(document.querySelectorAll('table.sortable')[t]
      .tBodies[0].rows).map(r => +r.cells[c].getAttribute('data-value'))""", list(column))


def hover_first_tip(page: Any) -> tuple[str, str] | None:
    """Hover the first visible mark with a value tip: (its value, what the tip shows)."""
    marks = page.locator(".tfperf [data-tip]")
    for i in range(marks.count()):
        mark = marks.nth(i)
        if mark.is_visible():
            mark.hover()
            tip = page.locator(".tfperf-tip")
            return mark.get_attribute("data-tip") or "", (
                tip.inner_text() if tip.is_visible() else "<hidden>")
    return None


# -- the harness itself: a fetch or an error in a page is seen --------------------------------


@pytest.mark.tf
@pytest.mark.slow
def test_the_harness_sees_a_fetch_and_a_script_error(browser, reports, tmp_path):
    text = reports["bench"].page.read_text(encoding="utf-8")
    fetching = tmp_path / "fetching.html"
    # no CSP: the image is asked of the loopback discard port (refused at once)
    fetching.write_text(strip_csp(text).replace(
        "</body>", '<img src="http://127.0.0.1:9/x.png" alt=""></body>'))
    opened = open_report(browser, fetching)
    opened.page.context.close()
    assert opened.requests == ["http://127.0.0.1:9/x.png"]

    # with the page's CSP the browser refuses it before it leaves, and says so on the console
    blocked = tmp_path / "blocked.html"
    blocked.write_text(text.replace("</body>", '<img src="http://127.0.0.1:9/x.png"></body>'))
    opened = open_report(browser, blocked)
    opened.page.context.close()
    assert any("Content Security Policy" in e for e in opened.errors), opened.errors

    broken = tmp_path / "broken.html"
    broken.write_text(text.replace("</body>", "<script>noSuchFunction()</script></body>"))
    opened = open_report(browser, broken)
    opened.page.context.close()
    assert any("noSuchFunction" in e for e in opened.errors)


def strip_csp(text: str) -> str:
    start = text.index('<meta http-equiv="Content-Security-Policy"')
    return text[:start] + text[text.index(">", start) + 1:]
