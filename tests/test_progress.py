"""The progress of the fetch and of the scan: one shape, a rich bar on a terminal, plain lines
elsewhere (exact, with an injected clock), nothing when quiet, no colour under NO_COLOR."""

from __future__ import annotations

import io
import itertools
import logging
import re
import threading

import pytest
from rich.console import Console

from tempmedbench_synonyms import progress
from tempmedbench_synonyms.progress import StepProgress

REL = "2099AA"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def run_fetch(p: StepProgress, clock: Clock) -> None:
    """10 concepts, 2 answered by the cache (and the probe: 3 cache hits), one a second."""
    p.update(2, hits=3, requests=0)
    for done in range(3, 10):
        clock.now += 1.0
        p.update(done, hits=3, requests=done - 2, retries=1 if done > 5 else 0)
    clock.now += 1.0
    p.update(10, hits=3, requests=9, retries=1, final=True)


def test_fetch_plain_lines_every_five_seconds_when_not_a_terminal() -> None:
    clock = Clock()
    out = io.StringIO()
    p = StepProgress(out, label=f"UMLS {REL}", unit="concepts", total=10, clock=clock)
    run_fetch(p, clock)
    assert out.getvalue().splitlines() == [
        "UMLS 2099AA: 2/10 concepts, 3 cache hits, 0 requests",
        "UMLS 2099AA: 7/10 concepts, 3 cache hits, 5 requests (1 retried), 1.0 concepts/s, "
        "about 3 s left",
        "UMLS 2099AA: 10/10 concepts, 3 cache hits, 9 requests (1 retried), done in 8 s",
    ]


def test_scan_plain_lines_are_the_same_shape() -> None:
    clock = Clock()
    out = io.StringIO()
    p = StepProgress(out, label="scanning MRCONSO.RRF", unit="bytes", clock=clock)
    size = 3_000_000_000
    for second in range(13):
        clock.now = float(second)
        p(min(size, second * 250_000_000), size)
    p(size, size)  # after the end: nothing more
    assert out.getvalue().splitlines() == [
        "scanning MRCONSO.RRF: 0% (0 B of 3.0 GB)",
        "scanning MRCONSO.RRF: 41% (1.2 GB of 3.0 GB), 250.0 MB/s, about 7 s left",
        "scanning MRCONSO.RRF: 83% (2.5 GB of 3.0 GB), 250.0 MB/s, about 2 s left",
        "scanning MRCONSO.RRF: 100% (3.0 GB of 3.0 GB), done in 12 s",
    ]


def test_plain_lines_are_bounded_on_a_long_run() -> None:
    """Every 5 s for the first 150 s, then every 1/30 of the time elapsed: a 50-minute fetch
    reported every 0.2 s writes 119 lines, not 600."""
    clock = Clock()
    out = io.StringIO()
    p = StepProgress(out, label=f"UMLS {REL}", unit="concepts", total=15_000, clock=clock)
    for tick in range(15_000):  # 3000 s
        clock.now = tick * 0.2
        p.update(tick, hits=0, requests=tick)
    p.update(15_000, hits=0, requests=15_000, final=True)
    lines = out.getvalue().splitlines()
    assert len(lines) == 119
    times = [int(line.split(", ")[0].split(": ")[1].split("/")[0]) * 0.2 for line in lines[:-1]]
    assert times[:3] == [0.0, 5.0, 10.0]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert min(gaps) == pytest.approx(5.0)
    assert max(gaps) == pytest.approx(times[-1] / 30, abs=0.3)  # 97 s, at 2910 s


def test_the_time_taken_counts_from_the_first_update() -> None:
    """A scan's progress is built with its source, before the release is read: that time is not
    the scan's."""
    clock = Clock()
    out = io.StringIO()
    p = StepProgress(out, label="scanning M.RRF", unit="bytes", clock=clock)
    clock.now = 30.0
    p(0, 1_000)
    clock.now = 32.0
    p(1_000, 1_000)
    assert out.getvalue().splitlines()[-1] == (
        "scanning M.RRF: 100% (1.0 kB of 1.0 kB), done in 2 s"
    )


def test_a_fetch_counts_its_time_from_when_it_began() -> None:
    """Issue 17 item 2: a fetch whose release probe waited 8.8 s for its turn, then fetched in
    a second, took 10 s, not 1 (the plain line and the bar alike)."""
    clock = Clock()
    out = io.StringIO()
    p = StepProgress(out, label=f"UMLS {REL}", unit="concepts", total=3, clock=clock, started=0.0)
    clock.now = 8.8  # the probe held
    p.update(0, hits=0, requests=1)
    clock.now = 9.8
    p.update(3, hits=0, requests=4, final=True)
    assert out.getvalue().splitlines()[-1] == (
        "UMLS 2099AA: 3/3 concepts, 0 cache hits, 4 requests, done in 10 s"
    )
    bar = io.StringIO()
    clock.now = 0.0
    console = Console(file=bar, force_terminal=True, width=160)
    p = StepProgress(bar, label="UMLS 2099AA", unit="concepts", total=3, clock=clock,
                     console=console, started=0.0)  # fmt: skip
    clock.now = 8.8
    p.update(0, hits=0, requests=1)
    clock.now = 9.8
    p.update(3, hits=0, requests=4, final=True)
    assert "0:00:09" in ANSI.sub("", bar.getvalue())  # rich's time taken, 9.8 s


