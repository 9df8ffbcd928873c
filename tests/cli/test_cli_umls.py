"""The ``umls`` and ``cache`` commands, through CliRunner: exit codes, stdout, stderr apart."""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import responses
import typer
from typer.testing import CliRunner, Result

from helpers import BASE, behind_responses
from tempmedbench_synonyms import __version__
from tempmedbench_synonyms.cli.cache import cache_app
from tempmedbench_synonyms.cli.umls import umls_app
from tempmedbench_synonyms.paths import UtsRequest
from tempmedbench_synonyms.testing import (
    CANARY_KEY,
    FakeUts,
    FakeUtsData,
    FakeUtsServer,
    Faults,
    find_secret,
    invented_rows,
)
from tempmedbench_synonyms.uts.ratelimit import shared_state_path


@pytest.fixture
def fake() -> Iterator[FakeUts]:
    uts = FakeUts(FakeUtsData.from_lines(invented_rows(3, atoms_per_concept=4)), api_key=CANARY_KEY)
    with behind_responses(uts):
        yield uts


def run(app: typer.Typer, args: list[str], tmp_path: Path, key: str | None = CANARY_KEY) -> Result:
    env = {"UMLS_BASE_URL": BASE, "TEMPMEDBENCH_CACHE_DIR": str(tmp_path / "cache"),
           "UMLS_API_KEY": key}  # fmt: skip
    return CliRunner().invoke(app, args, env=env)


def test_atoms_table(fake: FakeUts, tmp_path: Path) -> None:
    result = run(umls_app, ["atoms", "C9000001", "--sab", "SNOMEDCT_US",
                            "--umls-release", "2099AA"], tmp_path)  # fmt: skip
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["AUI", "SAB", "TTY", "LAT", "CUI", "USABLE", "NAME"]
    assert [line.split()[:6] for line in lines[1:]] == [
        ["A90000001", "SNOMEDCT_US", "PT", "ENG", "C9000001", "yes"],
        ["A90000002", "SNOMEDCT_US", "SY", "ENG", "C9000001", "yes"],
        ["A90000003", "SNOMEDCT_US", "SY", "ENG", "C9000001", "yes"],
    ]
    assert result.stderr == "3 atoms of CUI C9000001 in SNOMEDCT_US, UMLS 2099AA\n"
    assert [(s.path, dict(s.params)) for s in fake.seen] == [
        ("/content/2099AA/CUI/C9000001/atoms",
         {"includeObsolete": "false", "includeSuppressible": "false", "language": "ENG",
          "pageSize": "200", "sabs": "SNOMEDCT_US"}),
    ]  # fmt: skip


