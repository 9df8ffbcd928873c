"""The request budget every UTS request waits on, shared by the runs of the machine through a
locked state file (SPEC sections 3 and 8; docs/reference.md, "The rate budget" and "Limits").
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import re
import secrets
import stat
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from types import ModuleType
from urllib.parse import urlsplit

from tempmedbench_synonyms import config, files
from tempmedbench_synonyms.constants import DEFAULT_RATE, MAX_RATE, RETRY_BUDGET, STATE_DIR_ENV
from tempmedbench_synonyms.errors import Cancelled, UntrustedError
from tempmedbench_synonyms.uts.options import check_base_url, check_rate, url_holds_secret

fcntl: ModuleType | None
try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no flock; SharedBudget falls back, saying so
    fcntl = None

log = logging.getLogger(__name__)

#: Seconds added to the one-second window (and the spacing): the jitter between the limiter and
#: the server's count, so N + 1 requests never land in one server second. bench/bench_rest.py
#: once measured a 51 ms squeeze that broke 5%; 8% costs 8% of throughput.
MARGIN = 0.08
HEADROOM = 1.0 + MARGIN
#: After a 429 the rate never drops below this fraction of the configured rate.
MIN_FRACTION = 1.0 / 16.0
#: Each success earns back this many requests a second, up to the rate: equal for every run (AIMD
#: shares fairly; a step in proportion to the rate let a run at 1 beside one at 20 take 84 s for
#: 10 requests after their shared 429s, 10 s alone).
RECOVERY_STEP = MAX_RATE / 20.0
#: Pause imposed by a 429 that carries no usable Retry-After.
DEFAULT_PAUSE = 1.0
#: The longest pause a 429 may impose on every worker: the retry budget (the client never asks
#: for more; this is a second guard).
MAX_PAUSE = RETRY_BUDGET
#: A wait for a turn longer than this, caused by other runs, is said (once a run).
SAY_WAIT = 1.0

#: The largest state file read: a few hundred bytes is what one holds (at most ``MAX_RATE``
#: starts and ``MAX_RUNS`` runs).
MAX_STATE_BYTES = 4096
#: The most runs the state holds at once (the ones that will be back latest are kept).
MAX_RUNS = 32
#: The longest another process may hold the state's lock (it holds it for microseconds) before
#: this one gives up sharing and keeps its own limit.
LOCK_TIMEOUT = 5.0
#: How often a locked state is tried again.
LOCK_POLL = 0.002
#: A start or pause in the shared state up to this far in the future is kept (the clock of one
#: machine, read a little apart); beyond, the wall clock went back since, and it is dropped.
CLOCK_SLACK = 1.0
#: A run still counts this long after the time it said it would be back (a thread woken late, a
#: busy machine); a run that ended, or was killed, frees its share then.
RUN_GRACE = 1.0
_STATE_MAGIC = "tempmedbench-rate-v2"
_OLD_MAGIC = re.compile(r"tempmedbench-rate-v1")
_RUN_ID = re.compile(r"[0-9a-f]{1,16}")
_FALLBACK = "the rate limit holds for this process only, not for other runs on this machine"

Clock = Callable[[], float]
Sleep = Callable[[float], object]


def next_start(starts: Sequence[float], rate: float, *, most: float) -> float:
    """When the next start may come after ``starts`` (oldest first) at ``rate`` a second:
    ``HEADROOM / rate`` after the last, and no more than ``floor(most)`` starts within
    ``HEADROOM`` s; ``-inf``: at once. One rule for this run's starts and the shared state's."""
    if not starts:
        return -math.inf
    earliest = starts[-1] + HEADROOM / rate
    n = max(1, math.floor(most))
    if len(starts) >= n:
        earliest = max(earliest, starts[-n] + HEADROOM)
    return earliest


def fair_share(rate: float, rates: Iterable[float]) -> float:
    """A run's part of the budget (the larger rate of all) beside runs at ``rates``, shared
    max-min fairly: runs at 15 and 20 get 10 each; at 1 and 20, 1 and 19; alone, its rate."""
    every = sorted([rate, *rates])
    budget = every[-1]
    while every and every[0] * len(every) <= budget:
        budget -= every.pop(0)
    return rate if not every else min(rate, budget / len(every))


def shared_state_path(base_url: str, folder: Path | None = None) -> Path:
    """The state file of one UTS host and port, ``<folder>/rate/<host>-<port>-<hash>.state`` (UTS
    counts requests per IP); a base URL holding the key is refused (its name)."""
    if url_holds_secret(base_url):
        check_base_url(base_url)  # raises BadInputError, the key masked
    parts = urlsplit(base_url.strip())
    host = (parts.hostname or "local").lower()
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:  # a port out of range: check_base_url refuses it before any request
        port = 0
    digest = hashlib.sha256(f"{host}:{port}".encode()).hexdigest()[:12]
    name = re.sub(r"[^a-z0-9.-]+", "_", host)[:64]
    folder = config.state_folder() if folder is None else folder
    return folder / "rate" / f"{name}-{port}-{digest}.state"


class _State:
    """The shared state: latest starts (wall clock), the runs that count (id: rate, until when),
    the end of the latest 429 pause and the 429 count; one line, ``id/rate/until`` per run."""

    __slots__ = ("paused_until", "runs", "slowdowns", "starts")

    def __init__(self) -> None:
        self.starts: list[float] = []
        self.runs: dict[str, tuple[float, float]] = {}
        self.paused_until = 0.0
        self.slowdowns = 0

    def encode(self) -> bytes:
        words = [_STATE_MAGIC, repr(self.paused_until), str(self.slowdowns)]
        words += map(repr, self.starts)
        words += (f"{run}/{rate!r}/{until!r}" for run, (rate, until) in self.runs.items())
        return (" ".join(words) + "\n").encode("ascii")

    @classmethod
    def decode(cls, raw: bytes) -> _State:
        """The state in ``raw`` (empty, or of an earlier version: fresh); ValueError if corrupt."""
        state = cls()
        if not raw:
            return state
        if len(raw) > MAX_STATE_BYTES:
            raise ValueError(f"larger than {MAX_STATE_BYTES} bytes")
        words = raw.decode("ascii").split()
        if words and _OLD_MAGIC.fullmatch(words[0]):
            return state
        if len(words) < 3 or words[0] != _STATE_MAGIC:
            raise ValueError("not a rate state of this version")
        state.paused_until, state.slowdowns = float(words[1]), int(words[2])
        for word in words[3:]:
            if "/" not in word:
                state.starts.append(float(word))
                continue
            run, rate, until = word.split("/")
            if not _RUN_ID.fullmatch(run) or not 0 < float(rate) <= MAX_RATE:
                raise ValueError("a run that is not one")
            state.runs[run] = (float(rate), float(until))
        numbers = [state.paused_until, *state.starts, *(u for _, u in state.runs.values())]
        if not all(math.isfinite(n) and n >= 0 for n in numbers) or state.slowdowns < 0:
            raise ValueError("a number out of range")
        if len(state.starts) > MAX_RATE or len(state.runs) > MAX_RUNS:
            raise ValueError("more starts or runs than a rate state holds")
        state.starts.sort()
        return state

    def settle(self, now: float) -> None:
        """Drop runs that no longer count, and what a clock gone back left in the future."""
        self.starts = [t for t in self.starts if t <= now + CLOCK_SLACK]
        if self.paused_until > now + MAX_PAUSE + CLOCK_SLACK:
            self.paused_until = 0.0
        latest = now + MAX_PAUSE + RUN_GRACE + CLOCK_SLACK
        counting = sorted(
            ((until, run, rate) for run, (rate, until) in self.runs.items()
             if now <= until <= latest),
            reverse=True,
        )  # fmt: skip
        # the ones back latest, and room for one more (the run that is looking)
        self.runs = {run: (rate, until) for until, run, rate in counting[: MAX_RUNS - 1]}


class _Unusable(Exception):
    """Why the shared rate state cannot be used (``SharedBudget.transact`` says it once)."""


def _dangling_link(path: Path) -> Path | None:
    """The first folder on the way up to ``path`` that is a dangling symbolic link, or ``None``."""
    for folder in path.parents:
        try:
            if folder.is_symlink() and not folder.exists():
                return folder
        except OSError:  # a folder that cannot be looked at: its own error is said
            return None
    return None


def _target(link: Path) -> str:
    try:
        return os.readlink(link)
    except OSError:  # (removed meanwhile)
        return "a missing path"


class SharedBudget:
    """The request budget every process of the user shares for one UTS host: a state file,
    ``flock``-ed while read and written for each start; whatever goes wrong with it, ``transact``
    warns once and gives ``None`` from then on. ``read_only``: never created or written."""

    def __init__(
        self,
        path: str | Path,
        *,
        wall_clock: Clock = time.time,
        cancel: threading.Event,
        warn: bool = True,
        read_only: bool = False,
    ) -> None:
        self.path = Path(path)
        #: Why the file cannot be used, once ``transact`` has found out (``None``: it can).
        self.problem: str | None = None
        self.read_only = read_only
        self._warn = warn
        self._wall = wall_clock
        self._cancel = cancel
        self._corrupt_said = False

    def __repr__(self) -> str:
        return f"SharedBudget({str(self.path)!r})"

    def transact(self, step: Callable[[_State, float], object]) -> _State | None:
        """Lock, ``step(state, now)``, write back (unless ``read_only``); the state, or ``None`` if
        the file is unusable (warned once). ``Cancelled`` if cancelled while the lock is busy."""
        if self.problem is not None:
            return None
        fd: int | None = None
        try:
            if fcntl is None:
                raise _Unusable(
                    "this platform has no file locking (fcntl), so runs cannot share one rate limit"
                )
            fd = self._open()
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise _Unusable(f"the shared rate state {self.path} is not a regular file")
            files.check_own(self.path, what="the shared rate state", elsewhere=STATE_DIR_ENV, st=st)
            if not self._lock(fd):
                raise _Unusable(
                    f"the shared rate state {self.path} stayed locked by another process for "
                    f"{LOCK_TIMEOUT:g} s"
                )
            state = self._read(fd)
            now = self._wall()
            state.settle(now)
            step(state, now)
            if not self.read_only:
                data = state.encode()
                os.ftruncate(fd, 0)
                os.pwrite(fd, data, 0)
            return state
        except _Unusable as err:
            self.problem = str(err)
        except FileNotFoundError as err:  # (only the open: the rest works on its descriptor)
            link = _dangling_link(self.path)
            if link is not None:
                # A folder on the way is a symlink to nothing: no run can share the state
                # there, and a fresh one at every start would share nothing, in silence.
                self.problem = (
                    f"cannot use the shared rate state {self.path}: {link} is a symbolic link "
                    f"to {_target(link)}, which does not exist"
                )
            elif not self.read_only:  # (a folder removed while it was made)
                self.problem = f"cannot use the shared rate state {self.path} ({err.strerror})"
            else:
                state = _State()  # read_only, and no run has made it: nothing to honour
                step(state, self._wall())
                return state
        except UntrustedError as err:  # a folder or file that is not the user's own
            self.problem = f"{err}; {err.hint}"
        except OSError as err:
            self.problem = f"cannot use the shared rate state {self.path} ({err.strerror or err})"
        finally:
            if fd is not None:
                os.close(fd)  # also releases the lock
        if self._warn:
            log.warning("%s; %s", self.problem, _FALLBACK)
        return None

    def _open(self) -> int:
        """The state file, opened (made 0700 unless ``read_only``) once its folders are ours."""
        what = "the rate-state folder"
        files.check_own(self.path.parent.parent, what=what, elsewhere=STATE_DIR_ENV)
        if not self.read_only:  # (nothing made in a folder that is not the user's own)
            files.make_folders(self.path.parent)
        files.check_own(self.path.parent, what=what, elsewhere=STATE_DIR_ENV)
        # O_NOFOLLOW: a symlink put in its place must not make us rewrite the file it names;
        # O_NONBLOCK: a FIFO must not block the open (it is refused as not a regular file).
        flags = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        flags |= os.O_RDONLY if self.read_only else os.O_RDWR | os.O_CREAT
        return os.open(self.path, flags | getattr(os, "O_CLOEXEC", 0), 0o600)

    def _lock(self, fd: int) -> bool:
        """Take the lock, waiting at most ``LOCK_TIMEOUT`` s (real time) for another process."""
        assert fcntl is not None
        kind = fcntl.LOCK_SH if self.read_only else fcntl.LOCK_EX
        deadline = time.monotonic() + LOCK_TIMEOUT
        while True:
            try:
                fcntl.flock(fd, kind | fcntl.LOCK_NB)
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
    """The request budget of one run, shared by all its threads: ``acquire`` before each request;
    setting ``cancel_event`` wakes every waiting thread. ``shared_state`` makes the budget one per
    machine (``read_only``: honoured, never written: ``doctor``, ``--dry-run``)."""

    def __init__(
        self,
        rate: float = DEFAULT_RATE,
        *,
        clock: Clock = time.monotonic,
        sleep: Sleep | None = None,
        cancel: threading.Event | None = None,
        shared_state: str | Path | None = None,
        wall_clock: Clock = time.time,
        read_only: bool = False,
    ) -> None:
        self.rate = check_rate(rate)
        self._clock = clock
        self.cancel_event = cancel if cancel is not None else threading.Event()
        # Not time.sleep: a thread asleep in it would see a cancel only when it wakes up.
        self._sleep: Sleep = sleep if sleep is not None else self.cancel_event.wait
        self._lock = threading.Lock()
        self._current = self.rate  # the rate in force now, lowered by 429s
        self._share = math.inf  # this run's fair share, from the shared state's last look
        self._paused_until = float("-inf")
        # When the last requests really started (enough for the window guard at 20 a second).
        self._starts: deque[float] = deque(maxlen=int(MAX_RATE))
        self.shared: SharedBudget | None = None
        if shared_state is not None:
            self.shared = SharedBudget(
                shared_state, wall_clock=wall_clock, cancel=self.cancel_event, read_only=read_only
            )
        self._id = secrets.token_hex(8)  # this run in the shared state
        self._seen_slowdowns: int | None = None  # the shared count of 429s last seen
        self._wait_said = False

    @property
    def fallback_warning(self) -> str | None:
        problem = None if self.shared is None else self.shared.problem
        return None if problem is None else f"{problem}; {_FALLBACK}"

    def acquire(self) -> float:
        """Block until this thread may start a request (``Cancelled`` once cancelled); the seconds
        waited. Nothing is reserved: a woken thread checks again, so a 429 meanwhile counts."""
        waited = 0.0
        while True:
            if self.cancel_event.is_set():
                raise Cancelled()
            with self._lock:
                own = self._next_own()
                delay = max(self._paused_until, own) - self._clock()
                # other runs have lowered this run's rate (its own 429 pause is said apart)
                held = self._share < self._current and own > self._paused_until
                # (a nanosecond of slack: sleeping exactly the delay may land one ulp short)
                if delay <= 1e-9:
                    delay, held = self._claim_shared(), True
                    if delay <= 0.0:
                        self._starts.append(self._clock())
                        return waited
                if held and waited + delay > SAY_WAIT and not self._wait_said:
                    self._wait_said = True  # once a run
                    log.warning(
                        "waiting for a turn: other runs on this machine share this UMLS host's "
                        "request budget (this run's fair share: %.2f requests a second now); "
                        "time spent waiting does not count against a request's retries",
                        min(self._current, self._share),
                    )
            self._sleep(delay)
            waited += delay

    def _next_own(self) -> float:
        """When this run's next start may come by its own starts (lock held)."""
        rate = min(self._current, self._share)
        return next_start(self._starts, rate, most=self._current)

    def _claim_shared(self) -> float:
        """Take a shared slot: 0 if taken (or no state), else seconds until one may be free."""
        if self.shared is None:
            return 0.0
        delay = 0.0

        def step(state: _State, now: float) -> None:
            nonlocal delay
            others = [rate for run, (rate, _) in state.runs.items() if run != self._id]
            self._share = fair_share(self._current, others)
            every = max([self._current, *others])
            delay = max(
                state.paused_until - now,
                # every run's starts: the window of the larger rate (each spaces its own)
                next_start(state.starts, math.inf, most=every) - now,
                self._next_own() - self._clock(),
            )
            if delay <= 1e-9:
                delay = 0.0
                state.starts = [*state.starts, now][-int(MAX_RATE) :]
            # Counted until a second after it is back: its next interval, or the end of the wait.
            back = min(MAX_PAUSE, delay or HEADROOM / min(self._current, self._share))
            state.runs[self._id] = (self._current, now + back + RUN_GRACE)

        state = self.shared.transact(step)
        if state is None:
            self._share = math.inf  # no shared state: this run's own rate
            return 0.0
        if self._seen_slowdowns is not None and state.slowdowns > self._seen_slowdowns:
            # another run reported a 429 since we looked (a lower count: a reset, not a 429)
            self._halve()
            log.info(
                "another run got 429 Too Many Requests from this UTS host: %.2f requests a "
                "second from now on",
                self._current,
            )
        self._seen_slowdowns = state.slowdowns
        return delay

    def penalise(self, retry_after: float | None, *, loud: bool = True) -> None:
        """A 429: pause every thread ``retry_after`` s (at most ``MAX_PAUSE``), halve the rate;
        its line is a warning if ``loud``, else for ``-v`` only."""
        pause = DEFAULT_PAUSE if retry_after is None else max(0.0, retry_after)
        pause = min(pause, MAX_PAUSE)
        log.log(
            logging.WARNING if loud else logging.INFO,
            "UMLS answered 429 Too Many Requests: pausing all requests for %.1f s, "
            "then %.2f requests a second",
            pause,
            self.slow_down(pause),
        )

    def slow_down(self, pause: float = 0.0) -> float:
        """A 429 (with no retry left: no ``pause``): halve the rate (floor ``MIN_FRACTION``) and
        pause every thread ``pause`` s, here and in the other runs; the rate now."""

        def step(state: _State, now: float) -> None:
            state.paused_until = max(state.paused_until, now + pause)
            state.slowdowns += 1

        with self._lock:
            self._paused_until = max(self._paused_until, self._clock() + pause)
            current = self._halve()
            try:
                state = None if self.shared is None else self.shared.transact(step)
            except Cancelled:
                state = None  # the run is ending: no one is left to tell
            if state is not None:
                self._seen_slowdowns = state.slowdowns
            return current

    def _halve(self) -> float:
        """Halve the rate in force, never below ``MIN_FRACTION`` of the setting (lock held)."""
        self._current = max(self.rate * MIN_FRACTION, self._current / 2.0)
        return self._current

    def reward(self) -> None:
        """A request succeeded: earn back ``RECOVERY_STEP`` requests a second, up to the setting."""
        with self._lock:
            if self._current < self.rate:
                self._current = min(self.rate, self._current + RECOVERY_STEP)
