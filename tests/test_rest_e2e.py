"""End to end over real loopback sockets: the fake UTS serves MRCONSO rows, the pipeline rebuilds.

* the REST path gives byte-identical files to the MRCONSO path, also with 10% of requests
  failing in each fault kind;
* every request of the CLI's REST source waits its turn at the configured rate (on the rate
  limiter's own record of its turns; bench/bench_rest.py measures what a server sees);
* a run killed or interrupted halfway resumes from the cache and fetches only what was missing;
* the canary API key appears nowhere a run leaves anything.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import os
import random
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from helpers import HELD, MINI, MINI_MRCONSO, ROOMY_TIMEOUT, HeldFake, Lines, wait_until
from helpers.uts import virtual_limiter
from tempmedbench_synonyms.errors import UnavailableError
from tempmedbench_synonyms.mrconso.source import MrconsoSource
from tempmedbench_synonyms.regen.pipeline import regenerate
from tempmedbench_synonyms.regen.release import OUTPUTS
from tempmedbench_synonyms.secret import ApiKey
from tempmedbench_synonyms.testing import (
    CANARY_KEY,
    FAULT_KINDS,
    FakeUts,
    FakeUtsData,
    FakeUtsServer,
    Faults,
    InventedRelease,
    VirtualTime,
    find_secret,
    make_invented_release,
)
from tempmedbench_synonyms.uts import session as uts_session
from tempmedbench_synonyms.uts.cache import ResponseCache
from tempmedbench_synonyms.uts.cached import CachedUts
from tempmedbench_synonyms.uts.client import RetryPolicy, UtsClient
from tempmedbench_synonyms.uts.options import UtsOptions
from tempmedbench_synonyms.uts.ratelimit import HEADROOM, RateLimiter
from tempmedbench_synonyms.uts.session import rest_source
from tempmedbench_synonyms.uts.source import RestAtomSource

#: The client's timeout where a test plays ``stall`` faults (held until the client gives up):
#: the one it waits out for each, and the one every answer of the run must come within (a
#: retry would change the counts asserted). The slowest answer measured: 0.44 s under a
#: machine load of 10 (8 workers, 60 concepts), 1.34 s with two threads spinning in this
#: process (the mini release); so 3 s, rather than the 0.5 s that the second failed.
CUT = 3.0


def fast_source(
    base_url: str, cache_dir: Path, *, workers: int = 8, timeout: float = ROOMY_TIMEOUT
) -> RestAtomSource:
    """The REST source with waits removed (limiter and retries); ``timeout``: ``CUT`` where the
    test plays stalls."""
    client = UtsClient(
        base_url=base_url,
        api_key=ApiKey(CANARY_KEY),
        limiter=virtual_limiter(),
        timeout=timeout,
        retry=RetryPolicy(max_attempts=10),
        sleep=lambda s: None,
        rng=random.Random(0),
    )
    return RestAtomSource(
        CachedUts(client, ResponseCache(cache_dir, base_url)), workers=workers, tick=0.02
    )


def mini_requests() -> int:
    """One request per distinct query of the mini table, plus the release probe."""
    table = json.loads((MINI / "synonyms" / "synonym_table_kept.json").read_text("utf-8"))
    queries = set()
    for entry in table["concepts"].values():
        route = entry["route"]
        ident = {"source": entry.get("code"), "cui": entry["cui"], "aui": entry.get("aui")}[route]
        queries.add((route, entry["sab"] if route != "aui" else "", ident))
    return len(queries) + 1


def outputs(folder: Path) -> dict[str, bytes]:
    return {rel: (folder / rel).read_bytes() for rel in OUTPUTS}


@pytest.fixture(scope="module")
def mini_by_mrconso(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    out = tmp_path_factory.mktemp("mrconso-out")
    report = regenerate(MINI, MrconsoSource(MINI_MRCONSO), out_dir=out)
    assert report.outcome == "verified", report.message
    return outputs(out)


def test_rest_rebuilds_the_mini_release_byte_for_byte(
    tmp_path: Path, mini_by_mrconso: dict[str, bytes]
) -> None:
    fake = FakeUts(FakeUtsData.from_mrconso(MINI_MRCONSO), api_key=CANARY_KEY, shuffle_seed=11)
    with FakeUtsServer(fake) as server:
        report = regenerate(MINI, fast_source(server.base_url, tmp_path / "c"),
                            out_dir=tmp_path / "out")  # fmt: skip
        again = regenerate(MINI, fast_source(server.base_url, tmp_path / "c"),
                           out_dir=tmp_path / "out2")  # fmt: skip
    assert (report.outcome, report.exit_code, report.umls_release) == ("verified", 0, "2099AA")
    assert outputs(tmp_path / "out") == mini_by_mrconso
    # One request per distinct query and the probe; the rerun is answered from the cache.
    n = mini_requests()
    assert (report.requests, report.cache_hits) == (n, 0)
    assert (again.requests, again.cache_hits, again.outcome) == (0, n, "verified")
    assert outputs(tmp_path / "out2") == mini_by_mrconso
    assert len(fake.seen) == n


@pytest.mark.parametrize("kind", FAULT_KINDS)
def test_ten_percent_faults_of_each_kind_change_no_byte(
    tmp_path: Path, mini_by_mrconso: dict[str, bytes], kind: str
) -> None:
    fake = FakeUts(
        FakeUtsData.from_mrconso(MINI_MRCONSO),
        api_key=CANARY_KEY,
        # The first request fails for sure (so every kind is seen whatever the fixture holds),
        # then 10% of the others, drawn afresh for every retry.
        faults=Faults(script=[kind], rate=0.1, kinds=(kind,), seed=5, retry_after="0", stall=HELD),
    )
    timeout = CUT if kind == "stall" else ROOMY_TIMEOUT
    with FakeUtsServer(fake) as server:
        report = regenerate(MINI, fast_source(server.base_url, tmp_path / "c", timeout=timeout),
                            out_dir=tmp_path / "out")  # fmt: skip
    faults = sum(1 for s in fake.seen if s.fault == kind)
    assert faults >= 1
    assert report.outcome == "verified", report.message
    assert outputs(tmp_path / "out") == mini_by_mrconso
    assert report.requests == len(fake.seen) == mini_requests() + faults


def test_all_fault_kinds_at_once_over_a_bigger_release(tmp_path: Path) -> None:
    rel = make_invented_release(tmp_path / "gen", concepts=60, questions=120, seed=2)
    by_mrconso = regenerate(rel.folder, MrconsoSource(rel.mrconso), out_dir=tmp_path / "a")
    assert by_mrconso.outcome == "verified"
    fake = FakeUts(
        FakeUtsData.from_mrconso(rel.mrconso),
        api_key=CANARY_KEY,
        # 5% of requests in each of the 6 kinds: 30% fail, and a retry draws afresh.
        faults=Faults(rate=0.3, kinds=FAULT_KINDS, seed=1, retry_after="0", stall=HELD),
    )
    with FakeUtsServer(fake) as server:
        report = regenerate(rel.folder, fast_source(server.base_url, tmp_path / "c", timeout=CUT),
                            out_dir=tmp_path / "b")  # fmt: skip
    assert report.outcome == "verified", report.message
    assert outputs(tmp_path / "b") == outputs(tmp_path / "a")
    kinds = {s.fault for s in fake.seen if s.fault}
    assert kinds == set(FAULT_KINDS)
    assert report.requests == len(fake.seen)


def test_pages_are_followed_and_one_page_is_one_request(tmp_path: Path) -> None:
    # Concepts 0, 4 and 8 have 450 SNOMEDCT_US atoms (449 usable: 3 pages of 200); 0 uses
    # route source, 4 route cui, 8 route aui (one atom, one request whatever the concept).
    rel = make_invented_release(
        tmp_path / "gen", concepts=12, questions=24, atoms_of=lambda k: 450 if k % 4 == 0 else 4
    )
    fake = FakeUts(FakeUtsData.from_mrconso(rel.mrconso), api_key=CANARY_KEY, shuffle_seed=3)
    with FakeUtsServer(fake) as server:
        report = regenerate(rel.folder, fast_source(server.base_url, tmp_path / "c"),
                            out_dir=tmp_path / "b")  # fmt: skip
    assert report.outcome == "verified", report.message
    assert report.requests == 1 + 12 + 2 + 2
    pages = sorted(dict(s.params).get("pageNumber", "1") for s in fake.seen)
    assert pages.count("2") == 2 and pages.count("3") == 2


def test_every_request_of_the_clis_factory_waits_its_turn_at_the_rate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The source the CLI builds (``rest_source``) lets every request go through the rate
    limiter at ``--rate``: the limiter's own record of when it let each request go (on an
    injected clock, read by each worker thread) spaces them 1.08/20 s apart, so that no second
    holds more than 20, with eight workers sending at once. What a server sees of the rate, and
    that the limit is used rather than wasted, is measured by bench/bench_rest.py
    (``--concepts 45 --questions 45 --latency 0.05`` for this release)."""
    vt = VirtualTime()
    seen = threading.local()  # what each thread last read of the clock: its start, once let go
    starts: list[float] = []
    noted = threading.Lock()

    def clock() -> float:
        seen.now = vt.clock()
        return float(seen.now)

    class OnVirtualTime(RateLimiter):
        """The limiter the factory builds, on virtual time: every wait kept, none waited."""

        def __init__(self, rate: float, **kwargs: Any) -> None:
            super().__init__(rate, clock=clock, sleep=vt.sleep, wall_clock=vt.clock, **kwargs)

        def acquire(self) -> float:
            waited = super().acquire()
            with noted:
                starts.append(seen.now)
            return waited

    monkeypatch.setattr(uts_session, "RateLimiter", OnVirtualTime)
    monkeypatch.setenv("UMLS_API_KEY", CANARY_KEY)
    rel = make_invented_release(tmp_path / "gen", concepts=45, questions=45)
    # Answers take a while, so that the eight workers are all waiting for a turn at once.
    fake = FakeUts(FakeUtsData.from_mrconso(rel.mrconso), api_key=CANARY_KEY,
                   faults=Faults(latency=0.05))  # fmt: skip
    with FakeUtsServer(fake) as server:
        options = UtsOptions(base_url=server.base_url, cache_dir=tmp_path / "c", rate=20)
        report = regenerate(rel.folder, rest_source(options, progress=None),
                            out_dir=tmp_path / "b")  # fmt: skip
    assert (report.outcome, report.requests) == ("verified", 46)
    assert len(starts) == len(fake.seen) == 46  # one turn for every request sent
    starts.sort()
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    assert min(gaps) >= HEADROOM / 20 - 1e-9
    busiest = max(sum(1 for s in starts if a <= s < a + 1.0) for a in starts)
    assert busiest <= 19  # 20 at most; 19 with the margin
    assert starts[-1] - starts[0] >= 45 * HEADROOM / 20 - 1e-9


