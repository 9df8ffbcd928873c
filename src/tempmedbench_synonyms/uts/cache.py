"""The persistent cache of UTS answers: one file per complete answer, written atomically, each
checked by its own SHA-256, trusted only when the user's own (docs/reference.md, "The cache").
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import logging
import os
import re
import secrets
import shlex
import shutil
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from tempmedbench_synonyms import files
from tempmedbench_synonyms.atoms import check_release, is_release
from tempmedbench_synonyms.constants import CACHE_DIR_ENV
from tempmedbench_synonyms.errors import BadInputError, UntrustedError, bounded_list, plural
from tempmedbench_synonyms.jsonio import loads_utf8
from tempmedbench_synonyms.secret import check_not_secret, redact

log = logging.getLogger(__name__)
_T = TypeVar("_T")

LAYOUT = "uts-v1"
#: 2: a header line with the body's SHA-256, then the body. 1 (before): one JSON object, no hash.
ENTRY_FORMAT = 2
#: The largest cache file read (an entry holds every page of an answer, each at most 16 MiB).
MAX_FILE_BYTES = 256 * 1024 * 1024
#: Corrupt files named one warning each, per cache; beyond, one more line says there are others.
MAX_NAMED_WARNINGS = 5
#: Parameters that never enter a key: the secret, and the page (an entry holds every page).
EXCLUDED_PARAMS = frozenset({"apiKey", "pageNumber"})
#: Memos live in ``<namespace>/.memo/<release>/`` (a name no release can have).
MEMO_FOLDER = ".memo"
#: In each release folder: a random token replaced after every entry written there, so that a
#: memo sees every write, even one in the same tick of a coarse file-system clock (the folder's
#: mtime alone moves in steps of 1 s on some file systems, 2 s on FAT).
GENERATION_FILE = ".generation"
#: ``current`` moves twice a year (UMLS AA and AB releases); re-asking once a day is plenty.
CURRENT_MAX_AGE = 24 * 3600.0
#: One encoder for every key and entry (json.dumps with options builds a new one per call).
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
#: ``base.json`` holds one short URL: a larger one is not ours.
_BASE_LIMIT = 64 * 1024
#: How to choose a cache folder of one's own, for the fix of one that is not.
_ELSEWHERE = f"--cache-dir or {CACHE_DIR_ENV}"


@dataclass(frozen=True)
class CacheKey:
    umls_release: str
    path: str
    params: tuple[tuple[str, str], ...] = ()
    #: SHA-256 of the canonical key, the entry's file name; derived once: a warm run looks up
    #: thousands of keys, and hashing is most of a lookup.
    digest: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        canonical = _COMPACT.encode(self.as_json())
        # A term or code that holds the key would be written in plain text in the entry's
        # header. ``UtsRequest`` refuses it first; this is the second guard, for any key made
        # another way (every request's key is made before it is sent: ``uts.cached``).
        check_not_secret(canonical)
        object.__setattr__(self, "digest", hashlib.sha256(canonical.encode("utf-8")).hexdigest())

    @classmethod
    def make(
        cls, umls_release: str, path: str, params: Mapping[str, str] | None = None
    ) -> CacheKey:
        """Build a key, dropping ``apiKey`` and ``pageNumber`` and sorting the parameters."""
        kept = sorted((k, str(v)) for k, v in (params or {}).items() if k not in EXCLUDED_PARAMS)
        return cls(umls_release=umls_release, path=path, params=tuple(kept))

    def as_json(self) -> list[Any]:
        """The key as stored in an entry, and hashed: ``[release, path, [[name, value], ...]]``."""
        return [self.umls_release, self.path, [list(p) for p in self.params]]

    def describe(self) -> str:
        """For messages: ``/content/2025AB/CUI/C0000001/atoms?sabs=MTH``."""
        query = "&".join(f"{k}={v}" for k, v in self.params)
        return self.path + (f"?{query}" if query else "")


@dataclass(frozen=True, slots=True)
class CacheEntry:
    """One stored answer: HTTP 200 with its JSON result, or 404 ("not found") with ``None``."""

    status: int
    result: Any
    stored_at: float

    @property
    def found(self) -> bool:
        return self.status != 404


def namespace_of(base_url: str) -> str:
    """A folder name for one base URL: readable host and port, plus a hash of the whole URL."""
    normal = base_url.strip().rstrip("/")
    parts = urlsplit(normal)
    host = re.sub(r"[^A-Za-z0-9.-]+", "_", parts.netloc.rsplit("@", 1)[-1]) or "local"
    digest = hashlib.sha256(normal.encode("utf-8")).hexdigest()[:12]
    return f"{host}-{digest}"


def check_cache_root(root: str | Path) -> None:
    """BadInputError if ``root`` is not a folder, UntrustedError if not the user's own."""
    if Path(root).exists() and not Path(root).is_dir():
        raise BadInputError(
            "the cache folder is a file, not a folder",
            path=root,
            hint=f"give a folder with {_ELSEWHERE}",
        )
    files.check_own(root, what="the cache folder", elsewhere=_ELSEWHERE)


