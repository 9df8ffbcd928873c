"""Validating the SNOMED CT fields of events and questions against the GPS (snomed/validate.py)."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from helpers import FIXTURES
from tempmedbench_synonyms.errors import BadInputError
from tempmedbench_synonyms.snomed import validate as validate_module
from tempmedbench_synonyms.snomed.concepts import ConceptIndex, encode_row
from tempmedbench_synonyms.snomed.loader import load_concept_index
from tempmedbench_synonyms.snomed.sctid import FindingCode
from tempmedbench_synonyms.snomed.validate import (
    ARTIFACT_LINE_MAX,
    EVENTS_PATH,
    QUESTIONS_PATH,
    Finding,
    check_artifact,
    iter_records,
    validate_release,
)

GPS_FILE = FIXTURES / "gps" / "SnomedINTL_GPSRelease_PRODUCTION_20990101T120000Z.txt"
RF2_DIR = FIXTURES / "gps" / "rf2"
PLANTED = FIXTURES / "gps-planted"
MINI = FIXTURES / "tempmedbench-mini"
SOURCES = [pytest.param(GPS_FILE, id="gps"), pytest.param(RF2_DIR, id="rf2")]

EV, Q = EVENTS_PATH, QUESTIONS_PATH
# Every finding of the planted fixture, by hand: code, file, line, record, field, expected, found.
PLANTED_FINDINGS = [
    (
        "FSN_MISMATCH",
        EV,
        2,
        "ev-p02",
        "snomed_fsn",
        "Cobalt-wing nephritis (disorder)",
        "Cobalt wing nephritis (disorder)",
    ),
    ("PT_MISMATCH", EV, 3, "ev-p03", "snomed_pt", "Hemovex anemia", "Haemovex anaemia"),
    (
        "LABEL_MISMATCH",
        EV,
        4,
        "ev-p04",
        "label",
        ["Quillbone splinting (procedure)", "Quillbone splinting"],
        "Quillbone splint",
    ),
    (
        "RELATED_CONDITION_MISMATCH",
        EV,
        5,
        "ev-p05",
        "related_condition",
        ["Brindlewort fever (disorder)", "Brindlewort fever"],
        "brindlewort fever",
    ),
    ("UNEXPECTED_TERM", EV, 6, "ev-p06", "snomed_pt", None, "Home rest care plan"),
    ("NOT_IN_RELEASE", EV, 7, "ev-p07", "snomed_code", "a concept of the release", "9000000099009"),
    ("INACTIVE_IN_RELEASE", EV, 8, "ev-p08", "snomed_code", "an active concept", "9000000011006"),
    ("SCTID_CHECKDIGIT", EV, 9, "ev-p09", "snomed_code", "check digit 8", "9000000005009"),
    (
        "SCTID_PARTITION",
        EV,
        10,
        "ev-p10",
        "snomed_code",
        "partition 00 or 10 (a concept)",
        "9100000001016",
    ),
    (
        "SCTID_FORMAT",
        EV,
        11,
        "ev-p11",
        "related_condition_snomed_code",
        "a string of 6 to 18 digits",
        9000000006009,
    ),
    ("LABEL_CONCEPT_HAS_SNOMED_FIELD", Q, 3, "q-p03", "concept_snomed_pt", None, "Zephyr fever"),
    ("CODE_MISMATCH", Q, 4, "q-p04", "concept_snomed_code", "9000000004007", "9000000001004"),
]


def as_tuples(findings: list[Any]) -> list[tuple[Any, ...]]:
    return [(f.code, f.file, f.line, f.record, f.field, f.expected, f.found) for f in findings]


@pytest.fixture(scope="module", params=SOURCES)
def index(request: pytest.FixtureRequest) -> ConceptIndex:
    return load_concept_index(request.param)


# --------------------------------------------------------------------------------------------
# The fixtures


def test_planted_fixture_has_one_finding_of_every_code(index: ConceptIndex) -> None:
    report = validate_release(PLANTED, index)
    assert as_tuples(report.findings) == PLANTED_FINDINGS
    assert report.counts == dict.fromkeys(FindingCode, 1)
    assert report.exit_code == 1
    assert report.records == {EV: 14, Q: 6}


def test_one_artifact_alone_is_checked_as_the_release_checks_it(index: ConceptIndex) -> None:
    """``check_artifact`` (what bench/bench_gps.py times): one file's records and its share of
    the release's findings, in the same order."""
    for rel, records in ((EV, 14), (Q, 6)):
        counted, findings = check_artifact(PLANTED / rel, rel, index)
        assert counted == records
        assert as_tuples(findings) == [f for f in PLANTED_FINDINGS if f[1] == rel]


def test_the_clean_records_of_the_planted_fixture_validate_clean(
    index: ConceptIndex, tmp_path: Path
) -> None:
    bad = {(f[1], f[2]) for f in PLANTED_FINDINGS}
    for rel in (EV, Q):
        lines = (PLANTED / rel).read_text("utf-8").split("\n")[:-1]
        kept = [line for n, line in enumerate(lines, 1) if (rel, n) not in bad]
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("\n".join(kept) + "\n", "utf-8")
    report = validate_release(tmp_path, index)
    assert report.findings == []
    assert report.exit_code == 0
    assert report.records == {EV: 4, Q: 4}
    assert report.as_dict()["outcome"] == "clean"


