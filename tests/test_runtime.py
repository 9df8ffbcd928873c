"""runtime: the process-wide rules, and how the console scripts end (``runtime.quick_exit``)."""

from __future__ import annotations

import ast
import contextlib
import functools
import http.client
import io
import json
import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from helpers import FIXTURES, GPS_FILE
from helpers.uts import ROWS
from tempmedbench_synonyms import runtime
from tempmedbench_synonyms.testing import CANARY_KEY, FakeUts, FakeUtsData, FakeUtsServer


class _Exited(Exception):
    pass


class _Stream(io.StringIO):
    flushed = 0

    def flush(self) -> None:
        self.flushed += 1


@pytest.fixture
def exits(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The process's end replaced by a recorder that raises (not os._exit itself, which a forked
    child calls)."""
    calls: list[int] = []

    def fake_exit(code: int) -> None:
        calls.append(code)
        raise _Exited

    monkeypatch.setattr(runtime, "_end_process", fake_exit)
    monkeypatch.delitem(sys.modules, "certifi", raising=False)  # other tests imported it
    return calls


def _streams(monkeypatch: pytest.MonkeyPatch) -> tuple[_Stream, _Stream]:
    """stdout and stderr replaced by buffers that count their flushes (in the test itself: pytest
    puts its own capture back after the fixtures)."""
    out, err = _Stream(), _Stream()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    return out, err


@pytest.mark.parametrize(("code", "status"), [(None, 0), (0, 0), (1, 1), (2, 2), (130, 130)])
def test_a_finished_command_alone_ends_at_once(
    exits: list[int], monkeypatch: pytest.MonkeyPatch, code: int | None, status: int
) -> None:
    streams = _streams(monkeypatch)
    with pytest.raises(_Exited):
        runtime.quick_exit(code)
    assert exits == [status]
    assert [s.flushed for s in streams] == [1, 1]


def test_a_message_as_exit_code_takes_the_usual_exit(exits: list[int]) -> None:
    assert runtime.quick_exit("Aborted!") is None
    assert exits == []


def test_another_thread_takes_the_usual_exit(exits: list[int]) -> None:
    release = threading.Event()
    worker = threading.Thread(target=release.wait)
    worker.start()
    try:
        assert runtime.quick_exit(0) is None
    finally:
        release.set()
        worker.join()
    assert exits == []


def test_a_worker_process_takes_the_usual_exit(exits: list[int]) -> None:
    with runtime.WorkerGroup() as group:
        worker = group.spawn("tempmedbench_synonyms.mrconso.worker")
        assert runtime.live_workers() == 1
        assert runtime.quick_exit(0) is None
    assert runtime.live_workers() == 0 and worker.process.returncode is not None
    assert exits == []


def test_certifi_imported_takes_the_usual_exit(
    exits: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its exit handler removes the CA file it extracts when it runs from a zip."""
    monkeypatch.setitem(sys.modules, "certifi", sys.modules[__name__])
    assert runtime.quick_exit(0) is None
    assert exits == []


