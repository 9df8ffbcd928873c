"""The terminology commands of SPEC section 11 (``umls search``, ``cuis``, ``crosswalk``,
``definitions``, ``relations``, ``semantic-types``, ``source-concept``, ``hierarchy``,
``sources``, ``--preferred``), through CliRunner against the fake UTS serving the invented
``fixtures/umls`` files: what each prints, what it sends, many inputs at once, ``--file``,
JSON Lines, exit codes, the dry run.

Every expected value is read off the invented RRF rows by hand (quoted beside it), not from the
code under test."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from helpers import BASE, FIXTURES, behind_responses
from tempmedbench_synonyms import __version__
from tempmedbench_synonyms.cli.umls import umls_app
from tempmedbench_synonyms.testing import (
    CANARY_KEY,
    FakeUts,
    FakeUtsData,
    find_secret,
    invented_rows,
)

META = FIXTURES / "umls"


@pytest.fixture
def fake() -> Iterator[FakeUts]:
    uts = FakeUts(FakeUtsData.from_meta(META, release="2099AA"), api_key=CANARY_KEY)
    with behind_responses(uts):
        yield uts


def run(
    args: list[str], tmp_path: Path, *, key: str | None = CANARY_KEY, stdin: str | None = None
) -> Result:
    env = {"UMLS_BASE_URL": BASE, "TEMPMEDBENCH_CACHE_DIR": str(tmp_path / "cache"),
           "UMLS_API_KEY": key}  # fmt: skip
    return CliRunner().invoke(umls_app, args, env=env, input=stdin)


def sent(fake: FakeUts) -> list[tuple[str, dict[str, str]]]:
    """What the fake was asked: each request's path and its parameters but the key."""
    return [(s.path, {k: v for k, v in s.params if k != "apiKey"}) for s in fake.seen]


def lines(result: Result) -> list[dict[str, Any]]:
    return [json.loads(line) for line in result.stdout.splitlines()]


def table(result: Result) -> list[list[str]]:
    """The rows of a table, each cell apart (cells are separated by two spaces or more)."""
    import re

    return [re.split(r"\s{2,}", line.strip()) for line in result.stdout.splitlines()]


# -- search ------------------------------------------------------------------------------------


def test_search_prints_ui_name_and_source_in_utss_order_and_sends_pagesize_25(
    fake: FakeUts, tmp_path: Path
) -> None:
    # MRCONSO.RRF: C9000001's SNOMEDCT_US PT "Zephyr fever" (A9000011, SUPPRESS N) holds both
    # words; a search of words sends no pageCount-led paging, pageSize = the limit (25).
    result = run(["search", "zephyr fever", "--umls-release", "2099AA"], tmp_path)
    assert result.exit_code == 0, result.stderr
    assert table(result) == [["UI", "NAME", "SOURCE"], ["C9000001", "Zephyr fever", "SNOMEDCT_US"]]
    assert result.stderr == "1 result for words search for 'zephyr fever', UMLS 2099AA\n"
    assert sent(fake) == [
        ("/search/2099AA", {"string": "zephyr fever", "searchType": "words", "pageSize": "25"}),
    ]  # fmt: skip


def test_search_options_are_sent_under_utss_own_names(fake: FakeUts, tmp_path: Path) -> None:
    args = ["search", "fever", "--umls-release", "2099AA", "--search-type", "exact",
            "--input-type", "sourceUi", "--return-id-type", "code", "--sabs", "SNOMEDCT_US,MSH",
            "--semantic-types", "T901", "--semantic-types", "T902", "--partial",
            "--include-obsolete", "--include-suppressible", "--limit", "3", "--json"]  # fmt: skip
    result = run(args, tmp_path)
    assert result.exit_code == 1, result.stderr  # nothing is coded "fever"
    (params,) = [p for _, p in sent(fake)]
    assert params == {
        "string": "fever", "searchType": "exact", "inputType": "sourceUi",
        "returnIdType": "code", "sabs": "SNOMEDCT_US,MSH", "semanticTypes": "T901|T902",
        "partialSearch": "true", "includeObsolete": "true", "includeSuppressible": "true",
        "pageSize": "3",
    }  # fmt: skip


def test_many_terms_from_arguments_and_a_file_in_input_order(fake: FakeUts, tmp_path: Path) -> None:
    terms = tmp_path / "terms.txt"
    # a CRLF line, a blank line, a line of spaces: the CR is dropped, blank lines skipped
    terms.write_bytes(b"wind\r\n\n   \nnosuchword\n")
    result = run(["search", "Zephyr fever", "--file", str(terms), "--umls-release", "2099AA",
                  "-q"], tmp_path)  # fmt: skip
    assert result.exit_code == 1  # the highest of 0, 0, 1
    # MRCONSO.RRF: "Wind fever" is C9000091's SNOMEDCT_US PT (A9000911)
    assert table(result) == [
        ["INPUT", "UI", "NAME", "SOURCE"],
        ["Zephyr fever", "C9000001", "Zephyr fever", "SNOMEDCT_US"],
        ["wind", "C9000091", "Wind fever", "SNOMEDCT_US"],
    ]
    # -q: only errors, and "not found" is none (the exit code says it)
    assert result.stderr == ""
    # asked at once (on workers): in any order, each once
    assert sorted(p["string"] for _, p in sent(fake)) == ["Zephyr fever", "nosuchword", "wind"]


