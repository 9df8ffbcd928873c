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

The budget is one per machine, not per process (SPEC section 3): UTS counts requests per IP address,
so two runs at once (two terminals, two CI jobs) must together stay within ``--rate``. Given a state
file (``shared_state_path``: one per UTS host and port, under the user's state folder, whatever
``--cache-dir`` each run uses), every start also takes a slot in that file, locked with ``flock``
while it is read and written (``SharedBudget``). The file holds the wall-clock times of the latest
starts of every process, the end of a 429 pause and a count of 429s, nothing else (never the key). A
process may start when its own interval (``(1 + MARGIN) / rate``) has passed since the latest start
of any process and fewer than ``floor(rate)`` starts of any process lie in the last ``1 + MARGIN``
seconds: two runs with one ``--rate`` together keep it, and two with different ones together keep
the larger (the slower run then starts only when the faster one leaves a gap of the slower one's
interval; neither ever exceeds its own rate). A 429 seen by one process pauses the others until its
pause ends and halves their rate too. Processes share no monotonic clock, so the file holds wall
time: a start more than ``CLOCK_SLACK`` in the future, or a pause longer than ``MAX_PAUSE``, is a
clock that went back (or an edit) and is dropped, so that no wait is ever longer than a pause, or
one interval, plus ``CLOCK_SLACK``. Where the file cannot be used (no ``fcntl`` on this platform, a
folder that cannot be written, a state path that is not a regular file, a lock held past
``LOCK_TIMEOUT``) the limiter says so in one warning and keeps the per-process limit; a corrupt
state (unreadable, over ``MAX_STATE_BYTES``) is said once and started afresh.

The clock and the sleep are injected so that tests never wait. An injected sleep should return
early once ``cancel_event`` is set, as ``Event.wait`` does; whatever it does, the limiter looks at
the event before every start and after every sleep. The shared state's wall clock is injected
too (``wall_clock``): two limiters on one ``testing.VirtualTime`` and one state file play two
processes.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import re
import stat
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from urllib.parse import urlsplit

from tempmedbench_synonyms import config
from tempmedbench_synonyms.constants import DEFAULT_RATE, MAX_RATE, RETRY_BUDGET
from tempmedbench_synonyms.errors import Cancelled
from tempmedbench_synonyms.uts.options import check_rate

fcntl: ModuleType | None
try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no flock; SharedBudget falls back, saying so
    fcntl = None

log = logging.getLogger(__name__)

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
#: The longest pause a 429 may impose on every worker: the retry budget (the client never asks
#: for more; this is a second guard).
MAX_PAUSE = RETRY_BUDGET

#: The largest state file read: a few hundred bytes is what one holds.
MAX_STATE_BYTES = 4096
#: The longest another process may hold the state's lock (it holds it for microseconds) before
#: this one gives up sharing and keeps its own limit.
LOCK_TIMEOUT = 5.0
#: How often a locked state is tried again.
LOCK_POLL = 0.002
#: A start or pause in the shared state up to this far in the future is kept (the clock of one
#: machine, read a little apart); beyond, the wall clock went back since, and it is dropped.
CLOCK_SLACK = 1.0
_STATE_MAGIC = "tempmedbench-rate-v1"
_FALLBACK = "the rate limit holds for this process only, not for other runs on this machine"

Clock = Callable[[], float]
Sleep = Callable[[float], object]


def shared_state_path(base_url: str, folder: Path | None = None) -> Path:
    """The state file of one UTS host and port: ``<folder>/rate/<host>-<port>-<hash>.state``.

    By host, not by base URL: UTS counts requests per IP address, whatever path they ask for.
    """
    parts = urlsplit(base_url.strip())
    host = (parts.hostname or "local").lower()
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:  # a port out of range: check_base_url refuses it before any request
        port = 0
    digest = hashlib.sha256(f"{host}:{port}".encode()).hexdigest()[:12]
    name = re.sub(r"[^a-z0-9.-]+", "_", host)[:64]
    return (
        (folder if folder is not None else config.state_folder())
        / "rate"
        / f"{name}-{port}-{digest}.state"
    )


