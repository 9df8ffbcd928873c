"""The UTS client's one chokepoint: exact requests, retries, Retry-After, errors, redaction.

Every HTTP exchange here is played by ``responses`` with exact query-parameter matchers, against a
``.invalid`` host that cannot resolve; the clock and the sleep are injected, so nothing waits.
"""

from __future__ import annotations

import ast
import logging
import random
import re
import threading
import traceback
from datetime import UTC, datetime
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import pytest
import requests
import responses
from responses import matchers
from responses.registries import OrderedRegistry

import tempmedbench_synonyms
from helpers import ATOM_PARAMS, BASE
from helpers.uts import rate_in_force
from tempmedbench_synonyms.errors import (
    ApiKeyMissingError,
    BadInputError,
    Cancelled,
    NotAuthorisedError,
    UnavailableError,
)
from tempmedbench_synonyms.secret import ApiKey
from tempmedbench_synonyms.testing import CANARY_KEY, VirtualTime
from tempmedbench_synonyms.uts.client import (
    RetryPolicy,
    UtsClient,
    parse_model,
    parse_retry_after,
    redact,
)
from tempmedbench_synonyms.uts.models import UtsAtom, UtsConcept
from tempmedbench_synonyms.uts.options import check_timeout
from tempmedbench_synonyms.uts.ratelimit import HEADROOM, RateLimiter, shared_state_path

LINK = f"{BASE}/content/2099AA"


@pytest.fixture
def t() -> VirtualTime:
    return VirtualTime(10_000.0)


def make_client(
    t: VirtualTime,
    *,
    key: str | None = CANARY_KEY,
    retry: RetryPolicy | None = None,
    timeout: float = 30.0,
) -> UtsClient:
    return UtsClient(
        base_url=BASE,
        api_key=None if key is None else ApiKey(key),
        limiter=RateLimiter(20, clock=t.clock, sleep=t.sleep),
        timeout=timeout,
        retry=retry or RetryPolicy(),
        clock=t.clock,
        wall_clock=lambda: 1_700_000_000.0,
        sleep=t.sleep,
        rng=random.Random(7),
    )


def atom(aui: str, name: str = "Invented name", **extra: Any) -> dict[str, Any]:
    return {
        "classType": "Atom",
        "ui": aui,
        "name": name,
        "termType": "PT",
        "rootSource": "SNOMEDCT_US",
        "language": "ENG",
        "obsolete": "false",
        "suppressible": "false",
        "concept": f"{LINK}/CUI/C9000001",
        "code": f"{LINK}/source/SNOMEDCT_US/1000001",
        **extra,
    }


def page(result: Any, number: int = 1, count: int = 1, size: int = 200) -> dict[str, Any]:
    return {"pageSize": size, "pageNumber": number, "pageCount": count, "result": result}


def params(**extra: str) -> Any:
    return matchers.query_param_matcher({"apiKey": CANARY_KEY, **extra})


SOURCE_PATH = "/content/2099AA/source/SNOMEDCT_US/1000001/atoms"


def get_atoms(client: UtsClient, path: str, query: dict[str, str]) -> list[UtsAtom] | None:
    """The atoms of an ``/atoms`` route as the cached client reads them: every page's items,
    each parsed with ``parse_model``; ``None`` on a 404."""
    listed = client.get_listed(path, query)
    return None if listed is None else [parse_model(UtsAtom, item, "atom") for item in listed.items]


CONCEPT_PATH = "/content/2099AA/CUI/C9000001"


# -- requests as SPEC section 3 fixes them -----------------------------------------------------


@responses.activate
def test_concept_request_sends_only_the_key(t: VirtualTime) -> None:
    responses.get(
        f"{BASE}/content/2099AA/CUI/C9000001",
        json=page({"ui": "C9000001", "name": "Invented", "atoms": f"{LINK}/CUI/C9000001/atoms"}),
        match=[params()],
    )
    concept = parse_model(UtsConcept, make_client(t).get_result(CONCEPT_PATH), "concept")
    assert (concept.ui, concept.name, concept.atoms) == (
        "C9000001",
        "Invented",
        f"{LINK}/CUI/C9000001/atoms",
    )
    assert len(responses.calls) == 1
    assert responses.calls[0].request.headers["Accept"] == "application/json"


@responses.activate
def test_one_page_of_atoms_is_one_request_with_exact_parameters(t: VirtualTime) -> None:
    responses.get(
        BASE + SOURCE_PATH,
        json=page([atom("A90000001"), atom("A90000002")]),
        match=[params(**ATOM_PARAMS)],
    )
    client = make_client(t)
    atoms = get_atoms(client, SOURCE_PATH, ATOM_PARAMS)
    assert [a.ui for a in atoms or []] == ["A90000001", "A90000002"]
    assert client.stats.requests == 1
    assert t.sleeps == []  # the first request waits for nothing


@responses.activate
def test_pages_are_followed_to_page_count_with_page_numbers_from_2(t: VirtualTime) -> None:
    for n in (1, 2, 3):
        extra = {} if n == 1 else {"pageNumber": str(n)}
        responses.get(
            BASE + SOURCE_PATH,
            json=page([atom(f"A9000000{n}")], number=n, count=3),
            match=[params(**ATOM_PARAMS, **extra)],
        )
    client = make_client(t)
    atoms = get_atoms(client, SOURCE_PATH, ATOM_PARAMS)
    assert [a.ui for a in atoms or []] == ["A90000001", "A90000002", "A90000003"]
    assert client.stats.requests == 3
    assert len(responses.calls) == 3


