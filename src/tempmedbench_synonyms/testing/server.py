"""The fake UTS served two ways: ``FakeUtsServer`` (a real HTTP/1.1 server on 127.0.0.1, in a
thread) and ``add_fake_uts`` (a ``responses`` callback, for tests that never open a socket;
``responses`` is a test dependency, imported only there)."""

from __future__ import annotations

import logging
import os
import socket
import struct
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from tempmedbench_synonyms import config, runtime
from tempmedbench_synonyms.constants import (
    API_KEY_ENV,
    BASE_URL_ENV,
    CACHE_DIR_ENV,
    LOOPBACK_HOSTS,
    NO_PROXY_VARS,
    STATE_DIR_ENV,
)
from tempmedbench_synonyms.testing.fake import FakeReply, FakeUts

if TYPE_CHECKING:
    import responses

log = logging.getLogger(__name__)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as UTS offers
    server_version = "FakeUTS/1"
    timeout = 10.0  # an idle keep-alive connection is dropped after this
    # TCP_NODELAY: the status line and headers go in one write and the body in another, and
    # without it the body waits for the client's delayed ACK (~40 ms a request on Linux), which
    # a benchmark of a client one request at a time would count as the client's (bench_peers).
    disable_nagle_algorithm = True

    server: _Server

    def do_GET(self) -> None:  # the name http.server dispatches GET to
        split = urlsplit(self.path)
        prefix = self.server.prefix
        if not split.path.startswith(prefix + "/"):
            self._send(FakeReply(404, {"Content-Type": "text/plain"}, b"not found"))
            return
        reply = self.server.fake.handle(
            split.path[len(prefix) :],
            parse_qs(split.query, keep_blank_values=True),
            base_url=self.server.base_url,
        )
        if reply.delay > 0 and self.server.stopping.wait(reply.delay):
            self.close_connection = True  # stopped mid-wait (a stall): no answer, no waiting
            return
        if reply.action == "reset":
            # SO_LINGER with a zero timeout: close() sends a TCP RST, a real "connection reset".
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
            self.connection.close()
            return
        self._send(reply)

    def _send(self, reply: FakeReply) -> None:
        try:
            self.send_response(reply.status)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            self.wfile.write(reply.body)
        except OSError:
            self.close_connection = True  # the client gave up (a stall past its timeout)

    def log_message(self, format: str, *args: Any) -> None:
        # Never print the request line: it holds the apiKey.
        return


class _Server(HTTPServer):
    """Each request on a helper thread of its own, joined by ``server_close``."""

    def __init__(self, fake: FakeUts, host: str, port: int, prefix: str) -> None:
        self.fake = fake
        self.prefix = prefix
        #: set by ``FakeUtsServer.stop``: every latency or stall still waiting ends at once
        self.stopping = threading.Event()
        #: each connection and the thread answering it: written by the serving thread only, read
        #: by ``FakeUtsServer.stop`` once ``shutdown`` has ended that thread
        self._live: dict[socket.socket, threading.Thread] = {}
        super().__init__((host, port), _Handler)
        self.base_url = f"http://{host}:{self.server_address[1]}{prefix}"

    def process_request(self, request: Any, client_address: Any) -> None:
        # the ended ones dropped, so a long-lived server keeps no list of every request
        self._live = {sock: t for sock, t in self._live.items() if t.is_alive()}
        self._live[request] = runtime.start_thread(
            self._answer, name="fake-uts-request", args=(request, client_address)
        )

    def _answer(self, request: Any, client_address: Any) -> None:
        try:
            self.finish_request(request, client_address)
        except Exception:
            self.handle_error(request, client_address)
        finally:
            self.shutdown_request(request)

    def server_close(self) -> None:
        """Close the listening socket and every connection, and join the request threads."""
        super().server_close()
        for sock in self._live:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:  # closed already: its thread has ended
                pass
        for thread in self._live.values():
            thread.join()

    def handle_error(self, request: Any, client_address: Any) -> None:
        log.debug("fake UTS: a connection from %s ended badly", client_address)


