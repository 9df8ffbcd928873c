"""The fake UTS speaks every request of SPEC 11 (``testing.routes``), over the invented META files
of ``fixtures/umls``: exact bodies, pages, 404s, and the search's approximations.

``FakeUts.handle`` is called directly (no socket); tests/test_testing_server.py plays sockets.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helpers import FIXTURES
from tempmedbench_synonyms.testing import CANARY_KEY, FakeUts, FakeUtsData, Faults, mrconso_row

META = FIXTURES / "umls"
B = "http://fake.invalid/rest"
C = f"{B}/content/2099AA"


@pytest.fixture(scope="module")
def meta() -> FakeUtsData:
    return FakeUtsData.from_meta(META)


@pytest.fixture
def fake(meta: FakeUtsData) -> FakeUts:
    return FakeUts(meta, api_key=CANARY_KEY)


def get(fake: FakeUts, path: str, key: str | None = CANARY_KEY, **params: str) -> tuple[int, Any]:
    query = {k: [v] for k, v in params.items()}
    if key is not None:
        query["apiKey"] = [key]
    reply = fake.handle(path, query, base_url=B)
    return reply.status, json.loads(reply.body)


def results(fake: FakeUts, path: str, *fields: str, **params: str) -> list[tuple[Any, ...]]:
    """The ``fields`` of each result of a 200 answer (a search's ``results`` or a list)."""
    status, doc = get(fake, path, **params)
    assert status == 200, doc
    found = doc["result"]
    found = found["results"] if isinstance(found, dict) else found
    return [tuple(r.get(f) for f in fields) for r in found]


def ui(fake: FakeUts, path: str, **params: str) -> list[str]:
    return [u for (u,) in results(fake, path, "ui", **params)]


# -- search --------------------------------------------------------------------------------------


def test_a_search_page_has_no_page_count_and_ends_with_the_none_row(fake: FakeUts) -> None:
    status, doc = get(fake, "/search/2099AA", string="fever", pageSize="1")
    assert status == 200
    assert doc == {
        "pageSize": 1,
        "pageNumber": 1,
        "result": {
            "classType": "searchResults",
            "results": [
                {"ui": "C9000001", "rootSource": "SNOMEDCT_US", "uri": f"{C}/CUI/C9000001",
                 "name": "Zephyr fever"},
            ],
        },
    }  # fmt: skip
    assert ui(fake, "/search/current", string="fever", pageSize="1", pageNumber="2") == ["C9000091"]
    # the documented end of results, on a page of its own
    assert results(fake, "/search/2099AA", "ui", "name", string="fever", pageNumber="2") == [
        ("NONE", "NO RESULTS")
    ]
    assert results(fake, "/search/2099AA", "ui", "name", string="no such thing") == [
        ("NONE", "NO RESULTS")
    ]


def test_search_empty_list_answers_nothing_as_an_empty_list(meta: FakeUtsData) -> None:
    fake = FakeUts(meta, api_key=CANARY_KEY, search_empty="list")
    assert get(fake, "/search/2099AA", string="no such thing")[1]["result"]["results"] == []
    assert ui(fake, "/search/2099AA", string="fever", pageNumber="2") == []
    assert ui(fake, "/search/2099AA", string="fever") == ["C9000001", "C9000091"]
    with pytest.raises(ValueError, match="search_empty is one of"):
        FakeUts(meta, api_key=CANARY_KEY, search_empty="empty")


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"string": "ZEPHYR FEVER", "searchType": "exact"}, ["C9000001"]),
        ({"string": "zephyr", "searchType": "exact"}, ["NONE"]),
        ({"string": "fever wind"}, ["C9000091"]),
        ({"string": "fevers"}, ["NONE"]),
        ({"string": "fevers", "searchType": "normalizedWords"}, ["C9000001", "C9000091"]),
        ({"string": "disorders meteoric", "searchType": "normalizedString"}, ["C9000090"]),
        ({"string": "meteoric", "searchType": "normalizedString"}, ["NONE"]),
        ({"string": "ever", "searchType": "leftTruncation"}, ["C9000001", "C9000091"]),
        ({"string": "meteor", "searchType": "rightTruncation"}, ["C9000090"]),
        ({"string": "wind cough"}, ["NONE"]),
        ({"string": "wind cough", "partialSearch": "true"}, ["C9000003", "C9000091"]),
        ({"string": "fevers cough", "searchType": "approximate"},
         ["C9000001", "C9000003", "C9000091"]),
        ({"string": "!!!"}, ["NONE"]),
    ],
)  # fmt: skip
def test_search_types_on_the_invented_rows(
    fake: FakeUts, params: dict[str, str], expected: list[str]
) -> None:
    assert ui(fake, "/search/2099AA", **params) == expected


