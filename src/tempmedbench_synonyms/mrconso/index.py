"""The local UMLS's index (SPEC 12): a META's files found, each file's part built on first need,
found again by the files' identity, trusted only by SPEC 8's rules.

STUB (the lead's): a plain folder's ``MR*.RRF`` (or one MRCONSO.RRF) loaded into memory on
every open. The interface is the one the real index keeps.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection
from pathlib import Path
from typing import TextIO

from tempmedbench_synonyms.errors import BadInputError
from tempmedbench_synonyms.mrconso import engine
from tempmedbench_synonyms.mrconso.engine import Engine
from tempmedbench_synonyms.mrconso.forms import named_release
from tempmedbench_synonyms.mrconso.shapes import Links


class LocalIndex:
    """A META (``meta``: a folder or any form of SPEC 7 holding one; ``mrconso_only``: the
    path is an MRCONSO.RRF, a META of it alone), its index in ``index_dir``."""

    def __init__(
        self,
        meta: Path,
        *,
        mrconso_only: bool = False,
        index_dir: Path | None = None,
        progress: TextIO | None = None,
    ) -> None:
        self.meta, self.index_dir, self.progress = Path(meta), index_dir, progress
        if mrconso_only:
            self._paths = {"MRCONSO": self.meta}
        else:
            self._paths = {
                f: self.meta / f"{f}.RRF"
                for f in engine.FILES
                if (self.meta / f"{f}.RRF").is_file()
            }
        if "MRCONSO" not in self._paths:
            raise BadInputError("holds no MRCONSO.RRF", path=self.meta)
        #: the release the path's names say (SPEC 12, "Release"), or None
        self.release: str | None = named_release(reversed(self.meta.resolve().parts))
        #: the files the META holds
        self.present: frozenset[str] = frozenset(self._paths)
        self._db: sqlite3.Connection | None = None
        self._loaded: set[str] = set()

    def engine(self, files: Collection[str], links: Links) -> Engine:
        """An engine over the parts of ``files`` (each one the META holds), each built first if
        it is not yet (saying so, with a progress bar on ``progress``)."""
        if self._db is None:
            self._db = sqlite3.connect(":memory:", check_same_thread=False)
        for file in files:
            if file in self._loaded:
                continue
            engine.create(self._db, file)
            with open(self._paths[file], encoding="utf-8", newline="") as fh:
                engine.load(self._db, file, (line.rstrip("\r\n").split("|")[:-1] for line in fh))
            engine.finish(self._db, file)
            self._loaded.add(file)
        return Engine(self._db, self._loaded, links)

    @property
    def where(self) -> str:
        """What ``--json``'s ``source`` names: the index."""
        return f"index of {self.meta}"

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
            self._loaded.clear()