def test_a_step_done_at_its_first_update_shows_its_time_taken_on_the_bar() -> None:
    """A rerun the cache answers whole: its one update is the final one, and the bar shows the
    time taken (rich's, from the fetch's start), never the "-:--:--" of a time left unknown."""
    clock = Clock()
    bar = io.StringIO()
    console = Console(file=bar, force_terminal=True, width=160, color_system=None)
    p = StepProgress(bar, label="UMLS 2099AA", unit="concepts", total=3, clock=clock,
                     console=console, started=0.0)  # fmt: skip
    clock.now = 9.8  # the probe held
    p.update(3, hits=4, requests=0, final=True)
    assert ANSI.sub("", bar.getvalue()).split("\r")[-1].split() == [
        "UMLS", "2099AA", "━" * 24, "3/3", "concepts", "0:00:09", "4", "cache", "hits,",
        "0", "requests",
    ]  # fmt: skip


def test_a_scan_of_a_pipe_learns_its_size_at_the_end() -> None:
    out = io.StringIO()
    StepProgress(out, label="scanning -", unit="bytes", clock=lambda: 0.0)(4_000, 4_000)
    assert out.getvalue() == "scanning -: 100% (4.0 kB of 4.0 kB), done in 0 s\n"


def test_the_bar_on_a_terminal_holds_counts_rate_time_left_hits_and_retries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    clock = Clock()
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=120, color_system="standard")
    p = StepProgress(out, label=f"UMLS {REL}", unit="concepts", total=10, console=console,
                     clock=clock)  # fmt: skip
    p.update(2, hits=3, requests=0)
    for done in range(3, 8):
        clock.now += 1.0
        p.update(done, hits=3, requests=done - 2, retries=1)
    frames = [ANSI.sub("", f) for f in out.getvalue().split("\r")]
    assert frames[-1].split() == [
        "UMLS", "2099AA", "━━━━━━━━━━━━━━━━╸━━━━━━━", "7/10", "concepts", "1.0/s",
        "0:00:03", "3", "cache", "hits,", "5", "requests", "(1", "retried)",
    ]  # fmt: skip
    assert "\x1b[31m1.0/s" in out.getvalue()  # coloured on a terminal
    assert "\x1b[?25l" in out.getvalue()  # the cursor hidden while the bar is drawn
    # redrawn by the step itself: no thread of rich's (a Ctrl-C leaves none; the scan may fork)
    assert threading.active_count() == 1
    p.close()
    assert out.getvalue().endswith("\n\x1b[?25h")  # the line ended, the cursor shown again
    end = len(out.getvalue())
    p.close()
    p.update(10, hits=3, requests=9, final=True)
    assert len(out.getvalue()) == end  # closed: nothing more


def test_no_color_takes_the_colours_off_the_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=120, color_system="standard")
    p = StepProgress(out, label="scanning M.RRF", unit="bytes", console=console,
                     clock=lambda: 0.0)  # fmt: skip
    p(500, 1_000)
    p(1_000, 1_000)
    codes = re.findall(r"\x1b\[([0-9;]*)m", out.getvalue())
    assert not [c for c in codes if re.search(r"(^|;)(3[0-9]|9[0-7]|4[0-9])(;|$)", c)], codes
    assert ANSI.sub("", out.getvalue()).split("\r")[-1].split() == [
        "scanning", "M.RRF", "━" * 24, "1.0/1.0", "kB", "0:00:00"
    ]  # fmt: skip


def test_never_an_escape_sequence_when_stderr_is_not_a_terminal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")  # rich would draw on anything; the stream decides
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    out = io.StringIO()
    p = StepProgress(out, label=f"UMLS {REL}", unit="concepts", total=2, clock=lambda: 0.0)
    p.update(1, hits=0, requests=1)
    p.update(2, hits=0, requests=2, final=True)
    assert "\x1b" not in out.getvalue()
    assert out.getvalue() == (
        "UMLS 2099AA: 1/2 concepts, 0 cache hits, 1 request\n"
        "UMLS 2099AA: 2/2 concepts, 0 cache hits, 2 requests, done in 0 s\n"
    )


