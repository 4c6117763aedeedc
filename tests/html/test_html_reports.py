"""The HTML reports without a browser: every kind written by its command, its figures equal to
the JSON the same run printed, nothing to fetch, within its size; a new view is one module;
bad --html paths fail fast with one line."""

from __future__ import annotations

import json
import re
import textwrap
from html.parser import HTMLParser
from pathlib import Path

import pytest
from html_figures import check_figures, figures_in

from tfperf.cli import main
from tfperf.core.html import report_fragment, report_page
from tfperf.core.html import views as views_pkg

KINDS = ("bench", "profile", "profile-read", "tune", "doctor", "suite", "profile-memory")
# at least this many figures bound to the JSON, so no check passes on an empty page
LEAST_FIGURES = {"bench": 15, "profile": 10, "profile-read": 10, "tune": 8, "doctor": 10,
                 "suite": 15, "profile-memory": 15}
KB = 1024


@pytest.mark.tf
@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_each_report_shows_the_json_figures_and_fetches_nothing(reports, kind):
    report = reports[kind]
    page = report.page.read_text(encoding="utf-8")
    data = report.data
    assert check_figures(figures_in(page), data) >= LEAST_FIGURES[kind]
    embedded = re.search(r'<script type="application/json" id="tfperf-data">(.*?)</script>',
                         page, re.S)
    assert embedded and json.loads(embedded.group(1).replace("<\\/", "</")) == data
    # nothing that a browser would fetch: no src/href to anywhere, no CSS url() or @import
    assert not re.search(r"""\s(src|href)\s*=|url\(|@import""", page, re.I)
    assert "default-src 'none'" in page  # and the page forbids it to the browser as well
    assert "@media (prefers-color-scheme:dark)" in page and "@media print" in page


@pytest.mark.tf
@pytest.mark.slow
def test_sizes_a_bench_report_and_the_case_study_profile(reports):
    assert reports["bench"].page.stat().st_size <= 250 * KB
    assert reports["profile"].page.stat().st_size <= 1024 * KB  # the article's case study
    assert reports["suite"].page.stat().st_size <= 250 * KB


@pytest.mark.tf
@pytest.mark.slow
def test_what_each_report_shows(reports):
    bench = reports["bench"].page.read_text()
    assert "Time per call" in bench and "Speedup over the baseline" in bench
    assert "NOT EQUIVALENT" in bench and bench.count("<svg") >= 2  # `wrong` computes else
    profile = reports["profile"].page.read_text()
    for part in ("Why it is slow", "Step timeline", "Eager ops, by line", "Top ops", "Advice",
                 "fix:"):
        assert part in profile, part
    tune = reports["tune"].page.read_text()
    data = reports["tune"].data
    assert 'class="diff"' in tune if data["patch"] else "nothing to change" in tune
    assert all(c["name"] in tune or len(c["name"]) > 60 for c in data["candidates"])
    assert "rejected" in tune
    doctor = reports["doctor"].page.read_text()
    assert "Facts" in doctor and "System and TensorFlow" in doctor and "facts → verdicts" in doctor
    read = reports["profile-read"].page.read_text()
    assert "Step timeline" in read and "Top ops by self time" in read


def test_a_new_view_is_one_module(tmp_path, monkeypatch):
    (tmp_path / "memory.py").write_text(textwrap.dedent('''\
        """A per-step memory curve (an example view)."""
        from tfperf.core.html.parts import Column, Doc, seconds, section, timeline

        KIND = "memory"


        def title(doc: Doc) -> str:
            return "memory"


        def body(doc: Doc) -> str:
            cols = [Column([("peak", b)], f"step {i}: {b} B")
                    for i, b in enumerate(doc.data["peaks"])]
            return section("Peak memory per step",
                           timeline(cols, {"peak": "bar"}, str) + doc.fig("peaks.1", "B"))
    '''))
    monkeypatch.setattr(views_pkg, "__path__", [*views_pkg.__path__, str(tmp_path)])
    monkeypatch.setattr(views_pkg, "__name__", views_pkg.__name__)
    import sys

    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "tfperf.core.html.views.memory", raising=False)
    assert "memory" in views_pkg.kinds()
    doc = json.dumps({"peaks": [1024, 4096, 2048]})
    page = report_page("memory", doc)
    assert check_figures(figures_in(page), json.loads(doc)) == 1
    assert "Peak memory per step" in page and "<svg" in page


