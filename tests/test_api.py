"""The Python API (SPEC section 9): the CLI's runs as functions, the same reports, the same errors.

Every report is compared with the CLI's ``--json`` for the same run, whole: both runs use the
same release folder and ``--out`` (so ``written`` paths agree) and, on the REST route, each its
own empty cache (so both send the same requests).
"""

from __future__ import annotations

import dataclasses
import doctest
import hashlib
import io
import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import tempmedbench_synonyms
from helpers import FIXTURES, GPS_FILE, outputs
from tempmedbench_synonyms import api
from tempmedbench_synonyms.cli import app
from tempmedbench_synonyms.errors import (
    ApiKeyMissingError,
    BadInputError,
    MismatchError,
    NotAuthorisedError,
    Outcome,
    TempMedBenchError,
    UnavailableError,
)
from tempmedbench_synonyms.regen.release import EXPECTED, FULL_TABLE, SYNONYM_SURFACE
from tempmedbench_synonyms.testing import CANARY_KEY, RunningFakeUts, find_secret

runner = CliRunner()

#: Nothing listens there: a run that tried the network would fail (unavailable), not hang.
DEAD_URL = "http://127.0.0.1:9/rest"


def cli_json(*args: str | Path) -> tuple[int, dict[str, Any]]:
    result = runner.invoke(app, [str(a) for a in args])
    return result.exit_code, json.loads(result.stdout)


