"""What tf.data does by itself, per targeted TF version (lint/analysis/data_defaults.py), and
the tf.data rules that rest on it (TFP601, TFP602): the knowledge checked against the
installed TensorFlow's own rewrites, and the target reaching the rules through a project pin.
"""

from __future__ import annotations

import ast

import pytest

from tfperf.lint import registry, target
from tfperf.lint.analysis.data_defaults import (
    INJECT_PREFETCH_SINCE,
    MAP_PARALLELIZATION_SINCE,
    data_defaults,
    map_state,
)
from tfperf.lint.analysis.pipelines import map_function, pipeline
from tfperf.lint.engine import lint_source
from tfperf.lint.semantic import Context
from tfperf.lint.session import LintRequest, run


def _ctx(source: str, version: tuple[int, int]) -> Context:
    return Context(ast.parse(source), source, "m.py", version)


def _last_pipeline(ctx: Context):
    last = [n for n in ctx.nodes_of(ast.Assign)
            if getattr(n.targets[0], "id", None) == "ds"][-1]  # type: ignore[attr-defined]
    return pipeline(ctx, last.value)  # type: ignore[attr-defined]


PLAIN = "import tensorflow as tf\nds = tf.data.Dataset.range(9).map(lambda x: x * 2).batch(3)\n"


@pytest.mark.parametrize(("version", "inject", "parallel"), [
    ((1, 15), False, False), ((2, 5), False, False), ((2, 6), False, True),
    ((2, 7), False, True),
    ((2, 10), False, True), ((2, 11), False, True), ((2, 12), True, True), ((2, 21), True, True),
])
def test_defaults_follow_the_targeted_version(version, inject, parallel):
    ctx = _ctx(PLAIN, version)
    d = data_defaults(ctx, _last_pipeline(ctx))
    assert (d.inject_prefetch, d.map_parallelization) == (inject, parallel)
    if not inject:
        assert f"{version[0]}.{version[1]}" in d.why_no_prefetch
    assert INJECT_PREFETCH_SINCE == (2, 12) and MAP_PARALLELIZATION_SINCE == (2, 6)


@pytest.mark.parametrize(("settings", "inject", "parallel"), [
    (["o.experimental_optimization.apply_default_optimizations = False"], False, False),
    (["o.experimental_optimization.apply_default_optimizations = False",
      "o.experimental_optimization.inject_prefetch = True"], True, False),
    (["o.experimental_optimization.inject_prefetch = False"], False, True),
    (["o.experimental_optimization.map_parallelization = False"], True, False),
    (["o.autotune.enabled = False"], False, False),
    (["o.experimental_optimization.autotune = False"], False, False),  # the TF 2.4 spelling
    (["o.deterministic = False", "o.threading.private_threadpool_size = 4"], True, True),
])
def test_the_pipelines_own_options_turn_the_rewrites_off(settings, inject, parallel):
    source = ("import tensorflow as tf\no = tf.data.Options()\n" + "\n".join(settings)
              + "\nds = tf.data.Dataset.range(9).map(lambda x: x * 2).with_options(o)\n")
    ctx = _ctx(source, (2, 21))
    d = data_defaults(ctx, _last_pipeline(ctx))
    assert (d.inject_prefetch, d.map_parallelization) == (inject, parallel)
    # Options set on another name, never applied to this pipeline, change nothing.
    other = source.replace(".with_options(o)", "")
    ctx = _ctx(other, (2, 21))
    d = data_defaults(ctx, _last_pipeline(ctx))
    assert (d.inject_prefetch, d.map_parallelization) == (True, True)


