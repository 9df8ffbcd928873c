"""The MRCONSO.RRF atom source: one streaming pass over the user's own file, keeping what is needed.

A real MRCONSO.RRF is several GB and about 16 million lines, so it is never loaded whole, and its
cost grows with the file, not with the file times the number of concepts. It is read as NLM ships
it (``umls_files``: plain, gzip, split parts, zips), and refused at once when its first rows are
not MRCONSO rows (``sniff``). In each block of whole lines:

* One search with one regular expression finds every row whose SAB field names a source some
  query asks for, and hands back its CUI, AUI and CODE (``_row_pattern``). Its cost does not
  grow with the number of SABs: each row's fields are skipped once, and its SAB field is read
  once against a trie of the SABs named. Rows of other sources are never split or decoded.
* C-level set tests meet those CUIs, AUIs and codes with the ones wanted, whatever their route.
* Only the rows that pass are decoded, split into their 18 fields and checked exactly (SPEC
  section 3), once each, in file order.

A plain file of some size is cut into byte ranges that forked worker processes scan at once;
their rows are joined in file order, so the outcome never depends on the number of workers. The
workers ignore Ctrl-C: the main process ends them (SIGKILL) as soon as it is interrupted.
Compressed forms are read by a thread that decompresses (zlib releases the GIL) while this one
scans.

One shortcut, without effect on the outcome: rows of a SAB that no entry names are skipped, since
their atoms could never be candidates (a candidate's SAB is its entry's SAB).
"""

from __future__ import annotations

import io
import itertools
import os
import re
import signal
import sys
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing import get_all_start_methods, get_context
from multiprocessing.connection import Connection, wait
from operator import itemgetter
from pathlib import Path
from typing import Any, cast

from tempmedbench_synonyms.atoms import Atom, AtomQuery, FetchResult, ProgressCallback
from tempmedbench_synonyms.errors import BadInputError
from tempmedbench_synonyms.files import open_regular
from tempmedbench_synonyms.progress import close_progress
from tempmedbench_synonyms.umls_files import MrconsoInput, locate_mrconso

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
#: cache, so that the search and the copies of its rows find the block there.
BLOCK_SIZE = 1 << 18
#: Bytes of a decompressed stream searched at a time (see ``_scan_blocks``).
STREAM_PIECE = 1 << 17
#: The longest line accepted (a real row is under 4 kB): a longer one is not MRCONSO, and
#: refusing it bounds the memory a file with no line end could take.
MAX_LINE = 1 << 20
#: How much of the start of the file is sniffed, and how many of its rows are checked.
SNIFF_BYTES = 1 << 16
SNIFF_ROWS = 5
_BOM = b"\xef\xbb\xbf"
_CUI_SHAPE = re.compile(r"C\d{7}")
_NOT_MRCONSO_HINT = (
    "--mrconso takes MRCONSO.RRF (the concept names of the UMLS Metathesaurus, in the META "
    "folder of a release), as NLM ships it; not another RRF file, a README or an archive of "
    "something else"
)


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


def _excerpt(text: str, at_most: int = 60) -> str:
    """A bounded, printable quote of what was found."""
    shown = repr(text[:at_most])
    return shown + ("..." if len(text) > at_most else "")


