"""UTS's objects of an MRCONSO.RRF row, as UTS sends them, for the engine (SPEC 12)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tempmedbench_synonyms.constants import DEFAULT_BASE_URL
from tempmedbench_synonyms.mrconso.rows import COLUMN
from tempmedbench_synonyms.paths import seg

_CUI, _LAT, _AUI, _SCUI, _SDUI, _SAB, _TTY, _CODE, _STR, _SUPPRESS = (
    COLUMN[c]
    for c in ("CUI", "LAT", "AUI", "SCUI", "SDUI", "SAB", "TTY", "CODE", "STR", "SUPPRESS")
)
NONE = "NONE"


def known_code(code: str) -> bool:
    """Whether a CODE names a source code (SPEC 12: ``NOCODE`` and an empty CODE never do)."""
    return code not in ("", "NOCODE")


@dataclass(frozen=True, slots=True)
class Links:
    """The link URLs UTS puts in its answers, for one base URL and concrete release."""

    release: str
    base_url: str = DEFAULT_BASE_URL
    #: the root of most links, made once (an answer may hold thousands)
    content: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "content", f"{self.base_url.rstrip('/')}/content/{self.release}")

    def code(self, sab: str, code: str) -> str:
        return f"{self.content}/source/{sab}/{seg(code)}"

    def concept(self, cui: str) -> str:
        return f"{self.content}/CUI/{cui}"

    def aui(self, aui: str) -> str:
        return f"{self.content}/AUI/{aui}"

    def tui(self, tui: str) -> str:
        return f"{self.base_url.rstrip('/')}/semantic-network/{self.release}/TUI/{tui}"

    def search(self, code: str, sab: str) -> str:
        """The search UTS links a source code's concepts to (``concepts`` of a cluster)."""
        base = self.base_url.rstrip("/")
        return (
            f"{base}/search/{self.release}?string={seg(code)}&sabs={sab}"
            "&searchType=exact&inputType=sourceUi"
        )


def atom_json(fields: Sequence[str], links: Links) -> dict[str, Any]:
    """One MRCONSO row as UTS's ``Atom`` object."""
    sab, suppress = fields[_SAB], fields[_SUPPRESS]
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
        "attributes": NONE,  # (the files hold no attributes: SPEC 12)
        "parents": NONE,
        "ancestors": None,  # NLM's sample atom: "NONE" here and there, null for these two
        "children": NONE,
        "descendants": None,
        "relations": f"{links.aui(fields[_AUI])}/relations",
        "definitions": NONE,
        "name": fields[_STR],
        "language": fields[_LAT],
    }


def search_result_json(ui: str, name: str, root_source: str, uri: str | None) -> dict[str, Any]:
    return {"ui": ui, "rootSource": root_source, "uri": uri or NONE, "name": name}
