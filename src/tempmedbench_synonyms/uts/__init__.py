"""The UMLS Terminology Services (UTS) side: every byte that comes from the REST API.

The way of one answer, top to bottom (each module imports only those below it, and the kernel):

- ``session``: the cached client and the REST atom source, wired from the network options.
- ``source``: the atom source of a regeneration (``atoms.AtomSource``, as ``mrconso`` has one
  for a local file): the counts of one fetch, over ``cached``; ``batch``: many terminology
  lookups at once (SPEC section 11), over ``terms``, one lookup's request and answer; both run
  their requests on ``workers`` (``runtime.DaemonPool``, all stopped at once); ``estimate``:
  how long a fetch takes, said before it starts, and the dry run of lookups.
- ``cached``: one answer at a time, from the response cache or else from UTS; ``current``
  resolved to a concrete release before any cache key is made (SPEC section 3); the one check
  for ``--offline`` and for a missing key; the 404 rule once the release probe has answered; the
  memo of a run. The ``umls`` commands ask it directly.
- ``cache``: the on-disk response cache (atomic writes, keys without the API key, checksums).
- ``client``: the HTTP client, the only module that imports ``requests``: one chokepoint that
  waits on the rate limiter, retries transient failures (``retry``), bounds every attempt
  (``watchdog``) and turns every failure into ours.
- ``ratelimit``: the request budget shared by every worker and every process of the machine
  (UTS allows 20 requests a second per IP address), through a lock-protected state file.
- ``models``: tolerant pydantic models of UTS payloads, and of SPEC 11's answers.
- ``options``: the network options, defined once (flags, help, checks), light enough for the
  CLI to import at start.
"""

__all__ = [
    "batch",
    "cache",
    "cached",
    "client",
    "estimate",
    "models",
    "options",
    "ratelimit",
    "retry",
    "session",
    "source",
    "terms",
    "watchdog",
    "workers",
]
