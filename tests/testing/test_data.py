"""The fake's data (``testing.data``): invented rows in the engine, read from a META folder's
layout; and the invented META files of ``fixtures/umls`` hold together."""

from __future__ import annotations

import ast
import json
import threading
from pathlib import Path

import pytest

import tempmedbench_synonyms.testing as testing
from helpers import FIXTURES, MINI
from tempmedbench_synonyms.errors import BadInputError
from tempmedbench_synonyms.mrconso.engine import COLUMNS
from tempmedbench_synonyms.mrconso.index import read_rows
from tempmedbench_synonyms.mrconso.rows import COLUMN
from tempmedbench_synonyms.mrconso.shapes import Links
from tempmedbench_synonyms.testing import FakeUtsData, mrconso_row

TESTING = Path(testing.__file__).parent
META = FIXTURES / "umls"
LINKS = Links("2099AA")


def _testing_imports(name: str) -> set[str]:
    """The modules of ``testing`` that ``testing/{name}.py`` imports, types-only ones too."""
    found: set[str] = set()
    for node in ast.walk(ast.parse((TESTING / f"{name}.py").read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith("tempmedbench_synonyms.testing."):
                found.add(node.module.rsplit(".", 1)[1])
            elif node.module == "tempmedbench_synonyms.testing":
                found.update(alias.name for alias in node.names)
    return found


def test_fake_routes_data_run_one_way() -> None:
    """No cycle between the fake and its routes: the data sits under both."""
    assert {"routes", "data"} <= _testing_imports("fake")
    assert "data" in _testing_imports("routes")
    assert "fake" not in _testing_imports("routes")
    assert not {"fake", "routes"} & _testing_imports("data")


def test_the_public_names_stay() -> None:
    """``FakeRow`` and ``FakeUtsData`` live in ``testing.data``, imported from ``testing``."""
    assert testing.FakeRow.__module__ == "tempmedbench_synonyms.testing.data"
    assert testing.FakeUtsData.__module__ == "tempmedbench_synonyms.testing.data"
    assert "FakeRow" in testing.__all__ and "FakeUtsData" in testing.__all__


def test_from_meta_reads_whichever_files_the_folder_holds(tmp_path: Path) -> None:
    (tmp_path / "MRSTY.RRF").write_text("C9000001|T901|B9.1|Invented Disorder|AT1||\n", "utf-8")
    (tmp_path / "MRCONSO.TXT").write_text("not read\n", "utf-8")
    data = FakeUtsData.from_meta(tmp_path, release="2098AB")
    assert (data.rows, data.release, data.served) == ([], "2098AB", {"2098AB"})
    # MRSTY's rows are in (no invented T999), and no MRSAB: the sources of no MRCONSO row
    assert data.ask(LINKS, lambda e: e.semantic_type("T901"))["name"] == "Invented Disorder"
    assert data.ask(LINKS, lambda e: e.semantic_type("T999")) is None
    assert data.ask(LINKS, lambda e: e.sources()) == []


def test_from_meta_reads_each_file_in_any_form_nlm_ships(tmp_path: Path) -> None:
    """As the local index does (SPEC 7): ``NAME.RRF.gz`` and the parts ``NAME.RRF.aa.gz``, ...
    are read like ``NAME.RRF``: the same answers as from the plain folder."""
    import gzip

    plain = FakeUtsData.from_meta(META, release="2099AA")
    for name in ("MRCONSO", "MRDEF", "MRREL", "MRSTY", "MRHIER", "MRSAB"):
        data = (META / f"{name}.RRF").read_bytes()
        if name == "MRCONSO":  # split in two parts at a line's end
            cut = data.index(b"\n", len(data) // 2) + 1
            (tmp_path / "MRCONSO.RRF.aa.gz").write_bytes(gzip.compress(data[:cut]))
            (tmp_path / "MRCONSO.RRF.ab.gz").write_bytes(gzip.compress(data[cut:]))
        else:
            (tmp_path / f"{name}.RRF.gz").write_bytes(gzip.compress(data))
    packed = FakeUtsData.from_meta(tmp_path, release="2099AA")
    assert packed.rows == plain.rows
    assert len(packed.rows) == (META / "MRCONSO.RRF").read_bytes().count(b"\n")
    for question in (
        lambda e: e.concept("C9000001"),
        lambda e: e.definitions("C9000001"),
        lambda e: e.relations(cui="C9000001"),
        lambda e: e.semantic_types("C9000001"),
        lambda e: e.sources(),
    ):
        assert packed.ask(LINKS, question) == plain.ask(LINKS, question)


def test_one_question_at_a_time() -> None:
    """The server answers on several threads, and a sqlite3 connection is not to be used by two
    at once: a second question waits until the first is answered."""
    data = FakeUtsData.from_lines([mrconso_row("C9000001", "A90000001", "MSH", "MH", "D1", "x")])
    second: list[object] = []
    other = threading.Thread(target=lambda: second.append(data.ask(LINKS, lambda e: "second")))

    def first(e: object) -> bool:
        other.start()
        other.join(0.05)
        return other.is_alive()  # still waiting for this question to end

    assert data.ask(LINKS, first) is True
    other.join(5)
    assert second == ["second"]
    # and many at once get each their own answer
    found: list[object] = []
    expected = data.ask(LINKS, lambda e: e.concept("C9000001"))

    def ask() -> None:
        found.extend(data.ask(LINKS, lambda e: e.concept("C9000001")) for _ in range(20))

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert found == [expected] * 80


def test_a_folder_with_none_of_the_files_is_refused(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError) as info:
        FakeUtsData.from_meta(tmp_path)
    assert str(info.value) == (
        f"{tmp_path} holds none of MRCONSO.RRF, MRDEF.RRF, MRREL.RRF, MRSTY.RRF, MRHIER.RRF, "
        "MRSAB.RRF"
    )


def test_the_files_are_read_as_the_local_index_reads_them(tmp_path: Path) -> None:
    """One reader (the index's): a wrong width is bad input naming the file and the line, as a
    blank line is (NLM's files have none); a CR is tolerated."""
    (tmp_path / "MRDEF.RRF").write_text(
        "C9000001|A1|AT1||MSH|A definition.|N||\nC9000001|A1|AT2||MSH|no CVF|N|\n", "utf-8"
    )
    with pytest.raises(BadInputError) as info:
        FakeUtsData.from_meta(tmp_path)
    assert str(info.value) == (
        f"{tmp_path / 'MRDEF.RRF'}, line 2: an MRDEF.RRF row has 8 fields, each followed by '|'; "
        "this line has 7"
    )
    (tmp_path / "MRDEF.RRF").write_text("C9000001|A1|AT1||MSH|A definition.|N||\n\n", "utf-8")
    with pytest.raises(BadInputError, match=r"line 2: .* this line has 0$"):
        FakeUtsData.from_meta(tmp_path)
    (tmp_path / "MRDEF.RRF").unlink()
    (tmp_path / "MRSTY.RRF").write_text("C9000001|T901|B9.1|X|AT1||\r\n", "utf-8")
    data = FakeUtsData.from_meta(tmp_path)
    assert data.ask(LINKS, lambda e: e.semantic_type("T901"))["name"] == "X"


def test_the_files_are_streamed_never_all_read_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``read_rows`` hands on each batch as it is read (a user's META may be large): the rows
    before a bad line come out before the bad line is read."""
    from tempmedbench_synonyms.mrconso import forms, index

    monkeypatch.setattr(forms, "READ_SIZE", 64)  # a block a row or so
    monkeypatch.setattr(index, "BATCH_ROWS", 1)
    good = "C9000001|A1|AT1||MSH|A definition.|N||\n"
    (tmp_path / "MRDEF.RRF").write_text(good * 4 + "bad\n", "utf-8")
    rows = read_rows("MRDEF", tmp_path / "MRDEF.RRF")
    assert next(rows) == ["C9000001", "A1", "AT1", "", "MSH", "A definition.", "N", ""]
    with pytest.raises(BadInputError, match=r"MRDEF.RRF, line 5: .* this line has 1 and no"):
        list(rows)


def _rows(file: str) -> list[dict[str, str]]:
    """The rows of ``fixtures/umls``'s ``file``, each by its columns' names."""
    rows = read_rows(file, META / f"{file}.RRF")
    return [dict(zip(COLUMNS[file], r, strict=True)) for r in rows]


def test_the_invented_meta_files_hold_together() -> None:
    atoms = {r["AUI"]: r for r in _rows("MRCONSO")}
    defs, rels, hier, stys = _rows("MRDEF"), _rows("MRREL"), _rows("MRHIER"), _rows("MRSTY")
    # every AUI the other files name is an atom of MRCONSO, of the CUI they give it
    named = [(d["CUI"], d["AUI"]) for d in defs]
    named += [(r["CUI1"], r["AUI1"]) for r in rels if r["AUI1"]]
    named += [(r["CUI2"], r["AUI2"]) for r in rels if r["AUI2"]]
    named += [(h["CUI"], h["AUI"]) for h in hier]
    assert [(c, a) for c, a in named if a not in atoms or atoms[a]["CUI"] != c] == []
    # ...every PTR and PAUI too, of the same source as the atom
    for h in hier:
        path = [a for a in h["PTR"].split(".") if a]
        assert path[-1:] == ([h["PAUI"]] if h["PAUI"] else [])
        assert {atoms[a]["SAB"] for a in path} <= {h["SAB"]} == {atoms[h["AUI"]]["SAB"]}
    cuis = {a["CUI"] for a in atoms.values()}
    assert {r["CUI1"] for r in rels} | {r["CUI2"] for r in rels} | {s["CUI"] for s in stys} <= cuis
    # each relation is written both ways, as MRREL does (RO both ways, PAR/CHD, RB/RN)
    inverse = {"PAR": "CHD", "CHD": "PAR", "RB": "RN", "RN": "RB", "RO": "RO"}
    current = [r for r in rels if r["SUPPRESS"] == "N"]
    assert sorted((r["CUI1"], r["AUI1"], r["REL"], r["CUI2"], r["AUI2"]) for r in current) == (
        sorted((r["CUI2"], r["AUI2"], inverse[r["REL"]], r["CUI1"], r["AUI1"]) for r in current)
    )
    # one current MRSAB row for every source of MRCONSO, and none else
    current_sabs = [s["RSAB"] for s in _rows("MRSAB") if s["CURVER"] == "Y"]
    assert sorted(current_sabs) == sorted({a["SAB"] for a in atoms.values()})


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
    # by hand, in MRCONSO's order: CUI LAT TS LUI STT SUI ISPREF AUI SAUI SCUI SDUI SAB TTY CODE
    # STR SRL SUPPRESS CVF (the defaults: English, not suppressed, the code as the SCUI)
    fields = ("C9000001", "ENG", "P", "L9000001", "PF", "S90000001", "Y", "A90000001", "",
              "D1", "", "MSH", "MH", "D1", "Invented fever", "0", "N", "")  # fmt: skip
    assert line == "|".join(fields) + "|\n"
    [row] = FakeUtsData.from_lines([line]).rows
    assert (row.cui, row.aui, row.sab, row.tty, row.code, row.name) == (
        "C9000001", "A90000001", "MSH", "MH", "D1", "Invented fever",
    )  # fmt: skip
    assert row.fields == fields
    with pytest.raises(ValueError, match="an MRCONSO row has 18 fields, not 3"):
        type(row).from_fields(["a", "b", "c"])


def test_a_fakerow_field_read_on_the_class_is_its_column_not_an_error() -> None:
    """``FakeRow.cui`` (as ``hasattr``, ``help`` and ``inspect`` read it) is the column, as the
    properties it replaced were, not an AttributeError about ``None``."""
    names = ("cui", "aui", "sab", "tty", "code", "name")
    assert [hasattr(testing.FakeRow, n) for n in names] == [True] * 6
    assert [testing.FakeRow.__dict__[n].index for n in names] == [
        COLUMN[c] for c in ("CUI", "AUI", "SAB", "TTY", "CODE", "STR")
    ]
    assert [getattr(testing.FakeRow, n) for n in names] == [
        testing.FakeRow.__dict__[n] for n in names
    ]
