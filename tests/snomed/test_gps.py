"""Reading the GPS (file or zip) and RF2 snapshots (folder or zip) into one index (gps.py)."""

from __future__ import annotations

import hashlib
import io
import logging
import signal
import threading
import zipfile
from pathlib import Path

import pytest

from helpers import FIXTURES
from tempmedbench_synonyms.errors import BadInputError
from tempmedbench_synonyms.snomed import gps as gps_module
from tempmedbench_synonyms.snomed import rf2 as rf2_module
from tempmedbench_synonyms.snomed import tables
from tempmedbench_synonyms.snomed.concepts import Concept, ConceptIndex
from tempmedbench_synonyms.snomed.gps import load_gps_tsv
from tempmedbench_synonyms.snomed.loader import load_concept_index
from tempmedbench_synonyms.snomed.validate import validate_release

GPS_DIR = FIXTURES / "gps"
GPS_NAME = "SnomedINTL_GPSRelease_PRODUCTION_20990101T120000Z.txt"
GPS_FILE = GPS_DIR / GPS_NAME
RF2_DIR = GPS_DIR / "rf2"
MINI = FIXTURES / "tempmedbench-mini"
RF2_NAMES = (
    "sct2_Concept_Snapshot_INT_20990101.txt",
    "sct2_Description_Snapshot-en_INT_20990101.txt",
    "der2_cRefset_LanguageSnapshot-en_INT_20990101.txt",
)
HEADER = "ConceptID\tActive\tFSN\tUSPreferredTerm"

# Rows of the fixture, written out by hand (they are invented).
EXPECTED_SOME = {
    "9000000001004": ("Brindlewort fever (disorder)", "Brindlewort fever", True),
    "9000000002006": ("Hemovex anemia (disorder)", "Hemovex anemia", True),
    "9000000006009": ('Tinkerlung "dry" form (disorder)', '"Dry" tinkerlung', True),
    "9000000007000": ("Moonstep gait assessment (procedure)", "Moonstep gait check", True),
    "9000000010007": ("Ghostmoor syndrome (disorder)", "", False),
    "9000000011006": ("Duskrot fever (disorder)", "Duskrot fever", False),
    "9000000012004": (
        "\u00c6rwick\u2013Sollen syndrome (disorder)",
        "\u00c6rwick\u2013Sollen syndrome",
        True,
    ),
    "9990105000": ("Grafting of moonstone (procedure)", "Moonstone graft", True),
}


def concepts_of(index: ConceptIndex) -> dict[str, Concept | None]:
    """Every concept of an index, as ``get`` gives it (``gps lookup``, the validator)."""
    return {cid: index.get(cid) for cid in index.rows}


def write(path: Path, text: str, *, bom: bool = False) -> Path:
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    return path


def gps(tmp_path: Path, *rows: str, header: str = HEADER, name: str = GPS_NAME) -> Path:
    return write(tmp_path / name, "\n".join([header, *rows]) + "\n")


# --------------------------------------------------------------------------------------------
# The fixtures


def test_gps_fixture_rows_and_source() -> None:
    index = load_concept_index(GPS_FILE)
    concepts = concepts_of(index)
    assert len(concepts) == 19
    for cid, row in EXPECTED_SOME.items():
        assert concepts[cid] == row
        assert index.get(cid) == row
    assert index.get("9000000099009") is None
    assert index.kind == "gps-tsv"
    assert index.release_date == "20990101"
    assert index.sha256 == hashlib.sha256(GPS_FILE.read_bytes()).hexdigest()
    assert index.notes == []
    summary = index.summary()
    assert (summary["concepts"], summary["active_concepts"]) == (19, 17)


def test_rf2_folder_gives_the_same_index_as_the_gps_file() -> None:
    from_gps = concepts_of(load_concept_index(GPS_FILE))
    from_rf2 = load_concept_index(RF2_DIR)
    assert concepts_of(from_rf2) == from_gps
    assert from_rf2.kind == "rf2-folder"
    assert from_rf2.release_date == "20990101"
    assert from_rf2.sha256 is None  # a folder: each file's hash is in files
    assert [(Path(f.path).name, f.sha256) for f in from_rf2.files] == [
        (n, hashlib.sha256((RF2_DIR / n).read_bytes()).hexdigest()) for n in RF2_NAMES
    ]
    # CRLF is RF2's own line end: said once for the three files, not once a file
    assert from_rf2.notes == ["3 RF2 files: CRLF line ends (RF2's own)"]


def test_rf2_us_preferred_term_ignores_gb_rows() -> None:
    # The trap is really there: the GB refset marks "Haemovex anaemia" preferred in the same file.
    lang = (RF2_DIR / RF2_NAMES[2]).read_text("utf-8").splitlines()
    desc = (RF2_DIR / RF2_NAMES[1]).read_text("utf-8").splitlines()
    gb_id = next(r.split("\t")[0] for r in desc if r.split("\t")[7] == "Haemovex anaemia")
    assert any(
        r.split("\t")[4:] == ["900000000000508004", gb_id, "900000000000548007"] for r in lang
    )
    assert load_concept_index(RF2_DIR).get("9000000002006") == (
        "Hemovex anemia (disorder)",
        "Hemovex anemia",
        True,
    )


def test_rf2_zip_with_nested_folders_and_decoys(tmp_path: Path) -> None:
    z = tmp_path / "SnomedCT_InternationalRF2_PRODUCTION_20990101T120000Z.zip"
    root = "SnomedCT_InternationalRF2_PRODUCTION_20990101T120000Z"
    with zipfile.ZipFile(z, "w") as zf:
        zf.write(RF2_DIR / RF2_NAMES[0], f"{root}/Snapshot/Terminology/{RF2_NAMES[0]}")
        zf.write(RF2_DIR / RF2_NAMES[1], f"{root}/Snapshot/Terminology/{RF2_NAMES[1]}")
        zf.write(RF2_DIR / RF2_NAMES[2], f"{root}/Snapshot/Refset/Language/{RF2_NAMES[2]}")
        # Full and Delta files are not snapshots: they must not be read.
        zf.writestr(f"{root}/Full/Terminology/sct2_Concept_Full_INT_20990101.txt", "garbage\n")
        zf.writestr(f"{root}/Delta/Terminology/sct2_Description_Delta-en_INT_20990101.txt", "x\n")
    index = load_concept_index(z)
    assert index.kind == "rf2-zip"
    assert concepts_of(index) == concepts_of(load_concept_index(GPS_FILE))
    assert index.sha256 == hashlib.sha256(z.read_bytes()).hexdigest()
    assert index.files[1].member == f"{root}/Snapshot/Terminology/{RF2_NAMES[0]}"


