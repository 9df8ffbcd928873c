from __future__ import annotations

from typing import Any

import pytest

from tempmedbench_synonyms.errors import SpanError
from tempmedbench_synonyms.regen.release import ConceptEntry, SurfaceLine
from tempmedbench_synonyms.regen.surface import (
    PlacedSpan,
    insertion,
    place_spans,
    replace_spans,
    span_texts,
    synonym_surface_bytes,
)


def concept(spans: dict[str, list[list[int]]]) -> ConceptEntry:
    return ConceptEntry.model_validate(
        {"cui": "C0000001", "sab": "MTH", "route": "cui", "spans": spans}
    )


def line(qid: str, text: str, **extra: Any) -> SurfaceLine:
    return SurfaceLine(qid, text, {"qid": qid, "question_surface": text, **extra})


def test_insertion_uses_the_lower_formula_not_isupper() -> None:
    assert insertion("fever", "Zephyr Fever") == "zephyr fever"
    assert insertion("Fever", "Zephyr Fever") == "Zephyr Fever"
    assert insertion("FEVER", "Zephyr Fever") == "Zephyr Fever"
    # titlecase U+01C5: "ǅ".isupper() is False but "ǅ" != "ǅ".lower(), so verbatim
    assert insertion("ǅemal", "Name X") == "Name X"
    assert insertion("123 ", "Name X") == "name x"  # no cased character at all: lower-cased
    assert insertion("x", "İ") == "i̇"  # str.lower(), exactly (U+0130 lowers to two code points)


def test_offsets_are_code_points_even_outside_the_bmp() -> None:
    text = "📋 fever and 𝟐 chills"
    spans = [PlacedSpan(2, 7, "f"), PlacedSpan(14, 20, "c")]
    assert text[2:7] == "fever" and text[14:20] == "chills"
    assert replace_spans(text, spans, {"f": "Pyrexia", "c": "Rigors 𝔄"}) == (
        "📋 pyrexia and 𝟐 rigors 𝔄"
    )


def test_drifted_concept_keeps_its_text_and_adjacent_spans_work() -> None:
    text = "abcdef"
    spans = [PlacedSpan(0, 2, "x"), PlacedSpan(2, 4, "y"), PlacedSpan(4, 6, "z")]
    assert replace_spans(text, spans, {"x": "1", "y": None, "z": "333"}) == "1cd333"


def test_place_spans_sorts_and_collects_texts() -> None:
    concepts = {"b": concept({"q": [[4, 6]]}), "a": concept({"q": [[0, 3]], "r": []})}
    surface = [line("q", "abc de"), line("r", "")]
    placed = place_spans(concepts, surface)
    assert placed == {"q": [PlacedSpan(0, 3, "a"), PlacedSpan(4, 6, "b")], "r": []}
    assert span_texts(placed) == {"a": ["abc"], "b": ["de"]}


@pytest.mark.parametrize(
    "spans,problem",
    [
        ({"q": [[0, 0]]}, "span out of range for a question of 5 characters"),
        ({"q": [[3, 2]]}, "span out of range for a question of 5 characters"),
        ({"q": [[-1, 2]]}, "span out of range for a question of 5 characters"),
        ({"q": [[4, 6]]}, "span out of range for a question of 5 characters"),
    ],
)
def test_out_of_range_spans_name_the_qid_concept_and_span(
    spans: dict[str, list[list[int]]], problem: str
) -> None:
    with pytest.raises(SpanError) as info:
        place_spans({"k": concept(spans)}, [line("q", "hello")])
    err = info.value
    assert (err.qid, err.concepts, err.spans) == ("q", ["k"], spans["q"])
    assert problem in str(err)
    assert str(err).startswith("synonyms/synonym_table_kept.json: qid 'q': ")


def test_overlap_names_both_concepts_and_spans_identical_spans_overlap() -> None:
    concepts = {"a": concept({"q": [[0, 3]]}), "b": concept({"q": [[0, 3]]})}
    with pytest.raises(SpanError) as info:
        place_spans(concepts, [line("q", "hello")])
    assert str(info.value) == (
        "synonyms/synonym_table_kept.json: qid 'q': two spans overlap: 'a' [0, 3], 'b' [0, 3]"
    )
    concepts = {"a": concept({"q": [[0, 3]]}), "b": concept({"q": [[2, 4]]})}
    with pytest.raises(SpanError) as info:
        place_spans(concepts, [line("q", "hello")])
    assert (info.value.concepts, info.value.spans) == (["a", "b"], [[0, 3], [2, 4]])


def test_one_concept_overlapping_itself_or_repeating_a_span_is_refused() -> None:
    for spans in ([[0, 3], [2, 4]], [[1, 3], [1, 3]]):
        with pytest.raises(SpanError) as info:
            place_spans({"a": concept({"q": spans})}, [line("q", "hello")])
        assert str(info.value) == (
            f"synonyms/synonym_table_kept.json: qid 'q': two spans overlap: 'a' {spans[0]}, "
            f"'a' {spans[1]}"
        )


def test_unknown_qid_is_refused_even_with_no_span() -> None:
    with pytest.raises(SpanError) as info:
        place_spans({"k": concept({"gone": []})}, [line("q", "x")])
    assert info.value.qid == "gone"
    assert "the table names a question that the surface does not have" in str(info.value)


def test_surface_bytes_keep_every_line_and_set_surface_key() -> None:
    surface = [line("q1", "Fever now", surface="anchored", n=1.0), line("q2", "none"),
               line("q3", "fever")]  # fmt: skip
    spans = {"q1": [PlacedSpan(0, 5, "k")], "q3": [PlacedSpan(0, 5, "k")]}
    assert synonym_surface_bytes(surface, spans, {"k": "Pyrexia"}) == (
        b'{"n":1.0,"qid":"q1","question_surface":"Pyrexia now","surface":"synonym"}\n'
        b'{"qid":"q2","question_surface":"none"}\n'
        b'{"qid":"q3","question_surface":"pyrexia"}\n'
    )


def test_adjacent_spans_of_two_concepts_are_fine() -> None:
    concepts = {"a": concept({"q": [[0, 2]]}), "b": concept({"q": [[2, 4]]})}
    placed = place_spans(concepts, [line("q", "abcd")])
    assert placed == {"q": [PlacedSpan(0, 2, "a"), PlacedSpan(2, 4, "b")]}
    assert replace_spans("abcd", placed["q"], {"a": "X", "b": "ǅ"}) == "xǆ"
