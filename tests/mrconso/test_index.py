"""The local UMLS's index (SPEC 12, "Input, index, release"): one SQLite part per file, found again
by the files' identity, trusted by its record only, built once under an OS lock, interrupted
cleanly. All data is invented (fixtures/umls, invented rows)."""

from __future__ import annotations

import contextlib
import fcntl
import gzip
import io
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers import ROOT
from tempmedbench_synonyms.errors import BadInputError, UntrustedError
from tempmedbench_synonyms.mrconso import engine, forms, scan
from tempmedbench_synonyms.mrconso.index import LocalIndex, describe, list_indexes, remove_indexes
from tempmedbench_synonyms.umls import Umls

UMLS = ROOT / "fixtures/umls"
ROWS = {
    f: len((UMLS / f"{f}.RRF").read_bytes().splitlines()) for f in engine.FILES
}  # MRCONSO 71, MRDEF 4, MRREL 13, MRSTY 14, MRHIER 6, MRSAB 12


@pytest.fixture
def meta(tmp_path: Path) -> Path:
    """A copy of the invented META, in a folder that names its release."""
    dest = tmp_path / "umls-2099AA" / "META"
    shutil.copytree(UMLS, dest)
    (dest / "README.md").unlink()
    return dest


def built(ix: LocalIndex, files: list[str] | None = None) -> dict[str, tuple[int, bool]]:
    return {b.file: (b.rows, b.seconds > 0) for b in ix.build(files)}


def names(folder: Path) -> list[str]:
    return sorted(p.name.split(".")[0] + ("(tmp)" if p.name.endswith(".tmp") else "")
                  for p in folder.iterdir() if not p.name.endswith(".lock"))  # fmt: skip


def test_a_meta_folder_is_indexed_once_a_part_a_file(meta: Path, tmp_path: Path) -> None:
    idx = tmp_path / "idx"
    ix = LocalIndex(meta, index_dir=idx, progress=io.StringIO())
    assert (ix.release, ix.present) == ("2099AA", frozenset(engine.FILES))
    assert built(ix) == {f: (ROWS[f], True) for f in engine.FILES}
    assert names(idx) == sorted(engine.FILES)
    assert oct(idx.stat().st_mode & 0o777) == "0o700"
    assert {oct(p.stat().st_mode & 0o777) for p in idx.iterdir()} == {"0o600"}
    # found again by a new LocalIndex: nothing rebuilt
    again = LocalIndex(meta, index_dir=idx)
    assert built(again) == {f: (ROWS[f], False) for f in engine.FILES}
    db = again.engine(["MRCONSO", "MRREL"], None).db  # type: ignore[arg-type]
    assert db.execute("SELECT count(*) FROM mrconso").fetchone() == (ROWS["MRCONSO"],)
    assert db.execute("SELECT count(*) FROM mrrel").fetchone() == (ROWS["MRREL"],)
    assert [r[1] for r in db.execute("PRAGMA database_list")] == ["main", "mrconso", "mrrel"]
    again.close()


def test_a_meta_not_in_cui_order_is_indexed_once_its_rows_counted(
    meta: Path, tmp_path: Path
) -> None:
    """Its part records the rows it holds (not one more for the note that they are out of CUI
    order): found again, it is neither damaged nor rebuilt."""
    mrconso = meta / "MRCONSO.RRF"
    mrconso.write_bytes(b"".join(reversed(mrconso.read_bytes().splitlines(keepends=True))))
    idx, said = tmp_path / "idx", io.StringIO()
    assert built(LocalIndex(meta, index_dir=idx), ["MRCONSO"]) == {"MRCONSO": (71, True)}
    again = LocalIndex(meta, index_dir=idx, progress=said)
    assert built(again, ["MRCONSO"]) == {"MRCONSO": (71, False)}
    assert said.getvalue() == ""
    assert again.engine(["MRCONSO"], None)._sorted is False  # type: ignore[arg-type]
    again.close()


def test_building_says_what_how_long_and_how_much_disk(meta: Path, tmp_path: Path) -> None:
    said = io.StringIO()
    LocalIndex(meta, index_dir=tmp_path / "idx", progress=said).build(["MRDEF"])
    first = said.getvalue().splitlines()[0]
    assert first == (
        f"indexing MRDEF.RRF of {meta / 'MRDEF.RRF'} once: about 1 s and 1.1 kB of disk in "
        f"{tmp_path / 'idx'}"
    )
    shown = said.getvalue().splitlines()[1:]
    assert len(shown) == 1, shown  # (a small file's 100% once: not also before "done in")
    assert shown[0].startswith("indexing MRDEF: 100% (449 B of 449 B), 4 rows, done in ")


def _zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def _parts(name: str, data: bytes) -> dict[str, bytes]:
    half = len(data) // 2 + 7  # cut inside a row
    return {f"{name}.RRF.aa.gz": gzip.compress(data[:half]),
            f"{name}.RRF.ab.gz": gzip.compress(data[half:])}  # fmt: skip


@pytest.mark.parametrize("form", ["gzip and parts", "metathesaurus zip", "nlm"])
def test_every_form_gives_the_same_rows(form: str, tmp_path: Path) -> None:
    raw = {f: (UMLS / f"{f}.RRF").read_bytes() for f in engine.FILES}
    if form == "gzip and parts":
        path = tmp_path / "META"
        path.mkdir()
        for f, data in raw.items():
            members = (
                _parts(f, data)
                if f in ("MRCONSO", "MRREL")
                else {f"{f}.RRF.gz": gzip.compress(data)}
            )
            for n, b in members.items():
                (path / n).write_bytes(b)
    elif form == "metathesaurus zip":
        path = _zip(tmp_path / "umls-2099AB-metathesaurus-full.zip",
                    {f"2099AB/META/{f}.RRF": d for f, d in raw.items()})  # fmt: skip
    else:
        members = {}
        for f, d in raw.items():
            members.update({f"2099ab/META/{n}": b for n, b in _parts(f, d).items()})
        path = _zip(tmp_path / "2099ab-1-meta.nlm", members)
    ix = LocalIndex(path, index_dir=tmp_path / "idx")
    assert ix.present == frozenset(engine.FILES)
    assert built(ix) == {f: (ROWS[f], True) for f in engine.FILES}
    assert ix.release == (None if form == "gzip and parts" else "2099AB")


def test_a_plain_file_wins_over_parts_and_absent_files_are_absent(
    meta: Path, tmp_path: Path
) -> None:
    for n, b in _parts("MRREL", b"C0000001|junk|\n").items():
        (meta / n).write_bytes(b)
    (meta / "MRDEF.RRF").unlink()
    ix = LocalIndex(meta, index_dir=tmp_path / "idx")
    assert ix.present == frozenset(engine.FILES) - {"MRDEF"}
    assert built(ix, ["MRREL"]) == {"MRREL": (ROWS["MRREL"], True)}


def test_a_question_over_a_file_the_meta_lacks_is_bad_input_naming_it(
    meta: Path, tmp_path: Path
) -> None:
    (meta / "MRHIER.RRF").unlink()
    with (
        Umls(meta=meta, index_dir=tmp_path / "idx") as umls,
        pytest.raises(BadInputError) as caught,
    ):
        umls.hierarchy("parents", aui="A0000001")
    assert str(caught.value) == f"{meta}: umls hierarchy needs MRHIER.RRF, and it holds none"
    assert not (tmp_path / "idx").exists()  # nothing built


def test_mrconso_only_takes_the_file_alone(meta: Path, tmp_path: Path) -> None:
    ix = LocalIndex(meta / "MRCONSO.RRF", mrconso_only=True, index_dir=tmp_path / "idx")
    assert (ix.present, ix.release) == (frozenset({"MRCONSO"}), "2099AA")
    assert built(ix) == {"MRCONSO": (ROWS["MRCONSO"], True)}


def test_a_moved_meta_is_not_rebuilt_and_its_new_path_is_recorded(
    meta: Path, tmp_path: Path
) -> None:
    idx = tmp_path / "idx"
    built(LocalIndex(meta, index_dir=idx), ["MRSTY"])
    moved = tmp_path / "elsewhere"
    meta.rename(moved)
    assert built(LocalIndex(moved, index_dir=idx), ["MRSTY"]) == {"MRSTY": (ROWS["MRSTY"], False)}
    (part,) = list_indexes(idx)
    assert (part.file, part.rows, part.paths) == (
        "MRSTY", ROWS["MRSTY"], (str(meta / "MRSTY.RRF"), str(moved / "MRSTY.RRF"))
    )  # fmt: skip


