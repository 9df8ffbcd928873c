"""The UTS REST client, the only module that imports requests: every request passes
``UtsClient._request`` (docs/architecture.md, "HTTP"; docs/reference.md, "Retries and timeouts",
"Limits" and "Security model").
"""

from __future__ import annotations

import email.utils
import logging
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC
from functools import partial
from typing import Any, Literal, NoReturn, TypeVar
from urllib.parse import SplitResult, urlsplit

import requests
import requests.adapters
import urllib3.connection
import urllib3.connectionpool
import urllib3.exceptions
from pydantic import ValidationError
from tenacity import RetryCallState, Retrying, retry_if_exception

from tempmedbench_synonyms import jsonio, paths
from tempmedbench_synonyms.constants import DEFAULT_TIMEOUT, RETRY_BUDGET, __version__
from tempmedbench_synonyms.errors import (
    BadInputError,
    Cancelled,
    NotAuthorisedError,
    TempMedBenchError,
    UnavailableError,
)
from tempmedbench_synonyms.secret import ApiKey, clean_text, holds_secret, missing_key, redact
from tempmedbench_synonyms.uts.models import UtsModel, UtsPage
from tempmedbench_synonyms.uts.options import is_loopback
from tempmedbench_synonyms.uts.ratelimit import RateLimiter
from tempmedbench_synonyms.uts.watchdog import WATCHDOG, Flight

log = logging.getLogger(__name__)

_M = TypeVar("_M", bound=UtsModel)

#: A list longer than this many pages is not an answer we can trust (200 x 500 = 100,000 atoms).
MAX_PAGES = 500
#: One answer, all its pages, at most 32 MiB decoded: re-encoded (at most ~4.5x) it stays under
#: ``cache.MAX_FILE_BYTES``, so every entry written can be read back.
MAX_ANSWER = 32 * 1024 * 1024
#: Statuses worth another try: 408 Request Timeout, 425 Too Early, 429 Too Many Requests, 5xx.
_RETRY_STATUSES = frozenset({408, 425, 429})
#: SPEC section 8: a body past 16 MiB decoded (endless, a bomb) is a failed attempt.
MAX_BODY = 16 * 1024 * 1024
#: Bytes asked of urllib3 per read (>= 2.6 inflates no more): a gzip bomb is caught inflating.
_CHUNK = 64 * 1024
#: Seconds to wait for a connection (when ``--timeout`` is longer).
CONNECT = 10.0
#: The least time an attempt is given when the retry budget is nearly spent.
MIN_ATTEMPT = 1.0


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How long and how often to try a request again: full-jitter exponential backoff, so eight
    workers' retries are not in lockstep; ``Retry-After`` honoured (RFC 9110, 10.2.3); the whole
    budget ``RETRY_BUDGET``, so a UTS that is down fails within minutes."""

    max_attempts: int = 6
    #: seconds from the first attempt after which no retry is started
    max_total: float = RETRY_BUDGET
    #: the n-th retry waits between half of and the whole of min(backoff_max, base * 2**(n-1))
    backoff_base: float = 0.5
    backoff_max: float = 30.0
    #: extra random seconds added to a Retry-After, so that workers do not return in lockstep
    retry_after_jitter: float = 0.25


class Transient(Exception):
    """A failure worth another try (unless ``final``); its message is already free of the key."""

    def __init__(
        self,
        kind: str,
        message: str,
        retry_after: float | None = None,
        *,
        final: bool = False,
        proxy: str | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.retry_after = retry_after
        #: no retry can help (a Retry-After beyond the budget): fail the request now
        self.final = final
        #: the proxy the request went through (``HOST:PORT``, masked), if it failed there
        self.proxy = proxy


def worth_retrying(exc: BaseException) -> bool:
    return isinstance(exc, Transient) and not exc.final


def parse_retry_after(value: str | None, *, now: float) -> float | None:
    """Seconds to wait from a ``Retry-After`` value (``None`` if absent or malformed), RFC 9110
    10.2.3: delay-seconds, or an HTTP-date (IMF-fixdate, RFC 850 or asctime, section 5.6.7)
    measured against the wall clock ``now``; a past date means "now"."""
    text = (value or "").strip()
    if not text:
        return None
    if text.isascii() and text.isdigit():  # str.isdigit() also accepts "²", which int() refuses
        return float(int(text))
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # asctime has no zone; HTTP-dates are always GMT
        when = when.replace(tzinfo=UTC)
    return max(0.0, when.timestamp() - now)


def _redact_filter(record: logging.LogRecord) -> bool:
    """A log filter: cleans urllib3's DEBUG lines (the URL's ``apiKey=...``, the status line)."""
    if record.args:
        try:
            message = record.getMessage()
        except (TypeError, ValueError):
            return True
        record.msg, record.args = clean_text(message), None
    elif isinstance(record.msg, str):
        record.msg = clean_text(record.msg)
    return True


for _name in ("urllib3.connectionpool", "urllib3.connection", "urllib3.util.retry", "urllib3"):
    _logger = logging.getLogger(_name)
    if _redact_filter not in _logger.filters:
        _logger.addFilter(_redact_filter)


#: What to do when what answers at the base URL is not the UMLS REST API.
BASE_URL_HINT = (
    "check --base-url (or UMLS_BASE_URL): the default is https://uts-ws.nlm.nih.gov/rest, and a "
    "UTS base URL ends in /rest"
)

#: The requests exception a refused or reset connection raises; test doubles (``testing``)
#: raise it without importing requests themselves.
TransportError = requests.exceptions.ConnectionError


@dataclass(frozen=True, slots=True)
class Reply:
    """One request's answer: found (200) with its JSON body, or not (404, ``None``); its size."""

    found: bool
    body: Any
    size: int = 0