def test_json_lines_one_an_input_in_input_order_also_from_standard_input(
    fake: FakeUts, tmp_path: Path
) -> None:
    result = run(["search", "--file", "-", "--umls-release", "2099AA", "--json", "-q"],
                 tmp_path, stdin="nosuchword\nwind\n")  # fmt: skip
    assert result.exit_code == 1
    first, second = lines(result)
    assert len(result.stdout.splitlines()) == 2
    assert first == {
        "input": "nosuchword", "outcome": "not_found", "exit_code": 1, "release": "2099AA",
        "query": "words search for 'nosuchword'", "results": [], "truncated": False,
        "message": "UMLS 2099AA has no results for the words search for 'nosuchword'",
        "hint": "check the spelling, or try another --search-type (normalizedWords matches "
        "word forms) or fewer --sabs",
        "warnings": [], "schema_version": 1, "tool_version": __version__,
    }  # fmt: skip
    assert (second["input"], second["outcome"], second["exit_code"]) == ("wind", "found", 0)
    (hit,) = second["results"]
    assert (hit["ui"], hit["name"], hit["rootSource"]) == ("C9000091", "Wind fever", "SNOMEDCT_US")


def test_no_input_is_bad_input(fake: FakeUts, tmp_path: Path) -> None:
    result = run(["search"], tmp_path)
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (
        "error: no input: give it as arguments, or one a line in --file PATH\n"
        "hint: see --help for an example\n"
    )
    assert fake.seen == []


@pytest.mark.parametrize("content", ["", "\n  \n\r\n"], ids=["empty", "blank-lines"])
def test_a_file_without_input_says_so(fake: FakeUts, tmp_path: Path, content: str) -> None:
    """An empty --file (a grep that found nothing, piped in) is named as the empty file, not
    answered as if no --file had been given."""
    empty = tmp_path / "terms.txt"
    empty.write_text(content, encoding="utf-8")
    for args, stdin, shown in ((["--file", str(empty)], None, str(empty)),
                               (["--file", "-"], content, "-")):  # fmt: skip
        result = run(["search", *args, "--json"], tmp_path, stdin=stdin)
        message = f"{shown}: --file holds no input: it is empty, or has only blank lines"
        hint = "give one input a line, or give them as arguments"
        assert (result.exit_code, result.stderr) == (2, f"error: {message}\nhint: {hint}\n")
        (doc,) = lines(result)
        assert (doc["outcome"], doc["message"], doc["hint"]) == ("bad_input", message, hint)
    assert fake.seen == []
    assert not (tmp_path / "cache").exists()


def test_a_file_saved_with_a_byte_order_mark_and_crlf_reads_as_its_inputs(
    fake: FakeUts, tmp_path: Path
) -> None:
    """A file from Windows Notepad or Excel ("CSV UTF-8") starts with U+FEFF: its first input is
    the CUI or SAB written, not one refused for a character nobody sees."""
    content = "\ufeffC9000001\r\nC9000091\r\n"
    cuis = tmp_path / "cuis.txt"
    cuis.write_bytes(content.encode("utf-8"))
    for args, stdin in ((["--file", str(cuis)], None), (["--file", "-"], content)):
        result = run(["concept", *args, "--umls-release", "2099AA", "--json"], tmp_path,
                     stdin=stdin)  # fmt: skip
        assert result.exit_code == 0, result.stderr
        assert [(d["input"], d["outcome"]) for d in lines(result)] == [
            ("C9000001", "found"), ("C9000091", "found"),
        ]  # fmt: skip
    codes = tmp_path / "codes.tsv"
    codes.write_bytes("\ufeffSNOMEDCT_US\t9990101009\r\n".encode())
    coded = run(["cuis", "--file", str(codes), "--umls-release", "2099AA", "--json"], tmp_path)
    assert coded.exit_code == 0, coded.stderr
    assert [(d["input"], d["outcome"]) for d in lines(coded)] == [
        ("SNOMEDCT_US 9990101009", "found")
    ]


def test_a_file_that_is_not_utf8_or_missing_is_bad_input_and_nothing_is_sent(
    fake: FakeUts, tmp_path: Path
) -> None:
    latin = tmp_path / "latin1.txt"
    latin.write_bytes(b"fi\xe8vre\n")
    result = run(["search", "--file", str(latin)], tmp_path)
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (
        f"error: {latin}, line 1: the line is not UTF-8 text (byte 0xe8 at byte 3)\n"
        "hint: save the file as UTF-8 (in Excel: CSV UTF-8)\n"
    )  # (a file of several lines: tests/cli/test_cli_umls_file.py)
    missing = run(["search", "--file", str(tmp_path / "none.txt")], tmp_path)
    assert missing.exit_code == 2
    assert str(tmp_path / "none.txt") in missing.stderr.splitlines()[0]
    assert fake.seen == []
    assert not (tmp_path / "cache").exists()


# -- source codes: cuis, crosswalk, source-concept ----------------------------------------------


