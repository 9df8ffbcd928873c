"""One terminology lookup through UTS (SPEC section 11): the request each sends, its Answer.

HTTP is played by ``responses`` with bodies shaped after NLM's documented samples, invented
content only (``helpers.terms``). The limiter and the retries never wait (``helpers.uts``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import responses

from helpers.terms import (
    CONTENT,
    MISSING,
    NO_RESULTS,
    REL,
    SearchServer,
    atom,
    cluster,
    concept,
    definition,
    old_relation,
    page,
    query_of,
    relation,
    root_source,
    search_row,
    semantic_ref,
    semantic_type,
)
from helpers.uts import BASE, answer, make_uts
from tempmedbench_synonyms.errors import (
    ApiKeyMissingError,
    NotAuthorisedError,
    Outcome,
    UnavailableError,
)
from tempmedbench_synonyms.lookups import (
    Answer,
    Atom,
    Atoms,
    Concept,
    Crosswalk,
    Cuis,
    Definitions,
    Hierarchy,
    Lookup,
    Relations,
    Search,
    SemanticTypes,
    SourceAtoms,
    SourceConcept,
    Sources,
)
from tempmedbench_synonyms.testing import CANARY_KEY, find_secret
from tempmedbench_synonyms.uts import client as client_module
from tempmedbench_synonyms.uts.cache import LAYOUT
from tempmedbench_synonyms.uts.models import (
    AtomRecord,
    HierarchyEntry,
    Relation,
    RootSource,
    SearchResult,
    SemanticTypeInfo,
    SourceAtomCluster,
    read_results,
)

SEARCH = f"{BASE}/search/{REL}"
METADATA = f"{BASE}/metadata/{REL}/sources"


def calls() -> list[tuple[str, dict[str, str]]]:
    """Every request sent: its path and its parameters (``apiKey`` among them if sent)."""
    out = []
    for call in responses.calls:
        url = call.request.url or ""
        out.append((url.split("?")[0].removeprefix(BASE), query_of(call.request)))
    return out


def entries(tmp_path: Path) -> list[Path]:
    return sorted(p for p in (tmp_path / LAYOUT).rglob("*.json") if p.parent.name == REL)


def no_leak(tmp_path: Path, *answers: Answer) -> None:
    texts = {f"answer {i}": repr(a) for i, a in enumerate(answers)}
    assert find_secret(CANARY_KEY, texts=texts, folders=[tmp_path]) == []


# -- every lookup sends the request SPEC 11 names, options under UTS's own names ----------------

KEY = {"apiKey": CANARY_KEY}
LIST = {**KEY, "pageSize": "200"}

CASES: list[tuple[Lookup, str, dict[str, str], Any]] = [
    (Search("invented fever"), "/search/2099AA",
     {**KEY, "string": "invented fever", "searchType": "words", "pageSize": "25"},
     page({"classType": "searchResults", "results": [search_row("C9000001", "Fever")]},
          count=None)),
    (Search("fever", search_type="exact", input_type="atom", return_id_type="code",
            sabs=("MTH", "INV"), semantic_types=("T047", "A2.2"), partial=True,
            include_obsolete=True, include_suppressible=True, limit=7), "/search/2099AA",
     {**KEY, "string": "fever", "searchType": "exact", "inputType": "atom",
      "returnIdType": "code", "sabs": "MTH,INV", "semanticTypes": "T047|A2.2",
      "partialSearch": "true", "includeObsolete": "true", "includeSuppressible": "true",
      "pageSize": "7"},
     page({"classType": "searchResults", "results": [search_row("1000001", "Fever", "INV")]},
          count=None)),
    (Cuis("INV", "1000001"), "/search/2099AA",
     {**KEY, "string": "1000001", "searchType": "exact", "inputType": "sourceUi",
      "sabs": "INV", "pageSize": "200"},
     page({"classType": "searchResults", "results": [search_row("C9000001", "Fever")]},
          count=None)),
    (Crosswalk("INV", "HP:0000001", target_sabs=("SNOMEDCT_US", "MTH")),
     "/crosswalk/2099AA/source/INV/HP%3A0000001", {**LIST, "targetSource": "SNOMEDCT_US,MTH"},
     page([cluster("SNOMEDCT_US", "1000001", "Invented fever")])),
    (Definitions("C9000001", sabs=("MSH",)), "/content/2099AA/CUI/C9000001/definitions",
     {**LIST, "sabs": "MSH"}, page([definition("MSH", "An invented definition.")])),
    (Relations(cui="C9000001", relation_labels=("RO", "PAR"), sabs=("MTH",)),
     "/content/2099AA/CUI/C9000001/relations",
     {**LIST, "includeRelationLabels": "RO,PAR", "sabs": "MTH"},
     page([old_relation("RO", "C9000002")])),
    (Relations(sab="INV", code="10-1"), "/content/2099AA/source/INV/10-1/relations", LIST,
     page([relation("10-1", "PAR", "10-0")])),
    (Relations(aui="A90000001"), "/content/2099AA/AUI/A90000001/relations", LIST,
     page([relation("10-1", "SY", "10-2")])),
    (SemanticTypes("C9000001"), "/content/2099AA/CUI/C9000001", KEY, page(concept("C9000001"))),
    (SourceConcept("INV", "1000001"), "/content/2099AA/source/INV/1000001", KEY,
     page(cluster("INV", "1000001", "Invented fever"))),
    (Hierarchy("ancestors", sab="INV", code="1000001"),
     "/content/2099AA/source/INV/1000001/ancestors", LIST,
     page([cluster("INV", "1000000", "Invented root")])),
    (Hierarchy("children", aui="A90000001"), "/content/2099AA/AUI/A90000001/children", LIST,
     page([atom("A90000002", "C9000002", "HL7V3.0", "InventedKid", "Invented kid")])),
    (Sources(), "/metadata/2099AA/sources", {"pageSize": "200"}, page([root_source("INV", 0)])),
    (Concept("C9000001"), "/content/2099AA/CUI/C9000001", KEY, page(concept("C9000001"))),
    (Atoms("C9000001", preferred=True), "/content/2099AA/CUI/C9000001/atoms/preferred", KEY,
     page(atom("A90000001", "C9000001", "INV", "1000001", "Invented fever"))),
    (SourceAtoms("INV", "1000001", preferred=True),
     "/content/2099AA/source/INV/1000001/atoms/preferred", KEY,
     page(atom("A90000001", "C9000001", "INV", "1000001", "Invented fever"))),
    (Atoms("C9000001", sab="INV"), "/content/2099AA/CUI/C9000001/atoms",
     {**LIST, "language": "ENG", "includeObsolete": "false", "includeSuppressible": "false",
      "sabs": "INV"},
     page([atom("A90000001", "C9000001", "INV", "1000001", "Invented fever")])),
    (Atom("A90000001"), "/content/2099AA/AUI/A90000001", KEY,
     page(atom("A90000001", "C9000001", "INV", "1000001", "Invented fever"))),
]  # fmt: skip


@pytest.mark.parametrize(("lookup", "path", "params", "body"), CASES)
@responses.activate
def test_each_lookup_sends_exactly_the_request_of_spec_11(
    tmp_path: Path, lookup: Lookup, path: str, params: dict[str, str], body: Any
) -> None:
    responses.get(BASE + path, json=body)
    got = answer(make_uts(tmp_path), REL, "the input", lookup)
    assert calls() == [(path, params)]
    assert (got.input, got.outcome, got.exit_code, got.release) == (
        "the input", Outcome.FOUND, 0, REL,
    )  # fmt: skip
    assert len(got.results) == 1 and not got.truncated
    # Read back as the lookup's model, which keeps the object UTS sent.
    (record,) = read_results(got, lookup)
    assert dict(record.raw) == got.results[0]
    no_leak(tmp_path, got)


@responses.activate
def test_results_are_what_uts_sent_with_none_read_as_null(tmp_path: Path) -> None:
    sent = cluster("INV", "1000001", "Invented fever", subsetMemberships=[{"uri": "NONE"}])
    responses.get(f"{CONTENT}/source/INV/1000001", json=page(sent))
    got = answer(make_uts(tmp_path), REL, "INV 1000001", SourceConcept("INV", "1000001"))
    (result,) = got.results
    assert result["descendants"] is None and result["definitions"] is None
    assert result["subsetMemberships"] == [{"uri": None}]
    assert {k: v for k, v in result.items() if v is not None and k != "subsetMemberships"} == {
        k: v for k, v in sent.items() if v != "NONE" and k != "subsetMemberships"
    }
    assert got.query == "INV code 1000001"
    assert got.message == "found INV code 1000001, UMLS 2099AA"
    (model,) = read_results(got, SourceConcept("INV", "1000001"))
    assert isinstance(model, SourceAtomCluster)
    assert (model.ui, model.name, model.obsolete, model.atom_count) == (
        "1000001", "Invented fever", False, 2,
    )  # fmt: skip


# -- search: SPEC 11's paging ----------------------------------------------------------------


def rows(n: int) -> list[dict[str, Any]]:
    return [search_row(f"C9{i:06d}", f"Invented {i}") for i in range(1, n + 1)]


def search(tmp_path: Path, server: SearchServer, lookup: Search) -> Answer:
    responses.add_callback(responses.GET, SEARCH, callback=server)
    return answer(make_uts(tmp_path), REL, lookup.string, lookup)


@pytest.mark.parametrize("end", ["none", "list"])
@responses.activate
def test_search_pages_until_a_short_page_or_the_end_of_results(tmp_path: Path, end: str) -> None:
    """Full pages are followed; the ``NONE`` row (or an empty list) is never a result and ends
    the paging; nothing is truncated."""
    server = SearchServer(rows(50), end=end)
    got = search(tmp_path, server, Search("invented", limit=0))
    assert [(q["pageSize"], q.get("pageNumber")) for q in server.asked] == [
        ("200", None),  # 50 < 200: a short page, the last
    ]
    assert [r["ui"] for r in got.results] == [f"C9{i:06d}" for i in range(1, 51)]
    assert not got.truncated
    server = SearchServer(rows(400), end=end)
    responses.reset()
    got = search(tmp_path / "b", server, Search("invented", limit=0))
    assert [(q["pageSize"], q.get("pageNumber")) for q in server.asked] == [
        ("200", None), ("200", "2"), ("200", "3"),  # the third: the end of results
    ]  # fmt: skip
    assert len(got.results) == 400 and "NONE" not in {r["ui"] for r in got.results}
    assert (got.outcome, got.truncated) == (Outcome.FOUND, False)


@pytest.mark.parametrize("end", ["none", "list"])
@responses.activate
def test_a_search_with_no_result_is_not_found(tmp_path: Path, end: str) -> None:
    server = SearchServer([], end=end)
    got = search(tmp_path, server, Search("nothing like it"))
    assert (got.outcome, got.exit_code, got.results, got.truncated) == (
        Outcome.NOT_FOUND, 1, (), False,
    )  # fmt: skip
    assert got.message == "UMLS 2099AA has no results for the words search for 'nothing like it'"
    assert len(server.asked) == 1
    assert len(responses.calls) == 1  # not a 404: no check of the release


@responses.activate
def test_the_page_size_is_what_the_limit_wants_at_most_200_and_the_same_on_every_page(
    tmp_path: Path,
) -> None:
    """UTS counts pages in ``pageSize`` units: a smaller last page would ask for results
    already had, so the limit cuts the last page instead."""
    server = SearchServer(rows(450))
    got = search(tmp_path, server, Search("invented", limit=300))
    assert [(q["pageSize"], q.get("pageNumber")) for q in server.asked] == [
        ("200", None), ("200", "2"),
    ]  # fmt: skip
    assert [r["ui"] for r in got.results] == [f"C9{i:06d}" for i in range(1, 301)]
    assert got.truncated  # results 301-400 were sent, and left out
    assert got.message == (
        "300 results for words search for 'invented', UMLS 2099AA; --limit 300 cut it"
    )


@responses.activate
def test_the_default_limit_of_a_search_is_25_in_one_page(tmp_path: Path) -> None:
    server = SearchServer(rows(60))
    got = search(tmp_path, server, Search("invented"))
    assert [(q["pageSize"], q.get("pageNumber")) for q in server.asked] == [("25", None)]
    assert len(got.results) == 25 and got.truncated  # the limit ended a full page


@responses.activate
def test_a_full_page_that_meets_the_limit_is_truncated_as_more_may_follow(tmp_path: Path) -> None:
    """SPEC 11 reading: a search has no ``pageCount``, so a full page that gives the limit its
    last result cannot tell whether more follow; it says ``truncated`` rather than ask a page
    more (which ``pageSize`` = the limit would not even answer)."""
    server = SearchServer(rows(25))
    got = search(tmp_path, server, Search("invented"))
    assert [(q["pageSize"], q.get("pageNumber")) for q in server.asked] == [("25", None)]
    assert len(got.results) == 25 and got.truncated


@responses.activate
def test_a_limit_met_by_a_short_page_is_not_truncated(tmp_path: Path) -> None:
    server = SearchServer(rows(24))
    got = search(tmp_path, server, Search("invented"))
    assert len(got.results) == 24 and not got.truncated


@responses.activate
def test_a_server_that_no_longer_pages_is_asked_twice_and_nothing_is_counted_twice(
    tmp_path: Path,
) -> None:
    """Page 1 again brings no ``(rootSource, ui)`` not seen before: the paging ends."""
    server = SearchServer(rows(200), end="again")
    got = search(tmp_path, server, Search("invented", limit=0))
    assert [q.get("pageNumber") for q in server.asked] == [None, "2"]
    assert len(got.results) == 200 and not got.truncated


@responses.activate
def test_a_server_that_pages_for_ever_is_followed_a_bounded_number_of_pages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(client_module, "MAX_PAGES", 4)
    server = SearchServer([], end="forever")
    got = search(tmp_path, server, Search("invented", limit=0))
    assert len(server.asked) == 4
    assert len(got.results) == 800 and got.truncated
    # With a limit, the limit ends it first.
    responses.reset()
    server = SearchServer([], end="forever")
    got = search(tmp_path / "b", server, Search("invented", limit=250))
    assert len(server.asked) == 2 and len(got.results) == 250 and got.truncated


@responses.activate
def test_a_page_larger_than_asked_is_cut_to_the_limit(tmp_path: Path) -> None:
    server = SearchServer(rows(100), oversize=40)
    got = search(tmp_path, server, Search("invented", limit=10))
    assert len(server.asked) == 1
    assert [r["ui"] for r in got.results] == [f"C9{i:06d}" for i in range(1, 11)]
    assert got.truncated


@responses.activate
def test_a_server_that_pages_smaller_than_asked_still_gives_every_result(tmp_path: Path) -> None:
    """SPEC 11: a page is full when it holds as many results as the envelope's ``pageSize``
    says, which may be less than asked (audit-client H1: 3 of 41 results, not truncated)."""
    server = SearchServer(rows(41), clamp=3)
    got = search(tmp_path, server, Search("invented", limit=0))
    assert [(q["pageSize"], q.get("pageNumber")) for q in server.asked] == [
        ("200", None), *(("200", str(n)) for n in range(2, 15)),  # page 14: 2 results, short
    ]  # fmt: skip
    assert [r["ui"] for r in got.results] == [f"C9{i:06d}" for i in range(1, 42)]
    assert (got.outcome, got.truncated) == (Outcome.FOUND, False)
    assert got.message == "41 results for words search for 'invented', UMLS 2099AA"


@pytest.mark.parametrize(
    ("limit", "pages", "kept"),
    [(25, 9, 25), (5, 2, 5), (4, 2, 4)],
    ids=["default-25", "limit-5", "limit-4"],
)
@responses.activate
def test_a_server_that_pages_smaller_than_asked_is_paged_up_to_the_limit_and_truncated(
    tmp_path: Path, limit: int, pages: int, kept: int
) -> None:
    """The limit still cuts: pages of 3 are asked until it is met, and more were sent."""
    server = SearchServer(rows(41), clamp=3)
    got = search(tmp_path, server, Search("invented", limit=limit))
    assert [(q["pageSize"], q.get("pageNumber")) for q in server.asked] == [
        (str(limit), None), *((str(limit), str(n)) for n in range(2, pages + 1)),
    ]  # fmt: skip
    assert [r["ui"] for r in got.results] == [f"C9{i:06d}" for i in range(1, kept + 1)]
    assert got.truncated
    assert got.message == (
        f"{kept} results for words search for 'invented', UMLS 2099AA; --limit {limit} cut it"
    )


@pytest.mark.parametrize(
    "echo",
    [MISSING, 1000, 0, -3, "3", True, None],
    ids=["missing", "1000", "0", "-3", "str", "bool", "null"],
)
@responses.activate
def test_an_envelope_page_size_larger_than_asked_or_unreadable_is_the_size_asked(
    tmp_path: Path, echo: Any
) -> None:
    """Only a smaller ``pageSize`` changes what a full page is: one larger than asked (or
    not a whole number from 1, or none) leaves it at the size asked, so that full pages of
    200 are still followed to the end."""
    server = SearchServer(rows(450), echo=echo)
    got = search(tmp_path, server, Search("invented", limit=0))
    assert [q.get("pageNumber") for q in server.asked] == [None, "2", "3"]
    assert len(got.results) == 450 and not got.truncated


@responses.activate
def test_a_none_row_among_results_is_left_out_and_ends_the_paging(tmp_path: Path) -> None:
    """So is a row without a ``ui`` (hostile: UTS sends the ``NONE`` row on its own page)."""
    mixed = [*rows(2), {"rootSource": "MTH", "name": "no ui"}, NO_RESULTS, *rows(3)[2:]]
    body = page({"classType": "searchResults", "results": mixed * 40}, count=None, size=200)
    responses.get(SEARCH, json=body)
    got = answer(make_uts(tmp_path), REL, "x", Search("x", limit=0))
    assert [r["ui"] for r in got.results] == ["C9000001", "C9000002", "C9000003"]
    assert len(responses.calls) == 1 and not got.truncated


@responses.activate
def test_a_search_page_that_is_not_a_search_is_unavailable_and_never_cached(
    tmp_path: Path,
) -> None:
    responses.get(SEARCH, json=page([search_row("C9000001", "x")], count=None))
    with pytest.raises(UnavailableError) as info:
        answer(make_uts(tmp_path), REL, "x", Search("x"))
    assert str(info.value) == (
        "UMLS could not answer /search/2099AA after 4 attempts: HTTP 200 with a JSON body whose "
        "'result' is a list, not an object with a list of 'results'"
    )
    assert len(responses.calls) == 4 and entries(tmp_path) == []
    responses.reset()
    responses.get(SEARCH, json=page({"results": ["C9000001"]}, count=None))
    with pytest.raises(UnavailableError, match="a search result this tool cannot read"):
        answer(make_uts(tmp_path), REL, "x", Search("x"))
    assert entries(tmp_path) == []


@responses.activate
def test_a_search_is_cached_with_the_limit_it_was_asked_with(tmp_path: Path) -> None:
    server = SearchServer(rows(60))
    responses.add_callback(responses.GET, SEARCH, callback=server)
    uts = make_uts(tmp_path)
    first = answer(uts, REL, "x", Search("invented", limit=5))
    again = answer(make_uts(tmp_path), REL, "x", Search("invented", limit=5))
    assert again == first and len(server.asked) == 1
    more = answer(make_uts(tmp_path), REL, "x", Search("invented", limit=6))
    assert len(server.asked) == 2 and len(more.results) == 6
    offline = make_uts(tmp_path, offline=True)
    assert answer(offline, REL, "x", Search("invented", limit=6)) == more
    with pytest.raises(UnavailableError, match="--offline, and the cache does not hold"):
        answer(offline, REL, "x", Search("invented", limit=7))


# -- lists: pageSize=200, pageCount followed as far as the limit wants -----------------------------


def definitions_pages(n: int, pages: int) -> None:
    items = [definition("INV", f"Invented definition {i}") for i in range(n)]
    for number in range(1, pages + 1):
        chunk = items[(number - 1) * 200 : number * 200]
        responses.get(f"{CONTENT}/CUI/C9000001/definitions",
                      json=page(chunk, count=pages, number=number))  # fmt: skip


@responses.activate
def test_a_list_follows_page_count_and_stops_at_the_limit(tmp_path: Path) -> None:
    reg = responses.registries.OrderedRegistry
    with responses.RequestsMock(registry=reg) as rsps:
        for number in (1, 2, 3):
            rsps.get(f"{CONTENT}/CUI/C9000001/definitions", json=page(
                [definition("INV", f"d{number}-{i}") for i in range(200 if number < 3 else 5)],
                count=3, number=number))  # fmt: skip
        got = answer(make_uts(tmp_path), REL, "C9000001", Definitions("C9000001", limit=0))
        assert [query_of(c.request).get("pageNumber") for c in rsps.calls] == [None, "2", "3"]
        assert len(got.results) == 405 and not got.truncated
    with responses.RequestsMock(registry=reg) as rsps:
        for number in (1, 2):
            rsps.get(f"{CONTENT}/CUI/C9000001/definitions", json=page(
                [definition("INV", f"d{number}-{i}") for i in range(200)], count=3,
                number=number))  # fmt: skip
        got = answer(make_uts(tmp_path / "b"), REL, "C9000001",
                     Definitions("C9000001", limit=250))  # fmt: skip
        # Page 3 is never asked: the limit had what it wanted.
        assert [query_of(c.request)["pageSize"] for c in rsps.calls] == ["200", "200"]
        assert len(got.results) == 250 and got.truncated
        assert got.message.endswith("; --limit 250 cut it")


@responses.activate
def test_a_list_that_fills_its_limit_exactly_with_pages_left_is_truncated(tmp_path: Path) -> None:
    responses.get(f"{CONTENT}/CUI/C9000001/definitions",
                  json=page([definition("INV", f"d{i}") for i in range(200)], count=2))  # fmt: skip
    got = answer(make_uts(tmp_path), REL, "C9000001", Definitions("C9000001", limit=200))
    assert len(responses.calls) == 1 and len(got.results) == 200 and got.truncated
    responses.get(f"{CONTENT}/CUI/C9000002/definitions",
                  json=page([definition("INV", f"d{i}") for i in range(200)], count=1))  # fmt: skip
    got = answer(make_uts(tmp_path), REL, "C9000002", Definitions("C9000002", limit=200))
    assert len(got.results) == 200 and not got.truncated


@responses.activate
def test_atoms_keep_every_page_and_the_limit_cuts_the_answer(tmp_path: Path) -> None:
    """Atoms share the regeneration's cache entries (every page): the limit cuts after."""
    atoms = [atom(f"A9{i:07d}", "C9000001", "INV", str(i), f"n{i}") for i in range(30)]
    responses.get(f"{CONTENT}/CUI/C9000001/atoms", json=page(atoms))
    got = answer(make_uts(tmp_path), REL, "C9000001", Atoms("C9000001", limit=10))
    assert [r["ui"] for r in got.results] == [a["ui"] for a in atoms[:10]]
    assert got.truncated and got.message == (
        "10 atoms of CUI C9000001, UMLS 2099AA; --limit 10 cut it"
    )
    (model, *_) = read_results(got, Atoms("C9000001"))
    assert isinstance(model, AtomRecord) and model.to_atom().cui == "C9000001"


