"""The bundled demo: an invented release, its invented MRCONSO.RRF and GPS file, as package data
(``_demo``) or in a checkout's ``fixtures/``. Nothing in them is UMLS or SNOMED CT content.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tempmedbench_synonyms.errors import BadInputError

_PACKAGE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class DemoData:
    release: Path
    mrconso: Path
    #: an invented GPS file that the release's SNOMED CT fields match (for ``gps validate``)
    gps: Path


_GPS = "gps/SnomedINTL_GPSRelease_PRODUCTION_20990101T120000Z.txt"


def demo_data() -> DemoData:
    """Where the demo release, MRCONSO.RRF and GPS file are (installed package or checkout)."""
    for root in (_PACKAGE / "_demo", _PACKAGE.parent.parent / "fixtures"):
        found = DemoData(root / "tempmedbench-mini", root / "umls/MRCONSO.RRF", root / _GPS)
        if (found.release / "MANIFEST.sha256").is_file() and all(
            p.is_file() for p in (found.mrconso, found.gps)
        ):
            return found
    raise BadInputError(
        "the demo data is not installed with this package",
        hint="install the wheel (it carries the demo), or run from a checkout of the repository, "
        "where it lies in fixtures/",
    )
