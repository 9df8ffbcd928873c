"""One SPEC 11 lookup answered through ``CachedUts``: its ``Answer`` (``found``, ``not_found`` or
``bad_input``; what ends a batch is raised), and ``current`` settled once for a batch.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from functools import cache, partial

from tempmedbench_synonyms.atoms import check_release
from tempmedbench_synonyms.errors import BadInputError, Outcome
from tempmedbench_synonyms.lookups import Answer, Lookup
from tempmedbench_synonyms.paths import Build, check_limit
from tempmedbench_synonyms.uts.cached import CachedUts, Got


def checked(
    items: Sequence[tuple[str, Lookup]], release: str
) -> tuple[dict[Lookup, Build], dict[int, Answer]]:
    """Each lookup's request, built once (and kept for the cache pass and the ask), and the
    answers of the inputs that cannot be sent (their request built in ``release``), by index."""
    builds: dict[Lookup, Build] = {}
    bad: dict[int, Answer] = {}
    for i, (input, lookup) in enumerate(items):
        build = builds.setdefault(lookup, cache(lookup.request))
        try:
            check_limit(lookup.limit_or_default())
            build(release)
        except BadInputError as err:
            bad[i] = bad_answer(input, lookup, err, release)
    return builds, bad


def cui_of(lookup: Lookup) -> str | None:
    """The CUI a lookup takes (how ``current`` is resolved for it: section 3's probe)."""
    cui = getattr(lookup, "cui", None)
    return cui if isinstance(cui, str) else None


def bad_answer(input: str, lookup: Lookup, err: BadInputError, release: str) -> Answer:
    return Answer(input, Outcome.BAD_INPUT, message=str(err), hint=err.hint, release=release,
                  query=lookup.words()[0])  # fmt: skip


def settle_release(
    uts: CachedUts,
    release: str,
    items: Sequence[tuple[str, Lookup]],
    builds: Mapping[Lookup, Build],
    *,
    skip: Collection[int] = (),
) -> tuple[str, dict[int, Answer]]:
    """(the concrete release the inputs are asked in, the answers given on the way), SPEC 11:
    ``current`` as the cache knows it, else the probe of an input's CUI, else an input's own
    answer's links, one input at a time; ``skip`` inputs and ``sources`` are passed over."""
    known = uts.known(check_release(release))
    if known is not None:
        return known, {}
    answered: dict[int, Answer] = {}
    for i, (input, lookup) in enumerate(items):
        if i in skip or lookup.as_current:
            continue
        cui = cui_of(lookup)
        if cui is not None:
            concrete = uts.probe("current", cui)
        else:
            answered[i] = answer_in(uts, "current", input, lookup, builds[lookup])
            concrete = answered[i].release or "current"
        if concrete != "current":
            return concrete, answered
    return "current", answered


def answer_in(uts: CachedUts, release: str, input: str, lookup: Lookup, build: Build) -> Answer:
    """One input's answer in ``release``, from the cache, else UMLS (``build``: its request)."""
    found = answer_by(partial(uts.lookup, release), release, input, lookup, build)
    assert found is not None  # only the cache alone may lack an answer
    return found


def answer_by(
    ask: Callable[[Build], Got | None], release: str, input: str, lookup: Lookup, build: Build
) -> Answer | None:
    """One input's answer by ``ask`` (``CachedUts.lookup_cached``: ``None`` if the cache lacks
    any part of it)."""
    try:
        got = ask(build)  # identifiers checked as the request is built
        if got is None:
            return None
        results = []
        for result in lookup.results(got.value):
            more = lookup.more(result)
            extra = None if more is None else ask(more)
            if more is not None and extra is None:
                return None  # the cache alone lacks a part of it
            if extra is not None and isinstance(extra.value, dict):
                result = {**result, **extra.value}
            results.append(result)
    except BadInputError as err:  # (a 400 from UTS too: this input's own bad input)
        if err.path is not None or err.key is not None:
            raise  # the cache or an option, not this input
        return bad_answer(input, lookup, err, release)
    why = " (404 Not Found)" if got.value is None else ""
    return lookup.answered(input, results, got.release, got.truncated, why)
