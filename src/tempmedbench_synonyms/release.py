"""The release folder: its manifest, and strict models of the table, the surface and the hashes.

Everything read here is checked before any atom is fetched (SPEC sections 1, 2 and 4), and every
error names the file, the line or key, and what is wrong.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    StrictStr,
    ValidationError,
    model_validator,
)

from tempmedbench_synonyms import jsonio
from tempmedbench_synonyms.canonical import sha256_file
from tempmedbench_synonyms.errors import BadInputError, ManifestError, bounded_list
from tempmedbench_synonyms.files import read_regular, write_atomic
from tempmedbench_synonyms.uts.identifiers import CUI_PATTERN

MANIFEST = "MANIFEST.sha256"
TABLE = "synonyms/synonym_table_kept.json"
SURFACE = "question_surface/question_surface.jsonl"
EXPECTED = "synonym_regeneration/expected_sha256.json"
SYNONYM_SURFACE = "question_surface/question_surface_synonym.jsonl"
FULL_TABLE = "synonyms/synonym_table_kept_full.json"
#: The two rebuilt files, in the order reports list them.
OUTPUTS: tuple[str, str] = (SYNONYM_SURFACE, FULL_TABLE)
UNVERIFIED_SUFFIX = ".unverified"

_MANIFEST_LINE = re.compile(r"([0-9a-fA-F]{64}) ([ *])(.*)")


# --- manifest -------------------------------------------------------------------------------


def read_manifest(folder: Path) -> dict[str, str]:
    """Read ``MANIFEST.sha256`` into {relative path: sha256}, refusing unsafe or malformed lines."""
    path = folder / MANIFEST
    raw = _read_bytes(path, what="the release manifest", folder=folder)
    text = _decode(raw, path=MANIFEST)
    entries: dict[str, str] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        if line.endswith("\r"):
            line = line[:-1]
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
    path = folder / MANIFEST
    lines = read_regular(path, what="the release manifest").decode("utf-8").split("\n")
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
    write_atomic(path, ("\n".join(lines) + "\n").encode("utf-8"))


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
    """Whether every link along ``rel`` (a plain relative path) points inside ``folder``.

    Each link is resolved strictly: a loop raises then (RuntimeError before Python 3.13, OSError
    ELOOP from 3.13, where a non-strict resolve returns a loop unresolved instead of failing).
    """
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
    allowed_extra: Iterable[str] = OUTPUTS,
) -> tuple[int, list[str]]:
    """Check every listed file against its hash; return (files checked, warnings).

    ``skip`` names listed files not to check (``freeze`` is about to replace the expected hashes).
    Files not listed are allowed only at ``allowed_extra`` (and their ``.unverified`` siblings);
    any other is named in a warning.
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
    # Every listed file is checked, and every bad one named in one error, as `sha256sum -c` does.
    bad: list[ManifestError] = []
    for rel, expected in entries.items():
        if rel not in skipped:
            problem = _check_listed(folder, rel, expected)
            if problem is not None:
                bad.append(problem)
    if len(bad) == 1:
        raise bad[0]
    if bad:
        raise ManifestError(
            f"{len(bad)} of the {len(entries) - len(skipped & set(entries))} listed files are "
            "missing or differ from it:\n  " + bounded_list((str(err) for err in bad), sep="\n  "),
            path=MANIFEST,
            files=bad,
        )
    checked = len(entries) - len(skipped & set(entries))
    allowed = {MANIFEST, *entries, *skipped}
    for rel in allowed_extra:
        allowed.update((rel, rel + UNVERIFIED_SUFFIX))
    warnings = [
        f"{rel}: not listed in {MANIFEST} (not part of the release)"
        + (_BACKUP_NOTE if rel == EXPECTED + ".bak" else "")
        for rel in _walk(folder)
        if rel not in allowed
    ]
    return checked, warnings


#: The file `freeze --force` keeps: warned about like any unlisted file (SPEC section 1), with
#: what it is, so that its authors know to delete it before publishing.
_BACKUP_NOTE = "; it holds the hashes `freeze --force` replaced: delete it before publishing"


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


def _walk(folder: Path) -> list[str]:
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames.sort()
        base = Path(dirpath).relative_to(folder)
        for name in sorted(filenames):
            found.append((base / name).as_posix())
    return found


# --- reading files --------------------------------------------------------------------------


def _read_bytes(path: Path, *, what: str, folder: Path | None = None) -> bytes:
    try:
        return read_regular(path, what=what)
    except FileNotFoundError:
        hint = None
        if folder is not None and not folder.is_dir():
            hint = f"{folder} is not a folder; pass the TempMedBench release folder"
        elif folder is not None:
            hint = (
                "pass the TempMedBench release folder itself (the one with MANIFEST.sha256); "
                "if it is, its files are incomplete: download the release again"
            )
        raise BadInputError(f"{what} is missing", path=path, hint=hint) from None
    except OSError as err:  # a folder, a FIFO or a device is refused by read_regular itself
        raise BadInputError(f"cannot read {what}: {err.strerror}", path=path) from None


