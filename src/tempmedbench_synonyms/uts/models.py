"""Tolerant pydantic models of the UTS REST payloads: atoms, concepts, result pages, and what
SPEC section 11's lookups answer (``Record`` and its kinds). Unknown fields are ignored, flags
come as strings or booleans, an absent link is ``"NONE"`` or ``null``; only the fields we use are
required (https://documentation.uts.nlm.nih.gov/rest/home.html).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Annotated, Any, Self
from urllib.parse import unquote, urlsplit

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PrivateAttr, model_validator

from tempmedbench_synonyms.atoms import Atom
from tempmedbench_synonyms.lookups import Answer, Lookup, clean
from tempmedbench_synonyms.paths import last_segment


def _flag(value: object) -> bool | None:
    """SPEC section 3: only the string or boolean false is false; true likewise; else unknown."""
    if value is True or value == "true":
        return True
    if value is False or value == "false":
        return False
    return None


def _link(value: object) -> str | None:
    """A link is a URL string: ``"NONE"``, ``""``, ``null`` (or an object, a list) is none."""
    return value if isinstance(value, str) and value not in ("", "NONE") else None


#: The version of ``UtsAtom.to_atom``'s mapping: the warm-run memos hold atoms already mapped,
#: so a change here must bump it (with the package version, it names every memo).
ATOM_MAPPING = 1

Flag = Annotated[bool | None, BeforeValidator(_flag)]
Link = Annotated[str | None, BeforeValidator(_link)]


def link_id(value: object) -> str | None:
    """The identifier a link names: its last path segment, decoded
    (``.../AMB%2F9%20%25x`` -> ``AMB/9 %x``), a non-URL as is, ``None`` for no link."""
    link = _link(value)
    if link is None or "://" not in link:
        return link
    return last_segment(link) or None


#: The route word that follows the version in every content link we read (``CUI``, ``AUI``,
#: ``source``): how the version segment is told from a ``content`` in the base URL's own path.
_CONTENT_ROUTES = frozenset({"CUI", "AUI", "source"})


def release_of(link: str | None, base_url: str | None = None) -> str | None:
    """The version segment of a content link (``.../content/2025AB/CUI/C0000001`` -> ``2025AB``),
    read after ``base_url``'s own path when under it, else between a ``content`` segment and a
    route word (``CUI``, ``AUI``, ``source``)."""
    if not link:
        return None
    if base_url:
        prefix = base_url.rstrip("/") + "/content/"
        if link.startswith(prefix):
            rest = link[len(prefix) :].partition("?")[0].partition("#")[0]
            version = unquote(rest.split("/", 1)[0])
            return version or None
    parts = [unquote(part) for part in urlsplit(link).path.split("/") if part]
    for i in range(len(parts) - 2):
        if parts[i] == "content" and parts[i + 2] in _CONTENT_ROUTES:
            return parts[i + 1]
    return None


class UtsModel(BaseModel):
    """Base of the UTS payload models: extra fields ignored, UTS's camelCase names as aliases."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True, frozen=True)


class UtsAtom(UtsModel):
    """One atom as ``/atoms`` and ``/AUI/{aui}`` return it (``classType`` ``"Atom"``)."""

    ui: str
    name: str
    term_type: str = Field(alias="termType")
    root_source: str = Field(alias="rootSource")
    language: str | None = None
    concept: Link = None
    code: Link = None
    source_concept: Link = Field(default=None, alias="sourceConcept")
    source_descriptor: Link = Field(default=None, alias="sourceDescriptor")
    obsolete: Flag = None
    suppressible: Flag = None

    @property
    def cui(self) -> str:
        """SPEC section 3: the last segment of the ``concept`` link ("" when there is none)."""
        return last_segment(self.concept)

    @property
    def code_id(self) -> str:
        """The source code: the last segment of the ``code`` link, decoded ("" when none)."""
        return last_segment(self.code)

    @property
    def usable(self) -> bool:
        """Neither obsolete nor suppressible; a missing or unknown flag counts as not usable."""
        return self.obsolete is False and self.suppressible is False

    def to_atom(self) -> Atom:
        """The atom as SPEC section 3 maps it from REST (bump ``ATOM_MAPPING`` on any change)."""
        return Atom(
            aui=self.ui,
            name=self.name,
            tty=self.term_type,
            sab=self.root_source,
            language=self.language or "",
            cui=self.cui,
            usable=self.usable,
        )


class SemanticType(UtsModel):
    """A semantic type as a concept lists it (older releases send a bare TUI string)."""

    name: str | None = None
    uri: Link = None


def _semantic_types(value: object) -> object:
    if not isinstance(value, list):
        return []
    return [{"name": v} if isinstance(v, str) else v for v in value]


