"""The fake UTS's data: invented MRCONSO rows (``FakeRow``) and the other Metathesaurus files'
rows (``testing.rrf``), indexed as the routes read them (``FakeUtsData``).

``fake`` -> ``routes`` -> ``data``: the routes answer from this data, the fake serves the routes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from tempmedbench_synonyms.mrconso.rows import COLUMN, split_row
from tempmedbench_synonyms.testing.rrf import Mrdef, Mrhier, Mrrel, Mrsab, Mrsty, read_rows

#: A word of an atom's string, for search.
WORD = re.compile(r"\w+")
#: The files ``FakeUtsData.from_meta`` reads from a folder, when it holds them.
META_FILES = ("MRCONSO", "MRDEF", "MRREL", "MRSTY", "MRHIER", "MRSAB")
_CUI, _LAT, _AUI, _SCUI, _SDUI, _SAB, _TTY, _CODE, _STR, _SUPPRESS, _SRL = (
    COLUMN[c]
    for c in ("CUI", "LAT", "AUI", "SCUI", "SDUI", "SAB", "TTY", "CODE", "STR", "SUPPRESS", "SRL")
)


@dataclass(frozen=True, slots=True)
class FakeRow:
    """One MRCONSO.RRF row the fake serves: its 18 fields, and those it reads by name."""

    fields: tuple[str, ...]

    @classmethod
    def from_fields(cls, fields: Sequence[str]) -> FakeRow:
        """The row from the 18 fields of one MRCONSO.RRF line (as ``mrconso.split_row`` gives)."""
        if len(fields) != len(COLUMN):
            raise ValueError(f"an MRCONSO row has {len(COLUMN)} fields, not {len(fields)}")
        return cls(tuple(fields))

    @property
    def cui(self) -> str:
        """CUI: the concept."""
        return self.fields[_CUI]

    @property
    def lat(self) -> str:
        """LAT: the language."""
        return self.fields[_LAT]

    @property
    def aui(self) -> str:
        """AUI: the atom."""
        return self.fields[_AUI]

    @property
    def scui(self) -> str:
        """SCUI: the source's concept id."""
        return self.fields[_SCUI]

    @property
    def sdui(self) -> str:
        """SDUI: the source's descriptor id."""
        return self.fields[_SDUI]

    @property
    def sab(self) -> str:
        """SAB: the source."""
        return self.fields[_SAB]

    @property
    def tty(self) -> str:
        """TTY: the term type."""
        return self.fields[_TTY]

    @property
    def code(self) -> str:
        """CODE: the source code (``NOCODE`` if none)."""
        return self.fields[_CODE]

    @property
    def name(self) -> str:
        """STR: the string."""
        return self.fields[_STR]

    @property
    def suppress(self) -> str:
        """SUPPRESS: ``N``, or ``O``, ``E``, ``Y`` (obsolete, suppressible)."""
        return self.fields[_SUPPRESS]

    @property
    def obsolete(self) -> bool:
        """SUPPRESS is ``O``: UTS reports the atom as obsolete."""
        return self.suppress == "O"

    @property
    def suppressible(self) -> bool:
        """SUPPRESS is ``E`` or ``Y``: UTS reports the atom as suppressible (SPEC 12)."""
        # MRCONSO SUPPRESS: O obsolete, E suppressed by NLM editors, Y by the source, N not.
        return self.suppress in ("E", "Y")