def sniff(head: bytes, *, at_end: bool, path: str | Path) -> int:
    """Check that ``head``, the start of a file, reads as MRCONSO.RRF; bad input naming what it
    found otherwise. Returns the number of bytes to skip (3 for a UTF-8 BOM, else 0).

    ``at_end``: ``head`` is the whole file (so its last line may lack its line end)."""

    def bad(problem: str, line: int | None = None) -> BadInputError:
        return BadInputError(
            f"not an MRCONSO.RRF file: {problem}", path=path, line=line, hint=_NOT_MRCONSO_HINT
        )

    skip = len(_BOM) if head.startswith(_BOM) else 0
    body = head[skip:]
    if not body.strip():
        raise bad("it is empty" if not head else "it holds no row, only blank space")
    nul = body.find(b"\0")
    if nul != -1:
        raise bad(f"it is binary (a NUL byte at byte {nul + skip})")
    lines = body.split(b"\n", SNIFF_ROWS)
    if len(lines) == 1 and not at_end:
        raise bad(f"its first line is longer than {len(body):,} bytes with no line end")
    rows = lines[:SNIFF_ROWS] if len(lines) > SNIFF_ROWS or at_end else lines[:-1]
    for n, raw in enumerate(rows, start=1):
        if not raw and n > 1:
            break  # the end of a short file
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            raise bad(f"it is not UTF-8 text (byte 0x{raw[err.start]:02x})", n) from None
        fields = _fields(line)
        if isinstance(fields, str):
            raise bad(f"{fields}: {_excerpt(line)}", n)
        if not _CUI_SHAPE.fullmatch(fields[_CUI]):
            raise bad(f"its first field {_excerpt(fields[_CUI])} is not a CUI (C and 7 digits)", n)
    return skip


def _trie(words: Iterable[bytes]) -> bytes:
    """A regular expression that matches exactly ``words``, shaped as a trie: at each character it
    weighs only the words that still fit, so the test of a SAB field reads that field once,
    however many SABs are named (an alternation would try them one by one). Built without
    recursion, children before parents."""
    end = b""
    tree: dict[bytes, Any] = {}
    for word in words:
        node = tree
        for i in range(len(word)):
            node = node.setdefault(word[i : i + 1], {})
        node[end] = {}
    if not tree:
        return b"(?!)"
    built: dict[int, bytes] = {}
    todo: list[tuple[dict[bytes, Any], bool]] = [(tree, False)]
    while todo:
        node, ready = todo.pop()
        children = sorted((ch, sub) for ch, sub in node.items() if ch != end)
        if not ready:
            todo.append((node, True))
            todo.extend((sub, False) for _, sub in children)
            continue
        alts = [re.escape(ch) + built[id(sub)] for ch, sub in children]
        body = b"" if not alts else alts[0] if len(alts) == 1 else b"(?:" + b"|".join(alts) + b")"
        built[id(node)] = b"(?:" + body + b")?" if alts and end in node else body
    return built[id(tree)]


def _row_pattern(sabs: Iterable[bytes], *, after_line_end: bool) -> re.Pattern[bytes]:
    """A row whose SAB field (the 12th) is one of ``sabs``; groups: the whole line, its CUI, AUI,
    SAB and CODE ("" when the row ends before it: a damaged row, which ``_check_row`` names if
    it is needed).

    Fields are skipped by a possessive ``[^|]*+``: no backtracking, and 2.3x faster than a class
    that also stops at a line end (measured). A damaged row with fewer than 14 fields can then
    run on into the next line, which ``_scan_block`` checks for. The first field (a CUI: 8
    bytes) is looked for in the first 64 bytes only, so that a stretch of lines without '|'
    (blank lines, text) is passed at once instead of searched to its end from each of its lines
    (quadratic: minutes for a few MB); a row whose first field is longer is no row."""
    skip = rb"[^|]*+\|"
    row = (
        rb"(([^|]{0,64}+)\|" + skip * 6 + rb"([^|]*+)\|" + skip * 3
        + rb"(" + _trie(sabs) + rb")\|(?:[^|]*+\|([^|]*+)\|)?[^\n]*+)"
    )  # fmt: skip
    return re.compile(rb"\n" + row if after_line_end else row)


#: The SAB column of MRCONSO.RRF holds at most 40 characters (UMLS Reference Manual); a SAB that
#: no row could hold is left out of the search (it is reported as a source the file lacks).
_SAB_FIELD_MAX = 40


def _in_a_row(sab: bytes) -> bool:
    return 0 < len(sab) <= _SAB_FIELD_MAX and not any(c in sab for c in b"|\r\n")


