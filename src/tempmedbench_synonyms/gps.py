"""The SNOMED CT Global Patient Set, or an International Edition RF2 snapshot, read into a lean index.

Four sources give the same index (SPEC section 6):

    gps-tsv     the GPS file itself: ConceptID, Active, FSN, USPreferredTerm (tab-separated)
    gps-zip     the GPS zip: its member whose name contains "GPSRelease" and ends in ".txt"
    rf2-folder  an International Edition RF2 release folder: its Concept, Description and
                Language refset snapshot files, wherever they sit inside
    rf2-zip     the same, zipped

The index is one plain dict from concept identifier (a string, never a number) to one string:
Active, FSN and US preferred term joined by tabs. :meth:`ConceptIndex.get` splits it into the
tuple ``(fsn, us_preferred_term, active)`` when a concept is asked for ("" means "no term"). For
the GPS that string is the rest of the file's line, as read: one object kept per row instead of
four (a tuple and three strings), which keeps the ~380,000 concepts of the GPS under 100 MB and
their loading within about 3x the time of a bare loop that splits the file's lines (measured by
``bench/bench_gps.py``). The fast path checks all rows in bulk after its loop; on any anomaly a
second, line-by-line pass names the line. No pydantic per row, on purpose.

Tolerated, and reported in ``notes``: CRLF line ends, a UTF-8 byte order mark, trailing empty
header cells. Refused with ``BadInputError`` (file, line, problem): a missing column, a row of the
wrong width, an ``Active`` other than ``0``/``1``, a duplicate identifier, bytes that are not UTF-8.
There is no CSV quoting: a ``"`` in a term is an ordinary character.
"""

from __future__ import annotations

import hashlib
import io
import logging
import re
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from functools import partial
from operator import itemgetter
from pathlib import Path
from typing import IO

from tempmedbench_synonyms.errors import BadInputError

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

CONCEPT_COLUMNS = ("id", "active")
DESCRIPTION_COLUMNS = ("id", "active", "conceptId", "typeId", "term")
LANGUAGE_COLUMNS = ("active", "refsetId", "referencedComponentId", "acceptabilityId")

_RF2_PATTERNS = {
    "concept": re.compile(r"^sct2_Concept_Snapshot[-_].*\.txt$"),
    "description": re.compile(r"^sct2_Description_Snapshot[-_].*\.txt$"),
    "language": re.compile(r"^der2_cRefset_LanguageSnapshot[-_].*\.txt$"),
}
_GPS_DATE = re.compile(r"(\d{8})T\d{6}Z")
_RF2_DATE = re.compile(r"_(\d{8})\.txt$")

#: One concept: (FSN, US preferred term, active). "" stands for a missing term.
Concept = tuple[str, str, bool]


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
    as a :data:`Concept`."""
    active, fsn, pt = row.split("\t", 2)
    pt = pt.rstrip("\r\n")
    if "\t" in pt:
        # A row that repeats the header's trailing empty cell; the loader checked it is empty.
        pt = pt.split("\t", 1)[0]
    return (fsn, pt, active == "1")


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


def load_release(path: str | Path) -> ConceptIndex:
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
    if zipfile.is_zipfile(p):
        return _load_zip(p)
    return load_gps_tsv(p)


def sha256_file(path: Path) -> str:
    """SHA-256 of a file, read in 1 MiB blocks (hashlib.file_digest needs Python 3.11)."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# Every byte value except TAB and LF, for bytes.translate(None, delete=...).
_NOT_TAB_OR_LF = bytes(b for b in range(256) if b not in (0x09, 0x0A))


@dataclass(frozen=True, slots=True)
class _Scan:
    """What one pass over the raw bytes tells: the hash, and the file's tabs and line feeds."""

    sha256: str
    newlines: int
    unterminated: bool  # the last line has no LF
    skeleton: bytes  # only the TAB and LF bytes, in file order (~4 bytes a row)

    @property
    def lines(self) -> int:
        return self.newlines + self.unterminated

    def every_line_has(self, tabs: int) -> bool:
        """Whether every line has exactly ``tabs`` tabs: one comparison of bytes, not a loop."""
        line = b"\t" * tabs
        expected = (line + b"\n") * self.newlines + (line if self.unterminated else b"")
        return self.skeleton == expected