class _State:
    """What the shared state file holds: the latest starts (wall clock, oldest first), the end
    of the latest 429 pause, and how many 429s any process has reported."""

    __slots__ = ("paused_until", "slowdowns", "starts")

    def __init__(
        self, starts: list[float] | None = None, paused_until: float = 0.0, slowdowns: int = 0
    ) -> None:
        self.starts = starts if starts is not None else []
        self.paused_until = paused_until
        self.slowdowns = slowdowns

    def encode(self) -> bytes:
        numbers = [repr(self.paused_until), str(self.slowdowns), *map(repr, self.starts)]
        return (" ".join([_STATE_MAGIC, *numbers]) + "\n").encode("ascii")

    @classmethod
    def decode(cls, raw: bytes) -> _State:
        """The state in ``raw`` (empty: a fresh one); ValueError saying why it is corrupt."""
        if not raw:
            return cls()
        if len(raw) > MAX_STATE_BYTES:
            raise ValueError(f"larger than {MAX_STATE_BYTES} bytes")
        words = raw.decode("ascii").split()
        if len(words) < 3 or words[0] != _STATE_MAGIC or len(words) > 3 + int(MAX_RATE):
            raise ValueError("not a rate state of this version")
        numbers = [float(w) for w in [words[1], *words[3:]]]
        slowdowns = int(words[2])
        if not all(math.isfinite(n) and n >= 0 for n in numbers) or slowdowns < 0:
            raise ValueError("a number out of range")
        return cls(sorted(numbers[1:]), numbers[0], slowdowns)

    def settle(self, now: float) -> None:
        """Drop what a wall clock that went back (or an edit) left in the future."""
        self.starts = [t for t in self.starts if t <= now + CLOCK_SLACK]
        if self.paused_until > now + MAX_PAUSE + CLOCK_SLACK:
            self.paused_until = 0.0


