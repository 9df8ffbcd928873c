"""The META files the fake reads (``testing.rrf``, ``FakeUtsData.from_meta``) and the invented
ones in ``fixtures/umls``: their layouts, and that they hold together."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import FIXTURES, MINI
from tempmedbench_synonyms.mrconso.rows import COLUMN
from tempmedbench_synonyms.testing import FakeUtsData, mrconso_row
from tempmedbench_synonyms.testing.rrf import Mrdef, Mrhier, Mrrel, Mrsab, Mrsty, parse_rows

META = FIXTURES / "umls"


def test_from_meta_reads_whichever_files_the_folder_holds(tmp_path: Path) -> None:
    (tmp_path / "MRSTY.RRF").write_text("C9000001|T901|B9.1|Invented Disorder|AT1||\n", "utf-8")
    (tmp_path / "MRCONSO.TXT").write_text("not read\n", "utf-8")
    data = FakeUtsData.from_meta(tmp_path, release="2098AB")
    assert (data.rows, data.release, data.sources) == ([], "2098AB", [])
    assert data.types_of == {"C9000001": [Mrsty("C9000001", "T901", "B9.1", "Invented Disorder",
                                                 "AT1", "")]}  # fmt: skip
    assert (data.definitions_of, data.relations_of_cui, data.hierarchy_of) == ({}, {}, {})


def test_a_folder_with_none_of_the_files_is_refused(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError) as info:
        FakeUtsData.from_meta(tmp_path)
    assert str(info.value) == (
        f"{tmp_path} holds none of MRCONSO.RRF, MRDEF.RRF, MRREL.RRF, MRSTY.RRF, MRHIER.RRF, "
        "MRSAB.RRF"
    )


def test_a_row_of_the_wrong_width_names_the_file_line_and_layout(tmp_path: Path) -> None:
    (tmp_path / "MRDEF.RRF").write_text(
        "C9000001|A1|AT1||MSH|A definition.|N||\n\nC9000001|A1|AT2||MSH|no CVF|N|\n", "utf-8"
    )
    with pytest.raises(ValueError) as info:
        FakeUtsData.from_meta(tmp_path)
    assert str(info.value) == (
        f"{tmp_path / 'MRDEF.RRF'}, line 3: a MRDEF.RRF row has 8 fields, each followed by '|' "
        "(CUI|AUI|ATUI|SATUI|SAB|DEF|SUPPRESS|CVF|); this line has 7"
    )
    rows = list(parse_rows(["C9000001|T901|B9.1|X|AT1||\r\n"], Mrsty))
    assert rows == [Mrsty("C9000001", "T901", "B9.1", "X", "AT1", "")]  # a CR is tolerated
    with pytest.raises(ValueError, match=r"this line has 6 and no trailing \|$"):
        list(parse_rows(["C9000001|T901|B9.1|X|AT1|no trailing bar"], Mrsty))


def test_the_layouts_are_the_reference_manuals() -> None:
    assert [len(t._fields) for t in (Mrdef, Mrrel, Mrsty, Mrhier, Mrsab)] == [8, 16, 6, 9, 25]
    assert Mrrel._fields[:8] == ("CUI1", "AUI1", "STYPE1", "REL", "CUI2", "AUI2", "STYPE2",
                                 "RELA")  # fmt: skip
    assert Mrhier._fields[:7] == ("CUI", "AUI", "CXN", "PAUI", "SAB", "RELA", "PTR")


def test_the_invented_meta_files_hold_together() -> None:
    data = FakeUtsData.from_meta(META)
    atoms = data.by_aui
    # every AUI the other files name is an atom of MRCONSO, of the CUI they give it
    named = [(d.CUI, d.AUI) for ds in data.definitions_of.values() for d in ds]
    rels = [r for rs in data.relations_of_cui.values() for r in rs]
    named += [(r.CUI1, r.AUI1) for r in rels if r.AUI1] + [(r.CUI2, r.AUI2) for r in rels if r.AUI2]
    hier = [h for hs in data.hierarchy_of.values() for h in hs]
    named += [(h.CUI, h.AUI) for h in hier]
    assert [(cui, aui) for cui, aui in named if aui not in atoms or atoms[aui].cui != cui] == []
    # ...every PTR and PAUI too, of the same source as the atom
    for h in hier:
        path = [a for a in h.PTR.split(".") if a]
        assert path[-1:] == ([h.PAUI] if h.PAUI else [])
        assert {atoms[a].sab for a in path} <= {h.SAB} == {atoms[h.AUI].sab}
    assert {r.CUI1 for r in rels} | {r.CUI2 for r in rels} | set(data.types_of) <= set(data.by_cui)
    # each relation is written both ways, as MRREL does (RO both ways, PAR/CHD, RB/RN)
    inverse = {"PAR": "CHD", "CHD": "PAR", "RB": "RN", "RN": "RB", "RO": "RO"}
    current = [r for r in rels if r.SUPPRESS == "N"]
    assert sorted((r.CUI1, r.AUI1, r.REL, r.CUI2, r.AUI2) for r in current) == sorted(
        (r.CUI2, r.AUI2, inverse[r.REL], r.CUI1, r.AUI1) for r in current
    )
    # one current MRSAB row for every source of MRCONSO, and none else
    assert sorted(s.RSAB for s in data.sources) == sorted({r.sab for r in data.rows})


def test_the_invented_mrconso_is_sorted_and_the_mini_table_names_no_client_concept() -> None:
    lines = (META / "MRCONSO.RRF").read_text(encoding="utf-8").splitlines()
    cuis = [line.split("|")[COLUMN["CUI"]] for line in lines]
    assert cuis == sorted(cuis)
    table = json.loads((MINI / "synonyms/synonym_table_kept.json").read_text(encoding="utf-8"))
    named = {e["cui"] for e in table["concepts"].values()}
    client = {"C9000090", "C9000091", "C9000092"}
    assert client <= set(cuis) and not client & named
    # the mini release's concepts gained no atom (its frozen hashes cannot move)
    before = [line for line in lines if line.split("|")[0] in named]
    assert len(before) == 34


def test_an_mrconso_row_line_of_the_helper_reads_back() -> None:
    line = mrconso_row("C9000001", "A90000001", "MSH", "MH", "D1", "Invented fever")
    [row] = FakeUtsData.from_lines([line]).rows
    assert (row.cui, row.aui, row.sab, row.tty, row.code, row.name, row.lat, row.suppress) == (
        "C9000001", "A90000001", "MSH", "MH", "D1", "Invented fever", "ENG", "N",
    )  # fmt: skip
    assert (row.scui, row.sdui, row.obsolete, row.suppressible) == ("D1", "", False, False)
    with pytest.raises(ValueError, match="an MRCONSO row has 18 fields, not 3"):
        type(row).from_fields(["a", "b", "c"])
