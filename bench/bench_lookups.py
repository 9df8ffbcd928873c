"""Benchmark ``umls search --file`` of many terms against the loopback fake UTS.

    .venv/bin/python bench/bench_lookups.py [--inputs 1000] [--latency 0.15] [--rate 15]
                                            [--server-limit 20] [--workers 8] [--runs 5]

It serves invented MRCONSO rows (``testing.invented_rows``) from ``testing.FakeUtsServer`` on
127.0.0.1, with a fixed delay per answer and a server-side limit of N requests in any one second
(a 429 beyond it), writes one invented concept name a line to a file, and runs the command a user
runs, ``tempmedbench-synonyms umls search --file TERMS --json``, release ``current``:

1. cold: one process, empty cache: the requests a second achieved between the first and the last
   arrival, against ``--rate``, and the 429s;
2. warm: the same command in fresh processes, everything cached (``current`` too);
3. bare import: fresh processes that only import what the command imports to run.

Targets (issue 18): at least 0.9 of ``--rate`` with no 429; a warm rerun within 2x the import
it needs. Nothing is written outside the temporary folder; no data is committed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tempmedbench_synonyms.testing import (
    CANARY_KEY,
    FakeUts,
    FakeUtsData,
    FakeUtsServer,
    Faults,
    find_secret,
)
from tempmedbench_synonyms.testing.invented import invented_rows

#: The command line tool, beside this Python (its console script: the quick exit users get).
TOOL = str(Path(sys.executable).with_name("tempmedbench-synonyms"))
#: What the command imports to run: the CLI, the client, the batch, the cached session.
BARE = (
    "import tempmedbench_synonyms.cli, tempmedbench_synonyms.umls, "
    "tempmedbench_synonyms.uts.batch, tempmedbench_synonyms.uts.session"
)


def _wall(cmd: list[str], env: dict[str, str], runs: int) -> tuple[float, str]:
    """Median wall time of ``runs`` fresh processes running ``cmd``, and the last one's stdout."""
    times = []
    out = ""
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
        times.append(time.perf_counter() - start)
        out = done.stdout
    return statistics.median(times), out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=1000, help="terms searched")
    parser.add_argument("--latency", type=float, default=0.15, help="seconds per answer")
    parser.add_argument("--rate", type=float, default=15.0, help="client --rate (the cap)")
    parser.add_argument("--server-limit", type=int, default=20, help="server: max per second")
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--runs", type=int, default=5, help="processes per timing")
    args = parser.parse_args()
    print(f"cores {os.cpu_count()}, Python {sys.version.split()[0]}")

    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env["UMLS_API_KEY"] = CANARY_KEY
    with tempfile.TemporaryDirectory(prefix="bench-lookups-") as tmp:
        root = Path(tmp)
        env["TEMPMEDBENCH_STATE_DIR"] = str(root / "state")
        env["TEMPMEDBENCH_CACHE_DIR"] = str(root / "cache")
        data = FakeUtsData.from_lines(invented_rows(args.inputs))
        terms = sorted({data.by_cui[cui][0].name for cui in data.by_cui})[: args.inputs]
        (root / "terms.txt").write_text("\n".join(terms) + "\n", encoding="utf-8")
        faults = Faults(latency=args.latency, rate_limit=args.server_limit)
        fake = FakeUts(data, api_key=CANARY_KEY, faults=faults)
        with FakeUtsServer(fake) as server:
            command = [TOOL, "umls", "search", "--file", str(root / "terms.txt"), "--json",
                       "--base-url", server.base_url, "--rate", f"{args.rate:g}",
                       "--workers", str(args.workers)]  # fmt: skip
            start = time.perf_counter()
            done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
            cold = time.perf_counter() - start
            answers = [json.loads(line) for line in done.stdout.splitlines()]
            arrivals = fake.arrivals
            span = arrivals[-1] - arrivals[0] if len(arrivals) > 1 else float("nan")
            sent = len(fake.seen)
            warm, warm_out = _wall(command, env, args.runs)
            sent_warm = len(fake.seen) - sent
        bare, _ = _wall([sys.executable, "-c", BARE], env, args.runs)
        leaks = find_secret(CANARY_KEY, texts={"cold": done.stdout + done.stderr, "warm": warm_out},
                            folders=[root / "cache"])  # fmt: skip

    found = sum(a["outcome"] == "found" for a in answers)
    same = [json.loads(line) for line in warm_out.splitlines()] == answers
    achieved = (sent - 1) / span if span > 0 else float("nan")
    print()
    print(f"cold            {found} of {len(terms)} terms found (exit {done.returncode}), "
          f"{sent} requests seen by the server ({fake.count(429)} answered 429), "
          f"wall {cold:.1f} s")  # fmt: skip
    print(f"rate            {achieved:.2f} req/s between first and last request = "
          f"{achieved / args.rate:.3f} of the --rate {args.rate:g} cap, {args.workers} workers, "
          f"{args.latency * 1000:.0f} ms a request")  # fmt: skip
    print(f"warm            {sent_warm} requests seen by the server, the same {len(answers)} "
          f"answers: {same}; median wall {warm * 1000:.0f} ms over {args.runs} fresh "
          "processes")  # fmt: skip
    print(f"bare import     {bare * 1000:.0f} ms ({BARE})")
    print(f"warm / bare     {warm / bare:.2f}x the import it needs (target 2x)")
    print(f"canary key      {'found in ' + ', '.join(leaks) if leaks else 'nowhere'}")
    ok = (
        found == len(terms)
        and fake.count(429) == 0
        and achieved / args.rate >= 0.9
        and sent_warm == 0
        and same
        and warm / bare <= 2
        and not leaks
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
