"""mrconso.engine: SPEC 12's answers from the index's tables, as UTS's JSON objects. The rows are
fixtures/umls (invented) and small invented rows inline; every expected value is written out."""

from __future__ import annotations

import sqlite3
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, cast

import pytest

from helpers import FIXTURES
from tempmedbench_synonyms.lookups import COUNTED, EVERY_ROW, Rows, counted
from tempmedbench_synonyms.mrconso import engine
from tempmedbench_synonyms.mrconso.engine import Engine, needs
from tempmedbench_synonyms.mrconso.rows import MRCONSO_COLUMNS
from tempmedbench_synonyms.mrconso.shapes import Links

REST = "https://uts-ws.nlm.nih.gov/rest"
CONTENT = f"{REST}/content/2099AA"
SEMNET = f"{REST}/semantic-network/2099AA"
SNOMED = "SNOMEDCT_US"
ENGLISH = Rows(frozenset({"N"}), english=True)  # ``atoms``'s default rows


def build(files: Mapping[str, Iterable[Sequence[str]]]) -> Engine:
    """An engine over ``files`` (each its rows' fields), in memory."""
    db = sqlite3.connect(":memory:")
    found = Engine(db, files, Links("2099AA", REST + "/"))
    weakref.finalize(found, db.close)  # closed with the engine (Python 3.13 warns otherwise)
    for name, rows in files.items():
        engine.create(db, name)
        engine.load(db, name, rows)
        engine.finish(db, name)
    return found


def read(name: str) -> list[list[str]]:
    text = (FIXTURES / "umls" / f"{name}.RRF").read_text(encoding="utf-8")
    return [line.split("|")[:-1] for line in text.splitlines()]


@pytest.fixture(scope="module")
def umls() -> Engine:
    """fixtures/umls, all six files."""
    return build({name: read(name) for name in engine.FILES})


def row(cui: str, aui: str, sab: str, code: str, name: str, *, tty: str = "PT",
        lat: str = "ENG", ts: str = "P", stt: str = "PF", ispref: str = "Y",
        suppress: str = "N", scui: str | None = None, sdui: str = "",
        srl: str = "0") -> list[str]:  # fmt: skip
    """One invented MRCONSO row's 18 fields."""
    fields = dict.fromkeys(MRCONSO_COLUMNS, "")
    fields.update(
        CUI=cui, LAT=lat, TS=ts, LUI="L" + aui[1:], STT=stt, SUI="S" + aui[1:], ISPREF=ispref,
        AUI=aui, SCUI=code if scui is None else scui, SDUI=sdui, SAB=sab, TTY=tty, CODE=code,
        STR=name, SRL=srl, SUPPRESS=suppress, CVF="256",
    )  # fmt: skip
    return [fields[c] for c in MRCONSO_COLUMNS]


def rel(cui1: str, aui1: str, stype1: str, label: str, cui2: str, aui2: str, stype2: str,
        rui: str, *, rela: str = "", sab: str = "SRC", suppress: str = "N",
        srui: str = "", rg: str = "") -> list[str]:  # fmt: skip
    return [cui1, aui1, stype1, label, cui2, aui2, stype2, rela, rui, srui, sab, sab, rg, "",
            suppress, ""]  # fmt: skip


def sty(cui: str, tui: str, stn: str) -> list[str]:
    return [cui, tui, stn, f"Type {tui}", f"AT{cui}{tui}", ""]


def hier(aui: str, paui: str, ptr: str, sab: str = "SRC") -> list[str]:
    return ["C0", aui, "1", paui, sab, "isa", ptr, "", ""]


def cluster(sab: str, code: str, name: str, count: int, *, has: str = "",
            obsolete: bool = False, suppressible: bool = False) -> dict[str, Any]:  # fmt: skip
    """A SourceAtomCluster as SPEC 12 writes it; ``has``: the lists with an entry."""
    at = f"{CONTENT}/source/{sab}/{code}"
    return {
        "classType": "SourceAtomCluster",
        "ui": code,
        "suppressible": suppressible,
        "obsolete": obsolete,
        "rootSource": sab,
        "atomCount": count,
        "cVMemberCount": 0,
        "attributes": "NONE",
        "atoms": f"{at}/atoms",
        **{k: f"{at}/{k}" if k in has.split() else "NONE"
           for k in ("descendants", "ancestors", "parents", "children", "relations")},
        "definitions": "NONE",
        "concepts": f"{REST}/search/2099AA?string={code}&sabs={sab}&searchType=exact"
        "&inputType=sourceUi",
        "defaultPreferredAtom": f"{at}/atoms/preferred",
        "name": name,
    }  # fmt: skip


def found(ui: str, name: str, sab: str, uri: str) -> dict[str, str]:
    return {"ui": ui, "rootSource": sab, "uri": uri, "name": name}


def concept_result(cui: str, name: str, sab: str = SNOMED) -> dict[str, str]:
    return found(cui, name, sab, f"{CONTENT}/CUI/{cui}")


def uis(results: list[dict[str, Any]] | None) -> list[str]:
    assert results is not None
    return [r["ui"] for r in results]


# -- concept, atoms, atom, preferred atom ---------------------------------------------------------


def test_a_concept_with_its_types_definitions_and_relations(umls: Engine) -> None:
    link = f"{CONTENT}/CUI/C9000001"
    assert umls.concept("C9000001") == {
        "classType": "Concept",
        "ui": "C9000001",
        "suppressible": False,
        "dateAdded": "NONE",
        "majorRevisionDate": "NONE",
        "status": "NONE",
        "semanticTypes": [
            {"name": "Invented Disorder", "uri": f"{SEMNET}/TUI/T901"},
            {"name": "Invented Weather Finding", "uri": f"{SEMNET}/TUI/T902"},
        ],
        "atomCount": 8,  # every row: obsolete, suppressible and French too
        "attributeCount": 0,
        "cvMemberCount": 0,
        "atoms": f"{link}/atoms",
        "definitions": f"{link}/definitions",
        "relations": f"{link}/relations",
        "defaultPreferredAtom": f"{link}/atoms/preferred",
        "relationCount": 4,  # R90000002, 08, 10 and the obsolete 11: every row whose CUI2 it is
        "name": "Zephyr fever",
    }
    assert umls.concept("C9999999") is None


def test_a_concepts_links_follow_the_files() -> None:
    """Without MRSTY, MRDEF, MRREL: no types, no links; an obsolete definition is no link."""
    rows = [row("C1", "A1", "SRC", "1", "One")]
    bare = build({"MRCONSO": rows})
    concept = bare.concept("C1")
    assert concept is not None
    assert (concept["semanticTypes"], concept["definitions"], concept["relations"],
            concept["relationCount"]) == ([], "NONE", "NONE", 0)  # fmt: skip
    obsolete = ["C1", "A1", "AT1", "", "SRC", "Gone.", "O", ""]
    other = rel("C1", "", "CUI", "RO", "C2", "", "CUI", "R1")  # C1 is its first id: not its own
    full = build({"MRCONSO": rows, "MRDEF": [obsolete], "MRREL": [other], "MRSTY": []})
    concept = full.concept("C1")
    assert concept is not None
    assert (concept["definitions"], concept["relations"]) == ("NONE", "NONE")


def atom(aui: str, cui: str, sab: str, code: str, name: str, tty: str = "PT", *,
         lat: str = "ENG", suppress: str = "N", sdui: str = "NONE") -> dict[str, Any]:  # fmt: skip
    return {
        "classType": "Atom",
        "ui": aui,
        "suppressible": "true" if suppress in "EY" else "false",
        "obsolete": "true" if suppress == "O" else "false",
        "rootSource": sab,
        "termType": tty,
        "code": f"{CONTENT}/source/{sab}/{code}",
        "concept": f"{CONTENT}/CUI/{cui}",
        "sourceConcept": f"{CONTENT}/source/{sab}/{code}",
        "sourceDescriptor": sdui,
        "attributes": "NONE",
        "parents": "NONE",
        "ancestors": None,
        "children": "NONE",
        "descendants": None,
        "relations": f"{CONTENT}/AUI/{aui}/relations",
        "definitions": "NONE",
        "name": name,
        "language": lat,
    }


