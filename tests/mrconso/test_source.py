"""mrconso.source: one pass over the file answers every query as UTS would, in worker processes
or in this one, whatever the form of the file."""

from __future__ import annotations

import gzip
import logging
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from helpers.mrconso import EXPECTED, QUERIES, ROWS, answers, row, write
from tempmedbench_synonyms import runtime
from tempmedbench_synonyms.atoms import Atom, AtomQuery
from tempmedbench_synonyms.errors import BadInputError
from tempmedbench_synonyms.mrconso import scan, source
from tempmedbench_synonyms.mrconso.source import MrconsoSource


def test_fixture_answers_every_route_in_file_order(mrconso: Path) -> None:
    queries = [
        AtomQuery("source", "SNOMEDCT_US", "9990102002"),
        AtomQuery("cui", "RXNORM", "C9000060"),
        AtomQuery("aui", "LNC", "A9000051"),
        AtomQuery("source", "SNOMEDCT_US", "404"),
    ]
    result = MrconsoSource(mrconso).fetch("2099AA", "C9000001", queries)
    assert result.umls_release == "2099AA"
    assert (result.requests, result.cache_hits, result.warnings) == (0, 0, [])
    assert [a.aui for a in result.atoms[queries[0]] or ()] == ["A9000021", "A9000022", "A9000023"]
    # A9000603 is suppressible: UTS leaves it out of an atoms answer, and so does the file
    assert result.atoms[queries[1]] == (
        Atom("A9000601", "zorbatrex 50 MG Oral Tablet", "SCD", "RXNORM", "ENG", "C9000060", True),
        Atom("A9000602", "Zorbatrex 50mg tablet", "SY", "RXNORM", "ENG", "C9000060", True),
        Atom("A9000605", "zorbatrex 50 mg tab", "SY", "RXNORM", "ENG", "C9000060", True),
    )
    assert result.atoms[queries[2]] == (
        Atom("A9000051", "Quillon [Mass/volume] in Serum", "LN", "LNC", "ENG", "C9000050", True),
    )
    assert result.atoms[queries[3]] is None


@pytest.mark.parametrize("end", ["\n", "\r\n"])
def test_exact_rows_whatever_the_line_end(tmp_path: Path, end: str) -> None:
    assert answers(write(tmp_path / "M.RRF", ROWS, end)) == EXPECTED


@pytest.mark.parametrize("workers", [1, 3])
@pytest.mark.parametrize("cr", ["", "\r"])
def test_a_complete_last_row_without_its_line_feed_is_read_with_a_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int, cr: str
) -> None:
    """A complete row (18 fields, each followed by '|'; a CR tolerated) that lacks only its line
    feed is read, here and in the worker that scans the last range (issue 17, item 14: it was
    refused as "ends mid-row"); the note crosses the process boundary. The last row answers a
    query, so it is read, not skipped."""
    monkeypatch.setattr(source, "PARALLEL_MIN_SIZE", 0)
    path = tmp_path / "M.RRF"
    lines = ROWS[4:] * 20 + ROWS
    path.write_bytes((cr + "\n").join(lines).encode() + cr.encode())
    result = MrconsoSource(path, workers=workers).fetch("R", "C", QUERIES)
    assert {q: [a.aui for a in v or ()] for q, v in result.atoms.items()} == {
        **EXPECTED, QUERIES[2]: ["A5"] * 21, QUERIES[3]: ["A7"] * 21,
    }  # fmt: skip
    assert result.warnings == [
        f"{path} does not end with a line feed: its last row is complete (18 fields, each "
        "followed by '|') and was read"
    ]


