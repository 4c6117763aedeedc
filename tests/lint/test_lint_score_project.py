"""score.py's project mode: a fix whose cause only a caller in another file reveals.

A planted repository (real git, real `tfperf lint` subprocesses): `steps.py` holds a
`tf.function`, `train.py` calls it every epoch with a Python float. The fix gives the
function an input signature and passes a tensor. Linted alone, the changed `steps.py` shows
nothing (file mode misses the row); linted as one project, TFP301 lands on the changed call
in `train.py`, a file of the fix's diff (project mode credits it). A fix that changes only
`steps.py` leaves the same finding outside its diff: not credited. A fix that changes only
the caller is credited too: `train.py`, named inside its tree, is modelled with the module
it imports (and with `--whole-tree`, the whole tree is linted).
"""

from __future__ import annotations

import ast
import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

import tfperf

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "lint_fixes"))
import fixset
import materialize
import project_score
import score

STEPS = """\
import tensorflow as tf


@tf.function
def train_step(x, scale):
    return tf.reduce_sum(x) * scale
"""
STEPS_FIXED = STEPS.replace("@tf.function\n",
                            "@tf.function(input_signature=[tf.TensorSpec([None]), "
                            "tf.TensorSpec([])])\n")
STEPS_COMMENTED = STEPS.replace("    return", "    # the sum, scaled\n    return")
TRAIN = """\
import tensorflow as tf

from steps import train_step


def main():
    x = tf.ones([4])
    for epoch in range(100):
        scale = 1.0 / (epoch + 1)
        train_step(x, scale)
"""
TRAIN_FIXED = TRAIN.replace("train_step(x, scale)", "train_step(x, tf.constant(scale))")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def _commit(repo: Path, files: dict[str, str], message: str) -> str:
    for name, text in files.items():
        (repo / name).write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", message)
    return _git(repo, "rev-parse", "HEAD")


def _row(rid: str, before: str, after: str, before_lines: str, after_lines: str,
         path: str = "steps.py") -> fixset.FixRow:
    return fixset.FixRow(id=rid, repo="planted/proj", before=before, after=after,
                         path=path, after_path="", before_lines=before_lines,
                         after_lines=after_lines, kind="retrace from a caller", style="tf2",
                         form="research", why="w", after_expect="clean", tf_version="2.15",
                         tf_version_source="planted")


@pytest.fixture(scope="module")
def planted(tmp_path_factory) -> tuple[Path, list[fixset.FixRow]]:
    mirror = tmp_path_factory.mktemp("mirror")
    repo = mirror / "planted+proj" / "repo"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q")
    base = _commit(repo, {"steps.py": STEPS, "train.py": TRAIN}, "base")
    fix = _commit(repo, {"steps.py": STEPS_FIXED, "train.py": TRAIN_FIXED}, "fix")
    _git(repo, "checkout", "-q", base)
    comment = _commit(repo, {"steps.py": STEPS_COMMENTED}, "comment only")
    _git(repo, "checkout", "-q", base)
    caller = _commit(repo, {"train.py": TRAIN_FIXED}, "the caller alone passes a tensor")
    rows = [_row("P1", base, fix, "4-4", "4-4"),    # the decorator line; train.py changes too
            _row("P2", base, comment, "6-6", "6-7"),  # steps.py alone: the call stays
            _row("P5", base, caller, "10-10", "10-10", path="train.py")]  # callee unchanged
    return mirror, rows


@pytest.fixture(scope="module")
def tree_src() -> Path:
    src = Path(tfperf.__file__).resolve().parents[1]
    score.use_src(src)  # lint with the tfperf under test, not whatever the env names
    return src


def _project(mirror: Path, rows: list[fixset.FixRow], tmp: Path, whole: bool = False
             ) -> list[project_score.ProjectRowScore]:
    def lint(paths: list[Path], extra: list[str], version: str) -> list[dict]:
        return score.run_lint(paths, extra, sys.executable, version)

    return project_score.score_project(rows, mirror, {"default": []}, lint, 0,
                                       score.target_setting, work=tmp, log=lambda m: None,
                                       whole=whole)["default"]


def test_the_diff_lists_every_changed_python_file(planted):
    mirror, rows = planted
    gdir = fixset.git_dir(mirror, "planted/proj")
    fix = project_score.diff_files(gdir, rows[0])
    assert [(c.before_path, c.after_path) for c in fix] == [("steps.py", "steps.py"),
                                                            ("train.py", "train.py")]
    assert fix[1].before_spans == [(0, 10, 10)] and fix[1].after_spans == [(0, 10, 10)]
    assert [c.before_path for c in project_score.diff_files(gdir, rows[1])] == ["steps.py"]


