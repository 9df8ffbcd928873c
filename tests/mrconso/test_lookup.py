"""mrconso.lookup: SPEC 11's lookups answered from a local MRCONSO.RRF, one pass for a batch, in
the JSON shapes UTS sends. Every row here is invented."""

from __future__ import annotations

import gzip
import itertools
import json
import logging
import os
import random
import threading
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from helpers import FIXTURES
from tempmedbench_synonyms.errors import BadInputError, Outcome
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
    clean,
)
from tempmedbench_synonyms.mrconso import lookup, scan, shapes, source
from tempmedbench_synonyms.mrconso.lookup import answer_many
from tempmedbench_synonyms.mrconso.rows import MRCONSO_COLUMNS
from tempmedbench_synonyms.testing import FakeUts, FakeUtsData

RELEASE = "2099AA"
CONTENT = f"https://uts-ws.nlm.nih.gov/rest/content/{RELEASE}"
LOG = "tempmedbench_synonyms.mrconso.lookup"
LEFT_OUT = " (obsolete and suppressible atoms are left out, as UTS leaves them out)"


def row(cui: str, aui: str, sab: str, code: str, name: str, *, tty: str = "PT",
        lat: str = "ENG", ts: str = "P", stt: str = "PF", ispref: str = "Y",
        suppress: str = "N", scui: str | None = None, sdui: str = "") -> str:  # fmt: skip
    """One invented MRCONSO.RRF line without its line end."""
    fields = dict.fromkeys(MRCONSO_COLUMNS, "")
    fields.update(
        CUI=cui, LAT=lat, TS=ts, LUI="L" + aui[1:], STT=stt, SUI="S" + aui[1:], ISPREF=ispref,
        AUI=aui, SCUI=code if scui is None else scui, SDUI=sdui, SAB=sab, TTY=tty, CODE=code,
        STR=name, SRL="0", SUPPRESS=suppress, CVF="256",
    )  # fmt: skip
    return "|".join(fields[c] for c in MRCONSO_COLUMNS) + "|"


def A(n: int) -> str:
    """An AUI (A and 7 digits)."""
    return f"A{n:07d}"


def write(path: Path, lines: Sequence[str], end: str = "\n") -> Path:
    path.write_bytes("".join(line + end for line in lines).encode("utf-8"))
    return path


def ask(path: Path, *lookups: Lookup, **kwargs: Any) -> list[Answer]:
    return answer_many(path, RELEASE, [(str(i), q) for i, q in enumerate(lookups)], **kwargs)


def one(path: Path, query: Lookup) -> Answer:
    return ask(path, query)[0]


def sorted_results(answer: Answer) -> list[dict[str, Any]]:
    """The results in the order of their ``ui``: atoms come in file order."""
    return sorted(answer.results, key=lambda r: str(r["ui"]))


def uis(answer: Answer) -> list[tuple[str, str, str]]:
    """(ui, name, rootSource) of each result."""
    return [(r["ui"], r["name"], r["rootSource"]) for r in answer.results]


# -- atoms, a code's atoms, one atom ------------------------------------------------------------

CONCEPT = [
    row("C0000001", A(11), "SNOMEDCT_US", "100", "Zephyr fever"),
    row("C0000001", A(12), "SNOMEDCT_US", "100", "Zephyr fever (disorder)", tty="FN"),
    row("C0000001", A(13), "SNOMEDCT_US", "100", "Aardvark fever", tty="SY", suppress="O"),
    row("C0000001", A(14), "SNOMEDCT_US", "100", "Breeze fever", tty="SY", suppress="E"),
    row("C0000001", A(15), "SNOMEDCT_US", "100", "Calm fever", tty="SY", suppress="Y"),
    row("C0000001", A(16), "SNOMEDCT_US", "100", "Fièvre zéphyr", lat="FRE"),
    row("C0000001", A(17), "MSH", "D001", "Fever, Zephyr", tty="MH", sdui="D001"),
    row("C0000002", A(21), "SNOMEDCT_US", "100", "Zephyr fever, second", tty="SY"),
    row("C0000002", A(22), "MSH", "D002", "Another concept", tty="MH"),
]


def test_a_concepts_atoms_are_its_english_ones_neither_obsolete_nor_suppressible(
    tmp_path: Path,
) -> None:
    path = write(tmp_path / "MRCONSO.RRF", CONCEPT)
    every, msh, none = ask(path, Atoms("C0000001"), Atoms("C0000001", sab="MSH"),
                           Atoms("C0000001", sab="LNC"))  # fmt: skip
    assert [r["ui"] for r in every.results] == [A(11), A(12), A(17)]  # in file order
    assert (every.outcome, every.message, every.query) == (
        Outcome.FOUND,
        f"3 atoms for CUI C0000001, {path}",
        "CUI C0000001",
    )
    assert [r["ui"] for r in msh.results] == [A(17)]
    assert (none.outcome, none.results, none.message, none.query) == (
        Outcome.NOT_FOUND, (), f"{path} has no atoms for CUI C0000001 in LNC{LEFT_OUT}",
        "CUI C0000001 in LNC",
    )  # fmt: skip
    assert none.exit_code == 1 and every.exit_code == 0


def test_an_atom_is_the_object_uts_sends_with_none_read_as_null(tmp_path: Path) -> None:
    path = write(tmp_path / "MRCONSO.RRF", CONCEPT)
    (atom,) = one(path, Atoms("C0000001", sab="MSH")).results
    assert atom == {
        "classType": "Atom",
        "ui": A(17),
        "suppressible": "false",
        "obsolete": "false",
        "rootSource": "MSH",
        "termType": "MH",
        "code": f"{CONTENT}/source/MSH/D001",
        "concept": f"{CONTENT}/CUI/C0000001",
        "sourceConcept": f"{CONTENT}/source/MSH/D001",
        "sourceDescriptor": f"{CONTENT}/source/MSH/D001",
        "attributes": f"{CONTENT}/AUI/{A(17)}/attributes",
        "parents": None,
        "ancestors": None,
        "children": None,
        "descendants": None,
        "relations": f"{CONTENT}/AUI/{A(17)}/relations",
        "definitions": None,
        "name": "Fever, Zephyr",
        "language": "ENG",
    }
    assert atom == clean(shapes.atom_json(CONCEPT[6].split("|")[:18], shapes.Links(RELEASE)))


def test_a_codes_atoms_come_from_every_concept_that_holds_it(tmp_path: Path) -> None:
    path = write(tmp_path / "MRCONSO.RRF", CONCEPT)
    code, gone = ask(path, SourceAtoms("SNOMEDCT_US", "100"), SourceAtoms("SNOMEDCT_US", "999"))
    assert [(r["ui"], r["concept"]) for r in code.results] == [
        (A(11), f"{CONTENT}/CUI/C0000001"),
        (A(12), f"{CONTENT}/CUI/C0000001"),
        (A(21), f"{CONTENT}/CUI/C0000002"),
    ]
    assert gone.outcome == Outcome.NOT_FOUND
    assert gone.message == f"{path} has no atoms for SNOMEDCT_US code 999{LEFT_OUT}"


def test_a_code_whose_atoms_are_all_obsolete_or_foreign_has_none(tmp_path: Path) -> None:
    path = write(tmp_path / "MRCONSO.RRF", [
        row("C0000001", A(1), "LNC", "1-1", "Old", suppress="O"),
        row("C0000001", A(2), "LNC", "1-1", "Alt", lat="GER"),
    ])  # fmt: skip
    assert one(path, SourceAtoms("LNC", "1-1")).outcome == Outcome.NOT_FOUND


def test_one_atom_is_answered_whatever_its_flags_as_get_aui_does(tmp_path: Path) -> None:
    """SPEC 11 counts only SUPPRESS N atoms; ``GET /AUI/{aui}`` (the request ``umls atom``
    sends) answers an obsolete or foreign atom too, flagged (SPEC 12: obsolete exactly O,
    suppressible exactly E or Y): the file does the same."""
    path = write(tmp_path / "MRCONSO.RRF", CONCEPT)
    obsolete, foreign, unknown, hidden = ask(path, Atom(A(13)), Atom(A(16)), Atom(A(99)),
                                             Atom(A(14)))  # fmt: skip
    assert [(r["ui"], r["obsolete"], r["suppressible"]) for r in obsolete.results] == [
        (A(13), "true", "false")
    ]
    assert [(r["ui"], r["obsolete"], r["suppressible"]) for r in hidden.results] == [
        (A(14), "false", "true")
    ]
    assert [(r["ui"], r["language"]) for r in foreign.results] == [(A(16), "FRE")]
    assert (unknown.outcome, unknown.message, unknown.query) == (
        Outcome.NOT_FOUND, f"{path} has no atom {A(99)}", f"AUI {A(99)}"
    )  # fmt: skip


# -- crosswalk ----------------------------------------------------------------------------------

