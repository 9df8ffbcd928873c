"""How long a batch takes at ``--rate`` (the limiter starts requests ``HEADROOM / rate``
apart), and the dry run of one (``plan_all``; ``plan_lookups`` for SPEC 11's).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping
from functools import partial
from typing import Any, TypeVar

from tempmedbench_synonyms.atoms import check_release
from tempmedbench_synonyms.errors import plural
from tempmedbench_synonyms.lookups import Lookup
from tempmedbench_synonyms.uts import terms
from tempmedbench_synonyms.uts.cached import CachedUts
from tempmedbench_synonyms.uts.ratelimit import HEADROOM

_K = TypeVar("_K", bound=Hashable)


def fetch_seconds(requests: int, rate: float) -> float:
    """The seconds ``requests`` take at ``rate`` (``HEADROOM / rate`` apart), up to a tenth."""
    return math.ceil(requests * HEADROOM / rate * 10) / 10


def duration_words(seconds: float) -> str:
    """``seconds`` in words, rounded up: "1 s", "40 s", "12 min", "2 h 5 min"."""
    if seconds < 60:
        return f"{math.ceil(seconds)} s"
    minutes = math.ceil(seconds / 60)
    if minutes < 60:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60} min"


def estimate_line(
    concepts: int, cached: int, to_fetch: int, requests: int, rate: float, *, unit: str = "concept"
) -> str:
    """The estimate line before a fetch, e.g. "10 concepts: 3 answered by the cache, 7 to fetch,
    about 1 s at 15 requests a second"."""
    return (
        f"{plural(concepts, unit)}: {cached} answered by the cache, {to_fetch} to fetch, "
        f"about {duration_words(fetch_seconds(requests, rate))} at {rate:g} "
        f"request{'' if rate == 1 else 's'} a second"
    )


def plan_all(
    questions: Mapping[_K, int],
    cached: Callable[[_K], object | None],
    same: Callable[[_K], Hashable] | None = None,
) -> tuple[int, list[_K], int]:
    """``batch.ask_all`` dry: (inputs answered by the cache, questions missed, requests to send)."""
    misses = [q for q in questions if cached(q) is None]
    requests = len({q if same is None else same(q) for q in misses})
    return sum(questions.values()) - sum(questions[q] for q in misses), misses, requests


def plan_lookups(
    uts: CachedUts,
    release: str,
    items: Iterable[tuple[str, Lookup]],
    *,
    rate: float,
    unread: int = 0,
) -> tuple[str, dict[str, Any]]:
    """The dry run of ``batch.answer_many`` (``--dry-run``): what it says and its JSON. The cache
    is read for every input, nothing sent or written; ``current`` as the cache learnt it, if it
    has. ``requests``, one per distinct lookup to fetch plus any probe, take ``seconds`` at
    ``rate`` (pages, details and retries on top); ``unread`` inputs are bad input too."""
    uts.store = False
    listed = list(items)
    concrete = uts.known(check_release(release))
    builds, bad = terms.checked(listed, release)
    questions = Counter(lookup for i, (_, lookup) in enumerate(listed) if i not in bad)

    def cached(lookup: Lookup) -> object | None:
        asked = release if lookup.as_current else concrete or "current"
        return terms.answer_by(partial(uts.lookup_cached, asked), asked, "", lookup, builds[lookup])

    hits, misses, requests = plan_all(questions, cached)
    if concrete is None and any(terms.cui_of(q) is not None for q in misses):
        requests += 1  # the probe that resolves current
    inputs, unasked = len(listed) + unread, len(bad) + unread
    to_fetch = inputs - unasked - hits
    said = estimate_line(inputs - unasked, hits, to_fetch, requests, rate, unit="input")
    said += f" ({unasked} more cannot be asked: bad input)" if unasked else ""
    counts = dict(inputs=inputs, bad_input=unasked, cached=hits, to_fetch=to_fetch)
    return said, {**counts, "requests": requests, "seconds": fetch_seconds(requests, rate)}
