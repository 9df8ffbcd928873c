"""The fake UTS's answers, route by route: invented rows in, the JSON objects UTS sends out.

Every route of SPEC section 11, each answered from ``FakeUtsData`` with the shapes of NLM's
documented samples (atoms and clusters built by ``mrconso.shapes``)::

    /search/{release}                                      searchResults, no pageCount
    /crosswalk/{release}/source/{sab}/{code}               SourceAtomClusters (targetSource)
    /content/{release}/CUI/{cui}                           a Concept (semanticTypes from MRSTY)
    /content/{release}/CUI/{cui}/atoms[/preferred]         Atoms, or the preferred one
    /content/{release}/CUI/{cui}/definitions               Definitions (MRDEF; sabs)
    /content/{release}/CUI/{cui}/relations                 relations (MRREL)
    /content/{release}/source/{sab}/{code}                 a SourceAtomCluster
    /content/{release}/source/{sab}/{code}/atoms[/preferred]
    /content/{release}/source/{sab}/{code}/relations
    /content/{release}/source/{sab}/{code}/parents         (children, ancestors, descendants:
    /content/{release}/AUI/{aui}[/relations|/parents...]    MRHIER; HL7 codes and AUIs: Atoms)
    /semantic-network/{release}/TUI/{tui}                  a SemanticType (MRSTY)
    /metadata/{release}/sources                            RootSources (MRSAB), no key needed

Lists come in pages of ``pageSize`` (default 25) with ``pageCount``; an unknown id, an empty list
or a page past the last is a 404. Search has no ``pageCount``: after the last result comes a page
holding only ``{"ui": "NONE", "name": "NO RESULTS"}`` (or an empty list, ``search_empty="list"``),
also the whole answer when nothing matches. Relations are read as MRREL writes them: REL and RELA
are the relationship of the row's second id to its first, so the relations of an id are the rows
whose second id it is, that id as ``relatedFromId`` and the first as ``relatedId``.

Search only approximates UTS's ranking and normalisation, on the invented rows: ``exact`` is the
whole string ignoring case; ``words`` every word of the term is a word of the atom (``\\w+``,
ignoring case); ``normalizedWords`` and ``normalizedString`` the same, and the same words in any
order, after dropping a final ``s`` from words of four letters or more (a stand-in for LVG's
norm); ``leftTruncation``/``rightTruncation`` every word of the term ends/starts a word of the
atom; ``partialSearch=true`` any word is enough; the deprecated ``approximate`` is a partial
``normalizedWords``. Results are unique by (``rootSource``, ``ui``): those with an atom equal to
the term (ignoring case) first, then by ``ui``.

Names follow SPEC 12 with the local lookups' own functions (``mrconso.shapes``): a concept is
named by ``concept_name_row`` (in a concept, a search, a relation, its preferred atom), a source
code by ``code_name_row``.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import unquote

from tempmedbench_synonyms.lookups import counted
from tempmedbench_synonyms.mrconso.rows import COLUMN
from tempmedbench_synonyms.mrconso.shapes import (
    NONE,
    Links,
    atom_json,
    cluster_json,
    code_name_row,
    concept_name_row,
    crosswalk_codes,
    known_code,
    search_result_json,
)
from tempmedbench_synonyms.testing.data import WORD, FakeRow, FakeUtsData, norm
from tempmedbench_synonyms.testing.rrf import Mrrel

#: A status and the JSON document to send with it.
Doc = tuple[int, Any]

HIERARCHY = ("parents", "children", "ancestors", "descendants")
SEARCH_TYPES = (
    "words", "exact", "normalizedString", "normalizedWords", "leftTruncation", "rightTruncation",
    "approximate",
)  # fmt: skip
INPUT_TYPES = ("atom", "code", "sourceConcept", "sourceDescriptor", "sourceUi", "tty")
RETURN_ID_TYPES = ("concept", "aui", "code", "sourceConcept", "sourceDescriptor", "sourceUi")
SEARCH_EMPTY = ("none", "list")
_NO_RESULTS = {"ui": NONE, "name": "NO RESULTS"}
_LANGUAGES = {
    "ENG": "English", "FRE": "French", "GER": "German", "SPA": "Spanish", "DUT": "Dutch",
    "ITA": "Italian", "JPN": "Japanese", "POR": "Portuguese",
}  # fmt: skip


def stable_hash(*parts: object) -> int:
    """A hash of ``parts`` that is the same in every process (faults and shuffles draw on it)."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big")


