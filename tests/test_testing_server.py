"""The fake UTS (``tempmedbench_synonyms.testing``): response shapes, pages, faults, over sockets.

Every server here listens on 127.0.0.1 only and is stopped before its test ends.
"""

from __future__ import annotations

import http.client
import json
import random
import threading
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import pytest
import requests
import responses

from helpers import ATOM_PARAMS, FIXTURES, HELD, ROOMY_TIMEOUT
from helpers.uts import virtual_limiter
from tempmedbench_synonyms.errors import NotAuthorisedError
from tempmedbench_synonyms.secret import ApiKey
from tempmedbench_synonyms.testing import (
    CANARY_KEY,
    FakeUts,
    FakeUtsData,
    FakeUtsServer,
    Faults,
    RunningFakeUts,
    add_fake_uts,
    find_secret,
    invented_rows,
)
from tempmedbench_synonyms.uts.client import RetryPolicy, UtsClient


def data(concepts: int = 3, atoms: int = 4) -> FakeUtsData:
    return FakeUtsData.from_lines(invented_rows(concepts, atoms_per_concept=atoms))


@pytest.fixture
def server() -> Iterator[FakeUtsServer]:
    with FakeUtsServer(FakeUts(data(), api_key=CANARY_KEY)) as srv:
        yield srv


def get(
    server: FakeUtsServer, path: str, timeout: float = ROOMY_TIMEOUT, **params: str
) -> tuple[int, dict[str, str], bytes]:
    split = urlsplit(server.base_url)
    conn = http.client.HTTPConnection(split.hostname or "", split.port, timeout=timeout)
    try:
        query = urlencode({"apiKey": CANARY_KEY, **params})
        conn.request("GET", f"{split.path}{path}?{query}")
        resp = conn.getresponse()
        return resp.status, dict(resp.getheaders()), resp.read()
    finally:
        conn.close()


def test_the_server_listens_on_loopback_only(server: FakeUtsServer) -> None:
    assert server.base_url.startswith("http://127.0.0.1:")
    assert server.base_url.endswith("/rest")
    with pytest.raises(ValueError, match="loopback"):
        FakeUtsServer(server.fake, host="0.0.0.0")


def test_concept_shape(server: FakeUtsServer) -> None:
    status, headers, body = get(server, "/content/2099AA/CUI/C9000001")
    assert status == 200 and headers["Content-Type"] == "application/json"
    doc = json.loads(body)
    assert (doc["pageSize"], doc["pageNumber"], doc["pageCount"]) == (25, 1, 1)
    concept = doc["result"]
    assert concept["classType"] == "Concept"
    assert concept["ui"] == "C9000001"
    assert concept["suppressible"] is False
    assert concept["atomCount"] == 5
    assert concept["definitions"] == "NONE"
    assert concept["atoms"] == f"{server.base_url}/content/2099AA/CUI/C9000001/atoms"


def test_current_answers_with_links_to_the_concrete_release(server: FakeUtsServer) -> None:
    status, _, body = get(server, "/content/current/CUI/C9000001")
    assert status == 200
    assert "/content/2099AA/CUI/C9000001/atoms" in json.loads(body)["result"]["atoms"]


def test_atom_shape_has_string_flags_and_cui_only_in_links(server: FakeUtsServer) -> None:
    _, _, body = get(server, "/content/2099AA/AUI/A90000001")
    atom = json.loads(body)["result"]
    assert atom["classType"] == "Atom"
    assert (atom["obsolete"], atom["suppressible"]) == ("false", "false")
    assert atom["concept"] == f"{server.base_url}/content/2099AA/CUI/C9000001"
    assert atom["code"] == f"{server.base_url}/content/2099AA/source/SNOMEDCT_US/1000000"
    # no MRHIER: no hierarchy, said as NLM's sample atom says it ("NONE", and null for these)
    assert (atom["parents"], atom["ancestors"]) == ("NONE", None)
    assert "cui" not in atom and "CUI" not in atom