def test_an_atom_whatever_its_flags_and_language(umls: Engine) -> None:
    assert umls.atom("A9000014") == atom(
        "A9000014", "C9000001", SNOMED, "9990101009", "Aardvark fever", "SY", suppress="O"
    )
    assert umls.atom("A9000017") == atom(
        "A9000017", "C9000001", SNOMED, "9990101009", "Fièvre zéphyr", lat="FRE"
    )
    assert umls.atom("A9999999") is None


def test_atoms_of_a_concept_and_of_a_code(umls: Engine) -> None:
    """In file order, the rows counted (English, N: default), narrowed by the options."""
    assert uis(umls.atoms(cui="C9000001", rows=ENGLISH)) == [
        "A9000011", "A9000012", "A9000013", "A9000018",
    ]  # fmt: skip
    assert uis(umls.atoms(cui="C9000001", rows=EVERY_ROW)) == [
        "A9000011", "A9000012", "A9000013", "A9000014", "A9000015", "A9000016", "A9000018",
        "A9000017",
    ]  # fmt: skip
    assert uis(umls.atoms(cui="C9000001", rows=Rows(frozenset("EY"), english=True))) == [
        "A9000015", "A9000016",
    ]  # fmt: skip
    assert uis(umls.atoms(cui="C9000001", sabs=["MTH"], rows=ENGLISH)) == ["A9000018"]
    assert uis(umls.atoms(cui="C9000001", ttys=["FN", "SY"], rows=ENGLISH)) == [
        "A9000012", "A9000013",
    ]  # fmt: skip
    assert uis(umls.atoms(cui="C9000001", language="FRE", rows=COUNTED)) == ["A9000017"]
    assert uis(umls.atoms(sab="RXNORM", code="9060", rows=ENGLISH)) == [
        "A9000601", "A9000602", "A9000605",
    ]  # fmt: skip
    assert umls.atoms(sab="RXNORM", code="9060", ttys=["XX"]) == []  # known, nothing counted
    assert umls.atoms(cui="C9999999") is None
    assert umls.atoms(sab="RXNORM", code="9999") is None
    assert umls.atoms(sab="MTH", code="NOCODE") is None  # NOCODE is never a known code


def test_the_row_that_names_a_concept() -> None:
    """SPEC 12: the first in file order with ENG, P, PF, Y; else with ENG, P, Y; else the
    first row; whatever its SUPPRESS."""
    pf = row("C1", "A3", "S2", "2", "Third", suppress="O")
    first = row("C1", "A1", "S1", "1", "First", lat="FRE")
    vcw = row("C1", "A2", "S1", "1", "Second", stt="VCW")
    e = build({"MRCONSO": [first, vcw, pf, row("C1", "A4", "S1", "1", "Fourth")]})
    assert uis([e.preferred_atom(cui="C1") or {}]) == ["A3"]
    assert (e.concept("C1") or {})["name"] == "Third"  # (the index's table of names)
    e = build({"MRCONSO": [first, vcw, row("C1", "A5", "S1", "1", "Fifth", stt="VO")]})
    assert uis([e.preferred_atom(cui="C1") or {}]) == ["A2"]
    assert e.search("fifth") == [concept_result("C1", "Second", "S1")]
    e = build({"MRCONSO": [first, row("C1", "A6", "S1", "1", "Sixth", ispref="N")]})
    assert uis([e.preferred_atom(cui="C1") or {}]) == ["A1"]
    assert e.search("sixth") == [concept_result("C1", "First", "S1")]
    assert e.preferred_atom(cui="C2") is None


def test_the_row_that_names_a_code() -> None:
    """SPEC 12: by (SUPPRESS not N, LAT not ENG, TTY not PT, ISPREF not Y, TS not P, STT not
    PF, AUI), false first: a PT names a SNOMED CT code, not its FN."""
    rows = [
        row("C1", "A9", "S", "1", "Obsolete PT", suppress="O"),
        row("C1", "A8", "S", "1", "French PT", lat="FRE"),
        row("C1", "A7", "S", "1", "FN", tty="FN"),
        row("C1", "A6", "S", "1", "PT not preferred", ispref="N"),
        row("C1", "A5", "S", "1", "PT", ts="S"),
        row("C1", "A4", "S", "1", "PT", stt="VO"),
        row("C1", "A3", "S", "1", "PT, second AUI"),
        row("C1", "A2", "S", "1", "PT, first AUI"),
    ]
    for n in range(1, 7):  # the first n rows: each is named by its last
        named = build({"MRCONSO": rows[:n]}).preferred_atom(sab="S", code="1")
        assert (named or {}).get("ui") == rows[n - 1][7]
    assert (build({"MRCONSO": rows}).preferred_atom(sab="S", code="1") or {})["ui"] == "A2"
    assert build({"MRCONSO": rows}).preferred_atom(sab="S", code="NOCODE") is None


def test_the_code_rule_step_by_step() -> None:
    """Each key of the rule decides when the keys before it tie."""
    keys = [
        ("suppress", "O"), ("lat", "FRE"), ("tty", "FN"), ("ispref", "N"), ("ts", "S"),
        ("stt", "VO"),
    ]  # fmt: skip
    for n, (key, value) in enumerate(keys):
        loser = row("C1", "A1", "S", "1", "loser", **{key: value})  # the lower AUI
        winner = row("C1", "A2", "S", "1", "winner")
        side = rel("C1", "A1", "CODE", "RO", "C1", "A2", "CODE", "R1")  # (the index's table)
        e = build({"MRCONSO": [loser, winner], "MRREL": [side]})
        assert (e.preferred_atom(sab="S", code="1") or {})["name"] == "winner", key
        assert (e.cluster("S", "1") or {})["name"] == "winner", n
        assert [r["relatedIdName"] for r in e.relations(cui="C1") or []] == ["winner"], key
    tie = build(
        {"MRCONSO": [row("C1", "A2", "S", "1", "second"), row("C1", "A1", "S", "1", "first")]}
    )
    assert (tie.preferred_atom(sab="S", code="1") or {})["name"] == "first"


# -- clusters and crosswalks ---------------------------------------------------------------------


def test_a_code_as_a_cluster(umls: Engine) -> None:
    """Its links where its lists have an entry (MRHIER, MRREL), all its rows counted."""
    assert umls.cluster(SNOMED, "9990101009") == cluster(
        SNOMED, "9990101009", "Zephyr fever", 7, has="ancestors parents relations"
    )
    assert umls.cluster(SNOMED, "9990191001") == cluster(
        SNOMED, "9990191001", "Meteoric disorder", 2, has="descendants children relations"
    )
    assert umls.cluster("MSH", "D990090") == cluster("MSH", "D990090", "Meteoric Disorders", 1)
    assert umls.cluster(SNOMED, "0") is None
    assert umls.cluster("MTH", "NOCODE") is None


def statements(e: Engine, ask: Callable[[], object]) -> int:
    """How many SQL statements ``ask`` runs on ``e``'s connection."""
    said: list[str] = []
    e.db.set_trace_callback(said.append)
    try:
        ask()
    finally:
        e.db.set_trace_callback(None)
    return len(said)


def test_a_cluster_is_read_with_its_lists_flags_in_one_statement(umls: Engine) -> None:
    """Its rows with each atom's flag of every list, in one statement (not one a list or level)."""
    wind = "descendants ancestors parents children relations"
    assert umls.cluster(SNOMED, "9990192008") == cluster(SNOMED, "9990192008", "Wind fever", 2,
                                                         has=wind)  # fmt: skip
    assert statements(umls, lambda: umls.cluster(SNOMED, "9990192008")) == 1


def test_a_clusters_flags_and_links_without_mrhier_and_mrrel() -> None:
    rows = [
        row("C1", "A1", "S", "1", "Gone", suppress="O"),
        row("C1", "A2", "S", "1", "Hidden", suppress="E"),
        row("C1", "A3", "S", "2", "Gone too", suppress="O"),
        row("C1", "A4", "S", "3", "Hidden", suppress="Y"),
        row("C1", "A5", "S", "3", "Kept", suppress="N"),
        row("C1", "A6", "S", "a/b c", "Quoted"),
    ]
    e = build({"MRCONSO": rows})
    assert e.cluster("S", "1") == cluster("S", "1", "Gone", 2, suppressible=True)  # A1 < A2
    assert e.cluster("S", "2") == cluster("S", "2", "Gone too", 1, obsolete=True)
    assert e.cluster("S", "3") == cluster("S", "3", "Kept", 2)
    quoted = e.cluster("S", "a/b c")
    assert quoted is not None and quoted["atoms"] == f"{CONTENT}/source/S/a%2Fb%20c/atoms"
    assert quoted["concepts"] == (f"{REST}/search/2099AA?string=a%2Fb%20c&sabs=S"
                                  "&searchType=exact&inputType=sourceUi")  # fmt: skip


