"""The SNOMED CT Global Patient Set, or an International Edition RF2 snapshot, as a lean index.

Four sources give the same index (SPEC section 6):

    gps-tsv     the GPS file itself: ConceptID, Active, FSN, USPreferredTerm (tab-separated)
    gps-zip     the GPS zip: its member whose name contains "GPSRelease" and ends in ".txt"
    rf2-folder  an International Edition RF2 release folder: its Concept, Description and
                Language refset snapshot files, wherever they sit inside
    rf2-zip     the same, zipped

The index is one plain dict from concept identifier (a string, never a number) to one string:
Active, FSN and US preferred term joined by tabs. :meth:`ConceptIndex.get` splits it into the
named tuple ``Concept(fsn, us_pt, active)`` when a concept is asked for ("" means "no term"). For
the GPS that string is the rest of the file's line, as read: one object kept per row instead of
four (a tuple and three strings), which keeps the ~380,000 concepts of the GPS under 100 MB and
their loading within about 3x the time of a bare loop that splits the file's lines (measured by
``bench/bench_gps.py``). The fast path checks all rows in bulk after its loop; on any anomaly a
second, line-by-line pass names the line. No pydantic per row, on purpose.

RF2 rows are read in three steps, in this order (SNOMED CT Release File Specifications, "Snapshot"
and "Component versioning"):

1. per component identifier (concept ``id``, description ``id``, language refset member ``id``),
   only the row with the greatest ``effectiveTime`` counts: a snapshot may hold several versions;
2. only rows of the International Edition's modules (core and model component) count: a US
   Edition snapshot holds the International rows and the US extension's, and the GPS is
   International only; the rows of other modules are counted in ``notes``;
3. then the filters of SPEC section 6 (active, description type, US English refset, preferred).

Step 1 costs no memory for the row versions when every identifier is listed once (the usual
snapshot): the rows are read once, and a 64-bit hash of each identifier is kept (8 bytes a row, in
256 buckets) to prove it. Only when an identifier repeats is the file read a second time, keeping
the rows of the repeated identifiers until their latest version is known. Exactness costs time:
hashing every row (and checking every row's module) makes the RF2 load 20-45% slower than a
reader that ignores versions and modules (measured with ``bench/bench_gps.py``'s RF2 snapshot).
``effectiveTime`` is read, and checked to be a YYYYMMDD date, only for an identifier that
repeats: nothing else uses it, and checking it on millions of rows would only cost time.

The files are read concepts first, then the language refset (the set of US preferred description
identifiers), then descriptions. The concepts' dict becomes the index in place: each description
kept is written into its concept's value (one string for both terms), so that no dict of terms
and no copy of a concept identifier per description row is held; for the International Edition's
size (380,000 concepts, 1.9 million descriptions, 3.8 million refset rows) the peak is 220-240
MiB resident, interpreter included, ~190 MiB of it Python allocations (``bench/bench_gps.py``).

Tolerated, and reported in ``notes``: CRLF line ends, a UTF-8 byte order mark, trailing empty
header cells, blank lines at the end of a file, RF2 rows of other modules, RF2 components listed
more than once. Refused with ``BadInputError`` (file, line, problem): a missing column, a row of the
wrong width, an ``Active`` other than ``0``/``1``, a GPS ``ConceptID`` that is not ASCII digits, a
duplicate GPS identifier, a release with no concept row, bytes that are not UTF-8, and a zip that
cannot be read (damaged, truncated, encrypted, or compressed with a method Python cannot read).
There is no CSV quoting: a ``"`` in a term is an ordinary character.
"""

from __future__ import annotations

import hashlib
import io
import logging
import re
import zipfile
import zlib
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from functools import partial
from operator import itemgetter
from pathlib import Path
from typing import IO, NamedTuple, TypeVar

from tempmedbench_synonyms.canonical import sha256_file
from tempmedbench_synonyms.errors import BadInputError, bounded_list
from tempmedbench_synonyms.files import open_regular

logger = logging.getLogger(__name__)

GPS_COLUMNS = ("ConceptID", "Active", "FSN", "USPreferredTerm")

# RF2 metadata concepts (SNOMED CT Release File Specifications): description types, the US English
# language reference set and the "preferred" acceptability. The US refset only: the International
# Edition's language snapshot also holds the GB English refset (900000000000508004), and reading
# its rows too gives GB terms where the US term differs (e.g. a GB "Paracetamol" for a US
# "Acetaminophen"), a bug found in several tools.
FSN_TYPE = "900000000000003001"
SYNONYM_TYPE = "900000000000013009"
US_ENGLISH_REFSET = "900000000000509007"
GB_ENGLISH_REFSET = "900000000000508004"
PREFERRED = "900000000000548007"
# The modules of the International Edition: "SNOMED CT core" and "SNOMED CT model component". The
# GPS is drawn from these; an extension's rows (e.g. the US module 731000124108 of a US Edition
# snapshot) are skipped, so that an extension concept is absent from the index as from the GPS.
CORE_MODULE = "900000000000207008"
MODEL_COMPONENT_MODULE = "900000000000012004"
INTERNATIONAL_MODULES = frozenset({CORE_MODULE, MODEL_COMPONENT_MODULE})

# Each list starts with the component identifier and effectiveTime: the row-version step needs them
# there (see _read_latest).
CONCEPT_COLUMNS = ("id", "effectiveTime", "active", "moduleId")
DESCRIPTION_COLUMNS = ("id", "effectiveTime", "active", "moduleId", "conceptId", "typeId", "term")
LANGUAGE_COLUMNS = (
    "id",
    "effectiveTime",
    "active",
    "moduleId",
    "refsetId",
    "referencedComponentId",
    "acceptabilityId",
)

_RF2_PATTERNS = {
    "concept": re.compile(r"^sct2_Concept_Snapshot[-_].*\.txt$"),
    "description": re.compile(r"^sct2_Description_Snapshot[-_].*\.txt$"),
    "language": re.compile(r"^der2_cRefset_LanguageSnapshot[-_].*\.txt$"),
}
# A release date: the package's time stamp anywhere in a path (SnomedCT_..._20260101T120000Z/...),
# or an RF2-style "_<date>.txt" at the end of a file name.
_STAMP_DATE = re.compile(r"(\d{8})T\d{6}Z")
_NAME_DATE = re.compile(r"_(\d{8})\.txt$")
_TRAILING_NEWLINES = re.compile(rb"(?:\r?\n)+\Z")
_TAIL_BYTES = 64

