"""TEMPMEDBENCH_LOG_LEVEL: the log level when neither -q nor -v is given (as PIP_AUDIT_LOGLEVEL)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tempmedbench_synonyms.cli import regenerate_app
from tempmedbench_synonyms.cli._shared import configure_logging

PACKAGE = logging.getLogger("tempmedbench_synonyms")


@pytest.fixture(autouse=True)
def _restore_level() -> Iterator[None]:
    before = PACKAGE.level
    yield
    PACKAGE.setLevel(before)


@pytest.mark.parametrize(
    ("value", "level"),
    [
        (None, logging.WARNING),
        ("", logging.WARNING),
        ("debug", logging.DEBUG),
        ("INFO", logging.INFO),
        (" Error ", logging.ERROR),
        ("critical", logging.CRITICAL),
        ("warning", logging.WARNING),
    ],
)
def test_the_variable_sets_the_level_without_q_or_v(
    monkeypatch: pytest.MonkeyPatch, value: str | None, level: int
) -> None:
    if value is None:
        monkeypatch.delenv("TEMPMEDBENCH_LOG_LEVEL", raising=False)
    else:
        monkeypatch.setenv("TEMPMEDBENCH_LOG_LEVEL", value)
    assert configure_logging(False, 0) == 0
    assert PACKAGE.level == level


@pytest.mark.parametrize(
    ("quiet", "verbose", "level"),
    [(True, 0, logging.ERROR), (False, 1, logging.INFO), (False, 2, logging.DEBUG)],
)
def test_q_and_v_win_over_the_variable(
    monkeypatch: pytest.MonkeyPatch, quiet: bool, verbose: int, level: int
) -> None:
    monkeypatch.setenv("TEMPMEDBENCH_LOG_LEVEL", "critical")
    configure_logging(quiet, verbose)
    assert PACKAGE.level == level


def test_a_value_that_is_no_level_is_said_and_warnings_are_logged(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TEMPMEDBENCH_LOG_LEVEL", "loud\x1b[2J" + "x" * 50)
    configure_logging(False, 0)
    assert PACKAGE.level == logging.WARNING
    assert capsys.readouterr().err == (
        "warning: TEMPMEDBENCH_LOG_LEVEL='loud\\x1b[2J" + "x" * 32 + "...' is not a log level; "
        "use one of debug, info, warning, error, critical (logging warnings meanwhile)\n"
    )


def test_a_run_goes_on_whatever_the_variable_holds(
    mini: Path, mrconso: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEMPMEDBENCH_LOG_LEVEL", "loud")
    result = CliRunner().invoke(regenerate_app, [str(mini), "--mrconso", str(mrconso), "--json"])
    assert result.exit_code == 0
    assert result.stderr.startswith(
        "warning: TEMPMEDBENCH_LOG_LEVEL='loud' is not a log level; use one of debug, info, "
        "warning, error, critical (logging warnings meanwhile)\n"
    )
    assert '"outcome": "verified"' in result.stdout
