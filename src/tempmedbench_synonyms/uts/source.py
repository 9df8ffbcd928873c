"""The UMLS REST atom source: a regeneration's atom queries (SPEC section 3) asked through the
one batch path (``uts.batch.ask_all``), with the release probe, the offline message and the
run's memo on top (docs/architecture.md, "UTS is asked one way").
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import closing
from functools import cache, partial
from typing import TextIO

from tempmedbench_synonyms import paths
from tempmedbench_synonyms.atoms import (
    Atom,
    AtomQuery,
    FetchResult,
    check_cui,
    check_release,
    check_sab,
)
from tempmedbench_synonyms.errors import Interrupted, TempMedBenchError
from tempmedbench_synonyms.progress import StepProgress
from tempmedbench_synonyms.uts.batch import ask_all
from tempmedbench_synonyms.uts.cached import Answers, CachedUts, Got
from tempmedbench_synonyms.uts.models import UtsAtom

#: A query's atoms as a 1-tuple, so that "UMLS said 404" (``(None,)``) is not a miss (``None``).
Found = tuple[tuple[Atom, ...] | None]


def to_atoms(got: Got) -> Found:
    """UTS atoms as the pipeline's ``Atom`` values (SPEC 3's mapping); ``None``: not found."""
    if got.value is None:
        return (None,)
    listed = got.value if isinstance(got.value, list) else [got.value]
    return (tuple(UtsAtom.model_validate(a).to_atom() for a in listed),)


class RestAtomSource:
    """An ``AtomSource`` backed by the UTS REST API and the persistent cache (``workers``
    threads)."""

    name = "rest"

    def __init__(
        self,
        uts: CachedUts,
        *,
        workers: int,
        progress_stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
        tick: float = 0.2,
    ) -> None:
        self.uts = uts
        self.workers = workers
        self.progress_stream = progress_stream
        self._clock = clock
        self._tick = tick

    def __repr__(self) -> str:
        return f"RestAtomSource(workers={self.workers}, offline={self.uts.offline})"

    def fetch(self, umls_release: str, probe_cui: str, queries: Sequence[AtomQuery]) -> FetchResult:
        """Answer every query for ``umls_release``: identifiers checked, then the probe, then a warm
        rerun's memo, else the cache, else UMLS (``--offline``: unavailable at the first miss)."""
        uts = self.uts
        uts.resume()  # a previous fetch may have stopped it
        began = self._clock()  # the progress counts the probe's wait for a turn too
        before = uts.counters()
        unique = list(dict.fromkeys(queries))
        # Bad input before the first request, not after half of them.
        check_queries(umls_release, probe_cui, unique)
        try:
            concrete = uts.probe(umls_release, probe_cui, regeneration=True)
            memo = uts.load_memo(concrete, unique)
            # Each query's request is built once, for the cache pass, the grouping and the ask.
            builds = {q: cache(partial(paths.for_query, query=q)) for q in unique}

            def cached(query: AtomQuery) -> Found | None:
                if memo is not None:
                    return (memo[query],)
                got = uts.lookup_cached(concrete, builds[query])
                return None if got is None else to_atoms(got)

            def ask(query: AtomQuery) -> Found:
                return to_atoms(uts.lookup(concrete, builds[query], fresh=True))

            def offline_first(misses: list[AtomQuery]) -> None:
                shown = ", ".join(f"{q.route} {q.sab} {q.ident}" for q in sorted(misses)[:5])
                more = ", ..." if len(misses) > 5 else ""
                uts.need_network(f"the atoms of {len(misses)} of {len(unique)} concepts of "
                                 f"release {concrete} ({shown}{more})")  # fmt: skip

            display = partial(StepProgress, self.progress_stream, label=f"UMLS {concrete}",
                              unit="concepts", total=len(unique), clock=self._clock,
                              started=began)  # fmt: skip
            # Queries that send the same request (route aui ignores the sab) share one fetch.
            rounds = ask_all(uts, dict.fromkeys(unique, 1), cached=cached, ask=ask,
                             workers=self.workers, display=display,
                             progress=self.progress_stream, unit="concept", before=before,
                             same=lambda q: builds[q](concrete),
                             before_asking=offline_first, tick=self._tick)  # fmt: skip
            answers: Answers = {}
            with closing(rounds):
                for got in rounds:
                    answers.update((query, found[0]) for query, found in got)
            if memo is None:
                uts.save_memo(concrete, unique, answers)
        except (TempMedBenchError, Interrupted) as err:
            # what the run did before it stopped (a 401 is a request): the failure's report says it
            done = uts.counters() - before
            err.report_fields.update(requests=done.requests, cache_hits=done.cache_hits,
                                     warnings=uts.warnings())  # fmt: skip
            raise
        finally:
            uts.close()
        done = uts.counters() - before
        return FetchResult(
            umls_release=concrete,
            atoms={q: answers[q] for q in queries},
            requests=done.requests,
            cache_hits=done.cache_hits,
            warnings=uts.warnings(),
        )


def check_queries(umls_release: str, probe_cui: str, queries: Sequence[AtomQuery]) -> None:
    """BadInputError for the first malformed identifier among the release, the probe's CUI and
    every query (route ``aui``'s unsent SAB too: a near miss could only drift), before sending."""
    check_release(umls_release)
    check_cui(probe_cui)
    sabs = {q.sab for q in queries}
    for query in queries:
        paths.for_query(umls_release, query, sabs=sabs)
        if query.route == "aui" and query.sab:
            check_sab(query.sab, also=sabs)
