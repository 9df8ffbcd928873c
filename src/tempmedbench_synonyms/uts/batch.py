"""The one batch path to UTS: ``ask_all`` (a regeneration's fetch, many lookups) and
``answer_many``, SPEC 11's batch on it, one ``Answer`` per input in input order
(docs/architecture.md, "UTS is asked one way").
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Hashable, Iterable, Mapping
from contextlib import closing
from dataclasses import replace
from functools import partial
from typing import TextIO, TypeVar

from tempmedbench_synonyms.atoms import check_release
from tempmedbench_synonyms.errors import TempMedBenchError
from tempmedbench_synonyms.lookups import Answer, Lookup
from tempmedbench_synonyms.progress import StepProgress
from tempmedbench_synonyms.uts import terms
from tempmedbench_synonyms.uts.cached import CachedUts
from tempmedbench_synonyms.uts.client import Counters
from tempmedbench_synonyms.uts.estimate import estimate_line
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
        progress.write(line + "\n")
        progress.flush()
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
    builds, answers = terms.checked(listed, release)
    if progress is not None and uts.known(release) is None:
        # Said at once: without a CUI to probe, inputs go one at a time until an answer names
        # the release, and none is cached before (a cache key names a concrete release).
        how = (
            "the probe of a concept"
            if any(terms.cui_of(lookup) for _, lookup in listed)
            else "inputs asked one at a time until an answer names it"
        )
        progress.write(
            f"UMLS current: finding the release it stands for ({how}; --umls-release RELEASE "
            "skips this)\n"
        )
        progress.flush()
    settled, early = terms.settle_release(uts, release, listed, builds, skip=set(answers))
    answers.update(early)
    groups: dict[Lookup, list[int]] = {}
    for i, (_, lookup) in enumerate(listed):
        if i not in answers:
            groups.setdefault(lookup, []).append(i)

    def cached(lookup: Lookup) -> Answer | None:
        asked = release if lookup.as_current else settled
        input = listed[groups[lookup][0]][0]
        return terms.answer_by(
            partial(uts.lookup_cached, asked), asked, input, lookup, builds[lookup]
        )

    def ask(lookup: Lookup) -> Answer:
        asked = release if lookup.as_current else settled
        return terms.answer_in(uts, asked, listed[groups[lookup][0]][0], lookup, builds[lookup])

    following = 0

    def ready() -> list[Answer]:
        """The answers next in input order, as far as they go."""
        nonlocal following
        out = []
        while following in answers:
            out.append(answers.pop(following))
            following += 1
        return out

    display = partial(StepProgress, progress, label=f"UMLS {settled}", unit="inputs",
                      total=len(listed), clock=clock, started=began)  # fmt: skip
    rounds = ask_all(uts, {lookup: len(where) for lookup, where in groups.items()},
                     cached=cached, ask=ask, workers=workers, display=display, progress=progress,
                     unit="input", before=before, answered=len(answers), tick=tick,
                     name="uts-lookup")  # fmt: skip
    with closing(rounds):
        for got in rounds:
            for lookup, found in got:
                for i in groups[lookup]:
                    answers[i] = replace(found, input=listed[i][0])
            yield from ready()