def test_gps_zip_member_in_a_subfolder(tmp_path: Path) -> None:
    z = tmp_path / "SnomedINTL_GPSRelease_PRODUCTION_20990101T120000Z.zip"
    member = f"SnomedCT_GPS/Content/{GPS_NAME}"
    with zipfile.ZipFile(z, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("SnomedCT_GPS/Readme_en.pdf", b"not a table")
        zf.write(GPS_FILE, member)
    index = load_concept_index(z)
    assert index.kind == "gps-zip"
    assert concepts_of(index) == concepts_of(load_concept_index(GPS_FILE))
    assert index.release_date == "20990101"
    assert index.sha256 == hashlib.sha256(z.read_bytes()).hexdigest()
    assert [(f.member, f.sha256) for f in index.files] == [
        (None, index.sha256),
        (member, hashlib.sha256(GPS_FILE.read_bytes()).hexdigest()),
    ]


def test_gps_zip_with_two_candidates_takes_the_table(tmp_path: Path) -> None:
    z = tmp_path / "gps.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("doc/GPSRelease_notes.txt", "These are release notes.\n")
        zf.write(GPS_FILE, f"data/{GPS_NAME}")
    assert len(load_concept_index(z).rows) == 19


def test_gps_zip_with_no_date_in_its_names_says_so_once(tmp_path: Path) -> None:
    """The note names the member inside the zip, and both names it looked in."""
    z = tmp_path / "gps.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.write(GPS_FILE, "data/SnomedINTL_GPSRelease_PRODUCTION.txt")
    index = load_concept_index(z)
    assert index.release_date is None
    assert index.notes == [
        f"{z}!data/SnomedINTL_GPSRelease_PRODUCTION.txt: no release date in the member or zip name"
    ]


def test_gps_zip_with_two_tables_is_refused(tmp_path: Path) -> None:
    z = tmp_path / "gps.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.write(GPS_FILE, f"a/{GPS_NAME}")
        zf.write(GPS_FILE, f"b/{GPS_NAME}")
    with pytest.raises(BadInputError) as info:
        load_concept_index(z)
    assert (str(info.value), info.value.hint) == (
        f"{z}: 2 of the 2 members (a/{GPS_NAME}, b/{GPS_NAME}) look like the GPS file",
        "extract the GPS .txt file and pass it to --gps",
    )


def test_zip_with_neither_gps_nor_rf2(tmp_path: Path) -> None:
    z = tmp_path / "other.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("readme.txt", "hello\n")
    with pytest.raises(BadInputError) as exc:
        load_concept_index(z)
    assert str(exc.value) == (
        f"{z}: the zip holds neither a *GPSRelease*.txt member nor an RF2 Concept snapshot"
    )


# --------------------------------------------------------------------------------------------
# What is tolerated, and reported


def test_crlf_bom_and_trailing_header_cell_are_tolerated_and_noted(tmp_path: Path) -> None:
    rows = ["101\t1\tAlpha (disorder)\tAlpha\t", "102\t0\tBeta (disorder)\t"]
    text = "\r\n".join([HEADER + "\t", *rows]) + "\r\n"
    path = write(tmp_path / "gps.txt", text, bom=True)
    index = load_gps_tsv(path)
    assert concepts_of(index) == {
        "101": ("Alpha (disorder)", "Alpha", True),
        "102": ("Beta (disorder)", "", False),
    }
    assert index.notes == [
        f"{path}: a UTF-8 byte order mark was skipped",
        f"{path}: CRLF line ends",
        f"{path}: 1 trailing empty header cell(s) ignored",
        f"{path}: no release date in the file name",
    ]
    assert index.release_date is None


def test_rows_may_or_may_not_repeat_the_trailing_empty_cell(tmp_path: Path) -> None:
    path = gps(tmp_path, "101\t1\tA (finding)\tA", "102\t1\tB (finding)\tB\t", header=HEADER + "\t")
    assert concepts_of(load_gps_tsv(path)) == {
        "101": ("A (finding)", "A", True),
        "102": ("B (finding)", "B", True),
    }


def test_a_value_under_the_unnamed_trailing_cell_is_refused(tmp_path: Path) -> None:
    path = gps(
        tmp_path, "101\t1\tA (finding)\tA\t", "102\t1\tB (finding)\tB\tX", header=HEADER + "\t"
    )
    with pytest.raises(BadInputError) as exc:
        load_gps_tsv(path)
    assert (exc.value.line, exc.value.problem) == (
        3,
        "a value in the column that has no name in the header",
    )


def test_columns_are_found_by_name(tmp_path: Path) -> None:
    path = gps(
        tmp_path,
        "Alpha\tAlpha (disorder)\t101\textra\t1",
        "\tBeta (disorder)\t102\t\t0",
        header="USPreferredTerm\tFSN\tConceptID\tSemanticTag\tActive",
    )
    assert concepts_of(load_gps_tsv(path)) == {
        "101": ("Alpha (disorder)", "Alpha", True),
        "102": ("Beta (disorder)", "", False),
    }


def test_quotes_are_ordinary_characters(tmp_path: Path) -> None:
    path = gps(tmp_path, '101\t1\t"Quoted" start (finding)\t"Quoted\'s" "end', '102\t1\ta"b\tc')
    assert concepts_of(load_gps_tsv(path)) == {
        "101": ('"Quoted" start (finding)', '"Quoted\'s" "end', True),
        "102": ('a"b', "c", True),
    }


def test_a_last_line_without_newline_is_read(tmp_path: Path) -> None:
    path = write(tmp_path / "g.txt", f"{HEADER}\n101\t1\tA (finding)\tA")
    assert concepts_of(load_gps_tsv(path)) == {"101": ("A (finding)", "A", True)}


def test_a_header_only_file_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path / "g.txt", HEADER + "\n")
    with pytest.raises(BadInputError) as exc:
        load_gps_tsv(path)
    assert str(exc.value) == f"{path}: no concept rows: the file has a header only"
    assert exc.value.hint == "the GPS file lists about 380,000 concepts; download it again"


# --------------------------------------------------------------------------------------------
# What is refused, with file and line


def bad(path: Path) -> BadInputError:
    with pytest.raises(BadInputError) as exc:
        load_concept_index(path)
    return exc.value


def test_missing_path(tmp_path: Path) -> None:
    err = bad(tmp_path / "nope.txt")
    assert str(err) == f"{tmp_path / 'nope.txt'}: no such file or folder"


def test_missing_column(tmp_path: Path) -> None:
    err = bad(gps(tmp_path, "101\t1\tA", header="ConceptID\tActive\tFSN"))
    assert err.line == 1
    assert err.problem == (
        "the header has no column 'USPreferredTerm' (found: 'ConceptID', 'Active', 'FSN')"
    )


def test_empty_file(tmp_path: Path) -> None:
    err = bad(write(tmp_path / "g.txt", ""))
    assert (err.line, err.problem) == (1, "the file is empty; a header line was expected")


@pytest.mark.parametrize(
    ("rows", "line", "problem"),
    [
        (
            ["101\t1\tA (finding)\tA", "102\t1\tB (finding)"],
            3,
            "3 tab-separated fields where the header has 4",
        ),
        (["101\t1\tA (finding)\tA\tZ"], 2, "5 tab-separated fields where the header has 4"),
        (
            ["101\t1\tA (finding)\tA", "", "103\t1\tC (finding)\tC"],
            3,
            "a blank line; blank lines are allowed only at the end of the file",
        ),
        (
            ["101\t1\tA (finding)\tA", "", "", "103\t1\tC (finding)\tC", ""],
            3,
            "a blank line; blank lines are allowed only at the end of the file",
        ),
        (['"101"\t1\tA (finding)\tA'], 2, "ConceptID '\"101\"' is not a string of the digits 0-9"),
        (
            ["101\t1\tA (finding)\tA", "102 \t1\tB (finding)\tB"],
            3,
            "ConceptID '102 ' is not a string of the digits 0-9",
        ),
        (
            ["\u0661\u0660\u0661\t1\tA (finding)\tA"],
            2,
            "ConceptID '\u0661\u0660\u0661' is not a string of the digits 0-9",
        ),
        (["101\tyes\tA (finding)\tA"], 2, "Active is 'yes'; it must be 1 or 0"),
        (["101\t10\tA (finding)\tA"], 2, "Active is '10'; it must be 1 or 0"),
        (["101\t1\tA (finding)\tA", "\t1\tB (finding)\tB"], 3, "the concept identifier is empty"),
        (
            ["101\t1\tA (finding)\tA", "102\t1\tB (finding)\tB", "101\t0\tA (finding)\t"],
            4,
            "concept 101 is listed twice (first on line 2)",
        ),
    ],
)
def test_bad_rows_name_their_line(tmp_path: Path, rows: list[str], line: int, problem: str) -> None:
    path = gps(tmp_path, *rows)
    err = bad(path)
    assert (err.path, err.line, err.problem) == (str(path), line, problem)


