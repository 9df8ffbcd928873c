from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from helpers import MINI_MRCONSO, Rehash, outputs
from tempmedbench_synonyms.cli import app
from tempmedbench_synonyms.errors import BadInputError
from tempmedbench_synonyms.regen import release as release_module
from tempmedbench_synonyms.regen.release import (
    EXPECTED,
    RELEASE_FILE_LIMIT,
    SURFACE,
    TABLE,
    load_expected,
    load_surface,
    load_table,
    open_release,
)
from tempmedbench_synonyms.testing import write_manifest

runner = CliRunner()


def edit_table(folder: Path, change: Callable[[dict[str, Any]], None], rehash: Rehash) -> None:
    path = folder / TABLE
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    rehash(folder)


# --- the folder (its manifest: test_manifest.py) ----------------------------------------------


def test_the_fixture_opens_clean(mini: Path) -> None:
    release = open_release(mini)
    assert release.files_checked == 7
    assert release.warnings == []
    assert len(release.surface) == 42
    assert release.table.umls_release == "2099AA"


def test_the_expected_hashes_are_read_where_they_are_needed(mini: Path) -> None:
    expected = load_expected(mini)
    assert (expected.umls_release, sorted(expected.files)) == (
        "2099AA",
        [
            "question_surface/question_surface_synonym.jsonl",
            "synonyms/synonym_table_kept_full.json",
        ],
    )


def test_not_a_folder(tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match="no such folder"):
        open_release(tmp_path / "nope")


# --- table ----------------------------------------------------------------------------------