# -- killed or interrupted, then resumed --------------------------------------------------------


def _cached_paths(cache_dir: Path) -> set[str]:
    paths = set()
    for f in cache_dir.rglob("*.json"):
        head, _, body = f.read_bytes().partition(b"\n")
        doc = json.loads(head)  # every entry parses: nothing was left half-written
        if isinstance(doc, dict) and "key" in doc:
            assert hashlib.sha256(body).hexdigest() == doc["sha256"]  # and is whole
            paths.add(doc["key"][1])
    return paths


def _cli(release: InventedRelease, base_url: str, cache: Path, out: Path) -> list[str]:
    return [
        sys.executable, "-c", "from tempmedbench_synonyms.cli import main; main()",
        "regenerate", str(release.folder), "--base-url", base_url, "--cache-dir", str(cache),
        "--out", str(out), "--rate", "20", "--workers", "8", "--json",
    ]  # fmt: skip


@pytest.mark.parametrize("how", ["SIGKILL", "SIGINT"])
def test_a_run_stopped_halfway_resumes_and_fetches_only_what_was_missing(
    tmp_path: Path, how: str
) -> None:
    """The fake answers 12 requests, then holds the rest: the run is stopped while it waits
    for them, then run again; the second run fetches only what the first did not cache."""
    rel = make_invented_release(tmp_path / "gen", concepts=24, questions=24)
    cache = tmp_path / "cache"
    fake = HeldFake(FakeUtsData.from_mrconso(rel.mrconso), api_key=CANARY_KEY, answers=12)
    env = {**os.environ, "UMLS_API_KEY": CANARY_KEY}
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        env.pop(name, None)
    with FakeUtsServer(fake) as server:
        try:
            proc = subprocess.Popen(
                _cli(rel, server.base_url, cache, tmp_path / "out1"),
                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            )  # fmt: skip
            # Once a 13th request arrives, the worker that sent it cached all its earlier
            # answers: of the 13 sent, at most 8 (one a worker) are not in the cache.
            wait_until(lambda: fake.held.is_set() or proc.poll() is not None, "a 13th request")
            proc.send_signal(signal.SIGKILL if how == "SIGKILL" else signal.SIGINT)
            out1, err1 = proc.communicate(timeout=60)
        finally:
            fake.release.set()
        assert proc.returncode != 0
        sent_first = len(fake.seen)
        assert 13 <= sent_first <= 12 + 8  # stopped halfway: the answered, and those held
        had = _cached_paths(cache)
        assert 13 - 8 <= len(had) <= 12
        rerun = subprocess.run(
            _cli(rel, server.base_url, cache, tmp_path / "out2"),
            env=env, capture_output=True, timeout=120, check=False,
        )  # fmt: skip
    report = json.loads(rerun.stdout)
    assert (rerun.returncode, report["outcome"]) == (0, "verified"), rerun.stderr
    refetched = [s.path for s in fake.seen[sent_first:]]
    assert had.isdisjoint(refetched)  # nothing it already had
    assert sorted(set(refetched) | had) == sorted(_cached_paths(cache))
    assert report["requests"] == len(refetched) == 25 - len(had)  # 24 concepts and the probe
    assert report["cache_hits"] == len(had)
    leftovers = {
        "stdout1": out1.decode(), "stderr1": err1.decode(),
        "stdout2": rerun.stdout.decode(), "stderr2": rerun.stderr.decode(),
    }  # fmt: skip
    # Both runs took their turns from one shared rate state (conftest: under tmp_path/state),
    # which holds numbers and the random ids of runs only: the key is nowhere there either.
    (state,) = (tmp_path / "state" / "rate").glob("127.0.0.1-*.state")
    numbers = rb"tempmedbench-rate-v2 [0-9. ]+( [0-9a-f]{16}/[0-9.]+/[0-9.]+)+\n"
    assert re.fullmatch(numbers, state.read_bytes())
    assert find_secret(CANARY_KEY, texts=leftovers, folders=[tmp_path]) == []