def test_unknown_kind_and_a_document_that_would_close_the_script():
    with pytest.raises(KeyError, match="no HTML view"):
        report_page("nonesuch", "{}")
    doc = json.dumps({"baseline": "a", "variants": [
        {"name": "</script><script>alert(1)</script>", "median_s": 0.5, "speedup": 1.0,
         "equivalent": None}], "machine": {}, "settings": {}})
    page = report_page("bench", doc)
    # the name is text in the body and data in the JSON script: no third script element
    assert "&lt;/script&gt;&lt;script&gt;alert(1)" in page
    assert script_elements(page) == ["application/json", None]
    embedded = re.search(r'id="tfperf-data">(.*?)</script>', page, re.S)
    assert embedded and json.loads(embedded.group(1).replace("<\\/", "</")) == json.loads(doc)


def script_elements(page: str) -> list[str | None]:
    """The type of each ``<script>`` element as an HTML parser sees the page."""
    found: list[str | None] = []

    class Scripts(HTMLParser):
        def handle_starttag(self, tag, attrs):
            if tag == "script":
                found.append(dict(attrs).get("type"))

    Scripts().feed(page)
    return found


def test_a_notebook_fragment_is_scoped_and_carries_no_page():
    doc = json.dumps({"baseline": "a", "variants": [{"name": "a", "median_s": 0.5}],
                      "machine": {}, "settings": {}})
    frag = report_fragment("bench", doc)
    assert frag.startswith('<div class="tfperf"') and "<html" not in frag
    assert "tfperf-data" not in frag
    # every style rule is under .tfperf (or the tip the script adds), nothing global
    style = re.search(r"<style>(.*?)</style>", frag, re.S).group(1)
    rules = [r.strip() for r in re.findall(r"(?:^|})([^{}]*)\{", style)]
    rules = [r for r in rules if not r.startswith("@")]  # @media wraps rules checked alone
    assert rules and all(r.startswith((".tfperf", "body.tfperf")) for r in rules), rules


@pytest.mark.parametrize("argv", [
    ["bench", "{f}", "--html", "{f}/out.html"],
    ["profile", "--read", "{d}", "--html", "{f}/out.html"],
    ["profile", "--compare", "{d}", "{d}", "--html", "{d}/out.html"],
    ["doctor", "--plan", "2.16", "--html", "{d}/out.html"],
    ["doctor", "--html", "{f}/out.html"],
    ["tune", "{f}:f", "--inputs", "{f}:f", "--html", "{f}/out.html"],
    ["bench", "{f}", "--save", "{d}/run.json", "--html", "{d}/out.html"],
])
def test_a_bad_html_option_is_one_line_and_exit_2(tmp_path, capsys, argv):
    f = tmp_path / "b.py"
    f.write_text("def f(x):\n    return x\n")
    args = [a.format(f=f, d=tmp_path) for a in argv]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err and "--html" in err, err
    assert not (tmp_path / "out.html").exists()


def test_a_read_only_report_is_not_overwritten(tmp_path, capsys):
    from tfperf.core.html import save

    out = tmp_path / "r.html"
    out.write_text("old")
    out.chmod(0o444)
    assert save("<p>new</p>", out, "bench") is False
    assert out.read_text() == "old"
    assert "--html" in capsys.readouterr().err
    fresh = tmp_path / "new.html"
    assert save("<p>new</p>", fresh, "bench") and fresh.read_text() == "<p>new</p>"


def test_missing_folders_of_the_html_path_are_made(tmp_path):
    from tfperf.core.html import save

    out = tmp_path / "reports" / "today" / "r.html"
    assert save("<p>new</p>", out, "bench") and out.read_text() == "<p>new</p>"


def test_a_spread_wider_than_the_median_still_draws_its_whisker():
    # a busy machine: IQR/2 larger than the median, so the low end would be below zero
    doc = json.dumps({"baseline": "a", "machine": {}, "settings": {}, "variants": [
        {"name": "a", "median_s": 0.04, "iqr_s": 0.002, "speedup": 1.0},
        {"name": "b", "median_s": 0.0025, "iqr_s": 0.006, "speedup": 16.0}]})
    chart = report_page("bench", doc).split("Time per call")[1].split("</svg>")[0]
    lines = re.findall(r'<line class="whisker" x1="[\d.]+" x2="[\d.]+" y1="(\d+)" y2="(\d+)"',
                       chart)
    spans = [y1 for y1, y2 in lines if y1 == y2]  # a whisker's span; its two ends stand up
    assert len(spans) == 2, lines  # both bars carry one


