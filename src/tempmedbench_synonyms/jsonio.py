"""JSON in and out: the one strict reader of JSON from outside, and the text of ``--json`` reports.

Reading (SPEC section 8): every JSON the tool reads from a file (the release's table, surface and
expected hashes, the GPS artifacts) goes through :data:`DECODER`, which refuses what Python's
``json`` module accepts beyond RFC 8259 or would change silently:

- ``NaN``, ``Infinity`` and ``-Infinity`` (not JSON; written back they would make invalid JSON);
- a number too large for a float (``1e99999`` would become ``inf``, written back as
  ``Infinity``);
- a key twice in one object (``json`` keeps the last one without a word).

:func:`parse_json` turns every such problem into ``BadInputError`` naming the file and the line.

Writing: :func:`report_text` is the text of every ``--json`` report, with ``schema_version`` and
``tool_version`` added (SPEC section 7). It is valid JSON whatever the report holds: a string
that UTF-8 cannot encode (a lone surrogate read from an artifact's ``\\ud800`` escape, or a path
byte that is not UTF-8, which Python keeps as a ``\\udcXX`` surrogate) is written as its
``\\uXXXX`` escape, which RFC 8259 (section 7) allows, and which ``json.loads`` reads back as
the same string.
"""

from __future__ import annotations

import json
import json.scanner
import math
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from tempmedbench_synonyms import __version__
from tempmedbench_synonyms.errors import BadInputError

#: The version of the layout of every ``--json`` report; raised when a key changes meaning.
SCHEMA_VERSION = 1


class JsonProblem(ValueError):
    """Raised inside the parser for what RFC 8259 or this tool does not accept; ``pos`` is where
    the value at fault starts, when :func:`_position` found it."""

    pos: int | None = None


class DuplicateKey(JsonProblem):
    def __init__(self, key: str) -> None:
        super().__init__(f"the key {key!r} appears twice in one object")
        self.key = key


def _refuse_constant(name: str) -> Any:
    raise JsonProblem(f"{name} is not a JSON value (RFC 8259 has no NaN or Infinity)")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        shown = text if len(text) <= 40 else text[:37] + "..."
        raise JsonProblem(f"the number {shown} is too large for a 64-bit float")
    return value


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKey(key)
            seen.add(key)
    return obj


#: The strict decoder. ``parse_float`` costs nothing where no number has a fraction or an
#: exponent; the key check costs one Python call per object (~35% of the C parser's time).
DECODER = json.JSONDecoder(
    parse_constant=_refuse_constant, parse_float=_finite_float, object_pairs_hook=_unique_keys
)
#: The decoder's scanner: ``SCAN(text, index)`` is (value, end index), or StopIteration when no
#: value starts at the index (typeshed types make_scanner as a class of its own).
SCAN: Callable[[str, int], tuple[Any, int]] = json.scanner.make_scanner(DECODER)  # type: ignore[arg-type]


def parse_json(
    text: str, *, path: str | Path, line: int | None = None, utf8_only: bool = False
) -> Any:
    """Parse one JSON text strictly; every problem is ``BadInputError`` naming ``path`` and the
    line (``line`` is the line of the file where ``text`` starts, for JSON Lines).

    Refused besides invalid JSON: NaN and Infinity, a float out of range, a repeated key, input
    beyond ``json``'s limits (integers of more than 4,300 digits, nesting deeper than the
    recursion limit); with ``utf8_only``, also what could not be written back as UTF-8: a lone
    surrogate escape such as ``"\\ud800"`` (the release files; an artifact's is kept and
    reported, ``report_text``).
    """
    data = _decode(text, path=path, line=line)
    if utf8_only and _SURROGATE_ESCAPE.search(text) and has_lone_surrogate(data):
        raise BadInputError(
            "a string holds a lone surrogate escape (\\ud800 to \\udfff), which UTF-8 cannot "
            "encode",
            path=path,
            line=line,
        )
    return data


