"""The fake UTS core: a request in, UTS's reply out (``testing.routes`` over ``FakeUtsData``), with
UTS's authentication (401 without the right ``apiKey``; ``/metadata/{release}/sources`` needs
none), deliberate misbehaviour (``Faults``) and a log of every request (``seen``, never the key).
``testing.server`` puts it on a socket or behind ``responses``; README.md, "Testing your own code
offline", tells the whole story."""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from tempmedbench_synonyms.testing import routes
from tempmedbench_synonyms.testing.data import FakeUtsData
from tempmedbench_synonyms.testing.routes import SEARCH_EMPTY, stable_hash

FAULT_KINDS: tuple[str, ...] = ("429", "5xx", "reset", "html502", "truncated", "stall")
"""What ``Faults.kinds`` may name; ``stall`` answers, but only after ``Faults.stall`` seconds."""


@dataclass
class Faults:
    """How a fake misbehaves. Decisions are deterministic: for the n-th request of one URL
    (``apiKey`` aside), a hash of ``(seed, URL, n)`` decides, so a run fails the same way
    whatever the thread interleaving, and a retry of a failed request draws afresh."""

    #: seconds every answer waits before it is sent
    latency: float = 0.0
    #: probability that a request fails, with one of ``kinds`` chosen by the same hash
    rate: float = 0.0
    kinds: tuple[str, ...] = ()
    seed: int = 0
    #: the faults of the next requests, in order, before any random one (``None``: no fault)
    script: list[str | None] = field(default_factory=list)
    #: the Retry-After header of a 429 (and of a 503 when ``retry_after_on_503``)
    retry_after: str | None = "1"
    retry_after_on_503: bool = False
    #: how long a ``stall`` waits before answering: set it far above the client's timeout
    #: (``--timeout``), as a busy machine may cut late and one that ends first is only a slow
    #: answer; the server's stop ends it at once
    stall: float = 2.0
    #: if set, a sliding one-second window: a request beyond this many in the last second gets
    #: a 429 (as a server enforcing the UTS limit of 20 a second would answer)
    rate_limit: int | None = None
    #: if set, every request after this many is answered 401 (a key revoked mid-run)
    revoke_after: int | None = None

    def __post_init__(self) -> None:
        unknown = set(self.kinds) | {k for k in self.script if k is not None}
        unknown -= set(FAULT_KINDS) | {"401", "404", "400", "503"}
        if unknown:
            raise ValueError(f"unknown fault kinds {sorted(unknown)}; known: {FAULT_KINDS}")


@dataclass(frozen=True, slots=True)
class FakeReply:
    """What the fake answers: a status, headers and body, or a connection reset."""

    status: int
    headers: dict[str, str]
    body: bytes
    #: "respond", or "reset" (close the connection with no answer)
    action: str = "respond"
    delay: float = 0.0
    #: the fault injected, if any (for the request log)
    fault: str | None = None


@dataclass(frozen=True, slots=True)
class SeenRequest:
    """One request as the fake saw it; ``apiKey`` is never stored, only whether one was sent
    and whether it was right."""

    path: str
    params: tuple[tuple[str, str], ...]
    key_ok: bool
    status: int
    fault: str | None
    at: float
    key_sent: bool = False


