from __future__ import annotations

import gzip
import itertools
import multiprocessing
import random
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tempmedbench_synonyms import mrconso
from tempmedbench_synonyms.atoms import Atom, AtomQuery
from tempmedbench_synonyms.errors import BadInputError
from tempmedbench_synonyms.mrconso import MrconsoSource, split_row
from tempmedbench_synonyms.testing import mrconso_row


def row(cui: str, aui: str, sab: str, tty: str, code: str, name: str, *, lat: str = "ENG",
        suppress: str = "N", sdui: str = "") -> str:  # fmt: skip
    """A line without its end (the tests choose it), LUI L1 and SUI S1 on every row."""
    return mrconso_row(cui, aui, sab, tty, code, name, lat=lat, suppress=suppress, lui="L1",
                       sui="S1", sdui=sdui, cvf="256", end="")  # fmt: skip


def test_split_row() -> None:
    line = row("C0000001", "A1", "MTH", "PT", "X", "a|b".replace("|", "/"))
    assert split_row(line + "\r\n", path="M", line_no=3) == [
        "C0000001", "ENG", "P", "L1", "PF", "S1", "Y", "A1", "", "X", "", "MTH", "PT", "X",
        "a/b", "0", "N", "256",
    ]  # fmt: skip
    with pytest.raises(BadInputError) as info:
        split_row("C1|ENG|x", path="M", line_no=3)
    assert str(info.value) == (
        "M, line 3: an MRCONSO.RRF row has 18 fields, each followed by '|'; this line has 3 "
        "and no trailing |"
    )
    with pytest.raises(BadInputError, match=r"this line has 17$"):
        split_row("|" * 17, path="M", line_no=1)


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
    assert result.atoms[queries[1]] == (
        Atom("A9000601", "zorbatrex 50 MG Oral Tablet", "SCD", "RXNORM", "ENG", "C9000060", True),
        Atom("A9000602", "Zorbatrex 50mg tablet", "SY", "RXNORM", "ENG", "C9000060", True),
        Atom("A9000603", "Zorbatrex tab", "PT", "RXNORM", "ENG", "C9000060", False),
        Atom("A9000605", "zorbatrex 50 mg tab", "SY", "RXNORM", "ENG", "C9000060", True),
    )
    assert result.atoms[queries[2]] == (
        Atom("A9000051", "Quillon [Mass/volume] in Serum", "LN", "LNC", "ENG", "C9000050", True),
    )
    assert result.atoms[queries[3]] is None


def _write(path: Path, lines: list[str], end: str = "\n") -> Path:
    path.write_bytes("".join(x + end for x in lines).encode("utf-8"))
    return path


ROWS = [
    row("C0000001", "A1", "SNOMEDCT_US", "PT", "100", "Alpha é"),
    row("C0000001", "A2", "SNOMEDCT_US", "SY", "100", "Alpha 𝟐", suppress="O"),
    # the SAB token in SDUI of a row of another source: must not count as SNOMEDCT_US
    row("C0000002", "A3", "MTH", "PT", "100", "Decoy", sdui="SNOMEDCT_US"),
    # the token twice in one row of the right source: kept once
    row("C0000003", "A4", "SNOMEDCT_US", "PT", "300", "Twice", sdui="SNOMEDCT_US"),
    row("C0000004", "A5", "RXNORM", "SCD", "7", "Rx"),
    row("C0000004", "A6", "RXNORM", "SY", "8", "Rx two", lat="SPA"),
    row("C0000005", "A7", "LNC", "LN", "1-1", "Lab"),
]
QUERIES = [
    AtomQuery("source", "SNOMEDCT_US", "100"),
    AtomQuery("source", "SNOMEDCT_US", "300"),
    AtomQuery("cui", "RXNORM", "C0000004"),
    AtomQuery("aui", "LNC", "A7"),
]


def _answers(path: Path) -> dict[AtomQuery, list[str] | None]:
    got = MrconsoSource(path).fetch("R", "C0000001", QUERIES).atoms
    return {q: (None if v is None else [a.aui for a in v]) for q, v in got.items()}


EXPECTED = {
    QUERIES[0]: ["A1", "A2"],
    QUERIES[1]: ["A4"],
    QUERIES[2]: ["A5", "A6"],
    QUERIES[3]: ["A7"],
}


@pytest.mark.parametrize("end", ["\n", "\r\n"])
def test_exact_rows_whatever_the_line_end(tmp_path: Path, end: str) -> None:
    assert _answers(_write(tmp_path / "M.RRF", ROWS, end)) == EXPECTED


