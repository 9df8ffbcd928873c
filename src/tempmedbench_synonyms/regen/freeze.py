"""``freeze``: for release authors, ``expected_sha256.json`` written from a regeneration, and
``regenerate_synonyms.py`` beside it (the launcher the dataset card's layout lists)."""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path
from typing import Any

from tempmedbench_synonyms import jsonio
from tempmedbench_synonyms.atoms import AtomSource
from tempmedbench_synonyms.errors import BadInputError, Outcome
from tempmedbench_synonyms.files import write_atomic
from tempmedbench_synonyms.regen.canonical import sha256_bytes, sha256_text, table_bytes
from tempmedbench_synonyms.regen.manifest import MANIFEST, read_manifest, update_manifest_line
from tempmedbench_synonyms.regen.pipeline import base_report, prepare, rebuild
from tempmedbench_synonyms.regen.release import (
    EXPECTED,
    LAUNCHER,
    OUTPUTS,
    open_release,
    read_release_file,
)
from tempmedbench_synonyms.regen.report import FileReport, Report

BACKUP_SUFFIX = ".bak"


def launcher_bytes() -> bytes:
    """``synonym_regeneration/regenerate_synonyms.py``: a stdlib-only script running
    ``tempmedbench-regenerate-synonyms`` on its release folder, or saying how to install (exit 2).
    """
    return (
        resources.files("tempmedbench_synonyms.regen") / "regenerate_synonyms.py.txt"
    ).read_bytes()


def freeze(
    release_dir: Path,
    source: AtomSource,
    *,
    umls_release: str | None = None,
    update_manifest: bool = False,
    force: bool = False,
) -> Report:
    """Write ``expected_sha256.json`` and the launcher from a regeneration (docs/reference.md,
    ``freeze``); a refusal (drift, an existing file without ``force``) writes nothing."""
    opened = open_release(release_dir, with_expected=False)
    target = opened.folder / EXPECTED
    backup = target.with_name(target.name + BACKUP_SUFFIX)
    previous: bytes | None = None
    if os.path.lexists(target):
        if not force:
            raise BadInputError(
                "exists already: freeze does not replace frozen hashes unless asked to",
                path=target,
                hint="to check a regeneration against these hashes, run `regenerate`; to "
                "replace them, rerun freeze with --force (the previous file is kept as "
                f"{EXPECTED}{BACKUP_SUFFIX})",
            )
        if os.path.lexists(backup):
            # A second forced freeze would replace the authors' original hashes with the first
            # freeze's: the backup is never overwritten (numbered backups would pile up unseen).
            raise BadInputError(
                "exists already: it keeps the hashes an earlier `freeze --force` replaced, and "
                "this freeze would overwrite them",
                path=backup,
                hint=f"move {backup.name} away (or delete it, if its hashes are no longer "
                "needed), then rerun freeze --force",
            )
        previous = read_release_file(target, what="the expected hashes")
    prepare(
        [target.parent, opened.folder],
        opened.warnings,
        hint="freeze writes synonym_regeneration/expected_sha256.json (and, with "
        "--update-manifest, MANIFEST.sha256) into the release folder: make it writable",
    )
    rebuilt = rebuild(opened, source, umls_release=umls_release)
    report = base_report("freeze", rebuilt)
    if report.drifted:
        report.outcome = Outcome.MISMATCH
        report.message = f"{len(report.drifted)} concept(s) drifted; nothing was frozen"
        report.hint = "fix the table (or the atom source) until every concept keeps a synonym"
        return report
    assert rebuilt.fetched.umls_release
    hashes = {rel: sha256_bytes(rebuilt.data[rel]) for rel in OUTPUTS}
    expected = {
        "format_version": 1,
        "umls_release": rebuilt.fetched.umls_release,
        "files": hashes,
        "concepts": {
            key: sha256_text(c.atom.name)
            for key, c in sorted(rebuilt.choices.items())
            if c.atom is not None
        },
    }
    data = table_bytes(expected)
    if previous is not None:
        write_atomic(backup, previous)
        report.replaced = _replaced(previous, expected, backup)
    write_atomic(target, data)
    launcher = launcher_bytes()
    write_atomic(opened.folder / LAUNCHER, launcher)
    report.files = {rel: FileReport(digest, digest, True) for rel, digest in hashes.items()}
    report.message = f"wrote {EXPECTED} and {LAUNCHER}"
    written = {EXPECTED: sha256_bytes(data), LAUNCHER: sha256_bytes(launcher)}
    if update_manifest:
        for rel, digest in written.items():
            update_manifest_line(opened.folder, rel, digest)
        report.message += f" and updated their lines in {MANIFEST}"
    else:
        listed = read_manifest(opened.folder)
        stale = [rel for rel, digest in written.items() if listed.get(rel) != digest]
        if stale:
            report.hint = (
                f"{MANIFEST} does not match the new {' and '.join(stale)}; rerun with "
                "--update-manifest or update the manifest yourself before publishing"
            )
    return report


def _replaced(previous: bytes, new: dict[str, Any], backup: Path) -> dict[str, Any]:
    """The files and concepts whose hash differs, and those added and removed."""
    try:
        old = jsonio.parse_json(previous.decode("utf-8"), path=EXPECTED)
    except (UnicodeDecodeError, BadInputError):
        old = None
    old_files = old.get("files") if isinstance(old, dict) else None
    old_concepts = old.get("concepts") if isinstance(old, dict) else None
    old_files = old_files if isinstance(old_files, dict) else {}
    old_concepts = old_concepts if isinstance(old_concepts, dict) else {}
    files: dict[str, str] = new["files"]
    concepts: dict[str, str] = new["concepts"]
    return {
        "backup": str(backup),
        "readable": isinstance(old, dict),
        "files": {
            rel: {"old": old_files.get(rel), "new": digest}
            for rel, digest in sorted(files.items())
            if old_files.get(rel) != digest
        },
        "concepts_changed": sorted(
            k for k in concepts if k in old_concepts and old_concepts[k] != concepts[k]
        ),
        "concepts_added": sorted(k for k in concepts if k not in old_concepts),
        "concepts_removed": sorted(str(k) for k in old_concepts if k not in concepts),
    }
