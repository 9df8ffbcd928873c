"""The UTS client behind the response cache, and the options that build it.

``CachedUts`` answers one request at a time (a concept, an atom, a list of atoms) from the
response cache, else from UMLS, and stores every complete answer at once; ``current`` is resolved
to a concrete release before any cache key is made (SPEC section 3). ``RestAtomSource``
(``uts.source``) runs many of these answers in parallel for a regeneration; the ``umls``
commands ask for one each.

Every identifier is checked before anything is sent (``request_for``): one that an HTTP client
would rewrite (``.``, ``..``), an empty one, or one with a control character is bad input.

``RestOptions`` holds the network options of the CLI (``--base-url``, ``--rate``, ...);
``build_cached_uts`` checks them once and turns them into a client, a rate limiter and a cache.
``--workers`` is among them because the client's connection pool is sized for the workers that
``uts.source`` runs (which imports this module, so the worker limits are defined here).
"""

from __future__ import annotations

import logging
import threading
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar
from urllib.parse import quote

from pydantic import TypeAdapter, ValidationError

from tempmedbench_synonyms.atoms import AtomQuery
from tempmedbench_synonyms.config import (
    DEFAULT_BASE_URL,
    check_base_url,
    read_api_key,
    redact,
    resolve_cache_dir,
)
from tempmedbench_synonyms.errors import BadInputError, UnavailableError
from tempmedbench_synonyms.uts.cache import CURRENT_MAX_AGE, CacheKey, ResponseCache, check_release
from tempmedbench_synonyms.uts.client import (
    PAGE_SIZE,
    RetryPolicy,
    Timeouts,
    UtsClient,
    parse_model,
)
from tempmedbench_synonyms.uts.models import UtsAtom, UtsConcept, release_of
from tempmedbench_synonyms.uts.ratelimit import (
    DEFAULT_RATE,
    RateLimiter,
    check_rate,
    shared_state_path,
)

log = logging.getLogger(__name__)

#: SPEC section 7: ``--workers`` defaults to 8 concurrent requests.
DEFAULT_WORKERS = 8
#: More threads than this only queue behind the rate limiter (20 req/s x a slow 3 s answer).
MAX_WORKERS = 64
#: What to do when ``--offline`` meets an answer the cache does not hold.
OFFLINE_MISS_HINT = (
    "run once without --offline to fill the cache (a regeneration can also read a local "
    "MRCONSO.RRF with --mrconso PATH)"
)
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