class FakeUtsData:
    """What a fake UTS serves: MRCONSO rows indexed by CUI, source code and AUI, and the rows of
    the other Metathesaurus files it was given.

    With no MRSTY rows (``semantic_types=None``) every concept has one invented semantic type,
    ``T999`` "Invented Type"; with no MRSAB rows (``sources=None``) the sources are the SABs of
    the MRCONSO rows, each its own family, in the language and restriction level of its first row.
    """

    def __init__(
        self,
        rows: Iterable[FakeRow],
        *,
        release: str = "2099AA",
        also_served: Iterable[str] = (),
        definitions: Iterable[Mrdef] = (),
        relations: Iterable[Mrrel] = (),
        semantic_types: Iterable[Mrsty] | None = None,
        hierarchy: Iterable[Mrhier] = (),
        sources: Iterable[Mrsab] | None = None,
    ) -> None:
        self.rows = list(rows)
        self.release = release
        self.served = {release, *also_served}
        self.by_cui: dict[str, list[FakeRow]] = {}
        self.by_code: dict[tuple[str, str], list[FakeRow]] = {}
        self.by_aui: dict[str, FakeRow] = {}
        for row in self.rows:
            self.by_cui.setdefault(row.cui, []).append(row)
            self.by_code.setdefault((row.sab, row.code), []).append(row)
            self.by_aui.setdefault(row.aui, row)
        self.definitions_of: dict[str, list[Mrdef]] = {}
        for d in definitions:
            self.definitions_of.setdefault(d.CUI, []).append(d)
        self.relations_of_cui: dict[str, list[Mrrel]] = {}
        self.relations_of_aui: dict[str, list[Mrrel]] = {}
        for rel in relations:  # an id's relations are the rows whose second id it is
            self.relations_of_cui.setdefault(rel.CUI2, []).append(rel)
            if rel.AUI2:
                self.relations_of_aui.setdefault(rel.AUI2, []).append(rel)
        if semantic_types is None:
            semantic_types = (
                Mrsty(cui, "T999", "A9.9", "Invented Type", "", "") for cui in self.by_cui
            )
        self.types_of: dict[str, list[Mrsty]] = {}
        self.tuis: dict[str, Mrsty] = {}
        for t in semantic_types:
            self.types_of.setdefault(t.CUI, []).append(t)
            self.tuis.setdefault(t.TUI, t)
        self.hierarchy_of: dict[str, list[Mrhier]] = {}
        self.children_of: dict[str, list[str]] = {}
        for h in hierarchy:
            self.hierarchy_of.setdefault(h.AUI, []).append(h)
            if h.PAUI:
                self.children_of.setdefault(h.PAUI, []).append(h.AUI)
        if sources is None:  # each SAB of the MRCONSO rows, as its first row has it
            first = {row.sab: row for row in reversed(self.rows)}
            blank = dict.fromkeys(Mrsab._fields, "")
            sources = [
                Mrsab._make({**blank, "RSAB": sab, "SON": sab, "SF": sab, "SSN": sab,
                             "SRL": r.fields[_SRL], "LAT": r.lat, "CURVER": "Y"}.values())
                for sab, r in first.items()
            ]  # fmt: skip
        self.sources = [s for s in sources if s.CURVER == "Y"]

    @cached_property
    def search_index(self) -> SearchIndex:
        """The rows' strings and words, for search (built by the first search)."""
        return SearchIndex(self.rows)

    @classmethod
    def from_lines(
        cls, lines: Iterable[str], *, path: str = "<rows>", release: str = "2099AA"
    ) -> FakeUtsData:
        """Rows in MRCONSO.RRF format (18 fields, each followed by ``|``)."""
        return cls(_mrconso_rows(lines, path), release=release)

    @classmethod
    def from_mrconso(cls, path: Path, *, release: str = "2099AA") -> FakeUtsData:
        """Read an MRCONSO.RRF-format file (invented rows, for tests)."""
        with open(path, encoding="utf-8", newline="") as fh:
            return cls.from_lines(fh, path=str(path), release=release)

    @classmethod
    def from_meta(cls, folder: Path, *, release: str = "2099AA") -> FakeUtsData:
        """Read whichever of MRCONSO.RRF, MRDEF.RRF, MRREL.RRF, MRSTY.RRF, MRHIER.RRF and
        MRSAB.RRF the folder ``folder`` holds (a META folder's layout; invented rows, for
        tests); a folder with none of them is a ``FileNotFoundError``."""
        found = {n: Path(folder) / f"{n}.RRF" for n in META_FILES}
        found = {n: p for n, p in found.items() if p.is_file()}
        if not found:
            raise FileNotFoundError(
                f"{folder} holds none of {', '.join(n + '.RRF' for n in META_FILES)}"
            )
        rows: list[FakeRow] = []
        if "MRCONSO" in found:
            with open(found["MRCONSO"], encoding="utf-8", newline="") as fh:
                rows = list(_mrconso_rows(fh, str(found["MRCONSO"])))
        return cls(
            rows,
            release=release,
            definitions=read_rows(found["MRDEF"], Mrdef) if "MRDEF" in found else (),
            relations=read_rows(found["MRREL"], Mrrel) if "MRREL" in found else (),
            semantic_types=read_rows(found["MRSTY"], Mrsty) if "MRSTY" in found else None,
            hierarchy=read_rows(found["MRHIER"], Mrhier) if "MRHIER" in found else (),
            sources=read_rows(found["MRSAB"], Mrsab) if "MRSAB" in found else None,
        )


def _mrconso_rows(lines: Iterable[str], path: str) -> Iterable[FakeRow]:
    return (
        FakeRow.from_fields(split_row(line, path=path, line_no=n))
        for n, line in enumerate(lines, start=1)
        if line.strip()
    )


def norm(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


class SearchIndex:
    """Each row with its string casefolded and its words, and the rows of each word (as
    ``norm`` has it), so that a search looks only at rows that hold the term's words."""

    def __init__(self, rows: Sequence[FakeRow]) -> None:
        self.folded: list[tuple[FakeRow, str, frozenset[str]]] = []
        self.rows_of: dict[str, set[int]] = {}
        for n, row in enumerate(rows):
            name = row.name.casefold()
            words = frozenset(WORD.findall(name))
            self.folded.append((row, name, words))
            for word in {norm(w) for w in words}:
                self.rows_of.setdefault(word, set()).add(n)

    def candidates(
        self, search_type: str, term: str, partial: bool
    ) -> list[tuple[FakeRow, str, frozenset[str]]]:
        """The rows that may match: with one of the term's words (``partial``), or all of
        them; every row for a truncation, or a term with no word."""
        words = {norm(w) for w in WORD.findall(term.casefold())}
        if not words or search_type in ("leftTruncation", "rightTruncation"):
            return self.folded
        found = sorted((self.rows_of.get(w, set()) for w in words), key=len)
        if partial or search_type == "approximate":
            return [self.folded[n] for n in sorted(set().union(*found))]
        return [self.folded[n] for n in sorted(found[0].intersection(*found[1:]))]
