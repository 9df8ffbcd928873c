"""Where each setting comes from: a flag, else an environment variable, else a platform folder.

The only module that reads the environment (docs/architecture.md, "The environment"); the
variables: docs/reference.md, "Environment variables".
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tempmedbench_synonyms.constants import (
    API_KEY_ENV,
    API_KEY_FILE_ENV,
    APP_NAME,
    BASE_URL_ENV,
    CACHE_DIR_ENV,
    DEFAULT_BASE_URL,
    ENV_PREFIXES,
    HOME_ENV,
    INDEX_DIR_ENV,
    LOOPBACK_HOSTS,
    NO_COLOR_ENV,
    NO_PROXY_VARS,
    STATE_DIR_ENV,
)
from tempmedbench_synonyms.errors import BadInputError


def variable(name: str) -> str:
    return os.environ.get(name, "").strip()


def tool_variables() -> list[str]:
    return sorted(name for name in os.environ if name.startswith(ENV_PREFIXES))


def without_tool_variables() -> dict[str, str]:
    """The environment less ``tool_variables``: for a child given every setting by its caller."""
    return {k: v for k, v in os.environ.items() if not k.startswith(ENV_PREFIXES)}


def no_proxy_with_loopback() -> str:
    """``NO_PROXY`` and ``no_proxy`` together, with ``LOOPBACK_HOSTS``: so no proxy sees a child's
    requests to 127.0.0.1."""
    names = [name.strip() for var in NO_PROXY_VARS for name in variable(var).split(",")]
    return ",".join(dict.fromkeys(name for name in [*names, *LOOPBACK_HOSTS] if name))


def api_key_source(api_key_file: Path | None) -> str | None:
    """Where the key is taken from, in words: ``--api-key-file PATH``, ``UMLS_API_KEY_FILE
    (PATH)`` or ``UMLS_API_KEY``; ``None`` if nothing gives one (the file may still be bad)."""
    if api_key_file is not None:
        return f"--api-key-file {api_key_file}"
    from_env = variable(API_KEY_FILE_ENV)
    if from_env:
        return f"{API_KEY_FILE_ENV} ({from_env})"
    if variable(API_KEY_ENV):
        return API_KEY_ENV
    return None


def base_url(flag: str | None) -> str:
    if flag is not None:
        return flag
    return variable(BASE_URL_ENV) or DEFAULT_BASE_URL


def resolve_cache_dir(cache_dir: Path | None) -> Path:
    if cache_dir is not None:
        return _expanded(cache_dir, "--cache-dir")
    return path_variable(CACHE_DIR_ENV) or _platform_folder("cache")


def resolve_index_dir(index_dir: Path | None, cache_dir: Path | None = None) -> Path:
    """The local indexes' folder: ``--index-dir``, ``TEMPMEDBENCH_INDEX_DIR``, or the cache's."""
    if index_dir is not None:
        return _expanded(index_dir, "--index-dir")
    return path_variable(INDEX_DIR_ENV) or resolve_cache_dir(cache_dir) / "index"


def state_folder() -> Path:
    return path_variable(STATE_DIR_ENV) or _platform_folder("state")


def path_variable(name: str, flag: Path | None = None) -> Path | None:
    """``flag``, else the path the variable ``name`` gives (``~`` expanded), else ``None``."""
    if flag is not None:
        return flag
    value = variable(name)
    return _expanded(value, name) if value else None


def _expanded(path: str | Path, name: str) -> Path:
    """``path`` with ``~`` expanded; no home folder is BadInputError naming ``name``."""
    try:
        return Path(path).expanduser()
    except RuntimeError:
        raise BadInputError(
            f"{name} starts with ~, and there is no home folder: {HOME_ENV} is not set and the "
            "user has no home folder in the password database",
            key=name,
            hint=f"give the whole path, or set {HOME_ENV} to a folder you own",
        ) from None


def _platform_folder(kind: str) -> Path:
    """The platformdirs user ``kind`` folder; no home folder is BadInputError saying what to set."""
    # Imported here: platformdirs is only needed when neither flag nor variable names a folder.
    import platformdirs

    try:
        found = getattr(platformdirs, f"user_{kind}_dir")(APP_NAME, appauthor=False)
    except (RuntimeError, KeyError, OSError):  # no HOME, and no passwd entry to fall back on
        found = ""
    if os.path.isabs(found):
        return Path(found)
    home = os.environ.get(HOME_ENV)
    why = f"{HOME_ENV} is not set" if not home else f"{HOME_ENV}={home!r} is not an absolute path"
    uid = getattr(os, "getuid", lambda: None)()
    user = "the user running it" if uid is None else f"user id {uid}"
    raise BadInputError(
        f"the default {kind} folder is in the home folder, and there is none: {why}, and "
        f"{user} has no home folder in the password database",
        hint=f"set {HOME_ENV} to a folder you own, or {CACHE_DIR_ENV} and {STATE_DIR_ENV} to "
        "folders you can write in; in a container run as a user with no passwd entry, add "
        "-e HOME=/tmp (or a folder you mount)",
    )


def no_color() -> bool:
    """Whether ``NO_COLOR`` is set to anything (https://no-color.org)."""
    return bool(os.environ.get(NO_COLOR_ENV))


@dataclass(frozen=True, slots=True)
class Flag:
    """How a field of an options object is spelt on the command line (``cli._options``)."""

    flag: str
    help: str
    #: what ``--help`` shows as the default ("" for none; ``None``: the field's default)
    default_text: str | None = None
    #: what ``--help`` shows the value as (``None``: typer's name of its type)
    metavar: str | None = None


def option(
    default: Any, flag: str, help: str, default_text: str | None = None, metavar: str | None = None
) -> Any:
    """A dataclass field spelt ``flag`` on the command line (its ``Flag`` in the metadata):
    ``rate: float = option(15.0, "--rate", "Requests a second.")``."""
    return field(default=default, metadata={"cli": Flag(flag, help, default_text, metavar)})