CROSSWALK = [
    row("C0000001", A(101), "SNOMEDCT_US", "100", "Zephyr fever"),
    row("C0000001", A(102), "SNOMEDCT_US", "101", "Zephyr fever, other code"),  # same source
    row("C0000001", A(103), "MTH", "NOCODE", "Zephyr fever"),  # NOCODE: never a code
    row("C0000001", A(104), "MSH", "D001", "Fevers, Zephyr", tty="ET", ts="S"),
    row("C0000001", A(105), "MSH", "D001", "Fever, Zephyr", tty="MH"),
    row("C0000001", A(106), "LNC", "1-1", "Zephyr titre", tty="LN", suppress="O"),  # obsolete
    row("C0000001", A(107), "ICD10CM", "Z01", "Fièvre zéphyr", lat="FRE"),  # any language
    row("C0000002", A(201), "SNOMEDCT_US", "100", "Zephyr fever, again", tty="SY"),
    row("C0000002", A(202), "MDR", "10001", "Zephyr pyrexia", tty="LLT"),
    row("C0000003", A(301), "MSH", "D001", "Fever, Zephyr, elsewhere", tty="MH"),
    row("C0000003", A(302), "NCI", "N3", "Not shared"),
    row("C0000004", A(401), "SNOMEDCT_US", "400", "Gone", suppress="O"),
    row("C0000004", A(402), "MSH", "D004", "Still here", tty="MH"),
    row("C0000005", A(501), "SNOMEDCT_US", "500", "Alone"),
    row("C0000005", A(502), "SNOMEDCT_US", "501", "Alone too"),
    row("C0000006", A(601), "SNOMEDCT_US", "600", "Shared only by an obsolete atom"),
    row("C0000006", A(602), "MSH", "D006", "Obsolete", tty="MH", suppress="O"),
]


def test_crosswalk_is_every_other_sources_code_in_a_concept_of_the_code(tmp_path: Path) -> None:
    """Other sources only, NOCODE never, obsolete atoms never, any language; across every
    concept that holds the code; ordered by rootSource then ui."""
    path = write(tmp_path / "MRCONSO.RRF", CROSSWALK)
    answer = one(path, Crosswalk("SNOMEDCT_US", "100"))
    assert uis(answer) == [
        ("Z01", "Fièvre zéphyr", "ICD10CM"),
        ("10001", "Zephyr pyrexia", "MDR"),
        ("D001", "Fever, Zephyr", "MSH"),
    ]
    assert (answer.outcome, answer.message, answer.query, answer.release) == (
        Outcome.FOUND, f"3 codes for crosswalk of SNOMEDCT_US code 100, {path}",
        "crosswalk of SNOMEDCT_US code 100", RELEASE,
    )  # fmt: skip


def test_a_crosswalk_result_is_the_source_atom_cluster_uts_sends(tmp_path: Path) -> None:
    """A code is the cluster of all its atoms (SPEC 12): D001's atom in C0000003, a concept
    without the code asked for, is one of them (read in a second pass)."""
    path = write(tmp_path / "MRCONSO.RRF", CROSSWALK)
    msh = one(path, Crosswalk("SNOMEDCT_US", "100", target_sabs=("MSH",))).results
    at = f"{CONTENT}/source/MSH/D001"
    assert msh == (
        {
            "classType": "SourceAtomCluster",
            "ui": "D001",
            "suppressible": False,
            "obsolete": False,
            "rootSource": "MSH",
            "atomCount": 3,
            "cVMemberCount": 0,
            "attributes": f"{at}/attributes",
            "atoms": f"{at}/atoms",
            "descendants": f"{at}/descendants",
            "ancestors": f"{at}/ancestors",
            "parents": f"{at}/parents",
            "children": f"{at}/children",
            "relations": f"{at}/relations",
            "definitions": None,
            "concepts": "https://uts-ws.nlm.nih.gov/rest/search/2099AA?string=D001&sabs=MSH"
            "&searchType=exact&inputType=sourceUi",
            "defaultPreferredAtom": f"{at}/atoms/preferred",
            "name": "Fever, Zephyr",
        },
    )


def test_target_sources_narrow_a_crosswalk(tmp_path: Path) -> None:
    path = write(tmp_path / "MRCONSO.RRF", CROSSWALK)
    two, none = ask(path, Crosswalk("SNOMEDCT_US", "100", target_sabs=("MSH", "MDR", "RXNORM")),
                    Crosswalk("SNOMEDCT_US", "100", target_sabs=("SNOMEDCT_US",)))  # fmt: skip
    assert [r["ui"] for r in two.results] == ["10001", "D001"]
    assert two.query == "crosswalk of SNOMEDCT_US code 100 to MSH,MDR,RXNORM"
    assert (none.outcome, none.message) == (
        Outcome.NOT_FOUND,
        f"{path} has no code of SNOMEDCT_US sharing a concept with SNOMEDCT_US code 100{LEFT_OUT}",
    )


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("400", "no atom of SNOMEDCT_US code 400"),  # its only atom is obsolete
        ("999", "no atom of SNOMEDCT_US code 999"),
        ("500", "no code sharing a concept with SNOMEDCT_US code 500"),
        ("600", "no code sharing a concept with SNOMEDCT_US code 600"),
    ],
)
def test_a_crosswalk_with_nothing_to_give_is_not_found(
    tmp_path: Path, code: str, message: str
) -> None:
    path = write(tmp_path / "MRCONSO.RRF", CROSSWALK)
    answer = one(path, Crosswalk("SNOMEDCT_US", code))
    assert (answer.outcome, answer.results, answer.message) == (
        Outcome.NOT_FOUND, (), f"{path} has {message}{LEFT_OUT}"
    )  # fmt: skip


# Where the local lookups and the fake read SPEC 12 apart before they shared one meaning of a
# row: a code's atoms in a concept the crosswalk did not find (MSH D002's in C0000008), an empty
# CODE (never known), a SUPPRESS that is none of N, O, E, Y (it counts as N).
APART = [
    row("C0000007", A(701), "SNOMEDCT_US", "700", "Quill fever"),
    row("C0000007", A(702), "MSH", "D002", "Quill fever", tty="MH"),
    row("C0000007", A(703), "LNC", "", "Quill titre", tty="LN"),
    row("C0000007", A(704), "HPO", "HP7", "Quill pyrexia", suppress="X"),
    row("C0000008", A(801), "MSH", "D002", "Fever of quills", tty="ET", suppress="O"),
    row("C0000008", A(802), "MSH", "D002", "Quill fevers", tty="PM", ts="S"),
    row("C0000009", A(901), "SNOMEDCT_US", "900", "Only apart", suppress="X"),
    row("C0000009", A(902), "NCI", "N9", "Apart too"),
]


@pytest.mark.parametrize("workers", [1, 2])
def test_a_crosswalk_of_the_file_and_of_the_fake_are_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    """SPEC 12: every known code of another source with a counted atom in a concept of the code,
    each a cluster of all its rows (``atomCount`` 3 for D002, two of them in C0000008); the
    file and the fake built from it answer exactly alike."""
    monkeypatch.setattr(source, "PARALLEL_MIN_SIZE", 0)
    path = write(tmp_path / "MRCONSO.RRF", [*CROSSWALK, *APART])
    fake = FakeUts(FakeUtsData.from_mrconso(path, release=RELEASE), api_key="k")
    asked = [("SNOMEDCT_US", "700"), ("SNOMEDCT_US", "900"), ("SNOMEDCT_US", "100"),
             ("MSH", "D002"), ("MSH", "D001")]  # fmt: skip
    local = ask(path, *(Crosswalk(sab, code) for sab, code in asked), workers=workers)
    theirs = []
    for sab, code in asked:
        reply = fake.handle(f"/crosswalk/{RELEASE}/source/{sab}/{code}",
                            {"apiKey": ["k"], "pageSize": ["200"]},
                            base_url="https://uts-ws.nlm.nih.gov/rest")  # fmt: skip
        theirs.append([clean(r) for r in json.loads(reply.body)["result"]])
    assert [list(a.results) for a in local] == theirs
    assert [uis(a) for a in local[:2]] == [
        [("HP7", "Quill pyrexia", "HPO"), ("D002", "Quill fever", "MSH")],
        [("N9", "Apart too", "NCI")],
    ]
    assert [r["atomCount"] for r in local[0].results] == [1, 3]


# The atoms of one code, each better than the next by one key of SPEC 11's name order:
# (SUPPRESS N, LAT ENG, TTY PT, ISPREF Y, TS P, STT PF, AUI).
NAMED = [
    row("C0000001", A(40), "NCI", "N1", "by AUI"),
    row("C0000001", A(41), "NCI", "N1", "after by AUI"),
    row("C0000001", A(30), "NCI", "N1", "by STT", stt="VO"),
    row("C0000001", A(31), "NCI", "N1", "by TS", stt="VO", ts="S"),
    row("C0000001", A(32), "NCI", "N1", "by ISPREF", stt="VO", ts="S", ispref="N"),
    row("C0000001", A(33), "NCI", "N1", "by TTY", stt="VO", ts="S", ispref="N", tty="SY"),
    row("C0000001", A(34), "NCI", "N1", "by LAT", stt="VO", ts="S", ispref="N", tty="SY",
        lat="SPA"),
]  # fmt: skip


@pytest.mark.parametrize("drop", range(len(NAMED)))
def test_a_code_is_named_by_spec_11s_order_of_its_atoms(tmp_path: Path, drop: int) -> None:
    """With the better atoms dropped one by one, the next one names the code; an obsolete atom
    that would otherwise come first never does."""
    obsolete = row("C0000001", A(10), "NCI", "N1", "obsolete", suppress="O")
    rows = [row("C0000001", A(1), "SNOMEDCT_US", "1", "x"), obsolete, *NAMED[drop:]]
    answer = one(write(tmp_path / "MRCONSO.RRF", rows), Crosswalk("SNOMEDCT_US", "1"))
    assert uis(answer) == [("N1", NAMED[drop].split("|")[14], "NCI")]
    # the obsolete atom is one of the code's atoms all the same
    assert answer.results[0]["atomCount"] == len(NAMED) - drop + 1


