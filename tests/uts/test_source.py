"""The REST atom source: probe, `current`, cache first, workers, offline, refresh, 401, progress.

HTTP is played by ``responses``: exact matchers where the request is the point, otherwise the
package's own fake UTS (``testing.add_fake_uts``) over invented rows. Nothing waits: the limiter
and the retries get a sleep that returns at once.
"""

from __future__ import annotations

import ast
import io
import itertools
import json
import logging
import random
import re
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import responses
from responses import matchers

import tempmedbench_synonyms
from helpers import ATOM_PARAMS, wait_until
from helpers.uts import (
    BASE,
    Q_AUI,
    Q_CUI,
    Q_MISSING,
    Q_SOURCE,
    QUERIES,
    REL,
    fake_uts,
    make_uts,
    virtual_limiter,
)
from tempmedbench_synonyms import paths
from tempmedbench_synonyms.atoms import Atom, AtomQuery
from tempmedbench_synonyms.errors import (
    ApiKeyMissingError,
    BadInputError,
    NotAuthorisedError,
    UnavailableError,
)
from tempmedbench_synonyms.secret import ApiKey
from tempmedbench_synonyms.testing import (
    CANARY_KEY,
    FakeUts,
    FakeUtsData,
    Faults,
    VirtualTime,
    add_fake_uts,
    find_secret,
)
from tempmedbench_synonyms.uts.cache import LAYOUT, CacheKey, ResponseCache
from tempmedbench_synonyms.uts.cached import CachedUts
from tempmedbench_synonyms.uts.client import UtsClient
from tempmedbench_synonyms.uts.ratelimit import RateLimiter
from tempmedbench_synonyms.uts.source import RestAtomSource


def source(uts: CachedUts, **kw: Any) -> RestAtomSource:
    return RestAtomSource(uts, workers=kw.pop("workers", 4), tick=0.01, **kw)


class CtrlC(io.StringIO):
    """stderr for the progress, drawn at every step (``clock`` below: 10 s between two looks),
    that is Ctrl-C'd as it is written once ``when(line)`` holds."""

    def __init__(self, when: Callable[[str], bool]) -> None:
        super().__init__()
        self.when = when
        self.clock = itertools.count(0.0, 10.0).__next__

    def write(self, text: str) -> int:
        written = super().write(text)
        if self.when(text):
            raise KeyboardInterrupt
        return written


def seen_paths(fake: FakeUts) -> list[str]:
    return sorted(s.path for s in fake.seen)


EXPECTED_SOURCE_ATOMS = {
    # obsolete (O) and suppressible (E) atoms are not requested; the French one is filtered out
    Atom("A90000001", "Invented fever", "PT", "SNOMEDCT_US", "ENG", "C9000001", True),
    Atom("A90000002", "Made-up pyrexia", "SY", "SNOMEDCT_US", "ENG", "C9000001", True),
}


@responses.activate
def test_fetch_answers_every_query_and_counts_requests(tmp_path: Path) -> None:
    fake = fake_uts()
    add_fake_uts(responses.mock, fake, base_url=BASE)
    result = source(make_uts(tmp_path)).fetch(REL, "C9000001", QUERIES)
    assert result.umls_release == REL
    assert set(result.atoms[Q_SOURCE] or ()) == EXPECTED_SOURCE_ATOMS
    assert {a.aui for a in result.atoms[Q_CUI] or ()} == {"A90000007", "A90000008"}
    assert result.atoms[Q_AUI] == (
        Atom("A90000009", "Invented cough", "PT", "SNOMEDCT_US", "ENG", "C9000003", True),
    )
    assert result.atoms[Q_MISSING] is None  # 404: not found
    assert (result.requests, result.cache_hits) == (5, 0)  # probe + one per query
    assert seen_paths(fake) == sorted(
        [
            f"/content/{REL}/CUI/C9000001",
            f"/content/{REL}/source/SNOMEDCT_US/1000001/atoms",
            f"/content/{REL}/CUI/C9000002/atoms",
            f"/content/{REL}/AUI/A90000009",
            f"/content/{REL}/source/SNOMEDCT_US/9999999/atoms",
        ]
    )
    assert all(s.key_ok for s in fake.seen)