def test_mini_release_validates_clean(index: ConceptIndex) -> None:
    report = validate_release(MINI, index)
    assert as_tuples(report.findings) == []
    assert report.records == {EV: 22, Q: 42}


def test_mini_questions_match_the_surface_one_to_one() -> None:
    surface = [
        json.loads(x)
        for x in (MINI / "question_surface" / "question_surface.jsonl")
        .read_text("utf-8")
        .split("\n")
        if x
    ]
    questions = list(iter_records(MINI / Q, Q))
    assert [q["qid"] for q in questions] == [s["qid"] for s in surface]
    assert [q["split"] for q in questions] == [s["split"] for s in surface]
    table = json.loads((MINI / "synonyms" / "synonym_table_kept.json").read_text("utf-8"))
    assert {q["predicate"]["concept"] for q in questions} <= set(table["concepts"])
    by_qid = {q["qid"]: q for q in questions}
    # By hand: the concept named first in the question, not its anchor.
    assert by_qid["dev-0001"]["predicate"]["concept"] == "9990101009"  # Zephyr fever ... pellucid
    assert by_qid["test-0008"]["predicate"]["concept"] == "9990107008"  # pellucid ... zephyr
    assert by_qid["train-0008"] == {
        "qid": "train-0008",
        "split": "train",
        "family": "EVENT_AT",
        "predicate": {"concept": "ambulatory encounter"},
    }
    assert by_qid["dev-0007"]["concept_snomed_fsn"] == "Grafting of moonstone (procedure)"


def test_mini_events_hold_the_gb_us_trap_and_the_extension() -> None:
    events = {e["event_id"]: e for e in iter_records(MINI / EV, EV)}
    assert events["ev-0018"]["snomed_pt"] == "Hemovex anemia"
    ext = events["ev-0013"]
    assert ext["snomed_code"] == "456191000124101"
    assert "snomed_fsn" not in ext and "snomed_pt" not in ext


# --------------------------------------------------------------------------------------------
# Choices where SPEC section 6 leaves room (each pinned here)

IDX = ConceptIndex(
    {
        "9000000001004": encode_row("Alpha (disorder)", "Alpha", True),
        "9000000002006": encode_row("Beta (procedure)", "Beta op", True),
        "9000000011006": encode_row("Gamma (disorder)", "Gamma", False),
        "9000000003001": encode_row("Delta (disorder)", "", True),  # active, no US PT
    },
    "test",
    "test",
    "20990101",
    None,
)
A, B, G, D = "9000000001004", "9000000002006", "9000000011006", "9000000003001"


def ev(**fields: Any) -> dict[str, Any]:
    return {"event_id": "e1", "event_type": "condition", "label": "x", **fields}


def test_a_release_term_that_is_empty_means_the_field_must_be_absent() -> None:
    """An RF2 concept with no active FSN reads as FSN "": like an empty US preferred term, the
    field must then be absent (there is no value an author could write to match it)."""
    no_fsn = "9000000001004"
    index = ConceptIndex({no_fsn: encode_row("", "Alpha", True)}, "gps-tsv", "x", None, None)
    assert check_events([ev(snomed_code=no_fsn, snomed_pt="Alpha")], index) == []
    found = check_events([ev(snomed_code=no_fsn, snomed_fsn="", snomed_pt="Alpha")], index)
    assert codes(found) == [("FSN_MISMATCH", "snomed_fsn", None, "")]


def alpha(**extra: Any) -> dict[str, Any]:
    return {"snomed_code": A, "snomed_fsn": "Alpha (disorder)", "snomed_pt": "Alpha", **extra}


def codes(findings: list[Any]) -> list[tuple[str, str, Any, Any]]:
    return [(f.code, f.field, f.expected, f.found) for f in findings]


def test_clean_event_and_events_that_carry_no_snomed_field() -> None:
    records = [
        ev(**alpha()),
        # RxNorm, LOINC and encounter-class concepts carry no SNOMED CT field (dataset card).
        ev(label="zorbatrex 50 mg oral tablet", event_type="medication"),
        ev(label="quillon level", event_type="observation"),
        ev(label="ambulatory encounter", event_type="encounter"),
    ]
    assert check_events(records, IDX) == []


def test_snomed_event_without_a_code() -> None:
    # A condition, procedure or care plan carries a SNOMED CT concept: a missing code is reported
    # once, on snomed_code, and its terms are not looked at (the code is what is missing).
    records = [
        ev(event_type="procedure", label="Anything at all"),
        ev(event_type="condition", label="Alpha onset", snomed_fsn="Alpha (disorder)"),
        ev(event_type="careplan", label="plan started", snomed_code=None, snomed_pt="Alpha"),
    ]
    found = check_events(records, IDX)
    assert [(f.line, f.code, f.field, f.expected, f.found, f.message) for f in found] == [
        (
            1,
            "NOT_IN_RELEASE",
            "snomed_code",
            "a concept of the release",
            None,
            "a procedure event carries a SNOMED CT concept, but snomed_code is absent",
        ),
        (
            2,
            "NOT_IN_RELEASE",
            "snomed_code",
            "a concept of the release",
            None,
            "a condition event carries a SNOMED CT concept, but snomed_code is absent",
        ),
        (
            3,
            "NOT_IN_RELEASE",
            "snomed_code",
            "a concept of the release",
            None,
            "a careplan event carries a SNOMED CT concept, but snomed_code is absent",
        ),
    ]


