"""The small things a new user met in the first hour (issue 12 item 9), each pinned: usage lines
that name arguments as typed, plurals, ``demo`` named ``demo``, "unchanged" for a file a rerun did
not change, ``-q`` with ``-v`` refused, a zip given as the release, a 401 counted as a request."""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from helpers import MINI_MRCONSO
from tempmedbench_synonyms.cli import app, regenerate_app
from tempmedbench_synonyms.errors import plural
from tempmedbench_synonyms.testing import (
    CANARY_KEY,
    FakeUts,
    FakeUtsData,
    FakeUtsServer,
    find_secret,
)

runner = CliRunner()


@pytest.mark.parametrize(
    ("args", "usage"),
    [
        (["regenerate"], "tempmedbench-synonyms regenerate [OPTIONS] RELEASE"),
        (["check"], "tempmedbench-synonyms check [OPTIONS] RELEASE"),
        (["freeze"], "tempmedbench-synonyms freeze [OPTIONS] RELEASE"),
        (["umls", "atoms"], "tempmedbench-synonyms umls atoms [OPTIONS] [CUI]..."),
        (["umls", "source"], "tempmedbench-synonyms umls source [OPTIONS] [SAB] [CODE]..."),
        (["umls", "atom"], "tempmedbench-synonyms umls atom [OPTIONS] [AUI]..."),
        (["umls", "concept"], "tempmedbench-synonyms umls concept [OPTIONS] [CUI]..."),
        (["umls", "search"], "tempmedbench-synonyms umls search [OPTIONS] [TERM]..."),
        (["umls", "hierarchy"], "tempmedbench-synonyms umls hierarchy [OPTIONS] [SAB CODE]..."),
        (["demo"], "tempmedbench-synonyms demo [OPTIONS]"),
        (["cache", "info"], "tempmedbench-synonyms cache info [OPTIONS]"),
        (["doctor"], "tempmedbench-synonyms doctor [OPTIONS] [RELEASE]"),
    ],
)
def test_help_at_80_columns_names_arguments_as_typed(args: list[str], usage: str) -> None:
    result = runner.invoke(app, [*args, "-h"], env={"COLUMNS": "80", "NO_COLOR": "1"},
                           prog_name="tempmedbench-synonyms")  # fmt: skip
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[1].strip() == f"Usage: {usage}"
    for placeholder in ("{", "<bool>"):
        assert placeholder not in result.stdout, placeholder


def test_the_second_script_names_its_argument_too() -> None:
    result = runner.invoke(regenerate_app, ["-h"], env={"COLUMNS": "80"},
                           prog_name="tempmedbench-regenerate-synonyms")  # fmt: skip
    assert result.stdout.splitlines()[1].strip() == (
        "Usage: tempmedbench-regenerate-synonyms [OPTIONS] RELEASE"
    )


def test_plural() -> None:
    assert [plural(n, "atom") for n in (0, 1, 2)] == ["0 atoms", "1 atom", "2 atoms"]
    assert plural(1, "entry", "entries") == "1 entry"
    assert plural(3, "entry", "entries") == "3 entries"