def error(status: int, message: str) -> Doc:
    return status, {"status": status, "error": message}


def page(result: object, number: int = 1, count: int = 1, size: int = 25) -> dict[str, Any]:
    return {"pageSize": size, "pageNumber": number, "pageCount": count, "result": result}


class _Refused(Exception):
    """A request the fake answers with an error (``doc``) before any lookup."""

    def __init__(self, doc: Doc) -> None:
        super().__init__(doc[1]["error"])
        self.doc = doc


#: Whether one word of the term is in an atom (its words), by search type.
_WORD_TESTS: dict[str, Callable[[str, frozenset[str]], bool]] = {
    "words": lambda w, atom: w in atom,
    "normalizedWords": lambda w, atom: w in {norm(a) for a in atom},
    "leftTruncation": lambda w, atom: any(a.endswith(w) for a in atom),
    "rightTruncation": lambda w, atom: any(a.startswith(w) for a in atom),
}


def _matcher(search_type: str, term: str, partial: bool) -> Callable[[str, frozenset[str]], bool]:
    """Whether an atom (its string casefolded, and its words) matches ``term``."""
    folded = term.casefold()
    words = WORD.findall(folded)
    if search_type == "exact":
        return lambda name, _: name == folded
    if search_type == "normalizedString":
        wanted = sorted(map(norm, words))
        return lambda name, _: bool(wanted) and sorted(map(norm, WORD.findall(name))) == wanted
    if search_type == "approximate":
        search_type, partial = "normalizedWords", True
    if search_type == "normalizedWords":
        words = [norm(w) for w in words]
    test = _WORD_TESTS[search_type]
    combine = any if partial else all
    return lambda _, atom: bool(words) and combine(test(w, atom) for w in words)


