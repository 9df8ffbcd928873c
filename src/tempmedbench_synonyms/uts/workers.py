"""The worker pool of a REST fetch: daemon threads that a cancelled run never waits for at exit.

``concurrent.futures.ThreadPoolExecutor`` joins its threads when the interpreter exits, so one
worker stuck in a read would hold Ctrl-C's exit for as long as the read lasts (SPEC section 8: a
command ends within 2 seconds of Ctrl-C). These threads are daemons, and ``shutdown`` waits for
them for a bounded time only: the client cuts their sockets when the run is cancelled
(``UtsClient.cancel``), so they normally end at once, and one that does not (a connect still
under way) is left to end by itself, holding nothing the run needs: every complete answer is
already cached, and a cache entry is written to a temporary file and moved into place.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

_T = TypeVar("_T")

_Job = tuple["Future[Any]", Callable[..., Any], tuple[Any, ...]]


class DaemonPool:
    """``submit`` and ``shutdown`` as ``ThreadPoolExecutor`` has them, on daemon threads."""

    def __init__(self, max_workers: int, *, thread_name_prefix: str = "worker") -> None:
        if max_workers < 1:
            raise ValueError("max_workers must be at least 1")
        self._max = max_workers
        self._prefix = thread_name_prefix
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._closed = False

    def submit(self, fn: Callable[..., _T], *args: Any) -> Future[_T]:
        """Run ``fn(*args)`` on a worker; its future holds the result or the exception."""
        if self._closed:
            raise RuntimeError("the pool is shut down")
        future: Future[_T] = Future()
        self._jobs.put((future, fn, args))
        if len(self._threads) < self._max:
            thread = threading.Thread(
                target=self._work,
                name=f"{self._prefix}_{len(self._threads)}",
                daemon=True,
            )
            self._threads.append(thread)
            thread.start()
        return future

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            future, fn, args = job
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = fn(*args)
            except BaseException as exc:  # the future carries it to the caller
                future.set_exception(exc)
            else:
                future.set_result(result)

    def shutdown(self, *, cancel_futures: bool = False, timeout: float | None = None) -> bool:
        """No more jobs; with ``cancel_futures``, the queued ones are cancelled. Waits for the
        workers at most ``timeout`` seconds (for ever if ``None``); whether all have ended."""
        self._closed = True
        if cancel_futures:
            while True:
                try:
                    job = self._jobs.get_nowait()
                except queue.Empty:
                    break
                if job is not None:
                    job[0].cancel()
        for _ in self._threads:
            self._jobs.put(None)
        end = None if timeout is None else time.monotonic() + timeout
        for thread in self._threads:
            thread.join(None if end is None else max(0.0, end - time.monotonic()))
        return not any(t.is_alive() for t in self._threads)