def test_atoms_filters_like_uts(server: FakeUtsServer) -> None:
    _, _, body = get(server, "/content/2099AA/CUI/C9000001/atoms", **ATOM_PARAMS)
    names = sorted(a["ui"] for a in json.loads(body)["result"])
    # 4 SNOMEDCT_US atoms (the last one suppressible: filtered out) and one MTH atom
    assert names == ["A90000001", "A90000002", "A90000003", "A90000005"]
    _, _, body = get(server, "/content/2099AA/CUI/C9000001/atoms", **ATOM_PARAMS, sabs="MTH")
    assert [a["ui"] for a in json.loads(body)["result"]] == ["A90000005"]
    _, _, body = get(
        server, "/content/2099AA/CUI/C9000001/atoms", **{**ATOM_PARAMS,
        "includeSuppressible": "true"},
    )  # fmt: skip
    assert len(json.loads(body)["result"]) == 5


def test_pages_split_one_stable_shuffled_order() -> None:
    fake = FakeUts(data(concepts=1, atoms=60), api_key=CANARY_KEY, shuffle_seed=4)
    with FakeUtsServer(fake) as server:
        path = "/content/2099AA/source/SNOMEDCT_US/1000000/atoms"
        pages = []
        for n in (1, 2, 3):
            status, _, body = get(server, path, pageSize="25", pageNumber=str(n))
            doc = json.loads(body)
            assert status == 200 and (doc["pageNumber"], doc["pageCount"]) == (n, 3)
            pages.append([a["ui"] for a in doc["result"]])
        _, _, again = get(server, path, pageSize="25")
    assert [len(p) for p in pages] == [25, 25, 9]  # 60 atoms, the suppressible one filtered out
    everything = pages[0] + pages[1] + pages[2]
    assert len(set(everything)) == 59  # no atom twice, none missing
    assert everything != sorted(everything)  # shuffled...
    assert [a["ui"] for a in json.loads(again)["result"]] == pages[0]  # ...the same each time


@pytest.mark.parametrize(
    "path",
    [
        "/content/2099AA/CUI/C0000000",
        "/content/2099AA/AUI/A00000000",
        "/content/2099AA/source/SNOMEDCT_US/nope/atoms",
        "/content/2098AB/CUI/C9000001",
        "/content/2099AA/CUI/C9000001/atoms?sabs=LNC",
        "/nothing/here",
    ],
)
def test_unknown_things_are_404(server: FakeUtsServer, path: str) -> None:
    base, _, query = path.partition("?")
    status, _, body = get(server, base, **dict([query.split("=")]) if query else {})
    assert status == 404
    assert json.loads(body)["status"] == 404


def test_a_wrong_key_is_401(server: FakeUtsServer) -> None:
    split = urlsplit(server.base_url)
    conn = http.client.HTTPConnection(split.hostname or "", split.port, timeout=5)
    try:
        conn.request("GET", f"{split.path}/content/2099AA/CUI/C9000001?apiKey=wrong")
        assert conn.getresponse().status == 401
    finally:
        conn.close()
    assert server.fake.seen[-1].key_ok is False


def test_the_server_never_prints_the_request_line(
    server: FakeUtsServer, capfd: pytest.CaptureFixture[str]
) -> None:
    get(server, "/content/2099AA/CUI/C9000001")
    get(server, "/content/2099AA/CUI/C0000000")
    out, err = capfd.readouterr()
    assert find_secret(CANARY_KEY, texts={"stdout": out, "stderr": err}) == []
    assert err == ""


# -- faults, as the real client sees them over a socket -----------------------------------------


def client_for(
    server: FakeUtsServer,
    *,
    timeout: float = ROOMY_TIMEOUT,
    sleep: Callable[[float], None] = lambda s: None,
) -> UtsClient:
    return UtsClient(
        base_url=server.base_url,
        api_key=ApiKey(CANARY_KEY),
        limiter=virtual_limiter(),
        timeout=timeout,
        retry=RetryPolicy(),
        sleep=sleep,
        rng=random.Random(0),
    )