def test_a_tree_is_written_with_a_root_marker_and_only_python_files(planted, tmp_path):
    mirror, rows = planted
    gdir = fixset.git_dir(mirror, "planted/proj")
    assert not project_score.write_tree(gdir, rows[0].before, tmp_path / "t", [])
    assert sorted(p.name for p in (tmp_path / "t").iterdir()) == [".git", "steps.py",
                                                                  "train.py"]
    assert (tmp_path / "t" / "train.py").read_text() == TRAIN


def test_a_cause_in_a_caller_is_credited_in_project_mode_only(planted, tree_src, tmp_path):
    mirror, rows = planted
    out = tmp_path / "fixes"
    manifest = materialize.materialize(rows, mirror, out)
    per_file = score.score(rows, out, manifest, [], sys.executable, 0)
    assert [s.hit for s in per_file] == [False, False, False]

    for whole in (False, True):
        fix, comment, caller = _project(mirror, rows, tmp_path, whole)
        assert fix.hit and fix.hit_codes == ["TFP301"], whole
        assert fix.before.by_file == {"steps.py": set(), "train.py": {"TFP301"}}
        assert not fix.flagged and not fix.too_big
        # The same finding, outside the lines the comment-only change touched: not credited.
        assert not comment.hit and comment.before.codes == set()
        # Only the caller changed: its module, named inside the tree, sees the tf.function.
        assert caller.hit and caller.before.by_file == {"train.py": {"TFP301"}}, whole


def test_an_after_tree_still_firing_on_changed_lines_is_flagged(planted, tree_src, tmp_path):
    mirror, rows = planted
    repo = mirror / "planted+proj" / "repo"
    _git(repo, "checkout", "-q", rows[0].before)
    half = _commit(repo, {"steps.py": STEPS_FIXED,
                          "train.py": TRAIN.replace("scale = 1.0", "scale = 2.0")},
                   "signature only; the caller still passes a float")
    (row,) = _project(mirror, [_row("P3", rows[0].before, half, "4-4", "4-4")], tmp_path)
    assert row.after.by_file["train.py"] == set()  # line 9 changed, the call on 10 did not
    assert not row.line_codes and not row.flagged
    # The signature alone stops the retrace: the caller's finding goes (stop 44's credit).
    assert row.hit_codes == ["TFP301"] and row.call_only

    _git(repo, "checkout", "-q", rows[0].before)
    moved = _commit(repo, {"train.py": TRAIN.replace("train_step(x, scale)",
                                                     "train_step(x * 1.0, scale)")},
                    "the call changes; still a float, still no signature")
    (row,) = _project(mirror, [_row("P4", rows[0].before, moved, "4-4", "4-4")], tmp_path)
    assert row.after.by_file["train.py"] == {"TFP301"}
    assert row.flagged and not row.hit


def test_src_must_name_a_tfperf_tree(tmp_path):
    with pytest.raises(SystemExit, match="no tfperf package"):
        score.use_src(tmp_path)


# ---- review 43 --------------------------------------------------------------------------

def test_a_row_id_is_never_a_path(planted, tree_src, tmp_path):
    """The temp folders are named by the row's position: an id like `../../keep` wrote and
    then removed a folder outside the work folder."""
    mirror, rows = planted
    work = tmp_path / "work"  # the temp folder is work/tfperf-project-*/: ../../keep is here
    work.mkdir()
    keep = tmp_path / "keep"
    keep.mkdir()
    (keep / "user.txt").write_text("mine")
    odd = dataclasses.replace(rows[0], id="../../keep")
    (row,) = project_score.score_project([odd], mirror, {"default": []},
                                         lambda p, e, v: score.run_lint(p, e, sys.executable, v),
                                         0, score.target_setting, work=work,
                                         log=lambda m: None)["default"]
    assert row.hit_codes == ["TFP301"]
    assert (keep / "user.txt").read_text() == "mine"
    assert list(work.iterdir()) == []  # and nothing left behind


