"""SPEC section 8 against a hostile loopback UTS (``hostile_server``): bodies that never end, are
too large or inflate to gigabytes, bytes that trickle, silence, text that is not Unicode, reason
phrases and headers that carry the key and terminal escapes; and Ctrl-C with workers stuck in a
read. Each test asserts the exit code, the message, that nothing was cached from the bad answer,
and that the canary key appears nowhere (stdout, stderr, cache, output folder).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from helpers import MINI_MRCONSO, wait_until
from tempmedbench_synonyms.cli import app
from tempmedbench_synonyms.errors import Cancelled
from tempmedbench_synonyms.secret import ApiKey
from tempmedbench_synonyms.testing import CANARY_KEY, FakeUts, FakeUtsData, find_secret
from tempmedbench_synonyms.uts import client as client_module
from tempmedbench_synonyms.uts import session as uts_session
from tempmedbench_synonyms.uts.cache import LAYOUT, namespace_of
from tempmedbench_synonyms.uts.client import RetryPolicy, UtsClient
from tempmedbench_synonyms.uts.ratelimit import RateLimiter
from tempmedbench_synonyms.uts.watchdog import Watchdog
from uts.hostile_server import ESCAPES, HostileServer, Plan

#: The first concept of the mini release: the request the attacks hit.
BAD = "/content/2099AA/source/SNOMEDCT_US/9990101009/atoms"
PROBE = "/content/2099AA/CUI/C9000001"
INTERRUPTED = "interrupted: nothing was left half-written; run the same command again"


def fake() -> FakeUts:
    return FakeUts(FakeUtsData.from_mrconso(MINI_MRCONSO), api_key=CANARY_KEY)


def attack(kind: str, target: str = BAD) -> Plan:
    return lambda path, n: kind if path == target else None


@pytest.fixture
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two attempts with short backoffs, so that a hostile answer fails in seconds: the policy
    the CLI's factory builds (``session.open_uts``)."""
    monkeypatch.setattr(
        uts_session, "RetryPolicy", lambda: RetryPolicy(max_attempts=2, backoff_base=0.01)
    )


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    monkeypatch.setenv("UMLS_API_KEY", CANARY_KEY)
    monkeypatch.setenv("TEMPMEDBENCH_CACHE_DIR", str(tmp_path / "cache"))
    yield {**os.environ}


def cached_entries(cache_dir: Path) -> dict[str, Any]:
    """Every response-cache entry (a header line, then the body its SHA-256 names): the request
    path and the stored result."""
    entries = {}
    for f in cache_dir.rglob("*.json"):
        head, _, body = f.read_bytes().partition(b"\n")
        doc = json.loads(head)
        if isinstance(doc, dict) and "key" in doc:
            assert hashlib.sha256(body).hexdigest() == doc["sha256"]  # whole
            entries[doc["key"][1]] = json.loads(body)
    return entries


def forget(cache_dir: Path, path: str) -> None:
    """Remove the response-cache entry of the request ``path``: the next run asks for it."""
    for f in cache_dir.rglob("*.json"):
        head = json.loads(f.read_bytes().partition(b"\n")[0])
        if isinstance(head, dict) and head.get("key", [None, None])[1] == path:
            f.unlink()
            return
    raise AssertionError(f"no cache entry for {path}")


def cached_paths(cache_dir: Path) -> set[str]:
    """The request path of every response-cache entry."""
    return set(cached_entries(cache_dir))


def no_leak(tmp_path: Path, **texts: str) -> None:
    assert find_secret(CANARY_KEY, texts=texts, folders=[tmp_path]) == []
    for label, text in texts.items():
        assert not set(text) & {"\x1b", "\x07", "\x9b"}, label