@dataclass(frozen=True)
class _Needs:
    """What the scan looks for, as bytes for the fast filter and as str for the exact check."""

    sabs: tuple[bytes, ...]  # every SAB named, sorted
    rows: re.Pattern[bytes]  # a row of one of them after a line end (``_row_pattern``)
    first: re.Pattern[bytes]  # the same at the start of a block
    cuis: frozenset[bytes]  # CUIs wanted by route cui
    auis: frozenset[bytes]  # AUIs wanted by route aui
    codes: frozenset[bytes]  # codes wanted by route source
    source: frozenset[tuple[str, str]]  # (sab, code)
    cui: frozenset[tuple[str, str]]  # (cui, sab)
    aui: frozenset[tuple[str, str]]  # (aui, sab)

    @classmethod
    def build(cls, queries: Iterable[AtomQuery]) -> _Needs:
        sabs: set[str] = set()
        wanted: dict[str, set[tuple[str, str]]] = {"source": set(), "cui": set(), "aui": set()}
        for q in queries:
            sabs.add(q.sab)
            wanted[q.route].add((q.sab, q.ident))
        named = tuple(sab.encode() for sab in sorted(sabs))
        searched = [sab for sab in named if _in_a_row(sab)]
        return cls(
            named,
            _row_pattern(searched, after_line_end=True),
            _row_pattern(searched, after_line_end=False),
            frozenset(c.encode() for _, c in wanted["cui"]),
            frozenset(a.encode() for _, a in wanted["aui"]),
            frozenset(c.encode() for _, c in wanted["source"]),
            frozenset(wanted["source"]),
            frozenset((c, sab) for sab, c in wanted["cui"]),
            frozenset((a, sab) for sab, a in wanted["aui"]),
        )


@dataclass
class _ScanResult:
    rows: list[tuple[int, list[str]]] = field(default_factory=list)  # (byte offset, fields)
    bad: tuple[int, str] | None = None  # (byte offset of the line, problem)
    sabs_seen: set[bytes] = field(default_factory=set)


def _too_long(offset: int, path: str | Path) -> BadInputError:
    return BadInputError(
        f"a line longer than {MAX_LINE:,} bytes (from byte {offset:,}): not an MRCONSO.RRF row",
        path=path,
        hint="the file looks damaged or is not MRCONSO.RRF; extract it again",
    )


def ends_mid_row(path: str | Path, parts: Sequence[str] = ()) -> BadInputError:
    """MRCONSO.RRF ends with a line end: bytes after the last one are a row cut short, by a
    missing last part or a truncated file, which must not be read as a row (it would show as
    drift, not as the damage it is)."""
    after = f" after its last part {parts[-1]}" if parts else ""
    return BadInputError(
        f"ends mid-row{after}: is the last part missing or the file truncated?",
        path=path,
        hint="download or extract MRCONSO.RRF (with every part MRCONSO.RRF.aa.gz, .ab.gz, ...) "
        "again",
    )


def _blocks(path: Path, start: int, end: int, first: int = 0) -> Iterator[tuple[int, bytes]]:
    """Yield (offset, block) covering the lines that start in [start, end) of the file.

    Every block ends at a line end (or the end of the file). A line that starts before ``start``
    belongs to the range before; the line holding byte ``end - 1`` is read to its end. ``first``
    is where the first line starts (after a BOM). The file is read into one reused buffer: a
    fresh large object a block costs page faults that show in the run time, and a block that fits
    the CPU cache lets the search and the copies of its rows find it there.
    """
    buf = bytearray(BLOCK_SIZE)
    view = memoryview(buf)
    try:
        with cast(io.BufferedReader, open_regular(path, what="--mrconso")) as f:
            offset = max(start, first)  # file offset of buf[0]
            if offset > first:
                f.seek(offset - 1)
                if f.read(1) != b"\n":
                    offset += len(f.readline(MAX_LINE + 1))
            else:
                f.seek(offset)
            kept = 0  # bytes of a partial line carried at the start of buf
            while offset < end:
                n = f.readinto(view[kept:])
                filled = kept + n
                if n == 0:
                    if kept:
                        raise ends_mid_row(path)
                    return
                limit = end - offset  # our lines start before buf[limit]
                if filled >= limit:
                    last = buf.find(b"\n", limit - 1, filled)
                    if last != -1:
                        yield offset, bytes(view[: last + 1])
                        return
                cut = buf.rfind(b"\n", 0, filled) + 1
                if cut == 0:  # a line longer than the buffer: grow it, up to MAX_LINE
                    if len(buf) > MAX_LINE:
                        raise _too_long(offset, path)
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


