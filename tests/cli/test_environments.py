"""Odd environments (issue 17, SPEC section 8 "Environments"): no home folder, a key file saved
by Notepad or pasted with an invisible character, a key pasted into the base URL. Each is a
clear error (exit 2) or a warning, never a traceback, and the key shows nowhere."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from helpers import MINI, MINI_MRCONSO
from tempmedbench_synonyms import secret
from tempmedbench_synonyms.cli import app
from tempmedbench_synonyms.testing import CANARY_KEY, FakeUtsServer, find_secret

# -- no HOME and no passwd entry (docker run --user N, some CI sandboxes) ----------------------

#: The console script, in a process whose user has no passwd entry: simulated, since the tests
#: may run as a user who has one (root does; and a uid without one could not run the
#: interpreter when it lives in a home folder). Python and platformdirs ask ``pwd.getpwuid``.
_NO_PASSWD_ENTRY = """
import pwd
def _no_entry(uid):
    raise KeyError(f"getpwuid(): uid not found: {uid}")
pwd.getpwuid = _no_entry
from tempmedbench_synonyms.cli import script_main
script_main()
"""


def _without_home(**more: str) -> dict[str, str]:
    """This environment without HOME, the XDG folders and every variable of the tool."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k != "HOME"
        and not k.startswith(("XDG_", "TEMPMEDBENCH_", "UMLS_"))
        and "proxy" not in k.lower()
    }
    return {**env, **more}


def _no_passwd(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _NO_PASSWD_ENTRY, *args],
        env=env, cwd=cwd, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def _no_home_message(kind: str) -> str:
    return (
        f"the default {kind} folder is in the home folder, and there is none: HOME is not set, "
        f"and user id {os.getuid()} has no home folder in the password database"
    )


NO_HOME_HINT = (
    "set HOME to a folder you own, or TEMPMEDBENCH_CACHE_DIR and TEMPMEDBENCH_STATE_DIR to "
    "folders you can write in; in a container run as a user with no passwd entry, add "
    "-e HOME=/tmp (or a folder you mount)"
)


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="a passwd entry is a POSIX thing")
def test_without_a_home_folder_each_command_says_which_variables_to_set(
    mini_uts: FakeUtsServer, tmp_path: Path
) -> None:
    """Issue 17 item 9: every REST command exited 70 (a bug), doctor and --version gave a
    traceback. Now exit 2 naming HOME, TEMPMEDBENCH_CACHE_DIR and TEMPMEDBENCH_STATE_DIR, and
    --version says what is wrong in place of the cache folder."""
    env = _without_home(UMLS_API_KEY=CANARY_KEY, UMLS_BASE_URL=mini_uts.base_url)
    out = tmp_path / "out"
    version = _no_passwd(["--version"], env, tmp_path)
    assert (version.returncode, version.stderr) == (0, "")
    assert version.stdout.splitlines()[-1] == (
        f"cache folder: none: {_no_home_message('cache')}; {NO_HOME_HINT}"
    )
    regenerate = _no_passwd(["regenerate", str(MINI), "--out", str(out), "--json"], env, tmp_path)
    report = json.loads(regenerate.stdout)
    assert (regenerate.returncode, report["outcome"], report["message"], report["hint"]) == (
        2, "bad_input", _no_home_message("cache"), NO_HOME_HINT
    )  # fmt: skip
    assert regenerate.stderr.splitlines()[-2:] == [
        f"error: {_no_home_message('cache')}",
        f"hint: {NO_HOME_HINT}",
    ]
    umls = _no_passwd(["umls", "concept", "C9000001", "--umls-release", "2099AA"], env, tmp_path)
    assert (umls.returncode, umls.stderr.splitlines()[0]) == (
        2,
        f"error: {_no_home_message('cache')}",
    )
    cache = _no_passwd(["cache", "info", "--json"], env, tmp_path)
    assert (cache.returncode, json.loads(cache.stdout)["message"]) == (2, _no_home_message("cache"))
    doctor = _no_passwd(["doctor", str(MINI), "--json"], env, tmp_path)
    checks = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert doctor.returncode == 2
    assert (checks["cache"]["message"], checks["cache"]["hint"]) == (
        _no_home_message("cache"),
        NO_HOME_HINT,
    )
    # The probe shares the rate state of the machine, which has no folder either.
    for name in ("uts", "rate_state"):
        assert (checks[name]["message"], checks[name]["hint"]) == (
            _no_home_message("state"),
            NO_HOME_HINT,
        )
    assert mini_uts.fake.seen == []  # nothing was sent
    for done in (version, regenerate, umls, cache, doctor):
        assert "Traceback" not in done.stderr
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []  # no "~" folder made in the working folder


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="a passwd entry is a POSIX thing")
def test_without_a_home_folder_the_two_variables_are_enough(
    mini_uts: FakeUtsServer, tmp_path: Path
) -> None:
    env = _without_home(
        UMLS_API_KEY=CANARY_KEY,
        UMLS_BASE_URL=mini_uts.base_url,
        TEMPMEDBENCH_CACHE_DIR=str(tmp_path / "cache"),
        TEMPMEDBENCH_STATE_DIR=str(tmp_path / "state"),
    )
    rest = _no_passwd(["regenerate", str(MINI), "--out", str(tmp_path / "a"), "--json"], env,
                      tmp_path)  # fmt: skip
    assert (rest.returncode, json.loads(rest.stdout)["outcome"]) == (0, "verified"), rest.stderr
    # A run from a local MRCONSO.RRF needs neither folder.
    local = _no_passwd(["regenerate", str(MINI), "--mrconso", str(MINI_MRCONSO), "--out",
                        str(tmp_path / "b"), "-q"], _without_home(), tmp_path)  # fmt: skip
    assert (local.returncode, local.stderr) == (0, "")


