"""The local UMLS's index (SPEC 12): each file of a META a SQLite database of its own in the index
folder, named by the file's identity, built on first need and attached to one connection that
the engine answers from (docs/reference.md, "The local index").
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import os
import secrets
import shutil
import sqlite3
import stat
import threading
import time
import weakref
from collections.abc import Callable, Collection, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, NoReturn, TextIO
from urllib.parse import quote

from tempmedbench_synonyms import config, runtime
from tempmedbench_synonyms.errors import BadInputError, bounded_list, plural
from tempmedbench_synonyms.files import LEFTOVER_AGE, TMP_SUFFIX, check_own, make_folders, os_error
from tempmedbench_synonyms.mrconso import engine
from tempmedbench_synonyms.mrconso.engine import FILES, Engine
from tempmedbench_synonyms.mrconso.forms import (
    META_FILES,
    MrconsoInput,
    NlmListing,
    locate,
    locate_meta,
)
from tempmedbench_synonyms.mrconso.rows import BOM
from tempmedbench_synonyms.mrconso.shapes import Links

if TYPE_CHECKING:  # (the progress bar's module is loaded only for a build: rich is slow to load)
    from tempmedbench_synonyms.progress import StepProgress

log = logging.getLogger(__name__)

fcntl: ModuleType | None
try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no flock (a rename is whole all the same)
    fcntl = None

#: A part of the index: ``MRCONSO.<identity>.sqlite``.
PART_SUFFIX = ".sqlite"
#: A part's side file: the other paths its file was found at, one JSON string a line.
PATHS_SUFFIX = ".paths"
#: Rows handed to SQLite at a time (memory stays bounded by this and the reader's blocks).
BATCH_ROWS = 20_000
#: The identity reads this much of each end of a file.
_END_BYTES = 1 << 20
#: SQLite instructions between two looks for a Ctrl-C in a long statement.
_TICK = 20_000
#: Measured (bench/bench_local_index.py): uncompressed bytes built a second, and the index's
#: size as a share of the file's bytes, each on the safe side; a gzip'd file holds about this many
#: times its bytes.
_RATE = 10e6
_DISK = 2.5  # MRCONSO 2.4x (its FTS5 table, six indexes), MRREL less: 1.75x in all
_GZIP_RATIO = 6
_ELSEWHERE = "--index-dir or TEMPMEDBENCH_INDEX_DIR"
_RECORD = "CREATE TABLE index_record (schema_version, unicode_version, identity, rows)"
#: A full release zip's MRCONSO part: the files its .nlm holds (``NlmListing.held``), and which
#: .nlm files that is of (``NlmListing.stamp``)
_LISTING = "CREATE TABLE index_listing (file PRIMARY KEY, members, bytes)"
_LISTED = "CREATE TABLE index_listing_nlms (nlm PRIMARY KEY, crc, bytes)"


@dataclass(frozen=True)
class Built:
    """One part of the index, built (``seconds`` 0: it was there): ``bytes`` is its size."""

    file: str
    rows: int
    bytes: int
    seconds: float
    path: Path

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "seconds": round(self.seconds, 3), "path": str(self.path)}


@dataclass(frozen=True)
class Part:
    """A part found in an index folder: its file, the paths it was built from, rows, size."""

    file: str
    path: Path
    paths: tuple[str, ...]
    rows: int | None  # None: no record (a part that is not trusted)
    bytes: int

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "path": str(self.path), "paths": list(self.paths)}


@dataclass
class _File:
    """A file of the META: its input, its identity and the part it goes to."""

    name: str
    input: MrconsoInput
    identity: str = ""
    part: Path | None = None
    source: str = ""


class LocalIndex:
    """A META (``meta``: a folder or any form of SPEC 7 holding one; ``mrconso_only``: the
    path is an MRCONSO.RRF, a META of it alone), its index in ``index_dir``."""

    def __init__(
        self,
        meta: Path,
        *,
        mrconso_only: bool = False,
        index_dir: Path | None = None,
        progress: TextIO | None = None,
    ) -> None:
        self.meta, self.progress = Path(meta), progress
        #: what ``--json``'s ``source`` names: the index
        self.where = f"index of {self.meta}"
        self.index_dir = config.resolve_index_dir(index_dir)
        found = {"MRCONSO": locate(self.meta)} if mrconso_only else locate_meta(self.meta)
        self._files = {name: _File(name, inp) for name, inp in found.items()}
        #: the release the path's names say (SPEC 12, "Release"), or None
        self.release: str | None = found["MRCONSO"].release
        self._db: sqlite3.Connection | None = None
        self._attached: set[str] = set()
        self._built: dict[str, Built] = {}
        self._held: list[int] = []  # the locks of a pipe's temporary parts
        self._ready = False
        self._lock = threading.Lock()  # (a full zip's listing: read once, by one thread)
        self._recorded: dict[str, bool] = {}  # a full zip's file: whether its part is built

    def engine(self, files: Collection[str], links: Links) -> Engine:
        """An engine over the parts of ``files`` (each one the META holds: the caller checks,
        naming the command), each built first if it is not yet (saying so, with a progress bar
        on ``progress``)."""
        if self._db is None:
            self._db = sqlite3.connect(":memory:", uri=True, check_same_thread=False)
            weakref.finalize(self, self._db.close)  # a LocalIndex never closed: not left open
            # a Ctrl-C or SIGTERM during a statement stops it: the engine raises it as it came
            self._stopped: list[BaseException] = []
            ticks = _ticks(self._stopped)
            next(ticks)
            self._db.set_progress_handler(ticks.__next__, _TICK)
        for name in files:
            if name in self._attached:
                continue
            part = self._ensure(name).path
            uri = f"file:{quote(str(part))}?mode=ro&immutable=1"
            self._db.execute(f"ATTACH DATABASE ? AS {name.lower()}", (uri,))
            if self._files[name].input.kind == "pipe":
                part.unlink(missing_ok=True)  # read once, never kept: open, it stays readable
            self._attached.add(name)
        return Engine(self._db, self._attached, links, stopped=self._stopped)

    @property
    def present(self) -> frozenset[str]:
        """The files the META holds."""
        return frozenset(name for name in self._files if self.holds(name))

    def holds(self, name: str) -> bool:
        """Whether the META holds ``name``: ``known``, or else a full release zip's .nlm read
        through to say so (``NlmListing``)."""
        known = self.known(name)
        return known if known is not None else name in self._listed(self._files[name]).files()

    def known(self, name: str) -> bool | None:
        """Whether the META holds ``name``, said without reading a full release zip's .nlm (None:
        not known before it is listed). Its listing is kept with MRCONSO's part (``_fill``) and
        taken from there once; before, a part built from a file says it is there. Answered once
        an index (a dry run asks it for each input)."""
        f = self._files.get(name)
        if f is None:
            return False
        listing = f.input.listing
        if listing is None or name == "MRCONSO":  # (MRCONSO's read says if it is not there)
            return True
        with self._lock:
            self._take_kept(listing)
            if listing.held is not None:
                return name in listing.held
            if name not in self._built and name not in self._recorded:
                self._recorded[name] = _record(self._part(f), f.identity) is not None
            return True if name in self._built or self._recorded[name] else None

    def _take_kept(self, listing: NlmListing) -> None:
        """The listing kept with MRCONSO's part taken, once, if no pass has listed (under
        ``_lock``)."""
        if listing.held is None and "MRCONSO" not in self._recorded:
            conso = self._files["MRCONSO"]
            self._recorded["MRCONSO"] = _record(self._part(conso), conso.identity) is not None
            if self._recorded["MRCONSO"]:
                listing.held = _kept_listing(self._part(conso), listing, conso.input.size or 0)

    def unknown(self) -> list[str]:
        """The files a full release zip's .nlm may hold, not ``known`` before it is listed."""
        return [name for name in self._files if self.known(name) is None]

    def _listed(self, f: _File) -> NlmListing:
        """The listing of a full zip's file: the one kept, else its .nlm read through (said) if
        not yet, once the index folder (if there) is checked: one refused reads none of it."""
        assert f.input.listing is not None
        with self._lock:
            self._take_kept(f.input.listing)
            if f.input.listing.known is None:
                self._check_folder(make=False)
                self._say(f"listing the files {f.input.path} holds (its .nlm is read through)")
                f.input.listing.files()
        return f.input.listing

    def _size(self, f: _File) -> int | None:
        """The bytes a read of ``f`` counts to (None: a pipe's, unknown); a full zip's file, its
        own in the .nlm once listed (before, the .nlm's)."""
        listing = f.input.listing
        if listing is not None and listing.known is not None and f.name in listing.known:
            return listing.size(f.name)
        return f.input.size

    def build(self, files: Collection[str] | None = None) -> list[Built]:
        """Build every part of ``files`` (default: each file the META holds) not built yet; a
        full zip's .nlm is listed before the first part built (MRCONSO's: its estimate is of
        its own bytes there), which says the others it holds."""
        names = files or [name for name in self._files if self.holds(name)]
        return [self._ensure(name) for name in sorted(names, key=FILES.index)]

    def parts(self) -> list[Part]:
        """For each file the META is ``known`` to hold, its part: ``rows`` None when it is not
        indexed yet (``bytes`` then the file's own size); nothing is built or read."""
        out = []
        for name in sorted((n for n in self._files if self.known(n)), key=FILES.index):
            f = self._files[name]
            if f.input.kind == "pipe":
                continue
            part = self._part(f)
            found = _record(part, f.identity)
            if found is None:
                out.append(Part(name, part, (str(f.input.path),), None, self._size(f) or 0))
            else:
                out.append(Part(name, part, tuple(found[1]), found[0], part.stat().st_size))
        return out

    def close(self) -> None:
        """Close the connection; a pipe's temporary part is removed (it is never kept)."""
        if self._db is not None:
            self._db.close()
            self._db = None
            self._attached.clear()
        for name, done in self._built.items():
            if self._files[name].input.kind == "pipe":
                done.path.unlink(missing_ok=True)
        while self._held:
            os.close(self._held.pop())

    # -- one part --------------------------------------------------------------------------------

    def _ensure(self, name: str) -> Built:
        """The part of ``name``: the one already built when its record holds, else built now."""
        if name not in self._built:
            self._built[name] = self._found_or_built(self._files[name])
        return self._built[name]

    def _found_or_built(self, f: _File) -> Built:
        self._prepare()
        if f.input.kind == "pipe":  # read once, into a part never kept
            tmp = self.index_dir / f".{f.name}.pipe.{secrets.token_hex(6)}{TMP_SUFFIX}"
            fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
            self._held.append(fd)
            _flock(fd)  # held while this process lives (_prepare)
            return self._build(f, tmp, None)
        part = self._part(f)
        found = _record(part, f.identity)
        if found is None:
            with _locked(part, self._say):
                # built meanwhile by the process we waited for; a damaged part is said
                found = _record(part, f.identity, self._say)
                if found is None:
                    tmp = part.with_name(f".{part.name}.{secrets.token_hex(6)}{TMP_SUFFIX}")
                    return self._build(f, tmp, part)
        rows, paths = found
        if f.source not in paths:
            _add_path(part, f.source)
        return Built(f.name, rows, part.stat().st_size, 0.0, part)

    def _part(self, f: _File) -> Path:
        if f.part is None:
            try:
                f.identity = json.dumps(_identity(f), sort_keys=True)
            except OSError as err:
                raise os_error(err, what=f"{f.name}.RRF") from None
            key = hashlib.sha256(f.identity.encode()).hexdigest()[:24]
            f.part = self.index_dir / f"{f.name}.{key}{PART_SUFFIX}"
            f.source = str(f.input.path.absolute())
        return f.part

    def _prepare(self) -> None:
        """The index folder made (0700) and checked: the user's own, writable."""
        if self._ready:
            return
        self._check_folder(make=True)
        self._ready = True
        gone = [p.name for p in sorted(self.index_dir.glob(f".MR*.pipe.*{TMP_SUFFIX}")) if _dead(p)]
        if gone:
            self._say(f"removed {plural(len(gone), 'temporary file')} left by an interrupted "
                      f"run that read a pipe: {', '.join(gone)}")  # fmt: skip

    def _check_folder(self, *, make: bool) -> None:
        """The index folder (made first if ``make``; else only if there) is the user's own and
        writable: else bad input."""
        try:
            if make:
                make_folders(self.index_dir)
            elif not os.path.lexists(self.index_dir):
                return
            check_own(self.index_dir, what="the index folder", elsewhere=_ELSEWHERE)
            if not self.index_dir.is_dir():  # a file of that name: no permission to blame
                raise NotADirectoryError(20, "Not a directory", str(self.index_dir))
            if not os.access(self.index_dir, os.W_OK | os.X_OK):
                raise PermissionError(13, "Permission denied", str(self.index_dir))
        except OSError as err:
            raise os_error(err, what="the index folder", instead=_ELSEWHERE) from None

    def _build(self, f: _File, tmp: Path, final: Path | None) -> Built:
        """Build ``f``'s part in the temporary file ``tmp`` and move it to ``final`` (None: a
        pipe's part, left at ``tmp`` for ``engine`` to open once)."""
        from tempmedbench_synonyms.progress import StepProgress, format_size

        folder = self.index_dir
        left = [] if final is None else sorted(folder.glob(f".{final.name}.*{TMP_SUFFIX}"))
        for old in left:  # we hold the part's lock: no build of it runs
            old.unlink(missing_ok=True)
        if left:
            self._say(
                f"removed {plural(len(left), 'temporary file')} left by an interrupted "
                f"build of {f.name}: {', '.join(p.name for p in left)}"
            )
        size = f.input.size
        if f.input.listing is not None:  # a full zip: the file's own bytes in the .nlm, listed
            size = self._listed(f).size(f.name)  # first if not yet (bad input if it lacks it)
        packed = f.input.kind not in ("file", "pipe") and not (
            f.input.kind == "zip" and not f.input.members[-1].endswith(".gz")
        )
        data = None if size is None else size * (_GZIP_RATIO if packed else 1)
        if data is not None:
            need = int(data * _DISK)
            free = shutil.disk_usage(folder).free
            if free < need:
                raise BadInputError(
                    f"too little free space to index {f.name}.RRF: about {format_size(need)} "
                    f"needed, {format_size(free)} free",
                    path=folder,
                    hint=f"free some space, or choose a folder on another disk ({_ELSEWHERE})",
                )
            self._say(
                f"indexing {f.name}.RRF of {f.input.path} once: about "
                f"{_duration(data / _RATE)} and {format_size(need)} of disk in {folder}"
            )
        else:
            self._say(f"indexing {f.name}.RRF from the pipe {f.input.path} (read once)")
        started = time.monotonic()
        try:
            bar = StepProgress(self.progress, label=f"indexing {f.name}", unit="bytes", total=size)
            with runtime.collector_paused():  # millions of rows, none in a cycle
                rows = _fill(f, tmp, bar, size)
            if final is not None:
                os.replace(tmp, final)
                _supersede(final, f.source)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        part = final or tmp
        return Built(f.name, rows, part.stat().st_size, time.monotonic() - started, part)

    def _say(self, text: str) -> None:
        if self.progress is not None:
            runtime.say(self.progress, text)
        else:
            log.info("%s", text)


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 5400:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