def test_last_line_without_newline_is_bad_input(tmp_path: Path) -> None:
    """MRCONSO.RRF ends with a line end (every row does); a file that does not was cut short: it
    is refused rather than read (finding 6; it used to be accepted)."""
    path = tmp_path / "M.RRF"
    path.write_text("\n".join(ROWS), encoding="utf-8")
    with pytest.raises(BadInputError) as caught:
        _answers(path)
    assert str(caught.value) == (
        f"{path}: ends mid-row: is the last part missing or the file truncated?"
    )


@pytest.mark.parametrize("workers", [1, 3])
def test_a_file_cut_mid_row_is_bad_input_in_every_worker_range(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    """``head -c``: the last range ends mid-row; the error crosses the process boundary."""
    monkeypatch.setattr(mrconso, "PARALLEL_MIN_SIZE", 0)
    path = tmp_path / "M.RRF"
    path.write_bytes("".join(r + "\n" for r in ROWS * 20).encode()[:-7])
    with pytest.raises(BadInputError) as caught:
        MrconsoSource(path, workers=workers).fetch("R", "C", QUERIES)
    assert str(caught.value) == (
        f"{path}: ends mid-row: is the last part missing or the file truncated?"
    )


@pytest.mark.parametrize("block", [1, 7, 64, 150, 151, 1000])
def test_block_boundaries_change_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    monkeypatch.setattr(mrconso, "BLOCK_SIZE", block)
    assert _answers(_write(tmp_path / "M.RRF", ROWS)) == EXPECTED


def test_names_keep_their_non_ascii_characters(tmp_path: Path) -> None:
    got = MrconsoSource(_write(tmp_path / "M.RRF", ROWS)).fetch("R", "C", QUERIES[:1]).atoms
    assert [a.name for a in got[QUERIES[0]] or ()] == ["Alpha é", "Alpha 𝟐"]
    assert [a.usable for a in got[QUERIES[0]] or ()] == [True, False]


def test_a_bad_needed_row_names_its_line(tmp_path: Path) -> None:
    rows = [*ROWS, "C0000009|ENG|P|L1|PF|S1|Y|A9||100||SNOMEDCT_US|PT|100|Short|0|N|"]
    path = _write(tmp_path / "M.RRF", rows)
    with pytest.raises(BadInputError) as info:
        MrconsoSource(path).fetch("R", "C", QUERIES)
    assert str(info.value) == (
        f"{path}, line 8: an MRCONSO.RRF row has 18 fields, each followed by '|'; this line has 17"
    )


def test_bad_rows_that_are_not_needed_are_not_read(tmp_path: Path) -> None:
    rows = [*ROWS, "garbage|MSH|", "C0000009|ENG|P|L1|PF|S1|Y|A9||5||SNOMEDCT_US|PT|5|X|0|N|"]
    assert _answers(_write(tmp_path / "M.RRF", rows)) == EXPECTED


def test_invalid_utf8_in_a_needed_row(tmp_path: Path) -> None:
    # (on one of the first rows, the sniff refuses the whole file: test_umls_files)
    path = tmp_path / "M.RRF"
    path.write_bytes("".join(r + "\n" for r in ROWS[4:]).encode() * 2 +
                     row("C0000001", "A1", "SNOMEDCT_US", "PT", "100", "x").encode()
                     .replace(b"|x|", b"|\xff|") + b"\n")  # fmt: skip
    with pytest.raises(BadInputError, match=r"line 7: not valid UTF-8"):
        MrconsoSource(path).fetch("R", "C", QUERIES)


def test_a_source_missing_from_the_file_is_warned(tmp_path: Path) -> None:
    path = _write(tmp_path / "M.RRF", ROWS[:2])
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
    monkeypatch.setattr(mrconso, "BLOCK_SIZE", 400)
    path = _write(tmp_path / "M.RRF", ROWS)
    size = path.stat().st_size
    calls: list[tuple[int, int]] = []
    MrconsoSource(path, progress=lambda d, t: calls.append((d, t))).fetch("R", "C", QUERIES)
    assert calls[0] == (0, size) and calls[-1] == (size, size)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)
    assert len(calls) >= 4


def test_current_and_missing_files_are_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match="--umls-release current needs the UMLS REST API"):
        MrconsoSource(tmp_path / "M.RRF").fetch("current", "C", QUERIES)
    with pytest.raises(BadInputError) as info:
        MrconsoSource(tmp_path / "M.RRF").fetch("R", "C", QUERIES)
    assert str(info.value) == f"{tmp_path / 'M.RRF'}: no such file or folder"
    with pytest.raises(BadInputError) as info:
        MrconsoSource(tmp_path).fetch("R", "C", QUERIES)
    assert str(info.value) == (
        f"{tmp_path}: holds neither MRCONSO.RRF, MRCONSO.RRF.gz nor its parts "
        "MRCONSO.RRF.aa.gz, ... (nor does a META folder in it)"
    )


