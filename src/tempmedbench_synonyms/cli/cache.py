"""The ``cache`` commands: where the UTS answer cache is, what it holds, and emptying it."""

from __future__ import annotations

from typing import Annotated

import typer

from tempmedbench_synonyms.cli._options import (
    JsonOption,
    Only,
    PlainGroup,
    PlainUsage,
    with_options,
)
from tempmedbench_synonyms.cli._shared import echo_err, exit_on_error, failure_json, print_json
from tempmedbench_synonyms.errors import plural
from tempmedbench_synonyms.secret import shown_text
from tempmedbench_synonyms.uts.options import UtsOptions

#: The one network option the cache commands take.
CacheOnly = Annotated[UtsOptions, Only(("cache_dir",))]

cache_app = typer.Typer(
    name="cache",
    help="Inspect or empty the cache of UMLS REST answers (licensed UMLS content, kept "
    "readable by you only).",
    cls=PlainGroup,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,  # also when called on its own, as tests do
)


@cache_app.command("info", cls=PlainUsage)
@with_options
def info_command(uts: CacheOnly = UtsOptions(), as_json: JsonOption = False) -> None:
    """Where the cache is and how many answers it holds, per UTS base URL and release.

    Example:

        tempmedbench-synonyms cache info --json
    """
    with exit_on_error(json_report=failure_json if as_json else None):
        from tempmedbench_synonyms.uts.cache import cache_info

        info = cache_info(uts.cache_folder)
    if as_json:
        print_json(info.to_json())
        return
    typer.echo(f"cache folder: {info.root}")
    if not info.exists:
        typer.echo("empty: nothing cached yet")
        return
    from tempmedbench_synonyms.progress import format_size

    typer.echo(f"{plural(info.entries, 'answer')}, {format_size(info.bytes)}")
    for ns in info.namespaces:
        typer.echo(
            f"  {shown_text(ns.base_url or ns.folder)}: {plural(ns.entries, 'answer')}, "
            f"{format_size(ns.bytes)}"
        )  # base.json is a file, and folders are named by anyone: escapes, never control bytes
        for release, count in sorted(ns.releases.items()):
            typer.echo(f"    {shown_text(release)}: {count}")
    leftovers = info.temporary_files
    if leftovers:
        echo_err(
            f"note: {plural(leftovers, 'temporary file')} left by an interrupted run; "
            f"the next run that writes to this cache removes {'it' if leftovers == 1 else 'them'}"
        )


@cache_app.command("clear", cls=PlainUsage)
@with_options
def clear_command(uts: CacheOnly = UtsOptions(), as_json: JsonOption = False) -> None:
    """Delete every cached UMLS answer (the next run fetches them again).

    Only the cache's own folder is removed, never other files in --cache-dir.

    Example:

        tempmedbench-synonyms cache clear
    """
    with exit_on_error(json_report=failure_json if as_json else None):
        root = uts.cache_folder
        from tempmedbench_synonyms.uts.cache import clear_cache

        cleared = clear_cache(root)
    if as_json:
        print_json({"root": str(root), "removed": cleared.removed, "warnings": cleared.notes})
        return
    echo_err(f"removed {plural(cleared.removed, 'cached answer')} from {root}")
    for note in cleared.notes:
        echo_err(f"note: {note}")
