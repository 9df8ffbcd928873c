"""The ``umls`` commands (SPEC section 11): ask UMLS, through ``Umls``, one input or many.

Inputs come as arguments or ``--file``; the answers are a table on stdout, or with ``--json``
one JSON line an input. The exit code is the highest of the inputs' (docs/reference.md).
"""

from __future__ import annotations

import codecs
import inspect
import io
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass, fields, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from tempmedbench_synonyms.cli._options import (
    JsonLinesOption,
    JsonOption,
    Only,
    PlainUsage,
    QuietOption,
    UsageError,
    VerboseOption,
    command_group,
    with_options,
)
from tempmedbench_synonyms.cli._shared import (
    configure_logging,
    echo_err,
    echo_out,
    exit_on_error,
    failure_json,
    print_json,
    stdout_gone,
)
from tempmedbench_synonyms.cli.cache import CacheOnly
from tempmedbench_synonyms.config import option, resolve_index_dir
from tempmedbench_synonyms.errors import BadInputError, Outcome
from tempmedbench_synonyms.lookups import (
    KINDS,
    Answer,
    Hierarchy,
    Lookup,
    Relations,
    Search,
    Sources,
)
from tempmedbench_synonyms.paths import DIRECTIONS
from tempmedbench_synonyms.secret import clean_text, shortened
from tempmedbench_synonyms.uts.options import Local, UtsOptions

if TYPE_CHECKING:  # the UTS client (requests, pydantic) is imported when a command runs
    from tempmedbench_synonyms.umls import Umls

umls_app = command_group(
    "umls",
    help="Ask UMLS: search, crosswalk, definitions, relations, hierarchies, semantic types, "
    "sources, concepts and atoms, one input or many (--file), through the same cache, rate "
    "limit and retries as a regeneration, or from your own UMLS files (--meta). The API key "
    "comes from UMLS_API_KEY, UMLS_API_KEY_FILE or --api-key-file. Exit 0: found; 1: UMLS has "
    "nothing for an input; 2: bad input; 3: not authorised; 4: unavailable; 130: interrupted.",
)


@dataclass(frozen=True, slots=True)
class Asking:
    """How a ``umls`` command asks: which release, from where, which inputs, or only a plan."""

    umls_release: str = option(
        "current",
        "--umls-release",
        "The UMLS release, such as 2025AB, or current (UTS's newest; with --meta, the one the "
        "files' names say).",
    )
    file: Path | None = option(
        None,
        "--file",
        "Read the inputs from a file, one a line (for a source code, its SAB, a tab, then the "
        "code); - is standard input; blank lines are skipped.",
        "",
    )
    dry_run: bool = option(
        False,
        "--dry-run",
        "Say how many inputs the cache answers and how long the rest take (with --meta: the "
        "files it needs, and whether each is indexed), and stop: nothing is sent or built.",
    )


#: ``umls sources`` asks one request: no --file, no --workers.
OneRequest = Annotated[Asking, Only(("umls_release", "dry_run"))]
#: ``umls index`` builds an index: where it goes, no other file.
IndexOnly = Annotated[Local, Only(("index_dir",))]
OneNetwork = Annotated[
    UtsOptions, Only(f for f in UtsOptions.__dataclass_fields__ if f != "workers")
]


@dataclass(frozen=True, slots=True)
class Shown:
    """How a command shows its answers: the table's header and one row a result."""

    header: list[str]
    rows: Callable[[Lookup, Answer], list[list[str]]]
    #: the keys a command printed before SPEC 11, kept beside ``results`` (``extra``)
    extra: Callable[[Lookup, Answer], dict[str, Any]] | None = None
    #: how a single input is shown, if not as one of many
    one: Shown | None = None
    #: columns left out when empty in every row (a tree number asked only with --details)
    optional: frozenset[str] = frozenset()