@pytest.mark.parametrize("workers", [1, 3])
@pytest.mark.parametrize(
    "cut",
    [
        "C0000005|ENG|P|L1|PF|S1|Y|A7||1-1||LNC|LN|",  # right after a bar, 13 fields
        "C0000005|ENG|P|L1|PF|S1|Y|A7||1-1||LNC|LN|1-1|Lab|0|N|256",  # before the closing bar
        "C0000005|ENG|P|L1|PF|S1|Y|A7||1-1||LNC|LN|1-1|Lab|0|N|256|\r\r",  # two CRs: not a row
    ],
)
def test_a_last_row_cut_short_is_bad_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int, cut: str
) -> None:
    """Only a complete row is read without its line feed: a cut one is refused, whatever bar
    the cut follows, and nothing is answered from it."""
    monkeypatch.setattr(source, "PARALLEL_MIN_SIZE", 0)
    path = tmp_path / "M.RRF"
    path.write_bytes("".join(r + "\n" for r in ROWS * 20).encode() + cut.encode())
    with pytest.raises(BadInputError) as caught:
        MrconsoSource(path, workers=workers).fetch("R", "C", QUERIES)
    assert str(caught.value) == (
        f"{path}: ends mid-row: is the last part missing or the file truncated?"
    )


@pytest.mark.parametrize("workers", [1, 3])
def test_a_file_cut_mid_row_is_bad_input_in_every_worker_range(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    """``head -c``: the last range ends mid-row; the error crosses the process boundary."""
    monkeypatch.setattr(source, "PARALLEL_MIN_SIZE", 0)
    path = tmp_path / "M.RRF"
    path.write_bytes("".join(r + "\n" for r in ROWS * 20).encode()[:-7])
    with pytest.raises(BadInputError) as caught:
        MrconsoSource(path, workers=workers).fetch("R", "C", QUERIES)
    assert str(caught.value) == (
        f"{path}: ends mid-row: is the last part missing or the file truncated?"
    )


def test_names_keep_their_non_ascii_characters(tmp_path: Path) -> None:
    # route aui answers its atom whatever its flags: A2 is obsolete
    queries = [QUERIES[0], AtomQuery("aui", "SNOMEDCT_US", "A2")]
    got = MrconsoSource(write(tmp_path / "M.RRF", ROWS)).fetch("R", "C", queries).atoms
    assert [(a.name, a.usable) for q in queries for a in got[q] or ()] == [
        ("Alpha é", True),
        ("Alpha 𝟐", False),
    ]


def test_a_bad_needed_row_names_its_line(tmp_path: Path) -> None:
    rows = [*ROWS, "C0000009|ENG|P|L1|PF|S1|Y|A9||100||SNOMEDCT_US|PT|100|Short|0|N|"]
    path = write(tmp_path / "M.RRF", rows)
    with pytest.raises(BadInputError) as info:
        MrconsoSource(path).fetch("R", "C", QUERIES)
    assert str(info.value) == (
        f"{path}, line 8: an MRCONSO.RRF row has 18 fields, each followed by '|'; this line has 17"
    )


def test_bad_rows_that_are_not_needed_are_not_read(tmp_path: Path) -> None:
    rows = [*ROWS, "garbage|MSH|", "C0000009|ENG|P|L1|PF|S1|Y|A9||5||SNOMEDCT_US|PT|5|X|0|N|"]
    assert answers(write(tmp_path / "M.RRF", rows)) == EXPECTED


def test_invalid_utf8_in_a_needed_row(tmp_path: Path) -> None:
    # (on one of the first rows, the sniff refuses the whole file: test_umls_files)
    path = tmp_path / "M.RRF"
    path.write_bytes("".join(r + "\n" for r in ROWS[4:]).encode() * 2 +
                     row("C0000001", "A1", "SNOMEDCT_US", "PT", "100", "x").encode()
                     .replace(b"|x|", b"|\xff|") + b"\n")  # fmt: skip
    with pytest.raises(BadInputError, match=r"line 7: not valid UTF-8"):
        MrconsoSource(path).fetch("R", "C", QUERIES)


def test_a_source_missing_from_the_file_is_warned(tmp_path: Path) -> None:
    path = write(tmp_path / "M.RRF", ROWS[:2])
    result = MrconsoSource(path).fetch("R", "C", QUERIES)
    assert result.warnings == [
        f"{path} has no row of source 'LNC': is it the MRCONSO.RRF of a release that includes "
        "that source?",
        f"{path} has no row of source 'RXNORM': is it the MRCONSO.RRF of a release that "
        "includes that source?",
    ]
    assert result.atoms[QUERIES[2]] is None


def test_progress_reports_bytes_up_to_the_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scan, "BLOCK_SIZE", 400)
    path = write(tmp_path / "M.RRF", ROWS)
    size = path.stat().st_size
    calls: list[tuple[int, int]] = []
    MrconsoSource(path, progress=lambda d, t: calls.append((d, t))).fetch("R", "C", QUERIES)
    assert calls[0] == (0, size) and calls[-1] == (size, size)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)
    assert len(calls) >= 4


