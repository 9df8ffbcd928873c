"""The UTS client behind the response cache: one answer at a time, the release gate, a run's
memo (docs/architecture.md, "UTS is asked one way"; docs/reference.md, "The cache").
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import astuple, dataclass
from functools import partial
from typing import Any

from tempmedbench_synonyms import constants, paths
from tempmedbench_synonyms.atoms import Atom, AtomQuery, is_release
from tempmedbench_synonyms.errors import NotAuthorisedError, UnavailableError
from tempmedbench_synonyms.lookups import DEFAULT_LIMIT
from tempmedbench_synonyms.paths import Build, UtsRequest
from tempmedbench_synonyms.secret import missing_key, redact
from tempmedbench_synonyms.uts.cache import CURRENT_MAX_AGE, CacheEntry, CacheKey, ResponseCache
from tempmedbench_synonyms.uts.client import (
    BASE_URL_HINT,
    BadRequestError,
    Counters,
    UtsClient,
    parse_model,
)
from tempmedbench_synonyms.uts.models import (
    ATOM_MAPPING,
    UtsAtom,
    UtsConcept,
    release_in,
    release_of,
)

log = logging.getLogger(__name__)

#: Atoms per query, ``None`` where UMLS said "not found".
Answers = dict[AtomQuery, tuple[Atom, ...] | None]


def _parse(request: UtsRequest, result: Any) -> Any:
    """A found answer, fresh or stored, as models (a concept, a list of atoms), or for SPEC 11's
    kinds as stored; UnavailableError, TypeError or ValueError if it is not of that shape."""
    kind = request.kind
    if kind == "concept":
        return parse_model(UtsConcept, result, "concept")
    if kind in ("atom", "atoms"):  # an atom: a list of one
        atoms = result if kind == "atoms" else [result]
        if not isinstance(atoms, list):
            raise TypeError("not a list of atoms")
        return [parse_model(UtsAtom, atom, "atom") for atom in atoms]
    if kind == "object":
        if not isinstance(result, dict):
            raise TypeError("not an object")
        return result
    items = result.get("items") if isinstance(result, dict) else None
    if not isinstance(items, list) or not isinstance(result.get("truncated"), bool):
        raise TypeError("not a list of results")
    if not all(isinstance(item, dict) for item in items):
        raise UnavailableError(
            f"UMLS sent a list item this tool cannot read (not an object) for {request.path}",
            hint="the UTS response format may have changed; please report it",
        )
    return result


def _release_in(request: UtsRequest, stored: Any, base_url: str) -> str | None:
    """The concrete release named by an answer's links (how ``current`` is learnt)."""
    if stored is None or request.kind not in ("concept", "atom", "atoms"):
        return release_in(stored, base_url)  # (a 404, None, names no release)
    if request.kind == "concept":
        concept = _parse(request, stored)
        names = ("atoms", "default_preferred_atom", "relations", "definitions")  # in this order
        links = [getattr(concept, name) for name in names]
    else:
        links = [atom.concept for atom in _parse(request, stored)]
    return next(filter(None, (release_of(link, base_url) for link in links)), None)


def _key(umls_release: str, request: UtsRequest) -> CacheKey:
    """The cache key of ``request``'s answer: a list's or a search's holds its limit."""
    params = request.param_dict
    if request.kind in ("list", "search"):
        params["limit"] = str(request.limit)
    return CacheKey.make(umls_release, request.path, params)


def _got(request: UtsRequest, umls_release: str, found: Any) -> Got:
    if found is not None and request.kind in ("list", "search"):
        return Got(umls_release, found["items"], found["truncated"])
    return Got(umls_release, found)


@dataclass(frozen=True, slots=True)
class Got:
    """What UMLS (or the cache) answered one SPEC 11 request: the concrete ``release``, the
    JSON UTS sent (``None`` for a 404), and whether a limit ``truncated`` it."""

    release: str
    value: Any
    truncated: bool = False


