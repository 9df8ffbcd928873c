"""paths: every request SPEC section 3 names, built in one place from checked identifiers."""

from __future__ import annotations

import pytest

from tempmedbench_synonyms import paths
from tempmedbench_synonyms.atoms import AtomQuery
from tempmedbench_synonyms.errors import BadInputError
from tempmedbench_synonyms.lookups import (
    Crosswalk,
    Definitions,
    Hierarchy,
    Relations,
    Search,
    SourceAtoms,
    SourceConcept,
)
from tempmedbench_synonyms.paths import UtsRequest

ATOMS = (
    ("language", "ENG"),
    ("includeObsolete", "false"),
    ("includeSuppressible", "false"),
    ("pageSize", "200"),
)


def test_each_route_builds_the_request_of_spec_section_3() -> None:
    assert paths.for_query("2025AB", AtomQuery("source", "SNOMEDCT_US", "38341003")) == (
        UtsRequest("atoms", "/content/2025AB/source/SNOMEDCT_US/38341003/atoms", ATOMS)
    )
    assert paths.for_query("2025AB", AtomQuery("cui", "RXNORM", "C0978482")) == UtsRequest(
        "atoms", "/content/2025AB/CUI/C0978482/atoms", (*ATOMS, ("sabs", "RXNORM"))
    )
    # Route aui sends only apiKey (added by the client), and not its sab.
    assert paths.for_query("2025AB", AtomQuery("aui", "", "A3220484")) == UtsRequest(
        "atom", "/content/2025AB/AUI/A3220484"
    )
    assert paths.concept("current", "C0020538") == UtsRequest(
        "concept", "/content/current/CUI/C0020538"
    )
    assert paths.concept_atoms("2025AA", "C0020538") == UtsRequest(
        "atoms", "/content/2025AA/CUI/C0020538/atoms", ATOMS
    )
    assert paths.for_query("2025AB", AtomQuery("cui", "MTH", "C0000001")).param_dict == {
        "language": "ENG",
        "includeObsolete": "false",
        "includeSuppressible": "false",
        "pageSize": "200",
        "sabs": "MTH",
    }


def test_a_code_is_path_encoded_as_one_segment() -> None:
    assert paths.for_query("2099AA", AtomQuery("source", "LNC", "1.2")).path == (
        "/content/2099AA/source/LNC/1.2/atoms"
    )
    assert paths.for_query("2099AA", AtomQuery("source", "LNC", "../x")).path == (
        "/content/2099AA/source/LNC/..%2Fx/atoms"
    )
    assert paths.for_query("2099AA", AtomQuery("source", "MTH", "a b?c#d%")).path == (
        "/content/2099AA/source/MTH/a%20b%3Fc%23d%25/atoms"
    )


#: codes and their segment: SPEC 3's ``quote(code, safe="")``, UTF-8 with upper-case hex
SEGMENTS = {"A_b.9-~": "A_b.9-~", "": "", "caf\u00e9~": "caf%C3%A9~", "\u212a": "%E2%84%AA"}
SEGMENTS |= {"a+b": "a%2Bb", "x\ny": "x%0Ay", "%/?# ": "%25%2F%3F%23%20"}


def test_a_segment_is_quoted_as_spec_says_whether_or_not_quote_is_called() -> None:
    """``seg`` leaves out the quote call for what it would leave as it is (letters, digits,
    ``_.-~``), and gives the same bytes for every code."""
    assert {code: paths.seg(code) for code in SEGMENTS} == SEGMENTS


def test_url_joins_a_base_url_with_or_without_its_final_slash() -> None:
    assert paths.url("https://uts.invalid/rest/", "/content/2025AB/AUI/A3220484") == (
        "https://uts.invalid/rest/content/2025AB/AUI/A3220484"
    )
    assert paths.url("https://uts.invalid/rest", "/x") == "https://uts.invalid/rest/x"


DOTS = (
    "cannot be sent to UMLS: it is made only of dots, which HTTP clients remove from a URL path "
    "(RFC 3986, section 5.2.4), so another resource would be asked for"
)