# -- cuis, search -------------------------------------------------------------------------------

CONCEPTS = [
    row("C0000001", A(11), "MSH", "D001", "Glimmer pox", tty="MH", ts="S"),
    row("C0000001", A(12), "SNOMEDCT_US", "7", "Glimmer pox (disorder)", tty="FN", ispref="N"),
    row("C0000001", A(13), "MTH", "NOCODE", "Glimmer pox, preferred"),  # TS P, STT PF, ISPREF Y
    row("C0000001", A(14), "SNOMEDCT_US", "7", "GLIMMER POX", tty="SY", ts="S"),
    row("C0000002", A(21), "SNOMEDCT_US", "7", "glimmer pox", tty="SY", ts="S", stt="VO"),
    row("C0000002", A(22), "MDRFRE", "F1", "Glimmer pox", lat="FRE"),
    row("C0000002", A(23), "MTH", "NOCODE", "Obsolete preferred", suppress="O"),
    row("C0000003", A(31), "MSH", "D003", "Glimmer Pox", tty="MH", ts="S", ispref="N"),
    row("C0000003", A(32), "MSH", "D003", "Preferred, not English", lat="GER"),
    row("C0000004", A(41), "SNOMEDCT_US", "7", "Glimmer pox", tty="SY", suppress="E"),
    row("C0000004", A(42), "MTH", "NOCODE", "Hidden concept"),
]


def test_cuis_are_the_concepts_of_the_codes_atoms_named_by_their_preferred_row(
    tmp_path: Path,
) -> None:
    """A concept is named by its English preferred row (LAT ENG, TS P, STT PF, ISPREF Y) among
    all its rows, an obsolete one too (SPEC 12); C0000004 holds the code by a suppressible atom
    only."""
    path = write(tmp_path / "MRCONSO.RRF", CONCEPTS)
    answer = one(path, Cuis("SNOMEDCT_US", "7"))
    assert uis(answer) == [
        ("C0000001", "Glimmer pox, preferred", "MTH"),
        ("C0000002", "Obsolete preferred", "MTH"),
    ]
    assert answer.results[0] == {
        "ui": "C0000001",
        "rootSource": "MTH",
        "uri": f"{CONTENT}/CUI/C0000001",
        "name": "Glimmer pox, preferred",
    }
    assert (answer.message, answer.query) == (
        f"2 concepts for concepts of SNOMEDCT_US code 7, {path}", "concepts of SNOMEDCT_US code 7"
    )  # fmt: skip
    gone = one(path, Cuis("SNOMEDCT_US", "8"))
    assert (gone.outcome, gone.message) == (
        Outcome.NOT_FOUND, f"{path} has no atom of SNOMEDCT_US code 8{LEFT_OUT}"
    )  # fmt: skip


#: Concepts whose name SPEC 12's rule gives where a lowest-AUI rule, or one over the atoms that
#: count, gives another: several English preferred rows in no AUI order, an obsolete one first,
#: after one without STT PF (C0000001), none with STT PF (C0000002), none in English (C0000003).
NAMES = [
    row("C0000001", A(15), "NCI", "N1", "Glimmer, variant", stt="VO"),  # STT PF comes first
    row("C0000001", A(14), "SNOMEDCT_US", "7", "Glimmer pox", suppress="O"),
    row("C0000001", A(12), "MSH", "D1", "Glimmer pox, MeSH", tty="MH"),
    row("C0000001", A(11), "MTH", "NOCODE", "Glimmer, obsolete", suppress="O"),
    row("C0000001", A(13), "SNOMEDCT_US", "7", "Glimmer pox (disorder)", tty="FN", ispref="N"),
    row("C0000002", A(24), "SNOMEDCT_US", "7", "Pox, synonym", tty="SY", ts="S"),
    row("C0000002", A(23), "MSH", "D2", "Pox second", tty="MH", stt="VO"),
    row("C0000002", A(22), "NCI", "N2", "Pox third", stt="VO"),
    row("C0000002", A(21), "MTH", "NOCODE", "Pox not preferred", ispref="N"),
    row("C0000003", A(33), "MDRSPA", "S3", "Viruela", lat="SPA", ts="S"),
    row("C0000003", A(31), "MDRGER", "G3", "Pocken", lat="GER"),
]
#: C0000001's relations (MRREL: the second CUI's): from C0000002, from C0000003
NAMES_MRREL = [
    "C0000002||CUI|RO|C0000001||CUI||R0000001||MTH|MTH|||N||",
    "C0000003||CUI|RN|C0000001||CUI||R0000002||MTH|MTH|||N||",
]
#: (ui, name, rootSource) of each concept, and the AUI of its preferred atom
NAMED_BY = {
    "C0000001": ("C0000001", "Glimmer pox", "SNOMEDCT_US", A(14)),
    "C0000002": ("C0000002", "Pox second", "MSH", A(23)),
    "C0000003": ("C0000003", "Viruela", "MDRSPA", A(33)),
}


def test_a_concept_is_named_alike_by_the_file_and_the_fake_by_spec_12s_rule(
    tmp_path: Path,
) -> None:
    """Among all its rows in file order: the first English preferred row (LAT ENG, TS P, STT PF,
    ISPREF Y), obsolete or not; else the first with LAT ENG, TS P and ISPREF Y; else its first
    row. The file's cuis and exact searches and the fake's searches, concepts, relations and
    preferred atoms all name a concept by that row, and its SAB is the rootSource."""
    write(tmp_path / "MRCONSO.RRF", NAMES)
    (tmp_path / "MRREL.RRF").write_text("".join(r + "\n" for r in NAMES_MRREL), "utf-8")
    one_, two, three = (NAMED_BY[c][:3] for c in ("C0000001", "C0000002", "C0000003"))
    asked: list[tuple[Lookup, dict[str, str], list[tuple[str, str, str]]]] = [
        (Cuis("SNOMEDCT_US", "7"),
         {"string": "7", "inputType": "sourceUi", "searchType": "exact", "sabs": "SNOMEDCT_US"},
         [one_, two]),
        (Search("glimmer pox, mesh", search_type="exact"), {"string": "glimmer pox, mesh"},
         [one_]),
        (Search("POX THIRD", search_type="exact"), {"string": "POX THIRD"}, [two]),
        (Search("pocken", search_type="exact"), {"string": "pocken"}, [three]),
    ]  # fmt: skip
    local = ask(tmp_path / "MRCONSO.RRF", *(q for q, _, _ in asked))
    fake = FakeUts(FakeUtsData.from_meta(tmp_path, release=RELEASE), api_key="k")

    def get(route: str, **params: str) -> Any:
        query = {k: [v] for k, v in {**params, "apiKey": "k"}.items()}
        reply = fake.handle(route, query, base_url="https://uts-ws.nlm.nih.gov/rest")
        assert reply.status == 200, reply.body
        return json.loads(reply.body)["result"]

    for (query, params, expected), answer in zip(asked, local, strict=True):
        assert uis(answer) == expected, query
        theirs = get(f"/search/{RELEASE}", **{"searchType": "exact", **params})["results"]
        assert [clean(r) for r in theirs] == list(answer.results), query
    for cui, (_, name, sab, aui) in NAMED_BY.items():
        assert get(f"/content/{RELEASE}/CUI/{cui}")["name"] == name
        assert get(f"/content/{RELEASE}/CUI/{cui}/atoms/preferred")["ui"] == aui
        found = get(f"/search/{RELEASE}", string=name, searchType="exact", includeObsolete="true")
        assert found["results"] == [
            {"ui": cui, "rootSource": sab, "uri": f"{CONTENT}/CUI/{cui}", "name": name}
        ]
    relations = get(f"/content/{RELEASE}/CUI/C0000001/relations")
    assert [(r["relatedFromIdName"], r["relatedIdName"]) for r in relations] == [
        ("Glimmer pox", "Pox second"),
        ("Glimmer pox", "Viruela"),
    ]


def test_the_preferred_atom_is_the_row_that_names_the_concept_or_code(tmp_path: Path) -> None:
    """SPEC 12: ``atoms CUI --preferred`` is the row that names the concept, ``source SAB CODE
    --preferred`` the one that names the code (every row counts, obsolete ones too), the same
    atoms as the fake UTS answers; ``--sab`` plays no part, as UTS is sent none."""
    path = write(tmp_path / "MRCONSO.RRF", NAMES)
    fake = FakeUts(FakeUtsData.from_mrconso(path, release=RELEASE), api_key="k")
    cuis = list(NAMED_BY)
    codes = [("SNOMEDCT_US", "7"), ("MSH", "D1"), ("MDRGER", "G3")]
    asked: list[Lookup] = [*(Atoms(c, preferred=True) for c in cuis),
                           *(SourceAtoms(s, c, preferred=True) for s, c in codes),
                           Atoms("C0000001", sab="MSH", preferred=True),
                           Atoms("C0000009", preferred=True),
                           SourceAtoms("MSH", "D9", preferred=True)]  # fmt: skip
    answers = ask(path, *asked)
    # SNOMEDCT_US 7: its PT is obsolete, its FN not preferred (ISPREF N): the SY
    assert [[r["ui"] for r in a.results] for a in answers] == [
        [A(14)], [A(23)], [A(33)], [A(24)], [A(12)], [A(31)], [A(14)], [], [],
    ]  # fmt: skip
    assert [a.outcome for a in answers] == [Outcome.FOUND] * 7 + [Outcome.NOT_FOUND] * 2
    assert (answers[0].query, answers[0].message) == (
        "preferred atom of CUI C0000001", f"1 atom for preferred atom of CUI C0000001, {path}"
    )  # fmt: skip
    assert answers[-1].message == f"{path} has no preferred atom of MSH code D9"
    routes = [f"CUI/{c}" for c in cuis] + [f"source/{s}/{c}" for s, c in codes]
    for route, answer in zip(routes, answers, strict=False):
        reply = fake.handle(f"/content/{RELEASE}/{route}/atoms/preferred", {"apiKey": ["k"]},
                            base_url="https://uts-ws.nlm.nih.gov/rest")  # fmt: skip
        assert [clean(json.loads(reply.body)["result"])] == list(answer.results), route