class CachedUts:
    """The UTS client behind the response cache (``client`` ``None``: offline)."""

    def __init__(
        self, client: UtsClient | None, cache: ResponseCache | None, *, refresh: bool = False
    ) -> None:
        self.client = client
        self.cache = cache
        self.offline = client is None
        self.refresh = refresh
        self._lock = threading.Lock()
        #: held while a 404 is checked (``check_served``): other workers wait for its verdict
        self._check_lock = threading.Lock()
        #: releases UMLS has shown it serves (the probe or ``/metadata`` answered)
        self._served: set[str] = set()
        #: ``current``'s checked 404s since ``resume`` (never stored: they name no release), so a
        #: lookup that is its own probe (``umls concept``) is not sent twice
        self._current_404: set[CacheKey] = set()
        #: the client's counters, the cache hits among them
        self.stats = client.stats if client is not None else Counters()
        #: entries this version could not read, warned of once
        self._unreadable: set[CacheKey] = set()
        #: False: nothing is written to the cache (``--dry-run`` and ``doctor``)
        self.store = True

    def __repr__(self) -> str:
        return f"CachedUts(offline={self.offline}, refresh={self.refresh})"

    @property
    def rate(self) -> float | None:
        """The configured requests a second (``--rate``); ``None`` offline."""
        return self.client.limiter.rate if self.client is not None else None

    def warnings(self) -> list[str]:
        """Why the runs on this machine do not share this run's rate budget, if they do not."""
        said = None if self.client is None else self.client.limiter.fallback_warning
        return [] if said is None else [said]

    def counters(self) -> Counters:
        """Requests, retries and cache hits so far, read together."""
        return self.stats.snapshot()

    def resume(self) -> None:
        """Undo a ``cancel`` before a new fetch, and forget ``current``'s 404s (asked again)."""
        with self._lock:
            self._current_404.clear()
        if self.client is not None:
            self.client.resume()

    def cancel(self) -> None:
        """Stop every request not yet sent and every wait: they raise ``Cancelled``."""
        if self.client is not None:
            self.client.cancel()

    def close(self) -> None:
        if self.client is not None:
            self.client.close()

    def need_network(
        self, what: str, key: CacheKey | None = None, *, keyless: bool = False
    ) -> UtsClient:
        """The client, to fetch ``what`` (words for messages): UnavailableError under
        ``--offline``, ApiKeyMissingError without a key (unless ``keyless``)."""
        if self.client is None:
            raise UnavailableError(
                f"--offline, and the cache does not hold {what}{self._untrusted(key)}",
                hint="run once without --offline to fill the cache (a regeneration can also "
                "read a local MRCONSO.RRF with --mrconso PATH)",
            )
        if not self.client.has_key and not keyless:
            raise missing_key()
        return self.client

    def _untrusted(self, key: CacheKey | None) -> str:
        """Why the cache may lack it: the entry of ``key`` (or of any key) failed its checksum."""
        every = [] if self.cache is None else self.cache.rejections(key)
        if not every:
            return ""
        more = f", and {len(every) - 1} more entries are not trusted" if len(every) > 1 else ""
        return f": {every[0]}{more}"

    def _cached(self, umls_release: str, request: UtsRequest) -> CacheEntry | None:
        """The answer from the cache only, checked, or ``None``; counts a hit."""
        if self.cache is None or self.refresh:
            return None
        key = _key(umls_release, request)
        entry = self.cache.get(key)
        if entry is None:
            return None
        if entry.found:
            try:
                _parse(request, entry.result)
            except (UnavailableError, TypeError, ValueError):
                with self._lock:  # read twice in a batch (its cache pass, its ask): said once
                    again = key in self._unreadable
                    self._unreadable.add(key)
                (log.debug if again else log.warning)(
                    "cache entry for %s holds something this version cannot read; "
                    "fetching it again",
                    key.describe(),
                )
                return None
        self.stats.count(cache_hits=1)
        return entry

    @staticmethod
    def _ask(client: UtsClient, request: UtsRequest) -> Any:
        """The answer from UMLS, read as the cache reads it (``_parse``: nothing unreadable is
        stored); SPEC 11: a keyless request refused (400, 401, 403) was not answered by UMLS."""
        path, params, kind = request.path, request.param_dict, request.kind
        try:
            if kind == "search":
                listed = client.search(path, params, limit=request.limit)
            elif kind in ("list", "atoms"):
                listed = client.get_listed(
                    path, params, limit=request.limit, keyless=request.keyless
                )
            else:
                result = client.get_result(path, params)
        except NotAuthorisedError as err:
            if not request.keyless or err.status is None:  # (no status: nothing was sent)
                raise
            status = err.status
        except BadRequestError:
            if not request.keyless:
                raise
            status = 400
        else:
            if kind in ("concept", "atom", "object"):
                found = result
            elif listed is not None and kind == "atoms":
                found = listed.items
            elif listed is not None:
                found = {"items": listed.items, "truncated": listed.truncated}
            else:
                return None
            if found is not None:
                _parse(request, found)
            return found
        raise UnavailableError(
            f"{redact(client.base_url)} answered HTTP {status} for {request.path}, a request "
            "sent without the API key: this does not look like the UMLS REST API",
            hint=BASE_URL_HINT,
        )

    def _store(self, umls_release: str, request: UtsRequest, found: Any) -> None:
        if self.cache is None or not self.store:
            return
        self.cache.put(_key(umls_release, request), 404 if found is None else 200, found)

    def _answer(
        self, umls_release: str, build: Build, *, check: bool, fresh: bool = False
    ) -> tuple[Got, float | None]:
        """(the answer, when it was stored if cached), from the cache (not with ``fresh``), else
        UMLS; with ``check``, a 404 from UMLS is checked (``check_served``) before it is stored.
        Unresolved ``current``: the answer's links name the release it is stored under (a 404, a
        linkless answer, ``/metadata/current/sources`` are not stored)."""
        request = build(umls_release)  # checks every identifier before anything is looked up
        if umls_release == "current":
            known = None if request.keyless else self.known(umls_release)
            if known is None:
                asked = _key(umls_release, request)
                with self._lock:
                    if asked in self._current_404:  # already answered 404 (and checked)
                        return Got("current", None), None
                what = "which concrete release 'current' is"
                client = self.need_network(what, keyless=request.keyless)
                found = self._ask(client, request)
                if found is None and check and not request.keyless:
                    self.check_served(umls_release)
                    with self._lock:
                        self._current_404.add(asked)
                concrete = None
                if not request.keyless:
                    concrete = _release_in(request, found, client.base_url)
                if concrete is None or concrete == "current":
                    return _got(request, "current", found), None
                if not is_release(concrete):
                    raise UnavailableError(
                        f"UMLS named {concrete[:40]!r} as the release 'current' stands for, "
                        "which is not a UMLS release name",
                        hint="give a concrete release with --umls-release, such as 2025AB",
                    )
                if self.cache is not None and self.store:
                    self.cache.set_current_release(concrete)
                self._store(concrete, build(concrete), found)
                log.info("release 'current' is %s", concrete)
                return _got(request, concrete, found), None
            umls_release = known
            request = build(known)
        entry = None if fresh else self._cached(umls_release, request)
        if entry is not None:
            return _got(request, umls_release, entry.result), entry.stored_at
        key = _key(umls_release, request)
        client = self.need_network(f"the answer to {key.describe()}", key, keyless=request.keyless)
        found = self._ask(client, request)  # every page, cached once whole
        if found is None and check and not request.keyless:
            self.check_served(umls_release)
        if found is not None or not request.keyless:
            # (a release that ``/metadata`` does not serve today may be served tomorrow)
            self._store(umls_release, request, found)
        return _got(request, umls_release, found), None

    # -- the release gate: SPEC 3's probe and its 404 rule, SPEC 11's check of a 404 ------------

    def known(self, umls_release: str) -> str | None:
        """The concrete release ``umls_release`` stands for without asking UMLS (``current`` as
        last learnt, within ``cache.CURRENT_MAX_AGE`` or ever offline; never with ``--refresh``)."""
        if umls_release != "current":
            return umls_release
        if self.cache is None or self.refresh:
            return None
        return self.cache.current_release(max_age=float("inf") if self.offline else CURRENT_MAX_AGE)

    def probe(self, umls_release: str, cui: str, *, regeneration: bool = False) -> str:
        """SPEC 3's probe of concept ``cui``: the concrete release ``umls_release`` stands for;
        from then on a 404 means "not found" whatever its body. A regeneration's probe: a 404, or
        a ``current`` naming no version, is UnavailableError. A lookup's (SPEC 11): a 404 is
        checked (``check_served``) and ``umls_release`` given back."""
        got, stored_at = self._answer(
            umls_release, partial(paths.concept, cui=cui), check=not regeneration
        )
        if not regeneration and (got.value is None or got.release == "current"):
            return umls_release
        if got.value is None:
            raise self._not_served(umls_release, cui, stored_at)
        if got.release == "current":
            raise UnavailableError(
                f"UMLS did not say which release 'current' is: the links of concept "
                f"{cui} name no version",
                hint="give a concrete release with --umls-release, such as 2025AB",
            )
        self._served_now(got.release)
        return got.release

    def _served_now(self, umls_release: str) -> None:
        """``umls_release`` is served: from now on a 404 means "not found" (SPEC section 3)."""
        with self._lock:
            self._served.add(umls_release)
        if self.client is not None:
            self.client.any_404_is_not_found = True

    def check_served(self, umls_release: str) -> None:
        """SPEC 11: a command's first 404 is checked once with ``/metadata/{release}/sources``
        (keyless, cached): UnavailableError if that is a 404 too. Nothing is sent once served."""
        with self._check_lock:
            with self._lock:
                if umls_release in self._served:
                    return
            build = partial(paths.sources, limit=DEFAULT_LIMIT)
            got, _ = self._answer(umls_release, build, check=False)
            if got.value is None:
                base = redact(self.client.base_url) if self.client is not None else "the cache"
                raise UnavailableError(
                    f"UMLS release {umls_release} is not served at {base}: a request answered "
                    f"404 Not Found, and so did /metadata/{umls_release}/sources",
                    hint="check --umls-release: UTS serves only some releases (see "
                    "https://documentation.uts.nlm.nih.gov/rest/home.html), or --base-url",
                )
            self._served_now(umls_release)
            self._served_now(got.release)

    def _not_served(
        self, umls_release: str, probe_cui: str, stored_at: float | None
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
                f"UMLS release {umls_release} is not served at {base}: its probe concept "
                f"{probe_cui} answered 404 Not Found",
                hint=check,
            )
        instead = " instead of --offline" if self.offline else ""
        when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(stored_at))
        return UnavailableError(
            f"UMLS release {umls_release} is not served at {base}, as the cache says: its probe "
            f"concept {probe_cui} answered 404 Not Found when asked on {when}",
            hint=f"that answer may be out of date: run again with --refresh{instead} to ask "
            f"UMLS again; if it still answers 404, {check}",
        )

    # -- SPEC section 11: any request, as UTS sent it ---------------------------------------------

    def lookup(self, umls_release: str, build: Build, *, fresh: bool = False) -> Got:
        """The answer to any request (``paths``), from the cache (not with ``fresh``), else UMLS;
        a 404 is "not found" only once the release is known to be served (``check_served``)."""
        return self._answer(umls_release, build, check=True, fresh=fresh)[0]

    def lookup_cached(self, umls_release: str, build: Build) -> Got | None:
        """The answer from the cache only (``None`` on a miss or unresolved ``current``)."""
        if umls_release == "current":
            return None
        request = build(umls_release)
        entry = self._cached(umls_release, request)
        return None if entry is None else _got(request, umls_release, entry.result)

    # -- the memo of a run -----------------------------------------------------------------------

    def load_memo(self, umls_release: str, queries: Sequence[AtomQuery]) -> Answers | None:
        """Every answer of these ``queries`` from one still-valid memo file (each a cache hit);
        ``None`` otherwise, and always with ``--refresh``."""
        if self.cache is None or self.refresh:
            return None
        name = _memo_name(umls_release, queries)
        data = self.cache.load_memo(umls_release, name)
        if data is None:
            return None
        if isinstance(data, dict) and data.get("version") != _memo_version():
            return None  # saved by another version, which may map atoms otherwise
        try:
            if data["queries"] != [[q.route, q.sab, q.ident] for q in queries]:
                raise ValueError("another set of queries")
            answers = {
                q: None if found is None else tuple(Atom(*a) for a in found)
                for q, found in zip(queries, data["atoms"], strict=True)
            }
        except (KeyError, TypeError, ValueError):
            log.warning("cache memo %s of release %s cannot be used; reading the entries",
                        name, umls_release)  # fmt: skip
            return None
        self.stats.count(cache_hits=len(queries))
        return answers

    def save_memo(self, umls_release: str, queries: Sequence[AtomQuery], answers: Answers) -> None:
        """Save the answers of ``queries`` as the memo of this run; never fails a run."""
        if self.cache is None:
            return
        version = self.cache.release_version(umls_release)  # read after the last entry was written
        if version is None:
            return
        data = {
            "version": _memo_version(),
            "queries": [[q.route, q.sab, q.ident] for q in queries],
            "atoms": [
                None if answers[q] is None else [list(astuple(a)) for a in answers[q] or ()]
                for q in queries
            ],
        }
        try:
            self.cache.save_memo(umls_release, _memo_name(umls_release, queries), data,
                                 release_version=version)  # fmt: skip
        except OSError as err:  # a memo is an optimisation: never fail a run for it
            log.warning("cannot save a cache memo (%s)", err)


def _memo_version() -> str:
    """What a memo depends on besides the entries: the package and its mapping of UTS atoms."""
    return f"{constants.__version__}+atoms{ATOM_MAPPING}"


def _memo_name(umls_release: str, queries: Sequence[AtomQuery]) -> str:
    """The memo of one run: the package version (so that two versions sharing a cache keep a
    memo each), its concrete release and its queries, in order."""
    text = json.dumps(
        [_memo_version(), umls_release, [[q.route, q.sab, q.ident] for q in queries]],
        ensure_ascii=False,
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
