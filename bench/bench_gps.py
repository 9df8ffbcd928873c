"""Benchmark the GPS loader and validator on generated data: load time, validation time, memory.

Generates, in a temporary folder that is deleted afterwards (nothing generated is ever committed):
a GPS file of 400,000 invented concepts (the real GPS holds about 380,000), the same file zipped,
a release folder with 100,000 events and 4,500 questions that reference them, and an RF2 snapshot
folder of the International Edition's size (380,000 concepts, 1,900,000 descriptions, 3,800,000
US and GB language refset rows). Then prints:

- the target line first: the WHOLE command ``tempmedbench-synonyms gps validate RELEASE --gps
  FILE`` run as a subprocess (interpreter start, imports, argument handling, load, validation,
  report and exit all included; best of --repeat runs), against the budget set for it: 3x a bare
  Python loop that splits every line of the GPS file on tabs, plus 0.5 s; its peak resident set
  size (the child's own ru_maxrss from wait4; target: under 300 MB); os.cpu_count(). For scale it
  also gives what an interpreter that starts and exits costs, and one that imports the CLI;
- the load time of the GPS file and of the zip, the time of a bare Python loop that splits every
  line of the same file on tabs, and the ratio (target: loading within 3x of the bare loop);
- the validation time of the 100,000 events, reading the JSON lines included (target: < 0.5 s),
  and of the whole release;
- peak memory of a fresh child process that loads and validates once: its peak resident set size
  from resource.getrusage (ru_maxrss, the whole process, interpreter included; a child that only
  imports gives the baseline), and, in another child, tracemalloc's peak of Python allocations
  (target: < 300 MB);
- the load time of the RF2 snapshot (best of --rf2-repeat runs) and the same two peak memory
  figures for a child that only loads it (--rf2-concepts 0 skips the RF2 case).

Times are the best of --repeat runs (page cache warm). Run from the repository root:

    .venv/bin/python bench/bench_gps.py
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from tempmedbench_synonyms.files import sha256_file
from tempmedbench_synonyms.snomed.concepts import ConceptIndex
from tempmedbench_synonyms.snomed.gps import load_gps_tsv
from tempmedbench_synonyms.snomed.loader import load_concept_index
from tempmedbench_synonyms.snomed.sctid import verhoeff_check_digit
from tempmedbench_synonyms.snomed.validate import EVENTS_PATH, check_artifact, validate_release

GPS_NAME = "SnomedINTL_GPSRelease_PRODUCTION_20990101T120000Z.txt"
SYLLABLES = [
    "ka",
    "lo",
    "mi",
    "ner",
    "va",
    "quin",
    "sto",
    "brel",
    "dax",
    "fen",
    "gor",
    "hul",
    "ix",
    "jor",
    "ket",
    "lum",
    "mor",
    "nix",
    "pla",
    "rov",
    "sil",
]
TAGS = ["(disorder)", "(procedure)", "(finding)", "(regime/therapy)", "(situation)"]


def make_sctid(item: int) -> str:
    """The short-format concept identifier of an invented ``item``."""
    payload = f"{item}00"
    return payload + verhoeff_check_digit(payload)


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))


def _term(rng: random.Random) -> str:
    words = " ".join(_word(rng) for _ in range(rng.randint(2, 6)))
    return words[0].upper() + words[1:]


def generate(folder: Path, n_concepts: int, n_events: int, n_questions: int, seed: int) -> Path:
    """Write the GPS file, its zip and a release folder; return the GPS file's path."""
    rng = random.Random(seed)
    gps = folder / GPS_NAME
    active_ids: list[tuple[str, str, str]] = []
    with gps.open("w", encoding="utf-8", newline="") as f:
        f.write("ConceptID\tActive\tFSN\tUSPreferredTerm\n")
        for i in range(n_concepts):
            cid = make_sctid(9000000000 + i)
            pt = _term(rng)
            fsn = f"{pt} {rng.choice(TAGS)}"
            active = rng.random() >= 0.05
            f.write(f"{cid}\t{int(active)}\t{fsn}\t{pt if active else ''}\n")
            if active:
                active_ids.append((cid, fsn, pt))
    with zipfile.ZipFile(folder / (gps.stem + ".zip"), "w", zipfile.ZIP_DEFLATED) as zf:
        zf.write(gps, f"{gps.stem}/{gps.name}")

    # A benchmark's events use a few thousand distinct concepts, as TempMedBench's do.
    pool = rng.sample(active_ids, 3000)
    art = folder / "release" / "artifacts"
    art.mkdir(parents=True)
    with (art / "events_canonical.jsonl").open("w", encoding="utf-8") as f:
        for i in range(n_events):
            kind = rng.random()
            ev: dict[str, Any] = {
                "event_id": f"ev-{i:06d}",
                "patient_id": f"p-{i // 40:05d}",
                "date": (
                    f"20{rng.randint(10, 24)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
                ),
            }
            if kind < 0.6:
                cid, fsn, pt = rng.choice(pool)
                etype = rng.choice(["condition", "procedure", "careplan"])
                ev.update(
                    event_type=etype,
                    label=pt if etype == "procedure" else f"{pt} onset",
                    snomed_code=cid,
                    snomed_fsn=fsn,
                    snomed_pt=pt,
                )
                if etype != "condition" and rng.random() < 0.5:
                    rcid, rfsn, rpt = rng.choice(pool)
                    ev.update(
                        related_condition=rpt,
                        related_condition_snomed_code=rcid,
                        related_condition_snomed_fsn=rfsn,
                        related_condition_snomed_pt=rpt,
                    )
            else:
                ev.update(event_type="medication", label=f"{_word(rng)} {rng.randint(5, 500)} mg")
            f.write(json.dumps(ev, ensure_ascii=False) + "\n")
    with (art / "questions.jsonl").open("w", encoding="utf-8") as f:
        for i in range(n_questions):
            cid, fsn, pt = rng.choice(pool)
            q = {
                "qid": f"q-{i:05d}",
                "split": "dev",
                "predicate": {"concept": cid, "family": "EVENT_AT"},
                "concept_snomed_code": cid,
                "concept_snomed_fsn": fsn,
                "concept_snomed_pt": pt,
            }
            f.write(json.dumps(q, ensure_ascii=False) + "\n")
    return gps