def test_one_answer_builds_its_request_once(
    fake: FakeUts, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The input check's request is the one asked (issue 23: one request object per answer)."""
    built: list[UtsRequest] = []
    init = UtsRequest.__init__

    def counted(self: UtsRequest, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        built.append(self)

    monkeypatch.setattr(UtsRequest, "__init__", counted)
    result = run(umls_app, ["atoms", "C9000001", "--umls-release", "2099AA"], tmp_path)
    assert result.exit_code == 0, result.stderr
    assert result.stderr == "4 atoms of CUI C9000001, UMLS 2099AA\n"
    assert [r.path for r in built] == ["/content/2099AA/CUI/C9000001/atoms"]
    assert [s.path for s in fake.seen] == ["/content/2099AA/CUI/C9000001/atoms"]
    built.clear()  # its dry run, on the warm cache, reads the cache with the check's request
    planned = run(umls_app, ["atoms", "C9000001", "--umls-release", "2099AA", "--dry-run"],
                  tmp_path)  # fmt: skip
    assert planned.exit_code == 0, planned.stderr
    assert planned.stderr == (
        "dry run: 1 input: 1 answered by the cache, 0 to fetch, about 0 s at 15 requests a second\n"
    )
    assert [r.path for r in built] == ["/content/2099AA/CUI/C9000001/atoms"]
    assert len(fake.seen) == 1


def test_atoms_json_every_source_current_release(fake: FakeUts, tmp_path: Path) -> None:
    result = run(umls_app, ["atoms", "C9000002", "--json"], tmp_path)
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert (doc["outcome"], doc["release"], doc["found"]) == ("found", "2099AA", True)
    assert [(a["aui"], a["sab"], a["tty"]) for a in doc["atoms"]] == [
        ("A90000010", "MTH", "PN"),
        ("A90000006", "SNOMEDCT_US", "PT"),
        ("A90000007", "SNOMEDCT_US", "SY"),
        ("A90000008", "SNOMEDCT_US", "SY"),
    ]
    name = next(r.name for r in fake.data.rows if r.aui == "A90000006")
    assert doc["atoms"][1] == {
        "aui": "A90000006", "name": name, "tty": "PT",
        "sab": "SNOMEDCT_US", "language": "ENG", "cui": "C9000002", "code": "1000001",
        "obsolete": False, "suppressible": False, "usable": True,
    }  # fmt: skip
    # `current` is resolved by the release probe (SPEC 11: a command that takes a CUI).
    assert [s.path for s in fake.seen] == [
        "/content/current/CUI/C9000002", "/content/2099AA/CUI/C9000002/atoms"
    ]  # fmt: skip
    assert (doc["input"], doc["query"], doc["exit_code"], doc["truncated"]) == (
        "C9000002", "CUI C9000002", 0, False
    )  # fmt: skip
    assert doc["message"] == "4 atoms of CUI C9000002, UMLS 2099AA"
    assert doc["hint"] is None
    # results: the atoms as UTS sent them, in its order, every key kept ("NONE" as null)
    assert sorted(r["ui"] for r in doc["results"]) == sorted(a["aui"] for a in doc["atoms"])
    sent = next(r for r in doc["results"] if r["ui"] == "A90000006")
    assert (sent["classType"], sent["termType"], sent["obsolete"], sent["parents"]) == (
        "Atom", "PT", "false", None
    )  # fmt: skip


def test_source_and_atom_and_concept(fake: FakeUts, tmp_path: Path) -> None:
    src = run(umls_app, ["source", "SNOMEDCT_US", "1000002", "--json"], tmp_path)
    assert src.exit_code == 0, src.stderr
    assert {a["aui"] for a in json.loads(src.stdout)["atoms"]} == {
        "A90000011", "A90000012", "A90000013"
    }  # fmt: skip
    one = run(umls_app, ["atom", "A90000011", "--json"], tmp_path)
    assert one.exit_code == 0, one.stderr
    assert [a["aui"] for a in json.loads(one.stdout)["atoms"]] == ["A90000011"]
    concept = run(umls_app, ["concept", "C9000003"], tmp_path)
    assert concept.exit_code == 0, concept.stderr
    # a field the files do not hold (status, SPEC 12) is an empty value
    rows = dict([*line.split(None, 1), ""][:2] for line in concept.stdout.splitlines()[1:])
    assert rows["cui"] == "C9000003"
    assert rows["atom_count"] == "5"
    assert rows["release"] == "2099AA"
    assert rows["semantic_types"] == "Invented Type"
    # `current` was learnt once (from the first answer's links) and remembered.
    assert [s.path for s in fake.seen] == [
        "/content/current/source/SNOMEDCT_US/1000002/atoms",
        "/content/2099AA/AUI/A90000011",
        "/content/2099AA/CUI/C9000003",
    ]


def test_not_found_exits_1(fake: FakeUts, tmp_path: Path) -> None:
    result = run(umls_app, ["concept", "C0000000", "--umls-release", "2099AA"], tmp_path)
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == (
        "UMLS 2099AA has no concept C0000000 (404 Not Found)\n"
        "hint: check the CUI (C and 7 digits, such as C0020538)\n"
    )
    as_json = run(umls_app, ["atom", "A0000000", "--umls-release", "2099AA", "--json"], tmp_path)
    assert as_json.exit_code == 1
    assert as_json.stdout.count("\n") == 1  # one JSON line
    assert json.loads(as_json.stdout) == {
        "input": "A0000000", "outcome": "not_found", "exit_code": 1, "release": "2099AA",
        "query": "AUI A0000000", "results": [], "truncated": False,
        "message": "UMLS 2099AA has no atom A0000000 (404 Not Found)",
        "hint": "check the AUI (A and 7 to 9 digits, such as A3220484)",
        "found": False, "atoms": [], "warnings": [], "schema_version": 1,
        "tool_version": __version__,
    }  # fmt: skip
    # The first 404 of a command was checked once against the release's sources (no key).
    assert [(s.path, s.key_sent) for s in fake.seen] == [
        ("/content/2099AA/CUI/C0000000", True),
        ("/metadata/2099AA/sources", False),
        ("/content/2099AA/AUI/A0000000", True),
    ]


def test_a_second_run_is_answered_from_the_cache_and_offline_works(
    fake: FakeUts, tmp_path: Path
) -> None:
    args = ["atoms", "C9000001", "--umls-release", "2099AA", "--json"]
    first = run(umls_app, args, tmp_path)
    offline = run(umls_app, [*args, "--offline", "-v"], tmp_path, key=None)
    assert offline.exit_code == 0, offline.stderr
    assert offline.stdout == first.stdout
    assert "0 requests sent, 1 answer from the cache" in offline.stderr
    assert len(fake.seen) == 1
    miss = run(umls_app, ["atoms", "C9000002", "--umls-release", "2099AA", "--offline"],
               tmp_path)  # fmt: skip
    assert miss.exit_code == 4
    # A cache folder moved as a whole answers from its new place (README, "The cache").
    (tmp_path / "cache").rename(tmp_path / "moved")
    moved = run(umls_app, [*args, "--offline", "--cache-dir", str(tmp_path / "moved")], tmp_path,
                key=None)  # fmt: skip
    assert (moved.exit_code, moved.stdout) == (0, first.stdout)
    assert len(fake.seen) == 1
    assert miss.stderr.startswith("error: --offline, and the cache does not hold")
    assert miss.stderr.splitlines()[-1] == (
        "hint: run once without --offline to fill the cache (a regeneration can also read a "
        "local MRCONSO.RRF with --mrconso PATH)"
    )


def test_a_missing_key_is_exit_3_with_a_hint(fake: FakeUts, tmp_path: Path) -> None:
    result = run(umls_app, ["concept", "C9000001", "--json"], tmp_path, key=None)
    assert result.exit_code == 3
    assert result.stderr.startswith("error: no UMLS API key")
    assert result.stderr.splitlines()[-1] == (
        "hint: copy the key from your UTS profile (https://uts.nlm.nih.gov/uts/profile) into the "
        "UMLS_API_KEY environment variable, or into a file named by --api-key-file or "
        "UMLS_API_KEY_FILE (a regeneration needs no key with --mrconso PATH, which reads a local "
        "MRCONSO.RRF instead)"
    )
    doc = json.loads(result.stdout)
    assert (doc["outcome"], doc["exit_code"]) == ("not_authorised", 3)
    assert fake.seen == []


@pytest.mark.parametrize(
    ("command", "before"),
    [
        ("concept C9000001", {"found": False, "concept": None}),
        ("atom A90000001", {"found": False, "atoms": []}),
        ("search fever", {}),
    ],
)
def test_an_error_that_ends_the_batch_has_the_keys_of_an_answer(
    fake: FakeUts, tmp_path: Path, command: str, before: dict[str, Any]
) -> None:
    """The JSON line of an error that ends the batch has every key of an answer's line: those of
    SPEC 11, and the ones the command printed before it, empty."""
    result = run(umls_app, [*command.split(), "--json"], tmp_path, key=None)
    assert result.exit_code == 3
    doc = json.loads(result.stdout)
    for key in ("message", "hint", "tool_version"):
        assert doc.pop(key)
    assert doc == {
        "outcome": "not_authorised", "exit_code": 3, "input": None, "release": None,
        "query": None, "results": [], "truncated": False, **before, "schema_version": 1,
    }  # fmt: skip


def test_a_refused_key_is_exit_3_and_never_shown(fake: FakeUts, tmp_path: Path) -> None:
    result = run(umls_app, ["concept", "C9000001"], tmp_path, key="CANARY-KEY-wrong-0001")
    assert result.exit_code == 3
    assert result.stderr.splitlines()[0] == (
        "error: UMLS answered HTTP 401 for /content/current/CUI/C9000001: the API key is "
        "missing, invalid or expired"
    )
    assert "UTS profile" in result.stderr
    assert find_secret("CANARY-KEY-wrong-0001",
                       texts={"out": result.stdout, "err": result.stderr}) == []  # fmt: skip


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--rate", "25"], "above 20 requests a second"),
        (["--rate", "0"], "at least 0.1 requests a second"),
        (["--timeout", "0"], "error: --timeout 0 is out of range: it must be more than 0"),
        (["--timeout", "500"], "error: --timeout 500 is out of range: it must be more than 0"),
    ],
)
def test_bad_rates_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    result = run(umls_app, ["concept", "C9000001", *args], tmp_path)
    assert result.exit_code == 2
    assert message in result.stderr


