"""--apply writes only the file named on the command line, and only the text that was measured
(issue 24): the cache is keyed by the file's path and the function's name, a result read back
is re-targeted to the file asked for, a function of another file or a file changed since it
was measured is refused, and whatever the file system refuses is one line and exit 2.

The CLI runs the real search with one planted lever (``discover`` replaced): dropping a loop
of 40 no-op eager multiplies, 40 ops against none, so the pick is certain on a loaded machine
and the search ends after one candidate."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

tf = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.tf

from planted import Planted  # noqa: E402  (tests/tune/planted.py)

from tfperf.cli import main  # noqa: E402
from tfperf.tune import search  # noqa: E402

SOURCE = textwrap.dedent('''\
    import tensorflow as tf
    import tfperf


    @tfperf.inputs
    def make():
        return (tf.random.stateless_normal([16, 8], seed=[1, 2]),)


    def f(x):
        y = x
        for _ in range(40):
            y = y * 1.0
        return y
    ''')
LOOP = "    for _ in range(40):\n        y = y * 1.0\n"
BUDGET = "3"


@pytest.fixture
def drop_loop(monkeypatch):
    """The CLI's search discovers only the planted lever; ``edits`` runs while it builds."""
    edits: list = []

    class DropLoop(Planted):
        def build(self, text, ctx):
            for edit in edits:
                edit()
            return super().build(text, ctx)

    monkeypatch.setattr(search, "discover",
                        lambda ctx: [DropLoop("planted: drop the loop", LOOP, "")])
    return edits


def _tune(capsys, path: Path, *more: str) -> tuple[int, str, str]:
    rc = main(["tune", f"{path}:f", "--budget", BUDGET, *more])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_the_cache_never_sends_a_patch_to_another_file(tmp_path, capsys, drop_loop):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    g1, g2, copy = tmp_path / "a" / "g1.py", tmp_path / "a" / "g2.py", tmp_path / "b" / "g1.py"
    for p in (g1, g2, copy):
        p.write_text(SOURCE)
    rc, out, _ = _tune(capsys, g1)
    assert rc == 0 and "* planted: drop the loop" in out, out
    # The same text in another file: measured for that file, patched there, g1 untouched.
    rc, out, err = _tune(capsys, g2, "--apply", "--diff")
    assert rc == 0, err
    assert f"--- {g2.resolve()}" in out and "g1.py" not in out  # outside cwd: absolute
    assert f"{g2}: patched (planted: drop the loop)" in err
    assert LOOP not in g2.read_text() and g1.read_text() == SOURCE
    # A copy of g1 in another folder is its own file too (not "already applied" to g1).
    rc, _, err = _tune(capsys, copy, "--apply")
    assert rc == 0 and f"{copy}: patched" in err and LOOP not in copy.read_text()
    assert g1.read_text() == SOURCE
    # The cache still serves the same file: a hit, re-targeted to it.
    rc, out, err = _tune(capsys, g1, "--apply")
    assert rc == 0 and "cached" in out.splitlines()[0] and f"{g1}: patched" in err
    assert LOOP not in g1.read_text()


def test_apply_refuses_a_function_of_another_file(tmp_path, capsys, drop_loop):
    helpers = tmp_path / "helpers_for_apply.py"
    helpers.write_text(SOURCE)
    named = tmp_path / "main_mod.py"
    named.write_text("import tensorflow as tf\nimport tfperf\n"
                     "from helpers_for_apply import f, make\n\ntfperf.inputs(make)\n")
    rc, _, err = _tune(capsys, named, "--apply")
    assert rc == 2 and "Traceback" not in err
    assert err.strip().splitlines()[-1] == (
        f"tfperf tune: error: {named}: f was measured in {helpers}, not in this file: --apply "
        f"writes only the file it measured; tune {helpers}:f to patch that one")
    assert helpers.read_text() == SOURCE


def test_apply_refuses_a_file_changed_while_it_was_measured(tmp_path, capsys, drop_loop):
    path = tmp_path / "edited.py"
    path.write_text(SOURCE)
    edited = SOURCE + "\n# the user's edit, saved during the search\n"
    drop_loop.append(lambda: path.write_text(edited))
    rc, _, err = _tune(capsys, path, "--apply")
    assert rc == 2 and "Traceback" not in err
    assert err.strip().splitlines()[-1] == \
        f"tfperf tune: error: {path} changed since it was tuned: run tfperf tune again"
    assert path.read_text() == edited


def test_what_the_file_system_refuses_is_one_line_and_exit_2(tmp_path, capsys, drop_loop,
                                                           monkeypatch):
    import tfperf.tune.patch as patch

    gone = tmp_path / "gone.py"
    gone.write_text(SOURCE)
    drop_loop.append(lambda: gone.unlink(missing_ok=True))
    rc, _, err = _tune(capsys, gone, "--apply")
    assert rc == 2 and "Traceback" not in err
    assert err.strip().splitlines()[-1] == (f"tfperf tune: error: {gone}: cannot read it to apply "
                                            "the patch: No such file or directory")
    drop_loop.clear()
    # An unwritable file (tests run as root, where permission bits do not stop a write:
    # the refusal is planted where the write happens, as the OS would raise it).

    def refuse(path, text, **kw):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(patch, "write_text_atomically", refuse)
    locked = tmp_path / "locked.py"
    locked.write_text(SOURCE)
    rc, _, err = _tune(capsys, locked, "--apply", "--no-cache")
    assert rc == 2 and "Traceback" not in err
    assert err.strip().splitlines()[-1] == \
        f"tfperf tune: error: {locked}: not patched: Permission denied"
    assert locked.read_text() == SOURCE


def test_the_patch_names_the_file_from_the_working_directory(tmp_path, capsys, drop_loop,
                                                             monkeypatch):
    # stop 44, a new user in a repository: `tune pkg/utils.py:f --diff` said `--- a/utils.py`,
    # which `git apply` from the root could not find, or applied to a ./utils.py
    import re
    import shutil
    import subprocess

    (tmp_path / "pkg").mkdir()
    inner, root = tmp_path / "pkg" / "utils.py", tmp_path / "utils.py"
    inner.write_text(SOURCE)
    root.write_text(SOURCE)
    monkeypatch.chdir(tmp_path)
    rc, out, err = main(["tune", "pkg/utils.py:f", "--budget", BUDGET, "--diff"]), *(
        capsys.readouterr())
    assert rc == 0, err
    start = re.search(r"^--- \S", out, re.M)  # the diff, not the table's rule
    assert start, out
    patch = out[start.start():]
    assert patch.startswith("--- a/pkg/utils.py\n+++ b/pkg/utils.py\n"), patch
    if shutil.which("patch") is None:  # the header above is the check
        return
    done = subprocess.run(["patch", "-p1", "--forward"], input=patch, text=True,
                          capture_output=True, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert LOOP not in inner.read_text() and root.read_text() == SOURCE
