"""Stop 39, wave 3 (issue 31): TensorFlow's public API by release, read from the wheels, and the
explainer's reading of a missing ``tf.X`` against it. The reader is tested on a synthetic table;
one test reads the packaged (real) table.
"""

from __future__ import annotations

import gzip

import pytest

from tfperf.doctor.explain_api import API_LABEL, API_SOURCE, missing_api, namespace, reading
from tfperf.doctor.explainer import explain_log
from tfperf.doctor.knowledge import api_versions
from tfperf.doctor.knowledge.api_versions import api_table, parse

_SOURCES = ("release,keras,symbols,source\n"
            "1.12.0,tf (in the wheel),3,a.whl\n1.13.1,tf (in the wheel),4,b.whl\n"
            "2.0.0,tf (in the wheel),4,c.whl\n2.15.0,keras 2.15.0,4,d.whl\n"
            "2.16.1,keras 3.0.0,4,e.whl\n")
_TABLE = ("symbol,versions\n"
          "tf.Session,1.12-1.13\n"
          "tf.compat.v1.Session,1.13-2.16\n"
          "tf.sort,1.13-2.16\n"
          "tf.keras,1.12-2.16\n"
          "tf.keras.layers.Dense,1.12-2.16\n"
          "tf.keras.layers.experimental.preprocessing.Rescaling,2.0-2.15\n"
          "tf.keras.layers.Rescaling,2.15-2.16\n"
          "tf.gaps,1.12 2.0-2.15\n")
T = parse(_TABLE, _SOURCES)


def test_parse_ranges_and_releases():
    assert T.releases == ("1.12", "1.13", "2.0", "2.15", "2.16")
    assert T.versions("tf.gaps") == ("1.12", "2.0", "2.15")
    assert T.versions("tf.sort") == ("1.13", "2.0", "2.15", "2.16")
    assert T.versions("tf.nope") == ()
    assert T.keras["2.16"] == "keras 3.0.0"
    assert T.ending_with("Rescaling", "2.16") == ["tf.keras.layers.Rescaling"]


def test_parse_rejects_bad_tables():
    with pytest.raises(ValueError, match="out of order"):
        parse(_TABLE, "release,keras,symbols,source\n2.0.0,,1,x\n1.13.1,,1,y\n")
    with pytest.raises(ValueError, match="not a TensorFlow version"):
        parse(_TABLE, "release,keras,symbols,source\nlatest,,1,x\n")
    with pytest.raises(ValueError, match="unexpected header"):
        parse("name,releases\ntf.x,1.13\n", _SOURCES)
    bad = parse("symbol,versions\ntf.x,1.13-3.0\n", _SOURCES)
    with pytest.raises(ValueError, match="not in the table"):
        bad.versions("tf.x")


@pytest.mark.parametrize("module, ns, hint", [
    ("tensorflow", "tf", ""),
    ("tensorflow._api.v2.compat.v1", "tf.compat.v1", "2.x"),
    ("tensorflow._api.v1.keras.layers", "tf.keras.layers", "1.x"),
    ("keras._tf_keras.keras.layers", "tf.keras.layers", ">= 2.16"),
    ("tensorflow.python.keras.engine", None, ""),  # internals: not in the table
    ("tensorflow_core.estimator", None, ""),  # TF 1.15-2.1's own package: not a public name
    ("keras.src.engine", None, ""),
])
def test_namespace(module, ns, hint):
    assert namespace(module) == (ns, hint)


def test_missing_api_wordings():
    lines = ["AttributeError: module 'tensorflow' has no attribute 'sort'",
             "ImportError: cannot import name 'Rescaling' from 'tensorflow.keras.layers' (x.py)",
             "ModuleNotFoundError: No module named 'tensorflow.contrib'",
             "AttributeError: module 'numpy' has no attribute 'sort'",  # not TensorFlow's
             "AttributeError: 'Tensor' object has no attribute 'numpy'"]
    assert [(m.symbol, m.line) for m in missing_api(lines)] == [
        ("tf.sort", 0), ("tf.keras.layers.Rescaling", 1), ("tf.contrib", 2)]


def test_reading_newer_than_the_log():
    cause, fix, _ = reading("tf.sort", "1.12.0", "", "", T)
    assert "exists from TF 1.13" in cause and "1.12.0" in cause
    assert "tensorflow>=1.13" in fix


def test_reading_newer_names_the_place_in_the_logs_release():
    _, fix, _ = reading("tf.keras.layers.Rescaling", "2.0.0", "", "", T)
    assert "pip install 'tensorflow>=2.15'" in fix
    assert "on TF 2.0, use tf.keras.layers.experimental.preprocessing.Rescaling" in fix


def test_reading_removed_with_compat_v1():
    cause, fix, _ = reading("tf.Session", "2.0.0", "", "", T)
    assert "removed in TF 2.0" in cause
    assert fix.startswith("Use tf.compat.v1.Session") and "tensorflow<2.0" in fix