class FakeUts:
    """The fake UTS: routes (``testing.routes``), authentication, faults, and a log of requests."""

    def __init__(
        self,
        data: FakeUtsData,
        *,
        api_key: str,
        faults: Faults | None = None,
        shuffle_seed: int = 0,
        search_empty: str = "none",
        max_page_size: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if faults is not None and not isinstance(faults, Faults):
            # checked here, not at the first request, where it would drop every connection
            raise TypeError(
                f"faults takes a tempmedbench_synonyms.testing.Faults, not a "
                f"{type(faults).__name__} ({faults!r:.60}): write faults=Faults(...) with those "
                "settings, such as Faults(rate=0.3, kinds=('429',))"
            )
        if search_empty not in SEARCH_EMPTY:
            raise ValueError(f"search_empty is one of {SEARCH_EMPTY}, not {search_empty!r}")
        if max_page_size is not None and max_page_size < 1:
            raise ValueError(f"max_page_size is at least 1, not {max_page_size!r}")
        self.data = data
        #: how a search with nothing (left) to show answers: the documented ``NONE`` row
        #: (``"none"``), or an empty list (``"list"``, as newer NLM code expects)
        self.search_empty = search_empty
        #: the largest page sent (``None``: as large as asked); the envelope's ``pageSize``
        #: says the size sent, as a server that pages smaller than asked does
        self.max_page_size = max_page_size
        self._api_key = api_key
        self.faults = faults or Faults()
        self.shuffle_seed = shuffle_seed
        self._clock = clock
        self._lock = threading.Lock()
        self._seen_per_url: dict[str, int] = {}
        self._window: deque[float] = deque()
        self._count = 0
        self.seen: list[SeenRequest] = []

    def __repr__(self) -> str:
        return f"FakeUts(release={self.data.release!r}, rows={len(self.data.rows)})"

    @property
    def arrivals(self) -> list[float]:
        """Arrival times (the fake's clock) of every request, in order."""
        with self._lock:
            return [s.at for s in self.seen]

    def max_in_window(self, window: float = 1.0) -> int:
        """The most requests that arrived within any ``window`` seconds (half-open)."""
        times = sorted(self.arrivals)
        best = 0
        j = 0
        for i, t in enumerate(times):
            while times[j] <= t - window:
                j += 1
            best = max(best, i - j + 1)
        return best

    @property
    def api_key(self) -> str:
        """The key this fake accepts (any other gets 401)."""
        return self._api_key

    def count(self, status: int | None = None) -> int:
        """How many requests arrived, or only those answered with ``status``."""
        with self._lock:
            return sum(1 for s in self.seen if status is None or s.status == status)

    def handle(self, path: str, query: Mapping[str, Sequence[str]], *, base_url: str) -> FakeReply:
        """Answer ``GET base_url + path?query``; ``path`` starts after the base URL."""
        params = {k: v[-1] for k, v in query.items() if v}
        key = params.pop("apiKey", None)
        key_ok = key == self._api_key
        asked = tuple(sorted(params.items()))
        url_id = path + "?" + "&".join(f"{k}={v}" for k, v in asked)
        with self._lock:
            now = self._clock()
            n = self._seen_per_url.get(url_id, 0)
            self._seen_per_url[url_id] = n + 1
            self._count += 1
            count = self._count
            fault = self._pick_fault(url_id, n)
            limited = False
            if self.faults.rate_limit is not None:
                while self._window and self._window[0] <= now - 1.0:
                    self._window.popleft()
                if len(self._window) >= self.faults.rate_limit:
                    limited = True
                else:
                    self._window.append(now)
        if limited:
            reply = self._error(429, "Too Many Requests", {"Retry-After": "1"})
        elif fault is not None and fault not in ("truncated", "stall"):
            reply = self._fault(fault, path)  # a failure before any check of the key
        else:
            # the one route UTS answers without a key (SPEC 11: the client never sends it there)
            if not path.startswith("/metadata/") and (
                not key_ok
                or (self.faults.revoke_after is not None and count > self.faults.revoke_after)
            ):
                reply = self._error(401, "Unauthorized: the apiKey is missing or not valid")
            else:
                reply = self._json(*routes.answer(self, path, params, base_url=base_url))
            if fault == "truncated":  # the whole answer promised, half of it sent
                reply = FakeReply(200, reply.headers, reply.body[: max(1, len(reply.body) // 2)])
        delay = self.faults.latency + (self.faults.stall if fault == "stall" else 0.0)
        reply = replace(reply, delay=delay, fault=fault)
        with self._lock:
            self.seen.append(
                SeenRequest(path, asked, key_ok, reply.status, fault, now, key is not None)
            )
        return reply

    def _pick_fault(self, url_id: str, n: int) -> str | None:
        f = self.faults
        if f.script:
            return f.script.pop(0)
        if f.rate <= 0 or not f.kinds:
            return None
        draw = stable_hash(f.seed, url_id, n)
        if (draw % 1_000_000) / 1_000_000 >= f.rate:
            return None
        return f.kinds[(draw // 1_000_000) % len(f.kinds)]

    def _fault(self, kind: str, path: str) -> FakeReply:
        if kind == "429":
            headers = (
                {} if self.faults.retry_after is None else {"Retry-After": self.faults.retry_after}
            )
            return self._error(429, "Too Many Requests", headers)
        if kind in ("5xx", "503"):
            status = 503 if kind == "503" else (500, 502, 503, 504)[stable_hash(path) % 4]
            headers = {}
            if status == 503 and self.faults.retry_after_on_503 and self.faults.retry_after:
                headers["Retry-After"] = self.faults.retry_after
            return self._error(status, "Service Unavailable", headers)
        if kind == "reset":
            return FakeReply(0, {}, b"", action="reset")
        if kind == "html502":
            body = (
                b"<html><head><title>502 Bad Gateway</title></head><body><center>"
                b"<h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>"
            )
            return FakeReply(502, {"Content-Type": "text/html"}, body)
        if kind in ("401", "404", "400"):
            return self._error(int(kind), "scripted")
        raise AssertionError(kind)  # pragma: no cover - Faults checks the kinds

    @staticmethod
    def _json(status: int, doc: object, headers: Mapping[str, str] | None = None) -> FakeReply:
        body = json.dumps(doc, ensure_ascii=False).encode("utf-8")
        return FakeReply(status, {"Content-Type": "application/json", **(headers or {})}, body)

    def _error(
        self, status: int, message: str, headers: Mapping[str, str] | None = None
    ) -> FakeReply:
        return self._json(*routes.error(status, message), headers)
