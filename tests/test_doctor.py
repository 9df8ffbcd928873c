"""``doctor`` against the loopback fake UTS: each failure its line, its hint and its exit code.

Every test runs the command through CliRunner with the canary key, and checks that the key
appears nowhere in what it printed or left behind, and that nothing was written.
"""

from __future__ import annotations

import errno
import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from helpers import MINI_MRCONSO
from helpers.folders import LONG_NAME
from tempmedbench_synonyms import __version__
from tempmedbench_synonyms.cli import app
from tempmedbench_synonyms.doctor import KNOWN_CUI, Check, exit_code
from tempmedbench_synonyms.testing import (
    CANARY_KEY,
    FakeUts,
    FakeUtsData,
    FakeUtsServer,
    find_secret,
    mrconso_row,
)
from tempmedbench_synonyms.uts.ratelimit import shared_state_path

#: What doctor says of a key that is not a UUID, as the canary key.
NOT_A_UUID = (
    "it does not look like a UTS API key (a UUID: 36 characters, 8-4-4-4-12 hexadecimal digits)"
)
#: An invented key of the form of a UTS key.
UUID_KEY = "0badc0de-0000-4000-8000-000000000000"

#: The first concept of the mini table in sorted key order: the release probe's CUI.
PROBE_PATH = "/content/2099AA/CUI/"


@pytest.fixture
def heart() -> Iterator[FakeUtsServer]:
    """A fake that knows KNOWN_CUI, the probe of a doctor given no release folder."""
    row = mrconso_row(KNOWN_CUI, "A0000001", "MTH", "PT", "x", "Heart (invented row)")
    with FakeUtsServer(FakeUts(FakeUtsData.from_lines([row]), api_key=CANARY_KEY)) as running:
        yield running


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def doctor(
    args: list[str], tmp_path: Path, base_url: str, *, key: str | None = CANARY_KEY
) -> Result:
    env = {"UMLS_BASE_URL": base_url, "TEMPMEDBENCH_CACHE_DIR": str(tmp_path / "cache"),
           "UMLS_API_KEY": key, "UMLS_API_KEY_FILE": None, "NO_COLOR": "1"}  # fmt: skip
    result = CliRunner().invoke(app, ["doctor", *args], env=env)
    assert find_secret(CANARY_KEY, texts={"stdout": result.stdout, "stderr": result.stderr},
                       folders=[tmp_path]) == []  # fmt: skip
    return result


def checks_of(result: Result) -> dict[str, dict[str, object]]:
    report = json.loads(result.stdout)
    assert report["schema_version"] == 1 and report["tool_version"] == __version__
    assert report["exit_code"] == result.exit_code
    return {c["name"]: c for c in report["checks"]}


def test_a_good_set_up_passes_every_check_with_one_probe_and_writes_nothing(
    mini_uts: FakeUtsServer, mini: Path, mrconso: Path, tmp_path: Path
) -> None:
    before = snapshot(mini)
    result = doctor([str(mini), "--mrconso", str(mrconso), "--json"], tmp_path, mini_uts.base_url)
    assert result.exit_code == 0, result.stderr
    checks = checks_of(result)
    assert list(checks) == ["versions", "release", "api_key", "uts", "cache", "out",
                            "rate_state", "mrconso"]  # fmt: skip
    assert all(c["ok"] is True for c in checks.values())
    # The canary key is no UUID, as a UTS key is: said (the fake accepts it all the same).
    assert [name for name, c in checks.items() if c["hint"] is not None] == ["api_key"]
    assert checks["api_key"]["message"] == f"found in UMLS_API_KEY, but {NOT_A_UUID}"
    assert checks["release"]["message"] == (
        f"{mini}: 7 files match MANIFEST.sha256; 10 concepts, UMLS release 2099AA"
    )
    assert checks["uts"]["message"] == (
        f"{mini_uts.base_url} accepted the key and serves UMLS release 2099AA (probe: concept "
        "C9000001)"
    )
    assert str(checks["mrconso"]["message"]).startswith(
        f"{mrconso} reads as MRCONSO.RRF (file, first rows checked); which of the table's 4 "
        "sources (LNC, MTH, RXNORM, SNOMEDCT_US) it holds is known after a full scan"
    )
    # Exactly the probe reached UTS, and it was not cached; the release is untouched.
    assert [s.path for s in mini_uts.fake.seen] == ["/content/2099AA/CUI/C9000001"]
    assert not (tmp_path / "cache").exists()
    assert not (tmp_path / "state").exists()  # (conftest's) not even the shared rate state
    assert snapshot(mini) == before
    # One human line per check on stderr, then the summary.
    lines = result.stderr.splitlines()
    assert lines[0].startswith("ok    versions    tempmedbench-synonyms ")
    assert lines[4] == f"ok    uts         {checks['uts']['message']}"
    assert lines[-1] == "doctor: all 8 checks passed"