_LINE, _CUI_OF, _AUI_OF, _SAB_OF, _CODE_OF = (itemgetter(i) for i in range(5))


def _scan_block(
    base: int, chunk: bytes, needs: _Needs, out: _ScanResult, start: int = 0, stop: int = -1
) -> None:
    """Find the rows of one block (of its lines in ``chunk[start:stop]``) that can matter, then
    parse and check those exactly.

    One regular expression finds every row of a named SAB (``_row_pattern``), with its CUI, AUI
    and CODE; C-level set tests against the wanted CUIs, AUIs and codes leave the few rows that
    may answer a query, which are decoded, split and checked exactly (``_check_row``)."""
    stop = len(chunk) if stop < 0 else stop
    found = needs.rows.findall(chunk, start, stop)
    head = needs.first.match(chunk, start, stop)
    if head is not None:
        found.insert(0, head.groups())
    if not found:
        return
    if b"\n" in b"".join(map(_LINE, found)):
        # A row with too few fields ran on into the next line, which the search then did not try
        # on its own: match each line alone instead (a damaged file: rare, and slower is fine).
        lines = chunk[start:stop].split(b"\n")
        found = [m.groups() for line in lines if (m := needs.first.match(line))]
    if len(out.sabs_seen) < len(needs.sabs):
        out.sabs_seen.update(map(_SAB_OF, found))
    if (
        needs.cuis.isdisjoint(map(_CUI_OF, found))
        and needs.auis.isdisjoint(map(_AUI_OF, found))
        and needs.codes.isdisjoint(map(_CODE_OF, found))
    ):
        return
    at = start  # where the line after the last row checked starts
    for line, cui, aui, _, code in found:
        if cui in needs.cuis or aui in needs.auis or code in needs.codes:
            # this copy of the line is the first one from ``at`` on, or the row found is not
            if at == start and chunk.startswith(line + b"\n", start):
                row = start
            else:
                row = chunk.index(b"\n" + line + b"\n", at - 1 if at > start else start, stop) + 1
            at = row + len(line) + 1
            if _check_row(base + row, line, needs, out):
                break


def _check_row(offset: int, raw: bytes, needs: _Needs, out: _ScanResult) -> bool:
    """Check one candidate row exactly; record it if it answers a query. True on a bad row.

    Whether it answers a query is read from the fields at their places, before the row itself
    is checked: a damaged row that answers none is passed over, as every row no query needs is
    (it is never read); one that answers a query is bad input, named by its line."""
    parts = raw.decode("utf-8", "surrogateescape").split("|")
    n = len(parts)
    if n <= _SAB:
        return False
    sab = parts[_SAB]
    if not (
        (n > _CODE and (sab, parts[_CODE]) in needs.source)
        or (parts[_CUI], sab) in needs.cui
        or (parts[_AUI], sab) in needs.aui
    ):
        return False
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        out.bad = (offset, f"not valid UTF-8 ({err.reason} at byte {err.start} of the line)")
        return True
    fields = _fields(line)
    if isinstance(fields, str):
        out.bad = (offset, fields)
        return True
    out.rows.append((offset, fields))
    return False


def _scan_range(
    path: str,
    start: int,
    end: int,
    needs: _Needs,
    report: ProgressCallback | None = None,
    first: int = 0,
) -> _ScanResult:
    """Scan the lines that start in [start, end); module level so that a worker can run it."""
    out = _ScanResult()
    for base, chunk in _blocks(Path(path), start, end, first):
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


#: Progress messages from a worker: at most one per this many bytes scanned.
_WORKER_REPORT_EVERY = 8 << 20


