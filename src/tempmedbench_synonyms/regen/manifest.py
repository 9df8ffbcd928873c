"""The release's gate (SPEC section 1): ``MANIFEST.sha256``, read strictly and checked file by file,
every bad file named in one error, as ``sha256sum -c`` does.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path, PurePosixPath

from tempmedbench_synonyms.errors import BadInputError, ManifestError, bounded_list
from tempmedbench_synonyms.files import decode_utf8, read_input, sha256_file, write_atomic

MANIFEST = "MANIFEST.sha256"

#: A manifest lists a handful of files (about 80 bytes a line): a larger one is bad input, never
#: read whole into memory.
MANIFEST_LIMIT = 16 << 20
#: The hint of a release file over its limit (``MANIFEST_LIMIT``, ``release.RELEASE_FILE_LIMIT``).
TOO_LARGE_HINT = (
    "a release's files are a few MB: this is not the file the release shipped; download the "
    "release again"
)
_MANIFEST_LINE = re.compile(r"([0-9a-fA-F]{64}) ([ *])(.*)")


def _manifest_text(folder: Path) -> str:
    raw = read_input(
        folder / MANIFEST,
        what="the release manifest",
        folder=folder,
        limit=MANIFEST_LIMIT,
        too_large=TOO_LARGE_HINT,
    )
    return decode_utf8(raw, path=MANIFEST)


def read_manifest(folder: Path) -> dict[str, str]:
    """Read ``MANIFEST.sha256`` into {relative path: sha256}, refusing unsafe or malformed lines."""
    entries: dict[str, str] = {}
    for number, line in enumerate(_manifest_text(folder).split("\n"), start=1):
        line = line.removesuffix("\r")
        if not line.strip():
            continue
        m = _MANIFEST_LINE.fullmatch(line)
        if m is None:
            raise ManifestError(
                "not a manifest line; expected '<64 hex digits>  <relative path>' "
                "(the sha256sum format)",
                path=MANIFEST,
                line=number,
            )
        digest, rel = m.group(1), m.group(3)
        if digest != digest.lower():
            raise ManifestError("manifest hashes are lowercase hex", path=MANIFEST, line=number)
        _check_safe(folder, rel, line=number)
        if rel == MANIFEST:
            raise ManifestError(
                "the manifest lists itself; it lists every file of the release except itself",
                path=MANIFEST,
                line=number,
            )
        if rel in entries:
            raise ManifestError(f"{rel!r} is listed twice", path=MANIFEST, line=number)
        entries[rel] = digest
    return entries


def update_manifest_line(folder: Path, rel: str, digest: str) -> None:
    """Replace (or add) the line of ``rel`` in the manifest, keeping every other line as it is."""
    lines = _manifest_text(folder).split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    new = f"{digest}  {rel}"
    for i, line in enumerate(lines):
        m = _MANIFEST_LINE.fullmatch(line.removesuffix("\r"))
        if m is not None and m.group(3) == rel:
            lines[i] = new
            break
    else:
        lines.append(new)
    write_atomic(folder / MANIFEST, ("\n".join(lines) + "\n").encode("utf-8"))


def _check_safe(folder: Path, rel: str, *, line: int) -> None:
    """Refuse a manifest path that is absolute, has '..', or leaves the folder through a link."""
    problem = None
    pure = PurePosixPath(rel)
    if not rel or rel != rel.strip():
        problem = "an empty path, or one with leading or trailing spaces"
    elif any(ord(c) < 32 or c == "\x7f" for c in rel):
        problem = "a path with a control character"
    elif pure.is_absolute() or re.match(r"[A-Za-z]:", rel) or rel.startswith("\\"):
        problem = "an absolute path"
    elif ".." in pure.parts or ".." in rel.split("\\"):
        problem = "a path with '..'"
    elif "\\" in rel:
        problem = "a path with a backslash; manifest paths use '/'"
    elif any(part in ("", ".") for part in rel.split("/")):
        problem = "not a plain relative path (no './', '//' or trailing '/')"
    elif not _stays_inside(folder, rel):
        problem = "a path that leaves the release folder through a link (or a link loop)"
    if problem:
        raise ManifestError(
            f"{rel!r} is {problem}",
            path=MANIFEST,
            line=line,
            hint="a manifest path must be relative and stay inside the release folder; "
            "this manifest was not made by the release tools, do not use the folder",
        )


def _stays_inside(folder: Path, rel: str) -> bool:
    """Each link along ``rel`` is resolved strictly, so a loop raises (RuntimeError, or OSError
    from 3.13)."""
    try:
        root = folder.resolve()
        current = folder
        for part in rel.split("/"):
            current = current / part
            if not current.is_symlink():
                continue
            try:
                target = current.resolve(strict=True)
            except FileNotFoundError:  # a dangling link: where it would lead, if it is inside
                target = current.resolve()
            if not (target == root or root in target.parents):
                return False
    except (OSError, RuntimeError, ValueError):  # a link loop, for one
        return False
    return True


def verify_manifest(
    folder: Path,
    *,
    required: Sequence[str],
    skip: Iterable[str] = (),
    allowed_extra: Iterable[str] = (),
    notes: Mapping[str, str] | None = None,
) -> tuple[int, list[str]]:
    """Check every listed file against its hash; return (files checked, warnings).

    ``required`` must be listed (or in ``skip``: not checked). Unlisted files are allowed only at
    ``allowed_extra`` and as a listed script's bytecode; any other is warned of (with its
    ``notes``). Every bad listed file is named, in one error.
    """
    entries = read_manifest(folder)
    skipped = set(skip)
    for rel in required:
        if rel not in entries and rel not in skipped:
            raise ManifestError(
                f"does not list {rel!r}, which this command needs",
                path=MANIFEST,
                hint="the folder is not a TempMedBench release, or its manifest is incomplete",
            )
    checked = len(entries) - len(skipped & set(entries))
    # Every listed file is checked, and every bad one named in one error, as `sha256sum -c` does.
    found = (_check_listed(folder, rel, sha) for rel, sha in entries.items() if rel not in skipped)
    bad = [problem for problem in found if problem is not None]
    if len(bad) == 1:
        raise bad[0]
    if bad:
        raise ManifestError(
            f"{len(bad)} of the {checked} listed files are "
            "missing or differ from it:\n  " + bounded_list((str(err) for err in bad), sep="\n  "),
            path=MANIFEST,
            files=bad,
        )
    allowed = {MANIFEST, *entries, *skipped, *allowed_extra}
    notes = notes or {}
    warnings = [
        f"{rel}: not listed in {MANIFEST} (not part of the release)" + notes.get(rel, "")
        for rel in _walk(folder)
        if rel not in allowed and not _bytecode_of(rel, entries)
    ]
    return checked, warnings


_BYTECODE = re.compile(r"(.*/)?__pycache__/([^/.]+)\.[^/]+\.pyc")


def _bytecode_of(rel: str, listed: Mapping[str, str]) -> bool:
    """Whether ``rel`` is Python's cache of a listed script (``D/__pycache__/NAME.TAG.pyc``
    beside ``D/NAME.py``): no release file, and a warning would be noise."""
    m = _BYTECODE.fullmatch(rel)
    return m is not None and f"{m[1] or ''}{m[2]}.py" in listed


def _check_listed(folder: Path, rel: str, expected: str) -> ManifestError | None:
    """The problem of one listed file (missing, not a file, unreadable, different), or None."""
    target = folder / rel
    if not target.is_file():
        return ManifestError(
            "listed in MANIFEST.sha256 but missing"
            if not target.exists()
            else "listed in MANIFEST.sha256 but not a file",
            path=rel,
            expected=expected,
        )
    try:
        actual = sha256_file(target)
    except OSError as err:
        return ManifestError(f"cannot be read: {err.strerror}", path=rel, expected=expected)
    except BadInputError as err:  # swapped for a FIFO or a device since is_file() said file
        return ManifestError(err.problem, path=rel, expected=expected)
    if actual != expected:
        return ManifestError(
            "differs from MANIFEST.sha256", path=rel, expected=expected, actual=actual
        )
    return None


def _walk(folder: Path) -> Iterator[str]:
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames.sort()
        base = Path(dirpath).relative_to(folder)
        for name in sorted(filenames):
            yield (base / name).as_posix()
