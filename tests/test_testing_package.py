"""The public test helpers: one import location, every name documented, invented data."""

from __future__ import annotations

import hashlib
import inspect
from pathlib import Path

import tempmedbench_synonyms.testing as testing
from tempmedbench_synonyms.mrconso.rows import MRCONSO_COLUMNS, split_row
from tempmedbench_synonyms.testing import mrconso_row, write_manifest


def test_the_public_names_are_exactly_these() -> None:
    assert (
        testing.__all__
        == (
            "CANARY_KEY FAULT_KINDS FakeReply FakeRow FakeUts FakeUtsData FakeUtsServer Faults "
            "InventedRelease RunningFakeUts SeenRequest VirtualTime add_fake_uts find_secret "
            "invented_rows make_invented_release mrconso_row write_manifest"
        ).split()
    )
    assert all(hasattr(testing, name) for name in testing.__all__)


def _undocumented() -> list[str]:
    missing = []
    for name in testing.__all__:
        obj = getattr(testing, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            if not inspect.getdoc(obj):
                missing.append(name)
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if attr.startswith("_"):
                    continue
                func = member.fget if isinstance(member, property) else member
                func = getattr(func, "__func__", func)
                if inspect.isfunction(func) and not inspect.getdoc(func):
                    missing.append(f"{name}.{attr}")
    return missing


def test_everything_users_call_has_a_docstring() -> None:
    assert _undocumented() == []


def test_an_mrconso_row_has_eighteen_fields_in_mrconso_order() -> None:
    line = mrconso_row("C9000001", "A90000002", "SNOMEDCT_US", "PT", "1000001", "Invented fever")
    assert line == (
        "C9000001|ENG|P|L9000001|PF|S90000002|Y|A90000002||1000001||"
        "SNOMEDCT_US|PT|1000001|Invented fever|0|N||\n"
    )
    fields = dict(zip(MRCONSO_COLUMNS, split_row(line, path="M", line_no=1), strict=True))
    assert (fields["AUI"], fields["SCUI"], fields["STR"]) == (
        "A90000002",
        "1000001",
        "Invented fever",
    )


def test_an_mrconso_row_with_every_field_chosen() -> None:
    line = mrconso_row(
        "C1", "A2", "MTH", "PN", "NOCODE", "x", lat="FRE", suppress="E", ts="S", lui="L7",
        sui="S8", sdui="D9", cvf="256", end="",
    )  # fmt: skip
    assert line == "C1|FRE|S|L7|PF|S8|Y|A2||NOCODE|D9|MTH|PN|NOCODE|x|0|E|256|"


def test_write_manifest_lists_every_file_but_itself_and_those_left_out(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "z.json").write_bytes(b"{}\n")
    (tmp_path / "a.txt").write_bytes(b"a")
    (tmp_path / "skip.unverified").write_bytes(b"s")
    (tmp_path / "MANIFEST.sha256").write_text("stale\n")
    write_manifest(tmp_path, leave_out=lambda rel: rel.endswith(".unverified"))
    assert (tmp_path / "MANIFEST.sha256").read_text() == (
        f"{hashlib.sha256(b'a').hexdigest()}  a.txt\n"
        f"{hashlib.sha256(b'{}' + bytes([10])).hexdigest()}  b/z.json\n"
    )
