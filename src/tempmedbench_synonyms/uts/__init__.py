"""The UMLS Terminology Services (UTS) side: every byte that comes from the REST API.

Its modules, top to bottom (each imports only those below it and the kernel): docs/architecture.md,
"The module map".
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
