"""The pure regeneration: a release folder and an atom source in, two verified files out.

It imports only the kernel (tests/test_layers.py): it never knows whether its atoms came from
UTS or a local MRCONSO.RRF. Its modules: docs/architecture.md, "The module map".
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