def test_cuis_of_codes_given_as_sab_code_and_as_sab_tab_code_lines(
    fake: FakeUts, tmp_path: Path
) -> None:
    codes = tmp_path / "codes.tsv"
    codes.write_text("MSH\tD990091\nSNOMEDCT_US\t123\n", encoding="utf-8")
    result = run(["cuis", "SNOMEDCT_US", "9990101009", "--file", str(codes),
                  "--umls-release", "2099AA", "-q"], tmp_path)  # fmt: skip
    assert result.exit_code == 1
    # MRCONSO.RRF: SNOMEDCT_US 9990101009 is in C9000001 (PT "Zephyr fever"); MSH D990091 in
    # C9000091 ("Wind fever"); no atom has code 123
    assert table(result) == [
        ["INPUT", "UI", "NAME", "SOURCE"],
        ["SNOMEDCT_US 9990101009", "C9000001", "Zephyr fever", "SNOMEDCT_US"],
        ["MSH D990091", "C9000091", "Wind fever", "SNOMEDCT_US"],
    ]
    assert result.stderr == ""  # -q: SNOMEDCT_US 123 not found is said by the exit code alone
    # the three inputs are asked on worker threads: which request comes first is not fixed
    assert sorted(sent(fake), key=lambda request: request[1]["string"]) == [
        ("/search/2099AA", {"string": code, "inputType": "sourceUi", "searchType": "exact",
                            "sabs": sab, "pageSize": "200"})
        for code, sab in (("123", "SNOMEDCT_US"), ("9990101009", "SNOMEDCT_US"),
                          ("D990091", "MSH"))
    ]  # fmt: skip


def test_a_file_line_without_a_tab_needs_the_sab_argument(fake: FakeUts, tmp_path: Path) -> None:
    codes = tmp_path / "codes.txt"
    codes.write_text("\n9990101009\n", encoding="utf-8")
    alone = run(["cuis", "--file", str(codes)], tmp_path)
    assert alone.exit_code == 2
    assert alone.stderr.splitlines()[0] == (
        f"error: {codes}, line 2: '9990101009' is not SAB<TAB>CODE"
    )
    assert fake.seen == []
    with_sab = run(["cuis", "SNOMEDCT_US", "--file", str(codes), "--umls-release", "2099AA"],
                   tmp_path)  # fmt: skip
    assert with_sab.exit_code == 0, with_sab.stderr
    assert table(with_sab)[1] == ["C9000001", "Zephyr fever", "SNOMEDCT_US"]


def test_crosswalk_the_codes_of_other_sources_sharing_the_concept(
    fake: FakeUts, tmp_path: Path
) -> None:
    # MRCONSO.RRF: C9000090 holds SNOMEDCT_US 9990191001 "Meteoric disorder", MSH D990090,
    # NCI C990090 and SCTSPA 9990191001; --target-sabs keeps MSH and NCI
    result = run(["crosswalk", "SNOMEDCT_US", "9990191001", "--target-sabs", "MSH,NCI",
                  "--umls-release", "2099AA"], tmp_path)  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert table(result) == [
        ["UI", "NAME", "SOURCE"],
        ["D990090", "Meteoric Disorders", "MSH"],
        ["C990090", "Meteoric Disorder", "NCI"],
    ]
    assert sent(fake) == [
        ("/crosswalk/2099AA/source/SNOMEDCT_US/9990191001",
         {"targetSource": "MSH,NCI", "pageSize": "200"}),
    ]  # fmt: skip


def test_source_concept_prints_its_name_obsolete_count_and_links(
    fake: FakeUts, tmp_path: Path
) -> None:
    result = run(["source-concept", "SNOMEDCT_US", "9990101009", "--umls-release", "2099AA"],
                 tmp_path)  # fmt: skip
    assert result.exit_code == 0, result.stderr
    # MRCONSO.RRF: 7 SNOMEDCT_US atoms of code 9990101009 (A9000011..A9000017, French one too);
    # SPEC 12: a hierarchy or relations link exactly where MRHIER or MRREL has an entry (a leaf:
    # no children, no descendants), no attributes
    assert table(result) == [
        ["UI", "NAME", "SOURCE", "OBSOLETE", "ATOMS", "LINKS"],
        ["9990101009", "Zephyr fever", "SNOMEDCT_US", "no", "7",
         "atoms parents ancestors relations concepts defaultPreferredAtom"],
    ]  # fmt: skip
    assert result.stderr == "found SNOMEDCT_US code 9990101009, UMLS 2099AA\n"


# -- concepts: definitions, relations, semantic types ---------------------------------------------


def test_definitions_of_several_concepts(fake: FakeUts, tmp_path: Path) -> None:
    result = run(["definitions", "C9000001", "C9000090", "--umls-release", "2099AA", "-q"],
                 tmp_path)  # fmt: skip
    assert result.exit_code == 0, result.stderr
    # MRDEF.RRF, rows of C9000001 (MTH) and C9000090 (MSH, NCI)
    assert table(result) == [
        ["INPUT", "SOURCE", "DEFINITION"],
        ["C9000001", "MTH", "An invented fever said to follow a warm west wind; it stands for no "
         "real condition."],
        ["C9000090", "MSH", "An invented disorder of the test data, said to follow changes in the "
         "weather."],
        ["C9000090", "NCI", "A made-up condition brought on by invented weather; no such disorder "
         "exists."],
    ]  # fmt: skip
    assert result.stderr == ""
    only = run(["definitions", "C9000090", "--sabs", "NCI", "--umls-release", "2099AA"],
               tmp_path)  # fmt: skip
    assert [row[0] for row in table(only)[1:]] == ["NCI"]
    assert sent(fake)[-1] == (
        "/content/2099AA/CUI/C9000090/definitions", {"sabs": "NCI", "pageSize": "200"},
    )  # fmt: skip


