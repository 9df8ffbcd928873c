"""atoms: one check for each identifier a query names, before anything is sent or read."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tempmedbench_synonyms.atoms import (
    check_aui,
    check_code,
    check_cui,
    check_release,
    check_sab,
    is_release,
)
from tempmedbench_synonyms.errors import BadInputError

RELEASE_HINT = (
    "the release comes from --umls-release, or else from umls_release in "
    "synonyms/synonym_table_kept.json"
)


def _table_hint(field: str) -> str:
    return f'give it as UMLS lists it (in a release table, the concept\'s "{field}")'


@pytest.mark.parametrize("good", ["2025AA", "2025AB", "1999AB", "2099AA", "current"])
def test_release_names_accepted(good: str) -> None:
    assert check_release(good) == good
    assert is_release(good)


@pytest.mark.parametrize(
    "bad",
    ["", "foo", "2025ab", "2025AC", "25AB", "2025AB\n", "current\n", "Current", "../2025AB",
     "2025AB/..", " 2025AB", "2025AA1", "２０２５AB"],
)  # fmt: skip
def test_release_names_are_checked(bad: str) -> None:
    with pytest.raises(BadInputError) as info:
        check_release(bad)
    assert str(info.value) == (
        f"{bad!r} is not a UMLS release name: expected YYYYAA or YYYYAB (the year and the "
        "release of that year, such as 2025AB), or current"
    )
    assert (info.value.hint, info.value.exit_code) == (RELEASE_HINT, 2)
    assert not is_release(bad)


CUI_FORM = "is not a UMLS concept identifier: expected C and 7 digits, such as C0020538"
AUI_FORM = "is not a UMLS atom identifier: expected A and 7 to 9 digits, such as A3220484"


@pytest.mark.parametrize(
    ("check", "bad", "message", "field"),
    [(check_cui, bad, f"CUI {bad!r} {CUI_FORM}", "cui")
     for bad in ["", "XYZ", "C123", "c0020538", "C00205381", "C002053a", "C0020538 "]]
    + [(check_aui, bad, f"AUI {bad!r} {AUI_FORM}", "aui")
       for bad in ["", "A1", "A123456", "A1234567890", "a3220484", "A3220484x", "3220484"]],
)  # fmt: skip
def test_cuis_are_c_and_7_digits_and_auis_a_and_7_to_9_digits(
    check: Callable[[str], str], bad: str, message: str, field: str
) -> None:
    with pytest.raises(BadInputError) as info:
        check(bad)
    assert str(info.value) == message
    assert info.value.hint == f"check the {field.upper()}: " + _table_hint(field)


def test_well_formed_cuis_and_auis_pass() -> None:
    assert check_cui("C0020538") == "C0020538"
    assert [check_aui(a) for a in ("A3220484", "A10873862", "A123456789")] == [
        "A3220484", "A10873862", "A123456789",
    ]  # fmt: skip


@pytest.mark.parametrize(
    "good", ["SNOMEDCT_US", "RXNORM", "LNC", "MTH", "MSH", "NCI", "ICD10CM", "HL7V3.0", "ICF-CY",
             "ICD10", "SNOMEDCT_VET", "MTHSPL", "NEWSRC2031", "X", "RXNROM"],
)  # fmt: skip
def test_any_sab_of_the_right_shape_passes_but_the_names_people_type(good: str) -> None:
    """No list of UMLS's sources to go stale: UMLS adds sources every release, so a SAB of the
    right shape is sent as it is (a near miss of a real one, RXNROM, is then answered 404 by
    UTS, or missing from MRCONSO, which the run says)."""
    assert check_sab(good) == good


@pytest.mark.parametrize(
    ("bad", "message", "guess"),
    [
        ("SNOMEDCT", "SAB 'SNOMEDCT' is not a UMLS source abbreviation, only close to SNOMEDCT_US",
         "SNOMEDCT_US"),
        ("SNOMEDCT-US", "SAB 'SNOMEDCT-US' is not a UMLS source abbreviation, only close to "
         "SNOMEDCT_US", "SNOMEDCT_US"),
        ("MESH", "SAB 'MESH' is not a UMLS source abbreviation, only close to MSH", "MSH"),
        ("LOINC", "SAB 'LOINC' is not a UMLS source abbreviation, only close to LNC", "LNC"),
        ("snomedct_us", "SAB 'snomedct_us' is not a UMLS source abbreviation: expected upper-case "
         "letters, digits, '_', '.' and '-', such as SNOMEDCT_US", "SNOMEDCT_US"),
        ("Rxnorm", "SAB 'Rxnorm' is not a UMLS source abbreviation: expected upper-case letters, "
         "digits, '_', '.' and '-', such as SNOMEDCT_US", "RXNORM"),
        ("", "SAB '' is not a UMLS source abbreviation: expected upper-case letters, digits, '_', "
         "'.' and '-', such as SNOMEDCT_US", None),
        ("SNOMED CT", "SAB 'SNOMED CT' is not a UMLS source abbreviation: expected upper-case "
         "letters, digits, '_', '.' and '-', such as SNOMEDCT_US", "SNOMEDCT_US"),
        ("..", "SAB '..' is not a UMLS source abbreviation: expected upper-case letters, digits, "
         "'_', '.' and '-', such as SNOMEDCT_US", None),
    ],
)  # fmt: skip
def test_a_near_miss_or_a_malformed_sab_is_refused_with_a_guess(
    bad: str, message: str, guess: str | None
) -> None:
    with pytest.raises(BadInputError) as info:
        check_sab(bad)
    assert str(info.value) == message
    did = f"did you mean {guess}? " if guess else ""
    assert info.value.hint == did + "check the SAB: " + _table_hint("sab")


def test_a_malformed_sab_may_be_a_near_miss_of_the_tables_own_sabs() -> None:
    with pytest.raises(BadInputError) as info:
        check_sab("my-src", also={"MY-SRC", "LNC", "bad sab"})
    assert (info.value.hint or "").startswith("did you mean MY-SRC? ")
    with pytest.raises(BadInputError) as info:
        check_sab("my src", also={"MY-SRC", "LNC"})
    assert (info.value.hint or "").startswith("did you mean MY-SRC? ")  # the nearest of the table


@pytest.mark.parametrize(
    ("bad", "problem"),
    [
        ("", "it is empty"),
        ("..", "it is made only of dots, which HTTP clients remove from a URL path (RFC 3986, "
               "section 5.2.4), so another resource would be asked for"),
        ("12\x1b[31m", "it contains the control character U+001B"),
        ("12\ud800", "it contains a lone surrogate character U+D800"),
        ("12\x7f", "it contains the control character U+007F"),
        ("1\u20282\x85", "it contains the control character U+0085"),  # the first Cc or Cs
        ("1\t2", "it contains the control character U+0009"),
    ],
)  # fmt: skip
def test_source_codes_that_cannot_be_sent(bad: str, problem: str) -> None:
    assert check_code("38341003") == "38341003"
    assert check_code("1234-5/6 x") == "1234-5/6 x"
    # not printable, yet no control character: sent (a format character, a line separator)
    assert check_code("12\u200b3\u2028\U0001f600") == "12\u200b3\u2028\U0001f600"
    with pytest.raises(BadInputError) as info:
        check_code(bad)
    assert str(info.value) == f"code {bad!r} cannot be sent to UMLS: {problem}"
    assert info.value.hint == "check the code: " + _table_hint("code")


def test_a_source_code_is_bounded_and_shown_cut_short() -> None:
    assert check_code("9" * 100) == "9" * 100
    with pytest.raises(BadInputError) as info:
        check_code("9" * 5000)
    assert str(info.value) == (
        f"code {'9' * 40 + '...'!r} cannot be sent to UMLS: it is 5000 characters long, more "
        "than the 100 allowed"
    )
