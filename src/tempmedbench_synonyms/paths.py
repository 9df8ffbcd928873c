"""Every UTS request this tool sends (SPEC sections 3 and 11), built in one place: each builder
checks the identifiers it is given and path-encodes them, so nothing malformed is sent or cached.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal
from urllib.parse import quote, unquote

from tempmedbench_synonyms.atoms import (
    AtomQuery,
    check_aui,
    check_code,
    check_cui,
    check_release,
    check_sab,
    unsendable,
)
from tempmedbench_synonyms.errors import BadInputError
from tempmedbench_synonyms.secret import check_not_secret, shortened

SearchType = Literal[
    "words", "exact", "normalizedString", "normalizedWords", "leftTruncation", "rightTruncation"
]
InputType = Literal["atom", "code", "sourceConcept", "sourceDescriptor", "sourceUi", "tty"]
ReturnIdType = Literal["aui", "concept", "code", "sourceConcept", "sourceDescriptor", "sourceUi"]
Direction = Literal["parents", "children", "ancestors", "descendants"]

SEARCH_TYPES: tuple[str, ...] = SearchType.__args__  # type: ignore[attr-defined]
INPUT_TYPES: tuple[str, ...] = InputType.__args__  # type: ignore[attr-defined]
RETURN_ID_TYPES: tuple[str, ...] = ReturnIdType.__args__  # type: ignore[attr-defined]
DIRECTIONS: tuple[str, ...] = Direction.__args__  # type: ignore[attr-defined]

#: SPEC section 3: every atoms request asks for 200 atoms a page and follows pageCount.
PAGE_SIZE = 200
#: SPEC section 3: the parameters of every atoms request.
_ATOMS = (
    ("language", "ENG"),
    ("includeObsolete", "false"),
    ("includeSuppressible", "false"),
    ("pageSize", str(PAGE_SIZE)),
)

#: What an answer holds: a concept, one atom (route aui), or a list of atoms (every page); for
#: SPEC 11, any one object, a list that follows ``pageCount`` up to a limit, or a search.
Kind = Literal["concept", "atom", "atoms", "object", "list", "search"]

#: The longest search term sent (a term is one query parameter; UTS matches names, not texts).
MAX_TERM_LENGTH = 500
#: A TUI, a semantic type's identifier: T and 3 digits (T047).
_TUI = re.compile(r"T[0-9]{3}")


@dataclass(frozen=True, slots=True)
class UtsRequest:
    """One request: what it answers, its path under the base URL and its query parameters.
    ``keyless``: sent without the key (SPEC 11's ``/metadata/{release}/sources`` only). ``limit``: a
    list's or search's most results (0: all), part of the cache key, never sent."""

    kind: Kind
    path: str
    params: tuple[tuple[str, str], ...] = ()
    keyless: bool = False
    limit: int = 0

    def __post_init__(self) -> None:
        # Every kind builds its request here: a term or code that holds the API key is bad
        # input at the input check, as a malformed CUI is (never counted as cached, sent or
        # stored), wherever it is asked from (a batch, a dry run, a regeneration).
        check_not_secret(self.path, *(value for _, value in self.params))

    @property
    def param_dict(self) -> dict[str, str]:
        return dict(self.params)


#: A request given its release (``concept`` would be ``partial(concept, cui=...)``): how a
#: lookup hands its request to the cache, which asks it in the release it settles on.
Build = Callable[[str], UtsRequest]


@functools.lru_cache(maxsize=64)  # (the same few for every input; a bad release is not kept)
def route(name: str, umls_release: str) -> str:
    """``/{name}/{release}``: the start of a request's path (``content``, ``search``...)."""
    return f"/{name}/{seg(check_release(umls_release))}"


def content(umls_release: str) -> str:
    return route("content", umls_release)


#: What ``quote(text, safe="")`` leaves as it is (most codes: no call needed)
_UNQUOTED = re.compile(r"[A-Za-z0-9_.~-]*")


def seg(value: str) -> str:
    return value if _UNQUOTED.fullmatch(value) else quote(value, safe="")


def concept(umls_release: str, cui: str) -> UtsRequest:
    """The concept ``cui`` (the release probe, ``umls concept``)."""
    return UtsRequest("concept", f"{content(umls_release)}/CUI/{seg(check_cui(cui))}")


def concept_atoms(umls_release: str, cui: str) -> UtsRequest:
    """The atoms of concept ``cui`` in every source (``umls atoms`` without ``--sab``)."""
    return UtsRequest("atoms", f"{content(umls_release)}/CUI/{seg(check_cui(cui))}/atoms", _ATOMS)


def for_query(umls_release: str, query: AtomQuery, *, sabs: Iterable[str] = ()) -> UtsRequest:
    """The request of one atom query (SPEC section 3's table); ``sabs`` feed a "did you mean"."""
    where = content(umls_release)
    if query.route == "source":
        sab, code = seg(check_sab(query.sab, also=sabs)), seg(check_code(query.ident))
        return UtsRequest("atoms", f"{where}/source/{sab}/{code}/atoms", _ATOMS)
    if query.route == "cui":
        params = (*_ATOMS, ("sabs", check_sab(query.sab, also=sabs)))
        return UtsRequest("atoms", f"{where}/CUI/{seg(check_cui(query.ident))}/atoms", params)
    if query.route == "aui":
        return UtsRequest("atom", f"{where}/AUI/{seg(check_aui(query.ident))}")
    raise BadInputError(f"unknown route {query.route!r}")


# -- SPEC section 11: the parts of the requests the lookup kinds build (``lookups``) ----------

PAGED = (("pageSize", str(PAGE_SIZE)),)


def check_term(term: str) -> str:
    """``term`` if it can be sent as a search string (not blank, no control character, valid
    Unicode, at most ``MAX_TERM_LENGTH``); else BadInputError."""
    problem = "it is empty" if not term.strip() else unsendable(term, MAX_TERM_LENGTH)
    if problem is None:
        return term
    raise BadInputError(
        f"search term {shortened(term)!r} cannot be sent to UMLS: {problem}",
        hint="give the term as one argument (quote a term of several words), or one a line "
        "with --file",
    )


def is_tui(value: str) -> bool:
    return _TUI.fullmatch(value) is not None


def check_tui(tui: str) -> str:
    if is_tui(tui):
        return tui
    raise BadInputError(
        f"TUI {shortened(tui)!r} is not a UMLS semantic type identifier: expected T and 3 digits, "
        "such as T047"
    )


def joined(values: Sequence[str], pattern: re.Pattern[str], what: str, sep: str) -> str:
    for value in values:
        if not pattern.fullmatch(value) or sep in value:
            raise BadInputError(f"{shortened(value)!r} cannot be sent to UMLS: it is not {what}")
    return sep.join(values)


def sab_list(sabs: Sequence[str]) -> str:
    return ",".join(check_sab(s) for s in sabs)


def check_limit(limit: int) -> int:
    if limit < 0:
        raise BadInputError(f"--limit {limit} is out of range: give 0 (no cap) or more")
    return limit


def code_path(umls_release: str, sab: str, code: str) -> str:
    return f"{content(umls_release)}/source/{seg(check_sab(sab))}/{seg(check_code(code))}"


def subject(
    umls_release: str, cui: str | None, sab: str | None, code: str | None, aui: str | None
) -> str:
    """The path of a concept, a source code or an atom: exactly one of them is given."""
    given = [cui is not None, sab is not None or code is not None, aui is not None]
    if sum(given) != 1:
        raise BadInputError("give exactly one of a CUI, a source and its code, or an AUI")
    if cui is not None:
        return f"{content(umls_release)}/CUI/{seg(check_cui(cui))}"
    if aui is not None:
        return f"{content(umls_release)}/AUI/{seg(check_aui(aui))}"
    if sab is None or code is None:
        raise BadInputError("a source code needs both its SAB and its code")
    return code_path(umls_release, sab, code)


def semantic_type(umls_release: str, tui: str) -> UtsRequest:
    """``/semantic-network/{release}/TUI/{tui}``: one semantic type's details."""
    return UtsRequest("object", f"{route('semantic-network', umls_release)}/TUI/"
                      f"{seg(check_tui(tui))}")  # fmt: skip


def sources(umls_release: str, *, limit: int = 0) -> UtsRequest:
    """``/metadata/{release}/sources``: every source of a release; sent without the key."""
    return UtsRequest("list", f"{route('metadata', umls_release)}/sources", PAGED, keyless=True,
                      limit=check_limit(limit))  # fmt: skip


def last_segment(link: str | None) -> str:
    """The last path segment of a link, decoded: the CUI of a ``concept`` link, for example."""
    if not link:
        return ""
    # urlsplit(link).path's last segment, without a full URL parse for every atom of a warm run.
    path = link.partition("?")[0].partition("#")[0].rstrip("/")
    _, scheme, rest = path.partition("://")
    if scheme and "/" not in rest:  # "https://host" has no path segment
        return ""
    last = path.rsplit("/", 1)[-1]
    return unquote(last) if "%" in last else last


def url(base_url: str, path: str) -> str:
    return base_url.rstrip("/") + path
