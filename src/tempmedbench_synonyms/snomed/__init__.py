"""The SNOMED CT side: SCTIDs, the GPS and RF2 readers, and the validator of SNOMED CT fields.

Its modules, top to bottom (tests/snomed/test_layers.py): docs/architecture.md, "The module
map". Of the package it uses the kernel only; the synonym side never imports it.
"""

__all__ = ["codes", "concepts", "gps", "loader", "rf2", "sctid", "tables", "validate"]