@responses.activate
def test_an_empty_list_is_not_found(tmp_path: Path) -> None:
    responses.get(f"{CONTENT}/CUI/C9000001/definitions", json=page([]))
    got = answer(make_uts(tmp_path), REL, "C9000001", Definitions("C9000001"))
    assert (got.outcome, got.exit_code) == (Outcome.NOT_FOUND, 1)
    assert got.message == "UMLS 2099AA has no definitions of CUI C9000001"


@responses.activate
def test_a_list_item_that_is_not_an_object_is_unavailable_and_not_cached(tmp_path: Path) -> None:
    responses.get(f"{CONTENT}/CUI/C9000001/definitions", json=page(["an invented string"]))
    with pytest.raises(UnavailableError, match="a list item this tool cannot read"):
        answer(make_uts(tmp_path), REL, "C9000001", Definitions("C9000001"))
    assert entries(tmp_path) == []


# -- a 404: not found, once the release is known to be served --------------------------------------


@responses.activate
def test_the_first_404_is_checked_once_with_metadata_sent_without_the_key(tmp_path: Path) -> None:
    responses.get(f"{CONTENT}/CUI/C9000001/definitions", status=404, json={"error": "none"})
    responses.get(f"{CONTENT}/CUI/C9000002/definitions", status=404, json={"error": "none"})
    responses.get(METADATA, json=page([root_source("INV", 0)]))
    uts = make_uts(tmp_path)
    first = answer(uts, REL, "C9000001", Definitions("C9000001"))
    second = answer(uts, REL, "C9000002", Definitions("C9000002"))
    assert calls() == [
        ("/content/2099AA/CUI/C9000001/definitions", LIST),
        ("/metadata/2099AA/sources", {"pageSize": "200"}),  # no apiKey
        ("/content/2099AA/CUI/C9000002/definitions", LIST),
    ]
    for got, cui in ((first, "C9000001"), (second, "C9000002")):
        assert (got.outcome, got.exit_code, got.results) == (Outcome.NOT_FOUND, 1, ())
        assert got.message == f"UMLS 2099AA has no definitions of CUI {cui} (404 Not Found)"
        assert got.hint == "check the CUI (C and 7 digits, such as C0020538)"
    # The check and the 404s are cached: a rerun sends nothing.
    rerun = make_uts(tmp_path)
    assert answer(rerun, REL, "C9000001", Definitions("C9000001")) == first
    assert len(responses.calls) == 3 and rerun.counters().requests == 0
    # Another command's first 404 is checked by the cached answer of /metadata.
    responses.get(f"{CONTENT}/CUI/C9000003/definitions", status=404, json={})
    third = answer(make_uts(tmp_path), REL, "C9000003", Definitions("C9000003"))
    assert third.outcome == Outcome.NOT_FOUND
    assert [path for path, _ in calls()][3:] == ["/content/2099AA/CUI/C9000003/definitions"]
    no_leak(tmp_path, first, second, third)


