"""Terminology lookups answered from a local MRCONSO.RRF (SPEC section 11, "From a local file").

``answer_many`` answers a batch in one pass over the file (any form of SPEC section 7): the kinds
whose ``local`` says how (``Atoms``, ``SourceAtoms``, ``Atom``, ``Crosswalk``, ``Cuis``, and
``Search`` with search type exact), from the rows of their ``inputs`` that their ``rows`` rule
counts, by the meaning of a row the fake UTS shares (``shapes``: names, crosswalks, UTS's
objects). Any other lookup, or an option the file cannot honour, is that input's bad input,
naming the UMLS file or REST request it needs (``Lookup.elsewhere``). ``current`` is the release
the file's names say.

How one pass does it: MRCONSO.RRF is sorted by CUI (every release NLM ships is), so the rows of
one concept are contiguous. The file is read in pieces that each hold whole concepts, and in each
piece, with searches that run in C:

* one search per source (one for all beyond six) finds the rows of the codes asked for (the SAB,
  then the TTY, then a trie of the codes); one finds the atoms asked for; one, over the casefolded
  text, the strings searched for in the STR field;
* one lists the piece's runs of rows of one CUI, which checks the order as it goes and says which
  concepts asked for the piece holds;
* the concepts of the rows found (a crosswalk's, a search's) and those asked for are taken whole
  from the same piece, where a sorted file keeps them.

Only the rows taken are decoded, split and checked (a damaged one is bad input naming its line).
A file that is not sorted by CUI is read a second time, for the rows of the concepts the first
pass found, with a warning: answers never depend on the order. The codes the crosswalks give are
clusters of all their rows, wherever they are (SPEC 12): one more pass finds them, which a pipe
cannot give. A plain file of some size is cut into ranges that each start where a concept
starts, scanned by worker processes (``source.scan_ranges``).
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import operator
import re
import threading
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tempmedbench_synonyms import runtime
from tempmedbench_synonyms.atoms import (
    ProgressCallback,
    check_aui,
    check_code,
    check_cui,
    check_release,
    check_sab,
)
from tempmedbench_synonyms.errors import BadInputError, Outcome, plural
from tempmedbench_synonyms.files import open_regular
from tempmedbench_synonyms.lookups import Answer, Lookup, Search, SourceAtoms, clean
from tempmedbench_synonyms.mrconso import scan, shapes
from tempmedbench_synonyms.mrconso.forms import MrconsoInput, locate_mrconso
from tempmedbench_synonyms.mrconso.rows import (
    F_AUI,
    F_CODE,
    F_CUI,
    F_LAT,
    F_SAB,
    F_STR,
    F_SUPPRESS,
    SNIFF_BYTES,
    bom_note,
    fields_of,
    last_row,
    sniff,
    unended_note,
)
from tempmedbench_synonyms.mrconso.source import (
    MAX_WORKERS,
    lines_before_offset,
    scan_ranges,
    why_alone,
)
from tempmedbench_synonyms.secret import shortened

log = logging.getLogger(__name__)

#: The longest run of one concept's rows kept in one piece. No real concept comes near (the
#: largest hold a few thousand rows, well under 1 MB); a longer run is cut, as a file that is not
#: sorted would be, and read as one (a second pass).
MAX_CONCEPT = 16 << 20
#: Up to this many sources, each is searched for on its own (fast), beyond in one search.
_SAB_SEARCHES = 6
_DAMAGED_HINT = "the file looks damaged or is not MRCONSO.RRF; extract it again"
_LEFT_OUT = " (obsolete and suppressible atoms are left out, as UTS leaves them out)"
_REST_HINT = "ask the UMLS REST API for it: the same lookup without a local MRCONSO.RRF"

# A run of rows of one CUI: its CUI, then every following row that starts with the same CUI.
_RUN = rb"([^|\n]*+)\|[^\n]*+(?:\n\1\|[^\n]*+)*+"
_FIRST_RUN = re.compile(_RUN)
_NEXT_RUNS = re.compile(rb"\n" + _RUN)


@dataclass(frozen=True)
class Wants:
    """What a pass looks for, as bytes as the file holds them (sent to the worker processes)."""

    #: concepts taken whole: those asked for (``Atoms``); in a second pass, every one needed
    cuis: frozenset[bytes] = frozenset()
    #: per source: its SAB, then a TTY, then one of its codes asked for (a trie)
    codes: tuple[re.Pattern[bytes], ...] = ()
    #: (SAB, CODE) asked for, and those whose concepts are taken whole (crosswalk, cuis)
    code_keys: frozenset[tuple[bytes, bytes]] = frozenset()
    whole: frozenset[tuple[bytes, bytes]] = frozenset()
    #: an AUI asked for, as a field
    auis: re.Pattern[bytes] | None = None
    aui_keys: frozenset[bytes] = frozenset()
    #: a string searched for, casefolded, as a field of the casefolded text (checked: STR)
    terms: re.Pattern[bytes] | None = None
    #: the first pass trusts that a piece holds a concept's rows as one run (it checks the order
    #: meanwhile); the second looks for every row of each concept in every piece
    sorted: bool = True

    @property
    def empty(self) -> bool:
        return not (self.cuis or self.code_keys or self.aui_keys or self.terms is not None)


@dataclass
class Found:
    """What a pass found in a range of the file."""

    rows: list[tuple[int, list[str]]] = field(default_factory=list)  # (byte offset, fields)
    #: the concepts of the rows found that are taken whole (the second pass reads them again)
    seeds: set[bytes] = field(default_factory=set)
    first: bytes | None = None  # the range's first CUI and its last (the order across ranges)
    last: bytes | None = None
    disorder: tuple[bytes, bytes] | None = None  # a CUI and the one after it, out of order
    bad: tuple[int, str] | None = None  # (byte offset of the line, problem)
    unended: bool = False  # the file's last row has no line end (``rows.last_row``)


# -- one piece -----------------------------------------------------------------------------------


def _runs(data: bytes, lo: int, hi: int) -> list[bytes]:
    """The CUI of each run of rows of one CUI in ``data[lo:hi]``, in order."""
    head = _FIRST_RUN.match(data, lo, hi)
    runs: list[bytes] = _NEXT_RUNS.findall(data, head.end() if head else lo, hi)
    return [head.group(1), *runs] if head else runs


def _check_order(runs: list[bytes], out: Found) -> None:
    if not runs:
        return
    if out.disorder is None:
        if out.last is not None and out.last >= runs[0]:
            out.disorder = (out.last, runs[0])
        elif not all(map(operator.lt, runs, itertools.islice(runs, 1, None))):
            at = next(i for i in range(len(runs) - 1) if runs[i] >= runs[i + 1])
            out.disorder = (runs[at], runs[at + 1])
    if out.first is None:
        out.first = runs[0]
    out.last = runs[-1]


def _line_at(data: bytes, pos: int, hi: int) -> tuple[int, int]:
    """The start and end (before its line end) of the line holding ``data[pos]``."""
    end = data.find(b"\n", pos, hi)
    return data.rfind(b"\n", 0, pos) + 1, hi if end < 0 else end


def _concept_rows(
    data: bytes, lo: int, hi: int, cui: bytes, *, one_run: bool
) -> Iterator[tuple[int, int]]:
    """The lines of ``data[lo:hi]`` whose CUI is ``cui``: its first run only when ``one_run``."""
    head = cui + b"|"
    if data.startswith(head, lo, hi):
        start = lo
    elif (start := data.find(b"\n" + head, lo, hi) + 1) == 0:
        return
    while True:
        end = data.find(b"\n", start, hi)
        end = hi if end < 0 else end
        yield start, end
        if data.startswith(b"\n" + head, end, hi):
            start = end + 1
        elif one_run or (start := data.find(b"\n" + head, end, hi) + 1) == 0:
            return


def _term_rows(
    data: bytes, lo: int, hi: int, terms: re.Pattern[bytes]
) -> Iterator[tuple[int, int]]:
    """The lines of ``data[lo:hi]`` whose STR, casefolded, is one of the casefolded ``terms``.

    The whole piece is casefolded at once (casefold maps each character on its own, and never
    makes or takes a ``|`` or a line end), so a match's line is found by counting line ends."""
    piece = data[lo:hi]
    text = piece.decode("utf-8", "surrogateescape").casefold().encode("utf-8", "surrogateescape")
    hits, line, counted = [], 0, 0  # the lines of the hits: line ends counted up to ``counted``
    for m in terms.finditer(text):
        start = text.rfind(b"\n", 0, m.start()) + 1
        if text.count(b"|", start, m.start()) == F_STR - 1:  # the '|' before STR
            line += text.count(b"\n", counted, start)
            counted = start
            hits.append(line)
    if not hits:
        return
    # line n starts after the n lines before it and their line ends
    before = list(itertools.accumulate(map(len, piece.split(b"\n")), initial=lo))
    for n in hits:
        yield before[n] + n, before[n + 1] + n