def test_reading_removed_unknown_version_from_module_hint():
    cause, _fix, _ = reading("tf.Session", None, "2.x", "", T)
    assert "removed in TF 2.0" in cause and "2.x (from the module's name)" in cause


def test_reading_keras3_removal_names_tf_keras():
    said = reading("tf.keras.layers.experimental.preprocessing.Rescaling", "2.16.1", "", "", T)
    assert said is not None
    cause, fix, _ = said
    assert "removed in TF 2.16" in cause and "Keras 3" in cause
    assert "tf.keras.layers.Rescaling" in fix and "TF_USE_LEGACY_KERAS=1" in fix


def test_reading_a_tf_newer_than_the_table_reads_its_newest_row():  # review 39b item 3
    said = reading("tf.sort", "2.22.0", "", "", T.__class__(T.releases, T.keras, {
        "tf.sort": "1.13-2.16"}))
    assert said is not None
    cause, _, detail = said
    assert "not the installed package" in cause and "this log's is newer" in cause
    assert "newer than the table (read as TF 2.16" in detail
    cause, fix, _ = reading("tf.Session", "3.1.0", "", "", T)  # removed: the table's facts
    assert "removed in TF 2.0" in cause and "tensorflow<2.0" in fix


def test_explain_a_log_newer_than_the_table_does_not_crash():  # review 39b item 3
    latest = api_table().releases[-1]
    major, minor = latest.split(".")
    log = (f"tf.__version__ = {major}.{int(minor) + 1}.0\n"
           "AttributeError: module 'tensorflow' has no attribute 'sort'\n")
    top = explain_log(log).causes[0]
    assert "newer than the table" in top.detail and "not the installed package" in top.cause


def test_reading_a_tf_older_than_the_table_names_no_floor():  # review 39b item 4
    cause, fix, detail = reading("tf.Session", "1.4.0", "", "", T)
    assert "exists from" not in cause and "table does not know" in cause
    assert "Upgrade" not in fix and ">=" not in fix
    assert "before 1.12: unknown" in detail
    cause, fix, _ = reading("tf.sort", "1.4.0", "", "", T)  # came after the floor: still known
    assert "exists from TF 1.13" in cause and "tensorflow>=1.13" in fix


@pytest.mark.parametrize("log", [
    "  File \"train.py\", line 1, in <module>\n    import keras\n"
    "ModuleNotFoundError: No module named 'keras'\n",
    "tensorflow==2.16.1\n  File \"train.py\", line 1, in <module>\n"
    "ModuleNotFoundError: No module named 'keras.layers'\n",
    "ModuleNotFoundError: No module named 'tensorflow.keras'\n",
])
def test_a_missing_module_is_never_read_as_a_shadowed_package(log):  # review 39b item 2
    top = explain_log(log).causes[0]
    assert "not the installed package" not in top.cause
    assert not top.source.startswith(API_SOURCE)
    assert "not installed" in top.cause


def test_a_missing_top_package_is_not_a_tf_name():
    assert missing_api(["ModuleNotFoundError: No module named 'keras'"]) == []
    assert missing_api(["ModuleNotFoundError: No module named 'tensorflow'"]) == []


def test_reading_in_every_release_is_not_the_package():
    cause, fix, _ = reading("tf.keras", None, "", "", T)
    assert "not the installed package" in cause and "rename" in fix
    cause, _, _ = reading("tf.keras", None, "", "/home/u/tensorflow.py", T)
    assert "/home/u/tensorflow.py" in cause


def test_reading_present_in_the_logs_release_is_not_the_package():  # VALID twin of the upgrade
    cause, _, _ = reading("tf.sort", "2.0.0", "", "", T)
    assert "not the installed package" in cause


def test_reading_never_public():
    cause, fix, _ = reading("tf.keras.layers.Rescalling", None, "", "", T)
    assert "not a public TensorFlow name" in cause
    assert "tf.keras.layers.Rescaling" in fix


# --- the real table (package data) ----------------------------------------------------------


def test_real_table_facts():
    t = api_table()
    assert t.releases[0] == "1.12" and t.releases[-1] == "2.21"
    assert t.versions("tf.sort")[0] == "1.13"  # tf.sort came with 1.13
    assert t.versions("tf.Session")[-1] == "1.15"
    assert "2.21" in t.versions("tf.compat.v1.Session")
    assert "tf.contrib" in t.rows and t.versions("tf.contrib")[-1] == "1.15"
    assert t.keras["2.16"].startswith("keras 3")
    assert (api_versions._DATA / api_versions.TABLE).stat().st_size < 1_000_000
    with gzip.open(api_versions._DATA / api_versions.TABLE, "rt") as fh:
        assert fh.readline().strip() == "symbol,versions"


