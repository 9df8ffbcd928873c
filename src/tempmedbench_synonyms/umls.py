"""The terminology client in Python: ``Umls`` (SPEC section 11), what the ``umls`` commands do.

    with Umls("2025AB") as umls:                      # the UTS REST API (key in UMLS_API_KEY)
        umls.search("heart attack")                   # -> (SearchResult, ...)
        umls.crosswalk("SNOMEDCT_US", "22298006", target_sabs=["ICD10CM"])
        for answer in umls.search_many(terms):        # one Answer per input, in input order
            ...

Every request goes through the same client as a regeneration (the machine's rate budget,
retries, bounded answers, the self-checking cache, identifiers checked before anything is sent,
the key never shown); with ``mrconso=PATH`` the lookups a local MRCONSO.RRF can answer
(``atoms``, ``source_atoms``, ``atom``, ``crosswalk``, ``cuis``, an exact ``search``) are read
from the file, in one pass for a whole ``*_many`` batch, with no key and no network.

Answers are typed, immutable models (``uts.models``) that keep the object UTS sent (``raw``).
Not found is a value: ``None`` for one object, ``()`` for a list. A lookup that cannot be asked
raises ``BadInputError``; not authorised (``NotAuthorisedError``), unavailable
(``UnavailableError``) and Ctrl-C raise from every method. Each ``*_many`` takes an iterable
and yields one ``Answer(input, outcome, results, message, ...)`` per input, in input order, its
results typed; bad input and not found are answers, the rest raise.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable, Iterator, Sequence
from contextlib import closing
from dataclasses import replace
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from tempmedbench_synonyms.atoms import check_release
from tempmedbench_synonyms.constants import DEFAULT_RATE, DEFAULT_TIMEOUT, DEFAULT_WORKERS
from tempmedbench_synonyms.errors import BadInputError, Outcome
from tempmedbench_synonyms.lookups import (
    Answer,
    Atom,
    Atoms,
    Concept,
    Crosswalk,
    Cuis,
    Definitions,
    Direction,
    Hierarchy,
    InputType,
    Lookup,
    Relations,
    ReturnIdType,
    Search,
    SearchType,
    SemanticTypes,
    SourceAtoms,
    SourceConcept,
    Sources,
)
from tempmedbench_synonyms.options import as_path, stream_of
from tempmedbench_synonyms.uts.options import StrPath, UtsOptions

if TYPE_CHECKING:
    from tempmedbench_synonyms.secret import ApiKey
    from tempmedbench_synonyms.uts.cached import CachedUts
    from tempmedbench_synonyms.uts.models import (
        AtomRecord,
        ConceptRecord,
        Definition,
        HierarchyEntry,
        Relation,
        RootSource,
        SearchResult,
        SemanticTypeInfo,
        SourceAtomCluster,
    )

__all__ = ["Answer", "Umls"]

#: The inputs a ``*_many`` reads ahead of its answers from UTS: each chunk is one batch (asked
#: concurrently, identical lookups once), so that an endless iterable is answered as it goes.
MANY_AHEAD = 500
#: The same from a local MRCONSO.RRF, where each chunk costs one pass over the file.
LOCAL_MANY_AHEAD = 100_000


class Umls:
    """A session with the UMLS terminology: UTS, or a local MRCONSO.RRF (module docstring).

    ``release`` is a UMLS release (``2025AB``) or ``current``, resolved once. The key is
    ``api_key``, else the file ``api_key_file`` (or ``UMLS_API_KEY_FILE``) names, else
    ``UMLS_API_KEY``; the other keywords are the command line's options. ``progress``: ``True``
    for stderr, or a text stream (a ``*_many`` batch shows one bar). A context manager: its
    connections close at the end.

    The examples run in tests/test_umls.py against the fake UTS (``fake_url``) serving the
    invented UMLS files of fixtures/umls; against UTS, leave ``base_url`` out:

    >>> with Umls("2099AA", api_key="invented-key", base_url=fake_url, cache_dir=cache) as umls:
    ...     [(hit.ui, hit.name) for hit in umls.search("zephyr fever")]
    ...     [code.ui for code in umls.crosswalk("SNOMEDCT_US", "9990191001", target_sabs=["MSH"])]
    ...     [parent.name for parent in umls.hierarchy("parents", sab="SNOMEDCT_US",
    ...                                               code="9990101009")]
    ...     umls.concept("C0000001") is None  # not found is a value
    ...     [(a.input, a.outcome.value) for a in umls.concept_many(["C9000001", "XYZ"])]
    [('C9000001', 'Zephyr fever')]
    ['D990090']
    ['Wind fever']
    True
    [('C9000001', 'found'), ('XYZ', 'bad_input')]
    """

    def __init__(
        self,
        release: str = "current",
        *,
        api_key: str | None = None,
        api_key_file: StrPath | None = None,
        mrconso: StrPath | None = None,
        cache_dir: StrPath | None = None,
        rate: float = DEFAULT_RATE,
        workers: int = DEFAULT_WORKERS,
        timeout: float = DEFAULT_TIMEOUT,
        offline: bool = False,
        refresh: bool = False,
        base_url: str | None = None,
        progress: bool | TextIO = False,
    ) -> None:
        if type(release) is not str:
            raise TypeError(f"release must be a string, not {type(release).__name__}")
        if api_key is not None and type(api_key) is not str:
            raise TypeError(f"api_key must be a string, not {type(api_key).__name__}")
        self.release = check_release(release)
        self.mrconso: Path | None = as_path("mrconso", mrconso, optional=True)
        self.options = UtsOptions.of(
            api_key_file=api_key_file, cache_dir=cache_dir, rate=rate, workers=workers,
            timeout=timeout, offline=offline, refresh=refresh, base_url=base_url,
        )  # fmt: skip
        self._progress = stream_of(progress)
        self._key = _key(api_key)
        self._uts: CachedUts | None = None
        if self.mrconso is None:
            self.options.check()  # an option out of range: BadInputError now, not at the first ask

    def __repr__(self) -> str:
        where = f"mrconso={str(self.mrconso)!r}" if self.mrconso else f"base_url={self.url!r}"
        return f"Umls(release={self.release!r}, {where})"

    @property
    def url(self) -> str:
        """The UTS base URL in force (its user name, query and fragment masked)."""
        from tempmedbench_synonyms.secret import redact_url

        return redact_url(self.options.url)

    def __enter__(self) -> Umls:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connections (they open again if the session is used again)."""
        if self._uts is not None:
            self._uts.close()

    # -- many at once ------------------------------------------------------------------------

    def answer_many(self, items: Iterable[tuple[str, Lookup]]) -> Iterator[Answer]:
        """One ``Answer`` per ``(input, lookup)`` (``lookups``), in input order, its results as
        UTS sent them (``lookups.clean``): what every method and command is made of.

        A list or tuple is one batch; any other iterable is read ``MANY_AHEAD`` inputs at a
        time (``LOCAL_MANY_AHEAD`` from a local file), each chunk a batch of its own."""
        for chunk in self._chunks(items):
            yield from self._batch(chunk)

    def _chunks(self, items: Iterable[Any]) -> Iterator[Sequence[Any]]:
        """``items`` in chunks of a bounded size: a list or tuple (already in memory) whole."""
        if isinstance(items, (list, tuple)):
            if items:
                yield items
            return
        ahead = MANY_AHEAD if self.mrconso is None else LOCAL_MANY_AHEAD
        it = iter(items)
        while chunk := list(islice(it, ahead)):
            yield chunk

    def _batch(self, items: Sequence[tuple[str, Lookup]]) -> Generator[Answer, None, None]:
        """The answers of one chunk: from a local file in one pass, else from UTS as one batch
        (``uts.batch``: concurrent, identical lookups asked once, one progress bar)."""
        if self.mrconso is not None:
            yield from self._local(items)
            return
        from tempmedbench_synonyms.uts import batch
        from tempmedbench_synonyms.uts.options import check_workers

        uts = self.session()
        many = batch.answer_many(
            uts, self.release, items, workers=check_workers(self.options.workers),
            progress=self._progress,
        )  # fmt: skip
        with closing(many):
            yield from many

    def session(self) -> CachedUts:
        """The cached UTS client, opened on first use (``uts.session.open_uts``)."""
        if self._uts is None:
            from tempmedbench_synonyms.uts.session import open_uts

            self._uts = open_uts(self.options, key=self._key)
        return self._uts

    def _local(self, items: Sequence[tuple[str, Lookup]]) -> Iterator[Answer]:
        """The answers of a local MRCONSO.RRF: one pass for the whole batch (``current``: the
        release the file's names say)."""
        from tempmedbench_synonyms.mrconso.lookup import answer_many
        from tempmedbench_synonyms.progress import scan_progress

        assert self.mrconso is not None
        progress = scan_progress(self._progress, self.mrconso.name)
        try:
            answers = answer_many(self.mrconso, self.release, items, progress=progress)
        finally:
            progress.close()
        yield from answers

    def _typed(self, items: Iterable[tuple[str, Lookup]]) -> Iterator[Answer]:
        """``answer_many`` with each answer's results as typed models."""
        from tempmedbench_synonyms.uts.models import read_results

        for chunk in self._chunks(items):
            with closing(self._batch(chunk)) as answers:  # stopped early: its workers stop too
                for (_, lookup), found in zip(chunk, answers, strict=True):
                    yield replace(found, results=read_results(found, lookup))

    def _one(self, input: str, lookup: Lookup) -> tuple[Any, ...]:
        """The typed results of one lookup: ``()`` when not found; BadInputError if it cannot
        be asked."""
        (found,) = self._typed([(input, lookup)])
        if found.outcome is Outcome.BAD_INPUT:
            raise BadInputError(found.message, hint=found.hint)
        return found.results

    # -- the lookups ---------------------------------------------------------------------------

    def search(
        self,
        string: str,
        *,
        search_type: SearchType = "words",
        input_type: InputType | None = None,
        return_id_type: ReturnIdType | None = None,
        sabs: Sequence[str] = (),
        semantic_types: Sequence[str] = (),
        partial: bool = False,
        include_obsolete: bool = False,
        include_suppressible: bool = False,
        language: str | None = None,
        limit: int | None = None,
    ) -> tuple[SearchResult, ...]:
        """``/search/{release}?string=...``: the results in UTS's order (at most ``limit``,
        25 by default, 0 for all)."""
        return self._one(string, self._search(string, **_without(locals(), "string")))

    def search_many(self, strings: Iterable[str], **options: Any) -> Iterator[Answer]:
        """``search`` of each string (the same keywords)."""
        return self._typed((s, self._search(s, **options)) for s in strings)

    @staticmethod
    def _search(string: str, **options: Any) -> Search:
        return Search(_text("string", string), **_tuples(options, "sabs", "semantic_types"))

    def cuis(self, sab: str, code: str, *, limit: int | None = None) -> tuple[SearchResult, ...]:
        """The concepts a source code belongs to (code to CUI)."""
        return self._one(f"{sab} {code}", Cuis(sab, code, limit))

    def cuis_many(
        self, sab: str, codes: Iterable[str], *, limit: int | None = None
    ) -> Iterator[Answer]:
        """``cuis`` of each code of ``sab``."""
        return self._typed((f"{sab} {c}", Cuis(sab, c, limit)) for c in codes)

    def crosswalk(
        self, sab: str, code: str, *, target_sabs: Sequence[str] = (), limit: int | None = None
    ) -> tuple[SourceAtomCluster, ...]:
        """The codes of other sources (of ``target_sabs``) that share a concept with a code."""
        return self._one(f"{sab} {code}", Crosswalk(sab, code, tuple(target_sabs), limit))

    def crosswalk_many(
        self,
        sab: str,
        codes: Iterable[str],
        *,
        target_sabs: Sequence[str] = (),
        limit: int | None = None,
    ) -> Iterator[Answer]:
        """``crosswalk`` of each code of ``sab``."""
        targets = tuple(target_sabs)
        return self._typed((f"{sab} {c}", Crosswalk(sab, c, targets, limit)) for c in codes)

    def definitions(
        self, cui: str, *, sabs: Sequence[str] = (), limit: int | None = None
    ) -> tuple[Definition, ...]:
        """A concept's definitions (of ``sabs``)."""
        return self._one(cui, Definitions(cui, tuple(sabs), limit))

    def definitions_many(
        self, cuis: Iterable[str], *, sabs: Sequence[str] = (), limit: int | None = None
    ) -> Iterator[Answer]:
        """``definitions`` of each concept."""
        return self._typed((c, Definitions(c, tuple(sabs), limit)) for c in cuis)

    def relations(
        self,
        cui: str | None = None,
        *,
        sab: str | None = None,
        code: str | None = None,
        aui: str | None = None,
        relation_labels: Sequence[str] = (),
        sabs: Sequence[str] = (),
        limit: int | None = None,
    ) -> tuple[Relation, ...]:
        """The relations of a concept, a source code (``sab`` and ``code``) or an atom
        (``aui``), as UTS gives them (never inverted)."""
        lookup = Relations(cui, sab, code, aui, tuple(relation_labels), tuple(sabs), limit)
        return self._one(_input_of(lookup), lookup)

    def relations_many(
        self,
        cuis: Iterable[str],
        *,
        relation_labels: Sequence[str] = (),
        sabs: Sequence[str] = (),
        limit: int | None = None,
    ) -> Iterator[Answer]:
        """``relations`` of each concept."""
        labels, of = tuple(relation_labels), tuple(sabs)
        return self._typed((c, Relations(c, None, None, None, labels, of, limit)) for c in cuis)

    def semantic_types(self, cui: str, *, details: bool = False) -> tuple[SemanticTypeInfo, ...]:
        """A concept's semantic types; with ``details``, each one's tree number too."""
        return self._one(cui, SemanticTypes(cui, details))

    def semantic_types_many(
        self, cuis: Iterable[str], *, details: bool = False
    ) -> Iterator[Answer]:
        """``semantic_types`` of each concept."""
        return self._typed((c, SemanticTypes(c, details)) for c in cuis)

    def source_concept(self, sab: str, code: str) -> SourceAtomCluster | None:
        """A source code: its name, whether it is obsolete, its atom count and links."""
        found: SourceAtomCluster | None = _first(
            self._one(f"{sab} {code}", SourceConcept(sab, code))
        )
        return found

    def source_concept_many(self, sab: str, codes: Iterable[str]) -> Iterator[Answer]:
        """``source_concept`` of each code of ``sab``."""
        return self._typed((f"{sab} {c}", SourceConcept(sab, c)) for c in codes)

    def hierarchy(
        self,
        direction: Direction,
        *,
        sab: str | None = None,
        code: str | None = None,
        aui: str | None = None,
        limit: int | None = None,
    ) -> tuple[HierarchyEntry, ...]:
        """The ``parents``, ``children``, ``ancestors`` or ``descendants`` of a source code or
        of an atom."""
        lookup = Hierarchy(direction, sab, code, aui, limit)
        return self._one(_input_of(lookup), lookup)

    def hierarchy_many(
        self, direction: Direction, sab: str, codes: Iterable[str], *, limit: int | None = None
    ) -> Iterator[Answer]:
        """``hierarchy`` of each code of ``sab``."""
        return self._typed((f"{sab} {c}", Hierarchy(direction, sab, c, None, limit)) for c in codes)

    def sources(self) -> tuple[RootSource, ...]:
        """``/metadata/{release}/sources``: the sources of the release (asked with no key)."""
        return self._one("sources", Sources())

    def concept(self, cui: str) -> ConceptRecord | None:
        """A concept: its name, status, atom count and semantic types."""
        found: ConceptRecord | None = _first(self._one(cui, Concept(cui)))
        return found

    def concept_many(self, cuis: Iterable[str]) -> Iterator[Answer]:
        """``concept`` of each concept."""
        return self._typed((c, Concept(c)) for c in cuis)

    def atoms(
        self,
        cui: str,
        *,
        sab: str | None = None,
        preferred: bool = False,
        limit: int | None = None,
    ) -> tuple[AtomRecord, ...]:
        """A concept's English atoms, obsolete and suppressible ones left out (of ``sab``);
        with ``preferred``, its one preferred atom."""
        return self._one(cui, Atoms(cui, sab, preferred, limit))

    def atoms_many(
        self,
        cuis: Iterable[str],
        *,
        sab: str | None = None,
        preferred: bool = False,
        limit: int | None = None,
    ) -> Iterator[Answer]:
        """``atoms`` of each concept."""
        return self._typed((c, Atoms(c, sab, preferred, limit)) for c in cuis)

    def source_atoms(
        self, sab: str, code: str, *, preferred: bool = False, limit: int | None = None
    ) -> tuple[AtomRecord, ...]:
        """A source code's English atoms (``preferred``: as for ``atoms``)."""
        return self._one(f"{sab} {code}", SourceAtoms(sab, code, preferred, limit))

    def source_atoms_many(
        self,
        sab: str,
        codes: Iterable[str],
        *,
        preferred: bool = False,
        limit: int | None = None,
    ) -> Iterator[Answer]:
        """``source_atoms`` of each code of ``sab``."""
        return self._typed((f"{sab} {c}", SourceAtoms(sab, c, preferred, limit)) for c in codes)

    def atom(self, aui: str) -> AtomRecord | None:
        """One atom by its AUI."""
        found: AtomRecord | None = _first(self._one(aui, Atom(aui)))
        return found

    def atom_many(self, auis: Iterable[str]) -> Iterator[Answer]:
        """``atom`` of each AUI."""
        return self._typed((a, Atom(a)) for a in auis)


def _key(api_key: str | None) -> ApiKey | None:
    if api_key is None:
        return None
    from tempmedbench_synonyms.secret import ApiKey

    return ApiKey(api_key.strip())


def _text(name: str, value: Any) -> str:
    if type(value) is not str:
        raise TypeError(f"{name} must be a string, not {type(value).__name__}")
    return value


def _without(values: dict[str, Any], *names: str) -> dict[str, Any]:
    return {k: v for k, v in values.items() if k not in {"self", *names}}


def _tuples(options: dict[str, Any], *names: str) -> dict[str, Any]:
    """``options`` with the values of ``names`` as tuples (a ``str`` is one value, not its
    letters)."""
    out = dict(options)
    for name in names:
        if name in out:
            value = out[name]
            out[name] = (value,) if isinstance(value, str) else tuple(value)
    return out


def _input_of(lookup: Relations | Hierarchy) -> str:
    """What names the input of a lookup that takes a CUI, a source code or an AUI."""
    if isinstance(lookup, Relations) and lookup.cui is not None:
        return lookup.cui
    if lookup.aui is not None:
        return lookup.aui
    return f"{lookup.sab} {lookup.code}"


def _first(results: tuple[Any, ...]) -> Any:
    return results[0] if results else None