@responses.activate(registry=OrderedRegistry)
def test_a_transient_error_on_page_two_is_retried_never_truncating(t: VirtualTime) -> None:
    responses.get(BASE + SOURCE_PATH, json=page([atom("A90000001")], count=2),
                  match=[params(**ATOM_PARAMS)])  # fmt: skip
    responses.get(BASE + SOURCE_PATH, status=503, match=[params(**ATOM_PARAMS, pageNumber="2")])
    responses.get(
        BASE + SOURCE_PATH,
        json=page([atom("A90000002")], number=2, count=2),
        match=[params(**ATOM_PARAMS, pageNumber="2")],
    )
    client = make_client(t)
    atoms = get_atoms(client, SOURCE_PATH, ATOM_PARAMS)
    assert [a.ui for a in atoms or []] == ["A90000001", "A90000002"]
    assert (client.stats.requests, client.stats.retries) == (3, 1)


@responses.activate(registry=OrderedRegistry)
def test_a_404_on_a_later_page_fails_the_whole_list(t: VirtualTime) -> None:
    responses.get(BASE + SOURCE_PATH, json=page([atom("A90000001")], count=2))
    responses.get(BASE + SOURCE_PATH, status=404, json={"status": 404, "error": "No results"})
    with pytest.raises(UnavailableError, match="404 for page 2 of 2"):
        get_atoms(make_client(t), SOURCE_PATH, ATOM_PARAMS)


@responses.activate
def test_aui_request_sends_only_the_key(t: VirtualTime) -> None:
    responses.get(f"{BASE}/content/2099AA/AUI/A90000001", json=page(atom("A90000001")),
                  match=[params()])  # fmt: skip
    found = parse_model(UtsAtom, make_client(t).get_result("/content/2099AA/AUI/A90000001"), "atom")
    assert found.ui == "A90000001" and found.cui == "C9000001"


@responses.activate
def test_atoms_the_models_cannot_read_name_the_fields(t: VirtualTime) -> None:
    """``get_atoms`` reads every item with ``parse_model``; the message names what failed."""
    broken = atom("A90000002")
    del broken["termType"]
    responses.get(BASE + SOURCE_PATH, json=page([atom("A90000001"), broken]))
    with pytest.raises(UnavailableError) as info:
        get_atoms(make_client(t), SOURCE_PATH, ATOM_PARAMS)
    assert str(info.value) == "UMLS sent an atom this tool cannot read (problem with: termType)"
    assert info.value.hint == "the UTS response format may have changed; please report it"


# -- statuses ---------------------------------------------------------------------------------


@responses.activate
def test_404_is_a_value_not_an_error_and_is_not_retried(t: VirtualTime) -> None:
    responses.get(BASE + SOURCE_PATH, status=404, json={"status": 404, "error": "No results"})
    client = make_client(t)
    assert get_atoms(client, SOURCE_PATH, ATOM_PARAMS) is None
    assert client.stats.requests == 1


@pytest.mark.parametrize("status", [401, 403])
@responses.activate
def test_401_and_403_stop_at_once_with_not_authorised(t: VirtualTime, status: int) -> None:
    responses.get(BASE + SOURCE_PATH, status=status)
    client = make_client(t)
    with pytest.raises(NotAuthorisedError) as info:
        get_atoms(client, SOURCE_PATH, ATOM_PARAMS)
    err = info.value
    assert (err.exit_code, err.outcome, err.status) == (3, "not_authorised", status)
    assert str(err) == (
        f"UMLS answered HTTP {status} for {SOURCE_PATH}: the API key is missing, invalid or expired"
    )
    assert err.hint is not None and "UTS profile" in err.hint
    assert client.stats.requests == 1  # never retried
    assert client.limiter.cancel_event.is_set()  # every other worker stops too
    with pytest.raises(Cancelled):
        get_atoms(client, SOURCE_PATH, ATOM_PARAMS)
    assert client.stats.requests == 1


@responses.activate
def test_400_is_bad_input_and_is_not_retried(t: VirtualTime) -> None:
    responses.get(f"{BASE}/content/20XX/CUI/C9000001", status=400)
    client = make_client(t)
    with pytest.raises(BadInputError, match="HTTP 400 Bad Request for /content/20XX/CUI/C9000001"):
        client.get_result("/content/20XX/CUI/C9000001")
    assert client.stats.requests == 1


@responses.activate
def test_a_redirect_is_not_followed(t: VirtualTime) -> None:
    responses.get(
        BASE + SOURCE_PATH, status=302, headers={"Location": "https://elsewhere.invalid/"}
    )
    client = make_client(t)
    with pytest.raises(UnavailableError, match="redirects are not followed"):
        get_atoms(client, SOURCE_PATH, ATOM_PARAMS)
    assert len(responses.calls) == 1


# -- retries ----------------------------------------------------------------------------------


@responses.activate(registry=OrderedRegistry)
def test_429_then_503_then_200(t: VirtualTime) -> None:
    responses.get(BASE + SOURCE_PATH, status=429, headers={"Retry-After": "2"})
    responses.get(BASE + SOURCE_PATH, status=503)
    responses.get(BASE + SOURCE_PATH, json=page([atom("A90000001")]))
    client = make_client(t)
    atoms = get_atoms(client, SOURCE_PATH, ATOM_PARAMS)
    assert [a.ui for a in atoms or []] == ["A90000001"]
    assert (client.stats.requests, client.stats.retries) == (3, 2)
    assert [c.response.status_code for c in responses.calls] == [429, 503, 200]  # type: ignore[union-attr]
    # Waits: the Retry-After plus at most 0.25 s of jitter; then backoff in [0.5, 1.0] for the
    # second retry (attempt 2: ceiling 0.5 * 2**1); the limiter also slowed down for everyone.
    retry_sleeps = [s for s in t.sleeps if s > 0.2]
    assert 2.0 <= retry_sleeps[0] <= 2.25
    assert 0.5 <= retry_sleeps[1] <= 1.0
    assert rate_in_force(client.limiter, t) == pytest.approx(10.0 + 20 / 20)  # halved, +1 step


