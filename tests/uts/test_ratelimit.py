"""The shared rate limiter: spacing, the 20 a second ceiling, 429 pauses for every thread."""

from __future__ import annotations

import itertools
import logging
import math
import os
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers import tool_env, wait_until
from helpers.uts import rate_in_force
from tempmedbench_synonyms.config import state_folder
from tempmedbench_synonyms.errors import BadInputError, Cancelled
from tempmedbench_synonyms.testing import VirtualTime
from tempmedbench_synonyms.uts import ratelimit
from tempmedbench_synonyms.uts.options import check_rate
from tempmedbench_synonyms.uts.ratelimit import (
    HEADROOM,
    MARGIN,
    MAX_PAUSE,
    MAX_RATE,
    MIN_FRACTION,
    RateLimiter,
    SharedBudget,
    fair_share,
    shared_state_path,
)


def test_starts_are_spaced_one_over_rate_with_headroom() -> None:
    t = VirtualTime()
    limiter = RateLimiter(15, clock=t.clock, sleep=t.sleep)
    starts = []
    for _ in range(5):
        limiter.acquire()
        starts.append(t.now)
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    assert gaps == pytest.approx([HEADROOM / 15] * 4)
    assert all(g >= 1 / 15 for g in gaps)
    assert t.sleeps[0] == pytest.approx(HEADROOM / 15)  # the first start waited for nothing
    assert len(t.sleeps) == 4


def test_no_burst_after_idle_time() -> None:
    """Capacity one: idling does not bank tokens for a burst later."""
    t = VirtualTime()
    limiter = RateLimiter(10, clock=t.clock, sleep=t.sleep)
    limiter.acquire()
    t.now += 60.0
    limiter.acquire()  # the bucket holds one token: no wait
    assert t.sleeps == []
    limiter.acquire()
    assert t.sleeps == [pytest.approx(HEADROOM / 10)]


def test_any_one_second_window_holds_at_most_rate_starts() -> None:
    t = VirtualTime()
    limiter = RateLimiter(20, clock=t.clock, sleep=t.sleep)
    starts = []
    for _ in range(200):
        limiter.acquire()
        starts.append(t.now)
    worst = max(sum(1 for s in starts if a <= s < a + 1.0) for a in starts)
    assert worst == 19  # never more than 20; with the 8% margin, 19 start in any second


@pytest.mark.parametrize("bad", [0, -1, 0.0999, 1e-12, 20.0001, 21, float("nan"), "fast"])
def test_rates_outside_0_1_to_20_are_refused(bad: object) -> None:
    with pytest.raises(BadInputError) as info:
        check_rate(bad)  # type: ignore[arg-type]
    assert info.value.exit_code == 2
    assert "--rate" in str(info.value)


def test_rate_above_the_uts_limit_names_the_terms() -> None:
    with pytest.raises(BadInputError, match=r"above 20 requests a second.*terms of use"):
        RateLimiter(25)


@pytest.mark.parametrize(
    ("rate", "message", "hint"),
    [
        (
            25,
            "--rate 25 is out of range: it is above 20 requests a second, the most the "
            "UMLS Terminology Services terms of use allow from one IP address",
            "use --rate 20 or less (the default, 15, leaves room for other UTS clients)",
        ),
        (
            0,
            "--rate 0 is out of range: it must be at least 0.1 requests a second (one every 10 s)",
            "give a number from 0.1 to 20; the default is 15",
        ),
        (
            0.09,
            "--rate 0.09 is out of range: it must be at least 0.1 requests a second (one every "
            "10 s)",
            "give a number from 0.1 to 20; the default is 15",
        ),
        (
            1e-12,
            "--rate 1e-12 is out of range: it must be at least 0.1 requests a second (one every "
            "10 s)",
            "give a number from 0.1 to 20; the default is 15",
        ),
        (
            -1.5,
            "--rate -1.5 is out of range: it must be at least 0.1 requests a second (one every "
            "10 s)",
            "give a number from 0.1 to 20; the default is 15",
        ),
        (
            float("nan"),
            "--rate nan is out of range: it must be at least 0.1 requests a second (one every "
            "10 s)",
            "give a number from 0.1 to 20; the default is 15",
        ),
        (
            "fast",
            "--rate 'fast' is not a number of requests a second",
            "give a number from 0.1 to 20; the default is 15",
        ),
    ],
)
def test_rate_messages_say_the_range_and_give_a_hint(rate: object, message: str, hint: str) -> None:
    with pytest.raises(BadInputError) as info:
        check_rate(rate)  # type: ignore[arg-type]
    assert (str(info.value), info.value.hint, info.value.key) == (message, hint, "--rate")


def test_rate_of_exactly_20_is_allowed() -> None:
    assert RateLimiter(MAX_RATE).rate == 20.0
    assert check_rate(0.5) == 0.5
    assert check_rate(0.1) == 0.1


def test_a_429_pauses_every_thread_and_halves_the_rate(caplog: pytest.LogCaptureFixture) -> None:
    t = VirtualTime()
    limiter = RateLimiter(10, clock=t.clock, sleep=t.sleep)
    limiter.acquire()
    limiter.penalise(3.0)
    assert [r.getMessage() for r in caplog.records] == [
        "UMLS answered 429 Too Many Requests: pausing all requests for 3.0 s, then 5.00 requests "
        "a second"
    ]
    before = t.now
    limiter.acquire()
    assert t.now == pytest.approx(before + 3.0)  # waited out the Retry-After
    limiter.acquire()
    assert t.now == pytest.approx(before + 3.0 + HEADROOM / 5.0)  # then at half the rate


def test_a_429_without_retry_after_pauses_one_second() -> None:
    t = VirtualTime()
    limiter = RateLimiter(10, clock=t.clock, sleep=t.sleep)
    limiter.penalise(None)
    before = t.now
    limiter.acquire()
    assert t.now == pytest.approx(before + 1.0)


