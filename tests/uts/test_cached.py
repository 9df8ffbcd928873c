"""CachedUts: one answer from the cache, else from UMLS, and the requests SPEC section 3 names.

Most of CachedUts is exercised through the REST source (tests/test_rest_source.py); these tests
ask it directly, as the ``umls`` commands do.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import responses
from uts_helpers import BASE, Q_AUI, Q_CUI, Q_MISSING, REL, fake_uts, make_uts

from tempmedbench_synonyms.atoms import AtomQuery
from tempmedbench_synonyms.errors import BadInputError, UnavailableError
from tempmedbench_synonyms.testing import add_fake_uts
from tempmedbench_synonyms.uts.cache import LAYOUT
from tempmedbench_synonyms.uts.cached import request_for


@responses.activate
def test_a_cached_not_found_is_a_hit_and_an_unasked_query_a_miss(tmp_path: Path) -> None:
    """``cached_atoms`` tells "the cache says 404" (``Hit(None, ...)``) from "never asked"."""
    add_fake_uts(responses.mock, fake_uts(), base_url=BASE)
    now = [1_700_000_000.0]
    uts = make_uts(tmp_path, now=now)
    assert uts.cached_atoms(REL, Q_MISSING) is None  # never asked
    assert uts.fetch_atoms(REL, Q_MISSING) is None  # UMLS: 404
    assert uts.fetch_atoms(REL, Q_AUI) is not None
    offline = make_uts(tmp_path, offline=True)
    missing = offline.cached_atoms(REL, Q_MISSING)
    assert missing is not None and (missing.value, missing.stored_at) == (None, now[0])
    found = offline.cached_atoms(REL, Q_AUI)
    assert found is not None and [a.ui for a in found.value or []] == ["A90000009"]
    assert offline.cached_atoms(REL, Q_CUI) is None
    assert (offline.cache_hits, offline.requests_sent, uts.requests_sent) == (2, 0, 2)


@responses.activate
def test_an_answer_the_models_cannot_read_is_unavailable_naming_the_fields(tmp_path: Path) -> None:
    """CachedUts reads every UTS answer with the client's ``parse_model``, and caches none."""
    broken = {"classType": "Atom", "ui": "A90000009", "name": "x", "rootSource": "SNOMEDCT_US"}
    responses.get(f"{BASE}/content/{REL}/AUI/A90000009", json={"result": broken})
    responses.get(f"{BASE}/content/{REL}/CUI/C9000001", json={"result": {"name": "no ui"}})
    uts = make_uts(tmp_path)
    with pytest.raises(UnavailableError) as info:
        uts.atoms(REL, Q_AUI)
    assert str(info.value) == "UMLS sent an atom this tool cannot read (problem with: termType)"
    with pytest.raises(UnavailableError) as info:
        uts.concept(REL, "C9000001")
    assert str(info.value) == "UMLS sent a concept this tool cannot read (problem with: ui)"
    assert info.value.hint == "the UTS response format may have changed; please report it"
    assert list((tmp_path / LAYOUT).rglob("*.json")) == []  # nothing unreadable was stored


@pytest.mark.parametrize(
    ("query", "message"),
    [
        (AtomQuery("source", "SNOMEDCT_US", ".."),
         "route source: code '..' cannot be sent to UMLS: it is made only of dots, which HTTP "
         "clients remove from a URL path (RFC 3986, section 5.2.4), so another resource would "
         "be asked for"),
        (AtomQuery("source", "SNOMEDCT_US", "."),
         "route source: code '.' cannot be sent to UMLS: it is made only of dots, which HTTP "
         "clients remove from a URL path (RFC 3986, section 5.2.4), so another resource would "
         "be asked for"),
        (AtomQuery("cui", "MTH", "..."),
         "route cui: cui '...' cannot be sent to UMLS: it is made only of dots, which HTTP "
         "clients remove from a URL path (RFC 3986, section 5.2.4), so another resource would "
         "be asked for"),
        (AtomQuery("aui", "MTH", ""), "route aui: aui '' cannot be sent to UMLS: it is empty"),
        (AtomQuery("source", "LNC", "12\x00"),
         "route source: code '12\\x00' cannot be sent to UMLS: it contains the control "
         "character U+0000"),
        (AtomQuery("aui", "MTH", "A1\n"),
         "route aui: aui 'A1\\n' cannot be sent to UMLS: it contains the control character "
         "U+000A"),
        (AtomQuery("source", "..", "1000001"),
         "route source: sab '..' cannot be sent to UMLS: it is made only of dots, which HTTP "
         "clients remove from a URL path (RFC 3986, section 5.2.4), so another resource would "
         "be asked for"),
    ],
)  # fmt: skip
def test_identifiers_an_http_client_would_rewrite_are_bad_input(
    query: AtomQuery, message: str
) -> None:
    with pytest.raises(BadInputError) as info:
        request_for(REL, query)
    assert str(info.value) == message
    field = "sab" if query.sab == ".." else {"source": "code"}.get(query.route, query.route)
    assert info.value.hint == (
        f'check the {field}: in a release, it is the concept\'s "{field}" in '
        "synonyms/synonym_table_kept.json"
    )


def test_identifiers_with_dots_among_other_characters_are_sent_encoded() -> None:
    assert request_for(REL, AtomQuery("source", "LNC", "1.2"))[0] == (
        f"/content/{REL}/source/LNC/1.2/atoms"
    )
    assert request_for(REL, AtomQuery("source", "LNC", "../x"))[0] == (
        f"/content/{REL}/source/LNC/..%2Fx/atoms"
    )