def test_compensating_widths_are_still_caught(tmp_path: Path) -> None:
    # One row one field short, another one field long: the total of tabs is right.
    path = gps(tmp_path, "101\t1\tA (finding)", "102\t1\tB (finding)\tB\tX")
    err = bad(path)
    assert (err.line, err.problem) == (2, "3 tab-separated fields where the header has 4")


def test_bad_rows_in_a_zip_name_the_member(tmp_path: Path) -> None:
    z = tmp_path / "g.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr(f"x/{GPS_NAME}", f"{HEADER}\n101\t2\tA (finding)\tA\n")
    err = bad(z)
    assert err.path == f"{z}!x/{GPS_NAME}"
    assert (err.line, err.problem) == (2, "Active is '2'; it must be 1 or 0")


def test_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "g.txt"
    path.write_bytes(HEADER.encode() + b"\n101\t1\tA\xff (finding)\tA\n")
    err = bad(path)
    assert (err.line, err.problem) == (
        2,
        "bytes that are not UTF-8 (invalid start byte at column 8)",
    )


def test_rf2_folder_without_a_language_file(tmp_path: Path) -> None:
    for n in RF2_NAMES[:2]:
        (tmp_path / n).write_bytes((RF2_DIR / n).read_bytes())
    err = bad(tmp_path)
    assert str(err) == (
        f"{tmp_path}: no RF2 language snapshot file (sct2_Concept_Snapshot*.txt, "
        "sct2_Description_Snapshot*.txt, der2_cRefset_LanguageSnapshot*.txt)"
    )
    assert err.hint == (
        "pass the root of an International Edition RF2 release (with its Snapshot folder)"
    )


def test_a_folder_with_only_the_gps_file_hints_at_the_file(tmp_path: Path) -> None:
    (tmp_path / GPS_NAME).write_bytes(GPS_FILE.read_bytes())
    err = bad(tmp_path)
    assert err.hint == "pass the GPS .txt file itself, not its folder"


RF2_CONCEPT_HEADER = "id\teffectiveTime\tactive\tmoduleId\tdefinitionStatusId"
RF2_DESC_HEADER = (
    "id\teffectiveTime\tactive\tmoduleId\tconceptId\tlanguageCode\ttypeId\tterm\tcaseSignificanceId"
)
RF2_LANG_HEADER = (
    "id\teffectiveTime\tactive\tmoduleId\trefsetId\treferencedComponentId\tacceptabilityId"
)
FSN, SYN = "900000000000003001", "900000000000013009"
US, GB, PREF, ACC = "900000000000509007", "900000000000508004", "900000000000548007", "x"
# The International Edition's modules (core, model component), and the US module of a US Edition.
CORE, MODEL, US_MODULE = "900000000000207008", "900000000000012004", "731000124108"
OLD, NEW = "20980101", "20990101"
RF2_FILES = {
    "concept": "sct2_Concept_Snapshot_INT_20990101.txt",
    "description": "sct2_Description_Snapshot-en_INT_20990101.txt",
    "language": "der2_cRefset_LanguageSnapshot-en_INT_20990101.txt",
}


def c_row(cid: str, active: str = "1", et: str = NEW, module: str = CORE) -> str:
    return f"{cid}\t{et}\t{active}\t{module}\td"


def d_row(
    did: str,
    active: str,
    type_id: str,
    term: str,
    et: str = NEW,
    module: str = CORE,
    cid: str = "101",
) -> str:
    return f"{did}\t{et}\t{active}\t{module}\t{cid}\ten\t{type_id}\t{term}\tc"


def l_row(
    member: str, active: str, refset: str, did: str, acc: str, et: str = NEW, module: str = CORE
) -> str:
    return f"{member}\t{et}\t{active}\t{module}\t{refset}\t{did}\t{acc}"


def rf2_files(folder: Path, concepts: list[str], descs: list[str], langs: list[str]) -> Path:
    """An RF2 folder with these rows (LF line ends)."""
    folder.mkdir()
    for kind, header, rows in (
        ("concept", RF2_CONCEPT_HEADER, concepts),
        ("description", RF2_DESC_HEADER, descs),
        ("language", RF2_LANG_HEADER, langs),
    ):
        (folder / RF2_FILES[kind]).write_text("\n".join([header, *rows]) + "\n", "utf-8")
    return folder


def rf2(
    folder: Path, descs: list[tuple[str, str, str, str]], langs: list[tuple[str, str, str, str]]
) -> Path:
    """A tiny RF2 folder: descriptions (id, active, type, term) and language rows
    (active, refset, description id, acceptability) of concept 101, all of one effectiveTime."""
    return rf2_files(
        folder,
        [c_row("101")],
        [d_row(d, a, t, term) for d, a, t, term in descs],
        [l_row(f"u{i}", a, r, d, acc) for i, (a, r, d, acc) in enumerate(langs)],
    )


def test_rf2_minimal_us_only(tmp_path: Path) -> None:
    folder = rf2(
        tmp_path / "r",
        [
            ("11", "1", FSN, "Alpha (disorder)"),
            ("12", "1", SYN, "Alpha GB"),
            ("13", "1", SYN, "Alpha US"),
            ("14", "0", SYN, "Alpha old"),
        ],
        [
            ("1", GB, "12", PREF),
            ("1", US, "13", PREF),
            ("0", US, "12", PREF),
            ("1", US, "14", PREF),
        ],
    )
    index = load_concept_index(folder)
    assert concepts_of(index) == {"101": ("Alpha (disorder)", "Alpha US", True)}


def test_rf2_two_us_preferred_synonyms_are_refused(tmp_path: Path) -> None:
    folder = rf2(
        tmp_path / "r",
        [("11", "1", FSN, "Alpha (disorder)"), ("12", "1", SYN, "One"), ("13", "1", SYN, "Two")],
        [("1", US, "12", PREF), ("1", US, "13", PREF)],
    )
    err = bad(folder)
    assert err.problem == "concept 101 has two active US preferred synonyms: descriptions 12 and 13"
    assert err.line == 4


def test_rf2_two_active_fsns_the_us_preferred_one_wins(tmp_path: Path) -> None:
    folder = rf2(
        tmp_path / "r",
        [
            ("11", "1", FSN, "Alpha (disorder)"),
            ("12", "1", FSN, "Alpha (finding)"),
            ("13", "1", SYN, "Alpha"),
        ],
        [("1", US, "12", PREF), ("1", US, "13", PREF)],
    )
    index = load_concept_index(folder)
    assert index.get("101") == ("Alpha (finding)", "Alpha", True)
    assert index.notes[-1] == (
        f"{folder / RF2_FILES['description']}: 1 concept(s) have more than one active FSN; the "
        "one the US English refset prefers was used, else the one with the smallest description "
        "id: 101"
    )


@pytest.mark.parametrize("reverse", [False, True], ids=["as-listed", "reversed"])
@pytest.mark.parametrize(
    ("preferred", "fsn"),
    [
        ((), "Alpha (disorder)"),  # neither is preferred: the smallest id, 99 (numerically)
        (("99", "100"), "Alpha (disorder)"),  # both are
        (("100",), "Alpha (finding)"),  # the preferred one, although its id is larger
    ],
    ids=["neither-preferred", "both-preferred", "larger-id-preferred"],
)
def test_rf2_two_active_fsns_are_decided_by_the_rule_in_any_row_order(
    tmp_path: Path, reverse: bool, preferred: tuple[str, ...], fsn: str
) -> None:
    """Invented rows: concept 101 with two active FSNs, ids 99 and 100 (so that text order, in
    which "100" < "99", would pick the other); concept 202 is unaffected."""
    descs = [
        d_row("99", "1", FSN, "Alpha (disorder)"),
        d_row("100", "1", FSN, "Alpha (finding)"),
        d_row("13", "1", SYN, "Alpha"),
        d_row("21", "1", FSN, "Beta (finding)", cid="202"),
    ]
    langs = [l_row(f"u{d}", "1", US, d, PREF) for d in ("13", *preferred)]
    folder = rf2_files(
        tmp_path / "r",
        [c_row("101"), c_row("202")],
        descs[::-1] if reverse else descs,
        langs[::-1] if reverse else langs,
    )
    index = load_concept_index(folder)
    assert concepts_of(index) == {
        "101": (fsn, "Alpha", True),
        "202": ("Beta (finding)", "", True),
    }
    assert [n for n in index.notes if "more than one active FSN" in n] == [
        f"{folder / RF2_FILES['description']}: 1 concept(s) have more than one active FSN; the "
        "one the US English refset prefers was used, else the one with the smallest description "
        "id: 101"
    ]


