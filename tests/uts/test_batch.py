"""Many lookups at once (SPEC section 11): input order, workers, current once, fatal errors,
Ctrl-C and its resume, progress, and the dry run.

HTTP is played by ``responses`` (invented content, ``helpers.terms``); threads are synchronised
by events, never by sleeping.
"""

from __future__ import annotations

import io
import itertools
import json
import os
import signal
import threading
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
import responses
from requests import PreparedRequest

from helpers.terms import CONTENT, REL, cluster, concept, definition, page, query_of, root_source
from helpers.uts import BASE, make_uts
from tempmedbench_synonyms.errors import NotAuthorisedError, Outcome, UnavailableError
from tempmedbench_synonyms.lookups import Answer, Crosswalk, Definitions, Lookup, Search
from tempmedbench_synonyms.testing import CANARY_KEY, find_secret
from tempmedbench_synonyms.uts.batch import answer_many, plan_lookups
from tempmedbench_synonyms.uts.cache import LAYOUT
from tempmedbench_synonyms.uts.cached import CachedUts
from tempmedbench_synonyms.uts.estimate import fetch_seconds

CUIS = [f"C9{k:06d}" for k in range(1, 41)]
DEFINITIONS = f"{CONTENT}/CUI/(C9[0-9]{{6}})/definitions"


def run(uts: CachedUts, items: list[tuple[str, Lookup]], **kw: Any) -> list[Answer]:
    with closing(answer_many(uts, kw.pop("release", REL), items, workers=kw.pop("workers", 4),
                             tick=0.01, **kw)) as answers:  # fmt: skip
        return list(answers)


def definitions_for(request: PreparedRequest) -> tuple[int, dict[str, str], str]:
    cui = (request.url or "").split("/CUI/")[1].split("/")[0]
    body = page([definition("INV", f"An invented definition of {cui}")])
    return 200, {"Content-Type": "application/json"}, json.dumps(body)


def serve_definitions(callback: Any = definitions_for) -> None:
    import re

    responses.add_callback(responses.GET, re.compile(DEFINITIONS), callback=callback)


def entries(tmp_path: Path) -> set[str]:
    return {p.name for p in (tmp_path / LAYOUT).rglob("*.json") if p.parent.name == REL}


@responses.activate
def test_answers_come_in_input_order_while_the_inputs_are_asked_at_once(tmp_path: Path) -> None:
    """The first input's answer is held until the second's has been asked: with one worker
    this would never end; with two, the second completes first, yet comes out second."""
    second_asked = threading.Event()

    def callback(request: PreparedRequest) -> tuple[int, dict[str, str], str]:
        if "C9000001" in (request.url or ""):
            assert second_asked.wait(10), "the second input was never asked meanwhile"
        else:
            second_asked.set()
        return definitions_for(request)

    serve_definitions(callback)
    items: list[tuple[str, Lookup]] = [(c, Definitions(c)) for c in CUIS[:2]]
    answers = run(make_uts(tmp_path), items, workers=2)
    assert [(a.input, a.outcome) for a in answers] == [
        ("C9000001", Outcome.FOUND), ("C9000002", Outcome.FOUND),
    ]  # fmt: skip
    assert answers[0].results == ({
        "classType": "Definition", "sourceOriginated": True, "rootSource": "INV",
        "value": "An invented definition of C9000001",
    },)  # fmt: skip


@responses.activate
def test_a_bad_line_is_answered_on_its_own_and_the_rest_go_on(tmp_path: Path) -> None:
    serve_definitions()
    items: list[tuple[str, Lookup]] = [
        ("C9000001", Definitions("C9000001")),
        ("C12", Definitions("C12")),
        ("C9000002", Definitions("C9000002")),
    ]
    answers = run(make_uts(tmp_path), items)
    assert [(a.input, a.outcome, a.exit_code) for a in answers] == [
        ("C9000001", Outcome.FOUND, 0), ("C12", Outcome.BAD_INPUT, 2),
        ("C9000002", Outcome.FOUND, 0),
    ]  # fmt: skip
    assert answers[1].message == (
        "CUI 'C12' is not a UMLS concept identifier: expected C and 7 digits, such as C0020538"
    )
    assert len(responses.calls) == 2


@responses.activate
def test_identical_lookups_are_asked_once_and_each_input_gets_its_answer(tmp_path: Path) -> None:
    serve_definitions()
    items: list[tuple[str, Lookup]] = [
        ("C9000001", Definitions("C9000001")),
        ("C9000001 again", Definitions("C9000001")),
    ]
    answers = run(make_uts(tmp_path), items)
    assert [a.input for a in answers] == ["C9000001", "C9000001 again"]
    assert answers[0].results == answers[1].results and len(responses.calls) == 1


