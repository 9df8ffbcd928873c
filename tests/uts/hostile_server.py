"""A hostile UTS on 127.0.0.1: answers as the fake UTS does, except where a plan says to attack.

Not a test module (pytest collects ``test_*.py`` only); tests and ``bench/bench_uts_hostile.py``
import it. A raw socket server, so that it can send what ``http.server`` would not: an endless
chunked body, a ``Content-Length`` of 2 GiB, a gzip or deflate bomb, one byte every few seconds
(in the body or in the status line), silence, a lone surrogate escape in an atom name, a reason
phrase carrying the request's API key and terminal escape sequences, a Content-Type with escapes.

Every loop is bounded: a connection is served for at most ``limit`` seconds and ``max_bytes``
bytes, and ``stop`` (or leaving the ``with`` block) ends them all. All data is invented.
"""

from __future__ import annotations

import json
import socket
import threading
import time
import zlib
from collections.abc import Callable
from functools import cache
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tempmedbench_synonyms.testing import FakeReply, FakeUts

#: What the server does with one request: ``None`` answers as the fake UTS; otherwise one of
#: ``ATTACKS``. The plan is given the path (prefix removed) and how many requests came before.
Plan = Callable[[str, int], "str | None"]

ATTACKS = (
    "endless",  # 200, chunked, never ends
    "huge",  # 200, Content-Length 2 GiB, sent until the client gives up
    "gzip_bomb",  # 200, Content-Encoding gzip: 80 KiB that inflate to 80 MiB
    "deflate_bomb",  # the same with Content-Encoding deflate (zlib)
    "trickle",  # 200, Content-Length 1000, one byte every ``interval`` seconds
    "slow_head",  # the status line itself, one byte every ``interval`` seconds
    "silent",  # reads the request, never answers
    "surrogate",  # the fake's answer, with the escape \ud800 in the first atom's name
    "reason",  # 503 whose reason phrase echoes apiKey=KEY and escape sequences
    "ctype",  # 200, a Content-Type with escape sequences, a body that is not JSON
    "key_in_link",  # the fake's answer, the request's API key in the first atom's concept link
    "c1_in_link",  # the fake's answer, a C1 control (CSI) in the first atom's concept link
    "key_escaped",  # the fake's answer, the API key in the first atom's name, its first letter
    #                 written as a JSON \u escape (no byte of the body holds the key as it is)
    "raw_surrogate",  # the fake's answer, the UTF-8-style bytes of U+D800 (ED A0 80) in a name
    "duplicate",  # the fake's answer, the first atom's "name" key twice
    "nan",  # the fake's answer with a NaN in it
    "overflow",  # the fake's answer with 1e99999 (too large for a float) in it
    "chunk_line",  # 200, chunked, a chunk-size line that never ends (hex digits, no CRLF)
    "fat_pages",  # the fake's first page, padded to ``pad`` bytes, said to be 1 of 10 pages,
    #               for every page asked for
)

#: The escape sequences sent: a colour, "clear the screen", and a window title (OSC ... BEL).
ESCAPES = "\x1b[31m\x1b[2J\x1b]0;pwned\x07"
_BOMB_MIB = 80


@cache
def bomb(encoding: str) -> bytes:
    """``_BOMB_MIB`` MiB of zeros, gzip- or zlib-compressed (about 80 KiB), built in pieces."""
    wbits = 31 if encoding == "gzip" else 15
    packer = zlib.compressobj(9, zlib.DEFLATED, wbits)
    zeros = bytes(1024 * 1024)
    parts = [packer.compress(zeros) for _ in range(_BOMB_MIB)]
    parts.append(packer.flush())
    return b"".join(parts)


