"""The engine: TFP000/TFP001, noqa, fixes, files, the CLI, config, cache, workers."""

from __future__ import annotations

import ast
import json
import subprocess
from pathlib import Path

import pytest

from tfperf.cli import main
from tfperf.core.findings import Applicability, Edit, Fix
from tfperf.examples import FIXED, SLOW
from tfperf.lint import registry
from tfperf.lint.engine import Dispatcher, lint_source
from tfperf.lint.fix import apply_edits, fix_source
from tfperf.lint.rule import Invalid, Rule
from tfperf.lint.runner import lint_file
from tfperf.lint.session import LintRequest, run

LOOP = ("import tensorflow as tf\n"
        "def f(x):\n"
        "    acc = tf.zeros([4])\n"
        "    for i in range(x.shape[0]):\n"
        "        acc += x[i]{noqa}\n"
        "    return acc\n")


def codes(findings):
    return [f.code for f in findings]


def test_case_study_slow_has_the_loop_findings_and_fixed_has_none():
    slow = codes(lint_file(SLOW, Dispatcher(registry.all_rules())).findings)
    assert "TFP101" in slow and ("TFP102" in slow or "TFP103" in slow)
    assert lint_file(FIXED, Dispatcher(registry.all_rules())).findings == []


@pytest.mark.parametrize(("comment", "suppressed"), [
    ("", False), ("  # noqa", True), ("  # noqa: TFP102", True), ("  # NOQA:TFP102,TFP101", True),
    ("  # noqa: TFP1", True), ("  # noqa: TFP201", False),
])
def test_noqa(comment, suppressed):
    found = "TFP102" in codes(lint_source(LOOP.format(noqa=comment)))
    assert found is not suppressed


def test_tfp000_for_syntax_error_binary_and_bad_encoding(tmp_path):
    bad = lint_source("def f(:\n", "bad.py")
    assert codes(bad) == ["TFP000"] and bad[0].location.line == 1
    (tmp_path / "bin.py").write_bytes(b"\x00\x01\x02")
    (tmp_path / "latin.py").write_bytes(b"x = '\xe9'\n")  # not UTF-8, no cookie
    (tmp_path / "cookie.py").write_bytes(b"# -*- coding: latin-1 -*-\nx = '\xe9'\n")
    (tmp_path / "unknown.py").write_bytes(b"# -*- coding: nope -*-\nx = 1\n")
    d = Dispatcher(registry.all_rules())
    for name, reason in [("bin.py", "NUL"), ("latin.py", "decode"), ("unknown.py", "encoding")]:
        f = lint_file(tmp_path / name, d).findings
        assert codes(f) == ["TFP000"] and reason in f[0].message, name
    assert lint_file(tmp_path / "cookie.py", d).findings == []


class _Broken(Rule):
    code, name, message = "TFP999", "broken", "never"
    node_types = (ast.Call,)

    def check(self, node, ctx):
        raise RuntimeError("boom")


def test_tfp001_reports_a_broken_rule_and_the_others_still_run():
    found = lint_source(LOOP.format(noqa=""), "m.py", rules=[_Broken(), registry.get("TFP102")])
    internal = [f for f in found if f.code == "TFP001"]
    assert len(internal) == 1 and "TFP999" in internal[0].message and "m.py" in internal[0].message
    assert "TFP102" in codes(found)


def test_apply_edits_skips_overlaps_and_handles_insertions():
    src = "abc\ndef\n"
    fixes = [Fix(Applicability.SAFE, (Edit(1, 0, 1, 2, "X"),)),
             Fix(Applicability.SAFE, (Edit(1, 1, 1, 3, "Y"),)),  # overlaps the first
             Fix(Applicability.SAFE, (Edit(2, 3, 2, 3, "!"),))]
    out, applied, skipped = apply_edits(src, fixes)
    assert (out, applied, skipped) == ("Xc\ndef!\n", 2, 1)