@responses.activate
def test_a_release_that_is_not_served_is_unavailable_and_its_404_is_not_cached(
    tmp_path: Path,
) -> None:
    responses.get(f"{BASE}/content/2000AA/source/INV/1/parents", status=404, json={})
    responses.get(f"{BASE}/metadata/2000AA/sources", status=404, json={})
    with pytest.raises(UnavailableError) as info:
        answer(make_uts(tmp_path), "2000AA", "INV 1", Hierarchy("parents", sab="INV", code="1"))
    assert str(info.value) == (
        "UMLS release 2000AA is not served at https://uts.invalid/rest: a request answered "
        "404 Not Found, and so did /metadata/2000AA/sources"
    )
    assert info.value.exit_code == 4
    assert (info.value.hint or "").startswith("check --umls-release: UTS serves only some")
    assert "apiKey" not in query_of(responses.calls[1].request)
    # Neither 404 is stored (a release not served today may be tomorrow): a rerun asks again.
    assert not any(p.parent.name == "2000AA" for p in (tmp_path / LAYOUT).rglob("*.json"))
    with pytest.raises(UnavailableError):
        answer(make_uts(tmp_path), "2000AA", "INV 1", Hierarchy("parents", sab="INV", code="1"))
    assert len(responses.calls) == 4