def test_a_crosswalk(umls: Engine) -> None:
    """Other sources' known codes with a counted atom in the code's concepts, by SAB, code."""
    assert umls.crosswalk(SNOMED, "9990191001") == [
        cluster("MSH", "D990090", "Meteoric Disorders", 1),
        cluster("NCI", "C990090", "Meteoric Disorder", 1),
        cluster("SCTSPA", "9990191001", "Trastorno meteórico", 1),
    ]  # (MTH's NOCODE is no code)
    assert uis(umls.crosswalk(SNOMED, "9990191001", targets=["NCI", "LNC"])) == ["C990090"]
    assert umls.crosswalk(SNOMED, "9990192008") == [cluster("MSH", "D990091", "Wind Fever", 1)]
    assert umls.crosswalk("RXNORM", "9060") == []  # only MTH's NOCODE shares the concept
    assert umls.crosswalk(SNOMED, "0") is None
    assert umls.crosswalk("MTH", "NOCODE") is None


def test_a_crosswalk_counts_rows_on_both_sides() -> None:
    rows = [
        row("C1", "A1", "S", "1", "Asked", suppress="O"),
        row("C1", "A2", "T", "2", "Other"),
        row("C2", "A3", "S", "1", "Asked"),
        row("C2", "A4", "T", "3", "Hidden", suppress="E"),
        row("C2", "A5", "T", "4", "Kept"),
        row("C2", "A6", "U", "", "Empty code"),
        row("C2", "A7", "S", "9", "Same source"),
    ]
    e = build({"MRCONSO": rows})
    assert uis(e.crosswalk("S", "1")) == ["4"]
    assert uis(e.crosswalk("S", "1", rows=counted(obsolete=True))) == ["2", "4"]
    assert uis(e.crosswalk("S", "1", rows=counted(suppressible=True))) == ["3", "4"]
    assert e.crosswalk("T", "3") == []  # known; its one atom does not count


def test_a_crosswalks_clusters_each_read_from_all_their_rows() -> None:
    """Each cluster from all its rows, wherever they are (another concept too): its lists' links
    whichever row shows an entry, its name by the code rule over all of them (a tie: the first
    row in the file), its flags from all; the clusters by SAB, then code, in code-point order."""
    rows = [
        row("C1", "A1", "S", "1", "Asked"),
        row("C1", "A2", "T", "b", "Later", tty="SY"),  # b: its parent A10, by PAUI and PTR
        row("C1", "A4", "T", "a", "First of A4"),
        row("C1", "A6", "T", "c", "Has a child"),
        row("C1", "A7", "T", "e", "Deep"),  # e: an ancestor two levels up only
        row("C1", "A8", "U", "\u00e9", "Accent"),
        row("C1", "A9", "U", "z", "Zed", suppress="E"),
        row("C2", "A9b", "U", "z", "Zed gone", suppress="O"),
        row("C1", "A9c", "U", "z", "Zed kept"),
        row("C1", "A13", "U", "Z", "Capital"),
        row("C9", "A3", "T", "b", "Named"),  # b's row in another concept: its relation
        row("C7", "A4", "T", "a", "Second of A4"),  # (the same AUI and key: the first row)
        row("C5", "A10", "T", "p", "Parent"),
        row("C5", "A11", "T", "d", "Child"),
        row("C5", "A12", "V", "q", "Other source"),
    ]
    mrrel = [rel("C5", "A10", "CODE", "RO", "C9", "A3", "CODE", "R1")]
    mrhier = [hier("A2", "A10", "A10"), hier("A11", "A6", "A6"), hier("A7", "A12", "A10.A12")]
    e = build({"MRCONSO": rows, "MRREL": mrrel, "MRHIER": mrhier})
    assert e.crosswalk("S", "1") == [
        cluster("T", "a", "First of A4", 2),
        cluster("T", "b", "Named", 2, has="ancestors parents relations"),
        cluster("T", "c", "Has a child", 1, has="descendants children"),
        cluster("T", "e", "Deep", 1, has="ancestors"),
        cluster("U", "Z", "Capital", 1),
        cluster("U", "z", "Zed kept", 3),
        {**cluster("U", "%C3%A9", "Accent", 1), "ui": "\u00e9", "rootSource": "U",
         "concepts": f"{REST}/search/2099AA?string=%C3%A9&sabs=U&searchType=exact"
         "&inputType=sourceUi"},
    ]  # fmt: skip
    assert uis(e.crosswalk("S", "1", targets=["U"])) == ["Z", "z", "\u00e9"]
    assert uis(e.crosswalk("S", "1", rows=counted(suppressible=True), targets=["U"])) == [
        "Z", "z", "\u00e9",
    ]  # fmt: skip
    assert e.crosswalk("T", "p") == [cluster("V", "q", "Other source", 1)]  # (a child: no entry)
    assert e.crosswalk("U", "z", targets=["T"]) == [
        cluster("T", "a", "First of A4", 2),
        cluster("T", "b", "Named", 2, has="ancestors parents relations"),
        cluster("T", "c", "Has a child", 1, has="descendants children"),
        cluster("T", "e", "Deep", 1, has="ancestors"),
    ]
    assert e.crosswalk("U", "z", rows=counted(obsolete=True), targets=["V"]) == []


def test_a_clusters_name_each_test_of_the_code_rule_outweighs_all_after_it() -> None:
    """The name's key read as one number: a row failing one test loses to a row failing every
    test after it (even with the lower AUI, first in the file), in a cluster and a crosswalk."""
    keys = [
        ("suppress", "O"), ("lat", "FRE"), ("tty", "FN"), ("ispref", "N"), ("ts", "S"),
        ("stt", "VO"),
    ]  # fmt: skip
    for n, (key, value) in enumerate(keys[:-1]):
        loser = row("C1", "A1", "S", "1", "loser", **{key: value})
        winner = row("C1", "A2", "S", "1", "winner", **{k: v for k, v in keys[n + 1 :]})
        e = build({"MRCONSO": [row("C1", "A0", "Q", "q", "asked"), loser, winner]})
        assert (e.cluster("S", "1") or {})["name"] == "winner", key
        assert [c["name"] for c in e.crosswalk("Q", "q", rows=EVERY_ROW) or []] == ["winner"]
        assert (e.preferred_atom(sab="S", code="1") or {})["name"] == "winner", key


def test_a_one_row_clusters_flags_are_its_rows() -> None:
    """A code of one row: obsolete for O, suppressible for E and Y, neither for any other SUPPRESS
    value (it counts as N), as a cluster and in a crosswalk."""
    flags = {"O": "obsolete", "E": "suppressible", "Y": "suppressible", "N": "", "X": "", "": ""}
    rows = [row("C1", "A0", "Q", "q", "asked")]
    rows += [
        row("C1", f"A{n}", "S", str(n), f"row {n}", suppress=s) for n, s in enumerate(flags, 1)
    ]
    e = build({"MRCONSO": rows})
    expected = [
        cluster("S", str(n), f"row {n}", 1, **({flag: True} if flag else {}))
        for n, flag in enumerate(flags.values(), 1)
    ]
    assert [e.cluster("S", str(n)) for n in range(1, len(flags) + 1)] == expected
    assert e.crosswalk("Q", "q", rows=EVERY_ROW) == expected


def steps(e: Engine, ask: Callable[[], object]) -> int:
    """How many thousand SQLite VM steps ``ask`` takes on ``e``'s connection."""
    count = [0]

    def tick() -> int:
        count[0] += 1
        return 0

    e.db.set_progress_handler(tick, 1000)
    try:
        ask()
    finally:
        e.db.set_progress_handler(None, 0)
    return count[0]