def test_byte_ranges_cut_anywhere_own_each_line_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mrconso, "BLOCK_SIZE", 16)
    path = _write(tmp_path / "M.RRF", ROWS)
    size = path.stat().st_size
    needs = mrconso._Needs.build(QUERIES)
    whole = mrconso._scan_range(str(path), 0, size, needs).rows
    assert [f[7] for _, f in whole] == ["A1", "A2", "A4", "A5", "A6", "A7"]
    for cut in range(size + 1):
        left = mrconso._scan_range(str(path), 0, cut, needs).rows
        right = mrconso._scan_range(str(path), cut, size, needs).rows
        assert left + right == whole, cut


def test_parallel_scan_gives_the_same_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mrconso, "PARALLEL_MIN_SIZE", 0)
    path = _write(tmp_path / "M.RRF", ROWS * 50)
    serial = MrconsoSource(path, workers=1).fetch("R", "C", QUERIES).atoms
    calls: list[tuple[int, int]] = []
    source = MrconsoSource(path, workers=3, progress=lambda d, t: calls.append((d, t)))
    assert mrconso._fork_is_safe()  # no other thread runs in this test
    assert source.fetch("R", "C", QUERIES).atoms == serial
    assert len(serial[QUERIES[0]] or ()) == 100
    size = path.stat().st_size
    # one progress message a range at its end (none sooner: the file is under 8 MB)
    assert calls[0] == (0, size) and calls[-1] == (size, size) and len(calls) == 12 + 2


def test_a_bom_is_skipped_by_every_worker_range(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mrconso, "PARALLEL_MIN_SIZE", 0)
    path = tmp_path / "M.RRF"
    path.write_bytes(b"\xef\xbb\xbf" + "".join(r + "\n" for r in ROWS * 20).encode())
    result = MrconsoSource(path, workers=3).fetch("R", "C", QUERIES)
    assert len(result.atoms[QUERIES[0]] or ()) == 40  # the first row, C0000001, included
    assert result.warnings == [
        f"{path} starts with a UTF-8 byte order mark (BOM), which MRCONSO.RRF does not have: "
        "it was removed before the first row was read"
    ]


def test_a_route_aui_row_is_found_beside_route_source_codes(tmp_path: Path) -> None:
    queries = [AtomQuery("source", "LNC", "9-9"), AtomQuery("aui", "LNC", "A7")]
    got = MrconsoSource(_write(tmp_path / "M.RRF", ROWS)).fetch("R", "C", queries).atoms
    assert got[queries[0]] is None
    assert [a.aui for a in got[queries[1]] or ()] == ["A7"]


@pytest.mark.parametrize("workers", [1, 2])
def test_a_line_longer_than_the_limit_is_bad_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    monkeypatch.setattr(mrconso, "MAX_LINE", 1000)
    monkeypatch.setattr(mrconso, "BLOCK_SIZE", 256)
    monkeypatch.setattr(mrconso, "PARALLEL_MIN_SIZE", 0)
    # from byte 476, in the second worker's range; the error crosses the process boundary
    path = _write(tmp_path / "M.RRF", [*ROWS, "C0000009|" + "x" * 5000])
    with pytest.raises(BadInputError) as info:
        MrconsoSource(path, workers=workers).fetch("R", "C", QUERIES)
    assert str(info.value) == (
        f"{path}: a line longer than 1,000 bytes (from byte 476): not an MRCONSO.RRF row"
    )


def test_the_sab_trie_is_the_one_written_by_hand() -> None:
    assert mrconso._trie([b"MTH", b"LNC-DE-DE", b"LNC"]) == rb"(?:LNC(?:\-DE\-DE)?|MTH)"
    assert mrconso._trie([b"HL7V3.0"]) == rb"HL7V3\.0"
    assert re.compile(mrconso._trie([])).search(b"LNC MTH |") is None


def test_the_sab_trie_matches_exactly_its_words() -> None:
    """Every set of words over a small alphabet (with regex specials): the trie fully matches a
    string if and only if it is one of the words, checked on every string of up to 4 letters."""
    alphabet = b"AB.-_"
    strings = [b""] + [bytes(t) for n in range(1, 5) for t in itertools.product(alphabet, repeat=n)]
    rng = random.Random(5)
    for _ in range(200):
        words = set(rng.sample(strings[1:], rng.randint(1, 12)))
        pattern = re.compile(mrconso._trie(sorted(words)))
        assert {s for s in strings if pattern.fullmatch(s)} == words


