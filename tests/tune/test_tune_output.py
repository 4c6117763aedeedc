"""What tune hands back: the JSON (schema-validated), the table, the patch and --apply with
lint --fix's safety rules, the cache, and the CLI end to end (bad input: a clear error)."""

from __future__ import annotations

import dataclasses
import json
import os
import stat
import textwrap

import jsonschema
import pytest

from tfperf.cli import main
from tfperf.tune.schema import TUNE_SCHEMA

tf = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.tf

from tfperf.tune import TuneResult, tune  # noqa: E402
from tfperf.tune.patch import apply_patch  # noqa: E402
from tfperf.tune.target import TuneError  # noqa: E402

LOOP_FILE = textwrap.dedent('''\
    import tensorflow as tf
    import tfperf


    @tfperf.inputs
    def make():
        g = tf.random.Generator.from_seed(0)
        return g.normal([6, 12, 4]), g.normal([12])


    def feature(samples, weights):
        results = []
        for i in range(samples.shape[0]):
            window_data = samples[i]
            acc = tf.zeros([samples.shape[2]])
            for j in range(samples.shape[1]):
                acc = acc + window_data[j] * weights[j]
            results.append(acc)
        return tf.stack(results)
    ''')


@pytest.fixture(scope="module")
def tuned(tmp_path_factory):
    """One real search of the nested loop, shared by the output tests."""
    from tfperf.core.usercode import import_file

    path = tmp_path_factory.mktemp("tuned") / "feature_mod.py"
    path.write_text(LOOP_FILE)
    os.chmod(path, 0o640)
    mod = import_file(path, prefix="_tfperf_test_tune_out_")
    return path, mod, tune(mod.feature, mod.make(), budget=6)


def test_json_follows_the_schema_and_reads_back(tuned):
    _, _, result = tuned
    doc = json.loads(result.to_json())
    jsonschema.validate(doc, TUNE_SCHEMA)
    assert doc["function"] == "feature" and doc["best"] == result.best_name
    assert doc["baseline"]["median_s"] > 0 and doc["baseline"]["first_call_s"] > 0
    again = TuneResult.from_dict(doc)
    assert again.to_dict() == result.to_dict()
    assert again.best is not None and again.best.name == result.best_name


def test_the_pick_agrees_and_beats_the_baseline(tuned):
    _, _, result = tuned
    best = result.best
    assert best is not None, result.table()
    assert best.equivalent is True and best.rejected is None and best.speedup > 1
    assert best.break_even_calls is not None and best.break_even_calls >= 1
    rejected = [c for c in result.candidates if c.rejected]
    assert any(c.rejected.startswith("raises:") for c in rejected)  # a wrong alignment
    table = result.table()
    assert f"* {best.name}" in table and "why rejected" in table


def test_patch_applies_safely_and_once(tuned, tmp_path):
    path, mod, result = tuned
    copy = tmp_path / "feature_copy.py"
    copy.write_text(path.read_text())
    os.chmod(copy, 0o640)
    result.path = str(copy)
    assert "patched" in apply_patch(result)
    text = copy.read_text()
    # (which rewrite won is the run's: the CLI test below checks a loop's removal)
    assert text == result.patched_source and text != LOOP_FILE
    assert stat.S_IMODE(copy.stat().st_mode) == 0o640
    assert "already applied" in apply_patch(result)  # idempotent
    assert copy.read_text() == text
    # The patched file computes what the loop computed.
    from tfperf.bench.equivalence import compare_outputs
    from tfperf.core.usercode import import_file

    patched = import_file(copy, prefix="_tfperf_test_tune_patched_")
    args = mod.make()
    assert compare_outputs(mod.feature(*args), patched.feature(*args)).equivalent is True
    # A file edited since tuning is not overwritten.
    copy.write_text(path.read_text() + "\n# edited\n")
    with pytest.raises(TuneError, match="changed since it was tuned"):
        apply_patch(result)


def test_cache_makes_a_second_run_instant(tmp_path, user_module):
    mod = user_module("""
        import tensorflow as tf


        def double(x):
            return tf.sin(x) * 2.0
        """, name="cached_mod")
    args = (tf.ones([8, 8]),)
    first = tune(mod.double, args, budget=2, cache=True)
    second = tune(mod.double, args, budget=2, cache=True)
    assert (first.cache, second.cache) == ("miss", "hit")
    assert second.to_dict()["candidates"] == first.to_dict()["candidates"]
    other = tune(mod.double, (tf.ones([4, 8]),), budget=2, cache=True)  # other shapes
    assert other.cache == "miss"
    assert tune(mod.double, args, budget=2).cache == "off"


def test_cli_json_diff_and_apply(tmp_path, capsys, monkeypatch):
    from tfperf.tune import search
    from tfperf.tune.levers import loop_reduce

    # The CLI end to end, on the one lever family the patch check needs (the inner loop as a
    # reduce_sum: 72 eager iterations against 6, a pick a busy machine cannot turn).
    monkeypatch.setattr(search, "discover", loop_reduce.levers)
    path = tmp_path / "cli_mod.py"
    path.write_text(LOOP_FILE)
    rc = main(["tune", f"{path}:feature", "--budget", "4", "--json", "--no-cache"])
    doc = json.loads(capsys.readouterr().out)
    jsonschema.validate(doc, TUNE_SCHEMA)
    assert rc == 0 and doc["function"] == "feature"
    png = tmp_path / "plots" / "tune.png"
    rc = main(["tune", f"{path}:feature", "--budget", "4", "--diff", "--apply", "--plot",
               str(png)])
    captured = capsys.readouterr()
    assert rc == 0 and "candidate" in captured.out and f"--- {path.resolve()}" in captured.out
    assert "patched" in captured.err and "for j in range" not in path.read_text()
    assert f"plot written to {png}" in captured.err and png.read_bytes()[:4] == b"\x89PNG"


