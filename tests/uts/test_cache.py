"""The persistent answer cache: keys, atomic 0600 files, corrupt entries, `current`, info/clear."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers import BASE, tool_env
from tempmedbench_synonyms.cli import app
from tempmedbench_synonyms.config import resolve_cache_dir
from tempmedbench_synonyms.errors import UntrustedError
from tempmedbench_synonyms.testing import VirtualTime
from tempmedbench_synonyms.uts import cache as cache_module
from tempmedbench_synonyms.uts.cache import (
    LAYOUT,
    CacheInfo,
    CacheKey,
    ResponseCache,
    cache_info,
    clear_cache,
    namespace_of,
)

KEY = CacheKey.make(
    "2099AA",
    "/content/2099AA/CUI/C9000001/atoms",
    {"sabs": "MTH", "pageSize": "200", "language": "ENG"},
)


EMPTY_LIST_SHA256 = "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_keys_ignore_the_api_key_and_the_page_and_sort_parameters() -> None:
    a = CacheKey.make("2099AA", "/p", {"b": "2", "a": "1", "apiKey": "SECRET", "pageNumber": "3"})
    b = CacheKey.make("2099AA", "/p", {"a": "1", "b": "2"})
    assert a == b
    assert a.params == (("a", "1"), ("b", "2"))
    assert a.digest == b.digest
    assert "SECRET" not in str(a.as_json())
    assert a.describe() == "/p?a=1&b=2"


def test_a_keys_digest_is_the_sha256_of_its_compact_json() -> None:
    """An entry's file name (the uts-v1 layout): a cache written by an earlier version is found
    only while these bytes stay the same. Written by hand: compact, UTF-8, not ASCII-escaped."""
    key = CacheKey.make("2099AA", "/search/2099AA", {"string": "fièvre", "apiKey": "SECRET"})
    canonical = '["2099AA","/search/2099AA",[["string","fièvre"]]]'
    assert key.digest == hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def test_keys_differ_by_release_path_and_parameters() -> None:
    base = CacheKey.make("2099AA", "/p", {"a": "1"})
    others = [
        CacheKey.make("2099AB", "/p", {"a": "1"}),
        CacheKey.make("2099AA", "/q", {"a": "1"}),
        CacheKey.make("2099AA", "/p", {"a": "2"}),
        CacheKey.make("2099AA", "/p", {}),
    ]
    assert len({base.digest, *(k.digest for k in others)}) == 5


def test_put_then_get_round_trips_200_and_404(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path, BASE, clock=lambda: 123.0)
    assert cache.get(KEY) is None
    cache.put(KEY, 200, [{"ui": "A90000001", "name": "Invented café"}])
    entry = cache.get(KEY)
    assert entry is not None
    assert (entry.status, entry.found, entry.stored_at) == (200, True, 123.0)
    assert entry.result == [{"ui": "A90000001", "name": "Invented café"}]
    missing = CacheKey.make("2099AA", "/content/2099AA/AUI/A99999999")
    cache.put(missing, 404, None)
    nf = cache.get(missing)
    assert nf is not None and (nf.status, nf.found, nf.result) == (404, False, None)


def test_entry_file_layout_and_exact_bytes(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path, BASE, clock=lambda: 5.0)
    cache.put(KEY, 200, [])
    path = tmp_path / LAYOUT / namespace_of(BASE) / "2099AA" / f"{KEY.digest}.json"
    # A header line holding the body's size and SHA-256 (of b"[]"), then the body.
    assert hashlib.sha256(b"[]").hexdigest() == EMPTY_LIST_SHA256
    assert path.read_bytes() == (
        b'{"format":2,"key":["2099AA","/content/2099AA/CUI/C9000001/atoms",'
        b'[["language","ENG"],["pageSize","200"],["sabs","MTH"]]],'
        b'"status":200,"stored_at":5.0,"size":2,"sha256":"' + EMPTY_LIST_SHA256.encode() + b'"}\n'
        b"[]"
    )
    assert json.loads((path.parent.parent / "base.json").read_text()) == {
        "base_url": BASE,
        "layout": LAYOUT,
    }


def test_files_are_0600_and_folders_0700(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        root = tmp_path / "new" / "cache"
        cache = ResponseCache(root, BASE)
        cache.put(KEY, 200, [])
        cache.set_current_release("2099AA")
    finally:
        os.umask(old)
    folders = [root, root / LAYOUT, cache.folder, cache.folder / "2099AA", tmp_path / "new"]
    assert [mode(f) for f in folders] == [0o700] * 5
    files = sorted(p.relative_to(cache.folder).as_posix() for p in root.rglob("*") if p.is_file())
    entry = f"2099AA/{KEY.digest}.json"
    token = f"2099AA/{cache_module.GENERATION_FILE}"
    assert files == [token, entry, "base.json", "current.json"]
    assert [mode(cache.folder / f) for f in files] == [0o600] * 4


def test_folders_come_back_0700_after_a_concurrent_clear_whatever_the_umask(
    tmp_path: Path,
) -> None:
    """Issue 17 item 1: under umask 000 the parents came out 0777, and folders recreated after
    a concurrent ``cache clear`` came back 0755."""
    old = os.umask(0)
    try:
        root = tmp_path / "new" / "cache"
        cache = ResponseCache(root, BASE)
        cache.put(KEY, 200, [])
        clear_cache(root)  # another process clears the cache while this run writes
        cache.put(KEY, 200, [])
        cache.set_current_release("2099AA")
    finally:
        os.umask(old)
    folders = [tmp_path / "new", root, root / LAYOUT, cache.folder, cache.folder / "2099AA"]
    assert [mode(f) for f in folders] == [0o700] * 5
    assert cache.get(KEY) is not None


@pytest.mark.parametrize("where", ["root", "layout", "namespace", "release", "memo"])
def test_a_cache_folder_that_is_not_the_users_own_is_untrusted(tmp_path: Path, where: str) -> None:
    """SPEC section 8, "Shared folders": from the root down, a folder another user owns is bad
    input (exit 2) naming it, whatever is read or written there."""
    cache = ResponseCache(tmp_path / "cache", BASE)
    cache.put(KEY, 200, [])
    version = cache.release_version("2099AA")
    assert version is not None
    cache.save_memo("2099AA", "m", {"x": 1}, release_version=version)
    folder = {
        "root": tmp_path / "cache",
        "layout": tmp_path / "cache" / LAYOUT,
        "namespace": cache.folder,
        "release": cache.folder / "2099AA",
        "memo": cache.folder / ".memo" / "2099AA",
    }[where]
    os.chown(folder, 4242, -1)  # (as root: another user's folder)
    what = "the cache folder" if where == "root" else "a folder of the cache"
    message = (
        f"{folder}: {what} belongs to another user (uid 4242; you are uid {os.getuid()}), so "
        "what it holds cannot be trusted"
    )
    with pytest.raises(UntrustedError) as info:
        fresh = ResponseCache(tmp_path / "cache", BASE)
        fresh.get(KEY)
        fresh.load_memo("2099AA", "m")
    assert (str(info.value), info.value.exit_code) == (message, 2)


KEY_JSON = (
    b'["2099AA","/content/2099AA/CUI/C9000001/atoms",'
    b'[["language","ENG"],["pageSize","200"],["sabs","MTH"]]]'
)


def entry_bytes(body: bytes, *, head: bytes = b"", size: int | None = None) -> bytes:
    """An entry file with a correct SHA-256 of ``body`` (and ``size``, unless given)."""
    size = len(body) if size is None else size
    digest = hashlib.sha256(body).hexdigest().encode()
    head = head or b'"key":' + KEY_JSON + b',"status":200,"stored_at":1'
    return b'{"format":2,' + head + b',"size":%d,"sha256":"%s"}\n' % (size, digest) + body


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"", "it is empty"),  # a power cut after rename without fsync
        (b'{"format":2,"key":', "not JSON: Expecting value: line 1 column 19 (char 18)"),
        (
            b"\xff\xfe not utf-8",
            "not JSON: 'utf-8' codec can't decode byte 0xff in position 0: invalid start byte",
        ),
        (b"[]", "not a cache entry of this version"),
        (b'{"format":99,"size":2,"sha256":"x"}\n[]', "not a cache entry of this version"),
        (b'{"format":2,"key":[]}', "not a cache entry of this version"),  # no body line
        (b'{"format":2,"key":[]}\n[]', "its header has no size and SHA-256 of the body"),
        (
            entry_bytes(b"[]", head=b'"key":["2099AA","/other",[]],"status":200,"stored_at":1'),
            "it holds the answer to another request",
        ),
        (
            entry_bytes(b"[]", head=b'"key":' + KEY_JSON + b',"status":500,"stored_at":1'),
            "not a cache entry of this version",
        ),
        (
            entry_bytes(b"[]", head=b'"key":' + KEY_JSON + b',"status":404,"stored_at":1'),
            "a 'not found' entry with a body",
        ),
        (
            entry_bytes(b"[NaN]"),
            "its body is not strict JSON: NaN is not a JSON value "
            "(RFC 8259 has no NaN or Infinity)",
        ),
        (
            entry_bytes(b"[-Infinity]"),
            "its body is not strict JSON: -Infinity is not a JSON value (RFC 8259 has no NaN or "
            "Infinity)",
        ),
        (
            entry_bytes(b"[1e99999]"),
            "its body is not strict JSON: the number 1e99999 is too large for a 64-bit float",
        ),
        (
            entry_bytes(b'[{"ui":"A1","ui":"A2"}]'),
            "its body is not strict JSON: the key 'ui' appears twice in one object",
        ),
        (
            entry_bytes(b"[]", head=b'"key":' + KEY_JSON + b',"key":[],"status":200,"stored_at":1'),
            "not JSON: the key 'key' appears twice in one object",
        ),
        (entry_bytes(b"[1]")[:-2], "its body is 1 bytes, its header says 3: cut short or edited"),
        (
            entry_bytes(b'["Invented fever"]').replace(b"fever", b"cough"),
            "its body's SHA-256 is "
            + hashlib.sha256(b'["Invented cough"]').hexdigest()
            + ", its header says "
            + hashlib.sha256(b'["Invented fever"]').hexdigest()
            + ": edited or damaged",
        ),
    ],
    ids=[
        "empty",
        "truncated",
        "binary",
        "list",
        "format",
        "no-body",
        "no-hash",
        "other-key",
        "status",
        "404-body",
        "nan",
        "infinity",
        "float-overflow",
        "duplicate-body-key",
        "duplicate-header-key",
        "torn",
        "edited",
    ],
)
def test_a_corrupt_entry_is_a_miss_and_one_warning_naming_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, content: bytes, problem: str
) -> None:
    cache = ResponseCache(tmp_path, BASE)
    cache.put(KEY, 200, [])
    path = next((tmp_path / LAYOUT).rglob(f"{KEY.digest}.json"))
    path.write_bytes(content)
    with caplog.at_level(logging.WARNING, logger="tempmedbench_synonyms.uts.cache"):
        assert cache.get(KEY) is None
    assert [r.getMessage() for r in caplog.records] == [
        f"cache entry {path} is corrupt ({problem}); fetching it again"
    ]
    assert cache.rejections(KEY) == [f"its entry {path} is corrupt ({problem})"]
    cache.put(KEY, 200, ["fresh"])  # the refetched answer replaces it
    entry = cache.get(KEY)
    assert entry is not None and entry.result == ["fresh"]
    assert cache.rejections(KEY) == []


def test_an_entry_edited_by_hand_is_never_trusted(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Changing a name in an entry (what a user might do to "fix" a synonym) makes it a miss,
    even though the file is still a well-formed entry of this version."""
    cache = ResponseCache(tmp_path, BASE)
    cache.put(KEY, 200, [{"ui": "A90000001", "name": "Invented fever"}])
    path = next((tmp_path / LAYOUT).rglob(f"{KEY.digest}.json"))
    edited = path.read_bytes().replace(b"Invented fever", b"Invented fover")
    path.write_bytes(edited)
    with caplog.at_level(logging.WARNING, logger="tempmedbench_synonyms.uts.cache"):
        assert cache.get(KEY) is None
    assert len(caplog.records) == 1
    assert caplog.records[0].getMessage().endswith(": edited or damaged); fetching it again")