def test_exact_search_ignores_case_in_any_language_ordered_by_cui(tmp_path: Path) -> None:
    path = write(tmp_path / "MRCONSO.RRF", CONCEPTS)
    answer = one(path, Search("gLiMmEr PoX", search_type="exact"))
    assert uis(answer) == [
        ("C0000001", "Glimmer pox, preferred", "MTH"),
        ("C0000002", "Obsolete preferred", "MTH"),  # named by every row, obsolete ones too
        ("C0000003", "Glimmer Pox", "MSH"),  # no English preferred row: its first row
    ]
    assert (answer.message, answer.query) == (
        f"3 concepts for exact search for 'gLiMmEr PoX', {path}", "exact search for 'gLiMmEr PoX'"
    )  # fmt: skip


def test_sources_and_language_narrow_a_search(tmp_path: Path) -> None:
    path = write(tmp_path / "MRCONSO.RRF", CONCEPTS)
    msh, french, both, none = ask(
        path,
        Search("glimmer pox", search_type="exact", sabs=("MSH", "MTH")),
        Search("glimmer pox", search_type="exact", language="FRE"),
        Search("glimmer pox", search_type="exact", sabs=("MDRFRE",), language="FRE"),
        Search("glimmer pox", search_type="exact", sabs=("MDRFRE",), language="ENG"),
    )
    assert [r["ui"] for r in msh.results] == ["C0000001", "C0000003"]
    # the French atom finds C0000002, named by its English preferred row (obsolete as it is)
    assert uis(french) == uis(both) == [("C0000002", "Obsolete preferred", "MTH")]
    assert both.query == "exact search for 'glimmer pox' in MDRFRE in language FRE"
    assert (none.outcome, none.message) == (
        Outcome.NOT_FOUND,
        f"{path} has no results for the exact search for 'glimmer pox' in MDRFRE in language "
        f"ENG{LEFT_OUT}",
    )


@pytest.mark.parametrize(
    ("term", "found"),
    [
        ("STRASSE FIEBER", ["C0000001"]),  # ß casefolds to ss
        ("fibrosis", ["C0000002"]),  # the ligature ﬁ casefolds to fi
        ("kelvin", ["C0000003"]),  # the Kelvin sign casefolds to k
        ("ΣΊΣΥΦΟΣ", ["C0000004"]),  # final sigma
        ("velvet cough", ["C0000005"]),  # exact: two spaces are not one
        ("velvet  cough", ["C0000006"]),
        ("velvet", []),  # whole strings only
        ("PT", []),  # a TTY, not a string
        ("100", []),  # a code
        ("SNOMEDCT_US", []),  # a source
        ("a|b", []),
    ],
)
def test_exact_search_is_casefolded_equality_of_the_whole_string(
    tmp_path: Path, term: str, found: list[str]
) -> None:
    path = write(tmp_path / "MRCONSO.RRF", [
        row("C0000001", A(1), "MSHGER", "G1", "Straße Fieber", lat="GER"),
        row("C0000002", A(2), "MSH", "D2", "ﬁbrosis"),
        row("C0000003", A(3), "MSH", "D3", "\u212aelvin"),
        row("C0000004", A(4), "MSHGRE", "D4", "σίσυφος", lat="GRE"),
        row("C0000005", A(5), "MSH", "D5", "Velvet Cough"),
        row("C0000006", A(6), "MSH", "D6", "VELVET  COUGH"),
        row("C0000007", A(7), "SNOMEDCT_US", "100", "velvet cough syndrome"),
    ])  # fmt: skip
    answer = one(path, Search(term, search_type="exact"))
    assert [r["ui"] for r in answer.results] == found
    assert answer.outcome == (Outcome.FOUND if found else Outcome.NOT_FOUND)


def test_only_atoms_that_count_are_searched(tmp_path: Path) -> None:
    path = write(tmp_path / "MRCONSO.RRF", [
        row("C0000001", A(1), "MSH", "D1", "Old name", suppress="O"),
        row("C0000002", A(2), "MSH", "D2", "Old name", suppress="Y"),
    ])  # fmt: skip
    assert one(path, Search("old name", search_type="exact")).outcome == Outcome.NOT_FOUND


# -- limits --------------------------------------------------------------------------------------


def test_a_limit_cuts_the_results_and_says_so(tmp_path: Path) -> None:
    path = write(tmp_path / "MRCONSO.RRF", CONCEPT)
    cut, exact, free = ask(path, Atoms("C0000001", limit=2), Atoms("C0000001", limit=3),
                           Atoms("C0000001", limit=0))  # fmt: skip
    assert ([r["ui"] for r in cut.results], cut.truncated) == ([A(11), A(12)], True)
    assert cut.message == f"2 atoms for CUI C0000001, {path}; --limit 2 cut it"
    assert cut.to_json()["truncated"] is True
    assert (len(exact.results), exact.truncated) == (3, False)
    assert (len(free.results), free.truncated) == (3, False)


def test_a_search_gives_25_results_unless_asked_for_more(tmp_path: Path) -> None:
    rows = [row(f"C{i:07d}", f"A{i}", "MSH", f"D{i}", "Same") for i in range(1, 28)]
    path = write(tmp_path / "MRCONSO.RRF", rows)
    default, more = ask(path, Search("same", search_type="exact"),
                        Search("same", search_type="exact", limit=30))  # fmt: skip
    assert (len(default.results), default.truncated) == (25, True)
    assert default.results[-1]["ui"] == "C0000025"
    assert (len(more.results), more.truncated) == (27, False)


# -- what the file cannot answer -----------------------------------------------------------------

REST = "ask the UMLS REST API for it: the same lookup without a local MRCONSO.RRF"
EXACT_ONLY = (
    "needs the UMLS REST API (GET /search/{release}): a local MRCONSO.RRF answers an exact "
    "search of atom strings for concepts only"
)


@pytest.mark.parametrize(
    ("asked", "message", "hint"),
    [
        (Definitions("C0000001"), "definitions are in MRDEF.RRF, not in MRCONSO.RRF (UTS: GET "
         "/content/{release}/CUI/{cui}/definitions)", REST),
        (Relations(cui="C0000001"), "relations are in MRREL.RRF, not in MRCONSO.RRF (UTS: GET "
         ".../relations)", REST),
        (SemanticTypes("C0000001"), "semantic types are in MRSTY.RRF, not in MRCONSO.RRF (UTS: "
         "the concept's semanticTypes, GET /content/{release}/CUI/{cui})", REST),
        (Hierarchy("ancestors", sab="SNOMEDCT_US", code="100"), "ancestors are in MRHIER.RRF, "
         "not in MRCONSO.RRF (UTS: GET .../ancestors)", REST),
        (Sources(), "the sources of a release are in MRSAB.RRF, not in MRCONSO.RRF (UTS: GET "
         "/metadata/{release}/sources)", REST),
        (Concept("C0000001"), "a concept's status and semantic types (MRSTY.RRF) are not in "
         "MRCONSO.RRF (UTS: GET /content/{release}/CUI/{cui})", REST),
        (SourceConcept("SNOMEDCT_US", "100"), "a source concept is answered by UTS (GET "
         "/content/{release}/source/{sab}/{code}); from MRCONSO.RRF, ask for the code's atoms",
         REST),
        (Search("fever"), "search type words " + EXACT_ONLY, "use search type exact, or " + REST),
        (Search("fever", search_type="normalizedString"), "search type normalizedString "
         + EXACT_ONLY, "use search type exact, or " + REST),
        (Search("100", search_type="exact", input_type="sourceUi"), "input type sourceUi "
         + EXACT_ONLY, "use search type exact, or " + REST),
        (Search("fever", search_type="exact", return_id_type="code"), "return id type code "
         + EXACT_ONLY, "use search type exact, or " + REST),
        (Search("fever", search_type="exact", partial=True), "a partial search " + EXACT_ONLY,
         "use search type exact, or " + REST),
        (Search("fever", search_type="exact", include_obsolete=True), "a search that includes "
         "obsolete or suppressible atoms " + EXACT_ONLY, "use search type exact, or " + REST),
        (Search("fever", search_type="exact", include_suppressible=True), "a search that "
         "includes obsolete or suppressible atoms " + EXACT_ONLY,
         "use search type exact, or " + REST),
        (Search("fever", search_type="exact", semantic_types=("T047",)), "semantic types are in "
         "MRSTY.RRF, not in MRCONSO.RRF (UTS: GET /search/{release}?semanticTypes=...)", REST),
    ],
)  # fmt: skip
def test_what_mrconso_cannot_answer_is_that_inputs_bad_input_naming_what_it_needs(
    tmp_path: Path, asked: Lookup, message: str, hint: str
) -> None:
    path = write(tmp_path / "MRCONSO.RRF", CONCEPT)
    bad, good = ask(path, asked, Atoms("C0000001"))
    assert (bad.outcome, bad.exit_code, bad.results, bad.message, bad.hint, bad.release) == (
        Outcome.BAD_INPUT, 2, (), message, hint, RELEASE
    )  # fmt: skip
    assert good.outcome == Outcome.FOUND  # the batch goes on


