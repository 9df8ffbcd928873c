"""The two console scripts: exit codes, stdout for data, stderr for people, nothing half-written."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import responses
from typer.testing import CliRunner

from helpers import Rehash, behind_responses, outputs
from tempmedbench_synonyms import __version__
from tempmedbench_synonyms.cli import app, regenerate_app
from tempmedbench_synonyms.regen.release import FULL_TABLE, SURFACE, SYNONYM_SURFACE, TABLE
from tempmedbench_synonyms.testing import (
    CANARY_KEY,
    FakeUts,
    FakeUtsData,
    FakeUtsServer,
    find_secret,
)

runner = CliRunner()


def run(*args: str | Path) -> tuple[int, str, str]:
    result = runner.invoke(app, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


def test_regenerate_verified_json_report(mini: Path, mrconso: Path) -> None:
    code, out, err = run("regenerate", mini, "--mrconso", mrconso, "--json")
    assert code == 0
    report = json.loads(out)
    assert report["outcome"] == "verified" and report["exit_code"] == 0
    assert report["umls_release"] == "2099AA"
    assert sorted(report["files"]) == [SYNONYM_SURFACE, FULL_TABLE]
    assert all(f["match"] and f["expected"] == f["actual"] for f in report["files"].values())
    assert (report["drifted"], report["changed"], report["requests"], report["cache_hits"]) == (
        [],
        [],
        0,
        0,
    )
    assert report["message"] == "both files match expected_sha256.json"
    assert "verified (exit 0): both files match expected_sha256.json" in err
    assert "questions      42, 70 spans" in err


def test_the_dedicated_script_is_regenerate(mini: Path, mrconso: Path) -> None:
    result = runner.invoke(regenerate_app, [str(mini), "--mrconso", str(mrconso), "-q"])
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")
    assert outputs(mini) == [SYNONYM_SURFACE, FULL_TABLE]


def test_a_changed_atom_exits_1_naming_the_concept(mini: Path, mrconso: Path) -> None:
    text = mrconso.read_text(encoding="utf-8").replace("|Outpatient encounter|", "|Clinic visit|")
    text = text.replace("|Ambulatory care encounter|", "|Ambulatory visit|")
    mrconso.write_text(text, encoding="utf-8")
    code, out, err = run("regenerate", mini, "--mrconso", mrconso, "--json")
    assert code == 1
    report = json.loads(out)
    assert (report["outcome"], report["changed"], report["drifted"]) == (
        "mismatch",
        ["ambulatory encounter"],
        [],
    )
    assert "changed        1 concept kept another synonym:\n    ambulatory encounter" in err
    assert "\nhint: the atoms you fetched differ from the ones the authors froze" in err
    assert outputs(mini) == [SYNONYM_SURFACE + ".unverified", FULL_TABLE + ".unverified"]


def test_check_then_version_and_help(mini: Path, mrconso: Path) -> None:
    assert run("check", mini)[0] == 1
    assert run("regenerate", mini, "--mrconso", mrconso, "-q")[0] == 0
    code, out, _err = run("check", mini, "--json")
    assert code == 0 and json.loads(out)["outcome"] == "verified"
    assert run("--version")[1].splitlines()[0] == f"tempmedbench-synonyms {__version__}"
    code, out, _ = run("regenerate", "--help")
    assert code == 0 and "--mrconso" in out and "Example" in out and "--api-key-file" in out


def _edit(folder: Path, rel: str, old: str, new: str, rehash: Rehash) -> None:
    path = folder / rel
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    rehash(folder)


BAD_INPUT: list[tuple[str, str, str, str]] = [
    # (file, old, new, message on stderr)
    (SURFACE, '"qid": "dev-0003"', '"qid": "dev-0003",,',
     "error: question_surface/question_surface.jsonl, line 3: invalid JSON: Expecting property "
     "name enclosed in double quotes (column 20)"),
    (TABLE, '"route": "cui"', '"route": "snomed"',
     "error: synonyms/synonym_table_kept.json: concepts[\"zorbatrex 50 mg oral tablet\"].route: "
     "must be 'source', 'cui' or 'aui' (found \"snomed\")"),
    (TABLE, "[\n            18,\n            31\n          ]", "[18, 99]",
     "error: synonyms/synonym_table_kept.json: qid 'dev-0009': span out of range for a question "
     "of 64 characters (a span is [start, end) with 0 <= start < end <= length): "
     "'quillon level' [18, 99]"),
    (TABLE, "[\n            18,\n            31\n          ]", "[18, 31], [30, 40]",
     "error: synonyms/synonym_table_kept.json: qid 'dev-0009': two spans overlap: "
     "'quillon level' [18, 31], 'quillon level' [30, 40]"),
]  # fmt: skip


@pytest.mark.parametrize("rel,old,new,message", BAD_INPUT)
def test_bad_input_exits_2_with_nothing_written(
    mini: Path, mrconso: Path, rehash: Rehash, rel: str, old: str, new: str, message: str
) -> None:
    _edit(mini, rel, old, new, rehash)
    code, out, err = run("regenerate", mini, "--mrconso", mrconso, "--json")
    assert code == 2
    assert message in err.splitlines()
    report = json.loads(out)
    assert (report["outcome"], report["exit_code"]) == ("bad_input", 2)
    assert report["message"] == message.removeprefix("error: ")
    assert outputs(mini) == []


def test_manifest_mismatch_and_escape(mini: Path, mrconso: Path) -> None:
    (mini / "README.md").write_text("edited\n")
    code, _, err = run("regenerate", mini, "--mrconso", mrconso)
    assert code == 2 and "error: README.md: differs from MANIFEST.sha256 (expected sha256 " in err
    assert "hint: download the release folder again" in err
    with open(mini / "MANIFEST.sha256", "a") as f:
        f.write(f"{'0' * 64}  ../../etc/passwd\n")
    code, _, err = run("regenerate", mini, "--mrconso", mrconso)
    assert code == 2 and "'../../etc/passwd' is a path with '..'" in err
    assert outputs(mini) == []


def test_missing_things(tmp_path: Path, mini: Path, mrconso: Path) -> None:
    code, _, err = run("regenerate", tmp_path / "nowhere", "--mrconso", tmp_path / "M.RRF")
    assert code == 2 and f"error: {tmp_path / 'nowhere'}: no such folder" in err
    code, _, err = run("regenerate", mini, "--mrconso", tmp_path / "M.RRF")
    assert code == 2 and f"error: {tmp_path / 'M.RRF'}: no such file" in err
    assert outputs(mini) == []
    # a folder that is not a release (or lost its manifest): the hint says what to pass
    (tmp_path / "not-a-release").mkdir()
    code, _, err = run("check", tmp_path / "not-a-release")
    assert (code, err.splitlines()) == (
        2,
        [
            f"error: {tmp_path / 'not-a-release' / 'MANIFEST.sha256'}: the release manifest is "
            "missing",
            "hint: pass the TempMedBench release folder itself (the one with MANIFEST.sha256); "
            "if it is, its files are incomplete: download the release again",
        ],
    )
    # --out naming a file: the path is said once, and what to do
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    code, _, err = run("regenerate", mini, "--mrconso", mrconso, "--out",
                       tmp_path / "a-file", "-q")  # fmt: skip
    assert (code, err.splitlines()) == (
        2,
        [
            f"error: {tmp_path / 'a-file'}: is not a folder: the output files cannot be written "
            "under it",
            "hint: write the rebuilt files elsewhere with --out DIR, a folder you can write in",
        ],
    )


def test_a_cache_folder_that_is_a_file_is_refused_before_any_request(
    mini: Path, tmp_path: Path
) -> None:
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    for offline in ([], ["--offline"]):
        code, out, err = run("regenerate", mini, "--cache-dir", tmp_path / "a-file",
                             "--base-url", "http://127.0.0.1:9/rest", *offline)  # fmt: skip
        assert (code, out, err) == (
            2,
            "",
            f"error: {tmp_path / 'a-file'}: the cache folder is a file, not a folder\n"
            "hint: give a folder with --cache-dir or TEMPMEDBENCH_CACHE_DIR\n",
        )
    assert outputs(mini) == []


def test_check_before_any_regeneration_says_no_file(mini: Path) -> None:
    expected = json.loads((mini / "synonym_regeneration/expected_sha256.json").read_bytes())
    files = expected["files"]
    code, out, err = run("check", mini)
    assert (code, out) == (1, "")
    assert err.splitlines()[-8:-2] == [
        f"  missing        {SYNONYM_SURFACE}",
        f"                   expected {files[SYNONYM_SURFACE]}",
        "                   actual   (no file)",
        f"  missing        {FULL_TABLE}",
        f"                   expected {files[FULL_TABLE]}",
        "                   actual   (no file)",
    ]
    assert err.splitlines()[-2] == "mismatch (exit 1): 2 of 2 files missing"
    # --json counts what the table records, as regenerate's report does
    table = json.loads((mini / TABLE).read_bytes())["concepts"]
    spans = sum(len(s) for c in table.values() for s in c["spans"].values())
    report = json.loads(run("check", mini, "--json")[1])
    assert (report["counts"]["routes"], report["counts"]["spans"]) == (
        {"aui": 2, "cui": 2, "source": 6},
        spans,
    )
    assert spans == 70  # as regenerate reports it: "questions      42, 70 spans"


def test_check_tells_a_missing_file_from_a_differing_one(mini: Path, mrconso: Path) -> None:
    assert run("regenerate", mini, "--mrconso", mrconso, "-q")[0] == 0
    (mini / FULL_TABLE).unlink()
    with (mini / SYNONYM_SURFACE).open("ab") as f:
        f.write(b"\n")
    code, _, err = run("check", mini)
    assert (code, err.splitlines()[-2]) == (
        1,
        "mismatch (exit 1): 1 of 2 files missing; 1 of 2 files differ from expected_sha256.json",
    )


LOW = (
    "it must be at least 0.1 requests a second (one every 10 s)\n"
    "hint: give a number from 0.1 to 20; the default is 15\n"
)
HIGH = (
    "it is above 20 requests a second, the most the UMLS Terminology Services terms of use allow "
    "from one IP address\nhint: use --rate 20 or less (the default, 15, leaves room for other UTS "
    "clients)\n"
)


@pytest.mark.parametrize(
    "rate,why", [("0", LOW), ("20.5", HIGH), ("-1", LOW), ("1e-12", LOW), ("0.0001", LOW)]
)
def test_rate_above_the_uts_limit_is_refused_before_any_request(
    mini: Path, rate: str, why: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("UMLS_API_KEY", raising=False)
    code, out, err = run("regenerate", mini, f"--rate={rate}", "--cache-dir", tmp_path / "c")
    assert (code, out) == (2, "")
    assert err == f"error: --rate {rate} is out of range: {why}"
    assert outputs(mini) == []


def test_network_options_mean_nothing_to_a_local_file(mini: Path, mrconso: Path) -> None:
    assert run("regenerate", mini, "--mrconso", mrconso, "--rate", "25", "-q")[0] == 0


def test_freeze_cli(mini: Path, mrconso: Path) -> None:
    code, out, _err = run(
        "freeze", mini, "--mrconso", mrconso, "--update-manifest", "--force", "--json"
    )
    assert code == 0
    assert json.loads(out)["message"] == (
        "wrote synonym_regeneration/expected_sha256.json and "
        "synonym_regeneration/regenerate_synonyms.py and updated their lines in MANIFEST.sha256"
    )
    assert outputs(mini) == []  # freeze never writes UMLS strings into the release


def test_ctrl_c_exits_130_with_a_message(
    mini: Path, mrconso: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempmedbench_synonyms.cli as cli

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "run", interrupted)
    code, out, err = run("regenerate", mini, "--mrconso", mrconso)
    assert (code, out) == (130, "")
    assert err == "interrupted: nothing was left half-written; run the same command again\n"
    assert outputs(mini) == []


def test_demo_runs_the_bundled_release(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    code, out, err = run("demo", "--out", tmp_path / "d", "--json")
    assert code == 0
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert json.loads(out)["outcome"] == "verified"
    assert outputs(tmp_path / "d") == [SYNONYM_SURFACE, FULL_TABLE]
    assert err.endswith("verified (exit 0): both files match expected_sha256.json\n")


def test_demo_without_its_data_says_where_to_find_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tempmedbench_synonyms import demo

    monkeypatch.setattr(demo, "_PACKAGE", tmp_path / "site-packages" / "tempmedbench_synonyms")
    code, _, err = run("demo", "--out", tmp_path / "d")
    assert code == 2
    assert err == (
        "error: the demo data is not installed with this package\n"
        "hint: install the wheel (it carries the demo), or run from a checkout of the "
        "repository, where it lies in fixtures/\n"
    )
    code, out, _ = run("demo", "--out", tmp_path / "d", "--json")  # --json: one object, always
    assert code == 2
    report = json.loads(out)
    assert (report["command"], report["outcome"], report["exit_code"], report["message"]) == (
        "demo",
        "bad_input",
        2,
        "the demo data is not installed with this package",
    )


def test_rest_only_options_are_ignored_with_mrconso_and_said_so(
    mini: Path,
    mrconso: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """--rate 99 is out of range for the REST API, but means nothing to a local file."""
    code, _, _ = run("regenerate", mini, "--mrconso", mrconso, "--rate", "99", "--offline")
    assert code == 0
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == ["--offline, --rate only apply to the UMLS REST API: ignored with --mrconso"]
    caplog.clear()
    assert run("regenerate", mini, "--mrconso", mrconso, "--workers", "3")[0] == 0
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == ["--workers only applies to the UMLS REST API: ignored with --mrconso"]
    caplog.clear()
    given = ["--base-url", "http://127.0.0.1:9/rest", "--cache-dir", tmp_path / "c"]
    assert run("regenerate", mini, "--mrconso", mrconso, *given)[0] == 0
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [
        "--base-url, --cache-dir only apply to the UMLS REST API: ignored with --mrconso"
    ]
    assert not (tmp_path / "c").exists()
    caplog.clear()
    # the same set for every run by the environment is no option of this run: nothing said
    monkeypatch.setenv("UMLS_BASE_URL", "http://127.0.0.1:9/rest")
    monkeypatch.setenv("TEMPMEDBENCH_CACHE_DIR", str(tmp_path / "c"))
    assert run("regenerate", mini, "--mrconso", mrconso)[0] == 0
    assert [r for r in caplog.records if r.levelno == logging.WARNING] == []


def test_a_bug_exits_70_with_its_traceback_redacted_never_1(
    mini: Path, mrconso: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An unexpected exception must not read as the 1 of a mismatch, nor show the key."""
    from tempmedbench_synonyms import cli

    monkeypatch.setenv("UMLS_API_KEY", "CANARY-KEY-in-env-0001")

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError(
            "boom at https://x/rest?apiKey=CANARY-KEY-in-env-0001 CANARY-KEY-in-env-0001"
        )

    monkeypatch.setattr(cli, "run", broken)
    code, out, err = run("regenerate", mini, "--mrconso", mrconso, "--json")
    assert code == 70
    report = json.loads(out)
    assert (report["outcome"], report["exit_code"]) == ("internal_error", 70)
    assert report["message"] == "unexpected RuntimeError: this is a bug in tempmedbench-synonyms"
    lines = err.splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert "RuntimeError: boom at https://x/rest?apiKey=*** ***" in lines
    assert lines[-2:] == [
        "error: unexpected RuntimeError: this is a bug in tempmedbench-synonyms",
        "hint: please report it with the traceback above",
    ]
    assert "CANARY-KEY-in-env-0001" not in out + err
    assert outputs(mini) == []