def test_an_entry_of_the_previous_format_is_a_miss_said_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Chosen: an entry written before checksums (format 1) is never trusted, since nothing
    shows it was not edited; it is fetched again and rewritten. One warning for them all."""
    cache = ResponseCache(tmp_path, BASE)
    other = CacheKey.make("2099AA", "/content/2099AA/AUI/A90000001")
    cache.put(KEY, 200, [])
    cache.put(other, 404, None)
    path = next((tmp_path / LAYOUT).rglob(f"{KEY.digest}.json"))
    path.write_bytes(
        b'{"format":1,"key":' + KEY_JSON + b',"status":200,"stored_at":5.0,"result":[]}'
    )
    other_path = next((tmp_path / LAYOUT).rglob(f"{other.digest}.json"))
    other_path.write_bytes(
        b'{"format":1,"key":["2099AA","/content/2099AA/AUI/A90000001",[]],"status":404,'
        b'"stored_at":5.0,"result":null}'
    )
    with caplog.at_level(logging.WARNING, logger="tempmedbench_synonyms.uts.cache"):
        assert cache.get(KEY) is None
        assert cache.get(other) is None
    assert [r.getMessage() for r in caplog.records] == [
        f"cache entry {path} was written by an earlier version of this tool, without a "
        "checksum; fetching it again (and every other such entry, without a warning each)"
    ]
    assert cache.rejections(other) == [
        f"its entry {other_path} was written by an earlier version, without a checksum"
    ]
    cache.put(KEY, 200, [])
    assert path.read_bytes().startswith(b'{"format":2,')


def test_corrupt_warnings_name_five_files_then_say_there_are_more(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache = ResponseCache(tmp_path, BASE)
    keys = [CacheKey.make("2099AA", f"/content/2099AA/AUI/A9000000{i}") for i in range(8)]
    for key in keys:
        cache.put(key, 404, None)
        next((tmp_path / LAYOUT).rglob(f"{key.digest}.json")).write_bytes(b"{")
    with caplog.at_level(logging.WARNING, logger="tempmedbench_synonyms.uts.cache"):
        assert [cache.get(key) for key in keys] == [None] * 8
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 6
    assert all(m.startswith("cache entry ") for m in messages[:5])
    assert messages[5] == (
        "more cache files are corrupt: they are fetched again without a warning each (-v names "
        "them)"
    )
    assert len(cache.rejections()) == 8


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_or_a_huge_file_in_an_entrys_place_is_refused_without_hanging(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = ResponseCache(tmp_path, BASE)
    cache.put(KEY, 200, [])
    path = next((tmp_path / LAYOUT).rglob(f"{KEY.digest}.json"))
    path.unlink()
    os.mkfifo(path)
    monkeypatch.setattr(cache_module, "MAX_FILE_BYTES", 1024 * 1024)
    with caplog.at_level(logging.WARNING, logger="tempmedbench_synonyms.uts.cache"):
        assert cache.get(KEY) is None  # opening a FIFO for reading would wait for a writer
        path.unlink()
        path.write_bytes(b" " * (1024 * 1024 + 1))
        assert cache.get(KEY) is None
    assert [r.getMessage() for r in caplog.records] == [
        f"cannot read cache entry {path} (it is a FIFO, not a regular file); fetching it again",
        f"cannot read cache entry {path} (it is larger than 1048576 bytes); fetching it again",
    ]


def save_memo(cache: ResponseCache, data: object) -> Path:
    """Save the memo "m" of release 2099AA; the one file that wrote."""
    before = set(cache.root.rglob("*"))
    version = cache.release_version("2099AA")
    assert version is not None
    cache.save_memo("2099AA", "m", data, release_version=version)
    (memo,) = {p for p in cache.root.rglob("*") if p.is_file()} - before
    return memo


def test_a_memo_or_current_that_fails_its_checksum_is_not_trusted(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    now = VirtualTime(1000.0)
    cache = ResponseCache(tmp_path, BASE, clock=now.clock)
    cache.put(KEY, 200, [])
    memo = save_memo(cache, {"atoms": ["Invented fever"]})
    cache.set_current_release("2099AA")
    assert cache.load_memo("2099AA", "m") == {"atoms": ["Invented fever"]}
    assert cache.current_release() == "2099AA"
    memo.write_bytes(memo.read_bytes().replace(b"fever", b"cough"))
    current = cache.folder / "current.json"
    current.write_bytes(current.read_bytes().replace(b"2099AA", b"2099AB"))
    with caplog.at_level(logging.WARNING, logger="tempmedbench_synonyms.uts.cache"):
        assert cache.load_memo("2099AA", "m") is None
        assert cache.current_release() is None
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 2
    assert messages[0].startswith(f"cache memo {memo} is corrupt (its body's SHA-256 is ")
    assert messages[0].endswith(": edited or damaged); reading the entries")
    assert messages[1].startswith(f"cache entry {current} is corrupt (its body's SHA-256 is ")
    assert messages[1].endswith(": edited or damaged); asking UMLS again")


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("memo", b'{"format":1,"name":"m","release_version":"x","data":{}}'),
        ("current", b'{"release":"2099AA","stored_at":1000.0}'),
    ],
)
def test_a_memo_or_current_of_the_previous_format_is_quietly_replaced(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, name: str, content: bytes
) -> None:
    cache = ResponseCache(tmp_path, BASE, clock=lambda: 1000.0)
    cache.put(KEY, 200, [])
    path = save_memo(cache, {}) if name == "memo" else cache.folder / "current.json"
    path.write_bytes(content)
    with caplog.at_level(logging.WARNING, logger="tempmedbench_synonyms.uts.cache"):
        assert cache.load_memo("2099AA", "m") is None
        assert cache.current_release() is None
    assert caplog.records == []


@pytest.mark.parametrize(
    "body",
    [b'{"release":"2099AA"}', b'{"release":"../x","stored_at":1}', b"[]", b'{"release":7}'],
)
def test_a_current_json_that_does_not_hold_a_release_is_corrupt(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, body: bytes
) -> None:
    cache = ResponseCache(tmp_path, BASE, clock=lambda: 1000.0)
    cache.set_current_release("2099AA")
    path = cache.folder / "current.json"
    path.write_bytes(entry_bytes(body, head=b'"kind":"current"'))
    with caplog.at_level(logging.WARNING, logger="tempmedbench_synonyms.uts.cache"):
        assert cache.current_release() is None
    assert [r.getMessage() for r in caplog.records] == [
        f"cache entry {path} is corrupt (not what current.json holds); asking UMLS again"
    ]


def test_an_unreadable_entry_or_memo_is_a_miss_and_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A cache file that cannot be opened (a folder in its place) costs a fetch, not the run."""
    cache = ResponseCache(tmp_path, BASE)
    cache.put(KEY, 200, [])
    entry = next((tmp_path / LAYOUT).rglob(f"{KEY.digest}.json"))
    entry.unlink()
    entry.mkdir()
    memo = save_memo(cache, {"x": 1})
    memo.unlink()
    memo.mkdir()
    with caplog.at_level(logging.WARNING, logger="tempmedbench_synonyms.uts.cache"):
        assert cache.get(KEY) is None
        assert cache.load_memo("2099AA", "m") is None
    assert [r.getMessage() for r in caplog.records] == [
        f"cannot read cache entry {entry} (it is a folder, not a regular file); fetching it again",
        f"cannot read cache memo {memo} (it is a folder, not a regular file); reading the entries",
    ]


