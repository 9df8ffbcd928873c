"""A session with UTS, wired from the network options: the cached client, the REST atom source."""

from __future__ import annotations

from typing import TextIO

from tempmedbench_synonyms.secret import ApiKey, read_api_key
from tempmedbench_synonyms.uts.cache import ResponseCache
from tempmedbench_synonyms.uts.cached import CachedUts
from tempmedbench_synonyms.uts.client import RetryPolicy, UtsClient
from tempmedbench_synonyms.uts.options import UtsOptions, check_workers
from tempmedbench_synonyms.uts.ratelimit import RateLimiter, shared_state_path
from tempmedbench_synonyms.uts.source import RestAtomSource


def open_uts(
    options: UtsOptions,
    *,
    cached: bool = True,
    store: bool = True,
    key: ApiKey | None = None,
) -> CachedUts:
    """The cached UTS client the atom source and the ``umls`` commands share; a missing key fails
    only when the network is needed. ``cached=False``: no cache (``doctor``'s probe); ``key``:
    given in Python; ``store=False`` (``doctor``, ``--dry-run``) writes nothing, the shared rate
    state read only."""
    # The key first: once read, every message masks it, also one that shows a --base-url it
    # was pasted into (``check_base_url`` masks a URL's user name, query and fragment besides).
    key = key or read_api_key(options.api_key_file)
    pool = options.check()  # the number of workers
    url = options.url
    cache = ResponseCache(options.cache_folder, url) if cached else None
    client = None
    if not options.offline:
        client = UtsClient(
            base_url=url,
            api_key=key,
            limiter=RateLimiter(
                float(options.rate),
                shared_state=shared_state_path(url),  # one budget per machine
                read_only=not store,
            ),
            timeout=options.timeout,
            retry=RetryPolicy(),  # (the hostile-server tests put a faster one in its place)
            pool_size=pool,
        )
    uts = CachedUts(client, cache, refresh=options.refresh)  # no client: offline
    uts.store = store
    return uts


def rest_source(options: UtsOptions, *, progress: TextIO | None) -> RestAtomSource:
    uts = open_uts(options)
    return RestAtomSource(uts, workers=check_workers(options.workers), progress_stream=progress)