class ResponseCache:
    """The cache of one UTS base URL. Safe to share between threads (one file per entry)."""

    def __init__(
        self, root: Path, base_url: str, *, clock: Callable[[], float] = time.time
    ) -> None:
        # Checked here, before any request: every read would fail, and each write after a fetch.
        check_cache_root(root)
        self.root = Path(root)
        self.base_url = base_url
        self.folder = self.root / LAYOUT / namespace_of(base_url)
        self._clock = clock
        self._ready: set[Path] = set()
        self._lock = threading.Lock()
        self._release_dirs: dict[str, str] = {}
        # Why an entry read was not trusted, by key digest: the offline message says it.
        self._rejected: dict[str, str] = {}
        self._warned: set[str] = set()  # the entries said corrupt: each is said once a run
        self._named = 0  # corrupt files named in a warning so far
        self._old_said = False  # the one warning about entries of an earlier version
        self._swept = False  # leftovers removed (before the first write)
        self._trusted: set[Path] = set()  # folders found to be the user's own
        self._trust(self.folder)

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.folder)!r})"

    def _entry_file(self, key: CacheKey) -> str:
        # Plain strings, not pathlib: a warm run looks up thousands of entries.
        folder = self._release_dirs.get(key.umls_release)
        if folder is None:
            folder = os.path.join(self.folder, check_release(key.umls_release))
            self._trust(folder)
            self._release_dirs[key.umls_release] = folder
        return os.path.join(folder, key.digest + ".json")

    def _trust(self, folder: str | Path) -> None:
        """UntrustedError unless every existing folder from the root to ``folder`` is the user's."""
        chain = [self.root]
        for part in Path(folder).relative_to(self.root).parts:
            chain.append(chain[-1] / part)
        for path in chain:
            if path in self._trusted:
                continue
            try:
                st = os.stat(path)
            except OSError:
                return  # not there (nor anything below it), or not to be looked at: not read
            what = "the cache folder" if path == self.root else "a folder of the cache"
            files.check_own(path, what=what, elsewhere=_ELSEWHERE, st=st)
            with self._lock:
                self._trusted.add(path)

    def _ensure(self, folder: Path) -> None:
        with self._lock:
            if folder in self._ready:
                return
            sweep, self._swept = not self._swept, True
        files.make_folders(folder)
        self._trust(folder)  # made by this run, or by someone else meanwhile
        if sweep:
            self._remove_leftovers()
        if not (self.folder / "base.json").exists():
            meta = {"base_url": redact(self.base_url), "layout": LAYOUT}
            files.write_atomic(self.folder / "base.json", _dumps(meta), private=True)
        with self._lock:
            self._ready.add(folder)

    def _remove_leftovers(self) -> None:
        """Before the first write: remove the leftovers of interrupted runs (one warning)."""
        folders = [self.folder]
        for parent in (self.folder, self.folder / MEMO_FOLDER):
            with contextlib.suppress(OSError):
                folders += sorted(p for p in parent.iterdir() if p.is_dir())
        note = files.remove_leftovers(folders)
        if note:
            log.warning("%s", note)

    def get(self, key: CacheKey) -> CacheEntry | None:
        """The stored answer for ``key``, or ``None`` if missing or untrusted (``rejections``)."""
        path = self._entry_file(key)
        with self._lock:
            self._rejected.pop(key.digest, None)

        def entry(head: dict[str, Any], result: Any) -> CacheEntry:
            if head.get("key") != key.as_json():
                raise _Corrupt("it holds the answer to another request")
            status, stored_at = head.get("status"), head.get("stored_at")
            if status not in (200, 404) or not isinstance(stored_at, (int, float)):
                raise _Corrupt("not a cache entry of this version")
            if status == 404 and result is not None:
                raise _Corrupt("a 'not found' entry with a body")
            return CacheEntry(status=int(status), result=result, stored_at=float(stored_at))

        return self._read(path, "cache entry", "fetching it again", entry, key)

    def rejections(self, key: CacheKey | None = None) -> list[str]:
        """Why the last reads of entries (``key``'s only, if given) were not trusted."""
        with self._lock:
            if key is None:
                return list(self._rejected.values())
            return [self._rejected[key.digest]] if key.digest in self._rejected else []

    def _read(
        self,
        path: str | Path,
        what: str,
        instead: str,
        check: Callable[[dict[str, Any], Any], _T],
        key: CacheKey | None = None,
    ) -> _T | None:
        """``check(header, body)`` of a cache file matching its SHA-256; ``None`` if missing,
        unreadable (warned), or not trusted (``_distrust``: ``check`` raised ``_Corrupt``)."""
        raw = _read_or_none(path, what, instead)
        if raw is None:
            return None
        try:
            return check(*_decode(raw))
        except (_Corrupt, _OldFormat) as err:
            self._distrust(key, path, err, what, instead)
            return None

    def _distrust(
        self, key: CacheKey | None, path: str | Path, err: Exception, what: str, instead: str
    ) -> None:
        """Say once (within the warning budget) that a cache file is not trusted, and why."""
        if isinstance(err, _OldFormat):
            why = f"its entry {path} was written by an earlier version, without a checksum"
            with self._lock:
                said, self._old_said = self._old_said, True
                if key is not None:
                    self._rejected[key.digest] = why
            if key is None:  # a memo or current.json of an earlier version: quietly replaced
                log.debug("%s %s is of an earlier version; %s", what, path, instead)
            elif not said:
                log.warning(
                    "%s %s was written by an earlier version of this tool, without a checksum; "
                    "%s (and every other such entry, without a warning each)",
                    what,
                    path,
                    instead,
                )
            return
        with self._lock:
            again = key is not None and key.digest in self._warned
            if key is not None:
                self._rejected[key.digest] = f"its entry {path} is corrupt ({err})"
                self._warned.add(key.digest)
            if not again:
                self._named += 1
            named = self._named
        if again:  # read twice in one run (a batch's cache pass, then its ask): said once
            log.debug("%s %s is corrupt (%s); %s", what, path, err, instead)
            return
        if named <= MAX_NAMED_WARNINGS:
            log.warning("%s %s is corrupt (%s); %s", what, path, err, instead)
        else:
            if named == MAX_NAMED_WARNINGS + 1:
                log.warning(
                    "more cache files are corrupt: they are fetched again without a warning "
                    "each (-v names them)"
                )
            log.info("%s %s is corrupt (%s); %s", what, path, err, instead)

    def put(self, key: CacheKey, status: int, result: Any) -> None:
        """Store one complete answer (status 200 with its result, or 404 with ``None``)."""
        if status not in (200, 404):
            raise ValueError(f"only 200 and 404 answers are cached, not {status}")
        path = Path(self._entry_file(key))
        with self._writing():
            head = {"key": key.as_json(), "status": status, "stored_at": self._clock()}
            self._write(path, head, result if status == 200 else None)
            with self._lock:
                self._rejected.pop(key.digest, None)
            # After the entry: a memo that read the old token is stale from here on.
            files.write_atomic(
                path.parent / GENERATION_FILE, secrets.token_hex(16).encode("ascii"), private=True
            )

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """Around a write of an entry: an ``OSError`` is bad input (the run could not resume)."""
        try:
            yield
        except OSError as err:
            raise _write_error(err, self) from None

    # -- memos: one file that answers a whole run, while the release folder is unchanged ------

    def release_version(self, umls_release: str) -> str | None:
        """What changes whenever an entry of ``umls_release`` is written or removed: ``put``'s token
        and the folder's mtime in ns; ``None`` while there is no folder. (A memo saved while
        another run writes may pass for current: the entries stay the truth.)"""
        folder = os.path.join(self.folder, check_release(umls_release))
        try:
            mtime = os.stat(folder).st_mtime_ns
        except FileNotFoundError:
            return None
        path = os.path.join(folder, GENERATION_FILE)
        if not os.path.lexists(path):
            return f"{mtime}:"  # a folder written before tokens existed: the mtime alone
        raw = _read_or_none(path, GENERATION_FILE, "the memo is not used", limit=64)
        if raw is None:
            return None
        return f"{mtime}:{raw.decode('ascii', 'replace')}"

    def _memo_path(self, umls_release: str, name: str) -> Path:
        # Beside the release folder, never in it: writing a memo must not change its version.
        return self.folder / MEMO_FOLDER / check_release(umls_release) / f"{name}.json"

    def load_memo(self, umls_release: str, name: str) -> Any:
        """A memo saved by ``save_memo``, or ``None``: none, an entry written since, corrupt
        (warned), or of an earlier version. The entries stay the truth."""
        path = self._memo_path(umls_release, name)
        self._trust(path.parent)

        def memo(head: dict[str, Any], data: Any) -> Any:
            if head.get("name") != name:
                raise _Corrupt("it is the memo of another run")
            if head.get("release_version") != self.release_version(umls_release):
                return None  # entries changed since: stale, not corrupt
            return data

        return self._read(path, "cache memo", "reading the entries", memo)

    def save_memo(self, umls_release: str, name: str, data: Any, *, release_version: str) -> None:
        """Save ``data`` as valid while the release folder's version stays ``release_version``."""
        head = {"name": name, "release_version": release_version}
        self._write(self._memo_path(umls_release, name), head, data)

    def current_release(self, *, max_age: float = CURRENT_MAX_AGE) -> str | None:
        """The concrete release ``current`` stood for, if learnt less than ``max_age`` s ago."""

        def current(head: dict[str, Any], body: Any) -> str | None:
            if head.get("kind") != "current" or not isinstance(body, dict):
                raise _Corrupt("not what current.json holds")
            umls_release, stored = body.get("release"), body.get("stored_at")
            concrete = isinstance(umls_release, str) and is_release(umls_release)
            if not isinstance(stored, (int, float)) or not concrete or umls_release == "current":
                raise _Corrupt("not what current.json holds")
            age = self._clock() - float(stored)
            return None if age > max_age or age < 0 else umls_release

        return self._read(self.folder / "current.json", "cache entry", "asking UMLS again", current)

    def set_current_release(self, umls_release: str) -> None:
        check_release(umls_release)
        with self._writing():
            body = {"release": umls_release, "stored_at": self._clock()}
            self._write(self.folder / "current.json", {"kind": "current"}, body)

    def _write(self, path: Path, head: dict[str, Any], body: Any) -> None:
        self._ensure(path.parent)
        files.write_atomic(path, _encode(head, body), private=True)


