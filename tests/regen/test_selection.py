from __future__ import annotations

import itertools
from typing import Any

import pytest

from tempmedbench_synonyms.atoms import Atom
from tempmedbench_synonyms.regen.release import ConceptEntry
from tempmedbench_synonyms.regen.selection import choose, norm, rank


def atom(aui: str, name: str, tty: str = "SY", *, sab: str = "SNOMEDCT_US", lat: str = "ENG",
         cui: str = "C0000001", usable: bool = True) -> Atom:  # fmt: skip
    return Atom(aui=aui, name=name, tty=tty, sab=sab, language=lat, cui=cui, usable=usable)


def entry(**kw: Any) -> ConceptEntry:
    base: dict[str, Any] = {"cui": "C0000001", "sab": "SNOMEDCT_US", "route": "source",
                            "code": "123", "spans": {}}  # fmt: skip
    base.update(kw)
    return ConceptEntry.model_validate(base)


def test_norm_casefolds_and_collapses_every_unicode_whitespace() -> None:
    assert norm("  Straße\u2028 \tX\u00a0y ") == "strasse x y"
    assert norm("ǅ") == "ǆ"


def test_rank() -> None:
    assert [rank(t) for t in ("PT", "SY", "FN", "pt", "")] == [0, 1, 2, 2, 2]


def test_without_aui_drops_span_names_and_takes_the_first_by_rank_tty_name_aui() -> None:
    atoms = [
        atom("A5", "Zephyr Fever", "PT"),  # equals the span text after norm: dropped
        atom("A4", "beta", "SY"),
        atom("A3", "Alpha", "SY"),
        atom("A2", "alpha", "SY"),  # same norm as A3: name "Alpha" < "alpha" (code points)
        atom("A1", "aaa", "FN"),  # rank 2
        atom("A0", "Aardvark", "PT", usable=False),  # not usable
        atom("A6", "Aalpha", "PT", sab="MTH"),  # another source
        atom("A7", "Aalpha", "PT", lat="FRE"),  # another language
    ]
    for order in itertools.permutations(atoms[:5]):
        got = choose(entry(), list(order) + atoms[5:], ["zephyr  fever"])
        assert got.atom == atoms[2]
    # with equal names the AUI breaks the tie
    twins = [atom("A9", "same", "SY"), atom("A8", "same", "SY")]
    assert choose(entry(), twins, []).atom == twins[1]
    # tty itself is the second key: "SY" beats "XX" only by rank, "AB" < "XX" by tty
    assert choose(entry(), [atom("A1", "b", "XX"), atom("A2", "z", "AB")], []).atom.aui == "A2"  # type: ignore[union-attr]


def test_pinned_aui_is_taken_as_it_is_even_with_the_span_name() -> None:
    atoms = [atom("A1", "Zephyr fever", "FN"), atom("A2", "Better", "PT")]
    got = choose(entry(aui="A1"), atoms, ["zephyr fever"])
    assert got.atom == atoms[0]


def test_null_aui_counts_as_absent() -> None:
    atoms = [atom("A1", "x", "FN"), atom("A2", "y", "PT")]
    assert choose(entry(aui=None), atoms, []).atom == atoms[1]


def test_pinned_aui_that_is_no_candidate_drifts() -> None:
    got = choose(entry(aui="A1"), [atom("A1", "x", usable=False), atom("A2", "y")], [])
    assert got.atom is None
    assert got.reason == ("atom A1 is no longer usable (obsolete, suppressible, another source "
                          "or language)")  # fmt: skip
    got = choose(entry(aui="A9"), [atom("A2", "y")], [])
    assert (got.atom, got.reason) == (None, "atom A9 is not among the 1 candidates")


def test_route_aui_needs_the_entry_cui() -> None:
    e = entry(route="aui", aui="A1", code=None)
    assert choose(e, [atom("A1", "x")], []).atom is not None
    got = choose(e, [atom("A1", "x", cui="C0000002")], [])
    assert (got.atom, got.reason) == (None, "atom A1 now belongs to C0000002, not C0000001")
    got = choose(e, [atom("A1", "x", cui="")], [])  # a UTS atom with no concept link
    assert (got.atom, got.reason) == (None, "atom A1 has no concept link; the entry names C0000001")


def test_not_found_and_nothing_left() -> None:
    got = choose(entry(), None, [])
    assert (got.atom, got.reason) == (None, "not found: SNOMEDCT_US code 123")
    got = choose(entry(), [atom("A1", "Fever")], ["fever"])
    assert (got.atom, got.reason) == (None, "no candidate left (1 candidates, all excluded)")
    got = choose(entry(route="cui"), [], [])
    assert (got.atom, got.reason) == (None, "no candidate atom")


@pytest.mark.parametrize("tty,expected", [("PT", "A2"), ("SY", "A2"), ("ZZ", "A1")])
def test_rank_beats_tty_order(tty: str, expected: str) -> None:
    got = choose(entry(), [atom("A1", "a", "AA"), atom("A2", "z", tty)], [])
    assert got.atom is not None and got.atom.aui == expected


def test_sort_uses_norm_before_the_raw_name() -> None:
    # raw order would put "B" first ("B" < "a" in code points); norm order puts "a" first
    got = choose(entry(), [atom("A1", "B", "SY"), atom("A2", "a", "SY")], [])
    assert got.atom is not None and got.atom.name == "a"


def test_exclusion_casefolds_rather_than_lowers() -> None:
    # "STRASSE".casefold() == "Straße".casefold(), but their lower() differ
    got = choose(entry(), [atom("A1", "Straße", "PT"), atom("A2", "Road", "SY")], ["STRASSE"])
    assert got.atom is not None and got.atom.name == "Road"
    # U+017F LONG S casefolds to "s" but lower() keeps it
    got = choose(entry(), [atom("A1", "Harrow ſyndrome", "SY"), atom("A2", "Zz", "SY")],
                 ["harrow syndrome"])  # fmt: skip
    assert got.atom is not None and got.atom.name == "Zz"