def test_a_concept_result_is_named_by_its_english_preferred_row(fake: FakeUts) -> None:
    # matched by its MSH atom, named (and sourced) by its preferred SNOMEDCT_US row
    assert results(fake, "/search/2099AA", "ui", "name", "rootSource", string="fever",
                   sabs="MSH") == [("C9000091", "Wind fever", "SNOMEDCT_US")]  # fmt: skip
    # the Spanish atom finds its concept, named in English
    assert results(fake, "/search/2099AA", "ui", "name", string="trastorno meteórico") == [
        ("C9000090", "Meteoric disorder")
    ]


def test_an_atom_equal_to_the_term_comes_first() -> None:
    rows = [
        mrconso_row("C9000001", "A90000001", "MSH", "MH", "D1", "Big fever"),
        mrconso_row("C9000002", "A90000002", "MSH", "MH", "D2", "FEVER"),
        mrconso_row("C9000003", "A90000003", "MSH", "MH", "D3", "Fever, small"),
    ]
    fake = FakeUts(FakeUtsData.from_lines(rows), api_key=CANARY_KEY)
    assert ui(fake, "/search/2099AA", string="fever") == ["C9000002", "C9000001", "C9000003"]


def test_search_by_code_and_for_codes_atoms_and_term_types(fake: FakeUts) -> None:
    # code to CUI, as `umls cuis` asks (the code is in SNOMEDCT_US and in SCTSPA: one concept)
    cuis = {"inputType": "sourceUi", "searchType": "exact"}
    assert results(fake, "/search/2099AA", "ui", "name", "rootSource", string="9990191001",
                   sabs="SNOMEDCT_US", **cuis) == [
        ("C9000090", "Meteoric disorder", "SNOMEDCT_US")]  # fmt: skip
    assert ui(fake, "/search/2099AA", string="9990191001", **cuis) == ["C9000090"]
    assert ui(fake, "/search/2099AA", string="D990091", inputType="code") == ["C9000091"]
    assert ui(fake, "/search/2099AA", string="9990191001", inputType="sourceConcept") == [
        "C9000090"
    ]
    assert results(fake, "/search/2099AA", "ui", "name", "rootSource", "uri",
                   string="meteoric", returnIdType="code") == [
        ("9990191001", "Meteoric disorder", "SNOMEDCT_US", f"{C}/source/SNOMEDCT_US/9990191001"),
        ("C990090", "Meteoric Disorder", "NCI", f"{C}/source/NCI/C990090"),
        ("D990090", "Meteoric Disorders", "MSH", f"{C}/source/MSH/D990090"),
    ]  # fmt: skip
    found = results(fake, "/search/2099AA", "ui", "name", "uri", string="gale fever",
                    returnIdType="aui")  # fmt: skip
    assert found == [("A9000912", "Gale fever", f"{C}/AUI/A9000912")]
    assert ui(fake, "/search/2099AA", string="MH", inputType="tty", returnIdType="sourceUi") == [
        "D990090",
        "D990091",
    ]
    # the invented rows have no SDUI: no source descriptor to return
    assert ui(fake, "/search/2099AA", string="fever", returnIdType="sourceDescriptor") == ["NONE"]


def test_search_filters(fake: FakeUts) -> None:
    assert ui(fake, "/search/2099AA", string="fever", semanticTypes="T902") == [
        "C9000001",
        "C9000091",
    ]
    assert ui(fake, "/search/2099AA", string="fever", semanticTypes="T903|B9.1") == [
        "C9000001",
        "C9000091",
    ]  # a tree number takes the types below it
    assert ui(fake, "/search/2099AA", string="fever", semanticTypes="A9") == ["NONE"]
    # an obsolete atom (SUPPRESS O) counts with includeObsolete alone, a suppressible one (E)
    # with includeSuppressible alone (SPEC 12)
    assert ui(fake, "/search/2099AA", string="aardvark") == ["NONE"]
    assert ui(fake, "/search/2099AA", string="aardvark", includeSuppressible="true") == ["NONE"]
    assert ui(fake, "/search/2099AA", string="aardvark", includeObsolete="true") == ["C9000001"]
    assert ui(fake, "/search/2099AA", string="breeze", includeObsolete="true") == ["NONE"]
    assert ui(fake, "/search/2099AA", string="breeze", includeSuppressible="true") == ["C9000001"]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({}, "string is required"),
        ({"string": "x", "searchType": "fuzzy"}, "searchType takes one of words, exact, "),
        ({"string": "x", "inputType": "cui"}, "inputType takes one of atom, code, "),
        ({"string": "x", "returnIdType": "cui"}, "returnIdType takes one of concept, aui, "),
        ({"string": "x", "pageSize": "0"}, "pageSize and pageNumber start at 1"),
        ({"string": "x", "pageNumber": "two"}, "pageSize and pageNumber are whole numbers"),
    ],
)
def test_a_bad_search_is_400(fake: FakeUts, params: dict[str, str], message: str) -> None:
    status, doc = get(fake, "/search/2099AA", **params)
    assert status == 400
    assert doc["status"] == 400 and doc["error"].startswith(message)


