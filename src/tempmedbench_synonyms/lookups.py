"""Each lookup kind of SPEC section 11, defined once, and what a lookup answers (``Answer``).

A kind is a frozen dataclass: its fields are its inputs and options (``config.option``), its
docstring its command's help; it carries its request, words, rows rule (``rows``), local
question (``ask``), model and table, which the UTS pipeline, the CLI and the local answers read
instead of branching on types (docs/architecture.md). ``KINDS`` lists them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, ClassVar

from tempmedbench_synonyms import paths
from tempmedbench_synonyms.atoms import AtomQuery, check_code, check_cui, check_sab
from tempmedbench_synonyms.config import option
from tempmedbench_synonyms.errors import EXIT_CODES, BadInputError, Outcome, plural
from tempmedbench_synonyms.paths import (
    DIRECTIONS,
    INPUT_TYPES,
    PAGED,
    RETURN_ID_TYPES,
    SEARCH_TYPES,
    Build,
    Direction,
    InputType,
    ReturnIdType,
    SearchType,
    UtsRequest,
    seg,
)
from tempmedbench_synonyms.secret import shortened

#: ``--limit``'s default: 25 results for a search, 1,000 for every other list (SPEC 11).
SEARCH_LIMIT = 25
DEFAULT_LIMIT = 1000


@dataclass(frozen=True, slots=True)
class Rows:
    """Which rows a lookup answers from (SPEC 12, "Which rows count"): the SUPPRESS values that
    count (``None``: all; a value other than O, E and Y counts as N) and whether English only."""

    suppress: frozenset[str] | None = frozenset({"N"})
    english: bool = False


EVERY_ROW = Rows(None)
COUNTED = Rows()


def counted(obsolete: bool = False, suppressible: bool = False) -> Rows:
    """``N`` rows, plus ``O`` for ``--include-obsolete``, ``E`` and ``Y`` for suppressible ones."""
    return Rows(frozenset("N" + "O" * obsolete + "EY" * suppressible))


@dataclass(frozen=True, slots=True)
class Column:
    """A column of a kind's table: header, model attribute, and whether left out when all empty."""

    header: str
    attribute: str
    optional: bool = False


NAMED = (Column("UI", "ui"), Column("NAME", "name"), Column("SOURCE", "root_source"))
_ONE = "found {query}, UMLS {release}"
#: A relation label (MRREL's REL: RO, PAR, CHD...).
_LABEL = re.compile(r"[A-Za-z0-9_]{1,40}")
#: A value of ``semanticTypes``: a TUI (T047), a tree number (A2.2) or a type's name.
_SEMANTIC_TYPE = re.compile(r"[A-Za-z0-9_.,' -]{1,80}")