@dataclass
class Counters:
    """Requests sent (retries included), retries and cache hits, counted by every thread of a
    client and its cache (the report, the progress); ``snapshot`` reads them together."""

    requests: int = 0
    retries: int = 0
    cache_hits: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def count(self, *, requests: int = 0, retries: int = 0, cache_hits: int = 0) -> None:
        with self._lock:
            self.requests += requests
            self.retries += retries
            self.cache_hits += cache_hits

    def snapshot(self) -> Counters:
        with self._lock:
            return Counters(self.requests, self.retries, self.cache_hits)

    def __sub__(self, other: Counters) -> Counters:
        return Counters(
            self.requests - other.requests,
            self.retries - other.retries,
            self.cache_hits - other.cache_hits,
        )


#: What the JSON of a 200 must hold: ``result`` an object (a concept, an atom), a list (the first
#: page of a list), a non-empty list (a later page: UTS never sends an empty one), or an object
#: whose ``results`` is a list (a page of a search).
Shape = Literal["object", "list", "items", "search"]
_SHAPE_WORDS: dict[str, str] = {
    "object": "a JSON object",
    "list": "a JSON list",
    "items": "a non-empty JSON list",
    "search": "an object with a list of 'results'",
}


def _shape_problem(body: Any, shape: Shape) -> str | None:
    """Why ``body`` is not the answer asked for (to follow "HTTP 200 with"), or ``None``."""
    if not isinstance(body, dict):
        return "a JSON body that is not an object"
    if "result" not in body:
        return "a JSON body that has no 'result'"
    result = body["result"]
    if shape == "object":
        ok = isinstance(result, dict)
    elif shape == "search":
        ok = isinstance(result, dict) and isinstance(result.get("results"), list)
    else:
        ok = isinstance(result, list) and (shape == "list" or len(result) > 0)
    if ok:
        return None
    return f"a JSON body whose 'result' is {_describe(result)}, not {_SHAPE_WORDS[shape]}"


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, list) and not value:
        return "an empty list"
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), "a number"
    )


@dataclass(slots=True)
class _Ask:
    """One request through ``_request``, and what is left of its retries: its start, moved on by
    every wait for a turn (SPEC section 8: waiting is not failing), and which attempt this is."""

    url: str
    where: str
    params: dict[str, str]
    shape: Shape
    keyless: bool
    start: float
    attempt: int = 1


class BadRequestError(BadInputError):
    """UTS answered 400 Bad Request (exit 2): a lookup's input's bad input, or the run's."""


@dataclass(frozen=True, slots=True)
class Listed:
    """The items of a list or a search, at most its limit, and whether the limit cut it."""

    items: list[Any]
    truncated: bool = False


def _no_key(r: requests.PreparedRequest) -> requests.PreparedRequest:
    """No auth at all (``None`` would let the session's own auth, the key, in)."""
    return r


def _add_key(key: ApiKey, r: requests.PreparedRequest) -> requests.PreparedRequest:
    """Adds ``apiKey`` to the query string of the prepared request (the session's auth, its
    ``repr`` the key's: ``***``): the key's only way out."""
    # requests prepares the URL before the auth (PreparedRequest.prepare); its own types
    # (py.typed since 2.34) say ``str | None`` all the same.
    if r.url is None:
        raise ValueError("a request without a URL")
    r.prepare_url(r.url, {"apiKey": key.reveal()})
    return r


class _TrackedHTTPConnection(urllib3.connection.HTTPConnection):
    """A connection that registers with the attempt that sends on it (``Watchdog.track``)."""

    def request(self, *args: Any, **kwargs: Any) -> None:
        WATCHDOG.track(self)
        super().request(*args, **kwargs)


