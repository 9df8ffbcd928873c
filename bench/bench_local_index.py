"""Benchmark the local UMLS's index (SPEC 12 "Speed", issue 24) on an invented META (not a test:
it prints numbers).

    python bench/bench_local_index.py [--scale 1.0] [--keep DIR] [--no-rest] [--seed 24]

It generates, deterministically from ``--seed``, a META folder shaped like a full release
(``generate_meta``; under ``--keep``, reused when there, else in a temporary folder under
``bench/out/`` removed at the end): 2,000,000 MRCONSO rows in ``bench_mrconso.SOURCES``'s mix
of sources and languages, sorted by CUI, about three atoms a concept, codes shared across
concepts as SNOMED CT, ICD and MeSH share them, strings of Zipf-distributed invented words;
4,000,000 MRREL rows (each relation and its inverse: concept, atom and source-code level, sorted
by CUI1), 666,666 MRSTY rows (one a concept, an invented network of 37 types), 100,000 MRDEF
rows, 1,000,000 MRHIER rows (trees of a few levels) and an MRSAB. ``--scale`` multiplies every
count (0.05 for a quick run). Every id, string and name is invented.

Then it times, and prints with the core count:

* the floor: the ``sqlite3`` shell's ``.import`` of the same files into bare tables;
* ``umls index META --json`` (a fresh index): seconds and their ratio to the floor (target: at
  most 3x), the peak memory of the build (target: under 300 MB), the index's bytes against the
  files' (target: under 2x);
* 1,000 crosswalks, exact searches, one-word searches, definitions and relations, each one whole
  ``umls ... --meta META --file F --json`` run, best of 3, against the bare import of the CLI
  (best of 5): ms an input over the import (targets: 0.2 ms; word searches 0.5 ms), and the
  same run of its first input alone (what each further input costs); for relations, the bare
  loop of ``floor_relations.py`` (the same answers' reads and JSON, without the package);
* unless ``--no-rest``: the same 1,000 crosswalks over REST against the fake UTS on 127.0.0.1
  (150 ms an answer, ``--rate 15``: about 70 s), served from the rows they need, and whether
  their answers are the index's.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from array import array
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_mrconso import SOURCES

#: Rows of each file at --scale 1 (SPEC 12 "Speed"); MRSTY's count is the concepts'.
ROWS = {"MRCONSO": 2_000_000, "MRREL": 4_000_000, "MRSTY": 666_666, "MRDEF": 100_000,
        "MRHIER": 1_000_000}  # fmt: skip
FILES = ("MRCONSO", "MRDEF", "MRREL", "MRSTY", "MRHIER", "MRSAB")
# How each source's codes look and behave: (kind, share): ``share`` is the chance that a concept's
# atom of that source takes a code another concept already has (ICD and MeSH codes span concepts).
KINDS = {
    "SNOMEDCT_US": ("sct", 0.04), "SCTSPA": ("sct", 0.04), "LNC": ("lnc", 0.02),
    "LNC-DE-DE": ("lnc", 0.02), "LNC-ZH-CN": ("lnc", 0.02), "RXNORM": ("num", 0.02),
    "MTH": ("nocode", 0.0), "HL7V3.0": ("hl7", 0.0), "MSH": ("msh", 0.25),
    "MSHGER": ("msh", 0.25), "MSHFRE": ("msh", 0.25), "MSHPOR": ("msh", 0.25),
    "NCI": ("nci", 0.03), "ICD10CM": ("icd", 0.35),
    "HPO": ("hpo", 0.02), "GO": ("go", 0.02), "CHV": ("chv", 0.05),
}  # fmt: skip
TTYS = {  # the first atom of a code's, then the others'
    "sct": ("PT", ("FN", "SY", "SY")), "lnc": ("LN", ("LC", "OSN", "LPN")),
    "msh": ("MH", ("ET", "PM", "ENTRY")), "nocode": ("PN", ("PN",)), "icd": ("PT", ("AB", "ET")),
    "num": ("PT", ("SY", "LLT")), "nci": ("PT", ("SY",)), "hpo": ("PT", ("SY",)),
    "go": ("PT", ("SY", "ET")), "chv": ("PT", ("SY",)), "hl7": ("CSY", ("CDO",)),
}  # fmt: skip
STYPE = {"sct": "SCUI", "nci": "SCUI", "hpo": "SCUI", "go": "SCUI", "chv": "SCUI", "num": "SCUI",
         "msh": "SDUI", "lnc": "CODE", "icd": "CODE", "hl7": "CODE"}  # fmt: skip
SRL = {"SNOMEDCT_US": "9", "SCTSPA": "9", "MDR": "3", "MDRSPA": "3", "MDRJPN": "3",
       "MDRFRE": "3", "MDRITA": "3", "MEDCIN": "3", "LNC": "0"}  # fmt: skip
# Letters of each language's invented words (the Latin ones weighted as in English text).
LATIN = (
    "eeeeeeeeeeeettttttttaaaaaaaooooooiiiiiinnnnnnsssssshhhhhrrrrrddddlllluuucccmmmwwffggyypbvkjxqz"
)
LETTERS = {"ENG": LATIN, "SPA": LATIN + "áéíóúñ", "POR": LATIN + "ãçéõá", "ITA": LATIN + "àèéìò",
           "FRE": LATIN + "éèàçêô", "GER": LATIN + "äöüßäöü",
           "JPN": "".join(map(chr, [*range(0x3041, 0x3097), *range(0x4E00, 0x4F00)])),
           "CHI": "".join(map(chr, range(0x4E00, 0x5200)))}  # fmt: skip
SPACELESS = ("JPN", "CHI")  # a string of these is its words with no space between them
WORD_COUNTS = range(1, 15)  # words a string (mean about 4.8), as MRCONSO's strings have
WORD_WEIGHTS = (6, 14, 16, 14, 11, 9, 7, 6, 4, 3, 3, 2, 2, 2)
SUPPRESS = ("N", "O", "E", "Y")
SUPPRESS_WEIGHTS = (93, 4, 2, 1)
# Relations: (REL, inverse REL, [(RELA, inverse RELA), ...]) and their weights.
RELS = [
    ("PAR", "CHD", [("isa", "inverse_isa"), ("", "")], 40),
    ("RO", "RO", [("has_finding_site", "finding_site_of"), ("has_active_ingredient",
     "active_ingredient_of"), ("associated_with", "associated_with"), ("", "")], 30),
    ("RB", "RN", [("", ""), ("has_member", "member_of")], 15),
    ("SIB", "SIB", [("", "")], 10),
    ("SY", "SY", [("", ""), ("translation_of", "has_translation")], 3),
    ("RQ", "RQ", [("classified_as", "classifies"), ("", "")], 2),
]  # fmt: skip
BIJECT = 7_919_011  # prime to 2, 3 and 5: ``n * BIJECT % M`` is one-to-one below M = 2^a 3^b 5^c


def code_of(kind: str, n: int) -> str:
    """The ``n``-th code of a source of ``kind`` (distinct for distinct ``n``)."""
    if kind == "sct":
        return f"{10_000_000 + n * BIJECT % 90_000_000}00{n % 10}"
    if kind == "lnc":
        return f"{100_000 + n * BIJECT % 900_000}-{n % 10}"
    if kind == "msh":
        return f"D{100_000 + n * BIJECT % 900_000:06d}"
    if kind == "nci":
        return f"C{100_000 + n * BIJECT % 900_000}"
    if kind == "icd":
        return f"{chr(65 + n % 26)}{n // 26 % 100:02d}.{n // 2600}"
    if kind == "hpo":
        return f"HP:{n * BIJECT % 10_000_000:07d}"
    if kind == "go":
        return f"GO:{n * BIJECT % 10_000_000:07d}"
    if kind == "chv":
        return f"{n * BIJECT % 9_000_000_000:010d}"
    if kind == "hl7":
        return f"V3-{n:05d}"
    if kind == "nocode":
        return "NOCODE"
    return f"{1_000_000 + n * BIJECT % 9_000_000}"


def aui_of(row: int) -> str:
    return f"A{10_000_000 + row * BIJECT % 90_000_000}"


def vocabulary(rng: random.Random, lat: str, size: int) -> list[str]:
    """``size`` distinct invented words of language ``lat`` (3 to 12 letters; CJK: 1 to 4)."""
    letters = LETTERS[lat]
    short = lat in SPACELESS
    words: dict[str, None] = {}
    while len(words) < size:
        k = rng.randint(1, 4) if short else rng.choice((3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 9, 10, 12))
        words["".join(rng.choices(letters, k=k))] = None
    return list(words)


class Meta:
    """What the generator remembers of the MRCONSO rows it wrote, to relate them: each row's
    concept, source, code, SUPPRESS and whether it is its code's first atom in the concept."""

    def __init__(self) -> None:
        self.concept_of = array("i")  # row -> concept
        self.sab_of = bytearray()  # row -> index in SOURCES
        self.code_of: list[str] = []  # row -> CODE
        self.suppress_of = bytearray()  # row -> index in SUPPRESS
        self.code_first = bytearray()  # row -> 1 for the first atom of its (concept, code)
        self.cui_of: list[str] = []  # concept -> CUI
        self.first_row = array("i")  # concept -> its first row