# -- crosswalk, source concepts, preferred atoms -------------------------------------------------


def test_crosswalk_gives_the_other_sources_codes_of_the_concept(fake: FakeUts) -> None:
    path = "/crosswalk/2099AA/source/SNOMEDCT_US/9990191001"
    status, doc = get(fake, path)
    assert status == 200
    assert (doc["pageSize"], doc["pageNumber"], doc["pageCount"]) == (25, 1, 1)
    assert [(c["classType"], c["rootSource"], c["ui"], c["name"]) for c in doc["result"]] == [
        ("SourceAtomCluster", "MSH", "D990090", "Meteoric Disorders"),
        ("SourceAtomCluster", "NCI", "C990090", "Meteoric Disorder"),
        ("SourceAtomCluster", "SCTSPA", "9990191001", "Trastorno meteórico"),
    ]
    assert doc["result"][0]["atoms"] == f"{C}/source/MSH/D990090/atoms"
    assert ui(fake, path, targetSource="NCI,MSH") == ["D990090", "C990090"]
    assert ui(fake, "/crosswalk/current/source/MSH/D990090") == [
        "C990090", "9990191001", "9990191001",
    ]  # fmt: skip
    for missing in (
        {"targetSource": "LNC"},  # no LNC code in that concept
        {"path": "/crosswalk/2099AA/source/LNC/99901-5"},  # a code alone in its concept
        {"path": "/crosswalk/2099AA/source/SNOMEDCT_US/0000"},  # no such code
    ):
        assert get(fake, missing.pop("path", path), **missing)[0] == 404


def test_lists_come_in_pages_of_page_size_and_a_page_past_the_last_is_404(fake: FakeUts) -> None:
    """As UTS pages a list (NLM's own paging loops stop at the first answer that is not 200):
    ``pageSize``, ``pageNumber`` and ``pageCount`` on every page, a 404 past the last one."""
    path = "/crosswalk/2099AA/source/SNOMEDCT_US/9990191001"  # 3 clusters (above)
    pages = [get(fake, path, pageSize="2", pageNumber=n) for n in ("1", "2")]
    assert [(s, d["pageSize"], d["pageNumber"], d["pageCount"]) for s, d in pages] == [
        (200, 2, 1, 2), (200, 2, 2, 2),
    ]  # fmt: skip
    assert [c["ui"] for _, d in pages for c in d["result"]] == ["D990090", "C990090", "9990191001"]
    assert get(fake, path, pageSize="2", pageNumber="3") == (
        404, {"status": 404, "error": "No codes share a concept with SNOMEDCT_US 9990191001"},
    )  # fmt: skip
    # atoms too: C9000001 has 3 English SNOMEDCT_US atoms that count (A9000011-A9000013)
    atoms = "/content/2099AA/CUI/C9000001/atoms"
    status, doc = get(fake, atoms, sabs="SNOMEDCT_US", language="ENG", pageSize="2",
                      pageNumber="2")  # fmt: skip
    assert (status, doc["pageNumber"], doc["pageCount"], len(doc["result"])) == (200, 2, 2, 1)
    assert get(fake, atoms, sabs="SNOMEDCT_US", language="ENG", pageSize="2", pageNumber="3") == (
        404, {"status": 404, "error": "No results"},
    )  # fmt: skip


def test_an_atom_says_absent_links_both_ways_nlms_sample_does(fake: FakeUts) -> None:
    """NLM's sample atom sends ``"NONE"`` for absent parents, children, source concept... and
    null for absent ancestors and descendants: a user's code meets both."""
    status, doc = get(fake, "/content/2099AA/AUI/A9000012")  # no row of MRHIER.RRF
    atom = doc["result"]
    assert status == 200 and (atom["classType"], atom["ui"]) == ("Atom", "A9000012")
    assert [atom[k] for k in ("parents", "children", "ancestors", "descendants")] == [
        "NONE", "NONE", None, None,
    ]  # fmt: skip
    assert (atom["obsolete"], atom["suppressible"]) == ("false", "false")  # strings on atoms
    assert atom["sourceDescriptor"] == "NONE"


