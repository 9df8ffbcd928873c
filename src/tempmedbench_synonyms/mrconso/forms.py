"""The files NLM ships MRCONSO.RRF (and MRDEF, MRREL, MRSTY, MRHIER, MRSAB) in (docs/reference.md,
"MRCONSO.RRF as NLM ships it"), read as one stream of bytes, never unpacked; a compressed form is
inflated in a reader thread that hands blocks over a bounded queue.
"""

from __future__ import annotations

import functools
import itertools
import os
import queue
import re
import stat
import struct
import threading
import zipfile
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from tempmedbench_synonyms import runtime, zips
from tempmedbench_synonyms.errors import BadInputError, bounded_list
from tempmedbench_synonyms.files import file_kind, open_regular, os_fix
from tempmedbench_synonyms.zips import open_member, reading_member

#: Bytes read (and, decompressed, handed on) at a time.
READ_SIZE = 1 << 20
#: Blocks waiting between the reader thread and the scan: memory is bounded by this many blocks.
QUEUE_BLOCKS = 4

#: The Metathesaurus files a META may hold (MRCONSO.RRF must be there).
META_FILES = ("MRCONSO", "MRDEF", "MRREL", "MRSTY", "MRHIER", "MRSAB")


@functools.cache
def _part(name: str) -> re.Pattern[str]:
    """A split part of ``name``.RRF: ``MRCONSO.RRF.aa.gz``."""
    return re.compile(rf"{name}\.RRF\.([a-z]{{2,3}})\.gz")


def _form(base: str, name: str) -> str | None:
    if base in (f"{name}.RRF", f"{name}.RRF.gz"):
        return "file" if base.endswith(".RRF") else "gzip"
    return "parts" if _part(name).fullmatch(base) else None


_HINT = (
    "--mrconso takes MRCONSO.RRF as NLM ships it: MRCONSO.RRF, MRCONSO.RRF.gz, the parts "
    "MRCONSO.RRF.aa.gz, .ab.gz, ..., their META folder, umls-2025AB-metathesaurus-full.zip, "
    "2025ab-1-meta.nlm or umls-2025AB-full.zip"
)

#: What ``--meta`` takes (``locate_meta``'s hint where ``--mrconso``'s would name the wrong flag).
_META_HINT = (
    "--meta takes a META folder as NLM ships it, or what holds one: the release folder, "
    "umls-2025AB-metathesaurus-full.zip, 2025ab-1-meta.nlm or umls-2025AB-full.zip"
)

#: A UMLS release inside a file or folder name, as NLM writes it: ``2025AB``, ``umls-2025AB-full``,
#: ``2025ab-1-meta.nlm`` (not inside a longer run of letters and digits).
_RELEASE_NAME = re.compile(r"(?<![0-9A-Za-z])([0-9]{4}A[AB])(?![0-9A-Za-z])", re.IGNORECASE)

#: What to do with a zip member that cannot be read (``zips.reading_member``).
_ZIP_HINT = "extract MRCONSO.RRF (or its parts), or zip it again with standard deflate"