def test_a_refused_key_is_exit_3_and_says_so(mini: Path, tmp_path: Path) -> None:
    fake = FakeUts(FakeUtsData.from_mrconso(MINI_MRCONSO), api_key="another-key")
    with FakeUtsServer(fake) as refusing:
        result = doctor([str(mini), "--json"], tmp_path, refusing.base_url)
        assert result.exit_code == 3
        uts = checks_of(result)["uts"]
        assert uts["ok"] is False
        assert uts["message"] == (
            "UMLS answered HTTP 401 for /content/2099AA/CUI/C9000001: the API "
            "key is missing, invalid or expired"
        )
        assert str(uts["hint"]).startswith("check the key in your UTS profile")
        assert len(refusing.fake.seen) == 1
    assert "FAIL  uts         UMLS answered HTTP 401" in result.stderr
    assert result.stderr.splitlines()[-1] == "doctor: 1 of 7 checks failed (exit 3)"
    # -q: only errors on stderr, the failed check and its hint
    with FakeUtsServer(fake) as refusing:
        quiet = doctor([str(mini), "-q"], tmp_path, refusing.base_url)
    assert quiet.exit_code == 3
    lines = quiet.stderr.splitlines()
    assert lines[0].startswith("FAIL  uts         UMLS answered HTTP 401 for /content/2099AA/")
    assert all(not line.startswith(("ok ", "doctor:")) for line in lines)


def test_no_key_at_all_is_exit_3_and_nothing_is_sent(
    mini_uts: FakeUtsServer, mini: Path, tmp_path: Path
) -> None:
    result = doctor([str(mini), "--json"], tmp_path, mini_uts.base_url, key=None)
    assert result.exit_code == 3
    checks = checks_of(result)
    assert checks["api_key"]["ok"] is False
    assert checks["api_key"]["message"] == (
        "no UMLS API key: neither --api-key-file, UMLS_API_KEY_FILE nor UMLS_API_KEY gives one"
    )
    assert str(checks["api_key"]["hint"]).startswith("copy the key from your UTS profile")
    assert checks["uts"] == {"name": "uts", "ok": False,
                             "message": "not asked: there is no usable API key to send",
                             "hint": "fix the api_key check first"}  # fmt: skip
    assert mini_uts.fake.seen == []


def test_the_key_file_variable_is_named_as_the_source(heart: FakeUtsServer, tmp_path: Path) -> None:
    key_file = tmp_path / "key"
    key_file.write_text(CANARY_KEY + "\n")
    key_file.chmod(0o600)
    result = CliRunner().invoke(
        app, ["doctor", "--json"],
        env={"UMLS_BASE_URL": heart.base_url, "UMLS_API_KEY": None,
             "UMLS_API_KEY_FILE": str(key_file), "TEMPMEDBENCH_CACHE_DIR": str(tmp_path / "c")},
    )  # fmt: skip
    assert [s.path for s in heart.fake.seen] == [f"/content/current/CUI/{KNOWN_CUI}"]
    assert result.exit_code == 0, result.stderr
    checks = checks_of(result)
    assert list(checks) == ["versions", "api_key", "uts", "cache", "rate_state"]
    assert (
        checks["api_key"]["message"] == f"found in UMLS_API_KEY_FILE ({key_file}), but {NOT_A_UUID}"
    )
    assert checks["uts"]["message"] == (
        f"{heart.base_url} accepted the key and serves UMLS release current (now 2099AA) (probe: "
        f"concept {KNOWN_CUI})"
    )
    assert CANARY_KEY not in result.stdout + result.stderr


