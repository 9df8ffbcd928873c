"""The terminology client in Python: ``Umls`` (SPEC section 11), what the ``umls`` commands do,
over UTS or the user's own files (``meta=PATH``, SPEC 12). The guide: README.md, "From Python";
messages name the Python arguments (``limit=-1``), not the flags.
"""

from __future__ import annotations

import re
import reprlib
import typing
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import fields, replace
from functools import cache
from itertools import islice
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

from tempmedbench_synonyms import terminology
from tempmedbench_synonyms.atoms import check_release
from tempmedbench_synonyms.config import resolve_index_dir
from tempmedbench_synonyms.constants import (
    API_KEY_ENV,
    API_KEY_FILE_ENV,
    DEFAULT_RATE,
    DEFAULT_TIMEOUT,
    DEFAULT_WORKERS,
    PROFILE_URL,
)
from tempmedbench_synonyms.errors import BadInputError, Outcome, TempMedBenchError
from tempmedbench_synonyms.lookups import (
    KINDS,
    Answer,
    Atom,
    Atoms,
    Concept,
    Crosswalk,
    Cuis,
    Definitions,
    Hierarchy,
    Lookup,
    Relations,
    Search,
    SemanticTypes,
    SourceAtoms,
    SourceConcept,
    Sources,
)
from tempmedbench_synonyms.options import stream_of
from tempmedbench_synonyms.paths import Direction, InputType, ReturnIdType, SearchType
from tempmedbench_synonyms.terminology import MetaTerminology, Terminology, UtsTerminology
from tempmedbench_synonyms.uts.options import Local, StrPath, UtsOptions, _typed

if TYPE_CHECKING:
    from tempmedbench_synonyms.secret import ApiKey
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

__all__ = ["Answer", "Results", "Umls"]

_T = TypeVar("_T")
_L = TypeVar("_L", bound=Lookup)


