"""The MRCONSO.RRF side: a local copy of the UMLS Metathesaurus's concept names.

Its modules, top to bottom (tests/test_layers.py): docs/architecture.md, "The module map".
"""

__all__ = ["forms", "rows", "scan", "shapes", "source", "worker"]
