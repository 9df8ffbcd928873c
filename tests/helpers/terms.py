"""UTS answers of SPEC section 11, played by ``responses``: the shapes of NLM's documented
samples (the UTS REST documentation's search, crosswalk, definitions, relations, hierarchy,
semantic network and metadata pages, 2015 to today), with invented content only (SPEC 10):
every name, code, CUI, AUI and source below is made up for these tests.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from requests import PreparedRequest

from helpers import BASE

REL = "2099AA"
CONTENT = f"{BASE}/content/{REL}"


def page(result: Any, *, count: int | None = 1, number: int = 1, size: int = 200) -> dict[str, Any]:
    """The envelope of every answer (``count`` ``None``: no ``pageCount``, as a search's)."""
    doc: dict[str, Any] = {"pageSize": size, "pageNumber": number, "result": result}
    if count is not None:
        doc["pageCount"] = count
    return doc


def concept(cui: str, *, types: list[Any] | None = None, release: str = REL) -> dict[str, Any]:
    at = f"{BASE}/content/{release}/CUI/{cui}"
    return {
        "classType": "Concept",
        "ui": cui,
        "suppressible": False,
        "status": "R",
        "semanticTypes": types if types is not None else [semantic_ref("T901", "Invented type")],
        "atomCount": 2,
        "atoms": f"{at}/atoms",
        "definitions": "NONE",
        "relations": f"{at}/relations",
        "defaultPreferredAtom": f"{at}/atoms/preferred",
        "name": f"Invented concept {cui}",
    }


def semantic_ref(tui: str, name: str) -> dict[str, Any]:
    """A semantic type as a concept lists it."""
    return {"name": name, "uri": f"{BASE}/semantic-network/{REL}/TUI/{tui}"}


def semantic_type(tui: str, name: str, tree: str) -> dict[str, Any]:
    """``/semantic-network/{release}/TUI/{tui}``'s result."""
    return {
        "classType": "SemanticType",
        "abbreviation": "invt",
        "ui": tui,
        "definition": "An invented semantic type of the tests.",
        "example": "NONE",
        "treeNumber": tree,
        "semanticTypeGroup": {"classType": "SemanticGroup", "abbreviation": "INVT"},
        "childCount": 0,
        "name": name,
    }


def cluster(sab: str, code: str, name: str, **extra: Any) -> dict[str, Any]:
    """A ``SourceAtomCluster``: a source code."""
    at = f"{CONTENT}/source/{sab}/{code}"
    return {
        "classType": "SourceAtomCluster",
        "ui": code,
        "suppressible": False,
        "obsolete": False,
        "rootSource": sab,
        "atomCount": 2,
        "cVMemberCount": 0,
        "attributes": f"{at}/attributes",
        "atoms": f"{at}/atoms",
        "descendants": "NONE",
        "ancestors": f"{at}/ancestors",
        "parents": f"{at}/parents",
        "children": "NONE",
        "relations": f"{at}/relations",
        "definitions": "NONE",
        "concepts": f"{BASE}/search/{REL}?string={code}&sabs={sab}&searchType=exact"
        "&inputType=sourceUi",
        "defaultPreferredAtom": f"{at}/atoms/preferred",
        "name": name,
        **extra,
    }


def atom(aui: str, cui: str, sab: str, code: str, name: str, **extra: Any) -> dict[str, Any]:
    """An ``Atom`` (flags as strings, the CUI and the code inside links)."""
    return {
        "classType": "Atom",
        "ui": aui,
        "suppressible": "false",
        "obsolete": "false",
        "rootSource": sab,
        "termType": "PT",
        "code": f"{CONTENT}/source/{sab}/{code}",
        "concept": f"{CONTENT}/CUI/{cui}",
        "sourceConcept": "NONE",
        "sourceDescriptor": "NONE",
        "attributes": f"{CONTENT}/AUI/{aui}/attributes",
        "parents": f"{CONTENT}/AUI/{aui}/parents",
        "relations": "NONE",
        "name": name,
        "language": "ENG",
        **extra,
    }


def definition(sab: str, value: str) -> dict[str, Any]:
    return {"classType": "Definition", "sourceOriginated": True, "rootSource": sab, "value": value}


def relation(frm: str, label: str, to: str, *, extra_label: str = "", sab: str = "INV") -> dict:
    """A relation as UTS sends it since 2022: both ends by link and name."""
    return {
        "ui": "R900000001",
        "suppressible": False,
        "sourceUi": "NONE",
        "obsolete": False,
        "sourceOriginated": False,
        "rootSource": sab,
        "groupId": "NONE",
        "attributeCount": 0,
        "classType": "AtomClusterRelation",
        "relatedFromId": f"{CONTENT}/source/{sab}/{frm}",
        "relatedFromIdName": f"Invented {frm}",
        "relationLabel": label,
        "additionalRelationLabel": extra_label,
        "relatedId": f"{CONTENT}/source/{sab}/{to}",
        "relatedIdName": f"Invented {to}",
    }


def old_relation(label: str, to_cui: str) -> dict[str, Any]:
    """A concept relation as UTS sent it in 2015: the other end as ``relatedConcept``."""
    return {
        "classType": "ConceptRelation",
        "ui": "R900000002",
        "suppressible": False,
        "sourceUi": "NONE",
        "obsolete": False,
        "sourceOriginated": False,
        "rootSource": "MTH",
        "relationLabel": label,
        "additionalRelationLabel": "",
        "groupId": "NONE",
        "attributeCount": 0,
        "relatedAtom": "",
        "relatedConcept": f"{CONTENT}/CUI/{to_cui}",
    }


def root_source(abbreviation: str, level: int, language: str = "ENG") -> dict[str, Any]:
    return {
        "classType": "RootSource",
        "abbreviation": abbreviation,
        "expandedForm": f"Invented source {abbreviation}, 2099",
        "family": abbreviation,
        "language": {"classType": "Language", "abbreviation": language, "expandedForm": "x"},
        "restrictionLevel": level,
        "acquisitionContact": "NONE",
        "contentContact": {"classType": "ContactInformation", "handle": "NONE", "name": "NONE"},
        "shortName": f"Invented {abbreviation}",
        "preferredName": f"Invented source {abbreviation}, 2099",
        "synonymousNames": "NONE",
    }


def search_row(ui: str, name: str, sab: str = "MTH", *, release: str = REL) -> dict[str, Any]:
    return {"ui": ui, "rootSource": sab, "uri": f"{BASE}/content/{release}/CUI/{ui}", "name": name}


NO_RESULTS = {"ui": "NONE", "name": "NO RESULTS"}
#: ``SearchServer(echo=MISSING)``: an envelope without ``pageSize``.
MISSING = object()


def query_of(request: PreparedRequest) -> dict[str, str]:
    """A request's query parameters (``apiKey`` among them if it was sent)."""
    return dict(parse_qsl(urlsplit(request.url or "").query, keep_blank_values=True))


class SearchServer:
    """``/search`` answered page by page as UTS does (``pageSize``, ``pageNumber``, no
    ``pageCount``), recording each request's parameters (``asked``).

    ``end``: how the results end: ``"none"`` (the documented ``NONE`` row on a page of its
    own), ``"list"`` (an empty list), ``"again"`` (a server that no longer pages: page 1
    again, whatever the page asked), ``"forever"`` (every page full of new results).
    ``oversize``: rows sent beyond ``pageSize`` on every page (a server that ignores it).
    ``clamp``: the largest page sent, its size echoed in the envelope (a server that pages
    smaller than asked, counting its pages in its own size). ``echo``: what the envelope's
    ``pageSize`` says instead of the size sent (``MISSING``: no ``pageSize`` at all; ``...``,
    the default: the size sent).
    ``on_page``: called with each page's number before it is answered.
    """

    def __init__(
        self,
        rows: list[dict[str, Any]],
        *,
        end: str = "none",
        oversize: int = 0,
        clamp: int | None = None,
        echo: Any = ...,
        release: str = REL,
        on_page: Callable[[int], None] | None = None,
    ) -> None:
        self.rows = rows
        self.end = end
        self.oversize = oversize
        self.clamp = clamp
        self.echo = echo
        self.release = release
        self.on_page = on_page
        self.asked: list[dict[str, str]] = []
        self._lock = threading.Lock()

    def __call__(self, request: PreparedRequest) -> tuple[int, dict[str, str], str]:
        query = query_of(request)
        with self._lock:
            self.asked.append(query)
        size, number = int(query["pageSize"]), int(query.get("pageNumber", "1"))
        if self.clamp is not None:
            size = min(size, self.clamp)
        if self.on_page is not None:
            self.on_page(number)
        if self.end == "again":
            number = 1
        if self.end == "forever":
            start = (number - 1) * size
            rows = [search_row(f"C8{i:06d}", f"Endless {i}", release=self.release)
                    for i in range(start, start + size)]  # fmt: skip
        else:
            rows = self.rows[(number - 1) * size : number * size + self.oversize]
        if not rows:
            rows = [] if self.end == "list" else [NO_RESULTS]
        body = page({"classType": "searchResults", "results": rows}, count=None, number=number,
                    size=size)  # fmt: skip
        if self.echo is MISSING:
            del body["pageSize"]
        elif self.echo is not ...:
            body["pageSize"] = self.echo
        return 200, {"Content-Type": "application/json"}, json.dumps(body)
