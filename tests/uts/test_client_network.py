"""The client's way to the network (``uts/client.py``): a base URL on this machine never goes
through a proxy (the key would reach it in clear), and a connection that cannot be made is said
in a few words, not in urllib3's reprs.

Offline: every socket here is on 127.0.0.1, and the proxy is a listener of the test's own that
answers nothing.
"""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import requests
import urllib3.connection
import urllib3.exceptions

from helpers import ROOMY_TIMEOUT
from helpers.uts import fake_uts
from tempmedbench_synonyms.errors import UnavailableError
from tempmedbench_synonyms.secret import ApiKey
from tempmedbench_synonyms.testing import CANARY_KEY, FakeUtsServer, RunningFakeUts
from tempmedbench_synonyms.uts.client import RetryPolicy, UtsClient, unreached
from tempmedbench_synonyms.uts.ratelimit import RateLimiter

CONCEPT_PATH = "/content/2099AA/CUI/C9000001"
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                   "all_proxy")  # fmt: skip


@contextmanager
def posing_proxy() -> Iterator[tuple[int, socket.socket]]:
    """A listener on 127.0.0.1 playing a proxy: its port, and the socket to read later."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        yield listener.getsockname()[1], listener
    finally:
        listener.close()


def received(listener: socket.socket) -> bytes:
    """Every byte sent to the listener: a connection made earlier waits in its backlog, so one
    accept with a short bound finds it (the run has ended: nothing is on its way)."""
    data = b""
    listener.settimeout(0.2)
    while True:
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            return data
        with conn:
            conn.settimeout(0.2)
            while True:
                try:
                    chunk = conn.recv(65536)
                except (TimeoutError, ConnectionError):
                    break
                if not chunk:
                    break
                data += chunk


def only_loopback_lookups(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every name looked up from now on, in a list; any but 127.0.0.1 is refused (OSError), so
    that a test whose URL names another host can never reach the network."""
    looked_up: list[object] = []
    real_getaddrinfo = socket.getaddrinfo

    def only_loopback(host: Any, *args: Any, **kwargs: Any) -> Any:
        looked_up.append(host)
        if host != "127.0.0.1":
            raise OSError("no name but 127.0.0.1 is looked up in this test")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", only_loopback)
    return looked_up