def _set(path: list[Any], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        target = data
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


Q = "9990101009"


@pytest.mark.parametrize(
    "change,message",
    [
        (_set(["format_version"], 2),
         "synonyms/synonym_table_kept.json: format_version is 2; this tool "
         "reads format_version 1"),
        (_set(["format_version"], True),
         "synonyms/synonym_table_kept.json: format_version is true; this tool "
         "reads format_version 1"),
        (_set(["concepts", Q, "route"], "code"),
         "synonyms/synonym_table_kept.json: concepts[\"9990101009\"].route: must be 'source', "
         "'cui' or 'aui' (found \"code\")"),
        (_set(["concepts", Q, "cui"], "C123"),
         "synonyms/synonym_table_kept.json: concepts[\"9990101009\"].cui: must be a CUI, C and 7 "
         "ASCII digits (found \"C123\")"),
        (_set(["concepts", Q, "spans", "dev-0001"], [[0, True]]),
         "synonyms/synonym_table_kept.json: concepts[\"9990101009\"].spans[\"dev-0001\"][0][1]: "
         "must be an integer (found true)"),
        (_set(["concepts", Q, "spans", "dev-0001"], [[0, 12.0]]),
         "synonyms/synonym_table_kept.json: concepts[\"9990101009\"].spans[\"dev-0001\"][0][1]: "
         "must be an integer (found 12.0)"),
        (_set(["concepts", Q, "spans", "dev-0001"], [[0, 12, 13]]),
         "synonyms/synonym_table_kept.json: concepts[\"9990101009\"].spans[\"dev-0001\"][0]: "
         "must hold at most 2 items (found [0, 12, 13])"),
        (_set(["concepts", Q, "code"], None),
         "synonyms/synonym_table_kept.json: concepts[\"9990101009\"]: route 'source' needs "
         "'code', a non-empty JSON string (found null)"),
        # a code as a JSON number: SNOMED CT identifiers can exceed a double, so never a number
        (_set(["concepts", Q, "code"], 38341003),
         "synonyms/synonym_table_kept.json: concepts[\"9990101009\"]: route 'source' needs "
         "'code', a non-empty JSON string (found 38341003)"),
        # "aui": "" is neither absent (null) nor an AUI, on any route
        (_set(["concepts", Q, "aui"], ""),
         "synonyms/synonym_table_kept.json: concepts[\"9990101009\"]: 'aui' must be a non-empty "
         "string or null"),
        (_set(["umls_release"], ""),
         "synonyms/synonym_table_kept.json: umls_release: must not be empty (found \"\")"),
        (_set(["concepts"], None),
         "synonyms/synonym_table_kept.json: concepts: must be a JSON object (found null)"),
        (_set(["concepts", "quillon level", "aui"], None),
         "synonyms/synonym_table_kept.json: concepts[\"quillon level\"]: route 'aui' needs "
         "'aui', a non-empty string"),
        (_set(["language"], "FRE"),
         "synonyms/synonym_table_kept.json: language: must be 'ENG' (found \"FRE\")"),
        (_set(["concepts", Q, "sab"], ""),
         "synonyms/synonym_table_kept.json: concepts[\"9990101009\"].sab: must not be empty "
         "(found \"\")"),
    ],
)  # fmt: skip
def test_invalid_tables_name_the_key_and_the_problem(
    mini: Path, rehash: Rehash, change: Callable[[dict[str, Any]], None], message: str
) -> None:
    edit_table(mini, change, rehash)
    with pytest.raises(BadInputError) as info:
        load_table(mini)
    assert str(info.value) == message
    assert info.value.hint == (
        "install the version of tempmedbench-synonyms that matches this release"
        if "format_version is" in message
        else "this file does not follow the TempMedBench format (SPEC sections 2 and 4); if it "
        "came with a release, report it to the release's authors"
    )


def test_missing_key_is_named(mini: Path, rehash: Rehash) -> None:
    edit_table(mini, lambda d: d["concepts"][Q].pop("spans"), rehash)
    with pytest.raises(BadInputError) as info:
        load_table(mini)
    assert str(info.value) == (
        'synonyms/synonym_table_kept.json: concepts["9990101009"].spans: a required key is missing'
    )


def test_code_is_ignored_on_other_routes_and_unknown_keys_are_kept(
    mini: Path, rehash: Rehash
) -> None:
    edit_table(mini, _set(["concepts", "ambulatory encounter", "code"], 42), rehash)
    raw, _table = load_table(mini)
    assert raw["concepts"]["ambulatory encounter"]["code"] == 42
    assert raw["generator"] == "invented fixture for tempmedbench-synonyms tests"
    assert raw["concepts"]["9990105000"]["note"] == "invented procedure"


def test_invalid_json_names_the_line(mini: Path) -> None:
    (mini / TABLE).write_text('{\n  "format_version": 1,\n  "x": ,\n}\n')
    with pytest.raises(BadInputError) as info:
        load_table(mini)
    assert str(info.value) == (
        "synonyms/synonym_table_kept.json, line 3: invalid JSON: Expecting value (column 8)"
    )


def test_a_table_with_a_bom_is_refused(mini: Path) -> None:
    (mini / TABLE).write_bytes(b"\xef\xbb\xbf" + (mini / TABLE).read_bytes())
    with pytest.raises(BadInputError) as info:
        load_table(mini)
    assert str(info.value) == (
        "synonyms/synonym_table_kept.json, line 1: starts with a byte order mark (BOM); release "
        "files are UTF-8 without a BOM"
    )


def test_duplicate_keys_are_refused(mini: Path) -> None:
    (mini / TABLE).write_text('{"format_version": 1, "concepts": {"a": {}, "a": {}}}')
    with pytest.raises(BadInputError, match="the key 'a' appears twice in one object"):
        load_table(mini)


# --- surface --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content,message",
    [
        (b'{"qid": "a", "question_surface": "x"}\n\n',
         "question_surface/question_surface.jsonl, line 2: a blank line"),
        # only whitespace is blank too
        (b'{"qid": "a", "question_surface": "x"}\n \t\r\n',
         "question_surface/question_surface.jsonl, line 2: a blank line"),
        (b'{"qid": "a", "question_surface": "x"}\n[1]\n',
         "question_surface/question_surface.jsonl, line 2: not a JSON object"),
        (b'{"qid": "a", "question_surface": "x"}\n{"question_surface": "y"}\n',
         "question_surface/question_surface.jsonl, line 2: qid: no 'qid'"),
        (b'{"qid": 7, "question_surface": "x"}\n',
         "question_surface/question_surface.jsonl, line 1: qid: 'qid' is not a string"),
        (b'{"qid": "a", "question_surface": "x"}\n{"qid": "a", "question_surface": "y"}',
         "question_surface/question_surface.jsonl, line 2: qid 'a' again (first on line 1)"),
        (b'{"qid": "a"}\n',
         "question_surface/question_surface.jsonl, line 1: question_surface: no "
         "'question_surface' string"),
        (b'{"qid": "a", "question_surface": "x"}\n{"qid": "b", \n',
         "question_surface/question_surface.jsonl, line 2: invalid JSON: Expecting property "
         "name enclosed in double quotes (column 14)"),
        (b'\xef\xbb\xbf{"qid": "a", "question_surface": "x"}\n',
         "question_surface/question_surface.jsonl, line 1: starts with a byte order mark (BOM); "
         "release files are UTF-8 without a BOM"),
        (b'{"qid": "a", "question_surface": "x"}\n{"qid": "\xff"}\n',
         "question_surface/question_surface.jsonl, line 2: not valid UTF-8 (invalid start byte)"),
    ],
)  # fmt: skip
def test_bad_surface_lines(mini: Path, content: bytes, message: str) -> None:
    (mini / SURFACE).write_bytes(content)
    with pytest.raises(BadInputError) as info:
        load_surface(mini)
    assert str(info.value) == message