def test_fix_that_breaks_the_code_is_not_applied():
    class Bad(Rule):
        code, name = "TFP998", "bad"

    def lint(s):
        from tfperf.core.findings import Finding, Location
        return [Finding("TFP998", "m", location=Location("p", 1, 0),
                        fix=Fix(Applicability.SAFE, (Edit(1, 0, 1, 1, "("),)))]
    result = fix_source("x = 1\n", lint)
    assert result.source == "x = 1\n" and result.error


def test_invalid_examples_are_examples():
    assert Invalid("x").count is None


# ------------------------------------------------------------------ CLI


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def test_cli_exit_status_and_json(tmp_path, capsys):
    write(tmp_path, "slow.py", LOOP.format(noqa=""))
    write(tmp_path, "ok.py", "x = 1\n")
    assert main(["lint", "--no-cache", str(tmp_path / "ok.py")]) == 0
    capsys.readouterr()
    assert main(["lint", "--no-cache", "--format", "json", str(tmp_path)]) == 1
    data = json.loads(capsys.readouterr().out)
    keys = {"code", "name", "message", "path", "line", "column", "end_line", "end_column",
            "cell", "fix"}
    assert data and all(keys <= set(d) for d in data)
    fix = next(d["fix"] for d in data if d["code"] == "TFP102")
    assert fix["applicability"] == "unsafe" and fix["edits"]
    assert main(["lint", "--select", "NOPE", str(tmp_path)]) == 2
    assert main(["lint", str(tmp_path / "missing.py")]) == 2


@pytest.mark.parametrize("fmt", ["text", "concise", "sarif", "github"])
def test_cli_formats(tmp_path, capsys, fmt):
    write(tmp_path, "slow.py", LOOP.format(noqa=""))
    assert main(["lint", "--no-cache", "--statistics", "--format", fmt, str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "TFP102" in out
    if fmt == "sarif":
        assert json.loads(out[: out.rindex("}") + 1])["version"] == "2.1.0"


def test_sarif_names_a_rule_for_every_result_the_engines_own_codes_too(tmp_path, capsys):
    """A file that does not parse is a TFP000 result: its ruleId named no rule in
    runs[].tool.driver.rules (no text, help or index for a code-scanning view)."""
    write(tmp_path, "slow.py", LOOP.format(noqa=""))
    write(tmp_path, "broken.py", "def f(:\n    pass\n")
    assert main(["lint", "--no-cache", "--format", "sarif", str(tmp_path)]) == 1
    run = json.loads(capsys.readouterr().out)["runs"][0]
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert {"TFP000", "TFP102"} <= {r["ruleId"] for r in run["results"]}
    for result in run["results"]:
        assert rules[result["ruleIndex"]] == result["ruleId"], result
    assert "TFP001" not in rules  # only the engine codes that occur
    write(tmp_path, "broken.py", "x = 1\n")  # the twin: a clean file adds no engine code
    assert main(["lint", "--no-cache", "--format", "sarif", str(tmp_path)]) == 1
    rules = [r["id"] for r in json.loads(capsys.readouterr().out)["runs"][0]["tool"]["driver"]
             ["rules"]]
    assert "TFP000" not in rules


def test_cli_fix_diff_and_unsafe(tmp_path, capsys):
    p = write(tmp_path, "slow.py", LOOP.format(noqa=""))
    before = p.read_text()
    assert main(["lint", "--fix", str(p)]) == 1  # the TFP102 fix is unsafe: not applied
    assert p.read_text() == before
    capsys.readouterr()
    main(["lint", "--diff", "--unsafe-fixes", str(p)])
    out = capsys.readouterr().out
    assert "+    acc += tf.reduce_sum(x, axis=0)" in out
    assert f"--- {p}\n+++ {p}\n" in out  # an absolute path as it is: `patch -p0` applies it
    assert p.read_text() == before  # --diff writes nothing
    main(["lint", "--unsafe-fixes", str(p)])
    assert "tf.reduce_sum(x, axis=0)" in p.read_text() and "for i" not in p.read_text()


def test_cli_diff_of_a_relative_path_applies_with_git(tmp_path, capsys, monkeypatch):
    write(tmp_path, "slow.py", LOOP.format(noqa=""))
    monkeypatch.chdir(tmp_path)
    main(["lint", "--diff", "--unsafe-fixes", "--no-cache", "slow.py"])
    out = capsys.readouterr().out
    patch = out[out.index("--- a/slow.py"):]
    patch = patch[: patch.index("\n\n") + 1] if "\n\n" in patch else patch
    (tmp_path / "fix.patch").write_text(patch)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "apply", "fix.patch"], cwd=tmp_path, check=True)
    assert "tf.reduce_sum(x, axis=0)" in (tmp_path / "slow.py").read_text()


