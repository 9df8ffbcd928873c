"""Options built once: an options dataclass's fields become a command's flags, and the command
gets the one object built from them (cli._options.with_options, docs/architecture.md)."""

from __future__ import annotations

import dataclasses
import json
import sys
import types
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import pytest
import typer
from typer.testing import CliRunner

import tempmedbench_synonyms.cli as cli
from tempmedbench_synonyms.cli import app
from tempmedbench_synonyms.cli._options import Only, PlainUsage, with_options
from tempmedbench_synonyms.config import option
from tempmedbench_synonyms.options import RegenOptions
from tempmedbench_synonyms.uts.options import UtsOptions

NETWORK = [f.metadata["cli"].flag for f in dataclasses.fields(UtsOptions)]


def _flags(*path: str) -> list[str]:
    command: Any = typer.main.get_command(app)
    for name in path:
        command = command.commands[name]
    return [opt for p in command.params for opt in getattr(p, "opts", ())]


def test_the_network_options_are_these_eight_in_this_order() -> None:
    assert NETWORK == [
        "--base-url", "--cache-dir", "--offline", "--refresh", "--rate", "--workers",
        "--timeout", "--api-key-file",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (("regenerate",), NETWORK),
        (("freeze",), NETWORK),
        (("doctor",), ["--base-url", "--cache-dir", "--rate", "--timeout", "--api-key-file"]),
        (("umls", "atoms"), NETWORK),
        (("umls", "search"), NETWORK),
        (("umls", "sources"), [f for f in NETWORK if f != "--workers"]),
        (("cache", "info"), ["--cache-dir"]),
        (("cache", "clear"), ["--cache-dir"]),
    ],
)
def test_each_command_has_the_network_options_it_takes(
    path: tuple[str, ...], expected: list[str]
) -> None:
    assert [f for f in _flags(*path) if f in NETWORK] == expected


