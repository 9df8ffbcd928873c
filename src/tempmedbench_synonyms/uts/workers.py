"""UTS requests on worker threads for ``uts.batch``: what completes, round by round, and every
worker stopped at once by an error that ends the run, Ctrl-C or a caller who stops early.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from typing import TypeVar

from tempmedbench_synonyms.errors import Cancelled, NotAuthorisedError, TempMedBenchError
from tempmedbench_synonyms.runtime import DaemonPool

_T = TypeVar("_T")

#: Seconds a cancelled fetch waits for its workers (their sockets are cut: they end at once).
STOP_WAIT = 1.0


def completions(
    calls: Sequence[Callable[[], _T]],
    *,
    workers: int,
    cancel: Callable[[], None],
    tick: float = 0.2,
    name: str = "uts-worker",
) -> Generator[list[tuple[int, _T]], None, None]:
    """Run every call on ``workers`` threads; yield each round the ``(index, result)`` of the
    calls completed since (an empty list after ``tick`` seconds without one), until all are done.
    The first ``TempMedBenchError`` cancels every other worker and is raised once they stopped (a
    401 before the first seen); Ctrl-C, a bug or closing the iterator cancel them too, waiting at
    most ``STOP_WAIT`` seconds."""
    if not calls:
        return
    pool = DaemonPool(min(workers, len(calls)), thread_name_prefix=name)
    futures: dict[Future[_T], int] = {}
    error: TempMedBenchError | None = None
    try:
        for i, call in enumerate(calls):
            futures[pool.submit(call)] = i
        pending: set[Future[_T]] = set(futures)
        while pending and error is None:
            done, pending = wait(pending, timeout=tick, return_when=FIRST_COMPLETED)
            finished: list[tuple[int, _T]] = []
            for future in done:
                exc = future.exception()
                if exc is None:
                    finished.append((futures[future], future.result()))
                elif isinstance(exc, TempMedBenchError):
                    if error is None and not isinstance(exc, Cancelled):
                        error = exc  # a 401 among them is raised, below
                else:
                    raise exc
            yield sorted(finished, key=lambda pair: pair[0])
        if error is not None:
            cancel()
            for future in pending:
                future.cancel()
    except BaseException:
        # Ctrl-C, a bug, or the caller gone: stop every worker; what is complete is cached.
        cancel()
        pool.shutdown(cancel_futures=True, timeout=STOP_WAIT)
        raise
    pool.shutdown(cancel_futures=True, timeout=None if error is None else STOP_WAIT)
    if error is not None:
        # A 401 in any worker beats the error seen first: it is the one the user must fix.
        ended = [
            future.exception() for future in futures if future.done() and not future.cancelled()
        ]
        error = next((exc for exc in ended if isinstance(exc, NotAuthorisedError)), error)
        raise error