def _scan_piece(base: int, data: bytes, lo: int, hi: int, wants: Wants, out: Found) -> None:
    """Take the rows of ``data[lo:hi]`` (whole lines; whole concepts in a sorted file) that a
    lookup needs, check them exactly, and add them to ``out`` in file order (``base`` is the
    file offset of ``data[0]``)."""
    runs = _runs(data, lo, hi) if wants.sorted or wants.cuis else []
    if wants.sorted:
        _check_order(runs, out)
    taken: dict[int, int] = {}  # start -> end of each line taken
    # the concepts taken whole, each with the start of one of its lines if known (else -1)
    concepts = dict.fromkeys(wants.cuis.intersection(runs), -1) if wants.cuis else {}
    for pattern in wants.codes:
        for m in pattern.finditer(data, lo, hi):
            start, end = _line_at(data, m.start(), hi)
            parts = data[start:end].split(b"|", F_CODE + 1)
            key = (parts[F_SAB], parts[F_CODE]) if len(parts) > F_CODE else None
            if key in wants.code_keys:
                taken[start] = end
                if key in wants.whole and concepts.get(parts[F_CUI], -1) < 0:
                    concepts[parts[F_CUI]] = start
    if wants.auis is not None:
        for m in wants.auis.finditer(data, lo, hi):
            start, end = _line_at(data, m.start(), hi)
            parts = data[start:end].split(b"|", F_AUI + 1)
            if len(parts) > F_AUI and parts[F_AUI] in wants.aui_keys:
                taken[start] = end
    if wants.terms is not None:
        for start, end in _term_rows(data, lo, hi, wants.terms):
            taken[start] = end
            cui = data[start:end].split(b"|", 1)[0]
            if concepts.get(cui, -1) < 0:
                concepts[cui] = start
    out.seeds.update(concepts)
    for cui, at in concepts.items():
        if wants.sorted and at >= 0:  # its one run is around the line found
            at = _run_start(data, at, lo)
        taken.update(_concept_rows(data, max(at, lo), hi, cui, one_run=wants.sorted))
    for start in sorted(taken):
        raw = data[start : taken[start]]
        try:
            fields = fields_of(raw.decode("utf-8"))
        except UnicodeDecodeError as err:
            fields = f"not valid UTF-8 ({err.reason} at byte {err.start} of the line)"
        if isinstance(fields, str):
            out.bad = (base + start, fields)
            return
        out.rows.append((base + start, fields))