def test_namespaces_keep_base_urls_apart(tmp_path: Path) -> None:
    real = ResponseCache(tmp_path, "https://uts-ws.nlm.nih.gov/rest")
    fake = ResponseCache(tmp_path, "http://127.0.0.1:8080/rest")
    fake.put(KEY, 200, ["from the fake"])
    assert real.get(KEY) is None
    assert namespace_of("https://uts-ws.nlm.nih.gov/rest/").startswith("uts-ws.nlm.nih.gov-")
    assert namespace_of("https://uts-ws.nlm.nih.gov/rest/") == namespace_of(
        "https://uts-ws.nlm.nih.gov/rest"
    )
    assert namespace_of("http://127.0.0.1:8080/rest").startswith("127.0.0.1_8080-")


def test_current_is_remembered_for_a_day(tmp_path: Path) -> None:
    now = VirtualTime(1000.0)
    cache = ResponseCache(tmp_path, BASE, clock=now.clock)
    assert cache.current_release() is None
    cache.set_current_release("2099AA")
    now.sleep(24 * 3600 - 1)
    assert cache.current_release() == "2099AA"
    now.sleep(2)
    assert cache.current_release() is None
    assert cache.current_release(max_age=float("inf")) == "2099AA"


def test_info_and_clear(tmp_path: Path) -> None:
    root = tmp_path / "c"
    assert cache_info(root).to_json() == {
        "root": str(root),
        "exists": False,
        "entries": 0,
        "bytes": 0,
        "temporary_files": 0,
        "namespaces": [],
    }
    cache = ResponseCache(root, BASE)
    cache.put(KEY, 200, [])
    cache.put(CacheKey.make("2099AB", "/content/2099AB/AUI/A1"), 404, None)
    (cache.folder / "2099AA" / ".x.json.abc.tmp").write_bytes(b"half")
    cache.save_memo("2099AA", "m", {"any": "thing"}, release_version=1)  # not an entry
    keep = root / "not-ours.txt"
    keep.write_text("user file")
    info = cache_info(root)
    assert (info.entries, info.temporary_files) == (2, 1)
    assert info.namespaces[0].releases == {"2099AA": 1, "2099AB": 1}
    assert info.namespaces[0].base_url == BASE
    assert clear_cache(root).removed == 2
    assert not (root / LAYOUT).exists()
    assert keep.read_text() == "user file"  # never anything but our own folder
    assert cache.get(KEY) is None


