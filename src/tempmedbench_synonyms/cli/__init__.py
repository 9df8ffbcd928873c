"""The command line: ``tempmedbench-synonyms`` and ``tempmedbench-regenerate-synonyms``.

Commands parse options, call the library (the Python API, as a user's code would) and render its
report; errors become exit codes in ``_shared.exit_on_error`` only.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from tempmedbench_synonyms import runtime
from tempmedbench_synonyms.api import check, run
from tempmedbench_synonyms.cli._options import (
    JsonOption,
    PlainUsage,
    QuietOption,
    VerboseOption,
    command_group,
    with_options,
)
from tempmedbench_synonyms.cli._render import render_freeze, render_plan, render_report
from tempmedbench_synonyms.cli._shared import (
    configure_logging,
    echo_err,
    echo_out,
    echo_report,
    exit_on_error,
    failure_json,
    print_json,
)
from tempmedbench_synonyms.cli.cache import cache_app
from tempmedbench_synonyms.cli.doctor import doctor_command
from tempmedbench_synonyms.cli.gps import gps_app
from tempmedbench_synonyms.cli.umls import umls_app
from tempmedbench_synonyms.demo import demo_data
from tempmedbench_synonyms.errors import Outcome
from tempmedbench_synonyms.options import RegenOptions
from tempmedbench_synonyms.uts.options import UtsOptions

# The synonym side (pydantic models, the UTS client, requests) is imported where a command
# needs it: `gps validate` and `--help` start without it.
if TYPE_CHECKING:
    from tempmedbench_synonyms.regen.report import Report

__all__ = [
    "app",
    "main",
    "regenerate_app",
    "script_main",
    "script_regenerate_main",
]

app = command_group(
    "tempmedbench-synonyms",
    add_completion=True,  # --install-completion / --show-completion for bash, zsh, fish, pwsh
)


def _version(value: bool) -> None:
    if value:
        from tempmedbench_synonyms.about import version_text

        echo_out(version_text())
        raise typer.Exit()


VersionOption = Annotated[
    bool,
    typer.Option(
        "--version",
        callback=_version,
        is_eager=True,
        help="Show the version, with Python's, the libraries', the inflate and the cache folder.",
    ),
]


@app.callback()
def _root(version: VersionOption = False) -> None:
    """Rebuild and verify the TempMedBench synonym surface from your own UMLS licence.

    `tempmedbench-regenerate-synonyms RELEASE` is `tempmedbench-synonyms regenerate RELEASE`.
    New here? Run `tempmedbench-synonyms demo` (no licence, no network); every command has --help.

    Example:

        tempmedbench-synonyms regenerate TempMedBench-1.0 \\
            --mrconso 2025AB/META/MRCONSO.RRF
    """


# Options shared by regenerate and freeze (Typer reads them from each command's signature).
ReleaseArg = Annotated[
    Path,
    typer.Argument(
        metavar="RELEASE", help="The TempMedBench release folder (the one with MANIFEST.sha256)."
    ),
]
MrconsoOption = Annotated[
    Path | None,
    typer.Option(
        "--mrconso",
        help="Take atoms from your own MRCONSO.RRF instead of the UMLS REST API; no key needed. "
        "As NLM ships it: MRCONSO.RRF, MRCONSO.RRF.gz, a part MRCONSO.RRF.aa.gz (all parts are "
        "read), the META folder, umls-2025AB-metathesaurus-full.zip, 2025ab-1-meta.nlm, "
        "umls-2025AB-full.zip, or a pipe such as <(unzip -p ...).",
    ),
]
ReleaseOverrideOption = Annotated[
    str | None,
    typer.Option(
        "--umls-release",
        help="The UMLS release to fetch (default: the table's umls_release); 'current' is "
        "allowed, but the hashes will then likely differ.",
    ),
]
DryRunOption = Annotated[
    bool,
    typer.Option(
        "--dry-run",
        help="Say what a run would do (concepts, answers already cached, requests left and "
        "their time at --rate) and stop: nothing is sent but the release probe, nothing written.",
    ),
]


def _reporting(
    command: str, release_dir: Path, json_out: bool, api_key_file: Path | None = None
) -> AbstractContextManager[None]:
    """``exit_on_error`` whose --json report of a run an error stopped is ``failure_json``, the
    report's other keys empty."""
    if not json_out:
        return exit_on_error(api_key_file=api_key_file)
    from tempmedbench_synonyms.regen.report import Report

    empty = Report(command, Outcome.BAD_INPUT, str(release_dir)).to_json()
    for key in ("outcome", "exit_code", "message", "hint"):
        del empty[key]  # the error's own
    return exit_on_error(json_report=partial(failure_json, **empty), api_key_file=api_key_file)


