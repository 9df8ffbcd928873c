"""The regeneration, end to end: release folder in, two verified files (or .unverified ones) out.

    open_release -> place_spans -> source.fetch -> choose -> rebuilt bytes -> hashes -> files

``regenerate`` and ``freeze`` fetch atoms; ``check`` only hashes files already rebuilt. None of
them prints: they return a report that the CLI renders.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tempmedbench_synonyms import jsonio
from tempmedbench_synonyms.atoms import Atom, AtomQuery, AtomSource, FetchResult
from tempmedbench_synonyms.canonical import sha256_bytes, sha256_file, sha256_text, table_bytes
from tempmedbench_synonyms.errors import (
    EXIT_CODES,
    BadInputError,
    Outcome,
    TempMedBenchError,
)
from tempmedbench_synonyms.files import (
    check_writable,
    file_kind,
    holds_bytes,
    leftovers_note,
    read_regular,
    remove_leftovers,
    write_atomic,
)
from tempmedbench_synonyms.manifest import MANIFEST, read_manifest, update_manifest_line
from tempmedbench_synonyms.release import (
    EXPECTED,
    FULL_TABLE,
    OUTPUTS,
    SYNONYM_SURFACE,
    UNVERIFIED_SUFFIX,
    ConceptEntry,
    ExpectedHashes,
    Release,
    load_expected,
    open_release,
)
from tempmedbench_synonyms.selection import Choice, choose
from tempmedbench_synonyms.surface import place_spans, span_texts, synonym_surface_bytes

log = logging.getLogger(__name__)


@dataclass
class FileReport:
    """One rebuilt file: its hashes, and where it was written (None when not written)."""

    expected: str | None
    actual: str | None
    match: bool
    written: str | None = None
    #: the file at ``written`` already held these bytes: it was left as it was
    unchanged: bool = False


@dataclass
class Report:
    """What a run found. ``to_json`` gives the public ``--json`` report (SPEC section 7)."""

    command: str
    outcome: Outcome
    release: str
    umls_release: str | None = None
    source: str | None = None
    files: dict[str, FileReport] = field(default_factory=dict)
    drifted: list[str] = field(default_factory=list)
    drift_reasons: dict[str, str] = field(default_factory=dict)
    changed: list[str] = field(default_factory=list)
    requests: int = 0
    cache_hits: int = 0
    message: str = ""
    hint: str | None = None
    concepts: int = 0
    routes: dict[str, int] = field(default_factory=dict)
    questions: int = 0
    spans: int = 0
    manifest_files: int = 0
    warnings: list[str] = field(default_factory=list)
    #: freeze --force: what replacing the previous expected_sha256.json changed (see freeze).
    replaced: dict[str, Any] | None = None
    #: with --mrconso: what was read (path, kind, zip members, parts)
    mrconso: dict[str, Any] | None = None
    #: sources the table names that the atom source holds no row of
    missing_sources: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.outcome]

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` report, ``schema_version`` and ``tool_version`` included."""
        return jsonio.versioned({
            "command": self.command,
            "outcome": self.outcome.value,
            "exit_code": self.exit_code,
            "release": self.release,
            "umls_release": self.umls_release,
            "source": self.source,
            "files": {
                path: {
                    "expected": f.expected,
                    "actual": f.actual,
                    "match": f.match,
                    "written": f.written,
                    "unchanged": f.unchanged,
                }
                for path, f in self.files.items()
            },
            "drifted": self.drifted,
            "drift_reasons": self.drift_reasons,
            "changed": self.changed,
            "requests": self.requests,
            "cache_hits": self.cache_hits,
            "message": self.message,
            "hint": self.hint,
            "counts": {
                "concepts": self.concepts,
                "routes": self.routes,
                "questions": self.questions,
                "spans": self.spans,
                "manifest_files": self.manifest_files,
            },
            "warnings": self.warnings,
            "replaced": self.replaced,
            "mrconso": self.mrconso,
            "missing_sources": self.missing_sources,
        })  # fmt: skip


