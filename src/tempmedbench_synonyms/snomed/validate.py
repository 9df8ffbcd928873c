"""Check the SNOMED CT fields of a release's events and questions against the GPS (SPEC section 6).

Every difference is a :class:`Finding` (data, not an exception); only unusable input raises
``BadInputError``. The order of the checks and the codes: docs/reference.md, ``gps validate``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from tempmedbench_synonyms import jsonio
from tempmedbench_synonyms.errors import BadInputError
from tempmedbench_synonyms.files import open_regular
from tempmedbench_synonyms.snomed.codes import FindingCode, ValidationOutcome
from tempmedbench_synonyms.snomed.concepts import Concept, ConceptIndex
from tempmedbench_synonyms.snomed.sctid import concept_id_problems, is_extension_concept
from tempmedbench_synonyms.zips import folder_hint

log = logging.getLogger(__name__)

EVENTS_PATH = "artifacts/events_canonical.jsonl"
QUESTIONS_PATH = "artifacts/questions.jsonl"

QUESTION_SNOMED_PREFIX = "concept_snomed_"
# The events that carry SNOMED CT fields (dataset card, "SNOMED CT fields": conditions, procedures
# and care plans), as the artifacts spell their event_type. Medications (RxNorm), observations
# (LOINC) and encounters carry none.
SNOMED_EVENT_TYPES = frozenset({"condition", "procedure", "careplan"})


@dataclass(frozen=True, slots=True)
class Finding:
    """One difference between an artifact field and the release."""

    code: FindingCode
    file: str
    line: int
    record: Any
    field: str
    expected: Any
    found: Any
    message: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "code": self.code.value,
            "file": self.file,
            "line": self.line,
            "record": self.record,
            "field": self.field,
            "expected": self.expected,
            "found": self.found,
            "message": self.message,
        }


@dataclass(slots=True)
class ValidationReport:
    """The findings of one validation run, and what was checked against what."""

    release: str
    gps: ConceptIndex
    records: dict[str, int]
    findings: list[Finding] = field(default_factory=list)

    @property
    def counts(self) -> dict[str, int]:
        """Findings by code; every code is listed, with 0 when it has none."""
        counts = {code.value: 0 for code in FindingCode}
        for f in self.findings:
            counts[f.code.value] += 1
        return counts

    @property
    def exit_code(self) -> int:
        return 1 if self.findings else 0

    @property
    def outcome(self) -> ValidationOutcome:
        return ValidationOutcome.FINDINGS if self.findings else ValidationOutcome.CLEAN

    def as_dict(self) -> dict[str, Any]:
        n = len(self.findings)
        return {
            "outcome": self.outcome.value,
            "exit_code": self.exit_code,
            "release": self.release,
            "gps": self.gps.summary(),
            "records_checked": dict(self.records),
            "findings": [f.as_dict() for f in self.findings],
            "counts": self.counts,
            "message": "every SNOMED CT field matches the release"
            if not n
            else f"{n} finding{'s' if n != 1 else ''}: the artifacts differ from the release",
        }


# --------------------------------------------------------------------------------------------
# Reading the artifacts

# Lines are parsed in batches of about this many bytes: one call of the C JSON parser per batch is
# twice as fast as one per line, and only one batch of records is in memory at a time.
BATCH_BYTES = 1 << 20
#: No artifact line comes near 1 MiB (a record is a few hundred bytes); a longer one is bad input
#: naming its line, before it is held in memory whole.
ARTIFACT_LINE_MAX = 1 << 20
# jsonio's strict reader: NaN, Infinity, a float out of range or a repeated key is bad input (a
# finding that carried one would make the --json report invalid JSON, or keep one of two values).
_RULES = jsonio.LineRules(
    blank="blank line",
    bom="the file starts with a byte order mark",
    not_object="a JSON {kind}, not an object",
    not_utf8="bytes that are not UTF-8 ({reason} at column {column})",
    not_utf8_hint="the artifacts are UTF-8 JSON Lines; write the file again as UTF-8",
    line_max=ARTIFACT_LINE_MAX,
    too_long="a line longer than {limit} bytes; an artifact has no such line",
    too_long_hint="each line of an artifact is one JSON record; write the file again",
)


def iter_records(
    path: Path, where: str, batch_bytes: int = BATCH_BYTES
) -> Iterator[dict[str, Any]]:
    """The records of a JSON-lines artifact (record ``i`` on line ``i + 1``)."""
    try:
        raw = open_regular(path, what="the artifact")
    except FileNotFoundError:
        raise BadInputError(  # the whole path: which release folder lacks it
            "the file is missing",
            path=str(path),
            hint="the release folder needs artifacts/events_canonical.jsonl and "
            "artifacts/questions.jsonl",
        ) from None
    except OSError as err:
        raise BadInputError(f"cannot read the file: {err.strerror}", path=str(path)) from None
    with raw:
        yield from jsonio.iter_jsonl(iter(partial(raw.read, batch_bytes), b""), where, _RULES)


# --------------------------------------------------------------------------------------------
# Checking


# The term fields that come with each code field: what step 1 and 3 report as UNEXPECTED_TERM.
_SNOMED_TERMS = ("snomed_fsn", "snomed_pt")
_RC_TERMS = ("related_condition", "related_condition_snomed_fsn", "related_condition_snomed_pt")
_QUESTION_TERMS = ("concept_snomed_fsn", "concept_snomed_pt")


class _Checker:
    """Collects the findings of one artifact file."""

    def __init__(self, index: ConceptIndex, file: str) -> None:
        self.index = index
        self.file = file
        self.findings: list[Finding] = []
        # Codes already resolved to an active concept of the release: a release uses a few
        # thousand concepts many times each, so each is looked up, decoded and checked once, and
        # then found by one look-up here.
        self.active: dict[str, Concept] = {}

    def add(
        self,
        code: FindingCode,
        line: int,
        record: Any,
        fld: str,
        expected: Any,
        found: Any,
        msg: str,
    ) -> None:
        self.findings.append(Finding(code, self.file, line, record, fld, expected, found, msg))

    def unexpected_terms(
        self, line: int, rid: Any, rec: dict[str, Any], terms: tuple[str, ...], why: str
    ) -> None:
        for fld in terms:
            value = rec.get(fld)
            if value is not None:
                self.add(
                    FindingCode.UNEXPECTED_TERM,
                    line,
                    rid,
                    fld,
                    None,
                    value,
                    f"{fld} is set, but {why}",
                )

    def resolve(
        self,
        line: int,
        rid: Any,
        code_field: str,
        code: Any,
        rec: dict[str, Any],
        terms: tuple[str, ...],
    ) -> Concept | None:
        """Steps 1 to 4 of the module docstring for ``code``: the active concept, or None after a
        finding. A held code still meets the identifier rules (SPEC section 6)."""
        if code is None:
            why = f"{code_field} is absent: no concept backs it"
            self.unexpected_terms(line, rid, rec, terms, why)
            return None
        if type(code) is not str:
            self.add(
                FindingCode.SCTID_FORMAT,
                line,
                rid,
                code_field,
                "a string of 6 to 18 digits",
                code,
                f"{code_field} is a JSON {type(code).__name__}; identifiers are strings",
            )
            return None
        concept = self.active.get(code)
        if concept is not None:
            return concept
        problems = concept_id_problems(code)
        if problems:
            for p in problems:
                self.add(p.code, line, rid, code_field, p.expected, code, p.message)
            return None
        concept = self.index.get(code)
        if concept is None:
            if is_extension_concept(code):
                self.unexpected_terms(
                    line,
                    rid,
                    rec,
                    terms,
                    f"{code} is an extension identifier (partition 10) that the release does "
                    "not hold: it ships as a code only, with no term",
                )
            else:
                self.add(
                    FindingCode.NOT_IN_RELEASE,
                    line,
                    rid,
                    code_field,
                    "a concept of the release",
                    code,
                    f"concept {code} is not in the release",
                )
            return None
        if not concept.active:
            self.add(
                FindingCode.INACTIVE_IN_RELEASE,
                line,
                rid,
                code_field,
                "an active concept",
                code,
                f"concept {code} is inactive in the release",
            )
            return None
        self.active[code] = concept
        return concept

    def terms(
        self,
        line: int,
        rid: Any,
        code: object,
        concept: Concept,
        fsn_field: str,
        fsn: Any,
        pt_field: str,
        pt: Any,
    ) -> None:
        """Step 5 for the FSN and the US preferred term."""
        # An empty release term means "none" (an RF2 concept with no active FSN, an inactive GPS
        # row with no US preferred term): the field must then be absent.
        expected_fsn = concept.fsn or None
        if fsn != expected_fsn:
            self.add(
                FindingCode.FSN_MISMATCH,
                line,
                rid,
                fsn_field,
                expected_fsn,
                fsn,
                f"{fsn_field} differs from the FSN of {code}",
            )
        expected_pt = concept.us_pt or None
        if pt != expected_pt:
            self.add(
                FindingCode.PT_MISMATCH,
                line,
                rid,
                pt_field,
                expected_pt,
                pt,
                f"{pt_field} differs from the US preferred term of {code}",
            )

    def missing_code(self, line: int, rec: dict[str, Any]) -> None:
        """Step 1 for an event of a type that carries SNOMED CT fields but has no code."""
        etype = rec.get("event_type")
        self.add(
            FindingCode.NOT_IN_RELEASE,
            line,
            rec.get("event_id"),
            "snomed_code",
            "a concept of the release",
            None,
            f"a {etype} event carries a SNOMED CT concept, but snomed_code is absent",
        )

    def events(self, records: Iterable[dict[str, Any]]) -> int:
        """Check ``artifacts/events_canonical.jsonl``'s records; the number of records."""
        resolve, active = self.resolve, self.active
        line = 0
        for line, rec in enumerate(records, start=1):
            get = rec.get
            code = get("snomed_code")
            fsn = get("snomed_fsn")
            pt = get("snomed_pt")
            etype = get("event_type")
            # An active concept seen before: one look-up (a code is most often one of them).
            concept = active.get(code) if type(code) is str else None
            if concept is None:
                if code is None and etype in SNOMED_EVENT_TYPES:
                    self.missing_code(line, rec)
                elif code is not None or fsn is not None or pt is not None:  # none: a medication
                    concept = resolve(
                        line, get("event_id"), "snomed_code", code, rec, _SNOMED_TERMS
                    )
            if concept is not None:
                if fsn != (concept.fsn or None) or pt != (concept.us_pt or None):
                    rid = get("event_id")
                    self.terms(line, rid, code, concept, "snomed_fsn", fsn, "snomed_pt", pt)
                if etype == "procedure":
                    label = get("label")
                    if not _is_fsn_or_pt(label, concept):
                        self.add(
                            FindingCode.LABEL_MISMATCH,
                            line,
                            get("event_id"),
                            "label",
                            _either(concept),
                            label,
                            f"a procedure's label must be the FSN or US preferred term of {code}",
                        )
            rc_code = get("related_condition_snomed_code")
            rc_text = get("related_condition")
            rc_fsn = get("related_condition_snomed_fsn")
            rc_pt = get("related_condition_snomed_pt")
            if rc_code is None and rc_text is None and rc_fsn is None and rc_pt is None:
                continue
            rid = get("event_id")
            rc_concept = active.get(rc_code) if type(rc_code) is str else None
            if rc_concept is None:
                rc_concept = resolve(
                    line, rid, "related_condition_snomed_code", rc_code, rec, _RC_TERMS
                )
            if rc_concept is not None:
                if not _is_fsn_or_pt(rc_text, rc_concept):
                    self.add(
                        FindingCode.RELATED_CONDITION_MISMATCH,
                        line,
                        rid,
                        "related_condition",
                        _either(rc_concept),
                        rc_text,
                        f"related_condition must be the FSN or US preferred term of {rc_code}",
                    )
                if rc_fsn != (rc_concept.fsn or None) or rc_pt != (rc_concept.us_pt or None):
                    self.terms(
                        line,
                        rid,
                        rc_code,
                        rc_concept,
                        "related_condition_snomed_fsn",
                        rc_fsn,
                        "related_condition_snomed_pt",
                        rc_pt,
                    )
        return line

    def questions(self, records: Iterable[dict[str, Any]]) -> int:
        """Check ``artifacts/questions.jsonl``'s records; the number of records."""
        line = 0
        for line, rec in enumerate(records, start=1):
            rid = rec.get("qid")
            predicate = rec.get("predicate")
            if not isinstance(predicate, dict):
                raise BadInputError(
                    "predicate is missing or not an object",
                    path=self.file,
                    line=line,
                    key=None if rid is None else str(rid),
                )
            concept_key = predicate.get("concept")
            if concept_key is None or concept_key == "":
                raise BadInputError(
                    "predicate.concept is missing or empty",
                    path=self.file,
                    line=line,
                    key=None if rid is None else str(rid),
                )
            if not _is_identifier(concept_key):
                # A label (RxNorm, LOINC, encounter class): no SNOMED CT field may come with it.
                for key, value in rec.items():
                    if key.startswith(QUESTION_SNOMED_PREFIX) and value is not None:
                        self.add(
                            FindingCode.LABEL_CONCEPT_HAS_SNOMED_FIELD,
                            line,
                            rid,
                            key,
                            None,
                            value,
                            f"predicate.concept {concept_key!r} is a label, not a SNOMED CT "
                            f"identifier, so {key} must be absent (or, for a SNOMED CT concept, "
                            "predicate.concept must be its identifier)",
                        )
                continue
            concept = self.resolve(
                line, rid, "predicate.concept", concept_key, rec, _QUESTION_TERMS
            )
            code = rec.get("concept_snomed_code")
            # Compared only with a valid identifier: with a malformed one, "expected" would tell
            # the author to copy the malformation into a code that may well be right.
            if code != concept_key and _valid_string_id(concept_key):
                self.add(
                    FindingCode.CODE_MISMATCH,
                    line,
                    rid,
                    "concept_snomed_code",
                    concept_key,
                    code,
                    "concept_snomed_code must equal predicate.concept",
                )
            if concept is not None:
                self.terms(
                    line,
                    rid,
                    concept_key,
                    concept,
                    "concept_snomed_fsn",
                    rec.get("concept_snomed_fsn"),
                    "concept_snomed_pt",
                    rec.get("concept_snomed_pt"),
                )
        return line