# What reading a zip member can raise besides OSError: a damaged or truncated archive, an
# encrypted member (RuntimeError: password required), a compression method zipfile lacks
# (NotImplementedError, e.g. Deflate64 from Windows Explorer), an archive that needs ZIP64.
_ZIP_ERRORS = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    zlib.error,
    EOFError,
    NotImplementedError,
    RuntimeError,
)
_ZIP_HINT = "extract the .txt, or zip it again with standard deflate"
# APPNOTE.TXT section 4.4.5; the ones zipfile reads are 0, 8, 12 and 14.
_COMPRESSION_METHODS = {
    1: "Shrink",
    6: "Implode",
    9: "Deflate64",
    10: "PKWARE DCL Implode",
    18: "IBM TERSE",
    19: "IBM LZ77",
    93: "Zstandard",
    95: "XZ",
    98: "PPMd",
}


# Bounds (SPEC section 8: sizes and line lengths bounded where the format bounds them, so that a
# zip bomb or an endless file is bad input in bounded memory). The GPS file holds ~380,000 rows of
# ~120 bytes (~45 MB): 256 MiB and 2,000,000 rows leave room for years of growth, and the index of
# 2,000,000 rows stays under ~300 MB. An International Edition RF2 snapshot file is below 1 GB
# (the language refset, ~3.8 million rows): 4 GiB. No line of either comes near 64 KiB (an RF2
# term is at most 4,096 characters). Each size is checked twice: the size a zip member declares,
# before it is read, and the bytes it really gives, counted as they are read (a lying header).
GPS_MAX_BYTES = 256 << 20
GPS_MAX_ROWS = 2_000_000
RF2_MAX_BYTES = 4 << 30
LINE_MAX_BYTES = 64 << 10
_READ_BLOCK = 1 << 20


class _Bounded(io.RawIOBase):
    """A byte stream that stops, with ``BadInputError``, past ``max_bytes`` bytes or at a line
    longer than ``max_line`` bytes (LF excluded). Wrapped in a ``BufferedReader`` by
    :func:`_bounded`.

    Line lengths cost ~32 ``bytes.find`` calls a MiB, not a scan in Python: a line longer than
    ``max_line`` contains a whole window of ``max_line // 2`` bytes with no LF, and only a window
    with none is measured exactly.
    """

    def __init__(self, raw: IO[bytes], where: str, what: str, max_bytes: int, max_line: int):
        self._raw = raw
        self.where = where
        self.what = what
        self.max_bytes = max_bytes
        self.max_line = max_line
        self.total = 0
        self.lines = 0  # LFs read so far
        self.run = 0  # bytes since the last LF

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        self._raw.close()
        super().close()

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        data = self._raw.read(len(buffer))
        n = len(data)
        if n:
            self.total += n
            if self.total > self.max_bytes:
                raise BadInputError(
                    f"{self.what} is larger than {self.max_bytes} bytes "
                    f"({self.max_bytes >> 20} MiB); this is not the file it claims to be "
                    "(or a zip bomb)",
                    path=self.where,
                    hint=_SIZE_HINT,
                )
            self._check_lines(data)
            buffer[:n] = data
        return n

    def _check_lines(self, data: bytes) -> None:
        limit = self.max_line
        first = data.find(b"\n")
        if first < 0:
            self.run += len(data)
            if self.run > limit:
                self._too_long(self.lines + 1)
            return
        if self.run + first > limit:
            self._too_long(self.lines + 1)
        last = data.rfind(b"\n")
        if last - first > limit:
            window = limit // 2
            for i in range(first, last, window):
                if data.find(b"\n", i, min(i + window, last)) < 0:
                    start, end = data.rfind(b"\n", 0, i), data.find(b"\n", i)
                    if end - start - 1 > limit:
                        self._too_long(self.lines + data.count(b"\n", 0, start + 1) + 1)
        self.lines += data.count(b"\n")
        self.run = len(data) - last - 1
        if self.run > limit:  # the start of the next line, already too long
            self._too_long(self.lines + 1)

    def _too_long(self, line: int) -> None:
        raise BadInputError(
            f"a line longer than {self.max_line} bytes; {self.what} has no such line",
            path=self.where,
            line=line,
            hint=_SIZE_HINT,
        )


_SIZE_HINT = "pass the SNOMED International GPS (zip or .txt) or an RF2 snapshot, as downloaded"


def _bounded(raw: IO[bytes], where: str, what: str, max_bytes: int) -> IO[bytes]:
    """``raw`` read through :class:`_Bounded` (``max_bytes``, lines of ``LINE_MAX_BYTES``)."""
    return io.BufferedReader(_Bounded(raw, where, what, max_bytes, LINE_MAX_BYTES), _READ_BLOCK)


def _check_declared_size(path: Path, zf: zipfile.ZipFile, member: str, max_bytes: int) -> None:
    """Refuse a zip member whose declared size is beyond the bound, before reading it."""
    size = zf.getinfo(member).file_size
    if size > max_bytes:
        raise BadInputError(
            f"the member declares {size} bytes once unpacked, more than the {max_bytes} bytes "
            f"({max_bytes >> 20} MiB) such a file can have; this is not the file it claims to be "
            "(or a zip bomb)",
            path=f"{path}!{member}",
            hint=_SIZE_HINT,
        )


class Concept(NamedTuple):
    """One concept of a release, as the index decodes it. "" stands for a missing term."""

    fsn: str
    us_pt: str
    active: bool


_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class SourceFile:
    """One file that was read: where, which zip member, and its SHA-256."""

    path: str
    sha256: str | None
    member: str | None = None

    def as_dict(self) -> dict[str, str | None]:
        return {"path": self.path, "member": self.member, "sha256": self.sha256}


def decode_row(row: str) -> Concept:
    """An index row (Active, FSN, PT joined by tabs; maybe a trailing empty cell and a line end)
    as a :class:`Concept`."""
    active, fsn, pt = row.split("\t", 2)
    pt = pt.rstrip("\r\n")
    if "\t" in pt:
        # A row that repeats the header's trailing empty cell; the loader checked it is empty.
        pt = pt.split("\t", 1)[0]
    return Concept(fsn, pt, active == "1")


def encode_row(fsn: str, pt: str, active: bool) -> str:
    """The index's string for a concept read some other way than the GPS fast path."""
    return f"{'1' if active else '0'}\t{fsn}\t{pt}"


