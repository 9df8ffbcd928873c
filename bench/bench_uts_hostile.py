"""Benchmark the UTS client against a hostile loopback server (invented data; prints numbers).

    .venv/bin/python bench/bench_uts_hostile.py [--concepts 16] [--workers 8] [--runs 5]

It generates an invented release (``testing.make_invented_release``) in a temporary folder and
serves it from ``tests/uts/hostile_server.py`` on 127.0.0.1, then runs the CLI's regeneration in
fresh processes:

1. peak memory (the child's RSS high-water mark, from ``os.wait4``) of a regeneration whose every
   atoms request gets an endless chunked body, then a gzip bomb (80 KiB inflating to 80 MiB),
   then a well-behaved server for comparison (target: under 250 MB with 8 workers);
2. time from SIGINT to exit while every worker is stuck in a read of a server that accepted the
   request and never answers (target: under 2 s).

Nothing is written outside the temporary folder; no data is committed.
"""

from __future__ import annotations

import argparse
import os
import signal
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
    InventedRelease,
    find_secret,
    make_invented_release,
)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "uts"))
from hostile_server import HostileServer, Plan


def _env(cache: Path) -> dict[str, str]:
    """A child's environment: the canary key, its own cache and rate state (so that no other
    run on this machine shares its rate budget), no proxy."""
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env.update(UMLS_API_KEY=CANARY_KEY, TEMPMEDBENCH_CACHE_DIR=str(cache), NO_PROXY="127.0.0.1",
               TEMPMEDBENCH_STATE_DIR=str(cache.parent / f"state-{cache.name}"))  # fmt: skip
    return env


def _cmd(rel: InventedRelease, base_url: str, out: Path, workers: int) -> list[str]:
    return [
        sys.executable, "-c", "from tempmedbench_synonyms.cli import main; main()",
        "regenerate", str(rel.folder), "--base-url", base_url, "--out", str(out),
        "--workers", str(workers), "--rate", "20", "--timeout", "10", "-q",
    ]  # fmt: skip


def _peak(cmd: list[str], env: dict[str, str]) -> tuple[int, float, float, str]:
    """(exit code, peak RSS in MB, wall seconds, stderr) of one child."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)  # Popen must not wait again
        err.seek(0)
        text = err.read().decode("utf-8", "replace")
    return proc.returncode, usage.ru_maxrss / 1024, time.perf_counter() - start, text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concepts", type=int, default=16)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--runs", type=int, default=5, help="Ctrl-C timings")
    args = parser.parse_args()

    print(f"cores           {os.cpu_count()} (os.cpu_count)")
    with tempfile.TemporaryDirectory(prefix="bench-hostile-") as tmp:
        root = Path(tmp)
        rel = make_invented_release(root / "gen", concepts=args.concepts, questions=args.concepts)
        data = FakeUtsData.from_mrconso(rel.mrconso)
        texts: dict[str, str] = {}

        def atoms_only(kind: str | None) -> Plan:
            return lambda path, n: kind if "/atoms" in path or "/AUI/" in path else None

        for kind in ("endless", "gzip_bomb", None):
            fake = FakeUts(data, api_key=CANARY_KEY)
            with HostileServer(fake, atoms_only(kind)) as server:
                code, peak, wall, err = _peak(
                    _cmd(rel, server.base_url, root / f"out-{kind}", args.workers),
                    _env(root / f"cache-{kind}"),
                )
                hits = server.count(kind)
            texts[f"stderr-{kind}"] = err
            label, what = (kind, "hostile answers") if kind else ("well-behaved", "answers")
            print(f"peak memory     {label:13s} {peak:6.1f} MB RSS high-water (exit {code}, "
                  f"{hits} {what}, {wall:.1f} s, {args.workers} workers)")  # fmt: skip

        stops, codes = [], []
        for run in range(args.runs):
            fake = FakeUts(data, api_key=CANARY_KEY)
            with HostileServer(fake, atoms_only("silent")) as server:
                proc = subprocess.Popen(
                    _cmd(rel, server.base_url, root / f"out-int{run}", args.workers),
                    env=_env(root / f"cache-int{run}"),
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                )
                end = time.monotonic() + 60
                while server.count("silent") < args.workers and time.monotonic() < end:
                    time.sleep(0.01)
                time.sleep(0.3)  # let the workers settle into their reads
                sent = time.perf_counter()
                proc.send_signal(signal.SIGINT)
                _, err_bytes = proc.communicate(timeout=60)
                stops.append(time.perf_counter() - sent)
                texts[f"stderr-int{run}"] = err_bytes.decode("utf-8", "replace")
                stuck = server.count("silent")
            codes.append(proc.returncode)
        print(f"Ctrl-C to exit  median {statistics.median(stops) * 1000:.0f} ms, max "
              f"{max(stops) * 1000:.0f} ms over {args.runs} runs ({stuck} workers stuck in a "
              f"read; exit codes {sorted(set(codes))})")  # fmt: skip
        leaks = find_secret(CANARY_KEY, texts=texts, folders=[root])
        print(f"canary key      {'nowhere' if not leaks else 'FOUND in ' + ', '.join(leaks)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