class UtsConcept(UtsModel):
    """One concept as ``/content/{release}/CUI/{cui}`` returns it (``classType`` ``"Concept"``)."""

    ui: str
    name: str | None = None
    status: str | None = None
    suppressible: Flag = None
    date_added: str | None = Field(default=None, alias="dateAdded")
    major_revision_date: str | None = Field(default=None, alias="majorRevisionDate")
    atom_count: int | None = Field(default=None, alias="atomCount")
    relation_count: int | None = Field(default=None, alias="relationCount")
    semantic_types: Annotated[list[SemanticType], BeforeValidator(_semantic_types)] = Field(
        default_factory=list, alias="semanticTypes"
    )
    atoms: Link = None
    definitions: Link = None
    relations: Link = None
    default_preferred_atom: Link = Field(default=None, alias="defaultPreferredAtom")


class UtsPage(UtsModel):
    """The envelope of every UTS content response: one page of ``result``."""

    page_size: int | None = Field(default=None, alias="pageSize")
    page_number: int | None = Field(default=None, alias="pageNumber")
    page_count: int | None = Field(default=None, alias="pageCount")
    result: Any = None


# -- SPEC section 11: what the terminology lookups answer ------------------------------------------

#: The route words after which a link names its release: ``/content/2025AB/...``,
#: ``/search/2025AB?...``, ``/semantic-network/2025AB/...``, ``/crosswalk/2025AB/...``.
_RELEASE_ROUTES = frozenset({"content", "search", "semantic-network", "crosswalk", "metadata"})


def release_in(value: Any, base_url: str | None = None) -> str | None:
    """The release named by the first link found at any depth of a UTS answer (``release_of``)."""
    prefix = None if not base_url else base_url.rstrip("/") + "/"
    todo = [value]
    while todo:
        item = todo.pop(0)
        if isinstance(item, dict):
            todo.extend(item.values())
        elif isinstance(item, list):
            todo.extend(item)
        elif isinstance(item, str) and "://" in item:
            if prefix is not None and item.startswith(prefix):
                parts = item[len(prefix) :].partition("?")[0].split("/")
                if len(parts) > 1 and parts[0] in _RELEASE_ROUTES and parts[1]:
                    return unquote(parts[1])
                continue
            found = release_of(item)
            if found:
                return found
    return None


def _text(value: object) -> str | None:
    """A value shown as text: ``"NONE"`` and ``null`` are absent; a number is its digits."""
    if value is None or value == "NONE" or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return str(value)
    return value if isinstance(value, str) else None


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


Text = Annotated[str | None, BeforeValidator(_text)]
Count = Annotated[int | None, BeforeValidator(_count)]
#: An identifier UTS sends as a link (``link_id``): ``relatedId`` is a CUI, a code or an AUI.
LinkId = Annotated[str | None, BeforeValidator(link_id)]


class Record(UtsModel):
    """A UTS object read tolerantly (``read``), kept as sent in ``raw`` (``"NONE"`` as ``None``)."""

    _raw: dict[str, Any] = PrivateAttr(default_factory=dict)

    @property
    def raw(self) -> Mapping[str, Any]:
        """The object as UTS sent it (read-only)."""
        return MappingProxyType(self._raw)

    @classmethod
    def read(cls, data: Any) -> Self:
        """The model of ``data``, keeping ``data`` (``ValidationError`` if it cannot be read)."""
        model = cls.model_validate(data)
        if isinstance(data, dict):
            model._raw = clean(data)
        return model


class SearchResult(Record):
    """One result of ``/search``: a concept (``ui`` a CUI), or a code or atom (``returnIdType``)."""

    ui: Text = None
    name: Text = None
    root_source: Text = Field(default=None, alias="rootSource")
    uri: Link = None


class SourceAtomCluster(Record):
    """A source code (a crosswalk's results, a code's parents...): ``ui`` is the code."""

    ui: Text = None
    name: Text = None
    root_source: Text = Field(default=None, alias="rootSource")
    obsolete: Flag = None
    suppressible: Flag = None
    atom_count: Count = Field(default=None, alias="atomCount")
    atoms: Link = None
    concepts: Link = None
    parents: Link = None
    children: Link = None
    ancestors: Link = None
    descendants: Link = None
    relations: Link = None
    definitions: Link = None
    attributes: Link = None
    default_preferred_atom: Link = Field(default=None, alias="defaultPreferredAtom")

    @property
    def link_names(self) -> str:
        """The names of the links UTS gave, as the ``umls source-concept`` table shows them."""
        return " ".join(name for name in _LINKS if self.raw.get(name))


_LINKS = ("atoms", "parents", "children", "ancestors", "descendants", "relations", "definitions",
          "attributes", "concepts", "defaultPreferredAtom")  # fmt: skip


class Definition(Record):
    """One definition of a concept: its source and its text."""

    root_source: Text = Field(default=None, alias="rootSource")
    value: Text = None
    source_originated: Flag = Field(default=None, alias="sourceOriginated")