# The RF2 metadata identifiers the loader reads (description types, language refsets,
# acceptability, the core module), as in snomed/rf2.py; definition status and case significance
# invented.
FSN_TYPE, SYNONYM_TYPE = "900000000000003001", "900000000000013009"
US_REFSET, GB_REFSET = "900000000000509007", "900000000000508004"
PREFERRED, ACCEPTABLE = "900000000000548007", "900000000000549004"
CORE_MODULE = "900000000000207008"
PRIMITIVE, CASE = make_sctid(9000000091), make_sctid(9000000092)  # invented, never read
RF2_DATE = "20990101"


def generate_rf2(folder: Path, n_concepts: int, seed: int) -> Path:
    """Write an invented RF2 snapshot of the International Edition's size (CRLF, as RF2 is).

    Per concept: an FSN, a US/GB preferred synonym and three acceptable synonyms (5 descriptions),
    each with a US and a GB language refset row (10 rows). 5% of the concepts are inactive; 10% of
    the acceptable synonyms are inactive, with inactive refset rows.
    """
    rng = random.Random(seed)
    rf2 = folder / "rf2" / "Snapshot"
    (rf2 / "Terminology").mkdir(parents=True)
    (rf2 / "Refset" / "Language").mkdir(parents=True)
    concept_f = (rf2 / "Terminology" / f"sct2_Concept_Snapshot_INT_{RF2_DATE}.txt").open(
        "w", encoding="utf-8", newline=""
    )
    desc_f = (rf2 / "Terminology" / f"sct2_Description_Snapshot-en_INT_{RF2_DATE}.txt").open(
        "w", encoding="utf-8", newline=""
    )
    lang_f = (
        rf2 / "Refset" / "Language" / f"der2_cRefset_LanguageSnapshot-en_INT_{RF2_DATE}.txt"
    ).open("w", encoding="utf-8", newline="")
    with concept_f, desc_f, lang_f:
        concept_f.write("id\teffectiveTime\tactive\tmoduleId\tdefinitionStatusId\r\n")
        desc_f.write(
            "id\teffectiveTime\tactive\tmoduleId\tconceptId\tlanguageCode\ttypeId\tterm\t"
            "caseSignificanceId\r\n"
        )
        lang_f.write(
            "id\teffectiveTime\tactive\tmoduleId\trefsetId\treferencedComponentId\t"
            "acceptabilityId\r\n"
        )
        member = 0
        did_n = 0
        for i in range(n_concepts):
            cid = make_sctid(9000000000 + i)
            pt = _term(rng)
            active = int(rng.random() >= 0.05)
            concept_f.write(f"{cid}\t{RF2_DATE}\t{active}\t{CORE_MODULE}\t{PRIMITIVE}\r\n")
            descs = [
                (f"{pt} {rng.choice(TAGS)}", FSN_TYPE, PREFERRED, True),
                (pt, SYNONYM_TYPE, PREFERRED, True),
                *((f"{pt} {n}", SYNONYM_TYPE, ACCEPTABLE, rng.random() >= 0.1) for n in "abc"),
            ]
            d_rows = []
            l_rows = []
            for term, type_id, acceptability, active in descs:
                did_n += 1
                # Description identifiers are not checked by the loader: unique digits suffice.
                did = f"{100_000_000 + did_n}011"
                d_rows.append(
                    f"{did}\t{RF2_DATE}\t{int(active)}\t{CORE_MODULE}\t{cid}\ten\t{type_id}\t"
                    f"{term}\t{CASE}\r\n"
                )
                for refset in (US_REFSET, GB_REFSET):
                    member += 1
                    l_rows.append(
                        f"{member:08x}-0000-5000-8000-{member * 2654435761 % 2**48:012x}\t"
                        f"{RF2_DATE}\t{int(active)}\t{CORE_MODULE}\t{refset}\t{did}\t"
                        f"{acceptability}\r\n"
                    )
            desc_f.write("".join(d_rows))
            lang_f.write("".join(l_rows))
    return folder / "rf2"


