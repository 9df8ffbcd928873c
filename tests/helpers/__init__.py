"""Helpers shared by the test modules (not tests: pytest collects ``test_*.py`` only).

Importable as ``helpers`` because pyproject.toml's pytest settings put ``tests/`` on the path
(``pythonpath = ["tests"]``): ``from helpers import ATOM_PARAMS``, ``from helpers.uts import ...``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

#: The query parameters of every atoms request the client sends (besides the key and the page).
ATOM_PARAMS = {
    "language": "ENG",
    "includeObsolete": "false",
    "includeSuppressible": "false",
    "pageSize": "200",
}

#: The ``rehash`` fixture (tests/conftest.py): rewrite a release folder's MANIFEST.sha256.
Rehash = Callable[[Path], None]
