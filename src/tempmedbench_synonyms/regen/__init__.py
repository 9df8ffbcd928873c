"""The pure regeneration: a release folder and an atom source in, two verified files out.

It imports only the kernel (``tests/test_layers.py``): it never knows whether its atoms came from
UTS or from a local MRCONSO.RRF (``atoms.AtomSource``). Top to bottom::

    freeze.py     expected_sha256.json written from a regeneration (for release authors)
    pipeline.py   regenerate and check: rebuild, verify, place the files
    report.py     what a run found, and its outcome (SPEC section 5)
    selection.py  the kept synonym of each concept (SPEC section 3)
    surface.py    spans placed and checked, names put at the spans (SPEC section 4)
    release.py    the release folder: manifest gate, strict models of table, surface, hashes
    manifest.py   MANIFEST.sha256 read strictly and checked file by file (SPEC section 1)
    canonical.py  the bytes SPEC section 4 fixes, and their SHA-256
"""

__all__ = [
    "canonical",
    "freeze",
    "manifest",
    "pipeline",
    "release",
    "report",
    "selection",
    "surface",
]
