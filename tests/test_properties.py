"""Property tests: span replacement against a naive rebuild, and canonical bytes round trips."""

from __future__ import annotations

import itertools
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from tempmedbench_synonyms.regen.canonical import surface_line_bytes, table_bytes
from tempmedbench_synonyms.regen.surface import PlacedSpan, replace_spans

# Texts mix ASCII, accents, titlecase letters, line separators and characters outside the BMP,
# so that an offset counted in UTF-16 units or bytes instead of code points would show (no
# lone surrogates: UTF-8 cannot encode them, and the release reader refuses them).
CHARS = st.sampled_from([*"ab Z.,é ǅǆ\u2028\u0085", "𝟐", "📋", "𝔄"]) | st.characters(codec="utf-8")
TEXT = st.text(CHARS, max_size=40)


@st.composite
def text_and_spans(draw: st.DrawFn) -> tuple[str, list[tuple[int, int, str | None]]]:
    """A text and sorted, non-overlapping [start, end) spans, each with a name (or None)."""
    text = draw(TEXT)
    cuts = sorted(draw(st.sets(st.integers(0, len(text)), max_size=9)))
    spans = []
    # Each stretch between two consecutive cuts is a span or a gap: two spans in a row are
    # adjacent (end == next start), as SPEC section 4 allows.
    for start, end in itertools.pairwise(cuts):
        if draw(st.booleans()):
            spans.append((start, end, draw(st.none() | TEXT)))
    return text, spans


@settings(max_examples=400)
@given(text_and_spans())
def test_replacement_equals_a_naive_rebuild(
    case: tuple[str, list[tuple[int, int, str | None]]],
) -> None:
    text, spans = case
    placed = [PlacedSpan(s, e, f"k{i}") for i, (s, e, _) in enumerate(spans)]
    names = {f"k{i}": name for i, (_, _, name) in enumerate(spans)}
    # Naive: replace from the rightmost span to the leftmost, as SPEC section 4 words it.
    expected = text
    for s, e, name in reversed(spans):
        if name is not None:
            original = text[s:e]
            new = name.lower() if original == original.lower() else name
            expected = expected[:s] + new + expected[e:]
    assert replace_spans(text, placed, names) == expected


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(CHARS, max_size=12),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text(CHARS, max_size=8), children, max_size=4)
    ),
    max_leaves=25,
)


@settings(max_examples=300)
@given(st.dictionaries(st.text(CHARS, max_size=8), JSON, max_size=5))
def test_canonical_bytes_survive_a_parse_and_dump(value: dict[str, object]) -> None:
    for dump in (table_bytes, surface_line_bytes):
        data = dump(value)
        assert dump(json.loads(data.decode("utf-8"))) == data
    # a surface line is one line, whatever its strings hold (U+2028 and U+0085 stay raw)
    line = surface_line_bytes(value)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
