"""Rule groups with honest defaults, and the TensorFlow version the linted code targets."""

from __future__ import annotations

import json
import re

import pytest

from tfperf.cli import main
from tfperf.lint import registry, target
from tfperf.lint.rule import DEFAULT_GROUPS, GROUPS
from tfperf.lint.session import LintRequest, run

TF1 = "import tensorflow as tf\nx = tf.compat.v1.placeholder(tf.float32, [None, 3])\n"
PIPELINE = ("import tensorflow as tf\n"
            "ds = tf.data.Dataset.range(100).map(lambda x: x * 2).batch(8)\n"
            "for batch in ds:\n"
            "    tf.print(batch)\n")


def codes(rules):
    return {r.code for r in rules}


def test_every_rule_has_a_known_group_and_the_default_is_perf():
    assert {"perf"} == DEFAULT_GROUPS
    assert all(r.group in GROUPS for r in registry.rule_classes())
    assert registry.get("TFP701").group == "migration"
    default = codes(registry.select())
    assert default == {r.code for r in registry.rule_classes() if r.group == "perf"}


def test_migration_rules_run_only_when_selected():
    assert "TFP701" not in codes(registry.select())
    assert "TFP701" in codes(registry.select(select=["TFP7"]))
    assert "TFP701" in codes(registry.select(extend_select=["TFP7"]))
    assert "TFP701" in codes(registry.select(select=["ALL"]))


def test_correctness_rules_are_off_by_default_and_selected_by_group_name():
    correctness = {r.code for r in registry.rule_classes() if r.group == "correctness"}
    assert {"TFP202", "TFP502", "TFP604"} <= correctness
    assert not correctness & codes(registry.select())
    assert codes(registry.select(select=["correctness"])) == correctness
    assert correctness <= codes(registry.select(extend_select=["Correctness"]))
    assert correctness <= codes(registry.select(select=["ALL"]))
    # A group name is less specific than any code prefix: an ignored prefix wins.
    assert "TFP604" not in codes(registry.select(select=["correctness"], ignore=["TFP6"]))
    preview = codes(registry.select(select=["preview"]))
    assert preview and all(registry.get(c).group == "preview" for c in preview)
    assert registry.unknown_selectors(["correctness", "preview", "corectness"]) == ["corectness"]


def test_preview_rules_need_preview_or_their_exact_code():
    preview = {r.code for r in registry.rule_classes() if r.group == "preview"}
    if not preview:
        pytest.skip("no rule is in preview")
    code = sorted(preview)[0]
    assert code not in codes(registry.select())
    assert code not in codes(registry.select(select=["ALL"]))
    assert code not in codes(registry.select(select=[code[:4]]))
    assert code in codes(registry.select(preview=True))
    assert code in codes(registry.select(select=[code]))  # an exact code always selects
    assert code not in codes(registry.select(preview=True, ignore=[code]))