@pytest.mark.parametrize("status", [400, 401, 403])
@responses.activate
def test_a_refused_metadata_check_is_unavailable_naming_the_base_url(
    tmp_path: Path, status: int
) -> None:
    """The check goes without the key: a refusal of it is neither the key's fault (exit 3) nor
    the input's (bad input), but not the UMLS REST API at the base URL (audit-client M1)."""
    responses.get(f"{CONTENT}/CUI/C9000001/definitions", status=404, json={"error": "none"})
    responses.get(METADATA, status=status, json={"error": "refused"})
    with pytest.raises(UnavailableError) as info:
        answer(make_uts(tmp_path), REL, "C9000001", Definitions("C9000001"))
    assert str(info.value) == (
        f"https://uts.invalid/rest answered HTTP {status} for /metadata/2099AA/sources, a "
        "request sent without the API key: this does not look like the UMLS REST API"
    )
    assert info.value.hint == (
        "check --base-url (or UMLS_BASE_URL): the default is https://uts-ws.nlm.nih.gov/rest, "
        "and a UTS base URL ends in /rest"
    )
    assert len(responses.calls) == 2 and entries(tmp_path) == []
    assert "apiKey" not in query_of(responses.calls[1].request)


@responses.activate
def test_a_404_that_is_not_uts_json_is_unavailable_naming_the_base_url(tmp_path: Path) -> None:
    responses.get(f"{CONTENT}/CUI/C9000001/definitions", status=404, body="<html>Not Found</html>",
                  content_type="text/html")  # fmt: skip
    with pytest.raises(UnavailableError) as info:
        answer(make_uts(tmp_path), REL, "C9000001", Definitions("C9000001"))
    assert "not the JSON the UMLS REST API sends" in str(info.value)
    assert (info.value.hint or "").startswith("check --base-url")
    assert len(responses.calls) == 1 and entries(tmp_path) == []


