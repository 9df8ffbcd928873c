"""CachedUts: one answer from the cache, else from UMLS, and the requests SPEC section 3 names.

Most of CachedUts is exercised through the REST source (test_source.py); these tests ask it
directly, as the ``umls`` commands do, and pin the memo of a run, which it owns.
"""

from __future__ import annotations

import logging
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import responses

from helpers.uts import BASE, Q_AUI, Q_CUI, Q_MISSING, Q_SOURCE, QUERIES, REL, fake_uts, make_uts
from tempmedbench_synonyms import Umls, constants
from tempmedbench_synonyms.atoms import Atom
from tempmedbench_synonyms.errors import UnavailableError
from tempmedbench_synonyms.paths import for_query
from tempmedbench_synonyms.testing import CANARY_KEY, VirtualTime, add_fake_uts, find_secret
from tempmedbench_synonyms.uts.cache import LAYOUT, CacheKey, ResponseCache
from tempmedbench_synonyms.uts.cached import CachedUts
from tempmedbench_synonyms.uts.models import UtsAtom
from tempmedbench_synonyms.uts.source import RestAtomSource


def source(uts: CachedUts) -> RestAtomSource:
    """The memo's only user: a warm run of the REST source."""
    return RestAtomSource(uts, workers=4, tick=0.01)


@responses.activate
def test_a_cached_not_found_is_a_hit_and_an_unasked_query_a_miss(tmp_path: Path) -> None:
    """The cache tells "UMLS said 404" (an answer: ``None``) from "never asked" (a miss)."""
    add_fake_uts(responses.mock, fake_uts(), base_url=BASE)
    now = VirtualTime(1_700_000_000.0)
    uts = make_uts(tmp_path, now=now)
    cold = source(uts).fetch(REL, "C9000001", [Q_MISSING, Q_AUI])
    assert cold.atoms[Q_MISSING] is None  # UMLS: 404
    assert (cold.requests, cold.cache_hits) == (3, 0)  # the probe and the two queries
    offline = make_uts(tmp_path, offline=True)
    warm = source(offline).fetch(REL, "C9000001", [Q_AUI, Q_MISSING])  # not the cold run's memo
    assert warm.atoms[Q_MISSING] is None
    assert [a.aui for a in warm.atoms[Q_AUI] or ()] == ["A90000009"]
    assert (warm.requests, warm.cache_hits) == (0, 3)
    request = for_query(REL, Q_MISSING)
    entry = ResponseCache(tmp_path, BASE).get(CacheKey.make(REL, request.path,
                                                            request.param_dict))  # fmt: skip
    assert entry is not None and (entry.status, entry.stored_at) == (404, now.now)
    with pytest.raises(UnavailableError) as info:  # never asked: a miss
        source(make_uts(tmp_path, offline=True)).fetch(REL, "C9000001", [Q_MISSING, Q_CUI])
    assert str(info.value) == (
        f"--offline, and the cache does not hold the atoms of 1 of 2 concepts of release {REL} "
        "(cui RXNORM C9000002)"
    )


@responses.activate
def test_an_answer_the_models_cannot_read_is_unavailable_naming_the_fields(tmp_path: Path) -> None:
    """CachedUts reads every UTS answer with the client's ``parse_model``, and caches none."""
    broken = {"classType": "Atom", "ui": "A90000009", "name": "x", "rootSource": "SNOMEDCT_US"}
    responses.get(f"{BASE}/content/{REL}/AUI/A90000009", json={"result": broken})
    responses.get(f"{BASE}/content/{REL}/CUI/C9000001", json={"result": {"name": "no ui"}})
    umls = Umls(REL, api_key=CANARY_KEY, cache_dir=tmp_path, base_url=BASE)
    with pytest.raises(UnavailableError) as info:
        umls.atom("A90000009")
    assert str(info.value) == "UMLS sent an atom this tool cannot read (problem with: termType)"
    with pytest.raises(UnavailableError) as info:
        umls.concept("C9000001")
    assert str(info.value) == "UMLS sent a concept this tool cannot read (problem with: ui)"
    assert info.value.hint == "the UTS response format may have changed; please report it"
    assert list((tmp_path / LAYOUT).rglob("*.json")) == []  # nothing unreadable was stored


