"""Shared helpers of the SNOMED CT readers."""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from tempmedbench_synonyms.errors import BadInputError, bounded_list

# A release date: the package's time stamp anywhere in a path (SnomedCT_..._20260101T120000Z/...),
# or an RF2-style "_<date>.txt" at the end of a file name.
_STAMP_DATE = re.compile(r"(\d{8})T\d{6}Z")
NAME_DATE = re.compile(r"_(\d{8})\.txt$")

#: What to do with a zip member that cannot be read (``zips.reading_member``).
ZIP_HINT = "extract the .txt, or zip it again with standard deflate"


# No line of the GPS or of an RF2 file comes near 64 KiB (an RF2 term is at most 4,096
# characters; SPEC section 8). Files are read in blocks of 1 MiB.
LINE_MAX_BYTES = 64 << 10
READ_BLOCK = 1 << 20


class Bounded(io.RawIOBase):
    """A byte stream that stops, with ``BadInputError``, past ``max_bytes`` bytes or at a line
    longer than ``max_line`` bytes (LF excluded); :func:`bounded` wraps it in a ``BufferedReader``.

    Only a window of ``max_line // 2`` bytes without an LF is measured exactly (~32 ``find`` calls
    a MiB); the error counts the lines before by reading ``raw`` (seekable) again.
    """

    def __init__(
        self,
        raw: IO[bytes],
        where: str,
        what: str,
        max_bytes: int,
        max_line: int,
        *,
        seen: Callable[[bytes], object] | None = None,
    ):
        self._raw = raw
        self._seen = seen  # given every byte read (a hash)
        self.where = where
        self.what = what
        self.max_bytes = max_bytes
        self.max_line = max_line
        self.total = 0
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
                    hint=SIZE_HINT,
                )
            self._check_lines(data, self.total - n)
            if self._seen is not None:
                self._seen(data)
            buffer[:n] = data
        return n

    def _check_lines(self, data: bytes, base: int) -> None:
        limit = self.max_line
        first = data.find(b"\n")
        if first < 0:
            self.run += len(data)
            if self.run > limit:
                self._too_long(base + len(data) - self.run)
            return
        if self.run + first > limit:
            self._too_long(base - self.run)
        last = data.rfind(b"\n")
        if last - first > limit:
            window = limit // 2
            for i in range(first, last, window):
                if data.find(b"\n", i, min(i + window, last)) < 0:
                    start, end = data.rfind(b"\n", 0, i), data.find(b"\n", i)
                    if end - start - 1 > limit:
                        self._too_long(base + start + 1)
        self.run = len(data) - last - 1
        if self.run > limit:  # the start of the next line, already too long
            self._too_long(base + last + 1)

    def _too_long(self, start: int) -> None:
        """Refuse the line that starts at byte ``start``, naming it."""
        self._raw.seek(0)
        line = 1
        while start > 0:
            block = self._raw.read(min(READ_BLOCK, start))
            if not block:  # pragma: no cover - the bytes were there a moment ago
                break
            line += block.count(b"\n")
            start -= len(block)
        raise BadInputError(
            f"a line longer than {self.max_line} bytes; {self.what} has no such line",
            path=self.where,
            line=line,
            hint=SIZE_HINT,
        )


#: How a note ends that says a file has CRLF line ends (the RF2 loader says it once for all).
CRLF_NOTE = ": CRLF line ends"
SIZE_HINT = "pass the SNOMED International GPS (zip or .txt) or an RF2 snapshot, as downloaded"


def bounded(
    raw: IO[bytes],
    where: str,
    what: str,
    max_bytes: int,
    *,
    seen: Callable[[bytes], object] | None = None,
) -> IO[bytes]:
    """``raw`` read through :class:`Bounded` (``max_bytes``, lines of ``LINE_MAX_BYTES``)."""
    bounds = Bounded(raw, where, what, max_bytes, LINE_MAX_BYTES, seen=seen)
    return io.BufferedReader(bounds, READ_BLOCK)


def check_declared_size(path: Path, zf: zipfile.ZipFile, member: str, max_bytes: int) -> None:
    """Refuse a zip member whose declared size is beyond the bound, before reading it."""
    size = zf.getinfo(member).file_size
    if size > max_bytes:
        raise BadInputError(
            f"the member declares {size} bytes once unpacked, more than the {max_bytes} bytes "
            f"({max_bytes >> 20} MiB) such a file can have; this is not the file it claims to be "
            "(or a zip bomb)",
            path=f"{path}!{member}",
            hint=SIZE_HINT,
        )


def release_date(
    where: str, notes: list[str], *names: str, what: str = "the file name"
) -> str | None:
    """The first release date found in ``names``: a time stamp anywhere, else ``_<date>.txt``;
    when none is, a note says so."""
    for name in names:
        m = _STAMP_DATE.search(name) or NAME_DATE.search(name)
        if m is not None:
            return m.group(1)
    notes.append(f"{where}: no release date in {what}")
    return None


@dataclass(frozen=True, slots=True)
class Header:
    """Where each needed column sits, and the row widths that are accepted."""

    names: tuple[str, ...]
    index: dict[str, int]
    widths: frozenset[int]


def text_stream(raw: IO[bytes]) -> io.TextIOWrapper:
    # newline="\n": lines end at LF only and keep a CR before it, so a CRLF file can be reported,
    # and a stray CR inside a term does not cut the line in two (universal newlines would).
    return io.TextIOWrapper(raw, encoding="utf-8", newline="\n")


def parse_header(first: str, where: str, required: tuple[str, ...], notes: list[str]) -> Header:
    """Where each ``required`` column sits in the header ``first``; BOM, CRLF, empty cells noted."""
    if not first:
        raise BadInputError("the file is empty; a header line was expected", path=where, line=1)
    if first.startswith("\ufeff"):
        first = first[1:]
        notes.append(f"{where}: a UTF-8 byte order mark was skipped")
    if first.endswith("\r\n"):
        notes.append(f"{where}{CRLF_NOTE}")
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
    return Header(tuple(names), index, frozenset({trimmed, width}))


def bad_width(where: str, line: int, parts: list[str], header: Header) -> BadInputError:
    expected = " or ".join(str(w) for w in sorted(header.widths))
    return BadInputError(
        f"{len(parts)} tab-separated fields where the header has {expected}",
        path=where,
        line=line,
        hint="a row is one line with a tab between fields; terms are never quoted",
    )


def trailing_blank_lines(
    rows: Iterator[tuple[int, str]], where: str, first: int, notes: list[str]
) -> None:
    """Read the rest of a file after a blank line on line ``first``: blank lines only."""
    n = 1
    for _, line in rows:
        if line.rstrip("\r\n"):
            raise BadInputError(
                "a blank line; blank lines are allowed only at the end of the file",
                path=where,
                line=first,
            )
        n += 1
    notes.append(blank_note(where, n))


def blank_note(where: str, n: int) -> str:
    return f"{where}: {n} blank line(s) at the end of the file ignored"


def not_utf8_error(
    where: str, open_bytes: Callable[[], AbstractContextManager[IO[bytes]]]
) -> BadInputError:
    """A not-UTF-8 file's error, naming the first bad line (found by a rescan)."""
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
        hint="the GPS and RF2 files are UTF-8; download the file again if it was re-encoded",
    )


def no_concepts(where: str, problem: str, hint: str) -> BadInputError:
    return BadInputError(f"no concept rows: {problem}", path=where, hint=hint)


def basename(name: str) -> str:
    return name.rsplit("/", 1)[-1]
