"""What every command shares: the one place where errors become exit codes, and output helpers."""

from __future__ import annotations

import logging
import re
import sys
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer

from tempmedbench_synonyms import config, runtime
from tempmedbench_synonyms.constants import LOG_LEVEL_ENV
from tempmedbench_synonyms.errors import (
    InternalError,
    Interrupted,
    Outcome,
    TempMedBenchError,
)
from tempmedbench_synonyms.files import os_error
from tempmedbench_synonyms.jsonio import report_text
from tempmedbench_synonyms.secret import (
    may_hold_secret,
    read_api_key,
    redact,
    redact_value,
    shortened,
    shown_text,
)


def echo_err(text: str = "") -> None:
    """Human text to stderr (stdout is for data), through ``shown_text`` (key redacted, control
    characters escaped); above the progress bar while one is drawn."""
    shown = shown_text(text)
    progress = sys.modules.get("tempmedbench_synonyms.progress")
    if progress is None or not progress.print_above(shown):
        _echo(shown, err=True)


def echo_styled(styled: str, text: str, *, color: bool | None) -> None:
    """A line to stderr: ``styled`` (the tool's own word, ``typer.style``d), then ``text`` as
    ``echo_err`` shows it; dropped once stderr's reader has gone, as the rest."""
    _echo(styled + shown_text(text), err=True, color=color)


def stdout_gone() -> bool:
    """Whether stdout's reader has gone: nothing more is written, and a command that answers its
    inputs one by one stops asking (the exit code is the outcome's, of what was answered)."""
    return runtime.reader_gone(sys.stdout)


def echo_out(text: str) -> None:
    """Human text to stdout, unless its reader has gone (then dropped, as the rest)."""
    _echo(text, err=False)


def _echo(text: str, *, err: bool, color: bool | None = None) -> None:
    """``typer.echo`` to stdout or stderr, dropped once that stream's reader has gone (or stderr
    can take no more: ``runtime.output_failed``); stdout on a full disk is the command's error."""
    stream = sys.stderr if err else sys.stdout
    if runtime.reader_gone(stream):
        return
    try:
        typer.echo(text, err=err, color=color)
    except OSError as error:
        if not runtime.output_failed(stream, error):
            raise


#: DEL and C1 controls (JSON may carry them raw; a terminal takes U+009B for CSI), and the line and
#: paragraph separators (``str.splitlines`` would cut a JSON Lines line there).
_C1 = re.compile("[\x7f-\x9f\u2028\u2029]")


def _may_hold_c1(text: str, data: bytes) -> bool:
    """Whether ``text`` (``data``: its UTF-8) may hold one of ``_C1``. ``isascii`` costs nothing;
    in UTF-8 (C2 starts U+0080-U+00BF, E2 80 A8 U+2028) a search for a byte is a tenth of one
    for three, and a hundredth of ``_C1``'s."""
    if text.isascii():
        return "\x7f" in text
    if b"\x7f" in data or b"\xc2" in data:
        return True
    return b"\xe2" in data and (b"\xe2\x80\xa8" in data or b"\xe2\x80\xa9" in data)


#: the words of the final report coloured on a terminal: the state of a file, the outcome
_STATES = re.compile(r"^(  )?(verified|MISMATCH|mismatch)\b", re.MULTILINE)
_COLOURS = {"verified": "green", "MISMATCH": "red", "mismatch": "red"}


def echo_report(text: str) -> None:
    """The final report as ``echo_err`` writes it, "verified" green and "MISMATCH" red on a
    terminal without ``NO_COLOR`` (added after ``shown_text``)."""
    colour = sys.stderr is not None and sys.stderr.isatty() and not config.no_color()
    text = shown_text(text)
    if colour:
        text = _STATES.sub(
            lambda m: (m[1] or "") + typer.style(m[2], fg=_COLOURS[m[2]], bold=True), text
        )
    _echo(text, err=True, color=colour)


def print_json(obj: dict[str, Any], *, one_line: bool = False) -> None:
    """Data to stdout as one JSON document, with ``schema_version`` and ``tool_version``.

    Every key read so far is masked in each string (``redact_value``, before serializing), DEL and
    C1 controls are ``\\u`` escapes, and the bytes are UTF-8 whatever stdout's encoding.
    ``one_line``: one compact line (a JSON Lines answer). Once stdout's reader has gone, dropped.
    """
    text = report_text(obj, one_line=one_line)
    if may_hold_secret(text):  # most reports hold none: they are not walked string by string
        text = report_text(redact_value(obj), one_line=one_line)
    text += "\n"
    data = text.encode("utf-8")  # (a lone surrogate is an escape already)
    if _may_hold_c1(text, data):
        text = _C1.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
        data = text.encode("utf-8")
    if sys.stdout is None or stdout_gone():  # closed (>&-), or its reader gone: dropped
        return
    try:
        sys.stdout.flush()
        buffer = getattr(sys.stdout, "buffer", None)
        if buffer is None:  # a text-only stream (io.StringIO): it takes any str
            sys.stdout.write(text)
            sys.stdout.flush()
            return
        buffer.write(data)
        buffer.flush()
    except OSError as error:  # its reader gone: dropped; a full disk: the command's error
        if not runtime.output_failed(sys.stdout, error):
            raise