def test_snomed_event_without_a_code_still_has_its_related_condition_checked() -> None:
    found = check_events(
        [
            ev(
                event_type="careplan",
                related_condition="alpha",
                related_condition_snomed_code=A,
                related_condition_snomed_fsn="Alpha (disorder)",
                related_condition_snomed_pt="Alpha",
            )
        ],
        IDX,
    )
    assert codes(found) == [
        ("NOT_IN_RELEASE", "snomed_code", "a concept of the release", None),
        ("RELATED_CONDITION_MISMATCH", "related_condition", ["Alpha (disorder)", "Alpha"], "alpha"),
    ]


def test_inactive_concept_reports_only_its_status() -> None:
    # The terms are not compared: the concept has to be replaced whatever they say.
    found = check_events([ev(snomed_code=G, snomed_fsn="wrong", snomed_pt="wrong")], IDX)
    assert codes(found) == [("INACTIVE_IN_RELEASE", "snomed_code", "an active concept", G)]


def test_bad_identifier_reports_no_lookup_and_no_terms() -> None:
    found = check_events([ev(snomed_code="22298007", snomed_fsn="x", snomed_pt="y")], IDX)
    assert codes(found) == [("SCTID_CHECKDIGIT", "snomed_code", "check digit 6", "22298007")]


def test_partition_and_check_digit_both_reported() -> None:
    found = check_events([ev(snomed_code="22298060")], IDX)
    assert [f.code for f in found] == ["SCTID_PARTITION", "SCTID_CHECKDIGIT"]


# Identifiers the rules refuse, as a GPS file may list them (invented): the loader takes any
# ASCII digits as a ConceptID.
HELD_BUT_INVALID = {
    "9000000021004": "SCTID_CHECKDIGIT",  # 9000000021003 with its last digit changed
    "9000000022014": "SCTID_PARTITION",  # partition 01: a description identifier
    "090000023000": "SCTID_FORMAT",  # a leading zero
    "12345": "SCTID_FORMAT",  # 5 digits
}


def test_an_identifier_the_rules_refuse_is_a_finding_even_when_the_release_holds_it(
    tmp_path: Path,
) -> None:
    """SPEC section 6 checks a field against the release, and holds every identifier to the
    identifier rules: a code is compared with the release only once it passes them. So a code
    that the release holds but the rules refuse gets the finding it would get if the release
    lacked it, whatever terms come with it (the terms are not compared)."""
    gps = tmp_path / "SnomedINTL_GPSRelease_PRODUCTION_20990101T120000Z.txt"
    rows = "".join(f"{cid}\t1\tHeld {cid} (finding)\tHeld {cid}\n" for cid in HELD_BUT_INVALID)
    gps.write_text("ConceptID\tActive\tFSN\tUSPreferredTerm\n" + rows, "utf-8")
    held = load_concept_index(gps)
    assert all(held.get(cid) is not None for cid in HELD_BUT_INVALID)
    records = [
        ev(snomed_code=cid, snomed_fsn=f"Held {cid} (finding)", snomed_pt=f"Held {cid}")
        for cid in HELD_BUT_INVALID
    ] + [
        ev(
            event_type="careplan",
            snomed_code=cid,
            related_condition_snomed_code=cid,
            related_condition=f"Held {cid}",
        )
        for cid in HELD_BUT_INVALID
    ]
    found = check_events(records, held)
    expected = [(code, "snomed_code", cid) for cid, code in HELD_BUT_INVALID.items()] + [
        (code, fld, cid)
        for cid, code in HELD_BUT_INVALID.items()
        for fld in ("snomed_code", "related_condition_snomed_code")
    ]
    assert [(f.code, f.field, f.found) for f in found] == expected
    assert as_tuples(found) == as_tuples(check_events(records, IDX))  # as if it were not held
    questions = [q(cid, concept_snomed_code=cid) for cid in HELD_BUT_INVALID]
    found = check_questions(questions, held)
    assert [(f.code, f.field) for f in found] == [
        (code, "predicate.concept") for code in HELD_BUT_INVALID.values()
    ]
    assert as_tuples(found) == as_tuples(check_questions(questions, IDX))


def test_format_variants() -> None:
    found = check_events(
        [ev(snomed_code="022298006"), ev(snomed_code=22298006), ev(snomed_code="")], IDX
    )
    assert codes(found) == [
        ("SCTID_FORMAT", "snomed_code", "6 to 18 digits, no leading zero", "022298006"),
        ("SCTID_FORMAT", "snomed_code", "a string of 6 to 18 digits", 22298006),
        ("SCTID_FORMAT", "snomed_code", "6 to 18 digits, no leading zero", ""),
    ]


def test_missing_term_is_a_mismatch_with_found_null() -> None:
    found = check_events([ev(snomed_code=A, snomed_pt="Alpha")], IDX)
    assert codes(found) == [("FSN_MISMATCH", "snomed_fsn", "Alpha (disorder)", None)]


