"""Progress on stderr: a line redrawn in place on a terminal, a few plain lines otherwise.

``ByteProgress`` follows a scan of a local file (MRCONSO.RRF); ``FetchProgress`` follows the
concepts fetched from UMLS, with requests, retries, rate and time left.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO


class ByteProgress:
    """Report (done, total) bytes of a long scan, at most every ``interval`` seconds."""

    def __init__(self, label: str, *, stream: TextIO | None = None, interval: float = 0.25) -> None:
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.tty = self.stream.isatty()
        self.interval = interval
        self._last = float("-inf")  # the first call always draws
        self._last_decile = -1
        self._finished = False
        self._start = time.monotonic()

    def __call__(self, done: int, total: int) -> None:
        if self._finished:
            return
        pct = 100.0 if total <= 0 else min(100.0, 100.0 * done / total)
        end = done >= total
        if self.tty:
            now = time.monotonic()
            if not end and now - self._last < self.interval:
                return
            self._last = now
            self.stream.write(
                f"\r{self.label}: {pct:5.1f}% ({format_size(done)} of {format_size(total)})"
            )
            if end:
                self.stream.write(f" in {time.monotonic() - self._start:.1f} s\n")
        else:
            decile = int(pct // 10)
            if decile == self._last_decile:
                return
            self._last_decile = decile
            self.stream.write(
                f"{self.label}: {int(pct)}% ({format_size(done)} of {format_size(total)})\n"
            )
        self._finished = end
        self.stream.flush()


def format_size(n: int) -> str:
    """A byte count for people: ``2.5 MB`` (decimal units, as file managers show them)."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


class FetchProgress:
    """The fetch's progress on stderr: one line rewritten in place on a terminal, plain lines
    every few seconds otherwise, nothing when ``stream`` is ``None`` (quiet)."""

    def __init__(
        self,
        stream: TextIO | None,
        *,
        release: str,
        total: int,
        is_tty: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
        plain_interval: float = 5.0,
        tty_interval: float = 0.1,
    ) -> None:
        self.stream = stream
        self.release = release
        self.total = total
        self._clock = clock
        if is_tty is None:
            isatty = getattr(stream, "isatty", None)
            is_tty = bool(isatty()) if callable(isatty) else False
        self.is_tty = is_tty
        self._interval = tty_interval if is_tty else plain_interval
        self._start = clock()
        self._last = float("-inf")
        self._width = 0
        self.lines: list[str] = []

    def line(self, done: int, hits: int, requests: int, retries: int, fetched: int) -> str:
        """The progress line: concepts done of total, cache hits, requests, retries, rate, ETA.

        The rate and the time left are shown once a second has passed (before, they are noise).
        """
        elapsed = max(1e-9, self._clock() - self._start)
        parts = [
            f"UMLS {self.release}: {done}/{self.total} concepts",
            f"{hits} from cache",
            f"{requests} request{'' if requests == 1 else 's'}"
            + (f" ({retries} retried)" if retries else ""),
        ]
        if elapsed >= 1.0:
            parts.append(f"{requests / elapsed:.1f} req/s")
        remaining = self.total - done
        if remaining and fetched and elapsed >= 1.0:
            parts.append(f"about {_duration(remaining * elapsed / fetched)} left")
        elif not remaining:
            parts.append(f"done in {_duration(elapsed)}")
        return ", ".join(parts)

    def update(
        self,
        done: int,
        hits: int,
        requests: int,
        retries: int,
        fetched: int,
        *,
        final: bool = False,
    ) -> None:
        """Show the line if ``final`` or if the last one is old enough."""
        if self.stream is None:
            return
        now = self._clock()
        if not final and now - self._last < self._interval:
            return
        self._last = now
        text = self.line(done, hits, requests, retries, fetched)
        self.lines.append(text)
        if self.is_tty:
            pad = " " * max(0, self._width - len(text))
            self.stream.write("\r" + text + pad + ("\n" if final else ""))
            self._width = 0 if final else len(text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        """End a line left open on a terminal (an interrupted fetch), so the next text is clean."""
        if self.stream is not None and self.is_tty and self._width:
            self.stream.write("\n")
            self.stream.flush()
            self._width = 0


def _duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, secs = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"
