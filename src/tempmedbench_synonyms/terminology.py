"""Where ``Umls`` takes its answers from: one interface (``Terminology``), one backend each.

UTS over REST (``UtsTerminology``) and a local MRCONSO.RRF (``LocalTerminology``); the fake's
invented rows will be a third. ``Umls`` (umls.py) and through it the ``umls`` commands ask a
backend only, never what is behind it (docs/architecture.md).
"""

from __future__ import annotations

import stat
from collections.abc import Generator, Sequence
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TextIO

from tempmedbench_synonyms.errors import BadInputError, plural
from tempmedbench_synonyms.lookups import Answer, Lookup

if TYPE_CHECKING:
    from tempmedbench_synonyms.secret import ApiKey
    from tempmedbench_synonyms.uts.cached import CachedUts
    from tempmedbench_synonyms.uts.options import UtsOptions

#: The inputs a ``*_many`` reads ahead of its answers from UTS: each chunk is one batch (asked
#: concurrently, identical lookups once), so that an endless iterable is answered as it goes.
MANY_AHEAD = 500
#: The same from a local MRCONSO.RRF, where each chunk costs one pass over the file.
LOCAL_MANY_AHEAD = 100_000

Items = Sequence[tuple[str, Lookup]]


class Terminology(Protocol):
    """A source of answers to SPEC 11's lookups in one release: what ``Umls`` asks."""

    #: how many inputs one batch takes (``Umls`` reads an endless iterable this many at a time)
    ahead: ClassVar[int]

    def answer(self, items: Items, progress: TextIO | None) -> Generator[Answer, None, None]:
        """One ``Answer`` per ``(input, lookup)``, in order (closed early: its work stops)."""

    def plan(self, items: Items, *, unread: int = 0) -> tuple[str, dict[str, Any]]:
        """``--dry-run`` of ``items`` and ``unread`` more bad inputs: a line and its JSON."""

    def warnings(self) -> list[str]:
        """What a report says besides the log (``--json``'s ``warnings``)."""

    def summary(self) -> str | None:
        """What was asked so far, in a line (``-v``), if anything was."""

    def close(self) -> None:
        """Let go of the connections; they open again on the next ask."""


class UtsTerminology:
    """UTS over REST: ``uts.batch.answer_many`` over one ``CachedUts``, opened on first use
    (``uts.session.open_uts``). The options are checked at once (``UtsOptions.check``)."""

    ahead: ClassVar[int] = MANY_AHEAD

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

        many = batch.answer_many(
            self._session(), self.release, items, workers=check_workers(self.options.workers),
            progress=progress,
        )  # fmt: skip
        with closing(many):
            yield from many

    def plan(self, items: Items, *, unread: int = 0) -> tuple[str, dict[str, Any]]:
        from dataclasses import replace

        from tempmedbench_synonyms.uts.estimate import plan_lookups

        found = plan_lookups(self._session(), self.release, items, rate=self.options.rate)
        found = replace(found, inputs=found.inputs + unread, bad=found.bad + unread)
        return found.line(), found.to_json()

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


class LocalTerminology:
    """A local MRCONSO.RRF (any form NLM ships): ``mrconso.lookup.answer_many``, one pass over
    the file a batch, no key and no network (``current``: the release the file's names say)."""

    ahead: ClassVar[int] = LOCAL_MANY_AHEAD

    def __init__(self, path: Path, release: str) -> None:
        self.path, self.release = path, release
        self._read = False  # a pipe is read by one batch only

    def answer(self, items: Items, progress: TextIO | None) -> Generator[Answer, None, None]:
        from tempmedbench_synonyms.mrconso.lookup import answer_many
        from tempmedbench_synonyms.progress import scan_progress

        if self._read and _is_pipe(self.path):  # its open would wait for a writer forever
            raise BadInputError(
                "is a pipe, and this Umls has read it: a pipe can be read once",
                path=self.path,
                hint="give the file itself (MRCONSO.RRF, its .gz or zip), which every batch "
                "reads again; or ask every input in one batch (a list)",
            )
        self._read = True
        bar = scan_progress(progress, self.path.name)
        try:
            answers = answer_many(self.path, self.release, items, progress=bar)
        finally:
            bar.close()
        yield from answers

    def plan(self, items: Items, *, unread: int = 0) -> tuple[str, dict[str, Any]]:
        from tempmedbench_synonyms.mrconso.lookup import local_release

        _, release = local_release(self.path, self.release)  # refused here as in the run
        inputs = len(items) + unread
        line = (
            f"{plural(inputs, 'input')}: answered from {self.path} (UMLS {release}) in one "
            "pass; nothing is sent"
        )
        return line, {"inputs": inputs, "seconds": None}

    def warnings(self) -> list[str]:
        return []

    def summary(self) -> str | None:
        return None

    def close(self) -> None:
        pass


def _is_pipe(path: Path) -> bool:
    try:
        return stat.S_ISFIFO(path.stat().st_mode)
    except OSError:  # gone: the batch says so
        return False