def test_the_canary_key_appears_nowhere(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="tempmedbench_synonyms")
    fake = FakeUts(
        FakeUtsData.from_mrconso(MINI_MRCONSO),
        api_key=CANARY_KEY,
        faults=Faults(rate=0.5, kinds=FAULT_KINDS, seed=4, retry_after="0", stall=HELD),
    )
    with FakeUtsServer(fake) as server:
        report = regenerate(MINI, fast_source(server.base_url, tmp_path / "c", timeout=CUT),
                            out_dir=tmp_path / "out")  # fmt: skip
        # A refused key ends the run: its error and traceback must not show the key either.
        wrong = FakeUts(FakeUtsData.from_mrconso(MINI_MRCONSO), api_key="another")
        with FakeUtsServer(wrong) as refusing, pytest.raises(Exception) as info:
            regenerate(MINI, fast_source(refusing.base_url, tmp_path / "c2"),
                       out_dir=tmp_path / "out2")  # fmt: skip
    import traceback

    assert report.outcome == "verified"
    assert info.value.exit_code == 3  # type: ignore[attr-defined]
    out, err = capfd.readouterr()
    texts = {
        "logs": caplog.text,
        "stdout": out,
        "stderr": err,
        "report": json.dumps(report.to_json()),
        "error": str(info.value),
        "traceback": "".join(traceback.format_exception(info.value)),
    }
    assert "retrying" in caplog.text and "/rest/content/2099AA/" in caplog.text
    assert find_secret(CANARY_KEY, texts=texts, folders=[tmp_path]) == []


