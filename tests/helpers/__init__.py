"""Helpers shared by the test modules (not tests: pytest collects ``test_*.py`` only).

Importable as ``helpers`` because pyproject.toml's pytest settings put ``tests/`` on the path
(``pythonpath = ["tests"]``): ``from helpers import ATOM_PARAMS``, ``from helpers.uts import ...``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import responses

from tempmedbench_synonyms.testing import FakeUts, add_fake_uts

#: The repository's root, its invented fixtures, and the files tests use most.
ROOT = Path(__file__).resolve().parent.parent.parent
FIXTURES = ROOT / "fixtures"
MINI = FIXTURES / "tempmedbench-mini"
MINI_MRCONSO = FIXTURES / "umls" / "MRCONSO.RRF"
GPS_FILE = FIXTURES / "gps" / "SnomedINTL_GPSRelease_PRODUCTION_20990101T120000Z.txt"

#: A UTS base URL that cannot resolve: the fakes answer it, nothing else can.
BASE = "https://uts.invalid/rest"

#: The query parameters of every atoms request the client sends (besides the key and the page).
ATOM_PARAMS = {
    "language": "ENG",
    "includeObsolete": "false",
    "includeSuppressible": "false",
    "pageSize": "200",
}

#: The ``rehash`` fixture (tests/conftest.py): rewrite a release folder's MANIFEST.sha256.
Rehash = Callable[[Path], None]


@contextmanager
def behind_responses(fake: FakeUts, *, base_url: str = BASE) -> Iterator[FakeUts]:
    """``fake`` answering every GET under ``base_url`` through ``responses`` (no socket)."""
    with responses.RequestsMock(assert_all_requests_are_fired=False) as rsps:
        add_fake_uts(rsps, fake, base_url=base_url)
        yield fake


def outputs(folder: Path) -> list[str]:
    """The rebuilt files (final, ``.unverified``) and temporary files under ``folder``, sorted."""
    return sorted(
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.name.startswith(("question_surface_synonym", "synonym_table_kept_full"))
        or p.name.endswith(".tmp")
    )


def patch_zip_member(z: Path, member: str, *, offset: int, value: bytes) -> None:
    """Overwrite bytes of ``member``'s central and local headers alike (APPNOTE.TXT 4.3.12 and
    4.3.7): ``offset`` is the central header's (flags at 8, compression method at 10); the local
    header's is 2 less. Crafts an encrypted (flag bit 0) or a Deflate64 (method 9) member."""
    data = bytearray(z.read_bytes())
    patched = 0
    # signature, where the name length sits, where the name starts, the shift of ``offset``
    for sig, len_at, name_at, shift in ((b"PK\x01\x02", 28, 46, 0), (b"PK\x03\x04", 26, 30, -2)):
        i = data.find(sig)
        while i >= 0:
            name_len = int.from_bytes(data[i + len_at : i + len_at + 2], "little")
            if data[i + name_at : i + name_at + name_len] == member.encode():
                data[i + offset + shift : i + offset + shift + len(value)] = value
                patched += 1
            i = data.find(sig, i + 4)
    assert patched == 2, f"{member}: {patched} headers found, not 2"
    z.write_bytes(bytes(data))