@responses.activate(registry=OrderedRegistry)
def test_retry_after_as_an_http_date_is_honoured(t: VirtualTime) -> None:
    when = datetime.fromtimestamp(1_700_000_000 + 7, tz=UTC)
    responses.get(BASE + SOURCE_PATH, status=429,
                  headers={"Retry-After": format_datetime(when, usegmt=True)})  # fmt: skip
    responses.get(BASE + SOURCE_PATH, json=page([atom("A90000001")]))
    get_atoms(make_client(t), SOURCE_PATH, ATOM_PARAMS)
    # one wait: the 7 s the date is ahead of "now", plus at most 0.25 s of jitter
    assert len(t.sleeps) == 1 and 7.0 <= t.sleeps[0] <= 7.25, t.sleeps


@responses.activate(registry=OrderedRegistry)
def test_503_with_retry_after_is_honoured(t: VirtualTime) -> None:
    responses.get(BASE + SOURCE_PATH, status=503, headers={"Retry-After": "4"})
    responses.get(BASE + SOURCE_PATH, json=page([atom("A90000001")]))
    client = make_client(t)
    get_atoms(client, SOURCE_PATH, ATOM_PARAMS)
    assert [s for s in t.sleeps if s >= 1] and 4.0 <= max(t.sleeps) <= 4.25
    assert rate_in_force(client.limiter, t) == pytest.approx(20.0)  # a 503 is no rate signal


@pytest.mark.parametrize(
    "failure",
    [
        {"status": 502, "body": "<html><body><h1>502 Bad Gateway</h1></body></html>",
         "content_type": "text/html"},
        {"status": 200, "body": "<html>maintenance</html>", "content_type": "text/html"},
        {"status": 200, "body": '{"pageSize": 200, "result": [',
         "content_type": "application/json"},
        {"status": 500},
        {"status": 504},
        {"status": 408},
        {"body": requests.exceptions.ConnectionError("Connection reset by peer")},
        {"body": requests.exceptions.ReadTimeout("read timed out")},
        {"body": requests.exceptions.ConnectTimeout("connect timed out")},
        {"body": requests.exceptions.ChunkedEncodingError("IncompleteRead")},
    ],
    ids=["html502", "html200", "truncated", "500", "504", "408", "reset", "read-timeout",
         "connect-timeout", "chunked"],
)  # fmt: skip
@responses.activate(registry=OrderedRegistry)
def test_transient_failures_are_retried(t: VirtualTime, failure: dict[str, Any]) -> None:
    responses.get(BASE + SOURCE_PATH, **failure)
    responses.get(BASE + SOURCE_PATH, json=page([atom("A90000001")]))
    client = make_client(t)
    atoms = get_atoms(client, SOURCE_PATH, ATOM_PARAMS)
    assert [a.ui for a in atoms or []] == ["A90000001"]
    assert (client.stats.requests, client.stats.retries) == (2, 1)


@responses.activate
def test_retries_are_bounded_in_attempts(t: VirtualTime) -> None:
    responses.get(BASE + SOURCE_PATH, status=503)
    client = make_client(t, retry=RetryPolicy(max_attempts=4, max_total=1e9))
    with pytest.raises(UnavailableError) as info:
        get_atoms(client, SOURCE_PATH, ATOM_PARAMS)
    assert str(info.value) == (
        f"UMLS could not answer {SOURCE_PATH} after 4 attempts: HTTP 503 Service Unavailable"
    )
    assert info.value.exit_code == 4
    assert (client.stats.requests, client.stats.retries) == (4, 3)


@responses.activate
def test_retries_are_bounded_in_total_time(t: VirtualTime) -> None:
    responses.get(BASE + SOURCE_PATH, status=429, headers={"Retry-After": "8"})
    client = make_client(t, retry=RetryPolicy(max_attempts=100, max_total=20.0))
    with pytest.raises(UnavailableError, match="after 3 attempts"):
        get_atoms(client, SOURCE_PATH, ATOM_PARAMS)
    # 0 s, ~8 s, ~16 s: a third wait would end after 20 s, so no fourth attempt.
    assert client.stats.requests == 3


@responses.activate
def test_a_retry_after_beyond_the_budget_is_not_waited_for(t: VirtualTime) -> None:
    responses.get(BASE + SOURCE_PATH, status=429, headers={"Retry-After": "3600"})
    client = make_client(t)
    with pytest.raises(UnavailableError, match="after 1 attempts: HTTP 429"):
        get_atoms(client, SOURCE_PATH, ATOM_PARAMS)
    assert client.stats.requests == 1
    assert all(s < 3600 for s in t.sleeps)


@responses.activate
def test_a_retry_after_beyond_the_budget_fails_at_once_and_pauses_no_one(t: VirtualTime) -> None:
    responses.get(BASE + SOURCE_PATH, status=429, headers={"Retry-After": "150"})
    client = make_client(t)  # the default budget: 120 s for one request
    with pytest.raises(UnavailableError) as info:
        get_atoms(client, SOURCE_PATH, ATOM_PARAMS)
    assert str(info.value) == (
        f"UMLS could not answer {SOURCE_PATH} after 1 attempts: HTTP 429 Too Many Requests "
        "with Retry-After 150 s, beyond the 120 s this tool waits for one request"
    )
    assert info.value.hint == (
        "UMLS is limiting the requests from this address; run again later, perhaps with a lower "
        "--rate: everything fetched so far is cached and will not be fetched again"
    )
    assert (client.stats.requests, client.stats.retries) == (1, 0)
    assert t.sleeps == []
    # The next request of any worker waits out the spacing after the last start, not 150 s,
    # at the halved rate.
    assert client.limiter.acquire() == pytest.approx(HEADROOM / 10.0)
    assert client.limiter.acquire() == pytest.approx(HEADROOM / 10.0)
    assert t.sleeps == [pytest.approx(HEADROOM / 10.0)] * 2
    assert rate_in_force(client.limiter, t) == pytest.approx(10.0)