def test_null_counts_as_absent() -> None:
    medication = ev(event_type="medication", snomed_code=None, related_condition=None)
    assert check_events([medication], IDX) == []
    found = check_events([ev(snomed_code=None, snomed_fsn=None)], IDX)
    assert codes(found) == [("NOT_IN_RELEASE", "snomed_code", "a concept of the release", None)]
    found = check_events([ev(**alpha(snomed_pt=None))], IDX)
    assert codes(found) == [("PT_MISMATCH", "snomed_pt", "Alpha", None)]


def test_release_without_us_term_expects_the_field_absent() -> None:
    ok = check_events([ev(snomed_code=D, snomed_fsn="Delta (disorder)")], IDX)
    assert ok == []
    found = check_events([ev(snomed_code=D, snomed_fsn="Delta (disorder)", snomed_pt="")], IDX)
    assert codes(found) == [("PT_MISMATCH", "snomed_pt", None, "")]


def test_term_without_code_is_unexpected() -> None:
    # An event of a type that carries no SNOMED CT concept: nothing can back these terms.
    records = [
        ev(event_type="medication", snomed_fsn="Alpha (disorder)", related_condition="Alpha"),
        ev(**alpha(), related_condition="Alpha"),
    ]
    found = check_events(records, IDX)
    assert [(f.line, f.code, f.field, f.expected, f.found) for f in found] == [
        (1, "UNEXPECTED_TERM", "snomed_fsn", None, "Alpha (disorder)"),
        (1, "UNEXPECTED_TERM", "related_condition", None, "Alpha"),
        (2, "UNEXPECTED_TERM", "related_condition", None, "Alpha"),
    ]


def test_extension_concept_carries_its_code_only() -> None:
    ext = "456191000124101"
    assert check_events([ev(snomed_code=ext, label="care plan started")], IDX) == []
    found = check_events(
        [
            ev(
                snomed_code="442571000124108",
                related_condition_snomed_code=ext,
                related_condition="Something",
                related_condition_snomed_fsn="Something (x)",
            )
        ],
        IDX,
    )
    assert codes(found) == [
        ("UNEXPECTED_TERM", "related_condition", None, "Something"),
        ("UNEXPECTED_TERM", "related_condition_snomed_fsn", None, "Something (x)"),
    ]


def test_short_format_concept_not_in_release() -> None:
    found = check_events([ev(snomed_code="22298006", snomed_fsn="x")], IDX)
    assert codes(found) == [
        ("NOT_IN_RELEASE", "snomed_code", "a concept of the release", "22298006")
    ]


def test_procedure_label_is_the_fsn_or_the_pt() -> None:
    beta = {"snomed_code": B, "snomed_fsn": "Beta (procedure)", "snomed_pt": "Beta op"}
    records = [
        ev(event_type="procedure", label="Beta op", **beta),
        ev(event_type="procedure", label="Beta (procedure)", **beta),
        ev(event_type="procedure", label="beta op", **beta),
        ev(event_type="procedure", **{**beta, "label": None}),
        ev(event_type="condition", label="Beta op started", **beta),  # not a procedure
    ]
    found = check_events(records, IDX)
    assert [(f.line, f.code, f.expected, f.found) for f in found] == [
        (3, "LABEL_MISMATCH", ["Beta (procedure)", "Beta op"], "beta op"),
        (4, "LABEL_MISMATCH", ["Beta (procedure)", "Beta op"], None),
    ]


def test_procedure_label_with_no_us_term_must_be_the_fsn() -> None:
    delta = {"snomed_code": D, "snomed_fsn": "Delta (disorder)"}
    found = check_events([ev(event_type="procedure", label="", **delta)], IDX)
    assert codes(found) == [("LABEL_MISMATCH", "label", ["Delta (disorder)"], "")]


def test_related_condition_fsn_or_pt_and_missing() -> None:
    rc = {
        "related_condition_snomed_code": A,
        "related_condition_snomed_fsn": "Alpha (disorder)",
        "related_condition_snomed_pt": "Alpha",
    }
    records = [
        ev(**alpha(), related_condition="Alpha", **rc),
        ev(**alpha(), related_condition="Alpha (disorder)", **rc),
        ev(**alpha(), **rc),
        ev(**alpha(), related_condition="Alpha", **{**rc, "related_condition_snomed_pt": "alpha"}),
    ]
    found = check_events(records, IDX)
    assert [(f.line, f.code, f.field, f.found) for f in found] == [
        (3, "RELATED_CONDITION_MISMATCH", "related_condition", None),
        (4, "PT_MISMATCH", "related_condition_snomed_pt", "alpha"),
    ]


def q(concept: Any, **fields: Any) -> dict[str, Any]:
    return {"qid": "q1", "predicate": {"concept": concept}, **fields}