def test_each_input_says_what_it_asked(tmp_path: Path) -> None:
    path = write(tmp_path / "MRCONSO.RRF", CONCEPT)
    asked: list[Lookup] = [
        Definitions("C0000001"), Relations(sab="MSH", code="D001"), Relations(aui=A(17)),
        Hierarchy("parents", sab="MSH", code="D001"), Sources(), SemanticTypes("C0000001"),
        Concept("C0000001"), SourceConcept("MSH", "D001"), Search("Fever", sabs=("MSH",)),
        Crosswalk("MSH", "D001", target_sabs=("LNC", "NCI")), Cuis("MSH", "D001"),
    ]  # fmt: skip
    assert [a.query for a in ask(path, *asked)] == [
        "definitions of CUI C0000001", "relations of MSH code D001",
        f"relations of AUI {A(17)}", "parents of MSH code D001", "sources",
        "semantic types of CUI C0000001", "CUI C0000001",
        "MSH code D001", "words search for 'Fever' in MSH",
        "crosswalk of MSH code D001 to LNC,NCI", "concepts of MSH code D001",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("asked", "message"),
    [
        (Atoms("C1"), "CUI 'C1' is not a UMLS concept identifier: expected C and 7 digits, "
         "such as C0020538"),
        (Atoms("C0000001", sab="snomed"), "SAB 'snomed' is not a UMLS source abbreviation: "
         "expected upper-case letters, digits, '_', '.' and '-', such as SNOMEDCT_US"),
        (Atom("X1"), "AUI 'X1' is not a UMLS atom identifier: expected A and 7 to 9 digits, "
         "such as A3220484"),
        (Crosswalk("LOINC", "1-1"), "SAB 'LOINC' is not a UMLS source abbreviation, only close "
         "to LNC"),
        (Crosswalk("LNC", "1-1", target_sabs=("MSH", "mesh")), "SAB 'mesh' is not a UMLS source "
         "abbreviation: expected upper-case letters, digits, '_', '.' and '-', such as "
         "SNOMEDCT_US"),
        (Cuis("LNC", ""), "code '' cannot be sent to UMLS: it is empty"),
        (SourceAtoms("LNC", "1\n2"), "code '1\\n2' cannot be sent to UMLS: it contains the "
         "control character U+000A"),
        (Search("  ", search_type="exact"), "the term to search for is empty"),
        (Search("a\tb", search_type="exact"), "term 'a\\tb' contains the control character "
         "U+0009, which no atom's string holds"),
        (Search("fever", search_type="exact", sabs=("SNOMED",)), "SAB 'SNOMED' is not a UMLS "
         "source abbreviation, only close to SNOMEDCT_US"),
        (Search("a\udc80b", search_type="exact"), "term 'a\\udc80b' contains a lone surrogate "
         "U+DC80, which no atom's string holds"),
        (Crosswalk("MSH", "D1", limit=-1), "--limit -1 is out of range: give 0 (no cap) or more"),
    ],
)  # fmt: skip
def test_an_identifier_of_the_wrong_form_is_that_inputs_bad_input(
    tmp_path: Path, asked: Lookup, message: str
) -> None:
    path = write(tmp_path / "MRCONSO.RRF", CONCEPT)
    bad, good = ask(path, asked, Atoms("C0000001"))
    assert (bad.outcome, bad.message) == (Outcome.BAD_INPUT, message)
    assert good.outcome == Outcome.FOUND


def test_answers_keep_the_input_order_and_the_inputs_as_given(tmp_path: Path) -> None:
    path = write(tmp_path / "MRCONSO.RRF", CROSSWALK)
    items: list[tuple[str, Lookup]] = [
        ("SNOMEDCT_US\t500", Crosswalk("SNOMEDCT_US", "500")),
        ("definitions", Definitions("C0000001")),
        ("SNOMEDCT_US\t100", Crosswalk("SNOMEDCT_US", "100")),
        ("SNOMEDCT_US\t500", Crosswalk("SNOMEDCT_US", "500")),
    ]
    got = answer_many(path, RELEASE, items)
    assert [(a.input, a.outcome) for a in got] == [
        ("SNOMEDCT_US\t500", Outcome.NOT_FOUND),
        ("definitions", Outcome.BAD_INPUT),
        ("SNOMEDCT_US\t100", Outcome.FOUND),
        ("SNOMEDCT_US\t500", Outcome.NOT_FOUND),
    ]
    assert answer_many(path, RELEASE, []) == []


def test_nothing_is_read_when_no_input_can_be_answered(tmp_path: Path) -> None:
    """A file that is not MRCONSO at all is never opened when every input is bad input."""
    path = tmp_path / "MRCONSO.RRF"
    path.write_bytes(b"not an MRCONSO file\n")
    (answer,) = ask(path, Definitions("C0000001"))
    assert answer.outcome == Outcome.BAD_INPUT
    with pytest.raises(BadInputError) as caught:
        ask(path, Atoms("C0000001"))
    assert str(caught.value).startswith(f"{path}, line 1: not an MRCONSO.RRF file: ")


def test_release_current_is_the_one_the_files_names_say(tmp_path: Path) -> None:
    folder = tmp_path / "2099AB" / "META"
    folder.mkdir(parents=True)
    (answer,) = answer_many(write(folder / "MRCONSO.RRF", CONCEPT), "current",
                            [("C0000001", Atoms("C0000001"))])  # fmt: skip
    assert answer.release == "2099AB"
    assert answer.results[0]["concept"] == (
        "https://uts-ws.nlm.nih.gov/rest/content/2099AB/CUI/C0000001"
    )


@pytest.mark.parametrize(
    ("release", "message"),
    [
        ("current", "{path}: release current means the release the MRCONSO.RRF comes from, and "
         "no folder or file name of it says which (as 2025AB/META/MRCONSO.RRF or "
         "umls-2025AB-metathesaurus-full.zip do)"),
        ("2025", "'2025' is not a UMLS release name: expected YYYYAA or YYYYAB (the year and the "
         "release of that year, such as 2025AB), or current"),
    ],
)  # fmt: skip
def test_the_release_is_one_a_file_can_come_from(
    tmp_path: Path, release: str, message: str
) -> None:
    path = write(tmp_path / "MRCONSO.RRF", CONCEPT)
    with pytest.raises(BadInputError) as caught:
        answer_many(path, release, [("C0000001", Atoms("C0000001"))])
    assert str(caught.value) == message.format(path=path)


def test_links_name_the_release_given(tmp_path: Path) -> None:
    path = write(tmp_path / "MRCONSO.RRF", CONCEPT)
    (answer,) = answer_many(path, "2025AB", [(A(17), Atom(A(17)))])
    assert answer.release == "2025AB"
    assert answer.results[0]["concept"] == (
        "https://uts-ws.nlm.nih.gov/rest/content/2025AB/CUI/C0000001"
    )


@pytest.mark.parametrize("form", ["plain", "gzip"])
def test_a_byte_order_mark_is_warned_and_passed_over(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, form: str
) -> None:
    data = b"\xef\xbb\xbf" + "".join(r + "\n" for r in CONCEPT).encode()
    path = tmp_path / ("MRCONSO.RRF.gz" if form == "gzip" else "MRCONSO.RRF")
    path.write_bytes(gzip.compress(data) if form == "gzip" else data)
    assert [r["ui"] for r in one(path, Atoms("C0000001")).results] == [A(11), A(12), A(17)]
    assert [r.getMessage() for r in caplog.records] == [
        f"{path} starts with a UTF-8 byte order mark (BOM), which MRCONSO.RRF does not have: it "
        "was removed before the first row was read"
    ]


def test_a_progress_bar_is_closed_at_the_end(tmp_path: Path) -> None:
    class Bar:
        def __init__(self) -> None:
            self.seen: list[tuple[int, int]] = []
            self.closed = False

        def __call__(self, done: int, total: int) -> None:
            assert not self.closed
            self.seen.append((done, total))

        def close(self) -> None:
            self.closed = True

    path = write(tmp_path / "MRCONSO.RRF", CONCEPT)
    bar = Bar()
    ask(path, Atoms("C0000001"), progress=bar)
    size = path.stat().st_size
    assert (bar.seen[-1], bar.closed) == ((size, size), True)
    bar = Bar()
    with pytest.raises(BadInputError):
        ask(write(tmp_path / "bad.RRF", [*CONCEPT, "C0000001|x|"]), Atoms("C0000001"),
            progress=bar)  # fmt: skip
    assert bar.closed