@pytest.mark.parametrize(("path", "header"), [
    ("/tmp/x.py", "--- /tmp/x.py\n+++ /tmp/x.py\n"),
    ("C:\\src\\x.py", "--- C:\\src\\x.py\n+++ C:\\src\\x.py\n"),
    ("pkg/x.py", "--- a/pkg/x.py\n+++ b/pkg/x.py\n"),
])
def test_a_diff_names_an_absolute_path_as_it_is_on_posix_and_windows(path, header):
    # `a/C:\src\x.py` applies nowhere, as `a//tmp/x.py` would not.
    from tfperf.lint.result import unified_diff

    assert unified_diff(path, "x = 1\n", "x = 2\n").startswith(header)


def test_cli_rules_and_rule(capsys):
    assert main(["rules"]) == 0
    assert "TFP101" in capsys.readouterr().out
    assert main(["rule", "tfp101"]) == 0
    out = capsys.readouterr().out
    assert "## What it does" in out and "S12" in out
    assert main(["rule", "TFP000"]) == 0
    assert main(["rule", "TFP9999"]) == 2


# ------------------------------------------------------------------ files, config, cache


def test_discovery_respects_gitignore_venvs_hidden_and_globs(tmp_path):
    body = LOOP.format(noqa="")
    write(tmp_path, "pkg/a.py", body)
    write(tmp_path, "pkg/ignored.py", body)
    write(tmp_path, ".gitignore", "pkg/ignored.py\n")
    write(tmp_path, "venv/pyvenv.cfg", "home = /usr\n")
    write(tmp_path, "venv/lib/b.py", body)
    write(tmp_path, ".hidden/c.py", body)
    write(tmp_path, "notes.txt", body)
    out = run(LintRequest(paths=[str(tmp_path)], cache=False))
    assert sorted({Path(f.location.path).name for f in out.findings}) == ["a.py"]
    out = run(LintRequest(paths=[str(tmp_path / "pkg" / "*.py")], cache=False))
    assert {Path(f.location.path).name for f in out.findings} == {"a.py", "ignored.py"}


def test_discovery_spelling_symlinks_and_duplicates(tmp_path, monkeypatch):
    from tfperf.lint.discovery import discover

    body = LOOP.format(noqa="")
    write(tmp_path, "pkg/sub/a.py", body)
    write(tmp_path, "pkg/sub/.gitignore", "gen_*.py\n")
    write(tmp_path, "pkg/sub/gen_x.py", body)
    (tmp_path / "pkg" / "loop").symlink_to(tmp_path / "pkg", target_is_directory=True)
    (tmp_path / "pkg" / "alias.py").symlink_to(tmp_path / "pkg" / "sub" / "a.py")
    monkeypatch.chdir(tmp_path)
    # Spelled as given, each file once (the symlink loop and the linked file are not
    # linted twice), the nested .gitignore applied.
    assert [str(p) for p in discover(["pkg", "pkg/sub/a.py", "./pkg/sub"])] == [
        str(Path("pkg", "alias.py"))]
    assert [str(p) for p in discover(["pkg/sub", "pkg"])] == [
        str(Path("pkg/sub/a.py"))]


