"""The concept index every SNOMED CT reader gives: one string a concept (Active, FSN and US
preferred term joined by tabs: one object a concept, not four), decoded on demand into a
``Concept``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import itemgetter
from typing import NamedTuple


class Concept(NamedTuple):
    """One concept of a release, as the index decodes it. "" stands for a missing term."""

    fsn: str
    us_pt: str
    active: bool


@dataclass(frozen=True, slots=True)
class SourceFile:
    path: str
    sha256: str | None
    member: str | None = None

    def as_dict(self) -> dict[str, str | None]:
        return {"path": self.path, "member": self.member, "sha256": self.sha256}


def encode_row(fsn: str, pt: str, active: bool) -> str:
    """The index's string for a concept read some other way than the GPS fast path."""
    return f"{'1' if active else '0'}\t{fsn}\t{pt}"


@dataclass(slots=True)
class ConceptIndex:
    """Every concept of a GPS or RF2 release, keyed by identifier, and where it was read from."""

    rows: dict[str, str]
    kind: str
    path: str
    release_date: str | None
    sha256: str | None
    files: list[SourceFile] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def get(self, concept_id: str) -> Concept | None:
        """The concept's ``(fsn, us_pt, active)``, or None when the release does not hold it."""
        row = self.rows.get(concept_id)
        if row is None:
            return None
        active, fsn, pt = row.split("\t", 2)
        return Concept(fsn, pt.rstrip("\r\n"), active == "1")

    def summary(self) -> dict[str, object]:
        """A JSON-ready description of the source, for reports."""
        # Each row starts with its status: one C pass over them, no Python code per row.
        active = list(map(itemgetter(0), self.rows.values())).count("1")
        return {
            "path": self.path,
            "kind": self.kind,
            "release_date": self.release_date,
            "sha256": self.sha256,
            "files": [f.as_dict() for f in self.files],
            "concepts": len(self.rows),
            "active_concepts": active,
            "notes": list(self.notes),
        }
