"""Where ``Umls`` takes its answers from: one interface (``Terminology``), one backend each (UTS,
the user's own UMLS files); ``Umls`` asks a backend only, never what is behind it
(docs/architecture.md).
"""

from __future__ import annotations

import threading
from collections.abc import Generator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from tempmedbench_synonyms.errors import BadInputError, plural
from tempmedbench_synonyms.lookups import Answer, Lookup

if TYPE_CHECKING:
    from tempmedbench_synonyms.secret import ApiKey
    from tempmedbench_synonyms.uts.cached import CachedUts
    from tempmedbench_synonyms.uts.options import UtsOptions

#: The inputs a ``*_many`` reads ahead of its answers from UTS: each chunk is one batch (asked
#: concurrently, identical lookups once), so that an endless iterable is answered as it goes.
MANY_AHEAD = 500
#: The root of the links in a local answer, whatever ``--base-url`` says (SPEC 12).
LOCAL_LINKS = "https://uts-ws.nlm.nih.gov/rest/"

Items = Sequence[tuple[str, Lookup]]


class Terminology(Protocol):
    """A source of answers to SPEC 11's lookups in one release: what ``Umls`` asks."""

    def answer(self, items: Items, progress: TextIO | None) -> Generator[Answer, None, None]:
        """One ``Answer`` per ``(input, lookup)``, in order (closed early: its work stops)."""

    def plan(self, items: Items, *, unread: int = 0) -> tuple[str, dict[str, Any]]:
        """``--dry-run`` of ``items`` and ``unread`` more bad inputs: a line and its JSON."""

    def warnings(self) -> list[str]:
        """What a report says besides the log (``--json``'s ``warnings``)."""
        return []

    def summary(self) -> str | None:
        """What was asked so far, in a line (``-v``), if anything was."""
        return None

    def close(self) -> None:
        """Let go of the connections; they open again on the next ask."""


class UtsTerminology:
    """UTS over REST: ``uts.batch.answer_many`` over one ``CachedUts``, opened on first use."""

    def __init__(self, options: UtsOptions, release: str, key: ApiKey | None = None) -> None:
        options.check()  # out of range: BadInputError now, not at the first ask
        self.options, self.release, self._key = options, release, key
        self._uts: CachedUts | None = None

    def _session(self) -> CachedUts:
        if self._uts is None:
            from tempmedbench_synonyms.uts.session import open_uts

            self._uts = open_uts(self.options, key=self._key)
        return self._uts

    def answer(self, items: Items, progress: TextIO | None) -> Generator[Answer, None, None]:
        from tempmedbench_synonyms.uts import batch
        from tempmedbench_synonyms.uts.options import check_workers

        return batch.answer_many(
            self._session(), self.release, items, workers=check_workers(self.options.workers),
            progress=progress,
        )  # fmt: skip

    def plan(self, items: Items, *, unread: int = 0) -> tuple[str, dict[str, Any]]:
        from tempmedbench_synonyms.uts.batch import plan_lookups

        session, rate = self._session(), self.options.rate
        return plan_lookups(session, self.release, items, rate=rate, unread=unread)

    def warnings(self) -> list[str]:
        return self._session().warnings()

    def summary(self) -> str | None:
        counts = self._session().counters()
        return (
            f"{plural(counts.requests, 'request')} sent, "
            f"{plural(counts.cache_hits, 'answer')} from the cache"
        )

    def close(self) -> None:
        if self._uts is not None:
            self._uts.close()