def test_an_unwritable_output_folder_is_exit_2(
    mini_uts: FakeUtsServer, mini: Path, tmp_path: Path
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    result = doctor([str(mini), "--out", str(blocker / "out"), "--json"], tmp_path,
                    mini_uts.base_url)  # fmt: skip
    assert result.exit_code == 2
    out = checks_of(result)["out"]
    assert out["ok"] is False
    assert out["message"] == f"cannot write in {blocker}/out/question_surface: Not a directory"
    assert out["hint"] == (
        "a part of the path is a file where a folder is expected; write the rebuilt files "
        "elsewhere with --out DIR, a folder you can write in"
    )
    assert blocker.read_text() == "not a folder\n"


def test_a_file_that_is_not_mrconso_is_exit_2(
    mini_uts: FakeUtsServer, mini: Path, tmp_path: Path
) -> None:
    bogus = tmp_path / "MRCONSO.RRF"
    bogus.write_text("hello|world\n")
    result = doctor([str(mini), "--mrconso", str(bogus), "--json"], tmp_path, mini_uts.base_url)
    assert result.exit_code == 2
    check = checks_of(result)["mrconso"]
    assert check["ok"] is False
    assert str(check["message"]).startswith(f"{bogus}, line 1: not an MRCONSO.RRF file: ")
    assert "FAIL  mrconso" in result.stderr


def test_with_mrconso_no_key_is_needed(mini: Path, mrconso: Path, tmp_path: Path) -> None:
    result = doctor([str(mini), "--mrconso", str(mrconso), "--json"], tmp_path,
                    "http://127.0.0.1:9/rest", key=None)  # fmt: skip
    assert result.exit_code == 0, result.stderr
    checks = checks_of(result)
    assert checks["api_key"]["message"] == "none found; none is needed with --mrconso"
    assert checks["uts"]["message"] == "not asked: a run with --mrconso sends no request"


def test_a_release_uts_does_not_serve_is_exit_4(mini: Path, tmp_path: Path) -> None:
    fake = FakeUts(FakeUtsData.from_mrconso(MINI_MRCONSO, release="2098AA"), api_key=CANARY_KEY)
    with FakeUtsServer(fake) as other:
        url = other.base_url
        result = doctor([str(mini), "--json"], tmp_path, url)
    assert result.exit_code == 4
    uts = checks_of(result)["uts"]
    assert uts["message"] == (
        f"UMLS release 2099AA is not served at {url}: its probe concept C9000001 "
        "answered 404 Not Found"
    )
    assert str(uts["hint"]).startswith("check the table's umls_release or --umls-release")
    assert not (tmp_path / "cache").exists()


def test_a_base_url_that_is_not_uts_is_exit_4_with_a_hint(mini: Path, tmp_path: Path) -> None:
    fake = FakeUts(FakeUtsData.from_mrconso(MINI_MRCONSO), api_key=CANARY_KEY)
    with FakeUtsServer(fake, prefix="/api") as other:  # /rest is not there: a plain 404
        url = other.base_url.replace("/api", "/rest")
        result = doctor([str(mini), "--json"], tmp_path, url)
    assert result.exit_code == 4
    uts = checks_of(result)["uts"]
    assert "this does not look like the UMLS REST API" in str(uts["message"])
    assert str(uts["hint"]).startswith("check --base-url (or UMLS_BASE_URL)")


def test_a_rate_state_that_cannot_be_used_is_exit_2_with_the_fallback_explained(
    heart: FakeUtsServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "state-file"
    blocker.write_text("")
    monkeypatch.setenv("TEMPMEDBENCH_STATE_DIR", str(blocker))
    result = doctor(["--json"], tmp_path, heart.base_url)
    assert result.exit_code == 2
    check = checks_of(result)["rate_state"]
    assert str(check["message"]).startswith(f"cannot use the shared rate state {blocker}/rate/")
    assert str(check["message"]).endswith(
        ": runs would each keep their own --rate but not share one budget, so two runs at "
        "once could exceed the UTS limit together"
    )
    assert check["hint"] == (
        "set TEMPMEDBENCH_STATE_DIR to a local folder of your own that you can write in, or run "
        "one at a time"
    )


def test_a_dangling_symlink_as_the_state_folder_is_named_as_such(
    heart: FakeUtsServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """trust 24: doctor failed rate_state, but "(Not a directory)"."""
    link = tmp_path / "state"
    link.symlink_to(tmp_path / "missing")
    monkeypatch.setenv("TEMPMEDBENCH_STATE_DIR", str(link))
    result = doctor(["--json"], tmp_path, heart.base_url)
    assert result.exit_code == 2
    check = checks_of(result)["rate_state"]
    state = shared_state_path(heart.base_url, link)
    assert check["message"] == (
        f"cannot use the shared rate state {state}: {link} is a symbolic link to "
        f"{tmp_path / 'missing'}, which does not exist: runs would each keep their own --rate "
        "but not share one budget, so two runs at once could exceed the UTS limit together"
    )
    assert not (tmp_path / "missing").exists()


def test_a_rate_state_that_is_not_the_users_own_fails_its_check_and_is_left_as_it_is(
    heart: FakeUtsServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC section 8, "Shared folders": doctor says what a run would leave aside, and why."""
    state = tmp_path / "shared-state"
    (state / "rate").mkdir(parents=True)
    state.chmod(0o777)  # a folder every user of the machine can write
    monkeypatch.setenv("TEMPMEDBENCH_STATE_DIR", str(state))
    result = doctor(["--json"], tmp_path, heart.base_url)
    assert result.exit_code == 2
    check = checks_of(result)["rate_state"]
    assert check["message"] == (
        f"{state}: the rate-state folder can be written by other users (mode 0777), so what it "
        f"holds cannot be trusted; chmod go-w {state}, or use a folder of your own "
        "(TEMPMEDBENCH_STATE_DIR): runs would each keep their own --rate but not share one "
        "budget, so two runs at once could exceed the UTS limit together"
    )
    assert checks_of(result)["uts"]["ok"] is True  # the probe kept its own limit
    assert [p.name for p in state.rglob("*")] == ["rate"]  # nothing written there


def test_a_cache_folder_that_is_not_the_users_own_fails_its_check(
    heart: FakeUtsServer, tmp_path: Path
) -> None:
    (tmp_path / "cache").mkdir()
    os.chown(tmp_path / "cache", 4242, -1)  # (as root: another user's folder)
    result = doctor(["--json"], tmp_path, heart.base_url)
    assert result.exit_code == 2
    check = checks_of(result)["cache"]
    assert (check["message"], check["hint"]) == (
        f"{tmp_path / 'cache'}: the cache folder belongs to another user (uid 4242; you are "
        f"uid {os.getuid()}), so what it holds cannot be trusted",
        "use a folder of your own (--cache-dir or TEMPMEDBENCH_CACHE_DIR), or have "
        f"{tmp_path / 'cache'} removed",
    )


def test_the_exit_code_is_the_first_failing_checks(mini_uts: FakeUtsServer, tmp_path: Path) -> None:
    """No key (3) comes before an unusable cache folder (2) and a missing release (2)."""
    missing = tmp_path / "no-release"
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    result = doctor([str(missing), "--cache-dir", str(blocker), "--json"], tmp_path,
                    mini_uts.base_url, key=None)  # fmt: skip
    checks = checks_of(result)
    assert [name for name, c in checks.items() if not c["ok"]] == [
        "release",
        "api_key",
        "uts",
        "cache",
    ]
    assert checks["release"]["message"] == f"{missing}: no such folder"
    assert result.exit_code == 2  # the release's, the first failure
    assert exit_code([Check("a", True, ""), Check("b", False, "", None, 4),
                      Check("c", False, "", None, 3)]) == 4  # fmt: skip


@pytest.mark.parametrize(("no_color", "coloured"), [(None, True), ("1", False)])
def test_ok_and_fail_are_coloured_on_a_terminal_unless_no_color(
    mini_uts: FakeUtsServer, tmp_path: Path, no_color: str | None, coloured: bool
) -> None:
    env = {"UMLS_BASE_URL": mini_uts.base_url, "UMLS_API_KEY": None, "UMLS_API_KEY_FILE": None,
           "TEMPMEDBENCH_CACHE_DIR": str(tmp_path / "cache"), "NO_COLOR": no_color}  # fmt: skip
    result = CliRunner().invoke(app, ["doctor"], env=env, color=True)  # as on a terminal
    assert result.exit_code == 3
    assert ("\x1b[32m\x1b[22mok    \x1b[0mversions" in result.stderr) is coloured
    assert ("\x1b[31m\x1b[1mFAIL  \x1b[0mapi_key" in result.stderr) is coloured
    assert ("FAIL  api_key" in result.stderr) is not coloured


def test_an_unreadable_key_file_is_exit_2_and_nothing_is_sent(
    mini_uts: FakeUtsServer, tmp_path: Path
) -> None:
    missing = tmp_path / "no-such-key"
    result = doctor(["--api-key-file", str(missing), "--json"], tmp_path, mini_uts.base_url)
    assert result.exit_code == 2
    key = checks_of(result)["api_key"]
    assert key["message"] == f"{missing}: cannot read the API key file: No such file or directory"
    assert key["hint"] == "give a file that holds only your UMLS API key"
    assert checks_of(result)["uts"]["message"] == "not asked: there is no usable API key to send"
    assert mini_uts.fake.seen == []


def test_a_missing_library_fails_the_versions_check(monkeypatch: pytest.MonkeyPatch) -> None:
    import tempmedbench_synonyms.doctor as doctor_module

    monkeypatch.setattr(doctor_module, "dependency_versions",
                        lambda: {"requests": "not installed", "typer": "0.1"})  # fmt: skip
    check = doctor_module.check_versions()
    assert (check.ok, check.exit_code) == (False, 2)
    assert check.message.endswith(", requests not installed, typer 0.1")
    assert check.hint == (
        "requests: reinstall it: pip install --force-reinstall PATH/TO/THE/CHECKOUT"
    )


def test_a_key_file_of_two_words_fails_with_a_fix_and_a_loose_one_passes_with_one(
    mini_uts: FakeUtsServer, tmp_path: Path
) -> None:
    two = tmp_path / "two-words"
    two.write_text("a-key another-word\n")
    two.chmod(0o600)
    result = doctor(["--api-key-file", str(two), "--json"], tmp_path, mini_uts.base_url)
    assert result.exit_code == 2
    key = checks_of(result)["api_key"]
    assert key["message"] == (
        f"{two}: the API key file holds more than one word; it should hold only the key"
    )
    assert key["hint"] == "keep only your UMLS API key in it, on one line"
    loose = tmp_path / "loose"
    loose.write_text(f"{UUID_KEY}\n")  # not the canary: the folder is searched for it
    loose.chmod(0o644)
    result = doctor(["--api-key-file", str(loose), "--json"], tmp_path, mini_uts.base_url)
    key = checks_of(result)["api_key"]
    assert (key["ok"], key["message"], key["hint"]) == (
        True,
        f"found in --api-key-file {loose}, but other users can read the file",
        f"chmod 600 {loose}",
    )


def test_a_loose_key_file_is_warned_of_once(
    mini_uts: FakeUtsServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """doctor reads the key for its own check and again for the probe: one warning, not one a
    reading."""
    loose = tmp_path / "loose"
    loose.write_text(f"{UUID_KEY}\n")
    loose.chmod(0o644)
    result = doctor(["--api-key-file", str(loose)], tmp_path, mini_uts.base_url)
    assert result.exit_code == 3  # the fake knows only the canary key: the probe is refused
    warned = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert warned == [f"the API key file {loose} can be read by other users; chmod 600 it"]
    assert len(mini_uts.fake.seen) == 1


def test_without_a_release_a_probe_uts_refuses_names_what_doctor_can_do(
    mini_uts: FakeUtsServer, tmp_path: Path
) -> None:
    """The mini fake knows no KNOWN_CUI: 'current' is not served. The hint names doctor's own
    ways (the base URL, a release folder), not a regeneration's --umls-release."""
    result = doctor(["--json"], tmp_path, mini_uts.base_url)
    assert result.exit_code == 4
    uts = checks_of(result)["uts"]
    assert uts["message"] == (
        f"UMLS release current is not served at {mini_uts.base_url}: its probe concept "
        f"{KNOWN_CUI} answered 404 Not Found"
    )
    assert uts["hint"] == (
        "with no release folder named, doctor asks for release 'current' and a concept every "
        "release has: check --base-url (or UMLS_BASE_URL), and name the release folder "
        "(tempmedbench-synonyms doctor RELEASE) to probe the release its table uses"
    )


def test_with_a_release_that_cannot_be_read_the_hint_says_so(
    mini_uts: FakeUtsServer, tmp_path: Path
) -> None:
    """A release folder named but not read: the probe is 'current' again, and the hint does not
    tell the user to name the folder they named."""
    result = doctor([str(tmp_path / "missing"), "--json"], tmp_path, mini_uts.base_url)
    checks = checks_of(result)
    assert checks["release"]["ok"] is False
    assert checks["uts"]["hint"] == (
        "with no table read, doctor asks for release 'current' and a concept every release "
        "has: check --base-url (or UMLS_BASE_URL); fix the release check for a probe of the "
        "release its table uses"
    )


PERMISSIONS = "check the permissions of the path and of each folder above it (ls -ld)"
TOO_LONG = "the path, or a name in it, is longer than the file system allows: choose a shorter one"


@pytest.mark.parametrize("how", ["locked", "too long"])
@pytest.mark.parametrize("which", ["release", "api_key", "cache", "out", "mrconso"])
def test_a_path_doctor_cannot_reach_fails_its_check_and_every_other_check_runs(
    mini_uts: FakeUtsServer,
    mini: Path,
    mrconso: Path,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    which: str,
    how: str,
) -> None:
    """Issue 17 item 8: a path under a folder the user cannot enter (mode 000; as root, whom the
    kernel lets through, refused in-process: tests/helpers/folders.py), or with a name of 300
    characters (ENAMETOOLONG, for real), is one failed check with its fix, never a traceback:
    doctor goes on, and --json holds every check."""
    base = request.getfixturevalue("locked") if how == "locked" else tmp_path / LONG_NAME
    key = tmp_path / "key"
    key.write_text(f"{CANARY_KEY}\n")
    key.chmod(0o600)
    paths = {"release": mini, "api_key": key, "cache": tmp_path / "cache", "out": tmp_path / "out",
             "mrconso": mrconso}  # fmt: skip
    bad = {"release": base / "release", "api_key": base / "key", "cache": base / "cache",
           "out": base / "out", "mrconso": base / "MRCONSO.RRF"}[which]  # fmt: skip
    paths[which] = bad
    args = [str(paths["release"]), "--api-key-file", str(paths["api_key"]),
            "--cache-dir", str(paths["cache"]), "--out", str(paths["out"]),
            "--mrconso", str(paths["mrconso"])]  # fmt: skip
    env = {"UMLS_BASE_URL": mini_uts.base_url, "UMLS_API_KEY": None, "UMLS_API_KEY_FILE": None,
           "TEMPMEDBENCH_CACHE_DIR": None, "NO_COLOR": "1"}  # fmt: skip
    result = CliRunner().invoke(app, ["doctor", *args, "--json"], env=env)
    assert "Traceback" not in result.stderr
    checks = checks_of(result)
    assert list(checks) == ["versions", "release", "api_key", "uts", "cache", "out",
                            "rate_state", "mrconso"]  # fmt: skip
    problem, fix = ("Permission denied", PERMISSIONS) if how == "locked" else (
        "File name too long", TOO_LONG)  # fmt: skip
    expected = {
        "release": (f"{bad}: cannot use the release folder: {problem}", fix),
        "api_key": (f"{bad}: cannot read the API key file: {problem}", fix),
        "cache": (f"cannot write in {bad}: {problem}",
                  f"{fix}; give a writable folder with --cache-dir or TEMPMEDBENCH_CACHE_DIR"),
        "out": (f"cannot write in {bad}/question_surface: {problem}",
                f"{fix}; write the rebuilt files elsewhere with --out DIR, a folder you can "
                "write in"),
        "mrconso": (f"{bad}: cannot read: {problem}", fix),
    }[which]  # fmt: skip
    assert (checks[which]["ok"], checks[which]["message"], checks[which]["hint"]) == (
        False,
        *expected,
    )
    # The first failure gives the exit code: this one, a bad input (a release that could not
    # be read makes the probe ask for 'current', which the mini fake does not serve: exit 4 next).
    failed = [name for name, c in checks.items() if not c["ok"]]
    assert failed == {"release": ["release", "uts"], "api_key": ["api_key", "uts"]}.get(
        which, [which]
    )
    assert result.exit_code == 2
    assert f"FAIL  {which:<11} {expected[0]}" in result.stderr.splitlines()
    assert CANARY_KEY not in result.stdout + result.stderr


def test_an_error_no_check_expects_fails_that_check_and_doctor_goes_on(
    mini_uts: FakeUtsServer, mini: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A disk that fails under the release and the MRCONSO file (EIO, injected: no folder can
    make it), and no home folder for the rate state (no HOME, no passwd entry: simulated):
    each is its check's failure, with its message, and every other check still runs."""
    import tempmedbench_synonyms.doctor as doctor_module

    pwd = pytest.importorskip("pwd")

    def failing_disk(path: Path) -> Any:
        raise OSError(errno.EIO, os.strerror(errno.EIO), str(path))

    def no_entry(uid: int) -> Any:
        raise KeyError(uid)

    monkeypatch.setattr(doctor_module, "open_release", failing_disk)
    monkeypatch.setattr(doctor_module, "sniff_mrconso", failing_disk)
    monkeypatch.setattr(pwd, "getpwuid", no_entry)
    for name in ("HOME", "XDG_STATE_HOME", "TEMPMEDBENCH_STATE_DIR"):
        monkeypatch.delenv(name, raising=False)
    bogus = tmp_path / "MRCONSO.RRF"
    result = doctor([str(mini), "--mrconso", str(bogus), "--out", str(tmp_path / "out"),
                     "--json"], tmp_path, mini_uts.base_url)  # fmt: skip
    checks = checks_of(result)
    assert list(checks) == ["versions", "release", "api_key", "uts", "cache", "out",
                            "rate_state", "mrconso"]  # fmt: skip
    assert (checks["release"]["message"], checks["mrconso"]["message"]) == (
        f"{mini}: Input/output error",
        f"{bogus}: Input/output error",
    )
    assert checks["rate_state"]["message"] == (
        "the default state folder is in the home folder, and there is none: HOME is not set, "
        f"and user id {os.getuid()} has no home folder in the password database"
    )
    assert [name for name, c in checks.items() if not c["ok"]] == [
        "release", "uts", "rate_state", "mrconso"
    ]  # fmt: skip
    assert result.exit_code == 2


def test_meta_says_whether_each_file_is_indexed_and_how_big(tmp_path: Path) -> None:
    """SPEC 12: doctor --meta PATH builds nothing; it says which parts are there, how big."""
    from helpers import ROOT
    from tempmedbench_synonyms.mrconso.index import LocalIndex

    meta = tmp_path / "META"
    meta.mkdir()
    for f in ("MRCONSO", "MRSTY"):
        (meta / f"{f}.RRF").write_bytes((ROOT / f"fixtures/umls/{f}.RRF").read_bytes())
    idx = tmp_path / "cache" / "index"
    args = ["--meta", str(meta), "--json"]
    before = doctor(args, tmp_path, "http://127.0.0.1:9/rest", key=None)
    assert before.exit_code == 0, before.stderr
    checks = checks_of(before)
    assert checks["api_key"]["message"] == "none found; none is needed with --meta"
    assert checks["meta"] == {
        "name": "meta", "ok": True, "hint": None,
        "message": f"{meta} is a META of 2 files, indexed in {idx}: not yet MRCONSO (7.3 kB to "
        "read), MRSTY (723 B to read): each is built when a command first needs it",
    }  # fmt: skip
    assert not idx.exists()
    (built,) = LocalIndex(meta, index_dir=idx).build(["MRCONSO"])
    after = checks_of(doctor(args, tmp_path, "http://127.0.0.1:9/rest", key=None))
    assert after["meta"]["message"] == (
        f"{meta} is a META of 2 files, indexed in {idx}: MRCONSO (71 rows, "
        f"{built.bytes / 1000:.1f} kB); not yet MRSTY (723 B to read): each is built when a "
        "command first needs it"
    )
    missing = checks_of(doctor(["--meta", str(tmp_path / "none"), "--json"], tmp_path,
                               "http://127.0.0.1:9/rest", key=None))  # fmt: skip
    assert missing["meta"]["ok"] is False
    assert str(missing["meta"]["message"]).startswith(f"{tmp_path / 'none'}: no such file")


def test_meta_of_a_pipe_says_it_is_read_once_and_never_indexed(tmp_path: Path) -> None:
    """A pipe has no part to list (a command reads it once, into a part never kept)."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    idx = tmp_path / "cache" / "index"
    result = doctor(["--meta", str(fifo), "--json"], tmp_path, "http://127.0.0.1:9/rest", key=None)
    assert result.exit_code == 0, result.stderr
    assert checks_of(result)["meta"] == {
        "name": "meta", "ok": True, "hint": None,
        "message": f"{fifo} is a pipe: a command reads it once, into a part never kept; nothing "
        f"is indexed in {idx}",
    }  # fmt: skip
    assert not idx.exists()