@responses.activate
def test_each_route_sends_exactly_the_spec_parameters(tmp_path: Path) -> None:
    """SPEC section 3's table, pinned with exact matchers (a code is path-encoded)."""
    key = {"apiKey": CANARY_KEY}

    def concept(cui: str) -> dict[str, Any]:
        link = f"{BASE}/content/{REL}/CUI/{cui}"
        return {"pageCount": 1, "result": {"ui": cui, "atoms": f"{link}/atoms"}}

    def atoms(*auis: str) -> dict[str, Any]:
        link = f"{BASE}/content/{REL}/CUI/C9000001"
        return {
            "pageSize": 200,
            "pageNumber": 1,
            "pageCount": 1,
            "result": [
                {"ui": a, "name": a, "termType": "PT", "rootSource": "LNC", "language": "ENG",
                 "obsolete": "false", "suppressible": "false", "concept": link}
                for a in auis
            ],
        }  # fmt: skip

    responses.get(f"{BASE}/content/{REL}/CUI/C9000001", json=concept("C9000001"),
                  match=[matchers.query_param_matcher(key)])  # fmt: skip
    responses.get(
        f"{BASE}/content/{REL}/source/LNC/1234-5%2F6%20x/atoms",
        json=atoms("A1"),
        match=[matchers.query_param_matcher({**key, **ATOM_PARAMS})],
    )
    responses.get(
        f"{BASE}/content/{REL}/CUI/C9000001/atoms",
        json=atoms("A2"),
        match=[matchers.query_param_matcher({**key, **ATOM_PARAMS, "sabs": "LNC"})],
    )
    responses.get(
        f"{BASE}/content/{REL}/AUI/A3000003",
        json={"result": atoms("A3000003")["result"][0]},
        match=[matchers.query_param_matcher(key)],
    )
    queries = [
        AtomQuery("source", "LNC", "1234-5/6 x"),
        AtomQuery("cui", "LNC", "C9000001"),
        AtomQuery("aui", "LNC", "A3000003"),
    ]
    result = source(make_uts(tmp_path), workers=1).fetch(REL, "C9000001", queries)
    auis = [[a.aui for a in result.atoms[q] or ()] for q in queries]
    assert auis == [["A1"], ["A2"], ["A3000003"]]
    assert len(responses.calls) == 4


@responses.activate
def test_a_rerun_is_answered_from_the_cache_with_no_request(tmp_path: Path) -> None:
    fake = fake_uts()
    add_fake_uts(responses.mock, fake, base_url=BASE)
    first = source(make_uts(tmp_path)).fetch(REL, "C9000001", QUERIES)
    second = source(make_uts(tmp_path)).fetch(REL, "C9000001", QUERIES)
    assert second.atoms == first.atoms
    assert (second.requests, second.cache_hits) == (0, 5)
    assert len(fake.seen) == 5


@responses.activate
def test_a_fully_cached_run_needs_no_key(tmp_path: Path) -> None:
    add_fake_uts(responses.mock, fake_uts(), base_url=BASE)
    source(make_uts(tmp_path)).fetch(REL, "C9000001", QUERIES)
    result = source(make_uts(tmp_path, key=None)).fetch(REL, "C9000001", QUERIES)
    assert (result.requests, result.cache_hits) == (0, 5)


@responses.activate
def test_a_missing_key_is_exit_3_before_any_request(tmp_path: Path) -> None:
    fake = fake_uts()
    add_fake_uts(responses.mock, fake, base_url=BASE)
    with pytest.raises(ApiKeyMissingError) as info:
        source(make_uts(tmp_path, key=None)).fetch(REL, "C9000001", QUERIES)
    assert info.value.exit_code == 3
    assert fake.seen == []


@responses.activate
def test_duplicate_queries_are_fetched_once(tmp_path: Path) -> None:
    fake = fake_uts()
    add_fake_uts(responses.mock, fake, base_url=BASE)
    result = source(make_uts(tmp_path)).fetch(REL, "C9000001", [Q_SOURCE, Q_SOURCE, Q_AUI])
    assert result.requests == 3
    assert list(result.atoms) == [Q_SOURCE, Q_AUI]


@responses.activate
def test_aui_queries_differing_only_in_sab_send_one_request(tmp_path: Path) -> None:
    fake = fake_uts()
    add_fake_uts(responses.mock, fake, base_url=BASE)
    twins = [AtomQuery("aui", "SNOMEDCT_US", "A90000009"), AtomQuery("aui", "MTH", "A90000009")]
    result = source(make_uts(tmp_path)).fetch(REL, "C9000001", twins)
    assert result.requests == 2  # the probe and one AUI request
    assert result.atoms[twins[0]] == result.atoms[twins[1]] is not None
    assert [s.path for s in fake.seen].count(f"/content/{REL}/AUI/A90000009") == 1