# -- the key file: Notepad's BOM, an invisible character -----------------------------------------


def _with_key_file(args: list[str], key_file: Path, fake: FakeUtsServer, tmp_path: Path) -> Result:
    env = {"UMLS_API_KEY": None, "UMLS_API_KEY_FILE": str(key_file), "NO_COLOR": "1",
           "UMLS_BASE_URL": fake.base_url,
           "TEMPMEDBENCH_CACHE_DIR": str(tmp_path / "cache")}  # fmt: skip
    return CliRunner().invoke(app, args, env=env)


def test_a_key_file_saved_by_notepad_works_with_a_note(
    mini_uts: FakeUtsServer, mini: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 17 item 10: the BOM stayed part of the key, so a correct key got exit 3 "invalid
    or expired", and doctor said the key was found."""
    key_file = tmp_path / "key.txt"
    key_file.write_bytes(b"\xef\xbb\xbf" + CANARY_KEY.encode() + b"\r\n")
    key_file.chmod(0o600)
    note = (
        f"{key_file} starts with a byte order mark (BOM, as Notepad's UTF-8 writes it), which "
        "is not part of the key and was left out: save the key file as UTF-8 without a BOM"
    )
    run = _with_key_file(["regenerate", str(mini), "--out", str(tmp_path / "out"), "--json"],
                         key_file, mini_uts, tmp_path)  # fmt: skip
    assert (run.exit_code, json.loads(run.stdout)["outcome"]) == (0, "verified"), run.stderr
    assert note in [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    doctor = _with_key_file(["doctor", str(mini), "--json"], key_file, mini_uts, tmp_path)
    checks = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert checks["api_key"]["message"] == (
        f"found in UMLS_API_KEY_FILE ({key_file}), but it starts with a byte order mark (BOM, "
        "as Notepad's UTF-8 writes it), which is not part of the key and was left out: save "
        "the key file as UTF-8 without a BOM; it does not look like a UTS API key (a UUID: 36 "
        "characters, 8-4-4-4-12 hexadecimal digits)"
    )
    assert checks["uts"]["ok"] is True  # the probe sent the key without its BOM
    texts = {"run": run.stdout + run.stderr, "doctor": doctor.stdout + doctor.stderr}
    # Everywhere the runs wrote (the key file itself holds it, of course).
    assert (
        find_secret(CANARY_KEY, texts=texts, folders=[tmp_path / "cache", tmp_path / "out"]) == []
    )


def test_a_key_with_a_zero_width_space_is_bad_input_and_nothing_is_sent(
    mini_uts: FakeUtsServer, mini: Path, tmp_path: Path
) -> None:
    key_file = tmp_path / "key.txt"
    key_file.write_text(f"{CANARY_KEY}\u200b\n", encoding="utf-8")  # copied from a web page
    key_file.chmod(0o600)
    run = _with_key_file(["regenerate", str(mini), "--out", str(tmp_path / "out"), "--json"],
                         key_file, mini_uts, tmp_path)  # fmt: skip
    message = (
        f"{key_file}, line 1: the API key file holds U+200B (ZERO WIDTH SPACE) at character "
        f"{len(CANARY_KEY) + 1}: an invisible or control character, which no API key has"
    )
    assert (run.exit_code, json.loads(run.stdout)["message"]) == (2, message)
    doctor = _with_key_file(["doctor", str(mini), "--json"], key_file, mini_uts, tmp_path)
    checks = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert (doctor.exit_code, checks["api_key"]["message"]) == (2, message)
    assert mini_uts.fake.seen == []
    assert not (tmp_path / "out").exists()
    assert CANARY_KEY[:9] not in run.stdout + run.stderr + doctor.stdout + doctor.stderr


# -- a key pasted into --base-url or UMLS_BASE_URL -------------------------------------------


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (f"https://{CANARY_KEY}@uts.example/rest", "https://***@uts.example/rest"),
        (f"https://me:{CANARY_KEY}@uts.example/rest", "https://***@uts.example/rest"),
        (f"https://uts.example/rest#{CANARY_KEY}", "https://uts.example/rest#***"),
        (f"https://uts.example/rest?key={CANARY_KEY}", "https://uts.example/rest?***"),
    ],
)
@pytest.mark.parametrize("given", ["--base-url", "UMLS_BASE_URL"])
@pytest.mark.parametrize("key_set", [True, False], ids=["key-set", "no-key"])
def test_a_key_in_the_base_url_is_never_shown(
    mini: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    url: str,
    shown: str,
    given: str,
    key_set: bool,
) -> None:
    """Issue 17 item 11: the URL was checked before the key was read, so the key it held was
    printed as it is, in --json too. The user name, password, query and fragment of a base URL
    are masked whether or not the key was read (``no-key``: the only key is the one in the
    URL), and the key is read first besides.

    Each command runs as in a fresh process: no key read before it (the registry of the keys
    read so far, which ``redact`` masks, starts empty; other tests of this process read the
    canary key). ``test_a_key_in_the_base_url_of_a_fresh_process_is_never_shown`` runs one for
    real."""
    env: dict[str, Any] = {"UMLS_API_KEY": CANARY_KEY if key_set else None, "NO_COLOR": "1",
                           "UMLS_API_KEY_FILE": None, "UMLS_BASE_URL": None,
                           "TEMPMEDBENCH_CACHE_DIR": str(tmp_path / "cache")}  # fmt: skip
    url_args: list[str] = []
    if given == "--base-url":
        url_args = ["--base-url", url]
    else:
        env["UMLS_BASE_URL"] = url
    message = (
        f"--base-url {shown!r} is not a UTS REST root: it must not hold a query, a fragment or "
        "a user name"
    )
    commands = {
        "regenerate": ["regenerate", str(mini), "--out", str(tmp_path / "out")],
        "doctor": ["doctor", str(mini)],
        "umls": ["umls", "atoms", "C9000001", "--umls-release", "2099AA"],
    }
    texts = {}
    for name, args in commands.items():
        for as_json in ([], ["--json"]):
            monkeypatch.setattr(secret, "_SECRETS", set())  # as in a fresh process
            result = CliRunner().invoke(app, [*args, *url_args, *as_json], env=env)
            texts[f"{name}{as_json} stdout"] = result.stdout
            texts[f"{name}{as_json} stderr"] = result.stderr
            if name == "doctor" and not key_set:  # the probe is not sent, the URL not checked
                assert result.exit_code == 3, result.stderr
                continue
            assert result.exit_code == 2, result.stderr
            if name == "doctor":
                checks = {c["name"]: c for c in json.loads(result.stdout)["checks"]} if as_json \
                    else {}  # fmt: skip
                if as_json:
                    assert checks["uts"]["message"] == message
                else:
                    assert f"FAIL  uts         {message}" in result.stderr.splitlines()
            elif as_json:
                assert json.loads(result.stdout)["message"] == message
            else:
                assert f"error: {message}" in result.stderr.splitlines()
    assert find_secret(CANARY_KEY, texts=texts, folders=[tmp_path]) == []
    assert not (tmp_path / "out").exists() and not (tmp_path / "cache").exists()