def _write_error(err: OSError, cache: ResponseCache) -> BadInputError:
    """A failed write to the cache as bad input: what is in the way and what to remove, else the
    cache folder and the fix of ``err``'s kind."""
    path = err.filename2 if err.filename2 is not None else err.filename
    if isinstance(path, str):
        root = shlex.quote(str(cache.root))
        clear = f"or empty the cache: tempmedbench-synonyms cache clear --cache-dir {root}"
        if err.errno == errno.EISDIR:
            return BadInputError(
                "cannot write this cache file: a folder is in its place (this tool never makes "
                "one there)",
                path=path,
                hint=f"remove that folder (rm -r {shlex.quote(path)}), {clear}",
            )
        # The nearest part of the path that exists: a file of the cache's own, where a folder is?
        found = next((p for p in (Path(path), *Path(path).parents) if os.path.lexists(p)), None)
        if found is not None and found.is_relative_to(cache.folder) and not found.is_dir():
            return BadInputError(
                "cannot write in the cache: a file is in the place of one of its folders",
                path=found,
                hint=f"remove that file (rm {shlex.quote(str(found))}), {clear}",
            )
    fix = files.os_fix(err)
    return BadInputError(
        f"cannot write to the cache folder: {files.os_problem(err)}",
        path=cache.folder,
        hint=(f"{fix}; or " if fix else "") + f"give a writable folder with {_ELSEWHERE}",
    )