def _run(inputs: Items, given: dict[str, Any], shown: Shown) -> NoReturn:
    """Ask every input, show the answers, and end with the highest exit code (``given``: the
    command's parameters)."""
    asking: Asking = given["asking"]
    local: Local = given["local"]
    uts: UtsOptions = given["uts"]
    json_out: bool = given["json_out"]
    verbosity = configure_logging(given["quiet"], given["verbose"])
    # An error that ends the batch (not authorised, unavailable, interrupted) is one more line,
    # its extra keys those of an answer that found nothing (whose lookup is never read).
    empty: dict[str, Any] = {
        "input": None, "release": None, "query": None, "results": [], "truncated": False,
    }  # fmt: skip
    if shown.extra is not None:
        empty |= shown.extra(Search(string=""), Answer("", Outcome.NOT_FOUND))
    ended = partial(failure_json, **empty)
    with exit_on_error(
        json_report=ended if json_out else None, api_key_file=uts.api_key_file, one_line=True
    ):
        items = inputs()
        if len(items) == 1 and shown.one is not None:
            shown = shown.one
        if not items and asking.file is not None:
            raise BadInputError(
                "--file holds no input: it is empty, or has only blank lines",
                path=asking.file, hint="give one input a line, or give them as arguments",
            )  # fmt: skip
        if not items:
            raise BadInputError(
                "no input: give it as arguments, or one a line in --file PATH",
                hint="see --help for an example",
            )
        from tempmedbench_synonyms.umls import Umls

        # one bar for a batch, or for an index's build; one request needs none
        shows = verbosity >= 0 and (len(items) > 1 or local != Local())
        umls = Umls.of(uts, asking.umls_release, local=local,
                       progress=sys.stderr if shows else False)  # fmt: skip
        with umls:
            if asking.dry_run:
                _plan(umls, items, json_out=json_out, verbosity=verbosity)
            code = 0
            rows: list[list[str]] = []
            many = len(items) > 1
            try:
                for (_, lookup), answer in _answers(umls, items):
                    code = max(code, answer.exit_code)
                    if shown.extra is not None:
                        answer = replace(answer, extra=shown.extra(lookup, answer))
                    if json_out:
                        line = {**answer.to_json(), "warnings": umls.warnings()}
                        # ``input`` stays exact (a script joins on it); the query is words
                        line["query"] = shortened(answer.query, QUERY_SHOWN)
                        print_json(line, one_line=True)
                    else:
                        found = (
                            shown.rows(lookup, answer) if answer.outcome is Outcome.FOUND else []
                        )
                        rows += [[_shown(answer.input), *row] for row in found] if many else found
                    if answer.outcome is Outcome.BAD_INPUT or (
                        answer.outcome is not Outcome.FOUND and verbosity >= 0
                    ):
                        _say(answer, many)  # what the table cannot show (-q: errors only)
                    elif verbosity >= 0 and not many and not json_out:
                        _say(answer, many)
                    if stdout_gone():  # (``| head`` read what it wanted: ask no more)
                        break
            finally:
                # Also when the batch ends early (Ctrl-C, a refused key): the answers before the
                # end are shown, as --json shows their lines.
                if rows and not json_out:
                    header = (["INPUT"] if many else []) + shown.header
                    echo_out(_table(rows, header, optional=shown.optional))
            said = umls.summary() if verbosity > 0 else None
            if said is not None:
                echo_err(said)
    raise typer.Exit(code)


def _answers(umls: Umls, items: Sequence[Item]) -> Iterator[tuple[tuple[str, Lookup], Answer]]:
    """Each input with its answer, in input order (an unreadable line's is bad input)."""
    with closing(umls.answer_many(_askable(items))) as asked:
        for input, lookup in items:
            if isinstance(lookup, BadInputError):
                bad = Answer(input, Outcome.BAD_INPUT, message=str(lookup), hint=lookup.hint,
                             release=umls.release)  # fmt: skip
                # the lookup is only read for a found answer: any will do
                yield (input, Search(string="")), bad
            else:
                yield (input, lookup), next(asked)
        next(asked, None)  # the batch runs to its end: its last progress line ("done in")


def _askable(items: Sequence[Item]) -> list[tuple[str, Lookup]]:
    return [(input, lookup) for input, lookup in items if not isinstance(lookup, BadInputError)]


def _say(answer: Answer, many: bool) -> None:
    """An answer's message on stderr (its input first if several), with its hint if any."""
    where = f"{_label(answer.input)}: " if many else ""
    error = "error: " if answer.outcome is Outcome.BAD_INPUT else ""
    echo_err(f"{error}{where}{answer.message}")
    if answer.hint and answer.outcome is not Outcome.FOUND and not many:
        echo_err(f"hint: {answer.hint}")


