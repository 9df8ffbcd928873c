"""The release folder: checked against its manifest, then strict models of the table, the surface
and the hashes (SPEC sections 1, 2 and 4), all read before any atom is fetched."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

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
from tempmedbench_synonyms.atoms import CUI_PATTERN
from tempmedbench_synonyms.errors import BadInputError, bounded_list
from tempmedbench_synonyms.files import BOM_PROBLEM, decode_utf8, os_error, read_input
from tempmedbench_synonyms.regen.manifest import TOO_LARGE_HINT, verify_manifest
from tempmedbench_synonyms.zips import folder_hint

TABLE = "synonyms/synonym_table_kept.json"
SURFACE = "question_surface/question_surface.jsonl"
EXPECTED = "synonym_regeneration/expected_sha256.json"
#: The launcher a release carries beside its hashes (the dataset card's layout; ``freeze``).
LAUNCHER = "synonym_regeneration/regenerate_synonyms.py"
SYNONYM_SURFACE = "question_surface/question_surface_synonym.jsonl"
FULL_TABLE = "synonyms/synonym_table_kept_full.json"
#: The two rebuilt files, in the order reports list them.
OUTPUTS: tuple[str, str] = (SYNONYM_SURFACE, FULL_TABLE)
UNVERIFIED_SUFFIX = ".unverified"
#: The most bytes a release file read whole may have (the table, the surface, the expected
#: hashes; the rebuilt full table ``check`` reads): ten times the largest of a real release (a
#: few MB), and small enough that parsing one costs a few hundred MB at most.
RELEASE_FILE_LIMIT = 64 << 20
#: What a run writes into the folder: not part of the release, so not listed in its manifest.
RUN_FILES: tuple[str, ...] = (*OUTPUTS, *(rel + UNVERIFIED_SUFFIX for rel in OUTPUTS))
#: The file `freeze --force` keeps: warned about like any unlisted file (SPEC section 1), with
#: what it is, so that its authors know to delete it before publishing.
_NOTES = {
    EXPECTED
    + ".bak": "; it holds the hashes `freeze --force` replaced: delete it before publishing",
    LAUNCHER: "; `freeze` wrote it: list it (freeze --update-manifest) before publishing",
}


def read_release_file(path: Path, *, what: str) -> bytes:
    """A release file's bytes, at most ``RELEASE_FILE_LIMIT`` (else bad input naming its size)."""
    return read_input(path, what=what, limit=RELEASE_FILE_LIMIT, too_large=TOO_LARGE_HINT)


_Model = TypeVar("_Model", bound=BaseModel)
Cui = Annotated[StrictStr, Field(pattern=f"^{CUI_PATTERN}$")]
Span = Annotated[list[StrictInt], Field(min_length=2, max_length=2)]
Sha256Hex = Annotated[StrictStr, Field(pattern=r"^[0-9a-f]{64}$")]

# A problem pydantic found, said in our words (its ``type`` and ``ctx``); another keeps its own.
_PROBLEMS = {
    "missing": "a required key is missing",
    "literal_error": "must be {expected}",
    "int_type": "must be an integer",
    "string_type": "must be a string",
    "string_too_short": "must not be empty",
    "too_long": "must hold at most {max_length} items",
    "too_short": "must hold at least {min_length} items",
    "dict_type": "must be a JSON object",
    "model_type": "must be a JSON object",
    "list_type": "must be a JSON list",
    "string_pattern_mismatch": "must match {pattern}",
}
_PATTERNS = {
    f"^{CUI_PATTERN}$": "must be a CUI, C and 7 ASCII digits",
    r"^[0-9a-f]{64}$": "must be a SHA-256, 64 lower-case hexadecimal digits",
}


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
        return {"source": self.code, "cui": self.cui, "aui": self.aui}[self.route]  # type: ignore[no-any-return]


