"""Invented UTS data and a CachedUts on virtual time, shared by the CachedUts and source tests."""

from __future__ import annotations

import random
from contextlib import closing
from pathlib import Path
from typing import Any

from helpers import BASE
from tempmedbench_synonyms.atoms import AtomQuery
from tempmedbench_synonyms.lookups import Answer, Lookup
from tempmedbench_synonyms.secret import ApiKey
from tempmedbench_synonyms.testing import CANARY_KEY, FakeUts, FakeUtsData, Faults, VirtualTime
from tempmedbench_synonyms.uts.batch import answer_many
from tempmedbench_synonyms.uts.cache import ResponseCache
from tempmedbench_synonyms.uts.cached import CachedUts
from tempmedbench_synonyms.uts.client import RetryPolicy, UtsClient
from tempmedbench_synonyms.uts.ratelimit import HEADROOM, RateLimiter

REL = "2099AA"

ROWS = [
    # CUI|LAT|TS|LUI|STT|SUI|ISPREF|AUI|SAUI|SCUI|SDUI|SAB|TTY|CODE|STR|SRL|SUPPRESS|CVF|
    "C9000001|ENG|P|L9000001|PF|S9000001|Y|A90000001||1000001||"
    "SNOMEDCT_US|PT|1000001|Invented fever|0|N||",
    "C9000001|ENG|S|L9000002|PF|S9000002|Y|A90000002||1000001||"
    "SNOMEDCT_US|SY|1000001|Made-up pyrexia|0|N||",
    "C9000001|ENG|S|L9000003|PF|S9000003|Y|A90000003||1000001||"
    "SNOMEDCT_US|SY|1000001|Old fever term|0|O||",
    "C9000001|ENG|S|L9000004|PF|S9000004|Y|A90000004||1000001||"
    "SNOMEDCT_US|SY|1000001|Hidden fever|0|E||",
    "C9000001|FRE|S|L9000005|PF|S9000005|Y|A90000005||1000001||"
    "SNOMEDCT_US|SY|1000001|Fièvre inventée|0|N||",
    "C9000001|ENG|P|L9000006|PF|S9000006|Y|A90000006||||MTH|PN|NOCODE|Invented Fever|0|N||",
    "C9000002|ENG|P|L9000007|PF|S9000007|Y|A90000007||||"
    "RXNORM|SCD|7000001|invented tablet 5 mg|0|N||",
    "C9000002|ENG|S|L9000008|PF|S9000008|Y|A90000008||||RXNORM|SY|7000001|made-up pill|0|N||",
    "C9000003|ENG|P|L9000009|PF|S9000009|Y|A90000009||2000002||"
    "SNOMEDCT_US|PT|2000002|Invented cough|0|N||",
]
Q_SOURCE = AtomQuery("source", "SNOMEDCT_US", "1000001")
Q_CUI = AtomQuery("cui", "RXNORM", "C9000002")
Q_AUI = AtomQuery("aui", "SNOMEDCT_US", "A90000009")
Q_MISSING = AtomQuery("source", "SNOMEDCT_US", "9999999")
QUERIES = [Q_SOURCE, Q_CUI, Q_AUI, Q_MISSING]


def virtual_limiter() -> RateLimiter:
    """The real limiter on virtual time: every wait is kept, none is waited."""
    vt = VirtualTime()
    return RateLimiter(20, clock=vt.clock, sleep=vt.sleep)


def rate_in_force(limiter: RateLimiter, vt: VirtualTime) -> float:
    """The rate a limiter on ``vt`` now holds to, as its requests show it: after an idle while
    (every pause over), two starts are ``HEADROOM / rate`` apart. Exact for a rate of 2 or more,
    or of 1 or less; between, no more than one start in ``HEADROOM`` seconds shows as 1."""
    vt.now += 1_000.0
    limiter.acquire()
    first = vt.now
    limiter.acquire()
    return HEADROOM / (vt.now - first)


def fake_uts(**faults: Any) -> FakeUts:
    return FakeUts(FakeUtsData.from_lines(ROWS), api_key=CANARY_KEY, faults=Faults(**faults))


def make_uts(
    cache_dir: Path,
    *,
    key: str | None = CANARY_KEY,
    offline: bool = False,
    refresh: bool = False,
    now: VirtualTime | None = None,
) -> CachedUts:
    client = None
    if not offline:
        client = UtsClient(
            base_url=BASE,
            api_key=None if key is None else ApiKey(key),
            limiter=virtual_limiter(),
            retry=RetryPolicy(max_attempts=4),
            sleep=lambda s: None,
            rng=random.Random(1),
        )
    cache = ResponseCache(cache_dir, BASE, **({"clock": now.clock} if now else {}))
    return CachedUts(client, cache, refresh=refresh)


def answer(uts: CachedUts, release: str, input: str, lookup: Lookup) -> Answer:
    """One input's answer, asked as ``umls`` and ``Umls`` ask every input: a batch of one
    (``uts.batch.answer_many``)."""
    with closing(answer_many(uts, release, [(input, lookup)], workers=1)) as answers:
        (got,) = answers
    return got
