"""The UMLS Terminology Services (UTS) side: every byte that comes from the REST API.

The way of one answer, top to bottom (each module imports only those below it):

- ``source``: the atom source of a regeneration, a worker pool over ``cached`` with per-fetch
  counters (implements ``atoms.AtomSource``, as ``mrconso`` does for a local file).
- ``cached``: one answer at a time, from the response cache or else from UTS; ``current``
  resolved to a concrete release before any cache key is made (SPEC section 3).
- ``cache``: the on-disk response cache (atomic writes, keys without the API key).
- ``client``: the HTTP client, the only module that imports ``requests``: one chokepoint that
  waits on the rate limiter, retries transient failures and turns every failure into ours.
- ``ratelimit``: the shared request budget (UTS allows 20 requests a second per IP address).
- ``models``: tolerant pydantic models of UTS payloads.
"""
