"""What a regeneration would do, said before it spends the rate budget (``regenerate --dry-run``,
SPEC section 7): the release checked as a run would, nothing written."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any

from tempmedbench_synonyms import paths
from tempmedbench_synonyms.errors import Outcome, UnavailableError
from tempmedbench_synonyms.mrconso.source import sniff_mrconso
from tempmedbench_synonyms.options import RegenOptions
from tempmedbench_synonyms.regen.pipeline import (
    atom_queries,
    probe_cui,
    release_report,
    wanted_release,
)
from tempmedbench_synonyms.regen.release import Release, load_expected, open_release
from tempmedbench_synonyms.regen.report import Report
from tempmedbench_synonyms.uts.estimate import estimate_line, fetch_seconds, plan_all
from tempmedbench_synonyms.uts.session import open_uts
from tempmedbench_synonyms.uts.source import check_queries


@dataclass(frozen=True, slots=True)
class Plan:
    """What a run would fetch: ``concepts``, ``cached`` of them, ``to_fetch`` the rest, the
    ``requests`` that takes (the probe included when uncached; pages and retries on top) and
    their ``seconds`` at ``--rate`` (``None`` from a local MRCONSO.RRF)."""

    concepts: int
    cached: int
    to_fetch: int
    requests: int
    seconds: float | None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _open(release_dir: Path) -> Release:
    """The release folder, checked as a run checks it (manifest, table, spans, hashes)."""
    opened = open_release(release_dir)
    load_expected(opened.folder)
    return opened


def _report(opened: Release, source: str, message: str) -> Report:
    report = release_report("regenerate", Outcome.PLANNED, opened)
    report.source = source
    report.message = message
    return report


def plan(options: RegenOptions) -> tuple[Report, Plan]:
    """``regenerate --dry-run``: ``plan_mrconso`` from the file, else over the REST API (its
    cache opened with ``store=False``) nothing asked but the release probe."""
    if options.mrconso is not None:
        return plan_mrconso(options.release, options.mrconso)
    uts = open_uts(options.uts, store=False)
    rate = options.uts.rate
    opened = _open(options.release)
    concepts = opened.table.concepts
    queries = atom_queries(concepts)
    wanted = wanted_release(opened, options.umls_release)
    concrete = wanted
    cached = requests = 0
    if concepts:
        check_queries(wanted, probe_cui(concepts), sorted(set(queries.values())))
        try:
            hits_before = uts.counters().cache_hits
            try:
                concrete = uts.probe(wanted, probe_cui(concepts), regeneration=True)
            except UnavailableError:
                if not (uts.offline and wanted != "current"):
                    raise
                # --offline, and the probe is not cached: the release is named, so the cache
                # can still be looked up; the plan says what an offline run would lack.
                concrete = wanted
            probe_cached = uts.counters().cache_hits > hits_before
            # Queries that send the same request share one fetch, as in a run.
            cached, _, to_fetch = plan_all(
                Counter(sorted(queries.values())),  # sorted: a stable order of reads
                lambda q: uts.lookup_cached(concrete, partial(paths.for_query, query=q)),
                partial(paths.for_query, concrete),
            )
        finally:
            uts.close()
        # The probe is sent again by the run unless the cache held its answer (nothing of the
        # dry run's own answer is stored).
        requests = to_fetch + (0 if probe_cached else 1)
    plan = Plan(len(concepts), cached, len(concepts) - cached, requests,
                fetch_seconds(requests, rate))  # fmt: skip
    said = estimate_line(plan.concepts, plan.cached, plan.to_fetch, plan.requests, rate)
    if uts.offline and requests:
        said += (
            f"; with --offline that run would be unavailable: the cache lacks {requests} "
            f"answer{'' if requests == 1 else 's'} (drop --offline to fetch them)"
        )
    report = _report(
        opened,
        "rest",
        "dry run: nothing was fetched but the release probe, and nothing was written; " + said,
    )
    report.umls_release = concrete
    report.warnings = [*report.warnings, *uts.warnings()]
    counters = uts.counters()
    report.requests, report.cache_hits = counters.requests, counters.cache_hits
    return report, plan


def plan_mrconso(release_dir: Path, mrconso: Path) -> tuple[Report, Plan]:
    """``regenerate --dry-run --mrconso PATH``: the file found and sniffed, nothing sent."""
    opened = _open(release_dir)
    inp = sniff_mrconso(mrconso)
    n = len(opened.table.concepts)
    report = _report(
        opened,
        "mrconso",
        f"dry run: {mrconso} reads as MRCONSO.RRF ({inp.kind}); a run reads the {n} concepts "
        "from it in one pass; nothing was written",
    )
    report.umls_release = opened.table.umls_release
    report.mrconso = inp.to_json()
    return report, Plan(n, 0, n, 0, None)