@dataclass(slots=True)
class ConceptIndex:
    """Every concept of a GPS or RF2 release, keyed by identifier, and where it was read from."""

    rows: dict[str, str]
    kind: str
    path: str
    release_date: str | None
    sha256: str | None
    files: list[SourceFile] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.rows)

    def __contains__(self, concept_id: object) -> bool:
        return concept_id in self.rows

    def get(self, concept_id: str) -> Concept | None:
        """The concept's ``(fsn, us_pt, active)``, or None when the release does not hold it."""
        row = self.rows.get(concept_id)
        return None if row is None else decode_row(row)

    def to_dict(self) -> dict[str, Concept]:
        """Every concept, decoded (for tests and small releases; the index itself stays lean)."""
        return {cid: decode_row(row) for cid, row in self.rows.items()}

    def summary(self) -> dict[str, object]:
        """A JSON-ready description of the source, for reports."""
        active = sum(1 for row in self.rows.values() if row[0] == "1")
        return {
            "path": self.path,
            "kind": self.kind,
            "release_date": self.release_date,
            "sha256": self.sha256,
            "files": [f.as_dict() for f in self.files],
            "concepts": len(self.rows),
            "active_concepts": active,
            "notes": list(self.notes),
        }


# --------------------------------------------------------------------------------------------
# Entry point


def load_concept_index(path: str | Path) -> ConceptIndex:
    """Read a GPS zip or TSV, or an RF2 snapshot folder or zip, into a :class:`ConceptIndex`."""
    p = Path(path)
    if not p.exists():
        raise BadInputError(
            "no such file or folder",
            path=p,
            hint="pass the GPS zip or its .txt file, or an RF2 snapshot folder or zip, to --gps",
        )
    if p.is_dir():
        return _load_rf2_folder(p)
    with open_regular(p, what="the GPS input") as f:
        is_zip = zipfile.is_zipfile(f)
        looks_like_zip = not is_zip and _looks_like_zip(p, f)
    if is_zip:
        return _load_zip(p)
    if looks_like_zip:
        # is_zipfile looks for the end-of-central-directory record only: a zip cut short (an
        # interrupted download) has lost it, and read as text it would be "bytes that are not
        # UTF-8" on line 1.
        raise BadInputError(
            "damaged zip: it has no end-of-central-directory record (truncated?)",
            path=p,
            hint="download the zip again, or extract the .txt from a good copy and pass that",
        )
    return load_gps_tsv(p)