def test_rf2_the_two_fsn_note_is_bounded_and_a_lookup_of_another_concept_works(
    tmp_path: Path,
) -> None:
    cids = [str(1000 + i) for i in range(12)]
    descs = [d_row(f"{c}1", "1", FSN, f"T{c} (a)", cid=c) for c in cids]
    descs += [d_row(f"{c}2", "1", FSN, f"T{c} (b)", cid=c) for c in cids]
    descs.append(d_row("77", "1", FSN, "Other (finding)", cid="303"))
    folder = rf2_files(tmp_path / "r", [c_row(c) for c in [*cids, "303"]], descs, [])
    index = load_concept_index(folder)
    assert index.get("303") == ("Other (finding)", "", True)
    assert index.get("1011") == ("T1011 (a)", "", True)
    assert index.notes == [
        f"{folder / RF2_FILES['description']}: 12 concept(s) have more than one active FSN; the "
        "one the US English refset prefers was used, else the one with the smallest description "
        "id: 1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009, and 2 more"
    ]


def test_index_built_by_hand_decodes_rows() -> None:
    index = ConceptIndex(
        {"101": "1\tA (finding)\tA\r\n", "102": "0\tB (finding)\t"}, "t", "t", None, None
    )
    assert index.get("101") == ("A (finding)", "A", True)
    assert index.get("102") == ("B (finding)", "", False)
    assert "101" in index.rows and "103" not in index.rows


def test_rf2_bytes_that_are_not_utf8_name_file_and_line(tmp_path: Path) -> None:
    folder = rf2(tmp_path / "r", [("11", "1", FSN, "Alpha (disorder)")], [("1", US, "11", PREF)])
    desc = folder / "sct2_Description_Snapshot-en_INT_20990101.txt"
    desc.write_bytes(desc.read_bytes().replace(b"Alpha", b"Alph\xe9"))
    err = bad(folder)
    assert (err.path, err.line) == (str(desc), 2)
    # 11|20990101|1|900000000000207008|101|en|900000000000003001| is 59 bytes, "Alph" 4 more: the
    # bad byte is the 64th.
    assert err.problem == "bytes that are not UTF-8 (invalid continuation byte at column 64)"


def test_rf2_fixture_reads_the_model_component_module_like_core() -> None:
    # The trap is really there: one concept's rows are all in the model component module.
    rows = (RF2_DIR / RF2_NAMES[0]).read_text("utf-8").splitlines()[1:]
    assert sorted({r.split("\t")[3] for r in rows}) == [MODEL, CORE]
    starlace = next(r.split("\t") for r in rows if r.split("\t")[3] == MODEL)
    assert starlace[0] == "9000000009002"
    assert load_concept_index(RF2_DIR).get("9000000009002") == (
        "Starlace care plan (regime/therapy)",
        "Starlace care plan",
        True,
    )


# --------------------------------------------------------------------------------------------
# RF2: only the latest row of each component counts (a snapshot may hold several versions)

ORDERS = pytest.mark.parametrize("newer_first", [True, False], ids=["newer-first", "newer-last"])


def in_order(newer: str, older: str, newer_first: bool) -> list[str]:
    return [newer, older] if newer_first else [older, newer]


def repeated_note(path: Path, components: int, ignored: int) -> str:
    return (
        f"{path}: {components} component(s) listed more than once; the row with the latest "
        f"effectiveTime of each was used ({ignored} other row(s) ignored)"
    )


@ORDERS
def test_rf2_description_listed_twice_the_latest_row_counts(
    tmp_path: Path, newer_first: bool
) -> None:
    folder = rf2_files(
        tmp_path / "r",
        [c_row("101")],
        [
            *in_order(
                d_row("11", "1", FSN, "Alpha (disorder)", NEW),
                d_row("11", "1", FSN, "Alfa (disorder)", OLD),
                newer_first,
            ),
            *in_order(
                d_row("13", "1", SYN, "Alpha", NEW), d_row("13", "1", SYN, "Alfa", OLD), newer_first
            ),
        ],
        [l_row("u1", "1", US, "11", PREF), l_row("u2", "1", US, "13", PREF)],
    )
    index = load_concept_index(folder)
    assert concepts_of(index) == {"101": ("Alpha (disorder)", "Alpha", True)}
    assert index.notes == [repeated_note(folder / RF2_FILES["description"], 2, 2)]


@ORDERS
def test_rf2_inactivated_fsn_is_not_a_second_fsn(tmp_path: Path, newer_first: bool) -> None:
    folder = rf2_files(
        tmp_path / "r",
        [c_row("101")],
        [
            *in_order(
                d_row("11", "0", FSN, "Alpha (disorder)", NEW),
                d_row("11", "1", FSN, "Alpha (disorder)", OLD),
                newer_first,
            ),
            d_row("12", "1", FSN, "Alpha (finding)"),
            d_row("13", "1", SYN, "Alpha"),
        ],
        [l_row("u1", "1", US, "13", PREF)],
    )
    assert concepts_of(load_concept_index(folder)) == {"101": ("Alpha (finding)", "Alpha", True)}


@ORDERS
@pytest.mark.parametrize(
    ("active", "acceptability"), [("0", PREF), ("1", ACC)], ids=["inactivated", "acceptable"]
)
def test_rf2_refset_member_changed_later_is_read_as_changed(
    tmp_path: Path, newer_first: bool, active: str, acceptability: str
) -> None:
    # Member u1 made description 12 preferred, then was inactivated (or made acceptable): 13 is
    # now the only US preferred synonym.
    folder = rf2_files(
        tmp_path / "r",
        [c_row("101")],
        [
            d_row("11", "1", FSN, "Alpha (disorder)"),
            d_row("12", "1", SYN, "Alpha old"),
            d_row("13", "1", SYN, "Alpha"),
        ],
        [
            *in_order(
                l_row("u1", active, US, "12", acceptability, NEW),
                l_row("u1", "1", US, "12", PREF, OLD),
                newer_first,
            ),
            l_row("u2", "1", US, "13", PREF),
        ],
    )
    index = load_concept_index(folder)
    assert concepts_of(index) == {"101": ("Alpha (disorder)", "Alpha", True)}
    assert index.notes == [repeated_note(folder / RF2_FILES["language"], 1, 1)]


@ORDERS
def test_rf2_concept_listed_twice_takes_its_latest_status(
    tmp_path: Path, newer_first: bool
) -> None:
    folder = rf2_files(
        tmp_path / "r",
        in_order(c_row("101", "0", NEW), c_row("101", "1", OLD), newer_first),
        [d_row("11", "1", FSN, "Alpha (disorder)"), d_row("13", "1", SYN, "Alpha")],
        [l_row("u1", "1", US, "13", PREF)],
    )
    index = load_concept_index(folder)
    assert concepts_of(index) == {"101": ("Alpha (disorder)", "Alpha", False)}
    assert index.notes == [repeated_note(folder / RF2_FILES["concept"], 1, 1)]