def test_a_crosswalk_reads_each_row_of_the_concept_once() -> None:
    """A code with many rows in a concept with many others: linear, not every pair of them."""
    many = 400
    rows = [row("C1", f"A{n}", "S", "1", f"Asked {n}") for n in range(many)]
    rows += [row("C1", f"B{n}", "T", str(n), f"Other {n}") for n in range(many)]
    e = build({"MRCONSO": rows})
    assert uis(e.crosswalk("S", "1", targets=["U"])) == []
    assert steps(e, lambda: e.crosswalk("S", "1", targets=["U"])) < 50  # (every pair: 1,800)
    assert len(e.crosswalk("S", "1") or []) == many


# -- search ----------------------------------------------------------------------------------------


def test_search_types(umls: Engine) -> None:
    zephyr = concept_result("C9000001", "Zephyr fever")
    wind = concept_result("C9000091", "Wind fever")
    harrow = concept_result("C9000004", "Harrow syndrome")
    velvet = concept_result("C9000003", "Velvet cough")
    assert umls.search("Fever") == [zephyr, wind]
    assert umls.search("fevers") == []
    assert umls.search("FEVERS", search_type="normalizedWords") == [zephyr, wind]
    assert umls.search("fevers zzz", search_type="approximate") == [zephyr, wind]
    assert umls.search("fever zzz") == []
    assert umls.search("fever zzz", partial=True) == [zephyr, wind]
    assert umls.search("gale FEVER", search_type="exact") == [wind]
    assert umls.search("velvet cough", search_type="exact") == [velvet]  # not VELVET  COUGH
    assert umls.search("cough velvets", search_type="normalizedString") == [velvet]
    assert umls.search("cough", search_type="normalizedString") == []
    assert umls.search("harrow syndrome", search_type="normalizedString") == [harrow]  # ſ
    assert umls.search("𝟐") == [harrow]
    assert umls.search("zéphyr", search_type="words", rows=COUNTED) == [zephyr]  # French
    assert umls.search("zephyr") == [zephyr]  # no accent folding
    assert umls.search("WIND F", search_type="rightTruncation") == [wind]
    assert umls.search("ER (DISORDER)", search_type="leftTruncation") == [
        zephyr,
        concept_result("C9000090", "Meteoric disorder"),
    ]  # fever (disorder), disorder (disorder)
    assert umls.search("--", search_type="words") == []  # no word
    with pytest.raises(ValueError, match="no search type 'fuzzy'"):
        umls.search("fever", search_type="fuzzy")


def test_search_order_names_and_flags(umls: Engine) -> None:
    """An atom equal to the query first, then by ui; a concept named by its name row."""
    zephyr = concept_result("C9000001", "Zephyr fever")
    assert umls.search("zephyr fever") == [zephyr]
    assert umls.search("abacus zephyr fever", search_type="exact") == [zephyr]  # MTH's row
    assert umls.search("aardvark fever") == []
    assert umls.search("aardvark fever", rows=counted(obsolete=True)) == [zephyr]
    assert umls.search("calm", rows=counted(suppressible=True)) == [zephyr]
    assert uis(umls.search("fever wind", partial=True)) == ["C9000001", "C9000091"]
    assert uis(umls.search("wind fever", partial=True)) == ["C9000091", "C9000001"]
    assert uis(umls.search("wind fever", partial=True, limit=1)) == ["C9000091"]
    assert uis(umls.search("meteoric", return_id_type="code", limit=2)) == [
        "9990191001", "C990090",
    ]  # fmt: skip


def test_whether_the_rows_are_in_cui_order_is_known_across_batches() -> None:
    """``load`` called once a batch: the rows are in CUI order only when each batch is and each
    batch starts at or after the last CUI of the one before (an empty batch changes nothing)."""
    one, two, three = (row(f"C{n}", f"A{n}", "S", str(n), f"Fever {n}") for n in (1, 2, 3))
    for batches, in_order in (
        ([[one, two], [], [two, three]], True),
        ([[one], [one, one], [three]], True),
        ([[one, three], [two]], False),  # each batch in order, the second goes back
        ([[two, one], [three]], False),
        ([[], [three], [one]], False),
    ):
        db = sqlite3.connect(":memory:")
        engine.create(db, "MRCONSO")
        for batch in batches:  # (each row counted once, in order or not)
            assert engine.load(db, "MRCONSO", batch) == len(batch), batches
        engine.finish(db, "MRCONSO")
        assert Engine(db, ["MRCONSO"], Links("2099AA", REST + "/"))._sorted is in_order, batches
        db.close()


def test_a_cut_search_gives_the_first_results_in_sorted_and_unsorted_files() -> None:
    """With ``limit`` a file in CUI order is read until the first results are found (exact
    ones first); another file whole: the same results."""
    rows = [
        row("C1", "A1", "S", "1", "Fever one"), row("C2", "A2", "S", "2", "Fever two"),
        row("C2", "A3", "T", "3", "FEVER"), row("C3", "A4", "S", "4", "Fever three"),
        row("C4", "A5", "S", "5", "fever", suppress="O"), row("C5", "A6", "S", "6", "Fevers"),
    ]  # fmt: skip
    for order in (rows, rows[::-1]):
        e = build({"MRCONSO": order})
        assert e._sorted is (order is rows)
        assert uis(e.search("fever", limit=1)) == ["C2"]
        assert uis(e.search("fever", limit=2)) == ["C2", "C1"]
        assert uis(e.search("fever", limit=9)) == ["C2", "C1", "C3"]
        assert uis(e.search("fever", limit=2, rows=EVERY_ROW)) == ["C2", "C4"]
        assert uis(e.search("fever", search_type="normalizedWords", limit=3)) == [
            "C2", "C1", "C3",
        ]  # fmt: skip
        assert uis(e.search("FEVER", search_type="exact", limit=1)) == ["C2"]
        assert uis(e.search("fe", search_type="rightTruncation", limit=2)) == ["C1", "C2"]
        assert uis(e.search("S", input_type="sourceUi", limit=2)) == []
        assert uis(e.search("PT", input_type="tty", limit=2)) == ["C1", "C2"]
        assert e.search("fever", limit=0) == []


def test_search_filters(umls: Engine) -> None:
    assert uis(umls.search("fever", sabs=["MSH"])) == ["C9000091"]
    assert uis(umls.search("zéphyr", language="ENG")) == []
    assert uis(umls.search("zéphyr", language="FRE")) == ["C9000001"]
    assert uis(umls.search("fever", semantic_types=["T902"])) == ["C9000001", "C9000091"]
    assert uis(umls.search("disorder", semantic_types=["T906"])) == []
    assert uis(umls.search("moonstone", semantic_types=["B9"])) == ["C9000005"]  # B9.4
    assert uis(umls.search("fever", semantic_types=["B9.1.1"])) == ["C9000001", "C9000091"]
    assert uis(umls.search("fever", semantic_types=["B9.1.2", "B"])) == []
    assert uis(umls.search("zorbatrex", semantic_types=["A9.1", "T999"])) == ["C9000060"]


def test_the_semantic_type_filter_row_by_row() -> None:
    """A concept is kept when one of its MRSTY rows has a TUI asked, a tree number asked, or a
    tree number under one asked (``A1`` takes ``A1.2``, not ``A12``), each row on its own fields
    (a TUI whose rows carry two tree numbers is matched by the row that has it); the filter
    never brings back an atom the search did not find."""
    cuis = ["C1", "C2", "C3", "C4", "C5", "C6"]
    e = build({
        "MRCONSO": [row(c, f"A{n}", "S", str(n), f"fever {n}") for n, c in enumerate(cuis)],
        "MRSTY": [
            sty("C1", "T1", "A1"), sty("C2", "T2", "A1.2"), sty("C3", "T3", "A12"),
            sty("C4", "T4", "A1.2.3"), sty("C4", "T5", "B1"), sty("C5", "T6", "B2"),
            sty("C6", "T6", "A1.9"), sty("C7", "T1", "A1"),
        ],
    })  # fmt: skip
    assert uis(e.search("fever", semantic_types=["T1"])) == ["C1"]
    assert uis(e.search("fever", semantic_types=["A1"])) == ["C1", "C2", "C4", "C6"]
    assert uis(e.search("fever", semantic_types=["A1.2"])) == ["C2", "C4"]
    assert uis(e.search("fever", semantic_types=["A12", "B1"])) == ["C3", "C4"]
    assert uis(e.search("fever", semantic_types=["T6"])) == ["C5", "C6"]
    assert uis(e.search("fever", semantic_types=["B2"])) == ["C5"]  # T6's other row: not C6
    assert uis(e.search("fever", semantic_types=["A1.9", "T5"])) == ["C4", "C6"]
    assert uis(e.search("fever", semantic_types=["A"])) == []
    assert uis(e.search("fever 3", semantic_types=["A1"])) == ["C4"]  # (C4's atom "fever 3")
    assert uis(e.search("fever 2", semantic_types=["A1"])) == []  # (C3's: A12)
    assert uis(e.search("fever", semantic_types=["A1"], limit=2)) == ["C1", "C2"]


