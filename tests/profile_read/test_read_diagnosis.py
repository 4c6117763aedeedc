"""`tfperf profile --read` on broken or odd captures: the cause first, with its fix."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tfperf.cli import main
from tfperf.profile.read.report import read


def test_corpus_is_large_enough(corpus):
    assert len(corpus) >= 10


def test_the_cause_is_named_first(corpus):
    named = {}
    for label, (path, cause) in corpus.items():
        report = read(path)
        first = report.diagnosis[0] if report.diagnosis else None
        named[label] = (first.data.get("cause") if first else None, cause)
        assert first is None or first.hint or first.data["cause"] == "host_only", label
    wrong = {k: v for k, v in named.items() if v[0] != v[1]}
    assert not wrong, wrong


def test_broken_captures_exit_1_and_keep_their_files(corpus, capsys):
    for label, (path, _cause) in corpus.items():
        before = {p: p.read_bytes() for p in path.rglob("*") if p.is_file()} \
            if path.is_dir() else {path: path.read_bytes()}
        assert main(["profile", "--read", str(path)]) == 1, label
        after = {p: p.read_bytes() for p in before}
        assert after == before, label
    assert "Traceback" not in capsys.readouterr().err


def test_a_clean_capture_exits_0_with_steps_and_ops(capture_of, capsys):
    run_folder = capture_of("graph").parent
    assert main(["profile", "--read", str(run_folder)]) == 0
    out = capsys.readouterr().out
    assert "6 step(s) from step markers" in out and "MatMul" in out


def test_json_has_the_figures(capture_of, capsys):
    assert main(["profile", "--read", str(capture_of("graph")), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (cap,) = doc["captures"]
    assert cap["steps"] == 6 and cap["step_source"] == "step markers"
    assert {o["type"] for o in cap["top_ops"]} >= {"MatMul", "Relu", "Softmax", "Sum"}
    (bd,) = cap["breakdown"]
    # Op time is summed over the host's inter-op threads (one per core at most), and each op's
    # span stretches when a busy machine preempts it: under two busy loops on 2 cores it read
    # 1.18x the step once. So the bound is the core count, as for XLA:CPU in test_read_vs_xprof.
    workers = max(1, os.cpu_count() or 1)
    assert bd["where"] == "/host:CPU" and 0 < bd["compute_s"] <= bd["duration_s"] * workers
    assert doc["diagnosis"][0]["data"]["cause"] == "host_only"


def test_input_bound_and_retrace_verdicts_as_for_tfperfs_own_captures(capture_of):
    found = {f.code: f for f in read(capture_of("input")).verdicts}
    assert found["profile.input_bound"].data["threshold"] == "> 20 %"
    # a capture records no TF version: the advice is not the reading machine's TF's (this
    # process runs 2.21) nor the oldest's (a CLI --read imports none), it names the line
    hint = found["profile.input_bound"].hint
    assert "on TF before 2.12 also end the pipeline with .prefetch" in hint
    retrace = {f.code: f for f in read(capture_of("retrace")).verdicts}["profile.retrace"]
    assert retrace.data["traces"] >= 5


def test_several_runs_read_the_newest_and_say_so(capture_of, tmp_path):
    import shutil

    for run in ("2026_01_01_00_00_00", "2026_01_02_00_00_00"):
        dest = tmp_path / "plugins" / "profile" / run
        dest.mkdir(parents=True)
        shutil.copy(capture_of("graph" if run.endswith("1_00_00_00_00") else "xla"), dest)
    report = read(tmp_path)
    assert report.files[0].count("2026_01_02") == 1
    assert report.diagnosis[0].data["cause"] == "several_runs"


@pytest.mark.parametrize("argv", [
    ["profile", "--read", "/no/such/capture"],
    ["profile", "--compare", "/no/such/a", "/no/such/b"],
    ["profile", "train.py", "--read", "x"],
])
def test_bad_input_is_one_line_and_exit_2(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(("more", "named"), [
    (["--plot", "{tmp}/p.png"], "--plot"),
    (["--steps", "3", "--quick"], "--steps, --quick"),
    (["--try-fixes"], "--try-fixes"),
])
def test_a_runs_options_with_read_are_refused_not_dropped(capture_of, tmp_path, capsys, more,
                                                          named):
    """`--read X --plot out.png` used to print the report, exit 0 and draw nothing."""
    argv = ["profile", "--read", str(capture_of("graph"))] + [a.format(tmp=tmp_path)
                                                              for a in more]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"tfperf profile: error: {named}: for a run") and "Traceback" not in err
    assert not (tmp_path / "p.png").exists()
    # the valid twin: --json applies to --read
    assert main(["profile", "--read", str(capture_of("graph")), "--json"]) in (0, 1)


def test_reading_never_imports_tensorflow(capture_of):
    code = ("import sys; from tfperf.cli import main; rc = main(['profile', '--read', "
            f"{str(capture_of('graph'))!r}, '--json']); "
            "assert 'tensorflow' not in sys.modules, 'tensorflow imported'; "
            "assert not [m for m in sys.modules if m.startswith('google.protobuf')]; "
            "sys.exit(rc)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
