"""Zip members that cannot be read, said as bad input naming the zip and the member
(``reading_member``); the inflate of the MRCONSO forms (ISA-L's where it installs, else zlib).
"""

from __future__ import annotations

import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import IO, cast

from tempmedbench_synonyms.errors import BadInputError

inflate: ModuleType
try:
    from isal import isal_zlib as inflate
except ImportError:  # pragma: no cover - a platform without isal wheels
    inflate = zlib

# What reading a zip member can raise besides OSError: a damaged or truncated archive, an
# encrypted member (RuntimeError: password required), a compression method zipfile lacks
# (NotImplementedError, e.g. Deflate64 from Windows Explorer), an archive that needs ZIP64.
#: What a damaged deflate stream raises, with either inflate.
#: (isal's stub calls its error an instance: it is its exception class.)
INFLATE_ERRORS = (zlib.error, cast("type[Exception]", inflate.error))
ZIP_ERRORS = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    *INFLATE_ERRORS,
    EOFError,
    NotImplementedError,
    RuntimeError,
)
# APPNOTE.TXT section 4.4.5; the ones zipfile reads are 0, 8, 12 and 14.
_COMPRESSION_METHODS = {
    1: "Shrink",
    6: "Implode",
    9: "Deflate64",
    10: "PKWARE DCL Implode",
    18: "IBM TERSE",
    19: "IBM LZ77",
    93: "Zstandard",
    95: "XZ",
    98: "PPMd",
}


def open_member(zf: zipfile.ZipFile, member: str) -> IO[bytes]:
    """``zf.open(member)``, a deflated member inflated by ``inflate`` (zipfile still reads its
    headers, stops at its size and checks its CRC)."""
    f = zf.open(member)
    state = vars(f)
    deflated = state.get("_compress_type") == zipfile.ZIP_DEFLATED
    if inflate is not zlib and deflated and "_decompressor" in state:
        state["_decompressor"] = inflate.decompressobj(-15)
    return f


@contextmanager
def reading_member(path: Path, zf: zipfile.ZipFile, member: str, *, hint: str) -> Iterator[None]:
    """Turn errors reading ``member`` into ``BadInputError`` naming it (``hint``: what to do)."""
    try:
        yield
    except ZIP_ERRORS as err:
        method = zf.getinfo(member).compress_type  # a member that was read, so listed
        if isinstance(err, RuntimeError) and "password" in str(err):
            problem = "the member is encrypted (a password is required to read it)"
        elif isinstance(err, NotImplementedError) and method not in (0, 8, 12, 14):
            name = _COMPRESSION_METHODS.get(method, "unknown")
            problem = (
                f"the member is compressed with method {method} ({name}), which Python's zipfile "
                "cannot read"
            )
        elif isinstance(err, EOFError) or (
            # Python 3.13's zipfile sees the same damage as an overlap: the recorded size runs into
            # the next structure of the file.
            isinstance(err, zipfile.BadZipFile) and str(err).startswith("Overlapped entries")
        ):
            problem = "damaged zip: the member ends before its recorded size (truncated?)"
        elif isinstance(err, zipfile.LargeZipFile):
            problem = f"the member needs ZIP64 extensions, which are not available: {err}"
        elif isinstance(err, (zipfile.BadZipFile, *INFLATE_ERRORS)):
            problem = f"damaged zip: {err}"
        else:
            problem = f"the member cannot be read: {err}"
        raise BadInputError(problem, path=f"{path}!{member}", hint=hint) from None


def folder_hint(path: Path, hint: str) -> str:
    """``hint`` for a path that should be a folder; a zip archive is told to unzip it first."""
    if path.is_file() and zipfile.is_zipfile(path):
        return f"it is a zip archive: unzip it (unzip {path.name}) and {hint}"
    return hint
