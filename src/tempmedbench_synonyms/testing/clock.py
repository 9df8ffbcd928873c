"""``VirtualTime``: a clock and a sleep to inject, so that rate-limit and retry tests never wait."""

from __future__ import annotations

import threading
from collections.abc import Callable


class VirtualTime:
    """A clock that moves only when something sleeps on it: inject ``clock`` and ``sleep`` into
    ``RateLimiter`` and ``UtsClient`` so that tests of rate limits and retries never wait.

    Thread-safe; with several threads sleeping, virtual time runs ahead of real time, but every
    wait the limiter imposes is still kept on the virtual clock.
    """

    def __init__(self, start: float = 1_000.0) -> None:
        self.now = start
        self.sleeps: list[float] = []
        #: sleeps that ``interruptible`` ended early because the run was cancelled
        self.cut_short: list[float] = []
        #: set when a thread starts blocking in an ``interruptible`` sleep
        self.blocked = threading.Event()
        self._lock = threading.Lock()

    def clock(self) -> float:
        """The virtual time now, in seconds (inject it where ``time.monotonic`` is expected)."""
        with self._lock:
            return self.now

    def sleep(self, seconds: float) -> None:
        """Move the clock on by ``seconds`` (a negative sleep counts as none) at once, and note
        it in ``sleeps`` (inject it where ``time.sleep`` is expected)."""
        with self._lock:
            self.sleeps.append(seconds)
            self.now += max(0.0, seconds)

    def interruptible(
        self, event: threading.Event, *, longer_than: float = 10.0, timeout: float = 5.0
    ) -> Callable[[float], None]:
        """A sleep on this clock that a cancel ends early, as ``event.wait(seconds)`` does.

        Inject it into ``RateLimiter`` and ``UtsClient`` (with ``event``, their shared cancel
        event) to test that cancelling wakes every sleeper. A sleep of up to ``longer_than``
        seconds passes at once on the virtual clock (the spacing of requests, a short backoff);
        a longer one (a 429's pause) blocks, in real time, until ``event`` is set, and then
        returns without moving the clock. If ``event`` is not set within ``timeout`` real
        seconds, the clock moves on by the whole sleep, so that a broken cancel fails a test
        instead of hanging it.
        """

        def sleep(seconds: float) -> None:
            if event.is_set():
                with self._lock:
                    self.cut_short.append(seconds)
                return
            if seconds > longer_than:
                self.blocked.set()
                if event.wait(timeout):
                    with self._lock:
                        self.cut_short.append(seconds)
                    return
            self.sleep(seconds)

        return sleep