@responses.activate
def test_current_is_resolved_once_from_the_probe_links(tmp_path: Path) -> None:
    fake = fake_uts()
    add_fake_uts(responses.mock, fake, base_url=BASE)
    now = VirtualTime(1_000_000.0)
    result = source(make_uts(tmp_path, now=now)).fetch("current", "C9000001", QUERIES)
    assert result.umls_release == REL
    assert fake.seen[0].path == "/content/current/CUI/C9000001"  # the probe comes first
    assert [p for p in seen_paths(fake) if "current" in p] == ["/content/current/CUI/C9000001"]
    assert result.requests == 5
    # Within a day: nothing is sent at all.
    again = source(make_uts(tmp_path, now=now)).fetch("current", "C9000001", QUERIES)
    assert (again.requests, again.cache_hits, again.umls_release) == (0, 5, REL)
    # A day later: `current` is asked again (one request), the atoms stay cached.
    now.sleep(24 * 3600 + 1)
    later = source(make_uts(tmp_path, now=now)).fetch("current", "C9000001", QUERIES)
    assert (later.requests, later.cache_hits, later.umls_release) == (1, 4, REL)


@responses.activate
def test_a_release_that_is_not_served_is_unavailable_and_fetches_no_atoms(tmp_path: Path) -> None:
    fake = fake_uts()
    add_fake_uts(responses.mock, fake, base_url=BASE)
    with pytest.raises(UnavailableError) as info:
        source(make_uts(tmp_path)).fetch("2098AB", "C9000001", QUERIES)
    assert str(info.value) == (
        f"UMLS release 2098AB is not served at {BASE}: its probe concept C9000001 answered "
        "404 Not Found"
    )
    assert info.value.exit_code == 4
    assert seen_paths(fake) == ["/content/2098AB/CUI/C9000001"]
    # The 404 is cached like every answer: offline, the same verdict without a request.
    with pytest.raises(UnavailableError, match="not served"):
        source(make_uts(tmp_path, offline=True)).fetch("2098AB", "C9000001", QUERIES)
    assert len(fake.seen) == 1


NOT_SERVED_CHECK = (
    "check the table's umls_release or --umls-release; UTS serves only some releases (see "
    "https://documentation.uts.nlm.nih.gov/rest/home.html), and a regeneration can read a local "
    "MRCONSO.RRF of that release with --mrconso PATH"
)


@responses.activate
def test_a_not_served_verdict_from_the_cache_says_so_and_when(tmp_path: Path) -> None:
    fake = fake_uts()
    add_fake_uts(responses.mock, fake, base_url=BASE)
    now = VirtualTime(1_700_000_000.0)  # 2023-11-14 22:13:20 UTC
    with pytest.raises(UnavailableError) as live:
        source(make_uts(tmp_path, now=now)).fetch("2098AB", "C9000001", QUERIES)
    assert live.value.hint == NOT_SERVED_CHECK
    now.sleep(90 * 24 * 3600)
    with pytest.raises(UnavailableError) as cached:
        source(make_uts(tmp_path, now=now)).fetch("2098AB", "C9000001", QUERIES)
    assert str(cached.value) == (
        f"UMLS release 2098AB is not served at {BASE}, as the cache says: its probe concept "
        "C9000001 answered 404 Not Found when asked on 2023-11-14 22:13 UTC"
    )
    assert cached.value.hint == (
        "that answer may be out of date: run again with --refresh to ask UMLS again; if it "
        f"still answers 404, {NOT_SERVED_CHECK}"
    )
    with pytest.raises(UnavailableError) as offline:
        source(make_uts(tmp_path, offline=True, now=now)).fetch("2098AB", "C9000001", QUERIES)
    assert str(offline.value) == str(cached.value)
    assert offline.value.hint == (
        "that answer may be out of date: run again with --refresh instead of --offline to ask "
        f"UMLS again; if it still answers 404, {NOT_SERVED_CHECK}"
    )
    assert len(fake.seen) == 1
    # --refresh asks again; UMLS serves it now.
    fake.data.served.add("2098AB")
    result = source(make_uts(tmp_path, refresh=True)).fetch("2098AB", "C9000001", [Q_AUI])
    assert result.umls_release == "2098AB" and result.atoms[Q_AUI] is not None