def test_cli_default_output_leaves_tf1_leftovers_out(tmp_path, capsys):
    path = tmp_path / "m.py"
    path.write_text(TF1)
    assert main(["lint", "--no-cache", "--format", "json", str(path)]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert main(["lint", "--no-cache", "--format", "json", "--select", "TFP7", str(path)]) == 1
    assert {d["code"] for d in json.loads(capsys.readouterr().out)} == {"TFP701"}


def test_config_preview_and_extend_select(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.tfperf.lint]\nextend-select = ["TFP7"]\npreview = true\n')
    (tmp_path / "m.py").write_text(TF1)
    out = run(LintRequest(paths=[str(tmp_path)], cache=False))
    assert "TFP701" in {f.code for f in out.findings}
    assert any(r.group == "preview" for r in out.rules) or not any(
        r.group == "preview" for r in registry.rule_classes())


def test_config_extend_select_reaches_a_group_by_name(tmp_path):
    (tmp_path / "m.py").write_text("import tensorflow as tf\n\n@tf.function\n"
                                   "def f(x):\n    return x.numpy() + 1\n")
    assert "TFP202" not in {f.code for f in run(LintRequest(paths=[str(tmp_path)],
                                                             cache=False)).findings}
    (tmp_path / "pyproject.toml").write_text(
        '[tool.tfperf.lint]\nextend-select = ["correctness"]\n')
    out = run(LintRequest(paths=[str(tmp_path)], cache=False))
    assert "TFP202" in {f.code for f in out.findings}


def test_rules_and_rule_show_the_group_and_its_precision(capsys):
    assert main(["rules"]) == 0
    text = capsys.readouterr().out
    assert "migration" in text and "perf*" in text
    assert main(["rule", "TFP701"]) == 0
    text = capsys.readouterr().out
    assert "Group: migration (off by default" in text and "Precision:" in text
    # A preview rule judged alone on user-style code shows those figures, from the package data
    assert main(["rule", "TFP308"]) == 0
    text = capsys.readouterr().out
    assert "Group: preview" in text
    assert re.search(r"linted alone on user-style code: \d+/\d+ true or minor", text), text


def test_text_output_groups_by_file_and_closes_with_a_summary_by_rule(tmp_path, capsys):
    loop = ("import tensorflow as tf\n"
            "def f(x):\n"
            "    out = []\n"
            "    for i in range(x.shape[0]):\n"
            "        out.append(tf.reduce_sum(x[i]))\n"
            "    for j in range(x.shape[0]):\n"
            "        out.append(tf.reduce_max(x[j]))\n"
            "    return out\n")
    (tmp_path / "a.py").write_text(loop)
    (tmp_path / "b.py").write_text(loop)
    main(["lint", "--no-cache", "--select", "TFP101", str(tmp_path)])
    out = capsys.readouterr().out
    assert out.count(f"{tmp_path / 'a.py'}:\n") == 1  # the path once, as a heading
    assert out.count("help:") == 2  # the rule's hint once per file, not once per finding
    row = next(line for line in out.splitlines() if line.split()[:2] == ["4", "TFP101"])
    assert row.split()[0] == "4" and row.split()[-2] == "2"  # 4 findings in 2 files


# ------------------------------------------------------------------ the targeted TF version


@pytest.mark.parametrize(("line", "version"), [
    ("tensorflow==2.15.1", (2, 15)), ("tensorflow>=2.12,<2.16", (2, 12)),
    ("tensorflow-cpu~=2.13.0", (2, 13)), ('"tensorflow[and-cuda]>=2.14"', (2, 14)),
    ("tensorflow <2.16", (2, 15)), ("tensorflow<2", (1, 15)), ("tensorflow<=2.3", (2, 3)),
    ("tensorflow>=1.4,<2.0", (1, 4)), ("tensorflow<3", None), ("tensorflow", None),
    ("tensorflow-datasets>=4.9", None),
    ("tensorflow-probability==0.24", None), ("tf-nightly>2.17", (2, 17)),
    ("tensorflow==2.10.0 ; python_version<'3.11'  # old", (2, 10)),
])
def test_a_requirement_pins_its_lowest_version(line, version):
    assert target.pinned_version(line) == version


def test_the_target_comes_from_config_then_pin_then_installed(tmp_path, monkeypatch):
    assert target.resolve("2.9", tmp_path).version == (2, 9)
    (tmp_path / "requirements.txt").write_text("numpy\ntensorflow>=2.11\n")
    pinned = target.resolve(None, tmp_path)
    assert pinned.version == (2, 11) and "requirements.txt" in pinned.source
    (tmp_path / "requirements.txt").unlink()
    installed = target.installed_version()
    assert target.resolve(None, tmp_path) == (installed or target.TargetTF(
        target.NEWEST_KNOWN, "newest known to tfperf"))
    monkeypatch.setattr(target, "installed_version", lambda: None)
    assert target.resolve(None, tmp_path).version == target.NEWEST_KNOWN
    with pytest.raises(target.TargetError):
        target.resolve("two", tmp_path)


SETUP_PY = """\
from setuptools import setup, find_packages

setup(
    name="specaugment",
    version="0.1",
    packages=find_packages(),
    install_requires=[
        "numpy>=1.16",
        'tensorflow-gpu>=1.13.1,<2',
        "librosa",
    ],
    extras_require={"docs": ["sphinx"]},
)
"""
PYPROJECT = """\
[project]
name = "deeplabcut"
dependencies = [
  "numpy>=1.18.5",
  "tensorflow>=2.12,<2.16; python_version<'3.12'",
  "tensorflow>=2.16.1,<2.18; python_version>='3.12'",
  "tensorflow-datasets>=4.9",
]
"""


@pytest.mark.parametrize(("name", "text", "version"), [
    ("setup.py", SETUP_PY, (1, 13)),
    ("pyproject.toml", PYPROJECT, (2, 12)),
    ("requirements.txt", "##### TensorFlow-related packages\n# replace tensorflow-serving-api "
     "with tensorflow-serving-api-gpu\ntensorflow~=2.6.0\ntensorflow-serving-api~=2.6.0\n",
     (2, 6)),
    ("requirements-gpu.txt", "tensorflow-gpu==2.12.0\nopencv-python\n", (2, 12)),
    ("setup.cfg", "[options]\ninstall_requires =\n    tensorflow>=2.9\n    numpy\n", (2, 9)),
])
def test_the_pin_is_read_from_each_kind_of_project_file(tmp_path, name, text, version):
    (tmp_path / name).write_text(text)
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    module = tmp_path / "pkg" / "sub" / "train.py"
    module.write_text("x = 1\n")
    found = target.resolve(None, module)  # from a file deep inside the project
    assert found.version == version and name in found.source and not found.configured


def test_the_pin_search_stops_at_the_repository_root(tmp_path, monkeypatch):
    (tmp_path / "requirements.txt").write_text("tensorflow==1.15\n")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    assert target.project_pin(repo) is None
    (repo / "requirements.txt").write_text("tensorflow==2.4\n")
    assert target.project_pin(repo / "nested" / "x.py").version == (2, 4)  # type: ignore[union-attr]


@pytest.mark.parametrize(("lines", "version"), [
    (["!pip install -q tensorflow-gpu==2.0.0-beta1"], (2, 0)),
    (["%pip install --upgrade 'tensorflow>=2.4' tensorflow-datasets"], (2, 4)),
    (["!pip3 install tensorflow==2.3.0 keras==2.4", "!pip install tensorflow==2.5"], (2, 3)),
    (["!python -m pip install tensorflow==1.14"], (1, 14)),
    (["%tensorflow_version 1.x", "import tensorflow as tf"], (1, 15)),
    (["%tensorflow_version 2.x"], None),              # names no release
    (["!pip install tensorflow_hub", "!pip install tensorflow"], None),
    (["# !pip install tensorflow==1.15", "x = 'pip install tensorflow==1.15'"], None),
])
def test_a_notebook_pins_itself_with_pip_install(lines, version):
    pin = target.notebook_pin(["\n".join(lines)])
    assert (pin.version if pin else None) == version


def _notebook(*cells: str) -> str:
    return json.dumps({"cells": [{"cell_type": "code", "source": c, "metadata": {},
                                  "outputs": [], "execution_count": None} for c in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def test_a_notebook_pin_reaches_the_rules_unless_tf_version_is_set(tmp_path):
    (tmp_path / "nb.ipynb").write_text(_notebook("!pip install tensorflow==2.4.1", PIPELINE))
    (tmp_path / "plain.py").write_text(PIPELINE)
    seen: dict[str, tuple[int, int]] = {}
    from tfperf.lint import engine

    original = engine.Context.__init__

    def spy(self, tree, source, path, *rest, **kwargs):
        original(self, tree, source, path, *rest, **kwargs)
        seen[path.rsplit("/", 1)[-1]] = self.tf_version

    engine.Context.__init__ = spy  # type: ignore[method-assign]
    try:
        run(LintRequest(paths=[str(tmp_path)], select=["TFP601"], cache=False, jobs=1))
        derived = dict(seen)
        run(LintRequest(paths=[str(tmp_path)], select=["TFP601"], cache=False, jobs=1,
                        tf_version="2.15"))
    finally:
        engine.Context.__init__ = original  # type: ignore[method-assign]
    assert derived["nb.ipynb"] == (2, 4)
    assert derived["plain.py"] == (target.installed_version() or target.TargetTF(
        target.NEWEST_KNOWN, "")).version
    assert seen == {"nb.ipynb": (2, 15), "plain.py": (2, 15)}  # the setting wins


def test_a_bad_tf_version_is_a_usage_error(tmp_path, capsys):
    (tmp_path / "m.py").write_text("x = 1\n")
    assert main(["lint", "--tf-version", "latest", str(tmp_path / "m.py")]) == 2
    assert "tf-version" in capsys.readouterr().err
    (tmp_path / "pyproject.toml").write_text('[tool.tfperf.lint]\ntf-version = "x"\n')
    assert main(["lint", str(tmp_path / "m.py")]) == 2


def test_the_target_reaches_rules_and_the_cache_key(tmp_path):
    (tmp_path / "m.py").write_text(PIPELINE)
    seen = []
    from tfperf.lint import engine

    original = engine.Context.__init__

    def spy(self, *args, **kwargs):
        original(self, *args, **kwargs)
        seen.append(self.tf_version)

    engine.Context.__init__ = spy  # type: ignore[method-assign]
    try:
        first = run(LintRequest(paths=[str(tmp_path)], tf_version="2.9",
                                cache_dir=tmp_path / "c"))
        again = run(LintRequest(paths=[str(tmp_path)], tf_version="2.15",
                                cache_dir=tmp_path / "c"))
    finally:
        engine.Context.__init__ = original  # type: ignore[method-assign]
    assert seen == [(2, 9), (2, 15)]  # another target is not a cache hit
    assert first.target.version == (2, 9) and again.analysed == 1


def test_newest_known_follows_the_doctors_knowledge():
    from tfperf.doctor import knowledge

    newest = max(target.parse_version(c.tf_version) for c in knowledge.build_configs())
    assert newest == target.NEWEST_KNOWN
