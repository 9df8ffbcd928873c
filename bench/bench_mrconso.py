"""Benchmark the MRCONSO.RRF source on a generated file (not a test: it prints numbers).

    python bench/bench_mrconso.py [--lines 4000000] [--concepts 1500] [--keep DIR]

It writes an invented MRCONSO.RRF (default 4 million rows, a mix of sources and languages shaped
like a real release: about 10% SNOMEDCT_US, 10% LNC, 4% RXNORM, 3% MTH), picks 1,500 concepts
spread over the file in two mixes of sources and routes (see MIXES), and times, each in a fresh
process and best of three:

* the bare import of the package,
* a bare Python loop that reads the file line by line in binary,
* ``wc -l`` on the file,
* the MRCONSO source answering the 1,500 concepts' queries (its run time less the bare import).

It prints the scan's ratio to the bare loop and to ``wc -l`` (target: within 3x of the bare loop)
and the peak memory (maximum resident set size of the main process and of the largest worker
process; target: under 150 MB for all of them together).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SOURCES = [  # (SAB, LAT, weight in percent): roughly the shape of a full release
    ("SNOMEDCT_US", "ENG", 10), ("LNC", "ENG", 10), ("RXNORM", "ENG", 4), ("MTH", "ENG", 3),
    ("MSH", "ENG", 10), ("MDR", "ENG", 8), ("NCI", "ENG", 6), ("MEDCIN", "ENG", 8),
    ("ICD10CM", "ENG", 3), ("LNC-DE-DE", "GER", 4), ("MSHGER", "GER", 4), ("SCTSPA", "SPA", 6),
    ("MDRJPN", "JPN", 4), ("CHV", "ENG", 10), ("HPO", "ENG", 10),
]  # fmt: skip
WORDS = (
    "acute chronic left right upper lower structure of disorder finding procedure renal hepatic "
    "cardiac pulmonary syndrome fracture infection tablet oral mg injection measurement serum"
).split()


def generate(path: Path, lines: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    pool = [(sab, lat) for sab, lat, w in SOURCES for _ in range(w)]
    suppress = "NNNNNNNNOEY"
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        batch: list[str] = []
        for i in range(lines):
            cui = f"C{9000000 + i // 5:07d}"
            sab, lat = rng.choice(pool)
            code = str(100000 + (i // 5 * 7919) % 9000000)
            name = " ".join(rng.choices(WORDS, k=rng.randint(2, 7)))
            tty = rng.choice(("PT", "SY", "FN", "LN", "SCD", "IN"))
            batch.append(
                f"{cui}|{lat}|P|L{i:07d}|PF|S{i:07d}|Y|A{90000000 + i}|{i}|{code}||{sab}|{tty}|"
                f"{code}|{name}|0|{rng.choice(suppress)}|256|\n"
            )
            if len(batch) == 50_000:
                f.write("".join(batch))
                batch.clear()
        f.write("".join(batch))


# (SAB, route, share): the shape of TempMedBench's table (SNOMED CT concepts by code, RxNorm and
# encounter classes by CUI, LOINC mostly by code) and a worst case where every SAB has every route.
MIXES = {
    "tempmedbench-like": [("SNOMEDCT_US", "source", 0.60), ("LNC", "source", 0.15),
                          ("LNC", "aui", 0.05), ("RXNORM", "cui", 0.15), ("MTH", "cui", 0.05)],
    "every-route-everywhere": [(sab, route, 1 / 12) for sab in ("SNOMEDCT_US", "LNC", "RXNORM",
                               "MTH") for route in ("source", "cui", "aui")],
}  # fmt: skip


def pick_queries(path: Path, concepts: int, mix: str, seed: int = 11) -> list[list[str]]:
    """Queries for ``concepts`` concepts drawn from rows spread over the whole file."""
    rng = random.Random(seed)
    plan = MIXES[mix]
    rows: dict[str, list[list[str]]] = {sab: [] for sab, _, _ in plan}
    with open(path, encoding="utf-8") as f:
        for line in f:
            parts = line.split("|")
            if parts[11] in rows and rng.random() < 0.01:
                rows[parts[11]].append(parts)
    queries: list[list[str]] = []
    for sab, route, share in plan:
        picked = rng.sample(rows[sab], round(concepts * share))
        field = {"source": 13, "cui": 0, "aui": 7}[route]
        queries += [[route, sab, parts[field]] for parts in picked]
    return queries


SCAN = """
import json, resource, sys, time
t0 = time.perf_counter()
from tempmedbench_synonyms.atoms import AtomQuery
from tempmedbench_synonyms.mrconso import MrconsoSource
qs = [AtomQuery(*q) for q in json.load(open(sys.argv[2]))]
res = MrconsoSource(sys.argv[1]).fetch("2099AA", "C9000000", qs)
found = sum(1 for v in res.atoms.values() if v)
atoms = sum(len(v) for v in res.atoms.values() if v)
print(json.dumps({"found": found, "atoms": atoms,
    "self_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    "children_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
    "workers": MrconsoSource(sys.argv[1]).workers}))
