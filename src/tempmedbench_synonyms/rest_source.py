"""The UMLS REST atom source: cache first, then worker threads behind one shared rate limiter.

``RestAtomSource.fetch`` answers the pipeline's atom queries (SPEC section 3):

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

Every identifier is checked before anything is sent (``request_for``): one that an HTTP client
would rewrite (``.``, ``..``), an empty one, or one with a control character is bad input.

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
import sys
import threading
import time
import unicodedata
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import astuple
from pathlib import Path
from typing import Any, Literal, TextIO
from urllib.parse import quote

from pydantic import TypeAdapter, ValidationError

import tempmedbench_synonyms
from tempmedbench_synonyms.atoms import Atom, AtomQuery, FetchResult, ProgressCallback
from tempmedbench_synonyms.cache import CURRENT_MAX_AGE, CacheKey, ResponseCache, check_release
from tempmedbench_synonyms.client import PAGE_SIZE, RetryPolicy, Timeouts, UtsClient
from tempmedbench_synonyms.config import ApiKeyMissingError, read_api_key, redact, resolve_cache_dir
from tempmedbench_synonyms.errors import (
    BadInputError,
    NotAuthorisedError,
    TempMedBenchError,
    UnavailableError,
)
from tempmedbench_synonyms.ratelimit import Cancelled, RateLimiter, check_rate
from tempmedbench_synonyms.uts_models import ATOM_MAPPING, UtsAtom, UtsConcept, release_of

log = logging.getLogger(__name__)

#: SPEC section 7: ``--workers`` defaults to 8 concurrent requests.
DEFAULT_WORKERS = 8
#: More threads than this only queue behind the rate limiter (20 req/s x a slow 3 s answer).
MAX_WORKERS = 64
#: SPEC section 3: the parameters of every atoms request.
ATOMS_PARAMS: dict[str, str] = {
    "language": "ENG",
    "includeObsolete": "false",
    "includeSuppressible": "false",
    "pageSize": str(PAGE_SIZE),
}

_ATOMS = TypeAdapter(list[UtsAtom])


#: What each route's identifier is called in the table (for messages).
_IDENT_FIELD = {"source": "code", "cui": "cui", "aui": "aui"}


def _segment(value: str, route: str, field: str) -> str:
    """``value`` path-encoded as one URL path segment, or BadInputError if it cannot be one.

    requests and urllib3 remove the dot-segments ``.`` and ``..`` from a path (RFC 3986,
    section 5.2.4), whatever their percent-encoding, so such an identifier would ask UMLS for
    another resource than SPEC section 3 names, under a cache key of its own.
    """
    problem = None
    if not value:
        problem = "it is empty"
    elif set(value) == {"."}:
        problem = (
            "it is made only of dots, which HTTP clients remove from a URL path (RFC 3986, "
            "section 5.2.4), so another resource would be asked for"
        )
    else:
        control = next((c for c in value if unicodedata.category(c) == "Cc"), None)
        if control is not None:
            problem = f"it contains the control character U+{ord(control):04X}"
    if problem is None:
        return quote(value, safe="")
    raise BadInputError(
        f"route {route}: {field} {value!r} cannot be sent to UMLS: {problem}",
        hint=f'check the {field}: in a release, it is the concept\'s "{field}" in '
        "synonyms/synonym_table_kept.json",
    )


def request_for(release: str, query: AtomQuery) -> tuple[str, dict[str, str]]:
    """The path and query parameters of one atom query (SPEC section 3's table).

    BadInputError if an identifier cannot be sent as it is (see ``_segment``).
    """
    rel = quote(release, safe="")
    if query.route not in _IDENT_FIELD:
        raise BadInputError(f"unknown route {query.route!r}")
    ident = _segment(query.ident, query.route, _IDENT_FIELD[query.route])
    if query.route == "source":
        sab = _segment(query.sab, query.route, "sab")
        return f"/content/{rel}/source/{sab}/{ident}/atoms", dict(ATOMS_PARAMS)
    if query.route == "cui":
        return f"/content/{rel}/CUI/{ident}/atoms", {**ATOMS_PARAMS, "sabs": query.sab}
    return f"/content/{rel}/AUI/{ident}", {}


def check_workers(workers: int) -> int:
    """``workers`` if it is at least 1, else BadInputError."""
    if workers < 1:
        raise BadInputError(
            f"--workers {workers} is out of range: it must be at least 1",
            key="--workers",
            hint=f"the default is {DEFAULT_WORKERS} concurrent requests; more than "
            f"{MAX_WORKERS} only queue behind the rate limiter",
        )
    return workers


Kind = Literal["concept", "atom", "atoms"]
Build = Callable[[str], tuple[str, dict[str, str]]]
"""Given a release, the path and parameters of a request."""


def _concept_request(cui: str) -> Build:
    segment = _segment(cui, "cui", "cui")
    return lambda rel: (f"/content/{quote(rel, safe='')}/CUI/{segment}", {})


def _query_request(query: AtomQuery) -> Build:
    return lambda rel: request_for(rel, query)


def _kind_of(query: AtomQuery) -> Kind:
    return "atom" if query.route == "aui" else "atoms"


class _Miss:
    """Sentinel: the cache does not hold this answer."""


MISS = _Miss()


def _parse(kind: Kind, result: Any) -> Any:
    """A stored or fetched ``result`` as models: a concept, or a list of atoms."""
    if kind == "concept":
        return UtsConcept.model_validate(result)
    if kind == "atom":
        return [UtsAtom.model_validate(result)]
    return _ATOMS.validate_python(result)


def _dump(kind: Kind, found: Any) -> Any:
    """What is stored for an answer: the models dumped with UTS's field names."""
    if kind == "concept":
        return found.model_dump(mode="json", by_alias=True)
    if kind == "atom":
        return found[0].model_dump(mode="json", by_alias=True)
    return [a.model_dump(mode="json", by_alias=True) for a in found]


def _release_in(kind: Kind, found: Any, base_url: str) -> str | None:
    """The concrete release named by an answer's links (how ``current`` is learnt)."""
    if found is None:
        return None
    if kind == "concept":
        rel: str | None = found.release_at(base_url)
        return rel
    for atom in found:
        rel = release_of(atom.concept, base_url)
        if rel:
            return rel
    return None


def _when(stored_at: float) -> str:
    """A cache entry's time of writing, for messages: ``2023-11-14 22:13 UTC``."""
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(stored_at))


