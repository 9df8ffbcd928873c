"""A command line the parser refuses still gets its JSON object with ``--json`` (SPEC section 7:
a script that reads stdout always reads JSON), besides the usage message on stderr."""

from __future__ import annotations

import json
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from tempmedbench_synonyms import __version__
from tempmedbench_synonyms.cli import app, regenerate_app
from tempmedbench_synonyms.cli._options import PlainUsage


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
        ("umls", "atom"), ("umls", "atoms"), ("umls", "concept"), ("umls", "source"),
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
