"""files.write_atomic: a whole new file or the old one, never a torn one, with the right mode."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tempmedbench_synonyms import files
from tempmedbench_synonyms.files import TMP_SUFFIX, write_atomic


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
