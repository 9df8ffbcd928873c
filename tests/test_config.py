"""config: where the API key and the cache folder come from, and how the key is kept hidden."""

from __future__ import annotations

import logging
import os
import pickle
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest.mock import patch

import pytest

from helpers import tool_env
from tempmedbench_synonyms import config, constants, secret
from tempmedbench_synonyms.about import version_text
from tempmedbench_synonyms.config import resolve_cache_dir, state_folder
from tempmedbench_synonyms.constants import ENV_PREFIXES
from tempmedbench_synonyms.errors import BadInputError
from tempmedbench_synonyms.secret import (
    ApiKey,
    clean_text,
    looks_like_uts_key,
    missing_key,
    read_api_key,
    redact,
)
from tempmedbench_synonyms.testing import CANARY_KEY
from tempmedbench_synonyms.uts.options import check_base_url


def _key_file(tmp_path: Path, text: str, mode: int = 0o600) -> Path:
    path = tmp_path / "key"
    path.write_text(text, encoding="utf-8")
    path.chmod(mode)
    return path


def test_the_file_wins_over_the_environment_and_is_stripped(tmp_path: Path) -> None:
    with tool_env({"UMLS_API_KEY": "env"}):
        key = read_api_key(_key_file(tmp_path, f"  {CANARY_KEY}\n"))
    assert key is not None and key.reveal() == CANARY_KEY


def test_the_environment_alone_and_blank_means_none() -> None:
    with tool_env({"UMLS_API_KEY": f" {CANARY_KEY} "}):
        key = read_api_key(None)
    assert key is not None and key.reveal() == CANARY_KEY
    with tool_env({"UMLS_API_KEY": "  "}):
        assert read_api_key(None) is None
    with tool_env():
        assert read_api_key(None) is None


def test_umls_api_key_file_is_the_environment_twin_of_the_flag(tmp_path: Path) -> None:
    path = _key_file(tmp_path, f"{CANARY_KEY}\n")
    other = tmp_path / "other"
    other.write_text("flag-key-0001", encoding="utf-8")
    other.chmod(0o600)
    env = {"UMLS_API_KEY_FILE": f" {path} ", "UMLS_API_KEY": "from-the-variable"}
    # the file the variable names wins over UMLS_API_KEY, as --api-key-file does ...
    with tool_env(env):
        key = read_api_key(None)
    assert key is not None and key.reveal() == CANARY_KEY
    # ... and the flag wins over both
    with tool_env(env):
        key = read_api_key(other)
    assert key is not None and key.reveal() == "flag-key-0001"
    # a blank variable is no file at all
    with tool_env({"UMLS_API_KEY_FILE": " ", "UMLS_API_KEY": "variable-key-0002"}):
        key = read_api_key(None)
    assert key is not None and key.reveal() == "variable-key-0002"


def test_a_key_file_named_by_the_environment_is_checked_like_the_flags(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    loose = _key_file(tmp_path, CANARY_KEY, mode=0o644)
    with caplog.at_level(logging.WARNING, logger="tempmedbench_synonyms.config"):
        with tool_env({"UMLS_API_KEY_FILE": str(loose)}):
            key = read_api_key(None)
    assert key is not None and key.reveal() == CANARY_KEY
    assert [r.getMessage() for r in caplog.records] == [
        f"the API key file {loose} can be read by other users; chmod 600 it"
    ]
    missing = tmp_path / "nowhere"
    env = {"UMLS_API_KEY_FILE": str(missing), "UMLS_API_KEY": "fallback-key-0003"}
    with tool_env(env), pytest.raises(BadInputError) as info:
        read_api_key(None)
    assert str(info.value) == f"{missing}: cannot read the API key file: No such file or directory"


def test_a_key_file_others_can_read_is_used_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _key_file(tmp_path, CANARY_KEY, mode=0o644)
    with caplog.at_level(logging.WARNING, logger="tempmedbench_synonyms.config"):
        key = read_api_key(path)
    assert key is not None and key.reveal() == CANARY_KEY
    assert [r.getMessage() for r in caplog.records] == [
        f"the API key file {path} can be read by other users; chmod 600 it"
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "the API key file is empty"),
        (" \n\t", "the API key file is empty"),
        ("two words", "the API key file holds more than one word; it should hold only the key"),
        # a UMLS key is 36 characters: a key file of megabytes is read no further than 4 KiB
        ("k" * 4097, "the API key file is larger than 4096 bytes"),
    ],
)
def test_an_unusable_key_file_is_bad_input_never_a_fallback(
    tmp_path: Path, text: str, message: str
) -> None:
    path = _key_file(tmp_path, text)
    with tool_env({"UMLS_API_KEY": "would-be-fallback"}), pytest.raises(BadInputError) as info:
        read_api_key(path)
    assert str(info.value) == f"{path}: {message}"
    if len(text) > 4096:  # files.read_regular's words, and what the file should hold
        assert info.value.hint == "it should hold only your UMLS API key"
    assert "would-be-fallback" not in str(info.value) + str(info.value.hint)


