"""Where the UMLS API key and the cache folder come from, and the secret wrapper that hides the key.

The key comes from ``--api-key-file PATH``, else a file named by the ``UMLS_API_KEY_FILE``
environment variable (its twin, so that a key file need not be typed each time), else the
``UMLS_API_KEY`` environment variable, never from a command-line value (a value on the command
line ends up in shell history and ``ps`` output). The cache folder comes from ``--cache-dir``,
else ``TEMPMEDBENCH_CACHE_DIR``, else the platform's user cache folder for the app
(``platformdirs``, as ``pooch`` and ``pip-audit`` do).
"""

from __future__ import annotations

import ipaddress
import logging
import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus, urlsplit

from tempmedbench_synonyms.errors import BadInputError
from tempmedbench_synonyms.files import read_regular
from tempmedbench_synonyms.jsonio import safe_text

log = logging.getLogger(__name__)

APP_NAME = "tempmedbench-synonyms"
API_KEY_ENV = "UMLS_API_KEY"
API_KEY_FILE_ENV = "UMLS_API_KEY_FILE"
CACHE_DIR_ENV = "TEMPMEDBENCH_CACHE_DIR"
BASE_URL_ENV = "UMLS_BASE_URL"
DEFAULT_BASE_URL = "https://uts-ws.nlm.nih.gov/rest"
PROFILE_URL = "https://uts.nlm.nih.gov/uts/profile"
#: A UMLS API key is a UUID (36 characters): a key file larger than this is not one.
_KEY_FILE_LIMIT = 4096


#: Every key this process has read. ``redact`` masks them all, whatever text it is given, so
#: that a path holding no ``ApiKey`` (the CLI's traceback of a bug, say) still cannot show one.
_SECRETS: set[str] = set()


class ApiKey:
    """The UMLS API key: its ``repr`` and ``str`` never show it; ``reveal()`` is the only way out.

    Wrapping the key keeps it out of reprs, log lines and tracebacks that show local variables.
    """

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value
        if value:
            _SECRETS.add(value)

    def reveal(self) -> str:
        """The key itself, for the one place that puts it on the wire."""
        return self._value

    def __repr__(self) -> str:
        return "ApiKey('***')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ApiKey) and other._value == self._value

    def __hash__(self) -> int:
        return hash((ApiKey, self._value))

    def __reduce__(self) -> tuple[object, ...]:
        # Pickling would write the key somewhere we do not control.
        raise TypeError("an ApiKey cannot be pickled")


def read_api_key(
    api_key_file: Path | None, *, environ: Mapping[str, str] | None = None
) -> ApiKey | None:
    """The key from ``api_key_file`` if given, else from the file ``UMLS_API_KEY_FILE`` names,
    else from ``UMLS_API_KEY``; ``None`` if none of them.

    A file wins over the key variable, as ``--api-key-file`` does. A file that cannot be read or
    is empty is bad input (exit 2): the user asked for it, so silently falling back would hide
    the mistake.
    """
    env = os.environ if environ is None else environ
    api_key_file = key_file(api_key_file, environ=env)
    if api_key_file is not None:
        try:
            raw = read_regular(api_key_file, what="the API key file", limit=_KEY_FILE_LIMIT)
            mode = os.stat(api_key_file).st_mode
            text = raw.decode("utf-8")
        except (OSError, UnicodeDecodeError) as err:
            # Never the exception's own text: a decoding error quotes the bytes it read.
            why = "it is not UTF-8 text" if isinstance(err, UnicodeDecodeError) else err.strerror
            raise BadInputError(
                f"cannot read the API key file: {why or type(err).__name__}",
                path=api_key_file,
                hint="give a file that holds only your UMLS API key",
            ) from None
        except BadInputError as err:  # not a regular file, or larger than a key can be
            err.hint = err.hint or "it should hold only your UMLS API key"
            raise
        value = text.strip()
        if not value:
            raise BadInputError(
                "the API key file is empty",
                path=api_key_file,
                hint=f"put your UMLS API key (from {PROFILE_URL}) in it",
            )
        if len(value.split()) != 1:
            raise BadInputError(
                "the API key file holds more than one word; it should hold only the key",
                path=api_key_file,
                hint="keep only your UMLS API key in it, on one line",
            )
        if readable_by_others(mode):
            log.warning(
                "the API key file %s can be read by other users; chmod 600 it", api_key_file
            )
        return ApiKey(value)
    value = env.get(API_KEY_ENV, "").strip()
    return ApiKey(value) if value else None


