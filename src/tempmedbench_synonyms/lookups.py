"""What a terminology lookup asks and what it answers (SPEC section 11), whoever answers it.

Each ``umls`` command (and each method of ``Umls``) asks one kind of lookup per input: a frozen
dataclass below, the same whether UTS answers it (``uts.terms``) or a local MRCONSO.RRF does
(``mrconso.lookup``). Every lookup gets one ``Answer``: its outcome, and its results as the JSON
objects UTS sends, with UTS's own field names and ``"NONE"`` read as ``None`` (``clean``), so that
``--json`` prints them as they are and ``Umls`` reads them into typed models.

``limit`` caps an input's results: ``None`` takes the command's default (``DEFAULT_LIMIT``), 0
means no cap; an answer cut short says ``truncated``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

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


@dataclass(frozen=True, slots=True)
class Search:
    """``umls search TERM``: ``/search/{release}?string=TERM``."""

    string: str
    search_type: SearchType = "words"
    input_type: InputType | None = None
    return_id_type: ReturnIdType | None = None
    sabs: tuple[str, ...] = ()
    semantic_types: tuple[str, ...] = ()
    partial: bool = False
    include_obsolete: bool = False
    include_suppressible: bool = False
    #: local search only: the LAT of the matching atoms (UTS search has no such filter)
    language: str | None = None
    limit: int | None = None


@dataclass(frozen=True, slots=True)
class Cuis:
    """``umls cuis SAB CODE``: the concepts a source code belongs to (a ``sourceUi`` exact
    search)."""

    sab: str
    code: str
    limit: int | None = None


@dataclass(frozen=True, slots=True)
class Crosswalk:
    """``umls crosswalk SAB CODE``: ``/crosswalk/{release}/source/{sab}/{code}``."""

    sab: str
    code: str
    target_sabs: tuple[str, ...] = ()
    limit: int | None = None


@dataclass(frozen=True, slots=True)
class Definitions:
    """``umls definitions CUI``: ``/content/{release}/CUI/{cui}/definitions``."""

    cui: str
    sabs: tuple[str, ...] = ()
    limit: int | None = None


@dataclass(frozen=True, slots=True)
class Relations:
    """``umls relations``: of a concept (``cui``), a source code (``sab`` and ``code``) or an
    atom (``aui``): exactly one of the three is given."""

    cui: str | None = None
    sab: str | None = None
    code: str | None = None
    aui: str | None = None
    relation_labels: tuple[str, ...] = ()
    sabs: tuple[str, ...] = ()
    limit: int | None = None


@dataclass(frozen=True, slots=True)
class SemanticTypes:
    """``umls semantic-types CUI``: the concept's semantic types; with ``details`` each TUI's
    ``/semantic-network/{release}/TUI/{tui}`` too."""

    cui: str
    details: bool = False


@dataclass(frozen=True, slots=True)
class SourceConcept:
    """``umls source-concept SAB CODE``: ``/content/{release}/source/{sab}/{code}``."""

    sab: str
    code: str


@dataclass(frozen=True, slots=True)
class Hierarchy:
    """``umls hierarchy``: the parents, children, ancestors or descendants of a source code
    (``sab`` and ``code``) or of an atom (``aui``)."""

    direction: Direction
    sab: str | None = None
    code: str | None = None
    aui: str | None = None
    limit: int | None = None


@dataclass(frozen=True, slots=True)
class Sources:
    """``umls sources``: ``/metadata/{release}/sources``, sent with no key."""


@dataclass(frozen=True, slots=True)
class Concept:
    """``umls concept CUI``: ``/content/{release}/CUI/{cui}``."""

    cui: str


@dataclass(frozen=True, slots=True)
class Atoms:
    """``umls atoms CUI``: the English atoms of a concept, obsolete and suppressible ones left
    out, of one source if ``sab``; with ``preferred``, the one preferred atom
    (``.../atoms/preferred``, only ``apiKey`` sent)."""

    cui: str
    sab: str | None = None
    preferred: bool = False
    limit: int | None = None


@dataclass(frozen=True, slots=True)
class SourceAtoms:
    """``umls source SAB CODE``: the English atoms of a source code (``preferred``: as for
    ``Atoms``)."""

    sab: str
    code: str
    preferred: bool = False
    limit: int | None = None


@dataclass(frozen=True, slots=True)
class Atom:
    """``umls atom AUI``: ``/content/{release}/AUI/{aui}``."""

    aui: str


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


@dataclass(frozen=True, slots=True)
class Answer:
    """What one input got: ``found`` with its results, ``not_found`` (UMLS has nothing for it:
    an unknown identifier or an empty list), or ``bad_input`` (the input cannot be asked);
    not authorised, unavailable and interrupted end a batch as errors, never as answers.

    ``results`` are the JSON objects UTS sends (``clean``); ``release`` the concrete release
    that answered; ``query`` the request in words, free of the key."""

    input: str
    outcome: Outcome
    results: tuple[dict[str, Any], ...] = ()
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
