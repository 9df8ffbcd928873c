"""Reading the GPS (file or zip) and RF2 snapshots (folder or zip) into one index (gps.py)."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest

from tempmedbench_synonyms.errors import BadInputError
from tempmedbench_synonyms.gps import ConceptIndex, load_gps_tsv, load_release

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
GPS_DIR = FIXTURES / "gps"
GPS_NAME = "SnomedINTL_GPSRelease_PRODUCTION_20990101T120000Z.txt"
GPS_FILE = GPS_DIR / GPS_NAME
RF2_DIR = GPS_DIR / "rf2"
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


def write(path: Path, text: str, *, bom: bool = False) -> Path:
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    return path


def gps(tmp_path: Path, *rows: str, header: str = HEADER, name: str = GPS_NAME) -> Path:
    return write(tmp_path / name, "\n".join([header, *rows]) + "\n")


# --------------------------------------------------------------------------------------------
# The fixtures


def test_gps_fixture_rows_and_source() -> None:
    index = load_release(GPS_FILE)
    concepts = index.to_dict()
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
    from_gps = load_release(GPS_FILE).to_dict()
    from_rf2 = load_release(RF2_DIR)
    assert from_rf2.to_dict() == from_gps
    assert from_rf2.kind == "rf2-folder"
    assert from_rf2.release_date == "20990101"
    assert from_rf2.sha256 is None  # a folder: each file's hash is in files
    assert [(Path(f.path).name, f.sha256) for f in from_rf2.files] == [
        (n, hashlib.sha256((RF2_DIR / n).read_bytes()).hexdigest()) for n in RF2_NAMES
    ]
    assert sorted(from_rf2.notes) == sorted(f"{RF2_DIR / n}: CRLF line ends" for n in RF2_NAMES)


def test_rf2_us_preferred_term_ignores_gb_rows() -> None:
    # The trap is really there: the GB refset marks "Haemovex anaemia" preferred in the same file.
    lang = (RF2_DIR / RF2_NAMES[2]).read_text("utf-8").splitlines()
    desc = (RF2_DIR / RF2_NAMES[1]).read_text("utf-8").splitlines()
    gb_id = next(r.split("\t")[0] for r in desc if r.split("\t")[7] == "Haemovex anaemia")
    assert any(
        r.split("\t")[4:] == ["900000000000508004", gb_id, "900000000000548007"] for r in lang
    )
    assert load_release(RF2_DIR).get("9000000002006") == (
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
    index = load_release(z)
    assert index.kind == "rf2-zip"
    assert index.to_dict() == load_release(GPS_FILE).to_dict()
    assert index.sha256 == hashlib.sha256(z.read_bytes()).hexdigest()
    assert index.files[1].member == f"{root}/Snapshot/Terminology/{RF2_NAMES[0]}"


def test_gps_zip_member_in_a_subfolder(tmp_path: Path) -> None:
    z = tmp_path / "SnomedINTL_GPSRelease_PRODUCTION_20990101T120000Z.zip"
    member = f"SnomedCT_GPS/Content/{GPS_NAME}"
    with zipfile.ZipFile(z, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("SnomedCT_GPS/Readme_en.pdf", b"not a table")
        zf.write(GPS_FILE, member)
    index = load_release(z)
    assert index.kind == "gps-zip"
    assert index.to_dict() == load_release(GPS_FILE).to_dict()
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
    assert len(load_release(z)) == 19


def test_gps_zip_with_two_tables_is_refused(tmp_path: Path) -> None:
    z = tmp_path / "gps.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.write(GPS_FILE, f"a/{GPS_NAME}")
        zf.write(GPS_FILE, f"b/{GPS_NAME}")
    with pytest.raises(BadInputError, match="2 of the members"):
        load_release(z)


def test_zip_with_neither_gps_nor_rf2(tmp_path: Path) -> None:
    z = tmp_path / "other.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("readme.txt", "hello\n")
    with pytest.raises(BadInputError) as exc:
        load_release(z)
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
    assert index.to_dict() == {
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
    assert load_gps_tsv(path).to_dict() == {
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
    assert load_gps_tsv(path).to_dict() == {
        "101": ("Alpha (disorder)", "Alpha", True),
        "102": ("Beta (disorder)", "", False),
    }


def test_quotes_are_ordinary_characters(tmp_path: Path) -> None:
    path = gps(tmp_path, '101\t1\t"Quoted" start (finding)\t"Quoted\'s" "end', '102\t1\ta"b\tc')
    assert load_gps_tsv(path).to_dict() == {
        "101": ('"Quoted" start (finding)', '"Quoted\'s" "end', True),
        "102": ('a"b', "c", True),
    }


def test_a_last_line_without_newline_is_read(tmp_path: Path) -> None:
    path = write(tmp_path / "g.txt", f"{HEADER}\n101\t1\tA (finding)\tA")
    assert load_gps_tsv(path).to_dict() == {"101": ("A (finding)", "A", True)}


def test_a_header_only_file_is_an_empty_release(tmp_path: Path) -> None:
    assert len(load_gps_tsv(write(tmp_path / "g.txt", HEADER + "\n"))) == 0


# --------------------------------------------------------------------------------------------
# What is refused, with file and line


def bad(path: Path) -> BadInputError:
    with pytest.raises(BadInputError) as exc:
        load_release(path)
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
            "1 tab-separated fields where the header has 4",
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
    assert err.problem.startswith("no RF2 language snapshot file")


def test_a_folder_with_only_the_gps_file_hints_at_the_file(tmp_path: Path) -> None:
    (tmp_path / GPS_NAME).write_bytes(GPS_FILE.read_bytes())
    err = bad(tmp_path)
    assert err.hint == "pass the GPS .txt file itself, not its folder"


RF2_CONCEPT = "id\teffectiveTime\tactive\tmoduleId\tdefinitionStatusId\n101\t20990101\t1\tm\td\n"
RF2_DESC_HEADER = (
    "id\teffectiveTime\tactive\tmoduleId\tconceptId\tlanguageCode\ttypeId\tterm\tcaseSignificanceId"
)
RF2_LANG_HEADER = (
    "id\teffectiveTime\tactive\tmoduleId\trefsetId\treferencedComponentId\tacceptabilityId"
)
FSN, SYN = "900000000000003001", "900000000000013009"
US, GB, PREF, ACC = "900000000000509007", "900000000000508004", "900000000000548007", "x"


def rf2(
    folder: Path, descs: list[tuple[str, str, str, str]], langs: list[tuple[str, str, str, str]]
) -> Path:
    """A tiny RF2 folder: descriptions (id, active, type, term) and language rows
    (active, refset, description id, acceptability) of concept 101."""
    folder.mkdir()
    (folder / "sct2_Concept_Snapshot_INT_20990101.txt").write_text(RF2_CONCEPT, "utf-8")
    (folder / "sct2_Description_Snapshot-en_INT_20990101.txt").write_text(
        "\n".join(
            [RF2_DESC_HEADER]
            + [f"{d}\t20990101\t{a}\tm\t101\ten\t{t}\t{term}\tc" for d, a, t, term in descs]
        )
        + "\n",
        "utf-8",
    )
    (folder / "der2_cRefset_LanguageSnapshot-en_INT_20990101.txt").write_text(
        "\n".join(
            [RF2_LANG_HEADER]
            + [f"u{i}\t20990101\t{a}\tm\t{r}\t{d}\t{acc}" for i, (a, r, d, acc) in enumerate(langs)]
        )
        + "\n",
        "utf-8",
    )
    return folder


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
    assert load_release(folder).to_dict() == {"101": ("Alpha (disorder)", "Alpha US", True)}


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
    assert load_release(folder).get("101") == ("Alpha (finding)", "Alpha", True)


def test_index_built_by_hand_decodes_rows() -> None:
    index = ConceptIndex(
        {"101": "1\tA (finding)\tA\r\n", "102": "0\tB (finding)\t\t\n"}, "t", "t", None, None
    )
    assert index.get("101") == ("A (finding)", "A", True)
    assert index.get("102") == ("B (finding)", "", False)
    assert "101" in index and "103" not in index


def test_rf2_bytes_that_are_not_utf8_name_file_and_line(tmp_path: Path) -> None:
    folder = rf2(tmp_path / "r", [("11", "1", FSN, "Alpha (disorder)")], [("1", US, "11", PREF)])
    desc = folder / "sct2_Description_Snapshot-en_INT_20990101.txt"
    desc.write_bytes(desc.read_bytes().replace(b"Alpha", b"Alph\xe9"))
    err = bad(folder)
    assert (err.path, err.line) == (str(desc), 2)
    # 11|20990101|1|m|101|en|900000000000003001| is 42 bytes, "Alph" 4 more: the bad byte is 47th.
    assert err.problem == "bytes that are not UTF-8 (invalid continuation byte at column 47)"