def key_file(api_key_file: Path | None, *, environ: Mapping[str, str] | None = None) -> Path | None:
    """The key file ``read_api_key`` reads: ``--api-key-file``, else ``UMLS_API_KEY_FILE``'s."""
    env = os.environ if environ is None else environ
    if api_key_file is None and env.get(API_KEY_FILE_ENV, "").strip():
        return Path(env[API_KEY_FILE_ENV].strip()).expanduser()
    return api_key_file


def readable_by_others(mode: int) -> bool:
    """Whether a file of this mode can be read (or written) by users other than its owner."""
    return bool(mode & (stat.S_IRWXG | stat.S_IRWXO))


def api_key_source(
    api_key_file: Path | None, *, environ: Mapping[str, str] | None = None
) -> str | None:
    """Where ``read_api_key`` takes the key from, in words for a message: ``--api-key-file
    PATH``, ``UMLS_API_KEY_FILE (PATH)`` or ``UMLS_API_KEY``; ``None`` if nothing gives one.

    It names the source only (the file may still be unreadable: ``read_api_key`` says so)."""
    env = os.environ if environ is None else environ
    if api_key_file is not None:
        return f"--api-key-file {api_key_file}"
    if env.get(API_KEY_FILE_ENV, "").strip():
        return f"{API_KEY_FILE_ENV} ({env[API_KEY_FILE_ENV].strip()})"
    if env.get(API_KEY_ENV, "").strip():
        return API_KEY_ENV
    return None


def resolve_cache_dir(cache_dir: Path | None, *, environ: Mapping[str, str] | None = None) -> Path:
    """``--cache-dir``, else ``TEMPMEDBENCH_CACHE_DIR``, else the platformdirs user cache folder."""
    env = os.environ if environ is None else environ
    if cache_dir is not None:
        return Path(cache_dir).expanduser()
    from_env = env.get(CACHE_DIR_ENV, "").strip()
    if from_env:
        return Path(from_env).expanduser()
    # Imported here: platformdirs is only needed when neither flag nor variable names a folder.
    import platformdirs

    return Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False))


def check_base_url(url: str) -> str:
    """``url`` if it can be a UTS REST root, else BadInputError naming ``--base-url``.

    It must be ``https`` with a host, and no query, fragment or user name. Plain ``http`` is
    allowed only to this machine (a test server): elsewhere it would send the key in clear.
    """
    problem = None
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number in range
    except ValueError as err:
        problem = f"it cannot be parsed ({err})"
    else:
        host = parts.hostname or ""
        if parts.scheme not in ("https", "http"):
            problem = "it must start with https://"
        elif not host:
            problem = "it has no host"
        elif parts.query or parts.fragment or parts.username is not None:
            problem = "it must not hold a query, a fragment or a user name"
        elif parts.scheme == "http" and not _is_loopback(host):
            problem = "plain http would send the API key in clear; use https://"
    if problem is None:
        return url
    raise BadInputError(
        f"--base-url {redact(url)!r} is not a UTS REST root: {problem}",
        key="--base-url",
        hint=f"the default is {DEFAULT_BASE_URL}; plain http is allowed only to this machine "
        "(127.0.0.1), for a test server",
    )


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


_APIKEY_RE = re.compile(r"(?i)(apikey=)[^&#\s'\"]*")


#: A key shorter than this is masked only as an ``apiKey=`` value, never as a bare substring: a
#: key of one or two characters would mask that letter in every word (``cach***_hits``). A UMLS
#: API key is a UUID, 36 characters; a shorter value is no real key, and only its ``apiKey=``
#: form (the one way the tool sends it) is masked.
MIN_SECRET_LENGTH = 8