def test_a_source_code_is_a_source_atom_cluster_named_by_its_pt(fake: FakeUts) -> None:
    status, doc = get(fake, "/content/2099AA/source/SNOMEDCT_US/9990101009")
    cluster = doc["result"]
    assert status == 200 and doc["pageCount"] == 1
    assert (cluster["classType"], cluster["ui"], cluster["name"], cluster["atomCount"]) == (
        "SourceAtomCluster", "9990101009", "Zephyr fever", 7,
    )  # fmt: skip
    assert (cluster["obsolete"], cluster["suppressible"]) == (False, False)
    assert cluster["concepts"] == (
        f"{B}/search/2099AA?string=9990101009&sabs=SNOMEDCT_US&searchType=exact&inputType=sourceUi"
    )
    assert get(fake, "/content/2099AA/source/SNOMEDCT_US/nope")[0] == 404


def test_preferred_atoms_of_a_concept_and_of_a_code(fake: FakeUts) -> None:
    def preferred(path: str) -> str:
        status, doc = get(fake, path)
        assert status == 200 and doc["result"]["classType"] == "Atom"
        return str(doc["result"]["ui"])

    assert preferred("/content/2099AA/CUI/C9000001/atoms/preferred") == "A9000011"
    assert preferred("/content/2099AA/source/SNOMEDCT_US/9990101009/atoms/preferred") == (
        "A9000011"
    )
    # RXNORM 9060's PT is obsolete: the code is named by its first atom in SPEC 11's order
    assert preferred("/content/2099AA/source/RXNORM/9060/atoms/preferred") == "A9000601"
    assert get(fake, "/content/2099AA/CUI/C0000000/atoms/preferred")[0] == 404
    assert get(fake, "/content/2099AA/source/RXNORM/0/atoms/preferred")[0] == 404


# -- definitions, relations, semantic types ------------------------------------------------------


def test_definitions_of_a_concept(fake: FakeUts) -> None:
    path = "/content/2099AA/CUI/C9000090/definitions"
    status, doc = get(fake, path)
    assert status == 200 and doc["pageCount"] == 1
    assert doc["result"] == [
        {"classType": "Definition", "sourceOriginated": True, "rootSource": "MSH",
         "value": "An invented disorder of the test data, said to follow changes in the weather."},
        {"classType": "Definition", "sourceOriginated": True, "rootSource": "NCI",
         "value": "A made-up condition brought on by invented weather; no such disorder exists."},
    ]  # the obsolete NCI definition is left out  # fmt: skip
    assert results(fake, path, "rootSource", sabs="NCI") == [("NCI",)]
    assert get(fake, path, sabs="LNC")[0] == 404
    assert get(fake, "/content/2099AA/CUI/C9000002/definitions")[0] == 404
    assert get(fake, "/content/2099AA/CUI/C0000000/definitions")[0] == 404
    concept = get(fake, "/content/2099AA/CUI/C9000090")[1]["result"]
    assert concept["definitions"] == f"{C}/CUI/C9000090/definitions"
    assert get(fake, "/content/2099AA/CUI/C9000002")[1]["result"]["definitions"] == "NONE"


REL_FIELDS = ("classType", "ui", "relatedFromIdName", "relationLabel", "additionalRelationLabel",
              "relatedIdName", "rootSource")  # fmt: skip


def test_relations_of_a_concept_read_as_mrrel_writes_them(fake: FakeUts) -> None:
    path = "/content/2099AA/CUI/C9000001/relations"
    assert results(fake, path, *REL_FIELDS) == [
        ("ConceptRelation", "R90000010", "Zephyr fever", "RO", "may_be_treated_by",
         "zorbatrex 50 MG Oral Tablet", "NCI"),
        ("AtomClusterRelation", "R90000002", "Zephyr fever", "CHD", "isa", "Wind fever",
         "SNOMEDCT_US"),
        ("ConceptRelation", "R90000008", "Zephyr fever", "RN", "", "Wind fever", "MTH"),
    ]  # the obsolete one (R90000011) is left out  # fmt: skip
    assert get(fake, path, includeRelationLabels="RN")[1]["result"] == [
        {
            "ui": "R90000008",
            "suppressible": False,
            "sourceUi": "NONE",
            "obsolete": False,
            "sourceOriginated": False,
            "rootSource": "MTH",
            "groupId": "NONE",
            "attributeCount": 0,
            "classType": "ConceptRelation",
            "relatedFromId": f"{C}/CUI/C9000001",
            "relatedFromIdName": "Zephyr fever",
            "relationLabel": "RN",
            "additionalRelationLabel": "",
            "relatedId": f"{C}/CUI/C9000091",
            "relatedIdName": "Wind fever",
        }
    ]
    assert ui(fake, path, sabs="SNOMEDCT_US") == ["R90000002"]
    assert ui(fake, path, includeAdditionalRelationLabels="isa") == ["R90000002"]
    both = {"includeObsolete": "true", "includeSuppressible": "true"}
    assert ui(fake, path, **both) == ["R90000011", "R90000010", "R90000002", "R90000008"]
    concept = get(fake, "/content/2099AA/CUI/C9000001")[1]["result"]
    assert (concept["relations"], concept["relationCount"]) == (f"{C}/CUI/C9000001/relations", 4)
    assert get(fake, "/content/2099AA/CUI/C9000004/relations")[0] == 404
    assert get(fake, path, includeRelationLabels="SIB")[0] == 404