def test_relations_of_a_code_as_uts_gives_them_and_labels_sent(
    fake: FakeUts, tmp_path: Path
) -> None:
    # MRREL.RRF: the SCUI row A9000911 -> A9000011 CHD isa (the inverse of the row A9000011
    # PAR inverse_isa A9000911): 9990101009's parent is 9990192008
    result = run(["relations", "--source", "SNOMEDCT_US", "9990101009", "--relation-labels",
                  "CHD", "--umls-release", "2099AA"], tmp_path)  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert table(result) == [
        ["FROM", "LABEL", "ADDITIONAL", "TO", "SOURCE"],
        ["9990101009", "CHD", "isa", "9990192008", "SNOMEDCT_US"],
    ]
    assert sent(fake) == [
        ("/content/2099AA/source/SNOMEDCT_US/9990101009/relations",
         {"includeRelationLabels": "CHD", "pageSize": "200"}),
    ]  # fmt: skip


def test_relations_source_and_aui_together_is_a_usage_error(fake: FakeUts, tmp_path: Path) -> None:
    result = run(["relations", "--source", "--aui", "A9000011"], tmp_path)
    assert result.exit_code == 2
    assert "--source and --aui contradict each other: pick one" in result.stderr
    assert fake.seen == []


def test_semantic_types_and_their_details(fake: FakeUts, tmp_path: Path) -> None:
    # MRSTY.RRF: C9000001 is T901 "Invented Disorder" (B9.1) and T902 "Invented Weather
    # Finding" (B9.1.1); without --details the tree number is not asked for
    plain = run(["semantic-types", "C9000001", "--umls-release", "2099AA"], tmp_path)
    assert plain.exit_code == 0, plain.stderr
    assert table(plain) == [
        ["NAME", "TUI"],  # no TREE column, empty without --details
        ["Invented Disorder", "T901"],
        ["Invented Weather Finding", "T902"],
    ]
    assert [p for p, _ in sent(fake)] == ["/content/2099AA/CUI/C9000001"]
    details = run(["semantic-types", "C9000001", "--details", "--umls-release", "2099AA",
                   "--json"], tmp_path)  # fmt: skip
    (doc,) = lines(details)
    assert [(t["name"], t["treeNumber"]) for t in doc["results"]] == [
        ("Invented Disorder", "B9.1"), ("Invented Weather Finding", "B9.1.1")
    ]  # fmt: skip
    assert [p for p, _ in sent(fake)][1:] == [
        "/semantic-network/2099AA/TUI/T901",
        "/semantic-network/2099AA/TUI/T902",
    ]  # fmt: skip  (the concept came from the cache)


# -- hierarchy ---------------------------------------------------------------------------------


def test_hierarchy_needs_one_direction(fake: FakeUts, tmp_path: Path) -> None:
    result = run(["hierarchy", "SNOMEDCT_US", "9990101009"], tmp_path)
    assert result.exit_code == 2
    assert "give one of --parents, --children, --ancestors, --descendants" in result.stderr
    # two of them: tests/cli/test_cli_umls_messages.py
    assert fake.seen == []


def test_hierarchy_of_a_code_and_of_an_hl7_atom(fake: FakeUts, tmp_path: Path) -> None:
    # MRHIER.RRF: A9000011 (9990101009) has the path A9000901.A9000911: its parent is
    # 9990192008 "Wind fever", its ancestors that and 9990191001 "Meteoric disorder"
    ancestors = run(["hierarchy", "SNOMEDCT_US", "9990101009", "--ancestors",
                     "--umls-release", "2099AA"], tmp_path)  # fmt: skip
    assert ancestors.exit_code == 0, ancestors.stderr
    assert table(ancestors) == [
        ["UI", "NAME", "SOURCE"],  # codes: no AUI column
        ["9990192008", "Wind fever", "SNOMEDCT_US"],
        ["9990191001", "Meteoric disorder", "SNOMEDCT_US"],
    ]
    # MRHIER.RRF: the HL7V3.0 atom A9000703's parent is the atom A9000921, an Atom result
    # named by the last segment of its code link, its AUI given too
    hl7 = run(["hierarchy", "--aui", "A9000703", "--parents", "--umls-release", "2099AA"],
              tmp_path)  # fmt: skip
    assert hl7.exit_code == 0, hl7.stderr
    assert table(hl7) == [
        ["UI", "NAME", "SOURCE", "AUI"],
        ["_InventedEncounterCode", "InventedEncounterCode", "HL7V3.0", "A9000921"],
    ]
    assert [p for p, _ in sent(fake)] == [
        "/content/2099AA/source/SNOMEDCT_US/9990101009/ancestors",
        "/content/2099AA/AUI/A9000703/parents",
    ]


# -- sources, preferred atoms ------------------------------------------------------------------


def test_sources_are_asked_without_a_key_and_need_none(fake: FakeUts, tmp_path: Path) -> None:
    result = run(["sources", "--umls-release", "2099AA"], tmp_path, key=None)
    assert result.exit_code == 0, result.stderr
    rows = table(result)
    assert rows[0] == ["ABBREVIATION", "FAMILY", "LANGUAGE", "RESTRICTION"]
    # MRSAB.RRF: 12 rows, one of them an older version of a source (CURVER N): 11 sources
    assert len(rows) == 12
    assert rows[1] == ["HL7V3.0", "HL7V3.0", "ENG", "0"]
    assert ["SCTSPA", "SCTSPA", "SPA", "9"] in rows
    assert result.stderr == "11 sources of UMLS 2099AA\n"
    assert [(s.path, s.key_sent) for s in fake.seen] == [("/metadata/2099AA/sources", False)]


