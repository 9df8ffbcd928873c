"""What this installation is: its version, the Python and main libraries it runs on, its folders.

``--version`` prints it, and ``doctor`` checks it, so that a bug report can quote one block.
"""

from __future__ import annotations

import platform
import shlex
import sys
from importlib import metadata

from tempmedbench_synonyms.config import resolve_cache_dir
from tempmedbench_synonyms.constants import __version__
from tempmedbench_synonyms.errors import BadInputError, TempMedBenchError

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


def missing_module_error(err: ModuleNotFoundError) -> BadInputError:
    """A missing module (``--no-deps``, a dependency removed): the environment's problem, exit 2
    with how to reinstall, never "a bug" (SPEC section 8)."""
    python = shlex.quote(sys.executable or "python3")
    return BadInputError(
        f"tempmedbench-synonyms {__version__} is installed without a module it needs: {err}",
        hint="reinstall it with its dependencies, from a checkout of its code repository: "
        f"{python} -m pip install --force-reinstall PATH/TO/THE/CHECKOUT",
    )


def inflate_text() -> str:
    """Which inflate reads a compressed MRCONSO.RRF: ISA-L's (2 to 3 times faster) or zlib's."""
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
    """The lines of ``--version`` (tool, Python, libraries, inflate, cache folder); never fails."""
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
