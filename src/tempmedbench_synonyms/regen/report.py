"""What a run found: ``Report`` (its ``to_json`` is the ``--json`` report, SPEC section 7) and how
its outcome and message are concluded from the files' hashes and the drift (``conclude``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from tempmedbench_synonyms import jsonio
from tempmedbench_synonyms.errors import EXIT_CODES, Outcome
from tempmedbench_synonyms.regen.release import ExpectedHashes


@dataclass
class FileReport:
    """One rebuilt file: its hashes, and where it was written (None when not written). Its fields,
    in this order, are its object in the ``--json`` report."""

    expected: str | None
    actual: str | None
    match: bool
    written: str | None = None
    #: the file at ``written`` already held these bytes: it was left as it was
    unchanged: bool = False


#: The fields of ``Report`` that its ``--json`` report gathers under ``counts``.
_COUNTS = ("concepts", "routes", "questions", "spans", "manifest_files")


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
        """The ``--json`` report: the fields, the counts under ``counts``, ``exit_code``,
        ``schema_version`` and ``tool_version``."""
        out = asdict(self)
        counts = {key: out.pop(key) for key in _COUNTS}
        out.update(outcome=self.outcome.value, exit_code=self.exit_code, counts=counts)
        return jsonio.versioned(out)


def conclude(report: Report, expected: ExpectedHashes) -> None:
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
