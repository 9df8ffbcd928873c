from __future__ import annotations

import io

import pytest

from tempmedbench_synonyms import progress
from tempmedbench_synonyms.progress import ByteProgress


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
    assert [progress._size(n) for n in (0, 999, 1000, 2_500_000, 7_000_000_000)] == [
        "0 B", "999 B", "1.0 kB", "2.5 MB", "7.0 GB"
    ]  # fmt: skip