def _scan(raw: IO[bytes]) -> _Scan:
    """Hash a byte stream, and keep its skeleton of tabs and line feeds.

    The skeleton lets the GPS fast path check every row's width without a Python loop (UTF-8 never
    has a 0x09 or 0x0A byte inside a multi-byte character); it costs ~1/10 of the loading time.
    """
    h = hashlib.sha256()
    newlines = 0
    last = b""
    skeleton: list[bytes] = []
    for block in iter(lambda: raw.read(1 << 20), b""):
        h.update(block)
        newlines += block.count(b"\n")
        skeleton.append(block.translate(None, _NOT_TAB_OR_LF))
        last = block
    unterminated = bool(last) and not last.endswith(b"\n")
    return _Scan(h.hexdigest(), newlines, unterminated, b"".join(skeleton))


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
            f"the header has no column {', '.join(repr(m) for m in missing)} "
            f"(found: {', '.join(repr(n) for n in names)})",
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


def _not_utf8(
    where: str, open_bytes: Callable[[], AbstractContextManager[IO[bytes]]]
) -> BadInputError:
    """The error for a file that is not UTF-8, naming the first bad line (found by a rescan:
    the text layer decodes in blocks and cannot say which line a bad byte is on)."""
    with open_bytes() as raw:
        for lineno, line in enumerate(raw, start=1):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as err:
                problem = f"bytes that are not UTF-8 ({err.reason} at column {err.start + 1})"
                break
        else:  # pragma: no cover - the text layer saw a bad byte, so a line has one
            lineno, problem = 1, "bytes that are not UTF-8"
    return BadInputError(
        problem,
        path=where,
        line=lineno,
        hint="the GPS and RF2 files are UTF-8; download the file again if it was re-encoded",
    )


# --------------------------------------------------------------------------------------------
# GPS