def _relation(value: object) -> object:
    """Relations before 2022 name the other end ``relatedConcept``/``relatedAtom``: renamed."""
    if not isinstance(value, dict):
        return value
    out = dict(value)
    if _link(out.get("relatedId")) is None:
        out["relatedId"] = _link(out.get("relatedConcept")) or _link(out.get("relatedAtom"))
    if _text(out.get("relatedIdName")) is None:
        out["relatedIdName"] = out.get("relatedConceptName") or out.get("relatedAtomName")
    return out


class Relation(Record):
    """One relation as UTS gives it (never inverted): ``relatedFromId`` ``relationLabel``
    ``relatedId``, each end its identifier (``link_id``), the links in ``raw``."""

    ui: Text = None
    root_source: Text = Field(default=None, alias="rootSource")
    relation_label: Text = Field(default=None, alias="relationLabel")
    additional_relation_label: Text = Field(default=None, alias="additionalRelationLabel")
    related_id: LinkId = Field(default=None, alias="relatedId")
    related_id_name: Text = Field(default=None, alias="relatedIdName")
    related_from_id: LinkId = Field(default=None, alias="relatedFromId")
    related_from_id_name: Text = Field(default=None, alias="relatedFromIdName")
    obsolete: Flag = None
    suppressible: Flag = None
    source_originated: Flag = Field(default=None, alias="sourceOriginated")

    _old_shapes = model_validator(mode="before")(_relation)

    @property
    def related_ui(self) -> str | None:
        """The other end: ``related_id`` (an older name)."""
        return self.related_id

    @property
    def related_from_ui(self) -> str | None:
        """The near end: ``related_from_id`` (an older name)."""
        return self.related_from_id


class SemanticTypeInfo(Record):
    """A semantic type (``ui`` the TUI, from ``uri``), with ``treeNumber``, ``abbreviation`` and
    ``definition`` when its details were asked."""

    name: Text = None
    uri: Link = None
    ui: Text = None
    abbreviation: Text = None
    definition: Text = None
    tree_number: Text = Field(default=None, alias="treeNumber")

    @model_validator(mode="before")
    @classmethod
    def _tui(cls, data: Any) -> Any:
        if isinstance(data, dict) and _text(data.get("ui")) is None:
            return {**data, "ui": link_id(data.get("uri"))}
        return data

    @property
    def tui(self) -> str | None:
        """The TUI: ``ui`` (an older name)."""
        return self.ui


def _language(value: object) -> object:
    """A source's language: ``{"abbreviation": "ENG", ...}``, or the code alone."""
    return value.get("abbreviation") if isinstance(value, dict) else value


class RootSource(Record):
    """A source of ``/metadata/{release}/sources``."""

    abbreviation: Text = None
    expanded_form: Text = Field(default=None, alias="expandedForm")
    family: Text = None
    language: Annotated[Text, BeforeValidator(_language)] = None
    restriction_level: Count = Field(default=None, alias="restrictionLevel")
    short_name: Text = Field(default=None, alias="shortName")
    preferred_name: Text = Field(default=None, alias="preferredName")


def _entry(value: object) -> object:
    """A hierarchy result with SPEC section 11's ``ui`` and ``aui``: a cluster's ``ui``; an
    ``Atom``'s ``code`` link segment (its ``ui`` the AUI); before 2016 a relation's ``relatedId``
    (and its name)."""
    if not isinstance(value, dict):
        return value
    kind = str(value.get("classType", ""))
    if kind == "Atom":
        return {**value, "ui": link_id(value.get("code")), "aui": _text(value.get("ui"))}
    if kind.endswith("Relation"):
        related = _relation(value)
        assert isinstance(related, dict)
        name = related.get("relatedIdName")
        return {**value, "ui": link_id(related.get("relatedId")), "aui": None, "name": name}
    return {**value, "ui": _text(value.get("ui")), "aui": None}


class HierarchyEntry(Record):
    """A parent, child, ancestor or descendant: ``ui`` the code, ``aui`` an atom's AUI (``None``
    for a code); the links in ``raw``."""

    class_type: Text = Field(default=None, alias="classType")
    ui: Text = None
    aui: Text = None
    name: Text = None
    root_source: Text = Field(default=None, alias="rootSource")
    obsolete: Flag = None
    suppressible: Flag = None

    _old_shapes = model_validator(mode="before")(_entry)


class AtomRecord(UtsAtom, Record):
    """An atom that keeps the object UTS sent (``umls atoms``, ``source``, ``atom``)."""


class ConceptRecord(UtsConcept, Record):
    """A concept that keeps the object UTS sent (``umls concept``)."""

    @property
    def type_names(self) -> list[str]:
        return [t.name for t in self.semantic_types if t.name]


def read_results(answer: Answer, lookup: Lookup) -> tuple[Record, ...]:
    """An answer's results as the model ``lookup``'s kind names, each keeping its raw object."""
    model = globals().get(lookup.model)
    assert isinstance(model, type) and issubclass(model, Record), lookup.model
    return tuple(model.read(result) for result in answer.results)