def test_relations_of_a_source_code_and_of_an_atom(fake: FakeUts) -> None:
    status, doc = get(fake, "/content/2099AA/source/SNOMEDCT_US/9990191001/relations")
    assert status == 200
    assert [
        (r["classType"], r["relatedFromId"], r["relationLabel"], r["additionalRelationLabel"],
         r["relatedId"], r["relatedIdName"])
        for r in doc["result"]
    ] == [
        ("AtomClusterRelation", f"{C}/source/SNOMEDCT_US/9990191001", "PAR", "inverse_isa",
         f"{C}/source/SNOMEDCT_US/9990102002", "Glimmer pox"),
        ("AtomClusterRelation", f"{C}/source/SNOMEDCT_US/9990191001", "PAR", "inverse_isa",
         f"{C}/source/SNOMEDCT_US/9990192008", "Wind fever"),
    ]  # fmt: skip
    assert results(fake, "/content/2099AA/AUI/A9000602/relations", "classType", "relatedFromId",
                   "additionalRelationLabel", "relatedId", "relatedIdName") == [
        ("AtomRelation", f"{C}/AUI/A9000602", "tradename_of", f"{C}/AUI/A9000601",
         "zorbatrex 50 MG Oral Tablet"),
    ]  # fmt: skip
    assert get(fake, "/content/2099AA/source/SNOMEDCT_US/9990103007/relations")[0] == 404
    assert get(fake, "/content/2099AA/AUI/A9000011/relations")[0] == 404  # only SCUI relations
    assert get(fake, "/content/2099AA/AUI/A0000000/relations")[0] == 404


def test_semantic_types_of_a_concept_and_the_semantic_network(fake: FakeUts) -> None:
    concept = get(fake, "/content/current/CUI/C9000001")[1]["result"]
    assert concept["semanticTypes"] == [
        {"name": "Invented Disorder", "uri": f"{B}/semantic-network/2099AA/TUI/T901"},
        {"name": "Invented Weather Finding", "uri": f"{B}/semantic-network/2099AA/TUI/T902"},
    ]
    status, doc = get(fake, "/semantic-network/2099AA/TUI/T901")
    assert (status, doc["pageCount"]) == (200, 1)
    assert doc["result"] == {
        "classType": "SemanticType",
        "abbreviation": "NONE",
        "ui": "T901",
        "definition": "NONE",
        "example": "NONE",
        "nonHuman": "NONE",
        "usageNote": "NONE",
        "treeNumber": "B9.1",
        "semanticTypeGroup": "NONE",
        "childCount": 1,  # T902, B9.1.1
        "name": "Invented Disorder",
    }
    assert get(fake, "/semantic-network/current/TUI/T902")[1]["result"]["childCount"] == 0
    assert get(fake, "/semantic-network/2099AA/TUI/T047")[0] == 404
    assert get(fake, "/content/2099AA/CUI/C9100000")[1]["result"]["semanticTypes"] == []


def test_without_mrsty_every_concept_has_the_one_invented_type() -> None:
    rows = [mrconso_row("C9000001", "A90000001", "MSH", "MH", "D1", "Invented fever")]
    fake = FakeUts(FakeUtsData.from_lines(rows), api_key=CANARY_KEY)
    concept = get(fake, "/content/2099AA/CUI/C9000001")[1]["result"]
    assert concept["semanticTypes"] == [
        {"name": "Invented Type", "uri": f"{B}/semantic-network/2099AA/TUI/T999"}
    ]
    assert get(fake, "/semantic-network/2099AA/TUI/T999")[1]["result"]["name"] == "Invented Type"


