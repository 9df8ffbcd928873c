"""Options that several commands share, defined once: name, help, environment variable."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperCommand, TyperGroup

from tempmedbench_synonyms.cli._shared import echo_err, print_json
from tempmedbench_synonyms.config import BASE_URL_ENV, CACHE_DIR_ENV
from tempmedbench_synonyms.errors import Outcome

#: The metavar of a flag: none, so that ``--help`` does not show ``--offline <bool>`` as if the
#: flag took a value (Typer prints the type of every option by default).
FLAG = ""


def _hide_flag_types() -> None:
    """Show no type for the flags Typer adds itself (``--help``, ``--install-completion``).

    Their metavar cannot be set through Typer's API, and ``-h <bool>`` reads as if ``-h`` took a
    value. Typer versions without ``TyperOption.display_type_rich`` show no type there anyway.
    """
    option: Any = getattr(typer.core, "TyperOption", None)
    shown: Any = getattr(option, "display_type_rich", None)
    if option is None or shown is None or getattr(shown, "_flags_hidden", False):
        return

    def display_type_rich(self: Any, ctx: Any) -> str | None:
        if getattr(self, "is_bool_flag", False) and self.metavar is None:
            return None
        found: str | None = shown(self, ctx)
        return found

    display_type_rich._flags_hidden = True  # type: ignore[attr-defined]
    option.display_type_rich = display_type_rich


_hide_flag_types()


def _plain_list_types() -> None:
    """Show a list argument's type as ``<str>...`` (one value or more, as the usage line says),
    not Typer's ``<list[str]>``, which reads as if a Python list were to be typed."""
    parameter: Any = getattr(typer.core, "_TyperParameter", None)
    shown: Any = getattr(parameter, "display_type", None)
    if parameter is None or shown is None or getattr(shown, "_lists_plain", False):
        return

    def display_type(self: Any, ctx: Any) -> str:
        found: str = shown(self, ctx)
        return re.sub(r"^<list\[(.*)\]>$", r"<\1>...", found)

    display_type._lists_plain = True  # type: ignore[attr-defined]
    parameter.display_type = display_type


_plain_list_types()

BaseUrlOption = Annotated[
    str, typer.Option("--base-url", envvar=BASE_URL_ENV, help="UTS REST root.")
]
ApiKeyFileOption = Annotated[
    Path | None,
    typer.Option(
        "--api-key-file",
        help="A file holding your UMLS API key (default: the file UMLS_API_KEY_FILE names, "
        "else the UMLS_API_KEY variable).",
        show_default=False,
    ),
]
CacheDirOption = Annotated[
    Path | None,
    typer.Option(
        "--cache-dir",
        envvar=CACHE_DIR_ENV,
        help="Cache folder (default: the user cache folder of tempmedbench-synonyms).",
        show_default=False,
    ),
]
OfflineOption = Annotated[
    bool,
    typer.Option(
        "--offline", help="Never touch the network: answer from the cache only.", metavar=FLAG
    ),
]
RefreshOption = Annotated[
    bool, typer.Option("--refresh", help="Ignore cached answers and ask UMLS again.", metavar=FLAG)
]
RateOption = Annotated[
    float,
    typer.Option(
        "--rate",
        help="Requests a second, shared by all workers: from 0.1 to 20 (the UTS limit per IP).",
    ),
]
WorkersOption = Annotated[int, typer.Option("--workers", help="Concurrent UTS requests.")]
TimeoutOption = Annotated[
    float,
    typer.Option(
        "--timeout",
        help="The most seconds one HTTP attempt may take, from connect to last byte (the DNS "
        "lookup of the host name is not counted).",
    ),
]
JsonOption = Annotated[
    bool,
    typer.Option("--json", help="Print the result as one JSON object on stdout.", metavar=FLAG),
]
QuietOption = Annotated[
    bool, typer.Option("--quiet", "-q", help="Only errors on stderr.", metavar=FLAG)
]
VerboseOption = Annotated[
    int,
    typer.Option(
        "--verbose",
        "-v",
        count=True,
        help="More detail on stderr (-vv: debug).",
        metavar=FLAG,
        show_default=False,
    ),
]


#: The usage error of the click typer runs on (a copy of its own since typer 0.2x).
_UsageError: type[Exception] = next(
    c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError"
)


