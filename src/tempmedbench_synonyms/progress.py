"""Progress on stderr for the long steps (the UMLS fetch, the MRCONSO scan): a rich bar on a
terminal, plain lines elsewhere (docs/reference.md, "Progress and colours").

The bar is redrawn by the step itself from the main thread, never by a thread of rich's
(``auto_refresh=False``), so a Ctrl-C leaves no thread behind; ``close`` ends it on every path.
"""

from __future__ import annotations

import logging
import math
import sys
import time
from collections.abc import Callable
from typing import Any, Literal, TextIO

from rich.console import Console
from rich.file_proxy import FileProxy
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeRemainingColumn,
)
from rich.table import Column
from rich.text import Text

from tempmedbench_synonyms import runtime
from tempmedbench_synonyms.errors import plural

Unit = Literal["concepts", "bytes", "inputs"]

#: the least seconds between two plain lines (a thirtieth of the time taken, once longer)
_PLAIN_INTERVAL = 5.0
#: the bar drawn on a terminal now, if any (``print_above`` writes above it)
_drawn: list[StepProgress] = []


class StepProgress:
    """``stream``: where (``None``: nowhere); a terminal (or a ``console``, rich's, for tests) gets
    the bar. Time counts from the first update, or from ``started`` on ``clock`` if given.
    ``close`` is safe twice."""

    def __init__(
        self,
        stream: TextIO | None,
        *,
        label: str,
        unit: Unit,
        total: int | None = None,
        console: Console | None = None,
        clock: Callable[[], float] = time.monotonic,
        tty_interval: float = 0.1,
        started: float | None = None,
    ) -> None:
        self.stream = stream
        self.label = label
        self.unit: Unit = unit
        self._clock = clock
        isatty = getattr(stream, "isatty", None)
        is_tty = console is not None or (callable(isatty) and bool(isatty()))
        self.is_tty = is_tty and stream is not None
        self._interval = tty_interval if self.is_tty else _PLAIN_INTERVAL
        if self.is_tty and console is None:
            # the stream said it is a terminal: rich is told so, never guesses (FORCE_COLOR)
            console = Console(file=stream, force_terminal=True, stderr=stream is sys.stderr)
        self._bar = Progress(
            *_columns(unit),
            console=console,
            auto_refresh=False,
            redirect_stdout=False,
            redirect_stderr=False,
            get_time=clock,
            disable=not self.is_tty,
        )
        self._task = self._bar.add_task(label, total=total, start=False, extra="")
        self._started = started
        self._start = clock() if started is None else started
        self._last = float("-inf")
        self._closed = False
        self._handlers: list[tuple[logging.StreamHandler[Any], Any]] = []

    def __call__(self, done: int, total: int) -> None:
        """The ``ProgressCallback`` of a scan: the step ends when ``done`` reaches ``total``."""
        self.update(done, total=total, final=done >= total)

    def update(
        self,
        done: int,
        *,
        total: int | None = None,
        hits: int | None = None,
        requests: int | None = None,
        retries: int = 0,
        rows: int | None = None,
        final: bool = False,
    ) -> None:
        """Record ``done``; show it when ``final`` or when the last showing is old enough. ``hits``,
        ``requests``, retries and ``rows`` are shown beside the counts. The first ``done`` is the
        start: what the cache answered at once counts neither in the rate nor the time left."""
        if self.stream is None or self._closed:
            return
        extra = [] if rows is None else [f"{rows:,} row" + ("" if rows == 1 else "s")]
        if hits is not None:
            extra.append(plural(hits, "cache hit"))
        if requests is not None:
            extra.append(plural(requests, "request") + (f" ({retries} retried)" if retries else ""))
        task = self._bar.tasks[0]
        if task.start_time is None:  # the first update (the task is added unstarted)
            if self._started is None:
                self._start = self._clock()  # the step starts now, not when it was built
            # The bar's time taken counts from there too; set before the update, which takes
            # the time taken of a step it completes only from a started task.
            task.start_time = self._start
        self._bar.update(self._task, completed=done, total=total, extra=", ".join(extra))
        now = self._clock()
        interval = self._interval if self.is_tty else max(self._interval, (now - self._start) / 30)
        if not final and now - self._last < interval:
            return
        self._last = now
        if self.is_tty:
            if not self._bar.live.is_started:
                self._bar.start()  # draws
                # Log lines on the bar's stream are printed above it (rich's FileProxy).
                stream = self.stream
                for handler in logging.getLogger().handlers:
                    if isinstance(handler, logging.StreamHandler) and handler.stream is stream:
                        self._handlers.append((handler, stream))
                        handler.setStream(FileProxy(self._bar.console, stream))
                _drawn.append(self)
            elif not final:
                self._bar.refresh()  # (the final state is drawn by close)
        else:
            runtime.say(self.stream, self._plain(task, final=final))
        if final:
            self.close()

    def close(self) -> None:
        """End the bar: its last state stays on screen, the cursor is shown again."""
        if self._closed:
            return
        self._closed = True
        for handler, stream in self._handlers:
            handler.setStream(stream)
        self._handlers = []
        if self in _drawn:
            _drawn.remove(self)
        if self._bar.live.is_started:
            self._bar.stop()

    def _plain(self, task: Task, *, final: bool) -> str:
        """The plain line: counts, then rate and time left after a second, or the time taken."""
        total = task.total
        done = int(task.completed)
        if self.unit == "bytes":
            size = done if total is None else int(total)
            pct = 100 if size <= 0 else min(100, math.floor(100 * done / size))
            parts = [f"{self.label}: {pct}% ({format_size(done)} of {format_size(size)})"]
        else:
            parts = [f"{self.label}: {done}/{int(total or 0)} {self.unit}"]
        fields = task.fields.get("extra")
        if fields:
            parts.append(str(fields))
        elapsed = self._clock() - self._start
        speed = task.speed
        if final:
            parts.append(f"done in {_duration(elapsed)}")
        elif elapsed >= 1.0 and speed:
            parts.append(_rate(speed, self.unit))
            if task.time_remaining is not None:
                parts.append(f"about {_duration(task.time_remaining)} left")
        return ", ".join(parts)