class SharedBudget:
    """The request budget that every process of the user shares for one UTS host: a small state
    file, locked (``flock``) while one process reads and writes it.

    Opened, locked, read, written and closed for each start: nothing is held between requests,
    and ``flock`` is released by the kernel if a process dies holding it. Whatever goes wrong
    with the file, ``transact`` warns once and returns ``None`` from then on (``usable`` is then
    false): the caller keeps its per-process limit.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        wall_clock: Clock = time.time,
        cancel: threading.Event,
        warn: bool = True,
    ) -> None:
        self.path = Path(path)
        #: Why the file cannot be used (``usable`` is false), once ``transact`` has found out.
        self.problem: str | None = None
        self._warn = warn
        self._wall = wall_clock
        self._cancel = cancel
        self.usable = True
        self._corrupt_said = False

    def __repr__(self) -> str:
        return f"SharedBudget({str(self.path)!r})"

    def _give_up(self, problem: str) -> None:
        self.usable = False
        self.problem = problem
        if self._warn:
            log.warning("%s; %s", problem, _FALLBACK)

    def transact(self, step: Callable[[_State, float], bool]) -> _State | None:
        """Lock the state, call ``step(state, now)`` (it returns whether it changed the state),
        write it back if so; return the state, or ``None`` if the file cannot be used (warned
        once). Raises ``Cancelled`` if the run is cancelled while the lock is busy."""
        if not self.usable:
            return None
        if fcntl is None:
            self._give_up(
                "this platform has no file locking (fcntl), so runs cannot share one rate limit"
            )
            return None
        try:
            fd = self._open()
        except OSError as err:
            self._give_up(f"cannot use the shared rate state {self.path} ({err.strerror or err})")
            return None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                self._give_up(f"the shared rate state {self.path} is not a regular file")
                return None
            if not self._lock(fd):
                self._give_up(
                    f"the shared rate state {self.path} stayed locked by another process for "
                    f"{LOCK_TIMEOUT:g} s"
                )
                return None
            state = self._read(fd)
            now = self._wall()
            state.settle(now)
            if step(state, now):
                data = state.encode()
                os.ftruncate(fd, 0)
                os.pwrite(fd, data, 0)
            return state
        except OSError as err:
            self._give_up(f"cannot use the shared rate state {self.path} ({err.strerror or err})")
            return None
        finally:
            os.close(fd)  # also releases the lock

    def _open(self) -> int:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        # O_NOFOLLOW: a symlink put in its place must not make us rewrite the file it names;
        # O_NONBLOCK: a FIFO must not block the open (it is refused as not a regular file).
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        return os.open(self.path, flags | getattr(os, "O_CLOEXEC", 0), 0o600)

    def _lock(self, fd: int) -> bool:
        """Take the lock, waiting at most ``LOCK_TIMEOUT`` s (real time) for another process."""
        assert fcntl is not None
        deadline = time.monotonic() + LOCK_TIMEOUT
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    return False
                if self._cancel.wait(LOCK_POLL):
                    raise Cancelled() from None

    def _read(self, fd: int) -> _State:
        raw = os.pread(fd, MAX_STATE_BYTES + 1, 0)
        try:
            return _State.decode(raw)
        except (ValueError, UnicodeDecodeError) as err:
            if not self._corrupt_said:
                self._corrupt_said = True
                log.warning(
                    "the shared rate state %s was corrupt (%s); starting it afresh",
                    self.path,
                    str(err)[:200],
                )
            return _State()


class RateLimiter:
    """A token bucket of capacity one, shared by all threads: starts at least 1/rate s apart.

    ``cancel`` is the run's cancel event (the client passes its own); by default the limiter
    sleeps with ``cancel.wait``, so that setting it wakes every waiting thread at once.
    ``shared_state`` (a file, see ``shared_state_path``) makes the budget one per machine:
    every start also takes a slot there, read on ``wall_clock``.
    """

    def __init__(
        self,
        rate: float = DEFAULT_RATE,
        *,
        clock: Clock = time.monotonic,
        sleep: Sleep | None = None,
        margin: float = MARGIN,
        cancel: threading.Event | None = None,
        shared_state: str | Path | None = None,
        wall_clock: Clock = time.time,
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
        self.shared: SharedBudget | None = None
        if shared_state is not None:
            self.shared = SharedBudget(
                shared_state, wall_clock=wall_clock, cancel=self.cancel_event
            )
        self._seen_slowdowns: int | None = None  # the shared count of 429s last seen

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
                    delay = self._claim_shared()
                    if delay <= 0.0:
                        self._starts.append(now)
                        self._next = now + (1.0 + self._margin) / self._current
                        return waited
                else:
                    delay = earliest - now
            self._sleep(delay)
            waited += delay

    def _claim_shared(self) -> float:
        """Take a slot in the shared state: 0 if taken (or there is none), else the seconds
        until one may be free. Call with the lock held."""
        if self.shared is None:
            return 0.0
        interval = (1.0 + self._margin) / self._current
        window = max(1, math.floor(self._current))
        span = 1.0 + self._margin
        delay = 0.0

        def step(state: _State, now: float) -> bool:
            nonlocal delay
            earliest = state.paused_until
            if state.starts:
                earliest = max(earliest, state.starts[-1] + interval)
            if len(state.starts) >= window:
                earliest = max(earliest, state.starts[-window] + span)
            if now >= earliest - 1e-9:
                state.starts = [*state.starts, now][-int(MAX_RATE) :]
                return True
            delay = earliest - now
            return False

        state = self.shared.transact(step)
        if state is not None:
            self._note_slowdowns(state.slowdowns)
        return delay

    def _note_slowdowns(self, count: int) -> None:
        """Halve the rate if another process reported a 429 since we last looked (lock held)."""
        if self._seen_slowdowns is not None and count != self._seen_slowdowns:
            self._halve()
            log.info(
                "another run got 429 Too Many Requests from this UTS host: %.2f requests a "
                "second from now on",
                self._current,
            )
        self._seen_slowdowns = count

    def _publish_429(self, pause: float) -> None:
        """Tell the other processes of a 429: a pause until ``now + pause``, and one more 429
        to slow down for (lock held)."""
        if self.shared is None:
            return

        def step(state: _State, now: float) -> bool:
            state.paused_until = max(state.paused_until, now + pause)
            state.slowdowns += 1
            return True

        try:
            state = self.shared.transact(step)
        except Cancelled:
            return  # the run is ending: no one is left to tell
        if state is not None:
            self._seen_slowdowns = state.slowdowns

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
            current = self._halve()
            self._publish_429(pause)
        log.warning(
            "UMLS answered 429 Too Many Requests: pausing all requests for %.1f s, "
            "then %.2f requests a second",
            pause,
            current,
        )

    def slow_down(self) -> float:
        """A 429 with no retry left: halve the rate in force (never below ``MIN_FRACTION`` of the
        setting), here and in the other processes; return it."""
        with self._lock:
            current = self._halve()
            self._publish_429(0.0)
            return current

    def _halve(self) -> float:
        """Halve the rate in force, never below ``MIN_FRACTION`` of the setting (lock held)."""
        self._current = max(self.rate * MIN_FRACTION, self._current / 2.0)
        return self._current

    def reward(self) -> None:
        """A request succeeded: earn back a step of the configured rate."""
        with self._lock:
            if self._current < self.rate:
                self._current = min(self.rate, self._current + self.rate * RECOVERY_STEP)
