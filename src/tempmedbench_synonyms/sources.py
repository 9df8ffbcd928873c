"""The atom source a run asks for: a local MRCONSO.RRF when one is given, else the UMLS REST API.

One choice, made here for the Python API and the CLI alike (``build_source``); the REST options
mean nothing to a local file, so those given with one are ignored, with one warning that says so.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TextIO

from tempmedbench_synonyms.atoms import AtomSource
from tempmedbench_synonyms.mrconso import MrconsoSource
from tempmedbench_synonyms.progress import scan_progress
from tempmedbench_synonyms.uts.options import RestOptions, build_rest_source

log = logging.getLogger(__name__)


def rest_only_options(rest: RestOptions) -> list[str]:
    """The REST-only options given other values than their defaults, as the CLI spells them
    (``--base-url`` and ``--cache-dir`` are left out: they are often set for every run by
    environment variables)."""
    default = RestOptions()
    given = [
        ("--offline", rest.offline != default.offline),
        ("--refresh", rest.refresh != default.refresh),
        ("--rate", rest.rate != default.rate),
        ("--workers", rest.workers != default.workers),
        ("--timeout", rest.timeout != default.timeout),
        ("--api-key-file", rest.api_key_file is not None),
    ]
    return [name for name, differs in given if differs]


def build_source(mrconso: Path | None, rest: RestOptions, *, progress: TextIO | None) -> AtomSource:
    """The atom source the options ask for: a local MRCONSO.RRF, else the UTS REST API.

    Progress goes to ``progress``, or nowhere if it is ``None``. The network options in ``rest``
    are checked only when they are used (``build_cached_uts``): they mean nothing to a local file.
    """
    if mrconso is not None:
        ignored = rest_only_options(rest)
        if ignored:
            log.warning(
                "%s only appl%s to the UMLS REST API: ignored with --mrconso",
                ", ".join(ignored),
                "ies" if len(ignored) == 1 else "y",
            )
        return MrconsoSource(mrconso, progress=scan_progress(progress, mrconso.name))
    return build_rest_source(rest, progress_stream=progress)