@dataclass
class MrconsoInput:
    path: Path
    kind: str  # file, gzip, parts, zip, nested zip, pipe
    #: zip members read, outermost first (the .nlm, then MRCONSO.RRF or the parts inside it)
    members: list[str] = field(default_factory=list)
    #: the split parts in the order read (file names; inside a zip, also in ``members``)
    parts: list[str] = field(default_factory=list)
    #: bytes the progress counts to (compressed bytes for compressed forms); None for a pipe
    size: int | None = None
    #: the UMLS release the names say (``named_release``); None when they say none
    release: str | None = None
    #: a full release zip's: which files its .nlm holds (``NlmListing``)
    listing: NlmListing | None = field(default=None, repr=False, compare=False)
    _open: Callable[[], Iterator[tuple[int, bytes]]] | None = field(
        default=None, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        if self.release is None:  # the names nearest MRCONSO first: zip members, then the path
            self.release = named_release([*reversed(self.members), str(self.path.absolute())])

    def to_json(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "kind": self.kind,
            "members": list(self.members),
            "parts": list(self.parts),
        }

    def blocks(self, stop: threading.Event) -> Generator[tuple[int, bytes], None, None]:
        """Yield (bytes of ``size`` consumed, next MRCONSO block) until the end; compressed forms
        are read in a thread that ``stop`` ends early."""
        assert self._open is not None
        yield from _threaded(self._open, stop, self.path)


@dataclass
class NlmListing:
    """Which of ``META_FILES`` the ``.nlm`` files of a full release zip hold, and how many bytes
    each takes there. An .nlm lists its members at its end, and it is itself a member of the zip
    (no seeking in it when deflated): it is listed by reading it through, in a pass that reads one
    of its files before it is listed (which passes every member) or in ``files``' (``size``'s)
    own, never when the zip is opened (a question whose parts are built reads none of it)."""

    path: Path
    nlms: list[str]
    #: each .nlm's name, CRC-32 and compressed size in the zip's central directory: what a kept
    #: listing is of (a zip changed where its identity does not look keeps its size and times)
    stamp: list[tuple[str, int, int]] = field(default_factory=list)
    #: once a pass has read every member (None: not yet), each file held: its members and their
    #: bytes in the .nlm files (as their local headers say, or as passed when a data descriptor
    #: follows a member instead)
    held: dict[str, tuple[int, int]] | None = None

    @property
    def known(self) -> frozenset[str] | None:
        """The files held, once listed (None: not yet)."""
        return None if self.held is None else frozenset(self.held)

    def files(self) -> frozenset[str]:
        """The files held, the .nlm files read through first if no pass has yet."""
        return frozenset(self._listed())

    def size(self, file: str) -> int:
        """``file``'s bytes in the .nlm files (what a read of it counts, once they are listed),
        read through first if no pass has yet; a file they do not hold is bad input."""
        held = self._listed()
        if file not in held:
            raise _lacks(self.path, self.nlms, file)
        return held[file][1]

    def _listed(self) -> dict[str, tuple[int, int]]:
        if self.held is None:
            found = MrconsoInput(self.path, "nested zip", listing=self)
            try:
                next(_nested_blocks(found, self.nlms, None), None)  # (yields none: runs through)
            except BaseException as err:  # as a pass in the reader thread says it
                raise _read_error(err, self.path) from None
        assert self.held is not None
        return self.held


def locate_meta(path: Path) -> dict[str, MrconsoInput]:
    """Each file of ``META_FILES`` that ``path`` (a META folder, or a form holding one) holds;
    MRCONSO must be among them. A full release zip gives each file, with the ``listing`` that
    says which its .nlm holds (read when asked)."""
    try:
        mrconso = locate(path)
    except BadInputError as err:
        if err.hint == _HINT:  # the path itself is wrong: say what --meta takes
            err.hint = _META_HINT
        raise
    found = {"MRCONSO": mrconso}
    if mrconso.kind == "pipe":
        return found
    zipped = mrconso.kind in ("zip", "nested zip")
    if zipped:
        with zipfile.ZipFile(mrconso.path) as zf:
            names = [i.filename for i in zf.infolist() if not i.is_dir()]
    folder = mrconso.path if mrconso.path.is_dir() else mrconso.path.parent
    for name in META_FILES[1:]:
        if mrconso.kind == "nested zip":  # the same listing for all
            found[name] = _in_zip(mrconso.path, name, listing=mrconso.listing)
        elif zipped and _members(names, name) is not None:
            found[name] = _in_zip(mrconso.path, name)
        elif not zipped and holds(folder, name):
            found[name] = _in_folder(folder, name, meta=False)
    return found


def holds(folder: Path, name: str) -> bool:
    """Whether ``folder`` holds ``name``.RRF in a form NLM ships: plain, ``.gz`` or parts."""
    return any(_form(n, name) for n in os.listdir(folder))


def named_release(names: Iterable[str]) -> str | None:
    """The UMLS release (``2025AB``) of the innermost of ``names`` holding exactly one match of
    ``_RELEASE_NAME`` (SPEC 12), each read from its last component; ``None`` if none does."""
    for name in names:
        for part in reversed(name.split("/")):
            said = _RELEASE_NAME.findall(part)
            if len(said) == 1:
                return str(said[0]).upper()
    return None


def locate(path: Path, name: str = "MRCONSO") -> MrconsoInput:
    """Find ``name``.RRF (any of ``META_FILES``) in what the user named, in any form."""
    path = Path(path)
    try:
        st = path.stat()
    except OSError as err:  # a hint of the error's own (permissions, a name too long) first
        raise BadInputError(
            "no such file or folder" if isinstance(err, FileNotFoundError) else
            f"cannot read: {err.strerror or err}",
            path=path,
            hint=os_fix(err) or _HINT,
        ) from None  # fmt: skip
    if stat.S_ISDIR(st.st_mode):
        return _in_folder(path, name)
    if stat.S_ISFIFO(st.st_mode):  # <(unzip -p ...) is a pipe too, behind /dev/fd/N
        return MrconsoInput(path, "pipe", _open=lambda: _pipe_blocks(path))
    if not stat.S_ISREG(st.st_mode):
        raise BadInputError(
            f"is {file_kind(st.st_mode)}, not a regular file, a folder or a pipe",
            path=path,
            hint=_HINT,
        )
    try:
        with open_regular(path, what="--mrconso") as f:
            magic = f.read(4)
    except OSError as err:
        raise BadInputError(f"cannot read: {err.strerror or err}", path=path) from None
    if magic.startswith(b"PK\x03\x04") or magic.startswith(b"PK\x05\x06"):
        return _in_zip(path, name)
    if _part(name).fullmatch(path.name):
        return _parts(path.parent, path, name)
    if magic.startswith(b"\x1f\x8b"):
        return MrconsoInput(path, "gzip", size=st.st_size, _open=lambda: _gunzip(_file_reads(path)))
    return MrconsoInput(path, "file", size=st.st_size, _open=lambda: _file_reads(path))


def _in_folder(folder: Path, name: str, *, meta: bool = True) -> MrconsoInput:
    plain = f"{name}.RRF"
    for where in (folder, folder / "META") if meta else (folder,):
        for file in (where / plain, where / f"{plain}.gz"):
            if file.is_file():
                return locate(file, name)
        if where.is_dir() and any(_part(name).fullmatch(p.name) for p in where.iterdir()):
            return _parts(where, None, name)
    raise BadInputError(
        f"holds neither {plain}, {plain}.gz nor its parts {plain}.aa.gz, ... "
        "(nor does a META folder in it)",
        path=folder,
        hint=_HINT,
    )


def _parts(folder: Path, named: Path | None, name: str) -> MrconsoInput:
    """All parts beside the one named (or in the folder), in name order, from the first."""
    parts = sorted(p for p in folder.iterdir() if _part(name).fullmatch(p.name) and p.is_file())
    if named is not None and named not in parts:  # pragma: no cover - a part that vanished
        parts = sorted([*parts, named])
    _check_parts([p.name for p in parts], folder, name)
    total = sum(p.stat().st_size for p in parts)
    return MrconsoInput(
        named or folder, "parts", parts=[p.name for p in parts], size=total,
        _open=lambda: _gunzip(_file_reads(*parts)),
    )  # fmt: skip


def _check_parts(names: list[str], where: Path | str, name: str) -> None:
    """Parts run .aa, .ab, ... with none missing: a gap would join halves of two rows."""
    suffixes = [m.group(1) for m in map(_part(name).fullmatch, names) if m]
    expected = [_suffix(i, len(s)) for i, s in enumerate(suffixes)]
    if suffixes != expected:
        gap = next(e for s, e in zip([*suffixes, ""], expected, strict=False) if s != e)
        raise BadInputError(
            f"the split parts of {name}.RRF are not complete: found {bounded_list(names)}; "
            f"{name}.RRF.{gap}.gz is missing or out of order",
            path=where,
            hint=f"download the release again, or put every part {name}.RRF.aa.gz, .ab.gz, ... "
            "in one folder",
        )


def _suffix(i: int, width: int) -> str:
    letters = []
    for _ in range(width):
        i, r = divmod(i, 26)
        letters.append(chr(ord("a") + r))
    return "".join(reversed(letters))


def _members(names: list[str], file: str) -> tuple[list[str], str] | None:
    """The ``file`` member(s) of a zip in read order, and their form; None if none.

    One in a META folder is preferred; in one folder plain, then gzip, then parts; two folders
    of the same rank are ambiguous.
    """
    groups: dict[tuple[str, str], list[str]] = {}
    for name in names:
        folder, _, base = name.rpartition("/")
        kind = _form(base, file)
        if kind is not None:
            groups.setdefault((folder, kind), []).append(name)
    if not groups:
        return None
    rank = {"file": 0, "gzip": 1, "parts": 2}
    folder, kind = min(groups, key=lambda k: (not _is_meta(k[0]), rank[k[1]], k[0]))
    rivals = sorted({f for f, _ in groups if f != folder and _is_meta(f) == _is_meta(folder)})
    if rivals:
        found = sorted(n for g in groups.values() for n in g)
        raise BadInputError(
            f"holds {file} in more than one folder ({folder}/, {bounded_list(rivals)}): "
            f"{bounded_list(found)}",
            hint="pass the one you mean, extracted, or a zip with one release in it",
        )
    return sorted(groups[(folder, kind)]), kind


def _is_meta(folder: str) -> bool:
    return folder.rsplit("/", 1)[-1] == "META"


def _in_zip(path: Path, file: str, *, listing: NlmListing | None = None) -> MrconsoInput:
    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as err:
        raise BadInputError(f"not a readable zip: {err}", path=path, hint=_HINT) from None
    names = [i.filename for i in infos if not i.is_dir()]
    sizes = {i.filename: i.file_size for i in infos}
    stamps = {i.filename: (i.filename, i.CRC, i.compress_size) for i in infos}
    try:
        found = _members(names, file)
    except BadInputError as err:
        raise BadInputError(err.problem, path=path, hint=err.hint) from None
    if found is not None:
        members, kind = found
        parts = [m.rsplit("/", 1)[-1] for m in members] if kind == "parts" else []
        _check_parts(parts, path, file)
        reads = functools.partial(_zip_reads, path, members)
        return MrconsoInput(
            path, "zip", members=members, parts=parts, size=sum(sizes[m] for m in members),
            _open=reads if kind == "file" else lambda: _gunzip(reads()),
        )  # fmt: skip
    nlms = sorted(n for n in names if n.endswith("-meta.nlm"))
    if nlms:
        found_input = MrconsoInput(
            path, "nested zip", size=sum(sizes[n] for n in nlms),
            release=named_release([*nlms, str(path.absolute())]),
            listing=listing or NlmListing(path, nlms, [stamps[n] for n in nlms]),
        )  # fmt: skip
        found_input._open = lambda: _nested_blocks(found_input, nlms, file)
        return found_input
    raise BadInputError(
        f"no {file}.RRF, {file}.RRF.gz, parts {file}.RRF.aa.gz, ... nor *-meta.nlm among its "
        f"{len(names):,} members ({bounded_list(names) or 'none'})",
        path=path,
        hint=_HINT,
    )


def _zip_reads(path: Path, members: list[str]) -> Iterator[tuple[int, bytes]]:
    done = 0
    with zipfile.ZipFile(path) as zf:
        for name in members:
            with reading_member(path, zf, name, hint=_ZIP_HINT), open_member(zf, name) as f:
                while raw := f.read(READ_SIZE):
                    done += len(raw)
                    yield done, raw


def _nested_blocks(
    found: MrconsoInput, nlms: list[str], file: str | None
) -> Iterator[tuple[int, bytes]]:
    """``file`` inside each ``*-meta.nlm`` of a full release zip, read from the inner zip's local
    headers in one forward pass (no seeking); members are added to ``found`` as they come.

    Once ``found.listing`` is known, the pass counts the file's own bytes (to its
    ``NlmListing.size``) and ends after its last member, once it has read the members and bytes
    listed (else it reads on to the end, which lists the .nlm files again: no row is lost to a
    listing that is wrong). Before, it counts its place in the .nlm files (to their ``size``) and
    reads them to the end, which lists them (``file`` None: a pass for that alone)."""
    listing = found.listing
    held: dict[str, tuple[int, int]] = {}  # what the pass finds: each file's members, bytes
    own = None  # the file's members and bytes, when listed
    if file is not None and listing is not None and listing.held is not None:
        own = listing.held.get(file)
    count = None if own is None else _OwnCount(own[1])
    done_before = 0
    with zipfile.ZipFile(found.path) as zf:
        for nlm in nlms:
            with reading_member(found.path, zf, nlm, hint=_ZIP_HINT):  # only its opening
                opened = open_member(zf, nlm)
            with opened as f:
                counted = _CountingReader(f, done_before)
                try:
                    for name, data, passed in _local_members(counted):
                        base = name.rsplit("/", 1)[-1]
                        start = counted.done
                        form = None if file is None else _form(base, file)
                        if form is None or file is None:
                            for _ in passed:  # another member (any, to list): read through
                                pass
                        else:
                            if form == "parts":
                                found.parts.append(base)
                                _check_parts(found.parts, f"{found.path} > {nlm}", file)
                            if not found.members:
                                found.members.append(nlm)
                            found.members.append(name)
                            reads = (
                                ((counted.done, raw) for raw in data)
                                if count is None
                                else count.of(data, counted)
                            )
                            yield from reads if form == "file" else _gunzip(reads)
                        passed_bytes = counted.done - start  # (a data descriptor's given back)
                        for held_file in (m for m in META_FILES if _form(base, m)):
                            members, size = held.get(held_file, (0, 0))
                            held[held_file] = (members + 1, size + passed_bytes)
                        if file is not None and own is not None and held.get(file) == own:
                            return  # its last member read (as listed): the rest is listed
                except zipfile.BadZipFile as err:  # the damaged file is the .nlm ("it")
                    raise _read_error(err, f"{found.path} > {nlm}") from None
                done_before = counted.done
    if listing is not None and (listing.held is None or file is not None):
        listing.held = held  # (read through: what the .nlm files hold, whatever was listed)
    if file is not None and len(found.members) < 2:
        raise _lacks(found.path, nlms, file)


class _OwnCount:
    """What the progress of a full zip's file shows once its ``size`` there is known: its bytes
    read, from 0 to ``size``, never back (an inflater reads ahead of the end of a member that a
    data descriptor follows, and gives the bytes back there) nor past it."""

    def __init__(self, size: int) -> None:
        self.size, self.read, self.shown = size, 0, 0

    def of(self, data: Iterator[bytes], counted: _CountingReader) -> Iterator[tuple[int, bytes]]:
        """Each block of the member whose ``data`` ``counted`` is at the start of."""
        start = counted.done
        for raw in data:
            self.shown = max(self.shown, min(self.size, self.read + counted.done - start))
            yield self.shown, raw
        self.read += counted.done - start


def _lacks(path: Path, nlms: list[str], file: str) -> BadInputError:
    return BadInputError(
        f"none of its members {bounded_list(nlms)} holds {file}.RRF or its parts",
        path=path,
        hint=_HINT,
    )


class _CountingReader:
    """Reads ``f`` forward, counting the bytes given; bytes read too far can be given back."""

    def __init__(self, f: IO[bytes], done: int) -> None:
        self.f = f
        self.done = done
        self.head = b""

    def read(self, n: int) -> bytes:
        """``n`` bytes, fewer only at the end: what was given back, then read on."""
        data, self.head = self.head[:n], self.head[n:]
        while len(data) < n:  # (a signature after a data descriptor may lie across the two)
            more = self.f.read(n - len(data))
            if not more:
                break
            data += more
        self.done += len(data)
        return data

    def give_back(self, data: bytes) -> None:
        self.head = data + self.head
        self.done -= len(data)


def _read_exact(f: _CountingReader, n: int) -> bytes:
    data = b""
    while len(data) < n:
        more = f.read(n - len(data))
        if not more:
            raise zipfile.BadZipFile("truncated local header")
        data += more
    return data


#: What may follow the last member of a zip read forward: the central directory, the records of
#: its end (a zip with no member).
_AFTER_MEMBERS = frozenset({b"PK\x01\x02", b"PK\x06\x06", b"PK\x05\x06"})


def _local_members(
    f: _CountingReader,
) -> Iterator[tuple[str, Iterator[bytes], Iterator[bytes]]]:
    """(name, its decompressed bytes, its bytes as stored) for each member of a zip read forward
    from the start; one of each member's iterators must be read to its end before the next. The
    stored bytes pass over a member the caller does not want without inflating it (a full
    release's .nlm is read through once for each file indexed), when its header gives its size."""
    name = ""
    while True:
        sig = f.read(4)
        if sig in _AFTER_MEMBERS:  # the central directory: no more members
            return
        if len(sig) < 4:  # cut short: later members would be lost
            raise zipfile.BadZipFile(
                f"it ends after member {name}, with no central directory (a truncated file?)"
                if name
                else "it is empty"
            )
        if sig != b"PK\x03\x04":  # a size in a header was wrong: later members would be lost
            raise zipfile.BadZipFile(
                f"member {name} does not end where its local header says (no member header "
                "after it)"
                if name
                else "no member header at its start"
            )
        (_, flags, method, _, _, _, csize, usize, nlen, xlen) = struct.unpack(
            "<HHHHHIIIHH", _read_exact(f, 26)
        )
        name = _read_exact(f, nlen).decode("utf-8" if flags & 0x800 else "cp437")
        extra = _read_exact(f, xlen)
        zip64 = _zip64_field(extra)
        if csize == 0xFFFFFFFF or usize == 0xFFFFFFFF:  # the zip64 field holds the sizes
            pos = 8 if usize == 0xFFFFFFFF else 0  # the compressed one after the uncompressed
            if zip64 is None or (csize == 0xFFFFFFFF and len(zip64) < pos + 8):
                raise zipfile.BadZipFile("zip64 sizes missing")
            if csize == 0xFFFFFFFF:
                (csize,) = struct.unpack_from("<Q", zip64, pos)
        if flags & 1:
            raise zipfile.BadZipFile(f"member {name} is encrypted")
        if method == zipfile.ZIP_STORED:
            if flags & 8:
                raise zipfile.BadZipFile(f"member {name} is stored with no size in its header")
            yield name, _stored(f, csize), _stored(f, csize)
        elif method == zipfile.ZIP_DEFLATED:
            # (with a data descriptor, no size: the member's end is found by inflating it)
            size = csize if not flags & 8 else None
            yield name, _inflated(f, size), _inflated(f, None) if size is None else _stored(f, size)
            if flags & 8:  # a data descriptor follows: optional signature, crc, two sizes
                sizes = 16 if zip64 is not None else 8
                if _read_exact(f, 4) == b"PK\x07\x08":
                    _read_exact(f, 4)
                _read_exact(f, sizes)
        else:
            raise zipfile.BadZipFile(f"member {name} uses compression method {method}")


def _zip64_field(extra: bytes) -> bytes | None:
    """The zip64 extra field (tag 1) of a local header, if it has one."""
    i = 0
    while i + 4 <= len(extra):
        tag, size = struct.unpack("<HH", extra[i : i + 4])
        if tag == 1:
            return extra[i + 4 : i + 4 + size]
        i += 4 + size
    return None


def _stored(f: _CountingReader, size: int) -> Iterator[bytes]:
    left = size
    while left:
        raw = f.read(min(READ_SIZE, left))
        if not raw:
            raise zipfile.BadZipFile("truncated member")
        left -= len(raw)
        yield raw


def _inflated(f: _CountingReader, size: int | None) -> Iterator[bytes]:
    d = zips.inflate.decompressobj(-15)
    left = size
    while not d.eof:
        raw = f.read(READ_SIZE if left is None else min(READ_SIZE, left))
        if not raw:
            raise zipfile.BadZipFile("truncated member")
        if left is not None:
            left -= len(raw)
        yield from _drained(d, raw)
    if d.unused_data:  # read past the member's end (only with a data descriptor)
        f.give_back(d.unused_data)


# -- plain reads, gzip, pipes, the reader thread -------------------------------------------------


def _file_reads(*paths: Path, regular: bool = True) -> Iterator[tuple[int, bytes]]:
    """The bytes of ``paths`` one after the other, with the count read so far."""
    done = 0
    for path in paths:
        with open_regular(path, what="--mrconso") if regular else open(path, "rb") as f:
            while raw := f.read(READ_SIZE):
                done += len(raw)
                yield done, raw


def _pipe_blocks(path: Path) -> Iterator[tuple[int, bytes]]:
    """A pipe, read once: gzip if it starts like gzip, plain otherwise."""
    reads = _file_reads(path, regular=False)
    first = next(reads, None)
    if first is not None:
        reads = itertools.chain([first], reads)
        yield from _gunzip(reads) if first[1].startswith(b"\x1f\x8b") else reads


def _gunzip(raws: Iterable[tuple[int, bytes]]) -> Iterator[tuple[int, bytes]]:
    """Decompress gzip data (any number of members; parts are one gzip), handing on at most
    READ_SIZE at a time with the count of compressed bytes read, for the progress."""
    d = zips.inflate.decompressobj(31)
    started = False
    for done, raw in raws:
        while raw:
            started = True
            for out in _drained(d, raw):
                yield done, out
            if d.eof:
                raw = d.unused_data
                d = zips.inflate.decompressobj(31)
                started = False
            else:
                raw = b""
    if started:
        raise EOFError("the gzip data ends before its end marker (a truncated file?)")


def _drained(d: Any, raw: bytes) -> Iterator[bytes]:
    """What ``d`` (a decompressor) makes of ``raw``, handed on at most READ_SIZE at a time, up to
    its stream's end (what follows is ``d.unused_data``; zlib keeps it as the tail too). A full
    output may leave more waiting with no input left (ISA-L takes the input in): it is asked for."""
    while True:
        out = d.decompress(raw, READ_SIZE)
        if out:
            yield out
        raw = d.unconsumed_tail
        if d.eof or (not raw and len(out) < READ_SIZE):
            return


_END = object()


def _threaded(
    produce: Callable[[], Iterator[tuple[int, bytes]]], stop: threading.Event, path: Path
) -> Generator[tuple[int, bytes], None, None]:
    """Run ``produce`` in a reader thread; yield its blocks here, at most QUEUE_BLOCKS ahead."""
    q: queue.Queue[Any] = queue.Queue(maxsize=QUEUE_BLOCKS)

    def put(item: Any) -> bool:
        while not stop.is_set():
            try:
                q.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def run() -> None:
        try:
            for item in produce():
                if not put(item):
                    return
            put(_END)
        except BaseException as err:  # handed to the scan, which reports it
            put(err)

    thread = runtime.start_thread(run, name="mrconso-reader")
    try:
        while True:
            item = q.get()
            if item is _END:
                return
            if isinstance(item, BaseException):
                raise _read_error(item, path)
            yield item
    finally:
        stop.set()
        thread.join(timeout=1.0)


def _read_error(err: BaseException, path: Path | str) -> BaseException:
    if isinstance(err, BadInputError):
        return err
    if isinstance(err, (OSError, *zips.INFLATE_ERRORS, zipfile.BadZipFile, EOFError, ValueError)):
        what = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        return BadInputError(
            f"cannot read: {what}",
            path=path,
            hint="the file looks damaged or truncated; download it again",
        )
    return err