def test_a_missing_file_is_bad_input_for_the_batch(tmp_path: Path) -> None:
    with pytest.raises(BadInputError) as caught:
        ask(tmp_path / "nowhere", Atoms("C0000001"))
    assert str(caught.value) == f"{tmp_path / 'nowhere'}: no such file or folder"


# -- one pass, any order, any form ---------------------------------------------------------------

BATCH: list[Lookup] = [
    Atoms("C0000001"),
    SourceAtoms("SNOMEDCT_US", "100"),
    Atom(A(105)),
    Crosswalk("SNOMEDCT_US", "100"),
    Cuis("MSH", "D001"),
    Search("zephyr fever", search_type="exact"),
    Crosswalk("SNOMEDCT_US", "999"),
]


#: BATCH but its crosswalk that gives codes, which are read in a second pass
ONE_PASS = [q for q in BATCH if q != Crosswalk("SNOMEDCT_US", "100")]


@pytest.mark.parametrize("passes", [1, 2])
def test_a_sorted_file_is_read_once_and_said_done_at_its_end(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, passes: int
) -> None:
    """One pass for a batch; a second for the codes its crosswalks give, each the cluster of
    all its rows (SPEC 12), wherever they are."""
    path = write(tmp_path / "MRCONSO.RRF", CROSSWALK)
    size = path.stat().st_size
    seen: list[tuple[int, int]] = []
    caplog.set_level(logging.INFO, LOG)
    ask(path, *(ONE_PASS if passes == 1 else BATCH),
        progress=lambda done, total: seen.append((done, total)))  # fmt: skip
    # every pass together, as a part of the file's size (the bar never says twice the file)
    assert seen[0] == (0, size) and seen[-1] == (size, size)
    assert all(done < total for done, total in seen[:-1])
    assert {total for _, total in seen} == {size}
    if passes == 2:  # the second pass is the bar's second half
        assert max(done for done, _ in seen[:-1]) >= size // 2
    assert [r.getMessage() for r in caplog.records] == passes * [
        f"scanning {path} in this process: the file is under 64 MiB"
    ]


def test_a_file_out_of_cui_order_is_read_twice_with_a_warning_and_answers_the_same(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Crosswalk and search need a concept's rows, which a sorted file keeps together: a file
    out of order is read a second time for them, so its answers are those of the sorted file."""
    expected = ask(write(tmp_path / "sorted.RRF", CROSSWALK), *BATCH)
    rows = CROSSWALK[:]
    random.Random(4).shuffle(rows)
    # the concepts' rows mixed, each concept's in its order (the first of them may name it)
    of_cui = {r[:8]: iter([s for s in CROSSWALK if s[:8] == r[:8]]) for r in rows}
    rows = [next(of_cui[r[:8]]) for r in rows]
    path = write(tmp_path / "MRCONSO.RRF", rows)
    size = path.stat().st_size
    seen: list[tuple[int, int]] = []
    got = ask(path, *BATCH, progress=lambda done, total: seen.append((done, total)))
    assert [sorted_results(a) for a in got] == [sorted_results(a) for a in expected]
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == [
        f"{path} is not sorted by CUI (C0000003 comes after C0000005), as the MRCONSO.RRF NLM "
        "ships is: it is read a second time for the rows of the concepts found"
    ]
    assert seen[-1] == (size, size)  # and a third for the crosswalk's codes, in one bar
    assert all(done < size and total == size for done, total in seen[:-1])


def test_a_concept_split_in_two_runs_is_out_of_order(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    rows = [CROSSWALK[0], CROSSWALK[7], *CROSSWALK[1:7], *CROSSWALK[8:]]
    got = one(write(tmp_path / "MRCONSO.RRF", rows), Crosswalk("SNOMEDCT_US", "100"))
    assert [r["ui"] for r in got.results] == ["Z01", "10001", "D001"]
    assert "is not sorted by CUI (C0000001 comes after C0000002)" in caplog.text


def test_a_concept_longer_than_the_most_kept_together_is_read_as_out_of_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(lookup, "MAX_CONCEPT", 300)
    monkeypatch.setattr(scan, "BLOCK_SIZE", 128)
    path = write(tmp_path / "MRCONSO.RRF", CROSSWALK)
    got = ask(path, *BATCH)
    monkeypatch.undo()
    assert [a.results for a in got] == [a.results for a in ask(path, *BATCH)]
    assert "is not sorted by CUI (C0000001 comes after C0000001)" in caplog.text


@pytest.mark.parametrize("block", [16, 100, 333, 1 << 18])
def test_concepts_cut_by_blocks_are_put_back_together(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, block: int
) -> None:
    expected = ask(write(tmp_path / "M.RRF", CROSSWALK), *BATCH)
    monkeypatch.setattr(scan, "BLOCK_SIZE", block)
    monkeypatch.setattr(scan, "STREAM_PIECE", block)
    for path in (write(tmp_path / "MRCONSO.RRF", CROSSWALK), gzipped(tmp_path, CROSSWALK)):
        assert [a.results for a in ask(path, *BATCH)] == [a.results for a in expected]
    assert "not sorted" not in caplog.text


def gzipped(tmp_path: Path, rows: Sequence[str]) -> Path:
    path = tmp_path / "MRCONSO.RRF.gz"
    path.write_bytes(gzip.compress("".join(r + "\n" for r in rows).encode()))
    return path


def zipped(tmp_path: Path, rows: Sequence[str]) -> Path:
    path = tmp_path / "umls-2099AA-metathesaurus-full.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("2099AA/META/MRCONSO.RRF", "".join(r + "\n" for r in rows))
    return path


def parts(tmp_path: Path, rows: Sequence[str]) -> Path:
    data = "".join(r + "\n" for r in rows).encode()
    third = len(data) // 3 + 5  # parts cut mid-row
    for name, piece in zip(("aa", "ab", "ac"), (data[:third], data[third:2 * third],
                                                data[2 * third:]), strict=True):  # fmt: skip
        (tmp_path / f"MRCONSO.RRF.{name}.gz").write_bytes(gzip.compress(piece))
    return tmp_path / "MRCONSO.RRF.ab.gz"


@pytest.mark.parametrize("form", [gzipped, zipped, parts])
@pytest.mark.parametrize("shuffled", [False, True])
def test_every_form_gives_the_same_answers(
    tmp_path: Path, form: Callable[[Path, Sequence[str]], Path], shuffled: bool
) -> None:
    rows = CROSSWALK[:]
    if shuffled:
        random.Random(2).shuffle(rows)
    expected = ask(write(tmp_path / "plain.RRF", rows), *BATCH)
    assert [a.results for a in ask(form(tmp_path, rows), *BATCH)] == [a.results for a in expected]


def feed_pipe(tmp_path: Path, rows: Sequence[str]) -> tuple[Path, threading.Thread]:
    fifo = tmp_path / "mrconso.fifo"
    os.mkfifo(fifo)

    def feed() -> None:
        with open(fifo, "wb") as f:
            f.write("".join(r + "\n" for r in rows).encode())

    writer = threading.Thread(target=feed)
    writer.start()
    return fifo, writer


def test_a_pipe_is_read_once(tmp_path: Path) -> None:
    expected = ask(write(tmp_path / "plain.RRF", CROSSWALK), *ONE_PASS)
    fifo, writer = feed_pipe(tmp_path, CROSSWALK)
    seen: list[tuple[int, int]] = []
    got = ask(fifo, *ONE_PASS, progress=lambda done, total: seen.append((done, total)))
    writer.join()
    assert [a.results for a in got] == [a.results for a in expected]
    size = (tmp_path / "plain.RRF").stat().st_size
    assert seen == [(size, size)]


def test_a_crosswalk_that_gives_codes_cannot_read_a_pipe_twice(tmp_path: Path) -> None:
    """Its codes' clusters take a second pass (SPEC 12: all their rows), which a pipe has not."""
    fifo, writer = feed_pipe(tmp_path, CROSSWALK)
    with pytest.raises(BadInputError) as caught:
        ask(fifo, Crosswalk("SNOMEDCT_US", "100"))
    writer.join()
    assert str(caught.value) == (
        f"{fifo}: a crosswalk's codes are clusters of all their atoms, found in a second pass, "
        "and a pipe cannot be read twice"
    )
    assert caught.value.hint == "pass the file itself"


def test_a_pipe_out_of_order_cannot_be_read_twice(tmp_path: Path) -> None:
    fifo, writer = feed_pipe(tmp_path, CROSSWALK[::-1])
    with pytest.raises(BadInputError) as caught:
        ask(fifo, *BATCH)
    writer.join()
    assert str(caught.value) == (
        f"{fifo}: is not sorted by CUI (C0000005 comes after C0000006), and a pipe cannot be "
        "read twice"
    )
    assert caught.value.hint == "pass the file itself: a file that is not sorted is read twice"


@pytest.mark.parametrize("workers", [2, 3, 4])
@pytest.mark.parametrize("shuffled", [False, True])
def test_worker_processes_give_the_same_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
    workers: int, shuffled: bool,
) -> None:  # fmt: skip
    """Ranges start where concepts start, wherever the file is cut (many small concepts, one
    long one); the order is checked across ranges too."""
    rows = invented(random.Random(workers), concepts=60)
    if shuffled:
        random.Random(1).shuffle(rows)
    asked = lookups_for(rows, random.Random(workers))
    expected = ask(write(tmp_path / "plain.RRF", rows), *asked)
    monkeypatch.setattr(source, "PARALLEL_MIN_SIZE", 0)
    caplog.set_level(logging.INFO, "tempmedbench_synonyms")
    path = write(tmp_path / "MRCONSO.RRF", rows)
    got = ask(path, *asked, workers=workers)
    assert [a.results for a in got] == [a.results for a in expected]
    assert f"scanning {path} with {workers} worker processes" in caplog.text
    assert ("is not sorted by CUI" in caplog.text) is shuffled


