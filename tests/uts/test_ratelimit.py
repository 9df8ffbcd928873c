"""The shared rate limiter: spacing, the 20 a second ceiling, 429 pauses for every thread."""

from __future__ import annotations

import itertools
import threading
import time

import pytest

from tempmedbench_synonyms.errors import BadInputError
from tempmedbench_synonyms.testing import VirtualTime
from tempmedbench_synonyms.uts.ratelimit import (
    HEADROOM,
    MARGIN,
    MAX_PAUSE,
    MAX_RATE,
    Cancelled,
    RateLimiter,
    check_rate,
)


class FakeTime:
    """A clock that only moves when something sleeps on it."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []
        self.lock = threading.Lock()

    def clock(self) -> float:
        with self.lock:
            return self.now

    def sleep(self, seconds: float) -> None:
        with self.lock:
            self.sleeps.append(seconds)
            self.now += seconds


def test_starts_are_spaced_one_over_rate_with_headroom() -> None:
    t = FakeTime()
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
    t = FakeTime()
    limiter = RateLimiter(10, clock=t.clock, sleep=t.sleep)
    limiter.acquire()
    t.now += 60.0
    limiter.acquire()  # the bucket holds one token: no wait
    assert t.sleeps == []
    limiter.acquire()
    assert t.sleeps == [pytest.approx(HEADROOM / 10)]


def test_any_one_second_window_holds_at_most_rate_starts() -> None:
    t = FakeTime()
    limiter = RateLimiter(20, clock=t.clock, sleep=t.sleep)
    starts = []
    for _ in range(200):
        limiter.acquire()
        starts.append(t.now)
    worst = max(sum(1 for s in starts if a <= s < a + 1.0) for a in starts)
    assert worst == 19  # never more than 20; with the 8% margin, 19 start in any second


@pytest.mark.parametrize("bad", [0, -1, 20.0001, 21, float("nan"), "fast"])
def test_rates_outside_0_to_20_are_refused(bad: object) -> None:
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
            "--rate 0 is out of range: it must be more than 0 requests a second",
            "the default is 15 requests a second, and at most 20 is allowed",
        ),
        (
            -1.5,
            "--rate -1.5 is out of range: it must be more than 0 requests a second",
            "the default is 15 requests a second, and at most 20 is allowed",
        ),
        (
            float("nan"),
            "--rate nan is out of range: it must be more than 0 requests a second",
            "the default is 15 requests a second, and at most 20 is allowed",
        ),
        (
            "fast",
            "--rate 'fast' is not a number of requests a second",
            "give a number above 0 and at most 20; the default is 15",
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


def test_a_429_pauses_every_thread_and_halves_the_rate() -> None:
    t = FakeTime()
    limiter = RateLimiter(10, clock=t.clock, sleep=t.sleep)
    limiter.acquire()
    limiter.penalise(3.0)
    assert limiter.current_rate == 5.0
    before = t.now
    limiter.acquire()
    assert t.now == pytest.approx(before + 3.0)  # waited out the Retry-After
    limiter.acquire()
    assert t.now == pytest.approx(before + 3.0 + HEADROOM / 5.0)  # then at half the rate


def test_a_429_without_retry_after_pauses_one_second() -> None:
    t = FakeTime()
    limiter = RateLimiter(10, clock=t.clock, sleep=t.sleep)
    limiter.penalise(None)
    before = t.now
    limiter.acquire()
    assert t.now == pytest.approx(before + 1.0)


def test_the_rate_is_earned_back_step_by_step_and_never_above_the_setting() -> None:
    limiter = RateLimiter(10)
    limiter.penalise(0.0)
    assert limiter.current_rate == 5.0
    for _ in range(5):
        limiter.reward()
    assert limiter.current_rate == pytest.approx(7.5)
    for _ in range(50):
        limiter.reward()
    assert limiter.current_rate == 10.0


def test_repeated_429s_never_stop_requests_altogether() -> None:
    limiter = RateLimiter(16)
    for _ in range(40):
        limiter.penalise(0.0)
    assert limiter.current_rate == 1.0  # floor: 1/16 of the configured rate


def test_a_thread_asleep_when_a_429_arrives_waits_for_the_pause() -> None:
    """The slow-down reaches workers already waiting, not only the one that got the 429."""
    t = FakeTime()
    limiter = RateLimiter(10, clock=t.clock, sleep=t.sleep)
    limiter.acquire()
    penalised: list[bool] = []

    def sleep_and_get_429(seconds: float) -> None:
        t.sleep(seconds)
        if not penalised:  # while this thread slept, another worker got a 429
            penalised.append(True)
            limiter.penalise(5.0)

    limiter._sleep = sleep_and_get_429  # a worker asleep in its reserved slot
    start = t.now
    limiter.acquire()
    assert t.now >= start + 5.0  # it did not start in its old slot


def test_threads_share_one_schedule() -> None:
    """Four threads, one bucket: the 40 starts keep the spacing and the window between them."""
    t = FakeTime()
    limiter = RateLimiter(20, clock=t.clock, sleep=t.sleep)
    starts: list[float] = []
    limiter._starts = starts  # type: ignore[assignment]  # keep every start, not the last 20

    def worker() -> None:
        for _ in range(10):
            limiter.acquire()

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(starts) == 40
    assert starts == sorted(starts)
    assert min(b - a for a, b in itertools.pairwise(starts)) >= HEADROOM / 20 - 1e-9
    assert max(sum(1 for s in starts if a <= s < a + 1.0) for a in starts) <= 20


def test_a_late_wakeup_does_not_squeeze_the_next_start() -> None:
    """A thread that wakes 40 ms late starts late; the next one still waits a full interval."""
    t = FakeTime()
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
    t = FakeTime()
    limiter = RateLimiter(15.5, clock=t.clock, sleep=t.sleep)
    starts = []
    for _ in range(100):
        limiter.acquire()
        starts.append(t.now)
    assert max(sum(1 for s in starts if a <= s < a + 1.0) for a in starts) == 15
    # Any 16 consecutive starts span the window plus the margin.
    assert min(starts[i + 15] - starts[i] for i in range(85)) >= 1.0 + MARGIN - 1e-9


def test_after_a_429_the_window_follows_the_lower_rate() -> None:
    t = FakeTime()
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
    limiter = RateLimiter(10, clock=vt.clock, sleep=vt.interruptible(cancel), cancel=cancel)
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
    assert vt.blocked.wait(5.0)  # the worker is asleep in the pause
    limiter.cancel()
    th.join(5.0)
    assert not th.is_alive()
    assert [str(e) for e in outcome] == ["the run was stopped before this request was sent"]
    assert isinstance(outcome[0], Cancelled) and outcome[0].exit_code == 4
    assert vt.cut_short == [100.0]  # the whole pause was left unslept...
    assert (vt.now, vt.sleeps) == (1000.0, [])  # ...and the clock never moved


def test_the_default_sleep_is_the_cancel_events_wait() -> None:
    """Without an injected sleep the limiter waits on its cancel event, not in time.sleep."""
    vt = VirtualTime()
    limiter = RateLimiter(10, clock=vt.clock)
    limiter.penalise(MAX_PAUSE)  # two minutes of real waiting, unless the cancel wakes it
    ended: list[float] = []

    def worker() -> None:
        start = time.monotonic()
        with pytest.raises(Cancelled):
            limiter.acquire()
        ended.append(time.monotonic() - start)

    th = threading.Thread(target=worker, daemon=True)
    th.start()
    time.sleep(0.05)  # let it fall asleep (if it has not, it is cancelled before it does)
    limiter.cancel()
    th.join(5.0)
    assert not th.is_alive() and len(ended) == 1 and ended[0] < 5.0


def test_a_cancelled_limiter_starts_nothing_and_sleeps_not() -> None:
    t = FakeTime()
    limiter = RateLimiter(10, clock=t.clock, sleep=t.sleep)
    limiter.acquire()
    limiter.cancel()
    with pytest.raises(Cancelled):
        limiter.acquire()
    assert t.sleeps == []


def test_an_injected_sleep_that_ignores_the_event_still_ends_in_cancelled() -> None:
    """The limiter looks at the event after every sleep, whatever the sleep does."""
    t = FakeTime()
    limiter = RateLimiter(10, clock=t.clock)

    def sleep_then_cancelled(seconds: float) -> None:
        t.sleep(seconds)
        limiter.cancel()  # Ctrl-C while this thread slept

    limiter._sleep = sleep_then_cancelled
    limiter.acquire()
    with pytest.raises(Cancelled):
        limiter.acquire()
    assert t.sleeps == [pytest.approx(HEADROOM / 10)]
    assert len(limiter._starts) == 1  # the cancelled start was not counted


def test_no_pause_is_longer_than_the_retry_budget() -> None:
    t = FakeTime()
    limiter = RateLimiter(10, clock=t.clock, sleep=t.sleep)
    limiter.penalise(3600.0)
    limiter.acquire()
    assert t.sleeps == [MAX_PAUSE] and MAX_PAUSE == 120.0


def test_slow_down_halves_the_rate_without_a_pause() -> None:
    t = FakeTime()
    limiter = RateLimiter(10, clock=t.clock, sleep=t.sleep)
    assert limiter.slow_down() == 5.0
    limiter.acquire()
    assert t.sleeps == []