class Umls:
    """A session with the UMLS terminology: UTS, or the user's own files (module docstring).

    ``release`` is a UMLS release (``2025AB``) or ``current``, resolved once. The key is
    ``api_key``, else the file ``api_key_file`` (or ``UMLS_API_KEY_FILE``) names, else
    ``UMLS_API_KEY``; the other keywords are the command line's options. ``progress``: ``True``
    for stderr, or a text stream. A context manager: its connections close at the end.

    The examples run in tests/test_umls.py against the fake UTS (``fake_url``); against UTS, leave
    ``base_url`` out:

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
        meta: StrPath | None = None,
        index_dir: StrPath | None = None,
        cache_dir: StrPath | None = None,
        rate: float = DEFAULT_RATE,
        workers: int = DEFAULT_WORKERS,
        timeout: float = DEFAULT_TIMEOUT,
        offline: bool = False,
        refresh: bool = False,
        base_url: str | None = None,
        progress: bool | TextIO = False,
    ) -> None:
        given = _arguments(locals(), "progress")
        with _in_python_words():
            # Every type first, in the signature's order (as regenerate's keywords), then values.
            kinds = _argument_kinds()
            typed = {name: _typed(name, kinds[name], value) for name, value in given.items()}
            stream = stream_of(progress)
            release = check_release(typed.pop("release"))
            api_key = typed.pop("api_key")
            local = Local(**{f.name: typed.pop(f.name) for f in fields(Local)})
            self._start(release, local, UtsOptions(**typed), stream, api_key)

    @classmethod
    def of(
        cls,
        options: UtsOptions,
        release: str = "current",
        *,
        local: Local = Local(),
        progress: bool | TextIO = False,
    ) -> Umls:
        """A session on the options a command parsed, taken whole; messages name the flags."""
        umls = cls.__new__(cls)
        umls._start(check_release(release), local, options, stream_of(progress), None)
        return umls

    def _start(
        self,
        release: str,
        local: Local,
        options: UtsOptions,
        progress: TextIO | None,
        api_key: str | None,
    ) -> None:
        """Take the checked release and options; the backend is the local index's or UTS's."""
        self.release, self.local, self.options = release, local, options
        self._progress = _open(progress)
        key = _key(api_key)
        path = local.meta or local.mrconso
        if local.meta is not None and local.mrconso is not None:
            raise BadInputError(
                "--meta and --mrconso contradict each other: give one",
                hint="--meta PATH takes a META folder or a release zip; --mrconso PATH one "
                "MRCONSO.RRF (a META of it alone)",
            )
        if path is None:
            self._backend: Terminology = UtsTerminology(options, release, key)
            return
        options.say_ignored("--meta" if local.meta else "--mrconso", used=("--cache-dir",))
        index_dir = resolve_index_dir(local.index_dir, options.cache_dir)
        self._backend = MetaTerminology(path, release, mrconso_only=local.meta is None,
                                        index_dir=index_dir, progress=self._progress)  # fmt: skip

    def __repr__(self) -> str:
        path = self.local.meta or self.local.mrconso
        name = "meta" if self.local.meta else "mrconso"
        where = f"base_url={self.url!r}" if path is None else f"{name}={str(path)!r}"
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
        self._backend.close()

    def warnings(self) -> list[str]:
        """``--json``'s ``warnings``: why this run does not share the machine's rate budget."""
        return self._backend.warnings()

    def summary(self) -> str | None:
        """The requests sent and cache answers so far, in a line; ``None`` from a local file."""
        return self._backend.summary()

    def plan(
        self, items: Sequence[tuple[str, Lookup]], *, unread: int = 0
    ) -> tuple[str, dict[str, Any]]:
        """The dry run of ``answer_many(items)`` (``unread``: more bad inputs), as a line and as
        JSON; nothing is sent or written."""
        return self._backend.plan(items, unread=unread)

    def answer_many(self, items: Iterable[tuple[str, Lookup]]) -> Generator[Answer, None, None]:
        """One ``Answer`` per ``(input, lookup)``, in input order, its results as UTS sent them:
        what every method and command is made of.

        A list or tuple is one batch; another iterable is read ``MANY_AHEAD`` inputs a batch.
        """
        for chunk in self._chunks(items):
            yield from self._batch(chunk)

    def _chunks(self, items: Iterable[Any]) -> Iterator[Sequence[Any]]:
        """``items`` in chunks of a bounded size: a list or tuple (already in memory) whole."""
        if isinstance(items, (list, tuple)):
            if items:
                yield items
            return
        it = iter(items)
        while chunk := list(islice(it, terminology.MANY_AHEAD)):
            yield chunk

    def _batch(self, items: Sequence[tuple[str, Lookup]]) -> Generator[Answer, None, None]:
        """The answers of one chunk, from the backend (``terminology``)."""
        _open(self._progress)  # closed since: said before anything is asked
        yield from self._backend.answer(items, self._progress)  # closed with this generator

    def _typed(self, items: Iterable[tuple[str, Lookup] | Answer]) -> Iterator[Answer]:
        """``answer_many`` with typed results and Python's words; an ``Answer`` among ``items`` (an
        input that is no string) is given as it is."""
        from tempmedbench_synonyms.uts.models import read_results

        with _in_python_words():
            for chunk in self._chunks(items):
                asked = [item for item in chunk if not isinstance(item, Answer)]
                with closing(self._batch(asked)) as answers:  # stopped early: its workers too
                    paired = zip(asked, answers, strict=True)
                    for item in chunk:
                        if isinstance(item, Answer):
                            yield item
                            continue
                        (_, lookup), found = next(paired)
                        yield replace(
                            _answer_in_python_words(found), results=read_results(found, lookup)
                        )
                    if asked:
                        next(paired, None)  # the batch runs to its end: its last progress line

    def _one(self, kind: type[Lookup], /, **given: Any) -> Results[Any]:
        """Typed results of ``_lookup(kind, ...)``: ``()`` if none; BadInputError if unaskable."""
        lookup = _lookup(kind, **given)
        (found,) = self._typed([(_input_of(lookup), lookup)])
        if found.outcome is Outcome.BAD_INPUT:
            raise BadInputError(found.message, hint=found.hint)
        return Results(found.results, truncated=found.truncated)

    def _each(
        self, name: str, values: Iterable[Any], kind: type[Lookup], /, **given: Any
    ) -> Iterator[Answer]:
        """``_lookup(kind, ...)`` of each of ``values``, the field ``name`` names in the plural
        (``codes``: ``code``, ``SAB CODE`` its input); a non-string is its own ``bad_input``
        answer; a str where the iterable goes is a TypeError at once."""
        lookup = _lookup(kind, **given)
        if isinstance(values, (str, bytes)):
            raise TypeError(
                f"{name} must be an iterable of strings, not one {type(values).__name__} (read "
                "letter by letter): put it in a list"
            )
        try:
            iter(values)
        except TypeError:
            got = type(values).__name__
            raise TypeError(f"{name} must be an iterable of strings, not {got}") from None
        field = name[:-1]
        where = f"{getattr(lookup, 'sab', '')} " if field == "code" else ""

        def each() -> Iterator[tuple[str, Lookup] | Answer]:
            for value in values:
                if isinstance(value, str):
                    yield f"{where}{value}", replace(lookup, **{field: value})
                    continue
                shown = reprlib.repr(value)  # bounded, whatever the object
                yield Answer(
                    f"{where}{shown}", Outcome.BAD_INPUT, release=self.release,
                    message=f"{name} holds {shown}, not a string: each input must be a string",
                )  # fmt: skip

        # a list or tuple stays one batch (answer_many); any other iterable is read as it goes
        return self._typed(list(each()) if isinstance(values, (list, tuple)) else each())

    # -- the lookups: each a ``lookups`` kind, its arguments checked by ``_lookup`` -----------

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
    ) -> Results[SearchResult]:
        """``/search/{release}?string=...``: the results in UTS's order (at most ``limit``,
        25 by default, 0 for all; ``truncated`` says whether it cut them)."""
        given = _arguments(locals(), "string", "limit")  # the limit is checked first
        return self._one(Search, limit=limit, **given, string=string)

    def search_many(self, strings: Iterable[str], **options: Any) -> Iterator[Answer]:
        """``search`` of each string (the same keywords)."""
        for name in sorted(options.keys() - _SEARCH_KEYWORDS):  # (not left to name _lookup)
            raise TypeError(f"Umls.search_many() got an unexpected keyword argument {name!r}")
        limit = options.pop("limit", None)
        return self._each("strings", strings, Search, limit=limit, string="", **options)

    def cuis(self, sab: str, code: str, *, limit: int | None = None) -> Results[SearchResult]:
        """The concepts a source code belongs to (code to CUI)."""
        return self._one(Cuis, sab=sab, code=code, limit=limit)

    def cuis_many(
        self, sab: str, codes: Iterable[str], *, limit: int | None = None
    ) -> Iterator[Answer]:
        """``cuis`` of each code of ``sab``."""
        return self._each("codes", codes, Cuis, sab=sab, limit=limit)

    def crosswalk(
        self, sab: str, code: str, *, target_sabs: Sequence[str] = (), limit: int | None = None
    ) -> Results[SourceAtomCluster]:
        """The codes of other sources (of ``target_sabs``) that share a concept with a code."""
        return self._one(Crosswalk, sab=sab, code=code, target_sabs=target_sabs, limit=limit)

    def crosswalk_many(
        self,
        sab: str,
        codes: Iterable[str],
        *,
        target_sabs: Sequence[str] = (),
        limit: int | None = None,
    ) -> Iterator[Answer]:
        """``crosswalk`` of each code of ``sab``."""
        return self._each("codes", codes, Crosswalk, sab=sab, limit=limit, target_sabs=target_sabs)

    def definitions(
        self, cui: str, *, sabs: Sequence[str] = (), limit: int | None = None
    ) -> Results[Definition]:
        """A concept's definitions (of ``sabs``)."""
        return self._one(Definitions, cui=cui, sabs=sabs, limit=limit)

    def definitions_many(
        self, cuis: Iterable[str], *, sabs: Sequence[str] = (), limit: int | None = None
    ) -> Iterator[Answer]:
        """``definitions`` of each concept."""
        return self._each("cuis", cuis, Definitions, sabs=sabs, limit=limit)

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
    ) -> Results[Relation]:
        """The relations of a concept, a source code (``sab`` and ``code``) or an atom (``aui``),
        as UTS gives them (never inverted)."""
        return self._one(Relations, **_arguments(locals()))

    def relations_many(
        self,
        cuis: Iterable[str],
        *,
        relation_labels: Sequence[str] = (),
        sabs: Sequence[str] = (),
        limit: int | None = None,
    ) -> Iterator[Answer]:
        """``relations`` of each concept."""
        return self._each("cuis", cuis, Relations, **_arguments(locals(), "cuis"))

    def semantic_types(self, cui: str, *, details: bool = False) -> Results[SemanticTypeInfo]:
        """A concept's semantic types; with ``details``, each one's tree number too."""
        return self._one(SemanticTypes, cui=cui, details=details)

    def semantic_types_many(
        self, cuis: Iterable[str], *, details: bool = False
    ) -> Iterator[Answer]:
        """``semantic_types`` of each concept."""
        return self._each("cuis", cuis, SemanticTypes, details=details)

    def source_concept(self, sab: str, code: str) -> SourceAtomCluster | None:
        """A source code: its name, whether it is obsolete, its atom count and links."""
        return _first(self._one(SourceConcept, sab=sab, code=code))

    def source_concept_many(self, sab: str, codes: Iterable[str]) -> Iterator[Answer]:
        """``source_concept`` of each code of ``sab``."""
        return self._each("codes", codes, SourceConcept, sab=sab)

    def hierarchy(
        self,
        direction: Direction,
        *,
        sab: str | None = None,
        code: str | None = None,
        aui: str | None = None,
        limit: int | None = None,
    ) -> Results[HierarchyEntry]:
        """The ``parents``, ``children``, ``ancestors`` or ``descendants`` of a code or an atom."""
        return self._one(Hierarchy, **_arguments(locals()))

    def hierarchy_many(
        self, direction: Direction, sab: str, codes: Iterable[str], *, limit: int | None = None
    ) -> Iterator[Answer]:
        """``hierarchy`` of each code of ``sab``."""
        sab = _text("sab", sab)
        return self._each("codes", codes, Hierarchy, direction=direction, sab=sab, limit=limit)

    def sources(self) -> Results[RootSource]:
        """``/metadata/{release}/sources``: the sources of the release (asked with no key)."""
        return self._one(Sources)

    def concept(self, cui: str) -> ConceptRecord | None:
        """A concept: its name, status, atom count and semantic types."""
        return _first(self._one(Concept, cui=cui))

    def concept_many(self, cuis: Iterable[str]) -> Iterator[Answer]:
        """``concept`` of each concept."""
        return self._each("cuis", cuis, Concept)

    def atoms(
        self,
        cui: str,
        *,
        sab: str | None = None,
        preferred: bool = False,
        limit: int | None = None,
    ) -> Results[AtomRecord]:
        """A concept's English atoms (of ``sab``), obsolete and suppressible ones left out; with
        ``preferred``, its one preferred atom."""
        return self._one(Atoms, **_arguments(locals()))

    def atoms_many(
        self,
        cuis: Iterable[str],
        *,
        sab: str | None = None,
        preferred: bool = False,
        limit: int | None = None,
    ) -> Iterator[Answer]:
        """``atoms`` of each concept."""
        return self._each("cuis", cuis, Atoms, **_arguments(locals(), "cuis"))

    def source_atoms(
        self, sab: str, code: str, *, preferred: bool = False, limit: int | None = None
    ) -> Results[AtomRecord]:
        """A source code's English atoms (``preferred``: as for ``atoms``)."""
        return self._one(SourceAtoms, **_arguments(locals()))

    def source_atoms_many(
        self,
        sab: str,
        codes: Iterable[str],
        *,
        preferred: bool = False,
        limit: int | None = None,
    ) -> Iterator[Answer]:
        """``source_atoms`` of each code of ``sab``."""
        return self._each("codes", codes, SourceAtoms, **_arguments(locals(), "codes"))

    def atom(self, aui: str) -> AtomRecord | None:
        """One atom by its AUI."""
        return _first(self._one(Atom, aui=aui))

    def atom_many(self, auis: Iterable[str]) -> Iterator[Answer]:
        """``atom`` of each AUI."""
        return self._each("auis", auis, Atom)