def _looks_like_zip(path: Path, f: IO[bytes]) -> bool:
    """A zip's local-header or empty-archive signature, or a .zip name."""
    f.seek(0)
    magic = f.read(4)
    return magic in (b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08") or path.suffix.lower() == ".zip"


def _release_date(*names: str) -> str | None:
    """The first release date found in ``names``: a time stamp anywhere, else ``_<date>.txt``."""
    for name in names:
        m = _STAMP_DATE.search(name) or _NAME_DATE.search(name)
        if m is not None:
            return m.group(1)
    return None


# Every byte value except TAB and LF, for bytes.translate(None, delete=...).
_NOT_TAB_OR_LF = bytes(b for b in range(256) if b not in (0x09, 0x0A))


@dataclass(frozen=True, slots=True)
class _Scan:
    """What one pass over the raw bytes tells: the hash, and the file's tabs and line feeds."""

    sha256: str
    newlines: int
    unterminated: bool  # the last line has no LF
    skeleton: bytes  # only the TAB and LF bytes, in file order (~4 bytes a row)
    trailing_blank: int  # blank lines at the end of the file; -1: too many to count from the tail

    @property
    def lines(self) -> int:
        return self.newlines + self.unterminated

    def every_line_has(self, tabs: int) -> bool:
        """Whether every line but the trailing blank ones has exactly ``tabs`` tabs: one
        comparison of bytes, not a loop."""
        line = b"\t" * tabs
        blank = self.trailing_blank
        expected = (
            (line + b"\n") * (self.newlines - blank)
            + b"\n" * blank
            + (line if self.unterminated else b"")
        )
        return self.skeleton == expected


def _scan(raw: IO[bytes], where: str) -> _Scan:
    """Hash a byte stream, and keep its skeleton of tabs and line feeds.

    The skeleton lets the GPS fast path check every row's width without a Python loop (UTF-8 never
    has a 0x09 or 0x0A byte inside a multi-byte character); it costs ~1/10 of the loading time.
    """
    h = hashlib.sha256()
    newlines = 0
    tail = b""
    skeleton: list[bytes] = []
    for block in iter(lambda: raw.read(_READ_BLOCK), b""):
        h.update(block)
        newlines += block.count(b"\n")
        if newlines > GPS_MAX_ROWS:
            raise BadInputError(
                f"more than {GPS_MAX_ROWS} lines; the GPS file has about 380,000 concepts, one a "
                "line",
                path=where,
                hint=_SIZE_HINT,
            )
        skeleton.append(block.translate(None, _NOT_TAB_OR_LF))
        tail = (tail + block[-_TAIL_BYTES:])[-_TAIL_BYTES:]
    unterminated = bool(tail) and not tail.endswith(b"\n")
    m = _TRAILING_NEWLINES.search(tail)
    if m is None:
        blank = 0
    elif m.start() == 0 and len(tail) == _TAIL_BYTES:
        blank = -1  # the run of line ends may go on before the tail: the checked path counts it
    else:
        # The first line end closes the last line that has content; each further one is a
        # blank line.
        blank = m.group().count(b"\n") - (m.start() > 0)
    return _Scan(h.hexdigest(), newlines, unterminated, b"".join(skeleton), blank)


# --------------------------------------------------------------------------------------------
# Zip members


def _zip_member_error(
    path: Path, zf: zipfile.ZipFile, member: str, err: BaseException
) -> BadInputError:
    """The error for a zip member that cannot be read, naming the zip and the member."""
    where = f"{path}!{member}"
    method: int | None
    try:
        method = zf.getinfo(member).compress_type
    except KeyError:  # pragma: no cover - the member was listed by the same ZipFile
        method = None
    if isinstance(err, RuntimeError) and "password" in str(err):
        problem = "the member is encrypted (a password is required to read it)"
    elif isinstance(err, NotImplementedError) and method not in (None, 0, 8, 12, 14):
        name = _COMPRESSION_METHODS.get(method or 0, "unknown")
        problem = (
            f"the member is compressed with method {method} ({name}), which Python's zipfile "
            "cannot read"
        )
    elif isinstance(err, EOFError) or (
        # Python 3.13's zipfile sees the same damage as an overlap: the recorded size runs into
        # the next structure of the file.
        isinstance(err, zipfile.BadZipFile) and str(err).startswith("Overlapped entries")
    ):
        problem = "damaged zip: the member ends before its recorded size (truncated?)"
    elif isinstance(err, zipfile.LargeZipFile):
        problem = f"the member needs ZIP64 extensions, which are not available: {err}"
    elif isinstance(err, (zipfile.BadZipFile, zlib.error)):
        problem = f"damaged zip: {err}"
    else:
        problem = f"the member cannot be read: {err}"
    return BadInputError(problem, path=where, hint=_ZIP_HINT)


@contextmanager
def _reading_member(path: Path, zf: zipfile.ZipFile, member: str) -> Iterator[None]:
    """Turn the exceptions of reading ``member`` into ``BadInputError`` naming it."""
    try:
        yield
    except _ZIP_ERRORS as err:
        raise _zip_member_error(path, zf, member, err) from None


# --------------------------------------------------------------------------------------------
# Headers and lines


@dataclass(frozen=True, slots=True)
class _Header:
    """Where each needed column sits, and the row widths that are accepted."""

    names: tuple[str, ...]
    index: dict[str, int]
    widths: frozenset[int]
    crlf: bool


def _text(raw: IO[bytes]) -> io.TextIOWrapper:
    # newline="\n": lines end at LF only and keep a CR before it, so a CRLF file can be reported,
    # and a stray CR inside a term does not cut the line in two (universal newlines would).
    return io.TextIOWrapper(raw, encoding="utf-8", newline="\n")


def _read_header(
    stream: io.TextIOWrapper, where: str, required: tuple[str, ...], notes: list[str]
) -> _Header:
    first = stream.readline()
    if not first:
        raise BadInputError("the file is empty; a header line was expected", path=where, line=1)
    if first.startswith("\ufeff"):
        first = first[1:]
        notes.append(f"{where}: a UTF-8 byte order mark was skipped")
    crlf = first.endswith("\r\n")
    if crlf:
        notes.append(f"{where}: CRLF line ends")
    cells = first.rstrip("\r\n").split("\t")
    width = len(cells)
    trimmed = width
    while trimmed > 1 and cells[trimmed - 1] == "":
        trimmed -= 1
    if trimmed != width:
        notes.append(f"{where}: {width - trimmed} trailing empty header cell(s) ignored")
    names = cells[:trimmed]
    index: dict[str, int] = {}
    for i, name in enumerate(names):
        if name in index:
            raise BadInputError(f"the header names column {name!r} twice", path=where, line=1)
        index[name] = i
    missing = [c for c in required if c not in index]
    if missing:
        raise BadInputError(
            f"the header has no column {bounded_list(repr(m) for m in missing)} "
            f"(found: {bounded_list(repr(n) for n in names)})",
            path=where,
            line=1,
            hint="columns are found by name in the first line, separated by tabs",
        )
    # A row may or may not repeat the header's trailing empty cells.
    return _Header(tuple(names), index, frozenset({trimmed, width}), crlf)


def _bad_width(where: str, line: int, parts: list[str], header: _Header) -> BadInputError:
    expected = " or ".join(str(w) for w in sorted(header.widths))
    return BadInputError(
        f"{len(parts)} tab-separated fields where the header has {expected}",
        path=where,
        line=line,
        hint="a row is one line with a tab between fields; terms are never quoted",
    )


def _blank_inside(where: str, line: int) -> BadInputError:
    return BadInputError(
        "a blank line; blank lines are allowed only at the end of the file",
        path=where,
        line=line,
    )


def _blank_note(where: str, n: int) -> str:
    return f"{where}: {n} blank line(s) at the end of the file ignored"


def not_utf8_error(
    where: str,
    open_bytes: Callable[[], AbstractContextManager[IO[bytes]]],
    *,
    hint: str = "the GPS and RF2 files are UTF-8; download the file again if it was re-encoded",
) -> BadInputError:
    """The error for a file that is not UTF-8, naming the first bad line (found by a rescan:
    the text layer decodes in blocks and cannot say which line a bad byte is on)."""
    bad_line, problem = 1, "bytes that are not UTF-8"
    with open_bytes() as raw:
        for lineno, line in enumerate(raw, start=1):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as err:
                bad_line = lineno
                problem = f"bytes that are not UTF-8 ({err.reason} at column {err.start + 1})"
                break
    return BadInputError(
        problem,
        path=where,
        line=bad_line,
        hint=hint,
    )


def _no_concepts(where: str, problem: str, hint: str) -> BadInputError:
    return BadInputError(f"no concept rows: {problem}", path=where, hint=hint)


# --------------------------------------------------------------------------------------------
# GPS


def load_gps_tsv(path: str | Path) -> ConceptIndex:
    """Read the bare GPS file (``*GPSRelease*.txt``)."""
    p = Path(path)
    notes: list[str] = []

    def open_bytes() -> IO[bytes]:
        return _bounded(open_regular(p, what="the GPS file"), str(p), "the GPS file", GPS_MAX_BYTES)

    with open_bytes() as raw:
        scan = _scan(raw, str(p))
    digest = scan.sha256
    rows = _read_gps(open_bytes, str(p), notes, scan)
    date = _release_date(p.name, p.parent.as_posix())
    if date is None:
        notes.append(f"{p}: no release date in the file name")
    return ConceptIndex(rows, "gps-tsv", str(p), date, digest, [SourceFile(str(p), digest)], notes)


def _read_gps(
    open_bytes: Callable[[], AbstractContextManager[IO[bytes]]],
    where: str,
    notes: list[str],
    scan: _Scan,
) -> dict[str, str]:
    """The rows of a GPS file under their identifiers; ``scan`` is the same file's byte scan."""
    try:
        with open_bytes() as raw, _text(raw) as stream:
            header = _read_header(stream, where, GPS_COLUMNS, notes)
            if header.names != GPS_COLUMNS:
                # Columns in another order, or more of them: the general path reads every row.
                rows = _read_gps_rows_checked(stream, where, header, notes)
            else:
                rows = _read_gps_rows_fast(stream)
        if header.names == GPS_COLUMNS:
            if _fast_rows_ok(rows, scan, header):
                if scan.trailing_blank:
                    notes.append(_blank_note(where, scan.trailing_blank))
            else:
                # Something is off (a short row, a bad Active, an empty, repeated or non-digit
                # identifier...): read the file again line by line, which raises with the line
                # and the problem.
                logger.debug("%s: the fast GPS path saw a bad row; reading it again", where)
                del rows
                with open_bytes() as raw, _text(raw) as stream:
                    stream.readline()
                    rows = _read_gps_rows_checked(stream, where, header, notes)
    except UnicodeDecodeError:
        raise not_utf8_error(where, open_bytes) from None
    if not rows:
        raise _no_concepts(
            where,
            "the file has a header only",
            "the GPS file lists about 380,000 concepts; download it again",
        )
    return rows


def _read_gps_rows_fast(stream: io.TextIOWrapper) -> dict[str, str]:
    """The hot loop of the loader: keep the rest of each line, as read, under its identifier.

    ``str.partition`` and one dict store per row: checking the rows is left to
    :func:`_fast_rows_ok`, so that this loop allocates one kept string per row and nothing else.
    """
    rows: dict[str, str] = {}
    for line in stream:
        cid, _, rest = line.partition("\t")
        rows[cid] = rest
    return rows


def _fast_rows_ok(rows: dict[str, str], scan: _Scan, header: _Header) -> bool:
    """Whether every row of the fast path has the header's width, an Active of 0 or 1, and a
    distinct identifier of ASCII digits. Does not say which row is wrong: the checked path does.

    Trailing blank lines (counted by the scan) are dropped from ``rows`` here: they were read as
    an identifier "\\n" or "\\r\\n" with no fields. A blank line anywhere else fails the checks.
    """
    blank = scan.trailing_blank
    if blank < 0:
        return False
    if blank:
        rows.pop("\n", None)
        rows.pop("\r\n", None)
    if len(rows) != scan.lines - 1 - blank:
        return False
    if not rows:
        return True
    # All identifiers at once: one join and two C scans instead of a check per row ("" joins
    # invisibly, so it is looked for apart). bytes.isdigit is ten times faster than str.isdigit,
    # which tests each character against every Unicode digit; isascii makes the encoding exact.
    ids = "".join(rows)
    if "" in rows or not (ids.isascii() and ids.encode().isdigit()):
        return False
    values = rows.values()
    if len(header.widths) == 1:
        # The usual file: every line has width - 1 tabs, so every row's rest has exactly two
        # (Active | FSN | PT). Then Active is 0 or 1 when each rest starts with that and a tab.
        return (
            scan.every_line_has(len(header.names) - 1)
            and set(map(itemgetter(0), values)) <= {"0", "1"}
            and set(map(itemgetter(1), values)) <= {"\t"}
        )
    # A header with trailing empty cells: rows may or may not repeat them; check row by row.
    tabs = frozenset(w - 2 for w in header.widths)
    for row in values:
        n = row.count("\t")
        if n not in tabs or row[1] != "\t" or row[0] not in "01":
            return False
        if n > 2 and not row.rstrip("\r\n").endswith("\t" * (n - 2)):
            return False  # a value in a column that has no name
    return True


def _read_gps_rows_checked(
    stream: io.TextIOWrapper, where: str, header: _Header, notes: list[str]
) -> dict[str, str]:
    """Every row, checked as it is read; raises on the first bad one, naming its line."""
    cols = header.index
    pick = itemgetter(cols["ConceptID"], cols["Active"], cols["FSN"], cols["USPreferredTerm"])
    extra = [i for i in range(len(header.names), max(header.widths))]
    rows: dict[str, str] = {}
    first_seen: dict[str, int] = {}
    blank_from = 0  # the first line of a run of blank lines not yet followed by a row
    lineno = 1
    for lineno, line in enumerate(stream, start=2):
        text = line.rstrip("\r\n")
        if not text:
            blank_from = blank_from or lineno
            continue
        if blank_from:
            raise _blank_inside(where, blank_from)
        parts = text.split("\t")
        if len(parts) not in header.widths:
            raise _bad_width(where, lineno, parts, header)
        if any(parts[i] for i in extra if i < len(parts)):
            raise BadInputError(
                "a value in the column that has no name in the header", path=where, line=lineno
            )
        cid, active, fsn, pt = pick(parts)
        if cid == "":
            raise BadInputError("the concept identifier is empty", path=where, line=lineno)
        if not (cid.isascii() and cid.isdigit()):
            raise BadInputError(
                f"ConceptID {cid!r} is not a string of the digits 0-9",
                path=where,
                line=lineno,
                hint="identifiers are unquoted, with no space around them",
            )
        if active not in ("0", "1"):
            raise BadInputError(
                f"Active is {active!r}; it must be 1 or 0", path=where, line=lineno, key=cid
            )
        if cid in rows:
            raise BadInputError(
                f"concept {cid} is listed twice (first on line {first_seen[cid]})",
                path=where,
                line=lineno,
                hint="a GPS file lists each concept once; download it again",
            )
        first_seen[cid] = lineno
        rows[cid] = encode_row(fsn, pt, active == "1")
    if blank_from:
        notes.append(_blank_note(where, lineno - blank_from + 1))
    return rows


def _load_zip(path: Path) -> ConceptIndex:
    with open_regular(path, what="the GPS input") as f:
        return _load_open_zip(path, f)


def _load_open_zip(path: Path, f: IO[bytes]) -> ConceptIndex:
    try:
        zf = zipfile.ZipFile(f)
    except (OSError, *_ZIP_ERRORS) as err:
        raise BadInputError(
            f"damaged zip: cannot read its directory ({err})",
            path=path,
            hint="download the zip again, or extract the .txt from a good copy and pass that",
        ) from None
    with zf:
        names = [
            i.filename
            for i in zf.infolist()
            if not i.is_dir() and not i.filename.startswith("__MACOSX/")
        ]
        gps = [n for n in names if "gpsrelease" in _basename(n).lower() and n.endswith(".txt")]
        if gps:
            return _load_gps_zip(path, zf, gps)
        if any(_RF2_PATTERNS["concept"].match(_basename(n)) for n in names):
            return _load_rf2(path, "rf2-zip", _ZipSource(zf, path, names))
    raise BadInputError(
        "the zip holds neither a *GPSRelease*.txt member nor an RF2 Concept snapshot",
        path=path,
        hint="pass the SNOMED International GPS zip, or an International Edition RF2 release zip",
    )


def _basename(name: str) -> str:
    return name.rsplit("/", 1)[-1]


def _load_gps_zip(path: Path, zf: zipfile.ZipFile, members: list[str]) -> ConceptIndex:
    member = members[0]
    if len(members) > 1:
        # More than one candidate: keep the ones whose first line has the GPS columns.
        fitting = [m for m in members if _has_gps_header(path, zf, m)]
        if len(fitting) != 1:
            raise BadInputError(
                f"{len(fitting) or 'no'} of the {len(members)} members "
                f"({bounded_list(members)}) look like the GPS file",
                path=path,
                hint="extract the GPS .txt file and pass it to --gps",
            )
        member = fitting[0]
    where = f"{path}!{member}"
    notes: list[str] = []

    def open_bytes() -> IO[bytes]:
        return _bounded(zf.open(member), where, "the GPS file", GPS_MAX_BYTES)

    _check_declared_size(path, zf, member, GPS_MAX_BYTES)
    with _reading_member(path, zf, member):
        with open_bytes() as raw:
            scan = _scan(raw, where)
        rows = _read_gps(open_bytes, where, notes, scan)
    digest = sha256_file(path)
    date = _release_date(member, path.name)
    if date is None:
        notes.append(f"{where}: no release date in the member or zip name")
    files = [SourceFile(str(path), digest), SourceFile(str(path), scan.sha256, member)]
    return ConceptIndex(rows, "gps-zip", str(path), date, digest, files, notes)


def _has_gps_header(path: Path, zf: zipfile.ZipFile, member: str) -> bool:
    with _reading_member(path, zf, member), zf.open(member) as raw:
        first = raw.readline(LINE_MAX_BYTES).decode("utf-8", "replace").lstrip("\ufeff")
    return all(c in first.rstrip("\r\n").split("\t") for c in GPS_COLUMNS)


# --------------------------------------------------------------------------------------------
# RF2: where the files are


class _FolderSource:
    """RF2 files found anywhere under a folder."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.names = sorted(
            str(p.relative_to(root).as_posix()) for p in root.rglob("*.txt") if p.is_file()
        )

    def where(self, name: str) -> str:
        return str(self.root / name)

    def open_bytes(self, name: str) -> IO[bytes]:
        raw = open_regular(self.root / name, what="the RF2 file")
        return _bounded(raw, self.where(name), "an RF2 file", RF2_MAX_BYTES)

    def reading(self, name: str) -> AbstractContextManager[None]:
        return nullcontext()

    def sha256(self, name: str) -> str:
        return sha256_file(self.root / name)


class _ZipSource:
    """RF2 files found anywhere inside a zip."""

    def __init__(self, zf: zipfile.ZipFile, path: Path, names: list[str]) -> None:
        self.zf = zf
        self.path = path
        self.names = sorted(names)

    def where(self, name: str) -> str:
        return f"{self.path}!{name}"

    def open_bytes(self, name: str) -> IO[bytes]:
        _check_declared_size(self.path, self.zf, name, RF2_MAX_BYTES)
        return _bounded(self.zf.open(name), self.where(name), "an RF2 file", RF2_MAX_BYTES)

    def reading(self, name: str) -> AbstractContextManager[None]:
        return _reading_member(self.path, self.zf, name)

    def sha256(self, name: str) -> str | None:
        # The zip's own hash is reported; hashing each member again would double the read time.
        return None


_Source = _FolderSource | _ZipSource


# --------------------------------------------------------------------------------------------
# RF2: rows, and the latest version of each component

#: One RF2 row: the file, the line, and the fields of the columns asked for, in their order.
_Row = tuple[str, int, tuple[str, ...]]

_BUCKETS = 256


class _IdKeys:
    """A 64-bit hash of every component identifier read, to find the repeated ones afterwards.

    8 bytes a row in 256 arrays, instead of a set of the identifiers (~100 bytes a row); each
    bucket is checked with a small set at the end. A hash collision only sends two identifiers to
    the exact path of :func:`_deduplicated`, which compares the identifiers themselves.
    """

    def __init__(self) -> None:
        self.buckets = [array("q") for _ in range(_BUCKETS)]
        self.add = [b.append for b in self.buckets]

    def repeated(self) -> set[int]:
        out: set[int] = set()
        for bucket in self.buckets:
            if len(set(bucket)) != len(bucket):
                seen: set[int] = set()
                for k in bucket:
                    if k in seen:
                        out.add(k)
                    seen.add(k)
        return out


def _rf2_rows(
    src: _Source,
    names: list[str],
    columns: tuple[str, ...],
    notes: list[str],
    keys: _IdKeys,
) -> Iterator[_Row]:
    """Every row of the RF2 files ``names``, checked for width, as the fields of ``columns``; the
    hash of each row's first field (its identifier) is added to ``keys``.

    The loop runs ~6 million times for an International Edition: every name it uses is local.
    """
    hash_ = hash  # looked up once (a test replaces the module's ``hash`` to force collisions)
    add = keys.add
    mask = _BUCKETS - 1
    for name in names:
        where = src.where(name)
        with src.reading(name):
            try:
                with src.open_bytes(name) as raw, _text(raw) as stream:
                    header = _read_header(stream, where, columns, notes)
                    pick = itemgetter(*(header.index[c] for c in columns))
                    widths = header.widths
                    width = len(header.names)
                    rows = enumerate(stream, start=2)
                    for lineno, line in rows:
                        parts = line.rstrip("\r\n").split("\t")
                        if len(parts) != width and len(parts) not in widths:
                            if parts == [""]:
                                _trailing_blank_lines(rows, where, lineno, notes)
                                break
                            raise _bad_width(where, lineno, parts, header)
                        fields = pick(parts)
                        k = hash_(fields[0])
                        add[k & mask](k)
                        yield where, lineno, fields
            except UnicodeDecodeError:
                raise not_utf8_error(where, partial(src.open_bytes, name)) from None


def _trailing_blank_lines(
    rows: Iterator[tuple[int, str]], where: str, first: int, notes: list[str]
) -> None:
    """Read the rest of a file after a blank line on line ``first``: blank lines only."""
    n = 1
    for _, line in rows:
        if line.rstrip("\r\n"):
            raise _blank_inside(where, first)
        n += 1
    notes.append(_blank_note(where, n))


def _effective_time(value: str, where: str, line: int) -> str:
    if len(value) != 8 or not (value.isascii() and value.isdigit()):
        raise BadInputError(
            f"effectiveTime is {value!r}; it must be a date of 8 digits (YYYYMMDD)",
            path=where,
            line=line,
        )
    return value


def _deduplicated(
    src: _Source,
    names: list[str],
    columns: tuple[str, ...],
    repeated: set[int],
    stats: dict[str, int],
) -> Iterator[_Row]:
    """The rows of ``names`` with only the latest version of each repeated identifier.

    Rows whose identifier's hash is not in ``repeated`` pass at once; the others are held until
    the end, one per identifier (the greatest effectiveTime; YYYYMMDD compares as text), and then
    passed in line order. Two different rows of one identifier with the same effectiveTime are
    refused: nothing says which one is right.
    """
    best: dict[str, _Row] = {}
    repeated_ids: set[str] = set()  # the identifiers really listed twice, not just hash twins
    held = 0
    # Hashed again into a throwaway _IdKeys: this path is for the rare snapshot with repeats.
    for row in _rf2_rows(src, names, columns, [], _IdKeys()):
        where, lineno, fields = row
        cid = fields[0]
        if hash(cid) not in repeated:
            yield row
            continue
        held += 1
        et = _effective_time(fields[1], where, lineno)
        old = best.get(cid)
        if old is not None:
            repeated_ids.add(cid)
        if old is None or et > old[2][1]:
            best[cid] = row
        elif et == old[2][1] and fields != old[2]:
            raise BadInputError(
                f"component {cid} has two different rows with effectiveTime {et} "
                f"(the other on line {old[1]} of {old[0]})",
                path=where,
                line=lineno,
                hint="a snapshot holds one version of a component per effectiveTime; "
                "use one complete International Edition snapshot",
            )
    stats["components"] = len(repeated_ids)
    stats["ignored"] = held - len(best)
    order = {n: i for i, n in enumerate(src.where(n) for n in names)}
    yield from sorted(best.values(), key=lambda r: (order[r[0]], r[1]))


def _read_latest(
    src: _Source,
    names: list[str],
    columns: tuple[str, ...],
    notes: list[str],
    consume: Callable[[Iterable[_Row]], _T],
) -> _T:
    """``consume`` the rows of ``names``, keeping only the latest version of each component.

    First the rows are consumed as they come while their identifiers' hashes are kept; when no
    identifier repeats (a proper snapshot), that result stands. Otherwise it is dropped and the
    rows are consumed again through :func:`_deduplicated`. An error that ``consume`` raises on the
    first pass may come from an older version (e.g. two active preferred synonyms, one of them
    inactivated later): it stands only if no identifier repeats.
    """
    keys = _IdKeys()
    rows = _rf2_rows(src, names, columns, notes, keys)
    failure: BadInputError | None = None
    try:
        result = consume(rows)
    except BadInputError as err:
        failure = err
        for _ in rows:  # the rest of the identifiers: a repeated one may explain the error
            pass
    repeated = keys.repeated()
    del keys
    if not repeated:
        if failure is not None:
            raise failure
        return result
    if failure is None:
        del result
    stats: dict[str, int] = {}
    result = consume(_deduplicated(src, names, columns, repeated, stats))
    if stats["components"]:
        files = bounded_list(src.where(n) for n in names)
        notes.append(
            f"{files}: {stats['components']} component(s) listed more than once; the row with "
            f"the latest effectiveTime of each was used ({stats['ignored']} other row(s) ignored)"
        )
    return result


def _bad_active(value: str, where: str, line: int) -> BadInputError:
    return BadInputError(f"active is {value!r}; it must be 1 or 0", path=where, line=line)


def _module_note(names: list[str], src: _Source, skipped: Counter[str]) -> str | None:
    if not skipped:
        return None
    files = bounded_list(src.where(n) for n in names)
    listed = bounded_list(f"{m} ({n})" for m, n in sorted(skipped.items()))
    return (
        f"{files}: {sum(skipped.values())} row(s) of modules other than the International "
        f"Edition's skipped: {listed}"
    )


# --------------------------------------------------------------------------------------------
# RF2: the three files


def _load_rf2_folder(path: Path) -> ConceptIndex:
    return _load_rf2(path, "rf2-folder", _FolderSource(path))


def _load_rf2(path: Path, kind: str, src: _Source) -> ConceptIndex:
    found = {
        k: [n for n in src.names if pattern.match(_basename(n))]
        for k, pattern in _RF2_PATTERNS.items()
    }
    missing = [k for k, v in found.items() if not v]
    if missing:
        gps_hint = any("gpsrelease" in _basename(n).lower() for n in src.names)
        raise BadInputError(
            "no RF2 " + ", ".join(missing) + " snapshot file "
            "(sct2_Concept_Snapshot*.txt, sct2_Description_Snapshot*.txt, "
            "der2_cRefset_LanguageSnapshot*.txt)",
            path=path,
            hint="pass the GPS .txt file itself, not its folder"
            if gps_hint
            else "pass the root of an International Edition RF2 release (with its Snapshot folder)",
        )
    if len(found["concept"]) > 1:
        raise BadInputError(
            f"more than one Concept snapshot file: {bounded_list(found['concept'])}",
            path=path,
            hint="pass the folder of one release only",
        )
    notes: list[str] = []
    concept_file = found["concept"][0]
    concepts, inactive = _read_concepts(src, concept_file, notes)
    if not concepts:
        raise _no_concepts(
            src.where(concept_file),
            "none of the International Edition's modules "
            f"({CORE_MODULE}, {MODEL_COMPONENT_MODULE})",
            "pass an International Edition RF2 snapshot (or an edition that includes it)",
        )
    us_preferred = _read_us_preferred(src, found["language"], notes)
    _read_descriptions(src, found["description"], concepts, us_preferred, notes)
    del us_preferred
    _fill_rows(concepts, inactive, src.where(concept_file), notes)
    dates = {
        m.group(1) for n in (f for v in found.values() for f in v) if (m := _NAME_DATE.search(n))
    }
    date = _release_date(concept_file, path.name)
    if date is None:
        notes.append(f"{src.where(concept_file)}: no release date in the file name")
    if len(dates) > 1:
        notes.append(f"the RF2 files carry different dates: {bounded_list(sorted(dates))}")
    digest = sha256_file(path) if kind == "rf2-zip" else None
    files = [
        SourceFile(
            str(path) if kind == "rf2-zip" else src.where(n),
            src.sha256(n),
            n if kind == "rf2-zip" else None,
        )
        for k in ("concept", "description", "language")
        for n in found[k]
    ]
    if kind == "rf2-zip":
        files.insert(0, SourceFile(str(path), digest))
    return ConceptIndex(concepts, kind, str(path), date, digest, files, notes)


def _read_us_preferred(src: _Source, names: list[str], notes: list[str]) -> set[str]:
    """Identifiers of descriptions that the US English refset marks preferred (latest row of each
    member, International modules, active rows only)."""

    def consume(rows: Iterable[_Row]) -> tuple[set[str], Counter[str], int]:
        preferred: set[str] = set()
        skipped: Counter[str] = Counter()
        gb_rows = 0
        intl, us, gb, pref = INTERNATIONAL_MODULES, US_ENGLISH_REFSET, GB_ENGLISH_REFSET, PREFERRED
        for where, lineno, (_, _, active, module, refset, did, acceptability) in rows:
            if active != "1" and active != "0":
                raise _bad_active(active, where, lineno)
            if module not in intl:
                skipped[module] += 1
            elif refset != us:
                gb_rows += refset == gb
            elif active == "1" and acceptability == pref:
                preferred.add(did)
        return preferred, skipped, gb_rows

    preferred, skipped, gb_rows = _read_latest(src, names, LANGUAGE_COLUMNS, notes, consume)
    if (note := _module_note(names, src, skipped)) is not None:
        notes.append(note)
    logger.info(
        "US English preferred descriptions: %d (GB rows skipped: %d)", len(preferred), gb_rows
    )
    return preferred


def _read_descriptions(
    src: _Source,
    names: list[str],
    concepts: dict[str, str],
    us_preferred: set[str],
    notes: list[str],
) -> None:
    """Put the active FSN and US preferred synonym of each concept in ``concepts``, as
    ``"<FSN description id>\\t<FSN>\\t<PT description id>\\t<PT>"`` ("" for a missing part).

    The ~760,000 kept descriptions of the International Edition are the largest part of the RF2
    loader's memory: one string a concept, stored in the dict that becomes the index, costs
    neither a dict of its own nor a copy of the concept identifier per description row.
    """

    def consume(rows: Iterable[_Row]) -> tuple[Counter[str], set[str]]:
        for cid in concepts:  # a second pass (after repeated rows were found) starts afresh
            concepts[cid] = ""
        get = concepts.get
        skipped: Counter[str] = Counter()
        two_fsns: set[str] = set()
        intl, fsn_type, synonym_type = INTERNATIONAL_MODULES, FSN_TYPE, SYNONYM_TYPE
        for where, lineno, (did, _, active, module, cid, type_id, term) in rows:
            if active != "1":
                if active != "0":
                    raise _bad_active(active, where, lineno)
                if module not in intl:
                    skipped[module] += 1
                continue
            if module not in intl:
                skipped[module] += 1
                continue
            if type_id == fsn_type:
                is_fsn = True
            elif type_id == synonym_type:
                if did not in us_preferred:
                    continue
                is_fsn = False
            else:
                continue
            old = get(cid)
            if old is None:
                continue  # not a concept of the index (another module's, or none at all)
            fsn_did, fsn, pt_did, pt = old.split("\t") if old else ("", "", "", "")
            old_did = fsn_did if is_fsn else pt_did
            if old_did:
                if is_fsn:
                    # Two active FSNs (seen in real snapshots): decided by a rule, so that one
                    # concept cannot stop the load; the notes name the concepts.
                    two_fsns.add(cid)
                    if _fsn_rank(did, us_preferred) > _fsn_rank(old_did, us_preferred):
                        continue
                else:
                    # Two US preferred synonyms: the refset itself is broken, and guessing would
                    # put a wrong term in the report.
                    raise BadInputError(
                        f"concept {cid} has two active US preferred synonyms: descriptions "
                        f"{old_did} and {did}",
                        path=where,
                        line=lineno,
                        hint="use one complete International Edition snapshot",
                    )
            # An existing key keeps its string object: only the value is replaced.
            if is_fsn:
                concepts[cid] = f"{did}\t{term}\t{pt_did}\t{pt}"
            else:
                concepts[cid] = f"{fsn_did}\t{fsn}\t{did}\t{term}"
        return skipped, two_fsns

    skipped, two_fsns = _read_latest(src, names, DESCRIPTION_COLUMNS, notes, consume)
    if (note := _module_note(names, src, skipped)) is not None:
        notes.append(note)
    if two_fsns:
        ids = sorted(two_fsns, key=_id_order)
        notes.append(
            f"{bounded_list(src.where(n) for n in names)}: {len(two_fsns)} concept(s) have more "
            "than one active FSN; the one the US English refset prefers was used, else the one "
            f"with the smallest description id: {bounded_list(ids)}"
        )


def _id_order(sctid: str) -> tuple[int, str]:
    """SNOMED CT identifiers (digits, no leading zero) in numeric order, without int()."""
    return len(sctid), sctid


def _fsn_rank(did: str, us_preferred: set[str]) -> tuple[bool, int, str]:
    """The order in which two active FSNs of one concept are preferred: the one whose US English
    language refset row is active and preferred, then the smallest description id."""
    return did not in us_preferred, len(did), did


def _read_concepts(src: _Source, name: str, notes: list[str]) -> tuple[dict[str, str], set[str]]:
    """The concepts of the index (latest row of each, International modules), as a dict from each
    identifier to "" that :func:`_read_descriptions` and :func:`_fill_rows` turn into the index in
    place, and the set of the inactive ones."""

    def consume(rows: Iterable[_Row]) -> tuple[dict[str, str], set[str], Counter[str]]:
        concepts: dict[str, str] = {}
        inactive: set[str] = set()
        skipped: Counter[str] = Counter()
        for where, lineno, (cid, _, active, module) in rows:
            if cid == "":
                raise BadInputError("the concept identifier is empty", path=where, line=lineno)
            if active != "1" and active != "0":
                raise _bad_active(active, where, lineno)
            if module not in INTERNATIONAL_MODULES:
                skipped[module] += 1
                continue
            concepts[cid] = ""
            if active == "0":
                inactive.add(cid)
        return concepts, inactive, skipped

    concepts, inactive, skipped = _read_latest(src, [name], CONCEPT_COLUMNS, notes, consume)
    if (note := _module_note([name], src, skipped)) is not None:
        notes.append(note)
    return concepts, inactive


def _fill_rows(concepts: dict[str, str], inactive: set[str], where: str, notes: list[str]) -> None:
    """Turn each value of ``concepts`` into the concept's index row (status, FSN, US preferred
    term), in place: the dict does not grow, and each old value is freed as its row is made."""
    no_fsn = 0
    for cid in concepts:
        terms = concepts[cid]
        if terms:
            _, fsn, _, pt = terms.split("\t")
        else:
            fsn = pt = ""
        no_fsn += not fsn
        concepts[cid] = encode_row(fsn, pt, cid not in inactive)
    if no_fsn:
        notes.append(f"{where}: {no_fsn} concept(s) without an active FSN")