def test_the_rate_is_earned_back_step_by_step_and_never_above_the_setting() -> None:
    t = VirtualTime()
    limiter = RateLimiter(10, clock=t.clock, sleep=t.sleep)
    limiter.penalise(0.0)
    assert rate_in_force(limiter, t) == pytest.approx(5.0)
    for _ in range(2):
        limiter.reward()
    assert rate_in_force(limiter, t) == pytest.approx(7.0)  # one a second a success, any rate
    for _ in range(50):
        limiter.reward()
    assert rate_in_force(limiter, t) == pytest.approx(10.0)


# (Rates between 1 and 2 show as 1 in the spacing, one start in HEADROOM seconds: not here.)
@pytest.mark.parametrize(("rate", "after"), [(1, 1.0), (16, 3.0), (20, 3.5)])
def test_every_rate_earns_back_one_request_a_second_a_success(rate: float, after: float) -> None:
    t = VirtualTime()
    limiter = RateLimiter(rate, clock=t.clock, sleep=t.sleep)
    for _ in range(3):
        limiter.penalise(0.0)
    assert rate_in_force(limiter, t) == pytest.approx(rate / 8)
    limiter.reward()
    assert rate_in_force(limiter, t) == pytest.approx(after)  # rate / 8 + 1, at most the rate


