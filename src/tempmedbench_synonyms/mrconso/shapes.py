"""The meaning of an MRCONSO.RRF row (SPEC 12), once, for the local lookups and the fake alike.

Which rows count is the lookup's rule (``lookups.Rows``); here: which codes are known
(``known_code``), which codes a crosswalk gives (``crosswalk_codes``), the row that names a code
(``code_name_row``) or a concept (``concept_name_row``), and a row as the JSON object UTS sends
for it (``atom_json``, ``cluster_json``, ``search_result_json``), with UTS's links (``Links``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import quote

from tempmedbench_synonyms.constants import DEFAULT_BASE_URL
from tempmedbench_synonyms.lookups import COUNTED, Rows
from tempmedbench_synonyms.mrconso.rows import COLUMN

_CUI, _LAT, _TS, _STT, _ISPREF, _AUI, _SCUI, _SDUI, _SAB, _TTY, _CODE, _STR, _SUPPRESS = (
    COLUMN[c]
    for c in (
        "CUI", "LAT", "TS", "STT", "ISPREF", "AUI", "SCUI", "SDUI", "SAB", "TTY", "CODE", "STR",
        "SUPPRESS",
    )
)  # fmt: skip
NONE = "NONE"


def known_code(code: str) -> bool:
    """Whether a CODE names a source code (SPEC 12: ``NOCODE`` and an empty CODE never do)."""
    return code not in ("", "NOCODE")


def name_order(fields: Sequence[str]) -> tuple[bool | str, ...]:
    """The sort key that puts first the atom whose string names its source code (SPEC 11)."""
    return (
        fields[_SUPPRESS] != "N",
        fields[_LAT] != "ENG",
        fields[_TTY] != "PT",
        fields[_ISPREF] != "Y",
        fields[_TS] != "P",
        fields[_STT] != "PF",
        fields[_AUI],
    )


_Row = TypeVar("_Row")


def code_name_row(rows: Iterable[_Row], fields: Callable[[_Row], Sequence[str]]) -> _Row | None:
    """The row that names a source code (or an SCUI, an SDUI), ``None`` for no rows: the first
    of all its ``rows`` in ``name_order`` (SPEC 12); ``fields`` gives a row's 18 fields."""
    return min(rows, key=lambda r: name_order(fields(r)), default=None)


def concept_name_row(rows: Iterable[_Row], fields: Callable[[_Row], Sequence[str]]) -> _Row | None:
    """The row that names a concept, ``None`` for no rows (SPEC 12): among all its ``rows``, in
    file order and whatever their SUPPRESS, the first with LAT ``ENG``, TS ``P``, STT ``PF`` and
    ISPREF ``Y``; else the first with LAT ``ENG``, TS ``P`` and ISPREF ``Y``; else the first.
    It names the concept in a concept, a search and a relation, gives their ``rootSource``, and
    is the concept's preferred atom; ``fields`` gives a row's 18 fields."""
    first: _Row | None = None
    preferred: _Row | None = None  # the first English preferred row without STT PF
    for row in rows:
        f = fields(row)
        if (f[_LAT], f[_TS], f[_ISPREF]) == ("ENG", "P", "Y"):
            if f[_STT] == "PF":
                return row
            if preferred is None:
                preferred = row
        if first is None:
            first = row
    return preferred if preferred is not None else first


def crosswalk_codes(
    sab: str,
    rows: Iterable[_Row],
    concept_rows: Callable[[str], Iterable[_Row]],
    fields: Callable[[_Row], Sequence[str]],
    *,
    targets: Iterable[str] = (),
    rule: Rows = COUNTED,
) -> list[tuple[str, str]]:
    """A crosswalk's codes (SPEC 12): every known code of another source than ``sab`` with a
    counted atom in a concept where ``rows`` (the asked code's) have a counted atom; only those
    of ``targets`` when given; by source, then code. ``concept_rows`` gives a concept's rows,
    ``rule`` which rows count (default: ``N`` only)."""
    wanted = set(targets)
    cuis = {f[_CUI] for f in map(fields, rows) if rule.counts(f[_SUPPRESS], f[_LAT])}
    found = (fields(r) for cui in cuis for r in concept_rows(cui))
    return sorted(
        {
            (f[_SAB], f[_CODE])
            for f in found
            if f[_SAB] != sab
            and known_code(f[_CODE])
            and rule.counts(f[_SUPPRESS], f[_LAT])
            and (not wanted or f[_SAB] in wanted)
        }
    )


