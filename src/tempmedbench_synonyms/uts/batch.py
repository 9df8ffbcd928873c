"""Many lookups at once (SPEC section 11): one answer per input, in input order.

``answer_many`` asks every input as ``terms.answer`` would, and:

1. checks every input first: one that cannot be asked is its own ``bad_input`` answer, and the
   rest go on (a malformed release is the command's BadInputError);
2. resolves ``current`` once, before the inputs are spread over the workers
   (``terms.settle_release``: inputs go one at a time until then);
3. answers every input the cache holds whole, without a request; identical lookups are asked
   once; says how many are cached and how long the rest take (``estimate``);
4. asks the rest on ``workers`` threads behind the client's shared rate limiter
   (``uts.workers``, as a regeneration's fetch does), each answer cached as soon as it is
   complete, so that a run stopped by Ctrl-C resumes where it stopped;
5. shows one progress bar (``progress.lookup_progress``) on ``progress``.

Not authorised, unavailable and interrupted end the batch at once: they are raised, after the
answers before them were yielded. Use it closed on every way out (``contextlib.closing``), so
that a caller who stops early stops the workers too.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Iterable
from contextlib import closing
from dataclasses import replace
from functools import partial
from typing import TextIO

from tempmedbench_synonyms.atoms import check_release
from tempmedbench_synonyms.errors import BadInputError, TempMedBenchError
from tempmedbench_synonyms.lookups import Answer, Lookup
from tempmedbench_synonyms.progress import lookup_progress
from tempmedbench_synonyms.uts import terms
from tempmedbench_synonyms.uts.cached import CachedUts
from tempmedbench_synonyms.uts.estimate import estimate_line
from tempmedbench_synonyms.uts.workers import completions


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
    """One ``Answer`` per ``(input, lookup)``, in input order (module docstring); progress
    goes to ``progress`` (``None``: nowhere)."""
    listed = list(items)
    check_release(release)
    uts.resume()  # an earlier batch may have stopped it
    began = clock()  # the progress counts the wait of the first request (current) too
    before = uts.counters()
    answers: dict[int, Answer] = {}
    for i, (input, lookup) in enumerate(listed):
        try:
            terms.check(lookup)
        except BadInputError as err:
            answers[i] = terms.bad_answer(input, lookup, err, release)
    if progress is not None and release == "current" and uts.known_current() is None:
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
    settled, early = terms.settle_release(uts, release, listed, skip=set(answers))
    answers.update(early)

    # Identical lookups are asked once; the cache answers what it holds whole.
    groups: dict[Lookup, list[int]] = {}
    for i, (_, lookup) in enumerate(listed):
        if i not in answers:
            groups.setdefault(lookup, []).append(i)

    def give(lookup: Lookup, found: Answer) -> None:
        for i in groups[lookup]:
            answers[i] = replace(found, input=listed[i][0])

    misses: list[Lookup] = []
    hits = 0
    for lookup, where in groups.items():
        asked = terms.release_for(lookup, release, settled)
        hit = None
        if asked != "current":
            hit = terms.cached_answer(uts, asked, listed[where[0]][0], lookup)
        if hit is None:
            misses.append(lookup)
        else:
            give(lookup, hit)
            hits += len(where)

    display = lookup_progress(progress, umls_release=settled, total=len(listed), clock=clock,
                              started=began)  # fmt: skip
    following = 0

    def ready() -> list[Answer]:
        """The answers next in input order, as far as they go."""
        nonlocal following
        out = []
        while following in answers:
            out.append(answers.pop(following))
            following += 1
        return out

    def report(final: bool = False) -> None:
        done = uts.counters() - before
        display.update(following + len(answers), hits=done.cache_hits, requests=done.requests,
                       retries=done.retries, final=final)  # fmt: skip

    if not misses:  # the cache answered them all: one line says so
        report(final=True)
        yield from ready()
        return
    if progress is not None and uts.rate is not None:
        to_ask = sum(len(groups[lookup]) for lookup in misses)
        line = estimate_line(hits + to_ask, hits, to_ask, len(misses), uts.rate, unit="input")
        progress.write(line + "\n")
        progress.flush()
    calls = [
        partial(terms.answer_in, uts, terms.release_for(lookup, release, settled),
                listed[groups[lookup][0]][0], lookup)
        for lookup in misses
    ]  # fmt: skip
    runs = completions(calls, workers=workers, cancel=uts.cancel, tick=tick, name="uts-lookup")
    try:
        with closing(runs):
            report()
            yield from ready()
            for finished in runs:
                for k, found in finished:
                    give(misses[k], found)
                report()
                yield from ready()
    except TempMedBenchError:
        report(final=True)
        raise
    except BaseException:
        display.close()
        raise
    report(final=True)
    yield from ready()