def _plan(umls: Umls, items: Sequence[Item], *, json_out: bool, verbosity: int) -> NoReturn:
    """``--dry-run``: how many inputs the cache answers, how long the rest take; exit 0."""
    askable = _askable(items)
    # lines that could not be read: bad input too
    line, plan = umls.plan(askable, unread=len(items) - len(askable))
    if verbosity >= 0:
        echo_err(f"dry run: {line}")
    if json_out:
        print_json({
            "outcome": Outcome.PLANNED.value, "exit_code": 0, "message": f"dry run: {line}",
            "plan": plan,
        }, one_line=True)  # fmt: skip
    raise typer.Exit(0)


#: The most bytes ``--file`` holds: a larger file, or standard input that goes on
#: (``yes | ...``), is bad input, read no further.
INPUT_FILE_MAX = 64 << 20
#: The most inputs ``--file`` holds: 64 MiB of short lines would be ten million inputs, several
#: GB of lookups (a dry run of a million short terms peaks under 500 MB); counted as the lines
#: are read, so that a longer file is refused before any lookup is made.
INPUT_COUNT_MAX = 1_000_000

#: A line of ``--file``: its number, its text, and the error that spoils it (not UTF-8).
Line = tuple[int, str, BadInputError | None]


def _lines(file: Path | None) -> list[Line]:
    """``--file``'s inputs with their line numbers: a CR, blank lines and a BOM dropped; a
    non-UTF-8 line is given with its error (one bad input)."""
    if file is None:
        return []
    raw = _read_file(file)
    found: list[Line] = []
    # Line by line from the bytes (never one list of every line): past INPUT_COUNT_MAX the file
    # is refused before the rest is split, decoded or made into lookups.
    for n, data in enumerate(io.BytesIO(raw), start=1):
        data = data.removesuffix(b"\n").removesuffix(b"\r")
        if n == 1:
            data = data.removeprefix(codecs.BOM_UTF8)
        try:
            line, spoilt = data.decode("utf-8"), None
        except UnicodeDecodeError as err:
            line = data.decode("utf-8", "backslashreplace")
            spoilt = BadInputError(
                f"the line is not UTF-8 text (byte {data[err.start]:#04x} at byte "
                f"{err.start + 1})", path=file, line=n,
                hint="save the file as UTF-8 (in Excel: CSV UTF-8)",
            )  # fmt: skip
        if not line.strip():
            continue
        if len(found) == INPUT_COUNT_MAX:
            raise BadInputError(f"--file holds more than {INPUT_COUNT_MAX} inputs", path=file,
                                line=n, hint="split the inputs into several runs")  # fmt: skip
        found.append((n, line, spoilt))
    return found


def _read_file(file: Path) -> bytes:
    """The bytes of ``--file`` (``-``: standard input), at most ``INPUT_FILE_MAX``."""
    from tempmedbench_synonyms.files import os_error, read_regular

    try:
        if str(file) != "-":
            return read_regular(file, what="--file", limit=INPUT_FILE_MAX)
        if sys.stdin is None:  # started with it closed (cron, nohup ... <&-)
            raise BadInputError(
                "standard input is closed: --file - has nothing to read", path=file,
                hint="give the inputs in a file (--file PATH), or pipe them in",
            )  # fmt: skip
        stdin = getattr(sys.stdin, "buffer", sys.stdin)
        raw = stdin.read(INPUT_FILE_MAX + 1)
    except OSError as err:
        raise os_error(err, what="--file") from None
    raw = raw.encode("utf-8", "surrogateescape") if isinstance(raw, str) else raw
    if len(raw) > INPUT_FILE_MAX:
        raise BadInputError(f"--file is larger than {INPUT_FILE_MAX} bytes", path=file,
                            hint="split the inputs into several runs")  # fmt: skip
    return raw


def _sab_first(ids: Sequence[str] | None) -> tuple[str | None, list[str]]:
    return (ids[0], list(ids[1:])) if ids else (None, [])


#: A lookup from its input's fields: the kind, or the command's options with them filled in.
Make = Callable[..., Lookup]


#: An input and its lookup, or the error that keeps it from being asked (a line not UTF-8).
Item = tuple[str, "Lookup | BadInputError"]
Items = Callable[[], list[Item]]


def _plain(args: Sequence[str] | None, file: Path | None, make: Make, name: str) -> list[Item]:
    """One-word inputs (terms, CUIs, AUIs), arguments then ``--file``'s, each the field ``name``
    of ``make``'s lookup."""
    given: list[Item] = [(one, make(**{name: one})) for one in args or ()]
    return given + [(line, spoilt or make(**{name: line})) for _, line, spoilt in _lines(file)]