def redact(text: str, key: ApiKey | None = None) -> str:
    """``text`` with every ``apiKey=...`` value, and every key read so far of at least
    ``MIN_SECRET_LENGTH`` characters (``key`` too, and each in its URL-encoded forms), replaced
    by ``***``."""
    out = _APIKEY_RE.sub(r"\1***", text)
    # Longest first: a key that holds another must not be left half-masked.
    for form in sorted(secret_forms(key), key=len, reverse=True):
        out = out.replace(form, "***")
    return out


def secret_forms(key: ApiKey | None = None) -> set[str]:
    """Every key read so far (and ``key``) of at least ``MIN_SECRET_LENGTH`` characters, each as
    it is and in its URL-encoded forms: what ``redact`` masks, and what no answer from a server
    may hold (``uts.client``)."""
    secrets = {s for s in _SECRETS if len(s) >= MIN_SECRET_LENGTH}
    if key is not None and len(key.reveal()) >= MIN_SECRET_LENGTH:
        secrets.add(key.reveal())
    return {
        form
        for secret in secrets
        for form in (secret, quote(secret, safe=""), quote(secret), quote_plus(secret))
    }


def redact_value(value: Any) -> Any:
    """A copy of ``value`` (a report: dicts, lists, strings, numbers) with every string in it,
    keys too, passed through ``redact``: a ``--json`` report is redacted as data, never as its
    serialized text, where a mask could rename a key or eat the ``\\`` of an escape."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact_value(k): redact_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_value(v) for v in value]
    return value


#: Terminal escape sequences (ECMA-48): CSI (``ESC [`` or the C1 byte U+009B, parameters, final
#: byte), OSC/DCS/SOS/PM/APC strings up to their terminator (BEL or ``ESC \\``), and the two-byte
#: escapes. A server's reason phrase must not recolour, retitle or clear the user's terminal.
_ESCAPE_RE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -~]?"
)
#: C0 and C1 control characters (Unicode category Cc), and lone surrogates (which no terminal,
#: log file or UTF-8 stream can take).
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def _control(match: re.Match[str]) -> str:
    char = match.group()
    if char in "\t\r\n":
        return " "
    return "\ufffd" if "\ud800" <= char <= "\udfff" else ""


def clean_text(text: str, key: ApiKey | None = None, *, lines: bool = False) -> str:
    """``text`` fit to show on a terminal, in a log line or in ``--json``: escape sequences and
    control characters removed (a tab or line break becomes a space, unless ``lines`` keeps line
    breaks), a lone surrogate replaced by U+FFFD, and the key redacted (``redact``).

    The one function every string that came from a server (a reason phrase, a header, a body
    excerpt, an atom name) passes through before anyone sees it (SPEC section 8). It redacts
    after stripping, so that a key split by an escape sequence cannot come together unmasked.
    """
    if lines:
        return "\n".join(clean_text(line, key) for line in text.split("\n"))
    return redact(_CONTROL_RE.sub(_control, _ESCAPE_RE.sub("", text)), key)


#: What ``shown_text`` escapes: C0 controls but tab and line feed, DEL, C1 controls.
_SHOWN_ESCAPES = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def shown_text(text: str) -> str:
    """Our own text (a message naming a path) fit for a terminal, and still exact: the key
    redacted, then each control character written as its escape (``\\x1b``, ``\\r``) and each
    lone surrogate (a path byte that is not UTF-8) as ``\\udcXX``; tabs and line breaks kept.

    Unlike ``clean_text``, nothing is removed: a folder named ``x\\x1b[31m-out`` is shown as
    ``x\\x1b[31m-out``, the path one can type, not ``x-out``, and no escape reaches the terminal.
    A server's text was already cleaned where it came in (``clean_text``), so it is unchanged.
    """
    return _SHOWN_ESCAPES.sub(_escaped, safe_text(redact(text)))


def _escaped(match: re.Match[str]) -> str:
    return repr(match.group())[1:-1]  # '\\x1b', '\\r', '\\x9b'