@dataclass
class Rebuilt:
    """The two rebuilt files in memory, with what the report needs to say about them."""

    release: Release
    fetched: FetchResult
    choices: dict[str, Choice]
    #: The kept name of each concept key, None where it drifted.
    names: dict[str, str | None]
    data: dict[str, bytes]
    spans: int
    source_name: str


def atom_queries(concepts: Mapping[str, ConceptEntry]) -> dict[str, AtomQuery]:
    """The atom query of each concept key (SPEC section 3)."""
    return {key: AtomQuery(e.route, e.sab, e.ident) for key, e in concepts.items()}


def probe_cui(concepts: Mapping[str, ConceptEntry]) -> str:
    """The CUI of the release probe: the first concept's in sorted key order (SPEC section 3)."""
    return concepts[min(concepts)].cui


def wanted_release(release: Release, umls_release: str | None) -> str:
    """The UMLS release a run asks for: ``--umls-release``, else the table's."""
    if umls_release is not None and not umls_release.strip():
        raise BadInputError("--umls-release is empty", key="--umls-release")
    return umls_release or release.table.umls_release


def rebuild(release: Release, source: AtomSource, *, umls_release: str | None = None) -> Rebuilt:
    """Fetch the atoms, choose the synonyms and build both files' bytes (nothing is written)."""
    concepts = release.table.concepts
    spans_by_qid = place_spans(concepts, release.surface)
    texts = span_texts(spans_by_qid)
    queries = atom_queries(concepts)
    wanted = wanted_release(release, umls_release)
    if concepts:
        probe = probe_cui(concepts)
        fetched = source.fetch(wanted, probe, sorted(set(queries.values())))
    else:
        fetched = FetchResult(umls_release=wanted, atoms={})
    choices = {
        key: choose(entry, fetched.atoms.get(queries[key]), texts.get(key, ()))
        for key, entry in concepts.items()
    }
    names = {key: (c.atom.name if c.atom else None) for key, c in choices.items()}
    # A new top level and new entries; the values inside them are shared with the table as read,
    # which nothing here changes (a deep copy took a fifth of a warm rerun).
    full = dict(release.table_raw)
    full["concepts"] = {
        key: {**entry, "synonym": _synonym(choices[key].atom)}
        for key, entry in release.table_raw["concepts"].items()
    }
    data = {
        SYNONYM_SURFACE: synonym_surface_bytes(release.surface, spans_by_qid, names),
        FULL_TABLE: table_bytes(full),
    }
    n_spans = sum(len(v) for v in spans_by_qid.values())
    return Rebuilt(release, fetched, choices, names, data, n_spans, source.name)


def _synonym(atom: Atom | None) -> dict[str, str] | None:
    return None if atom is None else {"aui": atom.aui, "name": atom.name, "tty": atom.tty}


def route_counts(concepts: Mapping[str, ConceptEntry]) -> dict[str, int]:
    """How many concepts take each route, for the report."""
    routes: dict[str, int] = {}
    for e in concepts.values():
        routes[e.route] = routes.get(e.route, 0) + 1
    return dict(sorted(routes.items()))


def span_count(concepts: Mapping[str, ConceptEntry]) -> int:
    """How many spans the table places, for the report."""
    return sum(len(s) for e in concepts.values() for s in e.spans.values())


def _base_report(command: str, rebuilt: Rebuilt) -> Report:
    release = rebuilt.release
    drifted = sorted(k for k, c in rebuilt.choices.items() if c.atom is None)
    return Report(
        command,
        outcome=Outcome.VERIFIED,
        release=str(release.folder),
        umls_release=rebuilt.fetched.umls_release,
        source=rebuilt.source_name,
        drifted=drifted,
        drift_reasons={k: rebuilt.choices[k].reason for k in drifted},
        requests=rebuilt.fetched.requests,
        cache_hits=rebuilt.fetched.cache_hits,
        concepts=len(release.table.concepts),
        routes=route_counts(release.table.concepts),
        questions=len(release.surface),
        spans=rebuilt.spans,
        manifest_files=release.files_checked,
        warnings=release.warnings + rebuilt.fetched.warnings,
        mrconso=rebuilt.fetched.source_details,
        missing_sources=list(rebuilt.fetched.missing_sources),
    )