def _coded(
    sab: str | None, codes: Sequence[str] | None, file: Path | None, make: Make
) -> list[Item]:
    """Source codes: ``SAB CODE...``, then ``--file``'s ``SAB<TAB>CODE`` (or ``CODE`` after a
    SAB argument); each with ``make``'s lookup, or the error that spoils its line."""
    pairs: list[tuple[str, str, BadInputError | None]] = []
    if sab is not None:
        pairs += [(sab, code, None) for code in codes or ()]
    for n, line, spoilt in _lines(file):
        if "\t" in line:
            given, code = line.split("\t", 1)
            given = given.strip()
            if sab is not None and not codes and given != sab and spoilt is None:
                # A SAB argument without codes is there for the file's codes: which source
                # was meant? Asking either would answer another question.
                raise BadInputError(
                    f"the line's SAB {shortened(given, LABEL_SHOWN)} is not the SAB argument "
                    f"{shortened(sab, LABEL_SHOWN)}",
                    path=file, line=n,
                    hint="give SAB<TAB>CODE lines and no SAB argument, or the SAB argument and "
                    "one code a line",
                )  # fmt: skip
            pairs.append((given, code, spoilt))
        elif sab is not None:
            pairs.append((sab, line, spoilt))
        else:
            raise BadInputError(
                f"{line[:60]!r} is not SAB<TAB>CODE",
                path=file,
                line=n,
                hint="give each line as SAB, a tab, then the code, or the SAB as the first "
                "argument and one code a line",
            )
    if sab is not None and not codes and file is None:
        raise BadInputError(f"no code of {sab}: give SAB CODE...", hint="see --help")
    return [(f"{s} {c}", spoilt or make(sab=s, code=c)) for s, c, spoilt in pairs]


#: The most characters of an input that a line of stderr names it by, and of a JSON ``query``.
LABEL_SHOWN = 60
QUERY_SHOWN = 80


def _label(text: str) -> str:
    """An input as stderr names it: cut, and each character a terminal would not print as
    itself (controls, bidi overrides) written as its escape."""
    cut = shortened(text, LABEL_SHOWN)
    if cut.isprintable():  # (most inputs: no character to look at one by one)
        return cut
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in cut)


def _shown(value: object) -> str:
    """A server's string as a table shows it (``clean_text``, SPEC section 8)."""
    return "" if value is None else clean_text(str(value))


def _table(
    rows: list[list[str]], header: list[str], *, optional: frozenset[str] = frozenset()
) -> str:
    """The rows under ``header``, aligned by terminal width (wide characters take two); an
    ``optional`` column empty in every row is left out."""
    from rich.cells import cell_len

    kept = [i for i, name in enumerate(header) if name not in optional or any(r[i] for r in rows)]
    table = [[row[i] for i in kept] for row in [header, *rows]]
    widths = [max(cell_len(r[i]) for r in table) for i in range(len(kept))]
    return "\n".join(
        "  ".join(c + " " * (w - cell_len(c)) for c, w in zip(r, widths, strict=True)).rstrip()
        for r in table
    )


def _models(lookup: Lookup, answer: Answer) -> list[Any]:
    from tempmedbench_synonyms.uts.models import read_results

    models: list[Any] = list(read_results(answer, lookup))
    if lookup.order:
        models.sort(key=lambda m: tuple(getattr(m, name) for name in lookup.order))
    return models


def _rows(lookup: Lookup, answer: Answer) -> list[list[str]]:
    return [[_cell(getattr(m, c.attribute)) for c in lookup.columns]
            for m in _models(lookup, answer)]  # fmt: skip