def test_the_semantic_type_filter_searches_mrsty_by_index_not_scanning() -> None:
    """Each candidate atom's concept is looked up in MRSTY through an index that fits the
    filter (its CUI and a TUI the types take): no scan of MRSTY, nor of the concept's rows."""
    e = build({"MRCONSO": [row("C1", "A1", "S", "1", "fever")],
               "MRSTY": [sty("C1", "T1", "A1")]})  # fmt: skip
    plans: list[str] = []
    execute = e.db.execute

    def explained(sql: str, params: Any = ()) -> Any:
        if "mrsty" in sql:
            plans.extend(d for *_, d in execute("EXPLAIN QUERY PLAN " + sql, params))
        return execute(sql, params)

    e.db = cast(Any, type("Spy", (), {"execute": staticmethod(explained)}))()
    assert uis(e.search("fever", semantic_types=["A1", "T9"])) == ["C1"]
    on_mrsty = [p for p in plans if p.startswith(("SCAN s", "SEARCH s"))]
    assert on_mrsty and all("(cui=? AND tui=?" in p for p in on_mrsty), plans
    assert not [p for p in plans if "CORRELATED LIST" in p], plans  # (the pairs: found once)


def test_search_return_id_types(umls: Engine) -> None:
    code = f"{CONTENT}/source"
    assert umls.search("meteoric disorder", return_id_type="aui") == [
        found("A9000901", "Meteoric disorder", SNOMED, f"{CONTENT}/AUI/A9000901"),
        found("A9000904", "Meteoric Disorder", "NCI", f"{CONTENT}/AUI/A9000904"),
        found("A9000906", "Meteoric disorder", "MTH", f"{CONTENT}/AUI/A9000906"),
        found("A9000902", "Meteoric disorder (disorder)", SNOMED, f"{CONTENT}/AUI/A9000902"),
    ]  # exact first, then by ui (Disorders is another word)
    for kind in ("code", "sourceUi"):
        assert umls.search("meteoric", return_id_type=kind) == [
            found("9990191001", "Meteoric disorder", SNOMED, f"{code}/{SNOMED}/9990191001"),
            found("C990090", "Meteoric Disorder", "NCI", f"{code}/NCI/C990090"),
            found("D990090", "Meteoric Disorders", "MSH", f"{code}/MSH/D990090"),
        ]  # (MTH's NOCODE gives none)
    assert umls.search("outpatient encounter", return_id_type="code") == []  # NOCODE only


def test_search_of_codes_scui_sdui_and_tty() -> None:
    """Input types other than atom: the query as written, every match first-ranked."""
    rows = [
        row("C2", "A1", "MSH", "D1", "Mesh heading", scui="M1", sdui="D1"),
        row("C1", "A2", "MSH", "D2", "Other heading", scui="D1", sdui="D2", tty="ET"),
        row("C3", "A3", "SRC", "d1", "Lower case"),
        row("C4", "A4", "MTH", "NOCODE", "No code"),
        row("C5", "A5", "SRC", "", "Empty code", scui=""),
    ]
    e = build({"MRCONSO": rows})
    mesh = concept_result("C2", "Mesh heading", "MSH")
    other = concept_result("C1", "Other heading", "MSH")
    assert e.search("D1", input_type="code", search_type="words") == [mesh]
    assert e.search("D1", input_type="sourceConcept") == [other]
    assert e.search("M1", input_type="sourceConcept") == [mesh]
    assert e.search("D1", input_type="sourceDescriptor") == [mesh]
    assert e.search("D1", input_type="sourceUi") == [other, mesh]
    assert e.search("D1", input_type="sourceUi", sabs=["SRC"]) == []
    assert e.search("ET", input_type="tty") == [other]
    assert e.search("NOCODE", input_type="code") == [concept_result("C4", "No code", "MTH")]
    assert e.search("NOCODE", input_type="code", return_id_type="code") == []
    assert e.search("D1", input_type="sourceUi", return_id_type="sourceConcept") == [
        found("D1", "Other heading", "MSH", f"{CONTENT}/source/MSH/D1"),
        found("M1", "Mesh heading", "MSH", f"{CONTENT}/source/MSH/M1"),
    ]
    assert e.search("D1", input_type="code", return_id_type="sourceDescriptor") == [
        found("D1", "Mesh heading", "MSH", f"{CONTENT}/source/MSH/D1"),
    ]  # the SDUI D1 is named by its rows: A1 only
    assert e.search("empty code", return_id_type="sourceUi") == []


def test_search_words_no_fts5_could_find() -> None:
    """A word of characters whose category is newer than Unicode 3.2 is checked on every row
    (SQLite's tokenizer may not know them); ß folds to ss as Python folds it."""
    rows = [row("C1", "A1", "S", "1", "Straße \u0870x"), row("C2", "A2", "S", "2", "ab")]
    e = build({"MRCONSO": rows})
    assert uis(e.search("STRASSE")) == ["C1"]
    assert uis(e.search("\u0870x straße")) == ["C1"]
    assert uis(e.search("\u0870x", partial=True)) == ["C1"]


# -- relations, definitions, semantic types ------------------------------------------------------


def test_relations_of_a_concept(umls: Engine) -> None:
    code = f"{CONTENT}/source/{SNOMED}"
    zephyr = f"{CONTENT}/CUI/C9000001"
    assert umls.relations(cui="C9000001") == [
        {
            "ui": "R90000002", "suppressible": False, "sourceUi": "NONE", "obsolete": False,
            "sourceOriginated": True, "rootSource": SNOMED, "groupId": "0",
            "attributeCount": 0, "classType": "AtomClusterRelation",
            "relatedFromId": f"{code}/9990101009", "relatedFromIdName": "Zephyr fever",
            "relationLabel": "CHD", "additionalRelationLabel": "isa",
            "relatedId": f"{code}/9990192008", "relatedIdName": "Wind fever",
        },
        {
            "ui": "R90000008", "suppressible": False, "sourceUi": "NONE", "obsolete": False,
            "sourceOriginated": False, "rootSource": "MTH", "groupId": "NONE",
            "attributeCount": 0, "classType": "ConceptRelation",
            "relatedFromId": zephyr, "relatedFromIdName": "Zephyr fever",
            "relationLabel": "RN", "additionalRelationLabel": "",
            "relatedId": f"{CONTENT}/CUI/C9000091", "relatedIdName": "Wind fever",
        },
        {
            "ui": "R90000010", "suppressible": False, "sourceUi": "NONE", "obsolete": False,
            "sourceOriginated": True, "rootSource": "NCI", "groupId": "NONE",
            "attributeCount": 0, "classType": "ConceptRelation",
            "relatedFromId": zephyr, "relatedFromIdName": "Zephyr fever",
            "relationLabel": "RO", "additionalRelationLabel": "may_be_treated_by",
            "relatedId": f"{CONTENT}/CUI/C9000060",
            "relatedIdName": "zorbatrex 50 MG Oral Tablet",
        },
    ]  # fmt: skip
    assert uis(umls.relations(cui="C9000001", rows=counted(obsolete=True))) == [
        "R90000002", "R90000008", "R90000010", "R90000011",
    ]  # fmt: skip
    assert uis(umls.relations(cui="C9000001", labels=["RN", "RO"], sabs=["NCI"])) == ["R90000010"]
    assert umls.relations(cui="C9000002", labels=["XX"]) == []
    assert umls.relations(cui="C9999999") is None