class Results(tuple[_T, ...]):
    """The results of one lookup: a tuple (``()`` when not found) that says ``truncated``."""

    _truncated: bool

    def __new__(cls, items: Iterable[_T] = (), *, truncated: bool = False) -> Results[_T]:
        new = super().__new__(cls, items)
        new._truncated = truncated
        return new

    @property
    def truncated(self) -> bool:
        """Whether ``limit`` cut the results (there are more)."""
        return self._truncated


def _key(api_key: str | None) -> ApiKey | None:
    if api_key is None:
        return None
    from tempmedbench_synonyms.secret import ApiKey

    if not api_key.strip():  # sent, it would be refused by UTS with a 401: say so before
        raise BadInputError(
            "api_key is empty",
            key="api_key",
            hint=f"give your UMLS API key ({PROFILE_URL}), or leave api_key out to read "
            f"{API_KEY_ENV} or {API_KEY_FILE_ENV}",
        )
    return ApiKey(api_key.strip())


def _open(stream: TextIO | None) -> TextIO | None:
    """``stream``, unless it is closed (BadInputError naming ``progress``)."""
    if stream is not None and getattr(stream, "closed", False) is True:
        raise BadInputError(
            "progress is a closed stream",
            key="progress",
            hint="give an open text stream, True (stderr) or False (none)",
        )
    return stream