@dataclass(frozen=True, slots=True)
class Lookup:
    #: the ``umls`` command that asks it (the kind's docstring is its help)
    command: ClassVar[str]
    #: the fields that name one input (a CUI unless it says): the command's arguments (``sab``
    #: and ``code``: SAB CODE...)
    inputs: ClassVar[tuple[str, ...]] = ("cui",)
    #: the metavar and help of the argument of a kind whose input is one field
    argument: ClassVar[tuple[str, str]] = ("CUI", "Concepts.")
    #: the class of ``uts.models`` each result is read as (by name: the kernel has no pydantic)
    model: ClassVar[str]
    #: the table ``umls COMMAND`` prints, one row a result, sorted by the attributes ``order``
    columns: ClassVar[tuple[Column, ...]] = NAMED
    order: ClassVar[tuple[str, ...]] = ()
    default_limit: ClassVar[int] = DEFAULT_LIMIT
    #: a found answer's message: ``{count}`` the results (counted by ``noun``), ``{query}``,
    #: ``{release}``, ``{cut}`` (what ``--limit`` cut)
    said: ClassVar[str] = "{count} for {query}, UMLS {release}{cut}"
    noun: ClassVar[str] = "result"
    #: the hint of a not-found answer, if not the one of its identifier (``hint``)
    hint_text: ClassVar[str] = ""
    #: which MRCONSO rows it answers from, unless its flags say (``rows``)
    rows_rule: ClassVar[Rows] = EVERY_ROW
    #: asked in ``current`` as it is (its answer names no release to settle it by)
    as_current: ClassVar[bool] = False
    #: ``words``, each formatted with the lookup (``{0.whose}``) and the first (``{asked}``)
    words_as: ClassVar[tuple[str, str]] = ("{0.whose}", "no {asked}")

    def request(self, release: str) -> UtsRequest:
        """The request it sends in ``release``; BadInputError if it cannot be sent."""
        raise NotImplementedError

    def ask(self, engine: Any) -> Any:
        """Its answer from the local engine (``mrconso.engine.Engine``, not imported here): a list,
        one object, or ``None`` for an unknown identifier."""
        raise NotImplementedError

    def check(self) -> None:
        """BadInputError if it cannot be asked of a local index (limit, identifiers, options)."""
        paths.check_limit(self.limit_or_default())
        self.request("current")

    def words(self) -> tuple[str, str]:
        """(the request in words, what "not found" says)."""
        asked = self.words_as[0].format(self)
        return asked, self.words_as[1].format(self, asked=asked)

    @property
    def whose(self) -> str:
        """What it asks about: ``CUI C0000001``, ``AUI A0000001`` or ``MSH code D000001``."""
        for name in ("cui", "aui"):
            value = getattr(self, name, None)
            if value is not None:
                return f"{name.upper()} {value}"
        return f"{getattr(self, 'sab', None)} code {getattr(self, 'code', None)}"

    def rows(self) -> Rows:
        """Which MRCONSO rows it answers from (SPEC 12): ``rows_rule``, unless its flags say; every
        row for ``--preferred`` (UTS then counts obsolete and suppressible atoms too)."""
        return EVERY_ROW if getattr(self, "preferred", False) else self.rows_rule

    def _list(self, path: str, *params: tuple[str, str]) -> UtsRequest:
        """A list that follows ``pageCount``, cut at the kind's limit."""
        return UtsRequest("list", path, (*PAGED, *params),
                          limit=paths.check_limit(self.limit_or_default()))  # fmt: skip

    def limit_or_default(self) -> int:
        given = getattr(self, "limit", None)
        return self.default_limit if given is None else int(given)

    def results(self, value: Any) -> list[dict[str, Any]]:
        if isinstance(value, list):
            return [v for v in value if isinstance(v, dict)]
        return [value] if isinstance(value, dict) else []

    def more(self, result: dict[str, Any]) -> Build | None:
        """The request whose answer completes ``result`` (merged into it), if any."""
        return None

    def answered(
        self,
        input: str,
        results: list[Any],
        release: str | None,
        truncated: bool,
        why: str = "",
        source: str | None = None,
    ) -> Answer:
        """``found`` with ``results`` cut to the limit, else ``not_found`` (ending with ``why``);
        ``source``: the local index that answered."""
        query, nothing = self.words()
        said = release or "local"
        limit = self.limit_or_default()
        if limit and len(results) > limit:  # atoms: UTS sends every page, the limit is ours
            results, truncated = results[:limit], True
        if not results:
            return Answer(input, Outcome.NOT_FOUND, message=f"UMLS {said} has {nothing}{why}",
                          hint=self.hint(), release=release, query=query,
                          source=source)  # fmt: skip
        cut = f"; --limit {limit} cut it" if truncated else ""
        found = _ONE if getattr(self, "preferred", False) else self.said
        message = found.format(
            count=plural(len(results), self.noun), query=query, release=said, cut=cut
        )
        return Answer(input, Outcome.FOUND, tuple(map(clean, results)), message,
                      release=release, query=query, source=source, truncated=truncated)  # fmt: skip

    def bad(
        self, input: str, err: BadInputError, release: str | None, source: str | None = None
    ) -> Answer:
        """``bad_input``: why it cannot be asked (``err``)."""
        return Answer(input, Outcome.BAD_INPUT, message=str(err), hint=err.hint, release=release,
                      query=self.words()[0], source=source)  # fmt: skip

    def hint(self) -> str:
        if self.hint_text:
            return self.hint_text
        if getattr(self, "cui", None) is not None:
            return "check the CUI (C and 7 digits, such as C0020538)"
        if getattr(self, "aui", None) is not None:
            return "check the AUI (A and 7 to 9 digits, such as A3220484)"
        return "check the code, and the source it belongs to"


def _sabs(what: str = "results of") -> Any:
    return option((), "--sabs", f"Only {what} these sources (root source abbreviations; repeat "
                  "it or separate them with commas).", "", "<sab,...>")  # fmt: skip