class _Corrupt(Exception):
    """A cache file that cannot be trusted; the message says why (for the warning)."""


class _OldFormat(Exception):
    """A cache file written by an earlier version, without a checksum."""


def _encode(head: dict[str, Any], body: Any) -> bytes:
    """The bytes of a cache file: a header line (with the body's size and SHA-256), the body."""
    data = _dumps(body)
    digest = hashlib.sha256(data).hexdigest()
    header = {"format": ENTRY_FORMAT, **head, "size": len(data), "sha256": digest}
    return _dumps(header) + b"\n" + data


def _decode(raw: bytes) -> tuple[dict[str, Any], Any]:
    """(header, body) of a cache file, checked against its SHA-256 before the body is parsed;
    ``_Corrupt`` says why it cannot be trusted, ``_OldFormat`` marks an earlier version's."""
    if not raw:
        raise _Corrupt("it is empty")
    head_raw, newline, data = raw.partition(b"\n")
    try:
        head = loads_utf8(head_raw)
    except (ValueError, RecursionError) as err:  # UnicodeDecodeError is a ValueError
        raise _Corrupt(f"not JSON: {_short(err)}") from None
    if not isinstance(head, dict):
        raise _Corrupt("not a cache entry of this version")
    if not newline and head.get("format", 1) == 1:
        raise _OldFormat()
    if head.get("format") != ENTRY_FORMAT or not newline:
        raise _Corrupt("not a cache entry of this version")
    size, digest = head.get("size"), head.get("sha256")
    if type(size) is not int or not isinstance(digest, str):
        raise _Corrupt("its header has no size and SHA-256 of the body")
    if len(data) != size:
        raise _Corrupt(
            f"its body is {len(data)} bytes, its header says {size}: cut short or edited"
        )
    actual = hashlib.sha256(data).hexdigest()
    if actual != digest:
        raise _Corrupt(
            f"its body's SHA-256 is {actual}, its header says {digest[:64]}: edited or damaged"
        )
    try:
        return head, loads_utf8(data)
    except (ValueError, RecursionError) as err:
        raise _Corrupt(f"its body is not strict JSON: {_short(err)}") from None