def best_of(repeat: int, fn: Callable[[], object]) -> tuple[float, object]:
    """The shortest wall time of ``repeat`` calls, and the last result."""
    best = float("inf")
    result: object = None
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def bare_split(path: Path) -> None:
    """The floor the loader is compared to: the fastest bare loop that does the work no reader
    of the file can skip (read it, decode it, split every line on tabs), keeping nothing and
    counting nothing. Reading the bytes whole or in blocks, then decoding and splitting them,
    measured no faster."""
    with path.open(encoding="utf-8") as f:
        for line in f:
            line.split("\t")


def measure_memory(mode: str, gps: Path, release: Path) -> None:
    """Child process: load and validate once (or nothing, for mode "baseline"), print JSON.

    "trace": tracemalloc's peak of Python allocations (tracing slows the run and adds its own
    overhead to the process, so the resident size is measured in a separate child);
    "rss" and "baseline": resource.getrusage's ru_maxrss, the peak resident set size of the whole
    process, interpreter and imported modules included.
    """
    tracing = mode.endswith("trace")
    if tracing:
        tracemalloc.start()
    if mode.startswith("rf2"):
        load_concept_index(gps)  # here the RF2 folder: its loading alone is measured
    elif mode != "baseline":
        index = load_concept_index(gps)
        validate_release(release, index)
    out: dict[str, int] = {}
    if tracing:
        out["tracemalloc_peak"] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # ru_maxrss is in KiB on Linux, in bytes on macOS.
    out["maxrss"] = maxrss if sys.platform == "darwin" else maxrss * 1024
    print(json.dumps(out))


