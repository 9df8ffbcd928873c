"""The one batch path to UTS: ``ask_all`` (a regeneration's fetch, many lookups), and SPEC 11's
batch on it: ``answer_many``, one ``Answer`` per input in input order (``found``, ``not_found``
or ``bad_input``; what ends a batch is raised), ``current`` settled once, and its dry run
``plan_lookups`` (docs/architecture.md, "UTS is asked one way").
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Collection, Generator, Hashable, Iterable, Mapping, Sequence
from contextlib import closing
from dataclasses import replace
from functools import cache, partial
from typing import Any, TextIO, TypeVar

from tempmedbench_synonyms import runtime
from tempmedbench_synonyms.atoms import check_release
from tempmedbench_synonyms.errors import BadInputError, TempMedBenchError
from tempmedbench_synonyms.lookups import Answer, Lookup
from tempmedbench_synonyms.paths import Build, check_limit
from tempmedbench_synonyms.progress import StepProgress
from tempmedbench_synonyms.uts.cached import CachedUts, Got
from tempmedbench_synonyms.uts.client import Counters
from tempmedbench_synonyms.uts.estimate import estimate_line, fetch_seconds, plan_all
from tempmedbench_synonyms.uts.workers import completions

_K = TypeVar("_K", bound=Hashable)
_V = TypeVar("_V")


def ask_all(
    uts: CachedUts,
    questions: Mapping[_K, int],
    *,
    cached: Callable[[_K], _V | None],
    ask: Callable[[_K], _V],
    workers: int,
    display: Callable[[], StepProgress],
    progress: TextIO | None,
    unit: str,
    before: Counters,
    answered: int = 0,
    same: Callable[[_K], Hashable] | None = None,
    before_asking: Callable[[list[_K]], None] | None = None,
    tick: float = 0.2,
    name: str = "uts-worker",
) -> Generator[list[tuple[_K, _V]], None, None]:
    """Yield the ``(question, answer)`` pairs of ``questions``: the cache's first, then the misses
    asked on ``workers`` threads, each answer cached once complete. Not authorised, unavailable
    and interrupted end the batch; close it on every way out to stop the workers. ``cached``:
    from the cache alone; ``ask``: cache else UMLS; ``same``: one request (asked once);
    ``before_asking`` sees the misses; ``answered``: done already."""
    hits: list[tuple[_K, _V]] = []
    misses: list[_K] = []
    for question in questions:
        found = cached(question)
        if found is None:
            misses.append(question)
        else:
            hits.append((question, found))
    if misses and before_asking is not None:
        before_asking(misses)
    done = answered + sum(questions[q] for q, _ in hits)
    shown = display()

    def report(final: bool = False) -> None:
        counted = uts.counters() - before
        shown.update(done, hits=counted.cache_hits, requests=counted.requests,
                     retries=counted.retries, final=final)  # fmt: skip

    if not misses:  # the cache answered them all: one line says so
        report(final=True)
        yield hits
        return
    groups: dict[Hashable, list[_K]] = {}
    for question in misses:
        groups.setdefault(question if same is None else same(question), []).append(question)
    asked = list(groups.values())
    if progress is not None and uts.rate is not None:
        to_ask = sum(questions[q] for q in misses)
        line = estimate_line(done - answered + to_ask, done - answered, to_ask, len(asked),
                             uts.rate, unit=unit)  # fmt: skip
        runtime.say(progress, line)
    calls = [partial(ask, group[0]) for group in asked]
    runs = completions(calls, workers=workers, cancel=uts.cancel, tick=tick, name=name)
    try:
        with closing(runs):
            report()
            yield hits
            for finished in runs:
                got = [(q, found) for i, found in finished for q in asked[i]]
                done += sum(questions[q] for q, _ in got)
                report()
                yield got
    except TempMedBenchError:
        report(final=True)
        raise
    except BaseException:
        shown.close()
        raise
    report(final=True)


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
            bad[i] = lookup.bad(input, err, release)
    return builds, bad


def cui_of(lookup: Lookup) -> str | None:
    """The CUI a lookup takes (how ``current`` is resolved for it: section 3's probe)."""
    cui = getattr(lookup, "cui", None)
    return cui if isinstance(cui, str) else None


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
        return lookup.bad(input, err, release)
    why = " (404 Not Found)" if got.value is None else ""
    return lookup.answered(input, results, got.release, got.truncated, why)


def answer_many(
    uts: CachedUts,
    release: str,
    items: Iterable[tuple[str, Lookup]],
    *,
    workers: int,
    progress: TextIO | None = None,
    clock: Callable[[], float] = time.monotonic,
    tick: float = 0.2,
) -> Generator[Answer, None, None]:
    """One ``Answer`` per ``(input, lookup)``, in input order, through ``ask_all``: unaskable
    inputs are ``bad_input``, ``current`` settled first, identical lookups asked once."""
    listed = list(items)
    check_release(release)
    uts.resume()  # an earlier batch may have stopped it
    began = clock()  # the progress counts the wait of the first request (current) too
    before = uts.counters()
    builds, answers = checked(listed, release)
    if progress is not None and uts.known(release) is None:
        # Said at once: without a CUI to probe, inputs go one at a time until an answer names
        # the release, and none is cached before (a cache key names a concrete release).
        how = (
            "the probe of a concept"
            if any(cui_of(lookup) for _, lookup in listed)
            else "inputs asked one at a time until an answer names it"
        )
        runtime.say(
            progress,
            f"UMLS current: finding the release it stands for ({how}; --umls-release RELEASE "
            "skips this)",
        )
    settled, early = settle_release(uts, release, listed, builds, skip=set(answers))
    answers.update(early)
    groups: dict[Lookup, list[int]] = {}
    for i, (_, lookup) in enumerate(listed):
        if i not in answers:
            groups.setdefault(lookup, []).append(i)

    def cached(lookup: Lookup) -> Answer | None:
        asked = release if lookup.as_current else settled
        input = listed[groups[lookup][0]][0]
        return answer_by(partial(uts.lookup_cached, asked), asked, input, lookup, builds[lookup])

    def ask(lookup: Lookup) -> Answer:
        asked = release if lookup.as_current else settled
        return answer_in(uts, asked, listed[groups[lookup][0]][0], lookup, builds[lookup])

    display = partial(StepProgress, progress, label=f"UMLS {settled}", unit="inputs",
                      total=len(listed), clock=clock, started=began)  # fmt: skip
    rounds = ask_all(uts, {lookup: len(where) for lookup, where in groups.items()},
                     cached=cached, ask=ask, workers=workers, display=display, progress=progress,
                     unit="input", before=before, answered=len(answers), tick=tick,
                     name="uts-lookup")  # fmt: skip
    following = 0
    with closing(rounds):
        for got in rounds:
            for lookup, found in got:
                for i in groups[lookup]:
                    answers[i] = replace(found, input=listed[i][0])
            while following in answers:  # the answers next in input order, as far as they go
                yield answers.pop(following)
                following += 1


def plan_lookups(
    uts: CachedUts,
    release: str,
    items: Iterable[tuple[str, Lookup]],
    *,
    rate: float,
    unread: int = 0,
) -> tuple[str, dict[str, Any]]:
    """The dry run of ``batch.answer_many`` (``--dry-run``): what it says and its JSON. The cache
    is read for every input, nothing sent or written; ``current`` as the cache learnt it, if it
    has. ``requests``, one per distinct lookup to fetch plus any probe, take ``seconds`` at
    ``rate`` (pages, details and retries on top); ``unread`` inputs are bad input too."""
    uts.store = False
    listed = list(items)
    concrete = uts.known(check_release(release))
    builds, bad = checked(listed, release)
    questions = Counter(lookup for i, (_, lookup) in enumerate(listed) if i not in bad)

    def cached(lookup: Lookup) -> object | None:
        asked = release if lookup.as_current else concrete or "current"
        return answer_by(partial(uts.lookup_cached, asked), asked, "", lookup, builds[lookup])

    hits, misses, requests = plan_all(questions, cached)
    if concrete is None and any(cui_of(q) is not None for q in misses):
        requests += 1  # the probe that resolves current
    inputs, unasked = len(listed) + unread, len(bad) + unread
    to_fetch = inputs - unasked - hits
    said = estimate_line(inputs - unasked, hits, to_fetch, requests, rate, unit="input")
    said += f" ({unasked} more cannot be asked: bad input)" if unasked else ""
    counts = dict(inputs=inputs, bad_input=unasked, cached=hits, to_fetch=to_fetch)
    return said, {**counts, "requests": requests, "seconds": fetch_seconds(requests, rate)}
