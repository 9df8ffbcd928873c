"""How long a UTS fetch takes: what ``--dry-run`` and the start of every REST run say.

The limiter starts requests ``HEADROOM / rate`` apart (``ratelimit``), so ``requests`` take
``requests * HEADROOM / rate`` seconds, rounded up to a tenth.
"""

from __future__ import annotations

import math

from tempmedbench_synonyms.uts.ratelimit import HEADROOM


def fetch_seconds(requests: int, rate: float) -> float:
    """The seconds ``requests`` take at ``rate``: the limiter starts them ``HEADROOM / rate``
    apart (``uts.ratelimit``), rounded up to a tenth of a second."""
    return math.ceil(requests * HEADROOM / rate * 10) / 10


def duration_words(seconds: float) -> str:
    """``seconds`` in words, rounded up: "1 s", "40 s", "12 min", "2 h 5 min"."""
    if seconds < 60:
        return f"{math.ceil(seconds)} s"
    minutes = math.ceil(seconds / 60)
    if minutes < 60:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60} min"


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def estimate_line(concepts: int, cached: int, to_fetch: int, requests: int, rate: float) -> str:
    """The estimate a run says before it fetches, e.g. "10 concepts: 3 answered by the cache,
    7 to fetch, about 1 s at 15 requests a second"."""
    return (
        f"{_count(concepts, 'concept')}: {cached} answered by the cache, {to_fetch} to fetch, "
        f"about {duration_words(fetch_seconds(requests, rate))} at {rate:g} requests a second"
    )
