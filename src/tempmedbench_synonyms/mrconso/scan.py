"""The block scan of MRCONSO.RRF: in each block of whole lines, the rows that can answer a query.

One regular expression finds every row whose SAB some query names, with its CUI, AUI and CODE
(``_row_pattern``; its cost does not grow with the SABs: a trie); C-level set tests keep the
wanted ones; only those are decoded, split and checked exactly (SPEC section 3), in file order.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path
from typing import Any

from tempmedbench_synonyms.atoms import AtomQuery, ProgressCallback
from tempmedbench_synonyms.errors import BadInputError
from tempmedbench_synonyms.files import open_regular
from tempmedbench_synonyms.mrconso import rows
from tempmedbench_synonyms.mrconso.rows import SNIFF_BYTES

#: Bytes read at a time: enough that the per-block overhead vanishes, little enough for the CPU
#: cache, so that the search and the copies of its rows find the block there.
BLOCK_SIZE = 1 << 18
#: The longest line accepted (a real row is under 4 kB): a longer one is not MRCONSO, and
#: refusing it bounds the memory a file with no line end could take.
MAX_LINE = 1 << 20
#: Bytes of a decompressed stream searched at a time (see ``source._scan_stream``).
STREAM_PIECE = 1 << 17
DAMAGED_HINT = "the file looks damaged or is not MRCONSO.RRF; extract it again"


def too_long(offset: int, path: str | Path) -> BadInputError:
    return BadInputError(
        f"a line longer than {MAX_LINE:,} bytes (from byte {offset:,}): not an MRCONSO.RRF row",
        path=path,
        hint=DAMAGED_HINT,
    )


def sab_trie(words: Iterable[bytes]) -> bytes:
    """A regular expression matching exactly ``words``, shaped as a trie, so a SAB field is read
    once however many SABs are named. Built without recursion."""
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
    """A row whose SAB field (the 12th) is one of ``sabs``; groups: the line, CUI, AUI, SAB and
    CODE ("" when the row ends before it).

    Possessive ``[^|]*+`` skips fields (2.3x faster, measured); a short damaged row may run into
    the next line, which ``scan_block`` checks. The CUI is looked for in the first 64 bytes
    only, else a long stretch without '|' is searched quadratically.
    """
    skip = rb"[^|]*+\|"
    row = (
        rb"(([^|]{0,64}+)\|" + skip * 6 + rb"([^|]*+)\|" + skip * 3
        + rb"(" + sab_trie(sabs) + rb")\|(?:[^|]*+\|([^|]*+)\|)?[^\n]*+)"
    )  # fmt: skip
    return re.compile(rb"\n" + row if after_line_end else row)


#: The SAB column of MRCONSO.RRF holds at most 40 characters (UMLS Reference Manual); a SAB that
#: no row could hold is left out of the search (it is reported as a source the file lacks).
_SAB_FIELD_MAX = 40


def _in_a_row(sab: bytes) -> bool:
    return 0 < len(sab) <= _SAB_FIELD_MAX and not any(c in sab for c in b"|\r\n")


@dataclass(frozen=True)
class Needs:
    """What the scan looks for, as bytes for the fast filter and as str for the exact check."""

    sabs: tuple[bytes, ...]  # every SAB named, sorted
    rows: re.Pattern[bytes]  # a row of one of them after a line end (``_row_pattern``)
    first: re.Pattern[bytes]  # the same at the start of a block
    cuis: frozenset[bytes]  # CUIs wanted by route cui
    auis: frozenset[bytes]  # AUIs wanted by route aui
    codes: frozenset[bytes]  # codes wanted by route source
    source: frozenset[tuple[str, str]]  # (sab, code)
    cui: frozenset[tuple[str, str]]  # (cui, sab)
    aui: frozenset[str]  # AUIs (route aui asks for the atom whatever its source, as UTS does)

    @classmethod
    def build(cls, queries: Iterable[AtomQuery]) -> Needs:
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
            frozenset(a for _, a in wanted["aui"]),
        )


@dataclass
class ScanResult:
    rows: list[tuple[int, list[str]]] = field(default_factory=list)  # (byte offset, fields)
    bad: tuple[int, str] | None = None  # (byte offset of the line, problem)
    sabs_seen: set[bytes] = field(default_factory=set)
    unended: bool = False  # the file's last row has no line end (``rows.last_row``)


def _blocks(path: Path, start: int, end: int, first: int = 0) -> Iterator[tuple[int, bytes]]:
    """Yield (offset, block) covering the lines that start in [start, end) of the file.

    Blocks end at a line end but a file's unterminated last one (``rows.last_row`` judges it).
    ``first``: where the first line starts (after a BOM). One reused buffer (measured faster).
    """
    buf = bytearray(BLOCK_SIZE)
    view = memoryview(buf)
    try:
        with open_regular(path, what="--mrconso") as f:
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
                        yield offset, bytes(view[:kept])
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
                        raise too_long(offset, path)
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


def scan_block(
    base: int, chunk: bytes, needs: Needs, out: ScanResult, start: int, stop: int
) -> None:
    """The rows of ``chunk[start:stop]`` that can matter, each checked exactly (``_check_row``)."""
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


def _check_row(offset: int, raw: bytes, needs: Needs, out: ScanResult) -> bool:
    """Record one candidate row if it answers a query; True on a bad row. A damaged row that
    answers no query is passed over; one that answers one is bad input."""
    parts = raw.decode("utf-8", "surrogateescape").split("|")
    n = len(parts)
    if n <= rows.F_SAB:
        return False
    sab = parts[rows.F_SAB]
    if not (
        (n > rows.F_CODE and (sab, parts[rows.F_CODE]) in needs.source)
        or (parts[rows.F_CUI], sab) in needs.cui
        or parts[rows.F_AUI] in needs.aui
    ):
        return False
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        out.bad = (offset, f"not valid UTF-8 ({err.reason} at byte {err.start} of the line)")
        return True
    fields = rows.fields_of(line)
    if isinstance(fields, str):
        out.bad = (offset, fields)
        return True
    out.rows.append((offset, fields))
    return False


def scan_range(
    path: str,
    start: int,
    end: int,
    needs: Needs,
    report: ProgressCallback | None = None,
    first: int = 0,
) -> ScanResult:
    """Scan the lines that start in [start, end); module level so that a worker can run it."""
    out = ScanResult()
    for base, chunk in _blocks(Path(path), start, end, first):
        if not chunk.endswith(b"\n"):
            chunk = rows.last_row(chunk, path)
            out.unended = True
        scan_block(base, chunk, needs, out, 0, len(chunk))
        if report is not None:
            report(min(base + len(chunk), end), end)
        if out.bad is not None:
            break
    return out


def lines_of(
    blocks: Iterator[tuple[int, bytes]],
    path: Path,
    warnings: list[str],
    parts: Sequence[str] = (),
) -> Generator[tuple[int, int, bytes, int, int], None, None]:
    """(progress count, base, chunk, start, stop) from blocks cut anywhere: ``chunk[start:stop]``
    are whole lines, ``base`` the offset of ``chunk[0]``. The start is sniffed, a BOM removed, a
    line past MAX_LINE refused; an unterminated last row is judged by ``last_row``.

    A line split between blocks is joined and handed on alone: blocks are not copied (measured).
    """
    head = b""
    done = 0
    for block in blocks:  # the start, sniffed first (the whole stream if it is shorter)
        done, data = block
        head += data
        if len(head) >= SNIFF_BYTES:
            break
    skip = rows.sniff(head[:SNIFF_BYTES], at_end=len(head) < SNIFF_BYTES, path=path)
    if skip:
        warnings.append(rows.bom_note(path))
    carry = b""
    offset = skip  # stream offset of carry[0]
    blocks = itertools.chain([(done, head[skip:])], blocks)
    for done, data in blocks:
        cut = data.rfind(b"\n") + 1
        if cut == 0:
            carry += data
            if len(carry) > MAX_LINE:
                raise too_long(offset, path)
            continue
        start = 0
        if carry:
            start = data.find(b"\n") + 1
            line = carry + data[:start]
            yield done, offset, line, 0, len(line)
            offset += len(line)
        if start < cut:
            yield done, offset - start, data, start, cut
            offset += cut - start
        carry = data[cut:]
    if carry:
        if len(carry) > MAX_LINE:
            raise too_long(offset, path)
        row = rows.last_row(carry, path, parts)
        warnings.append(rows.unended_note(path, parts))
        yield done, offset, row, 0, len(row)
