"""``doctor``: a user's set-up checked in one pass, each check a ``Check`` with its fix (the checks
and their order: docs/reference.md, ``doctor``)."""

from __future__ import annotations

import contextlib
import logging
import platform
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tempmedbench_synonyms.about import dependency_versions
from tempmedbench_synonyms.config import (
    api_key_source,
    path_variable,
    resolve_cache_dir,
    resolve_index_dir,
)
from tempmedbench_synonyms.constants import (
    API_KEY_ENV,
    API_KEY_FILE_ENV,
    CACHE_DIR_ENV,
    PROFILE_URL,
    STATE_DIR_ENV,
    __version__,
)
from tempmedbench_synonyms.errors import (
    ApiKeyMissingError,
    BadInputError,
    TempMedBenchError,
    bounded_list,
    plural,
)
from tempmedbench_synonyms.files import check_own, check_writable, os_error, os_fix, os_problem
from tempmedbench_synonyms.mrconso.source import sniff_mrconso
from tempmedbench_synonyms.progress import format_size
from tempmedbench_synonyms.regen.pipeline import probe_cui
from tempmedbench_synonyms.regen.release import OUTPUTS, Release, open_release
from tempmedbench_synonyms.secret import (
    looks_like_uts_key,
    missing_key,
    read_api_key,
    readable_by_others,
    redact,
)
from tempmedbench_synonyms.uts.cache import check_cache_root
from tempmedbench_synonyms.uts.options import UtsOptions
from tempmedbench_synonyms.uts.ratelimit import SharedBudget, shared_state_path
from tempmedbench_synonyms.uts.session import open_uts

#: The probe without a release folder: a concept every UMLS release has (C0018787, Heart).
KNOWN_CUI = "C0018787"

_CURRENT_PROBE = (
    "doctor asks for release 'current' and a concept every release has: check --base-url (or "
    "UMLS_BASE_URL)"
)
_NO_TABLE_HINT = (
    f"with no release folder named, {_CURRENT_PROBE}, and name the release folder "
    "(tempmedbench-synonyms doctor RELEASE) to probe the release its table uses"
)
_UNREAD_TABLE_HINT = (
    f"with no table read, {_CURRENT_PROBE}; fix the release check for a probe of the release "
    "its table uses"
)
#: no package index holds this package by its name (about.missing_module_error): from a checkout
_PYTHON_HINT = "reinstall it: pip install --force-reinstall PATH/TO/THE/CHECKOUT"


@dataclass(frozen=True, slots=True)
class Check:
    """One line of the doctor's report; ``exit_code`` is 0 when it passed."""

    name: str
    ok: bool
    message: str
    hint: str | None = None
    exit_code: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "ok": self.ok, "message": self.message, "hint": self.hint}


def _failed(name: str, err: TempMedBenchError | OSError) -> Check:
    error = os_error(err) if isinstance(err, OSError) else err
    return Check(name, False, redact(str(error)), error.hint, error.exit_code)


def check_versions() -> Check:
    found = dependency_versions()
    libraries = ", ".join(f"{name} {version}" for name, version in found.items())
    message = (
        f"tempmedbench-synonyms {__version__}, Python {platform.python_version()}, {libraries}"
    )
    missing = [name for name, version in found.items() if version == "not installed"]
    if missing:
        return Check("versions", False, message, f"{bounded_list(missing)}: {_PYTHON_HINT}", 2)
    return Check("versions", True, message)


def check_release(release_dir: Path) -> tuple[Check, Release | None]:
    try:
        opened = open_release(release_dir)
    except (TempMedBenchError, OSError) as err:
        return _failed("release", err), None
    table = opened.table
    return Check(
        "release",
        True,
        f"{opened.folder}: {opened.files_checked} files match MANIFEST.sha256; "
        f"{len(table.concepts)} concepts, UMLS release {table.umls_release}",
    ), opened


