"""The closed vocabularies of the SNOMED CT side (``str`` enums): finding codes (SPEC section 6)
and the outcome of ``gps validate`` (``gps lookup`` says ``errors.Outcome``'s found, not_found)."""

from __future__ import annotations

from enum import StrEnum


class FindingCode(StrEnum):
    """Why a SNOMED CT field differs from the release: SPEC section 6's stable codes, in its order.

    The first three need an identifier only (:mod:`.sctid`), the others the release
    (:mod:`.validate`). ``CODE_MISMATCH``, for SPEC 6's unnamed "``concept_snomed_code`` must equal
    ``predicate.concept``" rule, is added rather than folded into another code.
    """

    SCTID_FORMAT = "SCTID_FORMAT"
    SCTID_PARTITION = "SCTID_PARTITION"
    SCTID_CHECKDIGIT = "SCTID_CHECKDIGIT"
    NOT_IN_RELEASE = "NOT_IN_RELEASE"
    INACTIVE_IN_RELEASE = "INACTIVE_IN_RELEASE"
    FSN_MISMATCH = "FSN_MISMATCH"
    PT_MISMATCH = "PT_MISMATCH"
    LABEL_MISMATCH = "LABEL_MISMATCH"
    RELATED_CONDITION_MISMATCH = "RELATED_CONDITION_MISMATCH"
    UNEXPECTED_TERM = "UNEXPECTED_TERM"
    LABEL_CONCEPT_HAS_SNOMED_FIELD = "LABEL_CONCEPT_HAS_SNOMED_FIELD"
    CODE_MISMATCH = "CODE_MISMATCH"


class ValidationOutcome(StrEnum):
    """The outcome of ``gps validate``: exit 0 when clean, 1 with findings."""

    CLEAN = "clean"
    FINDINGS = "findings"