class CachedUts:
    """The UTS client behind the response cache: every answer is looked up first, stored whole.

    Used by the atom source and by the ``umls`` commands alike. ``client`` may be ``None`` for an
    offline use that never needs the network. Answers are models: a ``UtsConcept``, or a list of
    ``UtsAtom`` (one atom for route ``aui``), or ``None`` for "not found" (404).
    """

    def __init__(
        self,
        client: UtsClient | None,
        cache: ResponseCache | None,
        *,
        offline: bool = False,
        refresh: bool = False,
        current_max_age: float = CURRENT_MAX_AGE,
    ) -> None:
        if client is None and not offline:
            raise ValueError("an online CachedUts needs a client")
        self.client = client
        self.cache = cache
        self.offline = offline
        self.refresh = refresh
        self.current_max_age = current_max_age
        self._lock = threading.Lock()
        self.cache_hits = 0

    def count_hits(self, n: int) -> None:
        """Count ``n`` answers given from the cache (thread-safe)."""
        with self._lock:
            self.cache_hits += n

    def _need_client(self, what: str) -> UtsClient:
        if self.offline or self.client is None:
            raise UnavailableError(
                f"--offline, and the cache does not hold {what}",
                hint="run once without --offline to fill the cache, or give --mrconso PATH",
            )
        return self.client

    def _known_current(self) -> str | None:
        """What ``current`` stood for when last learnt: within a day, or ever when offline."""
        if self.cache is None or self.refresh:
            return None
        return self.cache.current_release(
            max_age=float("inf") if self.offline else self.current_max_age
        )

    # -- one answer ----------------------------------------------------------------------------

    def cached(self, release: str, kind: Kind, build: Build) -> Any:
        """The answer from the cache only, or ``MISS``. Counts a cache hit."""
        return self._cached_entry(release, kind, build)[0]

    def _cached_entry(self, release: str, kind: Kind, build: Build) -> tuple[Any, float | None]:
        """(answer or ``MISS``, when it was stored, or ``None`` on a miss). Counts a hit."""
        if self.cache is None or self.refresh:
            return MISS, None
        path, params = build(release)
        key = CacheKey.make(release, path, params)
        entry = self.cache.get(key)
        if entry is None:
            return MISS, None
        found: Any = None
        if entry.found:
            try:
                found = _parse(kind, entry.result)
            except (ValidationError, TypeError, ValueError):
                log.warning(
                    "cache entry for %s holds something this version cannot read; "
                    "fetching it again",
                    key.describe(),
                )
                return MISS, None
        self.count_hits(1)
        return found, entry.stored_at

    def fetch(self, release: str, kind: Kind, build: Build) -> Any:
        """The answer from UMLS (every page), cached as soon as it is complete."""
        path, params = build(release)
        client = self._need_client(
            f"the answer to {CacheKey.make(release, path, params).describe()}"
        )
        found = self._fetch(client, kind, path, params)
        self._store(release, kind, build, found)
        return found

    @staticmethod
    def _fetch(client: UtsClient, kind: Kind, path: str, params: dict[str, str]) -> Any:
        if kind == "atoms":
            items = client.get_list(path, params)
        else:
            items = client.get_result(path, params)
        if items is None:
            return None
        try:
            return _parse(kind, items)
        except ValidationError as err:
            fields = ", ".join(".".join(str(p) for p in e["loc"]) for e in err.errors())
            raise UnavailableError(
                f"UMLS sent {'a concept' if kind == 'concept' else 'atoms'} this tool cannot "
                f"read (problem with: {fields or kind})",
                hint="the UTS response format may have changed; please report it",
            ) from None

    def _store(self, release: str, kind: Kind, build: Build, found: Any) -> None:
        if self.cache is None:
            return
        path, params = build(release)
        key = CacheKey.make(release, path, params)
        try:
            if found is None:
                self.cache.put(key, 404, None)
            else:
                self.cache.put(key, 200, _dump(kind, found))
        except OSError as err:
            # Without the cache a run cannot resume, and a rerun would fetch it all again.
            raise BadInputError(
                f"cannot write to the cache folder: {err.strerror or err}",
                path=self.cache.folder,
                hint="give a writable folder with --cache-dir or TEMPMEDBENCH_CACHE_DIR",
            ) from None

    def answer(self, release: str, kind: Kind, build: Build) -> tuple[str, Any]:
        """(concrete release, answer) from the cache, else UMLS.

        For ``current`` with no resolution remembered, the request is sent for ``current`` and
        the concrete release is read from the answer's links; the answer is then stored under
        the concrete release (a "not found" for ``current`` is not stored: it names no release).
        """
        concrete, found, _ = self._answer(release, kind, build)
        return concrete, found

    def _answer(self, release: str, kind: Kind, build: Build) -> tuple[str, Any, float | None]:
        """``answer``, and when the answer was stored if it came from the cache."""
        check_release(release)
        if release == "current":
            known = self._known_current()
            if known is None:
                client = self._need_client("which concrete release 'current' is")
                path, params = build("current")
                found = self._fetch(client, kind, path, params)
                concrete = _release_in(kind, found, client.base_url)
                if concrete is None or concrete == "current":
                    return "current", found, None
                check_release(concrete)
                if self.cache is not None:
                    self.cache.set_current_release(concrete)
                self._store(concrete, kind, build, found)
                log.info("release 'current' is %s", concrete)
                return concrete, found, None
            release = known
        found, stored_at = self._cached_entry(release, kind, build)
        if found is MISS:
            return release, self.fetch(release, kind, build), None
        return release, found, stored_at

    # -- what the source and the CLI ask ---------------------------------------------------------

    def resolve_release(self, release: str, probe_cui: str) -> str:
        """The concrete release to use; UnavailableError if UMLS does not serve it.

        SPEC section 3: ``current`` is resolved once, from the version segment of the links of
        the probe concept, before any cache key is made. The resolution is remembered for a day
        (``cache.CURRENT_MAX_AGE``), so that a warm rerun sends nothing while ``current`` still
        follows a new UMLS release; ``--refresh`` asks again, ``--offline`` uses whatever the
        cache last learnt.
        """
        concrete, concept, stored_at = self._answer(release, "concept", _concept_request(probe_cui))
        if concept is None:
            raise self._not_served(release, probe_cui, stored_at)
        if concrete == "current":
            raise UnavailableError(
                f"UMLS did not say which release 'current' is: the links of concept "
                f"{probe_cui} name no version",
                hint="give a concrete release with --umls-release, such as 2025AB",
            )
        return concrete

    def _not_served(
        self, release: str, probe_cui: str, stored_at: float | None
    ) -> UnavailableError:
        if self.client is not None:
            base = redact(self.client.base_url)
        else:
            base = redact(self.cache.base_url) if self.cache is not None else "the cache"
        check = (
            "check the table's umls_release or --umls-release; UTS serves only some "
            "releases (see https://documentation.uts.nlm.nih.gov/rest/home.html), and a "
            "local MRCONSO.RRF of that release works with --mrconso PATH"
        )
        if stored_at is None:
            return UnavailableError(
                f"UMLS release {release} is not served at {base}: its probe concept {probe_cui} "
                "answered 404 Not Found",
                hint=check,
            )
        instead = " instead of --offline" if self.offline else ""
        return UnavailableError(
            f"UMLS release {release} is not served at {base}, as the cache says: its probe "
            f"concept {probe_cui} answered 404 Not Found when asked on {_when(stored_at)}",
            hint=f"that answer may be out of date: run again with --refresh{instead} to ask "
            f"UMLS again; if it still answers 404, {check}",
        )

    def concept(self, release: str, cui: str) -> tuple[str, UtsConcept | None]:
        """(concrete release, concept or ``None``) for ``umls concept``."""
        rel, found = self.answer(release, "concept", _concept_request(cui))
        return rel, found

    def atoms(self, release: str, query: AtomQuery) -> tuple[str, list[UtsAtom] | None]:
        """(concrete release, atoms or ``None``) of one atom query."""
        rel, found = self.answer(release, _kind_of(query), _query_request(query))
        return rel, found

    def concept_atoms(self, release: str, cui: str) -> tuple[str, list[UtsAtom] | None]:
        """(concrete release, atoms or ``None``) of a concept, every source (``umls atoms``)."""
        segment = _segment(cui, "cui", "cui")

        def build(rel: str) -> tuple[str, dict[str, str]]:
            return f"/content/{quote(rel, safe='')}/CUI/{segment}/atoms", dict(ATOMS_PARAMS)

        rel, found = self.answer(release, "atoms", build)
        return rel, found

    def cached_atoms(self, release: str, query: AtomQuery) -> list[UtsAtom] | _Miss | None:
        """The query's atoms from the cache only (``MISS`` if it does not hold them)."""
        found: list[UtsAtom] | _Miss | None = self.cached(
            release, _kind_of(query), _query_request(query)
        )
        return found

    def fetch_atoms(self, release: str, query: AtomQuery) -> list[UtsAtom] | None:
        """The query's atoms from UMLS, cached as soon as they are complete."""
        found: list[UtsAtom] | None = self.fetch(release, _kind_of(query), _query_request(query))
        return found