def test_a_stream_that_cannot_be_flushed_takes_the_usual_exit(
    exits: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    class ClosedPipe(io.StringIO):
        def flush(self) -> None:
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    assert runtime.quick_exit(0) is None
    assert exits == []


def test_the_script_loses_nothing_it_wrote(tmp_path: Path) -> None:
    """The console script's output through a pipe (block-buffered) is the same, byte for byte,
    as that of main() with the usual exit; so is the exit status. An exit handler registered
    before each run shows which exit each took: the script's skips it."""
    args = ["gps", "validate", str(FIXTURES / "gps-planted"), "--gps", str(GPS_FILE), "--json"]
    env = {**os.environ, "TEMPMEDBENCH_STATE_DIR": str(tmp_path)}
    env.pop("TEMPMEDBENCH_GPS", None)

    def run(entry: str) -> tuple[subprocess.CompletedProcess[bytes], bool]:
        marker = tmp_path / f"{entry}.teardown"
        code = (
            f"import atexit; atexit.register(lambda: open({str(marker)!r}, 'w').close())\n"
            f"from tempmedbench_synonyms.cli import {entry}; {entry}()"
        )
        done = subprocess.run(
            [sys.executable, "-c", code, *args], capture_output=True, env=env, timeout=60
        )
        return done, marker.exists()

    (fast, fast_teardown), (usual, usual_teardown) = run("script_main"), run("main")
    assert (fast.returncode, fast.stdout, fast.stderr) == (
        usual.returncode,
        usual.stdout,
        usual.stderr,
    )
    assert (fast_teardown, usual_teardown) == (False, True)
    assert fast.returncode == 1
    report = json.loads(fast.stdout)
    assert report["outcome"] == "findings"


def test_a_stream_closed_from_the_start_is_not_flushed(
    exits: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Started with ``>&-``, Python's sys.stdout is None: nothing to flush, the end at once."""
    monkeypatch.setattr(sys, "stdout", None)
    monkeypatch.setattr(sys, "stderr", _Stream())
    with pytest.raises(_Exited):
        runtime.quick_exit(0)
    assert exits == [0]


@pytest.mark.parametrize(
    ("args", "closed", "status"),
    [
        (["--version"], ">&-", 0),
        (["--version"], "2>&-", 0),
        (["--help"], ">&-", 0),
        (["--bogus"], ">&-", 2),
        (["gps", "validate", str(FIXTURES / "gps-planted"), "--gps", str(GPS_FILE)], ">&-", 1),
        (["gps", "validate", str(FIXTURES / "gps-planted"), "--gps", str(GPS_FILE), "--json"],
         ">&-", 1),
    ],
)  # fmt: skip
def test_a_closed_stdout_or_stderr_changes_no_exit_status(
    tmp_path: Path, args: list[str], closed: str, status: int
) -> None:
    """The status is the command's, with no traceback (one came from flushing a stream that
    was None, and from a --json report written to it)."""
    line = " ".join(f"'{a}'" for a in [sys.executable, "-m", "tempmedbench_synonyms", *args])
    env = {**os.environ, "TEMPMEDBENCH_STATE_DIR": str(tmp_path)}
    env.pop("TEMPMEDBENCH_GPS", None)
    kept = "2>" if closed == ">&-" else ">"
    script = f"{line} {closed} {kept} '{tmp_path / 'kept'}'"
    done = subprocess.run(["sh", "-c", script], env=env, timeout=60, check=False)
    assert done.returncode == status
    assert "Traceback" not in (tmp_path / "kept").read_text(encoding="utf-8")


# -- the contract, read from the source: one place for each process-wide rule ------------------

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "tempmedbench_synonyms"

#: What only runtime.py may do (docs/architecture.md, "The runtime contract").
FORBIDDEN = {
    # and the standard library's own thread starters: a server that answers each request on a
    # thread of its own (socketserver's ThreadingMixIn: non-daemon, signals unblocked), a pool,
    # a timer
    "a thread started": re.compile(
        r"\bThread\(|\bThreading\w*(?:Server|MixIn)\b|\bThreadPoolExecutor\b|\bTimer\("
        r"|\bstart_new_thread\("
    ),
    "a signal handler or mask": re.compile(r"\bimport signal\b|\bsignal\.\w+"),
    "a fork": re.compile(r"\bos\.fork\b|\bos\.forkpty\b"),
    "a multiprocessing context": re.compile(r"\bmultiprocessing\b|\bget_context\("),
    "a child process": re.compile(r"\bimport subprocess\b|\bsubprocess\.|\bPopen\("),
    "the process's exit": re.compile(r"\bos\._exit\b|\bimport atexit\b"),
    "a process-wide knob": re.compile(r"\bsetswitchinterval\(|\bgc\.(?:disable|enable)\("),
}


def _code(path: Path) -> str:
    """The source without its comments and docstrings (they may name what they explain)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            if isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                body[0] = ast.Pass()
    return ast.unparse(tree)


@functools.cache
def _package_code() -> dict[Path, str]:
    """``_code`` of every module of the package, read once for the tests that scan them all."""
    return {path: _code(path) for path in PACKAGE.rglob("*.py")}


@pytest.mark.parametrize("rule", sorted(FORBIDDEN))
def test_only_runtime_starts_threads_sets_signals_forks_spawns_or_exits(rule: str) -> None:
    found = sorted(
        str(path.relative_to(PACKAGE))
        for path, code in _package_code().items()
        if path.name != "runtime.py" and FORBIDDEN[rule].search(code)
    )
    assert found == [], f"{rule} outside runtime.py: {found}"


def test_only_config_reads_the_environment() -> None:
    reading = re.compile(r"\bos\.environ\b|\bgetenv\(|\benvvar=")
    found = sorted(
        str(path.relative_to(PACKAGE))
        for path, code in _package_code().items()
        if path.name != "config.py" and reading.search(code)
    )
    assert found == []


def test_the_contract_test_sees_what_it_forbids(tmp_path: Path) -> None:
    """The patterns catch the forms they are for (a test that could never fail proves nothing)."""
    samples = {
        "a thread started": "threading.Thread(target=f).start()",
        "a signal handler or mask": "signal.pthread_sigmask(signal.SIG_BLOCK, set())",
        "a fork": "pid = os.fork()",
        "a multiprocessing context": "ctx = multiprocessing.get_context('fork')",
        "a child process": "subprocess.run(['x'])",
        "the process's exit": "os._exit(0)",
        "a process-wide knob": "sys.setswitchinterval(0.001)",
    }
    for rule, code in samples.items():
        path = tmp_path / "m.py"
        path.write_text(f'"""A module that names {rule} in its docstring only."""\n{code}\n')
        assert FORBIDDEN[rule].search(_code(path)), rule
        path.write_text(f'"""{code}"""\nx = 1  # {code}\n')
        assert not FORBIDDEN[rule].search(_code(path)), rule


@pytest.mark.parametrize(
    "code",
    [
        "class Server(ThreadingHTTPServer):\n    pass",
        "class Server(socketserver.ThreadingMixIn, HTTPServer):\n    pass",
        "server = socketserver.ThreadingTCPServer(address, Handler)",
        "from concurrent.futures import ThreadPoolExecutor",
        "threading.Timer(1.0, f).start()",
        "_thread.start_new_thread(f, ())",
    ],
)
def test_the_contract_test_sees_the_standard_librarys_thread_starters(
    tmp_path: Path, code: str
) -> None:
    """Each starts threads with no ``Thread(`` in the source (the fake UTS server's requests ran
    on ThreadingHTTPServer's non-daemon threads unseen)."""
    path = tmp_path / "m.py"
    path.write_text(f"{code}\n", encoding="utf-8")
    assert FORBIDDEN["a thread started"].search(_code(path))


def test_the_fake_servers_requests_are_answered_on_helper_threads() -> None:
    """Rule 1 holds in the fake UTS server (testing/server.py) too: each request is answered on
    a daemon thread with SIGINT and SIGTERM blocked, and ``stop`` returns once it has ended."""
    seen: list[tuple[bool, set[signal.Signals], threading.Thread]] = []

    class Recording(FakeUts):
        def handle(self, *args: Any, **kwargs: Any) -> Any:
            blocked = signal.pthread_sigmask(signal.SIG_BLOCK, [])
            stops = {signal.SIGINT, signal.SIGTERM} & blocked
            seen.append((threading.current_thread().daemon, stops, threading.current_thread()))
            return super().handle(*args, **kwargs)

    fake = Recording(FakeUtsData.from_lines(ROWS), api_key=CANARY_KEY)
    with FakeUtsServer(fake) as server:
        split = urlsplit(server.base_url)
        conn = http.client.HTTPConnection(split.hostname or "", split.port, timeout=10)
        try:
            conn.request("GET", f"{split.path}/content/2099AA/CUI/C9000001?apiKey={CANARY_KEY}")
            assert conn.getresponse().status == 200
        finally:
            conn.close()
    assert [(daemon, stops) for daemon, stops, _ in seen] == [
        (True, {signal.SIGINT, signal.SIGTERM})
    ]
    assert not seen[0][2].is_alive()


def _broken_socket_stream() -> tuple[Any, Any]:
    """A text stream on a socket whose peer has closed: writing it is a broken pipe."""
    import socket

    mine, theirs = socket.socketpair()
    theirs.close()
    return mine, mine.makefile("w", encoding="utf-8")


def test_a_users_progress_stream_without_a_reader_keeps_its_descriptor() -> None:
    """A caller's own stream (``Umls(progress=stream)``) whose reader has gone is dropped from
    then on, but its descriptor stays the caller's: the null device goes only onto the process's
    own stdout and stderr (here a socket stayed a socket, not /dev/null)."""
    import stat

    sock, stream = _broken_socket_stream()
    try:
        runtime.say(stream, "scanning")
        assert runtime.reader_gone(stream)
        runtime.say(stream, "more")  # dropped: nothing raised
        assert stat.S_ISSOCK(os.fstat(sock.fileno()).st_mode)
    finally:
        with contextlib.suppress(OSError):  # the caller's to close: its last line never goes
            stream.close()
        sock.close()


def test_a_progress_stream_that_cannot_be_hashed_is_written_and_dropped() -> None:
    """A caller's stream may define ``__eq__`` without ``__hash__`` (a dataclass): it is written
    (it was "unhashable type"), and once its reader has gone, only it is dropped, not a stream
    equal to it."""

    class Lines:
        def __init__(self, broken: bool) -> None:
            self.broken = broken
            self.text = ""
            self.writes = 0

        def __eq__(self, other: object) -> bool:
            return isinstance(other, Lines)

        __hash__ = None  # type: ignore[assignment]

        def write(self, text: str) -> int:
            self.writes += 1
            if self.broken:
                raise BrokenPipeError(32, "Broken pipe")
            self.text += text
            return len(text)

        def flush(self) -> None:
            pass

    kept, gone = Lines(broken=False), Lines(broken=True)
    runtime.say(kept, "one")
    runtime.say(gone, "lost")
    assert runtime.reader_gone(gone) and not runtime.reader_gone(kept)
    runtime.say(kept, "two")
    runtime.say(gone, "not tried")
    assert (kept.text, gone.writes) == ("one\ntwo\n", 1)
