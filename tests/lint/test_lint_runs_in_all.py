"""How often code runs in one run of its module (``trips.runs_in_all``, stop 37): loops times
the times this module enters the function, through its callers here; and TFP110, which asks
it, quiet where predict runs a handful of times in all (issue 25's minor class "a short
one-off loop": a 4-image plot, a 14-step forecast) and reporting where the count is
unknown or another module calls the function too."""

from __future__ import annotations

import ast

import pytest
from project_files import found, write_project

from tfperf.lint.analysis.trips import runs_in_all, trip_count
from tfperf.lint.semantic import Context
from tfperf.lint.session import LintRequest, run


def _ctx(source: str) -> Context:
    return Context(ast.parse(source), source, "m.py")


def _runs_of(source: str, name: str = "g") -> int | None:
    ctx = _ctx(source)
    call = next(n for n in ast.walk(ctx.tree) if type(n) is ast.Call
                and getattr(n.func, "id", None) == name)
    return runs_in_all(ctx, call)


@pytest.mark.parametrize(("source", "runs"), [
    ("for i in range(4):\n    g(i)\n", 4),  # module level runs once
    ("g(1)\n", 1),
    ("def f():\n    for i in range(3):\n        g(i)\nf()\nf()\n", 6),  # two calls of f
    ("def f():\n    g(1)\nfor i in range(5):\n    f()\n", 5),
    ("def f():\n    g(1)\nif __name__ == '__main__':\n    f()\n", 1),
    ("def h():\n    f()\ndef f():\n    g(1)\nfor _ in [1, 2]:\n    h()\n", 2),  # a chain
    ("def f():\n    g(1)\n", None),  # never called here: entered from outside
    ("def f():\n    g(1)\nf()\nrun(f)\n", None),  # passed on as a value: unknown callers
    ("def f():\n    g(1)\nfor x in data:\n    f()\n", None),  # a loop over data
    ("class A:\n    def f(self):\n        g(1)\nA().f()\n", None),  # methods: not counted
    ("def f(n):\n    g(1)\n    f(n - 1)\nf(3)\n", None),  # recursion
    ("@tf.function\ndef f():\n    g(1)\nf()\n", None),  # a decorator may call it anew
])
def test_runs_in_all_counts_loops_and_callers_or_says_unknown(source, runs):
    assert _runs_of(source) == runs


@pytest.mark.parametrize(("source", "count"), [
    ("for i, u in enumerate(['a', 'b', 'c']):\n    f(u)\n", 3),
    ("for a, b in zip(range(5), data):\n    f(a)\n", 5),  # the shortest known part
    ("for u in reversed(['a', 'b']):\n    f(u)\n", 2),
    # a list literal that grows before the loop ends gives no count ...
    ("rs = []\nfor r in data:\n    rs.append(r)\nfor s, r in zip(states, rs):\n    f(s)\n",
     None),
    ("urls = ['a']\nfor u in urls:\n    urls.append(u)\n", None),
    # ... one that grows after it still does (the loop walked the two words)
    ("words = ['I', 'am']\nfor w in words:\n    f(w)\nwords.append('x')\n", 2),
])
def test_trip_count_through_enumerate_zip_and_grown_lists(source, count):
    ctx = _ctx(source)
    loops = [n for n in ast.walk(ctx.tree) if type(n) is ast.For]
    assert trip_count(ctx, loops[-1]) == count


FORECAST = """\
import numpy as np
import tensorflow as tf
model = tf.keras.models.load_model("m.h5")
def forecast(series):
    out = []
    for step in range(14):
        out.append(model.predict(series[None, -30:])[0, 0])
        series = np.append(series, out[-1])
    return out
if __name__ == "__main__":
    print(forecast(np.load("s.npy")))
"""


def _lines(tmp_path, files, code="TFP110"):
    write_project(tmp_path, files)
    outcome = run(LintRequest(paths=[str(tmp_path)], cache=False, select=[code]))
    return [(p, line) for _, p, line, _ in found(outcome, tmp_path, code)]


def test_tfp110_quiet_on_a_forecast_the_script_runs_once(tmp_path):
    assert _lines(tmp_path, {"fc.py": FORECAST}) == []


def test_tfp110_reports_the_forecast_run_per_file(tmp_path):
    hot = FORECAST.replace('    print(forecast(np.load("s.npy")))',
                           "    for path in paths:\n        print(forecast(np.load(path)))")
    assert _lines(tmp_path, {"fc.py": hot}) == [("fc.py", 7)]


def test_tfp110_reports_the_forecast_another_module_calls_per_request(tmp_path):
    serve = "from fc import forecast\ndef handle(requests):\n" \
            "    return [forecast(r) for r in requests]\n"
    assert _lines(tmp_path, {"fc.py": FORECAST, "serve.py": serve}) == [("fc.py", 7)]


def test_tfp110_quiet_on_four_plots_at_module_level_and_reports_a_loop_over_all(tmp_path):
    few = "import tensorflow as tf\nmodel = tf.keras.models.load_model('m.h5')\n" \
          "for i in range(4):\n    f1 = model.predict(img.reshape(1, 28, 28, 1))[i]\n"
    assert _lines(tmp_path, {"few.py": few}) == []
    many = few.replace("range(4)", "range(len(images))")
    assert _lines(tmp_path, {"many.py": many}) == [("many.py", 4)]


