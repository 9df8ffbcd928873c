"""The types both atom sources share (``AtomQuery``, ``Atom``, ``AtomSource``: SPEC section 3), and
the one check of each identifier they are asked for, made before anything is sent, read or
cached (the forms: docs/reference.md, "Retries and timeouts").
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from tempmedbench_synonyms.errors import BadInputError

Route = Literal["source", "cui", "aui"]


@dataclass(frozen=True, slots=True)
class Atom:
    """One UMLS atom, as SPEC section 3 maps it from REST or MRCONSO.RRF."""

    aui: str
    name: str
    tty: str
    sab: str
    language: str
    cui: str
    usable: bool


@dataclass(frozen=True, slots=True, order=True)
class AtomQuery:
    """``ident`` is the code, CUI or AUI of route ``source``, ``cui`` or ``aui``. ``sab`` scopes
    routes ``source`` and ``cui``; for ``aui`` it only lets a source skip impossible atoms."""

    route: Route
    sab: str
    ident: str


@dataclass(slots=True)
class FetchResult:
    """What a source answered: atoms per query, ``None`` where the source said "not found"."""

    umls_release: str
    atoms: dict[AtomQuery, tuple[Atom, ...] | None]
    requests: int = 0
    cache_hits: int = 0
    warnings: list[str] = field(default_factory=list)
    #: sources the queries name that the source holds no row of (a local file may be a subset)
    missing_sources: list[str] = field(default_factory=list)
    #: what the source read, for the report (the local file: path, form, zip members, parts)
    source_details: dict[str, Any] | None = None


ProgressCallback = Callable[[int, int], None]
"""Called with (done, total) by a source that reports its own progress (the MRCONSO scan: bytes)."""


class AtomSource(Protocol):
    """Anything that can answer atom queries for one UMLS release."""

    #: short name shown in reports: "mrconso" or "rest"
    name: str

    def fetch(self, umls_release: str, probe_cui: str, queries: Sequence[AtomQuery]) -> FetchResult:
        """A REST source probes ``probe_cui`` once (SPEC section 3). Raises ``NotAuthorisedError``
        or ``UnavailableError`` when the atoms cannot be had."""
        ...


CUI_PATTERN = r"C[0-9]{7}"
#: SNOMED CT identifiers have at most 18 digits, LOINC codes 8 characters; 100 leaves room for
#: any source's code while keeping a message and a cache key short.
MAX_CODE_LENGTH = 100

_RELEASE = re.compile(r"[0-9]{4}A[AB]")
_CUI = re.compile(CUI_PATTERN)
_AUI = re.compile(r"A[0-9]{7,9}")
_SAB = re.compile(r"[A-Z0-9][A-Z0-9_.-]{0,39}")

#: Names people type for a source that UMLS abbreviates otherwise (too far apart for difflib).
_ALIASES = {
    "LOINC": "LNC",
    "MESH": "MSH",
    "SNOMED": "SNOMEDCT_US",
    "SNOMED CT": "SNOMEDCT_US",
    "SNOMED-CT": "SNOMEDCT_US",
    "SNOMED_CT": "SNOMEDCT_US",
    "SNOMEDCT": "SNOMEDCT_US",
    "SNOMEDCT-US": "SNOMEDCT_US",
}
#: How alike (difflib's ratio) a malformed SAB must be to one of the table's to be its guess.
_NEAR = 0.8

#: The hint of a malformed identifier, for a user of the umls commands and of a release alike.
_TABLE_HINT = 'give it as UMLS lists it (in a release table, the concept\'s "{field}")'


def _cut(value: str) -> str:
    """An input as a message quotes it (``secret.shortened``: the key masked, 40 characters)."""
    from tempmedbench_synonyms.secret import shortened  # secret reads files: imported on use

    return shortened(value)


def is_release(umls_release: str) -> bool:
    """Whether ``umls_release`` names a UMLS release (``current`` included)."""
    return umls_release == "current" or _RELEASE.fullmatch(umls_release) is not None


def check_release(umls_release: str) -> str:
    """``umls_release`` if it names a UMLS release (``2025AB``, ``current``), else BadInputError."""
    if is_release(umls_release):
        return umls_release
    raise BadInputError(
        f"{_cut(umls_release)!r} is not a UMLS release name: expected YYYYAA or YYYYAB (the year "
        "and the release of that year, such as 2025AB), or current",
        hint="the release comes from --umls-release, or else from umls_release in "
        "synonyms/synonym_table_kept.json",
    )


def check_cui(cui: str) -> str:
    """``cui`` if it is a CUI (``C`` and 7 digits), else BadInputError."""
    return _check_id(cui, _CUI, "CUI", "concept", "C and 7 digits, such as C0020538")


def check_aui(aui: str) -> str:
    """``aui`` if it is an AUI (``A`` and 7 to 9 digits), else BadInputError."""
    return _check_id(aui, _AUI, "AUI", "atom", "A and 7 to 9 digits, such as A3220484")


def _check_id(value: str, shape: re.Pattern[str], kind: str, what: str, expected: str) -> str:
    if shape.fullmatch(value):
        return value
    raise BadInputError(
        f"{kind} {_cut(value)!r} is not a UMLS {what} identifier: expected {expected}",
        hint=f"check the {kind}: " + _TABLE_HINT.format(field=kind.lower()),
    )


def check_sab(sab: str, *, also: Iterable[str] = ()) -> str:
    """``sab`` if it looks like a root source abbreviation, else BadInputError.

    Any SAB of the right shape is sent, but the aliases people type (``SNOMEDCT``, ``LOINC``); a
    wrong shape gets a "did you mean": the alias, its upper case, or the nearest of ``also``.
    """
    alias = _ALIASES.get(sab.strip().upper())
    if _SAB.fullmatch(sab) and alias is None:
        return sab
    if _SAB.fullmatch(sab):
        guess: str | None = alias
        problem = f"SAB {_cut(sab)!r} is not a UMLS source abbreviation, only close to {alias}"
    else:
        guess = alias or _near(sab, {s for s in also if _SAB.fullmatch(s)})
        problem = (
            f"SAB {_cut(sab)!r} is not a UMLS source abbreviation: expected upper-case letters, "
            "digits, '_', '.' and '-', such as SNOMEDCT_US"
        )
    fix = f"did you mean {guess}? " if guess else ""
    raise BadInputError(problem, hint=fix + "check the SAB: " + _TABLE_HINT.format(field="sab"))


def _near(sab: str, candidates: set[str]) -> str | None:
    """A malformed ``sab``'s likely meaning: its upper case if a SAB, else the nearest."""
    upper = sab.strip().upper()
    if upper in candidates or _SAB.fullmatch(upper):
        return upper
    close = difflib.get_close_matches(upper, sorted(candidates), n=1, cutoff=_NEAR)
    return close[0] if close else None