def write_lines(path: Path, lines: Iterator[str]) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        batch: list[str] = []
        for line in lines:
            batch.append(line)
            if len(batch) >= 50_000:
                f.write("".join(batch))
                batch.clear()
        f.write("".join(batch))


def mrconso(rng: random.Random, rows: int, concepts: int, meta: Meta) -> Iterator[str]:
    concepts = min(concepts, rows)
    lats = sorted({lat for _, lat, _ in SOURCES})
    sizes = {lat: max(500, int((150_000 if lat == "ENG" else 30_000) * rows / 2e6)) for lat in lats}
    vocab = {lat: vocabulary(rng, lat, sizes[lat]) for lat in lats}
    cum = {}
    for lat in lats:  # Zipf: the word of rank r weighs 1 / (r + 10)
        total, acc = 0.0, []
        for r in range(len(vocab[lat])):
            total += 1 / (r + 10)
            acc.append(total)
        cum[lat] = acc
    # atoms a concept: 1 to 20, mean about 3; the total adjusted to ``rows`` exactly
    sizes_of = rng.choices(
        (1, 2, 3, 4, 5, 6, 8, 12, 20), (30, 25, 15, 10, 7, 5, 4, 3, 1), k=concepts
    )
    diff = rows - sum(sizes_of)
    while diff:
        c = rng.randrange(concepts)
        if diff > 0 or sizes_of[c] > 1:
            step = 1 if diff > 0 else -1
            sizes_of[c] += step
            diff -= step
    sab_idx = rng.choices(range(len(SOURCES)), [w for *_, w in SOURCES], k=rows)
    sup_idx = rng.choices(range(4), SUPPRESS_WEIGHTS, k=rows)
    nwords = rng.choices(WORD_COUNTS, WORD_WEIGHTS, k=rows)
    need = Counter()
    for i in range(rows):
        need[SOURCES[sab_idx[i]][1]] += nwords[i]
    drawn = {lat: rng.choices(vocab[lat], cum_weights=cum[lat], k=need[lat]) for lat in lats}
    at = dict.fromkeys(lats, 0)
    kinds = [KINDS.get(sab, ("num", 0.05)) for sab, _, _ in SOURCES]
    issued: list[list[str]] = [[] for _ in SOURCES]  # each source's codes so far
    seq = [0] * len(SOURCES)
    tags = vocab["ENG"][50:90]  # SNOMED CT's FNs end with a semantic tag: invented ones
    rand, randrange = rng.random, rng.randrange
    cui_n, sui, lui, row, scui_n = 5, 0, 0, 0, 0
    for c in range(concepts):
        cui_n += 1 + randrange(12)
        cui = f"C{cui_n:07d}"
        meta.cui_of.append(cui)
        meta.first_row.append(row)
        atoms = sorted(range(row, row + sizes_of[c]), key=lambda i: SOURCES[sab_idx[i]][1] != "ENG")
        codes: dict[int, str] = {}
        scui_n += 1
        eng_first = True
        for j, i in enumerate(atoms):
            s = sab_idx[i]
            sab, lat, _ = SOURCES[s]
            kind, share = kinds[s]
            first_of_code = s not in codes or rand() < 0.15
            if first_of_code:
                if issued[s] and rand() < share:
                    code = issued[s][randrange(len(issued[s]))]
                else:
                    code = code_of(kind, seq[s])
                    seq[s] += 1
                    issued[s].append(code)
                codes[s] = code
            code = codes[s]
            pos, k = at[lat], nwords[i]
            at[lat] = pos + k
            words = drawn[lat][pos : pos + k]
            if lat in SPACELESS:
                text = "".join(words)
            else:
                r = rand()
                if r < 0.35:
                    words[0] = words[0].capitalize()
                elif r < 0.4:
                    words.append(str(randrange(1, 500)))
                elif r < 0.45 and k > 2:
                    words[0] += ","
                text = " ".join(words)
            tty = TTYS[kind][0] if first_of_code else rng.choice(TTYS[kind][1])
            if tty == "FN":
                text += f" ({tags[randrange(40)]})"
            pref = lat == "ENG" and eng_first
            eng_first = eng_first and not pref
            sui += 1
            if rand() < 0.8:
                lui += 1
            sup = sup_idx[i] if not pref else 0
            scui = code if kind in ("sct", "nci", "hpo", "go", "chv", "num") else ""
            if kind == "msh":
                scui = f"M{1_000_000 + scui_n * BIJECT % 9_000_000:07d}"
            saui = str(100_000_000 + row * BIJECT % 900_000_000) if kind == "sct" else ""
            if pref or j == 0:
                ts, stt, ispref = "P", "PF", "Y"
            else:
                r = rand()
                ts, stt, ispref = "PS"[r < 0.7], ("PF", "VO")[r % 0.5 < 0.2], "YN"[r % 0.25 < 0.12]
            cvf = "256" if rand() < 0.1 else ""
            meta.concept_of.append(c)
            meta.sab_of.append(s)
            meta.code_of.append(code)
            meta.suppress_of.append(sup)
            meta.code_first.append(first_of_code and kind != "nocode")
            yield (
                f"{cui}|{lat}|{ts}|L{lui:07d}|{stt}|S{sui:07d}|{ispref}|{aui_of(row)}|{saui}|{scui}|"
                f"{code if kind == 'msh' else ''}|{sab}|{tty}|{code}|{text}|{SRL.get(sab, '0')}|"
                f"{SUPPRESS[sup]}|{cvf}|\n"
            )
            row += 1