@responses.activate
def test_sources_need_no_key_and_the_key_is_never_sent_there(tmp_path: Path) -> None:
    responses.get(METADATA, json=page([root_source("INV", 0), root_source("SNOMEDCT_US", 9)]))
    keyless = make_uts(tmp_path, key=None)
    got = answer(keyless, REL, "sources", Sources())
    assert calls() == [("/metadata/2099AA/sources", {"pageSize": "200"})]
    models = read_results(got, Sources())
    assert all(isinstance(m, RootSource) for m in models)
    assert [(m.abbreviation, m.language, m.restriction_level) for m in models] == [  # type: ignore[attr-defined]
        ("INV", "ENG", 0), ("SNOMEDCT_US", "ENG", 9),
    ]  # fmt: skip
    # With a key, the same: the key goes to no /metadata request.
    responses.get(f"{BASE}/metadata/2098AA/sources", json=page([root_source("INV", 0)]))
    answer(make_uts(tmp_path), "2098AA", "sources", Sources())
    assert "apiKey" not in calls()[-1][1]
    # Any other request still needs the key: exit 3, before anything is sent.
    with pytest.raises(ApiKeyMissingError):
        answer(keyless, REL, "C9000001", Definitions("C9000001"))
    assert len(responses.calls) == 2


@responses.activate
def test_a_401_is_raised_not_answered(tmp_path: Path) -> None:
    responses.get(f"{CONTENT}/CUI/C9000001/definitions", status=401, json={})
    with pytest.raises(NotAuthorisedError) as info:
        answer(make_uts(tmp_path), REL, "C9000001", Definitions("C9000001"))
    assert info.value.exit_code == 3 and CANARY_KEY not in str(info.value)


