"""An International Edition RF2 snapshot (folder or zip) as the same lean index as the GPS.

What is read, kept and refused: docs/reference.md, ``gps validate``. Only the latest version of
a component counts, and only the International Edition's modules; the versions are sorted out
only for an identifier that repeats (``_IdKeys``), so a usual snapshot is read once.
"""

from __future__ import annotations

import logging
import re
import zipfile
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from functools import partial
from operator import itemgetter
from pathlib import Path
from typing import IO, TypeVar

from tempmedbench_synonyms.errors import BadInputError, bounded_list
from tempmedbench_synonyms.files import open_regular, sha256_file
from tempmedbench_synonyms.snomed import tables
from tempmedbench_synonyms.snomed.concepts import ConceptIndex, SourceFile, encode_row
from tempmedbench_synonyms.zips import reading_member

log = logging.getLogger(__name__)

# RF2 metadata concepts: description types, the US English language refset, "preferred". The US
# refset only: reading the GB one (900000000000508004) too gives "Paracetamol" for "Acetaminophen".
FSN_TYPE = "900000000000003001"
SYNONYM_TYPE = "900000000000013009"
US_ENGLISH_REFSET = "900000000000509007"
GB_ENGLISH_REFSET = "900000000000508004"
PREFERRED = "900000000000548007"
# The modules of the International Edition: "SNOMED CT core" and "SNOMED CT model component". The
# GPS is drawn from these; an extension's rows (e.g. the US module 731000124108 of a US Edition
# snapshot) are skipped, so that an extension concept is absent from the index as from the GPS.
CORE_MODULE = "900000000000207008"
MODEL_COMPONENT_MODULE = "900000000000012004"
INTERNATIONAL_MODULES = frozenset({CORE_MODULE, MODEL_COMPONENT_MODULE})

# Each list starts with the component identifier and effectiveTime: the row-version step needs them
# there (see _read_latest).
CONCEPT_COLUMNS = ("id", "effectiveTime", "active", "moduleId")
DESCRIPTION_COLUMNS = (*CONCEPT_COLUMNS, "conceptId", "typeId", "term")
LANGUAGE_COLUMNS = (*CONCEPT_COLUMNS, "refsetId", "referencedComponentId", "acceptabilityId")

_RF2_PATTERNS = {
    "concept": re.compile(r"^sct2_Concept_Snapshot[-_].*\.txt$"),
    "description": re.compile(r"^sct2_Description_Snapshot[-_].*\.txt$"),
    "language": re.compile(r"^der2_cRefset_LanguageSnapshot[-_].*\.txt$"),
}
# An International Edition RF2 snapshot file is below 1 GB (the language refset, ~3.8 million
# rows): 4 GiB (SPEC section 8), checked as for the GPS: the size a zip member declares, and the
# bytes it really gives.
RF2_MAX_BYTES = 4 << 30

_T = TypeVar("_T")


@dataclass
class _Source:
    """The RF2 files found anywhere under the folder ``path``, or inside the zip ``zf`` at it."""

    path: Path
    names: list[str]
    zf: zipfile.ZipFile | None = None

    def where(self, name: str) -> str:
        return str(self.path / name) if self.zf is None else f"{self.path}!{name}"

    def open_bytes(self, name: str) -> IO[bytes]:
        if self.zf is None:
            raw: IO[bytes] = open_regular(self.path / name, what="the RF2 file")
        else:
            tables.check_declared_size(self.path, self.zf, name, RF2_MAX_BYTES)
            raw = self.zf.open(name)
        return tables.bounded(raw, self.where(name), "an RF2 file", RF2_MAX_BYTES)

    def reading(self, name: str) -> AbstractContextManager[None]:
        if self.zf is None:
            return nullcontext()
        return reading_member(self.path, self.zf, name, hint=tables.ZIP_HINT)


#: One RF2 row: the file, the line, and the fields of the columns asked for, in their order.
_Row = tuple[str, int, tuple[str, ...]]

_BUCKETS = 256


class _IdKeys:
    """A 64-bit hash of every component identifier read, to find the repeated ones afterwards.

    8 bytes a row in 256 arrays instead of a set (~100 bytes a row); a collision only sends two
    identifiers to :func:`_deduplicated`'s exact path.
    """

    def __init__(self) -> None:
        self.buckets = [array("q") for _ in range(_BUCKETS)]
        self.add = [b.append for b in self.buckets]

    def repeated(self) -> set[int]:
        out: set[int] = set()
        for bucket in self.buckets:
            if len(set(bucket)) != len(bucket):
                out.update(k for k, n in Counter(bucket).items() if n > 1)
        return out


