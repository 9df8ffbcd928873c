"""The ``cache`` commands: where the UTS answer cache and the local UMLS's indexes are, what they
hold, and emptying them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tempmedbench_synonyms import config
from tempmedbench_synonyms.cli._options import (
    JsonOption,
    Only,
    PlainUsage,
    command_group,
    with_options,
)
from tempmedbench_synonyms.cli._shared import (
    echo_err,
    echo_out,
    exit_on_error,
    failure_json,
    print_json,
)
from tempmedbench_synonyms.errors import plural
from tempmedbench_synonyms.secret import shown_text
from tempmedbench_synonyms.uts.options import UtsOptions

#: The one network option the cache commands take.
CacheOnly = Annotated[UtsOptions, Only(("cache_dir",))]
IndexDir = Annotated[
    Path | None,
    typer.Option(
        "--index-dir",
        help="The local UMLS's index folder (default: TEMPMEDBENCH_INDEX_DIR, else the folder "
        "index in the cache folder).",
        show_default=False,
    ),
]

cache_app = command_group(
    "cache",
    help="Inspect or empty the cache of UMLS REST answers (licensed UMLS content, kept "
    "readable by you only).",
)


@cache_app.command("info", cls=PlainUsage)
@with_options
def info_command(
    uts: CacheOnly = UtsOptions(), index_dir: IndexDir = None, as_json: JsonOption = False
) -> None:
    """Where the cache is and how many answers it holds, per UTS base URL and release, and the
    local UMLS's indexes (each file's part: rows, size, the paths it was built from).

    Example:

        tempmedbench-synonyms cache info --json
    """
    with exit_on_error(json_report=failure_json if as_json else None):
        from tempmedbench_synonyms.mrconso.index import list_indexes
        from tempmedbench_synonyms.uts.cache import cache_info

        info = cache_info(uts.cache_folder)
        folder = config.resolve_index_dir(index_dir, uts.cache_dir)
        parts = list_indexes(folder)
    if as_json:
        indexes = [p.to_json() for p in parts]
        print_json({**info.to_json(), "index_dir": str(folder), "indexes": indexes})
        return
    from tempmedbench_synonyms.progress import format_size

    echo_out(f"cache folder: {info.root}")
    if not info.exists:
        echo_out("empty: nothing cached yet")
    else:
        echo_out(f"{plural(info.entries, 'answer')}, {format_size(info.bytes)}")
        for ns in info.namespaces:
            echo_out(
                f"  {shown_text(ns.base_url or ns.folder)}: {plural(ns.entries, 'answer')}, "
                f"{format_size(ns.bytes)}"
            )  # base.json is a file, and folders are named by anyone: escapes, never control bytes
            for release, count in sorted(ns.releases.items()):
                echo_out(f"    {shown_text(release)}: {count}")
        leftovers = info.temporary_files
        if leftovers:
            echo_err(
                f"note: {plural(leftovers, 'temporary file')} left by an interrupted run; the "
                f"next run that writes to this cache removes {'it' if leftovers == 1 else 'them'}"
            )
    if parts:
        total = format_size(sum(p.bytes for p in parts))
        echo_out(f"index folder: {folder}: {plural(len(parts), 'index file')}, {total}")
        for p in parts:
            rows = "not trusted (rebuilt when used)" if p.rows is None else plural(p.rows, "row")
            paths = shown_text(", ".join(p.paths))
            echo_out(f"  {p.file}: {rows}, {format_size(p.bytes)}, from {paths}")


@cache_app.command("clear", cls=PlainUsage)
@with_options
def clear_command(
    uts: CacheOnly = UtsOptions(),
    index: Annotated[
        bool,
        typer.Option(
            "--index", help="Also remove the local UMLS's indexes (rebuilt when next needed)."
        ),
    ] = False,
    index_dir: IndexDir = None,
    as_json: JsonOption = False,
) -> None:
    """Delete every cached UMLS answer (the next run fetches them again); with --index, the
    local UMLS's indexes too (kept otherwise).

    Only the cache's own folder is removed, never other files in --cache-dir.

    Example:

        tempmedbench-synonyms cache clear
    """
    with exit_on_error(json_report=failure_json if as_json else None):
        root = uts.cache_folder
        from tempmedbench_synonyms.uts.cache import clear_cache

        cleared = clear_cache(root)
        folder = config.resolve_index_dir(index_dir, uts.cache_dir)
        if index:
            from tempmedbench_synonyms.mrconso.index import remove_indexes

            gone = remove_indexes(folder)
    if as_json:
        doc = {"root": str(root), "removed": cleared.removed, "warnings": cleared.notes}
        if index:
            doc |= {"index_dir": str(folder), "index_files_removed": [str(p) for p in gone]}
        print_json(doc)
        return
    echo_err(f"removed {plural(cleared.removed, 'cached answer')} from {root}")
    if index:
        parts = [p for p in gone if not p.name.startswith(".")]  # not their locks, left-overs
        echo_err(f"removed {plural(len(parts), 'index', 'indexes')} from {folder}")
    for note in cleared.notes:
        echo_err(f"note: {note}")