def test_a_key_in_the_base_url_of_a_fresh_process_is_never_shown(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("UMLS_")}
    env.update(UMLS_API_KEY=CANARY_KEY, TEMPMEDBENCH_CACHE_DIR=str(tmp_path / "cache"))
    url = f"https://{CANARY_KEY}@uts.example/rest"
    done = subprocess.run(
        [sys.executable, "-m", "tempmedbench_synonyms", "regenerate", str(MINI), "--base-url", url,
         "--out", str(tmp_path / "out"), "--json"],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    message = (
        "--base-url 'https://***@uts.example/rest' is not a UTS REST root: it must not hold a "
        "query, a fragment or a user name"
    )
    assert (done.returncode, json.loads(done.stdout)["message"]) == (2, message)
    assert f"error: {message}" in done.stderr.splitlines()
    assert find_secret(CANARY_KEY, texts={"stdout": done.stdout, "stderr": done.stderr},
                       folders=[tmp_path]) == []  # fmt: skip


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        (
            f"http://{CANARY_KEY}.example/rest",
            "plain http would send the API key in clear; use https://",
        ),
        (
            f"https://uts.example:{CANARY_KEY}/rest",
            "it cannot be parsed (Port could not be cast to integer value as '***')",
        ),
    ],
    ids=["host", "port"],
)
def test_a_key_pasted_as_the_host_or_port_of_the_base_url_is_never_shown(
    mini: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str, problem: str
) -> None:
    """A key pasted where no part of a URL can be masked by its place (the host, the port) is
    masked because the key is read before the URL is checked: regenerate, umls and the Python
    API checked the URL first, and printed it, key and all."""
    env = {"UMLS_API_KEY": CANARY_KEY, "UMLS_API_KEY_FILE": None, "UMLS_BASE_URL": None,
           "NO_COLOR": "1", "TEMPMEDBENCH_CACHE_DIR": str(tmp_path / "cache")}  # fmt: skip
    shown = url.replace(CANARY_KEY, "***")
    message = f"--base-url {shown!r} is not a UTS REST root: {problem}"
    commands = {
        "regenerate": ["regenerate", str(mini), "--out", str(tmp_path / "out")],
        "umls": ["umls", "atoms", "C9000001", "--umls-release", "2099AA"],
    }
    texts = _refused_with_the_message(commands, url, env, message, monkeypatch)
    from tempmedbench_synonyms import BadInputError, Umls, regenerate

    for key, value in env.items():
        if value is None:
            monkeypatch.delenv(key, raising=False)
        else:
            monkeypatch.setenv(key, value)
    monkeypatch.setattr(secret, "_SECRETS", set())
    with pytest.raises(BadInputError) as raised:
        regenerate(mini, out=tmp_path / "out", base_url=url)
    assert str(raised.value) == message
    monkeypatch.setattr(secret, "_SECRETS", set())
    with pytest.raises(BadInputError) as raised:
        Umls(base_url=url)
    assert str(raised.value) == message.replace("--base-url", "base_url")  # Python's words
    assert find_secret(CANARY_KEY, texts=texts, folders=[tmp_path]) == []
    assert not (tmp_path / "out").exists() and not (tmp_path / "cache").exists()