# -- a long Retry-After, Ctrl-C, a wrong base URL, over real sockets -------------------------------


def _mini_cli(base_url: str, cache: Path, out: Path) -> list[str]:
    return [
        sys.executable, "-c", "from tempmedbench_synonyms.cli import main; main()",
        "regenerate", str(MINI), "--base-url", base_url, "--cache-dir", str(cache),
        "--out", str(out), "--rate", "20", "--workers", "8", "--json",
    ]  # fmt: skip


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env["UMLS_API_KEY"] = CANARY_KEY
    return env


def test_a_retry_after_beyond_the_budget_ends_the_run_promptly_as_unavailable(
    tmp_path: Path,
) -> None:
    """Every atoms request gets 429 with Retry-After 150 s (the budget of one request is 120 s):
    the run fails at once, instead of every worker sleeping out 150 s first (the deadline of
    60 s is reached only then; bench/bench_rest.py times the end)."""
    fake = FakeUts(
        FakeUtsData.from_mrconso(MINI_MRCONSO),
        api_key=CANARY_KEY,
        faults=Faults(script=[None], rate=1.0, kinds=("429",), retry_after="150"),
    )
    with FakeUtsServer(fake) as server:
        try:
            run = subprocess.run(
                _mini_cli(server.base_url, tmp_path / "c", tmp_path / "out"),
                env=_env(), capture_output=True, timeout=60, check=False,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            pytest.fail("still running after 60 s: the workers are sleeping out the 150 s")
    report = json.loads(run.stdout)
    assert (run.returncode, report["outcome"], report["exit_code"]) == (4, "unavailable", 4)
    assert re.fullmatch(
        r"UMLS could not answer /content/2099AA/\S+ after 1 attempts: HTTP 429 Too Many "
        r"Requests with Retry-After 150 s, beyond the 120 s this tool waits for one request",
        report["message"],
    ), report["message"]
    # The probe, then at most one request per worker before the first failure stopped them.
    assert fake.count(200) == 1 and 1 <= fake.count(429) <= 8
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*.json"))


def test_ctrl_c_during_a_429_pause_ends_the_run_promptly(tmp_path: Path) -> None:
    """A Retry-After of 110 s fits the budget, so every worker pauses; Ctrl-C must not wait it
    out (the deadline of 60 s is reached only then), and no worker it wakes sends anything."""
    fake = FakeUts(
        FakeUtsData.from_mrconso(MINI_MRCONSO),
        api_key=CANARY_KEY,
        faults=Faults(script=[None], rate=1.0, kinds=("429",), retry_after="110"),
    )
    with (
        FakeUtsServer(fake) as server,
        subprocess.Popen(
            [*_mini_cli(server.base_url, tmp_path / "c", tmp_path / "out"), "-v"],
            env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        ) as proc,
    ):  # fmt: skip
        assert proc.stdout is not None and proc.stderr is not None
        stderr = Lines(proc.stderr)
        # The client says so when it pauses every worker (from then on none may start), and
        # when the worker that got the 429 goes to sleep until it may ask again (that retry
        # line shares the 429 line's throttle, so it is said with -v; the progress line's
        # "(1 retried)" would come only at its next plain line, seconds later).
        stderr.wait_for(lambda line: "pausing all requests for 110.0 s" in line)
        stderr.wait_for(lambda line: bool(re.search(r"retrying /content/\S+ in 110\.\d s", line)))
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            pytest.fail("still running 60 s after Ctrl-C: it waits out the 110 s pause")
        out = proc.stdout.read()
        err = "\n".join(stderr.rest())
    assert proc.returncode == 130, err
    # Every request but the probe got its 429 once: none was sent again, before Ctrl-C (the
    # pause) or after it (a worker it woke that sent its retry would ask a path again).
    atoms = [s.path for s in fake.seen[1:]]
    assert [s.status for s in fake.seen] == [200] + [429] * len(atoms)
    assert 1 <= len(atoms) == len(set(atoms)) <= 8
    assert "interrupted: nothing was left half-written" in err
    assert find_secret(CANARY_KEY, texts={"out": out, "err": err}) == []


def test_a_base_url_without_rest_is_not_taken_for_a_release_not_served(tmp_path: Path) -> None:
    """The server's own 404 (text/plain, outside /rest) is not UTS's "not found"."""
    fake = FakeUts(FakeUtsData.from_mrconso(MINI_MRCONSO), api_key=CANARY_KEY)
    with FakeUtsServer(fake) as server:
        wrong = server.base_url.removesuffix("/rest")
        with pytest.raises(UnavailableError) as info:
            regenerate(MINI, fast_source(wrong, tmp_path / "c"), out_dir=tmp_path / "out")
        # And again: the answer was not cached, so it is not remembered as "not served".
        with pytest.raises(UnavailableError) as again:
            regenerate(MINI, fast_source(wrong, tmp_path / "c"), out_dir=tmp_path / "out")
    assert re.fullmatch(
        re.escape(wrong) + r" answered HTTP 404 for /content/2099AA/CUI/C\d+ with a text/plain "
        r"body, not the JSON the UMLS REST API sends: this does not look like the UMLS REST API",
        str(info.value),
    ), str(info.value)
    assert info.value.hint == (
        "check --base-url (or UMLS_BASE_URL): the default is https://uts-ws.nlm.nih.gov/rest, "
        "and a UTS base URL ends in /rest"
    )
    assert str(again.value) == str(info.value)
    assert fake.seen == []  # nothing reached the fake UTS under /rest
    assert not list((tmp_path / "c").rglob("*.json"))


def test_current_behind_a_base_url_with_content_in_its_path(
    tmp_path: Path, mini_by_mrconso: dict[str, bytes]
) -> None:
    fake = FakeUts(FakeUtsData.from_mrconso(MINI_MRCONSO), api_key=CANARY_KEY)
    with FakeUtsServer(fake, prefix="/content/mirror/rest") as server:
        assert "/content/" in server.base_url
        report = regenerate(MINI, fast_source(server.base_url, tmp_path / "c"),
                            out_dir=tmp_path / "out", umls_release="current")  # fmt: skip
    assert (report.outcome, report.umls_release) == ("verified", "2099AA"), report.message
    assert outputs(tmp_path / "out") == mini_by_mrconso