def test_pyproject_config(tmp_path, capsys):
    body = LOOP.format(noqa="")
    write(tmp_path, "pyproject.toml",
          '[tool.tfperf.lint]\nignore = ["TFP101"]\nexclude = ["gen/**"]\n'
          '[tool.tfperf.lint.per-file-ignores]\n"tests/**" = ["ALL"]\n')
    write(tmp_path, "src/m.py", body)
    write(tmp_path, "tests/t.py", body)
    write(tmp_path, "gen/g.py", body)
    out = run(LintRequest(paths=[str(tmp_path)], cache=False))
    assert {(Path(f.location.path).name, f.code) for f in out.findings} == {("m.py", "TFP102")}
    out = run(LintRequest(paths=[str(tmp_path)], select=["TFP101"], cache=False))
    assert out.findings == []  # TFP101 selected but ignored by config: ignore wins at equal length
    write(tmp_path, "pyproject.toml", "[tool.tfperf.lint]\nselct = ['TFP1']\n")
    assert main(["lint", str(tmp_path)]) == 2
    assert "selct" in capsys.readouterr().err


def test_cache_skips_unchanged_files(tmp_path):
    p = write(tmp_path, "m.py", LOOP.format(noqa=""))
    req = LintRequest(paths=[str(tmp_path)], cache_dir=tmp_path / "cache")
    first = run(req)
    second = run(req)
    assert (first.analysed, second.analysed, second.cache_hits) == (1, 0, 1)
    assert [f.to_dict() for f in first.findings] == [f.to_dict() for f in second.findings]
    p.write_text(LOOP.format(noqa="  # noqa"))
    third = run(req)
    assert third.analysed == 1 and "TFP102" not in codes(third.findings)
    assert run(LintRequest(paths=[str(tmp_path)], cache=False)).analysed == 1


def test_a_warm_run_reads_no_unchanged_file_but_sees_every_change(tmp_path, monkeypatch):
    import os
    import time

    src = tmp_path / "src"
    old = [write(src, f"m{i}.py", LOOP.format(noqa="") + f"# file {i}\n") for i in range(2)]
    past = time.time() - 60
    for p in old:
        os.utime(p, (past, past))  # older than the racy window: their stat is recorded
    fresh = write(src, "new.py", LOOP.format(noqa="") + "# new\n")  # just written: racy
    req = LintRequest(paths=[str(src)], cache_dir=tmp_path / "cache")
    assert run(req).analysed == 3
    read: list[str] = []
    real_read = Path.read_bytes

    def spy(self):
        read.append(self.name)
        return real_read(self)

    monkeypatch.setattr(Path, "read_bytes", spy)
    warm = run(req)
    assert (warm.analysed, warm.cache_hits) == (0, 3)
    assert read == ["new.py"]  # the racy file is read again; the others are known by stat
    read.clear()
    old[0].write_text(LOOP.format(noqa="  # noqa") + "# file 0\n")  # a real edit: new stat
    os.utime(old[0], (past + 1, past + 1))
    after = run(req)
    assert after.analysed == 1 and read.count("m0.py") >= 1
    assert "m0.py" not in {Path(f.location.path).name for f in after.findings
                           if f.code == "TFP102"}
    assert fresh.exists()


def test_keys_made_by_workers_on_a_cold_run_equal_the_keys_made_from_the_bytes(tmp_path):
    import os
    import time

    src = tmp_path / "src"
    files = [write(src, f"m{i:02d}.py", LOOP.format(noqa="") + f"# file {i}\n")
             for i in range(30)]
    req = LintRequest(paths=[str(src)], cache_dir=tmp_path / "cache", jobs=2)
    cold = run(req)  # empty cache: each worker keys the files it reads
    assert (cold.analysed, cold.workers) == (30, 2)
    later = time.time() - 30
    for p in files:
        os.utime(p, (later, later))  # no stat record matches: keys are made from the bytes
    warm = run(req)
    assert (warm.analysed, warm.cache_hits) == (0, 30)
    assert [f.to_dict() for f in warm.findings] == [f.to_dict() for f in cold.findings]