@responses.activate
def test_current_is_resolved_once_by_the_probe_of_the_first_cui(tmp_path: Path) -> None:
    responses.get(f"{BASE}/content/current/CUI/C9000001", json=page(concept("C9000001")))
    serve_definitions()
    items: list[tuple[str, Lookup]] = [(c, Definitions(c)) for c in CUIS[:3]]
    said = io.StringIO()
    answers = run(make_uts(tmp_path), items, release="current", progress=said, clock=lambda: 0.0)
    assert said.getvalue().splitlines()[0] == (
        "UMLS current: finding the release it stands for (the probe of a concept; "
        "--umls-release RELEASE skips this)"
    )
    paths = [(c.request.url or "").split("?")[0].removeprefix(BASE) for c in responses.calls]
    assert paths[0] == "/content/current/CUI/C9000001"
    assert sorted(paths[1:]) == [f"/content/2099AA/CUI/{c}/definitions" for c in CUIS[:3]]
    assert {a.release for a in answers} == {REL}


@responses.activate
def test_current_is_learnt_from_answers_asked_one_at_a_time_until_one_names_it(
    tmp_path: Path,
) -> None:
    """The first crosswalk is not found (its 404 checked once, without the key), the second
    names the release in its links, the third is asked in that release."""
    responses.get(f"{BASE}/crosswalk/current/source/INV/1", status=404, json={})
    responses.get(f"{BASE}/metadata/current/sources", json=page([root_source("INV", 0)]))
    responses.get(f"{BASE}/crosswalk/current/source/INV/2",
                  json=page([cluster("MTH", "20", "Invented two")]))  # fmt: skip
    responses.get(f"{BASE}/crosswalk/{REL}/source/INV/3",
                  json=page([cluster("MTH", "30", "Invented three")]))  # fmt: skip
    items: list[tuple[str, Lookup]] = [(f"INV {k}", Crosswalk("INV", str(k))) for k in (1, 2, 3)]
    said = io.StringIO()
    answers = run(make_uts(tmp_path), items, release="current", progress=said, clock=lambda: 0.0)
    assert said.getvalue().splitlines()[0] == (
        "UMLS current: finding the release it stands for (inputs asked one at a time until an "
        "answer names it; --umls-release RELEASE skips this)"
    )
    assert [(c.request.url or "").split("?")[0].removeprefix(BASE) for c in responses.calls] == [
        "/crosswalk/current/source/INV/1",
        "/metadata/current/sources",
        "/crosswalk/current/source/INV/2",
        "/crosswalk/2099AA/source/INV/3",
    ]
    assert "apiKey" not in query_of(responses.calls[1].request)
    assert [(a.outcome, a.release) for a in answers] == [
        (Outcome.NOT_FOUND, "current"), (Outcome.FOUND, REL), (Outcome.FOUND, REL),
    ]  # fmt: skip
    assert answers[0].message == (
        "UMLS current has no code sharing a concept with INV code 1 (404 Not Found)"
    )
    # Said once at the start; a second batch knows current from the cache and says nothing.
    out = io.StringIO()
    again = run(make_uts(tmp_path), items[1:], release="current", progress=out,
                clock=lambda: 0.0)  # fmt: skip
    assert [a.release for a in again] == [REL, REL]
    assert out.getvalue() == "UMLS 2099AA: 2/2 inputs, 2 cache hits, 0 requests, done in 0 s\n"


@responses.activate
def test_a_401_ends_the_batch_after_the_answers_before_it(tmp_path: Path) -> None:
    import re

    seen = itertools.count(1)
    lock = threading.Lock()

    def callback(request: PreparedRequest) -> tuple[int, dict[str, str], str]:
        with lock:
            n = next(seen)
        if n > 10:
            return 401, {"Content-Type": "application/json"}, "{}"
        return definitions_for(request)

    responses.add_callback(responses.GET, re.compile(DEFINITIONS), callback=callback)
    items: list[tuple[str, Lookup]] = [(c, Definitions(c)) for c in CUIS]
    got: list[Answer] = []
    out = io.StringIO()
    with pytest.raises(NotAuthorisedError) as info:
        with closing(answer_many(make_uts(tmp_path), REL, items, workers=4, progress=out,
                                 tick=0.01)) as answers:  # fmt: skip
            for a in answers:
                got.append(a)
    assert info.value.exit_code == 3
    # Requests on the wire may finish; none starts after the first 401 is seen.
    assert 11 <= len(responses.calls) <= 10 + 4
    assert all(a.outcome == Outcome.FOUND for a in got) and len(got) <= 10
    assert [a.input for a in got] == CUIS[: len(got)]
    assert len(entries(tmp_path)) == 10  # what was complete is cached
    assert out.getvalue().splitlines()[-1].startswith("UMLS 2099AA: ")
    assert find_secret(CANARY_KEY, texts={"error": str(info.value), "progress": out.getvalue()},
                       folders=[tmp_path]) == []  # fmt: skip


@responses.activate
def test_an_unavailable_release_ends_the_batch(tmp_path: Path) -> None:
    responses.get(f"{BASE}/content/2000AA/CUI/C9000001/definitions", status=404, json={})
    responses.get(f"{BASE}/metadata/2000AA/sources", status=404, json={})
    items: list[tuple[str, Lookup]] = [(c, Definitions(c)) for c in CUIS[:1]]
    with pytest.raises(UnavailableError, match="UMLS release 2000AA is not served"):
        run(make_uts(tmp_path), items, release="2000AA")


