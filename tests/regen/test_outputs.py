"""Before a run scans or fetches anything: the output folders are writable, the manifest is
checked whole, the left-overs of a killed run go, and freeze keeps the authors' hashes."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from helpers import MINI_MRCONSO, ROOT, Rehash
from tempmedbench_synonyms import files
from tempmedbench_synonyms.cli import app
from tempmedbench_synonyms.errors import BadInputError, ManifestError
from tempmedbench_synonyms.mrconso.source import MrconsoSource
from tempmedbench_synonyms.regen.canonical import sha256_bytes, sha256_text
from tempmedbench_synonyms.regen.freeze import freeze
from tempmedbench_synonyms.regen.manifest import MANIFEST, verify_manifest
from tempmedbench_synonyms.regen.pipeline import prepare, regenerate
from tempmedbench_synonyms.regen.release import (
    EXPECTED,
    FULL_TABLE,
    SURFACE,
    SYNONYM_SURFACE,
    TABLE,
)
from tempmedbench_synonyms.testing import CANARY_KEY, FakeUts, FakeUtsData, FakeUtsServer


def run(*args: str | Path, env: dict[str, str | None] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, [str(a) for a in args], env=env)
    assert CANARY_KEY not in result.stdout + result.stderr
    return result.exit_code, result.stdout, result.stderr


class NeverFetched:
    """An atom source that fails the test if anything asks it for atoms."""

    name = "mrconso"

    def fetch(self, *args: Any) -> Any:
        raise AssertionError("the source was asked for atoms")


def tree(folder: Path) -> dict[str, bytes | None]:
    return {
        p.relative_to(folder).as_posix(): (p.read_bytes() if p.is_file() else None)
        for p in sorted(folder.rglob("*"))
    }


# --- 7. the manifest check names every bad file --------------------------------------------


def test_every_bad_file_is_named_in_one_error(mini: Path) -> None:
    lines = (mini / MANIFEST).read_text().splitlines()
    listed = {rel: digest for digest, rel in (line.split("  ", 1) for line in lines)}
    (mini / TABLE).write_bytes(b"{}\n")
    (mini / SURFACE).unlink()
    (mini / EXPECTED).write_bytes(b"changed\n")
    with pytest.raises(ManifestError) as info:
        verify_manifest(mini, required=[TABLE, SURFACE, EXPECTED])
    table_now, expected_now = sha256_bytes(b"{}\n"), sha256_bytes(b"changed\n")
    assert str(info.value) == (
        f"{MANIFEST}: 3 of the 7 listed files are missing or differ from it:\n"
        f"  {SURFACE}: listed in MANIFEST.sha256 but missing (expected sha256 {listed[SURFACE]})\n"
        f"  {EXPECTED}: differs from MANIFEST.sha256 (expected sha256 {listed[EXPECTED]}, "
        f"actual sha256 {expected_now})\n"
        f"  {TABLE}: differs from MANIFEST.sha256 (expected sha256 {listed[TABLE]}, "
        f"actual sha256 {table_now})"
    )
    assert [(e.path, e.expected, e.actual) for e in info.value.files] == [
        (SURFACE, listed[SURFACE], None),
        (EXPECTED, listed[EXPECTED], expected_now),
        (TABLE, listed[TABLE], table_now),
    ]
    before = tree(mini)
    code, out, err = run("regenerate", mini, "--mrconso", MINI_MRCONSO, "--json")
    assert code == 2
    assert json.loads(out)["message"] == str(info.value)
    assert err.startswith(f"error: {info.value}\n")
    assert tree(mini) == before


def test_the_list_of_bad_files_is_bounded(mini: Path, rehash: Rehash) -> None:
    for i in range(15):
        (mini / f"extra-{i:02d}.txt").write_text(str(i))
    rehash(mini)
    for i in range(15):
        (mini / f"extra-{i:02d}.txt").write_text("damaged")
    with pytest.raises(ManifestError) as info:
        verify_manifest(mini, required=[])
    lines = str(info.value).split("\n")
    assert lines[0] == f"{MANIFEST}: 15 of the 22 listed files are missing or differ from it:"
    assert [line.split(":")[0] for line in lines[1:]] == [
        *(f"  extra-{i:02d}.txt" for i in range(10)),
        "  and 5 more",
    ]
    assert len(info.value.files) == 15


# --- 8. the output folder is checked before any scan or fetch ------------------------------


def test_an_out_under_a_file_is_refused_before_any_scan(mini: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    before = tree(mini)
    for out in (blocker, blocker / "sub" / "dir"):
        with pytest.raises(BadInputError) as info:
            regenerate(mini, NeverFetched(), out_dir=out)  # type: ignore[arg-type]
        assert str(info.value) == (
            f"{blocker}: is not a folder: the output files cannot be written under it"
        )
    # The CLI: the MRCONSO file does not even exist, so a scan would have said so first.
    code, out, err = run(
        "regenerate", mini, "--mrconso", tmp_path / "MRCONSO.RRF", "--out", blocker / "x",
        "--json",
    )  # fmt: skip
    assert code == 2
    assert json.loads(out)["message"] == (
        f"{blocker}: is not a folder: the output files cannot be written under it"
    )
    assert err.splitlines()[-1] == (
        "hint: write the rebuilt files elsewhere with --out DIR, a folder you can write in"
    )
    assert tree(mini) == before
    assert blocker.read_text() == "x"


def test_a_read_only_out_is_refused_before_any_request(
    mini: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The folder is made read-only by refusing file creation in it (chmod does not stop root,
    which runs these tests in some containers)."""
    read_only = tmp_path / "read-only"
    read_only.joinpath("question_surface").mkdir(parents=True)
    read_only.joinpath("synonyms").mkdir()
    real_open = os.open

    def refusing_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if Path(path).is_relative_to(read_only) and flags & os.O_CREAT:
            raise PermissionError(13, "Permission denied")
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(files.os, "open", refusing_open)
    fake = FakeUts(FakeUtsData.from_mrconso(MINI_MRCONSO), api_key=CANARY_KEY)
    with FakeUtsServer(fake) as server:
        env = {"UMLS_API_KEY": CANARY_KEY, "UMLS_BASE_URL": server.base_url,
               "TEMPMEDBENCH_CACHE_DIR": str(tmp_path / "cache")}  # fmt: skip
        code, out, err = run("regenerate", mini, "--out", read_only, "--json", env=env)
    assert code == 2
    message = f"{read_only / 'question_surface'}: cannot write in this folder: Permission denied"
    assert json.loads(out)["message"] == message
    assert err.splitlines()[0] == f"error: {message}"
    assert fake.seen == []  # nothing was fetched, not even the release probe
    assert not (tmp_path / "cache").exists()


