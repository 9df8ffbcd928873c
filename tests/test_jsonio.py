"""jsonio: the one strict JSON reader, and --json reports that are valid JSON whatever they hold."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from helpers import BASE, FIXTURES, GPS_FILE, behind_responses
from tempmedbench_synonyms import __version__
from tempmedbench_synonyms.cli import app
from tempmedbench_synonyms.errors import BadInputError
from tempmedbench_synonyms.jsonio import LineRules, iter_jsonl, parse_json, report_text, safe_text
from tempmedbench_synonyms.regen.release import TABLE
from tempmedbench_synonyms.testing import (
    CANARY_KEY,
    FakeUts,
    FakeUtsData,
    invented_rows,
)

PLANTED = FIXTURES / "gps-planted"


@pytest.mark.parametrize(
    ("text", "line", "where", "problem"),
    [
        ('{"a": NaN}', None, 1, "invalid JSON: NaN is not a JSON value (RFC 8259 has no NaN or "
         "Infinity)"),
        ('{\n"b": 2,\n"a": [Infinity]}', None, 3, "invalid JSON: Infinity is not a JSON value "
         "(RFC 8259 has no NaN or Infinity)"),
        ('{"a": -Infinity}', 4, 4, "invalid JSON: -Infinity is not a JSON value (RFC 8259 has no "
         "NaN or Infinity)"),
        ('{\n"a":\n1e99999}', None, 3, "invalid JSON: the number 1e99999 is too large for a "
         "64-bit float"),
        ('{"a": -2E+400}', 4, 4, "invalid JSON: the number -2E+400 is too large for a 64-bit "
         "float"),
        ('{"a": 1, "b": {"a": 2, "a": 2}}', 7, 7, "the key 'a' appears twice in one object"),
        # a whole file: the line where the object holding the repeated key starts
        ('{\n"x": 1,\n"b": {"a": 1,\n"a": 2}}', None, 3, "the key 'a' appears twice in one "
         "object"),
        ('{\n"a": x}', None, 2, "invalid JSON: Expecting value (column 6)"),
    ],
)  # fmt: skip
def test_parse_json_refuses_what_rfc_8259_or_a_round_trip_would_not_keep(
    text: str, line: int | None, where: int, problem: str
) -> None:
    with pytest.raises(BadInputError) as info:
        parse_json(text, path="f.json", line=line)
    assert (info.value.path, info.value.line, info.value.problem) == ("f.json", where, problem)


def test_parse_json_keeps_what_json_keeps() -> None:
    # An underflow is 0.0 (no information lost beyond what json always loses), big ints are ints.
    text = '{"a": 1e-400, "b": 1.50E+2, "c": 123456789012345678901234567890}'
    assert parse_json(text, path="f") == {"a": 0.0, "b": 150.0, "c": 123456789012345678901234567890}


def test_report_text_escapes_lone_surrogates_and_adds_the_versions() -> None:
    text = report_text({"path": "rel\udcff/x", "found": "a\ud800b", "name": "café"})
    assert '"path": "rel\\udcff/x"' in text
    assert '"found": "a\\ud800b"' in text
    assert '"name": "café"' in text  # readable where UTF-8 can carry it
    text.encode("utf-8")  # strict: no lone surrogate is left in the text
    assert json.loads(text) == {
        "path": "rel\udcff/x",
        "found": "a\ud800b",
        "name": "café",
        "schema_version": 1,
        "tool_version": __version__,
    }
    assert safe_text("x\udcffy") == "x\\udcffy"


# --- the commands ---------------------------------------------------------------------------


@pytest.fixture
def loopback_uts() -> Iterator[FakeUts]:
    uts = FakeUts(FakeUtsData.from_lines(invented_rows(2, atoms_per_concept=2)), api_key=CANARY_KEY)
    with behind_responses(uts):
        yield uts


def _invoke(args: list[str], tmp_path: Path) -> tuple[int, dict[str, Any]]:
    env = {"UMLS_BASE_URL": BASE, "TEMPMEDBENCH_CACHE_DIR": str(tmp_path / "cache"),
           "UMLS_API_KEY": CANARY_KEY, "TEMPMEDBENCH_GPS": None}  # fmt: skip
    result = CliRunner().invoke(app, args, env=env)
    assert CANARY_KEY not in result.stdout + result.stderr
    assert result.stdout.startswith("{"), (args, result.stderr)
    doc = json.loads(result.stdout)
    assert isinstance(doc, dict)
    return result.exit_code, doc


def test_every_command_s_json_report_has_the_versions(
    loopback_uts: FakeUts, mini: Path, mrconso: Path, tmp_path: Path
) -> None:
    del loopback_uts
    out = tmp_path / "out"
    release = ["--umls-release", "2099AA"]
    commands: list[tuple[list[str], int]] = [
        (["regenerate", str(mini), "--mrconso", str(mrconso), "--out", str(out)], 0),
        (["check", str(mini), "--out", str(out)], 0),
        (["check", str(tmp_path / "no-such-release")], 2),
        (["freeze", str(mini), "--mrconso", str(mrconso), "--force"], 0),
        (["demo", "--out", str(tmp_path / "demo")], 0),
        (["umls", "atoms", "C9000001", *release], 0),
        (["umls", "source", "SNOMEDCT_US", "9000001", *release], 1),
        (["umls", "atom", "A90000001", *release], 0),
        (["umls", "concept", "C9000001", *release], 0),
        (["umls", "concept", "C9000001", "--rate", "99"], 2),
        (["cache", "info"], 0),
        (["cache", "clear"], 0),
        (["gps", "validate", str(PLANTED), "--gps", str(GPS_FILE)], 1),
        (["gps", "lookup", "22298006", "--gps", str(GPS_FILE)], 1),
        (["gps", "sctid", "22298006"], 0),
    ]
    for args, code in commands:
        exit_code, doc = _invoke([*args, "--json"], tmp_path)
        assert (args, exit_code, doc["schema_version"], doc["tool_version"]) == (
            args, code, 1, __version__
        )  # fmt: skip


def test_nan_in_an_extra_key_of_the_table_is_bad_input(mini: Path, rehash: Any) -> None:
    table = mini / TABLE
    text = table.read_text("utf-8")
    table.write_text(text.replace('"format_version": 1,', '"format_version": 1,\n  "x": NaN,'))
    rehash(mini)
    before = table.read_bytes()
    result = CliRunner().invoke(app, ["check", str(mini), "--json"])
    message = (
        f"{TABLE}, line 3: invalid JSON: NaN is not a JSON value (RFC 8259 has no NaN or Infinity)"
    )
    assert result.exit_code == 2
    assert result.stderr.splitlines()[0] == f"error: {message}"
    assert json.loads(result.stdout)["message"] == message
    assert table.read_bytes() == before
    assert sorted(p.name for p in mini.rglob("*full*")) == []


def test_a_lone_surrogate_in_an_artifact_gives_a_valid_json_report(tmp_path: Path) -> None:
    root = tmp_path / "r"
    shutil.copytree(PLANTED, root)
    events = root / "artifacts" / "events_canonical.jsonl"
    lines = events.read_text("utf-8").split("\n")
    first = json.loads(lines[0])
    first["snomed_fsn"] = "Ba\ud800d"  # json.dumps writes it as the escape \ud800
    lines[0] = json.dumps(first)
    events.write_text("\n".join(lines), "utf-8")
    result = CliRunner().invoke(
        app, ["gps", "validate", str(root), "--gps", str(GPS_FILE), "--json"],
        env={"TEMPMEDBENCH_GPS": None},
    )  # fmt: skip
    assert result.exit_code == 1
    assert '"found": "Ba\\ud800d"' in result.stdout
    found = [f for f in json.loads(result.stdout)["findings"] if f["line"] == 1]
    assert [(f["code"], f["found"]) for f in found] == [("FSN_MISMATCH", "Ba\ud800d")]


def test_a_release_path_that_is_not_utf8_gives_a_valid_json_report(tmp_path: Path) -> None:
    folder = tmp_path / os.fsdecode(b"release-\xff")
    shutil.copytree(FIXTURES / "tempmedbench-mini", folder)
    (folder / "MANIFEST.sha256").unlink()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UMLS_", "TEMPMEDBENCH_"))}
    proc = subprocess.run(
        [sys.executable, "-m", "tempmedbench_synonyms", "check", str(folder), "--json"],
        capture_output=True,
        timeout=60,
        env=env,
    )
    assert proc.returncode == 2
    out = proc.stdout.decode("utf-8")  # strict: the report is UTF-8
    doc = json.loads(out)
    assert doc["release"] == str(folder)
    assert doc["message"] == f"{folder / 'MANIFEST.sha256'}: the release manifest is missing"
    assert '"release": "' + str(tmp_path) + '/release-\\udcff"' in out
    assert proc.stderr.decode("utf-8").splitlines()[0] == (
        f"error: {tmp_path}/release-\\udcff/MANIFEST.sha256: the release manifest is missing"
    )


def test_the_python_api_report_is_the_cli_report(mini: Path, mrconso: Path, tmp_path: Path) -> None:
    from tempmedbench_synonyms.mrconso.source import MrconsoSource
    from tempmedbench_synonyms.regen.pipeline import regenerate

    doc = regenerate(mini, MrconsoSource(mrconso), out_dir=tmp_path / "out").to_json()
    assert (doc["schema_version"], doc["tool_version"]) == (1, __version__)


def test_utf8_only_refuses_a_lone_surrogate_escape_and_keeps_a_pair() -> None:
    """One detector (``jsonio``) for the release files; an artifact's lone surrogate is kept."""
    assert parse_json('["\\ud800"]', path="a.jsonl") == ["\ud800"]
    assert parse_json('{"k": "\\ud83d\\ude00"}', path="f", utf8_only=True) == {"k": "\U0001f600"}
    with pytest.raises(BadInputError) as info:
        parse_json('{"a": 1,\n"\\uDC00": 2}', path="f.json", line=3, utf8_only=True)
    assert str(info.value) == (
        "f.json, line 3: a string holds a lone surrogate escape (\\ud800 to \\udfff), which "
        "UTF-8 cannot encode"
    )