@pytest.fixture
def sigint_handled() -> Iterator[None]:
    """Python's own SIGINT handler, for the SIGINT a test sends itself (which does nothing where
    SIGINT is ignored, as it is in a job a non-interactive shell started with ``&``)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@responses.activate
@pytest.mark.usefixtures("sigint_handled")
def test_a_batch_stopped_by_ctrl_c_resumes_from_the_cache(tmp_path: Path) -> None:
    """Ctrl-C at the 10th request: the requests after it wait for the cancel, which ends them;
    what was complete is cached, and a rerun asks only the rest. The SIGINT is a real one, sent
    to the process as a terminal does."""
    uts = make_uts(tmp_path)
    assert uts.client is not None
    cancelled = uts.client.limiter.cancel_event
    seen = itertools.count(1)
    lock = threading.Lock()

    def callback(request: PreparedRequest) -> tuple[int, dict[str, str], str]:
        with lock:
            n = next(seen)
        if n == 10:
            os.kill(os.getpid(), signal.SIGINT)  # as a Ctrl-C does
        if n >= 10:
            assert cancelled.wait(10), "the batch was never cancelled"
        return definitions_for(request)

    serve_definitions(callback)
    items: list[tuple[str, Lookup]] = [(c, Definitions(c)) for c in CUIS]
    with pytest.raises(KeyboardInterrupt):
        run(uts, items)
    done = entries(tmp_path)
    assert 1 <= len(done) <= 9
    sent = len(responses.calls)
    responses.reset()
    serve_definitions()
    rerun = make_uts(tmp_path)
    answers = run(rerun, items)
    assert [a.input for a in answers] == CUIS
    assert all(a.outcome == Outcome.FOUND for a in answers)
    assert rerun.counters().requests == 40 - len(done) and sent >= 10
    assert rerun.counters().cache_hits == len(done)


@responses.activate
def test_one_progress_bar_and_the_estimate_before_it(tmp_path: Path) -> None:
    serve_definitions()
    items: list[tuple[str, Lookup]] = [(c, Definitions(c)) for c in CUIS[:3]]
    run(make_uts(tmp_path), items[:1])
    out = io.StringIO()
    answers = run(make_uts(tmp_path), items, progress=out, clock=lambda: 0.0)
    assert len(answers) == 3
    assert out.getvalue().splitlines() == [
        "3 inputs: 1 answered by the cache, 2 to fetch, about 1 s at 20 requests a second",
        "UMLS 2099AA: 1/3 inputs, 1 cache hit, 0 requests",
        "UMLS 2099AA: 3/3 inputs, 1 cache hit, 2 requests, done in 0 s",
    ]
    warm = io.StringIO()
    rerun = make_uts(tmp_path)
    again = run(rerun, items, progress=warm, clock=lambda: 0.0)
    assert again == answers and rerun.counters().requests == 0
    assert warm.getvalue() == "UMLS 2099AA: 3/3 inputs, 3 cache hits, 0 requests, done in 0 s\n"


@responses.activate
def test_the_dry_run_counts_the_cache_and_sends_and_writes_nothing(tmp_path: Path) -> None:
    serve_definitions()
    items: list[tuple[str, Lookup]] = [(c, Definitions(c)) for c in CUIS[:4]]
    run(make_uts(tmp_path), items[:2])
    before = entries(tmp_path)
    sent = len(responses.calls)
    line, planned = plan_lookups(make_uts(tmp_path), REL,
                                 [*items, *items[3:], ("bad", Search(""))], rate=10)  # fmt: skip
    assert line == (
        "5 inputs: 2 answered by the cache, 3 to fetch, about 1 s at 10 requests a second "
        "(1 more cannot be asked: bad input)"
    )
    assert list(planned.items()) == [("inputs", 6), ("bad_input", 1), ("cached", 2),
                                     ("to_fetch", 3), ("requests", 2),
                                     ("seconds", fetch_seconds(2, 10))]  # fmt: skip
    assert len(responses.calls) == sent and entries(tmp_path) == before
    # current, never learnt: nothing can be looked up, and the probe comes on top.
    _, fresh = plan_lookups(make_uts(tmp_path / "new"), "current", items, rate=10)
    assert (fresh["cached"], fresh["to_fetch"], fresh["requests"]) == (0, 4, 5)
    assert len(responses.calls) == sent and not (tmp_path / "new" / LAYOUT).exists()


@responses.activate
def test_the_first_404_of_a_batch_is_checked_once_whatever_the_workers(tmp_path: Path) -> None:
    import re

    responses.get(re.compile(DEFINITIONS), status=404, json={})
    responses.get(f"{BASE}/metadata/{REL}/sources", json=page([root_source("INV", 0)]))
    items: list[tuple[str, Lookup]] = [(c, Definitions(c)) for c in CUIS[:12]]
    answers = run(make_uts(tmp_path), items, workers=4)
    assert [a.outcome for a in answers] == [Outcome.NOT_FOUND] * 12
    metadata = [c for c in responses.calls if "/metadata/" in (c.request.url or "")]
    assert len(metadata) == 1 and "apiKey" not in query_of(metadata[0].request)
    assert len(responses.calls) == 13
