"""JSON in and out: the one strict reader of JSON from outside (SPEC section 8), and the text of
``--json`` reports (SPEC section 7).
"""

from __future__ import annotations

import codecs
import itertools
import json
import json.scanner
import math
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tempmedbench_synonyms.constants import __version__
from tempmedbench_synonyms.errors import BadInputError

#: The version of the layout of every ``--json`` report; raised when a key changes meaning.
SCHEMA_VERSION = 1


class JsonProblem(ValueError):
    """What RFC 8259 or this tool does not accept; ``pos``: where the value at fault starts."""

    pos: int | None = None


class DuplicateKey(JsonProblem):
    """A key twice in one object: said without "invalid JSON: " (``parse_json``)."""


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
                raise DuplicateKey(f"the key {key!r} appears twice in one object")
            seen.add(key)
    return obj


#: The strict decoder. ``parse_float`` costs nothing where no number has a fraction or an
#: exponent; the key check costs one Python call per object (~35% of the C parser's time).
DECODER = json.JSONDecoder(
    parse_constant=_refuse_constant, parse_float=_finite_float, object_pairs_hook=_unique_keys
)
#: The same without the key check, for JSON Lines whose keys are counted instead (_fast_batch).
_UNCHECKED_KEYS = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite_float)


#: A ``\\uD800``-``\\uDFFF`` escape in JSON text: only a text holding one can decode to a lone
#: surrogate (``has_lone_surrogate`` then looks at the strings themselves).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def parse_json(
    text: str, *, path: str | Path, line: int | None = None, utf8_only: bool = False
) -> Any:
    """Parse one JSON text strictly; every problem is ``BadInputError`` naming ``path`` and the
    line (``line``: where ``text`` starts, for JSON Lines).

    Refused besides invalid JSON: NaN, Infinity, a float out of range, a repeated key, beyond
    ``json``'s limits; with ``utf8_only``, a lone surrogate escape such as ``"\\ud800"`` too.
    """
    try:
        data = DECODER.decode(text)
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
    if utf8_only and _SURROGATE_ESCAPE.search(text) and has_lone_surrogate(data):
        raise BadInputError(
            "a string holds a lone surrogate escape (\\ud800 to \\udfff), which UTF-8 cannot "
            "encode",
            path=path,
            line=line,
        )
    return data


def _position(text: str) -> int | None:
    """Where the first value the strict decoder refuses starts, by reparsing with json's Python
    scanner (the C parser's hooks are not told where they are). Slow; for messages only."""
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
    lets lone surrogates through); any problem is a ``ValueError`` or a ``RecursionError``."""
    return DECODER.decode(raw.decode("utf-8"))


@dataclass(frozen=True)
class LineRules:
    """What a kind of JSON Lines file may hold, in its refusals' words; ``line_max`` per line."""

    blank: str
    bom: str
    not_object: str  # "{kind}": the JSON type found
    not_utf8: str  # "{reason}", "{column}"
    not_utf8_hint: str | None = None
    line_max: int | None = None
    too_long: str = ""  # "{limit}"
    too_long_hint: str | None = None
    utf8_only: bool = False  # a lone surrogate escape is refused (parse_json)


#: ``}``, a comma and ``{`` in one line (``_fast_batch``); also in an array of objects, which
#: then only costs the slower line-by-line read.
_TWO_OBJECTS_IN_A_LINE = re.compile(r"\}[ \t\r]*,[ \t\r]*\{")


def iter_jsonl(blocks: Iterable[bytes], where: str, rules: LineRules) -> Iterator[dict[str, Any]]:
    """The objects of a JSON Lines file given as blocks of its bytes.

    Lines end with ``"\\n"`` only; the last may lack it. A blank line, a BOM, a line that is not one
    object, non-UTF-8 bytes and a line past ``rules.line_max`` are BadInputError naming the first.
    """
    return itertools.chain.from_iterable(_batches(blocks, where, rules))


