"""The fake UTS's routes (``testing.routes``): each request of SPEC 11 becomes exactly one engine
question, and the engine's answer UTS's envelope (pages, the search's ``NONE`` row, 400s and
404s). What each answer holds is the engine's (tests/mrconso/test_engine.py); here a recorder or a
canned answer stands in for it, and the last tests check the real one over ``fixtures/umls``.

``FakeUts.handle`` is called directly (no socket); tests/test_testing_server.py plays sockets.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from helpers import FIXTURES
from tempmedbench_synonyms.lookups import counted
from tempmedbench_synonyms.mrconso.engine import Engine
from tempmedbench_synonyms.mrconso.shapes import Links
from tempmedbench_synonyms.testing import CANARY_KEY, FakeUts, FakeUtsData, Faults

B = "http://fake.invalid/rest"
N = counted()  # the rows UTS answers from by default: SUPPRESS N


def get(fake: FakeUts, path: str, key: str | None = CANARY_KEY, **params: str) -> tuple[int, Any]:
    query = {k: [v] for k, v in params.items()}
    if key is not None:
        query["apiKey"] = [key]
    reply = fake.handle(path, query, base_url=B)
    return reply.status, json.loads(reply.body)


class Recorder:
    """Stands for the engine: records each question, answers ``answer``."""

    def __init__(self, answer: Any = None) -> None:
        self.answer = answer
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

    def __getattr__(self, name: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls.append((name, args, kwargs))
            return json.loads(json.dumps(self.answer))  # a fresh copy, as the engine gives

        return call


def serving(answer: Any, **options: Any) -> tuple[FakeUts, Recorder, list[Links]]:
    """A fake whose engine answers ``answer`` to every question, the recorder, and the links of
    each question."""
    data = FakeUtsData([], also_served=["2098AB"])
    recorder, links = Recorder(answer), []

    def ask(at: Links, question: Any) -> Any:
        links.append(at)
        return question(recorder)

    data.ask = ask  # type: ignore[method-assign]
    return FakeUts(data, api_key=CANARY_KEY, **options), recorder, links


# -- each request is one question -----------------------------------------------------------------

FLAGS = {"includeObsolete": "true", "includeSuppressible": "false"}


@pytest.mark.parametrize(
    ("path", "params", "question"),
    [
        ("/search/2099AA", {"string": "fever"},
         ("search", ("fever",), {"search_type": "words", "input_type": "atom",
          "return_id_type": "concept", "sabs": (), "semantic_types": (), "partial": False,
          "rows": N, "limit": 25})),
        ("/search/2099AA", {"string": "D1", "searchType": "exact", "inputType": "sourceUi",
                            "returnIdType": "code", "sabs": "MSH,NCI", "partialSearch": "true",
                            "semanticTypes": "T901|B9.1", "pageSize": "10", "pageNumber": "3",
                            **FLAGS},
         ("search", ("D1",), {"search_type": "exact", "input_type": "sourceUi",
          "return_id_type": "code", "sabs": ("MSH", "NCI"), "semantic_types": ("T901", "B9.1"),
          "partial": True, "rows": counted(obsolete=True), "limit": 30})),
        ("/search/2099AA", {"string": "fevers cough", "searchType": "approximate"},
         ("search", ("fevers cough",), {"search_type": "approximate", "input_type": "atom",
          "return_id_type": "concept", "sabs": (), "semantic_types": (), "partial": False,
          "rows": N, "limit": 25})),
        ("/crosswalk/2099AA/source/SNOMEDCT_US/9990191001", {},
         ("crosswalk", ("SNOMEDCT_US", "9990191001"), {"targets": (), "rows": N})),
        ("/crosswalk/2099AA/source/MSH/D%2F1", {"targetSource": "NCI,LNC",
                                                "includeSuppressible": "true"},
         ("crosswalk", ("MSH", "D/1"), {"targets": ("NCI", "LNC"),
          "rows": counted(suppressible=True)})),
        ("/metadata/2099AA/sources", {}, ("sources", (), {})),
        ("/semantic-network/2099AA/TUI/T901", {}, ("semantic_type", ("T901",), {})),
        ("/content/2099AA/CUI/C9000001", {}, ("concept", ("C9000001",), {})),
        ("/content/2099AA/AUI/A9000011", {}, ("atom", ("A9000011",), {})),
        ("/content/2099AA/source/MSH/D%2F1", {}, ("cluster", ("MSH", "D/1"), {})),
        ("/content/2099AA/CUI/C9000001/atoms",
         {"sabs": "MSH", "ttys": "PT,SY", "language": "ENG", "includeObsolete": "false",
          "includeSuppressible": "false", "pageSize": "200", "pageNumber": "1"},
         ("atoms", (), {"cui": "C9000001", "ttys": ("PT", "SY"), "language": "ENG",
          "sabs": ("MSH",), "rows": N})),
        ("/content/2099AA/source/MSH/D1/atoms", FLAGS,
         ("atoms", (), {"sab": "MSH", "code": "D1", "ttys": (), "language": None, "sabs": (),
          "rows": counted(obsolete=True)})),
        ("/content/2099AA/CUI/C9000001/atoms/preferred", {},
         ("preferred_atom", (), {"cui": "C9000001"})),
        ("/content/2099AA/source/MSH/D1/atoms/preferred", {},
         ("preferred_atom", (), {"sab": "MSH", "code": "D1"})),
        ("/content/2099AA/CUI/C9000090/definitions", {"sabs": "NCI", **FLAGS},
         ("definitions", ("C9000090",), {"sabs": ("NCI",), "rows": counted(obsolete=True)})),
        ("/content/2099AA/CUI/C9000001/relations", {"includeRelationLabels": "RN,PAR"},
         ("relations", (), {"cui": "C9000001", "labels": ("RN", "PAR"), "sabs": (),
          "rows": N})),
        ("/content/2099AA/AUI/A9000602/relations", {"sabs": "RXNORM"},
         ("relations", (), {"aui": "A9000602", "labels": (), "sabs": ("RXNORM",), "rows": N})),
        ("/content/2099AA/source/SNOMEDCT_US/9990191001/relations", {},
         ("relations", (), {"sab": "SNOMEDCT_US", "code": "9990191001", "labels": (),
          "sabs": (), "rows": N})),
        ("/content/2099AA/source/SNOMEDCT_US/9990101009/parents", {},
         ("hierarchy", ("parents",), {"sab": "SNOMEDCT_US", "code": "9990101009"})),
        ("/content/2099AA/AUI/A9000901/descendants", {},
         ("hierarchy", ("descendants",), {"aui": "A9000901"})),
    ],
)  # fmt: skip
def test_each_request_is_one_question_to_the_engine(
    path: str, params: dict[str, str], question: tuple[str, tuple[Any, ...], dict[str, Any]]
) -> None:
    fake, recorder, links = serving([])
    get(fake, path, **params)
    assert recorder.calls == [question]
    assert links == [Links("2099AA", B)]


def test_every_question_is_one_the_engine_has() -> None:
    """The recorder takes any name: the engine must have each one the routes ask."""
    for name in ("search", "crosswalk", "sources", "semantic_type", "concept", "atom", "cluster",
                 "atoms", "preferred_atom", "definitions", "relations", "hierarchy"):  # fmt: skip
        assert callable(getattr(Engine, name))


def test_current_is_the_fakes_release_and_another_served_release_its_own() -> None:
    fake, recorder, links = serving({"ui": "C9000001"})
    assert get(fake, "/content/current/CUI/C9000001")[0] == 200
    assert get(fake, "/content/2098AB/CUI/C9000001")[0] == 200
    assert links == [Links("2099AA", B), Links("2098AB", B)]
    # a release the fake does not serve: 404 before any question
    assert get(fake, "/content/2097AA/CUI/C9000001") == (
        404, {"status": 404, "error": "Release 2097AA is not available"},
    )  # fmt: skip
    assert len(recorder.calls) == 2


@pytest.mark.parametrize(
    "path",
    [
        "/content/2099AA/CUI/C9000001/nothing",
        "/content/2099AA/CUI/C9000001/parents",  # a concept has no hierarchy route
        "/content/2099AA/AUI/A9000011/atoms",
        "/content/2099AA/AUI/A9000011/definitions",
        "/content/2099AA/source/SNOMEDCT_US/9990101009/definitions",
        "/content/2099AA/source/SNOMEDCT_US/9990101009/parents/more",
        "/content/2099AA/CUI",
        "/content/2099AA/TUI/T901",
        "/crosswalk/2099AA/CUI/C9000001",
        "/semantic-network/2099AA/STY/Invented",
        "/metadata/2099AA/languages",
        "/search/2099AA/more",
        "/search",
        "/search/2098AA",
    ],
)
def test_unknown_routes_are_404_and_ask_nothing(path: str) -> None:
    fake, recorder, _ = serving([])
    status, doc = get(fake, path, string="fever", pageSize="0")
    assert (status, doc["status"]) == (404, 404)
    assert recorder.calls == []


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({}, "string is required"),
        ({"string": " "}, "string is required"),
        ({"string": "x", "searchType": "fuzzy"}, "searchType takes one of words, exact, "),
        ({"string": "x", "inputType": "cui"}, "inputType takes one of atom, code, "),
        ({"string": "x", "returnIdType": "cui"}, "returnIdType takes one of concept, aui, "),
        ({"string": "x", "pageSize": "0"}, "pageSize and pageNumber start at 1"),
        ({"string": "x", "pageNumber": "two"}, "pageSize and pageNumber are whole numbers"),
    ],
)
def test_a_bad_search_is_400_and_asks_nothing(params: dict[str, str], message: str) -> None:
    fake, recorder, _ = serving([])
    status, doc = get(fake, "/search/2099AA", **params)
    assert status == 400
    assert doc["status"] == 400 and doc["error"].startswith(message)
    assert recorder.calls == []
    assert get(fake, "/content/2099AA/CUI/C9000001/atoms", pageSize="-1")[0] == 400


# -- the envelope ---------------------------------------------------------------------------------


def test_one_object_is_a_page_of_its_own_and_none_is_404() -> None:
    fake, _, _ = serving({"classType": "Concept", "ui": "C9000001"})
    assert get(fake, "/content/2099AA/CUI/C9000001") == (200, {
        "pageSize": 25, "pageNumber": 1, "pageCount": 1,
        "result": {"classType": "Concept", "ui": "C9000001"},
    })  # fmt: skip
    fake, _, _ = serving(None)
    for path in ("/content/2099AA/CUI/C0000000", "/content/2099AA/AUI/A0/",
                 "/content/2099AA/source/MSH/D0/atoms/preferred",
                 "/semantic-network/2099AA/TUI/T047"):  # fmt: skip
        assert get(fake, path) == (404, {"status": 404, "error": "Not Found"})


def test_lists_come_in_pages_of_page_size_and_a_page_past_the_last_is_404() -> None:
    """As UTS pages a list (NLM's own paging loops stop at the first answer that is not 200):
    ``pageSize``, ``pageNumber`` and ``pageCount`` on every page, a 404 past the last one."""
    fake, _, _ = serving([{"ui": "a"}, {"ui": "b"}, {"ui": "c"}])
    path = "/crosswalk/2099AA/source/SNOMEDCT_US/9990191001"
    a, b, c = {"ui": "a"}, {"ui": "b"}, {"ui": "c"}
    assert get(fake, path) == (
        200, {"pageSize": 25, "pageNumber": 1, "pageCount": 1, "result": [a, b, c]},
    )  # fmt: skip
    pages = [get(fake, path, pageSize="2", pageNumber=n) for n in ("1", "2")]
    assert pages == [
        (200, {"pageSize": 2, "pageNumber": 1, "pageCount": 2, "result": [a, b]}),
        (200, {"pageSize": 2, "pageNumber": 2, "pageCount": 2, "result": [c]}),
    ]  # fmt: skip
    assert get(fake, path, pageSize="2", pageNumber="3") == (
        404, {"status": 404, "error": "No results"},
    )  # fmt: skip
    # a server that pages smaller than asked says the size it sent
    fake, _, _ = serving([{"ui": "a"}, {"ui": "b"}, {"ui": "c"}], max_page_size=2)
    status, doc = get(fake, path, pageSize="200")
    assert (status, doc["pageSize"], doc["pageCount"], len(doc["result"])) == (200, 2, 2, 2)
    # an empty list and an unknown id are 404 too
    for answer in ([], None):
        fake, _, _ = serving(answer)
        assert get(fake, path)[0] == 404
        assert get(fake, "/content/2099AA/CUI/C9000001/atoms")[0] == 404


def test_atoms_come_shuffled_the_same_way_on_every_page_of_a_query() -> None:
    atoms = [{"ui": f"A{n:02d}"} for n in range(30)]
    fake, _, _ = serving(atoms)
    path = "/content/2099AA/CUI/C9000001/atoms"

    def shown(seed_fake: FakeUts, **params: str) -> list[str]:
        pages = [
            get(seed_fake, path, pageSize="10", pageNumber=str(n), **params) for n in (1, 2, 3)
        ]
        assert [doc["pageCount"] for _, doc in pages] == [3, 3, 3]
        return [a["ui"] for _, doc in pages for a in doc["result"]]

    order = shown(fake)
    assert sorted(order) == [a["ui"] for a in atoms] != order
    assert shown(fake) == order
    assert shown(fake, sabs="MSH") != order  # another query, another order
    other, _, _ = serving(atoms, shuffle_seed=1)
    assert shown(other) != order


def test_a_search_page_has_no_page_count_and_ends_with_the_none_row() -> None:
    found = [{"ui": "C1", "rootSource": "MSH", "uri": "u1", "name": "One"},
             {"ui": "C2", "rootSource": "MSH", "uri": "u2", "name": "Two"}]  # fmt: skip
    fake, _, _ = serving(found)
    assert get(fake, "/search/2099AA", string="fever", pageSize="1") == (200, {
        "pageSize": 1, "pageNumber": 1,
        "result": {"classType": "searchResults", "results": found[:1]},
    })  # fmt: skip
    doc = get(fake, "/search/current", string="fever", pageSize="1", pageNumber="2")[1]
    assert doc["result"]["results"] == found[1:]
    # the documented end of results, on a page of its own
    none = [{"ui": "NONE", "name": "NO RESULTS"}]
    assert get(fake, "/search/2099AA", string="fever", pageNumber="2")[1]["result"]["results"] == (
        none
    )
    fake, _, _ = serving(found, max_page_size=1)
    assert get(fake, "/search/2099AA", string="fever")[1]["pageSize"] == 1
    fake, _, _ = serving([])
    assert get(fake, "/search/2099AA", string="no such thing")[1]["result"]["results"] == none


def test_search_empty_list_answers_nothing_as_an_empty_list() -> None:
    fake, _, _ = serving([], search_empty="list")
    assert get(fake, "/search/2099AA", string="no such thing")[1]["result"]["results"] == []
    fake, _, _ = serving([{"ui": "C1"}], search_empty="list")
    assert get(fake, "/search/2099AA", string="fever", pageNumber="2")[1]["result"]["results"] == []
    with pytest.raises(ValueError, match="search_empty is one of"):
        serving([], search_empty="empty")


def test_sources_are_one_page_and_answered_without_a_key() -> None:
    fake, _, _ = serving([{"abbreviation": "MSH"}, {"abbreviation": "NCI"}])
    status, doc = get(fake, "/metadata/current/sources", key=None)
    sources = [{"abbreviation": "MSH"}, {"abbreviation": "NCI"}]
    assert (status, doc) == (
        200, {"pageSize": 2, "pageNumber": 1, "pageCount": 1, "result": sources},
    )  # fmt: skip
    assert get(fake, "/metadata/2099AA/sources", key="a wrong key")[0] == 200
    assert [(s.path, s.key_sent, s.key_ok) for s in fake.seen] == [
        ("/metadata/current/sources", False, False),
        ("/metadata/2099AA/sources", True, False),
    ]
    assert get(fake, "/metadata/2098AA/sources", key=None)[0] == 404  # a release not served
    assert get(fake, "/search/2099AA", key=None, string="fever")[0] == 401  # anything else: 401


# -- the key, faults ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/search/2099AA?string=fever",
        "/crosswalk/2099AA/source/SNOMEDCT_US/9990191001",
        "/content/2099AA/CUI/C9000090/definitions",
        "/content/2099AA/CUI/C9000001/relations",
        "/content/2099AA/source/SNOMEDCT_US/9990101009/parents",
        "/semantic-network/2099AA/TUI/T901",
        "/metadata/2099AA/sources",
        "/content/2099AA/CUI/C9000001/atoms/preferred",
    ],
)
def test_faults_apply_to_every_route(path: str) -> None:
    fake, _, _ = serving([{"ui": "x"}], faults=Faults(script=["503", "html502", "429"]))
    base, _, query = path.partition("?")
    params = dict([query.split("=")]) if query else {}
    query = {"apiKey": [CANARY_KEY], **{k: [v] for k, v in params.items()}}
    assert [fake.handle(base, query, base_url=B).status for _ in range(4)] == [503, 502, 429, 200]
    assert [s.fault for s in fake.seen] == ["503", "html502", "429", None]


def test_a_wrong_key_is_401_on_every_route_and_the_key_is_never_kept() -> None:
    fake, recorder, _ = serving([{"ui": "x"}])
    for path in ("/search/2099AA", "/crosswalk/2099AA/source/MSH/D990090",
                 "/semantic-network/2099AA/TUI/T901"):  # fmt: skip
        assert get(fake, path, key="wrong", string="fever")[0] == 401
    assert recorder.calls == []
    get(fake, "/search/2099AA", string="fever")
    assert [(s.key_sent, s.key_ok, s.status) for s in fake.seen] == [(True, False, 401)] * 3 + [
        (True, True, 200)
    ]
    assert CANARY_KEY not in repr(fake.seen)


@pytest.mark.parametrize("faults", [{"rate": 0.3}, "429", ["reset"]])
def test_faults_that_are_not_a_faults_are_a_type_error(faults: Any) -> None:
    """A dict (or anything else) where a ``Faults`` belongs was accepted, and every request
    then failed on it inside the server: it is refused where it is given."""
    with pytest.raises(TypeError) as raised:
        FakeUts(FakeUtsData([]), api_key=CANARY_KEY, faults=faults)
    assert str(raised.value) == (
        f"faults takes a tempmedbench_synonyms.testing.Faults, not a {type(faults).__name__} "
        f"({faults!r}): write faults=Faults(...) with those settings, such as "
        "Faults(rate=0.3, kinds=('429',))"
    )


# -- the real engine ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def meta() -> FakeUtsData:
    return FakeUtsData.from_meta(FIXTURES / "umls")


@pytest.mark.parametrize(
    ("path", "question"),
    [
        ("/search/current?string=fever", lambda e: e.search("fever")),
        ("/search/2099AA?string=fevers cough&searchType=approximate",
         lambda e: e.search("fevers cough", search_type="approximate")),
        ("/crosswalk/2099AA/source/SNOMEDCT_US/9990191001",
         lambda e: e.crosswalk("SNOMEDCT_US", "9990191001")),
        ("/content/2099AA/CUI/C9000001", lambda e: e.concept("C9000001")),
        ("/content/2099AA/CUI/C9000001/atoms/preferred",
         lambda e: e.preferred_atom(cui="C9000001")),
        ("/content/2099AA/source/SNOMEDCT_US/9990101009",
         lambda e: e.cluster("SNOMEDCT_US", "9990101009")),
        ("/content/2099AA/AUI/A9000011", lambda e: e.atom("A9000011")),
        ("/content/2099AA/CUI/C9000090/definitions", lambda e: e.definitions("C9000090")),
        ("/content/2099AA/CUI/C9000001/relations", lambda e: e.relations(cui="C9000001")),
        ("/content/2099AA/source/SNOMEDCT_US/9990191001/children",
         lambda e: e.hierarchy("children", sab="SNOMEDCT_US", code="9990191001")),
        ("/semantic-network/2099AA/TUI/T901", lambda e: e.semantic_type("T901")),
        ("/metadata/2099AA/sources", lambda e: e.sources()),
    ],
)  # fmt: skip
def test_the_fake_answers_what_the_engine_answers(
    meta: FakeUtsData, path: str, question: Any
) -> None:
    """SPEC 12: what the fake answers and what a local META answers for the same rows are the
    same objects (here with the fake's links)."""
    fake = FakeUts(meta, api_key=CANARY_KEY)
    base, _, query = path.partition("?")
    status, doc = get(fake, base, **dict(p.split("=") for p in query.split("&") if p))
    expected = meta.ask(Links("2099AA", B), question)
    assert status == 200 and expected
    assert (doc["result"]["results"] if base.startswith("/search") else doc["result"]) == expected


def test_without_mrsty_every_concept_has_the_one_invented_type() -> None:
    from tempmedbench_synonyms.testing import mrconso_row

    rows = [mrconso_row("C9000001", "A90000001", "MSH", "MH", "D1", "Invented fever")]
    fake = FakeUts(FakeUtsData.from_lines(rows), api_key=CANARY_KEY)
    concept = get(fake, "/content/2099AA/CUI/C9000001")[1]["result"]
    assert concept["semanticTypes"] == [
        {"name": "Invented Type", "uri": f"{B}/semantic-network/2099AA/TUI/T999"}
    ]
    assert get(fake, "/semantic-network/2099AA/TUI/T999")[1]["result"]["name"] == "Invented Type"
