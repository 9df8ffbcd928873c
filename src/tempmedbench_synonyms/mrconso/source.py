"""The MRCONSO.RRF atom source: one streaming pass over the user's own file, answering as UTS would.

Its answers are those SPEC section 3 gives the REST API (tests/test_atom_sources.py runs both);
how the file is read: docs/reference.md, "MRCONSO.RRF as NLM ships it". Rows of a SAB that no
entry names are never read: their atoms could never be candidates.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path

from tempmedbench_synonyms import runtime
from tempmedbench_synonyms.atoms import Atom, AtomQuery, FetchResult, ProgressCallback
from tempmedbench_synonyms.errors import BadInputError
from tempmedbench_synonyms.files import open_regular
from tempmedbench_synonyms.mrconso import rows, scan
from tempmedbench_synonyms.mrconso.forms import MrconsoInput, locate
from tempmedbench_synonyms.mrconso.scan import STREAM_PIECE, Needs, ScanResult

log = logging.getLogger(__name__)

#: Files at least this large are scanned by worker processes, one byte range each.
PARALLEL_MIN_SIZE = 64 << 20
MAX_WORKERS = 4
_WORKER_MODULE = "tempmedbench_synonyms.mrconso.worker"


class MrconsoSource:
    """``progress`` is told (bytes done, bytes in all); ``workers``: the most worker processes a
    plain file is scanned by (default: the usable cores, at most 4)."""

    name = "mrconso"

    def __init__(
        self, path: Path, *, progress: ProgressCallback | None = None, workers: int | None = None
    ) -> None:
        self.path = Path(path)
        self.progress = progress
        self.workers = workers if workers is not None else min(runtime.usable_cores(), MAX_WORKERS)
        #: what was read (set by ``fetch``): the file, its form, zip members, parts
        self.input: MrconsoInput | None = None

    def fetch(self, umls_release: str, probe_cui: str, queries: Sequence[AtomQuery]) -> FetchResult:
        """Scan the file once and answer every query; ``None`` where no row matched."""
        del probe_cui  # a local file has nothing to probe
        inp = locate(self.path)
        self.input = inp
        if umls_release == "current":  # UTS's newest there; here, the release of this file
            if inp.release is None:
                raise BadInputError(
                    "--umls-release current means the release --mrconso comes from, and no "
                    "folder or file name of it says which (as 2025AB/META/MRCONSO.RRF or "
                    "umls-2025AB-metathesaurus-full.zip do)",
                    path=self.path,
                    hint="name the release with --umls-release, such as 2025AB (or leave the "
                    "table's release)",
                )
            umls_release = inp.release
        needs = Needs.build(queries)
        warnings: list[str] = []
        try:
            if inp.kind == "file":  # a plain file: read in byte ranges, by workers too
                result = self._scan_file(inp, needs, warnings)
            else:
                with runtime.fast_thread_switching():  # the reader thread needs the GIL often
                    result = self._scan_stream(inp, needs, warnings)
        except OSError as err:
            raise BadInputError(f"cannot read: {err.strerror or err}", path=self.path) from None
        finally:
            close = getattr(self.progress, "close", None)
            if close is not None:
                close()  # its bar ends before any message, Ctrl-C included
        if result.bad is not None:
            line, problem = result.bad
            raise BadInputError(problem, path=self.path, line=line, hint=scan.DAMAGED_HINT)
        missing = [sab.decode() for sab in needs.sabs if sab not in result.sabs_seen]
        warnings += [
            f"{self.path} has no row of source {sab!r}: is it the MRCONSO.RRF of a release that "
            "includes that source?"
            for sab in missing
        ]
        return FetchResult(
            umls_release=umls_release,
            atoms=answers(queries, result.rows),
            warnings=warnings,
            missing_sources=missing,
            source_details=inp.to_json(),
        )

    def _scan_file(self, inp: MrconsoInput, needs: Needs, warnings: list[str]) -> ScanResult:
        size = inp.size or 0
        with open_regular(inp.path, what="--mrconso") as f:
            head = f.read(rows.SNIFF_BYTES)
        first = rows.sniff(head, at_end=len(head) == size, path=self.path)
        if first:
            warnings.append(rows.bom_note(self.path))
        report = self.progress or (lambda done, total: None)
        report(0, size)
        out = ScanResult()
        if needs.sabs:
            why_not = why_alone(size, self.workers)
            if why_not is None:
                out = scan_ranges(inp.path, size, first, needs, report, self.workers)
            else:
                log.info("scanning %s in this process: %s", self.path, why_not)
                out = scan.scan_range(str(inp.path), 0, size, needs, report, first)
        if out.bad is not None:
            offset, problem = out.bad
            out.bad = (lines_before_offset(inp.path, offset) + 1, problem)
        if out.unended:
            warnings.append(rows.unended_note(self.path))
        report(size, size)
        return out

    def _scan_stream(self, inp: MrconsoInput, needs: Needs, warnings: list[str]) -> ScanResult:
        """A compressed file, parts, a zip or a pipe: one pass, in file order."""
        stop = threading.Event()
        report = self.progress or (lambda done, total: None)
        total = inp.size
        if total is not None:
            report(0, total)
        out = ScanResult()
        lines_before = 0  # in a pipe, which cannot be read again (``lines_before_offset``)
        counting = inp.kind == "pipe"
        done = 0
        blocks = scan.lines_of(inp.blocks(stop), self.path, warnings, inp.parts)
        for done, base, chunk, start, end in blocks:
            if needs.sabs:
                # in pieces: the search holds the GIL, which the decompressing thread needs back
                # for a moment after each block (a whole block at once: 15% slower, measured)
                piece = start
                while piece < end and out.bad is None:
                    cut = chunk.find(b"\n", piece + STREAM_PIECE, end) + 1 or end
                    scan.scan_block(base, chunk, needs, out, piece, cut)
                    piece = cut
            if out.bad is not None:
                offset, problem = out.bad
                stop.set()
                if not counting:
                    lines_before = lines_before_offset(self.path, base + start)
                out.bad = (lines_before + chunk.count(b"\n", start, offset - base) + 1, problem)
                break
            if counting:
                lines_before += chunk.count(b"\n", start, end)
            if total is not None:
                report(min(done, total), total)
        report(done if total is None else total, done if total is None else total)
        return out


def lines_before_offset(path: Path, offset: int) -> int:
    """The line ends before ``offset`` (of the stream, or of a plain file), read again from the
    start: only to name a bad row."""
    again = locate(path)  # its own lists of the members and parts it reads
    n = 0
    with closing(again.blocks(threading.Event())) as blocks:  # closed, its reader thread ends
        for _, base, chunk, start, end in scan.lines_of(blocks, path, [], again.parts):
            if base + end >= offset:
                return n + chunk.count(b"\n", start, max(start, offset - base))
            n += chunk.count(b"\n", start, end)
    return n  # pragma: no cover - the stream changed since it was scanned


def why_alone(size: int, workers: int) -> str | None:
    """Why a plain file of ``size`` bytes is scanned in this process, or ``None``."""
    if size < PARALLEL_MIN_SIZE:
        return f"the file is under {PARALLEL_MIN_SIZE >> 20} MiB"
    if workers < 2:
        return "one core (or one worker) only"
    return runtime.why_no_workers()


def scan_ranges(
    path: Path, size: int, first: int, needs: Needs, report: ProgressCallback, workers: int
) -> ScanResult:
    """``scan_range`` on byte ranges of ``path`` in worker processes (``runtime``, rule 3), each
    taking the next range when done; the results joined in file order.

    If no worker starts or answers before any range is done, this process scans it all.
    """
    n = workers * 4  # more ranges than workers: finer progress, balanced load
    bounds = [size * i // n for i in range(n + 1)]
    ranges = [(a, b) for a, b in itertools.pairwise(bounds) if b > a]  # from 0 to size
    parts: dict[int, ScanResult] = {}
    busy: dict[runtime.Worker, int] = {}  # worker -> start of the range it scans
    done = 0
    with runtime.WorkerGroup() as group:
        try:
            for i in range(min(workers, len(ranges))):
                worker = group.spawn(_WORKER_MODULE)
                worker.send((str(path), needs, first, (scan.BLOCK_SIZE, scan.MAX_LINE)))
                worker.send(ranges[i])
                busy[worker] = ranges[i][0]
        except (OSError, runtime.WorkerLost) as err:
            log.info("scanning %s in this process: no worker process (%s)", path, err)
            return scan.scan_range(str(path), 0, size, needs, report, first)
        log.info("scanning %s with %d worker processes", path, len(busy))
        following = iter(ranges[len(busy) :])
        while busy:
            for worker in group.ready(busy):
                try:
                    kind, value = worker.recv()
                except runtime.WorkerLost:
                    raise BadInputError(
                        "a worker process scanning this file ended without an answer",
                        path=path,
                        hint="run again; if it happens again, pass --mrconso a copy on "
                        "a local disk",
                    ) from None
                if kind == "progress":
                    done += value
                    report(min(done, size), size)
                elif kind == "error":
                    problem, where, line, hint = value
                    raise BadInputError(problem, path=where or path, line=line, hint=hint)
                else:
                    parts[busy.pop(worker)] = value
                    task = next(following, None)
                    worker.send(task)
                    if task is not None:
                        busy[worker] = task[0]
        group.finish()
    out = ScanResult()
    for _, part in sorted(parts.items()):  # in file order
        out.rows.extend(part.rows)
        out.sabs_seen |= part.sabs_seen
        out.unended |= part.unended
        if part.bad is not None and out.bad is None:
            out.bad = part.bad
    return out


def answers(
    queries: Sequence[AtomQuery], matched: Sequence[tuple[int, list[str]]]
) -> dict[AtomQuery, tuple[Atom, ...] | None]:
    """The atoms of each query, as UTS answers the same request; ``None`` where none (404)."""
    found: dict[AtomQuery, list[Atom]] = {q: [] for q in queries}
    by_aui: dict[str, list[AtomQuery]] = {}
    for q in queries:
        if q.route == "aui":
            by_aui.setdefault(q.ident, []).append(q)
    for _, fields in matched:
        atom = rows.atom_from_fields(fields)
        for q in by_aui.get(atom.aui, ()):
            found[q].append(atom)
        if fields[rows.F_LAT] != "ENG" or fields[rows.F_SUPPRESS] != "N":
            continue  # left out by language=ENG, includeObsolete/includeSuppressible=false
        for q in (
            AtomQuery("source", atom.sab, fields[rows.F_CODE]),
            AtomQuery("cui", atom.sab, atom.cui),
        ):
            if q in found:
                found[q].append(atom)
    return {q: (tuple(a) if a else None) for q, a in found.items()}


def sniff_mrconso(path: Path) -> MrconsoInput:
    """Find MRCONSO in ``path`` and check its first rows read as MRCONSO.RRF (``sniff``), else
    BadInputError: a quick look for ``doctor`` and ``--dry-run`` (a pipe is consumed)."""
    inp = locate(path)
    try:
        with closing(inp.blocks(threading.Event())) as blocks:
            next(scan.lines_of(blocks, path, []), None)
    except OSError as err:
        raise BadInputError(f"cannot read: {err.strerror or err}", path=path) from None
    return inp