def test_a_damaged_row_does_not_hide_the_needed_row_after_it(tmp_path: Path) -> None:
    """A row cut after its SAB field runs on into the next line under the fast search (its
    fields are skipped up to '|', not up to a line end); the needed row there is still found,
    and the damaged row, not needed, is still not read."""
    cut = "|".join(row("C0000009", "A9", "SNOMEDCT_US", "PT", "5", "Cut").split("|")[:12]) + "|"
    assert cut == "C0000009|ENG|P|L1|PF|S1|Y|A9||5||SNOMEDCT_US|"
    assert _answers(_write(tmp_path / "M.RRF", [*ROWS[:6], cut, ROWS[6]])) == EXPECTED


@pytest.mark.parametrize("piece", [1, 7, 64, 150, 1000])
def test_a_stream_searched_in_pieces_gives_the_same_rows_and_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, piece: int
) -> None:
    monkeypatch.setattr(mrconso, "STREAM_PIECE", piece)
    path = tmp_path / "MRCONSO.RRF.gz"
    path.write_bytes(gzip.compress("".join(r + "\n" for r in ROWS).encode()))
    assert _answers(path) == EXPECTED
    bad = "C0000009|ENG|P|L1|PF|S1|Y|A9||100||SNOMEDCT_US|PT|100|Short|0|N|"
    path.write_bytes(gzip.compress("".join(r + "\n" for r in [*ROWS * 3, bad]).encode()))
    with pytest.raises(BadInputError) as info:
        _answers(path)
    assert str(info.value).startswith(f"{path}, line 22: an MRCONSO.RRF row has 18 fields")


@pytest.mark.parametrize("block", [16, 150, 1000])
def test_identical_rows_are_each_kept_and_a_bad_one_named_at_its_first_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    monkeypatch.setattr(mrconso, "BLOCK_SIZE", block)
    got = _answers(_write(tmp_path / "M.RRF", [*ROWS, ROWS[1], ROWS[0]]))
    assert got == {**EXPECTED, QUERIES[0]: ["A1", "A2", "A2", "A1"]}
    bad = "C0000009|ENG|P|L1|PF|S1|Y|A9||100||SNOMEDCT_US|PT|100|Short|0|N|"
    path = _write(tmp_path / "M.RRF", [*ROWS, ROWS[0], bad, ROWS[0], bad])
    with pytest.raises(BadInputError) as info:
        _answers(path)
    assert str(info.value).startswith(f"{path}, line 9: an MRCONSO.RRF row has 18 fields")


def _five() -> list[str]:
    return [row(f"C000000{i}", f"A{i}", "MTH", "PT", str(i), "x") for i in range(1, 6)]


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize(
    ("damaged", "query", "fields"),
    [
        # cut after TTY (13 fields), after SAB (12): found by CUI or AUI, and named
        ("C0000009|ENG|P|L1|PF|S1|Y|A9||7||RXNORM|PT|", AtomQuery("cui", "RXNORM", "C0000009"), 13),
        ("C0000009|ENG|P|L1|PF|S1|Y|A9||7||LNC|", AtomQuery("aui", "LNC", "A9"), 12),
    ],
)
def test_a_needed_row_cut_after_its_sab_is_named(
    tmp_path: Path, gz: bool, damaged: str, query: AtomQuery, fields: int
) -> None:
    rows = [*_five(), damaged, row("C0000008", "A8", "RXNORM", "PT", "7", "x")]
    data = "".join(r + "\n" for r in rows).encode()
    path = tmp_path / ("M.RRF.gz" if gz else "M.RRF")
    path.write_bytes(gzip.compress(data) if gz else data)
    with pytest.raises(BadInputError) as info:
        MrconsoSource(path).fetch("R", "C", [query])
    assert str(info.value) == (
        f"{path}, line 6: an MRCONSO.RRF row has 18 fields, each followed by '|'; this line "
        f"has {fields}"
    )


def test_a_damaged_row_that_answers_no_query_is_passed_over(tmp_path: Path) -> None:
    """Its SAB is named and its CODE is wanted, but by a query of another SAB: not needed."""
    damaged = "C0000007|ENG|P|L1|PF|S1|Y|A7||1||MTH|PT|1|x|0|N|256"  # 17 fields
    queries = [AtomQuery("source", "LNC", "1"), AtomQuery("cui", "MTH", "C0000001")]
    got = MrconsoSource(_write(tmp_path / "M.RRF", [*_five(), damaged])).fetch("R", "C", queries)
    assert got.atoms == {
        queries[0]: None,
        queries[1]: (Atom("A1", "x", "PT", "MTH", "ENG", "C0000001", True),),
    }