def _run_start(data: bytes, start: int, low: int) -> int:
    """Where the run of rows of one CUI that holds the line at ``start`` begins (not before
    ``low``)."""
    end = data.find(b"\n", start)
    bar = data.find(b"|", start, len(data) if end < 0 else end)
    if bar < 0:
        return start
    key = data[start : bar + 1]
    while start > low:
        before = data.rfind(b"\n", low, start - 1) + 1 or low
        if not data.startswith(key, before):
            break
        start = before
    return start


def _pieces(
    blocks: Iterable[tuple[int, bytes, int, int]], piece: int = 0
) -> Iterator[tuple[int, bytes, int, int]]:
    """(offset of ``data``, ``data``, start, end): the pieces ``data[start:end]`` of blocks of
    whole lines (given the same way), each ending where a concept ends, so that a sorted file's
    concepts are never cut (a block's last concept waits for the rest of its rows in the next
    block, and goes on its own), unless one is longer than MAX_CONCEPT. A block is not copied.
    With ``piece``, a block is cut into pieces of about that many bytes (a stream: the reading
    thread gets the GIL back between them)."""
    carry, carry_at, key = b"", 0, b""
    for base, block, lo, hi in blocks:
        pos = lo
        if carry:  # the rows of the carried concept at the start of this block join it
            while key and block.startswith(key, pos, hi):
                pos = block.find(b"\n", pos, hi) + 1 or hi
            carry += block[lo:pos]
            if pos == hi and len(carry) < MAX_CONCEPT:
                continue
            yield carry_at, carry, 0, len(carry)
            carry = b""
            if pos == hi:
                continue
        cut = _run_start(block, block.rfind(b"\n", pos, hi - 1) + 1 or pos, pos)
        if cut == pos and hi - pos >= MAX_CONCEPT:
            cut = hi  # (else the rest is one concept, which waits for the next block)
        while piece and cut - pos > piece:
            step = block.find(b"\n", pos + piece, hi) + 1
            step = _run_start(block, step, pos) if 0 < step < cut else pos
            if step == pos:
                break
            yield base, block, pos, step
            pos = step
        if cut > pos:
            yield base, block, pos, cut
        carry, carry_at = block[cut:hi], base + cut
        bar = carry.find(b"|", 0, _line_at(carry, 0, len(carry))[1])
        key = carry[: bar + 1] if bar >= 0 else b""
    if carry:
        yield carry_at, carry, 0, len(carry)


def _ended(
    blocks: Iterable[tuple[int, bytes]], path: str, out: Found
) -> Iterator[tuple[int, bytes, int, int]]:
    """``scan._blocks``'s blocks, a complete last row without its line end given one (and noted
    in ``out``), a cut one bad input (``rows.last_row``)."""
    for base, block in blocks:
        if not block.endswith(b"\n"):
            block = last_row(block, path)
            out.unended = True
        yield base, block, 0, len(block)