class FakeUtsServer:
    """``FakeUts`` over HTTP on 127.0.0.1 (only), in a background thread; a context manager."""

    def __init__(self, fake: FakeUts, *, host: str = "127.0.0.1", prefix: str = "/rest") -> None:
        if host not in LOOPBACK_HOSTS:
            raise ValueError("the fake UTS listens on the loopback interface only")
        self.fake = fake
        self._host = host
        self._prefix = prefix
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """The REST root to give the tool (``--base-url`` or ``UMLS_BASE_URL``), while running."""
        if self._server is None:
            raise RuntimeError("the fake UTS server is not running")
        return self._server.base_url

    @property
    def api_key(self) -> str:
        """The key the fake accepts (``UMLS_API_KEY``)."""
        return self.fake.api_key

    def start(self) -> FakeUtsServer:
        """Listen on a free port of the loopback interface and serve in a background thread."""
        self._server = _Server(self.fake, self._host, 0, self._prefix)
        self._thread = runtime.start_thread(
            self._server.serve_forever, name="fake-uts", args=(0.05,)
        )
        return self

    def stop(self) -> None:
        """Stop serving, close every connection and join the threads (idempotent); a request still
        waiting out its latency or a ``stall`` ends at once, unanswered."""
        server, thread = self._server, self._thread
        self._server = self._thread = None
        if server is None or thread is None:
            return
        server.stopping.set()
        server.shutdown()
        server.server_close()
        thread.join()

    def __enter__(self) -> FakeUtsServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class RunningFakeUts(FakeUtsServer):
    """A ``FakeUtsServer`` with the environment a run of the tool needs to reach it: the
    ``fake_uts`` fixture's (``pytest_plugin``)."""

    def __init__(self, fake: FakeUts, folder: Path) -> None:
        super().__init__(fake)
        self.cache_dir = folder / "cache"
        self.state_dir = folder / "state"

    @property
    def variables(self) -> dict[str, str]:
        """``UMLS_BASE_URL``, ``UMLS_API_KEY``, and the test's own ``TEMPMEDBENCH_CACHE_DIR`` and
        ``TEMPMEDBENCH_STATE_DIR``."""
        return {
            BASE_URL_ENV: self.base_url,
            API_KEY_ENV: self.api_key,
            CACHE_DIR_ENV: os.fspath(self.cache_dir),
            STATE_DIR_ENV: os.fspath(self.state_dir),
        }

    @property
    def no_proxy(self) -> dict[str, str]:
        """``NO_PROXY`` and ``no_proxy``, each naming yours and this machine: requests would
        otherwise send 127.0.0.1 to ``HTTP_PROXY``."""
        hosts = config.no_proxy_with_loopback()
        return {name: hosts for name in NO_PROXY_VARS}

    @property
    def env(self) -> dict[str, str]:
        """The whole environment for a run of the tool in a subprocess
        (``subprocess.run(..., env=fake_uts.env)``): this process's, less every ``UMLS_*`` and
        ``TEMPMEDBENCH_*`` variable, plus ``variables`` and ``no_proxy``."""
        return {**config.without_tool_variables(), **self.variables, **self.no_proxy}


def add_fake_uts(
    rsps: responses.RequestsMock,
    fake: FakeUts,
    *,
    base_url: str = "https://uts-ws.nlm.nih.gov/rest",
) -> None:
    """Register ``fake`` with a ``responses`` mock: every GET under ``base_url`` goes to it.

    A ``reset`` fault raises requests' ConnectionError; latency and stalls are not played.
    """
    import re

    import responses as _responses

    from tempmedbench_synonyms.uts.client import TransportError

    prefix = base_url.rstrip("/")

    def callback(request: Any) -> Any:
        split = urlsplit(request.url)
        path = split.path[len(urlsplit(prefix).path) :]
        reply = fake.handle(path, parse_qs(split.query, keep_blank_values=True), base_url=prefix)
        if reply.action == "reset":
            return TransportError("Connection reset by peer (fake UTS)")
        return reply.status, reply.headers, reply.body

    rsps.add_callback(_responses.GET, re.compile(re.escape(prefix) + r"/.*"), callback=callback)
