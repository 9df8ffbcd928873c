"""Check the SNOMED CT fields of a release's events and questions against the GPS (SPEC section 6).

Every difference is a :class:`Finding` (data, not an exception); only unusable input raises
``BadInputError``. The order of the checks and the codes: docs/reference.md, ``gps validate``.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, fields
from enum import StrEnum
from functools import partial
from pathlib import Path
from typing import Any

from tempmedbench_synonyms import jsonio
from tempmedbench_synonyms.errors import BadInputError, plural
from tempmedbench_synonyms.files import open_regular
from tempmedbench_synonyms.snomed.concepts import Concept, ConceptIndex
from tempmedbench_synonyms.snomed.sctid import (
    FindingCode,
    concept_id_problems,
    is_extension_concept,
)
from tempmedbench_synonyms.zips import folder_hint

log = logging.getLogger(__name__)

EVENTS_PATH = "artifacts/events_canonical.jsonl"
QUESTIONS_PATH = "artifacts/questions.jsonl"

QUESTION_SNOMED_PREFIX = "concept_snomed_"
# The events that carry SNOMED CT fields (dataset card, "SNOMED CT fields": conditions, procedures
# and care plans), as the artifacts spell their event_type. Medications (RxNorm), observations
# (LOINC) and encounters carry none.
SNOMED_EVENT_TYPES = frozenset({"condition", "procedure", "careplan"})


class ValidationOutcome(StrEnum):
    """The outcome of ``gps validate``: exit 0 when clean, 1 with findings."""

    CLEAN = "clean"
    FINDINGS = "findings"


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
        # (not dataclasses.asdict: it copies each value deeply, and a record's value may be nested
        # as deep as the JSON reader takes: a RecursionError)
        return {f.name: getattr(self, f.name) for f in fields(self)} | {"code": self.code.value}


@dataclass(slots=True)
class ValidationReport:
    """The findings of one validation run, and what was checked against what."""

    release: str
    gps: ConceptIndex
    records: dict[str, int]
    findings: list[Finding] = field(default_factory=list)

    @property
    def counts(self) -> dict[str, int]:
        found = Counter(f.code for f in self.findings)
        return {code.value: found[code] for code in FindingCode}

    @property
    def exit_code(self) -> int:
        return 1 if self.findings else 0

    @property
    def outcome(self) -> ValidationOutcome:
        return ValidationOutcome.FINDINGS if self.findings else ValidationOutcome.CLEAN

    @property
    def message(self) -> str:
        if not self.findings:
            return "every SNOMED CT field matches the release"
        return f"{plural(len(self.findings), 'finding')}: the artifacts differ from the release"

    def as_dict(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome.value,
            "exit_code": self.exit_code,
            "release": self.release,
            "gps": self.gps.summary(),
            "records_checked": dict(self.records),
            "findings": [f.as_dict() for f in self.findings],
            "counts": self.counts,
            "message": self.message,
        }


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


def iter_records(path: Path, where: str) -> Iterator[dict[str, Any]]:
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
        yield from jsonio.iter_jsonl(iter(partial(raw.read, BATCH_BYTES), b""), where, _RULES)


# The term fields that come with each code field: what a code without a concept reports as
# UNEXPECTED_TERM.
_SNOMED_TERMS = ("snomed_fsn", "snomed_pt")
_RC_SNOMED_TERMS = ("related_condition_snomed_fsn", "related_condition_snomed_pt")
_RC_TERMS = ("related_condition", *_RC_SNOMED_TERMS)
_QUESTION_TERMS = ("concept_snomed_fsn", "concept_snomed_pt")
_IN_RELEASE = "a concept of the release"
# The fields that must hold their concept's FSN or US preferred term: the finding, and the field
# in the words of its message.
_FSN_OR_PT = {
    "label": (FindingCode.LABEL_MISMATCH, "a procedure's label"),
    "related_condition": (FindingCode.RELATED_CONDITION_MISMATCH, "related_condition"),
}


class _Checker:
    """Collects the findings of one artifact file, each on the record read now (``line``,
    ``rec``), which ``id_key`` names."""

    def __init__(self, index: ConceptIndex, file: str, id_key: str) -> None:
        self.index = index
        self.file = file
        self.id_key = id_key
        self.findings: list[Finding] = []
        # Codes already resolved to an active concept of the release: a release uses a few
        # thousand concepts many times each, so each is looked up, decoded and checked once, and
        # then found by one look-up here.
        self.active: dict[str, Concept] = {}
        self.line = 0
        self.rec: dict[str, Any] = {}

    def add(self, code: FindingCode, fld: str, expected: Any, found: Any, msg: str) -> None:
        rid = self.rec.get(self.id_key)
        self.findings.append(Finding(code, self.file, self.line, rid, fld, expected, found, msg))

    def unexpected_terms(self, terms: tuple[str, ...], why: str) -> None:
        for fld in terms:
            value = self.rec.get(fld)
            if value is not None:
                self.add(FindingCode.UNEXPECTED_TERM, fld, None, value, f"{fld} is set, but {why}")

    def resolve(self, code_field: str, code: Any, terms: tuple[str, ...]) -> Concept | None:
        """The active concept of ``code``, or None after a finding (the order of the checks:
        docs/reference.md). A held code still meets the identifier rules (SPEC section 6)."""
        if code is None:
            self.unexpected_terms(terms, f"{code_field} is absent: no concept backs it")
            return None
        if type(code) is not str:
            why = f"{code_field} is a JSON {type(code).__name__}; identifiers are strings"
            self.add(FindingCode.SCTID_FORMAT, code_field, "a string of 6 to 18 digits", code, why)
            return None
        concept = self.active.get(code)
        if concept is not None:
            return concept
        problems = concept_id_problems(code)
        for p in problems:
            self.add(p.code, code_field, p.expected, code, p.message)
        if problems:
            return None
        concept = self.index.get(code)
        if concept is not None and concept.active:
            self.active[code] = concept
            return concept
        if concept is not None:
            why = f"concept {code} is inactive in the release"
            self.add(FindingCode.INACTIVE_IN_RELEASE, code_field, "an active concept", code, why)
        elif is_extension_concept(code):
            self.unexpected_terms(
                terms,
                f"{code} is an extension identifier (partition 10) that the release does not "
                "hold: it ships as a code only, with no term",
            )
        else:
            why = f"concept {code} is not in the release"
            self.add(FindingCode.NOT_IN_RELEASE, code_field, _IN_RELEASE, code, why)
        return None

    def terms(self, code: object, concept: Concept, fsn_field: str, pt_field: str) -> None:
        """The record's FSN and US preferred term fields against ``concept``'s."""
        # An empty release term means "none" (an RF2 concept with no active FSN, an inactive GPS
        # row with no US preferred term): the field must then be absent.
        fsn, pt = self.rec.get(fsn_field), self.rec.get(pt_field)
        if fsn != (concept.fsn or None):
            why = f"{fsn_field} differs from the FSN of {code}"
            self.add(FindingCode.FSN_MISMATCH, fsn_field, concept.fsn or None, fsn, why)
        if pt != (concept.us_pt or None):
            why = f"{pt_field} differs from the US preferred term of {code}"
            self.add(FindingCode.PT_MISMATCH, pt_field, concept.us_pt or None, pt, why)

    def fsn_or_pt(self, code: object, concept: Concept, fld: str) -> None:
        """The field ``fld`` against ``concept``'s FSN and US preferred term (an empty one is
        none); expected: both, without repeats or blanks."""
        value = self.rec.get(fld)
        fsn, pt = concept.fsn, concept.us_pt
        if value != fsn and not (pt and value == pt):
            finding, what = _FSN_OR_PT[fld]
            why = f"{what} must be the FSN or US preferred term of {code}"
            self.add(finding, fld, [fsn] if not pt or pt == fsn else [fsn, pt], value, why)

    def events(self, records: Iterable[dict[str, Any]]) -> int:
        """Check ``artifacts/events_canonical.jsonl``'s records; the number of records."""
        active = self.active
        for line, rec in enumerate(records, start=1):
            self.line, self.rec = line, rec
            get = rec.get
            code, fsn, pt = get("snomed_code"), get("snomed_fsn"), get("snomed_pt")
            # An active concept seen before: one look-up (a code is most often one of them).
            concept = active.get(code) if type(code) is str else None
            if concept is None:
                etype = get("event_type")
                if code is None and etype in SNOMED_EVENT_TYPES:
                    why = f"a {etype} event carries a SNOMED CT concept, but snomed_code is absent"
                    self.add(FindingCode.NOT_IN_RELEASE, "snomed_code", _IN_RELEASE, None, why)
                elif code is not None or fsn is not None or pt is not None:
                    concept = self.resolve("snomed_code", code, _SNOMED_TERMS)  # else a medication
            if concept is not None:
                if fsn != (concept.fsn or None) or pt != (concept.us_pt or None):  # else no call
                    self.terms(code, concept, "snomed_fsn", "snomed_pt")
                if get("event_type") == "procedure":
                    self.fsn_or_pt(code, concept, "label")
            # Each field looked up by name, not by a generator over _RC_TERMS: this runs once an
            # event (the generator took 25 ms more in 100,000 events, bench_gps.py's release).
            rc_code, rc_text = get("related_condition_snomed_code"), get("related_condition")
            rc_fsn, rc_pt = get("related_condition_snomed_fsn"), get("related_condition_snomed_pt")
            if rc_code is None and rc_text is None and rc_fsn is None and rc_pt is None:
                continue
            rc_concept = active.get(rc_code) if type(rc_code) is str else None
            if rc_concept is None:
                rc_concept = self.resolve("related_condition_snomed_code", rc_code, _RC_TERMS)
            if rc_concept is not None:
                self.fsn_or_pt(rc_code, rc_concept, "related_condition")
                self.terms(rc_code, rc_concept, *_RC_SNOMED_TERMS)
        return self.line

    def questions(self, records: Iterable[dict[str, Any]]) -> int:
        """Check ``artifacts/questions.jsonl``'s records; the number of records."""
        for line, rec in enumerate(records, start=1):
            self.line, self.rec = line, rec
            rid = rec.get("qid")
            key = None if rid is None else str(rid)
            predicate = rec.get("predicate")
            if not isinstance(predicate, dict):
                raise BadInputError(
                    "predicate is missing or not an object", path=self.file, line=line, key=key
                )
            concept_key = predicate.get("concept")
            if concept_key is None or concept_key == "":
                raise BadInputError(
                    "predicate.concept is missing or empty", path=self.file, line=line, key=key
                )
            if not _is_identifier(concept_key):
                # A label (RxNorm, LOINC, encounter class): no SNOMED CT field may come with it.
                for fld, value in rec.items():
                    if fld.startswith(QUESTION_SNOMED_PREFIX) and value is not None:
                        why = (
                            f"predicate.concept {concept_key!r} is a label, not a SNOMED CT "
                            f"identifier, so {fld} must be absent (or, for a SNOMED CT concept, "
                            "predicate.concept must be its identifier)"
                        )
                        self.add(FindingCode.LABEL_CONCEPT_HAS_SNOMED_FIELD, fld, None, value, why)
                continue
            concept = self.resolve("predicate.concept", concept_key, _QUESTION_TERMS)
            code = rec.get("concept_snomed_code")
            # Compared only with a valid identifier: with a malformed one, "expected" would tell
            # the author to copy the malformation into a code that may well be right.
            valid = type(concept_key) is str and not concept_id_problems(concept_key)
            if code != concept_key and valid:
                why = "concept_snomed_code must equal predicate.concept"
                self.add(FindingCode.CODE_MISMATCH, "concept_snomed_code", concept_key, code, why)
            if concept is not None:
                self.terms(concept_key, concept, "concept_snomed_fsn", "concept_snomed_pt")
        return self.line


