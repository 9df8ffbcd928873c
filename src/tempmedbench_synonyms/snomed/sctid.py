"""SNOMED CT identifiers (SCTIDs): format, partition, namespace and Verhoeff check digit.

Read right to left (SNOMED CT Technical Implementation Guide, "SCTID data structure"): item
identifier, [7-digit namespace], partition (2 digits), check digit. Always handled as strings:
an SCTID has up to 18 digits, which a float would change.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from enum import StrEnum
from functools import lru_cache


class FindingCode(StrEnum):
    """Why a SNOMED CT field differs from the release: SPEC section 6's stable codes, in its order.

    The first three need an identifier only (this module), the others the release
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


MIN_LENGTH = 6
MAX_LENGTH = 18
# A long-format identifier needs at least one item digit, the 7-digit namespace, the partition and
# the check digit.
NAMESPACE_LENGTH = 7
MIN_LONG_LENGTH = 1 + NAMESPACE_LENGTH + 2 + 1

# Partition identifiers of the SNOMED CT Technical Implementation Guide.
PARTITIONS: dict[str, tuple[str, str]] = {
    "00": ("concept", "short"),
    "01": ("description", "short"),
    "02": ("relationship", "short"),
    "10": ("concept", "long"),
    "11": ("description", "long"),
    "12": ("relationship", "long"),
}
CONCEPT_PARTITIONS = frozenset({"00", "10"})
EXTENSION_CONCEPT_PARTITION = "10"


def _d5(j: int, k: int) -> int:
    """``j * k`` in the dihedral group D5, numbered as Verhoeff does: 0-4 the rotations, 5-9 the
    reflections."""
    if j < 5:
        return (j + k) % 5 + (5 if k >= 5 else 0)
    return (j - k) % 5 + (0 if k >= 5 else 5)


# Verhoeff's tables: _D the multiplication table of D5, _P the position permutations (row i is
# row 1 applied i times, a cycle of 8), _INV the group inverses.
_D = tuple(tuple(_d5(j, k) for k in range(10)) for j in range(10))
_P: list[tuple[int, ...]] = [tuple(range(10))]
for _ in range(7):
    _P.append(tuple((1, 5, 7, 6, 2, 8, 3, 0, 9, 4)[n] for n in _P[-1]))
_INV: tuple[int, ...] = (0, 4, 3, 2, 1, 5, 6, 7, 8, 9)


def _is_digits(value: str) -> bool:
    # str.isdigit() alone accepts "²" and Arabic-Indic digits; an SCTID is ASCII only.
    return value.isascii() and value.isdigit()


def verhoeff_check_digit(payload: str) -> str:
    """The Verhoeff check digit to append to ``payload`` (a string of ASCII digits)."""
    if not payload or not _is_digits(payload):
        raise ValueError(f"a Verhoeff payload is one or more ASCII digits, not {payload!r}")
    c = 0
    # The check digit will take position 0, so the payload's rightmost digit is position 1.
    for i, ch in enumerate(reversed(payload), start=1):
        c = _D[c][_P[i % 8][ord(ch) - 48]]
    return str(_INV[c])


@dataclass(frozen=True, slots=True)
class SctidProblem:
    """One reason an identifier cannot be a SNOMED CT concept identifier."""

    code: FindingCode
    expected: str
    message: str


@dataclass(frozen=True, slots=True)
class SctidInfo:
    """What an identifier says about itself, and what is wrong with it as a concept identifier
    (a part it is not well formed enough to have is None)."""

    sctid: str
    problems: tuple[SctidProblem, ...]
    well_formed: bool = True
    format: str | None = None
    partition: str | None = None
    component: str | None = None
    namespace: str | None = None
    item_identifier: str | None = None
    check_digit: str | None = None
    expected_check_digit: str | None = None

    @property
    def is_extension_concept(self) -> bool:
        """A long-format concept identifier: it belongs to an extension's namespace."""
        return not self.problems and is_extension_concept(self.sctid)

    def as_dict(self) -> dict[str, object]:
        parts = {f.name: getattr(self, f.name) for f in fields(self)[3:]}  # format to check digit
        return {
            "sctid": self.sctid,
            "valid": not self.problems,
            "well_formed": self.well_formed,
            **parts,
            "extension_concept": self.is_extension_concept,
            "problems": [
                {"code": p.code.value, "expected": p.expected, "message": p.message}
                for p in self.problems
            ],
        }


_FORMAT_EXPECTED = "6 to 18 digits, no leading zero"


def parse_sctid(value: str) -> SctidInfo:
    """SPEC section 6. Not 6 to 18 ASCII digits without a leading zero: ``SCTID_FORMAT`` only;
    else partition and check digit are checked independently."""
    if not _is_digits(value) or not MIN_LENGTH <= len(value) <= MAX_LENGTH or value[0] == "0":
        if not value:
            why = "it is empty"
        elif not _is_digits(value):
            why = "it has characters other than the digits 0-9"
        elif value[0] == "0":
            why = "it has a leading zero"
        else:
            why = f"it has {len(value)} digits"
        problem = SctidProblem(
            FindingCode.SCTID_FORMAT, _FORMAT_EXPECTED, f"{value!r} is not an SCTID: {why}"
        )
        return SctidInfo(value, (problem,), well_formed=False)

    check = value[-1]
    expected_check = verhoeff_check_digit(value[:-1])
    partition = value[-3:-1]
    component, fmt = PARTITIONS.get(partition, (None, None))
    namespace: str | None = None
    item: str | None = value[:-3]
    if fmt == "long" and len(value) < MIN_LONG_LENGTH:
        # Not enough digits left of the partition for a namespace and an item identifier.
        problem = SctidProblem(
            FindingCode.SCTID_FORMAT,
            f"at least {MIN_LONG_LENGTH} digits for a long-format (partition {partition}) id",
            f"{value!r} has partition {partition} (long format) but only {len(value)} digits: "
            f"no room for a {NAMESPACE_LENGTH}-digit namespace and an item identifier",
        )
        known = (fmt, partition, component, None, None, check, expected_check)
        return SctidInfo(value, (problem,), False, *known)
    if fmt == "long":
        namespace = value[-3 - NAMESPACE_LENGTH : -3]
        item = value[: -3 - NAMESPACE_LENGTH]
    problems: list[SctidProblem] = []
    if partition not in CONCEPT_PARTITIONS:
        what = f"a {component} identifier" if component else "an unknown partition"
        problems.append(
            SctidProblem(
                FindingCode.SCTID_PARTITION,
                "partition 00 or 10 (a concept)",
                f"{value!r} has partition {partition} ({what}), not a concept partition (00 or 10)",
            )
        )
    if check != expected_check:
        problems.append(
            SctidProblem(
                FindingCode.SCTID_CHECKDIGIT,
                f"check digit {expected_check}",
                f"{value!r} fails the Verhoeff check: its last digit is {check}, "
                f"the digits before it call for {expected_check}",
            )
        )
    parts = (fmt, partition, component, namespace, item, check, expected_check)
    return SctidInfo(value, tuple(problems), True, *parts)


def is_extension_concept(value: str) -> bool:
    """Whether ``value``'s partition is an extension concept's (``10``); call it on a valid id."""
    return value[-3:-1] == EXTENSION_CONCEPT_PARTITION


@lru_cache(maxsize=65536)
def concept_id_problems(value: str) -> tuple[SctidProblem, ...]:
    """The problems of ``value`` as a concept identifier (cached: codes repeat in a release)."""
    return parse_sctid(value).problems