CASES = [
    ("endless", [], "HTTP 200 with a body of more than 16 MiB (after decoding)"),
    ("huge", [], "HTTP 200 with a body of 2147483648 bytes, more than the 16 MiB this tool reads"),
    ("gzip_bomb", [], "HTTP 200 with a body of more than 16 MiB (after decoding)"),
    ("deflate_bomb", [], "HTTP 200 with a body of more than 16 MiB (after decoding)"),
    ("trickle", ["--timeout", "0.5"], "no complete answer within 0.5 s"),
    ("slow_head", ["--timeout", "0.5"], "no complete answer within 0.5 s"),
    ("silent", ["--timeout", "0.5"], "no complete answer within 0.5 s"),
    ("surrogate", [], "HTTP 200 with text that is not valid Unicode (a lone surrogate escape)"),
    # urllib3 >= 2.8 (pyproject): a chunk-size line is read 64 KiB at most
    (
        "chunk_line",
        [],
        "ChunkedEncodingError: Response chunk size line exceeded maximum allowed length",
    ),
    ("raw_surrogate", [], "HTTP 200 with a body that is not UTF-8 text"),
    ("key_escaped", [], "HTTP 200 with a body that holds the API key"),
    (
        "duplicate",
        [],
        "HTTP 200 with a body that is not strict JSON: the key 'name' appears twice in one object",
    ),
    (
        "nan",
        [],
        "HTTP 200 with a body that is not strict JSON: NaN is not a JSON value (RFC 8259 has no "
        "NaN or Infinity)",
    ),
    (
        "overflow",
        [],
        "HTTP 200 with a body that is not strict JSON: the number 1e99999 is too large for a "
        "64-bit float",
    ),
    ("reason", [], "HTTP 503 Service Unavailable for apiKey=***"),
    ("ctype", [], "HTTP 200 with a body that is not JSON (text/html)"),
]
AUI_PATH = "/content/2099AA/AUI/A9000071"


@pytest.mark.parametrize(("kind", "options", "detail"), CASES, ids=[c[0] for c in CASES])
def test_regenerate_fails_a_hostile_answer_cleanly(
    kind: str,
    options: list[str],
    detail: str,
    mini: Path,
    tmp_path: Path,
    env: dict[str, str],
    fast_retries: None,
) -> None:
    # The trickles send a byte every 0.1 s: no single read waits as long as --timeout, so only
    # the deadline of the whole attempt can stop them. (--rate 20, the most, only to be quick.)
    armed = threading.Event()
    plan = attack(kind)
    with HostileServer(fake(), lambda path, n: plan(path, n) if armed.is_set() else None,
                       interval=0.1) as server:  # fmt: skip
        command = ["regenerate", str(mini), "--base-url", server.base_url, "--rate", "20",
                   "--json"]  # fmt: skip
        if "--timeout" in options:
            # The short --timeout is for the attacked attempts alone: a run before has cached
            # every other answer, so none has to come within it on a busy machine.
            before = CliRunner().invoke(app, [*command, "--out", str(tmp_path / "before")])
            assert before.exit_code == 0, before.output
            forget(tmp_path / "cache", BAD)
        sent_before = len(server.seen)
        armed.set()
        result = CliRunner().invoke(app, [*command, "--out", str(tmp_path / "out"), *options])
        attacks = server.count(kind)
        if "--timeout" in options:  # the client gave up on both attempts, not the server
            wait_until(lambda: server.hung_up == 2, "the server to see the client hang up twice")
            assert server.seen[sent_before:] == [(BAD, kind)] * 2  # nothing else was sent
    message = f"UMLS could not answer {BAD} after 2 attempts: {detail}"
    doc = json.loads(result.stdout)
    assert (result.exit_code, doc["outcome"], doc["message"]) == (4, "unavailable", message)
    assert result.stderr.splitlines()[-2:] == [
        f"error: {message}",
        "hint: UMLS may be down or unreachable from here; run again later: everything fetched "
        "so far is cached and will not be fetched again",
    ]
    assert attacks == 2  # every attempt met the attack
    paths = cached_paths(tmp_path / "cache")
    assert PROBE in paths and BAD not in paths
    assert not (tmp_path / "out").exists()
    no_leak(tmp_path, stdout=result.stdout, stderr=result.stderr)


def test_an_answer_holding_the_key_is_refused_and_never_cached(
    mini: Path, tmp_path: Path, env: dict[str, str], fast_retries: None
) -> None:
    """A server that echoes the key into its data (an atom's concept link) would have it written
    to the cache and shown: the answer is malformed instead."""
    with HostileServer(fake(), attack("key_in_link", AUI_PATH)) as server:
        result = CliRunner().invoke(
            app,
            ["regenerate", str(mini), "--base-url", server.base_url, "--out",
             str(tmp_path / "out"), "--rate", "20", "--json"],
        )  # fmt: skip
        assert server.count("key_in_link") == 2
    message = (
        f"UMLS could not answer {AUI_PATH} after 2 attempts: HTTP 200 with a body that holds "
        "the API key"
    )
    assert (result.exit_code, json.loads(result.stdout)["message"]) == (4, message)
    assert AUI_PATH not in cached_paths(tmp_path / "cache")
    no_leak(tmp_path, stdout=result.stdout, stderr=result.stderr)