def _is_identifier(value: Any) -> bool:
    """Whether a question's ``predicate.concept`` is meant as an identifier: a string of digits
    (spaces around them allowed), or anything that is not a string."""
    if not isinstance(value, str):
        return True
    stripped = value.strip()
    return stripped.isascii() and stripped.isdigit()


def check_artifact(path: Path, file: str, index: ConceptIndex) -> tuple[int, list[Finding]]:
    """One artifact file at ``path`` (``file``: ``EVENTS_PATH`` or ``QUESTIONS_PATH``, as
    findings name it) checked against ``index``: its number of records and its findings."""
    id_key, check = {
        EVENTS_PATH: ("event_id", _Checker.events),
        QUESTIONS_PATH: ("qid", _Checker.questions),
    }[file]
    checker = _Checker(index, file, id_key)
    return check(checker, iter_records(path, file)), checker.findings


def validate_release(release_dir: str | Path, index: ConceptIndex) -> ValidationReport:
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
    records: dict[str, int] = {}
    findings: list[Finding] = []
    for file in (EVENTS_PATH, QUESTIONS_PATH):
        records[file], found = check_artifact(root / file, file, index)
        findings += found
    log.info("checked %d events and %d questions: %d findings", *records.values(), len(findings))
    return ValidationReport(str(root), index, records, findings)