def test_question_identifier_and_label_rules() -> None:
    records = [
        q(
            A,
            concept_snomed_code=A,
            concept_snomed_fsn="Alpha (disorder)",
            concept_snomed_pt="Alpha",
        ),
        q("quillon level"),
        q("quillon level", concept_snomed_code=None),
        q("quillon level", concept_snomed_pt="Quillon", concept_snomed_semantic_tag="x"),
        q(A, concept_snomed_fsn="Alpha (disorder)", concept_snomed_pt="Alpha"),
        q(22298006, concept_snomed_code="22298006"),
    ]
    found = check_questions(records, IDX)
    assert [(f.line, f.code, f.field, f.expected, f.found) for f in found] == [
        (4, "LABEL_CONCEPT_HAS_SNOMED_FIELD", "concept_snomed_pt", None, "Quillon"),
        (4, "LABEL_CONCEPT_HAS_SNOMED_FIELD", "concept_snomed_semantic_tag", None, "x"),
        (5, "CODE_MISMATCH", "concept_snomed_code", A, None),
        # Not also a CODE_MISMATCH: its "expected" would be the malformed number.
        (6, "SCTID_FORMAT", "predicate.concept", "a string of 6 to 18 digits", 22298006),
    ]


def test_question_concept_that_is_not_in_the_release() -> None:
    found = check_questions([q("22298006", concept_snomed_code="22298006")], IDX)
    assert codes(found) == [
        ("NOT_IN_RELEASE", "predicate.concept", "a concept of the release", "22298006")
    ]


@pytest.mark.parametrize(
    ("record", "problem"),
    [
        ({"qid": "q9"}, "predicate is missing or not an object"),
        ({"qid": "q9", "predicate": {"window": 3}}, "predicate.concept is missing or empty"),
        ({"qid": "q9", "predicate": {"concept": ""}}, "predicate.concept is missing or empty"),
    ],
)
def test_question_without_a_concept_is_bad_input(record: dict[str, Any], problem: str) -> None:
    with pytest.raises(BadInputError) as exc:
        check_questions([q(A), record], IDX)
    assert (exc.value.path, exc.value.line, exc.value.key, exc.value.problem) == (
        Q,
        2,
        "q9",
        problem,
    )


# --------------------------------------------------------------------------------------------
# Reading the JSON lines


def write_release(root: Path, events: str, questions: str = "") -> Path:
    (root / "artifacts").mkdir(parents=True)
    (root / EV).write_text(events, "utf-8", newline="")
    (root / Q).write_text(questions, "utf-8", newline="")
    return root


def findings_of(
    index: ConceptIndex, events: Iterable[Any] = (), questions: Iterable[Any] = ()
) -> list[Finding]:
    """The findings of a release holding these records, one a line, as ``validate_release``
    (what ``gps validate`` runs) gives them."""
    with tempfile.TemporaryDirectory() as tmp:
        jsonl = ["".join(json.dumps(r) + "\n" for r in rs) for rs in (events, questions)]
        return validate_release(write_release(Path(tmp), *jsonl), index).findings


def check_events(records: Iterable[Any], index: ConceptIndex) -> list[Finding]:
    return findings_of(index, events=records)


def check_questions(records: Iterable[Any], index: ConceptIndex) -> list[Finding]:
    return findings_of(index, questions=records)


def test_line_numbers_survive_batches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(validate_module, "BATCH_BYTES", 300)
    lines = [json.dumps(ev(event_id=f"e{i}", **alpha())) for i in range(50)]
    lines[37] = json.dumps(ev(event_id="e37", **alpha(snomed_pt="ALPHA")))
    root = write_release(tmp_path, "\n".join(lines) + "\n")
    assert (root / EV).stat().st_size > 10 * 300  # read in more than ten batches
    report = validate_release(root, IDX)
    assert report.records[EV] == 50
    assert [(f.line, f.record) for f in report.findings] == [(38, "e37")]


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ('{"a": 1}\n\n{"b": 2}\n', 2, "blank line"),
        ('{"a": 1}\n[1, 2]\n', 2, "a JSON list, not an object"),
        ('{"a": 1}\n{"b": 2} {"c": 3}\n', 2, "invalid JSON: Extra data (column 10)"),
        ('{"a": 1}\n{"b": \n', 2, "invalid JSON: Expecting value (column 7)"),
        ('\ufeff{"a": 1}\n', 1, "the file starts with a byte order mark"),
        (
            '{"a": 1}\n{"found": NaN}\n',
            2,
            "invalid JSON: NaN is not a JSON value (RFC 8259 has no NaN or Infinity)",
        ),
        (
            '{"a": Infinity}\n',
            1,
            "invalid JSON: Infinity is not a JSON value (RFC 8259 has no NaN or Infinity)",
        ),
        (
            '{"a": 1}\n{"b": 2}\n{"a": [-Infinity]}\n',
            3,
            "invalid JSON: -Infinity is not a JSON value (RFC 8259 has no NaN or Infinity)",
        ),
        # The one strict reader (jsonio), in the fast path's batches as line by line.
        ('{"a": 1}\n{"b": 2, "b": 3}\n', 2, "the key 'b' appears twice in one object"),
        ('{"a": {"c": 1, "c": 1}}\n', 1, "the key 'c' appears twice in one object"),
        (
            '{"a": 1}\n{"b": 1e99999}\n',
            2,
            "invalid JSON: the number 1e99999 is too large for a 64-bit float",
        ),
        (
            '{"b": [-1' + "0" * 400 + ".5]}\n",
            1,
            "invalid JSON: the number -1" + "0" * 35 + "... is too large for a 64-bit float",
        ),
        (
            '{"a": 1}\n{"a": ' + "[" * 100_000 + "]" * 100_000 + "}\n",
            2,
            "JSON this tool cannot read: nested deeper than Python's recursion limit",
        ),
        # A line left open and a line holding two objects: together, as many objects as lines.
        (
            '{"a": [1\n{"x": 2}]}\n{"c": 1}, {"d": 1}\n',
            1,
            "invalid JSON: Expecting ',' delimiter (column 9)",
        ),
        ('{"c": 1}, {"d": 1}\n', 1, "invalid JSON: Extra data (column 9)"),
        ('{"c": 1}\u00a0\n', 1, "invalid JSON: Extra data (column 9)"),
    ],
)
def test_unusable_lines(tmp_path: Path, text: str, line: int, problem: str) -> None:
    path = tmp_path / "e.jsonl"
    path.write_text(text, "utf-8")
    with pytest.raises(BadInputError) as exc:
        list(iter_records(path, EV))
    assert (exc.value.path, exc.value.line, exc.value.problem) == (EV, line, problem)


