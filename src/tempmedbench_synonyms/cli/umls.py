"""The ``umls`` commands: ask the UMLS REST API for atoms and concepts, through the cache."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from tempmedbench_synonyms.atoms import AtomQuery
from tempmedbench_synonyms.cli._options import (
    JsonOption,
    Only,
    PlainGroup,
    PlainUsage,
    QuietOption,
    VerboseOption,
    with_options,
)
from tempmedbench_synonyms.cli._shared import (
    configure_logging,
    echo_err,
    exit_on_error,
    failure_json,
    print_json,
)
from tempmedbench_synonyms.errors import plural
from tempmedbench_synonyms.secret import clean_text
from tempmedbench_synonyms.uts.options import UtsOptions

if TYPE_CHECKING:  # the UTS client (requests, pydantic) is imported when a command runs
    from tempmedbench_synonyms.uts.cached import CachedUts
    from tempmedbench_synonyms.uts.models import UtsAtom, UtsConcept

umls_app = typer.Typer(
    name="umls",
    help="Ask the UMLS REST API (UTS) for atoms and concepts, through the same cache, rate "
    "limit and retries as a regeneration. The API key comes from UMLS_API_KEY, "
    "UMLS_API_KEY_FILE or --api-key-file. Exit 0: found; 1: UMLS has no such thing; 2: bad input; "
    "3: not authorised; 4: unavailable.",
    cls=PlainGroup,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,  # also when called on its own, as tests do
)

ReleaseOption = Annotated[
    str,
    typer.Option("--umls-release", help="UMLS release, such as 2025AB, or current."),
]


#: The network options of a command that sends one request at a time.
OneAtATime = Annotated[
    UtsOptions,
    Only(("base_url", "cache_dir", "offline", "refresh", "rate", "timeout", "api_key_file")),
]


@contextmanager
def _session(
    options: UtsOptions, *, quiet: bool, verbose: int, as_json: bool
) -> Iterator[CachedUts]:
    """Configure logging, open the cached client, and turn errors into exit codes."""
    verbosity = configure_logging(quiet, verbose)
    with exit_on_error(
        json_report=partial(failure_json, found=False) if as_json else None,
        api_key_file=options.api_key_file,
    ):
        from tempmedbench_synonyms.uts.session import open_uts

        uts = open_uts(options, workers=1)
        try:
            yield uts
        finally:
            uts.close()
            if verbosity > 0:
                counts = uts.counters()
                sent, hits = counts.requests, counts.cache_hits
                echo_err(f"{plural(sent, 'request')} sent, {plural(hits, 'answer')} from the cache")


def _shown(value: str | None) -> str:
    """A server's string as it is shown (a table, ``--json``): ``clean_text``, SPEC section 8."""
    return "" if value is None else clean_text(value)


def _atom_json(atom: UtsAtom) -> dict[str, Any]:
    return {
        "aui": _shown(atom.ui),
        "name": _shown(atom.name),
        "tty": _shown(atom.term_type),
        "sab": _shown(atom.root_source),
        "language": None if atom.language is None else _shown(atom.language),
        "cui": _shown(atom.cui),
        "code": _shown(atom.code_id) or None,
        "obsolete": atom.obsolete,
        "suppressible": atom.suppressible,
        "usable": atom.usable,
    }


def _table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(header, widths, strict=True)).rstrip()]
    for r in rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    return "\n".join(lines)


def _not_found(
    release: str, query: str, message: str, as_json: bool, empty: dict[str, Any]
) -> NoReturn:
    """UMLS answered 404: exit 1, with the ``--json`` document if asked (``empty`` completes it)."""
    if as_json:
        print_json(
            {"outcome": "not_found", "release": release, "query": query, "found": False, **empty}
        )
    echo_err(f"UMLS {release} has {message} (404 Not Found)")
    echo_err(
        "hint: check the identifier, and the release: UTS answers 404 as well for a release it "
        "does not serve"
    )
    raise typer.Exit(1)


def _show_atoms(what: str, release: str, atoms: list[UtsAtom] | None, as_json: bool) -> None:
    if atoms is None:
        _not_found(release, what, f"no atoms for {what}", as_json, {"atoms": []})
    # UTS sends atoms in no documented order: show them in a stable one.
    ordered = sorted(atoms, key=lambda a: (a.root_source, a.term_type, a.name, a.ui))
    if as_json:
        print_json(
            {
                "outcome": "found",
                "release": release,
                "query": what,
                "found": True,
                "atoms": [_atom_json(a) for a in ordered],
            }
        )
        return
    rows = [
        [_shown(a.ui), _shown(a.root_source), _shown(a.term_type), _shown(a.language),
         _shown(a.cui), "yes" if a.usable else "no", _shown(a.name)]
        for a in ordered
    ]  # fmt: skip
    typer.echo(_table(rows, ["AUI", "SAB", "TTY", "LAT", "CUI", "USABLE", "NAME"]))
    echo_err(f"{plural(len(ordered), 'atom')} of {what}, UMLS {release}")