def test_a_terminal_stream_gets_the_bar() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Tty()
    p = StepProgress(out, label=f"UMLS {REL}", unit="concepts", total=2, clock=lambda: 0.0)
    assert p.is_tty
    p.update(2, hits=2, requests=1, final=True)
    assert "2/2 concepts" in ANSI.sub("", out.getvalue())
    assert "done in" not in out.getvalue()  # the bar, not the plain lines


def test_quiet_shows_nothing() -> None:
    p = StepProgress(None, label=f"UMLS {REL}", unit="concepts", total=4)
    p.update(4, hits=0, requests=4, final=True)
    p.close()
    assert not p.is_tty and p.stream is None


def test_sizes_and_durations() -> None:
    assert [progress.format_size(n) for n in (0, 999, 1000, 2_500_000, 7_000_000_000)] == [
        "0 B", "999 B", "1.0 kB", "2.5 MB", "7.0 GB"
    ]  # fmt: skip

    def took(seconds: float) -> str:
        """How the last line of a fetch that took ``seconds`` says so."""
        clock, out = Clock(), io.StringIO()
        p = StepProgress(
            out, label=f"UMLS {REL}", unit="concepts", total=1, clock=clock, started=0.0
        )
        clock.now = seconds
        p.update(1, hits=0, requests=1, final=True)
        return out.getvalue().splitlines()[-1].rpartition(", done in ")[2]

    assert [took(s) for s in (0.4, 59.6, 61, 3_725)] == [
        "0 s", "1 min 00 s", "1 min 01 s", "1 h 02 min"
    ]  # fmt: skip


def test_a_log_line_is_printed_above_the_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    """A retry's warning during the fetch goes above the bar, which is redrawn below it; the
    handler gets its stream back when the bar ends."""
    monkeypatch.delenv("NO_COLOR", raising=False)
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(logging.Formatter("%(levelname)s: %(message)s"))
    monkeypatch.setattr(logging.getLogger(), "handlers", [handler])
    console = Console(file=out, force_terminal=True, width=100, color_system=None)
    p = StepProgress(out, label=f"UMLS {REL}", unit="concepts", total=4, console=console,
                     clock=lambda: 0.0, tty_interval=0.0)  # fmt: skip
    p.update(1, hits=0, requests=1)
    logging.getLogger("tempmedbench_synonyms.test").warning("retrying /content/x in 1 s")
    p.update(2, hits=0, requests=3, retries=1)
    p.close()
    assert handler.stream is out
    frames = [ANSI.sub("", f).strip() for f in re.split("[\r\n]", out.getvalue())]
    assert [f.split("━")[0].strip() for f in frames if f] == [
        "UMLS 2099AA", "WARNING: retrying /content/x in 1 s", "UMLS 2099AA", "UMLS 2099AA",
        "UMLS 2099AA",
    ]  # fmt: skip
    assert [f for f in frames if f][-1].endswith(
        "2/4 concepts  -:--:-- 0 cache hits, 3 requests (1 retried)"
    )


def test_a_message_of_the_command_is_printed_above_the_bar(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``umls search --file`` on a terminal: an input's "not found" line, said while the bar
    runs, goes above the bar, which is redrawn below it, not into the bar's line; once the bar
    ends, messages go to stderr again."""
    from tempmedbench_synonyms.cli._shared import echo_err

    monkeypatch.delenv("NO_COLOR", raising=False)
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100, color_system=None)
    p = StepProgress(out, label=f"UMLS {REL}", unit="inputs", total=3, console=console,
                     clock=lambda: 0.0, tty_interval=0.0)  # fmt: skip
    p.update(1, hits=0, requests=1)
    echo_err("walk term 1: UMLS 2099AA has no results")
    p.update(2, hits=0, requests=2)
    p.close()
    echo_err("after the bar")
    frames = [ANSI.sub("", f).strip() for f in re.split("[\r\n]", out.getvalue())]
    assert [f.split("━")[0].strip() for f in frames if f] == [
        "UMLS 2099AA", "walk term 1: UMLS 2099AA has no results", "UMLS 2099AA", "UMLS 2099AA",
        "UMLS 2099AA",
    ]  # fmt: skip
    assert capsys.readouterr().err == "after the bar\n"


def test_an_index_build_counts_its_rows_with_thousands_separators() -> None:
    out = io.StringIO()
    p = StepProgress(out, label="indexing MRCONSO", unit="bytes", clock=lambda: 0.0)
    p.update(4_000, total=4_000, rows=1_428_482, final=True)
    assert "1,428,482 rows" in out.getvalue()
    out = io.StringIO()
    StepProgress(out, label="indexing MRSAB", unit="bytes", clock=lambda: 0.0).update(
        10, total=10, rows=1, final=True
    )
    assert ", 1 row," in out.getvalue()
