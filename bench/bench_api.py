"""Benchmark ``ensure_synonyms`` when the files already verify: what a data loader pays per start.

    .venv/bin/python bench/bench_api.py [--concepts 1500] [--questions 4500] [--calls 200]

On the bundled demo release and on an invented release of the given size (generated in a
temporary folder, ``testing.make_invented_release``), it regenerates once from the invented
MRCONSO.RRF, then times the no-op call: in this process (the median of ``--calls`` calls), and
in fresh processes (import included), beside a bare ``python -c pass`` and a bare import of the
package. The no-op call builds no atom source: no key, no network, no cache. Nothing is written
outside the temporary folder; no data is committed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tempmedbench_synonyms import ensure_synonyms
from tempmedbench_synonyms.demo import demo_data
from tempmedbench_synonyms.testing import make_invented_release


def _median_call(release: Path, out: Path, calls: int) -> float:
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        ensure_synonyms(release, out=out)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _median_process(code: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concepts", type=int, default=1500)
    parser.add_argument("--questions", type=int, default=4500)
    parser.add_argument("--calls", type=int, default=200, help="no-op calls timed in process")
    parser.add_argument("--runs", type=int, default=7, help="fresh processes timed")
    args = parser.parse_args()
    print(f"cores {os.cpu_count()}, Python {sys.version.split()[0]}")
    with tempfile.TemporaryDirectory(prefix="bench-api-") as tmp:
        root = Path(tmp)
        demo = demo_data()
        invented = make_invented_release(
            root / "gen", concepts=args.concepts, questions=args.questions
        )
        cases = [
            ("demo release", demo.release, demo.mrconso),
            (f"invented {args.concepts} concepts, {args.questions} questions", invented.folder,
             invented.mrconso),
        ]  # fmt: skip
        for i, (label, release, mrconso) in enumerate(cases):
            out = root / f"out-{i}"
            start = time.perf_counter()
            ensure_synonyms(release, mrconso=mrconso, out=out)
            first = time.perf_counter() - start
            noop = _median_call(release, out, args.calls)
            code = (
                "from tempmedbench_synonyms import ensure_synonyms; "
                f"ensure_synonyms({str(release)!r}, out={str(out)!r})"
            )
            fresh = _median_process(code, args.runs)
            print(f"{label}: first call (regenerates) {first * 1000:.0f} ms; no-op call "
                  f"{noop * 1000:.2f} ms (median of {args.calls}); in a fresh process, import "
                  f"included, {fresh * 1000:.0f} ms (median of {args.runs})")  # fmt: skip
    bare = _median_process("pass", args.runs)
    package = _median_process("import tempmedbench_synonyms", args.runs)
    print(f"bare python -c pass {bare * 1000:.0f} ms; import tempmedbench_synonyms "
          f"{package * 1000:.0f} ms (the API itself is imported on first use)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
