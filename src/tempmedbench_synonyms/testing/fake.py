"""The fake UTS core: invented MRCONSO rows in, UTS-shaped replies out, misbehaving on request.

``FakeUts.handle`` answers the routes this package uses with the response shapes UTS documents
(https://documentation.uts.nlm.nih.gov/rest/home.html)::

    GET /content/{release}/CUI/{cui}                      a Concept
    GET /content/{release}/CUI/{cui}/atoms                Atoms (sabs, ttys, language, ...)
    GET /content/{release}/source/{sab}/{code}/atoms      Atoms of a source-asserted code
    GET /content/{release}/AUI/{aui}                      one Atom

with UTS's quirks: ``obsolete``/``suppressible`` as the strings "true"/"false" on atoms, ``"NONE"``
for absent links, the CUI and the code only inside link URLs, pages of ``pageSize`` (default 25)
with ``pageCount``, atoms in a shuffled (but per-query stable) order, 401 for a missing or wrong
``apiKey``, 404 for anything unknown, and an empty atom list answered as 404 (as UTS does for a
query with no result). It can also misbehave on purpose (``Faults``): latency, 429 with
``Retry-After``, 5xx, connection resets, HTML 502 pages, truncated JSON, stalls past the client's
read timeout, a rate limit, and a key revoked mid-run. ``testing.server`` puts it on a socket or
behind ``responses``.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from tempmedbench_synonyms.mrconso.rows import MRCONSO_COLUMNS, split_row

FAULT_KINDS: tuple[str, ...] = ("429", "5xx", "reset", "html502", "truncated", "stall")
"""What ``Faults.kinds`` may name; ``stall`` answers, but only after ``Faults.stall`` seconds."""

_COL = {name: i for i, name in enumerate(MRCONSO_COLUMNS)}


@dataclass(frozen=True, slots=True)
class FakeRow:
    """The MRCONSO.RRF fields the fake serves."""

    cui: str
    lat: str
    aui: str
    scui: str
    sdui: str
    sab: str
    tty: str
    code: str
    name: str
    suppress: str

    @classmethod
    def from_fields(cls, fields: Sequence[str]) -> FakeRow:
        """The row from the 18 fields of one MRCONSO.RRF line (as ``mrconso.split_row`` gives)."""
        return cls(
            cui=fields[_COL["CUI"]],
            lat=fields[_COL["LAT"]],
            aui=fields[_COL["AUI"]],
            scui=fields[_COL["SCUI"]],
            sdui=fields[_COL["SDUI"]],
            sab=fields[_COL["SAB"]],
            tty=fields[_COL["TTY"]],
            code=fields[_COL["CODE"]],
            name=fields[_COL["STR"]],
            suppress=fields[_COL["SUPPRESS"]],
        )

    @property
    def obsolete(self) -> bool:
        """SUPPRESS is ``O``: UTS reports the atom as obsolete."""
        return self.suppress == "O"

    @property
    def suppressible(self) -> bool:
        """SUPPRESS is ``O``, ``E`` or ``Y``: UTS reports the atom as suppressible."""
        # MRCONSO SUPPRESS: O obsolete, E suppressed by NLM editors, Y by the source, N not.
        return self.suppress in ("O", "E", "Y")


class FakeUtsData:
    """The atoms a fake UTS serves, indexed by CUI, source code and AUI."""

    def __init__(
        self,
        rows: Iterable[FakeRow],
        *,
        release: str = "2099AA",
        also_served: Iterable[str] = (),
    ) -> None:
        self.rows = list(rows)
        self.release = release
        self.served = {release, *also_served}
        self.by_cui: dict[str, list[FakeRow]] = {}
        self.by_code: dict[tuple[str, str], list[FakeRow]] = {}
        self.by_aui: dict[str, FakeRow] = {}
        for row in self.rows:
            self.by_cui.setdefault(row.cui, []).append(row)
            self.by_code.setdefault((row.sab, row.code), []).append(row)
            self.by_aui.setdefault(row.aui, row)

    @classmethod
    def from_lines(
        cls, lines: Iterable[str], *, path: str = "<rows>", release: str = "2099AA"
    ) -> FakeUtsData:
        """Rows in MRCONSO.RRF format (18 fields, each followed by ``|``)."""
        return cls(
            (
                FakeRow.from_fields(split_row(line, path=path, line_no=n))
                for n, line in enumerate(lines, start=1)
                if line.strip()
            ),
            release=release,
        )

    @classmethod
    def from_mrconso(cls, path: Path, *, release: str = "2099AA") -> FakeUtsData:
        """Read an MRCONSO.RRF-format file (invented rows, for tests)."""
        with open(path, encoding="utf-8", newline="") as fh:
            return cls.from_lines(fh, path=str(path), release=release)


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
    #: how long a ``stall`` waits before answering (set it above the client's read timeout)
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
    """One request as the fake saw it; ``apiKey`` is never stored, only whether it was right."""

    path: str
    params: tuple[tuple[str, str], ...]
    key_ok: bool
    status: int
    fault: str | None
    at: float


def _h(*parts: object) -> int:
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big")


class FakeUts:
    """The fake UTS: routes, pagination, authentication, faults, and a log of what it saw."""

    def __init__(
        self,
        data: FakeUtsData,
        *,
        api_key: str,
        faults: Faults | None = None,
        shuffle_seed: int = 0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.data = data
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

    # -- what tests read -----------------------------------------------------------------------

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

    # -- the core ----------------------------------------------------------------------------

    def handle(self, path: str, query: Mapping[str, Sequence[str]], *, base_url: str) -> FakeReply:
        """Answer ``GET base_url + path?query``; ``path`` starts after the base URL."""
        params = {k: v[-1] for k, v in query.items() if v}
        key_ok = params.pop("apiKey", None) == self._api_key
        url_id = path + "?" + "&".join(f"{k}={v}" for k, v in sorted(params.items()))
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
            if not key_ok or (
                self.faults.revoke_after is not None and count > self.faults.revoke_after
            ):
                reply = self._error(401, "Unauthorized: the apiKey is missing or not valid")
            else:
                reply = self._route(path, params, base_url)
            if fault == "truncated":  # the whole answer promised, half of it sent
                reply = FakeReply(200, reply.headers, reply.body[: max(1, len(reply.body) // 2)])
        delay = self.faults.latency + (self.faults.stall if fault == "stall" else 0.0)
        reply = FakeReply(
            reply.status, reply.headers, reply.body, reply.action, delay, fault or reply.fault
        )
        with self._lock:
            self.seen.append(
                SeenRequest(path, tuple(sorted(params.items())), key_ok, reply.status, fault, now)
            )
        return reply

    def _pick_fault(self, url_id: str, n: int) -> str | None:
        f = self.faults
        if f.script:
            return f.script.pop(0)
        if f.rate <= 0 or not f.kinds:
            return None
        draw = _h(f.seed, url_id, n)
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
            status = 503 if kind == "503" else (500, 502, 503, 504)[_h(path) % 4]
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

    # -- routes --------------------------------------------------------------------------------

    @staticmethod
    def _json(status: int, doc: object, headers: Mapping[str, str] | None = None) -> FakeReply:
        body = json.dumps(doc, ensure_ascii=False).encode("utf-8")
        return FakeReply(status, {"Content-Type": "application/json", **(headers or {})}, body)

    def _error(
        self, status: int, message: str, headers: Mapping[str, str] | None = None
    ) -> FakeReply:
        return self._json(status, {"status": status, "error": message}, headers)

    def _route(self, path: str, params: dict[str, str], base_url: str) -> FakeReply:
        parts = [unquote(p) for p in path.split("/") if p]
        if len(parts) < 4 or parts[0] != "content":
            return self._error(404, "Not Found")
        release = parts[1]
        if release not in self.data.served and release != "current":
            return self._error(404, f"Release {release} is not available")
        concrete = self.data.release if release == "current" else release
        links = _Links(base_url, concrete)
        rest = parts[2:]
        if rest[0] == "CUI" and len(rest) == 2:
            rows = self.data.by_cui.get(rest[1])
            if not rows:
                return self._error(404, f"CUI {rest[1]} not found")
            return self._json(200, self._page(links.concept_json(rest[1], rows), 1, 1, 25))
        if rest[0] == "AUI" and len(rest) == 2:
            row = self.data.by_aui.get(rest[1])
            if row is None:
                return self._error(404, f"AUI {rest[1]} not found")
            return self._json(200, self._page(links.atom_json(row), 1, 1, 25))
        if rest[0] == "CUI" and len(rest) == 3 and rest[2] == "atoms":
            return self._atoms(path, self.data.by_cui.get(rest[1], []), params, links)
        if rest[0] == "source" and len(rest) == 4 and rest[3] == "atoms":
            rows = self.data.by_code.get((rest[1], rest[2]), [])
            return self._atoms(path, rows, params, links)
        return self._error(404, "Not Found")

    def _atoms(
        self, path: str, rows: list[FakeRow], params: dict[str, str], links: _Links
    ) -> FakeReply:
        try:
            size = int(params.get("pageSize", "25"))
            number = int(params.get("pageNumber", "1"))
        except ValueError:
            return self._error(400, "pageSize and pageNumber are whole numbers")
        if size < 1 or number < 1:
            return self._error(400, "pageSize and pageNumber start at 1")
        sabs = set(params["sabs"].split(",")) if params.get("sabs") else None
        ttys = set(params["ttys"].split(",")) if params.get("ttys") else None
        language = params.get("language")
        obsolete_ok = params.get("includeObsolete") == "true"
        suppressible_ok = params.get("includeSuppressible") == "true"
        kept = [
            r
            for r in rows
            if (sabs is None or r.sab in sabs)
            and (ttys is None or r.tty in ttys)
            and (language is None or r.lat == language)
            and (obsolete_ok or not r.obsolete)
            and (suppressible_ok or not r.suppressible)
        ]
        if not kept:
            return self._error(404, "No results")
        # Atoms come in no documented order: shuffle, the same way for every page of one query.
        query_id = (
            path
            + "?"
            + "&".join(f"{k}={v}" for k, v in sorted(params.items()) if k != "pageNumber")
        )
        random.Random(_h(self.shuffle_seed, query_id)).shuffle(kept)
        count = max(1, math.ceil(len(kept) / size))
        page = kept[(number - 1) * size : number * size]
        return self._json(200, self._page([links.atom_json(r) for r in page], number, count, size))

    @staticmethod
    def _page(result: object, number: int, count: int, size: int) -> dict[str, Any]:
        return {"pageSize": size, "pageNumber": number, "pageCount": count, "result": result}


class _Links:
    """The link URLs UTS puts in its answers, for one base URL and concrete release."""

    def __init__(self, base_url: str, release: str) -> None:
        self.content = f"{base_url.rstrip('/')}/content/{release}"
        self.semnet = f"{base_url.rstrip('/')}/semantic-network/{release}"

    def atom_json(self, row: FakeRow) -> dict[str, Any]:
        aui = f"{self.content}/AUI/{row.aui}"
        return {
            "classType": "Atom",
            "ui": row.aui,
            "suppressible": "true" if row.suppressible else "false",
            "obsolete": "true" if row.obsolete else "false",
            "rootSource": row.sab,
            "termType": row.tty,
            "code": f"{self.content}/source/{row.sab}/{quote(row.code, safe='')}",
            "concept": f"{self.content}/CUI/{row.cui}",
            "sourceConcept": (
                f"{self.content}/source/{row.sab}/{quote(row.scui, safe='')}"
                if row.scui
                else "NONE"
            ),
            "sourceDescriptor": (
                f"{self.content}/source/{row.sab}/{quote(row.sdui, safe='')}" if row.sdui else None
            ),
            "attributes": f"{aui}/attributes",
            "parents": "NONE",
            "ancestors": None,
            "children": "NONE",
            "descendants": None,
            "relations": f"{aui}/relations",
            "definitions": "NONE",
            "name": row.name,
            "language": row.lat,
            "contentViewMemberships": [],
        }

    def concept_json(self, cui: str, rows: list[FakeRow]) -> dict[str, Any]:
        preferred = next((r for r in rows if r.lat == "ENG" and r.suppress == "N"), rows[0])
        cui_link = f"{self.content}/CUI/{cui}"
        return {
            "classType": "Concept",
            "ui": cui,
            "suppressible": False,
            "dateAdded": "01-01-2099",
            "majorRevisionDate": "01-01-2099",
            "status": "R",
            "semanticTypes": [{"name": "Invented Type", "uri": f"{self.semnet}/TUI/T999"}],
            "atomCount": len(rows),
            "attributeCount": 0,
            "cvMemberCount": 0,
            "atoms": f"{cui_link}/atoms",
            "definitions": "NONE",
            "relations": "NONE",
            "defaultPreferredAtom": f"{cui_link}/atoms/preferred",
            "relationCount": 0,
            "name": preferred.name,
        }
