"""The Python API: what the CLI does, as functions that return typed reports (SPEC section 9).

A finished run is a report, whatever its outcome; a run that cannot finish raises an error of
``errors``, whose ``outcome`` and ``exit_code`` are the CLI's. Nothing here prints, exits or
configures logging. The keywords: ``options.RunKeywords``; users' guide: README.md, "From Python".
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Unpack

from tempmedbench_synonyms import jsonio, runtime
from tempmedbench_synonyms.errors import MismatchError, Outcome
from tempmedbench_synonyms.options import RegenOptions, RunKeywords, as_path
from tempmedbench_synonyms.snomed.loader import load_concept_index
from tempmedbench_synonyms.snomed.validate import ValidationReport, validate_release
from tempmedbench_synonyms.uts.options import StrPath

# The synonym side (the pipeline, its pydantic models, the UTS client and requests) is imported
# where a function needs it, not here: the CLI imports this module for every command, and
# ``gps validate`` or ``--help`` must not pay for the UTS client.
if TYPE_CHECKING:
    from tempmedbench_synonyms.regen.report import Report


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


def regenerate(release: StrPath, **options: Unpack[RunKeywords]) -> Report:
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
    return run(RegenOptions.of(release, **options))


def run(options: RegenOptions) -> Report:
    """``regenerate`` with its options built once (the CLI builds them from its command line)."""
    from tempmedbench_synonyms.regen import pipeline

    options.check()
    return pipeline.regenerate(
        options.release, options.source(), out_dir=options.out, umls_release=options.umls_release
    )


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
    from tempmedbench_synonyms.regen import pipeline

    built = RegenOptions.of(release, out=out)
    return pipeline.check(built.release, out_dir=built.out)


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
    release_dir, gps_path = as_path("release", release), as_path("gps", gps)
    with runtime.collector_paused():
        found = validate_release(release_dir, load_concept_index(gps_path))
    return GpsReport(found.release, found.gps, found.records, found.findings)


def ensure_synonyms(release: StrPath, **options: Unpack[RunKeywords]) -> Paths:
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
    built = RegenOptions.of(release, **options)
    built.check()  # a value out of range is refused even when the files verify
    found = check(built.release, out=built.out)
    if found.outcome is not Outcome.VERIFIED:
        found = run(built)
        if found.outcome is not Outcome.VERIFIED:
            raise MismatchError(found)
    root = built.out if built.out is not None else Path(found.release)
    from tempmedbench_synonyms.regen.release import FULL_TABLE, SYNONYM_SURFACE

    return Paths(root / SYNONYM_SURFACE, root / FULL_TABLE)
