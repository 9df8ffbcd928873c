"""mrconso.scan: the block scan finds every row that can answer a query, and reads no other."""

from __future__ import annotations

import gzip
import itertools
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.mrconso import EXPECTED, QUERIES, ROWS, answers, five, row, write
from tempmedbench_synonyms.atoms import Atom, AtomQuery
from tempmedbench_synonyms.errors import BadInputError
from tempmedbench_synonyms.mrconso import scan
from tempmedbench_synonyms.mrconso.source import MrconsoSource


def test_byte_ranges_cut_anywhere_own_each_line_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scan, "BLOCK_SIZE", 16)
    path = write(tmp_path / "M.RRF", ROWS)
    size = path.stat().st_size
    needs = scan.Needs.build(QUERIES)
    whole = scan.scan_range(str(path), 0, size, needs).rows
    assert [f[7] for _, f in whole] == ["A1", "A2", "A4", "A5", "A6", "A7"]
    for cut in range(size + 1):
        left = scan.scan_range(str(path), 0, cut, needs).rows
        right = scan.scan_range(str(path), cut, size, needs).rows
        assert left + right == whole, cut


def test_the_sab_trie_is_the_one_written_by_hand() -> None:
    assert scan.sab_trie([b"MTH", b"LNC-DE-DE", b"LNC"]) == rb"(?:LNC(?:\-DE\-DE)?|MTH)"
    assert scan.sab_trie([b"HL7V3.0"]) == rb"HL7V3\.0"
    assert re.compile(scan.sab_trie([])).search(b"LNC MTH |") is None


def test_the_sab_trie_matches_exactly_its_words() -> None:
    """Every set of words over a small alphabet (with regex specials): the trie fully matches a
    string if and only if it is one of the words, checked on every string of up to 4 letters."""
    alphabet = b"AB.-_"
    strings = [b""] + [bytes(t) for n in range(1, 5) for t in itertools.product(alphabet, repeat=n)]
    rng = random.Random(5)
    for _ in range(200):
        words = set(rng.sample(strings[1:], rng.randint(1, 12)))
        pattern = re.compile(scan.sab_trie(sorted(words)))
        assert {s for s in strings if pattern.fullmatch(s)} == words


def test_a_damaged_row_does_not_hide_the_needed_row_after_it(tmp_path: Path) -> None:
    """A row cut after its SAB field runs on into the next line under the fast search (its
    fields are skipped up to '|', not up to a line end); the needed row there is still found,
    and the damaged row, not needed, is still not read."""
    cut = "|".join(row("C0000009", "A9", "SNOMEDCT_US", "PT", "5", "Cut").split("|")[:12]) + "|"
    assert cut == "C0000009|ENG|P|L1|PF|S1|Y|A9||5||SNOMEDCT_US|"
    assert answers(write(tmp_path / "M.RRF", [*ROWS[:6], cut, ROWS[6]])) == EXPECTED


@pytest.mark.parametrize("block", [16, 150, 1000])
def test_identical_rows_are_each_kept_and_a_bad_one_named_at_its_first_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    monkeypatch.setattr(scan, "BLOCK_SIZE", block)
    got = answers(write(tmp_path / "M.RRF", [*ROWS, ROWS[1], ROWS[0]]))
    assert got == {**EXPECTED, QUERIES[0]: ["A1", "A1"]}  # (A2 is obsolete)
    bad = "C0000009|ENG|P|L1|PF|S1|Y|A9||100||SNOMEDCT_US|PT|100|Short|0|N|"
    path = write(tmp_path / "M.RRF", [*ROWS, ROWS[0], bad, ROWS[0], bad])
    with pytest.raises(BadInputError) as info:
        answers(path)
    assert str(info.value).startswith(f"{path}, line 9: an MRCONSO.RRF row has 18 fields")


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
    rows = [*five(), damaged, row("C0000008", "A8", "RXNORM", "PT", "7", "x")]
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
    got = MrconsoSource(write(tmp_path / "M.RRF", [*five(), damaged])).fetch("R", "C", queries)
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
    rows = [*five(), row("C0000009", "A9", "LNC", "LN", "9-9", "y")]
    head, tail = "".join(r + "\n" for r in rows[:5]), rows[5] + "\n"
    path.write_bytes(head.encode() + filler * (8_000_000 // len(filler)) + tail.encode())
    code = (
        "import sys\n"
        "from tempmedbench_synonyms.atoms import AtomQuery\n"
        "from tempmedbench_synonyms.mrconso.source import MrconsoSource\n"
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
    trie = scan.sab_trie([q.sab.encode() for q in nested])
    assert re.compile(trie).fullmatch(b"A" * 300) and not re.compile(trie).fullmatch(b"A" * 301)
    long = AtomQuery("cui", "B" * 500, "C0000001")
    got = MrconsoSource(write(tmp_path / "M.RRF", five())).fetch("R", "C", [*nested[:40], long])
    assert got.missing_sources == [q.sab for q in nested[:40]] + ["B" * 500]


def test_a_row_whose_first_field_is_longer_than_64_bytes_is_no_row(tmp_path: Path) -> None:
    """A CUI has 8 bytes; the search gives the first field 64 (it passes stretches of lines
    without '|' at once that way): a longer one is not read, even with a wanted SAB and CODE."""
    query = AtomQuery("source", "LNC", "9-9")
    for cui, expected in (("C" + "0" * 63, ["A9"]), ("C" + "0" * 64, None)):
        rows = [*five(), row(cui, "A9", "LNC", "LN", "9-9", "y")]
        got = MrconsoSource(write(tmp_path / "M.RRF", rows)).fetch("R", "C", [query]).atoms
        assert (None if got[query] is None else [a.aui for a in got[query] or ()]) == expected


@pytest.mark.parametrize("block", [1, 7, 64, 150, 151, 1000])
def test_block_boundaries_change_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    monkeypatch.setattr(scan, "BLOCK_SIZE", block)
    assert answers(write(tmp_path / "M.RRF", ROWS)) == EXPECTED


@pytest.mark.parametrize("seed", range(6))
def test_a_stream_cut_anywhere_gives_its_lines_once_in_order_at_their_offsets(
    monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """``lines_of`` hands each block on without copying it: the line a block ends inside is
    joined alone, the rest of the block is handed on as (chunk, start, stop). Blocks cut at
    random, some without a line end, some holding only the end of the carried line: the whole
    lines come out once each, in order, each at its stream offset; a complete last row without
    its line feed comes last, with the note."""
    monkeypatch.setattr(scan, "SNIFF_BYTES", 1000)
    rng = random.Random(seed)
    lines = [r + "\n" for r in ROWS * 40]
    data = "".join(lines).encode()[: -1 if seed % 2 else None]
    cuts = sorted(rng.sample(range(1, len(data)), 60))
    # a block with no line end, and one whose only line end ends the carried line
    cuts += [len(data) - 3, len(data) - 2]
    blocks = [data[a:b] for a, b in itertools.pairwise([0, *sorted(set(cuts)), len(data)])]
    warnings: list[str] = []
    got = b""
    for n, (done, base, chunk, start, stop) in enumerate(
        scan.lines_of(iter(enumerate(blocks)), Path("M.RRF"), warnings)
    ):
        assert base + start == len(got), n  # each piece at its offset in the stream
        piece = chunk[start:stop]
        assert piece.endswith(b"\n") and done < len(blocks)
        got += piece
    assert got == data + (b"\n" if seed % 2 else b"")
    note = (
        "M.RRF does not end with a line feed: its last row is complete (18 fields, each "
        "followed by '|') and was read"
    )
    assert warnings == ([note] if seed % 2 else [])
