"""The ``gps`` commands: validate a release's SNOMED CT fields, look concepts up, check SCTIDs."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Annotated, Any

import typer

from tempmedbench_synonyms import config
from tempmedbench_synonyms.api import validate_gps
from tempmedbench_synonyms.cli._options import (
    JsonOption,
    PlainUsage,
    QuietOption,
    UsageError,
    VerboseOption,
    command_group,
)
from tempmedbench_synonyms.cli._shared import (
    configure_logging,
    echo_err,
    echo_out,
    exit_on_error,
    failure_json,
    print_json,
)
from tempmedbench_synonyms.constants import GPS_ENV
from tempmedbench_synonyms.errors import Outcome
from tempmedbench_synonyms.snomed.concepts import ConceptIndex
from tempmedbench_synonyms.snomed.loader import load_concept_index
from tempmedbench_synonyms.snomed.sctid import parse_sctid
from tempmedbench_synonyms.snomed.validate import ValidationReport

gps_app = command_group(
    "gps", help="Check SNOMED CT fields against the SNOMED International Global Patient Set (GPS)."
)


def _gps(ctx: typer.Context, param: Any, given: Path | None) -> Path:
    """``--gps``, else ``TEMPMEDBENCH_GPS``; a usage error when neither names one."""
    found = config.path_variable(GPS_ENV, given)
    if found is None and not ctx.resilient_parsing:
        raise UsageError(f"Missing option '--gps' (or the {GPS_ENV} environment variable).", ctx)
    return found  # type: ignore[return-value]


GpsOption = Annotated[
    Path,
    typer.Option(
        "--gps",
        help="The GPS zip or its .txt file, or an International Edition RF2 snapshot folder or "
        f"zip (required; default: the {GPS_ENV} environment variable).",
        show_default=False,
        callback=_gps,
    ),
]


def _show(value: Any) -> str:
    return "null" if value is None else repr(value)


def _describe_gps(index: ConceptIndex) -> None:
    s = index.summary()
    echo_err(
        f"GPS: {index.path} ({index.kind}, release {index.release_date or 'undated'}, "
        f"sha256 {index.sha256 or 'n/a (folder: see --json files)'}): "
        f"{s['concepts']} concepts, {s['active_concepts']} active"
    )
    for note in index.notes:
        echo_err(f"note: {note}")


def _render_report(report: ValidationReport, limit: int) -> None:
    _describe_gps(report.gps)
    checked = ", ".join(f"{n} records in {path}" for path, n in report.records.items())
    echo_err(f"checked {checked}")
    shown = report.findings if limit < 0 else report.findings[:limit]
    for f in shown:
        echo_err(
            f"{f.file}:{f.line}: {f.record} {f.code} {f.field}: "
            f"expected {_show(f.expected)}, found {_show(f.found)}"
        )
    if 0 < len(shown) < len(report.findings):
        echo_err(f"... {len(report.findings) - len(shown)} more (see --json, or --limit -1)")
    for code, n in report.counts.items():
        if n:
            echo_err(f"{code}: {n}")
    echo_err(("" if report.findings else "clean: ") + report.message)


@gps_app.command("validate", cls=PlainUsage)
def validate(
    release_dir: Annotated[
        Path,
        typer.Argument(
            help="The release folder (holding artifacts/).", show_default=False, metavar="RELEASE"
        ),
    ],
    gps: GpsOption = None,  # type: ignore[assignment]
    json_out: JsonOption = False,
    limit: Annotated[
        int, typer.Option("--limit", help="Findings listed on stderr (-1: all); --json has all.")
    ] = 100,
    quiet: QuietOption = False,
    verbose: VerboseOption = 0,
) -> None:
    """Check every SNOMED CT field of a release's events and questions against the GPS.

    Reads artifacts/events_canonical.jsonl and artifacts/questions.jsonl only (no manifest
    needed). Exit 0: clean; 1: findings; 2: unusable input.

    Example:

        tempmedbench-synonyms gps validate TempMedBench-1.0 \\
            --gps SnomedCT_GPS.zip
    """
    configure_logging(quiet, verbose)
    with exit_on_error(
        json_report=partial(failure_json, findings=[], counts={}) if json_out else None
    ):
        report = validate_gps(release_dir, gps)
    if json_out:
        print_json(report.to_json())
    if not quiet:
        _render_report(report, 0 if json_out else limit)
    raise typer.Exit(report.exit_code)


@gps_app.command("lookup", cls=PlainUsage)
def lookup(
    ids: Annotated[
        list[str],
        typer.Argument(help="Concept identifiers.", show_default=False, metavar="SCTID"),
    ],
    gps: GpsOption = None,  # type: ignore[assignment]
    json_out: JsonOption = False,
    quiet: QuietOption = False,
    verbose: VerboseOption = 0,
) -> None:
    """Show the FSN, US preferred term and status of concepts in the GPS (on stdout).

    Exit 0 when the release holds every identifier, 1 when one is missing, 2 on unusable input.

    Example:

        tempmedbench-synonyms gps lookup 22298006 --gps SnomedCT_GPS.zip
    """
    configure_logging(quiet, verbose)
    with exit_on_error(json_report=partial(failure_json, concepts=[]) if json_out else None):
        index = load_concept_index(gps)
    rows: list[dict[str, Any]] = []
    for cid in ids:
        concept = index.get(cid)
        info = parse_sctid(cid)
        rows.append(
            {
                "id": cid,
                "in_release": concept is not None,
                "active": None if concept is None else concept.active,
                "fsn": None if concept is None else concept.fsn or None,
                "us_preferred_term": None if concept is None else concept.us_pt or None,
                "sctid_problems": [p.code.value for p in info.problems],
            }
        )
    missing = [r["id"] for r in rows if not r["in_release"]]
    if json_out:
        print_json(
            {
                "outcome": (Outcome.NOT_FOUND if missing else Outcome.FOUND).value,
                "exit_code": 1 if missing else 0,
                "gps": index.summary(),
                "concepts": rows,
            }
        )
    else:
        if not quiet:
            _describe_gps(index)  # where the answer comes from: a message, on stderr
        for r in rows:  # the answer: data, on stdout
            if not r["in_release"]:
                extra = f" ({', '.join(r['sctid_problems'])})" if r["sctid_problems"] else ""
                echo_out(f"{r['id']}: not in the release{extra}")
                continue
            echo_out(f"{r['id']}: {'active' if r['active'] else 'INACTIVE'}")
            echo_out(f"  FSN: {_show(r['fsn'])}")
            echo_out(f"  US preferred term: {_show(r['us_preferred_term'])}")
    raise typer.Exit(1 if missing else 0)


@gps_app.command("sctid", cls=PlainUsage)
def sctid(
    ids: Annotated[
        list[str],
        typer.Argument(help="SNOMED CT identifiers.", show_default=False, metavar="SCTID"),
    ],
    json_out: JsonOption = False,
) -> None:
    """Check SNOMED CT concept identifiers: format, partition, Verhoeff check digit (and show the
    namespace of a long identifier).

    No GPS needed. Exit 0 when every identifier is a valid concept identifier, 1 otherwise.

    Example:

        tempmedbench-synonyms gps sctid 22298006 456191000124101
    """
    infos = [parse_sctid(i) for i in ids]
    bad = any(i.problems for i in infos)
    if json_out:
        print_json({"sctids": [i.as_dict() for i in infos], "exit_code": 1 if bad else 0})
    else:
        for i in infos:
            if not i.well_formed:
                echo_out(f"{i.sctid}: invalid: {i.problems[0].message}")
                continue
            parts = [
                f"{i.format or 'unknown'} format",
                f"partition {i.partition} ({i.component or 'unknown'})",
            ]
            if i.namespace is not None:
                parts.append(f"namespace {i.namespace}")
            parts.append(f"check digit {i.check_digit}")
            status = "valid concept identifier" if not i.problems else "invalid"
            if i.is_extension_concept:
                # Whether the release holds it is for `lookup` or `validate` to say: a concept
                # promoted to the International Edition keeps its partition-10 identifier.
                status += "; an extension identifier (partition 10)"
            echo_out(f"{i.sctid}: {status}: {', '.join(parts)}")
            for p in i.problems:
                echo_out(f"  {p.code}: {p.message}")
    raise typer.Exit(1 if bad else 0)