@responses.activate(registry=OrderedRegistry)
def test_waiting_for_a_turn_is_not_counted_against_the_retry_budget(
    t: VirtualTime, tmp_path: Path
) -> None:
    """SPEC section 8, "Waiting is not failing": a run at --rate 1 beside a long one failed
    with "UMLS may be down", its 120 s retry budget spent waiting for turns. Here the first
    attempt gets a 503 while another run on the machine gets a 429 and pauses every run for
    120 s: the retry waits that out, and is still sent (before: the budget was over)."""
    state = shared_state_path(BASE, tmp_path / "state")
    other = RateLimiter(20, clock=t.clock, sleep=t.sleep, wall_clock=t.clock, shared_state=state)

    def busy(request: Any) -> tuple[int, dict[str, str], str]:
        other.penalise(120.0)  # meanwhile, in another run
        return 503, {}, ""

    responses.add_callback(responses.GET, BASE + SOURCE_PATH, callback=busy)
    responses.get(BASE + SOURCE_PATH, status=503)
    responses.get(BASE + SOURCE_PATH, json=page([atom("A90000001")]))
    client = UtsClient(
        base_url=BASE,
        api_key=ApiKey(CANARY_KEY),
        limiter=RateLimiter(
            20, clock=t.clock, sleep=t.sleep, wall_clock=t.clock, shared_state=state
        ),
        clock=t.clock,
        sleep=t.sleep,
        rng=random.Random(7),
    )
    start = t.now
    atoms = get_atoms(client, SOURCE_PATH, ATOM_PARAMS)
    assert [a.ui for a in atoms or []] == ["A90000001"]
    assert (client.stats.requests, client.stats.retries) == (3, 2)
    assert t.now - start > 120.0


@responses.activate(registry=OrderedRegistry)
def test_a_retry_after_that_fits_the_budget_pauses_everyone(t: VirtualTime) -> None:
    responses.get(BASE + SOURCE_PATH, status=429, headers={"Retry-After": "100"})
    responses.get(BASE + SOURCE_PATH, json=page([atom("A90000001")]))
    client = make_client(t)
    start = t.now
    atoms = get_atoms(client, SOURCE_PATH, ATOM_PARAMS)
    assert [a.ui for a in atoms or []] == ["A90000001"]
    assert client.stats.requests == 2
    assert 100.0 <= t.now - start <= 100.25  # the retry waited out the Retry-After, once


@responses.activate
def test_a_429_on_the_last_attempt_pauses_no_one(t: VirtualTime) -> None:
    responses.get(BASE + SOURCE_PATH, status=429, headers={"Retry-After": "5"})
    client = make_client(t, retry=RetryPolicy(max_attempts=1))
    with pytest.raises(UnavailableError) as info:
        get_atoms(client, SOURCE_PATH, ATOM_PARAMS)
    assert str(info.value) == (
        f"UMLS could not answer {SOURCE_PATH} after 1 attempts: HTTP 429 Too Many Requests"
    )
    assert client.limiter.acquire() == pytest.approx(HEADROOM / 10.0)  # halved, no 5 s pause


@responses.activate
def test_a_429_without_retry_after_beyond_the_budget_pauses_no_one(t: VirtualTime) -> None:
    responses.get(BASE + SOURCE_PATH, status=429)
    # The first backoff may be 0.5 s; the budget is 0.3 s: no retry, so no 1 s pause either.
    client = make_client(t, retry=RetryPolicy(max_total=0.3))
    with pytest.raises(UnavailableError) as info:
        get_atoms(client, SOURCE_PATH, ATOM_PARAMS)
    assert str(info.value) == (
        f"UMLS could not answer {SOURCE_PATH} after 1 attempts: HTTP 429 Too Many Requests, "
        "beyond the 0.3 s this tool waits for one request"
    )
    assert t.sleeps == []


@responses.activate
def test_cancelling_the_client_wakes_its_retry_sleep_and_its_limiter(t: VirtualTime) -> None:
    client = make_client(t)
    client.cancel()
    with pytest.raises(Cancelled):
        client.limiter.acquire()
    client.resume()
    assert client.limiter.acquire() == 0.0


def test_a_client_and_its_limiter_share_one_cancel_event() -> None:
    shared = threading.Event()
    client = UtsClient(base_url=BASE, api_key=None, limiter=RateLimiter(5, cancel=shared))
    client.cancel()
    assert shared.is_set()


# -- a 200 must carry the answer asked for; a 404 must come from UTS -------------------------------


@responses.activate(registry=OrderedRegistry)
def test_a_200_with_no_result_is_retried_not_taken_for_an_empty_list(
    t: VirtualTime, caplog: pytest.LogCaptureFixture
) -> None:
    responses.get(BASE + SOURCE_PATH, json={"pageSize": 200, "pageNumber": 1, "pageCount": 1})
    responses.get(BASE + SOURCE_PATH, json=page([atom("A90000001")]))
    client = make_client(t)
    with caplog.at_level(logging.WARNING, logger="tempmedbench_synonyms.uts.client"):
        atoms = get_atoms(client, SOURCE_PATH, ATOM_PARAMS)
    assert [a.ui for a in atoms or []] == ["A90000001"]
    assert (client.stats.requests, client.stats.retries) == (2, 1)
    assert [r.getMessage() for r in caplog.records] == [
        f"retrying {SOURCE_PATH} in 0.3 s after HTTP 200 with a JSON body that has no 'result' "
        "(5 attempts left)"
    ]


