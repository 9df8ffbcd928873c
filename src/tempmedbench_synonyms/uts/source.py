"""The UMLS REST atom source: cache first, then worker threads behind one shared rate limiter.

``RestAtomSource.fetch`` answers the pipeline's atom queries (SPEC section 3) through
``CachedUts`` (``uts.cached``), the only thing it talks to; this module adds the worker pool and
the counts of one fetch. Every identifier is checked before the first request:

1. the probe, ``GET /content/{release}/CUI/{probe_cui}``: a 404 means the release is not served
   (outcome ``unavailable``), and for ``current`` its links name the concrete release, which every
   later request and cache key uses;
2. every query already in the cache is answered from it, without a socket (``--offline`` stops
   here: a miss is ``unavailable``); a warm rerun of the same queries reads the run's memo
   (``CachedUts.load_memo``) instead of one entry per query;
3. the rest are fetched by ``--workers`` threads sharing the client's rate limiter, so that the
   150 ms or so a UTS answer takes does not cap throughput; each query's complete answer (every
   page) is cached as soon as it is complete, so that an interrupted run (Ctrl-C, killed) resumes
   on the next run and fetches nothing it already had.

A 401/403 in any worker, any other error that ends the run, and Ctrl-C cancel the client
(``CachedUts.cancel``), whose event the rate limiter shares: every worker stops at once, whether
it is waiting for its turn, sleeping before a retry, about to send, or reading an answer (the
client cuts the sockets of the requests on the wire); the workers are daemon threads
(``uts.workers``, shared with many lookups at once), waited for a second at most, so that
Ctrl-C ends the run at once. The
progress goes to stderr (``progress.fetch_progress``: a bar on a terminal, plain lines otherwise,
nothing when quiet).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from contextlib import closing
from functools import partial
from typing import TextIO

from tempmedbench_synonyms.atoms import AtomQuery, FetchResult
from tempmedbench_synonyms.errors import Interrupted, TempMedBenchError
from tempmedbench_synonyms.paths import UtsRequest
from tempmedbench_synonyms.progress import fetch_progress
from tempmedbench_synonyms.uts.cached import Answers, CachedUts, Counters, to_atoms
from tempmedbench_synonyms.uts.estimate import estimate_line
from tempmedbench_synonyms.uts.workers import completions

log = logging.getLogger(__name__)


class RestAtomSource:
    """An ``AtomSource`` backed by the UTS REST API and the persistent cache.

    ``workers`` is the number of worker threads, as ``uts.options.check_workers`` gives it.
    """

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
        """Answer every query for ``umls_release`` (see the module docstring)."""
        self.uts.resume()  # a previous fetch may have stopped it
        began = self._clock()  # the progress counts the probe's wait for a turn too
        before = self.uts.counters()
        unique = list(dict.fromkeys(queries))
        # Bad input before the first request, not after half of them.
        self.uts.check_queries(umls_release, probe_cui, unique)
        try:
            concrete = self.uts.resolve_release(umls_release, probe_cui)
            answers = self.uts.load_memo(concrete, unique)
            if answers is None:
                answers = {}
                misses: list[AtomQuery] = []
                for query in unique:
                    hit = self.uts.cached_atoms(concrete, query)
                    if hit is None:
                        misses.append(query)
                    else:
                        answers[query] = to_atoms(hit.value)
                if misses:
                    shown = ", ".join(f"{q.route} {q.sab} {q.ident}" for q in sorted(misses)[:5])
                    more = ", ..." if len(misses) > 5 else ""
                    self.uts.need_network(
                        f"the atoms of {len(misses)} of {len(unique)} concepts of release "
                        f"{concrete} ({shown}{more})"
                    )
                    self._fetch_all(concrete, misses, answers, total=len(unique), before=before,
                                    began=began)  # fmt: skip
                else:
                    self._all_from_cache(concrete, len(unique), before, began)
                self.uts.save_memo(concrete, unique, answers)
            else:
                self._all_from_cache(concrete, len(unique), before, began)
        except (TempMedBenchError, Interrupted) as err:
            # what the run did before it stopped (a 401 is a request): the failure's report says it
            done = self.uts.counters() - before
            err.report_fields.update(requests=done.requests, cache_hits=done.cache_hits,
                                     warnings=self.uts.warnings())  # fmt: skip
            raise
        finally:
            self.uts.close()
        done = self.uts.counters() - before
        return FetchResult(
            umls_release=concrete,
            atoms={q: answers[q] for q in queries},
            requests=done.requests,
            cache_hits=done.cache_hits,
            warnings=self.uts.warnings(),
        )

    def _all_from_cache(
        self, umls_release: str, total: int, before: Counters, began: float
    ) -> None:
        """The final progress of a fetch the cache answered whole (the probe may have been sent)."""
        done = self.uts.counters() - before
        fetch_progress(
            self.progress_stream, umls_release=umls_release, total=total, clock=self._clock,
            started=began,
        ).update(
            total, hits=done.cache_hits, requests=done.requests, retries=done.retries, final=True
        )  # fmt: skip

    def _say_estimate(self, total: int, hits: int, misses: int, requests: int) -> None:
        """Once, before the first fetch: how many are cached, how many to fetch, how long."""
        rate = self.uts.rate
        if self.progress_stream is None or rate is None:
            return
        line = estimate_line(total, hits, misses, requests, rate)
        self.progress_stream.write(line + "\n")
        self.progress_stream.flush()

    def _fetch_all(
        self,
        umls_release: str,
        misses: list[AtomQuery],
        answers: Answers,
        *,
        total: int,
        before: Counters,
        began: float,
    ) -> None:
        """Fetch the misses with the worker pool; progress counts requests and retries since
        ``before``, and time since ``began``, when the fetch began (so the probe is counted, as
        in the final report)."""
        hits = total - len(misses)
        display = fetch_progress(
            self.progress_stream, umls_release=umls_release, total=total, clock=self._clock,
            started=began,
        )  # fmt: skip
        fetched = 0

        def report(final: bool = False) -> None:
            done = self.uts.counters() - before
            # the counters' cache hits, as the final report says them (the probe's included)
            display.update(
                hits + fetched,
                hits=done.cache_hits,
                requests=done.requests,
                retries=done.retries,
                final=final,
            )

        # Queries that send the same request (route aui ignores the sab) share one fetch.
        same: dict[UtsRequest, list[AtomQuery]] = {}
        for query in misses:
            same.setdefault(self.uts.same_request(umls_release, query), []).append(query)
        self._say_estimate(total, hits, len(misses), len(same))
        groups = list(same.values())
        calls = [partial(self.uts.ask_atoms, umls_release, group[0]) for group in groups]
        runs = completions(calls, workers=self.workers, cancel=self.uts.cancel, tick=self._tick)
        try:
            with closing(runs):
                report()
                for finished in runs:
                    for i, found in finished:
                        atoms = to_atoms(found)
                        for query in groups[i]:
                            answers[query] = atoms
                        fetched += len(groups[i])
                    report()
        except TempMedBenchError:
            report(final=True)
            raise
        except BaseException:
            display.close()
            raise
        report(final=True)