def test_a_bug_never_shows_a_key_read_from_a_file(
    mini: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tempmedbench_synonyms import cli

    key_file = tmp_path / "key"
    key_file.write_text("CANARY-KEY-in-file-0002\n", encoding="utf-8")
    key_file.chmod(0o600)
    monkeypatch.delenv("UMLS_API_KEY", raising=False)

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom key=CANARY-KEY-in-file-0002")

    monkeypatch.setattr(cli, "run", broken)
    code, out, err = run("regenerate", mini, "--api-key-file", key_file, "--cache-dir",
                         tmp_path / "c", "--base-url", "http://127.0.0.1:9/rest")  # fmt: skip
    assert code == 70
    assert "RuntimeError: boom key=***" in err.splitlines()
    assert "CANARY-KEY-in-file-0002" not in out + err


# -- REST: identifiers checked before anything is sent; the probe's 404 rule --------------------

UTS = "https://uts.invalid/rest"


def _rest(mini: Path, mrconso: Path, tmp_path: Path, *args: str) -> tuple[int, str, str, Any]:
    """``regenerate`` against a fake UTS over the mini release's invented rows."""
    fake = FakeUts(FakeUtsData.from_mrconso(mrconso), api_key=CANARY_KEY)
    env = {"UMLS_BASE_URL": UTS, "TEMPMEDBENCH_CACHE_DIR": str(tmp_path / "cache"),
           "UMLS_API_KEY": CANARY_KEY}  # fmt: skip
    with behind_responses(fake, base_url=UTS):
        result = runner.invoke(app, ["regenerate", str(mini), "--out", str(tmp_path / "out"),
                                     *args], env=env)  # fmt: skip
    return result.exit_code, result.stdout, result.stderr, fake


def test_rest_regenerate_verifies_against_the_fake(
    mini: Path, mrconso: Path, tmp_path: Path
) -> None:
    """The baseline of the tests below: the same run with good identifiers is verified."""
    code, _, err, fake = _rest(mini, mrconso, tmp_path)
    assert (code, len(fake.seen)) == (0, 11), err


def test_rest_umls_release_of_the_wrong_form_is_exit_2_and_sends_nothing(
    mini: Path, mrconso: Path, tmp_path: Path
) -> None:
    code, out, _, fake = _rest(mini, mrconso, tmp_path, "--umls-release", "foo", "--json")
    assert code == 2
    assert json.loads(out)["message"] == (
        "'foo' is not a UMLS release name: expected YYYYAA or YYYYAB (the year and the release "
        "of that year, such as 2025AB), or current"
    )
    assert fake.seen == []
    assert not (tmp_path / "cache").exists() and not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("old", "new", "message", "hint"),
    [
        ('"sab": "LNC"', '"sab": "LOINC"',
         "SAB 'LOINC' is not a UMLS source abbreviation, only close to LNC", "did you mean LNC? "),
        ('"sab": "RXNORM"', '"sab": "rxnorm"',
         "SAB 'rxnorm' is not a UMLS source abbreviation: expected upper-case letters, digits, "
         "'_', '.' and '-', such as SNOMEDCT_US", "did you mean RXNORM? "),
        ('"aui": "A9000071"', '"aui": "A71"',
         "AUI 'A71' is not a UMLS atom identifier: expected A and 7 to 9 digits, such as A3220484",
         "check the AUI: "),
        ('"umls_release": "2099AA"', '"umls_release": "2099-AA"',
         "'2099-AA' is not a UMLS release name: expected YYYYAA or YYYYAB (the year and the "
         "release of that year, such as 2025AB), or current", "the release comes from"),
    ],
)  # fmt: skip
def test_rest_a_table_identifier_of_the_wrong_form_is_exit_2_and_sends_nothing(
    mini: Path, mrconso: Path, tmp_path: Path, rehash: Rehash,
    old: str, new: str, message: str, hint: str,
) -> None:  # fmt: skip
    _edit(mini, TABLE, old, new, rehash)
    code, out, err, fake = _rest(mini, mrconso, tmp_path, "--json")
    assert code == 2, err
    report = json.loads(out)
    assert (report["outcome"], report["message"]) == ("bad_input", message)
    assert report["hint"].startswith(hint)
    assert fake.seen == []
    assert not (tmp_path / "cache").exists() and not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("body", "content_type"),
    [("<html><body><h1>404 Not Found</h1></body></html>", "text/html"), ("Not Found", "text/plain"),
     ("", None)],
    ids=["html", "text", "empty"],
)  # fmt: skip
def test_rest_a_probe_404_that_is_not_uts_json_is_a_wrong_base_url(
    mini: Path, tmp_path: Path, body: str, content_type: str | None
) -> None:
    env = {"UMLS_BASE_URL": UTS, "TEMPMEDBENCH_CACHE_DIR": str(tmp_path / "cache"),
           "UMLS_API_KEY": CANARY_KEY}  # fmt: skip
    probe = "/content/2099AA/CUI/C9000001"
    with responses.RequestsMock() as rsps:
        response = responses.Response(responses.GET, UTS + probe, status=404, body=body)
        response.content_type = content_type  # type: ignore[assignment]
        rsps.add(response)
        result = runner.invoke(app, ["regenerate", str(mini), "--out", str(tmp_path / "out")],
                               env=env)  # fmt: skip
        assert len(rsps.calls) == 1  # the probe only
    assert (result.exit_code, result.stdout) == (4, "")
    shown = content_type or "no content type"
    assert (
        f"{UTS} answered HTTP 404 for {probe} with a {shown} body, not the JSON the UMLS REST "
        "API sends: this does not look like the UMLS REST API\n"
        "hint: check --base-url (or UMLS_BASE_URL)"
    ) in result.stderr
    assert list((tmp_path / "cache").rglob("*.json")) == []
    assert not (tmp_path / "out").exists()
    assert find_secret(CANARY_KEY, texts={"stderr": result.stderr}, folders=[tmp_path]) == []