class FetchProgress:
    """The fetch's progress on stderr: one line rewritten in place on a terminal, plain lines
    every few seconds otherwise, nothing when ``stream`` is ``None`` (quiet)."""

    def __init__(
        self,
        stream: TextIO | None,
        *,
        release: str,
        total: int,
        is_tty: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
        plain_interval: float = 5.0,
        tty_interval: float = 0.1,
    ) -> None:
        self.stream = stream
        self.release = release
        self.total = total
        self._clock = clock
        if is_tty is None:
            isatty = getattr(stream, "isatty", None)
            is_tty = bool(isatty()) if callable(isatty) else False
        self.is_tty = is_tty
        self._interval = tty_interval if is_tty else plain_interval
        self._start = clock()
        self._last = float("-inf")
        self._width = 0
        self.lines: list[str] = []

    def line(self, done: int, hits: int, requests: int, retries: int, fetched: int) -> str:
        """The progress line: concepts done of total, cache hits, requests, retries, rate, ETA.

        The rate and the time left are shown once a second has passed (before, they are noise).
        """
        elapsed = max(1e-9, self._clock() - self._start)
        parts = [
            f"UMLS {self.release}: {done}/{self.total} concepts",
            f"{hits} from cache",
            f"{requests} request{'' if requests == 1 else 's'}"
            + (f" ({retries} retried)" if retries else ""),
        ]
        if elapsed >= 1.0:
            parts.append(f"{requests / elapsed:.1f} req/s")
        remaining = self.total - done
        if remaining and fetched and elapsed >= 1.0:
            parts.append(f"about {_duration(remaining * elapsed / fetched)} left")
        elif not remaining:
            parts.append(f"done in {_duration(elapsed)}")
        return ", ".join(parts)

    def update(
        self,
        done: int,
        hits: int,
        requests: int,
        retries: int,
        fetched: int,
        *,
        final: bool = False,
    ) -> None:
        """Show the line if ``final`` or if the last one is old enough."""
        if self.stream is None:
            return
        now = self._clock()
        if not final and now - self._last < self._interval:
            return
        self._last = now
        text = self.line(done, hits, requests, retries, fetched)
        self.lines.append(text)
        if self.is_tty:
            pad = " " * max(0, self._width - len(text))
            self.stream.write("\r" + text + pad + ("\n" if final else ""))
            self._width = 0 if final else len(text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        """End a line left open on a terminal (an interrupted fetch), so the next text is clean."""
        if self.stream is not None and self.is_tty and self._width:
            self.stream.write("\n")
            self.stream.flush()
            self._width = 0


def _duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, secs = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


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
        check_workers(workers)
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
        requests_before = client.stats.requests if client else 0
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
                FetchProgress(
                    self.progress_stream, release=concrete, total=len(unique), clock=self._clock
                ).update(len(unique), len(unique), 0, 0, 0, final=True)
                if self.progress is not None:
                    self.progress(len(unique), len(unique))
                return FetchResult(
                    umls_release=concrete,
                    atoms={q: remembered[q] for q in queries},
                    requests=(client.stats.requests if client else 0) - requests_before,
                    cache_hits=self.uts.cache_hits - hits_before,
                )
            answers: dict[AtomQuery, tuple[Atom, ...] | None] = {}
            misses: list[AtomQuery] = []
            for query in unique:
                cached = self.uts.cached_atoms(concrete, query)
                if isinstance(cached, _Miss):
                    misses.append(query)
                else:
                    answers[query] = _to_atoms(cached)
            if misses and (self.uts.offline or client is None):
                shown = ", ".join(f"{q.route} {q.sab} {q.ident}" for q in sorted(misses)[:5]) + (
                    ", ..." if len(misses) > 5 else ""
                )
                raise UnavailableError(
                    f"--offline, and the cache lacks the atoms of {len(misses)} of "
                    f"{len(unique)} concepts of release {concrete} ({shown})",
                    hint="run once without --offline to fill the cache, or give --mrconso PATH",
                )
            if misses:
                assert client is not None
                if not client.has_key:
                    raise ApiKeyMissingError()
                self._fetch_all(concrete, misses, answers, total=len(unique))
                self._save_memo(concrete, memo_name, unique, answers)
            else:
                self._save_memo(concrete, memo_name, unique, answers)
                FetchProgress(
                    self.progress_stream, release=concrete, total=len(unique), clock=self._clock
                ).update(len(unique), len(unique), 0, 0, 0, final=True)
                if self.progress is not None:
                    self.progress(len(unique), len(unique))
        finally:
            if client is not None:
                client.close()
        requests_sent = (client.stats.requests if client else 0) - requests_before
        return FetchResult(
            umls_release=concrete,
            atoms={q: answers[q] for q in queries},
            requests=requests_sent,
            cache_hits=self.uts.cache_hits - hits_before,
        )

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
    ) -> None:
        client = self.uts.client
        assert client is not None
        hits = total - len(misses)
        display = FetchProgress(
            self.progress_stream, release=release, total=total, clock=self._clock
        )
        requests0, retries0, _ = client.stats.snapshot()
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


