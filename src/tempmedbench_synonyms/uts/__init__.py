"""The UMLS Terminology Services (UTS) side: every byte that comes from the REST API.

The way of one answer, top to bottom (each module imports only those below it):

- ``options``: the network options of the CLI (``RestOptions``), checked once (``--workers``
  included), and the factories that wire the modules below (``build_cached_uts``,
  ``build_rest_source``).
- ``source``: the atom source of a regeneration (implements ``atoms.AtomSource``, as ``mrconso``
  does for a local file): only a worker pool and the counts of one fetch, over ``cached``;
  ``workers`` holds the pool's daemon threads, which a cancelled run never waits for.
- ``cached``: one answer at a time, from the response cache or else from UTS; ``current``
  resolved to a concrete release before any cache key is made (SPEC section 3); the one check
  for ``--offline`` and for a missing key; the 404 rule once the release probe has answered; the
  memo of a run. The ``umls`` commands ask it directly.
- ``cache``: the on-disk response cache (atomic writes, keys without the API key).
- ``client``: the HTTP client, the only module that imports ``requests``: one chokepoint that
  waits on the rate limiter, retries transient failures and turns every failure into ours.
- ``ratelimit``: the request budget shared by every worker and every process of the machine
  (UTS allows 20 requests a second per IP address), through a lock-protected state file.
- ``paths``: every request path and its parameters (SPEC section 3), built in one place.
- ``identifiers``: the one check of each identifier a request names (release, CUI, AUI, SAB,
  source code), before anything is sent or cached.
- ``models``: tolerant pydantic models of UTS payloads.
- ``defaults``: the defaults and limits of the network options (``--rate``, ``--workers``,
  ``--timeout``, the retry budget), light enough for the CLI to import at start.
"""
