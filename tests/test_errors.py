"""errors: where a message says the problem happened, and each class's exit code and outcome."""

from __future__ import annotations

import json

import pytest

from tempmedbench_synonyms.errors import (
    EXIT_CODES,
    BadInputError,
    Cancelled,
    InternalError,
    ManifestError,
    NotAuthorisedError,
    Outcome,
    SpanError,
    TempMedBenchError,
    UnavailableError,
)
from tempmedbench_synonyms.secret import missing_key


@pytest.mark.parametrize(
    ("kwargs", "text"),
    [
        ({}, "bad"),
        ({"path": "f.json"}, "f.json: bad"),
        ({"path": "f.jsonl", "line": 3}, "f.jsonl, line 3: bad"),
        ({"line": 3}, "line 3: bad"),
        ({"path": "t.json", "key": "concepts.x"}, "t.json: concepts.x: bad"),
        ({"key": "--rate"}, "--rate: bad"),
    ],
)
def test_bad_input_says_where(kwargs: dict[str, object], text: str) -> None:
    assert str(BadInputError("bad", **kwargs)) == text


def test_an_option_named_by_its_own_message_is_not_repeated() -> None:
    err = BadInputError("--rate 25 is out of range", key="--rate", hint="use 20 or less")
    assert (str(err), err.hint, err.key) == (
        "--rate 25 is out of range",
        "use 20 or less",
        "--rate",
    )


def test_a_manifest_error_shows_both_hashes() -> None:
    err = ManifestError("differs from MANIFEST.sha256", path="a.json", expected="e" * 4,
                        actual="f" * 4)  # fmt: skip
    assert str(err) == (
        "a.json: differs from MANIFEST.sha256 (expected sha256 eeee, actual sha256 ffff)"
    )


def test_a_span_error_names_the_question_and_its_spans() -> None:
    err = SpanError("spans overlap", qid="dev-0001", concepts=["a", "b"], spans=[[0, 4], [2, 6]])
    assert str(err) == (
        "synonyms/synonym_table_kept.json: qid 'dev-0001': spans overlap: 'a' [0, 4], 'b' [2, 6]"
    )


def test_exit_codes_and_outcomes_are_one_table() -> None:
    classes: list[type[TempMedBenchError]] = [
        BadInputError,
        NotAuthorisedError,
        UnavailableError,
        InternalError,
    ]
    assert [(c.outcome, c.exit_code) for c in classes] == [
        ("bad_input", 2),
        ("not_authorised", 3),
        ("unavailable", 4),
        ("internal_error", 70),
    ]


def test_the_outcomes_are_spec_section_5s_and_each_has_its_exit_code() -> None:
    """SPEC section 5's table (and section 7's list of --json outcomes), plus a bug's exit 70
    and a --dry-run's ``planned``, exit 0 (issue 12: a plan verifies nothing, so not
    ``verified``)."""
    assert {o.value: EXIT_CODES[o] for o in Outcome} == {
        "verified": 0,
        "mismatch": 1,
        "bad_input": 2,
        "not_authorised": 3,
        "unavailable": 4,
        "internal_error": 70,
        "planned": 0,
        "interrupted": 130,
        "found": 0,
        "not_found": 1,
    }
    assert list(EXIT_CODES) == list(Outcome)


def test_an_outcome_is_its_plain_string_in_text_and_json() -> None:
    assert Outcome.NOT_AUTHORISED == "not_authorised"
    assert (str(Outcome.MISMATCH), f"{Outcome.MISMATCH}", f"{Outcome.MISMATCH:>10}") == (
        "mismatch",
        "mismatch",
        "  mismatch",
    )
    assert json.dumps({"outcome": Outcome.BAD_INPUT}) == '{"outcome": "bad_input"}'


def test_a_refusal_by_umls_keeps_its_status_and_url() -> None:
    err = NotAuthorisedError(401, "https://uts.invalid/rest/x?apiKey=***")
    assert (err.status, err.url, err.exit_code, err.outcome) == (
        401,
        "https://uts.invalid/rest/x?apiKey=***",
        3,
        Outcome.NOT_AUTHORISED,
    )
    assert str(err) == (
        "UMLS answered HTTP 401 for https://uts.invalid/rest/x?apiKey=***: "
        "the API key is missing, invalid or expired"
    )


def test_a_missing_key_is_a_refusal_nothing_was_sent_for() -> None:
    err = missing_key()
    assert isinstance(err, NotAuthorisedError)
    assert (err.status, err.url, err.exit_code, err.outcome) == (None, None, 3, "not_authorised")
    assert str(err).startswith("no UMLS API key: ")


def test_cancelled_is_control_flow_not_an_unavailable_umls() -> None:
    err = Cancelled()
    assert not isinstance(err, UnavailableError)
    assert isinstance(err, TempMedBenchError)
    assert (str(err), err.exit_code, err.outcome) == (
        "the run was stopped before this request was sent",
        4,
        "unavailable",
    )