def test_a_profile_draws_the_memory_series_it_is_given():
    document = (Path(__file__).parent / "fixtures" / "profile_memory_steps.json").read_text()
    data = json.loads(document)
    page = report_page("profile", document)
    section = page.split("Memory per step")[1].split("tf.function calls")[0]
    assert section.count('<g data-tip="step ') == len(data["memory_steps"]) == 12
    assert "highest <span" in section and "at step 9;" in section  # the planted spike
    assert "step 9: peak 96 MiB" in section
    assert check_figures(figures_in(page), data) >= 2 * 12 + 3
    del data["memory_steps"]  # a profile without the memory view: no such section
    assert "Memory per step" not in report_page("profile", json.dumps(data))


def test_a_profile_shows_what_tensorflow_ran_for_itself_apart_from_the_users_lines():
    # The text report says so (stop 43); the page must too, or a user reading the HTML sees a
    # sync the advice does not explain.
    data = json.loads((Path(__file__).parent / "fixtures" / "profile_memory_steps.json")
                      .read_text())
    plain = report_page("profile", json.dumps(data))
    assert "TensorFlow's own" not in plain and "created variables" not in plain
    data["tf_own_syncs"] = [{"path": "/x/train.py", "line": 12, "count": 3}]
    data["tf_own_ops"] = [{"path": "/x/train.py", "line": 12, "count": 7}]
    data["functions"] = [{"name": "step", "calls": 4, "traces": 1, "trace_s": 0.1,
                          "run_s": 0.2, "variable_traces": 1, "retrace_causes": []}]
    page = report_page("profile", json.dumps(data))
    syncs = page.split("Host syncs (tensor → host), by line")[1].split("Eager ops, by line")[0]
    assert "train.py:12</code>: 3 TensorFlow&#x27;s own, not counted" in syncs
    eager = page.split("Eager ops, by line")[1]
    assert "train.py:12</code>: 7 TensorFlow&#x27;s own" in eager
    assert "traced it 1 more time(s) (not counted: not a retrace)" in page


def test_a_bench_where_every_variant_is_slower_names_no_fastest():
    # a new user's bench (stop 44): tf.function of a small op at 0.27x the eager baseline was
    # headed "Fastest that agrees with the baseline", a win where there is none
    def verdict(speedup: float) -> str:
        doc = json.dumps({"baseline": "eager", "machine": {}, "settings": {}, "variants": [
            {"name": "eager", "median_s": 6.4e-05, "speedup": 1.0, "equivalent": None},
            {"name": "graph", "median_s": 6.4e-05 / speedup, "speedup": speedup,
             "equivalent": True}]})
        page = report_page("bench", doc)
        assert check_figures(figures_in(page), json.loads(doc)) > 0
        return re.sub(r"<[^>]+>", "", page.split("</header>")[1].split("</p>")[0])

    slower = verdict(0.27)
    assert "Fastest" not in slower and "No variant beats the baseline eager" in slower, slower
    assert "graph, runs at 0.27× the baseline's speed" in slower, slower
    assert "Fastest that agrees with the baseline: graph, 2.5×" in verdict(2.5)


def test_a_capture_stepped_by_tf_function_calls_shows_no_empty_median():
    # stop 44: a script's capture, steps = its tf.function calls, carries no median (only
    # step markers give one): the page said "median –" beside five measured steps
    def line(step_s: float | None) -> str:
        doc = {"target": "s.py", "capture": {
            "steps": 2, "step_s": step_s, "step_source": "tf.function calls",
            "step_windows_s": [[0.0, 0.06], [0.07, 0.001]]}}
        page = report_page("profile", json.dumps(doc))
        start = page.index("profiler capture:")
        return re.sub(r"<[^>]+>", "", page[start:page.index("</p>", start)])

    assert line(None) == "profiler capture: 2 steps (tf.function calls)"
    assert line(0.03) == "profiler capture: 2 steps (tf.function calls), median 30.0 ms"


def test_a_tune_candidate_slower_than_the_baseline_is_not_called_kept():
    # stop 44, a repo's split_heads: jit_compile at 0.57x, unpicked with no reason given
    # (simply not faster), was badged "kept" beside the rejected ones
    doc = {"function": "f", "path": "m.py", "best": None, "patch": "", "candidates": [
        {"name": "jit_compile", "levers": ["jit_compile"], "median_s": 7.3e-4,
         "speedup": 0.57, "equivalent": True, "rejected": None},
        {"name": "tf.function", "levers": ["tf.function"], "median_s": 2e-4,
         "speedup": 2.1, "equivalent": True, "rejected": None}]}
    page = report_page("tune", json.dumps(doc))
    rows = {name: row for row in re.findall(r"<tr.*?</tr>", page, re.S)
            for name in ("jit_compile", "tf.function") if f">{name}<" in row}
    assert ">not faster<" in rows["jit_compile"] and ">kept<" not in rows["jit_compile"]
    assert ">kept<" in rows["tf.function"]
