"""The UMLS REST atom source: cache first, then worker threads behind one shared rate limiter.

``RestAtomSource.fetch`` answers the pipeline's atom queries (SPEC section 3) through
``CachedUts`` (``uts.cached``):

1. the probe, ``GET /content/{release}/CUI/{probe_cui}``: a 404 means the release is not served
   (outcome ``unavailable``), and for ``current`` its links name the concrete release, which every
   later request and cache key uses;
2. every query already in the cache is answered from it, without a socket (``--offline`` stops
   here: a miss is ``unavailable``); a warm rerun of the same queries reads one memo file
   instead of one entry per query, while no entry of the release has changed since and the
   package (and so its mapping of UTS atoms) is the same version;
3. the rest are fetched by ``--workers`` threads sharing the client's rate limiter, so that the
   150 ms or so a UTS answer takes does not cap throughput; each query's complete answer (every
   page) is cached as soon as it is complete, so that an interrupted run (Ctrl-C, killed) resumes
   on the next run and fetches nothing it already had.

A 401/403 in any worker, any other error that ends the run, and Ctrl-C set the client's cancel
event, which the rate limiter shares: every worker stops at once, whether it is waiting for its
turn, sleeping before a retry, or about to send (a request already on the wire still runs to its
answer or its read timeout). A progress line goes to stderr (rewritten in place on a terminal,
plain lines otherwise, nothing when quiet).
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import astuple
from typing import TextIO

import tempmedbench_synonyms
from tempmedbench_synonyms.atoms import Atom, AtomQuery, FetchResult, ProgressCallback
from tempmedbench_synonyms.config import ApiKeyMissingError
from tempmedbench_synonyms.errors import NotAuthorisedError, TempMedBenchError, UnavailableError
from tempmedbench_synonyms.progress import FetchProgress
from tempmedbench_synonyms.uts.cached import (
    DEFAULT_WORKERS,
    MAX_WORKERS,
    OFFLINE_MISS_HINT,
    CachedUts,
    RestOptions,
    build_cached_uts,
    check_workers,
    request_for,
)
from tempmedbench_synonyms.uts.models import ATOM_MAPPING, UtsAtom
from tempmedbench_synonyms.uts.ratelimit import Cancelled

log = logging.getLogger(__name__)


class RestAtomSource:
    """An ``AtomSource`` backed by the UTS REST API and the persistent cache."""

    name = "rest"

    def __init__(
        self,
        uts: CachedUts,
        *,
        workers: int = DEFAULT_WORKERS,
        progress_stream: TextIO | None = None,
        progress: ProgressCallback | None = None,
        clock: Callable[[], float] = time.monotonic,
        tick: float = 0.2,
    ) -> None:
        check_workers(workers)  # also for a source built directly, not by build_rest_source
        self.uts = uts
        self.workers = min(workers, MAX_WORKERS)
        self.progress_stream = progress_stream
        self.progress = progress
        self._clock = clock
        self._tick = tick

    def __repr__(self) -> str:
        return f"RestAtomSource(workers={self.workers}, offline={self.uts.offline})"

    def fetch(self, release: str, probe_cui: str, queries: Sequence[AtomQuery]) -> FetchResult:
        """Answer every query for ``release`` (see the module docstring)."""
        client = self.uts.client
        if client is not None:
            client.resume()  # a previous fetch may have stopped it
        requests_before = self.uts.requests_sent
        retries_before = client.stats.retries if client is not None else 0
        hits_before = self.uts.cache_hits
        unique = list(dict.fromkeys(queries))
        for query in unique:  # bad input before the first request, not after half of them
            request_for("current", query)
        try:
            concrete = self.uts.resolve_release(release, probe_cui)
            memo_name = _memo_name(concrete, unique)
            remembered = self._load_memo(concrete, memo_name, unique)
            if remembered is not None:
                self.uts.count_hits(len(unique))
                self._all_from_cache(concrete, len(unique), requests_before, retries_before)
                return FetchResult(
                    umls_release=concrete,
                    atoms={q: remembered[q] for q in queries},
                    requests=self.uts.requests_sent - requests_before,
                    cache_hits=self.uts.cache_hits - hits_before,
                )
            answers: dict[AtomQuery, tuple[Atom, ...] | None] = {}
            misses: list[AtomQuery] = []
            for query in unique:
                hit = self.uts.cached_atoms(concrete, query)
                if hit is None:
                    misses.append(query)
                else:
                    answers[query] = _to_atoms(hit.value)
            if misses and (self.uts.offline or client is None):
                shown = ", ".join(f"{q.route} {q.sab} {q.ident}" for q in sorted(misses)[:5]) + (
                    ", ..." if len(misses) > 5 else ""
                )
                rejected = self.uts.cache.rejections() if self.uts.cache is not None else []
                why = f": {rejected[0]}" if rejected else ""
                if len(rejected) > 1:
                    why += f", and {len(rejected) - 1} more entries are not trusted"
                raise UnavailableError(
                    f"--offline, and the cache lacks the atoms of {len(misses)} of "
                    f"{len(unique)} concepts of release {concrete} ({shown}){why}",
                    hint=OFFLINE_MISS_HINT,
                )
            if misses:
                assert client is not None
                if not client.has_key:
                    raise ApiKeyMissingError()
                self._fetch_all(
                    concrete,
                    misses,
                    answers,
                    total=len(unique),
                    since=(requests_before, retries_before),
                )
            else:
                self._all_from_cache(concrete, len(unique), requests_before, retries_before)
            self._save_memo(concrete, memo_name, unique, answers)
        finally:
            self.uts.close()
        requests_sent = self.uts.requests_sent - requests_before
        return FetchResult(
            umls_release=concrete,
            atoms={q: answers[q] for q in queries},
            requests=requests_sent,
            cache_hits=self.uts.cache_hits - hits_before,
        )

    def _all_from_cache(
        self, release: str, total: int, requests_before: int, retries_before: int
    ) -> None:
        """The final progress of a fetch the cache answered whole (the probe may have been sent)."""
        client = self.uts.client
        retries = (client.stats.retries if client is not None else 0) - retries_before
        FetchProgress(self.progress_stream, release=release, total=total, clock=self._clock).update(
            total, total, self.uts.requests_sent - requests_before, retries, 0, final=True
        )
        if self.progress is not None:
            self.progress(total, total)

    def _load_memo(
        self, release: str, name: str, unique: list[AtomQuery]
    ) -> dict[AtomQuery, tuple[Atom, ...] | None] | None:
        """Every answer of this exact set of queries from one memo file, if still valid."""
        cache = self.uts.cache
        if cache is None or self.uts.refresh:
            return None
        data = cache.load_memo(release, name)
        if data is None:
            return None
        if isinstance(data, dict) and data.get("version") != _memo_version():
            return None  # saved by another version, which may map atoms otherwise
        try:
            if data["queries"] != [[q.route, q.sab, q.ident] for q in unique]:
                raise ValueError("another set of queries")
            return {
                q: None if found is None else tuple(Atom(*a) for a in found)
                for q, found in zip(unique, data["atoms"], strict=True)
            }
        except (KeyError, TypeError, ValueError):
            log.warning("cache memo %s of release %s cannot be used; reading the entries",
                        name, release)  # fmt: skip
            return None

    def _save_memo(
        self,
        release: str,
        name: str,
        unique: list[AtomQuery],
        answers: dict[AtomQuery, tuple[Atom, ...] | None],
    ) -> None:
        cache = self.uts.cache
        if cache is None:
            return
        version = cache.release_version(release)  # read after the last entry was written
        if version is None:
            return
        data = {
            "version": _memo_version(),
            "queries": [[q.route, q.sab, q.ident] for q in unique],
            "atoms": [
                None if answers[q] is None else [list(astuple(a)) for a in answers[q] or ()]
                for q in unique
            ],
        }
        try:
            cache.save_memo(release, name, data, release_version=version)
        except OSError as err:  # a memo is an optimisation: never fail a run for it
            log.warning("cannot save a cache memo (%s)", err)

    def _fetch_all(
        self,
        release: str,
        misses: list[AtomQuery],
        answers: dict[AtomQuery, tuple[Atom, ...] | None],
        *,
        total: int,
        since: tuple[int, int],
    ) -> None:
        """Fetch the misses with the worker pool; progress counts requests and retries ``since``
        the fetch began (so the probe is counted, as in the final report)."""
        client = self.uts.client
        assert client is not None
        hits = total - len(misses)
        display = FetchProgress(
            self.progress_stream, release=release, total=total, clock=self._clock
        )
        requests0, retries0 = since
        fetched = 0
        error: TempMedBenchError | None = None

        def report(final: bool = False) -> None:
            requests, retries, _ = client.stats.snapshot()
            display.update(
                hits + fetched,
                hits,
                requests - requests0,
                retries - retries0,
                fetched,
                final=final,
            )
            if self.progress is not None:
                self.progress(hits + fetched, total)

        # Queries that send the same request (route aui ignores the sab) share one fetch.
        same: dict[tuple[str, tuple[tuple[str, str], ...]], list[AtomQuery]] = {}
        for query in misses:
            path, params = request_for(release, query)
            same.setdefault((path, tuple(sorted(params.items()))), []).append(query)
        pool = ThreadPoolExecutor(
            max_workers=min(self.workers, len(same)), thread_name_prefix="uts-worker"
        )
        futures: dict[Future[list[UtsAtom] | None], list[AtomQuery]] = {}
        try:
            for group in same.values():
                futures[pool.submit(self.uts.fetch_atoms, release, group[0])] = group
            pending: set[Future[list[UtsAtom] | None]] = set(futures)
            report()
            while pending and error is None:
                done, pending = wait(pending, timeout=self._tick, return_when=FIRST_COMPLETED)
                for future in done:
                    exc = future.exception()
                    if exc is None:
                        atoms = _to_atoms(future.result())
                        for query in futures[future]:
                            answers[query] = atoms
                        fetched += len(futures[future])
                    elif isinstance(exc, NotAuthorisedError):
                        error = exc  # the most telling error: stop at once
                    elif isinstance(exc, TempMedBenchError):
                        if error is None and not isinstance(exc, Cancelled):
                            error = exc
                    else:
                        raise exc
                report()
            if error is not None:
                client.cancel()
                for future in pending:
                    future.cancel()
        except BaseException:
            # Ctrl-C or a bug: stop every worker; what is complete is already cached.
            client.cancel()
            pool.shutdown(wait=True, cancel_futures=True)
            display.close()
            raise
        pool.shutdown(wait=True, cancel_futures=True)
        if error is not None:
            # A 401 in any worker beats the error seen first: it is the one the user must fix.
            for future in futures:
                if future.done() and not future.cancelled():
                    exc = future.exception()
                    if isinstance(exc, NotAuthorisedError):
                        error = exc
                        break
            report(final=True)
            raise error
        report(final=True)


def _memo_version() -> str:
    """What a memo depends on besides the entries: the package and its mapping of UTS atoms
    (a memo holds ``Atom`` values already mapped by ``UtsAtom.to_atom``)."""
    return f"{tempmedbench_synonyms.__version__}+atoms{ATOM_MAPPING}"


def _memo_name(release: str, unique: Sequence[AtomQuery]) -> str:
    """The memo of one run: the package version, its concrete release and its queries, in order.

    With the version in the name, two installed versions sharing a cache keep a memo each
    instead of overwriting one another's (the version is in the content too, and checked).
    """
    text = json.dumps(
        [_memo_version(), release, [[q.route, q.sab, q.ident] for q in unique]],
        ensure_ascii=False,
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _to_atoms(found: list[UtsAtom] | None) -> tuple[Atom, ...] | None:
    if found is None:
        return None
    return tuple(a.to_atom() for a in found)


def build_rest_source(options: RestOptions, *, progress_stream: TextIO | None) -> RestAtomSource:
    """The REST atom source the CLI uses when ``--mrconso`` is not given.

    The options are checked by ``build_cached_uts``; progress goes to ``progress_stream``, or
    nowhere if it is ``None`` (``--quiet``).
    """
    return RestAtomSource(
        build_cached_uts(options), workers=options.workers, progress_stream=progress_stream
    )
