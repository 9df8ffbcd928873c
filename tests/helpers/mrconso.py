"""Invented MRCONSO.RRF rows shared by the tests of ``mrconso`` (no UMLS content)."""

from __future__ import annotations

from pathlib import Path

from tempmedbench_synonyms.atoms import AtomQuery
from tempmedbench_synonyms.mrconso.source import MrconsoSource
from tempmedbench_synonyms.testing import mrconso_row


def row(cui: str, aui: str, sab: str, tty: str, code: str, name: str, *, lat: str = "ENG",
        suppress: str = "N", sdui: str = "") -> str:  # fmt: skip
    """A line without its end (the tests choose it), LUI L1 and SUI S1 on every row."""
    return mrconso_row(cui, aui, sab, tty, code, name, lat=lat, suppress=suppress, lui="L1",
                       sui="S1", sdui=sdui, cvf="256", end="")  # fmt: skip


def write(path: Path, lines: list[str], end: str = "\n") -> Path:
    path.write_bytes("".join(x + end for x in lines).encode("utf-8"))
    return path


ROWS = [
    row("C0000001", "A1", "SNOMEDCT_US", "PT", "100", "Alpha é"),
    row("C0000001", "A2", "SNOMEDCT_US", "SY", "100", "Alpha 𝟐", suppress="O"),
    # the SAB token in SDUI of a row of another source: must not count as SNOMEDCT_US
    row("C0000002", "A3", "MTH", "PT", "100", "Decoy", sdui="SNOMEDCT_US"),
    # the token twice in one row of the right source: kept once
    row("C0000003", "A4", "SNOMEDCT_US", "PT", "300", "Twice", sdui="SNOMEDCT_US"),
    row("C0000004", "A5", "RXNORM", "SCD", "7", "Rx"),
    row("C0000004", "A6", "RXNORM", "SY", "8", "Rx two", lat="SPA"),
    row("C0000005", "A7", "LNC", "LN", "1-1", "Lab"),
]
QUERIES = [
    AtomQuery("source", "SNOMEDCT_US", "100"),
    AtomQuery("source", "SNOMEDCT_US", "300"),
    AtomQuery("cui", "RXNORM", "C0000004"),
    AtomQuery("aui", "LNC", "A7"),
]


def answers(path: Path) -> dict[AtomQuery, list[str] | None]:
    got = MrconsoSource(path).fetch("R", "C0000001", QUERIES).atoms
    return {q: (None if v is None else [a.aui for a in v]) for q, v in got.items()}


#: What UTS answers the queries: routes source and cui keep the English atoms that are neither
#: obsolete nor suppressible (A2 is obsolete, A6 Spanish); route aui keeps its atom.
EXPECTED = {
    QUERIES[0]: ["A1"],
    QUERIES[1]: ["A4"],
    QUERIES[2]: ["A5"],
    QUERIES[3]: ["A7"],
}


def five() -> list[str]:
    return [row(f"C000000{i}", f"A{i}", "MTH", "PT", str(i), "x") for i in range(1, 6)]