def test_surface_splits_on_newline_only_and_final_newline_is_optional(mini: Path) -> None:
    (mini / SURFACE).write_bytes(
        '{"qid": "a", "question_surface": "x\u2028y\u0085z\\n"}\n'
        '{"qid": "b", "question_surface": ""}'.encode()
    )
    lines = load_surface(mini)
    assert [(s.qid, s.text) for s in lines] == [("a", "x\u2028y\u0085z\n"), ("b", "")]


@pytest.mark.parametrize(
    "change,message",
    [
        (lambda d: d["files"].pop("synonyms/synonym_table_kept_full.json"),
         "synonym_regeneration/expected_sha256.json: 'files' must list exactly "
         "['question_surface/question_surface_synonym.jsonl', "
         "'synonyms/synonym_table_kept_full.json']; it lists "
         "['question_surface/question_surface_synonym.jsonl']"),
        (lambda d: d["files"].update({"synonyms/synonym_table_kept_full.json": "AB" * 32}),
         "synonym_regeneration/expected_sha256.json: "
         "files[\"synonyms/synonym_table_kept_full.json\"]: must be a SHA-256, 64 lower-case "
         "hexadecimal digits (found \"" + "AB" * 32 + "\")"),
        # a path beyond the two outputs is refused too, not ignored
        (lambda d: d["files"].update({"extra/path": "0" * 64}),
         "synonym_regeneration/expected_sha256.json: 'files' must list exactly "
         "['question_surface/question_surface_synonym.jsonl', "
         "'synonyms/synonym_table_kept_full.json']; it lists ['extra/path', "
         "'question_surface/question_surface_synonym.jsonl', "
         "'synonyms/synonym_table_kept_full.json']"),
        # a long list in a message shows its first items and a count (SPEC section 8)
        (lambda d: d["files"].update({f"p{i:02d}": "0" * 64 for i in range(20)}),
         "synonym_regeneration/expected_sha256.json: 'files' must list exactly "
         "['question_surface/question_surface_synonym.jsonl', "
         "'synonyms/synonym_table_kept_full.json']; it lists ["
         + ", ".join(f"'p{i:02d}'" for i in range(10)) + ", and 12 more]"),
        (lambda d: d.update({"format_version": "1"}),
         "synonym_regeneration/expected_sha256.json: format_version is \"1\"; "
         "this tool reads format_version 1"),
    ],
)  # fmt: skip
def test_invalid_expected_hashes(
    mini: Path, change: Callable[[dict[str, Any]], None], message: str
) -> None:
    from tempmedbench_synonyms.regen.release import load_expected

    data = json.loads((mini / EXPECTED).read_text())
    change(data)
    (mini / EXPECTED).write_text(json.dumps(data))
    with pytest.raises(BadInputError) as info:
        load_expected(mini)
    assert str(info.value) == message