def network(rng: random.Random) -> list[tuple[str, str, str]]:
    """An invented semantic network: (TUI, tree number, name) of 37 types under two roots."""
    stns = []
    for root in ("A9", "B9"):
        stns.append(root)
        for a in range(1, 5):
            stns.append(f"{root}.{a}")
            stns += [f"{root}.{a}.{b}" for b in range(1, 4)]
    stns += [f"A9.1.1.{d}" for d in range(1, 4)]
    names = vocabulary(rng, "ENG", 2 * len(stns))
    return [(f"T{901 + k}", stn, f"{names[2 * k].capitalize()} {names[2 * k + 1]}")
            for k, stn in enumerate(stns)]  # fmt: skip


def mrsty(rng: random.Random, meta: Meta) -> Iterator[str]:
    types = network(rng)
    picks = rng.choices(types, [1 / (k + 2) for k in range(len(types))], k=len(meta.cui_of))
    for c, (tui, stn, name) in enumerate(picks):
        cvf = "256" if c % 7 == 0 else ""
        atui = f"AT{10_000_000 + c * BIJECT % 90_000_000}"
        yield f"{meta.cui_of[c]}|{tui}|{stn}|{name}|{atui}|{cvf}|\n"


def mrdef(rng: random.Random, rows: int, meta: Meta, words: list[str]) -> Iterator[str]:
    """Definitions of concepts drawn with replacement (some have several), in CUI order."""
    concepts = len(meta.cui_of)
    ends = [*meta.first_row[1:], len(meta.concept_of)]
    for k, c in enumerate(sorted(rng.choices(range(concepts), k=rows))):
        atom = rng.randrange(meta.first_row[c], ends[c])
        text = " ".join(rng.choices(words, k=rng.randint(6, 50))).capitalize() + "."
        sup = "N" if rng.random() < 0.95 else "O"
        yield (
            f"{meta.cui_of[c]}|{aui_of(atom)}|AT{100_000_000 + k * BIJECT % 900_000_000}||"
            f"{SOURCES[meta.sab_of[atom]][0]}|{text}|{sup}||\n"
        )


