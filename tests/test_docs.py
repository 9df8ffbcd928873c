"""docs/reference.md says what the code does: every command and option of the Typer app and
nothing else, the options' defaults, every environment variable ``constants`` names, every limit
as the constant the code uses, and the README's links into it land on a heading.

The reference's layout is what these tests read: a command is a heading that names it in
backticks (``### `tempmedbench-synonyms umls search TERM...` ``), its options are the first cells
of the tables under it, and a line starting ``Also:`` adds the options of the sections it links
to (the network options, the output options...).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import typer

from helpers import ROOT
from tempmedbench_synonyms import constants
from tempmedbench_synonyms.cli import app, regenerate_app
from tempmedbench_synonyms.jsonio import SCHEMA_VERSION

README = ROOT / "README.md"
REFERENCE = ROOT / "docs" / "reference.md"
MAIN = "tempmedbench-synonyms"
REGENERATE = "tempmedbench-regenerate-synonyms"


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation but ``-`` and ``_`` dropped,
    spaces made ``-``."""
    kept = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return kept.replace(" ", "-")


@dataclass
class Section:
    heading: str
    body: str
    options: set[str] = field(default_factory=set)
    rows: dict[str, str] = field(default_factory=dict)
    links: list[str] = field(default_factory=list)


@functools.cache  # read once a session: the files and the app do not change
def sections(path: Path = REFERENCE) -> dict[str, Section]:
    """Every heading of ``path`` by its anchor, with the options its tables name (the first cell
    of each row), each option's row, and the anchors its ``Also:`` line links to."""
    found: dict[str, Section] = {}
    parts = re.split(r"^(#{1,4} .*)$", path.read_text(encoding="utf-8"), flags=re.MULTILINE)
    for heading, body in zip(parts[1::2], parts[2::2], strict=True):
        section = Section(heading.lstrip("#").strip(), body)
        for row in re.findall(r"^\| (.*) \|$", body, flags=re.MULTILINE):
            first = row.split(" | ")[0]
            for option in re.findall(r"`(--?[a-z][a-z-]*)", first):
                section.options.add(option)
                section.rows[option] = row
        also = re.search(r"^Also: (.*?)(?:\n\n|\Z)", body, flags=re.MULTILINE | re.DOTALL)
        if also:
            section.links = re.findall(r"\]\(#([^)]+)\)", also.group(1))
        found[slug(section.heading)] = section
    return found


def documented_options(anchor: str, all_sections: dict[str, Section]) -> dict[str, str]:
    """The options a section documents, with their rows: its own, and those of the sections
    its ``Also:`` line links to (and theirs), the section's own winning."""
    section = all_sections[anchor]
    rows: dict[str, str] = {}
    for link in section.links:
        assert link in all_sections, f"{section.heading}: Also links to a missing #{link}"
        rows.update(documented_options(link, all_sections))
    rows.update(section.rows)
    return rows


@functools.cache
def real_commands() -> dict[str, Any]:
    """Every command a user can type, by its words (``tempmedbench-synonyms umls search``): the
    leaves of the Typer app, its root, and the second console script."""
    commands: dict[str, Any] = {}

    def walk(command: Any, words: str) -> None:
        subs = getattr(command, "commands", None)
        if subs is None or words == MAIN:
            commands[words] = command
        for name, sub in (subs or {}).items():
            walk(sub, f"{words} {name}")

    walk(typer.main.get_command(app), MAIN)
    commands[REGENERATE] = typer.main.get_command(regenerate_app)
    return {words: cmd for words, cmd in commands.items() if not getattr(cmd, "commands", None)
            or words == MAIN}  # fmt: skip


def real_options(command: Any) -> dict[str, Any]:
    """A command's options by every spelling (``-q`` and ``--quiet``), but ``--help``/``-h``."""
    return {
        spelling: param
        for param in command.params
        if param.param_type_name == "option"
        for spelling in (*param.opts, *param.secondary_opts)
        if spelling not in ("--help", "-h")
    }


@functools.cache
def command_sections() -> dict[str, tuple[str, Section]]:
    """The reference's command headings, by the command's words: its anchor and section."""
    known = real_commands()
    found: dict[str, tuple[str, Section]] = {}
    for anchor, section in sections().items():
        named = re.fullmatch(r"`((?:tempmedbench-[a-z-]+)(?: [a-z-]+)*)(?: [A-Z.\[\] ]*)?`",
                             section.heading)  # fmt: skip
        if named is None:
            continue
        words = named.group(1)
        assert words in known, f"the reference documents {words!r}, which is no command"
        assert words not in found, f"{words} documented twice"
        found[words] = (anchor, section)
    return found


def test_every_command_is_documented_and_no_other() -> None:
    assert sorted(command_sections()) == sorted(real_commands())
    # 14 umls commands, 3 gps, 2 cache, 5 others, the root and the second script
    assert len(real_commands()) == 26


