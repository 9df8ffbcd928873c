"""The defaults and limits of the network options, in a module light enough to import at start.

The command line reads them for its ``--help`` before it knows which command runs; keeping them
here (no ``requests``, no ``pydantic``) lets ``gps validate`` and ``--help`` start without the
UTS client.
"""

from __future__ import annotations

#: UTS terms of service: no more than 20 requests a second per IP address.
MAX_RATE = 20.0
#: The least ``--rate``: one request every 10 s. Below it a run would wait hours between
#: requests without a word (and a rate of 1e-12 overflows the waits).
MIN_RATE = 0.1
#: SPEC section 7: ``--rate`` defaults to 15 requests a second.
DEFAULT_RATE = 15.0
#: SPEC section 7: ``--workers`` defaults to 8 concurrent requests.
DEFAULT_WORKERS = 8
#: More threads than this only queue behind the rate limiter (20 req/s x a slow 3 s answer).
MAX_WORKERS = 64
#: SPEC section 7: ``--timeout`` defaults to 30 s for one attempt, connect to last byte.
DEFAULT_TIMEOUT = 30.0
#: The most seconds one request may spend in all its attempts and waits, written once here for
#: the client (``RetryPolicy.max_total``, the longest ``--timeout``) and the rate limiter. Two
#: minutes outlast the short 5xx spells and the 429 pauses a busy UTS gives, and still end a
#: run against a UTS that is down within minutes rather than hours.
RETRY_BUDGET = 120.0