def _changed(names: Mapping[str, str | None], expected: ExpectedHashes) -> list[str]:
    """Concepts (not drifted) whose kept name hashes differently from the frozen one."""
    if expected.concepts is None:
        return []
    return sorted(
        key for key, name in names.items()
        if name is not None and expected.concepts.get(key) != sha256_text(name)
    )  # fmt: skip


def _prepare(
    folders: list[Path], warnings: list[str], *, hint: str, targets: list[Path] | None = None
) -> None:
    """Before anything is scanned or fetched: each folder a run writes in must be writable (it
    is created if missing), each file it may write (``targets``) absent or a regular file (a
    folder or a FIFO there would stop the run after its first file), and the temporary files an
    interrupted run left there are removed, with one warning that says so."""
    for target in targets or []:
        try:
            mode = os.lstat(target).st_mode
        except OSError:  # absent, or under a folder that is missing, not one or unreadable:
            continue  # the check of the folders below says so
        if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
            raise BadInputError(
                f"is {file_kind(mode)}, not a regular file: this run writes a file there",
                path=target,
                hint=hint,
            )
    for folder in folders:
        try:
            check_writable(folder)
        except OSError as err:
            blocker = next((p for p in (folder, *folder.parents) if os.path.lexists(p)), None)
            if blocker is not None and not blocker.is_dir():
                raise BadInputError(
                    "is not a folder: the output files cannot be written under it",
                    path=blocker,
                    hint=hint,
                ) from None
            raise BadInputError(
                f"cannot write in this folder: {err.strerror or err}", path=folder, hint=hint
            ) from None
    removed = [p for folder in folders for p in remove_leftovers(folder)]
    if removed:
        warnings.append(leftovers_note(removed))


def _place(root: Path, rel: str, data: bytes, match: bool) -> tuple[str, bool]:
    """A matching file goes to its final path (and a stale .unverified goes); others beside it.
    Returns the path and whether it already held these bytes (then it is not rewritten)."""
    final = root / rel
    unverified = root / (rel + UNVERIFIED_SUFFIX)
    target = final if match else unverified
    unchanged = holds_bytes(target, data)
    try:
        if not unchanged:
            write_atomic(target, data)
        if match:
            unverified.unlink(missing_ok=True)
    except OSError as err:
        raise BadInputError(
            f"cannot write this file: {err.strerror or err}",
            path=target,
            hint="write the rebuilt files elsewhere with --out DIR",
        ) from None
    return str(target), unchanged


def regenerate(
    release_dir: Path,
    source: AtomSource,
    *,
    out_dir: Path | None = None,
    umls_release: str | None = None,
) -> Report:
    """Rebuild both files, verify them against ``expected_sha256.json`` and write them."""
    opened = open_release(release_dir)
    expected = load_expected(opened.folder)
    root = Path(out_dir) if out_dir is not None else opened.folder
    _prepare(
        sorted({(root / rel).parent for rel in OUTPUTS}),
        opened.warnings,
        hint="write the rebuilt files elsewhere with --out DIR, a folder you can write in",
        targets=[root / name for rel in OUTPUTS for name in (rel, rel + UNVERIFIED_SUFFIX)],
    )
    rebuilt = rebuild(opened, source, umls_release=umls_release)
    report = _base_report("regenerate", rebuilt)
    report.changed = _changed(rebuilt.names, expected)
    for rel in OUTPUTS:
        data = rebuilt.data[rel]
        actual = sha256_bytes(data)
        match = actual == expected.files[rel]
        written, unchanged = _place(root, rel, data, match)
        report.files[rel] = FileReport(expected.files[rel], actual, match, written, unchanged)
    _conclude(report, expected)
    return report