def test_the_first_line_at_fault_is_named(tmp_path: Path) -> None:
    """A question with no predicate on line 2 and a line that is not JSON on line 3, in one
    batch: line 2 is named (records are checked as they are read, line after line)."""
    root = write_release(tmp_path / "r", "", '{"qid": "q1", "predicate": {"concept": "x"}}\n'
                         '{"qid": "q2"}\n{"qid": \n')  # fmt: skip
    with pytest.raises(BadInputError) as exc:
        validate_release(root, IDX)
    assert (exc.value.path, exc.value.line, exc.value.problem) == (
        Q,
        2,
        "predicate is missing or not an object",
    )


def test_a_non_utf8_artifact_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    path.write_bytes(b'{"a": 1}\n' * 5000 + b'{"a": "caf\xe9"}\n')  # Latin-1 on line 5001
    with pytest.raises(BadInputError) as exc:
        list(iter_records(path, EV))
    assert (exc.value.path, exc.value.line, exc.value.problem, exc.value.hint) == (
        EV,
        5001,
        "bytes that are not UTF-8 (invalid continuation byte at column 11)",  # byte 11: \xe9
        "the artifacts are UTF-8 JSON Lines; write the file again as UTF-8",
    )


@pytest.mark.parametrize("batch", [1 << 20, 4 << 20], ids=["line across blocks", "in a block"])
@pytest.mark.parametrize("before", [b"", b'{"a": 1}\n' * 3])
def test_a_line_longer_than_1_mib_is_bad_input_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, before: bytes, batch: int
) -> None:
    """A newline-less artifact (a 3 GB one used to be read whole: MemoryError, exit 70) stops
    at 1 MiB of one line, naming the file and the line, before the line is held whole."""
    monkeypatch.setattr(validate_module, "BATCH_BYTES", batch)
    path = tmp_path / "e.jsonl"
    path.write_bytes(before + b'{"a": "' + b"x" * ARTIFACT_LINE_MAX + b'"}\n{"b": 1}\n')
    with pytest.raises(BadInputError) as exc:
        list(iter_records(path, EV))
    assert (exc.value.path, exc.value.line, exc.value.problem, exc.value.hint) == (
        EV,
        before.count(b"\n") + 1,
        "a line longer than 1048576 bytes; an artifact has no such line",
        "each line of an artifact is one JSON record; write the file again",
    )
    # a line of exactly the limit is read
    path.write_bytes(before + b'{"a": "' + b"x" * (ARTIFACT_LINE_MAX - 9) + b'"}\n{"b": 1}\n')
    records = list(iter_records(path, EV))
    assert (len(records), records[-1]) == (before.count(b"\n") + 2, {"b": 1})


