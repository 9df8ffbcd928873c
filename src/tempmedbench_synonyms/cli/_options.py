"""The options several commands share, defined once (``with_options``, ``JsonOption``...), and the
command and group classes: a command line the parser refuses still gets its JSON object on
stdout when ``--json`` was given (SPEC section 7).
"""

from __future__ import annotations

import dataclasses
import difflib
import errno
import functools
import inspect
import re
import sys
import typing
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

from tempmedbench_synonyms import runtime
from tempmedbench_synonyms.cli._shared import print_json, said_failure
from tempmedbench_synonyms.config import Flag
from tempmedbench_synonyms.errors import Interrupted, Outcome

#: The usage error of the click that typer runs on (a copy of its own since typer 0.2x): the
#: base of the public ``typer.BadParameter``.
UsageError: type[Exception] = next(
    c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError"
)

#: The metavar of a flag: none, so that ``--help`` does not show ``--offline <bool>`` as if the
#: flag took a value (Typer prints the type of every option by default).
FLAG = ""

_F = TypeVar("_F", bound=Callable[..., Any])


class Only(tuple[str, ...]):
    """``Annotated[UtsOptions, Only("base_url", ...)]``: only these fields are options."""


def with_options(func: _F) -> _F:
    """Give ``func`` one option per field of each parameter annotated with an options class, and
    call it with the object built from them; a ``tuple[str, ...]`` field is repeatable and
    comma-separated (``--sabs LNC,MTH --sabs RXNORM``)."""
    signature = inspect.signature(func, eval_str=True)
    params: list[inspect.Parameter] = []
    groups: dict[str, tuple[type[Any], list[str], set[str]]] = {}
    for param in signature.parameters.values():
        cls, only = param.annotation, None
        if typing.get_origin(cls) is Annotated:
            cls, *extras = typing.get_args(cls)
            only = next((e for e in extras if isinstance(e, Only)), None)
        if not (dataclasses.is_dataclass(cls) and isinstance(cls, type)):
            params.append(param)
            continue
        names: list[str] = []
        several: set[str] = set()
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            spelt = f.metadata.get("cli")
            if not isinstance(spelt, Flag) or (only is not None and f.name not in only):
                continue
            kind, default = hints[f.name], f.default
            if typing.get_origin(kind) is tuple:
                kind, default = list[str] | None, None
                several.add(f.name)
            names.append(f.name)
            params.append(
                inspect.Parameter(
                    f"{param.name}__{f.name}",
                    param.kind,
                    default=default,
                    annotation=Annotated[kind, _typer_option(spelt, f)],
                )
            )
        groups[param.name] = (cls, names, several)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        for group, (cls, names, several) in groups.items():
            values = {n: kwargs.pop(f"{group}__{n}") for n in names}
            for n in several:
                values[n] = tuple(
                    part.strip() for v in values[n] or () for part in v.split(",") if part.strip()
                )
            kwargs[group] = cls(**values)
        return func(*args, **kwargs)

    wrapper.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in params}
    return wrapper  # type: ignore[return-value]


def _typer_option(spelt: Flag, f: dataclasses.Field[Any]) -> Any:
    boolean = f.default is False
    return typer.Option(
        spelt.flag,
        help=spelt.help,
        metavar=spelt.metavar,
        show_default=(not boolean if spelt.default_text is None else (spelt.default_text or False)),
    )


# -- the options every command spells alike -----------------------------------------------------


def _one_of_quiet_and_verbose(ctx: typer.Context, param: Any, value: Any) -> Any:
    """``-q`` with ``-v`` is a usage error, whichever the parser meets second."""
    other = "verbose" if param.name == "quiet" else "quiet"
    if value and ctx.params.get(other):
        raise UsageError("-q (--quiet) and -v (--verbose) contradict each other: pick one", ctx)
    return value


JsonOption = Annotated[
    bool,
    typer.Option("--json", help="Print the result as one JSON object on stdout."),
]
#: ``--json`` of a command that answers each of its inputs (SPEC 11: JSON Lines).
JSON_LINES_HELP = "Print one JSON object a line on stdout, one for each input, in input order."
JsonLinesOption = Annotated[bool, typer.Option("--json", help=JSON_LINES_HELP)]
QuietOption = Annotated[
    bool,
    typer.Option(
        "--quiet",
        "-q",
        help="Only errors on stderr.",
        callback=_one_of_quiet_and_verbose,
    ),
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
        callback=_one_of_quiet_and_verbose,
    ),
]