def failure_json(err: TempMedBenchError, **empty: Any) -> dict[str, Any]:
    """The ``--json`` object of a command an error stopped: outcome, exit code, message, hint,
    and ``empty`` values for its report's other keys; the key redacted once more."""
    return {
        "outcome": err.outcome.value,
        "exit_code": err.exit_code,
        "message": redact(str(err)),
        "hint": err.hint,
        **empty,
        **{k: v for k, v in err.report_fields.items() if k in empty},
    }


_LOG_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
}


def configure_logging(quiet: bool, verbose: int) -> int:
    """Only the CLI configures logging: -q warnings off, -v info, -vv debug; else
    ``TEMPMEDBENCH_LOG_LEVEL`` if set, else warnings. Returns -1 for ``-q``, else the ``-v`` count.
    """
    verbosity = -1 if quiet else verbose
    level = {-1: logging.ERROR, 0: logging.WARNING, 1: logging.INFO}.get(verbosity, logging.DEBUG)
    named = config.variable(LOG_LEVEL_ENV) if verbosity == 0 else None
    if named and named.lower() in _LOG_LEVELS:
        level = _LOG_LEVELS[named.lower()]
    elif named:  # said, not fatal
        echo_err(
            f"warning: {LOG_LEVEL_ENV}={shortened(named)!r} is not a log level; use one of "
            f"{', '.join(_LOG_LEVELS)} (logging warnings meanwhile)"
        )
    # Human text on stderr never crashes on a character its encoding lacks (LANG=C,
    # PYTHONIOENCODING=ascii): it is written as its backslash escape instead.
    reconfigure = getattr(sys.stderr, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(errors="backslashreplace")
    logging.basicConfig(level=level, format="%(levelname)s: %(message)s", stream=sys.stderr)
    logging.getLogger("tempmedbench_synonyms").setLevel(level)
    return verbosity


@contextmanager
def exit_on_error(
    *,
    json_report: Callable[[TempMedBenchError], dict[str, Any]] | None = None,
    api_key_file: Path | None = None,
    one_line: bool = False,
) -> Iterator[None]:
    """A TempMedBenchError as its message on stderr and its exit code; Ctrl-C and SIGTERM as
    130 and 143.

    ``json_report``: the failure's JSON on stdout too (``one_line`` for JSON Lines).
    ``api_key_file`` redacts a bug's traceback even before the library read the key.
    """
    try:
        with runtime.interrupts():
            yield
    except (typer.Exit, typer.Abort):
        raise  # how commands end on purpose, not bugs
    except (Exception, KeyboardInterrupt) as exc:
        failed = said_failure(exc, api_key_file)
        if json_report is not None:
            try:
                print_json(json_report(failed), one_line=one_line)
            except OSError:  # stdout can take no more either (a full disk): the failure is
                pass  # said on stderr, and its exit code stands
        raise typer.Exit(failed.exit_code) from None


def said_failure(exc: BaseException, api_key_file: Path | None = None) -> TempMedBenchError:
    """The error ``exc`` ends the command with, said on stderr (also by the command class of
    ``cli._options``, for an output failing outside a command: the help on a full disk)."""
    if isinstance(exc, KeyboardInterrupt):
        # Outputs go through temporary files, so an interrupted run leaves nothing half-written.
        # The signals after the first are ignored (runtime): nothing breaks into this.
        stop = exc if isinstance(exc, Interrupted) else Interrupted()
        echo_err("interrupted: nothing was left half-written; run the same command again")
        failed = TempMedBenchError(  # for the --json report, of outcome "interrupted"
            f"interrupted by {stop.name}: what was fetched stays cached",
            hint="run the same command again: it goes on where this one stopped",
        )
        failed.outcome = Outcome.INTERRUPTED
        failed.exit_code = stop.exit_code
        failed.report_fields.update(stop.report_fields)
        return failed
    # A backstop past TempMedBenchError: a file system failing in another way still gets our
    # message and hint, never "[Errno 13]"; a missing dependency is the install's, not a bug.
    if isinstance(exc, TempMedBenchError):
        failed = exc
    elif isinstance(exc, OSError):
        failed = os_error(exc)
    elif isinstance(exc, ModuleNotFoundError):
        from tempmedbench_synonyms.about import missing_module_error

        failed = missing_module_error(exc)
    else:
        # A bug. Python would exit 1, which a script reads as "mismatch": exit 70 instead, with
        # the traceback (redacted like every other text) for the report.
        text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        # Every key read so far, and those the environment and --api-key-file give even if
        # nothing read them yet (reading one registers it with ``redact``).
        for named in {None, api_key_file}:
            try:
                read_api_key(named)
            except TempMedBenchError:
                pass  # a key that cannot be read cannot be shown either
        echo_err(redact(text).rstrip())
        failed = InternalError(
            f"unexpected {type(exc).__name__}: this is a bug in tempmedbench-synonyms",
            hint="please report it with the traceback above",
        )
    echo_err(f"error: {failed}")
    if failed.hint:
        echo_err(f"hint: {failed.hint}")
    return failed