def test_the_preferred_atom_sends_only_the_key(fake: FakeUts, tmp_path: Path) -> None:
    result = run(["atoms", "C9000001", "--preferred", "--umls-release", "2099AA"], tmp_path)
    assert result.exit_code == 0, result.stderr
    assert table(result)[1][:2] == ["A9000011", "SNOMEDCT_US"]
    assert result.stderr == "found preferred atom of CUI C9000001, UMLS 2099AA\n"
    assert sent(fake) == [("/content/2099AA/CUI/C9000001/atoms/preferred", {})]
    code = run(["source", "SNOMEDCT_US", "9990101009", "--preferred", "--umls-release",
                "2099AA", "--json"], tmp_path)  # fmt: skip
    (doc,) = lines(code)
    assert [a["aui"] for a in doc["atoms"]] == ["A9000011"]
    assert sent(fake)[-1] == ("/content/2099AA/source/SNOMEDCT_US/9990101009/atoms/preferred", {})


# -- many at once: per-input bad input, the exit code, the batch-ending errors, the dry run ------


def test_a_bad_input_among_good_ones_is_its_own_answer(fake: FakeUts, tmp_path: Path) -> None:
    result = run(["concept", "C9000001", "XYZ", "C0000001", "--umls-release", "2099AA",
                  "--json", "-q"], tmp_path)  # fmt: skip
    assert result.exit_code == 2  # the highest of 0, 2, 1
    found, bad, missing = lines(result)
    assert (found["outcome"], found["concept"]["name"]) == ("found", "Zephyr fever")
    assert (bad["input"], bad["outcome"], bad["exit_code"]) == ("XYZ", "bad_input", 2)
    assert bad["message"] == (
        "CUI 'XYZ' is not a UMLS concept identifier: expected C and 7 digits, such as C0020538"
    )
    assert (missing["outcome"], missing["concept"]) == ("not_found", None)
    paths = [p for p, _ in sent(fake)]  # asked at once, on workers: in any order...
    assert sorted(paths) == [
        "/content/2099AA/CUI/C0000001",
        "/content/2099AA/CUI/C9000001",
        "/metadata/2099AA/sources",
    ]  # fmt: skip  (XYZ was never sent)
    # ...but the first 404 is checked after it came
    assert paths.index("/metadata/2099AA/sources") > paths.index("/content/2099AA/CUI/C0000001")
    assert result.stderr == (
        "error: XYZ: CUI 'XYZ' is not a UMLS concept identifier: expected C and 7 digits, such "
        "as C0020538\n"
    )  # -q: C0000001 not found is said by the exit code alone


def test_a_refused_key_ends_the_batch_at_once_exit_3(fake: FakeUts, tmp_path: Path) -> None:
    wrong = "not-" + CANARY_KEY
    result = run(["definitions", "C9000001", "C9000090", "--umls-release", "2099AA", "--json",
                  "--workers", "1"], tmp_path, key=wrong)  # fmt: skip
    assert result.exit_code == 3
    (doc,) = lines(result)
    assert (doc["outcome"], doc["exit_code"], doc["input"], doc["results"]) == (
        "not_authorised", 3, None, []
    )  # fmt: skip
    assert len(fake.seen) == 1  # the second input was never asked
    assert find_secret(wrong, texts={"out": result.stdout + result.stderr},
                       folders=[tmp_path]) == []  # fmt: skip


