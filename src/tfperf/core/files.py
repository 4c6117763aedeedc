"""Files tfperf writes: the user's own sources (fixes, patches) and tfperf's caches.

One rule for each, shared by every capability:

- a user's file (``lint --fix``, ``tune --apply``) is written as its owner could have
  written it: through symlinks to the real file, keeping its mode, owner and group, never
  left half written; a read-only file is refused, never made writable
  (:func:`write_text_atomically`, :class:`WriteRefused`);
- a cache lives in ``.tfperf_cache/<kind>/`` at the root of the project being worked on, with
  a ``.gitignore`` and a ``CACHEDIR.TAG`` so that git and backup tools leave it alone; where
  there is no project (or it is not writable), in the user's cache directory
  (``$XDG_CACHE_HOME/tfperf/<kind>``, ``~/.cache`` when unset), never in whatever directory
  the user happens to stand in.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

# Files that mark the root of a Python project (the first found walking up wins).
PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
CACHE_DIR_NAME = ".tfperf_cache"
_CACHEDIR_TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
                 "# This file is a cache directory tag created by tfperf.\n"
                 "# For information about cache directory tags see https://bford.info/cachedir/\n")


class WriteRefused(OSError):
    """A user's file tfperf did not write, and why; the file is as it was.

    ``str(exc)`` is one line naming the file and the reason (``x.py: not written: read-only
    file (mode 0444)``), for a caller to print as it is."""

    def __init__(self, path: str | Path, reason: str, code: int = errno.EACCES) -> None:
        super().__init__(code, reason, str(path))

    def __str__(self) -> str:
        return f"{self.filename}: not written: {self.strerror}"

    def __reduce__(self):  # raised in a worker process, read in the parent
        return type(self), (self.filename, self.strerror, self.errno)


def write_text_atomically(path: str | Path, text: str, *, encoding: str = "utf-8",
                          bom: bool = False) -> Path:
    """Replace the text of an existing file, as its owner would, and return the file written.

    A symlink is followed: the real file gets the new text and the link stays a link. The
    file keeps its mode, owner and group. The text goes to a temporary file beside the real
    one (same file system), given the file's owner, group and mode, then renamed over it:
    the file is either all old or all new. Where that cannot keep the file as it was (hard
    links, an access control list, an owner we may not give a file to, a folder we may not
    create in), the text is written in place instead (same inode): see
    :func:`_write_in_place`.

    Refused, with :class:`WriteRefused` and nothing changed: a file without a write
    permission bit for the user tfperf runs as (checked on the mode bits, since root may
    write anything: a read-only file stays read-only and unchanged, even for root), a path
    that is not a regular file, a file the text cannot be encoded for. Any other failure
    to write is a :class:`WriteRefused` too, the file left whole."""
    real = Path(os.path.realpath(path))
    try:
        data = (("\ufeff" if bom else "") + text).encode(encoding)
    except UnicodeEncodeError as exc:
        raise WriteRefused(path, f"the new text cannot be written in the file's encoding "
                                 f"({encoding}): {exc.reason}", errno.EINVAL) from None
    try:
        st = os.stat(real)
    except OSError as exc:
        raise WriteRefused(path, exc.strerror or str(exc), exc.errno or errno.EIO) from None
    if not stat.S_ISREG(st.st_mode):
        raise WriteRefused(path, "not a regular file", errno.EINVAL)
    refusal = _not_writable(st)
    if refusal:
        raise WriteRefused(path, refusal)
    if st.st_nlink > 1 or _has_acl(real):
        # A rename would split the hard links (the others keep the old text) or drop the
        # access list a new file does not inherit.
        _write_in_place(path, real, data)
        return real
    import tempfile  # imported here: most runs write no user file, and it is slow to import

    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{real.name}.", suffix=".tfperf-tmp",
                                   dir=real.parent)
    except OSError:  # a folder the user may not create files in: the file itself may do
        _write_in_place(path, real, data)
        return real
    try:
        if not _give_owner(fd, st):  # the rename would give the file to us
            _discard(fd, tmp)
            fd = -1
            _write_in_place(path, real, data)
            return real
        _write_all(fd, data)
        os.fsync(fd)
        os.close(fd)
        fd = -1
        os.chmod(tmp, stat.S_IMODE(st.st_mode))  # after the chown, which may clear setuid
        os.replace(tmp, real)
    except WriteRefused:
        raise
    except OSError as exc:
        _discard(fd, tmp)
        raise WriteRefused(path, exc.strerror or str(exc), exc.errno or errno.EIO) from exc
    except BaseException:
        _discard(fd, tmp)
        raise
    return real


def _not_writable(st: os.stat_result) -> str:
    """Why the file's mode bits do not let the user tfperf runs as write it ("" when they
    do). Root passes any permission check, so for root a file is writable when some write
    bit is set: a file nobody may write (0444) is one its owner meant to keep as it is."""
    mode = st.st_mode
    bits = f"mode {stat.S_IMODE(mode):04o}"
    if not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        return f"read-only file ({bits}); tfperf does not make a file writable"
    if not hasattr(os, "geteuid"):  # Windows: the read-only attribute, tested above
        return ""
    uid = os.geteuid()
    if uid == 0:
        return ""
    if st.st_uid == uid:
        allowed = mode & stat.S_IWUSR
    elif st.st_gid == os.getegid() or st.st_gid in os.getgroups():
        allowed = mode & stat.S_IWGRP
    else:
        allowed = mode & stat.S_IWOTH
    return "" if allowed else f"this user may not write it ({bits}, owner uid {st.st_uid})"


def _has_acl(real: Path) -> bool:
    """Whether the file has a POSIX access control list (Linux), which the temporary file
    would not get."""
    try:
        return "system.posix_acl_access" in os.listxattr(real)
    except (OSError, AttributeError):  # no extended attributes here
        return False


def _give_owner(fd: int, st: os.stat_result) -> bool:
    """Give the temporary file the real file's owner and group; ``False`` where this process
    may not (a user other than root writing someone else's file)."""
    if not hasattr(os, "fchown"):
        return True  # Windows: no owner to keep
    mine = os.fstat(fd)
    if (mine.st_uid, mine.st_gid) == (st.st_uid, st.st_gid):
        return True
    try:
        os.fchown(fd, st.st_uid, st.st_gid)
    except PermissionError:
        return False
    return True


def _write_in_place(path: str | Path, real: Path, data: bytes) -> None:
    """Overwrite the file's content in place: it keeps its inode, so its owner, group, mode,
    ACLs and hard links, as an editor saving it would. Used only where the rename cannot keep
    these (the file belongs to another user and we are not root, it has hard links or an
    access control list, or its folder does not let us create the temporary file), because
    it is not atomic: if a write fails, the old bytes are written back. Chosen over refusing
    (every fix in a shared, group-writable project would stop) and over the rename (which
    would give the user's file to whoever ran tfperf)."""
    try:
        fd = os.open(real, os.O_RDWR)
    except OSError as exc:
        raise WriteRefused(path, exc.strerror or str(exc), exc.errno or errno.EIO) from None
    try:
        try:
            old = _read_all(fd)
        except OSError as exc:  # nothing written yet
            raise WriteRefused(path, exc.strerror or str(exc), exc.errno or errno.EIO) from None
        try:
            _overwrite(fd, data)
        except OSError as exc:
            try:
                _overwrite(fd, old)
                back = "its old text was written back"
            except OSError:
                back = "it may be left incomplete"
            raise WriteRefused(path, f"{exc.strerror or exc} ({back})",
                               exc.errno or errno.EIO) from None
    finally:
        os.close(fd)


def _overwrite(fd: int, data: bytes) -> None:
    os.lseek(fd, 0, os.SEEK_SET)
    _write_all(fd, data)
    os.ftruncate(fd, len(data))
    os.fsync(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def _discard(fd: int, tmp: str) -> None:
    with contextlib.suppress(OSError):
        if fd >= 0:
            os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(tmp)


def write_new_text(path: str | Path, text: str, *, encoding: str = "utf-8") -> Path:
    """Write an output tfperf makes (a report): an existing file is replaced as
    :func:`write_text_atomically` replaces it; a new one appears whole or not at all (written
    beside it under a temporary name, then renamed). OSError when it cannot be written."""
    p = Path(path)
    if p.exists() or p.is_symlink():
        return write_text_atomically(p, text, encoding=encoding)
    import secrets

    # O_EXCL under a fresh name; mode 0666 less the umask, as a new file of the user's gets
    tmp = str(p.absolute().parent / f".{p.name}.{secrets.token_hex(4)}.tfperf-tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        _write_all(fd, text.encode(encoding))
        os.close(fd)
        fd = -1
        os.replace(tmp, p)
    except BaseException:
        _discard(fd, tmp)
        raise
    return p


def os_error_line(exc: OSError) -> str:
    """One line for an ``OSError``: ``path: reason`` (``x.py: Permission denied``)."""
    if isinstance(exc, WriteRefused):
        return str(exc)
    reason = exc.strerror or str(exc)
    return f"{exc.filename}: {reason}" if exc.filename else reason


def project_root(start: str | Path) -> Path | None:
    """The nearest directory at or above ``start`` holding a project marker
    (:data:`PROJECT_MARKERS`); ``None`` outside any project."""
    start = Path(start).resolve()
    # os.path's tests, not Path's: Path.exists() raised PermissionError in a folder that
    # cannot be searched, and `tfperf lint locked/` (cache on) stopped with
    # "locked/pyproject.toml: Permission denied" before saying it cannot list the folder
    directory = start if os.path.isdir(start) else start.parent
    for d in (directory, *directory.parents):
        if any(os.path.exists(d / marker) for marker in PROJECT_MARKERS):
            return d
    return None


def user_cache_dir(kind: str) -> Path:
    """``$XDG_CACHE_HOME/tfperf/<kind>`` (``~/.cache`` when the variable is unset)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tfperf" / kind


def cache_dir(kind: str, start: str | Path | None = None) -> Path:
    """Where the ``kind`` cache lives for work on ``start`` (a path being analysed): the
    project's ``.tfperf_cache/<kind>`` when ``start`` is inside a writable project, else
    :func:`user_cache_dir`. Nothing is created here (see :func:`prepare_cache_dir`)."""
    root = project_root(start) if start is not None else None
    if root is not None and os.access(root, os.W_OK):
        return root / CACHE_DIR_NAME / kind
    return user_cache_dir(kind)


def write_cache_file(path: Path, text: str) -> None:
    """Write a cache file whole, for processes that share the cache (two tunes or benches at
    once, a test suite on several workers): the text goes to a temporary file of this
    writer's own beside ``path`` and is then renamed over it, so a reader sees the old file
    or the new one, never a part, and two writers never write into one temporary file.
    Raises ``OSError`` (the temporary file removed); callers treat that as "not cached"."""
    import secrets  # imported here, as in write_text_atomically: most runs write no cache

    tmp = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def prepare_cache_dir(directory: Path, root: Path | None = None) -> Path:
    """Create a cache directory and write a ``.gitignore`` (ignore everything) and a
    ``CACHEDIR.TAG`` at the top of the ``.tfperf_cache`` it is in, as ruff does, or, outside
    one (a ``--cache-dir`` of the user's), in ``root``."""
    directory.mkdir(parents=True, exist_ok=True)
    top = next((p for p in (directory, *directory.parents) if p.name == CACHE_DIR_NAME), root)
    if top is not None:
        for name, content in ((".gitignore", "# Created by tfperf automatically.\n*\n"),
                              ("CACHEDIR.TAG", _CACHEDIR_TAG)):
            marker = top / name
            if not marker.exists():
                with contextlib.suppress(OSError):
                    marker.write_text(content, encoding="utf-8")
    return directory
