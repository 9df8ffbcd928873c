"""How long a batch takes at ``--rate`` (the limiter starts requests ``HEADROOM / rate``
apart), and the dry run of one (``plan_all``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping
from typing import TypeVar

from tempmedbench_synonyms.errors import plural
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
