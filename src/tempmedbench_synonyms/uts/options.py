"""The network options of the CLI, checked once, and what they build: the cached client, the
REST atom source.

``RestOptions`` holds ``--base-url``, ``--rate``, ``--workers``, ``--offline``, ... as the CLI took
them; ``build_cached_uts`` checks them and wires a client, a rate limiter and a response cache
into a ``CachedUts``; ``build_rest_source`` puts the worker pool of ``uts.source`` on top. The
worker limit lives here, with the other option checks: ``--workers`` sizes both the pool and the
client's connection pool.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from tempmedbench_synonyms.config import (
    DEFAULT_BASE_URL,
    check_base_url,
    read_api_key,
    resolve_cache_dir,
)
from tempmedbench_synonyms.errors import BadInputError
from tempmedbench_synonyms.uts.cache import ResponseCache
from tempmedbench_synonyms.uts.cached import CachedUts
from tempmedbench_synonyms.uts.client import RetryPolicy, Timeouts, UtsClient, check_timeout
from tempmedbench_synonyms.uts.defaults import (
    DEFAULT_RATE,
    DEFAULT_TIMEOUT,
    DEFAULT_WORKERS,
    MAX_WORKERS,
)
from tempmedbench_synonyms.uts.ratelimit import RateLimiter, check_rate, shared_state_path
from tempmedbench_synonyms.uts.source import RestAtomSource


def check_workers(workers: int) -> int:
    """The number of workers to run for ``--workers``: BadInputError below 1, at most
    ``MAX_WORKERS``."""
    if workers < 1:
        raise BadInputError(
            f"--workers {workers} is out of range: it must be at least 1",
            key="--workers",
            hint=f"the default is {DEFAULT_WORKERS} concurrent requests; more than "
            f"{MAX_WORKERS} only queue behind the rate limiter",
        )
    return min(workers, MAX_WORKERS)


@dataclass(frozen=True, slots=True)
class RestOptions:
    """The network options of a REST run, as the CLI took them; ``check`` validates them.

    They are checked when a client is built (``build_cached_uts``), not when the CLI parses them:
    ``--rate`` or ``--workers`` mean nothing to a ``--mrconso`` run, which must not fail on them.
    """

    base_url: str = DEFAULT_BASE_URL
    api_key_file: Path | None = None
    cache_dir: Path | None = None
    offline: bool = False
    refresh: bool = False
    rate: float = DEFAULT_RATE
    workers: int = DEFAULT_WORKERS
    timeout: float = DEFAULT_TIMEOUT

    def check(self) -> int:
        """BadInputError naming the option if a value is out of range or two contradict;
        else the number of workers to run."""
        check_base_url(self.base_url)
        check_rate(self.rate)
        workers = check_workers(self.workers)
        check_timeout(self.timeout)
        if self.offline and self.refresh:
            raise BadInputError(
                "--offline and --refresh contradict each other: --refresh fetches again, "
                "--offline never fetches",
                key="--offline",
                hint="drop one of them",
            )
        return workers


def build_cached_uts(options: RestOptions) -> CachedUts:
    """The cached UTS client the atom source and the ``umls`` commands share.

    The options are checked first (``RestOptions.check``). The key comes from ``--api-key-file``
    or ``UMLS_API_KEY``; a missing key is not an error until the network is needed (a fully
    cached or ``--offline`` run needs none), and then it is ``ApiKeyMissingError``, exit 3
    (``CachedUts.need_network``).

    The client and its rate limiter share one cancel event: cancelling the client (a 401, an
    error that ends the run, Ctrl-C) also wakes every thread waiting for the limiter.
    """
    workers = options.check()
    key = read_api_key(options.api_key_file)
    cache = ResponseCache(resolve_cache_dir(options.cache_dir), options.base_url)
    client = None
    if not options.offline:
        cancel = threading.Event()
        client = UtsClient(
            base_url=options.base_url,
            api_key=key,
            limiter=RateLimiter(
                float(options.rate),
                cancel=cancel,
                shared_state=shared_state_path(options.base_url),  # one budget per machine
            ),
            timeouts=Timeouts.of(options.timeout),
            retry=RetryPolicy(),
            pool_size=workers,
            cancel=cancel,
        )
    return CachedUts(client, cache, offline=options.offline, refresh=options.refresh)


def build_rest_source(options: RestOptions, *, progress_stream: TextIO | None) -> RestAtomSource:
    """The REST atom source the CLI uses when ``--mrconso`` is not given.

    The options are checked by ``build_cached_uts``; progress goes to ``progress_stream``, or
    nowhere if it is ``None`` (``--quiet``).
    """
    uts = build_cached_uts(options)
    workers = check_workers(options.workers)
    return RestAtomSource(uts, workers=workers, progress_stream=progress_stream)
