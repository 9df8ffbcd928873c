"""The Python API: what the CLI does, as functions that return typed reports (SPEC section 9).

    regenerate(release, *, mrconso=None, out=None, ...) -> Report     rebuild, verify, write
    check(release, *, out=None) -> Report                             verify files already rebuilt
    validate_gps(release, gps) -> GpsReport                           SNOMED CT fields vs the GPS
    ensure_synonyms(release, *, mrconso=None, out=None, ...) -> Paths the two verified files,
                                                                      regenerated only if needed

A finished run is a report, whatever its outcome: ``report.outcome`` is ``verified`` or
``mismatch`` and ``report.to_json()`` is the CLI's ``--json``. A run that cannot finish raises an
error of the one tree in ``errors`` (``BadInputError``, ``NotAuthorisedError``,
``UnavailableError``, ...), whose ``outcome`` and ``exit_code`` are the CLI's.
``ensure_synonyms`` hands back verified files or nothing, so it raises ``MismatchError`` (with the
report attached) where the others return a mismatch. Nothing here prints, exits or configures
logging; progress goes where ``progress`` says (nowhere by default).

The same environment variables as the CLI's apply: ``UMLS_API_KEY`` or ``UMLS_API_KEY_FILE`` for
the key, ``UMLS_BASE_URL`` when ``base_url`` is not given, ``TEMPMEDBENCH_CACHE_DIR`` when
``cache_dir`` is not given.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TextIO

from tempmedbench_synonyms import jsonio
from tempmedbench_synonyms.config import BASE_URL_ENV, DEFAULT_BASE_URL
from tempmedbench_synonyms.errors import MismatchError, Outcome
from tempmedbench_synonyms.snomed.loader import load_concept_index
from tempmedbench_synonyms.snomed.validate import ValidationReport, validate_release
from tempmedbench_synonyms.uts.defaults import DEFAULT_RATE, DEFAULT_TIMEOUT, DEFAULT_WORKERS

# The synonym side (the pipeline, its pydantic models, the UTS client and requests) is imported
# where a function needs it, not here: the CLI imports this module for every command, and
# ``gps validate`` or ``--help`` must not pay for the UTS client.
if TYPE_CHECKING:
    from tempmedbench_synonyms.pipeline import Report

#: A path as the functions take it: a ``str`` or any ``os.PathLike`` (a ``pathlib.Path``).
StrPath = str | os.PathLike[str]


class GpsReport(ValidationReport):
    """What ``validate_gps`` found: ``findings`` (each with ``code``, ``file``, ``line``,
    ``record``, ``field``, ``expected``, ``found``), ``counts`` by code, ``outcome`` (``clean`` or
    ``findings``) and ``exit_code``; ``to_json()`` is ``gps validate --json``."""

    __slots__ = ()

    def to_json(self) -> dict[str, Any]:
        """The ``gps validate --json`` report, ``schema_version`` and ``tool_version`` included."""
        return jsonio.versioned(self.as_dict())


class Paths(NamedTuple):
    """The two verified files ``ensure_synonyms`` returns; iterable in this order, so that
    ``surface, full_table = ensure_synonyms(...)`` unpacks them."""

    #: ``question_surface/question_surface_synonym.jsonl``, the synonym surface
    surface: Path
    #: ``synonyms/synonym_table_kept_full.json``, the full kept table
    full_table: Path


def _progress_stream(progress: bool | TextIO) -> TextIO | None:
    """``True``: stderr; ``False``: nowhere; else the stream given."""
    if isinstance(progress, bool):
        return sys.stderr if progress else None
    return progress


def _optional_path(path: StrPath | None) -> Path | None:
    return None if path is None else Path(path)


def regenerate(
    release: StrPath,
    *,
    mrconso: StrPath | None = None,
    out: StrPath | None = None,
    umls_release: str | None = None,
    base_url: str | None = None,
    api_key_file: StrPath | None = None,
    cache_dir: StrPath | None = None,
    offline: bool = False,
    refresh: bool = False,
    rate: float = DEFAULT_RATE,
    workers: int = DEFAULT_WORKERS,
    timeout: float = DEFAULT_TIMEOUT,
    progress: bool | TextIO = False,
) -> Report:
    """Rebuild both files, verify them against ``expected_sha256.json`` and write them: the
    command ``tempmedbench-regenerate-synonyms`` (its options are these keywords).

    Atoms come from ``mrconso`` (a local MRCONSO.RRF in any form NLM ships; no key needed) or
    else from the UMLS REST API (key in ``UMLS_API_KEY``, or a file named by ``api_key_file`` or
    ``UMLS_API_KEY_FILE``). Each file lands at its final path under ``out`` (default: the
    release folder) only when its hash matches; otherwise beside it as ``FILE.unverified``.
    ``progress``: ``True`` for stderr, or a text stream; nothing by default.

    Returns the report, outcome ``verified`` or ``mismatch``; raises ``BadInputError``,
    ``NotAuthorisedError`` or ``UnavailableError`` when the run cannot finish.

    Example, on the bundled invented demo release (no licence, no network)::

        >>> import tempfile
        >>> from tempmedbench_synonyms import regenerate
        >>> from tempmedbench_synonyms.demo import demo_data
        >>> demo = demo_data()
        >>> with tempfile.TemporaryDirectory() as out:
        ...     report = regenerate(demo.release, mrconso=demo.mrconso, out=out)
        >>> report.outcome, report.exit_code, report.umls_release, report.drifted
        (<Outcome.VERIFIED: 'verified'>, 0, '2099AA', [])
        >>> report.to_json()["message"]
        'both files match expected_sha256.json'
    """
    from tempmedbench_synonyms import pipeline
    from tempmedbench_synonyms.sources import build_source
    from tempmedbench_synonyms.uts.options import RestOptions

    rest = RestOptions(
        base_url=base_url if base_url is not None else _default_base_url(),
        api_key_file=_optional_path(api_key_file),
        cache_dir=_optional_path(cache_dir),
        offline=offline,
        refresh=refresh,
        rate=rate,
        workers=workers,
        timeout=timeout,
    )
    source = build_source(_optional_path(mrconso), rest, progress=_progress_stream(progress))
    return pipeline.regenerate(
        Path(release), source, out_dir=_optional_path(out), umls_release=umls_release
    )


def _default_base_url() -> str:
    """``UMLS_BASE_URL`` if set (as the CLI's ``--base-url`` reads it), else the UTS root."""
    return os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL


def check(release: StrPath, *, out: StrPath | None = None) -> Report:
    """Verify files already rebuilt against ``expected_sha256.json``, with no network: the
    command ``tempmedbench-synonyms check``.

    Returns the report, outcome ``verified`` or ``mismatch`` (a missing file is a mismatch);
    raises ``BadInputError`` when the release folder cannot be used.

    Example::

        >>> import tempfile
        >>> from tempmedbench_synonyms import check, regenerate
        >>> from tempmedbench_synonyms.demo import demo_data
        >>> demo = demo_data()
        >>> with tempfile.TemporaryDirectory() as out:
        ...     before = check(demo.release, out=out)
        ...     _ = regenerate(demo.release, mrconso=demo.mrconso, out=out)
        ...     after = check(demo.release, out=out)
        >>> before.outcome, before.message
        (<Outcome.MISMATCH: 'mismatch'>, '2 of 2 files missing')
        >>> after.outcome, after.requests
        (<Outcome.VERIFIED: 'verified'>, 0)
    """
    from tempmedbench_synonyms import pipeline

    return pipeline.check(Path(release), out_dir=_optional_path(out))


def validate_gps(release: StrPath, gps: StrPath) -> GpsReport:
    """Check every SNOMED CT field of a release's events and questions against the GPS: the
    command ``tempmedbench-synonyms gps validate``.

    ``gps`` is the GPS zip or its ``.txt`` file, or an International Edition RF2 snapshot folder
    or zip. Only ``artifacts/events_canonical.jsonl`` and ``artifacts/questions.jsonl`` are read
    (no manifest needed). Returns the report (``clean`` or ``findings``); raises
    ``BadInputError`` when the GPS or an artifact cannot be read.

    Example, on the demo release and its invented GPS file::

        >>> from tempmedbench_synonyms import validate_gps
        >>> from tempmedbench_synonyms.demo import demo_data
        >>> demo = demo_data()
        >>> report = validate_gps(demo.release, demo.gps)
        >>> report.outcome, report.exit_code, report.findings
        (<ValidationOutcome.CLEAN: 'clean'>, 0, [])
        >>> report.to_json()["records_checked"]
        {'artifacts/events_canonical.jsonl': 22, 'artifacts/questions.jsonl': 42}
    """
    with _collector_paused():
        found = validate_release(Path(release), load_concept_index(Path(gps)))
    return GpsReport(found.release, found.gps, found.records, found.findings)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """No cyclic garbage collection while the GPS index and the events are read: hundreds of
    thousands of new strings, tuples and dicts (none in a cycle) would start many collections
    that find nothing (about 5% of a ``gps validate`` of 400,000 rows)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def ensure_synonyms(
    release: StrPath,
    *,
    mrconso: StrPath | None = None,
    out: StrPath | None = None,
    umls_release: str | None = None,
    base_url: str | None = None,
    api_key_file: StrPath | None = None,
    cache_dir: StrPath | None = None,
    offline: bool = False,
    refresh: bool = False,
    rate: float = DEFAULT_RATE,
    workers: int = DEFAULT_WORKERS,
    timeout: float = DEFAULT_TIMEOUT,
    progress: bool | TextIO = False,
) -> Paths:
    """The two rebuilt files, verified: regenerated only when they are missing or do not verify.

    First it checks the files under ``out`` (default: the release folder), as ``check`` does:
    when both verify it returns at once, with no network and no key, so that a data loader can
    call it at every start. Otherwise it runs ``regenerate`` with the same keywords. Raises
    ``MismatchError`` (its ``report`` attached) when the rebuilt files do not verify, and
    ``BadInputError``, ``NotAuthorisedError`` or ``UnavailableError`` as ``regenerate`` does.

    Example::

        >>> import tempfile
        >>> from pathlib import Path
        >>> from tempmedbench_synonyms import ensure_synonyms
        >>> from tempmedbench_synonyms.demo import demo_data
        >>> demo = demo_data()
        >>> with tempfile.TemporaryDirectory() as out:
        ...     surface, full_table = ensure_synonyms(demo.release, mrconso=demo.mrconso, out=out)
        ...     print(surface.relative_to(out).as_posix())
        ...     print(full_table.relative_to(out).as_posix())
        ...     # verified now: no atom source needed, nothing is read but the files
        ...     print(ensure_synonyms(demo.release, out=out) == (surface, full_table))
        question_surface/question_surface_synonym.jsonl
        synonyms/synonym_table_kept_full.json
        True
    """
    found = check(release, out=out)
    if found.outcome is not Outcome.VERIFIED:
        found = regenerate(
            release, mrconso=mrconso, out=out, umls_release=umls_release, base_url=base_url,
            api_key_file=api_key_file, cache_dir=cache_dir, offline=offline, refresh=refresh,
            rate=rate, workers=workers, timeout=timeout, progress=progress,
        )  # fmt: skip
        if found.outcome is not Outcome.VERIFIED:
            raise MismatchError(found)
    root = Path(out) if out is not None else Path(found.release)
    from tempmedbench_synonyms.release import FULL_TABLE, SYNONYM_SURFACE

    return Paths(root / SYNONYM_SURFACE, root / FULL_TABLE)
