"""The SNOMED CT side: SCTIDs, the GPS and RF2 readers, and the validator of SNOMED CT fields.

Each module imports only those below it (``tests/snomed/test_layers.py`` holds it to that)::

    validate.py    the SNOMED CT fields of events and questions, checked against the index
       |    \\
       |    sctid.py     SCTID rules: format, partition, namespace, Verhoeff check digit
    loader.py      which reader a --gps path needs (file or folder, GPS or RF2, zip or not)
       |    \\
    gps.py  rf2.py       the GPS file (TSV, or in its zip); an RF2 snapshot (folder or zip)
       |    /
    tables.py      bounded reads, zip members, headers, row widths, not-UTF-8, release dates
    concepts.py    the concept index every reader gives
    codes.py       closed vocabularies: finding codes, outcomes

From the rest of the package it uses only ``errors`` (the error tree), ``files`` (regular files
only, SHA-256 of a file), ``zips`` (zip members that cannot be read), ``jsonio`` (the one strict
JSON reader) and
``runtime`` (the hash thread) of the kernel: nothing of the synonym side (UMLS, UTS, the release
folder's manifest), which does not import it either.
"""

__all__ = ["codes", "concepts", "gps", "loader", "rf2", "sctid", "tables", "validate"]