TIMEOUT_RANGE = (
    "it must be more than 0 and at most 120 seconds (one request's whole retry budget)\n"
    "hint: the default is 30 seconds for one attempt, from connect to last byte\n"
)


@pytest.mark.parametrize("timeout", ["0", "-1", "nan", "inf", "121"])
def test_a_timeout_out_of_range_is_refused_before_any_request(
    mini: Path, timeout: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("UMLS_API_KEY", raising=False)
    code, out, err = run("regenerate", mini, "--timeout", timeout, "--cache-dir", tmp_path / "c")
    assert (code, out) == (2, "")
    shown = f"{float(timeout):g}"
    assert err == f"error: --timeout {shown} is out of range: {TIMEOUT_RANGE}"
    assert outputs(mini) == []
    assert not (tmp_path / "c").exists()


def test_a_timeout_means_nothing_to_a_local_file(
    mini: Path, mrconso: Path, caplog: pytest.LogCaptureFixture
) -> None:
    assert run("regenerate", mini, "--mrconso", mrconso, "--timeout", "0")[0] == 0
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == ["--timeout only applies to the UMLS REST API: ignored with --mrconso"]


def test_a_run_that_cannot_share_the_rate_budget_says_so_in_its_json_warnings(
    mini: Path, tmp_path: Path, mini_uts: FakeUtsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 17 item 12: a CI job run ``-q --json`` learns that its runs do not share a budget
    (here: a state folder others can write), as a failed run does (here: a refused key)."""
    state = tmp_path / "shared-state"
    state.mkdir(mode=0o777)
    state.chmod(0o777)
    monkeypatch.setenv("TEMPMEDBENCH_STATE_DIR", str(state))
    monkeypatch.setenv("UMLS_BASE_URL", mini_uts.base_url)
    monkeypatch.delenv("UMLS_API_KEY_FILE", raising=False)
    warning = (
        f"{state}: the rate-state folder can be written by other users (mode 0777), so what it "
        f"holds cannot be trusted; chmod go-w {state}, or use a folder of your own "
        "(TEMPMEDBENCH_STATE_DIR); the rate limit holds for this process only, not for other "
        "runs on this machine"
    )
    common = ["regenerate", mini, "--cache-dir", tmp_path / "cache", "-q", "--json"]
    monkeypatch.setenv("UMLS_API_KEY", CANARY_KEY)
    code, out, err = run(*common, "--out", tmp_path / "out")
    assert (code, json.loads(out)["outcome"], err) == (0, "verified", "")
    assert json.loads(out)["warnings"] == [warning]
    monkeypatch.setenv("UMLS_API_KEY", "a-key-the-server-refuses")
    code, out, err = run(*common, "--out", tmp_path / "out2", "--refresh")
    assert (code, json.loads(out)["outcome"]) == (3, "not_authorised")
    assert json.loads(out)["warnings"] == [warning]
    code, out, err = run(*common, "--dry-run", "--refresh")
    assert (code, json.loads(out)["outcome"]) == (3, "not_authorised")
    monkeypatch.setenv("UMLS_API_KEY", CANARY_KEY)
    code, out, err = run(*common, "--dry-run", "--refresh")
    assert (code, json.loads(out)["warnings"]) == (0, [warning])
    assert list(state.iterdir()) == []  # nothing written there


def test_a_run_builds_the_parser_of_the_one_command_it_runs(tmp_path: Path) -> None:
    """Typer builds a command's parser from its signature (~0.8 ms each): a run builds only the
    command it runs (issue 24: all 25 cost every run ~20 ms), and answers as the whole app."""
    code = (
        "import json, sys, typer.main\n"
        "from tempmedbench_synonyms.cli import main\n"
        "built = []\n"
        "build = typer.main.get_command_from_info\n"
        "def counted(*args, **kw):\n"
        "    built.append((args[0] if args else kw['command_info']).name)\n"
        "    return build(*args, **kw)\n"
        "typer.main.get_command_from_info = counted\n"
        "try:\n"
        "    main()\n"
        "finally:\n"
        "    print(json.dumps(built), file=sys.stderr)\n"
    )
    for args, built in [
        (["umls", "crosswalk", "--help"], ["crosswalk"]),
        (["cache", "info", "--json"], ["info"]),
        (["check", "--help"], ["check"]),
        (["umls", "--help"], None),  # the list of its commands: each of them
        (["--version"], None),
    ]:
        done = subprocess.run(
            [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60,
            env={**os.environ, "TEMPMEDBENCH_CACHE_DIR": str(tmp_path)},
        )  # fmt: skip
        whole = CliRunner().invoke(app, args, env={"TEMPMEDBENCH_CACHE_DIR": str(tmp_path)})
        assert (done.returncode, done.stdout) == (whole.exit_code, whole.stdout), args
        names = json.loads(done.stderr.splitlines()[-1])  # the list printed last
        assert names == built if built else len(names) > 10, (args, names)


def test_shell_completion_under_main_completes_subcommands_and_options(tmp_path: Path) -> None:
    """Completion runs the script with no arguments (the words are in the environment): main()
    then hands typer the whole app, so a group's commands and a command's options complete."""
    code = "from tempmedbench_synonyms.cli import main; main()"
    for words, completed in [
        ("tempmedbench-synonyms um", "umls\n"),
        ("tempmedbench-synonyms umls cr", "crosswalk\n"),
        ("tempmedbench-synonyms umls crosswalk --me", "--meta\n"),
    ]:
        env = {
            **os.environ,
            "TEMPMEDBENCH_CACHE_DIR": str(tmp_path),
            "_TEMPMEDBENCH_SYNONYMS_COMPLETE": "complete_bash",
            "COMP_WORDS": words,
            "COMP_CWORD": str(len(words.split()) - 1),
        }
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env
        )
        assert (done.returncode, done.stdout, done.stderr) == (0, completed, ""), words
