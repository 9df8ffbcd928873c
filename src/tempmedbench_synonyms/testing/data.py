"""The fake UTS's data: invented MRCONSO rows (``FakeRow``) and the other Metathesaurus files'
rows, put in the local UMLS's engine (``mrconso.engine``) in memory (``FakeUtsData``), so that
the fake and a local META answer the same rows alike (SPEC 12, "The fake is this engine").
"""

from __future__ import annotations

import sqlite3
import threading
import weakref
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar, overload

from tempmedbench_synonyms.mrconso import engine
from tempmedbench_synonyms.mrconso.engine import FILES, Engine
from tempmedbench_synonyms.mrconso.forms import holds
from tempmedbench_synonyms.mrconso.index import read_rows
from tempmedbench_synonyms.mrconso.rows import COLUMN, split_row
from tempmedbench_synonyms.mrconso.shapes import Links

_T = TypeVar("_T")


class _Column:
    """A field of a ``FakeRow`` by its MRCONSO.RRF column name (read on the class: itself)."""

    def __init__(self, name: str) -> None:
        self.index = COLUMN[name]

    @overload
    def __get__(self, row: None, owner: object = None) -> _Column: ...
    @overload
    def __get__(self, row: FakeRow, owner: object = None) -> str: ...
    def __get__(self, row: FakeRow | None, owner: object = None) -> str | _Column:
        return self if row is None else row.fields[self.index]


@dataclass(frozen=True, slots=True)
class FakeRow:
    """One MRCONSO.RRF row the fake serves: its 18 fields, and those that say what it is by name
    (what the fake answers from a row is the engine's: SPEC 12)."""

    fields: tuple[str, ...]
    cui = _Column("CUI")
    aui = _Column("AUI")
    sab = _Column("SAB")
    tty = _Column("TTY")
    #: ``NOCODE`` if none
    code = _Column("CODE")
    name = _Column("STR")

    @classmethod
    def from_fields(cls, fields: Sequence[str]) -> FakeRow:
        """The row from the 18 fields of one MRCONSO.RRF line (as ``mrconso.split_row`` gives)."""
        if len(fields) != len(COLUMN):
            raise ValueError(f"an MRCONSO row has {len(COLUMN)} fields, not {len(fields)}")
        return cls(tuple(fields))


class FakeUtsData:
    """What a fake UTS serves: MRCONSO rows and any rows of MRDEF, MRREL, MRSTY, MRHIER and
    MRSAB (as ``engine.COLUMNS`` names them), in an in-memory index of the local engine.

    No MRSTY rows (``semantic_types=None``): every concept is ``T999`` "Invented Type"
    (``A9.9``); no MRSAB rows: the MRCONSO rows' SABs, as SPEC 12 says.
    """

    def __init__(
        self,
        rows: Iterable[FakeRow],
        *,
        release: str = "2099AA",
        also_served: Iterable[str] = (),
        definitions: Iterable[Sequence[str]] = (),
        relations: Iterable[Sequence[str]] = (),
        semantic_types: Iterable[Sequence[str]] | None = None,
        hierarchy: Iterable[Sequence[str]] = (),
        sources: Iterable[Sequence[str]] | None = None,
    ) -> None:
        self.rows = list(rows)
        self.release = release
        #: the releases the fake answers for (and ``current``, which is ``release``)
        self.served = {release, *also_served}
        if semantic_types is None:
            cuis = dict.fromkeys(r.cui for r in self.rows)
            semantic_types = [(c, "T999", "A9.9", "Invented Type", "", "") for c in cuis]
        given: dict[str, Iterable[Sequence[str]]] = {
            "MRCONSO": (r.fields for r in self.rows),
            "MRDEF": definitions,
            "MRREL": relations,
            "MRSTY": semantic_types,
            "MRHIER": hierarchy,
        }
        if sources is not None:
            given["MRSAB"] = sources
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        weakref.finalize(self, self._db.close)  # closed with the data (3.13 warns otherwise)
        for file, file_rows in given.items():
            engine.create(self._db, file)
            engine.load(self._db, file, file_rows)
            engine.finish(self._db, file)
        self._db.commit()
        self._files = frozenset(given)
        # the server answers on several threads; a connection serves one at a time
        self._lock = threading.Lock()

    def ask(self, links: Links, question: Callable[[Engine], _T]) -> _T:
        """The engine's answer to ``question``, its links ``links`` (one question at a time)."""
        with self._lock:
            return question(Engine(self._db, self._files, links))

    @classmethod
    def from_lines(
        cls, lines: Iterable[str], *, path: str = "<rows>", release: str = "2099AA"
    ) -> FakeUtsData:
        """Rows in MRCONSO.RRF format (18 fields, each followed by ``|``); blank lines skipped."""
        rows = (
            FakeRow(tuple(split_row(line, path=path, line_no=n)))
            for n, line in enumerate(lines, start=1)
            if line.strip()
        )
        return cls(rows, release=release)

    @classmethod
    def from_mrconso(cls, path: Path, *, release: str = "2099AA") -> FakeUtsData:
        """Read an MRCONSO.RRF-format file (invented rows, for tests), as the local index does."""
        rows = read_rows("MRCONSO", Path(path))
        return cls((FakeRow(tuple(fields)) for fields in rows), release=release)

    @classmethod
    def from_meta(cls, folder: Path, *, release: str = "2099AA") -> FakeUtsData:
        """Read whichever META files ``folder`` holds (in any form NLM ships), as the local index
        does; none is a ``FileNotFoundError``."""
        folder = Path(folder)
        read = {f: read_rows(f, folder) for f in FILES if folder.is_dir() and holds(folder, f)}
        if not read:
            raise FileNotFoundError(
                f"{folder} holds none of {', '.join(f + '.RRF' for f in FILES)}"
            )
        return cls(
            (FakeRow(tuple(fields)) for fields in read.get("MRCONSO", ())),
            release=release,
            definitions=read.get("MRDEF", ()),
            relations=read.get("MRREL", ()),
            semantic_types=read.get("MRSTY"),
            hierarchy=read.get("MRHIER", ()),
            sources=read.get("MRSAB"),
        )