# -- identity and record -------------------------------------------------------------------------


def _identity(f: _File) -> dict[str, Any]:
    """What a part is found again by: each file's (each split part's, or the archive's) size,
    modification time and the SHA-256 of its first and last MiB, the members read inside an
    archive, and what the tables depend on. Never the paths (a moved META is not rebuilt)."""
    inp = f.input
    if inp.kind == "parts":
        folder = inp.path if inp.path.is_dir() else inp.path.parent
        sources = [folder / p for p in inp.parts]
    else:
        sources = [inp.path]
    return {
        "file": f.name,
        "schema_version": engine.SCHEMA_VERSION,
        "unicode_version": engine.UNICODE_VERSION,
        "members": list(inp.members) if inp.kind == "zip" else [],
        "sources": [_fingerprint(p) for p in sources],
    }


def _fingerprint(path: Path) -> list[Any]:
    st = path.stat()
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        digest.update(fh.read(_END_BYTES))
        if st.st_size > _END_BYTES:
            fh.seek(max(_END_BYTES, st.st_size - _END_BYTES))
            digest.update(fh.read(_END_BYTES))
    return [st.st_size, st.st_mtime_ns, digest.hexdigest()]


def _record(
    part: Path, identity: str, say: Callable[[str], None] | None = None
) -> tuple[int, list[str]] | None:
    """(rows, paths recorded) when ``part`` is the user's own and whole: its record (written last
    by its build) says this identity and versions, it holds ``_schema`` and the rows recorded;
    else None (build it: a part that is there but fails is damaged, said with why on ``say``)."""
    file = part.name.split(".", 1)[0]
    try:
        check_own(part, what="an index file", elsewhere=_ELSEWHERE)
        if not part.is_file():
            return None
        uri = f"file:{quote(str(part))}?mode=ro"
        with contextlib.closing(sqlite3.connect(uri, uri=True)) as db:
            got = db.execute(
                "SELECT schema_version, unicode_version, identity, rows FROM index_record"
            ).fetchall()
            paths = [p for (p,) in db.execute("SELECT path FROM index_paths")]
            paths += _more_paths(part)
            missing = _schema(file) - {n for (n,) in db.execute("SELECT name FROM sqlite_master")}
            # rows go in in order, never deleted: the last rowid is the count (and O(1))
            if not missing:
                (last,) = db.execute(f"SELECT max(rowid) FROM {file.lower()}").fetchone()
    except (sqlite3.Error, OSError) as err:
        why = str(err)
    else:
        if len(got) != 1 or tuple(got[0][:3]) != (
            engine.SCHEMA_VERSION, engine.UNICODE_VERSION, identity
        ) or not isinstance(got[0][3], int):  # fmt: skip
            why = "it has no record of this file"
        elif missing:
            why = f"it lacks {bounded_list(sorted(missing))}"
        elif (last or 0) != got[0][3]:
            why = f"it holds {last or 0} rows, its record says {got[0][3]}"
        else:
            return got[0][3], paths
    if say is not None:
        say(f"the index part {part.name} is damaged ({why}): building it again")
    return None