def scan_range(
    path: str,
    start: int,
    end: int,
    wants: Wants,
    report: ProgressCallback | None = None,
    first: int = 0,
) -> Found:
    """Scan the lines that start in [start, end) of a plain file (a worker runs it on its
    range: ``start`` and ``end`` are where concepts start, ``_concept_bounds``)."""
    out = Found()
    for base, data, lo, hi in _pieces(
        _ended(scan._blocks(Path(path), start, end, first), path, out)
    ):
        _scan_piece(base, data, lo, hi, wants, out)
        if report is not None:
            report(min(base + hi, end), end)
        if out.bad is not None:
            break
    return out


def _concept_bounds(path: Path, bounds: Sequence[int], size: int) -> list[int]:
    """Move each bound to where a concept starts: past the line it falls in, then past the rest
    of that line's concept (the range before takes it whole)."""
    moved = [bounds[0]]
    with open_regular(path, what="--mrconso") as f:
        for pos in bounds[1:-1]:
            if pos <= moved[-1]:
                moved.append(moved[-1])
                continue
            f.seek(pos - 1)
            if f.read(1) != b"\n":
                f.readline(scan.MAX_LINE + 1)
            line = f.readline(scan.MAX_LINE + 1)
            key = line.split(b"|", 1)[0] + b"|"
            at = f.tell()
            while at - pos < MAX_CONCEPT and (line := f.readline(scan.MAX_LINE + 1)):
                if not line.startswith(key):
                    break
                at += len(line)
            moved.append(min(max(at, moved[-1]), size))
    return [*moved, size]


# -- the batch -----------------------------------------------------------------------------------


def _bad(problem: str, hint: str | None = _REST_HINT) -> BadInputError:
    return BadInputError(problem, hint=hint)


#: the inputs a local answer finds its rows by (``_Index.rows_of``)
_INPUTS = (("cui",), ("aui",), ("string",), ("sab", "code"))
#: what one result of a local answer is called, by the kind's ``local``
_NOUNS = {"atoms": "atom", "concepts": "concept", "crosswalk": "code"}


def _refused(lookup: Lookup, release: str) -> BadInputError | None:
    """Why MRCONSO.RRF cannot answer ``lookup`` (the UMLS file or REST request it needs)."""
    if lookup.local not in _NOUNS or lookup.inputs not in _INPUTS:
        return _bad(lookup.elsewhere(release))
    if isinstance(lookup, Search):  # the options of a search the file cannot honour
        return _search_needs_rest(lookup)
    return None


def _search_needs_rest(lookup: Search) -> BadInputError | None:
    found = None
    if lookup.search_type != "exact":
        found = f"search type {lookup.search_type}"
    elif lookup.input_type not in (None, "atom"):
        found = f"input type {lookup.input_type}"
    elif lookup.return_id_type not in (None, "concept"):
        found = f"return id type {lookup.return_id_type}"
    elif lookup.partial:
        found = "a partial search"
    elif lookup.include_obsolete or lookup.include_suppressible:
        found = "a search that includes obsolete or suppressible atoms"
    if found is not None:
        return _bad(
            f"{found} needs the UMLS REST API (GET /search/{{release}}): a local MRCONSO.RRF "
            "answers an exact search of atom strings for concepts only",
            hint="use search type exact, or " + _REST_HINT,
        )
    if lookup.semantic_types:
        return _bad("semantic types are in MRSTY.RRF, not in MRCONSO.RRF (UTS: GET /search/"
                    "{release}?semanticTypes=...)")  # fmt: skip
    return None


def _check_term(term: str) -> str:
    if not term.strip():
        raise BadInputError("the term to search for is empty", hint="give a term of one or "
                            "more words")  # fmt: skip
    odd = next((c for c in term if unicodedata.category(c) in ("Cc", "Cs")), None)
    if odd is not None:
        kind = "a lone surrogate" if unicodedata.category(odd) == "Cs" else "the control character"
        raise BadInputError(
            f"term {shortened(term)!r} contains {kind} U+{ord(odd):04X}, which no atom's string "
            "holds",
            hint="check the term",
        )
    return term


#: the check of each field of a lookup MRCONSO.RRF answers (``sabs``, ``target_sabs``: each SAB)
_CHECKS: dict[str, Callable[[str], object]] = {
    "cui": check_cui, "aui": check_aui, "sab": check_sab, "code": check_code, "string": _check_term,
}  # fmt: skip