class _TrackedHTTPSConnection(_TrackedHTTPConnection, urllib3.connection.HTTPSConnection):
    pass


class _TrackedHTTPPool(urllib3.connectionpool.HTTPConnectionPool):
    ConnectionCls = _TrackedHTTPConnection


class _TrackedHTTPSPool(urllib3.connectionpool.HTTPSConnectionPool):
    ConnectionCls = _TrackedHTTPSConnection


class _ViaProxy(requests.exceptions.ConnectionError):
    """A connection error through a proxy: ``proxy`` names it (masked); its cause is the error."""

    def __init__(self, err: requests.exceptions.ConnectionError, proxy: str) -> None:
        super().__init__(*err.args, request=err.request, response=err.response)
        self.proxy = proxy


def _port(parts: SplitResult) -> int:
    """A URL's port, else its scheme's (443 for https, else 80); ValueError if out of range."""
    return parts.port or (443 if parts.scheme == "https" else 80)


def _proxy_name(proxy: str) -> str:
    """A proxy URL as ``HOST:PORT``, fit to show: never its user name or password."""
    try:
        parts = urlsplit(requests.utils.prepend_scheme_if_needed(proxy, "http"))
        host, port = parts.hostname, _port(parts)
    except ValueError:
        return "?"
    return redact(_host_port(host, port)) if host else "?"


class _Adapter(requests.adapters.HTTPAdapter):
    """requests' adapter: connections a ``Watchdog`` can cut off, never a proxy to this machine."""

    def send(
        self,
        request: requests.PreparedRequest,
        stream: bool = False,
        timeout: Any = None,
        verify: Any = True,
        cert: Any = None,
        proxies: dict[str, str] | None = None,
    ) -> requests.Response:
        # requests sends 127.0.0.1 to HTTP_PROXY too: plain http would carry the key to it.
        if proxies and is_loopback(urlsplit(request.url or "").hostname or ""):
            proxies = {}
        # A connection error through requests' chosen proxy is the proxy's to explain.
        proxy = requests.utils.select_proxy(request.url or "", proxies) if proxies else None
        try:
            return super().send(request, stream, timeout, verify, cert, proxies)
        except requests.exceptions.ConnectionError as err:
            if proxy is None or isinstance(err, requests.exceptions.Timeout):
                raise
            raise _ViaProxy(err, _proxy_name(proxy)) from err

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {
            "http": _TrackedHTTPPool,
            "https": _TrackedHTTPSPool,
        }