def _cell(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(_shown(v) for v in value)
    return _shown(value)


def _atom_json(atom: Any) -> dict[str, Any]:
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


def _atoms_extra(lookup: Lookup, answer: Answer) -> dict[str, Any]:
    found = answer.outcome is Outcome.FOUND
    atoms = [_atom_json(a) for a in _models(lookup, answer)] if found else []
    return {"found": found, "atoms": atoms}


def _concept_doc(lookup: Lookup, answer: Answer) -> dict[str, Any] | None:
    if answer.outcome is not Outcome.FOUND:
        return None
    c: Any = _models(lookup, answer)[0]
    return {
        "cui": _shown(c.ui),
        "name": None if c.name is None else _shown(c.name),
        "status": None if c.status is None else _shown(c.status),
        "suppressible": c.suppressible,
        "atom_count": c.atom_count,
        "semantic_types": [_shown(name) for name in c.type_names],
        "release": answer.release,  # the concrete release the answer came from
    }


def _concept_rows(lookup: Lookup, answer: Answer) -> list[list[str]]:
    doc = _concept_doc(lookup, answer) or {}
    return [[k, _cell(v)] for k, v in doc.items()]


def _concept_extra(lookup: Lookup, answer: Answer) -> dict[str, Any]:
    return {"found": answer.outcome is Outcome.FOUND, "concept": _concept_doc(lookup, answer)}


#: The keys the commands that came before SPEC 11 print beside ``results`` (kept: section 7),
#: and the one concept ``umls concept`` shows as FIELD VALUE.
_ATOMS_KEYS = {"extra": _atoms_extra}
_BEFORE: dict[str, dict[str, Any]] = {
    "atoms": _ATOMS_KEYS, "source": _ATOMS_KEYS, "atom": _ATOMS_KEYS,
    "concept": {"extra": _concept_extra,
                "one": Shown(["FIELD", "VALUE"], _concept_rows, _concept_extra)},
}  # fmt: skip


def _shown_of(kind: type[Lookup]) -> Shown:
    optional = frozenset(c.header for c in kind.columns if c.optional)
    return Shown([c.header for c in kind.columns], _rows, optional=optional,
                 **_BEFORE.get(kind.command, {}))  # fmt: skip


#
# Every kind of ``lookups.KINDS`` is one command, its inputs one word each (a term, a CUI, an
# AUI) or SAB CODE..., its options the kind's fields, its help the kind's; relations, hierarchy
# and sources take inputs of their own and are written out below.


#: The inputs of a command that reads them its own way: from its ``Make``, what was given and
#: ``--file``.
Inputs = Callable[[Make, dict[str, Any], Path | None], Items]


def _command(
    kind: type[Lookup],
    *,
    arguments: list[inspect.Parameter] | None = None,
    flags: Sequence[tuple[str, str]] = (),
    inputs: Inputs | None = None,
    asking: Any = Asking,
    uts: Any = UtsOptions,
) -> Callable[..., None]:
    """``umls COMMAND`` of ``kind``: its arguments (by default one word a input, or SAB CODE...),
    its ``flags`` (name and help), its fields' options (``with_options``) and the common ones."""
    coded = kind.inputs == ("sab", "code")
    options = any(f.metadata.get("cli") for f in fields(kind))
    if arguments is None:
        arguments = _arguments(None if coded else kind.argument)
    params = [
        *arguments,
        *(_param(name, Annotated[bool, typer.Option(f"--{name}", help=what)], False)
          for name, what in flags),
        *([_param("lookup", kind, kind())] if options else []),
        _param("asking", asking, Asking()),
        _param("local", Local, Local()),
        _param("uts", uts, UtsOptions()),
        _param("json_out", JsonLinesOption, False),
        _param("quiet", QuietOption, False),
        _param("verbose", VerboseOption, 0),
    ]  # fmt: skip

    def command(**given: Any) -> None:
        asking: Asking = given["asking"]
        # the lookup of one input: the command's options, if any, with its fields filled in
        make: Make = _maker(given["lookup"]) if "lookup" in given else kind
        if inputs is not None:
            items = inputs(make, given, asking.file)
        elif coded:
            items = partial(_coded, given["sab"], given["codes"], asking.file, make)
        else:
            items = partial(_plain, given["ids"], asking.file, make, kind.inputs[0])
        _run(items, given, _shown_of(kind))

    command.__name__ = f"{kind.command.replace('-', '_')}_command"
    command.__signature__ = inspect.Signature(params, return_annotation=None)  # type: ignore[attr-defined]
    command.__doc__ = kind.__doc__
    return command


def _maker(lookup: Lookup) -> Make:
    """``partial(replace, lookup)``, its fields read once, not for each input."""
    return partial(
        type(lookup), **{f.name: getattr(lookup, f.name) for f in fields(lookup) if f.init}
    )


def _arguments(takes: tuple[str, str] | None) -> list[inspect.Parameter]:
    """One word an input (``takes``: the metavar and help), or ``SAB CODE...``."""
    if takes is None:
        return [
            _argument("sab", str | None, ("SAB", "The source (root source abbreviation).")),
            _argument("codes", list[str] | None, ("CODE", "Codes of that source.")),
        ]
    return [_argument("ids", list[str] | None, takes)]


def _argument(name: str, kind: Any, takes: tuple[str, str]) -> inspect.Parameter:
    metavar, what = takes
    argument = typer.Argument(metavar=metavar, show_default=False, help=what)
    return _param(name, Annotated[kind, argument], None)


def _param(name: str, annotation: Any, default: Any) -> inspect.Parameter:
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
    )


