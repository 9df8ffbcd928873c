"""The canary API key and the search for it in everything a run leaves behind."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from urllib.parse import quote

#: An obviously fake API key for tests: grep for it in everything a run leaves behind.
CANARY_KEY = "CANARY-KEY-do-not-log-0000"


def find_secret(
    secret: str,
    *,
    texts: Mapping[str, str] | None = None,
    folders: Iterable[Path] = (),
) -> list[str]:
    """Where ``secret`` (or its URL-encoded form) appears: the labels of ``texts`` holding it,
    and the paths of files under ``folders`` holding it (names included). Empty means no leak."""
    forms = {secret, quote(secret, safe=""), quote(secret)}
    found = [label for label, text in (texts or {}).items() if any(f in text for f in forms)]
    raw_forms = {f.encode("utf-8") for f in forms}
    for folder in folders:
        for path in sorted(Path(folder).rglob("*")):
            if any(f in str(path) for f in forms) or (
                path.is_file() and any(f in path.read_bytes() for f in raw_forms)
            ):
                found.append(str(path))
    return found