@pytest.mark.parametrize(
    ("query", "message"),
    [
        (AtomQuery("source", "SNOMEDCT_US", ".."), f"code '..' {DOTS}"),
        (AtomQuery("source", "SNOMEDCT_US", "."), f"code '.' {DOTS}"),
        (AtomQuery("source", "LNC", ""), "code '' cannot be sent to UMLS: it is empty"),
        (AtomQuery("source", "LNC", "12\x00"),
         "code '12\\x00' cannot be sent to UMLS: it contains the control character U+0000"),
        (AtomQuery("cui", "MTH", "..."),
         "CUI '...' is not a UMLS concept identifier: expected C and 7 digits, such as C0020538"),
        (AtomQuery("aui", "MTH", ""),
         "AUI '' is not a UMLS atom identifier: expected A and 7 to 9 digits, such as A3220484"),
        (AtomQuery("aui", "MTH", "A1234567\n"),
         "AUI 'A1234567\\n' is not a UMLS atom identifier: expected A and 7 to 9 digits, such as "
         "A3220484"),
        (AtomQuery("source", "..", "1000001"),
         "SAB '..' is not a UMLS source abbreviation: expected upper-case letters, digits, '_', "
         "'.' and '-', such as SNOMEDCT_US"),
    ],
)  # fmt: skip
def test_an_identifier_that_cannot_be_sent_is_bad_input(query: AtomQuery, message: str) -> None:
    with pytest.raises(BadInputError) as info:
        paths.for_query("2099AA", query)
    assert str(info.value) == message
    field = "sab" if query.sab == ".." else {"source": "code"}.get(query.route, query.route)
    assert info.value.hint is not None
    assert info.value.hint.endswith(
        f'give it as UMLS lists it (in a release table, the concept\'s "{field}")'
    )


def test_the_release_of_every_request_is_checked() -> None:
    for build in (
        lambda: paths.concept("../2025AB", "C0020538"),
        lambda: paths.concept_atoms("2025ab", "C0020538"),
        lambda: paths.for_query("foo", AtomQuery("aui", "", "A3220484")),
    ):
        with pytest.raises(BadInputError, match=r"is not a UMLS release name: expected YYYYAA"):
            build()


def test_the_sabs_of_a_table_are_offered_for_a_malformed_sab() -> None:
    query = AtomQuery("cui", "my_src", "C0000001")
    with pytest.raises(BadInputError) as info:
        paths.for_query("2099AA", query, sabs={"MY_SRC", "my_src"})
    assert (info.value.hint or "").startswith("did you mean MY_SRC? ")


# -- SPEC section 11 ------------------------------------------------------------------------------


def test_a_search_term_is_bounded_and_a_tui_is_checked() -> None:
    assert paths.check_term("x" * paths.MAX_TERM_LENGTH) == "x" * paths.MAX_TERM_LENGTH
    with pytest.raises(BadInputError) as info:
        paths.check_term("y" * (paths.MAX_TERM_LENGTH + 1))
    assert str(info.value) == (
        f"search term {'y' * 40 + '...'!r} cannot be sent to UMLS: it is 501 characters long, "
        "more than the 500 allowed"
    )
    assert paths.check_tui("T047") == "T047" and not paths.is_tui("T47")
    with pytest.raises(BadInputError, match=r"TUI '../T047' is not a UMLS semantic type"):
        paths.semantic_type("2099AA", "../T047")


def test_only_sources_go_without_the_key_and_a_limit_is_never_sent() -> None:
    assert paths.sources("current", limit=1000) == UtsRequest(
        "list", "/metadata/current/sources", (("pageSize", "200"),), keyless=True, limit=1000
    )
    others = [
        *(
            kind.request("2099AA")
            for kind in (
                Search("x", limit=3),
                Crosswalk("INV", "1", limit=4),
                Definitions("C9000001"),
                Relations(aui="A90000001"),
                Hierarchy("descendants", sab="INV", code="a/b"),
                SourceConcept("INV", "1"),
                SourceAtoms("INV", "1", preferred=True),
            )
        ),
        paths.semantic_type("2099AA", "T047"),
    ]
    assert not any(r.keyless for r in others)
    assert not any(name == "limit" for r in others for name, _ in r.params)
    assert others[4].path == "/content/2099AA/source/INV/a%2Fb/descendants"
    assert [r.kind for r in others] == [
        "search", "list", "list", "list", "list", "object", "atom", "object",
    ]  # fmt: skip


def test_a_quoted_input_is_masked_before_it_is_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    """A message quotes 40 characters of a bad input; the key in it is masked first, so the cut
    never leaves a piece of it (one that masking would no longer know)."""
    from tempmedbench_synonyms import secret
    from tempmedbench_synonyms.testing import CANARY_KEY

    monkeypatch.setattr(secret, "_SECRETS", {CANARY_KEY})
    with pytest.raises(BadInputError) as info:
        paths.check_term("a few words typed first " + CANARY_KEY + "\x01")
    assert str(info.value) == (
        "search term 'a few words typed first ***\\x01' cannot be sent to UMLS: it contains "
        "the control character U+0001"
    )