@pytest.mark.parametrize(
    ("later_page", "problem"),
    [
        (page(None, number=2, count=2), "a JSON body whose 'result' is null, not a non-empty "
         "JSON list"),
        (page([], number=2, count=2), "a JSON body whose 'result' is an empty list, not a "
         "non-empty JSON list"),
        ({"pageNumber": 2, "pageCount": 2}, "a JSON body that has no 'result'"),
        (page({"ui": "A9"}, number=2, count=2), "a JSON body whose 'result' is an object, not "
         "a non-empty JSON list"),
        ([1, 2], "a JSON body that is not an object"),
    ],
    ids=["null", "empty", "absent", "object", "not-an-object"],
)  # fmt: skip
@responses.activate(registry=OrderedRegistry)
def test_a_later_page_without_items_is_retried_never_shortening_the_list(
    t: VirtualTime, later_page: Any, problem: str
) -> None:
    responses.get(BASE + SOURCE_PATH, json=page([atom("A90000001")], count=2),
                  match=[params(**ATOM_PARAMS)])  # fmt: skip
    two = [params(**ATOM_PARAMS, pageNumber="2")]
    responses.get(BASE + SOURCE_PATH, json=later_page, match=two)
    responses.get(BASE + SOURCE_PATH, json=page([atom("A90000002")], number=2, count=2),
                  match=two)  # fmt: skip
    client = make_client(t)
    atoms = get_atoms(client, SOURCE_PATH, ATOM_PARAMS)
    assert [a.ui for a in atoms or []] == ["A90000001", "A90000002"]
    assert (client.stats.requests, client.stats.retries) == (3, 1)
    # And if it never comes right, the list fails whole, naming what was wrong.
    responses.reset()
    responses.get(BASE + SOURCE_PATH, json=page([atom("A90000001")], count=2),
                  match=[params(**ATOM_PARAMS)])  # fmt: skip
    for _ in range(4):
        responses.get(BASE + SOURCE_PATH, json=later_page, match=two)
    failing = make_client(t, retry=RetryPolicy(max_attempts=4))
    with pytest.raises(UnavailableError) as info:
        get_atoms(failing, SOURCE_PATH, ATOM_PARAMS)
    assert str(info.value) == (
        f"UMLS could not answer {SOURCE_PATH} after 4 attempts: HTTP 200 with {problem}"
    )


@responses.activate(registry=OrderedRegistry)
def test_an_empty_first_page_is_an_empty_list(t: VirtualTime) -> None:
    responses.get(BASE + SOURCE_PATH, json=page([]))
    client = make_client(t)
    assert get_atoms(client, SOURCE_PATH, ATOM_PARAMS) == []
    assert client.stats.requests == 1


@responses.activate(registry=OrderedRegistry)
def test_a_concept_with_a_null_result_is_retried(t: VirtualTime) -> None:
    path = f"{BASE}/content/2099AA/CUI/C9000001"
    responses.get(path, json={"pageSize": 25, "result": None})
    responses.get(path, json=page({"ui": "C9000001", "atoms": f"{LINK}/CUI/C9000001/atoms"}))
    client = make_client(t)
    assert client.get_result(CONCEPT_PATH) == {
        "ui": "C9000001",
        "atoms": f"{LINK}/CUI/C9000001/atoms",
    }
    assert (client.stats.requests, client.stats.retries) == (2, 1)


@pytest.mark.parametrize(
    ("body", "content_type", "shown"),
    [
        ("Not Found", "text/plain", "text/plain"),
        ("<html><body><h1>404 Not Found</h1></body></html>", "text/html", "text/html"),
        ("", None, "no content type"),
        ('"not found"', "application/json", "application/json"),
    ],
    ids=["text", "html", "empty", "json-string"],
)
@responses.activate
def test_a_404_without_a_json_body_is_not_uts_saying_not_found(
    t: VirtualTime, body: str, content_type: str | None, shown: str
) -> None:
    response = responses.Response(responses.GET, BASE + SOURCE_PATH, status=404, body=body)
    if content_type is None:
        response.content_type = None  # type: ignore[assignment]
    else:
        response.content_type = content_type
    responses.add(response)
    client = make_client(t)
    with pytest.raises(UnavailableError) as info:
        get_atoms(client, SOURCE_PATH, ATOM_PARAMS)
    assert str(info.value) == (
        f"{BASE} answered HTTP 404 for {SOURCE_PATH} with a {shown} body, not the JSON the UMLS "
        "REST API sends: this does not look like the UMLS REST API"
    )
    assert info.value.hint == (
        "check --base-url (or UMLS_BASE_URL): the default is https://uts-ws.nlm.nih.gov/rest, "
        "and a UTS base URL ends in /rest"
    )
    assert client.stats.requests == 1  # not retried


@pytest.mark.parametrize(
    ("body", "content_type"),
    [("Not Found", "text/plain"), ("<html><h1>404</h1></html>", "text/html"), ("", None)],
    ids=["text", "html", "empty"],
)
@responses.activate
def test_once_told_uts_answered_any_404_is_not_found(
    t: VirtualTime, body: str, content_type: str | None
) -> None:
    """SPEC section 3: after the release probe (the cached layer sets the flag)."""
    for path in (SOURCE_PATH, CONCEPT_PATH):
        response = responses.Response(responses.GET, BASE + path, status=404, body=body)
        response.content_type = content_type  # type: ignore[assignment]
        responses.add(response)
    client = make_client(t)
    client.any_404_is_not_found = True
    assert get_atoms(client, SOURCE_PATH, ATOM_PARAMS) is None
    assert client.get_result(CONCEPT_PATH) is None
    assert (client.stats.requests, client.stats.retries) == (2, 0)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("0", 0.0),
        ("120", 120.0),
        (" 5 ", 5.0),
        ("Tue, 14 Nov 2023 22:13:50 GMT", 30.0),  # IMF-fixdate, 30 s after "now"
        ("Tuesday, 14-Nov-23 22:13:50 GMT", 30.0),  # obsolete RFC 850 form
        ("Tue Nov 14 22:13:50 2023", 30.0),  # obsolete asctime form
        ("Tue, 14 Nov 2023 22:00:00 GMT", 0.0),  # in the past: now
        ("-1", None),
        ("1.5", None),
        ("\u00b2", None),  # a superscript two: str.isdigit() says yes, int() says no
        ("\u0665", None),  # an Arabic-Indic five: not the ASCII digits RFC 9110 means
        ("soon", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_retry_after_rfc_9110(value: str | None, expected: float | None) -> None:
    now = datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC).timestamp()
    assert parse_retry_after(value, now=now) == expected


# -- the key never leaks ----------------------------------------------------------------------


