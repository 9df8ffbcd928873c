"""Benchmark the MRCONSO.RRF source on a generated file (not a test: it prints numbers).

    python bench/bench_mrconso.py [--lines 4000000] [--concepts 1500] [--keep bench/out]
                                  [--runs 3] [--stdlib]

It writes an invented MRCONSO.RRF under ``--keep`` (default ``bench/out/``, gitignored; reused
when there) of 4 million rows (about 500 MB, under a minute) whose sources follow a full
release's mix: about 9% SNOMEDCT_US, 8% LNC, 6% RXNORM, 3% MTH, a trace of HL7V3.0, a third of
the rows in other languages than ENG, the rest filler sources (MSH, NCI, MDR, MEDCIN, ...), and
its gzip and a Metathesaurus zip holding it (deflated). It picks 1,500 concepts spread over the
file in three mixes of sources and routes (see MIXES) and times, each in a fresh process and best
of ``--runs`` (three; more on a machine that other work keeps busy):

* the bare import of the package,
* a bare Python loop that reads the file line by line in binary,
* the bare loops of the standard library that only decompress the .gz: ``gzip.open(path)``
  read 1 MiB at a time; ``zlib.decompressobj`` fed 1 MiB of compressed input at a time (its
  output unbounded); the same with its output bounded to 1 MiB a call, as the scan reads. The
  fastest is the floor the compressed scan is measured against,
* the standard library's bare read loop of the zip member (``zipfile``, 1 MiB at a time),
* the same bare loops with ``isal`` (ISA-L's inflate, which the scan uses where it installs),
  for information,
* ``wc -l`` on the file,
* the MRCONSO source answering the 1,500 concepts' queries from the plain file, the .gz and the
  zip (its run time less the bare import); the answers of the three must be identical.

It prints ``os.cpu_count()``, the plain scan's ratio to the bare loop (target: at most 3x), the
compressed scans' ratio to the standard library's fastest bare loop of the same file (target: at
most 1.5x with isal; the standard library's inflate alone: at most 2x) and the peak memory
(maximum resident set size of the main process and of the largest worker process; target: under
150 MB for all of them together). ``--stdlib`` scans with the standard library's inflate only,
as on a platform without isal wheels.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import os
import random
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

SOURCES = [  # (SAB, LAT, weight in per mille): the shape of a full release
    ("SNOMEDCT_US", "ENG", 90), ("LNC", "ENG", 80), ("RXNORM", "ENG", 60), ("MTH", "ENG", 30),
    ("HL7V3.0", "ENG", 1),
    ("MSH", "ENG", 80), ("NCI", "ENG", 80), ("MDR", "ENG", 60), ("MEDCIN", "ENG", 70),
    ("CHV", "ENG", 40), ("ICD10CM", "ENG", 30), ("HPO", "ENG", 19), ("GO", "ENG", 20),
    ("MSHGER", "GER", 40), ("LNC-DE-DE", "GER", 30), ("SCTSPA", "SPA", 70), ("MDRSPA", "SPA", 40),
    ("MDRJPN", "JPN", 40), ("MSHFRE", "FRE", 30), ("MDRFRE", "FRE", 30), ("LNC-ZH-CN", "CHI", 20),
    ("MSHPOR", "POR", 20), ("MDRITA", "ITA", 20),
]  # fmt: skip
WORDS = (
    "acute chronic left right upper lower structure of disorder finding procedure renal hepatic "
    "cardiac pulmonary syndrome fracture infection tablet oral mg injection measurement serum"
).split()


def generate(path: Path, lines: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    sources = rng.choices(SOURCES, weights=[w for *_, w in SOURCES], k=lines)
    names = [" ".join(rng.choices(WORDS, k=k)) for k in range(2, 8) for _ in range(500)]
    ttys = ("PT", "SY", "FN", "LN", "SCD", "IN")
    suppress = "NNNNNNNNOEY"
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        batch: list[str] = []
        for i in range(lines):
            sab, lat, _ = sources[i]
            c = i // 5
            code = 100000 + (c * 7919) % 9000000
            batch.append(
                f"C{9000000 + c:07d}|{lat}|P|L{i:07d}|PF|S{i:07d}|Y|A{90000000 + i}|{i}|{code}||"
                f"{sab}|{ttys[i % 6]}|{code}|{names[i % 3000]}|0|{suppress[i % 11]}|256|\n"
            )
            if len(batch) == 100_000:
                f.write("".join(batch))
                batch.clear()
        f.write("".join(batch))


# (SAB, route, share): the shape of TempMedBench's table (SNOMED CT concepts by code, RxNorm and
# encounter classes by CUI, LOINC mostly by code), a case where every SAB has every route, and the
# same on 12 SABs (rows of a named SAB are the ones the search hands back: 26% and 69%).
MIXES = {
    "tempmedbench-like": [("SNOMEDCT_US", "source", 0.60), ("LNC", "source", 0.15),
                          ("LNC", "aui", 0.05), ("RXNORM", "cui", 0.145), ("MTH", "cui", 0.05),
                          ("HL7V3.0", "cui", 0.005)],
    "every-route-everywhere": [(sab, route, 1 / 12) for sab in ("SNOMEDCT_US", "LNC", "RXNORM",
                               "MTH") for route in ("source", "cui", "aui")],
    # 12 SABs, 69% of the rows: the cost per SAB named (there is none) apart from that per row
    "every-route-on-12-sabs": [(sab, route, 1 / 36) for sab in ("SNOMEDCT_US", "LNC", "RXNORM",
                               "MTH", "MSH", "NCI", "MDR", "MEDCIN", "CHV", "ICD10CM", "HPO", "GO")
                               for route in ("source", "cui", "aui")],
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
import hashlib, json, resource, sys, time
t0 = time.perf_counter()
from tempmedbench_synonyms.atoms import AtomQuery
from tempmedbench_synonyms.mrconso.source import MrconsoSource
if sys.argv[3] == "stdlib":  # as where isal does not install
    import zlib
    from tempmedbench_synonyms import zips
    zips.inflate = zlib
qs = [AtomQuery(*q) for q in json.load(open(sys.argv[2]))]
res = MrconsoSource(sys.argv[1]).fetch("2099AA", "C9000000", qs)
found = sum(1 for v in res.atoms.values() if v)
atoms = sum(len(v) for v in res.atoms.values() if v)
answers = sorted((repr(q), [repr(a) for a in v or ()]) for q, v in res.atoms.items())
digest = hashlib.sha256(json.dumps(answers, ensure_ascii=False).encode()).hexdigest()
# VmHWM, not ru_maxrss: the latter keeps the bench process's peak across fork and exec
hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")]
self_kb = int(hwm[0].split()[1]) if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
print(json.dumps({"found": found, "atoms": atoms, "cpu": cpu, "digest": digest,
    "self_kb": self_kb,
    "children_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
    "workers": MrconsoSource(sys.argv[1]).workers}))
"""
BARE = """
import sys
with open(sys.argv[1], "rb") as f:
    for line in f:
        pass
"""
# The bare decompression loops: ``{zlib}`` is zlib or isal.isal_zlib, ``{gzip}`` gzip or isal.igzip.
BARE_GZIP_READ = """
import sys, {gzip} as gzip
with gzip.open(sys.argv[1], "rb") as f:
    while f.read(1 << 20):
        pass
"""
BARE_ZLIB_IN = """
import sys, {zlib} as zlib
d = zlib.decompressobj(31)
with open(sys.argv[1], "rb") as f:
    while raw := f.read(1 << 20):
        d.decompress(raw)
"""
BARE_ZLIB_OUT = """
import sys, {zlib} as zlib
d = zlib.decompressobj(31)
with open(sys.argv[1], "rb") as f:
    while raw := f.read(1 << 20):
        out = d.decompress(raw, 1 << 20)
        while d.unconsumed_tail:
            out = d.decompress(d.unconsumed_tail, 1 << 20)
"""
BARE_ZIP_READ = """
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as f:
    while f.read(1 << 20):
        pass
"""
BARE_GUNZIP = {
    "gzip.open(path).read(1 MiB)": BARE_GZIP_READ,
    "decompressobj fed 1 MiB": BARE_ZLIB_IN,
    "decompressobj, 1 MiB out": BARE_ZLIB_OUT,
}
STDLIB = {"zlib": "zlib", "gzip": "gzip"}
ISAL = {"zlib": "isal.isal_zlib", "gzip": "isal.igzip"}
MEMBER = "2025AB/META/MRCONSO.RRF"
IMPORT = "import tempmedbench_synonyms.mrconso"