def _limit(default: int = DEFAULT_LIMIT) -> Any:
    return option(None, "--limit", "At most this many results an input (0: no cap); an answer "
                  "cut short says truncated.", str(default))  # fmt: skip


def _preferred() -> Any:
    return option(False, "--preferred", "Only the preferred atom (UTS then counts obsolete and "
                  "suppressible atoms too).")  # fmt: skip


@dataclass(frozen=True, slots=True)
class Search(Lookup):
    """Search UMLS for terms: the concepts (or codes, atoms...) that match, in UTS's order.

    Quote a term of several words; --file reads one term a line. --meta answers it from your
    own UMLS files, ordered by its own rule (exact matches first, then by UI).

    Example:

        tempmedbench-synonyms umls search "heart attack" --sabs SNOMEDCT_US,MSH
    """

    command = "search"
    inputs = ("string",)
    argument = ("TERM", "Terms to find (quote a term of several words).")
    model = "SearchResult"
    default_limit = SEARCH_LIMIT
    hint_text = ("check the spelling, or try another --search-type (normalizedWords matches word "
                 "forms) or fewer --sabs")  # fmt: skip

    string: str = ""
    search_type: SearchType = option("words", "--search-type", "How the term is matched.")
    input_type: InputType | None = option(None, "--input-type", "What the term is (UTS: atom).", "")
    return_id_type: ReturnIdType | None = option(
        None, "--return-id-type", "What each result names (UTS: concept).", ""
    )
    sabs: tuple[str, ...] = _sabs()
    semantic_types: tuple[str, ...] = option(
        (), "--semantic-types", "Only concepts of these semantic types (TUIs, such as T047; "
        "repeat it or separate them with commas).", "", "<tui,...>"
    )  # fmt: skip
    partial: bool = option(False, "--partial", "Also results that match part of the term.")
    include_obsolete: bool = option(False, "--include-obsolete", "Also obsolete atoms.")
    include_suppressible: bool = option(False, "--include-suppressible", "Also suppressible atoms.")
    #: local search only: the LAT of the matching atoms (UTS search has no such filter)
    language: str | None = option(
        None, "--language", "With --meta or --mrconso: only atoms of this language (LAT, such as "
        "ENG).", ""
    )  # fmt: skip
    limit: int | None = _limit(SEARCH_LIMIT)

    def request(self, release: str) -> UtsRequest:
        if self.language is not None:
            raise BadInputError(
                "UTS search has no language filter: --language reads your own UMLS files "
                "(--meta PATH)"
            )
        for value, allowed, flag in (
            (self.search_type, SEARCH_TYPES, "--search-type"),
            (self.input_type, INPUT_TYPES, "--input-type"),
            (self.return_id_type, RETURN_ID_TYPES, "--return-id-type"),
        ):
            if value is not None and value not in allowed:
                raise BadInputError(f"{flag} {shortened(value)!r} is not one UTS knows: "
                                    "expected one of " + ", ".join(allowed))  # fmt: skip
        # every option under UTS's own name, sent only when given (searchType always)
        given = [("string", paths.check_term(self.string)), ("searchType", self.search_type),
                 ("inputType", self.input_type or ""), ("returnIdType", self.return_id_type or ""),
                 ("sabs", paths.sab_list(self.sabs))]  # fmt: skip
        if self.semantic_types:
            what = "a semantic type: a TUI (T047), a tree number (A2.2) or a name"
            types = paths.joined(self.semantic_types, _SEMANTIC_TYPE, what, "|")
            given.append(("semanticTypes", types))
        given += [(name, "true") for name, on in (("partialSearch", self.partial),
                  ("includeObsolete", self.include_obsolete),
                  ("includeSuppressible", self.include_suppressible)) if on]  # fmt: skip
        params = tuple((name, value) for name, value in given if value)
        return UtsRequest("search", paths.route("search", release), params,
                          limit=paths.check_limit(self.limit_or_default()))  # fmt: skip

    def words(self) -> tuple[str, str]:
        where = f" in {','.join(self.sabs)}" if self.sabs else ""
        where += f" in language {self.language}" if self.language else ""
        query = f"{self.search_type} search for {self.string!r}{where}"
        return query, f"no results for the {query}"

    def rows(self) -> Rows:
        return counted(self.include_obsolete, self.include_suppressible)

    def ask(self, engine: Any) -> Any:
        limit = self.limit_or_default()  # (0: no cap) one more says truncated
        return engine.search(
            self.string, search_type=self.search_type, input_type=self.input_type or "atom",
            return_id_type=self.return_id_type or "concept", sabs=self.sabs,
            semantic_types=self.semantic_types, partial=self.partial, language=self.language,
            rows=self.rows(), limit=limit + 1 if limit else None,
        )  # fmt: skip

    def check(self) -> None:
        # a local index knows the language
        Lookup.check(self if self.language is None else replace(self, language=None))


