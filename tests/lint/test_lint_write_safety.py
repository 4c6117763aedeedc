"""`tfperf lint --fix` writes only as the user could have, and an OSError anywhere in lint's
command-line path is one line on stderr and exit 2, never a traceback (issue 24)."""

from __future__ import annotations

import json
import os
import stat

import pytest

from tfperf.cli import main

ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
root_only = pytest.mark.skipif(not ROOT, reason="making a file of another user needs root")
OTHER = (4242, 4343)  # a uid and gid no user here has

LOOP = ("import tensorflow as tf\n"
        "def f(x):\n"
        "    acc = tf.zeros([4])\n"
        "    for i in range(x.shape[0]):\n"
        "        acc += x[i]\n"
        "    return acc\n")
FIXED = "    acc += tf.reduce_sum(x, axis=0)\n"
FIX = ["lint", "--no-cache", "--fix", "--unsafe-fixes"]


def make(path, text=LOOP, mode=0o644, owner=None):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if owner is not None:
        os.chown(path, *owner)
    os.chmod(path, mode)
    return path


def errors_of(err: str) -> list[str]:
    assert "Traceback" not in err
    return [line for line in err.splitlines() if line.startswith("tfperf lint: error:")]


def test_a_read_only_file_is_refused_and_the_others_are_still_fixed(tmp_path, capsys):
    locked = make(tmp_path / "a_locked.py", mode=0o444)
    other = make(tmp_path / "b_other.py")
    rc = main([*FIX, str(locked), str(other)])
    out, err = capsys.readouterr()
    assert rc == 2
    assert locked.read_text() == LOOP and stat.S_IMODE(locked.stat().st_mode) == 0o444
    assert FIXED in other.read_text()
    [line] = errors_of(err)
    assert str(locked) in line and "read-only" in line
    assert "fixed 1" in out and "1 error" in out  # the report is still printed
    # The unwritten file's findings are those of the file as it is (line 5, col 9).
    assert f"{locked}:\n" in out and "5:9  TFP102" in out


@root_only
def test_fix_as_root_keeps_the_owner_of_another_users_file(tmp_path):
    f = make(tmp_path / "m.py", mode=0o664, owner=OTHER)
    assert main([*FIX, str(f)]) in (0, 1)
    st = f.stat()
    assert FIXED in f.read_text()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (*OTHER, 0o664)


def test_an_unwritable_folder_is_reported_and_the_files_after_it_are_fixed(
        shared_dir, unprivileged, capsys):
    # A file this user may not write, in a folder where the temporary file cannot be made
    # (as root the file is root's; a user's own file is made read-only), then a good file.
    locked = make(shared_dir / "a" / "m.py", mode=0o644 if ROOT else 0o444)
    (shared_dir / "a").chmod(0o555)
    good = make(shared_dir / "b" / "m.py", mode=0o666)
    (shared_dir / "b").chmod(0o777)
    with unprivileged():
        rc = main([*FIX, str(shared_dir / "a"), str(shared_dir / "b")])
    out, err = capsys.readouterr()
    assert rc == 2
    assert locked.read_text() == LOOP and FIXED in good.read_text()
    [line] = errors_of(err)
    assert line.startswith(f"tfperf lint: error: {locked}: not written: ")
    assert "fixed 1" in out


def test_a_writable_file_in_an_unwritable_folder_is_fixed_in_place(shared_dir, unprivileged,
                                                                   capsys):
    f = make(shared_dir / "a" / "m.py", mode=0o666)
    (shared_dir / "a").chmod(0o555)
    inode = f.stat().st_ino
    with unprivileged():
        rc = main([*FIX, str(f)])
    assert rc in (0, 1) and errors_of(capsys.readouterr().err) == []
    assert FIXED in f.read_text() and f.stat().st_ino == inode


def test_diff_writes_nothing_and_is_not_an_error_on_a_read_only_file(tmp_path, capsys):
    f = make(tmp_path / "m.py", mode=0o444)
    assert main(["lint", "--no-cache", "--diff", "--unsafe-fixes", str(f)]) in (0, 1)
    assert f.read_text() == LOOP and "+" + FIXED in capsys.readouterr().out


# ------------------------------------------------------------------ notebooks

def notebook(path, mode=0o644, owner=None):
    cells = [{"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [],
              "source": LOOP.splitlines(keepends=True)}]
    text = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5},
                      indent=1) + "\n"
    return make(path, text, mode, owner)


def test_a_read_only_notebook_is_refused(tmp_path, capsys):
    nb = notebook(tmp_path / "n.ipynb", mode=0o444)
    before = nb.read_text()
    assert main([*FIX, str(nb)]) == 2
    assert nb.read_text() == before
    [line] = errors_of(capsys.readouterr().err)
    assert "read-only" in line


@root_only
def test_fix_as_root_keeps_the_owner_of_another_users_notebook(tmp_path):
    nb = notebook(tmp_path / "n.ipynb", mode=0o600, owner=OTHER)
    assert main([*FIX, str(nb)]) in (0, 1)
    st = nb.stat()
    assert "tf.reduce_sum(x, axis=0)" in nb.read_text()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (*OTHER, 0o600)