def _finish(
    report: Report, *, verbosity: int, json_out: bool, render: Callable[[Report], str] | None = None
) -> NoReturn:
    """Every command ends alike: the human report on stderr, the JSON one on stdout, the code."""
    if verbosity >= 0:
        echo_report(render(report) if render else render_report(report, verbose=verbosity > 0))
    if json_out:
        print_json(report.to_json())
    raise typer.Exit(report.exit_code)


@app.command("regenerate", cls=PlainUsage)
@with_options
def regenerate_command(
    release_dir: ReleaseArg,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Write the two files under this folder instead."),
    ] = None,
    mrconso: MrconsoOption = None,
    umls_release: ReleaseOverrideOption = None,
    uts: UtsOptions = UtsOptions(),
    dry_run: DryRunOption = False,
    json_out: JsonOption = False,
    quiet: QuietOption = False,
    verbose: VerboseOption = 0,
    version: VersionOption = False,
) -> None:
    """Rebuild the synonym surface and the full kept table, and verify both byte for byte.

    The release folder is checked against MANIFEST.sha256, the atoms come from the UMLS REST API
    (key in UMLS_API_KEY) or from --mrconso, and each rebuilt file lands at its final path only
    when its SHA-256 equals synonym_regeneration/expected_sha256.json; otherwise it is written
    beside it as FILE.unverified.

    Exit codes: 0 verified, 1 mismatch (a hash differs or a concept drifted), 2 bad input,
    3 not authorised (check your UMLS API key), 4 UMLS unavailable, 130 interrupted.

    Example:

        tempmedbench-regenerate-synonyms TempMedBench-1.0 \\
            --mrconso 2025AB/META/MRCONSO.RRF
    """
    verbosity = configure_logging(quiet, verbose)
    options = RegenOptions(release_dir, mrconso=mrconso, out=out, umls_release=umls_release,
                           uts=uts, progress=sys.stderr if verbosity >= 0 else None)  # fmt: skip
    with _reporting("regenerate", release_dir, json_out, uts.api_key_file):
        if dry_run:
            from tempmedbench_synonyms.plan import plan

            report, found = plan(options)
            if verbosity >= 0:
                echo_err(render_plan(report, found))
            if json_out:
                print_json({**report.to_json(), "plan": found.to_json()})
            raise typer.Exit(report.exit_code)
        report = run(options)
    _finish(report, verbosity=verbosity, json_out=json_out)


@app.command("check", cls=PlainUsage)
def check_command(
    release_dir: ReleaseArg,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Where regenerate wrote the files, if not the release."),
    ] = None,
    json_out: JsonOption = False,
    quiet: QuietOption = False,
    verbose: VerboseOption = 0,
) -> None:
    """Verify files already rebuilt against expected_sha256.json, with no network.

    Example:

        tempmedbench-synonyms check TempMedBench-1.0
    """
    verbosity = configure_logging(quiet, verbose)
    with _reporting("check", release_dir, json_out):
        report = check(release_dir, out=out)
    _finish(report, verbosity=verbosity, json_out=json_out)