def test_missing_files_are_bad_input(tmp_path: Path) -> None:
    # (current, which the file's names must say, is in tests/test_atom_sources.py)
    with pytest.raises(BadInputError) as info:
        MrconsoSource(tmp_path / "M.RRF").fetch("current", "C", QUERIES)
    assert str(info.value) == f"{tmp_path / 'M.RRF'}: no such file or folder"
    with pytest.raises(BadInputError) as info:
        MrconsoSource(tmp_path / "M.RRF").fetch("R", "C", QUERIES)
    assert str(info.value) == f"{tmp_path / 'M.RRF'}: no such file or folder"
    with pytest.raises(BadInputError) as info:
        MrconsoSource(tmp_path).fetch("R", "C", QUERIES)
    assert str(info.value) == (
        f"{tmp_path}: holds neither MRCONSO.RRF, MRCONSO.RRF.gz nor its parts "
        "MRCONSO.RRF.aa.gz, ... (nor does a META folder in it)"
    )


def test_parallel_scan_gives_the_same_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(source, "PARALLEL_MIN_SIZE", 0)
    path = write(tmp_path / "M.RRF", ROWS * 50)
    serial = MrconsoSource(path, workers=1).fetch("R", "C", QUERIES).atoms
    calls: list[tuple[int, int]] = []
    parallel = MrconsoSource(path, workers=3, progress=lambda d, t: calls.append((d, t)))
    with caplog.at_level(logging.INFO, logger="tempmedbench_synonyms"):
        assert parallel.fetch("R", "C", QUERIES).atoms == serial
    assert f"scanning {path} with 3 worker processes" in caplog.messages
    assert len(serial[QUERIES[0]] or ()) == 50
    assert runtime.live_workers() == 0
    size = path.stat().st_size
    # one progress message a range at its end (none sooner: the file is under 8 MB)
    assert calls[0] == (0, size) and calls[-1] == (size, size) and len(calls) == 12 + 2


def test_a_bom_is_skipped_by_every_worker_range(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(source, "PARALLEL_MIN_SIZE", 0)
    path = tmp_path / "M.RRF"
    path.write_bytes(b"\xef\xbb\xbf" + "".join(r + "\n" for r in ROWS * 20).encode())
    result = MrconsoSource(path, workers=3).fetch("R", "C", QUERIES)
    assert len(result.atoms[QUERIES[0]] or ()) == 20  # the first row, C0000001, included
    assert result.warnings == [
        f"{path} starts with a UTF-8 byte order mark (BOM), which MRCONSO.RRF does not have: "
        "it was removed before the first row was read"
    ]


def test_a_route_aui_row_is_found_beside_route_source_codes(tmp_path: Path) -> None:
    queries = [AtomQuery("source", "LNC", "9-9"), AtomQuery("aui", "LNC", "A7")]
    got = MrconsoSource(write(tmp_path / "M.RRF", ROWS)).fetch("R", "C", queries).atoms
    assert got[queries[0]] is None
    assert [a.aui for a in got[queries[1]] or ()] == ["A7"]


@pytest.mark.parametrize("workers", [1, 2])
def test_a_line_longer_than_the_limit_is_bad_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    monkeypatch.setattr(scan, "MAX_LINE", 1000)
    monkeypatch.setattr(scan, "BLOCK_SIZE", 256)
    monkeypatch.setattr(source, "PARALLEL_MIN_SIZE", 0)
    # from byte 476, in the second worker's range; the error crosses the process boundary
    path = write(tmp_path / "M.RRF", [*ROWS, "C0000009|" + "x" * 5000])
    with pytest.raises(BadInputError) as info:
        MrconsoSource(path, workers=workers).fetch("R", "C", QUERIES)
    assert str(info.value) == (
        f"{path}: a line longer than 1,000 bytes (from byte 476): not an MRCONSO.RRF row"
    )


@pytest.mark.parametrize("workers", [1, 2])
def test_a_last_line_longer_than_the_limit_without_a_line_end_is_bad_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    """A line over the limit at the end of the file, with no line end: too long, not judged as
    a last row (nor read whole)."""
    monkeypatch.setattr(scan, "MAX_LINE", 1000)
    monkeypatch.setattr(scan, "BLOCK_SIZE", 256)
    monkeypatch.setattr(source, "PARALLEL_MIN_SIZE", 0)
    path = tmp_path / "M.RRF"
    path.write_bytes("".join(r + "\n" for r in ROWS).encode() + b"C0000009|" + b"x|" * 500)
    with pytest.raises(BadInputError) as info:
        MrconsoSource(path, workers=workers).fetch("R", "C", QUERIES)
    assert str(info.value) == (
        f"{path}: a line longer than 1,000 bytes (from byte 476): not an MRCONSO.RRF row"
    )


@pytest.mark.parametrize("piece", [1, 7, 64, 150, 1000])
def test_a_stream_searched_in_pieces_gives_the_same_rows_and_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, piece: int
) -> None:
    monkeypatch.setattr(source, "STREAM_PIECE", piece)
    path = tmp_path / "MRCONSO.RRF.gz"
    path.write_bytes(gzip.compress("".join(r + "\n" for r in ROWS).encode()))
    assert answers(path) == EXPECTED
    bad = "C0000009|ENG|P|L1|PF|S1|Y|A9||100||SNOMEDCT_US|PT|100|Short|0|N|"
    path.write_bytes(gzip.compress("".join(r + "\n" for r in [*ROWS * 3, bad]).encode()))
    with pytest.raises(BadInputError) as info:
        answers(path)
    assert str(info.value).startswith(f"{path}, line 22: an MRCONSO.RRF row has 18 fields")


