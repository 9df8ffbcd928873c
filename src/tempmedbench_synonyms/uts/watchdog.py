"""Every UTS attempt on the wire cut off at its deadline, or at once on cancel: a socket timeout
bounds one read, not the attempt, so a helper thread shuts the attempt's sockets down.
"""

from __future__ import annotations

import math
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Protocol

from tempmedbench_synonyms import runtime


class Connection(Protocol):
    """What the watchdog needs of a connection: its socket, once it is open."""

    @property
    def sock(self) -> socket.socket | None: ...


@dataclass(eq=False, slots=True)
class Flight:
    """One attempt on the wire: its deadline, its connections, and why it was cut off, if it was."""

    owner: object
    deadline: float
    conns: list[Connection] = field(default_factory=list)
    #: "timeout" (its deadline passed) or "cancel" (the run was cancelled), once cut off
    doomed: str | None = None
    cut: bool = False


class Watchdog:
    """Every attempt on the wire in this process (``flight``, ``track``), and the daemon thread
    that cuts one off; it exits when none is on the wire (a forking process must find none)."""

    #: seconds between tries to cut a connection whose socket is still being opened
    RETRY = 0.05

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._live: set[Flight] = set()
        self._thread: threading.Thread | None = None
        self._local = threading.local()

    @contextmanager
    def flight(self, owner: object, seconds: float) -> Iterator[Flight]:
        """Register one attempt of ``owner`` that must end within ``seconds``."""
        f = Flight(owner, time.monotonic() + seconds)
        self._local.current = f
        with self._cond:
            self._live.add(f)
        try:
            yield f
        finally:
            self._local.current = None
            with self._cond:
                self._live.discard(f)
                self._cond.notify()

    def track(self, conn: Connection) -> None:
        """Called by a connection about to send, in the attempt's thread."""
        f: Flight | None = getattr(self._local, "current", None)
        if f is None:  # a request sent outside ``flight`` (never by UtsClient)
            return
        with self._cond:
            f.conns.append(conn)
            f.cut = False
            if self._thread is None:
                self._thread = runtime.start_thread(self._watch, name="uts-watchdog")
            self._cond.notify()

    def cancel(self, owner: object) -> None:
        """Cut off every attempt of ``owner`` now (from any thread: Ctrl-C, a 401)."""
        with self._cond:
            for f in self._live:
                if f.owner is owner and f.doomed is None:
                    f.doomed = "cancel"
            self._cut_doomed()
            self._cond.notify()

    def _cut_doomed(self) -> bool:
        """Shut down the sockets of doomed flights; whether one had no socket yet (retry soon)."""
        again = False
        for f in self._live:
            if f.doomed is None or f.cut:
                continue
            f.cut = True
            for conn in f.conns:
                sock = conn.sock
                if sock is None:
                    f.cut, again = False, True
                    continue
                try:
                    # socket.socket's own shutdown, also for an SSLSocket: only the file
                    # descriptor is touched, never the TLS state that the reading thread uses.
                    socket.socket.shutdown(sock, socket.SHUT_RDWR)
                except OSError:
                    pass  # already closed: nothing to wake
        return again

    def _watch(self) -> None:
        with self._cond:
            while self._live:
                now = time.monotonic()
                wake = math.inf
                for f in self._live:
                    if f.doomed is None and now >= f.deadline:
                        f.doomed = "timeout"
                    elif f.doomed is None:
                        wake = min(wake, f.deadline - now)
                if self._cut_doomed():
                    wake = min(wake, self.RETRY)
                self._cond.wait(None if wake == math.inf else max(wake, 0.001))
            self._thread = None


WATCHDOG = Watchdog()
