"""The SNOMED CT Global Patient Set file (``*GPSRelease*.txt``), alone or zipped, as a lean index.

Read once, a block at a time, hashed on a helper thread; rows are checked in bulk, and on any
anomaly a line-by-line pass names the line (no pydantic per row, on purpose: the GPS has
~380,000). What it accepts and refuses: docs/reference.md, ``gps validate``.
"""

from __future__ import annotations

import hashlib
import io
import logging
import re
import zipfile
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from operator import itemgetter
from pathlib import Path
from typing import IO

from tempmedbench_synonyms import runtime
from tempmedbench_synonyms.errors import BadInputError, bounded_list
from tempmedbench_synonyms.files import open_regular, sha256_file
from tempmedbench_synonyms.snomed import tables
from tempmedbench_synonyms.snomed.concepts import ConceptIndex, SourceFile, encode_row
from tempmedbench_synonyms.snomed.tables import READ_BLOCK
from tempmedbench_synonyms.zips import reading_member

log = logging.getLogger(__name__)

GPS_COLUMNS = ("ConceptID", "Active", "FSN", "USPreferredTerm")

_TRAILING_NEWLINES = re.compile(rb"(?:\r?\n)+\Z")
_TAIL_BYTES = 64

# Bounds (SPEC section 8): the GPS holds ~380,000 rows (~45 MB); these leave years of growth and
# keep the index under ~300 MB. A size is checked as a zip member declares it and as it is read.
GPS_MAX_BYTES = 256 << 20
GPS_MAX_ROWS = 2_000_000

# Every byte value except TAB and LF, for bytes.translate(None, delete=...).
_NOT_TAB_OR_LF = bytes(b for b in range(256) if b not in (0x09, 0x0A))


def _too_many_lines(where: str) -> BadInputError:
    return BadInputError(
        f"more than {GPS_MAX_ROWS} lines; the GPS file has about 380,000 concepts, one a line",
        path=where,
        hint=tables.SIZE_HINT,
    )


class _Scan:
    """The file's tabs and line feeds, gathered by :meth:`blocks` as the blocks go by."""

    def __init__(self) -> None:
        self.newlines = 0
        self.tail = b""  # the file's last bytes
        self.skeleton: list[bytes] = []  # only the TAB and LF bytes, in file order (~4 a row)

    def blocks(
        self, raw: IO[bytes], where: str, hash_block: Callable[[bytes], object]
    ) -> Iterator[bytes]:
        """The blocks of ``raw`` (``READ_BLOCK``), each hashed and its tabs and line feeds kept, so
        the fast path checks every row's width without a Python loop."""
        for block in iter(lambda: raw.read(READ_BLOCK), b""):
            hash_block(block)
            tabs_and_lfs = block.translate(None, _NOT_TAB_OR_LF)
            self.newlines += tabs_and_lfs.count(b"\n")  # 1/10 of the bytes to count
            if self.newlines > GPS_MAX_ROWS:
                raise _too_many_lines(where)
            self.skeleton.append(tabs_and_lfs)
            self.tail = (self.tail + block[-_TAIL_BYTES:])[-_TAIL_BYTES:]
            yield block

    @property
    def unterminated(self) -> bool:
        return bool(self.tail) and not self.tail.endswith(b"\n")

    @property
    def trailing_blank(self) -> int:
        """Blank lines at the end of the file; -1: too many to count from the tail."""
        m = _TRAILING_NEWLINES.search(self.tail)
        if m is None:
            return 0
        if m.start() == 0 and len(self.tail) == _TAIL_BYTES:
            return -1  # the run of line ends may go on before the tail: the checked path counts
        # The first line end closes the last line that has content; each further one is a
        # blank line.
        return m.group().count(b"\n") - (m.start() > 0)

    def every_line_has(self, tabs: int) -> bool:
        """Whether every line but trailing blank ones has exactly ``tabs`` tabs (one compare)."""
        line = b"\t" * tabs
        blank = self.trailing_blank
        expected = (
            (line + b"\n") * (self.newlines - blank)
            + b"\n" * blank
            + (line if self.unterminated else b"")
        )
        return b"".join(self.skeleton) == expected


