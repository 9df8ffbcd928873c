"""The fake UTS's routes: each request of SPEC 11 becomes one question to the local UMLS's engine
(``FakeUtsData.ask``), and its answer UTS's envelope: pages of ``pageSize`` with ``pageCount``
(search without, ending with its ``NONE`` row), shuffled atoms, 400s and 404s (README.md,
"Testing your own code offline"; what each answer holds: SPEC 12 and ``mrconso.engine``).
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol
from urllib.parse import unquote

from tempmedbench_synonyms import paths
from tempmedbench_synonyms.lookups import Rows, counted
from tempmedbench_synonyms.mrconso.engine import Engine
from tempmedbench_synonyms.mrconso.shapes import NONE, Links
from tempmedbench_synonyms.testing.data import FakeUtsData

#: A status and the JSON document to send with it.
Doc = tuple[int, Any]
#: What a route asks the engine.
Question = Callable[[Engine], Any]

#: What the routes take: the client's search types and ``approximate`` (UTS takes it; the client
#: never sends it); the return id types in the order a 400 lists them.
SEARCH_TYPES = (*paths.SEARCH_TYPES, "approximate")
RETURN_ID_TYPES = ("concept", "aui", "code", "sourceConcept", "sourceDescriptor", "sourceUi")
SEARCH_EMPTY = ("none", "list")


def stable_hash(*parts: object) -> int:
    """A hash of ``parts`` that is the same in every process (faults and shuffles draw on it)."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big")


def error(status: int, message: str) -> Doc:
    return status, {"status": status, "error": message}


def page(result: object, number: int = 1, count: int = 1, size: int = 25) -> dict[str, Any]:
    return {"pageSize": size, "pageNumber": number, "pageCount": count, "result": result}


class _Refused(Exception):
    """A request the fake answers with a 400 before any question (its message)."""


class _Params:
    """A request's parameters, read as the engine takes them."""

    def __init__(self, params: Mapping[str, str], max_page_size: int | None) -> None:
        self.params, self.max_page_size = params, max_page_size

    def list(self, name: str, sep: str = ",") -> tuple[str, ...]:
        value = self.params.get(name)
        return tuple(value.split(sep)) if value else ()

    def choice(self, name: str, default: str, allowed: Sequence[str]) -> str:
        value = self.params.get(name, default)
        if value not in allowed:
            raise _Refused(f"{name} takes one of {', '.join(allowed)}, not {value}")
        return value

    def flag(self, name: str) -> bool:
        return self.params.get(name) == "true"

    @property
    def rows(self) -> Rows:
        """Which rows count, by the request's flags (SPEC 12)."""
        return counted(self.flag("includeObsolete"), self.flag("includeSuppressible"))

    def size_number(self) -> tuple[int, int]:
        try:
            size = int(self.params.get("pageSize", "25"))
            number = int(self.params.get("pageNumber", "1"))
        except ValueError:
            raise _Refused("pageSize and pageNumber are whole numbers") from None
        if size < 1 or number < 1:
            raise _Refused("pageSize and pageNumber start at 1")
        if self.max_page_size is not None:  # a server that pages smaller than asked
            size = min(size, self.max_page_size)
        return size, number


