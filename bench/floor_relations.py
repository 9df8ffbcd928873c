"""The bare floor of 1,000 relations from an index (not a test: ``bench_local_index.py`` runs it
and prints its time beside ``umls relations``).

    python bench/floor_relations.py INDEX_DIR INPUTS

It imports nothing of the package: one connection to the index's MRCONSO and MRREL files, and
for each CUI of INPUTS only the reads SPEC 12 makes unavoidable for a relations answer, through
the indexes the build made: the MRREL rows whose CUI2 is the concept (the counted ones, by RUI,
one more than ``--limit`` keeps), and only if there are any (none is ``not_found``, whether
MRCONSO holds the concept or not: SPEC 11), the MRCONSO rows of the atoms on their sides, the
name of each source code a side names (its first row by SPEC 12's order), the names of the
concepts on the sides and of the concept itself (one MRCONSO lacks is ``not_found``, even where
MRREL holds rows for it: SPEC 12); then one JSON line an input holding the outcome and each
relation's fields (UTS's keys, sorted), as the command prints. It skips
what the command adds: checks of the input, the answer's envelope, the links' URLs, cleaning,
options. The benchmark compares its run of 1,000 less its run of one (each run's fixed costs
out: Python's start, the connection) with the same figure of the command.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from contextlib import closing
from pathlib import Path

#: SPEC 12's order that names a source code: its first row by these.
CODE_ORDER = (
    "suppress <> 'N', lat <> 'ENG', tty <> 'PT', ispref <> 'Y', ts <> 'P', stt <> 'PF', aui"
)
#: ``--limit``'s default for relations (SPEC 11): one more row read says the answer was cut.
LIMIT = 1000
COUNTED = "suppress NOT IN ('O', 'E', 'Y')"
IN = "(SELECT value FROM json_each(?))"
SAB, CODE = "json_extract(j.value, '$[0]')", "json_extract(j.value, '$[1]')"


def connect(index: Path) -> sqlite3.Connection:
    (mrconso,) = index.glob("MRCONSO.*.sqlite")
    (mrrel,) = index.glob("MRREL.*.sqlite")
    db = sqlite3.connect(f"file:{mrconso}?mode=ro", uri=True)
    db.execute("ATTACH ? AS rel", (f"file:{mrrel}?mode=ro",))
    for schema in ("main", "rel"):
        db.execute(f"PRAGMA {schema}.mmap_size = {1 << 40}")
    return db


def relations(db: sqlite3.Connection, cui: str) -> tuple[list[dict[str, object]], bool] | None:
    """The relations of ``cui`` (at most ``LIMIT``) and whether more were cut; ``None`` when
    there are none (``not_found``: a concept without relations, or one MRCONSO lacks)."""
    rows = db.execute(
        "SELECT cui1, aui1, stype1, rel, cui2, aui2, stype2, rela, rui, srui, sab, rg, suppress "
        f"FROM mrrel WHERE cui2 = ? AND {COUNTED} ORDER BY rui LIMIT ?",
        (cui, LIMIT + 1),
    ).fetchall()
    if not rows:
        return None
    rows, cut = rows[:LIMIT], len(rows) > LIMIT
    sides = {(r[0], r[1], r[2]) for r in rows} | {(r[4], r[5], r[6]) for r in rows}
    atoms = {
        aui: (sab, code, name)
        for aui, sab, code, name in db.execute(
            f"SELECT aui, sab, code, str FROM mrconso WHERE aui IN {IN}",
            (json.dumps([aui for _, aui, stype in sides if aui and stype != "CUI"]),),
        )
    }
    codes = {
        atoms[aui][:2]
        for _, aui, stype in sides
        if stype not in ("CUI", "AUI") and aui in atoms and atoms[aui][1] not in ("", "NOCODE")
    }
    code_names = {
        (sab, code): name
        for sab, code, name in db.execute(
            f"SELECT {SAB}, {CODE}, (SELECT str FROM mrconso WHERE code = {CODE} AND sab = {SAB} "
            f"ORDER BY {CODE_ORDER} LIMIT 1) FROM json_each(?) j",
            (json.dumps(sorted(codes)),),
        )
    }
    concepts = {cui} | {c for c, _, stype in sides if stype == "CUI"}
    names = dict(
        db.execute(
            f"SELECT cui, str FROM mrconso_names WHERE cui IN {IN}", (json.dumps(sorted(concepts)),)
        ).fetchall()
    )
    if cui not in names:
        return None

    def name(side: tuple[str, str, str]) -> object:
        concept, aui, stype = side
        if stype == "CUI" or not aui:
            return names.get(concept)
        atom = atoms.get(aui)
        if atom is None:
            return None
        return atom[2] if stype == "AUI" else code_names.get(atom[:2], atom[2])

    return [
        {
            "ui": rui,
            "suppressible": flag in ("E", "Y"),
            "sourceUi": srui or None,
            "obsolete": flag == "O",
            "sourceOriginated": sab != "MTH",
            "rootSource": sab,
            "groupId": rg or None,
            "attributeCount": 0,
            "classType": stype1 + stype2,
            "relatedFromId": aui2 or cui2,
            "relatedFromIdName": name((cui2, aui2, stype2)),
            "relationLabel": rel,
            "additionalRelationLabel": rela,
            "relatedId": aui1 or cui1,
            "relatedIdName": name((cui1, aui1, stype1)),
        }
        for cui1, aui1, stype1, rel, cui2, aui2, stype2, rela, rui, srui, sab, rg, flag in rows
    ], cut


def main() -> None:
    index, inputs = Path(sys.argv[1]), Path(sys.argv[2])
    write = sys.stdout.write
    with closing(connect(index)) as db:
        for cui in inputs.read_text(encoding="utf-8").split():
            found, cut = relations(db, cui) or ([], False)
            outcome = "found" if found else "not_found"
            answer = {"input": cui, "outcome": outcome, "results": found, "truncated": cut}
            write(json.dumps(answer, sort_keys=True, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