@pytest.mark.parametrize("words", sorted(real_commands()))
def test_every_option_is_documented_and_no_other(words: str) -> None:
    anchor, _ = command_sections()[words]
    documented = set(documented_options(anchor, sections()))
    real = set(real_options(real_commands()[words]))
    assert sorted(real - documented) == [], f"{words}: options missing from docs/reference.md"
    assert sorted(documented - real) == [], f"{words}: docs/reference.md names options it lacks"


@pytest.mark.parametrize("words", sorted(real_commands()))
def test_every_argument_is_named_in_its_heading(words: str) -> None:
    _, section = command_sections()[words]
    arguments = [
        name
        for param in real_commands()[words].params
        if param.param_type_name == "argument"
        for name in (param.metavar or param.name.upper()).split()
    ]
    shown = re.findall(r"\b[A-Z]+\b", section.heading)
    assert shown == arguments, section.heading


def shown_default(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, Path):
        return value.as_posix()
    return str(value)


@pytest.mark.parametrize("words", sorted(real_commands()))
def test_every_default_is_the_one_documented(words: str) -> None:
    # An option with a default of its own says it as "default `VALUE`" in its row.
    anchor, _ = command_sections()[words]
    rows = documented_options(anchor, sections())
    for spelling, param in real_options(real_commands()[words]).items():
        if not spelling.startswith("--") or param.is_flag or param.count:
            continue  # a flag, or -v counted (-vv)
        if param.default in (None, ()):
            continue  # the default is found at run time (the table's release, a variable)
        expected = f"default `{shown_default(param.default)}`"
        assert expected in rows[spelling], f"{words} {spelling}: {rows[spelling]}"


def table_rows(heading: str) -> list[list[str]]:
    """The rows of the table under ``## heading`` (cells stripped), header and rule left out."""
    body = sections()[slug(heading)].body
    rows = [line.strip("|").split(" | ") for line in body.splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in row] for row in rows[1:]]


def test_the_environment_variables_are_the_ones_constants_names() -> None:
    documented = [row[0].strip("`") for row in table_rows("Environment variables")]
    named = [value for name, value in vars(constants).items() if name.endswith("_ENV")]
    assert sorted(documented) == sorted(named)


UNITS = {"": 1, "s": 1, "bytes": 1, "KiB": 1 << 10, "MiB": 1 << 20}


def constant(dotted: str) -> Any:
    """The value ``module.NAME`` (or ``module.Class.field``, a field's default) names, the
    module's path relative to the package."""
    module, _, name = dotted.rpartition(".")
    try:
        return getattr(importlib.import_module(f"tempmedbench_synonyms.{module}"), name)
    except ModuleNotFoundError:
        owner = constant(module)
        if dataclasses.is_dataclass(owner):  # a field's default (slots hide it on the class)
            return {f.name: f.default for f in dataclasses.fields(owner)}[name]
        return getattr(owner, name)


def test_every_limit_is_the_constant_the_code_uses() -> None:
    rows = table_rows("Limits")
    assert len(rows) >= 25
    for what, value, where in rows:
        number, _, unit = value.partition(" ")
        actual = constant(where.strip("`"))
        assert float(number) * UNITS[unit] == actual, f"{what}: {value} but {where} = {actual}"


def test_the_limits_the_readme_and_spec_quote_are_in_the_table() -> None:
    constants_named = {row[2].strip("`") for row in table_rows("Limits")}
    assert {
        "constants.MAX_RATE", "constants.DEFAULT_RATE", "constants.RETRY_BUDGET",
        "uts.client.MAX_BODY", "uts.client.MAX_ANSWER", "uts.client.RetryPolicy.max_attempts",
    } <= constants_named  # fmt: skip


def test_the_json_schema_version_is_the_one_documented() -> None:
    assert f"`schema_version` ({SCHEMA_VERSION} today)" in REFERENCE.read_text(encoding="utf-8")


@pytest.mark.parametrize("doc", [README, REFERENCE, ROOT / "docs" / "architecture.md"])
def test_every_link_into_the_docs_lands_on_a_heading(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    targets = {README: sections(README), REFERENCE: sections(REFERENCE)}
    links = re.findall(r"\]\(((?:docs/)?[a-z]*\.md)?#([^)]+)\)", text)
    assert links or doc.name == "architecture.md"
    for file, anchor in links:
        target = doc if not file else (ROOT / file if file.startswith("docs/") else doc.parent
                                       / file)  # fmt: skip
        assert anchor in targets[target.resolve()], f"{doc.name}: {file}#{anchor}"


def test_every_benchmark_is_run_by_make_bench_and_listed_in_the_readme() -> None:
    """A script added to bench/ is run by ``make bench`` and named in the README's list, in the
    same order; a name left for a script that is gone fails too."""
    scripts = sorted(p.name for p in (ROOT / "bench").glob("bench_*.py"))
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    make_bench = makefile.split("\nbench:", 1)[1].split("\n\n", 1)[0]
    run = re.findall(r"bench/(bench_\w+\.py)", make_bench)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Benchmarks\n", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^- `(bench_\w+\.py)`", section, flags=re.MULTILINE)
    assert sorted(run) == scripts
    assert listed == run
