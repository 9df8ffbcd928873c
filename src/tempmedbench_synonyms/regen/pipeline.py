"""The regeneration, end to end (docs/architecture.md, "The data's way through the code"):
``regenerate``, ``freeze`` and ``check`` return a report that the CLI renders; none prints."""

from __future__ import annotations

import logging
import os
import stat
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tempmedbench_synonyms import files, jsonio
from tempmedbench_synonyms.atoms import Atom, AtomQuery, AtomSource, FetchResult
from tempmedbench_synonyms.errors import BadInputError, Outcome, TempMedBenchError
from tempmedbench_synonyms.regen.canonical import sha256_bytes, sha256_text, table_bytes
from tempmedbench_synonyms.regen.release import (
    FULL_TABLE,
    OUTPUTS,
    SYNONYM_SURFACE,
    UNVERIFIED_SUFFIX,
    ConceptEntry,
    ExpectedHashes,
    Release,
    load_expected,
    open_release,
    read_release_file,
)
from tempmedbench_synonyms.regen.report import FileReport, Report, conclude
from tempmedbench_synonyms.regen.selection import Choice, choose
from tempmedbench_synonyms.regen.surface import place_spans, span_texts, synonym_surface_bytes

log = logging.getLogger(__name__)


@dataclass
class Rebuilt:
    """The two rebuilt files in memory, with what the report needs to say about them."""

    release: Release
    fetched: FetchResult
    choices: dict[str, Choice]
    #: The kept name of each concept key, None where it drifted.
    names: dict[str, str | None]
    data: dict[str, bytes]
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
        fetched = source.fetch(wanted, probe_cui(concepts), sorted(set(queries.values())))
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
    return Rebuilt(release, fetched, choices, names, data, source.name)


def _synonym(atom: Atom | None) -> dict[str, str] | None:
    return None if atom is None else {"aui": atom.aui, "name": atom.name, "tty": atom.tty}


def release_report(command: str, outcome: Outcome, opened: Release) -> Report:
    """A report of ``opened`` as read (its counts, its warnings), which the run then fills in."""
    concepts = opened.table.concepts
    routes = Counter(e.route for e in concepts.values())
    return Report(
        command,
        outcome,
        str(opened.folder),
        concepts=len(concepts),
        routes=dict(sorted(routes.items())),
        questions=len(opened.surface),
        spans=sum(len(s) for e in concepts.values() for s in e.spans.values()),
        manifest_files=opened.files_checked,
        warnings=list(opened.warnings),
    )


def base_report(command: str, rebuilt: Rebuilt) -> Report:
    """The report of a regeneration or a freeze: what was fetched and which concepts drifted."""
    report = release_report(command, Outcome.VERIFIED, rebuilt.release)
    fetched = rebuilt.fetched
    report.umls_release = fetched.umls_release
    report.source = rebuilt.source_name
    report.drifted = sorted(k for k, c in rebuilt.choices.items() if c.atom is None)
    report.drift_reasons = {k: rebuilt.choices[k].reason for k in report.drifted}
    report.requests = fetched.requests
    report.cache_hits = fetched.cache_hits
    report.warnings += fetched.warnings
    report.mrconso = fetched.source_details
    report.missing_sources = list(fetched.missing_sources)
    return report


def _changed(names: Mapping[str, str | None], expected: ExpectedHashes) -> list[str]:
    """Concepts (not drifted) whose kept name hashes differently from the frozen one."""
    if expected.concepts is None:
        return []
    return sorted(
        key for key, name in names.items()
        if name is not None and expected.concepts.get(key) != sha256_text(name)
    )  # fmt: skip


def prepare(
    folders: list[Path], warnings: list[str], *, hint: str, targets: list[Path] | None = None
) -> None:
    """Before any scan or fetch: every output folder writable (made if missing), each ``targets``
    file absent or regular, and an interrupted run's temporary files removed (one warning)."""
    for target in targets or []:
        try:
            mode = os.lstat(target).st_mode
        except OSError:  # absent, or under a folder that is missing, not one or unreadable:
            continue  # the check of the folders below says so
        if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
            raise BadInputError(
                f"is {files.file_kind(mode)}, not a regular file: this run writes a file there",
                path=target,
                hint=hint,
            )
    for folder in folders:
        try:
            files.check_writable(folder)
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
    note = files.remove_leftovers(folders)
    if note:
        warnings.append(note)


def _place(root: Path, rel: str, data: bytes, match: bool) -> tuple[str, bool]:
    """A matching file to its final path (a stale .unverified removed), others beside it; the
    path and whether it already held these bytes (then not rewritten)."""
    final = root / rel
    unverified = root / (rel + UNVERIFIED_SUFFIX)
    target = final if match else unverified
    unchanged = files.holds_bytes(target, data)
    try:
        if not unchanged:
            files.write_atomic(target, data)
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
    opened = open_release(release_dir)
    expected = load_expected(opened.folder)
    root = Path(out_dir) if out_dir is not None else opened.folder
    prepare(
        sorted({(root / rel).parent for rel in OUTPUTS}),
        opened.warnings,
        hint="write the rebuilt files elsewhere with --out DIR, a folder you can write in",
        targets=[root / name for rel in OUTPUTS for name in (rel, rel + UNVERIFIED_SUFFIX)],
    )
    rebuilt = rebuild(opened, source, umls_release=umls_release)
    report = base_report("regenerate", rebuilt)
    report.changed = _changed(rebuilt.names, expected)
    for rel in OUTPUTS:
        data = rebuilt.data[rel]
        actual = sha256_bytes(data)
        match = actual == expected.files[rel]
        written, unchanged = _place(root, rel, data, match)
        report.files[rel] = FileReport(expected.files[rel], actual, match, written, unchanged)
    conclude(report, expected)
    return report


def check(release_dir: Path, *, out_dir: Path | None = None) -> Report:
    opened = open_release(release_dir)
    expected = load_expected(opened.folder)
    root = Path(out_dir) if out_dir is not None else opened.folder
    report = release_report("check", Outcome.VERIFIED, opened)
    report.umls_release = expected.umls_release
    for rel in OUTPUTS:
        path = root / rel
        actual = files.sha256_file(path) if path.is_file() else None
        match = actual == expected.files[rel]
        report.files[rel] = FileReport(expected.files[rel], actual, match, None)
    full = root / FULL_TABLE
    if full.is_file():
        names = _names_from_full_table(full)
        if names is not None:
            report.drifted = sorted(k for k, n in names.items() if n is None)
            report.changed = _changed(names, expected)
    conclude(report, expected)
    if any(f.actual is None for f in report.files.values()):
        report.hint = (
            "a rebuilt file is missing: run `tempmedbench-regenerate-synonyms RELEASE` first "
            "(with --out DIR if you used it, pass the same --out to check)"
        )
    return report


def _names_from_full_table(path: Path) -> dict[str, str | None] | None:
    """Kept names from a rebuilt full table, for the diagnosis; None if it cannot be read."""
    try:
        raw = read_release_file(path, what="the rebuilt full table")
        data = jsonio.parse_json(raw.decode("utf-8"), path=path)
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