def test_a_file_or_standard_input_larger_than_the_limit_is_refused_unread(
    fake: FakeUts, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An endless standard input (``yes | ...``) or a huge file is bad input once it passes the
    limit (here made 100 bytes): nothing is asked, nothing cached."""
    from tempmedbench_synonyms.cli import umls as cli_umls

    monkeypatch.setattr(cli_umls, "INPUT_FILE_MAX", 100)
    big = "C9000001\n" * 12  # 108 bytes
    piped = run(["concept", "--file", "-", "--umls-release", "2099AA"], tmp_path, stdin=big)
    assert (piped.exit_code, piped.stdout) == (2, "")
    assert piped.stderr == (
        "error: -: --file is larger than 100 bytes\nhint: split the inputs into several runs\n"
    )
    path = tmp_path / "cuis.txt"
    path.write_text(big, encoding="utf-8")
    named = run(["concept", "--file", str(path), "--umls-release", "2099AA"], tmp_path)
    assert (named.exit_code, named.stderr) == (
        2,
        f"error: {path}: --file is larger than 100 bytes\n",
    )
    assert fake.seen == [] and not (tmp_path / "cache").exists()
    exact = run(["concept", "--file", "-", "--umls-release", "2099AA", "-q"], tmp_path,
                stdin="C9000001\n" * 11 + "\n")  # 100 bytes: read  # fmt: skip
    assert exact.exit_code == 0, exact.stderr
    assert [s.path for s in fake.seen] == ["/content/2099AA/CUI/C9000001"]  # 11 as one


def test_a_batch_that_cannot_share_the_rate_budget_says_so_in_each_json_line(
    fake: FakeUts, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 17 item 12, for the umls commands: a CI job run ``-q --json`` learns that its runs
    do not share a budget (a state folder others can write), as a regeneration's report says."""
    state = tmp_path / "shared-state"
    state.mkdir()
    state.chmod(0o777)
    monkeypatch.setenv("TEMPMEDBENCH_STATE_DIR", str(state))
    result = run(["definitions", "C9000001", "C9000090", "--umls-release", "2099AA", "--json",
                  "-q"], tmp_path)  # fmt: skip
    assert (result.exit_code, result.stderr) == (0, "")
    warning = (
        f"{state}: the rate-state folder can be written by other users (mode 0777), so what it "
        f"holds cannot be trusted; chmod go-w {state}, or use a folder of your own "
        "(TEMPMEDBENCH_STATE_DIR); the rate limit holds for this process only, not for other "
        "runs on this machine"
    )
    assert [doc["warnings"] for doc in lines(result)] == [[warning], [warning]]
    assert list(state.iterdir()) == []  # nothing written there


def test_a_batch_ended_early_still_shows_the_table_of_the_answers_before_the_end(
    fake: FakeUts, tmp_path: Path
) -> None:
    """C9000001 is answered from the cache; C9000090 needs a request, which the wrong key ends
    (exit 3): the table holds the first input's rows, as --json holds its line."""
    assert run(["definitions", "C9000001", "--umls-release", "2099AA"], tmp_path).exit_code == 0
    wrong = "not-" + CANARY_KEY
    result = run(["definitions", "C9000001", "C9000090", "--umls-release", "2099AA"], tmp_path,
                 key=wrong)  # fmt: skip
    assert result.exit_code == 3
    # MRDEF.RRF: C9000001's one definition, from MTH
    assert table(result) == [
        ["INPUT", "SOURCE", "DEFINITION"],
        ["C9000001", "MTH", "An invented fever said to follow a warm west wind; it stands for "
         "no real condition."],
    ]  # fmt: skip
    assert result.stderr.splitlines()[-2] == (
        "error: UMLS answered HTTP 401 for /content/2099AA/CUI/C9000090/definitions: the API key "
        "is missing, invalid or expired"
    )
    assert find_secret(wrong, texts={"out": result.stdout + result.stderr},
                       folders=[tmp_path]) == []  # fmt: skip


def test_dry_run_sends_and_writes_nothing_and_counts_the_cache(
    fake: FakeUts, tmp_path: Path
) -> None:
    args = ["definitions", "C9000001", "C9000090", "--umls-release", "2099AA"]
    cold = run([*args, "--dry-run"], tmp_path)
    assert (cold.exit_code, cold.stdout) == (0, "")
    assert cold.stderr == (
        "dry run: 2 inputs: 0 answered by the cache, 2 to fetch, about 1 s at 15 requests a "
        "second\n"
    )
    assert fake.seen == []
    assert not (tmp_path / "cache").exists()
    assert not (tmp_path / "state").exists()  # no rate state either (conftest puts it there)
    run([args[0], "C9000001", *args[3:]], tmp_path)
    warm = run([*args, "--dry-run", "--json"], tmp_path)
    (doc,) = lines(warm)
    assert (doc["outcome"], doc["exit_code"]) == ("planned", 0)
    assert (doc["plan"]["inputs"], doc["plan"]["cached"], doc["plan"]["to_fetch"]) == (2, 1, 1)
    assert len(fake.seen) == 1


# -- a hostile server: its strings reach no terminal raw -------------------------------------------


def test_a_servers_escapes_in_results_are_shown_harmlessly(tmp_path: Path) -> None:
    """(A body that echoes the key is refused whole: tests/uts/test_hostile.py.)"""
    import responses

    name = "Evil\x1b[2J\x9b31m fever"
    body = {"pageSize": 25, "pageNumber": 1, "result": {"classType": "searchResults", "results": [
        {"ui": "C9000001", "rootSource": "MTH\x1b]0;title\x07", "name": name,
         "uri": f"{BASE}/content/2099AA/CUI/C9000001"},
    ]}}  # fmt: skip
    with responses.RequestsMock() as rsps:
        rsps.get(f"{BASE}/search/2099AA", json=body)
        shown = run(["search", "evil", "--umls-release", "2099AA"], tmp_path)
        as_json = run(["search", "evil", "--umls-release", "2099AA", "--json", "--refresh"],
                      tmp_path)  # fmt: skip
    assert shown.exit_code == 0, shown.stderr
    assert table(shown)[1] == ["C9000001", "Evil fever", "MTH"]  # what the escapes would show
    (doc,) = lines(as_json)
    # JSON keeps the text as sent, every control character written as a \\u escape
    assert (doc["results"][0]["name"], doc["results"][0]["rootSource"]) == (
        name, "MTH\x1b]0;title\x07"
    )  # fmt: skip
    for out in (shown, as_json):
        assert not any(c in out.stdout + out.stderr for c in "\x1b\x9b\x07")
    assert find_secret(CANARY_KEY, texts={"table": shown.stdout + shown.stderr,
                                          "json": as_json.stdout + as_json.stderr},
                       folders=[tmp_path]) == []  # fmt: skip


# -- the review of SPEC 11: rules that no test above held ------------------------------------------


def test_the_release_is_current_unless_given_resolved_once_before_the_inputs(
    fake: FakeUts, tmp_path: Path
) -> None:
    """A command on CUIs resolves ``current`` by section 3's probe of the first CUI; one on
    codes from the links of its first answer; every answer names the concrete release."""
    result = run(["definitions", "C9000001", "C9000090", "--json", "-q"], tmp_path / "a")
    assert result.exit_code == 0, result.stderr
    assert [(d["input"], d["release"]) for d in lines(result)] == [
        ("C9000001", "2099AA"), ("C9000090", "2099AA"),
    ]  # fmt: skip
    paths = [p for p, _ in sent(fake)]
    assert paths[0] == "/content/current/CUI/C9000001"  # the probe, before the inputs
    assert sorted(paths[1:]) == [
        "/content/2099AA/CUI/C9000001/definitions",
        "/content/2099AA/CUI/C9000090/definitions",
    ]
    fake.seen.clear()
    walked = run(["crosswalk", "SNOMEDCT_US", "9990191001", "9990192008", "--json", "-q"],
                 tmp_path / "b")  # fmt: skip
    assert walked.exit_code == 0, walked.stderr
    assert [d["release"] for d in lines(walked)] == ["2099AA", "2099AA"]
    assert [p for p, _ in sent(fake)] == [
        "/crosswalk/current/source/SNOMEDCT_US/9990191001",  # its links name 2099AA
        "/crosswalk/2099AA/source/SNOMEDCT_US/9990192008",
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["concept"], "UMLS current has no concept C9999999 (404 Not Found)"),
        (["semantic-types"], "UMLS current has no semantic types of CUI C9999999 (404 Not Found)"),
        (["semantic-types", "--details"],
         "UMLS current has no semantic types of CUI C9999999 (404 Not Found)"),
    ],
    ids=["concept", "semantic-types", "details"],
)  # fmt: skip
def test_an_unknown_cui_in_current_is_asked_once_not_again_after_its_probe(
    fake: FakeUts, tmp_path: Path, args: list[str], message: str
) -> None:
    """audit-client L13: with a fresh cache, the probe of C9999999 is the concept's own
    request; its 404 (checked by /metadata) is the answer, not asked a second time."""
    result = run([*args, "C9999999"], tmp_path)
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == f"{message}\nhint: check the CUI (C and 7 digits, such as C0020538)\n"
    assert [(s.path, s.status) for s in fake.seen] == [
        ("/content/current/CUI/C9999999", 404),
        ("/metadata/current/sources", 200),
    ]