class MetaTerminology(Terminology):
    """A user's own UMLS files (SPEC 12), answered by the engine over one ``LocalIndex`` open
    for the ``Umls``'s life. ``release`` is the files' (another is bad input)."""

    def __init__(
        self,
        meta: Path,
        release: str,
        *,
        mrconso_only: bool = False,
        index_dir: Path | None = None,
        progress: TextIO | None = None,
    ) -> None:
        from tempmedbench_synonyms.mrconso.index import LocalIndex
        from tempmedbench_synonyms.mrconso.shapes import Links

        self._index = LocalIndex(
            meta, mrconso_only=mrconso_only, index_dir=index_dir, progress=progress
        )
        named = self._index.release
        if release not in ("current", named) and named is not None:
            self._index.close()
            raise BadInputError(
                f"--umls-release {release} is not the release its names say, {named}",
                path=meta,
                hint=f"leave --umls-release out (current: the files' own), or give {named}",
            )
        #: the release the answers name (``None``: no name says it)
        self.release = named if release == "current" else release
        self._links = Links(self.release or "current", LOCAL_LINKS)
        self._engines: dict[tuple[str, bool], Any] = {}
        self._lock = threading.Lock()  # one connection: one question at a time

    def answer(self, items: Items, progress: TextIO | None) -> Generator[Answer, None, None]:
        for input, lookup in items:
            yield self._answer(input, lookup)

    def _answer(self, input: str, lookup: Lookup) -> Answer:
        try:
            lookup.check()
            with self._lock:
                value = self._engine(lookup).ask(lookup.ask)
        except BadInputError as err:
            if err.path is not None or err.key is not None:
                raise  # the files or an option, not this input
            return lookup.bad(input, err, self.release, self._index.where)
        results = value if isinstance(value, list) else [] if value is None else [value]
        return lookup.answered(input, results, self.release, False, source=self._index.where)

    def _files(self, lookup: Lookup, maybe: set[str] | None = None) -> tuple[str, ...]:
        """The files ``lookup`` needs (``engine.needs``); one the META lacks is bad input. Given
        ``maybe`` (a dry run), a full zip's .nlm is not read to say which it holds: a file it
        reads when held that it may hold (``LocalIndex.known`` None) goes there instead."""
        from tempmedbench_synonyms.mrconso.engine import needs

        held = self._index.holds if maybe is None else self._index.known
        types = bool(getattr(lookup, "semantic_types", ()))  # search --semantic-types: MRSTY
        needed, optional = needs(lookup.command, semantic_types=types)
        for file in needed:
            if held(file) is False:
                asked = f"umls {lookup.command}" + (" --semantic-types" if types else "")
                raise BadInputError(
                    f"{asked} needs {file}.RRF, and it holds none", path=self._index.meta,
                    hint=f"give --meta the META folder (or release zip) that holds {file}.RRF",
                )  # fmt: skip
        if maybe is not None:
            maybe.update(f for f in optional if held(f) is None)
        return (*needed, *(f for f in optional if held(f)))

    def _engine(self, lookup: Lookup) -> Any:
        """The engine over the parts ``lookup`` needs, built on first need (one a command)."""
        key = (lookup.command, bool(getattr(lookup, "semantic_types", ())))
        if key not in self._engines:
            self._engines[key] = self._index.engine(self._files(lookup), self._links)
        return self._engines[key]

    def plan(self, items: Items, *, unread: int = 0) -> tuple[str, dict[str, Any]]:
        files: set[str] = set()
        maybe: set[str] = set()
        bad = unread
        for _, lookup in items:
            try:
                lookup.check()
            except BadInputError:
                bad += 1
                continue
            files.update(self._files(lookup, maybe))
        maybe -= files  # (what a full zip's .nlm holds is not read for a plan)
        found = self._index.parts()
        built = {p.file for p in found if p.rows is not None}  # None: not indexed yet
        parts = {f: f in built for f in sorted(files | maybe)}
        said = ", ".join(
            f"{f}.RRF {'indexed' if ok else 'to index'}{' if held' if f in maybe else ''}"
            for f, ok in parts.items()
        )
        inputs = len(items) + unread
        line = (
            f"{plural(inputs, 'input')}: answered from {self._index.where} (UMLS "
            f"{self.release or 'local'}){'; ' + said if said else ''}; nothing is sent"
        )
        return line, {"inputs": inputs, "bad_input": bad, "files": parts, "seconds": None}

    def close(self) -> None:
        with self._lock:
            self._engines.clear()
            self._index.close()