def test_relations_of_an_atom_and_of_a_code(umls: Engine) -> None:
    assert uis(umls.relations(aui="A9000601")) == ["R90000013"]
    one = (umls.relations(aui="A9000601") or [{}])[0]
    assert (one["classType"], one["relatedFromId"], one["relatedFromIdName"], one["relatedId"],
            one["relatedIdName"]) == (
        "AtomRelation", f"{CONTENT}/AUI/A9000601", "zorbatrex 50 MG Oral Tablet",
        f"{CONTENT}/AUI/A9000602", "Zorbatrex 50mg tablet",
    )  # fmt: skip
    assert umls.relations(aui="A9000011") == []  # its rows are SCUI rows
    assert uis(umls.relations(sab=SNOMED, code="9990192008")) == ["R90000001", "R90000004"]
    assert uis(umls.relations(sab=SNOMED, code="9990191001")) == ["R90000003", "R90000005"]
    assert umls.relations(sab="MSH", code="D990090") == []
    assert umls.relations(aui="A9999999") is None
    assert umls.relations(sab=SNOMED, code="0") is None


def test_the_sides_of_a_relation() -> None:
    """A concept (CUI, or no AUI), an atom (AUI, or no code), a code (any other STYPE: its
    atom's SAB and CODE); a side MRCONSO lacks has no link and no name."""
    rows = [
        row("C1", "A1", "S", "1", "One"),
        row("C2", "A2", "MTH", "NOCODE", "Two"),
        row("C2", "A3", "S", "22", "Twenty-two", scui="X22", sdui="D22"),
        row("C1", "A10", "S", "1", "Uno", tty="SY"),
    ]
    e = build({"MRCONSO": rows, "MRREL": [
        rel("C2", "A2", "SDUI", "RO", "C1", "", "SCUI", "R1", rela="x", srui="SR1", rg="7"),
        rel("C2", "A3", "SDUI", "RB", "C1", "A1", "CUI", "R2", suppress="E"),
        rel("C9", "A9", "AUI", "RN", "C1", "A1", "AUI", "R3", suppress="O"),
        rel("C9", "", "CUI", "RQ", "C1", "A1", "CODE", "R4"),
        rel("C1", "A10", "SCUI", "SY", "C9", "", "CUI", "R5"),
    ]})  # fmt: skip
    assert e.relations(cui="C9") is None  # MRCONSO lacks C9
    five = build(
        {
            "MRCONSO": [*rows, row("C9", "A90", "S", "9", "Nine")],
            "MRREL": [rel("C1", "A10", "SCUI", "SY", "C9", "", "CUI", "R5")],
        }
    ).relations(cui="C9")
    assert [(r["relatedId"], r["relatedIdName"]) for r in five or []] == [
        (f"{CONTENT}/source/S/1", "One")  # the code's name, not its atom's
    ]
    found = e.relations(cui="C1", rows=EVERY_ROW)
    assert [(r["classType"], r["relatedFromId"], r["relatedFromIdName"], r["relatedId"],
             r["relatedIdName"], r["suppressible"], r["obsolete"], r["sourceUi"], r["groupId"])
            for r in found or []] == [
        ("AtomClusterRelation", f"{CONTENT}/CUI/C1", "One", f"{CONTENT}/AUI/A2", "Two", False,
         False, "SR1", "7"),
        ("AtomClusterRelation", f"{CONTENT}/CUI/C1", "One", f"{CONTENT}/source/S/22",
         "Twenty-two", True, False, "NONE", "NONE"),
        ("AtomRelation", f"{CONTENT}/AUI/A1", "One", "NONE", "NONE", False, True, "NONE",
         "NONE"),
        ("AtomClusterRelation", f"{CONTENT}/source/S/1", "One", "NONE", "NONE", False, False,
         "NONE", "NONE"),
    ]  # fmt: skip
    assert uis(e.relations(sab="S", code="1")) == ["R4"]
    assert uis(e.relations(aui="A1", rows=EVERY_ROW)) == ["R3"]


def test_the_sides_of_a_code_with_many_rows_are_named_once() -> None:
    """A code's name is found once for all its atoms' sides, not once an atom."""
    many = 400
    rows = [row("C1", f"A{n}", "S", "1", f"Asked {n}", tty="SY") for n in range(many)]
    rows.append(row("C2", "B1", "T", "2", "Other"))
    mrrel = [rel("C2", "B1", "CODE", "RO", "C1", f"A{n}", "CODE", f"R{n:03}") for n in range(many)]
    e = build({"MRCONSO": rows, "MRREL": mrrel})
    found = e.relations(sab="S", code="1") or []
    assert {(r["relatedFromIdName"], r["relatedIdName"]) for r in found} == {("Asked 0", "Other")}
    assert steps(e, lambda: e.relations(sab="S", code="1")) < 100


def test_definitions(umls: Engine) -> None:
    msh = {"classType": "Definition", "sourceOriginated": True, "rootSource": "MSH",
           "value": "An invented disorder of the test data, said to follow changes in the "
           "weather."}  # fmt: skip
    nci = {"classType": "Definition", "sourceOriginated": True, "rootSource": "NCI",
           "value": "A made-up condition brought on by invented weather; no such disorder "
           "exists."}  # fmt: skip
    assert umls.definitions("C9000090") == [msh, nci]
    assert umls.definitions("C9000090", sabs=["NCI"]) == [nci]
    withdrawn = {**nci, "value": "An earlier, withdrawn wording of the invented definition."}
    assert umls.definitions("C9000090", rows=counted(obsolete=True)) == [msh, nci, withdrawn]
    assert umls.definitions("C9000002") == []
    assert umls.definitions("C9999999") is None


def test_definitions_by_sab_then_atui_and_of_unknown_concepts() -> None:
    defs = [
        ["C1", "A1", "AT3", "", "B", "b3", "N", ""],
        ["C1", "A1", "AT1", "", "B", "b1", "N", ""],
        ["C1", "A1", "AT2", "", "A", "a2", "Y", ""],
        ["C2", "", "AT4", "", "A", "lost", "N", ""],
    ]
    e = build({
        "MRCONSO": [row("C1", "A1", "S", "1", "One")],
        "MRDEF": defs,
        "MRSTY": [["C2", "T1", "A1", "Lost", "", ""]],
        "MRREL": [rel("C1", "", "CUI", "RO", "C2", "", "CUI", "R1")],
    })  # fmt: skip
    assert [d["value"] for d in e.definitions("C1", rows=EVERY_ROW) or []] == ["a2", "b1", "b3"]
    assert e.definitions("C2") is None  # MRCONSO lacks it, whatever MRDEF holds
    assert e.semantic_types("C2") is None
    assert e.relations(cui="C2") is None


def semantic_type(tui: str, name: str, tree: str, children: int) -> dict[str, Any]:
    return {
        "classType": "SemanticType", "abbreviation": "NONE", "ui": tui, "definition": "NONE",
        "example": "NONE", "nonHuman": "NONE", "usageNote": "NONE", "treeNumber": tree,
        "semanticTypeGroup": "NONE", "childCount": children, "name": name,
    }  # fmt: skip


def test_semantic_types(umls: Engine) -> None:
    disorder = {"name": "Invented Disorder", "uri": f"{SEMNET}/TUI/T901"}
    weather = {"name": "Invented Weather Finding", "uri": f"{SEMNET}/TUI/T902"}
    assert umls.semantic_types("C9000091") == [disorder, weather]
    assert umls.semantic_types("C9000091", details=True) == [
        {**disorder, **semantic_type("T901", "Invented Disorder", "B9.1", 1)},
        {**weather, **semantic_type("T902", "Invented Weather Finding", "B9.1.1", 0)},
    ]
    assert umls.semantic_types("C9000092") == []
    assert umls.semantic_types("C9999999") is None
    assert umls.semantic_type("T903") == semantic_type("T903", "Invented Drug", "A9.1", 0)
    assert umls.semantic_type("T999") is None