def _child(mode: str, gps: Path, release: Path) -> dict[str, int]:
    out = subprocess.run(
        [sys.executable, __file__, "--memory-child", mode, str(gps), str(release)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def run_child(argv: list[str]) -> tuple[float, int, int]:
    """Wall time, exit code and peak resident set size (bytes) of one child process.

    ``os.wait4`` gives the child's own rusage (``RUSAGE_CHILDREN`` would give the largest of all
    children so far)."""
    t0 = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - t0
    child.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait
    maxrss = usage.ru_maxrss if sys.platform == "darwin" else usage.ru_maxrss * 1024
    return elapsed, child.returncode, maxrss


def best_child(repeat: int, argv: list[str]) -> tuple[float, int, int]:
    """The shortest wall time of ``repeat`` runs, the last exit code, the largest peak RSS."""
    runs = [run_child(argv) for _ in range(repeat)]
    return min(r[0] for r in runs), runs[-1][1], max(r[2] for r in runs)


def whole_command(repeat: int, gps: Path, release: Path) -> None:
    """The target line: the whole ``gps validate`` command, timed as a user runs it."""
    script = Path(sys.executable).parent / "tempmedbench-synonyms"
    command = [str(script), "gps", "validate", str(release), "--gps", str(gps)]
    t_start, _, _ = best_child(repeat, [sys.executable, "-c", "pass"])
    t_import, _, _ = best_child(repeat, [sys.executable, "-c", "import tempmedbench_synonyms.cli"])
    t_cmd, code, rss = best_child(repeat, command)
    t_bare, _ = best_of(repeat, lambda: bare_split(gps))
    budget = 3 * t_bare + 0.5
    mib = 2**20
    print(f"whole command: {' '.join(['tempmedbench-synonyms', *command[1:4]])} --gps {gps.name}")
    print(
        f"gps validate, whole command {t_cmd:6.3f} s   budget {budget:.3f} s (3 x bare split "
        f"loop {t_bare:.3f} s + 0.5 s): {'PASS' if t_cmd <= budget else 'FAIL'}; exit code "
        f"{code}; peak {rss / mib:.0f} MiB resident (target under 300 MB: "
        f"{'PASS' if rss < 300e6 else 'FAIL'}); os.cpu_count() = {os.cpu_count()}, load "
        f"average {os.getloadavg()[0]:.1f} (other work on the machine slows every figure)"
    )
    print(
        f"  of which an interpreter that starts and exits: {t_start:.3f} s; one that imports "
        f"the CLI: {t_import:.3f} s (nothing subtracted from the figure above)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--concepts", type=int, default=400_000)
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--questions", type=int, default=4_500)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seed", type=int, default=20990101)
    ap.add_argument("--rf2-concepts", type=int, default=380_000)
    ap.add_argument("--rf2-repeat", type=int, default=3)
    ap.add_argument(
        "--memory-child", nargs=3, metavar=("MODE", "GPS", "RELEASE"), help=argparse.SUPPRESS
    )
    ap.add_argument("--generate-child", metavar="FOLDER", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.memory_child:
        mode, gps_arg, release_arg = args.memory_child
        measure_memory(mode, Path(gps_arg), Path(release_arg))
        return
    if args.generate_child:
        generate(Path(args.generate_child), args.concepts, args.events, args.questions, args.seed)
        if args.rf2_concepts:
            generate_rf2(Path(args.generate_child), args.rf2_concepts, args.seed)
        return

    with tempfile.TemporaryDirectory(prefix="bench-gps-") as tmp:
        folder = Path(tmp)
        t0 = time.perf_counter()
        # Generated in a child process, and memory measured in children started before this
        # process has loaded anything: on Linux a child's ru_maxrss starts from the size of the
        # process it was forked from (it is kept across exec), so the parent must stay small.
        subprocess.run(
            [sys.executable, __file__, "--generate-child", str(folder),
             "--concepts", str(args.concepts), "--events", str(args.events),
             "--questions", str(args.questions), "--seed", str(args.seed),
             "--rf2-concepts", str(args.rf2_concepts)],
            check=True,
        )  # fmt: skip
        gps = folder / GPS_NAME
        release = folder / "release"
        events_path = release / EVENTS_PATH
        print(
            f"generated {args.concepts} concepts ({gps.stat().st_size / 1e6:.1f} MB), "
            f"{args.events} events ({events_path.stat().st_size / 1e6:.1f} MB), "
            f"{args.questions} questions in {time.perf_counter() - t0:.1f} s (temporary folder)"
        )
        print(f"python {sys.version.split()[0]}; times are the best of {args.repeat} runs")
        # The target line first, while this process is still small (see above).
        whole_command(args.repeat, gps, release)
        # Memory first, while this process is still small (see above).
        base = _child("baseline", gps, release)["maxrss"]
        rss = _child("rss", gps, release)["maxrss"]
        trace = _child("trace", gps, release)["tracemalloc_peak"]
        mib = 2**20
        print(
            f"peak memory, load + validate in a fresh process: {rss / mib:.0f} MiB resident "
            f"(getrusage ru_maxrss, whole process; {base / mib:.0f} MiB of it is the interpreter "
            f"and imports); {trace / mib:.0f} MiB of Python allocations (tracemalloc peak); "
            "target: under 300 MB"
        )
        rf2 = folder / "rf2"
        if args.rf2_concepts:
            rf2_rss = _child("rf2-rss", rf2, release)["maxrss"]
            rf2_trace = _child("rf2-trace", rf2, release)["tracemalloc_peak"]
            sizes = {p.name: p.stat().st_size for p in rf2.rglob("*.txt")}
            print(
                f"RF2 snapshot: {args.rf2_concepts} concepts, {args.rf2_concepts * 5} "
                f"descriptions, {args.rf2_concepts * 10} language refset rows "
                f"({sum(sizes.values()) / 1e6:.0f} MB)"
            )
            print(
                f"peak memory, RF2 load in a fresh process: {rf2_rss / mib:.0f} MiB resident "
                f"({base / mib:.0f} MiB of it is the interpreter and imports); "
                f"{rf2_trace / mib:.0f} MiB of Python allocations (tracemalloc peak); "
                "target: under 300 MB"
            )

        t_bare, _ = best_of(args.repeat, lambda: bare_split(gps))
        t_load, loaded = best_of(args.repeat, lambda: load_gps_tsv(gps))
        t_zip, _ = best_of(args.repeat, lambda: load_concept_index(gps.with_suffix(".zip")))
        t_sha, _ = best_of(args.repeat, lambda: sha256_file(gps))
        index = cast(ConceptIndex, loaded)
        print(f"bare split loop        {t_bare:6.3f} s")
        print(f"SHA-256 of the file    {t_sha:6.3f} s   (part of every load: the report shows it)")
        print(
            f"load GPS .txt          {t_load:6.3f} s   {t_load / t_bare:.2f}x the bare loop "
            "(target: within 3x; SHA-256 and all row checks included)"
        )
        print(
            f"load GPS .zip          {t_zip:6.3f} s   {t_zip / t_bare:.2f}x the bare loop "
            "(decompression included; not a target)"
        )

        # the events file alone, as validate_release checks it: its records and findings
        t_ev, result = best_of(args.repeat, lambda: check_artifact(events_path, EVENTS_PATH, index))
        n_events, findings = cast("tuple[int, list[object]]", result)
        t_all, _ = best_of(args.repeat, lambda: validate_release(release, index))
        print(
            f"validate {n_events} events {t_ev:6.3f} s   (reading the JSON lines included; "
            f"target: under 0.5 s); findings: {len(findings)}"
        )
        print(
            f"validate the release   {t_all:6.3f} s   (the events and {args.questions} questions)"
        )
        if args.rf2_concepts:
            del index, loaded, result
            t_rf2, rf2_index = best_of(args.rf2_repeat, lambda: load_concept_index(rf2))
            n = len(cast(ConceptIndex, rf2_index).rows)
            print(
                f"load RF2 folder        {t_rf2:6.3f} s   (best of {args.rf2_repeat}; "
                f"{n} concepts; not a target)"
            )


if __name__ == "__main__":
    main()
