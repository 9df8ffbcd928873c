"""The fake's data (``testing.data``): ``fake`` -> ``routes`` -> ``data``, one way."""

from __future__ import annotations

import ast
from pathlib import Path

import tempmedbench_synonyms.testing as testing

TESTING = Path(testing.__file__).parent


def _testing_imports(name: str) -> set[str]:
    """The modules of ``testing`` that ``testing/{name}.py`` imports, types-only ones too."""
    found: set[str] = set()
    for node in ast.walk(ast.parse((TESTING / f"{name}.py").read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith("tempmedbench_synonyms.testing."):
                found.add(node.module.rsplit(".", 1)[1])
            elif node.module == "tempmedbench_synonyms.testing":
                found.update(alias.name for alias in node.names)
    return found


def test_fake_routes_data_run_one_way() -> None:
    """No cycle between the fake and its routes: the data sits under both."""
    assert {"routes", "data"} <= _testing_imports("fake")
    assert "data" in _testing_imports("routes")
    assert "fake" not in _testing_imports("routes")
    assert not {"fake", "routes"} & _testing_imports("data")


def test_the_public_names_stay() -> None:
    """``FakeRow`` and ``FakeUtsData`` live in ``testing.data``, imported from ``testing``."""
    assert testing.FakeRow.__module__ == "tempmedbench_synonyms.testing.data"
    assert testing.FakeUtsData.__module__ == "tempmedbench_synonyms.testing.data"
    assert "FakeRow" in testing.__all__ and "FakeUtsData" in testing.__all__