def json_given(args: Sequence[str], commands: Sequence[Any]) -> bool:
    """Whether ``--json`` is among ``args`` as the flag (not a value, not after ``--``)."""
    takes_value = {
        opt
        for command in commands
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


class _UsageJson:
    """Every command and group of the tool: no flag shows a type (``--json <bool>``), and
    the top-level command answers a usage error raised parsing it or any subcommand with its
    JSON object (SPEC 7), then Typer shows it and exits 2.

    What click, typer and rich print themselves (the help, a usage error, the completion
    script) follows the house's rule for a stream that fails a write (``runtime.output_failed``):
    the rest is dropped and the exit is the outcome's, not their exit 1 (rich's
    ``Console.on_broken_pipe``, the EPIPE branch of ``typer.core._main``), and stdout on a full
    disk is said as a command's failure is (exit 2), not a traceback."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().main(*args, **kwargs)  # type: ignore[misc]
        except (SystemExit, OSError) as stop:
            # stderr failed as typer showed an error (rich's exit 1 on a broken pipe, else the
            # OSError itself): the error's exit (2 for a usage error)
            failed = stop if isinstance(stop, OSError) else stop.__context__
            shown = failed.__context__ if isinstance(failed, OSError) else None
            code = getattr(shown, "exit_code", None)
            if isinstance(code, int):
                runtime.drop_output(sys.stderr)
                raise SystemExit(code) from None
            if isinstance(stop, SystemExit):
                raise
            # stdout on a full disk outside a command (the help, --version): said as one's
            raise SystemExit(said_failure(stop).exit_code) from None

    def format_help(self, ctx: Any, formatter: Any) -> None:
        try:
            with _interruptible():  # (rich prints it here, a bare group's help too)
                super().format_help(ctx, formatter)  # type: ignore[misc]
        except SystemExit as stop:  # rich's exit 1: the help ends as it would (0; a bare group 2)
            if not _broken(stop.__context__):
                raise
            runtime.drop_output(sys.stdout)
        except OSError as error:  # rich's own write: a full disk
            if not runtime.output_failed(sys.stdout, error):
                raise

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)  # type: ignore[misc]
        if option is not None:
            _printing_eagerly(option)
        return option

    def get_params(self, ctx: Any) -> list[Any]:
        params: list[Any] = super().get_params(ctx)  # type: ignore[misc]
        for param in params:
            if getattr(param, "name", None) in ("show_completion", "version"):
                _printing_eagerly(param)
            if getattr(param, "is_bool_flag", False) and param.metavar is None:
                param.metavar = FLAG
            if type(param) in _SHOWN:  # (typer makes its own classes: no cls= to give it)
                param.__class__ = _SHOWN[type(param)]  # --help in words, not typer's types
            if _Quick is not None and getattr(param, "_runtime_param", False) is None:
                try:  # typer's private parts: if they changed, typer's own coercion stands
                    desc = param.type_descriptor
                    param._runtime_param = _Quick(desc.parameter_info, desc.annotation, desc)
                except (AttributeError, TypeError):
                    pass
        return params

    def make_context(
        self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any
    ) -> Any:
        if parent is not None:
            return super().make_context(info_name, args, parent, **extra)  # type: ignore[misc]
        full = list(args)  # before the parser, which consumes ``args``
        with _answering(full, self, info_name):
            ctx = super().make_context(info_name, args, parent, **extra)  # type: ignore[misc]
        ctx.meta[_ARGS] = full
        return ctx

    def invoke(self, ctx: Any) -> Any:
        if ctx.parent is not None:
            return super().invoke(ctx)  # type: ignore[misc]
        with _answering(ctx.meta.get(_ARGS, []), self, ctx.info_name):
            return super().invoke(ctx)  # type: ignore[misc]


class _Argument(TyperArgument):
    """An argument whose type column says what it takes, as its usage does (``CODE <code>...``),
    not typer's ``<str>`` or ``<list[str]>``."""

    def display_type_rich(self, ctx: Any) -> str | None:
        shown = super().display_type_rich(ctx)
        if self.metavar is None or shown not in ("<str>", "<list[str]>"):
            return shown
        words = " ".join(f"<{word.lower()}>" for word in self.metavar.split())
        return words + ("..." if self.nargs != 1 else "")


class _Option(TyperOption):
    """An option whose default is said in words (``Flag.default_text``) shows them as they are
    (``[default: 1000]``), not in click's parentheses."""

    def _get_default_string(self, *, ctx: Any, show_default_is_str: bool, **rest: Any) -> str:
        if show_default_is_str:
            return str(self.show_default)
        return super()._get_default_string(ctx=ctx, show_default_is_str=False, **rest)


_SHOWN: dict[type[Any], type[Any]] = {TyperArgument: _Argument, TyperOption: _Option}


def _printing_eagerly(param: Any) -> None:
    """An option that prints and exits (``--help``, ``--version``, ``--show-completion``): a
    write to a stdout whose reader has gone ends it as it would end (0), not click's exit 1; any
    other failure (a full disk) is the command's; a signal while it waits on a full pipe ends it
    (``_interruptible``). Wrapped once: click keeps its help option."""
    show = getattr(param, "callback", None)
    if show is None or getattr(show, _PRINTING, False):  # (typer's own callbacks are wraps too)
        return

    @functools.wraps(show)
    def shown(ctx: Any, param: Any, value: Any) -> Any:
        if not value:  # not asked: a command runs, and the held signals are its (rule 2)
            return show(ctx, param, value)
        try:
            with _interruptible():
                return show(ctx, param, value)
        except OSError as error:  # (click's newline after rich's help, the completion script)
            if not runtime.output_failed(sys.stdout, error):
                raise
            ctx.exit()

    setattr(shown, _PRINTING, True)
    param.callback = shown


_PRINTING = "_tempmedbench_printing"


@contextmanager
def _interruptible() -> Iterator[None]:
    """What the parser prints may wait on a pipe nobody reads (a full pipe): a Ctrl-C or SIGTERM
    there ends it as it ends a command (``runtime.interrupts``: 130, 143), with nothing said,
    instead of being held for a command that never starts."""
    try:
        with runtime.interrupts():
            yield
    except Interrupted as stop:  # (not typer's KeyboardInterrupt branch: its exit is 130 only)
        raise SystemExit(stop.exit_code) from None


def _broken(error: BaseException | None) -> typing.TypeGuard[OSError]:
    """Whether ``error`` is a broken pipe: a stream's reader has gone."""
    return isinstance(error, OSError) and error.errno == errno.EPIPE


@contextmanager
def _answering(args: list[str], top: Any, info_name: str | None) -> Iterator[None]:
    """Print the JSON object of a usage error raised inside, when ``--json`` was given."""
    try:
        yield
    except UsageError as err:
        err_ctx = getattr(err, "ctx", None)
        if err_ctx is not None:
            chain = [c.command for c in _lineage(err_ctx)]
            command = err_ctx.command_path
        else:
            chain, command = [top], str(info_name)
        _near_options_only(err)
        if json_given(args, chain):
            refused = {  # the command line's --json object: exit 2
                "outcome": Outcome.BAD_INPUT.value,
                "exit_code": 2,
                "message": err.format_message(),  # type: ignore[attr-defined]
                "hint": f"{command} --help lists the arguments and options",
            }
            try:
                print_json(refused, one_line=_json_lines(chain[0]))
            except OSError:  # stdout's reader is gone: the usage message and exit 2 follow
                pass
        raise


_ARGS = "tempmedbench_synonyms.args"

#: How alike (difflib's ratio) an unknown option must be to one of the command's to be
#: suggested: click suggests at 0.6, so that ``--limit`` got "(Possible options: --timeout)".
_NEAR_OPTION = 0.8


def _near_options_only(err: Exception) -> None:
    """Keep only near misses among an unknown option's suggestions (``--timout``: ``--timeout``)."""
    unknown, possible = getattr(err, "option_name", None), getattr(err, "possibilities", None)
    if isinstance(unknown, str) and possible:
        near = difflib.get_close_matches(unknown, possible, cutoff=_NEAR_OPTION)
        setattr(err, "possibilities", near)  # noqa: B010 (click's NoSuchOption, untyped here)


def _json_lines(command: Any) -> bool:
    """Whether ``command`` prints JSON Lines: its refusal is then one line too."""
    return any(
        "--json" in getattr(p, "opts", ()) and getattr(p, "help", None) == JSON_LINES_HELP
        for p in getattr(command, "params", ())
    )


def _lineage(ctx: Any) -> Iterator[Any]:
    while ctx is not None:
        yield ctx
        ctx = ctx.parent


# -- the values of options, without pydantic ----------------------------------------------------
#
# Typer 0.2x coerces each value through a pydantic TypeAdapter built on first use: importing
# pydantic and building the adapters was ~60 ms of the ~95 a one-input ``umls`` run takes over
# the CLI's import (issue 24). The values our options take (str, int, float, Path, a Literal,
# list[str]) are coerced here with typer's own functions, as its adapters would; any other
# value goes to typer's adapter, so what it refuses is refused in typer's words.

_SLOW = object()
#: at most 18 digits: int() raises past sys.get_int_max_str_digits(); typer refuses in its words
_DIGITS = re.compile(r"[0-9]{1,18}")
_DECIMAL = re.compile(r"[0-9]+(\.[0-9]+)?")


def _quick_class() -> type[Any] | None:
    """The coercion ``_UsageJson.get_params`` gives each parameter; None on a typer without
    pydantic adapters (before 0.2x: click's types coerce)."""
    try:
        from typer._coercion import RuntimeParam, build_runtime_param
        from typer._param_types import coerce_cli_choice, coerce_cli_path
    except ImportError:  # pragma: no cover - an older typer
        return None

    def quick(value: Any, desc: Any, param: Any, ctx: Any) -> Any:
        kind, info = desc.annotation, desc.parameter_info
        if info.parser is not None or desc.is_file:
            return _SLOW
        if kind is str and type(value) is str:
            return value
        if kind in (int, float) and info.min is None and info.max is None:
            if type(value) is str and (_DIGITS if kind is int else _DECIMAL).fullmatch(value):
                return kind(value)
            if type(value) is int or (kind is float and type(value) is float):
                return kind(value)
        if kind is Path and info.path_type is None and type(value) is str:
            try:  # given a Path, typer's check asks nothing of pydantic
                return coerce_cli_path(Path(value), info, path_type=Path, param=param, ctx=ctx)
            except UsageError:
                return _SLOW  # refused: in typer's words, which quote the value as given
        if desc.is_choice and not desc.is_list and not desc.is_tuple:
            try:
                return coerce_cli_choice(
                    value, choices=desc.choices, case_sensitive=info.case_sensitive, ctx=ctx
                )
            except ValueError:
                return _SLOW
        if kind == list[str] and isinstance(value, list | tuple):
            return list(value) if all(type(v) is str for v in value) else _SLOW
        return _SLOW

    class Quick(RuntimeParam):
        descriptor: Any

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            try:
                done = quick(value, self.descriptor, param, ctx)
            except (AttributeError, TypeError):  # typer's private parts changed: its own path
                done = _SLOW
            if done is _SLOW:
                slow = build_runtime_param(self.descriptor)
                return slow._coerce_value(value, param=param, ctx=ctx)
            return done

    try:  # (a RuntimeParam no frozen dataclass can extend: typer's own coercion stands)
        return dataclasses.dataclass(frozen=True)(Quick)
    except TypeError:
        return None


_Quick = _quick_class()


class PlainUsage(_UsageJson, TyperCommand):
    """Every command: usage names arguments as typed (``RELEASE``, not typer's ``{RELEASE}``), and
    a refused command line gets its JSON object. Pass it as ``cls=`` to ``@app.command``."""

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        return [
            re.sub(r"^\{(.*)\}(\.\.\.)?$", r"\1\2", piece)
            for piece in super().collect_usage_pieces(ctx)
        ]


class PlainGroup(_UsageJson, TyperGroup):
    """Every command group (``gps``, ``umls``, ``cache``...)."""


def command_group(name: str, *, add_completion: bool = False, **settings: Any) -> typer.Typer:
    """A ``Typer`` of the tool: no rich tracebacks, whose local variables could show the API key
    (also when a group is called on its own, as tests do)."""
    return typer.Typer(
        name=name,
        cls=PlainGroup,
        no_args_is_help=True,
        add_completion=add_completion,
        pretty_exceptions_enable=False,
        rich_markup_mode="markdown",
        context_settings={"help_option_names": ["-h", "--help"]},
        **settings,
    )
