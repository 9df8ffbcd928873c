"""The SNOMED side's closed vocabularies: exactly the SPEC's strings, and plain strings in JSON."""

from __future__ import annotations

import json

import pytest

from tempmedbench_synonyms.jsonio import report_text
from tempmedbench_synonyms.snomed.sctid import FindingCode
from tempmedbench_synonyms.snomed.validate import ValidationOutcome

# SPEC section 6, "Each finding has a stable code", in its order.
SPEC_FINDING_CODES = [
    "SCTID_FORMAT",
    "SCTID_PARTITION",
    "SCTID_CHECKDIGIT",
    "NOT_IN_RELEASE",
    "INACTIVE_IN_RELEASE",
    "FSN_MISMATCH",
    "PT_MISMATCH",
    "LABEL_MISMATCH",
    "RELATED_CONDITION_MISMATCH",
    "UNEXPECTED_TERM",
    "LABEL_CONCEPT_HAS_SNOMED_FIELD",
]


def test_finding_codes_are_the_specs_then_code_mismatch() -> None:
    """SPEC section 6's list exactly, in its order, plus the one code it lacks (FindingCode's
    docstring: concept_snomed_code must equal predicate.concept)."""
    assert [c.value for c in FindingCode] == [*SPEC_FINDING_CODES, "CODE_MISMATCH"]
    assert [c.name for c in FindingCode] == [c.value for c in FindingCode]


def test_outcomes_are_the_reports_strings() -> None:
    assert [o.value for o in ValidationOutcome] == ["clean", "findings"]


@pytest.mark.parametrize("member", [*FindingCode, *ValidationOutcome], ids=lambda m: m.name)
def test_a_member_is_its_plain_string_everywhere(member: FindingCode) -> None:
    value = member.value
    assert type(value) is str
    assert (member == value, hash(member) == hash(value)) == (True, True)
    assert (str(member), f"{member}", f"{member}", f"{member:>30}") == (
        value,
        value,
        value,
        f"{value:>30}",
    )
    assert json.dumps({member: [member]}) == json.dumps({value: [value]})
    assert report_text({"m": member, member: 1}) == report_text({"m": value, value: 1})
