"""Files in and out: regular files only are read (``open_regular``), nothing is ever half-written
(a temporary file, then ``os.replace``), and what the tool keeps for itself is trusted only when
it is the user's own (``check_own``, ``make_folders``): docs/architecture.md, "Files".
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import secrets
import stat
import time
from collections.abc import Iterable
from io import BufferedReader
from pathlib import Path

from tempmedbench_synonyms.errors import BadInputError, UntrustedError, bounded_list

#: Every temporary file ends so; ``cache info`` counts the ones a killed run left behind.
TMP_SUFFIX = ".tmp"
_TOKEN_HEX = 12  # secrets.token_hex(6)
#: The exact names write_atomic gives its temporary files: nothing else is ever removed.
_LEFTOVER = re.compile(rf"\.(.+)\.[0-9a-f]{{{_TOKEN_HEX}}}{re.escape(TMP_SUFFIX)}")
#: A temporary file younger than this may belong to a run writing right now (a write takes well
#: under a second): it is left alone.
LEFTOVER_AGE = 60.0

_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def file_kind(mode: int) -> str:
    """What a file is, in words, from its ``st_mode``: "a FIFO", "a folder", ..."""
    for test, name in _KINDS:
        if test(mode):
            return name
    return "a regular file" if stat.S_ISREG(mode) else "not a regular file"


def not_regular_error(path: str | Path, kind: str, *, what: str | None = None) -> BadInputError:
    subject = f"{what} " if what else ""
    return BadInputError(
        f"{subject}is {kind}, not a regular file",
        path=path,
        hint="pass a regular file: a FIFO, a device or a socket is never read where a file is "
        "expected",
    )


def open_regular(
    path: str | Path, *, what: str | None = None, own: str | None = None
) -> BufferedReader:
    """Open ``path`` for reading in binary mode if it is a regular file (a link to one is fine).
    Anything else is :class:`BadInputError`; ``OSError`` is left to the caller. With ``own`` (how to
    choose a folder of one's own), the file must also be the user's own (:func:`check_own`)."""
    try:
        fd = os.open(path, os.O_RDONLY | _NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as err:
        # A socket cannot be opened (ENXIO): say what it is rather than "no such device".
        try:
            mode = os.stat(path).st_mode
        except OSError:
            raise err from None
        if not stat.S_ISREG(mode):
            raise not_regular_error(path, file_kind(mode), what=what) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise not_regular_error(path, file_kind(st.st_mode), what=what)
        if own is not None:
            check_own(path, what="the file", elsewhere=own, st=st)
        if _NONBLOCK:
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    # Outside the try: once the file object holds the descriptor, it closes it (a Ctrl-C inside
    # fdopen closing it twice gave EBADF, an OSError in place of the interruption).
    return os.fdopen(fd, "rb")


def read_regular(
    path: str | Path, *, limit: int, what: str | None = None, own: str | None = None
) -> bytes:
    """A regular file's bytes (:func:`open_regular`); past ``limit``, BadInputError."""
    with open_regular(path, what=what, own=own) as f:
        data = _read_at_most(f, limit)
    if isinstance(data, int):
        subject = f"{what} " if what else ""
        raise BadInputError(f"{subject}is larger than {limit} bytes", path=path)
    return data


def _read_at_most(f: BufferedReader, limit: int) -> bytes | int:
    """The bytes of ``f``, or past ``limit`` its size (``-1`` if it grew past it while read);
    ``fstat`` first, so a larger file is not read at all."""
    size = os.fstat(f.fileno()).st_size
    if size > limit:
        return size
    data = f.read(limit + 1)
    return -1 if len(data) > limit else data


def _bytes_text(n: int) -> str:
    return f"{n} bytes ({n >> 20} MiB)" if n >= 1 << 20 else f"{n} bytes"


def write_atomic(path: Path, data: bytes, *, private: bool = False) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and ``os.replace``.
    ``private`` files (the cache) are 0600 in 0700 folders (:func:`make_folders`), others 0666 less
    the umask. fsync before the rename: a crash leaves the old file or the new one."""
    if private:
        make_folders(path.parent)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(_TOKEN_HEX // 2)}{TMP_SUFFIX}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if private else 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def make_folders(folder: Path) -> None:
    """Create ``folder`` and its missing parents, each 0700 whatever the umask (SPEC 8)."""
    missing: list[Path] = []
    p = folder
    while not os.path.lexists(p) and p.parent != p:
        missing.append(p)
        p = p.parent
    for made in reversed(missing):
        try:
            made.mkdir(mode=0o700)
        except FileExistsError:
            continue  # made meanwhile by another run (or by someone else: check_own says)
        # mkdir's mode is filtered by the umask (0200 would leave it unwritable): say it again.
        os.chmod(made, 0o700)


def check_own(
    path: str | Path, *, what: str, elsewhere: str, st: os.stat_result | None = None
) -> None:
    """UntrustedError unless ``path`` is the user's own: theirs, and not group- or
    other-writable (SPEC section 8, "Shared folders", ssh's StrictModes rule).

    ``st``: its ``stat`` if taken; a path that does not exist or cannot be looked at passes.
    ``what`` names it, ``elsewhere`` says how to choose another folder. Windows: all pass.
    """
    getuid = getattr(os, "getuid", None)
    if getuid is None:  # pragma: no cover - Windows
        return
    if st is None:
        try:
            st = os.stat(path)
        except OSError:
            return
    uid = getuid()
    if st.st_uid != uid:
        raise UntrustedError(
            f"{what} belongs to another user (uid {st.st_uid}; you are uid {uid}), so what it "
            "holds cannot be trusted",
            path=path,
            hint=f"use a folder of your own ({elsewhere}), or have {path} removed",
        )
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise UntrustedError(
            f"{what} can be written by other users (mode {stat.S_IMODE(st.st_mode):04o}), so "
            "what it holds cannot be trusted",
            path=path,
            hint=f"chmod go-w {path}, or use a folder of your own ({elsewhere})",
        )


def holds_bytes(path: Path, data: bytes) -> bool:
    """Whether ``path`` is a regular file (not a link) holding exactly ``data``."""
    try:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size != len(data):
            return False
        with open(path, "rb") as f:
            return f.read(len(data) + 1) == data
    except OSError:
        return False


def check_writable(folder: Path) -> None:
    """``OSError`` unless files can be written in ``folder`` (or its nearest existing ancestor): a
    temporary file made and removed, as :func:`write_atomic` would; nothing left. A folder on the
    way that cannot be entered errs too (``lexists`` would say "missing")."""
    existing = Path(".")
    for path in (folder, *folder.parents):
        try:
            os.lstat(path)
        except FileNotFoundError:
            continue
        existing = path
        break
    if not existing.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(existing))
    probe = existing / f".probe.{secrets.token_hex(_TOKEN_HEX // 2)}{TMP_SUFFIX}"
    fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.close(fd)
    probe.unlink()


_PERMISSIONS = "check the permissions of the path and of each folder above it (ls -ld)"
#: What to do about the errors a path gives most often: the hint of a message.
_OS_FIXES = {
    errno.EACCES: _PERMISSIONS,
    errno.EPERM: _PERMISSIONS,
    errno.ENAMETOOLONG: "the path, or a name in it, is longer than the file system allows: "
    "choose a shorter one",
    errno.ENOTDIR: "a part of the path is a file where a folder is expected",
    errno.EISDIR: "it is a folder where a file is expected",
    errno.ELOOP: "symbolic links on the path point in a loop",
    errno.EROFS: "the file system is read-only: choose a folder on another one",
    errno.ENOSPC: "the disk is full: free some space, or choose a folder on another disk",
}


def os_problem(err: OSError) -> str:
    """An ``OSError`` in words (``Permission denied``), without ``[Errno 13]`` and the path."""
    return err.strerror or type(err).__name__


def os_fix(err: OSError) -> str | None:
    return _OS_FIXES.get(err.errno or 0)


def os_error(err: OSError, *, what: str = "", instead: str | None = None) -> BadInputError:
    """``PATH: cannot use WHAT: Permission denied`` as BadInputError, with a fix."""
    path = err.filename2 if err.filename2 is not None else err.filename
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    hint = "; ".join(h for h in (os_fix(err), instead) if h) or None
    return BadInputError(
        f"cannot use {what}: {os_problem(err)}" if what else os_problem(err),
        path=path if isinstance(path, str) else None,
        hint=hint,
    )


def remove_leftovers(folders: Iterable[Path]) -> str | None:
    """Remove the temporary files a killed run left in ``folders`` (regular files of
    write_atomic's pattern older than :data:`LEFTOVER_AGE`); the one warning that says which."""
    now = time.time()
    removed: list[Path] = []
    for folder in folders:
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if _LEFTOVER.fullmatch(entry.name) is None:
                continue
            try:
                st = entry.stat(follow_symlinks=False)
                if not stat.S_ISREG(st.st_mode) or now - st.st_mtime < LEFTOVER_AGE:
                    continue
                os.unlink(entry.path)
            except OSError:
                continue  # gone meanwhile, or not ours to remove: leave it
            removed.append(Path(entry.path))
    if not removed:
        return None
    return f"removed {len(removed)} temporary file(s) left by an interrupted run: " + bounded_list(
        removed
    )


def read_input(
    path: Path,
    *,
    what: str,
    limit: int,
    folder: Path | None = None,
    too_large: str | None = None,
) -> bytes:
    """The bytes of the regular file ``path``; missing or unreadable is BadInputError (a hint about
    the release ``folder`` if given). Past ``limit``, BadInputError naming the size and limit, with
    ``too_large``; never read past ``limit + 1`` bytes, so a growing file is bounded too."""
    try:
        with open_regular(path, what=what) as f:
            data = _read_at_most(f, limit)
    except FileNotFoundError:
        hint = None
        if folder is not None and not folder.is_dir():
            hint = f"{folder} is not a folder; pass the TempMedBench release folder"
        elif folder is not None:
            hint = (
                "pass the TempMedBench release folder itself (the one with MANIFEST.sha256); "
                "if it is, its files are incomplete: download the release again"
            )
        raise BadInputError(f"{what} is missing", path=path, hint=hint) from None
    except OSError as err:  # a folder, a FIFO or a device is refused by open_regular itself
        raise BadInputError(f"cannot read {what}: {err.strerror}", path=path) from None
    if isinstance(data, int):
        over = f"over the limit of {_bytes_text(limit)} for {what}"
        problem = f"grew {over} as it was read" if data < 0 else f"{_bytes_text(data)}, {over}"
        raise BadInputError(problem, path=path, hint=too_large)
    return data


BOM_PROBLEM = "starts with a byte order mark (BOM); release files are UTF-8 without a BOM"


def decode_utf8(raw: bytes, *, path: str) -> str:
    """``raw`` as UTF-8 text; a BOM or a byte that is not UTF-8 is BadInputError, with its line."""
    if raw.startswith(b"\xef\xbb\xbf"):
        raise BadInputError(BOM_PROBLEM, path=path, line=1)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        raise BadInputError(f"not valid UTF-8 ({err.reason})", path=path, line=line) from None


def sha256_file(path: Path) -> str:
    """SHA-256 of a file, read in blocks so that a large release file is never held whole."""
    with open_regular(path) as f:
        return hashlib.file_digest(f, "sha256").hexdigest()