def print_above(text: str) -> bool:
    """Print a line above the bar drawn now (redrawn below it); False when no bar is drawn."""
    if not _drawn:
        return False
    bar = _drawn[-1]
    FileProxy(bar._bar.console, bar.stream).write(text + "\n")  # type: ignore[arg-type]
    return True


class _RateColumn(ProgressColumn):
    """Items or bytes a second; blank until known (rich's shows "?")."""

    def __init__(self, unit: Unit) -> None:
        super().__init__(table_column=Column(no_wrap=True))
        self.unit: Unit = unit

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        text = "" if speed is None else _rate(speed, self.unit, short=True)
        return Text(text, style="progress.data.speed")


def _columns(unit: Unit) -> list[ProgressColumn]:
    """The bar's columns; only the bar shrinks on a narrow terminal, no text wraps."""

    def text(template: str) -> TextColumn:
        return TextColumn(template, table_column=Column(no_wrap=True))

    counts = (
        DownloadColumn() if unit == "bytes" else text(f"{{task.completed}}/{{task.total}} {unit}")
    )
    return [
        text("{task.description}"),
        BarColumn(bar_width=24),
        counts,
        _RateColumn(unit),
        TimeRemainingColumn(elapsed_when_finished=True),
        text("{task.fields[extra]}"),
    ]


def _rate(speed: float, unit: Unit, *, short: bool = False) -> str:
    """``12.5 MB/s``, ``12.5 concepts/s`` (``12.5/s`` on the bar, beside the word concepts)."""
    if unit == "bytes":
        return f"{format_size(int(speed))}/s"
    return f"{speed:.1f}/s" if short else f"{speed:.1f} {unit}/s"


def format_size(n: int) -> str:
    """A byte count for people: ``2.5 MB`` (decimal units, as file managers show them)."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def _duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, secs = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"