# -- damaged files -------------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["plain", "gzip", "workers"])
def test_a_damaged_row_that_is_needed_names_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    monkeypatch.setattr(source, "PARALLEL_MIN_SIZE", 0)
    short = "|".join(row("C0000002", A(209), "MDR", "10009", "Short").split("|")[:16]) + "|"
    rows = [*CROSSWALK[:8], short, *CROSSWALK[8:]]
    path = gzipped(tmp_path, rows) if where == "gzip" else write(tmp_path / "M.RRF", rows)
    with pytest.raises(BadInputError) as caught:
        ask(path, Crosswalk("SNOMEDCT_US", "100"), workers=3 if where == "workers" else 1)
    assert str(caught.value) == (
        f"{path}, line 9: an MRCONSO.RRF row has 18 fields, each followed by '|'; this line has 16"
    )
    assert caught.value.hint == "the file looks damaged or is not MRCONSO.RRF; extract it again"


def test_damaged_rows_nothing_needs_are_not_read(tmp_path: Path) -> None:
    short = "|".join(row("C0000009", A(9), "MSH", "D9", "Short").split("|")[:16]) + "|"
    rows = [*CROSSWALK, "garbage without a bar", short, "C0000010|\xff|x"]
    path = write(tmp_path / "M.RRF", rows)
    expected = ask(write(tmp_path / "plain.RRF", CROSSWALK), *BATCH)
    assert [a.results for a in ask(path, *BATCH)] == [a.results for a in expected]


def test_a_needed_row_that_is_not_utf8_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "M.RRF"
    data = "".join(r + "\n" for r in CROSSWALK).encode()
    path.write_bytes(data.replace(b"Zephyr pyrexia", b"Zephyr \xff"))
    with pytest.raises(BadInputError) as caught:
        ask(path, Crosswalk("SNOMEDCT_US", "100"))
    assert str(caught.value) == (
        f"{path}, line 9: not valid UTF-8 (invalid start byte at byte 76 of the line)"
    )


def test_a_source_named_in_another_field_is_not_its_source(tmp_path: Path) -> None:
    """The SAB asked for in a row's SDUI, and its TTY one of the codes asked for: the row is
    not one of that source's, nor is a row whose AUI asked for sits in another field."""
    decoy = row("C0000008", A(801), "MTH", "77", "Decoy", tty="100", sdui="SNOMEDCT_US")
    aui_decoy = row("C0000009", A(901), "MSH", "D9", A(105), scui=A(105))
    path = write(tmp_path / "M.RRF", [*CROSSWALK, decoy, aui_decoy])
    code, atom, walk = ask(path, SourceAtoms("SNOMEDCT_US", "100"), Atom(A(105)),
                           Crosswalk("SNOMEDCT_US", "100"))  # fmt: skip
    assert [r["ui"] for r in code.results] == [A(101), A(201)]
    assert [r["ui"] for r in atom.results] == [A(105)]
    assert [r["ui"] for r in walk.results] == ["Z01", "10001", "D001"]


def test_rows_ending_in_crlf_are_read(tmp_path: Path) -> None:
    expected = ask(write(tmp_path / "plain.RRF", CROSSWALK), *BATCH)
    got = ask(write(tmp_path / "M.RRF", CROSSWALK, end="\r\n"), *BATCH)
    assert [a.results for a in got] == [a.results for a in expected]


# -- against a reference: every rule, on random invented files ----------------------------------

SABS = ("SNOMEDCT_US", "LNC", "MSH", "MTH", "NCI", "LNC-DE-DE")
WORDS = ("Zephyr", "zephyr", "ZEPHYR", "fever", "Straße", "STRASSE", "pox", "ﬁ")