#: A ``\\uD800``-``\\uDFFF`` escape in JSON text: only a text holding one can decode to a lone
#: surrogate (``has_lone_surrogate`` then looks at the strings themselves).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _decode(text: str, *, path: str | Path, line: int | None) -> Any:
    """``DECODER.decode(text)``, each problem as ``BadInputError`` (``parse_json``)."""
    try:
        return DECODER.decode(text)
    except json.JSONDecodeError as err:
        raise BadInputError(
            f"invalid JSON: {err.msg} (column {err.colno})",
            path=path,
            line=err.lineno if line is None else line + err.lineno - 1,
        ) from None
    except JsonProblem as err:
        if line is None:  # a whole file: find the line (a JSON Lines caller knows it)
            pos = _position(text)
            line = None if pos is None else text.count("\n", 0, pos) + 1
        problem = str(err) if isinstance(err, DuplicateKey) else f"invalid JSON: {err}"
        raise BadInputError(problem, path=path, line=line) from None
    except RecursionError:
        # Our own words: Python's message for this changes between versions.
        raise BadInputError(
            "JSON this tool cannot read: nested deeper than Python's recursion limit",
            path=path,
            line=line,
        ) from None
    except ValueError as err:
        problem = str(err)
        if "integer string conversion" in problem:  # Python's limit on digits (CVE-2020-10735)
            problem = "an integer has more digits than Python reads (4,300)"
        raise BadInputError(
            f"JSON this tool cannot read: {problem}", path=path, line=line
        ) from None


def _position(text: str) -> int | None:
    """Where the first value the strict decoder refuses starts (the object, for a repeated key).

    The C parser's hooks are not told where they are: the text is parsed again with json's own
    Python scanner, whose every value passes through ``scan`` below. Slow; for messages only.
    """
    decoder = json.JSONDecoder(
        parse_constant=_refuse_constant, parse_float=_finite_float, object_pairs_hook=_unique_keys
    )
    inner: Callable[[str, int], tuple[Any, int]] | None = None

    def scan(s: str, idx: int) -> tuple[Any, int]:
        assert inner is not None
        try:
            return inner(s, idx)
        except JsonProblem as err:
            if err.pos is None:
                err.pos = idx
            raise

    def parse_object(s_and_end: tuple[str, int], strict: bool, *_: Any) -> tuple[Any, int]:
        return json.decoder.JSONObject(  # type: ignore[attr-defined,no-any-return]
            s_and_end, strict, scan, None, _unique_keys, {}
        )

    def parse_array(s_and_end: tuple[str, int], _: Any) -> tuple[Any, int]:
        return json.decoder.JSONArray(s_and_end, scan)  # type: ignore[attr-defined,no-any-return]

    decoder.parse_object = parse_object  # type: ignore[attr-defined]
    decoder.parse_array = parse_array  # type: ignore[attr-defined]
    inner = json.scanner.py_make_scanner(decoder)  # type: ignore[attr-defined]
    start = len(text) - len(text.lstrip(" \t\r\n"))
    try:
        scan(text, start)
    except JsonProblem as err:
        return err.pos
    except (ValueError, StopIteration, RecursionError):
        return None
    return None  # pragma: no cover - only called for a text the C parser refused


def loads_utf8(raw: bytes) -> Any:
    """``raw`` parsed by :data:`DECODER` after strict UTF-8 decoding (``json.loads`` of bytes
    would let the bytes of a lone surrogate through, as ``surrogatepass``). Any problem is a
    ``ValueError`` (``UnicodeDecodeError``, :class:`JsonProblem`, ``json.JSONDecodeError``) or a
    ``RecursionError``."""
    return DECODER.decode(raw.decode("utf-8"))


def strings(value: Any) -> Iterator[str]:
    """Every string of a parsed JSON value, object keys included (a loop, not a recursion: a
    value nested deeper than the recursion limit is walked all the same)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            yield v
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)


def has_lone_surrogate(value: Any) -> bool:
    """Whether a parsed JSON value (or a string) holds a string (or key) with a lone surrogate."""
    return any(_LONE_SURROGATE.search(text) for text in strings(value))


# --- writing --------------------------------------------------------------------------------

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def versioned(report: dict[str, Any]) -> dict[str, Any]:
    """``report`` with ``schema_version`` and ``tool_version`` (SPEC section 7)."""
    return {**report, "schema_version": SCHEMA_VERSION, "tool_version": __version__}


def report_text(report: dict[str, Any]) -> str:
    """The ``--json`` text of a report: versioned, sorted keys, UTF-8-safe (module docstring).

    ``ensure_ascii=False`` keeps names readable; the only characters it leaves that UTF-8 cannot
    carry, lone surrogates, can occur only inside strings, where their escape is valid.
    """
    text = json.dumps(versioned(report), ensure_ascii=False, indent=2, sort_keys=True)
    return _LONE_SURROGATE.sub(_escape, text)


def safe_text(text: str) -> str:
    """``text`` with each lone surrogate written as ``\\udcXX``, for a terminal or a log."""
    return _LONE_SURROGATE.sub(_escape, text)