def test_cache_dir_resolution(tmp_path: Path) -> None:
    flag = tmp_path / "flag"
    env = {"TEMPMEDBENCH_CACHE_DIR": str(tmp_path / "env")}
    with tool_env(env):
        assert resolve_cache_dir(flag) == flag
        assert resolve_cache_dir(None) == tmp_path / "env"
    with tool_env():
        default = resolve_cache_dir(None)
    assert default.name == "tempmedbench-synonyms"
    with tool_env({"TEMPMEDBENCH_CACHE_DIR": "  "}):
        assert resolve_cache_dir(None) == default


def test_memos_are_valid_only_while_the_release_folder_is_unchanged(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path, BASE)
    assert cache.release_version("2099AA") is None
    cache.put(KEY, 200, [])
    version = cache.release_version("2099AA")
    assert version is not None
    cache.save_memo("2099AA", "run", {"answers": [1, 2]}, release_version=version)
    assert cache.release_version("2099AA") == version  # a memo does not change the folder
    assert cache.load_memo("2099AA", "run") == {"answers": [1, 2]}
    assert cache.load_memo("2099AA", "other") is None
    memo = next(tmp_path.rglob("run.json"))
    assert mode(memo) == 0o600
    mtime = (cache.folder / "2099AA").stat().st_mtime_ns
    os.utime(cache.folder / "2099AA", ns=(mtime + 1, mtime + 1))  # an entry was deleted by hand
    assert cache.load_memo("2099AA", "run") is None