def _decode(raw: bytes, *, path: str) -> str:
    if raw.startswith(b"\xef\xbb\xbf"):
        raise BadInputError(
            "starts with a byte order mark (BOM); release files are UTF-8 without a BOM",
            path=path,
            line=1,
        )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        raise BadInputError(f"not valid UTF-8 ({err.reason})", path=path, line=line) from None


def parse_json(text: str, *, path: str, line: int | None = None) -> Any:
    """Parse a release file's JSON strictly (:func:`jsonio.parse_json`), also refusing what
    could not be written back as UTF-8: a lone surrogate escape such as ``"\\ud800"``."""
    data = jsonio.parse_json(text, path=path, line=line)
    if _SURROGATE_ESCAPE.search(text) and jsonio.has_lone_surrogate(data):
        raise BadInputError(
            "a string holds a lone surrogate escape (\\ud800 to \\udfff), which UTF-8 cannot "
            "encode",
            path=path,
            line=line,
        )
    return data


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


# --- models ---------------------------------------------------------------------------------

Cui = Annotated[StrictStr, Field(pattern=f"^{CUI_PATTERN}$")]
Span = Annotated[list[StrictInt], Field(min_length=2, max_length=2)]
Sha256Hex = Annotated[StrictStr, Field(pattern=r"^[0-9a-f]{64}$")]


class ConceptEntry(BaseModel):
    """One entry of ``concepts`` (SPEC section 2). Unknown keys are allowed and kept as read."""

    model_config = ConfigDict(strict=True, extra="allow", frozen=True)

    cui: Cui
    sab: Annotated[StrictStr, Field(min_length=1)]
    route: Literal["source", "cui", "aui"]
    code: Any = None  # checked below for route source only: SPEC says it is ignored elsewhere
    aui: Any = None
    spans: dict[str, list[Span]]

    @model_validator(mode="after")
    def _route_fields(self) -> ConceptEntry:
        if self.route == "source" and not (isinstance(self.code, str) and self.code):
            found = json.dumps(self.code, ensure_ascii=False)
            raise ValueError(
                f"route 'source' needs 'code', a non-empty JSON string (found {found})"
            )
        if self.route == "aui":
            if not (isinstance(self.aui, str) and self.aui):
                raise ValueError("route 'aui' needs 'aui', a non-empty string")
        elif self.aui is not None and not (isinstance(self.aui, str) and self.aui):
            raise ValueError("'aui' must be a non-empty string or null")
        return self

    @property
    def pinned_aui(self) -> str | None:
        """The AUI of the kept synonym, when the table pins it (``null`` counts as absent)."""
        return self.aui if isinstance(self.aui, str) else None

    @property
    def ident(self) -> str:
        """What the route fetches by: the code, the CUI or the AUI."""
        return {"source": self.code, "cui": self.cui, "aui": self.aui}[self.route]  # type: ignore[no-any-return]


class SynonymTable(BaseModel):
    """``synonyms/synonym_table_kept.json`` (SPEC section 2)."""

    model_config = ConfigDict(strict=True, extra="allow", frozen=True)

    format_version: Literal[1]
    umls_release: Annotated[StrictStr, Field(min_length=1)]
    language: Literal["ENG"] = "ENG"
    concepts: dict[str, ConceptEntry]


class ExpectedHashes(BaseModel):
    """``synonym_regeneration/expected_sha256.json`` (SPEC section 4)."""

    model_config = ConfigDict(strict=True, extra="allow", frozen=True)

    format_version: Literal[1]
    umls_release: Annotated[StrictStr, Field(min_length=1)]
    files: dict[str, Sha256Hex]
    concepts: dict[str, Sha256Hex] | None = None

    @model_validator(mode="after")
    def _both_files(self) -> ExpectedHashes:
        if sorted(self.files) != sorted(OUTPUTS):
            raise ValueError(
                f"'files' must list exactly {list(OUTPUTS)}; it lists "
                f"[{bounded_list(repr(f) for f in sorted(self.files))}]"
            )
        return self


def _validated(model: type[BaseModel], data: Any, *, path: str) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as err:
        first = err.errors(include_url=False)[0]
        key = _key_path(first["loc"])
        more = err.error_count() - 1
        msg = first["msg"]
        if first["type"] == "missing":
            msg = "a required key is missing"
        elif first["type"] == "value_error":
            msg = msg.removeprefix("Value error, ")
        if first["type"] not in ("missing",) and "input" in first:
            shown = json.dumps(first["input"], ensure_ascii=False)
            if len(shown) <= 80 and first["type"] != "value_error":
                msg += f" (found {shown})"
        if more:
            msg += f"; and {more} more problem{'s' if more > 1 else ''}"
        # Such a file passed the manifest: it is what the release shipped, or a table made by hand.
        raise BadInputError(
            msg,
            path=path,
            key=key or None,
            hint="this file does not follow the TempMedBench format (SPEC sections 2 and 4); if it "
            "came with a release, report it to the release's authors",
        ) from None