def test_a_dangling_state_folder_symlink_is_said_in_json_warnings(
    fake: FakeUts, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """trust 24: ``warnings: []``, and the budget was shared with no one, in silence."""
    link = tmp_path / "state"
    link.symlink_to(tmp_path / "missing")
    monkeypatch.setenv("TEMPMEDBENCH_STATE_DIR", str(link))
    result = run(umls_app, ["concept", "C9000001", "--umls-release", "2099AA", "--json"], tmp_path)
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["warnings"] == [
        f"cannot use the shared rate state {shared_state_path(BASE, link)}: {link} is a symbolic "
        f"link to {tmp_path / 'missing'}, which does not exist; the rate limit holds for this "
        "process only, not for other runs on this machine"
    ]
    assert len(fake.seen) == 1
    assert not (tmp_path / "missing").exists()


def test_a_dot_segment_code_is_bad_input_and_sends_nothing(fake: FakeUts, tmp_path: Path) -> None:
    result = run(umls_app, ["source", "SNOMEDCT_US", "..", "--umls-release", "2099AA"], tmp_path)
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (
        "error: code '..' cannot be sent to UMLS: it is made only of dots, which "
        "HTTP clients remove from a URL path (RFC 3986, section 5.2.4), so another resource "
        "would be asked for\n"
        "hint: check the code: give it as UMLS lists it (in a release table, the concept's "
        '"code")\n'
    )
    assert fake.seen == []


def test_the_key_file_option(fake: FakeUts, tmp_path: Path) -> None:
    key_file = tmp_path / "umls.key"
    key_file.write_text(CANARY_KEY + "\n")
    key_file.chmod(0o600)
    result = run(umls_app, ["concept", "C9000001", "--api-key-file", str(key_file)], tmp_path,
                 key=None)  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert fake.seen[0].key_ok


@pytest.mark.parametrize(
    ("command", "example"),
    [
        ("atoms", "C0020538 --sab SNOMEDCT_US"),
        ("source", "SNOMEDCT_US 38341003"),
        ("atom", "A3220484 --json"),
        ("concept", "C0020538"),
    ],
)
def test_help_has_an_example_on_one_line(command: str, example: str) -> None:
    """One example each, whole on one line of an 80-column terminal, so that it can be copied."""
    result = CliRunner().invoke(umls_app, [command, "--help"], env={"COLUMNS": "80"})
    assert result.exit_code == 0
    lines = [line.strip() for line in result.stdout.splitlines()]
    after = lines[lines.index("Example:") + 1 :]
    assert next(line for line in after if line) == f"tempmedbench-synonyms umls {command} {example}"


def test_over_a_real_socket_nothing_leaks(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="tempmedbench_synonyms")
    fake = FakeUts(
        FakeUtsData.from_lines(invented_rows(2)),
        api_key=CANARY_KEY,
        faults=Faults(script=["reset", "html502", "429"], retry_after="0"),
    )
    with FakeUtsServer(fake) as server:
        result = CliRunner().invoke(
            umls_app,
            ["atoms", "C9000001", "--json", "--base-url", server.base_url, "-vv"],
            env={"UMLS_API_KEY": CANARY_KEY, "TEMPMEDBENCH_CACHE_DIR": str(tmp_path / "c")},
        )
    assert result.exit_code == 0, result.stderr
    assert len(json.loads(result.stdout)["atoms"]) == 4
    # the release probe met the faults; then the atoms
    assert [s.fault for s in fake.seen] == ["reset", "html502", "429", None, None]
    assert "/rest/content/2099AA/CUI/C9000001/atoms?" in caplog.text  # urllib3 logged the URL
    assert (
        find_secret(
            CANARY_KEY,
            texts={"stdout": result.stdout, "stderr": result.stderr, "logs": caplog.text},
            folders=[tmp_path],
        )
        == []
    )


# -- cache info / clear ------------------------------------------------------------------------


def test_cache_info_and_clear(fake: FakeUts, tmp_path: Path) -> None:
    empty = run(cache_app, ["info"], tmp_path)
    assert empty.exit_code == 0
    assert empty.stdout == f"cache folder: {tmp_path / 'cache'}\nempty: nothing cached yet\n"
    run(umls_app, ["atoms", "C9000001", "--umls-release", "2099AA"], tmp_path)
    run(umls_app, ["atom", "A90000001", "--umls-release", "2099AA"], tmp_path)
    info = run(cache_app, ["info", "--json"], tmp_path)
    doc = json.loads(info.stdout)
    assert (doc["entries"], doc["temporary_files"]) == (2, 0)
    assert doc["namespaces"][0]["base_url"] == BASE
    assert doc["namespaces"][0]["releases"] == {"2099AA": 2}
    text = run(cache_app, ["info"], tmp_path)
    size = doc["bytes"]
    assert 1000 <= size < 1_000_000  # two small invented answers: shown in kB, one decimal
    assert text.stdout.splitlines()[1] == f"2 answers, {size / 1000:.1f} kB"
    assert f"  {BASE}: 2 answers, " in text.stdout
    cleared = run(cache_app, ["clear"], tmp_path)
    assert cleared.exit_code == 0
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    not_a_folder = run(cache_app, ["info", "--cache-dir", str(tmp_path / "a-file")], tmp_path)
    assert (not_a_folder.exit_code, not_a_folder.stdout, not_a_folder.stderr) == (
        2,
        "",
        f"error: {tmp_path / 'a-file'}: the cache folder is a file, not a folder\n"
        "hint: give a folder with --cache-dir or TEMPMEDBENCH_CACHE_DIR\n",
    )
    as_json = run(cache_app, ["info", "--cache-dir", str(tmp_path / "a-file"), "--json"], tmp_path)
    assert json.loads(as_json.stdout) == {
        "outcome": "bad_input",
        "exit_code": 2,
        "message": f"{tmp_path / 'a-file'}: the cache folder is a file, not a folder",
        "hint": "give a folder with --cache-dir or TEMPMEDBENCH_CACHE_DIR",
        "schema_version": 1,
        "tool_version": __version__,
    }
    assert cleared.stderr == f"removed 2 cached answers from {tmp_path / 'cache'}\n"
    assert json.loads(run(cache_app, ["info", "--json"], tmp_path).stdout)["entries"] == 0


def test_cache_dir_option_beats_the_environment(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cache_app,
        ["info", "--json", "--cache-dir", str(tmp_path / "flag")],
        env={"TEMPMEDBENCH_CACHE_DIR": str(tmp_path / "env")},
    )
    assert json.loads(result.stdout)["root"] == str(tmp_path / "flag")


# -- identifiers are checked before anything is sent or cached (uts.identifiers) -----------------

SAB_HINT = 'check the SAB: give it as UMLS lists it (in a release table, the concept\'s "sab")'


@pytest.mark.parametrize(
    ("args", "stderr"),
    [
        (["concept", "XYZ"],
         "error: CUI 'XYZ' is not a UMLS concept identifier: expected C and 7 digits, such as "
         "C0020538\nhint: check the CUI: give it as UMLS lists it (in a release "
         "table, the concept's \"cui\")\n"),
        (["atoms", "C12345678"],
         "error: CUI 'C12345678' is not a UMLS concept identifier: expected C and 7 digits, such "
         "as C0020538\nhint: check the CUI: give it as UMLS lists it (in a release "
         "table, the concept's \"cui\")\n"),
        (["atom", "A1"],
         "error: AUI 'A1' is not a UMLS atom identifier: expected A and 7 to 9 digits, such as "
         "A3220484\nhint: check the AUI: give it as UMLS lists it (in a release "
         "table, the concept's \"aui\")\n"),
        (["source", "SNOMEDCT", "38341003"],
         "error: SAB 'SNOMEDCT' is not a UMLS source abbreviation, only close to SNOMEDCT_US\n"
         f"hint: did you mean SNOMEDCT_US? {SAB_HINT}\n"),
        (["source", "snomedct_us", "38341003"],
         "error: SAB 'snomedct_us' is not a UMLS source abbreviation: expected upper-case "
         "letters, digits, '_', '.' and '-', such as SNOMEDCT_US\n"
         f"hint: did you mean SNOMEDCT_US? {SAB_HINT}\n"),
        (["atoms", "C9000001", "--sab", "LOINC"],
         "error: SAB 'LOINC' is not a UMLS source abbreviation, only close to LNC\n"
         f"hint: did you mean LNC? {SAB_HINT}\n"),
        (["source", "SNOMEDCT_US", "1\x1b[2J"],
         "error: code '1\\x1b[2J' cannot be sent to UMLS: it contains the control character "
         "U+001B\nhint: check the code: give it as UMLS lists it (in a release "
         "table, the concept's \"code\")\n"),
        (["concept", "C9000001", "--umls-release", "foo"],
         "error: 'foo' is not a UMLS release name: expected YYYYAA or YYYYAB (the year and the "
         "release of that year, such as 2025AB), or current\nhint: the release comes from "
         "--umls-release, or else from umls_release in synonyms/synonym_table_kept.json\n"),
        (["atom", "A3220484", "--umls-release", "2025ab"],
         "error: '2025ab' is not a UMLS release name: expected YYYYAA or YYYYAB (the year and the "
         "release of that year, such as 2025AB), or current\nhint: the release comes from "
         "--umls-release, or else from umls_release in synonyms/synonym_table_kept.json\n"),
    ],
)  # fmt: skip
def test_a_bad_identifier_is_exit_2_and_nothing_is_sent_or_cached(
    fake: FakeUts, tmp_path: Path, args: list[str], stderr: str
) -> None:
    result = run(umls_app, args, tmp_path)
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", stderr)
    assert fake.seen == []
    assert not (tmp_path / "cache").exists()
    as_json = run(umls_app, [*args, "--json"], tmp_path)
    assert as_json.exit_code == 2
    report = json.loads(as_json.stdout)
    assert (report["outcome"], report["message"]) == (
        "bad_input",
        stderr.splitlines()[0].removeprefix("error: "),
    )
    assert fake.seen == []
    assert not (tmp_path / "cache").exists()


# -- the 404 rule without a probe: a 404 that is not UTS JSON is a wrong base URL ----------------


@pytest.mark.parametrize(
    ("body", "content_type"),
    [("<html><body><h1>404 Not Found</h1></body></html>", "text/html"), ("", None)],
    ids=["html", "empty"],
)
def test_umls_atoms_answered_by_a_404_that_is_not_json_is_unavailable(
    tmp_path: Path, body: str, content_type: str | None
) -> None:
    """``umls`` commands send no release probe, so nothing has shown the server is UTS: an HTML
    or empty 404 is not taken for "not found" (exit 1) but for a wrong base URL (exit 4)."""
    path = "/content/2099AA/CUI/C9000001/atoms"
    with responses.RequestsMock() as rsps:
        response = responses.Response(responses.GET, BASE + path, status=404, body=body)
        response.content_type = content_type  # type: ignore[assignment]
        rsps.add(response)
        result = run(umls_app, ["atoms", "C9000001", "--umls-release", "2099AA"], tmp_path)
        assert len(rsps.calls) == 1
    assert (result.exit_code, result.stdout) == (4, "")
    assert result.stderr == (
        f"error: {BASE} answered HTTP 404 for {path} with a {content_type or 'no content type'} "
        "body, not the JSON the UMLS REST API sends: this does not look like the UMLS REST API\n"
        "hint: check --base-url (or UMLS_BASE_URL): the default is "
        "https://uts-ws.nlm.nih.gov/rest, and a UTS base URL ends in /rest\n"
    )
    assert list((tmp_path / "cache").rglob("*.json")) == []
    assert find_secret(CANARY_KEY, texts={"stderr": result.stderr}, folders=[tmp_path]) == []


def test_an_edited_entry_is_fetched_again_and_offline_it_is_unavailable_saying_why(
    fake: FakeUts, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """SPEC section 8: an entry that fails its SHA-256 is never trusted. Offline it is a miss
    whose message says the entry is corrupt (not UMLS drift); online it is fetched again."""
    args = ["atoms", "C9000001", "--umls-release", "2099AA", "--json"]
    first = run(umls_app, args, tmp_path)
    assert first.exit_code == 0, first.stderr
    (entry,) = (tmp_path / "cache").rglob("2099AA/*.json")
    entry.write_bytes(entry.read_bytes().replace(b"A90000001", b"A90000009"))
    with caplog.at_level(logging.WARNING, logger="tempmedbench_synonyms"):
        offline = run(umls_app, [*args, "--offline"], tmp_path, key=None)
    assert offline.exit_code == 4
    doc = json.loads(offline.stdout)
    assert doc["outcome"] == "unavailable"
    prefix = (
        "--offline, and the cache does not hold the answer to /content/2099AA/CUI/C9000001/atoms"
        "?includeObsolete=false&includeSuppressible=false&language=ENG&pageSize=200: its entry "
        f"{entry} is corrupt (its body's SHA-256 is "
    )
    assert doc["message"].startswith(prefix)
    assert doc["message"].endswith(": edited or damaged)")
    warnings = [r.getMessage() for r in caplog.records if r.name.endswith(".cache")]
    (warning,) = warnings  # said once, though the batch read it twice (its cache pass, its ask)
    assert warning.startswith(f"cache entry {entry} is corrupt (its body's SHA-256 is ")
    assert len(fake.seen) == 1
    again = run(umls_app, args, tmp_path)
    assert (again.exit_code, again.stdout) == (0, first.stdout)
    assert len(fake.seen) == 2  # fetched again, and stored whole
    assert run(umls_app, [*args, "--offline"], tmp_path, key=None).stdout == first.stdout
    texts = {"offline": offline.stdout + offline.stderr, "again": again.stdout + again.stderr}
    (state,) = (tmp_path / "state" / "rate").glob("uts.invalid-443-*.state")  # (conftest)
    assert find_secret(CANARY_KEY, texts=texts, folders=[tmp_path / "cache", state.parent]) == []


def _plant(entry: Path, old: bytes, new: bytes) -> None:
    """Rewrite a cache entry with ``new`` for ``old`` in its body, its header made to match
    (a self-consistent entry, as another user with write access could make one)."""
    head_raw, _, body = entry.read_bytes().partition(b"\n")
    body = body.replace(old, new)
    head = json.loads(head_raw)
    head.update(size=len(body), sha256=hashlib.sha256(body).hexdigest())
    entry.write_bytes(json.dumps(head, separators=(",", ":")).encode() + b"\n" + body)


def test_an_entry_another_user_planted_is_bad_input_never_shown(
    fake: FakeUts, tmp_path: Path
) -> None:
    """SPEC section 8, "Shared folders" (issue 17 item 1): a self-consistent entry owned by
    another user was printed as UMLS content. It is bad input naming it, and nothing of it is
    shown; the same answer fetched by the user is fine again once the file is gone."""
    args = ["atoms", "C9000001", "--umls-release", "2099AA", "--json"]
    first = run(umls_app, args, tmp_path)
    assert first.exit_code == 0, first.stderr
    (entry,) = (tmp_path / "cache").rglob("2099AA/*.json")
    _plant(entry, b"invented", b"PLANTED")
    os.chown(entry, 4242, -1)  # (as root: another user's file)
    planted = run(umls_app, args, tmp_path)
    assert planted.exit_code == 2
    doc = json.loads(planted.stdout)
    assert (doc["outcome"], doc["message"], doc["hint"]) == (
        "bad_input",
        f"{entry}: the file belongs to another user (uid 4242; you are uid {os.getuid()}), so "
        "what it holds cannot be trusted",
        "use a folder of your own (--cache-dir or TEMPMEDBENCH_CACHE_DIR), or have "
        f"{entry} removed",
    )
    assert "PLANTED" not in planted.stdout + planted.stderr
    assert len(fake.seen) == 1  # nothing sent instead either
    entry.unlink()
    again = run(umls_app, args, tmp_path)
    assert (again.exit_code, again.stdout) == (0, first.stdout)


def test_a_cache_folder_others_can_write_is_bad_input_with_the_fix(
    fake: FakeUts, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    cache.chmod(0o777)
    result = run(umls_app, ["atoms", "C9000001", "--umls-release", "2099AA"], tmp_path)
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (
        f"error: {cache}: the cache folder can be written by other users (mode 0777), so what "
        "it holds cannot be trusted\n"
        f"hint: chmod go-w {cache}, or use a folder of your own (--cache-dir or "
        "TEMPMEDBENCH_CACHE_DIR)\n"
    )
    assert fake.seen == [] and list(cache.iterdir()) == []


def test_a_batch_ends_with_its_last_progress_line(fake: FakeUts, tmp_path: Path) -> None:
    """The answers are pulled one an input: the batch must still run to its end, which says
    how it went ("done in")."""
    result = run(umls_app, ["concept", "C9000001", "C9000002", "--umls-release", "2099AA"],
                 tmp_path)  # fmt: skip
    assert result.exit_code == 0, result.stderr
    last = result.stderr.splitlines()[-1]
    assert last.startswith("UMLS 2099AA: 2/2 inputs, 0 cache hits, 2 requests, done in ")
    assert len(fake.seen) == 2


def test_one_run_builds_its_network_options_once_and_hands_them_down(
    fake: FakeUts, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The options object the command parsed is the one the run uses (STYLE, "Options: built
    once"): never unpacked to keywords and built again."""
    from tempmedbench_synonyms.uts.options import UtsOptions

    built: list[UtsOptions] = []
    init = UtsOptions.__init__

    def counted(self: UtsOptions, *args: object, **kwargs: object) -> None:
        init(self, *args, **kwargs)  # type: ignore[arg-type]
        built.append(self)

    monkeypatch.setattr(UtsOptions, "__init__", counted)
    result = run(umls_app, ["atoms", "C9000001", "--umls-release", "2099AA", "--rate", "9"],
                 tmp_path)  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert [options.rate for options in built] == [9.0]
    assert len(fake.seen) == 1


def test_each_inputs_lookup_is_the_runs_with_that_input_as_replace_makes_it() -> None:
    """``_maker`` builds each input's lookup from the run's fields read once: the same lookup
    as ``dataclasses.replace``, which passes only the fields ``__init__`` takes (a derived
    field, ``init=False``, is computed again, not passed)."""
    import dataclasses

    from tempmedbench_synonyms.cli.umls import _maker
    from tempmedbench_synonyms.lookups import Definitions

    @dataclasses.dataclass(frozen=True)
    class Derived(Definitions):
        shout: str = dataclasses.field(init=False, default="")

        def __post_init__(self) -> None:
            object.__setattr__(self, "shout", self.cui.upper())

    run = Derived(cui="c0000001", sabs=("MSH",))
    made = _maker(run)(cui="c0000002")
    assert made == dataclasses.replace(run, cui="c0000002")
    assert (made.cui, made.sabs, made.shout) == ("c0000002", ("MSH",), "C0000002")