def build_cached_uts(
    *,
    base_url: str,
    api_key_file: Path | None,
    cache_dir: Path | None,
    offline: bool,
    refresh: bool,
    rate: float,
    workers: int = 1,
) -> CachedUts:
    """The cached UTS client the source and the ``umls`` commands share (options checked here).

    The key comes from ``--api-key-file`` or ``UMLS_API_KEY``; a missing key is not an error
    until the network is needed (a fully cached or ``--offline`` run needs none), and then it is
    ``ApiKeyMissingError``, exit 3. ``rate`` outside (0, 20] and ``workers`` < 1 are bad input
    (checked here, not in the CLI: they mean nothing to a ``--mrconso`` run).

    The client and its rate limiter share one cancel event: cancelling the client (a 401, an
    error that ends the run, Ctrl-C) also wakes every thread waiting for the limiter.
    """
    rate = check_rate(rate)
    check_workers(workers)
    if offline and refresh:
        raise BadInputError(
            "--offline and --refresh contradict each other: --refresh fetches again, "
            "--offline never fetches",
            key="--refresh",
        )
    key = read_api_key(api_key_file)
    cache = ResponseCache(resolve_cache_dir(cache_dir), base_url)
    client = None
    if not offline:
        cancel = threading.Event()
        client = UtsClient(
            base_url=base_url,
            api_key=key,
            limiter=RateLimiter(rate, cancel=cancel),
            timeouts=Timeouts(),
            retry=RetryPolicy(),
            pool_size=min(workers, MAX_WORKERS),
            cancel=cancel,
        )
    return CachedUts(client, cache, offline=offline, refresh=refresh)


def build_rest_source(
    *,
    base_url: str,
    api_key_file: Path | None,
    cache_dir: Path | None,
    offline: bool,
    refresh: bool,
    rate: float,
    workers: int,
    verbosity: int,
    progress_stream: TextIO | None = None,
) -> RestAtomSource:
    """The REST atom source the CLI uses when ``--mrconso`` is not given (see build_cached_uts).

    Progress goes to ``progress_stream`` (default stderr) unless ``verbosity`` < 0 (``-q``).
    """
    uts = build_cached_uts(
        base_url=base_url,
        api_key_file=api_key_file,
        cache_dir=cache_dir,
        offline=offline,
        refresh=refresh,
        rate=rate,
        workers=workers,
    )
    stream = progress_stream if progress_stream is not None else sys.stderr
    return RestAtomSource(uts, workers=workers, progress_stream=stream if verbosity >= 0 else None)