def _rf2_rows(
    src: _Source,
    names: list[str],
    columns: tuple[str, ...],
    notes: list[str],
    keys: _IdKeys,
) -> Iterator[_Row]:
    """Every row of the RF2 files ``names`` as the fields of ``columns``, checked for width; each
    identifier's hash goes into ``keys``. Hot (~6 million rows): every name is local."""
    hash_ = hash  # looked up once (a test replaces the module's ``hash`` to force collisions)
    add = keys.add
    mask = _BUCKETS - 1
    for name in names:
        where = src.where(name)
        with src.reading(name):
            try:
                with src.open_bytes(name) as raw, tables.text_stream(raw) as stream:
                    header = tables.parse_header(stream.readline(), where, columns, notes)
                    pick = itemgetter(*(header.index[c] for c in columns))
                    widths = header.widths
                    width = len(header.names)
                    rows = enumerate(stream, start=2)
                    for lineno, line in rows:
                        parts = line.rstrip("\r\n").split("\t")
                        if len(parts) != width and len(parts) not in widths:
                            if parts == [""]:
                                tables.trailing_blank_lines(rows, where, lineno, notes)
                                break
                            raise tables.bad_width(where, lineno, parts, header)
                        fields = pick(parts)
                        k = hash_(fields[0])
                        add[k & mask](k)
                        yield where, lineno, fields
            except UnicodeDecodeError:
                raise tables.not_utf8_error(where, partial(src.open_bytes, name)) from None


def _deduplicated(
    src: _Source,
    names: list[str],
    columns: tuple[str, ...],
    repeated: set[int],
    stats: dict[str, int],
) -> Iterator[_Row]:
    """The rows of ``names`` with only the latest version (greatest effectiveTime) of each
    repeated identifier, in line order; two versions with one effectiveTime are refused."""
    best: dict[str, _Row] = {}
    repeated_ids: set[str] = set()  # the identifiers really listed twice, not just hash twins
    held = 0
    # Hashed again into a throwaway _IdKeys: this path is for the rare snapshot with repeats.
    for row in _rf2_rows(src, names, columns, [], _IdKeys()):
        where, lineno, fields = row
        cid = fields[0]
        if hash(cid) not in repeated:
            yield row
            continue
        held += 1
        et = fields[1]
        if len(et) != 8 or not (et.isascii() and et.isdigit()):
            raise BadInputError(
                f"effectiveTime is {et!r}; it must be a date of 8 digits (YYYYMMDD)",
                path=where,
                line=lineno,
            )
        old = best.get(cid)
        if old is not None:
            repeated_ids.add(cid)
        if old is None or et > old[2][1]:
            best[cid] = row
        elif et == old[2][1] and fields != old[2]:
            raise BadInputError(
                f"component {cid} has two different rows with effectiveTime {et} "
                f"(the other on line {old[1]} of {old[0]})",
                path=where,
                line=lineno,
                hint="a snapshot holds one version of a component per effectiveTime; "
                "use one complete International Edition snapshot",
            )
    stats["components"] = len(repeated_ids)
    stats["ignored"] = held - len(best)
    order = {n: i for i, n in enumerate(src.where(n) for n in names)}
    yield from sorted(best.values(), key=lambda r: (order[r[0]], r[1]))


def _read_latest(
    src: _Source,
    names: list[str],
    columns: tuple[str, ...],
    notes: list[str],
    consume: Callable[[Iterable[_Row], Counter[str]], _T],
) -> _T:
    """``consume`` the rows of ``names`` (and the count of other modules' rows, skipped), the
    latest version of each component only, in one pass while hashing identifiers; only if one
    repeats are the rows consumed again through :func:`_deduplicated` (a first-pass error may come
    from an older version: it stands only if none repeats)."""
    keys = _IdKeys()
    rows = _rf2_rows(src, names, columns, notes, keys)
    skipped: Counter[str] = Counter()
    failure: BadInputError | None = None
    try:
        result = consume(rows, skipped)
    except BadInputError as err:
        failure = err
        for _ in rows:  # the rest of the identifiers: a repeated one may explain the error
            pass
    repeated = keys.repeated()
    del keys
    files = bounded_list(src.where(n) for n in names)
    if repeated:
        if failure is None:
            del result
        stats: dict[str, int] = {}
        skipped = Counter()
        result = consume(_deduplicated(src, names, columns, repeated, stats), skipped)
        if stats["components"]:
            notes.append(
                f"{files}: {stats['components']} component(s) listed more than once; the row with "
                f"the latest effectiveTime of each was used ({stats['ignored']} other row(s) "
                "ignored)"
            )
    elif failure is not None:
        raise failure
    if skipped:
        listed = bounded_list(f"{m} ({n})" for m, n in sorted(skipped.items()))
        notes.append(
            f"{files}: {sum(skipped.values())} row(s) of modules other than the International "
            f"Edition's skipped: {listed}"
        )
    return result