PIPELINES = """\
import tensorflow as tf
def parse(path):
    return tf.image.random_flip_left_right(tf.image.decode_jpeg(tf.io.read_file(path)))
train = tf.data.Dataset.list_files("train/*.jpg").map(parse).batch(32)
test = tf.data.Dataset.list_files("test/*.jpg").map(parse).batch(32)
for epoch in range(10):
    for x in train:
        step(x)
"""


def test_tfp602_quiet_on_a_split_a_script_never_reads(tmp_path):
    assert _lines(tmp_path, {"s.py": PIPELINES}, "TFP602") == [("s.py", 4)]


def test_tfp602_reports_an_unread_split_of_an_importable_module(tmp_path):
    # No loop at top level: the module may be imported, and `test` read there.
    lib = PIPELINES.split("for epoch")[0] + "model.fit(train, epochs=10)\n"
    assert _lines(tmp_path, {"data.py": lib}, "TFP602") == [("data.py", 4), ("data.py", 5)]


def test_tfp602_quiet_on_a_split_evaluated_in_a_main_called_once(tmp_path):
    main = PIPELINES.split("train =")[0] + (
        "def main():\n"
        "    train = tf.data.Dataset.list_files('train/*.jpg').map(parse).batch(32)\n"
        "    test = tf.data.Dataset.list_files('test/*.jpg').map(parse).batch(32)\n"
        "    model.fit(train, epochs=10)\n"
        "    model.evaluate(test)\n"
        "if __name__ == '__main__':\n"
        "    main()\n")
    assert _lines(tmp_path, {"m.py": main}, "TFP602") == [("m.py", 5)]
    per_epoch = main.replace("    main()\n", "    for e in range(epochs):\n        main()\n")
    assert _lines(tmp_path, {"p.py": per_epoch}, "TFP602") == [("m.py", 5), ("p.py", 5),
                                                                ("p.py", 6)]


def test_tfp602_printing_a_split_reads_none_of_it(tmp_path):
    # A notebook-style script: the test split printed, then predicted once at the end.
    shown = PIPELINES.split("train =")[0] + (
        "test = tf.data.Dataset.list_files('test/*.jpg').map(parse)\n"
        "print(test, len(test))\n"
        "predictions = model.predict(test.batch(32))\n")
    assert _lines(tmp_path, {"a.py": shown}, "TFP602") == []
    trained = shown.replace("model.predict(test.batch(32))", "model.fit(test.batch(32))")
    assert _lines(tmp_path, {"b.py": trained}, "TFP602") == [("b.py", 4)]


def _lattice(layers: int, width: int) -> str:
    """A generated module: ``width`` helpers per layer, each calling every helper of the
    layer below, and ``model.evaluate(ds.map(f).batch(32))`` at the bottom (review 37)."""
    lines = ["import tensorflow as tf", "def f(x):", "    return x"]
    for i in range(width):
        lines += [f"def l0_{i}(model, ds):", "    model.evaluate(ds.map(f).batch(32))"]
    for layer in range(1, layers):
        for i in range(width):
            lines.append(f"def l{layer}_{i}(model, ds):")
            lines += [f"    l{layer - 1}_{j}(model, ds)" for j in range(width)]
    lines += [f"l{layers - 1}_{i}(model, ds)" for i in range(width)]
    return "\n".join(lines) + "\n"


def test_runs_in_all_walks_each_helper_a_bounded_number_of_times(monkeypatch):
    # Without a memo every call path was walked again: 6 ** depth walks of the bottom
    # helpers (a 10-layer file took 171 s). Counted, not timed: the walks of each helper.
    walks: dict[str, int] = {}
    name_loads = Context.name_loads

    def counted(self, name):
        walks[name] = walks.get(name, 0) + 1
        return name_loads(self, name)

    monkeypatch.setattr(Context, "name_loads", counted)
    ctx = _ctx(_lattice(layers=7, width=6))
    calls = [n for n in ast.walk(ctx.tree) if type(n) is ast.Call
             and getattr(n.func, "attr", None) == "evaluate"]
    assert [runs_in_all(ctx, c) for c in calls] == [6 ** 6] * 6  # the paths, counted
    assert max(walks[f"l{layer}_{i}"] for layer in range(7) for i in range(6)) == 1


SCORE = """\
import tensorflow as tf
def parse(path):
    return tf.image.random_flip_left_right(tf.image.decode_jpeg(tf.io.read_file(path)))
def score(model, files):
    test = tf.data.Dataset.list_files(files).map(parse).batch(32)
    scaled = tf.data.Dataset.from_tensor_slices(files).map(lambda x: x / 255.0).batch(32)
    return model.evaluate(test), model.evaluate(scaled)
if __name__ == "__main__":
    score(tf.keras.models.load_model("m.keras"), "test/*.jpg")
"""
PER_EPOCH = "from ev import score\nfor epoch in range(10):\n    score(model, 'val/*.jpg')\n"


@pytest.mark.parametrize(("code", "line"), [("TFP602", 5), ("TFP603", 6)])
def test_a_helper_the_script_calls_once_is_reported_where_another_module_calls_it(
        tmp_path, code, line):
    # Counted through this module's callers, `score` runs once: quiet alone; another module
    # calls it every epoch, which this module's count leaves out (review 37 item 6).
    assert _lines(tmp_path / "alone", {"ev.py": SCORE}, code) == []
    assert _lines(tmp_path / "both", {"ev.py": SCORE, "train.py": PER_EPOCH}, code) \
        == [("ev.py", line)]