def test_json_whitespace_around_an_object_and_crlf_are_accepted(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    path.write_bytes(b'{"a": 1}\r\n  {"b": 2}\t\n{"c": 3}')
    assert list(iter_records(path, EV)) == [{"a": 1}, {"b": 2}, {"c": 3}]
    # an array of objects in one line looks like two objects to the fast path: read line by line
    path.write_bytes(b'{"w": [{"a": 1}, {"b": 2}]}\n{"c": 3}\n')
    assert list(iter_records(path, EV)) == [{"w": [{"a": 1}, {"b": 2}]}, {"c": 3}]


def test_u2028_inside_a_string_and_no_final_newline(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    path.write_text('{"label": "a\u2028b\u0085c"}\n{"x": 1}', "utf-8")
    assert list(iter_records(path, EV)) == [{"label": "a\u2028b\u0085c"}, {"x": 1}]


def test_empty_files_are_zero_records(tmp_path: Path) -> None:
    root = write_release(tmp_path / "r", "", "")
    report = validate_release(root, IDX)
    assert (report.records, report.findings) == ({EV: 0, Q: 0}, [])


def test_missing_artifact_is_bad_input(tmp_path: Path) -> None:
    root = tmp_path / "r"
    (root / "artifacts").mkdir(parents=True)
    (root / EV).write_text("", "utf-8")
    with pytest.raises(BadInputError) as exc:
        validate_release(root, IDX)
    assert str(exc.value) == f"{root / Q}: the file is missing"  # which release lacks it


def test_release_that_is_not_a_folder(tmp_path: Path) -> None:
    with pytest.raises(BadInputError) as info:
        validate_release(tmp_path / "nope", IDX)
    assert (str(info.value), info.value.hint) == (
        f"{tmp_path / 'nope'}: not a folder",
        "pass the release folder (the one holding artifacts/)",
    )


def test_validation_needs_no_manifest(tmp_path: Path) -> None:
    # A manifest that lists a missing file and a wrong hash: a validator that checked it would
    # refuse the folder; this one reads the two artifacts and nothing else.
    root = tmp_path / "r"
    shutil.copytree(PLANTED, root)
    (root / "MANIFEST.sha256").write_text(
        f"{'0' * 64}  {EV}\n{'1' * 64}  synonyms/synonym_table_kept.json\n", "utf-8"
    )
    report = validate_release(root, load_concept_index(GPS_FILE))
    assert as_tuples(report.findings) == PLANTED_FINDINGS
    assert report.records == {EV: 14, Q: 6}


def test_report_as_dict() -> None:
    report = validate_release(PLANTED, load_concept_index(GPS_FILE))
    data = report.as_dict()
    assert data["outcome"] == "findings"
    assert data["exit_code"] == 1
    assert data["records_checked"] == {EV: 14, Q: 6}
    assert data["counts"] == dict.fromkeys(FindingCode, 1)
    assert data["gps"]["release_date"] == "20990101"
    assert data["gps"]["kind"] == "gps-tsv"
    first = data["findings"][0]
    assert set(first) == {"code", "file", "line", "record", "field", "expected", "found", "message"}
    assert first["message"] == "snomed_fsn differs from the FSN of 9000000008005"
    assert data["message"] == "12 findings: the artifacts differ from the release"
    json.dumps(data)  # JSON-ready


def test_a_finding_of_a_deeply_nested_value_is_listed_as_it_is() -> None:
    """A value nested as deep as the JSON reader takes (600 lists) is a finding's ``found`` as
    read: ``as_dict`` (``gps validate --json``) does not copy it deeply into a RecursionError."""
    deep = json.loads("[" * 600 + "]" * 600)
    (finding,) = check_events([ev(event_type="medication", snomed_fsn=deep)], IDX)
    assert finding.as_dict() == {
        "code": "UNEXPECTED_TERM",
        "file": EV,
        "line": 1,
        "record": "e1",
        "field": "snomed_fsn",
        "expected": None,
        "found": deep,
        "message": "snomed_fsn is set, but snomed_code is absent: no concept backs it",
    }
    assert list(finding.as_dict()) == [
        "code", "file", "line", "record", "field", "expected", "found", "message"
    ]  # fmt: skip


# --------------------------------------------------------------------------------------------
# A question's concept: identifier or label


def test_a_malformed_identifier_is_not_taken_for_a_label() -> None:
    a_terms = {"concept_snomed_fsn": "Alpha (disorder)", "concept_snomed_pt": "Alpha"}
    records = [
        # A stray space, with the right code and terms: the fix is in predicate.concept only.
        q(f"{A} ", concept_snomed_code=A, **a_terms),
        # A stray space and no SNOMED CT field at all: not a label either.
        q(f" {A}"),
        # A label with a code: SPEC section 6 decides from predicate.concept alone (a label).
        q("alpha", concept_snomed_code=A),
    ]
    found = check_questions(records, IDX)
    assert [(f.line, f.code, f.field, f.expected, f.found, f.message) for f in found] == [
        (
            1,
            "SCTID_FORMAT",
            "predicate.concept",
            "6 to 18 digits, no leading zero",
            f"{A} ",
            f"'{A} ' is not an SCTID: it has characters other than the digits 0-9",
        ),
        (
            2,
            "SCTID_FORMAT",
            "predicate.concept",
            "6 to 18 digits, no leading zero",
            f" {A}",
            f"' {A}' is not an SCTID: it has characters other than the digits 0-9",
        ),
        (
            3,
            "LABEL_CONCEPT_HAS_SNOMED_FIELD",
            "concept_snomed_code",
            None,
            A,
            "predicate.concept 'alpha' is a label, not a SNOMED CT identifier, so "
            "concept_snomed_code must be absent (or, for a SNOMED CT concept, predicate.concept "
            "must be its identifier)",
        ),
    ]


def test_code_mismatch_needs_a_valid_identifier_to_compare_with() -> None:
    # A check-digit error in predicate.concept: its finding says so; a CODE_MISMATCH would ask
    # for the wrong digit in a code that is right.
    found = check_questions([q("9000000001005", concept_snomed_code=A)], IDX)
    assert codes(found) == [
        ("SCTID_CHECKDIGIT", "predicate.concept", "check digit 4", "9000000001005")
    ]


# --------------------------------------------------------------------------------------------
# Partition-10 identifiers: the code-only rule follows what the International source holds

PROMOTED = "424201000124108"  # a partition-10 identifier (namespace 1000124)
EXT = "456191000124101"


def test_partition_10_concept_that_the_release_holds_is_checked_like_any_other() -> None:
    index = ConceptIndex(
        {PROMOTED: encode_row("Promoted plan (regime/therapy)", "Promoted plan", True)},
        "test",
        "test",
        None,
        None,
    )
    terms = {"snomed_fsn": "Promoted plan (regime/therapy)", "snomed_pt": "Promoted plan"}
    records = [
        ev(event_type="careplan", snomed_code=PROMOTED, **terms),
        ev(event_type="careplan", snomed_code=PROMOTED),
    ]
    found = check_events(records, index)
    assert [(f.line, f.code, f.field, f.expected, f.found) for f in found] == [
        (2, "FSN_MISMATCH", "snomed_fsn", "Promoted plan (regime/therapy)", None),
        (2, "PT_MISMATCH", "snomed_pt", "Promoted plan", None),
    ]


def test_partition_10_concept_that_the_release_does_not_hold_is_a_code_only() -> None:
    records = [
        ev(event_type="careplan", snomed_code=PROMOTED),
        ev(
            event_type="careplan", snomed_code=PROMOTED, snomed_fsn="Promoted plan (regime/therapy)"
        ),
    ]
    found = check_events(records, IDX)
    assert [(f.line, f.code, f.field, f.expected, f.found, f.message) for f in found] == [
        (
            2,
            "UNEXPECTED_TERM",
            "snomed_fsn",
            None,
            "Promoted plan (regime/therapy)",
            f"snomed_fsn is set, but {PROMOTED} is an extension identifier (partition 10) that "
            "the release does not hold: it ships as a code only, with no term",
        )
    ]


def rf2_with_promoted(folder: Path, newer: str, older: str) -> Path:
    """The fixture RF2 snapshot, plus a partition-10 concept whose older row is in module
    ``older`` and newer row in module ``newer`` (its terms in core)."""
    core = "900000000000207008"
    shutil.copytree(RF2_DIR, folder)
    added = {
        "sct2_Concept_Snapshot_INT_20990101.txt": [
            f"{PROMOTED}\t20980101\t1\t{older}\td",
            f"{PROMOTED}\t20990101\t1\t{newer}\td",
        ],
        "sct2_Description_Snapshot-en_INT_20990101.txt": [
            f"4242111000124115\t20990101\t1\t{core}\t{PROMOTED}\ten\t900000000000003001\t"
            "Promoted plan (regime/therapy)\tc",
            f"4242121000124110\t20990101\t1\t{core}\t{PROMOTED}\ten\t900000000000013009\t"
            "Promoted plan\tc",
        ],
        "der2_cRefset_LanguageSnapshot-en_INT_20990101.txt": [
            f"p-1\t20990101\t1\t{core}\t900000000000509007\t4242121000124110\t900000000000548007",
        ],
    }
    for name, rows in added.items():
        with (folder / name).open("a", encoding="utf-8", newline="") as f:
            f.write("".join(r + "\r\n" for r in rows))
    return folder


def test_rf2_promoted_and_demoted_partition_10_concepts(tmp_path: Path) -> None:
    core, us_module = "900000000000207008", "731000124108"
    code_only = [ev(event_type="careplan", snomed_code=PROMOTED)]
    promoted = load_concept_index(rf2_with_promoted(tmp_path / "promoted", core, us_module))
    assert promoted.get(PROMOTED) == ("Promoted plan (regime/therapy)", "Promoted plan", True)
    assert codes(check_events(code_only, promoted)) == [
        ("FSN_MISMATCH", "snomed_fsn", "Promoted plan (regime/therapy)", None),
        ("PT_MISMATCH", "snomed_pt", "Promoted plan", None),
    ]
    demoted = load_concept_index(rf2_with_promoted(tmp_path / "demoted", us_module, core))
    assert demoted.get(PROMOTED) is None
    assert check_events(code_only, demoted) == []


@pytest.mark.parametrize(
    ("key", "code"),
    [
        ("snomed_code", FindingCode.SCTID_FORMAT),
        ("snomed_fsn", FindingCode.UNEXPECTED_TERM),
        ("snomed_pt", FindingCode.UNEXPECTED_TERM),
        ("related_condition_snomed_code", FindingCode.SCTID_FORMAT),
        ("related_condition", FindingCode.UNEXPECTED_TERM),
        ("related_condition_snomed_fsn", FindingCode.UNEXPECTED_TERM),
        ("related_condition_snomed_pt", FindingCode.UNEXPECTED_TERM),
    ],
)
def test_each_snomed_key_alone_is_checked_and_null_counts_as_absent(
    key: str, code: FindingCode
) -> None:
    """Each SNOMED CT key, set alone on a medication, is read; set to null, it is absent (on a
    condition, the code is then missing)."""
    assert [f.code for f in check_events([ev(event_type="medication", **{key: "x"})], IDX)] == [
        code
    ]
    assert check_events([ev(event_type="medication", **{key: None})], IDX) == []
    missing = check_events([ev(**{key: None})], IDX)
    assert [(f.code, f.field, f.found) for f in missing] == [
        (FindingCode.NOT_IN_RELEASE, "snomed_code", None)
    ]
