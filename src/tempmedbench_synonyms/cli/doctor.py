"""The ``doctor`` command: the user's set-up checked in one pass (the checks: ``doctor``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from tempmedbench_synonyms import config
from tempmedbench_synonyms.cli._options import JsonOption, Only, QuietOption, with_options
from tempmedbench_synonyms.cli._shared import (
    configure_logging,
    echo_err,
    echo_styled,
    exit_on_error,
    failure_json,
    print_json,
)
from tempmedbench_synonyms.uts.options import UtsOptions

_INDENT = " " * 6

if TYPE_CHECKING:  # the checks import the UTS client: only when doctor runs
    from tempmedbench_synonyms.doctor import Check
    from tempmedbench_synonyms.errors import TempMedBenchError


def _say(check: Check) -> None:
    """One line per check, ``ok`` or ``FAIL`` (coloured), then a failure's hint."""
    colour = False if config.no_color() else None  # None: only on a terminal
    word = "ok" if check.ok else "FAIL"
    styled = typer.style(f"{word:<6}", fg="green" if check.ok else "red", bold=not check.ok)
    echo_styled(styled, f"{check.name:<11} {check.message}", color=colour)
    if check.hint:
        echo_err(f"{_INDENT}hint: {check.hint}")


@with_options
def doctor_command(
    release_dir: Annotated[
        Path | None,
        typer.Argument(
            metavar="RELEASE",
            help="The TempMedBench release folder to check, and whose UMLS release to probe.",
            show_default=False,
        ),
    ] = None,
    mrconso: Annotated[
        Path | None,
        typer.Option("--mrconso", help="Check that this file reads as MRCONSO.RRF."),
    ] = None,
    meta: Annotated[
        Path | None,
        typer.Option(
            "--meta",
            help="Say whether this META's files are indexed for a local UMLS, and how big.",
        ),
    ] = None,
    index_dir: Annotated[
        Path | None,
        typer.Option(
            "--index-dir", help="The index folder --meta is looked up in.", show_default=False
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Check this output folder (default: the release folder)."),
    ] = None,
    uts: Annotated[
        UtsOptions, Only(("base_url", "cache_dir", "rate", "timeout", "api_key_file"))
    ] = UtsOptions(),
    json_out: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """Check your set-up in one pass, and say how to fix what fails: the first command to run.

    Checks Python and the libraries, the release folder (manifest), the API key (found, and
    accepted by one probe request), that UTS serves the release, that the cache and output
    folders are writable, the shared rate state, that --mrconso reads as MRCONSO.RRF, and whether
    --meta's files are indexed. Nothing is written, and the probe's answer is not cached.

    Exit codes: 0 every check passed, else the first failure's: 2 bad input, 3 not authorised,
    4 UMLS unavailable; 130 interrupted.

    Example:

        tempmedbench-synonyms doctor TempMedBench-1.0
    """
    verbosity = configure_logging(quiet, 0)
    checks: list[Check] = []

    def report(code: int, stop: TempMedBenchError | None = None) -> dict[str, Any]:
        """The --json report: every check made, and ``stop``'s outcome, message and hint."""
        return {
            "command": "doctor",
            **(failure_json(stop) if stop is not None else {}),
            "ok": stop is None and all(c.ok for c in checks),
            "exit_code": code,
            "checks": [c.to_json() for c in checks],
        }

    def said(check: Check) -> None:
        checks.append(check)
        if verbosity >= 0 or not check.ok:  # -q: only the checks that failed (its errors)
            _say(check)

    # Ctrl-C or SIGTERM: the checks made so far, in the report of outcome "interrupted".
    stopped = (lambda err: report(err.exit_code, err)) if json_out else None
    with exit_on_error(json_report=stopped, api_key_file=uts.api_key_file):
        from tempmedbench_synonyms.doctor import exit_code, run_checks

        run_checks(release_dir, uts, mrconso=mrconso, out=out, say=said, meta=meta,
                   index_dir=index_dir)  # fmt: skip
    code = exit_code(checks)
    failed = [c for c in checks if not c.ok]
    if verbosity >= 0:
        echo_err(
            f"doctor: all {len(checks)} checks passed"
            if not failed
            else f"doctor: {len(failed)} of {len(checks)} checks failed (exit {code})"
        )
    if json_out:
        print_json(report(code))
    raise typer.Exit(code)