def test_an_entry_rewritten_in_the_same_clock_tick_invalidates_the_memo(tmp_path: Path) -> None:
    """On a file system whose mtimes move in whole seconds, the folder's mtime may not change
    when an entry is replaced; the generation token always does."""
    cache = ResponseCache(tmp_path, BASE)
    cache.put(KEY, 200, ["old"])
    version = cache.release_version("2099AA")
    assert version is not None
    cache.save_memo("2099AA", "run", {"answers": ["old"]}, release_version=version)
    folder = cache.folder / "2099AA"
    before = folder.stat().st_mtime_ns
    cache.put(KEY, 200, ["new"])  # --refresh in another run: same name, same size
    os.utime(folder, ns=(before, before))  # ...within the same tick of a coarse clock
    assert folder.stat().st_mtime_ns == before
    assert cache.load_memo("2099AA", "run") is None
    assert cache.release_version("2099AA") != version


def test_a_release_folder_from_before_generation_tokens_still_has_a_version(
    tmp_path: Path,
) -> None:
    cache = ResponseCache(tmp_path, BASE)
    cache.put(KEY, 200, [])
    (cache.folder / "2099AA" / cache_module.GENERATION_FILE).unlink()
    mtime = (cache.folder / "2099AA").stat().st_mtime_ns
    assert cache.release_version("2099AA") == f"{mtime}:"


