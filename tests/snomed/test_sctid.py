"""SCTID checks: Verhoeff check digit, format, partition, namespace (snomed/sctid.py).

The valid and invalid examples are the official examples of the SNOMED CT Technical Implementation
Guide, used here as identifiers only.
"""

from __future__ import annotations

import pytest

from tempmedbench_synonyms.snomed.sctid import (
    FindingCode,
    concept_id_problems,
    is_extension_concept,
    parse_sctid,
    verhoeff_check_digit,
)

SCTID_FORMAT = FindingCode.SCTID_FORMAT
SCTID_PARTITION = FindingCode.SCTID_PARTITION
SCTID_CHECKDIGIT = FindingCode.SCTID_CHECKDIGIT


def make_sctid(item: int, partition: str = "00", namespace: str = "") -> str:
    """The SCTID of an invented ``item``: its payload and the Verhoeff check digit."""
    payload = f"{item}{namespace}{partition}"
    return payload + verhoeff_check_digit(payload)


OFFICIAL_VALID = ["22298006", "44054006", "73211009", "80146002", "386661006", "442571000124108"]
OFFICIAL_INVALID = [
    ("22298007", [(SCTID_CHECKDIGIT, "check digit 6")]),
    # "06" is no partition at all, and the check digit is wrong too.
    (
        "22298060",
        [(SCTID_PARTITION, "partition 00 or 10 (a concept)"), (SCTID_CHECKDIGIT, "check digit 8")],
    ),
]


@pytest.mark.parametrize("sctid", OFFICIAL_VALID)
def test_official_valid_examples_pass_every_check(sctid: str) -> None:
    assert verhoeff_check_digit(sctid[:-1]) == sctid[-1]
    assert parse_sctid(sctid).problems == ()
    assert parse_sctid(sctid).as_dict()["valid"]


@pytest.mark.parametrize(("sctid", "problems"), OFFICIAL_INVALID)
def test_official_invalid_examples_fail_the_check_digit(
    sctid: str, problems: list[tuple[str, str]]
) -> None:
    assert verhoeff_check_digit(sctid[:-1]) != sctid[-1]
    assert [(p.code, p.expected) for p in parse_sctid(sctid).problems] == problems


def test_check_digit_by_hand() -> None:
    # Verhoeff by hand for the payload "2229800": its digits from the right are 0,0,8,9,2,2,2 at
    # positions 1..7 (the check digit will be position 0), and c = d[c][p[i % 8][digit]]:
    #   c: 0 -> d[0][p1[0]=1]=1 -> d[1][p2[0]=5]=6 -> d[6][p3[8]=2]=9 -> d[9][p4[9]=0]=9
    #        -> d[9][p5[2]=8]=1 -> d[1][p6[2]=9]=5 -> d[5][p7[2]=4]=6;  inv[6] = 6.
    assert verhoeff_check_digit("2229800") == "6"
    # 22298007 ends in 7 instead: the message says which digit the others call for.
    info = parse_sctid("22298007")
    assert [(p.code, p.expected) for p in info.problems] == [(SCTID_CHECKDIGIT, "check digit 6")]
    assert info.expected_check_digit == "6"


def test_every_single_digit_error_is_caught() -> None:
    good = "386661006"
    for i in range(len(good)):
        for d in "0123456789":
            if d != good[i]:
                wrong = good[:i] + d + good[i + 1 :]
                assert verhoeff_check_digit(wrong[:-1]) != wrong[-1], (i, d)


def test_every_adjacent_swap_is_caught() -> None:
    good = "442571000124108"
    for i in range(len(good) - 1):
        if good[i] != good[i + 1]:
            swapped = good[:i] + good[i + 1] + good[i] + good[i + 2 :]
            assert verhoeff_check_digit(swapped[:-1]) != swapped[-1], i


def test_partition_and_check_digit_are_both_reported() -> None:
    # 22298060: partition "06" is no partition at all, and the check digit is wrong too.
    info = parse_sctid("22298060")
    assert [p.code for p in info.problems] == [SCTID_PARTITION, SCTID_CHECKDIGIT]
    assert info.partition == "06"
    assert info.component is None


