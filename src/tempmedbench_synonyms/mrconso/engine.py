"""SPEC 12's answers from rows, once: the index's tables, how a file's rows go in, and every
question of SPEC 11 answered from them (``Engine``): docs/architecture.md, "Rows are read one way".
"""

from __future__ import annotations

import functools
import itertools
import json
import operator
import re
import sqlite3
import unicodedata
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any, TypeVar

from tempmedbench_synonyms.lookups import COUNTED, Rows
from tempmedbench_synonyms.mrconso.rows import COLUMN, MRCONSO_COLUMNS
from tempmedbench_synonyms.mrconso.shapes import (
    NONE,
    Links,
    atom_json,
    known_code,
    search_result_json,
)

#: The Metathesaurus files the engine answers from, each a part of the index of its own.
FILES = ("MRCONSO", "MRDEF", "MRREL", "MRSTY", "MRHIER", "MRSAB")
#: Each file's columns, as the UMLS Reference Manual names them (each followed by ``|``).
COLUMNS: dict[str, tuple[str, ...]] = {
    "MRCONSO": MRCONSO_COLUMNS,
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
SCHEMA_VERSION = 5
#: What else an index depends on: ``casefold`` and ``\\w`` change with Python's Unicode version.
UNICODE_VERSION = unicodedata.unidata_version


#: Each file's indexes, built once its rows are in; MRCONSO's ``folded`` is ``str.casefold``
#: of STR (exact and truncated searches), its ``words`` an FTS5 table over it that narrows the
#: word searches (each candidate is checked again by SPEC 12's rule: FTS5 folds its own way).
INDEXES: dict[str, tuple[str, ...]] = {
    "MRCONSO": (
        "CREATE INDEX {s}.mrconso_cui ON mrconso (cui)",
        "CREATE INDEX {s}.mrconso_code ON mrconso (code, sab)",
        "CREATE INDEX {s}.mrconso_aui ON mrconso (aui)",
        "CREATE INDEX {s}.mrconso_folded ON mrconso (folded)",
        "CREATE INDEX {s}.mrconso_scui ON mrconso (scui) WHERE scui <> code",
        "CREATE INDEX {s}.mrconso_sdui ON mrconso (sdui) WHERE sdui <> code",
        "CREATE VIRTUAL TABLE {s}.mrconso_words USING fts5 (folded, content='', detail='none', "
        "columnsize=0, "
        "tokenize=\"unicode61 remove_diacritics 0 categories 'L* N*' tokenchars '_'\")",
        # in rowid order (NOT INDEXED: a scan of the folded index, in another order, is 3x slower)
        "INSERT INTO {s}.mrconso_words (rowid, folded) SELECT rowid, folded FROM {s}.mrconso "
        "NOT INDEXED",
        # each concept's name (SPEC 12): its row first by _CONCEPT_ORDER, as a key (SQLite
        # gives min()'s row's other columns), read by every answer that names a concept
        "CREATE TABLE {s}.mrconso_names (cui PRIMARY KEY, str, sab) WITHOUT ROWID",
        "INSERT INTO {s}.mrconso_names SELECT cui, str, sab FROM (SELECT cui, str, sab, "
        "min((2 - (lat = 'ENG' AND ts = 'P' AND ispref = 'Y') - (lat = 'ENG' AND ts = 'P' "
        "AND ispref = 'Y' AND stt = 'PF')) << 40 | rowid) FROM {s}.mrconso GROUP BY cui)",
    ),
    "MRDEF": ("CREATE INDEX {s}.mrdef_cui ON mrdef (cui)",),
    "MRREL": (
        "CREATE INDEX {s}.mrrel_cui2 ON mrrel (cui2)",
        # with STYPE2: whether an atom has a relation of a kind is read from the index alone
        "CREATE INDEX {s}.mrrel_aui2 ON mrrel (aui2, stype2) WHERE aui2 <> ''",
    ),
    "MRSTY": (
        # a concept's rows, and (a search's --semantic-types) its rows of one type
        "CREATE INDEX {s}.mrsty_cui ON mrsty (cui, tui, stn)",
        "CREATE INDEX {s}.mrsty_tui ON mrsty (tui)",
        "CREATE TABLE {s}.mrsty_tree AS SELECT DISTINCT tui, stn FROM {s}.mrsty",
    ),
    "MRHIER": (
        "CREATE INDEX {s}.mrhier_aui ON mrhier (aui)",
        "CREATE INDEX {s}.mrhier_paui ON mrhier (paui) WHERE paui <> ''",
    ),
    "MRSAB": (),
}


def create(db: sqlite3.Connection, file: str, schema: str = "main") -> None:
    """Create ``file``'s empty tables in ``schema`` (a database of their own, or ``main``)."""
    columns = ", ".join(c.lower() for c in COLUMNS[file])
    if file == "MRCONSO":  # the rowid is the row's place in the file (file order)
        columns += ", folded"
        # whether the rows are in CUI order, as NLM ships them (a search can then stop early):
        # ``load`` clears it when a batch is not (a window over the rows after: 2 s in 25)
        db.execute(f"CREATE TABLE {schema}.mrconso_order AS SELECT 1 AS sorted")
    db.execute(f"CREATE TABLE {schema}.{file.lower()} ({columns})")


def load(
    db: sqlite3.Connection, file: str, rows: Iterable[Sequence[str]], schema: str = "main"
) -> int:
    """Insert ``rows`` (each ``COLUMNS[file]``, no trailing empty field) in file order, in
    batches between ``create`` and ``finish``; how many went in. The caller commits."""
    width = len(COLUMNS[file])
    if file == "MRCONSO":
        rows = rows if isinstance(rows, list) else list(rows)
        cuis = [r[0] for r in rows]
        if cuis:
            last = db.execute(
                f"SELECT cui FROM {schema}.mrconso ORDER BY rowid DESC LIMIT 1"
            ).fetchone()
            if last is not None:
                cuis.insert(0, last[0])
            if cuis != sorted(cuis):  # (a sorted list is sorted in one pass)
                db.execute(f"UPDATE {schema}.mrconso_order SET sorted = 0")
        at = COLUMNS[file].index("STR")
        rows = ((*r, r[at].casefold()) for r in rows)
        width += 1  # (folded)
    marks = ", ".join("?" * width)
    before = db.total_changes  # (after the order flag's UPDATE: only the rows inserted count)
    db.executemany(f"INSERT INTO {schema}.{file.lower()} VALUES ({marks})", rows)
    return db.total_changes - before


def finish(db: sqlite3.Connection, file: str, schema: str = "main") -> None:
    """Build ``file``'s indexes once its rows are in (SQLite sorts: nothing per row here)."""
    for statement in INDEXES[file]:
        db.execute(statement.format(s=schema))


#: The most bytes of each database mapped (SQLite caps it at its own maximum, 2 GiB).
_MMAP = 1 << 40
#: An MRCONSO row as the engine reads it: the 18 fields in ``COLUMNS`` order (``shapes``'s).
_ROW = ", ".join(f"m.{c.lower()}" for c in MRCONSO_COLUMNS)
_AUI = COLUMN["AUI"]
#: The row that names a concept first (SPEC 12, "A concept's name").
_CONCEPT_ORDER = (
    "(lat = 'ENG' AND ts = 'P' AND ispref = 'Y' AND stt = 'PF') DESC, "
    "(lat = 'ENG' AND ts = 'P' AND ispref = 'Y') DESC, rowid"
)
#: The order that names a source code (SPEC 12, "A source code's name"): its first row by these.
_NAME_KEY = ("suppress <> 'N'", "lat <> 'ENG'", "tty <> 'PT'", "ispref <> 'Y'", "ts <> 'P'",
             "stt <> 'PF'", "aui")  # fmt: skip
_CODE_ORDER = ", ".join(_NAME_KEY)
#: An MRCONSO row ``m`` as a cluster reads it (``_flagged``: its lists' flags last): the fields
#: that count and name its code, then ``_NAME_KEY`` (the name's key, read by ``_C_KEY``): its
#: tests as one number (the first the highest bit: the same order), then the AUI.
_CLUSTER_ROW = (
    "m.sab, m.code, m.str, m.suppress, "
    + " + ".join(f"(m.{k}) * {1 << n}" for n, k in enumerate(reversed(_NAME_KEY[:-1])))
    + f", m.{_NAME_KEY[-1]}"
)
_C_STR, _C_SUPPRESS, _C_AUI = 2, 3, 5
_C_KEY = operator.itemgetter(4, _C_AUI)
_C_CODE = operator.itemgetter(0, 1)
#: The rows of a source's code, SCUI or SDUI ``{sab}``, ``{id}`` (SQL expressions), through the
#: indexes: (code, sab), and the partial ones on SCUI and SDUI where they differ from the code.
_IDENT = {
    "CODE": "code = {id} AND sab = {sab}",
    "SCUI": "(code = {id} AND scui = {id} OR scui = {id} AND scui <> code) AND sab = {sab}",
    "SDUI": "(code = {id} AND sdui = {id} OR sdui = {id} AND sdui <> code) AND sab = {sab}",
}
_IN = "(SELECT value FROM json_each(?))"
_PAIRS = "json_extract(j.value, '$[0]')", "json_extract(j.value, '$[1]')"
#: A search's input types other than ``atom``: the query as written, against these fields.
_INPUT_FIELDS = {
    "code": "m.code = :q",
    "sourceConcept": "(m.scui = :q AND m.scui <> m.code OR m.code = :q AND m.scui = :q)",
    "sourceDescriptor": "(m.sdui = :q AND m.sdui <> m.code OR m.code = :q AND m.sdui = :q)",
    "sourceUi": "(m.code = :q OR m.scui = :q AND m.scui <> m.code "
    "OR m.sdui = :q AND m.sdui <> m.code)",
    "tty": "m.tty = :q",  # (no index: every row is read)
}
#: The field a search's return id type names, and the rule that names it.
_RETURN_FIELDS = {"code": "CODE", "sourceUi": "CODE", "sourceConcept": "SCUI",
                  "sourceDescriptor": "SDUI"}  # fmt: skip
_WORD = re.compile(r"\w+")
#: The flags of an MRCONSO row ``m``'s lists (a column of the rows a cluster is made of): whether
#: MRREL and MRHIER give it an entry (SPEC 12: an atom of the code's SAB with another known code),
#: each a bit that ``_cluster`` reads (``_DESCENDANTS``...).
_FLAG_REL = (
    "EXISTS (SELECT 1 FROM mrrel WHERE aui2 = m.aui AND aui2 <> '' "
    "AND (+stype2 = 'SCUI' OR +stype2 = 'SDUI' OR +stype2 = 'CODE'))"
)
_ENTRY = "c.sab = m.sab AND c.code NOT IN (m.code, '', 'NOCODE')"
#: SQL true when ``{a}`` is one of the AUIs ``_ptr`` gives for the row ``h``.
_IN_PTR = (
    "(h.ptr = '' AND h.paui = {a} OR instr({a}, '.') = 0 "
    "AND instr('.' || h.ptr || '.', '.' || {a} || '.') > 0)"
)
_FLAG_HIER = (
    # 2: a parent is an entry; 4: an ancestor too (in its row's PTR); 8: a PTR holds others (or
    # is the PAUI with a dot: its segments are the ancestors)
    f"coalesce((SELECT max(coalesce({_ENTRY}, 0)) * 2 | max(coalesce({_ENTRY} AND "
    f"{_IN_PTR.format(a='h.paui')}, 0)) * 4 | max(h.ptr NOT IN ('', h.paui) OR "
    "instr(h.ptr, '.') > 0) * 8 FROM mrhier h "
    "LEFT JOIN mrconso c ON c.aui = h.paui AND h.paui <> '' WHERE h.aui = m.aui), 0) | "
    # 64: rows below; 16: a child is an entry; 32: a descendant too (the atom in its PTR)
    "CASE WHEN NOT EXISTS (SELECT 1 FROM mrhier h WHERE h.paui = m.aui AND h.paui <> '') THEN 0 "
    "WHEN EXISTS (SELECT 1 FROM mrhier h JOIN mrconso c ON c.aui = h.aui WHERE h.paui = m.aui "
    f"AND h.paui <> '' AND {_ENTRY} AND {_IN_PTR.format(a='m.aui')}) THEN 112 "
    "WHEN EXISTS (SELECT 1 FROM mrhier h JOIN mrconso c ON c.aui = h.aui WHERE h.paui = m.aui "
    f"AND h.paui <> '' AND {_ENTRY}) THEN 80 ELSE 64 END"
)
#: each list's bit (``_cluster`` gives the lists in this order)
_DESCENDANTS, _ANCESTORS, _PARENTS, _CHILDREN, _RELATIONS = 32, 4, 2, 16, 1
#: the flags that leave a list open: read from the rows when no atom of the code settles it
_ANCESTORS_OPEN, _DESCENDANTS_OPEN = 8, 64
_OPEN = (
    (_ANCESTORS_OPEN, _ANCESTORS, "ancestors"),
    (_DESCENDANTS_OPEN, _DESCENDANTS, "descendants"),
)
#: the SUPPRESS values of rows that do not count (any other counts as N)
_UNCOUNTED = frozenset({"O", "E", "Y"})
_T = TypeVar("_T")
#: The most digits of an SRL read as a number (a longer one is none: SQLite's integers are 64-bit)
_SRL_DIGITS = 18
_UCD_3_2 = unicodedata.ucd_3_2_0
_HIERARCHY = ("parents", "children", "ancestors", "descendants")
_LANGUAGES = {
    "ENG": "English", "FRE": "French", "GER": "German", "SPA": "Spanish", "DUT": "Dutch",
    "ITA": "Italian", "JPN": "Japanese", "POR": "Portuguese",
}  # fmt: skip


def _norm(word: str) -> str:
    """A word's normal form (SPEC 12): a final ``s`` dropped when longer than 3, not ``ss``."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _counted(rows: Rows, table: str = "m", english: bool = True) -> str:
    """SQL true for the rows ``rows`` counts (its SUPPRESS values; LAT ENG when it says so)."""
    if rows.suppress is None:
        kept = "1"
    else:
        # (each value compared: SQLite makes a list of three constants a table at each run)
        flags = sorted(rows.suppress & {"O", "E", "Y"})
        either = [f"{table}.suppress = {f!r}" for f in flags]
        if "N" in rows.suppress:
            either.append(" AND ".join(f"{table}.suppress <> {f!r}" for f in ("O", "E", "Y")))
        kept = f"({' OR '.join(either)})" if either else "0"
    return f"{kept} AND {table}.lat = 'ENG'" if english and rows.english else kept


def _any_of(table: str, params: list[Any], **columns: Collection[str]) -> str:
    """`` AND {table}.{column} IN (...)`` for each column given values (added to ``params``)."""
    where = ""
    for column, values in columns.items():
        if values:
            where += f" AND {table}.{column} IN {_IN}"
            params.append(_json(values))
    return where


def _subject(
    cui: str | None, sab: str | None, code: str | None
) -> tuple[str, list[object], str] | None:
    """The rows of the concept ``cui``, else of the known code, and the order that names it."""
    if cui is not None:
        return "m.cui = ?", [cui], _CONCEPT_ORDER
    if sab is not None and code is not None and known_code(code):
        return "m.code = ? AND m.sab = ?", [code, sab], _CODE_ORDER
    return None


def _json(values: Iterable[object]) -> str:
    return json.dumps(list(values))


def _ptr(paui: str, ptr: str) -> list[str]:
    """A hierarchy row's ancestors, nearest first (an empty PTR: its PAUI alone)."""
    return [a for a in reversed(ptr.split("."))] if ptr else [paui] if paui else []


@functools.lru_cache(maxsize=64)
def _crosswalk(rows: Rows, targeted: bool, flagged: str) -> str:
    """``Engine.crosswalk``'s statement (made once a rule): the rows, each ``flagged``, of the
    other codes of the concepts where the code ``?`` (SAB ``?``) has a row ``rows`` counts, not
    of SAB ``?`` (and of a SAB of the JSON list ``?`` when ``targeted``), by SAB, code, then
    file order (SQLite's order of text: code points, as Python's). The concepts are read first:
    each of their rows once."""
    where = _counted(rows, "o") + (f" AND o.sab IN {_IN}" if targeted else "")
    return (
        f"SELECT {flagged} FROM mrconso m WHERE (m.code, m.sab) IN (SELECT o.code, o.sab FROM "
        "mrconso o WHERE o.cui IN (SELECT a.cui FROM mrconso a WHERE a.code = ? AND a.sab = ? "
        f"AND {_counted(rows, 'a')}) AND o.sab <> ? AND o.code NOT IN ('', 'NOCODE') AND "
        f"{where}) ORDER BY m.sab, m.code, m.rowid"
    )


class Engine:
    """SPEC 12's answers from one connection holding the tables of ``files`` (MRCONSO always),
    each method one question as UTS's JSON objects in SPEC 12's order, ``"NONE"`` where UTS
    sends it, ``None`` for an identifier MRCONSO lacks. A question whose file is not in
    ``files`` is never asked (the caller checks ``needs``). One thread at a time per connection.
    """

    def __init__(
        self,
        db: sqlite3.Connection,
        files: Collection[str],
        links: Links,
        stopped: Sequence[BaseException] = (),
    ) -> None:
        self.db, self.files, self.links, self.stopped = db, frozenset(files), links, stopped
        # each database read through the OS's pages, not copied page by page into SQLite's
        # cache: an answer reads a few scattered rows of each (a third of its time)
        for _, schema, _ in db.execute("PRAGMA database_list").fetchall():
            db.execute(f'PRAGMA "{schema}".mmap_size = {_MMAP}')

    def ask(self, question: Callable[[Engine], _T]) -> _T:
        """``question(self)``: a statement a signal stopped raises the signal's exception."""
        try:
            return question(self)
        except sqlite3.OperationalError:
            if self.stopped:
                raise self.stopped[0] from None
            raise

    @functools.cached_property
    def _sorted(self) -> bool:
        """Whether MRCONSO's rows are in CUI order (``load`` records it)."""
        found = self.db.execute("SELECT sorted FROM mrconso_order").fetchone()
        return bool(found and found[0])

    # -- rows and names ------------------------------------------------------------------------

    def _rows(self, where: str, params: Sequence[object] = (), order: str = "m.rowid") -> list[Any]:
        return self.db.execute(
            f"SELECT {_ROW} FROM mrconso m WHERE {where} ORDER BY {order}", params
        ).fetchall()

    def _code_rows(self, sab: str, code: str) -> list[Any]:
        """Every row of a source code, in file order; none for one never known (SPEC 12)."""
        if not known_code(code):
            return []
        return self._rows("m.code = ? AND m.sab = ?", (code, sab))

    def _known(self, where: str, params: Sequence[object]) -> bool:
        found = self.db.execute(f"SELECT 1 FROM mrconso WHERE {where} LIMIT 1", params)
        return found.fetchone() is not None

    def _concept_names(self, cuis: Iterable[str]) -> dict[str, tuple[str, str]]:
        """The (STR, SAB) of the row that names each concept MRCONSO holds."""
        found = self.db.execute(
            f"SELECT cui, str, sab FROM mrconso_names WHERE cui IN {_IN}", (_json(set(cuis)),)
        )
        return {cui: (name, sab) for cui, name, sab in found}

    def _code_names(
        self, field: str, idents: Iterable[tuple[str, str]]
    ) -> dict[tuple[str, str], str]:
        """The name of each (SAB, code) (``field``: CODE, SCUI or SDUI) MRCONSO holds."""
        where = _IDENT[field].format(sab=_PAIRS[0], id=_PAIRS[1])
        found = self.db.execute(
            f"SELECT {_PAIRS[0]}, {_PAIRS[1]}, (SELECT str FROM mrconso WHERE {where} "
            f"ORDER BY {_CODE_ORDER} LIMIT 1) FROM json_each(?) j",
            (_json(set(idents)),),
        )
        return {(sab, ident): name for sab, ident, name in found if name is not None}

    # -- MRCONSO (with MRSTY, MRDEF, MRREL, MRHIER for the links they decide, when present) ------

    def concept(self, cui: str) -> dict[str, Any] | None:
        """``/content/{release}/CUI/{cui}``: a ``Concept``."""
        count = self.db.execute("SELECT count(*) FROM mrconso WHERE cui = ?", (cui,)).fetchone()[0]
        if not count:
            return None
        link = self.links.concept(cui)
        types = self._types(cui) if "MRSTY" in self.files else []
        definitions = "MRDEF" in self.files and self.db.execute(
            "SELECT 1 FROM mrdef m WHERE m.cui = ? AND " + _counted(COUNTED, english=False)
            + " LIMIT 1", (cui,)
        ).fetchone() is not None  # fmt: skip
        relations = 0
        if "MRREL" in self.files:
            relations = self.db.execute(
                "SELECT count(*) FROM mrrel WHERE cui2 = ?", (cui,)
            ).fetchone()[0]
        return {
            "classType": "Concept",
            "ui": cui,
            "suppressible": False,
            "dateAdded": NONE,
            "majorRevisionDate": NONE,
            "status": NONE,
            "semanticTypes": [{"name": sty, "uri": self.links.tui(tui)} for tui, sty in types],
            "atomCount": count,
            "attributeCount": 0,
            "cvMemberCount": 0,
            "atoms": f"{link}/atoms",
            "definitions": f"{link}/definitions" if definitions else NONE,
            "relations": f"{link}/relations" if relations else NONE,
            "defaultPreferredAtom": f"{link}/atoms/preferred",
            "relationCount": relations,
            "name": self._concept_names([cui])[cui][0],
        }

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
        """A concept's or a source code's atoms that ``rows`` counts, in MRCONSO's order."""
        subject = _subject(cui, sab, code)
        if subject is None or not self._known(subject[0].replace("m.", ""), subject[1]):
            return None
        where, params, _ = subject
        langs = () if language is None else (language,)
        where += " AND " + _counted(rows) + _any_of("m", params, sab=sabs, tty=ttys, lat=langs)
        return [atom_json(r, self.links) for r in self._rows(where, params)]

    def atom(self, aui: str) -> dict[str, Any] | None:
        """``/content/{release}/AUI/{aui}``: an ``Atom``, whatever its LAT and SUPPRESS."""
        found = self._rows("m.aui = ?", (aui,))
        return atom_json(found[0], self.links) if found else None

    def preferred_atom(
        self, *, cui: str | None = None, sab: str | None = None, code: str | None = None
    ) -> dict[str, Any] | None:
        """``.../atoms/preferred``: the row that names the concept or the code."""
        subject = _subject(cui, sab, code)
        found = [] if subject is None else self._rows(*subject)
        return atom_json(found[0], self.links) if found else None

    def cluster(self, sab: str, code: str) -> dict[str, Any] | None:
        """``/content/{release}/source/{sab}/{code}``: a ``SourceAtomCluster``."""
        found = self._clusters([(sab, code)])
        return found[0] if found else None

    def _clusters(self, codes: Sequence[tuple[str, str]]) -> list[dict[str, Any]]:
        """Each known (SAB, code) of ``codes`` MRCONSO holds as a ``SourceAtomCluster``, in
        their order, from their rows by ``_flagged`` in file order."""
        codes = [(s, c) for s, c in codes if known_code(c)]
        found = self.db.execute(
            f"SELECT {self._flagged} FROM json_each(?) j JOIN mrconso m "
            f"ON m.code = {_PAIRS[1]} AND m.sab = {_PAIRS[0]} ORDER BY m.rowid",
            (_json(codes),),
        )
        rows: dict[tuple[str, str], list[Any]] = {}
        for r in found:
            rows.setdefault(r[:2], []).append(r)
        return [self._cluster(it, rows[it]) for it in codes if it in rows]

    def _cluster(self, it: tuple[str, str], found: Sequence[Any]) -> dict[str, Any]:
        """The code ``it`` as a ``SourceAtomCluster`` from its rows by ``_flagged`` (file order:
        of rows equal by the name's key, the first names it)."""
        sab, code = it
        if len(found) == 1:
            named = found[0]
            flag = named[_C_SUPPRESS]
            obsolete, counted = flag == "O", flag not in _UNCOUNTED
            bits = named[-1]
        else:
            named = min(found, key=_C_KEY)
            flags = {r[_C_SUPPRESS] for r in found}
            obsolete, counted = flags == {"O"}, not flags <= _UNCOUNTED
            bits = 0
            for r in found:
                bits |= r[-1]
        if (bits & _ANCESTORS_OPEN and not bits & _ANCESTORS) or (
            bits & _DESCENDANTS_OPEN and not bits & _DESCENDANTS
        ):
            bits = self._lists(it, found, bits)
        at = self.links.code(sab, code)
        return {
            "classType": "SourceAtomCluster",
            "ui": code,
            "suppressible": not obsolete and not counted,
            "obsolete": obsolete,
            "rootSource": sab,
            "atomCount": len(found),
            "cVMemberCount": 0,
            "attributes": NONE,
            "atoms": f"{at}/atoms",
            "descendants": f"{at}/descendants" if bits & _DESCENDANTS else NONE,
            "ancestors": f"{at}/ancestors" if bits & _ANCESTORS else NONE,
            "parents": f"{at}/parents" if bits & _PARENTS else NONE,
            "children": f"{at}/children" if bits & _CHILDREN else NONE,
            "relations": f"{at}/relations" if bits & _RELATIONS else NONE,
            "definitions": NONE,
            "concepts": self.links.search(code, sab),
            "defaultPreferredAtom": f"{at}/atoms/preferred",
            "name": named[_C_STR],
        }

    @functools.cached_property
    def _flagged(self) -> str:
        """``_CLUSTER_ROW``, then its flags from MRREL and MRHIER when present."""
        rel = _FLAG_REL if "MRREL" in self.files else "0"
        return f"{_CLUSTER_ROW}, {rel} | {_FLAG_HIER if 'MRHIER' in self.files else '0'}"

    def _lists(self, it: tuple[str, str], found: Sequence[Any], bits: int) -> int:
        """The bits of the lists the code ``it`` has an entry in: ``bits`` (its rows' flags) and
        those the flags leave open (``_OPEN``: SPEC 12, a deeper entry counts) read from MRHIER."""
        kinds = {k for flag, b, k in _OPEN if bits & flag and not bits & b}
        # (deep: the whole subtree, only for a descendant not found yet)
        auis = {r[_C_AUI] for r in found}
        deep = self._code_edges(it, auis, deep="descendants" in kinds)
        return bits | sum(b for _, b, k in _OPEN if k in kinds and deep[k])

    def _edges(self, auis: Collection[str], deep: bool) -> dict[str, list[tuple[str, int]]]:
        """MRHIER's entries of the atoms ``auis`` by list, each (AUI, distance). Descendants are
        read from the rows below the atoms' children too only when ``deep`` (the rows reached
        through PAUI, their distance from PTR)."""
        asked = _json(auis)
        raw: dict[str, list[tuple[str, int]]] = {k: [] for k in _HIERARCHY}
        up = self.db.execute(f"SELECT paui, ptr FROM mrhier WHERE aui IN {_IN}", (asked,))
        below = self.db.execute(
            "WITH RECURSIVE down(aui) AS (SELECT value FROM json_each(?) UNION "
            "SELECT h.aui FROM mrhier h JOIN down d ON h.paui = d.aui AND h.paui <> '') "
            "SELECT aui, paui, ptr FROM mrhier WHERE aui IN (SELECT aui FROM down)"
            if deep
            else f"SELECT aui, paui, ptr FROM mrhier WHERE paui IN {_IN} AND paui <> ''",
            (asked,),
        ).fetchall()
        for paui, ptr in up:
            if paui:
                raw["parents"].append((paui, 1))
            raw["ancestors"] += [(a, n) for n, a in enumerate(_ptr(paui, ptr), 1)]
        for aui, paui, ptr in below:
            if paui in auis:
                raw["children"].append((aui, 1))
            raw["descendants"] += [(aui, n) for n, a in enumerate(_ptr(paui, ptr), 1) if a in auis]
        return raw

    def _where(self, auis: Collection[str]) -> dict[str, tuple[str, str, str]]:
        """The (SAB, CODE, STR) of each of ``auis`` MRCONSO holds."""
        if not auis:
            return {}
        found = self.db.execute(
            f"SELECT aui, sab, code, str FROM mrconso WHERE aui IN {_IN}", (_json(auis),)
        )
        return {aui: (sab, code, string) for aui, sab, code, string in found}

    def _code_edges(
        self, it: tuple[str, str], auis: Collection[str], deep: bool
    ) -> dict[str, dict[tuple[str, str], int]]:
        """The lists of the code ``it`` (its atoms ``auis``), each code at its smallest distance:
        those MRCONSO holds, of the same SAB, another known code."""
        raw = self._edges(auis, deep)
        codes = self._where({a for found in raw.values() for a, _ in found})
        out: dict[str, dict[tuple[str, str], int]] = {k: {} for k in raw}
        for kind, found in raw.items():
            for entry, n in found:
                if entry not in codes:
                    continue
                at = codes[entry][:2]
                if at[0] == it[0] and at != it and known_code(at[1]):
                    out[kind][at] = min(n, out[kind].get(at, n))
        return out

    def crosswalk(
        self, sab: str, code: str, *, targets: Collection[str] = (), rows: Rows = COUNTED
    ) -> list[dict[str, Any]] | None:
        """``/crosswalk/{release}/source/{sab}/{code}``: clusters by rootSource, then ui."""
        if not known_code(code):
            return None
        params: list[object] = [code, sab, sab]
        if targets:
            params.append(_json(targets))
        # the codes' rows in one statement, by code (as SPEC 12 orders the clusters)
        found = self.db.execute(_crosswalk(rows, bool(targets), self._flagged), params).fetchall()
        if not found and not self._known("code = ? AND sab = ?", (code, sab)):
            return None
        return [self._cluster(it, list(g)) for it, g in itertools.groupby(found, _C_CODE)]

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
        limit: int | None = None,
    ) -> list[dict[str, Any]]:
        """``/search/{release}``: the first ``limit`` results (``None``: every one; ``ui``,
        ``rootSource``, ``uri``, ``name``), in SPEC 12's order, never the ``NONE`` row (the
        caller pages and ends). Only the results given are named: a cut search is cheaper."""
        folded = string.casefold()
        params: dict[str, object] = {"q": string if input_type != "atom" else folded}
        where = [_counted(rows)]
        if sabs:
            where.append("m.sab IN (SELECT value FROM json_each(:sabs))")
            params["sabs"] = _json(sabs)
        if language is not None:
            where.append("m.lat = :lat")
            params["lat"] = language
        if semantic_types:  # each a TUI, or a tree number and those under it
            where.append(
                # the (TUI, tree number) pairs the types take, found once in the few distinct
                # pairs; then each candidate's concept looked up by CUI and pair (an index
                # search, not a scan of the concept's rows for each type)
                "EXISTS (SELECT 1 FROM mrsty s WHERE s.cui = m.cui AND (s.tui, s.stn) IN "
                "(SELECT r.tui, r.stn FROM mrsty_tree r JOIN json_each(:types) t "
                "WHERE r.tui = t.value OR r.stn = t.value "
                "OR substr(r.stn, 1, length(t.value) + 1) = t.value || '.'))"
            )
            params["types"] = _json(semantic_types)
        match: Callable[[str], bool] | None = None
        source, filters = "mrconso m", len(where)
        if input_type != "atom":
            where.append(_INPUT_FIELDS[input_type])
        elif search_type == "exact":
            where.append("m.folded = :q")
        elif search_type == "rightTruncation":
            where.append("m.folded >= :q")
            last = ord(folded[-1]) if folded else 0x10FFFF
            if last not in (0xD7FF, 0x10FFFF):  # (the next character is no surrogate)
                where.append("m.folded < :to")
                params["to"] = folded[:-1] + chr(last + 1)
            match = lambda name: name.startswith(folded)  # noqa: E731
        elif search_type == "leftTruncation":  # (no index ends strings: every row is read)
            where.append("substr(m.folded, -length(:q)) = :q")
            match = lambda name: name.endswith(folded)  # noqa: E731
        else:
            fts, match = _words(folded, search_type, partial)
            if fts is None:
                return []
            if fts:  # (else every row is read)
                source = "mrconso_words w JOIN mrconso m ON m.rowid = w.rowid"
                where.append("mrconso_words MATCH :fts")
                params["fts"] = fts
        found: dict[tuple[str, str], bool] = {}  # (SAB or "", ui) -> an exact match
        strings: dict[str, str] = {}  # an AUI's STR
        # ASCII words of an ASCII string are FTS5's tokens exactly: no check needed
        trusted = search_type == "words" and input_type == "atom" and folded.isascii()
        named = "aui" if return_id_type in ("concept", "aui") else _RETURN_FIELDS[return_id_type]
        # A file sorted by CUI (as NLM ships it) gives concepts in their order: the first
        # ``limit`` are known once that many are found, the exact ones (first) found before.
        early = limit is not None and return_id_type == "concept" and self._sorted
        if early and input_type == "atom" and search_type != "exact":
            equal = " AND ".join([*where[:filters], "m.folded = :q"])
            found = dict.fromkeys(
                (("", c) for (c,) in self.db.execute(
                    f"SELECT DISTINCT m.cui FROM mrconso m WHERE {equal}", params
                )), True,
            )  # fmt: skip
        order = " ORDER BY w.rowid" if early and source != "mrconso m" else " ORDER BY m.rowid"
        for cui, sab, ident, string, name in self.db.execute(
            f"SELECT m.cui, m.sab, m.{named.lower()}, m.str, m.folded FROM {source} "
            f"WHERE {' AND '.join(where)}{order if early else ''}",
            params,
        ):
            if early and limit is not None and len(found) >= limit:
                break
            if return_id_type == "concept":
                key = ("", cui)
            elif known_code(ident) or return_id_type == "aui":
                key = (sab, ident)
            else:
                continue
            exact = input_type != "atom" or name == folded  # (an exact atom matches any type)
            if key in found:  # (the rule is checked once a result, or to find it exact)
                found[key] = found[key] or exact
            elif exact or match is None or (trusted and name.isascii()) or match(name):
                found[key] = exact
                strings[ident] = string
        # the first ``limit``: exact matches first, then by ui and rootSource (a concept's is
        # its own: its ui decides), named
        keys = sorted(found, key=lambda k: (not found[k], k[1], k[0]))[:limit]
        if return_id_type == "concept":
            names = self._concept_names(ui for _, ui in keys)
            return [
                search_result_json(cui, *names[cui], self.links.concept(cui)) for _, cui in keys
            ]
        if return_id_type == "aui":
            return [search_result_json(a, strings[a], sab, self.links.aui(a)) for sab, a in keys]
        codes = self._code_names(_RETURN_FIELDS[return_id_type], keys)
        return [
            search_result_json(ident, codes[(sab, ident)], sab, self.links.code(sab, ident))
            for sab, ident in keys
        ]

    # -- the other files ---------------------------------------------------------------------

    def definitions(
        self, cui: str, *, sabs: Collection[str] = (), rows: Rows = COUNTED
    ) -> list[dict[str, Any]] | None:
        """MRDEF: ``Definition`` objects by SAB, then ATUI."""
        if not self._known("cui = ?", (cui,)):
            return None
        params: list[object] = [cui]
        where = f"m.cui = ? AND {_counted(rows, english=False)}" + _any_of("m", params, sab=sabs)
        found = self.db.execute(
            f"SELECT m.sab, m.def FROM mrdef m WHERE {where} ORDER BY m.sab, m.atui", params
        )
        return [
            {"classType": "Definition", "sourceOriginated": True, "rootSource": sab, "value": text}
            for sab, text in found
        ]

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
        if cui is not None:  # (whether MRCONSO holds it: below, with the sides' names)
            where, params = "r.cui2 = ?", [cui]
        elif aui is not None:
            if not self._known("aui = ?", (aui,)):
                return None
            where, params = "r.aui2 = ? AND r.aui2 <> '' AND r.stype2 = 'AUI'", [aui]
        elif sab is not None and code is not None:
            atoms = [r[_AUI] for r in self._code_rows(sab, code)]
            if not atoms:
                return None
            where = f"r.aui2 IN {_IN} AND r.aui2 <> '' AND r.stype2 IN ('SCUI', 'SDUI', 'CODE')"
            params = [_json(atoms)]
        else:
            return None
        where += " AND " + _counted(rows, "r", english=False)
        where += _any_of("r", params, rel=labels, sab=sabs)
        found = self.db.execute(
            "SELECT r.cui1, r.aui1, r.stype1, r.rel, r.cui2, r.aui2, r.stype2, r.rela, r.rui, "
            f"r.srui, r.sab, r.rg, r.suppress FROM mrrel r WHERE {where} ORDER BY r.rui",
            params,
        ).fetchall()
        if not found:
            return None if cui is not None and not self._known("cui = ?", (cui,)) else []
        sides = self._sides(
            {(r[0], r[1], r[2]) for r in found} | {(r[4], r[5], r[6]) for r in found}, cui
        )
        if sides is None:
            return None
        out = []
        for cui1, aui1, stype1, rel, cui2, aui2, stype2, rela, rui, srui, rsab, rg, flag in found:
            related_from, related_from_name = sides[(cui2, aui2, stype2)]
            related, related_name = sides[(cui1, aui1, stype1)]
            out.append({
                "ui": rui,
                "suppressible": flag in ("E", "Y"),
                "sourceUi": srui or NONE,
                "obsolete": flag == "O",
                "sourceOriginated": rsab != "MTH",
                "rootSource": rsab,
                "groupId": rg or NONE,
                "attributeCount": 0,
                "classType": "ConceptRelation" if stype1 == stype2 == "CUI"
                else "AtomRelation" if stype1 == stype2 == "AUI" else "AtomClusterRelation",
                "relatedFromId": related_from,
                "relatedFromIdName": related_from_name,
                "relationLabel": rel,
                "additionalRelationLabel": rela,
                "relatedId": related,
                "relatedIdName": related_name,
            })  # fmt: skip
        return out

    def _sides(
        self, sides: Collection[tuple[str, str, str]], concept: str | None = None
    ) -> dict[tuple[str, str, str], tuple[str, str]] | None:
        """The link and name of each side (CUI, AUI, STYPE) of MRREL rows (SPEC 12): a
        concept, an atom or a source code; ``NONE`` for one MRCONSO lacks. ``None`` when MRCONSO
        lacks the concept ``concept`` (read with the sides' concepts)."""
        auis = self._where({aui for _, aui, stype in sides if aui and stype != "CUI"})
        out: dict[tuple[str, str, str], tuple[str, str]] = {}
        concepts, codes = [], []  # (named below, once their names are read)
        for side in sides:
            _, aui, stype = side
            if stype == "CUI" or not aui:
                concepts.append(side)
            elif aui not in auis:
                out[side] = (NONE, NONE)
            elif stype == "AUI" or not known_code(auis[aui][1]):
                out[side] = (self.links.aui(aui), auis[aui][2])
            else:
                codes.append(side)
        asked = [] if concept is None else [concept]
        names = self._concept_names([*asked, *(cui for cui, _, _ in concepts)])
        if concept is not None and concept not in names:
            return None
        for side in concepts:
            found = names.get(side[0])
            out[side] = (NONE, NONE) if found is None else (self.links.concept(side[0]), found[0])
        named = self._code_names("CODE", {auis[aui][:2] for _, aui, _ in codes})
        for side in codes:
            sab, code, _ = auis[side[1]]
            out[side] = (self.links.code(sab, code), named[(sab, code)])
        return out

    def _types(self, cui: str) -> list[tuple[str, str]]:
        """A concept's semantic types (TUI, STY) by TUI, each its first row's (min()'s row)."""
        found = self.db.execute(
            "SELECT tui, sty, min(rowid) FROM mrsty WHERE cui = ? GROUP BY tui ORDER BY tui", (cui,)
        )
        return [(tui, sty) for tui, sty, _ in found]

    def semantic_types(self, cui: str, *, details: bool = False) -> list[dict[str, Any]] | None:
        """MRSTY: the concept's types by TUI (``details``: each a whole ``SemanticType``)."""
        if not self._known("cui = ?", (cui,)):
            return None
        out = []
        for tui, sty in self._types(cui):
            doc: dict[str, Any] = {"name": sty, "uri": self.links.tui(tui)}
            if details:
                doc.update(self.semantic_type(tui) or {})
            out.append(doc)
        return out

    def semantic_type(self, tui: str) -> dict[str, Any] | None:
        """``/semantic-network/{release}/TUI/{tui}``: a ``SemanticType``."""
        first = self.db.execute(
            "SELECT stn, sty FROM mrsty WHERE tui = ? ORDER BY rowid LIMIT 1", (tui,)
        ).fetchone()
        if first is None:
            return None
        stn, sty = first
        children = 0
        if stn:
            children = self.db.execute(
                "SELECT count(DISTINCT tui) FROM mrsty_tree WHERE stn > :stn || '.' "
                "AND stn < :stn || '/' AND instr(substr(stn, length(:stn) + 2), '.') = 0",
                {"stn": stn},
            ).fetchone()[0]
        return {
            "classType": "SemanticType",
            "abbreviation": NONE,
            "ui": tui,
            "definition": NONE,
            "example": NONE,
            "nonHuman": NONE,
            "usageNote": NONE,
            "treeNumber": stn or NONE,
            "semanticTypeGroup": NONE,
            "childCount": children,
            "name": sty,
        }

    def hierarchy(
        self,
        direction: str,
        *,
        sab: str | None = None,
        code: str | None = None,
        aui: str | None = None,
    ) -> list[dict[str, Any]] | None:
        """MRHIER: a code's lists as clusters, or an atom's as Atoms, nearest first, then by code
        (atoms: by AUI) (SPEC 12)."""
        deep = direction == "descendants"
        if aui is not None:
            if not self._known("aui = ?", (aui,)):
                return None
            best: dict[str, int] = {}
            for entry, n in self._edges([aui], deep)[direction]:
                if entry != aui:
                    best[entry] = min(n, best.get(entry, n))
            # (those MRCONSO holds)
            rows = {r[_AUI]: r for r in self._rows(f"m.aui IN {_IN}", (_json(best),))}
            ordered = sorted(rows, key=lambda a: (best[a], a))
            return [atom_json(rows[a], self.links) for a in ordered]
        if sab is None or code is None:
            return None
        atoms = self._code_rows(sab, code)
        if not atoms:
            return None
        found = self._code_edges((sab, code), {r[_AUI] for r in atoms}, deep)[direction]
        return self._clusters(sorted(found, key=lambda c: (found[c], c[1])))

    def sources(self) -> list[dict[str, Any]]:
        """MRSAB's current versions (without MRSAB: one per SAB of MRCONSO), as ``RootSource``
        objects by abbreviation."""
        if "MRSAB" in self.files:
            found = self.db.execute(
                "SELECT rsab, son, sf, lat, srl, cxty, ssn FROM mrsab WHERE rowid IN "
                "(SELECT min(rowid) FROM mrsab WHERE curver = 'Y' GROUP BY rsab) ORDER BY rsab"
            ).fetchall()
        else:  # (every row of MRCONSO is read; LAT: the one most rows have, then the first seen)
            found = self.db.execute(
                "SELECT sab, sab, sab, lat, coalesce(CAST(level AS TEXT), ''), '', sab FROM "
                "(SELECT sab, lat, max(max(CASE WHEN srl GLOB '[0-9]*' AND srl NOT GLOB "
                f"'*[^0-9]*' AND length(srl) <= {_SRL_DIGITS} THEN CAST(srl AS INTEGER) END)) "
                "OVER by_sab AS level, row_number() OVER (by_sab ORDER BY count(*) DESC, "
                "min(rowid)) AS n FROM mrconso GROUP BY sab, lat WINDOW by_sab AS (PARTITION BY "
                "sab)) WHERE n = 1 ORDER BY sab"
            ).fetchall()
        return [
            {
                "classType": "RootSource",
                "abbreviation": rsab,
                "expandedForm": son or NONE,
                "family": sf or NONE,
                "language": {
                    "classType": "Language",
                    "abbreviation": lat or NONE,
                    "expandedForm": _LANGUAGES.get(lat, NONE),
                },
                "restrictionLevel": int(srl)
                if srl.isascii() and srl.isdigit() and len(srl) <= _SRL_DIGITS
                else None,
                "acquisitionContact": NONE,
                "contentContact": NONE,
                "licenseContact": NONE,
                "contextType": cxty or NONE,
                "shortName": ssn or NONE,
                "hierarchicalName": NONE,
                "preferredName": son or NONE,
                "synonymousNames": NONE,
            }
            for rsab, son, sf, lat, srl, cxty, ssn in found
        ]