def _relations(make: Make, given: dict[str, Any], file: Path | None) -> Items:
    if given["source"] and given["aui"]:
        raise UsageError("--source and --aui contradict each other: pick one")
    if given["source"]:
        return partial(_coded, *_sab_first(given["ids"]), file, make)
    return partial(_plain, given["ids"], file, make, "aui" if given["aui"] else "cui")


def _hierarchy(make: Make, given: dict[str, Any], file: Path | None) -> Items:
    chosen = [name for name in DIRECTIONS if given[name]]
    directions = "--parents, --children, --ancestors, --descendants"
    if not chosen:
        raise UsageError(f"give one of {directions}")
    if len(chosen) > 1:
        named = ", ".join(f"--{name}" for name in chosen)
        raise UsageError(f"give only one of {directions} (given: {named})")
    make = partial(make, direction=chosen[0])
    if given["aui"]:
        return partial(_plain, given["ids"], file, make, "aui")
    return partial(_coded, *_sab_first(given["ids"]), file, make)


def _sources(make: Make, given: dict[str, Any], file: Path | None) -> Items:
    return lambda: [("sources", make())]


_AUI = ("aui", "The inputs are AUIs.")
#: The commands whose inputs are read their own way (in ``KINDS``' order, as --help lists them).
_WRITTEN: dict[str, Callable[..., None]] = {
    "relations": _command(
        Relations, inputs=_relations,
        arguments=_arguments(("CUI", "Concepts; with --source, SAB CODE...; with --aui, AUIs.")),
        flags=[("source", "The inputs are SAB CODE... (one source)."), _AUI],
    ),
    "hierarchy": _command(
        Hierarchy, inputs=_hierarchy,
        arguments=_arguments(("SAB CODE", "A source and its codes; with --aui, AUIs.")),
        flags=[*((name, f"Their {name}.") for name in DIRECTIONS), _AUI],
    ),
    "sources": _command(
        Sources, inputs=_sources, arguments=[],
        asking=OneRequest, uts=OneNetwork,
    ),
}  # fmt: skip


def index_command(
    path: Annotated[
        Path,
        typer.Argument(
            metavar="PATH",
            show_default=False,
            help="A META folder, or the Metathesaurus or full release zip.",
        ),
    ],
    local: IndexOnly = Local(),
    uts: CacheOnly = UtsOptions(),
    json_out: JsonOption = False,
    quiet: QuietOption = False,
    verbose: VerboseOption = 0,
) -> None:
    """Index your own UMLS files ahead, every part (MRCONSO.RRF, and whichever of MRDEF, MRREL,
    MRSTY, MRHIER and MRSAB the META holds), so that no --meta question waits for a build.

    Example:

        tempmedbench-synonyms umls index ~/umls/2025AB/META
    """  # fmt: skip
    verbosity = configure_logging(quiet, verbose)
    with exit_on_error(json_report=failure_json if json_out else None):
        from tempmedbench_synonyms.mrconso.index import LocalIndex

        index = LocalIndex(path, index_dir=resolve_index_dir(local.index_dir, uts.cache_dir),
                           progress=sys.stderr if verbosity >= 0 else None)  # fmt: skip
        with closing(index):
            parts = index.build()
    if json_out:
        print_json({"index": index.where, "release": index.release,
                    "parts": [p.to_json() for p in parts]})  # fmt: skip
        return
    rows = [[f"{p.file}.RRF", f"{p.rows:,}", f"{p.bytes:,}", f"{p.seconds:.1f}"] for p in parts]
    echo_out(_table(rows, ["FILE", "ROWS", "BYTES", "SECONDS"]))
    if verbosity >= 0:
        echo_err(f"indexed: {index.where}")


for _kind in KINDS:  # in KINDS' order, as --help lists them
    _made = _WRITTEN.get(_kind.command) or _command(_kind)
    umls_app.command(_kind.command, cls=PlainUsage)(with_options(_made))
umls_app.command("index", cls=PlainUsage)(with_options(index_command))