@pytest.mark.parametrize(("fn", "stateful", "known"), [
    ("lambda x: tf.cast(x, tf.float32) / 255.0", False, True),
    ("lambda x: tf.image.random_flip_left_right(x)", True, True),
    ("lambda x: x + tf.random.uniform([])", True, True),
    ("lambda x: tf.random.stateless_uniform([], seed=[1, 2]) + x", False, True),
    ("lambda x: tf.py_function(abs, [x], tf.float32)", True, True),
    ("lambda x: tf.numpy_function(abs, [x], tf.float32, stateful=False)", False, True),
    ("lambda x: (tf.print(x), x)[1]", True, True),
    ("lambda x: counter.assign_add(1) + x", True, True),
    ("decode", False, True),          # a def: looked into; its print runs at trace time
    ("noisy", True, True),            # a def calling a def with a random op
    ("lambda x: (augment(x, training=True))", True, True),  # Sequential of random layers
    ("lambda x: model(x)", False, False),                    # a Sequential not seen through
    ("lambda x: flip(x)", True, True),                       # a Keras random layer
    ("parse_fn", False, False),                              # not visible: unknown
    ("lambda x: helper.transform(x)", False, False),
])
def test_map_state_sees_what_makes_a_map_stateful(fn, stateful, known):
    source = ("import tensorflow as tf\n"
              "from tensorflow.keras import layers\n"
              "from mylib import parse_fn, helper\n"
              "counter = tf.Variable(0.0)\n"
              "augment = tf.keras.Sequential([layers.RandomFlip('horizontal'), "
              "layers.RandomZoom(0.1)])\n"
              "model = tf.keras.Sequential([layers.Dense(3)])\n"
              "flip = layers.RandomFlip()\n"
              "def decode(x):\n"
              "    print('tracing', len([1]))\n"
              "    return tf.io.decode_raw(x, tf.uint8)\n"
              "def jitter(x):\n"
              "    return x + tf.random.normal(tf.shape(x))\n"
              "def noisy(x):\n"
              "    return jitter(decode(x))\n"
              f"ds = tf.data.Dataset.range(3).map({fn})\n")
    ctx = _ctx(source, (2, 21))
    call = [n for n in ctx.nodes_of(ast.Call)
            if getattr(n.func, "attr", "") == "map"][-1]  # type: ignore[attr-defined]
    state = map_state(ctx, map_function(ctx, call))  # type: ignore[arg-type]
    assert (state.stateful, state.known) == (stateful, known)


def _codes(source: str, version: tuple[int, int], code: str) -> list[str]:
    return [f.message for f in lint_source(source, "t.py", rules=[registry.get(code)],
                                            tf_version=version) if f.code == code]


TUTORIAL = """\
import tensorflow as tf
import tensorflow_datasets as tfds

def normalize_img(image, label):
    return tf.cast(image, tf.float32) / 255., label

ds_train = tf.data.TFRecordDataset(['train.tfrecord'])
ds_train = ds_train.map(normalize_img)
ds_train = ds_train.cache().shuffle(1000).batch(128)

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
model.fit(ds_train, epochs=6)
"""


def test_the_tutorial_pipeline_is_reported_only_where_tf_does_not_fix_it_itself():
    assert len(_codes(TUTORIAL, (2, 5), "TFP601")) == 1
    assert len(_codes(TUTORIAL, (2, 5), "TFP602")) == 1
    assert "2.5" in _codes(TUTORIAL, (2, 5), "TFP601")[0]
    assert _codes(TUTORIAL, (2, 6), "TFP602") == []      # parallelised since 2.6
    assert len(_codes(TUTORIAL, (2, 10), "TFP601")) == 1
    assert _codes(TUTORIAL, (2, 10), "TFP602") == []
    assert _codes(TUTORIAL, (2, 12), "TFP601") == []     # injected since 2.12
    assert _codes(TUTORIAL, (2, 21), "TFP602") == []


def test_the_project_pin_reaches_the_tf_data_rules(tmp_path):
    (tmp_path / "train.py").write_text(TUTORIAL)
    (tmp_path / "requirements.txt").write_text("numpy\ntensorflow==2.10.1\n")
    request = LintRequest(paths=[str(tmp_path)], select=["TFP601", "TFP602"], cache=False,
                          jobs=1)
    old = run(request)
    assert old.target.version == (2, 10)
    assert [f.code for f in old.findings] == ["TFP601"]
    (tmp_path / "requirements.txt").write_text("numpy\ntensorflow>=2.15\n")
    assert run(request).findings == []


