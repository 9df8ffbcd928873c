"""The daemon worker pool: results and errors through futures, cancelled queues, bounded stops;
and the error a batch of workers ends with."""

from __future__ import annotations

import threading

import pytest

from tempmedbench_synonyms.errors import NotAuthorisedError, UnavailableError
from tempmedbench_synonyms.runtime import DaemonPool
from tempmedbench_synonyms.uts import workers


def test_results_and_exceptions_come_back_through_the_futures() -> None:
    pool = DaemonPool(2, thread_name_prefix="t")
    ok = pool.submit(lambda a, b: a + b, 2, 3)
    bad = pool.submit(lambda: 1 // 0)
    assert ok.result(timeout=60) == 5
    assert isinstance(bad.exception(timeout=60), ZeroDivisionError)
    assert pool.shutdown() is True
    with pytest.raises(RuntimeError, match="the pool is shut down"):
        pool.submit(lambda: None)


def test_threads_are_daemons_named_by_the_prefix_and_never_more_than_asked() -> None:
    pool = DaemonPool(2, thread_name_prefix="pool-under-test")
    seen: set[tuple[str, bool]] = set()

    def who() -> None:
        thread = threading.current_thread()
        seen.add((thread.name, thread.daemon))

    for future in [pool.submit(who) for _ in range(6)]:
        future.result(timeout=60)
    started = {t.name for t in threading.enumerate() if t.name.startswith("pool-under-test")}
    assert pool.shutdown() is True
    assert seen <= {("pool-under-test_0", True), ("pool-under-test_1", True)}
    assert {name for name, _ in seen} <= started <= {"pool-under-test_0", "pool-under-test_1"}
    assert not any(t.name.startswith("pool-under-test") for t in threading.enumerate())


@pytest.mark.parametrize(("cancel", "queued_ends"), [(True, "cancelled"), (False, "ran")])
def test_a_stop_waits_a_bounded_time_and_cancels_what_never_started_if_asked(
    cancel: bool, queued_ends: str
) -> None:
    """With ``cancel_futures`` the queued jobs are dropped; without it (ThreadPoolExecutor's
    default) they still run: the GPS hashing pool's blocks must all be hashed before its digest
    is read (snomed/gps.py)."""
    pool = DaemonPool(1)
    release = threading.Event()
    started = threading.Event()

    ran_in: list[threading.Thread] = []

    def stuck() -> str:
        ran_in.append(threading.current_thread())
        started.set()
        release.wait(60)
        return "done"

    first = pool.submit(stuck)
    queued = pool.submit(lambda: "ran")
    assert started.wait(60)
    assert pool.shutdown(cancel_futures=cancel, timeout=0.05) is False  # still stuck: not waited
    release.set()
    assert first.result(timeout=60) == "done"
    assert ("cancelled" if queued.cancelled() else queued.result(timeout=60)) == queued_ends
    ran_in[0].join(60)  # a deadline only a hang reaches
    assert not ran_in[0].is_alive()


def test_a_pool_needs_a_worker() -> None:
    with pytest.raises(ValueError, match="max_workers must be at least 1"):
        DaemonPool(0)


def test_a_401_after_the_first_error_is_the_one_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    """``completions``: a 401 beats the error seen first, even one that comes while the others
    stop (the key is what the user must fix). Its worker fails only once the first error has
    cancelled the batch, so no round of the loop sees it: the scan after the stop must."""
    monkeypatch.setattr(workers, "STOP_WAIT", 60.0)  # the stop waits for it, however slow the host
    cancelled = threading.Event()

    def unavailable() -> None:
        raise UnavailableError("UMLS answered HTTP 503 for /content/2099AA/CUI/C9000001")

    def refused() -> None:
        assert cancelled.wait(60)
        raise NotAuthorisedError(401, "/content/2099AA/CUI/C9000002")

    rounds = workers.completions([unavailable, refused], workers=2, cancel=cancelled.set)
    with pytest.raises(NotAuthorisedError) as raised:
        list(rounds)
    assert (raised.value.status, raised.value.url) == (401, "/content/2099AA/CUI/C9000002")
