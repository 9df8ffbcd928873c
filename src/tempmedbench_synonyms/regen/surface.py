"""Spans and the synonym surface (SPEC sections 2 and 4): every span checked before anything is
fetched, then the kept synonyms put at the spans."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from tempmedbench_synonyms.errors import SpanError
from tempmedbench_synonyms.regen.canonical import surface_line_bytes
from tempmedbench_synonyms.regen.release import ConceptEntry, SurfaceLine


@dataclass(frozen=True, order=True)
class PlacedSpan:
    """One span of one concept in one question."""

    start: int
    end: int
    key: str
    #: The question's text at the span, as ``place_spans`` found it (not part of comparisons).
    text: str = field(default="", compare=False)


def place_spans(
    concepts: Mapping[str, ConceptEntry], surface: Sequence[SurfaceLine]
) -> dict[str, list[PlacedSpan]]:
    """Gather and check the spans of every question: {qid: spans sorted by position}."""
    texts = {line.qid: line.text for line in surface}
    by_qid: dict[str, list[PlacedSpan]] = {}
    for key in sorted(concepts):
        for qid, spans in concepts[key].spans.items():
            if qid not in texts:
                raise SpanError(
                    "the table names a question that the surface does not have",
                    qid=qid, concepts=[key], spans=spans or [[]],
                )  # fmt: skip
            text_len = len(texts[qid])
            placed = by_qid.setdefault(qid, [])
            for start, end in spans:
                if not 0 <= start < end <= text_len:
                    raise SpanError(
                        f"span out of range for a question of {text_len} characters "
                        "(a span is [start, end) with 0 <= start < end <= length)",
                        qid=qid, concepts=[key], spans=[[start, end]],
                    )  # fmt: skip
                placed.append(PlacedSpan(start, end, key, texts[qid][start:end]))
    for qid in sorted(by_qid):
        placed = sorted(by_qid[qid])
        for a, b in itertools.pairwise(placed):
            if b.start < a.end:
                raise SpanError(
                    "two spans overlap",
                    qid=qid, concepts=[a.key, b.key], spans=[[a.start, a.end], [b.start, b.end]],
                )  # fmt: skip
        by_qid[qid] = placed
    return by_qid


def span_texts(spans_by_qid: Mapping[str, Sequence[PlacedSpan]]) -> dict[str, list[str]]:
    """The original text of every span, by concept key (the synonym choice excludes these)."""
    out: dict[str, list[str]] = {}
    for spans in spans_by_qid.values():
        for s in spans:
            out.setdefault(s.key, []).append(s.text)
    return out


def insertion(original: str, name: str) -> str:
    """The kept name as inserted: lower-cased when the original span has no uppercase character
    (``t == t.lower()``, not ``t.isupper()``: they differ on titlecase 'ǅ', SPEC section 4)."""
    return name.lower() if original == original.lower() else name


def replace_spans(text: str, spans: Sequence[PlacedSpan], names: Mapping[str, str | None]) -> str:
    """A drifted concept (None) keeps its text. Left to right over the sorted spans: the string
    SPEC 4's right-to-left replacement gives."""
    pieces: list[str] = []
    pos = 0
    for s in spans:
        name = names.get(s.key)
        if name is None:
            continue
        original = text[s.start : s.end]
        pieces.append(text[pos : s.start])
        pieces.append(insertion(original, name))
        pos = s.end
    pieces.append(text[pos:])
    return "".join(pieces)


def synonym_surface_bytes(
    surface: Sequence[SurfaceLine],
    spans_by_qid: Mapping[str, Sequence[PlacedSpan]],
    names: Mapping[str, str | None],
) -> bytes:
    """Bytes of ``question_surface_synonym.jsonl``: every line, in order, spans or not."""
    out: list[bytes] = []
    for line in surface:
        obj = dict(line.obj)
        obj["question_surface"] = replace_spans(line.text, spans_by_qid.get(line.qid, ()), names)
        if "surface" in obj:
            obj["surface"] = "synonym"
        out.append(surface_line_bytes(obj))
    return b"".join(out)