def test_cache_packs_survive_damage_and_are_merged(tmp_path, monkeypatch):
    from tfperf.lint import cache as cache_mod

    src = tmp_path / "src"
    for i in range(3):
        write(src, f"m{i}.py", LOOP.format(noqa="") + f"# file {i}\n")  # distinct contents
    req = LintRequest(paths=[str(src)], cache_dir=tmp_path / "cache")
    first = run(req)
    packs = sorted((tmp_path / "cache" / "packs").glob("*.jsonl"))
    assert first.analysed == 3 and len(packs) == 1  # one write per run, not one per file
    assert (tmp_path / "cache" / ".gitignore").read_text().endswith("*\n")
    lines = packs[0].read_text().splitlines()
    packs[0].write_text("\n".join(["{not json", *lines[1:]]) + "\n")  # one entry damaged
    second = run(req)
    assert (second.analysed, second.cache_hits) == (1, 2)
    assert codes(second.findings) == codes(first.findings)
    monkeypatch.setattr(cache_mod, "MAX_PACKS", 2)
    for i in range(3):  # each run changes one file: a new pack each time, then a merge
        write(src, f"m{i}.py", LOOP.format(noqa="") + f"# edit {i}\n")
        assert run(req).analysed == 1
    assert len(list((tmp_path / "cache" / "packs").glob("*.jsonl"))) <= 2
    again = run(req)
    assert (again.analysed, again.cache_hits) == (0, 3)


def test_workers_give_the_same_findings(tmp_path):
    for i in range(30):
        write(tmp_path, f"m{i:02d}.py", LOOP.format(noqa="" if i % 2 else "  # noqa"))
    write(tmp_path, "broken.py", "def (\n")
    one = run(LintRequest(paths=[str(tmp_path)], cache=False, jobs=1))
    two = run(LintRequest(paths=[str(tmp_path)], cache=False, jobs=2))
    assert two.workers == 2 and one.workers == 1
    assert [f.to_dict() for f in one.findings] == [f.to_dict() for f in two.findings]
    assert codes(one.findings).count("TFP000") == 1


def test_files_streamed_to_workers_during_discovery_keep_order_and_errors(tmp_path):
    from tfperf.lint.session import CHUNK

    n = 2 * CHUNK + 5  # two full chunks sent while the walk goes on, then the rest
    for i in range(n):
        write(tmp_path / f"d{i % 3}", f"m{i:02d}.py",
              LOOP.format(noqa="") if i % 4 else "x = 1\n")
    one = run(LintRequest(paths=[str(tmp_path)], cache=False, jobs=1))
    two = run(LintRequest(paths=[str(tmp_path)], cache=False, jobs=2))
    assert (one.files, two.files, two.analysed, two.workers) == (n, n, n, 2)
    assert [f.to_dict() for f in one.findings] == [f.to_dict() for f in two.findings]
    # A bad path after a directory whose files already went to the workers: the same
    # clear error as when the walk came first.
    with pytest.raises(ValueError, match="no such file"):
        run(LintRequest(paths=[str(tmp_path), str(tmp_path / "missing.py")], cache=False,
                        jobs=2))


def test_pre_commit_hooks_run_real_lint_commands(tmp_path):
    text = (Path(__file__).resolve().parents[2] / ".pre-commit-hooks.yaml").read_text()
    entries = [line.split(":", 1)[1].strip() for line in text.splitlines()
               if line.strip().startswith("entry:")]
    assert entries and all(e.startswith("tfperf lint") for e in entries)
    p = write(tmp_path, "m.py", "x = 1\n")
    for entry in entries:  # pre-commit appends the staged file names
        assert main([*entry.split()[1:], "--no-cache", str(p)]) == 0