def _check(lookup: Lookup) -> None:
    """The local checks of a lookup MRCONSO.RRF answers: its limit, then its fields in order."""
    if lookup.limit_or_default() < 0:
        raise BadInputError(
            f"--limit {lookup.limit_or_default()} is out of range: give 0 (no cap) or more"
        )
    for name in (f.name for f in dataclasses.fields(lookup)):
        value = getattr(lookup, name)
        if name in ("sabs", "target_sabs"):
            for sab in value:
                check_sab(sab)
        elif name in _CHECKS and value is not None:
            _CHECKS[name](value)


def _wants(lookups: Iterable[Lookup]) -> Wants:
    cuis: set[bytes] = set()
    codes: dict[bytes, set[bytes]] = defaultdict(set)
    whole: set[tuple[bytes, bytes]] = set()
    auis: set[bytes] = set()
    terms: set[bytes] = set()
    for lookup in lookups:
        ident = _ident(lookup)
        match lookup.inputs:
            case ("cui",):
                cuis.add(ident[0].encode())
            case ("aui",):
                auis.add(ident[0].encode())
            case ("string",):
                terms.add(ident[0].casefold().encode("utf-8", "surrogateescape"))
            case _:
                sab, code = ident[0].encode(), ident[1].encode()
                codes[sab].add(code)
                if lookup.local != "atoms":  # the concepts of its rows, taken whole
                    whole.add((sab, code))
    if len(codes) > _SAB_SEARCHES:
        patterns = [_code_pattern(list(codes), (c for found in codes.values() for c in found))]
    else:
        patterns = [_code_pattern([sab], found) for sab, found in sorted(codes.items())]
    return Wants(
        cuis=frozenset(cuis),
        codes=tuple(patterns),
        code_keys=frozenset((sab, code) for sab, found in codes.items() for code in found),
        whole=frozenset(whole),
        auis=_field_pattern(auis) if auis else None,
        aui_keys=frozenset(auis),
        terms=_field_pattern(terms) if terms else None,
    )


def _code_pattern(sabs: Sequence[bytes], codes: Iterable[bytes]) -> re.Pattern[bytes]:
    """A SAB, then a TTY, then one of ``codes`` (a trie). With one SAB, a search that skips
    ahead to the SAB's own letters, fast (a SAB field follows a ``|``, which no SAB holds, so no
    hit can hide another); with several, one that tries each ``|`` (6 times slower than one
    SAB, measured, and as fast for any number of SABs). Each hit is checked at its place
    (``_scan_piece``)."""
    trie = scan.sab_trie(sorted({c for c in codes if b"|" not in c}))
    head = re.escape(sabs[0]) if len(sabs) == 1 else rb"\|(?:" + scan.sab_trie(sorted(sabs)) + b")"
    return re.compile(head + rb"(?=\|[^|\n]*+\|(?:" + trie + rb")\|)")


def _field_pattern(words: Iterable[bytes]) -> re.Pattern[bytes]:
    """One of ``words`` as a whole field (after a ``|``, before the next)."""
    return re.compile(rb"\|(?:" + scan.sab_trie(w for w in words if b"|" not in w) + rb")(?=\|)")


def local_release(path: Path, release: str) -> tuple[MrconsoInput, str]:
    """The MRCONSO.RRF at ``path`` located (any form of SPEC section 7), and the release its
    answers name: ``release``, or for ``current`` (UTS's newest there) the one the file's folder
    or file names say; ``BadInputError`` when they say none."""
    check_release(release)
    inp = locate_mrconso(path)
    if release != "current":
        return inp, release
    if inp.release is None:
        raise BadInputError(
            "release current means the release the MRCONSO.RRF comes from, and no folder "
            "or file name of it says which (as 2025AB/META/MRCONSO.RRF or "
            "umls-2025AB-metathesaurus-full.zip do)",
            path=path,
            hint="name the release with --umls-release, such as 2025AB",
        )
    return inp, inp.release