@responses.activate
def test_a_not_found_without_a_json_body_is_neither_cached_nor_taken_for_not_served(
    tmp_path: Path,
) -> None:
    # A base URL that is not the UMLS REST API: a web server's plain 404 for everything.
    responses.get(re.compile(re.escape(BASE) + "/.*"), status=404, body="Not Found")
    with pytest.raises(UnavailableError) as info:
        source(make_uts(tmp_path)).fetch(REL, "C9000001", QUERIES)
    assert str(info.value) == (
        f"{BASE} answered HTTP 404 for /content/{REL}/CUI/C9000001 with a text/plain body, not "
        "the JSON the UMLS REST API sends: this does not look like the UMLS REST API"
    )
    assert not list((tmp_path / LAYOUT).rglob("*.json"))  # nothing cached
    with pytest.raises(UnavailableError, match="does not look like the UMLS REST API"):
        source(make_uts(tmp_path)).fetch(REL, "C9000001", QUERIES)
    assert len(responses.calls) == 2  # asked again: nothing was remembered


@responses.activate
def test_an_atoms_answer_without_result_is_never_cached(tmp_path: Path) -> None:
    # Registered before the fake, so this path gets a 200 with no 'result' for each of the 4
    # attempts (responses uses up the first of several matches; the fake would answer a 5th).
    path = f"/content/{REL}/source/SNOMEDCT_US/1000001/atoms"
    for _ in range(4):
        responses.get(BASE + path, json={"pageSize": 200, "pageNumber": 1, "pageCount": 1})
    add_fake_uts(responses.mock, fake_uts(), base_url=BASE)
    with pytest.raises(UnavailableError) as info:
        source(make_uts(tmp_path)).fetch(REL, "C9000001", [Q_SOURCE, Q_AUI])
    assert str(info.value) == (
        f"UMLS could not answer {path} after 4 attempts: HTTP 200 with a JSON body that has no "
        "'result'"
    )
    cache = ResponseCache(tmp_path, BASE)
    key = CacheKey.make(REL, path, ATOM_PARAMS)
    assert cache.get(key) is None  # not cached as an empty list
    assert sum(1 for c in responses.calls if urlsplit(c.request.url).path.endswith(path)) == 4


# -- identifiers that cannot be sent as they are ---------------------------------------------------


@responses.activate
def test_a_bad_identifier_stops_the_run_before_any_request(tmp_path: Path) -> None:
    fake = fake_uts()
    add_fake_uts(responses.mock, fake, base_url=BASE)
    queries = [Q_SOURCE, AtomQuery("source", "SNOMEDCT_US", "..")]
    with pytest.raises(BadInputError, match=r"^code '\.\.' cannot be sent"):
        source(make_uts(tmp_path)).fetch(REL, "C9000001", queries)
    assert fake.seen == []


# -- `current` behind a base URL whose path holds "content" ----------------------------------------


def test_current_is_resolved_behind_a_base_url_with_content_in_its_path(tmp_path: Path) -> None:
    mirror = "https://mirror.invalid/content/uts/rest"
    fake = fake_uts()
    with responses.RequestsMock() as rsps:
        add_fake_uts(rsps, fake, base_url=mirror)
        client = UtsClient(base_url=mirror, api_key=ApiKey(CANARY_KEY),
                           limiter=virtual_limiter(), sleep=lambda s: None)  # fmt: skip
        uts = CachedUts(client, ResponseCache(tmp_path, mirror))
        result = source(uts).fetch("current", "C9000001", QUERIES)
    assert result.umls_release == REL
    assert [p for p in seen_paths(fake) if "current" in p] == ["/content/current/CUI/C9000001"]
    assert {p.split("/")[2] for p in seen_paths(fake)} == {"current", REL}
    assert result.atoms[Q_AUI] is not None


# -- cancelling: an error or Ctrl-C stops every worker at once -------------------------------------


def _cancellable_uts(tmp_path: Path, vt: VirtualTime) -> CachedUts:
    """A client on virtual time whose long sleeps block until the run is cancelled (or, if
    no cancel comes within 60 s, a hang, move the clock on by the whole sleep)."""
    cancel = threading.Event()
    sleep = vt.interruptible(cancel, timeout=60)
    client = UtsClient(
        base_url=BASE,
        api_key=ApiKey(CANARY_KEY),
        limiter=RateLimiter(20, clock=vt.clock, sleep=sleep, cancel=cancel),
        clock=vt.clock,
        sleep=sleep,
        rng=random.Random(1),
    )
    return CachedUts(client, ResponseCache(tmp_path, BASE))