def load_gps_tsv(path: str | Path) -> ConceptIndex:
    p = Path(path)
    notes: list[str] = []
    rows, digest = _read_gps(partial(open_regular, p, what="the GPS file"), str(p), notes)
    date = tables.release_date(str(p), notes, p.name, p.parent.as_posix())
    return ConceptIndex(rows, "gps-tsv", str(p), date, digest, [SourceFile(str(p), digest)], notes)


def _read_gps(
    open_raw: Callable[[], IO[bytes]], where: str, notes: list[str]
) -> tuple[dict[str, str], str]:
    """The rows of a GPS file under their identifiers, and the SHA-256 of its bytes."""

    def open_bytes(seen: Callable[[bytes], object] | None = None) -> IO[bytes]:
        return tables.bounded(open_raw(), where, "the GPS file", GPS_MAX_BYTES, seen=seen)

    scan = _Scan()
    sha = hashlib.sha256()
    # Hashed on another thread while this one parses (hashlib frees the GIL).
    hashing = runtime.DaemonPool(1, thread_name_prefix="gps-sha256")
    try:
        with open_bytes() as raw:
            blocks = scan.blocks(raw, where, partial(hashing.submit, sha.update))
            header, rows = _read_gps_rows_fast(blocks, where, notes)
        if rows is not None and _fast_rows_ok(rows, scan):
            if scan.trailing_blank:
                notes.append(tables.blank_note(where, scan.trailing_blank))
        else:
            # Columns in another order, more of them or trailing empty header cells (no rows),
            # or something is off (a short row, a bad Active, an empty, repeated or non-digit
            # identifier...): the general path reads the file again line by line, and raises
            # with the line and the problem.
            if rows is not None:
                log.debug("%s: the fast GPS path saw a bad row; reading it again", where)
            del rows
            again = hashlib.sha256()
            with open_bytes(again.update) as raw, tables.text_stream(raw) as stream:
                stream.readline()
                rows = _read_gps_rows_checked(stream, where, header, notes)
            hashing.shutdown()  # every block of the first read hashed
            if again.hexdigest() != sha.hexdigest():
                # The digest reported must be that of the rows checked.
                raise BadInputError(
                    "the file changed while it was read",
                    path=where,
                    hint="run again once nothing writes the file",
                )
    except UnicodeDecodeError:
        raise tables.not_utf8_error(where, open_bytes) from None
    finally:
        hashing.shutdown()
    digest = sha.hexdigest()
    if not rows:
        raise tables.no_concepts(
            where,
            "the file has a header only",
            "the GPS file lists about 380,000 concepts; download it again",
        )
    return rows, digest


def _read_gps_rows_fast(
    blocks: Iterable[bytes], where: str, notes: list[str]
) -> tuple[tables.Header, dict[str, str] | None]:
    """The loader's hot loop: the header, and each line's rest under its identifier; ``None``
    rows when the header is not exactly the GPS's own.

    Decoded a block at a time (UTF-8 has no 0x0A inside a character), one ``str.partition`` and a
    store in a per-block dict a row (measured fastest); :func:`_fast_rows_ok` checks them.
    """
    rows: dict[str, str] = {}
    header: tables.Header | None = None
    blocks = iter(blocks)
    for text in _whole_lines(blocks):
        if header is None:
            first, newline, text = text.partition("\n")
            header = tables.parse_header(first + newline, where, GPS_COLUMNS, notes)
            if header.names != GPS_COLUMNS or len(header.widths) > 1:
                for _ in blocks:  # read to the end: the scan and the hash need every byte
                    pass
                return header, None
        lines = text.split("\n")
        if lines[-1] == "":
            lines.pop()  # the LF that ends the chunk ends no further line
        block_rows = {}
        for line in lines:
            cid, _, rest = line.partition("\t")
            block_rows[cid] = rest
        rows.update(block_rows)
    if header is None:  # an empty file
        header = tables.parse_header("", where, GPS_COLUMNS, notes)
    return header, rows