def test_what_was_parsed_reaches_the_run_as_one_object(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[RegenOptions] = []

    def run(options: RegenOptions) -> Any:
        seen.append(options)
        raise typer.Exit(0)

    monkeypatch.setattr(cli, "run", run)
    key = tmp_path / "key"
    result = CliRunner().invoke(
        app,
        ["regenerate", str(tmp_path), "--rate", "2.5", "--workers", "3", "--timeout", "9",
         "--offline", "--cache-dir", str(tmp_path / "c"), "--base-url", "https://example.org/rest",
         "--api-key-file", str(key), "--umls-release", "2099AA", "-q"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert seen == [
        RegenOptions(
            tmp_path,
            umls_release="2099AA",
            uts=UtsOptions(
                base_url="https://example.org/rest", cache_dir=tmp_path / "c", offline=True,
                rate=2.5, workers=3, timeout=9.0, api_key_file=key,
            ),
        )
    ]  # fmt: skip


@dataclass(frozen=True)
class _Toy:
    size: int = option(3, "--size", "How many.")
    loud: bool = option(False, "--loud", "Say it loud.")
    hidden: str = "never a flag"  # no metadata: not an option


def test_any_options_class_gives_its_fields_as_flags_in_the_parameters_place() -> None:
    """A new option is a field: nothing else changes for the command to take it."""
    toy = typer.Typer(add_completion=False)
    got: list[tuple[str, _Toy, bool]] = []

    @toy.command(cls=PlainUsage)
    @with_options
    def command(name: str, opts: _Toy = _Toy(), last: bool = False) -> None:
        got.append((name, opts, last))

    result = CliRunner().invoke(toy, ["x", "--size", "5", "--loud", "--last"])
    assert (result.exit_code, got) == (0, [("x", _Toy(5, True), True)])
    flags = [o for p in typer.main.get_command(toy).params for o in getattr(p, "opts", ())]
    assert flags == ["name", "--size", "--loud", "--last"]


def test_only_gives_a_subset_and_the_rest_keep_their_defaults() -> None:
    toy = typer.Typer(add_completion=False)
    got: list[_Toy] = []

    @toy.command(cls=PlainUsage)
    @with_options
    def command(opts: Annotated[_Toy, Only(("loud",))] = _Toy()) -> None:
        got.append(opts)

    assert CliRunner().invoke(toy, ["--loud"]).exit_code == 0
    assert got == [_Toy(3, True)]
    assert CliRunner().invoke(toy, ["--size", "5"]).exit_code == 2  # not an option here


def _params(command: Any) -> Iterator[Any]:
    yield from command.params
    for sub in getattr(command, "commands", {}).values():
        yield from _params(sub)


def _coerced(runtime: Any, value: Any, param: Any, ctx: Any) -> tuple[str, Any]:
    try:
        done = runtime.coerce(value, param=param, ctx=ctx)
    except Exception as err:  # what is refused, and in which words
        return type(err).__name__, getattr(err, "format_message", err.__str__)()
    return type(done).__name__, done


def test_option_values_are_what_typers_own_coercion_makes_of_them(tmp_path: Path) -> None:
    """Each parameter of every command is coerced without typer's pydantic adapters (they cost
    a run ~60 ms, issue 24), to what those adapters give, and refused in their words."""
    from tempmedbench_synonyms.cli._options import _Quick

    try:
        from typer._coercion import build_runtime_param
    except ImportError:  # an older typer: click's types coerce, and none of ours is given
        assert _Quick is None
        return

    readable = tmp_path / "file"
    readable.write_text("x")
    values: list[Any] = [
        None, 0, 3, 2.5, True, "25", "007", "0.5", "1e3", " 2", "-3", "x", "", "words", "exact",
        "WORDS", "-", "a//b/", str(readable), str(tmp_path), str(tmp_path / "missing"),
        "\udc80", ["a", "b"], ("x",), [], ["a", 1],
        "+1", "1_000", "\u0661", ".5", "1.", "inf", "~", "9" * 400, "1" * 5000,  # past int's digits
    ]  # fmt: skip
    command: Any = typer.main.get_command(app)
    ctx = typer.Context(command)
    checked = set()
    for param in _params(command):
        desc = param.type_descriptor
        quick, slow = _Quick(desc.parameter_info, desc.annotation, desc), build_runtime_param(desc)
        for value in values:
            expected = _coerced(slow, value, param, ctx)
            assert _coerced(quick, value, param, ctx) == expected, (param.name, value)
        checked.add(repr(desc.annotation))
    assert len(checked) == 9  # bool, int, float, str, Path, list[str] and three Literals


def test_option_values_fall_back_to_typers_own_coercion_when_its_private_parts_change(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The quick coercion stands on typer's private parts (``typer._coercion``): a typer whose
    parts take other arguments leaves typer's own coercion in place, and every command still
    parses its values."""
    from tempmedbench_synonyms.cli import _options

    def changed(*args: Any) -> Any:
        raise TypeError("RuntimeParam.__init__() takes other arguments now")

    monkeypatch.setattr(_options, "_Quick", changed)
    search: Any = typer.main.get_command(cli.app).commands["umls"].commands["search"]
    params = search.get_params(typer.Context(search))
    assert len(params) > 10 and all(getattr(p, "_runtime_param", None) is None for p in params)
    result = CliRunner().invoke(cli.app, ["umls", "search", "fever", "--limit", "x", "--json"])
    assert result.exit_code == 2
    assert json.loads(result.stdout)["message"] == (
        "Invalid value for '--limit': Input should be a valid integer, unable to parse string as "
        "an integer"
    )


@pytest.mark.parametrize("kind", ["no such module", "not a frozen dataclass"])
def test_no_quick_coercion_when_typers_private_parts_are_missing_or_changed(
    monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """A typer without ``typer._coercion`` (one before its pydantic adapters), or whose
    ``RuntimeParam`` a frozen dataclass cannot extend (its private parts changed), leaves
    typer's own coercion in place: the CLI still imports. Whichever typer is installed."""
    from tempmedbench_synonyms.cli import _options

    @dataclass
    class Changed:
        parameter_info: Any
        annotation: Any

    coercion = types.ModuleType("typer._coercion")
    coercion.RuntimeParam = Changed  # type: ignore[attr-defined]
    coercion.build_runtime_param = lambda desc: None  # type: ignore[attr-defined]
    param_types = types.ModuleType("typer._param_types")
    param_types.coerce_cli_choice = param_types.coerce_cli_path = None  # type: ignore[attr-defined]
    modules = {"typer._coercion": coercion, "typer._param_types": param_types}
    if kind == "no such module":
        modules["typer._coercion"] = None  # the import raises ImportError
    for name, module in modules.items():
        monkeypatch.setitem(sys.modules, name, module)
    assert _options._quick_class() is None