def _concept_json(cui: str) -> dict[str, Any]:
    return {"result": {"ui": cui, "atoms": f"{BASE}/content/{REL}/CUI/{cui}/atoms"}}


MANY = [AtomQuery("aui", "MTH", f"A9{k:07d}") for k in range(1, 9)]


def _aui_json(aui: str) -> dict[str, Any]:
    return {"result": {"ui": aui, "name": aui, "termType": "PN", "rootSource": "MTH",
                       "language": "ENG", "obsolete": "false", "suppressible": "false",
                       "concept": f"{BASE}/content/{REL}/CUI/C9000001"}}  # fmt: skip


def _no_workers_left() -> bool:
    return not [t for t in threading.enumerate() if t.name.startswith("uts-worker")]


@responses.activate
def test_a_retry_after_beyond_the_budget_ends_the_run_without_pausing_the_others(
    tmp_path: Path,
) -> None:
    """Two workers on virtual time: one request gets a 150 s Retry-After (the budget is 120 s);
    it fails at once, the run ends unavailable, and no worker sleeps out the 150 s."""
    vt = VirtualTime()
    responses.get(f"{BASE}/content/{REL}/CUI/C9000001", json=_concept_json("C9000001"))
    responses.get(f"{BASE}/content/{REL}/AUI/{MANY[0].ident}", status=429,
                  headers={"Retry-After": "150"})  # fmt: skip
    for q in MANY[1:]:
        responses.get(f"{BASE}/content/{REL}/AUI/{q.ident}", json=_aui_json(q.ident))
    uts = _cancellable_uts(tmp_path, vt)
    with pytest.raises(UnavailableError) as info:
        source(uts, workers=2).fetch(REL, "C9000001", MANY)
    assert str(info.value) == (
        f"UMLS could not answer /content/{REL}/AUI/{MANY[0].ident} after 1 attempts: HTTP 429 "
        "Too Many Requests with Retry-After 150 s, beyond the 120 s this tool waits for one "
        "request"
    )
    assert vt.now - 1000.0 < 10.0  # nobody waited out the Retry-After, even on virtual time
    assert not any(s >= 150 for s in vt.sleeps + vt.cut_short)
    assert uts.client is not None
    assert uts.client.limiter.cancel_event.is_set()  # the others were told to stop
    assert _no_workers_left()


@responses.activate
def test_ctrl_c_during_a_429_pause_ends_the_fetch_at_once(tmp_path: Path) -> None:
    """Two workers on virtual time: a 60 s Retry-After fits the budget, so every worker pauses;
    Ctrl-C then wakes them all, and no one sleeps out the pause."""
    vt = VirtualTime()
    responses.get(f"{BASE}/content/{REL}/CUI/C9000001", json=_concept_json("C9000001"))
    for q in MANY:
        responses.get(f"{BASE}/content/{REL}/AUI/{q.ident}", status=429,
                      headers={"Retry-After": "60"})  # fmt: skip
    uts = _cancellable_uts(tmp_path, vt)
    client = uts.client
    assert client is not None
    # Ctrl-C as the progress is drawn once a worker is asleep in the 60 s pause.
    stderr = CtrlC(lambda line: vt.blocked.is_set())
    with pytest.raises(KeyboardInterrupt):
        source(uts, workers=2, progress_stream=stderr, clock=stderr.clock).fetch(
            REL, "C9000001", MANY
        )
    # Had a worker slept out the pause, the virtual clock would have reached its end.
    assert vt.now - 1000.0 < 60.0
    assert vt.cut_short and all(s >= 60.0 for s in vt.cut_short)
    assert 429 in [call.response.status_code for call in responses.calls]  # type: ignore[union-attr]
    assert client.limiter.cancel_event.is_set() and _no_workers_left()