def _key_anywhere(texts: dict[str, str], folder: Path) -> list[str]:
    """Where the canary key shows, in any case (a host name comes back lower-cased): the labels
    of ``texts`` and the files (names and bytes) under ``folder`` that hold it."""
    key = CANARY_KEY.lower()
    found = [label for label, text in texts.items() if key in text.lower()]
    for path in sorted(folder.rglob("*")):
        if key in str(path).lower() or (
            path.is_file() and key.encode() in path.read_bytes().lower()
        ):
            found.append(str(path))
    return found


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (f"https://{CANARY_KEY}/rest", "https://***/rest"),
        (f"https://{CANARY_KEY.lower()}.uts.example/rest", "https://***.uts.example/rest"),
        (
            f"https://uts.{CANARY_KEY.upper()}.example:8443/rest",
            "https://uts.***.example:8443/rest",
        ),
        # Percent-encoded (once, twice), full-width (NFKC) or with a soft hyphen (dropped by
        # IDNA): requests and urllib3 resolve the decoded, IDNA-encoded name.
        (f"https://{CANARY_KEY.replace('-', '%2d', 1)}/rest", "https://***/rest"),
        (f"https://uts.{CANARY_KEY.replace('-', '%252D')}.example/rest", "https://***/rest"),
        (f"https://\uff23{CANARY_KEY[1:]}/rest", "https://***/rest"),
        (f"https://{CANARY_KEY[:3]}\u00ad{CANARY_KEY[3:]}/rest", "https://***/rest"),
    ],
    ids=["host", "label-lower", "label-upper", "encoded", "encoded-twice", "nfkc", "idna"],
)
def test_a_key_pasted_as_the_https_host_is_refused_before_a_name_is_resolved(
    mini: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str, shown: str
) -> None:
    """trust 22: it became a rate-state file name and a DNS lookup, and was shown lower-cased
    (masking was case-sensitive). Now bad input, masked in any case, before a state path is
    made or a name is looked up."""
    looked_up: list[object] = []

    def no_lookup(host: object, *args: object, **kwargs: object) -> object:
        looked_up.append(host)
        raise OSError("no name is looked up in this test")

    monkeypatch.setattr(socket, "getaddrinfo", no_lookup)
    env = {"UMLS_API_KEY": CANARY_KEY, "UMLS_API_KEY_FILE": None, "UMLS_BASE_URL": None,
           "NO_COLOR": "1", "TEMPMEDBENCH_CACHE_DIR": str(tmp_path / "cache"),
           "TEMPMEDBENCH_STATE_DIR": str(tmp_path / "state")}  # fmt: skip
    message = f"--base-url {shown!r} is not a UTS REST root: it holds the API key"
    commands = {
        "regenerate": ["regenerate", str(mini), "--out", str(tmp_path / "out")],
        "umls": ["umls", "concept", "C9000001", "--umls-release", "2099AA"],
    }
    texts = _refused_with_the_message(commands, url, env, message, monkeypatch)
    doctor = CliRunner().invoke(app, ["doctor", "--base-url", url, "--json"], env=env)
    texts["doctor"] = doctor.stdout + doctor.stderr
    checks = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert (checks["uts"]["ok"], checks["uts"]["message"]) == (False, message)
    assert (checks["rate_state"]["ok"], checks["rate_state"]["message"]) == (False, message)
    assert looked_up == []
    assert _key_anywhere(texts, tmp_path) == []
    assert not (tmp_path / "state").exists() and not (tmp_path / "cache").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["search", CANARY_KEY],
        ["search", f"my {CANARY_KEY.lower()} term"],
        ["cuis", "SNOMEDCT_US", CANARY_KEY],
        ["source", "SNOMEDCT_US", CANARY_KEY.upper()],
    ],
    ids=["term", "in-a-term-lower", "code", "source-code-upper"],
)
def test_a_lookup_input_holding_the_key_is_bad_input_never_sent_nor_cached(
    mini_uts: FakeUtsServer, tmp_path: Path, args: list[str]
) -> None:
    """trust 23, client I1: the output masked it, but the cache entry's header held it in plain
    text. Now the input's own bad input, masked, before anything is asked or cached."""
    env = {"UMLS_API_KEY": CANARY_KEY, "UMLS_API_KEY_FILE": None, "NO_COLOR": "1",
           "UMLS_BASE_URL": mini_uts.base_url, "TEMPMEDBENCH_CACHE_DIR": str(tmp_path / "cache"),
           "TEMPMEDBENCH_STATE_DIR": str(tmp_path / "state")}  # fmt: skip
    result = CliRunner().invoke(app, ["umls", *args, "--umls-release", "2099AA", "--json"],
                                env=env)  # fmt: skip
    assert result.exit_code == 2, result.stderr
    answer = json.loads(result.stdout)
    assert (answer["outcome"], answer["message"]) == (
        "bad_input",
        "the input holds the API key, which this tool never sends as a term or code nor "
        "stores in its cache",
    )
    assert answer["hint"] == (
        "give the term or code itself; the key belongs in UMLS_API_KEY or a key file "
        "(--api-key-file)"
    )
    assert mini_uts.fake.count() == 0
    assert _key_anywhere({"stdout": result.stdout, "stderr": result.stderr}, tmp_path) == []


