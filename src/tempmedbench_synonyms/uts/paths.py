"""Every UTS request this tool sends, built in one place: SPEC section 3's paths and parameters.

Each builder checks the identifiers it is given (``uts.identifiers``) and path-encodes them
(``quote(value, safe="")``), so nothing malformed is sent or cached::

    concept(umls_release, cui)        GET /content/{release}/CUI/{cui}          the release probe
    concept_atoms(umls_release, cui)  GET /content/{release}/CUI/{cui}/atoms    every source
    for_query(umls_release, query)    route source: /content/{release}/source/{sab}/{code}/atoms
                                      route cui:    /content/{release}/CUI/{cui}/atoms?sabs={sab}
                                      route aui:    /content/{release}/AUI/{aui}  (apiKey only)

Every atoms request sends ``ATOMS_PARAMS``; the client adds ``pageNumber`` for later pages and
``apiKey``. ``url`` joins a base URL and a path (the client's only way to make a URL).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal
from urllib.parse import quote

from tempmedbench_synonyms.atoms import (
    AtomQuery,
    check_aui,
    check_code,
    check_cui,
    check_release,
    check_sab,
)
from tempmedbench_synonyms.errors import BadInputError

#: SPEC section 3: every atoms request asks for 200 atoms a page and follows pageCount.
PAGE_SIZE = 200
#: SPEC section 3: the parameters of every atoms request.
ATOMS_PARAMS: dict[str, str] = {
    "language": "ENG",
    "includeObsolete": "false",
    "includeSuppressible": "false",
    "pageSize": str(PAGE_SIZE),
}

#: What an answer holds: a concept, one atom (route aui), or a list of atoms (every page).
Kind = Literal["concept", "atom", "atoms"]


@dataclass(frozen=True, slots=True)
class UtsRequest:
    """One request: what it answers, its path under the base URL and its query parameters."""

    kind: Kind
    path: str
    params: tuple[tuple[str, str], ...] = ()

    @property
    def param_dict(self) -> dict[str, str]:
        return dict(self.params)


def _content(umls_release: str) -> str:
    return f"/content/{quote(check_release(umls_release), safe='')}"


def _seg(value: str) -> str:
    return quote(value, safe="")


_ATOMS = tuple(ATOMS_PARAMS.items())


def concept(umls_release: str, cui: str) -> UtsRequest:
    """The concept ``cui`` (the release probe, ``umls concept``)."""
    return UtsRequest("concept", f"{_content(umls_release)}/CUI/{_seg(check_cui(cui))}")


def concept_atoms(umls_release: str, cui: str) -> UtsRequest:
    """The atoms of concept ``cui`` in every source (``umls atoms`` without ``--sab``)."""
    return UtsRequest("atoms", f"{_content(umls_release)}/CUI/{_seg(check_cui(cui))}/atoms", _ATOMS)


def for_query(umls_release: str, query: AtomQuery, *, sabs: Iterable[str] = ()) -> UtsRequest:
    """The request of one atom query (SPEC section 3's table).

    ``sabs``, the other SABs of the same table, may be named in a "did you mean" hint. Route
    ``aui`` sends no SAB, so its ``sab`` is not checked.
    """
    content = _content(umls_release)
    if query.route == "source":
        sab, code = _seg(check_sab(query.sab, also=sabs)), _seg(check_code(query.ident))
        return UtsRequest("atoms", f"{content}/source/{sab}/{code}/atoms", _ATOMS)
    if query.route == "cui":
        params = (*_ATOMS, ("sabs", check_sab(query.sab, also=sabs)))
        return UtsRequest("atoms", f"{content}/CUI/{_seg(check_cui(query.ident))}/atoms", params)
    if query.route == "aui":
        return UtsRequest("atom", f"{content}/AUI/{_seg(check_aui(query.ident))}")
    raise BadInputError(f"unknown route {query.route!r}")


def url(base_url: str, path: str) -> str:
    """The URL of ``path`` under ``base_url`` (which may end in a slash)."""
    return base_url.rstrip("/") + path