def test_a_release_uts_does_not_serve_is_unavailable_exit_4_and_nothing_is_cached(
    fake: FakeUts, tmp_path: Path
) -> None:
    result = run(["definitions", "C9000001", "--umls-release", "2000AA", "--json"], tmp_path)
    assert result.exit_code == 4
    (doc,) = lines(result)
    assert (doc["input"], doc["outcome"], doc["exit_code"], doc["results"]) == (
        None, "unavailable", 4, [],
    )  # fmt: skip
    assert doc["message"] == (
        f"UMLS release 2000AA is not served at {BASE}: a request answered 404 Not Found, and so "
        "did /metadata/2000AA/sources"
    )
    assert doc["hint"].startswith("check --umls-release: UTS serves only some releases")
    assert [(s.path, s.key_sent) for s in fake.seen] == [
        ("/content/2000AA/CUI/C9000001/definitions", True),
        ("/metadata/2000AA/sources", False),  # the one request sent without the key
    ]
    assert not list((tmp_path / "cache").rglob("*.json"))


WRONG_BASE_ERROR = (
    "error: https://uts.invalid/xyz answered HTTP 401 for /metadata/current/sources, a request "
    "sent without the API key: this does not look like the UMLS REST API\n"
    "hint: check --base-url (or UMLS_BASE_URL): the default is https://uts-ws.nlm.nih.gov/rest, "
    "and a UTS base URL ends in /rest\n"
)


@pytest.mark.parametrize(
    ("args", "first"),
    [
        (["concept", "C9000001"], "/xyz/content/current/CUI/C9000001"),
        (["search", "invented"], "/xyz/search/current"),
        (["sources"], None),
    ],
    ids=["concept", "search", "sources"],
)
def test_a_wrong_base_url_is_unavailable_naming_it_not_blamed_on_the_key(
    tmp_path: Path, args: list[str], first: str | None
) -> None:
    """audit-client M1: behind a base URL without /rest, UTS's JSON 404 for the lookup sends
    SPEC 11's check, ``/metadata/current/sources``, which goes without the key; its 401 was
    "the API key is missing, invalid or expired" (exit 3). It is unavailable (exit 4)."""
    uts = FakeUts(FakeUtsData.from_lines(invented_rows(2)), api_key=CANARY_KEY)
    with behind_responses(uts, base_url="https://uts.invalid"):
        result = run([*args, "--base-url", "https://uts.invalid/xyz"], tmp_path)
    assert (result.exit_code, result.stdout, result.stderr) == (4, "", WRONG_BASE_ERROR)
    assert [(s.path, s.status, s.key_sent) for s in uts.seen] == [
        *([(first, 404, True)] if first else []),
        ("/xyz/metadata/current/sources", 401, False),  # the key is never sent there
    ]
    assert not list((tmp_path / "cache").rglob("*.json"))
    texts = {"stdout": result.stdout, "stderr": result.stderr}
    assert find_secret(CANARY_KEY, texts=texts, folders=[tmp_path]) == []


def test_a_cut_answer_says_truncated_and_limit_0_is_no_cap(fake: FakeUts, tmp_path: Path) -> None:
    # MRCONSO.RRF: "fever" is a word of C9000001's and C9000091's atoms
    cut = run(["search", "fever", "--limit", "1", "--umls-release", "2099AA", "--json"], tmp_path)
    assert cut.exit_code == 0, cut.stderr
    (doc,) = lines(cut)
    assert ([r["ui"] for r in doc["results"]], doc["truncated"]) == (["C9000001"], True)
    assert doc["message"] == (
        "1 result for words search for 'fever', UMLS 2099AA; --limit 1 cut it"
    )
    whole = run(["search", "fever", "--limit", "0", "--umls-release", "2099AA", "--json"],
                tmp_path)  # fmt: skip
    (doc,) = lines(whole)
    assert ([r["ui"] for r in doc["results"]], doc["truncated"]) == (
        ["C9000001", "C9000091"], False,
    )  # fmt: skip
    assert [p["pageSize"] for _, p in sent(fake)] == ["1", "200"]


