"""The UMLS API key, which nothing may show, and text made fit to show: redacted, escaped.

Where the key comes from: docs/reference.md, "The API key"; the rule for every text that leaves
the tool: docs/architecture.md, "The key".
"""

from __future__ import annotations

import functools
import logging
import os
import re
import stat
import unicodedata
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

from tempmedbench_synonyms import config
from tempmedbench_synonyms.constants import API_KEY_ENV, API_KEY_FILE_ENV, PROFILE_URL
from tempmedbench_synonyms.errors import ApiKeyMissingError, BadInputError
from tempmedbench_synonyms.files import os_fix, read_regular
from tempmedbench_synonyms.jsonio import safe_text

log = logging.getLogger(__name__)

#: A UMLS API key is a UUID (36 characters): a key file larger than this is not one.
_KEY_FILE_LIMIT = 4096


#: Every key this process has read. ``redact`` masks them all, whatever text it is given, so
#: that a path holding no ``ApiKey`` (the CLI's traceback of a bug, say) still cannot show one.
_SECRETS: set[str] = set()


class ApiKey:
    """The UMLS API key: ``repr`` and ``str`` never show it; ``reveal()`` is the only way out."""

    __slots__ = ("_value", "notes")

    def __init__(self, value: str, *, notes: tuple[str, ...] = ()) -> None:
        self._value = value
        #: what was said about it when read ("starts with a byte order mark..."), never the key
        self.notes = notes
        if value:
            _SECRETS.add(value)

    def reveal(self) -> str:
        """The key itself, for the one place that puts it on the wire."""
        return self._value

    def __repr__(self) -> str:
        return "ApiKey('***')"

    __str__ = __repr__

    def __reduce__(self) -> tuple[object, ...]:
        # Pickling would write the key somewhere we do not control.
        raise TypeError("an ApiKey cannot be pickled")


def read_api_key(api_key_file: Path | None) -> ApiKey | None:
    """The key (docs/reference.md, "The API key") or ``None``. A file that cannot be read or is
    empty is bad input (exit 2), never a silent fallback; a leading BOM is dropped, warned."""
    api_key_file = config.path_variable(API_KEY_FILE_ENV, api_key_file)
    if api_key_file is not None:
        try:
            raw = read_regular(api_key_file, what="the API key file", limit=_KEY_FILE_LIMIT)
            mode = os.stat(api_key_file).st_mode
            text = raw.decode("utf-8")
        except (OSError, UnicodeDecodeError) as err:
            # Never the exception's own text: a decoding error quotes the bytes it read.
            why = "it is not UTF-8 text" if isinstance(err, UnicodeDecodeError) else err.strerror
            fix = os_fix(err) if isinstance(err, OSError) else None
            raise BadInputError(
                f"cannot read the API key file: {why or type(err).__name__}",
                path=api_key_file,
                hint=fix or "give a file that holds only your UMLS API key",
            ) from None
        except BadInputError as err:  # not a regular file, or larger than a key can be
            err.hint = err.hint or "it should hold only your UMLS API key"
            raise
        value, notes = _checked_key(text, path=api_key_file)
        if not value:
            raise BadInputError(
                "the API key file is empty",
                path=api_key_file,
                hint=f"put your UMLS API key (from {PROFILE_URL}) in it",
            )
        if readable_by_others(mode):
            log.warning(
                "the API key file %s can be read by other users; chmod 600 it", api_key_file
            )
    else:
        value, notes = _checked_key(config.variable(API_KEY_ENV), path=None)
        if not value:
            return None
    for note in notes:
        log.warning("%s %s", api_key_file or API_KEY_ENV, note)
    return ApiKey(value, notes=tuple(notes))


#: A UTF-8 byte order mark, as Windows Notepad writes at the start of a "UTF-8" file.
_BOM = "\ufeff"
#: What may surround the key (stripped): spaces, tabs, line breaks (CRLF too).
_AROUND = " \t\r\n"
#: What no key holds, and no one sees: control characters (NUL...), format characters (the
#: zero-width space, a BOM inside the text...), separators other than the space, private use.
_INVISIBLE = frozenset(("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"))
_UUID = re.compile(r"[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}")


