"""Helpers shared by the test modules (not tests: pytest collects ``test_*.py`` only).

Importable as ``helpers`` because pyproject.toml's pytest settings put ``tests/`` on the path
(``pythonpath = ["tests"]``): ``from helpers import ATOM_PARAMS``, ``from helpers.uts import ...``.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any
from unittest.mock import patch

import responses

from tempmedbench_synonyms.testing import FakeReply, FakeUts, add_fake_uts

#: The repository's root, its invented fixtures, and the files tests use most.
ROOT = Path(__file__).resolve().parent.parent.parent
FIXTURES = ROOT / "fixtures"
MINI = FIXTURES / "tempmedbench-mini"
MINI_MRCONSO = FIXTURES / "umls" / "MRCONSO.RRF"
GPS_FILE = FIXTURES / "gps" / "SnomedINTL_GPSRelease_PRODUCTION_20990101T120000Z.txt"

#: A UTS base URL that cannot resolve: the fakes answer it, nothing else can.
BASE = "https://uts.invalid/rest"

#: The query parameters of every atoms request the client sends (besides the key and the page).
ATOM_PARAMS = {
    "language": "ENG",
    "includeObsolete": "false",
    "includeSuppressible": "false",
    "pageSize": "200",
}

#: A client's timeout where a test exercises none: so long that no answer from 127.0.0.1 meets
#: it on the busiest machine (one met would be retried, and change the request counts the tests
#: assert); never waited out when the test passes.
ROOMY_TIMEOUT = 10.0
#: How long the fake holds a ``stall`` fault: until its server stops (which ends it at once), so
#: that it never ends before the client gives up, however late a busy machine fires the timeout.
HELD = 600.0

#: The ``rehash`` fixture (tests/conftest.py): rewrite a release folder's MANIFEST.sha256.
Rehash = Callable[[Path], None]


def tool_env(values: Mapping[str, str] | None = None) -> Any:
    """``os.environ`` for a block with ``values`` as the only UMLS_ and TEMPMEDBENCH_ variables."""
    kept = {k: v for k, v in os.environ.items() if not k.startswith(("UMLS_", "TEMPMEDBENCH_"))}
    return patch.dict(os.environ, {**kept, **(values or {})}, clear=True)


def wait_until(condition: Callable[[], object], what: str, *, deadline: float = 60.0) -> None:
    """Poll ``condition`` (every 10 ms) until it holds. If it still does not after ``deadline``
    seconds, fail saying ``what`` was awaited: a deadline that only a hang reaches, never a
    measure of speed (what is awaited takes milliseconds when nothing is wrong)."""
    pause = threading.Event()  # never set: its wait is the poll's pause, not time.sleep
    end = time.monotonic() + deadline
    while not condition():
        if time.monotonic() >= end:
            raise AssertionError(f"still waiting, after {deadline:g} s (a hang), for {what}")
        pause.wait(0.01)


class HeldFake(FakeUts):
    """The fake UTS, holding every answer after the first ``answers`` until ``release`` is set
    (``held`` is set when it holds the first): a run stays in its middle, whatever the
    machine's load, until the test has done what it does there (a signal, a kill)."""

    def __init__(self, *args: Any, answers: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.answers = answers
        self.held = threading.Event()
        self.release = threading.Event()

    def handle(self, path: str, query: Mapping[str, Sequence[str]], *, base_url: str) -> FakeReply:
        reply = super().handle(path, query, base_url=base_url)  # (noted in ``seen``)
        if self.count() > self.answers:
            self.held.set()
            self.release.wait(120)  # (a bound, should a test fail before it releases)
        return reply


class Lines:
    """The lines a process writes on ``stream``, read by a thread as they come, so that a test
    can wait (with a deadline) for one of them."""

    def __init__(self, stream: IO[str]) -> None:
        self.seen: list[str] = []
        self._new: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self._new.put(line.rstrip("\n"))
        self._new.put(None)

    def wait_for(self, wanted: Callable[[str], bool], timeout: float = 60.0) -> str:
        """The first line (from now on, or seen before) that ``wanted``; AssertionError if the
        stream ends or the deadline (only a hang reaches it) passes first."""
        for line in self.seen:
            if wanted(line):
                return line
        end = time.monotonic() + timeout
        while True:
            try:
                line = self._new.get(timeout=max(0.0, end - time.monotonic()))
            except queue.Empty:
                raise AssertionError(
                    f"still waiting, after {timeout:g} s (a hang), for a line; saw {self.seen}"
                ) from None
            assert line is not None, f"the stream ended before the line; saw {self.seen}"
            self.seen.append(line)
            if wanted(line):
                return line

    def rest(self) -> list[str]:
        """Every line, once the stream has ended."""
        self._thread.join(timeout=60)
        while True:
            try:
                line = self._new.get_nowait()
            except queue.Empty:
                return self.seen
            if line is not None:
                self.seen.append(line)


@contextmanager
def behind_responses(fake: FakeUts, *, base_url: str = BASE) -> Iterator[FakeUts]:
    """``fake`` answering every GET under ``base_url`` through ``responses`` (no socket)."""
    with responses.RequestsMock(assert_all_requests_are_fired=False) as rsps:
        add_fake_uts(rsps, fake, base_url=base_url)
        yield fake


def outputs(folder: Path) -> list[str]:
    """The rebuilt files (final, ``.unverified``) and temporary files under ``folder``, sorted."""
    return sorted(
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.name.startswith(("question_surface_synonym", "synonym_table_kept_full"))
        or p.name.endswith(".tmp")
    )


def patch_zip_member(z: Path, member: str, *, offset: int, value: bytes) -> None:
    """Overwrite bytes of ``member``'s central and local headers alike (APPNOTE.TXT 4.3.12 and
    4.3.7): ``offset`` is the central header's (flags at 8, compression method at 10); the local
    header's is 2 less. Crafts an encrypted (flag bit 0) or a Deflate64 (method 9) member."""
    data = bytearray(z.read_bytes())
    patched = 0
    # signature, where the name length sits, where the name starts, the shift of ``offset``
    for sig, len_at, name_at, shift in ((b"PK\x01\x02", 28, 46, 0), (b"PK\x03\x04", 26, 30, -2)):
        i = data.find(sig)
        while i >= 0:
            name_len = int.from_bytes(data[i + len_at : i + len_at + 2], "little")
            if data[i + name_at : i + name_at + name_len] == member.encode():
                data[i + offset + shift : i + offset + shift + len(value)] = value
                patched += 1
            i = data.find(sig, i + 4)
    assert patched == 2, f"{member}: {patched} headers found, not 2"
    z.write_bytes(bytes(data))
