"""The UMLS Terminology Services (UTS) side: every byte that comes from the REST API (its
modules, top to bottom: docs/architecture.md, "The module map").
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
    "session",
    "source",
    "watchdog",
    "workers",
]