# -- the release: current resolved once ---------------------------------------------------------


@responses.activate
def test_current_is_resolved_by_the_probe_of_the_cui_then_remembered(tmp_path: Path) -> None:
    responses.get(f"{BASE}/content/current/CUI/C9000001", json=page(concept("C9000001")))
    responses.get(f"{CONTENT}/CUI/C9000001/definitions", json=page([definition("INV", "d")]))
    got = answer(make_uts(tmp_path), "current", "C9000001", Definitions("C9000001"))
    assert [path for path, _ in calls()] == [
        "/content/current/CUI/C9000001",  # the probe: its links name 2099AA
        "/content/2099AA/CUI/C9000001/definitions",
    ]
    assert got.release == REL and got.outcome == Outcome.FOUND
    # The concept is cached under 2099AA: semantic types need no request, nor a probe.
    types = answer(make_uts(tmp_path), "current", "C9000001", SemanticTypes("C9000001"))
    assert len(responses.calls) == 2
    assert types.release == REL and [r["name"] for r in types.results] == ["Invented type"]


@responses.activate
def test_current_is_learnt_from_the_links_of_the_first_answer(tmp_path: Path) -> None:
    responses.get(f"{BASE}/crosswalk/current/source/INV/1",
                  json=page([cluster("MTH", "9", "Invented")]))  # fmt: skip
    got = answer(make_uts(tmp_path), "current", "INV 1", Crosswalk("INV", "1"))
    assert got.release == REL and got.outcome == Outcome.FOUND
    # Stored under 2099AA: a rerun for the concrete release is answered by the cache.
    again = answer(make_uts(tmp_path), REL, "INV 1", Crosswalk("INV", "1"))
    assert again == got and len(responses.calls) == 1


@responses.activate
def test_sources_show_current_as_it_is(tmp_path: Path) -> None:
    responses.get(f"{BASE}/metadata/current/sources", json=page([root_source("INV", 0)]))
    responses.get(f"{BASE}/content/current/CUI/C9000001", json=page(concept("C9000001")))
    uts = make_uts(tmp_path)
    answer(uts, "current", "C9000001", Concept("C9000001"))  # current is now known: 2099AA
    got = answer(uts, "current", "sources", Sources())
    assert got.release == "current"
    assert calls()[-1] == ("/metadata/current/sources", {"pageSize": "200"})
    answer(make_uts(tmp_path), "current", "sources", Sources())
    assert len(responses.calls) == 3  # never cached under current: it names no release


# -- bad input is the input's own answer ---------------------------------------------------------


@pytest.mark.parametrize(
    ("lookup", "message"),
    [
        (Definitions("C12"), "CUI 'C12' is not a UMLS concept identifier: expected C and 7 "
         "digits, such as C0020538"),
        (Search("   "), "search term '   ' cannot be sent to UMLS: it is empty"),
        (Search("a\x1bb"), "search term 'a\\x1bb' cannot be sent to UMLS: it contains the "
         "control character U+001B"),
        (Search("x", language="FRE"), "UTS search has no language filter: --language reads "
         "your own UMLS files (--meta PATH)"),
        (Search("x", semantic_types=("T047|T048",)), "'T047|T048' cannot be sent to UMLS: it is "
         "not a semantic type: a TUI (T047), a tree number (A2.2) or a name"),
        (Search("x", limit=-1), "--limit -1 is out of range: give 0 (no cap) or more"),
        (Crosswalk("snomed ct", "1"), "SAB 'snomed ct' is not a UMLS source abbreviation: "
         "expected upper-case letters, digits, '_', '.' and '-', such as SNOMEDCT_US"),
        (Relations(cui="C9000001", aui="A90000001"), "give exactly one of a CUI, a source and "
         "its code, or an AUI"),
        (Relations(cui="C9000001", relation_labels=("R O",)), "'R O' cannot be sent to UMLS: it "
         "is not a relation label, such as RO, PAR or CHD"),
        (Hierarchy("siblings", sab="INV", code="1"), "'siblings' is not a direction of a "  # type: ignore[arg-type]
         "hierarchy: expected one of parents, children, ancestors, descendants"),
        (Hierarchy("parents"), "give a source and its code, or an AUI"),
        (Cuis("INV", ".."), "code '..' cannot be sent to UMLS: it is made only of dots, which "
         "HTTP clients remove from a URL path (RFC 3986, section 5.2.4), so another resource "
         "would be asked for"),
    ],
)  # fmt: skip
@responses.activate
def test_an_input_that_cannot_be_sent_is_bad_input_and_nothing_is_sent(
    tmp_path: Path, lookup: Lookup, message: str
) -> None:
    got = answer(make_uts(tmp_path), "current", "the input", lookup)
    assert (got.outcome, got.exit_code, got.message, got.results) == (
        Outcome.BAD_INPUT, 2, message, (),
    )  # fmt: skip
    assert len(responses.calls) == 0 and not (tmp_path / LAYOUT).exists()