def test_server_text_in_a_report_reaches_no_terminal(
    mini: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    """A drift reason names the CUI an atom now links to, as the server sent it: it is shown
    escaped on stderr (``config.shown_text``: exact, and no escape reaches the terminal), and C1
    controls are \\u escapes in --json (the same text once parsed)."""
    with HostileServer(fake(), attack("c1_in_link", AUI_PATH)) as server:
        result = CliRunner().invoke(
            app,
            ["regenerate", str(mini), "--base-url", server.base_url, "--out",
             str(tmp_path / "out"), "--rate", "20", "--json", "-v"],
        )  # fmt: skip
    doc = json.loads(result.stdout)
    reason = "atom A9000071 now belongs to C9000099\x9b2J\x1b[31m, not C9000007"
    assert (result.exit_code, doc["drift_reasons"]) == (1, {"9990107008": reason})
    assert "C9000099\\u009b2J\\u001b[31m, not C9000007" in result.stdout
    assert "atom A9000071 now belongs to C9000099\\x9b2J\\x1b[31m, not C9000007" in result.stderr
    assert ("\x1b" in result.stderr, "\x9b" in result.stderr) == (False, False)
    assert AUI_PATH in cached_paths(tmp_path / "cache")  # valid data: cached as sent
    no_leak(tmp_path, stdout=result.stdout, stderr=result.stderr)


@pytest.mark.parametrize(
    ("args", "path"),
    [
        (["atom", "A9000071"], "/content/2099AA/AUI/A9000071"),
        (["atoms", "C9000001"], "/content/2099AA/CUI/C9000001/atoms"),
        (["atoms", "C9000001", "--sab", "SNOMEDCT_US"], "/content/2099AA/CUI/C9000001/atoms"),
    ],
)
def test_umls_commands_refuse_a_lone_surrogate(
    args: list[str], path: str, tmp_path: Path, env: dict[str, str], fast_retries: None
) -> None:
    with HostileServer(fake(), attack("surrogate", path)) as server:
        result = CliRunner().invoke(
            app,
            ["umls", *args, "--umls-release", "2099AA", "--base-url", server.base_url, "--json"],
        )
        assert server.count("surrogate") == 2
    message = (
        f"UMLS could not answer {path} after 2 attempts: HTTP 200 with text that is not valid "
        "Unicode (a lone surrogate escape)"
    )
    assert result.exit_code == 4  # not 70: the answer never reaches the cache
    assert json.loads(result.stdout)["message"] == message
    assert result.stderr.splitlines()[0] == f"error: {message}"
    assert cached_paths(tmp_path / "cache") == set()
    no_leak(tmp_path, stdout=result.stdout, stderr=result.stderr)


def test_umls_concept_cleans_a_reason_phrase_in_json_and_stderr(
    tmp_path: Path, env: dict[str, str], fast_retries: None
) -> None:
    with HostileServer(fake(), attack("reason", "/content/2099AA/CUI/C9000002")) as server:
        result = CliRunner().invoke(
            app,
            ["umls", "concept", "C9000002", "--umls-release", "2099AA", "--base-url",
             server.base_url, "--json"],
        )  # fmt: skip
    message = (
        "UMLS could not answer /content/2099AA/CUI/C9000002 after 2 attempts: HTTP 503 Service "
        "Unavailable for apiKey=***"
    )
    assert (result.exit_code, json.loads(result.stdout)["message"]) == (4, message)
    assert result.stderr.splitlines()[0] == f"error: {message}"
    assert cached_paths(tmp_path / "cache") == set()
    no_leak(tmp_path, stdout=result.stdout, stderr=result.stderr)


def test_atom_names_are_cleaned_where_shown(tmp_path: Path, env: dict[str, str]) -> None:
    """A name with escapes is valid Unicode: it is cached as sent (hash-relevant data, SPEC 4),
    and shown without its escape sequences and control characters (SPEC 8)."""
    dirty = f"Invented{ESCAPES} \x9b2Jname\x00"
    lines = []
    for line in MINI_MRCONSO.read_text("utf-8").splitlines():
        fields = line.split("|")
        if fields[7] == "A9000071":
            fields[14] = dirty
        lines.append("|".join(fields))
    uts = FakeUts(FakeUtsData.from_lines(lines), api_key=CANARY_KEY)
    args = ["umls", "atom", "A9000071", "--umls-release", "2099AA"]
    with HostileServer(uts, lambda path, n: None) as server:
        table = CliRunner().invoke(app, [*args, "--base-url", server.base_url])
        as_json = CliRunner().invoke(app, [*args, "--base-url", server.base_url, "--json"])
    assert (table.exit_code, as_json.exit_code) == (0, 0), table.stderr
    assert table.stdout.splitlines()[1].endswith("  Invented name")
    assert json.loads(as_json.stdout)["atoms"][0]["name"] == "Invented name"
    stored = cached_entries(tmp_path / "cache")
    assert stored["/content/2099AA/AUI/A9000071"]["name"] == dirty
    no_leak(tmp_path, stdout=table.stdout + as_json.stdout, stderr=table.stderr + as_json.stderr)


# -- Ctrl-C, for real: a subprocess, SIGINT, workers stuck in a read ---------------------------


def _child_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env.update(UMLS_API_KEY=CANARY_KEY, TEMPMEDBENCH_CACHE_DIR=str(tmp_path / "cache"),
               NO_PROXY="127.0.0.1")  # fmt: skip
    return env


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-c", "from tempmedbench_synonyms.cli import main; main()", *args]


def _interrupt(
    proc: subprocess.Popen[bytes],
    ready: Callable[[], bool],
    what: str,
    *,
    again: Callable[[], bool] | None = None,
) -> tuple[int, str, str]:
    """Wait until ``ready()`` (``what`` it means), send SIGINT, and wait for the end. With
    ``again``, a second SIGINT follows as soon as ``again()`` shows that the first one is being
    handled. Every wait has a deadline that only a hang reaches (60 s; the end takes
    milliseconds: bench/bench_uts_hostile.py times it). The callers run with ``--timeout 120``
    and a server that holds a request 300 s: a read that Ctrl-C does not cut outlasts it."""
    wait_until(lambda: ready() or proc.poll() is not None, what)
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGINT)
    if again is not None:
        wait_until(lambda: again() or proc.poll() is not None, "the first Ctrl-C to be handled")
        proc.send_signal(signal.SIGINT)  # (nothing is sent to a process that has ended)
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"still running 60 s after Ctrl-C (a hang): {err.decode()[-2000:]}")
    return proc.returncode, out.decode(), err.decode()