@responses.activate
def test_the_key_is_redacted_from_errors_tracebacks_and_logs(
    t: VirtualTime, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="tempmedbench_synonyms")
    # No mock matches: responses raises ConnectionError naming the full URL and the params.
    responses.get(BASE + SOURCE_PATH, json={}, match=[params(other="x")])
    client = make_client(t, retry=RetryPolicy(max_attempts=2))
    with pytest.raises(UnavailableError) as info:
        get_atoms(client, SOURCE_PATH, ATOM_PARAMS)
    text = "".join(traceback.format_exception(info.value))
    assert f"{SOURCE_PATH}?language=ENG" in str(info.value)  # the URL is still there...
    assert "apiKey=***" in str(info.value)  # ...with the key redacted in it
    assert "'apiKey': '***'" in str(info.value)  # and in the params dict responses printed
    assert CANARY_KEY not in str(info.value)
    assert CANARY_KEY not in text
    assert info.value.__cause__ is None and info.value.__context__ is None
    assert CANARY_KEY not in caplog.text
    assert "retrying /content/2099AA/source/SNOMEDCT_US/1000001/atoms" in caplog.text
    assert CANARY_KEY not in repr(client)
    assert CANARY_KEY not in repr(ApiKey(CANARY_KEY)) + str(ApiKey(CANARY_KEY))


@responses.activate
def test_an_unexpected_exception_is_translated_without_the_key(t: VirtualTime) -> None:
    responses.get(BASE + SOURCE_PATH, body=ValueError(f"odd failure for ?apiKey={CANARY_KEY}"))
    client = make_client(t)
    with pytest.raises(UnavailableError) as info:
        get_atoms(client, SOURCE_PATH, ATOM_PARAMS)
    assert str(info.value) == (
        f"request for {SOURCE_PATH} failed: ValueError: odd failure for ?apiKey=***"
    )
    assert info.value.__context__ is None
    assert client.stats.requests == 1  # not a transient failure: not retried


def test_urllib3_debug_lines_are_redacted(caplog: pytest.LogCaptureFixture) -> None:
    import tempmedbench_synonyms.uts.client  # noqa: F401 - installs the filter

    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="tempmedbench_synonyms")
    logging.getLogger("urllib3.connectionpool").debug(
        '%s://%s:%s "%s %s %s" %s %s',
        "https",
        "uts.invalid",
        443,
        "GET",
        f"/rest/content/2099AA/CUI/C9000001?apiKey={CANARY_KEY}&pageSize=200",
        "HTTP/1.1",
        200,
        10,
    )
    assert CANARY_KEY not in caplog.text
    assert "apiKey=***&pageSize=200" in caplog.text


def test_redact() -> None:
    key = ApiKey("s3cr/et key")
    assert redact("x?apiKey=abc&b=1 apikey=def", key) == "x?apiKey=***&b=1 apikey=***"
    assert redact("{'apiKey': 's3cr/et key'} s3cr%2Fet%20key", key) == "{'apiKey': '***'} ***"


def test_a_missing_key_is_not_authorised_when_the_network_is_needed(t: VirtualTime) -> None:
    client = make_client(t, key=None)
    with pytest.raises(ApiKeyMissingError) as info:
        client.get_result(CONCEPT_PATH)
    assert (info.value.exit_code, info.value.outcome) == (3, "not_authorised")
    assert "UMLS_API_KEY" in str(info.value)
    assert client.stats.requests == 0


@responses.activate
def test_a_cancelled_client_sends_nothing(t: VirtualTime) -> None:
    client = make_client(t)
    client.cancel()
    with pytest.raises(Cancelled):
        client.get_result(CONCEPT_PATH)
    assert client.stats.requests == 0
    assert len(responses.calls) == 0


def test_the_client_is_the_only_module_that_imports_requests() -> None:
    package = Path(tempmedbench_synonyms.__file__).parent
    importers = sorted(
        path.relative_to(package).as_posix()
        for path in package.rglob("*.py")
        if any(
            (isinstance(node, ast.Import) and any(a.name.split(".")[0] == "requests"
                                                  for a in node.names))
            or (isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0]
                == "requests")
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        )
    )  # fmt: skip
    assert importers == ["uts/client.py"]


# -- bounded attempts and retries you can see ---------------------------------------------------


@responses.activate(registry=OrderedRegistry)
@pytest.mark.parametrize(("timeout", "sent"), [(5.0, (5.0, 5.0)), (60.0, (10.0, 60.0))])
def test_one_timeout_bounds_the_connect_and_each_read_too(
    t: VirtualTime, timeout: float, sent: tuple[float, float]
) -> None:
    """The connect waits at most 10 s, and neither it nor a read longer than the attempt."""
    responses.get(BASE + "/content/2099AA/CUI/C9000001", json={"result": {"ui": "C9000001"}})
    make_client(t, timeout=timeout).get_result("/content/2099AA/CUI/C9000001")
    assert responses.calls[0].request.req_kwargs["timeout"] == sent  # type: ignore[union-attr]


@pytest.mark.parametrize("value", [0.0, -1.0, float("nan"), float("inf"), 120.5])
def test_check_timeout_refuses_what_is_not_a_usable_duration(value: float) -> None:
    with pytest.raises(BadInputError) as info:
        check_timeout(value)
    assert str(info.value).startswith(f"--timeout {value:g} is out of range: it must be more")
    assert check_timeout(0.5) == 0.5 and check_timeout(120) == 120


@responses.activate(registry=OrderedRegistry)
def test_an_attempt_never_runs_past_the_retry_budget(t: VirtualTime) -> None:
    """--timeout 30, budget 120 s: an attempt gets what is left of the budget, at least 1 s,
    as the timeouts each attempt is sent with show (connect, read: 10 and 30 s at first)."""
    url = BASE + "/content/2099AA/CUI/C9000001"
    for retry_after in ("50", "50", "19"):  # (waited with a little jitter)
        responses.get(url, status=503, headers={"Retry-After": retry_after})
    responses.get(url, json={"result": {"ui": "C9000001"}})
    make_client(t).get_result("/content/2099AA/CUI/C9000001")
    waits = t.sleeps
    assert [round(w) for w in waits] == [50, 50, 19]
    sent = [call.request.req_kwargs["timeout"] for call in responses.calls]  # type: ignore[union-attr]
    assert sent == [
        (10.0, 30.0),
        (10.0, 30.0),
        (10.0, pytest.approx(120 - waits[0] - waits[1])),  # what is left: under 20 s
        (1.0, 1.0),  # under a second left: a second
    ]


