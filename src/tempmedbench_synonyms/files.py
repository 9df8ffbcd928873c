"""Writing files so that nothing is ever half-written: a temporary file, then ``os.replace``."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

#: Every temporary file ends so; ``cache info`` counts the ones a killed run left behind.
TMP_SUFFIX = ".tmp"


def write_atomic(path: Path, data: bytes, *, private: bool = False) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and ``os.replace``.

    ``private`` files (the cache: licensed UMLS content) are created 0600; others get 0666 less
    the umask, as ``open`` would give them. The data reaches the disk (fsync) before the rename,
    so a crash leaves the old file or the new one, never a torn one.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}{TMP_SUFFIX}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if private else 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