def check_api_key(api_key_file: Path | None) -> Check:
    where = api_key_source(api_key_file)
    key = read_api_key(api_key_file)  # an error fails the check (_made)
    if key is None:
        raise ApiKeyMissingError(
            message=f"no UMLS API key: neither --api-key-file, UMLS_API_KEY_FILE nor "
            f"{API_KEY_ENV} gives one",
            hint=missing_key().hint,
        )
    notes = [f"it {note}" for note in key.notes]  # a byte order mark left out: still a pass
    hints = []
    if not looks_like_uts_key(key):
        notes.append(
            "it does not look like a UTS API key (a UUID: 36 characters, 8-4-4-4-12 "
            "hexadecimal digits)"
        )
        hints.append(f"if UTS refuses it, copy the key again from your UTS profile ({PROFILE_URL})")
    path = path_variable(API_KEY_FILE_ENV, api_key_file)
    try:
        loose = path is not None and readable_by_others(path.stat().st_mode)
    except OSError:
        loose = False
    if loose:  # still a pass, as a run takes it, but the fix is said here too, not on stderr only
        notes.append("other users can read the file")
        hints.append(f"chmod 600 {path}")
    but = f", but {'; '.join(notes)}" if notes else ""
    return Check("api_key", True, f"found in {where}{but}", "; ".join(hints) or None)


def check_uts(
    options: UtsOptions,
    umls_release: str,
    cui: str,
    current_hint: str | None,
    *,
    key_ok: bool,
) -> Check:
    """The one probe request; ``current_hint``: the hint when UTS does not serve ``current`` and
    :data:`KNOWN_CUI` (doctor has no table)."""
    if not key_ok:
        raise ApiKeyMissingError(
            message="not asked: there is no usable API key to send",
            hint="fix the api_key check first",
        )
    try:
        # No cache: asked of UMLS even when cached, its answer not cached, and a cache folder
        # that cannot be used is the cache check's failure, not this one's; store off: the
        # shared rate state is honoured, not written.
        uts = open_uts(replace(options, offline=False, workers=1), cached=False, store=False)
        try:
            concrete = uts.probe(umls_release, cui, regeneration=True)
        finally:
            uts.close()
    except TempMedBenchError as err:
        failed = _failed("uts", err)
        if current_hint is not None and "--umls-release" in (err.hint or ""):
            failed = replace(failed, hint=current_hint)
        return failed
    shown = umls_release if concrete == umls_release else f"{umls_release} (now {concrete})"
    return Check(
        "uts",
        True,
        f"{redact(options.url)} accepted the key and serves UMLS release {shown} "
        f"(probe: concept {cui})",
    )


def _writable(name: str, folders: list[Path], hint: str) -> Check:
    for folder in folders:
        try:
            check_writable(folder)
        except OSError as err:
            raise BadInputError(
                f"cannot write in {folder}: {os_problem(err)}",
                hint="; ".join(h for h in (os_fix(err), hint) if h),
            ) from None
    return Check(name, True, f"{bounded_list(sorted(set(folders)))} writable")


def check_cache(cache_dir: Path | None) -> Check:
    hint = f"give a writable folder with --cache-dir or {CACHE_DIR_ENV}"
    folder = resolve_cache_dir(cache_dir)
    # A folder on its path that cannot be entered, a name too long: said by the check below.
    with contextlib.suppress(OSError):
        check_cache_root(folder)
    return _writable("cache", [folder], hint)


def check_out(root: Path) -> Check:
    return _writable(
        "out",
        sorted({(root / rel).parent for rel in OUTPUTS}),
        "write the rebuilt files elsewhere with --out DIR, a folder you can write in",
    )


def check_rate_state(base_url: str) -> Check:
    path = shared_state_path(base_url)
    budget = SharedBudget(path, cancel=threading.Event(), warn=False, read_only=True)
    budget.transact(lambda state, now: None)  # the user's own? open, lock and read, if it is there
    problem = budget.problem
    if problem is None and not path.exists():
        try:
            check_writable(path.parent)  # where a run would make it (nothing left behind)
        except OSError as err:
            problem = f"cannot make the shared rate state {path} ({err.strerror or err})"
    if problem is not None:
        raise BadInputError(
            f"{problem}: runs would each keep their own --rate but not share one budget, "
            "so two runs at once could exceed the UTS limit together",
            hint=f"set {STATE_DIR_ENV} to a local folder of your own that you can write in, or "
            "run one at a time",
        )
    return Check("rate_state", True, f"{path} can be locked and shared by runs on this machine")


def check_mrconso(path: Path, table_sabs: list[str]) -> Check:
    inp = sniff_mrconso(path)
    sabs = (
        f"; which of the table's {len(table_sabs)} sources ({bounded_list(table_sabs, limit=5)}) "
        "it holds is known after a full scan, which a run makes and reports"
        if table_sabs
        else ""
    )
    return Check(
        "mrconso", True, f"{path} reads as MRCONSO.RRF ({inp.kind}, first rows checked){sabs}"
    )