def test_moved_names_the_shortest_public_spelling():  # review 39b item 5
    _, fix, _ = reading("tf.data.AUTOTUNE", "2.3.0", "", "", api_table())
    assert fix.endswith("on TF 2.3, use tf.data.experimental.AUTOTUNE"), fix


def test_real_table_holds_keras3_multiline_imports():  # review 39b item 1
    t = api_table()
    assert t.versions("tf.keras.layers.BatchNormalization")[-1] == "2.21"
    assert "2.18" in t.versions("tf.keras.layers.AveragePooling2D")
    assert t.versions("tf.keras.layers.GroupNormalization")[-1] == "2.21"


@pytest.mark.tf
def test_the_installed_tf_names_are_in_the_tables_row():  # review 39b item 1: the ground truth
    import types

    tf = pytest.importorskip("tensorflow")
    t = api_table()
    release = ".".join(tf.__version__.split(".")[:2])
    if release not in t.releases:
        pytest.skip(f"installed TF {tf.__version__} is not one of the table's releases")
    missing = []
    for ns in ("tf", "tf.nn", "tf.math", "tf.keras", "tf.keras.layers", "tf.keras.optimizers",
               "tf.keras.losses", "tf.keras.activations"):
        mod = tf
        for part in ns.split(".")[1:]:
            mod = getattr(mod, part)
        for name in dir(mod):
            # tf's own submodules outside the generated API (tf.tools, tf.security) are no API
            if name.startswith("_") or (ns == "tf" and isinstance(getattr(mod, name),
                                                                  types.ModuleType)):
                continue
            if release not in t.versions(f"{ns}.{name}"):
                missing.append(f"{ns}.{name}")
    assert missing == []


@pytest.mark.parametrize("log, said", [
    ("python3 gen.py\nAttributeError: module 'tensorflow' has no attribute 'sort'\n",
     "exists from TF 1.13"),
    ("tensorflow version: 2.4.1\nAttributeError: module 'tensorflow' has no attribute "
     "'to_int64'\n", "removed in TF 2.0"),
    ("ImportError: cannot import name 'Rescaling' from 'tensorflow.keras.layers' "
     "(/usr/lib/python3.8/site-packages/tensorflow/keras/layers/__init__.py)\n"
     "tensorflow==2.4.0\n", "exists from TF 2.6"),
    ("AttributeError: module 'tensorflow' has no attribute 'keras'\n",
     "not the installed package"),
    ("Traceback (most recent call last):\n  File \"/home/u/tensorflow.py\", line 1, in <module>\n"
     "AttributeError: module 'tensorflow' has no attribute 'keras'\n", "tensorflow.py"),
])
def test_explain_reads_the_table(log, said):
    ex = explain_log(log)
    top = ex.causes[0]
    assert said in top.cause, top.cause
    assert top.confidence == "high"
    assert top.label == "tensorflow-shadowed" or top.source.startswith(API_SOURCE)


def test_a_guessing_row_is_settled_by_the_table():
    ex = explain_log("ImportError: cannot import name 'Rescaling' from 'tensorflow.keras.layers' "
                     "(/usr/lib/python3.8/site-packages/tensorflow/keras/layers/__init__.py)\n"
                     "tensorflow==2.4.0\n")
    assert ex.causes[0].label == API_LABEL


@pytest.mark.parametrize("log, symbol", [
    ("module 'tensorflow' has no attribute 'frobnicate'", "tf.frobnicate"),
    ("Traceback (most recent call last):\n  File \"app.py\", line 3, in <module>\n"
     "ModuleNotFoundError: No module named 'keras.layers.core.merge'",
     "tf.keras.layers.core.merge"),
])
def test_never_public_names_are_read_by_the_table(log, symbol):
    top = explain_log(log + "\n").causes[0]
    assert top.cause.startswith(f"{symbol} is not a public TensorFlow name")
    assert "moved or was removed before TF 1.12" in top.cause


def test_a_row_keeps_its_answer():  # VALID twin: tf.Session is the TF1-on-TF2 row's
    ex = explain_log("AttributeError: module 'tensorflow' has no attribute 'Session'\n")
    assert ex.causes[0].label == "tf1-api-on-tf2"


def test_other_attribute_errors_keep_the_floor():  # VALID twin: not a TensorFlow module's name
    ex = explain_log("AttributeError: 'Tensor' object has no attribute 'numpy'\n")
    assert all(not c.source.startswith(API_SOURCE) for c in ex.causes)


def test_own_file_is_outside_site_packages():
    from tfperf.doctor.explain_api import _own_file

    assert _own_file('  File "/home/u/tensorflow.py", line 3, in <module>\n') == \
        "/home/u/tensorflow.py"
    assert _own_file('  File "/usr/lib/python3/site-packages/tensorflow/__init__.py", line 3\n') \
        == ""
