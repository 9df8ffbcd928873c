"""Benchmark a local crosswalk of 1,000 codes over a 4M-row MRCONSO.RRF (not a test: it prints
numbers; issue 18's figure: one pass, within 3x a bare line loop).

    python bench/bench_local_lookups.py [--lines 4000000] [--codes 1000] [--keep bench/out]

It reuses ``bench_mrconso.py``'s invented MRCONSO.RRF (4 million rows, about 500 MB, a full
release's mix of sources and languages; generated under ``--keep`` when it is not there yet),
picks 1,000 SNOMEDCT_US codes from rows spread over the whole file, and times, each in a fresh
process and best of five (the machine may be busy):

* the bare import of ``tempmedbench_synonyms.mrconso.lookup``;
* the fastest of three bare Python loops that read every line of the file in binary (``for
  line in f``, the same with a 1 MiB buffer, and ``readlines`` in 1 MiB batches);
* ``mrconso.lookup.answer_many`` answering the 1,000 crosswalks from the plain file (its run time
  less the bare import), with the worker processes it starts by default, then with none.

It prints the core count, the load average (the wall-clock ratio needs the cores free), the
crosswalk's ratio to the bare loop (target: at most 3x), the number of passes over the file
(target: one), the ratio of their CPU times (every process, the import left out: what the
crosswalk costs whatever else the machine does) and the peak memory.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_mrconso import generate

BARE_LOOPS = {
    "for line in f": """
import sys
with open(sys.argv[1], "rb") as f:
    for line in f:
        pass
""",
    "for line in f, 1 MiB buffer": """
import sys
with open(sys.argv[1], "rb", buffering=1 << 20) as f:
    for line in f:
        pass
""",
    "readlines, 1 MiB batches": """
import sys
with open(sys.argv[1], "rb") as f:
    while lines := f.readlines(1 << 20):
        for line in lines:
            pass
""",
}
IMPORT = "import tempmedbench_synonyms.mrconso.lookup"
CROSSWALK = """
import json, resource, sys
from pathlib import Path
from tempmedbench_synonyms.lookups import Crosswalk
from tempmedbench_synonyms.mrconso.lookup import answer_many
codes = json.load(open(sys.argv[2]))
workers = None if sys.argv[3] == "default" else int(sys.argv[3])
totals = []
answers = answer_many(Path(sys.argv[1]), "2099AA", [(c, Crosswalk("SNOMEDCT_US", c))
                      for c in codes], workers=workers, progress=lambda d, t: totals.append(t))
hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")]
me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({
    "found": sum(a.outcome == "found" for a in answers),
    "codes": sum(len(a.results) for a in answers),
    "read": totals[-1],
    "self_kb": int(hwm[0].split()[1]) if hwm else me.ru_maxrss,
    "children_kb": kids.ru_maxrss,
}))
"""


def best_of(cmd: list[str], runs: int = 5) -> tuple[float, float, str]:
    """The best wall-clock time of ``runs`` runs of ``cmd``, the CPU time of that run (its
    processes and theirs), and its output."""
    best, cpu, out = float("inf"), 0.0, ""
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        proc = subprocess.run(cmd, check=True, capture_output=True, text=True)
        wall = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if wall < best:
            best, out = wall, proc.stdout
            cpu = sum(getattr(after, f) - getattr(before, f) for f in ("ru_utime", "ru_stime"))
    return best, cpu, out


def pick_codes(path: Path, n: int, seed: int = 13) -> list[str]:
    """``n`` distinct SNOMEDCT_US codes from rows spread over the whole file (rows with
    SUPPRESS N: each code is found)."""
    rng = random.Random(seed)
    codes: dict[str, None] = {}
    with open(path, "rb") as f:
        for line in f:
            if b"|SNOMEDCT_US|" in line and rng.random() < 0.01:
                parts = line.split(b"|")
                if parts[11] == b"SNOMEDCT_US" and parts[16] == b"N":  # an atom that counts
                    codes[parts[13].decode()] = None
    return rng.sample(sorted(codes), n)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=4_000_000)
    ap.add_argument("--codes", type=int, default=1000)
    ap.add_argument("--keep", type=Path, default=Path(__file__).parent / "out",
                    help="generate into (or reuse) this folder (default bench/out)")  # fmt: skip
    args = ap.parse_args()
    args.keep.mkdir(parents=True, exist_ok=True)
    rrf = args.keep / f"MRCONSO-{args.lines}.RRF"
    if not rrf.exists():
        t = time.perf_counter()
        generate(rrf, args.lines)
        print(f"generated {rrf} in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    size = rrf.stat().st_size
    qfile = args.keep / f"crosswalk-{args.codes}.json"
    qfile.write_text(json.dumps(pick_codes(rrf, args.codes)))
    py = sys.executable
    best_of([py, "-c", BARE_LOOPS["for line in f"], str(rrf)], 1)  # warm the page cache
    t_import, cpu_import, _ = best_of([py, "-c", IMPORT])
    bare = {name: best_of([py, "-c", code, str(rrf)])[:2] for name, code in BARE_LOOPS.items()}
    fastest = min(bare, key=lambda name: bare[name][0])
    t_bare, cpu_bare = bare[fastest]
    print(f"cpu count         {os.cpu_count()} (load average {os.getloadavg()[0]:.2f} at start)")
    print(f"file              {size / 1e6:.0f} MB, {args.lines:,} lines")
    print(f"bare import       {t_import:.3f} s (cpu {cpu_import:.3f} s)")
    for name, (seconds, cpu) in bare.items():
        mark = ", the fastest" if name == fastest else ""
        print(f"bare loop         {seconds:.3f} s (cpu {cpu:.3f} s; {name}{mark})")
    for workers in ("default", "1"):
        t_run, cpu_run, out = best_of([py, "-c", CROSSWALK, str(rrf), str(qfile), workers])
        stats = json.loads(out)
        t_scan = t_run - t_import
        passes = stats["read"] / size
        label = "default workers" if workers == "default" else "no worker process"
        print(
            f"-- crosswalk of {args.codes:,} SNOMEDCT_US codes, {label}: {t_scan:.3f} s = "
            f"{t_scan / t_bare:.2f}x the bare loop (target: at most 3x); "
            f"{passes:g} pass{'es' if passes != 1 else ''} over the file (target: 1)"
        )
        print(
            f"   {stats['found']:,} codes found, {stats['codes']:,} codes of other sources "
            f"given; cpu {cpu_run - cpu_import:.3f} s in all processes less the import's "
            f"= {(cpu_run - cpu_import) / cpu_bare:.2f}x the bare loop's; peak memory "
            f"{stats['self_kb'] / 1024:.0f} MB main process, {stats['children_kb'] / 1024:.0f} "
            "MB largest worker"
        )
    print(f"load average      {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