def _short(what: object) -> str:
    text = str(what)
    return text if len(text) <= 200 else text[:200] + "..."


def _dumps(doc: object) -> bytes:
    return _COMPACT.encode(doc).encode("utf-8")


@dataclass
class NamespaceInfo:
    """What ``cache info`` says about one base URL's answers."""

    folder: str
    base_url: str | None
    releases: dict[str, int] = field(default_factory=dict)
    entries: int = 0
    bytes: int = 0


@dataclass
class CacheInfo:
    """What ``cache info`` reports: where the cache is and what it holds."""

    root: str
    exists: bool
    entries: int = 0
    bytes: int = 0
    temporary_files: int = 0
    namespaces: list[NamespaceInfo] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)  # (each namespace's releases were counted in sorted order)


def _files(folder: Path) -> Iterable[Path]:
    return sorted(p for p in folder.iterdir() if p.is_file()) if folder.is_dir() else []


def _read_or_none(
    path: str | Path, what: str, instead: str, *, limit: int | None = None
) -> bytes | None:
    """The bytes of a cache file (regular only, at most ``limit``), or ``None`` if missing or
    unreadable (warned: it costs time, never the run); not the user's own: ``UntrustedError``."""
    try:
        return files.read_regular(path, what="it", limit=limit or MAX_FILE_BYTES, own=_ELSEWHERE)
    except FileNotFoundError:
        return None
    except UntrustedError:
        raise
    except OSError as err:
        problem = str(err.strerror or err)
    except BadInputError as err:  # not a regular file, or too large
        problem = err.problem
    log.warning("cannot read %s %s (%s); %s", what, path, problem, instead)
    return None


#: What to do when the cache folder cannot be read or emptied.
_ANOTHER_FOLDER = "or give another folder with --cache-dir or TEMPMEDBENCH_CACHE_DIR"