@pytest.mark.tf
def test_the_installed_tensorflow_rewrites_pipelines_as_the_knowledge_says():
    """The facts the rules stand on, checked against the TensorFlow installed here: its own
    ``assert_next`` test transformation fails when the rewritten pipeline differs."""
    tf = pytest.importorskip("tensorflow")
    testing = pytest.importorskip("tensorflow.python.data.experimental.ops.testing")
    installed = target.installed_version()
    if installed is None or installed.version < INJECT_PREFETCH_SINCE:
        pytest.skip("the installed TensorFlow predates the documented defaults")

    def rewritten_as(expected, dataset_fn, options=None):
        ds = dataset_fn(tf.data.Dataset.range(6).apply(testing.assert_next(expected)))
        if options is not None:
            ds = ds.with_options(options)
        try:
            list(ds)
        except tf.errors.InvalidArgumentError as exc:
            return str(exc).split("[Op:")[0]
        return True

    def stateless(ds):
        return ds.map(lambda x: x * 2)

    def stateful(ds):
        return ds.map(lambda x: x + tf.random.uniform([], 0, 3, tf.int64))

    # Defaults: a stateless map runs in parallel; a stateful one stays sequential and gets
    # an injected prefetch after it.
    assert rewritten_as(["ParallelMap"], stateless) is True
    assert rewritten_as(["Map", "Prefetch"], stateful) is True
    assert rewritten_as(["ParallelMap"], stateful) is not True
    # A lookup table's lookup (LookupTableFindV2, stateful in TF's op registry) keeps the
    # map sequential too: TFP602 counts `.lookup()` as stateful.
    table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
        tf.constant([0, 1], tf.int64), tf.constant([5, 6], tf.int64)), -1)

    def looked_up(ds):
        return ds.map(lambda x: table.lookup(x % 2))

    assert rewritten_as(["Map", "Prefetch"], looked_up) is True
    # A parallel map as the last step gets no injected prefetch (TF counts it asynchronous,
    # as TFP601 does).
    assert rewritten_as(["ParallelMap", "Prefetch"], stateless) is not True
    # Options off: a sequential map and nothing injected after it.
    for settings in ({"apply_default_optimizations": False},
                     {"inject_prefetch": False, "map_parallelization": False}):
        o = tf.data.Options()
        for k, v in settings.items():
            setattr(o.experimental_optimization, k, v)
        assert rewritten_as(["Map"], stateless, o) is True
        assert rewritten_as(["Map", "Prefetch"], stateless, o) is not True


@pytest.mark.parametrize("jobs", [1, 2])
def test_one_run_over_several_projects_gives_each_file_its_own_pin(tmp_path, jobs):
    for name, pin in (("old", "tensorflow==2.10"), ("new", "tensorflow>=2.15")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "requirements.txt").write_text(f"{pin}\n")
        (tmp_path / name / "train.py").write_text(TUTORIAL)
    request = LintRequest(paths=[str(tmp_path)], select=["TFP601"], cache=False, jobs=jobs)
    found = run(request).findings
    assert [f.location.path.split("/")[-2] for f in found] == ["old"]
    assert "2.10" in found[0].message
    # tf-version wins over every pin.
    assert len(run(LintRequest(paths=[str(tmp_path)], select=["TFP601"], cache=False,
                               jobs=jobs, tf_version="2.9")).findings) == 2


def test_a_changed_pin_is_not_a_cache_hit(tmp_path):
    (tmp_path / "requirements.txt").write_text("tensorflow>=2.15\n")
    (tmp_path / "train.py").write_text(TUTORIAL)
    request = LintRequest(paths=[str(tmp_path)], select=["TFP601"], jobs=1,
                          cache_dir=tmp_path / "cache")
    assert run(request).findings == []
    (tmp_path / "requirements.txt").write_text("tensorflow==2.10\n")
    again = run(request)
    assert again.analysed == 1 and [f.code for f in again.findings] == ["TFP601"]


@pytest.mark.parametrize("name", ["REQUIREMENTS.txt", "Requirements-gpu.txt", "requirements.TXT"])
def test_a_requirements_file_in_any_case_pins_the_project(tmp_path, name):
    """A held-out repository pinned TF 1.1 in ``REQUIREMENTS.txt``; lint read no pin there and
    judged its graph-mode code by TF 2.21's rules."""
    (tmp_path / "train.py").write_text(TUTORIAL)
    (tmp_path / name).write_text("numpy\ntensorflow==2.10.1\n")
    request = LintRequest(paths=[str(tmp_path)], select=["TFP601", "TFP602"], cache=False,
                          jobs=1)
    assert run(request).target.version == (2, 10)
