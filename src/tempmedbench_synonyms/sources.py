"""The atom source a run asks for: a local MRCONSO.RRF when one is given, else the UMLS REST API.

One choice, made here for the Python API and the CLI alike (``build_source``); the network options
mean nothing to a local file, so those given with one are ignored, with one warning that says so.
"""

from __future__ import annotations

from tempmedbench_synonyms.atoms import AtomSource
from tempmedbench_synonyms.mrconso.source import MrconsoSource
from tempmedbench_synonyms.options import RegenOptions
from tempmedbench_synonyms.progress import StepProgress


def build_source(options: RegenOptions) -> AtomSource:
    """The atom source the options ask for: a local MRCONSO.RRF, else the UTS REST API."""
    if options.mrconso is not None:
        options.uts.say_ignored("--mrconso")
        # bytes read of the file as it is stored (compressed bytes when it is packed)
        progress = StepProgress(
            options.progress, label=f"scanning {options.mrconso.name}", unit="bytes"
        )
        return MrconsoSource(options.mrconso, progress=progress)
    # Imported here: a local run never loads the HTTP stack (requests, urllib3, tenacity), so
    # it runs where that is missing, and starts sooner.
    from tempmedbench_synonyms.uts.session import rest_source

    return rest_source(options.uts, progress=options.progress)