QUIET_WITH_VERBOSE = "-q (--quiet) and -v (--verbose) contradict each other: pick one"


def usage_error_json(message: str, command: str) -> dict[str, Any]:
    """The ``--json`` object of a command line the command refused (exit 2)."""
    return {
        "outcome": Outcome.BAD_INPUT.value,
        "exit_code": 2,
        "message": message,
        "hint": f"{command} --help lists the arguments and options",
    }


def _print_usage_json(message: str, command: str) -> None:
    try:
        print_json(usage_error_json(message, command))
    except OSError:  # stdout's reader is gone: the usage message and exit 2 still follow
        pass


@contextmanager
def _answering_usage_errors(wants_json: bool, info_name: str | None) -> Iterator[None]:
    """A usage error raised inside gets its JSON object on stdout first, if ``wants_json``."""
    try:
        yield
    except _UsageError as err:
        if wants_json:
            err_ctx = getattr(err, "ctx", None)
            command = err_ctx.command_path if err_ctx is not None else str(info_name)
            _print_usage_json(err.format_message(), command)  # type: ignore[attr-defined]
        raise


def _json_given(command: Any, args: list[str]) -> bool:
    """Whether ``--json`` is among ``args`` as the flag: not as the value of an option that
    takes one (``--out --json``), nor after ``--``; ``--json=...`` counts (the user meant it,
    and the parser refuses it)."""
    takes_value = {
        opt
        for p in command.params
        if getattr(p, "opts", None)
        and not getattr(p, "is_flag", True)
        and not getattr(p, "count", False)
        for opt in p.opts
    }
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg == "--":
            return False
        elif arg == "--json" or arg.startswith("--json="):
            return True
        elif arg in takes_value:
            skip = True
    return False


class PlainUsage(TyperCommand):
    """Every command of the tool: its usage line names its arguments as they are typed,
    ``RELEASE`` and ``SCTID...``, not typer's ``{RELEASE}`` (read as literal braces; optional
    ones keep their ``[...]``); and a command line the command refuses (an unknown option, a
    bad value, a missing argument, ``-q`` with ``-v``) still gets its JSON object on stdout with
    ``--json`` (``usage_error_json``: outcome ``bad_input``, exit 2), besides the usage message
    on stderr, so that a script reading stdout reads JSON (SPEC section 7; what a group refuses
    before a command is known: :class:`PlainGroup`). Pass it as ``cls=`` to ``@app.command``."""

    def make_context(
        self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any
    ) -> Any:
        wants_json = _json_given(self, args)  # before the parser, which consumes args
        with _answering_usage_errors(wants_json, info_name):
            ctx = super().make_context(info_name, args, parent, **extra)
        if ctx.params.get("quiet") and ctx.params.get("verbose"):
            # which one was meant cannot be guessed: bad input (exit 2), like any other bad option
            echo_err(f"error: {QUIET_WITH_VERBOSE}")
            if wants_json:
                _print_usage_json(QUIET_WITH_VERBOSE, ctx.command_path)
            raise typer.Exit(2)
        return ctx

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        return [
            re.sub(r"^\{(.*)\}(\.\.\.)?$", r"\1\2", piece)
            for piece in super().collect_usage_pieces(ctx)
        ]


class PlainGroup(TyperGroup):
    """Every command group of the tool (the main app, ``gps``, ``umls``, ``cache``): what it
    refuses itself, before a command is known (an unknown command, an option of its own),
    also gets the JSON object of :class:`PlainUsage` when ``--json`` is on the command line
    (meant for the command the user named). Pass it as ``cls=`` to ``typer.Typer``."""

    def make_context(
        self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any
    ) -> Any:
        own = args[: args.index("--")] if "--" in args else args
        wants_json = any(a == "--json" or a.startswith("--json=") for a in own)
        with _answering_usage_errors(wants_json, info_name):
            ctx = super().make_context(info_name, args, parent, **extra)
        ctx.meta[_WANTS_JSON] = wants_json
        return ctx

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        with _answering_usage_errors(bool(ctx.meta.get(_WANTS_JSON)), ctx.info_name):
            return super().resolve_command(ctx, args)


_WANTS_JSON = "tempmedbench_synonyms.wants_json"