def test_a_semantic_types_tree_number_and_children() -> None:
    """Name and STN from the TUI's first row; children: distinct TUIs one segment below."""
    sty = [["C1", "T1", "B1", "Top", "", ""], ["C2", "T1", "B1.9", "Moved", "", ""],
           ["C1", "T2", "B1.1", "Child", "", ""], ["C3", "T2", "B1.1", "Child", "", ""],
           ["C1", "T3", "B1.1.1", "Grandchild", "", ""], ["C1", "T4", "B10.1", "Other", "", ""],
           ["C1", "T5", "", "No tree", "", ""],
           ["C1", "T6", "B1.2", "Second child", "", ""]]  # fmt: skip
    e = build({"MRCONSO": [row("C1", "A1", "S", "1", "One")], "MRSTY": sty})
    assert e.semantic_type("T1") == semantic_type("T1", "Top", "B1", 3)  # T1 (B1.9), T2, T6
    assert e.semantic_type("T5") == semantic_type("T5", "No tree", "NONE", 0)
    assert [t["treeNumber"] for t in e.semantic_types("C1", details=True) or []] == [
        "B1", "B1.1", "B1.1.1", "B10.1", "NONE", "B1.2",
    ]  # fmt: skip


# -- hierarchies -----------------------------------------------------------------------------------


def test_hierarchy_of_a_code(umls: Engine) -> None:
    zephyr = cluster(SNOMED, "9990101009", "Zephyr fever", 7, has="ancestors parents relations")
    wind = cluster(SNOMED, "9990192008", "Wind fever", 2,
                   has="descendants ancestors parents children relations")  # fmt: skip
    meteoric = cluster(SNOMED, "9990191001", "Meteoric disorder", 2,
                       has="descendants children relations")  # fmt: skip
    glimmer = cluster(SNOMED, "9990102002", "Glimmer pox", 3, has="ancestors parents relations")
    assert umls.hierarchy("parents", sab=SNOMED, code="9990101009") == [wind]
    assert umls.hierarchy("ancestors", sab=SNOMED, code="9990101009") == [wind, meteoric]
    assert umls.hierarchy("children", sab=SNOMED, code="9990191001") == [glimmer, wind]
    assert umls.hierarchy("descendants", sab=SNOMED, code="9990191001") == [
        glimmer, wind, zephyr,
    ]  # fmt: skip
    assert umls.hierarchy("children", sab=SNOMED, code="9990101009") == []
    assert umls.hierarchy("parents", sab=SNOMED, code="0") is None
    assert uis(umls.hierarchy("children", sab="HL7V3.0", code="_InventedEncounterCode")) == [
        "AMB"
    ]  # a cluster too


def test_hierarchy_distances_and_what_is_ignored() -> None:
    """An ancestor at its smallest distance over the code's rows; entries of another SAB, with
    no code, of the code itself or that MRCONSO lacks are ignored; descendants the inverse."""
    rows = [
        row("C1", "A1", "S", "top", "Top"), row("C2", "A2", "S", "mid", "Mid"),
        row("C3", "A3", "S", "low", "Low"), row("C3", "A4", "S", "low", "Low too"),
        row("C5", "A5", "T", "t", "Other source"), row("C6", "A6", "S", "NOCODE", "No code"),
        row("C7", "A7", "S", "alt", "Alt"), row("C8", "A8", "S", "solo", "Solo"),
    ]  # fmt: skip
    mrhier = [
        hier("A2", "A1", "A1"),
        hier("A3", "A2", "A9.A1.A5.A6.A4.A2"),  # A9: MRCONSO lacks it; A4: the code itself
        hier("A4", "A7", "A1.A7"),  # top at 2 here, 5 above
        hier("A7", "A1", ""),  # an empty PTR: [PAUI]
        hier("A6", "A1", "A1"),
        hier("A8", "A6", "A1.A6"),  # its parent has no code: its one ancestor is top
    ]
    e = build({"MRCONSO": rows, "MRHIER": mrhier})
    assert uis(e.hierarchy("parents", sab="S", code="low")) == ["alt", "mid"]
    assert uis(e.hierarchy("ancestors", sab="S", code="low")) == ["alt", "mid", "top"]
    assert uis(e.hierarchy("children", sab="S", code="top")) == ["alt", "mid"]
    assert uis(e.hierarchy("descendants", sab="S", code="top")) == ["alt", "mid", "low", "solo"]
    assert e.hierarchy("parents", sab="S", code="solo") == []
    assert uis(e.hierarchy("ancestors", sab="S", code="solo")) == ["top"]
    solo = e.cluster("S", "solo") or {}
    assert (solo["parents"], solo["ancestors"]) == ("NONE", f"{CONTENT}/source/S/solo/ancestors")
    assert uis(e.hierarchy("descendants", sab="S", code="alt")) == ["low"]
    assert e.hierarchy("ancestors", sab="T", code="t") == []
    clusters = {c["ui"]: c for c in e.hierarchy("descendants", sab="S", code="top") or []}
    assert [k for k in ("parents", "children", "ancestors", "descendants")
            if clusters["low"][k] != "NONE"] == ["parents", "ancestors"]  # fmt: skip


def test_a_descendants_link_below_children_that_are_no_entry() -> None:
    """The link is there exactly when the list has an entry, however deep the first one is."""
    rows = [
        row("C1", "A1", SNOMED, "100", "Top"), row("C2", "A2", "MSH", "D2", "Other source"),
        row("C3", "A3", SNOMED, "300", "Deep"), row("C4", "A4", SNOMED, "400", "Alone"),
        row("C5", "A5", "MSH", "D5", "Other leaf"),
    ]  # fmt: skip
    mrhier = [
        hier("A2", "A1", "A1", "MSH"), hier("A3", "A2", "A1.A2"), hier("A5", "A4", "A4", "MSH")
    ]  # fmt: skip
    e = build({"MRCONSO": rows, "MRHIER": mrhier})
    assert uis(e.hierarchy("descendants", sab=SNOMED, code="100")) == ["300"]
    assert e.hierarchy("descendants", sab=SNOMED, code="400") == []
    top, alone = e.cluster(SNOMED, "100") or {}, e.cluster(SNOMED, "400") or {}
    assert (top["descendants"], top["children"]) == (
        f"{CONTENT}/source/{SNOMED}/100/descendants", "NONE",
    )  # fmt: skip
    assert (alone["descendants"], alone["children"]) == ("NONE", "NONE")


def test_a_clusters_hierarchy_links_follow_ptr_and_paui_each() -> None:
    """Parents by PAUI, ancestors by PTR (an empty PTR: the PAUI), children and descendants the
    inverse, whichever of its atoms' rows shows the entry."""
    rows = [
        row("C1", "A1", "S", "1", "One"), row("C2", "A2", "S", "2", "Two"),
        row("C3", "A3", "S", "3", "Three"), row("C4", "A4", "S", "4", "Four"),
        row("C4", "A5", "S", "4", "Four too"), row("C6", "A6", "T", "6", "Other source"),
    ]  # fmt: skip
    mrhier = [
        hier("A2", "A1", "A6"),  # a parent that its PTR leaves out: no ancestor from it
        hier("A3", "", "A1"),  # no PAUI: an ancestor, no parent
        hier("A5", "A6", "A6.A1.A6"),  # A4's code: an ancestor deeper in its other atom's PTR
    ]
    e = build({"MRCONSO": rows, "MRHIER": mrhier})
    links = {c: e.cluster("S", c) or {} for c in "1234"}
    assert {c: [k for k in ("parents", "ancestors", "children", "descendants")
                if found[k] != "NONE"] for c, found in links.items()} == {
        "1": ["children"], "2": ["parents"], "3": ["ancestors"], "4": ["ancestors"],
    }  # fmt: skip


def test_a_ptr_that_is_its_paui_with_a_dot_gives_the_ancestors_of_its_segments() -> None:
    """A PTR is split at its dots even when it is the PAUI as written (an AUI with a dot): the
    cluster's ancestors link is there exactly when ``hierarchy --ancestors`` lists one."""
    rows = [row("C1", "A1", "S", "1", "One"), row("C3", "A3", "S", "3", "Three")]
    e = build({"MRCONSO": rows, "MRHIER": [hier("A3", "A1.2", "A1.2")]})
    assert uis(e.hierarchy("ancestors", sab="S", code="3")) == ["1"]  # A1 and 2: A1 is code 1
    assert (e.cluster("S", "3") or {})["ancestors"] == f"{CONTENT}/source/S/3/ancestors"


