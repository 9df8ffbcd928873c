"""One terminology lookup answered by UTS (SPEC section 11): its request, and its ``Answer``.

``answer`` asks one lookup (``lookups.Search``, ``Crosswalk``...) through ``CachedUts``, which
answers from the cache or else from UMLS, caches every answer whole, and checks a command's
first 404 (``CachedUts.check_served``). What each input gets is one ``lookups.Answer``:

- ``found``: its results, the JSON objects UTS sent (``lookups.clean``: ``"NONE"`` is
  ``None``), in UTS's order, at most its ``limit`` (``truncated`` when the limit cut them);
- ``not_found``: UMLS has nothing for it (an unknown identifier, a 404; an empty list; a search
  without results);
- ``bad_input``: it cannot be asked (a malformed identifier, checked before anything is sent;
  UTS answered 400 Bad Request).

Not authorised, unavailable and interrupted are raised: they end a whole batch.

``current`` is resolved once, before the inputs are asked (``settle_release``): from the cache
if it learnt it within a day, else by section 3's probe of the first CUI for lookups that take a
CUI, else from the links of the first answer that has any, the inputs asked one at a time until
then. ``umls sources`` asks ``/metadata/current/sources`` as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from functools import partial
from typing import Any

from tempmedbench_synonyms.atoms import AtomQuery, check_code, check_release
from tempmedbench_synonyms.errors import BadInputError, Outcome, plural
from tempmedbench_synonyms.lookups import (
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
    clean,
    describe,
    limit_of,
)
from tempmedbench_synonyms.uts import paths
from tempmedbench_synonyms.uts.cached import Build, CachedUts, Got
from tempmedbench_synonyms.uts.client import BadRequestError
from tempmedbench_synonyms.uts.models import last_segment


def build_of(lookup: Lookup) -> Build:
    """The request ``lookup`` sends, given a release (``uts.paths``: identifiers checked when
    it is built)."""
    limit = limit_of(lookup)
    if isinstance(lookup, Search):
        if lookup.language is not None:
            raise BadInputError(
                "UTS search has no language filter: --language reads a local MRCONSO.RRF "
                "(--mrconso PATH)"
            )
        return partial(
            paths.search,
            string=lookup.string,
            search_type=lookup.search_type,
            input_type=lookup.input_type,
            return_id_type=lookup.return_id_type,
            sabs=lookup.sabs,
            semantic_types=lookup.semantic_types,
            partial=lookup.partial,
            include_obsolete=lookup.include_obsolete,
            include_suppressible=lookup.include_suppressible,
            limit=limit,
        )
    if isinstance(lookup, Cuis):
        code = check_code(lookup.code)
        return partial(paths.search, string=code, search_type="exact", input_type="sourceUi",
                       sabs=(lookup.sab,), limit=limit)  # fmt: skip
    if isinstance(lookup, Crosswalk):
        return partial(paths.crosswalk, sab=lookup.sab, code=lookup.code,
                       target_sabs=lookup.target_sabs, limit=limit)  # fmt: skip
    if isinstance(lookup, Definitions):
        return partial(paths.definitions, cui=lookup.cui, sabs=lookup.sabs, limit=limit)
    if isinstance(lookup, Relations):
        return partial(paths.relations, cui=lookup.cui, sab=lookup.sab, code=lookup.code,
                       aui=lookup.aui, relation_labels=lookup.relation_labels,
                       sabs=lookup.sabs, limit=limit)  # fmt: skip
    if isinstance(lookup, (SemanticTypes, Concept)):
        return partial(paths.concept, cui=lookup.cui)
    if isinstance(lookup, SourceConcept):
        return partial(paths.source_concept, sab=lookup.sab, code=lookup.code)
    if isinstance(lookup, Hierarchy):
        return partial(paths.hierarchy, direction=lookup.direction, sab=lookup.sab,
                       code=lookup.code, aui=lookup.aui, limit=limit)  # fmt: skip
    if isinstance(lookup, Sources):
        return partial(paths.sources, limit=limit)
    if isinstance(lookup, Atoms):
        if lookup.preferred:
            return partial(paths.preferred_atom, cui=lookup.cui)
        if lookup.sab:
            return partial(paths.for_query, query=AtomQuery("cui", lookup.sab, lookup.cui))
        return partial(paths.concept_atoms, cui=lookup.cui)
    if isinstance(lookup, SourceAtoms):
        if lookup.preferred:
            return partial(paths.preferred_atom, sab=lookup.sab, code=lookup.code)
        return partial(paths.for_query, query=AtomQuery("source", lookup.sab, lookup.code))
    if isinstance(lookup, Atom):
        return partial(paths.for_query, query=AtomQuery("aui", "", lookup.aui))
    raise TypeError(f"not a lookup: {lookup!r}")


def check(lookup: Lookup) -> None:
    """BadInputError if ``lookup`` cannot be sent (before anything is)."""
    if limit_of(lookup) < 0:
        raise BadInputError(f"--limit {limit_of(lookup)} is out of range: give 0 (no cap) or more")
    build_of(lookup)("current")


def cui_of(lookup: Lookup) -> str | None:
    """The CUI a lookup takes (how ``current`` is resolved for it: section 3's probe)."""
    if isinstance(lookup, (Definitions, SemanticTypes, Concept, Atoms)):
        return lookup.cui
    if isinstance(lookup, Relations):
        return lookup.cui
    return None


def bad_answer(input: str, lookup: Lookup, err: BadInputError, release: str) -> Answer:
    """The answer of an input that cannot be asked."""
    return Answer(input, Outcome.BAD_INPUT, message=str(err), hint=err.hint, release=release,
                  query=describe(lookup)[0])  # fmt: skip


def settle_release(
    uts: CachedUts,
    release: str,
    items: Sequence[tuple[str, Lookup]],
    *,
    skip: Collection[int] = (),
) -> tuple[str, dict[int, Answer]]:
    """(the concrete release the inputs are asked in, the answers given on the way), SPEC 11.

    A release other than ``current`` is itself (BadInputError if it is no release name).
    ``current``: what the cache learnt within a day; else, for an input that takes a CUI, the
    probe of its concept (``CachedUts.probe``); else its own answer, whose links may name the
    release; one input at a time, until one names it (``current`` if none does). Inputs in
    ``skip`` (bad input) are passed over, and so are ``sources``, asked as ``current``.
    """
    check_release(release)
    if release != "current":
        return release, {}
    known = uts.known_current()
    if known is not None:
        return known, {}
    answered: dict[int, Answer] = {}
    for i, (input, lookup) in enumerate(items):
        if i in skip or isinstance(lookup, Sources):
            continue
        cui = cui_of(lookup)
        if cui is not None:
            concrete = uts.probe(cui)
        else:
            answered[i] = answer_in(uts, "current", input, lookup)
            concrete = answered[i].release
        if concrete is not None and concrete != "current":
            return concrete, answered
    return "current", answered


def release_for(lookup: Lookup, release: str, settled: str) -> str:
    """The release ``lookup`` is asked in: ``settled``, but ``umls sources`` keeps ``current``
    as it is (its answer names no release)."""
    return release if isinstance(lookup, Sources) else settled


def answer(uts: CachedUts, release: str, input: str, lookup: Lookup) -> Answer:
    """The answer of one input (``current`` resolved as ``settle_release`` says); raises only
    what ends a batch (not authorised, unavailable, interrupted; a malformed release)."""
    try:
        check(lookup)
    except BadInputError as err:
        check_release(release)
        return bad_answer(input, lookup, err, release)
    uts.resume()  # an earlier batch may have stopped it
    settled, early = settle_release(uts, release, [(input, lookup)])
    if 0 in early:
        return early[0]
    return answer_in(uts, release_for(lookup, release, settled), input, lookup)


def answer_in(uts: CachedUts, release: str, input: str, lookup: Lookup) -> Answer:
    """The answer of one input in ``release`` (concrete, or ``current`` unresolved), from the
    cache, else UMLS."""
    found = _answer_in(uts, release, input, lookup, cache_only=False)
    assert found is not None  # only the cache alone may lack an answer
    return found


def cached_answer(uts: CachedUts, release: str, input: str, lookup: Lookup) -> Answer | None:
    """The answer of one input from the cache alone, or ``None`` if the cache lacks any part
    of it (nothing is sent)."""
    return _answer_in(uts, release, input, lookup, cache_only=True)


def _answer_in(
    uts: CachedUts, release: str, input: str, lookup: Lookup, *, cache_only: bool
) -> Answer | None:
    query, nothing = describe(lookup)

    def ask(build: Build) -> Got | None:
        if cache_only:
            return uts.lookup_cached(release, build)
        return uts.lookup(release, build)

    try:
        build = build_of(lookup)
        build(release)
        got = ask(build)
        if got is None:
            return None
        results = _results(got.value)
        truncated = got.truncated
        if isinstance(lookup, SemanticTypes) and got.value is not None:
            types = _semantic_types(got.value)
            details = _details(types, ask) if lookup.details else types
            if details is None:
                return None
            results = details
        limit = limit_of(lookup)
        if limit and len(results) > limit and isinstance(lookup, (Atoms, SourceAtoms)):
            results, truncated = results[:limit], True
    except BadRequestError as err:  # UTS refused this input's request: its own bad input
        return bad_answer(input, lookup, err, release)
    except BadInputError as err:
        if err.path is not None or err.key is not None:
            raise  # the cache or an option, not this input
        return bad_answer(input, lookup, err, release)
    if not results:
        why = " (404 Not Found)" if got.value is None else ""
        return Answer(input, Outcome.NOT_FOUND, message=f"UMLS {got.release} has {nothing}{why}",
                      hint=_hint(lookup), release=got.release, query=query)  # fmt: skip
    cut = f"; --limit {limit_of(lookup)} cut it" if truncated else ""
    if isinstance(lookup, (Concept, SourceConcept)) or getattr(lookup, "preferred", False):
        message = f"found {query}, UMLS {got.release}"  # one object, not a list
    elif isinstance(lookup, Sources):
        message = f"{plural(len(results), 'source')} of UMLS {got.release}{cut}"
    else:
        noun, word = (
            ("atom", "of") if isinstance(lookup, (Atoms, SourceAtoms, Atom)) else ("result", "for")
        )
        message = f"{plural(len(results), noun)} {word} {query}, UMLS {got.release}{cut}"
    return Answer(input, Outcome.FOUND, tuple(clean(r) for r in results), message,
                  release=got.release, query=query, truncated=truncated)  # fmt: skip


def _results(value: Any) -> list[dict[str, Any]]:
    """The result objects of an answer: a list's items, or the one object."""
    if value is None:
        return []
    if isinstance(value, list):
        return [v for v in value if isinstance(v, dict)]
    return [value] if isinstance(value, dict) else []


def _semantic_types(concept: Any) -> list[dict[str, Any]]:
    """A concept's semantic types as UTS lists them (an old release lists bare names)."""
    listed = concept.get("semanticTypes") if isinstance(concept, dict) else None
    if not isinstance(listed, list):
        return []
    return [{"name": t} if isinstance(t, str) else t for t in listed if isinstance(t, (str, dict))]


def _details(
    types: list[dict[str, Any]], ask: Callable[[Build], Got | None]
) -> list[dict[str, Any]] | None:
    """Each semantic type with its details from ``/semantic-network/{release}/TUI/{tui}``
    (``None`` if one is not to be had from the cache alone). A type that links to no TUI
    (an old release's bare name) is kept as it is."""
    out: list[dict[str, Any]] = []
    for entry in types:
        uri = entry.get("uri")
        tui = entry.get("ui") or (last_segment(uri) if isinstance(uri, str) else "")
        if not (isinstance(tui, str) and paths.is_tui(tui)):
            out.append(entry)
            continue
        got = ask(partial(paths.semantic_type, tui=tui))
        if got is None:
            return None
        out.append({**entry, **got.value} if isinstance(got.value, dict) else entry)
    return out


def _hint(lookup: Lookup) -> str:
    if isinstance(lookup, Search):
        return (
            "check the spelling, or try another --search-type (normalizedWords matches word "
            "forms) or fewer --sabs"
        )
    if isinstance(lookup, (Sources, Crosswalk)):
        return "check the source and the code; --target-sabs narrows a crosswalk to its sources"
    if getattr(lookup, "cui", None) is not None:
        return "check the CUI (C and 7 digits, such as C0020538)"
    if getattr(lookup, "aui", None) is not None:
        return "check the AUI (A and 7 to 9 digits, such as A3220484)"
    return "check the code, and the source it belongs to"