def load_gps_tsv(path: str | Path) -> ConceptIndex:
    """Read the bare GPS file (``*GPSRelease*.txt``)."""
    p = Path(path)
    notes: list[str] = []

    def open_bytes() -> IO[bytes]:
        return p.open("rb")

    with open_bytes() as raw:
        scan = _scan(raw)
    digest = scan.sha256
    rows = _read_gps(open_bytes, str(p), notes, scan)
    date = _date_from(_GPS_DATE, p.name, str(p), notes)
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
                return _read_gps_rows_checked(stream, where, header)
            rows = _read_gps_rows_fast(stream)
        if _fast_rows_ok(rows, scan, header):
            return rows
        # Something is off (a short row, a bad Active, an empty or repeated identifier...): read
        # the file again line by line, which raises with the line and the problem.
        logger.debug("%s: the fast GPS path saw a bad row; reading it again to say where", where)
        del rows
        with open_bytes() as raw, _text(raw) as stream:
            stream.readline()
            return _read_gps_rows_checked(stream, where, header)
    except UnicodeDecodeError:
        raise _not_utf8(where, open_bytes) from None


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
    distinct, non-empty identifier. Does not say which row is wrong: the checked path does."""
    if len(rows) != scan.lines - 1 or "" in rows:
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


def _read_gps_rows_checked(stream: io.TextIOWrapper, where: str, header: _Header) -> dict[str, str]:
    """Every row, checked as it is read; raises on the first bad one, naming its line."""
    cols = header.index
    pick = itemgetter(cols["ConceptID"], cols["Active"], cols["FSN"], cols["USPreferredTerm"])
    extra = [i for i in range(len(header.names), max(header.widths))]
    rows: dict[str, str] = {}
    first_seen: dict[str, int] = {}
    for lineno, line in enumerate(stream, start=2):
        parts = line.rstrip("\r\n").split("\t")
        if len(parts) not in header.widths:
            raise _bad_width(where, lineno, parts, header)
        if any(parts[i] for i in extra if i < len(parts)):
            raise BadInputError(
                "a value in the column that has no name in the header", path=where, line=lineno
            )
        cid, active, fsn, pt = pick(parts)
        if cid == "":
            raise BadInputError("the concept identifier is empty", path=where, line=lineno)
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
    return rows


def _date_from(pattern: re.Pattern[str], name: str, where: str, notes: list[str]) -> str | None:
    m = pattern.search(name)
    if m is None:
        notes.append(f"{where}: no release date in the file name")
        return None
    return m.group(1)


def _load_zip(path: Path) -> ConceptIndex:
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as err:
        raise BadInputError(f"cannot open the zip: {err}", path=path) from None
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
            try:
                return _load_rf2(path, "rf2-zip", _ZipSource(zf, path, names))
            except (zipfile.BadZipFile, zlib.error) as err:
                raise BadInputError(f"a zip member cannot be read: {err}", path=path) from None
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
        fitting = [m for m in members if _has_gps_header(zf, m)]
        if len(fitting) != 1:
            raise BadInputError(
                f"{len(fitting) or 'no'} of the members {members} look like the GPS file",
                path=path,
                hint="extract the GPS .txt file and pass it to --gps",
            )
        member = fitting[0]
    where = f"{path}!{member}"
    notes: list[str] = []

    def open_bytes() -> IO[bytes]:
        return zf.open(member)

    try:
        with open_bytes() as raw:
            scan = _scan(raw)
        rows = _read_gps(open_bytes, where, notes, scan)
    except (zipfile.BadZipFile, zlib.error) as err:
        raise BadInputError(f"the zip member cannot be read: {err}", path=where) from None
    digest = sha256_file(path)
    date = _GPS_DATE.search(_basename(member)) or _GPS_DATE.search(path.name)
    if date is None:
        notes.append(f"{where}: no release date in the member or zip name")
    files = [SourceFile(str(path), digest), SourceFile(str(path), scan.sha256, member)]
    return ConceptIndex(
        rows, "gps-zip", str(path), date.group(1) if date else None, digest, files, notes
    )


def _has_gps_header(zf: zipfile.ZipFile, member: str) -> bool:
    with zf.open(member) as raw:
        first = raw.readline().decode("utf-8", "replace").lstrip("\ufeff")
    return all(c in first.rstrip("\r\n").split("\t") for c in GPS_COLUMNS)


# --------------------------------------------------------------------------------------------
# RF2


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
        return (self.root / name).open("rb")

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
        return self.zf.open(name)

    def sha256(self, name: str) -> str | None:
        # The zip's own hash is reported; hashing each member again would double the read time.
        return None


def _load_rf2_folder(path: Path) -> ConceptIndex:
    return _load_rf2(path, "rf2-folder", _FolderSource(path))


def _load_rf2(path: Path, kind: str, src: _FolderSource | _ZipSource) -> ConceptIndex:
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
            f"more than one Concept snapshot file: {found['concept']}",
            path=path,
            hint="pass the folder of one release only",
        )
    notes: list[str] = []
    us_preferred = _read_us_preferred(src, found["language"], notes)
    fsn, pt = _read_descriptions(src, found["description"], us_preferred, notes)
    del us_preferred
    concept_file = found["concept"][0]
    concepts = _read_concepts(src, concept_file, fsn, pt, notes)
    dates = {
        m.group(1) for n in (f for v in found.values() for f in v) if (m := _RF2_DATE.search(n))
    }
    date_match = _RF2_DATE.search(concept_file)
    date = date_match.group(1) if date_match else None
    if date is None:
        notes.append(f"{src.where(concept_file)}: no release date in the file name")
    if len(dates) > 1:
        notes.append(f"the RF2 files carry different dates: {', '.join(sorted(dates))}")
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


def _rows(
    src: _FolderSource | _ZipSource, name: str, required: tuple[str, ...], notes: list[str]
) -> Iterator[tuple[int, list[str], _Header]]:
    """Every row of an RF2 file, split on tabs, with its line number and the header."""
    where = src.where(name)
    try:
        with src.open_bytes(name) as raw, _text(raw) as stream:
            header = _read_header(stream, where, required, notes)
            for lineno, line in enumerate(stream, start=2):
                parts = line.rstrip("\r\n").split("\t")
                if len(parts) not in header.widths:
                    raise _bad_width(where, lineno, parts, header)
                yield lineno, parts, header
    except UnicodeDecodeError:
        raise _not_utf8(where, partial(src.open_bytes, name)) from None


def _check_active(value: str, where: str, line: int) -> bool:
    if value == "1":
        return True
    if value == "0":
        return False
    raise BadInputError(f"active is {value!r}; it must be 1 or 0", path=where, line=line)


def _read_us_preferred(
    src: _FolderSource | _ZipSource, names: list[str], notes: list[str]
) -> set[str]:
    """Identifiers of descriptions that the US English refset marks preferred, active rows only."""
    preferred: set[str] = set()
    gb_rows = 0
    for name in names:
        where = src.where(name)
        for lineno, parts, header in _rows(src, name, LANGUAGE_COLUMNS, notes):
            col = header.index
            refset = parts[col["refsetId"]]
            if refset != US_ENGLISH_REFSET:
                gb_rows += refset == GB_ENGLISH_REFSET
                continue
            if _check_active(parts[col["active"]], where, lineno) and (
                parts[col["acceptabilityId"]] == PREFERRED
            ):
                preferred.add(parts[col["referencedComponentId"]])
    logger.info(
        "US English preferred descriptions: %d (GB rows skipped: %d)", len(preferred), gb_rows
    )
    return preferred


def _read_descriptions(
    src: _FolderSource | _ZipSource, names: list[str], us_preferred: set[str], notes: list[str]
) -> tuple[dict[str, tuple[str, str]], dict[str, tuple[str, str]]]:
    """Active FSNs and US preferred synonyms, as ``concept -> (description id, term)``."""
    fsn: dict[str, tuple[str, str]] = {}
    pt: dict[str, tuple[str, str]] = {}
    for name in names:
        where = src.where(name)
        for lineno, parts, header in _rows(src, name, DESCRIPTION_COLUMNS, notes):
            col = header.index
            if not _check_active(parts[col["active"]], where, lineno):
                continue
            type_id = parts[col["typeId"]]
            if type_id == FSN_TYPE:
                target = fsn
            elif type_id == SYNONYM_TYPE:
                if parts[col["id"]] not in us_preferred:
                    continue
                target = pt
            else:
                continue
            did, cid, term = parts[col["id"]], parts[col["conceptId"]], parts[col["term"]]
            old = target.get(cid)
            if old is not None and old[0] != did:
                # Two active FSNs: the one the US refset prefers wins; any other tie is a broken
                # snapshot, and guessing would put a wrong term in the report.
                if target is fsn and (did in us_preferred) != (old[0] in us_preferred):
                    if did not in us_preferred:
                        continue
                else:
                    what = "FSNs" if target is fsn else "US preferred synonyms"
                    raise BadInputError(
                        f"concept {cid} has two active {what}: descriptions {old[0]} and {did}",
                        path=where,
                        line=lineno,
                        hint="use one complete International Edition snapshot",
                    )
            target[cid] = (did, term)
    return fsn, pt


def _read_concepts(
    src: _FolderSource | _ZipSource,
    name: str,
    fsn: dict[str, tuple[str, str]],
    pt: dict[str, tuple[str, str]],
    notes: list[str],
) -> dict[str, str]:
    where = src.where(name)
    concepts: dict[str, str] = {}
    no_fsn = 0
    for lineno, parts, header in _rows(src, name, CONCEPT_COLUMNS, notes):
        col = header.index
        cid = parts[col["id"]]
        if cid == "":
            raise BadInputError("the concept identifier is empty", path=where, line=lineno)
        if cid in concepts:
            raise BadInputError(f"concept {cid} is listed twice", path=where, line=lineno)
        active = _check_active(parts[col["active"]], where, lineno)
        f = fsn.get(cid)
        p = pt.get(cid)
        no_fsn += f is None
        concepts[cid] = encode_row(f[1] if f else "", p[1] if p else "", active)
    if no_fsn:
        notes.append(f"{where}: {no_fsn} concept(s) without an active FSN")
    return concepts
