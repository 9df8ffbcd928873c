"""Benchmark this client beside umls-python-client: the same searches and crosswalks, in one run,
against one loopback fake UTS with the same latency and the real UTS's limit.

    .venv/bin/python bench/bench_peers.py [--searches 1000] [--crosswalks 1000]
                                          [--latency 0.15] [--server-limit 20] [--rate 15]
                                          [--workers 8] [--missing 0.1] [--quick]

umls-python-client is installed (pinned, ``PEER_VERSION``) in this benchmark's own virtualenv,
``bench/out/peer-venv`` (ignored by git; created once, reused), never in the project's: it is no
dependency. ``bench/peer_driver.py`` runs it there, pointed at the fake by its own constructor
argument ``http_client`` (no patch).

The fake (``testing.FakeUtsServer`` on 127.0.0.1, invented concepts in SNOMEDCT_US, MSH and MTH:
``bench_fake.two_source_data``) waits ``--latency`` before every answer and answers 429 to a
request beyond ``--server-limit`` in any one second (``Faults.rate_limit``; UTS allows 20 a second
per client IP, and every client here is 127.0.0.1, one at a time). The inputs: PT names of
invented concepts and, one in ``1/--missing``, a term no concept has (``words`` search); their
SNOMEDCT_US codes and, as often, a code no concept has (crosswalk to the other sources).

Each client runs in a fresh process of its own, one after the other, with a 1 s pause between
runs so that the fake's one-second window is empty when each starts:

1. umls-python-client, the way its README shows many inputs: ``UMLSClient.search_api
   .bulk_search`` and ``crosswalk_api.bulk_crosswalk`` (one request after the other);
2. umls-python-client's concurrency: ``AsyncUMLSClient`` with ``--workers`` requests in flight;
3. this client, cold (an empty cache folder) and warm (the same folder again), the commands
   users run: ``tempmedbench-synonyms umls search --file TERMS --json`` and ``umls crosswalk
   SNOMEDCT_US --file CODES --json``, with ``--rate`` and ``--workers``.

For each: the wall time of its process, the requests the fake saw and the 429s it answered, the
requests a second between the first and the last, and the answers: found, not found, failed,
and how many agree with this client's cold answers (the same CUIs for a search, the same
``SAB|code`` for a crosswalk). Nothing is written outside a temporary folder and bench/out/.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from bench_fake import two_source_data  # bench/ is on sys.path: this script's folder

from tempmedbench_synonyms.testing import (
    CANARY_KEY,
    FakeUts,
    FakeUtsData,
    FakeUtsServer,
    Faults,
    find_secret,
)

HERE = Path(__file__).resolve().parent
PEER, PEER_VERSION = "umls-python-client", "1.2.0"
PEER_VENV = HERE / "out" / "peer-venv"
SAB = "SNOMEDCT_US"

#: This client's command line tool, beside this Python (its console script, as users run it).
TOOL = str(Path(sys.executable).with_name("tempmedbench-synonyms"))


def peer_python() -> Path:
    """The peer venv's python, with ``PEER_VERSION`` installed (created once, then reused)."""
    python = PEER_VENV / "bin" / "python"
    if not python.exists():
        print(f"creating {PEER_VENV} ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(PEER_VENV)], check=True)
    version = subprocess.run(
        [str(python), "-c", f"import importlib.metadata as m; print(m.version({PEER!r}))"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    if version != PEER_VERSION:
        print(f"installing {PEER}=={PEER_VERSION} into {PEER_VENV} ...", flush=True)
        pip = [str(python), "-m", "pip", "install", "--quiet", f"{PEER}=={PEER_VERSION}"]
        subprocess.run(pip, check=True)
    return python


@dataclass
class Run:
    """One client's run of one task, as the fake saw it and as the client answered."""

    client: str
    task: str
    wall: float
    requests: int
    limited: int
    rate: float
    answers: dict[str, list[str] | None]
    errors: dict[str, str]

    def count(self, what: str) -> int:
        got = self.answers.values()
        if what == "found":
            return sum(1 for ids in got if ids)
        if what == "not found":
            return sum(1 for ids in got if ids == [])
        return sum(1 for ids in got if ids is None)


Answers = tuple[dict[str, list[str] | None], dict[str, str]]


def read_peer(path: Path, inputs: list[str], task: str) -> Answers:
    """``peer_driver.py``'s JSON Lines, one an input in input order, as identifiers."""
    answers, errors = {}, {}
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for item, row in zip(inputs, rows, strict=True):
        answers[item] = row["ids"]
        if row["error"]:
            errors[item] = row["error"]
    return answers, errors


def read_ours(path: Path, inputs: list[str], task: str) -> Answers:
    """This client's ``--json`` lines, one an input in input order, as identifiers."""
    answers: dict[str, list[str] | None] = {}
    errors = {}
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for item, row in zip(inputs, rows, strict=True):
        results = row["results"]
        if row["outcome"] == "found":
            if task == "search":
                answers[item] = sorted({r["ui"] for r in results})
            else:
                answers[item] = sorted({f"{r['rootSource']}|{r['ui']}" for r in results})
        elif row["outcome"] == "not_found":
            answers[item] = []
        else:
            answers[item] = None
            errors[item] = f"{row['outcome']}: {row['message']}"
    return answers, errors


def timed(cmd: Sequence[str], env: dict[str, str], out: Path, exits: set[int]) -> float:
    """The wall time of ``cmd`` in a fresh process, its stdout in ``out``, its stderr in a log
    beside it; an exit code not in ``exits`` ends the benchmark with that log."""
    log = out.with_suffix(".log")
    start = time.perf_counter()
    with out.open("w", encoding="utf-8") as stdout, log.open("w", encoding="utf-8") as stderr:
        done = subprocess.run(cmd, env=env, stdout=stdout, stderr=stderr, check=False)
    wall = time.perf_counter() - start
    if done.returncode not in exits:
        sys.exit(f"{cmd[:4]} failed (exit {done.returncode}):\n{log.read_text()[-3000:]}")
    return wall


def measure(fake: FakeUts, client: str, task: str, cmd: Sequence[str], env: dict[str, str],
            out: Path, read: Callable[[Path], Answers], exits: set[int]) -> Run:  # fmt: skip
    time.sleep(1.1)  # the fake's one-second window empties: each run starts afresh
    mark = len(fake.seen)
    wall = timed(cmd, env, out, exits)
    seen = fake.seen[mark:]
    span = seen[-1].at - seen[0].at if len(seen) > 1 else 0.0
    rate = (len(seen) - 1) / span if span > 0 else float("nan")
    answers, errors = read(out)
    limited = sum(1 for s in seen if s.status == 429)
    return Run(client, task, wall, len(seen), limited, rate, answers, errors)


def inputs(
    data: FakeUtsData, searches: int, crosswalks: int, missing: float
) -> tuple[list[str], ...]:
    """Search terms (PT names) and SNOMEDCT_US codes of invented concepts, one in ``1/missing``
    replaced by one that no concept has."""
    names = [r.name for r in data.rows if r.sab == SAB and r.tty == "PT"]
    every = round(1 / missing) if missing > 0 else 0

    def absent(i: int) -> bool:
        return every > 0 and i % every == every - 1

    terms = [f"no such condition q{i}" if absent(i) else names[i] for i in range(searches)]
    codes = [str((8_000_000 if absent(i) else 1_000_000) + i) for i in range(crosswalks)]
    return terms, codes


def agreement(run: Run, ref: Run) -> tuple[int, int, int, list[str]]:
    """Inputs whose identifiers equal ``ref``'s; of the rest, how many failed here and how many
    got other identifiers, and a few examples."""
    same = failed = other = 0
    examples = []
    for item, ids in run.answers.items():
        if ids == ref.answers.get(item):
            same += 1
        elif ids is None:
            failed += 1
        else:
            other += 1
            if len(examples) < 3:
                examples.append(f"{item!r}: {ids} here, {ref.answers.get(item)} in {ref.client}")
    return same, failed, other, examples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--searches", type=int, default=1000, help="terms searched")
    parser.add_argument("--crosswalks", type=int, default=1000, help="codes crosswalked")
    parser.add_argument("--latency", type=float, default=0.15, help="seconds per answer")
    parser.add_argument("--server-limit", type=int, default=20, help="fake: max per second")
    parser.add_argument("--rate", type=float, default=15.0, help="this client's --rate")
    parser.add_argument("--workers", type=int, default=8, help="both clients' concurrency")
    parser.add_argument("--missing", type=float, default=0.1, help="share of absent inputs")
    parser.add_argument("--quick", action="store_true", help="smoke run: 40 of each")
    args = parser.parse_args()
    if args.quick:
        args.searches = args.crosswalks = 40

    load = os.getloadavg()
    print(f"cores {os.cpu_count()}, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, "
          f"Python {sys.version.split()[0]}")  # fmt: skip
    peer = peer_python()
    print(f"{PEER} {PEER_VERSION} in {PEER_VENV.relative_to(HERE.parent)}")
    data = two_source_data(max(args.searches, args.crosswalks))
    terms, codes = inputs(data, args.searches, args.crosswalks, args.missing)
    print(f"fake: {len(data.rows):,} invented rows, {args.latency * 1000:.0f} ms an answer, "
          f"429 beyond {args.server_limit} requests in any one second; "
          f"{len(terms)} searches, {len(codes)} crosswalks ({SAB}), "
          f"{args.missing:.0%} of them absent")  # fmt: skip

    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env["UMLS_API_KEY"] = CANARY_KEY
    runs: list[Run] = []
    with tempfile.TemporaryDirectory(prefix="bench-peers-") as tmp:
        root = Path(tmp)
        env["TEMPMEDBENCH_STATE_DIR"] = str(root / "state")
        files = {"search": root / "terms.txt", "crosswalk": root / "codes.txt"}
        asked = {"search": terms, "crosswalk": codes}
        files["search"].write_text("\n".join(terms) + "\n", encoding="utf-8")
        files["crosswalk"].write_text("\n".join(codes) + "\n", encoding="utf-8")
        cache = root / "cache"
        faults = Faults(latency=args.latency, rate_limit=args.server_limit)
        fake = FakeUts(data, api_key=CANARY_KEY, faults=faults)
        with FakeUtsServer(fake) as server:
            base = server.base_url
            for task in ("search", "crosswalk"):
                for mode in ("bulk", "async"):
                    label = "peer bulk" if mode == "bulk" else f"peer async x{args.workers}"
                    out = root / f"peer-{mode}-{task}.jsonl"
                    cmd = [str(peer), str(HERE / "peer_driver.py"), mode, task, base,
                           str(files[task]), "--sab", SAB,
                           "--workers", str(args.workers)]  # fmt: skip
                    read = partial(read_peer, inputs=asked[task], task=task)
                    runs.append(measure(fake, label, task, cmd, env, out, read, {0}))
                for label in ("ours cold", "ours warm"):
                    out = root / f"{label.replace(' ', '-')}-{task}.jsonl"
                    what = ["search"] if task == "search" else ["crosswalk", SAB]
                    cmd = [TOOL, "umls", *what, "--file", str(files[task]), "--json",
                           "--base-url", base, "--cache-dir", str(cache),
                           "--rate", f"{args.rate:g}", "--workers", str(args.workers)]  # fmt: skip
                    read = partial(read_ours, inputs=asked[task], task=task)
                    # exit 1: some input was not found (the worst outcome of the batch)
                    runs.append(measure(fake, label, task, cmd, env, out, read, {0, 1}))
        outputs = {p.name: p.read_text(encoding="utf-8") for p in root.glob("ours-*")}  # + logs
        leaks = find_secret(CANARY_KEY, texts=outputs, folders=[cache])

    print()
    head = (f"{'client':16} {'task':9} {'wall s':>7} {'requests':>8} {'429s':>5} {'req/s':>6} "
            f"{'found':>6} {'absent':>6} {'failed':>6} {'agree':>6}")  # fmt: skip
    print(head)
    print("-" * len(head))
    notes = []
    for run in runs:
        ref = next(r for r in runs if r.task == run.task and r.client == "ours cold")
        if run is ref:
            ref = next(r for r in runs if r.task == run.task and r.client == "peer bulk")
        same, failed, other, examples = agreement(run, ref)
        print(f"{run.client:16} {run.task:9} {run.wall:7.1f} {run.requests:8} {run.limited:5} "
              f"{run.rate:6.1f} {run.count('found'):6} {run.count('not found'):6} "
              f"{run.count('failed'):6} {same:6}")  # fmt: skip
        if failed or other:
            why = sorted({e for e in run.errors.values()})[:3]
            notes.append(f"{run.client}, {run.task}: {len(run.answers) - same} differ from "
                         f"{ref.client}: {failed} failed here ({', '.join(why)}), "
                         f"{other} with other identifiers {examples}")  # fmt: skip
    print()
    print(
        "agree: inputs with the same identifiers as ours cold (ours cold: as peer bulk); "
        "req/s: between the first and the last request the fake saw"
    )
    for note in notes:
        print(note)
    if any(r.errors for r in runs if r.client.startswith("peer")):
        print(f"({PEER} {PEER_VERSION} retries a 429 or 5xx twice at once, with no wait "
              "and no look at Retry-After (its transport.py: backoff_factor=0), then gives the "
              "input up)")  # fmt: skip
    for run in runs:
        if run.client == "ours cold":
            print(f"this client, {run.task}: {run.rate:.2f} req/s = {run.rate / args.rate:.3f} "
                  f"of --rate {args.rate:g} ({args.workers} workers)")  # fmt: skip
    load = os.getloadavg()
    print(f"load average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
          f"canary key {'found in ' + ', '.join(leaks) if leaks else 'nowhere'}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
