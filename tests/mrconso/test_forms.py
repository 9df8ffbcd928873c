"""--mrconso as NLM ships it: every form rebuilds the same verified bytes; what is not MRCONSO is
refused before anything is written. All data is invented (the mini release's invented rows)."""

from __future__ import annotations

import gzip
import io
import json
import os
import random
import signal
import struct
import subprocess
import sys
import threading
import zipfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers import ROOT, outputs, patch_zip_member, wait_until
from tempmedbench_synonyms import zips
from tempmedbench_synonyms.cli import app
from tempmedbench_synonyms.errors import BadInputError
from tempmedbench_synonyms.mrconso.forms import MrconsoInput, locate_meta, named_release
from tempmedbench_synonyms.regen.release import FULL_TABLE, SYNONYM_SURFACE

PLAIN = (ROOT / "fixtures/umls/MRCONSO.RRF").read_bytes()
# Invented filler rows of a source the table does not name, so that the file is larger than the
# sniffed head and the parts are cut inside rows.
FILLER = b"".join(
    f"C8{i:06d}|ENG|P|L8{i:06d}|PF|S8{i:06d}|Y|A8{i:07d}||||ZZFILLER|PT|Z{i}|"
    f"invented filler name {i}|0|N|256|\n".encode()
    for i in range(1500)
)
BIG = PLAIN + FILLER
# The hostile cases below cut BIG inside rows: at byte 5,000 and at two thirds (the third part).
assert (
    BIG[4999:5000] != b"\n"
    and BIG[99_999:100_000] != b"\n"
    and len(BIG) > 100_000
    and BIG[: -(-len(BIG) // 3) * 2].endswith(b"\n") is False
)
runner = CliRunner()


@pytest.fixture(params=["isal", "zlib"])
def inflate(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each compressed form is read with ISA-L's inflate (isal, installed here with the package)
    and with the standard library's (zlib, as where isal has no wheel): the same outcome."""
    if request.param == "zlib":
        monkeypatch.setattr(zips, "inflate", zlib)
    else:
        assert zips.inflate.__name__ == "isal.isal_zlib"
    return str(request.param)


def run(*args: str | Path) -> tuple[int, str, str]:
    result = runner.invoke(app, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


def rebuilt(folder: Path) -> dict[str, bytes]:
    return {rel: (folder / rel).read_bytes() for rel in (SYNONYM_SURFACE, FULL_TABLE)}


def split(data: bytes, n: int) -> list[bytes]:
    """``n`` parts of equal size, cut wherever that falls (inside rows)."""
    size = -(-len(data) // n)
    return [data[i : i + size] for i in range(0, len(data), size)]


def gz(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def write_parts(folder: Path, data: bytes = BIG) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for suffix, part in zip(("aa", "ab", "ac"), split(data, 3), strict=True):
        (folder / f"MRCONSO.RRF.{suffix}.gz").write_bytes(gz(part))


def nlm_bytes(data: bytes = BIG) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        z.writestr("2025AB/META/MRCOLS.RRF", b"invented|cols|\n")
        for suffix, part in zip(("aa", "ab", "ac"), split(data, 3), strict=True):
            z.writestr(f"2025AB/META/MRCONSO.RRF.{suffix}.gz", gz(part))
        z.writestr("2025AB/META/MRSTY.RRF.gz", gz(b"C9000001|T047|B2.2|Invented|AT1||\n"))
    return buf.getvalue()


def make_form(tmp_path: Path, form: str, data: bytes = BIG) -> tuple[Path, dict[str, object]]:
    """``data`` (the invented MRCONSO) in one shipped form: the path to pass, and the JSON
    ``mrconso``."""
    parts = ["MRCONSO.RRF.aa.gz", "MRCONSO.RRF.ab.gz", "MRCONSO.RRF.ac.gz"]
    if form == "gzip":
        path = tmp_path / "MRCONSO.RRF.gz"
        path.write_bytes(gz(data))
        return path, {"path": str(path), "kind": "gzip", "members": [], "parts": []}
    if form in ("one part", "parts folder"):
        write_parts(tmp_path / "META", data)
        path = tmp_path / "META" / "MRCONSO.RRF.ab.gz" if form == "one part" else tmp_path / "META"
        return path, {"path": str(path), "kind": "parts", "members": [], "parts": parts}
    if form in ("META folder", "folder holding META"):
        (tmp_path / "2025AB/META").mkdir(parents=True)
        (tmp_path / "2025AB/META/MRCONSO.RRF").write_bytes(data)
        path = tmp_path / "2025AB" / ("META" if form == "META folder" else "")
        plain = tmp_path / "2025AB/META/MRCONSO.RRF"
        return path, {"path": str(plain), "kind": "file", "members": [], "parts": []}
    if form == "metathesaurus zip":
        path = tmp_path / "umls-2025AB-metathesaurus-full.zip"
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("2025AB/README.txt", b"invented")
            z.writestr("2025AB/META/MRCONSO.RRF", data)
        members = ["2025AB/META/MRCONSO.RRF"]
        return path, {"path": str(path), "kind": "zip", "members": members, "parts": []}
    if form == "nlm":
        path = tmp_path / "2025ab-1-meta.nlm"
        path.write_bytes(nlm_bytes(data))
        members = [f"2025AB/META/{p}" for p in parts]
        return path, {"path": str(path), "kind": "zip", "members": members, "parts": parts}
    if form in ("full zip, nlm deflated", "full zip, nlm stored"):
        path = tmp_path / "umls-2025AB-full.zip"
        how = zipfile.ZIP_DEFLATED if form.endswith("deflated") else zipfile.ZIP_STORED
        with zipfile.ZipFile(path, "w", how) as z:
            z.writestr("2025AB-full/README.txt", b"invented")
            z.writestr("2025AB-full/2025ab-1-meta.nlm", nlm_bytes(data))
            z.writestr("2025AB-full/mmsys.zip", b"PK\x05\x06" + bytes(18))
        members = ["2025AB-full/2025ab-1-meta.nlm"] + [f"2025AB/META/{p}" for p in parts]
        return path, {"path": str(path), "kind": "nested zip", "members": members, "parts": parts}
    raise AssertionError(form)


FORMS = [
    "gzip", "one part", "parts folder", "META folder", "folder holding META",
    "metathesaurus zip", "nlm", "full zip, nlm deflated", "full zip, nlm stored",
]  # fmt: skip


@pytest.mark.parametrize("form", FORMS)
def test_every_shipped_form_rebuilds_the_plain_files_bytes(
    tmp_path: Path, mini: Path, form: str, inflate: str
) -> None:
    plain = tmp_path / "plain" / "MRCONSO.RRF"
    plain.parent.mkdir()
    plain.write_bytes(BIG)
    code, _, _ = run("regenerate", mini, "--mrconso", plain, "--out", tmp_path / "out-plain")
    assert code == 0
    where = tmp_path / "form"
    where.mkdir()
    path, described = make_form(where, form)
    code, out, err = run("regenerate", mini, "--mrconso", path, "--out", tmp_path / "out", "--json")
    assert code == 0, err
    assert rebuilt(tmp_path / "out") == rebuilt(tmp_path / "out-plain")
    report = json.loads(out)
    assert report["outcome"] == "verified"
    assert report["mrconso"] == described
    assert report["missing_sources"] == []
    assert f"  MRCONSO        {described['path']}" in err


# A full zip is left out: its .nlm holds more members after MRCONSO's, unread, so the count
# stops short of the .nlm's size.
@pytest.mark.parametrize("form", [f for f in FORMS if not f.startswith("full zip")])
def test_every_form_reads_its_bytes_and_counts_the_progress_to_its_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, form: str
) -> None:
    from tempmedbench_synonyms.mrconso import forms

    monkeypatch.setattr(forms, "READ_SIZE", 4096)
    path, _ = make_form(tmp_path, form)
    found = forms.locate(path)
    read = list(found.blocks(threading.Event()))
    assert b"".join(raw for _, raw in read) == BIG
    counts = [n for n, _ in read]
    assert counts == sorted(counts)
    assert counts[-1] == found.size


@pytest.mark.parametrize("form", ["plain", *FORMS, "pipe", "gzip pipe"])
def test_a_complete_last_row_without_its_line_feed_is_read_with_a_note(
    tmp_path: Path, mini: Path, form: str, inflate: str
) -> None:
    """A real public MRCONSO sample ends with a complete row and no line feed (issue 17, item
    14): in every form, the row is read and a note says so; only a row cut short is refused."""
    # the last row is the kept synonym of 9990101009: unread, the run would not verify
    rows = BIG.rstrip(b"\n").split(b"\n")
    kept = next(r for r in rows if b"|A9000013|" in r)
    unended = b"\n".join([r for r in rows if r != kept] + [kept])
    where = tmp_path / "form"
    where.mkdir()
    writer = None
    if form in ("plain", "pipe", "gzip pipe"):
        path = where / ("MRCONSO.RRF" if form == "plain" else "mrconso.fifo")
        parts: list[str] = []
        if form == "plain":
            path.write_bytes(unended)
        else:
            os.mkfifo(path)
            data = gz(unended) if form == "gzip pipe" else unended
            writer = threading.Thread(target=lambda: path.write_bytes(data))
            writer.start()
    else:
        path, described = make_form(where, form, unended)
        parts = described["parts"]  # type: ignore[assignment]
    code, out, err = run("regenerate", mini, "--mrconso", path, "--out", tmp_path / "out", "--json")
    if writer is not None:
        writer.join(timeout=10)
    assert code == 0, err
    report = json.loads(out)
    assert report["outcome"] == "verified"
    last = f" (its last part {parts[-1]})" if parts else ""
    note = (
        f"{path}{last} does not end with a line feed: its last row is complete (18 fields, each "
        "followed by '|') and was read"
    )
    assert report["warnings"] == [note]
    assert f"  warning        {note}" in err


@pytest.mark.parametrize("form", [*FORMS, "pipe", "gzip pipe"])
def test_a_damaged_needed_row_deep_in_a_stream_is_named_by_its_line(
    tmp_path: Path, mini: Path, monkeypatch: pytest.MonkeyPatch, form: str
) -> None:
    """Many small blocks, the damaged row near the end: its line is counted as a pipe is read,
    and counted again from the start for every form that can be read again."""
    from tempmedbench_synonyms.mrconso import forms

    monkeypatch.setattr(forms, "READ_SIZE", 4096)
    rows = BIG.rstrip(b"\n").split(b"\n")
    kept = next(r for r in rows if b"|A9000013|" in r)
    rows.remove(kept)
    rows.insert(len(rows) - 100, kept.replace(b"|256|", b"|"))  # 17 fields
    line = len(rows) - 100
    data = b"\n".join(rows) + b"\n"
    writer = None
    if form in ("pipe", "gzip pipe"):
        path = tmp_path / "mrconso.fifo"
        os.mkfifo(path)
        sent = gz(data) if form == "gzip pipe" else data
        writer = threading.Thread(target=lambda: path.write_bytes(sent))
        writer.start()
    else:
        path, _ = make_form(tmp_path, form, data)
    code, out, err = run("regenerate", mini, "--mrconso", path, "--json")
    if writer is not None:
        writer.join(timeout=10)
    assert code == 2, err
    assert json.loads(out)["message"] == (
        f"{path}, line {line}: an MRCONSO.RRF row has 18 fields, each followed by '|'; this line "
        "has 17"
    )
    assert outputs(mini) == []


#: The release ``--umls-release current`` means for each form as ``make_form`` names it: the
#: nearest name that says one (a zip member, the .nlm, the zip, a folder); None: none says one.
NAMED = {
    "gzip": None, "one part": None, "parts folder": None, "META folder": "2025AB",
    "folder holding META": "2025AB", "metathesaurus zip": "2025AB", "nlm": "2025AB",
    "full zip, nlm deflated": "2025AB", "full zip, nlm stored": "2025AB",
}  # fmt: skip


@pytest.mark.parametrize("form", FORMS)
def test_current_is_the_release_the_forms_names_say(tmp_path: Path, mini: Path, form: str) -> None:
    where = tmp_path / "form"
    where.mkdir()
    path, described = make_form(where, form)
    out = tmp_path / "out"
    code, stdout, err = run("regenerate", mini, "--mrconso", path, "--umls-release", "current",
                            "--out", out, "--json")  # fmt: skip
    report = json.loads(stdout)
    if NAMED[form] is None:
        assert (code, report["outcome"], report["umls_release"]) == (2, "bad_input", None)
        assert "--umls-release current means the release --mrconso comes from" in err
        assert not out.exists()
    else:
        assert (code, report["outcome"], report["umls_release"]) == (0, "verified", NAMED[form])
        assert report["mrconso"] == described


@pytest.mark.parametrize(
    ("names", "release"),
    [
        (["/data/umls/2025AB/META/MRCONSO.RRF"], "2025AB"),
        (["/data/2024AA-old/umls/2025ab/META/MRCONSO.RRF"], "2025AB"),  # the nearest wins
        (["2025AB/META/MRCONSO.RRF", "/data/umls-2024AA-full.zip"], "2025AB"),  # members first
        (["/data/umls-2024AA-2025AB/MRCONSO.RRF"], None),  # no name holds exactly one match
        (["r/2024AB/2025AA_2025AB/META/MRCONSO.RRF"], "2024AB"),  # a name of two: the next out
        (["r/2024AB/2025AB_2025AB/META/MRCONSO.RRF"], "2024AB"),  # two equal matches are two
        (["2025AA_2025AB/MRCONSO.RRF", "/data/umls-2024AA-full.zip"], "2024AA"),
        (["/data/2025AB2/META/MRCONSO.RRF", "/data/x2025AA/MRCONSO.RRF"], None),  # inside words
        (["/data/2025AC/MRCONSO.RRF", "/data/12025AB/MRCONSO.RRF"], None),  # no such release
        (["/data/umls/MRCONSO.RRF"], None),
    ],
)
def test_the_release_a_name_says(names: list[str], release: str | None) -> None:
    assert named_release(names) == release


class _Unseekable(io.RawIOBase):
    """A write-only stream with no seek: zipfile then writes data descriptors (flag bit 3)."""

    def __init__(self) -> None:
        self.data = bytearray()

    def writable(self) -> bool:
        return True

    def write(self, b: bytes) -> int:  # type: ignore[override]
        self.data += b
        return len(b)


def streamed_nlm(members: dict[str, bytes], *, zip64: bool) -> bytes:
    """An .nlm written as a stream: deflated members with data descriptors (and zip64 sizes)."""
    out = _Unseekable()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            with z.open(name, "w", force_zip64=zip64) as f:
                f.write(data)
    return bytes(out.data)


def _nlm(members: dict[str, bytes], *, descriptor: bool) -> bytes:
    """An .nlm of deflated members, each with its sizes in its local header, or streamed."""
    if descriptor:
        return streamed_nlm(members, zip64=False)
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return inner.getvalue()


@pytest.mark.parametrize("zip64", [False, True])
@pytest.mark.parametrize("inner", ["parts", "plain"])
def test_a_streamed_nlm_inside_the_full_zip(
    tmp_path: Path, mini: Path, zip64: bool, inner: str, inflate: str
) -> None:
    if inner == "parts":
        pairs = zip(("aa", "ab"), split(BIG, 2), strict=True)
        members = {f"2025AB/META/MRCONSO.RRF.{x}.gz": gz(p) for x, p in pairs}
    else:
        members = {"2025AB/META/MRCONSO.RRF": BIG}
    members = {"2025AB/META/MRDOC.RRF": b"invented|doc|\n", **members}
    path = tmp_path / "umls-2025AB-full.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("2025AB-full/2025ab-1-meta.nlm", streamed_nlm(members, zip64=zip64))
    code, out, err = run("regenerate", mini, "--mrconso", path, "--out", tmp_path / "o", "--json")
    assert code == 0, err
    read = [n for n in members if "MRCONSO" in n]
    assert json.loads(out)["mrconso"] == {
        "path": str(path), "kind": "nested zip",
        "members": ["2025AB-full/2025ab-1-meta.nlm", *read],
        "parts": [n.rsplit("/", 1)[1] for n in read] if inner == "parts" else [],
    }  # fmt: skip


class _FedOnceEnded:
    """The standard library's decompressor, refusing to be fed once its stream has ended: there
    zlib returns nothing, keeps the input as ``unconsumed_tail`` and adds it to ``unused_data``
    again, so a reader that feeds the tail back loops for ever, its memory growing."""

    def __init__(self, wbits: int) -> None:
        self.d = zlib.decompressobj(wbits)

    def decompress(self, data: bytes, max_length: int = 0) -> bytes:
        assert not self.d.eof, "fed again after its end"
        return self.d.decompress(data, max_length)

    def __getattr__(self, name: str) -> object:
        return getattr(self.d, name)


@pytest.mark.parametrize("form", ["gzip of two members", "streamed nlm"])
def test_a_member_ending_inside_a_read_is_read_once_with_the_standard_librarys_inflate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, form: str
) -> None:
    """A gzip member (``cat MRCONSO.RRF.a?.gz``) or a streamed .nlm's deflated member that ends
    inside a block whose output filled a read: zlib keeps what follows as ``unconsumed_tail``
    too, and the reader goes on to the next member instead of feeding it again (it hung)."""
    import types

    from tempmedbench_synonyms.mrconso import forms

    monkeypatch.setattr(forms, "READ_SIZE", 4096)
    monkeypatch.setattr(zips, "inflate", types.SimpleNamespace(decompressobj=_FedOnceEnded))
    cut = BIG.index(b"\n", len(BIG) // 2) + 1
    if form == "gzip of two members":
        path = tmp_path / "MRCONSO.RRF.gz"
        path.write_bytes(gz(BIG[:cut]) + gz(BIG[cut:]))
    else:
        members = {"2025AB/META/MRCONSO.RRF": BIG, "2025AB/META/MRSTY.RRF": MRSTY}
        path = tmp_path / "umls-2025AB-full.zip"
        with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
            z.writestr("2025AB-full/2025ab-1-meta.nlm", streamed_nlm(members, zip64=False))
    read = list(forms.locate(path).blocks(threading.Event()))
    assert b"".join(raw for _, raw in read) == BIG
    assert max(len(raw) for _, raw in read) == 4096


def test_an_nlm_of_deflated_members_is_read_whole_by_either_inflate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, inflate: str
) -> None:
    """A member's last compressed bytes can all be taken in while its output still waits (ISA-L
    holds it): the reader asks for that output rather than read past the member's size (it was
    "cannot read: truncated member" with isal)."""
    from tempmedbench_synonyms.mrconso import forms

    monkeypatch.setattr(forms, "READ_SIZE", 4096)
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("2025AB/META/MRCONSO.RRF", BIG)
        z.writestr("2025AB/META/MRSTY.RRF", MRSTY)
    path = tmp_path / "umls-2025AB-full.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr("2025AB-full/2025ab-1-meta.nlm", inner.getvalue())
    read = list(forms.locate(path).blocks(threading.Event()))
    assert b"".join(raw for _, raw in read) == BIG


@pytest.mark.parametrize("descriptor", [False, True])
def test_a_member_of_another_file_is_passed_over_not_inflated_when_its_size_is_known(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, descriptor: bool, inflate: str
) -> None:
    """A read of a full release zip's .nlm (through, or up to the file's last member once it is
    listed) passes over the members of the other files as stored (their size in their header),
    not inflated; only a member written with a data descriptor (its size after it) is inflated
    to find its end."""
    members = {"2025AB/META/MRCONSO.RRF": BIG, "2025AB/META/MRSTY.RRF": MRSTY}
    nlm = _nlm(members, descriptor=descriptor)
    path = tmp_path / "umls-2025AB-full.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr("2025AB-full/2025ab-1-meta.nlm", nlm)
    inflated: list[int] = []
    real = zips.inflate.decompressobj

    def counted(wbits: int) -> object:
        inflated.append(wbits)
        return real(wbits)

    monkeypatch.setattr(zips.inflate, "decompressobj", counted)
    found = locate_meta(path)
    assert _blocks_of(found["MRSTY"]) == MRSTY
    assert found["MRSTY"].members == ["2025AB-full/2025ab-1-meta.nlm", "2025AB/META/MRSTY.RRF"]
    # MRCONSO's member first (inflated only to find its end), then MRSTY's
    assert inflated == ([-15, -15] if descriptor else [-15])
    del inflated[:]
    assert _blocks_of(found["MRCONSO"]) == BIG
    assert inflated == [-15]  # (the .nlm listed by MRSTY's read: this one ends after MRCONSO)


@pytest.mark.parametrize("wrong", [-5, 5])
def test_a_member_passed_over_whose_header_gives_a_wrong_size_is_bad_input_not_an_end(
    tmp_path: Path, wrong: int
) -> None:
    """SPEC 8: a member of another file passed over by the size its local header gives lands
    where the next header must start; anything else there is bad input, never the end of the
    members (a part after it would be left out, its rows lost without a word)."""
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("2025AB/META/MRCONSO.RRF.aa.gz", gz(PLAIN))
        at = inner.tell()
        z.writestr("2025AB/META/MRSAB.RRF", FILLER)
        z.writestr("2025AB/META/MRCONSO.RRF.ab.gz", gz(PLAIN))
    nlm = bytearray(inner.getvalue())
    (csize,) = struct.unpack_from("<I", nlm, at + 18)
    struct.pack_into("<I", nlm, at + 18, csize + wrong)
    path = tmp_path / "umls-2025AB-full.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr("2025AB-full/2025ab-1-meta.nlm", bytes(nlm))
    with pytest.raises(BadInputError) as caught:
        _blocks_of(locate_meta(path)["MRCONSO"])
    assert str(caught.value) == (
        f"{path} > 2025AB-full/2025ab-1-meta.nlm: cannot read: member 2025AB/META/MRSAB.RRF does "
        "not end where its local header says (no member header after it)"
    )


def test_an_nlm_cut_short_after_a_member_is_bad_input_not_its_end(tmp_path: Path) -> None:
    """An .nlm that ends after a member, with no central directory, has lost what followed (here
    the second part of MRCONSO): bad input, never a file read to its end."""
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("2025AB/META/MRCONSO.RRF.aa.gz", gz(PLAIN))
        end = inner.tell()
        z.writestr("2025AB/META/MRCONSO.RRF.ab.gz", gz(PLAIN))
    path = tmp_path / "umls-2025AB-full.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr("2025AB-full/2025ab-1-meta.nlm", inner.getvalue()[:end])
    with pytest.raises(BadInputError) as caught:
        _blocks_of(locate_meta(path)["MRCONSO"])
    assert str(caught.value) == (
        f"{path} > 2025AB-full/2025ab-1-meta.nlm: cannot read: it ends after member "
        "2025AB/META/MRCONSO.RRF.aa.gz, with no central directory (a truncated file?)"
    )


@pytest.mark.parametrize(
    ("nlm", "problem"),
    [
        (b"", "it is empty"),
        (b"not a zip at all", "no member header at its start"),
        (b"PK\x03\x04\x14\x00", "truncated local header"),
    ],
)
def test_a_damaged_nlm_is_bad_input_naming_the_nlm_not_only_the_zip(
    tmp_path: Path, nlm: bytes, problem: str
) -> None:
    """The release zip is whole: what is damaged ("it") is its .nlm member, which is named."""
    path = tmp_path / "umls-2025AB-full.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr("2025AB-full/2025ab-1-meta.nlm", nlm)
    with pytest.raises(BadInputError) as caught:
        _blocks_of(locate_meta(path)["MRCONSO"])
    assert str(caught.value) == f"{path} > 2025AB-full/2025ab-1-meta.nlm: cannot read: {problem}"


def test_a_full_zip_whose_nlm_holds_no_mrconso(tmp_path: Path, mini: Path) -> None:
    path = tmp_path / "umls-2025AB-full.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(
            "2025AB-full/2025ab-2-meta.nlm", streamed_nlm({"x/MRSTY.RRF": MRSTY}, zip64=False)
        )
    code, out, _ = run("regenerate", mini, "--mrconso", path, "--json")
    assert code == 2
    assert json.loads(out)["message"] == (
        f"{path}: none of its members 2025AB-full/2025ab-2-meta.nlm holds MRCONSO.RRF or its parts"
    )


@pytest.mark.parametrize("compressed", [True, False])
def test_a_pipe_is_read_once_as_a_stream(tmp_path: Path, mini: Path, compressed: bool) -> None:
    fifo = tmp_path / "mrconso.fifo"
    os.mkfifo(fifo)

    def feed() -> None:
        with open(fifo, "wb") as f:
            f.write(gz(BIG) if compressed else BIG)

    writer = threading.Thread(target=feed)
    writer.start()
    code, out, err = run("regenerate", mini, "--mrconso", fifo, "--out", tmp_path / "o", "--json")
    writer.join(timeout=10)
    assert code == 0, err
    assert json.loads(out)["mrconso"] == {
        "path": str(fifo), "kind": "pipe", "members": [], "parts": [],
    }  # fmt: skip


def test_an_empty_pipe_is_bad_input(tmp_path: Path, mini: Path) -> None:
    fifo = tmp_path / "mrconso.fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: open(fifo, "wb").close())
    writer.start()
    code, out, _ = run("regenerate", mini, "--mrconso", fifo, "--json")
    writer.join(timeout=10)
    assert code == 2
    assert json.loads(out)["message"] == f"{fifo}: not an MRCONSO.RRF file: it is empty"


def test_a_bom_is_removed_with_a_note(tmp_path: Path, mini: Path) -> None:
    path = tmp_path / "MRCONSO.RRF"
    path.write_bytes(b"\xef\xbb\xbf" + PLAIN)
    code, out, err = run("regenerate", mini, "--mrconso", path, "--json")
    assert code == 0
    note = (
        f"{path} starts with a UTF-8 byte order mark (BOM), which MRCONSO.RRF does not have: "
        "it was removed before the first row was read"
    )
    assert json.loads(out)["warnings"] == [note]
    assert f"  warning        {note}" in err
    # the same in a stream
    (tmp_path / "MRCONSO.RRF.gz").write_bytes(gz(b"\xef\xbb\xbf" + BIG))
    code, out, _ = run("regenerate", mini, "--mrconso", tmp_path / "MRCONSO.RRF.gz", "--json")
    assert code == 0 and len(json.loads(out)["warnings"]) == 1


MRSTY = b"C9000001|T047|B2.2.1.2.1|Disease or Syndrome|AT0000001|256|\n"
HOSTILE: dict[str, tuple[Callable[[Path], Path], str]] = {
    "README": (
        lambda d: _write(d / "README.txt", b"UMLS 2025AB\nThis is an invented readme.\n"),
        "line 1: not an MRCONSO.RRF file: an MRCONSO.RRF row has 18 fields, each followed by "
        "'|'; this line has 1 and no trailing |: 'UMLS 2025AB'",
    ),
    "MRSTY.RRF": (
        lambda d: _write(d / "MRSTY.RRF", MRSTY * 3),
        "line 1: not an MRCONSO.RRF file: an MRCONSO.RRF row has 18 fields, each followed by "
        "'|'; this line has 6: 'C9000001|T047|B2.2.1.2.1|Disease or Syndrome|AT0000001|256|'",
    ),
    "binary": (
        lambda d: _write(d / "MRCONSO.RRF", bytes(range(256)) * 8),
        "not an MRCONSO.RRF file: it is binary (a NUL byte at byte 0)",
    ),
    "empty": (lambda d: _write(d / "MRCONSO.RRF", b""), "not an MRCONSO.RRF file: it is empty"),
    "empty gzip": (
        lambda d: _write(d / "MRCONSO.RRF.gz", gz(b"")),
        "not an MRCONSO.RRF file: it is empty",
    ),
    "no CUI": (
        lambda d: _write(d / "MRCONSO.RRF", PLAIN.replace(b"C9000001|", b"X9000001|", 1)),
        "line 1: not an MRCONSO.RRF file: its first field 'X9000001' is not a CUI (C and 7 digits)",
    ),
    "not UTF-8": (
        lambda d: _write(d / "MRCONSO.RRF", PLAIN.replace(b"|", b"|\xff", 1)),
        "line 1: not an MRCONSO.RRF file: it is not UTF-8 text (byte 0xff)",
    ),
    "one endless line": (
        lambda d: _write(d / "MRCONSO.RRF", b"C9000001|" * 20000),
        "not an MRCONSO.RRF file: its first line is longer than 65,536 bytes with no line end",
    ),
    "endless line gzip": (
        lambda d: _write(d / "MRCONSO.RRF.gz", gz(PLAIN + b"x" * (3 << 20))),
        # the endless line starts where the invented file ends
        f"a line longer than 1,048,576 bytes (from byte {len(PLAIN):,}): not an MRCONSO.RRF row",
    ),
    "a zip of something else": (
        lambda d: _zip(d / "umls-2025AB-metathesaurus-full.zip", {"2025AB/META/MRSTY.RRF": MRSTY}),
        "no MRCONSO.RRF, MRCONSO.RRF.gz, parts MRCONSO.RRF.aa.gz, ... nor *-meta.nlm among its 1 "
        "members (2025AB/META/MRSTY.RRF)",
    ),
    "a part missing": (
        lambda d: _parts_without(d, "MRCONSO.RRF.ab.gz"),
        "the split parts of MRCONSO.RRF are not complete: found MRCONSO.RRF.aa.gz, "
        "MRCONSO.RRF.ac.gz; MRCONSO.RRF.ab.gz is missing or out of order",
    ),
    "the last part missing": (
        lambda d: _parts_without(d, "MRCONSO.RRF.ac.gz"),
        "ends mid-row after its last part MRCONSO.RRF.ab.gz: is the last part missing or the "
        "file truncated?",
    ),
    "a plain file cut short (head -c 5000)": (
        lambda d: _write(d / "MRCONSO.RRF", BIG[:5000]),
        "ends mid-row: is the last part missing or the file truncated?",
    ),
    "a gzip of a file cut short": (
        lambda d: _write(d / "MRCONSO.RRF.gz", gz(BIG[:5000])),
        "ends mid-row: is the last part missing or the file truncated?",
    ),
    "a gzip of a file cut short past the sniffed head": (
        lambda d: _write(d / "MRCONSO.RRF.gz", gz(BIG[:100_000])),
        "ends mid-row: is the last part missing or the file truncated?",
    ),
    "a truncated part": (
        lambda d: _truncated_part(d),
        "cannot read: the gzip data ends before its end marker (a truncated file?)",
    ),
}


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


def _parts_without(folder: Path, name: str) -> Path:
    write_parts(folder / "META")
    (folder / "META" / name).unlink()
    return folder / "META"


def _truncated_part(folder: Path) -> Path:
    write_parts(folder / "META")
    last = folder / "META" / "MRCONSO.RRF.ac.gz"
    last.write_bytes(last.read_bytes()[:-30])
    return folder / "META"


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_what_is_not_mrconso_is_bad_input_and_nothing_is_outputs(
    tmp_path: Path, mini: Path, case: str, inflate: str
) -> None:
    make, problem = HOSTILE[case]
    path = make(tmp_path)
    before = outputs(mini)
    code, out, err = run("regenerate", mini, "--mrconso", path, "--json")
    assert code == 2, err
    report = json.loads(out)
    assert report["outcome"] == "bad_input"
    assert report["message"] == f"{path}: {problem}" or report["message"] == f"{path}, {problem}"
    assert f"error: {report['message']}" in err
    assert outputs(mini) == before == []


@pytest.mark.parametrize("where", ["zip", "gzip"])
def test_damaged_deflate_data_is_bad_input_naming_the_member(
    tmp_path: Path, mini: Path, where: str, inflate: str
) -> None:
    """A byte changed in the middle of the compressed data: the inflate fails or the CRC
    differs; either way exit 2 naming the file (and the zip member), nothing written."""
    if where == "zip":
        path = tmp_path / "umls-2025AB-metathesaurus-full.zip"
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("2025AB/META/MRCONSO.RRF", BIG)
    else:
        path = tmp_path / "MRCONSO.RRF.gz"
        path.write_bytes(gz(BIG))
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x55
    path.write_bytes(bytes(data))
    code, out, err = run("regenerate", mini, "--mrconso", path, "--json")
    report = json.loads(out)
    assert (code, report["outcome"]) == (2, "bad_input"), err
    named = f"{path}!2025AB/META/MRCONSO.RRF: damaged zip: " if where == "zip" else f"{path}: "
    assert report["message"].startswith(named), report["message"]
    assert outputs(mini) == []


def test_zipfile_reads_a_deflated_member_with_isals_inflate(tmp_path: Path) -> None:
    """zipfile keeps reading the headers, the declared size and the CRC; ISA-L inflates. Should a
    Python's zipfile name its decompressor otherwise, zlib's would stay (slower, same bytes):
    this test says so."""
    path, _ = make_form(tmp_path, "metathesaurus zip")
    with zipfile.ZipFile(path) as zf:
        with zips.open_member(zf, "2025AB/META/MRCONSO.RRF") as f:
            assert type(vars(f)["_decompressor"]) is type(zips.inflate.decompressobj(-15))
            assert zips.inflate.__name__ == "isal.isal_zlib"
            assert f.read() == BIG
        with zips.open_member(zf, "2025AB/README.txt") as f:  # written deflated too
            assert f.read() == b"invented"


def test_without_isal_the_standard_library_inflates(tmp_path: Path, mini: Path) -> None:
    """Where isal does not import (no wheel for the platform, a broken install), zlib inflates:
    the compressed forms still verify."""
    gzipped = _write(tmp_path / "MRCONSO.RRF.gz", gz(BIG))
    zipped, _ = make_form(tmp_path, "metathesaurus zip")
    script = (
        "import sys, zlib\n"
        "sys.modules['isal'] = None  # import isal raises ImportError\n"
        "from tempmedbench_synonyms import zips\n"
        "assert zips.inflate is zlib, zips.inflate\n"
        "from tempmedbench_synonyms.cli import main\n"
        "main()\n"
    )
    for path in (gzipped, zipped):
        proc = subprocess.run(
            [sys.executable, "-c", script, "regenerate", str(mini), "--mrconso", str(path),
             "--out", str(tmp_path / f"out-{path.name}"), "--json"],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["outcome"] == "verified"


def test_a_zip_of_many_members_gives_a_bounded_message(tmp_path: Path, mini: Path) -> None:
    path = tmp_path / "many.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        for i in range(1_000):  # some 8 KB of names unbounded
            z.writestr(f"d/f{i}", b"")
    code, out, err = run("regenerate", mini, "--mrconso", path, "--json")
    assert code == 2
    message = json.loads(out)["message"]
    assert message == (
        f"{path}: no MRCONSO.RRF, MRCONSO.RRF.gz, parts MRCONSO.RRF.aa.gz, ... nor *-meta.nlm "
        "among its 1,000 members (d/f0, d/f1, d/f2, d/f3, d/f4, d/f5, d/f6, d/f7, d/f8, d/f9, "
        "and 990 more)"
    )
    assert len(err) < 2000


def test_a_device_is_refused_at_once(tmp_path: Path, mini: Path) -> None:
    code, out, _ = run("regenerate", mini, "--mrconso", "/dev/zero", "--json")
    assert code == 2
    assert json.loads(out)["message"] == (
        "/dev/zero: is a character device, not a regular file, a folder or a pipe"
    )
    assert outputs(mini) == []


def test_a_gzip_named_mrconso_rrf_in_a_meta_folder(tmp_path: Path, mini: Path) -> None:
    (tmp_path / "META").mkdir()
    (tmp_path / "META" / "MRCONSO.RRF.gz").write_bytes(gz(BIG))
    code, out, _ = run("regenerate", mini, "--mrconso", tmp_path, "--out", tmp_path / "o", "--json")
    assert code == 0
    assert json.loads(out)["mrconso"]["kind"] == "gzip"


def test_a_damaged_zip_is_bad_input(tmp_path: Path, mini: Path) -> None:
    path = _write(tmp_path / "umls-2025AB-metathesaurus-full.zip", b"PK\x03\x04" + bytes(100))
    code, out, _ = run("regenerate", mini, "--mrconso", path, "--json")
    assert code == 2
    assert json.loads(out)["message"] == f"{path}: not a readable zip: File is not a zip file"


def test_mrconso_in_two_folders_of_a_zip_is_ambiguous(tmp_path: Path, mini: Path) -> None:
    path = _zip(tmp_path / "two.zip", {"A/META/MRCONSO.RRF": PLAIN, "B/META/MRCONSO.RRF": PLAIN})
    code, out, _ = run("regenerate", mini, "--mrconso", path, "--json")
    assert code == 2
    assert json.loads(out)["message"] == (
        f"{path}: holds MRCONSO in more than one folder (A/META/, B/META): "
        "A/META/MRCONSO.RRF, B/META/MRCONSO.RRF"
    )


def test_a_file_without_a_source_of_the_table_says_it_may_be_a_subset(
    tmp_path: Path, mini: Path
) -> None:
    path = tmp_path / "MRCONSO.RRF"
    path.write_bytes(b"".join(r for r in PLAIN.splitlines(True) if b"|RXNORM|" not in r))
    code, out, err = run("regenerate", mini, "--mrconso", path, "--json")
    assert code == 1
    report = json.loads(out)
    assert report["outcome"] == "mismatch" and report["missing_sources"] == ["RXNORM"]
    assert report["hint"] == (
        "your MRCONSO.RRF holds no row of source(s) RXNORM, which the table names: it may be a "
        "subset (MetamorphoSys can leave sources out); use the full MRCONSO.RRF of UMLS 2099AA"
    )
    assert f"hint: {report['hint']}" in err


def _group_members(pgid: int) -> list[int]:
    """Processes still alive in a process group (from /proc: no psutil)."""
    alive = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid and fields[0] != "Z":
                alive.append(int(entry.name))
    return alive


@pytest.mark.parametrize(
    ("presses", "name"),
    [(1, "MRCONSO.RRF"), (2, "MRCONSO.RRF"), (5, "MRCONSO.RRF"), (2, "MRCONSO.RRF.gz")],
)
def test_ctrl_c_during_a_scan_exits_130_and_leaves_no_process(
    tmp_path: Path, mini: Path, presses: int, name: str
) -> None:
    # plain: scanned by worker processes; gzip: decompressed by a reader thread
    big = tmp_path / name
    with gzip.open(big, "wb", compresslevel=1) if name.endswith(".gz") else open(big, "wb") as f:
        f.write(PLAIN)
        # about 180 MB, big enough to be scanned by worker processes; rows of a source the table
        # names, which the search hands back, so that the scan lasts long enough (0.5 s) for
        # the Ctrl-C to come during it even on a busy machine
        for _ in range(1200):
            f.write(FILLER.replace(b"|ZZFILLER|", b"|MTH|"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "tempmedbench_synonyms", "regenerate", str(mini),
         "--mrconso", str(big), "--out", str(tmp_path / "out")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    )  # fmt: skip
    assert proc.stderr is not None
    first = proc.stderr.readline().decode()
    assert first.startswith(f"scanning {name}: 0%"), first
    gap = threading.Event()  # never set: the pause between two presses of a person's Ctrl-C
    for _ in range(presses):  # as a terminal does: to the whole process group
        os.killpg(proc.pid, signal.SIGINT)
        gap.wait(0.05)
    try:
        _, err = proc.communicate(timeout=60)  # a hang guard, not a speed test
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err.decode()
    assert err.decode().endswith(
        "interrupted: nothing was left half-written; run the same command again\n"
    )
    assert "Traceback" not in err.decode()
    wait_until(lambda: _group_members(proc.pid) == [], "the scan's worker processes to end")
    assert outputs(tmp_path) == []


# --- zip members Python's zipfile cannot read: exit 2 naming the member, as --gps does --------


@pytest.mark.parametrize(
    ("offset", "value", "problem"),
    [
        (8, b"\x01\x00", "the member is encrypted (a password is required to read it)"),
        (10, b"\x09\x00", "the member is compressed with method 9 (Deflate64), which Python's "
                          "zipfile cannot read"),
    ],
    ids=["encrypted", "deflate64"],
)  # fmt: skip
def test_an_unreadable_zip_member_is_bad_input_naming_it(
    tmp_path: Path, mini: Path, offset: int, value: bytes, problem: str
) -> None:
    member = "2025AB/META/MRCONSO.RRF"
    z = tmp_path / "umls-2025AB-metathesaurus-full.zip"
    with zipfile.ZipFile(z, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr(member, PLAIN)
    patch_zip_member(z, member, offset=offset, value=value)
    code, out, err = run("regenerate", mini, "--mrconso", z, "--json")
    report = json.loads(out)
    assert (code, report["exit_code"], report["outcome"]) == (2, 2, "bad_input")
    assert report["message"] == f"{z}!{member}: {problem}"
    assert report["hint"] == (
        "extract MRCONSO.RRF (or its parts), or zip it again with standard deflate"
    )
    assert f"error: {z}!{member}: {problem}" in err
    assert outputs(mini) == []


def test_an_encrypted_nlm_in_a_full_zip_is_bad_input(tmp_path: Path, mini: Path) -> None:
    nlm = "2025AB-full/2025ab-1-meta.nlm"
    z = tmp_path / "umls-2025AB-full.zip"
    with zipfile.ZipFile(z, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr(nlm, nlm_bytes())
    patch_zip_member(z, nlm, offset=8, value=b"\x01\x00")
    code, out, _err = run("regenerate", mini, "--mrconso", z, "--json")
    report = json.loads(out)
    assert (code, report["message"]) == (
        2, f"{z}!{nlm}: the member is encrypted (a password is required to read it)"
    )  # fmt: skip
    assert outputs(mini) == []


def test_a_stream_shorter_than_the_sniffed_head_is_read_whole(tmp_path: Path, mini: Path) -> None:
    """A gzip of the 6 kB invented file: all of it is in the head ``sniff`` reads first."""
    path = _write(tmp_path / "MRCONSO.RRF.gz", gz(PLAIN))
    assert len(PLAIN) < 1 << 16 and PLAIN.endswith(b"\n")
    code, _, err = run("regenerate", mini, "--mrconso", path)
    assert code == 0, err
    assert "verified (exit 0): both files match expected_sha256.json" in err
    assert len(outputs(mini)) == 2


# -- a META's other files (SPEC 12): the same reader, any of MRDEF, MRREL, MRSTY, MRHIER, MRSAB --


def _blocks_of(inp: MrconsoInput) -> bytes:
    return b"".join(block for _, block in inp.blocks(threading.Event()))


def test_a_meta_folder_holds_each_file_in_its_own_form(tmp_path: Path) -> None:
    meta = tmp_path / "META"
    meta.mkdir()
    (meta / "MRCONSO.RRF").write_bytes(PLAIN)
    (meta / "MRSTY.RRF.gz").write_bytes(gz(MRSTY))
    for suffix, part in zip(("aa", "ab"), split(FILLER, 2), strict=True):
        (meta / f"MRREL.RRF.{suffix}.gz").write_bytes(gz(part))
        (meta / f"MRDEF.RRF.{suffix}.gz").write_bytes(gz(b"parts lose to the plain file"))
    (meta / "MRDEF.RRF").write_bytes(b"the plain file wins\n")
    found = locate_meta(tmp_path)  # the folder above META will do
    assert {k: (v.kind, v.parts) for k, v in found.items()} == {
        "MRCONSO": ("file", []),
        "MRDEF": ("file", []),
        "MRREL": ("parts", ["MRREL.RRF.aa.gz", "MRREL.RRF.ab.gz"]),
        "MRSTY": ("gzip", []),
    }
    assert [_blocks_of(found[f]) for f in ("MRDEF", "MRREL", "MRSTY")] == [
        b"the plain file wins\n", FILLER, MRSTY
    ]  # fmt: skip


def test_a_meta_files_missing_part_is_bad_input_naming_that_file(tmp_path: Path) -> None:
    (tmp_path / "MRCONSO.RRF").write_bytes(PLAIN)
    (tmp_path / "MRHIER.RRF.ab.gz").write_bytes(gz(b"x"))
    with pytest.raises(BadInputError) as caught:
        locate_meta(tmp_path)
    assert str(caught.value) == (
        f"{tmp_path}: the split parts of MRHIER.RRF are not complete: found MRHIER.RRF.ab.gz; "
        "MRHIER.RRF.aa.gz is missing or out of order"
    )


def test_a_full_zips_files_are_listed_by_reading_its_nlm_through(tmp_path: Path) -> None:
    """Its .nlm lists its members at its end: which files it holds is known once a pass has
    read it through (reading one of them), or by a pass of its own; each file is given, with
    that one listing."""
    path = tmp_path / "umls-2025AB-full.zip"
    members = {"2025AB/META/MRCONSO.RRF": PLAIN, "2025AB/META/MRSTY.RRF.gz": gz(MRSTY)}
    nlm = streamed_nlm(members, zip64=False)  # (data descriptors: no size in a local header)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("2025AB-full/2025ab-1-meta.nlm", nlm)
    with zipfile.ZipFile(io.BytesIO(nlm)) as inner:
        stored = {n.split("/")[-1].split(".")[0]: inner.getinfo(n).compress_size for n in members}
    found = locate_meta(path)
    assert set(found) == {"MRCONSO", "MRDEF", "MRREL", "MRSTY", "MRHIER", "MRSAB"}
    listing = found["MRCONSO"].listing
    assert listing is not None and {id(i.listing) for i in found.values()} == {id(listing)}
    assert listing.known is None  # nothing read yet
    assert (found["MRSTY"].release, _blocks_of(found["MRSTY"])) == ("2025AB", MRSTY)
    assert found["MRSTY"].members == ["2025AB-full/2025ab-1-meta.nlm", "2025AB/META/MRSTY.RRF.gz"]
    assert listing.known == {"MRCONSO", "MRSTY"}  # learned by that read
    # with each file's bytes in the .nlm (the estimate of its part), as passed
    assert {f: listing.size(f) for f in listing.known} == stored
    assert locate_meta(path)["MRDEF"].listing.files() == {"MRCONSO", "MRSTY"}  # type: ignore[union-attr]
    nlm_name = "2025AB-full/2025ab-1-meta.nlm"
    lacking = f"{path}: none of its members {nlm_name} holds MRDEF.RRF or its parts"
    with pytest.raises(BadInputError) as caught:
        _blocks_of(found["MRDEF"])
    assert str(caught.value) == lacking
    with pytest.raises(BadInputError) as caught:
        listing.size("MRDEF")
    assert str(caught.value) == lacking
    # a file read once listed: its bytes counted from 0 to its size (never past, the inflater
    # having read beyond its member), the pass ending there
    assert [n for n, _ in found["MRCONSO"].blocks(threading.Event())] == [stored["MRCONSO"]]


@pytest.mark.parametrize("descriptor", [False, True])
def test_a_full_zips_file_read_once_listed_counts_its_own_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, descriptor: bool
) -> None:
    """From 0 to its bytes in the .nlm, in order, whatever lies before it there (MRCONSO's
    member here): not its place in the .nlm (a bar starting at 55%)."""
    from tempmedbench_synonyms.mrconso import forms

    monkeypatch.setattr(forms, "READ_SIZE", 4096)
    halves = zip(("aa", "ab"), split(FILLER, 2), strict=True)
    parts = {f"2025AB/META/MRREL.RRF.{x}.gz": gz(p) for x, p in halves}
    members = {"2025AB/META/MRCONSO.RRF": BIG, **parts}
    nlm = _nlm(members, descriptor=descriptor)
    with zipfile.ZipFile(io.BytesIO(nlm)) as z:
        own = sum(z.getinfo(n).compress_size for n in parts)
    path = tmp_path / "umls-2025AB-full.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("2025AB-full/2025ab-1-meta.nlm", nlm)
    found = locate_meta(path)["MRREL"]
    assert found.listing is not None and found.listing.size("MRREL") == own
    read = list(found.blocks(threading.Event()))
    assert b"".join(raw for _, raw in read) == FILLER
    counts = [n for n, _ in read]
    assert counts == sorted(counts) and len(counts) > 2
    assert 0 < counts[0] <= 4096 and counts[-1] == own


def test_a_damaged_nlm_is_bad_input_when_listed_too(tmp_path: Path) -> None:
    path = tmp_path / "umls-2025AB-full.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr("2025AB-full/2025ab-1-meta.nlm", b"not a zip at all")
    listing = locate_meta(path)["MRSTY"].listing
    assert listing is not None
    with pytest.raises(BadInputError) as caught:
        listing.files()
    assert str(caught.value) == (
        f"{path} > 2025AB-full/2025ab-1-meta.nlm: cannot read: no member header at its start"
    )


def _descriptor_nlm(slack: int) -> bytes:
    """An .nlm written as a stream (a data descriptor after each member, as Java's
    ZipOutputStream writes them) whose first member's deflate stream is 2**20 - 16 - ``slack``
    bytes: the 1 MiB read that finds its end stops ``slack`` bytes past its 16-byte descriptor.
    Its other members are the invented META's files, each in two parts."""
    rnd = random.Random(3).randbytes(1 << 20)
    target = (1 << 20) - 16 - slack

    def deflated(n: int) -> int:
        c = zlib.compressobj(0, zlib.DEFLATED, -15)
        return len(c.compress(rnd[:n]) + c.flush())

    lo, hi = 1, 1 << 20
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (mid + 1, hi) if deflated(mid) < target else (lo, mid)
    assert deflated(lo) == target

    class Stream(io.RawIOBase):
        def __init__(self) -> None:
            self.buf = io.BytesIO()

        def writable(self) -> bool:
            return True

        def seekable(self) -> bool:
            return False

        def write(self, b: bytes) -> int:  # type: ignore[override]
            return self.buf.write(b)

        def tell(self) -> int:
            return self.buf.tell()

    out = Stream()
    members = [("README.bin", rnd[:lo])]
    for f in ("MRCONSO", "MRDEF", "MRREL", "MRSTY", "MRHIER", "MRSAB"):
        halves = split((ROOT / f"fixtures/umls/{f}.RRF").read_bytes(), 2)
        members += [(f"{f}.RRF.a{x}.gz", gz(p)) for x, p in zip("ab", halves, strict=True)]
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members:
            info = zipfile.ZipInfo(f"2099AB/META/{name}", (2026, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info._compresslevel = 0 if name == "README.bin" else 6  # type: ignore[attr-defined]
            with zf.open(info, "w") as w:
                w.write(data)
    nlm = out.buf.getvalue()
    assert zipfile.ZipFile(io.BytesIO(nlm)).testzip() is None  # a sound zip
    return nlm


@pytest.mark.parametrize("slack", [1, 2, 3])
def test_a_sound_nlm_with_data_descriptors_is_read_whatever_its_member_sizes(
    slack: int, tmp_path: Path
) -> None:
    """After a data descriptor the next signature is read whole, though only 1 to 3 of its bytes
    were read ahead (before: "it ends after member 2099AB/META/README.bin, with no central
    directory (a truncated file?)" for a sound .nlm, about 3 member ends in 2**20)."""
    path = tmp_path / "umls-2099AB-full.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("2099AB-full/2099ab-1-meta.nlm", _descriptor_nlm(slack))
    found = locate_meta(path)
    listing = found["MRDEF"].listing
    assert listing is not None
    assert listing.files() == {"MRCONSO", "MRDEF", "MRREL", "MRSTY", "MRHIER", "MRSAB"}
    assert _blocks_of(found["MRDEF"]) == (ROOT / "fixtures/umls/MRDEF.RRF").read_bytes()


@pytest.mark.parametrize("descriptor", [False, True])
def test_a_full_zips_file_read_once_listed_ends_after_its_last_member(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, descriptor: bool
) -> None:
    """Its members and bytes read are those listed: the pass ends there, the member after them
    (MRSAB's) and the .nlm's central directory unread."""
    from tempmedbench_synonyms.mrconso import forms

    halves = zip(("aa", "ab"), split(FILLER, 2), strict=True)
    parts = {f"2025AB/META/MRREL.RRF.{x}.gz": gz(p) for x, p in halves}
    members = {"2025AB/META/MRCONSO.RRF": BIG, **parts, "2025AB/META/MRSAB.RRF": b"S|\n" * 999}
    path = tmp_path / "umls-2025AB-full.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("2025AB-full/2025ab-1-meta.nlm", _nlm(members, descriptor=descriptor))
    found = locate_meta(path)["MRREL"]
    assert found.listing is not None and found.listing.files() == {"MRCONSO", "MRREL", "MRSAB"}
    seen: list[str] = []
    real = forms._local_members

    def spied(f: object) -> Iterator[tuple[str, Iterator[bytes], Iterator[bytes]]]:
        for member in real(f):  # type: ignore[arg-type]
            seen.append(member[0].rsplit("/", 1)[-1])
            yield member
        seen.append("(the end)")

    monkeypatch.setattr(forms, "_local_members", spied)
    assert _blocks_of(found) == FILLER
    assert seen == ["MRCONSO.RRF", "MRREL.RRF.aa.gz", "MRREL.RRF.ab.gz"]