def _words(
    folded: str, search_type: str, partial: bool
) -> tuple[str | None, Callable[[str], bool]]:
    """A word search's FTS5 query (``None``: no word, nothing matches; ``""``: no narrowing)
    and SPEC 12's test of an atom's casefolded string: the FTS5 table only narrows (its
    tokenizer is SQLite's, with its own Unicode tables), so only a word whose characters had
    their category in Unicode 3.2 already, which SQLite's tables hold, is looked up there."""
    words = _WORD.findall(folded)
    if search_type == "approximate":  # (deprecated by UTS: a partial normalizedWords)
        search_type, partial = "normalizedWords", True
    if search_type not in ("words", "normalizedWords", "normalizedString"):
        raise ValueError(f"no search type {search_type!r}")
    if not words:
        return None, lambda _: False
    form = str if search_type == "words" else _norm  # (str: the word itself)
    wanted = {form(w) for w in words}
    terms = {
        form(w): f'"{w}"' if form is str else f'("{form(w)}" OR "{form(w)}s")'
        for w in words
        if w.isascii() or all(_UCD_3_2.category(c) == unicodedata.category(c) for c in w)
    }
    partial = partial and search_type != "normalizedString"
    fts = " AND ".join(terms.values())
    if partial:
        fts = " OR ".join(terms.values()) if len(terms) == len(wanted) else ""
    if search_type == "normalizedString":
        ordered = sorted(map(_norm, words))
        return fts, lambda name: sorted(map(_norm, _WORD.findall(name))) == ordered
    if partial:
        return fts, lambda name: not wanted.isdisjoint(map(form, _WORD.findall(name)))
    return fts, lambda name: wanted.issubset(map(form, _WORD.findall(name)))


#: What a command reads besides MRCONSO (the files it needs, those it reads when the META holds
#: them); a command not named here reads MRCONSO alone.
_NEEDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "crosswalk": ((), ("MRHIER", "MRREL")),
    "definitions": (("MRDEF",), ()),
    "relations": (("MRREL",), ()),
    "semantic-types": (("MRSTY",), ()),
    "source-concept": ((), ("MRHIER", "MRREL")),
    "hierarchy": (("MRHIER",), ("MRREL",)),
    "sources": ((), ("MRSAB",)),
    "concept": ((), ("MRSTY", "MRDEF", "MRREL")),
}


def needs(command: str, *, semantic_types: bool = False) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The files a ``umls`` command needs (absent: bad input naming the first), and those it
    reads when the META holds them (for the links and counts they decide)."""
    required, optional = _NEEDS.get(command, ((), ()))
    if command == "search" and semantic_types:
        required += ("MRSTY",)
    return ("MRCONSO", *required), optional