def _key_path(loc: Sequence[int | str]) -> str:
    """A JSON-ish path to the offending value: concepts["38341003"].spans["dev-0001"][0][1]."""
    out = ""
    prev_was_dict_name = False
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
            prev_was_dict_name = False
        elif prev_was_dict_name:
            out += f"[{json.dumps(part, ensure_ascii=False)}]"
            prev_was_dict_name = False
        else:
            out += f".{part}" if out else part
            prev_was_dict_name = part in ("concepts", "spans", "files")
    return out


def _read_versioned(folder: Path, rel: str, *, what: str) -> dict[str, Any]:
    """Read a JSON object file and refuse any ``format_version`` but the integer 1 up front."""
    data = parse_json(_decode(_read_bytes(folder / rel, what=what), path=rel), path=rel)
    if not isinstance(data, dict):
        raise BadInputError(f"{what} must be a JSON object", path=rel)
    version = data.get("format_version")
    if type(version) is not int or version != 1:  # not True, not 1.0
        raise BadInputError(
            f"format_version is {json.dumps(version)}; this tool reads format_version 1",
            path=rel,
            key="format_version",
            hint="install the version of tempmedbench-synonyms that matches this release",
        )
    return data


def load_table(folder: Path) -> tuple[dict[str, Any], SynonymTable]:
    """Return the table as read (unknown keys and all) and its validated model."""
    data = _read_versioned(folder, TABLE, what="the synonym table")
    return data, _validated(SynonymTable, data, path=TABLE)


def load_expected(folder: Path) -> ExpectedHashes:
    data = _read_versioned(folder, EXPECTED, what="the expected hashes")
    result: ExpectedHashes = _validated(ExpectedHashes, data, path=EXPECTED)
    return result


@dataclass(frozen=True)
class SurfaceLine:
    """One question of the anchored surface: its object as read, its qid and its text."""

    qid: str
    text: str
    obj: dict[str, Any]
    line: int


def load_surface(folder: Path) -> list[SurfaceLine]:
    """Read the anchored surface, split on "\\n" only (U+2028 and U+0085 may occur in a text)."""
    raw = _decode(_read_bytes(folder / SURFACE, what="the question surface"), path=SURFACE)
    lines = raw.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the final newline is optional
    out: list[SurfaceLine] = []
    seen: dict[str, int] = {}
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            raise BadInputError("a blank line", path=SURFACE, line=number)
        obj = parse_json(text, path=SURFACE, line=number)
        if not isinstance(obj, dict):
            raise BadInputError("not a JSON object", path=SURFACE, line=number)
        qid = obj.get("qid")
        if not isinstance(qid, str):
            problem = "no 'qid'" if qid is None else "'qid' is not a string"
            raise BadInputError(problem, path=SURFACE, line=number, key="qid")
        if qid in seen:
            raise BadInputError(
                f"qid {qid!r} again (first on line {seen[qid]})",
                path=SURFACE,
                line=number,
                key="qid",
            )
        seen[qid] = number
        question = obj.get("question_surface")
        if not isinstance(question, str):
            raise BadInputError(
                "no 'question_surface' string",
                path=SURFACE,
                line=number,
                key="question_surface",
            )
        out.append(SurfaceLine(qid, question, obj, number))
    return out


@dataclass
class Release:
    """A release folder, checked against its manifest, with its files read and validated."""

    folder: Path
    table_raw: dict[str, Any]
    table: SynonymTable
    surface: list[SurfaceLine]
    expected: ExpectedHashes | None
    files_checked: int
    warnings: list[str] = field(default_factory=list)


def open_release(folder: Path, *, with_expected: bool = True) -> Release:
    """Check the folder against its manifest, then read and validate its synonym files.

    ``with_expected=False`` (for ``freeze``) neither checks nor reads the expected hashes, which
    are about to be written anew.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise BadInputError(
            "no such folder" if not folder.exists() else "not a folder",
            path=folder,
            hint="pass the TempMedBench release folder (the one holding MANIFEST.sha256)",
        )
    required = [TABLE, SURFACE] + ([EXPECTED] if with_expected else [])
    checked, warnings = verify_manifest(
        folder, required=required, skip=() if with_expected else (EXPECTED,)
    )
    table_raw, table = load_table(folder)  # warnings travel in the report, not the log
    surface = load_surface(folder)
    expected = load_expected(folder) if with_expected else None
    return Release(folder, table_raw, table, surface, expected, checked, warnings)
