"""The MRCONSO.RRF atom source: one streaming pass over the user's own file, keeping what is needed.

A real MRCONSO.RRF is several GB and about 16 million lines, so the file is never loaded whole and
its cost grows with the file, not with the file times the number of concepts:

* The file is read in blocks. For each source abbreviation (SAB) the table names, one C-level
  search (``bytes.find``) finds the rows whose SAB field holds it; every other row is never split
  or decoded. Tables name a handful of SABs, so this is a small constant number of passes over
  memory already read, not one per concept.
* For each such row set look-ups decide whether it can matter: its CODE (route ``source``), its
  CUI (route ``cui``) or its AUI (route ``aui``). Only the rows that pass are decoded, split into
  their 18 fields and checked exactly (SPEC section 3).
* A large file is cut into byte ranges that forked worker processes scan at once; their rows are
  joined in file order, so the outcome never depends on the number of workers.

One shortcut, without effect on the outcome: rows of a SAB that no entry names are skipped, since
their atoms could never be candidates (a candidate's SAB is its entry's SAB).
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from multiprocessing import get_all_start_methods, get_context
from pathlib import Path

from tempmedbench_synonyms.atoms import Atom, AtomQuery, FetchResult, ProgressCallback
from tempmedbench_synonyms.errors import BadInputError

MRCONSO_COLUMNS: tuple[str, ...] = (
    "CUI", "LAT", "TS", "LUI", "STT", "SUI", "ISPREF", "AUI", "SAUI",
    "SCUI", "SDUI", "SAB", "TTY", "CODE", "STR", "SRL", "SUPPRESS", "CVF",
)  # fmt: skip
_COL = {name: i for i, name in enumerate(MRCONSO_COLUMNS)}
_CUI, _LAT, _AUI, _SAB, _TTY, _CODE, _STR, _SUPPRESS = (
    _COL["CUI"], _COL["LAT"], _COL["AUI"], _COL["SAB"], _COL["TTY"], _COL["CODE"], _COL["STR"],
    _COL["SUPPRESS"],
)  # fmt: skip

#: Files at least this large are scanned by worker processes, one byte range each.
PARALLEL_MIN_SIZE = 64 << 20
#: Bytes read at a time: enough that the per-block overhead vanishes, little enough for the CPU
#: cache, so that the search for each SAB rereads the block from there.
BLOCK_SIZE = 1 << 18


def _fields(line: str) -> list[str] | str:
    """The 18 fields of one row without its line end (SPEC 4: a trailing ``|``, CR tolerated),
    or what is wrong with it. The scan and ``split_row`` both read rows through here."""
    if line.endswith("\r"):
        line = line[:-1]
    fields = line.split("|")
    if len(fields) != len(MRCONSO_COLUMNS) + 1 or fields[-1] != "":
        return (
            f"an MRCONSO.RRF row has {len(MRCONSO_COLUMNS)} fields, each followed by '|'; "
            f"this line has {len(fields) - 1 if fields[-1] == '' else len(fields)}"
            f"{'' if fields[-1] == '' else ' and no trailing |'}"
        )
    del fields[-1]
    return fields


def split_row(line: str, *, path: str | Path, line_no: int) -> list[str]:
    """Split one MRCONSO.RRF row (with or without its line end) into its 18 fields."""
    fields = _fields(line[:-1] if line.endswith("\n") else line)
    if isinstance(fields, str):
        raise BadInputError(
            fields,
            path=path,
            line=line_no,
            hint="pass the MRCONSO.RRF of a UMLS release (from MetamorphoSys or the full "
            "release zip), not another RRF file",
        )
    return fields


def atom_from_fields(fields: Sequence[str]) -> Atom:
    """Map an MRCONSO row to an ``Atom`` exactly as SPEC section 3 says (usable = SUPPRESS "N")."""
    return Atom(
        aui=fields[_AUI],
        name=fields[_STR],
        tty=fields[_TTY],
        sab=fields[_SAB],
        language=fields[_LAT],
        cui=fields[_CUI],
        usable=fields[_SUPPRESS] == "N",
    )


@dataclass(frozen=True)
class _Needs:
    """What the scan looks for, as bytes for the fast filter and as str for the exact check."""

    # sab -> (codes wanted by route source, CUIs wanted by route cui, AUIs wanted by route aui)
    filters: dict[bytes, tuple[frozenset[bytes], frozenset[bytes], frozenset[bytes]]]
    source: frozenset[tuple[str, str]]  # (sab, code)
    cui: frozenset[tuple[str, str]]  # (cui, sab)
    aui: frozenset[str]

    @classmethod
    def build(cls, queries: Iterable[AtomQuery]) -> _Needs:
        wanted: dict[str, tuple[set[str], set[str], set[str]]] = {}
        for q in queries:
            codes, cuis, auis = wanted.setdefault(q.sab, (set(), set(), set()))
            {"source": codes, "cui": cuis, "aui": auis}[q.route].add(q.ident)
        filters = {
            sab.encode(): tuple(frozenset(i.encode() for i in s) for s in sets)
            for sab, sets in sorted(wanted.items())
        }
        return cls(
            filters,  # type: ignore[arg-type]
            frozenset((sab, c) for sab, (codes, _, _) in wanted.items() for c in codes),
            frozenset((c, sab) for sab, (_, cuis, _) in wanted.items() for c in cuis),
            frozenset(a for _, (_, _, auis) in wanted.items() for a in auis),
        )


@dataclass
class _ScanResult:
    rows: list[tuple[int, list[str]]] = field(default_factory=list)  # (byte offset, fields)
    bad: tuple[int, str] | None = None  # (byte offset of the line, problem)
    sabs_seen: set[bytes] = field(default_factory=set)


def _blocks(path: Path, start: int, end: int) -> Iterator[tuple[int, bytes]]:
    """Yield (offset, block) covering the lines that start in [start, end) of the file.

    Every block ends at a line end (or the end of the file). A line that starts before ``start``
    belongs to the range before; the line holding byte ``end - 1`` is read to its end. The file
    is read into one reused buffer: a fresh large object a block costs page faults that show in
    the run time, and a block that fits the CPU cache lets the search for each SAB reread it there.
    """
    buf = bytearray(BLOCK_SIZE)
    view = memoryview(buf)
    try:
        with open(path, "rb") as f:
            offset = start  # file offset of buf[0]
            if start > 0:
                f.seek(start - 1)
                if f.read(1) != b"\n":
                    offset += len(f.readline())
            kept = 0  # bytes of a partial line carried at the start of buf
            while offset < end:
                n = f.readinto(view[kept:])
                filled = kept + n
                if n == 0:
                    if kept:
                        yield offset, bytes(view[:kept])
                    return
                limit = end - offset  # our lines start before buf[limit]
                if filled >= limit:
                    last = buf.find(b"\n", limit - 1, filled)
                    if last != -1:
                        yield offset, bytes(view[: last + 1])
                        return
                cut = buf.rfind(b"\n", 0, filled) + 1
                if cut == 0:  # a line longer than the buffer: grow it
                    view.release()
                    buf.extend(bytes(len(buf)))
                    view = memoryview(buf)
                    kept = filled
                    continue
                yield offset, bytes(view[:cut])
                buf[: filled - cut] = view[cut:filled]
                offset += cut
                kept = filled - cut
    finally:
        view.release()


def _scan_block(base: int, chunk: bytes, needs: _Needs, out: _ScanResult) -> None:
    """Find the rows of one block that can matter, then parse and check those exactly."""
    for sab, (codes, cuis, auis) in needs.filters.items():
        tok = b"|" + sab + b"|"
        if tok not in chunk:
            continue
        out.sabs_seen.add(sab)
        if auis or (codes and cuis):
            starts = _rows_general(chunk, tok, codes, cuis, auis)
        elif codes:
            starts = _rows_by_code(chunk, tok, codes)
        else:
            starts = _rows_by_cui(chunk, tok, cuis)
        sab_text = sab.decode()
        last = -1
        for start in starts:
            if start == last:  # the SAB token may stand twice in one row
                continue
            last = start
            end = chunk.find(b"\n", start)
            line = chunk[start : end if end != -1 else len(chunk)]
            if _check_row(base + start, line, sab_text, needs, out):
                return


# The three loops below are the hot path: one per kind of key, so that a row costs only the
# look-ups its SAB needs. Each yields the start offset of every row that may match. After each
# occurrence the search goes on from the token's closing '|', which may open the next one
# ("|SAB|SAB|" when a row's SDUI is the SAB itself).


def _rows_by_code(chunk: bytes, tok: bytes, codes: frozenset[bytes]) -> list[int]:
    find, rfind, skip = chunk.find, chunk.rfind, len(tok) - 1
    found = []
    pos = find(tok)
    while pos != -1:
        a = find(b"|", pos + skip + 1)  # end of TTY
        b = find(b"|", a + 1)  # end of CODE
        if a != -1 and b != -1 and chunk[a + 1 : b] in codes:
            found.append(rfind(b"\n", 0, pos) + 1)
        pos = find(tok, pos + skip)
    return found


def _rows_by_cui(chunk: bytes, tok: bytes, cuis: frozenset[bytes]) -> list[int]:
    find, rfind, skip = chunk.find, chunk.rfind, len(tok) - 1
    found = []
    pos = find(tok)
    while pos != -1:
        start = rfind(b"\n", 0, pos) + 1
        if chunk[start : start + 8] in cuis:
            found.append(start)
        pos = find(tok, pos + skip)
    return found


def _rows_general(
    chunk: bytes, tok: bytes, codes: frozenset[bytes], cuis: frozenset[bytes],
    auis: frozenset[bytes],
) -> list[int]:  # fmt: skip
    find, rfind, skip = chunk.find, chunk.rfind, len(tok) - 1
    found = []
    pos = find(tok)
    while pos != -1:
        start = rfind(b"\n", 0, pos) + 1
        keep = chunk[start : start + 8] in cuis
        if auis and not keep:
            head = chunk[start:pos].split(b"|", 8)  # CUI|LAT|TS|LUI|STT|SUI|ISPREF|AUI|...
            keep = len(head) > 7 and head[7] in auis
        if codes and not keep:
            a = find(b"|", pos + skip + 1)
            b = find(b"|", a + 1)
            keep = a != -1 and b != -1 and chunk[a + 1 : b] in codes
        if keep:
            found.append(start)
        pos = find(tok, pos + skip)
    return found


def _check_row(offset: int, raw: bytes, sab: str, needs: _Needs, out: _ScanResult) -> bool:
    """Parse one candidate row exactly; record it if it answers a query. True on a bad row."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        out.bad = (offset, f"not valid UTF-8 ({err.reason} at byte {err.start} of the line)")
        return True
    fields = _fields(line)
    if isinstance(fields, str):
        out.bad = (offset, fields)
        return True
    if fields[_SAB] != sab:
        return False  # the token stood in another field
    if (
        (sab, fields[_CODE]) in needs.source
        or (fields[_CUI], sab) in needs.cui
        or fields[_AUI] in needs.aui
    ):
        out.rows.append((offset, fields))
    return False


