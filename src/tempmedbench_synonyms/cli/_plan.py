"""``regenerate --dry-run``: the plan of a run, said on stderr and in ``--json`` (``plan``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from tempmedbench_synonyms.cli._options import FLAG
from tempmedbench_synonyms.cli._shared import echo_err, print_json

if TYPE_CHECKING:  # imported when a dry run is asked for: every command imports this module
    from tempmedbench_synonyms.options import RegenOptions
    from tempmedbench_synonyms.plan import Plan
    from tempmedbench_synonyms.regen.report import Report

DryRunOption = Annotated[
    bool,
    typer.Option(
        "--dry-run",
        help="Say what a run would do (concepts, answers already cached, requests left and "
        "their time at --rate) and stop: nothing is sent but the release probe, nothing written.",
        metavar=FLAG,
    ),
]


def render_plan(report: Report, plan: Plan) -> str:
    """The human plan: what was checked, where the atoms would come from, what is left."""
    from tempmedbench_synonyms.uts.estimate import duration_words

    lines = [f"regenerate --dry-run: {report.release}"]
    lines.append(f"  manifest       {report.manifest_files} files match MANIFEST.sha256")
    if report.mrconso is not None:
        lines.append(f"  MRCONSO        {report.mrconso['path']} ({report.mrconso['kind']})")
    else:
        sent = f"{report.requests} request" + ("" if report.requests == 1 else "s")
        lines.append(
            f"  UMLS release   {report.umls_release} (UMLS REST API, {sent} sent, "
            f"{report.cache_hits} answered by the cache)"
        )
        lines.append(
            f"  requests       {plan.requests} left to send, about "
            f"{duration_words(plan.seconds or 0.0)}"
        )
    if report.mrconso is not None:
        lines.append(f"  concepts       {plan.concepts}, read from the file in one pass")
    else:
        lines.append(
            f"  concepts       {plan.concepts}: {plan.cached} cached, {plan.to_fetch} to fetch"
        )
    for w in report.warnings:
        lines.append(f"  warning        {w}")
    lines.append(f"{report.outcome} (exit {report.exit_code}): {report.message}")
    return "\n".join(lines)


def show_plan(options: RegenOptions, *, json_out: bool, verbosity: int) -> NoReturn:
    """Plan the run the options ask for, say it, and end the command (exit 0)."""
    from tempmedbench_synonyms.plan import plan

    report, found = plan(options)
    if verbosity >= 0:
        echo_err(render_plan(report, found))
    if json_out:
        print_json({**report.to_json(), "plan": found.to_json()})
    raise typer.Exit(report.exit_code)
