"""Benchmark Ctrl-C and SIGTERM: how long each long-running command takes to end, with which exit
code, and what it leaves (not a test: it prints numbers).

    python bench/bench_ctrlc.py [--lines 4000000] [--mrconso PATH] [--gps-concepts 400000]

Generates, in a temporary folder deleted afterwards (all invented): a release of 60 concepts, an
MRCONSO.RRF of its rows after ``--lines`` filler rows (or after the rows of ``--mrconso``, such
as bench_mrconso.py's bench/out/MRCONSO-4000000.RRF), its gzip, and a GPS file and release of
``--gps-concepts`` concepts (bench_gps.py's generator). It serves a fake UTS on 127.0.0.1 that
answers after 0.3 s, and another that never answers (a stall).

Each command first runs to its end once (its exit code and time are printed), then runs in a
session of its own and is sent SIGINT at its process group (as a terminal's Ctrl-C is) or
SIGTERM at its process (as ``kill`` is) at a few moments: ``start`` (0.05 s: the interpreter and
the CLI's imports), ``30%``, ``60%`` and ``90%`` of its whole run (the work: requests, the
MRCONSO scan and its worker processes, the GPS load), ``workers`` (as soon as the MRCONSO scan's
first worker process exists) and ``write`` (as soon as a temporary file of the output exists).
It prints, per run: the exit code (target: 130 for
SIGINT, 143 for SIGTERM), the time from the signal to the exit (target: under 2 s), processes of
the session left after the exit, temporary files left (``.*.tmp``), whether stderr has a
traceback, and the ``--json`` outcome (target: ``interrupted``; or, for a signal that came once
the work was done, the whole run's outcome and exit code). A run that ended before its moment is
said so and not counted. Last, the worst time and the count of runs off target, with
``os.cpu_count()``. Run from the repository root:

    .venv/bin/python bench/bench_ctrlc.py
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

from tempmedbench_synonyms.testing import (
    CANARY_KEY,
    FakeUts,
    FakeUtsData,
    FakeUtsServer,
    Faults,
    make_invented_release,
)

sys.path.insert(0, str(Path(__file__).parent))
from bench_gps import GPS_NAME, generate

BIN = Path(sys.executable).parent
#: A filler row (invented): ``{0}`` its number, ``{1}`` its CUI's digits.
FILLER = "C{1:07d}|ENG|P|L{1:07d}|PF|S{0:08d}|Y|A5{0:07d}||{0}||MSH|PT|{0}|filler {0}|0|N||\n"


def session(sid: int) -> list[int]:
    """The processes of session ``sid`` (Linux /proc), zombies included."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat[stat.rindex(")") + 2 :].split()[3]) == sid:
                found.append(int(entry))
    return found


def temporary_files(folders: list[Path]) -> list[Path]:
    return [p for f in folders if f.exists() for p in f.rglob(".*.tmp")]


def _drain(stream: IO[bytes], into: list[bytes]) -> None:
    into.extend(iter(stream.readline, b""))


def whole(argv: list[str], env: dict[str, str]) -> tuple[int, float]:
    """The exit code and time of a run left to its end."""
    start = time.monotonic()
    done = subprocess.run(argv, env=env, capture_output=True, stdin=subprocess.DEVNULL)
    return done.returncode, time.monotonic() - start