def _bad_active(value: str, where: str, line: int) -> BadInputError:
    return BadInputError(f"active is {value!r}; it must be 1 or 0", path=where, line=line)


def is_concept_file(name: str) -> bool:
    return _RF2_PATTERNS["concept"].match(tables.basename(name)) is not None


def load_rf2(
    path: Path, zf: zipfile.ZipFile | None = None, names: list[str] | None = None
) -> ConceptIndex:
    """The RF2 snapshot files anywhere under the folder ``path``, or among ``names`` in ``zf``."""
    if zf is None:
        names = [p.relative_to(path).as_posix() for p in path.rglob("*.txt") if p.is_file()]
    src = _Source(path, sorted(names or ()), zf)
    found = {
        k: [n for n in src.names if pattern.match(tables.basename(n))]
        for k, pattern in _RF2_PATTERNS.items()
    }
    missing = [k for k, v in found.items() if not v]
    if missing:
        gps_hint = any("gpsrelease" in tables.basename(n).lower() for n in src.names)
        raise BadInputError(
            "no RF2 " + ", ".join(missing) + " snapshot file "
            "(sct2_Concept_Snapshot*.txt, sct2_Description_Snapshot*.txt, "
            "der2_cRefset_LanguageSnapshot*.txt)",
            path=path,
            hint="pass the GPS .txt file itself, not its folder"
            if gps_hint
            else "pass the root of an International Edition RF2 release (with its Snapshot folder)",
        )
    if len(found["concept"]) > 1:
        raise BadInputError(
            f"more than one Concept snapshot file: {bounded_list(found['concept'])}",
            path=path,
            hint="pass the folder of one release only",
        )
    notes: list[str] = []
    concept_file = found["concept"][0]
    concepts, inactive = _read_concepts(src, concept_file, notes)
    if not concepts:
        raise tables.no_concepts(
            src.where(concept_file),
            "none of the International Edition's modules "
            f"({CORE_MODULE}, {MODEL_COMPONENT_MODULE})",
            "pass an International Edition RF2 snapshot (or an edition that includes it)",
        )
    us_preferred = _read_us_preferred(src, found["language"], notes)
    _read_descriptions(src, found["description"], concepts, us_preferred, notes)
    del us_preferred
    _fill_rows(concepts, inactive, src.where(concept_file), notes)
    every_file = [f for v in found.values() for f in v]
    dates = {m.group(1) for n in every_file if (m := tables.NAME_DATE.search(n))}
    date = tables.release_date(src.where(concept_file), notes, concept_file, path.name)
    if len(dates) > 1:
        notes.append(f"the RF2 files carry different dates: {bounded_list(sorted(dates))}")
    notes = _one_crlf_note(notes)
    if zf is None:
        files = [SourceFile(src.where(n), sha256_file(path / n)) for n in every_file]
        return ConceptIndex(concepts, "rf2-folder", str(path), date, None, files, notes)
    digest = sha256_file(path)
    # The zip's own hash is reported; hashing each member again would double the read time.
    files = [SourceFile(str(path), digest), *(SourceFile(str(path), None, n) for n in every_file)]
    return ConceptIndex(concepts, "rf2-zip", str(path), date, digest, files, notes)


def _one_crlf_note(notes: list[str]) -> list[str]:
    """The per-file "CRLF line ends" notes said once (CRLF is RF2's own line end)."""
    crlf = [n for n in notes if n.endswith(tables.CRLF_NOTE)]
    if len(crlf) < 2:
        return notes
    one = f"{len(crlf)} RF2 files: CRLF line ends (RF2's own)"
    first = notes.index(crlf[0])
    kept = [n for n in notes if not n.endswith(tables.CRLF_NOTE)]
    kept.insert(first, one)
    return kept


def _read_us_preferred(src: _Source, names: list[str], notes: list[str]) -> set[str]:
    """Description ids the US English refset marks preferred (latest, International, active)."""

    def consume(rows: Iterable[_Row], skipped: Counter[str]) -> tuple[set[str], int]:
        preferred: set[str] = set()
        gb_rows = 0
        intl, us, gb, pref = INTERNATIONAL_MODULES, US_ENGLISH_REFSET, GB_ENGLISH_REFSET, PREFERRED
        for where, lineno, (_, _, active, module, refset, did, acceptability) in rows:
            if active != "1" and active != "0":
                raise _bad_active(active, where, lineno)
            if module not in intl:
                skipped[module] += 1
            elif refset != us:
                gb_rows += refset == gb
            elif active == "1" and acceptability == pref:
                preferred.add(did)
        return preferred, gb_rows

    preferred, gb_rows = _read_latest(src, names, LANGUAGE_COLUMNS, notes, consume)
    log.info("US English preferred descriptions: %d (GB rows skipped: %d)", len(preferred), gb_rows)
    return preferred


