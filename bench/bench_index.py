"""Benchmark the local UMLS's index build (SPEC 12, "Speed") on an invented META (not a test: it
prints numbers).

    python bench/bench_index.py [--scale 0.15] [--keep bench/out/meta]

It writes, under ``--keep`` (reused when there), an invented META in SPEC 12's proportions times
``--scale`` (1.0: a 2-million-row MRCONSO.RRF in a full release's SAB mix, ``bench_mrconso``'s
rows, 4 million MRREL, 666,666 MRSTY, 100,000 MRDEF and 1 million MRHIER rows), then times, in
fresh processes, the ``sqlite3`` shell's ``.import`` of every file into bare tables (the floor)
and ``LocalIndex.build()`` of the same files. It prints each file's rows a second both ways, the
build's ratio to the floor (target: at most 3x), the index's size over the files' bytes (target:
under 2x) and the build's peak memory (target: under 300 MB).
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

sys.path.insert(0, str(Path(__file__).parent))
from bench_mrconso import generate

ROWS = {"MRCONSO": 2_000_000, "MRREL": 4_000_000, "MRSTY": 666_666, "MRDEF": 100_000,
        "MRHIER": 1_000_000}  # fmt: skip


def _write(path: Path, lines: int, row: object) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for start in range(0, lines, 100_000):
            f.write("".join(row(i) for i in range(start, min(lines, start + 100_000))))  # type: ignore[operator]


def make_meta(folder: Path, scale: float) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    n = {f: int(r * scale) for f, r in ROWS.items()}
    atoms, concepts = n["MRCONSO"], n["MRCONSO"] // 5  # bench_mrconso: 5 atoms a concept
    rng = random.Random(7)
    rels = ("RO", "RB", "RN", "SY", "PAR", "CHD")
    if not (folder / "MRCONSO.RRF").exists():
        generate(folder / "MRCONSO.RRF", atoms)
    _write(folder / "MRREL.RRF", n["MRREL"], lambda i: (
        f"C{9000000 + rng.randrange(concepts):07d}|A{90000000 + rng.randrange(atoms)}|AUI|"
        f"{rels[i % 6]}|C{9000000 + rng.randrange(concepts):07d}|A{90000000 + rng.randrange(atoms)}"
        f"|AUI|isa|R{i:09d}||SNOMEDCT_US|SNOMEDCT_US|{i % 3}||N|256|\n"))  # fmt: skip
    _write(folder / "MRSTY.RRF", n["MRSTY"], lambda i: (
        f"C{9000000 + i * concepts // max(1, n['MRSTY']):07d}|T{40 + i % 90:03d}|B2.2.1.{i % 9}|"
        f"Invented Type {i % 90}|AT{i:08d}|256|\n"))  # fmt: skip
    _write(folder / "MRDEF.RRF", n["MRDEF"], lambda i: (
        f"C{9000000 + i:07d}|A{90000000 + 5 * i}|AT{i:08d}||MSH|An invented definition of "
        f"concept {i}, long enough to look like one.|N|256|\n"))  # fmt: skip
    _write(folder / "MRHIER.RRF", n["MRHIER"], lambda i: (
        f"C{9000000 + i // 5:07d}|A{90000000 + i}|1|A{90000000 + i // 2}|SNOMEDCT_US|isa|"
        f"A90000000.A{90000000 + i // 4}.A{90000000 + i // 2}||256|\n"))  # fmt: skip


def timed(cmd: list[str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return time.perf_counter() - started, done.stdout


BUILD = """
import json, resource, sys, time
from pathlib import Path
from tempmedbench_synonyms.mrconso.index import LocalIndex
ix = LocalIndex(Path(sys.argv[1]), index_dir=Path(sys.argv[2]))
print(json.dumps({b.file: [b.rows, b.bytes, b.seconds] for b in ix.build()}))
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scale", type=float, default=0.15)
    parser.add_argument("--keep", type=Path, default=Path("bench/out/meta"))
    args = parser.parse_args()
    meta = args.keep
    make_meta(meta, args.scale)
    files = ["MRCONSO", "MRREL", "MRSTY", "MRDEF", "MRHIER"]
    sizes = {f: (meta / f"{f}.RRF").stat().st_size for f in files}
    with tempfile.TemporaryDirectory(dir=meta.parent) as tmp:
        floor = {}
        for f in files:
            db = Path(tmp) / f"{f}.db"
            floor[f], _ = timed(["sqlite3", str(db), "-cmd", ".mode list", "-cmd",
                                 ".separator |", f".import {meta / f'{f}.RRF'} t"])  # fmt: skip
        seconds, out = timed([sys.executable, "-c", BUILD, str(meta), str(Path(tmp) / "idx")])
        built, peak = out.splitlines()
        parts = json.loads(built)
    print(f"{'file':8} {'rows':>9} {'import/s':>10} {'build/s':>10} {'ratio':>6}")
    for f in files:
        rows, _, secs = parts[f]
        print(f"{f:8} {rows:>9,} {rows / floor[f]:>10,.0f} {rows / secs:>10,.0f} "
              f"{secs / floor[f]:>6.2f}")  # fmt: skip
    total_floor = sum(floor.values())
    index_bytes = sum(b for _, b, _ in parts.values()) / sum(sizes.values())
    print(f"all: import {total_floor:.1f} s, build {seconds:.1f} s (process, import included): "
          f"{seconds / total_floor:.2f}x (target 3x); index {index_bytes:.2f}x the files' bytes "
          f"(target 2x); peak {peak} MB (target 300)")  # fmt: skip
    shutil.rmtree(Path(tmp), ignore_errors=True)


if __name__ == "__main__":
    main()