def run(
    argv: list[str],
    env: dict[str, str],
    sig: int,
    moment: str,
    folders: list[Path],
    length: float,
) -> dict[str, object] | None:
    """One run, stopped by ``sig`` at ``moment`` (of a run that takes ``length`` seconds);
    ``None`` if it ended before."""
    start = time.monotonic()
    proc = subprocess.Popen(
        argv, env=env, start_new_session=True, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    out: list[bytes] = []
    err: list[bytes] = []
    readers = [threading.Thread(target=_drain, args=(s, b)) for s, b in ((proc.stdout, out),
               (proc.stderr, err))]  # fmt: skip
    for r in readers:
        r.start()
    at = 0.05 if moment == "start" else 0.0
    if moment.endswith("%"):
        at = length * int(moment[:-1]) / 100
    ready: Callable[[], bool] = {
        "workers": lambda: len(session(proc.pid)) >= 2,
        "write": lambda: bool(temporary_files(folders[:1])),
    }.get(moment, lambda: time.monotonic() - start >= at)
    pause = threading.Event()
    while proc.poll() is None and not ready() and time.monotonic() - start < 60:
        pause.wait(0.002)
    if proc.poll() is not None:
        proc.wait()
        for r in readers:
            r.join()
        return None
    sent = time.monotonic()
    if sig == signal.SIGINT:
        os.killpg(proc.pid, sig)
    else:
        os.kill(proc.pid, sig)
    try:
        proc.wait(timeout=30)
        seconds: float | None = time.monotonic() - sent
    except subprocess.TimeoutExpired:
        seconds = None
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    left = [p for p in session(proc.pid) if p != proc.pid]
    for r in readers:
        r.join()
    text = b"".join(out).decode(errors="replace").strip()
    outcome = "(no report)"
    for candidate in (text, text.splitlines()[-1] if text else ""):  # a JSON Lines stream's last
        try:
            outcome = json.loads(candidate)["outcome"]
            break
        except (ValueError, KeyError, TypeError):
            continue
    return {
        "code": proc.returncode,
        "seconds": seconds,
        "left": len(left),
        "tmp": len(temporary_files(folders)),
        "traceback": b"Traceback" in b"".join(err),
        "outcome": outcome,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=4_000_000)
    ap.add_argument("--mrconso", type=Path, help="filler rows from this MRCONSO.RRF instead")
    ap.add_argument("--gps-concepts", type=int, default=400_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-ctrlc-") as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        rel = make_invented_release(root / "gen", concepts=60, questions=60)
        big = root / "2099AA" / "META" / "MRCONSO.RRF"
        big.parent.mkdir(parents=True)
        with big.open("wb") as f:
            if args.mrconso:
                with args.mrconso.open("rb") as filler:
                    shutil.copyfileobj(filler, f, 1 << 22)
            else:
                for start in range(0, args.lines, 100_000):
                    block = range(start, min(start + 100_000, args.lines))
                    f.write("".join(FILLER.format(k, 8000000 + k // 4) for k in block).encode())
            f.write(rel.mrconso.read_bytes())
        with big.open("rb") as src, gzip.open(root / "MRCONSO-2099AA.RRF.gz", "wb", 1) as dst:
            shutil.copyfileobj(src, dst, 1 << 22)
        gps_folder = root / "gps"
        gps_folder.mkdir()
        generate(gps_folder, args.gps_concepts, args.gps_concepts // 4, 4500, 20990101)
        rows = [line.split("|") for line in rel.mrconso.read_text().splitlines()]
        codes = root / "codes.txt"
        codes.write_text("".join(f"{r[11]}\t{r[13]}\n" for r in rows[:300]))
        print(f"generated {big.stat().st_size / 1e6:.0f} MB MRCONSO.RRF, its gzip and a GPS of "
              f"{args.gps_concepts} concepts in {time.perf_counter() - t0:.1f} s; "
              f"os.cpu_count() = {os.cpu_count()}")  # fmt: skip

        data = FakeUtsData.from_mrconso(rel.mrconso)
        slow = FakeUts(data, api_key=CANARY_KEY, faults=Faults(latency=0.3))
        stall = FakeUts(data, api_key=CANARY_KEY, faults=Faults(rate=1.0, kinds=("stall",),
                        stall=120))  # fmt: skip
        with FakeUtsServer(slow) as server, FakeUtsServer(stall) as stalled:
            tool = str(BIN / "tempmedbench-synonyms")
            regen = str(BIN / "tempmedbench-regenerate-synonyms")
            out, cache = root / "out", root / "cache"
            gps = gps_folder / GPS_NAME
            rest = ["--rate", "20", "--json"]
            commands: list[tuple[str, list[str], str]] = [
                ("regenerate (REST)", [regen, str(rel.folder), "--out", str(out), *rest], "slow"),
                ("regenerate --mrconso", [regen, str(rel.folder), "--mrconso", str(big), "--out",
                 str(out), "--json"], ""),
                ("regenerate --mrconso .gz", [regen, str(rel.folder), "--mrconso",
                 str(root / "MRCONSO-2099AA.RRF.gz"), "--out", str(out), "--json"], ""),
                ("umls crosswalk --file (REST)", [tool, "umls", "crosswalk", "--file", str(codes),
                 "--umls-release", "2099AA", *rest], "slow"),
                ("umls crosswalk --file --mrconso", [tool, "umls", "crosswalk", "--file",
                 str(codes), "--mrconso", str(big), "--umls-release", "2099AA", "--json"], ""),
                ("doctor (a stalled UTS)", [tool, "doctor", str(rel.folder), "--json"], "stall"),
                ("gps validate", [tool, "gps", "validate", str(gps_folder / "release"), "--gps",
                 str(gps), "--json"], ""),
            ]  # fmt: skip
            print(f"\n{'command':<32} {'signal':<8} {'moment':<8} {'exit':>5} {'seconds':>8} "
                  f"{'left':>5} {'tmp':>4} {'trace':>6}  --json")  # fmt: skip
            worst, off, runs = 0.0, 0, 0
            for name, argv, uts in commands:
                base = {"slow": server.base_url, "stall": stalled.base_url}.get(uts, "")
                env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
                env.update(UMLS_API_KEY=CANARY_KEY, UMLS_BASE_URL=base or server.base_url,
                           TEMPMEDBENCH_CACHE_DIR=str(cache),
                           TEMPMEDBENCH_STATE_DIR=str(root / "state"))  # fmt: skip
                moments = ["start", "30%", "60%", "90%"]
                if "--mrconso" in name and ".gz" not in name:
                    moments.append("workers")
                if name.startswith("regenerate"):
                    moments.append("write")
                length, code = 10.0, None  # a stalled doctor never ends: at 3, 6 and 9 s
                if uts != "stall":
                    shutil.rmtree(out, ignore_errors=True)
                    shutil.rmtree(cache, ignore_errors=True)
                    code, length = whole(argv, env)
                    print(f"{name:<32} {'(none)':<8} {'whole':<8} {code:>5} {length:>8.3f}")
                for sig in (signal.SIGINT, signal.SIGTERM):
                    for moment in moments:
                        shutil.rmtree(out, ignore_errors=True)
                        shutil.rmtree(cache, ignore_errors=True)
                        got = run(argv, env, sig, moment, [out, cache], length)
                        label = signal.Signals(sig).name
                        if got is None:
                            print(f"{name:<32} {label:<8} {moment:<8} (ended before)")
                            continue
                        runs += 1
                        secs = got["seconds"]
                        assert secs is None or isinstance(secs, float)
                        worst = max(worst, 99.0 if secs is None else secs)
                        want = 130 if sig == signal.SIGINT else 143
                        # A signal after the work is ignored: the whole report, its own exit.
                        after = got["code"] == code and got["outcome"] != "(no report)"
                        bad = (got["code"] not in (want, code) or secs is None or secs > 2
                               or got["left"] or got["tmp"] or got["traceback"]
                               or (got["outcome"] != "interrupted" and not after))  # fmt: skip
                        off += bool(bad)
                        shown = "hang" if secs is None else f"{secs:.3f}"
                        print(f"{name:<32} {label:<8} {moment:<8} {got['code']:>5} {shown:>8} "
                              f"{got['left']:>5} {got['tmp']:>4} {got['traceback']!s:>6}  "
                              f"{got['outcome']}{'  <- off target' if bad else ''}"
                              f"{'  (signal after the work)' if after else ''}")  # fmt: skip
        print(f"\n{runs} runs stopped: worst time to exit {worst:.3f} s (target < 2 s); "
              f"{off} off target (exit code, time, a process or temporary file left, a "
              f"traceback, or no interrupted report); os.cpu_count() = "
              f"{os.cpu_count()}")  # fmt: skip


if __name__ == "__main__":
    main()