def _question(top: str, rest: list[str], p: _Params) -> tuple[str, Question] | None:
    """What a route (its first segment, and those after the release) asks the engine, and the
    kind of answer (``one``, ``list``, ``atoms``, ``search``, ``sources``); None: no such route."""
    match top, rest:
        case "search", []:
            string = p.params.get("string", "")
            if not string.strip():
                raise _Refused("string is required")
            search = {
                "search_type": p.choice("searchType", "words", SEARCH_TYPES),
                "input_type": p.choice("inputType", "atom", paths.INPUT_TYPES),
                "return_id_type": p.choice("returnIdType", "concept", RETURN_ID_TYPES),
                "sabs": p.list("sabs"),
                "semantic_types": p.list("semanticTypes", "|"),
                "partial": p.flag("partialSearch"),
                "rows": p.rows,
                "limit": math.prod(p.size_number()),  # no result past this page is named
            }
            return "search", lambda e: e.search(string, **search)
        case "crosswalk", ["source", sab, code]:
            targets = p.list("targetSource")
            return "list", lambda e: e.crosswalk(sab, code, targets=targets, rows=p.rows)
        case "metadata", ["sources"]:
            return "sources", lambda e: e.sources()
        case "semantic-network", ["TUI", tui]:
            return "one", lambda e: e.semantic_type(tui)
        case "content", ["CUI", cui, *tail]:
            whose: dict[str, str] = {"cui": cui}
        case "content", ["AUI", aui, *tail]:
            whose = {"aui": aui}
        case "content", ["source", sab, code, *tail]:
            whose = {"sab": sab, "code": code}
        case _:
            return None
    filters = {"sabs": p.list("sabs"), "rows": p.rows}
    match tail:
        case []:
            return "one", lambda e: _one(e, **whose)
        case ["atoms"] if "aui" not in whose:
            language = p.params.get("language") or None
            ttys = p.list("ttys")
            return "atoms", lambda e: e.atoms(**whose, ttys=ttys, language=language, **filters)
        case ["atoms", "preferred"] if "aui" not in whose:
            return "one", lambda e: e.preferred_atom(**whose)
        case ["definitions"] if "cui" in whose:
            return "list", lambda e: e.definitions(whose["cui"], **filters)
        case ["relations"]:
            labels = p.list("includeRelationLabels")
            return "list", lambda e: e.relations(**whose, labels=labels, **filters)
        case [direction] if direction in paths.DIRECTIONS and "cui" not in whose:
            return "list", lambda e: e.hierarchy(direction, **whose)
    return None


def _one(e: Engine, cui: str = "", aui: str = "", sab: str = "", code: str = "") -> Any:
    """A concept, an atom or a source code."""
    return e.concept(cui) if cui else e.atom(aui) if aui else e.cluster(sab, code)


class Settings(Protocol):
    """What ``answer`` reads of a ``FakeUts`` (its documented attributes)."""

    data: FakeUtsData
    shuffle_seed: int
    search_empty: str
    max_page_size: int | None


def answer(fake: Settings, path: str, params: Mapping[str, str], *, base_url: str) -> Doc:
    """The status and JSON document of ``GET base_url + path?params`` (``apiKey`` left out)."""
    data = fake.data
    parts = [unquote(part) for part in path.split("/") if part]
    if len(parts) < 2:
        return error(404, "Not Found")
    release = parts[1]
    if release not in data.served and release != "current":
        return error(404, f"Release {release} is not available")
    p = _Params(params, fake.max_page_size)
    try:
        asked = _question(parts[0], parts[2:], p)
        if asked is None:
            return error(404, "Not Found")
        size, number = p.size_number()
    except _Refused as refused:
        return error(400, str(refused))
    kind, question = asked
    links = Links(data.release if release == "current" else release, base_url)
    found = data.ask(links, question)
    if kind == "one":
        return error(404, "Not Found") if found is None else (200, page(found))
    if kind == "sources":
        return 200, page(found, 1, 1, len(found))
    if kind == "search":  # no pageCount: a page past the last is the NONE row (or empty)
        shown = found[(number - 1) * size : number * size]
        if not shown and fake.search_empty == "none":
            shown = [{"ui": NONE, "name": "NO RESULTS"}]
        result = {"classType": "searchResults", "results": shown}
        return 200, {"pageSize": size, "pageNumber": number, "result": result}
    count = math.ceil(len(found or ()) / size)
    if number > count:  # an unknown id, nothing, or a page past the last: 404, as UTS answers
        return error(404, "No results")
    if kind == "atoms":  # atoms come in no documented order: the same shuffle for each page
        query = "&".join(f"{k}={v}" for k, v in sorted(params.items()) if k != "pageNumber")
        random.Random(stable_hash(fake.shuffle_seed, f"{path}?{query}")).shuffle(found)
    return 200, page(found[(number - 1) * size : number * size], number, count, size)