def test_short_format_parts() -> None:
    info = parse_sctid("22298006")
    assert (info.format, info.partition, info.component, info.namespace, info.item_identifier) == (
        "short",
        "00",
        "concept",
        None,
        "22298",
    )
    assert info.check_digit == "6"
    assert not info.is_extension_concept


def test_long_format_parts_and_extension() -> None:
    info = parse_sctid("442571000124108")
    assert (info.format, info.partition, info.component, info.namespace, info.item_identifier) == (
        "long",
        "10",
        "concept",
        "1000124",
        "44257",
    )
    assert info.is_extension_concept
    ext = parse_sctid("456191000124101")
    assert ext.problems == () and ext.is_extension_concept and ext.namespace == "1000124"


def test_description_identifier_is_a_partition_problem_only() -> None:
    desc = make_sctid(9100000001, "01")
    assert desc == "9100000001016"
    info = parse_sctid(desc)
    assert info.component == "description"
    assert [p.code for p in info.problems] == [SCTID_PARTITION]
    assert info.problems[0].expected == "partition 00 or 10 (a concept)"


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("", "it is empty"),
        ("12345", "it has 5 digits"),
        ("1234567890123456789", "it has 19 digits"),
        ("022298006", "it has a leading zero"),
        ("2229800 6", "it has characters other than the digits 0-9"),
        ("22298006\u0663", "it has characters other than the digits 0-9"),  # Arabic-Indic 3
        (
            "\uff12\uff12\uff12\uff19\uff18\uff10\uff10\uff16",
            "it has characters other than the digits 0-9",
        ),
    ],
)
def test_format_problems_stop_the_other_checks(value: str, why: str) -> None:
    info = parse_sctid(value)
    assert not info.well_formed
    assert [(p.code, p.expected) for p in info.problems] == [
        (SCTID_FORMAT, "6 to 18 digits, no leading zero")
    ]
    assert info.problems[0].message == f"{value!r} is not an SCTID: {why}"
    assert info.partition is None


def test_boundary_lengths() -> None:
    six = make_sctid(123)  # 3 item digits + partition + check = 6 digits
    assert len(six) == 6 and parse_sctid(six).problems == ()
    eighteen = make_sctid(123456789012345)
    assert len(eighteen) == 18 and parse_sctid(eighteen).problems == ()
    nineteen = make_sctid(1234567890123456)
    assert (
        parse_sctid(nineteen).problems[0].message
        == f"{nineteen!r} is not an SCTID: it has 19 digits"
    )


def test_long_format_needs_room_for_a_namespace() -> None:
    # Partition 10 with only 10 digits: no 7-digit namespace and item identifier fit.
    payload = "1234567" + "10"
    value = payload + verhoeff_check_digit(payload)
    info = parse_sctid(value)
    assert [p.code for p in info.problems] == [SCTID_FORMAT]
    assert info.problems[0].expected == "at least 11 digits for a long-format (partition 10) id"


def test_the_check_digit_of_official_identifiers_is_rebuilt() -> None:
    assert make_sctid(45619, "10", "1000124") == "456191000124101"
    assert make_sctid(22298) == "22298006"


def test_cached_problems_equal_parse() -> None:
    assert concept_id_problems("22298007") == parse_sctid("22298007").problems
    assert concept_id_problems("22298006") == ()


def test_verhoeff_rejects_non_digits() -> None:
    # a check digit needs a payload of one digit or more ("0" has none), of ASCII digits only
    for payload in ("", "12a"):
        with pytest.raises(ValueError) as info:
            verhoeff_check_digit(payload)
        assert str(info.value) == f"a Verhoeff payload is one or more ASCII digits, not {payload!r}"
    assert [p.code for p in parse_sctid("12a4").problems] == [SCTID_FORMAT]


@pytest.mark.parametrize(
    ("sctid", "extension"),
    [
        ("456191000124101", True),  # SPEC section 6's extension concept
        ("442571000124108", True),  # an official long-format example
        ("22298006", False),  # a short-format (International) concept
        ("9000000005009", False),  # partition 00 in a 13-digit id
        ("1000124111", False),  # partition 11: a long-format description
    ],
)
def test_is_extension_concept_reads_the_partition(sctid: str, extension: bool) -> None:
    assert is_extension_concept(sctid) is extension
    assert parse_sctid(sctid).is_extension_concept is (
        extension and parse_sctid(sctid).as_dict()["valid"]
    )