def _read_descriptions(
    src: _Source,
    names: list[str],
    concepts: dict[str, str],
    us_preferred: set[str],
    notes: list[str],
) -> None:
    """Put each concept's active FSN and US preferred synonym in ``concepts`` as
    ``"<FSN id>\\t<FSN>\\t<PT id>\\t<PT>"`` ("" for a missing part): one string a concept,
    the cheapest in memory for ~760,000 descriptions."""

    def consume(rows: Iterable[_Row], skipped: Counter[str]) -> set[str]:
        for cid in concepts:  # a second pass (after repeated rows were found) starts afresh
            concepts[cid] = ""
        get = concepts.get
        two_fsns: set[str] = set()
        intl, fsn_type, synonym_type = INTERNATIONAL_MODULES, FSN_TYPE, SYNONYM_TYPE
        for where, lineno, (did, _, active, module, cid, type_id, term) in rows:
            if active != "1" and active != "0":
                raise _bad_active(active, where, lineno)
            if module not in intl:
                skipped[module] += 1
                continue
            if active == "0":
                continue
            is_fsn = type_id == fsn_type
            if not is_fsn and (type_id != synonym_type or did not in us_preferred):
                continue  # another type, or a synonym the US English refset does not prefer
            old = get(cid)
            if old is None:
                continue  # not a concept of the index (another module's, or none at all)
            fsn_did, fsn, pt_did, pt = old.split("\t") if old else ("", "", "", "")
            old_did = fsn_did if is_fsn else pt_did
            if old_did:
                if is_fsn:
                    # Two active FSNs (seen in real snapshots): decided by a rule, so that one
                    # concept cannot stop the load; the notes name the concepts.
                    two_fsns.add(cid)
                    if _fsn_rank(did, us_preferred) > _fsn_rank(old_did, us_preferred):
                        continue
                else:
                    # Two US preferred synonyms: the refset itself is broken, and guessing would
                    # put a wrong term in the report.
                    raise BadInputError(
                        f"concept {cid} has two active US preferred synonyms: descriptions "
                        f"{old_did} and {did}",
                        path=where,
                        line=lineno,
                        hint="use one complete International Edition snapshot",
                    )
            # An existing key keeps its string object: only the value is replaced.
            if is_fsn:
                concepts[cid] = f"{did}\t{term}\t{pt_did}\t{pt}"
            else:
                concepts[cid] = f"{fsn_did}\t{fsn}\t{did}\t{term}"
        return two_fsns

    two_fsns = _read_latest(src, names, DESCRIPTION_COLUMNS, notes, consume)
    if two_fsns:
        ids = sorted(two_fsns, key=_id_order)
        notes.append(
            f"{bounded_list(src.where(n) for n in names)}: {len(two_fsns)} concept(s) have more "
            "than one active FSN; the one the US English refset prefers was used, else the one "
            f"with the smallest description id: {bounded_list(ids)}"
        )


def _id_order(sctid: str) -> tuple[int, str]:
    """SNOMED CT identifiers (digits, no leading zero) in numeric order, without int()."""
    return len(sctid), sctid


def _fsn_rank(did: str, us_preferred: set[str]) -> tuple[bool, int, str]:
    """Which of two active FSNs wins: US English preferred first, then the smallest id."""
    return did not in us_preferred, len(did), did


def _read_concepts(src: _Source, name: str, notes: list[str]) -> tuple[dict[str, str], set[str]]:
    """The index's concepts (latest, International modules) as identifier -> "" (filled in
    place by :func:`_read_descriptions` and :func:`_fill_rows`), and the inactive ones."""

    def consume(rows: Iterable[_Row], skipped: Counter[str]) -> tuple[dict[str, str], set[str]]:
        concepts: dict[str, str] = {}
        inactive: set[str] = set()
        for where, lineno, (cid, _, active, module) in rows:
            if cid == "":
                raise BadInputError("the concept identifier is empty", path=where, line=lineno)
            if active != "1" and active != "0":
                raise _bad_active(active, where, lineno)
            if module not in INTERNATIONAL_MODULES:
                skipped[module] += 1
                continue
            concepts[cid] = ""
            if active == "0":
                inactive.add(cid)
        return concepts, inactive

    return _read_latest(src, [name], CONCEPT_COLUMNS, notes, consume)


def _fill_rows(concepts: dict[str, str], inactive: set[str], where: str, notes: list[str]) -> None:
    """Turn each value of ``concepts`` into its index row (status, FSN, PT), in place."""
    no_fsn = 0
    for cid in concepts:
        terms = concepts[cid]
        if terms:
            _, fsn, _, pt = terms.split("\t")
        else:
            fsn = pt = ""
        no_fsn += not fsn
        concepts[cid] = encode_row(fsn, pt, cid not in inactive)
    if no_fsn:
        notes.append(f"{where}: {no_fsn} concept(s) without an active FSN")