def closed_port() -> int:
    """A port of 127.0.0.1 that nothing listens on (bound, then let go)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def client_for(base_url: str) -> UtsClient:
    return UtsClient(
        base_url=base_url,
        api_key=ApiKey(CANARY_KEY),
        limiter=RateLimiter(20),
        timeout=ROOMY_TIMEOUT,
        retry=RetryPolicy(max_attempts=1),
    )


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_a_loopback_base_url_never_goes_through_a_proxy(
    monkeypatch: pytest.MonkeyPatch, host: str
) -> None:
    """trust 21: with every proxy variable naming a listener and no NO_PROXY, the request goes
    straight to the fake; the listener gets no byte, the key least of all."""
    with posing_proxy() as (port, listener), FakeUtsServer(fake_uts()) as server:
        for name in PROXY_VARIABLES:
            monkeypatch.setenv(name, f"http://127.0.0.1:{port}")
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        with closing(client_for(server.base_url.replace("127.0.0.1", host))) as client:
            concept = client.get_result(CONCEPT_PATH)
        seen = received(listener)
        assert concept["ui"] == "C9000001"
        assert server.fake.count() == 1
        assert seen == b""


def test_a_closed_port_is_said_in_a_few_words() -> None:
    """client L12: not ``ConnectionError: _TrackedHTTPPool(host=..., port=...): Max retries
    exceeded ... (Caused by NewConnectionError(...``."""
    port = closed_port()
    with closing(client_for(f"http://127.0.0.1:{port}/rest")) as client:
        with pytest.raises(UnavailableError) as info:
            client.get_result(CONCEPT_PATH)
    assert str(info.value) == (
        f"UMLS could not answer {CONCEPT_PATH} after 1 attempts: cannot connect to "
        f"127.0.0.1:{port}: connection refused"
    )
    assert info.value.hint == (
        "UMLS may be down or unreachable from here; run again later: everything fetched so far "
        "is cached and will not be fetched again"
    )


def test_a_proxy_that_cannot_be_reached_is_named_with_its_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """trust 32: a ProxyError is no sign that UMLS is down; the hint names the variables. The
    base URL is not on this machine, so the proxy is used (and refuses: no name is resolved)."""
    port = closed_port()
    looked_up = only_loopback_lookups(monkeypatch)
    monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{port}")
    monkeypatch.delenv("https_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    with closing(client_for("https://uts.invalid/rest")) as client:
        with pytest.raises(UnavailableError) as info:
            client.get_result(CONCEPT_PATH)
    assert set(looked_up) == {"127.0.0.1"}  # the proxy only: uts.invalid is never looked up
    assert str(info.value) == (
        f"UMLS could not answer {CONCEPT_PATH} after 1 attempts: cannot connect to the proxy "
        f"127.0.0.1:{port}: connection refused"
    )
    assert info.value.hint == (
        f"the proxy 127.0.0.1:{port} that HTTPS_PROXY, HTTP_PROXY or ALL_PROXY names could not "
        "be used: check it, or name the UMLS host in NO_PROXY to go there without it"
    )


@contextmanager
def closing_proxy() -> Iterator[tuple[int, list[bytes]]]:
    """A listener on 127.0.0.1 playing a proxy that accepts connections, reads what comes
    (the CONNECT) and closes them unanswered: its port, and what it read. Leaving the block
    stops it (its accept waits 0.2 s at a time); a read waits for the CONNECT, which comes at
    once, however late a busy machine sends it (a hang bound)."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(0.2)
    stop = threading.Event()
    heard: list[bytes] = []

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(ROOMY_TIMEOUT)
                with contextlib.suppress(TimeoutError, ConnectionError):
                    heard.append(conn.recv(65536))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1], heard
    finally:
        stop.set()
        thread.join(5)
        listener.close()


def test_a_proxy_that_closes_the_connection_is_named_with_its_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """review R5: a proxy that accepts the connection and closes it raised requests'
    ConnectionError, not ProxyError, hinted as "UMLS may be down". With a proxy in use for the
    URL (requests' own choice from the environment), the hint names it and its variables. The
    UMLS host is never resolved: the CONNECT goes to the proxy."""
    looked_up = only_loopback_lookups(monkeypatch)
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    with closing_proxy() as (port, heard):
        monkeypatch.setenv("HTTPS_PROXY", f"http://user:pass@127.0.0.1:{port}")  # never shown
        with closing(client_for("https://uts.example.invalid/rest")) as client:
            with pytest.raises(UnavailableError) as info:
                client.get_result(CONCEPT_PATH)
    assert str(info.value) == (
        f"UMLS could not answer {CONCEPT_PATH} after 1 attempts: the connection to "
        "uts.example.invalid:443 was lost: remote end closed connection without response"
    )
    assert info.value.hint == (
        f"the proxy 127.0.0.1:{port} that HTTPS_PROXY, HTTP_PROXY or ALL_PROXY names could not "
        "be used: check it, or name the UMLS host in NO_PROXY to go there without it"
    )
    # one CONNECT, as http.client writes it: HTTP/1.0 and no Host before Python 3.12, HTTP/1.1
    # and a Host header from 3.12 on; its only credential the proxy's user:pass, never the key
    assert len(heard) == 1
    line, *headers = heard[0].split(b"\r\n")
    assert line in (
        b"CONNECT uts.example.invalid:443 HTTP/1.0",
        b"CONNECT uts.example.invalid:443 HTTP/1.1",
    )
    assert set(headers) - {b"", b"Host: uts.example.invalid:443"} == {
        b"Proxy-Authorization: Basic dXNlcjpwYXNz"
    }
    assert set(looked_up) == {"127.0.0.1"}
    assert CANARY_KEY.lower() not in (str(info.value) + str(info.value.hint)).lower()


def test_a_reset_connection_is_said_in_a_few_words() -> None:
    with FakeUtsServer(fake_uts(script=["reset"])) as server:
        with closing(client_for(server.base_url)) as client:
            with pytest.raises(UnavailableError) as info:
                client.get_result(CONCEPT_PATH)
        port = urlsplit(server.base_url).port
    assert str(info.value) == (
        f"UMLS could not answer {CONCEPT_PATH} after 1 attempts: the connection to "
        f"127.0.0.1:{port} was lost: connection reset by peer"
    )


def test_a_name_that_cannot_be_resolved_is_said_in_a_few_words() -> None:
    """The chain urllib3 raises for a failed lookup, built here: no name is looked up."""
    conn = urllib3.connection.HTTPSConnection("uts.invalid", 443)
    lookup = urllib3.exceptions.NameResolutionError("uts.invalid", conn, socket.gaierror())
    lookup.__cause__ = socket.gaierror(-2, "Name or service not known")
    exc = requests.exceptions.ConnectionError(
        urllib3.exceptions.MaxRetryError(None, "/rest/x?apiKey=k", lookup)  # type: ignore[arg-type]
    )
    assert unreached(exc, "https://uts.invalid/rest") == (
        "cannot find the host uts.invalid: name or service not known"
    )
    assert unreached(requests.exceptions.ConnectionError("odd"), "https://uts.invalid") is None


def no_key_anywhere(*texts: str, folders: list[Path]) -> None:
    """The canary key in no text and no file (names too), in any case: a host name comes back
    lower-cased."""
    key = CANARY_KEY.lower()
    assert [t for t in texts if key in t.lower()] == []
    for folder in folders:
        for path in folder.rglob("*"):
            assert key not in str(path).lower()
            if path.is_file():
                assert key.encode() not in path.read_bytes().lower(), path


def test_a_cli_run_in_the_fake_uts_env_sends_nothing_to_a_proxy(
    fake_uts: RunningFakeUts, monkeypatch: pytest.MonkeyPatch
) -> None:
    """trust 21, as the audit ran it: a subprocess given ``fake_uts.env`` behind a proxy (every
    proxy variable names a listener of ours; the user has no NO_PROXY)."""
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    with posing_proxy() as (port, listener):
        env = {**fake_uts.env, **dict.fromkeys(PROXY_VARIABLES, f"http://127.0.0.1:{port}")}
        done = subprocess.run(
            [sys.executable, "-m", "tempmedbench_synonyms", "umls", "concept", "C9000001",
             "--umls-release", "2099AA", "--json", "--timeout", str(ROOMY_TIMEOUT)],
            env=env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        seen = received(listener)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["found"] is True
    assert fake_uts.fake.count() == 1
    assert seen == b""
    no_key_anywhere(done.stdout, done.stderr, folders=[fake_uts.cache_dir, fake_uts.state_dir])