def expected_hashes(release: Path) -> dict[str, str]:
    files: dict[str, str] = json.loads((release / EXPECTED).read_text(encoding="utf-8"))["files"]
    return files


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("UMLS_API_KEY", "UMLS_API_KEY_FILE", "UMLS_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


# -- the top level ------------------------------------------------------------------------------


def test_the_top_level_exports_the_api() -> None:
    assert tempmedbench_synonyms.__all__ == [
        "Answer", "BadInputError", "GpsReport", "MismatchError", "NotAuthorisedError", "Outcome",
        "Paths", "Report", "TempMedBenchError", "Umls", "UnavailableError", "__version__",
        "check", "ensure_synonyms", "regenerate", "validate_gps",
    ]  # fmt: skip
    from tempmedbench_synonyms import Answer, Umls
    from tempmedbench_synonyms.lookups import Answer as kernel_answer
    from tempmedbench_synonyms.umls import Umls as client

    assert (Umls, Answer) == (client, kernel_answer)
    from tempmedbench_synonyms import check, ensure_synonyms, regenerate, validate_gps

    assert (regenerate, check, validate_gps, ensure_synonyms) == (
        api.regenerate, api.check, api.validate_gps, api.ensure_synonyms,
    )  # fmt: skip
    assert tempmedbench_synonyms.MismatchError is MismatchError
    assert set(tempmedbench_synonyms.__all__) <= set(dir(tempmedbench_synonyms))
    with pytest.raises(AttributeError) as unknown:
        _ = tempmedbench_synonyms.freeze
    assert str(unknown.value) == "module 'tempmedbench_synonyms' has no attribute 'freeze'"


def test_importing_the_package_imports_no_api_until_a_name_is_used() -> None:
    code = (
        "import sys, tempmedbench_synonyms as t\n"
        "print(sorted(m for m in sys.modules if m.startswith('tempmedbench_synonyms')))\n"
        "t.check\n"
        "print('tempmedbench_synonyms.api' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout.splitlines() == ["['tempmedbench_synonyms']", "True"]


def test_every_docstring_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The examples in api.py's docstrings, as doctest runs them (offline: the demo data)."""
    monkeypatch.chdir(tmp_path)  # they use temporary folders: nothing may land here
    tests = [t for t in doctest.DocTestFinder().find(api) if t.examples]
    assert sorted(t.name.removeprefix("tempmedbench_synonyms.api.") for t in tests) == [
        "check", "ensure_synonyms", "regenerate", "validate_gps",
    ]  # fmt: skip
    out = io.StringIO()
    examples = doctest.DocTestRunner()
    for test in tests:
        examples.run(test, out=out.write)
    assert (examples.summarize(verbose=False), out.getvalue()) == ((0, 26), "")
    assert list(tmp_path.iterdir()) == []


# -- regenerate ---------------------------------------------------------------------------------


def test_regenerate_from_mrconso_reports_what_the_cli_reports(
    mini: Path, mrconso: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    code, cli = cli_json("regenerate", mini, "--mrconso", mrconso, "--out", out, "--json", "-q")
    shutil.rmtree(out)  # the same start for both ("unchanged" would differ otherwise)
    report = tempmedbench_synonyms.regenerate(mini, mrconso=mrconso, out=out)
    assert isinstance(report, tempmedbench_synonyms.Report)
    assert (report.outcome, report.exit_code, code) == (Outcome.VERIFIED, 0, 0)
    assert report.to_json() == cli
    assert cli["files"][SYNONYM_SURFACE]["written"] == str(out / SYNONYM_SURFACE)
    assert {rel: sha256(out / rel) for rel in expected_hashes(mini)} == expected_hashes(mini)


def test_regenerate_takes_str_paths_and_sends_progress_where_asked(
    mini: Path, mrconso: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stream = io.StringIO()
    report = api.regenerate(str(mini), mrconso=str(mrconso), out=str(tmp_path / "a"),
                            progress=stream)  # fmt: skip
    assert report.outcome == "verified" and report.release == str(mini)
    assert stream.getvalue().startswith("scanning MRCONSO.RRF")
    assert capsys.readouterr() == ("", "")  # progress went to the stream only
    api.regenerate(mini, mrconso=mrconso, out=tmp_path / "b")  # progress=False: nothing at all
    assert capsys.readouterr() == ("", "")
    api.regenerate(mini, mrconso=mrconso, out=tmp_path / "c", progress=True)
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("scanning MRCONSO.RRF")


def test_regenerate_over_rest_reports_what_the_cli_reports(
    mini: Path, tmp_path: Path, fake_uts: RunningFakeUts, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UMLS_API_KEY", CANARY_KEY)
    out = tmp_path / "out"
    code, cli = cli_json("regenerate", mini, "--base-url", fake_uts.base_url, "--cache-dir",
                         tmp_path / "cli-cache", "--out", out, "--rate", "20", "--json",
                         "-q")  # fmt: skip
    assert (code, cli["outcome"], cli["requests"], fake_uts.fake.count()) == (0, "verified", 11, 11)
    shutil.rmtree(out)  # the same start for both ("unchanged" would differ otherwise)
    report = api.regenerate(mini, base_url=fake_uts.base_url, cache_dir=tmp_path / "api-cache",
                            out=out, rate=20)  # fmt: skip
    assert fake_uts.fake.count() == 22  # its own cache: the same 11 requests again
    assert report.to_json() == cli


def test_regenerate_reads_the_base_url_and_cache_folder_from_the_environment(
    mini: Path, tmp_path: Path, fake_uts: RunningFakeUts, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As the CLI's --base-url and --cache-dir do: UMLS_BASE_URL, TEMPMEDBENCH_CACHE_DIR."""
    for name, value in fake_uts.variables.items():
        monkeypatch.setenv(name, value)
    report = api.regenerate(mini, out=tmp_path / "out", rate=20)
    assert (report.outcome, report.requests, fake_uts.fake.count()) == ("verified", 11, 11)
    assert any(fake_uts.cache_dir.rglob("*.json"))
    again = api.regenerate(mini, out=tmp_path / "out", offline=True)
    assert (again.outcome, again.requests, again.cache_hits) == ("verified", 0, 11)


def test_rest_only_options_with_mrconso_are_ignored_with_the_cli_warning(
    mini: Path, mrconso: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="tempmedbench_synonyms")  # whatever -q set before
    report = api.regenerate(mini, mrconso=mrconso, rate=99, offline=True)
    assert report.outcome == "verified"
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING] == [
        "--offline, --rate only apply to the UMLS REST API: ignored with --mrconso"
    ]


def test_a_mismatch_is_a_report_not_an_exception(mini: Path, mrconso: Path, tmp_path: Path) -> None:
    text = mrconso.read_text(encoding="utf-8").replace("|Outpatient encounter|", "|Clinic visit|")
    mrconso.write_text(text.replace("|Ambulatory care encounter|", "|Ambulatory visit|"), "utf-8")
    code, cli = cli_json("regenerate", mini, "--mrconso", mrconso, "--out", tmp_path, "--json")
    for rel in outputs(tmp_path):  # the same start for both ("unchanged" would differ otherwise)
        (tmp_path / rel).unlink()
    report = api.regenerate(mini, mrconso=mrconso, out=tmp_path)
    assert (report.outcome, report.exit_code, code, report.changed) == (
        Outcome.MISMATCH, 1, 1, ["ambulatory encounter"],
    )  # fmt: skip
    assert report.to_json() == cli


# -- errors: the one tree ------------------------------------------------------------------------


def test_errors_are_the_error_trees_classes(
    mini: Path, tmp_path: Path, fake_uts: RunningFakeUts, no_key: None
) -> None:
    cache = tmp_path / "cache"
    with pytest.raises(ApiKeyMissingError) as missing:
        api.regenerate(mini, base_url=fake_uts.base_url, cache_dir=cache, out=tmp_path / "o")
    assert (missing.value.exit_code, missing.value.outcome) == (3, Outcome.NOT_AUTHORISED)
    with pytest.raises(UnavailableError) as offline:
        api.regenerate(mini, base_url=fake_uts.base_url, cache_dir=cache, offline=True)
    assert offline.value.exit_code == 4
    with pytest.raises(BadInputError) as bad:
        api.regenerate(mini, base_url=fake_uts.base_url, rate=25)
    assert (bad.value.exit_code, str(bad.value).split(" is out of range")[0]) == (2, "--rate 25")
    with pytest.raises(BadInputError) as folder:
        api.check(tmp_path / "nowhere")
    assert str(folder.value) == f"{tmp_path / 'nowhere'}: no such folder"
    with pytest.raises(BadInputError) as gps:
        api.validate_gps(mini, tmp_path / "no-gps.zip")
    assert isinstance(gps.value, TempMedBenchError) and gps.value.exit_code == 2
    assert fake_uts.fake.count() == 0
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").rglob("*.json*"))


def test_a_refused_key_is_not_authorised_and_never_shown(
    mini: Path, tmp_path: Path, fake_uts: RunningFakeUts, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UMLS_API_KEY", "CANARY-KEY-wrong-0003")
    with pytest.raises(NotAuthorisedError) as refused:
        api.ensure_synonyms(mini, base_url=fake_uts.base_url, cache_dir=tmp_path / "cache",
                            out=tmp_path / "out")  # fmt: skip
    assert (refused.value.status, refused.value.exit_code) == (401, 3)
    assert find_secret("CANARY-KEY-wrong-0003", texts={"error": f"{refused.value!r} "
                       f"{refused.value} {refused.value.hint}"},
                       folders=[tmp_path]) == []  # fmt: skip
    assert sorted(p.name for p in (tmp_path / "out").rglob("*") if p.is_file()) == []


# -- check and validate_gps -----------------------------------------------------------------------


def test_check_reports_what_the_cli_reports(mini: Path, mrconso: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    missing = api.check(mini, out=out)
    assert (missing.outcome, missing.message) == (Outcome.MISMATCH, "2 of 2 files missing")
    assert missing.to_json() == cli_json("check", mini, "--out", out, "--json")[1]
    api.regenerate(mini, mrconso=mrconso, out=out)
    report = api.check(mini, out=out)
    assert (report.outcome, report.requests, report.source) == (Outcome.VERIFIED, 0, None)
    assert report.to_json() == cli_json("check", mini, "--out", out, "--json")[1]


@pytest.mark.parametrize("release", [FIXTURES / "tempmedbench-mini", FIXTURES / "gps-planted"])
def test_validate_gps_reports_what_the_cli_reports(release: Path) -> None:
    report = api.validate_gps(release, GPS_FILE)
    assert isinstance(report, tempmedbench_synonyms.GpsReport)
    code, cli = cli_json("gps", "validate", release, "--gps", GPS_FILE, "--json")
    assert report.to_json() == cli
    assert (report.exit_code, code) == ((0, 0) if release.name == "tempmedbench-mini" else (1, 1))
    assert len(report.findings) == (0 if code == 0 else 12)


# -- ensure_synonyms ------------------------------------------------------------------------------


def test_ensure_synonyms_regenerates_missing_files_and_returns_both(
    mini: Path, mrconso: Path
) -> None:
    paths = api.ensure_synonyms(mini, mrconso=mrconso)  # in the release folder itself
    assert isinstance(paths, tempmedbench_synonyms.Paths)
    assert list(paths) == [mini / SYNONYM_SURFACE, mini / FULL_TABLE]
    assert (paths.surface, paths.full_table) == (mini / SYNONYM_SURFACE, mini / FULL_TABLE)
    assert {rel: sha256(mini / rel) for rel in expected_hashes(mini)} == expected_hashes(mini)


def test_ensure_synonyms_on_verified_files_sends_nothing_and_needs_no_key(
    mini: Path, tmp_path: Path, fake_uts: RunningFakeUts, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UMLS_API_KEY", CANARY_KEY)
    out, cache = tmp_path / "out", tmp_path / "cache"
    first = api.ensure_synonyms(mini, base_url=fake_uts.base_url, cache_dir=cache, out=out, rate=20)
    assert fake_uts.fake.count() == 11
    monkeypatch.delenv("UMLS_API_KEY")
    again = api.ensure_synonyms(mini, base_url=fake_uts.base_url, cache_dir=cache, out=out)
    assert (again, fake_uts.fake.count()) == (first, 11)  # the fake saw nothing more
    # not even an atom source is built: a dead address, a missing key file, no cache folder
    third = api.ensure_synonyms(mini, base_url=DEAD_URL, api_key_file=tmp_path / "no-key",
                                cache_dir=tmp_path / "no-cache", out=out)  # fmt: skip
    assert third == first and not (tmp_path / "no-cache").exists()
    assert find_secret(CANARY_KEY, folders=[out]) == []


def test_ensure_synonyms_regenerates_a_corrupted_file(
    mini: Path, mrconso: Path, tmp_path: Path
) -> None:
    surface, _ = api.ensure_synonyms(mini, mrconso=mrconso, out=tmp_path)
    good = surface.read_bytes()
    surface.write_bytes(good.replace(b'"qid"', b'"QID"', 1))
    assert api.check(mini, out=tmp_path).outcome == "mismatch"
    assert api.ensure_synonyms(mini, mrconso=mrconso, out=tmp_path).surface == surface
    assert surface.read_bytes() == good


def test_ensure_synonyms_regenerates_with_the_key_file_given(
    mini: Path, tmp_path: Path, fake_uts: RunningFakeUts, no_key: None
) -> None:
    key_file = tmp_path / "key"
    key_file.write_text(CANARY_KEY + "\n", encoding="utf-8")
    key_file.chmod(0o600)
    paths = api.ensure_synonyms(mini, base_url=fake_uts.base_url, api_key_file=key_file,
                                cache_dir=tmp_path / "cache", out=tmp_path / "out",
                                rate=20)  # fmt: skip
    expected = expected_hashes(mini)
    assert [sha256(p) for p in paths] == [expected[SYNONYM_SURFACE], expected[FULL_TABLE]]
    assert fake_uts.fake.count() == 11


def test_ensure_synonyms_raises_a_mismatch_with_its_report(
    mini: Path, mrconso: Path, tmp_path: Path
) -> None:
    text = mrconso.read_text(encoding="utf-8").replace("|Outpatient encounter|", "|Clinic visit|")
    mrconso.write_text(text.replace("|Ambulatory care encounter|", "|Ambulatory visit|"), "utf-8")
    with pytest.raises(MismatchError) as raised:
        api.ensure_synonyms(mini, mrconso=mrconso, out=tmp_path / "out")
    err = raised.value
    assert isinstance(err, TempMedBenchError)
    assert (err.exit_code, err.outcome, err.report.changed) == (
        1, Outcome.MISMATCH, ["ambulatory encounter"],
    )  # fmt: skip
    assert str(err) == (
        f"{mini}: the rebuilt files do not verify: 2 of 2 files differ from expected_sha256.json;"
        " 1 concept(s) got another synonym (a file that differs is written beside its final "
        "path as FILE.unverified)"
    )
    assert err.hint is not None and err.hint.startswith("the atoms you fetched differ")
    out = tmp_path / "out"
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*.*")) == [
        SYNONYM_SURFACE + ".unverified", FULL_TABLE + ".unverified",
    ]  # fmt: skip


def test_ensure_synonyms_refuses_a_broken_release_before_anything(
    mini: Path, mrconso: Path, tmp_path: Path
) -> None:
    (mini / "synonyms" / "synonym_table_kept.json").write_text("{}", encoding="utf-8")
    with pytest.raises(BadInputError) as raised:
        api.ensure_synonyms(mini, mrconso=mrconso, out=tmp_path / "out")
    assert "synonyms/synonym_table_kept.json" in str(raised.value)
    assert "differs from MANIFEST.sha256" in str(raised.value)
    assert not (tmp_path / "out").exists()


# -- the CLI over the API --------------------------------------------------------------------------


def test_a_bug_with_an_unreadable_key_file_still_exits_70(
    mini: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bug path reads --api-key-file to redact its key; a file that cannot be read is no
    second error there."""
    from tempmedbench_synonyms import cli

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(cli, "run", broken)
    result = runner.invoke(app, ["regenerate", str(mini), "--api-key-file",
                                 str(tmp_path / "missing")])  # fmt: skip
    assert result.exit_code == 70
    assert result.stderr.splitlines()[-2:] == [
        "error: unexpected RuntimeError: this is a bug in tempmedbench-synonyms",
        "hint: please report it with the traceback above",
    ]


def test_the_demo_data_carries_its_gps_file() -> None:
    from tempmedbench_synonyms.demo import demo_data

    assert os.path.samefile(demo_data().gps, GPS_FILE)  # in a checkout: the invented fixture


# -- argument types and ranges: checked before anything is read or written ------------------------

#: Each keyword of the API with a value of the wrong type, and the TypeError's message.
WRONG_TYPES = [
    ("base_url", 123, "base_url must be a string, not int"),
    ("cache_dir", 1.5, "cache_dir must be a path (str or os.PathLike), not float"),
    ("offline", "no", "offline must be True or False, not str"),
    ("refresh", 1, "refresh must be True or False, not int"),
    ("rate", "15", "rate must be a number, not str"),
    ("rate", True, "rate must be a number, not bool"),
    ("workers", 2.5, "workers must be a whole number, not float"),
    ("workers", True, "workers must be a whole number, not bool"),
    ("timeout", [30], "timeout must be a number, not list"),
    ("api_key_file", b"key", "api_key_file must be a path (str or os.PathLike), not bytes"),
    ("mrconso", 7, "mrconso must be a path (str or os.PathLike), not int"),
    ("out", 3.0, "out must be a path (str or os.PathLike), not float"),
    ("umls_release", 2025, "umls_release must be a string, not int"),
    ("progress", "yes", "progress must be True, False or a text stream, not str"),
    ("progress", 1, "progress must be True, False or a text stream, not int"),
    ("no_such_option", 1, "unexpected keyword argument 'no_such_option'"),
]


def _untouched(tmp_path: Path) -> list[str]:
    """What a refused call left in ``tmp_path`` (the suite's rate-state folder aside)."""
    return sorted(p.name for p in tmp_path.iterdir() if p.name != "state")


@pytest.mark.parametrize("function", ["regenerate", "ensure_synonyms"])
@pytest.mark.parametrize(("name", "value", "message"), WRONG_TYPES)
def test_a_keyword_of_the_wrong_type_is_a_type_error_naming_it(
    function: str, name: str, value: object, message: str, tmp_path: Path
) -> None:
    """Before anything is read: the release folder does not even exist, and no error says so."""
    call = getattr(api, function)
    keywords = {"out": tmp_path / "out", "cache_dir": tmp_path / "cache", name: value}
    with pytest.raises(TypeError) as raised:
        call(tmp_path / "nowhere", **keywords)
    assert str(raised.value) == message
    assert _untouched(tmp_path) == []


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: api.regenerate(None), "release must be a path (str or os.PathLike), not NoneType"),
        (lambda: api.ensure_synonyms(3), "release must be a path (str or os.PathLike), not int"),
        (lambda: api.check(b"rel"), "release must be a path (str or os.PathLike), not bytes"),
        (lambda: api.check("rel", out=1), "out must be a path (str or os.PathLike), not int"),
        (lambda: api.validate_gps(1, "gps.zip"),
         "release must be a path (str or os.PathLike), not int"),
        (lambda: api.validate_gps("rel", None),
         "gps must be a path (str or os.PathLike), not NoneType"),
    ],
)  # fmt: skip
def test_a_positional_argument_of_the_wrong_type_is_a_type_error_naming_it(
    call: Any, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TypeError) as raised:
        call()
    assert str(raised.value) == message
    assert _untouched(tmp_path) == []


#: Each keyword with a value out of range, and the start of the BadInputError's message.
OUT_OF_RANGE = [
    ({"rate": 25}, "--rate 25 is out of range: it is above 20 requests a second"),
    ({"rate": 0}, "--rate 0 is out of range: it must be at least 0.1 requests a second"),
    ({"rate": float("nan")}, "--rate nan is out of range: it must be at least 0.1"),
    ({"workers": 0}, "--workers 0 is out of range: it must be at least 1"),
    ({"timeout": 0}, "--timeout 0 is out of range: it must be more than 0 and at most 120"),
    ({"timeout": 121.5}, "--timeout 121.5 is out of range: it must be more than 0 and at most"),
    ({"timeout": float("inf")}, "--timeout inf is out of range"),
    ({"offline": True, "refresh": True}, "--offline and --refresh contradict each other"),
    ({"base_url": "ftp://uts.invalid/rest"}, "--base-url 'ftp://uts.invalid/rest' is not a UTS "
     "REST root: it must start with https://"),
    ({"base_url": "http://uts.invalid/rest"}, "--base-url 'http://uts.invalid/rest' is not a UTS "
     "REST root: plain http would send the API key in clear"),
    ({"umls_release": "2025"}, "'2025' is not a UMLS release name: expected YYYYAA or YYYYAB"),
    ({"umls_release": ""}, "'' is not a UMLS release name"),
]  # fmt: skip


@pytest.mark.parametrize("function", ["regenerate", "ensure_synonyms"])
@pytest.mark.parametrize(("keywords", "message"), OUT_OF_RANGE)
def test_a_keyword_out_of_range_is_bad_input_before_anything_is_read(
    function: str, keywords: dict[str, Any], message: str, tmp_path: Path
) -> None:
    call = getattr(api, function)
    with pytest.raises(BadInputError) as raised:
        call(tmp_path / "nowhere", out=tmp_path / "out", cache_dir=tmp_path / "cache", **keywords)
    assert str(raised.value).startswith(message), str(raised.value)
    assert raised.value.exit_code == 2
    assert _untouched(tmp_path) == []


def test_ensure_synonyms_refuses_a_value_out_of_range_even_when_the_files_verify(
    mini: Path, mrconso: Path, tmp_path: Path
) -> None:
    """The same call must not pass today (files verified) and fail the day they are missing."""
    out = tmp_path / "out"
    paths = api.ensure_synonyms(mini, mrconso=mrconso, out=out)
    with pytest.raises(BadInputError, match=r"^--rate 25 is out of range"):
        api.ensure_synonyms(mini, out=out, rate=25)
    # with a local MRCONSO the network options mean nothing: ignored, as on the command line
    assert api.ensure_synonyms(mini, mrconso=mrconso, out=out, rate=25) == paths


def test_the_keywords_list_exactly_the_fields_of_the_options() -> None:
    """A new option added to one and forgotten in the other fails here."""
    from tempmedbench_synonyms.options import RegenOptions, RunKeywords
    from tempmedbench_synonyms.uts.options import UtsKeywords, UtsOptions

    def keys(typed: Any) -> set[str]:
        return set(typed.__required_keys__ | typed.__optional_keys__)

    uts_fields = {f.name for f in dataclasses.fields(UtsOptions)}
    assert keys(UtsKeywords) == uts_fields
    regen_fields = {f.name for f in dataclasses.fields(RegenOptions)} - {"release", "uts"}
    assert keys(RunKeywords) == regen_fields | uts_fields
    assert keys(RunKeywords) == {
        "mrconso", "out", "umls_release", "progress", "base_url", "cache_dir", "offline",
        "refresh", "rate", "workers", "timeout", "api_key_file",
    }  # fmt: skip