@responses.activate
def test_offline_uses_only_the_cache(tmp_path: Path) -> None:
    add_fake_uts(responses.mock, fake_uts(), base_url=BASE)
    source(make_uts(tmp_path)).fetch(REL, "C9000001", [Q_SOURCE, Q_AUI])
    calls = len(responses.calls)
    offline = source(make_uts(tmp_path, offline=True))
    assert offline.fetch(REL, "C9000001", [Q_SOURCE]).requests == 0
    with pytest.raises(UnavailableError) as info:
        offline.fetch(REL, "C9000001", [Q_SOURCE, Q_CUI, Q_MISSING])
    assert str(info.value) == (
        "--offline, and the cache does not hold the atoms of 2 of 3 concepts of release 2099AA "
        "(cui RXNORM C9000002, source SNOMEDCT_US 9999999)"
    )
    assert info.value.hint == (
        "run once without --offline to fill the cache (a regeneration can also read a local "
        "MRCONSO.RRF with --mrconso PATH)"
    )
    assert len(responses.calls) == calls


@responses.activate
def test_offline_a_corrupt_entry_is_unavailable_and_the_message_says_it_was_corrupt(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The mismatch that a hand-edited entry used to cause blamed UMLS drift; now the entry is
    not trusted, and offline the run stops naming it."""
    add_fake_uts(responses.mock, fake_uts(), base_url=BASE)
    source(make_uts(tmp_path)).fetch(REL, "C9000001", [Q_SOURCE, Q_CUI])
    request = paths.for_query(REL, Q_CUI)
    key = CacheKey.make(REL, request.path, request.param_dict)
    (entry,) = (tmp_path / LAYOUT).rglob(f"{REL}/{key.digest}.json")
    entry.write_bytes(entry.read_bytes()[:-10])  # torn by a disk fault
    memos = list((tmp_path / LAYOUT).rglob(".memo/2099AA/*.json"))
    assert len(memos) == 1
    memos[0].unlink()  # else the memo, saved while the entries were whole, answers alone
    with pytest.raises(UnavailableError) as info:
        source(make_uts(tmp_path, offline=True)).fetch(REL, "C9000001", [Q_SOURCE, Q_CUI])
    size = len(entry.read_bytes().split(b"\n", 1)[1])
    assert str(info.value) == (
        "--offline, and the cache does not hold the atoms of 1 of 2 concepts of release 2099AA "
        f"(cui RXNORM C9000002): its entry {entry} is corrupt (its body is {size} bytes, its "
        f"header says {size + 10}: cut short or edited)"
    )
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="tempmedbench_synonyms"):
        again = source(make_uts(tmp_path)).fetch(REL, "C9000001", [Q_SOURCE, Q_CUI])
    assert (again.requests, again.cache_hits) == (1, 2)  # the probe and Q_SOURCE are hits
    assert [r.getMessage() for r in caplog.records] == [
        f"cache entry {entry} is corrupt (its body is {size} bytes, its header says "
        f"{size + 10}: cut short or edited); fetching it again"
    ]
    assert find_secret(CANARY_KEY, texts={"error": str(info.value)}, folders=[tmp_path]) == []


@responses.activate
def test_offline_never_opens_a_socket(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    add_fake_uts(responses.mock, fake_uts(), base_url=BASE)
    expected = source(make_uts(tmp_path)).fetch(REL, "C9000001", QUERIES)
    responses.mock.stop()  # from here on, a request would really go out...
    opened: list[object] = []

    def refuse(*args: object, **kwargs: object) -> None:
        opened.append(args)
        raise AssertionError("a socket was opened offline")

    monkeypatch.setattr(socket, "socket", refuse)  # ...and fail loudly
    monkeypatch.setattr(socket, "create_connection", refuse)
    result = source(make_uts(tmp_path, offline=True)).fetch(REL, "C9000001", QUERIES)
    assert result.atoms == expected.atoms
    assert (result.requests, result.cache_hits, opened) == (0, 5, [])
    with pytest.raises(UnavailableError) as info:
        source(make_uts(tmp_path, offline=True)).fetch(REL, "C9000003", QUERIES)
    assert str(info.value) == (
        "--offline, and the cache does not hold the answer to /content/2099AA/CUI/C9000003"
    )
    assert opened == []


def test_offline_with_an_empty_cache_cannot_resolve_current(tmp_path: Path) -> None:
    with pytest.raises(UnavailableError, match="which concrete release 'current' is"):
        source(make_uts(tmp_path, offline=True)).fetch("current", "C9000001", QUERIES)


@responses.activate
def test_refresh_fetches_everything_again(tmp_path: Path) -> None:
    fake = fake_uts()
    add_fake_uts(responses.mock, fake, base_url=BASE)
    source(make_uts(tmp_path)).fetch(REL, "C9000001", QUERIES)
    result = source(make_uts(tmp_path, refresh=True)).fetch(REL, "C9000001", QUERIES)
    assert (result.requests, result.cache_hits) == (5, 0)
    assert len(fake.seen) == 10


@responses.activate
def test_not_found_is_cached_as_not_found(tmp_path: Path) -> None:
    fake = fake_uts()
    add_fake_uts(responses.mock, fake, base_url=BASE)
    source(make_uts(tmp_path)).fetch(REL, "C9000001", [Q_MISSING])
    again = source(make_uts(tmp_path)).fetch(REL, "C9000001", [Q_MISSING])
    assert again.atoms == {Q_MISSING: None}
    assert again.requests == 0


@responses.activate
def test_transient_faults_are_retried_and_every_answer_is_complete(tmp_path: Path) -> None:
    fake = fake_uts(rate=0.5, kinds=("429", "5xx", "reset", "html502", "truncated"), seed=3)
    add_fake_uts(responses.mock, fake, base_url=BASE)
    clean = fake_uts()
    with responses.RequestsMock() as other:
        add_fake_uts(other, clean, base_url=BASE)
        expected = source(make_uts(tmp_path / "clean")).fetch(REL, "C9000001", QUERIES)
    result = source(make_uts(tmp_path / "faulty")).fetch(REL, "C9000001", QUERIES)
    assert {q: set(v or ()) for q, v in result.atoms.items()} == {
        q: set(v or ()) for q, v in expected.atoms.items()
    }
    failed = sum(1 for s in fake.seen if s.fault is not None)
    assert failed > 0
    assert result.requests == len(fake.seen) == 5 + failed


@responses.activate
def test_a_401_stops_every_worker_at_once(tmp_path: Path) -> None:
    rows = [
        f"C9{k:06d}|ENG|P|L9{k:06d}|PF|S9{k:06d}|Y|A9{k:07d}||{k}||MTH|PN|{k}|Invented {k}|0|N||"
        for k in range(1, 61)
    ]

    def cached() -> int:
        return sum(1 for p in (tmp_path / LAYOUT).rglob("*.json") if p.parent.name == REL)

    class Revoked(FakeUts):
        """Its first 401 waits until the 10 answers before it are complete (cached): one still
        on its way when the 401 comes would be cut off by the cancel, and not cached."""

        def handle(self, path: str, query: Any, *, base_url: str) -> Any:
            reply = super().handle(path, query, base_url=base_url)
            if reply.status == 401:
                wait_until(lambda: cached() == 10, "the 10 answers before the 401")
            return reply

    fake = Revoked(
        FakeUtsData.from_lines(rows),
        api_key=CANARY_KEY,
        faults=Faults(revoke_after=10),
    )
    add_fake_uts(responses.mock, fake, base_url=BASE)
    queries = [AtomQuery("source", "MTH", str(k)) for k in range(1, 61)]
    uts = make_uts(tmp_path)
    with pytest.raises(NotAuthorisedError) as info:
        source(uts, workers=4).fetch(REL, "C9000001", queries)
    assert info.value.status == 401
    # Requests already on the wire may finish; none is started after the first 401 is seen.
    assert len(fake.seen) <= 10 + 4
    assert fake.count(401) >= 1
    # What was complete before the 401 is cached and will not be fetched again.
    assert cached() == 10


@responses.activate
def test_an_interrupted_run_resumes_from_the_cache(tmp_path: Path) -> None:
    rows = [
        f"C9{k:06d}|ENG|P|L9{k:06d}|PF|S9{k:06d}|Y|A9{k:07d}||{k}||MTH|PN|{k}|Invented {k}|0|N||"
        for k in range(1, 41)
    ]
    fake = FakeUts(FakeUtsData.from_lines(rows), api_key=CANARY_KEY)
    add_fake_uts(responses.mock, fake, base_url=BASE)
    queries = [AtomQuery("source", "MTH", str(k)) for k in range(1, 41)]

    def at_15(line: str) -> bool:  # Ctrl-C once the progress says 15 of the 40 are done
        found = re.match(r"UMLS 2099AA: (\d+)/40 concepts", line)
        return found is not None and int(found[1]) >= 15

    stderr = CtrlC(at_15)
    with pytest.raises(KeyboardInterrupt):
        source(make_uts(tmp_path), progress_stream=stderr, clock=stderr.clock).fetch(
            REL, "C9000001", queries
        )
    sent = len(fake.seen)
    # What the run had: the answers it cached. Not every answer the fake sent: one on its way
    # when Ctrl-C came is dropped, and fetched again (a loaded machine made that happen).
    done_paths = {
        json.loads(entry.read_bytes().split(b"\n", 1)[0])["key"][1]
        for entry in (tmp_path / LAYOUT).rglob("*.json")
        if entry.parent.name == REL
    }
    assert done_paths <= {s.path for s in fake.seen if s.status == 200}
    assert len(done_paths) >= 16  # the probe and the 15 concepts the progress said were done
    result = source(make_uts(tmp_path)).fetch(REL, "C9000001", queries)
    resent = {s.path for s in fake.seen[sent:]}
    assert resent.isdisjoint(done_paths)  # nothing it already had is fetched again
    assert result.requests == 41 - len(done_paths)
    assert result.cache_hits == len(done_paths)
    assert all(result.atoms[q] for q in queries)


@responses.activate
def test_fetch_writes_progress_to_its_stream(tmp_path: Path) -> None:
    add_fake_uts(responses.mock, fake_uts(), base_url=BASE)
    out = io.StringIO()
    result = source(make_uts(tmp_path), progress_stream=out).fetch(REL, "C9000001", QUERIES)
    last = out.getvalue().splitlines()[-1]
    # the probe and the 4 queries: the same count as the report's
    assert result.requests == 5
    assert last.startswith("UMLS 2099AA: 4/4 concepts, 0 cache hits, 5 requests, ")
    warm = io.StringIO()
    again = source(make_uts(tmp_path), progress_stream=warm, clock=lambda: 0.0).fetch(
        REL, "C9000001", QUERIES
    )
    assert again.cache_hits == 5  # the probe and the 4 concepts
    assert warm.getvalue() == "UMLS 2099AA: 4/4 concepts, 5 cache hits, 0 requests, done in 0 s\n"
    assert CANARY_KEY not in out.getvalue()


@responses.activate
def test_progress_and_report_count_the_same_cache_hits(tmp_path: Path) -> None:
    """The probe's answer from the cache is a cache hit in both (it was 3 and 4 before)."""
    add_fake_uts(responses.mock, fake_uts(), base_url=BASE)
    source(make_uts(tmp_path)).fetch(REL, "C9000001", QUERIES[:3])
    out = io.StringIO()
    result = source(make_uts(tmp_path), progress_stream=out, clock=lambda: 0.0).fetch(
        REL, "C9000001", QUERIES
    )
    assert (result.requests, result.cache_hits) == (1, 4)  # the probe and 3 concepts cached
    assert out.getvalue().splitlines()[-1] == (
        "UMLS 2099AA: 4/4 concepts, 4 cache hits, 1 request, done in 0 s"
    )


@responses.activate
def test_an_unwritable_cache_is_bad_input_at_the_first_answer(tmp_path: Path) -> None:
    fake = fake_uts()
    add_fake_uts(responses.mock, fake, base_url=BASE)
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache folder should be")
    with pytest.raises(BadInputError) as info:
        source(make_uts(blocked / "cache")).fetch(REL, "C9000001", QUERIES)
    assert "cannot write to the cache folder" in str(info.value)
    assert info.value.exit_code == 2
    assert len(fake.seen) == 1  # stopped at the probe, before any atom was fetched


def test_the_source_talks_only_to_the_cached_layer() -> None:
    """Not to the client nor the cache: it imports neither, and reaches through ``uts`` to
    neither (``uts.client``, ``uts.cache``)."""
    path = Path(tempmedbench_synonyms.__file__).parent / "uts" / "source.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    modules = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert sorted(m for m in modules if m and m.startswith("tempmedbench_synonyms.uts")) == [
        "tempmedbench_synonyms.uts.batch",  # the one batch path, shared with the lookups
        "tempmedbench_synonyms.uts.cached",
        "tempmedbench_synonyms.uts.models",  # SPEC 3's mapping of a UTS atom
    ]
    reached = {
        n.attr
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute)
        and ((isinstance(n.value, ast.Attribute) and n.value.attr == "uts")
             or (isinstance(n.value, ast.Name) and n.value.id == "uts"))
    }  # fmt: skip
    assert reached.isdisjoint({"client", "cache"})
    assert {"probe", "lookup", "lookup_cached", "need_network", "load_memo"} <= reached