def _checked_key(text: str, *, path: Path | None) -> tuple[str, list[str]]:
    """The key in ``text`` and the notes to say about it (a BOM left out); an invisible or
    control character, or a second word, is BadInputError naming the line, never the key."""
    where = "the API key file" if path is not None else API_KEY_ENV
    notes = []
    if text.startswith(_BOM):
        text = text[1:]
        notes.append(
            "starts with a byte order mark (BOM, as Notepad's UTF-8 writes it), which is not "
            "part of the key and was left out: save the key file as UTF-8 without a BOM"
        )
    for at, char in enumerate(text):
        if char not in _AROUND and unicodedata.category(char) in _INVISIBLE:
            line = text.count("\n", 0, at) + 1
            column = at - (text.rfind("\n", 0, at) + 1) + 1
            bad_byte = "\ud800" <= char <= "\udfff"
            kind = "a byte that is not UTF-8" if bad_byte else "a control character"
            name = unicodedata.name(char, "") or kind
            raise BadInputError(
                f"{where} holds U+{ord(char):04X} ({name}) at character {column}: an "
                "invisible or control character, which no API key has",
                path=path,
                line=line if path is not None else None,
                key=None if path is not None else API_KEY_ENV,
                hint=f"copy the key again from your UTS profile ({PROFILE_URL}) and keep only "
                "the key, as plain text (it often comes with such a character when copied from "
                "a web page or a document)",
            )
    value = text.strip(_AROUND)
    if len(value.split()) > 1:
        raise BadInputError(
            f"{where} holds more than one word; it should hold only the key",
            path=path,
            key=None if path is not None else API_KEY_ENV,
            hint=f"keep only your UMLS API key in {'it, on one line' if path else 'it'}",
        )
    return value, notes


def looks_like_uts_key(key: ApiKey) -> bool:
    """Whether ``key`` has the form of a UTS API key (a UUID); only a probe says if UTS takes it."""
    return _UUID.fullmatch(key.reveal()) is not None


def missing_key() -> ApiKeyMissingError:
    """The error of a run that needs UMLS and has no key (exit 3)."""
    return ApiKeyMissingError(
        message=f"no UMLS API key: the cache does not hold every answer, so UMLS must be "
        f"asked, and neither {API_KEY_ENV}, {API_KEY_FILE_ENV} nor --api-key-file gives a key",
        hint=f"copy the key from your UTS profile ({PROFILE_URL}) into the {API_KEY_ENV} "
        f"environment variable, or into a file named by --api-key-file or {API_KEY_FILE_ENV} "
        "(a regeneration needs no key with --mrconso PATH, which reads a local MRCONSO.RRF "
        "instead)",
    )


def readable_by_others(mode: int) -> bool:
    return bool(mode & (stat.S_IRWXG | stat.S_IRWXO))


_APIKEY_RE = re.compile(r"(?i)(apikey=)[^&#\s'\"]*")


#: A key shorter than this is masked only as an ``apiKey=`` value, never as a bare substring (a
#: one-letter key would mask it in every word); a real key is a 36-character UUID.
MIN_SECRET_LENGTH = 8


def redact(text: str, key: ApiKey | None = None) -> str:
    """``text`` with every ``apiKey=...`` value and every key read so far (and ``key``, in its
    URL-encoded forms too), in any case, replaced by ``***``."""
    out = _APIKEY_RE.sub(r"\1***", text) if "=" in text else text
    forms = secret_forms(key)
    return out if not forms else _secrets_pattern(frozenset(forms)).sub("***", out)


def shortened(text: str, most: int = 40) -> str:
    """``text`` redacted, then cut to ``most`` characters and ``...`` (SPEC section 8)."""
    text = redact(text)
    return text if len(text) <= most else text[:most] + "..."


def holds_secret(*texts: str) -> bool:
    """Whether any of ``texts`` holds a key ``redact`` masks (any case)."""
    forms = secret_forms()
    if not forms:
        return False
    pattern = _secrets_pattern(frozenset(forms))  # (once for all the texts)
    return any(pattern.search(text) for text in texts)


def check_not_secret(*texts: str) -> None:
    """BadInputError if any of ``texts`` (a lookup's path or parameters) holds a key read so
    far: that input's own bad input, before it is counted, asked or cached."""
    if holds_secret(*texts):
        raise BadInputError(
            "the input holds the API key, which this tool never sends as a term or code nor "
            "stores in its cache",
            hint=f"give the term or code itself; the key belongs in {API_KEY_ENV} or a key file "
            "(--api-key-file)",
        )