"""
BARE = """
import sys
with open(sys.argv[1], "rb") as f:
    for line in f:
        pass
"""
IMPORT = "import tempmedbench_synonyms.mrconso"


def best_of(cmd: list[str], runs: int = 3) -> tuple[float, str]:
    best, out = float("inf"), ""
    for _ in range(runs):
        t = time.perf_counter()
        proc = subprocess.run(cmd, check=True, capture_output=True, text=True)
        best = min(best, time.perf_counter() - t)
        out = proc.stdout
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=4_000_000)
    ap.add_argument("--concepts", type=int, default=1500)
    ap.add_argument("--keep", type=Path, help="generate into (or reuse) this folder")
    args = ap.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="bench-mrconso-"))
    folder.mkdir(parents=True, exist_ok=True)
    rrf = folder / f"MRCONSO-{args.lines}.RRF"
    try:
        if not rrf.exists():
            t = time.perf_counter()
            generate(rrf, args.lines)
            print(
                f"generated {rrf} ({rrf.stat().st_size / 1e6:.0f} MB, {args.lines:,} lines) "
                f"in {time.perf_counter() - t:.1f} s",
                file=sys.stderr,
            )
        py = sys.executable
        best_of([py, "-c", BARE, str(rrf)], 1)  # warm the page cache
        t_import, _ = best_of([py, "-c", IMPORT])
        t_bare, _ = best_of([py, "-c", BARE, str(rrf)])
        t_wc, _ = best_of(["wc", "-l", str(rrf)])
        print(f"file              {rrf.stat().st_size / 1e6:.0f} MB, {args.lines:,} lines")
        print(f"bare import       {t_import:.3f} s")
        print(f"bare binary loop  {t_bare:.3f} s")
        print(f"wc -l             {t_wc:.3f} s")
        for mix in MIXES:
            qfile = folder / f"queries-{mix}.json"
            qfile.write_text(json.dumps(pick_queries(rrf, args.concepts, mix)))
            t_run, out = best_of([py, "-c", SCAN, str(rrf), str(qfile)])
            stats = json.loads(out)
            t_scan = t_run - t_import
            print(
                f"-- {mix}: {args.concepts:,} concepts ({stats['found']:,} answered, "
                f"{stats['atoms']:,} atoms kept)"
            )
            print(f"   scan             {t_scan:.3f} s (run {t_run:.3f} s less the bare import)")
            print(f"   scan / bare loop {t_scan / t_bare:.2f}x   (target: within 3x)")
            print(f"   scan / wc -l     {t_scan / t_wc:.2f}x")
            print(
                f"   peak memory      {stats['self_kb'] / 1024:.0f} MB main process, "
                f"{stats['children_kb'] / 1024:.0f} MB largest of {stats['workers']} workers "
                f"(max RSS; together at most "
                f"{(stats['self_kb'] + stats['workers'] * stats['children_kb']) / 1024:.0f} MB; "
                "target < 150 MB)"
            )
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
