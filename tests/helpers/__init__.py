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