@functools.lru_cache(maxsize=8)
def _secrets_pattern(forms: frozenset[str]) -> re.Pattern[str]:
    """One case-blind pattern for ``forms`` (hosts come back lower-cased; UUID hex either way)."""
    # Longest first: a key that holds another must not be left half-masked.
    alternatives = (re.escape(form) for form in sorted(forms, key=lambda f: (-len(f), f)))
    return re.compile("|".join(alternatives), re.IGNORECASE)


def secret_forms(key: ApiKey | None = None) -> set[str]:
    """Every key read so far (and ``key``) of ``MIN_SECRET_LENGTH`` or more, as is and
    URL-encoded: what ``redact`` masks and no server answer may hold."""
    if not _SECRETS and key is None:  # (most runs: no key read; a lookup asks for each input)
        return set()
    # A copy (made in one step) is walked: another thread may read a key meanwhile.
    secrets = {s for s in _SECRETS.copy() if len(s) >= MIN_SECRET_LENGTH}
    if key is not None and len(key.reveal()) >= MIN_SECRET_LENGTH:
        secrets.add(key.reveal())
    return {
        form
        for secret in secrets
        for form in (secret, quote(secret, safe=""), quote(secret), quote_plus(secret))
    }


#: The user name and password of a URL (with or without its scheme), up to the last ``@``.
_USERINFO = re.compile(r"^((?:[^:/?#]*://)?)[^/?#]*@")


def redact_url(url: str) -> str:
    """``url`` fit for a message: user, password, query and fragment shown as ``***`` (a key
    may be pasted there), the rest ``redact``-ed; done without parsing, so any URL is masked."""
    base, hashmark, fragment = url.partition("#")
    base, mark, query = base.partition("?")
    base = _USERINFO.sub(r"\1***@", base)
    return redact(base + mark + ("***" if query else "") + hashmark + ("***" if fragment else ""))


#: What ``json.dumps(..., ensure_ascii=False)`` writes as an escape: a key that holds one is
#: looked for in the data, as its text would not show it as it is.
_JSON_ESCAPED = re.compile(r'["\\\x00-\x1f\ud800-\udfff]')


def may_hold_secret(json_text: str) -> bool:
    """Whether a report's JSON text may hold what ``redact`` masks: False only with no
    ``apiKey=``, no key read so far, and no key with a JSON-escaped character (a big report is
    then not walked string by string)."""
    forms = secret_forms()
    if any(_JSON_ESCAPED.search(form) for form in forms):
        return True
    # _APIKEY_RE.search(json_text), tried only at each "y=" (a tenth of the search's cost)
    at = json_text.find("=", 6)
    while at >= 0:
        if json_text[at - 1] in "yY" and _APIKEY_RE.match(json_text, at - 6):
            return True
        at = json_text.find("=", at + 1)
    return bool(forms) and _secrets_pattern(frozenset(forms)).search(json_text) is not None


def redact_value(value: Any) -> Any:
    """A copy of ``value`` with every string, keys too, ``redact``-ed: a report is redacted as
    data, never as serialized text, where a mask could rename a key or eat an escape's ``\\``."""
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


def clean_text(text: str, key: ApiKey | None = None) -> str:
    """``text`` fit to show (terminal, log, ``--json``): escapes and control characters removed
    (tab, line break: a space), lone surrogates as U+FFFD, the key redacted.

    Every string from a server passes here first (SPEC section 8); it redacts after stripping,
    so a key split by an escape sequence cannot come together unmasked.
    """
    if not text.isprintable():  # (a printable text holds no Cc, no Cs: nothing to strip)
        text = _CONTROL_RE.sub(_control, _ESCAPE_RE.sub("", text))
    return redact(text, key)


#: What ``shown_text`` escapes: C0 controls but tab and line feed, DEL, C1 controls.
_SHOWN_ESCAPES = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def shown_text(text: str) -> str:
    """Our own text (a path) fit for a terminal, and exact: the key redacted, each control character
    written as its escape (``\\x1b``) and each lone surrogate as ``\\udcXX``. Unlike ``clean_text``
    nothing is removed: ``x\\x1b[31m-out`` is the path one can type."""
    return _SHOWN_ESCAPES.sub(_escaped, safe_text(redact(text)))


def _escaped(match: re.Match[str]) -> str:
    return repr(match.group())[1:-1]  # '\\x1b', '\\r', '\\x9b'