@dataclass(frozen=True, slots=True)
class Cuis(Lookup):
    """The concepts a source code belongs to (code to CUI).

    Example:

        tempmedbench-synonyms umls cuis SNOMEDCT_US 22298006 44054006
    """

    command = "cuis"
    inputs = ("sab", "code")
    model = "SearchResult"
    rows_rule = COUNTED
    words_as = ("concepts of {0.whose}", "no concept of {0.whose}")

    sab: str = ""
    code: str = ""
    limit: int | None = _limit()

    def _search(self) -> Search:
        return Search(check_code(self.code), "exact", "sourceUi", sabs=(self.sab,),
                      limit=self.limit_or_default())  # fmt: skip

    def request(self, release: str) -> UtsRequest:
        return self._search().request(release)

    def ask(self, engine: Any) -> Any:
        return self._search().ask(engine)


@dataclass(frozen=True, slots=True)
class Crosswalk(Lookup):
    """The codes of other sources that share a concept with a code ("what is the
    equivalent code in Y?").

    Example:

        tempmedbench-synonyms umls crosswalk SNOMEDCT_US 22298006 --target-sabs ICD10CM
    """

    command = "crosswalk"
    inputs = ("sab", "code")
    model = "SourceAtomCluster"
    rows_rule = COUNTED
    hint_text = "check the source and the code; --target-sabs narrows a crosswalk to its sources"

    sab: str = ""
    code: str = ""
    target_sabs: tuple[str, ...] = option(
        (), "--target-sabs", "Only codes of these sources (repeat it or separate them with "
        "commas).", "", "<sab,...>"
    )  # fmt: skip
    limit: int | None = _limit()

    def request(self, release: str) -> UtsRequest:
        sab, code = seg(check_sab(self.sab)), seg(check_code(self.code))
        targets = [("targetSource", paths.sab_list(self.target_sabs))] if self.target_sabs else []
        return self._list(f"{paths.route('crosswalk', release)}/source/{sab}/{code}", *targets)

    def words(self) -> tuple[str, str]:
        to = f" to {','.join(self.target_sabs)}" if self.target_sabs else ""
        return f"crosswalk of {self.sab} code {self.code}{to}", (
            f"no code{to.replace(' to', ' of')} sharing a concept with {self.sab} code {self.code}"
        )

    def ask(self, engine: Any) -> Any:
        return engine.crosswalk(self.sab, self.code, targets=self.target_sabs, rows=self.rows())


@dataclass(frozen=True, slots=True)
class Definitions(Lookup):
    """What concepts mean: their definitions, by source.

    Example:

        tempmedbench-synonyms umls definitions C0018787 --sabs MSH
    """

    command = "definitions"
    model = "Definition"
    rows_rule = COUNTED
    columns = (Column("SOURCE", "root_source"), Column("DEFINITION", "value"))
    words_as = ("definitions of {0.whose}", "no {asked}")

    cui: str = ""
    sabs: tuple[str, ...] = _sabs("definitions of")
    limit: int | None = _limit()

    def request(self, release: str) -> UtsRequest:
        sabs = [("sabs", paths.sab_list(self.sabs))] if self.sabs else []
        path = f"{paths.content(release)}/CUI/{seg(check_cui(self.cui))}/definitions"
        return self._list(path, *sabs)

    def ask(self, engine: Any) -> Any:
        return engine.definitions(self.cui, sabs=self.sabs, rows=self.rows())