@app.command("freeze", cls=PlainUsage)
@with_options
def freeze_command(
    release_dir: ReleaseArg,
    mrconso: MrconsoOption = None,
    update_manifest: Annotated[
        bool,
        typer.Option(
            "--update-manifest",
            help="Also rewrite the manifest line of the hashes.",
        ),
    ] = False,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Replace an existing expected_sha256.json (kept as expected_sha256.json.bak).",
        ),
    ] = False,
    umls_release: ReleaseOverrideOption = None,
    uts: UtsOptions = UtsOptions(),
    json_out: JsonOption = False,
    quiet: QuietOption = False,
    verbose: VerboseOption = 0,
) -> None:
    """For release authors: write synonym_regeneration/expected_sha256.json from a regeneration.

    It refuses when any concept drifts, and writes neither rebuilt file into the release (a
    release must never carry UMLS strings). An existing expected_sha256.json is replaced only
    with --force, which keeps the previous one as expected_sha256.json.bak and lists the hashes
    that changed. MANIFEST.sha256 is left alone unless you pass --update-manifest.

    Example:

        tempmedbench-synonyms freeze my-release \\
            --mrconso 2025AB/META/MRCONSO.RRF --update-manifest
    """
    verbosity = configure_logging(quiet, verbose)
    options = RegenOptions(release_dir, mrconso=mrconso, umls_release=umls_release, uts=uts,
                           progress=sys.stderr if verbosity >= 0 else None)  # fmt: skip
    with _reporting("freeze", release_dir, json_out, uts.api_key_file):
        from tempmedbench_synonyms.regen.freeze import freeze

        report = freeze(
            release_dir, options.source(), umls_release=umls_release,
            update_manifest=update_manifest, force=force,
        )  # fmt: skip
    _finish(report, verbosity=verbosity, json_out=json_out, render=render_freeze)


@app.command("demo", cls=PlainUsage)
def demo_command(
    out: Annotated[
        Path, typer.Option("--out", help="Where to write the two rebuilt files.")
    ] = Path("tempmedbench-demo-out"),
    json_out: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """Regenerate the bundled, invented demo release from its invented MRCONSO.RRF.

    Needs no UMLS licence and no network: it shows what a run looks like and checks the install.
    It ends with both files verified (exit 0).

    Example:

        tempmedbench-synonyms demo --out /tmp/demo
    """
    verbosity = configure_logging(quiet, 0)
    with _reporting("demo", Path("demo"), json_out):
        data = demo_data()
        options = RegenOptions(data.release, mrconso=data.mrconso, out=out,
                               progress=sys.stderr if verbosity >= 0 else None)  # fmt: skip
        report = run(options)
        report.command = "demo"  # what the user ran, in --json and in the report's first line
    _finish(report, verbosity=verbosity, json_out=json_out)


app.command("doctor", cls=PlainUsage)(doctor_command)
app.add_typer(umls_app, name="umls")
app.add_typer(cache_app, name="cache")
app.add_typer(gps_app, name="gps")

# --install-completion, as the main script
regenerate_app = command_group("tempmedbench-regenerate-synonyms", add_completion=True)
regenerate_app.command(cls=PlainUsage)(regenerate_command)


def _run(command: typer.Typer, prog_name: str, *, script: bool = False) -> None:
    """Run a command line; a late Ctrl-C cannot then turn the exit into a traceback (SPEC 8).
    ``script``: a console script's, which ends with ``runtime.quick_exit``."""
    if script:
        runtime.stand_in_for_closed_streams()
    try:
        try:
            _only_asked(command, sys.argv[1:])(prog_name=prog_name)
        finally:
            runtime.ignore_interrupts()
    except SystemExit as done:
        if script:
            runtime.quick_exit(done.code)
        raise


def _only_asked(command: typer.Typer, args: list[str]) -> typer.Typer:
    """``command`` with only the group or command ``args`` name first, and so on down: typer
    builds the parser of every command before it parses (~1 ms each, 20 ms for all: issue 24),
    and a run needs one. Given an option first, or a name it lacks, the whole ``command``."""
    groups = [g for g in command.registered_groups if args and g.name == args[0]]
    commands = [c for c in command.registered_commands if args and c.name == args[0]]
    if len(groups) + len(commands) != 1:
        return command
    asked = copy.copy(command)
    asked.registered_commands = commands
    asked.registered_groups = [copy.copy(g) for g in groups]
    for group in asked.registered_groups:
        if group.typer_instance is not None:
            group.typer_instance = _only_asked(group.typer_instance, args[1:])
    return asked


def main() -> None:
    """Run ``tempmedbench-synonyms`` with ``sys.argv``; ends with ``SystemExit``."""
    _run(app, "tempmedbench-synonyms")


def script_main() -> None:
    """The console script ``tempmedbench-synonyms``: :func:`main`, then ``runtime.quick_exit``."""
    _run(app, "tempmedbench-synonyms", script=True)


def script_regenerate_main() -> None:
    """The console script ``tempmedbench-regenerate-synonyms``, then ``runtime.quick_exit``."""
    _run(regenerate_app, "tempmedbench-regenerate-synonyms", script=True)
