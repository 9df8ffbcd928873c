"""Benchmark what the pytest plugin adds to every pytest session of everyone who installs the
package (entry point ``pytest11``): the time to import ``tempmedbench_synonyms.pytest_plugin``
after pytest, and the modules that import adds.

Each run is a fresh interpreter that imports pytest, then times the import of the plugin alone
(``time.perf_counter`` around it); the best and the median of --repeat runs are printed, with the
number of modules added and whether any of the heavy ones is among them. ``--src`` measures
another checkout's ``src`` folder (put first on ``sys.path``), such as an older commit's in a
scratch worktree, with this interpreter's libraries. Run from the repository root:

    .venv/bin/python bench/bench_plugin_import.py
    git worktree add /tmp/old cb85469
    .venv/bin/python bench/bench_plugin_import.py --src /tmp/old/src
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HEAVY = ("rich", "multiprocessing", "http.server", "requests", "ssl", "pydantic")

CHILD = """
import json, sys, time
import pytest
before = set(sys.modules)
start = time.perf_counter()
import tempmedbench_synonyms.pytest_plugin
seconds = time.perf_counter() - start
added = sorted(set(sys.modules) - before)
print(json.dumps([seconds, added, tempmedbench_synonyms.__file__]))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--src", type=Path, default=Path(__file__).parent.parent / "src")
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": str(args.src.resolve())}
    times, added = [], []
    for _ in range(args.repeat + 1):  # the first run warms the page cache and writes the .pyc
        proc = subprocess.run(
            [sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=True
        )
        seconds, added, where = json.loads(proc.stdout)
        assert where.startswith(str(args.src.resolve())), where
        times.append(seconds)
    times = times[1:]
    heavy = [h for h in HEAVY if h in added]
    print(f"src: {args.src.resolve()}")
    print(f"cores: {os.cpu_count()}; Python {sys.version.split()[0]}; {args.repeat} runs")
    print(
        f"import of the plugin after pytest: best {min(times) * 1000:.1f} ms, "
        f"median {statistics.median(times) * 1000:.1f} ms"
    )
    print(f"modules it adds: {len(added)}; heavy among them: {', '.join(heavy) or 'none'}")


if __name__ == "__main__":
    main()