@responses.activate
def test_a_400_from_uts_is_that_inputs_bad_input(tmp_path: Path) -> None:
    responses.get(SEARCH, status=400, json={})
    got = answer(make_uts(tmp_path), REL, "x", Search("x"))
    assert (got.outcome, got.exit_code) == (Outcome.BAD_INPUT, 2)
    assert got.message == "UMLS answered HTTP 400 Bad Request for /search/2099AA"
    assert entries(tmp_path) == []


def test_a_malformed_release_is_the_commands_bad_input(tmp_path: Path) -> None:
    from tempmedbench_synonyms.errors import BadInputError

    with pytest.raises(BadInputError, match="'2025ab' is not a UMLS release name"):
        answer(make_uts(tmp_path), "2025ab", "C9000001", Definitions("C9000001"))
    with pytest.raises(BadInputError, match="'2025ab' is not a UMLS release name"):
        answer(make_uts(tmp_path), "2025ab", "C1", Definitions("C1"))


# -- shapes: semantic types, relations, hierarchies ---------------------------------------------


@responses.activate
def test_semantic_types_with_details_ask_each_tui_of_the_release(tmp_path: Path) -> None:
    types = [semantic_ref("T901", "Invented type"), semantic_ref("T902", "Other type")]
    responses.get(f"{CONTENT}/CUI/C9000001", json=page(concept("C9000001", types=types)))
    responses.get(f"{BASE}/semantic-network/{REL}/TUI/T901",
                  json=page(semantic_type("T901", "Invented type", "A9.1")))  # fmt: skip
    responses.get(f"{BASE}/semantic-network/{REL}/TUI/T902",
                  json=page(semantic_type("T902", "Other type", "A9.2")))  # fmt: skip
    plain = answer(make_uts(tmp_path), REL, "C9000001", SemanticTypes("C9000001"))
    models = read_results(plain, SemanticTypes("C9000001"))
    assert [(m.name, m.tui, m.tree_number) for m in models] == [  # type: ignore[attr-defined]
        ("Invented type", "T901", None), ("Other type", "T902", None),
    ]  # fmt: skip
    detailed = answer(make_uts(tmp_path), REL, "C9000001", SemanticTypes("C9000001", True))
    models = read_results(detailed, SemanticTypes("C9000001"))
    assert all(isinstance(m, SemanticTypeInfo) for m in models)
    assert [(m.name, m.tui, m.tree_number) for m in models] == [  # type: ignore[attr-defined]
        ("Invented type", "T901", "A9.1"), ("Other type", "T902", "A9.2"),
    ]  # fmt: skip
    assert [path for path, _ in calls()] == [
        "/content/2099AA/CUI/C9000001",
        "/semantic-network/2099AA/TUI/T901",
        "/semantic-network/2099AA/TUI/T902",
    ]


@responses.activate
def test_semantic_types_of_an_old_release_are_bare_names_and_none_is_not_found(
    tmp_path: Path,
) -> None:
    responses.get(f"{CONTENT}/CUI/C9000001", json=page(concept("C9000001", types=["Invented"])))
    responses.get(f"{CONTENT}/CUI/C9000002", json=page(concept("C9000002", types=[])))
    got = answer(make_uts(tmp_path), REL, "C9000001", SemanticTypes("C9000001", details=True))
    assert got.results == ({"name": "Invented"},) and len(responses.calls) == 1
    none = answer(make_uts(tmp_path), REL, "C9000002", SemanticTypes("C9000002"))
    assert (none.outcome, none.message) == (
        Outcome.NOT_FOUND, "UMLS 2099AA has no semantic types of CUI C9000002",
    )  # fmt: skip


@responses.activate
def test_relations_old_and_new_are_read_as_uts_gives_them(tmp_path: Path) -> None:
    responses.get(f"{CONTENT}/CUI/C9000001/relations",
                  json=page([old_relation("RN", "C9000002")]))  # fmt: skip
    new_shape = relation("10-1", "PAR", "10-0", extra_label="inverse_isa")
    responses.get(f"{CONTENT}/source/INV/10-1/relations", json=page([new_shape]))
    old = read_results(answer(make_uts(tmp_path), REL, "C9000001", Relations(cui="C9000001")),
                       Relations())  # fmt: skip
    new = read_results(
        answer(make_uts(tmp_path), REL, "INV 10-1", Relations(sab="INV", code="10-1")),
        Relations(),
    )
    assert all(isinstance(m, Relation) for m in (*old, *new))
    assert [(m.related_from_ui, m.relation_label, m.additional_relation_label, m.related_ui,
             m.root_source) for m in (*old, *new)] == [  # type: ignore[attr-defined]
        (None, "RN", "", "C9000002", "MTH"),
        ("10-1", "PAR", "inverse_isa", "10-0", "INV"),
    ]  # fmt: skip


@responses.activate
def test_a_hierarchy_entry_given_as_an_atom_is_named_by_its_code(tmp_path: Path) -> None:
    responses.get(f"{CONTENT}/AUI/A90000001/parents", json=page([
        atom("A90000009", "C9000009", "HL7V3.0", "InventedParent", "Invented parent"),
        cluster("INV", "1000000", "Invented root"),
    ]))  # fmt: skip
    got = answer(make_uts(tmp_path), REL, "A90000001", Hierarchy("parents", aui="A90000001"))
    models = read_results(got, Hierarchy("parents"))
    assert all(isinstance(m, HierarchyEntry) for m in models)
    assert [(m.ui, m.aui, m.name, m.root_source) for m in models] == [  # type: ignore[attr-defined]
        ("InventedParent", "A90000009", "Invented parent", "HL7V3.0"),
        ("1000000", None, "Invented root", "INV"),
    ]  # fmt: skip


def test_search_results_read_as_models() -> None:
    result = SearchResult.read(search_row("C9000001", "Invented"))
    assert (result.ui, result.name, result.root_source) == ("C9000001", "Invented", "MTH")
    assert result.uri == f"{CONTENT}/CUI/C9000001"