@pytest.fixture
def clamped() -> Iterator[FakeUts]:
    """The fake UTS paging in 3s whatever ``pageSize`` is asked (its envelope says 3), serving
    11 invented concepts of one SNOMEDCT_US PT each (``invented_rows``: "invented ... k", plus
    an MTH PN), C9000001 with 8 SNOMEDCT_US atoms, the last suppressible."""
    rows = invented_rows(11, atoms_per_concept=1, atoms_of=lambda k: 8 if k == 0 else 1)
    uts = FakeUts(FakeUtsData.from_lines(rows), api_key=CANARY_KEY, max_page_size=3)
    with behind_responses(uts):
        yield uts


def test_a_server_that_pages_smaller_than_asked_loses_no_result(
    clamped: FakeUts, tmp_path: Path
) -> None:
    """audit-client H1: asked 200 a page and given 3, search took page 1 for the last (3 of
    11, not truncated). SPEC 11: full means the envelope's ``pageSize``."""
    whole = run(["search", "invented", "--limit", "0", "--umls-release", "2099AA", "--json"],
                tmp_path)  # fmt: skip
    assert whole.exit_code == 0, whole.stderr
    (doc,) = lines(whole)
    assert ([r["ui"] for r in doc["results"]], doc["truncated"]) == (
        [f"C90000{k:02d}" for k in range(1, 12)], False,
    )  # fmt: skip
    assert doc["message"] == "11 results for words search for 'invented', UMLS 2099AA"
    assert [(p["pageSize"], p.get("pageNumber")) for _, p in sent(clamped)] == [
        ("200", None), ("200", "2"), ("200", "3"), ("200", "4"),  # page 4: 2 results, short
    ]  # fmt: skip
    # The limit still cuts, and says so: pages of 3 until 5 are had.
    cut = run(["search", "invented", "--limit", "5", "--umls-release", "2099AA"], tmp_path)
    assert cut.exit_code == 0, cut.stderr
    assert [row[0] for row in table(cut)] == ["UI", *(f"C900000{k}" for k in range(1, 6))]
    assert cut.stderr == (
        "5 results for words search for 'invented', UMLS 2099AA; --limit 5 cut it\n"
    )
    assert [(p["pageSize"], p.get("pageNumber")) for _, p in sent(clamped)[4:]] == [
        ("5", None), ("5", "2"),
    ]  # fmt: skip


def test_a_list_follows_page_count_whatever_page_size_the_server_chose(
    clamped: FakeUts, tmp_path: Path
) -> None:
    """Every other list follows ``pageCount``, counted in the server's own page size."""
    # invented_rows: C9000001's 8 SNOMEDCT_US atoms A90000001-A90000008, the 8th suppressible
    # (SUPPRESS E, left out), and its MTH PN A90000009.
    result = run(["atoms", "C9000001", "--umls-release", "2099AA", "--json"], tmp_path)
    assert result.exit_code == 0, result.stderr
    (doc,) = lines(result)
    assert sorted(a["aui"] for a in doc["atoms"]) == [
        f"A9000000{i}" for i in (1, 2, 3, 4, 5, 6, 7, 9)
    ]
    assert doc["truncated"] is False
    assert [(p["pageSize"], p.get("pageNumber")) for _, p in sent(clamped)] == [
        ("200", None), ("200", "2"), ("200", "3"),
    ]  # fmt: skip


def test_json_results_are_utss_objects_while_the_table_shows_last_segments(
    fake: FakeUts, tmp_path: Path
) -> None:
    """SPEC 11 reading: ``results`` keep UTS's objects, links as UTS sent them (only ``"NONE"``
    becomes null); the table names each end by the last segment of its link, and an Atom of a
    hierarchy by its code, its AUI beside it."""
    args = ["relations", "--source", "SNOMEDCT_US", "9990101009", "--relation-labels", "CHD",
            "--umls-release", "2099AA", "--json"]  # fmt: skip
    (doc,) = lines(run(args, tmp_path))
    (rel,) = doc["results"]
    code = f"{BASE}/content/2099AA/source/SNOMEDCT_US"
    assert (rel["relatedFromId"], rel["relationLabel"], rel["additionalRelationLabel"],
            rel["relatedId"], rel["rootSource"]) == (
        f"{code}/9990101009", "CHD", "isa", f"{code}/9990192008", "SNOMEDCT_US",
    )  # fmt: skip
    hl7 = run(["hierarchy", "--aui", "A9000703", "--parents", "--umls-release", "2099AA",
               "--json"], tmp_path)  # fmt: skip
    (doc,) = lines(hl7)
    (parent,) = doc["results"]
    assert (parent["classType"], parent["ui"], parent["rootSource"]) == (
        "Atom", "A9000921", "HL7V3.0",
    )  # fmt: skip
    assert parent["code"] == f"{BASE}/content/2099AA/source/HL7V3.0/_InventedEncounterCode"
    assert parent["parents"] is None  # UTS's "NONE"
    types = run(["semantic-types", "C9000001", "--umls-release", "2099AA", "--json"], tmp_path)
    (doc,) = lines(types)
    net = f"{BASE}/semantic-network/2099AA/TUI"
    assert doc["results"] == [
        {"name": "Invented Disorder", "uri": f"{net}/T901"},
        {"name": "Invented Weather Finding", "uri": f"{net}/T902"},
    ]  # the concept's semanticTypes as UTS lists them: no tree number without --details