def test_a_row_whose_trees_cannot_be_written_is_said_and_scored_as_no_finding(
        planted, tree_src, tmp_path):
    """A commit or path missing from the snapshot was a traceback ending the whole run
    (after minutes of scoring); now the row is said, scored as no finding and named."""
    mirror, rows = planted
    logged: list[str] = []
    gone = dataclasses.replace(rows[0], id="PX", after="0" * 40)
    lost = dataclasses.replace(rows[0], id="PY", path="not_there.py")
    work = tmp_path / "work"
    work.mkdir()
    scores = project_score.score_project(
        [gone, lost, rows[0]], mirror, {"default": []},
        lambda p, e, v: score.run_lint(p, e, sys.executable, v), 0, score.target_setting,
        work=work, log=logged.append)["default"]
    assert [(s.row.id, s.hit, bool(s.failed)) for s in scores] == [
        ("PX", False, True), ("PY", False, True), (rows[0].id, True, False)]
    assert any(m.startswith("PX ") and "scored as no finding" in m for m in logged)
    assert any(m.startswith("PY ") for m in logged)
    assert list(work.iterdir()) == []


def test_a_renamed_file_that_does_not_parse_after_is_reported():
    """Before: a parse error counted on the after side only where the file kept its name."""
    moved = project_score.Changed("old.py", "new.py", [(0, 1, 1)], [(0, 1, 1)])
    stays = project_score.Changed("same.py", "same.py", [(0, 1, 1)], [(0, 1, 1)])
    for ch, path in ((moved, "new.py"), (stays, "same.py")):
        side = project_score._side([{"path": path, "code": "TFP000", "line": 1}], [ch],
                                   "after", 0)
        assert side.parse_error and side.by_file == {ch.before_path: set()}, path
    # Twin: a parse error in a file outside the diff is not the row's.
    side = project_score._side([{"path": "other.py", "code": "TFP000", "line": 1}], [moved],
                               "after", 0)
    assert not side.parse_error


def test_a_file_the_fix_deletes_is_not_credited():
    """A deleted file loses every finding: no sign the rule saw the fix (F127 of fixes.csv
    was credited by loops in a module its commit deleted, for an AUTOTUNE fix elsewhere)."""
    row = _row("PD", "a", "b", "4-4", "4-4")
    before = project_score.ProjectSide(by_file={"steps.py": set(), "gone.py": {"TFP101"}})
    after = project_score.ProjectSide(by_file={"steps.py": set()})  # gone.py: deleted
    assert not project_score.ProjectRowScore(row, before, after).hit
    # Twin: the same file kept, its changed lines clean after: credited.
    kept = project_score.ProjectSide(by_file={"steps.py": set(), "gone.py": set()})
    assert project_score.ProjectRowScore(row, before, kept).hit_codes == ["TFP101"]


# ---- stop 44: a finding at a use of a function the fix changed --------------------------

def test_a_fix_inside_the_called_function_is_credited_at_its_caller(planted, tree_src,
                                                                    tmp_path):
    """The fix gives `train_step` an input signature and leaves `train.py` alone: TFP301 is
    reported at the caller ("scale passed to train_step of steps.py"), outside the diff, and
    goes with the fix. Credited at the call site; the changed-lines credit alone misses it."""
    mirror, rows = planted
    repo = mirror / "planted+proj" / "repo"
    _git(repo, "checkout", "-q", rows[0].before)
    sig = _commit(repo, {"steps.py": STEPS_FIXED}, "signature only")
    (row, comment) = _project(mirror, [_row("P6", rows[0].before, sig, "4-4", "4-4"),
                                       rows[1]], tmp_path)
    assert row.before.by_file == {"steps.py": set()} and not row.line_codes
    assert row.before.calls == {("TFP301", "train_step", "train.py")}
    assert row.after.calls == set()
    assert row.hit_codes == ["TFP301"] and row.call_only and not row.flagged
    # Twin: a comment inside `train_step` changes it too, but the caller's finding stays.
    assert comment.before.calls == comment.after.calls == {
        ("TFP301", "train_step", "train.py")}
    assert not comment.hit and not comment.call_only


def test_changed_functions_are_the_defs_around_the_changed_lines():
    src = ("import tf\n"                       # 1
           "@deco\n"                            # 2
           "def outer(x):\n"                    # 3
           "    def inner(y):\n"                # 4
           "        return y\n"                 # 5
           "    return inner(x)\n"              # 6
           "class M:\n"                         # 7
           "    def __init__(self):\n"          # 8
           "        self.a = 1\n"               # 9
           "    def step(self):\n"              # 10
           "        return 2\n")                # 11
    tree = ast.parse(src)
    assert project_score._defs_touched(tree, [(0, 5, 5)]) == {"outer", "inner"}
    assert project_score._defs_touched(tree, [(0, 2, 2)]) == {"outer"}  # a decorator line
    assert project_score._defs_touched(tree, [(0, 11, 11)]) == {"step"}
    # Twins: a module-level line names nothing; a dunder is too common to name a caller.
    assert project_score._defs_touched(tree, [(0, 1, 1)]) == set()
    assert project_score._defs_touched(tree, [(0, 9, 9)]) == set()