# --- 9. left-overs of a killed run ---------------------------------------------------------

OLD = 1_000_000_000.0  # a modification time long past (2001)


def test_a_run_removes_the_temporary_files_a_killed_run_left(mini: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    folder = out / "question_surface"
    ours = [
        folder / ".question_surface_synonym.jsonl.0123456789ab.tmp",
        out / "synonyms" / ".synonym_table_kept_full.json.ba9876543210.tmp",
    ]
    young = folder / ".young.0123456789ab.tmp"  # may belong to a run writing right now
    not_ours = [
        folder / ".x.tmp",  # no token
        folder / ".a.0123456789AB.tmp",  # upper-case hex: not what write_atomic makes
        folder / "a.0123456789ab.tmp",  # no leading dot
        folder / ".a.0123456789ab.tmp.keep",
    ]
    for path in [*ours, *not_ours, young]:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"half")
        if path != young:
            os.utime(path, (OLD, OLD))
    (folder / ".dir.0123456789ab.tmp").mkdir()  # not a regular file
    (folder / ".link.0123456789ab.tmp").symlink_to(mini / TABLE)
    os.utime(folder / ".link.0123456789ab.tmp", (OLD, OLD), follow_symlinks=False)
    code, stdout, err = run("regenerate", mini, "--mrconso", MINI_MRCONSO, "--out", out, "--json")
    assert code == 0
    note = f"removed 2 temporary file(s) left by an interrupted run: {ours[0]}, {ours[1]}"
    assert json.loads(stdout)["warnings"] == [note]
    assert f"  warning        {note}" in err.splitlines()
    assert [p.exists() for p in ours] == [False, False]
    assert [p.exists() for p in [*not_ours, young]] == [True] * 5
    assert (folder / ".dir.0123456789ab.tmp").is_dir()
    assert (folder / ".link.0123456789ab.tmp").is_symlink()
    assert (mini / TABLE).is_file()