RUNS = 3


def best_of(cmd: list[str], runs: int = 0) -> tuple[float, str]:
    best, out = float("inf"), ""
    for _ in range(runs or RUNS):
        t = time.perf_counter()
        proc = subprocess.run(cmd, check=True, capture_output=True, text=True)
        best = min(best, time.perf_counter() - t)
        out = proc.stdout
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=4_000_000)
    ap.add_argument("--concepts", type=int, default=1500)
    ap.add_argument(
        "--keep",
        type=Path,
        default=Path(__file__).parent / "out",
        help="generate into (or reuse) this folder (default bench/out)",
    )
    ap.add_argument("--clean", action="store_true", help="delete the generated files at the end")
    ap.add_argument(
        "--stdlib", action="store_true", help="scan with the standard library's inflate only"
    )
    ap.add_argument("--runs", type=int, default=3, help="best of how many runs (default 3)")
    args = ap.parse_args()  # fmt: skip
    global RUNS
    RUNS = args.runs
    folder = args.keep
    folder.mkdir(parents=True, exist_ok=True)
    rrf = folder / f"MRCONSO-{args.lines}.RRF"
    gz = rrf.with_name(rrf.name + ".gz")
    zipped = rrf.with_name(f"umls-{args.lines}-metathesaurus-full.zip")
    try:
        if not rrf.exists():
            t = time.perf_counter()
            generate(rrf, args.lines)
            print(
                f"generated {rrf} ({rrf.stat().st_size / 1e6:.0f} MB, {args.lines:,} lines) "
                f"in {time.perf_counter() - t:.1f} s",
                file=sys.stderr,
            )
        if not gz.exists():
            with open(rrf, "rb") as src, gzip.open(gz, "wb", compresslevel=6) as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
        if not zipped.exists():
            with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED) as z:
                z.write(rrf, MEMBER)
        py = sys.executable
        best_of([py, "-c", BARE, str(rrf)], 1)  # warm the page cache
        t_import, _ = best_of([py, "-c", IMPORT])
        t_bare, _ = best_of([py, "-c", BARE, str(rrf)])
        # other work on the machine slows the two-thread scan more than the one-thread floor
        print(f"cpu count         {os.cpu_count()} (load average {os.getloadavg()[0]:.1f})")
        print(f"file              {rrf.stat().st_size / 1e6:.0f} MB, {args.lines:,} lines; "
              f".gz {gz.stat().st_size / 1e6:.0f} MB")  # fmt: skip
        print(f"bare import       {t_import:.3f} s")
        print(f"bare binary loop  {t_bare:.3f} s")
        has_isal = importlib.util.find_spec("isal") is not None
        t_gunzip = float("inf")
        for name, loop in BARE_GUNZIP.items():
            t, _ = best_of([py, "-c", loop.format(**STDLIB), str(gz)])
            t_gunzip = min(t_gunzip, t)
            extra = ""
            if has_isal:
                t_isal, _ = best_of([py, "-c", loop.format(**ISAL), str(gz)])
                extra = f"; with isal {t_isal:.3f} s"
            print(f"bare gunzip loop  {t:.3f} s: {name}{extra}")
        print(f"  floor           {t_gunzip:.3f} s (the fastest standard library loop)")
        t_unzip, _ = best_of([py, "-c", BARE_ZIP_READ, str(zipped), MEMBER])
        print(f"bare unzip loop   {t_unzip:.3f} s: zipfile member read(1 MiB)")
        t_wc, _ = best_of(["wc", "-l", str(rrf)])
        print(f"wc -l             {t_wc:.3f} s")
        inflate = "stdlib" if args.stdlib else "isal where it installs"
        target = "2x" if args.stdlib or not has_isal else "1.5x"
        print(f"inflate           {inflate} (isal installed: {has_isal})")
        for mix in MIXES:
            qfile = folder / f"queries-{mix}.json"
            qfile.write_text(json.dumps(pick_queries(rrf, args.concepts, mix)))
            print(f"-- {mix}: {args.concepts:,} concepts")
            digests = set()
            for label, path, bare, goal in (
                ("plain", rrf, t_bare, "3x the bare loop"),
                ("gzip", gz, t_gunzip, f"{target} the bare gunzip floor"),
                ("zip", zipped, t_unzip, f"{target} the bare unzip loop"),
            ):
                how = "stdlib" if args.stdlib else "default"
                t_run, out = best_of([py, "-c", SCAN, str(path), str(qfile), how])
                stats = json.loads(out)
                digests.add(stats["digest"])
                t_scan = t_run - t_import
                print(
                    f"   {label:5} scan {t_scan:.3f} s = {t_scan / bare:.2f}x (target: at most "
                    f"{goal}); {stats['found']:,} answered, {stats['atoms']:,} atoms kept"
                )
                print(
                    f"         cpu {stats['cpu']:.3f} s in all processes and threads (with the "
                    "import): the wall-clock ratio needs the cores free"
                )
                print(
                    f"         peak memory {stats['self_kb'] / 1024:.0f} MB main process, "
                    f"{stats['children_kb'] / 1024:.0f} MB largest of {stats['workers']} workers "
                    f"(max RSS; together at most "
                    f"{(stats['self_kb'] + stats['workers'] * stats['children_kb']) / 1024:.0f} MB;"
                    " target < 150 MB)"
                )
            if len(digests) != 1:
                raise SystemExit(f"the answers differ between the forms: {sorted(digests)}")
            print(f"   the same answers from the three forms (sha256 {digests.pop()[:16]})")
        print(f"load average      {os.getloadavg()[0]:.1f} at the end")
    finally:
        if args.clean:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
