"""bench/bench_run_shape.py counts what a run that answered went through, never a failed one."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from tempmedbench_synonyms import testing

sys.path.insert(0, str(Path(__file__).parents[1] / "bench"))
from bench_run_shape import atoms_run


def test_the_atoms_run_is_one_request_and_one_line(tmp_path: Path) -> None:
    shown = atoms_run(tmp_path)
    assert shown.startswith("umls atoms        1 request object built; "), shown
    assert shown.endswith(" modules of the package; 1 line of output"), shown


def test_a_run_the_fake_refuses_is_not_measured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A refused key ends the run with exit 3 and one line of JSON, as an answer would: its
    counts (432 calls where an answer takes 681) are not printed as the run's."""
    real = testing.FakeUts

    def refusing(data: Any, api_key: str) -> Any:
        return real(data, api_key="another-invented-key")

    monkeypatch.setattr(testing, "FakeUts", refusing)
    with pytest.raises(SystemExit) as info:
        atoms_run(tmp_path)
    assert info.value.code == "umls atoms ended with exit 3, not 0: a failed run is not measured"