def unsendable(text: str, longest: int) -> str | None:
    """Why ``text`` cannot be sent (too long, a control character, a lone surrogate), or None."""
    if len(text) > longest:
        return f"it is {len(text)} characters long, more than the {longest} allowed"
    if text.isprintable():  # (no Cc, no Cs: one C loop, not a category a character)
        return None
    bad = next((c for c in text if unicodedata.category(c) in ("Cc", "Cs")), None)
    if bad is None:
        return None
    kind = "a lone surrogate" if unicodedata.category(bad) == "Cs" else "the control"
    return f"it contains {kind} character U+{ord(bad):04X}"


def check_code(code: str, *, field: str = "code") -> str:
    """``code`` if UTS can take it in one URL path segment, else BadInputError."""
    problem = None
    if not code:
        problem = "it is empty"
    elif set(code) == {"."}:
        problem = (
            "it is made only of dots, which HTTP clients remove from a URL path (RFC 3986, "
            "section 5.2.4), so another resource would be asked for"
        )
    else:
        problem = unsendable(code, MAX_CODE_LENGTH)
    if problem is None:
        return code
    raise BadInputError(
        f"{field} {_cut(code)!r} cannot be sent to UMLS: {problem}",
        hint=f"check the {field}: " + _TABLE_HINT.format(field=field),
    )
