"""``VirtualTime``: a clock and a sleep to inject, so that rate-limit and retry tests never wait."""

from __future__ import annotations

import threading
from collections.abc import Callable


class VirtualTime:
    """A clock that moves only when something sleeps on it: inject ``clock`` and ``sleep`` into
    ``RateLimiter`` and ``UtsClient`` so that tests of rate limits and retries never wait.

    Thread-safe; with several sleepers virtual time runs ahead, but every wait is still kept.
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
        """Move the clock on by ``seconds`` (negative: none) at once, noted in ``sleeps``."""
        with self._lock:
            self.sleeps.append(seconds)
            self.now += max(0.0, seconds)

    def interruptible(
        self, event: threading.Event, *, longer_than: float = 10.0, timeout: float = 5.0
    ) -> Callable[[float], None]:
        """A sleep on this clock that a cancel ends early, as ``event.wait(seconds)`` does.

        Up to ``longer_than`` seconds passes at once on the virtual clock; a longer one (a 429's
        pause) blocks in real time until ``event`` is set, then returns without moving the clock.
        After ``timeout`` real seconds the clock moves on by it all: a broken cancel fails, never
        hangs.
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
