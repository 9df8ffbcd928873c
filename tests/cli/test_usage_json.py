"""A command line the parser refuses still gets its JSON object with ``--json`` (SPEC section 7:
a script that reads stdout always reads JSON), besides the usage message on stderr."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from tempmedbench_synonyms import __version__
from tempmedbench_synonyms.cli import app, regenerate_app
from tempmedbench_synonyms.cli._options import PlainGroup, PlainUsage


def _commands(command: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    subs = getattr(command, "commands", None)
    if subs is None:
        return [(path, command)]
    return [found for name, sub in sorted(subs.items()) for found in _commands(sub, (*path, name))]


COMMANDS = _commands(typer.main.get_command(app))
WITH_JSON = [path for path, cmd in COMMANDS if any("--json" in p.opts for p in cmd.params)]


def test_every_command_with_json_is_a_plain_usage_command() -> None:
    assert WITH_JSON == [
        ("cache", "clear"), ("cache", "info"), ("check",), ("demo",), ("doctor",), ("freeze",),
        ("gps", "lookup"), ("gps", "sctid"), ("gps", "validate"), ("regenerate",),
        ("umls", "atom"), ("umls", "atoms"), ("umls", "concept"), ("umls", "crosswalk"),
        ("umls", "cuis"), ("umls", "definitions"), ("umls", "hierarchy"), ("umls", "index"),
        ("umls", "relations"),
        ("umls", "search"), ("umls", "semantic-types"), ("umls", "source"),
        ("umls", "source-concept"), ("umls", "sources"),
    ]  # fmt: skip
    assert all(isinstance(cmd, PlainUsage) for _, cmd in COMMANDS)
    assert isinstance(typer.main.get_command(regenerate_app), PlainUsage)


@pytest.mark.parametrize("path", WITH_JSON, ids=" ".join)
def test_an_unknown_option_with_json_prints_the_json_object(path: tuple[str, ...]) -> None:
    result = CliRunner().invoke(app, [*path, "--json", "--no-such-option"])
    assert result.exit_code == 2
    assert json.loads(result.stdout) == {
        "outcome": "bad_input",
        "exit_code": 2,
        "message": "No such option: --no-such-option",
        "hint": f"tempmedbench-synonyms {' '.join(path)} --help lists the arguments and options",
        "schema_version": 1,
        "tool_version": __version__,
    }
    assert "No such option: --no-such-option" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["gps", "validate", "--json"], "Missing argument 'RELEASE'."),
        (["regenerate", "R", "--rate", "fast", "--json"],
         "Invalid value for '--rate': Input should be a valid number, unable to parse string as "
         "a number"),
    ],
)  # fmt: skip
def test_a_missing_argument_or_a_bad_value_with_json_prints_the_json_object(
    args: list[str], message: str
) -> None:
    result = CliRunner().invoke(app, args)
    assert (result.exit_code, json.loads(result.stdout)["message"]) == (2, message)


def test_without_json_stdout_stays_empty_and_after_a_double_dash_json_is_no_option() -> None:
    result = CliRunner().invoke(app, ["gps", "validate", "--no-such-option"])
    assert (result.exit_code, result.stdout) == (2, "")
    result = CliRunner().invoke(regenerate_app, ["--no-such-option", "--", "--json"])
    assert (result.exit_code, result.stdout) == (2, "")
    result = CliRunner().invoke(
        regenerate_app, ["--json", "--no-such-option"], prog_name="tempmedbench-regenerate-synonyms"
    )
    assert result.exit_code == 2
    assert json.loads(result.stdout)["hint"] == (
        "tempmedbench-regenerate-synonyms --help lists the arguments and options"
    )


@pytest.mark.parametrize(
    ("args", "json_expected"),
    [
        (["check", "--out", "--json"], False),  # --json is --out's value
        (["gps", "validate", "R", "--gps", "--json", "--bogus"], False),
        (["check", "--out", "--", "--json", "--bogus"], True),  # "--" is --out's value
        (["check", "--json=1", "R"], True),  # meant, and refused
        (["check", "R", "--bogus", "--", "--json"], False),
    ],
)
def test_json_counts_only_as_the_flag(args: list[str], json_expected: bool) -> None:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    if json_expected:
        assert json.loads(result.stdout)["exit_code"] == 2
    else:
        assert result.stdout == ""


def test_the_usage_message_on_stderr_is_the_same_with_json() -> None:
    """--json adds the object on stdout and changes nothing on stderr."""
    plain = CliRunner().invoke(app, ["gps", "sctid", "--no-such-option"], env={"NO_COLOR": "1"})
    with_json = CliRunner().invoke(
        app, ["gps", "sctid", "--json", "--no-such-option"], env={"NO_COLOR": "1"}
    )
    assert plain.stderr == with_json.stderr
    assert "No such option: --no-such-option" in plain.stderr
    assert (plain.stdout, plain.exit_code, with_json.exit_code) == ("", 2, 2)


def test_quiet_with_verbose_and_json_prints_the_json_object(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["check", str(tmp_path), "-q", "-v", "--json"])
    assert result.exit_code == 2
    assert json.loads(result.stdout) == {
        "outcome": "bad_input",
        "exit_code": 2,
        "message": "-q (--quiet) and -v (--verbose) contradict each other: pick one",
        "hint": "tempmedbench-synonyms check --help lists the arguments and options",
        "schema_version": 1,
        "tool_version": __version__,
    }
    # a usage error like any other: the usage line, then the message (one line, whatever the
    # terminal's width: it is read unboxed)
    assert result.stderr.startswith("Usage: tempmedbench-synonyms ")
    assert "-q (--quiet) and -v (--verbose) contradict each other: pick one" in result.stderr


def test_a_reader_gone_keeps_exit_2_and_the_usage_message(tmp_path: Path) -> None:
    """stdout a pipe whose reader has closed: the JSON cannot be written, and the refusal is
    still exit 2 with its usage message (the write error replaced it: exit 1, no message)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    code = "from tempmedbench_synonyms.cli import script_main; script_main()"
    try:
        done = subprocess.run(
            [sys.executable, "-c", code, "check", "--bogus", "--json"],
            stdout=write_end, stderr=subprocess.PIPE, timeout=60,
            env={**os.environ, "TEMPMEDBENCH_STATE_DIR": str(tmp_path)},
        )  # fmt: skip
    finally:
        os.close(write_end)
    assert done.returncode == 2
    assert b"No such option: --bogus" in done.stderr
    assert b"Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("args", "command", "message"),
    [
        (["bogus", "--json"], "", "No such command 'bogus'."),
        (
            ["gps", "valdate", "R", "--json"],
            " gps",
            "No such command 'valdate'. Did you mean 'validate'?",
        ),
        (["cache", "nope", "--json"], " cache", "No such command 'nope'."),
        (["umls", "--json", "atoms"], " umls", "No such option: --json"),
    ],
)
def test_what_a_group_refuses_gets_the_json_object_too(
    args: list[str], command: str, message: str
) -> None:
    result = CliRunner().invoke(app, args, prog_name="tempmedbench-synonyms")
    assert result.exit_code == 2
    assert json.loads(result.stdout) == {
        "outcome": "bad_input",
        "exit_code": 2,
        "message": message,
        "hint": f"tempmedbench-synonyms{command} --help lists the arguments and options",
        "schema_version": 1,
        "tool_version": __version__,
    }
    assert message in result.stderr


def test_every_group_is_a_plain_group() -> None:
    groups = [typer.main.get_command(app)] + [
        sub for sub in typer.main.get_command(app).commands.values() if hasattr(sub, "commands")
    ]
    assert sorted(g.name or "" for g in groups) == ["cache", "gps", "tempmedbench-synonyms", "umls"]
    assert all(isinstance(g, PlainGroup) for g in groups)
    result = CliRunner().invoke(app, ["gps", "valdate"])
    assert (result.exit_code, result.stdout) == (2, "")
