"""What this installation is: its version, the Python and main libraries it runs on, its folders.

``--version`` prints it, and ``doctor`` checks it, so that a bug report can quote one block.
"""

from __future__ import annotations

import platform
from importlib import metadata

from tempmedbench_synonyms import __version__
from tempmedbench_synonyms.config import resolve_cache_dir
from tempmedbench_synonyms.errors import TempMedBenchError

#: The libraries whose versions change what the tool does (HTTP, retries, models, CLI, folders).
MAIN_DEPENDENCIES = ("requests", "tenacity", "pydantic", "typer", "platformdirs")


def dependency_versions() -> dict[str, str]:
    """Each main dependency's installed version, or ``"not installed"``."""
    found = {}
    for name in MAIN_DEPENDENCIES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "not installed"
    return found


def inflate_text() -> str:
    """Which inflate reads a compressed MRCONSO.RRF (``zips.inflate``): ISA-L's where python-isal
    installs, 2 to 3 times the standard library's, else zlib's (the same bytes, slower)."""
    import zlib

    from tempmedbench_synonyms import zips

    if zips.inflate is zlib:
        return "inflate: zlib (the standard library; isal is not in use here)"
    try:
        version = metadata.version("isal")
    except metadata.PackageNotFoundError:  # pragma: no cover - imported, so installed
        version = "of unknown version"
    return f"inflate: isal {version} (ISA-L)"


def version_text() -> str:
    """The lines of ``--version``: the tool first (as before), then Python, libraries, the
    inflate, the cache folder.

    It never fails: where the cache folder cannot be known (no home folder), it says why."""
    try:
        cache = str(resolve_cache_dir(None))
    except TempMedBenchError as err:
        cache = f"none: {err}" + (f"; {err.hint}" if err.hint else "")
    libraries = ", ".join(f"{name} {version}" for name, version in dependency_versions().items())
    return "\n".join(
        (
            f"tempmedbench-synonyms {__version__}",
            f"Python {platform.python_version()} ({platform.python_implementation()}) "
            f"on {platform.system() or 'an unknown system'}",
            libraries,
            inflate_text(),
            f"cache folder: {cache}",
        )
    )