def test_info_counts_entries_not_the_generation_token(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path, BASE)
    cache.put(KEY, 200, [])
    info = cache_info(tmp_path)
    assert (info.entries, info.temporary_files) == (1, 0)
    assert info.namespaces[0].releases == {"2099AA": 1}


def _within(seconds: float, call: Callable[[], object]) -> object:
    """``call()``, failing the test if it has not returned after ``seconds`` (a hang guard: a
    FIFO opened for reading blocks until a writer comes)."""
    out: list[object] = []
    worker = threading.Thread(target=lambda: out.append(call()), daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), "hung"
    return out[0]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
@pytest.mark.parametrize(
    ("kind", "problem"),
    [("fifo", "it is a FIFO, not a regular file"), ("long", "it is larger than 64 bytes")],
)
def test_a_generation_file_that_holds_no_token_is_not_trusted_and_never_hangs(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, kind: str, problem: str
) -> None:
    cache = ResponseCache(tmp_path, BASE)
    cache.put(KEY, 200, [])
    generation = cache.folder / "2099AA" / ".generation"
    generation.unlink()
    if kind == "fifo":
        os.mkfifo(generation)
    else:
        generation.write_bytes(b"0" * 65)
    with caplog.at_level(logging.WARNING, logger="tempmedbench_synonyms.uts.cache"):
        assert _within(5, lambda: cache.release_version("2099AA")) is None
    assert [r.getMessage() for r in caplog.records] == [
        f"cannot read .generation {generation} ({problem}); the memo is not used"
    ]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_as_base_json_never_hangs_cache_info(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path, BASE)
    cache.put(KEY, 200, [])
    base = cache.folder / "base.json"
    base.unlink()
    os.mkfifo(base)
    info = _within(5, lambda: cache_info(tmp_path))
    assert isinstance(info, CacheInfo)
    assert (info.entries, info.namespaces[0].base_url) == (1, None)