_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class Hit(Generic[_T]):
    """An answer the cache holds: ``value`` (``None`` for a stored 404) and when it was stored.

    A lookup returns ``Hit | None``, so that a miss (``None``) cannot be mistaken for a cached
    "not found" (``Hit(None, ...)``).
    """

    value: _T
    stored_at: float


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

    @property
    def requests_sent(self) -> int:
        """Requests sent to UMLS so far (retries included); 0 offline."""
        return self.client.stats.requests if self.client is not None else 0

    def close(self) -> None:
        """Close the client's connections (it reopens them if asked again)."""
        if self.client is not None:
            self.client.close()

    def count_hits(self, n: int) -> None:
        """Count ``n`` answers given from the cache (thread-safe)."""
        with self._lock:
            self.cache_hits += n

    def _need_client(self, what: str) -> UtsClient:
        if self.offline or self.client is None:
            raise UnavailableError(
                f"--offline, and the cache does not hold {what}",
                hint=OFFLINE_MISS_HINT,
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

    def _cached(self, release: str, kind: Kind, build: Build) -> Hit[Any] | None:
        """The answer from the cache only, or ``None`` on a miss. Counts a cache hit."""
        if self.cache is None or self.refresh:
            return None
        path, params = build(release)
        key = CacheKey.make(release, path, params)
        entry = self.cache.get(key)
        if entry is None:
            return None
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
                return None
        self.count_hits(1)
        return Hit(found, entry.stored_at)

    def _fetch_and_store(self, release: str, kind: Kind, build: Build) -> Any:
        """The answer from UMLS (every page), cached as soon as it is complete."""
        path, params = build(release)
        key = CacheKey.make(release, path, params)
        rejected = self.cache.rejection(key) if self.cache is not None else None
        client = self._need_client(
            f"the answer to {key.describe()}" + (f": {rejected}" if rejected else "")
        )
        found = self._fetch(client, kind, path, params)
        self._store(release, kind, build, found)
        return found

    @staticmethod
    def _fetch(client: UtsClient, kind: Kind, path: str, params: dict[str, str]) -> Any:
        """The answer from UMLS as models, read by the client's own parser (``parse_model``)."""
        if kind == "atoms":
            return client.get_atoms(path, params)
        result = client.get_result(path, params)
        if result is None:
            return None
        if kind == "concept":
            return parse_model(UtsConcept, result, "concept")
        return [parse_model(UtsAtom, result, "atom")]

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

    def _answer(self, release: str, kind: Kind, build: Build) -> tuple[str, Any, float | None]:
        """(concrete release, answer, when it was stored if it came from the cache), from the
        cache, else UMLS.

        For ``current`` with no resolution remembered, the request is sent for ``current`` and
        the concrete release is read from the answer's links; the answer is then stored under
        the concrete release (a "not found" for ``current`` is not stored: it names no release).
        """
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
        hit = self._cached(release, kind, build)
        if hit is None:
            return release, self._fetch_and_store(release, kind, build), None
        return release, hit.value, hit.stored_at

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
            "regeneration can read a local MRCONSO.RRF of that release with --mrconso PATH"
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
        rel, found, _ = self._answer(release, "concept", _concept_request(cui))
        return rel, found

    def atoms(self, release: str, query: AtomQuery) -> tuple[str, list[UtsAtom] | None]:
        """(concrete release, atoms or ``None``) of one atom query."""
        rel, found, _ = self._answer(release, _kind_of(query), _query_request(query))
        return rel, found

    def concept_atoms(self, release: str, cui: str) -> tuple[str, list[UtsAtom] | None]:
        """(concrete release, atoms or ``None``) of a concept, every source (``umls atoms``)."""
        segment = _segment(cui, "cui", "cui")

        def build(rel: str) -> tuple[str, dict[str, str]]:
            return f"/content/{quote(rel, safe='')}/CUI/{segment}/atoms", dict(ATOMS_PARAMS)

        rel, found, _ = self._answer(release, "atoms", build)
        return rel, found

    def cached_atoms(self, release: str, query: AtomQuery) -> Hit[list[UtsAtom] | None] | None:
        """The query's atoms from the cache only (``None`` if it does not hold them)."""
        hit: Hit[list[UtsAtom] | None] | None = self._cached(
            release, _kind_of(query), _query_request(query)
        )
        return hit

    def fetch_atoms(self, release: str, query: AtomQuery) -> list[UtsAtom] | None:
        """The query's atoms from UMLS, cached as soon as they are complete."""
        found: list[UtsAtom] | None = self._fetch_and_store(
            release, _kind_of(query), _query_request(query)
        )
        return found


@dataclass(frozen=True, slots=True)
class RestOptions:
    """The network options of a REST run, as the CLI took them; ``check`` validates them.

    They are checked when a client is built (``build_cached_uts``), not when the CLI parses them:
    ``--rate`` or ``--workers`` mean nothing to a ``--mrconso`` run, which must not fail on them.
    """

    base_url: str = DEFAULT_BASE_URL
    api_key_file: Path | None = None
    cache_dir: Path | None = None
    offline: bool = False
    refresh: bool = False
    rate: float = DEFAULT_RATE
    workers: int = DEFAULT_WORKERS

    def check(self) -> None:
        """BadInputError naming the option if a value is out of range or two contradict."""
        check_base_url(self.base_url)
        check_rate(self.rate)
        check_workers(self.workers)
        if self.offline and self.refresh:
            raise BadInputError(
                "--offline and --refresh contradict each other: --refresh fetches again, "
                "--offline never fetches",
                key="--offline",
                hint="drop one of them",
            )


def build_cached_uts(options: RestOptions) -> CachedUts:
    """The cached UTS client the atom source and the ``umls`` commands share.

    The options are checked first (``RestOptions.check``). The key comes from ``--api-key-file``
    or ``UMLS_API_KEY``; a missing key is not an error until the network is needed (a fully
    cached or ``--offline`` run needs none), and then it is ``ApiKeyMissingError``, exit 3.

    The client and its rate limiter share one cancel event: cancelling the client (a 401, an
    error that ends the run, Ctrl-C) also wakes every thread waiting for the limiter.
    """
    options.check()
    key = read_api_key(options.api_key_file)
    cache = ResponseCache(resolve_cache_dir(options.cache_dir), options.base_url)
    client = None
    if not options.offline:
        cancel = threading.Event()
        client = UtsClient(
            base_url=options.base_url,
            api_key=key,
            limiter=RateLimiter(
                float(options.rate),
                cancel=cancel,
                shared_state=shared_state_path(options.base_url),  # one budget per machine
            ),
            timeouts=Timeouts(),
            retry=RetryPolicy(),
            pool_size=min(options.workers, MAX_WORKERS),
            cancel=cancel,
        )
    return CachedUts(client, cache, offline=options.offline, refresh=options.refresh)