class Routes:
    """The answers to one request: the data, the links of its release, its parameters."""

    def __init__(
        self,
        data: FakeUtsData,
        path: str,
        params: Mapping[str, str],
        links: Links,
        *,
        shuffle_seed: int,
        search_empty: str,
        max_page_size: int | None = None,
    ) -> None:
        self.data = data
        self.path = path
        self.params = params
        self.links = links
        self.shuffle_seed = shuffle_seed
        self.search_empty = search_empty
        self.max_page_size = max_page_size
        #: which rows count, by the request's flags (SPEC 12)
        self.rule = counted(
            params.get("includeObsolete") == "true", params.get("includeSuppressible") == "true"
        )

    # -- parameters ----------------------------------------------------------------------------

    def _size_number(self) -> tuple[int, int]:
        try:
            size = int(self.params.get("pageSize", "25"))
            number = int(self.params.get("pageNumber", "1"))
        except ValueError:
            raise _Refused(error(400, "pageSize and pageNumber are whole numbers")) from None
        if size < 1 or number < 1:
            raise _Refused(error(400, "pageSize and pageNumber start at 1"))
        if self.max_page_size is not None:  # a server that pages smaller than asked
            size = min(size, self.max_page_size)
        return size, number

    def _set(self, name: str, sep: str = ",") -> set[str] | None:
        value = self.params.get(name)
        return set(value.split(sep)) if value else None

    def _choice(self, name: str, default: str, allowed: Sequence[str]) -> str:
        value = self.params.get(name, default)
        if value not in allowed:
            raise _Refused(error(400, f"{name} takes one of {', '.join(allowed)}, not {value}"))
        return value

    def _paged(self, items: Sequence[object], missing: str) -> Doc:
        size, number = self._size_number()
        count = math.ceil(len(items) / size)
        if number > count:  # nothing, or a page past the last: 404, as UTS answers
            return error(404, missing)
        return 200, page(list(items[(number - 1) * size : number * size]), number, count, size)

    # -- names and objects ---------------------------------------------------------------------

    def _concept_row(self, cui: str) -> FakeRow | None:
        """The row that names a concept (SPEC 12's rule, the local lookups' own)."""
        return concept_name_row(self.data.by_cui.get(cui, ()), _fields)

    def _concept_name(self, cui: str) -> str:
        row = self._concept_row(cui)
        return row.name if row is not None else NONE

    def _code_rows(self, sab: str, field: str, ident: str) -> list[FakeRow]:
        if field == "CODE":
            return self.data.by_code.get((sab, ident), [])
        return [r for r in self.data.rows if r.sab == sab and r.fields[COLUMN[field]] == ident]

    def _code_name(self, sab: str, field: str, ident: str) -> str:
        row = code_name_row(self._code_rows(sab, field, ident), _fields)
        return row.name if row is not None else NONE

    def _aui_link(self, aui: str) -> str:
        return f"{self.links.content}/AUI/{aui}"

    def _atom(self, row: FakeRow) -> dict[str, Any]:
        doc = atom_json(row.fields, self.links)
        for kind in HIERARCHY:  # a link where the fake has an answer for it (MRHIER)
            if self._relatives(row.aui, kind):
                doc[kind] = f"{self._aui_link(row.aui)}/{kind}"
        return doc

    def _concept(self, cui: str, rows: list[FakeRow]) -> dict[str, Any]:
        link = self.links.concept(cui)
        semnet = f"{self.links.base_url.rstrip('/')}/semantic-network/{self.links.release}"
        relations = self.data.relations_of_cui.get(cui, [])
        return {
            "classType": "Concept",
            "ui": cui,
            "suppressible": False,
            "dateAdded": "01-01-2099",
            "majorRevisionDate": "01-01-2099",
            "status": "R",
            "semanticTypes": [
                {"name": t.STY, "uri": f"{semnet}/TUI/{t.TUI}"}
                for t in self.data.types_of.get(cui, [])
            ],
            "atomCount": len(rows),
            "attributeCount": 0,
            "cvMemberCount": 0,
            "atoms": f"{link}/atoms",
            "definitions": f"{link}/definitions" if cui in self.data.definitions_of else NONE,
            "relations": f"{link}/relations" if relations else NONE,
            "defaultPreferredAtom": f"{link}/atoms/preferred",
            "relationCount": len(relations),
            "name": self._concept_name(cui),
        }

    # -- the routes ----------------------------------------------------------------------------

    def answer(self, parts: list[str]) -> Doc:
        """The answer to ``parts``, the path's segments after the release."""
        try:
            return self._answer(parts)
        except _Refused as refused:
            return refused.doc

    def _answer(self, parts: list[str]) -> Doc:
        top, rest = parts[0], parts[2:]
        if top == "search" and not rest:
            return self.search()
        if top == "crosswalk" and len(rest) == 3 and rest[0] == "source":
            return self.crosswalk(rest[1], rest[2])
        if top == "metadata" and rest == ["sources"]:
            return self.sources()
        if top == "semantic-network" and len(rest) == 2 and rest[0] == "TUI":
            return self.semantic_type(rest[1])
        if top == "content" and rest and rest[0] == "CUI" and len(rest) >= 2:
            return self.concept_route(rest[1], rest[2:])
        if top == "content" and rest and rest[0] == "AUI" and len(rest) in (2, 3):
            return self.atom_route(rest[1], rest[2:])
        if top == "content" and rest and rest[0] == "source" and len(rest) >= 3:
            return self.source_route(rest[1], rest[2], rest[3:])
        return error(404, "Not Found")

    def concept_route(self, cui: str, tail: list[str]) -> Doc:
        rows = self.data.by_cui.get(cui, [])
        if not tail:
            if not rows:
                return error(404, f"CUI {cui} not found")
            return 200, page(self._concept(cui, rows))
        if tail == ["atoms"]:
            return self.atoms(rows)
        if tail == ["atoms", "preferred"] and (named := self._concept_row(cui)) is not None:
            return 200, page(self._atom(named))
        if tail == ["definitions"]:
            sabs = self._set("sabs")
            found = [
                {"classType": "Definition", "sourceOriginated": True, "rootSource": d.SAB,
                 "value": d.DEF}
                for d in self.data.definitions_of.get(cui, [])
                if self.rule.counts(d.SUPPRESS) and (sabs is None or d.SAB in sabs)
            ]  # fmt: skip
            return self._paged(found, f"No definitions of CUI {cui}")
        if tail == ["relations"]:
            return self.relations(self.data.relations_of_cui.get(cui, []), f"CUI {cui}")
        return error(404, "Not Found")

    def atom_route(self, aui: str, tail: list[str]) -> Doc:
        row = self.data.by_aui.get(aui)
        if row is None:
            return error(404, f"AUI {aui} not found")
        if not tail:
            return 200, page(self._atom(row))
        if tail == ["relations"]:
            found = [r for r in self.data.relations_of_aui.get(aui, []) if r.STYPE2 == "AUI"]
            return self.relations(found, f"AUI {aui}")
        if tail[0] in HIERARCHY:
            relatives = [self.data.by_aui[a] for a in self._relatives(aui, tail[0])]
            return self._paged([self._atom(r) for r in relatives], f"No {tail[0]} of {aui}")
        return error(404, "Not Found")

    def source_route(self, sab: str, code: str, tail: list[str]) -> Doc:
        rows = self._known_code_rows(sab, code)
        if not tail:
            if not rows:
                return error(404, f"{sab} {code} not found")
            return 200, page(cluster_json(sab, code, [r.fields for r in rows], self.links))
        if tail == ["atoms"]:
            return self.atoms(rows)
        if tail == ["atoms", "preferred"] and (named := code_name_row(rows, _fields)) is not None:
            return 200, page(self._atom(named))
        if tail == ["relations"]:
            found = [
                rel
                for row in rows
                for rel in self.data.relations_of_aui.get(row.aui, [])
                if rel.STYPE2 in ("SCUI", "SDUI", "CODE") and row.fields[COLUMN[rel.STYPE2]] == code
            ]
            return self.relations(found, f"{sab} {code}")
        if len(tail) == 1 and tail[0] in HIERARCHY:
            return self.source_hierarchy(sab, code, rows, tail[0])
        return error(404, "Not Found")

    def atoms(self, rows: list[FakeRow]) -> Doc:
        size, number = self._size_number()
        sabs, ttys = self._set("sabs"), self._set("ttys")
        language = self.params.get("language")
        kept = [
            r
            for r in rows
            if (sabs is None or r.sab in sabs)
            and (ttys is None or r.tty in ttys)
            and (language is None or r.lat == language)
            and self.rule.counts(r.suppress)
        ]
        count = math.ceil(len(kept) / size)
        if number > count:  # no atom, or a page past the last: 404, as UTS answers
            return error(404, "No results")
        # Atoms come in no documented order: shuffle, the same way for every page of one query.
        query = "&".join(f"{k}={v}" for k, v in sorted(self.params.items()) if k != "pageNumber")
        random.Random(stable_hash(self.shuffle_seed, f"{self.path}?{query}")).shuffle(kept)
        shown = [self._atom(r) for r in kept[(number - 1) * size : number * size]]
        return 200, page(shown, number, count, size)

    # -- search and crosswalk ------------------------------------------------------------------

    def search(self) -> Doc:
        term = self.params.get("string", "")
        if not term:
            return error(400, "string is required")
        search_type = self._choice("searchType", "words", SEARCH_TYPES)
        input_type = self._choice("inputType", "atom", INPUT_TYPES)
        return_type = self._choice("returnIdType", "concept", RETURN_ID_TYPES)
        size, number = self._size_number()
        sabs, types = self._set("sabs"), self._set("semanticTypes", "|")
        folded = term.casefold()
        if input_type == "atom":
            partial = self.params.get("partialSearch") == "true"
            match = _matcher(search_type, term, partial)
            candidates: Iterable[tuple[FakeRow, str]] = (
                (row, name)
                for row, name, words in self.data.search_index.candidates(
                    search_type, term, partial
                )
                if match(name, words)
            )
        else:
            fields = {
                "code": ("CODE",), "sourceConcept": ("SCUI",), "sourceDescriptor": ("SDUI",),
                "sourceUi": ("CODE", "SCUI", "SDUI"), "tty": ("TTY",),
            }[input_type]  # fmt: skip
            candidates = (
                (row, folded)
                for row in self.data.rows
                if any(row.fields[COLUMN[f]] == term for f in fields)
            )
        found: dict[tuple[str, str], tuple[bool, dict[str, Any]]] = {}
        for row, name in candidates:
            if not self.rule.counts(row.suppress) or (sabs is not None and row.sab not in sabs):
                continue
            if types is not None and not self._typed(row.cui, types):
                continue
            for result in self._search_results(row, return_type):
                key = (result["rootSource"], result["ui"])
                exact = name == folded or found.get(key, (False,))[0]
                found[key] = (exact, found.get(key, (False, result))[1])
        ordered = [r for _, r in sorted(found.values(), key=lambda e: (not e[0], e[1]["ui"]))]
        shown = ordered[(number - 1) * size : number * size]
        if not shown and self.search_empty == "none":
            shown = [dict(_NO_RESULTS)]
        result = {"classType": "searchResults", "results": shown}
        return 200, {"pageSize": size, "pageNumber": number, "result": result}

    def _typed(self, cui: str, wanted: set[str]) -> bool:
        """Whether a concept has one of the semantic types ``wanted`` (a TUI, or a tree number:
        that type or one below it)."""
        return any(
            t.TUI in wanted or any(t.STN == w or t.STN.startswith(w + ".") for w in wanted)
            for t in self.data.types_of.get(cui, [])
        )

    def _search_results(self, row: FakeRow, return_type: str) -> Iterator[dict[str, Any]]:
        if return_type == "concept":
            named = self._concept_row(row.cui) or row  # (never None: ``row`` is one of them)
            yield search_result_json(row.cui, named.name, named.sab, self.links.concept(row.cui))
        elif return_type == "aui":
            yield search_result_json(row.aui, row.name, row.sab, self._aui_link(row.aui))
        else:
            field = {"sourceConcept": "SCUI", "sourceDescriptor": "SDUI"}.get(return_type, "CODE")
            ident = row.fields[COLUMN[field]]
            if known_code(ident):
                name = self._code_name(row.sab, field, ident)
                yield search_result_json(ident, name, row.sab, self.links.code(row.sab, ident))

    def crosswalk(self, sab: str, code: str) -> Doc:
        rows = self._known_code_rows(sab, code)
        if not any(self.rule.counts(r.suppress) for r in rows):
            return error(404, f"{sab} {code} not found")
        targets = self._set("targetSource") or ()
        codes = crosswalk_codes(
            sab, rows, self.data.by_cui.__getitem__, _fields, targets=targets, rule=self.rule
        )
        clusters = [self._cluster(s, c) for s, c in codes]
        return self._paged(clusters, f"No codes share a concept with {sab} {code}")

    def _known_code_rows(self, sab: str, code: str) -> list[FakeRow]:
        """The rows of a source code; none for one never known (SPEC 12)."""
        return self.data.by_code.get((sab, code), []) if known_code(code) else []

    def _cluster(self, sab: str, code: str) -> dict[str, Any]:
        """A code as a cluster of all its rows (SPEC 12)."""
        return cluster_json(
            sab, code, [r.fields for r in self.data.by_code[(sab, code)]], self.links
        )

    # -- relations and hierarchies -------------------------------------------------------------

    def relations(self, rows: Iterable[Mrrel], what: str) -> Doc:
        labels, extra = (
            self._set("includeRelationLabels"),
            self._set("includeAdditionalRelationLabels"),
        )
        sabs = self._set("sabs")
        found = [
            self._relation(rel)
            for rel in rows
            if self.rule.counts(rel.SUPPRESS)
            and (labels is None or rel.REL in labels)
            and (extra is None or rel.RELA in extra)
            and (sabs is None or rel.SAB in sabs)
        ]
        return self._paged(found, f"No relations of {what}")

    def _end(self, cui: str, aui: str, stype: str) -> tuple[str, str]:
        """The link and name of one end of an MRREL row."""
        if stype == "CUI":
            return self.links.concept(cui), self._concept_name(cui)
        row = self.data.by_aui.get(aui)
        if row is None:
            return NONE, NONE
        if stype == "AUI":
            return self._aui_link(aui), row.name
        field = stype if stype in ("SCUI", "SDUI") else "CODE"
        ident = row.fields[COLUMN[field]]
        return self.links.code(row.sab, ident), self._code_name(row.sab, field, ident)

    def _relation(self, rel: Mrrel) -> dict[str, Any]:
        kinds = {rel.STYPE1, rel.STYPE2}
        class_type = (
            "ConceptRelation" if kinds == {"CUI"}
            else "AtomRelation" if kinds == {"AUI"}
            else "AtomClusterRelation"
        )  # fmt: skip
        related_from, related_from_name = self._end(rel.CUI2, rel.AUI2, rel.STYPE2)
        related, related_name = self._end(rel.CUI1, rel.AUI1, rel.STYPE1)
        return {
            "ui": rel.RUI,
            "suppressible": rel.SUPPRESS in ("E", "Y"),
            "sourceUi": rel.SRUI or NONE,
            "obsolete": rel.SUPPRESS == "O",
            "sourceOriginated": rel.SAB != "MTH",
            "rootSource": rel.SAB,
            "groupId": rel.RG or NONE,
            "attributeCount": 0,
            "classType": class_type,
            "relatedFromId": related_from,
            "relatedFromIdName": related_from_name,
            "relationLabel": rel.REL,
            "additionalRelationLabel": rel.RELA,
            "relatedId": related,
            "relatedIdName": related_name,
        }

    def _relatives(self, aui: str, kind: str) -> list[str]:
        """The AUIs of an atom's parents, children, ancestors (from its parent up to the top)
        or descendants (level by level), in every context of MRHIER, each once."""
        hier = self.data.hierarchy_of
        if kind == "parents":
            found = [h.PAUI for h in hier.get(aui, []) if h.PAUI]
        elif kind == "ancestors":
            found = [a for h in hier.get(aui, []) for a in reversed(h.PTR.split(".")) if a]
        elif kind == "children":
            found = list(self.data.children_of.get(aui, []))
        else:
            found, level = [], [aui]
            while level:
                level = [c for a in level for c in self.data.children_of.get(a, [])
                         if c not in found and c != aui]  # fmt: skip
                found += dict.fromkeys(level)
        return [a for a in dict.fromkeys(found) if a in self.data.by_aui]

    def source_hierarchy(self, sab: str, code: str, rows: list[FakeRow], kind: str) -> Doc:
        relatives = [
            self.data.by_aui[a]
            for a in dict.fromkeys(a for r in rows for a in self._relatives(r.aui, kind))
        ]
        if sab.startswith("HL7"):  # UTS answers for HL7 codes with their atoms
            return self._paged([self._atom(r) for r in relatives], f"No {kind} of {sab} {code}")
        codes = dict.fromkeys((r.sab, r.code) for r in relatives if (r.sab, r.code) != (sab, code))
        clusters = [self._cluster(s, c) for s, c in codes]
        return self._paged(clusters, f"No {kind} of {sab} {code}")

    # -- the semantic network and the sources ---------------------------------------------------

    def semantic_type(self, tui: str) -> Doc:
        found = self.data.tuis.get(tui)
        if found is None:
            return error(404, f"TUI {tui} not found")
        children = {t.TUI for t in self.data.tuis.values() if t.STN.rpartition(".")[0] == found.STN}
        return 200, page(
            {
                "classType": "SemanticType",
                "abbreviation": NONE,
                "ui": tui,
                "definition": NONE,
                "example": NONE,
                "nonHuman": NONE,
                "usageNote": NONE,
                "treeNumber": found.STN,
                "semanticTypeGroup": NONE,
                "childCount": len(children),
                "name": found.STY,
            }
        )

    def sources(self) -> Doc:
        found = [
            {
                "classType": "RootSource",
                "abbreviation": s.RSAB,
                "expandedForm": s.SON,
                "family": s.SF,
                "language": {
                    "classType": "Language",
                    "abbreviation": s.LAT or NONE,
                    "expandedForm": _LANGUAGES.get(s.LAT, NONE),
                },
                "restrictionLevel": int(s.SRL) if s.SRL.isdigit() else 0,
                "acquisitionContact": NONE,
                "contentContact": NONE,
                "licenseContact": NONE,
                "contextType": s.CXTY or NONE,
                "shortName": s.SSN or s.RSAB,
                "hierarchicalName": NONE,
                "preferredName": s.SON,
                "synonymousNames": NONE,
            }
            for s in sorted(self.data.sources, key=lambda s: s.RSAB)
        ]
        return 200, page(found, 1, 1, len(found))


def _fields(row: FakeRow) -> Sequence[str]:
    return row.fields


def answer(
    data: FakeUtsData,
    path: str,
    params: Mapping[str, str],
    *,
    base_url: str,
    shuffle_seed: int = 0,
    search_empty: str = "none",
    max_page_size: int | None = None,
) -> Doc:
    """The status and JSON document of ``GET base_url + path?params`` (``apiKey`` left out)."""
    parts = [unquote(p) for p in path.split("/") if p]
    if len(parts) < 2:
        return error(404, "Not Found")
    release = parts[1]
    if release not in data.served and release != "current":
        return error(404, f"Release {release} is not available")
    links = Links(data.release if release == "current" else release, base_url)
    routes = Routes(data, path, params, links, shuffle_seed=shuffle_seed,
                    search_empty=search_empty, max_page_size=max_page_size)  # fmt: skip
    return routes.answer(parts)