# -- hierarchies ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "kind", "expected"),
    [
        ("9990101009", "parents", [("9990192008", "Wind fever")]),
        ("9990101009", "ancestors", [("9990192008", "Wind fever"),
                                     ("9990191001", "Meteoric disorder")]),
        ("9990191001", "children", [("9990102002", "Glimmer pox"),
                                    ("9990192008", "Wind fever")]),
        ("9990191001", "descendants", [("9990102002", "Glimmer pox"),
                                       ("9990192008", "Wind fever"),
                                       ("9990101009", "Zephyr fever")]),
    ],
)  # fmt: skip
def test_the_hierarchy_of_a_source_code(
    fake: FakeUts, code: str, kind: str, expected: list[tuple[str, str]]
) -> None:
    path = f"/content/2099AA/source/SNOMEDCT_US/{code}/{kind}"
    found = results(fake, path, "classType", "ui", "name", "rootSource")
    assert found == [("SourceAtomCluster", u, n, "SNOMEDCT_US") for u, n in expected]


@pytest.mark.parametrize(
    "path",
    [
        "/content/2099AA/source/SNOMEDCT_US/9990101009/children",
        "/content/2099AA/source/SNOMEDCT_US/9990101009/descendants",
        "/content/2099AA/source/SNOMEDCT_US/9990191001/parents",
        "/content/2099AA/source/SNOMEDCT_US/9990191001/ancestors",
        "/content/2099AA/source/SNOMEDCT_US/9990103007/parents",  # in no hierarchy
        "/content/2099AA/source/SNOMEDCT_US/0000/parents",
        "/content/2099AA/AUI/A9000013/parents",
        "/content/2099AA/AUI/A0000000/children",
    ],
)
def test_no_relatives_is_404(fake: FakeUts, path: str) -> None:
    assert get(fake, path)[0] == 404


def test_hl7_codes_and_atoms_have_atoms_for_relatives(fake: FakeUts) -> None:
    fields = ("classType", "ui", "name", "rootSource")
    assert results(fake, "/content/2099AA/source/HL7V3.0/AMB/parents", *fields) == [
        ("Atom", "A9000921", "InventedEncounterCode", "HL7V3.0")
    ]
    assert results(
        fake, "/content/2099AA/source/HL7V3.0/_InventedEncounterCode/children", *fields
    ) == [("Atom", "A9000703", "ambulatory", "HL7V3.0")]
    assert ui(fake, "/content/2099AA/AUI/A9000911/parents") == ["A9000901"]
    assert ui(fake, "/content/2099AA/AUI/A9000011/ancestors") == ["A9000911", "A9000901"]
    assert ui(fake, "/content/2099AA/AUI/A9000901/descendants") == [
        "A9000021", "A9000911", "A9000011",
    ]  # fmt: skip
    # an atom links its relatives when the fake has them, else as NLM's sample atom: "NONE"
    # for parents and children, null for ancestors and descendants
    atom = get(fake, "/content/2099AA/AUI/A9000011")[1]["result"]
    assert [atom[k] for k in ("parents", "ancestors", "children", "descendants")] == [
        f"{C}/AUI/A9000011/parents", f"{C}/AUI/A9000011/ancestors", "NONE", None,
    ]  # fmt: skip
    atom = get(fake, "/content/2099AA/AUI/A9000013")[1]["result"]
    assert [atom[k] for k in ("parents", "ancestors", "children", "descendants")] == [
        "NONE", None, "NONE", None,
    ]  # fmt: skip


def test_a_cycle_in_mrhier_ends(tmp_path: Path) -> None:
    rows = [mrconso_row("C9000001", f"A9000000{n}", "MSH", "MH", f"D{n}", f"Term {n}")
            for n in (1, 2)]  # fmt: skip
    (tmp_path / "MRCONSO.RRF").write_text("".join(rows), encoding="utf-8")
    (tmp_path / "MRHIER.RRF").write_text(
        "C9000001|A90000001|1|A90000002|MSH||A90000002|D1||\n"
        "C9000001|A90000002|1|A90000001|MSH||A90000001|D2||\n",
        encoding="utf-8",
    )
    fake = FakeUts(FakeUtsData.from_meta(tmp_path), api_key=CANARY_KEY)
    assert ui(fake, "/content/2099AA/AUI/A90000001/descendants") == ["A90000002"]
    assert ui(fake, "/content/2099AA/source/MSH/D1/descendants") == ["D2"]


# -- sources, the key, faults ---------------------------------------------------------------------