def test_rf2_zip_with_a_repeated_component_is_read_twice(tmp_path: Path) -> None:
    # The second pass over a file (after a repeated identifier was seen) reopens the zip member.
    folder = rf2_files(
        tmp_path / "r",
        [c_row("101", "0", NEW), c_row("101", "1", OLD)],
        [d_row("11", "1", FSN, "Alpha (disorder)")],
        [],
    )
    z = tmp_path / "rf2.zip"
    with zipfile.ZipFile(z, "w", zipfile.ZIP_DEFLATED) as zf:
        for name in RF2_FILES.values():
            zf.write(folder / name, f"Snapshot/{name}")
    index = load_concept_index(z)
    assert concepts_of(index) == {"101": ("Alpha (disorder)", "", False)}
    assert index.notes == [repeated_note(Path(f"{z}!Snapshot/{RF2_FILES['concept']}"), 1, 1)]


def test_rf2_a_row_repeated_as_it_is_is_read_once(tmp_path: Path) -> None:
    folder = rf2_files(
        tmp_path / "r",
        [c_row("101"), c_row("101")],
        [d_row("11", "1", FSN, "Alpha (disorder)")],
        [],
    )
    index = load_concept_index(folder)
    assert concepts_of(index) == {"101": ("Alpha (disorder)", "", True)}
    assert index.notes == [repeated_note(folder / RF2_FILES["concept"], 1, 1)]


def test_rf2_two_different_rows_of_one_effective_time_are_refused(tmp_path: Path) -> None:
    folder = rf2_files(tmp_path / "r", [c_row("101", "1"), c_row("101", "0")], [], [])
    concept_file = folder / RF2_FILES["concept"]
    err = bad(folder)
    assert str(err) == (
        f"{concept_file}, line 3: component 101 has two different rows with effectiveTime "
        f"20990101 (the other on line 2 of {concept_file})"
    )


def test_rf2_effective_time_of_a_repeated_component_must_be_a_date(tmp_path: Path) -> None:
    folder = rf2_files(tmp_path / "r", [c_row("101", "1", "2099-01-01"), c_row("101", "0")], [], [])
    err = bad(folder)
    assert (err.line, err.problem) == (
        2,
        "effectiveTime is '2099-01-01'; it must be a date of 8 digits (YYYYMMDD)",
    )


def test_rf2_effective_time_of_a_component_listed_once_is_not_read(tmp_path: Path) -> None:
    """A choice (rf2.py's docstring): only a repeated identifier needs its effectiveTime."""
    folder = rf2_files(tmp_path / "r", [c_row("101", "1", "not-a-date")], [], [])
    assert concepts_of(load_concept_index(folder)) == {"101": ("", "", True)}


def test_rf2_hash_twins_are_told_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every identifier given the same hash: all rows take the exact path, which compares the
    # identifiers themselves, finds none repeated, and gives the same index without a note.
    monkeypatch.setattr(rf2_module, "hash", lambda _: 7, raising=False)
    index = load_concept_index(RF2_DIR)
    assert concepts_of(index) == concepts_of(load_concept_index(GPS_FILE))
    assert index.notes == ["3 RF2 files: CRLF line ends (RF2's own)"]


def test_rf2_blank_lines_at_the_end_are_noted(tmp_path: Path) -> None:
    folder = rf2(tmp_path / "r", [("11", "1", FSN, "Alpha (disorder)")], [])
    concept_file = folder / RF2_FILES["concept"]
    concept_file.write_text(concept_file.read_text("utf-8") + "\n\n", "utf-8")
    index = load_concept_index(folder)
    assert concepts_of(index) == {"101": ("Alpha (disorder)", "", True)}
    assert index.notes == [f"{concept_file}: 2 blank line(s) at the end of the file ignored"]


# --------------------------------------------------------------------------------------------
# RF2: the International Edition's modules only

EXT = "456191000124101"
US_EDITION = {
    "concept": "sct2_Concept_Snapshot_US1000124_20990301.txt",
    "description": "sct2_Description_Snapshot-en_US1000124_20990301.txt",
    "language": "der2_cRefset_LanguageSnapshot-en_US1000124_20990301.txt",
}


HOME_REST_FSN = "Home rest care plan (regime/therapy)"


def us_edition(folder: Path) -> Path:
    """The fixture snapshot as a US Edition holds it: its rows, and the US module's rows of the
    extension concept 456191000124101, with terms (CRLF, as the fixture)."""
    folder.mkdir()
    added = {
        "concept": [c_row(EXT, module=US_MODULE)],
        "description": [
            d_row("4561911000124111", "1", FSN, HOME_REST_FSN, module=US_MODULE, cid=EXT),
            d_row("4561921000124116", "1", SYN, "Home rest care plan", module=US_MODULE, cid=EXT),
        ],
        "language": [
            l_row("us-1", "1", US, "4561911000124111", PREF, module=US_MODULE),
            l_row("us-2", "1", US, "4561921000124116", PREF, module=US_MODULE),
        ],
    }
    for kind, name in zip(("concept", "description", "language"), RF2_NAMES, strict=True):
        text = (RF2_DIR / name).read_bytes().decode() + "".join(r + "\r\n" for r in added[kind])
        (folder / US_EDITION[kind]).write_text(text, "utf-8", newline="")
    return folder


def skipped_note(path: Path, rows: int) -> str:
    return (
        f"{path}: {rows} row(s) of modules other than the International Edition's skipped: "
        f"731000124108 ({rows})"
    )


def test_rf2_us_edition_rows_of_the_us_module_are_skipped(tmp_path: Path) -> None:
    folder = us_edition(tmp_path / "us")
    index = load_concept_index(folder)
    assert EXT not in index.rows
    assert concepts_of(index) == concepts_of(load_concept_index(GPS_FILE))
    assert index.release_date == "20990301"
    lang, desc, concept = (folder / US_EDITION[k] for k in ("language", "description", "concept"))
    assert index.notes == [
        "3 RF2 files: CRLF line ends (RF2's own)",  # in the first one's place
        skipped_note(concept, 1),
        skipped_note(lang, 2),
        skipped_note(desc, 2),
    ]


def test_mini_release_is_clean_against_a_us_edition_snapshot(tmp_path: Path) -> None:
    # Read with the US module's rows, 456191000124101 would have terms, and the mini release's
    # code-only use of it (as the dataset card prescribes) would give FSN and PT mismatches.
    report = validate_release(MINI, load_concept_index(us_edition(tmp_path / "us")))
    assert report.findings == []
    assert report.records == {
        "artifacts/events_canonical.jsonl": 22,
        "artifacts/questions.jsonl": 42,
    }


def test_rf2_with_no_international_concept_is_refused(tmp_path: Path) -> None:
    folder = rf2_files(
        tmp_path / "r",
        [c_row(EXT, module=US_MODULE)],
        [d_row("11", "1", FSN, "Home rest care plan (regime/therapy)", module=US_MODULE, cid=EXT)],
        [],
    )
    err = bad(folder)
    assert str(err) == (
        f"{folder / RF2_FILES['concept']}: no concept rows: none of the International Edition's "
        "modules (900000000000207008, 900000000000012004)"
    )


@ORDERS
def test_rf2_module_is_read_from_the_latest_row(tmp_path: Path, newer_first: bool) -> None:
    # A concept promoted from the US module to core keeps its identifier: its latest row counts,
    # whatever the module of its older one.
    promoted = "424201000124108"
    folder = rf2_files(
        tmp_path / "r",
        in_order(
            c_row(promoted, "1", NEW, CORE), c_row(promoted, "1", OLD, US_MODULE), newer_first
        ),
        [d_row("11", "1", FSN, "Promoted plan (regime/therapy)", cid=promoted)],
        [],
    )
    index = load_concept_index(folder)
    assert concepts_of(index) == {promoted: ("Promoted plan (regime/therapy)", "", True)}
    assert index.notes == [repeated_note(folder / RF2_FILES["concept"], 1, 1)]