@dataclass(frozen=True, slots=True)
class Links:
    """The link URLs UTS puts in its answers, for one base URL and concrete release."""

    release: str
    base_url: str = DEFAULT_BASE_URL

    @property
    def content(self) -> str:
        return f"{self.base_url.rstrip('/')}/content/{self.release}"

    def code(self, sab: str, code: str) -> str:
        return f"{self.content}/source/{sab}/{quote(code, safe='')}"

    def concept(self, cui: str) -> str:
        return f"{self.content}/CUI/{cui}"

    def aui(self, aui: str) -> str:
        return f"{self.content}/AUI/{aui}"

    @property
    def semantic_network(self) -> str:
        return f"{self.base_url.rstrip('/')}/semantic-network/{self.release}"

    def tui(self, tui: str) -> str:
        return f"{self.semantic_network}/TUI/{tui}"

    def search(self, code: str, sab: str) -> str:
        """The search UTS links a source code's concepts to (``concepts`` of a cluster)."""
        base = self.base_url.rstrip("/")
        return (
            f"{base}/search/{self.release}?string={quote(code, safe='')}&sabs={sab}"
            "&searchType=exact&inputType=sourceUi"
        )


def atom_json(fields: Sequence[str], links: Links) -> dict[str, Any]:
    """One MRCONSO row as UTS's ``Atom`` object."""
    sab, suppress = fields[_SAB], fields[_SUPPRESS]
    aui = f"{links.content}/AUI/{fields[_AUI]}"
    return {
        "classType": "Atom",
        "ui": fields[_AUI],
        "suppressible": "true" if suppress in ("E", "Y") else "false",
        "obsolete": "true" if suppress == "O" else "false",
        "rootSource": sab,
        "termType": fields[_TTY],
        "code": links.code(sab, fields[_CODE]),
        "concept": links.concept(fields[_CUI]),
        "sourceConcept": links.code(sab, fields[_SCUI]) if fields[_SCUI] else NONE,
        "sourceDescriptor": links.code(sab, fields[_SDUI]) if fields[_SDUI] else NONE,
        "attributes": f"{aui}/attributes",
        "parents": NONE,
        "ancestors": None,  # NLM's sample atom: "NONE" here and there, null for these two
        "children": NONE,
        "descendants": None,
        "relations": f"{aui}/relations",
        "definitions": NONE,
        "name": fields[_STR],
        "language": fields[_LAT],
    }


def cluster_json(
    sab: str, code: str, rows: Iterable[Sequence[str]], links: Links
) -> dict[str, Any]:
    """A source code as UTS's ``SourceAtomCluster`` object (``/content/.../source/{sab}/{code}``,
    a crosswalk's results), from its rows (at least one); named by ``code_name_row``."""
    ordered = list(rows)
    first = code_name_row(ordered, _fields)
    assert first is not None, "a source code has at least one row"
    obsolete = all(r[_SUPPRESS] == "O" for r in ordered)
    at = links.code(sab, code)
    return {
        "classType": "SourceAtomCluster",
        "ui": code,
        "suppressible": not obsolete and all(r[_SUPPRESS] in ("O", "E", "Y") for r in ordered),
        "obsolete": obsolete,
        "rootSource": sab,
        "atomCount": len(ordered),
        "cVMemberCount": 0,
        "attributes": f"{at}/attributes",
        "atoms": f"{at}/atoms",
        "descendants": f"{at}/descendants",
        "ancestors": f"{at}/ancestors",
        "parents": f"{at}/parents",
        "children": f"{at}/children",
        "relations": f"{at}/relations",
        "definitions": NONE,
        "concepts": links.search(code, sab),
        "defaultPreferredAtom": f"{at}/atoms/preferred",
        "name": first[_STR],
    }


def _fields(row: Sequence[str]) -> Sequence[str]:
    return row


def search_result_json(ui: str, name: str, root_source: str, uri: str | None) -> dict[str, Any]:
    """One result of ``/search``: ``ui``, ``rootSource``, ``uri``, ``name``."""
    return {"ui": ui, "rootSource": root_source, "uri": uri or NONE, "name": name}
