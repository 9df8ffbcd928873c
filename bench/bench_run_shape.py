"""What one run is made of (issue 23's measures), on the bundled invented fixtures:

* ``umls atoms C9000001`` against the fake UTS on loopback, run in this process after the import:
  how many request objects (``paths.UtsRequest``) it builds, and how many calls, functions and
  modules of the package it goes through (cProfile counts);
* a local regeneration (``regenerate fixtures/tempmedbench-mini --mrconso ...``) in a child
  process: how many modules it imports and the import time of the top-level ones
  (``python -X importtime``), best of --repeat runs.

Nothing here is timed against a target; the numbers are for comparing two versions. Run from the
repository root (``PYTHONPATH=OTHER/src`` measures another checkout's code):

    .venv/bin/python bench/bench_run_shape.py
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import os
import pstats
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent


def atoms_run(home: Path) -> str:
    from tempmedbench_synonyms import paths
    from tempmedbench_synonyms.cli import main
    from tempmedbench_synonyms.testing import CANARY_KEY, FakeUts, FakeUtsData, FakeUtsServer

    fake = FakeUts(
        FakeUtsData.from_meta(ROOT / "fixtures" / "umls", release="2099AA"), api_key=CANARY_KEY
    )
    built = []
    real = paths.UtsRequest.__init__

    def counted(self: object, *args: object, **kwargs: object) -> None:
        built.append(1)
        real(self, *args, **kwargs)  # type: ignore[arg-type]

    env = {"UMLS_API_KEY": CANARY_KEY, "TEMPMEDBENCH_CACHE_DIR": str(home / "cache"),
           "TEMPMEDBENCH_STATE_DIR": str(home / "state")}  # fmt: skip
    profile = cProfile.Profile()
    code: object = None
    handlers = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    with FakeUtsServer(fake) as server, mock.patch.dict(os.environ, env):
        argv = ["tempmedbench-synonyms", "umls", "atoms", "C9000001", "--umls-release", "2099AA",
                "--base-url", server.base_url, "--json"]  # fmt: skip
        out = io.StringIO()
        with (
            mock.patch.object(sys, "argv", argv),
            mock.patch.object(paths.UtsRequest, "__init__", counted),
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(io.StringIO()),
        ):
            profile.enable()
            try:
                main()
            except SystemExit as done:
                code = done.code
            finally:
                profile.disable()
                for number, handler in handlers.items():  # main() ends ignoring them (its exit)
                    signal.signal(number, handler)
    if code != 0:  # a refused key or a failed request goes through other code: not the measure
        sys.exit(f"umls atoms ended with exit {code}, not 0: a failed run is not measured")
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    ours = {key: value for key, value in stats.items() if "tempmedbench_synonyms" in key[0]}
    calls = sum(value[1] for value in ours.values())
    modules = {key[0] for key in ours}
    lines = out.getvalue().count("\n")
    return (f"umls atoms        {len(built)} request object built; {calls:,} calls to "
            f"{len(ours)} functions in {len(modules)} modules of the package; {lines} line of "
            "output")  # fmt: skip


def regeneration_imports(home: Path, repeat: int) -> str:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(TEMPMEDBENCH_CACHE_DIR=str(home / "cache"), TEMPMEDBENCH_STATE_DIR=str(home / "st"))
    best: tuple[int, int] | None = None
    for n in range(repeat + 1):  # the first run writes the bytecode cache: not counted
        out = home / f"out{n}"
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "tempmedbench_synonyms", "regenerate",
             str(ROOT / "fixtures" / "tempmedbench-mini"), "--mrconso",
             str(ROOT / "fixtures" / "umls" / "MRCONSO.RRF"), "--out", str(out), "-q"],
            env=env, capture_output=True, text=True, check=True,
        )  # fmt: skip
        rows = [line.split("|") for line in done.stderr.splitlines()
                if line.startswith("import time:") and "|" in line]  # fmt: skip
        top = sum(int(r[1]) for r in rows[1:] if r[2].startswith(" ") and r[2][1] != " ")
        if n and (best is None or top < best[1]):
            best = (len(rows) - 1, top)  # the first row is the header
    assert best is not None
    return (f"local regeneration {best[0]} modules imported, {best[1] / 1000:.0f} ms of imports "
            f"(top-level modules' cumulative time, best of {repeat})")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        print(f"cpu count         {os.cpu_count()} (load average {os.getloadavg()[0]:.2f})")
        print(atoms_run(Path(tmp)))
        print(regeneration_imports(Path(tmp), args.repeat))


if __name__ == "__main__":
    main()