def _is_fsn_or_pt(value: Any, concept: Concept) -> bool:
    """Whether a "FSN or US preferred term" field holds one of them (an empty term is none)."""
    return value == concept.fsn or (bool(concept.us_pt) and value == concept.us_pt)


def _either(concept: Concept) -> list[str]:
    """The accepted values of a "FSN or US preferred term" field, without repeats or blanks."""
    fsn, pt = concept.fsn, concept.us_pt
    return [fsn] if not pt or pt == fsn else [fsn, pt]


def _is_identifier(value: Any) -> bool:
    """Whether a question's ``predicate.concept`` is meant as an identifier (module docstring)."""
    if not isinstance(value, str):
        return True
    stripped = value.strip()
    return stripped.isascii() and stripped.isdigit()


def _valid_string_id(value: Any) -> bool:
    return type(value) is str and not concept_id_problems(value)


def check_artifact(
    path: Path,
    index: ConceptIndex,
    file: str = EVENTS_PATH,
    batch_bytes: int = BATCH_BYTES,
) -> tuple[int, list[Finding]]:
    """The number of records and the findings of the artifact ``file`` (the events unless it is
    ``QUESTIONS_PATH``) at ``path``, read one batch at a time."""
    checker = _Checker(index, file)
    check = checker.questions if file == QUESTIONS_PATH else checker.events
    return check(iter_records(path, file, batch_bytes)), checker.findings