def test_hierarchy_of_an_atom(umls: Engine) -> None:
    wind = atom("A9000911", "C9000091", SNOMED, "9990192008", "Wind fever")
    meteoric = atom("A9000901", "C9000090", SNOMED, "9990191001", "Meteoric disorder")
    assert umls.hierarchy("parents", aui="A9000011") == [wind]
    assert umls.hierarchy("ancestors", aui="A9000011") == [wind, meteoric]
    assert uis(umls.hierarchy("descendants", aui="A9000901")) == [
        "A9000021", "A9000911", "A9000011",
    ]  # fmt: skip
    assert umls.hierarchy("children", aui="A9000011") == []
    assert umls.hierarchy("children", aui="A9999999") is None


# -- sources and needs ---------------------------------------------------------------------------


def test_sources_from_mrsab(umls: Engine) -> None:
    """The current version of each RSAB, by RSAB; an empty field is NONE, SRL a number."""
    found = umls.sources()
    assert [s["abbreviation"] for s in found] == [
        "HL7V3.0", "LNC", "LNC-DE-DE", "MDR", "MSH", "MSHGER", "MTH", "NCI", "RXNORM", "SCTSPA",
        "SNOMEDCT_US",
    ]  # fmt: skip
    assert found[-1] == {
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
    sab = dict.fromkeys(engine.COLUMNS["MRSAB"], "")
    first = {**sab, "RSAB": "A", "SON": "First", "SRL": "x1", "CURVER": "Y", "CXTY": "FULL"}
    second = {**first, "SON": "Second", "SRL": "2"}
    older = {**first, "RSAB": "B", "CURVER": "N"}
    e = build({"MRCONSO": [], "MRSAB": [list(r.values()) for r in (first, second, older)]})
    assert [(s["preferredName"], s["restrictionLevel"], s["contextType"], s["family"],
             s["language"]) for s in e.sources()] == [
        ("First", None, "FULL", "NONE",
         {"classType": "Language", "abbreviation": "NONE", "expandedForm": "NONE"}),
    ]  # fmt: skip
    levels = {"C": "9" * 18, "D": "9" * 19, "E": "9" * 5000, "F": "\u0663"}  # (٣: no ASCII)
    long = [{**first, "RSAB": k, "SRL": v} for k, v in levels.items()]
    e = build({"MRCONSO": [], "MRSAB": [list(r.values()) for r in long]})
    assert [s["restrictionLevel"] for s in e.sources()] == [10**18 - 1, None, None, None]


def test_sources_without_mrsab() -> None:
    """One per SAB of MRCONSO: its LAT the most rows have (ties: the first seen), its highest
    SRL (digits only), the SAB for its names."""
    rows = [
        row("C1", "A1", "B", "1", "x", lat="GER", srl="3"),
        row("C1", "A2", "B", "1", "x", lat="ENG", srl="x9"),
        row("C1", "A3", "A", "1", "x", lat="SPA", srl="0"),
        row("C1", "A4", "A", "1", "x", lat="ENG", srl="4"),
        row("C1", "A5", "A", "1", "x", lat="ENG", srl=""),
        row("C1", "A6", "C", "1", "x", lat="XYZ", srl=""),
        row("C1", "A7", "D", "1", "x", srl="9" * 5000),  # (a number no longer than 18 digits)
        row("C1", "A8", "D", "1", "x", srl="9" * 19),
        row("C1", "A9", "E", "1", "x", srl="9" * 18),
    ]
    found = build({"MRCONSO": rows}).sources()
    assert [(s["abbreviation"], s["expandedForm"], s["preferredName"], s["family"],
             s["shortName"], s["language"]["abbreviation"], s["language"]["expandedForm"],
             s["restrictionLevel"], s["contextType"]) for s in found] == [
        ("A", "A", "A", "A", "A", "ENG", "English", 4, "NONE"),
        ("B", "B", "B", "B", "B", "GER", "German", 3, "NONE"),
        ("C", "C", "C", "C", "C", "XYZ", "NONE", None, "NONE"),
        ("D", "D", "D", "D", "D", "ENG", "English", None, "NONE"),
        ("E", "E", "E", "E", "E", "ENG", "English", 10**18 - 1, "NONE"),
    ]  # fmt: skip


def test_needs() -> None:
    assert needs("search") == (("MRCONSO",), ())
    assert needs("search", semantic_types=True) == (("MRCONSO", "MRSTY"), ())
    assert needs("cuis") == (("MRCONSO",), ())
    assert needs("crosswalk") == (("MRCONSO",), ("MRHIER", "MRREL"))
    assert needs("source-concept") == (("MRCONSO",), ("MRHIER", "MRREL"))
    assert needs("hierarchy") == (("MRCONSO", "MRHIER"), ("MRREL",))
    assert needs("definitions") == (("MRCONSO", "MRDEF"), ())
    assert needs("relations") == (("MRCONSO", "MRREL"), ())
    assert needs("semantic-types") == (("MRCONSO", "MRSTY"), ())
    assert needs("concept") == (("MRCONSO",), ("MRSTY", "MRDEF", "MRREL"))
    assert needs("sources") == (("MRCONSO",), ("MRSAB",))
    for command in ("atoms", "source", "atom"):
        assert needs(command) == (("MRCONSO",), ())


def test_a_question_whose_statement_a_signal_stopped_raises_the_signals_exception() -> None:
    """``ask``: SQLite's progress handler keeps the signal's exception (``index._ticks``) and
    stops the statement; the question raises that exception, not SQLite's ``interrupted``."""
    stopped: list[BaseException] = []
    db = sqlite3.connect(":memory:")
    engine.create(db, "MRCONSO")
    engine.load(db, "MRCONSO", [row("C1", "A1", "S", "1", "Fever")])
    engine.finish(db, "MRCONSO")
    found = Engine(db, ["MRCONSO"], Links("2099AA", REST + "/"), stopped=stopped)
    unstopped = Engine(db, ["MRCONSO"], Links("2099AA", REST + "/"))
    assert found.ask(lambda e: e.atom("A1"))["ui"] == "A1"
    stopped.append(KeyboardInterrupt())
    db.set_progress_handler(lambda: 1, 1)  # (as ``_ticks`` does once it caught one)
    with pytest.raises(KeyboardInterrupt):
        found.ask(lambda e: e.atom("A1"))
    with pytest.raises(sqlite3.OperationalError, match="interrupted"):  # (no signal: as it came)
        unstopped.ask(lambda e: e.atom("A1"))
    db.close()


def test_a_concepts_semantic_types_are_each_tui_once_by_tui_named_by_its_first_row() -> None:
    mrsty = [
        ["C1", "T2", "A2", "Second", "AT1", ""],
        ["C1", "T1", "", "One", "AT2", ""],
        ["C1", "T1", "", "Other", "AT3", ""],
    ]
    e = build({"MRCONSO": [row("C1", "A1", "S", "1", "Fever")], "MRSTY": mrsty})
    assert [t["name"] for t in cast(dict[str, Any], e.concept("C1"))["semanticTypes"]] == [
        "One",
        "Second",
    ]
    assert e.semantic_types("C1") == [
        {"name": "One", "uri": f"{SEMNET}/TUI/T1"},
        {"name": "Second", "uri": f"{SEMNET}/TUI/T2"},
    ]


def test_sources_without_mrsab_take_the_highest_srl_of_every_lat_of_the_sab() -> None:
    """SPEC 12: restrictionLevel is the SAB's highest SRL, whichever LAT its row has, not the
    highest of the LAT chosen for ``language`` (here ENG, by most rows; the 7 is a SPA row's)."""
    rows = [
        row("C1", "A1", "A", "1", "x", lat="SPA", srl="7"),
        row("C1", "A2", "A", "1", "x", lat="ENG", srl="1"),
        row("C1", "A3", "A", "1", "x", lat="ENG", srl="2"),
    ]
    (found,) = build({"MRCONSO": rows}).sources()
    assert (found["language"]["abbreviation"], found["restrictionLevel"]) == ("ENG", 7)
