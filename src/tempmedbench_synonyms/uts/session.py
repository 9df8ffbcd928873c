"""A session with UTS, wired from the network options: the cached client, the REST atom source.

``open_uts`` checks the options (``UtsOptions.check``) and wires a client, a rate limiter and a
response cache into a ``CachedUts``; ``rest_source`` puts the worker pool of ``source`` on top.
"""

from __future__ import annotations

import threading
from typing import TextIO

from tempmedbench_synonyms.secret import ApiKey, read_api_key
from tempmedbench_synonyms.uts.cache import ResponseCache
from tempmedbench_synonyms.uts.cached import CachedUts
from tempmedbench_synonyms.uts.client import UtsClient
from tempmedbench_synonyms.uts.options import UtsOptions, check_workers
from tempmedbench_synonyms.uts.ratelimit import RateLimiter, shared_state_path
from tempmedbench_synonyms.uts.retry import RetryPolicy, Timeouts
from tempmedbench_synonyms.uts.source import RestAtomSource


def open_uts(
    options: UtsOptions,
    *,
    cached: bool = True,
    store: bool = True,
    key: ApiKey | None = None,
) -> CachedUts:
    """The cached UTS client the atom source and the ``umls`` commands share.

    The key is read first (so that every message masks it), then the options are checked
    (``UtsOptions.check``). The key comes from ``--api-key-file`` or ``UMLS_API_KEY``; a missing
    key is not an error until the network is needed (a fully cached or ``--offline`` run needs
    none), and then it is ``ApiKeyMissingError``, exit 3 (``CachedUts.need_network``).
    ``cached=False``: no cache at all, neither read nor written (``doctor``'s probe). ``key``: a
    key given in Python (``Umls(api_key=...)``), instead of the ones the options name.

    The client and its rate limiter share one cancel event: cancelling the client (a 401, an
    error that ends the run, Ctrl-C) also wakes every thread waiting for the limiter.

    ``store=False`` (``doctor``, ``--dry-run``) writes nothing: no answer is cached, and the
    shared rate state is honoured but never created or written (``RateLimiter(read_only=True)``).
    """
    # The key first: once read, every message masks it, also one that shows a --base-url it
    # was pasted into (``check_base_url`` masks a URL's user name, query and fragment besides).
    key = key or read_api_key(options.api_key_file)
    pool = options.check()  # the number of workers
    url = options.url
    cache = ResponseCache(options.cache_folder, url) if cached else None
    client = None
    if not options.offline:
        cancel = threading.Event()
        client = UtsClient(
            base_url=url,
            api_key=key,
            limiter=RateLimiter(
                float(options.rate),
                cancel=cancel,
                shared_state=shared_state_path(url),  # one budget per machine
                read_only=not store,
            ),
            timeouts=Timeouts.of(options.timeout),
            retry=RetryPolicy(),
            pool_size=pool,
            cancel=cancel,
        )
    uts = CachedUts(client, cache, offline=options.offline, refresh=options.refresh)
    uts.store = store
    return uts


def rest_source(options: UtsOptions, *, progress: TextIO | None) -> RestAtomSource:
    """The REST atom source of a regeneration; progress goes to ``progress`` (``None``:
    nowhere, ``--quiet``)."""
    uts = open_uts(options)
    return RestAtomSource(uts, workers=check_workers(options.workers), progress_stream=progress)