class UtsClient:
    """A client of the UTS REST API: one session (shared by the worker threads, never changed
    after creation), one rate limiter, one retry policy."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: ApiKey | None,
        limiter: RateLimiter,
        timeout: float = DEFAULT_TIMEOUT,
        retry: RetryPolicy = RetryPolicy(),
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        sleep: Callable[[float], object] | None = None,
        rng: random.Random | None = None,
        pool_size: int = 10,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._key = api_key
        #: SPEC section 3: once the release probe has answered 200 with UTS JSON (the cached
        #: layer sets this), a 404 means "not found" whatever its body; before, only a JSON 404
        #: does, and any other 404 says the base URL is not the UMLS REST API.
        self.any_404_is_not_found = False
        self.limiter = limiter
        #: ``--timeout``: the seconds of one attempt, from connect to last byte (a watchdog shuts
        #: its sockets down at that deadline, however slow the bytes); no connect or read longer.
        self.timeout = timeout
        self.retry = retry
        self._clock = clock
        self._wall_clock = wall_clock
        # The limiter's cancel event: cancelling wakes its waits and the retry sleeps (the default
        # sleep) alike.
        self._cancel = limiter.cancel_event
        self._sleep: Callable[[float], object] = sleep or self._cancel.wait
        # (Random's C core is thread-safe: the workers share it without a lock.)
        self._rng = rng or random.Random()
        self._pool_size = pool_size
        self._session: requests.Session | None = None
        self._session_lock = threading.Lock()
        self.stats = Counters()
        self._wave_lock = threading.Lock()
        self._last_line: float | None = None

    def __repr__(self) -> str:
        return f"UtsClient(base_url={redact(self.base_url, self._key)!r}, api_key=***)"

    def cancel(self) -> None:
        """Stop: unsent requests raise ``Cancelled``, sleeps end, requests on the wire are cut."""
        self._cancel.set()
        WATCHDOG.cancel(self)

    def resume(self) -> None:
        """Undo ``cancel`` before a new run (a 401 will simply stop it again)."""
        self._cancel.clear()

    @property
    def has_key(self) -> bool:
        """Whether an API key was given (a cache-only run needs none)."""
        return self._key is not None

    def close(self) -> None:
        """Close the connection pool (a new one is opened if the client is used again)."""
        with self._session_lock:
            session, self._session = self._session, None
        if session is not None:
            session.close()

    def _get_session(self) -> requests.Session:
        with self._session_lock:
            if self._session is None:
                session = requests.Session()
                adapter = _Adapter(pool_connections=1, pool_maxsize=self._pool_size, max_retries=0)
                session.mount("https://", adapter)
                session.mount("http://", adapter)
                session.headers["User-Agent"] = f"tempmedbench-synonyms/{__version__}"
                session.headers["Accept"] = "application/json"
                session.auth = None if self._key is None else partial(_add_key, self._key)
                self._session = session
            return self._session

    def _request(
        self,
        path: str,
        params: Mapping[str, str] | None = None,
        *,
        shape: Shape = "object",
        keyless: bool = False,
    ) -> Reply:
        """GET ``base_url + path``, the one way out; a 200 whose ``result`` is not of ``shape`` is
        retried, never returned (so never cached). ``keyless``: sent without the key."""
        url = paths.url(self.base_url, path)
        ask = _Ask(url, redact(path, self._key), dict(params or {}), shape, keyless, self._clock())
        retrying = Retrying(
            stop=partial(self._stop, ask),
            wait=self._wait,
            retry=retry_if_exception(worth_retrying),
            sleep=self._sleep_or_cancel,
            before_sleep=partial(self._before_sleep, ask.where),
            reraise=True,
        )
        failure: Transient | None = None
        try:
            for attempt in retrying:
                with attempt:
                    ask.attempt = attempt.retry_state.attempt_number
                    reply = self._attempt(ask)
        except Transient as err:
            failure = err
        if failure is not None:
            # Raised outside the except block: nothing chained, nothing from requests.
            kept = "everything fetched so far is cached and will not be fetched again"
            if failure.kind == "429":
                hint = (
                    "UMLS is limiting the requests from this address; run again later, perhaps "
                    f"with a lower --rate: {kept}"
                )
            elif failure.kind == "proxy":
                named = f"the proxy {failure.proxy}" if failure.proxy else "the proxy"
                hint = (
                    f"{named} that HTTPS_PROXY, HTTP_PROXY or ALL_PROXY names could not be "
                    "used: check it, or name the UMLS host in NO_PROXY to go there without it"
                )
            else:
                hint = f"UMLS may be down or unreachable from here; run again later: {kept}"
            raise UnavailableError(
                f"UMLS could not answer {ask.where} after {ask.attempt} attempts: {failure}",
                hint=hint,
            )
        return reply

    def _attempt(self, ask: _Ask) -> Reply:
        """One HTTP request: rate limited, counted, bounded in time and size, translated; the wait
        for a turn does not count against the retry budget (SPEC 8): it moves ``start``."""
        if self._cancel.is_set():
            raise Cancelled()
        if self._key is None and not ask.keyless:
            raise missing_key()
        session = self._get_session()
        before = self._clock()
        self.limiter.acquire()
        ask.start += self._clock() - before
        if self._cancel.is_set():
            raise Cancelled()
        self.stats.count(requests=1)
        seconds = self._attempt_seconds(ask)
        problem: TempMedBenchError | Transient | None = None
        reply: Reply | None = None
        with WATCHDOG.flight(self, seconds) as flight:
            try:
                response = session.get(
                    ask.url,
                    params=ask.params,
                    timeout=(min(CONNECT, seconds), seconds),
                    allow_redirects=False,
                    stream=True,
                    auth=_no_key if ask.keyless else None,
                )
                try:
                    reply = self._translate(response, ask, flight)
                finally:
                    response.close()
            except (TempMedBenchError, Transient) as err:
                # Without its traceback: the frames that read the body hold it (up to 16 MiB),
                # and tenacity keeps each failed attempt's exception until the request ends.
                problem = err.with_traceback(None)
            except requests.exceptions.SSLError as exc:
                problem = UnavailableError(
                    f"TLS failed for {ask.where}: {self._clean(str(exc))}",
                    hint="check the system's CA certificates, or a proxy that intercepts TLS",
                )
            except (
                requests.exceptions.InvalidURL,
                requests.exceptions.MissingSchema,
                requests.exceptions.InvalidSchema,
            ):
                problem = BadInputError(
                    f"{redact(self.base_url, self._key)} is not a usable UTS base URL",
                    key="--base-url",
                    hint="the default is https://uts-ws.nlm.nih.gov/rest",
                )
            except requests.exceptions.Timeout as exc:
                problem = Transient("timeout", f"timed out ({type(exc).__name__})")
            except (
                requests.exceptions.ConnectionError,
                requests.exceptions.ChunkedEncodingError,
                requests.exceptions.ContentDecodingError,
            ) as exc:
                # Said in a few words where the exceptions chained say why (requests' own text
                # is urllib3's reprs of pools and connections, some 400 characters).
                words = unreached(exc, self.base_url)
                via = exc.proxy if isinstance(exc, _ViaProxy) else None
                proxy = via is not None or isinstance(exc, requests.exceptions.ProxyError)
                problem = Transient(
                    "proxy" if proxy else "connection",
                    self._clean(words, 300)
                    if words
                    else f"{type(exc).__name__}: {self._clean(str(exc))}",
                    proxy=via,
                )
            except Exception as exc:  # the boundary: nothing leaves with the URL in it
                problem = UnavailableError(
                    f"request for {ask.where} failed: {type(exc).__name__}: {self._clean(str(exc))}"
                )
        if (flight.doomed == "cancel" or self._cancel.is_set()) and not isinstance(
            problem, (NotAuthorisedError, BadInputError)
        ):
            # Cut off by ``cancel``: whatever the read saw (an early end, a reset) is no answer.
            raise Cancelled()
        if flight.doomed == "timeout" or (
            isinstance(problem, Transient)
            and problem.kind in ("cut", "timeout", "connection", "proxy")
            and time.monotonic() >= flight.deadline
        ):
            # Cut off at its deadline; a body read "to the end" then was read to the cut.
            problem = Transient("timeout", f"no complete answer within {seconds:g} s")
        if problem is None:
            assert reply is not None
            return reply
        raise problem

    def _attempt_seconds(self, ask: _Ask) -> float:
        """``--timeout``, capped by the retry budget left (at least ``MIN_ATTEMPT``)."""
        left = self.retry.max_total - (self._clock() - ask.start)
        return min(self.timeout, max(left, min(MIN_ATTEMPT, self.timeout)))

    def _parse(self, raw: bytes, content_type: str) -> Any:
        """A 200's JSON as SPEC section 8 reads all JSON (strict UTF-8, ``jsonio.DECODER``, every
        string text without the key); anything else is ``Transient``: asked again, never cached."""
        try:
            body = jsonio.loads_utf8(raw)
        except UnicodeDecodeError:
            # Raw bytes of a lone surrogate (b"\xed\xa0\x80") among them: not text.
            raise Transient("not_unicode", "HTTP 200 with a body that is not UTF-8 text") from None
        except jsonio.JsonProblem as err:
            raise Transient(
                "not_json",
                f"HTTP 200 with a body that is not strict JSON: {self._clean(str(err), 200)}",
            ) from None
        except (ValueError, RecursionError):
            raise Transient(
                "not_json", f"HTTP 200 with a body that is not JSON ({content_type})"
            ) from None
        # Every string (keys too) joined once: two searches instead of two per string. The
        # NUL between them cannot make a surrogate, nor hide a key (it can only add a match).
        text = "\0".join(jsonio.strings(body))
        if jsonio.has_lone_surrogate(text):
            # "\ud800" parses to half a surrogate pair, which is no text: it could be neither
            # cached (UTF-8) nor shown.
            raise Transient(
                "not_unicode",
                "HTTP 200 with text that is not valid Unicode (a lone surrogate escape)",
            )
        if holds_secret(text):  # (in any case, as redact masks it; the client's key is read)
            # Only a hostile server echoes the key into its data: kept, it would be cached on
            # disk and shown.
            raise Transient("holds_key", "HTTP 200 with a body that holds the API key")
        return body

    def _clean(self, text: str, limit: int = 1000) -> str:
        """``text`` cleaned (``secret.clean_text``), then cut to ``limit`` characters (SPEC 8);
        cut after cleaning, so a cut never leaves part of the key unmasked."""
        text = clean_text(text, self._key)
        return text if len(text) <= limit else text[:limit] + " ..."

    def _read_body(self, response: requests.Response, flight: Flight) -> bytes:
        """The decoded body, at most ``MAX_BODY`` bytes, read before the attempt's deadline."""
        status = response.status_code
        length = response.headers.get("Content-Length", "").strip()
        identity = response.headers.get("Content-Encoding", "identity").strip().lower()
        if identity == "identity" and length.isascii() and length.isdigit():
            if int(length) > MAX_BODY:
                raise Transient(
                    "too_large",
                    f"HTTP {status} with a body of {int(length)} bytes, more than the "
                    f"{MAX_BODY // 2**20} MiB this tool reads",
                )
        # Chunks kept apart and joined once: a growing bytearray would be copied as it grows,
        # and eight workers each holding a body near the cap would need twice the memory.
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_content(_CHUNK):
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_BODY:
                raise Transient(
                    "too_large",
                    f"HTTP {status} with a body of more than {MAX_BODY // 2**20} MiB "
                    "(after decoding)",
                )
            if flight.doomed is not None or time.monotonic() >= flight.deadline:
                raise Transient("cut", "cut off")  # ``_attempt`` says why
        if flight.doomed is not None:  # cut off, and the read took the cut for the end
            raise Transient("cut", "cut off")
        return b"".join(chunks)

    def _translate(self, response: requests.Response, ask: _Ask, flight: Flight) -> Reply:
        status, where = response.status_code, ask.where
        content_type = self._clean(
            response.headers.get("Content-Type", "no content type").split(";")[0], 100
        )
        if status == 200:
            raw = self._read_body(response, flight)
            body = self._parse(raw, content_type)
            problem = _shape_problem(body, ask.shape)
            if problem is not None:
                # A cut-short or garbled answer (seen behind proxies): asked again, never cached.
                raise Transient("not_json", f"HTTP 200 with {problem}")
            self.limiter.reward()
            return Reply(True, body, len(raw))
        if status == 404:
            # Before the probe showed this is UTS, a 404 without JSON is something else (a base
            # URL without /rest), never "not found"; after, any 404 body is "not found".
            raw = self._read_body(response, flight)
            try:
                is_json = isinstance(jsonio.loads_utf8(raw), dict)
            except (ValueError, RecursionError):
                is_json = False
            if not is_json and not self.any_404_is_not_found:
                base = redact(self.base_url, self._key)
                raise UnavailableError(
                    f"{base} answered HTTP 404 for {where} with a {content_type} body, not the "
                    "JSON the UMLS REST API sends: this does not look like the UMLS REST API",
                    hint=BASE_URL_HINT,
                )
            self.limiter.reward()
            return Reply(False, None)
        if status in (401, 403):
            self.cancel()
            raise NotAuthorisedError(status, where)
        if status == 400:
            raise BadRequestError(
                f"UMLS answered HTTP 400 Bad Request for {where}",
                hint="check the release name (--umls-release) and the identifiers in the table",
            )
        retry_after = parse_retry_after(response.headers.get("Retry-After"), now=self._wall_clock())
        if status == 429:
            self._rate_limited(retry_after, ask)
        if status in _RETRY_STATUSES or 500 <= status <= 599:
            # RFC 9110 section 10.2.3: Retry-After also accompanies 503 Service Unavailable.
            raise Transient(
                str(status),
                f"HTTP {status} {self._clean(response.reason or '', 200)}".strip(),
                retry_after if status == 503 else None,
            )
        if 300 <= status <= 399:
            raise UnavailableError(
                f"UMLS answered HTTP {status} (a redirect) for {where}; redirects are not "
                "followed, so that the API key is never sent to another address",
                hint="check --base-url (the default is https://uts-ws.nlm.nih.gov/rest)",
            )
        raise UnavailableError(f"UMLS answered HTTP {status} for {where}")

    def _rate_limited(self, retry_after: float | None, ask: _Ask) -> NoReturn:
        """A 429: the rate halved, and every worker paused if the retry fits the budget (a
        ten-minute ``Retry-After`` must not hold the run or Ctrl-C), else this request failed."""
        # The longest wait tenacity may pick for this retry (``_wait``) must end within the
        # budget, or the retry will never be sent (``_stop``).
        if retry_after is not None:
            longest = retry_after + self.retry.retry_after_jitter
        else:
            longest = self._backoff_ceiling(ask.attempt)
        last = ask.attempt >= self.retry.max_attempts
        message = "HTTP 429 Too Many Requests"
        if last or self._clock() - ask.start + longest > self.retry.max_total:
            # No retry is left, or none can be sent: a pause would stop the others for nothing.
            self.limiter.slow_down()
            if not last:
                after = "" if retry_after is None else f" with Retry-After {retry_after:g} s"
                message += (
                    f"{after}, beyond the {self.retry.max_total:g} s this tool waits for one "
                    "request"
                )
            raise Transient("429", message, retry_after, final=True)
        # Its line shares the retry lines' throttle: one line, not one a 429 and one a retry.
        self.limiter.penalise(retry_after, loud=self._announce())
        raise Transient("429", message, retry_after)

    def _backoff_ceiling(self, attempt: int) -> float:
        """The longest backoff after failed attempt number ``attempt`` (1 for the first)."""
        return min(self.retry.backoff_max, self.retry.backoff_base * 2.0 ** (attempt - 1))

    def _stop(self, ask: _Ask, retry_state: RetryCallState) -> bool:
        """No retry after ``max_attempts``, nor one whose wait ends more than ``max_total`` s after
        the first try, less the waits for a turn (our clock, unlike ``stop_before_delay``)."""
        if retry_state.attempt_number >= self.retry.max_attempts:
            return True
        return self._clock() - ask.start + retry_state.upcoming_sleep > self.retry.max_total

    def _wait(self, retry_state: RetryCallState) -> float:
        exc = retry_state.outcome.exception() if retry_state.outcome else None
        if isinstance(exc, Transient) and exc.retry_after is not None:
            return exc.retry_after + self._rng.uniform(0.0, self.retry.retry_after_jitter)
        ceiling = self._backoff_ceiling(retry_state.attempt_number)
        return self._rng.uniform(ceiling / 2.0, ceiling)

    def _sleep_or_cancel(self, seconds: float) -> None:
        self._sleep(seconds)
        if self._cancel.is_set():
            raise Cancelled()

    def _before_sleep(self, where: str, retry_state: RetryCallState) -> None:
        self.stats.count(retries=1)
        exc = retry_state.outcome.exception() if retry_state.outcome else None
        left = self.retry.max_attempts - retry_state.attempt_number
        # A warning, as pip's "Retrying ...": the first, then one every --timeout seconds at most
        # (eight workers meeting one outage print one line); -v shows every retry.
        log.log(
            logging.WARNING if self._announce() else logging.INFO,
            "retrying %s in %.1f s after %s (%d attempt%s left)",
            where,
            retry_state.upcoming_sleep,
            exc,
            left,
            "" if left == 1 else "s",
        )

    def _announce(self) -> bool:
        """Whether this failure's line is shown: the first, or ``timeout`` s after one, answers
        between failures or not (a flaky server must not print a line a failure)."""
        now = self._clock()
        with self._wave_lock:
            last = self._last_line
            loud = last is None or now - last >= self.timeout
            if loud:
                self._last_line = now
            return loud

    def get_result(self, path: str, params: Mapping[str, str] | None = None) -> Any:
        """The ``result`` of a single-object route (a concept, an atom); ``None`` on 404."""
        reply = self._request(path, params, shape="object")
        if not reply.found:
            return None
        return reply.body["result"]

    def get_listed(
        self,
        path: str,
        params: Mapping[str, str] | None = None,
        *,
        limit: int = 0,
        keyless: bool = False,
    ) -> Listed | None:
        """The raw items of a list route, pages ``2..pageCount`` or up to ``limit`` (0: all);
        ``None`` on a first-page 404. A page without a list, or a later empty one, is asked again;
        a 404 after page 1 fails the list: it is never short without ``truncated``."""
        base = dict(params or {})
        first = self._request(path, base, shape="list", keyless=keyless)
        if not first.found:
            return None
        page = parse_model(UtsPage, first.body, "page")
        items = list(page.result)
        page_count = page.page_count or 1
        size = first.size
        number = 2
        while number <= page_count and not (limit and len(items) >= limit):
            if number > MAX_PAGES or (page_count > MAX_PAGES and not limit):
                raise UnavailableError(
                    f"UMLS says {path} has {page_count} pages of results, more than the "
                    f"{MAX_PAGES} this tool will follow"
                )
            reply = self._request(
                path, {**base, "pageNumber": str(number)}, shape="items", keyless=keyless
            )
            if not reply.found:
                raise UnavailableError(
                    f"UMLS answered 404 for page {number} of {page_count} of {path}; the list "
                    "changed while it was read",
                    hint="run again; the pages fetched so far were not cached",
                )
            size += reply.size
            self._check_size(path, size, f"first {number} of {page_count} pages")
            more = parse_model(UtsPage, reply.body, "page")
            items.extend(more.result)
            number += 1
        truncated = bool(limit) and (len(items) > limit or number <= page_count)
        return Listed(items[:limit] if limit else items, truncated)

    def _check_size(self, path: str, size: int, pages: str) -> None:
        """UnavailableError when an answer's pages, all together, exceed ``MAX_ANSWER``."""
        if size > MAX_ANSWER:
            raise UnavailableError(
                f"UMLS answered {path} with more than {MAX_ANSWER // 2**20} MiB in its "
                f"{pages}, more than this tool reads for one answer",
                hint="a real UMLS answer is far smaller: check --base-url, or a proxy that "
                "alters the answers; nothing of this answer was cached",
            )

    def search(self, path: str, params: Mapping[str, str], *, limit: int) -> Listed | None:
        """A search's results, paged as SPEC section 11 says; ``None`` if its first page is a 404.
        Every page asks one ``pageSize`` (UTS counts pages in it); the next only while the last was
        full (``_page_size_sent``) and brought a new ``(rootSource, ui)``. A row without a ``ui``
        (the ``"NONE"`` end row) or an empty list ends it; repeated rows are left out.
        ``truncated``: the limit (or ``MAX_PAGES``) ended it while more might follow."""
        page_size = min(limit, paths.PAGE_SIZE) if limit else paths.PAGE_SIZE
        results: list[dict[str, Any]] = []
        seen: set[tuple[Any, Any]] = set()
        size = 0
        for number in range(1, MAX_PAGES + 1):
            asked = {**params, "pageSize": str(page_size)}
            if number > 1:
                asked["pageNumber"] = str(number)
            reply = self._request(path, asked, shape="search")
            if not reply.found:
                if number == 1:
                    return None
                raise UnavailableError(
                    f"UMLS answered 404 for page {number} of the search {path}; the results "
                    "changed while they were read",
                    hint="run again; the pages fetched so far were not cached",
                )
            size += reply.size
            self._check_size(path, size, f"first {number} pages")
            rows = reply.body["result"]["results"]
            ended = cut = False
            new = 0
            for row in rows:
                if not isinstance(row, dict):
                    raise UnavailableError(
                        f"UMLS sent a search result this tool cannot read (not an object, in "
                        f"page {number} of {path})",
                        hint="the UTS response format may have changed; please report it",
                    )
                ui = row.get("ui")
                if not isinstance(ui, str) or ui in ("", "NONE"):
                    ended = True
                    continue
                key = (row.get("rootSource"), ui)
                if key in seen:
                    continue
                seen.add(key)
                new += 1
                if limit and len(results) >= limit:
                    cut = True
                else:
                    results.append(row)
            full = len(rows) >= _page_size_sent(reply.body, page_size)
            if cut or (limit and len(results) >= limit and not ended and full):
                return Listed(results, truncated=True)
            if ended or new == 0 or not full:
                return Listed(results)
        log.warning("the search %s still had results after %d pages", path, MAX_PAGES)
        return Listed(results, truncated=True)


