"""The synonym choice: which candidate atom a concept keeps (SPEC section 3), whatever the order
the atoms arrive in."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from tempmedbench_synonyms.atoms import Atom
from tempmedbench_synonyms.regen.release import ConceptEntry


def norm(s: str) -> str:
    """Case-folded, whitespace-collapsed form used to drop synonyms equal to the span text."""
    return " ".join(s.casefold().split())


def rank(tty: str) -> int:
    return {"PT": 0, "SY": 1}.get(tty, 2)


@dataclass(frozen=True)
class Choice:
    """The kept atom, or ``None`` with the reason the concept drifted."""

    atom: Atom | None
    reason: str = ""


def choose(entry: ConceptEntry, atoms: Iterable[Atom] | None, span_texts: Iterable[str]) -> Choice:
    if atoms is None:
        what = {"source": f"{entry.sab} code {entry.code}", "cui": f"{entry.cui} in {entry.sab}",
                "aui": f"atom {entry.aui}"}[entry.route]  # fmt: skip
        return Choice(None, f"not found: {what}")
    atoms = list(atoms)
    if entry.route == "aui":
        wrong_cui = [a for a in atoms if a.cui != entry.cui]
        if atoms and len(wrong_cui) == len(atoms):
            now = wrong_cui[0].cui
            where = f"now belongs to {now}, not" if now else "has no concept link; the entry names"
            return Choice(None, f"atom {entry.aui} {where} {entry.cui}")
        atoms = [a for a in atoms if a.cui == entry.cui]
    candidates = [a for a in atoms if a.sab == entry.sab and a.language == "ENG" and a.usable]
    pinned = entry.pinned_aui
    if pinned is not None:
        for atom in candidates:
            if atom.aui == pinned:
                return Choice(atom)
        if any(a.aui == pinned for a in atoms):
            return Choice(None, f"atom {pinned} is no longer usable (obsolete, suppressible, "
                                "another source or language)")  # fmt: skip
        return Choice(None, f"atom {pinned} is not among the {len(candidates)} candidates")
    excluded = {norm(t) for t in span_texts}
    remaining = [a for a in candidates if norm(a.name) not in excluded]
    if not remaining:
        return Choice(None, f"no candidate left ({len(candidates)} candidates, all excluded)"
                      if candidates else "no candidate atom")  # fmt: skip
    best = min(remaining, key=lambda a: (rank(a.tty), a.tty, norm(a.name), a.name, a.aui))
    return Choice(best)
