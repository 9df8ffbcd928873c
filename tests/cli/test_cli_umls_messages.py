"""What the ``umls`` and ``cache`` commands say (``cli.umls``, ``cli.cache``): echoed input
bounded and escaped, one JSON line for a refused command line, ``-q`` quiet, tables without
always-empty columns and aligned for wide characters, words in the singular; against the fake
UTS serving the invented ``fixtures/umls`` files (the rows quoted beside each expected value)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from helpers import BASE, FIXTURES, behind_responses
from tempmedbench_synonyms.cli import app
from tempmedbench_synonyms.cli.cache import cache_app
from tempmedbench_synonyms.cli.umls import umls_app
from tempmedbench_synonyms.constants import __version__
from tempmedbench_synonyms.testing import CANARY_KEY, FakeUts, FakeUtsData, find_secret


@pytest.fixture
def fake() -> Iterator[FakeUts]:
    uts = FakeUts(FakeUtsData.from_meta(FIXTURES / "umls", release="2099AA"), api_key=CANARY_KEY)
    with behind_responses(uts):
        yield uts


def run(args: list[str], tmp_path: Path, *, command: Any = umls_app) -> Result:
    env = {"UMLS_BASE_URL": BASE, "TEMPMEDBENCH_CACHE_DIR": str(tmp_path / "cache"),
           "UMLS_API_KEY": CANARY_KEY}  # fmt: skip
    return CliRunner().invoke(command, args, env=env)


def no_key(result: Result, tmp_path: Path) -> bool:
    texts = {"stdout": result.stdout, "stderr": result.stderr}
    return find_secret(CANARY_KEY, texts=texts, folders=[tmp_path]) == []


# -- echoed input ------------------------------------------------------------------------------


def test_an_inputs_label_on_stderr_is_escaped_and_bounded_its_json_input_exact(
    fake: FakeUts, tmp_path: Path
) -> None:
    """A right-to-left override or a line separator in an input would reorder or break the
    terminal line that names it; a CUI of 70,000 characters would make it 70 kB. The label
    is escaped and cut as the message is; ``input`` in JSON stays the exact input (to join on),
    ``query`` and the message are cut."""
    long = "C" + "9" * 70_000
    result = run(["definitions", "\u202eC9000001", "C9000001\u2028", long, "--umls-release",
                  "2099AA", "--json", "-q"], tmp_path)  # fmt: skip
    assert result.exit_code == 2
    # U+2028 is written as its escape: a reader that splits lines at it (str.splitlines)
    # still reads one line an input
    rtl, sep, big = (json.loads(line) for line in result.stdout.splitlines())
    assert (rtl["input"], sep["input"], big["input"]) == ("\u202eC9000001", "C9000001\u2028", long)
    assert len(big["message"]) < 200 and len(big["query"]) < 200
    assert big["query"] == "definitions of CUI C" + "9" * 60 + "..."
    expected = (
        "CUI '\\u202eC9000001' is not a UMLS concept identifier: expected C and 7 digits, such "
        "as C0020538"
    )
    assert rtl["message"] == expected
    assert result.stderr.splitlines() == [
        f"error: \\u202eC9000001: {expected}",
        "error: C9000001\\u2028: CUI 'C9000001\\u2028' is not a UMLS concept identifier: "
        "expected C and 7 digits, such as C0020538",
        f"error: C{'9' * 59}...: CUI 'C{'9' * 39}...' is not a UMLS concept identifier: "
        "expected C and 7 digits, such as C0020538",
    ]
    assert fake.seen == [] and no_key(result, tmp_path)


# -- a refused command line under --json --------------------------------------------------------


def test_a_refused_command_line_under_json_is_one_json_line(tmp_path: Path) -> None:
    for command, args, prog in (
        (umls_app, [], "umls"),
        (app, ["umls"], "tempmedbench-synonyms umls"),
    ):
        result = run([*args, "search", "vivi", "--limit", "abc", "--json"], tmp_path,
                     command=command)  # fmt: skip
        assert result.exit_code == 2
        (line,) = result.stdout.splitlines()
        got = json.loads(line)
        # the parser's own words after the option's name are the CLI library's, not pinned
        assert got.pop("message").startswith("Invalid value for '--limit': ")
        assert got == {"exit_code": 2, "hint": f"{prog} search --help lists the arguments and "
                       "options", "outcome": "bad_input", "schema_version": 1,
                       "tool_version": __version__}  # fmt: skip


def test_an_option_the_command_lacks_suggests_no_unlike_one(tmp_path: Path) -> None:
    """``umls atom --limit 5``: atom has no --limit; click's "(Possible options: --timeout)"
    is no help. A near miss (``--timout``) still gets its suggestion."""
    result = run(["atom", "A9000011", "--limit", "5", "--json"], tmp_path)
    assert result.exit_code == 2
    assert json.loads(result.stdout)["message"] == "No such option: --limit"
    near = run(["atom", "A9000011", "--timout", "5", "--json"], tmp_path)
    assert json.loads(near.stdout)["message"] == (
        "No such option: --timout (Possible options: --timeout)"
    )


# -- -q ----------------------------------------------------------------------------------------


def test_quiet_prints_no_not_found_line_but_still_bad_input(fake: FakeUts, tmp_path: Path) -> None:
    result = run(["search", "nosuchword", "--umls-release", "2099AA", "-q"], tmp_path)
    assert (result.exit_code, result.stdout, result.stderr) == (1, "", "")
    many = run(["concept", "C0000001", "XYZ", "--umls-release", "2099AA", "-q"], tmp_path)
    assert many.exit_code == 2
    assert many.stderr == (
        "error: XYZ: CUI 'XYZ' is not a UMLS concept identifier: expected C and 7 digits, such "
        "as C0020538\n"
    )


# -- tables ------------------------------------------------------------------------------------


def test_hierarchy_with_two_directions_says_give_only_one(fake: FakeUts, tmp_path: Path) -> None:
    result = run(["hierarchy", "SNOMEDCT_US", "9990101009", "--parents", "--children", "--json"],
                 tmp_path)  # fmt: skip
    assert result.exit_code == 2
    assert json.loads(result.stdout)["message"] == (
        "give only one of --parents, --children, --ancestors, --descendants (given: --parents, "
        "--children)"
    )
    assert fake.seen == []


def test_no_always_empty_column(fake: FakeUts, tmp_path: Path) -> None:
    # MRSTY.RRF: C9000001 is T901 "Invented Disorder" and T902 "Invented Weather Finding"; the
    # tree number comes only with --details
    types = run(["semantic-types", "C9000001", "--umls-release", "2099AA"], tmp_path)
    assert types.stdout.splitlines()[0].split() == ["NAME", "TUI"]
    # MRHIER.RRF: 9990101009's ancestors are codes, with no AUI of their own
    codes = run(["hierarchy", "SNOMEDCT_US", "9990101009", "--ancestors", "--umls-release",
                 "2099AA"], tmp_path)  # fmt: skip
    assert codes.stdout.splitlines()[0].split() == ["UI", "NAME", "SOURCE"]


def test_concept_says_yes_or_no(fake: FakeUts, tmp_path: Path) -> None:
    concept = run(["concept", "C9000003", "--umls-release", "2099AA"], tmp_path)
    assert concept.exit_code == 0, concept.stderr
    # a field the files do not hold (status, SPEC 12) is an empty value
    rows = dict([*line.split(None, 1), ""][:2] for line in concept.stdout.splitlines()[1:])
    assert rows["suppressible"] == "no"


def test_a_table_aligns_wide_and_combining_characters() -> None:
    from rich.cells import cell_len

    from tempmedbench_synonyms.cli.umls import _table

    names = ["Ris pim \U0001fa7a", "Lo\u0308", "\u6f22\u5b57", "plain"]
    text = _table([[n, "x"] for n in names], ["NAME", "V"])
    lines = text.splitlines()
    # the second column starts at the same terminal column on every line
    starts = [cell_len(line[: line.rindex(" ") + 1]) for line in lines]
    assert len(set(starts)) == 1, lines


# -- the cache ---------------------------------------------------------------------------------


def test_cache_clear_and_info_of_one_answer_say_it_in_the_singular(
    fake: FakeUts, tmp_path: Path
) -> None:
    run(["concept", "C9000001", "--umls-release", "2099AA"], tmp_path)  # one request
    info = run(["info"], tmp_path, command=cache_app)
    assert info.stdout.splitlines()[1].startswith("1 answer, ")
    assert f"  {BASE}: 1 answer, " in info.stdout
    cleared = run(["clear"], tmp_path, command=cache_app)
    assert cleared.stderr == f"removed 1 cached answer from {tmp_path / 'cache'}\n"


def test_an_input_holding_the_key_far_in_is_masked_before_it_is_cut(
    fake: FakeUts, tmp_path: Path
) -> None:
    """The label (60 characters), the JSON query (80) and the message's quote (40) are cut; the
    key is masked first, so no cut leaves a piece of it that masking would no longer know."""
    term = "w" * 50 + " " + CANARY_KEY
    result = run(["search", term, "--umls-release", "2099AA", "--json"], tmp_path)
    assert result.exit_code == 2
    (line,) = [json.loads(x) for x in result.stdout.splitlines()]
    assert line["query"] == "words search for '" + "w" * 50 + " ***'"
    refusal = (
        "the input holds the API key, which this tool never sends as a term or code nor stores "
        "in its cache"
    )
    assert result.stderr == (
        f"error: {refusal}\nhint: give the term or code itself; the key belongs in UMLS_API_KEY "
        "or a key file (--api-key-file)\n"
    )
    # in a batch, a line of stderr starts with the input's label, cut at 60 characters (-q: the
    # other input's "not found" is not said)
    batch = run(["search", term, "z" * 70, "--umls-release", "2099AA", "-q"], tmp_path)
    assert batch.stderr == f"error: {'w' * 50} ***: {refusal}\n"
    for piece in (CANARY_KEY[:6], CANARY_KEY[-6:]):
        assert piece not in result.stdout + result.stderr + batch.stdout + batch.stderr
    assert [s.params for s in fake.seen if ("string", term) in s.params] == []
