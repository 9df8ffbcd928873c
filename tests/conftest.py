"""Shared fixtures: the invented mini release, copied so that a test may change it."""

from __future__ import annotations

import logging
import os
import shutil
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers import MINI, MINI_MRCONSO, Rehash
from helpers.folders import SIMULATED, refuse_under
from tempmedbench_synonyms.testing import (
    CANARY_KEY,
    FakeUts,
    FakeUtsData,
    FakeUtsServer,
    write_manifest,
)

# The package's own plugin (its entry point is turned off in pyproject.toml: see there).
pytest_plugins = ("pytester", "tempmedbench_synonyms.pytest_plugin")


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests talk to 127.0.0.1 only: never through a proxy (requests would send the key there)."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                 "all_proxy"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")


@pytest.fixture(autouse=True)
def _private_rate_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test has its own shared rate state (runs it starts, subprocesses too, share it),
    never the user's (uts/ratelimit.py: one budget per machine)."""
    monkeypatch.setenv("TEMPMEDBENCH_STATE_DIR", str(tmp_path / "state"))


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's default cache (answers and ``--meta`` indexes) is its own, never the user's:
    a test that names no folder must not write into ``~/.cache``, nor read what is there; the
    user's own variables do not reach the tests."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    for name in ("TEMPMEDBENCH_CACHE_DIR", "TEMPMEDBENCH_INDEX_DIR"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def _signals_left_as_found() -> Iterator[None]:
    """A test leaves SIGINT's and SIGTERM's handlers and the main thread's signal mask as it
    found them: one left ignored or blocked would make a later test's Ctrl-C do nothing (the
    CLI's ``runtime.interrupts`` ignores a second Ctrl-C until the process ends). A leak fails
    the test that made it, naming what it left, and is put right for the next one."""
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, set())
    yield
    left = {s: signal.getsignal(s) for s in handlers}
    left_mask = signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    for s, handler in handlers.items():
        signal.signal(s, handler)  # type: ignore[arg-type]
    assert (left, left_mask) == (handlers, mask), "the test left signal handlers or the mask"


@pytest.fixture
def mini(tmp_path: Path) -> Path:
    """A private copy of the invented mini release."""
    dest = tmp_path / "release"
    shutil.copytree(MINI, dest)
    return dest


@pytest.fixture
def mrconso(tmp_path: Path) -> Path:
    """A private copy of the invented MRCONSO.RRF."""
    dest = tmp_path / "MRCONSO.RRF"
    shutil.copyfile(MINI_MRCONSO, dest)
    return dest


@pytest.fixture
def rehash() -> Rehash:
    """Rewrite a release folder's MANIFEST.sha256 from its files (after a test edits one)."""
    return write_manifest


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    """Commands configure logging (as only the CLI may); leave it as it was for other tests."""
    package = logging.getLogger("tempmedbench_synonyms")
    level = package.level
    yield
    package.setLevel(level)


@pytest.fixture
def mini_uts() -> Iterator[FakeUtsServer]:
    """The fake UTS on 127.0.0.1 serving the mini release's invented rows, for the canary key."""
    fake = FakeUts(FakeUtsData.from_mrconso(MINI_MRCONSO), api_key=CANARY_KEY)
    with FakeUtsServer(fake) as running:
        yield running


@pytest.fixture
def locked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder that cannot be listed or entered: mode 000, and, as root (whom the kernel lets
    through), refused in-process as the kernel would (``helpers.folders``)."""
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0)
    if SIMULATED:
        refuse_under(folder, monkeypatch)
    yield folder
    os.chmod(folder, 0o700)  # the folder itself is not refused: pytest can remove it
