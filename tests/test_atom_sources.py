"""One contract, two atom sources: the same queries give the same atoms, from a local MRCONSO.RRF
(``mrconso.source.MrconsoSource``) or from UTS (``uts.source.RestAtomSource``, here over the fake
UTS built from the very same rows), as requests-cache runs one suite over every backend.

Every test that takes ``source`` runs once per source and asserts exact answers, so neither can
drift from the other without a failure: each route (source, cui, aui), drift (a code, CUI or AUI
that is gone; a pinned AUI that became suppressible or moved to another CUI), obsolete and
suppressible atoms (SUPPRESS O, E, Y), languages other than English, paging (a concept with more
atoms than UTS's largest page, 200) and ``current``. Atoms come in no documented order (the fake
shuffles them), so answers are compared sorted. Where the two sources legitimately differ, the
tests at the end pin the difference.

Every row here is invented: no UMLS content.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias

import pytest

from helpers import behind_responses
from helpers.uts import make_uts
from tempmedbench_synonyms.atoms import Atom, AtomQuery, FetchResult
from tempmedbench_synonyms.errors import BadInputError
from tempmedbench_synonyms.mrconso.source import MrconsoSource
from tempmedbench_synonyms.testing import CANARY_KEY, FakeUts, FakeUtsData, mrconso_row
from tempmedbench_synonyms.uts.source import RestAtomSource

REL = "2099AA"
PROBE = "C8000001"
#: More English, usable atoms in one concept than the largest UTS page (``pageSize=200``).
PAGED = 250


def row(
    cui: str, aui: str, sab: str, tty: str, code: str, name: str, *, lat: str = "ENG",
    suppress: str = "N",
) -> str:  # fmt: skip
    return mrconso_row(cui, aui, sab, tty, code, name, lat=lat, suppress=suppress)


ROWS = [
    # C8000001: one SNOMEDCT_US code, its atoms in every state, and one atom of another source
    row("C8000001", "A80000001", "SNOMEDCT_US", "PT", "8000001", "Invented ache"),
    row("C8000001", "A80000002", "SNOMEDCT_US", "SY", "8000001", "Made-up ache"),
    row("C8000001", "A80000003", "SNOMEDCT_US", "SY", "8000001", "Old ache", suppress="O"),
    row("C8000001", "A80000004", "SNOMEDCT_US", "SY", "8000001", "Edited ache", suppress="E"),
    row("C8000001", "A80000005", "SNOMEDCT_US", "SY", "8000001", "Hidden ache", suppress="Y"),
    row("C8000001", "A80000006", "SNOMEDCT_US", "SY", "8000001", "Douleur inventée", lat="FRE"),
    row("C8000001", "A80000007", "SNOMEDCT_US", "SY", "8000001", "Dolor inventado", lat="SPA"),
    row("C8000001", "A80000008", "MTH", "PN", "NOCODE", "Invented Ache"),
    # the same code on a second concept (a pinned AUI that moved to another CUI)
    row("C8000002", "A80000009", "SNOMEDCT_US", "SY", "8000001", "Moved ache"),
    # C8000002: RXNORM atoms, one obsolete, one German
    row("C8000002", "A80000010", "RXNORM", "SCD", "8100001", "invented tablet 5 mg"),
    row("C8000002", "A80000011", "RXNORM", "SY", "8100001", "made-up pill"),
    row("C8000002", "A80000012", "RXNORM", "SY", "8100001", "old pill", suppress="O"),
    row("C8000002", "A80000013", "RXNORM", "SY", "8100001", "erfundene Pille", lat="GER"),
    # C8000004: a code whose atoms are all obsolete, suppressible or not English
    row("C8000004", "A80000014", "SNOMEDCT_US", "PT", "8000004", "Gone rash", suppress="O"),
    row("C8000004", "A80000015", "SNOMEDCT_US", "SY", "8000004", "Hidden rash", suppress="E"),
    row("C8000004", "A80000016", "SNOMEDCT_US", "SY", "8000004", "Éruption", lat="FRE"),
    # C8000003: more atoms than one page holds, and a few that UTS leaves out of every page
    *(
        row("C8000003", f"A8100{i:04d}", "LNC", "LN" if i else "PT", "8000-3", f"invented lab {i}",
            suppress="E" if i % 50 == 7 else "N")
        for i in range(PAGED + 5)
    ),
]  # fmt: skip
PAGED_AUIS = [f"A8100{i:04d}" for i in range(PAGED + 5) if i % 50 != 7]
assert len(PAGED_AUIS) == PAGED


def q(route: str, sab: str, ident: str) -> AtomQuery:
    return AtomQuery(route, sab, ident)  # type: ignore[arg-type]


#: Each query and the AUIs of its answer, sorted (``None``: not found, UTS's 404).
EXPECTED: dict[AtomQuery, list[str] | None] = {
    # route source: the English atoms neither obsolete nor suppressible, whatever their CUI
    q("source", "SNOMEDCT_US", "8000001"): ["A80000001", "A80000002", "A80000009"],
    q("source", "RXNORM", "8100001"): ["A80000010", "A80000011"],
    # route cui: the same, of one source only
    q("cui", "SNOMEDCT_US", "C8000001"): ["A80000001", "A80000002"],
    q("cui", "RXNORM", "C8000002"): ["A80000010", "A80000011"],
    q("cui", "SNOMEDCT_US", "C8000002"): ["A80000009"],
    # paging: every page, whatever the order
    q("source", "LNC", "8000-3"): PAGED_AUIS,
    q("cui", "LNC", "C8000003"): PAGED_AUIS,
    # route aui: the atom, whatever its flags, language, CUI or (named) source
    q("aui", "SNOMEDCT_US", "A80000001"): ["A80000001"],
    q("aui", "SNOMEDCT_US", "A80000003"): ["A80000003"],  # obsolete
    q("aui", "SNOMEDCT_US", "A80000004"): ["A80000004"],  # suppressed by NLM editors
    q("aui", "SNOMEDCT_US", "A80000005"): ["A80000005"],  # suppressed by the source
    q("aui", "SNOMEDCT_US", "A80000006"): ["A80000006"],  # French
    q("aui", "SNOMEDCT_US", "A80000009"): ["A80000009"],  # moved to C8000002
    q("aui", "SNOMEDCT_US", "A80000012"): ["A80000012"],  # of RXNORM, a source named above
    q("aui", "RXNORM", "A80000012"): ["A80000012"],
    # drift: gone, or nothing left that UTS would send
    q("source", "SNOMEDCT_US", "9999999"): None,  # a code that is gone
    q("cui", "RXNORM", "C8999999"): None,  # a CUI that is gone
    q("aui", "SNOMEDCT_US", "A89999999"): None,  # an AUI that is gone
    q("source", "SNOMEDCT_US", "8000004"): None,  # only obsolete, suppressible, French atoms
    q("cui", "SNOMEDCT_US", "C8000004"): None,
    q("cui", "RXNORM", "C8000001"): None,  # a concept without atoms of that source
}
QUERIES = sorted(EXPECTED)

Fetch: TypeAlias = Callable[[str, Sequence[AtomQuery]], FetchResult]


@dataclass(frozen=True)
class Source:
    """One of the two sources, as the contract tests call it."""

    name: str
    fetch: Fetch
    #: the fake UTS behind the REST source (the file source never sends it a request)
    fake: FakeUts

    def __call__(self, release: str, queries: Sequence[AtomQuery]) -> FetchResult:
        return self.fetch(release, queries)


def write_mrconso(folder: Path) -> Path:
    """The invented rows as ``folder/2099AA/META/MRCONSO.RRF``, as a release names its file."""
    path = folder / REL / "META" / "MRCONSO.RRF"
    path.parent.mkdir(parents=True)
    path.write_text("".join(ROWS), encoding="utf-8")
    return path


class Sources:
    """Both sources over the same invented rows: the file, and the fake UTS built from it."""

    def __init__(self, folder: Path, fake: FakeUts) -> None:
        self.folder = folder
        self.path = write_mrconso(folder)
        self.fake = fake

    def mrconso(self, release: str, queries: Sequence[AtomQuery]) -> FetchResult:
        return MrconsoSource(self.path).fetch(release, PROBE, queries)

    def rest(self, release: str, queries: Sequence[AtomQuery]) -> FetchResult:
        source = RestAtomSource(make_uts(self.folder / "cache"), workers=4, tick=0.01)
        return source.fetch(release, PROBE, queries)


@pytest.fixture
def sources(tmp_path: Path) -> Iterator[Sources]:
    fake = FakeUts(FakeUtsData.from_lines(ROWS, release=REL), api_key=CANARY_KEY)
    with behind_responses(fake):
        yield Sources(tmp_path, fake)


@pytest.fixture(params=["mrconso", "rest"])
def source(request: pytest.FixtureRequest, sources: Sources) -> Source:
    return Source(request.param, getattr(sources, request.param), sources.fake)


def auis(result: FetchResult) -> dict[AtomQuery, list[str] | None]:
    return {
        query: None if atoms is None else sorted(a.aui for a in atoms)
        for query, atoms in result.atoms.items()
    }


def sorted_atoms(result: FetchResult) -> dict[AtomQuery, list[Atom] | None]:
    return {
        query: None if atoms is None else sorted(atoms, key=lambda a: a.aui)
        for query, atoms in result.atoms.items()
    }


# -- the contract: both sources, the same answers ----------------------------------------------


def test_both_sources_give_identical_atoms_for_every_query(sources: Sources) -> None:
    local = sources.mrconso(REL, QUERIES)
    remote = sources.rest(REL, QUERIES)
    assert sorted_atoms(local) == sorted_atoms(remote)
    assert local.umls_release == remote.umls_release == REL
    assert auis(local) == EXPECTED


def test_every_route_drift_and_flag_gives_the_expected_atoms(source: Source) -> None:
    result = source(REL, QUERIES)
    assert list(result.atoms) == QUERIES  # every query answered, in the order asked
    assert auis(result) == EXPECTED


def test_an_atom_carries_every_field_as_spec_section_3_maps_it(source: Source) -> None:
    queries = [q("aui", "SNOMEDCT_US", a) for a in ("A80000001", "A80000004", "A80000009")]
    queries.append(q("aui", "SNOMEDCT_US", "A80000006"))
    result = source(REL, queries)
    assert [result.atoms[query] for query in queries] == [
        (Atom("A80000001", "Invented ache", "PT", "SNOMEDCT_US", "ENG", "C8000001", True),),
        (Atom("A80000004", "Edited ache", "SY", "SNOMEDCT_US", "ENG", "C8000001", False),),
        (Atom("A80000009", "Moved ache", "SY", "SNOMEDCT_US", "ENG", "C8000002", True),),
        (Atom("A80000006", "Douleur inventée", "SY", "SNOMEDCT_US", "FRE", "C8000001", True),),
    ]


@pytest.mark.parametrize("suppress", ["O", "E", "Y"])
def test_an_obsolete_or_suppressible_atom_is_left_out_but_kept_when_pinned(
    source: Source, suppress: str
) -> None:
    aui = {"O": "A80000003", "E": "A80000004", "Y": "A80000005"}[suppress]
    by_code, by_cui, pinned = (
        q("source", "SNOMEDCT_US", "8000001"),
        q("cui", "SNOMEDCT_US", "C8000001"),
        q("aui", "SNOMEDCT_US", aui),
    )
    result = source(REL, [by_code, by_cui, pinned])
    assert aui not in auis(result)[by_code]  # type: ignore[operator]
    assert aui not in auis(result)[by_cui]  # type: ignore[operator]
    [atom] = result.atoms[pinned] or ()
    assert (atom.aui, atom.usable) == (aui, False)


def test_atoms_of_other_languages_are_left_out_but_kept_when_pinned(source: Source) -> None:
    by_code = q("source", "RXNORM", "8100001")
    pinned = q("aui", "RXNORM", "A80000013")
    result = source(REL, [by_code, pinned])
    assert auis(result) == {by_code: ["A80000010", "A80000011"], pinned: ["A80000013"]}
    assert [a.language for a in result.atoms[pinned] or ()] == ["GER"]


def test_a_concept_of_more_than_one_page_is_answered_whole(source: Source) -> None:
    queries = [q("source", "LNC", "8000-3"), q("cui", "LNC", "C8000003")]
    result = source(REL, queries)
    assert auis(result) == {queries[0]: PAGED_AUIS, queries[1]: PAGED_AUIS}
    assert all(len(result.atoms[query] or ()) == len(set(PAGED_AUIS)) for query in queries)
    pages = sorted(dict(s.params).get("pageNumber", "1") for s in source.fake.seen)
    if source.name == "rest":
        # the probe, then two pages of 200 for each query (pageCount is 2)
        assert pages == ["1", "1", "1", "2", "2"]
    else:
        assert pages == []  # the file answers without a request


def test_current_is_the_concrete_release_the_file_comes_from(source: Source) -> None:
    result = source("current", QUERIES)
    # UTS's newest release; the release the file's folder names (.../2099AA/META/MRCONSO.RRF)
    assert result.umls_release == REL
    assert auis(result) == EXPECTED
    asked = [s.path.split("/")[2] for s in source.fake.seen]
    if source.name == "rest":  # only the probe names current; every later request, 2099AA
        assert (asked[0], set(asked[1:])) == ("current", {REL})
    else:
        assert asked == []


# -- where the sources legitimately differ ------------------------------------------------------


def test_an_aui_of_a_source_no_query_names_is_found_by_uts_only(sources: Sources) -> None:
    """MRCONSO never reads rows of a SAB that no query names (they could never be candidates: a
    candidate's SAB is its entry's), so a pinned AUI of such a source is not found there, while
    UTS answers it. The outcome is the same: the atom is no candidate, the concept drifted."""
    pinned = q("aui", "SNOMEDCT_US", "A80000008")  # an MTH atom; no query names MTH
    mth = Atom("A80000008", "Invented Ache", "PN", "MTH", "ENG", "C8000001", True)
    assert sources.mrconso(REL, [pinned]).atoms == {pinned: None}
    assert sources.rest(REL, [pinned]).atoms == {pinned: (mth,)}
    named = [pinned, q("cui", "MTH", "C8000001")]  # once a query names MTH, both find it
    assert (
        sources.mrconso(REL, named).atoms
        == sources.rest(REL, named).atoms
        == {named[0]: (mth,), named[1]: (mth,)}
    )


def test_current_over_a_file_whose_names_say_no_release_is_bad_input(tmp_path: Path) -> None:
    """UTS always knows its newest release; a file named only MRCONSO.RRF does not say its own,
    so ``current`` is refused there (UTS resolves it; see the test above)."""
    path = tmp_path / "umls" / "MRCONSO.RRF"
    path.parent.mkdir()
    path.write_text("".join(ROWS), encoding="utf-8")
    with pytest.raises(BadInputError) as refused:
        MrconsoSource(path).fetch("current", PROBE, QUERIES)
    assert str(refused.value) == (
        f"{path}: --umls-release current means the release --mrconso comes from, and no folder "
        "or file name of it says which (as 2025AB/META/MRCONSO.RRF or "
        "umls-2025AB-metathesaurus-full.zip do)"
    )
    assert refused.value.hint == (
        "name the release with --umls-release, such as 2025AB (or leave the table's release)"
    )
    assert refused.value.exit_code == 2


def test_a_malformed_identifier_is_refused_by_uts_only(sources: Sources) -> None:
    """The REST source checks every identifier before it is put in a URL (atoms.check_*) and
    refuses a malformed one as bad input, sending nothing; the file has no URL to protect and
    answers it as a row it lacks (not found), as it takes any release name but ``current``."""
    malformed = [q("source", "snomedct_us", "8000001"), q("cui", "RXNORM", "c8000002")]
    for query in malformed:
        assert sources.mrconso(REL, [query]).atoms == {query: None}
        with pytest.raises(BadInputError):
            sources.rest(REL, [query])
    assert sources.mrconso("2099-AA", QUERIES).umls_release == "2099-AA"
    with pytest.raises(BadInputError, match=r"^'2099-AA' is not a UMLS release name"):
        sources.rest("2099-AA", QUERIES)
    assert sources.fake.seen == []