# ------------------------------------------------------------------ OSError: one line, exit 2

def test_a_symlink_loop_is_one_line(tmp_path, capsys):
    loop = tmp_path / "loop.py"
    loop.symlink_to("loop.py")
    assert main(["lint", "--no-cache", str(loop)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.strip() == f"tfperf lint: error: {loop}: symlink loop"


def test_a_fifo_is_one_line_and_never_read(tmp_path, capsys):
    fifo = tmp_path / "pipe.py"
    os.mkfifo(fifo)
    assert main(["lint", "--no-cache", str(fifo)]) == 2
    assert capsys.readouterr().err.strip() == f"tfperf lint: error: {fifo}: not a file or folder"


def test_an_unreadable_file_is_one_line_and_the_others_are_linted(shared_dir, unprivileged,
                                                                 capsys):
    secret = make(shared_dir / "a.py", mode=0o600 if ROOT else 0o000)
    other = make(shared_dir / "b.py")
    with unprivileged():
        rc = main(["lint", "--no-cache", str(secret), str(other)])
    out, err = capsys.readouterr()
    assert rc == 2
    assert errors_of(err) == [f"tfperf lint: error: {secret}: cannot read: Permission denied"]
    assert f"{other}:" in out and "TFP102" in out  # the other file's report


def test_a_folder_without_read_permission_is_one_line(shared_dir, unprivileged, capsys):
    closed = shared_dir / "closed"
    make(closed / "m.py")
    closed.chmod(0o000)
    other = make(shared_dir / "open" / "m.py")
    with unprivileged():
        rc = main(["lint", "--no-cache", str(closed), str(other)])
        rc_inside = main(["lint", "--no-cache", str(closed / "m.py")])
    out, err = capsys.readouterr()
    assert rc == 2 and rc_inside == 2
    assert errors_of(err) == [
        f"tfperf lint: error: {closed}: cannot list the folder: Permission denied",
        f"tfperf lint: error: {closed / 'm.py'}: Permission denied"]
    assert f"{other}:" in out


def test_a_folder_without_read_permission_with_the_cache_on(shared_dir, unprivileged,
                                                            monkeypatch, capsys):
    """Stop 45: with the cache on (the default) the cache's project-root search stat()ed
    `closed/pyproject.toml` and the run stopped with that file's PermissionError."""
    closed = shared_dir / "closed"
    make(closed / "m.py")
    closed.chmod(0o000)
    other = make(shared_dir / "open" / "m.py")
    monkeypatch.setenv("XDG_CACHE_HOME", str(shared_dir / "cache"))
    with unprivileged():
        rc = main(["lint", str(closed), str(other)])
    out, err = capsys.readouterr()
    assert rc == 2
    assert errors_of(err) == [
        f"tfperf lint: error: {closed}: cannot list the folder: Permission denied"], err
    assert f"{other}:" in out


def test_a_folder_deeper_down_that_cannot_be_listed_is_reported(shared_dir, unprivileged,
                                                               capsys):
    make(shared_dir / "pkg" / "inner" / "m.py")
    make(shared_dir / "pkg" / "top.py")
    (shared_dir / "pkg" / "inner").chmod(0o700 if ROOT else 0o000)
    with unprivileged():
        rc = main(["lint", "--no-cache", str(shared_dir / "pkg")])
    out, err = capsys.readouterr()
    assert rc == 2
    assert errors_of(err) == [f"tfperf lint: error: {shared_dir / 'pkg' / 'inner'}: "
                              "cannot list the folder: Permission denied"]
    assert "top.py" in out


def test_any_other_os_error_is_one_line(tmp_path, capsys, monkeypatch):
    from tfperf.lint import session

    def broken(*args, **kwargs):
        raise OSError(5, "Input/output error", str(tmp_path / "x"))

    monkeypatch.setattr(session, "load_config", broken)
    make(tmp_path / "m.py")
    assert main(["lint", "--no-cache", str(tmp_path / "m.py")]) == 2
    assert capsys.readouterr().err.strip() == \
        f"tfperf lint: error: {tmp_path / 'x'}: Input/output error"


def test_a_broken_symlink_is_a_note_and_the_rest_is_linted(tmp_path, capsys):
    real = tmp_path / "real.py"
    real.write_text("import tensorflow as tf\n\nfor x in tf.data.Dataset.range(3):\n"
                    "    print(x.numpy())\n")
    (tmp_path / "gone.py").symlink_to(tmp_path / "moved" / "gone.py")  # its target is gone
    for argv in ([str(tmp_path)], [str(tmp_path / "gone.py"), str(real)],
                 [str(tmp_path / "*.py")]):
        code = main(["lint", "--no-cache", *argv])
        err = capsys.readouterr().err
        assert code in (0, 1) and "Traceback" not in err, argv
        assert f"tfperf lint: {tmp_path / 'gone.py'}: broken symlink, skipped" in err, argv
        assert "in 1 file" in err and "error" not in err, argv
    # Its VALID twin: a symlink loop is still an error that names it.
    loop = tmp_path / "loop.py"
    loop.symlink_to("loop.py")
    assert main(["lint", "--no-cache", str(loop)]) == 2
    assert "symlink loop" in capsys.readouterr().err