def test_the_first_write_removes_the_leftovers_of_an_interrupted_run_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = ResponseCache(tmp_path, BASE).folder
    old = [folder / "2099AA" / ".a.json.0123456789ab.tmp", folder / ".memo" / "2099AA" /
           ".m.json.abcdef012345.tmp"]  # fmt: skip
    young = folder / ".base.json.aaaaaaaaaaaa.tmp"
    for f in (*old, young):
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(b"half")
    for f in old:
        os.utime(f, (0, 0))
    cache = ResponseCache(tmp_path, BASE)
    with caplog.at_level(logging.WARNING, logger="tempmedbench_synonyms.uts.cache"):
        cache.put(KEY, 200, [])
        cache.put(CacheKey.make("2099AB", "/content/2099AB/AUI/A1"), 404, None)  # swept once
    assert [r.getMessage() for r in caplog.records] == [
        f"removed 2 temporary file(s) left by an interrupted run: {old[0]}, {old[1]}"
    ]
    assert [f.exists() for f in (*old, young)] == [False, False, True]
    entry = cache.get(KEY)
    assert entry is not None and (entry.status, entry.result) == (200, [])


def test_cache_info_says_the_next_run_removes_leftovers(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path, BASE)
    cache.put(KEY, 200, [])
    (cache.folder / "2099AA" / ".x.json.0123456789ab.tmp").write_bytes(b"half")
    result = CliRunner().invoke(app, ["cache", "info", "--cache-dir", str(tmp_path)])
    assert (result.exit_code, result.stderr) == (
        0,
        "note: 1 temporary file left by an interrupted run; the next run that writes to this "
        "cache removes it\n",
    )


def test_an_entry_that_cannot_be_opened_is_a_miss_and_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache = ResponseCache(tmp_path, BASE)
    cache.put(KEY, 200, [])
    release = cache.folder / "2099AA"
    entry = release / f"{KEY.digest}.json"
    (cache.folder / "moved").mkdir()
    release.rename(cache.folder / "moved" / "2099AA")
    release.write_bytes(b"a file where the release folder was")
    with caplog.at_level(logging.WARNING, logger="tempmedbench_synonyms.uts.cache"):
        assert cache.get(KEY) is None
    assert [r.getMessage() for r in caplog.records] == [
        f"cannot read cache entry {entry} (Not a directory); fetching it again"
    ]