def _warnings_and_infos(caplog: pytest.LogCaptureFixture) -> tuple[list[str], list[str]]:
    records = [r for r in caplog.records if r.name == "tempmedbench_synonyms.uts.client"]
    return (
        [r.getMessage() for r in records if r.levelno == logging.WARNING],
        [r.getMessage() for r in records if r.levelno == logging.INFO],
    )


@responses.activate(registry=OrderedRegistry)
def test_one_retry_line_every_timeout_also_when_answers_come_between(
    t: VirtualTime, caplog: pytest.LogCaptureFixture
) -> None:
    """A flaky server (failures with answers between them) gets no more lines than a stalled
    one: at most one every --timeout seconds (here 30), however many waves of failures; the
    rest are -v's (info)."""
    caplog.set_level(logging.INFO, logger="tempmedbench_synonyms")
    url = BASE + "/content/2099AA/CUI/C9000001"
    for status in (503, 502, 200, 503, 200, 503, 200):
        responses.get(url, status=status, json={"result": {"ui": "C9000001"}})
    client = make_client(t)
    for _ in range(3):  # three waves of failures within a few seconds
        client.get_result("/content/2099AA/CUI/C9000001")
    t.sleep(30)  # then a failure --timeout seconds after the line: a line again
    responses.get(url, status=503)
    responses.get(url, status=200, json={"result": {"ui": "C9000001"}})
    client.get_result("/content/2099AA/CUI/C9000001")
    warnings, infos = _warnings_and_infos(caplog)
    assert [re.sub(r"in \d\.\d s", "in X s", w) for w in warnings] == [
        "retrying /content/2099AA/CUI/C9000001 in X s after HTTP 503 Service Unavailable "
        "(5 attempts left)",
    ] * 2
    assert [re.sub(r"in \d\.\d s", "in X s", i) for i in infos] == [
        "retrying /content/2099AA/CUI/C9000001 in X s after HTTP 502 Bad Gateway (4 attempts left)",
        "retrying /content/2099AA/CUI/C9000001 in X s after HTTP 503 Service Unavailable "
        "(5 attempts left)",
        "retrying /content/2099AA/CUI/C9000001 in X s after HTTP 503 Service Unavailable "
        "(5 attempts left)",
    ]
    assert client.stats.retries == 5


@responses.activate(registry=OrderedRegistry)
def test_a_wave_longer_than_the_timeout_says_so_again(
    t: VirtualTime, caplog: pytest.LogCaptureFixture
) -> None:
    """A stalled server is never silent for longer than --timeout: within one wave, a failure
    at least that long after the last line shown gets a line of its own."""
    caplog.set_level(logging.INFO, logger="tempmedbench_synonyms")
    url = BASE + "/content/2099AA/CUI/C9000001"
    for _ in range(3):
        responses.get(url, status=503, headers={"Retry-After": "2"})
    responses.get(url, status=200, json={"result": {"ui": "C9000001"}})
    client = UtsClient(
        base_url=BASE, api_key=ApiKey(CANARY_KEY), limiter=RateLimiter(20, clock=t.clock,
        sleep=t.sleep), timeout=3, clock=t.clock, sleep=t.sleep,
        rng=random.Random(7),
    )  # fmt: skip
    client.get_result("/content/2099AA/CUI/C9000001")
    warnings, infos = _warnings_and_infos(caplog)
    # Failures at 0, ~2.1 and ~4.3 s: lines at 0 and ~4.3 (3 s after the first), not at ~2.1.
    assert [w.split(" after ")[1] for w in warnings] == [
        "HTTP 503 Service Unavailable (5 attempts left)",
        "HTTP 503 Service Unavailable (3 attempts left)",
    ]
    assert [i.split(" after ")[1] for i in infos] == [
        "HTTP 503 Service Unavailable (4 attempts left)"
    ]


def test_eight_workers_meeting_one_outage_print_one_line(
    t: VirtualTime, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="tempmedbench_synonyms")
    together = threading.Barrier(8, timeout=60)  # (a deadline only a hang reaches)
    calls: list[int] = []
    lock = threading.Lock()

    def outage(request: Any) -> tuple[int, dict[str, str], str]:
        with lock:
            calls.append(1)
            first = len(calls) <= 8
        if first:
            together.wait()  # all eight fail at once
            return 503, {}, ""
        return 200, {}, '{"result": {"ui": "C9000001"}}'

    with responses.RequestsMock() as rsps:
        rsps.add_callback(responses.GET, BASE + "/content/2099AA/CUI/C9000001", callback=outage)
        # The limiter on real time (16 requests at 20 a second); the client's clock stands still,
        # so no line is due for the time a wave has lasted.
        client = UtsClient(
            base_url=BASE, api_key=ApiKey(CANARY_KEY), limiter=RateLimiter(20), clock=t.clock,
            sleep=lambda s: None, rng=random.Random(7),
        )  # fmt: skip
        workers = [
            threading.Thread(target=client.get_result, args=("/content/2099AA/CUI/C9000001",))
            for _ in range(8)
        ]
        for w in workers:
            w.start()
        for w in workers:
            w.join(60)
    warnings, infos = _warnings_and_infos(caplog)
    assert (len(warnings), len(infos), len(calls)) == (1, 7, 16)


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("x" * 1500, "x" * 1000 + " ..."),
        # Cut after redaction: a key across the cut is masked, never shown in part.
        ("a" * 999 + CANARY_KEY, "a" * 999 + "* ..."),
        (f"Bad\x1b[31m Gateway {CANARY_KEY}", "Bad Gateway ***"),
    ],
    ids=["long", "key-across-the-cut", "escapes-and-key"],
)
def test_server_text_in_a_message_is_cleaned_then_bounded(
    t: VirtualTime, text: str, shown: str
) -> None:
    with responses.RequestsMock() as rsps:
        rsps.get(f"{BASE}{CONCEPT_PATH}", body=requests.exceptions.ConnectionError(text))
        with pytest.raises(UnavailableError) as info:
            make_client(t, retry=RetryPolicy(max_attempts=1)).get_result(CONCEPT_PATH)
    assert str(info.value) == (
        f"UMLS could not answer {CONCEPT_PATH} after 1 attempts: ConnectionError: {shown}"
    )


