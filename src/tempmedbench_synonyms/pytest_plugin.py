"""The pytest plugin: the ``fake_uts`` and ``fake_uts_factory`` fixtures and the ``fake_uts``
marker, a fake UMLS REST API on 127.0.0.1 for your own tests (README.md, "Testing your own code
offline"). Registered by the ``pytest11`` entry point; it imports nothing heavy until a test asks.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

# Nothing of the fake is imported until a test asks for it: installing the package must add
# nothing measurable to a pytest session that never uses the fixture (no http.server, requests,
# rich or pydantic).
if TYPE_CHECKING:
    from tempmedbench_synonyms.testing import FakeUtsData, Faults, RunningFakeUts

__all__ = ["FakeUtsFactory", "fake_uts", "fake_uts_factory"]

#: The release the demo table names (``fixtures/tempmedbench-mini``): the default rows serve it.
DEMO_RELEASE = "2099AA"


def _data(
    rows: Iterable[str] | Path | None, release: str | None, meta: Path | None = None
) -> FakeUtsData:
    from tempmedbench_synonyms.demo import demo_data
    from tempmedbench_synonyms.errors import BadInputError
    from tempmedbench_synonyms.testing import FakeUtsData

    if rows is not None and meta is not None:
        raise pytest.UsageError("fake_uts takes rows or meta, not both")
    release = release or DEMO_RELEASE
    try:
        if rows is None:
            folder = Path(meta) if meta is not None else demo_data().mrconso.parent
            if not folder.is_dir():
                raise pytest.UsageError(f"fake_uts meta: no such folder {folder}")
            return FakeUtsData.from_meta(folder, release=release)
        if isinstance(rows, str) and ("|" in rows or "\n" in rows):
            raise pytest.UsageError(
                "fake_uts rows takes a list of MRCONSO.RRF-format lines, or the Path of a file "
                f"of them, not one string: write rows=[{rows[:40]!r}...]"
            )
        if isinstance(rows, (str, os.PathLike)):
            path = Path(rows)
            if not path.is_file():
                raise pytest.UsageError(f"fake_uts rows: no such file {path}")
            return FakeUtsData.from_mrconso(path, release=release)
        return FakeUtsData.from_lines(rows, release=release)
    except (FileNotFoundError, ValueError, BadInputError) as e:  # (BadInputError: a bad row)
        raise pytest.UsageError(f"fake_uts {'meta' if rows is None else 'rows'}: {e}") from None


def pytest_configure(config: pytest.Config) -> None:
    """Declare the marker, so that ``--strict-markers`` suites accept it."""
    config.addinivalue_line(
        "markers",
        "fake_uts(rows=None, meta=None, release=None, faults=None): what the fake_uts fixture "
        "serves (MRCONSO.RRF-format lines or a file of them, or a folder of RRF files; default: "
        "the invented demo rows)",
    )


class FakeUtsFactory:
    """``fake_uts_factory``: each call starts one more fake UTS for this test."""

    def __init__(self, folders: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
        self._folders, self._monkeypatch = folders, monkeypatch
        self._started: list[RunningFakeUts] = []

    def __call__(
        self,
        rows: Iterable[str] | Path | None = None,
        *,
        release: str | None = None,
        faults: Faults | None = None,
        meta: Path | None = None,
    ) -> RunningFakeUts:
        from tempmedbench_synonyms import config
        from tempmedbench_synonyms.testing import CANARY_KEY, FakeUts, RunningFakeUts

        fake = FakeUts(_data(rows, release, meta), api_key=CANARY_KEY, faults=faults)
        server = RunningFakeUts(fake, self._folders.mktemp("fake-uts"))
        self._started.append(server)
        server.start()
        if len(self._started) == 1:
            for name in config.tool_variables():
                self._monkeypatch.delenv(name)
            # and NO_PROXY naming this machine: no proxy sees the fake's requests
            for name, value in {**server.variables, **server.no_proxy}.items():
                self._monkeypatch.setenv(name, value)
        return server


@pytest.fixture
def fake_uts_factory(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[FakeUtsFactory]:
    """Start fake UTS servers on 127.0.0.1 for this test; each is stopped when the test ends (a
    request still waiting out a ``stall`` fault ends unanswered). The first one's variables replace
    every ``UMLS_*`` and ``TEMPMEDBENCH_*`` variable of this process meanwhile (``monkeypatch``)."""
    factory = FakeUtsFactory(tmp_path_factory, monkeypatch)
    try:
        yield factory
    finally:
        for server in factory._started:
            server.stop()


@pytest.fixture
def fake_uts(request: pytest.FixtureRequest, fake_uts_factory: FakeUtsFactory) -> RunningFakeUts:
    """A fake UTS on 127.0.0.1 serving the demo rows (release 2099AA), or what the
    ``fake_uts(rows=..., meta=..., release=..., faults=...)`` marker names; its key is
    ``testing.CANARY_KEY``, its ``env`` for a subprocess, its ``variables`` set meanwhile."""
    marker = request.node.get_closest_marker("fake_uts")
    kwargs: dict[str, Any] = dict(marker.kwargs) if marker is not None else {}
    if marker is not None and marker.args:
        kwargs.setdefault("rows", marker.args[0])
    unknown = set(kwargs) - {"rows", "meta", "release", "faults"}
    if unknown:
        raise pytest.UsageError(
            "the fake_uts marker takes rows, meta, release and faults, not "
            f"{', '.join(sorted(unknown))}"
        )
    return fake_uts_factory(**kwargs)