def _kept_listing(part: Path, listing: NlmListing, total: int) -> dict[str, tuple[int, int]] | None:
    """The listing of a full zip's .nlm files (``total`` bytes) that MRCONSO's ``part`` (its
    ``_record`` checked) keeps (``_fill``), if it is of these .nlm files (``listing``'s stamp:
    a zip changed where its identity does not look has others) and could be theirs: META files
    with MRCONSO among them, a member each at least, their bytes within the .nlm files. None
    otherwise, or for a part without it (built before it was kept): the .nlm files are listed
    again when needed."""
    uri = f"file:{quote(str(part))}?mode=ro"
    try:
        with contextlib.closing(sqlite3.connect(uri, uri=True)) as db:
            rows = db.execute("SELECT file, members, bytes FROM index_listing").fetchall()
            nlms = db.execute("SELECT nlm, crc, bytes FROM index_listing_nlms ORDER BY nlm")
            stamp = [tuple(row) for row in nlms.fetchall()]
    except sqlite3.Error:
        return None
    if stamp != sorted(listing.stamp):
        return None
    held = {file: (members, size) for file, members, size in rows}
    if not (
        all(type(n) is int for row in rows for n in row[1:])
        and "MRCONSO" in held
        and set(held) <= set(META_FILES)
        and all(members >= 1 and 0 <= size <= total for members, size in held.values())
        and sum(size for _, size in held.values()) <= total
    ):
        return None
    return held