def _page_size_sent(body: Any, asked: int) -> int:
    """A full search page's size: a valid envelope ``pageSize`` in 1..``asked``, else ``asked``."""
    said = body.get("pageSize") if isinstance(body, dict) else None
    if isinstance(said, int) and not isinstance(said, bool) and 1 <= said < asked:
        return said
    return asked


def unreached(exc: BaseException, base_url: str) -> str | None:
    """A connection error in a few words from requests' and urllib3's chain ("cannot connect to
    HOST:PORT: connection refused", ...); ``None`` when no exception of the chain says why."""
    proxy = resolving = False
    conn: Any = None
    reason = ""
    todo: list[BaseException] = [exc]
    seen: set[int] = set()
    while todo and len(seen) < 32:  # a bound, whatever the chain holds
        err = todo.pop(0)
        if id(err) in seen:
            continue
        seen.add(id(err))
        proxy = proxy or isinstance(
            err, (requests.exceptions.ProxyError, urllib3.exceptions.ProxyError)
        )
        if isinstance(err, urllib3.exceptions.NewConnectionError) and conn is None:
            conn = getattr(err, "conn", None)
            resolving = isinstance(err, urllib3.exceptions.NameResolutionError)
        if (
            not reason
            and isinstance(err, OSError)
            and not isinstance(err, requests.exceptions.RequestException)
        ):
            # the socket's own words: "Connection refused", "Name or service not known"
            reason = err.strerror or (str(err.args[0]) if err.args else "")
        links = [*err.args, getattr(err, "reason", None), err.__cause__, err.__context__]
        todo.extend(e for e in links if isinstance(e, BaseException))
    if not reason:
        return None
    reason = reason[:1].lower() + reason[1:]
    what = "the proxy " if proxy else ""
    host, port = getattr(conn, "host", None), getattr(conn, "port", None)
    if not isinstance(host, str) or not host:
        if proxy:
            return f"the proxy failed: {reason}"
        parts = urlsplit(base_url)
        host, port = parts.hostname or "?", _port(parts)
        return f"the connection to {_host_port(host, port)} was lost: {reason}"
    if resolving:
        return f"cannot find the {'proxy host' if proxy else 'host'} {host}: {reason}"
    return f"cannot connect to {what}{_host_port(host, port)}: {reason}"


def _host_port(host: str, port: object) -> str:
    host = f"[{host}]" if ":" in host else host
    return host if port is None else f"{host}:{port}"


def parse_model(model: type[_M], data: Any, what: str) -> _M:
    """``model`` read from UTS JSON; UnavailableError naming the fields if it cannot be."""
    try:
        return model.model_validate(data)
    except ValidationError as err:
        fields = ", ".join(".".join(str(p) for p in e["loc"]) or what for e in err.errors())
        raise UnavailableError(
            f"UMLS sent {'an' if what[0] in 'aeiou' else 'a'} {what} this tool cannot read "
            f"(problem with: {fields})",
            hint="the UTS response format may have changed; please report it",
        ) from None