def test_a_changed_file_rebuilds_its_part_alone_and_replaces_the_old_one(
    meta: Path, tmp_path: Path
) -> None:
    idx = tmp_path / "idx"
    built(LocalIndex(meta, index_dir=idx), ["MRCONSO", "MRSTY"])
    before = {p.file: p.path for p in list_indexes(idx)}
    with open(meta / "MRSTY.RRF", "ab") as f:
        f.write(b"C9999999|T047|B2.2.1.2.1|Disease or Syndrome|AT99999999|256|\n")
    assert built(LocalIndex(meta, index_dir=idx)) == {
        **{f: (ROWS[f], True) for f in engine.FILES if f not in ("MRCONSO", "MRSTY")},
        "MRCONSO": (ROWS["MRCONSO"], False),
        "MRSTY": (ROWS["MRSTY"] + 1, True),
    }
    after = {p.file: p.path for p in list_indexes(idx)}
    assert after["MRCONSO"] == before["MRCONSO"] and after["MRSTY"] != before["MRSTY"]
    assert not before["MRSTY"].exists()


@pytest.mark.parametrize("damage", ["record", "schema", "garbage", "no record"])
def test_a_part_whose_record_fails_is_rebuilt_never_trusted(
    damage: str, meta: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    idx = tmp_path / "idx"
    (b,) = LocalIndex(meta, index_dir=idx).build(["MRDEF"])
    if damage == "garbage":
        b.path.write_bytes(b"not a database" * 100)
    elif damage == "schema":
        monkeypatch.setattr(engine, "SCHEMA_VERSION", engine.SCHEMA_VERSION + 1)
    else:
        with sqlite3.connect(b.path) as db:
            db.execute("UPDATE index_record SET identity = 'x'" if damage == "record" else
                       "DELETE FROM index_record")  # fmt: skip
        db.close()
    assert built(LocalIndex(meta, index_dir=idx), ["MRDEF"]) == {"MRDEF": (ROWS["MRDEF"], True)}


@pytest.mark.parametrize(
    ("damage", "why"),
    [
        ("DROP TABLE mrconso_names", "it lacks mrconso_names"),
        ("DROP INDEX mrconso_cui", "it lacks mrconso_cui"),
        ("DELETE FROM mrconso WHERE rowid = 71", "it holds 70 rows, its record says 71"),
        ("INSERT INTO mrconso (cui) VALUES ('C1')", "it holds 72 rows, its record says 71"),
        ("UPDATE index_record SET rows = 7", "it holds 71 rows, its record says 7"),
        ("DELETE FROM index_record", "it has no record of this file"),
        ("garbage", "file is not a database"),
    ],
)
def test_a_damaged_part_is_rebuilt_saying_why_never_queried(
    damage: str, why: str, meta: Path, tmp_path: Path
) -> None:
    idx = tmp_path / "idx"
    (b,) = LocalIndex(meta, index_dir=idx).build(["MRCONSO"])
    if damage == "garbage":
        b.path.write_bytes(b"not a database" * 100)
    else:
        with contextlib.closing(sqlite3.connect(b.path)) as db, db:
            db.execute(damage)
    said = io.StringIO()
    ix = LocalIndex(meta, index_dir=idx, progress=said)
    db = ix.engine(["MRCONSO"], None).db  # type: ignore[arg-type]
    assert db.execute("SELECT count(*) FROM mrconso_names").fetchone() == (40,)
    ix.close()
    assert said.getvalue().splitlines()[0] == (
        f"the index part {b.path.name} is damaged ({why}): building it again"
    )
    assert built(LocalIndex(meta, index_dir=idx), ["MRCONSO"]) == {
        "MRCONSO": (ROWS["MRCONSO"], False)
    }


@pytest.mark.parametrize(
    ("file", "data", "line", "problem"),
    [
        ("MRSTY", b"C0000001|T047|B2|Disease|AT1|256|\nC0000002|T047|B2|Disease|256|\n", 2,
         "an MRSTY.RRF row has 6 fields, each followed by '|'; this line has 5"),
        ("MRDEF", b"C0000001|A1|AT1||MSH|def|N|256|\n\n", 2,
         "an MRDEF.RRF row has 8 fields, each followed by '|'; this line has 0"),
        ("MRSTY", b"C0000001|T047|B2|Disease|AT1|256|\r\nC0000002|T047|B2|Disease|AT1|256\r\n", 2,
         "an MRSTY.RRF row has 6 fields, each followed by '|'; this line has 6 and no trailing |"),
        ("MRSAB", b"x|" * 25 + b"\n" + b"\xff|" * 25 + b"\n", 2,
         "it is not UTF-8 text (byte 0xff)"),
        # a NUL (SQLite's json_each ends a string there: the row could not be asked for)
        ("MRDEF", b"C0000001|A1|AT1||MSH|def|N|256|\n" * 2 + b"C0000001|A1|AT1||MSH|d\0f|N|256|\n",
         3, "it holds a NUL byte (0x00): not the text of an RRF file"),
        ("MRCONSO", b"C0000001|ENG|P|L1|PF|S1|Y|A1||||MSH|PT|a\0b|Invented|0|N|256|\n", 1,
         "it holds a NUL byte (0x00): not the text of an RRF file"),
        # the first bad line is named, in whichever way it is bad (whatever block it is read in)
        ("MRSTY", b"C0000001|T047|B2|Disease|AT1|256|\nC0000002|T047|B2|Disease|256|\n"
         b"C0000003|T047|B2|Dis\0ase|AT1|256|\n", 2,
         "an MRSTY.RRF row has 6 fields, each followed by '|'; this line has 5"),
        ("MRSTY", b"C0000001|T047|B2|Disease|AT1|256|\nC0000002|T047|B2|Disease|256|\r\n"
         b"C0000003|T047|B2|Dis\xffase|AT1|256|\n", 2,
         "an MRSTY.RRF row has 6 fields, each followed by '|'; this line has 5"),
        ("MRSTY", b"C0000001|T047|B2|Disease|AT1|256|\nC0000002|T047|B2|Dis\xffase|AT1|256|\n"
         b"C0000003|T047|B2|Dis\0ase|AT1|256|\n", 2, "it is not UTF-8 text (byte 0xff)"),
    ],
)  # fmt: skip
def test_a_bad_row_anywhere_is_bad_input_naming_file_and_line_and_leaves_nothing(
    file: str, data: bytes, line: int, problem: str, meta: Path, tmp_path: Path
) -> None:
    (meta / f"{file}.RRF").write_bytes(data)
    idx = tmp_path / "idx"
    with pytest.raises(BadInputError) as caught:
        LocalIndex(meta, index_dir=idx).build([file])
    assert str(caught.value) == f"{meta / f'{file}.RRF'}, line {line}: {problem}"
    assert names(idx) == []


@pytest.mark.parametrize("ended", [True, False])
def test_a_line_longer_than_the_bound_is_bad_input_before_reading_on(
    ended: bool, meta: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scan, "MAX_LINE", 100)
    monkeypatch.setattr(forms, "READ_SIZE", 16)  # the long line spans blocks
    row = b"C0000001|A1|AT1||MSH|" + b"d" * 70 + b"|N|256|\n"  # 99 bytes: passes
    (meta / "MRDEF.RRF").write_bytes(row + b"x" * 300 + b"\n" * ended + row * 1000)
    idx = tmp_path / "idx"
    with pytest.raises(BadInputError) as caught:
        LocalIndex(meta, index_dir=idx).build(["MRDEF"])
    assert str(caught.value) == (
        f"{meta / 'MRDEF.RRF'}, line 2: a line longer than 100 bytes: not an MRDEF.RRF row"
    )
    assert names(idx) == []
    (meta / "MRDEF.RRF").write_bytes(row * 3)
    assert built(LocalIndex(meta, index_dir=idx), ["MRDEF"]) == {"MRDEF": (3, True)}


@pytest.mark.parametrize("form", ["file", "bom", "pipe"])
def test_an_empty_mrconso_is_bad_input_and_leaves_nothing(
    form: str, meta: Path, tmp_path: Path
) -> None:
    idx = tmp_path / "idx"
    (meta / "MRCONSO.RRF").write_bytes(b"\xef\xbb\xbf" if form == "bom" else b"")
    path, writer = meta / "MRCONSO.RRF", None
    if form == "pipe":
        path = tmp_path / "fifo"
        os.mkfifo(path)
        writer = subprocess.Popen(["sh", "-c", f": > '{path}'"])
    try:
        ix = LocalIndex(path, mrconso_only=form == "pipe", index_dir=idx)
        with pytest.raises(BadInputError) as caught:
            ix.build(["MRCONSO"])
        ix.close()
    finally:
        if writer is not None:
            writer.wait(5)
    assert (caught.value.exit_code, str(caught.value)) == (
        2, f"{path}: not an MRCONSO.RRF file: it holds no row"
    )  # fmt: skip
    assert names(idx) == []


def test_an_empty_file_other_than_mrconso_is_a_meta_without_its_rows(
    meta: Path, tmp_path: Path
) -> None:
    (meta / "MRDEF.RRF").write_bytes(b"")
    assert built(LocalIndex(meta, index_dir=tmp_path / "idx"), ["MRDEF"]) == {"MRDEF": (0, True)}


def test_too_little_free_space_is_bad_input_naming_the_folder(
    meta: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    idx = tmp_path / "idx"
    monkeypatch.setattr(shutil, "disk_usage", lambda p: shutil._ntuple_diskusage(9, 9, 100))  # type: ignore[attr-defined]
    with pytest.raises(BadInputError) as caught:
        LocalIndex(meta, index_dir=idx).build(["MRDEF"])
    assert (caught.value.exit_code, str(caught.value)) == (
        2, f"{idx}: too little free space to index MRDEF.RRF: about 1.1 kB needed, 100 B free"
    )  # fmt: skip
    assert names(idx) == []


def test_an_index_folder_others_can_write_is_untrusted(meta: Path, tmp_path: Path) -> None:
    idx = tmp_path / "idx"
    idx.mkdir()
    idx.chmod(0o777)
    with pytest.raises(UntrustedError) as caught:
        LocalIndex(meta, index_dir=idx).build(["MRDEF"])
    assert str(caught.value).startswith(f"{idx}: the index folder can be written by other users")
    assert list(idx.iterdir()) == []


def test_a_part_others_can_write_is_untrusted(meta: Path, tmp_path: Path) -> None:
    idx = tmp_path / "idx"
    (b,) = LocalIndex(meta, index_dir=idx).build(["MRDEF"])
    b.path.chmod(0o666)
    with pytest.raises(UntrustedError) as caught:
        LocalIndex(meta, index_dir=idx).build(["MRDEF"])
    assert str(caught.value).startswith(f"{b.path}: an index file can be written by other users")


def test_a_temporary_file_of_a_killed_build_is_removed_by_the_next_which_says_so(
    meta: Path, tmp_path: Path
) -> None:
    idx = tmp_path / "idx"
    ix = LocalIndex(meta, index_dir=idx)
    ix.build(["MRSAB"])
    (part,) = list_indexes(idx)
    part.path.unlink()
    left = idx / f".{part.path.name}.0123456789ab.tmp"
    left.write_bytes(b"half a build")
    said = io.StringIO()
    assert built(LocalIndex(meta, index_dir=idx, progress=said), ["MRSAB"]) == {
        "MRSAB": (ROWS["MRSAB"], True)
    }
    assert said.getvalue().splitlines()[0] == (
        f"removed 1 temporary file left by an interrupted build of MRSAB: {left.name}"
    )
    assert not left.exists()


@pytest.mark.parametrize("built_first", [False, True])
def test_a_pipe_is_read_once_into_a_temporary_index_never_kept(
    built_first: bool, meta: Path, tmp_path: Path
) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    idx = tmp_path / "idx"
    writer = subprocess.Popen(["sh", "-c", f"cat '{meta / 'MRCONSO.RRF'}' > '{fifo}'"])
    try:
        ix = LocalIndex(fifo, mrconso_only=True, index_dir=idx)
        if built_first:  # read once: the engine then opens what build read
            assert built(ix) == {"MRCONSO": (ROWS["MRCONSO"], True)} and list_indexes(idx) == []
        db = ix.engine(["MRCONSO"], None).db  # type: ignore[arg-type]
        assert db.execute("SELECT count(*) FROM mrconso").fetchone() == (ROWS["MRCONSO"],)
        assert list(idx.iterdir()) == [] and list_indexes(idx) == []
        ix.close()
    finally:
        writer.wait(5)


def test_a_pipes_part_left_by_a_killed_run_is_removed_by_the_next_which_says_so(
    meta: Path, tmp_path: Path
) -> None:
    idx = tmp_path / "idx"
    idx.mkdir(mode=0o700)
    dead, young, held, fresh = (idx / f".MRCONSO.pipe.{x * 12}.tmp" for x in "abcd")
    for p in (dead, young, held, fresh):
        p.write_bytes(b"" if p is fresh else b"a part")  # fresh: made, not yet locked
        if p in (dead, held):
            os.utime(p, (time.time() - 61, time.time() - 61))
    fd = os.open(held, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)  # a run that still reads its pipe
    said = io.StringIO()
    try:
        LocalIndex(meta, index_dir=idx, progress=said).build(["MRDEF"])
    finally:
        os.close(fd)
    assert said.getvalue().splitlines()[0] == (
        "removed 2 temporary files left by an interrupted run that read a pipe: "
        f"{dead.name}, {young.name}"
    )
    assert [p.exists() for p in (dead, young, held, fresh)] == [False, False, True, True]


def test_a_pipe_built_and_closed_leaves_nothing(meta: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    idx = tmp_path / "idx"
    writer = subprocess.Popen(["sh", "-c", f"cat '{meta / 'MRCONSO.RRF'}' > '{fifo}'"])
    try:
        ix = LocalIndex(fifo, mrconso_only=True, index_dir=idx)
        ix.build()
        ix.close()
        assert list(idx.iterdir()) == []
    finally:
        writer.wait(5)


def test_cache_listing_removal_and_describe(meta: Path, tmp_path: Path) -> None:
    idx = tmp_path / "idx"
    assert [(p.file, p.rows) for p in describe(meta, idx)] == [(f, None) for f in engine.FILES]
    LocalIndex(meta, index_dir=idx).build(["MRCONSO", "MRHIER"])
    got = {p.file: (p.rows, p.bytes > 0) for p in describe(meta, idx)}
    assert got == {f: (ROWS[f] if f in ("MRCONSO", "MRHIER") else None, True) for f in engine.FILES}
    assert [(p.file, p.rows) for p in list_indexes(idx)] == [("MRCONSO", 71), ("MRHIER", 6)]
    removed = remove_indexes(idx)
    assert sorted(p.name.lstrip(".").split(".")[0] for p in removed) == [
        "MRCONSO",
        "MRCONSO",
        "MRHIER",
        "MRHIER",
    ]  # the parts and their lock files
    assert list(idx.iterdir()) == [] and list_indexes(idx) == []
    assert remove_indexes(tmp_path / "none") == []


# -- other processes: the lock, Ctrl-C and SIGTERM ------------------------------------------------

SCRIPT = """
import sys
from pathlib import Path
from tempmedbench_synonyms import runtime
from tempmedbench_synonyms.errors import Interrupted
from tempmedbench_synonyms.mrconso import engine, index

if sys.argv[3] == "endless":  # a CREATE INDEX that never ends: only an interrupt stops it
    def finish(db, file, schema="main"):
        print("finishing", flush=True)
        db.execute("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
                   "SELECT count(*) FROM c")
    engine.finish = finish
with runtime.interrupts():
    try:
        ix = index.LocalIndex(Path(sys.argv[1]), index_dir=Path(sys.argv[2]), progress=sys.stdout)
        print([(b.file, b.rows, b.seconds > 0) for b in ix.build(["MRDEF"])], flush=True)
    except Interrupted as err:
        print(f"interrupted by {err.name}", flush=True)
        sys.exit(err.exit_code)
"""


def _start(meta: Path, idx: Path, mode: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", SCRIPT, str(meta), str(idx), mode],
                            stdout=subprocess.PIPE, text=True)  # fmt: skip


def _read_until(proc: subprocess.Popen[str], start: str) -> str:
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith(start):
            return line
    raise AssertionError(f"no line starting {start!r}")


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_stops_a_long_statement_at_once_and_leaves_nothing(
    sig: int, code: int, meta: Path, tmp_path: Path
) -> None:
    idx = tmp_path / "idx"
    proc = _start(meta, idx, "endless")
    try:
        _read_until(proc, "finishing")
        proc.send_signal(sig)
        # The statement never ends but by the signal: that it ended is the proof, whatever the
        # machine's load (a hang bound; bench/bench_ctrlc.py times it).
        out, _ = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    name = "Ctrl-C" if sig == signal.SIGINT else "SIGTERM"
    assert (proc.returncode, out.splitlines()[-1]) == (code, f"interrupted by {name}")
    assert names(idx) == []


def test_a_second_process_waits_for_the_lock_then_uses_the_part(meta: Path, tmp_path: Path) -> None:
    idx = tmp_path / "idx"
    ix = LocalIndex(meta, index_dir=idx)
    part = ix._part(ix._files["MRDEF"])
    ix._prepare()
    fd = os.open(idx / f".{part.name}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)  # as a build in another process holds it
    proc = _start(meta, idx, "plain")
    try:
        assert _read_until(proc, "waiting") == (
            f"waiting for another process that is indexing MRDEF.RRF in {idx}\n"
        )
        f = ix._files["MRDEF"]  # built as the lock's holder would, under the lock we hold
        ix._build(f, part.with_name(f".{part.name}.0.tmp"), part)
        os.close(fd)
        out, _ = proc.communicate(timeout=5)
    finally:
        proc.kill()
        proc.wait()
    assert (proc.returncode, out) == (0, "[('MRDEF', 4, False)]\n")


def test_the_wait_for_the_lock_is_interruptible(meta: Path, tmp_path: Path) -> None:
    idx = tmp_path / "idx"
    ix = LocalIndex(meta, index_dir=idx)
    part = ix._part(ix._files["MRDEF"])
    ix._prepare()
    fd = os.open(idx / f".{part.name}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    proc = _start(meta, idx, "plain")
    try:
        _read_until(proc, "waiting")
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=5)
    finally:
        os.close(fd)
        proc.kill()
        proc.wait()
    assert (proc.returncode, out) == (130, "interrupted by Ctrl-C\n")
    assert names(idx) == []


def test_a_part_attached_immutable_is_never_written_while_it_is_open(
    meta: Path, tmp_path: Path
) -> None:
    """``engine`` attaches each part with ``immutable=1``: SQLite then takes no lock and never
    checks for a change, and a file that changes may answer wrong or as corrupt (SQLite's URI
    documentation). A part must then never change once renamed into place; but a second META
    holding the same file (a copy that keeps the times, or the same META under another path)
    records its path in the part in place (``_add_path``), under the first one's connection."""
    from tempmedbench_synonyms.mrconso.shapes import Links

    idx = tmp_path / "idx"
    holder = LocalIndex(meta, index_dir=idx)
    holder.engine(["MRSTY"], Links("2099AA"))  # attached, held open
    (part,) = [p.path for p in list_indexes(idx)]
    before = part.read_bytes()
    copy = tmp_path / "copy" / "META"
    shutil.copytree(meta, copy)  # (copy2: the same size, times and bytes: the same identity)
    other = LocalIndex(copy, index_dir=idx)
    other.build(["MRSTY"])
    other.close()
    try:
        assert part.read_bytes() == before, "the part changed under an immutable connection"
        # the second path is still known (a side file beside the part), and goes with the part
        (listed,) = list_indexes(idx)
        assert listed.paths == (str(meta / "MRSTY.RRF"), str(copy / "MRSTY.RRF"))
        assert sorted(p.name for p in remove_indexes(idx)) == sorted(
            [part.name, part.name + ".paths", f".{part.name}.lock"]
        )
    finally:
        holder.close()


@pytest.mark.parametrize("kind", ["fifo", "symlink"])
def test_a_side_file_of_paths_that_is_no_regular_file_is_passed_over(
    meta: Path, tmp_path: Path, kind: str
) -> None:
    """A part's side file of paths is read without waiting on a FIFO or following a link (it
    only adds to what ``cache info`` lists): the part alone is listed, at once."""
    idx = tmp_path / "idx"
    LocalIndex(meta, index_dir=idx).build(["MRSTY"])
    (part,) = [p.path for p in list_indexes(idx)]
    side = part.with_name(part.name + ".paths")
    if kind == "fifo":
        os.mkfifo(side, 0o600)
    else:
        elsewhere = tmp_path / "elsewhere.paths"
        elsewhere.write_text('"/planted/MRSTY.RRF"\n', encoding="utf-8")
        side.symlink_to(elsewhere)
    code = (
        "import sys; from pathlib import Path; "
        "from tempmedbench_synonyms.mrconso.index import list_indexes; "
        "print([p.paths for p in list_indexes(Path(sys.argv[1]))])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(idx)], capture_output=True, text=True, timeout=20
    )
    assert (out.returncode, out.stdout) == (0, f"[({str(meta / 'MRSTY.RRF')!r},)]\n")


def test_a_second_path_is_recorded_without_waiting_on_a_fifo_or_growing_past_the_bound(
    meta: Path, tmp_path: Path
) -> None:
    """The side file is written non-blocking and only while it is a regular file under the
    bound it is read to: a FIFO planted there (no reader) cannot hang a command that finds the
    part at another path, and a side file already at the bound does not grow on every use."""
    idx = tmp_path / "idx"
    LocalIndex(meta, index_dir=idx).build(["MRSTY"])
    (part,) = [p.path for p in list_indexes(idx)]
    side = part.with_name(part.name + ".paths")
    os.mkfifo(side, 0o600)
    copy = tmp_path / "copy" / "META"
    shutil.copytree(meta, copy)  # the same identity: found, and its path recorded
    code = (
        "import sys; from pathlib import Path; "
        "from tempmedbench_synonyms.mrconso.index import LocalIndex; "
        "i = LocalIndex(Path(sys.argv[1]), index_dir=Path(sys.argv[2])); "
        "i.build(['MRSTY']); i.close(); print('done')"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(copy), str(idx)],
        capture_output=True, text=True, timeout=20,
    )  # fmt: skip
    assert (out.returncode, out.stdout) == (0, "done\n")
    side.unlink()
    full = '"/x"\n' * ((1 << 20) // 5 + 1)  # past the 1 MiB read: a path written now is lost
    side.write_text(full, encoding="utf-8")
    other = LocalIndex(copy, index_dir=idx)
    other.build(["MRSTY"])
    other.close()
    assert side.read_text(encoding="utf-8") == full


@pytest.mark.parametrize("size", [1, 2, 3, 16])
def test_a_byte_order_mark_split_over_the_first_reads_is_dropped(
    size: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pipe may hand on fewer than three bytes first: the mark is dropped all the same, never
    kept at the start of the first row's CUI."""
    from tempmedbench_synonyms.mrconso.index import read_rows

    monkeypatch.setattr(forms, "READ_SIZE", size)
    path = tmp_path / "MRDEF.RRF"
    path.write_bytes(b"\xef\xbb\xbfC0000001|A1|AT1||MSH|a fever|N||\nC0000002|A2|AT2||MSH|b|N||\n")
    assert [row[:2] for row in read_rows("MRDEF", path)] == [["C0000001", "A1"], ["C0000002", "A2"]]


# -- a META lacking an optional file, in every form (SPEC 12 "Input", SPEC 7's forms) ------------

LACKING_FORMS = ["folder", "metathesaurus zip", "nlm", "full zip", "full zip, nlm stored"]


def _lacking(tmp_path: Path, form: str, missing: str) -> Path:
    """The invented META without ``missing``, in ``form``: plain files in a folder or in the
    Metathesaurus zip; in an .nlm (alone, or in a full release zip, deflated or stored there),
    each file's split parts, as NLM ships them."""
    raw = {f: (UMLS / f"{f}.RRF").read_bytes() for f in engine.FILES if f != missing}
    if form == "folder":
        folder = tmp_path / "umls-2099AB" / "META"
        folder.mkdir(parents=True)
        for f, data in raw.items():
            (folder / f"{f}.RRF").write_bytes(data)
        return folder
    if form == "metathesaurus zip":
        return _zip(tmp_path / "umls-2099AB-metathesaurus-full.zip",
                    {f"2099AB/META/{f}.RRF": d for f, d in raw.items()})  # fmt: skip
    members = {}
    for f, d in raw.items():
        members.update({f"2099AB/META/{n}": b for n, b in _parts(f, d).items()})
    if form == "nlm":
        return _zip(tmp_path / "2099ab-1-meta.nlm", members)
    nlm = _zip(tmp_path / "inner.nlm", members).read_bytes()
    how = zipfile.ZIP_STORED if form.endswith("stored") else zipfile.ZIP_DEFLATED
    path = tmp_path / "umls-2099AB-full.zip"
    with zipfile.ZipFile(path, "w", how) as zf:
        zf.writestr("2099AB-full/README.txt", b"invented")
        zf.writestr("2099AB-full/2099ab-1-meta.nlm", nlm)
    return path


def _umls(*args: object) -> tuple[int, str, str]:
    from typer.testing import CliRunner

    from tempmedbench_synonyms.cli.umls import umls_app

    env = {"UMLS_API_KEY": None, "UMLS_API_KEY_FILE": None}
    result = CliRunner().invoke(umls_app, [str(a) for a in args], env=env)
    return result.exit_code, result.stdout, result.stderr


def _index_files(idx: Path) -> list[str]:
    """The index folder's files, each by its META file and kind (part, lock or temporary)."""
    kinds = {".sqlite": "part", ".lock": "lock", ".tmp": "tmp"}
    return sorted(f"{p.name.lstrip('.').split('.')[0]} {kinds.get(p.suffix, p.suffix)}"
                  for p in idx.iterdir())  # fmt: skip


@pytest.mark.parametrize("missing", ["MRHIER", "MRREL"])
@pytest.mark.parametrize("form", LACKING_FORMS)
def test_umls_index_of_a_meta_lacking_a_file_indexes_what_it_holds_in_every_form(
    form: str, missing: str, tmp_path: Path
) -> None:
    """As for a folder: the files it holds are indexed and listed, the one it lacks is not (no
    line of it, no part, no lock, no temporary file), and the run succeeds."""
    path, idx = _lacking(tmp_path, form, missing), tmp_path / "idx"
    held = [f for f in engine.FILES if f != missing]
    code, out, err = _umls("index", path, "--index-dir", idx)
    assert code == 0, err
    table = [line.split() for line in out.splitlines()]
    assert table[0] == ["FILE", "ROWS", "BYTES", "SECONDS"]
    assert [row[:2] for row in table[1:]] == [[f"{f}.RRF", f"{ROWS[f]:,}"] for f in held]
    read = {f: path / f"{f}.RRF" if form == "folder" else path for f in held}
    said = err.splitlines()
    if form.startswith("full zip"):  # listed first, once: the estimate is the file's own bytes
        assert said[0] == f"listing the files {path} holds (its .nlm is read through)"
        del said[0]
    assert [line.split(" once: ")[0] for line in said if " once: " in line] == [
        f"indexing {f}.RRF of {read[f]}" for f in held
    ]
    bars = [line for line in said if " once: " not in line][:-1]
    assert len(bars) == len(held)
    for f, bar in zip(held, bars, strict=True):  # each ends at 100%: all its bytes read
        assert re.fullmatch(rf"indexing {f}: 100% \((.+) of \1\), {ROWS[f]} rows, done in \d+ s",
                            bar), bar  # fmt: skip
    assert said[-1] == f"indexed: index of {path}"
    assert len(said) == 2 * len(held) + 1 and missing not in err
    assert _index_files(idx) == sorted(f"{f} {k}" for f in held for k in ("part", "lock"))
    # again, --json: every part found (seconds 0), the lacking file in none
    code, out, err = _umls("index", path, "--index-dir", idx, "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert [(p["file"], p["rows"], p["seconds"]) for p in doc["parts"]] == [
        (f, ROWS[f], 0) for f in held
    ]
    assert (doc["index"], doc["release"]) == (f"index of {path}", "2099AB")
    assert _index_files(idx) == sorted(f"{f} {k}" for f in held for k in ("part", "lock"))


@pytest.mark.parametrize("indexed", [False, True], ids=["not indexed", "indexed"])
@pytest.mark.parametrize(
    ("missing", "asked"),
    [
        ("MRHIER", ["hierarchy", "SNOMEDCT_US", "9990101009", "--parents"]),
        ("MRREL", ["relations", "C9000001"]),
    ],
)
@pytest.mark.parametrize("form", LACKING_FORMS)
def test_a_command_needing_the_file_a_meta_lacks_is_bad_input_naming_it_in_every_form(
    form: str, missing: str, asked: list[str], indexed: bool, tmp_path: Path
) -> None:
    path, idx = _lacking(tmp_path, form, missing), tmp_path / "idx"
    if indexed:
        assert _umls("index", path, "--index-dir", idx, "-q")[0] == 0
    before = _index_files(idx) if indexed else None
    code, out, err = _umls(*asked, "--meta", path, "--index-dir", idx)
    assert (code, out) == (2, "")
    # a full zip not indexed is listed (only); indexed, its listing is kept with MRCONSO's part
    listed = f"listing the files {path} holds (its .nlm is read through)\n"
    assert err == (
        (listed if form.startswith("full zip") and not indexed else "")
        + f"error: {path}: umls {asked[0]} needs {missing}.RRF, and it holds none\n"
        f"hint: give --meta the META folder (or release zip) that holds {missing}.RRF\n"
    )
    if indexed:
        assert _index_files(idx) == before  # nothing built, nothing half-written
    else:
        assert not idx.exists()  # nothing built, not even the folder


def test_a_full_zip_whose_parts_are_built_is_not_read_to_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Which files a full zip's .nlm holds is read there only when a part must be built: a
    command whose parts are built reads no member of it, and ``umls index`` reads the .nlm
    through once (to list it), then up to each file it holds, never for the file it lacks."""
    path, idx = _lacking(tmp_path, "full zip", "MRHIER"), tmp_path / "idx"
    read: list[str] = []
    real = forms._local_members

    def counted(f: object) -> Iterator[object]:
        read.append("nlm")
        yield from real(f)  # type: ignore[arg-type]
        read.append("end")  # (its central directory reached)

    monkeypatch.setattr(forms, "_local_members", counted)
    assert _umls("index", path, "--index-dir", idx, "-q")[0] == 0
    # the listing, read through first (MRCONSO's estimate needs its own bytes), then one pass a
    # file it holds, which ends after the file's last member: only the listing reads the end
    assert read == ["nlm", "end", *["nlm"] * 5]
    del read[:]
    code, out, err = _umls("concept", "C9000001", "--meta", path, "--index-dir", idx, "--json")
    assert (code, json.loads(out)["outcome"]) == (0, "found"), err
    assert read == []


def test_the_files_of_a_full_zip_are_those_its_nlm_holds(tmp_path: Path) -> None:
    path, idx = _lacking(tmp_path, "full zip", "MRHIER"), tmp_path / "idx"
    said = io.StringIO()
    ix = LocalIndex(path, index_dir=idx, progress=said)
    assert ix.present == frozenset(engine.FILES) - {"MRHIER"}
    assert said.getvalue() == f"listing the files {path} holds (its .nlm is read through)\n"
    with zipfile.ZipFile(path) as zf:
        nlm = zf.getinfo("2099AB-full/2099ab-1-meta.nlm").file_size
    # (doctor --meta, nothing read: MRCONSO, whose build reads the whole .nlm to list it first)
    assert [(p.file, p.rows, p.bytes) for p in describe(path, idx)] == [("MRCONSO", None, nlm)]
    assert not idx.exists()
    assert built(ix, ["MRCONSO"]) == {"MRCONSO": (ROWS["MRCONSO"], True)}
    assert [(p.file, p.rows, p.bytes) for p in describe(path, idx)][1:] == [
        (f, None, _need(path, f)[0]) for f in engine.FILES if f not in ("MRCONSO", "MRHIER")
    ]  # (its listing kept with MRCONSO's part: each of its own bytes in the .nlm)
    ix.close()


FULL_ZIPS = ["full zip", "full zip, nlm stored"]


def _need(path: Path, file: str) -> tuple[int, int]:
    """The bytes ``file``'s members take in the .nlm of the full zip ``path`` (as its central
    directory gives them), and the disk its part is estimated to need: those bytes, times 6 (a
    gzip'd file's share of its text), times 2.5 (a part's share of the text)."""
    with zipfile.ZipFile(path) as outer:
        nlm = outer.read("2099AB-full/2099ab-1-meta.nlm")
    with zipfile.ZipFile(io.BytesIO(nlm)) as inner:
        held = [i for i in inner.infolist() if i.filename.split("/")[-1].startswith(f"{file}.")]
    size = sum(i.compress_size for i in held)
    return size, int(size * 6 * 2.5)


@pytest.mark.parametrize("form", FULL_ZIPS)
def test_a_full_zips_file_is_estimated_and_counted_by_its_own_bytes_in_the_nlm(
    form: str, tmp_path: Path
) -> None:
    """Not by the whole .nlm's (which every file would then need): the .nlm is listed first,
    once (a file's own bytes are known from a read through it), and each bar counts from 0 to
    the file's bytes."""
    from tempmedbench_synonyms.progress import format_size

    path, idx = _lacking(tmp_path, form, "MRHIER"), tmp_path / "idx"
    said = io.StringIO()
    ix = LocalIndex(path, index_dir=idx, progress=said)
    assert built(ix, ["MRSAB"]) == {"MRSAB": (ROWS["MRSAB"], True)}
    assert built(ix, ["MRCONSO"]) == {"MRCONSO": (ROWS["MRCONSO"], True)}
    (sab, sab_need), (conso, conso_need) = _need(path, "MRSAB"), _need(path, "MRCONSO")
    with zipfile.ZipFile(path) as outer:  # (before, each file was estimated as all of it)
        assert outer.getinfo("2099AB-full/2099ab-1-meta.nlm").file_size > 2 * (sab + conso)
    lines = said.getvalue().splitlines()
    assert lines[:2] == [
        f"listing the files {path} holds (its .nlm is read through)",
        f"indexing MRSAB.RRF of {path} once: about 1 s and {format_size(sab_need)} of disk in "
        f"{idx}",
    ]
    assert lines[2].startswith(
        f"indexing MRSAB: 100% ({format_size(sab)} of {format_size(sab)}), 12 rows, done in "
    )
    assert lines[3] == (
        f"indexing MRCONSO.RRF of {path} once: about 1 s and {format_size(conso_need)} of disk "
        f"in {idx}"
    )
    assert lines[4].startswith(
        f"indexing MRCONSO: 100% ({format_size(conso)} of {format_size(conso)}), 71 rows, "
    )
    assert len(lines) == 5
    ix.close()


@pytest.mark.parametrize("form", FULL_ZIPS)
def test_the_free_space_a_full_zips_file_needs_is_that_of_its_own_bytes(
    form: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tempmedbench_synonyms.progress import format_size

    path, idx = _lacking(tmp_path, form, "MRHIER"), tmp_path / "idx"
    (_, sab_need), (_, conso_need) = _need(path, "MRSAB"), _need(path, "MRCONSO")
    free = [conso_need - 1]  # enough for MRSAB, not for MRCONSO
    assert sab_need <= free[0]

    def usage(folder: object) -> object:
        return shutil._ntuple_diskusage(free[0], 0, free[0])  # type: ignore[attr-defined]

    monkeypatch.setattr(shutil, "disk_usage", usage)
    with pytest.raises(BadInputError) as caught:
        LocalIndex(path, index_dir=idx).build(["MRCONSO"])
    assert (caught.value.exit_code, str(caught.value)) == (
        2, f"{idx}: too little free space to index MRCONSO.RRF: about {format_size(conso_need)} "
        f"needed, {format_size(conso_need - 1)} free"
    )  # fmt: skip
    assert names(idx) == []
    assert built(LocalIndex(path, index_dir=idx), ["MRSAB"]) == {"MRSAB": (ROWS["MRSAB"], True)}
    free[0] = conso_need  # just enough
    ix = LocalIndex(path, index_dir=idx)
    assert built(ix, ["MRCONSO"]) == {"MRCONSO": (ROWS["MRCONSO"], True)}
    assert names(idx) == ["MRCONSO", "MRSAB"]
    ix.close()


@pytest.mark.parametrize("missing", ["MRREL", "MRDEF", "MRSTY"])
def test_a_command_reading_a_file_when_held_answers_from_a_full_zip_lacking_it_as_from_a_folder(
    missing: str, tmp_path: Path
) -> None:
    """``concept`` reads MRSTY, MRDEF and MRREL when the META holds them (for its semantic
    types and links): without one, the full zip's answer is the folder's."""
    answers = []
    for form in ("folder", "full zip"):
        (tmp_path / form).mkdir()
        path = _lacking(tmp_path / form, form, missing)
        code, out, err = _umls("concept", "C9000001", "--meta", path, "--index-dir",
                               tmp_path / form / "idx", "--json", "-q")  # fmt: skip
        assert (code, err) == (0, "")
        answers.append({k: v for k, v in json.loads(out).items() if k != "source"})
    assert answers[0] == answers[1]


@pytest.fixture
def passes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """One "nlm" for each read of a full zip's .nlm (a pass: the listing's, or a file's)."""
    read: list[str] = []
    real = forms._local_members

    def counted(f: object) -> object:
        read.append("nlm")
        return real(f)  # type: ignore[arg-type]

    monkeypatch.setattr(forms, "_local_members", counted)
    return read


@pytest.mark.parametrize(
    ("missing", "asked"),
    [
        ("MRDEF", ["concept", "C9000001"]),
        ("MRREL", ["concept", "C9000001"]),
        ("MRSTY", ["concept", "C9000001"]),
        ("MRHIER", ["crosswalk", "SNOMEDCT_US", "9990101009"]),
        ("MRHIER", ["source-concept", "SNOMEDCT_US", "9990101009"]),
        ("MRREL", ["hierarchy", "SNOMEDCT_US", "9990101009", "--parents"]),
        ("MRSAB", ["sources"]),
    ],
)
def test_an_indexed_full_zip_lacking_a_file_is_never_read_again(
    missing: str, asked: list[str], tmp_path: Path, passes: list[str]
) -> None:
    """Which files the .nlm holds is kept with MRCONSO's part (its listing, written by the same
    build): a later run of a command that reads the lacking file when held reads none of it."""
    path, idx = _lacking(tmp_path, "full zip", missing), tmp_path / "idx"
    assert _umls("index", path, "--index-dir", idx, "-q")[0] == 0
    del passes[:]
    for _ in range(2):
        code, _, err = _umls(*asked, "--meta", path, "--index-dir", idx, "-q")
        assert (code, err) == (1 if asked[0] == "crosswalk" else 0, "")  # (1: no match)
    assert passes == []


@pytest.mark.parametrize(
    ("asked", "missing", "built_files"),
    [
        (["definitions", "C9000001"], "MRHIER", ["MRCONSO", "MRDEF"]),
        (["concept", "C9000001"], "MRHIER", ["MRCONSO", "MRDEF", "MRREL", "MRSTY"]),
        (["concept", "C9000001"], "MRREL", ["MRCONSO", "MRDEF", "MRSTY"]),
        (
            ["hierarchy", "SNOMEDCT_US", "9990101009", "--parents"],
            "MRSAB",
            ["MRCONSO", "MRHIER", "MRREL"],
        ),
    ],
)
def test_a_first_question_lists_the_nlm_once_then_reads_it_once_a_part_built(
    asked: list[str], missing: str, built_files: list[str], tmp_path: Path, passes: list[str]
) -> None:
    path, idx = _lacking(tmp_path, "full zip", missing), tmp_path / "idx"
    code, _, err = _umls(*asked, "--meta", path, "--index-dir", idx, "-q")
    assert (code, err) == (0, "")
    assert _index_files(idx) == sorted([f"{f} part" for f in built_files]
                                       + [f"{f} lock" for f in built_files])  # fmt: skip
    assert len(passes) == 1 + len(built_files)  # the listing, then one a part built


def _damaged_full_zip(tmp_path: Path) -> Path:
    """A full zip whose .nlm is cut short (a listing of it is bad input)."""
    (tmp_path / "good").mkdir(parents=True)
    good = _lacking(tmp_path / "good", "full zip", "MRHIER")
    with zipfile.ZipFile(good) as zf:
        nlm = zf.read("2099AB-full/2099ab-1-meta.nlm")
    path = tmp_path / "umls-2099AB-full.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("2099AB-full/README.txt", b"invented")
        zf.writestr("2099AB-full/2099ab-1-meta.nlm", nlm[:200])
    return path


def test_a_dry_run_over_a_full_zip_reads_none_of_it(tmp_path: Path, passes: list[str]) -> None:
    """Before MRCONSO is indexed, the files its .nlm holds are not known (and not listed for a
    dry run): the needed ones are to index, the others to index if held; once it is, the plan
    is exact, from the listing kept with MRCONSO's part. A damaged .nlm is never read."""
    path, idx = _lacking(tmp_path, "full zip", "MRREL"), tmp_path / "idx"
    args = ["concept", "C9000001", "--meta", path, "--index-dir", idx, "--dry-run", "--json"]
    code, out, err = _umls(*args)
    assert (code, err) == (0, json.loads(out)["message"] + "\n")
    start = f"dry run: 1 input: answered from index of {path} (UMLS 2099AB); "
    assert (json.loads(out)["message"], json.loads(out)["plan"]["files"]) == (
        start + "MRCONSO.RRF to index, MRDEF.RRF to index if held, MRREL.RRF to index if held, "
        "MRSTY.RRF to index if held; nothing is sent",
        {"MRCONSO": False, "MRDEF": False, "MRREL": False, "MRSTY": False},
    )
    assert (passes, idx.exists()) == ([], False)
    assert _umls("index", path, "--index-dir", idx, "-q")[0] == 0
    del passes[:]
    code, out, err = _umls(*args)
    assert (code, err) == (0, json.loads(out)["message"] + "\n")
    assert (json.loads(out)["message"], json.loads(out)["plan"]["files"]) == (
        start + "MRCONSO.RRF indexed, MRDEF.RRF indexed, MRSTY.RRF indexed; nothing is sent",
        {"MRCONSO": True, "MRDEF": True, "MRSTY": True},
    )
    code, out, err = _umls("relations", "C9000001", *args[2:])
    assert (code, json.loads(out)["message"]) == (
        2, f"{path}: umls relations needs MRREL.RRF, and it holds none"
    )  # fmt: skip
    assert passes == []
    damaged = _damaged_full_zip(tmp_path / "damaged")
    code, out, err = _umls("definitions", "C9000001", "--meta", damaged, "--index-dir",
                           tmp_path / "idx2", "--dry-run", "--json")  # fmt: skip
    assert (code, err) == (0, json.loads(out)["message"] + "\n")
    assert json.loads(out)["plan"]["files"] == {"MRCONSO": False, "MRDEF": False}
    assert passes == []


def test_a_dry_run_of_many_inputs_opens_each_part_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Which files a full zip holds is answered once an index (a dry run asked it per input)."""
    from tempmedbench_synonyms.mrconso import index

    path, idx = _lacking(tmp_path, "full zip", "MRHIER"), tmp_path / "idx"
    assert _umls("index", path, "--index-dir", idx, "-q")[0] == 0
    opened: list[str] = []
    real = index._record

    def counted(part: Path, *args: object) -> object:
        opened.append(part.name.split(".")[0])
        return real(part, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(index, "_record", counted)
    inputs = tmp_path / "cuis.txt"
    inputs.write_text("C9000001\n" * 500)
    code, _, err = _umls("concept", "--file", inputs, "--meta", path, "--index-dir", idx,
                           "--dry-run", "-q")  # fmt: skip
    assert (code, err) == (0, "")
    assert sorted(opened) == ["MRCONSO", "MRCONSO", "MRDEF", "MRREL", "MRSAB", "MRSTY"]


def test_build_of_no_file_named_builds_those_a_full_zip_holds(tmp_path: Path) -> None:
    path, idx = _lacking(tmp_path, "full zip", "MRHIER"), tmp_path / "idx"
    ix = LocalIndex(path, index_dir=idx)
    assert built(ix, []) == {f: (ROWS[f], True) for f in engine.FILES if f != "MRHIER"}
    ix.close()


def test_doctor_reads_none_of_a_full_zip(tmp_path: Path, passes: list[str]) -> None:
    """Before MRCONSO is indexed, which other files the .nlm holds is not known: said so, by
    what is known (the .nlm's bytes, read through to list it); then exact, from the listing."""
    from tempmedbench_synonyms.doctor import check_meta
    from tempmedbench_synonyms.progress import format_size

    path, idx = _lacking(tmp_path, "full zip", "MRHIER"), tmp_path / "idx"
    with zipfile.ZipFile(path) as zf:
        nlm = zf.getinfo("2099AB-full/2099ab-1-meta.nlm").file_size
    assert check_meta(path, idx).message == (
        f"{path} is a full release zip, indexed in {idx}: not yet MRCONSO ({format_size(nlm)} "
        "to read): each is built when a command first needs it; the other files its .nlm holds "
        "are listed when MRCONSO is first indexed"
    )
    assert check_meta(_damaged_full_zip(tmp_path / "damaged"), idx).ok
    assert (passes, idx.exists()) == ([], False)
    ix = LocalIndex(path, index_dir=idx)
    (conso,) = ix.build(["MRCONSO"])
    ix.close()
    del passes[:]
    todo = ", ".join(f"{f} ({format_size(_need(path, f)[0])} to read)"
                     for f in ("MRDEF", "MRREL", "MRSTY", "MRSAB"))  # fmt: skip
    assert check_meta(path, idx).message == (
        f"{path} is a META of 5 files, indexed in {idx}: MRCONSO (71 rows, "
        f"{format_size(conso.bytes)}); not yet {todo}: each is built when a command first needs it"
    )
    assert passes == []


def test_an_mrconso_part_without_the_listing_lists_the_nlm_when_a_file_is_needed(
    tmp_path: Path, passes: list[str]
) -> None:
    """A part built before the listing was kept: the .nlm is read through once a run, for a
    file whose part is not built (a part built says its file is there)."""
    from tempmedbench_synonyms.doctor import check_meta

    path, idx = _lacking(tmp_path, "full zip", "MRDEF"), tmp_path / "idx"
    assert _umls("index", path, "--index-dir", idx, "-q")[0] == 0
    (conso,) = idx.glob("MRCONSO.*.sqlite")
    with contextlib.closing(sqlite3.connect(conso)) as db:
        db.execute("DROP TABLE index_listing")
        db.commit()
    del passes[:]
    assert _umls("relations", "C9000001", "--meta", path, "--index-dir", idx, "-q")[::2] == (0, "")
    assert passes == []  # its part is built
    code, _, err = _umls("concept", "C9000001", "--meta", path, "--index-dir", idx)
    assert (code, err.splitlines()) == (
        0, [f"listing the files {path} holds (its .nlm is read through)",
            "found CUI C9000001, UMLS 2099AB"],
    )  # fmt: skip
    assert passes == ["nlm"]
    assert check_meta(path, idx).message.endswith(
        "; the other files its .nlm holds are listed when one is needed"
    )


# -- a kept listing is used only for the .nlm it lists, and only as far as it holds --------------

WHEN = (2026, 1, 1, 0, 0, 0)


def _split(f: str, n: int) -> list[tuple[str, bytes]]:
    """``f``'s rows in ``n`` line-aligned gzip parts (as ``split -l``, then gzip)."""
    lines = (UMLS / f"{f}.RRF").read_bytes().splitlines(keepends=True)
    k = -(-len(lines) // n)
    pieces = [b"".join(lines[i : i + k]) for i in range(0, len(lines), k)]
    return [(f"{f}.RRF.a{'abcde'[i]}.gz", gzip.compress(p, mtime=0)) for i, p in enumerate(pieces)]


def _stored_nlm(mrrel_parts: int, filler: int) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        for f in engine.FILES:
            for name, data in _split(f, mrrel_parts if f == "MRREL" else 2):
                zf.writestr(zipfile.ZipInfo(f"2099AB/META/{name}", WHEN), data)
        zf.writestr(zipfile.ZipInfo("2099AB/META/filler.txt", WHEN), b"f" * filler)
    return buf.getvalue()


def _hidden_nlm_zip(path: Path, nlm: bytes) -> Path:
    """A full zip whose first MiB is a padding member and whose last MiB is the tail of a
    central directory of 5,000 empty members with long names: its .nlm (stored) lies in neither,
    so a change to it keeps the zip's identity (size, time, first and last MiB)."""
    pad = random.Random(8).randbytes(1_200_000)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr(zipfile.ZipInfo("2099AB-full/pad.bin", WHEN), pad)
        zf.writestr(zipfile.ZipInfo("2099AB-full/2099ab-1-meta.nlm", WHEN), nlm)
        for i in range(5000):  # (about 260 bytes an entry: 1.3 MB of central directory)
            zf.writestr(zipfile.ZipInfo(f"2099AB-full/x/{i:05d}{'x' * 200}", WHEN), b"")
    os.utime(path, ns=(1_767_000_000_000_000_000, 1_767_000_000_000_000_000))
    return path


def test_a_changed_zip_with_the_same_identity_is_not_cut_short_by_the_kept_listing(
    tmp_path: Path, passes: list[str]
) -> None:
    """v1 and v2 differ only in how MRREL is split (2 parts, 3); same size, time, first and last
    MiB. The listing kept from v1 is of another .nlm (its CRC-32 differs): it is not used, the
    .nlm is listed again, and MRREL is built whole (before: stopped after v1's 2 members, 10 of
    13 rows, kept)."""
    a, b = _stored_nlm(2, 1000), _stored_nlm(3, 1000)
    if len(b) > len(a):
        a = _stored_nlm(2, 1000 + len(b) - len(a))
    else:
        b = _stored_nlm(3, 1000 + len(a) - len(b))
    path, idx = tmp_path / "umls-2099AB-full.zip", tmp_path / "idx"
    _hidden_nlm_zip(path, a)
    first = path.read_bytes()
    index = LocalIndex(path, index_dir=idx)
    index.build(["MRCONSO"])  # v1: lists the .nlm, keeps the listing in MRCONSO's part
    index.close()
    _hidden_nlm_zip(path, b)
    second = path.read_bytes()
    mib = 1 << 20
    assert len(first) == len(second) and first != second
    assert first[:mib] == second[:mib] and first[-mib:] == second[-mib:]
    del passes[:]
    index = LocalIndex(path, index_dir=idx)
    assert index.holds("MRREL")  # as a command asks first: v1's listing is not v2's
    (built,) = index.build(["MRREL"])
    index.close()
    assert built.rows == 13
    assert passes == ["nlm", "nlm"]  # listed again, then MRREL's pass


def _kept(tmp_path: Path, *changes: str) -> tuple[Path, Path]:
    """A full zip whose MRCONSO is indexed, its kept listing then changed by ``changes``."""
    path = tmp_path / "umls-2099AB-full.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr(zipfile.ZipInfo("2099AB-full/2099ab-1-meta.nlm", WHEN), _stored_nlm(2, 10))
    idx = tmp_path / "idx"
    index = LocalIndex(path, index_dir=idx)
    index.build(["MRCONSO"])
    index.close()
    (conso,) = idx.glob("MRCONSO.*.sqlite")
    with contextlib.closing(sqlite3.connect(conso)) as db:
        for change in changes:
            db.execute(change)
        db.commit()
    return path, idx


def test_a_kept_listing_saying_fewer_members_does_not_cut_a_file_short(
    tmp_path: Path, passes: list[str]
) -> None:
    """The pass that stops at the listed last member checks it read the listed bytes: MRREL's
    first member alone is not, so it reads on to the end (before: 7 of 13 rows, kept)."""
    path, idx = _kept(tmp_path, "UPDATE index_listing SET members = 1 WHERE file = 'MRREL'")
    del passes[:]
    index = LocalIndex(path, index_dir=idx)
    assert index.holds("MRREL")
    (built,) = index.build(["MRREL"])
    index.close()
    assert built.rows == 13
    assert passes == ["nlm"]


@pytest.mark.parametrize(
    "change",
    [
        "UPDATE index_listing SET members = 0 WHERE file = 'MRREL'",
        "UPDATE index_listing SET members = -1 WHERE file = 'MRREL'",
        "UPDATE index_listing SET bytes = -75 WHERE file = 'MRREL'",
        "UPDATE index_listing SET bytes = 9000000000000000000 WHERE file = 'MRREL'",
        "UPDATE index_listing SET bytes = '421' WHERE file = 'MRREL'",
        "UPDATE index_listing SET members = 1.5 WHERE file = 'MRREL'",
        "INSERT INTO index_listing VALUES ('MRFOO', 3, 10)",
        "INSERT INTO index_listing VALUES ('../x', 3, 10)",
        "DELETE FROM index_listing WHERE file = 'MRCONSO'",
    ],
)
def test_a_kept_listing_that_cannot_be_is_listed_again(
    change: str, tmp_path: Path, passes: list[str]
) -> None:
    """A kept listing is checked: names of META files, MRCONSO among them, at least a member
    each, bytes within the .nlm; else it is absent and the .nlm listed again when needed
    (before: a negative estimate, a false "too little free space", a file cut short)."""
    from tempmedbench_synonyms.progress import format_size

    path, idx = _kept(tmp_path, change)
    del passes[:]
    progress = io.StringIO()
    index = LocalIndex(path, index_dir=idx, progress=progress)
    assert index.holds("MRREL")
    (built,) = index.build(["MRREL"])
    index.close()
    assert built.rows == 13
    assert passes == ["nlm", "nlm"]  # listed again, then MRREL's pass
    own, need = _need(path, "MRREL")
    said = progress.getvalue().splitlines()
    assert said[:2] == [
        f"listing the files {path} holds (its .nlm is read through)",
        f"indexing MRREL.RRF of {path} once: about 1 s and {format_size(need)} of disk in {idx}",
    ]
    assert said[2].startswith(
        f"indexing MRREL: 100% ({format_size(own)} of {format_size(own)}), 13 rows, done in "
    )


def test_a_build_of_one_file_uses_the_kept_listing(tmp_path: Path, passes: list[str]) -> None:
    """build([name]) over an indexed MRCONSO takes the kept listing as ``known`` does (before:
    the .nlm listed again, then read for the file: 2 passes)."""
    path, idx = _kept(tmp_path)
    del passes[:]
    index = LocalIndex(path, index_dir=idx)
    (built,) = index.build(["MRREL"])
    index.close()
    assert built.rows == 13
    assert passes == ["nlm"]


@pytest.mark.parametrize("files", [None, ["MRREL"]], ids=["all", "MRREL"])
def test_an_untrusted_index_folder_is_refused_before_the_nlm_is_read(
    files: list[str] | None, tmp_path: Path, passes: list[str]
) -> None:
    path = _lacking(tmp_path, "full zip", "MRHIER")
    idx = tmp_path / "idx"
    idx.mkdir()
    idx.chmod(0o777)
    index = LocalIndex(path, index_dir=idx)
    with pytest.raises(UntrustedError, match="can be written by other users"):
        index.build(files)
    assert passes == []  # (before: build() read the .nlm through, then refused the folder)


def test_a_command_over_an_untrusted_index_folder_is_refused_before_the_nlm_is_read(
    tmp_path: Path, passes: list[str]
) -> None:
    """Refused at once, exit 2, as before the .nlm was listed first (which read it through, then
    refused the folder)."""
    path = _lacking(tmp_path, "full zip", "MRHIER")
    idx = tmp_path / "idx"
    idx.mkdir()
    idx.chmod(0o777)
    code, out, err = _umls("concept", "C9000001", "--meta", path, "--index-dir", idx)
    assert (code, out, err.splitlines()) == (
        2, "",
        [f"error: {idx}: the index folder can be written by other users (mode 0777), so what it "
         "holds cannot be trusted",
         f"hint: chmod go-w {idx}, or use a folder of your own (--index-dir or "
         "TEMPMEDBENCH_INDEX_DIR)"],
    )  # fmt: skip
    assert passes == []
