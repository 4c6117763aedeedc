"""core/files.write_text_atomically: a user's file is written as its owner could have written
it, or refused with one line and left as it was (issue 24)."""

from __future__ import annotations

import errno
import os
import pickle
import stat

import pytest

from tfperf.core import files
from tfperf.core.files import WriteRefused, write_text_atomically

ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
root_only = pytest.mark.skipif(not ROOT, reason="making a file of another user needs root")
NOBODY = 65534  # the user conftest's `unprivileged` runs as, when the tests run as root
OTHER_UID, OTHER_GID = 4242, 4343  # no such user here: nobody else may write as them


def make(path, text="old\n", mode=0o644, owner=None):
    path.write_text(text)
    if owner is not None:
        os.chown(path, *owner)
    os.chmod(path, mode)
    return path


def leftovers(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tfperf-tmp"))


def test_a_read_only_file_is_refused_in_one_line_and_left_as_it_was(tmp_path):
    # Root may write anything: the mode bits say the owner meant it read-only.
    f = make(tmp_path / "m.py", mode=0o444)
    with pytest.raises(WriteRefused) as caught:
        write_text_atomically(f, "new\n")
    assert isinstance(caught.value, OSError)  # callers that catch OSError catch it
    line = str(caught.value)
    assert "\n" not in line and str(f) in line and "read-only" in line and "0444" in line
    assert f.read_text() == "old\n"
    assert stat.S_IMODE(f.stat().st_mode) == 0o444  # never made writable
    assert leftovers(tmp_path) == []


def test_the_refusal_names_the_path_as_given_and_survives_a_worker(tmp_path):
    real = make(tmp_path / "real.py", mode=0o444)
    link = tmp_path / "link.py"
    link.symlink_to(real.name)
    with pytest.raises(WriteRefused) as caught:
        write_text_atomically(link, "new\n")
    assert str(caught.value).startswith(f"{link}: not written: read-only")
    again = pickle.loads(pickle.dumps(caught.value))  # a worker process sends it back
    assert str(again) == str(caught.value) and again.errno == errno.EACCES


def test_mode_owner_and_group_are_kept(tmp_path):
    f = make(tmp_path / "m.py", mode=0o640)
    write_text_atomically(f, "new\n")
    assert f.read_text() == "new\n" and stat.S_IMODE(f.stat().st_mode) == 0o640
    assert leftovers(tmp_path) == []


@root_only
def test_root_keeps_another_users_file_theirs(tmp_path):
    # Run as root, the rename used to make root the owner of the user's file.
    f = make(tmp_path / "m.py", mode=0o664, owner=(OTHER_UID, OTHER_GID))
    write_text_atomically(f, "new\n")
    st = f.stat()
    assert f.read_text() == "new\n"
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (OTHER_UID, OTHER_GID, 0o664)


@root_only
def test_a_user_writing_another_users_file_writes_in_place(shared_dir, unprivileged):
    # nobody may write the file (its group's bit) and create files in the folder, but not
    # give a new file to its owner: a rename would hand the file to nobody.
    f = make(shared_dir / "m.py", mode=0o664, owner=(OTHER_UID, NOBODY))
    inode = f.stat().st_ino
    with unprivileged():
        write_text_atomically(f, "new text\n")
    st = f.stat()
    assert f.read_text() == "new text\n" and st.st_ino == inode
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (OTHER_UID, NOBODY, 0o664)
    assert leftovers(shared_dir) == []


def test_a_file_in_a_folder_we_may_not_create_in_is_written_in_place(shared_dir, unprivileged):
    folder = shared_dir / "locked"
    folder.mkdir()
    f = make(folder / "m.py", "old text, longer than the new one\n", mode=0o666)
    folder.chmod(0o555)
    with unprivileged():
        write_text_atomically(f, "new\n")
    assert f.read_text() == "new\n"  # truncated to the new length
    assert stat.S_IMODE(f.stat().st_mode) == 0o666
    assert leftovers(folder) == []


@root_only
def test_a_file_this_user_may_not_write_is_refused_whatever_the_folder(shared_dir,
                                                                      unprivileged):
    folder = shared_dir / "locked"
    folder.mkdir()
    f = make(folder / "m.py", mode=0o644)  # root's; the folder is closed to nobody too
    folder.chmod(0o555)
    with unprivileged(), pytest.raises(WriteRefused) as caught:
        write_text_atomically(f, "new\n")
    assert "may not write it" in str(caught.value) and "0644" in str(caught.value)
    assert f.read_text() == "old\n"


def test_hard_links_keep_sharing_the_new_text(tmp_path):
    f = make(tmp_path / "m.py")
    twin = tmp_path / "twin.py"
    os.link(f, twin)
    write_text_atomically(f, "new\n")
    assert twin.read_text() == "new\n" and f.stat().st_ino == twin.stat().st_ino


def test_an_access_control_list_is_kept(tmp_path):
    import struct

    f = make(tmp_path / "m.py", mode=0o664)

    def entry(tag, perm, uid=0xFFFFFFFF):
        return struct.pack("<HHI", tag, perm, uid)

    # Linux's xattr form of "user::rw-, user:4242:rw-, group::r--, mask::rw-, other::r--".
    acl = struct.pack("<I", 2) + entry(1, 6) + entry(2, 6, OTHER_UID) + entry(4, 4) + \
        entry(0x10, 6) + entry(0x20, 4)
    try:
        os.setxattr(f, "system.posix_acl_access", acl)
    except (OSError, AttributeError):
        pytest.skip("no POSIX access control lists on this file system")
    write_text_atomically(f, "new\n")
    assert f.read_text() == "new\n"
    assert os.getxattr(f, "system.posix_acl_access") == acl


def test_a_failed_write_in_place_puts_the_old_text_back(tmp_path, monkeypatch):
    f = make(tmp_path / "m.py", "old text\n")
    os.link(f, tmp_path / "twin.py")  # written in place
    real_write = os.write
    calls = []

    def disk_full_once(fd, data):
        calls.append(len(data))
        if len(calls) == 1:
            real_write(fd, bytes(data)[:3])
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", disk_full_once)
    with pytest.raises(WriteRefused, match=r"No space left on device \(its old text was wr"):
        write_text_atomically(f, "brand new text\n")
    assert f.read_text() == "old text\n"


def test_text_the_files_encoding_cannot_hold_is_refused(tmp_path):
    f = make(tmp_path / "m.py")
    with pytest.raises(WriteRefused, match="latin-1"):
        write_text_atomically(f, "x = '→'\n", encoding="latin-1")
    assert f.read_text() == "old\n"


def test_a_path_that_is_not_a_regular_file_is_refused(tmp_path):
    fifo = tmp_path / "m.py"
    os.mkfifo(fifo)
    with pytest.raises(WriteRefused, match="not a regular file"):
        write_text_atomically(fifo, "new\n")


def test_os_error_line_is_one_line():
    assert files.os_error_line(PermissionError(13, "Permission denied", "a.py")) == \
        "a.py: Permission denied"
    assert files.os_error_line(OSError("disk full")) == "disk full"