def test_sources_are_answered_without_a_key_and_the_fake_says_none_was_sent(
    fake: FakeUts,
) -> None:
    status, doc = get(fake, "/metadata/current/sources", key=None)
    assert status == 200
    assert (doc["pageSize"], doc["pageNumber"], doc["pageCount"]) == (11, 1, 1)
    assert [s["abbreviation"] for s in doc["result"]] == [
        "HL7V3.0", "LNC", "LNC-DE-DE", "MDR", "MSH", "MSHGER", "MTH", "NCI", "RXNORM", "SCTSPA",
        "SNOMEDCT_US",
    ]  # one row a source: the older SNOMEDCT_US version is not current  # fmt: skip
    snomed = doc["result"][-1]
    assert snomed == {
        "classType": "RootSource",
        "abbreviation": "SNOMEDCT_US",
        "expandedForm": "Invented stand-in for SNOMEDCT_US, 2099",
        "family": "SNOMEDCT",
        "language": {"classType": "Language", "abbreviation": "ENG", "expandedForm": "English"},
        "restrictionLevel": 9,
        "acquisitionContact": "NONE",
        "contentContact": "NONE",
        "licenseContact": "NONE",
        "contextType": "NONE",
        "shortName": "Invented SNOMEDCT_US",
        "hierarchicalName": "NONE",
        "preferredName": "Invented stand-in for SNOMEDCT_US, 2099",
        "synonymousNames": "NONE",
    }
    assert get(fake, "/metadata/2099AA/sources", key="a wrong key")[0] == 200
    assert [(s.path, s.key_sent, s.key_ok) for s in fake.seen] == [
        ("/metadata/current/sources", False, False),
        ("/metadata/2099AA/sources", True, False),
    ]
    assert get(fake, "/metadata/2098AA/sources", key=None)[0] == 404  # a release not served
    assert get(fake, "/search/2099AA", key=None, string="fever")[0] == 401  # anything else: 401


def test_without_mrsab_the_sources_are_those_of_mrconso() -> None:
    rows = [
        mrconso_row("C9000001", "A90000001", "MSH", "MH", "D1", "Invented fever"),
        mrconso_row("C9000001", "A90000002", "MSHGER", "MH", "D1", "Erfundenes", lat="GER"),
        mrconso_row("C9000002", "A90000003", "MSH", "MH", "D2", "Invented cough"),
    ]
    fake = FakeUts(FakeUtsData.from_lines(rows), api_key=CANARY_KEY)
    assert results(fake, "/metadata/2099AA/sources", "abbreviation", "family",
                   "restrictionLevel") == [("MSH", "MSH", 0), ("MSHGER", "MSHGER", 0)]  # fmt: skip
    assert get(fake, "/metadata/2099AA/sources")[1]["result"][1]["language"] == {
        "classType": "Language", "abbreviation": "GER", "expandedForm": "German",
    }  # fmt: skip


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
def test_faults_apply_to_every_route(meta: FakeUtsData, path: str) -> None:
    fake = FakeUts(meta, api_key=CANARY_KEY, faults=Faults(script=["503", "html502", "429"]))
    base, _, query = path.partition("?")
    params = dict([query.split("=")]) if query else {}
    assert [get_status(fake, base, **params) for _ in range(4)] == [503, 502, 429, 200]
    assert [s.fault for s in fake.seen] == ["503", "html502", "429", None]


def get_status(fake: FakeUts, path: str, **params: str) -> int:
    query = {"apiKey": [CANARY_KEY], **{k: [v] for k, v in params.items()}}
    return fake.handle(path, query, base_url=B).status


def test_a_wrong_key_is_401_on_the_new_routes_and_the_key_is_never_kept(fake: FakeUts) -> None:
    for path in ("/search/2099AA", "/crosswalk/2099AA/source/MSH/D990090",
                 "/semantic-network/2099AA/TUI/T901"):  # fmt: skip
        assert get(fake, path, key="wrong", string="fever")[0] == 401
    get(fake, "/search/2099AA", string="fever")
    assert [(s.key_sent, s.key_ok, s.status) for s in fake.seen] == [(True, False, 401)] * 3 + [
        (True, True, 200)
    ]
    assert CANARY_KEY not in repr(fake.seen)


@pytest.mark.parametrize(
    "path",
    [
        "/content/2099AA/CUI/C9000001/nothing",
        "/content/2099AA/AUI/A9000011/nothing",
        "/content/2099AA/source/SNOMEDCT_US/9990101009/nothing",
        "/content/2099AA/source/SNOMEDCT_US/9990101009/parents/more",
        "/content/2099AA/CUI",
        "/crosswalk/2099AA/CUI/C9000001",
        "/semantic-network/2099AA/STY/Invented",
        "/metadata/2099AA/languages",
        "/search/2099AA/more",
        "/search",
        "/search/2098AB",
    ],
)
def test_unknown_routes_are_404(fake: FakeUts, path: str) -> None:
    status, doc = get(fake, path, string="fever")
    assert (status, doc["status"]) == (404, 404)


