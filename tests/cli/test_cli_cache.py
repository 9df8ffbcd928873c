"""The cache's own messages (issue 17 item 12): a cache folder that cannot be reached, a cache
entry replaced by a folder, a namespace linked from elsewhere. Our message and a hint, never
Python's ``[Errno 13]`` text with ``hint: null``; what ``cache clear`` counts is what it
removed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner, Result

from helpers import BASE, behind_responses
from helpers.folders import LONG_NAME
from tempmedbench_synonyms.cli import app
from tempmedbench_synonyms.cli.cache import cache_app
from tempmedbench_synonyms.testing import CANARY_KEY, FakeUts, FakeUtsData, invented_rows
from tempmedbench_synonyms.uts.cache import LAYOUT

PERMISSIONS = "check the permissions of the path and of each folder above it (ls -ld)"
TOO_LONG = "the path, or a name in it, is longer than the file system allows: choose a shorter one"
ANOTHER = "or give another folder with --cache-dir or TEMPMEDBENCH_CACHE_DIR"


@pytest.fixture
def fake() -> Iterator[FakeUts]:
    uts = FakeUts(FakeUtsData.from_lines(invented_rows(3, atoms_per_concept=4)), api_key=CANARY_KEY)
    with behind_responses(uts):
        yield uts


def run(command: typer.Typer, args: list[str], cache: Path) -> Result:
    env = {"UMLS_BASE_URL": BASE, "TEMPMEDBENCH_CACHE_DIR": str(cache), "UMLS_API_KEY": CANARY_KEY}
    return CliRunner().invoke(command, args, env=env)


@pytest.mark.parametrize("how", ["locked", "too long"])
@pytest.mark.parametrize("command", ["info", "clear"])
def test_a_cache_folder_that_cannot_be_reached_is_our_message_and_a_hint(
    tmp_path: Path, request: pytest.FixtureRequest, command: str, how: str
) -> None:
    """A folder the user cannot enter (mode 000; as root, refused in-process:
    tests/helpers/folders.py), or a --cache-dir of 300 characters (ENAMETOOLONG, for real)."""
    if how == "locked":
        cache, problem, fix = (
            request.getfixturevalue("locked") / "c",
            "Permission denied",
            PERMISSIONS,
        )
    else:
        cache, problem, fix = tmp_path / LONG_NAME, "File name too long", TOO_LONG
    message = f"{cache}: cannot use the cache folder: {problem}"
    human = run(cache_app, [command, "--cache-dir", str(cache)], tmp_path / "unused")
    assert (human.exit_code, human.stdout, human.stderr) == (
        2,
        "",
        f"error: {message}\nhint: {fix}; {ANOTHER}\n",
    )
    as_json = run(cache_app, [command, "--cache-dir", str(cache), "--json"], tmp_path / "unused")
    doc = json.loads(as_json.stdout)
    assert (as_json.exit_code, doc["outcome"], doc["message"], doc["hint"]) == (
        2,
        "bad_input",
        message,
        f"{fix}; {ANOTHER}",
    )
    assert "Errno" not in as_json.stdout + human.stderr


def test_a_regeneration_with_a_cache_folder_it_cannot_reach_says_so(
    mini: Path, tmp_path: Path, locked: Path
) -> None:
    """The backstop for what no library code expects: our message and the fix, exit 2."""
    result = CliRunner().invoke(
        app,
        ["regenerate", str(mini), "--cache-dir", str(locked / "c"), "--base-url", BASE,
         "--out", str(tmp_path / "out"), "--json"],
        env={"UMLS_API_KEY": CANARY_KEY},
    )  # fmt: skip
    doc = json.loads(result.stdout)
    assert (result.exit_code, doc["message"], doc["hint"]) == (
        2,
        f"{locked / 'c'}: Permission denied",
        PERMISSIONS,
    )
    assert result.stderr.splitlines()[-2:] == [
        f"error: {locked / 'c'}: Permission denied",
        f"hint: {PERMISSIONS}",
    ]
    assert not (tmp_path / "out").exists()


def test_an_entry_replaced_by_a_folder_says_what_it_is_and_what_to_do(
    fake: FakeUts, tmp_path: Path
) -> None:
    """It failed every run with exit 2 and "give a writable folder", which the folder was."""
    cache = tmp_path / "cache"
    args = ["atoms", "C9000001", "--umls-release", "2099AA", "--json"]
    assert run(app, ["umls", *args], cache).exit_code == 0
    (entry,) = (cache / LAYOUT).glob("*/2099AA/*.json")
    entry.unlink()
    entry.mkdir()
    (entry / "something").write_text("not ours")
    failed = run(app, ["umls", *args], cache)
    doc = json.loads(failed.stdout)
    assert (failed.exit_code, doc["message"], doc["hint"]) == (
        2,
        f"{entry}: cannot write this cache file: a folder is in its place (this tool never "
        "makes one there)",
        f"remove that folder (rm -r {entry}), or empty the cache: tempmedbench-synonyms cache "
        f"clear --cache-dir {cache}",
    )
    assert (entry / "something").read_text() == "not ours"  # never removed behind the user
    assert len(fake.seen) == 2  # asked again, as the folder cannot be read as an entry
    # The fix it gives works.
    cleared = run(app, ["cache", "clear", "--cache-dir", str(cache)], cache)
    assert cleared.exit_code == 0
    assert run(app, ["umls", *args], cache).exit_code == 0


def test_a_release_folder_replaced_by_a_file_names_the_file(fake: FakeUts, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    args = ["umls", "atoms", "C9000001", "--umls-release", "2099AA"]
    assert run(app, args, cache).exit_code == 0
    (release,) = (cache / LAYOUT).glob("*/2099AA")
    for entry in release.iterdir():
        entry.unlink()
    release.rmdir()
    release.write_text("a file")
    failed = run(app, [*args, "--json"], cache)
    doc = json.loads(failed.stdout)
    assert (failed.exit_code, doc["message"], doc["hint"]) == (
        2,
        f"{release}: cannot write in the cache: a file is in the place of one of its folders",
        f"remove that file (rm {release}), or empty the cache: tempmedbench-synonyms cache "
        f"clear --cache-dir {cache}",
    )


def test_clear_counts_what_it_removed_not_what_a_linked_namespace_holds(
    fake: FakeUts, tmp_path: Path
) -> None:
    """A namespace linked from elsewhere: the link goes, the entries it points to stay (they
    are not the cache's own folder), and clear says so instead of counting them removed."""
    elsewhere = tmp_path / "elsewhere"
    run(app, ["umls", "atoms", "C9000001", "--umls-release", "2099AA"], elsewhere)
    run(app, ["umls", "atoms", "C9000002", "--umls-release", "2099AA"], elsewhere)
    cache = tmp_path / "cache"
    run(app, ["umls", "atoms", "C9000003", "--umls-release", "2099AA"], cache)
    (theirs,) = (elsewhere / LAYOUT).iterdir()
    link = cache / LAYOUT / "linked-namespace"
    link.symlink_to(theirs, target_is_directory=True)
    info = json.loads(run(cache_app, ["info", "--json"], cache).stdout)
    assert info["entries"] == 3  # what a run reads, through the link too
    cleared = run(cache_app, ["clear", "--json"], cache)
    note = (
        f"1 symbolic link removed, not what it points to: the cached answers there stay on "
        f"disk ({link} -> {theirs}); delete them there if you meant to"
    )
    assert json.loads(cleared.stdout) == {
        "root": str(cache),
        "removed": 1,
        "warnings": [note],
        "schema_version": 1,
        "tool_version": info["tool_version"],
    }
    assert not (cache / LAYOUT).exists()
    assert len(list(theirs.glob("2099AA/*.json"))) == 2  # still there, and not counted
    human = run(cache_app, ["clear"], elsewhere)
    assert human.stderr == f"removed 2 cached answers from {elsewhere}\n"


def test_info_writes_a_base_url_read_from_the_cache_as_escapes(tmp_path: Path) -> None:
    """``base.json`` is a file: a control character in it (a terminal escape) is shown as its
    escape, never sent to the terminal (SPEC section 8)."""
    ns = tmp_path / "cache" / LAYOUT / "ns1"
    ns.mkdir(parents=True, mode=0o700)
    (tmp_path / "cache").chmod(0o700)
    (tmp_path / "cache" / LAYOUT).chmod(0o700)
    (ns / "base.json").write_text('{"base_url": "http://x\\u001b[31m/rest"}', encoding="utf-8")
    result = run(cache_app, ["info"], tmp_path / "cache")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[1:] == [
        "0 answers, 0 B",
        "  http://x\\x1b[31m/rest: 0 answers, 0 B",
    ]
    assert "\x1b" not in result.stdout


def test_info_lists_the_indexes_clear_keeps_them_and_clear_index_removes_them(
    tmp_path: Path,
) -> None:
    """SPEC 12: the local UMLS's indexes (by default the folder ``index`` in the cache folder)."""
    from helpers import ROOT
    from tempmedbench_synonyms.mrconso.index import LocalIndex

    cache = tmp_path / "cache"
    meta = ROOT / "fixtures/umls"
    (mrconso, mrsty) = LocalIndex(meta, index_dir=cache / "index").build(["MRCONSO", "MRSTY"])
    text = run(cache_app, ["info"], cache)
    assert (text.exit_code, text.stdout.splitlines()) == (0, [
        f"cache folder: {cache}",
        "empty: nothing cached yet",
        f"index folder: {cache / 'index'}: 2 index files, "
        f"{(mrconso.bytes + mrsty.bytes) / 1000:.1f} kB",
        f"  MRCONSO: 71 rows, {mrconso.bytes / 1000:.1f} kB, from {meta / 'MRCONSO.RRF'}",
        f"  MRSTY: 14 rows, {mrsty.bytes / 1000:.1f} kB, from {meta / 'MRSTY.RRF'}",
    ])  # fmt: skip
    doc = json.loads(run(cache_app, ["info", "--json"], cache).stdout)
    assert (doc["index_dir"], doc["indexes"]) == (str(cache / "index"), [
        {"file": "MRCONSO", "path": str(mrconso.path), "paths": [str(meta / "MRCONSO.RRF")],
         "rows": 71, "bytes": mrconso.bytes},
        {"file": "MRSTY", "path": str(mrsty.path), "paths": [str(meta / "MRSTY.RRF")],
         "rows": 14, "bytes": mrsty.bytes},
    ])  # fmt: skip
    kept = run(cache_app, ["clear"], cache)
    assert (kept.exit_code, mrconso.path.exists(), mrsty.path.exists()) == (0, True, True)
    other = tmp_path / "elsewhere"
    assert (
        json.loads(run(cache_app, ["info", "--index-dir", str(other), "--json"], cache).stdout)[
            "indexes"
        ]
        == []
    )
    other_meta = LocalIndex(meta, index_dir=other).build(["MRSAB"])[0]
    as_json = json.loads(run(cache_app, ["clear", "--index", "--index-dir", str(other),
                                         "--json"], cache).stdout)  # fmt: skip
    assert (as_json["index_dir"], as_json["index_files_removed"]) == (
        str(other), [str(other / f".{other_meta.path.name}.lock"), str(other_meta.path)]
    )  # fmt: skip
    cleared = run(cache_app, ["clear", "--index"], cache)
    assert cleared.stderr == (
        f"removed 0 cached answers from {cache}\nremoved 2 indexes from {cache / 'index'}\n"
    )  # (and their lock files)
    assert list((cache / "index").iterdir()) == []
    assert run(cache_app, ["info"], cache).stdout == (
        f"cache folder: {cache}\nempty: nothing cached yet\n"
    )
