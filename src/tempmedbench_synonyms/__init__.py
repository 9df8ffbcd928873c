"""Regenerate and verify the TempMedBench synonym surface from your own UMLS licence.

The Python API (``api``), at the top level::

    from tempmedbench_synonyms import check, ensure_synonyms, regenerate, validate_gps
    from tempmedbench_synonyms import Umls  # the terminology client (SPEC section 11)

Its names are imported on first use (PEP 562), so that ``import tempmedbench_synonyms`` stays as
cheap as it was for the CLI and the pytest plugin, which need none of them.
"""

from __future__ import annotations

# Not ``typing.TYPE_CHECKING``: importing typing would double the import time of this module
# (mypy reads any ``TYPE_CHECKING`` name as true).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from tempmedbench_synonyms.api import (
        GpsReport,
        Paths,
        check,
        ensure_synonyms,
        regenerate,
        validate_gps,
    )
    from tempmedbench_synonyms.constants import __version__
    from tempmedbench_synonyms.errors import (
        BadInputError,
        MismatchError,
        NotAuthorisedError,
        Outcome,
        TempMedBenchError,
        UnavailableError,
    )
    from tempmedbench_synonyms.lookups import Answer
    from tempmedbench_synonyms.regen.report import Report
    from tempmedbench_synonyms.umls import Umls

#: Each public name and the module it comes from. ``__version__`` lives in ``constants`` (a leaf
#: of the kernel, where the build reads it), so that no module of the package imports this face.
_WHERE = {
    "__version__": "constants",
    "check": "api",
    "ensure_synonyms": "api",
    "regenerate": "api",
    "validate_gps": "api",
    "GpsReport": "api",
    "Paths": "api",
    "Umls": "umls",
    "Answer": "lookups",
    "Report": "regen.report",
    "Outcome": "errors",
    "TempMedBenchError": "errors",
    "BadInputError": "errors",
    "MismatchError": "errors",
    "NotAuthorisedError": "errors",
    "UnavailableError": "errors",
}

__all__ = [
    "Answer",
    "BadInputError",
    "GpsReport",
    "MismatchError",
    "NotAuthorisedError",
    "Outcome",
    "Paths",
    "Report",
    "TempMedBenchError",
    "Umls",
    "UnavailableError",
    "__version__",
    "check",
    "ensure_synonyms",
    "regenerate",
    "validate_gps",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # once imported, an ordinary attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
