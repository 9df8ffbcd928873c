"""The one rate limiter that every UTS request of a run waits on, whatever thread sends it.

The UMLS Terminology Services terms of use allow at most 20 requests a second from one IP address
(https://documentation.uts.nlm.nih.gov/terms-of-service.html); we default to 15 and refuse more
than 20. The limiter is a token bucket of capacity one: request starts are spaced at least ``1/N``
seconds apart, with no burst, however many worker threads share it. It records when each request
really started (a thread woken late starts late, and the next one waits for it), and it also
guards the window itself: no start comes within ``1 + MARGIN`` seconds of the ``N``-th start
before it, so that the server never sees more than ``N`` requests in any one second (for a rate
that is not a whole number, ``floor(N)``), even with the jitter between our clock and the
server's.

On a 429 (Too Many Requests) every worker slows down, not only the one that got it: the limiter
pauses all starts until the server's ``Retry-After`` has passed and halves its rate, then earns the
configured rate back a little with every success (additive increase, multiplicative decrease).
The client asks for a pause only when the request that got the 429 will be tried again within its
retry budget, and no pause is ever longer than ``MAX_PAUSE``: a longer ``Retry-After`` fails that
request instead of stopping the whole run for it.

Every wait ends at once when the run is cancelled (a 401, a fatal error in another worker,
Ctrl-C): the limiter sleeps with ``cancel_event.wait(delay)``, the event the client shares, and
``acquire`` then raises ``Cancelled`` instead of starting a request.

The clock and the sleep are injected so that tests never wait. An injected sleep should return
early once ``cancel_event`` is set, as ``Event.wait`` does; whatever it does, the limiter looks at
the event before every start and after every sleep.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable

from tempmedbench_synonyms.errors import BadInputError, UnavailableError

log = logging.getLogger(__name__)

#: UTS terms of service: no more than 20 requests a second per IP address.
MAX_RATE = 20.0
#: SPEC section 7: ``--rate`` defaults to 15 requests a second.
DEFAULT_RATE = 15.0
#: Seconds added to the one-second window, and spread over the spacing of starts: it absorbs the
#: jitter between the moment a request leaves the limiter and the moment the server counts it
#: (thread scheduling, a garbage-collector pause, connection reuse, the network), so that N + 1
#: requests never land in one second of the server's clock. bench/bench_rest.py measured a 51 ms
#: squeeze once (a 70 ms pause of the collector, client and server sharing one process), which
#: broke a 5% margin; 8% costs 8% of throughput (0.93 of the cap).
MARGIN = 0.08
HEADROOM = 1.0 + MARGIN
#: After a 429 the rate never drops below this fraction of the configured rate.
MIN_FRACTION = 1.0 / 16.0
#: Each successful request earns back this fraction of the configured rate.
RECOVERY_STEP = 1.0 / 20.0
#: Pause imposed by a 429 that carries no usable Retry-After.
DEFAULT_PAUSE = 1.0
#: The longest pause a 429 may impose on every worker: the client's retry budget for one request
#: (``client.RetryPolicy.max_total``); the client never asks for more, this is a second guard.
MAX_PAUSE = 120.0

Clock = Callable[[], float]
Sleep = Callable[[float], object]


class Cancelled(UnavailableError):
    """The run was stopped (a 401 or another fatal error in a worker, Ctrl-C) before this
    request was sent."""

    def __init__(self) -> None:
        super().__init__("the run was stopped before this request was sent")


def check_rate(rate: float) -> float:
    """Return ``rate`` as a float, or raise BadInputError if it is not in (0, 20]."""
    try:
        value = float(rate)
    except (TypeError, ValueError):
        raise BadInputError(
            f"--rate {rate!r} is not a number of requests a second",
            key="--rate",
            hint=f"give a number above 0 and at most {MAX_RATE:g}; the default is {DEFAULT_RATE:g}",
        ) from None
    if not value > 0:  # also rejects NaN
        raise BadInputError(
            f"--rate {value:g} is out of range: it must be more than 0 requests a second",
            key="--rate",
            hint=f"the default is {DEFAULT_RATE:g} requests a second, and at most {MAX_RATE:g} "
            "is allowed",
        )
    if value > MAX_RATE:
        raise BadInputError(
            f"--rate {value:g} is out of range: it is above {MAX_RATE:g} requests a second, the "
            "most the UMLS Terminology Services terms of use allow from one IP address",
            key="--rate",
            hint=f"use --rate {MAX_RATE:g} or less (the default, {DEFAULT_RATE:g}, leaves room "
            "for other UTS clients)",
        )
    return value


class RateLimiter:
    """A token bucket of capacity one, shared by all threads: starts at least 1/rate s apart.

    ``cancel`` is the run's cancel event (the client passes its own); by default the limiter
    sleeps with ``cancel.wait``, so that setting it wakes every waiting thread at once.
    """

    def __init__(
        self,
        rate: float = DEFAULT_RATE,
        *,
        clock: Clock = time.monotonic,
        sleep: Sleep | None = None,
        margin: float = MARGIN,
        cancel: threading.Event | None = None,
    ) -> None:
        self.rate = check_rate(rate)
        self._clock = clock
        self.cancel_event = cancel if cancel is not None else threading.Event()
        # Not time.sleep: a thread asleep in it would see a cancel only when it wakes up.
        self._sleep: Sleep = sleep if sleep is not None else self.cancel_event.wait
        self._margin = margin
        self._lock = threading.Lock()
        self._current = self.rate  # the rate in force now, lowered by 429s
        self._next = float("-inf")  # earliest start of the next request
        self._paused_until = float("-inf")
        # When the last requests really started (enough for the window guard at 20 a second).
        self._starts: deque[float] = deque(maxlen=int(MAX_RATE))

    @property
    def current_rate(self) -> float:
        """The rate in force now: the configured one, or less after a 429."""
        with self._lock:
            return self._current

    def _earliest(self) -> float:
        """When the next request may start (call with the lock held)."""
        earliest = max(self._next, self._paused_until)
        n = max(1, math.floor(self._current))
        if len(self._starts) >= n:
            earliest = max(earliest, self._starts[-n] + 1.0 + self._margin)
        return earliest

    def cancel(self) -> None:
        """Stop: every thread waiting in ``acquire`` wakes and raises ``Cancelled``."""
        self.cancel_event.set()

    def acquire(self) -> float:
        """Block until this thread may start a request; return the seconds waited.

        Nothing is reserved ahead: a thread that wakes finds out again whether it may start, so
        a 429 that arrived while it slept (every worker slows down, not just one), or a thread
        that woke late, is taken into account. Raises ``Cancelled`` once the cancel event is set.
        """
        waited = 0.0
        while True:
            if self.cancel_event.is_set():
                raise Cancelled()
            with self._lock:
                now = self._clock()
                earliest = self._earliest()
                # (a nanosecond of slack: sleeping exactly the delay may land one ulp short)
                if now >= earliest - 1e-9:
                    self._starts.append(now)
                    self._next = now + (1.0 + self._margin) / self._current
                    return waited
                delay = earliest - now
            self._sleep(delay)
            waited += delay

    def penalise(self, retry_after: float | None) -> None:
        """A 429 arrived: pause every thread for ``retry_after`` seconds and halve the rate.

        The pause is at most ``MAX_PAUSE`` seconds (the client asks for one only when it fits the
        retry budget of the request that got the 429).
        """
        pause = DEFAULT_PAUSE if retry_after is None else max(0.0, retry_after)
        pause = min(pause, MAX_PAUSE)
        with self._lock:
            now = self._clock()
            self._paused_until = max(self._paused_until, now + pause)
        current = self.slow_down()
        log.warning(
            "UMLS answered 429 Too Many Requests: pausing all requests for %.1f s, "
            "then %.2f requests a second",
            pause,
            current,
        )

    def slow_down(self) -> float:
        """Halve the rate in force (never below ``MIN_FRACTION`` of the setting); return it."""
        with self._lock:
            self._current = max(self.rate * MIN_FRACTION, self._current / 2.0)
            return self._current

    def reward(self) -> None:
        """A request succeeded: earn back a step of the configured rate."""
        with self._lock:
            if self._current < self.rate:
                self._current = min(self.rate, self._current + self.rate * RECOVERY_STEP)