def test_a_relation_to_an_atom_the_fake_does_not_have_names_nothing(tmp_path: Path) -> None:
    (tmp_path / "MRCONSO.RRF").write_text(
        mrconso_row("C9000001", "A90000001", "MSH", "MH", "D1", "Invented fever"), "utf-8"
    )
    (tmp_path / "MRREL.RRF").write_text(
        "C9000002|A90000009|SCUI|RO|C9000001|A90000001|SCUI||R1||MSH|MSH|||N||\n", "utf-8"
    )
    fake = FakeUts(FakeUtsData.from_meta(tmp_path), api_key=CANARY_KEY)
    found = results(fake, "/content/2099AA/source/MSH/D1/relations", "relatedFromIdName",
                    "relatedId", "relatedIdName")  # fmt: skip
    assert found == [("Invented fever", "NONE", "NONE")]


def test_obsolete_is_exactly_suppress_o_and_suppressible_exactly_e_or_y() -> None:
    """SPEC 12: ``includeObsolete=true`` alone brings back the ``O`` atoms (an obsolete atom is
    not also suppressible), ``includeSuppressible=true`` alone the ``E`` and ``Y`` ones."""
    rows = [
        mrconso_row("C9100001", "A91000001", "MSH", "MH", "D1", "Gust ache"),
        mrconso_row("C9100001", "A91000002", "MSH", "EN", "D1", "Gust aches", suppress="O"),
        mrconso_row("C9100001", "A91000003", "MSH", "EN", "D1", "Ache of gust", suppress="E"),
        mrconso_row("C9100001", "A91000004", "MSH", "EN", "D1", "Gusty ache", suppress="Y"),
        mrconso_row("C9100002", "A91000005", "MSH", "MH", "D2", "Old gust", suppress="O"),
        mrconso_row("C9100003", "A91000006", "MSH", "MH", "D3", "Hid gust", suppress="O"),
        mrconso_row("C9100003", "A91000007", "MSH", "EN", "D3", "Hid gusts", suppress="E"),
    ]
    fake = FakeUts(FakeUtsData.from_lines(rows), api_key=CANARY_KEY)

    def atoms(**params: str) -> list[tuple[Any, ...]]:
        path = "/content/2099AA/CUI/C9100001/atoms"
        return sorted(results(fake, path, "ui", "obsolete", "suppressible", **params))

    n, o = ("A91000001", "false", "false"), ("A91000002", "true", "false")
    e, y = ("A91000003", "false", "true"), ("A91000004", "false", "true")
    assert atoms() == [n]
    assert atoms(includeObsolete="true") == [n, o]
    assert atoms(includeSuppressible="true") == [n, e, y]
    assert atoms(includeObsolete="true", includeSuppressible="true") == [n, o, e, y]
    exact = {"string": "gust aches", "searchType": "exact"}
    assert ui(fake, "/search/2099AA", **exact) == ["NONE"]
    assert ui(fake, "/search/2099AA", includeSuppressible="true", **exact) == ["NONE"]
    assert ui(fake, "/search/2099AA", includeObsolete="true", **exact) == ["C9100001"]
    # a code whose every atom is obsolete is obsolete, not suppressible; one with no N atom
    # and not every atom obsolete is suppressible
    cluster = {c: get(fake, f"/content/2099AA/source/MSH/{c}")[1]["result"] for c in ("D2", "D3")}
    assert (cluster["D2"]["obsolete"], cluster["D2"]["suppressible"]) == (True, False)
    assert (cluster["D3"]["obsolete"], cluster["D3"]["suppressible"]) == (False, True)


@pytest.mark.parametrize("faults", [{"rate": 0.3}, "429", ["reset"]])
def test_faults_that_are_not_a_faults_are_a_type_error(meta: FakeUtsData, faults: Any) -> None:
    """A dict (or anything else) where a ``Faults`` belongs was accepted, and every request
    then failed on it inside the server: it is refused where it is given."""
    with pytest.raises(TypeError) as raised:
        FakeUts(meta, api_key=CANARY_KEY, faults=faults)
    assert str(raised.value) == (
        f"faults takes a tempmedbench_synonyms.testing.Faults, not a {type(faults).__name__} "
        f"({faults!r}): write faults=Faults(...) with those settings, such as "
        "Faults(rate=0.3, kinds=('429',))"
    )