def test_the_retry_budget_is_written_once() -> None:
    # One number for the client's total, the longest --timeout and the longest 429 pause.
    from tempmedbench_synonyms.constants import RETRY_BUDGET
    from tempmedbench_synonyms.uts.options import MAX_TIMEOUT
    from tempmedbench_synonyms.uts.ratelimit import MAX_PAUSE

    assert RETRY_BUDGET == 120.0
    assert RetryPolicy().max_total == MAX_TIMEOUT == MAX_PAUSE == RETRY_BUDGET


# -- what a 200's JSON may hold: every string as decoded, keys too ----------------------------


def _escaped(text: str) -> str:
    """``text`` with every character a JSON ``\\u`` escape."""
    return "".join(f"\\u{ord(c):04x}" for c in text)


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        # the key as an object key, every letter escaped: no byte of the body holds it
        (
            '{"result": {"ui": "C9000001", "' + _escaped(CANARY_KEY) + '": 1}}',
            "HTTP 200 with a body that holds the API key",
        ),
        # the key in a link, its first letter escaped
        (
            '{"result": {"ui": "C9000001", "atoms": "x?apiKey='
            + _escaped(CANARY_KEY[0])
            + CANARY_KEY[1:]
            + '"}}',
            "HTTP 200 with a body that holds the API key",
        ),
        # the key in another case, which every message masks as the key (secret.redact)
        (
            '{"result": {"ui": "C9000001", "name": "' + CANARY_KEY.lower() + '"}}',
            "HTTP 200 with a body that holds the API key",
        ),
        # half a surrogate pair in an object key
        (
            '{"result": {"ui": "C9000001", "n\\udc00": 1}}',
            "HTTP 200 with text that is not valid Unicode (a lone surrogate escape)",
        ),
        (
            '{"result": {"ui": "C9000001", "n": Infinity}}',
            "HTTP 200 with a body that is not strict JSON: Infinity is not a JSON value (RFC 8259 "
            "has no NaN or Infinity)",
        ),
    ],
    ids=["key-as-key", "key-in-link", "key-in-another-case", "surrogate-in-key", "infinity"],
)
@responses.activate
def test_a_200_whose_decoded_strings_hold_the_key_or_no_text_is_retried_then_unavailable(
    t: VirtualTime, body: str, detail: str
) -> None:
    responses.get(BASE + CONCEPT_PATH, body=body.encode("ascii"),
                  content_type="application/json")  # fmt: skip
    client = make_client(t, retry=RetryPolicy(max_attempts=2))
    with pytest.raises(UnavailableError) as info:
        client.get_result(CONCEPT_PATH)
    assert str(info.value) == f"UMLS could not answer {CONCEPT_PATH} after 2 attempts: {detail}"
    assert CANARY_KEY not in str(info.value)
    assert len(responses.calls) == 2


@responses.activate(registry=OrderedRegistry)
def test_429_lines_are_throttled_like_the_retry_lines(
    t: VirtualTime, caplog: pytest.LogCaptureFixture
) -> None:
    """review R6: every 429 printed "pausing all requests" (14 lines in 32 s against a flaky
    server). Now the 429 line and the retry lines share one throttle: one line when requests
    start failing, then at most one every --timeout seconds (30 here); the rest are -v's."""
    caplog.set_level(logging.INFO, logger="tempmedbench_synonyms")
    url = BASE + "/content/2099AA/CUI/C9000001"
    for status in (429, 200, 429, 200, 429, 200):
        responses.get(url, status=status, json={"result": {"ui": "C9000001"}},
                      headers={"Retry-After": "1"})  # fmt: skip
    client = make_client(t)
    for _ in range(3):  # three 429s within a few seconds, answers between them
        client.get_result("/content/2099AA/CUI/C9000001")
    t.sleep(30)  # a 429 --timeout seconds after the line: a line again
    responses.get(url, status=429, headers={"Retry-After": "1"})
    responses.get(url, status=200, json={"result": {"ui": "C9000001"}})
    client.get_result("/content/2099AA/CUI/C9000001")
    records = [r for r in caplog.records if r.name.startswith("tempmedbench_synonyms.uts.")]
    warnings = [r.getMessage() for r in records if r.levelno == logging.WARNING]
    infos = [r.getMessage() for r in records if r.levelno == logging.INFO]
    pausing = "UMLS answered 429 Too Many Requests: pausing all requests for 1.0 s, then "
    assert warnings == [
        pausing + "10.00 requests a second",
        pausing + "2.12 requests a second",
    ]
    assert [re.sub(r"in \d\.\d+ s", "in X s", i) for i in infos] == [
        "retrying /content/2099AA/CUI/C9000001 in X s after HTTP 429 Too Many Requests "
        "(5 attempts left)",
        pausing + "5.50 requests a second",
        "retrying /content/2099AA/CUI/C9000001 in X s after HTTP 429 Too Many Requests "
        "(5 attempts left)",
        pausing + "3.25 requests a second",
        "retrying /content/2099AA/CUI/C9000001 in X s after HTTP 429 Too Many Requests "
        "(5 attempts left)",
        "retrying /content/2099AA/CUI/C9000001 in X s after HTTP 429 Too Many Requests "
        "(5 attempts left)",
    ]
    assert (client.stats.requests, client.stats.retries) == (8, 4)
    assert CANARY_KEY.lower() not in caplog.text.lower()
