"""MRCONSO.RRF rows: the 18 columns, one row split and checked, the sniff of a file's first rows.

Light on purpose (``re`` and the error tree only): ``testing`` reads invented rows with it, and a
worker process imports it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from tempmedbench_synonyms.atoms import Atom
from tempmedbench_synonyms.errors import BadInputError

MRCONSO_COLUMNS: tuple[str, ...] = (
    "CUI", "LAT", "TS", "LUI", "STT", "SUI", "ISPREF", "AUI", "SAUI",
    "SCUI", "SDUI", "SAB", "TTY", "CODE", "STR", "SRL", "SUPPRESS", "CVF",
)  # fmt: skip
COLUMN = {name: i for i, name in enumerate(MRCONSO_COLUMNS)}
F_CUI, F_LAT, F_AUI, F_SAB, F_TTY, F_CODE, F_STR, F_SUPPRESS = tuple(
    COLUMN[c] for c in ("CUI", "LAT", "AUI", "SAB", "TTY", "CODE", "STR", "SUPPRESS")
)

#: How much of the start of the file is sniffed, and how many of its rows are checked.
SNIFF_BYTES = 1 << 16
SNIFF_ROWS = 5
BOM = b"\xef\xbb\xbf"
_CUI_SHAPE = re.compile(r"C\d{7}")
_NOT_MRCONSO_HINT = (
    "--mrconso takes MRCONSO.RRF (the concept names of the UMLS Metathesaurus, in the META "
    "folder of a release), as NLM ships it; not another RRF file, a README or an archive of "
    "something else"
)


def fields_of(line: str) -> list[str] | str:
    """The 18 fields of one row without its line end (SPEC 4), or what is wrong with it."""
    if line.endswith("\r"):
        line = line[:-1]
    fields = line.split("|")
    if len(fields) != len(MRCONSO_COLUMNS) + 1 or fields[-1] != "":
        return (
            f"an MRCONSO.RRF row has {len(MRCONSO_COLUMNS)} fields, each followed by '|'; "
            f"this line has {len(fields) - 1 if fields[-1] == '' else len(fields)}"
            f"{'' if fields[-1] == '' else ' and no trailing |'}"
        )
    del fields[-1]
    return fields


def split_row(line: str, *, path: str | Path, line_no: int) -> list[str]:
    """Split one MRCONSO.RRF row (with or without its line end) into its 18 fields."""
    fields = fields_of(line[:-1] if line.endswith("\n") else line)
    if isinstance(fields, str):
        raise BadInputError(
            fields,
            path=path,
            line=line_no,
            hint="pass the MRCONSO.RRF of a UMLS release (from MetamorphoSys or the full "
            "release zip), not another RRF file",
        )
    return fields


def atom_from_fields(fields: Sequence[str]) -> Atom:
    """Map an MRCONSO row to an ``Atom`` exactly as SPEC section 3 says (usable = SUPPRESS "N")."""
    return Atom(
        aui=fields[F_AUI],
        name=fields[F_STR],
        tty=fields[F_TTY],
        sab=fields[F_SAB],
        language=fields[F_LAT],
        cui=fields[F_CUI],
        usable=fields[F_SUPPRESS] == "N",
    )


def _excerpt(text: str) -> str:
    return repr(text[:60]) + ("..." if len(text) > 60 else "")


def sniff(head: bytes, *, at_end: bool, path: str | Path) -> int:
    """The bytes to skip (3 for a UTF-8 BOM) if ``head`` reads as MRCONSO.RRF, else bad input
    naming what it found (``at_end``: ``head`` is the whole file)."""

    def bad(problem: str, line: int | None = None) -> BadInputError:
        return BadInputError(
            f"not an MRCONSO.RRF file: {problem}", path=path, line=line, hint=_NOT_MRCONSO_HINT
        )

    skip = len(BOM) if head.startswith(BOM) else 0
    body = head[skip:]
    if not body.strip():
        raise bad("it is empty" if not head else "it holds no row, only blank space")
    nul = body.find(b"\0")
    if nul != -1:
        raise bad(f"it is binary (a NUL byte at byte {nul + skip})")
    lines = body.split(b"\n", SNIFF_ROWS)
    if len(lines) == 1 and not at_end:
        raise bad(f"its first line is longer than {len(body):,} bytes with no line end")
    rows = lines[:SNIFF_ROWS] if len(lines) > SNIFF_ROWS or at_end else lines[:-1]
    for n, raw in enumerate(rows, start=1):
        if not raw and n > 1:
            break  # the end of a short file
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            raise bad(f"it is not UTF-8 text (byte 0x{raw[err.start]:02x})", n) from None
        fields = fields_of(line)
        if isinstance(fields, str):
            raise bad(f"{fields}: {_excerpt(line)}", n)
        if not _CUI_SHAPE.fullmatch(fields[F_CUI]):
            raise bad(f"its first field {_excerpt(fields[F_CUI])} is not a CUI (C and 7 digits)", n)
    return skip


def last_row(rest: bytes, path: str | Path, parts: Sequence[str] = ()) -> bytes:
    """The bytes after a file's last line end, as a row with its line end added: a complete row
    (18 fields, each with ``|``), else a row cut short (a missing part, a truncated file): bad
    input, never drift."""
    row = rest[:-1] if rest.endswith(b"\r") else rest
    if row.endswith(b"|") and row.count(b"|") == len(MRCONSO_COLUMNS):
        return rest + b"\n"
    after = f" after its last part {parts[-1]}" if parts else ""
    raise BadInputError(
        f"ends mid-row{after}: is the last part missing or the file truncated?",
        path=path,
        hint="download or extract MRCONSO.RRF (with every part MRCONSO.RRF.aa.gz, .ab.gz, ...) "
        "again",
    )


def unended_note(path: str | Path, parts: Sequence[str] = ()) -> str:
    """The warning of a file whose complete last row has no line end (``last_row``)."""
    last = f" (its last part {parts[-1]})" if parts else ""
    return (
        f"{path}{last} does not end with a line feed: its last row is complete "
        f"({len(MRCONSO_COLUMNS)} fields, each followed by '|') and was read"
    )


def bom_note(path: Path) -> str:
    return (
        f"{path} starts with a UTF-8 byte order mark (BOM), which MRCONSO.RRF does not have: "
        "it was removed before the first row was read"
    )