def test_a_call_finding_must_name_a_changed_function_at_a_line_that_spells_it(tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)
    at_call = {"path": "train.py", "code": "TFP301", "line": 10, "end_line": 10,
               "message": "... (scale passed to train_step of steps.py)"}
    assert project_score.call_findings([at_call], {"train_step"}, tmp_path) == {
        ("TFP301", "train_step", "train.py")}
    # Twins: another function changed; the name only in the message, not on the line
    # (line 9 is `scale = ...`); a longer name that merely contains it.
    assert project_score.call_findings([at_call], {"eval_step"}, tmp_path) == set()
    off_line = {**at_call, "line": 9, "end_line": 9}
    assert project_score.call_findings([off_line], {"train_step"}, tmp_path) == set()
    assert project_score.call_findings([at_call], {"step"}, tmp_path) == set()


def test_caller_files_are_those_that_spell_a_changed_name(tmp_path):
    (tmp_path / "steps.py").write_text(STEPS)
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "other.py").write_text("def train_steps():\n    return 1\n")
    assert project_score.caller_files(tmp_path, {"train_step"}, {"steps.py"}) == (
        ["train.py"], 1)
    assert project_score.caller_files(tmp_path, set(), set()) == ([], 0)


def test_a_call_credit_needs_the_function_still_spelled_after():
    """A fix that renames or removes the function loses the caller's finding whatever the
    rule saw (as a deleted file does): not credited."""
    row = _row("PR", "a", "b", "4-4", "4-4")
    before = project_score.ProjectSide(by_file={"steps.py": set()},
                                       calls={("TFP301", "train_step", "train.py")})
    renamed = project_score.ProjectSide(by_file={"steps.py": set()}, spelled=set())
    assert not project_score.ProjectRowScore(row, before, renamed).hit
    kept = project_score.ProjectSide(by_file={"steps.py": set()}, spelled={"train_step"})
    assert project_score.ProjectRowScore(row, before, kept).hit_codes == ["TFP301"]


def test_call_findings_count_only_in_files_on_both_sides(tmp_path):
    """A diff file the fix deletes or renames loses its call-site findings whatever the
    rule saw: only files under one path on both sides are read for them."""
    for side in ("before", "after"):
        (tmp_path / side).mkdir()
        (tmp_path / side / "train.py").write_text(TRAIN)
    (tmp_path / "before" / "old.py").write_text(TRAIN)
    assert project_score.on_both_sides(tmp_path, "train.py")
    assert not project_score.on_both_sides(tmp_path, "old.py")



def test_a_call_credit_is_per_file():
    """Every agent of a tutorial repository has its own `learn`: a finding about another
    file's namesake that stays after the fix does not hide the one the fix made go, and one
    that stays in the same file is not credited."""
    row = _row("PF", "a", "b", "4-4", "4-4")
    before = project_score.ProjectSide(calls={("TFP703", "learn", "dqn/run.py"),
                                              ("TFP703", "learn", "ddpg/run.py")})
    after = project_score.ProjectSide(calls={("TFP703", "learn", "ddpg/run.py")},
                                      spelled={"learn"})
    assert project_score.ProjectRowScore(row, before, after).call_codes == {"TFP703"}
    same = project_score.ProjectSide(calls=set(before.calls), spelled={"learn"})
    assert not project_score.ProjectRowScore(row, before, same).call_codes



def test_a_message_names_a_function_only_as_code():
    names = {"train_step", "learn", "dataset"}
    assert project_score.named_as_code(
        "... (scale passed to train_step of steps.py)", names) == {"train_step"}
    assert project_score.named_as_code("ops built on every call of learn(), which", names) == {
        "learn"}
    assert project_score.named_as_code("the function `dataset` is ...", names) == {"dataset"}
    assert project_score.named_as_code("calls agent.learn() per step", names) == {"learn"}
    # Twins: the same words as prose; a longer name that ends with one.
    assert project_score.named_as_code("the dataset is re-read; learn more", names) == set()
    assert project_score.named_as_code("relearn() per step", names) == set()
