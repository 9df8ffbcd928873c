"""Benchmark two regenerations at once against one loopback fake UTS (invented data, numbers).

    .venv/bin/python bench/bench_rate_shared.py [--concepts 150] [--rate 15] [--rate-b RATE]
                        [--concepts-a N] [--server-limit 20] [--latency 0.05] [--unshared]

It generates an invented release (``testing.make_invented_release``) in a temporary folder and
serves its MRCONSO rows from ``testing.FakeUtsServer`` on 127.0.0.1, which answers 429 to any
request beyond ``--server-limit`` in one second (as UTS does past 20 a second per IP address).
Then it starts two ``regenerate`` processes of the CLI at the same moment, each with its own
``--cache-dir`` and ``--out`` but one shared rate state (``TEMPMEDBENCH_STATE_DIR``, as two runs
of one user share the platformdirs state folder), and prints what the server saw: 429 answers
(target 0), the most requests in any one second (target: at most the server's limit) and whether
the two runs together stayed within ``--rate`` (with ``--rate-b``, the second run's rate, within
the larger of the two), and how long each run took: a fair share lets the slower run finish in
about the time it would take alone. ``--concepts-a`` gives the first run a smaller release (a
short run beside a long one). ``--unshared`` also runs the pair with a state folder each,
which is how every run behaved before the budget was shared (for comparison).

What a server sees of two real processes is measured here, not in the tests
(tests/uts/test_ratelimit.py holds the shared state's own record of the starts to the window,
and that a slow run ends while a fast one still sends): ``--rate 10 --server-limit 10
--concepts 24 --questions 24`` for two runs at 10 (at most 10 in any second), ``--rate 2
--rate-b 20 --concepts-a 3 --concepts 40 --questions 40`` for a slow run beside a fast one (it
ends first, in about the time it takes alone).

Nothing is written outside the temporary folder; no data is committed.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from tempmedbench_synonyms.testing import (
    CANARY_KEY,
    FakeUts,
    FakeUtsData,
    FakeUtsServer,
    Faults,
    InventedRelease,
    find_secret,
    make_invented_release,
)


def _pair(
    rels: tuple[InventedRelease, InventedRelease],
    args: argparse.Namespace,
    root: Path,
    *,
    shared: bool,
) -> tuple[FakeUts, list[dict[str, object]], list[float], list[str]]:
    """Two concurrent CLI regenerations; (the fake, their --json reports, wall s of each, leaks)."""
    fake = FakeUts(
        FakeUtsData.from_mrconso(rels[1].mrconso),  # the larger: the other's rows come first
        api_key=CANARY_KEY,
        faults=Faults(latency=args.latency, rate_limit=args.server_limit),
    )
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env["UMLS_API_KEY"] = CANARY_KEY
    label = "shared" if shared else "unshared"
    folders = []
    with FakeUtsServer(fake) as server:
        procs = []
        start = time.perf_counter()
        for run, rate, rel in (("a", args.rate, rels[0]), ("b", args.rate_b, rels[1])):
            state = root / label / ("state" if shared else f"state-{run}")
            cache, out = root / label / f"cache-{run}", root / label / f"out-{run}"
            folders += [state, cache, out]
            cmd = [
                sys.executable, "-c", "from tempmedbench_synonyms.cli import main; main()",
                "regenerate", str(rel.folder), "--base-url", server.base_url,
                "--cache-dir", str(cache), "--out", str(out), "--rate", f"{rate:g}",
                "--json", "-q",
            ]  # fmt: skip
            procs.append(
                subprocess.Popen(
                    cmd,
                    env={**env, "TEMPMEDBENCH_STATE_DIR": str(state)},
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                )
            )
        outputs: list[tuple[bytes, bytes]] = [(b"", b"")] * 2
        walls = [0.0, 0.0]

        def finish(i: int) -> None:
            outputs[i] = procs[i].communicate(timeout=900)
            walls[i] = time.perf_counter() - start

        waiters = [threading.Thread(target=finish, args=(i,)) for i in range(2)]
        for w in waiters:
            w.start()
        for w in waiters:
            w.join()
    reports = [json.loads(out) for out, _ in outputs]
    texts = {f"{label} {i}": (out + err).decode() for i, (out, err) in enumerate(outputs)}
    leaks = find_secret(CANARY_KEY, texts=texts, folders=[f for f in folders if f.exists()])
    return fake, reports, walls, leaks


def _line(label: str, fake: FakeUts, reports: list[dict[str, object]], walls: list[float],
          args: argparse.Namespace) -> bool:  # fmt: skip
    arrivals = sorted(fake.arrivals)
    span = arrivals[-1] - arrivals[0] if len(arrivals) > 1 else float("nan")
    together = (len(arrivals) - 1) / span if span > 0 else float("nan")
    busiest = fake.max_in_window(1.0)
    larger = max(args.rate, args.rate_b)
    within = busiest <= math.floor(larger) and together <= larger
    verdict = "within" if within else "NOT within"
    print(f"{label:<9} {len(arrivals)} requests seen, "
          f"{fake.count(429)} answered 429 (target 0); at most {busiest} in any 1 s "
          f"(target <= {args.server_limit}); together {together:.2f} req/s, "
          f"{verdict} --rate {larger:g}")  # fmt: skip
    for run, rate, report, wall in zip("ab", (args.rate, args.rate_b), reports, walls, strict=True):
        print(
            f"{'':<9} run {run} (--rate {rate:g}): {report['outcome']} "
            f"(exit {report['exit_code']}), {report['requests']} requests, {wall:.1f} s"
        )
    return within and fake.count(429) == 0 and all(r["outcome"] == "verified" for r in reports)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concepts", type=int, default=150)
    parser.add_argument("--concepts-a", type=int, help="concepts of the first run's release")
    parser.add_argument("--questions", type=int, default=300)
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per answer")
    parser.add_argument("--rate", type=float, default=15.0, help="client --rate of both runs")
    parser.add_argument("--rate-b", type=float, help="client --rate of the second run")
    parser.add_argument("--server-limit", type=int, default=20, help="server: max per second")
    parser.add_argument("--unshared", action="store_true", help="also run without sharing")
    args = parser.parse_args()
    if args.rate_b is None:
        args.rate_b = args.rate

    print(f"cores           {os.cpu_count()}")
    with tempfile.TemporaryDirectory(prefix="bench-rate-shared-") as tmp:
        root = Path(tmp)
        rel = make_invented_release(root / "gen", concepts=args.concepts, questions=args.questions)
        rel_a = rel
        if args.concepts_a is not None:
            n = min(args.concepts_a, args.concepts)
            rel_a = make_invented_release(root / "gen-a", concepts=n, questions=n)
        print(f"release         {rel_a.concepts} and {rel.concepts} concepts (invented data), "
              f"two runs at once, --rate {args.rate:g} and {args.rate_b:g}")  # fmt: skip
        fake, reports, walls, leaks = _pair((rel_a, rel), args, root, shared=True)
        ok = _line("shared", fake, reports, walls, args) and not leaks
        if args.unshared:
            fake, reports, walls, more = _pair((rel_a, rel), args, root, shared=False)
            _line("unshared", fake, reports, walls, args)
            leaks += more
    print(f"canary key      {'found in ' + ', '.join(leaks) if leaks else 'nowhere'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