def _whole_lines(blocks: Iterator[bytes]) -> Iterator[str]:
    """The text of ``blocks``, a run of whole lines at a time; the last may lack its LF."""
    carry = b""
    for block in blocks:
        end = block.rfind(b"\n") + 1
        if not end:
            carry += block  # no line ends in this block (only a short read can do that)
            continue
        view = memoryview(block)[:end]
        yield str(b"".join((carry, view)) if carry else view, "utf-8")
        carry = block[end:]
    if carry:
        yield str(carry, "utf-8")


def _fast_rows_ok(rows: dict[str, str], scan: _Scan) -> bool:
    """Whether every fast-path row has the header's width, an Active of 0 or 1 and a distinct
    ASCII-digit identifier (the checked path says which is not). Trailing blank lines dropped."""
    blank = scan.trailing_blank
    if blank < 0:
        return False
    if blank:
        rows.pop("", None)
        rows.pop("\r", None)
    if len(rows) != scan.newlines + scan.unterminated - 1 - blank:
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
    # Every line has width - 1 tabs, so every row's rest has exactly two (Active | FSN | PT).
    # Then Active is 0 or 1 when each rest starts with that and a tab.
    return (
        scan.every_line_has(len(GPS_COLUMNS) - 1)
        and set(map(itemgetter(0), values)) <= {"0", "1"}
        and set(map(itemgetter(1), values)) <= {"\t"}
    )


def _read_gps_rows_checked(
    stream: io.TextIOWrapper, where: str, header: tables.Header, notes: list[str]
) -> dict[str, str]:
    """Every row, checked as it is read; raises on the first bad one, naming its line."""
    pick = itemgetter(*(header.index[c] for c in GPS_COLUMNS))
    extra = [i for i in range(len(header.names), max(header.widths))]
    rows: dict[str, str] = {}
    first_seen: dict[str, int] = {}
    lines = enumerate(stream, start=2)
    for lineno, line in lines:
        if lineno > GPS_MAX_ROWS + 1:  # as the first read bounds them: a file grown since
            raise _too_many_lines(where)
        text = line.rstrip("\r\n")
        if not text:
            tables.trailing_blank_lines(lines, where, lineno, notes)
            break
        parts = text.split("\t")
        if len(parts) not in header.widths:
            raise tables.bad_width(where, lineno, parts, header)
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
    return rows


def is_gps_member(name: str) -> bool:
    """Whether a zip member's name is the GPS file's: ``*GPSRelease*.txt``, in any folder."""
    return "gpsrelease" in tables.basename(name).lower() and name.endswith(".txt")


def load_gps_zip(path: Path, zf: zipfile.ZipFile, members: list[str]) -> ConceptIndex:
    """Read the GPS file from the open zip ``zf`` at ``path``; ``members`` are the candidates."""
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
    tables.check_declared_size(path, zf, member, GPS_MAX_BYTES)
    with reading_member(path, zf, member, hint=tables.ZIP_HINT):
        rows, member_digest = _read_gps(partial(zf.open, member), where, notes)
    digest = sha256_file(path)
    date = tables.release_date(where, notes, member, path.name, what="the member or zip name")
    files = [SourceFile(str(path), digest), SourceFile(str(path), member_digest, member)]
    return ConceptIndex(rows, "gps-zip", str(path), date, digest, files, notes)


def _has_gps_header(path: Path, zf: zipfile.ZipFile, member: str) -> bool:
    with reading_member(path, zf, member, hint=tables.ZIP_HINT), zf.open(member) as raw:
        first = raw.readline(tables.LINE_MAX_BYTES).decode("utf-8", "replace").lstrip("\ufeff")
    return all(c in first.rstrip("\r\n").split("\t") for c in GPS_COLUMNS)