def test_the_key_never_shows_in_repr_or_str() -> None:
    key = ApiKey(CANARY_KEY)
    assert CANARY_KEY not in repr(key) + str(key) + repr([key]) + f"{key}"


def test_the_key_cannot_be_pickled() -> None:
    with pytest.raises(TypeError, match="an ApiKey cannot be pickled"):
        pickle.dumps(ApiKey(CANARY_KEY))


def test_redact_hides_the_parameter_and_every_form_of_the_key() -> None:
    key = ApiKey("s3cr/et key")
    text = "GET /x?apiKey=s3cr%2Fet%20key&y=1 s3cr/et key s3cr%2Fet%20key s3cr/et%20key"
    assert redact(text, key) == "GET /x?apiKey=***&y=1 *** *** ***"
    assert redact("APIKEY=abc#frag", None) == "APIKEY=***#frag"


def test_a_key_read_after_a_text_was_redacted_with_none_read_is_masked_from_then_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No key read yet is no secret work, never a memo of it: a key read later (the
    environment, a key file, a Umls) is masked in every text from then on."""
    monkeypatch.setattr(secret, "_SECRETS", set())  # as in a fresh process
    text = f"x {CANARY_KEY} y"
    assert (redact(text), secret.holds_secret(text), secret.may_hold_secret(text)) == (
        text, False, False
    )  # fmt: skip
    monkeypatch.setenv(constants.API_KEY_ENV, CANARY_KEY)
    monkeypatch.delenv(constants.API_KEY_FILE_ENV, raising=False)
    assert read_api_key(None) is not None
    assert (redact(text), secret.holds_secret(text), secret.may_hold_secret(text)) == (
        "x *** y", True, True
    )  # fmt: skip


class _ReadMeanwhile(set[str]):
    """The keys read so far, as another thread leaves them: a key read while they are walked."""

    def __iter__(self) -> Iterator[str]:
        for value in set.__iter__(self):
            self.add("another-key-read-meanwhile")
            yield value


def test_a_key_read_by_another_thread_while_the_keys_are_walked_is_no_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # walking the set itself raised "Set changed size during iteration" in redact
    monkeypatch.setattr(secret, "_SECRETS", _ReadMeanwhile({CANARY_KEY}))
    assert redact(f"x {CANARY_KEY} y") == "x *** y"


def test_a_missing_key_is_not_authorised_with_the_way_to_give_one() -> None:
    err = missing_key()
    assert (err.exit_code, err.outcome) == (3, "not_authorised")
    assert str(err) == (
        "no UMLS API key: the cache does not hold every answer, so UMLS must be asked, and "
        "neither UMLS_API_KEY, UMLS_API_KEY_FILE nor --api-key-file gives a key"
    )
    assert err.hint is not None and "a file named by --api-key-file or UMLS_API_KEY_FILE" in (
        err.hint
    )


def test_the_cache_folder_comes_from_the_flag_then_the_environment(tmp_path: Path) -> None:
    env = {"TEMPMEDBENCH_CACHE_DIR": str(tmp_path / "from-env")}
    with tool_env(env):
        assert resolve_cache_dir(tmp_path / "flag") == tmp_path / "flag"
        assert resolve_cache_dir(None) == tmp_path / "from-env"
    home = Path("~").expanduser()
    assert resolve_cache_dir(Path("~/c")) == home / "c"
    with tool_env({"TEMPMEDBENCH_CACHE_DIR": " "}):
        default = resolve_cache_dir(None)
    assert default.name == "tempmedbench-synonyms"  # platformdirs' user cache folder


@pytest.mark.parametrize(
    "url",
    ["https://uts-ws.nlm.nih.gov/rest", "http://127.0.0.1:8080/rest", "http://[::1]/rest",
     "http://localhost/rest", "https://mirror.example:8443/uts/rest"],
)  # fmt: skip
def test_base_urls_that_can_be_a_uts_root(url: str) -> None:
    assert check_base_url(url) == url


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("http://[::1/rest", "it cannot be parsed (Invalid IPv6 URL)"),
        ("https://uts:99999/rest", "it cannot be parsed (Port out of range 0-65535)"),
        ("uts-ws.nlm.nih.gov/rest", "it must start with https://"),
        ("ftp://uts/rest", "it must start with https://"),
        ("https:///rest", "it has no host"),
        ("https://uts/rest?apiKey=s3cret", "it must not hold a query, a fragment or a user name"),
        ("https://me@uts/rest", "it must not hold a query, a fragment or a user name"),
        ("http://uts-ws.nlm.nih.gov/rest", "plain http would send the API key in clear; use https://"),
    ],
)  # fmt: skip
def test_base_urls_that_cannot_be_a_uts_root(url: str, problem: str) -> None:
    with pytest.raises(BadInputError) as info:
        check_base_url(url)
    # A user name, password, query or fragment may hold a key: never shown, even unread.
    shown = url.replace("?apiKey=s3cret", "?***").replace("me@", "***@")
    assert str(info.value) == f"--base-url {shown!r} is not a UTS REST root: {problem}"
    assert info.value.hint == (
        "the default is https://uts-ws.nlm.nih.gov/rest; plain http is allowed only to this "
        "machine (127.0.0.1), for a test server"
    )


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("Service \x1b[31mUnavailable\x1b[0m", "Service Unavailable"),  # CSI: colours
        ("a\x1b[2J\x1b[Hb", "ab"),  # clear the screen, cursor home
        ("x\x1b]0;pwned\x07y", "xy"),  # OSC: window title, ended by BEL
        ("x\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\y", "xlinky"),  # OSC 8 hyperlink, ST
        ("a\x9b2Jb\x9d0;t\x9cc", "abc"),  # the C1 forms of CSI and OSC
        ("bell\x07nul\x00del\x7fesc\x1bcz", "bellnuldelescz"),  # lone controls, ESC c
        ("one\ttwo\nthree\rfour", "one two three four"),
        ("half \ud800 pair", "half \ufffd pair"),
        ("fièvre – ſ", "fièvre – ſ"),  # text is left alone
        ("zero\u200bwidth\u2028line", "zero\u200bwidth\u2028line"),  # not printable, no control
        (f"printable {CANARY_KEY} text", "printable *** text"),  # redacted all the same
        (f"apiKey={CANARY_KEY}&x=1", "apiKey=***&x=1"),
        (f"CANARY\x1b[0m{CANARY_KEY[6:]}", "***"),  # redacted after the escapes are gone
    ],
)
def test_clean_text_strips_escapes_and_controls_then_redacts(text: str, shown: str) -> None:
    assert clean_text(text, ApiKey(CANARY_KEY)) == shown


def test_the_tools_variables_are_every_umls_and_tempmedbench_one() -> None:
    """What a fake UTS's environment leaves aside: every variable the tool reads, and any other
    of the two families (a later version's, a typo), but nothing else."""
    environ = {
        "PATH": "/bin", "UMLS_API_KEY_FILE": "/home/me/key", "UMLS_BASE_URL": "https://x",
        "TEMPMEDBENCH_CACHE_DIR": "/c", "TEMPMEDBENCH_FUTURE": "1", "NO_COLOR": "1",
        "HOME": "/home/me", "MY_UMLS_THING": "kept", "umls_api_key": "kept (not read)",
    }  # fmt: skip
    with patch.dict(os.environ, environ, clear=True):
        assert config.tool_variables() == [
            "TEMPMEDBENCH_CACHE_DIR", "TEMPMEDBENCH_FUTURE", "UMLS_API_KEY_FILE", "UMLS_BASE_URL",
        ]  # fmt: skip
        assert config.without_tool_variables() == {
            "PATH": "/bin", "NO_COLOR": "1", "HOME": "/home/me", "MY_UMLS_THING": "kept",
            "umls_api_key": "kept (not read)",
        }  # fmt: skip
    # every variable the tool reads (its *_ENV names) but NO_COLOR and HOME is of a family
    own = [
        v
        for k, v in vars(constants).items()
        if k.endswith("_ENV") and v not in ("NO_COLOR", "HOME")
    ]
    assert len(own) == 8 and all(name.startswith(ENV_PREFIXES) for name in own)


# -- no home folder (issue 17 item 9): docker run --user N, some CI sandboxes ------------------

NO_HOME_HINT = (
    "set HOME to a folder you own, or TEMPMEDBENCH_CACHE_DIR and TEMPMEDBENCH_STATE_DIR to "
    "folders you can write in; in a container run as a user with no passwd entry, add "
    "-e HOME=/tmp (or a folder you mount)"
)


@pytest.fixture
def no_home(monkeypatch: pytest.MonkeyPatch) -> None:
    """No HOME, no XDG folders, and no passwd entry for this user (simulated: the tests may run
    as a user who has one, as root does)."""
    pwd = pytest.importorskip("pwd")
    for name in ("HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
        monkeypatch.delenv(name, raising=False)

    def no_entry(uid: int) -> Any:
        raise KeyError(f"getpwuid(): uid not found: {uid}")

    monkeypatch.setattr(pwd, "getpwuid", no_entry)


@pytest.mark.usefixtures("no_home")
def test_without_a_home_folder_the_default_folders_are_bad_input_naming_the_fix() -> None:
    for kind, find in (("cache", lambda: resolve_cache_dir(None)), ("state", state_folder)):
        with tool_env(), pytest.raises(BadInputError) as info:
            find()
        assert str(info.value) == (
            f"the default {kind} folder is in the home folder, and there is none: HOME is not "
            f"set, and user id {os.getuid()} has no home folder in the password database"
        )
        assert info.value.hint == NO_HOME_HINT
    # Named folders need no home folder, unless they start with ~.
    env = {"TEMPMEDBENCH_CACHE_DIR": "/c", "TEMPMEDBENCH_STATE_DIR": "/s"}
    with tool_env(env):
        assert (resolve_cache_dir(None), state_folder()) == (Path("/c"), Path("/s"))
    with pytest.raises(BadInputError) as info:
        resolve_cache_dir(Path("~/c"))
    assert str(info.value) == (
        "--cache-dir starts with ~, and there is no home folder: HOME is not set and the user "
        "has no home folder in the password database"
    )
    assert info.value.hint == "give the whole path, or set HOME to a folder you own"


@pytest.mark.usefixtures("no_home")
def test_version_never_fails_and_says_why_there_is_no_cache_folder(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("TEMPMEDBENCH_CACHE_DIR", raising=False)
    last = version_text().splitlines()[-1]
    assert last == (
        "cache folder: none: the default cache folder is in the home folder, and there is "
        f"none: HOME is not set, and user id {os.getuid()} has no home folder in the password "
        f"database; {NO_HOME_HINT}"
    )


def test_version_says_which_inflate_reads_compressed_files(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Both ways, on any platform: isal where it is in use (here a stand-in module and its
    version), zlib where isal has no wheels."""
    import types
    import zlib

    from tempmedbench_synonyms import about, zips

    monkeypatch.setattr(zips, "inflate", types.ModuleType("isal_zlib"))
    monkeypatch.setattr(about.metadata, "version", {"isal": "1.2.3"}.get)
    assert version_text().splitlines()[3] == "inflate: isal 1.2.3 (ISA-L)"
    monkeypatch.setattr(zips, "inflate", zlib)  # a platform without isal's wheels
    assert version_text().splitlines()[3] == (
        "inflate: zlib (the standard library; isal is not in use here)"
    )


def test_a_relative_home_is_no_home_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    """platformdirs takes a relative HOME for unset; without a passwd entry, no folder."""
    pwd = pytest.importorskip("pwd")
    monkeypatch.setenv("HOME", "relative")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setattr(pwd, "getpwuid", lambda uid: (_ for _ in ()).throw(KeyError(uid)))
    with pytest.raises(BadInputError) as info:
        resolve_cache_dir(None)
    assert str(info.value).startswith(
        "the default cache folder is in the home folder, and there is none: HOME='relative' is "
        "not an absolute path, and user id "
    )


# -- the key file (issue 17 item 10): a BOM, invisible and control characters ------------------


def test_a_bom_is_left_out_of_the_key_with_a_note(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _key_file(tmp_path, f"\ufeff{CANARY_KEY}\r\n")  # Notepad's "UTF-8"
    with caplog.at_level(logging.WARNING, logger="tempmedbench_synonyms"):
        key = read_api_key(path)
    assert key is not None and key.reveal() == CANARY_KEY
    note = (
        "starts with a byte order mark (BOM, as Notepad's UTF-8 writes it), which is not part "
        "of the key and was left out: save the key file as UTF-8 without a BOM"
    )
    assert key.notes == (note,)
    assert [r.getMessage() for r in caplog.records] == [f"{path} {note}"]
    with tool_env({"UMLS_API_KEY": f"\ufeff{CANARY_KEY}"}):  # $(cat key.txt)
        key = read_api_key(None)
    assert key is not None and key.reveal() == CANARY_KEY


#: The character just after the key, counted from 1.
AFTER = len(CANARY_KEY) + 1


@pytest.mark.parametrize(
    ("text", "line", "shown"),
    [
        (f"{CANARY_KEY[:9]}\u200b{CANARY_KEY[9:]}", 1, "U+200B (ZERO WIDTH SPACE) at character 10"),
        (f"\n{CANARY_KEY}\u200d\n", 2, f"U+200D (ZERO WIDTH JOINER) at character {AFTER}"),
        (f"{CANARY_KEY}\x00\n", 1, f"U+0000 (a control character) at character {AFTER}"),
        (f"\x1b[31m{CANARY_KEY}", 1, "U+001B (a control character) at character 1"),
        (f"{CANARY_KEY}\u00a0", 1, f"U+00A0 (NO-BREAK SPACE) at character {AFTER}"),
        (f"x\ufeff{CANARY_KEY}", 1, "U+FEFF (ZERO WIDTH NO-BREAK SPACE) at character 2"),
    ],
)  # fmt: skip
def test_an_invisible_or_control_character_is_bad_input_naming_the_line_not_the_key(
    tmp_path: Path, text: str, line: int, shown: str
) -> None:
    path = _key_file(tmp_path, text)
    with pytest.raises(BadInputError) as info:
        read_api_key(path)
    assert str(info.value) == (
        f"{path}, line {line}: the API key file holds {shown}: an invisible or control "
        "character, which no API key has"
    )
    assert info.value.hint == (
        "copy the key again from your UTS profile (https://uts.nlm.nih.gov/uts/profile) and "
        "keep only the key, as plain text (it often comes with such a character when copied "
        "from a web page or a document)"
    )
    assert CANARY_KEY[:9] not in str(info.value) + str(info.value.hint)


def test_the_key_variable_is_checked_alike() -> None:
    with tool_env({"UMLS_API_KEY": f"{CANARY_KEY}\u200b"}), pytest.raises(BadInputError) as info:
        read_api_key(None)
    assert str(info.value) == (
        f"UMLS_API_KEY holds U+200B (ZERO WIDTH SPACE) at character {len(CANARY_KEY) + 1}: an "
        "invisible or control character, which no API key has"
    )
    env = {"UMLS_API_KEY": f"{CANARY_KEY} {CANARY_KEY}"}
    with tool_env(env), pytest.raises(BadInputError) as info:
        read_api_key(None)
    assert str(info.value) == ("UMLS_API_KEY holds more than one word; it should hold only the key")
    assert CANARY_KEY not in str(info.value) + str(info.value.hint)


def test_a_uts_key_looks_like_a_uuid() -> None:
    assert looks_like_uts_key(ApiKey("0badc0de-0000-4000-8000-000000000000"))
    assert looks_like_uts_key(ApiKey("0BADC0DE-0000-4000-8000-00000000000A"))
    assert not looks_like_uts_key(ApiKey(CANARY_KEY))
    assert not looks_like_uts_key(ApiKey("0badc0de-0000-4000-8000-000000000000x"))