@cache
def _argument_kinds() -> dict[str, Any]:
    """The type of each argument of ``Umls`` but ``progress``: its own two, and the fields of
    ``Local`` and ``UtsOptions`` it fills (``uts.options._typed`` checks each)."""
    return {"release": str, "api_key": str | None,
            **typing.get_type_hints(Local), **typing.get_type_hints(UtsOptions)}  # fmt: skip


def _text(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, not {type(value).__name__}")
    return value


def _maybe_text(name: str, value: Any) -> str | None:
    return None if value is None else _text(name, value)


def _limit(name: str, value: Any) -> int | None:
    """``limit``: ``None`` or a whole number (a bool is no number of results)."""
    if value is None or type(value) is int:
        return value
    raise TypeError(f"{name} must be a whole number or None, not {type(value).__name__}")


#: The most names a list argument (``sabs``, ``relation_labels``...) is read to.
_MAX_NAMES = 10_000


def _names(name: str, value: Any) -> tuple[str, ...]:
    """Sources or labels as a tuple: a ``str`` is one of them, not its letters."""
    if isinstance(value, str):
        return (value,)
    try:
        values = tuple(islice(value, _MAX_NAMES + 1))  # (an endless iterable is refused)
    except TypeError:
        kind = type(value).__name__
        raise TypeError(f"{name} must be a string or an iterable of strings, not {kind}") from None
    if len(values) > _MAX_NAMES:
        raise BadInputError(
            f"{name} holds more than {_MAX_NAMES:,} names",
            key=name,
            hint=f"give {name} the names themselves, at most {_MAX_NAMES:,} (a list, a tuple or "
            "a set)",
        )
    for item in values:
        if not isinstance(item, str):
            raise TypeError(f"{name} must hold strings, not {type(item).__name__}")
    return values


def _flag(name: str, value: Any) -> bool:
    """A flag: ``True`` or ``False`` (``"false"`` is no flag, though Python takes it as true)."""
    if type(value) is bool:
        return value
    raise TypeError(f"{name} must be True or False, not {type(value).__name__}")


#: The check of an argument, by the type of the kind's field it fills (its annotation's text;
#: every field's type is here, a test says so); a choice's value is checked by the kind itself.
_CHECKS: dict[str, Callable[[str, Any], Any]] = {
    "str": _text,
    "str | None": _maybe_text,
    "tuple[str, ...]": _names,
    "int | None": _limit,
    "bool": _flag,
    "SearchType": _text,
    "Direction": _text,
    "InputType | None": _maybe_text,
    "ReturnIdType | None": _maybe_text,
}


#: What ``search_many`` passes on to each ``search``: its keywords.
_SEARCH_KEYWORDS = frozenset(Umls.search.__kwdefaults__ or ())


def _lookup(kind: type[_L], **given: Any) -> _L:
    """A ``kind`` of the API's arguments, each checked in the order given (``_CHECKS``): a value
    of the wrong type is a TypeError naming its argument."""
    checks = {f.name: _CHECKS[f.type] for f in fields(kind) if f.type in _CHECKS}
    return kind(**{k: checks[k](k, v) if k in checks else v for k, v in given.items()})


def _arguments(values: dict[str, Any], *left_out: str) -> dict[str, Any]:
    """A method's ``locals()``: its arguments, in order, but ``self`` and ``left_out``."""
    return {k: v for k, v in values.items() if k != "self" and k not in left_out}


def _input_of(lookup: Lookup) -> str:
    """What names a lookup's input in its answer: its term, CUI or AUI, else ``SAB CODE``."""
    for name in ("string", "cui", "aui"):
        value = getattr(lookup, name, None)
        if value is not None:
            return str(value)
    if not lookup.inputs:
        return lookup.command
    return f"{getattr(lookup, 'sab', None)} {getattr(lookup, 'code', None)}"


def _first(results: Results[_T]) -> _T | None:
    return results[0] if results else None


#: A flag in a message (``--limit``), with the value after it if any (``--rate 500``,
#: ``--mrconso PATH``); a quoted span (an input, as ``repr`` shows it) is matched to be kept.
_FLAG = re.compile(
    r"""(?<!\w)'[^'\n]*'(?!\w)|(?<!\w)"[^"\n]*"(?!\w)"""
    r"|(?<![\w-])(--[a-z][a-z-]*[a-z])(?: (-?\d[\w.]*|[A-Z][A-Z_]*\b))?"
)


@cache
def _flag_names() -> dict[str, str]:
    """Each flag the shared layers name, as Python's argument (``--offline``: ``offline=True``)."""
    names = {"--umls-release": "release"}
    for f in (*fields(UtsOptions), *fields(Local), *(f for kind in KINDS for f in fields(kind))):
        spelt = f.metadata.get("cli")
        if spelt is not None:
            names[spelt.flag] = f"{f.name}=True" if f.default is False else f.name
    return names


def _python_words(text: str) -> str:
    """``text`` with its flags as Python's arguments; quoted text is left as it is."""
    names = _flag_names()

    def swap(found: re.Match[str]) -> str:
        flag, value = found.group(1), found.group(2)
        if flag not in names:
            return found.group(0)
        name = names[flag]
        if value is None:
            return name
        return f"{name} {value}" if name.endswith("=True") else f"{name}={value}"

    return _FLAG.sub(swap, text)


def _answer_in_python_words(answer: Answer) -> Answer:
    """``answer``'s message and hint in Python's words, unless its input holds ``--``."""
    message = answer.message if "--" in answer.input else _python_words(answer.message)
    hint = None if answer.hint is None else _python_words(answer.hint)
    return replace(answer, message=message, hint=hint)


@contextmanager
def _in_python_words() -> Iterator[None]:
    """An error raised inside says its message and hint in Python's words."""
    try:
        yield
    except TempMedBenchError as err:
        err.message = _python_words(err.message)
        err.args = (err.message,)
        err.hint = None if err.hint is None else _python_words(err.hint)
        if isinstance(err, BadInputError):
            err.problem = _python_words(err.problem)
            err.key = None if err.key is None else _flag_names().get(err.key, err.key)
        raise