@pytest.mark.parametrize("kind", ["reset", "html502", "truncated", "5xx", "429", "stall"])
def test_each_fault_is_retried_by_the_client(kind: str) -> None:
    """Two faults, then the answer: three requests. A stall is held until the client gives up,
    at its timeout (0.3 s); once both faults are met, the pause before the next attempt makes
    the timeout roomy, so the answer need not come within 0.3 s, however busy the machine."""
    fake = FakeUts(data(), api_key=CANARY_KEY, faults=Faults(script=[kind, kind], stall=HELD))
    timeout = 0.3 if kind == "stall" else ROOMY_TIMEOUT
    clients: list[UtsClient] = []

    def pause(seconds: float) -> None:  # the retry's wait, before the next attempt
        if fake.count() == 2:
            clients[0].timeout = ROOMY_TIMEOUT

    with FakeUtsServer(fake) as server, closing(client_for(server, timeout=timeout,
                                                          sleep=pause)) as client:  # fmt: skip
        clients.append(client)
        atoms = client.get_listed("/content/2099AA/source/SNOMEDCT_US/1000001/atoms", ATOM_PARAMS)
    assert sorted(a["ui"] for a in (atoms.items if atoms else [])) == [
        "A90000006",
        "A90000007",
        "A90000008",
    ]
    assert client.stats.requests == 3
    assert client.stats.retries == 2
    assert [s.fault for s in fake.seen] == [kind, kind, None]