def check(release_dir: Path, *, out_dir: Path | None = None) -> Report:
    """Verify files already rebuilt against ``expected_sha256.json``, with no network."""
    opened = open_release(release_dir)
    expected = load_expected(opened.folder)
    root = Path(out_dir) if out_dir is not None else opened.folder
    report = Report(
        "check",
        outcome=Outcome.VERIFIED,
        release=str(opened.folder),
        umls_release=expected.umls_release,
        concepts=len(opened.table.concepts),
        routes=route_counts(opened.table.concepts),
        questions=len(opened.surface),
        # as the table records them (check does not place them: regenerate did)
        spans=span_count(opened.table.concepts),
        manifest_files=opened.files_checked,
        warnings=list(opened.warnings),
    )
    for rel in OUTPUTS:
        path = root / rel
        actual = sha256_file(path) if path.is_file() else None
        match = actual == expected.files[rel]
        report.files[rel] = FileReport(expected.files[rel], actual, match, None)
    full = root / FULL_TABLE
    if full.is_file():
        names = _names_from_full_table(full)
        if names is not None:
            report.drifted = sorted(k for k, n in names.items() if n is None)
            report.changed = _changed(names, expected)
    _conclude(report, expected)
    if any(f.actual is None for f in report.files.values()):
        report.hint = (
            "a rebuilt file is missing: run `tempmedbench-regenerate-synonyms RELEASE` first "
            "(with --out DIR if you used it, pass the same --out to check)"
        )
    return report


def _names_from_full_table(path: Path) -> dict[str, str | None] | None:
    """Kept names from a rebuilt full table, for the diagnosis; None if it cannot be read."""
    try:
        data = jsonio.parse_json(read_regular(path).decode("utf-8"), path=path)
        out: dict[str, str | None] = {}
        for key, entry in data["concepts"].items():
            syn = entry.get("synonym")
            name = syn.get("name") if isinstance(syn, dict) else None
            if name is not None:
                name.encode("utf-8")  # a str that UTF-8 can encode, or an error below
            out[key] = name
        return out
    except (ValueError, KeyError, TypeError, AttributeError, OSError, TempMedBenchError):
        log.warning("%s cannot be read as a full table; no per-concept diagnosis", path)
        return None


def _conclude(report: Report, expected: ExpectedHashes) -> None:
    bad = [rel for rel, f in report.files.items() if not f.match]
    if not bad and not report.drifted:
        report.outcome = Outcome.VERIFIED
        report.message = "both files match expected_sha256.json"
        return
    report.outcome = Outcome.MISMATCH
    parts = []
    missing = [rel for rel in bad if report.files[rel].actual is None]
    if missing:
        parts.append(f"{len(missing)} of {len(report.files)} files missing")
    if len(bad) > len(missing):
        parts.append(
            f"{len(bad) - len(missing)} of {len(report.files)} files differ from "
            "expected_sha256.json"
        )
    if report.drifted:
        parts.append(f"{len(report.drifted)} concept(s) drifted")
    if report.changed:
        parts.append(f"{len(report.changed)} concept(s) got another synonym")
    report.message = "; ".join(parts)
    if report.umls_release and report.umls_release != expected.umls_release:
        report.hint = (
            f"the hashes were frozen with UMLS {expected.umls_release} and this run used "
            f"{report.umls_release}: synonyms change between UMLS releases; use "
            f"--umls-release {expected.umls_release}, or none if the table names it"
        )
    elif report.missing_sources and (report.drifted or report.changed):
        report.hint = (
            f"your MRCONSO.RRF holds no row of source(s) {', '.join(report.missing_sources)}, "
            "which the table names: it may be a subset (MetamorphoSys can leave sources out); "
            f"use the full MRCONSO.RRF of UMLS {expected.umls_release}"
        )
    elif report.drifted or report.changed:
        report.hint = (
            "the atoms you fetched differ from the ones the authors froze: check that your "
            f"MRCONSO.RRF or UTS answers come from UMLS {expected.umls_release} in full "
            "(not a subset without these sources), then report the drift to the benchmark "
            "authors; the .unverified files show what was rebuilt"
        )
    elif expected.concepts is None:
        report.hint = (
            "expected_sha256.json has no per-concept hashes, so which concepts changed cannot "
            "be told; the .unverified files show what was rebuilt"
        )
    else:
        report.hint = (
            "no concept changed its synonym, yet a file differs: the release folder or this "
            "tool's version may not match the one the hashes were frozen with"
        )


