from __future__ import annotations

import io

import pytest

from tempmedbench_synonyms import progress
from tempmedbench_synonyms.progress import ByteProgress, FetchProgress

REL = "2099AA"


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_plain_lines_once_per_tenth_when_not_a_terminal() -> None:
    out = io.StringIO()
    p = ByteProgress("scanning M.RRF", stream=out)
    for done in (0, 50, 999, 1000, 1500, 9999, 10_000, 10_000):
        p(done, 10_000)
    assert out.getvalue() == (
        "scanning M.RRF: 0% (0 B of 10.0 kB)\n"
        "scanning M.RRF: 10% (1.0 kB of 10.0 kB)\n"
        "scanning M.RRF: 99% (10.0 kB of 10.0 kB)\n"
        "scanning M.RRF: 100% (10.0 kB of 10.0 kB)\n"
    )


def test_a_terminal_line_is_redrawn_and_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = iter([0.0, 0.0, 0.1, 0.5, 2.0, 2.0])
    monkeypatch.setattr(progress.time, "monotonic", lambda: next(clock))
    out = Tty()
    p = ByteProgress("scan", stream=out, interval=0.25)
    p(0, 3_000_000_000)  # t=0.0: first draw
    p(1, 3_000_000_000)  # t=0.1: too soon, skipped
    p(1_500_000_000, 3_000_000_000)  # t=0.5
    p(3_000_000_000, 3_000_000_000)  # t=2.0: the end, with the time taken
    p(3_000_000_000, 3_000_000_000)  # after the end: nothing
    assert out.getvalue() == (
        "\rscan:   0.0% (0 B of 3.0 GB)"
        "\rscan:  50.0% (1.5 GB of 3.0 GB)"
        "\rscan: 100.0% (3.0 GB of 3.0 GB) in 2.0 s\n"
    )


def test_sizes() -> None:
    assert [progress.format_size(n) for n in (0, 999, 1000, 2_500_000, 7_000_000_000)] == [
        "0 B", "999 B", "1.0 kB", "2.5 MB", "7.0 GB"
    ]  # fmt: skip


# -- FetchProgress: the concepts fetched from UMLS ---------------------------------------------


def test_progress_lines_plain_when_not_a_terminal() -> None:
    now = [0.0]
    out = io.StringIO()
    p = FetchProgress(out, release=REL, total=10, clock=lambda: now[0], plain_interval=5.0)
    p.update(2, 2, 0, 0, 0)
    now[0] = 1.0
    p.update(3, 2, 1, 0, 1)  # within 5 s of the last line: not printed
    now[0] = 6.0
    p.update(6, 2, 6, 1, 4)
    now[0] = 10.0
    p.update(10, 2, 10, 1, 8, final=True)
    assert out.getvalue().splitlines() == [
        "UMLS 2099AA: 2/10 concepts, 2 from cache, 0 requests",
        (
            "UMLS 2099AA: 6/10 concepts, 2 from cache, 6 requests (1 retried), 1.0 req/s, "
            "about 6 s left"
        ),
        (
            "UMLS 2099AA: 10/10 concepts, 2 from cache, 10 requests (1 retried), 1.0 req/s, "
            "done in 10 s"
        ),
    ]


def test_progress_redraws_one_line_on_a_terminal() -> None:
    now = [0.0]
    out = io.StringIO()
    p = FetchProgress(out, release=REL, total=4, clock=lambda: now[0], is_tty=True)
    p.update(0, 0, 0, 0, 0)
    now[0] = 2.0
    p.update(4, 0, 4, 0, 4, final=True)
    text = out.getvalue()
    assert text.startswith("\rUMLS 2099AA: 0/4 concepts, 0 from cache, 0 requests\r")
    assert text.endswith("\rUMLS 2099AA: 4/4 concepts, 0 from cache, 4 requests, 2.0 req/s, "
                         "done in 2 s\n")  # fmt: skip
    assert text.count("\r") == 2


def test_an_interrupted_progress_line_is_ended_on_a_terminal() -> None:
    out = io.StringIO()
    p = FetchProgress(out, release=REL, total=4, clock=lambda: 0.0, is_tty=True)
    p.update(1, 0, 1, 0, 1)
    p.close()
    assert out.getvalue() == "\rUMLS 2099AA: 1/4 concepts, 0 from cache, 1 request\n"


def test_quiet_progress_prints_nothing() -> None:
    p = FetchProgress(None, release=REL, total=4)
    p.update(4, 0, 4, 0, 4, final=True)
    assert p.lines == []