def answer_many(
    path: Path,
    release: str,
    items: Sequence[tuple[str, Lookup]],
    *,
    progress: ProgressCallback | None = None,
    workers: int | None = None,
) -> list[Answer]:
    """One ``Answer`` per ``(input, lookup)``, in order, from one pass over the MRCONSO.RRF at
    ``path`` (any form of SPEC section 7).

    ``release`` is the release the file comes from (the links of the answers name it; ``current``
    is the one its folder or file names say, ``forms.MrconsoInput.release``);
    ``progress`` is told (bytes done, bytes in all); ``workers`` is the most worker processes a
    plain file is scanned by (default: the usable cores, at most 4). An unreadable or damaged
    file is ``BadInputError`` for the whole batch; a lookup the file cannot answer, or an
    identifier of the wrong form, is that input's ``bad_input`` answer."""
    path = Path(path)
    inp, release = local_release(path, release)
    ready: dict[int, Answer] = {}
    asked: list[tuple[int, Lookup]] = []
    for n, (given, lookup) in enumerate(items):
        try:
            refused = _refused(lookup, release)
            if refused is not None:
                raise refused
            _check(lookup)
        except BadInputError as err:
            ready[n] = Answer(given, Outcome.BAD_INPUT, message=str(err), hint=err.hint,
                              release=release, query=lookup.words()[0])  # fmt: skip
            continue
        asked.append((n, lookup))
    wants = _wants(lookup for _, lookup in asked)
    workers = workers if workers is not None else min(runtime.usable_cores(), MAX_WORKERS)
    report = _Passes(progress)
    try:
        rows = [] if wants.empty else _read(path, inp, wants, report, workers)
        index = _Index(rows, shapes.Links(release), path)
        codes = {c for _, lookup in asked for c in index.crosswalk_codes(lookup)}
        if codes:
            index.clusters = _code_rows(path, inp, codes, report, workers)
        if not wants.empty:
            report.end(inp.size)
    except OSError as err:
        raise BadInputError(f"cannot read: {err.strerror or err}", path=path) from None
    finally:
        close = getattr(progress, "close", None)
        if close is not None:
            close()  # its bar ends before any message, Ctrl-C included
    for n, lookup in asked:
        ready[n] = index.answer(items[n][0], lookup)
    return [ready[n] for n in range(len(items))]


# -- reading -------------------------------------------------------------------------------------


class _Passes:
    """The progress of one pass over the file, or of more once they are known to be needed:
    every pass together as a part of the file's size (a bar of a 2 GB file never says 4 GB),
    the end said by ``end`` only."""

    def __init__(self, progress: ProgressCallback | None) -> None:
        self.progress = progress
        self.passes, self.now = 1, 0
        self.read = 0  # bytes read by the last pass (a pipe's size is known at its end only)

    def __call__(self, done: int, total: int) -> None:
        self.read = done
        if self.progress is not None:
            part = (self.now * total + done) // self.passes
            self.progress(min(part, total - 1), total)

    def end(self, total: int | None) -> None:
        whole = total if total is not None else self.read
        if self.progress is not None:
            self.progress(whole, whole)


def _read(
    path: Path, inp: MrconsoInput, wants: Wants, report: _Passes, workers: int
) -> list[list[str]]:
    """The rows the lookups need, in file order: one pass, or two if the file is not sorted."""
    found = _one_pass(path, inp, wants, report, workers)
    if found.disorder is not None:
        if inp.kind == "pipe":
            raise BadInputError(
                f"is not sorted by CUI ({_order(found.disorder)}), and a pipe cannot be read twice",
                path=path,
                hint="pass the file itself: a file that is not sorted is read twice",
            )
        log.warning(
            "%s is not sorted by CUI (%s), as the MRCONSO.RRF NLM ships is: it is read a "
            "second time for the rows of the concepts found",
            path,
            _order(found.disorder),
        )
        report.passes, report.now = 2, 1
        again = Wants(cuis=frozenset(found.seeds | wants.cuis), sorted=False)
        rows = dict(found.rows)
        rows.update(_one_pass(path, inp, again, report, workers).rows)
        found.rows = sorted(rows.items())
    return [fields for _, fields in found.rows]


def _code_rows(
    path: Path, inp: MrconsoInput, codes: set[tuple[str, str]], report: _Passes, workers: int
) -> dict[tuple[str, str], list[_Row]]:
    """Every row of each of ``codes``, the codes the crosswalks give, each a cluster of all its
    rows (SPEC 12), in concepts the first pass did not take too: one more pass.

    Its codes are found by this module's own search, not by the regeneration's block scan
    (``scan.scan_block``): over a 4M-row file, the codes of 1,000 crosswalks (22 sources) took
    2.1 s of CPU here against 2.3 s there, and those of one source 0.37 s against 0.95 s
    (measured: that scan matches every row of a source named, this search only the codes')."""
    if inp.kind == "pipe":
        raise BadInputError(
            "a crosswalk's codes are clusters of all their atoms, found in a second pass, and "
            "a pipe cannot be read twice",
            path=path,
            hint="pass the file itself",
        )
    report.now, report.passes = report.passes, report.passes + 1
    wants = _wants(SourceAtoms(sab, code) for sab, code in codes)
    found = _one_pass(path, inp, dataclasses.replace(wants, sorted=False), report, workers)
    clusters: dict[tuple[str, str], list[_Row]] = defaultdict(list)
    for _, fields in found.rows:
        clusters[(fields[F_SAB], fields[F_CODE])].append(fields)
    return clusters


def _order(disorder: tuple[bytes, bytes]) -> str:
    before, after = (cui.decode("utf-8", "replace") for cui in disorder)
    return f"{after} comes after {before}"


