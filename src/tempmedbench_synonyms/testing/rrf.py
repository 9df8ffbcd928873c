"""The other UMLS Metathesaurus files the fake UTS reads, in their RRF layouts (test helpers).

MRDEF (definitions), MRREL (relations), MRSTY (semantic types), MRHIER (hierarchies) and MRSAB
(sources), each row its columns joined by ``|`` with a trailing ``|``, as the UMLS Reference
Manual lays them out (section 3.3, "Data elements"). The fake serves invented rows in these
layouts; nothing here is UMLS content.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple, TypeVar


class Mrdef(NamedTuple):
    """One row of MRDEF.RRF: a definition of a concept, asserted by a source's atom."""

    CUI: str
    AUI: str
    ATUI: str
    SATUI: str
    SAB: str
    DEF: str
    SUPPRESS: str
    CVF: str


class Mrrel(NamedTuple):
    """One row of MRREL.RRF: REL (and RELA) is the relationship of the second id to the first;
    STYPE1/STYPE2 say what each id is (``CUI``, ``AUI``, ``SCUI``, ``SDUI``, ``CODE``)."""

    CUI1: str
    AUI1: str
    STYPE1: str
    REL: str
    CUI2: str
    AUI2: str
    STYPE2: str
    RELA: str
    RUI: str
    SRUI: str
    SAB: str
    SL: str
    RG: str
    DIR: str
    SUPPRESS: str
    CVF: str


class Mrsty(NamedTuple):
    """One row of MRSTY.RRF: a semantic type (TUI, tree number STN, name STY) of a concept."""

    CUI: str
    TUI: str
    STN: str
    STY: str
    ATUI: str
    CVF: str


class Mrhier(NamedTuple):
    """One row of MRHIER.RRF: an atom's place in one context of its source: PAUI its parent,
    PTR the path of AUIs from the top down to that parent, ``.``-separated."""

    CUI: str
    AUI: str
    CXN: str
    PAUI: str
    SAB: str
    RELA: str
    PTR: str
    HCD: str
    CVF: str


class Mrsab(NamedTuple):
    """One row of MRSAB.RRF: one version of a source (CURVER ``Y``: the current one)."""

    VCUI: str
    RCUI: str
    VSAB: str
    RSAB: str
    SON: str
    SF: str
    SVER: str
    VSTART: str
    VEND: str
    IMETA: str
    RMETA: str
    SLC: str
    SCC: str
    SRL: str
    TFR: str
    CFR: str
    CXTY: str
    TTYL: str
    ATNL: str
    LAT: str
    CENC: str
    CURVER: str
    SABIN: str
    SSN: str
    SCIT: str


Row = TypeVar("Row", Mrdef, Mrrel, Mrsty, Mrhier, Mrsab)


def parse_rows(lines: Iterable[str], kind: type[Row], *, path: str = "<rows>") -> Iterator[Row]:
    """The rows of ``kind`` in RRF lines (blank lines skipped); a line with the wrong number of
    fields is a ``ValueError`` naming the file, the line and the layout."""
    width = len(kind._fields)
    for n, line in enumerate(lines, start=1):
        line = line.rstrip("\r\n")
        if not line.strip():
            continue
        fields = line.split("|")
        if len(fields) != width + 1 or fields[-1] != "":
            closed = fields[-1] == ""
            raise ValueError(
                f"{path}, line {n}: a {kind.__name__.upper()}.RRF row has {width} fields, each "
                f"followed by '|' ({'|'.join(kind._fields)}|); this line has "
                f"{len(fields) - closed}{'' if closed else ' and no trailing |'}"
            )
        yield kind(*fields[:-1])


def read_rows(path: Path, kind: type[Row]) -> list[Row]:
    """Every row of an RRF file of ``kind`` (UTF-8, as NLM ships them)."""
    with open(path, encoding="utf-8", newline="") as fh:
        return list(parse_rows(fh, kind, path=str(path)))