def _batches(
    blocks: Iterable[bytes], where: str, rules: LineRules
) -> Iterator[list[dict[str, Any]]]:
    """The objects of a block, or of one line where a block is read line by line."""
    first = 1  # the line number of the next block's first line
    carry = b""  # the start of a line that the blocks so far did not end
    count_keys = True  # until a batch's keys cannot be counted (_fast_batch)
    for data in itertools.chain(blocks, (b"",)):  # b"": the end
        cut = data.rfind(b"\n") + 1
        if data and not cut:  # no line end in this block: the line goes on
            carry += data
            if rules.line_max is not None and len(carry) > rules.line_max:
                raise _too_long(where, first, rules)
            continue
        if data:  # one copy at most: the block is most often the data read, whole
            block = b"".join((carry, memoryview(data)[:cut])) if carry or cut < len(data) else data
            carry = data[cut:]
        else:  # the end: what is left is the last line, with no line end
            block, carry = carry, b""
        if not block:
            continue
        if rules.line_max is not None:
            _check_line_lengths(block, where, first, rules)
        if first == 1 and block.startswith(codecs.BOM_UTF8):
            raise BadInputError(rules.bom, path=where, line=1)
        try:
            # Decoded without the last line's end (optional), and without a copy before.
            text = str(memoryview(block)[: len(block) - block.endswith(b"\n")], "utf-8")
        except UnicodeDecodeError as err:
            start = block.rfind(b"\n", 0, err.start) + 1
            raise BadInputError(
                rules.not_utf8.format(reason=err.reason, column=err.start - start + 1),
                path=where,
                line=first + block.count(b"\n", 0, start),
                hint=rules.not_utf8_hint,
            ) from None
        # The lines as a JSON array, a line end between them as in the file: the commas that
        # follow the line ends count them.
        array = "[" + text.replace("\n", "\n,") + "]"
        lines = len(array) - len(text) - 1
        records, count_keys = _fast_batch(text, array, lines, rules.utf8_only, count_keys)
        if records is None:  # line by line: the first line at fault is named
            for number, line in enumerate(text.split("\n"), start=first):
                if not line.strip():
                    raise BadInputError(rules.blank, path=where, line=number)
                obj = parse_json(line, path=where, line=number, utf8_only=rules.utf8_only)
                if not isinstance(obj, dict):
                    kind = type(obj).__name__
                    raise BadInputError(rules.not_object.format(kind=kind), path=where, line=number)
                yield [obj]
        else:
            yield records
        first += lines


def _fast_batch(
    text: str, array: str, lines: int, utf8_only: bool, count_keys: bool
) -> tuple[list[dict[str, Any]] | None, bool]:
    """The objects of ``text``'s ``lines`` lines (``array``: them as a JSON array) when each line
    is surely one object ``parse_json`` accepts, else None; and whether to count keys next time.

    One C parse a batch (twice as fast). As JSON strings hold no raw line end, a batch with no
    ``}``, ``,``, ``{`` run inside a line, parsed into as many objects as lines, has one a line.
    With ``count_keys``, objects holding as many keys as the text has colons repeat none; where
    counts differ the batch (and the next ones) is parsed with the key check.
    """
    if _TWO_OBJECTS_IN_A_LINE.search(text) or (utf8_only and _SURROGATE_ESCAPE.search(text)):
        return None, count_keys
    try:
        records = (_UNCHECKED_KEYS if count_keys else DECODER).decode(array)
        if len(records) != lines or set(map(type, records)) != {dict}:
            return None, count_keys
        if count_keys and sum(map(len, records)) != text.count(":"):
            return DECODER.decode(array), False
    except (ValueError, RecursionError):
        return None, count_keys
    return records, count_keys


def _check_line_lengths(block: bytes, where: str, first: int, rules: LineRules) -> None:
    """Refuse a line of ``block`` longer than ``rules.line_max``: only a window of
    ``line_max // 2`` bytes without a line end is measured exactly."""
    limit = rules.line_max
    assert limit is not None
    if len(block) <= limit:
        return
    window = limit // 2
    for i in range(0, len(block), window):
        if block.find(b"\n", i, i + window) < 0:
            start, end = block.rfind(b"\n", 0, i) + 1, block.find(b"\n", i)
            if (len(block) if end < 0 else end) - start > limit:
                raise _too_long(where, first + block.count(b"\n", 0, start), rules)


def _too_long(where: str, line: int, rules: LineRules) -> BadInputError:
    problem = rules.too_long.format(limit=rules.line_max)
    return BadInputError(problem, path=where, line=line, hint=rules.too_long_hint)


def strings(value: Any) -> Iterator[str]:
    """Every string of a parsed JSON value, keys included (a loop: any depth is walked)."""
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
    return any(_LONE_SURROGATE.search(text) for text in strings(value))


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def versioned(report: dict[str, Any]) -> dict[str, Any]:
    """``report`` with ``schema_version`` and ``tool_version`` (SPEC section 7)."""
    return {**report, "schema_version": SCHEMA_VERSION, "tool_version": __version__}


#: ``json.dumps``'s encoders of a report (made once: a JSON Lines run writes one line an input).
_ONE_LINE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True)
_INDENTED = json.JSONEncoder(ensure_ascii=False, indent=2, sort_keys=True)


def report_text(report: dict[str, Any], *, one_line: bool = False) -> str:
    """The ``--json`` text of a report: versioned, sorted keys, UTF-8-safe; indented, or
    compact on ``one_line``. Lone surrogates, inside strings only, are escaped."""
    text = (_ONE_LINE if one_line else _INDENTED).encode(versioned(report))
    if text.isascii():  # (O(1): no surrogate)
        return text
    try:  # (UTF-8 takes any text but a lone surrogate: a tenth of a search for one)
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub(_escape, text)
    return text


def safe_text(text: str) -> str:
    """``text`` with each lone surrogate written as ``\\udcXX``, for a terminal or a log."""
    return _LONE_SURROGATE.sub(_escape, text)
