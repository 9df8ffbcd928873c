"""Invented data: MRCONSO.RRF rows, a release folder frozen from them, and its manifest.

Nothing here is UMLS content: the CUIs, AUIs, codes and names are made up.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tempmedbench_synonyms.errors import Outcome
from tempmedbench_synonyms.files import sha256_file
from tempmedbench_synonyms.mrconso.rows import MRCONSO_COLUMNS, split_row
from tempmedbench_synonyms.regen.canonical import table_bytes
from tempmedbench_synonyms.testing.data import FakeRow


def invented_rows(
    concepts: int,
    *,
    atoms_per_concept: int = 4,
    sab: str = "SNOMEDCT_US",
    first_cui: int = 9_000_001,
    first_aui: int = 90_000_001,
    seed: int = 0,
    atoms_of: Callable[[int], int] | None = None,
) -> Iterator[str]:
    """MRCONSO.RRF-format lines for invented concepts.

    Concept ``k``: CUI ``C{first_cui + k}``, code ``{1000000 + k}``, ``atoms_per_concept`` atoms
    of ``sab`` (``atoms_of(k)``): a PT, then SYs (the last of three or more suppressible), one MTH.
    """
    rng = random.Random(seed)
    words = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota")
    aui = first_aui
    for k in range(concepts):
        cui = f"C{first_cui + k:07d}"
        code = str(1_000_000 + k)
        stem = f"invented {rng.choice(words)} {rng.choice(words)} {k}"
        n = atoms_of(k) if atoms_of is not None else atoms_per_concept
        for j in range(n):
            tty = "PT" if j == 0 else "SY"
            suppress = "E" if j == n - 1 and j > 1 else "N"
            name = stem if j == 0 else f"{stem} variant {j}"
            yield mrconso_row(cui, f"A{aui:08d}", sab, tty, code, name, suppress=suppress)
            aui += 1
        yield mrconso_row(cui, f"A{aui:08d}", "MTH", "PN", "NOCODE", stem.title())
        aui += 1


@dataclass(frozen=True)
class InventedRelease:
    """A generated release folder and the invented MRCONSO.RRF it was frozen from."""

    folder: Path
    mrconso: Path
    concepts: int
    questions: int
    queries: int


def make_invented_release(
    root: Path,
    *,
    concepts: int,
    questions: int,
    seed: int = 0,
    atoms_of: Callable[[int], int] | None = None,
    release: str = "2099AA",
) -> InventedRelease:
    """Write an invented TempMedBench-style release under ``root``.

    ``root/MRCONSO.RRF`` holds ``invented_rows``; ``root/release`` is a release whose concepts use
    the three routes in turn, its ``expected_sha256.json`` frozen with this package's ``freeze``.
    """
    from tempmedbench_synonyms.mrconso.source import MrconsoSource
    from tempmedbench_synonyms.regen.freeze import freeze

    root = Path(root)
    folder = root / "release"
    for part in ("synonyms", "question_surface", "synonym_regeneration"):
        (folder / part).mkdir(parents=True, exist_ok=True)
    mrconso = root / "MRCONSO.RRF"
    lines = list(invented_rows(concepts, seed=seed, atoms_of=atoms_of))
    mrconso.write_text("".join(lines), encoding="utf-8", newline="")
    names: dict[int, str] = {}
    first_sy: dict[int, str] = {}
    for line in lines:
        row = FakeRow.from_fields(split_row(line, path=str(mrconso), line_no=0))
        k = int(row.cui[1:]) - 9_000_001
        if row.tty == "PT":
            names[k] = row.name
        elif row.tty == "SY" and k not in first_sy:
            first_sy[k] = row.aui
    entries: dict[str, dict[str, Any]] = {}
    for k in range(concepts):
        entry: dict[str, Any] = {"cui": f"C{9_000_001 + k:07d}", "sab": "SNOMEDCT_US"}
        route = ("source", "cui", "aui")[k % 3]
        entry["route"] = route
        if route == "source":
            entry["code"] = str(1_000_000 + k)
        if route == "aui":
            entry["aui"] = first_sy[k]
        entry["spans"] = {}
        entries[str(1_000_000 + k)] = entry
    surface_lines = []
    for q in range(questions):
        qid = f"q-{q:05d}"
        a = q % concepts
        b = (q * 7 + 3) % concepts
        first = names[a] if q % 2 else names[a].capitalize()
        text = f"{first} was recorded"
        spans = [(a, 0, len(first))]
        if b != a:
            text += " before "
            spans.append((b, len(text), len(text) + len(names[b])))
            text += names[b]
        text += "?"
        for k, start, end in spans:
            entries[str(1_000_000 + k)]["spans"][qid] = [[start, end]]
        obj = {"qid": qid, "question_surface": text, "surface": "anchored"}
        surface_lines.append(json.dumps(obj, ensure_ascii=False, sort_keys=True) + "\n")
    table = {
        "format_version": 1,
        "umls_release": release,
        "language": "ENG",
        "generator": "invented by tempmedbench_synonyms.testing.make_invented_release",
        "concepts": entries,
    }
    (folder / "synonyms" / "synonym_table_kept.json").write_bytes(table_bytes(table))
    (folder / "question_surface" / "question_surface.jsonl").write_text(
        "".join(surface_lines), encoding="utf-8"
    )
    (folder / "README.md").write_text(
        "Invented data for tests and benchmarks: no UMLS content.\n", encoding="utf-8"
    )
    write_manifest(folder)
    report = freeze(folder, MrconsoSource(mrconso), update_manifest=True)
    if report.outcome is not Outcome.VERIFIED:
        raise RuntimeError(f"could not freeze the invented release: {report.message}")
    unique = {(e["route"], e.get("code") or e.get("aui") or e["cui"]) for e in entries.values()}
    return InventedRelease(folder, mrconso, concepts, questions, len(unique))


def mrconso_row(
    cui: str,
    aui: str,
    sab: str,
    tty: str,
    code: str,
    name: str,
    *,
    lat: str = "ENG",
    suppress: str = "N",
    ts: str = "P",
    lui: str | None = None,
    sui: str | None = None,
    sdui: str = "",
    cvf: str = "",
    end: str = "\n",
) -> str:
    """One MRCONSO.RRF line: the 18 fields joined by ``|``, a trailing ``|``, then ``end``."""
    fields = dict.fromkeys(MRCONSO_COLUMNS, "")
    fields.update(
        CUI=cui, LAT=lat, TS=ts, LUI=lui if lui is not None else "L" + cui[1:], STT="PF",
        SUI=sui if sui is not None else "S" + aui[1:], ISPREF="Y", AUI=aui, SCUI=code, SDUI=sdui,
        SAB=sab, TTY=tty, CODE=code, STR=name, SRL="0", SUPPRESS=suppress, CVF=cvf,
    )  # fmt: skip
    return "|".join(fields[c] for c in MRCONSO_COLUMNS) + "|" + end


def write_manifest(folder: Path, *, leave_out: Callable[[str], bool] = lambda rel: False) -> None:
    """Write the release ``folder``'s ``MANIFEST.sha256`` (SPEC section 1), leaving out itself
    and each path ``leave_out`` is true for."""
    lines = []
    for path in sorted(p for p in Path(folder).rglob("*") if p.is_file()):
        rel = path.relative_to(folder).as_posix()
        if rel != "MANIFEST.sha256" and not leave_out(rel):
            lines.append(f"{sha256_file(path)}  {rel}\n")
    (Path(folder) / "MANIFEST.sha256").write_text("".join(lines), encoding="utf-8")