class HostileServer:
    """The fake UTS behind a raw socket, with attacks where ``plan`` says."""

    def __init__(
        self,
        fake: FakeUts,
        plan: Plan,
        *,
        interval: float = 2.0,
        limit: float = 30.0,
        max_bytes: int = 256 * 1024 * 1024,
        prefix: str = "/rest",
        pad: int = 0,
    ) -> None:
        self.fake = fake
        self.plan = plan
        self.interval = interval
        self.limit = limit
        self.max_bytes = max_bytes
        self.prefix = prefix
        self.pad = pad
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._conns: set[socket.socket] = set()
        #: (path, attack or None) of every request, in arrival order
        self.seen: list[tuple[str, str | None]] = []
        #: how many answers were sent whole
        self.answered = 0
        #: how many held or dripped requests the client gave up on (closed or reset its end)
        self.hung_up = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.1)
        self.base_url = f"http://127.0.0.1:{self._listener.getsockname()[1]}{prefix}"

    def __enter__(self) -> HostileServer:
        thread = threading.Thread(target=self._accept, name="hostile-accept", daemon=True)
        self._threads.append(thread)
        thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def count(self, attack: str | None) -> int:
        with self._lock:
            return sum(1 for _, a in self.seen if a == attack)

    def stop(self) -> None:
        self._stop.set()
        try:  # wakes the accept thread at once (Linux), not at its next 0.1 s timeout
            self._listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        with self._lock:
            conns = list(self._conns)
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for thread in list(self._threads):
            thread.join(5)
        self._listener.close()

    # -- serving -------------------------------------------------------------------------------

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            thread = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            with self._lock:
                self._conns.add(conn)
                self._threads.append(thread)
            thread.start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            conn.settimeout(1.0)
            head = self._read_head(conn)
            if head is None:
                return
            target = head.split(b" ")[1].decode("latin-1")
            split = urlsplit(target)
            path = split.path[len(self.prefix) :]
            query = parse_qs(split.query, keep_blank_values=True)
            with self._lock:
                attack = self.plan(path, len(self.seen))
                self.seen.append((path, attack))
            if attack is None:
                reply = self.fake.handle(path, query, base_url=self.base_url)
                self._send(conn, reply.status, "", reply.headers, reply.body)
            else:
                getattr(self, f"_{attack}")(conn, path, query)
        except OSError:
            pass  # the client cut the connection: what an attack expects
        finally:
            with self._lock:
                self._conns.discard(conn)
            conn.close()

    def _read_head(self, conn: socket.socket) -> bytes | None:
        data = b""
        end = time.monotonic() + 60  # a hang bound: a busy machine may send the head late
        while b"\r\n\r\n" not in data and len(data) < 65536 and time.monotonic() < end:
            try:
                more = conn.recv(4096)
            except TimeoutError:
                continue
            if not more:
                return None
            data += more
        return data if b"\r\n\r\n" in data else None

    def _send(
        self, conn: socket.socket, status: int, reason: str, headers: dict[str, str], body: bytes
    ) -> None:
        reason = reason or {200: "OK", 404: "Not Found", 401: "Unauthorized"}.get(status, "Error")
        lines = [f"HTTP/1.1 {status} {reason}"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        lines += [f"Content-Length: {len(body)}", "Connection: close", "", ""]
        conn.sendall("\r\n".join(lines).encode("latin-1") + body)
        with self._lock:
            self.answered += 1

    def _stream(self, conn: socket.socket, head: str, piece: bytes) -> None:
        """Send ``head``, then ``piece`` again and again until the client stops reading."""
        conn.sendall(head.encode("latin-1"))
        sent, end = 0, time.monotonic() + self.limit
        while sent < self.max_bytes and time.monotonic() < end and not self._stop.is_set():
            conn.sendall(piece)
            sent += len(piece)

    def _endless(self, conn: socket.socket, path: str, query: dict[str, list[str]]) -> None:
        data = b"[1," * 21845
        chunk = f"{len(data):x}\r\n".encode() + data + b"\r\n"
        head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        head += 'Transfer-Encoding: chunked\r\n\r\n1\r\n{\r\n5\r\n"a":[\r\n'
        self._stream(conn, head, chunk)

    def _chunk_line(self, conn: socket.socket, path: str, query: dict[str, list[str]]) -> None:
        head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        head += "Transfer-Encoding: chunked\r\n\r\n"
        self._stream(conn, head, b"0" * 65536)

    def _huge(self, conn: socket.socket, path: str, query: dict[str, list[str]]) -> None:
        head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        head += f"Content-Length: {2**31}\r\n\r\n"
        self._stream(conn, head, b" " * 65536)

    def _bomb(self, conn: socket.socket, encoding: str) -> None:
        headers = {"Content-Type": "application/json", "Content-Encoding": encoding}
        self._send(conn, 200, "", headers, bomb(encoding))

    def _gzip_bomb(self, conn: socket.socket, path: str, query: dict[str, list[str]]) -> None:
        self._bomb(conn, "gzip")

    def _deflate_bomb(self, conn: socket.socket, path: str, query: dict[str, list[str]]) -> None:
        self._bomb(conn, "deflate")

    def _drip(self, conn: socket.socket, data: bytes) -> None:
        end = time.monotonic() + self.limit
        for byte in data:
            if self._stop.wait(self.interval) or time.monotonic() > end:
                return
            try:
                conn.sendall(bytes([byte]))
            except (BrokenPipeError, ConnectionResetError):
                with self._lock:
                    self.hung_up += 1
                return

    def _trickle(self, conn: socket.socket, path: str, query: dict[str, list[str]]) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 1000\r\n\r\n")  # fmt: skip
        self._drip(conn, b" " * 1000)

    def _slow_head(self, conn: socket.socket, path: str, query: dict[str, list[str]]) -> None:
        self._drip(conn, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")

    def _silent(self, conn: socket.socket, path: str, query: dict[str, list[str]]) -> None:
        end = time.monotonic() + self.limit
        while time.monotonic() < end and not self._stop.is_set():
            try:
                if not conn.recv(1024):
                    break  # the client closed
            except TimeoutError:
                continue
            except ConnectionResetError:
                break
        else:
            return  # the server's own limit, or its stop: not the client's doing
        with self._lock:
            self.hung_up += 1

    def _surrogate(self, conn: socket.socket, path: str, query: dict[str, list[str]]) -> None:
        reply: FakeReply = self.fake.handle(path, query, base_url=self.base_url)
        doc = json.loads(reply.body)
        result = doc["result"]
        (result[0] if isinstance(result, list) else result)["name"] = "Invented \ud800 fever"
        body = json.dumps(doc).encode("ascii")  # ensure_ascii: the escape \ud800 as it is
        assert b"\\ud800" in body
        self._send(conn, reply.status, "", reply.headers, body)

    def _relink(
        self, conn: socket.socket, path: str, query: dict[str, list[str]], cui: str
    ) -> None:
        reply: FakeReply = self.fake.handle(path, query, base_url=self.base_url)
        doc = json.loads(reply.body)
        result = doc["result"]
        atom = result[0] if isinstance(result, list) else result
        atom["concept"] = f"{self.base_url}/content/2099AA/CUI/{cui}"
        body = json.dumps(doc, ensure_ascii=False).encode("utf-8")
        self._send(conn, reply.status, "", reply.headers, body)

    def _edit(
        self,
        conn: socket.socket,
        path: str,
        query: dict[str, list[str]],
        edit: Callable[[dict[str, Any]], None],
        text: Callable[[str], str] = lambda t: t,
    ) -> None:
        """The fake's answer, its JSON changed by ``edit``, its text then by ``text``."""
        reply: FakeReply = self.fake.handle(path, query, base_url=self.base_url)
        doc = json.loads(reply.body)
        edit(doc)
        body = text(json.dumps(doc, ensure_ascii=False))
        data = body.encode("utf-8", "surrogatepass")
        self._send(conn, reply.status, "", reply.headers, data)

    @staticmethod
    def _first(doc: dict[str, Any]) -> dict[str, Any]:
        result = doc["result"]
        return result[0] if isinstance(result, list) else result  # type: ignore[no-any-return]

    def _name(self, conn: socket.socket, path: str, query: dict[str, list[str]], name: str) -> None:
        def edit(doc: dict[str, Any]) -> None:
            self._first(doc)["name"] = "@NAME@"

        self._edit(conn, path, query, edit, lambda t: t.replace('"@NAME@"', name))

    def _key_escaped(self, conn: socket.socket, path: str, query: dict[str, list[str]]) -> None:
        key = query.get("apiKey", [""])[0]
        self._name(conn, path, query, f'"Invented \\u{ord(key[0]):04x}{key[1:]} fever"')

    def _raw_surrogate(self, conn: socket.socket, path: str, query: dict[str, list[str]]) -> None:
        self._name(conn, path, query, '"Invented \ud800 fever"')

    def _duplicate(self, conn: socket.socket, path: str, query: dict[str, list[str]]) -> None:
        self._name(conn, path, query, '"Invented fever", "name": "Invented pyrexia"')

    def _nan(self, conn: socket.socket, path: str, query: dict[str, list[str]]) -> None:
        self._edit(conn, path, query, lambda doc: doc.update(score=float("nan")))

    def _overflow(self, conn: socket.socket, path: str, query: dict[str, list[str]]) -> None:
        self._edit(conn, path, query, lambda doc: doc.update(score=12345.5),
                   lambda t: t.replace("12345.5", "1e99999"))  # fmt: skip

    def _fat_pages(self, conn: socket.socket, path: str, query: dict[str, list[str]]) -> None:
        def edit(doc: dict[str, Any]) -> None:
            doc["pageCount"] = 10
            doc["padding"] = "x" * self.pad

        self._edit(conn, path, {k: v for k, v in query.items() if k != "pageNumber"}, edit)

    def _key_in_link(self, conn: socket.socket, path: str, query: dict[str, list[str]]) -> None:
        self._relink(conn, path, query, query.get("apiKey", [""])[0])

    def _c1_in_link(self, conn: socket.socket, path: str, query: dict[str, list[str]]) -> None:
        self._relink(conn, path, query, "C9000099\x9b2J\x1b[31m")

    def _reason(self, conn: socket.socket, path: str, query: dict[str, list[str]]) -> None:
        key = query.get("apiKey", [""])[0]
        reason = f"Service {ESCAPES}Unavailable for apiKey={key}"
        self._send(conn, 503, reason, {"Content-Type": "text/plain"}, b"")

    def _ctype(self, conn: socket.socket, path: str, query: dict[str, list[str]]) -> None:
        key = query.get("apiKey", [""])[0]
        headers = {"Content-Type": f"text/html{ESCAPES}; charset=utf-8"}
        self._send(conn, 200, "", headers, f"<html>{ESCAPES}{key}</html>".encode())