# --------------------------------------------------------------------------------------------
# Zips that cannot be read: exit 2 with the file and member, never a traceback

ZIP_HINT = "extract the .txt, or zip it again with standard deflate"


def gps_zip(tmp_path: Path, member: str = f"x/{GPS_NAME}") -> Path:
    z = tmp_path / "gps.zip"
    with zipfile.ZipFile(z, "w", zipfile.ZIP_STORED) as zf:
        zf.write(GPS_FILE, member)
    return z


def patch_central(z: Path, member: str, offset: int, value: bytes) -> None:
    """Overwrite bytes of ``member``'s central directory header (APPNOTE.TXT 4.3.12: flags at 8,
    compression method at 10, compressed and uncompressed sizes at 20 and 24)."""
    data = bytearray(z.read_bytes())
    i = data.find(b"PK\x01\x02")
    while i >= 0:
        name_len = int.from_bytes(data[i + 28 : i + 30], "little")
        if data[i + 46 : i + 46 + name_len] == member.encode():
            data[i + offset : i + offset + len(value)] = value
            z.write_bytes(bytes(data))
            return
        i = data.find(b"PK\x01\x02", i + 4)
    raise AssertionError(f"no central header for {member}")


def zip_error(z: Path) -> tuple[str, str | None]:
    err = bad(z)
    return str(err), err.hint


def test_encrypted_member(tmp_path: Path) -> None:
    z = gps_zip(tmp_path)
    patch_central(z, f"x/{GPS_NAME}", 8, b"\x01\x00")
    assert zip_error(z) == (
        f"{z}!x/{GPS_NAME}: the member is encrypted (a password is required to read it)",
        ZIP_HINT,
    )


def test_deflate64_member(tmp_path: Path) -> None:
    z = gps_zip(tmp_path)
    patch_central(z, f"x/{GPS_NAME}", 10, b"\x09\x00")
    assert zip_error(z) == (
        f"{z}!x/{GPS_NAME}: the member is compressed with method 9 (Deflate64), which Python's "
        "zipfile cannot read",
        ZIP_HINT,
    )


def test_member_that_ends_early(tmp_path: Path) -> None:
    z = gps_zip(tmp_path)
    size = (GPS_FILE.stat().st_size + 100_000).to_bytes(4, "little")
    patch_central(z, f"x/{GPS_NAME}", 20, size + size)
    assert zip_error(z) == (
        f"{z}!x/{GPS_NAME}: damaged zip: the member ends before its recorded size (truncated?)",
        ZIP_HINT,
    )


def test_member_with_a_bad_crc(tmp_path: Path) -> None:
    z = gps_zip(tmp_path)
    z.write_bytes(z.read_bytes().replace(b"Brindlewort", b"Brindlewart", 1))
    assert zip_error(z) == (
        f"{z}!x/{GPS_NAME}: damaged zip: Bad CRC-32 for file 'x/{GPS_NAME}'",
        ZIP_HINT,
    )