@umls_app.command("atoms", cls=PlainUsage)
@with_options
def atoms_command(
    cui: Annotated[str, typer.Argument(metavar="CUI", help="The concept's CUI, such as C0020538.")],
    sab: Annotated[
        str | None,
        typer.Option(
            "--sab",
            help="Only atoms of this source: the request of a table's route cui (without "
            "it, atoms of every source).",
        ),
    ] = None,
    umls_release: ReleaseOption = "current",
    uts: OneAtATime = UtsOptions(),
    as_json: JsonOption = False,
    quiet: QuietOption = False,
    verbose: VerboseOption = 0,
) -> None:
    """The English atoms of a concept, obsolete and suppressible ones left out.

    Example:

        tempmedbench-synonyms umls atoms C0020538 --sab SNOMEDCT_US
    """
    with _session(uts, quiet=quiet, verbose=verbose, as_json=as_json) as client:
        if sab:
            release, found = client.atoms(umls_release, AtomQuery("cui", sab, cui))
            what = f"CUI {cui} in {sab}"
        else:
            release, found = client.concept_atoms(umls_release, cui)
            what = f"CUI {cui}"
        _show_atoms(what, release, found, as_json)


@umls_app.command("source", cls=PlainUsage)
@with_options
def source_command(
    sab: Annotated[
        str, typer.Argument(metavar="SAB", help="Root source abbreviation, such as SNOMEDCT_US.")
    ],
    code: Annotated[
        str, typer.Argument(metavar="CODE", help="The source-asserted code, such as 38341003.")
    ],
    umls_release: ReleaseOption = "current",
    uts: OneAtATime = UtsOptions(),
    as_json: JsonOption = False,
    quiet: QuietOption = False,
    verbose: VerboseOption = 0,
) -> None:
    """The English atoms of a source-asserted code, as a table's route source asks for them.

    Example:

        tempmedbench-synonyms umls source SNOMEDCT_US 38341003
    """
    with _session(uts, quiet=quiet, verbose=verbose, as_json=as_json) as client:
        release, found = client.atoms(umls_release, AtomQuery("source", sab, code))
        _show_atoms(f"{sab} code {code}", release, found, as_json)


@umls_app.command("atom", cls=PlainUsage)
@with_options
def atom_command(
    aui: Annotated[str, typer.Argument(metavar="AUI", help="The atom's AUI, such as A3220484.")],
    umls_release: ReleaseOption = "current",
    uts: OneAtATime = UtsOptions(),
    as_json: JsonOption = False,
    quiet: QuietOption = False,
    verbose: VerboseOption = 0,
) -> None:
    """One atom by its AUI (the request a table's route aui sends).

    Example:

        tempmedbench-synonyms umls atom A3220484 --json
    """
    with _session(uts, quiet=quiet, verbose=verbose, as_json=as_json) as client:
        # The sab of an aui query only scopes candidates; the request does not send it.
        release, found = client.atoms(umls_release, AtomQuery("aui", "", aui))
        _show_atoms(f"AUI {aui}", release, found, as_json)


@umls_app.command("concept", cls=PlainUsage)
@with_options
def concept_command(
    cui: Annotated[str, typer.Argument(metavar="CUI", help="The concept's CUI, such as C0020538.")],
    umls_release: ReleaseOption = "current",
    uts: OneAtATime = UtsOptions(),
    as_json: JsonOption = False,
    quiet: QuietOption = False,
    verbose: VerboseOption = 0,
) -> None:
    """A concept: its name, status, atom count and semantic types (the release probe's request).

    Example:

        tempmedbench-synonyms umls concept C0020538
    """
    with _session(uts, quiet=quiet, verbose=verbose, as_json=as_json) as client:
        release, concept = client.concept(umls_release, cui)
        _show_concept(cui, release, concept, as_json)


def _show_concept(cui: str, release: str, concept: UtsConcept | None, as_json: bool) -> None:
    if concept is None:
        _not_found(release, f"CUI {cui}", f"no concept {cui}", as_json, {"concept": None})
    doc = {
        "cui": _shown(concept.ui),
        "name": None if concept.name is None else _shown(concept.name),
        "status": None if concept.status is None else _shown(concept.status),
        "suppressible": concept.suppressible,
        "atom_count": concept.atom_count,
        "semantic_types": [_shown(t.name) for t in concept.semantic_types if t.name],
        "release": release,  # the concrete release the answer came from
    }
    if as_json:
        print_json(
            {
                "outcome": "found",
                "release": release,
                "query": f"CUI {cui}",
                "found": True,
                "concept": doc,
            }
        )
        return
    rows = [[k, "" if v is None else (", ".join(v) if isinstance(v, list) else str(v))]
            for k, v in doc.items()]  # fmt: skip
    typer.echo(_table(rows, ["FIELD", "VALUE"]))