@functools.cache
def _schema(file: str) -> frozenset[str]:
    """The tables and indexes a build of ``file``'s part makes (``engine.create``, ``finish``)."""
    with contextlib.closing(sqlite3.connect(":memory:")) as db:
        engine.create(db, file)
        engine.finish(db, file)
        return frozenset(n for (n,) in db.execute("SELECT name FROM sqlite_master"))


def _add_path(part: Path, path: str) -> None:
    """Record one more path a part's file was found at (for ``cache info`` and ``_supersede``),
    in the part's side file: a part is read ``immutable=1``, so it is never written once in
    place (another connection may hold it). Best effort: opened without waiting on a FIFO or
    following a link, and written only while a regular file under what ``_more_paths`` reads."""
    with contextlib.suppress(OSError):
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NONBLOCK
        fd = os.open(_side(part), flags | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as out:
            found = os.fstat(fd)
            if stat.S_ISREG(found.st_mode) and found.st_size < _END_BYTES:
                out.write(json.dumps(path) + "\n")


def _side(part: Path) -> Path:
    return part.with_name(part.name + PATHS_SUFFIX)


def _more_paths(part: Path) -> list[str]:
    """The paths ``_add_path`` recorded for ``part`` (a side file read bounded; a line that is
    not a JSON string is passed over)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)  # (never a FIFO's wait)
    try:
        with os.fdopen(os.open(_side(part), flags), "rb") as side:
            if not stat.S_ISREG(os.fstat(side.fileno()).st_mode):
                return []
            text = side.read(_END_BYTES).decode("utf-8", "replace")
    except OSError:
        return []
    found = []
    for line in text.splitlines():
        with contextlib.suppress(ValueError):
            if isinstance(path := json.loads(line), str) and path not in found:
                found.append(path)
    return found


def _supersede(part: Path, path: str) -> None:
    """Remove the other parts of the same file built from ``path``: this one replaces them."""
    file = part.name.split(".", 1)[0]
    for other in list_indexes(part.parent):
        if other.file == file and other.path != part and path in other.paths:
            other.path.unlink(missing_ok=True)
            _side(other.path).unlink(missing_ok=True)


def _flock(fd: int, *, wait: bool = True) -> None:
    """An exclusive OS lock on ``fd``, released when the process dies (``BlockingIOError``
    without ``wait`` when another holds it)."""
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))


def _dead(tmp: Path) -> bool:
    """Remove a pipe's temporary part whose run is gone: its lock is free, and it holds bytes
    (its run locked it before writing: that run died) or is older than ``files.LEFTOVER_AGE``
    (an empty one may be just made, not yet locked); whether it was."""
    try:
        fd = os.open(tmp, os.O_RDONLY)
    except OSError:
        return False
    try:
        _flock(fd, wait=False)
        st = os.fstat(fd)
        if not st.st_size and time.time() - st.st_mtime < LEFTOVER_AGE:
            return False
        tmp.unlink()
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


@contextlib.contextmanager
def _locked(part: Path, say: Any) -> Iterator[None]:
    """The part's OS lock (released if the process dies); waiting for it is said, and a Ctrl-C
    ends the wait."""
    lock = part.with_name(f".{part.name}.lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            _flock(fd, wait=False)
        except BlockingIOError:
            say(
                f"waiting for another process that is indexing {part.name.split('.')[0]}.RRF "
                f"in {part.parent}"
            )
            _flock(fd)
        yield
    finally:
        os.close(fd)


# -- the build -----------------------------------------------------------------------------------


def _fill(f: _File, tmp: Path, bar: StepProgress, size: int | None) -> int:
    """Read ``f``'s rows into a new database at ``tmp`` (created 0600): tables, indexes, the
    record last, SQLite's ``quick_check``; the rows it holds. ``bar`` counts to ``size`` (the
    read's, ``LocalIndex._size``). A Ctrl-C or SIGTERM that comes during a long statement
    interrupts it and is raised as it came."""
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT, 0o600))
    caught: list[BaseException] = []
    ticks = _ticks(caught)
    next(ticks)
    db = sqlite3.connect(tmp, isolation_level=None)
    stop = threading.Event()
    try:
        db.set_progress_handler(ticks.__next__, _TICK)
        for pragma in (
            "page_size=8192",  # (before any table) MRCONSO built in 0.85x the time of 4 KiB's
            "journal_mode=OFF",
            "synchronous=OFF",
            # the indexes sorted by SQLite's worker threads, each run of 32 MiB (MRREL's two
            # indexes 6.4 -> 4.7 s on 2 cores; a bigger cache sorts slower and holds more)
            "cache_size=-32768",
            "threads=2",
            f"temp_store_directory='{str(tmp.parent).replace(chr(39), chr(39) * 2)}'",
        ):
            db.execute(f"PRAGMA {pragma}")
        db.execute("BEGIN")
        engine.create(db, f.name)
        rows = done = shown = 0
        for done, batch in _batches(f, stop):
            if rows:  # each batch said once the next comes: the last by the final line alone
                bar.update(shown, total=size, rows=rows)
            rows += engine.load(db, f.name, batch)
            shown = done
        if not rows and f.name == "MRCONSO":  # SPEC 7 (another file may be empty)
            raise BadInputError(
                "not an MRCONSO.RRF file: it holds no row",
                path=f.input.path,
                hint="pass MRCONSO.RRF as NLM ships it, whole",
            )
        engine.finish(db, f.name)
        listing = f.input.listing
        if f.name == "MRCONSO" and listing is not None and listing.held is not None:
            db.execute(_LISTING)  # which files the .nlm holds: kept, trusted as the record is
            rows_held = [(file, *held) for file, held in listing.held.items()]
            db.executemany("INSERT INTO index_listing VALUES (?, ?, ?)", rows_held)
            db.execute(_LISTED)  # of which .nlm files
            db.executemany("INSERT INTO index_listing_nlms VALUES (?, ?, ?)", listing.stamp)
        db.execute(_RECORD)
        db.execute("CREATE TABLE index_paths (path PRIMARY KEY)")
        if f.source:
            db.execute("INSERT INTO index_paths VALUES (?)", (f.source,))
        db.execute(
            "INSERT INTO index_record VALUES (?, ?, ?, ?)",
            (engine.SCHEMA_VERSION, engine.UNICODE_VERSION, f.identity, rows),
        )
        db.execute("COMMIT")
        if db.execute("PRAGMA quick_check").fetchone() != ("ok",):
            raise BadInputError(
                "the index just built fails SQLite's quick_check",
                path=tmp,
                hint="check the disk, then run the command again",
            )
        db.execute("PRAGMA journal_mode=DELETE")
        bar.update(size or done, total=size, rows=rows, final=True)
    except sqlite3.Error as err:
        if caught:
            raise caught[0] from None
        raise BadInputError(
            f"cannot build the index of {f.name}.RRF: {err}",
            path=tmp.parent,
            hint="check the disk and the folder",
        ) from None
    finally:
        stop.set()
        bar.close()
        db.set_progress_handler(None, 0)
        db.close()
        with contextlib.closing(sqlite3.connect(":memory:")) as other:
            other.execute("PRAGMA temp_store_directory=''")  # process-wide: put back
    with open(tmp, "rb") as fh:
        os.fsync(fh.fileno())
    return rows


def _ticks(caught: list[BaseException]) -> Iterator[int]:
    """SQLite's progress handler: Python runs a pending signal handler as the generator resumes
    (inside the ``try``), and its ``Interrupted`` is kept and the statement stopped (1)."""
    try:
        while True:
            yield 0
    except KeyboardInterrupt as err:
        caught.append(err)
    while True:
        yield 1


def _batches(f: _File, stop: threading.Event) -> Iterator[tuple[int, list[list[str]]]]:
    """(bytes read so far, rows) of ``f``, split and checked: each row has the file's fields,
    each followed by ``|`` (a CR tolerated); anything else is bad input naming the line, and so
    is a line that runs on past ``scan.MAX_LINE`` bytes (said before reading on)."""
    from tempmedbench_synonyms.mrconso import scan  # its bound (loaded for a build only)

    width = len(engine.COLUMNS[f.name]) + 1
    carry = b""  # the start of a line that a block ended in
    line = 0
    batch: list[list[str]] = []
    done = 0
    head = True  # the byte order mark not looked for yet (a pipe may hand on a byte at a time)
    for done, block in f.input.blocks(stop):
        if head:
            block, carry = carry + block, b""
            if len(block) < 3 and BOM.startswith(block):
                carry = block  # still maybe the mark: wait for more
                continue
            head = False
            block = block.removeprefix(BOM)
        first, cut = block.find(b"\n"), block.rfind(b"\n")
        if len(carry) + (len(block) if first < 0 else first) > scan.MAX_LINE:
            raise _bad(
                f, line + 1, f"a line longer than {scan.MAX_LINE:,} bytes: not an {f.name}.RRF row"
            )
        if first < 0:
            carry += block  # at most MAX_LINE bytes, copied at most MAX_LINE / block times
            continue
        batch.extend(_split(f, carry + block[:cut], line, width))
        line += block.count(b"\n", 0, cut) + 1
        carry = block[cut + 1 :]
        if len(batch) >= BATCH_ROWS:
            yield done, batch
            batch = []
    if carry.strip(b"\r"):
        batch.extend(_split(f, carry, line, width))
    yield done, batch


def _split(f: _File, data: bytes, before: int, width: int) -> list[list[str]]:
    nul = data.find(b"\0")  # (SQLite's json_each ends a string there: it could not be asked)
    if nul >= 0:
        _bad_byte(
            f, data, nul, before, width, "it holds a NUL byte (0x00): not the text of an RRF file"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        at = err.start
        _bad_byte(f, data, at, before, width, f"it is not UTF-8 text (byte 0x{data[at]:02x})")
    if "\r" in text:  # (the last line's CR too: its line feed is cut off before this)
        text = text.replace("\r\n", "\n").removesuffix("\r")
    rows = [r.split("|") for r in text.split("\n")]
    for i, r in enumerate(rows):
        if len(r) != width or r[-1]:
            ended = r[-1] == ""
            raise _bad(
                f,
                before + i + 1,
                f"an {f.name}.RRF row has {width - 1} fields, each followed by '|'; this line has "
                f"{len(r) - 1 if ended else len(r)}{'' if ended else ' and no trailing |'}",
            )
        del r[-1]
    return rows


def _bad_byte(f: _File, data: bytes, at: int, before: int, width: int, problem: str) -> NoReturn:
    """The line of ``data`` holding the byte at ``at`` is bad input, unless a line before it is
    bad in another way: the first bad line is named, wherever the read blocks ended."""
    start = data.rfind(b"\n", 0, at)
    if start >= 0:
        _split(f, data[:start], before, width)  # (each line before it, without its line feed)
    raise _bad(f, before + data.count(b"\n", 0, at) + 1, problem) from None


def read_rows(name: str, path: Path) -> Iterator[list[str]]:
    """Each row of ``path``, the file ``name`` (``MRDEF``...) in any form, read and checked as a
    build reads it, a batch at a time (the fake's files)."""
    f = _File(name, locate(path, name))
    for _, batch in _batches(f, threading.Event()):
        yield from batch


def _bad(f: _File, line: int, problem: str) -> BadInputError:
    return BadInputError(
        problem, path=f.input.path, line=line, hint=f"pass {f.name}.RRF as NLM ships it, whole"
    )


# -- the folder: cache info, cache clear --index, doctor ------------------------------------------


def list_indexes(index_dir: Path | None = None) -> list[Part]:
    """Each part in the index folder: its file, the paths recorded, rows, size (never a pipe's
    temporary part)."""
    parts = []
    for path in _entries(config.resolve_index_dir(index_dir)):
        if not (path.name.startswith("MR") and path.name.endswith(PART_SUFFIX)):
            continue
        rows: int | None = None
        paths: list[str] = []
        with contextlib.suppress(sqlite3.Error, OSError, TypeError, ValueError):
            uri = f"file:{quote(str(path))}?mode=ro"
            with contextlib.closing(sqlite3.connect(uri, uri=True)) as db:
                (rows,) = db.execute("SELECT rows FROM index_record").fetchone()
                paths = [p for (p,) in db.execute("SELECT path FROM index_paths")]
        paths += [p for p in _more_paths(path) if p not in paths]
        with contextlib.suppress(OSError):  # gone meanwhile: not listed
            size = path.stat().st_size
            parts.append(Part(path.name.split(".", 1)[0], path, tuple(paths), rows, size))
    return parts


def remove_indexes(index_dir: Path | None = None) -> list[Path]:
    """Remove every part, lock and temporary file of the index folder; what was removed."""
    removed = []
    for path in _entries(config.resolve_index_dir(index_dir)):
        name = path.name.lstrip(".")
        if name.startswith("MR") and name.endswith(
            (PART_SUFFIX, PATHS_SUFFIX, ".lock", TMP_SUFFIX)
        ):
            try:
                path.unlink(missing_ok=True)
            except OSError as err:
                raise os_error(err, what="an index file") from None
            removed.append(path)
    return removed


def _entries(folder: Path) -> list[Path]:
    """The files of the index folder, by name (none when it does not exist yet)."""
    try:
        return sorted(p for p in folder.iterdir() if p.is_file())
    except FileNotFoundError:
        return []
    except OSError as err:
        raise os_error(err, what="the index folder", instead=_ELSEWHERE) from None


def describe(meta: Path, index_dir: Path | None = None) -> list[Part]:
    """``LocalIndex.parts`` of ``meta``."""
    return LocalIndex(meta, index_dir=index_dir).parts()