# --- JSON Lines -----------------------------------------------------------------------------

RULES = LineRules(
    blank="blank",
    bom="bom",
    not_object="a {kind}",
    not_utf8="not UTF-8 ({reason}, column {column})",
    not_utf8_hint="utf8 hint",
    line_max=64,
    too_long="longer than {limit}",
    too_long_hint="long hint",
)
LINES = (
    '{"a": "é\u2028x\u0085"}\r\n'  # U+2028 and U+0085 inside a string; CR is JSON whitespace
    '  {"b": [1, {"c": 2}, {"d": 3}]}\t\n'  # "}, {" in a line: read line by line
    '{"e": "\\ud800"}'  # a lone surrogate escape, kept (utf8_only is off); no final line end
).encode()
OBJECTS = [{"a": "é\u2028x\u0085"}, {"b": [1, {"c": 2}, {"d": 3}]}, {"e": "\ud800"}]


def cut(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


@pytest.mark.parametrize("size", [1, 2, 3, 7, 30, 1000])
def test_iter_jsonl_gives_the_same_objects_however_the_bytes_are_cut(size: int) -> None:
    """Blocks cut anywhere (inside a line, a UTF-8 character, a CR LF) give one object a line."""
    assert list(iter_jsonl(cut(LINES, size), "f.jsonl", RULES)) == OBJECTS
    assert list(iter_jsonl(cut(LINES + b"\n", size), "f.jsonl", RULES)) == OBJECTS
    assert list(iter_jsonl([], "f.jsonl", RULES)) == []


TWICE = "the key 'a' appears twice in one object"


def test_iter_jsonl_reads_colons_in_strings_and_nested_objects_as_json_does() -> None:
    lines = ['{"t": "10:30", "u": {"v": ":"}}', '{"k\\u003a": 1, "w": [{"x": 1}]}', '{"y": 2}']
    data = "\n".join(lines).encode()
    assert list(iter_jsonl([data], "f.jsonl", RULES)) == [json.loads(line) for line in lines]


@pytest.mark.parametrize(
    ("data", "line", "problem", "hint"),
    [
        (b'{"a": 1}\n\n', 2, "blank", None),
        ('{"a": 1}\n \t\r\u00a0\n'.encode(), 2, "blank", None),  # U+00A0: str.strip's
        (b'{"a": 1}\n[1]\n', 2, "a list", None),
        (b'{"a": 1}\nnull\n', 2, "a NoneType", None),
        (b'\xef\xbb\xbf{"a": 1}\n', 1, "bom", None),
        (b'{"a": 1}\n{"a": "\xff"}\n', 2, "not UTF-8 (invalid start byte, column 8)", "utf8 hint"),
        (b'{"a": 1}\n{"a": "' + b"x" * 60 + b'"}\n', 2, "longer than 64", "long hint"),
        (b'{"a": 1}\n{"a": 1, "a": 2}\n', 2, "the key 'a' appears twice in one object", None),
        # Keys are counted against colons first: a colon in a string, a nested object or an
        # escaped colon makes the counts differ, and the key check runs all the same.
        (b'{"a": "1:2"}\n{"a": 1, "a": 2}\n', 2, TWICE, None),
        (b'{"a": 1}\n{"b": {"a": 1, "a": 2}}\n', 2, TWICE, None),
        (b'{"a\\u003a": 1}\n{"a": 1, "a": 2}\n', 2, TWICE, None),
        # The first line at fault is named: a BOM before bad bytes, a blank line before an
        # unfinished object.
        (b'\xef\xbb\xbf{"a": 1}\n{"a": "\xff"}\n', 1, "bom", None),
        (b'{"a": 1}\n\n{"a": \n', 2, "blank", None),
    ],
)
def test_iter_jsonl_names_the_line_at_fault(
    data: bytes, line: int, problem: str, hint: str | None
) -> None:
    for size in (3, len(data)):
        with pytest.raises(BadInputError) as info:
            list(iter_jsonl(cut(data, size), "f.jsonl", RULES))
        assert (info.value.path, info.value.line, info.value.problem, info.value.hint) == (
            "f.jsonl",
            line,
            problem,
            hint,
        )


def test_iter_jsonl_with_utf8_only_refuses_a_lone_surrogate_escape() -> None:
    rules = LineRules(blank="", bom="", not_object="", not_utf8="", utf8_only=True)
    data = b'{"a": "\\ud83d\\ude00"}\n{"b": "\\udc00"}\n'
    with pytest.raises(BadInputError) as info:
        list(iter_jsonl([data], "s.jsonl", rules))
    assert str(info.value) == (
        "s.jsonl, line 2: a string holds a lone surrogate escape (\\ud800 to \\udfff), which "
        "UTF-8 cannot encode"
    )
    assert list(iter_jsonl([data[: data.index(b"\n")]], "s.jsonl", rules)) == [{"a": "\U0001f600"}]
