"""Which reader a ``--gps`` path needs: the GPS file or zip (:mod:`.gps`), or an International
Edition RF2 snapshot folder or zip (:mod:`.rf2`); each gives the same ``ConceptIndex``.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import IO

from tempmedbench_synonyms.errors import BadInputError
from tempmedbench_synonyms.files import open_regular
from tempmedbench_synonyms.snomed.concepts import ConceptIndex
from tempmedbench_synonyms.snomed.gps import is_gps_member, load_gps_tsv, load_gps_zip
from tempmedbench_synonyms.snomed.rf2 import is_concept_file, load_rf2
from tempmedbench_synonyms.zips import ZIP_ERRORS


def load_concept_index(path: str | Path) -> ConceptIndex:
    p = Path(path)
    if not p.exists():
        raise BadInputError(
            "no such file or folder",
            path=p,
            hint="pass the GPS zip or its .txt file, or an RF2 snapshot folder or zip, to --gps",
        )
    if p.is_dir():
        return load_rf2(p)
    with open_regular(p, what="the GPS input") as f:
        if zipfile.is_zipfile(f):
            return _load_zip(p, f)
        f.seek(0)
        magic = f.read(4)
    if magic in (b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08") or p.suffix.lower() == ".zip":
        # is_zipfile looks for the end-of-central-directory record only: a zip cut short (an
        # interrupted download) has lost it, and read as text it would be "bytes that are not
        # UTF-8" on line 1.
        raise BadInputError(
            "damaged zip: it has no end-of-central-directory record (truncated?)",
            path=p,
            hint="download the zip again, or extract the .txt from a good copy and pass that",
        )
    return load_gps_tsv(p)


def _load_zip(path: Path, f: IO[bytes]) -> ConceptIndex:
    try:
        zf = zipfile.ZipFile(f)
    except (OSError, *ZIP_ERRORS) as err:
        raise BadInputError(
            f"damaged zip: cannot read its directory ({err})",
            path=path,
            hint="download the zip again, or extract the .txt from a good copy and pass that",
        ) from None
    with zf:
        names = [
            i.filename
            for i in zf.infolist()
            if not i.is_dir() and not i.filename.startswith("__MACOSX/")
        ]
        gps = [n for n in names if is_gps_member(n)]
        if gps:
            return load_gps_zip(path, zf, gps)
        if any(is_concept_file(n) for n in names):
            return load_rf2(path, zf, names)
    raise BadInputError(
        "the zip holds neither a *GPSRelease*.txt member nor an RF2 Concept snapshot",
        path=path,
        hint="pass the SNOMED International GPS zip, or an International Edition RF2 release zip",
    )