@dataclass(frozen=True, slots=True)
class Relations(Lookup):
    """The relations of concepts, source codes or atoms, as UTS gives them (never inverted):
    FROM, LABEL (and the additional label), TO, and the source that asserts it.

    Example:

        tempmedbench-synonyms umls relations --source SNOMEDCT_US 22298006 --relation-labels PAR
    """

    command = "relations"
    model = "Relation"
    rows_rule = COUNTED
    columns = (
        Column("FROM", "related_from_ui"), Column("LABEL", "relation_label"),
        Column("ADDITIONAL", "additional_relation_label"), Column("TO", "related_ui"),
        Column("SOURCE", "root_source"),
    )  # fmt: skip
    words_as = ("relations of {0.whose}", "no {asked}")

    cui: str | None = None
    sab: str | None = None
    code: str | None = None
    aui: str | None = None
    relation_labels: tuple[str, ...] = option(
        (), "--relation-labels", "Only relations of these labels (RB, RN, PAR, CHD, RO...; "
        "repeat it or separate them with commas).", "", "<label,...>"
    )  # fmt: skip
    sabs: tuple[str, ...] = _sabs("relations asserted by")
    limit: int | None = _limit()

    def request(self, release: str) -> UtsRequest:
        path = paths.subject(release, self.cui, self.sab, self.code, self.aui) + "/relations"
        what = "a relation label, such as RO, PAR or CHD"
        labels = (
            paths.joined(self.relation_labels, _LABEL, what, ",") if self.relation_labels else ""
        )
        given = (("includeRelationLabels", labels), ("sabs", paths.sab_list(self.sabs)))
        return self._list(path, *((name, value) for name, value in given if value))

    def ask(self, engine: Any) -> Any:
        return engine.relations(
            cui=self.cui, sab=self.sab, code=self.code, aui=self.aui,
            labels=self.relation_labels, sabs=self.sabs, rows=self.rows(),
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class SemanticTypes(Lookup):
    """The semantic types of concepts: name and TUI (with --details, the tree number too).

    Example:

        tempmedbench-synonyms umls semantic-types C0018787 --details
    """

    command = "semantic-types"
    model = "SemanticTypeInfo"
    columns = (Column("NAME", "name"), Column("TUI", "tui"), Column("TREE", "tree_number", True))
    words_as = ("semantic types of {0.whose}", "no {asked}")

    cui: str = ""
    details: bool = option(
        False, "--details", "Also each type's tree number and definition (one more request a type)."
    )

    def request(self, release: str) -> UtsRequest:
        return paths.concept(release, self.cui)

    def ask(self, engine: Any) -> Any:
        return engine.semantic_types(self.cui, details=self.details)

    def results(self, value: Any) -> list[dict[str, Any]]:
        """The concept's semantic types as UTS lists them (an old release lists bare names)."""
        listed = value.get("semanticTypes") if isinstance(value, dict) else None
        if not isinstance(listed, list):
            return []
        return [{"name": t} if isinstance(t, str) else t for t in listed
                if isinstance(t, (str, dict))]  # fmt: skip

    def more(self, result: dict[str, Any]) -> Build | None:
        """With ``details``: the ``/semantic-network/{release}/TUI/{tui}`` request of a type."""
        uri = result.get("uri")
        tui = result.get("ui") or (paths.last_segment(uri) if isinstance(uri, str) else "")
        if not self.details or not (isinstance(tui, str) and paths.is_tui(tui)):
            return None
        return partial(paths.semantic_type, tui=tui)


@dataclass(frozen=True, slots=True)
class SourceConcept(Lookup):
    """Source codes: name, obsolete, atom count and the links UTS gives (--json: every
    link).

    Example:

        tempmedbench-synonyms umls source-concept SNOMEDCT_US 22298006
    """

    command = "source-concept"
    inputs = ("sab", "code")
    model = "SourceAtomCluster"
    columns = (*NAMED, Column("OBSOLETE", "obsolete"), Column("ATOMS", "atom_count"),
               Column("LINKS", "link_names"))  # fmt: skip
    said = _ONE

    sab: str = ""
    code: str = ""

    def request(self, release: str) -> UtsRequest:
        return UtsRequest("object", paths.code_path(release, self.sab, self.code))

    def ask(self, engine: Any) -> Any:
        return engine.cluster(self.sab, self.code)


@dataclass(frozen=True, slots=True)
class Hierarchy(Lookup):
    """Where codes (or atoms) sit in their source's hierarchy: their parents, children,
    ancestors or descendants (one of --parents, --children, --ancestors, --descendants).

    Example:

        tempmedbench-synonyms umls hierarchy SNOMEDCT_US 22298006 --parents
    """

    command = "hierarchy"
    inputs = ("sab", "code")
    model = "HierarchyEntry"
    columns = (*NAMED, Column("AUI", "aui", True))
    words_as = ("{0.direction} of {0.whose}", "no {asked}")

    direction: Direction = "parents"
    sab: str | None = None
    code: str | None = None
    aui: str | None = None
    limit: int | None = _limit()

    def request(self, release: str) -> UtsRequest:
        if self.direction not in DIRECTIONS:
            raise BadInputError(f"{shortened(self.direction)!r} is not a direction of a hierarchy: "
                                "expected one of " + ", ".join(DIRECTIONS))  # fmt: skip
        if self.sab is None and self.code is None and self.aui is None:
            raise BadInputError("give a source and its code, or an AUI")
        return self._list(paths.subject(release, None, self.sab, self.code, self.aui)
                          + f"/{self.direction}")  # fmt: skip

    def ask(self, engine: Any) -> Any:
        return engine.hierarchy(self.direction, sab=self.sab, code=self.code, aui=self.aui)


@dataclass(frozen=True, slots=True)
class Sources(Lookup):
    """The sources of a release (asked with no key): abbreviation, family, language and
    restriction level.

    Example:

        tempmedbench-synonyms umls sources --umls-release 2025AB
    """

    command = "sources"
    inputs = ()
    model = "RootSource"
    columns = (
        Column("ABBREVIATION", "abbreviation"), Column("FAMILY", "family"),
        Column("LANGUAGE", "language"), Column("RESTRICTION", "restriction_level"),
    )  # fmt: skip
    said = "{count} of UMLS {release}{cut}"
    noun = "source"
    hint_text = Crosswalk.hint_text
    as_current = True
    words_as = ("sources", "no {asked}")

    def request(self, release: str) -> UtsRequest:
        return paths.sources(release, limit=self.limit_or_default())

    def ask(self, engine: Any) -> Any:
        return engine.sources()


@dataclass(frozen=True, slots=True)
class Concept(Lookup):
    """Concepts: name, status, atom count and semantic types (the release probe's
    request).

    Example:

        tempmedbench-synonyms umls concept C0020538
    """

    command = "concept"
    model = "ConceptRecord"
    columns = (Column("CUI", "ui"), Column("NAME", "name"), Column("STATUS", "status"),
               Column("ATOMS", "atom_count"), Column("TYPES", "type_names"))  # fmt: skip
    said = _ONE
    words_as = ("{0.whose}", "no concept {0.cui}")

    cui: str = ""

    def request(self, release: str) -> UtsRequest:
        return paths.concept(release, self.cui)

    def ask(self, engine: Any) -> Any:
        return engine.concept(self.cui)


@dataclass(frozen=True, slots=True)
class _AtomKind(Lookup):
    """What the kinds that answer atoms share: UTS's ``Atom`` objects, their table and order."""

    model = "AtomRecord"
    columns = (
        Column("AUI", "ui"), Column("SAB", "root_source"), Column("TTY", "term_type"),
        Column("LAT", "language"), Column("CUI", "cui"), Column("USABLE", "usable"),
        Column("NAME", "name"),
    )  # fmt: skip
    #: a stable order (UTS sends them in none): source, term type, name, AUI
    order = ("root_source", "term_type", "name", "ui")
    said = "{count} of {query}, UMLS {release}{cut}"
    noun = "atom"
    words_as = ("{0.whose}", "no atoms for {asked}")

    def words(self) -> tuple[str, str]:
        if getattr(self, "preferred", False):
            asked = f"preferred atom of {self.whose}"
            return asked, f"no {asked}"
        return Lookup.words(self)


@dataclass(frozen=True, slots=True)
class Atoms(_AtomKind):
    """The English atoms of concepts, obsolete and suppressible ones left out
    (--preferred: the one preferred atom).

    Example:

        tempmedbench-synonyms umls atoms C0020538 --sab SNOMEDCT_US
    """

    command = "atoms"
    rows_rule = Rows(english=True)

    cui: str = ""
    sab: str | None = option(
        None, "--sab", "Only atoms of this source: the request of a table's route cui (without "
        "it, atoms of every source).", ""
    )  # fmt: skip
    preferred: bool = _preferred()
    limit: int | None = _limit()

    def request(self, release: str) -> UtsRequest:
        if self.preferred:
            return _preferred_atom(paths.subject(release, self.cui, None, None, None))
        if self.sab:
            return paths.for_query(release, AtomQuery("cui", self.sab, self.cui))
        return paths.concept_atoms(release, self.cui)

    @property
    def whose(self) -> str:
        return f"CUI {self.cui}" + (f" in {self.sab}" if self.sab else "")

    def ask(self, engine: Any) -> Any:
        if self.preferred:  # UTS is sent no sab
            return engine.preferred_atom(cui=self.cui)
        return engine.atoms(cui=self.cui, sabs=(self.sab,) if self.sab else (), rows=self.rows())


@dataclass(frozen=True, slots=True)
class SourceAtoms(_AtomKind):
    """The English atoms of source-asserted codes, as a table's route source asks for
    them.

    Example:

        tempmedbench-synonyms umls source SNOMEDCT_US 38341003
    """

    command = "source"
    inputs = ("sab", "code")
    rows_rule = Rows(english=True)

    sab: str = ""
    code: str = ""
    preferred: bool = _preferred()
    limit: int | None = _limit()

    def request(self, release: str) -> UtsRequest:
        if self.preferred:
            return _preferred_atom(paths.subject(release, None, self.sab, self.code, None))
        return paths.for_query(release, AtomQuery("source", self.sab, self.code))

    def ask(self, engine: Any) -> Any:
        if self.preferred:
            return engine.preferred_atom(sab=self.sab, code=self.code)
        return engine.atoms(sab=self.sab, code=self.code, rows=self.rows())


@dataclass(frozen=True, slots=True)
class Atom(_AtomKind):
    """Atoms by their AUI (the request a table's route aui sends).

    Example:

        tempmedbench-synonyms umls atom A3220484 --json
    """

    command = "atom"
    inputs = ("aui",)
    argument = ("AUI", "Atoms.")
    words_as = ("{0.whose}", "no atom {0.aui}")

    aui: str = ""

    def request(self, release: str) -> UtsRequest:
        return paths.for_query(release, AtomQuery("aui", "", self.aui))

    def ask(self, engine: Any) -> Any:
        return engine.atom(self.aui)


def _preferred_atom(subject: str) -> UtsRequest:
    """``.../atoms/preferred``: only ``apiKey`` (UTS then counts every atom)."""
    return UtsRequest("atom", subject + "/atoms/preferred")


#: Every kind, in the order the ``umls`` commands are listed.
KINDS: tuple[type[Lookup], ...] = (
    Search, Cuis, Crosswalk, Definitions, Relations, SemanticTypes, SourceConcept, Hierarchy,
    Sources, Atoms, SourceAtoms, Atom, Concept,
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Answer:
    """What one input got: ``found`` with its results, ``not_found``, or ``bad_input``; not
    authorised, unavailable and interrupted end a batch as errors, never as answers.

    ``results``: UTS's JSON objects (``clean``); ``release``: the concrete release; ``query``: the
    request in words, free of the key; ``source``: the local index that answered, if one did.
    """

    input: str
    outcome: Outcome
    results: tuple[Any, ...] = ()
    message: str = ""
    hint: str | None = None
    release: str | None = None
    query: str = ""
    truncated: bool = False
    source: str | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.outcome]

    def to_json(self) -> dict[str, Any]:
        """The line ``--json`` prints for this input (SPEC 11), before the versions are added;
        ``extra`` holds keys printed before SPEC 11 (``atoms``, ``concept``, ``found``)."""
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
            **({} if self.source is None else {"source": self.source}),
            **self.extra,
        }


def clean(value: Any) -> Any:
    """A UTS JSON value with every ``"NONE"`` read as ``None``, at any depth."""
    if isinstance(value, dict):  # a copy, patched (a third faster than a new dict built)
        out = dict(value)
        for k, v in value.items():  # (a string or a number is read here, not in a call)
            if (t := type(v)) is str:
                if v == "NONE":
                    out[k] = None
            elif t not in _SCALARS:
                out[k] = clean(v)
        return out
    if isinstance(value, list):
        return [(None if v == "NONE" else v) if (t := type(v)) is str
                else v if t in _SCALARS else clean(v) for v in value]  # fmt: skip
    return None if value == "NONE" else value


#: The types of JSON's numbers, booleans and null (never ``"NONE"``).
_SCALARS = frozenset((bool, int, float, type(None)))
