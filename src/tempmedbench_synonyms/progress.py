"""Progress on stderr: a line redrawn in place on a terminal, a few plain lines otherwise."""

from __future__ import annotations

import sys
import time
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
            self.stream.write(f"\r{self.label}: {pct:5.1f}% ({_size(done)} of {_size(total)})")
            if end:
                self.stream.write(f" in {time.monotonic() - self._start:.1f} s\n")
        else:
            decile = int(pct // 10)
            if decile == self._last_decile:
                return
            self._last_decile = decile
            self.stream.write(f"{self.label}: {int(pct)}% ({_size(done)} of {_size(total)})\n")
        self._finished = end
        self.stream.flush()


def _size(n: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"
