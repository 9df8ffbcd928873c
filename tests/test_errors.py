"""errors: where a message says the problem happened, and each class's exit code and outcome."""

from __future__ import annotations

import pytest

from tempmedbench_synonyms.errors import (
    BadInputError,
    InternalError,
    ManifestError,
    NotAuthorisedError,
    SpanError,
    TempMedBenchError,
    UnavailableError,
)
from tempmedbench_synonyms.pipeline import EXIT_CODES


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
    assert EXIT_CODES == {
        "verified": 0,
        "mismatch": 1,
        "bad_input": 2,
        "not_authorised": 3,
        "unavailable": 4,
        "internal_error": 70,
    }
