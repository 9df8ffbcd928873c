"""files.write_atomic: a whole new file or the old one, never a torn one, with the right mode."""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from helpers import FIXTURES, GPS_FILE
from tempmedbench_synonyms import files
from tempmedbench_synonyms.errors import BadInputError, UntrustedError
from tempmedbench_synonyms.files import TMP_SUFFIX, open_regular, read_regular, write_atomic


def test_writes_the_bytes_and_creates_the_folders(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "out.json"
    write_atomic(target, b"{}\n")
    assert target.read_bytes() == b"{}\n"
    write_atomic(target, b"[]\n")  # replaces
    assert target.read_bytes() == b"[]\n"
    assert [p.name for p in target.parent.iterdir()] == ["out.json"]  # no temporary file left


def test_private_files_are_0600_others_follow_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        write_atomic(tmp_path / "private", b"x", private=True)
        write_atomic(tmp_path / "public", b"x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "private").stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "public").stat().st_mode) == 0o644


@pytest.fixture
def umask_000() -> Iterator[None]:
    """The most permissive umask: nothing the tool makes may follow it."""
    old = os.umask(0)
    yield
    os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_folders_the_tool_makes_are_0700_whatever_the_umask(
    tmp_path: Path, umask_000: None
) -> None:
    """SPEC section 8, "Shared folders": make_folders, and the folders of a private file."""
    (tmp_path / "shared").mkdir(mode=0o755)
    files.make_folders(tmp_path / "shared" / "a" / "b")
    write_atomic(tmp_path / "c" / "d" / "entry.json", b"{}", private=True)
    made = ["shared/a", "shared/a/b", "c", "c/d"]
    assert [mode(tmp_path / f) for f in made] == [0o700] * 4
    assert mode(tmp_path / "shared") == 0o755  # a folder that was there is left as it was
    assert mode(tmp_path / "c" / "d" / "entry.json") == 0o600


def test_check_own_trusts_only_what_the_user_owns_and_no_one_else_can_write(
    tmp_path: Path,
) -> None:
    mine = tmp_path / "mine"
    mine.mkdir(mode=0o700)
    files.check_own(mine, what="the cache folder", elsewhere="--cache-dir")
    files.check_own(tmp_path / "missing", what="the cache folder", elsewhere="--cache-dir")
    loose = tmp_path / "loose"
    loose.mkdir()
    loose.chmod(0o775)
    with pytest.raises(UntrustedError) as info:
        files.check_own(loose, what="the cache folder", elsewhere="--cache-dir")
    assert (str(info.value), info.value.hint, info.value.exit_code) == (
        f"{loose}: the cache folder can be written by other users (mode 0775), so what it "
        "holds cannot be trusted",
        f"chmod go-w {loose}, or use a folder of your own (--cache-dir)",
        2,
    )
    loose.chmod(0o1777)  # /tmp: the sticky bit does not make it the user's own
    with pytest.raises(UntrustedError, match=r"by other users \(mode 1777\)"):
        files.check_own(loose, what="the cache folder", elsewhere="--cache-dir")
    theirs = tmp_path / "theirs"
    theirs.write_text("planted")
    theirs.chmod(0o600)
    os.chown(theirs, 4242, -1)  # (as root: another user's file)
    with pytest.raises(UntrustedError) as info:
        read_regular(theirs, limit=100, own="TEMPMEDBENCH_STATE_DIR")
    assert (str(info.value), info.value.hint) == (
        f"{theirs}: the file belongs to another user (uid 4242; you are uid {os.getuid()}), so "
        "what it holds cannot be trusted",
        f"use a folder of your own (TEMPMEDBENCH_STATE_DIR), or have {theirs} removed",
    )
    assert read_regular(theirs, limit=100) == b"planted"  # a file the tool does not keep: read


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "out"
    write_atomic(target, b"old")

    def no_space(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files.os, "fsync", no_space)
    with pytest.raises(OSError, match="No space left on device"):
        write_atomic(target, b"new")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(TMP_SUFFIX)] == []


def test_a_write_killed_before_the_rename_keeps_the_old_file_and_cleans_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As a cache entry is written (``private``): Ctrl-C between the write and the rename."""
    target = tmp_path / "x.json"
    write_atomic(target, b"old", private=True)

    def boom(src: str, dst: str) -> None:
        raise KeyboardInterrupt  # killed between writing and renaming

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(target, b"new", private=True)
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.json"]


# --- open_regular: only regular files are read (SPEC section 8) -----------------------------


def test_open_regular_reads_a_regular_file_and_a_link_to_one(tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_bytes(b"data")
    (tmp_path / "link").symlink_to(target)
    for path in (target, tmp_path / "link"):
        with open_regular(path) as f:
            assert f.read() == b"data"


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        (lambda p: os.mkfifo(p), "a FIFO"),
        (lambda p: p.symlink_to("/dev/zero"), "a character device"),
        (lambda p: p.mkdir(), "a folder"),
    ],
    ids=["fifo", "dev-zero", "folder"],
)
def test_open_regular_refuses_what_is_not_a_regular_file(
    tmp_path: Path, make: Callable[[Path], None], kind: str
) -> None:
    path = tmp_path / "thing"
    make(path)
    with pytest.raises(BadInputError) as info:
        open_regular(path, what="the thing")  # a FIFO opens without blocking: no hang
    assert str(info.value) == f"{path}: the thing is {kind}, not a regular file"
    assert info.value.hint == (
        "pass a regular file: a FIFO, a device or a socket is never read where a file is expected"
    )


def test_open_regular_names_a_socket_which_cannot_be_opened(tmp_path: Path) -> None:
    path = tmp_path / "sock"
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(path))
        with pytest.raises(BadInputError) as info:
            open_regular(path)
    finally:
        server.close()
    assert str(info.value) == f"{path}: is a socket, not a regular file"


def test_open_regular_leaves_a_missing_file_to_the_caller(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        open_regular(tmp_path / "missing")


def test_read_regular_bounds_the_size(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"12345")
    assert read_regular(path, limit=5) == b"12345"
    with pytest.raises(BadInputError) as info:
        read_regular(path, what="the key", limit=4)
    assert str(info.value) == f"{path}: the key is larger than 4 bytes"


def test_read_input_bounds_a_file_that_grows_as_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The size is looked at first, then ``limit + 1`` bytes at most are read: a file that grew
    past the limit after its ``fstat`` (here: an ``fstat`` that says the size it had) is refused
    all the same, and one at the limit is read whole."""
    path = tmp_path / "grows"
    path.write_bytes(b"x" * 101)
    real = os.fstat

    def before_it_grew(fd: int) -> os.stat_result:
        st = real(fd)
        return os.stat_result((*st[:6], 100, *st[7:10]))

    monkeypatch.setattr(os, "fstat", before_it_grew)
    with pytest.raises(BadInputError) as info:
        files.read_input(path, what="the table", limit=100, too_large="a hint")
    assert str(info.value) == (
        f"{path}: grew over the limit of 100 bytes for the table as it was read"
    )
    assert info.value.hint == "a hint"
    path.write_bytes(b"x" * 100)
    assert files.read_input(path, what="the table", limit=100) == b"x" * 100


# --- the commands, on hostile files: exit 2 at once, in a subprocess so a hang cannot stall the
# suite (a FIFO opened for reading blocks until a writer comes)


def _cli(*args: str | Path, cwd: Path) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UMLS_", "TEMPMEDBENCH_"))}
    env["UMLS_API_KEY"] = CANARY
    proc = subprocess.run(
        [sys.executable, "-m", "tempmedbench_synonyms", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env=env,
    )
    assert CANARY not in proc.stdout + proc.stderr
    return proc.returncode, proc.stdout, proc.stderr


CANARY = "canary-key-0000-must-never-appear"


def _tree(folder: Path) -> dict[str, bytes | None]:
    return {
        p.relative_to(folder).as_posix(): (p.read_bytes() if p.is_file() else None)
        for p in sorted(folder.rglob("*"))
        if not p.is_fifo() and not p.is_symlink()
    }


@pytest.mark.parametrize("hostile", ["fifo", "dev-zero"])
def test_a_hostile_manifest_is_bad_input_at_once(mini: Path, tmp_path: Path, hostile: str) -> None:
    manifest = mini / "MANIFEST.sha256"
    manifest.unlink()
    if hostile == "fifo":
        os.mkfifo(manifest)
    else:
        manifest.symlink_to("/dev/zero")
    before = _tree(mini)
    code, out, err = _cli("check", mini, "--json", cwd=tmp_path)
    kind = "a FIFO" if hostile == "fifo" else "a character device"
    message = f"{manifest}: the release manifest is {kind}, not a regular file"
    assert code == 2
    assert err.splitlines()[0] == f"error: {message}"
    doc = json.loads(out)
    assert (doc["outcome"], doc["exit_code"], doc["message"]) == ("bad_input", 2, message)
    assert _tree(mini) == before  # nothing written


def test_a_fifo_artifact_is_bad_input_at_once(tmp_path: Path) -> None:
    release = tmp_path / "r"
    shutil.copytree(FIXTURES / "gps-planted", release)
    events = release / "artifacts" / "events_canonical.jsonl"
    events.unlink()
    os.mkfifo(events)
    code, out, err = _cli("gps", "validate", release, "--gps", GPS_FILE, "--json", cwd=tmp_path)
    message = f"{events}: the artifact is a FIFO, not a regular file"
    assert code == 2
    assert err.splitlines()[0] == f"error: {message}"
    assert json.loads(out)["message"] == message


@pytest.mark.parametrize("hostile", ["fifo", "dev-zero"])
def test_a_hostile_gps_is_bad_input_at_once(tmp_path: Path, hostile: str) -> None:
    gps = tmp_path / "SnomedINTL_GPSRelease_PRODUCTION_20990101T120000Z.txt"
    if hostile == "fifo":
        os.mkfifo(gps)
    else:
        gps.symlink_to("/dev/zero")
    kind = "a FIFO" if hostile == "fifo" else "a character device"
    code, out, err = _cli("gps", "lookup", "22298006", "--gps", gps, "--json", cwd=tmp_path)
    message = f"{gps}: the GPS input is {kind}, not a regular file"
    assert code == 2
    assert err.splitlines()[0] == f"error: {message}"
    assert json.loads(out)["message"] == message


def test_a_fifo_key_file_is_bad_input_before_any_request(tmp_path: Path) -> None:
    key_file = tmp_path / "key"
    os.mkfifo(key_file)
    code, out, err = _cli(
        "umls", "concept", "C0000001", "--api-key-file", key_file,
        "--base-url", "http://127.0.0.1:9/rest", "--cache-dir", tmp_path / "cache", "--json",
        cwd=tmp_path,
    )  # fmt: skip
    message = f"{key_file}: the API key file is a FIFO, not a regular file"
    assert code == 2
    assert err.splitlines()[0] == f"error: {message}"
    assert json.loads(out)["message"] == message
    assert not (tmp_path / "cache").exists()


def test_ctrl_c_inside_fdopen_stays_an_interruption(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Interrupted once the file object holds the descriptor (which then closes it), the open
    raised OSError EBADF from closing it a second time, in place of the KeyboardInterrupt."""
    fdopen = os.fdopen

    def fdopen_then_interrupt(fd: int, mode: str) -> object:
        fdopen(fd, mode).close()
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fdopen", fdopen_then_interrupt)
    path = tmp_path / "f"
    path.write_bytes(b"x")
    with pytest.raises(KeyboardInterrupt):
        open_regular(path)