@pytest.mark.parametrize("value", ["C0000001\n", "C000000\u0661", "c0000001"])
def test_cui_is_c_and_seven_ascii_digits(mini: Path, rehash: Rehash, value: str) -> None:
    edit_table(mini, _set(["concepts", Q, "cui"], value), rehash)
    with pytest.raises(BadInputError) as info:
        load_table(mini)
    found = json.dumps(value, ensure_ascii=False)
    assert str(info.value) == (
        f'{TABLE}: concepts["{Q}"].cui: must be a CUI, C and 7 ASCII digits (found {found})'
    )


def test_a_non_string_aui_on_route_cui_is_refused(mini: Path, rehash: Rehash) -> None:
    edit_table(mini, _set(["concepts", "ambulatory encounter", "aui"], 5), rehash)
    with pytest.raises(BadInputError) as info:
        load_table(mini)
    assert str(info.value) == (
        "synonyms/synonym_table_kept.json: concepts[\"ambulatory encounter\"]: 'aui' must be a "
        "non-empty string or null"
    )


@pytest.mark.parametrize(
    "text,message",
    [
        ('{"qid": "a", "question_surface": "x", "qid2": 1, "qid2": 2}',
         "question_surface/question_surface.jsonl, line 1: the key 'qid2' appears twice in one "
         "object"),
        ('{"qid": "a", "question_surface": "fever \\ud800"}',
         "question_surface/question_surface.jsonl, line 1: a string holds a lone surrogate escape "
         "(\\ud800 to \\udfff), which UTF-8 cannot encode"),
        ('{"qid": "a", "question_surface": "x", "n": ' + "9" * 5000 + "}",
         "question_surface/question_surface.jsonl, line 1: JSON this tool cannot read: an "
         "integer has more digits than Python reads (4,300)"),
        ('{"qid": "a", "question_surface": "x", "n": ' + "[" * 100000 + "]" * 100000 + "}",
         "question_surface/question_surface.jsonl, line 1: JSON this tool cannot read: nested "
         "deeper than Python's recursion limit"),
    ],
)  # fmt: skip
def test_json_that_could_not_be_written_back_is_refused(
    mini: Path, text: str, message: str
) -> None:
    (mini / SURFACE).write_text(text + "\n", encoding="utf-8")
    with pytest.raises(BadInputError) as info:
        load_surface(mini)
    assert str(info.value) == message


def test_a_valid_surrogate_pair_escape_is_one_character(mini: Path) -> None:
    (mini / SURFACE).write_text('{"qid": "a", "question_surface": "\\ud83d\\udccb"}\n')
    assert load_surface(mini)[0].text == "📋"


def test_crlf_surface_lines_are_read_as_json_reads_them(mini: Path) -> None:
    # SPEC: files are LF; a CR before the LF is JSON whitespace and changes no value. Accepted:
    # the manifest already guarantees the bytes are the authors'.
    (mini / SURFACE).write_bytes(b'{"qid": "a", "question_surface": "x"}\r\n')
    assert [(s.qid, s.text) for s in load_surface(mini)] == [("a", "x")]


# --- sizes (SPEC section 8: a file from outside never fills the memory) ----------------------

#: The hint of a release file over its limit.
SIZE_HINT = (
    "a release's files are a few MB: this is not the file the release shipped; download the "
    "release again"
)