@pytest.mark.parametrize("filler", [b"\n", b"some text without a bar\n"])
def test_a_long_stretch_of_lines_without_a_bar_is_passed_in_linear_time(
    tmp_path: Path, filler: bytes
) -> None:
    """8 MB of blank lines (or of text lines) between rows: searched to the next '|' from each
    line, they took minutes (quadratic in the block); in a subprocess with a 20 s limit, so that
    a regression fails instead of hanging the suite (the scan itself takes about 0.1 s)."""
    path = tmp_path / "M.RRF"
    rows = [*_five(), row("C0000009", "A9", "LNC", "LN", "9-9", "y")]
    head, tail = "".join(r + "\n" for r in rows[:5]), rows[5] + "\n"
    path.write_bytes(head.encode() + filler * (8_000_000 // len(filler)) + tail.encode())
    code = (
        "import sys\n"
        "from tempmedbench_synonyms.atoms import AtomQuery\n"
        "from tempmedbench_synonyms.mrconso import MrconsoSource\n"
        "q = [AtomQuery('aui', 'LNC', 'A9'), AtomQuery('cui', 'MTH', 'C0000001')]\n"
        "got = MrconsoSource(sys.argv[1], workers=1).fetch('R', 'C', q).atoms\n"
        "print([a.aui for v in got.values() for a in v or ()])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=20
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "['A9', 'A1']\n", "")


def test_sabs_of_any_length_or_nesting_build_a_search(tmp_path: Path) -> None:
    """No recursion limit: 300 SABs each the one before plus a letter, and one of 500 letters,
    which no row can hold (the SAB column has at most 40 characters): it is a source the file
    lacks."""
    nested = [AtomQuery("cui", "A" * n, "C0000001") for n in range(1, 301)]
    trie = mrconso._trie([q.sab.encode() for q in nested])
    assert re.compile(trie).fullmatch(b"A" * 300) and not re.compile(trie).fullmatch(b"A" * 301)
    long = AtomQuery("cui", "B" * 500, "C0000001")
    got = MrconsoSource(_write(tmp_path / "M.RRF", _five())).fetch("R", "C", [*nested[:40], long])
    assert got.missing_sources == [q.sab for q in nested[:40]] + ["B" * 500]


def test_a_row_whose_first_field_is_longer_than_64_bytes_is_no_row(tmp_path: Path) -> None:
    """A CUI has 8 bytes; the search gives the first field 64 (it passes stretches of lines
    without '|' at once that way): a longer one is not read, even with a wanted SAB and CODE."""
    query = AtomQuery("source", "LNC", "9-9")
    for cui, expected in (("C" + "0" * 63, ["A9"]), ("C" + "0" * 64, None)):
        rows = [*_five(), row(cui, "A9", "LNC", "LN", "9-9", "y")]
        got = MrconsoSource(_write(tmp_path / "M.RRF", rows)).fetch("R", "C", [query]).atoms
        assert (None if got[query] is None else [a.aui for a in got[query] or ()]) == expected


def test_ctrl_c_before_a_worker_has_its_first_range_ends_it_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Ctrl-C between a worker's start and its first range: the worker, waiting for a range
    that never comes, was joined without being killed, and the run hung (seen on a busy
    machine). It is killed and reaped now; an alarm turns a hang back into a failure."""
    monkeypatch.setattr(mrconso, "PARALLEL_MIN_SIZE", 0)
    path = _write(tmp_path / "M.RRF", ROWS * 50)
    real = mrconso.get_context("fork")

    class Interrupted:
        def __init__(self, conn: object) -> None:
            self.conn = conn

        def send(self, obj: object) -> None:
            raise KeyboardInterrupt

        def close(self) -> None:
            self.conn.close()  # type: ignore[attr-defined]

    class Context:
        Process = real.Process

        def Pipe(self) -> tuple[object, object]:  # multiprocessing's name
            parent, child = real.Pipe()
            return Interrupted(parent), child

    def hang(signum: int, frame: object) -> None:
        raise AssertionError("the scan hung after Ctrl-C")

    monkeypatch.setattr(mrconso, "get_context", lambda method: Context())
    previous = signal.signal(signal.SIGALRM, hang)
    signal.alarm(20)
    try:
        with pytest.raises(KeyboardInterrupt):
            MrconsoSource(path, workers=2).fetch("R", "C", QUERIES)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert multiprocessing.active_children() == []