def validate_release(release_dir: str | Path, index: ConceptIndex) -> ValidationReport:
    """Validate a release folder's two artifact files against ``index``."""
    root = Path(release_dir)
    if not root.is_dir():
        raise BadInputError(
            "not a folder",
            path=root,
            hint=folder_hint(root, "pass the release folder (the one holding artifacts/)"),
        )
    if not (root / EVENTS_PATH).exists() and any(
        (root / Path(p).name).exists() for p in (EVENTS_PATH, QUESTIONS_PATH)
    ):
        raise BadInputError(
            f"this is the artifacts folder itself: it holds {Path(EVENTS_PATH).name} or "
            f"{Path(QUESTIONS_PATH).name}, not {EVENTS_PATH}",
            path=root,
            hint=f"pass the parent folder, the release folder: {root.resolve().parent}",
        )
    n_events, event_findings = check_artifact(root / EVENTS_PATH, index)
    n_questions, question_findings = check_artifact(root / QUESTIONS_PATH, index, QUESTIONS_PATH)
    findings = event_findings + question_findings
    log.info(
        "checked %d events and %d questions: %d findings", n_events, n_questions, len(findings)
    )
    return ValidationReport(
        str(root), index, {EVENTS_PATH: n_events, QUESTIONS_PATH: n_questions}, findings
    )