@pytest.mark.parametrize("times", [1, 2])
def test_ctrl_c_ends_a_regeneration_with_workers_stuck_in_reads(
    mini: Path, tmp_path: Path, times: int
) -> None:
    """The first three atom requests are answered, every later one is accepted and never
    answered: eight workers, seven stuck. Ctrl-C (once, or twice: the second while the first
    is cutting the stuck reads) ends it with exit 130, the answers already complete stay cached,
    and nothing else is."""

    def plan(path: str, n: int) -> str | None:
        return "silent" if path != PROBE and n > 3 else None

    def stuck() -> bool:  # seven workers in a read, the four answers in the cache
        return server.count("silent") >= 7 and len(cached_paths(tmp_path / "cache")) >= 4

    with HostileServer(fake(), plan, limit=300) as server:
        proc = subprocess.Popen(
            _cli("regenerate", str(mini), "--base-url", server.base_url, "--workers", "8",
                 "--out", str(tmp_path / "out"), "--timeout", "120", "--rate", "20"),
            env=_child_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        code, out, err = _interrupt(
            proc,
            stuck,
            "seven requests held in silence and four answers cached",
            again=(lambda: server.hung_up >= 1) if times == 2 else None,
        )
        answered = [p for p, a in server.seen if a is None]
    assert code == 130, err
    assert err.splitlines()[-1] == INTERRUPTED
    assert "Traceback" not in err
    assert len(answered) == 4 and answered[0] == PROBE
    assert cached_paths(tmp_path / "cache") == set(answered)
    assert not (tmp_path / "out").exists()
    no_leak(tmp_path, stdout=out, stderr=err)


def test_ctrl_c_ends_a_umls_command_stuck_in_a_read(tmp_path: Path) -> None:
    with HostileServer(fake(), lambda path, n: "silent", limit=300) as server:
        proc = subprocess.Popen(
            _cli("umls", "atoms", "C9000001", "--umls-release", "2099AA", "--base-url",
                 server.base_url, "--timeout", "120"),
            env=_child_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        code, out, err = _interrupt(
            proc, lambda: server.count("silent") >= 1, "the request held in silence"
        )
    assert (code, out, err) == (130, "", INTERRUPTED + "\n")
    assert cached_paths(tmp_path / "cache") == set()
    no_leak(tmp_path, stdout=out, stderr=err)


# -- retries you can see ----------------------------------------------------------------------

RETRY_LINE = re.compile(
    r"WARNING: retrying /content/2099AA/AUI/A9000071 in \d+\.\d s after HTTP 503 Service "
    r"Unavailable for apiKey=\*\*\* \(5 attempts left\)"
)


@pytest.mark.parametrize("quiet", [False, True])
def test_a_retry_says_so_on_stderr_unless_quiet(tmp_path: Path, quiet: bool) -> None:
    """One 503 (its reason phrase carrying the key and escapes), then the answer."""
    with HostileServer(fake(), lambda path, n: "reason" if n == 0 else None) as server:
        proc = subprocess.run(
            _cli("umls", "atom", "A9000071", "--umls-release", "2099AA", "--base-url",
                 server.base_url, *(["-q"] if quiet else [])),
            env=_child_env(tmp_path), capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
    lines = proc.stderr.splitlines()
    assert proc.returncode == 0, proc.stderr
    if quiet:  # only errors on stderr
        assert lines == []
    else:
        assert len(lines) == 2 and RETRY_LINE.fullmatch(lines[0]), lines
        assert lines[1] == "1 atom of AUI A9000071, UMLS 2099AA"
    assert cached_paths(tmp_path / "cache") == {"/content/2099AA/AUI/A9000071"}
    no_leak(tmp_path, stdout=proc.stdout, stderr=proc.stderr)


# -- the watchdog, in this process ------------------------------------------------------------


def test_cancel_cuts_a_request_stuck_in_a_read_at_once() -> None:
    """A request held in silence would wait out its 120 s timeout (the server holds it 300 s);
    cancel cuts it at once. The join's deadline (60 s) is reached only if it does not."""
    with HostileServer(fake(), lambda path, n: "silent", limit=300) as server:
        client = UtsClient(base_url=server.base_url, api_key=ApiKey(CANARY_KEY),
                           limiter=RateLimiter(20), timeout=120)  # fmt: skip
        outcome: list[BaseException] = []

        def ask() -> None:
            try:
                client.get_result("/content/2099AA/CUI/C9000001")
            except BaseException as exc:
                outcome.append(exc)

        worker = threading.Thread(target=ask)
        worker.start()
        wait_until(lambda: server.count("silent") >= 1, "the request held in silence")
        client.cancel()
        worker.join(60)
        assert not worker.is_alive(), "cancel did not cut the read: it waits for its timeout"
        client.close()
        wait_until(lambda: server.hung_up == 1, "the server to see the client hang up")
    assert [type(e) for e in outcome] == [Cancelled]
    assert (client.stats.requests, client.stats.retries) == (1, 0)


class _Opening:
    """A connection whose socket is still being opened: ``sock`` is None until ``opened``;
    ``looked`` is set once the watchdog has looked for it a second time (it tries again)."""

    def __init__(self) -> None:
        self.opened: socket.socket | None = None
        self.looks = 0
        self.looked = threading.Event()

    @property
    def sock(self) -> socket.socket | None:
        self.looks += 1
        if self.opened is None and self.looks >= 2:
            self.looked.set()
        return self.opened


def _watchdog_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name == "uts-watchdog"}


def test_the_watchdog_cuts_a_connection_whose_socket_is_still_opening() -> None:
    flights = Watchdog()
    flights.RETRY = 0.01
    ours, theirs = socket.socketpair()
    conn = _Opening()
    owner = object()
    try:
        with flights.flight(owner, 300):
            flights.track(conn)
            flights.cancel(owner)  # no socket yet (its first look): the watchdog tries again
            assert conn.looked.wait(60), "the watchdog never looked for the socket again"
            conn.opened = ours  # ...and cuts it once it is there
            ours.settimeout(60)  # a hang guard: the flight's own deadline is 300 s away
            assert ours.recv(1) == b""  # shut down by the watchdog: the read ends
    finally:
        ours.close()
        theirs.close()


def test_the_watchdog_cuts_an_attempt_at_its_deadline_and_then_retires() -> None:
    flights = Watchdog()
    ours, theirs = socket.socketpair()
    conn = types.SimpleNamespace(sock=ours)
    before = _watchdog_threads()
    try:
        began = time.monotonic()
        with flights.flight(object(), 0.2) as flight:
            flights.track(conn)  # type: ignore[arg-type]
            (watcher,) = _watchdog_threads() - before  # its thread, started by the first track
            ours.settimeout(60)  # a hang guard: the deadline is 0.2 s away
            assert ours.recv(1) == b""  # cut: the read ends...
            # ...and not before its deadline (an order of two events on one clock: a slow
            # machine only moves the cut later; how much later, bench_uts_hostile.py says)
            assert time.monotonic() >= began + 0.2
            assert flight.doomed == "timeout"
        watcher.join(60)  # no attempt left on the wire: its thread ends
        assert not watcher.is_alive(), "the watchdog's thread outlived the last attempt"
        flights.track(conn)  # type: ignore[arg-type]  # outside an attempt: ignored...
        assert _watchdog_threads() - before == set()  # ...and starts no thread
    finally:
        ours.close()
        theirs.close()


# -- one bound on a whole answer, all its pages together ---------------------------------------


def test_an_answer_larger_in_all_its_pages_than_the_cap_is_refused_and_never_cached(
    tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ten pages of 300 kB each, under the 1 MiB cap set here (32 MiB in the tool) one by one:
    the fourth page takes the answer past the cap, and nothing of it is kept."""
    monkeypatch.setattr(client_module, "MAX_ANSWER", 1024 * 1024)
    path = "/content/2099AA/CUI/C9000001/atoms"
    with HostileServer(fake(), attack("fat_pages", path), pad=300_000) as server:
        result = CliRunner().invoke(
            app,
            ["umls", "atoms", "C9000001", "--umls-release", "2099AA", "--base-url",
             server.base_url, "--json"],
        )  # fmt: skip
        asked = server.count("fat_pages")
    message = (
        f"UMLS answered {path} with more than 1 MiB in its first 4 of 10 pages, more than this "
        "tool reads for one answer"
    )
    assert (result.exit_code, json.loads(result.stdout)["message"]) == (4, message)
    assert result.stderr.splitlines()[0] == f"error: {message}"
    assert asked == 4  # no page after the one past the cap is asked for
    assert cached_paths(tmp_path / "cache") == set()
    no_leak(tmp_path, stdout=result.stdout, stderr=result.stderr)


# -- temporary files an interrupted run left in the cache --------------------------------------


def test_a_run_that_writes_to_the_cache_removes_the_leftovers_there_with_one_warning(
    tmp_path: Path,
) -> None:
    with HostileServer(fake(), lambda path, n: None) as server:
        folder = tmp_path / "cache" / LAYOUT / namespace_of(server.base_url)
        old = [
            folder / ".base.json.0123456789ab.tmp",
            folder / "2099AA" / ".x.json.a1b2c3d4e5f6.tmp",
        ]
        young = folder / "2099AA" / ".y.json.abcdefabcdef.tmp"  # a run writing it right now
        other = folder / "2099AA" / "notes.tmp"  # not a name this tool gives
        for f in (*old, young, other):
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_bytes(b"half")
        for f in (*old, other):
            os.utime(f, (time.time() - 3600, time.time() - 3600))
        run = subprocess.run(
            _cli("umls", "atom", "A9000071", "--umls-release", "2099AA", "--base-url",
                 server.base_url),
            env=_child_env(tmp_path), capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert run.stderr.splitlines() == [
        f"WARNING: removed 2 temporary file(s) left by an interrupted run: {old[0]}, {old[1]}",
        "1 atom of AUI A9000071, UMLS 2099AA",
    ]
    assert [f.exists() for f in (*old, young, other)] == [False, False, True, True]
    assert cached_paths(tmp_path / "cache") == {"/content/2099AA/AUI/A9000071"}
    info = subprocess.run(
        _cli("cache", "info"), env=_child_env(tmp_path), capture_output=True, text=True,
        timeout=60, check=False,
    )  # fmt: skip
    assert (info.returncode, info.stderr) == (
        0,
        "note: 2 temporary files left by an interrupted run; the next run that writes to this "
        "cache removes them\n",
    )
    no_leak(tmp_path, stdout=run.stdout + info.stdout, stderr=run.stderr + info.stderr)