# -- hostile and awkward answers -----------------------------------------------------------------


@responses.activate
def test_when_no_probe_names_current_the_inputs_are_asked_as_current(tmp_path: Path) -> None:
    """The probe of an unknown CUI is a 404: checked once, then the input is asked as it is."""
    responses.get(f"{BASE}/content/current/CUI/C9000009", status=404, json={})
    responses.get(f"{BASE}/metadata/current/sources", json=page([root_source("INV", 0)]))
    responses.get(f"{BASE}/content/current/CUI/C9000009/definitions", status=404, json={})
    got = answer(make_uts(tmp_path), "current", "C9000009", Definitions("C9000009"))
    assert [path for path, _ in calls()] == [
        "/content/current/CUI/C9000009",
        "/metadata/current/sources",
        "/content/current/CUI/C9000009/definitions",
    ]
    assert (got.outcome, got.release, got.message) == (
        Outcome.NOT_FOUND, "current",
        "UMLS current has no definitions of CUI C9000009 (404 Not Found)",
    )  # fmt: skip
    assert list((tmp_path / LAYOUT).rglob("*.json")) == []  # nothing names a release


@responses.activate
def test_a_concept_whose_semantic_types_are_none_has_none(tmp_path: Path) -> None:
    responses.get(f"{CONTENT}/CUI/C9000001", json=page({**concept("C9000001"),
                                                         "semanticTypes": "NONE"}))  # fmt: skip
    got = answer(make_uts(tmp_path), REL, "C9000001", SemanticTypes("C9000001", details=True))
    assert got.outcome == Outcome.NOT_FOUND and len(responses.calls) == 1


@responses.activate
def test_a_cache_entry_of_the_wrong_shape_is_a_miss_and_is_fetched_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from tempmedbench_synonyms.uts.cache import CacheKey, ResponseCache

    responses.get(f"{CONTENT}/CUI/C9000001/definitions", json=page([definition("INV", "d")]))
    cache = ResponseCache(tmp_path, BASE)
    request = Definitions("C9000001").request(REL)
    key = CacheKey.make(REL, request.path, {**request.param_dict, "limit": "1000"})
    for stored in ([{"value": "a list, not items"}], {"items": ["x"], "truncated": False},
                   {"items": [], "truncated": "no"}):  # fmt: skip
        cache.put(key, 200, stored)
        got = answer(make_uts(tmp_path), REL, "C9000001", Definitions("C9000001"))
        assert got.results == (definition("INV", "d"),)
    assert len(responses.calls) == 3
    assert caplog.text.count("holds something this version cannot read; fetching it again") == 3


@responses.activate
def test_a_cached_atom_list_of_the_wrong_shape_is_a_miss_and_is_fetched_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The cache reads atoms as a fresh answer is read: a list of atoms, each readable."""
    from tempmedbench_synonyms.uts.cache import CacheKey, ResponseCache

    fresh = atom("A90000001", "C9000001", "INV", "1", "Invented")
    responses.get(f"{CONTENT}/CUI/C9000001/atoms", json=page([fresh]))
    cache = ResponseCache(tmp_path, BASE)
    request = Atoms("C9000001").request(REL)
    key = CacheKey.make(REL, request.path, request.param_dict)
    lacking = {k: v for k, v in fresh.items() if k != "termType"}
    for stored in ({}, {"0": fresh}, [lacking], [fresh, "x"]):
        cache.put(key, 200, stored)
        got = answer(make_uts(tmp_path), REL, "C9000001", Atoms("C9000001"))
        assert [r["ui"] for r in got.results] == ["A90000001"]
    assert len(responses.calls) == 4
    assert caplog.text.count("holds something this version cannot read; fetching it again") == 4
    cache.put(key, 200, [fresh])  # a readable entry is a hit
    answer(make_uts(tmp_path), REL, "C9000001", Atoms("C9000001"))
    assert len(responses.calls) == 4


def test_an_unwritable_cache_is_the_commands_bad_input_not_the_inputs(tmp_path: Path) -> None:
    from tempmedbench_synonyms.errors import BadInputError

    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache folder should be")
    with responses.RequestsMock() as rsps:
        rsps.get(f"{CONTENT}/CUI/C9000001/definitions", json=page([definition("INV", "d")]))
        with pytest.raises(BadInputError) as info:
            answer(make_uts(blocked / "cache"), REL, "C9000001", Definitions("C9000001"))
    assert "cannot write to the cache folder" in str(info.value) and info.value.exit_code == 2


@responses.activate
def test_a_search_larger_than_an_answer_may_be_is_unavailable_and_not_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(client_module, "MAX_ANSWER", 50_000)
    server = SearchServer([], end="forever")
    with pytest.raises(UnavailableError) as info:
        search(tmp_path, server, Search("invented", limit=0))
    assert str(info.value).startswith(
        "UMLS answered /search/2099AA with more than 0 MiB in its first 2 pages"
    )
    assert len(server.asked) == 2 and entries(tmp_path) == []


@responses.activate
def test_a_list_of_more_pages_than_followed_is_read_as_far_as_the_limit(tmp_path: Path) -> None:
    """A list that says it has a million pages: the limit needs 5 of them; without a limit,
    it is more than this tool follows, and unavailable."""
    descendants = f"{CONTENT}/source/INV/1/descendants"
    for number in range(1, 6):
        responses.get(descendants, json=page(
            [cluster("INV", f"{number}-{i}", "x") for i in range(200)], count=1_000_000,
            number=number))  # fmt: skip
    lookup = Hierarchy("descendants", sab="INV", code="1")
    got = answer(make_uts(tmp_path), REL, "INV 1", lookup)
    assert len(responses.calls) == 5 and len(got.results) == 1000 and got.truncated
    with pytest.raises(UnavailableError, match="has 1000000 pages of results, more than the 500"):
        answer(make_uts(tmp_path), REL, "INV 1", Hierarchy("descendants", sab="INV", code="1",
                                                           limit=0))  # fmt: skip
    assert len(responses.calls) == 6