@pytest.mark.parametrize(
    ("rel", "what"),
    [(TABLE, "the synonym table"), (SURFACE, "the question surface"),
     (EXPECTED, "the expected hashes")],
)  # fmt: skip
def test_a_release_file_over_its_limit_is_bad_input_and_nothing_is_written(
    mini: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rel: str, what: str
) -> None:
    """A file its manifest lists (a forged release, an author's edit before freeze) was read
    whole: a 1.1 GiB surface peaked at 14 GB, then MemoryError, exit 70 (trust audit 20). The
    limit, lowered here so that the sparse file stays small, is checked before any parsing."""
    out = tmp_path / "out"
    args = ["regenerate", str(mini), "--mrconso", str(MINI_MRCONSO), "--out", str(out)]
    assert runner.invoke(app, args).exit_code == 0
    before = {p: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    monkeypatch.setattr(release_module, "RELEASE_FILE_LIMIT", 10_000)
    os.truncate(mini / rel, 10_001)  # sparse: no byte of it is written
    write_manifest(mini)  # the manifest matches it
    result = runner.invoke(app, [*args, "--json"])
    doc = json.loads(result.stdout)
    message = f"{mini / rel}: 10001 bytes, over the limit of 10000 bytes for {what}"
    assert (result.exit_code, doc["outcome"], doc["message"], doc["hint"]) == (
        2, "bad_input", message, SIZE_HINT,
    )  # fmt: skip
    assert result.stderr.splitlines()[-2:] == [f"error: {message}", f"hint: {SIZE_HINT}"]
    assert {p: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()} == before
    assert outputs(mini) == []


def test_the_limit_refuses_a_larger_file_without_reading_it(mini: Path) -> None:
    """64 MiB, ten times a real release's largest file; a sparse file just over it is refused
    on its size, before a byte is read (a read of 64 MiB would take a while here)."""
    assert RELEASE_FILE_LIMIT == 64 << 20
    os.truncate(mini / SURFACE, RELEASE_FILE_LIMIT + 1)
    with pytest.raises(BadInputError) as exc:
        load_surface(mini)
    assert str(exc.value) == (
        f"{mini / SURFACE}: 67108865 bytes (64 MiB), over the limit of 67108864 bytes (64 MiB) "
        "for the question surface"
    )


def test_freeze_refuses_previous_hashes_over_the_limit_and_writes_nothing(
    mini: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``freeze --force`` keeps the hashes it replaces: they are read bounded too."""
    expected = mini / EXPECTED
    monkeypatch.setattr(release_module, "RELEASE_FILE_LIMIT", 10_000)
    os.truncate(expected, 10_001)
    result = runner.invoke(
        app, ["freeze", str(mini), "--mrconso", str(MINI_MRCONSO), "--force", "--json"]
    )
    message = f"{expected}: 10001 bytes, over the limit of 10000 bytes for the expected hashes"
    assert (result.exit_code, json.loads(result.stdout)["message"]) == (2, message)
    assert expected.stat().st_size == 10_001
    assert not expected.with_name(expected.name + ".bak").exists()


@pytest.mark.parametrize("block", [1, 3, 64])
def test_the_surface_read_in_small_blocks_is_the_surface(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    """Blocks that cut lines, and UTF-8 characters of 2 to 4 bytes, anywhere: the lines are those
    of the file, each parsed whole (``load_surface`` parses a block at a time)."""
    lines = [
        {"qid": "q1", "question_surface": "Fièvre — “Zephyr” 🌀 at 08:00?"},
        {"qid": "q2", "question_surface": "a\u2028b\u0085c"},  # line ends only at "\n"
        {"qid": "q3", "question_surface": "ß" * 50},
    ]
    (tmp_path / "question_surface").mkdir()
    text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    (tmp_path / SURFACE).write_text(text, encoding="utf-8")
    monkeypatch.setattr(release_module, "SURFACE_BLOCK", block)
    got = load_surface(tmp_path)
    assert [(s.qid, s.text) for s in got] == [
        ("q1", "Fièvre — “Zephyr” 🌀 at 08:00?"),
        ("q2", "a\u2028b\u0085c"),
        ("q3", "ß" * 50),
    ]
    # The lines are numbered as in the file, whatever the blocks cut.
    with (tmp_path / SURFACE).open("a", encoding="utf-8") as f:
        f.write(json.dumps(lines[1]) + "\n")
    with pytest.raises(BadInputError) as info:
        load_surface(tmp_path)
    assert str(info.value) == f"{SURFACE}, line 4: qid 'q2' again (first on line 2)"