def _scan_range(
    path: str, start: int, end: int, needs: _Needs, report: ProgressCallback | None = None
) -> _ScanResult:
    """Scan the lines that start in [start, end); module level so that a worker can run it."""
    out = _ScanResult()
    for base, chunk in _blocks(Path(path), start, end):
        _scan_block(base, chunk, needs, out)
        if report is not None:
            report(base + len(chunk), end)
        if out.bad is not None:
            break
    return out


def _fork_is_safe() -> bool:
    """Workers are forked only where fork exists and no other thread runs.

    A forked child inherits every lock as it was; with a single thread none can be held. Spawn is
    not used: it re-imports the caller's main module, which breaks scripts without a
    ``if __name__ == "__main__"`` guard.
    """
    return "fork" in get_all_start_methods() and threading.active_count() == 1


def _line_number(path: Path, offset: int) -> int:
    """1-based line number of the line starting at ``offset`` (only on the error path)."""
    n = 1
    with open(path, "rb") as f:
        remaining = offset
        while remaining > 0:
            block = f.read(min(BLOCK_SIZE, remaining))
            if not block:
                break
            n += block.count(b"\n")
            remaining -= len(block)
    return n


class MrconsoSource:
    """Answer atom queries from a local MRCONSO.RRF, in one streaming pass."""

    name = "mrconso"

    def __init__(
        self, path: Path, *, progress: ProgressCallback | None = None, workers: int | None = None
    ) -> None:
        self.path = Path(path)
        self.progress = progress
        self.workers = workers if workers is not None else min(os.cpu_count() or 1, 4)

    def fetch(self, release: str, probe_cui: str, queries: Sequence[AtomQuery]) -> FetchResult:
        """Scan the file once and answer every query; ``None`` where no row matched."""
        del probe_cui  # a local file has nothing to probe
        if release == "current":
            raise BadInputError(
                "--umls-release current needs the UMLS REST API; with --mrconso, name the "
                "release your MRCONSO.RRF comes from (or leave the table's release)",
            )
        size = self._size()
        needs = _Needs.build(queries)
        try:
            result = self._scan(size, needs)
        except OSError as err:
            raise BadInputError(f"cannot read: {err.strerror or err}", path=self.path) from None
        if result.bad is not None:
            offset, problem = result.bad
            raise BadInputError(
                problem,
                path=self.path,
                line=_line_number(self.path, offset),
                hint="the file looks damaged or is not MRCONSO.RRF; extract it again",
            )
        rows, seen = result.rows, result.sabs_seen
        answers: dict[AtomQuery, list[Atom]] = {q: [] for q in queries}
        for _, fields in rows:
            atom = atom_from_fields(fields)
            for q in (
                AtomQuery("source", atom.sab, fields[_CODE]),
                AtomQuery("cui", atom.sab, atom.cui),
                AtomQuery("aui", atom.sab, atom.aui),
            ):
                if q in answers:
                    answers[q].append(atom)
        warnings = [
            f"{self.path} has no row of source {sab.decode()!r}: is it the MRCONSO.RRF of a "
            "release that includes that source?"
            for sab in needs.filters
            if sab not in seen
        ]
        return FetchResult(
            umls_release=release,
            atoms={q: (tuple(a) if a else None) for q, a in answers.items()},
            warnings=warnings,
        )

    def _size(self) -> int:
        try:
            if not self.path.is_file():
                raise BadInputError(
                    "no such file" if not self.path.exists() else "not a file",
                    path=self.path,
                    hint="--mrconso takes the path of MRCONSO.RRF (in the META folder of a "
                    "UMLS release)",
                )
            return self.path.stat().st_size
        except OSError as err:
            raise BadInputError(f"cannot read: {err.strerror}", path=self.path) from None

    def _scan(self, size: int, needs: _Needs) -> _ScanResult:
        report = self.progress or (lambda done, total: None)
        report(0, size)
        if needs.filters and self.workers > 1 and size >= PARALLEL_MIN_SIZE and _fork_is_safe():
            out = self._scan_parallel(size, needs, report)
        elif needs.filters:
            out = _scan_range(str(self.path), 0, size, needs, report)
        else:
            out = _ScanResult()
        report(size, size)
        return out

    def _scan_parallel(self, size: int, needs: _Needs, report: ProgressCallback) -> _ScanResult:
        """Cut the file into byte ranges, scan them in worker processes, join in file order."""
        n = self.workers * 4  # more ranges than workers: finer progress, balanced load
        bounds = [size * i // n for i in range(n + 1)]
        parts: dict[int, _ScanResult] = {}
        done = 0
        with ProcessPoolExecutor(self.workers, mp_context=get_context("fork")) as pool:
            futures = {
                pool.submit(_scan_range, str(self.path), a, b, needs): (a, b)
                for a, b in itertools.pairwise(bounds)
                if b > a
            }
            for future in as_completed(futures):
                a, b = futures[future]
                parts[a] = future.result()
                done += b - a
                report(done, size)
        out = _ScanResult()
        for a in sorted(parts):
            part = parts[a]
            out.rows.extend(part.rows)
            out.sabs_seen |= part.sabs_seen
            if part.bad is not None and out.bad is None:
                out.bad = part.bad
        return out