# -- the memo follows the package version and every entry written ----------------------------------


@responses.activate
def test_a_memo_of_another_version_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A memo holds atoms already mapped by to_atom(); an upgrade may map them otherwise."""
    add_fake_uts(responses.mock, fake_uts(), base_url=BASE)
    cold = source(make_uts(tmp_path)).fetch(REL, "C9000001", [Q_AUI])
    assert cold.atoms[Q_AUI] == (
        Atom("A90000009", "Invented cough", "PT", "SNOMEDCT_US", "ENG", "C9000003", True),
    )
    # An upgrade whose mapping differs (here: names upper-cased).
    real = UtsAtom.to_atom
    monkeypatch.setattr(
        UtsAtom, "to_atom", lambda self: replace(real(self), name=self.name.upper())
    )
    monkeypatch.setattr(constants, "__version__", "99.0.0")
    warm = source(make_uts(tmp_path)).fetch(REL, "C9000001", [Q_AUI])
    assert warm.atoms[Q_AUI] == (
        Atom("A90000009", "INVENTED COUGH", "PT", "SNOMEDCT_US", "ENG", "C9000003", True),
    )
    assert (warm.requests, warm.cache_hits) == (0, 2)  # from the entries, not from UMLS
    memos = sorted(p.name for p in (tmp_path / LAYOUT).rglob(".memo/2099AA/*.json"))
    assert len(memos) == 2  # one per version: switching back does not rebuild either


@responses.activate
def test_a_memo_is_dropped_when_an_entry_is_rewritten_in_the_same_clock_tick(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = fake_uts()
    add_fake_uts(responses.mock, fake, base_url=BASE)
    source(make_uts(tmp_path)).fetch(REL, "C9000001", QUERIES)
    cache = ResponseCache(tmp_path, BASE)
    folder = cache.folder / REL
    before = folder.stat().st_mtime_ns
    # Another run rewrites one answer (UMLS renamed the atom) within the same mtime tick.
    request = for_query(REL, Q_AUI)
    key = CacheKey.make(REL, request.path, request.param_dict)
    entry = cache.get(key)
    assert entry is not None
    cache.put(key, 200, {**entry.result, "name": "Renamed cough"})
    os.utime(folder, ns=(before, before))
    warm = source(make_uts(tmp_path)).fetch(REL, "C9000001", QUERIES)
    assert [a.name for a in warm.atoms[Q_AUI] or ()] == ["Renamed cough"]
    assert warm.requests == 0


# -- the memo: one file answers a warm run while the entries are unchanged -----------------------


def _count_gets(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    real = ResponseCache.get

    def counting(self: ResponseCache, key: Any) -> Any:
        seen.append(key.path)
        return real(self, key)

    monkeypatch.setattr(ResponseCache, "get", counting)
    return seen


@responses.activate
def test_a_warm_run_reads_one_memo_instead_of_every_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_fake_uts(responses.mock, fake_uts(), base_url=BASE)
    cold = source(make_uts(tmp_path)).fetch(REL, "C9000001", QUERIES)
    gets = _count_gets(monkeypatch)
    warm = source(make_uts(tmp_path)).fetch(REL, "C9000001", QUERIES)
    assert warm.atoms == cold.atoms
    assert (warm.requests, warm.cache_hits) == (0, 5)
    assert gets == [f"/content/{REL}/CUI/C9000001"]  # the probe only
    memos = list((tmp_path / LAYOUT).rglob(".memo/2099AA/*.json"))
    assert len(memos) == 1


@responses.activate
def test_a_memo_is_dropped_when_an_entry_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = fake_uts()
    add_fake_uts(responses.mock, fake, base_url=BASE)
    cold = source(make_uts(tmp_path)).fetch(REL, "C9000001", QUERIES)
    # Another run refreshes one answer: the release folder changes, so the memo is stale.
    source(make_uts(tmp_path, refresh=True)).fetch(REL, "C9000001", [Q_AUI])
    gets = _count_gets(monkeypatch)
    warm = source(make_uts(tmp_path)).fetch(REL, "C9000001", QUERIES)
    assert warm.atoms == cold.atoms
    assert len(gets) == 5  # every entry read again
    gets.clear()
    source(make_uts(tmp_path)).fetch(REL, "C9000001", QUERIES)
    assert len(gets) == 1  # and the memo written anew


@responses.activate
def test_a_memo_answers_only_its_own_set_of_queries(tmp_path: Path) -> None:
    add_fake_uts(responses.mock, fake_uts(), base_url=BASE)
    source(make_uts(tmp_path)).fetch(REL, "C9000001", QUERIES)
    part = source(make_uts(tmp_path)).fetch(REL, "C9000001", [Q_AUI, Q_SOURCE])
    assert list(part.atoms) == [Q_AUI, Q_SOURCE]
    assert [a.aui for a in part.atoms[Q_AUI] or ()] == ["A90000009"]


@responses.activate
def test_a_corrupt_memo_is_one_warning_and_the_entries_answer(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    add_fake_uts(responses.mock, fake_uts(), base_url=BASE)
    cold = source(make_uts(tmp_path)).fetch(REL, "C9000001", QUERIES)
    memo = next((tmp_path / LAYOUT).rglob(".memo/2099AA/*.json"))
    memo.write_bytes(memo.read_bytes()[:40])
    with caplog.at_level(logging.WARNING, logger="tempmedbench_synonyms"):
        warm = source(make_uts(tmp_path)).fetch(REL, "C9000001", QUERIES)
    assert warm.atoms == cold.atoms
    assert [r.getMessage() for r in caplog.records] == [
        f"cache memo {memo} is corrupt (not JSON: Unterminated string starting at: line 1 "
        "column 20 (char 19)); reading the entries"
    ]


# -- the 404 rule (SPEC section 3): after the probe, a 404 is "not found" whatever its body --------

NOT_FOUND_BODIES = [
    ('{"status": 404, "error": "No results"}', "application/json"),
    ("<html><body><h1>404 Not Found</h1></body></html>", "text/html"),
    ("Not Found", "text/plain"),
    ("", None),
]
BODY_IDS = ["json", "html", "text", "empty"]


def _add_404(path: str, body: str, content_type: str | None) -> None:
    response = responses.Response(responses.GET, BASE + path, status=404, body=body)
    response.content_type = content_type  # type: ignore[assignment]
    responses.add(response)


@pytest.mark.parametrize(("body", "content_type"), NOT_FOUND_BODIES, ids=BODY_IDS)
@responses.activate
def test_after_the_probe_a_404_means_not_found_whatever_its_body(
    tmp_path: Path, body: str, content_type: str | None
) -> None:
    """Registered before the fake, these two 404s answer the source and aui requests."""
    _add_404(for_query(REL, Q_SOURCE).path, body, content_type)
    _add_404(for_query(REL, Q_AUI).path, body, content_type)
    add_fake_uts(responses.mock, fake_uts(), base_url=BASE)
    result = source(make_uts(tmp_path)).fetch(REL, "C9000001", [Q_SOURCE, Q_AUI, Q_CUI])
    assert (result.atoms[Q_SOURCE], result.atoms[Q_AUI]) == (None, None)  # drifted
    assert sorted(a.aui for a in result.atoms[Q_CUI] or ()) == ["A90000007", "A90000008"]
    assert result.requests == 4  # the probe and three queries, none retried
    # "Not found" is cached like every answer: offline, the same verdict without a request.
    offline = source(make_uts(tmp_path, offline=True)).fetch(
        REL, "C9000001", [Q_SOURCE, Q_AUI, Q_CUI]
    )
    assert (offline.atoms, offline.requests) == (result.atoms, 0)
    assert find_secret(CANARY_KEY, folders=[tmp_path]) == []


@pytest.mark.parametrize(("body", "content_type"), NOT_FOUND_BODIES[1:], ids=BODY_IDS[1:])
@responses.activate
def test_a_probe_answered_from_the_cache_confirms_uts_too(
    tmp_path: Path, body: str, content_type: str | None
) -> None:
    _add_404(for_query(REL, Q_SOURCE).path, body, content_type)
    add_fake_uts(responses.mock, fake_uts(), base_url=BASE)
    source(make_uts(tmp_path)).fetch(REL, "C9000001", [Q_CUI])
    result = source(make_uts(tmp_path)).fetch(REL, "C9000001", [Q_CUI, Q_SOURCE])
    assert result.atoms[Q_SOURCE] is None
    assert (result.requests, result.cache_hits) == (1, 2)  # the probe came from the cache
    assert [c.request.url.split("?")[0] for c in responses.calls][-1] == (
        BASE + for_query(REL, Q_SOURCE).path
    )


@pytest.mark.parametrize(("body", "content_type"), NOT_FOUND_BODIES[1:], ids=BODY_IDS[1:])
@responses.activate
def test_without_a_probe_a_404_that_is_not_json_is_not_uts(
    tmp_path: Path, body: str, content_type: str | None
) -> None:
    """The ``umls`` commands send no probe: nothing says the server is UTS, so a 404 without
    a JSON body is a wrong base URL, as for the probe itself, and nothing is cached."""
    _add_404(for_query(REL, Q_AUI).path, body, content_type)
    umls = Umls(REL, api_key=CANARY_KEY, cache_dir=tmp_path, base_url=BASE)
    with pytest.raises(UnavailableError) as info:
        umls.atom("A90000009")
    assert str(info.value) == (
        f"{BASE} answered HTTP 404 for {for_query(REL, Q_AUI).path} with a "
        f"{content_type or 'no content type'} body, not the JSON the UMLS REST API sends: this "
        "does not look like the UMLS REST API"
    )
    # (the Python API names its keyword where the CLI says --base-url)
    assert (info.value.hint or "").startswith("check base_url (or UMLS_BASE_URL)")
    assert list((tmp_path / LAYOUT).rglob("*.json")) == []


MIRROR = "https://m.invalid/content/uts/rest"


@pytest.mark.parametrize(
    ("base_url", "links", "release"),
    [
        # the first link that names a release: atoms, defaultPreferredAtom, relations, definitions
        (BASE, {"atoms": "NONE",
                "defaultPreferredAtom": f"{BASE}/content/2099AA/CUI/C9000001/atoms/preferred",
                "relations": f"{BASE}/content/2098AA/CUI/C9000001/relations"}, "2099AA"),
        (BASE, {"definitions": f"{BASE}/content/2098AA/CUI/C9000001/definitions",
                "relations": f"{BASE}/content/2099AA/CUI/C9000001/relations"}, "2099AA"),
        (BASE, {"atoms": "NONE", "semanticTypes": ["T999"]}, "current"),  # no link: unresolved
        # a base URL whose own path holds a "content" segment (a mirror, a proxy)
        (MIRROR, {"atoms": f"{MIRROR}/content/2025AB/CUI/C9000001/atoms"}, "2025AB"),
    ],
)  # fmt: skip
@responses.activate
def test_current_is_the_release_a_concept_s_links_name(
    tmp_path: Path, base_url: str, links: dict[str, Any], release: str
) -> None:
    responses.get(f"{base_url}/content/current/CUI/C9000001",
                  json={"result": {"ui": "C9000001", **links}})  # fmt: skip
    umls = Umls("current", api_key=CANARY_KEY, cache_dir=tmp_path, base_url=base_url)
    assert next(umls.concept_many(["C9000001"])).release == release


@responses.activate
def test_current_standing_for_a_name_that_is_no_release_is_unavailable(tmp_path: Path) -> None:
    """The concrete release comes from the server's links: a malformed one is the server's fault
    (unavailable, exit 4), not bad input, and is neither remembered nor used as a cache folder."""
    link = f"{BASE}/content/2099-XX/CUI/C9000001"
    responses.get(f"{BASE}/content/current/CUI/C9000001",
                  json={"result": {"ui": "C9000001", "atoms": f"{link}/atoms"}})  # fmt: skip
    with pytest.raises(UnavailableError) as info:
        Umls("current", api_key=CANARY_KEY, cache_dir=tmp_path, base_url=BASE).concept("C9000001")
    assert str(info.value) == (
        "UMLS named '2099-XX' as the release 'current' stands for, which is not a UMLS release name"
    )
    assert (
        info.value.hint == "give a concrete release with release, such as 2025AB"
    )  # Python's word
    assert list((tmp_path / LAYOUT).rglob("*.json")) == []
