"""SPEC 12's answers from rows, once: the index's tables (``TABLES``), how a file's rows go in
(``create``, ``load``, ``finish``), and every question of SPEC 11 answered from them
(``Engine``) as the JSON objects UTS sends. The local UMLS (``mrconso.index``) asks it of the
user's files, the fake UTS (``testing``) of its invented rows: docs/architecture.md.
"""

from __future__ import annotations

import sqlite3
import unicodedata
from collections.abc import Collection, Iterable, Sequence
from typing import Any

from tempmedbench_synonyms.lookups import COUNTED, Rows
from tempmedbench_synonyms.mrconso.shapes import Links

#: The Metathesaurus files the engine answers from, each a part of the index of its own.
FILES = ("MRCONSO", "MRDEF", "MRREL", "MRSTY", "MRHIER", "MRSAB")
#: Each file's columns, as the UMLS Reference Manual names them (a row: these, each followed by
#: ``|``).
COLUMNS: dict[str, tuple[str, ...]] = {
    "MRCONSO": ("CUI", "LAT", "TS", "LUI", "STT", "SUI", "ISPREF", "AUI", "SAUI", "SCUI", "SDUI",
                "SAB", "TTY", "CODE", "STR", "SRL", "SUPPRESS", "CVF"),
    "MRDEF": ("CUI", "AUI", "ATUI", "SATUI", "SAB", "DEF", "SUPPRESS", "CVF"),
    "MRREL": ("CUI1", "AUI1", "STYPE1", "REL", "CUI2", "AUI2", "STYPE2", "RELA", "RUI", "SRUI",
              "SAB", "SL", "RG", "DIR", "SUPPRESS", "CVF"),
    "MRSTY": ("CUI", "TUI", "STN", "STY", "ATUI", "CVF"),
    "MRHIER": ("CUI", "AUI", "CXN", "PAUI", "SAB", "RELA", "PTR", "HCD", "CVF"),
    "MRSAB": ("VCUI", "RCUI", "VSAB", "RSAB", "SON", "SF", "SVER", "VSTART", "VEND", "IMETA",
              "RMETA", "SLC", "SCC", "SRL", "TFR", "CFR", "CXTY", "TTYL", "ATNL", "LAT", "CENC",
              "CURVER", "SABIN", "SSN", "SCIT"),
}  # fmt: skip
#: The version of the tables below: an index of another version is rebuilt, never read.
SCHEMA_VERSION = 1
#: What else an index depends on: ``casefold`` and ``\\w`` change with Python's Unicode version.
UNICODE_VERSION = unicodedata.unidata_version


#: Each file's indexes, built once its rows are in; MRCONSO's ``folded`` is ``str.casefold``
#: of STR (exact and truncated searches), its ``words`` an FTS5 table over it that narrows the
#: word searches (each candidate is checked again by SPEC 12's rule: FTS5 folds its own way).
INDEXES: dict[str, tuple[str, ...]] = {
    "MRCONSO": (
        "CREATE INDEX {s}.mrconso_cui ON mrconso (cui)",
        "CREATE INDEX {s}.mrconso_code ON mrconso (sab, code)",
        "CREATE INDEX {s}.mrconso_aui ON mrconso (aui)",
        "CREATE INDEX {s}.mrconso_folded ON mrconso (folded)",
        "CREATE INDEX {s}.mrconso_scui ON mrconso (scui) WHERE scui <> code",
        "CREATE INDEX {s}.mrconso_sdui ON mrconso (sdui) WHERE sdui <> code",
        "INSERT INTO {s}.mrconso_words (mrconso_words) VALUES ('rebuild')",
    ),
    "MRDEF": ("CREATE INDEX {s}.mrdef_cui ON mrdef (cui)",),
    "MRREL": (
        "CREATE INDEX {s}.mrrel_cui2 ON mrrel (cui2)",
        "CREATE INDEX {s}.mrrel_aui2 ON mrrel (aui2) WHERE aui2 <> ''",
    ),
    "MRSTY": (
        "CREATE INDEX {s}.mrsty_cui ON mrsty (cui)",
        "CREATE INDEX {s}.mrsty_tui ON mrsty (tui)",
    ),
    "MRHIER": (
        "CREATE INDEX {s}.mrhier_aui ON mrhier (aui)",
        "CREATE INDEX {s}.mrhier_paui ON mrhier (paui) WHERE paui <> ''",
    ),
    "MRSAB": (),
}
_WORDS = (
    "CREATE VIRTUAL TABLE {s}.mrconso_words USING fts5 (folded, content='mrconso', "
    "content_rowid='rowid', detail='none', "
    "tokenize=\"unicode61 remove_diacritics 0 categories 'L* N*' tokenchars '_'\")"
)


def create(db: sqlite3.Connection, file: str, schema: str = "main") -> None:
    """Create ``file``'s empty tables in ``schema`` (a database of their own, or ``main``)."""
    columns = ", ".join(c.lower() for c in COLUMNS[file])
    if file == "MRCONSO":  # the rowid is the row's place in the file (file order)
        columns += ", folded"
    db.execute(f"CREATE TABLE {schema}.{file.lower()} ({columns})")
    if file == "MRCONSO":
        db.execute(_WORDS.format(s=schema))


def load(
    db: sqlite3.Connection, file: str, rows: Iterable[Sequence[str]], schema: str = "main"
) -> int:
    """Insert ``rows`` (each the file's fields, as ``COLUMNS[file]`` names them, without the
    trailing empty field) into ``file``'s tables in file order; how many went in. Called once or
    more (in batches) between ``create`` and ``finish``; the caller commits."""
    width = len(COLUMNS[file])
    before = db.total_changes
    if file == "MRCONSO":
        marks = ", ".join("?" * (width + 1))
        at = COLUMNS[file].index("STR")
        db.executemany(
            f"INSERT INTO {schema}.mrconso VALUES ({marks})",
            ((*r, r[at].casefold()) for r in rows),
        )
    else:
        marks = ", ".join("?" * width)
        db.executemany(f"INSERT INTO {schema}.{file.lower()} VALUES ({marks})", rows)
    return db.total_changes - before