class _Spy(Rule):
    """Records which calls the engine hands it."""

    code, name, message = "TFP990", "spy", "spy"
    node_types = (ast.Call,)

    def __init__(self) -> None:
        self.seen: list[str] = []

    def check(self, node, ctx):
        self.seen.append(ast.unparse(node.func))
        return ()


def test_call_filters_hand_a_rule_only_its_calls_aliases_included():
    src = ("import tensorflow as tf\nfrom tensorflow import transpose as T\n"
           "def f(x, xs):\n    xs.append(x)\n    y = tf.transpose(x)\n    z = T(y)\n"
           "    g(x)\n    return tf.abs(z)\n")
    by_name, by_api, plain = _Spy(), _Spy(), _Spy()
    by_name.callee_names = frozenset({"append", "g"})
    by_api.callee_qualnames = frozenset({"tensorflow.transpose"})
    Dispatcher([by_name, by_api, plain]).run(ast.parse(src), src, "t.py")
    assert by_name.seen == ["xs.append", "g"]
    assert sorted(by_api.seen) == ["T", "tf.transpose"]
    assert sorted(plain.seen) == sorted(["xs.append", "tf.transpose", "T", "g", "tf.abs"])


def test_requires_imports_skips_modules_without_them():
    spy = _Spy()
    spy.requires_imports = frozenset({"tensorflow"})
    keras_only = "import keras\nkeras.ops.abs(1)\n"
    Dispatcher([spy]).run(ast.parse(keras_only), keras_only, "k.py")
    assert spy.seen == []
    inner = "def f():\n    import tensorflow.compat.v1 as tf\n    return tf.abs(1)\n"
    Dispatcher([spy]).run(ast.parse(inner), inner, "t.py")
    assert spy.seen == ["tf.abs"]


class _GatedSpy(_Spy):
    def applies_to(self, ctx):
        return ctx.spells_tf_function


@pytest.mark.parametrize("src, runs", [
    ("import tensorflow as tf\ntf.abs(1)\n", False),
    ("import tensorflow as tf\nf = tf.function(g)\n", True),
    ("from tensorflow import function as tff\ntff(g)\n", True),
    ("from tensorflow.compat import v1\nv1.function(g)\n", True),
])
def test_applies_to_gates_a_rule_once_per_module(src, runs):
    spy = _GatedSpy()
    Dispatcher([spy]).run(ast.parse(src), src, "m.py")
    assert bool(spy.seen) is runs


@pytest.mark.parametrize("src, tf_fn, traced", [
    ("import tensorflow as tf\ndef f(x):\n    return x\n", False, False),
    ("import keras\nclass L(keras.layers.Layer):\n    def call(self, x):\n        return x\n",
     True, True),
    ("import tensorflow as tf\nds = tf.data.Dataset.range(3).map(lambda x: x)\n", False, True),
    ("import tensorflow as tf\nds = make(map_func=lambda x: x)\n", False, True),
])
def test_module_gates_of_traced_code(src, tf_fn, traced):
    from tfperf.lint.semantic import Context
    ctx = Context(ast.parse(src), src)
    assert (ctx.may_have_tf_function, ctx.may_trace) == (tf_fn, traced)


def test_a_call_filter_keeps_aliased_spellings_of_its_apis():
    """TFP706 is handed only calls that may resolve to a queue batch (its call filter): an
    alias whose name still says "batch", and one assigned, are among them as before."""
    rule = registry.get("TFP706")
    source = '''
import tensorflow as tf
from tensorflow.train import shuffle_batch as my_batch

def inputs(image, label):
    image = tf.image.random_brightness(image, max_delta=63)
    return my_batch([image, label], batch_size=128, capacity=1000, min_after_dequeue=500)

queue_batch = tf.train.batch

def more(image, label):
    image = tf.image.random_flip_left_right(image)
    return queue_batch([image, label], batch_size=128)
'''
    found = [f.location.line for f in lint_source(source, rules=[rule])]
    assert found == [7, 13]
