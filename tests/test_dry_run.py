"""``regenerate --dry-run`` against the loopback fake UTS: its plan is what the next run does.

The dry run sends the release probe only (nothing with ``--offline`` or ``--mrconso``), writes
nothing (no cache entry, no output file), ends with outcome ``planned`` and exit 0; the real run
after it sends ``plan.requests`` requests and counts ``plan.cached`` cache hits.
"""

from __future__ import annotations

import json
import random
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from helpers import ROOMY_TIMEOUT
from helpers.uts import virtual_limiter
from tempmedbench_synonyms.cli import app
from tempmedbench_synonyms.paths import for_query
from tempmedbench_synonyms.regen.pipeline import atom_queries
from tempmedbench_synonyms.regen.release import open_release
from tempmedbench_synonyms.secret import ApiKey
from tempmedbench_synonyms.testing import (
    CANARY_KEY,
    FakeUtsServer,
    find_secret,
)
from tempmedbench_synonyms.uts.cache import ResponseCache
from tempmedbench_synonyms.uts.cached import CachedUts
from tempmedbench_synonyms.uts.client import RetryPolicy, UtsClient
from tempmedbench_synonyms.uts.estimate import duration_words, estimate_line, fetch_seconds


def files_under(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def run(args: list[str], tmp_path: Path, base_url: str) -> Result:
    env = {"UMLS_BASE_URL": base_url, "TEMPMEDBENCH_CACHE_DIR": str(tmp_path / "cache"),
           "UMLS_API_KEY": CANARY_KEY, "UMLS_API_KEY_FILE": None}  # fmt: skip
    result = CliRunner().invoke(app, ["regenerate", *args], env=env)
    assert find_secret(CANARY_KEY, texts={"stdout": result.stdout, "stderr": result.stderr},
                       folders=[tmp_path]) == []  # fmt: skip
    return result


def report_of(result: Result) -> dict[str, Any]:
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def prefill(release: Path, cache_dir: Path, base_url: str, n: int) -> int:
    """Cache the answers of the first ``n`` distinct queries of the table (not the probe), as an
    earlier interrupted run would have; returns how many concepts they answer."""
    client = UtsClient(base_url=base_url, api_key=ApiKey(CANARY_KEY), limiter=virtual_limiter(),
                       timeout=ROOMY_TIMEOUT, retry=RetryPolicy(),
                       sleep=lambda s: None, rng=random.Random(0))  # fmt: skip
    uts = CachedUts(client, ResponseCache(cache_dir, base_url))
    queries = atom_queries(open_release(release).table.concepts)
    chosen = sorted(set(queries.values()))[:n]
    for query in chosen:
        uts.lookup("2099AA", partial(for_query, query=query))
    uts.close()
    return sum(1 for q in queries.values() if q in chosen)


def distinct_queries(release: Path) -> int:
    return len(set(atom_queries(open_release(release).table.concepts).values()))


def test_a_cold_dry_run_sends_only_the_probe_and_the_run_after_it_matches(
    mini_uts: FakeUtsServer, mini: Path, tmp_path: Path
) -> None:
    before = files_under(mini)
    n = distinct_queries(mini)
    result = run([str(mini), "--dry-run", "--json"], tmp_path, mini_uts.base_url)
    assert result.exit_code == 0, result.stderr
    report = report_of(result)
    assert report["outcome"] == "planned"
    assert report["exit_code"] == 0
    assert report["plan"] == {"concepts": 10, "cached": 0, "to_fetch": 10, "requests": n + 1,
                              "seconds": fetch_seconds(n + 1, 15)}  # fmt: skip
    assert report["requests"] == 1 and report["umls_release"] == "2099AA"
    assert [s.path for s in mini_uts.fake.seen] == ["/content/2099AA/CUI/C9000001"]
    assert files_under(mini) == before
    assert not (tmp_path / "cache").exists()
    assert not (tmp_path / "state").exists()  # (conftest's) not even the shared rate state
    assert result.stderr.splitlines()[2:5] == [
        "  UMLS release   2099AA (UMLS REST API, 1 request sent, 0 answered by the cache)",
        f"  requests       {n + 1} left to send, about 1 s",
        "  concepts       10: 0 cached, 10 to fetch",
    ]
    assert result.stderr.splitlines()[-1] == (
        "planned (exit 0): dry run: nothing was fetched but the release probe, and nothing was "
        "written; 10 concepts: 0 answered by the cache, 10 to fetch, about 1 s at 15 requests "
        "a second"
    )
    mini_uts.fake.seen.clear()
    real = run([str(mini), "--out", str(tmp_path / "out"), "--json"], tmp_path, mini_uts.base_url)
    assert real.exit_code == 0, real.stderr
    assert report_of(real)["requests"] == len(mini_uts.fake.seen) == n + 1
    assert report_of(real)["cache_hits"] == 0
    # The rate state the run left is honoured by the next dry run's probe, and left as it is.
    state = files_under(tmp_path / "state")
    assert len(state) == 1
    again = run([str(mini), "--dry-run", "--refresh", "--json"], tmp_path, mini_uts.base_url)
    assert again.exit_code == 0, again.stderr
    assert report_of(again)["requests"] == 1
    assert files_under(tmp_path / "state") == state


def test_a_half_cached_plan_equals_what_the_run_sends(
    mini_uts: FakeUtsServer, mini: Path, tmp_path: Path
) -> None:
    cached = prefill(mini, tmp_path / "cache", mini_uts.base_url, 3)
    assert cached == 3  # each of those queries is one concept's
    n = distinct_queries(mini)
    entries = files_under(tmp_path / "cache")
    mini_uts.fake.seen.clear()
    result = run([str(mini), "--dry-run", "--json", "--rate", "2"], tmp_path, mini_uts.base_url)
    assert result.exit_code == 0, result.stderr
    plan = report_of(result)["plan"]
    assert plan == {"concepts": 10, "cached": 3, "to_fetch": 7, "requests": n - 3 + 1,
                    "seconds": fetch_seconds(n - 3 + 1, 2)}  # fmt: skip
    assert len(mini_uts.fake.seen) == 1  # the probe, and its answer is not cached
    assert files_under(tmp_path / "cache") == entries
    mini_uts.fake.seen.clear()
    real = run([str(mini), "--out", str(tmp_path / "out"), "--json"], tmp_path, mini_uts.base_url)
    assert real.exit_code == 0, real.stderr
    assert report_of(real)["requests"] == len(mini_uts.fake.seen) == plan["requests"]
    assert report_of(real)["cache_hits"] == plan["cached"]
    # The run said the same estimate once, before it fetched (the probe is already sent).
    assert real.stderr.count(" answered by the cache, ") == 1
    assert estimate_line(n, 3, n - 3, n - 3, 15) in real.stderr
    # Warm now: a dry run offline sends nothing and plans nothing left to fetch.
    mini_uts.fake.seen.clear()
    warm = run([str(mini), "--dry-run", "--offline", "--json"], tmp_path, mini_uts.base_url)
    assert warm.exit_code == 0, warm.stderr
    assert report_of(warm)["plan"] == {"concepts": 10, "cached": 10, "to_fetch": 0,
                                       "requests": 0, "seconds": 0.0}  # fmt: skip
    assert report_of(warm)["requests"] == 0
    assert mini_uts.fake.seen == []


def test_an_offline_dry_run_with_a_cold_cache_plans_and_says_the_run_would_be_unavailable(
    mini_uts: FakeUtsServer, mini: Path, tmp_path: Path
) -> None:
    # The release is named (2099AA): the cache is looked up without its probe, and the plan
    # says what an --offline run would lack, instead of failing like the run it describes.
    n = distinct_queries(mini)
    result = run([str(mini), "--dry-run", "--offline", "--json"], tmp_path, mini_uts.base_url)
    assert result.exit_code == 0, result.stderr
    report = report_of(result)
    assert report["outcome"] == "planned"
    assert report["plan"] == {"concepts": 10, "cached": 0, "to_fetch": 10, "requests": n + 1,
                              "seconds": fetch_seconds(n + 1, 15)}  # fmt: skip
    assert report["message"].endswith(
        f"; with --offline that run would be unavailable: the cache lacks {n + 1} answers "
        "(drop --offline to fetch them)"
    )
    assert mini_uts.fake.seen == []
    # ... and the run it describes is unavailable indeed
    real = run([str(mini), "--offline", "--json", "--out", str(tmp_path / "o")], tmp_path,
               mini_uts.base_url)  # fmt: skip
    assert (real.exit_code, report_of(real)["outcome"]) == (4, "unavailable")


def test_a_dry_runs_counts_are_the_runs(
    mini_uts: FakeUtsServer, mini: Path, tmp_path: Path
) -> None:
    plan = report_of(run([str(mini), "--dry-run", "--json"], tmp_path, mini_uts.base_url))
    real = report_of(run([str(mini), "--json", "--out", str(tmp_path / "o")], tmp_path,
                         mini_uts.base_url))  # fmt: skip
    assert plan["counts"] == real["counts"]
    assert plan["counts"]["routes"] == {"aui": 2, "cui": 2, "source": 6}
    assert plan["counts"]["spans"] == 70


def test_a_dry_run_with_mrconso_sniffs_the_file_and_sends_nothing(
    mini: Path, mrconso: Path, tmp_path: Path
) -> None:
    before = files_under(mini)
    result = run([str(mini), "--mrconso", str(mrconso), "--dry-run", "--json"], tmp_path,
                 "http://127.0.0.1:9/rest")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    report = report_of(result)
    assert report["plan"] == {"concepts": 10, "cached": 0, "to_fetch": 10, "requests": 0,
                              "seconds": None}  # fmt: skip
    assert report["source"] == "mrconso"
    assert report["mrconso"] == {"path": str(mrconso), "kind": "file", "members": [], "parts": []}
    assert report["message"] == (
        f"dry run: {mrconso} reads as MRCONSO.RRF (file); a run reads the 10 concepts from it "
        "in one pass; nothing was written"
    )
    assert "  concepts       10, read from the file in one pass" in result.stderr
    assert files_under(mini) == before


def test_a_dry_run_with_a_file_that_is_not_mrconso_is_bad_input(mini: Path, tmp_path: Path) -> None:
    bogus = tmp_path / "MRCONSO.RRF"
    bogus.write_bytes(b"\x00\x01binary")
    result = run([str(mini), "--mrconso", str(bogus), "--dry-run", "--json"], tmp_path,
                 "http://127.0.0.1:9/rest")  # fmt: skip
    assert result.exit_code == 2
    assert report_of(result)["message"] == (
        f"{bogus}: not an MRCONSO.RRF file: it is binary (a NUL byte at byte 0)"
    )


@pytest.mark.parametrize(
    ("seconds", "words"),
    [(0, "0 s"), (0.5, "1 s"), (40.2, "41 s"), (721, "13 min"), (7500, "2 h 5 min")],
)
def test_durations_in_words(seconds: float, words: str) -> None:
    assert duration_words(seconds) == words


def test_fetch_seconds_is_the_limiters_spacing_rounded_up() -> None:
    assert fetch_seconds(0, 15) == 0.0
    assert fetch_seconds(15, 15) == 1.1  # 15 x 1.08 / 15 = 1.08, up to a tenth
    assert fetch_seconds(3, 0.001) == 3240.0
    assert estimate_line(1, 0, 1, 3, 0.001) == (
        "1 concept: 0 answered by the cache, 1 to fetch, about 54 min at 0.001 requests a second"
    )
    assert estimate_line(50, 0, 50, 50, 1, unit="input") == (
        "50 inputs: 0 answered by the cache, 50 to fetch, about 54 s at 1 request a second"
    )


def test_a_dry_run_with_refresh_plans_every_concept_again(
    mini_uts: FakeUtsServer, mini: Path, tmp_path: Path
) -> None:
    prefill(mini, tmp_path / "cache", mini_uts.base_url, 4)
    entries = files_under(tmp_path / "cache")
    mini_uts.fake.seen.clear()
    n = distinct_queries(mini)
    result = run([str(mini), "--dry-run", "--refresh", "--json"], tmp_path, mini_uts.base_url)
    assert result.exit_code == 0, result.stderr
    plan = report_of(result)["plan"]
    assert plan == {"concepts": 10, "cached": 0, "to_fetch": 10, "requests": n + 1,
                    "seconds": fetch_seconds(n + 1, 15)}  # fmt: skip
    assert len(mini_uts.fake.seen) == 1
    assert files_under(tmp_path / "cache") == entries