def mrrel(rng: random.Random, rows: int, meta: Meta) -> Iterator[str]:
    """Relations in pairs (each and its inverse), a twentieth of them to one of 50 hub atoms of
    their source; at concept (12%), atom (18%) and source-code level; sorted by CUI1."""
    n = len(meta.concept_of)
    by_sab: list[array] = [array("i") for _ in SOURCES]
    for i, s in enumerate(meta.sab_of):
        by_sab[s].append(i)
    kinds = [KINDS.get(sab, ("num", 0.05))[0] for sab, _, _ in SOURCES]
    coded = [s for s, kind in enumerate(kinds) if kind in STYPE and len(by_sab[s]) > 1]
    weights = [len(by_sab[s]) for s in coded]
    rel_of = rng.choices(range(len(RELS)), [w for *_, w in RELS], k=rows // 2)
    # each side as arrays (a list of 4 million tuples would take a gigabyte): the rows it
    # relates, its level (0 concept, 1 atom, 2 source code), its RELS entry and RELA, inverse
    first, second, level_of, rel_at = array("i"), array("i"), bytearray(), bytearray()
    rand, randrange = rng.random, rng.randrange
    for p in range(rows // 2):
        r = rand()
        if r < 0.12:
            a, b, level = randrange(n), randrange(n), 0
        else:
            s = rng.choices(coded, weights)[0] if r >= 0.3 else meta.sab_of[randrange(n)]
            pool = by_sab[s]
            if len(pool) < 2:
                pool = by_sab[coded[0]]
            a = pool[randrange(len(pool))]
            b = pool[randrange(min(50, len(pool)))] if rand() < 0.05 else pool[randrange(len(pool))]
            level = 1 if r < 0.3 else 2
        relas = RELS[rel_of[p]][2]
        code = rel_of[p] * 16 + randrange(len(relas)) * 2  # RELS entry, RELA, inverse bit
        first.extend((a, b))
        second.extend((b, a))
        level_of.extend((level, level))
        rel_at.extend((code, code + 1))
    # sorted by CUI1 (counting sort on the first side's concept; stable)
    starts = array("i", [0]) * (len(meta.cui_of) + 1)
    for a in first:
        starts[meta.concept_of[a] + 1] += 1
    for c in range(len(meta.cui_of)):
        starts[c + 1] += starts[c]
    order = array("i", [0]) * len(first)
    for k, a in enumerate(first):
        c = meta.concept_of[a]
        order[starts[c]] = k
        starts[c] += 1
    for j, k in enumerate(order):
        a, b, level = first[k], second[k], level_of[k]
        rel, inverse, relas, _ = RELS[rel_at[k] // 16]
        rela = relas[rel_at[k] % 16 // 2][rel_at[k] % 2]
        if rel_at[k] % 2:
            rel = inverse
        sab = "MTH" if level == 0 else SOURCES[meta.sab_of[a]][0]
        cui1, cui2 = meta.cui_of[meta.concept_of[a]], meta.cui_of[meta.concept_of[b]]
        if level == 0:
            aui1 = aui2 = ""
            stype = "CUI"
        else:
            aui1, aui2 = aui_of(a), aui_of(b)
            stype = "AUI" if level == 1 else STYPE[kinds[meta.sab_of[a]]]
        sct = sab in ("SNOMEDCT_US", "SCTSPA")
        srui = str(1_000_000 + j * BIJECT % 9_000_000) if sct and level else ""
        rg = str(j % 4) if sct and rel == "RO" else ""
        direction = ("", "Y", "N")[j % 3] if level else ""
        sup = "N" if j % 25 else "O"
        yield (
            f"{cui1}|{aui1}|{stype}|{rel}|{cui2}|{aui2}|{stype}|{rela}|"
            f"R{100_000_000 + j * BIJECT % 900_000_000}|{srui}|{sab}|{sab}|{rg}|{direction}|"
            f"{sup}||\n"
        )


def mrhier(rng: random.Random, rows: int, meta: Meta) -> Iterator[str]:
    """Each hierarchical source's codes (the first atom of each code in a concept) in trees of
    a few levels: 10 roots, then each node under one of the first quarter of those before it;
    some in a second or third context; ``rows`` rows in all, shared by the sources by codes."""
    kinds = [KINDS.get(sab, ("num", 0.05))[0] for sab, _, _ in SOURCES]
    nodes: list[array] = [array("i") for _ in SOURCES]
    for i, first in enumerate(meta.code_first):
        if first and kinds[meta.sab_of[i]] in STYPE:
            nodes[meta.sab_of[i]].append(i)
    usable = [s for s in range(len(SOURCES)) if len(nodes[s]) > 50]
    capacity = sum(len(nodes[s]) - 10 for s in usable)
    extra = max(0.08, rows * 1.1 / capacity - 1)  # chance of a second context (above 1: a third)
    left, written = rows, 0
    for k, s in enumerate(usable):
        quota = left if k == len(usable) - 1 else round(rows * (len(nodes[s]) - 10) / capacity)
        quota = min(quota, rows - written)
        order = list(nodes[s])
        rng.shuffle(order)
        parent = array("i", [-1] * len(order))
        sab = SOURCES[s][0]
        rela = "isa" if kinds[s] == "sct" else ""
        done = 0
        for j in range(10, len(order)):
            if done >= quota:
                break
            r = rng.random()
            for cxn in range(1 + (r < extra) + (r < extra - 1)):
                if done >= quota:
                    break
                p = rng.randrange(max(1, j // 4))
                if cxn == 0:
                    parent[j] = p
                path = []
                while p >= 0:
                    path.append(aui_of(order[p]))
                    p = parent[p]
                path.reverse()
                node = order[j]
                hcd = f"C{j % 23:02d}.{j % 997:03d}" if kinds[s] == "msh" else ""
                yield (
                    f"{meta.cui_of[meta.concept_of[node]]}|{aui_of(node)}|{cxn + 1}|{path[-1]}|"
                    f"{sab}|{rela}|{'.'.join(path)}|{hcd}||\n"
                )
                done += 1
        written += done
        left = rows - written


def mrsab(rng: random.Random, meta: Meta) -> Iterator[str]:
    """One current version of each source (and an older one of the first three)."""
    rows_of = Counter(meta.sab_of)
    names = vocabulary(rng, "ENG", 3 * len(SOURCES))
    for s, (sab, lat, _) in enumerate(SOURCES):
        family = sab.split("-")[0]
        family = family[:3] if family[:3] in ("MSH", "MDR") else family
        name = " ".join(w.capitalize() for w in names[3 * s : 3 * s + 3])
        for version, current in (("2099_01", "Y"), ("2098_07", "N"))[: 2 if s < 3 else 1]:
            yield (
                f"C8{s:05d}{1 if current == 'Y' else 0}|C8{s:05d}9|{sab}_{version}|{sab}|{name}|"
                f"{family}|{version}|||2099AA||||{SRL.get(sab, '0')}|{rows_of[s]}||FULL|PT,SY||"
                f"{lat}|UTF-8|{current}|Y|{name}|{name}, invented.|\n"
            )


def generate_meta(folder: Path, scale: float, seed: int = 24) -> dict[str, float]:
    """Write the six files into ``folder`` (and ``DONE`` last); the seconds each took."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    meta = Meta()
    n = {name: max(1, round(count * scale)) for name, count in ROWS.items()}
    seconds = {}
    for name, lines in (
        ("MRCONSO", lambda: mrconso(rng, n["MRCONSO"], n["MRSTY"], meta)),
        ("MRSTY", lambda: mrsty(rng, meta)),
        ("MRDEF", lambda: mrdef(rng, n["MRDEF"], meta, vocabulary(rng, "ENG", 20_000))),
        ("MRREL", lambda: mrrel(rng, n["MRREL"], meta)),
        ("MRHIER", lambda: mrhier(rng, n["MRHIER"], meta)),
        ("MRSAB", lambda: mrsab(rng, meta)),
    ):
        t = time.perf_counter()
        write_lines(folder / f"{name}.RRF", lines())
        seconds[name] = time.perf_counter() - t
    (folder / "DONE").write_text(json.dumps({"scale": scale, "seed": seed}))
    return seconds


# -- the inputs ---------------------------------------------------------------------------------

#: Crosswalks by source, as users ask them (SNOMED CT codes most).
CROSSWALK_MIX = {"SNOMEDCT_US": 50, "ICD10CM": 15, "LNC": 10, "RXNORM": 10, "MSH": 10, "NCI": 5}
UNKNOWN = 20  # of each 1,000 inputs, ones the files do not hold (the rest are picked from them)


def pick_inputs(
    folder: Path, meta: Path, n: int = 1000, seed: int = 25
) -> tuple[dict[str, Path], str]:
    """``n`` inputs of each command, picked from rows spread over the files (rows that count:
    SUPPRESS N), ``UNKNOWN`` of them unknown; each written to a file for ``--file``; and how
    many English atoms the words searched are in (estimated from the rows sampled)."""
    rng = random.Random(seed)
    with open(meta / "MRCONSO.RRF", "rb") as f:
        size = sum(1 for _ in f)
    keep = min(1.0, 40 * n / size)
    codes: dict[str, list[str]] = {sab: [] for sab in CROSSWALK_MIX}
    strings: list[str] = []
    english: list[str] = []
    cuis: list[str] = []
    with open(meta / "MRCONSO.RRF", encoding="utf-8") as f:
        for line in f:
            if rng.random() >= keep:
                continue
            cui, lat, sab, code, text, suppress = (
                line.split("|")[k] for k in (0, 1, 11, 13, 14, 16)
            )
            cuis.append(cui)
            if suppress != "N":
                continue
            strings.append(text)
            if lat == "ENG":
                english.append(text)
            if sab in codes and code not in ("", "NOCODE"):
                codes[sab].append(code)
    frequent = {
        w for w, _ in Counter(w for t in english for w in t.casefold().split()).most_common(100)
    }
    with open(meta / "MRDEF.RRF", encoding="utf-8") as f:
        defined = sorted({r[0] for r in (line.split("|") for line in f) if r[6] == "N"})
    known = n - UNKNOWN
    sabs = rng.choices(list(CROSSWALK_MIX), list(CROSSWALK_MIX.values()), k=known)
    pools = {  # each command's distinct inputs the rows sampled give, and how many it needs
        "words": (
            {w for t in english for w in (w.strip(",") for w in t.split())
             if w.casefold() not in frequent and not w.isdigit()},
            known,
        ),
        "strings": (strings, known),
        "concepts": (set(cuis), known),
        **{f"{sab} codes": (set(codes[sab]), k) for sab, k in Counter(sabs).items()},
    }  # fmt: skip
    for what, (pool, need) in pools.items():
        if len(pool) < need:  # (else the picking below would never end, or raise)
            raise SystemExit(
                f"bench: {meta} gives {len(pool):,} distinct {what} to ask, fewer than the "
                f"{need:,} inputs of its command: give a larger --scale"
            )
    words: dict[str, None] = {}  # a word of a random atom: frequent words more often
    while len(words) < known:
        ws = [w.strip(",") for w in rng.choice(english).split()]
        ws = [w for w in ws if w.casefold() not in frequent and not w.isdigit()]
        if ws:
            words[rng.choice(ws)] = None
    inputs = {
        "crosswalk": [
            f"{sab}\t{code}"
            for sab, k in Counter(sabs).items()
            for code in rng.sample(sorted(set(codes[sab])), k)
        ]
        + [f"SNOMEDCT_US\t999999999{k:03d}" for k in range(UNKNOWN)],
        "exact": [t if rng.random() < 0.9 else t.casefold() for t in rng.sample(strings, known)]
        + [f"Qzx unknown term {k}" for k in range(UNKNOWN)],
        "words": list(words) + [f"qzxq{k}w" for k in range(UNKNOWN)],
        "definitions": rng.sample(defined, min(known, len(defined)))
        + [f"C999{k:04d}" for k in range(UNKNOWN)],
        "relations": rng.sample(sorted(set(cuis)), known)
        + [f"C999{k:04d}" for k in range(UNKNOWN)],
    }
    counts = Counter(w for t in english for w in set(re.findall(r"\w+", t.casefold())))
    spread = sorted(round(counts[w.casefold()] / keep) for w in words)
    note = (f"each searched word in about {spread[len(spread) // 2]:,} English atoms (median; "
            f"90th percentile {spread[len(spread) * 9 // 10]:,}, most {spread[-1]:,})")  # fmt: skip
    paths = {}
    for name, lines in inputs.items():
        rng.shuffle(lines)
        paths[name] = folder / f"inputs-{name}.txt"
        paths[name].write_text("\n".join(lines) + "\n", encoding="utf-8")
    return paths, note


# -- the runs -----------------------------------------------------------------------------------

#: The command line tool, beside this Python (its console script: what users run).
TOOL = str(Path(sys.executable).with_name("tempmedbench-synonyms"))
IMPORT = "import tempmedbench_synonyms.cli"
SQLITE = "/usr/bin/sqlite3"
#: Runs a command and prints its seconds and the peak memory (max RSS) of its largest process.
MEASURED = """
import json, resource, subprocess, sys, time
t = time.perf_counter()
p = subprocess.run(sys.argv[1:], capture_output=True, text=True)
peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"seconds": time.perf_counter() - t, "rc": p.returncode, "out": p.stdout,
                  "err": p.stderr[-3000:], "peak_kb": peak_kb}))
"""
COMMANDS = {  # what is timed: (label, the umls command, target ms an input over the import)
    "crosswalk": ("crosswalks", ["crosswalk"], 0.2),
    "exact": ("exact searches", ["search", "--search-type", "exact"], 0.2),
    "words": ("one-word searches", ["search"], 0.5),
    "definitions": ("definitions", ["definitions"], 0.2),
    "relations": ("relations", ["relations"], 0.2),
}


#: For a command, the script of its bare loop (``bench/``): the reads its answers cannot avoid,
#: timed beside it (a floor for its ms an input).
FLOORS = {"relations": "floor_relations.py"}


def measured(cmd: list[str], env: dict[str, str]) -> dict:
    done = subprocess.run([sys.executable, "-c", MEASURED, *cmd], env=env, capture_output=True,
                          text=True, check=True)  # fmt: skip
    return json.loads(done.stdout)


def best_of(
    cmd: list[str], env: dict[str, str], runs: int
) -> tuple[float, subprocess.CompletedProcess]:
    best, last = float("inf"), None
    for _ in range(runs):
        t = time.perf_counter()
        last = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
        best = min(best, time.perf_counter() - t)
        if last.returncode not in (0, 1):
            break
    assert last is not None
    return best, last


def sqlite_floor(meta: Path, work: Path, env: dict[str, str]) -> dict:
    """The ``sqlite3`` shell's ``.import`` of every file into a bare table of its own (one
    column more than the file's: each row ends with ``|``), journal and syncs off."""
    from tempmedbench_synonyms.mrconso.engine import COLUMNS

    script = ["PRAGMA journal_mode=OFF;", "PRAGMA synchronous=OFF;", ".mode list", ".separator |"]
    for name in FILES:
        columns = ", ".join([*(c.lower() for c in COLUMNS[name]), "trailing"])
        script.append(f"CREATE TABLE {name.lower()} ({columns});")
        script.append(f".import '{meta / (name + '.RRF')}' {name.lower()}")
    script.append(
        "SELECT " + " || ' ' || ".join(f"(SELECT count(*) FROM {n.lower()})" for n in FILES) + ";"
    )
    db = work / "floor.sqlite3"  # beside the index: the same disk
    db.unlink(missing_ok=True)
    (work / "floor.sql").write_text("\n".join(script) + "\n")
    stats = measured([SQLITE, "-init", str(work / "floor.sql"), str(db), ".quit"], env)
    stats["bytes"] = db.stat().st_size if db.exists() else 0
    db.unlink(missing_ok=True)
    return stats


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def rest_crosswalks(
    meta: Path, inputs: Path, work: Path, env: dict[str, str]
) -> tuple[float, str, str]:
    """The crosswalks over REST against the fake UTS (``Faults(latency=0.15)``, ``--rate 15``),
    served from the rows they need, not all rows: those of the concepts that hold the codes
    asked, and every row of each code those concepts hold (its name and atom count)."""
    from tempmedbench_synonyms.testing import (
        CANARY_KEY,
        FakeUts,
        FakeUtsData,
        FakeUtsServer,
        Faults,
    )

    asked = {tuple(line.split("\t")) for line in inputs.read_text().splitlines() if line}
    with open(meta / "MRCONSO.RRF", encoding="utf-8") as f:
        needed = {r[0] for r in (line.split("|", 14) for line in f) if (r[11], r[13]) in asked}
    with open(meta / "MRCONSO.RRF", encoding="utf-8") as f:
        held = {(r[11], r[13]) for r in (line.split("|", 14) for line in f) if r[0] in needed}
    with open(meta / "MRCONSO.RRF", encoding="utf-8") as f:
        lines = [
            line for line in f if (r := line.split("|", 14))[0] in needed or (r[11], r[13]) in held
        ]
    fake = FakeUts(FakeUtsData.from_lines(lines), api_key=CANARY_KEY, faults=Faults(latency=0.15))
    env = {**env, "UMLS_API_KEY": CANARY_KEY, "TEMPMEDBENCH_CACHE_DIR": str(work / "rest-cache")}
    with FakeUtsServer(fake) as server:
        cmd = [TOOL, "umls", "crosswalk", "--file", str(inputs), "--json", "--base-url",
               server.base_url, "--rate", "15"]  # fmt: skip
        t = time.perf_counter()
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - t
    return seconds, done.stdout, f"{len(lines):,} rows served; exit {done.returncode}"


def answers(stdout: str) -> list[tuple]:
    """Each input's outcome and results (ui, rootSource, name): what REST and the index share."""
    out = []
    for line in stdout.splitlines():
        a = json.loads(line)
        results = [(r.get("ui"), r.get("rootSource"), r.get("name")) for r in a["results"] or ()]
        out.append((a["outcome"], results))
    return out


def floor_problem(done: subprocess.CompletedProcess, command_stdout: str) -> str | None:
    """Why a bare loop's time says nothing (``None``: it ended well with the command's answers).
    ``best_of`` takes exit 1 for a run with a not_found, but a loop's traceback exits 1 too."""
    if done.returncode != 0:
        return f"exit {done.returncode}: {(done.stderr.strip().splitlines() or [''])[-1][:300]}"
    mine, theirs = answers(done.stdout), answers(command_stdout)
    if len(mine) != len(theirs):
        return f"{len(mine):,} answers for the command's {len(theirs):,}"
    differ = [n for n, (a, b) in enumerate(zip(mine, theirs, strict=True), start=1) if a != b]
    if differ:
        return (f"{len(differ):,} of {len(mine):,} inputs answered otherwise than the command "
                f"(first: line {differ[0]})")  # fmt: skip
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0, help="rows of each file (1: SPEC 12's)")
    ap.add_argument("--keep", type=Path, help="generate into (or reuse) this folder")
    ap.add_argument("--no-rest", action="store_true", help="skip the crosswalks over REST")
    ap.add_argument("--seed", type=int, default=24)
    args = ap.parse_args()
    out = Path(__file__).parent / "out"
    out.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bench-local-index-", dir=out) as tmp:
        work = args.keep or Path(tmp)
        return run(work / f"META-{args.scale:g}-{args.seed}", Path(tmp), args)


def run(meta: Path, work: Path, args: argparse.Namespace) -> int:
    py = sys.executable
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower() and k != "UMLS_API_KEY"}
    # as an installed package runs: its modules read from their bytecode cache, not compiled
    # again on each run (the first run of each best-of writes it)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["TEMPMEDBENCH_STATE_DIR"] = str(work / "state")
    env["TEMPMEDBENCH_CACHE_DIR"] = str(work / "cache")
    print(f"cpu count         {os.cpu_count()} (load average {os.getloadavg()[0]:.2f} at start)")
    if not (meta / "DONE").exists():
        shutil.rmtree(meta, ignore_errors=True)
        t = time.perf_counter()
        seconds = generate_meta(meta, args.scale, args.seed)
        each = ", ".join(f"{name} {s:.1f}" for name, s in seconds.items())
        print(f"generated         {meta} in {time.perf_counter() - t:.1f} s ({each})")
    else:
        print(f"reused            {meta}")
    sizes = {name: (meta / f"{name}.RRF").stat().st_size for name in FILES}
    for name in FILES:
        with open(meta / f"{name}.RRF", "rb") as f:  # counts them and warms the page cache
            lines = sum(1 for _ in f)
        print(f"  {name:8}        {lines:>10,} rows {sizes[name] / 1e6:8.1f} MB")
    total = sum(sizes.values())
    print(f"  all             {total / 1e6:21.1f} MB")
    inputs, note = pick_inputs(work, meta)
    print(f"inputs            1,000 of each command, {UNKNOWN} of them unknown; {note}")

    floor = sqlite_floor(meta, work, env)
    version = subprocess.check_output([SQLITE, "--version"], text=True).split()[0]
    counts = floor["out"].strip().splitlines()[-1:]  # after the PRAGMA's "off"
    print(f"sqlite3 .import   {floor['seconds']:.2f} s (the floor; shell {version}, journal and "
          f"syncs off; peak {floor['peak_kb'] / 1024:.0f} MB; {floor['bytes'] / 1e6:.0f} MB = "
          f"{floor['bytes'] / total:.2f}x the files; rows {' '.join(counts)})")  # fmt: skip
    if floor["rc"]:
        print(f"  the floor failed (exit {floor['rc']}): {floor['err']}")

    index = work / "index"
    shutil.rmtree(index, ignore_errors=True)
    build = measured([TOOL, "umls", "index", str(meta), "--index-dir", str(index), "--json"], env)
    failed = 0
    if build["rc"]:
        failed += 1
        print(f"umls index        failed (exit {build['rc']}): {build['err'].strip()[-1500:]}")
    else:
        size = folder_bytes(index)
        ratio = build["seconds"] / floor["seconds"]
        print(f"umls index        {build['seconds']:.2f} s = {ratio:.2f}x the .import (target: at "
              "most 3x)")  # fmt: skip
        print(f"  peak memory     {build['peak_kb'] / 1024:.0f} MB (max RSS of its largest "
              "process; target: under 300 MB)")  # fmt: skip
        print(f"  index size      {size / 1e6:.0f} MB = {size / total:.2f}x the files (target: "
              "under 2x)")  # fmt: skip
        try:
            parts = json.loads(build["out"])["parts"]
        except (ValueError, KeyError, TypeError):
            parts = []
            print(f"  its answer      {build['out'].strip()[:300]}")
        for part in parts:
            mb = part["bytes"] / 1e6
            print(f"  {part['file']:8}        {part['rows']:>10,} rows {mb:8.1f} MB "
                  f"{part['seconds']:8.2f} s")  # fmt: skip

    t_import, _ = best_of([py, "-c", IMPORT], env, 5)
    print(f"bare import       {t_import:.3f} s ({IMPORT}, best of 5)")
    t_python, _ = best_of([py, "-c", "pass"], env, 5)
    local: dict[str, str] = {}
    for key, (label, command, target) in COMMANDS.items():
        cmd = [TOOL, "umls", *command, "--meta", str(meta), "--index-dir", str(index),
               "--file", str(inputs[key]), "--json"]  # fmt: skip
        seconds, done = best_of(cmd, env, 3)
        n = sum(1 for line in inputs[key].read_text().splitlines() if line)
        if done.returncode not in (0, 1):
            failed += 1
            print(f"{label:17} failed (exit {done.returncode}): {done.stderr.strip()[-800:]}")
            continue
        local[key] = done.stdout
        got = [json.loads(line) for line in done.stdout.splitlines()]
        found = sum(a["outcome"] == "found" for a in got)
        results = sum(len(a.get("results") or ()) for a in got)
        ms = (seconds - t_import) / n * 1000
        print(f"{label:17} {seconds:.3f} s, best of 3: {ms:.3f} ms an input over the import "
              f"(target: {target} ms); {found:,} of {n:,} found, {results:,} results")  # fmt: skip
        one = inputs[key].with_suffix(".one.txt")  # what a run costs apart from its inputs
        one.write_text(inputs[key].read_text(encoding="utf-8").splitlines()[0] + "\n", "utf-8")
        single, _ = best_of([*cmd[:-3], str(one), "--json"], env, 3)
        print(f"{'':17} one input {single:.3f} s: {(seconds - single) / (n - 1) * 1000:.3f} ms "
              "an input more")  # fmt: skip
        if key in FLOORS:  # the unavoidable reads alone, without the package
            floor_cmd = [py, str(Path(__file__).parent / FLOORS[key]), str(index), str(inputs[key])]
            bare, floor_done = best_of(floor_cmd, env, 3)
            problem = floor_problem(floor_done, done.stdout)
            if problem:
                failed += 1
                print(f"{'':17} bare loop failed ({FLOORS[key]}): {problem}")
            else:
                alone, _ = best_of([*floor_cmd[:-1], str(one)], env, 3)
                print(f"{'':17} bare loop {bare:.3f} s, best of 3: "
                      f"{(bare - t_python) / n * 1000:.3f} ms an input over Python's start "
                      f"({FLOORS[key]}; the command's answers); one input {alone:.3f} s: "
                      f"{(bare - alone) / (n - 1) * 1000:.3f} ms an input more")  # fmt: skip

    if not args.no_rest:
        seconds, stdout, how = rest_crosswalks(meta, inputs["crosswalk"], work, env)
        line = (f"REST crosswalks   {seconds:.1f} s against the fake UTS (150 ms an answer, "
                f"--rate 15; {how})")  # fmt: skip
        rest = answers(stdout)
        found = sum(outcome == "found" for outcome, _ in rest)
        line += f"; {found:,} of {len(rest):,} found"
        if "crosswalk" in local:
            mine = answers(local["crosswalk"])
            same = sum(a == b for a, b in zip(rest, mine, strict=False))
            line += f"; the same answers as the index for {same:,} of {len(mine):,} inputs"
        print(line)
    print(f"load average      {os.getloadavg()[0]:.2f} at the end")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