def invented(rng: random.Random, concepts: int) -> list[str]:
    """Rows of ``concepts`` invented concepts (one long), codes shared across concepts,
    decoys, every flag and language; sorted by CUI, a concept's rows in no order."""
    rows = []
    aui = 0
    for c in range(1, concepts + 1):
        for _ in range(40 if c == concepts // 2 else rng.randint(1, 6)):
            aui += 1
            sab = rng.choice(SABS)
            code = "NOCODE" if sab == "MTH" else rng.choice(["1", "2", "3", "D1", "10-1"])
            rows.append(row(
                f"C{c:07d}", A(aui), sab, code, " ".join(rng.sample(WORDS, rng.randint(1, 2))),
                tty=rng.choice(["PT", "SY", "FN", "1"]), lat=rng.choice(["ENG", "ENG", "GER"]),
                ts=rng.choice("PS"), stt=rng.choice(["PF", "VO"]), ispref=rng.choice("YN"),
                suppress=rng.choice("NNNNOEY"), sdui=rng.choice(["", "MSH", "SNOMEDCT_US"]),
            ))  # fmt: skip
    return rows


def lookups_for(rows: Sequence[str], rng: random.Random) -> list[Lookup]:
    fields = [r.split("|") for r in rows]
    picked = rng.sample(fields, 12)
    return [
        *(Atoms(f[0]) for f in picked[:3]),
        Atoms(picked[3][0], sab=picked[3][11]),
        *(SourceAtoms(f[11], f[13]) for f in picked[4:6]),
        *(Atom(f[7]) for f in picked[6:8]),
        *(Crosswalk(f[11], f[13], limit=0) for f in picked[8:10]),
        Crosswalk("SNOMEDCT_US", "1", target_sabs=("MSH", "LNC")),
        Cuis("MSH", "D1", limit=0),
        Cuis("LNC", "10-1", limit=0),
        *(Search(f[14].upper(), search_type="exact", limit=0) for f in picked[10:12]),
        Search("zephyr", search_type="exact", sabs=("MSH", "NCI"), limit=0),
        Search("straße", search_type="exact", language="GER", limit=0),
        Atoms("C9999999"),
    ]


def reference(rows: Sequence[str], asked: Lookup) -> list[dict[str, Any]]:
    """SPEC 11's rules read the plainest way, over every row of the file."""
    links = shapes.Links(RELEASE)
    every = [r.split("|")[:18] for r in rows]
    counted = [f for f in every if f[16] not in ("O", "E", "Y")]
    english = [f for f in counted if f[1] == "ENG"]
    if isinstance(asked, Atoms):
        kept = [f for f in english if f[0] == asked.cui and asked.sab in (None, f[11])]
        return [clean(shapes.atom_json(f, links)) for f in kept]
    if isinstance(asked, (SourceAtoms, Crosswalk)) and asked.code in ("", "NOCODE"):
        return []  # never a known code (SPEC 12)
    if isinstance(asked, SourceAtoms):
        kept = [f for f in english if (f[11], f[13]) == (asked.sab, asked.code)]
        return [clean(shapes.atom_json(f, links)) for f in kept]
    if isinstance(asked, Atom):
        return [clean(shapes.atom_json(f, links)) for f in every if f[7] == asked.aui][:1]
    if isinstance(asked, Crosswalk):
        cuis = {f[0] for f in counted if (f[11], f[13]) == (asked.sab, asked.code)}
        shared = [
            f
            for f in counted
            if f[0] in cuis
            and f[11] != asked.sab
            and f[13] not in ("", "NOCODE")
            and (not asked.target_sabs or f[11] in asked.target_sabs)
        ]
        codes = sorted({(f[11], f[13]) for f in shared})
        return [
            clean(shapes.cluster_json(s, c, [f for f in every if (f[11], f[13]) == (s, c)], links))
            for s, c in codes
        ]
    assert isinstance(asked, (Cuis, Search))
    if isinstance(asked, Cuis):
        hits = [f for f in counted if (f[11], f[13]) == (asked.sab, asked.code)]
    else:
        hits = [
            f
            for f in counted
            if f[14].casefold() == asked.string.casefold()
            and (not asked.sabs or f[11] in asked.sabs)
            and asked.language in (None, f[1])
        ]
    got = []
    for cui in sorted({f[0] for f in hits}):
        mine = [f for f in every if f[0] == cui]  # every row, in file order (SPEC 12)
        named = next(
            itertools.chain(
                (f for f in mine if (f[1], f[2], f[4], f[6]) == ("ENG", "P", "PF", "Y")),
                (f for f in mine if (f[1], f[2], f[6]) == ("ENG", "P", "Y")),
                mine,
            )
        )
        got.append(shapes.search_result_json(cui, named[14], named[11], links.concept(cui)))
    return [clean(g) for g in got]


@pytest.mark.parametrize("seed", range(8))
def test_answers_are_those_of_spec_11s_rules_over_every_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """Random invented files, read in blocks of many sizes, sorted or not: the answers are
    those the rules give over every row of the file (SPEC 12: a crosswalk's code is the cluster
    of all its rows)."""
    rng = random.Random(seed)
    rows = invented(rng, concepts=rng.randint(5, 40))
    if seed % 2:
        rng.shuffle(rows)
    asked = lookups_for(rows, rng)
    monkeypatch.setattr(scan, "BLOCK_SIZE", rng.choice([64, 500, 4096, 1 << 18]))
    monkeypatch.setattr(scan, "STREAM_PIECE", rng.choice([1, 300, 1 << 17]))
    for path in (write(tmp_path / "MRCONSO.RRF", rows), gzipped(tmp_path, rows)):
        for answer, query in zip(ask(path, *asked), asked, strict=True):
            assert list(answer.results) == reference(rows, query), query
            assert answer.outcome == (Outcome.FOUND if answer.results else Outcome.NOT_FOUND)


@pytest.mark.parametrize("seed", range(20))
def test_pieces_hold_every_line_once_and_end_where_concepts_end(
    monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """However the blocks of whole lines are cut, the pieces are the file again, in order, each
    line once; each ends where a concept ends, but where a concept is longer than
    MAX_CONCEPT."""
    rng = random.Random(seed)
    monkeypatch.setattr(lookup, "MAX_CONCEPT", rng.choice([200, 1000, 1 << 20]))
    data = "".join(r + "\n" for r in invented(rng, concepts=rng.randint(1, 30))).encode()
    lines = data.splitlines(keepends=True)
    cuts = sorted(rng.sample(range(1, len(lines)), min(len(lines) - 1, rng.randint(0, 40))))
    blocks, at = [], 0  # as lines_of gives them: whole lines between bytes of no concern
    for a, b in zip([0, *cuts], [*cuts, len(lines)], strict=True):
        head = b"x|" * rng.randint(0, 3)
        block = b"".join(lines[a:b])
        blocks.append(
            (at - len(head), head + block + b"C9|tail", len(head), len(head) + len(block))
        )
        at += len(block)
    pieces = list(lookup._pieces(blocks, rng.choice([0, 1, 150])))
    assert b"".join(d[lo:hi] for _, d, lo, hi in pieces) == data
    assert [base + lo for base, _, lo, _ in pieces] == list(
        itertools.accumulate((hi - lo for _, _, lo, hi in pieces[:-1]), initial=0)
    )
    for base, piece, lo, hi in pieces[:-1]:
        after = data[base + hi :].split(b"|", 1)[0]
        last = piece[lo:hi].rstrip(b"\n").rsplit(b"\n", 1)[-1].split(b"|", 1)[0]
        assert last != after or hi - lo >= lookup.MAX_CONCEPT, (last, after)


def test_codes_of_many_sources_are_found_as_those_of_one(tmp_path: Path) -> None:
    """Beyond six sources, one search looks for every source's codes at once: a code of one
    source is not another's, and the answers are those of each code asked alone."""
    sabs = ["MSH", "NCI", "LNC", "MDR", "HPO", "GO", "CHV", "ICD10CM", "SNOMEDCT_US"]
    rows = [row(f"C{c:07d}", A(c * 10 + i), sab, f"{sab[0]}{c}", f"{sab} {c}")
            for c in range(1, 6) for i, sab in enumerate(sabs)]  # fmt: skip
    path = write(tmp_path / "MRCONSO.RRF", rows)
    asked: list[Lookup] = [SourceAtoms(sab, f"{code[0]}{c}") for sab in sabs for code in sabs
                           for c in (2, 4)]  # fmt: skip
    asked += [Crosswalk(sab, f"{sab[0]}3") for sab in sabs]
    together = ask(path, *asked)
    assert [a.results for a in together] == [one(path, q).results for q in asked]
    # a code is one of its own source's (MSH and MDR share their first letter), every crosswalk
    # has codes of other sources
    found = [q for q in asked if isinstance(q, Crosswalk) or q.code[0] == q.sab[0]]
    assert [a.outcome == Outcome.FOUND for a in together] == [q in found for q in asked]
    assert len(found) == 31


def test_the_fake_uts_answers_the_invented_release_as_the_file_does() -> None:
    """Every code, concept, atom and string of the invented MRCONSO.RRF, asked of the file and
    of the fake UTS built from it: the same results (atoms in no order: UTS gives none)."""
    path = FIXTURES / "umls" / "MRCONSO.RRF"
    fake = FakeUts(FakeUtsData.from_mrconso(path, release=RELEASE), api_key="k")
    rows = [line.split("|") for line in path.read_text(encoding="utf-8").splitlines()]
    codes = sorted({(r[11], r[13]) for r in rows if r[13] != "NOCODE"})
    asked: list[tuple[Lookup, str, dict[str, str]]] = []
    listed = {"language": "ENG", "includeObsolete": "false", "includeSuppressible": "false"}
    for sab, code in codes:
        source = f"/content/{RELEASE}/source/{sab}/{quote(code, safe='')}"
        asked += [
            (Crosswalk(sab, code), f"/crosswalk/{RELEASE}/source/{sab}/{quote(code, safe='')}",
             {}),
            (SourceAtoms(sab, code), f"{source}/atoms", listed),
            (Cuis(sab, code), f"/search/{RELEASE}",
             {"string": code, "inputType": "sourceUi", "searchType": "exact", "sabs": sab}),
        ]  # fmt: skip
    asked += [(Atoms(c), f"/content/{RELEASE}/CUI/{c}/atoms", listed) for c in {r[0] for r in rows}]
    asked += [(Atom(a), f"/content/{RELEASE}/AUI/{a}", {}) for a in {r[7] for r in rows}]
    asked += [(Search(s, search_type="exact"), f"/search/{RELEASE}",
               {"string": s, "searchType": "exact"}) for s in {r[14] for r in rows}]  # fmt: skip
    local = ask(path, *(q for q, _, _ in asked), workers=1)
    assert sum(a.outcome == Outcome.FOUND for a in local) > len(asked) // 2
    for (query, route, params), answer in zip(asked, local, strict=True):
        reply = fake.handle(
            route,
            {k: [v] for k, v in {**params, "apiKey": "k", "pageSize": "200"}.items()},
            base_url="https://uts-ws.nlm.nih.gov/rest",
        )
        body = json.loads(reply.body) if reply.status == 200 else {"result": []}
        result = body["result"]
        if isinstance(result, dict) and "results" in result:  # a search
            result = [r for r in result["results"] if r["ui"] != "NONE"]
        theirs = [clean(r) for r in (result if isinstance(result, list) else [result])]
        if isinstance(query, (Atoms, SourceAtoms)):
            assert sorted_results(answer) == sorted(theirs, key=lambda r: r["ui"]), query
        else:
            assert list(answer.results) == theirs, query


@pytest.mark.parametrize("seed", range(4))
def test_the_fake_uts_names_every_concept_as_the_file_does(tmp_path: Path, seed: int) -> None:
    """Random invented rows (several English preferred rows a concept, obsolete ones, none,
    other languages): every code's concepts and every exact search, asked of the file and of
    the fake UTS built from it, give the same results, names and rootSources included (one
    rule, ``shapes.concept_name_row``; before it, half of them differed)."""
    rng = random.Random(seed)
    rows = invented(rng, concepts=12)
    path = write(tmp_path / "MRCONSO.RRF", rows)
    fake = FakeUts(FakeUtsData.from_mrconso(path, release=RELEASE), api_key="k")
    fields = [r.split("|") for r in rows]
    asked: list[tuple[Lookup, dict[str, str]]] = [
        (Cuis(f[11], f[13], limit=0),
         {"string": f[13], "inputType": "sourceUi", "searchType": "exact", "sabs": f[11]})
        for f in fields if f[13] != "NOCODE"
    ]  # fmt: skip
    asked += [(Search(f[14], search_type="exact", limit=0),
               {"string": f[14], "searchType": "exact"}) for f in fields]  # fmt: skip
    local = ask(path, *(q for q, _ in asked), workers=1)
    assert sum(a.outcome == Outcome.FOUND for a in local) > len(asked) // 2
    for (query, params), answer in zip(asked, local, strict=True):
        reply = fake.handle(
            f"/search/{RELEASE}",
            {k: [v] for k, v in {**params, "apiKey": "k", "pageSize": "200"}.items()},
            base_url="https://uts-ws.nlm.nih.gov/rest",
        )
        theirs = [r for r in json.loads(reply.body)["result"]["results"] if r["ui"] != "NONE"]
        assert list(answer.results) == [clean(r) for r in theirs], query


@pytest.mark.parametrize("form", ["plain", "gzip", "workers"])
def test_a_complete_last_row_without_its_line_end_is_read_with_a_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, form: str
) -> None:
    monkeypatch.setattr(source, "PARALLEL_MIN_SIZE", 0)
    data = "\n".join(CROSSWALK).encode()  # the last row, C0000006's obsolete MSH atom, unended
    path = tmp_path / ("MRCONSO.RRF.gz" if form == "gzip" else "MRCONSO.RRF")
    path.write_bytes(gzip.compress(data) if form == "gzip" else data)
    got = one(path, Atom(A(602)))
    assert [r["ui"] for r in got.results] == [A(602)]
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == [
        f"{path} does not end with a line feed: its last row is complete (18 fields, each "
        "followed by '|') and was read"
    ]
    path.write_bytes(data[:-5] if form != "gzip" else gzip.compress(data[:-5]))
    with pytest.raises(BadInputError) as caught:
        ask(path, Atom(A(602)), workers=2 if form == "workers" else 1)
    assert str(caught.value) == (
        f"{path}: ends mid-row: is the last part missing or the file truncated?"
    )