def test_demo_says_demo_and_a_rerun_says_unchanged(tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = runner.invoke(app, ["demo", "--out", str(out), "--json"])
    assert first.exit_code == 0, first.stderr
    report = json.loads(first.stdout)
    assert report["command"] == "demo"
    assert [f["unchanged"] for f in report["files"].values()] == [False, False]
    assert first.stderr.splitlines()[2].startswith("demo: ")  # after the scan's two lines
    assert first.stderr.count("                   written  ") == 2
    inodes = {p: p.stat().st_ino for p in out.rglob("*") if p.is_file()}
    second = runner.invoke(app, ["demo", "--out", str(out), "--json"])
    assert second.exit_code == 0, second.stderr
    again = json.loads(second.stdout)
    assert [f["unchanged"] for f in again["files"].values()] == [True, True]
    assert [f["written"] for f in again["files"].values()] == [
        f["written"] for f in report["files"].values()
    ]
    assert second.stderr.count("                   unchanged ") == 2
    assert "written  " not in second.stderr
    # not rewritten: the same files (write_atomic would have renamed new ones over them)
    assert {p: p.stat().st_ino for p in out.rglob("*") if p.is_file()} == inodes


def test_a_changed_file_is_written_again(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert runner.invoke(app, ["demo", "--out", str(out)]).exit_code == 0
    table = out / "synonyms" / "synonym_table_kept_full.json"
    table.write_bytes(table.read_bytes() + b" ")
    result = runner.invoke(app, ["demo", "--out", str(out), "--json"])
    files = json.loads(result.stdout)["files"]
    assert [f["unchanged"] for f in files.values()] == [True, False]
    assert table.read_bytes().endswith(b"}\n")


def test_demo_quiet_shows_nothing(tmp_path: Path) -> None:
    result = runner.invoke(app, ["demo", "--out", str(tmp_path / "out"), "-q"])
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")


def test_quiet_with_verbose_is_refused(mini: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["regenerate", str(mini), "--mrconso", str(MINI_MRCONSO),
                                 "--out", str(tmp_path / "out"), "-q", "-v"])  # fmt: skip
    assert (result.exit_code, result.stdout) == (2, "")
    # a usage error like any other: the usage line, then the message (one line, whatever the
    # terminal's width: it is read unboxed)
    assert result.stderr.startswith("Usage: tempmedbench-synonyms ")
    assert "-q (--quiet) and -v (--verbose) contradict each other: pick one" in result.stderr
    assert not (tmp_path / "out").exists()


def test_a_zip_given_as_the_release_says_unzip_it(tmp_path: Path) -> None:
    archive = tmp_path / "TempMedBench-1.0.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("TempMedBench-1.0/MANIFEST.sha256", "invented\n")
    result = runner.invoke(app, ["check", str(archive)])
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: {archive}: not a folder\n"
        "hint: it is a zip archive: unzip it (unzip TempMedBench-1.0.zip) and pass the "
        "TempMedBench release folder (the one holding MANIFEST.sha256)\n"
    )
    plain = tmp_path / "notes.txt"
    plain.write_text("not a zip\n")
    result = runner.invoke(app, ["check", str(plain)])
    assert result.stderr.splitlines()[1] == (
        "hint: pass the TempMedBench release folder (the one holding MANIFEST.sha256)"
    )


def test_a_refused_key_is_a_request_in_the_json(mini: Path, tmp_path: Path) -> None:
    """The probe was sent and answered 401: ``requests`` says 1, not 0."""
    wrong = FakeUts(FakeUtsData.from_mrconso(MINI_MRCONSO), api_key="another")
    with FakeUtsServer(wrong) as server:
        result = runner.invoke(
            app,
            ["regenerate", str(mini), "--base-url", server.base_url, "--cache-dir",
             str(tmp_path / "cache"), "--out", str(tmp_path / "out"), "--json"],
            env={"UMLS_API_KEY": CANARY_KEY},
        )  # fmt: skip
    report = json.loads(result.stdout)
    assert (result.exit_code, report["exit_code"], report["outcome"]) == (3, 3, "not_authorised")
    assert (report["requests"], report["cache_hits"]) == (1, 0)
    assert not (tmp_path / "out").exists()
    texts = {"stdout": result.stdout, "stderr": result.stderr}
    assert find_secret(CANARY_KEY, texts=texts, folders=[tmp_path]) == []


def test_the_report_is_coloured_on_a_terminal_only(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tempmedbench_synonyms.cli._shared import echo_report

    text = "  verified       a.json\n  MISMATCH       b.json\nmismatch (exit 1): b differs"
    monkeypatch.delenv("NO_COLOR", raising=False)
    with monkeypatch.context() as terminal:
        terminal.setattr(sys.stderr, "isatty", lambda: True)
        echo_report(text)
    assert capsys.readouterr().err == (
        "  \x1b[32m\x1b[1mverified\x1b[0m       a.json\n"
        "  \x1b[31m\x1b[1mMISMATCH\x1b[0m       b.json\n"
        "\x1b[31m\x1b[1mmismatch\x1b[0m (exit 1): b differs\n"
    )
    echo_report(text)  # captured: not a terminal
    assert capsys.readouterr().err == text + "\n"


def test_no_color_keeps_the_report_plain(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tempmedbench_synonyms.cli._shared import echo_report

    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setattr("sys.stderr.isatty", lambda: True)
    echo_report("verified (exit 0): both files match")
    assert capsys.readouterr().err == "verified (exit 0): both files match\n"


@pytest.mark.parametrize(
    ("command", "flag", "metavar"),
    [
        ("search", "--sabs", "<sab,...>"),
        ("search", "--semantic-types", "<tui,...>"),
        ("crosswalk", "--target-sabs", "<sab,...>"),
        ("relations", "--relation-labels", "<label,...>"),
        ("relations", "--sabs", "<sab,...>"),
    ],
)
def test_a_list_option_shows_what_it_lists_not_its_python_type(
    command: str, flag: str, metavar: str
) -> None:
    """typer shows a list option as ``<list[str]>``; ours say what they list, comma separated."""
    result = runner.invoke(app, ["umls", command, "-h"], env={"COLUMNS": "100", "NO_COLOR": "1"})
    assert result.exit_code == 0
    (line,) = [x for x in result.stdout.splitlines() if x.startswith(f"│ {flag} ")]
    assert line.split()[2] == metavar
    options = result.stdout[result.stdout.index("─ Options ") :]
    assert "<list[str]>" not in options


def _help(*args: str, columns: int = 80) -> list[str]:
    result = runner.invoke(app, [*args, "-h"], env={"COLUMNS": str(columns), "NO_COLOR": "1"},
                           prog_name="tempmedbench-synonyms")  # fmt: skip
    assert result.exit_code == 0
    return result.stdout.splitlines()


def _arguments(lines: list[str]) -> list[str]:
    """The lines of the Arguments panel."""
    start = next(i for i, line in enumerate(lines) if "─ Arguments " in line)
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("╰"))
    return lines[start + 1 : end]


def test_an_arguments_type_says_what_it_takes_not_its_python_type() -> None:
    """typer shows ``CODE <list[str]>``; an argument says what it takes, as its usage line does
    (``[CODE]...``)."""
    assert _arguments(_help("umls", "crosswalk")) == [
        "│   SAB       <sab>      The source (root source abbreviation).                │",
        "│   CODE      <code>...  Codes of that source.                                 │",
    ]
    assert _arguments(_help("umls", "hierarchy"))[0] == (
        "│   SAB CODE      <sab> <code>...  A source and its codes; with --aui, AUIs.   │"
    )
    assert _arguments(_help("gps", "sctid")) == [
        "│ *    SCTID      <sctid>...  SNOMED CT identifiers.                           │",
        "│                             [required]                                       │",
    ]
    assert _arguments(_help("check")) == [  # a path says <path>, as typer has it
        "│ *    RELEASE      <path>  The TempMedBench release folder (the one with      │",
        "│                           MANIFEST.sha256).                                  │",
        "│                           [required]                                         │",
    ]


def _every_command(command: object, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [path]
    for name, sub in getattr(command, "commands", {}).items():
        found += _every_command(sub, (*path, name))
    return found


@pytest.mark.parametrize("path", _every_command(typer.main.get_command(app)), ids=" ".join)
def test_no_help_shows_a_python_type_for_an_argument_nor_a_default_in_parentheses(
    path: tuple[str, ...],
) -> None:
    lines = _help(*path, columns=200)
    shown = "\n".join(lines)
    assert "[default: (" not in shown
    if any("─ Arguments " in line for line in lines):
        for piece in ("<str>", "<list[str]>"):
            assert piece not in "\n".join(_arguments(lines))


def test_a_default_said_in_words_shows_without_parentheses() -> None:
    """click put a default given as text in parentheses: ``[default: (1000)]``."""
    said = [line.strip("│ ") for line in _help("umls", "crosswalk") if "[default:" in line]
    assert said[0] == "[default: 1000]"
    assert [line.strip("│ ") for line in _help("umls", "search") if "[default:" in line][1] == (
        "[default: 25]"
    )
    cache = [line.strip("│ ") for line in _help("cache", "info", columns=200) if "[default" in line]
    assert cache == [
        "[default: TEMPMEDBENCH_CACHE_DIR, else the user cache folder of tempmedbench-synonyms]"
    ]
