"""What a terminology lookup asks and what it answers (SPEC section 11), whoever answers it.

Each ``umls`` command (and each method of ``Umls``) asks one kind of lookup per input: a frozen
dataclass below, the same whether UTS answers it (``uts.terms``) or a local MRCONSO.RRF does
(``mrconso.lookup``). Every lookup gets one ``Answer``: its outcome, and its results as the JSON
objects UTS sends, with UTS's own field names and ``"NONE"`` read as ``None`` (``clean``), so that
``--json`` prints them as they are and ``Umls`` reads them into typed models.

``limit`` caps an input's results: ``None`` takes the command's default (``DEFAULT_LIMIT``), 0
means no cap; an answer cut short says ``truncated``.

A field that is an option of its command carries its flag and help (``config.spelt``, which
``cli._options.with_options`` turns into the command's options); the fields that name the input
(the term, the CUI, the code...) are the command's arguments, and default to empty.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from tempmedbench_synonyms.config import spelt
from tempmedbench_synonyms.errors import EXIT_CODES, Outcome

#: ``--limit``'s default: 25 results for a search, 1,000 for every other list (SPEC 11).
SEARCH_LIMIT = 25
DEFAULT_LIMIT = 1000

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


def _sabs(what: str = "results of") -> Any:
    return field(
        default=(),
        metadata=spelt("--sabs", f"Only {what} these sources (root source abbreviations; "
                       "repeat it or separate them with commas).", ""),
    )  # fmt: skip


def _limit(default: int = DEFAULT_LIMIT) -> Any:
    return field(
        default=None,
        metadata=spelt("--limit", "At most this many results an input (0: no cap); an answer cut "
                       "short says truncated.", str(default)),
    )  # fmt: skip


@dataclass(frozen=True, slots=True)
class Search:
    """``umls search TERM``: ``/search/{release}?string=TERM``."""

    string: str = ""
    search_type: SearchType = field(
        default="words", metadata=spelt("--search-type", "How the term is matched.")
    )
    input_type: InputType | None = field(
        default=None, metadata=spelt("--input-type", "What the term is (UTS: atom).", "")
    )
    return_id_type: ReturnIdType | None = field(
        default=None,
        metadata=spelt("--return-id-type", "What each result names (UTS: concept).", ""),
    )
    sabs: tuple[str, ...] = _sabs()
    semantic_types: tuple[str, ...] = field(
        default=(),
        metadata=spelt("--semantic-types", "Only concepts of these semantic types (TUIs, such "
                       "as T047; repeat it or separate them with commas).", ""),
    )  # fmt: skip
    partial: bool = field(
        default=False, metadata=spelt("--partial", "Also results that match part of the term.")
    )
    include_obsolete: bool = field(
        default=False, metadata=spelt("--include-obsolete", "Also obsolete atoms.")
    )
    include_suppressible: bool = field(
        default=False, metadata=spelt("--include-suppressible", "Also suppressible atoms.")
    )
    #: local search only: the LAT of the matching atoms (UTS search has no such filter)
    language: str | None = field(
        default=None,
        metadata=spelt("--language", "With --mrconso: only atoms of this language (LAT, "
                       "such as ENG).", ""),
    )  # fmt: skip
    limit: int | None = _limit(SEARCH_LIMIT)


@dataclass(frozen=True, slots=True)
class Cuis:
    """``umls cuis SAB CODE``: the concepts a source code belongs to (a ``sourceUi`` exact
    search)."""

    sab: str = ""
    code: str = ""
    limit: int | None = _limit()


@dataclass(frozen=True, slots=True)
class Crosswalk:
    """``umls crosswalk SAB CODE``: ``/crosswalk/{release}/source/{sab}/{code}``."""

    sab: str = ""
    code: str = ""
    target_sabs: tuple[str, ...] = field(
        default=(),
        metadata=spelt("--target-sabs", "Only codes of these sources (repeat it or separate "
                       "them with commas).", ""),
    )  # fmt: skip
    limit: int | None = _limit()


@dataclass(frozen=True, slots=True)
class Definitions:
    """``umls definitions CUI``: ``/content/{release}/CUI/{cui}/definitions``."""

    cui: str = ""
    sabs: tuple[str, ...] = _sabs("definitions of")
    limit: int | None = _limit()


@dataclass(frozen=True, slots=True)
class Relations:
    """``umls relations``: of a concept (``cui``), a source code (``sab`` and ``code``) or an
    atom (``aui``): exactly one of the three is given."""

    cui: str | None = None
    sab: str | None = None
    code: str | None = None
    aui: str | None = None
    relation_labels: tuple[str, ...] = field(
        default=(),
        metadata=spelt("--relation-labels", "Only relations of these labels (RB, RN, PAR, CHD, "
                       "RO...; repeat it or separate them with commas).", ""),
    )  # fmt: skip
    sabs: tuple[str, ...] = _sabs("relations asserted by")
    limit: int | None = _limit()


@dataclass(frozen=True, slots=True)
class SemanticTypes:
    """``umls semantic-types CUI``: the concept's semantic types; with ``details`` each TUI's
    ``/semantic-network/{release}/TUI/{tui}`` too."""

    cui: str = ""
    details: bool = field(
        default=False,
        metadata=spelt("--details", "Also each type's tree number and definition (one more "
                       "request a type)."),
    )  # fmt: skip


@dataclass(frozen=True, slots=True)
class SourceConcept:
    """``umls source-concept SAB CODE``: ``/content/{release}/source/{sab}/{code}``."""

    sab: str = ""
    code: str = ""


@dataclass(frozen=True, slots=True)
class Hierarchy:
    """``umls hierarchy``: the parents, children, ancestors or descendants of a source code
    (``sab`` and ``code``) or of an atom (``aui``)."""

    direction: Direction = "parents"
    sab: str | None = None
    code: str | None = None
    aui: str | None = None
    limit: int | None = _limit()


@dataclass(frozen=True, slots=True)
class Sources:
    """``umls sources``: ``/metadata/{release}/sources``, sent with no key."""


@dataclass(frozen=True, slots=True)
class Concept:
    """``umls concept CUI``: ``/content/{release}/CUI/{cui}``."""

    cui: str = ""


@dataclass(frozen=True, slots=True)
class Atoms:
    """``umls atoms CUI``: the English atoms of a concept, obsolete and suppressible ones left
    out, of one source if ``sab``; with ``preferred``, the one preferred atom
    (``.../atoms/preferred``, only ``apiKey`` sent)."""

    cui: str = ""
    sab: str | None = field(
        default=None,
        metadata=spelt("--sab", "Only atoms of this source: the request of a table's route cui "
                       "(without it, atoms of every source).", ""),
    )  # fmt: skip
    preferred: bool = field(
        default=False,
        metadata=spelt("--preferred", "Only the preferred atom (UTS then counts obsolete and "
                       "suppressible atoms too)."),
    )  # fmt: skip
    limit: int | None = _limit()


@dataclass(frozen=True, slots=True)
class SourceAtoms:
    """``umls source SAB CODE``: the English atoms of a source code (``preferred``: as for
    ``Atoms``)."""

    sab: str = ""
    code: str = ""
    preferred: bool = field(
        default=False,
        metadata=spelt("--preferred", "Only the preferred atom (UTS then counts obsolete and "
                       "suppressible atoms too)."),
    )  # fmt: skip
    limit: int | None = _limit()


@dataclass(frozen=True, slots=True)
class Atom:
    """``umls atom AUI``: ``/content/{release}/AUI/{aui}``."""

    aui: str = ""


Lookup = (
    Search | Cuis | Crosswalk | Definitions | Relations | SemanticTypes | SourceConcept
    | Hierarchy | Sources | Concept | Atoms | SourceAtoms | Atom
)  # fmt: skip


def limit_of(lookup: Lookup) -> int:
    """The most results the lookup keeps (0: no cap)."""
    given = getattr(lookup, "limit", None)
    if given is not None:
        return int(given)
    return SEARCH_LIMIT if isinstance(lookup, Search) else DEFAULT_LIMIT


def _code(sab: str | None, code: str | None, aui: str | None) -> str:
    return f"AUI {aui}" if aui is not None else f"{sab} code {code}"


def describe(lookup: Lookup) -> tuple[str, str]:
    """(the request in words, what "not found" says is missing): ``("definitions of CUI
    C0000001", "no definitions of CUI C0000001")``."""
    if isinstance(lookup, Search):
        where = f" in {','.join(lookup.sabs)}" if lookup.sabs else ""
        where += f" in language {lookup.language}" if lookup.language else ""
        query = f"{lookup.search_type} search for {lookup.string!r}{where}"
        return query, f"no results for the {query}"
    if isinstance(lookup, Cuis):
        return f"concepts of {lookup.sab} code {lookup.code}", (
            f"no concept of {lookup.sab} code {lookup.code}"
        )
    if isinstance(lookup, Crosswalk):
        to = f" to {','.join(lookup.target_sabs)}" if lookup.target_sabs else ""
        return f"crosswalk of {lookup.sab} code {lookup.code}{to}", (
            f"no code{to.replace(' to', ' of')} sharing a concept with {lookup.sab} code "
            f"{lookup.code}"
        )
    if isinstance(lookup, (Definitions, SemanticTypes)):
        kind = "definitions" if isinstance(lookup, Definitions) else "semantic types"
        return f"{kind} of CUI {lookup.cui}", f"no {kind} of CUI {lookup.cui}"
    if isinstance(lookup, Relations):
        whose = f"CUI {lookup.cui}" if lookup.cui is not None else ""
        whose = whose or _code(lookup.sab, lookup.code, lookup.aui)
        return f"relations of {whose}", f"no relations of {whose}"
    if isinstance(lookup, SourceConcept):
        return f"{lookup.sab} code {lookup.code}", f"no {lookup.sab} code {lookup.code}"
    if isinstance(lookup, Hierarchy):
        whose = _code(lookup.sab, lookup.code, lookup.aui)
        return f"{lookup.direction} of {whose}", f"no {lookup.direction} of {whose}"
    if isinstance(lookup, Sources):
        return "sources", "no sources"
    if isinstance(lookup, Concept):
        return f"CUI {lookup.cui}", f"no concept {lookup.cui}"
    if isinstance(lookup, (Atoms, SourceAtoms)):
        if isinstance(lookup, Atoms):
            what = f"CUI {lookup.cui}" + (f" in {lookup.sab}" if lookup.sab else "")
        else:
            what = f"{lookup.sab} code {lookup.code}"
        if lookup.preferred:
            return f"preferred atom of {what}", f"no preferred atom of {what}"
        return what, f"no atoms for {what}"
    return f"AUI {lookup.aui}", f"no atom {lookup.aui}"


@dataclass(frozen=True, slots=True)
class Answer:
    """What one input got: ``found`` with its results, ``not_found`` (UMLS has nothing for it:
    an unknown identifier or an empty list), or ``bad_input`` (the input cannot be asked);
    not authorised, unavailable and interrupted end a batch as errors, never as answers.

    ``results`` are the JSON objects UTS sends (``clean``; ``Umls``'s ``*_many`` gives them as
    typed models); ``release`` the concrete release that answered; ``query`` the request in
    words, free of the key."""

    input: str
    outcome: Outcome
    results: tuple[Any, ...] = ()
    message: str = ""
    hint: str | None = None
    release: str | None = None
    query: str = ""
    truncated: bool = False
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.outcome]

    def to_json(self) -> dict[str, Any]:
        """The line ``--json`` prints for this input (SPEC 11), before ``schema_version`` and
        ``tool_version`` are added; ``extra`` holds the keys a command printed before SPEC 11
        (``atoms``, ``concept``, ``found``)."""
        return {
            "input": self.input,
            "outcome": self.outcome.value,
            "exit_code": self.exit_code,
            "release": self.release,
            "query": self.query,
            "results": list(self.results),
            "truncated": self.truncated,
            "message": self.message,
            "hint": self.hint,
            **self.extra,
        }


def clean(value: Any) -> Any:
    """A UTS JSON value with every ``"NONE"`` (UTS's word for an absent link or value) read as
    ``None``, in objects and lists at any depth."""
    if value == "NONE":
        return None
    if isinstance(value, dict):
        return {k: clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clean(v) for v in value]
    return value