def test_plot_shows_every_candidate_the_pick_and_why_the_rejected_were(tuned, tmp_path,
                                                                       monkeypatch):
    pytest.importorskip("matplotlib")
    import sys

    from tfperf.bench.plot import PlotError
    from tfperf.tune.plot import build_figure

    _, _, real = tuned
    # The pick's quartiles and break-even count are planted: how many timed rounds a 6 s
    # budget leaves (the quartiles need a few) is the machine's load, not the plot's concern.
    # (a copy of each row: the result also holds the picked function, which does not copy)
    result = dataclasses.replace(real, candidates=[dataclasses.replace(c)
                                                   for c in real.candidates])
    best = result.best
    assert best is not None and best.median_s is not None
    best.quartiles_s = [0.5 * best.median_s, 1.5 * best.median_s]
    best.break_even_calls = 7
    ax = build_figure(result).axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[0] == "baseline" and len(labels) == len(result.candidates) + 1
    assert f"★ {result.best_name}" in labels
    texts = [t.get_text() for t in ax.texts]
    rejected = [c for c in result.candidates if not c.kept]
    assert rejected and sum(t.startswith("✗ ") for t in texts) == len(rejected)
    assert any("not applicable" in t for t in texts)
    assert any("pays back after 7 calls" in t for t in texts), texts
    # the pick's whisker spans its planted quartiles (the bars' error bars, one per bar)
    row = labels.index(f"★ {result.best_name}")
    from matplotlib.container import BarContainer

    (bars,) = [c for c in ax.containers if isinstance(c, BarContainer)]
    whiskers = bars.errorbar.lines[2][0].get_segments()
    (lo, y0), (hi, y1) = whiskers[row]
    assert (lo, hi) == pytest.approx((0.5 * best.median_s, 1.5 * best.median_s))
    assert y0 == y1 == ax.get_yticks()[row]
    path = result.plot(tmp_path / "t.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(PlotError, match="cannot write"):
        result.plot(blocker / "t.png")
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)  # as if not installed
    with pytest.raises(PlotError, match=r"needs matplotlib: pip install 'tfperf\[plot\]'"):
        result.plot(tmp_path / "u.png")


@pytest.mark.parametrize("argv, message", [
    (["tune", "{d}/nowhere.py:f"], "nowhere.py"),
    (["tune", "{d}/mod.py:missing"], "no function 'missing'"),
    (["tune", "{d}/mod.py"], "name the function to tune"),
    (["tune", "{d}/noinputs.py:f"], "no @tfperf.inputs function"),
    (["tune", "{d}/mod.py:f", "--inputs", "{d}/mod.py"], "--inputs must be FILE.py:FN"),
])
def test_cli_bad_input_is_a_clear_error(tmp_path, capsys, argv, message):
    (tmp_path / "mod.py").write_text(LOOP_FILE.replace("def feature", "def f"))
    (tmp_path / "noinputs.py").write_text("def f(x):\n    return x\n")
    rc = main([a.format(d=tmp_path) for a in argv])
    err = capsys.readouterr().err
    assert rc == 2 and message in err and "Traceback" not in err


def test_docs_show_the_schema_the_code_uses():
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "tune.md").read_text()
    blocks = [json.loads(b) for b in re.findall(r"```json\n(.+?)\n```", text, re.S)]
    assert blocks == [TUNE_SCHEMA]


def test_cli_tunes_a_bench_files_baseline_variant(tmp_path, capsys):
    path = tmp_path / "bench_mod.py"
    path.write_text(textwrap.dedent('''\
        import tensorflow as tf
        import tfperf


        @tfperf.inputs
        def make():
            return (tf.ones([16, 16]),)


        @tfperf.variant(baseline=True)
        def chain(x):
            return tf.tanh(tf.sin(x) * 2.0 + x)


        @tfperf.variant
        def other(x):
            return tf.tanh(tf.sin(x) * 2.0 + x)
        '''))
    assert main(["tune", str(path), "--budget", "3", "--json", "--no-cache"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["function"] == "chain"
    assert any(c["name"] == "tf.function" for c in doc["candidates"])


def test_cli_json_stays_one_document_when_the_users_file_prints(tmp_path, capsys, monkeypatch):
    from tfperf.tune import search
    from tfperf.tune.levers import loop_reduce

    # The user's file prints at import, in its inputs function and in every call: with --json
    # those lines go to stderr and stdout reads back as the document (it failed to parse).
    monkeypatch.setattr(search, "discover", loop_reduce.levers)
    path = tmp_path / "noisy_mod.py"
    noisy = LOOP_FILE.replace("import tfperf\n", "import tfperf\n\nprint('loading the model')\n")
    noisy = noisy.replace("    g = tf.random.Generator", "    print('making inputs')\n"
                          "    g = tf.random.Generator")
    noisy = noisy.replace("    results = []", "    print('feature called')\n    results = []")
    assert noisy.count("print(") == 3
    path.write_text(noisy)
    rc = main(["tune", f"{path}:feature", "--budget", "4", "--json", "--no-cache"])
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    jsonschema.validate(doc, TUNE_SCHEMA)
    assert rc == 0 and doc["function"] == "feature"
    assert "loading the model" in captured.err and "making inputs" in captured.err