def cache_info(root: Path) -> CacheInfo:
    """Count the entries (and leftovers) under ``root``, through links as a run reads them;
    a folder that cannot be read is BadInputError naming the path and the fix."""
    try:
        check_cache_root(root)
        layout = Path(root) / LAYOUT
        _reachable(layout)
        info = CacheInfo(root=str(root), exists=layout.is_dir())
        if not info.exists:
            return info
        for ns in sorted(p for p in layout.iterdir() if p.is_dir()):
            base_url: str | None = None
            with contextlib.suppress(OSError, ValueError, KeyError, TypeError, BadInputError):
                raw = files.read_regular(ns / "base.json", limit=_BASE_LIMIT)
                base_url = str(loads_utf8(raw)["base_url"])
            nsi = NamespaceInfo(folder=ns.name, base_url=base_url)
            for umls_release in sorted(
                p for p in ns.iterdir() if p.is_dir() and not p.name.startswith(".")
            ):
                count = 0
                for f in _files(umls_release):
                    if f.name.endswith(files.TMP_SUFFIX):
                        info.temporary_files += 1
                    elif f.suffix == ".json":
                        count += 1
                        nsi.bytes += f.stat().st_size
                nsi.releases[umls_release.name] = count
                nsi.entries += count
            info.temporary_files += sum(1 for f in _files(ns) if f.name.endswith(files.TMP_SUFFIX))
            info.entries += nsi.entries
            info.bytes += nsi.bytes
            info.namespaces.append(nsi)
        return info
    except OSError as err:
        raise files.os_error(err, what="the cache folder", instead=_ANOTHER_FOLDER) from None


@dataclass(frozen=True)
class Cleared:
    """What ``clear_cache`` removed: the entries it deleted, and notes on what it left."""

    removed: int
    #: symbolic links removed whose targets, outside the cache's own folder, were left alone
    notes: list[str] = field(default_factory=list)


def clear_cache(root: Path) -> Cleared:
    """Delete every cached answer under ``root`` (our own ``uts-v1`` folder only; a symbolic link
    in it is removed as a link, what it points to left, uncounted, with a note); count them."""
    layout = Path(root) / LAYOUT
    try:
        check_cache_root(root)
        removed, links = _own_entries(layout)
        targets = [f"{link} -> {os.readlink(link)}" for link in links]
    except OSError as err:
        raise files.os_error(err, what="the cache folder", instead=_ANOTHER_FOLDER) from None
    try:
        if layout.is_symlink():
            layout.unlink()
        elif layout.is_dir():
            shutil.rmtree(layout)
    except OSError as err:
        fix = files.os_fix(err)
        raise BadInputError(
            f"cannot delete the cache: {files.os_problem(err)}",
            path=layout,
            hint=(f"{fix}; or " if fix else "") + "delete the folder by hand",
        ) from None
    notes = []
    if links:
        what = "what it points to" if len(links) == 1 else "what they point to"
        notes.append(
            f"{plural(len(links), 'symbolic link')} removed, not {what}: the cached answers "
            f"there stay on disk ({bounded_list(targets)}); delete them there if you meant to"
        )
    return Cleared(removed, notes)


def _own_entries(layout: Path) -> tuple[int, list[Path]]:
    """The entries deleting ``layout`` deletes (no link followed), and the links it holds."""
    _reachable(layout)
    if layout.is_symlink():
        return 0, [layout]
    if not layout.is_dir():
        return 0, []
    count, links = 0, []

    def fail(err: OSError) -> None:
        raise err

    for folder, subfolders, names in os.walk(layout, onerror=fail):
        here = Path(folder)
        depth = len(here.relative_to(layout).parts)
        for name in sorted(subfolders + names):
            path = here / name
            if path.is_symlink():
                links.append(path)
            elif depth == 2 and not here.name.startswith(".") and name.endswith(".json"):
                count += path.is_file()
    return count, links


def _reachable(path: Path) -> None:
    """OSError if ``path`` cannot be reached (``is_dir`` may say "missing"); nothing if missing."""
    with contextlib.suppress(FileNotFoundError, NotADirectoryError):
        os.lstat(path)
