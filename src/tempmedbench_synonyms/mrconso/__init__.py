"""The MRCONSO.RRF side: a local copy of the UMLS Metathesaurus's concept names, as an atom source.

Each module imports only those below it and the kernel (``tests/test_layers.py``)::

    lookup.py   SPEC 11's lookups (atoms, crosswalk, exact search...) for a batch, in one pass
    source.py   MrconsoSource: one pass over the file, in worker processes or here
    worker.py   a worker process of the parallel scan (``runtime.spawn_worker``)
    scan.py     the block scan: one search a block finds the rows that can answer a query
    forms.py    the files NLM ships MRCONSO.RRF in, read as one stream (gzip, parts, zips, pipes)
    shapes.py   rows as the JSON objects UTS sends for them (the fake, local lookups)
    rows.py     the 18 columns, one row split and checked, the sniff of a file's first rows

``rows`` is light (``re`` and the error tree): ``testing`` reads invented rows with it.
"""

__all__ = ["forms", "lookup", "rows", "scan", "shapes", "source", "worker"]