def test_after_shared_429s_a_slow_run_is_not_starved_by_a_fast_one(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """trust 25: a run at 20 and one at 1 share a budget, and the fast one meets a 429 before
    each of the slow one's requests (a pause of 1 s for both, and one more 429 to slow down
    for). Each success earned back 1/20 of the run's own rate: 0.05 a second for the slow run,
    which sank to its floor of 1/16 and took 56.5 s for 10 requests. Now each success earns
    back one request a second, as for the fast run: back to 1 at every success, its turns
    spaced by the pauses and its fair share of a budget that the 429s lowered."""
    vt, fast, slow, _ = two_processes(tmp_path, rate_a=20, rate_b=1)
    t0 = vt.now
    starts = []
    with caplog.at_level(logging.INFO, logger="tempmedbench_synonyms.uts.ratelimit"):
        for _ in range(10):
            fast.acquire()
            fast.penalise(None)
            slow.acquire()  # halved by the fast run's 429, seen at its turn
            starts.append(round(vt.now - t0, 6))
            slow.reward()
    said = [r.getMessage() for r in caplog.records]
    # halved from 1 to 0.5 at each turn but the first: each success brought it back to 1
    assert [m for m in said if m.startswith("another run")] == [
        "another run got 429 Too Many Requests from this UTS host: 0.50 requests a second from "
        "now on"
    ] * 9
    assert rate_in_force(slow, vt) == pytest.approx(1.0)
    assert starts == [1.0, 2.08, 3.16, 4.24, 6.4, 8.56, 10.72, 12.88, 15.04, 17.2]
    # the fast run, which got every 429, at its floor
    assert [m for m in said if m.startswith("UMLS answered 429")][-2:] == [
        "UMLS answered 429 Too Many Requests: pausing all requests for 1.0 s, then "
        f"{20 * MIN_FRACTION:.2f} requests a second"
    ] * 2


def test_repeated_429s_never_stop_requests_altogether() -> None:
    t = VirtualTime()
    limiter = RateLimiter(16, clock=t.clock, sleep=t.sleep)
    for _ in range(40):
        limiter.penalise(0.0)
    assert rate_in_force(limiter, t) == pytest.approx(1.0)  # floor: 1/16 of the configured rate


def test_a_thread_asleep_when_a_429_arrives_waits_for_the_pause() -> None:
    """The slow-down reaches workers already waiting, not only the one that got the 429."""
    t = VirtualTime()
    penalised: list[bool] = []

    def sleep_and_get_429(seconds: float) -> None:
        t.sleep(seconds)
        if not penalised:  # while this thread slept, another worker got a 429
            penalised.append(True)
            limiter.penalise(5.0)

    limiter = RateLimiter(10, clock=t.clock, sleep=sleep_and_get_429)
    limiter.acquire()  # the first start waits for nothing
    start = t.now
    limiter.acquire()
    assert t.now >= start + 5.0  # it did not start in its old slot


def test_threads_share_one_schedule() -> None:
    """Four threads, one bucket: the 40 starts keep the spacing and the window between them."""
    t = VirtualTime()
    seen = threading.local()  # what each thread last read of the clock: its start, once let go

    def clock() -> float:
        seen.now = t.clock()
        return float(seen.now)

    limiter = RateLimiter(20, clock=clock, sleep=t.sleep)
    starts: list[float] = []
    noted = threading.Lock()

    def worker() -> None:
        for _ in range(10):
            limiter.acquire()
            with noted:
                starts.append(seen.now)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(starts) == 40
    starts.sort()
    assert min(b - a for a, b in itertools.pairwise(starts)) >= HEADROOM / 20 - 1e-9
    assert max(sum(1 for s in starts if a <= s < a + 1.0) for a in starts) <= 20


def test_a_late_wakeup_does_not_squeeze_the_next_start() -> None:
    """A thread that wakes 40 ms late starts late; the next one still waits a full interval."""
    t = VirtualTime()
    late = [0.040]

    def oversleep(seconds: float) -> None:
        t.sleep(seconds + (late.pop() if late else 0.0))

    limiter = RateLimiter(20, clock=t.clock, sleep=oversleep)
    starts = []
    for _ in range(3):
        limiter.acquire()
        starts.append(t.now)
    assert starts[1] - starts[0] == pytest.approx(HEADROOM / 20 + 0.040)
    assert starts[2] - starts[1] == pytest.approx(HEADROOM / 20)


def test_the_window_holds_the_floor_of_a_fractional_rate() -> None:
    """At 15.5 a second, spacing alone would let 16 starts into one second; the guard says 15."""
    t = VirtualTime()
    limiter = RateLimiter(15.5, clock=t.clock, sleep=t.sleep)
    starts = []
    for _ in range(100):
        limiter.acquire()
        starts.append(t.now)
    assert max(sum(1 for s in starts if a <= s < a + 1.0) for a in starts) == 15
    # Any 16 consecutive starts span the window plus the margin.
    assert min(starts[i + 15] - starts[i] for i in range(85)) >= 1.0 + MARGIN - 1e-9


def test_after_a_429_the_window_follows_the_lower_rate() -> None:
    t = VirtualTime()
    limiter = RateLimiter(8, clock=t.clock, sleep=t.sleep)
    limiter.penalise(0.0)  # 4 a second now
    starts = []
    for _ in range(20):
        limiter.acquire()
        starts.append(t.now)
    assert max(sum(1 for s in starts if a <= s < a + 1.0) for a in starts) == 4


# -- cancelling: no thread sleeps out a pause once the run is over --------------------------------


def test_cancel_wakes_a_thread_waiting_out_a_429_pause() -> None:
    """Two threads on virtual time: one waits out a 100 s pause, the other cancels the run."""
    vt = VirtualTime()
    cancel = threading.Event()
    sleep = vt.interruptible(cancel, timeout=60)  # (60 s: a cancel that never comes)
    limiter = RateLimiter(10, clock=vt.clock, sleep=sleep, cancel=cancel)
    limiter.acquire()
    limiter.penalise(100.0)
    outcome: list[object] = []

    def worker() -> None:
        try:
            outcome.append(limiter.acquire())
        except Cancelled as err:
            outcome.append(err)

    th = threading.Thread(target=worker)
    th.start()
    assert vt.blocked.wait(60), "the worker never fell asleep in the pause"
    limiter.cancel_event.set()
    th.join(60)
    assert not th.is_alive(), "the cancel did not wake the worker"
    assert [str(e) for e in outcome] == ["the run was stopped before this request was sent"]
    assert isinstance(outcome[0], Cancelled) and outcome[0].exit_code == 4
    assert vt.cut_short == [100.0]  # the whole pause was left unslept...
    assert (vt.now, vt.sleeps) == (1000.0, [])  # ...and the clock never moved


class WatchedEvent(threading.Event):
    """A cancel event that notes each wait on it (its timeout) and says when one begins."""

    def __init__(self) -> None:
        super().__init__()
        self.waits: list[float | None] = []
        self.waiting = threading.Event()

    def wait(self, timeout: float | None = None) -> bool:
        self.waits.append(timeout)
        self.waiting.set()
        return super().wait(timeout)


def test_the_default_sleep_is_the_cancel_events_wait() -> None:
    """Without an injected sleep the limiter waits on its cancel event, not in time.sleep: the
    whole pause is one wait on the event, and the cancel ends it. (Were it time.sleep, the
    event would never be waited on, and the deadlines below, which only a hang reaches, fail.)"""
    vt = VirtualTime()
    cancel = WatchedEvent()
    limiter = RateLimiter(10, clock=vt.clock, cancel=cancel)
    limiter.penalise(MAX_PAUSE)  # two minutes of real waiting, unless the cancel wakes it
    outcome: list[BaseException] = []

    def worker() -> None:
        try:
            limiter.acquire()
        except Cancelled as err:
            outcome.append(err)

    th = threading.Thread(target=worker, daemon=True)
    th.start()
    assert cancel.waiting.wait(60), "the limiter never waited on its cancel event"
    limiter.cancel_event.set()
    th.join(60)
    assert not th.is_alive(), "the cancel did not wake the thread waiting out the pause"
    assert [type(e) for e in outcome] == [Cancelled]
    assert cancel.waits == [MAX_PAUSE]


def test_a_cancelled_limiter_starts_nothing_and_sleeps_not() -> None:
    t = VirtualTime()
    limiter = RateLimiter(10, clock=t.clock, sleep=t.sleep)
    limiter.acquire()
    limiter.cancel_event.set()
    with pytest.raises(Cancelled):
        limiter.acquire()
    assert t.sleeps == []


def test_an_injected_sleep_that_ignores_the_event_still_ends_in_cancelled() -> None:
    """The limiter looks at the event after every sleep, whatever the sleep does."""
    t = VirtualTime()

    def sleep_then_cancelled(seconds: float) -> None:
        t.sleep(seconds)
        limiter.cancel_event.set()  # Ctrl-C while this thread slept

    limiter = RateLimiter(10, clock=t.clock, sleep=sleep_then_cancelled)
    limiter.acquire()
    with pytest.raises(Cancelled):
        limiter.acquire()
    assert t.sleeps == [pytest.approx(HEADROOM / 10)]
    limiter.cancel_event.clear()  # (a new fetch resumes the client)
    limiter.acquire()  # had the cancelled start counted, this one would wait an interval
    assert t.sleeps == [pytest.approx(HEADROOM / 10)]


def test_no_pause_is_longer_than_the_retry_budget() -> None:
    t = VirtualTime()
    limiter = RateLimiter(10, clock=t.clock, sleep=t.sleep)
    limiter.penalise(3600.0)
    limiter.acquire()
    assert t.sleeps == [MAX_PAUSE] and MAX_PAUSE == 120.0


def test_slow_down_halves_the_rate_without_a_pause() -> None:
    t = VirtualTime()
    limiter = RateLimiter(10, clock=t.clock, sleep=t.sleep)
    assert limiter.slow_down() == 5.0
    limiter.acquire()
    assert t.sleeps == []


# -- one budget per machine: two limiters on one state file play two processes ------------------


def two_processes(
    tmp_path: Path, rate_a: float = 5, rate_b: float = 5
) -> tuple[VirtualTime, RateLimiter, RateLimiter, Path]:
    """Two limiters sharing one state file and one virtual clock (wall and monotonic alike)."""
    vt = VirtualTime()
    state = shared_state_path("https://uts.invalid/rest", tmp_path / "state")
    a, b = (
        RateLimiter(rate, clock=vt.clock, sleep=vt.sleep, wall_clock=vt.clock, shared_state=state)
        for rate in (rate_a, rate_b)
    )
    return vt, a, b, state


def starts_of(vt: VirtualTime, limiters: list[RateLimiter]) -> list[float]:
    """Acquire with each limiter in turn; the virtual time of each start, from 0."""
    t0 = vt.now
    out = []
    for limiter in limiters:
        limiter.acquire()
        out.append(round(vt.now - t0, 9))
    return out


def busiest_second(starts: list[float]) -> int:
    return max(sum(1 for t in starts if s <= t < s + 1.0) for s in starts)


def state_words(state: Path) -> tuple[list[str], list[float], dict[str, tuple[float, float]]]:
    """(magic, pause end and 429 count; the starts; the runs) of a state file (format v2)."""
    words = state.read_text("ascii").split()
    starts = [float(w) for w in words[3:] if "/" not in w]
    runs = {w.split("/")[0]: (float(w.split("/")[1]), float(w.split("/")[2]))
            for w in words[3:] if "/" in w}  # fmt: skip
    return words[:3], starts, runs


def test_two_processes_on_one_host_share_one_budget(tmp_path: Path) -> None:
    """Each spaces its own starts at its fair share (2.5 a second: 0.432 s), and the starts of
    both keep the window of 5 (no sixth start within 1.08 s of the fifth before it)."""
    vt, a, b, state = two_processes(tmp_path)
    starts = starts_of(vt, [a, b] * 6)
    assert starts == pytest.approx([0.0, 0.0, 0.432, 0.432, 0.864, 1.08, 1.296, 1.512, 1.728,
                                    1.944, 2.16, 2.376])  # fmt: skip
    assert busiest_second(starts) == 5
    assert state.name.startswith("uts.invalid-443-") and state.suffix == ".state"
    head, kept, runs = state_words(state)
    assert head == ["tempmedbench-rate-v2", "0.0", "0"]
    assert kept == pytest.approx([1000.0 + t for t in starts])
    # each run counts until a second after its next turn (an interval at its share, 0.432 s)
    assert sorted(runs.values()) == [
        (5.0, pytest.approx(1002.16 + 0.432 + 1.0)),
        (5.0, pytest.approx(1002.376 + 0.432 + 1.0)),
    ]


def test_alone_each_process_would_have_sent_twice_as_many(tmp_path: Path) -> None:
    """The same two limiters without the state file: the test above can fail."""
    vt = VirtualTime()
    a, b = (RateLimiter(5, clock=vt.clock, sleep=vt.sleep) for _ in range(2))
    starts = starts_of(vt, [a, b] * 6)
    assert busiest_second(starts) == 10


def test_with_two_rates_each_gets_its_fair_share_of_the_larger(tmp_path: Path) -> None:
    """Chosen and pinned: the budget is the larger rate, split max-min fairly: at 5 and 10,
    5 each; the starts of both keep the larger rate's window."""
    vt, slow, fast, _ = two_processes(tmp_path, rate_a=5, rate_b=10)
    starts = starts_of(vt, [slow, fast, slow, fast])
    assert starts == pytest.approx([0.0, 0.0, 0.216, 0.216])
    vt2, slow2, fast2, _ = two_processes(tmp_path / "other", rate_a=5, rate_b=10)
    starts = starts_of(vt2, [fast2] * 10 + [slow2, fast2] * 10)
    assert busiest_second(starts) <= 10


@pytest.mark.parametrize(
    ("rate", "rates", "share"),
    [
        (15, [], 15),
        (15, [20], 10),
        (20, [15], 10),
        (1, [20], 1),
        (20, [1], 19),
        (15, [15], 7.5),
        (5, [10], 5),
        (1, [1, 1], 1 / 3),
        (20, [2, 3, 20], 7.5),
        (2, [3, 20, 20], 2),
    ],
)
def test_the_fair_share_of_the_larger_rate(rate: float, rates: list[float], share: float) -> None:
    assert fair_share(rate, rates) == pytest.approx(share)


class TurnTaking:
    """A clock for threads that play processes: time moves only when every one of them sleeps,
    to the earliest wake-up (so a thread that is ready competes for a turn as a process would,
    and nothing waits in real time). Each thread calls ``done`` when it ends."""

    def __init__(self, threads: int, start: float = 1_000.0) -> None:
        self.now = start
        self._awake = threads
        self._wakeups: list[float] = []
        self._cond = threading.Condition()

    def clock(self) -> float:
        with self._cond:
            return self.now

    def sleep(self, seconds: float) -> None:
        with self._cond:
            wake = self.now + max(0.0, seconds)
            self._wakeups.append(wake)
            self._awake -= 1
            self._move()
            assert self._cond.wait_for(lambda: self.now >= wake, timeout=10.0)
            self._wakeups.remove(wake)
            self._awake += 1

    def done(self) -> None:
        with self._cond:
            self._awake -= 1
            self._move()

    def _move(self) -> None:
        if self._awake == 0 and self._wakeups:
            self.now = max(self.now, min(self._wakeups))
            self._cond.notify_all()


def compete(
    tmp_path: Path, rates: tuple[float, float], seconds: float
) -> tuple[list[float], list[float]]:
    """Two runs at ``rates`` on one state file, each asking for a turn again as soon as it has
    one, for ``seconds`` of turn-taking time: the starts of each, from 0."""
    clock = TurnTaking(2)
    state = shared_state_path("https://uts.invalid/rest", tmp_path / "state")
    starts: tuple[list[float], list[float]] = ([], [])

    def run(rate: float, out: list[float]) -> None:
        limiter = RateLimiter(rate, clock=clock.clock, sleep=clock.sleep,
                              wall_clock=clock.clock, shared_state=state)  # fmt: skip
        try:
            while clock.clock() < 1_000.0 + seconds:
                limiter.acquire()
                out.append(clock.clock() - 1_000.0)  # no time passes while this thread runs
            del out[-1]  # the start that came after the end
        finally:
            clock.done()

    threads = [threading.Thread(target=run, args=args) for args in zip(rates, starts, strict=True)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(30.0)
    assert not any(th.is_alive() for th in threads)
    return starts


def test_a_slower_run_beside_a_faster_one_gets_its_turns_in_every_window(tmp_path: Path) -> None:
    """SPEC section 8, "Waiting is not failing": a run at --rate 1 beside one at 20 that always
    wants a turn gets its one start in every window of 1.08 s (until now, none at all until
    the fast one paused), and together they keep 20 a second."""
    slow, fast = compete(tmp_path, (1, 20), seconds=20.0)
    assert slow == pytest.approx([k * 1.08 for k in range(19)])  # all it asks, on time
    assert 351 <= len(fast) <= 352  # and the faster run the rest: 19 a window of 1.08 s
    assert busiest_second(sorted(slow + fast)) <= 20


def test_two_runs_at_15_and_20_get_10_each(tmp_path: Path) -> None:
    """The issue's case: the default 15 beside 20 took 15 s instead of 1 s. Now each gets half
    of the 20: as many starts as the other, give or take one a window."""
    a, b = compete(tmp_path, (15, 20), seconds=10.0)
    assert abs(len(a) - len(b)) <= 1
    assert len(a) >= 92  # 10 a window of 1.08 s: 10 s / 0.108 s
    assert busiest_second(sorted(a + b)) <= 20


def test_a_429_in_one_process_pauses_and_slows_the_other(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    vt, a, b, _ = two_processes(tmp_path, rate_a=10, rate_b=10)
    starts_of(vt, [a, b])
    t = vt.now
    with caplog.at_level(logging.INFO, logger="tempmedbench_synonyms.uts.ratelimit"):
        a.penalise(3.0)
        b.acquire()
        assert vt.now == pytest.approx(t + 3.0)  # b waited for a's pause, on the shared clock
        assert [r.getMessage() for r in caplog.records] == [
            "UMLS answered 429 Too Many Requests: pausing all requests for 3.0 s, then 5.00 "
            "requests a second",
            "another run got 429 Too Many Requests from this UTS host: 5.00 requests a second "
            "from now on",
            "waiting for a turn: other runs on this machine share this UMLS host's request budget "
            "(this run's fair share: 5.00 requests a second now); time spent waiting does not "
            "count against a request's retries",
        ]
        caplog.clear()
        a.acquire()
        assert caplog.records == []  # a does not halve again for its own 429
        assert a.slow_down() == 2.5  # a 429 with no retry left: no pause, but the other slows
        b.acquire()
    assert [r.getMessage() for r in caplog.records] == [
        "another run got 429 Too Many Requests from this UTS host: 2.50 requests a second "
        "from now on"
    ]


def test_a_wait_for_a_turn_is_said_once_and_only_when_over_a_second(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    vt, a, b, _ = two_processes(tmp_path, rate_a=10, rate_b=10)
    with caplog.at_level(logging.WARNING, logger="tempmedbench_synonyms.uts.ratelimit"):
        starts_of(vt, [a, b] * 10)  # each waits for its share of the other: never a second
        assert caplog.records == []
        for _ in range(3):
            b.penalise(2.0)  # another run's 429: a waits out its pause, 2 s each time
            starts_of(vt, [a, a])
    waits = [r.getMessage() for r in caplog.records if r.getMessage().startswith("waiting")]
    assert waits == [
        "waiting for a turn: other runs on this machine share this UMLS host's request budget "
        "(this run's fair share: 5.00 requests a second now); time spent waiting does not "
        "count against a request's retries"
    ]
    assert vt.now >= 1000.0 + 3 * 2.0


def test_a_slow_rate_of_its_own_is_not_said_but_a_share_lowered_by_others_is(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    vt, a, b, _ = two_processes(tmp_path, rate_a=0.5, rate_b=1)
    with caplog.at_level(logging.WARNING, logger="tempmedbench_synonyms.uts.ratelimit"):
        assert starts_of(vt, [a, a]) == pytest.approx([0, 2.16])  # its own --rate 0.5: silent
        assert caplog.records == []
        # b: its turn in the window of 1 a second, then its half of it while a counts (until
        # a second after a's next turn), then the whole of it
        assert starts_of(vt, [b, b, b]) == pytest.approx([1.08, 3.24, 4.32])
    assert [r.getMessage() for r in caplog.records] == [
        "waiting for a turn: other runs on this machine share this UMLS host's request budget "
        "(this run's fair share: 0.50 requests a second now); time spent waiting does not "
        "count against a request's retries"
    ]


def test_a_deleted_or_reset_state_halves_no_one(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 17 item 3: the count of 429s seen going down (the file deleted, or started afresh
    after a corruption) is no 429: only a count that goes up halves the rate."""
    vt, a, b, state = two_processes(tmp_path, rate_a=10, rate_b=10)
    halved = (
        "another run got 429 Too Many Requests from this UTS host: {} requests a second from now on"
    )
    with caplog.at_level(logging.INFO, logger="tempmedbench_synonyms.uts.ratelimit"):
        starts_of(vt, [a, b])
        assert b.slow_down() == 5.0
        starts_of(vt, [a])
        assert [r.getMessage() for r in caplog.records] == [halved.format("5.00")]
        caplog.clear()  # b's 429 reached a
        state.unlink()
        starts_of(vt, [a, b, a])
        state.write_text("tempmedbench-rate-v2 0 0\n", "ascii")
        starts_of(vt, [b, a])
        assert caplog.records == []  # neither halved: both still at 5
        assert b.slow_down() == 2.5  # 1 again, but up from 0: a 429
        starts_of(vt, [a])
    assert [r.getMessage() for r in caplog.records] == [halved.format("2.50")]


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"garbage", "not a rate state of this version"),
        (b"tempmedbench-rate-v2 nan 0", "a number out of range"),
        (b"tempmedbench-rate-v2 0 -1", "a number out of range"),
        (b"tempmedbench-rate-v2 0 0 " + b"1 " * 30, "more starts or runs than a rate state holds"),
        (b"tempmedbench-rate-v2 0 0.5", "invalid literal for int() with base 10: '0.5'"),
        (b"tempmedbench-rate-v2 0 0 ab/25/1", "a run that is not one"),
        (b"tempmedbench-rate-v2 0 0 AB/5/1", "a run that is not one"),
        (b"tempmedbench-rate-v2 0 0 ab/5", "not enough values to unpack (expected 3, got 2)"),
        (b"tempmedbench-rate-v2 0 0 ab/5/inf", "a number out of range"),
        (
            b"\xff\xfe",
            "'ascii' codec can't decode byte 0xff in position 0: ordinal not in range(128)",
        ),
        (b"1" * 5000, "larger than 4096 bytes"),
    ],
    ids=[
        "garbage",
        "nan",
        "negative",
        "too-many",
        "float-count",
        "fast-run",
        "run-id",
        "short-run",
        "endless-run",
        "binary",
        "huge",
    ],
)
def test_a_corrupt_state_is_said_once_and_started_afresh(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, content: bytes, problem: str
) -> None:
    vt, a, b, state = two_processes(tmp_path)
    state.parent.mkdir(parents=True)
    state.write_bytes(content)
    with caplog.at_level(logging.WARNING, logger="tempmedbench_synonyms.uts.ratelimit"):
        starts = starts_of(vt, [a, a, b])
        state.write_bytes(content)
        starts += starts_of(vt, [a, a])
    assert [r.getMessage() for r in caplog.records] == [
        f"the shared rate state {state} was corrupt ({problem}); starting it afresh"
    ]  # once, though a read it corrupt twice
    assert starts == pytest.approx([0, 0.216, 0.216, 0.216, 0.432])
    assert state.read_bytes().startswith(b"tempmedbench-rate-v2 0.0 0 ")
    assert len(state.read_bytes()) < 200


def test_the_state_of_an_earlier_version_is_started_afresh_quietly(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    vt, a, _, state = two_processes(tmp_path)
    state.parent.mkdir(parents=True)
    state.write_text(f"tempmedbench-rate-v1 {vt.now + 60} 7 {vt.now}\n", "ascii")
    with caplog.at_level(logging.WARNING, logger="tempmedbench_synonyms.uts.ratelimit"):
        assert starts_of(vt, [a, a]) == pytest.approx([0.0, 0.216])  # no pause, no spacing
    assert caplog.records == []
    assert state_words(state)[0] == ["tempmedbench-rate-v2", "0.0", "0"]


def test_a_clock_that_went_back_never_makes_a_long_wait(tmp_path: Path) -> None:
    """Starts, a pause and a run written an hour ahead (the wall clock went back since) are
    dropped; a start within CLOCK_SLACK is kept, and the wait it adds is bounded by it."""
    vt, a, _, state = two_processes(tmp_path)
    state.parent.mkdir(parents=True)
    ahead = vt.now + 3600
    state.write_text(
        f"tempmedbench-rate-v2 {ahead} 0 " + " ".join([str(ahead)] * 20) + f" ab/20/{ahead}",
        "ascii",
    )
    assert starts_of(vt, [a]) == [0.0]
    head, starts, runs = state_words(state)
    assert (head[1:], starts, list(runs.values())) == (
        ["0.0", "0"], [vt.now], [(5.0, vt.now + HEADROOM / 5 + 1.0)]
    )  # fmt: skip
    vt2, a2, _, state2 = two_processes(tmp_path / "slack")
    state2.parent.mkdir(parents=True)
    state2.write_text(f"tempmedbench-rate-v2 0 0 {vt2.now + 0.5}", "ascii")
    assert starts_of(vt2, [a2]) == [pytest.approx(0.5)]  # not before the start it kept


def test_a_run_that_ended_frees_its_share_a_second_after_its_turn(tmp_path: Path) -> None:
    vt, a, b, _ = two_processes(tmp_path, rate_a=10, rate_b=10)
    assert starts_of(vt, [a, b, a, b]) == pytest.approx([0, 0, 0.216, 0.216])
    # b ends; a keeps half of the budget until b's record lapses (its next turn + 1 s) ...
    assert starts_of(vt, [a, a]) == pytest.approx([0.216, 0.432])
    vt.now += 1.5
    # ... then the whole of it
    assert starts_of(vt, [a, a, a]) == pytest.approx([0, 0.108, 0.216])


def test_without_file_locking_the_limit_is_per_process_said_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ratelimit, "fcntl", None)  # as on Windows
    vt, a, _, state = two_processes(tmp_path)
    with caplog.at_level(logging.WARNING, logger="tempmedbench_synonyms.uts.ratelimit"):
        starts = starts_of(vt, [a] * 4)
    assert starts == pytest.approx([0, 0.216, 0.432, 0.648])  # still spaced in the process
    assert [r.getMessage() for r in caplog.records] == [
        "this platform has no file locking (fcntl), so runs cannot share one rate limit; the "
        "rate limit holds for this process only, not for other runs on this machine"
    ]
    assert not state.exists()
    assert a.shared is not None and a.shared.problem is not None


@pytest.mark.parametrize("kind", ["folder-is-a-file", "state-is-a-folder", "fifo", "symlink"])
def test_a_state_that_cannot_be_used_falls_back_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, kind: str
) -> None:
    vt, a, _, state = two_processes(tmp_path)
    if kind == "folder-is-a-file":
        (tmp_path / "state").write_text("not a folder")
        problem = f"cannot use the shared rate state {state} (Not a directory)"
    else:
        state.parent.mkdir(parents=True)
        if kind == "state-is-a-folder":
            state.mkdir()
            problem = f"cannot use the shared rate state {state} (Is a directory)"
        elif kind == "fifo":
            os.mkfifo(state)
            problem = f"the shared rate state {state} is not a regular file"
        else:
            target = tmp_path / "precious.txt"
            target.write_text("the user's own file")
            state.symlink_to(target)
            problem = (
                f"cannot use the shared rate state {state} (Too many levels of symbolic links)"
            )
    with caplog.at_level(logging.WARNING, logger="tempmedbench_synonyms.uts.ratelimit"):
        starts = starts_of(vt, [a] * 3)
    assert starts == pytest.approx([0, 0.216, 0.432])
    assert [r.getMessage() for r in caplog.records] == [
        f"{problem}; the rate limit holds for this process only, not for other runs on this machine"
    ]
    if kind == "symlink":
        assert (tmp_path / "precious.txt").read_text() == "the user's own file"


def test_a_foreign_rate_state_is_left_aside_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """SPEC section 8, "Shared folders": another user kept a pause 120 s ahead in a state file
    they own (issue 17 item 1: the victim waited over 60 s without a word). It is not trusted:
    one warning, and the run keeps its own limit, at once."""
    vt, a, _, state = two_processes(tmp_path)
    state.parent.mkdir(parents=True, mode=0o700)
    state.write_text(f"tempmedbench-rate-v2 {vt.now + 120} 0 {vt.now}\n", "ascii")
    state.chmod(0o600)
    os.chown(state, 4242, -1)  # (as root: another user's file)
    with caplog.at_level(logging.WARNING, logger="tempmedbench_synonyms.uts.ratelimit"):
        starts = starts_of(vt, [a] * 3)
    assert starts == pytest.approx([0, 0.216, 0.432])  # no pause: its own limit
    warning = (
        f"{state}: the shared rate state belongs to another user (uid 4242; you are uid "
        f"{os.getuid()}), so what it holds cannot be trusted; use a folder of your own "
        f"(TEMPMEDBENCH_STATE_DIR), or have {state} removed; the rate limit holds for this "
        "process only, not for other runs on this machine"
    )
    assert [r.getMessage() for r in caplog.records] == [warning]
    assert a.fallback_warning == warning
    assert state.read_text("ascii").startswith(f"tempmedbench-rate-v2 {vt.now - 0.432 + 120} ")


@pytest.mark.parametrize("loose", ["state", "state/rate", "file"])
def test_a_rate_state_others_can_write_is_left_aside_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, loose: str
) -> None:
    vt, a, _, state = two_processes(tmp_path)
    state.parent.mkdir(parents=True, mode=0o700)
    state.write_text("tempmedbench-rate-v2 0 0\n", "ascii")
    path = state if loose == "file" else tmp_path / loose
    path.chmod(0o666 if loose == "file" else 0o777)
    what = "shared rate state" if loose == "file" else "rate-state folder"
    with caplog.at_level(logging.WARNING, logger="tempmedbench_synonyms.uts.ratelimit"):
        assert starts_of(vt, [a] * 2) == pytest.approx([0, 0.216])
    assert [r.getMessage() for r in caplog.records] == [
        f"{path}: the {what} can be written by other users (mode "
        f"{'0666' if loose == 'file' else '0777'}), so what it holds cannot be trusted; chmod "
        f"go-w {path}, or use a folder of your own (TEMPMEDBENCH_STATE_DIR); the rate limit "
        "holds for this process only, not for other runs on this machine"
    ]
    assert state.read_text("ascii") == "tempmedbench-rate-v2 0 0\n"  # not written either


def test_the_rate_state_folders_are_0700_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        vt, a, _, state = two_processes(tmp_path / "new")
        starts_of(vt, [a])
    finally:
        os.umask(old)
    folders = [tmp_path / "new", tmp_path / "new" / "state", state.parent]
    assert [stat.S_IMODE(f.stat().st_mode) for f in folders] == [0o700] * 3
    assert stat.S_IMODE(state.stat().st_mode) == 0o600
    assert a.fallback_warning is None


def test_a_lock_held_too_long_falls_back_and_a_cancel_ends_the_wait(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    import fcntl

    monkeypatch.setattr(ratelimit, "LOCK_TIMEOUT", 0.05)
    vt, a, b, state = two_processes(tmp_path)
    a.acquire()  # creates the file
    holder = os.open(state, os.O_RDWR)
    try:
        fcntl.flock(holder, fcntl.LOCK_EX)  # a stuck process of the user holds it
        with caplog.at_level(logging.WARNING, logger="tempmedbench_synonyms.uts.ratelimit"):
            b.acquire()
        assert [r.getMessage() for r in caplog.records] == [
            f"the shared rate state {state} stayed locked by another process for 0.05 s; the "
            "rate limit holds for this process only, not for other runs on this machine"
        ]
        # A third run waits for the lock for an hour, unless cancelled: its cancel event is
        # waited on only while it polls the lock (its sleep is the virtual one).
        monkeypatch.setattr(ratelimit, "LOCK_TIMEOUT", 3600.0)
        cancel = WatchedEvent()
        c = RateLimiter(5, clock=vt.clock, sleep=vt.sleep, wall_clock=vt.clock,
                        shared_state=state, cancel=cancel)  # fmt: skip
        outcome: list[BaseException] = []

        def third() -> None:
            try:
                c.acquire()
            except Cancelled as err:
                outcome.append(err)
            c.penalise(1.0)  # a 429 while the run ends: the others are not told, nothing waits

        th = threading.Thread(target=third, daemon=True)
        th.start()
        assert cancel.waiting.wait(60), "the third run never waited for the lock"
        c.cancel_event.set()
        th.join(60)
        assert not th.is_alive(), "the cancel did not end the wait for the lock"
        assert [type(e) for e in outcome] == [Cancelled]
        assert caplog.records[-1].getMessage() == (  # c halved its rate all the same
            "UMLS answered 429 Too Many Requests: pausing all requests for 1.0 s, then 2.50 "
            "requests a second"
        )
        assert c.fallback_warning is None  # cancelled, not given up: the state is still shared
    finally:
        os.close(holder)


def test_the_state_path_is_one_per_host_and_port_under_the_state_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEMPMEDBENCH_STATE_DIR", str(tmp_path / "mine"))
    one = shared_state_path("https://uts-ws.nlm.nih.gov/rest")
    assert one.parent == tmp_path / "mine" / "rate"
    assert one.name.startswith("uts-ws.nlm.nih.gov-443-")
    assert shared_state_path("https://UTS-WS.nlm.nih.gov:443/other/") == one
    assert shared_state_path("http://127.0.0.1:8080/rest").name.startswith("127.0.0.1-8080-")
    assert shared_state_path("http://127.0.0.1:8081/rest") != shared_state_path(
        "http://127.0.0.1:8080/rest"
    )
    assert shared_state_path("http://[::1]:99999/rest").name.startswith("_1-0-")  # no crash
    assert repr(SharedBudget(one, cancel=threading.Event())) == f"SharedBudget({str(one)!r})"
    monkeypatch.delenv("TEMPMEDBENCH_STATE_DIR")
    import platformdirs

    default = Path(platformdirs.user_state_dir("tempmedbench-synonyms", appauthor=False))
    assert state_folder() == default
    with tool_env({"TEMPMEDBENCH_STATE_DIR": " "}):
        assert state_folder() == default


_SENDER = """
import os, sys, urllib.request
from tempmedbench_synonyms.uts.ratelimit import RateLimiter
url, state, rate, n, tag, stop = sys.argv[1:]
limiter = RateLimiter(float(rate), shared_state=state)
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
print("ready", flush=True)
sys.stdin.readline()  # told when to go, whatever its start-up took
i = 0
while i < int(n) if n != "until-stopped" else not os.path.exists(stop):
    limiter.acquire()
    opener.open(f"{url}/{tag}/{i}", timeout=10).read()
    i += 1
"""


class Senders:
    """Real processes that send requests through one shared rate state to one loopback server,
    which notes the tag of each request in the order they arrive (their times are not looked
    at: bench/bench_rate_shared.py measures what a server sees of the rate)."""

    def __init__(self, tmp_path: Path) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.tags: list[str] = []
        self.stop = tmp_path / "stop"  # a sender sending "until-stopped" ends once it exists
        self.procs: list[subprocess.Popen[str]] = []
        noted = threading.Lock()
        tags = self.tags

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                with noted:
                    tags.append(self.path.split("/")[1])
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.state = shared_state_path(self.url, tmp_path / "state")

    def start(self, tag: str, rate: float, n: int | str) -> subprocess.Popen[str]:
        """A sender, ready (its start-up done) but not yet sending."""
        proc = subprocess.Popen(
            [sys.executable, "-c", _SENDER, self.url, str(self.state), str(rate), str(n), tag,
             str(self.stop)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        self.procs.append(proc)
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        return proc

    @staticmethod
    def go(proc: subprocess.Popen[str]) -> None:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.close()

    def count(self, tag: str) -> int:
        return self.tags.count(tag)

    def close(self) -> None:
        self.stop.touch()
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def senders(tmp_path: Path) -> Iterator[Senders]:
    group = Senders(tmp_path)
    try:
        yield group
    finally:
        group.close()


def test_two_real_processes_together_stay_within_the_rate(senders: Senders) -> None:
    """Two processes at 10 a second, 10 requests each: the 20 starts the shared state holds
    (its record of when each request was let go, on the wall clock, read under the lock) keep
    the window of 10: any 11 of them span at least 1.08 s. Without the shared state each
    process would let its 10 go within one such window (the test then fails)."""
    rate, each = 10, 10
    a, b = senders.start("a", rate, each), senders.start("b", rate, each)
    senders.go(a)
    senders.go(b)
    assert [p.wait(timeout=120) for p in (a, b)] == [0, 0]  # a deadline only a hang reaches
    assert sorted(senders.tags) == ["a"] * each + ["b"] * each
    head, kept, _ = state_words(senders.state)
    assert head == ["tempmedbench-rate-v2", "0.0", "0"]
    assert len(kept) == 2 * each  # every start of both (a state holds the latest 20)
    starts, n = sorted(kept), math.floor(rate)
    assert all(starts[i + n] - starts[i] >= HEADROOM - 1e-9 for i in range(len(starts) - n))


def test_a_slow_real_process_gets_its_turns_while_a_fast_one_runs(senders: Senders) -> None:
    """SPEC section 8, "Waiting is not failing", with two processes: a run at --rate 2 sends
    its 3 requests beside one at 20 that never stops asking (before, the slow one found no gap
    until the fast one ended: here it would never end, and the deadline below fails). An
    event, not a time: the slow run ends while the fast one is still sending."""
    fast, slow = senders.start("fast", 20, "until-stopped"), senders.start("slow", 2, 3)
    senders.go(fast)
    wait_until(lambda: senders.count("fast") >= 20, "the fast run's first 20 requests")
    senders.go(slow)
    try:
        slow.wait(timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the slow run got no turn beside the fast one: {senders.count('slow')} of 3")
    assert (slow.returncode, senders.count("slow")) == (0, 3)
    assert fast.poll() is None  # still sending: the slow run's turns came beside it
    senders.stop.touch()
    assert fast.wait(timeout=60) == 0
    assert senders.count("fast") >= 20


@pytest.mark.parametrize("dangling", ["state", "state/rate"])
@pytest.mark.parametrize("read_only", [False, True], ids=["run", "read-only"])
def test_a_dangling_symlink_on_the_state_path_falls_back_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, dangling: str, read_only: bool
) -> None:
    """trust 24: a state folder (or its rate/) that is a symlink to a missing folder was taken
    for "not made yet" and answered with a fresh state each start, in silence: two runs at 20
    made 38 starts in one second. Now the fallback warning, as for every unusable state."""
    vt = VirtualTime()
    state = shared_state_path("https://uts.invalid/rest", tmp_path / "state")
    link = tmp_path / dangling
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(tmp_path / "missing")
    a, b = (
        RateLimiter(20, clock=vt.clock, sleep=vt.sleep, wall_clock=vt.clock, shared_state=state,
                    read_only=read_only)
        for _ in range(2)
    )  # fmt: skip
    warning = (
        f"cannot use the shared rate state {state}: {link} is a symbolic link to "
        f"{tmp_path / 'missing'}, which does not exist; the rate limit holds for this process "
        "only, not for other runs on this machine"
    )
    with caplog.at_level(logging.WARNING, logger="tempmedbench_synonyms.uts.ratelimit"):
        starts = starts_of(vt, [a, b] * 3)
    assert [r.getMessage() for r in caplog.records] == [warning, warning]  # once a run
    assert (a.fallback_warning, b.fallback_warning) == (warning, warning)
    # each keeps its own limit, and nothing was made where the link points
    assert starts == pytest.approx([0, 0, 0.054, 0.054, 0.108, 0.108])
    assert not (tmp_path / "missing").exists()
