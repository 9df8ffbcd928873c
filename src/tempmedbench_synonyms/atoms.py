"""Atoms, the queries that fetch them, and the small interface every atom source implements.

Both sources (a local MRCONSO.RRF and the UTS REST API) answer the same queries with the same
``Atom`` values (SPEC section 3), so the synonym choice never knows where its atoms came from.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

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
    """One request for candidate atoms.

    ``ident`` is the source code (route ``source``), the CUI (route ``cui``) or the AUI (route
    ``aui``). ``sab`` is the entry's source: it scopes routes ``source`` and ``cui``, and for route
    ``aui`` it is carried along only so that a source may skip atoms that could never be candidates.
    """

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
"""Called with (done, total); the unit is the source's own (bytes for MRCONSO, queries for REST)."""


class AtomSource(Protocol):
    """Anything that can answer atom queries for one UMLS release."""

    #: short name shown in reports: "mrconso" or "rest"
    name: str

    def fetch(self, umls_release: str, probe_cui: str, queries: Sequence[AtomQuery]) -> FetchResult:
        """Answer every query for ``umls_release``.

        ``probe_cui`` is the CUI of the first concept in sorted key order; a REST source asks for
        it once to learn whether the release is served and, for ``current``, which concrete
        release that is (SPEC section 3). Raise ``NotAuthorisedError`` or ``UnavailableError``
        when the atoms cannot be had.
        """
        ...