BACKUP_SUFFIX = ".bak"


def freeze(
    release_dir: Path,
    source: AtomSource,
    *,
    umls_release: str | None = None,
    update_manifest: bool = False,
    force: bool = False,
) -> Report:
    """Write ``expected_sha256.json`` from a regeneration (for release authors).

    Refuses (outcome mismatch, nothing written) when any concept drifted: frozen hashes must
    describe a complete synonym surface. The rebuilt files themselves are not written into the
    release, which must never carry UMLS strings; run ``regenerate`` to get them.

    An existing ``expected_sha256.json`` holds the authors' hashes: it is replaced only with
    ``force`` (else bad input, before anything is fetched), and then kept beside the new one as
    ``expected_sha256.json.bak``; the report's ``replaced`` says which hashes changed. A
    ``.bak`` that exists already is never overwritten (bad input, before anything is fetched:
    it may hold the authors' original hashes).
    """
    opened = open_release(release_dir, with_expected=False)
    target = opened.folder / EXPECTED
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
        backup = target.with_name(target.name + BACKUP_SUFFIX)
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
        previous = read_regular(target, what="the previous expected hashes")
    _prepare(
        [target.parent, opened.folder],
        opened.warnings,
        hint="freeze writes synonym_regeneration/expected_sha256.json (and, with "
        "--update-manifest, MANIFEST.sha256) into the release folder: make it writable",
    )
    rebuilt = rebuild(opened, source, umls_release=umls_release)
    report = _base_report("freeze", rebuilt)
    if report.drifted:
        report.outcome = Outcome.MISMATCH
        report.message = f"{len(report.drifted)} concept(s) drifted; nothing was frozen"
        report.hint = "fix the table (or the atom source) until every concept keeps a synonym"
        return report
    assert rebuilt.fetched.umls_release
    expected = {
        "format_version": 1,
        "umls_release": rebuilt.fetched.umls_release,
        "files": {rel: sha256_bytes(rebuilt.data[rel]) for rel in OUTPUTS},
        "concepts": {
            key: sha256_text(c.atom.name)
            for key, c in sorted(rebuilt.choices.items())
            if c.atom is not None
        },
    }
    data = table_bytes(expected)
    folder = opened.folder
    if previous is not None:
        backup = target.with_name(target.name + BACKUP_SUFFIX)
        write_atomic(backup, previous)
        report.replaced = _replaced(previous, expected, backup)
    write_atomic(target, data)
    for rel in OUTPUTS:
        report.files[rel] = FileReport(expected["files"][rel], expected["files"][rel], True)  # type: ignore[index]
    report.message = f"wrote {EXPECTED}"
    if update_manifest:
        update_manifest_line(folder, EXPECTED, sha256_bytes(data))
        report.message += f" and updated its line in {MANIFEST}"
    else:
        listed = read_manifest(folder).get(EXPECTED)
        if listed != sha256_bytes(data):
            report.hint = (
                f"{MANIFEST} does not match the new {EXPECTED}; rerun with --update-manifest "
                "or update the manifest yourself before publishing"
            )
    return report


def _replaced(previous: bytes, new: dict[str, Any], backup: Path) -> dict[str, Any]:
    """What replacing ``expected_sha256.json`` changes: the files and concepts whose hash
    differs, the concepts added and removed (``previous`` as read, even if malformed)."""
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
