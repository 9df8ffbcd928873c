"""How long an attempt may take and how often a request is tried again: the UTS retry policy that
``UtsClient._request`` drives tenacity with (docs/reference.md, "Retries and timeouts").
"""

from __future__ import annotations

import email.utils
from dataclasses import dataclass
from datetime import UTC

from tempmedbench_synonyms.constants import RETRY_BUDGET

#: Seconds to wait for a connection (when ``--timeout`` is longer).
CONNECT = 10.0
#: The least time an attempt is given when the retry budget is nearly spent.
MIN_ATTEMPT = 1.0


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How long and how often to try a request again: full-jitter exponential backoff, so eight
    workers' retries are not in lockstep; ``Retry-After`` honoured (RFC 9110, 10.2.3); the whole
    budget ``RETRY_BUDGET``, so a UTS that is down fails within minutes."""

    max_attempts: int = 6
    #: seconds from the first attempt after which no retry is started
    max_total: float = RETRY_BUDGET
    #: the n-th retry waits between half of and the whole of min(backoff_max, base * 2**(n-1))
    backoff_base: float = 0.5
    backoff_max: float = 30.0
    #: extra random seconds added to a Retry-After, so that workers do not return in lockstep
    retry_after_jitter: float = 0.25


class Transient(Exception):
    """A failure worth another try (unless ``final``); its message is already free of the key."""

    def __init__(
        self,
        kind: str,
        message: str,
        retry_after: float | None = None,
        *,
        final: bool = False,
        proxy: str | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.retry_after = retry_after
        #: no retry can help (a Retry-After beyond the budget): fail the request now
        self.final = final
        #: the proxy the request went through (``HOST:PORT``, masked), if it failed there
        self.proxy = proxy


def worth_retrying(exc: BaseException) -> bool:
    return isinstance(exc, Transient) and not exc.final


def parse_retry_after(value: str | None, *, now: float) -> float | None:
    """Seconds to wait from a ``Retry-After`` value (``None`` if absent or malformed), RFC 9110
    10.2.3: delay-seconds, or an HTTP-date (IMF-fixdate, RFC 850 or asctime, section 5.6.7)
    measured against the wall clock ``now``; a past date means "now"."""
    if value is None:
        return None
    text = value.strip()
    if not text:
        return None
    if text.isascii() and text.isdigit():  # str.isdigit() also accepts "²", which int() refuses
        return float(int(text))
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:  # pragma: no cover - older Pythons returned None instead of raising
        return None
    if when.tzinfo is None:  # asctime has no zone; HTTP-dates are always GMT
        when = when.replace(tzinfo=UTC)
    return max(0.0, when.timestamp() - now)