class _Arrivals(FakeUts):
    """A fake that says when a request has arrived (it is logged before any stall)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.arrived = threading.Event()

    def handle(self, *args: Any, **kwargs: Any) -> Any:
        reply = super().handle(*args, **kwargs)
        self.arrived.set()
        return reply


def test_stop_ends_a_stalled_request_at_once_unanswered() -> None:
    """Teardown never waits out a stall (here two minutes): the request in it ends, unanswered,
    and ``stop`` returns; the deadline below is half the stall, so a ``stop`` that waited it
    out cannot pass."""
    fake = _Arrivals(data(), api_key=CANARY_KEY, faults=Faults(script=["stall"], stall=120.0))
    server = FakeUtsServer(fake).start()
    outcome: list[str] = []

    def ask() -> None:
        try:
            get(server, "/content/2099AA/CUI/C9000001", timeout=300)
            outcome.append("answered")
        except (http.client.HTTPException, OSError) as err:
            outcome.append(type(err).__name__)

    client = threading.Thread(target=ask, daemon=True)
    client.start()
    assert fake.arrived.wait(30)
    stopper = threading.Thread(target=server.stop, daemon=True)
    stopper.start()
    stopper.join(60)
    client.join(60)
    assert (stopper.is_alive(), client.is_alive()) == (False, False)
    assert outcome == ["RemoteDisconnected"]
    assert [(s.status, s.fault) for s in fake.seen] == [(200, "stall")]


def test_the_client_reads_the_terminology_routes_over_a_socket() -> None:
    fake = FakeUts(FakeUtsData.from_meta(FIXTURES / "umls"), api_key=CANARY_KEY)
    with FakeUtsServer(fake) as server, closing(client_for(server)) as client:
        search = client.get_result("/search/2099AA", {"string": "fever"})
        crosswalk = "/crosswalk/2099AA/source/SNOMEDCT_US/9990191001"
        clusters = client.get_listed(crosswalk, {"pageSize": "2"})
        assert client.get_listed(crosswalk, {"targetSource": "LNC"}) is None
    assert [r["ui"] for r in search["results"]] == ["C9000001", "C9000091"]
    assert [c["ui"] for c in (clusters.items if clusters else [])] == [
        "D990090",
        "C990090",
        "9990191001",
    ]
    assert [(s.path, s.status, s.key_sent) for s in fake.seen] == [
        ("/search/2099AA", 200, True),
        (crosswalk, 200, True),
        (crosswalk, 200, True),  # page 2 of 2
        (crosswalk, 404, True),
    ]


def test_a_reset_is_a_real_connection_reset() -> None:
    fake = FakeUts(data(), api_key=CANARY_KEY, faults=Faults(script=["reset"]))
    with FakeUtsServer(fake) as server, pytest.raises(requests.exceptions.ConnectionError) as info:
        requests.get(f"{server.base_url}/content/2099AA/CUI/C9000001", timeout=5)
    assert "reset" in str(info.value).lower() or "aborted" in str(info.value).lower()


def test_the_rate_limit_answers_429_beyond_n_a_second() -> None:
    """Eight requests within one second of the fake's clock (stopped here: on a busy machine
    eight real requests may take longer than a second): five answered, then 429s."""
    fake = FakeUts(data(), api_key=CANARY_KEY, faults=Faults(rate_limit=5), clock=lambda: 1.0)
    with FakeUtsServer(fake) as server:
        statuses = [get(server, "/content/2099AA/CUI/C9000001")[0] for _ in range(8)]
    assert statuses == [200] * 5 + [429] * 3
    assert fake.count(429) == 3


def test_a_revoked_key_stops_the_client() -> None:
    fake = FakeUts(data(), api_key=CANARY_KEY, faults=Faults(revoke_after=1))
    with FakeUtsServer(fake) as server, closing(client_for(server)) as client:
        assert client.get_result("/content/2099AA/CUI/C9000001") is not None
        with pytest.raises(NotAuthorisedError):
            client.get_result("/content/2099AA/CUI/C9000002")
    assert client.stats.requests == 2


def test_deterministic_faults_do_not_depend_on_order() -> None:
    def fails(order: list[str]) -> set[tuple[str, int]]:
        fake = FakeUts(data(), api_key=CANARY_KEY,
                       faults=Faults(rate=0.5, kinds=("5xx",), seed=9))  # fmt: skip
        out = set()
        for n, cui in enumerate(order):
            reply = fake.handle(f"/content/2099AA/CUI/{cui}", {"apiKey": [CANARY_KEY]},
                                base_url="http://x")  # fmt: skip
            if reply.fault:
                out.add((cui, order[:n].count(cui)))
        return out

    order = ["C9000001", "C9000002", "C9000001", "C9000003", "C9000002", "C9000001"] * 3
    first = fails(order)
    assert 0 < len(first) < len(order)  # some fail, some do not
    # The n-th request of a URL draws the same whatever came before it.
    assert fails(list(reversed(order))) == first


def test_unknown_fault_kinds_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown fault kinds"):
        Faults(kinds=("meteor",))


# -- the responses helper ------------------------------------------------------------------------


def test_the_responses_helper_plays_the_fake_without_a_socket() -> None:
    fake = FakeUts(data(), api_key=CANARY_KEY, faults=Faults(script=[None, "reset"]))
    with responses.RequestsMock() as rsps:
        add_fake_uts(rsps, fake, base_url="https://uts.invalid/rest")
        ok = requests.get(
            "https://uts.invalid/rest/content/2099AA/CUI/C9000001",
            params={"apiKey": CANARY_KEY},
            timeout=5,
        )
        assert ok.status_code == 200
        assert ok.json()["result"]["atoms"] == (
            "https://uts.invalid/rest/content/2099AA/CUI/C9000001/atoms"
        )
        with pytest.raises(requests.exceptions.ConnectionError, match="reset"):
            requests.get("https://uts.invalid/rest/content/2099AA/CUI/C9000001", timeout=5)
    assert [s.key_ok for s in fake.seen] == [True, False]


def test_invented_rows_are_mrconso_format() -> None:
    lines = list(invented_rows(2, atoms_per_concept=3))
    assert len(lines) == 8  # 3 atoms + 1 MTH atom per concept
    assert all(line.endswith("|\n") and line.count("|") == 18 for line in lines)
    assert lines[0].startswith("C9000001|ENG|P|")


def test_the_env_of_a_running_fake_keeps_every_proxy_away_from_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """trust 21: requests honours HTTP_PROXY for 127.0.0.1 too unless NO_PROXY names it, and a
    proxy is another host. Both spellings name this machine, and the user's own entries stay."""
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.invalid:3128")
    monkeypatch.setenv("NO_PROXY", "corp.invalid, 127.0.0.1")
    monkeypatch.setenv("no_proxy", ".intranet.invalid")
    server = RunningFakeUts(FakeUts(data(), api_key=CANARY_KEY), tmp_path)
    with server:
        env = server.env
    bypass = "corp.invalid,127.0.0.1,.intranet.invalid,localhost,::1"
    assert (env["NO_PROXY"], env["no_proxy"]) == (bypass, bypass)
    assert env["HTTP_PROXY"] == "http://proxy.invalid:3128"  # other hosts keep the proxy
    monkeypatch.delenv("NO_PROXY")
    monkeypatch.delenv("no_proxy")
    with server:
        assert server.env["NO_PROXY"] == server.env["no_proxy"] == "127.0.0.1,localhost,::1"