def test_the_left_over_note_is_bounded(tmp_path: Path) -> None:
    names = [f".f{i:02d}.0123456789ab.tmp" for i in range(12)]
    for name in names:
        (tmp_path / name).write_bytes(b"")
        os.utime(tmp_path / name, (OLD, OLD))
    warnings: list[str] = []
    prepare([tmp_path], warnings, hint="")
    shown = ", ".join(str(tmp_path / name) for name in names[:10])
    assert warnings == [
        f"removed 12 temporary file(s) left by an interrupted run: {shown}, and 2 more"
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == []


# --- 10. freeze keeps the authors' hashes ---------------------------------------------------


def test_freeze_refuses_to_replace_the_hashes_without_force(mini: Path) -> None:
    before = tree(mini)
    with pytest.raises(BadInputError) as info:
        freeze(mini, NeverFetched())  # type: ignore[arg-type]
    assert str(info.value) == (
        f"{mini / EXPECTED}: exists already: freeze does not replace frozen hashes unless asked to"
    )
    assert info.value.hint == (
        "to check a regeneration against these hashes, run `regenerate`; to replace them, rerun "
        "freeze with --force (the previous file is kept as "
        "synonym_regeneration/expected_sha256.json.bak)"
    )
    # The CLI: the MRCONSO file does not exist, so a scan would have said so first.
    code, out, err = run("freeze", mini, "--mrconso", mini / "no-such-MRCONSO.RRF", "--json")
    assert code == 2
    assert json.loads(out)["message"] == str(info.value)
    assert err.splitlines()[-1] == f"hint: {info.value.hint}"
    assert tree(mini) == before


def test_freeze_force_keeps_a_backup_and_lists_what_changed(mini: Path, mrconso: Path) -> None:
    old = (mini / EXPECTED).read_bytes()
    old_doc = json.loads(old)
    text = mrconso.read_text(encoding="utf-8")
    mrconso.write_text(text.replace("|Graft of moonstone|", "|Graft of opal|"), encoding="utf-8")
    code, out, err = run("freeze", mini, "--mrconso", mrconso, "--force", "--json")
    assert code == 0
    backup = mini / (EXPECTED + ".bak")
    assert backup.read_bytes() == old
    new_doc = json.loads((mini / EXPECTED).read_text())
    assert json.loads(out)["replaced"] == {
        "backup": str(backup),
        "readable": True,
        "files": {
            rel: {"old": old_doc["files"][rel], "new": new_doc["files"][rel]}
            for rel in (SYNONYM_SURFACE, FULL_TABLE)
        },
        "concepts_changed": ["9990105000"],
        "concepts_added": [],
        "concepts_removed": [],
    }
    assert new_doc["concepts"]["9990105000"] == sha256_text("Graft of opal")
    lines = err.splitlines()
    assert f"  replaced       the previous hashes, kept as {backup}" in lines
    assert (
        f"  changed        {FULL_TABLE}: {old_doc['files'][FULL_TABLE]} -> "
        f"{new_doc['files'][FULL_TABLE]}"
    ) in lines
    assert lines[lines.index("  concepts       1 kept another synonym:") + 1] == "    9990105000"


def test_the_backup_is_named_in_the_unlisted_file_warning(mini: Path, mrconso: Path) -> None:
    assert run("freeze", mini, "--mrconso", mrconso, "--force", "--update-manifest", "-q")[0] == 0
    code, out, _ = run("check", mini, "--json")
    assert code == 1  # the rebuilt files are not there: freeze never writes them
    assert json.loads(out)["warnings"] == [
        f"{EXPECTED}.bak: not listed in {MANIFEST} (not part of the release); it holds the "
        "hashes `freeze --force` replaced: delete it before publishing"
    ]


def test_freeze_force_over_an_unreadable_file_and_a_first_freeze(mini: Path, mrconso: Path) -> None:
    (mini / EXPECTED).write_text("not json")
    report = freeze(mini, MrconsoSource(mrconso), force=True)
    assert report.replaced is not None
    assert (report.replaced["readable"], len(report.replaced["concepts_added"])) == (False, 10)
    assert (mini / (EXPECTED + ".bak")).read_text() == "not json"
    # No previous file: nothing to protect, no --force needed, no backup.
    (mini / EXPECTED).unlink()
    (mini / (EXPECTED + ".bak")).unlink()
    again = freeze(mini, MrconsoSource(mrconso))
    assert (again.exit_code, again.replaced) == (0, None)
    assert not (mini / (EXPECTED + ".bak")).exists()
    assert (mini / EXPECTED).read_bytes() == (
        ROOT / "fixtures/tempmedbench-mini" / EXPECTED
    ).read_bytes()


def test_freeze_force_says_when_nothing_changed_or_the_old_file_was_unreadable(
    mini: Path, mrconso: Path
) -> None:
    code, out, err = run("freeze", mini, "--mrconso", mrconso, "--force", "--json")
    assert code == 0
    assert json.loads(out)["replaced"]["files"] == {}
    assert "  unchanged      every hash is the same as before" in err.splitlines()
    (mini / EXPECTED).write_text("[1, 2]")
    (mini / (EXPECTED + ".bak")).unlink()  # moved away, as a second --force asks (finding 15)
    code, _, err = run("freeze", mini, "--mrconso", mrconso, "--force")
    lines = err.splitlines()
    assert "                 (the previous file could not be read as expected hashes)" in lines
    assert lines[lines.index("  concepts       10 were not in the previous hashes:") + 1] == (
        "    9990101009"
    )


def test_a_listed_file_swapped_for_a_fifo_after_the_check_is_named(
    mini: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tempmedbench_synonyms.regen import manifest

    def swapped(path: Path) -> str:
        raise files.not_regular_error(path, "a FIFO")

    monkeypatch.setattr(manifest, "sha256_file", swapped)
    with pytest.raises(ManifestError) as info:
        verify_manifest(mini, required=[])
    first = info.value.files[0]
    assert (first.path, first.problem) == (
        "README.md",
        f"is a FIFO, not a regular file (expected sha256 {first.expected})",
    )
    assert str(info.value).startswith(f"{MANIFEST}: 7 of the 7 listed files are missing or differ")
