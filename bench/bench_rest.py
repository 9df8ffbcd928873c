"""Benchmark the UMLS REST path against the loopback fake UTS (invented data; prints numbers).

    .venv/bin/python bench/bench_rest.py [--concepts 1500] [--questions 4500] [--latency 0.15]
                                         [--rate 20] [--server-limit 20] [--workers 8]

It generates an invented release (``testing.make_invented_release``) in a temporary folder,
serves its MRCONSO rows from ``testing.FakeUtsServer`` on 127.0.0.1 with a fixed delay per answer
and a server-side limit of N requests in any one second (a 429 beyond it), then:

1. cold run: ``regenerate`` through ``rest_source`` (the CLI's factory), empty cache;
2. warm run: the same command line in a fresh process, everything cached;
3. bare imports: fresh processes that only import the package, its CLI, and the CLI with what a
   REST regeneration imports when it starts (the CLI imports the UTS client and the pipeline lazily,
   so that ``gps validate`` and ``--help`` start without them);
4. 429 answers, in fresh processes of the CLI: every atoms request answered 429 with a
   Retry-After beyond the 120 s budget (the run must end at once, as unavailable), and with one
   of 110 s (every worker pauses; the time from Ctrl-C to the end of the process).

Targets: at least 0.9 of the rate cap with no 429, the server's busiest second at most its limit
and at least 0.9 of the rate (the limit is used, not wasted), exactly one request per concept
whose atoms fit one page (plus the release probe), a warm run within 2x of the bare import of
what it runs (the CLI, ``sources``, ``regen.pipeline`` and the REST source, ``uts.session``:
``sources`` imports it only for a REST run), a run refused a Retry-After beyond
the budget ended within 10 s, and Ctrl-C in a 429 pause within 2 s.

The tests hold what must always be so (tests/test_rest_e2e.py: every request waits its turn at
the rate, on the limiter's own record; the run ends as unavailable; Ctrl-C ends the pause and
no woken worker sends anything); the times and rates a server sees are measured here. The
release of that test: ``--concepts 45 --questions 45 --latency 0.05``.
Nothing is written outside the temporary folder; no data is committed.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tempmedbench_synonyms.regen.pipeline import regenerate
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
from tempmedbench_synonyms.uts.options import UtsOptions
from tempmedbench_synonyms.uts.session import rest_source


def _wall(
    cmd: list[str], env: dict[str, str], runs: int
) -> tuple[float, subprocess.CompletedProcess[bytes]]:
    """Median wall time of ``runs`` fresh processes running ``cmd``."""
    times = []
    last = None
    for _ in range(runs):
        start = time.perf_counter()
        last = subprocess.run(cmd, env=env, capture_output=True, check=False)
        times.append(time.perf_counter() - start)
    assert last is not None
    return statistics.median(times), last


def _answered_429(
    rel: InventedRelease, root: Path, env: dict[str, str], retry_after: str, *, ctrl_c: bool
) -> tuple[int, float]:
    """A CLI regeneration against a fake that answers every atoms request 429 with
    ``retry_after``: (its exit code, seconds from its start, or from Ctrl-C once it says it
    pauses, to its end)."""
    fake = FakeUts(
        FakeUtsData.from_mrconso(rel.mrconso),
        api_key=CANARY_KEY,
        faults=Faults(script=[None], rate=1.0, kinds=("429",), retry_after=retry_after),
    )
    label = f"429-{retry_after}"
    with FakeUtsServer(fake) as server:
        cmd = [
            sys.executable, "-c", "from tempmedbench_synonyms.cli import main; main()",
            "regenerate", str(rel.folder), "--base-url", server.base_url,
            "--cache-dir", str(root / label / "cache"), "--out", str(root / label / "out"),
            "--json",
        ]  # fmt: skip
        start = time.perf_counter()
        with subprocess.Popen(
            cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        ) as proc:
            assert proc.stderr is not None
            if ctrl_c:
                for line in proc.stderr:
                    if "pausing all requests" in line:
                        break
                proc.send_signal(signal.SIGINT)
                start = time.perf_counter()
            proc.stderr.read()
            code = proc.wait(timeout=300)
    return code, time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concepts", type=int, default=1500)
    parser.add_argument("--questions", type=int, default=4500)
    parser.add_argument("--latency", type=float, default=0.15, help="seconds per answer")
    parser.add_argument("--rate", type=float, default=20.0, help="client --rate (the cap)")
    parser.add_argument("--server-limit", type=int, default=20, help="server: max per second")
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--runs", type=int, default=5, help="processes per timing")
    args = parser.parse_args()

    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env["UMLS_API_KEY"] = CANARY_KEY
    os.environ.update(UMLS_API_KEY=CANARY_KEY)
    with tempfile.TemporaryDirectory(prefix="bench-rest-") as tmp:
        root = Path(tmp)
        # The shared rate state (uts/ratelimit.py) in the temporary folder too, not the user's.
        env["TEMPMEDBENCH_STATE_DIR"] = os.environ["TEMPMEDBENCH_STATE_DIR"] = str(root / "state")
        t0 = time.perf_counter()
        rel = make_invented_release(root / "gen", concepts=args.concepts, questions=args.questions)
        print(f"generated {rel.concepts} concepts, {rel.questions} questions, {rel.queries} "
              f"queries in {time.perf_counter() - t0:.1f} s (invented data, {root})")  # fmt: skip
        fake = FakeUts(
            FakeUtsData.from_mrconso(rel.mrconso),
            api_key=CANARY_KEY,
            faults=Faults(latency=args.latency, rate_limit=args.server_limit),
        )
        cache = root / "cache"
        with FakeUtsServer(fake) as server:
            options = UtsOptions(
                base_url=server.base_url, cache_dir=cache, rate=args.rate, workers=args.workers
            )
            source = rest_source(options, progress=sys.stderr)
            start = time.perf_counter()
            report = regenerate(rel.folder, source, out_dir=root / "out-cold")
            cold = time.perf_counter() - start
            arrivals = fake.arrivals
            span = arrivals[-1] - arrivals[0] if len(arrivals) > 1 else float("nan")
            sent = len(fake.seen)

            cli = [
                sys.executable, "-c", "from tempmedbench_synonyms.cli import main; main()",
                "regenerate", str(rel.folder), "--base-url", server.base_url,
                "--cache-dir", str(cache), "--out", str(root / "out-warm"), "--json", "-q",
            ]  # fmt: skip
            warm, warm_run = _wall(cli, env, args.runs)
            warm_report = json.loads(warm_run.stdout)
            sent_warm = len(fake.seen) - sent
        bare_pkg, _ = _wall([sys.executable, "-c", "import tempmedbench_synonyms"], env, args.runs)
        bare_cli, _ = _wall(
            [sys.executable, "-c", "import tempmedbench_synonyms.cli"], env, args.runs
        )
        regen_imports = "import tempmedbench_synonyms.cli, tempmedbench_synonyms.sources, " + (
            "tempmedbench_synonyms.regen.pipeline, tempmedbench_synonyms.uts.session"
        )
        bare_run, _ = _wall([sys.executable, "-c", regen_imports], env, args.runs)
        bare_py, _ = _wall([sys.executable, "-c", "pass"], env, args.runs)
        beyond = _answered_429(rel, root, env, "150", ctrl_c=False)
        paused = _answered_429(rel, root, env, "110", ctrl_c=True)
        leaks = find_secret(
            CANARY_KEY,
            texts={
                "warm stdout": warm_run.stdout.decode(),
                "warm stderr": warm_run.stderr.decode(),
            },
            folders=[cache, root / "out-cold", root / "out-warm"],
        )

    print()
    print(f"cold run        outcome {report.outcome}, {report.requests} requests sent "
          f"({sent} seen by the server, {fake.count(429)} answered 429), "
          f"wall {cold:.1f} s")  # fmt: skip
    per_query = report.requests - 1
    print(f"requests        {per_query} for {rel.queries} queries "
          f"({'exactly one each' if per_query == rel.queries else 'NOT one each'}) "
          f"+ 1 release probe")  # fmt: skip
    achieved = (sent - 1) / span if span > 0 else float("nan")  # NaN > 0 is False
    overall = report.requests / cold
    print(f"rate            {achieved:.2f} req/s between first and last request = "
          f"{achieved / args.rate:.3f} of the --rate {args.rate:g} cap; "
          f"{overall:.2f} req/s over the whole run = {overall / args.rate:.3f}")  # fmt: skip
    print(f"                the run took {cold:.2f} s; its {report.requests} starts, "
          f"1/{args.rate:g} s apart at least, cannot take less than "
          f"{(report.requests - 1) / args.rate:.2f} s")  # fmt: skip
    n = args.server_limit
    tight = min((b - a for a, b in zip(arrivals, arrivals[n:], strict=False)), default=float("nan"))
    busiest = fake.max_in_window(1.0)
    print(f"rate window     at most {busiest} requests in any 1 s (server limit {n}; at least "
          f"{0.9 * args.rate:g} wanted: the limit used, not wasted); the tightest {n + 1} "
          f"consecutive arrivals spanned {tight:.3f} s")  # fmt: skip
    print(f"warm run        outcome {warm_report['outcome']}, {warm_report['requests']} requests "
          f"({sent_warm} seen), {warm_report['cache_hits']} cache hits, "
          f"median wall {warm * 1000:.0f} ms over {args.runs} fresh processes")  # fmt: skip
    print(f"bare imports    python -c 'pass' {bare_py * 1000:.0f} ms; "
          f"import tempmedbench_synonyms {bare_pkg * 1000:.0f} ms; "
          f"import tempmedbench_synonyms.cli {bare_cli * 1000:.0f} ms; "
          f"the CLI with what a REST run imports {bare_run * 1000:.0f} ms")  # fmt: skip
    print(f"warm / bare     {warm / bare_run:.2f}x the import of what it runs (target 2x), "
          f"{warm / bare_cli:.2f}x the CLI import, "
          f"{warm / bare_pkg:.2f}x the package import")  # fmt: skip
    print(f"429 beyond      Retry-After 150 s, beyond the budget: exit {beyond[0]} (4 wanted) "
          f"{beyond[1]:.2f} s after the start (target under 10 s)")  # fmt: skip
    print(f"Ctrl-C in 429   Retry-After 110 s, every worker paused: exit {paused[0]} (130 "
          f"wanted) {paused[1] * 1000:.0f} ms after Ctrl-C (target under 2 s)")  # fmt: skip
    print(f"canary key      {'found in ' + ', '.join(leaks) if leaks else 'nowhere'}")
    ok = (
        report.outcome == "verified"
        and per_query == rel.queries
        and fake.count(429) == 0
        and achieved / args.rate >= 0.9
        and 0.9 * args.rate <= busiest <= args.server_limit
        and beyond[0] == 4
        and beyond[1] < 10.0
        and paused[0] == 130
        and paused[1] < 2.0
        and warm_report["requests"] == 0
        and not leaks
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