def test_a_file_line_holding_the_key_is_bad_input_in_the_plan_and_the_estimate(
    mini_uts: FakeUtsServer, tmp_path: Path
) -> None:
    """review R2: a line holding the key was counted as answered by the cache (the dry run's
    plan said cached 1 with no cache at all; a run's estimate said so too) before its answer
    said bad input. Now it is bad input at the input check, as a malformed CUI is: in the plan,
    the estimate and the answers, never sent nor cached."""
    path = tmp_path / "in" / "terms.txt"  # the one file that holds the key
    path.parent.mkdir()
    path.write_text(f"{CANARY_KEY}\nZephyr fever\n", encoding="utf-8")
    env = {"UMLS_API_KEY": CANARY_KEY, "UMLS_API_KEY_FILE": None, "NO_COLOR": "1",
           "UMLS_BASE_URL": mini_uts.base_url, "TEMPMEDBENCH_CACHE_DIR": str(tmp_path / "cache"),
           "TEMPMEDBENCH_STATE_DIR": str(tmp_path / "state")}  # fmt: skip
    args = ["umls", "search", "--file", str(path), "--umls-release", "2099AA", "--json"]
    plan = CliRunner().invoke(app, [*args, "--dry-run"], env=env)
    assert plan.exit_code == 0, plan.stderr
    assert json.loads(plan.stdout)["plan"] == {
        "inputs": 2, "bad_input": 1, "cached": 0, "to_fetch": 1, "requests": 1, "seconds": 0.1,
    }  # fmt: skip
    assert mini_uts.fake.count() == 0
    result = CliRunner().invoke(app, args, env=env)
    assert result.exit_code == 2, result.stderr
    bad, found = (json.loads(line) for line in result.stdout.splitlines())
    assert (bad["outcome"], bad["message"]) == (
        "bad_input",
        "the input holds the API key, which this tool never sends as a term or code nor "
        "stores in its cache",
    )
    assert (found["input"], found["outcome"]) == ("Zephyr fever", "found")
    # as for a malformed CUI: the estimate counts the inputs that can be asked
    assert result.stderr.splitlines()[0] == (
        "1 input: 0 answered by the cache, 1 to fetch, about 1 s at 15 requests a second"
    )
    assert [dict(s.params)["string"] for s in mini_uts.fake.seen] == ["Zephyr fever"]
    texts = {"plan": plan.stdout + plan.stderr, "run": result.stdout + result.stderr}
    assert (tmp_path / "cache").is_dir() and (tmp_path / "state").is_dir()
    assert _key_anywhere(texts, tmp_path / "cache") == []
    assert _key_anywhere({}, tmp_path / "state") == []


def _refused_with_the_message(
    commands: dict[str, list[str]],
    url: str,
    env: dict[str, str | None],
    message: str,
    monkeypatch: pytest.MonkeyPatch,
) -> dict[str, str]:
    """Each command run with ``--base-url url``, with and without ``--json``: exit 2 saying
    ``message`` on stderr (and as the JSON message); what each printed, by command."""
    texts = {}
    for name, args in commands.items():
        for as_json in ([], ["--json"]):
            monkeypatch.setattr(secret, "_SECRETS", set())  # as in a fresh process
            result = CliRunner().invoke(app, [*args, "--base-url", url, *as_json], env=env)
            texts[f"{name}{as_json} stdout"] = result.stdout
            texts[f"{name}{as_json} stderr"] = result.stderr
            assert result.exit_code == 2, result.stderr
            assert f"error: {message}" in result.stderr.splitlines()
            if as_json:
                assert json.loads(result.stdout)["message"] == message
    return texts