def check_meta(meta: Path, index_dir: Path | None) -> Check:
    """Whether each file of ``meta`` is indexed (SPEC 12), and how big; nothing is built, and a
    full release zip's .nlm is not read (which files it holds is said once it is listed)."""
    from tempmedbench_synonyms.mrconso.index import LocalIndex

    folder = resolve_index_dir(index_dir)
    check_own(folder, what="the index folder", elsewhere="--index-dir or TEMPMEDBENCH_INDEX_DIR")
    index = LocalIndex(meta, index_dir=folder)
    parts = index.parts()
    if not parts:  # (MRCONSO is always a part, but a pipe's)
        return Check(
            "meta", True, f"{meta} is a pipe: a command reads it once, into a part never kept; "
            f"nothing is indexed in {folder}",
        )  # fmt: skip
    done = [p for p in parts if p.rows is not None]
    todo = [p for p in parts if p.rows is None]
    said = [f"{p.file} ({plural(p.rows or 0, 'row')}, {format_size(p.bytes)})" for p in done]
    if todo:
        said.append(
            "not yet "
            + ", ".join(f"{p.file} ({format_size(p.bytes)} to read)" for p in todo)
            + ": each is built when a command first needs it"
        )
    what = f"a META of {plural(len(parts), 'file')}"
    if index.unknown():
        what = "a full release zip"
        when = "MRCONSO is first indexed" if todo and todo[0].file == "MRCONSO" else "one is needed"
        said[-1] += f"; the other files its .nlm holds are listed when {when}"
    return Check("meta", True, f"{meta} is {what}, indexed in {folder}: " + "; ".join(said))


def run_checks(
    release_dir: Path | None,
    options: UtsOptions,
    *,
    mrconso: Path | None = None,
    out: Path | None = None,
    say: Callable[[Check], None],
    meta: Path | None = None,
    index_dir: Path | None = None,
) -> None:
    """Every check, in order: ``say`` is called with each as soon as it is made."""
    # The key is read by the api_key check and again by the probe: a warning about it (a key
    # file others can read) is said once.
    secret_log = logging.getLogger("tempmedbench_synonyms.secret")
    said: set[str] = set()

    def once(record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if message in said:
            return False
        said.add(message)
        return True

    secret_log.addFilter(once)
    try:
        say(_made("versions", check_versions))
        opened = None
        if release_dir is not None:
            found, opened = check_release(release_dir)
            say(found)
        key = _made("api_key", lambda: check_api_key(options.api_key_file))
        local = "--mrconso" if mrconso is not None else "--meta" if meta is not None else None
        if local is not None and key.exit_code == ApiKeyMissingError.exit_code:
            # A run from local files sends nothing: no key is needed, so none is missing.
            say(Check("api_key", True, f"none found; none is needed with {local}"))
            say(Check("uts", True, f"not asked: a run with {local} sends no request"))
        else:
            say(key)
            # no release folder (or none that could be read): the key and UTS all the same
            hint = _NO_TABLE_HINT if release_dir is None else _UNREAD_TABLE_HINT
            probe: tuple[str, str, str | None] = ("current", KNOWN_CUI, hint)
            if opened is not None and opened.table.concepts:
                probe = (opened.table.umls_release, probe_cui(opened.table.concepts), None)
            say(_made("uts", lambda: check_uts(options, *probe, key_ok=key.ok)))
        say(_made("cache", lambda: check_cache(options.cache_dir)))
        root = out if out is not None else (opened.folder if opened is not None else None)
        if root is not None:
            say(_made("out", lambda: check_out(root)))
        say(_made("rate_state", lambda: check_rate_state(options.url)))
        if mrconso is not None:
            sabs = sorted({e.sab for e in opened.table.concepts.values()}) if opened else []
            say(_made("mrconso", lambda: check_mrconso(mrconso, sabs)))
        if meta is not None:
            say(_made("meta", lambda: check_meta(meta, index_dir)))
    finally:
        secret_log.removeFilter(once)


def _made(name: str, make: Callable[[], Check]) -> Check:
    """The check ``make`` makes; an uncaught error fails that check, never doctor."""
    try:
        return make()
    except (TempMedBenchError, OSError) as err:
        return _failed(name, err)


def exit_code(checks: list[Check]) -> int:
    return next((c.exit_code for c in checks if not c.ok), 0)


__all__ = ["KNOWN_CUI", "Check", "exit_code", "run_checks"]