def _worker(conn: Connection, path: str, needs: _Needs, first: int) -> None:
    """A worker process: scan the byte ranges it is sent, one at a time, until it gets None;
    send progress, then the rows found in each.

    It ignores Ctrl-C (the terminal sends it to the whole process group): the main process
    decides, and kills the workers when it is interrupted."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    try:
        while (task := conn.recv()) is not None:
            start, end = task
            last = start

            def report(done: int, total: int) -> None:
                nonlocal last
                if done - last >= _WORKER_REPORT_EVERY:
                    conn.send(("progress", done - last))
                    last = done

            result = _scan_range(path, start, end, needs, report, first)
            conn.send(("progress", max(0, end - last)))
            conn.send(("result", result))
    except (OSError, BadInputError) as err:
        conn.send(("error", err))
    finally:
        conn.close()


class MrconsoSource:
    """Answer atom queries from a local MRCONSO (any form NLM ships), in one streaming pass."""

    name = "mrconso"

    def __init__(
        self, path: Path, *, progress: ProgressCallback | None = None, workers: int | None = None
    ) -> None:
        self.path = Path(path)
        self.progress = progress
        self.workers = workers if workers is not None else min(os.cpu_count() or 1, 4)
        #: what was read (set by ``fetch``): the file, its form, zip members, parts
        self.input: MrconsoInput | None = None

    def fetch(self, umls_release: str, probe_cui: str, queries: Sequence[AtomQuery]) -> FetchResult:
        """Scan the file once and answer every query; ``None`` where no row matched."""
        del probe_cui  # a local file has nothing to probe
        if umls_release == "current":
            raise BadInputError(
                "--umls-release current needs the UMLS REST API; with --mrconso, name the "
                "release your MRCONSO.RRF comes from (or leave the table's release)",
            )
        inp = locate_mrconso(self.path)
        self.input = inp
        needs = _Needs.build(queries)
        warnings: list[str] = []
        try:
            if inp.seekable_file:
                result = self._scan_file(inp, needs, warnings)
            else:
                result = self._scan_stream(inp, needs, warnings)
        except OSError as err:
            raise BadInputError(f"cannot read: {err.strerror or err}", path=self.path) from None
        finally:
            close_progress(self.progress)  # its bar ends before any message, Ctrl-C included
        if result.bad is not None:
            line, problem = result.bad
            raise BadInputError(
                problem,
                path=self.path,
                line=line,
                hint="the file looks damaged or is not MRCONSO.RRF; extract it again",
            )
        answers: dict[AtomQuery, list[Atom]] = {q: [] for q in queries}
        for _, fields in result.rows:
            atom = atom_from_fields(fields)
            for q in (
                AtomQuery("source", atom.sab, fields[_CODE]),
                AtomQuery("cui", atom.sab, atom.cui),
                AtomQuery("aui", atom.sab, atom.aui),
            ):
                if q in answers:
                    answers[q].append(atom)
        missing = [sab.decode() for sab in needs.sabs if sab not in result.sabs_seen]
        warnings += [
            f"{self.path} has no row of source {sab!r}: is it the MRCONSO.RRF of a release that "
            "includes that source?"
            for sab in missing
        ]
        return FetchResult(
            umls_release=umls_release,
            atoms={q: (tuple(a) if a else None) for q, a in answers.items()},
            warnings=warnings,
            missing_sources=missing,
            source_details=inp.to_json(),
        )

    def _scan_file(self, inp: MrconsoInput, needs: _Needs, warnings: list[str]) -> _ScanResult:
        size = inp.size or 0
        with open_regular(inp.path, what="--mrconso") as f:
            head = f.read(SNIFF_BYTES)
        first = sniff(head, at_end=len(head) == size, path=self.path)
        if first:
            warnings.append(_bom_note(self.path))
        report = self.progress or (lambda done, total: None)
        report(0, size)
        if needs.sabs:
            if self.workers > 1 and size >= PARALLEL_MIN_SIZE and _fork_is_safe():
                out = self._scan_parallel(inp.path, size, first, needs, report)
            else:
                out = _scan_range(str(inp.path), 0, size, needs, report, first)
        else:
            out = _ScanResult()
        if out.bad is not None:
            offset, problem = out.bad
            out.bad = (_line_number(inp.path, offset), problem)
        report(size, size)
        return out

    def _scan_stream(self, inp: MrconsoInput, needs: _Needs, warnings: list[str]) -> _ScanResult:
        """A compressed file, parts, a zip or a pipe: one pass, in file order."""
        stop = threading.Event()
        # The reader thread decompresses without the GIL, then needs it back for a moment: the
        # default 5 ms switch interval would leave it idle longer than it works (0.1 ms: measured).
        switch = sys.getswitchinterval()
        sys.setswitchinterval(min(switch, 0.0001))
        try:
            return self._scan_blocks(inp, needs, warnings, stop)
        finally:
            sys.setswitchinterval(switch)

    def _scan_blocks(
        self, inp: MrconsoInput, needs: _Needs, warnings: list[str], stop: threading.Event
    ) -> _ScanResult:
        report = self.progress or (lambda done, total: None)
        total = inp.size
        if total is not None:
            report(0, total)
        out = _ScanResult()
        lines_before = 0
        done = 0
        for done, base, chunk in _lines(inp.blocks(stop), self.path, warnings, inp.parts):
            if needs.sabs:
                # in pieces: the search holds the GIL, which the decompressing thread needs back
                # for a moment after each block (a whole block at once: 15% slower, measured)
                piece = 0
                while piece < len(chunk) and out.bad is None:
                    end = chunk.find(b"\n", piece + STREAM_PIECE) + 1 or len(chunk)
                    _scan_block(base, chunk, needs, out, piece, end)
                    piece = end
            if out.bad is not None:
                offset, problem = out.bad
                line = lines_before + chunk.count(b"\n", 0, offset - base) + 1
                out.bad = (line, problem)
                stop.set()
                break
            lines_before += chunk.count(b"\n")
            if total is not None:
                report(min(done, total), total)
        report(done if total is None else total, done if total is None else total)
        return out

    def _scan_parallel(
        self, path: Path, size: int, first: int, needs: _Needs, report: ProgressCallback
    ) -> _ScanResult:
        """Cut the file into byte ranges that worker processes scan, each taking the next range
        when it is done (a worker slowed by other load takes fewer); join in file order.

        Ctrl-C reaches this process as KeyboardInterrupt wherever it waits; the ``finally``
        kills every worker still running unless all were told to stop, and reaps it, so none is
        left behind. While a worker starts and gets its first range, Ctrl-C is held back: it
        comes once the worker is known (one interrupted between its start and its first range
        was joined without being killed, and waited for that range for ever)."""
        n = self.workers * 4  # more ranges than workers: finer progress, balanced load
        bounds = [size * i // n for i in range(n + 1)]
        ranges = [(a, b) for a, b in itertools.pairwise(bounds) if b > a]
        ctx = get_context("fork")
        workers: list[tuple[Any, Connection]] = []
        parts: dict[int, _ScanResult] = {}
        busy: dict[Connection, int] = {}  # worker -> start of the range it scans
        done = 0
        sys.stdout.flush()
        sys.stderr.flush()  # a forked child must not write out the parent's buffers again
        finished = False  # every worker was sent its last None: it ends by itself
        try:
            for _ in range(min(self.workers, len(ranges))):
                conn, child = ctx.Pipe()
                # Ctrl-C blocked from fork until the child ignores it (no window for a
                # traceback) and until the worker is listed with its first range
                mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
                try:
                    proc = ctx.Process(
                        target=_worker, args=(child, str(path), needs, first), daemon=True
                    )
                    workers.append((proc, conn))
                    proc.start()
                    child.close()
                    conn.send(ranges[len(busy)])
                    busy[conn] = ranges[len(busy)][0]
                finally:
                    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            following = iter(ranges[len(busy) :])
            while busy:
                for ready in wait(list(busy)):
                    assert isinstance(ready, Connection)
                    conn = ready
                    try:
                        message = conn.recv()
                    except EOFError:
                        raise BadInputError(
                            "a worker process scanning this file ended without an answer",
                            path=path,
                            hint="run again; if it happens again, pass --mrconso a copy on "
                            "a local disk",
                        ) from None
                    if message[0] == "progress":
                        done += message[1]
                        report(min(done, size), size)
                    elif message[0] == "error":
                        raise message[1]
                    else:
                        parts[busy.pop(conn)] = message[1]
                        task = next(following, None)
                        conn.send(task)
                        if task is not None:
                            busy[conn] = task[0]
            finished = True
        finally:
            for proc, conn in workers:
                if proc.pid is not None:  # started
                    if not finished and proc.is_alive():  # interrupted or failed: no waiting
                        proc.kill()
                    proc.join()
                conn.close()
        out = _ScanResult()
        for a in sorted(parts):
            part = parts[a]
            out.rows.extend(part.rows)
            out.sabs_seen |= part.sabs_seen
            if part.bad is not None and out.bad is None:
                out.bad = part.bad
        return out


def sniff_mrconso(path: Path) -> MrconsoInput:
    """Find MRCONSO in ``path`` (``locate_mrconso``) and check that its first rows read as
    MRCONSO.RRF (``sniff``), reading no further than that: BadInputError otherwise. A quick
    look for ``doctor`` and ``regenerate --dry-run``; a pipe is consumed by it."""
    inp = locate_mrconso(path)
    stop = threading.Event()
    blocks = inp.blocks(stop)
    try:
        next(_lines(blocks, path, []), None)
    except OSError as err:
        raise BadInputError(f"cannot read: {err.strerror or err}", path=path) from None
    finally:
        stop.set()
        close = getattr(blocks, "close", None)
        if close is not None:
            close()
    return inp


def _bom_note(path: Path) -> str:
    return (
        f"{path} starts with a UTF-8 byte order mark (BOM), which MRCONSO.RRF does not have: "
        "it was removed before the first row was read"
    )


def _lines(
    blocks: Iterator[tuple[int, bytes]],
    path: Path,
    warnings: list[str],
    parts: Sequence[str] = (),
) -> Iterator[tuple[int, int, bytes]]:
    """(progress count, offset, block of whole lines) from blocks cut anywhere; the start of the
    stream is sniffed first (``sniff``), a BOM removed, a line longer than MAX_LINE refused, a
    stream that does not end with a line end refused (``ends_mid_row``, naming the last of the
    split ``parts`` read).

    Each block is copied once: the partial line carried over, then the new data to its last
    line end (bytes + memoryview makes one new bytes object)."""
    carry = b""
    offset = 0  # stream offset of carry[0]
    sniffed = False
    done = 0
    for done, data in blocks:
        if not sniffed:
            carry += data
            if len(carry) < SNIFF_BYTES:
                continue
            skip = sniff(carry[:SNIFF_BYTES], at_end=False, path=path)
            if skip:
                warnings.append(_bom_note(path))
            data, carry, offset, sniffed = carry[skip:], b"", skip, True
        cut = data.rfind(b"\n") + 1
        if cut == 0:
            carry += data
            if len(carry) > MAX_LINE:
                raise _too_long(offset, path)
            continue
        chunk = carry + memoryview(data)[:cut] if carry else data[:cut]
        yield done, offset, chunk
        offset += len(chunk)
        carry = data[cut:]
    if not sniffed:
        skip = sniff(carry, at_end=True, path=path)
        if skip:
            warnings.append(_bom_note(path))
        carry, offset = carry[skip:], skip
        cut = carry.rfind(b"\n") + 1  # a short stream: its whole lines, then what is left
        if cut:
            yield done, offset, carry[:cut]
            carry, offset = carry[cut:], offset + cut
    if carry:
        if len(carry) > MAX_LINE:
            raise _too_long(offset, path)
        raise ends_mid_row(path, parts)