def test_ctrl_c_as_a_worker_starts_leaves_no_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Ctrl-C that comes as a worker process starts (a real SIGINT, delivered as the start
    returns): the worker is stopped with the others, not left running outside the group (it
    was, and a CLI run ended with it still alive)."""
    monkeypatch.setattr(source, "PARALLEL_MIN_SIZE", 0)
    path = write(tmp_path / "M.RRF", ROWS * 50)
    started: list[runtime.Worker] = []
    real = runtime.Worker

    def spawn(*args: Any) -> runtime.Worker:
        worker = real(*args)
        started.append(worker)
        os.kill(os.getpid(), signal.SIGINT)  # as a Ctrl-C does, the moment the start returns
        return worker

    monkeypatch.setattr(runtime, "Worker", spawn)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            MrconsoSource(path, workers=2).fetch("R", "C", QUERIES)
        left = runtime.live_workers()
    finally:
        signal.signal(signal.SIGINT, previous)
        for worker in started:
            worker.stop(kill=True)  # (only what a failure left)
    assert len(started) == 1
    assert left == 0
    assert started[0].process.returncode == -signal.SIGKILL


def test_ctrl_c_before_a_worker_has_its_first_range_ends_it_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Ctrl-C between a worker's start and its first range: a worker waiting for a range that
    never comes must be killed and reaped, not waited for (a hang seen on a busy machine with
    forked workers). An alarm turns a hang back into a failure."""
    monkeypatch.setattr(source, "PARALLEL_MIN_SIZE", 0)
    path = write(tmp_path / "M.RRF", ROWS * 50)
    started: list[runtime.Worker] = []
    real = runtime.Worker

    def spawn(*args: Any) -> runtime.Worker:
        worker = real(*args)
        started.append(worker)

        def interrupted(message: object) -> None:
            raise KeyboardInterrupt

        worker.send = interrupted  # type: ignore[method-assign]
        return worker

    def hang(signum: int, frame: object) -> None:
        raise AssertionError("the scan hung after Ctrl-C")

    monkeypatch.setattr(runtime, "Worker", spawn)
    previous = signal.signal(signal.SIGALRM, hang)
    signal.alarm(20)
    try:
        with pytest.raises(KeyboardInterrupt):
            MrconsoSource(path, workers=2).fetch("R", "C", QUERIES)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert len(started) == 1  # interrupted before a second could start
    assert started[0].process.returncode == -signal.SIGKILL
    assert runtime.live_workers() == 0
