"""Tolerant pydantic models of the UTS REST payloads we read: atoms, concepts and result pages.

Tolerant of what UTS really sends (the shapes in the UTS REST documentation,
https://documentation.uts.nlm.nih.gov/rest/home.html, and what peer clients observe): unknown
fields are ignored; ``suppressible`` and ``obsolete`` come as the strings ``"true"``/``"false"``
on atoms and as booleans on concepts; an absent link is ``"NONE"`` or ``null``; an atom's CUI and
code appear only inside its ``concept`` and ``code`` link URLs. Only the fields we use are required.
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import unquote, urlsplit

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from tempmedbench_synonyms.atoms import Atom


def _flag(value: object) -> bool | None:
    """SPEC section 3: only the string or boolean false is false; true likewise; else unknown."""
    if value is True or value == "true":
        return True
    if value is False or value == "false":
        return False
    return None


def _link(value: object) -> str | None:
    """``"NONE"``, ``null`` and the empty string all mean "no link"."""
    if value is None or value == "NONE" or value == "":
        return None
    if isinstance(value, str):
        return value
    return None  # a link is a URL string; anything else (an object, a list) carries none we use


#: The version of ``UtsAtom.to_atom``'s mapping: the warm-run memos hold atoms already mapped,
#: so a change here must bump it (with the package version, it names every memo).
ATOM_MAPPING = 1

Flag = Annotated[bool | None, BeforeValidator(_flag)]
Link = Annotated[str | None, BeforeValidator(_link)]


def link_segments(link: str | None) -> list[str]:
    """The decoded path segments of a link URL (empty for no link)."""
    if not link:
        return []
    return [unquote(part) for part in urlsplit(link).path.split("/") if part]


def last_segment(link: str | None) -> str:
    """The last path segment of a link, decoded: the CUI of a ``concept`` link, for example."""
    if not link:
        return ""
    # The same as link_segments(link)[-1], without a full URL parse for every atom of a warm run.
    path = link.partition("?")[0].partition("#")[0].rstrip("/")
    _, scheme, rest = path.partition("://")
    if scheme and "/" not in rest:  # "https://host" has no path segment
        return ""
    last = path.rsplit("/", 1)[-1]
    return unquote(last) if "%" in last else last


#: The route word that follows the version in every content link we read (``CUI``, ``AUI``,
#: ``source``): how the version segment is told from a ``content`` in the base URL's own path.
_CONTENT_ROUTES = frozenset({"CUI", "AUI", "source"})


def release_of(link: str | None, base_url: str | None = None) -> str | None:
    """The version segment of a content link: ``.../content/2025AB/CUI/C0000001`` -> ``2025AB``.

    With ``base_url``, a link under it is read after the base URL's own path, which may hold a
    ``content`` segment of its own (``https://mirror.example/content/uts/rest``). Otherwise, or
    for a link elsewhere, the version is the segment between a ``content`` segment and a route
    word (``CUI``, ``AUI``, ``source``): the first ``content`` alone may belong to the base URL,
    and the last may be a source code.
    """
    if not link:
        return None
    if base_url:
        prefix = base_url.rstrip("/") + "/content/"
        if link.startswith(prefix):
            rest = link[len(prefix) :].partition("?")[0].partition("#")[0]
            version = unquote(rest.split("/", 1)[0])
            return version or None
    parts = link_segments(link)
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

    def release_at(self, base_url: str | None) -> str | None:
        """The concrete release named by this concept's links (how ``current`` is resolved),
        read after ``base_url`` (see ``release_of``)."""
        for link in (self.atoms, self.default_preferred_atom, self.relations, self.definitions):
            found = release_of(link, base_url)
            if found:
                return found
        return None


class UtsPage(UtsModel):
    """The envelope of every UTS content response: one page of ``result``."""

    page_size: int | None = Field(default=None, alias="pageSize")
    page_number: int | None = Field(default=None, alias="pageNumber")
    page_count: int | None = Field(default=None, alias="pageCount")
    result: Any = None
