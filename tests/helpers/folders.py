"""Folders a user cannot enter, and names too long: the odd paths users give (issue 17).

The ``locked`` fixture (tests/conftest.py) makes a real folder with mode 000. A user other than
root can then neither list it nor reach anything under it: EACCES from the kernel. Root ignores
permission bits, so when the tests run as root (as in many containers) the same refusal is
simulated in-process by :func:`refuse_under`: the ``os`` functions that take a path (``stat``,
``lstat``, ``open``, ``mkdir``, ``listdir``, ``scandir``...) raise ``PermissionError`` for any
path under the folder, and for a listing of the folder itself, as the kernel would.
``SIMULATED`` says which of the two a run uses.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

#: Whether the refusal is simulated (root ignores mode 000) rather than the kernel's own.
SIMULATED = hasattr(os, "geteuid") and os.geteuid() == 0

#: A name longer than any file system allows in one path component (255 bytes): ENAMETOOLONG.
LONG_NAME = "n" * 300

#: The ``os`` functions whose first argument is a path reached through the folder.
_THROUGH = ("stat", "lstat", "open", "mkdir", "rmdir", "unlink", "chmod", "access", "replace",
            "rename", "utime", "readlink")  # fmt: skip
#: The ones that list a folder: refused for the folder itself too (no read permission).
_LISTING = ("listdir", "scandir")


def _refusing(real: Callable[..., Any], locked: str, *, listing: bool) -> Callable[..., Any]:
    def refuse(path: Any = ".", *args: Any, **kwargs: Any) -> Any:
        if isinstance(path, (str, bytes, os.PathLike)) and kwargs.get("dir_fd") is None:
            text = os.path.abspath(os.fsdecode(path))
            if text.startswith(locked + os.sep) or (listing and text == locked):
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(path))
        return real(path, *args, **kwargs)

    return refuse


def refuse_under(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make this process refuse, as the kernel does for a folder of mode 000, every path under
    ``folder`` and every listing of it (for the rest of the test)."""
    locked = os.path.abspath(folder)
    for name in _THROUGH + _LISTING:
        real = getattr(os, name)
        monkeypatch.setattr(os, name, _refusing(real, locked, listing=name in _LISTING))