class _Versioned(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow", frozen=True)

    format_version: Literal[1]
    umls_release: Annotated[StrictStr, Field(min_length=1)]


class SynonymTable(_Versioned):
    """``synonyms/synonym_table_kept.json`` (SPEC section 2)."""

    language: Literal["ENG"] = "ENG"
    concepts: dict[str, ConceptEntry]


class ExpectedHashes(_Versioned):
    """``synonym_regeneration/expected_sha256.json`` (SPEC section 4)."""

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


def _validated(model: type[_Model], data: Any, *, path: str) -> _Model:
    try:
        return model.model_validate(data)
    except ValidationError as err:
        first = err.errors(include_url=False)[0]
        key = _key_path(first["loc"])
        more = err.error_count() - 1
        ctx = first.get("ctx", {})
        msg = _PATTERNS.get(ctx.get("pattern", ""), "")
        if first["type"] == "value_error":  # ours, from a model validator
            msg = first["msg"].removeprefix("Value error, ")
        elif not msg:
            own = _PROBLEMS.get(first["type"])
            msg = first["msg"] if own is None else own.format(**ctx)
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
    in_mapping = False  # the part before names a mapping: this part is one of its keys
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif in_mapping:
            out += f"[{json.dumps(part, ensure_ascii=False)}]"
        else:
            out += f".{part}" if out else part
        in_mapping = not in_mapping and part in ("concepts", "spans", "files")
    return out


def _read_versioned(folder: Path, rel: str, *, what: str) -> dict[str, Any]:
    """Read a JSON object file and refuse any ``format_version`` but the integer 1 up front."""
    text = decode_utf8(read_release_file(folder / rel, what=what), path=rel)
    data = jsonio.parse_json(text, path=rel, utf8_only=True)
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
    return _validated(ExpectedHashes, data, path=EXPECTED)


@dataclass(frozen=True)
class SurfaceLine:
    """One question of the anchored surface: its object as read, its qid and its text."""

    qid: str
    text: str
    obj: dict[str, Any]


#: The bytes of the surface parsed at a time (``load_surface``).
SURFACE_BLOCK = 1 << 20

#: The surface's JSON Lines, in the words of the release files (``files.decode_utf8``).
_SURFACE_RULES = jsonio.LineRules(
    blank="a blank line",
    bom=BOM_PROBLEM,
    not_object="not a JSON object",
    not_utf8="not valid UTF-8 ({reason})",
    utf8_only=True,
)


def load_surface(folder: Path) -> list[SurfaceLine]:
    """Read the anchored surface: JSON Lines (split on "\\n" only), each line an object with a
    distinct ``qid`` and its ``question_surface``."""
    raw = read_release_file(folder / SURFACE, what="the question surface")
    out: list[SurfaceLine] = []
    seen: dict[str, int] = {}
    # Parsed a block at a time: the text of one block and its copy as a JSON array
    # (``jsonio._batches``) are held, not those of the whole file (4 bytes a character where
    # one character is beyond U+FFFF).
    blocks = (raw[i : i + SURFACE_BLOCK] for i in range(0, len(raw), SURFACE_BLOCK))
    for number, obj in enumerate(jsonio.iter_jsonl(blocks, SURFACE, _SURFACE_RULES), start=1):
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
        out.append(SurfaceLine(qid, question, obj))
    return out


@dataclass
class Release:
    """A release folder, checked against its manifest, with its files read and validated."""

    folder: Path
    table_raw: dict[str, Any]
    table: SynonymTable
    surface: list[SurfaceLine]
    files_checked: int
    warnings: list[str] = field(default_factory=list)


def open_release(folder: Path, *, with_expected: bool = True) -> Release:
    """The manifest must list and match the expected hashes, unless ``with_expected=False``
    (``freeze``, about to write them)."""
    folder = Path(folder)
    try:
        mode: int | None = os.stat(folder).st_mode
    except (FileNotFoundError, NotADirectoryError):
        mode = None
    except OSError as err:  # a folder on its path that cannot be entered, a name too long
        raise os_error(err, what="the release folder") from None
    if mode is None or not stat.S_ISDIR(mode):
        raise BadInputError(
            "no such folder" if mode is None else "not a folder",
            path=folder,
            hint=folder_hint(
                folder, "pass the TempMedBench release folder (the one holding MANIFEST.sha256)"
            ),
        )
    required = [TABLE, SURFACE] + ([EXPECTED] if with_expected else [])
    checked, warnings = verify_manifest(
        folder,
        required=required,
        skip=() if with_expected else (EXPECTED,),
        allowed_extra=RUN_FILES,
        notes=_NOTES,
    )
    table_raw, table = load_table(folder)  # warnings travel in the report, not the log
    surface = load_surface(folder)
    return Release(folder, table_raw, table, surface, checked, warnings)