def test_member_that_needs_zip64(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    z = gps_zip(tmp_path)

    def refuse(*args: object, **kwargs: object) -> None:
        raise zipfile.LargeZipFile("Filesize would require ZIP64 extensions")

    monkeypatch.setattr(zipfile.ZipFile, "open", refuse)
    assert zip_error(z) == (
        f"{z}!x/{GPS_NAME}: the member needs ZIP64 extensions, which are not available: "
        "Filesize would require ZIP64 extensions",
        ZIP_HINT,
    )


@pytest.mark.parametrize("name", ["gps.zip", GPS_NAME], ids=["zip-name", "txt-name"])
def test_truncated_zip(tmp_path: Path, name: str) -> None:
    data = gps_zip(tmp_path).read_bytes()
    z = tmp_path / name
    z.write_bytes(data[: len(data) // 2])
    assert zip_error(z) == (
        f"{z}: damaged zip: it has no end-of-central-directory record (truncated?)",
        "download the zip again, or extract the .txt from a good copy and pass that",
    )


def test_zip_with_a_damaged_directory(tmp_path: Path) -> None:
    z = gps_zip(tmp_path)
    z.write_bytes(z.read_bytes().replace(b"PK\x01\x02", b"PK\x01\x09", 1))
    assert zip_error(z) == (
        f"{z}: damaged zip: cannot read its directory (Bad magic number for central directory)",
        "download the zip again, or extract the .txt from a good copy and pass that",
    )


def rf2_zip(tmp_path: Path) -> Path:
    z = tmp_path / "rf2.zip"
    with zipfile.ZipFile(z, "w", zipfile.ZIP_DEFLATED) as zf:
        for n in RF2_NAMES:
            zf.write(RF2_DIR / n, f"Snapshot/{n}")
    return z


@pytest.mark.parametrize(
    ("offset", "value", "problem"),
    [
        (8, b"\x01\x00", "the member is encrypted (a password is required to read it)"),
        (
            10,
            b"\x09\x00",
            "the member is compressed with method 9 (Deflate64), which Python's zipfile "
            "cannot read",
        ),
    ],
    ids=["encrypted", "deflate64"],
)
def test_rf2_zip_member_that_cannot_be_read(
    tmp_path: Path, offset: int, value: bytes, problem: str
) -> None:
    z = rf2_zip(tmp_path)
    member = f"Snapshot/{RF2_NAMES[1]}"
    patch_central(z, member, offset, value)
    assert zip_error(z) == (f"{z}!{member}: {problem}", ZIP_HINT)


# --------------------------------------------------------------------------------------------
# GPS: blank lines at the end, identifiers


def test_a_trailing_blank_line_is_tolerated_on_the_fast_path(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The file is read once: a file the fast path does not take is read again line by line,
    and the loader says so under -v (as it does here for a bad row)."""
    again = f"{tmp_path / GPS_NAME}: the fast GPS path saw a bad row; reading it again"
    path = write(tmp_path / GPS_NAME, f"{HEADER}\n101\t1\tA (finding)\tA\n\n")
    with caplog.at_level(logging.DEBUG, logger="tempmedbench_synonyms.snomed.gps"):
        index = load_gps_tsv(path)
        assert caplog.messages == []
        write(path, f"{HEADER}\n101\t2\tA (finding)\tA\n\n")
        with pytest.raises(BadInputError):
            load_gps_tsv(path)
        assert caplog.messages == [again]
    assert concepts_of(index) == {"101": ("A (finding)", "A", True)}
    assert index.notes == [f"{path}: 1 blank line(s) at the end of the file ignored"]


@pytest.mark.parametrize(
    ("text", "notes"),
    [
        (f"{HEADER}\r\n101\t1\tA (finding)\tA\r\n\r\n\r\n", ["CRLF line ends", "2 blank"]),
        # More line ends than the scan's tail holds: the checked path counts them.
        (f"{HEADER}\n101\t1\tA (finding)\tA" + "\n" * 101, ["100 blank"]),
        # Another column order: the checked path, with the same note.
        ("Active\tConceptID\tFSN\tUSPreferredTerm\n1\t101\tA (finding)\tA\n\n", ["1 blank"]),
    ],
    ids=["crlf", "many", "checked-path"],
)
def test_trailing_blank_lines_are_tolerated_and_noted(
    tmp_path: Path, text: str, notes: list[str]
) -> None:
    path = write(tmp_path / GPS_NAME, text)
    index = load_gps_tsv(path)
    assert concepts_of(index) == {"101": ("A (finding)", "A", True)}
    expected = [
        f"{path}: {n} line(s) at the end of the file ignored"
        if n.endswith("blank")
        else f"{path}: {n}"
        for n in notes
    ]
    assert index.notes == expected


def test_blank_lines_only_after_the_header_are_no_release(tmp_path: Path) -> None:
    path = write(tmp_path / GPS_NAME, f"{HEADER}\n\n")
    assert str(bad(path)) == f"{path}: no concept rows: the file has a header only"


def test_identifiers_are_checked_with_columns_in_another_order(tmp_path: Path) -> None:
    header = "Active\tFSN\tUSPreferredTerm\tConceptID"
    path = gps(tmp_path, "1\tA (finding)\tA\t101", "1\tB (finding)\tB\t 102", header=header)
    err = bad(path)
    assert (err.line, err.problem) == (3, "ConceptID ' 102' is not a string of the digits 0-9")


def test_a_file_with_columns_in_another_order_is_read_and_hashed_whole(tmp_path: Path) -> None:
    """Over several read blocks (~1.3 MB): the fast path stops at the header, the blocks are
    still read to their end for the digest, and the checked path reads every row."""
    rows = [f"1\tTerm {i} (finding)\tTerm {i}\t{100000 + i}" for i in range(30_000)]
    path = write(
        tmp_path / GPS_NAME, "\n".join(["Active\tFSN\tUSPreferredTerm\tConceptID", *rows, ""])
    )
    index = load_gps_tsv(path)
    assert index.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert len(index.rows) == 30_000
    assert index.get("129999") == ("Term 29999 (finding)", "Term 29999", True)


def test_a_file_that_changes_between_its_two_reads_is_bad_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The digest is of the first read, the rows of the second (columns in another order): a
    file written meanwhile would be reported with a hash that is not of the rows checked."""
    header = "Active\tFSN\tUSPreferredTerm\tConceptID"
    path = write(tmp_path / GPS_NAME, f"{header}\n1\tA (finding)\tA\t101\n")
    fast = gps_module._read_gps_rows_fast

    def then_rewritten(*args: object, **kwargs: object) -> object:
        done = fast(*args, **kwargs)  # type: ignore[arg-type]
        path.write_text(f"{header}\n1\tB (finding)\tB\t102\n", "utf-8")
        return done

    monkeypatch.setattr(gps_module, "_read_gps_rows_fast", then_rewritten)
    with pytest.raises(BadInputError) as info:
        load_gps_tsv(path)
    assert str(info.value) == f"{path}: the file changed while it was read"
    assert info.value.hint == "run again once nothing writes the file"


def test_a_file_grown_between_its_two_reads_is_refused_at_the_row_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second read is bounded in rows as the first is, not only compared at its end (a file
    of 256 MiB of short rows would otherwise be held whole as rows first)."""
    header = "Active\tFSN\tUSPreferredTerm\tConceptID"
    path = write(tmp_path / GPS_NAME, f"{header}\n1\tA (finding)\tA\t101\n")
    fast = gps_module._read_gps_rows_fast

    def then_grown(*args: object, **kwargs: object) -> object:
        done = fast(*args, **kwargs)  # type: ignore[arg-type]
        rows = "".join(f"1\tT{i} (finding)\tT{i}\t{100 + i}\n" for i in range(5))
        path.write_text(f"{header}\n{rows}", "utf-8")
        return done

    monkeypatch.setattr(gps_module, "GPS_MAX_ROWS", 3)
    monkeypatch.setattr(gps_module, "_read_gps_rows_fast", then_grown)
    with pytest.raises(BadInputError) as info:
        load_gps_tsv(path)
    assert str(info.value) == (
        f"{path}: more than 3 lines; the GPS file has about 380,000 concepts, one a line"
    )


# --------------------------------------------------------------------------------------------
# Release dates


def test_release_date_from_the_folder_of_a_zip_member(tmp_path: Path) -> None:
    member = "SnomedCT_GPS_PRODUCTION_20990201T120000Z/SnomedINTL_GPSRelease.txt"
    index = load_concept_index(gps_zip(tmp_path, member))
    assert index.release_date == "20990201"
    assert index.notes == []


def test_release_date_from_a_name_ending_in_the_date(tmp_path: Path) -> None:
    index = load_concept_index(gps_zip(tmp_path, "x/SnomedINTL_GPSRelease_Snapshot_20990301.txt"))
    assert index.release_date == "20990301"
    path = write(tmp_path / "SnomedINTL_GPSRelease_20990401.txt", GPS_FILE.read_text("utf-8"))
    tsv = load_gps_tsv(path)
    assert (tsv.release_date, tsv.notes) == ("20990401", [])


def test_release_date_of_the_member_comes_before_the_zip_name(tmp_path: Path) -> None:
    z = gps_zip(tmp_path, f"SnomedCT_GPS_20990501T120000Z/{GPS_NAME}")
    renamed = z.rename(tmp_path / "SnomedINTL_GPSRelease_PRODUCTION_20990601T120000Z.zip")
    assert load_concept_index(renamed).release_date == "20990501"


# --------------------------------------------------------------------------------------------
# Bounds: a zip bomb, an endless file, a line without end (SPEC section 8)


def _declare_size(zip_path: Path, size: int) -> None:
    """Make the zip's only member declare ``size`` bytes once unpacked (local header and central
    directory), as a bomb's header would: a 3 GB member in a zip of a few hundred bytes."""
    data = bytearray(zip_path.read_bytes())
    local = data.index(b"PK\x03\x04")
    central = data.index(b"PK\x01\x02")
    data[local + 22 : local + 26] = size.to_bytes(4, "little")
    data[central + 24 : central + 28] = size.to_bytes(4, "little")
    zip_path.write_bytes(bytes(data))


def test_a_gps_member_declaring_3_gb_is_refused_before_it_is_read(tmp_path: Path) -> None:
    z = tmp_path / "SnomedCT_GPS.zip"
    with zipfile.ZipFile(z, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.write(GPS_FILE, f"g/{GPS_NAME}")
    _declare_size(z, 3_000_000_000)
    err = bad(z)
    assert str(err) == (
        f"{z}!g/{GPS_NAME}: the member declares 3000000000 bytes once unpacked, more than the "
        "268435456 bytes (256 MiB) such a file can have; this is not the file it claims to be "
        "(or a zip bomb)"
    )
    assert err.hint == (
        "pass the SNOMED International GPS (zip or .txt) or an RF2 snapshot, as downloaded"
    )


def test_an_rf2_member_declaring_too_much_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = rf2(tmp_path / "r", [("11", "1", FSN, "Alpha (disorder)")], [("1", US, "11", PREF)])
    z = tmp_path / "rf2.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.write(folder / RF2_FILES["concept"], f"Snapshot/{RF2_FILES['concept']}")
        zf.write(folder / RF2_FILES["description"], f"Snapshot/{RF2_FILES['description']}")
        zf.write(folder / RF2_FILES["language"], f"Snapshot/{RF2_FILES['language']}")
    data = bytearray(z.read_bytes())
    central = data.index(b"PK\x01\x02")  # the first member: the Concept file
    data[central + 24 : central + 28] = (3 << 30).to_bytes(4, "little")
    z.write_bytes(bytes(data))
    # Without ZIP64 a member cannot declare 4 GiB: the bound is lowered to 1 GiB to see it act.
    monkeypatch.setattr(rf2_module, "RF2_MAX_BYTES", 1 << 30)
    err = bad(z)
    assert str(err) == (
        f"{z}!Snapshot/{RF2_FILES['concept']}: the member declares 3221225472 bytes once "
        "unpacked, more than the 1073741824 bytes (1024 MiB) such a file can have; this is not "
        "the file it claims to be (or a zip bomb)"
    )


def test_a_gps_file_larger_than_the_bound_is_refused_as_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bytes really read are counted (a header may lie, a .txt has none): the bound is
    lowered to below the fixture's 1,196 bytes to see it act."""
    monkeypatch.setattr(gps_module, "GPS_MAX_BYTES", 1000)
    err = bad(GPS_FILE)
    assert str(err) == (
        f"{GPS_FILE}: the GPS file is larger than 1000 bytes (0 MiB); this is not the file it "
        "claims to be (or a zip bomb)"
    )


def test_a_gps_file_with_too_many_lines_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gps_module, "GPS_MAX_ROWS", 5)
    path = tmp_path / GPS_NAME
    path.write_bytes(b"\n" * 6)
    err = bad(path)
    assert (err.path, err.line, err.problem) == (
        str(path),
        None,
        "more than 5 lines; the GPS file has about 380,000 concepts, one a line",
    )
    assert gps_module.GPS_MAX_ROWS == 5 and gps_module.GPS_MAX_BYTES == 1 << 28


def test_the_bounds_are_those_documented() -> None:
    assert (gps_module.GPS_MAX_BYTES, gps_module.GPS_MAX_ROWS) == (256 << 20, 2_000_000)
    assert (rf2_module.RF2_MAX_BYTES, tables.LINE_MAX_BYTES) == (4 << 30, 64 << 10)


def test_a_gps_line_longer_than_64_kib_is_refused_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / GPS_NAME
    lines = GPS_FILE.read_bytes().split(b"\n")
    lines.insert(3, b"1\t1\t" + b"x" * (64 << 10) + b"\t")
    path.write_bytes(b"\n".join(lines))
    err = bad(path)
    assert (err.path, err.line, err.problem) == (
        str(path),
        4,
        "a line longer than 65536 bytes; the GPS file has no such line",
    )


def test_a_long_line_of_a_zipped_gps_file_is_named_by_its_line(tmp_path: Path) -> None:
    """Lines are counted only when one is too long, by reading the member again from its start:
    the lines of the reads before the one that finds it count too (30,000 short rows, ~1.3 MB,
    then a 2 MiB line, read 1 MiB at a time)."""
    rows = [f"{100000 + i}\t1\tTerm {i} (finding)\tTerm {i}" for i in range(30_000)]
    data = "\n".join([HEADER, *rows, "1\t1\t" + "x" * (2 << 20) + "\t", "2\t1\tB\tB"])
    z = tmp_path / "SnomedINTL_GPSRelease_PRODUCTION_20990101T120000Z.zip"
    with zipfile.ZipFile(z, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(f"SnomedCT_GPS/{GPS_NAME}", data.encode())
    err = bad(z)
    assert (err.path, err.line, err.problem) == (
        f"{z}!SnomedCT_GPS/{GPS_NAME}",
        30_002,
        "a line longer than 65536 bytes; the GPS file has no such line",
    )


def test_an_rf2_file_that_is_one_endless_line_is_refused(tmp_path: Path) -> None:
    folder = rf2(tmp_path / "r", [("11", "1", FSN, "Alpha (disorder)")], [("1", US, "11", PREF)])
    (folder / RF2_FILES["language"]).write_bytes(b"x" * (3 << 20))  # no LF in 3 MiB
    err = bad(folder)
    assert (err.path, err.line, err.problem) == (
        str(folder / RF2_FILES["language"]),
        1,
        "a line longer than 65536 bytes; an RF2 file has no such line",
    )


@pytest.mark.parametrize(
    ("data", "line"),
    [
        (b"ab\ncdefghijk\nl\n", 2),  # inside one read
        (b"abcdefghijkl\n", 1),  # the first line, across reads
        (b"a\nb\nc\nd\n" + b"x" * 9, 5),  # the last line, with no LF
        (b"a\n" * 7 + b"0123456789\n", 8),  # a line that starts and ends in different reads
    ],
)
def test_the_line_bound_is_exact_whatever_the_reads(data: bytes, line: int) -> None:
    for size in (4, 5, 16, 64):
        raw = tables.Bounded(io.BytesIO(data), "f", "the file", 1000, 8)
        with pytest.raises(BadInputError) as info:
            while raw.read(size):
                pass
        assert (info.value.line, info.value.problem) == (
            line,
            "a line longer than 8 bytes; the file has no such line",
        ), size
    ok = tables.Bounded(io.BytesIO(b"12345678\n" * 5 + b"12345678"), "f", "x", 1000, 8)
    assert len(ok.read(1000) or b"") == 53  # lines of exactly the bound are fine


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64, 1 << 20])
def test_the_fast_path_reads_the_same_rows_whatever_the_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, size: int
) -> None:
    """Lines (and a two-byte character) cut across the blocks the file is read in, of any size,
    are put together again, on the fast path (nothing is read again)."""
    monkeypatch.setattr(gps_module, "READ_BLOCK", size)
    data = f"{HEADER}\r\n101\t1\tAé (finding)\tAé\r\n102\t0\tB (finding)\t\r\n103\t1\tC\tC"
    path = tmp_path / GPS_NAME
    path.write_bytes(data.encode())
    with caplog.at_level(logging.DEBUG, logger="tempmedbench_synonyms.snomed.gps"):
        index = load_gps_tsv(path)
    assert concepts_of(index) == {
        "101": ("Aé (finding)", "Aé", True),
        "102": ("B (finding)", "", False),
        "103": ("C", "C", True),
    }
    assert (index.notes, caplog.messages) == ([f"{path}: CRLF line ends"], [])


def test_a_snapshot_with_one_crlf_file_keeps_its_own_note(tmp_path: Path) -> None:
    """Several CRLF files are said in one note (test_rf2_us_edition_rows_of_the_us_module_are_
    skipped); one keeps its own, and the notes of the others are left alone."""
    folder = rf2(tmp_path / "r", [("11", "1", FSN, "Alpha (disorder)")], [])
    concept_file = folder / RF2_FILES["concept"]
    concept_file.write_bytes(concept_file.read_bytes().replace(b"\n", b"\r\n") + b"\r\n")
    index = load_concept_index(folder)
    assert concepts_of(index) == {"101": ("Alpha (disorder)", "", True)}
    assert index.notes == [
        f"{concept_file}: CRLF line ends",
        f"{concept_file}: 1 blank line(s) at the end of the file ignored",
    ]


def test_the_files_hash_is_its_sha256_and_no_thread_outlives_the_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The GPS file is hashed on another thread while it is parsed, in blocks; the digest is
    the file's, checked by hand, and no thread outlives the load, whether it succeeds or fails
    (a thread left behind would keep the MRCONSO scan from forking its workers)."""
    before = set(threading.enumerate())
    monkeypatch.setattr(gps_module, "READ_BLOCK", 64)  # many blocks to hash
    index = load_gps_tsv(GPS_FILE)
    assert index.sha256 == hashlib.sha256(GPS_FILE.read_bytes()).hexdigest()
    assert set(threading.enumerate()) - before == set()
    monkeypatch.setattr(gps_module, "GPS_MAX_ROWS", 5)
    path = tmp_path / GPS_NAME
    path.write_bytes(b"\n" * 6)  # found too long while it is read (and hashed)
    with pytest.raises(BadInputError):
        load_gps_tsv(path)
    assert set(threading.enumerate()) - before == set()


@pytest.mark.parametrize("blocked_before", [False, True])
def test_ctrl_c_is_held_back_while_the_hash_thread_starts_and_the_mask_is_put_back(
    monkeypatch: pytest.MonkeyPatch, blocked_before: bool
) -> None:
    """A Ctrl-C inside Thread.start could leave the thread running (not yet alive for
    ``close``) or break threading's lock: SIGINT is blocked while it starts, and the caller's
    signal mask is the same afterwards, SIGINT blocked or not (it was unblocked regardless)."""
    start = threading.Thread.start
    masks: list[set[signal.Signals]] = []

    def start_and_look(self: threading.Thread) -> None:
        masks.append(signal.pthread_sigmask(signal.SIG_BLOCK, set()))
        start(self)

    monkeypatch.setattr(threading.Thread, "start", start_and_look)
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT} if blocked_before else set())
    try:
        load_gps_tsv(GPS_FILE)
        after = signal.pthread_sigmask(signal.SIG_BLOCK, set())
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
    assert [signal.SIGINT in m for m in masks] == [True]
    assert (signal.SIGINT in after) is blocked_before
