"""manifest: SPEC section 1's gate, MANIFEST.sha256 read strictly and every listed file checked."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import pytest

from tempmedbench_synonyms.errors import BadInputError, ManifestError
from tempmedbench_synonyms.regen.manifest import (
    MANIFEST_LIMIT,
    read_manifest,
    update_manifest_line,
    verify_manifest,
)
from tempmedbench_synonyms.regen.release import EXPECTED, TABLE, open_release


def test_binary_mode_star_is_accepted(mini: Path) -> None:
    text = (mini / "MANIFEST.sha256").read_text()
    (mini / "MANIFEST.sha256").write_text(text.replace("  README.md", " *README.md"))
    readme = hashlib.sha256((mini / "README.md").read_bytes()).hexdigest()
    assert read_manifest(mini)["README.md"] == readme


def test_a_changed_file_is_refused_with_both_hashes(mini: Path) -> None:
    (mini / "README.md").write_text("changed\n")
    expected = read_manifest(mini)["README.md"]
    with pytest.raises(ManifestError) as info:
        open_release(mini)
    err = info.value
    assert (err.path, err.expected) == ("README.md", expected)
    assert err.actual == hashlib.sha256(b"changed\n").hexdigest()
    assert str(err) == (
        f"README.md: differs from MANIFEST.sha256 (expected sha256 {expected}, "
        f"actual sha256 {err.actual})"
    )
    assert err.exit_code == 2


def test_a_missing_listed_file_is_refused(mini: Path) -> None:
    (mini / "README.md").unlink()
    with pytest.raises(ManifestError, match=r"^README.md: listed in MANIFEST.sha256 but missing"):
        open_release(mini)


@pytest.mark.parametrize(
    "path,problem",
    [
        ("/etc/passwd", "is an absolute path"),
        ("../outside.txt", "is a path with '..'"),
        ("synonyms/../../x", "is a path with '..'"),
        ("C:/x", "is an absolute path"),
        ("a\\b", "is a path with a backslash"),
    ],
)
def test_unsafe_manifest_paths_are_refused(mini: Path, path: str, problem: str) -> None:
    lines = len((mini / "MANIFEST.sha256").read_text().splitlines())
    with open(mini / "MANIFEST.sha256", "a") as f:
        f.write(f"{'0' * 64}  {path}\n")
    with pytest.raises(ManifestError) as info:
        read_manifest(mini)
    assert info.value.line == lines + 1
    assert f"{path!r} {problem}" in str(info.value)


def test_a_path_leaving_through_a_link_is_refused(mini: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.txt").write_text("x")
    os.symlink(outside, mini / "link")
    with open(mini / "MANIFEST.sha256", "a") as f:
        f.write(f"{'0' * 64}  link/x.txt\n")
    with pytest.raises(ManifestError, match="leaves the release folder through a link"):
        read_manifest(mini)


@pytest.mark.parametrize(
    "line,problem",
    [
        ("A" * 64 + "  README.md", "manifest hashes are lowercase hex"),
        ("abc  README.md", "not a manifest line"),
        ("0" * 64 + "  MANIFEST.sha256", "the manifest lists itself"),
    ],
)
def test_malformed_manifest_lines(mini: Path, line: str, problem: str) -> None:
    (mini / "MANIFEST.sha256").write_text(line + "\n")
    with pytest.raises(ManifestError, match=problem) as info:
        read_manifest(mini)
    assert info.value.line == 1


def test_a_path_listed_twice(mini: Path) -> None:
    text = (mini / "MANIFEST.sha256").read_text()
    (mini / "MANIFEST.sha256").write_text(text + text.splitlines()[0] + "\n")
    with pytest.raises(ManifestError, match=r"'README\.md' is listed twice"):
        read_manifest(mini)


def test_unlisted_files_warn_except_outputs(mini: Path) -> None:
    (mini / "stray.txt").write_text("x")
    (mini / "synonyms" / "synonym_table_kept_full.json").write_text("{}")
    (mini / "question_surface" / "question_surface_synonym.jsonl.unverified").write_text("")
    release = open_release(mini)
    assert release.files_checked == 7
    assert release.warnings == [
        "stray.txt: not listed in MANIFEST.sha256 (not part of the release)"
    ]


def test_unlisted_files_warn_with_their_note_unless_allowed(mini: Path) -> None:
    (mini / "a.txt").write_text("a")
    (mini / "b.txt").write_text("b")
    (mini / "c.txt").write_text("c")
    checked, warnings = verify_manifest(
        mini, required=[TABLE], allowed_extra=["c.txt"], notes={"b.txt": "; a note"}
    )
    assert checked == 7
    assert warnings == [
        "a.txt: not listed in MANIFEST.sha256 (not part of the release)",
        "b.txt: not listed in MANIFEST.sha256 (not part of the release); a note",
    ]


def test_a_required_file_not_listed(mini: Path) -> None:
    lines = (mini / "MANIFEST.sha256").read_text().splitlines(keepends=True)
    (mini / "MANIFEST.sha256").write_text("".join(x for x in lines if EXPECTED not in x))
    with pytest.raises(ManifestError, match="does not list 'synonym_regeneration/expected"):
        open_release(mini)


@pytest.mark.parametrize(
    "path,problem",
    [
        ("./README.md", "is not a plain relative path"),
        ("synonyms//x.json", "is not a plain relative path"),
        ("synonyms/", "is not a plain relative path"),
        ("a\x00b", "is a path with a control character"),
    ],
)
def test_non_plain_manifest_paths_are_refused(mini: Path, path: str, problem: str) -> None:
    with open(mini / "MANIFEST.sha256", "a") as f:
        f.write(f"{'0' * 64}  {path}\n")
    with pytest.raises(ManifestError, match=re.escape(f"{path!r} {problem}")):
        read_manifest(mini)


def test_a_link_loop_is_refused(mini: Path) -> None:
    os.symlink(mini / "loop", mini / "loop")
    with open(mini / "MANIFEST.sha256", "a") as f:
        f.write(f"{'0' * 64}  loop/x\n")
    with pytest.raises(ManifestError, match="leaves the release folder through a link"):
        read_manifest(mini)


def test_update_manifest_line_replaces_even_a_binary_mode_line(mini: Path) -> None:
    path = mini / "MANIFEST.sha256"
    before = path.read_text().replace(f"  {EXPECTED}", f" *{EXPECTED}").splitlines()
    path.write_text("\n".join(before) + "\n")
    update_manifest_line(mini, EXPECTED, "0" * 64)
    after = path.read_text().splitlines()
    assert [x for x in after if EXPECTED in x] == [f"{'0' * 64}  {EXPECTED}"]
    assert [x for x in after if EXPECTED not in x] == [x for x in before if EXPECTED not in x]
    update_manifest_line(mini, "new/file.txt", "1" * 64)
    assert path.read_text().splitlines()[-1] == f"{'1' * 64}  new/file.txt"


def test_a_manifest_larger_than_16_mib_is_bad_input_read_no_further(mini: Path) -> None:
    """A sparse 16 MiB + 1 byte MANIFEST.sha256 (a 3 GB one was read whole: MemoryError)."""
    manifest = mini / "MANIFEST.sha256"
    with manifest.open("r+b") as f:
        f.truncate(MANIFEST_LIMIT + 1)
    for read in (lambda: read_manifest(mini), lambda: update_manifest_line(mini, TABLE, "0" * 64)):
        with pytest.raises(BadInputError) as exc:
            read()
        assert str(exc.value) == (
            f"{manifest}: 16777217 bytes (16 MiB), over the limit of 16777216 bytes (16 MiB) for "
            "the release manifest"
        )
    assert manifest.stat().st_size == MANIFEST_LIMIT + 1


def test_pythons_cache_of_a_listed_script_is_not_warned_about(mini: Path) -> None:
    """pip byte-compiles the demo release's launcher when it installs the wheel (so does an
    import): its __pycache__ is no file of the release. Bytecode of a file not listed, or
    beside no listed script, is warned about like any other file."""
    cache = mini / "synonym_regeneration" / "__pycache__"
    cache.mkdir()
    (cache / "regenerate_synonyms.cpython-311.pyc").write_bytes(b"\x00")
    (cache / "regenerate_synonyms.cpython-312.opt-1.pyc").write_bytes(b"\x00")
    (cache / "other.cpython-311.pyc").write_bytes(b"\x00")
    (mini / "__pycache__").mkdir()
    (mini / "__pycache__" / "regenerate_synonyms.cpython-311.pyc").write_bytes(b"\x00")
    checked, warnings = verify_manifest(mini, required=[TABLE])
    assert checked == 7
    assert warnings == [
        "__pycache__/regenerate_synonyms.cpython-311.pyc: not listed in MANIFEST.sha256 (not "
        "part of the release)",
        "synonym_regeneration/__pycache__/other.cpython-311.pyc: not listed in MANIFEST.sha256 "
        "(not part of the release)",
    ]