def finish(db: sqlite3.Connection, file: str, schema: str = "main") -> None:
    """Build ``file``'s indexes once its rows are in (SQLite sorts: nothing per row here)."""
    for statement in INDEXES[file]:
        db.execute(statement.format(s=schema))


class Engine:
    """SPEC 12's answers from one connection that holds the tables of ``files`` (MRCONSO always;
    a table in ``main`` or in an attached database, found by its name).

    Every method answers one question as UTS's JSON objects, with ``"NONE"`` where UTS sends it
    for an absent link or value (``lookups.clean`` turns it into null for a local answer), in
    SPEC 12's order: a list (empty: nothing matched) or one object, and ``None`` when the
    identifier asked about is unknown (MRCONSO lacks it). Links are ``links``'s. A question whose
    file is not in ``files`` is never asked (the caller checks ``needs``). Safe to call from one
    thread at a time per connection; prepared statements are cached by sqlite3 itself.
    """

    def __init__(self, db: sqlite3.Connection, files: Collection[str], links: Links) -> None:
        self.db, self.files, self.links = db, frozenset(files), links

    # -- MRCONSO (with MRSTY, MRDEF, MRREL, MRHIER for the links they decide, when present) ------

    def concept(self, cui: str) -> dict[str, Any] | None:
        """``/content/{release}/CUI/{cui}``: a ``Concept``."""
        raise NotImplementedError

    def atoms(
        self,
        *,
        cui: str | None = None,
        sab: str | None = None,
        code: str | None = None,
        sabs: Collection[str] = (),
        ttys: Collection[str] = (),
        language: str | None = None,
        rows: Rows = COUNTED,
    ) -> list[dict[str, Any]] | None:
        """A concept's atoms (``cui``) or a source code's (``sab``, ``code``), in MRCONSO's
        order, those ``rows`` counts, of ``sabs``/``ttys``/``language`` when given."""
        raise NotImplementedError

    def atom(self, aui: str) -> dict[str, Any] | None:
        """``/content/{release}/AUI/{aui}``: an ``Atom``, whatever its LAT and SUPPRESS."""
        raise NotImplementedError

    def preferred_atom(
        self, *, cui: str | None = None, sab: str | None = None, code: str | None = None
    ) -> dict[str, Any] | None:
        """``.../atoms/preferred``: the row that names the concept or the code."""
        raise NotImplementedError

    def cluster(self, sab: str, code: str) -> dict[str, Any] | None:
        """``/content/{release}/source/{sab}/{code}``: a ``SourceAtomCluster``."""
        raise NotImplementedError

    def crosswalk(
        self, sab: str, code: str, *, targets: Collection[str] = (), rows: Rows = COUNTED
    ) -> list[dict[str, Any]] | None:
        """``/crosswalk/{release}/source/{sab}/{code}``: clusters by rootSource, then ui."""
        raise NotImplementedError

    def search(
        self,
        string: str,
        *,
        search_type: str = "words",
        input_type: str = "atom",
        return_id_type: str = "concept",
        sabs: Collection[str] = (),
        semantic_types: Collection[str] = (),
        partial: bool = False,
        language: str | None = None,
        rows: Rows = COUNTED,
    ) -> list[dict[str, Any]]:
        """``/search/{release}``: every result (``ui``, ``rootSource``, ``uri``, ``name``), in
        SPEC 12's order, never the ``NONE`` row (the caller pages and ends)."""
        raise NotImplementedError

    # -- the other files ---------------------------------------------------------------------

    def definitions(
        self, cui: str, *, sabs: Collection[str] = (), rows: Rows = COUNTED
    ) -> list[dict[str, Any]] | None:
        """MRDEF: ``Definition`` objects by SAB, then ATUI."""
        raise NotImplementedError

    def relations(
        self,
        *,
        cui: str | None = None,
        sab: str | None = None,
        code: str | None = None,
        aui: str | None = None,
        labels: Collection[str] = (),
        sabs: Collection[str] = (),
        rows: Rows = COUNTED,
    ) -> list[dict[str, Any]] | None:
        """MRREL: the relations of a CUI, an AUI or a source code, by RUI."""
        raise NotImplementedError

    def semantic_types(self, cui: str, *, details: bool = False) -> list[dict[str, Any]] | None:
        """MRSTY: the concept's types by TUI, each a ``SemanticType`` (``details``: with its
        tree number and child count)."""
        raise NotImplementedError

    def semantic_type(self, tui: str) -> dict[str, Any] | None:
        """``/semantic-network/{release}/TUI/{tui}``: a ``SemanticType``."""
        raise NotImplementedError

    def hierarchy(
        self,
        direction: str,
        *,
        sab: str | None = None,
        code: str | None = None,
        aui: str | None = None,
    ) -> list[dict[str, Any]] | None:
        """MRHIER: a code's parents, children, ancestors or descendants as clusters (an HL7
        source's as Atoms), or an atom's as Atoms."""
        raise NotImplementedError

    def sources(self) -> list[dict[str, Any]]:
        """MRSAB's current versions (without MRSAB: one per SAB of MRCONSO), as ``RootSource``
        objects by abbreviation."""
        raise NotImplementedError


def needs(command: str, *, semantic_types: bool = False) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The files a ``umls`` command needs (absent: bad input naming the first), and those it
    reads when the META holds them (for the links and counts they decide)."""
    raise NotImplementedError