def _one_pass(path: Path, inp: MrconsoInput, wants: Wants, report: _Passes, workers: int) -> Found:
    if inp.seekable_file:
        return _plain_pass(path, inp, wants, report, workers)
    return _stream_pass(path, inp, wants, report)


def _plain_pass(
    path: Path, inp: MrconsoInput, wants: Wants, report: _Passes, workers: int
) -> Found:
    size = inp.size or 0
    with open_regular(inp.path, what="--mrconso") as f:
        head = f.read(SNIFF_BYTES)
    first = sniff(head, at_end=len(head) == size, path=path)
    if first and report.now == 0:
        log.warning("%s", bom_note(path))
    report(0, size)
    why_not = why_alone(size, workers)
    if why_not is None:
        n = workers * 4  # more ranges than workers: finer progress, balanced load
        nominal = [first, *(size * i // n for i in range(1, n)), size]
        bounds = _concept_bounds(inp.path, nominal, size)
        parts = scan_ranges(
            inp.path, itertools.pairwise(bounds), first, wants, report, workers, scan_range
        )
        found = _joined(parts)
    else:
        log.info("scanning %s in this process: %s", path, why_not)
        found = scan_range(str(inp.path), first, size, wants, report, first)
    if found.bad is not None:
        offset, problem = found.bad
        raise BadInputError(
            problem, path=path, line=scan.line_number(inp.path, offset), hint=_DAMAGED_HINT
        )
    if found.unended and report.now == 0:
        log.warning("%s", unended_note(path))
    return found


def _joined(parts: list[Found]) -> Found:
    """The ranges' findings in file order, the order checked across them."""
    out = Found()
    for part in parts:
        if out.bad is None:
            out.bad = part.bad
        out.rows += part.rows
        out.seeds |= part.seeds
        out.unended |= part.unended
        if part.first is not None and part.last is not None:
            if out.disorder is None and out.last is not None and out.last >= part.first:
                out.disorder = (out.last, part.first)
            out.disorder = out.disorder or part.disorder
            out.last = part.last
    return out


def _stream_pass(path: Path, inp: MrconsoInput, wants: Wants, report: _Passes) -> Found:
    """A compressed file, parts, a zip or a pipe: decompressed by a thread as this one scans."""
    stop = threading.Event()
    total = inp.size
    out = Found()
    done = 0
    lines_before = 0  # in a pipe, which cannot be read again (``source.lines_before_offset``)
    counting = inp.kind == "pipe"
    warnings: list[str] = []

    def chunks() -> Iterator[tuple[int, bytes, int, int]]:
        nonlocal done
        for read, base, chunk, start, end in scan.lines_of(
            inp.blocks(stop), path, warnings, inp.parts
        ):
            done = read
            yield base, chunk, start, end

    try:
        with runtime.fast_thread_switching():  # the reader thread needs the GIL back often
            for base, data, lo, hi in _pieces(chunks(), scan.STREAM_PIECE):
                _scan_piece(base, data, lo, hi, wants, out)
                if out.bad is not None:
                    offset, problem = out.bad
                    stop.set()
                    line = lines_before + data.count(b"\n", lo, offset - base) + 1
                    if not counting:
                        line = lines_before_offset(path, offset) + 1
                    raise BadInputError(problem, path=path, line=line, hint=_DAMAGED_HINT)
                if counting:
                    lines_before += data.count(b"\n", lo, hi)
                if total is not None:
                    report(min(done, total), total)
                else:
                    report.read = done
    finally:
        stop.set()
    if report.now == 0:
        for warning in warnings:
            log.warning("%s", warning)
    return out


# -- the answers ---------------------------------------------------------------------------------

_Row = list[str]


def _fields(row: _Row) -> _Row:
    return row


def _ident(lookup: Lookup) -> list[str]:
    """The fields that name the lookup's input (``inputs``): a CUI, an AUI, a string, a code."""
    return [getattr(lookup, name) for name in lookup.inputs]


def _one(row: _Row | None) -> list[_Row]:
    return [] if row is None else [row]


class _Index:
    """The rows read, by CUI, by source code, by AUI and by casefolded string; the answers."""

    def __init__(self, rows: Sequence[_Row], links: shapes.Links, path: Path) -> None:
        self.links = links
        self.path = path
        self.by_cui: dict[str, list[_Row]] = defaultdict(list)
        self.by_code: dict[tuple[str, str], list[_Row]] = defaultdict(list)
        self.by_aui: dict[str, _Row] = {}
        self.by_string: dict[str, list[_Row]] = defaultdict(list)
        #: every row of each code a crosswalk gives (``_code_rows``)
        self.clusters: dict[tuple[str, str], list[_Row]] = {}
        for row in rows:
            self.by_cui[row[F_CUI]].append(row)
            self.by_code[(row[F_SAB], row[F_CODE])].append(row)
            self.by_aui.setdefault(row[F_AUI], row)
            self.by_string[row[F_STR].casefold()].append(row)

    def answer(self, given: str, lookup: Lookup) -> Answer:
        query, nothing = lookup.words()
        rule = lookup.rows()
        rows = [r for r in self.rows_of(lookup) if rule.counts(r[F_SUPPRESS], r[F_LAT])]
        limit = lookup.limit_or_default()
        results, lacking = self._results(lookup, rows, limit)
        cut = bool(limit) and len(results) > limit
        results = results[:limit] if cut else results
        if not results:
            note = "" if rule.suppress is None else _LEFT_OUT  # (unless it takes every row)
            return Answer(given, Outcome.NOT_FOUND, message=f"{self.path} has {lacking or nothing}"
                          f"{note}", release=self.links.release, query=query)  # fmt: skip
        noun = _NOUNS[lookup.local]
        message = f"{plural(len(results), noun)} for {query}, {self.path}" + (
            f"; --limit {limit} cut it" if cut else ""
        )
        return Answer(
            given,
            Outcome.FOUND,
            tuple(clean(r) for r in results),
            message=message,
            release=self.links.release,
            query=query,
            truncated=cut,
        )

    def rows_of(self, lookup: Lookup) -> list[_Row]:
        """The rows of the lookup's input (``inputs``): a concept's (in file order), an atom's,
        a string's, or a source code's (none for one never known, SPEC 12, but in a search of
        the CODE field, ``concepts``: NOCODE too)."""
        ident = _ident(lookup)
        match lookup.inputs:
            case ("cui",):
                return self.by_cui.get(ident[0], [])
            case ("aui",):
                return _one(self.by_aui.get(ident[0]))
            case ("string",):
                return self.by_string.get(ident[0].casefold(), [])
        known = lookup.local == "concepts" or shapes.known_code(ident[1])
        return self.by_code.get((ident[0], ident[1]), []) if known else []

    def _results(
        self, lookup: Lookup, rows: list[_Row], limit: int
    ) -> tuple[list[dict[str, Any]], str | None]:
        """(results, what the file lacks if not what ``words`` says) of the rows that count."""
        if getattr(lookup, "preferred", False):  # the row that names it (UTS is sent no sab)
            named = shapes.concept_name_row if lookup.inputs == ("cui",) else shapes.code_name_row
            return self._atoms(_one(named(rows, _fields))), None
        # its options: its sources (``sabs``, or ``sab`` as an option), its language
        sab, sabs, lat = (getattr(lookup, name, None) for name in ("sab", "sabs", "language"))
        rows = [r for r in rows if sab in (None, r[F_SAB]) and (not sabs or r[F_SAB] in sabs)
                and lat in (None, r[F_LAT])]  # fmt: skip
        if lookup.local == "atoms":
            return self._atoms(rows), None
        if not rows and lookup.inputs == ("sab", "code"):
            return [], "no atom of {} code {}".format(*_ident(lookup))
        if lookup.local == "concepts":
            return self._concepts(rows, limit), None
        # (a SAB no row can hold is not searched for: the rows read are all there are)
        clusters = [shapes.cluster_json(sab, code, self.clusters.get((sab, code),
                    self.by_code[(sab, code)]), self.links)
                    for sab, code in self.crosswalk_codes(lookup)]  # fmt: skip
        return clusters, None

    def crosswalk_codes(self, lookup: Lookup) -> list[tuple[str, str]]:
        """The codes a crosswalk gives (SPEC 12), from the concepts the pass took whole."""
        if lookup.local != "crosswalk":
            return []
        return shapes.crosswalk_codes(_ident(lookup)[0], self.rows_of(lookup),
                                      self.by_cui.__getitem__, _fields, rule=lookup.rows(),
                                      targets=getattr(lookup, "target_sabs", ()))  # fmt: skip

    def _atoms(self, rows: Iterable[_Row]) -> list[dict[str, Any]]:
        return [shapes.atom_json(r, self.links) for r in rows]

    def _concepts(self, hits: Sequence[_Row], limit: int) -> list[dict[str, Any]]:
        """One search result per concept of ``hits``, by CUI (one more than ``limit``, which
        tells a cut answer): named by SPEC 12's rule over all its rows (read whole, in file
        order), the fake's own (``shapes.concept_name_row``)."""
        results = []
        for cui in sorted({row[F_CUI] for row in hits})[: limit + 1 if limit else None]:
            named = shapes.concept_name_row(self.by_cui[cui], _fields)
            assert named is not None, "a concept of a hit has that hit's row"
            results.append(
                shapes.search_result_json(cui, named[F_STR], named[F_SAB], self.links.concept(cui))
            )
        return results
